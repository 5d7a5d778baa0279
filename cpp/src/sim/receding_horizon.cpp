#include "directable/sim/receding_horizon.hpp"

#include <functional>
#include <stdexcept>
#include <string>

#include "directable/core/errors.hpp"

namespace directable {

namespace {
void check_loop_arguments(const HorizonOptimizer& opt, const Plant& plant, const SeqView& reference, Index steps,
                          const SeqView& u_reference) {
  const Index n = opt.n(), s = opt.s(), H = opt.horizon();
  if (plant.n() != n || plant.s() != s)
    throw std::invalid_argument("plant must have the optimizer's dimensions n = " + std::to_string(n) + ", s = " +
                                std::to_string(s) + ", got n = " + std::to_string(plant.n()) + ", s = " +
                                std::to_string(plant.s()));
  if (steps < 1) throw std::invalid_argument("steps must be >= 1, got " + std::to_string(steps));
  if (reference.empty()) throw std::invalid_argument("reference is missing");
  if (reference.rows != 1 || reference.cols != n || reference.T != steps + H + 1)
    throw_shape("reference", shape_str(steps + H + 1, n) + " = (steps+horizon+1, n)", shape_str(reference.T, reference.cols));
  reference.check_finite("reference");
  if (!u_reference.empty()) {
    if (u_reference.rows != 1 || u_reference.cols != s || u_reference.T != steps + H)
      throw_shape("u_reference", shape_str(steps + H, s) + " = (steps+horizon, s)",
                  shape_str(u_reference.T, u_reference.cols));
    u_reference.check_finite("u_reference");
  }
}
}  // namespace

RecedingResult run_receding(const HorizonOptimizer& opt, Plant& plant, const SeqView& reference, Index steps,
                            const SeqView& u_reference, const SeqView& u0, const ProgressFn* progress) {
  check_loop_arguments(opt, plant, reference, steps, u_reference);
  opt.check_controls("u0", u0);
  const Index n = opt.n(), s = opt.s(), H = opt.horizon();
  RecedingResult out;
  out.states = VectorSeq(steps + 1, n);
  out.controls = VectorSeq(steps, s);
  out.cost_initial.resize(steps);
  out.cost.resize(steps);
  out.seconds.resize(steps);
  out.iterations.resize(steps);
  plant.state(out.states[0]);
  HorizonWorkspace ws = opt.create_workspace();
  ProgressThrottle throttle(progress, steps);
  Index t = 0;
  // asked inside every solve's iterations too: a stop request ends a long window
  const std::function<bool()> keep_going = [&throttle, &t] { return throttle.report(t); };
  for (; t < steps; ++t) {
    plant.begin_step(t);
    plant.state(out.states[t]);  // (after the step's events)
    const SeqView window(reference.data + t * n, H + 1, 1, n, false);
    const SeqView window_ur = u_reference.empty() ? SeqView() : SeqView(u_reference.data + t * s, H, 1, s, false);
    MPCStats st;
    try {
      st = opt.solve(ws, out.states[t], window, t == 0 ? u0 : SeqView(), window_ur, keep_going);
    } catch (const std::domain_error& e) {  // (e.g. a window whose cost overflows)
      throw std::domain_error("receding horizon at step " + std::to_string(t) + ": " + e.what());
    }
    if (throttle.cancelled()) break;  // (the window's solve was cut short: its control is not applied)
    out.controls[t] = ws.u.head(s);
    plant.advance(t, out.controls[t]);
    plant.state(out.states[t + 1]);
    if (!out.states[t + 1].allFinite())
      throw std::domain_error("plant state became non-finite at step " + std::to_string(t));
    out.cost_initial[t] = st.cost_initial;
    out.cost[t] = st.cost;
    out.seconds[t] = st.seconds;
    out.iterations[t] = int(st.iterations);
    if (!throttle.report(t + 1)) break;
  }
  throttle.finish(steps);
  return out;
}

}  // namespace directable
