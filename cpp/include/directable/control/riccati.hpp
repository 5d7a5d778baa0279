#pragma once
// Discrete time-varying LQR (DESIGN.md conventions):
//   x_{i+1} = A_i x_i + B_i u_i,
//   J = x_T' Qf x_T + sum_i x_i' Q_i x_i + 2 x_i' N_i u_i + u_i' R_i u_i,
//   u_i = K_i x_i.
// Riccati backward sweep, with
//   H_i = R_i + B_i' P_{i+1} B_i,  G_i = N_i' + B_i' P_{i+1} A_i,
//   K_i = -H_i^{-1} G_i,           P_i = Q_i + A_i' P_{i+1} A_i + G_i' K_i.
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <utility>
#include <vector>

#include "directable/core/errors.hpp"
#include "directable/core/sequence.hpp"

namespace directable {

//! The cost of one sweep. Q and N are multiplied by q_scale; R_i is the
//! weighted sum of R_terms (so re-tuning alpha_Q, alpha_R or swapping the
//! continuous R reuses the discretization without copying it).
struct LQRProblem {
  SeqView A;  //!< T x (n x n), or constant
  SeqView B;  //!< T x (n x s), or constant
  SeqView Q;  //!< T x (n x n), or constant
  SeqView N;  //!< T x (n x s), constant, or empty (no cross term)
  std::vector<std::pair<SeqView, double>> R_terms;  //!< sum_k scale_k R_k[i], each s x s
  Eigen::MatrixXd Q_final;                         //!< n x n
  double q_scale = 1.0;
  Index horizon = 0;  //!< T

  Index n() const { return A.rows; }
  Index s() const { return B.cols; }
  //! Shapes, horizons and finiteness; throws with argument names.
  void validate() const;
};

//! Result of a sweep: K (T, s, n) and P (T+1, n, n), allocated once.
class LQRSolution {
 public:
  LQRSolution() = default;
  LQRSolution(Index T, Index n, Index s) : K(T, s, n), P(T + 1, n, n) {}
  Index horizon() const { return K.T(); }
  Index n() const { return K.cols(); }
  Index s() const { return K.rows(); }

  MatrixSeq K;  //!< T x (s x n) feedback gains, u_i = K_i x_i
  MatrixSeq P;  //!< (T+1) x (n x n) cost-to-go, J*(x_i) = x_i' P_i x_i
};

//! Reusable buffers of the sweep (no allocation inside the loop).
class RiccatiWorkspace {
 public:
  RiccatiWorkspace(Index n, Index s);
  Eigen::MatrixXd PA;   //!< n x n   P_{i+1} A_i
  Eigen::MatrixXd PB;   //!< n x s   P_{i+1} B_i
  Eigen::MatrixXd H;    //!< s x s
  Eigen::MatrixXd G;    //!< s x n
  Eigen::MatrixXd Kc;   //!< s x n   K_i, column-major for the in-place solve
  Eigen::MatrixXd Pn;   //!< n x n   P_i being formed
  Eigen::LLT<Eigen::MatrixXd> llt;
};

//! Runs the sweep into `out` (already sized T, n, s). Throws domain_error
//! naming the step when H_i is not positive definite.
void riccati_sweep(const LQRProblem& problem, LQRSolution& out, const ProgressFn* progress = nullptr);

//! Convenience: validate, allocate, sweep.
LQRSolution solve_discrete(const LQRProblem& problem, const ProgressFn* progress = nullptr);

}  // namespace directable
