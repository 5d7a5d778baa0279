// Riccati step for small n on padded row-major buffers.
//
// At n = 48, s = 24 a step is ~0.57 MFLOP spread over a Cholesky, a TRMM,
// two SYRK-like products and two triangular solves, each on 24..72-sized
// matrices. Eigen spends most of such a product packing operands and
// handling edges; here every product is a 4 x 12 register tile accumulated
// as broadcast x contiguous-vector FMAs straight from the operands (rows
// padded to 4 doubles, so there are no edges inside the buffers), and the
// symmetric results are formed one triangle at a time with the additions
// (R, N, Q), the symmetrization and the mirror done on the tile in
// registers.
#include "riccati_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <new>
#include <type_traits>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define DIRECTABLE_RICCATI_AVX2 1
#endif

#if defined(__GNUC__) || defined(__clang__)
#define DR_INLINE inline __attribute__((always_inline))
#define DR_UNROLL _Pragma("GCC unroll 16")
#else
#define DR_INLINE inline
#define DR_UNROLL
#endif

#ifdef RK_PROFILE
#include <x86intrin.h>
namespace directable { extern unsigned long long g_stage[16]; }
#define RK_MARK(k) { unsigned long long t_ = __rdtsc(); directable::g_stage[k] += t_ - t_last; t_last = t_; }
#define RK_START unsigned long long t_last = __rdtsc();
#else
#define RK_MARK(k)
#define RK_START
#endif

namespace directable::detail {

namespace {

// Four doubles: AVX2/FMA registers where the build targets them, else plain
// arrays (portable builds; the compiler vectorizes what it can).
#ifdef DIRECTABLE_RICCATI_AVX2
struct V4 {
  __m256d v;
};
alignas(32) constexpr long long kLaneMask[8] = {-1, -1, -1, -1, 0, 0, 0, 0};
DR_INLINE __m256i first_lanes(int count) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kLaneMask + 4 - count));
}
DR_INLINE V4 load(const double* p) { return {_mm256_loadu_pd(p)}; }
DR_INLINE V4 load_first(const double* p, int count) { return {_mm256_maskload_pd(p, first_lanes(count))}; }
DR_INLINE void store(double* p, V4 a) { _mm256_storeu_pd(p, a.v); }
DR_INLINE V4 bcast(const double* p) { return {_mm256_broadcast_sd(p)}; }
DR_INLINE V4 set1(double x) { return {_mm256_set1_pd(x)}; }
DR_INLINE V4 zero() { return {_mm256_setzero_pd()}; }
DR_INLINE V4 add(V4 a, V4 b) { return {_mm256_add_pd(a.v, b.v)}; }
DR_INLINE V4 mul(V4 a, V4 b) { return {_mm256_mul_pd(a.v, b.v)}; }
DR_INLINE V4 fma(V4 a, V4 b, V4 c) { return {_mm256_fmadd_pd(a.v, b.v, c.v)}; }   // c + a b
DR_INLINE V4 fnma(V4 a, V4 b, V4 c) { return {_mm256_fnmadd_pd(a.v, b.v, c.v)}; }  // c - a b
DR_INLINE V4 neg(V4 a) { return {_mm256_xor_pd(a.v, _mm256_set1_pd(-0.0))}; }
// lane u from a where u >= t, else from b
DR_INLINE V4 upper_lanes(V4 a, V4 b, int t) { return {_mm256_blendv_pd(a.v, b.v, _mm256_castsi256_pd(first_lanes(t)))}; }
DR_INLINE void pin(V4& a) { __asm__("" : "+x"(a.v)); }
DR_INLINE void transpose(V4 (&r)[4]) {
  const __m256d t0 = _mm256_unpacklo_pd(r[0].v, r[1].v), t1 = _mm256_unpackhi_pd(r[0].v, r[1].v);
  const __m256d t2 = _mm256_unpacklo_pd(r[2].v, r[3].v), t3 = _mm256_unpackhi_pd(r[2].v, r[3].v);
  r[0].v = _mm256_permute2f128_pd(t0, t2, 0x20);
  r[1].v = _mm256_permute2f128_pd(t1, t3, 0x20);
  r[2].v = _mm256_permute2f128_pd(t0, t2, 0x31);
  r[3].v = _mm256_permute2f128_pd(t1, t3, 0x31);
}
#else
struct V4 {
  double v[4];
};
DR_INLINE V4 load(const double* p) { return {{p[0], p[1], p[2], p[3]}}; }
DR_INLINE V4 load_first(const double* p, int count) {
  V4 r{{0.0, 0.0, 0.0, 0.0}};
  for (int u = 0; u < count; ++u) r.v[u] = p[u];
  return r;
}
DR_INLINE void store(double* p, V4 a) {
  DR_UNROLL
  for (int u = 0; u < 4; ++u) p[u] = a.v[u];
}
DR_INLINE V4 set1(double x) { return {{x, x, x, x}}; }
DR_INLINE V4 bcast(const double* p) { return set1(*p); }
DR_INLINE V4 zero() { return set1(0.0); }
#define DR_LANEWISE(expr)                   \
  V4 r;                                     \
  for (int u = 0; u < 4; ++u) r.v[u] = expr; \
  return r
