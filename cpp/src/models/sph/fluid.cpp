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

template <int D>
SPHFluid<D>::SPHFluid(Params params, const double* fluid, Index N, const double* boundary, Index M)
    : prm_(params), kernel_(params.h), N_(N), M_(M) {
  prm_.validate();
  if (N < 1) throw std::invalid_argument("fluid must hold at least one particle, got 0");
  x_ = Eigen::Map<const Eigen::VectorXd>(fluid, D * N);
  xb_ = M > 0 ? Eigen::VectorXd(Eigen::Map<const Eigen::VectorXd>(boundary, D * M)) : Eigen::VectorXd();
  check_finite("fluid", x_.data(), x_.size());
  if (M > 0) check_finite("boundary", xb_.data(), xb_.size());
  for (Index i = 0; i < N; ++i)
    for (int k = 0; k < D; ++k)
      if (x_[D * i + k] < prm_.lo[k] || x_[D * i + k] > prm_.hi[k])
        throw std::invalid_argument("fluid particle " + std::to_string(i) + " at " + vec_str<D>(pt<D>(x_.data(), i)) +
                                    " lies outside the domain " + vec_str<D>(prm_.lo) + " - " + vec_str<D>(prm_.hi));
  v_ = Eigen::VectorXd::Zero(D * N);
  a_ = Eigen::VectorXd::Zero(D * N);
  rho_ = Eigen::VectorXd::Constant(N, prm_.rho0);
  p_ = Eigen::VectorXd::Zero(N);
  pr2_ = Eigen::VectorXd::Zero(N);
  // walls are static: one search structure for the whole run
  const Vec pad = Vec::Constant(4 * prm_.h);
  wall_grid_.build(xb_.data(), M_, prm_.lo - pad, prm_.hi + pad, 2 * prm_.h);
  skin_ = 0.3 * prm_.h;
  // fluid pairs are listed once (j > i): half a ball; walls per particle
  fluid_pairs_.stride = initial_stride<D>(prm_, skin_, 0.5);
  wall_pairs_.stride = initial_stride<D>(prm_, skin_, 1.0);
}

template <int D>
void SPHFluid<D>::set_sphere(const Vec& centre, double radius, const Vec& velocity) {
  if (!centre.allFinite()) throw std::domain_error("sphere centre must be finite, got " + vec_str<D>(centre));
  if (!velocity.allFinite()) throw std::domain_error("sphere velocity must be finite, got " + vec_str<D>(velocity));
  if (!(radius > 0) || !std::isfinite(radius))
    throw std::domain_error("sphere radius must be positive and finite, got " + std::to_string(radius));
  for (int k = 0; k < D; ++k)
    if (centre[k] < prm_.lo[k] || centre[k] > prm_.hi[k])
      throw std::invalid_argument("sphere centre " + vec_str<D>(centre) + " lies outside the domain " +
                                  vec_str<D>(prm_.lo) + " - " + vec_str<D>(prm_.hi));
  sc_ = centre;
  sr_ = radius;
  sv_ = velocity;
  sphere_on_ = true;
}

template <int D>
void SPHFluid<D>::set_state(const Eigen::Ref<const Eigen::VectorXd>& positions,
                            const Eigen::Ref<const Eigen::VectorXd>& velocities) {
  if (positions.size() != D * N_)
    throw_shape("positions", shape_str(N_, D), "(" + std::to_string(positions.size()) + " values)");
  if (velocities.size() != D * N_)
    throw_shape("velocities", shape_str(N_, D), "(" + std::to_string(velocities.size()) + " values)");
  check_finite("positions", positions.data(), positions.size());
  check_finite("velocities", velocities.data(), velocities.size());
  x_ = positions;
  v_ = velocities;
  rebuild_ = true;
}

