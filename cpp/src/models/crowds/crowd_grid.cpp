#include "directable/models/crowds/crowd_grid.hpp"

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>

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

void check_cells(const std::string& name, Index size, const CrowdGrid& g) {
  if (size != g.n_cells())
    throw_shape(name, "(" + std::to_string(g.ny()) + ", " + std::to_string(g.nx()) + ")",
                "(" + std::to_string(size) + " entries)");
}
void check_moves(const std::string& name, Index rows, Index cols, const CrowdGrid& g) {
  if (rows != 4 || cols != g.n_cells())
    throw_shape(name, "(4, " + std::to_string(g.ny()) + ", " + std::to_string(g.nx()) + ")",
                "(" + std::to_string(rows) + ", " + std::to_string(cols) + " cells)");
}

// An output written while an input is read must not share memory with it
// (a NumPy out= array may be a view of an input).
void check_apart(const std::string& out_name, const double* out, Index out_size, const std::string& in_name,
                 const double* in, Index in_size) {
  const auto o = reinterpret_cast<std::uintptr_t>(out), i = reinterpret_cast<std::uintptr_t>(in);
  if (out_size > 0 && in_size > 0 && o < i + sizeof(double) * in_size && i < o + sizeof(double) * out_size)
    throw std::invalid_argument(out_name + " must not share memory with " + in_name + ", got overlapping arrays");
}

// Entries spanned by a row-major view with an outer stride.
template <class M>
Index extent(const M& m) {
  return m.rows() == 0 ? 0 : (m.rows() - 1) * m.outerStride() + m.cols();
}

constexpr double kClosedMove = -1e300;  // topographic_speed's sentinel (see flow_value)

// f = f_T + w (f_u - f_T), with selects of computed values only, so that
// the loops below vectorise. A closed move carries f_T = kClosedMove: then
// f <= -1e300 + w (f_u + 1e300) <= 0 for any w in [0, 1] and any speed f_u
// below 1e280, and the final select makes it 0.
inline double flow_value(double f_T, double rho_N, double u_N, double sign, double rho_min, double inv,
                         double floor) {
  const double x = (rho_N - rho_min) * inv;
  const double w0 = x > 0.0 ? x : 0.0;
  const double w = w0 < 1.0 ? w0 : 1.0;
  const double su = sign * u_N, lowest = floor * f_T;  // lowest: 0, f_T's share, or below -1e299 when closed
  const double low = lowest > 0.0 ? lowest : 0.0;
  const double f_u = su > low ? su : low;
  const double f = f_T + w * (f_u - f_T);
  return f > 0.0 ? f : 0.0;
}

