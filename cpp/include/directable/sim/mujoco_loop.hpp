#pragma once
// Closed loops on a MuJoCo plant through MuJoCo's C API (sim/mujoco_api):
// time-varying LQR on the controls and PD / Stable PD servos on the joint
// forces, one call for a whole run, and the single SPD torque of
// directable.mujoco.spd. MuJoCo's model and data are reached through the
// addresses of their arrays, which the Python layer reads from its NumPy
// views of mjModel / mjData (the layout of MuJoCo's structs is never
// assumed here).
//
// State convention (that of mjd_transitionFD): x = [dq (nv), qvel (nv),
// act (na)], dq = qpos (-) qpos0 by mj_differentiatePos.
#include <Eigen/Core>
#include <memory>
#include <string>
#include <vector>

#include "directable/control/lqr/tracker.hpp"
#include "directable/control/spd.hpp"
#include "directable/core/progress.hpp"
#include "directable/sim/mujoco_api.hpp"

namespace directable {

//! A MuJoCo model as the loops see it. Immutable; the arrays it points to
//! are MuJoCo's (the model must outlive the view).
struct MujocoModel {
  MujocoModel(std::shared_ptr<const MujocoApi> api, const MjModelHandle* model, Index nq, Index nv, Index na, Index nu,
              Index nbody, std::vector<int> dof_parent, std::vector<int> quat_adr, const double* qpos0, double* dof_damping);
  std::shared_ptr<const MujocoApi> api;
  const MjModelHandle* m;
  Index nq, nv, na, nu, nbody;
  CoordinateTree tree;        //!< nv: dof_parentid
  std::vector<int> quat_adr;  //!< where each ball / free joint's quaternion starts in qpos
  const double* qpos0;        //!< nq: the reference pose of the tangent states
  double* dof_damping;        //!< nv: written during a step by the "damping" SPD method, restored after
  Index nx() const { return 2 * nv + na; }
};

//! One mjData's arrays, and the per-data buffers of the SPD torque. A
//! MujocoData belongs to one thread at a time, as its mjData does.
struct MujocoData {
  //! warnings: the four counters (int) of mjWARN_BADQACC, BADQPOS, BADQVEL,
  //! BADCTRL, MuJoCo's signs of a state gone bad (it then resets the data).
  MujocoData(const MujocoModel& model, MjDataHandle* data, double* qpos, double* qvel, double* act, double* ctrl,
             double* qfrc_applied, double* xfrc_applied, const double* qfrc_bias, const double* qfrc_passive,
             std::vector<const int*> warnings);
  MjDataHandle* d;
  double *qpos, *qvel, *act, *ctrl, *qfrc_applied;  //!< nq, nv, na, nu, nv
  double* xfrc_applied;                             //!< nbody x 6: Cartesian force and torque on each body
  const double *qfrc_bias, *qfrc_passive;           //!< nv each
  std::vector<const int*> warnings;                 //!< 4 counters
  const MujocoModel* model;                         //!< the model the views belong to

  long warning_count() const;