// Candidate lists within 2h + skin from one grid pass. A particle with more
// candidates than the stride grows the tables and repeats the pass (rare;
// no allocation otherwise).
template <int D>
void SPHFluid<D>::build_lists() {
  const Vec pad = Vec::Constant(4 * prm_.h);
  const double Rs = 2 * prm_.h + skin_;
  fluid_grid_.build(x_.data(), N_, prm_.lo - pad, prm_.hi + pad, Rs);
  const double* X = x_.data();
  for (;;) {
    SPHPairTable& F = fluid_pairs_;
    SPHPairTable& Wt = wall_pairs_;
    const Index sf = F.stride, sw = Wt.stride;
    if (Index(F.count.size()) != N_) {
      F.count.resize(N_);
      F.near_count.resize(N_);
    }
    if (Index(F.index.size()) != N_ * sf) {
      F.index.resize(N_ * sf);
      F.near.resize(N_ * sf);
      F.a.resize(N_ * sf);
    }
    if (Index(Wt.count.size()) != N_) Wt.count.resize(N_);
    if (M_ > 0 && Index(Wt.index.size()) != N_ * sw) {
      Wt.index.resize(N_ * sw);
      Wt.a.resize(N_ * sw);
    }
    int need_f = 0, need_w = 0;
#pragma omp parallel for schedule(static) reduction(max : need_f, need_w) num_threads(nt_) if (N_ >= kParallelMin)
    for (Index i = 0; i < N_; ++i) {
      const Vec xi = pt<D>(X, i);
      int c = 0;
      int* idx = F.index.data() + i * sf;
      fluid_grid_.for_each(xi, Rs, [&](Index j, const Vec&, double) {
        if (j <= i) return;  // each symmetric pair once, listed by its first particle
        if (c < sf) idx[c] = int(j);
        ++c;
      });
      F.count[i] = c;
      need_f = std::max(need_f, c);
      int cw = 0;
      if (M_ > 0) {
        int* iw = Wt.index.data() + i * sw;
        wall_grid_.for_each(xi, Rs, [&](Index b, const Vec&, double) {
          if (cw < sw) iw[cw] = int(b);
          ++cw;
        });
      }
      Wt.count[i] = cw;
      need_w = std::max(need_w, cw);
    }
    if (need_f <= sf && need_w <= sw) break;
    F.stride = std::max<Index>(sf, Index(need_f) + need_f / 4 + 4);
    Wt.stride = std::max<Index>(sw, Index(need_w) + need_w / 4 + 4);
  }
  build_chunks(
      N_,
      [&](Index i) {
        const int* idx = fluid_pairs_.index.data() + i * fluid_pairs_.stride;
        Index r = i;
        for (int c = 0; c < fluid_pairs_.count[i]; ++c) r = std::max<Index>(r, idx[c]);
        return r;
      },
      chunk_);
  x_built_ = x_;
  rebuild_ = false;
}