DR_INLINE V4 add(V4 a, V4 b) { DR_LANEWISE(a.v[u] + b.v[u]); }
DR_INLINE V4 mul(V4 a, V4 b) { DR_LANEWISE(a.v[u] * b.v[u]); }
DR_INLINE V4 fma(V4 a, V4 b, V4 c) { DR_LANEWISE(c.v[u] + a.v[u] * b.v[u]); }
DR_INLINE V4 fnma(V4 a, V4 b, V4 c) { DR_LANEWISE(c.v[u] - a.v[u] * b.v[u]); }
DR_INLINE V4 neg(V4 a) { DR_LANEWISE(-a.v[u]); }
DR_INLINE V4 upper_lanes(V4 a, V4 b, int t) { DR_LANEWISE(u >= t ? a.v[u] : b.v[u]); }
#undef DR_LANEWISE
DR_INLINE void transpose(V4 (&r)[4]) {
  DR_UNROLL
  for (int t = 0; t < 4; ++t)
    DR_UNROLL
    for (int u = t + 1; u < 4; ++u) std::swap(r[t].v[u], r[u].v[t]);
}
#endif

constexpr Index round4(Index x) { return (x + 3) & ~Index(3); }

// acc[t][v] += (or -= with Neg) sum_{k0 <= k < k1} x[k xk + t xt] y[k ldy + 4v + (0..3)].
// With Masked the last vector of y is read for its first `tail` lanes only.
// At NV = 3 that is 12 accumulators, 3 vectors of y and a broadcast: all 16
// AVX registers. The y vectors are pinned in registers: left alone, GCC
// folds their loads into the FMAs, 12 loads per k instead of 3, and the
// loads, not the FMAs, then bound the loop.
template <int NV, bool Neg, bool Masked = false>
DR_INLINE void mac(V4 (&acc)[4][NV], const double* x, Index xk, Index xt, const double* y, Index ldy, Index k0,
                   Index k1, int tail = 4) {
  const double* xp = x + k0 * xk;
  const double* yp = y + k0 * ldy;
  for (Index k = k0; k < k1; ++k, xp += xk, yp += ldy) {
    V4 yv[NV];
    DR_UNROLL
    for (int v = 0; v < NV; ++v) {
      yv[v] = (Masked && v == NV - 1) ? load_first(yp + 4 * v, tail) : load(yp + 4 * v);
      pin(yv[v]);
    }
    DR_UNROLL
    for (int t = 0; t < 4; ++t) {
      const V4 b = bcast(xp + t * xt);
      DR_UNROLL
      for (int v = 0; v < NV; ++v) acc[t][v] = Neg ? fnma(b, yv[v], acc[t][v]) : fma(b, yv[v], acc[t][v]);
    }
  }
}

template <int NV>
DR_INLINE void clear(V4 (&acc)[4][NV]) {
  DR_UNROLL
  for (int t = 0; t < 4; ++t)
    DR_UNROLL
    for (int v = 0; v < NV; ++v) acc[t][v] = zero();
}

