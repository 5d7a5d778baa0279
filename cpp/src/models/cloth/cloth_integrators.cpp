// The cloth's two integrators and its offline rollout.
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
  // rhs = dt (F + u + dt dF/dx v), pinned rows zero
  d.rhs = d.F;
  if (u) d.rhs += Eigen::Map<const Eigen::VectorXd>(u, n);
  for (Index r = 0; r < n; ++r) {
    double acc = 0.0;
    for (int e = row_offsets_[r]; e < row_offsets_[r + 1]; ++e) acc += d.Kx[e] * v[columns_[e]];
    d.rhs[r] = pinned_[r / 3] ? 0.0 : dt * (d.rhs[r] + dt * acc);
  }
  double* Av = d.A.valuePtr();
  const double dt2 = 0.5 * dt * dt;
  for (Index r = 0; r < n; ++r)
    for (int e = row_offsets_[r]; e < row_offsets_[r + 1]; ++e) {
      if (entry_pinned_[e]) {
        Av[e] = entry_diagonal_[e] ? 1.0 : 0.0;
        continue;
      }
      Av[e] = (entry_diagonal_[e] ? masses_[r / 3] : 0.0) - dt * d.Kv[e] - dt2 * (d.Kx[e] + d.Kx[transpose_entry_[e]]);
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
  double speed2 = 0.0;
  for (Index r = 0; r < n; ++r) {
    const double vn = pinned_[r / 3] ? 0.0 : v[r] + d.dv[r];
    v[r] = vn;
    x[r] += dt * vn;
    speed2 += vn * vn;
  }
  return speed2;
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
  for (Index i = 0; i < steps; ++i) {
    double speed2;
    try {
      speed2 = model.step(x, v, dt, u.empty() ? nullptr : u[i].data(), method, *data);
    } catch (const std::domain_error& e) {
      if (i > 0) throw;
      // the first step's forces are those of the caller's positions: name them
      throw std::domain_error(std::string("x0 (the positions at step 0): ") + e.what());
    }
    check_divergence("rollout", speed2, model.node_count(), i);
    out.x[i + 1] = x;
    out.v[i + 1] = v;
    if (!throttle.report(i + 1)) break;
  }
  throttle.finish(steps);
  return out;
}

}  // namespace directable
