#pragma once
// A PD servo closing the loop on a Plant whose state is [q (m), q' (m)] and
// whose control acts on q (s = m), e.g. per-particle forces on an SPH fluid:
//
//   u_t = u_ff + kp .* (q_ref - q_t) + kd .* (qd_ref - q'_t),
//
// constant gains and references, held over each control step. The heuristic
// baseline of the receding-horizon experiments, run in one call like them.
#include <Eigen/Core>

#include "directable/core/progress.hpp"
#include "directable/core/sequence.hpp"
#include "directable/sim/plant.hpp"

namespace directable {

//! Gains and references of the servo, each (s,).
struct PlantServoLaw {
  Eigen::VectorXd q_ref, qd_ref;  //!< s each: reference position and velocity
  Eigen::VectorXd kp, kd;         //!< s each: position and velocity gains (0: no feedback)
  Eigen::VectorXd u_ff;           //!< s: feed-forward (e.g. the weight to hold)
};

//! Result of a servo run.
struct PlantServoResult {
  VectorSeq states;    //!< (steps+1) x n: the plant's states (after each step's events)
  VectorSeq controls;  //!< steps x s: the applied controls
};

//! Runs `steps` control steps: begin_step(t) (the plant's events), u_t from
//! the state, advance(t, u_t). Throws naming the argument for a law whose
//! vectors are not (s,) or not finite, or a plant whose state is not
//! [q; q'] with s = n / 2; domain_error with the step if the state becomes
//! non-finite; Cancelled when progress asks to stop.
PlantServoResult run_plant_servo(Plant& plant, const PlantServoLaw& law, Index steps,
                                 const ProgressFn* progress = nullptr);

}  // namespace directable
