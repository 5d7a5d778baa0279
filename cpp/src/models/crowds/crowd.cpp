#include "directable/models/crowds/crowd.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "directable/core/clock.hpp"
#include "directable/core/errors.hpp"
#include "directable/core/parallel.hpp"

namespace directable {

namespace {

// phi of a cell no front reaches (its own name: the hot unity batch compiles this file with eikonal.cpp)
constexpr double kUnreachable = std::numeric_limits<double>::infinity();

// Calls visit(c) for every cell whose centre lies within r of (x, y).
template <class Visit>
void cells_within(const CrowdGrid& g, double x, double y, double r, Visit visit) {
  const double h = g.h();
  const Index i0 = std::max<Index>(0, Index(std::floor((x - r) / h - 0.5)));
  const Index i1 = std::min<Index>(g.nx() - 1, Index(std::ceil((x + r) / h - 0.5)));
  const Index j0 = std::max<Index>(0, Index(std::floor((y - r) / h - 0.5)));
  const Index j1 = std::min<Index>(g.ny() - 1, Index(std::ceil((y + r) / h - 0.5)));
  for (Index j = j0; j <= j1; ++j)
    for (Index i = i0; i <= i1; ++i) {
      const double cx = (double(i) + 0.5) * h - x, cy = (double(j) + 0.5) * h - y;
      if (cx * cx + cy * cy <= r * r) visit(j * g.nx() + i);
    }
}

// Agents: closed discs, discomfort and extra speed ahead.
void apply_agents(const CrowdModel& model, CrowdData& d) {
  const CrowdGrid& g = model.grid();
  d.extra_speed.setZero();
  std::fill(d.closed_plan.begin(), d.closed_plan.end(), 0);
  for (const CrowdAgent& a : model.agents()) {
    const Index T = a.path.rows();
    const Index now = d.step % T;
    cells_within(g, a.path(now, 0), a.path(now, 1), a.radius, [&](Index c) { d.closed_plan[c] = 1; });
    if (a.lookahead <= 0) continue;
    std::fill(d.agent_cells.begin(), d.agent_cells.end(), 0);
    for (Index q = 1; q <= a.lookahead; ++q) {
      const Index k = (d.step + q) % T;
      cells_within(g, a.path(k, 0), a.path(k, 1), a.radius, [&](Index c) { d.agent_cells[c] = 1; });
    }
    for (Index c = 0; c < g.n_cells(); ++c)
      if (d.agent_cells[c]) d.discomfort[c] += a.discomfort_ahead, d.extra_speed[c] += a.speed_ahead;
  }
}

void add_extra_speed(const CrowdData& d, Eigen::Ref<RowMatrix> speed) {
  for (Index c = 0; c < speed.cols(); ++c)
    if (d.extra_speed[c] != 0.0)
      for (int k = 0; k < 4; ++k)
        if (speed(k, c) > 0.0) speed(k, c) += d.extra_speed[c];
}

// gd.reachable: a breadth-first search back from the goal over the moves
// that are open whatever the density: not into or out of walls or off the
// grid (the topographical speed's sentinel), not into a cell closed for
// planning, not into a cell whose expected-speed factor is 0.
void find_reachable(const CrowdModel& model, const CrowdData& d, Index gi, bool expected, CrowdGroupData& gd) {
  const CrowdGrid& g = model.grid();
  const Index nx = g.nx(), n = g.n_cells();
  const RowMatrix& fT = model.topographic(gi);
  const double* factor = g.expected_factor().data();
  std::fill(gd.reachable.begin(), gd.reachable.end(), 0);
  Index head = 0, tail = 0;
  for (Index c = 0; c < n; ++c)
    if (gd.goal[c] && !g.is_blocked(c)) gd.reachable[c] = 1, gd.queue[tail++] = c;
  while (head < tail) {
    const Index N = gd.queue[head++];
    if (d.closed_plan[N] || (expected && !(factor[N] > 0.0))) continue;  // nobody enters it
    const Index i = N % nx, j = N / nx;
    for (int dir = 0; dir < 4; ++dir) {
      const Index M = g.neighbour(i, j, (dir + 2) % 4);  // the move M -> N goes in direction dir
      if (M < 0 || gd.reachable[M] || !(fT(dir, M) >= 0.0)) continue;
      gd.reachable[M] = 1;
      gd.queue[tail++] = M;
    }
  }
}

bool walking_or_standing(const CrowdModel& m, const CrowdData& d, Index k) {
  return d.active[k] || (d.arrived[k] && !m.options().remove_on_arrival);
}

}  // namespace

void CrowdAgent::validate(const std::string& name) const {
  if (path.rows() < 1 || path.cols() != 2) throw_shape(name + ".path", "(T, 2) with T >= 1", shape_str(path.rows(), path.cols()));
  check_finite(name + ".path", path.data(), path.size());
  if (!(radius >= 0.0) || !std::isfinite(radius))
    throw std::domain_error(name + ".radius must be finite and >= 0, got " + std::to_string(radius));
  if (!std::isfinite(discomfort_ahead) || discomfort_ahead < 0.0)
    throw std::domain_error(name + ".discomfort_ahead must be finite and >= 0, got " + std::to_string(discomfort_ahead));
  if (!std::isfinite(speed_ahead) || speed_ahead < 0.0)
    throw std::domain_error(name + ".speed_ahead must be finite and >= 0, got " + std::to_string(speed_ahead));
  if (lookahead < 0) throw std::domain_error(name + ".lookahead must be >= 0, got " + std::to_string(lookahead));
}

CrowdModel::CrowdModel(std::shared_ptr<const CrowdGrid> grid, std::vector<CrowdGroupSpec> groups, CrowdOptions options,
                       std::vector<CrowdAgent> agents)
    : grid_(std::move(grid)), groups_(std::move(groups)), options_(options), agents_(std::move(agents)) {
  if (!grid_) throw std::invalid_argument("grid must be a CrowdGrid, got None");
  if (groups_.empty()) throw std::invalid_argument("groups must hold at least one group, got none");
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    groups_[g].params.validate();
    grid_->check_goal("groups[" + std::to_string(g) + "].goal", groups_[g].goal);
  }
  if (options_.predictive_steps < 0)
    throw std::domain_error("predictive_steps must be >= 0, got " + std::to_string(options_.predictive_steps));
  if (!(options_.predictive_scale >= 0.0) || !std::isfinite(options_.predictive_scale))
    throw std::domain_error("predictive_scale must be finite and >= 0, got " + std::to_string(options_.predictive_scale));
  if (!(options_.predictive_lambda > 0.0) || !std::isfinite(options_.predictive_lambda))
    throw std::domain_error("predictive_lambda must be finite and > 0, got " + std::to_string(options_.predictive_lambda));
  if (!(options_.lam > 0.0) || !std::isfinite(options_.lam))
    throw std::domain_error("lam must be finite and > 0, got " + std::to_string(options_.lam));
  if (!(options_.delta_min >= 0.0) || !std::isfinite(options_.delta_min))
    throw std::domain_error("delta_min must be finite and >= 0, got " + std::to_string(options_.delta_min));
  if (options_.min_distance_iterations < 0)
    throw std::domain_error("min_distance_iterations must be >= 0, got " +
                            std::to_string(options_.min_distance_iterations));
  for (std::size_t a = 0; a < agents_.size(); ++a) {
    agents_[a].validate("agents[" + std::to_string(a) + "]");
    speed_ahead_ += agents_[a].speed_ahead;
  }
  for (const CrowdGroupSpec& spec : groups_) {
    topographic_.emplace_back(4, grid_->n_cells());
    topographic_speed(*grid_, spec.params, topographic_.back());
  }
}

