#include "directable/control/lqr/tracker.hpp"

#include "directable/core/allocation.hpp"
#include "directable/core/weights.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace directable {

namespace {

// Round a finite double with |v| < 65520 to the nearest IEEE half
// (ties to even), directly from double so there is one rounding only.
std::uint16_t double_to_half(double v) {
  const std::uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  if (a == 0.0) return sign;
  int e;
  std::frexp(a, &e);               // a in [2^(e-1), 2^e)
  int E = std::max(e - 1, -14);     // subnormals share exponent -14
  double m = std::nearbyint(std::ldexp(a, 10 - E));  // significand on the half grid
  if (m >= 2048.0) {  // rounded up into the next binade
    m *= 0.5;
    ++E;
  }
  if (m < 1024.0) return std::uint16_t(sign | std::uint16_t(m));  // subnormal
  return std::uint16_t(sign | ((E + 15) << 10) | (std::uint16_t(m) - 1024));
}

inline float half_to_float(std::uint16_t h) {
  const int e = (h >> 10) & 31, m = h & 1023;
  const float v = e == 0 ? std::ldexp(float(m), -24) : std::ldexp(float(m + 1024), e - 25);
  return (h & 0x8000) ? -v : v;
}

inline float widen(float v) { return v; }
inline float widen(std::uint16_t h) { return half_to_float(h); }

#if defined(__AVX2__) && defined(__FMA__)
inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
#if defined(__F16C__)
inline __m256 load8(const std::uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
constexpr bool kHalfSimd = true;
#else
constexpr bool kHalfSimd = false;
#endif
inline double hsum(__m256 v) {  // the 8 single-precision partial sums, added in double
  const __m256d d = _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)), _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
  const __m128d h = _mm_add_pd(_mm256_castpd256_pd128(d), _mm256_extractf128_pd(d, 1));
  return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}

// R rows at once: R independent accumulators hide the FMA latency (8 rows
// measured 10-20% faster than 4 on the 64 x 128 gain).
template <int R, class S>
void gemv_rows(const S* k, const double* scale, Index n, const float* x, double x_scale, double* y) {
  const Index n8 = n - n % 8;
  __m256 a[R];
  for (int j = 0; j < R; ++j) a[j] = _mm256_setzero_ps();
  for (Index c = 0; c < n8; c += 8) {
    const __m256 xv = _mm256_loadu_ps(x + c);
    for (int j = 0; j < R; ++j) a[j] = _mm256_fmadd_ps(load8(k + j * n + c), xv, a[j]);
  }
  for (int j = 0; j < R; ++j) {
    double acc = hsum(a[j]);
    for (Index c = n8; c < n; ++c) acc += double(widen(k[j * n + c])) * x[c];
    y[j] = acc * scale[j] * x_scale;
  }
}
#endif

// y_r = scale_r * x_scale * sum_c K(r, c) x_c for a row-major s x n matrix
// stored in float or half, single-precision products and lane sums.
// The caller scales x to |x| <= 1 and K's rows to |K| <= 2^15, so the sums
// cannot overflow; one row's 8 lane sums are added in double.
template <class S>
void gemv_scaled(const S* K, const double* scale, Index s, Index n, const float* x, double x_scale, double* y) {
  Index r = 0;
#if defined(__AVX2__) && defined(__FMA__)
  if constexpr (std::is_same<S, float>::value || kHalfSimd) {
    for (; r + 8 <= s; r += 8) gemv_rows<8>(K + r * n, scale + r, n, x, x_scale, y + r);
    for (; r + 4 <= s; r += 4) gemv_rows<4>(K + r * n, scale + r, n, x, x_scale, y + r);
  }
#endif
  for (; r < s; ++r) {
    float acc = 0.0f;
    for (Index c = 0; c < n; ++c) acc += widen(K[r * n + c]) * x[c];
    y[r] = double(acc) * scale[r] * x_scale;
  }
}

// Integer feedback for int8 gains: x_j = rint(c_j dz_j 2^(15-g)) in int16
// (2^(g-1) <= max |c_j dz_j| < 2^g, so |x| <= 2^15; +2^15 saturates to
// 2^15 - 1), then y_r = scale_r 2^(g-15) sum_c q_rc x_c with the sum exact
// in integers: int16 pair products (vpmaddwd) are below 2^23 and a lane
// adds at most kChunk / 16 of them before it is widened to 64 bits. Exact
// sums make the SIMD and the portable path agree bit for bit.
constexpr Index kChunk = 2048;

