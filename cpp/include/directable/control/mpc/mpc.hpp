#pragma once
// Receding-horizon (model predictive) control over a discrete prediction
// model x+ = step(x, u) (the MPC/SPH paper, eq. (1)):
//
//   J = ||x_H - r_H||^2_C + sum_{i=0}^{H-1} ||x_i - r_i||^2_Q + ||u_i||^2_R,
//   x_0 given, x_{i+1} = step_i(x_i, u_i),  lower <= u_i <= upper.
//
// Gradient by one adjoint (backward) pass with the model's vector-Jacobian
// products:  lam_H = 2 C e_H,  g_i = 2 R u_i + (df/du)' lam_{i+1},
//            lam_i = 2 Q e_i + (df/dx)' lam_{i+1}.
// Optimisers: projected L-BFGS with a fixed iteration count and an optional
// wall-clock budget; and for models with Jacobians, Gauss-Newton / iLQR
// steps that reuse the Riccati sweep (exact in one step for a linear model
// without active control limits).
#include <Eigen/Core>
#include <functional>
#include <limits>
#include <memory>
#include <string>

#include "directable/control/lqr/riccati.hpp"
#include "directable/core/errors.hpp"
#include "directable/core/sequence.hpp"
#include "directable/models/model.hpp"
#include "directable/core/progress.hpp"

namespace directable {

using CRefVec = Eigen::Ref<const Eigen::VectorXd>;
using RefVec = Eigen::Ref<Eigen::VectorXd>;

//! Discrete prediction model. `i` is the step inside the window (models may
//! be time-varying). Implementations must be callable concurrently.
class PredictionModel {
 public:
  virtual ~PredictionModel() = default;
  virtual Index n() const = 0;  //!< state dimension
  virtual Index s() const = 0;  //!< control dimension
  //! x_next = f_i(x, u).
  virtual void step(const CRefVec& x, const CRefVec& u, RefVec x_next, Index i) const = 0;
  //! gx = (df_i/dx)' lam, gu = (df_i/du)' lam, evaluated at (x, u).
  virtual void vjp(const CRefVec& x, const CRefVec& u, const CRefVec& lam, RefVec gx, RefVec gu, Index i) const = 0;
  //! gu alone, for callers that need no gx (the adjoint pass at the window's
  //! first step, whose state is given): gx is scratch, left unspecified.
  //! Models override it where gu costs less than the whole VJP.
  virtual void vjp_controls(const CRefVec& x, const CRefVec& u, const CRefVec& lam, RefVec gx, RefVec gu,
                            Index i) const {
    vjp(x, u, lam, gx, gu, i);
  }
  //! Whether jacobians() is available (needed by the Gauss-Newton method).
  virtual bool has_jacobians() const { return false; }
  //! A = df_i/dx (n x n), B = df_i/du (n x s) at (x, u).
  virtual void jacobians(const CRefVec& x, const CRefVec& u, Eigen::Ref<RowMatrix> A, Eigen::Ref<RowMatrix> B,
                         Index i) const;
};

//! x+ = A x + B u (constant A, B).
class LinearPredictionModel : public PredictionModel {
 public:
  LinearPredictionModel(RowMatrix A, RowMatrix B);
  Index n() const override { return A_.rows(); }
  Index s() const override { return B_.cols(); }
  void step(const CRefVec& x, const CRefVec& u, RefVec x_next, Index i) const override;
  void vjp(const CRefVec& x, const CRefVec& u, const CRefVec& lam, RefVec gx, RefVec gu, Index i) const override;
  bool has_jacobians() const override { return true; }
  void jacobians(const CRefVec& x, const CRefVec& u, Eigen::Ref<RowMatrix> A, Eigen::Ref<RowMatrix> B,
                 Index i) const override;
  const RowMatrix& A() const { return A_; }
  const RowMatrix& B() const { return B_; }

 private:
  RowMatrix A_, B_;
};

//! Prediction with a foundation Model (z' = F(z, t) + B w): one explicit
//! Euler step x+ = x + dt (F(x, t0 + i dt) + B u), a cheap simplified
//! predictor; its VJP and Jacobians are those of this step, exactly.
class ModelEulerPrediction : public PredictionModel {
 public:
  ModelEulerPrediction(std::shared_ptr<const Model> model, double dt, double t0 = 0.0);
  Index n() const override { return model_->state_dim(); }
  Index s() const override { return model_->control_dim(); }
  void step(const CRefVec& x, const CRefVec& u, RefVec x_next, Index i) const override;
  void vjp(const CRefVec& x, const CRefVec& u, const CRefVec& lam, RefVec gx, RefVec gu, Index i) const override;
  bool has_jacobians() const override { return true; }
  void jacobians(const CRefVec& x, const CRefVec& u, Eigen::Ref<RowMatrix> A, Eigen::Ref<RowMatrix> B,
                 Index i) const override;
  double dt() const { return dt_; }

