#include "directable/sim/plant.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "directable/core/errors.hpp"

namespace directable {

PlantDisturbance::PlantDisturbance(const SeqView& d, Index s) : forces_(0, s), w_(s) {
  if (d.empty()) return;
  if (d.rows != 1 || d.cols != s) throw_shape("disturbance", "(T, " + std::to_string(s) + ")", shape_str(d.T, d.cols));
  d.check_finite("disturbance");
  forces_ = VectorSeq(d.T, s);
  std::copy(d.data, d.data + d.T * s, forces_.data());
}

const Eigen::VectorXd& PlantDisturbance::applied(Index t, const CRefVec& u) {
  w_ = u;
  if (t < forces_.T()) w_ += forces_[t];
  return w_;
}

namespace {
void check_state(const CRefVec& x, const char* name, Index n) {
  if (x.size() != n)
    throw_shape(name, "(" + std::to_string(n) + ",) (the plant's state)", "(" + std::to_string(x.size()) + ",)");
  check_finite(name, x.data(), n);
}
}  // namespace

ModelPlant::ModelPlant(std::shared_ptr<const Model> model, const CRefVec& z0, double dt, Index substeps, double t0,
                       const SeqView& disturbance)
    : model_(std::move(model)), disturbance_(disturbance, model_ ? model_->control_dim() : 0) {
  if (!model_) throw std::invalid_argument("model is missing");
  check_state(z0, "x0", model_->state_dim());
  check_positive("dt", dt);
  if (substeps < 1) throw std::invalid_argument("substeps must be >= 1, got " + std::to_string(substeps));
  if (!std::isfinite(t0)) throw std::domain_error("t0 must be finite, got " + std::to_string(t0));
  data_ = model_->create_data();
  h_ = dt / double(substeps);
  t_ = t0;
  substeps_ = substeps;
  z_ = z0;
  z_next_.resize(n());
}

void ModelPlant::advance(Index t, const CRefVec& u) {
  const Eigen::VectorXd& w = disturbance_.applied(t, u);
  for (Index k = 0; k < substeps_; ++k) {
    model_->step(z_, t_, h_, w, z_next_, *data_);
    z_.swap(z_next_);
    t_ += h_;
  }
}

DiscretePlant::DiscretePlant(std::shared_ptr<const PredictionModel> model, const CRefVec& x0,
                             const SeqView& disturbance)
    : model_(std::move(model)), disturbance_(disturbance, model_ ? model_->s() : 0) {
  if (!model_) throw std::invalid_argument("plant is missing");
  check_state(x0, "x0", model_->n());
  data_ = model_->create_data();
  x_ = x0;
  x_next_.resize(n());
}

void DiscretePlant::advance(Index t, const CRefVec& u) {
  model_->step(x_, disturbance_.applied(t, u), x_next_, 0, *data_);
  x_.swap(x_next_);
}

}  // namespace directable