  // buffers (sized once)
  TreeSPDWorkspace spd;
  Eigen::VectorXd qpred;  //!< nq: q (+) dt qd
  Eigen::VectorXd q_ref;  //!< nq: the reference, quaternions made unit length
  Eigen::VectorXd p;      //!< nv: position error on the manifold
  Eigen::VectorXd C;      //!< nv: bias - passive - feed-forward
  Eigen::VectorXd dx;     //!< nx: x (-) x_ref
  Eigen::VectorXd w, w_fb;  //!< nu: control, its feedback part
  Eigen::VectorXd tau;    //!< nv: servo torque
};

//! Inputs of one SPD torque (each a pointer to nv values unless said; null: zero / none).
struct MujocoSPDInputs {
  const double* q_ref_next = nullptr;   //!< nq: qbar_{n+1} (unit quaternions)
  const double* qd_ref_next = nullptr;  //!< qdbar_{n+1}, or null (zero)
  const double* kp = nullptr;
  const double* kd = nullptr;
  const double* damping = nullptr;      //!< D treated implicitly by the integrator, or null
  const double* tau_ff = nullptr;       //!< a known feed-forward torque, or null
  const bool* actuated = nullptr;       //!< mask of actuated_size (= nv) entries, or null (all)
  Index actuated_size = 0;
  double dt = 0;
};

//! Tan et al. eq. 11 at the state of `data` (M from mj_fullM, C = qfrc_bias -
//! qfrc_passive - tau_ff, error q (+) dt qd (-) qbar by mj_integratePos /
//! mj_differentiatePos): writes data.tau (servo torque, without tau_ff) and
//! data.spd.qdd. `forward`: run mj_fwdPosition + mj_fwdVelocity first.
//! Quaternions of q_ref_next are normalised (a zero or non-finite one is a
//! domain_error); returns the largest |norm - 1| found, for the caller to warn.
double mujoco_spd(const MujocoModel& model, MujocoData& data, const MujocoSPDInputs& in, bool forward);

//! A read-only row-major (rows x cols) array handed to a run, or empty.
struct RowsView {
  const double* data = nullptr;
  Index rows = 0, cols = 0;
  const double* row(Index i) const { return data + i * cols; }
};

//! A writable row-major (rows x cols) array.
struct RowsOut {
  double* data = nullptr;
  Index rows = 0, cols = 0;
};

//! Outputs of a run, written row by row (rows past the run's end untouched).
struct MujocoRunOutput {
  RowsOut x;     //!< (steps + 1) x nx tangent states
  RowsOut qpos;  //!< (steps + 1) x nq
  RowsOut u;     //!< steps x (nu for LQR, nv for servos): the applied controls / torques
};

struct MujocoRunOptions {
  Index steps = 0;
  RowsView disturbance;  //!< steps x nv generalised forces added to qfrc_applied, or empty
  RowsView body_forces;  //!< steps x (nbody * 6) written to xfrc_applied before each step, or empty
  double max_state = 1e6;  //!< |qpos| or |qvel| beyond it counts as divergence
};

//! Where a run ended: done steps; diverged_at the step whose input or result
//! was bad (-1 if none), with the reason.
struct MujocoRunStatus {
  Index done = 0;
  Index diverged_at = -1;
  std::string reason;
};

//! LQR on MuJoCo's controls: w = w_ff[i] + K[i] (x (-) x_ref[i]), the tracker
//! built on a zero reference (the difference is taken here, on the manifold).
//! qpos_ref (T+1, nq), qvel_ref (T+1, nv), act_ref (T+1, na).
MujocoRunStatus mujoco_run_lqr(const MujocoModel& model, MujocoData& data, const Tracker& tracker,
                               const RowsView& qpos_ref, const RowsView& qvel_ref, const RowsView& act_ref,
                               const MujocoRunOptions& options, const MujocoRunOutput& out,
                               const ProgressFn* progress = nullptr);

//! How an SPD servo solves eq. 11 in a loop: "solve" (mj_step1, tree_spd on
//! mj_fullM, mj_step2) or "damping" (Kd joins MuJoCo's implicit joint
//! damping for the step, -Kp p + Kd qdbar is applied: the same equation,
//! solved by MuJoCo's own factorisation).
enum class SPDMethod { solve = 0, damping = 1 };

//! PD / SPD servo schedules for a run: qpos_ref (T+1, nq), qvel_ref (T+1,
//! nv), kp and kd (T, nv), tau_ff (T, nv) or empty; damping (nv) the joint
//! damping D of the model before the run (the "damping" method writes D + Kd
//! and restores D; "solve" adds dt D to M where the integrator treats it
//! implicitly, else null).
struct MujocoServo {
  Servo kind = Servo::spd;
  SPDMethod method = SPDMethod::solve;
  RowsView qpos_ref, qvel_ref, kp, kd, tau_ff;
  const double* damping = nullptr;
  double dt = 0;  //!< the model's time step (s)
};

//! The servo on qfrc_applied; u receives the torques (without disturbance).
MujocoRunStatus mujoco_run_servo(const MujocoModel& model, MujocoData& data, const MujocoServo& servo,
                                 const MujocoRunOptions& options, const MujocoRunOutput& out,
                                 const ProgressFn* progress = nullptr);

}  // namespace directable
