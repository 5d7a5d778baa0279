#include "directable/models/prediction/linear.hpp"

#include "directable/core/errors.hpp"

namespace directable {

LinearPrediction::LinearPrediction(RowMatrix A, RowMatrix B) : A_(std::move(A)), B_(std::move(B)) {
  if (A_.rows() < 1 || A_.rows() != A_.cols()) throw_shape("A", "(n, n) with n >= 1", shape_str(A_.rows(), A_.cols()));
  if (B_.rows() != A_.rows() || B_.cols() < 1)
    throw_shape("B", "(" + std::to_string(A_.rows()) + ", s) with s >= 1", shape_str(B_.rows(), B_.cols()));
  check_finite("A", A_.data(), A_.size());
  check_finite("B", B_.data(), B_.size());
}

void LinearPrediction::step(const CRefVec& x, const CRefVec& u, RefVec x_next, Index, PredictionData&) const {
  x_next.noalias() = A_ * x;
  x_next.noalias() += B_ * u;
}

void LinearPrediction::vjp(const CRefVec&, const CRefVec&, const CRefVec& lam, RefVec gx, RefVec gu, Index,
                           PredictionData&) const {
  gx.noalias() = A_.transpose() * lam;
  gu.noalias() = B_.transpose() * lam;
}

void LinearPrediction::jacobians(const CRefVec&, const CRefVec&, Eigen::Ref<RowMatrix> A, Eigen::Ref<RowMatrix> B,
                                 Index, PredictionData&) const {
  A = A_;
  B = B_;
}

}  // namespace directable
