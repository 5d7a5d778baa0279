// Riccati step for small n on padded row-major buffers.
//
// At n = 48, s = 24 a step is ~0.57 MFLOP on matrices 24..72 wide, where
// Eigen spends most of each product packing operands and handling edges
// (~13-19 GFLOP/s). Here every product is a 4 x 12 register tile (4 x 24
// with AVX-512)
// accumulated as broadcast x contiguous-vector FMAs straight from the
// operands, with rows padded to 4 doubles so that the buffers have no
// edges, and the step is arranged so that little else is left:
//   U = R [B A]                        (R: last step's factor, P = R'R)
//   Z = [[R_i, q N'], [q N, q sym(Q)]] (upper 4 x 4 blocks, no P in it)
//   Z += U'U and Z = R_Z' R_Z          (one pass, tile by tile)
// The upper Cholesky factor of Z = [[H, G], [G', A'PA + q sym(Q)]] is
// [[R_H, Y], [0, R_P]] with H = R_H' R_H, Y = R_H^{-T} G and R_P the factor
// of the Schur complement A'PA + q sym(Q) - Y'Y = P_i: one factorization
// gives Y, P_i (taken from the tiles half-way) and the next step's factor.
// Then K = -R_H^{-1} Y, and K_i, P_i go out with streaming stores.
#include "riccati_kernels.hpp"

#include "directable/control/lqr/riccati.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <new>
#include <thread>
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
DR_INLINE V4 pinned(V4 a) {
  __m256d r = a.v;
  __asm__("" : "+x"(r));
  return {r};
}
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
DR_INLINE V4 pinned(V4 a) { return a; }
DR_INLINE void transpose(V4 (&r)[4]) {
  DR_UNROLL
  for (int t = 0; t < 4; ++t)
    DR_UNROLL
    for (int u = t + 1; u < 4; ++u) std::swap(r[t].v[u], r[u].v[t]);
}
#endif

constexpr Index round4(Index x) { return (x + 3) & ~Index(3); }

// Register tiles are 4 rows by kTileCols columns: 4 kMaxNV vectors of 4
// doubles. With AVX-512 there are 32 vector registers and 8-wide FMAs, so a
// tile is 24 columns (24 accumulators, held by mac as 12 zmm registers);
// with AVX2, 12 (12 accumulators, 3 vectors of y and a broadcast: all 16).
#if defined(DIRECTABLE_RICCATI_AVX2) && defined(__AVX512F__)
#define DIRECTABLE_RICCATI_AVX512 1
constexpr int kMaxNV = 6;
#else
constexpr int kMaxNV = 3;
#endif
constexpr Index kTileCols = 4 * kMaxNV;