double CrowdModel::speed_cap(Index g) const { return groups_[g].params.f_max + speed_ahead_; }

double CrowdModel::cfl(double dt) const {
  double c = 0.0;
  for (Index g = 0; g < n_groups(); ++g) c = std::max(c, speed_cap(g) * dt / grid_->h());
  return c;
}

CrowdData create_crowd_data(const CrowdModel& model, const Eigen::Ref<const RowMatrix>& positions,
                            const std::vector<int>& group_of) {
  const CrowdGrid& g = model.grid();
  g.check_positions("positions", positions);
  const Index P = positions.rows(), n = g.n_cells();
  if (Index(group_of.size()) != P)
    throw_shape("group_of", "(" + std::to_string(P) + ",)", "(" + std::to_string(group_of.size()) + ",)");
  for (Index k = 0; k < P; ++k)
    if (group_of[k] < 0 || group_of[k] >= model.n_groups())
      throw std::domain_error("group_of must lie in [0, " + std::to_string(model.n_groups()) + "), got " +
                              std::to_string(group_of[k]) + " at index " + std::to_string(k));
  CrowdData d;
  d.positions = positions;
  d.velocities = RowMatrix::Zero(P, 2);
  d.intended = RowMatrix::Zero(P, 2);
  d.group_of = group_of;
  d.active.assign(P, 1), d.arrived.assign(P, 0), d.stuck.assign(P, 0), d.participates.assign(P, 0);
  d.rho.setZero(n), d.discomfort.setZero(n), d.extra_speed.setZero(n);
  d.ubar = RowMatrix::Zero(n, 2);
  d.closed_plan.assign(n, 0), d.closed_move.assign(n, 0), d.red.assign(n, 0), d.agent_cells.assign(n, 0);
  d.predicted = RowMatrix::Zero(P, 2);
  d.predictive = Eigen::MatrixXd::Zero(n, model.options().predictive_steps > 0 ? model.n_groups() : 0);
  d.predictive_total = Eigen::VectorXd::Zero(n);
  d.groups.resize(model.n_groups());
  for (Index gi = 0; gi < model.n_groups(); ++gi) {
    CrowdGroupData& gd = d.groups[gi];
    gd.goal = model.group(gi).goal;
    gd.speed = RowMatrix::Zero(4, n), gd.cost = RowMatrix::Zero(4, n);
    if (!g.periodic().empty()) gd.speed_actual = RowMatrix::Zero(4, n);
    gd.phi = Eigen::VectorXd::Constant(n, kUnreachable);
    gd.velocity = Eigen::VectorXd::Zero(g.mac().n_faces());
    gd.face_stamp.assign(g.mac().n_faces(), 0u);
    gd.discomfort = Eigen::VectorXd::Zero(n);
    gd.eikonal.resize(g.nx(), g.ny(), EikonalHeap::kIndexed);
    gd.reachable.assign(n, 0);
    gd.queue.assign(n, 0);
  }
  return d;
}

