#pragma once
// The Python Tracker: a const gain schedule shared by every run that uses
// it, and the TrackerData of the per-step calls made on the object itself
// (control, advance, index). Whole runs (simulate, Simulation) make their
// own data, so one Tracker may drive several runs in several threads.
#include <memory>

#include "directable/control/lqr/tracker.hpp"

namespace directable::py_bind {

struct TrackerObject {
  explicit TrackerObject(std::shared_ptr<const Tracker> t) : schedule(std::move(t)), data(schedule->create_data()) {}
  std::shared_ptr<const Tracker> schedule;
  TrackerData data;  //!< used by the per-step calls only (they hold the GIL)
};

}  // namespace directable::py_bind