// acc[t][v] += (or -= with Neg) sum_{k0 <= k < k1} x[k xk + t xt] y[k ldy + 4v + (0..3)].
// With Masked the last vector of y is read for its first `tail` lanes only.
// Each accumulator is its own chain of FMAs in k order, whatever the tile's
// width or the vectors' (so the sweep's results do not depend on either).
// The y vectors are pinned in registers: left alone, GCC folds their loads
// into the FMAs, 4 NV loads per k instead of NV, and the loads, not the
// FMAs, then bound the loop.
#ifdef DIRECTABLE_RICCATI_AVX512
DR_INLINE __m512d pinned(__m512d r) {
  __asm__("" : "+v"(r));
  return r;
}
// Pairs of 4-wide accumulators as 8-wide ones (an odd last vector stays 4
// wide). The masked insert/extract forms: GCC 12's plain ones start from an
// undefined vector and warn.
template <int NV, bool Neg, bool Masked = false>
DR_INLINE void mac(V4 (&acc)[4][NV], const double* x, Index xk, Index xt, const double* y, Index ldy, Index k0,
                   Index k1, int tail = 4) {
  constexpr int NW = NV / 2;
  constexpr bool kOdd = NV % 2 == 1;
  __m512d az[4][NW > 0 ? NW : 1];
  __m256d ay[4];
  DR_UNROLL
  for (int t = 0; t < 4; ++t) {
    DR_UNROLL
    for (int w = 0; w < NW; ++w)
      az[t][w] = _mm512_mask_broadcast_f64x4(_mm512_maskz_broadcast_f64x4(0x0F, acc[t][2 * w].v), 0xF0, acc[t][2 * w + 1].v);
    if (kOdd) ay[t] = acc[t][NV - 1].v;
  }
  const __mmask8 last_mask = __mmask8(0x0F | (((1u << tail) - 1u) << 4));
  const double* xp = x + k0 * xk;
  const double* yp = y + k0 * ldy;
  for (Index k = k0; k < k1; ++k, xp += xk, yp += ldy) {
    __m512d yz[NW > 0 ? NW : 1];
    __m256d yo = _mm256_setzero_pd();
    DR_UNROLL
    for (int w = 0; w < NW; ++w)
      yz[w] = pinned((Masked && !kOdd && w == NW - 1) ? _mm512_maskz_loadu_pd(last_mask, yp + 8 * w)
                                                      : _mm512_loadu_pd(yp + 8 * w));
    if (kOdd) yo = pinned(Masked ? load_first(yp + 8 * NW, tail) : load(yp + 8 * NW)).v;
    DR_UNROLL
    for (int t = 0; t < 4; ++t) {
      const __m512d b = _mm512_set1_pd(xp[t * xt]);
      DR_UNROLL
      for (int w = 0; w < NW; ++w)
        az[t][w] = Neg ? _mm512_fnmadd_pd(b, yz[w], az[t][w]) : _mm512_fmadd_pd(b, yz[w], az[t][w]);
      if (kOdd) {
        const __m256d b4 = _mm256_broadcast_sd(xp + t * xt);
        ay[t] = Neg ? _mm256_fnmadd_pd(b4, yo, ay[t]) : _mm256_fmadd_pd(b4, yo, ay[t]);
      }
    }
  }
  DR_UNROLL
  for (int t = 0; t < 4; ++t) {
    DR_UNROLL
    for (int w = 0; w < NW; ++w) {
      acc[t][2 * w].v = _mm512_mask_extractf64x4_pd(_mm256_setzero_pd(), 0xF, az[t][w], 0);
      acc[t][2 * w + 1].v = _mm512_mask_extractf64x4_pd(_mm256_setzero_pd(), 0xF, az[t][w], 1);
    }
    if (kOdd) acc[t][NV - 1].v = ay[t];
  }
}
#else
template <int NV, bool Neg, bool Masked = false>
DR_INLINE void mac(V4 (&acc)[4][NV], const double* x, Index xk, Index xt, const double* y, Index ldy, Index k0,
                   Index k1, int tail = 4) {
  const double* xp = x + k0 * xk;
  const double* yp = y + k0 * ldy;
  for (Index k = k0; k < k1; ++k, xp += xk, yp += ldy) {
    V4 yv[NV];
    DR_UNROLL
    for (int v = 0; v < NV; ++v) {
      yv[v] = pinned((Masked && v == NV - 1) ? load_first(yp + 4 * v, tail) : load(yp + 4 * v));
    }
    DR_UNROLL
    for (int t = 0; t < 4; ++t) {
      const V4 b = bcast(xp + t * xt);
      DR_UNROLL
      for (int v = 0; v < NV; ++v) acc[t][v] = Neg ? fnma(b, yv[v], acc[t][v]) : fma(b, yv[v], acc[t][v]);
    }
  }
}
#endif

template <int NV>
DR_INLINE void clear(V4 (&acc)[4][NV]) {
  DR_UNROLL
  for (int t = 0; t < 4; ++t)
    DR_UNROLL
    for (int v = 0; v < NV; ++v) acc[t][v] = zero();
}

// f(std::integral_constant<int, NV>) for NV = min(nv, kMaxNV) >= 1: tiles
// kTileCols columns wide, narrower at the end.
template <class F>
DR_INLINE void with_width(Index nv, F&& f) {
#ifdef DIRECTABLE_RICCATI_AVX512
  if (nv >= 6) return f(std::integral_constant<int, 6>{});
  if (nv == 5) return f(std::integral_constant<int, 5>{});
  if (nv == 4) return f(std::integral_constant<int, 4>{});
#endif
  if (nv >= 3)
    f(std::integral_constant<int, 3>{});
  else if (nv == 2)
    f(std::integral_constant<int, 2>{});
  else
    f(std::integral_constant<int, 1>{});
}

// A 4 x 4NV tile of a row-major matrix (leading dimension ld) to and from registers.
template <int NV>
DR_INLINE void load_tile(V4 (&acc)[4][NV], const double* p, Index ld) {
  DR_UNROLL
  for (int t = 0; t < 4; ++t)
    DR_UNROLL
    for (int v = 0; v < NV; ++v) acc[t][v] = load(p + t * ld + 4 * v);
}
template <int NV>
DR_INLINE void store_tile(double* p, Index ld, const V4 (&acc)[4][NV]) {
  DR_UNROLL
  for (int t = 0; t < 4; ++t)
    DR_UNROLL
    for (int v = 0; v < NV; ++v) store(p + t * ld + 4 * v, acc[t][v]);
}

// T = scale (M[a0.., b0..] + M[b0.., a0..]'): the 4 x 4 block (a0, b0) of
// scale (M + M') for a row-major M (leading dimension ld).
DR_INLINE void sym_block(V4 (&T)[4], const double* M, Index ld, Index a0, Index b0, V4 scale) {
  V4 Mt[4];
  DR_UNROLL
  for (int t = 0; t < 4; ++t) {
    T[t] = load(M + (a0 + t) * ld + b0);
    Mt[t] = load(M + (b0 + t) * ld + a0);
  }
  transpose(Mt);
  DR_UNROLL
  for (int t = 0; t < 4; ++t) T[t] = mul(scale, add(T[t], Mt[t]));
}

