#include "directable/control/mpc/cost.hpp"

#include <stdexcept>

#include "directable/core/errors.hpp"
#include "directable/core/weights.hpp"

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
  const Definiteness required = positive ? Definiteness::definite : Definiteness::semidefinite;
  if (is_dense()) {
    check_shape(name, dense.rows(), dense.cols(), dim_expected, dim_expected);
    check_weight(name, dense.data(), dim_expected, required);  // the LQR's check and tolerances
    return;
  }
  if (diag.size() != dim_expected)
    throw_shape(name, "(" + std::to_string(dim_expected) + ",) or (" + std::to_string(dim_expected) + ", " +
                          std::to_string(dim_expected) + ")",
                "(" + std::to_string(diag.size()) + ",)");
  check_diagonal_weight(name, diag.data(), dim_expected, required);
}

}  // namespace directable