namespace {
void check_group(const CrowdModel& model, Index g) {
  if (g < 0 || g >= model.n_groups())
    throw std::domain_error("group must lie in [0, " + std::to_string(model.n_groups()) + "), got " + std::to_string(g));
}
}  // namespace

const CrowdGroupData& group_data(const CrowdModel& model, const CrowdData& data, Index g) {
  check_group(model, g);
  return data.groups[g];
}

void occupied_cells(const CrowdModel& model, const CrowdData& data, Index g, std::vector<std::uint8_t>& out) {
  check_group(model, g);
  const CrowdGrid& grid = model.grid();
  out.assign(grid.n_cells(), 0);
  for (Index k = 0; k < data.positions.rows(); ++k)
    if (data.active[k] && data.group_of[k] == g) out[grid.cell_of(data.positions(k, 0), data.positions(k, 1))] = 1;
}

void set_group_goal(const CrowdModel& model, CrowdData& data, Index g, const std::vector<std::uint8_t>& goal) {
  check_group(model, g);
  model.grid().check_goal("goal", goal);
  data.groups[g].goal = goal;
}

namespace {

void fields(const CrowdModel& model, CrowdData& d, int threads, bool only_walking) {
  const CrowdGrid& g = model.grid();
  const CrowdOptions& o = model.options();
  const Index P = d.positions.rows();
  const double t_start = now_seconds();
  // 1. one density for everyone who is on the ground
  for (Index k = 0; k < P; ++k) d.participates[k] = walking_or_standing(model, d, k);
  splat(g, d.positions, d.velocities, d.participates, o.lam, d.rho, d.ubar);
  // 2. discomfort: static, predictive, agents; closures
  d.discomfort = g.discomfort();
  // Each group's predicted splats, kept apart: a group plans around the
  // other groups' predicted paths, not around its own (which lie on its way).
  const bool predictive = o.predictive_steps > 0 && o.predictive_scale > 0.0;
  if (predictive) {
    d.predictive.setZero();
    for (Index gi = 0; gi < model.n_groups(); ++gi) {
      for (Index q = 1; q <= o.predictive_steps; ++q) {
        Index m = 0;
        for (Index k = 0; k < P; ++k)
          if (d.active[k] && d.group_of[k] == gi) {
            d.predicted(m, 0) = d.positions(k, 0) + double(q) * d.dt * d.intended(k, 0);
            d.predicted(m, 1) = d.positions(k, 1) + double(q) * d.dt * d.intended(k, 1);
            ++m;
          }
        splat_density_add(g, d.predicted.topRows(m), o.predictive_lambda, o.predictive_scale,
                          d.predictive.col(gi));
      }
    }
    d.predictive_total = d.predictive.rowwise().sum();
  }
  apply_agents(model, d);
  g.red_cells(d.time, d.red);
  for (Index c = 0; c < g.n_cells(); ++c) d.closed_move[c] = d.closed_plan[c] | d.red[c];
  const bool periodic = !g.periodic().empty(), expected = periodic && o.expected_periodic;
  const bool agents = !model.agents().empty();
  if (periodic && !o.expected_periodic) d.closed_plan = d.closed_move;
  for (auto& gd : d.groups) {
    gd.any_walking = false;
    gd.seconds_speed_cost = gd.seconds_potential = gd.seconds_velocity = 0.0;
  }
  for (Index k = 0; k < P; ++k)
    if (d.active[k]) d.groups[d.group_of[k]].any_walking = true;
  // 3. per group, independent: on separate threads
  const Eigen::VectorXd none;
  auto group_fields = [&](Index gi, int&) {
    CrowdGroupData& gd = d.groups[gi];
    if (only_walking && !gd.any_walking) return;
    const CrowdParams& p = model.group(gi).params;
    const double t0 = now_seconds();
    const RowMatrix& fT = model.topographic(gi);
    flow_speed(g, p, fT, d.rho, d.ubar, d.closed_plan, expected ? g.expected_factor() : none, gd.speed);
    if (agents) add_extra_speed(d, gd.speed);
    gd.discomfort = d.discomfort;
    if (predictive) gd.discomfort += d.predictive_total - d.predictive.col(gi);
    unit_cost_unchecked(g, p, gd.speed, gd.discomfort, gd.cost);
    if (periodic) {
      flow_speed(g, p, fT, d.rho, d.ubar, d.closed_move, none, gd.speed_actual);
      if (agents) add_extra_speed(d, gd.speed_actual);
    }
    const double t1 = now_seconds();
    eikonal_unchecked(g.nx(), g.ny(), g.h(), gd.cost, gd.goal, g.blocked(), gd.eikonal, gd.phi, EikonalHeap::kIndexed);
    const double t2 = now_seconds();
    if (only_walking) {  // a step reads only the faces around the group's people
      if (++gd.stamp == 0) std::fill(gd.face_stamp.begin(), gd.face_stamp.end(), 0u), gd.stamp = 1;
      for (Index k = 0; k < P; ++k)
        if (d.active[k] && d.group_of[k] == gi)
          velocity_faces_at(g, gd.phi, gd.cost, gd.actual_speed(), d.positions(k, 0), d.positions(k, 1),
                            gd.face_stamp, gd.stamp, gd.velocity);
    } else {
      velocity_field_unchecked(g, gd.phi, gd.cost, gd.actual_speed(), gd.velocity);
    }
    gd.seconds_speed_cost = t1 - t0, gd.seconds_potential = t2 - t1, gd.seconds_velocity = now_seconds() - t2;
  };
  d.stage_seconds[0] = now_seconds() - t_start;
  const Index groups = model.n_groups();
  if (threads > 0 || groups == 1) {
    parallel_steps(groups, groups == 1 ? 1 : threads, nullptr, groups, [] { return 0; }, group_fields);
  } else {
    const int team = d.team.begin();
    const double t0 = now_seconds();
    parallel_steps(groups, team, nullptr, groups, [] { return 0; }, group_fields);
    d.team.end(now_seconds() - t0);
  }
  d.stage_seconds[1] = d.stage_seconds[2] = d.stage_seconds[3] = 0.0;
  for (const auto& gd : d.groups) {
    d.stage_seconds[1] += gd.seconds_speed_cost;
    d.stage_seconds[2] += gd.seconds_potential;
    d.stage_seconds[3] += gd.seconds_velocity;
  }
}

}  // namespace

