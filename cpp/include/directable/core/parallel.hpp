#pragma once
// Independent per-step work (discretization, linearization) spread over
// threads, with one workspace per thread, throttled progress from the
// calling thread, cancellation, and the first exception re-thrown on the
// caller's thread (an exception must never leave an OpenMP region).
#include <atomic>
#include <exception>
#include <mutex>

#include "directable/core/errors.hpp"
#ifdef _OPENMP
#include <omp.h>
#endif

namespace directable {

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
