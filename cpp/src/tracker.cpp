#include "directable/control/tracker.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
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
#endif

// y_r = scale_r * x_scale * sum_c K(r, c) x_c for a row-major s x n matrix
// stored in float or half, single-precision products and lane sums. The
// caller scales x to |x| <= 1 and K's rows to |K| <= 2^15, so the sums
// cannot overflow; one row's 8 lane sums are added in double.
template <class S>
void gemv_scaled(const S* K, const double* scale, Index s, Index n, const float* x, double x_scale, double* y) {
  Index r = 0;
#if defined(__AVX2__) && defined(__FMA__)
  if constexpr (std::is_same<S, float>::value || kHalfSimd) {
    const Index n8 = n - n % 8;
    for (; r + 4 <= s; r += 4) {
      const S* k = K + r * n;
      __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
      for (Index c = 0; c < n8; c += 8) {
        const __m256 xv = _mm256_loadu_ps(x + c);
        a0 = _mm256_fmadd_ps(load8(k + c), xv, a0);
        a1 = _mm256_fmadd_ps(load8(k + n + c), xv, a1);
        a2 = _mm256_fmadd_ps(load8(k + 2 * n + c), xv, a2);
        a3 = _mm256_fmadd_ps(load8(k + 3 * n + c), xv, a3);
      }
      double y4[4] = {hsum(a0), hsum(a1), hsum(a2), hsum(a3)};
      for (Index c = n8; c < n; ++c)
        for (int j = 0; j < 4; ++j) y4[j] += double(widen(k[j * n + c])) * x[c];
      for (int j = 0; j < 4; ++j) y[r + j] = y4[j] * scale[r + j] * x_scale;
    }
  }
#endif
  for (; r < s; ++r) {
    float acc = 0.0f;
    for (Index c = 0; c < n; ++c) acc += widen(K[r * n + c]) * x[c];
    y[r] = double(acc) * scale[r] * x_scale;
  }
}

}  // namespace

GainPrecision gain_precision_from_name(const std::string& name) {
  for (GainPrecision p : {GainPrecision::Float64, GainPrecision::Float32, GainPrecision::Float16})
    if (name == gain_precision_name(p)) return p;
  throw std::invalid_argument("gain_dtype must be \"float64\", \"float32\" or \"float16\", got \"" + name + "\"");
}

const char* gain_precision_name(GainPrecision p) {
  switch (p) {
    case GainPrecision::Float32: return "float32";
    case GainPrecision::Float16: return "float16";
    default: return "float64";
  }
}

Tracker::Tracker(SeqView K, SeqView z_ref, SeqView w_ff, const TrackerOptions& options) : options_(options) {
  if (z_ref.empty()) throw std::invalid_argument("z_ref is missing");
  if (K.empty()) throw std::invalid_argument("K is missing");
  // z_ref arrives as a (T+1, n) array: T+1 "matrices" of shape (1, n).
  n_ = z_ref.cols;
  T_ = z_ref.T - 1;
  s_ = K.rows;
  if (z_ref.rows != 1 || z_ref.is_constant() || T_ < 1)
    throw std::invalid_argument("z_ref must have shape (T+1, n) with T >= 1, got " + shape_str(z_ref.T, z_ref.cols));
  if (K.cols != n_) throw_shape("K", shape_str(T_, s_, n_) + " or " + shape_str(s_, n_), shape_str(K.T, K.rows, K.cols));
  K.check("K", s_, n_, T_);
  if (!w_ff.empty() && (w_ff.rows != 1 || w_ff.cols != s_ || w_ff.T != T_))
    throw_shape("w_ff", shape_str(T_, s_), shape_str(w_ff.T, w_ff.cols));
  K.check_finite("K");
  z_ref.check_finite("z_ref");
  w_ff.check_finite("w_ff");
  for (const auto* lim : {&options_.w_min, &options_.w_max}) {
    if (lim->size() != 0 && lim->size() != s_)
      throw_shape(lim == &options_.w_min ? "w_min" : "w_max", "(" + std::to_string(s_) + ",)",
                  "(" + std::to_string(lim->size()) + ",)");
  }
  for (const auto* lim : {&options_.w_min, &options_.w_max})
    if (lim->size() && lim->array().isNaN().any())
      throw std::domain_error(std::string(lim == &options_.w_min ? "w_min" : "w_max") + " must not be NaN (use +-inf for no limit)");
  if (options_.w_min.size() && options_.w_max.size() && (options_.w_min.array() > options_.w_max.array()).any())
    throw std::domain_error("w_min must not exceed w_max");

  K_ = MatrixSeq(K.is_constant() ? 1 : T_, s_, n_);
  for (Index i = 0; i < K_.T(); ++i) K_[i] = K[i];
  const GainPrecision prec = options_.gain_precision;
  if (prec != GainPrecision::Float64) {
    // Each row becomes 2^-e times entries of at most 2^15 (a power of two,
    // so the scaling itself is exact), then is rounded to the storage type.
    const std::size_t rows = std::size_t(K_.T() * s_), size = rows * std::size_t(n_);
    row_scale_.resize(rows);
    if (prec == GainPrecision::Float32)
      Kf_.resize(size);
    else
      Kh_.resize(size);
    for (std::size_t r = 0; r < rows; ++r) {
      const double* k = K_.data() + r * n_;
      double m = 0.0;
      for (Index c = 0; c < n_; ++c) m = std::max(m, std::fabs(k[c]));
      int e = 0;
      if (m > 0.0) {
        std::frexp(m, &e);  // m in [2^(e-1), 2^e)
        e = 15 - e;
      }
      row_scale_[r] = std::ldexp(1.0, -e);
      for (Index c = 0; c < n_; ++c) {
        const double v = std::ldexp(k[c], e);
        if (prec == GainPrecision::Float32)
          Kf_[r * n_ + c] = float(v);
        else
          Kh_[r * n_ + c] = double_to_half(v);
      }
    }
    dzf_.setZero(n_);
  }
  z_ref_ = VectorSeq(T_ + 1, n_);
  std::copy(z_ref.data, z_ref.data + (T_ + 1) * n_, z_ref_.data());
  w_ff_ = VectorSeq(T_, s_);
  if (!w_ff.empty()) std::copy(w_ff.data, w_ff.data + T_ * s_, w_ff_.data());
  dz_.setZero(n_);
}

