#pragma once
// Every buffer of the horizon optimizer's solves (the Data of the
// Model/Data split): made by HorizonOptimizer::create_workspace(), sized
// once, owned by one thread at a time. It also carries the previous
// solution, the warm start of the next window.
#include <Eigen/Core>
#include <memory>

#include "directable/control/lqr/riccati.hpp"
#include "directable/core/sequence.hpp"
#include "directable/linalg/lbfgs.hpp"
#include "directable/models/prediction_model.hpp"

namespace directable {

struct HorizonWorkspace {
  Index n = 0, s = 0, horizon = 0;  //!< the dimensions it was made for
  std::unique_ptr<PredictionData> model_data;  //!< the prediction model's buffers

  Eigen::VectorXd u;            //!< H s: the controls of the last solve (row per step)
  Eigen::VectorXd u_try;        //!< H s: the controls of the last rollout
  Eigen::VectorXd u_opt;        //!< H s: the L-BFGS iterate
  Eigen::VectorXd u_reference;  //!< H s, or empty (zero): the control reference of the current solve
  Eigen::VectorXd gradient;     //!< H s: dJ/du of cost_and_gradient
  Eigen::VectorXd e, we, lam, gx;  //!< n each: state error, W e, adjoint, (df/dx)' lam
  Eigen::VectorXd gu, du;          //!< s each: (df/du)' lam, u - u_reference
  VectorSeq states;      //!< (H+1) x n: the rollout of u_try (after a solve: of u)
  VectorSeq states_try;  //!< (H+1) x n: Gauss-Newton's trial rollout
  LBFGSWorkspace lbfgs;
  bool has_solution = false;  //!< u holds a solution (the next solve warm-starts from it)
  //! s'y / y'y of the last L-BFGS solve's first pair (0: none): the first
  //! step's scale of the next warm-started window, whose problem differs
  //! from this one by a shift of one step.
  double curvature_scale = 0.0;

  //! The next solve starts from u = 0 with a unit-length first step.
  void forget_solution() {
    has_solution = false;
    curvature_scale = 0.0;
  }

  // Gauss-Newton only: the LQ problem in z = [dx; 1] (see optimizer.cpp)
  MatrixSeq A_aug, Q_aug;  //!< H x (n+1) x (n+1)
  MatrixSeq B_aug, N_aug;  //!< H x (n+1) x s
  RowMatrix A_step;        //!< n x n: df_i/dx
  RowMatrix B_step;        //!< n x s: df_i/du
  Eigen::VectorXd z;       //!< n + 1
  LQRSolution sweep;       //!< gains of the LQ problem
};

}  // namespace directable