// f(c, acc) on each 4 x kTileCols tile (narrower at the end) of the 4-row panel j0
// of an m x m row-major matrix's upper triangle (columns j0 .. m), loaded
// into acc; the tile is stored back when `store`.
template <bool Store, class F>
DR_INLINE void panel_tiles(double* Z, Index m, Index j0, F&& f) {
  for (Index c = j0; c < m; c += kTileCols) {
    with_width((m - c) / 4, [&](auto w) {
      constexpr int NV = decltype(w)::value;
      V4 acc[4][NV];
      load_tile(acc, Z + j0 * m + c, m);
      f(c, acc);
      if (Store) store_tile(Z + j0 * m + c, m, acc);
    });
  }
}

// Factor of a symmetric 4 x 4 block d (upper triangle read), d = r'r:
// r[t][u] for u > t, inv[t] = 1 / r[t][t]. Returns the first row whose
// pivot is not positive (as Eigen's LLT; a NaN passes, the finite checks
// report it), or -1.
DR_INLINE int factor4(const double (&d)[4][4], double (&r)[4][4], double (&inv)[4]) {
  for (int t = 0; t < 4; ++t) {
    double x = d[t][t];
    for (int k = 0; k < t; ++k) x -= r[k][t] * r[k][t];
    if (x <= 0.0) return t;
    r[t][t] = std::sqrt(x);
    inv[t] = 1.0 / r[t][t];
    for (int u = t + 1; u < 4; ++u) {
      double y = d[t][u];
      for (int k = 0; k < t; ++k) y -= r[k][t] * r[k][u];
      r[t][u] = y * inv[t];
    }
  }
  return -1;
}

struct NoCapture {
  template <class Acc>
  void operator()(Index, Index, const Acc&) const {}
};

// acc := R_dd^{-T} acc for the panel's diagonal 4 x 4 factor r (inv[t] =
// 1 / r[t][t]): forward substitution in registers.
template <int NV>
DR_INLINE void panel_solve(V4 (&acc)[4][NV], const double (&r)[4][4], const double (&inv)[4]) {
  DR_UNROLL
  for (int t = 0; t < 4; ++t) {
    const V4 d = set1(inv[t]);
    DR_UNROLL
    for (int v = 0; v < NV; ++v) acc[t][v] = mul(acc[t][v], d);
    DR_UNROLL
    for (int u = t + 1; u < 4; ++u) {
      const V4 f = set1(r[t][u]);
      DR_UNROLL
      for (int v = 0; v < NV; ++v) acc[u][v] = fnma(f, acc[t][v], acc[u][v]);
    }
  }
}

// Upper Cholesky factor in place, A = R'R, of a row-major matrix (leading
// dimension ld, sizes multiples of 4; a pad is an identity); the upper
// triangle is read. Left-looking by 4-row panels j0 in [j_begin, j_end),
// each over columns [j0, c_end): each 4 x kTileCols tile of a panel is A's (plus
// add_to(j0, c, acc): a product not yet formed) minus the register-tile
// product of the rows [k_begin, j0) above (rows above k_begin already
// subtracted); the panel's diagonal 4 x 4 block is factored from its first
// tile and each tile solved with it in registers. The diagonal blocks are
// written with zeros below the diagonal, so products may read whole 4-row
// blocks of R. With cap0 > 0, panels from row cap0 on are passed to
// capture(j0, c, acc) after the first cap0 rows of the product: in the
// sweep's joint factorization that is the Schur complement, P_i. Returns
// the first row whose pivot is not positive (the rows from its panel on
// are untouched), or -1.
template <class Add, class Capture>
Index cholesky_upper(double* a, Index ld, Index j_begin, Index j_end, Index c_end, Index k_begin, Add&& add_to,
                     Index cap0, Capture&& capture, PrefetchQueue* pf, Index pf_rate) {
  for (Index j0 = j_begin; j0 < j_end; j0 += 4) {
    double r[4][4], inv[4];
    Index failed = -1;
    for (Index c = j0; c < c_end && failed < 0; c += kTileCols) {
      with_width((c_end - c) / 4, [&](auto w) {
        constexpr int NV = decltype(w)::value;
        V4 acc[4][NV];
        load_tile(acc, a + j0 * ld + c, ld);
        add_to(j0, c, acc);
        if (cap0 > 0 && j0 >= cap0) {
          mac<NV, true>(acc, a + j0, ld, 1, a + c, ld, k_begin, cap0);
          capture(j0, c, acc);
          mac<NV, true>(acc, a + j0, ld, 1, a + c, ld, cap0, j0);
        } else {
          mac<NV, true>(acc, a + j0, ld, 1, a + c, ld, k_begin, j0);
        }
        if (c == j0) {
          alignas(32) double d[4][4];
          DR_UNROLL
          for (int t = 0; t < 4; ++t) store(d[t], acc[t][0]);
          const int t = factor4(d, r, inv);
          if (t >= 0) {
            failed = j0 + t;
            return;
          }
        }
        panel_solve(acc, r, inv);  // the diagonal block too, overwritten below
        store_tile(a + j0 * ld + c, ld, acc);
        if (c == j0) {
          for (int t = 0; t < 4; ++t)
            for (int u = 0; u < 4; ++u) a[(j0 + t) * ld + j0 + u] = u < t ? 0.0 : r[t][u];
        }
      });
      if (pf) pf->pump(pf_rate);
    }
    if (failed >= 0) return failed;
  }
  return -1;
}

