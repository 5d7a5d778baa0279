#pragma once
// Runtime tracking controller (Barbic-Popovic sec. 4 and 7):
//   w = w_ff[i] + K[i] (z - z_ref[i]),
// with looping/rewinding, jumps to the closest reference state, and
// optional box limits on w. A PD controller (eq. 14) is the same law with
// one constant gain K = -[diag(kp) S', diag(kd) S'] (see pd_gain).
#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

#include "directable/core/sequence.hpp"

namespace directable {

//! How the control step stores the gains it multiplies by. A 500-step
//! schedule at n = 128, s = 64 is 32 MB in double, so the time-varying step
//! is bound by streaming its gain from memory; float32 halves that, float16
//! quarters it and int8 takes an eighth (a float16 schedule of up to ~50
//! such steps stays in a 1 MB L2: 0.7 us per step there against 1-2 us from
//! L3/DRAM; int8's 8 KB per step measured ~0.5 us over 500 steps). Reduced
//! storage keeps each row of K_i as a scale times entries of at most 2^15
//! (127 for int8), so neither range overflows, and multiplies in single
//! precision (int8: in integers):
//!   float32: |w_fb - K dz| <= ~2e-6  sum_j |K_ij dz_j|
//!   float16: |w_fb - K dz| <= ~5e-4  sum_j |K_ij dz_j|  (2^-11 per entry)
//!   int8:    |w_fb - K dz|_i <= M_i (sum_j c_j |dz_j| / 254 + (n+1) 2^-15 max_j c_j |dz_j|)
//! with M_i = max_j |K_ij / c_j|. int8 first balances the columns by powers
//! of two c_j <= 1 (from each column's largest entry over the schedule), so
//! position and velocity gains of different magnitude share a row's 255
//! levels fairly, and multiplies by c .* dz rounded to int16 with exact
//! integer sums.
enum class GainPrecision { Float64, Float32, Float16, Int8 };

//! "float64" | "float32" | "float16" | "int8" -> GainPrecision (invalid_argument otherwise).
GainPrecision gain_precision_from_name(const std::string& name);
const char* gain_precision_name(GainPrecision p);

struct TrackerOptions {
  bool loop = false;          //!< after the last step rewind to step 0
  Eigen::VectorXd w_min;      //!< s, or empty: no lower limit
  Eigen::VectorXd w_max;      //!< s, or empty: no upper limit
  //! Storage of the gains the control step reads; gains() returns K as given.
  GainPrecision gain_precision = GainPrecision::Float64;
};

class Tracker {
 public:
  //! K: T x (s x n) or one s x n gain (constant); z_ref: T+1 x n;
  //! w_ff: T x s, or empty (zero feed-forward). Arrays are copied.
  Tracker(SeqView K, SeqView z_ref, SeqView w_ff, const TrackerOptions& options = {});

  Index horizon() const { return T_; }
  Index n() const { return n_; }
  Index s() const { return s_; }
  Index index() const { return index_; }
  const TrackerOptions& options() const { return options_; }

  //! w = w_ff[i] + K[i](z - z_ref[i]) at the current index, clipped to the
  //! limits; w_fb receives w - w_ff[i]. Does not advance.
  void control(const Eigen::Ref<const Eigen::VectorXd>& z, Eigen::Ref<Eigen::VectorXd> w,
               Eigen::Ref<Eigen::VectorXd> w_fb) const;
  //! Moves to the next reference step. Reaching T rewinds to 0 (loop) or
  //! stays at T, where the last gain and feed-forward are held.
  void advance();
  void set_index(Index i);
  void rewind() { index_ = 0; }
  //! Reference step in [first, last] whose state is closest to z (Euclidean,
  //! optionally weighted by `weights` (n) per coordinate).
  Index nearest_index(const Eigen::Ref<const Eigen::VectorXd>& z, Index first = 0, Index last = -1,
                      const Eigen::VectorXd* weights = nullptr) const;
  //! Jumps the tracked index to nearest_index(z) and returns it.
  Index jump_to_nearest(const Eigen::Ref<const Eigen::VectorXd>& z) { return index_ = nearest_index(z); }

  //! Reference state tracked at index i (i in [0, T]).
  ConstVecMap reference_state(Index i) const { return z_ref_[i]; }
  ConstVecMap feed_forward(Index i) const { return w_ff_[i]; }
  ConstMatMap gain(Index i) const { return K_[K_.T() == 1 ? 0 : i]; }
  const MatrixSeq& gains() const { return K_; }
  const VectorSeq& reference() const { return z_ref_; }
  const VectorSeq& feed_forward() const { return w_ff_; }

 private:
  void store_reduced_gains();

  Index T_, n_, s_;
  MatrixSeq K_;
  // Reduced storage: K_[i](r, c) ~= row_scale_[i s + r] * (stored entry) * col_scale_[c].
  std::vector<float, NoInitAllocator<float>> Kf_;                  //!< T x s x n, float32 storage only
  std::vector<std::uint16_t, NoInitAllocator<std::uint16_t>> Kh_;  //!< T x s x n IEEE half, float16 storage only
  std::vector<std::int8_t, NoInitAllocator<std::int8_t>> Kq_;      //!< T x s x n, int8 storage only
  std::vector<double> row_scale_;                                  //!< T x s, reduced storage only
  Eigen::VectorXd col_scale_;                                      //!< n powers of two <= 1 (ones unless int8)
  VectorSeq z_ref_, w_ff_;
  TrackerOptions options_;
  Index index_ = 0;
  mutable Eigen::VectorXd dz_;   //!< n
  mutable Eigen::VectorXf dzf_;  //!< n, dz scaled to max ~ 1 (float32/float16 storage)
  mutable std::vector<std::int16_t> dzq_;  //!< n, col_scale_ .* dz in int16 (int8 storage)
};

//! PD gain on z = [q, qd] (n = 2m): K = -[diag(kp) S', diag(kd) S'] where S
//! (m x s) maps the controls to the coordinates' forces, as in a model's
//! actuation (identity if empty, s = m); kp, kd have length s (or 1).
RowMatrix pd_gain(const Eigen::Ref<const Eigen::VectorXd>& kp, const Eigen::Ref<const Eigen::VectorXd>& kd,
                  Index n, const Eigen::Ref<const RowMatrix>& S);

}  // namespace directable
