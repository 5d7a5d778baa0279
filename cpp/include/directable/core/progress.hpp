#pragma once
// Progress and cancellation of long calls: a callback reports (done, total)
// and returns false to stop (Ctrl-C in Python); the core throws Cancelled.
#include <functional>
#include <stdexcept>

#include "directable/core/types.hpp"

namespace directable {

//! Thrown when a progress callback asks to stop.
struct Cancelled : std::runtime_error {
  Cancelled() : std::runtime_error("computation cancelled") {}
};

//! Progress report: (work done, total work). Returning false cancels.
using ProgressFn = std::function<bool(Index, Index)>;

//! Calls the callback at most every `interval` seconds (and at the end);
//! throws Cancelled when it returns false. Not thread-safe: call from one thread.
class ProgressThrottle {
 public:
  ProgressThrottle(const ProgressFn* fn, Index total, double interval = 0.05);
  //! Returns false once cancelled (so workers can stop), never throws.
  bool report(Index done);
  //! Final report; throws Cancelled if the run was cancelled.
  void finish(Index done);
  bool cancelled() const { return cancelled_; }

 private:
  const ProgressFn* fn_;
  Index total_;
  double interval_;  //!< seconds between calls
  double last_;      //!< time of the last call, seconds
  bool cancelled_ = false;
};

//! Cancellation inside one unit of work that has no step count of its own
//! to report (the inner steps of one prediction step, which may be
//! millions): a long call installs a check for its thread with a
//! CancelScope, and such loops call cancellation_point() between pieces of
//! work. The check is the caller's (time-throttled) "keep going?"; without a
//! scope on the thread cancellation_point() costs one thread-local read.
//! Never call it inside an OpenMP region that does not catch (core/parallel.hpp does).
class CancelScope {
 public:
  //! keep_going: asked by cancellation_point() on this thread while the
  //! scope lives (not copied: it must outlive the scope); false stops.
  explicit CancelScope(const std::function<bool()>* keep_going);
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  const std::function<bool()>* previous_;  //!< the enclosing scope's check (scopes nest)
};

//! Throws Cancelled when the calling thread's CancelScope says stop.
void cancellation_point();

}  // namespace directable
