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

}  // namespace directable
