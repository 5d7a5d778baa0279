#pragma once
// Validation helpers of the core, the one place inputs are checked:
// shapes -> std::invalid_argument, NaN/inf and definiteness ->
// std::domain_error. Messages name the argument, the expected and the
// received.
#include <Eigen/Core>
#include <stdexcept>
#include <string>

#include "directable/core/types.hpp"

namespace directable {

std::string shape_str(Index rows, Index cols);
std::string shape_str(Index T, Index rows, Index cols);

//! Throws std::invalid_argument "`name` must have shape E, got G".
[[noreturn]] void throw_shape(const std::string& name, const std::string& expected, const std::string& got);

void check_shape(const std::string& name, Index rows, Index cols, Index exp_rows, Index exp_cols);

//! Throws domain_error naming the first NaN/inf entry; its flat index is
//! reported as first_index + i (data may be one block of a larger array).
void check_finite(const std::string& name, const double* data, Index size, Index first_index = 0);

void check_positive(const std::string& name, double value);

//! Throws std::domain_error unless the symmetric part of M is positive
//! definite (Cholesky); `what` describes the matrix in the message.
void check_positive_definite(const std::string& what, const Eigen::Ref<const Eigen::MatrixXd>& M);

// Cost weights (the LQR family, the MPC, every entry point that takes a Q, R
// or Q_final): one check, one set of tolerances, stated in the messages and
// in the Python docstrings.
//! A weight M is symmetric when every |M_ij - M_ji| <= kSymmetryTolerance max|M|.
inline constexpr double kSymmetryTolerance = 1e-10;
//! M is positive semidefinite when the smallest eigenvalue of sym(M) is
//! >= -kSemidefiniteTolerance max|M| (rounding of a zero eigenvalue passes).
inline constexpr double kSemidefiniteTolerance = 1e-12;
//! M is positive definite when the smallest eigenvalue of sym(M) is
//! > kDefiniteTolerance max|M| (a smaller one is singular to within rounding).
inline constexpr double kDefiniteTolerance = 1e-14;

//! What a weight must be beyond symmetric.
enum class Definiteness { semidefinite, definite };

//! Throws domain_error unless the n x n matrix at M is symmetric (either
//! storage order); `label` names it ("Q", "R[3]").
void check_symmetric(const std::string& label, const double* M, Index n);
//! Throws domain_error unless the n x n matrix at M (either storage order) is
//! symmetric and positive semidefinite or definite (tolerances above); the
//! message names `label`, the smallest eigenvalue and the tolerance. The fast
//! path is one Cholesky factorization of sym(M) shifted by the tolerance
//! (no allocation below n = 16); eigenvalues only where it fails.
void check_weight(const std::string& label, const double* M, Index n, Definiteness required);
//! The same rule for a diagonal weight given by its n diagonal entries d
//! (finite, >= 0 or > 0); throws naming `label` and the first bad entry.
void check_diagonal_weight(const std::string& label, const double* d, Index n, Definiteness required);

}  // namespace directable
