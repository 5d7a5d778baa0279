#pragma once
// Discrete time-varying LQR (DESIGN.md conventions):
//   x_{i+1} = A_i x_i + B_i u_i,
//   J = x_T' Qf x_T + sum_i x_i' Q_i x_i + 2 x_i' N_i u_i + u_i' R_i u_i,
//   u_i = K_i x_i.
// Riccati backward sweep, with
//   H_i = R_i + B_i' P_{i+1} B_i,  G_i = N_i' + B_i' P_{i+1} A_i,
//   K_i = -H_i^{-1} G_i,           P_i = Q_i + A_i' P_{i+1} A_i + G_i' K_i,
// evaluated in square-root form (P_{i+1} = L L', only lower halves of the
// symmetric products; about 5.1 n^3 flops per step at s = n/2 instead of
// 8 n^3), see riccati.cpp.
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <functional>
#include <utility>
#include <vector>

#include "directable/core/errors.hpp"
#include "directable/core/sequence.hpp"
#include "directable/core/progress.hpp"

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
  //! The sequences are known finite (they view arrays that were checked when
  //! they were made, e.g. a Discretization's). Otherwise the sweep checks
  //! each step's matrices as it reads them (one pass over memory, not two).
  bool sequences_checked = false;
  //! The sweep also checks that each R_i (the weighted sum of R_terms) is
  //! symmetric positive definite ("R" or "R[i]" in the message).
  bool check_R_definite = false;
  //! Called (on the sweeping thread) before step i's matrices are read, so
  //! a producer can still be writing earlier steps: solve_continuous runs
  //! the discretization and the sweep as a pipeline this way.
  std::function<void(Index)> before_step;
  //! At most this many threads for the sweep (a team pays at n >= 96);
  //! <= 0: all cores.
  int threads = 0;

  Index n() const { return A.rows; }
  Index s() const { return B.cols; }
  //! Shapes, horizons, finiteness of Q_final and q_scale; throws with
  //! argument names. The sequences' values are checked by the sweep.
  void validate() const;
};

//! Result of a sweep: K (T, s, n) and P (T+1, n, n), allocated once.
class LQRSolution {
 public:
  LQRSolution() = default;
  //! Storage uninitialized: the sweep (or the caller) writes every entry.
  LQRSolution(Index T, Index n, Index s)
      : K(T, s, n, MatrixSeq::Uninitialized{}), P(T + 1, n, n, MatrixSeq::Uninitialized{}) {}
  Index horizon() const { return K.T(); }
  Index n() const { return K.cols(); }
  Index s() const { return K.rows(); }

  MatrixSeq K;  //!< T x (s x n) feedback gains, u_i = K_i x_i
  MatrixSeq P;  //!< (T+1) x (n x n) cost-to-go, J*(x_i) = x_i' P_i x_i
};

//! Reusable buffers of the sweep (no allocation inside the loop), column-major.
class RiccatiWorkspace {
 public:
  RiccatiWorkspace(Index n, Index s);
  Eigen::MatrixXd L;   //!< n x n       P_{i+1}, then its Cholesky factor in place; P_i being formed
  Eigen::MatrixXd BA;  //!< n x (s+n)   [B_i A_i], only where P_{i+1} is semidefinite
  Eigen::MatrixXd U;   //!< n x (s+n)   L' [B A] (or P [B A] when P is only semidefinite)
  Eigen::MatrixXd Z;   //!< (s+n) x (s+n), lower: [[H, .], [G' -> Y', A'PA -> A'PA - Y'Y]]
  Eigen::MatrixXd R;     //!< s x s   sym(R_i), lower
  Eigen::MatrixXd Rllt;  //!< s x s   its Cholesky factor (definiteness check)
};

//! Runs the sweep into `out` (already sized T, n, s). Throws domain_error
//! naming the step when H_i is not positive definite.
void riccati_sweep(const LQRProblem& problem, LQRSolution& out, const ProgressFn* progress = nullptr);

//! Convenience: validate, allocate, sweep.
LQRSolution solve_discrete(const LQRProblem& problem, const ProgressFn* progress = nullptr);

}  // namespace directable
