#pragma once
// The PD/SPD servo tracking loop: an articulated body follows a whole
// reference q_ref (T+1 states) under the servo laws of control/spd, stepped
// by one of the integrators, in one call.
#include <Eigen/Core>

#include "directable/control/spd.hpp"
#include "directable/core/progress.hpp"
#include "directable/core/sequence.hpp"
#include "directable/models/articulated.hpp"

namespace directable {

struct TrackInputs {
  SeqView q_ref;    //!< (T+1) x n
  SeqView qd_ref;   //!< (T+1) x n, or empty: zero reference velocity (eq. 1 / 3)
  SeqView kp, kd;   //!< 1 x n (constant) or T x n (per step), >= 0
  SeqView tau_ff;   //!< T x n feed-forward torque, or empty
  SeqView tau_ext;  //!< T x n external torque (disturbance, not part of tau), or empty
  Eigen::VectorXd tau_min, tau_max;  //!< n each, or empty
  Servo servo = Servo::spd;
  Integrator integrator = Integrator::explicit_euler;
  double dt = 0.0;
  double max_state = 1e6;  //!< |q| or |qd| above this counts as divergence
};

struct TrackResult {
  VectorSeq q, qd;  //!< (T+1) x n; rows after a divergence are NaN
  VectorSeq tau;    //!< T x n servo + feed-forward torque; NaN after a divergence
  bool diverged = false;
  Index diverged_at = -1;  //!< step i whose result q[i+1] was non-finite or beyond max_state
  Index steps = 0;         //!< steps completed with a valid state
};

//! Checks the inputs (shapes, finiteness, signs) against the model.
void check_track_inputs(const Articulated& model, const Eigen::Ref<const Eigen::VectorXd>& q0,
                        const Eigen::Ref<const Eigen::VectorXd>& qd0, const TrackInputs& in);

//! Runs the T steps of the reference; never throws on divergence (reported
//! in the result). The model is only read: one model may serve several
//! threads, each with its own call.
TrackResult track(const Articulated& model, const Eigen::Ref<const Eigen::VectorXd>& q0,
                  const Eigen::Ref<const Eigen::VectorXd>& qd0, const TrackInputs& in,
                  const ProgressFn* progress = nullptr);

}  // namespace directable