void crowd_fields(const CrowdModel& model, CrowdData& data, int threads) { fields(model, data, threads, false); }

void crowd_step(const CrowdModel& model, CrowdData& d, double dt, int threads) {
  if (!(dt > 0.0) || !std::isfinite(dt)) throw std::domain_error("dt must be finite and > 0, got " + std::to_string(dt));
  const CrowdGrid& g = model.grid();
  const Index P = d.positions.rows();
  d.dt = dt;
  fields(model, d, threads, true);
  const double t_motion = now_seconds();
  // 4. Euler update
  const bool expected = !g.periodic().empty() && model.options().expected_periodic;
  for (Index k = 0; k < P; ++k) {
    if (!d.active[k]) continue;
    const Index gi = d.group_of[k];
    CrowdGroupData& gd = d.groups[gi];
    const double x0 = d.positions(k, 0), y0 = d.positions(k, 1);
    const Index c = g.cell_of(x0, y0);
    if (!(gd.phi[c] < kUnreachable)) {  // walled in, or behind a jam at rest: stands still
      if (gd.reachable_step != d.step) {
        find_reachable(model, d, gi, expected, gd);
        gd.reachable_step = d.step;
      }
      if (!gd.reachable[c]) d.stuck[k] = 1;
      d.velocities(k, 0) = d.velocities(k, 1) = 0.0;
      d.intended(k, 0) = d.intended(k, 1) = 0.0;
      continue;
    }
    Eigen::Vector2d v = g.mac().velocity_at(gd.velocity, x0, y0);
    const double cap = model.speed_cap(d.group_of[k]), norm = v.norm();
    if (norm > cap) v *= cap / norm;
    d.intended(k, 0) = v[0], d.intended(k, 1) = v[1];
    double x = x0 + dt * v[0], y = y0 + dt * v[1];
    constrain_move(g, d.closed_move, x0, y0, x, y);
    d.positions(k, 0) = x, d.positions(k, 1) = y;
    d.velocities(k, 0) = (x - x0) / dt, d.velocities(k, 1) = (y - y0) / dt;
  }
  // 5. minimum distance (walking people move; standing ones are obstacles)
  for (Index k = 0; k < P; ++k) d.participates[k] = walking_or_standing(model, d, k);
  enforce_min_distance(d.positions, d.participates, d.active, model.options().delta_min, model.options().min_distance_iterations,
                       &g, d.closed_move, d.min_distance);
  // 6. arrival
  for (Index k = 0; k < P; ++k) {
    if (!d.active[k]) continue;
    const Index c = g.cell_of(d.positions(k, 0), d.positions(k, 1));
    if (d.groups[d.group_of[k]].goal[c]) {
      d.active[k] = 0, d.arrived[k] = 1;
      d.velocities(k, 0) = d.velocities(k, 1) = 0.0;
      d.intended(k, 0) = d.intended(k, 1) = 0.0;
    }
  }
  d.stage_seconds[3] += now_seconds() - t_motion;
  ++d.step;
  d.time += dt;
}

