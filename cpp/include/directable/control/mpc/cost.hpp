#pragma once
// A quadratic weight of the horizon cost, ||e||^2_W = e' W e, diagonal (a
// vector) or dense.
#include <Eigen/Core>
#include <string>

#include "directable/core/types.hpp"

namespace directable {

struct CostWeight {
  Eigen::VectorXd diag;  //!< dim: the diagonal, used when dense is empty
  RowMatrix dense;       //!< dim x dim; its symmetric part is used
  bool is_dense() const { return dense.size() > 0; }
  Index dim() const { return is_dense() ? dense.rows() : diag.size(); }
  //! out = W e (symmetric part).
  void apply(const CRefVec& e, RefVec out) const;
  double quad(const CRefVec& e) const;
  //! ||a - b||^2_W; dense weights form a - b in `scratch` (dim), diagonal
  //! ones take no temporary.
  double quad_diff(const CRefVec& a, const CRefVec& b, Eigen::VectorXd& scratch) const;
  //! out = 2 W (a - b) (+ *add): the gradient of ||a - b||^2_W; dense
  //! weights use e and we (dim each) as scratch.
  void grad_diff(const CRefVec& a, const CRefVec& b, const Eigen::VectorXd* add, RefVec out, Eigen::VectorXd& e,
                 Eigen::VectorXd& we) const;
  Eigen::MatrixXd matrix() const;  //!< dense symmetric W (dim x dim)
  //! Shape dim, finite, and W >= 0 (positive = true: W > 0); throws naming `name`.
  void validate(const std::string& name, Index dim, bool positive) const;
};

}  // namespace directable