// Columns [c, c + kTileCols) (fewer at the end) of U = X Y for Y = B or A (n x
// cols, row-major, read in place) into Uo (leading dimension ldu; pads
// zero). X (row-major, leading dim ldx, round4(n) rows) is upper triangular
// when `upper` (its k < r entries are then not read, except the zeroed ones
// of the diagonal 4 x 4 blocks), else full. The strip of Y (n x kTileCols) stays
// in L1 while the rows of X stream past it.
void times_strip(const double* X, Index ldx, bool upper, const double* Y, Index cols, Index c, Index n, double* Uo,
                 Index ldu, PrefetchQueue* pf, Index pf_rate) {
  const Index rem = cols - c;
  with_width((rem + 3) / 4, [&](auto w) {
    constexpr int NV = decltype(w)::value;
    const int tail = rem >= 4 * NV ? 4 : int(rem - 4 * (NV - 1));
    for (Index r0 = 0; r0 < n; r0 += 4) {
      const Index k0 = upper ? r0 : 0;
      const double* x = X + r0 * ldx;
      V4 acc[4][NV];
      clear(acc);
      if (tail == 4)
        mac<NV, false>(acc, x, 1, ldx, Y + c, cols, k0, n);
      else
        mac<NV, false, true>(acc, x, 1, ldx, Y + c, cols, k0, n, tail);
      store_tile(Uo + r0 * ldu + c, ldu, acc);
      if (pf) pf->pump(pf_rate);
    }
  });
}

// U = X [B A] as strips: strip k < strips(s) is B's columns [kTileCols k, kTileCols (k + 1))
// (U's columns from 0), the rest are A's (U's columns from s4).
Index strips(Index cols) { return (cols + kTileCols - 1) / kTileCols; }
void times_BA_strip(Index k, const double* X, Index ldx, bool upper, const double* B, Index s, const double* A,
                    Index n, double* U, Index ldu, Index s4, PrefetchQueue* pf, Index pf_rate) {
  const Index kB = strips(s);
  if (k < kB)
    times_strip(X, ldx, upper, B, s, kTileCols * k, n, U, ldu, pf, pf_rate);
  else
    times_strip(X, ldx, upper, A, n, kTileCols * (k - kB), n, U + s4, ldu, pf, pf_rate);
}
void times_BA(const double* X, Index ldx, bool upper, const double* B, Index s, const double* A, Index n, double* U,
              Index ldu, Index s4, PrefetchQueue* pf, Index pf_rate) {
  for (Index k = 0; k < strips(s) + strips(n); ++k) times_BA_strip(k, X, ldx, upper, B, s, A, n, U, ldu, s4, pf, pf_rate);
}

// dst (rows x cols, contiguous) = src (leading dimension lds). The outputs
// are written once and not read by the sweep: streaming stores skip reading
// each line from DRAM before writing it, and keep them out of the caches.
void stream_rows(double* dst, const double* src, Index rows, Index cols, Index lds) {
#ifdef DIRECTABLE_RICCATI_AVX2
  if (cols % 4 == 0 && reinterpret_cast<std::uintptr_t>(dst) % 32 == 0) {
    for (Index r = 0; r < rows; ++r)
      for (Index c = 0; c < cols; c += 4) _mm256_stream_pd(dst + r * cols + c, _mm256_loadu_pd(src + r * lds + c));
    return;
  }
#endif
  for (Index r = 0; r < rows; ++r) std::memcpy(dst + r * cols, src + r * lds, sizeof(double) * cols);
}

// dst (n x n, contiguous) = the symmetric matrix whose upper 4 x 4 blocks
// are src's (leading dimension lds, a multiple of 4), in output order: 4
// rows at a time, so that each 4 x 8 piece completes 4 cache lines. Rows
// [r_begin, r_end) only (multiples of 4; r_end < 0: to the end).
void stream_symmetric(double* dst, const double* src, Index n, Index lds, Index r_begin = 0, Index r_end = -1) {
#ifdef DIRECTABLE_RICCATI_AVX2
  const bool streaming = n % 8 == 0 && reinterpret_cast<std::uintptr_t>(dst) % 64 == 0;
#endif
  for (Index r0 = r_begin; r0 < std::min(n, r_end < 0 ? n : r_end); r0 += 4) {
    for (Index c0 = 0; c0 < n; c0 += 4) {
      V4 T[4];
      if (c0 >= r0) {
        DR_UNROLL
        for (int t = 0; t < 4; ++t) T[t] = load(src + (r0 + t) * lds + c0);
        if (c0 == r0) {
          V4 Tt[4] = {T[0], T[1], T[2], T[3]};
          transpose(Tt);
          DR_UNROLL
          for (int t = 0; t < 4; ++t) T[t] = upper_lanes(T[t], Tt[t], t);
        }
      } else {
        DR_UNROLL
        for (int t = 0; t < 4; ++t) T[t] = load(src + (c0 + t) * lds + r0);
        transpose(T);
      }
#ifdef DIRECTABLE_RICCATI_AVX2
      if (streaming) {
        DR_UNROLL
        for (int t = 0; t < 4; ++t) _mm256_stream_pd(dst + (r0 + t) * n + c0, T[t].v);
        continue;
      }
#endif
      alignas(32) double e[4][4];
      for (int t = 0; t < 4; ++t) store(e[t], T[t]);
      for (Index t = 0; t < 4 && r0 + t < n; ++t)
        for (Index u = 0; u < 4 && c0 + u < n; ++u) dst[(r0 + t) * n + c0 + u] = e[t][u];
    }
  }
}

