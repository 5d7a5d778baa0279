#include "directable/models/characters/task.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "directable/core/errors.hpp"

namespace directable {

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
  if (p.obstacle_samples < 1)
    throw std::invalid_argument("obstacle_samples must be >= 1, got " + std::to_string(p.obstacle_samples));
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

void Task::clamp_to_domain(double* X, Index n) const {
  if (!clamps_values()) return;
  const Index d = dim();
  const double ulo = ranges_(0, 0), uhi = ranges_(0, 1), vlo = ranges_(1, 0), vhi = ranges_(1, 1);
  for (Index s = 0; s < n; ++s) {
    double* x = X + s * d;
    x[1] = std::min(std::max(x[1], ulo), uhi);
    x[2] = std::min(std::max(x[2], vlo), vhi);
  }
}

void Task::successors(const double* x, double* next) const {
  const TransitionArrays& T = motion_->arrays();
  const Index K = motion_->K(), d = dim(), c = Index(x[0]);
  const double theta = x[theta_], ct = std::cos(theta), st = std::sin(theta);
  const double *dx = &T.dx(c, 0), *dz = &T.dz(c, 0), *dth = &T.dtheta(c, 0), *dur = &T.duration(c, 0),
               *clip = &T.next_state(c, 0);
  // one loop per task kind, so each is a straight pass over the row
  switch (kind_) {
    case TaskKind::kNavigation:
      for (Index k = 0; k < K; ++k) {
        double* y = next + k * d;
        y[0] = clip[k];
        y[1] = x[1] + (ct * dx[k] - st * dz[k]);
        y[2] = wrap_angle(theta + dth[k]);
      }
      break;
    case TaskKind::kSpinningNavigation:
      for (Index k = 0; k < K; ++k) {
        next[k * d] = clip[k];
        next[k * d + 1] = wrap_angle(theta + dth[k]);
      }
      break;
    case TaskKind::kFixedObstacle:
    case TaskKind::kMovingObstacle: {
      // the obstacle moves by (u_dot, v_dot) dt (zero for a fixed one), the character by its world displacement
      const double ud = kind_ == TaskKind::kMovingObstacle ? params_.u_dot : 0.0;
      const double vd = kind_ == TaskKind::kMovingObstacle ? params_.v_dot : 0.0;
      for (Index k = 0; k < K; ++k) {
        double* y = next + k * d;
        y[0] = clip[k];
        y[1] = x[1] + ud * dur[k] - (ct * dx[k] - st * dz[k]);
        y[2] = x[2] + vd * dur[k] - (st * dx[k] + ct * dz[k]);
        y[3] = wrap_angle(theta + dth[k]);
      }
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
  const TransitionArrays& T = motion_->arrays();
  const TaskParams& p = params_;
  const Index K = motion_->K(), c = Index(x[0]);
  const double theta = x[theta_];
  const double *psi = &T.psi(c, 0), *dir = &T.direction(c, 0), *tau = &T.torso(c, 0), *omega = &T.spin(c, 0);
  // direction: the next clip's motion direction, relative to the path
  for (Index k = 0; k < K; ++k) costs[k] = p.gamma_psi * psi[k] + p.gamma_rho * std::abs(wrap_angle(theta + dir[k]));
  if (p.gamma_tau != 0.0)
    for (Index k = 0; k < K; ++k) costs[k] += p.gamma_tau * std::abs(tau[k] - p.torso);
  if (p.gamma_omega != 0.0)
    for (Index k = 0; k < K; ++k) costs[k] += p.gamma_omega * std::abs(omega[k] - p.spin);
  const bool obstacle = kind_ == TaskKind::kFixedObstacle || kind_ == TaskKind::kMovingObstacle;
  if (obstacle && p.obstacle_samples > 1 && p.gamma_O != 0.0) {
    // the obstacle relative to the character at fractions f of the transition:
    // (u, v) + f ((u_dot, v_dot) dt - the character's displacement), as in successors()
    const double *dx = &T.dx(c, 0), *dz = &T.dz(c, 0), *dur = &T.duration(c, 0);
    const double ct = std::cos(theta), st = std::sin(theta), inv_s2 = 1.0 / (p.sigma_O * p.sigma_O);
    const double ud = kind_ == TaskKind::kMovingObstacle ? p.u_dot : 0.0;
    const double vd = kind_ == TaskKind::kMovingObstacle ? p.v_dot : 0.0;
    for (Index m = 1; m < p.obstacle_samples; ++m) {
      const double f = double(m) / double(p.obstacle_samples);
      for (Index k = 0; k < K; ++k) {
        const double u = x[1] + f * (ud * dur[k] - (ct * dx[k] - st * dz[k]));
        const double v = x[2] + f * (vd * dur[k] - (st * dx[k] + ct * dz[k]));
        costs[k] += p.gamma_O * std::exp(-(u * u + v * v) * inv_s2);
      }
    }
  }
  if (!p.gait.empty()) {
    const Index* g = &T.gait[std::size_t(c * K)];
    for (Index k = 0; k < K; ++k)
      if (!p.gait[g[k]]) costs[k] = std::numeric_limits<double>::infinity();
  }
}

void Task::expand_columns(const double* x, double* next, Index ld, double* costs) const {
  const TransitionArrays& T = motion_->arrays();
  const Index K = motion_->K(), c = Index(x[0]);
  const double theta = x[theta_], ct = std::cos(theta), st = std::sin(theta);
  const double *dx = &T.dx(c, 0), *dz = &T.dz(c, 0), *dth = &T.dtheta(c, 0), *dur = &T.duration(c, 0),
               *clip = &T.next_state(c, 0);
  std::copy(clip, clip + K, next);
  // the same expressions as successors(), one contiguous pass per variable
  switch (kind_) {
    case TaskKind::kNavigation: {
      double *d = next + ld, *th = next + 2 * ld;
      for (Index k = 0; k < K; ++k) d[k] = x[1] + (ct * dx[k] - st * dz[k]);
      for (Index k = 0; k < K; ++k) th[k] = wrap_angle(theta + dth[k]);
      break;
    }
    case TaskKind::kSpinningNavigation: {
      double* th = next + ld;
      for (Index k = 0; k < K; ++k) th[k] = wrap_angle(theta + dth[k]);
      break;
    }
    case TaskKind::kFixedObstacle:
    case TaskKind::kMovingObstacle: {
      const double ud = kind_ == TaskKind::kMovingObstacle ? params_.u_dot : 0.0;
      const double vd = kind_ == TaskKind::kMovingObstacle ? params_.v_dot : 0.0;
      double *u = next + ld, *v = next + 2 * ld, *th = next + 3 * ld;
      for (Index k = 0; k < K; ++k) u[k] = x[1] + ud * dur[k] - (ct * dx[k] - st * dz[k]);
      for (Index k = 0; k < K; ++k) v[k] = x[2] + vd * dur[k] - (st * dx[k] + ct * dz[k]);
      for (Index k = 0; k < K; ++k) th[k] = wrap_angle(theta + dth[k]);
      break;
    }
  }
  transition_costs(x, costs);
  const double cs = state_cost(x);
  for (Index k = 0; k < K; ++k) costs[k] += cs;
}

void Task::clamp_columns(double* X, Index n, Index ld) const {
  if (!clamps_values()) return;
  const double ulo = ranges_(0, 0), uhi = ranges_(0, 1), vlo = ranges_(1, 0), vhi = ranges_(1, 1);
  double *u = X + ld, *v = X + 2 * ld;
  for (Index i = 0; i < n; ++i) u[i] = std::min(std::max(u[i], ulo), uhi);
  for (Index i = 0; i < n; ++i) v[i] = std::min(std::max(v[i], vlo), vhi);
}

void Task::expand(const double* x, double* next, double* costs) const {
  successors(x, next);
  transition_costs(x, costs);
  const double cs = state_cost(x);
  for (Index k = 0; k < clips(); ++k) costs[k] += cs;
}

}  // namespace directable
