#include "directable/sim/plant_servo.hpp"

#include <string>

#include "directable/core/errors.hpp"

namespace directable {

namespace {

void check_law_vector(const Eigen::VectorXd& v, const char* name, Index s) {
  if (v.size() != s) throw_shape(std::string("servo ") + name, "(" + std::to_string(s) + ",)",
                                 "(" + std::to_string(v.size()) + ",)");
  check_finite(std::string("servo ") + name, v.data(), s);
}

}  // namespace

PlantServoResult run_plant_servo(Plant& plant, const PlantServoLaw& law, Index steps, const ProgressFn* progress) {
  const Index n = plant.n(), s = plant.s();
  if (n != 2 * s)
    throw std::invalid_argument("a plant servo needs a state [q, q'] with s = n / 2, got n = " + std::to_string(n) +
                                ", s = " + std::to_string(s));
  if (steps < 1) throw std::invalid_argument("steps must be >= 1, got " + std::to_string(steps));
  check_law_vector(law.q_ref, "q_ref", s);
  check_law_vector(law.qd_ref, "qd_ref", s);
  check_law_vector(law.kp, "kp", s);
  check_law_vector(law.kd, "kd", s);
  check_law_vector(law.u_ff, "u_ff", s);
  PlantServoResult out;
  out.states = VectorSeq(steps + 1, n);
  out.controls = VectorSeq(steps, s);
  plant.state(out.states[0]);
  ProgressThrottle throttle(progress, steps);
  for (Index t = 0; t < steps; ++t) {
    plant.begin_step(t);
    auto x = out.states[t];
    plant.state(x);  // (after the step's events)
    auto u = out.controls[t];
    u = law.u_ff + law.kp.cwiseProduct(law.q_ref - x.head(s)) + law.kd.cwiseProduct(law.qd_ref - x.tail(s));
    plant.advance(t, u);
    plant.state(out.states[t + 1]);
    if (!out.states[t + 1].allFinite())
      throw std::domain_error("plant state became non-finite at step " + std::to_string(t) +
                              " under the servo law u = u_ff + kp (q_ref - q) + kd (qd_ref - qd): the gains or "
                              "targets are too large for the plant");
    if (!throttle.report(t + 1)) break;
  }
  throttle.finish(steps);
  return out;
}

}  // namespace directable
