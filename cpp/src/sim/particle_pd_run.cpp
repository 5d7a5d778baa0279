#include "directable/sim/particle_pd_run.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "directable/core/errors.hpp"
#include "directable/core/parallel.hpp"

namespace directable {

namespace {

void check_run(const ParticlePD& law, const Eigen::Ref<const Eigen::VectorXd>& x0, Index steps, const SeqView& d) {
  const Index n = law.n(), T = law.horizon();
  if (x0.size() != n) throw_shape("x0", "(" + std::to_string(n) + ",)", "(" + std::to_string(x0.size()) + ",)");
  check_finite("x0", x0.data(), n);
  if (steps < 1 || steps > T)
    throw std::invalid_argument("steps must lie in [1, " + std::to_string(T) + "] (the reference's length), got " +
                                std::to_string(steps));
  if (d.empty()) return;
  if (d.rows != 1 || d.cols != law.r() || d.T != steps)
    throw_shape("disturbance", shape_str(steps, law.r()), shape_str(d.T, d.cols));
  d.check_finite("disturbance");
}

//! The loop both entry points share: w = PD(x, i), then the model's step
//! with w + disturbance. record(i, sim) after each step; returns the step
//! whose state went non-finite, or -1.
template <class Record>
Index run_loop(const ParticlePD& law, ParticlePDData& data, const Eigen::Ref<const Eigen::VectorXd>& x0, Index steps,
               const SeqView& d, Eigen::VectorXd& w, Record&& record) {
  ControlledSimulation sim(law.model(), nullptr, x0, law.dt(), law.t0());
  for (Index i = 0; i < steps; ++i) {
    law.control(sim.state(), i, w, data);
    if (!w.allFinite()) return i;
    try {
      sim.step(d.empty() ? nullptr : d.data + i * d.cols, w.data(), nullptr);
    } catch (const std::domain_error&) {
      return i;  // the model refuses a step that overflows (inputs were checked above): this run diverged here
    }
    if (!sim.state().allFinite()) return i;
    if (!record(i, sim)) break;
  }
  return -1;
}

}  // namespace

SimulationResult simulate_particle_pd(const ParticlePD& law, const Eigen::Ref<const Eigen::VectorXd>& x0, Index steps,
                                      SeqView disturbance, const ProgressFn* progress) {
  check_run(law, x0, steps, disturbance);
  const Index n = law.n(), r = law.r();
  const RowMatrix& ref = law.reference();
  SimulationResult res;
  res.states = VectorSeq(steps + 1, n);
  res.controls = VectorSeq(steps, r);
  res.feedback = VectorSeq(steps, r);
  res.tracking_error.setZero(steps + 1);
  res.effort.setZero(steps);
  res.ref_index = Eigen::VectorXi::LinSpaced(steps + 1, 0, int(steps));
  res.states[0] = x0;
  res.tracking_error[0] = (x0 - ref.row(0).transpose()).norm();
  ParticlePDData data = law.create_data();
  Eigen::VectorXd w(r);
  ProgressThrottle throttle(progress, steps);
  const Index bad = run_loop(law, data, x0, steps, disturbance, w, [&](Index i, const ControlledSimulation& sim) {
    res.states[i + 1] = sim.state();
    res.controls[i] = w;
    res.feedback[i] = w;
    res.effort[i] = w.squaredNorm();
    res.tracking_error[i + 1] = (sim.state() - ref.row(i + 1).transpose()).norm();
    return throttle.report(i + 1);
  });
  if (bad >= 0)
    throw std::domain_error("PD run diverged (non-finite " + std::string(w.allFinite() ? "state" : "control") +
                            ") at step " + std::to_string(bad) + ": reduce the gains or dt");
  throttle.finish(steps);
  return res;
}

ParticlePDSweep sweep_particle_pd(const ParticlePD& law, const Eigen::Ref<const RowMatrix>& gains,
                                  const Eigen::Ref<const Eigen::VectorXd>& x0, Index steps, SeqView disturbance,
                                  int threads, const ProgressFn* progress) {
  check_run(law, x0, steps, disturbance);
  if (gains.cols() != 3 || gains.rows() < 1)
    throw_shape("gains", "(m, 3) with m >= 1: rows (k_z, k_p, k_pdot)", shape_str(gains.rows(), gains.cols()));
  check_finite("gains", gains.data(), gains.size());
  const Index m = gains.rows(), P = law.particles(), dim = law.space_dim();
  std::vector<ParticlePD> laws;
  laws.reserve(size_t(m));
  for (Index k = 0; k < m; ++k) laws.push_back(law.with_gains({gains(k, 0), gains(k, 1), gains(k, 2)}));
  ParticlePDSweep out;
  const double inf = std::numeric_limits<double>::infinity();  // a diverged run's distance is unbounded
  out.final_error.setConstant(m, P, inf);
  out.max_error.setConstant(m, P, inf);
  out.effort.setConstant(m, std::numeric_limits<double>::infinity());
  out.diverged_at.setConstant(m, -1);
  const RowMatrix& ref = law.reference();
  struct Work {
    ParticlePDData data;
    Eigen::VectorXd w;
  };
  parallel_steps(m, threads, progress, m, [&] { return Work{law.create_data(), Eigen::VectorXd(law.r())}; },
                 [&](Index k, Work& ws) {
                   Eigen::VectorXd worst = Eigen::VectorXd::Zero(P), last(P);
                   double effort = 0.0;
                   auto errors = [&](const Eigen::VectorXd& x, Index i) {
                     for (Index a = 0; a < P; ++a)
                       last[a] = (x.segment(dim * a, dim) - ref.row(i).segment(dim * a, dim).transpose()).norm();
                     worst = worst.cwiseMax(last);
                   };
                   errors(x0, 0);
                   const Index bad = run_loop(laws[size_t(k)], ws.data, x0, steps, disturbance, ws.w,
                                              [&](Index i, const ControlledSimulation& sim) {
                                                effort += ws.w.squaredNorm() * law.dt();
                                                errors(sim.state(), i + 1);
                                                return true;
                                              });
                   if (bad >= 0) {
                     out.diverged_at[k] = int(bad);
                     return;
                   }
                   out.final_error.row(k) = last.transpose();
                   out.max_error.row(k) = worst.transpose();
                   out.effort[k] = effort;
                 });
  return out;
}

}  // namespace directable
