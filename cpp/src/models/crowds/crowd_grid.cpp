#include "directable/models/crowds/crowd_grid.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "directable/core/errors.hpp"

namespace directable {

namespace {

std::string num(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::string s = std::to_string(v);
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

void require(bool ok, const std::string& what) {
  if (!ok) throw std::domain_error(what);
}

// x^lam for x in [0, 1]; the common integer exponents without pow.
inline double power(double x, double lam) {
  if (lam == 1.0) return x;
  if (lam == 2.0) return x * x;
  return std::pow(x, lam);
}

template <class Deposit>
inline void splat_one(const CrowdGrid& g, double px, double py, double lam, Deposit deposit) {
  const double ih = 1.0 / g.h();
  const double sx = px * ih - 0.5, sy = py * ih - 0.5;
  const double ax = std::floor(sx), ay = std::floor(sy);
  const double dx = sx - ax, dy = sy - ay;
  const Index i = Index(ax), j = Index(ay);
  const double w[4] = {power(std::min(1.0 - dx, 1.0 - dy), lam), power(std::min(dx, 1.0 - dy), lam),
                       power(std::min(dx, dy), lam), power(std::min(1.0 - dx, dy), lam)};
  const Index ci[4] = {i, i + 1, i + 1, i}, cj[4] = {j, j, j + 1, j + 1};
  for (int k = 0; k < 4; ++k)
    if (ci[k] >= 0 && cj[k] >= 0 && ci[k] < g.nx() && cj[k] < g.ny()) deposit(cj[k] * g.nx() + ci[k], w[k]);
}

}  // namespace

void CrowdParams::validate() const {
  const auto finite = [](double v) { return std::isfinite(v); };
  require(finite(f_max) && f_max > 0.0, "f_max must be finite and > 0, got " + num(f_max));
  require(finite(f_min) && f_min >= 0.0 && f_min <= f_max,
          "f_min must lie in [0, f_max = " + num(f_max) + "], got " + num(f_min));
  require(finite(rho_min) && rho_min >= 0.0, "rho_min must be finite and >= 0, got " + num(rho_min));
  require(!std::isnan(rho_max) && rho_max > rho_min,
          "rho_min must be < rho_max, got rho_min = " + num(rho_min) + ", rho_max = " + num(rho_max));
  require(finite(lam) && lam > 0.0, "lam must be finite and > 0, got " + num(lam));
  require(finite(delta_min) && delta_min >= 0.0, "delta_min must be finite and >= 0, got " + num(delta_min));
  require(finite(alpha) && alpha >= 0.0, "alpha must be finite and >= 0, got " + num(alpha));
  require(finite(beta) && beta >= 0.0, "beta must be finite and >= 0, got " + num(beta));
  require(finite(gamma) && gamma >= 0.0, "gamma must be finite and >= 0, got " + num(gamma));
  require(alpha + beta + gamma > 0.0, "alpha, beta and gamma must not all be zero");
  require(finite(s_min) && finite(s_max) && s_min < s_max,
          "s_min must be < s_max, got s_min = " + num(s_min) + ", s_max = " + num(s_max));
}

CrowdParams CrowdParams::table_4_1(const std::string& name) {
  //                          f_max  rho_min rho_max delta_min lam  alpha  beta   gamma
  auto row = [](double f, double r0, double r1, double d, double l, double a, double b, double c) {
    CrowdParams p;
    p.f_max = f, p.rho_min = r0, p.rho_max = r1, p.delta_min = d, p.lam = l, p.alpha = a, p.beta = b, p.gamma = c;
    return p;
  };
  if (name == "lanes") return row(0.120, 0.001, 0.056, 0.500, 10.000, 0.000, 1.000, 0.000);
  if (name == "vortex") return row(0.113, 0.067, 0.326, 0.500, 3.900, 0.200, 0.600, 0.200);
  if (name == "armies") {
    CrowdParams p = row(0.150, 14.755, 34.491, 0.150, 1.225, 0.023, 0.068, 0.909);
    p.s_min = -0.3, p.s_max = 0.3;
    return p;
  }
  if (name == "quad") return row(0.375, 0.063, 0.316, 0.850, 4.000, 0.000, 0.500, 0.500);
  if (name == "city") return row(0.150, 0.250, 0.563, 0.300, 2.000, 0.164, 0.016, 0.820);
  throw std::domain_error("name must be one of 'lanes', 'vortex', 'armies', 'quad', 'city', got '" + name + "'");
}

bool PeriodicClosure::green(double time) const {
  double t = std::fmod(time + phase, period);
  if (t < 0.0) t += period;
  return t < green_fraction * period;
}

CrowdGrid::CrowdGrid(Index nx, Index ny, double h, const Eigen::Ref<const Eigen::VectorXd>& height,
                     const Eigen::Ref<const Eigen::VectorXd>& discomfort, const std::vector<std::uint8_t>& blocked)
    : mac_(nx, ny, h) {
  const Index n = nx * ny;
  const std::string cells = "(" + std::to_string(ny) + ", " + std::to_string(nx) + ")";
  if (height.size() != 0 && height.size() != n)
    throw_shape("height", cells, "(" + std::to_string(height.size()) + " entries)");
  if (discomfort.size() != 0 && discomfort.size() != n)
    throw_shape("discomfort", cells, "(" + std::to_string(discomfort.size()) + " entries)");
  if (!blocked.empty() && Index(blocked.size()) != n)
    throw_shape("blocked", cells, "(" + std::to_string(blocked.size()) + " entries)");
  height_ = height.size() ? Eigen::VectorXd(height) : Eigen::VectorXd::Zero(n);
  discomfort_ = discomfort.size() ? Eigen::VectorXd(discomfort) : Eigen::VectorXd::Zero(n);
  check_finite("height", height_.data(), n);
  check_finite("discomfort", discomfort_.data(), n);
  for (Index c = 0; c < n; ++c)
    if (discomfort_[c] < 0.0)
      throw std::domain_error("discomfort must be >= 0, got " + num(discomfort_[c]) + " at flat index " +
                              std::to_string(c));
  blocked_ = blocked.empty() ? std::vector<std::uint8_t>(n, 0) : blocked;
  expected_ = Eigen::VectorXd::Ones(n);
}

Index CrowdGrid::cell_of(double x, double y) const {
  if (!(x >= 0.0 && y >= 0.0 && x < mac_.width() && y < mac_.height())) return -1;
  const Index i = std::min(Index(x / h()), nx() - 1), j = std::min(Index(y / h()), ny() - 1);
  return j * nx() + i;
}

void CrowdGrid::add_periodic(const std::vector<std::uint8_t>& mask, double green_fraction, double period,
                             double phase) {
  if (Index(mask.size()) != n_cells())
    throw_shape("mask", "(" + std::to_string(ny()) + ", " + std::to_string(nx()) + ")",
                "(" + std::to_string(mask.size()) + " entries)");
  require(std::isfinite(green_fraction) && green_fraction >= 0.0 && green_fraction <= 1.0,
          "green_fraction must lie in [0, 1], got " + num(green_fraction));
  require(std::isfinite(period) && period > 0.0, "period must be finite and > 0, got " + num(period));
  require(std::isfinite(phase), "phase must be finite, got " + num(phase));
  periodic_.push_back({mask, green_fraction, period, phase});
  for (Index c = 0; c < n_cells(); ++c)
    if (mask[c]) expected_[c] *= green_fraction;
}

void CrowdGrid::red_cells(double time, std::vector<std::uint8_t>& closed) const {
  closed.assign(n_cells(), 0);
  for (const auto& p : periodic_) {
    if (p.green(time)) continue;
    for (Index c = 0; c < n_cells(); ++c) closed[c] |= p.mask[c];
  }
}

void CrowdGrid::check_positions(const std::string& name, const Eigen::Ref<const RowMatrix>& P) const {
  if (P.cols() != 2) throw_shape(name, "(P, 2)", shape_str(P.rows(), P.cols()));
  std::string bad_nan, bad_out, bad_blocked;
  int count = 0;
  auto add = [&count](std::string& list, Index k) {
    if (++count > 20) return;
    list += (list.empty() ? "" : ", ") + std::to_string(k);
  };
  for (Index k = 0; k < P.rows(); ++k) {
    const double x = P(k, 0), y = P(k, 1);
    if (!std::isfinite(x) || !std::isfinite(y)) {
      add(bad_nan, k);
      continue;
    }
    const Index c = cell_of(x, y);
    if (c < 0) add(bad_out, k);
    else if (blocked_[c]) add(bad_blocked, k);
  }
  if (count == 0) return;
  std::string msg = name + " must be finite points inside the domain [0, " + num(mac_.width()) + "] x [0, " +
                    num(mac_.height()) + ") outside blocked cells;";
  if (!bad_nan.empty()) msg += " non-finite at rows [" + bad_nan + "]";
  if (!bad_out.empty()) msg += " outside the domain at rows [" + bad_out + "]";
  if (!bad_blocked.empty()) msg += " in blocked cells at rows [" + bad_blocked + "]";
  if (count > 20) msg += " (" + std::to_string(count) + " rows in all)";
  throw std::domain_error(msg);
}

void CrowdGrid::check_goal(const std::string& name, const std::vector<std::uint8_t>& mask) const {
  if (Index(mask.size()) != n_cells())
    throw_shape(name, "(" + std::to_string(ny()) + ", " + std::to_string(nx()) + ")",
                "(" + std::to_string(mask.size()) + " entries)");
  bool any = false, free = false;
  for (Index c = 0; c < n_cells(); ++c)
    if (mask[c]) {
      any = true;
      if (!blocked_[c]) free = true;
    }
  if (!any) throw std::domain_error(name + " must contain at least one goal cell, got an empty mask");
  if (!free) throw std::domain_error(name + " must contain at least one unblocked cell, got a fully blocked goal");
}

void check_field_finite(const std::string& name, const double* data, Index size) { check_finite(name, data, size); }

void splat(const CrowdGrid& grid, const Eigen::Ref<const RowMatrix>& positions,
           const Eigen::Ref<const RowMatrix>& velocities, const std::vector<std::uint8_t>& active, double lam,
           Eigen::Ref<Eigen::VectorXd> rho, Eigen::Ref<RowMatrix> ubar) {
  require(std::isfinite(lam) && lam > 0.0, "lam must be finite and > 0, got " + num(lam));
  rho.setZero();
  ubar.setZero();
  for (Index k = 0; k < positions.rows(); ++k) {
    if (!active.empty() && !active[k]) continue;
    const double vx = velocities(k, 0), vy = velocities(k, 1);
    splat_one(grid, positions(k, 0), positions(k, 1), lam, [&](Index c, double w) {
      rho[c] += w;
      ubar(c, 0) += w * vx;
      ubar(c, 1) += w * vy;
    });
  }
  for (Index c = 0; c < grid.n_cells(); ++c)
    if (rho[c] > 0.0) ubar(c, 0) /= rho[c], ubar(c, 1) /= rho[c];
}

void splat_density_add(const CrowdGrid& grid, const Eigen::Ref<const RowMatrix>& positions, double lam, double scale,
                       Eigen::Ref<Eigen::VectorXd> field) {
  for (Index k = 0; k < positions.rows(); ++k)
    splat_one(grid, positions(k, 0), positions(k, 1), lam, [&](Index c, double w) { field[c] += scale * w; });
}

void speed_field(const CrowdGrid& grid, const CrowdParams& p, const Eigen::Ref<const Eigen::VectorXd>& rho,
                 const Eigen::Ref<const RowMatrix>& ubar, const std::vector<std::uint8_t>& closed,
                 const Eigen::Ref<const Eigen::VectorXd>& factor, Eigen::Ref<RowMatrix> speed) {
  const Index nx = grid.nx(), ny = grid.ny();
  const double ih = 1.0 / grid.h(), slope_span = p.s_max - p.s_min, drho = p.rho_max - p.rho_min;
  const double* H = grid.height().data();
  const std::uint8_t* blocked = grid.blocked().data();
  const std::uint8_t* shut = closed.empty() ? nullptr : closed.data();
  const double* fac = factor.size() != 0 ? factor.data() : nullptr;
  const double* u = ubar.data();  // (n x 2) row-major
  const Index step[4] = {1, nx, -1, -nx};
  for (Index j = 0; j < ny; ++j)
    for (Index i = 0; i < nx; ++i) {
      const Index M = j * nx + i;
      const bool inside[4] = {i + 1 < nx, j + 1 < ny, i > 0, j > 0};
      for (int d = 0; d < 4; ++d) {
        const Index N = M + step[d];
        if (!inside[d] || blocked[M] || blocked[N] || (shut && shut[N])) {
          speed(d, M) = 0.0;
          continue;
        }
        const double s = std::clamp((H[N] - H[M]) * ih, p.s_min, p.s_max);
        const double fT = p.f_max + (s - p.s_min) / slope_span * (p.f_min - p.f_max);
        const double fu = std::max(0.0, u[2 * N] * kDirDi[d] + u[2 * N + 1] * kDirDj[d]);
        const double w = std::clamp((rho[N] - p.rho_min) / drho, 0.0, 1.0);
        const double f = fT + w * (fu - fT);
        speed(d, M) = fac ? f * fac[N] : f;
      }
    }
}

void unit_cost(const CrowdGrid& grid, const CrowdParams& p, const Eigen::Ref<const RowMatrix>& speed,
               const Eigen::Ref<const Eigen::VectorXd>& g, Eigen::Ref<RowMatrix> cost) {
  const Index nx = grid.nx(), ny = grid.ny();
  const double inf = std::numeric_limits<double>::infinity();
  for (Index j = 0; j < ny; ++j)
    for (Index i = 0; i < nx; ++i) {
      const Index M = j * nx + i;
      for (int d = 0; d < 4; ++d) {
        const double f = speed(d, M);
        if (!(f > 0.0)) {
          cost(d, M) = inf;
          continue;
        }
        const Index N = grid.neighbour(i, j, d);
        cost(d, M) = (p.alpha * f + p.beta + p.gamma * g[N]) / f;
      }
    }
}

}  // namespace directable