// Over `count` moves: t and out start at the first move M, rho_N and u_N at
// its neighbour N (u_N: one component of ubar, stride 2).
void flow_kernel(const double* __restrict t, const double* __restrict rho_N, const double* __restrict u_N,
                 double sign, double rho_min, double inv, double floor, double* __restrict out, Index count) {
  for (Index k = 0; k < count; ++k) out[k] = flow_value(t[k], rho_N[k], u_N[2 * k], sign, rho_min, inv, floor);
}
// The same, overwriting f_T with f.
void flow_kernel_in_place(double* __restrict io, const double* __restrict rho_N, const double* __restrict u_N,
                          double sign, double rho_min, double inv, double floor, Index count) {
  for (Index k = 0; k < count; ++k) io[k] = flow_value(io[k], rho_N[k], u_N[2 * k], sign, rho_min, inv, floor);
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
  require(finite(flow_floor) && flow_floor >= 0.0 && flow_floor <= 1.0,
          "flow_floor must lie in [0, 1], got " + num(flow_floor));
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
  blocked_.assign(n, 0);
  if (!blocked.empty())
    for (Index c = 0; c < n; ++c) blocked_[c] = blocked[c] ? 1 : 0;
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

void splat(const CrowdGrid& grid, const Eigen::Ref<const RowMatrix>& positions,
           const Eigen::Ref<const RowMatrix>& velocities, const std::vector<std::uint8_t>& active, double lam,
           Eigen::Ref<Eigen::VectorXd> rho, Eigen::Ref<RowMatrix> ubar) {
  require(std::isfinite(lam) && lam > 0.0, "lam must be finite and > 0, got " + num(lam));
  const Index n = grid.n_cells();
  check_cells("rho", rho.size(), grid);
  if (ubar.rows() != n || ubar.cols() != 2 || ubar.outerStride() != 2)
    throw_shape("ubar", "contiguous (" + std::to_string(grid.ny()) + ", " + std::to_string(grid.nx()) + ", 2)",
                "(" + std::to_string(ubar.rows()) + " cells, " + std::to_string(ubar.cols()) + ")");
  if (velocities.rows() != positions.rows() || velocities.cols() != 2)
    throw_shape("velocities", "(" + std::to_string(positions.rows()) + ", 2)", shape_str(velocities.rows(), velocities.cols()));
  if (!active.empty() && Index(active.size()) != positions.rows())
    throw_shape("active", "(" + std::to_string(positions.rows()) + ",)", "(" + std::to_string(active.size()) + ",)");
  check_apart("rho", rho.data(), rho.size(), "ubar", ubar.data(), extent(ubar));
  using Input = std::tuple<const char*, const double*, Index>;
  for (const auto& [name, in, size] : {Input{"positions", positions.data(), extent(positions)},
                                       Input{"velocities", velocities.data(), extent(velocities)}}) {
    check_apart("rho", rho.data(), rho.size(), name, in, size);
    check_apart("ubar", ubar.data(), extent(ubar), name, in, size);
  }
  double* R = rho.data();
  double* U = ubar.data();  // (n x 2) row-major, contiguous
  std::fill(R, R + n, 0.0);
  std::fill(U, U + 2 * n, 0.0);
  const bool all = active.empty();
  for (Index k = 0; k < positions.rows(); ++k) {
    if (!all && !active[k]) continue;
    const double vx = velocities(k, 0), vy = velocities(k, 1);
    splat_one(grid, positions(k, 0), positions(k, 1), lam, [R, U, vx, vy](Index c, double w) {
      R[c] += w;
      U[2 * c] += w * vx;
      U[2 * c + 1] += w * vy;
    });
  }
  // mean velocity: momentum / rho where rho > 0 (branch-free, vectorises)
  for (Index c = 0; c < n; ++c) {
    // momentum is 0 where rho is, so dividing by 1 leaves it 0 there
    const double r = R[c] > 0.0 ? R[c] : 1.0;
    U[2 * c] /= r;
    U[2 * c + 1] /= r;
  }
}

void splat_density_add(const CrowdGrid& grid, const Eigen::Ref<const RowMatrix>& positions, double lam, double scale,
                       Eigen::Ref<Eigen::VectorXd> field) {
  for (Index k = 0; k < positions.rows(); ++k)
    splat_one(grid, positions(k, 0), positions(k, 1), lam, [&](Index c, double w) { field[c] += scale * w; });
}

namespace {


// Offset of the neighbour in direction d, and the range [lo, hi) of flat
// cells M for which M + offset is a valid index (row wrap-arounds inside it
// carry the sentinel or are handled by the caller).
struct DirectionRange {
  Index offset, lo, hi;
};
inline DirectionRange direction_range(Index nx, Index n, int d) {
  switch (d) {
    case kEast: return {1, 0, n - 1};
    case kNorth: return {nx, 0, n - nx};
    case kWest: return {-1, 1, n};
    default: return {-nx, nx, n};
  }
}

// Topographic speed (eq. 4.8-4.9) over `count` moves: H_M, blocked_M at the
// first move's cell M, H_N, blocked_N at its neighbour N; kClosedMove where
// either cell is blocked. Two passes, each a loop GCC vectorises, and not
// inlined: with the byte mask and the clamp in one loop, or inlined into the
// loop over directions (or, in cost_kernel, a division beside a select), GCC
// keeps a branch under trapping-math and the loop stays scalar (speed_field
// took 3.4 ns per move).
__attribute__((noinline)) void topographic_kernel(const double* __restrict H_M, const double* __restrict H_N,
                                                  const std::uint8_t* __restrict blocked_M,
                                                  const std::uint8_t* __restrict blocked_N, double ih, double f_max,
                                                  double s_min, double s_max, double scale, double* __restrict out,
                                                  Index count) {
  for (Index k = 0; k < count; ++k) {
    const double x = (H_N[k] - H_M[k]) * ih;
    const double above = x > s_min ? x : s_min;
    const double s = above < s_max ? above : s_max;
    out[k] = f_max + (s - s_min) * scale;
  }
  for (Index k = 0; k < count; ++k)
    if (blocked_M[k] | blocked_N[k]) out[k] = kClosedMove;
}

// Unit cost (eq. 4.4) over `count` moves: f at the first move's cell, g at
// its neighbour; +inf where f <= 0 (second pass: the first divides by every
// f, 0 included).
void cost_kernel(const double* __restrict f, const double* __restrict g_N, double alpha, double beta, double gamma,
                 double* __restrict out, Index count) {
  const double inf = std::numeric_limits<double>::infinity();
  for (Index k = 0; k < count; ++k) out[k] = (alpha * f[k] + beta + gamma * g_N[k]) / f[k];
  for (Index k = 0; k < count; ++k) out[k] = f[k] > 0.0 ? out[k] : inf;
}

}  // namespace

void topographic_speed(const CrowdGrid& grid, const CrowdParams& p, Eigen::Ref<RowMatrix> fT) {
  const Index nx = grid.nx(), ny = grid.ny(), n = grid.n_cells();
  const double ih = 1.0 / grid.h(), scale = (p.f_min - p.f_max) / (p.s_max - p.s_min);
  const double f_max = p.f_max, s_min = p.s_min, s_max = p.s_max;
  const double* H = grid.height().data();
  const std::uint8_t* blocked = grid.blocked().data();
  for (int d = 0; d < 4; ++d) {
    const DirectionRange r = direction_range(nx, n, d);
    double* out = fT.data() + d * fT.outerStride();
    const Index off = r.offset;
    for (Index M = 0; M < r.lo; ++M) out[M] = kClosedMove;
    topographic_kernel(H + r.lo, H + r.lo + off, blocked + r.lo, blocked + r.lo + off, ih, f_max, s_min, s_max, scale,
                       out + r.lo, r.hi - r.lo);
    for (Index M = r.hi; M < n; ++M) out[M] = kClosedMove;
    // the row wrap-arounds of E and W are off the grid
    if (d == kEast)
      for (Index j = 0; j < ny; ++j) out[j * nx + nx - 1] = kClosedMove;
    if (d == kWest)
      for (Index j = 0; j < ny; ++j) out[j * nx] = kClosedMove;
  }
}

void flow_speed(const CrowdGrid& grid, const CrowdParams& p, const Eigen::Ref<const RowMatrix>& fT,
                const Eigen::Ref<const Eigen::VectorXd>& rho_v, const Eigen::Ref<const RowMatrix>& ubar,
                const std::vector<std::uint8_t>& closed, const Eigen::Ref<const Eigen::VectorXd>& factor,
                Eigen::Ref<RowMatrix> speed) {
  const Index nx = grid.nx(), n = grid.n_cells();
  // rho_max = inf: 1 / inf = 0, so w = 0 (no flow-speed term).
  const double rho_min = p.rho_min, inv = 1.0 / (p.rho_max - p.rho_min);
  const double* rho = rho_v.data();
  const double* u = ubar.data();  // (n x 2) row-major
  const double* fac = factor.size() != 0 ? factor.data() : nullptr;
  for (int d = 0; d < 4; ++d) {
    const DirectionRange r = direction_range(nx, n, d);
    const double* t = fT.data() + d * fT.outerStride();
    double* out = speed.data() + d * speed.outerStride();
    // the component of ubar along n_d and its sign
    const Index comp = (d == kEast || d == kWest) ? 0 : 1;
    const double sign = (d == kEast || d == kNorth) ? 1.0 : -1.0;
    const Index off = r.offset;
    for (Index M = 0; M < r.lo; ++M) out[M] = 0.0;
    const Index count = r.hi - r.lo, N0 = r.lo + off;  // N0 >= 0: the first neighbour
    if (t == out)
      flow_kernel_in_place(out + r.lo, rho + N0, u + 2 * N0 + comp, sign, rho_min, inv, p.flow_floor, count);
    else
      flow_kernel(t + r.lo, rho + N0, u + 2 * N0 + comp, sign, rho_min, inv, p.flow_floor, out + r.lo, count);
    for (Index M = r.hi; M < n; ++M) out[M] = 0.0;
    if (fac)
      for (Index M = r.lo; M < r.hi; ++M) out[M] *= fac[M + off];
  }
  if (closed.empty()) return;
  // Nobody enters a closed cell: zero the four moves into it (leaving is allowed).
  const Index ny = grid.ny();
  for (Index c = 0; c < n; ++c) {
    if (!closed[c]) continue;
    const Index i = c % nx, j = c / nx;
    if (i > 0) speed(kEast, c - 1) = 0.0;
    if (i + 1 < nx) speed(kWest, c + 1) = 0.0;
    if (j > 0) speed(kNorth, c - nx) = 0.0;
    if (j + 1 < ny) speed(kSouth, c + nx) = 0.0;
  }
}

void speed_field(const CrowdGrid& grid, const CrowdParams& p, const Eigen::Ref<const Eigen::VectorXd>& rho,
                 const Eigen::Ref<const RowMatrix>& ubar, const std::vector<std::uint8_t>& closed,
                 const Eigen::Ref<const Eigen::VectorXd>& factor, Eigen::Ref<RowMatrix> speed) {
  check_cells("rho", rho.size(), grid);
  if (ubar.rows() != grid.n_cells() || ubar.cols() != 2)
    throw_shape("ubar", "(" + std::to_string(grid.ny()) + ", " + std::to_string(grid.nx()) + ", 2)",
                "(" + std::to_string(ubar.rows()) + " cells, " + std::to_string(ubar.cols()) + ")");
  check_moves("speed", speed.rows(), speed.cols(), grid);
  if (!closed.empty()) check_cells("closed", Index(closed.size()), grid);
  if (factor.size() != 0) check_cells("factor", factor.size(), grid);
  check_finite("rho", rho.data(), rho.size());
  check_finite("ubar", ubar.data(), ubar.size());
  check_apart("speed", speed.data(), extent(speed), "rho", rho.data(), rho.size());
  check_apart("speed", speed.data(), extent(speed), "ubar", ubar.data(), extent(ubar));
  check_apart("speed", speed.data(), extent(speed), "factor", factor.data(), factor.size());
  p.validate();
  topographic_speed(grid, p, speed);
  flow_speed(grid, p, speed, rho, ubar, closed, factor, speed);
}

void unit_cost_unchecked(const CrowdGrid& grid, const CrowdParams& p, const Eigen::Ref<const RowMatrix>& speed,
                         const Eigen::Ref<const Eigen::VectorXd>& discomfort, Eigen::Ref<RowMatrix> cost) {
  const Index nx = grid.nx(), n = grid.n_cells();
  const double inf = std::numeric_limits<double>::infinity();
  const double alpha = p.alpha, beta = p.beta, gamma = p.gamma;
  const double* g = discomfort.data();
  for (int d = 0; d < 4; ++d) {
    const DirectionRange r = direction_range(nx, n, d);
    const double* f = speed.data() + d * speed.outerStride();
    double* out = cost.data() + d * cost.outerStride();
    const Index off = r.offset;
    // speed is 0 off the grid (and on row wrap-arounds): cost +inf there
    for (Index M = 0; M < r.lo; ++M) out[M] = inf;
    cost_kernel(f + r.lo, g + r.lo + off, alpha, beta, gamma, out + r.lo, r.hi - r.lo);
    for (Index M = r.hi; M < n; ++M) out[M] = inf;
  }
}

void unit_cost(const CrowdGrid& grid, const CrowdParams& p, const Eigen::Ref<const RowMatrix>& speed,
               const Eigen::Ref<const Eigen::VectorXd>& g, Eigen::Ref<RowMatrix> cost) {
  check_moves("speed", speed.rows(), speed.cols(), grid);
  check_cells("discomfort", g.size(), grid);
  check_moves("cost", cost.rows(), cost.cols(), grid);
  check_finite("speed", speed.data(), speed.size());
  check_finite("discomfort", g.data(), g.size());
  check_apart("cost", cost.data(), extent(cost), "speed", speed.data(), extent(speed));
  check_apart("cost", cost.data(), extent(cost), "discomfort", g.data(), g.size());
  p.validate();
  unit_cost_unchecked(grid, p, speed, g, cost);
}

}  // namespace directable
