#include "directable/models/sph.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace directable {

namespace {
constexpr double kPi = 3.14159265358979323846;
// Below this many particles a parallel region costs more than the loop
// (measured: 100 particles, 2 loaded cores: 150x slower with threads).
constexpr Index kParallelMin = 2048;
using V2 = Eigen::Vector2d;
inline V2 pt(const double* d, Index i) { return V2(d[2 * i], d[2 * i + 1]); }
}  // namespace

void SPHParams::validate() const {
  auto pos = [](const char* name, double v) {
    if (!(v > 0) || !std::isfinite(v))
      throw std::domain_error(std::string(name) + " must be positive and finite, got " + std::to_string(v));
  };
  pos("spacing", spacing);
  pos("h", h);
  pos("rho0", rho0);
  pos("c0", c0);
  pos("gamma", gamma);
  pos("dt", dt);
  if (!(viscosity >= 0) || !std::isfinite(viscosity))
    throw std::domain_error("viscosity must be >= 0, got " + std::to_string(viscosity));
  if (!gravity.allFinite()) throw std::domain_error("gravity must be finite");
  if (!lo.allFinite() || !hi.allFinite() || !(hi[0] > lo[0]) || !(hi[1] > lo[1]))
    throw std::invalid_argument("domain must have lo < hi (finite), got lo = (" + std::to_string(lo[0]) + ", " +
                                std::to_string(lo[1]) + "), hi = (" + std::to_string(hi[0]) + ", " +
                                std::to_string(hi[1]) + ")");
}

CubicSpline2D::CubicSpline2D(double h_) : h(h_), sigma(10.0 / (7.0 * kPi * h_ * h_)) {}

double CubicSpline2D::W(double r) const {
  const double q = r / h;
  if (q < 1.0) return sigma * (1.0 - 1.5 * q * q + 0.75 * q * q * q);
  if (q < 2.0) return sigma * 0.25 * (2.0 - q) * (2.0 - q) * (2.0 - q);
  return 0.0;
}

double CubicSpline2D::dW(double r) const {
  const double q = r / h;
  if (q < 1.0) return sigma / h * (-3.0 * q + 2.25 * q * q);
  if (q < 2.0) return -sigma / h * 0.75 * (2.0 - q) * (2.0 - q);
  return 0.0;
}

double CubicSpline2D::d2W(double r) const {
  const double q = r / h;
  if (q < 1.0) return sigma / (h * h) * (-3.0 + 4.5 * q);
  if (q < 2.0) return sigma / (h * h) * 1.5 * (2.0 - q);
  return 0.0;
}

// ------------------------------------------------------------------ grid
void NeighbourGrid::build(const double* pts, Index count, const V2& lo, const V2& hi, double cell) {
  lo_ = lo;
  cell_ = cell;
  nx_ = std::max(1, int(std::ceil((hi[0] - lo[0]) / cell)));
  ny_ = std::max(1, int(std::ceil((hi[1] - lo[1]) / cell)));
  const Index cells = Index(nx_) * ny_;
  start_.assign(cells + 1, 0);
  cell_of_.resize(count);
  order_.resize(count);
  for (Index i = 0; i < count; ++i) {
    const Index c = Index(cell_y(pts[2 * i + 1])) * nx_ + cell_x(pts[2 * i]);
    cell_of_[i] = c;
    ++start_[c + 1];
  }
  for (Index c = 0; c < cells; ++c) start_[c + 1] += start_[c];
  std::vector<Index>& fill = cell_of_;  // reuse: counting sort, stable
  std::vector<Index> next(start_.begin(), start_.end() - 1);
  for (Index i = 0; i < count; ++i) order_[next[fill[i]]++] = i;
}

