#include "directable/models/prediction/euler.hpp"

#include <cmath>
#include <stdexcept>

#include "directable/core/errors.hpp"

namespace directable {

EulerPrediction::EulerPrediction(std::shared_ptr<const Model> model, double dt, double t0)
    : model_(std::move(model)), dt_(dt), t0_(t0) {
  if (!model_) throw std::invalid_argument("model is missing");
  check_positive("dt", dt);
  if (!std::isfinite(t0)) throw std::domain_error("t0 must be finite, got " + std::to_string(t0));
}

std::unique_ptr<PredictionData> EulerPrediction::make_data() const {
  auto d = std::make_unique<EulerPredictionData>();
  d->F.resize(n());
  d->J.resize(n(), n());
  return d;
}

void EulerPrediction::step(const CRefVec& x, const CRefVec& u, RefVec x_next, Index i, PredictionData& data) const {
  auto& d = static_cast<EulerPredictionData&>(data);
  model_->dynamics(x, t0_ + double(i) * dt_, d.F);
  x_next = x + dt_ * d.F;
  x_next.noalias() += dt_ * (model_->control_matrix() * u);
}

void EulerPrediction::vjp(const CRefVec& x, const CRefVec&, const CRefVec& lam, RefVec gx, RefVec gu, Index i,
                          PredictionData& data) const {
  auto& d = static_cast<EulerPredictionData&>(data);
  model_->jacobian(x, t0_ + double(i) * dt_, d.J);
  gx = lam;
  gx.noalias() += dt_ * (d.J.transpose() * lam);
  gu.noalias() = dt_ * (model_->control_matrix().transpose() * lam);
}

void EulerPrediction::jacobians(const CRefVec& x, const CRefVec&, Eigen::Ref<RowMatrix> A, Eigen::Ref<RowMatrix> B,
                                Index i, PredictionData&) const {
  model_->jacobian(x, t0_ + double(i) * dt_, A);
  A *= dt_;
  A.diagonal().array() += 1.0;
  B = dt_ * model_->control_matrix();
}

}  // namespace directable