// A tile of P_i (rows j0.., columns c.. of Z) into P (n4 x n4, its upper
// 4 x 4 blocks).
template <int NV>
DR_INLINE void capture_tile(double* P, Index n4, Index s4, Index j0, Index c, const V4 (&acc)[4][NV]) {
  store_tile(P + (j0 - s4) * n4 + c - s4, n4, acc);
}

Index tiles(Index rows, Index cols) { return (rows + 3) / 4 * ((cols + kTileCols - 1) / kTileCols); }

}  // namespace

void PrefetchQueue::add(const void* p, Index bytes) {
  if (count_ == kMax || bytes <= 0) return;
  const auto* b = static_cast<const char*>(p);
  const auto* first = reinterpret_cast<const char*>(reinterpret_cast<std::uintptr_t>(b) & ~std::uintptr_t(63));
  ranges_[count_++] = {first, b + bytes};
  lines_ += (b + bytes - first + 63) / 64;
}

void CompactRiccati::finish() {
#ifdef DIRECTABLE_RICCATI_AVX2
  _mm_sfence();  // the streaming stores of the outputs, before anyone reads them
#endif
}

bool compact_riccati_applies(Index n, Index s) {
#if defined(DIRECTABLE_RICCATI_AVX2) && defined(__AVX512F__)
  // With AVX-512 Eigen's GEMM kernels are 8 doubles wide and the compact
  // step's tiles 4: one core of an Intel Xeon (model 207) measured the two
  // even at n = 128 and Eigen's 1.36x faster at n = 256 (s = n/2); the
  // compact step stays ahead at n = 96 (1.17x) and n = 128, s = 4 (1.08x).
  constexpr Index kMax = 128;
#elif defined(DIRECTABLE_RICCATI_AVX2)
  constexpr Index kMax = 256;
#else
  constexpr Index kMax = 64;  // portable builds: even with Eigen's at n ~ 96
#endif
  return n <= kMax && s >= 1 && s <= kMax;
}

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
      Z_(buffer(m4_ * m4_)),
      R_(buffer(s4_ * s4_)),
      K_(buffer(s4_ * n4_)) {
  // U, Z and its factor (each about half of an m4 x m4 grid of tiles), K
  tiles_ = tiles(n, s) + tiles(n, n) + 2 * ((tiles(m4_, m4_) + m4_ / 4) / 2) + tiles(s4_, n4_);
}

void CompactRiccati::copy_P(const double* M) {
  double* P = P_.get();
  std::fill(P, P + n4_ * n4_, 0.0);
  for (Index r = 0; r < n_; ++r) std::copy(M + r * n_, M + (r + 1) * n_, P + r * n4_);
}

void CompactRiccati::load_P(const double* M) {
  copy_P(M);
  // its factor where the steps read it: Z's lower right block
  const double* P = P_.get();
  double* F = Z_.get() + s4_ * m4_ + s4_;
  for (Index r = 0; r < n4_; ++r) {
    std::fill(F + r * m4_, F + r * m4_ + n4_, 0.0);
    if (r < n_)
      std::copy(P + r * n4_, P + r * n4_ + n_, F + r * m4_);
    else
      F[r * m4_ + r] = 1.0;
  }
  factored_ = cholesky_upper(F, m4_, 0, n4_, n4_, 0, NoCapture{}, 0, NoCapture{}, nullptr, 0) < 0;
}