// ------------------------------------------------------------------ simulator
SPHFluid2D::SPHFluid2D(SPHParams params, const double* fluid, Index N, const double* boundary, Index M)
    : prm_(params), kernel_(params.h), N_(N), M_(M) {
  prm_.validate();
  if (N < 1) throw std::invalid_argument("fluid must hold at least one particle, got 0");
  x_ = Eigen::Map<const Eigen::VectorXd>(fluid, 2 * N);
  xb_ = M > 0 ? Eigen::VectorXd(Eigen::Map<const Eigen::VectorXd>(boundary, 2 * M)) : Eigen::VectorXd();
  check_finite("fluid", x_.data(), x_.size());
  if (M > 0) check_finite("boundary", xb_.data(), xb_.size());
  for (Index i = 0; i < N; ++i)
    if (x_[2 * i] < prm_.lo[0] || x_[2 * i] > prm_.hi[0] || x_[2 * i + 1] < prm_.lo[1] || x_[2 * i + 1] > prm_.hi[1])
      throw std::invalid_argument("fluid particle " + std::to_string(i) + " lies outside the domain");
  v_ = Eigen::VectorXd::Zero(2 * N);
  a_ = Eigen::VectorXd::Zero(2 * N);
  rho_ = Eigen::VectorXd::Constant(N, prm_.rho0);
  p_ = Eigen::VectorXd::Zero(N);
  // walls are static: one search structure for the whole run
  const V2 pad(4 * prm_.h, 4 * prm_.h);
  wall_grid_.build(xb_.data(), M_, prm_.lo - pad, prm_.hi + pad, 2 * prm_.h);
}

void SPHFluid2D::set_sphere(const V2& centre, double radius, const V2& velocity) {
  if (!centre.allFinite() || !velocity.allFinite()) throw std::domain_error("sphere centre and velocity must be finite");
  if (!(radius > 0) || !std::isfinite(radius))
    throw std::domain_error("sphere radius must be positive, got " + std::to_string(radius));
  if (centre[0] < prm_.lo[0] || centre[0] > prm_.hi[0] || centre[1] < prm_.lo[1] || centre[1] > prm_.hi[1])
    throw std::invalid_argument("sphere centre (" + std::to_string(centre[0]) + ", " + std::to_string(centre[1]) +
                                ") lies outside the domain");
  sc_ = centre;
  sr_ = radius;
  sv_ = velocity;
  sphere_on_ = true;
}

void SPHFluid2D::set_state(const Eigen::Ref<const Eigen::VectorXd>& positions,
                           const Eigen::Ref<const Eigen::VectorXd>& velocities) {
  if (positions.size() != 2 * N_) throw_shape("positions", shape_str(N_, 2), "(" + std::to_string(positions.size()) + " values)");
  if (velocities.size() != 2 * N_) throw_shape("velocities", shape_str(N_, 2), "(" + std::to_string(velocities.size()) + " values)");
  check_finite("positions", positions.data(), positions.size());
  check_finite("velocities", velocities.data(), velocities.size());
  x_ = positions;
  v_ = velocities;
}

void SPHFluid2D::search() {
  const V2 pad(4 * prm_.h, 4 * prm_.h);
  fluid_grid_.build(x_.data(), N_, prm_.lo - pad, prm_.hi + pad, 2 * prm_.h);
}

NeighbourLists SPHFluid2D::neighbours() {
  search();
  NeighbourLists nb;
  const double R = 2 * prm_.h;
  nb.fluid_start.push_back(0);
  nb.wall_start.push_back(0);
  for (Index i = 0; i < N_; ++i) {
    const V2 xi = pt(x_.data(), i);
    fluid_grid_.for_each(x_.data(), xi, R, [&](Index j) {
      if (j != i) nb.fluid.push_back(j);
    });
    nb.fluid_start.push_back(Index(nb.fluid.size()));
    if (M_ > 0) wall_grid_.for_each(xb_.data(), xi, R, [&](Index b) { nb.wall.push_back(b); });
    nb.wall_start.push_back(Index(nb.wall.size()));
  }
  return nb;
}

