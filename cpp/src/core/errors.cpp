#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <sstream>

#include "directable/core/errors.hpp"
#include "directable/core/weights.hpp"

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

namespace {

std::string short_num(double x) {
  std::ostringstream o;
  o.precision(3);
  o << x;
  return o.str();
}

const char* definiteness_word(Definiteness required) {
  return required == Definiteness::definite ? "definite" : "semidefinite";
}

[[noreturn]] void throw_not_definite(const std::string& label, double smallest, Definiteness required) {
  const std::string tolerance = required == Definiteness::definite
                                    ? "it must exceed " + short_num(kDefiniteTolerance) + " max|" + label + "|"
                                    : "the tolerance is -" + short_num(kSemidefiniteTolerance) + " max|" + label + "|";
  throw std::domain_error(label + " must be symmetric positive " + definiteness_word(required) +
                          ", got smallest eigenvalue " + short_num(smallest) + " (" + tolerance + ")");
}

}  // namespace

void check_symmetric(const std::string& label, const double* M, Index n) {
  if (n == 0) return;
  const Eigen::Map<const Eigen::MatrixXd> X(M, n, n);
  const double tol = kSymmetryTolerance * X.cwiseAbs().maxCoeff();
  for (Index c = 0; c < n; ++c)
    for (Index r = c + 1; r < n; ++r)
      if (!(std::abs(X(r, c) - X(c, r)) <= tol))  // indices as in the row-major (NumPy) array: M[c, r] is X(r, c)
        throw std::domain_error(label + " must be symmetric (|M_ij - M_ji| <= " + short_num(kSymmetryTolerance) +
                                " max|M|), got " + label + "[" + std::to_string(c) + ", " + std::to_string(r) +
                                "] = " + short_num(X(r, c)) + " and " + label + "[" + std::to_string(r) + ", " +
                                std::to_string(c) + "] = " + short_num(X(c, r)));
}

void check_weight(const std::string& label, const double* M, Index n, Definiteness required) {
  check_finite(label, M, n * n);
  check_symmetric(label, M, n);
  if (n == 0) return;
  using Small = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 16, 16>;
  const Eigen::Map<const Eigen::MatrixXd> X(M, n, n);
  const double scale = X.cwiseAbs().maxCoeff();
  // the boundary of the accepted set: lambda_min(sym M) must be >= bound (semidefinite) or > bound (definite)
  const double bound = required == Definiteness::definite ? kDefiniteTolerance * scale : -kSemidefiniteTolerance * scale;
  auto shifted_is_definite = [&](auto S) {
    S = 0.5 * (X + X.transpose());
    S.diagonal().array() -= bound;  // sym(M) - bound I > 0  <=>  lambda_min > bound
    return Eigen::LLT<decltype(S)>(S).info() == Eigen::Success;
  };
  const bool fast = n <= 16 ? shifted_is_definite(Small(n, n)) : shifted_is_definite(Eigen::MatrixXd(n, n));
  if (fast && scale > 0.0) return;
  const double lo = smallest_eigenvalue(M, n);
  if (!(required == Definiteness::definite ? lo > bound : lo >= bound)) throw_not_definite(label, lo, required);
}

double smallest_eigenvalue(const double* M, Index n) {
  if (n == 0) return 0.0;
  const Eigen::Map<const Eigen::MatrixXd> X(M, n, n);
  const Eigen::MatrixXd S = 0.5 * (X + X.transpose());
  return Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(S, Eigen::EigenvaluesOnly).eigenvalues()(0);
}

void check_diagonal_weight(const std::string& label, const double* d, Index n, Definiteness required) {
  check_finite(label, d, n);
  if (n == 0) return;
  // the same rule and message as the matrix diag(d), whose eigenvalues are the entries
  const Eigen::Map<const Eigen::VectorXd> v(d, n);
  const double lo = v.minCoeff(), scale = v.cwiseAbs().maxCoeff();
  const bool ok = required == Definiteness::definite ? lo > kDefiniteTolerance * scale
                                                     : lo >= -kSemidefiniteTolerance * scale;
  if (!ok) throw_not_definite(label, lo, required);
}

}  // namespace directable