void quantize_x(const double* v, Index n, double factor, std::int16_t* x) {
  Index c = 0;
#if defined(__AVX2__)
  for (; c + 8 <= n; c += 8) {  // cvtpd_epi32 rounds to nearest even, packs saturates
    const __m128i lo = _mm256_cvtpd_epi32(_mm256_mul_pd(_mm256_loadu_pd(v + c), _mm256_set1_pd(factor)));
    const __m128i hi = _mm256_cvtpd_epi32(_mm256_mul_pd(_mm256_loadu_pd(v + c + 4), _mm256_set1_pd(factor)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(x + c), _mm_packs_epi32(lo, hi));
  }
#endif
  for (; c < n; ++c) x[c] = std::int16_t(std::clamp(std::nearbyint(v[c] * factor), -32768.0, 32767.0));
}

#if defined(__AVX2__)
inline std::int64_t hsum_epi32(__m256i v) {
  const __m256i s = _mm256_add_epi64(_mm256_cvtepi32_epi64(_mm256_castsi256_si128(v)),
                                     _mm256_cvtepi32_epi64(_mm256_extracti128_si256(v, 1)));
  const __m128i t = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  return _mm_cvtsi128_si64(t) + _mm_extract_epi64(t, 1);
}
#endif

void gemv_int8(const std::int8_t* K, const double* scale, Index s, Index n, const std::int16_t* x, double x_scale,
               double* y) {
  constexpr int R = 4;
  Index r = 0;
#if defined(__AVX2__)
  const Index n16 = n - n % 16;
  for (; r + R <= s; r += R) {
    const std::int8_t* k = K + r * n;
    std::int64_t acc[R] = {};
    for (Index c0 = 0; c0 < n16; c0 += kChunk) {
      __m256i a[R];
      for (int j = 0; j < R; ++j) a[j] = _mm256_setzero_si256();
      for (Index c = c0, c1 = std::min(n16, c0 + kChunk); c < c1; c += 16) {
        const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + c));
        for (int j = 0; j < R; ++j) {
          const __m256i q = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(k + j * n + c)));
          a[j] = _mm256_add_epi32(a[j], _mm256_madd_epi16(q, xv));
        }
      }
      for (int j = 0; j < R; ++j) acc[j] += hsum_epi32(a[j]);
    }
    for (int j = 0; j < R; ++j) {
      for (Index c = n16; c < n; ++c) acc[j] += std::int32_t(k[j * n + c]) * x[c];
      y[r + j] = double(acc[j]) * scale[r + j] * x_scale;
    }
  }
#endif
  for (; r < s; ++r) {
    std::int64_t acc = 0;
    for (Index c = 0; c < n; ++c) acc += std::int32_t(K[r * n + c]) * x[c];
    y[r] = double(acc) * scale[r] * x_scale;
  }
}

struct TrackerDims {
  Index T, n, s;
};

