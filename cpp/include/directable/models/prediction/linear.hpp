#pragma once
// x+ = A x + B u with constant A, B: the discrete linear prediction model.
#include "directable/models/prediction_model.hpp"

namespace directable {

class LinearPrediction : public PredictionModel {
 public:
  //! A (n x n), B (n x s), finite; throws naming the argument.
  LinearPrediction(RowMatrix A, RowMatrix B);
  Index n() const override { return A_.rows(); }
  Index s() const override { return B_.cols(); }
  void step(const CRefVec& x, const CRefVec& u, RefVec x_next, Index i, PredictionData& data) const override;
  void vjp(const CRefVec& x, const CRefVec& u, const CRefVec& lam, RefVec gx, RefVec gu, Index i,
           PredictionData& data) const override;
  bool has_jacobians() const override { return true; }
  void jacobians(const CRefVec& x, const CRefVec& u, Eigen::Ref<RowMatrix> A, Eigen::Ref<RowMatrix> B, Index i,
                 PredictionData& data) const override;
  const RowMatrix& A() const { return A_; }
  const RowMatrix& B() const { return B_; }

 private:
  RowMatrix A_;  //!< n x n
  RowMatrix B_;  //!< n x s
};

}  // namespace directable