// f(std::integral_constant<int, NV>) for NV = min(nv, 3) >= 1: tiles 12 columns wide, narrower at the end.
template <class F>
DR_INLINE void with_width(Index nv, F&& f) {
  if (nv >= 3)
    f(std::integral_constant<int, 3>{});
  else if (nv == 2)
    f(std::integral_constant<int, 2>{});
  else
    f(std::integral_constant<int, 1>{});
}

// The accumulators go through memory once for the epilogue, which indexes
// the tile's 4 x 4 blocks at run time: indexing the registers themselves
// would make the compiler keep them in memory during the accumulation.
template <int NV>
DR_INLINE void spill(const V4 (&acc)[4][NV], double* tile) {
  DR_UNROLL
  for (int t = 0; t < 4; ++t)
    DR_UNROLL
    for (int v = 0; v < NV; ++v) store(tile + t * 12 + 4 * v, acc[t][v]);
}
DR_INLINE void block(const double* tile, int v, V4 (&blk)[4]) {
  DR_UNROLL
  for (int t = 0; t < 4; ++t) blk[t] = load(tile + t * 12 + 4 * v);
}

// Upper Cholesky factor in place, A = R'R, on rows [0, n) of a row-major
// matrix whose columns [n, round4(n)) are zero; only the upper triangle is
// read. The rows are updated 4 pivots at a time from column (r & ~3) on,
// so within each diagonal 4 x 4 block the strict lower entries are
// scratch: they are zeroed at the end (for all round4(n) rows), so that the
// products may read whole 4-row blocks of R. False when a pivot is not
// positive, as Eigen's LLT (a NaN passes: the finite checks report it).
bool cholesky_upper(double* a, Index n, Index ld) {
  const Index nv = round4(n);
  for (Index j0 = 0; j0 < n; j0 += 4) {
    const Index j1 = std::min(j0 + 4, n), c1 = j0 + 4;
    for (Index j = j0; j < j1; ++j) {
      double* rj = a + j * ld;
      const double d = rj[j];
      if (d <= 0.0) return false;
      const double r = std::sqrt(d), inv = 1.0 / r;
      rj[j] = r;
      for (Index c = j + 1; c < c1; ++c) rj[c] *= inv;
      const V4 iv = set1(inv);
      for (Index c = c1; c < nv; c += 4) store(rj + c, mul(load(rj + c), iv));
      for (Index u = j + 1; u < j1; ++u) {
        double* ru = a + u * ld;
        const double f = rj[u];
        for (Index c = u; c < c1; ++c) ru[c] -= f * rj[c];
        const V4 fv = set1(f);
        for (Index c = c1; c < nv; c += 4) store(ru + c, fnma(fv, load(rj + c), load(ru + c)));
      }
    }
    if (c1 >= n) break;
    const double *p0 = a + j0 * ld, *p1 = p0 + ld, *p2 = p1 + ld, *p3 = p2 + ld;
    for (Index r = c1; r < n; ++r) {
      double* rr = a + r * ld;
      const V4 f0 = bcast(p0 + r), f1 = bcast(p1 + r), f2 = bcast(p2 + r), f3 = bcast(p3 + r);
      for (Index c = r & ~Index(3); c < nv; c += 4) {
        V4 x = load(rr + c);
        x = fnma(f0, load(p0 + c), x);
        x = fnma(f1, load(p1 + c), x);
        x = fnma(f2, load(p2 + c), x);
        x = fnma(f3, load(p3 + c), x);
        store(rr + c, x);
      }
    }
  }
  for (Index j0 = 0; j0 < nv; j0 += 4)
    for (Index t = 1; t < 4; ++t) std::fill(a + (j0 + t) * ld + j0, a + (j0 + t) * ld + j0 + t, 0.0);
  return true;
}