void SPHFluid2D::step(const double* force) {
  const double m = prm_.mass(), R = 2 * prm_.h, B = prm_.tait_B(), dt = prm_.dt;
  search();
  const double* X = x_.data();
  const double* XB = xb_.data();
  const double W0 = kernel_.W(0.0);
#pragma omp parallel for schedule(static) if (N_ >= kParallelMin)
  for (Index i = 0; i < N_; ++i) {
    const V2 xi = pt(X, i);
    double rho = m * W0;
    fluid_grid_.for_each(X, xi, R, [&](Index j) {
      if (j != i) rho += m * kernel_.W((xi - pt(X, j)).norm());
    });
    if (M_ > 0) wall_grid_.for_each(XB, xi, R, [&](Index b) { rho += m * kernel_.W((xi - pt(XB, b)).norm()); });
    rho_[i] = rho;
    p_[i] = std::max(0.0, B * (std::pow(rho / prm_.rho0, prm_.gamma) - 1.0));
  }
  const double alpha = prm_.viscosity, h = prm_.h, c0 = prm_.c0;
#pragma omp parallel for schedule(static) if (N_ >= kParallelMin)
  for (Index i = 0; i < N_; ++i) {
    const V2 xi = pt(X, i), vi = pt(v_.data(), i);
    const double Pi = p_[i] / (rho_[i] * rho_[i]);
    V2 a = prm_.gravity;
    if (force) a += pt(force, i) / m;
    fluid_grid_.for_each(X, xi, R, [&](Index j) {
      if (j == i) return;
      const V2 r = xi - pt(X, j);
      const double d = r.norm();
      if (d <= 1e-12) return;
      const V2 gW = kernel_.dW(d) / d * r;
      double c = Pi + p_[j] / (rho_[j] * rho_[j]);
      const double vr = (vi - pt(v_.data(), j)).dot(r);
      if (vr < 0) {  // Monaghan viscosity (approaching pairs)
        const double mu = h * vr / (d * d + 0.01 * h * h);
        c += -alpha * c0 * mu / (0.5 * (rho_[i] + rho_[j]));
      }
      a -= m * c * gW;
    });
    if (M_ > 0)
      wall_grid_.for_each(XB, xi, R, [&](Index b) {
        const V2 r = xi - pt(XB, b);
        const double d = r.norm();
        if (d <= 1e-12) return;
        const V2 gW = kernel_.dW(d) / d * r;
        double c = 2.0 * Pi;
        const double vr = vi.dot(r);
        if (vr < 0) c += -alpha * c0 * h * vr / (d * d + 0.01 * h * h) / rho_[i];
        a -= m * c * gW;
      });
    a_[2 * i] = a[0];
    a_[2 * i + 1] = a[1];
  }
  // symplectic Euler, then the sphere and the domain box
  v_ += dt * a_;
  ++steps_;
  const double vmax = v_.size() ? v_.cwiseAbs().maxCoeff() : 0.0;
  if (!std::isfinite(vmax) || vmax > 10.0 * prm_.c0)
    throw std::domain_error("SPH step " + std::to_string(steps_) + " diverged (speed " + std::to_string(vmax) +
                            " > 10 c0 or non-finite): reduce dt or the control forces");
  x_ += dt * v_;
  if (sphere_on_) sc_ += dt * sv_;
#pragma omp parallel for schedule(static) if (N_ >= kParallelMin)
  for (Index i = 0; i < N_; ++i) {
    V2 xi = pt(x_.data(), i), vi = pt(v_.data(), i);
    if (sphere_on_) {
      const V2 r = xi - sc_;
      const double d = r.norm();
      if (d < sr_) {
        const V2 nrm = d > 1e-12 ? V2(r / d) : V2(0.0, 1.0);
        xi = sc_ + sr_ * nrm;
        const double vn = (vi - sv_).dot(nrm);
        if (vn < 0) vi -= vn * nrm;
      }
    }
    for (int k = 0; k < 2; ++k) {
      if (xi[k] < prm_.lo[k]) { xi[k] = prm_.lo[k]; vi[k] = std::max(vi[k], 0.0); }
      if (xi[k] > prm_.hi[k]) { xi[k] = prm_.hi[k]; vi[k] = std::min(vi[k], 0.0); }
    }
    x_[2 * i] = xi[0];
    x_[2 * i + 1] = xi[1];
    v_[2 * i] = vi[0];
    v_[2 * i + 1] = vi[1];
  }
  if (!x_.allFinite()) throw std::domain_error("SPH step " + std::to_string(steps_) + " produced non-finite positions");
}