void CompactRiccati::set_R(const double* const* R, const double* scale, int count) {
  const Index s = s_, s4 = s4_;
  double* M = R_.get();
  // M = sum_k scale_k R_k, then sym(M) a 4 x 4 block pair at a time.
  for (Index r = 0; r < s; ++r) {
    Index c = 0;
    for (; c + 4 <= s; c += 4) {
      V4 x = zero();
      for (int k = 0; k < count; ++k) x = fma(set1(scale[k]), load(R[k] + r * s + c), x);
      store(M + r * s4 + c, x);
    }
    if (c < s) {
      const int lanes = int(s - c);
      V4 x = zero();
      for (int k = 0; k < count; ++k) x = fma(set1(scale[k]), load_first(R[k] + r * s + c, lanes), x);
      store(M + r * s4 + c, x);
    }
  }
  const V4 half = set1(0.5);
  for (Index a0 = 0; a0 < s4; a0 += 4) {
    for (Index c0 = a0; c0 < s4; c0 += 4) {
      V4 x[4];
      sym_block(x, M, s4, a0, c0, half);
      DR_UNROLL
      for (int t = 0; t < 4; ++t) store(M + (a0 + t) * s4 + c0, x[t]);
      transpose(x);
      DR_UNROLL
      for (int t = 0; t < 4; ++t) store(M + (c0 + t) * s4 + a0, x[t]);
    }
  }
  for (Index j = s; j < s4; ++j) M[j * s4 + j] = 1.0;  // the pad of H factors as the identity
}

void CompactRiccati::copy_R(double* dst, Index ld) const {
  for (Index c = 0; c < s_; ++c)
    for (Index r = c; r < s_; ++r) dst[c * ld + r] = R_[r * s4_ + c];
}

// Z's panel row j0 (4 rows, upper 4 x 4 blocks) before the product:
// [[R_i, q N'], [q N, q sym(Q)]], the pad rows of the last block the
// identity's. These terms do not depend on P, so the product's tiles are
// plain Z += X'U.
void CompactRiccati::init_row(Index j0, const double* Q, const double* N, double q_scale) {
  const Index n = n_, s = s_, s4 = s4_, m4 = m4_;
  double* Z = Z_.get();
  const double* Rs = R_.get();
  const V4 hq = set1(0.5 * q_scale), qv = set1(q_scale);
  for (Index c0 = j0; c0 < m4; c0 += 4) {
    V4 T[4];
    if (c0 < s4) {  // R
      DR_UNROLL
      for (int t = 0; t < 4; ++t) T[t] = load(Rs + (j0 + t) * s4 + c0);
    } else if (j0 < s4) {  // q N'
      const Index a = c0 - s4;
      if (N && j0 + 4 <= s && a + 4 <= n) {
        DR_UNROLL
        for (int t = 0; t < 4; ++t) T[t] = mul(qv, load(N + (a + t) * s + j0));
        transpose(T);
      } else {
        alignas(32) double e[4][4] = {};
        for (Index t = 0; N && t < 4 && j0 + t < s; ++t)
          for (Index u = 0; u < 4 && a + u < n; ++u) e[t][u] = q_scale * N[(a + u) * s + j0 + t];
        for (int t = 0; t < 4; ++t) T[t] = load(e[t]);
      }
    } else {  // q sym(Q)
      const Index a0 = j0 - s4, b0 = c0 - s4;
      if (b0 + 4 <= n) {
        sym_block(T, Q, n, a0, b0, hq);
      } else {
        alignas(32) double e[4][4];
        for (Index t = 0; t < 4; ++t) {
          for (Index u = 0; u < 4; ++u) {
            const Index r = a0 + t, k = b0 + u;
            e[t][u] = r < n && k < n ? 0.5 * q_scale * (Q[r * n + k] + Q[k * n + r]) : (r == k ? 1.0 : 0.0);
          }
        }
        for (int t = 0; t < 4; ++t) T[t] = load(e[t]);
      }
    }
    DR_UNROLL
    for (int t = 0; t < 4; ++t) store(Z + (j0 + t) * m4 + c0, T[t]);
  }
}

// K = -R_H^{-1} Y for K's columns [c_begin, c_end) (multiples of 8), 4 rows
// at a time from the last: the row-block update, then a 4 x 4 back
// substitution in registers. (Tiles 8 wide: the broadcasts walk 4 rows of
// R_H, and at 12 wide the extra address registers make GCC spill an
// accumulator.)
void CompactRiccati::solve_K(Index c_begin, Index c_end, PrefetchQueue* pf, Index pf_rate) {
  const Index s4 = s4_, n4 = n4_, m4 = m4_;
  const double* Z = Z_.get();
  double* Kb = K_.get();
  for (Index j0 = s4 - 4; j0 >= 0; j0 -= 4) {
    double inv[4];
    for (int t = 0; t < 4; ++t) inv[t] = 1.0 / Z[(j0 + t) * m4 + j0 + t];
    for (Index c = c_begin; c < c_end; c += 8) {
      with_width(std::min<Index>(2, (c_end - c) / 4), [&](auto w) {
        constexpr int NV = decltype(w)::value;
        V4 acc[4][NV];
        DR_UNROLL
        for (int t = 0; t < 4; ++t)
          DR_UNROLL
          for (int v = 0; v < NV; ++v) acc[t][v] = neg(load(Z + (j0 + t) * m4 + s4 + c + 4 * v));
        mac<NV, true>(acc, Z + j0 * m4, 1, m4, Kb + c, n4, j0 + 4, s4);
        DR_UNROLL
        for (int t = 3; t >= 0; --t) {
          const V4 d = set1(inv[t]);
          DR_UNROLL
          for (int v = 0; v < NV; ++v) acc[t][v] = mul(acc[t][v], d);
          DR_UNROLL
          for (int u = 0; u < t; ++u) {
            const V4 f = set1(Z[(j0 + u) * m4 + j0 + t]);
            DR_UNROLL
            for (int v = 0; v < NV; ++v) acc[u][v] = fnma(f, acc[t][v], acc[u][v]);
          }
        }
        store_tile(Kb + j0 * n4 + c, n4, acc);
      });
      if (pf) pf->pump(pf_rate);
    }
  }
}

