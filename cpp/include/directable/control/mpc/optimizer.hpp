#pragma once
// Receding-horizon (model predictive) control over a discrete prediction
// model x+ = step(x, u) (the MPC/SPH paper, eq. (1)):
//
//   J = ||x_H - r_H||^2_C + sum_{i=0}^{H-1} ||x_i - r_i||^2_Q + ||u_i - ur_i||^2_R,
//   x_0 given, x_{i+1} = step_i(x_i, u_i),  lower <= u_i <= upper,
//
// ur a control reference (a feed-forward the controls correct; zero by
// default). Gradient by one adjoint (backward) pass with the model's
// vector-Jacobian products:  lam_H = 2 C e_H,  g_i = 2 R (u_i - ur_i) +
// (df/du)' lam_{i+1},  lam_i = 2 Q e_i + (df/dx)' lam_{i+1}.
// Optimisers: projected L-BFGS with a fixed iteration count and an optional
// wall-clock budget; and for models with Jacobians, Gauss-Newton / iLQR
// steps that reuse the Riccati sweep (exact in one step for a linear model
// without active control limits).
//
// The optimizer is immutable (settings, weights, model); every buffer of a
// solve is in a HorizonWorkspace, so one optimizer serves several threads
// with one workspace each.
#include <Eigen/Core>
#include <functional>
#include <limits>
#include <memory>

#include "directable/control/mpc/cost.hpp"
#include "directable/control/mpc/settings.hpp"
#include "directable/control/mpc/workspace.hpp"
#include "directable/core/sequence.hpp"
#include "directable/models/prediction_model.hpp"

namespace directable {

struct MPCStats {
  double cost_initial = 0.0;  //!< J at the starting controls
  double cost = 0.0;          //!< J at the returned controls
  Index iterations = 0;       //!< iterations performed
  Index evaluations = 0;      //!< cost evaluations (forward rollouts)
  Index gradients = 0;        //!< gradient evaluations (adjoint passes)
  double seconds = 0.0;
  double curvature_scale = 0.0;  //!< L-BFGS: s'y / y'y of the first pair (see HorizonWorkspace)
  double cost_decrease() const { return cost_initial - cost; }
};

class HorizonOptimizer {
 public:
  //! Validates every argument (throws naming it).
  HorizonOptimizer(std::shared_ptr<const PredictionModel> model, MPCOptions options, CostWeight Q, CostWeight R,
                   CostWeight C, ControlLimits limits = {});

  Index n() const { return model_->n(); }
  Index s() const { return model_->s(); }
  Index horizon() const { return opt_.horizon; }
  const MPCOptions& options() const { return opt_; }
  const PredictionModel& model() const { return *model_; }

  //! Buffers for solves with this optimizer (no previous solution).
  HorizonWorkspace create_workspace() const;

  //! J and its gradient (into ws.gradient, H s, row per step) at controls
  //! u (H x s) from x0 (n), reference (H+1) x n; u_reference (H x s) or
  //! empty (zero). One forward rollout, one adjoint pass.
  double cost_and_gradient(HorizonWorkspace& ws, const CRefVec& x0, const SeqView& reference, const SeqView& u,
                           const SeqView& u_reference = SeqView()) const;

  //! Optimises the window from x0 (n) for reference ((H+1) x n). u0 (H x s):
  //! starting controls; empty: the previous solution in ws shifted by one
  //! step (warm start), zeros if there is none. u_reference (H x s) or
  //! empty (zero). The controls are left in ws.u, their rollout in ws.states.
  //! keep_going (if set) is asked before every iteration: false stops the
  //! solve early (a caller's cancellation). curvature_scale (L-BFGS): the
  //! first step's inverse-Hessian scale; < 0: the workspace's carried scale
  //! when warm-starting from it, a unit-length first step otherwise; 0: a
  //! unit-length first step. Finite; throws naming it otherwise.
  MPCStats solve(HorizonWorkspace& ws, const CRefVec& x0, const SeqView& reference, const SeqView& u0 = SeqView(),
                 const SeqView& u_reference = SeqView(), const std::function<bool()>& keep_going = {},
                 double curvature_scale = -1.0) const;

  //! x0 (n, finite) and reference ((H+1) x n, finite); throws naming the argument.
  void check_inputs(const CRefVec& x0, const SeqView& reference) const;
  //! A control sequence argument: (H x s) or empty, finite; throws naming it.
  void check_controls(const char* name, const SeqView& u) const;
  //! ws was made by an optimizer of this one's dimensions; throws otherwise.
  void check_workspace(const HorizonWorkspace& ws) const;

 private:
  //! The window's cost at ws.u_try, rolled out into ws.states (the terms
  //! taken as each state is produced, while it is in cache). With
  //! diagonal weights every term is >= 0: the rollout stops as soon as the
  //! partial sum exceeds `bound` and returns it (> bound; ws.states then
  //! holds only the steps taken).
  double rollout_cost(HorizonWorkspace& ws, const CRefVec& x0, const SeqView& ref,
                      double bound = std::numeric_limits<double>::infinity()) const;
  double cost_of(HorizonWorkspace& ws, const VectorSeq& xs, const Eigen::VectorXd& u, const SeqView& ref) const;
  void rollout(HorizonWorkspace& ws, const CRefVec& x0, const Eigen::VectorXd& u, VectorSeq& xs) const;
  //! Gradient (H s) at ws.u_try from the rollout in ws.states (the adjoint pass).
  void adjoint(HorizonWorkspace& ws, const SeqView& ref, Eigen::VectorXd& grad) const;
  MPCStats solve_lbfgs(HorizonWorkspace& ws, const CRefVec& x0, const SeqView& reference,
                       const std::function<bool()>& keep_going, double initial_scale) const;
  MPCStats solve_gauss_newton(HorizonWorkspace& ws, const CRefVec& x0, const SeqView& reference,
                              const std::function<bool()>& keep_going) const;
  //! The LQ problem of one Gauss-Newton step about (ws.states, ws.u).
  void linearize_window(HorizonWorkspace& ws, const SeqView& ref, LQRProblem& problem) const;
  //! The forward pass of a Gauss-Newton step with step length a: trial
  //! controls into ws.u_try, their rollout into ws.states_try.
  void gauss_newton_trial(HorizonWorkspace& ws, const CRefVec& x0, double a) const;
  void project(Eigen::VectorXd& u) const;
  void set_control_reference(HorizonWorkspace& ws, const SeqView& u_reference) const;

  std::shared_ptr<const PredictionModel> model_;
  MPCOptions opt_;
  CostWeight Q_, R_, C_;
  ControlLimits limits_;
  Eigen::VectorXd lower_, upper_;  //!< H s: the limits tiled over the window, or empty
  Eigen::MatrixXd Qd_, Rd_, Cd_;   //!< dense Q, R, C (Gauss-Newton only)
};

}  // namespace directable
