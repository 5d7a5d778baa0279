#pragma once
// Independent per-step work (discretization, linearization) spread over
// threads, with one workspace per thread, throttled progress from the
// calling thread, cancellation, and the first exception re-thrown on the
// caller's thread (an exception must never leave an OpenMP region).
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>

#include "directable/core/errors.hpp"
#ifdef _OPENMP
#include <omp.h>
#endif

namespace directable {

//! Team size chosen by measurement. On cores shared with other jobs a
//! thread that loses its core stalls every barrier of a parallel loop
//! (measured here: a team of two 2.5-5x slower than one thread), while on
//! idle cores the team is faster. Each stretch of calls starts by timing 3
//! calls with all threads and 3 with one (summed: one stalled barrier must
//! count) and runs the rest with the faster; a team that falls behind its
//! one-thread time in the stretch is dropped at once. The stretch doubles
//! (64 .. 1024 calls) while the verdict stays the same, so probing costs
//! little where it loses. Not thread-safe: guard concurrent callers.
class TeamChooser {
 public:
  //! max_threads <= 0: all cores (omp_get_max_threads() at each call).
  explicit TeamChooser(int max_threads = 0) : fixed_max_(max_threads) {}
  //! Threads for the next call.
  int begin() {
    max_ = fixed_max_ > 0 ? fixed_max_ : available();
    if (max_ <= 1) return 1;
    if (k_ < kProbe) return max_;
    if (k_ < 2 * kProbe) return 1;
    return std::min(best_, max_);
  }
  //! Wall time of the call that begin() sized.
  void end(double seconds) {
    if (max_ <= 1) return;
    if (k_ < kProbe) {
      t_team_ += seconds;
    } else if (k_ < 2 * kProbe) {
      t_one_ += seconds;
      if (k_ == 2 * kProbe - 1) {
        const int verdict = t_team_ < t_one_ ? max_ : 1;
        period_ = verdict == best_ ? std::min(2 * period_, kMaxPeriod) : kMinPeriod;
        best_ = verdict;
        t_team_ = 0.0;
      }
    } else if (best_ > 1) {
      t_team_ += seconds;
      const int run = k_ - 2 * kProbe + 1;
      if (run % kProbe == 0 && t_team_ / run > t_one_ / kProbe) best_ = 1;
    }
    if (++k_ >= period_) {
      k_ = 0;
      t_team_ = t_one_ = 0.0;
    }
  }
  int best() const { return best_; }  //!< current verdict (1 or the team size)

 private:
  static int available() {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
  }
  static constexpr int kProbe = 3, kMinPeriod = 64, kMaxPeriod = 1024;
  int fixed_max_, max_ = 1, best_ = 1, k_ = 0, period_ = kMinPeriod;
  double t_team_ = 0.0, t_one_ = 0.0;
};

//! Runs body(i, workspace) for i in [0, count) on `threads` threads (<= 0:
//! all cores); make_workspace() is called once per thread. Progress is
//! reported against `total` steps (>= count; work may stand for more steps,
//! e.g. one step replicated over a constant-in-time horizon). Throws
//! Cancelled if the progress callback asks to stop.
template <class MakeWorkspace, class Body>
void parallel_steps(Index count, int threads, const ProgressFn* progress, Index total, MakeWorkspace make_workspace,
                    Body body) {
  ProgressThrottle throttle(progress, total);
  std::atomic<bool> cancel{false};
  std::atomic<Index> done{0};
  std::exception_ptr error;
  std::mutex mutex;
#ifdef _OPENMP
  if (threads <= 0) threads = omp_get_max_threads();
#else
  threads = 1;
#endif
  if (count < threads) threads = int(count > 0 ? count : 1);
#pragma omp parallel num_threads(threads)
  {
    auto workspace = make_workspace();
#pragma omp for schedule(dynamic, 1)
    for (Index i = 0; i < count; ++i) {
      if (cancel.load(std::memory_order_relaxed)) continue;
      try {
        body(i, workspace);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!error) error = std::current_exception();
        cancel = true;
      }
      const Index d = ++done;
#ifdef _OPENMP
      const bool caller = omp_get_thread_num() == 0;
#else
      const bool caller = true;
#endif
      if (caller && !throttle.report(d)) cancel = true;
    }
  }
  if (error) std::rethrow_exception(error);
  throttle.finish(total);
}

}  // namespace directable
