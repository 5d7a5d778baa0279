// The cloth's two integrators and its offline rollout.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "directable/core/allocation.hpp"
#include "directable/models/cloth/cloth.hpp"

namespace directable {

double ClothModel::symplectic_step(double dt, const double* u, ClothData& d) const {
  soa_applied_forces(d);
  if (u)
    for (Index a = 0; a < V_; ++a) {
      d.FX[a] += u[3 * a];
      d.FY[a] += u[3 * a + 1];
      d.FZ[a] += u[3 * a + 2];
    }
  if (d.dt_over_m_for != dt) {  // once per run: dt is constant
    d.dt_over_m = dt / masses_.array();
    d.dt_over_m_for = dt;
  }
  return symplectic_update_soa(V_, dt, d.dt_over_m.data(), keep_.data(), d.FX.data(), d.FY.data(), d.FZ.data(),
                               d.X.data(), d.Y.data(), d.Z.data(), d.VX.data(), d.VY.data(), d.VZ.data(),
                               d.speed2.data());
}

double ClothModel::step(Eigen::Ref<Eigen::VectorXd> x, Eigen::Ref<Eigen::VectorXd> v, double dt, const double* u,
                        ClothIntegrator method, ClothData& d) const {
  if (method == ClothIntegrator::symplectic) {
    load_state(x, v, d);
    const double speed2 = symplectic_step(dt, u, d);
    store_state(d, x.data(), v.data());
    return speed2;
  }
  if (d.A.nonZeros() == 0 || (method == ClothIntegrator::implicit && !d.analysis))
    throw std::invalid_argument("implicit step: the ClothData was created for another integrator");
  implicit_system(x, v, dt, u, d, method == ClothIntegrator::implicit);
  if (method == ClothIntegrator::implicit) {
    if (!d.analysis->factorize_assembled(d.factor))
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

namespace {

//! The checks every run from (x0, v0) shares: shapes, finite values, dt > 0.
void check_start(const ClothModel& model, const Eigen::Ref<const Eigen::VectorXd>& x0,
                 const Eigen::Ref<const Eigen::VectorXd>& v0, double dt, const char* x_name, const char* v_name) {
  const Index n = 3 * model.node_count();
  check_shape(x_name, x0.size(), 1, n, 1);
  check_shape(v_name, v0.size(), 1, n, 1);
  check_finite(x_name, x0.data(), n);
  check_finite(v_name, v0.data(), n);
  check_positive("dt", dt);
}

void zero_pinned_velocities(const ClothModel& model, Eigen::Ref<Eigen::VectorXd> v) {
  for (Index a = 0; a < model.node_count(); ++a)
    if (model.pinned()[a]) v.segment<3>(3 * a).setZero();
}

//! Step i of a run (step() returns the fastest node's speed squared), judged
//! against the run's speed bound: a diverging step throws with its index
//! ("<what> diverged at step i"), and a failed factorisation or a degenerate
//! spring at step 0 names the caller's positions.
template <class Step>
void checked_step(Step&& step, double dt, const double* u, ClothSpeedBound& speed_bound, Index i, const char* what,
                  const char* x_name) {
  speed_bound.add_step(dt, u);
  double speed2;
  try {
    speed2 = step();
  } catch (const std::domain_error& e) {
    if (i > 0) throw;
    // the first step's forces are those of the caller's positions: name them
    throw std::domain_error(std::string(x_name) + " (the positions at step 0): " + e.what());
  }
  check_divergence(what, speed2, i, speed_bound.bound());
}

}  // namespace

void cloth_step(const ClothModel& model, Eigen::Ref<Eigen::VectorXd> x, Eigen::Ref<Eigen::VectorXd> v, double dt,
                const double* u, ClothIntegrator method) {
  check_start(model, x, v, dt, "x", "v");
  if (u) check_finite("u", u, 3 * model.node_count());
  zero_pinned_velocities(model, v);
  auto data = model.create_data(method);
  ClothSpeedBound speed_bound(model, x, v);
  checked_step([&] { return model.step(x, v, dt, u, method, *data); }, dt, u, speed_bound, 0, "step", "x");
}

ClothRollout cloth_rollout(const ClothModel& model, const Eigen::Ref<const Eigen::VectorXd>& x0,
                           const Eigen::Ref<const Eigen::VectorXd>& v0, double dt, Index steps, SeqView u,
                           ClothIntegrator method, const ProgressFn* progress) {
  const Index n = 3 * model.node_count();
  check_start(model, x0, v0, dt, "x0", "v0");
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
  zero_pinned_velocities(model, v);
  out.x[0] = x;
  out.v[0] = v;
  ProgressThrottle throttle(progress, steps);
  ClothSpeedBound speed_bound(model, x, v);
  if (method == ClothIntegrator::symplectic) {
    // the state stays in data's structure-of-arrays form for the whole run; each step writes it out once.
    // A step costs ~25 ns per node: the clock is read (progress, Ctrl-C) every `poll` steps, at least
    // every ~4096 node-steps (0.1 ms), not on each of a small cloth's 10 us steps.
    const Index poll = std::max<Index>(1, 4096 / model.node_count());
    model.load_state(x, v, *data);
    for (Index i = 0; i < steps; ++i) {
      const double* ui = u.empty() ? nullptr : u[i].data();
      checked_step([&] { return model.symplectic_step(dt, ui, *data); }, dt, ui, speed_bound, i, "rollout", "x0");
      model.store_state(*data, out.x[i + 1].data(), out.v[i + 1].data());
      if ((i + 1) % poll == 0 && !throttle.report(i + 1)) break;
    }
  } else {
    for (Index i = 0; i < steps; ++i) {
      const double* ui = u.empty() ? nullptr : u[i].data();
      checked_step([&] { return model.step(x, v, dt, ui, method, *data); }, dt, ui, speed_bound, i, "rollout", "x0");
      out.x[i + 1] = x;
      out.v[i + 1] = v;
      if (!throttle.report(i + 1)) break;
    }
  }
  throttle.finish(steps);
  return out;
}

}  // namespace directable