// Shapes and values of the constructor's arguments: (T, n, s).
TrackerDims checked_dimensions(const SeqView& K, const SeqView& z_ref, const SeqView& w_ff, const TrackerOptions& options) {
  if (z_ref.empty()) throw std::invalid_argument("z_ref is missing");
  if (K.empty()) throw std::invalid_argument("K is missing");
  // z_ref arrives as a (T+1, n) array: T+1 "matrices" of shape (1, n).
  const Index n = z_ref.cols, T = z_ref.T - 1, s = K.rows;
  if (z_ref.rows != 1 || z_ref.is_constant() || T < 1)
    throw std::invalid_argument("z_ref must have shape (T+1, n) with T >= 1, got " + shape_str(z_ref.T, z_ref.cols));
  if (K.cols != n) throw_shape("K", shape_str(T, s, n) + " or " + shape_str(s, n), shape_str(K.T, K.rows, K.cols));
  // z_ref has one row per state, one more than the steps: K with as many
  // steps as z_ref has rows means z_ref lacks its final state
  if (!K.is_constant() && K.T == z_ref.T)
    throw std::invalid_argument("z_ref must have T+1 = " + std::to_string(K.T + 1) + " rows, one more than K's " +
                                std::to_string(K.T) + " steps (the states x_0 .. x_T), got " +
                                shape_str(z_ref.T, z_ref.cols));
  K.check("K", s, n, T);
  if (!w_ff.empty() && (w_ff.rows != 1 || w_ff.cols != s || w_ff.T != T))
    throw_shape("w_ff", shape_str(T, s), shape_str(w_ff.T, w_ff.cols));
  K.check_finite("K");
  z_ref.check_finite("z_ref");
  w_ff.check_finite("w_ff");
  const Eigen::VectorXd& w_min = options.w_min;
  const Eigen::VectorXd& w_max = options.w_max;
  for (const auto* lim : {&w_min, &w_max}) {
    const char* name = lim == &w_min ? "w_min" : "w_max";
    if (lim->size() != 0 && lim->size() != s)
      throw_shape(name, "(" + std::to_string(s) + ",)", "(" + std::to_string(lim->size()) + ",)");
    if (lim->size() && lim->array().isNaN().any())
      throw std::domain_error(std::string(name) + " must not be NaN (use +-inf for no limit)");
  }
  if (w_min.size() && w_max.size() && (w_min.array() > w_max.array()).any())
    throw std::domain_error("w_min must not exceed w_max");
  return {T, n, s};
}

}  // namespace

GainPrecision gain_precision_from_name(const std::string& name) {
  for (GainPrecision p : {GainPrecision::Float64, GainPrecision::Float32, GainPrecision::Float16, GainPrecision::Int8})
    if (name == gain_precision_name(p)) return p;
  throw std::invalid_argument("gain_dtype must be \"float64\", \"float32\", \"float16\" or \"int8\", got \"" + name + "\"");
}

const char* gain_precision_name(GainPrecision p) {
  switch (p) {
    case GainPrecision::Float32: return "float32";
    case GainPrecision::Float16: return "float16";
    case GainPrecision::Int8: return "int8";
    default: return "float64";
  }
}

Tracker::Tracker(SeqView K, SeqView z_ref, SeqView w_ff, const TrackerOptions& options) : options_(options) {
  const TrackerDims dims = checked_dimensions(K, z_ref, w_ff, options);
  T_ = dims.T;
  n_ = dims.n;
  s_ = dims.s;
  K_ = MatrixSeq(K.is_constant() ? 1 : T_, s_, n_);
  for (Index i = 0; i < K_.T(); ++i) K_[i] = K[i];
  if (options_.gain_precision != GainPrecision::Float64) store_reduced_gains();
  z_ref_ = VectorSeq(T_ + 1, n_);
  std::copy(z_ref.data, z_ref.data + (T_ + 1) * n_, z_ref_.data());
  w_ff_ = VectorSeq(T_, s_);
  if (!w_ff.empty()) std::copy(w_ff.data, w_ff.data + T_ * s_, w_ff_.data());
}

void Tracker::store_reduced_gains() {
  const GainPrecision prec = options_.gain_precision;
  const std::size_t rows = std::size_t(K_.T() * s_), size = rows * std::size_t(n_);
  const Eigen::Map<const RowMatrix> K(K_.data(), Index(rows), n_);  // all steps' rows
  // int8 balances the columns first: c_j = 2^(e_j - E) <= 1 from each
  // column's largest entry 2^(e_j - 1) <= max < 2^e_j, E the largest e_j,
  // and at least 2^-60 so that c_j dz_j neither underflows nor hides a
  // coordinate. Zero columns keep 1. Powers of two: K_ij / c_j is exact.
  col_scale_.setOnes(n_);
  if (prec == GainPrecision::Int8) {
    Eigen::VectorXi e = Eigen::VectorXi::Constant(n_, std::numeric_limits<int>::min());
    for (Index c = 0; c < n_; ++c) {
      const double m = K.col(c).cwiseAbs().maxCoeff();
      if (m > 0.0) std::frexp(m, &e[c]);
    }
    const int E = e.maxCoeff();
    for (Index c = 0; c < n_; ++c)
      if (e[c] != std::numeric_limits<int>::min()) col_scale_[c] = std::ldexp(1.0, std::max(e[c] - E, -60));
  }
  row_scale_.resize(rows);
  if (prec == GainPrecision::Float32) K_float32_.resize(size);
  if (prec == GainPrecision::Float16) K_float16_.resize(size);
  if (prec == GainPrecision::Int8) K_int8_.resize(size);
  Eigen::VectorXd v(n_);
  for (std::size_t r = 0; r < rows; ++r) {
    v = K.row(Index(r)).transpose().cwiseQuotient(col_scale_);
    const double m = v.cwiseAbs().maxCoeff();
    const std::size_t at = r * std::size_t(n_);
    if (prec == GainPrecision::Int8) {
      // One scale per row, max |entry| -> 127; rounding to nearest, ties to even.
      row_scale_[r] = m > 0.0 ? m / 127.0 : 1.0;
      for (Index c = 0; c < n_; ++c)
        K_int8_[at + c] = std::int8_t(std::clamp(std::nearbyint(v[c] / row_scale_[r]), -127.0, 127.0));
      continue;
    }
    // float32/float16: the row becomes 2^-e times entries of at most 2^15 (a
    // power of two, so the scaling itself is exact), then is rounded.
    int e = 0;
    if (m > 0.0) {
      std::frexp(m, &e);  // m in [2^(e-1), 2^e)
      e = 15 - e;
    }
    row_scale_[r] = std::ldexp(1.0, -e);
    for (Index c = 0; c < n_; ++c) {
      if (prec == GainPrecision::Float32)
        K_float32_[at + c] = float(std::ldexp(v[c], e));
      else
        K_float16_[at + c] = double_to_half(std::ldexp(v[c], e));
    }
  }
}