bool CompactRiccati::step(const double* A, const double* B, const double* Q, const double* N, double q_scale,
                          const double* P_next, double* K, double* P) {
  const Index n = n_, s = s_, n4 = n4_, s4 = s4_, m4 = m4_;
  double *U = U_.get(), *Z = Z_.get();
  // the next step's inputs are all asked for by about 3/4 of this one
  const Index pf_rate = next.lines() * 4 / (3 * tiles_) + 1;

  // Z = X'U with U = R [B A], X = U where P_{i+1} = R'R (R from the last
  // step's factorization); else (P_{i+1} only semidefinite) U = P [B A],
  // X = [B A]. Only Z's upper triangle is formed.
  const double* X = U;
  if (factored_) {
    times_BA(Z + s4 * m4 + s4, m4, true, B, s, A, n, U, m4, s4, &next, pf_rate);
  } else {
    copy_P(P_next);
    double* BA = BA_.get();
    for (Index k = 0; k < n; ++k) {
      std::copy(B + k * s, B + (k + 1) * s, BA + k * m4);
      std::copy(A + k * n, A + (k + 1) * n, BA + k * m4 + s4);
    }
    times_BA(P_.get(), n4, false, B, s, A, n, U, m4, s4, &next, pf_rate);
    X = BA;
  }
  // Z = [[H, G], [G', A'PA + q sym(Q)]] with H = R + B'PB, G = B'PA + q N'
  for (Index j0 = 0; j0 < m4; j0 += 4) {
    init_row(j0, Q, N, q_scale);
    next.pump(pf_rate);
  }

  // Z = R_Z' R_Z in place: R_Z = [[R_H, Y], [0, R_P]] with H = R_H' R_H,
  // Y = R_H^{-T} G, and R_P the factor of the Schur complement
  // A'PA + q sym(Q) - Y'Y = P_i, which is captured on the way (its upper
  // 4 x 4 blocks, into P_) and whose factor the next step uses.
  auto capture_P = [&](Index j0, Index c, const auto& acc) { capture_tile(P_.get(), n4, s4, j0, c, acc); };
  // Z += X'U, tile by tile as the factorization reaches it (the lower
  // triangles of the diagonal blocks are formed too, but never read)
  auto product = [&](Index j0, Index c, auto& acc) {
    constexpr int NV = std::extent_v<std::remove_reference_t<decltype(acc)>, 1>;
    mac<NV, false>(acc, X + j0, m4, 1, U + c, m4, 0, n);
  };
  const Index failed = cholesky_upper(Z, m4, 0, m4, m4, 0, product, s4, capture_P, &next, pf_rate);
  if (failed >= 0 && failed < s4) {
    next.clear();
    return false;
  }
  factored_ = failed < 0;
  if (!factored_) {
    // P_i is only semidefinite: the rest of it, from the panel that failed on
    for (Index j0 = failed & ~Index(3); j0 < m4; j0 += 4) {
      panel_tiles<false>(Z, m4, j0, [&](Index c, auto& acc) {
        constexpr int NV = std::extent_v<std::remove_reference_t<decltype(acc)>, 1>;
        product(j0, c, acc);
        mac<NV, true>(acc, Z + j0, m4, 1, Z + c, m4, 0, s4);
        capture_tile(P_.get(), n4, s4, j0, c, acc);
      });
    }
  }
  solve_K(0, n4, &next, pf_rate);
  stream_rows(K, K_.get(), s, n, n4);
  stream_symmetric(P, P_.get(), n, n4);
  next.clear();
  return true;
}