 private:
  std::shared_ptr<const Model> model_;
  double dt_, t0_;
};

//! Several steps of another prediction model per window step, the control
//! held: x+ = f_{ik+k-1}(... f_{ik}(x, u) ..., u), k = `count` (e.g. a frame
//! of simulation steps: an explicit model that is unstable at the frame
//! step stays stable at its own step). VJP by recomputing the inner states
//! and chaining the inner VJPs; Jacobians (if the inner model has them) by
//! chaining: A = A_{k-1} ... A_0, B = sum_j A_{k-1} ... A_{j+1} B_j.
class SubstepPrediction : public PredictionModel {
 public:
  SubstepPrediction(std::shared_ptr<const PredictionModel> inner, Index count);
  Index n() const override { return inner_->n(); }
  Index s() const override { return inner_->s(); }
  void step(const CRefVec& x, const CRefVec& u, RefVec x_next, Index i) const override;
  void vjp(const CRefVec& x, const CRefVec& u, const CRefVec& lam, RefVec gx, RefVec gu, Index i) const override;
  bool has_jacobians() const override { return inner_->has_jacobians(); }
  void jacobians(const CRefVec& x, const CRefVec& u, Eigen::Ref<RowMatrix> A, Eigen::Ref<RowMatrix> B,
                 Index i) const override;
  Index count() const { return count_; }
  const std::shared_ptr<const PredictionModel>& inner() const { return inner_; }

 private:
  std::shared_ptr<const PredictionModel> inner_;
  Index count_;
};

//! A quadratic weight ||e||^2_W = e' W e: diagonal (a vector) or dense.
struct CostWeight {
  Eigen::VectorXd diag;  //!< used when dense is empty
  RowMatrix dense;       //!< symmetric part is used
  bool is_dense() const { return dense.size() > 0; }
  Index dim() const { return is_dense() ? dense.rows() : diag.size(); }
  //! out = W e (symmetric part).
  void apply(const CRefVec& e, RefVec out) const;
  double quad(const CRefVec& e) const;
  Eigen::MatrixXd matrix() const;  //!< dense symmetric W
  //! Shape dim, finite, and W >= 0 (positive = true: W > 0); throws naming `name`.
  void validate(const std::string& name, Index dim, bool positive) const;
};

enum class MPCMethod { LBFGS, GaussNewton };

struct MPCOptions {
  Index horizon = 1;
  Index iterations = 50;     //!< fixed iteration count (an upper bound)
  double time_budget = 0.0;  //!< seconds per solve; <= 0: none
  Index memory = 10;         //!< L-BFGS pairs
  MPCMethod method = MPCMethod::LBFGS;
  void validate() const;
};

//! Box limits; empty vectors mean unbounded.
struct ControlLimits {
  Eigen::VectorXd lower, upper;
  bool empty() const { return lower.size() == 0 && upper.size() == 0; }
};

struct MPCStats {
  double cost_initial = 0.0;  //!< J at the starting controls
  double cost = 0.0;          //!< J at the returned controls
  Index iterations = 0;       //!< iterations performed
  Index evaluations = 0;      //!< cost evaluations (for the MPC: forward rollouts)
  Index gradients = 0;        //!< gradient evaluations (for the MPC: adjoint passes)
  double seconds = 0.0;
  double cost_decrease() const { return cost_initial - cost; }
};

//! Projected L-BFGS on a box. fg(x, g) returns f(x) and writes the gradient.
struct LBFGSOptions {
  Index iterations = 100;
  Index memory = 10;
  double time_budget = 0.0;  //!< seconds; <= 0: none
  double gtol = 0.0;         //!< stop when the projected gradient's max-norm <= gtol
};
using ObjectiveFn = std::function<double(const Eigen::VectorXd&, Eigen::VectorXd&)>;
//! f(x) alone.
using ValueFn = std::function<double(const Eigen::VectorXd&)>;
//! Buffers of minimize_lbfgs (the N x memory pairs and N-vectors); pass one
//! to reuse them across calls (no allocation once sized).
struct LBFGSWorkspace {
  Eigen::MatrixXd S, Y;
  Eigen::VectorXd rho, alpha, sy, yy, g, gn, d, xn, q, free;
};
//! Minimises from x (projected first) in place; lower/upper empty = unbounded.
//! value (optional): f alone, for the line search's shortened trials (a unit
//! step's trial always calls fg); after such a trial is accepted, fg is
//! called at the same point for the gradient (it may reuse its work).
MPCStats minimize_lbfgs(const ObjectiveFn& fg, Eigen::VectorXd& x, const Eigen::VectorXd& lower,
                        const Eigen::VectorXd& upper, const LBFGSOptions& opt, LBFGSWorkspace* workspace = nullptr,
                        const ValueFn& value = {});

//! The horizon optimizer (Model); its buffers (Data) are allocated once.
class HorizonOptimizer {
 public:
  HorizonOptimizer(std::shared_ptr<const PredictionModel> model, MPCOptions options, CostWeight Q, CostWeight R,
                   CostWeight C, ControlLimits limits = {});

