#pragma once
// Private to riccati.cpp: the Riccati step for small n (see riccati_kernels.cpp).
#include <atomic>
#include <cstdlib>
#include <memory>

#include "directable/core/errors.hpp"

namespace directable::detail {

//! Whether the compact step can serve (n, s). Measured on one core with
//! AVX2 (n = 16 .. 256, s = n/2) it is 1.5-4x faster than Eigen's products,
//! which lose most of their time to packing and edge handling at these
//! sizes, and a team of two on it beats two threads on Eigen's by 1.3-1.8x
//! (n = 128 .. 256); its products are blocked for L1 only, so above this it
//! would fall behind Eigen's cache-blocked GEMM. Built for AVX-512, whose
//! 8-wide GEMM kernels Eigen uses, the compact step serves up to n = 128.
bool compact_riccati_applies(Index n, Index s);

//! Memory the next step will read, touched a few cache lines at a time
//! during this step: the sweep streams ~60 KB of inputs per step from DRAM
//! at n = 48, and the hardware prefetchers do not run ahead across the jump
//! back from step i's matrices to step i-1's.
class PrefetchQueue {
 public:
  void add(const void* p, Index bytes);
  Index lines() const { return lines_; }
  //! Touches the next `count` lines (none once all are done). Inline: it
  //! is called once per register tile, and a call through the PLT was ~3%
  //! of a step at n = 16.
  void pump(Index count) {
    for (; count > 0 && cur_ < count_; --count) {
      Range& r = ranges_[cur_];
#if defined(__GNUC__) || defined(__clang__)
      __builtin_prefetch(r.p, 0, 2);  // to L2: the step's working set fills L1
#endif
      r.p += 64;
      if (r.p >= r.end) ++cur_;
    }
  }
  void clear() { count_ = cur_ = 0, lines_ = 0; }

 private:
  struct Range {
    const char* p;
    const char* end;
  };
  static constexpr int kMax = 12;
  Range ranges_[kMax];  // queued ranges: [cur_, count_) still to touch
  int count_ = 0, cur_ = 0;
  Index lines_ = 0;
};

//! Meeting point of a team of threads that step one CompactRiccati together:
//! a spinning barrier (a two-thread step meets six times in ~0.2 ms) and a
//! task counter per phase.
class TeamSync {
 public:
  explicit TeamSync(int size) : size_(size) {}
  int size() const { return size_; }
  //! Before the team's first wait.
  void set_size(int size) { size_ = size; }
  //! Returns once all `size` threads have called it.
  void wait();
  //! The next untaken task of `phase` (0 .. kPhases - 1), or -1 once all
  //! `count` are taken.
  Index grab(int phase, Index count) {
    const Index k = slot_[phase].next.fetch_add(1, std::memory_order_relaxed);
    return k < count ? k : -1;
  }
  //! Rearms `phase` for the next step (after a wait that ended it).
  void reset(int phase) { slot_[phase].next.store(0, std::memory_order_relaxed); }
  static constexpr int kPhases = 5;

 private:
  struct alignas(64) Slot {
    std::atomic<Index> next{0};
  };
  Slot slot_[kPhases];
  alignas(64) std::atomic<int> arrived_{0};
  alignas(64) std::atomic<unsigned> generation_{0};
  int size_;
};

//! One step of the square-root sweep on contiguous row-major buffers whose
//! rows are padded to a multiple of 4 doubles (pads kept zero), so every
//! inner loop is a broadcast-FMA over aligned 4-wide vectors. Sizes are
//! fixed at construction; the steps allocate nothing.
class CompactRiccati {
 public:
  CompactRiccati(Index n, Index s);

  //! P_{i+1} := M (n x n, symmetric).
  void load_P(const double* M);
  //! R_i := sum_k scale_k sym(R_k) (each s x s row-major); `count` terms.
  void set_R(const double* const* R, const double* scale, int count);
  //! sym(R_i), lower triangle, into dst (s x s, column-major, leading dim ld).
  void copy_R(double* dst, Index ld) const;

  //! Step i: from P_{i+1} (its factor is held here; `P_next` is the same
  //! matrix as stored in the output, read where it is only semidefinite)
  //! and A, B, Q, N (row-major; N may be null), writes K_i (s x n
  //! row-major) and P_i (n x n) and keeps P_i's factor for the next step.
  //! Returns false when H = R + B'PB is not positive definite (K_i and P_i
  //! are not written then).
  bool step(const double* A, const double* B, const double* Q, const double* N, double q_scale,
            const double* P_next, double* K, double* P);
  //! The same step (the same results, bit for bit) on a team: every thread
  //! calls it with its number (0: the thread that pumps `next` and may
  //! prepare the next step) and the same arguments; they meet at `sync`
  //! five times. Needs factored(). No meeting at the end: the caller meets
  //! the team before the next step. Returns false on every thread where H
  //! is not positive definite.
  bool step_team(int thread, TeamSync& sync, const double* A, const double* B, const double* Q, const double* N,
                 double q_scale, double* K, double* P);
  //! After a step that returned true: min_j d_j / H_jj over the pivots d_j
  //! of H's Cholesky factorization (pivot_ratio of riccati.hpp).
  double h_pivot_ratio() const;
  //! Whether P_{i+1} (the last step's P_i) has a Cholesky factor.
  bool factored() const { return factored_; }
  //! After the last step: makes the outputs' streaming stores visible.
  void finish();
  //! What the next step reads (cleared by step()).
  PrefetchQueue next;

 private:
  struct Free {
    void operator()(double* p) const { std::free(p); }
  };
  using Buffer = std::unique_ptr<double[], Free>;
  static Buffer buffer(Index count);
  void copy_P(const double* M);  // into P_, padded
  void init_row(Index j0, const double* Q, const double* N, double q_scale);
  void solve_K(Index c_begin, Index c_end, PrefetchQueue* pf, Index pf_rate);

  Index n_, s_, n4_, s4_, m4_;  // n, s; n, s and m = n + s padded to multiples of 4
  Index tiles_;            // register tiles per step: the prefetches are spread over them
  bool factored_ = false;  // P_{i+1} = R'R with R in Z's lower right block
  bool h_failed_ = false;  // step_team: H not positive definite (set by thread 0)
  Buffer P_;   // n4 x n4: P_{i+1} where it is only semidefinite; P_i's upper 4 x 4 blocks
  Buffer U_;   // n4 x m4: R [B A] (B in columns [0, s4), A in [s4, s4 + n4))
  Buffer BA_;  // n4 x m4: [B A] itself, only where P_{i+1} is semidefinite
  Buffer Z_;   // m4 x m4: [[H, G], [G', A'PA + q sym(Q)]] (upper), then its factor
  Buffer R_;   // s4 x s4: sym(R_i), identity on the pad
  Buffer K_;   // s4 x n4: K = -R_H^{-1} Y
};

}  // namespace directable::detail