// The same arithmetic as step() (bitwise the same results), in phases
// separated by meetings of the team:
//   1. U = R [B A], by column strips                        (~30% of the flops)
//   2. Z = init + U'U, by 4-row panels of its upper triangle (~45%)
//   3. R_H: H's factor, on thread 0                         (~1%)
//   4. Y = R_H^{-T} G, by column strips                       (~5%)
//   5. P_i = A'PA + q sym(Q) - Y'Y, by 4-row panels, into Z and P_ (~10%)
//   6. thread 0: P_i's factor R_P for the next step; thread 1: K = -R_H^{-1} Y
//      and K_i out; then both: P_i out.
// Tasks are taken from shared counters, so a thread that falls behind
// leaves its share to the others. Thread 0 also pumps `next`.
bool CompactRiccati::step_team(int thread, TeamSync& sync, const double* A, const double* B, const double* Q,
                               const double* N, double q_scale, double* K, double* P) {
  const Index n = n_, s = s_, n4 = n4_, s4 = s4_, m4 = m4_;
  double *U = U_.get(), *Z = Z_.get();
  PrefetchQueue* pf = thread == 0 ? &next : nullptr;
  const Index pf_rate = next.lines() * 4 * sync.size() / (3 * tiles_) + 1;
  auto tasks = [&](int phase, Index count, auto&& body) {
    for (Index k; (k = sync.grab(phase, count)) >= 0;) body(k);
    sync.wait();
    if (thread == 0) sync.reset(phase);
    if (thread == 0 && phase == 0) sync.reset(4);
  };
  // 1.
  tasks(0, strips(s) + strips(n), [&](Index k) {
    times_BA_strip(k, Z + s4 * m4 + s4, m4, true, B, s, A, n, U, m4, s4, pf, pf_rate);
  });
  // 2.
  tasks(1, m4 / 4, [&](Index k) {
    const Index j0 = 4 * k;
    init_row(j0, Q, N, q_scale);
    panel_tiles<true>(Z, m4, j0, [&](Index c, auto& acc) {
      constexpr int NV = std::extent_v<std::remove_reference_t<decltype(acc)>, 1>;
      mac<NV, false>(acc, U + j0, m4, 1, U + c, m4, 0, n);
      if (pf) pf->pump(pf_rate);
    });
  });
  // 3.
  if (thread == 0) h_failed_ = cholesky_upper(Z, m4, 0, s4, s4, 0, NoCapture{}, 0, NoCapture{}, pf, pf_rate) >= 0;
  sync.wait();
  if (h_failed_) {
    if (thread == 0) next.clear();
    return false;
  }
  // 4. Y's strip [c, c + kTileCols), panel by panel with R_H's diagonal blocks
  tasks(2, strips(n4), [&](Index k) {
    const Index c = s4 + kTileCols * k;
    with_width((m4 - c) / 4, [&](auto w) {
      constexpr int NV = decltype(w)::value;
      for (Index j0 = 0; j0 < s4; j0 += 4) {
        double r[4][4], inv[4];
        for (int t = 0; t < 4; ++t) {
          for (int u = t; u < 4; ++u) r[t][u] = Z[(j0 + t) * m4 + j0 + u];
          inv[t] = 1.0 / r[t][t];
        }
        V4 acc[4][NV];
        load_tile(acc, Z + j0 * m4 + c, m4);
        mac<NV, true>(acc, Z + j0, m4, 1, Z + c, m4, 0, j0);
        panel_solve(acc, r, inv);
        store_tile(Z + j0 * m4 + c, m4, acc);
      }
    });
    if (pf) pf->pump(pf_rate);
  });
  // 5.
  tasks(3, n4 / 4, [&](Index k) {
    const Index j0 = s4 + 4 * k;
    panel_tiles<true>(Z, m4, j0, [&](Index c, auto& acc) {
      constexpr int NV = std::extent_v<std::remove_reference_t<decltype(acc)>, 1>;
      mac<NV, true>(acc, Z + j0, m4, 1, Z + c, m4, 0, s4);
      capture_tile(P_.get(), n4, s4, j0, c, acc);
    });
    if (pf) pf->pump(pf_rate);
  });
  // 6. (P_ holds all of P_i: where R_P fails it is only semidefinite, and
  // the next step takes the solo path)
  if (thread == 0) {
    factored_ = cholesky_upper(Z, m4, s4, m4, m4, s4, NoCapture{}, 0, NoCapture{}, pf, pf_rate) < 0;
    next.clear();
  }
  if (thread == 1 || sync.size() == 1) {
    solve_K(0, n4, nullptr, 0);
    stream_rows(K, K_.get(), s, n, n4);
  }
  // P_i's rows out, by whoever is done first (thread 0 still prepares the
  // next step; this phase's counter is rearmed in the next step's phase 1)
  for (Index k; (k = sync.grab(4, (n + 15) / 16)) >= 0;) stream_symmetric(P, P_.get(), n, n4, 16 * k, 16 * k + 16);
  finish();
  return true;
}

double CompactRiccati::h_pivot_ratio() const {
  // R_H (upper, row-major, leading dimension m4) is the transpose of the
  // lower factor pivot_ratio reads column-major
  return pivot_ratio(Z_.get(), s_, m4_);
}

void TeamSync::wait() {
  const unsigned g = generation_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) == size_ - 1) {
    arrived_.store(0, std::memory_order_relaxed);
    generation_.store(g + 1, std::memory_order_release);
    return;
  }
  // Spin while the others are close; then give the core away, in case a
  // member waits for it (more threads than free cores).
  for (int spin = 0; generation_.load(std::memory_order_acquire) == g; ++spin) {
    if (spin < 4000) {
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
      __builtin_ia32_pause();
#endif
    } else {
      std::this_thread::yield();
    }
  }
}

}  // namespace directable::detail