// Densities, pressures and W'/d of every listed pair (the kernel is exactly
// 0 beyond 2h, so the skin's extra candidates add nothing).
template <int D>
void SPHFluid<D>::search() {
  if (rebuild_) build_lists();
  const double m = prm_.mass(), B = prm_.tait_B(), W0 = kernel_.W(0.0);
  const double* X = x_.data();
  const double* XB = xb_.data();
  const KernelConst ker(kernel_);
  SPHPairTable& F = fluid_pairs_;
  SPHPairTable& Wt = wall_pairs_;
  double* rho = rho_.data();
  const Index chunks = Index(chunk_.size()) - 1;
#pragma omp parallel num_threads(nt_) if (N_ >= kParallelMin)
  {
#pragma omp for schedule(static)
    for (Index i = 0; i < N_; ++i) rho[i] = 0.0;
    in_two_phases(chunks, [&](Index c) {
      sim_density_pairs<D>(chunk_[c], chunk_[c + 1], X, F.count.data(), F.index.data(), F.stride, ker,
                           F.near_count.data(), F.near.data(), F.a.data(), rho);
    });
#pragma omp for schedule(static)
    for (Index i = 0; i < N_; ++i) {
      double r = W0 + rho[i];
      if (M_ > 0) {
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
      p_[i] = std::max(0.0, B * (tait_ratio(r / prm_.rho0, prm_.gamma) - 1.0));
      pr2_[i] = p_[i] / (r * r);
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
  if (rebuild_) build_lists();
  const double R = 2 * prm_.h, R2 = R * R;
  const double* X = x_.data();
  const double* XB = xb_.data();
  const SPHPairTable& F = fluid_pairs_;
  const SPHPairTable& Wt = wall_pairs_;
  nb.fluid_start.assign(N_ + 1, 0);
  nb.wall_start.assign(N_ + 1, 0);
  Index* fs = nb.fluid_start.data();
  Index* ws = nb.wall_start.data();
  for (Index i = 0; i < N_; ++i) {
    const Vec xi = pt<D>(X, i);
    const int* idx = F.index.data() + i * F.stride;
    for (int k = 0; k < F.count[i]; ++k)
      if ((xi - pt<D>(X, idx[k])).squaredNorm() < R2) {
        ++fs[i + 1];
        ++fs[idx[k] + 1];
      }
    if (M_ > 0) {
      const int* iw = Wt.index.data() + i * Wt.stride;
      for (int k = 0; k < Wt.count[i]; ++k) ws[i + 1] += (xi - pt<D>(XB, iw[k])).squaredNorm() < R2;
    }
  }
  for (Index i = 0; i < N_; ++i) {
    fs[i + 1] += fs[i];
    ws[i + 1] += ws[i];
  }
  nb.fluid.resize(fs[N_]);
  nb.wall.resize(ws[N_]);
  cursor_.assign(fs, fs + N_);
  for (Index i = 0; i < N_; ++i) {
    const Vec xi = pt<D>(X, i);
    const int* idx = F.index.data() + i * F.stride;
    for (int k = 0; k < F.count[i]; ++k) {
      const int j = idx[k];
      if ((xi - pt<D>(X, j)).squaredNorm() < R2) {
        nb.fluid[cursor_[i]++] = j;
        nb.fluid[cursor_[j]++] = i;
      }
    }
    if (M_ > 0) {
      const int* iw = Wt.index.data() + i * Wt.stride;
      Index c = ws[i];
      for (int k = 0; k < Wt.count[i]; ++k)
        if ((xi - pt<D>(XB, iw[k])).squaredNorm() < R2) nb.wall[c++] = iw[k];
    }
  }
}

template <int D>
void SPHFluid<D>::step(const double* force) {
  const double m = prm_.mass(), dt = prm_.dt;
  const double t0 = now_seconds();
  nt_ = team_.begin();
  search();
  const double* X = x_.data();
  const double* V = v_.data();
  const double* XB = xb_.data();
  const double alpha = prm_.viscosity, h = prm_.h, c0 = prm_.c0, eps = 0.01 * h * h;
  const SPHPairTable& F = fluid_pairs_;
  const SPHPairTable& Wt = wall_pairs_;
  const double* rho = rho_.data();
  const double* PR = pr2_.data();
  double* A = a_.data();
  const Index chunks = Index(chunk_.size()) - 1;
#pragma omp parallel num_threads(nt_) if (N_ >= kParallelMin)
  {
#pragma omp for schedule(static)
    for (Index k = 0; k < D * N_; ++k) A[k] = 0.0;
    in_two_phases(chunks, [&](Index c) {
      sim_force_pairs<D>(chunk_[c], chunk_[c + 1], X, V, PR, rho, F.near_count.data(), F.near.data(), F.a.data(),
                         F.stride, m, h, alpha, c0, eps, A);
    });
#pragma omp for schedule(static)
    for (Index i = 0; i < N_; ++i) {
      Vec a = prm_.gravity;
      if (force) a += pt<D>(force, i) / m;
      a += pt<D>(A, i);
      if (M_ > 0) {
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
  team_.end(now_seconds() - t0);  // the parallel part of the step
  // symplectic Euler, then the sphere and the domain box
  double vmax = 0.0;
  bool bad = false;
  // (serial: a few microseconds of streaming; a parallel region costs more on a loaded machine)
  for (Index k = 0; k < D * N_; ++k) {
    const double v = v_[k] + dt * a_[k];
    v_[k] = v;
    bad = bad || !std::isfinite(v);
    vmax = std::max(vmax, std::abs(v));
  }
  ++steps_;
  if (bad || vmax > 10.0 * prm_.c0)
    throw std::domain_error("SPH step " + std::to_string(steps_) + " diverged (speed " +
                            (bad ? std::string("non-finite") : std::to_string(vmax)) +
                            " > 10 c0): reduce dt or the control forces");
  if (sphere_on_) sc_ += dt * sv_;
  bad = false;
  double moved = 0.0;  // largest squared displacement since the list build
  for (Index i = 0; i < N_; ++i) {
    Eigen::Map<Vec> xm(x_.data() + D * i), vm(v_.data() + D * i);
    Vec xi = xm + dt * vm, vi = vm;
    if (sphere_on_) {
      const Vec r = xi - sc_;
      const double d = r.norm();
      if (d < sr_) {
        Vec nrm = Vec::Zero();
        if (d > 1e-12)
          nrm = r / d;
        else
          nrm[D - 1] = 1.0;
        xi = sc_ + sr_ * nrm;
        const double vn = (vi - sv_).dot(nrm);
        if (vn < 0) vi -= vn * nrm;
      }
    }
    for (int k = 0; k < D; ++k) {
      if (xi[k] < prm_.lo[k]) {
        xi[k] = prm_.lo[k];
        vi[k] = std::max(vi[k], 0.0);
      }
      if (xi[k] > prm_.hi[k]) {
        xi[k] = prm_.hi[k];
        vi[k] = std::min(vi[k], 0.0);
      }
    }
    bad = bad || !xi.allFinite();
    moved = std::max(moved, (xi - pt<D>(x_built_.data(), i)).squaredNorm());
    xm = xi;
    vm = vi;
  }
  if (!(moved <= 0.25 * skin_ * skin_)) rebuild_ = true;
  if (bad) throw std::domain_error("SPH step " + std::to_string(steps_) + " produced non-finite positions");
}

template class SPHFluid<2>;
template class SPHFluid<3>;

}  // namespace directable
