#include "directable/models/prediction/substeps.hpp"

#include "directable/core/progress.hpp"

#include <stdexcept>
#include <string>

namespace directable {

SubstepPrediction::SubstepPrediction(std::shared_ptr<const PredictionModel> inner, Index count)
    : inner_(std::move(inner)), count_(count) {
  if (!inner_) throw std::invalid_argument("model is missing");
  if (count_ < 1) throw std::invalid_argument("count must be >= 1 inner steps per step, got " + std::to_string(count_));
}

std::unique_ptr<PredictionData> SubstepPrediction::make_data() const {
  const Index n = this->n(), s = this->s();
  auto d = std::make_unique<SubstepPredictionData>();
  d->inner = inner_->create_data();
  d->states = VectorSeq(count_ + 1, n);
  d->lam.resize(n);
  d->gx.resize(n);
  d->gu.resize(s);
  if (inner_->has_jacobians()) {
    d->A_inner.resize(n, n);
    d->B_inner.resize(n, s);
  }
  return d;
}

void SubstepPrediction::inner_states(const CRefVec& x, const CRefVec& u, Index i, Index last,
                                     SubstepPredictionData& d) const {
  d.states[0] = x;
  for (Index j = 0; j < last; ++j) {
    cancellation_point();  // one step may be millions of inner steps
    inner_->step(d.states[j], u, d.states[j + 1], i * count_ + j, *d.inner);
  }
}

void SubstepPrediction::step(const CRefVec& x, const CRefVec& u, RefVec x_next, Index i, PredictionData& data) const {
  auto& d = static_cast<SubstepPredictionData&>(data);
  inner_states(x, u, i, count_, d);
  x_next = d.states[count_];
}

void SubstepPrediction::vjp(const CRefVec& x, const CRefVec& u, const CRefVec& lam, RefVec gx, RefVec gu, Index i,
                            PredictionData& data) const {
  // forward: the inner states X_0 = x .. X_{k-1}; backward: chain the VJPs, sum the control parts
  auto& d = static_cast<SubstepPredictionData&>(data);
  inner_states(x, u, i, count_ - 1, d);
  d.lam = lam;
  gu.setZero();
  for (Index j = count_ - 1; j >= 0; --j) {
    cancellation_point();
    inner_->vjp(d.states[j], u, d.lam, d.gx, d.gu, i * count_ + j, *d.inner);
    gu += d.gu;
    d.lam.swap(d.gx);
  }
  gx = d.lam;
}

void SubstepPrediction::jacobians(const CRefVec& x, const CRefVec& u, Eigen::Ref<RowMatrix> A, Eigen::Ref<RowMatrix> B,
                                  Index i, PredictionData& data) const {
  auto& d = static_cast<SubstepPredictionData&>(data);
  inner_states(x, u, i, count_ - 1, d);
  A.setIdentity();
  B.setZero();
  for (Index j = 0; j < count_; ++j) {
    cancellation_point();
    inner_->jacobians(d.states[j], u, d.A_inner, d.B_inner, i * count_ + j, *d.inner);
    B = (d.A_inner * B + d.B_inner).eval();
    A = (d.A_inner * A).eval();
  }
}

}  // namespace directable