void Tracker::control(const Eigen::Ref<const Eigen::VectorXd>& z, Eigen::Ref<Eigen::VectorXd> w,
                      Eigen::Ref<Eigen::VectorXd> w_fb) const {
  // Past the end (index T) the last gain and feed-forward are held.
  const Index i = std::min(index_, T_ - 1);
  dz_ = z - z_ref_[index_];
  const GainPrecision prec = options_.gain_precision;
  if (prec == GainPrecision::Float64) {
    w_fb.noalias() = gain(i) * dz_;
  } else {
    // Single-precision products need |dz| ~ 1: scale by a power of two. A
    // NaN or inf in dz is passed through unscaled and propagates as in double.
    const double m = dz_.cwiseAbs().maxCoeff();
    int g = 0;
    if (m > 0.0 && std::isfinite(m)) std::frexp(m, &g);
    const double inv = std::ldexp(1.0, -g);
    for (Index c = 0; c < n_; ++c) dzf_[c] = float(dz_[c] * inv);
    const Index step = K_.T() == 1 ? 0 : i;
    const double* scale = row_scale_.data() + step * s_;
    const double x_scale = std::ldexp(1.0, g);
    if (prec == GainPrecision::Float32)
      gemv_scaled(Kf_.data() + step * s_ * n_, scale, s_, n_, dzf_.data(), x_scale, w_fb.data());
    else
      gemv_scaled(Kh_.data() + step * s_ * n_, scale, s_, n_, dzf_.data(), x_scale, w_fb.data());
  }
  w = w_ff_[i] + w_fb;
  if (options_.w_min.size() || options_.w_max.size()) {
    if (options_.w_min.size()) w = w.cwiseMax(options_.w_min);
    if (options_.w_max.size()) w = w.cwiseMin(options_.w_max);
    w_fb = w - w_ff_[i];
  }
}

void Tracker::advance() {
  if (index_ < T_) ++index_;
  if (index_ == T_ && options_.loop) index_ = 0;
}

void Tracker::set_index(Index i) {
  if (i < 0 || i > T_)
    throw std::invalid_argument("index must be in [0, " + std::to_string(T_) + "], got " + std::to_string(i));
  index_ = i;
}

Index Tracker::nearest_index(const Eigen::Ref<const Eigen::VectorXd>& z, Index first, Index last,
                             const Eigen::VectorXd* weights) const {
  if (z.size() != n_) throw_shape("z", "(" + std::to_string(n_) + ",)", "(" + std::to_string(z.size()) + ",)");
  if (last == -1) last = T_ - 1;  // Python's "the last one"
  if (first < 0 || first > last || last >= T_)
    throw std::invalid_argument("search window [first, last] must lie in [0, " + std::to_string(T_ - 1) + "]");
  if (weights && weights->size() != n_)
    throw_shape("weights", "(" + std::to_string(n_) + ",)", "(" + std::to_string(weights->size()) + ",)");
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
  if (n <= 0 || n % 2) throw std::invalid_argument("PD control needs z = [q, qd] with an even state size, got n = " + std::to_string(n));
  const Index m = n / 2;
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
