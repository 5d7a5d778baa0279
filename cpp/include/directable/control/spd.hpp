#pragma once
// PD and Stable PD (Tan, Liu & Turk 2011) servo laws on articulated bodies
// (the loop that tracks a whole reference with them is sim/servo_tracking).
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

namespace directable {

enum class Servo { none = 0, pd = 1, spd = 2 };

//! Buffers of the servo laws, allocated once per run (one per thread).
struct ServoWorkspace {
  explicit ServoWorkspace(const Articulated& model);
  std::unique_ptr<ModelData> model_ws;  //!< the model's own workspace
  Eigen::MatrixXd M, A;                 //!< n x n: M(q) and M + Kd dt
  Eigen::LLT<Eigen::MatrixXd> llt;
  Eigen::VectorXd C, e, rhs;            //!< n each: C(q, qd), position error, velocity error / right-hand side
  Eigen::VectorXd qdd, tau;             //!< n each: the results
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

}  // namespace directable
