#include "directable/core/progress.hpp"

#include "directable/core/clock.hpp"

namespace directable {

ProgressThrottle::ProgressThrottle(const ProgressFn* fn, Index total, double interval)
    : fn_(fn && *fn ? fn : nullptr), total_(total), interval_(interval), last_(now_seconds()) {}

bool ProgressThrottle::report(Index done) {
  if (cancelled_) return false;
  if (!fn_) return true;
  double t = now_seconds();
  if (t - last_ < interval_) return true;
  last_ = t;
  if (!(*fn_)(done, total_)) cancelled_ = true;
  return !cancelled_;
}

void ProgressThrottle::finish(Index done) {
  if (!cancelled_ && fn_ && !(*fn_)(done, total_)) cancelled_ = true;
  if (cancelled_) throw Cancelled();
}

namespace {
// the check of the innermost CancelScope on this thread (null: none)
thread_local const std::function<bool()>* current_check = nullptr;
}  // namespace

CancelScope::CancelScope(const std::function<bool()>* keep_going) : previous_(current_check) {
  current_check = keep_going && *keep_going ? keep_going : previous_;
}

CancelScope::~CancelScope() { current_check = previous_; }

void cancellation_point() {
  const std::function<bool()>* check = current_check;
  if (check && !(*check)()) throw Cancelled();
}

}  // namespace directable