// ------------------------------------------------------------------ prediction model
SPHPrediction::SPHPrediction(SPHParams params, NeighbourLists lists, Eigen::VectorXd boundary)
    : prm_(params), kernel_(params.h), nb_(std::move(lists)), xb_(std::move(boundary)) {
  prm_.validate();
  N_ = Index(nb_.fluid_start.size()) - 1;
  if (N_ < 1 || Index(nb_.wall_start.size()) != N_ + 1)
    throw std::invalid_argument("neighbour lists must have N+1 starts for fluid and walls");
}

SPHPrediction::Scratch& SPHPrediction::scratch() const {
  thread_local Scratch w;
  if (w.rho.size() != N_) {
    w.rho.resize(N_);
    w.P.resize(N_);
    w.dP.resize(N_);
    w.barP.resize(N_);
  }
  if (w.a.size() != 2 * N_) {
    w.a.resize(2 * N_);
    w.mu.resize(2 * N_);
  }
  return w;
}

// rho_i = m (W(0) + sum_j W(|x_i - x_j|) + sum_b W(|x_i - x_b|)),
// p = max(0, B ((rho/rho0)^gamma - 1)), P = p / rho^2, dP = dP/drho.
void SPHPrediction::density(const CRefVec& pos, Scratch& w) const {
  const double m = prm_.mass(), B = prm_.tait_B(), g = prm_.gamma, r0 = prm_.rho0, W0 = kernel_.W(0.0);
  const double* X = pos.data();
#pragma omp parallel for schedule(static) if (N_ >= kParallelMin)
  for (Index i = 0; i < N_; ++i) {
    const V2 xi = pt(X, i);
    double rho = m * W0;
    for (Index k = nb_.fluid_start[i]; k < nb_.fluid_start[i + 1]; ++k) rho += m * kernel_.W((xi - pt(X, nb_.fluid[k])).norm());
    for (Index k = nb_.wall_start[i]; k < nb_.wall_start[i + 1]; ++k) rho += m * kernel_.W((xi - pt(xb_.data(), nb_.wall[k])).norm());
    // clamped at zero like the simulator (no tensile attraction at the free surface)
    const double s = std::pow(rho / r0, g);
    const double p = s > 1.0 ? B * (s - 1.0) : 0.0, dp = s > 1.0 ? B * g * s / rho : 0.0;
    w.rho[i] = rho;
    w.P[i] = p / (rho * rho);
    w.dP[i] = dp / (rho * rho) - 2.0 * p / (rho * rho * rho);
  }
}

void SPHPrediction::pressure_acceleration(const CRefVec& pos, Eigen::Ref<Eigen::VectorXd> a) const {
  Scratch& w = scratch();
  density(pos, w);
  const double m = prm_.mass();
  const double* X = pos.data();
#pragma omp parallel for schedule(static) if (N_ >= kParallelMin)
  for (Index i = 0; i < N_; ++i) {
    const V2 xi = pt(X, i);
    V2 acc(0, 0);
    for (Index k = nb_.fluid_start[i]; k < nb_.fluid_start[i + 1]; ++k) {
      const Index j = nb_.fluid[k];
      const V2 r = xi - pt(X, j);
      const double d = r.norm();
      if (d <= 1e-12) continue;
      acc -= m * (w.P[i] + w.P[j]) * (kernel_.dW(d) / d) * r;
    }
    for (Index k = nb_.wall_start[i]; k < nb_.wall_start[i + 1]; ++k) {
      const V2 r = xi - pt(xb_.data(), nb_.wall[k]);
      const double d = r.norm();
      if (d <= 1e-12) continue;
      acc -= m * 2.0 * w.P[i] * (kernel_.dW(d) / d) * r;
    }
    a[2 * i] = acc[0];
    a[2 * i + 1] = acc[1];
  }
}

void SPHPrediction::step(const CRefVec& x, const CRefVec& u, RefVec x_next, Index) const {
  const Index n2 = 2 * N_;
  Scratch& w = scratch();
  pressure_acceleration(x.head(n2), w.a);
  const double dt = prm_.dt, im = 1.0 / prm_.mass();
  auto vn = x_next.tail(n2);
  vn = x.tail(n2) + dt * (w.a + im * u);
  for (Index i = 0; i < N_; ++i) {
    vn[2 * i] += dt * prm_.gravity[0];
    vn[2 * i + 1] += dt * prm_.gravity[1];
  }
  x_next.head(n2) = x.head(n2) + dt * vn;
}