CrowdRun crowd_run(const CrowdModel& model, CrowdData& d, Index steps, double dt, int threads,
                   const CrowdBeforeStep& before_step, const ProgressFn* progress) {
  if (steps < 0) throw std::domain_error("steps must be >= 0, got " + std::to_string(steps));
  if (!(dt > 0.0) || !std::isfinite(dt)) throw std::domain_error("dt must be finite and > 0, got " + std::to_string(dt));
  CrowdRun run;
  run.T = steps, run.P = d.positions.rows();
  const Index P = run.P;
  run.positions.resize(std::size_t((steps + 1) * P * 2));
  run.active.resize(std::size_t((steps + 1) * P));
  run.step_times.setZero(steps);
  run.stage_times.setZero(steps, 4);
  auto record = [&](Index t) {
    std::copy(d.positions.data(), d.positions.data() + 2 * P, run.positions.begin() + t * P * 2);
    std::copy(d.active.begin(), d.active.end(), run.active.begin() + t * P);
  };
  record(0);
  ProgressThrottle throttle(progress, steps);
  for (Index t = 0; t < steps; ++t) {
    if (before_step) before_step(d.step);
    const double t0 = now_seconds();
    crowd_step(model, d, dt, threads);
    run.step_times[t] = now_seconds() - t0;
    run.stage_times.row(t) = d.stage_seconds.transpose();
    record(t + 1);
    if (!throttle.report(t + 1)) throw Cancelled();
  }
  throttle.finish(steps);
  for (Index k = 0; k < P; ++k)
    if (d.stuck[k]) run.stuck.push_back(k);
  return run;
}

}  // namespace directable
