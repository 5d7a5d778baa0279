#include <Eigen/Cholesky>
#include <cmath>
#include <sstream>

#include "directable/core/errors.hpp"

namespace directable {

namespace {

bool all_finite(const double* data, Index size) {
  // x - x is 0 for finite x and NaN otherwise; independent partial sums
  // vectorize (one running sum would be bound by the add latency).
  double acc[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  Index i = 0;
  for (; i + 8 <= size; i += 8)
    for (int k = 0; k < 8; ++k) acc[k] += data[i + k] - data[i + k];
  for (; i < size; ++i) acc[0] += data[i] - data[i];
  double total = 0.0;
  for (double a : acc) total += a;
  return total == 0.0;
}

}  // namespace

std::string shape_str(Index rows, Index cols) {
  std::ostringstream s;
  s << "(" << rows << ", " << cols << ")";
  return s.str();
}

std::string shape_str(Index T, Index rows, Index cols) {
  std::ostringstream s;
  s << "(" << T << ", " << rows << ", " << cols << ")";
  return s.str();
}

void throw_shape(const std::string& name, const std::string& expected, const std::string& got) {
  throw std::invalid_argument(name + " must have shape " + expected + ", got " + got);
}

void check_shape(const std::string& name, Index rows, Index cols, Index exp_rows, Index exp_cols) {
  if (rows != exp_rows || cols != exp_cols) throw_shape(name, shape_str(exp_rows, exp_cols), shape_str(rows, cols));
}

void check_finite(const std::string& name, const double* data, Index size, Index first_index) {
  if (all_finite(data, size)) return;  // the loop below only names the first bad entry
  for (Index i = 0; i < size; ++i) {
    if (!std::isfinite(data[i])) {
      std::ostringstream s;
      s << name << " must be finite, got " << data[i] << " at flat index " << first_index + i;
      throw std::domain_error(s.str());
    }
  }
}

void check_positive(const std::string& name, double value) {
  if (!(value > 0.0) || !std::isfinite(value)) {
    std::ostringstream s;
    s << name << " must be a positive finite number, got " << value;
    throw std::domain_error(s.str());
  }
}

void check_positive_definite(const std::string& what, const Eigen::Ref<const Eigen::MatrixXd>& M) {
  Eigen::MatrixXd sym = 0.5 * (M + M.transpose());
  Eigen::LLT<Eigen::MatrixXd> llt(sym);
  if (llt.info() != Eigen::Success) throw std::domain_error(what + " must be symmetric positive definite");
}

}  // namespace directable
