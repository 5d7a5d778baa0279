#pragma once
// Cost weights: the one check of every Q, R, Q_final the library takes (the
// LQR family, the MPC, the tracker's metric), one set of tolerances, stated
// in the messages and in the Python docstrings. Implemented in
// core/errors.cpp with the other validation helpers.
#include <string>

#include "directable/core/types.hpp"

namespace directable {

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
//! storage order; the message's indices are those of a row-major array);
//! `label` names it ("Q", "R[3]").
void check_symmetric(const std::string& label, const double* M, Index n);
//! Throws domain_error unless the n x n matrix at M (either storage order) is
//! symmetric and positive semidefinite or definite (tolerances above); the
//! message names `label`, the smallest eigenvalue and the tolerance. The fast
//! path is one Cholesky factorization of sym(M) shifted by the tolerance
//! (no allocation below n = 16); eigenvalues only where it fails.
void check_weight(const std::string& label, const double* M, Index n, Definiteness required);
//! Smallest eigenvalue of the symmetric part of the n x n matrix at M (either
//! storage order; 0 for n = 0): for messages that name it.
double smallest_eigenvalue(const double* M, Index n);
//! The same rule and message for the diagonal weight diag(d), given by its n
//! entries (finite; its smallest entry is its smallest eigenvalue).
void check_diagonal_weight(const std::string& label, const double* d, Index n, Definiteness required);

}  // namespace directable
