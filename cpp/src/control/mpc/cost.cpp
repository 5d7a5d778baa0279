#include "directable/control/mpc/cost.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <stdexcept>

#include "directable/core/errors.hpp"

namespace directable {

void CostWeight::apply(const CRefVec& e, RefVec out) const {
  if (is_dense())
    out.noalias() = 0.5 * (dense * e + dense.transpose() * e);
  else
    out = diag.cwiseProduct(e);
}

double CostWeight::quad(const CRefVec& e) const {
  if (is_dense()) return e.dot(dense * e);
  return e.dot(diag.cwiseProduct(e));
}

double CostWeight::quad_diff(const CRefVec& a, const CRefVec& b, Eigen::VectorXd& scratch) const {
  if (is_dense()) {
    scratch = a - b;
    return quad(scratch);
  }
  return (a - b).dot(diag.cwiseProduct(a - b));
}

void CostWeight::grad_diff(const CRefVec& a, const CRefVec& b, const Eigen::VectorXd* add, RefVec out,
                           Eigen::VectorXd& e, Eigen::VectorXd& we) const {
  if (is_dense()) {
    e = a - b;
    apply(e, we);
    if (add)
      out = 2.0 * we + *add;
    else
      out = 2.0 * we;
  } else if (add) {
    out = 2.0 * diag.cwiseProduct(a - b) + *add;
  } else {
    out = 2.0 * diag.cwiseProduct(a - b);
  }
}

Eigen::MatrixXd CostWeight::matrix() const {
  if (is_dense()) return 0.5 * (dense + dense.transpose());
  return diag.asDiagonal();
}

void CostWeight::validate(const std::string& name, Index dim_expected, bool positive) const {
  if (is_dense()) {
    check_shape(name, dense.rows(), dense.cols(), dim_expected, dim_expected);
    check_finite(name, dense.data(), dense.size());
    const Eigen::MatrixXd S = matrix();
    const double lo = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(S, Eigen::EigenvaluesOnly).eigenvalues().minCoeff();
    const double scale = std::max(1.0, S.cwiseAbs().maxCoeff());
    if (positive ? !(lo > 1e-14 * scale) : lo < -1e-12 * scale)
      throw std::domain_error(name + " must be symmetric positive " + (positive ? "definite" : "semi-definite") +
                              ", got smallest eigenvalue " + std::to_string(lo));
    return;
  }
  if (diag.size() != dim_expected)
    throw_shape(name, "(" + std::to_string(dim_expected) + ",) or (" + std::to_string(dim_expected) + ", " +
                          std::to_string(dim_expected) + ")",
                "(" + std::to_string(diag.size()) + ",)");
  check_finite(name, diag.data(), diag.size());
  for (Index k = 0; k < diag.size(); ++k)
    if (positive ? !(diag[k] > 0) : diag[k] < 0)
      throw std::domain_error(name + " weights must be " + (positive ? "positive" : "non-negative") + ", got " +
                              std::to_string(diag[k]) + " at index " + std::to_string(k));
}

}  // namespace directable
