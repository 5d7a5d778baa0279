#pragma once
// Private to the SPH sources (simulator and prediction model): the kernel
// arithmetic they share, the two-phase pair scatter, and their pair loops.
// Internal linkage: every source file that includes it gets its own copy.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "directable/core/types.hpp"
#include "directable/models/sph/kernel.hpp"

namespace directable {

namespace {
// Below this many particles a parallel region costs more than the loop
// (measured: 100 particles, 2 loaded cores: 150x slower with threads).
constexpr Index kParallelMin = 2048;

template <int D>
using VecD = Eigen::Matrix<double, D, 1>;

template <int D>
inline VecD<D> pt(const double* d, Index i) {
  return Eigen::Map<const VecD<D>>(d + D * i);
}

// (rho / rho0)^gamma; the usual gamma = 7 without a pow call.
inline double tait_ratio(double t, double gamma) {
  if (gamma == 7.0) {
    const double t2 = t * t, t4 = t2 * t2;
    return t4 * t2 * t;
  }
  return std::pow(t, gamma);
}

// W(d), a = W'(d)/d and b = (W''(d) - W'(d)/d)/d^2 of the cubic spline,
// branch-free: with t2 = max(2 - q, 0), t1 = max(1 - q, 0),
//   W = sigma/4 (t2^3 - 4 t1^3), W' = sigma/(4h) (12 t1^2 - 3 t2^2),
//   W'' = sigma/(4h^2) (6 t2 - 24 t1);
// a = b = 0 for coincident points (no direction: no force).
struct KernelTerms {
  double W, a, b;
};
struct KernelConst {
  double inv_h, w, dw, d2w;
  template <int D>
  explicit KernelConst(const CubicSpline<D>& k)
      : inv_h(1.0 / k.h), w(0.25 * k.sigma), dw(0.25 * k.sigma / k.h), d2w(0.25 * k.sigma / (k.h * k.h)) {}
  KernelTerms operator()(double d) const {
    const double q = d * inv_h;
    const double t2 = std::max(2.0 - q, 0.0), t1 = std::max(1.0 - q, 0.0);
    const double t22 = t2 * t2, t12 = t1 * t1;
    const double id = d > 1e-12 ? 1.0 / d : 0.0;
    const double a = dw * (12.0 * t12 - 3.0 * t22) * id;
    return {w * (t22 * t2 - 4.0 * t12 * t1), a, (d2w * (6.0 * t2 - 24.0 * t1) - a) * id * id};
  }
};
template <int D>
inline KernelTerms kernel_terms(const CubicSpline<D>& k, double d) {
  return KernelConst(k)(d);
}

// The kernel terms of n squared distances, SIMD in registers (8 at a time):
// W, a = W'/d and b = (W'' - W'/d)/d^2 (b may be null), as KernelConst
// gives them (a = b = 0 for d <= 1e-12).
inline void kernel_block(const double* d2, Index n, const KernelConst& k, double* W, double* a, double* b) {
  using A8 = Eigen::Array<double, 8, 1>;
  auto group = [&k](const double* r2p, double* Wp, double* ap, double* bp) {
    const A8 r2 = Eigen::Map<const A8>(r2p);
    const A8 d = r2.sqrt(), id = d.inverse();
    const A8 q = d * k.inv_h;
    const A8 t2 = (2.0 - q).max(0.0), t1 = (1.0 - q).max(0.0);
    const A8 av = k.dw * (12.0 * t1.square() - 3.0 * t2.square()) * id;
    Eigen::Map<A8>{Wp} = k.w * (t2.cube() - 4.0 * t1.cube());
    Eigen::Map<A8>{ap} = av;
    if (bp) Eigen::Map<A8>{bp} = (k.d2w * (6.0 * t2 - 24.0 * t1) - av) * id.square();
    // coincident points (d <= 1e-12; or NaN): no direction, no force. Rare:
    // a cheap test on d^2 (2e-24 > (1e-12)^2 with room for rounding) first
    bool near = false;
    for (int l = 0; l < 8; ++l) near |= !(r2p[l] > 2e-24);
    if (near)
      for (int l = 0; l < 8; ++l)
        if (!(d[l] > 1e-12)) {
          ap[l] = 0.0;
          if (bp) bp[l] = 0.0;
        }
  };
  Index p = 0;
  for (; p + 8 <= n; p += 8) group(d2 + p, W + p, a + p, b ? b + p : nullptr);
  if (p < n) {  // the last partial group through padded copies (1e300: beyond the support)
    alignas(64) double r2[8], tw[8], ta[8], tb[8];
    for (int l = 0; l < 8; ++l) r2[l] = p + l < n ? d2[p + l] : 1e300;
    group(r2, tw, ta, b ? tb : nullptr);
    for (Index l = 0; p + l < n; ++l) {
      W[p + l] = tw[l];
      a[p + l] = ta[l];
      if (b) b[p + l] = tb[l];
    }
  }
}

template <int D>
std::string vec_str(const VecD<D>& v) {
  std::string s = "(";
  for (int k = 0; k < D; ++k) s += (k ? ", " : "") + std::to_string(v[k]);
  return s + ")";
}

// The pair passes (simulator and prediction model) evaluate each symmetric
// pair i < j once and add its term to both particles: half the kernel
// evaluations of per-particle gathers over full lists, and no per-pair
// scratch (storing pair terms and gathering them back cost more memory
// traffic than the arithmetic it saved). Pairs are grouped by their first
// particle into chunks of consecutive particles whose pairs reach at most
// into the next chunk (build_chunks): even chunks touch disjoint particles
// and run in parallel, then the odd ones. Every particle receives its terms
// in one fixed order whatever the team, so results do not depend on the
// thread count. Called inside a parallel region (orphaned worksharing).
template <class F>
inline void in_two_phases(Index chunks, F f) {
  for (Index phase = 0; phase < 2; ++phase) {
#pragma omp for schedule(dynamic, 1)
    for (Index c = phase; c < chunks; c += 2) f(c);
  }
}

// Chunks for in_two_phases: chunk c holds particles ch[c] .. ch[c+1] and its
// pairs end before ch[c+2]; reach(i) is particle i's largest partner (or i).
// At least kChunkMin particles each: a fixed size, not the team's, since the
// order of the sums must not depend on the thread count. Spatially ordered
// particles (a lattice, a cell-sorted fill) give chunks of about that size;
// scrambled ones fewer and larger (less parallel, the same results).
template <class Reach>
void build_chunks(Index N, Reach reach, std::vector<Index>& ch) {
  constexpr Index kChunkMin = 256;
  ch.assign(1, 0);
  ch.push_back(std::min(N, kChunkMin));
  for (Index c = 0; ch.back() < N; ++c) {
    Index r = ch[c + 1] - 1;
    for (Index i = ch[c]; i < ch[c + 1]; ++i) r = std::max(r, reach(i));
    ch.push_back(std::min(N, std::max(ch[c + 1] + kChunkMin, r + 1)));
  }
}

// ------------------------------------------------------------------ pair kernels
// The pair loops of the simulator and the prediction model over particles
// i0 .. i1 (one chunk): free functions, so that their pointer arguments stay
// in registers (Eigen's packet stores may alias anything: pointers reached
// through references or members would be reloaded after every store).

// Simulator densities: W of each listed pair (j > i) to both particles, per
// block of whole particles' candidates: squared distances (gathers), the
// kernel terms (SIMD), W scattered; the pairs within 2h (W > 0) are
// compacted with their W'/d into near / a (branch-free: the candidates
// beyond 2h come in no predictable order), so that the force pass skips the
// skin's candidates.
template <int D>
void sim_density_pairs(Index i0, Index i1, const double* X, const int* count, const int* index, Index stride,
                       const KernelConst ker, int* near_count, int* near, double* a, double* rho) {
  constexpr Index kBlock = 256;
  alignas(64) double d2[kBlock], W[kBlock], A[kBlock];
  for (Index i = i0; i < i1;) {
    Index n = 0, ie = i;
    for (; ie < i1 && n + count[ie] <= kBlock; n += count[ie], ++ie) {
      const VecD<D> xk = pt<D>(X, ie);
      const int* idx = index + ie * stride;
      for (int q = 0; q < count[ie]; ++q) d2[n + q] = (xk - pt<D>(X, idx[q])).squaredNorm();
    }
    if (ie == i) {  // more candidates than a block (a grown table): this particle in scalar form
      const VecD<D> xk = pt<D>(X, i);
      const int* idx = index + i * stride;
      double acc = 0.0;
      int c = 0;
      for (int q = 0; q < count[i]; ++q) {
        const KernelTerms t = ker((xk - pt<D>(X, idx[q])).norm());
        acc += t.W;
        rho[idx[q]] += t.W;
        near[i * stride + c] = idx[q];
        a[i * stride + c] = t.a;
        c += t.W > 0.0;
      }
      rho[i] += acc;
      near_count[i] = c;
      ++i;
      continue;
    }
    kernel_block(d2, n, ker, W, A, nullptr);
    for (Index e = 0; i < ie; ++i) {
      const int* idx = index + i * stride;
      int* nr = near + i * stride;
      double* ai = a + i * stride;
      double acc = 0.0;
      int c = 0;
      for (int q = 0; q < count[i]; ++q, ++e) {
        const int j = idx[q];
        acc += W[e];
        rho[j] += W[e];
        nr[c] = j;
        ai[c] = A[e];
        c += W[e] > 0.0;
      }
      rho[i] += acc;
      near_count[i] = c;
    }
  }
}

// Simulator pressure + Monaghan viscosity: c_ij is symmetric, the force
// m c_ij W'/d (x_i - x_j) antisymmetric (subtracted from i, added to j).
template <int D>
void sim_force_pairs(Index i0, Index i1, const double* X, const double* V, const double* PR, const double* rho,
                     const int* count, const int* index, const double* a, Index stride, double m, double h,
                     double alpha, double c0, double eps, double* A) {
  for (Index i = i0; i < i1; ++i) {
    const VecD<D> xi = pt<D>(X, i), vi = pt<D>(V, i);
    const double Pi = PR[i], rhoi = rho[i];
    const int* idx = index + i * stride;
    const double* aa = a + i * stride;
    VecD<D> fi = VecD<D>::Zero();
    for (int k = 0; k < count[i]; ++k) {
      const int j = idx[k];
      const VecD<D> r = xi - pt<D>(X, j);
      // Monaghan viscosity for approaching pairs (vr < 0), branch-free: the
      // sign of vr is random in a fluid at rest, a branch mispredicted half
      // the pairs (adds -0 otherwise)
      const double vr = std::min((vi - pt<D>(V, j)).dot(r), 0.0);
      const double c = Pi + PR[j] - alpha * c0 * h * vr / ((r.squaredNorm() + eps) * (0.5 * (rhoi + rho[j])));
      const VecD<D> f = (m * c * aa[k]) * r;
      fi += f;
      Eigen::Map<VecD<D>>(A + D * j) += f;
    }
    Eigen::Map<VecD<D>>(A + D * i) -= fi;
  }
}

// Prediction: kernel terms of the symmetric pairs of particles i0 .. i1
// (pair_start PS, partners PJ), per block of consecutive pairs: squared
// distances (gathers), the kernel terms (SIMD), W scattered to both
// particles (each first particle's run summed in a register: a
// read-modify-write per pair would chain through memory).
template <int D>
void pred_kernel_pairs(Index i0, Index i1, const Index* PS, const int* PJ, const double* X, const KernelConst ker,
                       double* pa, double* pb, double* sum) {
  constexpr Index kBlock = 256;
  alignas(64) double d2[kBlock], W[kBlock];
  Index i = i0;  // the first particle of the block's first pair
  for (Index b0 = PS[i0], end = PS[i1]; b0 < end; b0 += kBlock) {
    const Index b1 = std::min(b0 + kBlock, end);
    while (PS[i + 1] <= b0) ++i;
    for (Index k = i, p = b0; p < b1; ++k) {
      const VecD<D> xk = pt<D>(X, k);
      for (const Index e = std::min(PS[k + 1], b1); p < e; ++p) d2[p - b0] = (xk - pt<D>(X, PJ[p])).squaredNorm();
    }
    kernel_block(d2, b1 - b0, ker, W, pa + b0, pb + b0);
    for (Index k = i, p = b0; p < b1; ++k) {
      double acc = 0.0;
      for (const Index e = std::min(PS[k + 1], b1); p < e; ++p) {
        acc += W[p - b0];
        sum[PJ[p]] += W[p - b0];
      }
      sum[k] += acc;
    }
  }
}

// Prediction: (P_i + P_j) W'/d (x_i - x_j), added to i, subtracted from j.
template <int D>
void pred_accel_pairs(Index i0, Index i1, const Index* PS, const int* PJ, const double* X, const double* P,
                      const double* pa, double* F) {
  for (Index i = i0; i < i1; ++i) {
    const VecD<D> xi = pt<D>(X, i);
    const double Pi = P[i];
    VecD<D> fi = VecD<D>::Zero();
    for (Index p = PS[i]; p < PS[i + 1]; ++p) {
      const int j = PJ[p];
      const VecD<D> f = ((Pi + P[j]) * pa[p]) * (xi - pt<D>(X, j));
      fi += f;
      Eigen::Map<VecD<D>>(F + D * j) -= f;
    }
    Eigen::Map<VecD<D>>(F + D * i) += fi;
  }
}

// Prediction VJP, density part: s = W'/d (mu_i - mu_j).(x_i - x_j) to both.
template <int D>
void vjp_density_pairs(Index i0, Index i1, const Index* PS, const int* PJ, const double* X, const double* MU,
                       const double* pa, double* bar) {
  for (Index k = i0; k < i1; ++k) {
    const VecD<D> xk = pt<D>(X, k), mk = pt<D>(MU, k);
    double sk = 0.0;
    for (Index p = PS[k]; p < PS[k + 1]; ++p) {
      const int j = PJ[p];
      const double s = pa[p] * (mk - pt<D>(MU, j)).dot(xk - pt<D>(X, j));
      sk += s;
      bar[j] += s;
    }
    bar[k] += sk;
  }
}

// Prediction VJP, force part: T = -(P_k + P_j) H dm + (bar_k + bar_j) a r
// with H dm = a dm + b r (r.dm), added to k, subtracted from j; evaluated as
// T = c1 dm + c2 r, c1 = -(P_k + P_j) a, c2 = (bar_k + bar_j) a - (P_k + P_j) b (r.dm).
template <int D>
void vjp_force_pairs(Index i0, Index i1, const Index* PS, const int* PJ, const double* X, const double* MU,
                     const double* P, const double* bar, const double* pa, const double* pb, double* G) {
  for (Index k = i0; k < i1; ++k) {
    const VecD<D> xk = pt<D>(X, k), mk = pt<D>(MU, k);
    const double Pk = P[k], bk = bar[k];
    VecD<D> gk = VecD<D>::Zero();
    for (Index p = PS[k]; p < PS[k + 1]; ++p) {
      const int j = PJ[p];
      const VecD<D> r = xk - pt<D>(X, j), dm = mk - pt<D>(MU, j);
      const double a = pa[p], Ps = Pk + P[j];
      const VecD<D> T = (-Ps * a) * dm + ((bk + bar[j]) * a - Ps * pb[p] * r.dot(dm)) * r;
      gk += T;
      Eigen::Map<VecD<D>>(G + D * j) -= T;
    }
    Eigen::Map<VecD<D>>(G + D * k) += gk;
  }
}
}  // namespace

}  // namespace directable
