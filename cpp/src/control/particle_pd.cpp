#include "directable/control/particle_pd.hpp"

#include <cmath>
#include <string>

#include "directable/core/errors.hpp"

namespace directable {

ParticlePD::ParticlePD(std::shared_ptr<const Model> model, Index particles, const Eigen::Ref<const RowMatrix>& x_ref,
                       const ParticlePDGains& gains, double dt, double t0)
    : model_(std::move(model)), P_(particles), gains_(gains), dt_(dt), t0_(t0) {
  if (!model_) throw std::invalid_argument("model must be a Model (particles in a reduced fluid), got None");
  if (P_ < 1) throw std::invalid_argument("particles must be >= 1, got " + std::to_string(P_));
  n_ = model_->state_dim();
  r_ = model_->control_dim();
  const Index dP = n_ - r_;
  if (dP <= 0 || dP % P_ != 0 || (dP / P_ != 2 && dP / P_ != 3))
    throw std::invalid_argument("model must have state [p (d particles), z (r)] with d = 2 or 3 and r controls: state " +
                                std::to_string(n_) + ", controls " + std::to_string(r_) + " do not fit " +
                                std::to_string(P_) + " particles");
  d_ = dP / P_;
  const Eigen::MatrixXd& B = model_->control_matrix();
  if (B.rows() != n_ || B.cols() != r_ || !B.topRows(dP).isZero(0.0) ||
      !B.bottomRows(r_).isApprox(Eigen::MatrixXd::Identity(r_, r_), 0.0))
    throw std::invalid_argument("model must have the control matrix [0; I] (" + std::to_string(n_) + " x " +
                                std::to_string(r_) + "): eq. 14 forces the reduced velocities only");
  if (x_ref.rows() < 2 || x_ref.cols() != n_) throw_shape("x_ref", "(T+1, " + std::to_string(n_) + ") with T >= 1",
                                                          shape_str(x_ref.rows(), x_ref.cols()));
  check_finite("x_ref", x_ref.data(), x_ref.size());
  check_positive("dt", dt);
  if (!std::isfinite(t0)) throw std::domain_error("t0 must be finite, got " + std::to_string(t0));
  const double g[3] = {gains.k_z, gains.k_p, gains.k_pdot};
  const char* names[3] = {"k_z", "k_p", "k_pdot"};
  for (int k = 0; k < 3; ++k)
    if (!(g[k] >= 0.0) || !std::isfinite(g[k]))
      throw std::domain_error(std::string(names[k]) + " must be finite and >= 0, got " + std::to_string(g[k]));
  x_ref_ = std::make_shared<const RowMatrix>(x_ref);
  RowMatrix rates(x_ref.rows(), dP);
  Eigen::VectorXd F(n_);
  for (Index i = 0; i < x_ref.rows(); ++i) {
    model_->dynamics(x_ref.row(i).transpose(), t0_ + double(i) * dt_, F);
    rates.row(i) = F.head(dP).transpose();
  }
  check_finite("the reference's particle rates p'(x_ref)", rates.data(), rates.size());
  pdot_ref_ = std::make_shared<const RowMatrix>(std::move(rates));
}

ParticlePD ParticlePD::with_gains(const ParticlePDGains& gains) const {
  const double g[3] = {gains.k_z, gains.k_p, gains.k_pdot};
  const char* names[3] = {"k_z", "k_p", "k_pdot"};
  for (int k = 0; k < 3; ++k)
    if (!(g[k] >= 0.0) || !std::isfinite(g[k]))
      throw std::domain_error(std::string(names[k]) + " must be finite and >= 0, got " + std::to_string(g[k]));
  ParticlePD out = *this;
  out.gains_ = gains;
  return out;
}

ParticlePDData ParticlePD::create_data() const {
  ParticlePDData d;
  d.J.resize(n_, n_);
  d.F.resize(n_);
  d.f.resize(n_ - r_);
  return d;
}

void ParticlePD::check_step(Index i) const {
  if (i < 0 || i > horizon())
    throw std::invalid_argument("step must lie in [0, " + std::to_string(horizon()) + "], got " + std::to_string(i));
}

void ParticlePD::control(const Eigen::Ref<const Eigen::VectorXd>& x, Index i, Eigen::Ref<Eigen::VectorXd> w,
                         ParticlePDData& d) const {
  const Index dP = n_ - r_;
  const double t = t0_ + double(i) * dt_;
  const auto xr = x_ref_->row(i).transpose();
  // Psi(p) and p'(x) at the current state
  model_->jacobian(x, t, d.J);
  model_->dynamics(x, t, d.F);
  d.f.noalias() = gains_.k_p * (x.head(dP) - xr.head(dP));
  d.f.noalias() += gains_.k_pdot * (d.F.head(dP) - pdot_ref_->row(i).transpose());
  w.noalias() = -gains_.k_z * (x.tail(r_) - xr.tail(r_));
  w.noalias() -= d.J.block(0, dP, dP, r_).transpose() * d.f;
}

void ParticlePD::checked_control(const Eigen::Ref<const Eigen::VectorXd>& x, Index i, Eigen::Ref<Eigen::VectorXd> w,
                                 ParticlePDData& d) const {
  if (x.size() != n_) throw_shape("x", "(" + std::to_string(n_) + ",)", "(" + std::to_string(x.size()) + ",)");
  check_finite("x", x.data(), x.size());
  check_step(i);
  control(x, i, w, d);
}

void ParticlePD::gain(Index i, Eigen::Ref<RowMatrix> K, ParticlePDData& d) const {
  check_step(i);
  const Index dP = n_ - r_;
  model_->jacobian(x_ref_->row(i).transpose(), t0_ + double(i) * dt_, d.J);
  const auto Psi = d.J.block(0, dP, dP, r_);  // dp'/dz
  const auto Y = d.J.block(0, 0, dP, dP);     // dp'/dp: the gradient of Psi times z
  K.leftCols(dP).noalias() = -gains_.k_p * Psi.transpose();
  K.leftCols(dP).noalias() -= gains_.k_pdot * (Psi.transpose() * Y);
  K.rightCols(r_).noalias() = -gains_.k_pdot * (Psi.transpose() * Psi);
  K.rightCols(r_).diagonal().array() -= gains_.k_z;
}

}  // namespace directable