TrackerData Tracker::create_data(Index index) const {
  TrackerData data;
  set_index(data, index);
  data.dz_.setZero(n_);
  if (options_.gain_precision == GainPrecision::Float32 || options_.gain_precision == GainPrecision::Float16)
    data.dz_scaled_.setZero(n_);
  if (options_.gain_precision == GainPrecision::Int8) data.dz_quantized_.assign(std::size_t(n_), 0);
  return data;
}

void Tracker::control(const Eigen::Ref<const Eigen::VectorXd>& z, TrackerData& data, Eigen::Ref<Eigen::VectorXd> w,
                      Eigen::Ref<Eigen::VectorXd> w_fb) const {
  if (data.dz_.size() != n_) throw std::invalid_argument("tracker data was not made by this tracker's create_data()");
  // Past the end (index T) the last gain and feed-forward are held.
  const Index i = std::min(data.index_, T_ - 1);
  if (options_.gain_precision == GainPrecision::Float64) {
    data.dz_ = z - z_ref_[data.index_];
    w_fb.noalias() = gain(i) * data.dz_;
  } else {
    reduced_feedback(z, i, data, w_fb);
  }
  w = w_ff_[i] + w_fb;
  if (options_.w_min.size() || options_.w_max.size()) {
    if (options_.w_min.size()) w = w.cwiseMax(options_.w_min);
    if (options_.w_max.size()) w = w.cwiseMin(options_.w_max);
    w_fb = w - w_ff_[i];
  }
}

void Tracker::reduced_feedback(const Eigen::Ref<const Eigen::VectorXd>& z, Index i, TrackerData& data,
                               Eigen::Ref<Eigen::VectorXd> w_fb) const {
  // The reduced products need |x| ~ 1 for x = col_scale .* dz: scale by a
  // power of two 2^-g. A NaN or inf in dz takes the double gains, so it
  // propagates as it would there; so does a tiny dz, whose 2^-g would
  // overflow.
  Eigen::VectorXd& dz = data.dz_;
  dz.array() = (z - z_ref_[data.index_]).array() * col_scale_.array();
  const double m = dz.cwiseAbs().maxCoeff<Eigen::PropagateNaN>();
  if (!std::isfinite(m) || (m > 0.0 && m < 0x1p-1000)) {
    dz = z - z_ref_[data.index_];
    w_fb.noalias() = gain(i) * dz;
    return;
  }
  int g = 0;
  if (m > 0.0) std::frexp(m, &g);
  const Index step = K_.T() == 1 ? 0 : i;
  const double* scale = row_scale_.data() + step * s_;
  const std::size_t offset = std::size_t(step * s_ * n_);
  if (options_.gain_precision == GainPrecision::Int8) {
    quantize_x(dz.data(), n_, std::ldexp(1.0, 15 - g), data.dz_quantized_.data());
    gemv_int8(K_int8_.data() + offset, scale, s_, n_, data.dz_quantized_.data(), std::ldexp(1.0, g - 15), w_fb.data());
    return;
  }
  data.dz_scaled_ = (dz * std::ldexp(1.0, -g)).cast<float>();
  if (options_.gain_precision == GainPrecision::Float32)
    gemv_scaled(K_float32_.data() + offset, scale, s_, n_, data.dz_scaled_.data(), std::ldexp(1.0, g), w_fb.data());
  else
    gemv_scaled(K_float16_.data() + offset, scale, s_, n_, data.dz_scaled_.data(), std::ldexp(1.0, g), w_fb.data());
}

