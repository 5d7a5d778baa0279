#include "directable/control/cloth/goal_path.hpp"

#include <Eigen/Geometry>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "directable/control/cloth/path_editing.hpp"

namespace directable {

namespace {

void check_weight(const char* name, double value) {
  if (!std::isfinite(value)) throw std::domain_error(std::string(name) + " must be finite, got " + std::to_string(value));
  if (value < 0.0) throw std::invalid_argument(std::string(name) + " must be >= 0, got " + std::to_string(value));
}

//! Validates the pilot arrays and returns V.
Index check_pilot(const PointMassSystem& system, SeqView px, SeqView pv) {
  const Index V = system.node_count();
  if (px.empty() || px.is_constant() || px.rows != V || px.cols != 3 || px.T < 2)
    throw_shape("pilot.x", "(T+1, " + std::to_string(V) + ", 3) with T >= 1", shape_str(px.T, px.rows, px.cols));
  if (pv.empty() || pv.is_constant() || pv.rows != V || pv.cols != 3 || pv.T != px.T)
    throw_shape("pilot.v", shape_str(px.T, V, 3), shape_str(pv.T, pv.rows, pv.cols));
  return V;
}

//! x_j + dt v_j + dt^2 F_j / m: where the node lands without a control.
Eigen::Vector3d free_landing(const Eigen::VectorXd& x, const Eigen::VectorXd& v, const Eigen::VectorXd& F, Index j,
                             double m, double dt) {
  return x.segment<3>(3 * j) + dt * v.segment<3>(3 * j) + (dt * dt / m) * F.segment<3>(3 * j);
}

//! The inverse-dynamics force to land on q, shortened to the limit; q moves
//! to where the shortened force lands. Returns true if it was shortened.
bool inverse_dynamics(Eigen::Vector3d& q, const Eigen::Vector3d& base, double m, double dt, double limit,
                      Eigen::Vector3d& u) {
  u = (m / (dt * dt)) * (q - base);
  const double norm = u.norm();
  if (norm <= limit) return false;
  u *= limit / norm;
  q = base + (dt * dt / m) * u;
  return true;
}

//! Polar fractions in [-1, 1] for `samples` angles, ordered by |fraction| so
//! that ties in the cost keep the smallest deviation from R_i.
std::vector<double> polar_fractions(Index samples) {
  std::vector<double> f(samples);
  for (Index p = 0; p < samples; ++p) f[p] = samples == 1 ? 0.0 : -1.0 + 2.0 * p / static_cast<double>(samples - 1);
  std::stable_sort(f.begin(), f.end(), [](double a, double b) { return std::abs(a) < std::abs(b); });
  return f;
}

struct Window {
  Index node, start, end;  // [start, end]
  Eigen::Vector3d goal;
};

std::vector<Index> ordered_by_start(const std::vector<Window>& w) {
  std::vector<Index> order(w.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](Index a, Index b) { return w[a].start < w[b].start; });
  return order;
}

ClothPlan empty_plan(const std::vector<Window>& w, Index t_start, Index t_end) {
  ClothPlan p;
  const Index c = static_cast<Index>(w.size()), n = t_end - t_start;
  p.t_start = t_start;
  p.t_end = t_end;
  p.goals.resize(c, 3);
  for (Index k = 0; k < c; ++k) {
    p.nodes.push_back(w[k].node);
    p.window_start.push_back(w[k].start);
    p.window_end.push_back(w[k].end);
    p.goals.row(k) = w[k].goal.transpose();
  }
  p.paths = MatrixSeq(c, n + 1, 3);
  p.forces = MatrixSeq(n, c, 3);
  p.reached.assign(c, 0);
  p.final_distance.setZero(c);
  p.cost.setZero(c);
  p.closest_step.assign(c, 0);
  return p;
}

//! Shifts path (m+1 x 3) by w(s) (goal - last point), w the smoothstep of the
//! arc-length fraction s, so that it ends on goal.
void end_on_goal(RowMatrix& path, const Eigen::Vector3d& goal) {
  const Index m = path.rows() - 1;
  const Eigen::RowVector3d e = goal.transpose() - path.row(m);
  Eigen::VectorXd s(m + 1);
  s[0] = 0.0;
  for (Index i = 0; i < m; ++i) s[i + 1] = s[i] + (path.row(i + 1) - path.row(i)).norm();
  for (Index i = 1; i <= m; ++i) {
    const double f = s[m] > 0.0 ? s[i] / s[m] : static_cast<double>(i) / static_cast<double>(m);
    path.row(i) += f * f * (3.0 - 2.0 * f) * e;
  }
}

Eigen::Map<const Eigen::VectorXd> state_at(SeqView s, Index i) { return Eigen::Map<const Eigen::VectorXd>(s[i].data(), 3 * s.rows); }

//! Steps the system by symplectic Euler from the pilot state at t_start to
//! t_end, the simulation in the loop: at step i, F^A is evaluated once on
//! the current state and every node k inside its window gets the force
//! control(k, i, x, v, base) (base: where the node lands without a control),
//! in the order of the window starts. Returns the node paths c x (n+1) x 3.
template <class Control>
MatrixSeq run_windows(const PointMassSystem& system, SeqView px, SeqView pv, double dt, const std::vector<Window>& w,
                      Index t_start, Index t_end, const char* what, Control&& control) {
  const Index c = static_cast<Index>(w.size());
  const Eigen::VectorXd& m = system.node_masses();
  const std::vector<Index> order = ordered_by_start(w);
  auto data = system.create_point_mass_data();
  Eigen::VectorXd x = state_at(px, t_start), v = state_at(pv, t_start), F(x.size());
  MatrixSeq paths(c, t_end - t_start + 1, 3);
  for (Index k = 0; k < c; ++k) paths[k].row(0) = x.segment<3>(3 * w[k].node).transpose();
  for (Index i = t_start; i < t_end; ++i) {
    system.applied_forces(x, v, F, *data);
    for (Index k : order) {
      if (i < w[k].start || i >= w[k].end) continue;
      const Index j = w[k].node;
      F.segment<3>(3 * j) += control(k, i, x, free_landing(x, v, F, j, m[j], dt));
    }
    check_divergence(what, symplectic_update(system, x, v, F, dt), i);
    for (Index k = 0; k < c; ++k) paths[k].row(i + 1 - t_start) = x.segment<3>(3 * w[k].node).transpose();
  }
  return paths;
}

//! The second pass: inverse dynamics onto targets (c x (n+1) x 3 over [t_start, t_end]).
ClothPlan second_pass(const PointMassSystem& system, SeqView px, SeqView pv, double dt, const std::vector<Window>& w,
                      Index t_start, Index t_end, SeqView targets, const GoalPathSettings& s) {
  ClothPlan plan = empty_plan(w, t_start, t_end);
  const Eigen::VectorXd& m = system.node_masses();
  auto control = [&](Index k, Index i, const Eigen::VectorXd&, const Eigen::Vector3d& base) {
    const Index j = w[k].node;
    Eigen::Vector3d q = targets[k].row(i + 1 - t_start).transpose(), u;
    plan.clipped_forces += inverse_dynamics(q, base, m[j], dt, s.f_max, u);
    plan.forces[i - t_start].row(k) = u.transpose();
    plan.cost[k] += 0.5 * (s.beta * (w[k].goal - q).squaredNorm() + s.gamma * u.squaredNorm());
    return u;
  };
  plan.paths = run_windows(system, px, pv, dt, w, t_start, t_end, "second pass", control);
  for (std::size_t k = 0; k < w.size(); ++k) {
    plan.final_distance[k] = (plan.paths[k].row(w[k].end - t_start).transpose() - w[k].goal).norm();
    plan.reached[k] = plan.final_distance[k] <= s.tolerance;
  }
  return plan;
}

//! Validated goals -> windows (eq. 11-12), overlapping ones merged.
std::vector<Window> goal_windows(const PointMassSystem& system, SeqView px, const std::vector<NodeGoal>& goals,
                                 double alpha) {
  const Index V = system.node_count(), T = px.T - 1;
  if (goals.empty()) throw std::invalid_argument("goals must list at least one (node, t_c, goal)");
  std::vector<Window> w;
  std::vector<std::uint8_t> seen(V, 0);
  for (std::size_t g = 0; g < goals.size(); ++g) {
    const NodeGoal& ng = goals[g];
    const std::string name = "goals[" + std::to_string(g) + "]";
    if (ng.node < 0 || ng.node >= V)
      throw std::invalid_argument(name + ": node " + std::to_string(ng.node) + " is out of range [0, " + std::to_string(V) + ")");
    if (system.pinned()[ng.node]) throw std::invalid_argument(name + ": node " + std::to_string(ng.node) + " is pinned");
    if (seen[ng.node]) throw std::invalid_argument(name + ": node " + std::to_string(ng.node) + " has a goal already");
    seen[ng.node] = 1;
    if (ng.t_c > T)
      throw std::invalid_argument(name + ": t_c must be <= " + std::to_string(T) + " (the pilot's last step), got " +
                                  std::to_string(ng.t_c));
    if (ng.t_c < 1)
      throw std::invalid_argument(name + ": t_c must be >= 1 so that a window of at least 1 step fits, got " +
                                  std::to_string(ng.t_c));
    if (!ng.goal.allFinite()) throw std::domain_error(name + ": goal must be finite");
    const double dist = (ng.goal - state_at(px, ng.t_c).segment<3>(3 * ng.node)).norm();
    const Index Tr = control_window(dist, alpha, ng.t_c);
    w.push_back({ng.node, ng.t_c - Tr, ng.t_c, ng.goal});
  }
  // a window that starts before another ends starts with it (sec. 4, t1 <- t3)
  const std::vector<Index> order = ordered_by_start(w);
  Index group_start = w[order[0]].start, group_end = w[order[0]].end;
  for (Index k : order) {
    if (w[k].start < group_end) {
      w[k].start = group_start;
      group_end = std::max(group_end, w[k].end);
    } else {
      group_start = w[k].start;
      group_end = w[k].end;
    }
  }
  return w;
}

//! Eq. 15-16 per node: R_i = L (q_{i+1} - q_i) of the pilot, as a function of
//! the step. A node that the pilot does not move has no R_i: straight steps to the goal.
struct RadiusVectors {
  std::vector<double> L;                //!< per node, < 0: straight steps
  std::vector<Eigen::Vector3d> straight;
  RadiusVectors(SeqView px, const std::vector<Window>& w, const GoalPathSettings& s) {
    for (const Window& wk : w) {
      const Index j = wk.node;
      const Eigen::Vector3d q0 = state_at(px, wk.start).segment<3>(3 * j), qn = state_at(px, wk.end).segment<3>(3 * j);
      const double num = (q0 - wk.goal).norm(), den = (q0 - qn).norm();
      double l = s.length_ratio == LengthRatio::squared ? s.delta * num * num / (den * den) : s.delta * num / den;
      if (!(den > 1e-12 * (1.0 + num)) || !std::isfinite(l)) l = -1.0;
      L.push_back(l);
      straight.push_back((wk.goal - q0) / static_cast<double>(wk.end - wk.start));
    }
  }
  Eigen::Vector3d operator()(SeqView px, Index k, Index j, Index i) const {
    if (L[k] < 0.0) return straight[k];
    return L[k] * (state_at(px, i + 1).segment<3>(3 * j) - state_at(px, i).segment<3>(3 * j));
  }
};

//! The first pass (eq. 16-19): candidates q*_i + Rot(theta) R_i on a cone
//! (polar angles from -theta to theta, planes through R_i over a half
//! turn), theta widened over the window; the one of least cost wins.
MatrixSeq first_pass(const PointMassSystem& system, SeqView px, SeqView pv, double dt, const std::vector<Window>& w,
                     Index t_start, Index t_end, const GoalPathSettings& s) {
  const RadiusVectors radius(px, w, s);
  const Eigen::VectorXd& m = system.node_masses();
  const std::vector<double> fractions = polar_fractions(s.samples);
  std::vector<double> cos_psi(s.azimuths), sin_psi(s.azimuths), cos_phi(s.samples), sin_phi(s.samples);
  for (Index a = 0; a < s.azimuths; ++a) {
    cos_psi[a] = std::cos(kPi * a / static_cast<double>(s.azimuths));
    sin_psi[a] = std::sin(kPi * a / static_cast<double>(s.azimuths));
  }
  auto control = [&](Index k, Index i, const Eigen::VectorXd& x, const Eigen::Vector3d& base) {
    const Window& wk = w[k];
    const Index j = wk.node;
    const Eigen::Vector3d qi = x.segment<3>(3 * j), R = radius(px, k, j, i);
    const double n_k = static_cast<double>(wk.end - wk.start);
    const double grow =
        s.widen > 0.0 ? std::min(1.0, static_cast<double>(i - wk.start + 1) / std::max(1.0, s.widen * n_k)) : 1.0;
    const double theta = s.seek_angle * grow, r = R.norm();
    Eigen::Vector3d e1 = Eigen::Vector3d::Zero(), e2 = Eigen::Vector3d::Zero(), Rh = Eigen::Vector3d::Zero();
    if (r > 0.0) {
      Rh = R / r;
      Eigen::Index axis;
      Rh.cwiseAbs().minCoeff(&axis);
      e1 = Rh.cross(Eigen::Vector3d::Unit(axis)).normalized();
      e2 = Rh.cross(e1);
    }
    for (Index p = 0; p < s.samples; ++p) {
      cos_phi[p] = std::cos(theta * fractions[p]);
      sin_phi[p] = std::sin(theta * fractions[p]);
    }
    double best = std::numeric_limits<double>::infinity();
    Eigen::Vector3d best_u = Eigen::Vector3d::Zero(), q, u;
    for (Index p = 0; p < s.samples; ++p)
      for (Index a = 0; a < s.azimuths; ++a) {
        q = qi + r * (cos_phi[p] * Rh + sin_phi[p] * (cos_psi[a] * e1 + sin_psi[a] * e2));
        inverse_dynamics(q, base, m[j], dt, s.f_max, u);
        const double J = 0.5 * (s.beta * (q - wk.goal).squaredNorm() + s.gamma * u.squaredNorm());
        if (J < best) {
          best = J;
          best_u = u;
        }
      }
    return best_u;
  };
  return run_windows(system, px, pv, dt, w, t_start, t_end, "path generation", control);
}

//! The arrival fix: each generated path cut at its closest approach, ended
//! on the goal and re-timed by the pilot's steps over the node's window.
//! Returns the targets (NaN outside a node's window); closest: per node.
MatrixSeq arrival_targets(SeqView px, const std::vector<Window>& w, Index t_start, const MatrixSeq& generated,
                          std::vector<Index>& closest) {
  const Index c = static_cast<Index>(w.size()), n1 = generated.rows();
  MatrixSeq targets(c, n1, 3);
  std::fill(targets.data(), targets.data() + c * n1 * 3, std::numeric_limits<double>::quiet_NaN());
  closest.assign(c, 0);
  for (Index k = 0; k < c; ++k) {
    const Index o = w[k].start - t_start, nk = w[k].end - w[k].start;
    double best_d = std::numeric_limits<double>::infinity();
    for (Index i = 0; i <= nk; ++i) {
      const double d = (generated[k].row(o + i).transpose() - w[k].goal).norm();
      if (d < best_d) {
        best_d = d;
        closest[k] = i;
      }
    }
    // Points 0..closest, shifted so that the last lands on the goal: the
    // shift e = q# - q*_c grows with the arc length as a smoothstep, so the
    // path keeps its start, its tangent there and its smoothness (appending
    // q# would add a turn of about 90 degrees at the closest approach).
    RowMatrix cut = generated[k].block(o, 0, closest[k] + 1, 3);
    if (closest[k] == 0) {
      cut.resize(2, 3);
      cut.row(0) = generated[k].row(o);
      cut.row(1) = w[k].goal.transpose();
    } else {
      end_on_goal(cut, w[k].goal);
    }
    RowMatrix ref(nk + 1, 3), out(nk + 1, 3);
    for (Index i = 0; i <= nk; ++i) ref.row(i) = state_at(px, w[k].start + i).segment<3>(3 * w[k].node).transpose();
    retime_path(cut, ref, out);
    targets[k].block(o, 0, nk + 1, 3) = out;
  }
  return targets;
}

}  // namespace

