#include "directable/core/parallel.hpp"

#include <atomic>

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#endif

namespace directable {

namespace {

std::atomic<bool> team_started{false};
std::atomic<bool> forked_child{false};

#if defined(__unix__) || defined(__APPLE__)
// Runs in the child right after fork(): only async-signal-safe work here.
void on_fork_child() {
  if (team_started.load(std::memory_order_relaxed)) forked_child.store(true, std::memory_order_relaxed);
}

// Registered once when the library is loaded.
[[maybe_unused]] const bool fork_handler_registered = [] { return pthread_atfork(nullptr, nullptr, &on_fork_child) == 0; }();
#endif

}  // namespace

bool forked_after_threads() { return forked_child.load(std::memory_order_relaxed); }

void note_thread_team() {
  if (!team_started.load(std::memory_order_relaxed)) team_started.store(true, std::memory_order_relaxed);
}

}  // namespace directable