void Tracker::advance(TrackerData& data) const {
  if (data.index_ < T_) ++data.index_;
  if (data.index_ == T_ && options_.loop) data.index_ = 0;
}

void Tracker::set_index(TrackerData& data, Index i, const char* name) const {
  if (i < 0 || i > T_)
    throw std::invalid_argument(std::string(name) + " must be in [0, " + std::to_string(T_) + "], got " +
                                std::to_string(i));
  data.index_ = i;
}

Index Tracker::nearest_index(const Eigen::Ref<const Eigen::VectorXd>& z, Index first, Index last,
                             const Eigen::VectorXd* weights) const {
  if (z.size() != n_) throw_shape("z", "(" + std::to_string(n_) + ",)", "(" + std::to_string(z.size()) + ",)");
  if (last == -1) last = T_ - 1;  // Python's "the last one"
  if (first < 0 || first > last || last >= T_)
    throw std::invalid_argument("search window [first, last] must lie in [0, " + std::to_string(T_ - 1) + "]");
  if (weights && weights->size() != n_)
    throw_shape("weights", "(" + std::to_string(n_) + ",)", "(" + std::to_string(weights->size()) + ",)");
  if (weights) check_diagonal_weight("weights", weights->data(), n_, Definiteness::semidefinite);
  check_finite("z", z.data(), n_);
  Index best = first;
  double best_d = std::numeric_limits<double>::infinity();
  for (Index j = first; j <= last; ++j) {
    double d = weights ? ((z - z_ref_[j]).array().square() * weights->array()).sum() : (z - z_ref_[j]).squaredNorm();
    if (d < best_d) {
      best_d = d;
      best = j;
    }
  }
  return best;
}

RowMatrix pd_gain(const Eigen::Ref<const Eigen::VectorXd>& kp, const Eigen::Ref<const Eigen::VectorXd>& kd, Index n,
                  const Eigen::Ref<const RowMatrix>& S_in) {
  if (n <= 0 || n % 2) throw std::invalid_argument("the state size n (z = [q, qd]: the columns of z_ref) must be even and > 0, got n = " +
                                std::to_string(n));
  const Index m = n / 2;
  // the actuation (s x m, identity when none is given) and the gain (s x n)
  const double s_bytes = S_in.size() ? double(S_in.cols()) : double(m);
  check_allocation("the PD gain of a state of size n = " + std::to_string(n), 8.0 * s_bytes * (double(m) + double(n)));
  // S maps controls to generalized forces (m x s, as a model's actuation);
  // the PD force on the controls is its transpose applied to the error.
  RowMatrix S = S_in.size() ? RowMatrix(S_in.transpose()) : RowMatrix::Identity(m, m);
  if (S.cols() != m) throw_shape("actuated", "(" + std::to_string(m) + ", s)", shape_str(S_in.rows(), S_in.cols()));
  const Index s = S.rows();
  auto expand = [s](const Eigen::Ref<const Eigen::VectorXd>& g, const char* name) {
    if (g.size() != 1 && g.size() != s)
      throw_shape(name, "() or (" + std::to_string(s) + ",)", "(" + std::to_string(g.size()) + ",)");
    check_finite(name, g.data(), g.size());
    return Eigen::VectorXd(g.size() == 1 ? Eigen::VectorXd::Constant(s, g[0]) : Eigen::VectorXd(g));
  };
  Eigen::VectorXd p = expand(kp, "kp"), d = expand(kd, "kd");
  RowMatrix K(s, n);
  K.leftCols(m) = -(p.asDiagonal() * S);
  K.rightCols(m) = -(d.asDiagonal() * S);
  return K;
}

}  // namespace directable