// U = X [B A] (U: round4(n) x ldu, B part in columns [0, s4), A part from
// s4 on; pads zero). X (row-major, leading dim ldx, round4(n) rows) is
// upper triangular when `upper` (its k < r entries are then not read, except
// the zeroed ones of the diagonal 4 x 4 blocks), else full. B (n x s) and A
// (n x n) are read in place, row-major.
void times_BA(const double* X, Index ldx, bool upper, const double* B, Index s, const double* A, Index n, double* U,
              Index ldu, Index s4, PrefetchQueue& pf, Index pf_rate) {
  for (Index r0 = 0; r0 < n; r0 += 4) {
    const Index k0 = upper ? r0 : 0;
    const double* x = X + r0 * ldx;
    auto part = [&](const double* Y, Index cols, double* Uo) {
      for (Index c = 0; c < cols; c += 12) {
        const Index rem = cols - c;
        with_width((rem + 3) / 4, [&](auto w) {
          constexpr int NV = decltype(w)::value;
          const int tail = rem >= 4 * NV ? 4 : int(rem - 4 * (NV - 1));
          V4 acc[4][NV];
          clear(acc);
          if (tail == 4)
            mac<NV, false>(acc, x, 1, ldx, Y + c, cols, k0, n);
          else
            mac<NV, false, true>(acc, x, 1, ldx, Y + c, cols, k0, n, tail);
          DR_UNROLL
          for (int t = 0; t < 4; ++t)
            DR_UNROLL
            for (int v = 0; v < NV; ++v) store(Uo + (r0 + t) * ldu + c + 4 * v, acc[t][v]);
        });
        pf.pump(pf_rate);
      }
    };
    part(B, s, U);
    part(A, n, U + s4);
  }
}

Index tiles(Index rows, Index cols) { return (rows + 3) / 4 * ((cols + 11) / 12); }

}  // namespace

void PrefetchQueue::add(const void* p, Index bytes, bool for_write) {
  if (count_ == kMax || bytes <= 0) return;
  const auto* b = static_cast<const char*>(p);
  const auto* first = reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(b) & ~std::uintptr_t(63));
  r_[count_++] = {first, b + bytes, for_write};
  lines_ += (b + bytes - first + 63) / 64;
}

void PrefetchQueue::pump(Index count) {
  for (; count > 0 && cur_ < count_; --count) {
    Range& r = r_[cur_];
#if defined(__GNUC__) || defined(__clang__)
    if (r.write)
      __builtin_prefetch(r.p, 1, 3);
    else
      __builtin_prefetch(r.p, 0, 2);
#endif
    r.p += 64;
    if (r.p >= r.end) ++cur_;
  }
}

bool compact_riccati_applies(Index n, Index s) { return n <= 96 && s <= 96; }

CompactRiccati::Buffer CompactRiccati::buffer(Index count) {
  const std::size_t bytes = (std::size_t(count) * sizeof(double) + 63) / 64 * 64;
  auto* p = static_cast<double*>(std::aligned_alloc(64, bytes ? bytes : 64));
  if (!p) throw std::bad_alloc();
  std::fill(p, p + count, 0.0);
  return Buffer(p);
}

CompactRiccati::CompactRiccati(Index n, Index s)
    : n_(n),
      s_(s),
      n4_(round4(n)),
      s4_(round4(s)),
      m4_(round4(s) + round4(n)),
      P_(buffer(n4_ * n4_)),
      U_(buffer(n4_ * m4_)),
      BA_(buffer(n4_ * m4_)),
      H_(buffer(s4_ * s4_)),
      R_(buffer(s4_ * s4_)),
      Y_(buffer(s4_ * n4_)),
      K_(buffer(s4_ * n4_)) {
  // TRMM, [H | G] (about half of an s4 x m4 grid), the two solves, P (half of n4 x n4)
  tiles_ = tiles(n, s) + tiles(n, n) + (tiles(s4_, m4_) + s4_ / 4) / 2 + 2 * tiles(s4_, n4_) +
           (tiles(n4_, n4_) + n4_ / 4) / 2;
}

void CompactRiccati::load_P(const double* M) {
  std::fill(P_.get(), P_.get() + n4_ * n4_, 0.0);
  for (Index r = 0; r < n_; ++r) std::copy(M + r * n_, M + (r + 1) * n_, P_.get() + r * n4_);
}

