#include "directable/models/sph/fluid.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "directable/core/clock.hpp"
#include "directable/core/errors.hpp"
#include "pair_kernels.hpp"

namespace directable {

namespace {
template <int D>
Index initial_stride(const SPHParamsT<D>& p, double skin, double share) {
  // `share` of the particles in a ball of radius 2h + skin at the initial
  // spacing, with room for compression (the tables grow if it is exceeded)
  const double r = (2.0 * p.h + skin) / p.spacing;
  const double ball = D == 2 ? kPi * r * r : 4.0 / 3.0 * kPi * r * r * r;
  return Index(1.5 * share * ball) + 8;
}
}  // namespace

// Validates the parameters and the particles once; everything after works
// on checked state.
template <int D>
SPHFluid<D>::SPHFluid(Params params, const CRefVec& fluid, const CRefVec& boundary)
    : params_(params), kernel_(params.h), fluid_count_(fluid.size() / D), boundary_count_(boundary.size() / D) {
  params_.validate();
  const Index N = fluid_count_;
  if (fluid.size() % D != 0)
    throw std::invalid_argument("fluid must hold (N, " + std::to_string(D) + ") points, got " +
                                std::to_string(fluid.size()) + " values");
  if (boundary.size() % D != 0)
    throw std::invalid_argument("boundary must hold (M, " + std::to_string(D) + ") points, got " +
                                std::to_string(boundary.size()) + " values");
  if (N < 1) throw std::invalid_argument("fluid must hold at least one particle, got 0");
  check_finite("fluid", fluid.data(), fluid.size());
  check_finite("boundary", boundary.data(), boundary.size());
  positions_ = fluid;
  boundary_ = boundary;
  for (Index i = 0; i < N; ++i)
    for (int k = 0; k < D; ++k)
      if (positions_[D * i + k] < params_.lo[k] || positions_[D * i + k] > params_.hi[k])
        throw std::invalid_argument("fluid particle " + std::to_string(i) + " at " +
                                    vec_str<D>(pt<D>(positions_.data(), i)) + " lies outside the domain " +
                                    vec_str<D>(params_.lo) + " - " + vec_str<D>(params_.hi));
  velocities_ = Eigen::VectorXd::Zero(D * N);
  accelerations_ = Eigen::VectorXd::Zero(D * N);
  densities_ = Eigen::VectorXd::Constant(N, params_.rho0);
  pressures_ = Eigen::VectorXd::Zero(N);
  pressure_by_rho2_ = Eigen::VectorXd::Zero(N);
  // walls are static: one search structure for the whole run
  skin_ = 0.3 * params_.h;
  const Vec pad = Vec::Constant(4 * params_.h);
  wall_grid_.build(boundary_.data(), boundary_count_, params_.lo - pad, params_.hi + pad, 2 * params_.h + skin_);
  // fluid pairs are listed once (j > i): half a ball; walls per particle
  fluid_pairs_.stride = initial_stride<D>(params_, skin_, 0.5);
  wall_pairs_.stride = initial_stride<D>(params_, skin_, 1.0);
}

template <int D>
void SPHFluid<D>::set_sphere(const Vec& centre, double radius, const Vec& velocity) {
  if (!centre.allFinite()) throw std::domain_error("sphere centre must be finite, got " + vec_str<D>(centre));
  if (!velocity.allFinite()) throw std::domain_error("sphere velocity must be finite, got " + vec_str<D>(velocity));
  if (!(radius > 0) || !std::isfinite(radius))
    throw std::domain_error("sphere radius must be positive and finite, got " + std::to_string(radius));
  for (int k = 0; k < D; ++k)
    if (centre[k] < params_.lo[k] || centre[k] > params_.hi[k])
      throw std::invalid_argument("sphere centre " + vec_str<D>(centre) + " lies outside the domain " +
                                  vec_str<D>(params_.lo) + " - " + vec_str<D>(params_.hi));
  sphere_centre_ = centre;
  sphere_radius_ = radius;
  sphere_velocity_ = velocity;
  has_sphere_ = true;
}

template <int D>
void SPHFluid<D>::set_state(const CRefVec& positions, const CRefVec& velocities) {
  if (positions.size() != D * fluid_count_)
    throw_shape("positions", shape_str(fluid_count_, D), "(" + std::to_string(positions.size()) + " values)");
  if (velocities.size() != D * fluid_count_)
    throw_shape("velocities", shape_str(fluid_count_, D), "(" + std::to_string(velocities.size()) + " values)");
  check_finite("positions", positions.data(), positions.size());
  check_finite("velocities", velocities.data(), velocities.size());
  positions_ = positions;
  velocities_ = velocities;
  lists_stale_ = true;
}

// Candidate lists within 2h + skin from one grid pass. A particle with more
// candidates than the stride grows the tables and repeats the pass (rare;
// no allocation otherwise).
template <int D>
void SPHFluid<D>::build_lists() {
  const Vec pad = Vec::Constant(4 * params_.h);
  const double Rs = 2 * params_.h + skin_;
  fluid_grid_.build(positions_.data(), fluid_count_, params_.lo - pad, params_.hi + pad, Rs);
  const double* X = positions_.data();
  for (;;) {
    SPHPairTable& F = fluid_pairs_;
    SPHPairTable& Wt = wall_pairs_;
    const Index sf = F.stride, sw = Wt.stride;
    if (Index(F.count.size()) != fluid_count_) {
      F.count.resize(fluid_count_);
      F.near_count.resize(fluid_count_);
    }
    if (Index(F.index.size()) != fluid_count_ * sf) {
      F.index.resize(fluid_count_ * sf);
      F.near.resize(fluid_count_ * sf);
      F.a.resize(fluid_count_ * sf);
    }
    if (Index(Wt.count.size()) != fluid_count_) Wt.count.resize(fluid_count_);
    if (boundary_count_ > 0 && Index(Wt.index.size()) != fluid_count_ * sw) {
      Wt.index.resize(fluid_count_ * sw);
      Wt.a.resize(fluid_count_ * sw);
    }
    int need_f = 0, need_w = 0;
#pragma omp parallel for schedule(static) reduction(max : need_f, need_w) num_threads(threads_) if (fluid_count_ >= kParallelMin)
    for (Index i = 0; i < fluid_count_; ++i) {
      const Vec xi = pt<D>(X, i);
      // each symmetric pair once, listed by its first particle (j > i)
      const int c = fluid_grid_.collect(xi, Rs, i, F.index.data() + i * sf, int(sf));
      F.count[i] = c;
      need_f = std::max(need_f, c);
      int cw = 0;
      if (boundary_count_ > 0) cw = wall_grid_.collect(xi, Rs, -1, Wt.index.data() + i * sw, int(sw));
      Wt.count[i] = cw;
      need_w = std::max(need_w, cw);
    }
    // complete only below the stride (collect's last slot is its overflow)
    if (need_f < sf && need_w < sw) break;
    F.stride = std::max<Index>(sf, Index(need_f) + need_f / 4 + 4);
    Wt.stride = std::max<Index>(sw, Index(need_w) + need_w / 4 + 4);
  }
  build_chunks(
      fluid_count_,
      [&](Index i) {
        const int* idx = fluid_pairs_.index.data() + i * fluid_pairs_.stride;
        Index r = i;
        for (int c = 0; c < fluid_pairs_.count[i]; ++c) r = std::max<Index>(r, idx[c]);
        return r;
      },
      chunk_);
  positions_at_build_ = positions_;
  lists_stale_ = false;
}

// Densities, pressures and W'/d of every listed pair (the kernel is exactly
// 0 beyond 2h, so the skin's extra candidates add nothing).
template <int D>
void SPHFluid<D>::search() {
  if (lists_stale_) build_lists();
  const double m = params_.mass(), B = params_.tait_B(), W0 = kernel_.W(0.0);
  const double* X = positions_.data();
  const double* XB = boundary_.data();
  const KernelConst ker(kernel_);
  SPHPairTable& F = fluid_pairs_;
  SPHPairTable& Wt = wall_pairs_;
  double* rho = densities_.data();
  const Index chunks = Index(chunk_.size()) - 1;
#pragma omp parallel num_threads(threads_) if (fluid_count_ >= kParallelMin)
  {
#pragma omp for schedule(static)
    for (Index i = 0; i < fluid_count_; ++i) rho[i] = 0.0;
    in_two_phases(chunks, [&](Index c) {
      sim_density_pairs<D>(chunk_[c], chunk_[c + 1], X, F.count.data(), F.index.data(), F.stride, ker,
                           F.near_count.data(), F.near.data(), F.a.data(), rho);
    });
#pragma omp for schedule(static)
    for (Index i = 0; i < fluid_count_; ++i) {
      double r = W0 + rho[i];
      if (boundary_count_ > 0) {
        const Vec xi = pt<D>(X, i);
        const int* iw = Wt.index.data() + i * Wt.stride;
        double* aw = Wt.a.data() + i * Wt.stride;
        for (int c = 0; c < Wt.count[i]; ++c) {
          const KernelTerms t = ker((xi - pt<D>(XB, iw[c])).norm());
          r += t.W;
          aw[c] = t.a;
        }
      }
      r *= m;
      rho[i] = r;
      pressures_[i] = std::max(0.0, B * (tait_ratio(r / params_.rho0, params_.gamma) - 1.0));
      pressure_by_rho2_[i] = pressures_[i] / (r * r);
    }
  }
}

template <int D>
NeighbourLists SPHFluid<D>::neighbours() {
  NeighbourLists nb;
  neighbours(nb);
  return nb;
}

// The pairs within 2h from the Verlet lists (candidates within 2h + skin of
// positions that no particle has left by more than skin/2): no grid pass.
// Both directions of every pair, in one serial pass: particle i lists its
// lower neighbours (in increasing order) and then its upper ones (list order).
template <int D>
void SPHFluid<D>::neighbours(NeighbourLists& nb) {
  if (lists_stale_) build_lists();
  const double R = 2 * params_.h, R2 = R * R;
  const double* X = positions_.data();
  const double* XB = boundary_.data();
  const SPHPairTable& F = fluid_pairs_;
  const SPHPairTable& Wt = wall_pairs_;
  nb.fluid_start.assign(fluid_count_ + 1, 0);
  nb.wall_start.assign(fluid_count_ + 1, 0);
  Index* fs = nb.fluid_start.data();
  Index* ws = nb.wall_start.data();
  for (Index i = 0; i < fluid_count_; ++i) {
    const Vec xi = pt<D>(X, i);
    const int* idx = F.index.data() + i * F.stride;
    for (int k = 0; k < F.count[i]; ++k)
      if ((xi - pt<D>(X, idx[k])).squaredNorm() < R2) {
        ++fs[i + 1];
        ++fs[idx[k] + 1];
      }
    if (boundary_count_ > 0) {
      const int* iw = Wt.index.data() + i * Wt.stride;
      for (int k = 0; k < Wt.count[i]; ++k) ws[i + 1] += (xi - pt<D>(XB, iw[k])).squaredNorm() < R2;
    }
  }
  for (Index i = 0; i < fluid_count_; ++i) {
    fs[i + 1] += fs[i];
    ws[i + 1] += ws[i];
  }
  nb.fluid.resize(fs[fluid_count_]);
  nb.wall.resize(ws[fluid_count_]);
  fill_cursor_.assign(fs, fs + fluid_count_);
  for (Index i = 0; i < fluid_count_; ++i) {
    const Vec xi = pt<D>(X, i);
    const int* idx = F.index.data() + i * F.stride;
    for (int k = 0; k < F.count[i]; ++k) {
      const int j = idx[k];
      if ((xi - pt<D>(X, j)).squaredNorm() < R2) {
        nb.fluid[fill_cursor_[i]++] = j;
        nb.fluid[fill_cursor_[j]++] = i;
      }
    }
    if (boundary_count_ > 0) {
      const int* iw = Wt.index.data() + i * Wt.stride;
      Index c = ws[i];
      for (int k = 0; k < Wt.count[i]; ++k)
        if ((xi - pt<D>(XB, iw[k])).squaredNorm() < R2) nb.wall[c++] = iw[k];
    }
  }
}

template <int D>
void SPHFluid<D>::accelerate(const double* force) {
  const double m = params_.mass();
  search();
  const double* X = positions_.data();
  const double* V = velocities_.data();
  const double* XB = boundary_.data();
  const double alpha = params_.viscosity, h = params_.h, c0 = params_.c0, eps = 0.01 * h * h;
  const SPHPairTable& F = fluid_pairs_;
  const SPHPairTable& Wt = wall_pairs_;
  const double* rho = densities_.data();
  const double* PR = pressure_by_rho2_.data();
  double* A = accelerations_.data();
  const Index chunks = Index(chunk_.size()) - 1;
#pragma omp parallel num_threads(threads_) if (fluid_count_ >= kParallelMin)
  {
#pragma omp for schedule(static)
    for (Index k = 0; k < D * fluid_count_; ++k) A[k] = 0.0;
    in_two_phases(chunks, [&](Index c) {
      sim_force_pairs<D>(chunk_[c], chunk_[c + 1], X, V, PR, rho, F.near_count.data(), F.near.data(), F.a.data(),
                         F.stride, m, h, alpha, c0, eps, A);
    });
#pragma omp for schedule(static)
    for (Index i = 0; i < fluid_count_; ++i) {
      Vec a = params_.gravity;
      if (force) a += pt<D>(force, i) / m;
      a += pt<D>(A, i);
      if (boundary_count_ > 0) {
        const Vec xi = pt<D>(X, i), vi = pt<D>(V, i);
        const double Pi = PR[i];
        const int* iw = Wt.index.data() + i * Wt.stride;
        const double* aw = Wt.a.data() + i * Wt.stride;
        for (int k = 0; k < Wt.count[i]; ++k) {
          const Vec r = xi - pt<D>(XB, iw[k]);
          double c = 2.0 * Pi;
          const double vr = vi.dot(r);
          if (vr < 0) c += -alpha * c0 * h * vr / (r.squaredNorm() + eps) / rho[i];
          a -= (m * c * aw[k]) * r;
        }
      }
      Eigen::Map<Vec>(A + D * i) = a;
    }
  }
}

template <int D>
void SPHFluid<D>::integrate() {
  const double dt = params_.dt;
  double vmax = 0.0;
  bool bad = false;
  // (serial: a few microseconds of streaming; a parallel region costs more on a loaded machine)
  for (Index k = 0; k < D * fluid_count_; ++k) {
    const double v = velocities_[k] + dt * accelerations_[k];
    velocities_[k] = v;
    bad = bad || !std::isfinite(v);
    vmax = std::max(vmax, std::abs(v));
  }
  ++steps_taken_;
  if (bad || vmax > 10.0 * params_.c0)
    throw std::domain_error("SPH step " + std::to_string(steps_taken_) + " diverged (speed " +
                            (bad ? std::string("non-finite") : std::to_string(vmax)) +
                            " > 10 c0): reduce dt or the control forces");
  if (has_sphere_) sphere_centre_ += dt * sphere_velocity_;
  bad = false;
  double moved = 0.0;  // largest squared displacement since the list build
  for (Index i = 0; i < fluid_count_; ++i) {
    Eigen::Map<Vec> xm(positions_.data() + D * i), vm(velocities_.data() + D * i);
    Vec xi = xm + dt * vm, vi = vm;
    if (has_sphere_) {
      const Vec r = xi - sphere_centre_;
      const double d = r.norm();
      if (d < sphere_radius_) {
        Vec nrm = Vec::Zero();
        if (d > 1e-12)
          nrm = r / d;
        else
          nrm[D - 1] = 1.0;
        xi = sphere_centre_ + sphere_radius_ * nrm;
        const double vn = (vi - sphere_velocity_).dot(nrm);
        if (vn < 0) vi -= vn * nrm;
      }
    }
    for (int k = 0; k < D; ++k) {
      if (xi[k] < params_.lo[k]) {
        xi[k] = params_.lo[k];
        vi[k] = std::max(vi[k], 0.0);
      }
      if (xi[k] > params_.hi[k]) {
        xi[k] = params_.hi[k];
        vi[k] = std::min(vi[k], 0.0);
      }
    }
    bad = bad || !xi.allFinite();
    moved = std::max(moved, (xi - pt<D>(positions_at_build_.data(), i)).squaredNorm());
    xm = xi;
    vm = vi;
  }
  if (!(moved <= 0.25 * skin_ * skin_)) lists_stale_ = true;
  if (bad) throw std::domain_error("SPH step " + std::to_string(steps_taken_) + " produced non-finite positions");
}

template <int D>
void SPHFluid<D>::step_with(const double* force) {
  const double t0 = now_seconds();
  threads_ = team_.begin();
  accelerate(force);
  team_.end(now_seconds() - t0);  // the parallel part of the step
  integrate();
}

template <int D>
void SPHFluid<D>::step() {
  step_with(nullptr);
}

template <int D>
void SPHFluid<D>::advance(Index steps, const CRefVec& force, const ProgressFn* progress) {
  if (steps < 1) throw std::invalid_argument("steps must be >= 1, got " + std::to_string(steps));
  if (force.size() != 0 && force.size() != D * fluid_count_)
    throw_shape("force", shape_str(fluid_count_, D), "(" + std::to_string(force.size()) + " values)");
  check_finite("force", force.data(), force.size());
  const double* f = force.size() ? force.data() : nullptr;
  ProgressThrottle throttle(progress, steps);
  Index done = 0;
  while (done < steps) {
    step_with(f);
    if (!throttle.report(++done)) break;
  }
  throttle.finish(done);
}

template class SPHFluid<2>;
template class SPHFluid<3>;

}  // namespace directable
