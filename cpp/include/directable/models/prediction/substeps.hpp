#pragma once
// Several steps of another prediction model per window step, the control
// held: x+ = f_{ik+k-1}(... f_{ik}(x, u) ..., u), k = `count` (e.g. a frame
// of simulation steps: an explicit model that is unstable at the frame step
// stays stable at its own step). VJP by recomputing the inner states and
// chaining the inner VJPs; Jacobians (if the inner model has them) by
// chaining: A = A_{k-1} ... A_0, B = sum_j A_{k-1} ... A_{j+1} B_j.
#include <memory>

#include "directable/core/sequence.hpp"
#include "directable/models/prediction_model.hpp"

namespace directable {

struct SubstepPredictionData : PredictionData {
  std::unique_ptr<PredictionData> inner;  //!< the inner model's data
  Eigen::VectorXd x_a, x_b;               //!< n, n: the inner state and the next (step, jacobians)
  //! count x n: the inner states X_0 .. X_{count-1} of one step, which the
  //! adjoint pass walks backwards; sized by the first vjp (a step needs two
  //! states, so a model of a huge count steps without this tape)
  VectorSeq states;
  Eigen::VectorXd lam, gx, gu;  //!< n, n, s: the chained adjoint
  RowMatrix A_inner, B_inner;   //!< n x n, n x s: one inner step's Jacobians
  RowMatrix A_acc, B_acc;       //!< n x n, n x s: the chained Jacobians so far
  RowMatrix A_next, B_next;     //!< n x n, n x s: the chained Jacobians one inner step further
};

class SubstepPrediction : public PredictionModel {
 public:
  //! inner not null, count >= 1; throws naming the argument.
  SubstepPrediction(std::shared_ptr<const PredictionModel> inner, Index count);
  Index n() const override { return inner_->n(); }
  Index s() const override { return inner_->s(); }
  void step(const CRefVec& x, const CRefVec& u, RefVec x_next, Index i, PredictionData& data) const override;
  void vjp(const CRefVec& x, const CRefVec& u, const CRefVec& lam, RefVec gx, RefVec gu, Index i,
           PredictionData& data) const override;
  bool has_jacobians() const override { return inner_->has_jacobians(); }
  void jacobians(const CRefVec& x, const CRefVec& u, Eigen::Ref<RowMatrix> A, Eigen::Ref<RowMatrix> B, Index i,
                 PredictionData& data) const override;
  Index count() const { return count_; }
  const std::shared_ptr<const PredictionModel>& inner() const { return inner_; }

 protected:
  std::unique_ptr<PredictionData> make_data() const override;

 private:
  //! The inner states X_0 = x .. X_{count-1} of window step i into data.states.
  void tape(const CRefVec& x, const CRefVec& u, Index i, SubstepPredictionData& d) const;
  std::shared_ptr<const PredictionModel> inner_;
  Index count_;
};

}  // namespace directable