void GoalPathSettings::validate() const {
  check_weight("alpha", alpha);
  check_weight("beta", beta);
  check_weight("gamma", gamma);
  if (!std::isfinite(delta) || !(delta > 0.0)) throw std::invalid_argument("delta must be > 0, got " + std::to_string(delta));
  if (!std::isfinite(seek_angle) || seek_angle < 0.0 || seek_angle > kPi)
    throw std::invalid_argument("seek_angle must lie in [0, 180] degrees, got " + std::to_string(seek_angle * 180.0 / kPi));
  if (samples < 1) throw std::invalid_argument("samples must be >= 1, got " + std::to_string(samples));
  if (azimuths < 1) throw std::invalid_argument("azimuths must be >= 1, got " + std::to_string(azimuths));
  if (!(widen >= 0.0 && widen <= 1.0)) throw std::invalid_argument("widen must lie in [0, 1], got " + std::to_string(widen));
  if (!(f_max > 0.0)) throw std::invalid_argument("f_max must be None or > 0 N, got " + std::to_string(f_max));
  if (!(tolerance >= 0.0)) throw std::invalid_argument("tolerance must be >= 0, got " + std::to_string(tolerance));
}

Index control_window(double distance, double alpha, Index t_c) {
  check_weight("alpha", alpha);
  if (!std::isfinite(distance) || distance < 0.0)
    throw std::invalid_argument("distance must be a finite value >= 0, got " + std::to_string(distance));
  if (t_c < 1) throw std::invalid_argument("t_c must be >= 1 so that a window of at least 1 step fits, got " + std::to_string(t_c));
  const double steps = std::round(alpha * distance * distance);
  return static_cast<Index>(std::clamp(steps, 1.0, static_cast<double>(t_c)));
}

