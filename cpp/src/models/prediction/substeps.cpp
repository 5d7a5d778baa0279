#include "directable/models/prediction/substeps.hpp"

#include "directable/core/allocation.hpp"
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
  d->x_a.resize(n);
  d->x_b.resize(n);
  d->lam.resize(n);
  d->gx.resize(n);
  d->gu.resize(s);
  if (inner_->has_jacobians()) {
    d->A_inner.resize(n, n);
    d->B_inner.resize(n, s);
    d->A_acc.resize(n, n);
    d->B_acc.resize(n, s);
    d->A_next.resize(n, n);
    d->B_next.resize(n, s);
  }
  return d;
}

void SubstepPrediction::tape(const CRefVec& x, const CRefVec& u, Index i, SubstepPredictionData& d) const {
  if (d.states.T() != count_) {
    check_allocation("the inner states of one Substeps step (count x n)",
                     static_cast<double>(count_) * static_cast<double>(n()) * sizeof(double));
    d.states = VectorSeq(count_, n());
  }
  d.states[0] = x;
  for (Index j = 0; j + 1 < count_; ++j) {
    cancellation_point();  // one step may be millions of inner steps
    inner_->step(d.states[j], u, d.states[j + 1], i * count_ + j, *d.inner);
  }
}

void SubstepPrediction::step(const CRefVec& x, const CRefVec& u, RefVec x_next, Index i, PredictionData& data) const {
  auto& d = static_cast<SubstepPredictionData&>(data);
  d.x_a = x;
  for (Index j = 0; j < count_; ++j) {
    cancellation_point();  // one step may be millions of inner steps
    inner_->step(d.x_a, u, d.x_b, i * count_ + j, *d.inner);
    d.x_a.swap(d.x_b);
  }
  x_next = d.x_a;
}

void SubstepPrediction::vjp(const CRefVec& x, const CRefVec& u, const CRefVec& lam, RefVec gx, RefVec gu, Index i,
                            PredictionData& data) const {
  // forward: the inner states X_0 = x .. X_{k-1}; backward: chain the VJPs, sum the control parts
  auto& d = static_cast<SubstepPredictionData&>(data);
  tape(x, u, i, d);
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
  // forward, with the inner state: A = A_j A, B = A_j B + B_j at X_j, then X_{j+1}
  auto& d = static_cast<SubstepPredictionData&>(data);
  d.x_a = x;
  d.A_acc.setIdentity();
  d.B_acc.setZero();
  for (Index j = 0; j < count_; ++j) {
    cancellation_point();
    inner_->jacobians(d.x_a, u, d.A_inner, d.B_inner, i * count_ + j, *d.inner);
    d.B_next.noalias() = d.A_inner * d.B_acc;
    d.B_next += d.B_inner;
    d.A_next.noalias() = d.A_inner * d.A_acc;
    d.A_acc.swap(d.A_next);
    d.B_acc.swap(d.B_next);
    if (j + 1 < count_) {
      inner_->step(d.x_a, u, d.x_b, i * count_ + j, *d.inner);
      d.x_a.swap(d.x_b);
    }
  }
  A = d.A_acc;
  B = d.B_acc;
}

}  // namespace directable
