#pragma once
// Monotonic wall clock, for progress throttles, time budgets and timings.

namespace directable {

//! Monotonic wall-clock time in seconds.
double now_seconds();

}  // namespace directable