// Reverse mode of step. With mu = lam_v + dt lam_x (adjoint of v+):
//   gx_pos = lam_x + dt (da/dpos)' mu,  gx_vel = mu,  gu = dt mu / m.
// (da/dpos)' mu is gathered per particle (the fluid lists are symmetric):
//   barP_k = -m sum_j (mu_k - mu_j).gW_kj - 2 m sum_b mu_k.gW_kb,
//   barrho_k = barP_k dP_k,
//   bar x_k = -m sum_j (P_k + P_j) H_kj (mu_k - mu_j) - 2 m sum_b P_k H_kb mu_k
//             + m sum_j (barrho_k + barrho_j) gW_kj + m sum_b barrho_k gW_kb,
// with gW = W'(d) r/d and H = W''(d) rr'/d^2 + W'(d)/d (I - rr'/d^2).
void SPHPrediction::vjp(const CRefVec& x, const CRefVec&, const CRefVec& lam, RefVec gx, RefVec gu, Index) const {
  const Index n2 = 2 * N_;
  Scratch& w = scratch();
  density(x.head(n2), w);
  const double dt = prm_.dt, m = prm_.mass();
  w.mu = lam.tail(n2) + dt * lam.head(n2);
  const double* X = x.data();
  const double* XB = xb_.data();
  const double* MU = w.mu.data();
#pragma omp parallel for schedule(static) if (N_ >= kParallelMin)
  for (Index k = 0; k < N_; ++k) {
    const V2 xk = pt(X, k), mk = pt(MU, k);
    double bar = 0.0;
    for (Index q = nb_.fluid_start[k]; q < nb_.fluid_start[k + 1]; ++q) {
      const Index j = nb_.fluid[q];
      const V2 r = xk - pt(X, j);
      const double d = r.norm();
      if (d <= 1e-12) continue;
      bar -= m * (mk - pt(MU, j)).dot((kernel_.dW(d) / d) * r);
    }
    for (Index q = nb_.wall_start[k]; q < nb_.wall_start[k + 1]; ++q) {
      const V2 r = xk - pt(XB, nb_.wall[q]);
      const double d = r.norm();
      if (d <= 1e-12) continue;
      bar -= 2.0 * m * mk.dot((kernel_.dW(d) / d) * r);
    }
    w.barP[k] = bar * w.dP[k];  // now bar rho_k
  }
  auto hess = [&](const V2& r, double d) {
    const double w1 = kernel_.dW(d), w2 = kernel_.d2W(d);
    const V2 e = r / d;
    Eigen::Matrix2d Hm = (w2 - w1 / d) * (e * e.transpose());
    Hm.diagonal().array() += w1 / d;
    return Hm;
  };
#pragma omp parallel for schedule(static) if (N_ >= kParallelMin)
  for (Index k = 0; k < N_; ++k) {
    const V2 xk = pt(X, k), mk = pt(MU, k);
    V2 g(0, 0);
    for (Index q = nb_.fluid_start[k]; q < nb_.fluid_start[k + 1]; ++q) {
      const Index j = nb_.fluid[q];
      const V2 r = xk - pt(X, j);
      const double d = r.norm();
      if (d <= 1e-12) continue;
      g -= m * (w.P[k] + w.P[j]) * (hess(r, d) * (mk - pt(MU, j)));
      g += m * (w.barP[k] + w.barP[j]) * (kernel_.dW(d) / d) * r;
    }
    for (Index q = nb_.wall_start[k]; q < nb_.wall_start[k + 1]; ++q) {
      const V2 r = xk - pt(XB, nb_.wall[q]);
      const double d = r.norm();
      if (d <= 1e-12) continue;
      g -= 2.0 * m * w.P[k] * (hess(r, d) * mk);
      g += m * w.barP[k] * (kernel_.dW(d) / d) * r;
    }
    gx[2 * k] = lam[2 * k] + dt * g[0];
    gx[2 * k + 1] = lam[2 * k + 1] + dt * g[1];
  }
  gx.tail(n2) = w.mu;
  gu = (dt / m) * w.mu;
}

}  // namespace directable