void CompactRiccati::set_R(const double* const* R, const double* scale, int count) {
  RK_START
  const Index s = s_, s4 = s4_;
  double* M = R_.get();
  // M = sum_k scale_k R_k, then sym(M) a 4 x 4 block pair at a time.
  for (Index r = 0; r < s; ++r) {
    for (Index c = 0; c < s; c += 4) {
      const int lanes = int(std::min<Index>(4, s - c));
      V4 x = zero();
      for (int k = 0; k < count; ++k) x = fma(set1(scale[k]), load_first(R[k] + r * s + c, lanes), x);
      store(M + r * s4 + c, x);
    }
  }
  const V4 half = set1(0.5);
  for (Index a0 = 0; a0 < s4; a0 += 4) {
    for (Index c0 = a0; c0 < s4; c0 += 4) {
      V4 x[4], y[4];
      DR_UNROLL
      for (int t = 0; t < 4; ++t) {
        x[t] = load(M + (a0 + t) * s4 + c0);
        y[t] = load(M + (c0 + t) * s4 + a0);
      }
      transpose(y);
      DR_UNROLL
      for (int t = 0; t < 4; ++t) x[t] = mul(half, add(x[t], y[t]));
      DR_UNROLL
      for (int t = 0; t < 4; ++t) store(M + (a0 + t) * s4 + c0, x[t]);
      transpose(x);
      DR_UNROLL
      for (int t = 0; t < 4; ++t) store(M + (c0 + t) * s4 + a0, x[t]);
    }
  }
  for (Index j = s; j < s4; ++j) M[j * s4 + j] = 1.0;  // the pad of H factors as the identity
  RK_MARK(3)
}

void CompactRiccati::copy_R(double* dst, Index ld) const {
  for (Index c = 0; c < s_; ++c)
    for (Index r = c; r < s_; ++r) dst[c * ld + r] = R_[r * s4_ + c];
}

