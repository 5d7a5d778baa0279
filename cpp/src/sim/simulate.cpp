#include "directable/sim/simulate.hpp"
#include "directable/core/progress.hpp"

#include <algorithm>

namespace directable {

ControlledSimulation::ControlledSimulation(const Model& model, Tracker* controller,
                                           const Eigen::Ref<const Eigen::VectorXd>& z0, double dt, double t0)
    : model_(model), ctrl_(controller), data_(model.create_data()), dt_(dt), t_(t0) {
  const Index n = model.state_dim(), s = model.control_dim();
  check_positive("dt", dt);
  if (z0.size() != n) throw_shape("z0", "(" + std::to_string(n) + ",)", "(" + std::to_string(z0.size()) + ",)");
  check_finite("z0", z0.data(), n);
  if (ctrl_ && (ctrl_->n() != n || ctrl_->s() != s))
    throw std::invalid_argument("controller has n = " + std::to_string(ctrl_->n()) + ", s = " + std::to_string(ctrl_->s()) +
                                " but the model has n = " + std::to_string(n) + ", s = " + std::to_string(s));
  z_ = z0;
  z_next_.setZero(n);
  w_.setZero(s);
  w_fb_.setZero(s);
  w_apply_.setZero(s);
}

void ControlledSimulation::set_state(const Eigen::Ref<const Eigen::VectorXd>& z) {
  if (z.size() != z_.size()) throw_shape("z", "(" + std::to_string(z_.size()) + ",)", "(" + std::to_string(z.size()) + ",)");
  check_finite("z", z.data(), z.size());
  z_ = z;
}

double ControlledSimulation::tracking_error() const {
  return ctrl_ ? (z_ - ctrl_->reference_state(ctrl_->index())).norm() : 0.0;
}

void ControlledSimulation::step(const double* w_ext, const double* w_open, const double* kick) {
  const Index n = z_.size(), s = w_.size();
  if (kick) z_ += ConstVecMap(kick, n);
  if (ctrl_) {
    ctrl_->control(z_, w_, w_fb_);
  } else {
    if (w_open)
      w_ = ConstVecMap(w_open, s);
    else
      w_.setZero();
    w_fb_.setZero();
  }
  w_apply_ = w_;
  if (w_ext) w_apply_ += ConstVecMap(w_ext, s);
  model_.step(z_, t_, dt_, w_apply_, z_next_, *data_);
  z_.swap(z_next_);
  t_ += dt_;
  ++steps_;
  if (ctrl_) ctrl_->advance();
}

SimulationResult simulate(const Model& model, Tracker* controller, const Eigen::Ref<const Eigen::VectorXd>& z0,
                          Index steps, double dt, double t0, const SimulationInputs& in, const ProgressFn* progress) {
  const Index n = model.state_dim(), s = model.control_dim(), N = steps;
  if (N <= 0) throw std::invalid_argument("steps must be positive, got " + std::to_string(N));
  auto check_seq = [N](const SeqView& v, const char* name, Index dim) {
    if (v.empty()) return;
    if (v.rows != 1 || v.cols != dim || v.T != N) throw_shape(name, shape_str(N, dim), shape_str(v.T, v.cols));
    v.check_finite(name);
  };
  check_seq(in.disturbance, "disturbance", s);
  check_seq(in.open_loop, "open_loop", s);
  check_seq(in.kicks, "kicks", n);
  if (!in.open_loop.empty() && controller)
    throw std::invalid_argument("open_loop control is only used without a controller (use the controller's w_ff)");
  for (Index k = 0; k < in.jump_steps.size(); ++k)
    if (in.jump_steps[k] < 0 || in.jump_steps[k] >= N)
      throw std::invalid_argument("jump_steps must lie in [0, steps)");
  if (in.jump_steps.size() && !controller) throw std::invalid_argument("jump_steps need a controller");

  ControlledSimulation sim(model, controller, z0, dt, t0);
  SimulationResult r;
  // Every row is written below (a cancelled run throws from finish(), so no
  // partly written result escapes): a long run's results are tens of MB,
  // and zero-filling them first costs about as much as writing them.
  r.states = VectorSeq(N + 1, n, MatrixSeq::Uninitialized{});
  r.controls = VectorSeq(N, s, MatrixSeq::Uninitialized{});
  r.feedback = VectorSeq(N, s, MatrixSeq::Uninitialized{});
  r.tracking_error.setZero(N + 1);
  r.effort.setZero(N);
  r.ref_index.setZero(N + 1);
  std::vector<Index> jumps(in.jump_steps.data(), in.jump_steps.data() + in.jump_steps.size());
  std::sort(jumps.begin(), jumps.end());
  auto next_jump = jumps.begin();
  ProgressThrottle throttle(progress, N);

  r.states[0] = sim.state();
  for (Index i = 0; i < N; ++i) {
    if (next_jump != jumps.end() && *next_jump == i) {
      controller->jump_to_nearest(sim.state());
      while (next_jump != jumps.end() && *next_jump == i) ++next_jump;
    }
    if (controller) r.ref_index[i] = int(controller->index());
    r.tracking_error[i] = sim.tracking_error();
    auto row = [](const SeqView& v, Index i) { return v.empty() ? nullptr : v.data + i * v.cols; };
    sim.step(row(in.disturbance, i), row(in.open_loop, i), row(in.kicks, i));
    r.controls[i] = sim.last_control();
    r.feedback[i] = sim.last_feedback();
    r.effort[i] = sim.last_feedback().squaredNorm();
    r.states[i + 1] = sim.state();
    if (!sim.state().allFinite())
      throw std::domain_error("simulation diverged (non-finite state) at step " + std::to_string(i) +
                              ": reduce dt or the gains");
    if (!throttle.report(i + 1)) break;
  }
  if (controller) r.ref_index[N] = int(controller->index());
  r.tracking_error[N] = sim.tracking_error();
  throttle.finish(N);
  return r;
}

}  // namespace directable
