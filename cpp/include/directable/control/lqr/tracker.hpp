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
//! precision (int8: in integers, after balancing the columns by powers of
//! two c_j <= 1 so that position and velocity gains of different magnitude
//! share a row's 255 levels fairly). The error bound of each storage is
//! stated once, in the docstring of directable.lqr.tracker, and tested in
//! tests/test_tracker.py.
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

class Tracker;

//! Per-run state of a Tracker: the tracked reference step and the control
//! step's buffers. One TrackerData belongs to one run (one thread); the
//! Tracker it came from stays const, so one schedule can serve several runs
//! at once, each with its own data (Tracker::create_data).
class TrackerData {
 public:
  TrackerData() = default;
  Index index() const { return index_; }

 private:
  friend class Tracker;
  Index index_ = 0;                     //!< tracked reference step, in [0, T]
  Eigen::VectorXd dz_;                  //!< n   z - z_ref[index] (times col_scale for reduced storage)
  Eigen::VectorXf dz_scaled_;           //!< n   dz scaled to max ~ 1 (float32/float16 storage)
  std::vector<std::int16_t> dz_quantized_;  //!< n   col_scale .* dz in int16 (int8 storage)
};

//! The gain schedule: immutable once built. Every call that moves along the
//! schedule takes the run's TrackerData.
class Tracker {
 public:
  //! K: T x (s x n) or one s x n gain (constant); z_ref: T+1 x n;
  //! w_ff: T x s, or empty (zero feed-forward). Arrays are copied.
  Tracker(SeqView K, SeqView z_ref, SeqView w_ff, const TrackerOptions& options = {});

  Index horizon() const { return T_; }
  Index n() const { return n_; }
  Index s() const { return s_; }
  const TrackerOptions& options() const { return options_; }

  //! Data for one run, at reference step `index` (in [0, T]), with the
  //! buffers of the control step (which then allocates nothing).
  TrackerData create_data(Index index = 0) const;

  //! w = w_ff[i] + K[i](z - z_ref[i]) at data's index i, clipped to the
  //! limits; w_fb receives w - w_ff[i]. Does not advance.
  void control(const Eigen::Ref<const Eigen::VectorXd>& z, TrackerData& data, Eigen::Ref<Eigen::VectorXd> w,
               Eigen::Ref<Eigen::VectorXd> w_fb) const;
  //! Moves data to the next reference step. Reaching T rewinds to 0 (loop)
  //! or stays at T, where the last gain and feed-forward are held.
  void advance(TrackerData& data) const;
  //! Moves data to step i (in [0, T]; invalid_argument naming `name` otherwise).
  void set_index(TrackerData& data, Index i, const char* name = "index") const;
  //! Reference step in [first, last] whose state is closest to z (Euclidean,
  //! optionally weighted by `weights` (n, >= 0) per coordinate).
  Index nearest_index(const Eigen::Ref<const Eigen::VectorXd>& z, Index first = 0, Index last = -1,
                      const Eigen::VectorXd* weights = nullptr) const;
  //! Moves data to nearest_index(z) and returns it.
  Index jump_to_nearest(const Eigen::Ref<const Eigen::VectorXd>& z, TrackerData& data) const {
    return data.index_ = nearest_index(z);
  }

  //! Reference state tracked at index i (i in [0, T]).
  ConstVecMap reference_state(Index i) const { return z_ref_[i]; }
  ConstVecMap feed_forward(Index i) const { return w_ff_[i]; }
  ConstMatMap gain(Index i) const { return K_[K_.T() == 1 ? 0 : i]; }
  const MatrixSeq& gains() const { return K_; }
  const VectorSeq& reference() const { return z_ref_; }
  const VectorSeq& feed_forward() const { return w_ff_; }

 private:
  void store_reduced_gains();
  //! w_fb = K[i] dz from the reduced storage (dz = z - z_ref[data.index]).
  void reduced_feedback(const Eigen::Ref<const Eigen::VectorXd>& z, Index i, TrackerData& data,
                        Eigen::Ref<Eigen::VectorXd> w_fb) const;

  Index T_, n_, s_;
  MatrixSeq K_;  //!< T x (s x n), or 1 x (s x n) for a constant gain
  // Reduced storage: K_[i](r, c) ~= row_scale_[i s + r] * (stored entry) * col_scale_[c].
  std::vector<float, NoInitAllocator<float>> K_float32_;                  //!< T x s x n, float32 storage only
  std::vector<std::uint16_t, NoInitAllocator<std::uint16_t>> K_float16_;  //!< T x s x n IEEE half, float16 only
  std::vector<std::int8_t, NoInitAllocator<std::int8_t>> K_int8_;         //!< T x s x n, int8 storage only
  std::vector<double> row_scale_;  //!< T x s, reduced storage only
  Eigen::VectorXd col_scale_;      //!< n powers of two <= 1 (ones unless int8)
  VectorSeq z_ref_;  //!< (T+1) x n
  VectorSeq w_ff_;   //!< T x s
  TrackerOptions options_;
};

//! PD gain on z = [q, qd] (n = 2m): K = -[diag(kp) S', diag(kd) S'] where S
//! (m x s) maps the controls to the coordinates' forces, as in a model's
//! actuation (identity if empty, s = m); kp, kd have length s (or 1).
RowMatrix pd_gain(const Eigen::Ref<const Eigen::VectorXd>& kp, const Eigen::Ref<const Eigen::VectorXd>& kd,
                  Index n, const Eigen::Ref<const RowMatrix>& S);

}  // namespace directable