bool CompactRiccati::step(const double* A, const double* B, const double* Q, const double* N, double q_scale,
                          const double* P_next, double* K, double* P) {
  const Index n = n_, s = s_, n4 = n4_, s4 = s4_, m4 = m4_;
  double *Pb = P_.get(), *U = U_.get(), *H = H_.get(), *Y = Y_.get(), *Kb = K_.get();
  const double* Rs = R_.get();

  // Z = X'U with U = R [B A], X = U where P_{i+1} = R'R; else (only
  // semidefinite) U = P [B A], X = [B A]. Only Z's upper triangle is formed.
  const double* X = U;
  // the queue is done by about 3/4 of the step, before the output stores
  const Index pf_rate = next.lines() * 4 / (3 * tiles_) + 1;
  RK_START
  const bool definite = cholesky_upper(Pb, n, n4);
  RK_MARK(0)
  if (definite) {
    times_BA(Pb, n4, true, B, s, A, n, U, m4, s4, next, pf_rate);
    RK_MARK(1)
  } else {
    load_P(P_next);
    double* BA = BA_.get();
    for (Index k = 0; k < n; ++k) {
      std::copy(B + k * s, B + (k + 1) * s, BA + k * m4);
      std::copy(A + k * n, A + (k + 1) * n, BA + k * m4 + s4);
    }
    times_BA(Pb, n4, false, B, s, A, n, U, m4, s4, next, pf_rate);
    X = BA;
  }

  // Rows of Z's upper half that belong to B: [H | G] with H = R + B'PB
  // (upper) and G = B'PA + q N'.
  for (Index j0 = 0; j0 < s4; j0 += 4) {
    for (Index c = j0; c < m4; c += 12) {
      with_width((m4 - c) / 4, [&](auto w) {
        constexpr int NV = decltype(w)::value;
        V4 acc[4][NV];
        clear(acc);
        mac<NV, false>(acc, X + j0, m4, 1, U + c, m4, 0, n);
        alignas(32) double tile[4 * 12];
        spill(acc, tile);
        for (int v = 0; v < NV; ++v) {
          const Index c0 = c + 4 * v;
          V4 T[4];
          block(tile, v, T);
          if (c0 < s4) {
            DR_UNROLL
            for (int t = 0; t < 4; ++t) T[t] = add(T[t], load(Rs + (j0 + t) * s4 + c0));
            if (c0 == j0) {  // the diagonal block: its upper triangle, mirrored
              V4 Tt[4] = {T[0], T[1], T[2], T[3]};
              transpose(Tt);
              DR_UNROLL
              for (int t = 0; t < 4; ++t) T[t] = upper_lanes(T[t], Tt[t], t);
            }
            DR_UNROLL
            for (int t = 0; t < 4; ++t) store(H + (j0 + t) * s4 + c0, T[t]);
            continue;
          }
          const Index a = c0 - s4;
          if (N && j0 + 4 <= s && a + 4 <= n) {
            V4 Nt[4];
            DR_UNROLL
            for (int t = 0; t < 4; ++t) Nt[t] = load(N + (a + t) * s + j0);
            transpose(Nt);
            const V4 q = set1(q_scale);
            DR_UNROLL
            for (int t = 0; t < 4; ++t) T[t] = fma(q, Nt[t], T[t]);
          } else if (N) {
            alignas(32) double tile[4][4];
            DR_UNROLL
            for (int t = 0; t < 4; ++t) store(tile[t], T[t]);
            for (Index t = 0; t < 4 && j0 + t < s; ++t)
              for (Index u = 0; u < 4 && a + u < n; ++u) tile[t][u] += q_scale * N[(a + u) * s + j0 + t];
            DR_UNROLL
            for (int t = 0; t < 4; ++t) T[t] = load(tile[t]);
          }
          DR_UNROLL
          for (int t = 0; t < 4; ++t) store(Y + (j0 + t) * n4 + a, T[t]);
        }
      });
      next.pump(pf_rate);
    }
  }

  RK_MARK(2)
  // H = R_H' R_H; Y = R_H^{-T} G; K = -R_H^{-1} Y, 4 rows at a time, each a
  // block of the row-block update and a 4 x 4 substitution in registers.
  if (!cholesky_upper(H, s4, s4)) {
    next.clear();
    return false;
  }
  RK_MARK(4)
  for (Index j0 = 0; j0 < s4; j0 += 4) {
    for (Index c = 0; c < n4; c += 12) {
      with_width((n4 - c) / 4, [&](auto w) {
        constexpr int NV = decltype(w)::value;
        V4 acc[4][NV];
        DR_UNROLL
        for (int t = 0; t < 4; ++t)
          DR_UNROLL
          for (int v = 0; v < NV; ++v) acc[t][v] = load(Y + (j0 + t) * n4 + c + 4 * v);
        mac<NV, true>(acc, H + j0, s4, 1, Y + c, n4, 0, j0);
        DR_UNROLL
        for (int t = 0; t < 4; ++t) {
          const double* h = H + (j0 + t) * s4 + j0;
          const V4 d = set1(1.0 / h[t]);
          DR_UNROLL
          for (int v = 0; v < NV; ++v) acc[t][v] = mul(acc[t][v], d);
          DR_UNROLL
          for (int u = t + 1; u < 4; ++u) {
            const V4 f = set1(h[u]);
            DR_UNROLL
            for (int v = 0; v < NV; ++v) acc[u][v] = fnma(f, acc[t][v], acc[u][v]);
          }
        }
        DR_UNROLL
        for (int t = 0; t < 4; ++t)
          DR_UNROLL
          for (int v = 0; v < NV; ++v) store(Y + (j0 + t) * n4 + c + 4 * v, acc[t][v]);
      });
      next.pump(pf_rate);
    }
  }
  for (Index j0 = s4 - 4; j0 >= 0; j0 -= 4) {
    for (Index c = 0; c < n4; c += 12) {
      with_width((n4 - c) / 4, [&](auto w) {
        constexpr int NV = decltype(w)::value;
        V4 acc[4][NV];
        DR_UNROLL
        for (int t = 0; t < 4; ++t)
          DR_UNROLL
          for (int v = 0; v < NV; ++v) acc[t][v] = neg(load(Y + (j0 + t) * n4 + c + 4 * v));
        mac<NV, true>(acc, H + j0 * s4, 1, s4, Kb + c, n4, j0 + 4, s4);
        DR_UNROLL
        for (int t = 3; t >= 0; --t) {
          const V4 d = set1(1.0 / H[(j0 + t) * s4 + j0 + t]);
          DR_UNROLL
          for (int v = 0; v < NV; ++v) acc[t][v] = mul(acc[t][v], d);
          DR_UNROLL
          for (int u = 0; u < t; ++u) {
            const V4 f = set1(H[(j0 + u) * s4 + j0 + t]);
            DR_UNROLL
            for (int v = 0; v < NV; ++v) acc[u][v] = fnma(f, acc[t][v], acc[u][v]);
          }
        }
        DR_UNROLL
        for (int t = 0; t < 4; ++t)
          DR_UNROLL
          for (int v = 0; v < NV; ++v) store(Kb + (j0 + t) * n4 + c + 4 * v, acc[t][v]);
      });
      next.pump(pf_rate);
    }
  }
  for (Index j = 0; j < s; ++j) std::memcpy(K + j * n, Kb + j * n4, sizeof(double) * n);
  RK_MARK(5)

  // P_i = A'PA - Y'Y + q sym(Q): upper 4 x 4 blocks, each stored as is
  // (here, for the next step's factor, and in the output) and mirrored
  // into the output's lower triangle. Pads of the buffer are kept zero.
  const V4 hq = set1(0.5 * q_scale);
  for (Index a0 = 0; a0 < n4; a0 += 4) {
    for (Index c = a0; c < n4; c += 12) {
      with_width((n4 - c) / 4, [&](auto w) {
        constexpr int NV = decltype(w)::value;
        V4 acc[4][NV];
        clear(acc);
        mac<NV, false>(acc, X + s4 + a0, m4, 1, U + s4 + c, m4, 0, n);
        mac<NV, true>(acc, Y + a0, n4, 1, Y + c, n4, 0, s);
        alignas(32) double tile[4 * 12];
        spill(acc, tile);
        for (int v = 0; v < NV; ++v) {
          const Index c0 = c + 4 * v;
          V4 T[4];
          block(tile, v, T);
          if (a0 + 4 <= n && c0 + 4 <= n) {
            V4 Qa[4], Qb[4];
            DR_UNROLL
            for (int t = 0; t < 4; ++t) {
              Qa[t] = load(Q + (a0 + t) * n + c0);
              Qb[t] = load(Q + (c0 + t) * n + a0);
            }
            transpose(Qb);
            DR_UNROLL
            for (int t = 0; t < 4; ++t) T[t] = fma(hq, add(Qa[t], Qb[t]), T[t]);
            V4 Tt[4] = {T[0], T[1], T[2], T[3]};
            transpose(Tt);
            if (c0 == a0) {
              DR_UNROLL
              for (int t = 0; t < 4; ++t) T[t] = upper_lanes(T[t], Tt[t], t);
            } else {
              DR_UNROLL
              for (int t = 0; t < 4; ++t) store(P + (c0 + t) * n + a0, Tt[t]);
            }
            DR_UNROLL
            for (int t = 0; t < 4; ++t) {
              store(Pb + (a0 + t) * n4 + c0, T[t]);
              store(P + (a0 + t) * n + c0, T[t]);
            }
          } else {
            alignas(32) double tile[4][4];
            DR_UNROLL
            for (int t = 0; t < 4; ++t) store(tile[t], T[t]);
            for (Index t = 0; t < 4; ++t) {
              for (Index u = 0; u < 4; ++u) {
                const Index r = a0 + t, k = c0 + u;
                double x = 0.0;
                if (r < n && k < n) {
                  x = (c0 == a0 && u < t ? tile[u][t] : tile[t][u]) + 0.5 * q_scale * (Q[r * n + k] + Q[k * n + r]);
                  P[r * n + k] = x;
                  P[k * n + r] = x;
                }
                Pb[r * n4 + k] = x;
              }
            }
          }
        }
      });
      next.pump(pf_rate);
    }
  }
  RK_MARK(6)
  next.clear();
  return true;
}

}  // namespace directable::detail