ClothPlan plan_goal_paths(const PointMassSystem& system, SeqView px, SeqView pv, const std::vector<NodeGoal>& goals,
                          double dt, const GoalPathSettings& s) {
  check_pilot(system, px, pv);
  check_positive("dt", dt);
  s.validate();
  const std::vector<Window> w = goal_windows(system, px, goals, s.alpha);
  Index t_start = px.T, t_end = 0;
  for (const Window& wk : w) {
    t_start = std::min(t_start, wk.start);
    t_end = std::max(t_end, wk.end);
  }
  MatrixSeq generated = first_pass(system, px, pv, dt, w, t_start, t_end, s);
  std::vector<Index> closest;
  MatrixSeq targets = arrival_targets(px, w, t_start, generated, closest);
  ClothPlan plan = second_pass(system, px, pv, dt, w, t_start, t_end, targets.view(), s);
  plan.generated = std::move(generated);
  plan.targets = std::move(targets);
  plan.closest_step = closest;
  return plan;
}

ClothPlan follow_paths(const PointMassSystem& system, SeqView px, SeqView pv, double dt, const std::vector<Index>& nodes,
                       const std::vector<Index>& window_start, const std::vector<Index>& window_end, SeqView targets,
                       const GoalPathSettings& s) {
  const Index V = check_pilot(system, px, pv);
  const Index T = px.T - 1;
  check_positive("dt", dt);
  s.validate();
  const Index c = static_cast<Index>(nodes.size());
  if (c == 0) throw std::invalid_argument("nodes must list at least one node");
  if (static_cast<Index>(window_start.size()) != c || static_cast<Index>(window_end.size()) != c)
    throw std::invalid_argument("window_start and window_end must have one entry per node (" + std::to_string(c) + ")");
  Index t_start = T, t_end = 0;
  for (Index k = 0; k < c; ++k) {
    if (nodes[k] < 0 || nodes[k] >= V)
      throw std::invalid_argument("nodes[" + std::to_string(k) + "] = " + std::to_string(nodes[k]) + " is out of range [0, " + std::to_string(V) + ")");
    if (system.pinned()[nodes[k]]) throw std::invalid_argument("nodes[" + std::to_string(k) + "] = " + std::to_string(nodes[k]) + " is pinned");
    if (window_start[k] < 0 || window_end[k] <= window_start[k] || window_end[k] > T)
      throw std::invalid_argument("window of node " + std::to_string(nodes[k]) + " must satisfy 0 <= start < end <= " +
                                  std::to_string(T) + ", got [" + std::to_string(window_start[k]) + ", " + std::to_string(window_end[k]) + "]");
    t_start = std::min(t_start, window_start[k]);
    t_end = std::max(t_end, window_end[k]);
  }
  const Index n = t_end - t_start;
  if (targets.empty() || targets.is_constant() || targets.T != c || targets.rows != n + 1 || targets.cols != 3)
    throw_shape("paths", shape_str(c, n + 1, 3), shape_str(targets.T, targets.rows, targets.cols));
  std::vector<Window> w;
  for (Index k = 0; k < c; ++k) {
    const Index o = window_start[k] - t_start, e = window_end[k] - t_start;
    check_finite("paths[" + std::to_string(k) + "] within the node's window", targets[k].data() + 3 * o, 3 * (e - o + 1));
    w.push_back({nodes[k], window_start[k], window_end[k], targets[k].row(e).transpose()});
  }
  return second_pass(system, px, pv, dt, w, t_start, t_end, targets, s);
}

}  // namespace directable
