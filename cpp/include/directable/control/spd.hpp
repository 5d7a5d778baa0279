#pragma once
// PD and Stable PD (Tan, Liu & Turk 2011) servos on articulated bodies, and
// the tracking loop that runs a whole reference in one call.
//
//   PD  (eq. 1/4):  tau = tau_ff - Kp (q^n - qbar^n) - Kd (qd^n - qdbar^n)
//   SPD (eq. 5/11): tau = tau_ff - Kp (q^n + dt qd^n - qbar^{n+1})
//                                - Kd (qd^n + dt qdd^n - qdbar^{n+1}),
//                   qdd^n = (M + Kd dt)^-1 (-C - Kp (q^n + dt qd^n - qbar^{n+1})
//                                           - Kd (qd^n - qdbar^{n+1}) + tau_ff + tau_ext)
// Gains are diagonal (per coordinate), constant or per step; without a
// reference velocity qdbar = 0 (eq. 1 and 3). Torque limits clamp tau; a
// clamped SPD torque is then applied as a plain torque (qdd = M^-1 (tau - C + tau_ext)).
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <memory>

#include "directable/models/articulated.hpp"
#include "directable/models/chain.hpp"
#include "directable/core/progress.hpp"

namespace directable {

enum class Servo { none = 0, pd = 1, spd = 2 };

//! Buffers of one servo + integration step, allocated once per run.
struct ServoWorkspace {
  explicit ServoWorkspace(const Articulated& model);
  std::unique_ptr<ModelData> model_ws;
  Eigen::MatrixXd M, A;
  Eigen::LLT<Eigen::MatrixXd> llt;
  Eigen::VectorXd C, e, rhs, qdd, tau, q1, qd1, qdd_k, tmp_q, tmp_qd, kq[4], kv[4];
};

//! Per-step inputs of a servo (pointers to n values; null means zero /
//! absent; tau_min/tau_max null means unlimited).
struct ServoInputs {
  const double* q_ref = nullptr;   //!< qbar^n (PD) or qbar^{n+1} (SPD)
  const double* qd_ref = nullptr;  //!< the same for the reference velocity, or null (zero)
  const double* kp = nullptr;
  const double* kd = nullptr;
  const double* tau_ff = nullptr;
  const double* tau_ext = nullptr;
  const double* tau_min = nullptr;
  const double* tau_max = nullptr;
};

//! Servo torque tau (n) and the resulting acceleration qdd (n) at (q, qd),
//! written to ws.tau and ws.qdd. No allocation.
void servo(const Articulated& model, Servo kind, const Eigen::Ref<const Eigen::VectorXd>& q,
           const Eigen::Ref<const Eigen::VectorXd>& qd, double dt, const ServoInputs& in, ServoWorkspace& ws);

//! SPD from given matrices (a model of another engine): M (n x n), C (n,)
//! (everything but the servo: bias, gravity, external forces with a minus
//! sign). Returns tau and qdd in the output arguments.
void spd_from_matrices(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& C,
                       const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
                       const Eigen::Ref<const Eigen::VectorXd>& q_ref_next, const Eigen::Ref<const Eigen::VectorXd>& qd_ref_next,
                       const Eigen::Ref<const Eigen::VectorXd>& kp, const Eigen::Ref<const Eigen::VectorXd>& kd, double dt,
                       Eigen::Ref<Eigen::VectorXd> tau, Eigen::Ref<Eigen::VectorXd> qdd);

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
//! in the result).
TrackResult track(const Articulated& model, const Eigen::Ref<const Eigen::VectorXd>& q0,
                  const Eigen::Ref<const Eigen::VectorXd>& qd0, const TrackInputs& in,
                  const ProgressFn* progress = nullptr);

}  // namespace directable
