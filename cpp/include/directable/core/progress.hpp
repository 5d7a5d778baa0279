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

}  // namespace directable
