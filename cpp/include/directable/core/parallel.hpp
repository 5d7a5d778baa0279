#pragma once
// Independent per-step work (discretization, linearization) spread over
// threads, with one workspace per thread, throttled progress from the
// calling thread, cancellation, and the first exception re-thrown on the
// caller's thread (an exception must never leave an OpenMP region).
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>

#include "directable/core/progress.hpp"
#include "directable/core/types.hpp"
#ifdef _OPENMP
#include <omp.h>
#endif

namespace directable {

//! Whether this process is a child forked (fork(), multiprocessing's "fork"
//! start method) from a process that had already started a thread team.
//! GNU OpenMP cannot restart its thread pool in such a child (a parallel
//! region there waits forever for the parent's threads), so the child runs
//! every parallel loop on its own thread; "spawn" and "forkserver" children
//! are fresh processes and get all cores. Set by a pthread_atfork handler.
bool forked_after_threads();

//! Records that a thread team has run in this process (called by the
//! parallel loops; cheap, idempotent).
void note_thread_team();

//! Threads a parallel region may use: OMP_NUM_THREADS / set_max_threads (1
//! without OpenMP and in a child forked after a team ran, see
//! forked_after_threads()).
inline int max_threads() {
#ifdef _OPENMP
  if (forked_after_threads()) return 1;
  const int all = omp_get_max_threads();
  if (all > 1) note_thread_team();
  return all;
#else
  return 1;
#endif
}

//! Sets max_threads() for the calls that follow; threads >= 1.
inline void set_max_threads(int threads) {
  if (threads < 1) throw std::invalid_argument("threads must be >= 1, got " + std::to_string(threads));
#ifdef _OPENMP
  omp_set_num_threads(threads);
#endif
}

//! The team size for a call that asked for `requested` threads: <= 0 means
//! all, and no call gets more than max_threads().
inline int resolve_threads(int requested) {
  const int all = max_threads();
  return requested > 0 ? std::min(requested, all) : all;
}

//! This thread's rank in the innermost parallel region (0 outside one).
inline int thread_rank() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

//! Threads in the innermost parallel region (1 outside one).
inline int team_size() {
#ifdef _OPENMP
  return omp_get_num_threads();
#else
  return 1;
#endif
}

//! Whether the caller already runs inside a parallel region.
inline bool in_parallel_region() {
#ifdef _OPENMP
  return omp_in_parallel();
#else
  return false;
#endif
}

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
  static int available() { return max_threads(); }
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
  threads = resolve_threads(threads);
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
      if (thread_rank() == 0 && !throttle.report(d)) cancel = true;
    }
  }
  if (error) std::rethrow_exception(error);
  throttle.finish(total);
}

}  // namespace directable
