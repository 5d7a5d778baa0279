// The cloth's two integrators and its offline rollout.
#include <cmath>
#include <stdexcept>
#include <string>

#include "directable/core/allocation.hpp"
#include "directable/models/cloth/cloth.hpp"

namespace directable {

double ClothModel::step(Eigen::Ref<Eigen::VectorXd> x, Eigen::Ref<Eigen::VectorXd> v, double dt, const double* u,
                        ClothIntegrator method, ClothData& d) const {
  if (method == ClothIntegrator::symplectic) {
    applied_forces(x, v, d.F, d);
    if (u) d.F += Eigen::Map<const Eigen::VectorXd>(u, 3 * V_);
    return symplectic_update(*this, x, v, d.F, dt);
  }
  if (d.A.nonZeros() == 0 || (method == ClothIntegrator::implicit && !d.analysis))
    throw std::invalid_argument("implicit step: the ClothData was created for another integrator");
  forces_and_jacobians(x, v, d);
  const Index n = 3 * V_;
  // One pass over the pattern: rhs = dt (F + u + dt dF/dx v) (pinned rows
  // zero) and A = M - dt dF/dv - dt^2 sym(dF/dx) (pinned rows and columns
  // those of the identity).
  d.rhs = d.F;
  if (u) d.rhs += Eigen::Map<const Eigen::VectorXd>(u, n);
  double* Av = d.A.valuePtr();
  const double* Kx = d.Kx.data();
  const double* Kv = d.Kv.data();
  const double* vp = v.data();
  const double dt2 = 0.5 * dt * dt;
  for (Index r = 0; r < n; ++r) {
    const int e0 = row_offsets_[r], e1 = row_offsets_[r + 1];
    if (pinned_[r / 3]) {
      for (int e = e0; e < e1; ++e) Av[e] = entry_diagonal_[e] ? 1.0 : 0.0;
      d.rhs[r] = 0.0;
      continue;
    }
    const double m = masses_[r / 3];
    double acc = 0.0;
    for (int e = e0; e < e1; ++e) {
      acc += Kx[e] * vp[columns_[e]];
      const double a = (entry_diagonal_[e] ? m : 0.0) - dt * Kv[e] - dt2 * (Kx[e] + Kx[transpose_entry_[e]]);
      Av[e] = entry_pinned_[e] ? 0.0 : a;
    }
    d.rhs[r] = dt * (d.rhs[r] + dt * acc);
  }
  if (method == ClothIntegrator::implicit) {
    if (!d.analysis->factorize(d.A.valuePtr(), d.factor))
      throw std::domain_error("implicit step: the system matrix M - dt dF/dv - dt^2 dF/dx has a zero or non-finite pivot "
                              "(node " + std::to_string(d.factor.failed_pivot / 3) + "); reduce dt");
    d.dv = d.rhs;
    d.analysis->solve(d.factor, d.dv);
  } else {
    d.cg.compute(d.A);
    // warm start from the previous step's dv (zero for fresh data)
    d.dv = d.cg.solveWithGuess(d.rhs, d.dv);
    if (d.cg.info() != Eigen::Success)
      throw std::domain_error("implicit step: conjugate gradients did not converge; reduce dt or use method=\"implicit\"");
  }
  double fastest = 0.0;
  for (Index a = 0; a < V_; ++a) {
    double speed2 = 0.0;
    for (Index r = 3 * a; r < 3 * a + 3; ++r) {
      const double vn = pinned_[a] ? 0.0 : v[r] + d.dv[r];
      v[r] = vn;
      x[r] += dt * vn;
      speed2 += vn * vn;
    }
    fastest = (speed2 > fastest || std::isnan(speed2)) ? speed2 : fastest;  // a NaN wins
  }
  return fastest;
}

ClothSpeedBound::ClothSpeedBound(const ClothModel& model, const Eigen::Ref<const Eigen::VectorXd>& x0,
                                 const Eigen::Ref<const Eigen::VectorXd>& v0)
    : model_(model) {
  const Index V = model.node_count();
  const Eigen::VectorXd& m = model.node_masses();
  // elastic + collider energy at x0: energy() less its gravity potential
  double E = model.energy(x0), v_max = 0.0;
  for (Index a = 0; a < V; ++a) {
    E += m[a] * model.params().gravity.dot(x0.segment<3>(3 * a));
    if (!model.pinned()[a]) v_max = std::max(v_max, v0.segment<3>(3 * a).norm());
  }
  initial_ = v_max + std::sqrt(2.0 * std::max(E, 0.0) / m.minCoeff());
}

double ClothSpeedBound::bound() const {
  return std::max(kMinDivergenceSpeed, 2.0 * (initial_ + std::min(gained_, kDivergenceSpeed)));
}

void ClothSpeedBound::add_step(double dt, const double* u) {
  double a_max = model_.params().gravity.norm();
  if (u) {
    const Eigen::VectorXd& m = model_.node_masses();
    double a_u = 0.0;
    for (Index a = 0; a < model_.node_count(); ++a)
      a_u = std::max(a_u, Eigen::Map<const Eigen::Vector3d>(u + 3 * a).norm() / m[a]);
    a_max += a_u;
  }
  gained_ += a_max * dt;
}

ClothRollout cloth_rollout(const ClothModel& model, const Eigen::Ref<const Eigen::VectorXd>& x0,
                           const Eigen::Ref<const Eigen::VectorXd>& v0, double dt, Index steps, SeqView u,
                           ClothIntegrator method, const ProgressFn* progress) {
  const Index n = 3 * model.node_count();
  check_shape("x0", x0.size(), 1, n, 1);
  check_shape("v0", v0.size(), 1, n, 1);
  check_finite("x0", x0.data(), n);
  check_finite("v0", v0.data(), n);
  check_positive("dt", dt);
  if (steps < 0) throw std::invalid_argument("steps must be >= 0, got " + std::to_string(steps));
  // the positions and velocities of every step: 2 (steps + 1) 3 nodes doubles
  check_allocation("steps = " + std::to_string(steps) + " (the rollout's states)", 16.0 * (double(steps) + 1.0) * double(n));
  if (!u.empty()) {
    if (u.is_constant() || u.T != steps || u.rows != model.node_count() || u.cols != 3)
      throw_shape("u", shape_str(steps, model.node_count(), 3), shape_str(u.T, u.rows, u.cols));
    check_finite("u", u.data, steps * n);
  }
  ClothRollout out{VectorSeq(steps + 1, n, MatrixSeq::Uninitialized{}), VectorSeq(steps + 1, n, MatrixSeq::Uninitialized{})};
  auto data = model.create_data(method);
  Eigen::VectorXd x = x0, v = v0;
  for (Index a = 0; a < model.node_count(); ++a)
    if (model.pinned()[a]) v.segment<3>(3 * a).setZero();
  out.x[0] = x;
  out.v[0] = v;
  ProgressThrottle throttle(progress, steps);
  ClothSpeedBound speed_bound(model, x, v);
  for (Index i = 0; i < steps; ++i) {
    const double* ui = u.empty() ? nullptr : u[i].data();
    speed_bound.add_step(dt, ui);
    double speed2;  // the fastest node's speed squared
    try {
      speed2 = model.step(x, v, dt, ui, method, *data);
    } catch (const std::domain_error& e) {
      if (i > 0) throw;
      // the first step's forces are those of the caller's positions: name them
      throw std::domain_error(std::string("x0 (the positions at step 0): ") + e.what());
    }
    check_divergence("rollout", speed2, i, speed_bound.bound());
    out.x[i + 1] = x;
    out.v[i + 1] = v;
    if (!throttle.report(i + 1)) break;
  }
  throttle.finish(steps);
  return out;
}

}  // namespace directable