  Index n() const { return model_->n(); }
  Index s() const { return model_->s(); }
  Index horizon() const { return opt_.horizon; }
  const MPCOptions& options() const { return opt_; }
  const PredictionModel& model() const { return *model_; }

  //! Control reference ur (H*s, row per step): the cost weighs ||u_i - ur_i||^2_R
  //! (e.g. a feed-forward the controls correct). Empty: zero (the default).
  void set_control_reference(const Eigen::VectorXd& ur);
  const Eigen::VectorXd& control_reference() const { return ur_; }

  //! J and its gradient (H*s, row per step) at controls u (H x s) from x0,
  //! reference (H+1) x n: one forward rollout, one adjoint pass.
  double cost_and_gradient(const CRefVec& x0, const SeqView& reference, const CRefVec& u, Eigen::VectorXd* grad);

  //! Optimises the window. u0: starting controls ((H*s), row per step); if
  //! empty, the previous solution shifted by one step (warm start), else 0.
  MPCStats solve(const CRefVec& x0, const SeqView& reference, const Eigen::VectorXd* u0 = nullptr);

  //! Controls of the last solve, H x s (row per step) flattened.
  const Eigen::VectorXd& controls() const { return u_; }
  //! Predicted states of the last evaluated controls, (H+1) x n.
  const VectorSeq& states() const { return x_; }
  bool has_solution() const { return has_solution_; }
  void reset() { has_solution_ = false; }
  //! x0 (n, finite) and reference ((H+1) x n, finite); throws naming the argument.
  void check_inputs(const CRefVec& x0, const SeqView& reference) const;

 private:
  void rollout(const CRefVec& x0, const Eigen::VectorXd& u, VectorSeq& xs) const;
  double cost_of(const VectorSeq& xs, const Eigen::VectorXd& u, const SeqView& ref);
  //! Gradient (H*s) at u_try_ from the rollout in x_ (the adjoint pass).
  void adjoint(const SeqView& ref, Eigen::VectorXd& grad);
  MPCStats solve_gauss_newton(const CRefVec& x0, const SeqView& reference);
  void project(Eigen::VectorXd& u) const;

  std::shared_ptr<const PredictionModel> model_;
  MPCOptions opt_;
  CostWeight Q_, R_, C_;
  ControlLimits limits_;
  Eigen::VectorXd lower_, upper_;  //!< tiled over the window (H*s), or empty
  // workspace
  Eigen::VectorXd u_, u_try_, u_opt_, e_, we_, lam_, lam_next_, gx_, gu_, ur_, du_;
  LBFGSWorkspace lbfgs_;
  VectorSeq x_, x_try_;
  MatrixSeq A_aug_, B_aug_, Q_aug_, N_aug_;
  Eigen::MatrixXd Qd_, Rd_, Cd_;
  RowMatrix Ja_, Jb_;
  bool has_solution_ = false;
};

//! Result of a receding-horizon run.
struct RecedingResult {
  VectorSeq states;    //!< (steps+1) x n, the plant's states
  VectorSeq controls;  //!< steps x s, the applied first controls
  Eigen::VectorXd cost_initial, cost, seconds;  //!< per step
  Eigen::VectorXi iterations;
};

//! Closed loop: at step t optimise the window reference[t .. t+H] from the
//! plant's actual state (warm start from the shifted previous solution),
//! apply the first control to `plant`, shift. reference: (steps+H+1) x n.
RecedingResult run_receding(HorizonOptimizer& optimizer, const PredictionModel& plant, const CRefVec& x0,
                            const SeqView& reference, Index steps, const ProgressFn* progress = nullptr);

}  // namespace directable
