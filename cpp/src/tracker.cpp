#include "directable/control/tracker.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace directable {

namespace {

// y = K x for a row-major s x n float matrix K and double x, y: each entry
// of K is widened to double, so only the storage is single precision.
void gemv_float(const float* K, Index s, Index n, const double* x, double* y) {
  Index r = 0;
#if defined(__AVX2__) && defined(__FMA__)
  const Index n4 = n - n % 4;
  auto hsum = [](__m256d v) {
    const __m128d h = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
  };
  for (; r + 4 <= s; r += 4) {
    const float* k = K + r * n;
    __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
    for (Index c = 0; c < n4; c += 4) {
      const __m256d xv = _mm256_loadu_pd(x + c);
      a0 = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm_loadu_ps(k + c)), xv, a0);
      a1 = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm_loadu_ps(k + n + c)), xv, a1);
      a2 = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm_loadu_ps(k + 2 * n + c)), xv, a2);
      a3 = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm_loadu_ps(k + 3 * n + c)), xv, a3);
    }
    double y0 = hsum(a0), y1 = hsum(a1), y2 = hsum(a2), y3 = hsum(a3);
    for (Index c = n4; c < n; ++c) {
      y0 += double(k[c]) * x[c];
      y1 += double(k[n + c]) * x[c];
      y2 += double(k[2 * n + c]) * x[c];
      y3 += double(k[3 * n + c]) * x[c];
    }
    y[r] = y0;
    y[r + 1] = y1;
    y[r + 2] = y2;
    y[r + 3] = y3;
  }
#endif
  for (; r < s; ++r) {
    double acc = 0.0;
    for (Index c = 0; c < n; ++c) acc += double(K[r * n + c]) * x[c];
    y[r] = acc;
  }
}

}  // namespace

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
  if (options_.float32_gains) {
    Kf_.resize(std::size_t(K_.T() * s_ * n_));
    std::transform(K_.data(), K_.data() + Kf_.size(), Kf_.begin(), [](double v) { return float(v); });
    for (float v : Kf_)
      if (!std::isfinite(v)) throw std::domain_error("K has entries beyond the float32 range (|K| > 3.4e38): use float32_gains=False");
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
  if (options_.float32_gains)
    gemv_float(Kf_.data() + (K_.T() == 1 ? 0 : i) * s_ * n_, s_, n_, dz_.data(), w_fb.data());
  else
    w_fb.noalias() = gain(i) * dz_;
  w = w_ff_[i] + w_fb;
  if (options_.w_min.size() || options_.w_max.size()) {
    if (options_.w_min.size()) w = w.cwiseMax(options_.w_min);
    if (options_.w_max.size()) w = w.cwiseMin(options_.w_max);
    w_fb = w - w_ff_[i];
  }
}

void Tracker::prefetch_next() const {
  if (K_.T() == 1) return;
  Index next = index_ + 1;
  if (next >= T_) next = options_.loop ? 0 : T_ - 1;
  const bool f = options_.float32_gains;
  const char* p = f ? reinterpret_cast<const char*>(Kf_.data() + next * s_ * n_)
                    : reinterpret_cast<const char*>(K_[next].data());
  const Index bytes = s_ * n_ * Index(f ? sizeof(float) : sizeof(double));
#if defined(__GNUC__) || defined(__clang__)
  for (Index b = 0; b < bytes; b += 64) __builtin_prefetch(p + b, 0, 3);
#else
  (void)p;
  (void)bytes;
#endif
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
