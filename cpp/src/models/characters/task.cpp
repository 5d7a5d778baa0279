#include "directable/models/characters/task.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "directable/core/errors.hpp"

namespace directable {

double wrap_angle(double a) {
  const double two_pi = 2.0 * M_PI;
  double w = std::fmod(a + M_PI, two_pi);
  if (w < 0.0) w += two_pi;
  w -= M_PI;
  return w >= M_PI ? w - two_pi : w;
}

namespace {
void check_weight(const char* name, double v) {
  if (!(v >= 0.0) || !std::isfinite(v))
    throw std::domain_error(std::string(name) + " must be a finite cost weight >= 0, got " + std::to_string(v));
}
}  // namespace

Task::Task(std::shared_ptr<const MotionModel> motion, TaskKind kind, TaskParams params,
           const Eigen::Ref<const RowMatrix>& ranges)
    : motion_(std::move(motion)), kind_(kind), params_(std::move(params)) {
  if (!motion_) throw std::invalid_argument("motion must be a MotionModel, got None");
  const TaskParams& p = params_;
  check_weight("gamma_x", p.gamma_x);
  check_weight("gamma_O", p.gamma_O);
  check_weight("gamma_psi", p.gamma_psi);
  check_weight("gamma_rho", p.gamma_rho);
  check_weight("gamma_tau", p.gamma_tau);
  check_weight("gamma_omega", p.gamma_omega);
  if (!(p.sigma_O > 0.0) || !std::isfinite(p.sigma_O))
    throw std::domain_error("sigma_O must be a finite obstacle width > 0, got " + std::to_string(p.sigma_O));
  for (double v : {p.torso, p.spin, p.offset, p.u_dot, p.v_dot})
    if (!std::isfinite(v)) throw std::domain_error("torso, spin, offset and obstacle velocity must be finite");
  const Index names = Index(motion_->clips().gait_names().size());
  if (!p.gait.empty() && Index(p.gait.size()) != names)
    throw std::invalid_argument("gait must flag each of the " + std::to_string(names) + " gaits");
  if (!p.gait.empty()) {
    bool any = false;
    for (Index k = 0; k < motion_->K(); ++k) any = any || p.gait[motion_->gait(k)];
    if (!any) throw std::invalid_argument("gait: no clip of the motion model belongs to the desired gait");
  }
  switch (kind_) {
    case TaskKind::kNavigation: variables_ = {"d", "theta"}; break;
    case TaskKind::kSpinningNavigation: variables_ = {"theta"}; break;
    default: variables_ = {"u", "v", "theta"};
  }
  theta_ = Index(variables_.size());
  cyclic_.assign(variables_.size(), false);
  cyclic_.back() = true;
  const Index n = Index(variables_.size());
  if (ranges.size() == 0) {
    ranges_.resize(n, 2);
    for (Index i = 0; i < n; ++i) ranges_.row(i) << (cyclic_[i] ? -M_PI : -2.0), (cyclic_[i] ? M_PI : 2.0);
  } else {
    check_shape("ranges", ranges.rows(), ranges.cols(), n, 2);
    check_finite("ranges", ranges.data(), ranges.size());
    ranges_ = ranges;
    for (Index i = 0; i < n; ++i) {
      if (!(ranges_(i, 0) < ranges_(i, 1)))
        throw std::invalid_argument("ranges of " + variables_[i] + " must satisfy lo < hi, got (" +
                                    std::to_string(ranges_(i, 0)) + ", " + std::to_string(ranges_(i, 1)) + ")");
      if (cyclic_[i]) ranges_.row(i) << -M_PI, M_PI;
    }
  }
}

void Task::check_states(const std::string& name, const Eigen::Ref<const RowMatrix>& X, bool in_ranges) const {
  const Index d = dim(), K = clips();
  if (X.cols() != d) {
    std::string layout = "(S, " + std::to_string(d) + ") with columns (clip";
    for (const auto& v : variables_) layout += ", " + v;
    throw_shape(name, layout + ")", shape_str(X.rows(), X.cols()));
  }
  if (X.rows() < 1) throw std::invalid_argument(name + " must hold at least one state, got 0");
  check_finite(name, X.data(), X.size());
  for (Index s = 0; s < X.rows(); ++s) {
    const double c = X(s, 0);
    if (c < 0.0 || c >= double(K) || c != std::floor(c))
      throw std::invalid_argument(name + "[" + std::to_string(s) + ", 0] must be a clip index in [0, " + std::to_string(K) +
                                  "), got " + std::to_string(c));
    if (!in_ranges) continue;
    for (Index i = 0; i < d - 1; ++i) {
      const double v = X(s, i + 1), lo = ranges_(i, 0), hi = ranges_(i, 1);
      const double slack = 1e-9 * (1.0 + std::abs(hi - lo));
      if (v < lo - slack || v > hi + slack)
        throw std::invalid_argument(name + "[" + std::to_string(s) + "]: " + variables_[i] + " = " + std::to_string(v) +
                                    " lies outside the task's range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
  }
}

void Task::successors(const double* x, double* next) const {
  const MotionModel& mm = *motion_;
  const Index K = mm.K(), d = dim(), c = Index(x[0]);
  const double theta = x[theta_], ct = std::cos(theta), st = std::sin(theta);
  for (Index k = 0; k < K; ++k) {
    const Transition& t = mm.transition(c, k);
    double* y = next + k * d;
    const double wx = ct * t.move.x - st * t.move.z, wz = st * t.move.x + ct * t.move.z;  // world displacement
    y[0] = double(mm.state_clip(t.played));
    y[theta_] = wrap_angle(theta + t.move.theta);
    switch (kind_) {
      case TaskKind::kNavigation: y[1] = x[1] + wx; break;
      case TaskKind::kSpinningNavigation: break;
      case TaskKind::kFixedObstacle:
        y[1] = x[1] - wx;
        y[2] = x[2] - wz;
        break;
      case TaskKind::kMovingObstacle:
        y[1] = x[1] + params_.u_dot * t.duration - wx;
        y[2] = x[2] + params_.v_dot * t.duration - wz;
        break;
    }
  }
}

double Task::state_cost(const double* x) const {
  const TaskParams& p = params_;
  double c = 0.0;
  switch (kind_) {
    case TaskKind::kNavigation: c = p.gamma_x * std::abs(x[1]); break;
    case TaskKind::kSpinningNavigation: break;
    case TaskKind::kFixedObstacle:
      c = p.gamma_x * std::abs(p.offset - x[1]);
      [[fallthrough]];
    case TaskKind::kMovingObstacle:
      c += p.gamma_O * std::exp(-(x[1] * x[1] + x[2] * x[2]) / (p.sigma_O * p.sigma_O));
      break;
  }
  return c;
}

void Task::transition_costs(const double* x, double* costs) const {
  const MotionModel& mm = *motion_;
  const TaskParams& p = params_;
  const Index K = mm.K(), c = Index(x[0]);
  const double theta = x[theta_];
  for (Index k = 0; k < K; ++k) {
    const Transition& t = mm.transition(c, k);
    const Index o = t.played;
    if (!p.gait.empty() && !p.gait[mm.gait(o)]) {
      costs[k] = std::numeric_limits<double>::infinity();
      continue;
    }
    // direction: the next clip's motion direction, relative to the path
    double ct = p.gamma_psi * t.psi + p.gamma_rho * std::abs(wrap_angle(theta + t.move.theta + mm.param(o, kRho)));
    if (p.gamma_tau != 0.0) ct += p.gamma_tau * std::abs(mm.param(o, kTorso) - p.torso);
    if (p.gamma_omega != 0.0) ct += p.gamma_omega * std::abs(mm.param(o, kSpin) - p.spin);
    costs[k] = ct;
  }
}

void Task::expand(const double* x, double* next, double* costs) const {
  successors(x, next);
  transition_costs(x, costs);
  const double cs = state_cost(x);
  for (Index k = 0; k < clips(); ++k) costs[k] += cs;
}

}  // namespace directable
