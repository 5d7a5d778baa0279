#pragma once
// The receding-horizon closed loop: at step t read the plant's state,
// optimise the window reference[t .. t+H] from it (warm-started from the
// previous window's solution shifted by one step), apply the first control
// to the plant for one control step, shift.
//
// The plant is anything behind the Plant interface (sim/plant.hpp). A plant
// whose prediction model is frozen or linearised at its actual state
// refreshes that model in begin_step().
#include <Eigen/Core>

#include "directable/control/mpc/optimizer.hpp"
#include "directable/core/progress.hpp"
#include "directable/core/sequence.hpp"
#include "directable/sim/plant.hpp"

namespace directable {

//! Result of a receding-horizon run.
struct RecedingResult {
  VectorSeq states;    //!< (steps+1) x n: the plant's states
  VectorSeq controls;  //!< steps x s: the applied first controls
  Eigen::VectorXd cost_initial, cost, seconds;  //!< steps each: per window
  Eigen::VectorXi iterations;                   //!< steps
};

//! The closed loop over `steps` control steps. reference ((steps+H+1) x n);
//! u_reference ((steps+H) x s, window t weighs ||u_i - u_reference[t+i]||^2_R)
//! or empty (zero); u0 (H x s): the first window's starting controls, or
//! empty (zeros); later windows warm-start. Throws naming the argument for
//! bad shapes and domain_error with the step if the plant's state becomes
//! non-finite; Cancelled when progress asks to stop.
RecedingResult run_receding(const HorizonOptimizer& optimizer, Plant& plant, const SeqView& reference, Index steps,
                            const SeqView& u_reference = SeqView(), const SeqView& u0 = SeqView(),
                            const ProgressFn* progress = nullptr);

}  // namespace directable
