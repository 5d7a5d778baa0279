#pragma once
// Discrete time-varying LQR (time first, K carries the minus sign):
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
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "directable/core/errors.hpp"
#include "directable/core/weights.hpp"
#include "directable/core/sequence.hpp"
#include "directable/core/progress.hpp"

namespace directable {

// The weights are checked by core/errors.hpp's check_weight (tolerances
// kSymmetryTolerance, kSemidefiniteTolerance there; the Python docstrings
// state them): Q and Q_final symmetric positive semidefinite unless a problem
// allows an indefinite Q, each R_i symmetric positive semidefinite.
//! H_i = R_i + B_i' P_{i+1} B_i is positive definite when every pivot d_j of
//! its Cholesky factorization exceeds kPivotTolerance H_jj (a smaller pivot
//! means H_i is singular to within rounding and K_i would be noise).
inline constexpr double kPivotTolerance = 1e-13;

//! Checks the state weight Q or Q_final (n x n at M): symmetric positive
//! semidefinite, or only symmetric where `indefinite_allowed`.
void check_state_weight(const std::string& label, const double* M, Index n, bool indefinite_allowed);
//! min_j d_j / H_jj of H = F F' from its lower Cholesky factor F (s x s,
//! column-major at F with leading dimension ld, or F' row-major): d_j =
//! F_jj^2, H_jj = sum_k F_jk^2. 1 for a diagonal H, -> 0 as H turns singular.
double pivot_ratio(const double* F, Index s, Index ld);

//! Dimensions of an LQR problem: T steps, n states, s controls.
struct LQRDimensions {
  Index T, n, s;
};

//! The one shape check of the LQR family (the sweep's LQRProblem::validate,
//! discretize and solve_continuous use it): A (n x n), B (n x s), Q (n x n),
//! R (s x s) and, unless empty, N (n x s), each per step (T x ...) or one
//! matrix constant in time. `horizon`: T (> 0) when given, else the step
//! count of the first time-varying sequence (A, B, Q, N, R in that order).
//! Throws invalid_argument naming the argument, the expected and the
//! received shape. Values are not read.
LQRDimensions check_lqr_shapes(const SeqView& A, const SeqView& B, const SeqView& Q, const SeqView& N,
                               const SeqView& R, std::optional<Index> horizon);

//! The terminal weight of a sweep: the matrix Q_final (n x n), or the
//! stationary P of step T-1's problem (solve_stationary on its A, B,
//! q_scale Q, R, q_scale N): the natural terminal cost of a problem that
//! goes on like its last step ("dare" in Python).
struct FinalCost {
  template <class M>
  FinalCost(const Eigen::MatrixBase<M>& Q_final) : matrix(Q_final) {}  // NOLINT: a matrix is a final cost
  static FinalCost stationary_solution() {
    FinalCost f(Eigen::MatrixXd(0, 0));
    f.stationary = true;
    return f;
  }
  Eigen::MatrixXd matrix;  //!< n x n (empty where stationary)
  bool stationary = false;
};

//! The cost of one sweep. Q and N are multiplied by q_scale; R_i is the
//! weighted sum of R_terms (so re-tuning alpha_Q, alpha_R or swapping the
//! continuous R reuses the discretization without copying it).
struct LQRProblem {
  SeqView A;  //!< T x (n x n), or constant
  SeqView B;  //!< T x (n x s), or constant
  SeqView Q;  //!< T x (n x n), or constant
  SeqView N;  //!< T x (n x s), constant, or empty (no cross term)
  std::vector<std::pair<SeqView, double>> R_terms;  //!< sum_k scale_k R_k[i], each s x s
  Eigen::MatrixXd Q_final;                         //!< n x n, unless Q_final_stationary
  //! P_T is the stationary P of step T-1's problem instead of Q_final
  //! (computed by the sweep, after before_step(T - 1)).
  bool Q_final_stationary = false;
  double q_scale = 1.0;
  Index horizon = 0;  //!< T
  //! The sequences are known finite (they view arrays that were checked when
  //! they were made, e.g. a Discretization's). Otherwise the sweep checks
  //! each step's matrices as it reads them (one pass over memory, not two).
  bool sequences_checked = false;
  //! The sweep also checks that each R_i (the weighted sum of R_terms) is
  //! symmetric positive semidefinite ("R" or "R[i]" in the message).
  //! Whatever this says, each H_i = R_i + B_i' P_{i+1} B_i must be positive
  //! definite (kPivotTolerance), or the sweep throws naming the step, the
  //! smallest pivot and the weight to blame.
  bool check_R_semidefinite = false;
  //! How the R_i were made, added to a message that blames a singular R_i
  //! (a discretization names the weights its R_i mixes); null: given.
  const char* R_origin = nullptr;
  //! Q and Q_final may be indefinite (checked symmetric only): the DARE
  //! literature's problems (DAREX #4) are well posed while every H_i > 0.
  //! Otherwise (the default) both must be positive semidefinite: a negative
  //! weight is far more often a sign error than an intent.
  bool Q_indefinite = false;
  //! Called (on the sweeping thread) before step i's matrices are read, so
  //! a producer can still be writing earlier steps: solve_continuous runs
  //! the discretization and the sweep as a pipeline this way.
  std::function<void(Index)> before_step;
  //! At most this many threads for the sweep (a team pays at n >= 96);
  //! <= 0: all cores.
  int threads = 0;

  Index n() const { return A.rows; }
  Index s() const { return B.cols; }
  //! Shapes (check_lqr_shapes at `horizon`), finiteness of Q_final and
  //! q_scale; throws with argument names. The sequences' values are checked
  //! by the sweep.
  void validate() const;
};

//! The problem of solve_discrete with its arguments: A, B, Q, R, N (may be
//! empty) per step or constant, Q_final (n x n); the horizon as for
//! check_lqr_shapes. Validated; the sweep checks the values, that each R_i is
//! symmetric positive semidefinite, each Q_i and Q_final too (symmetric
//! only where Q_indefinite), and that every H_i > 0. Views the arguments
//! (keep them alive).
LQRProblem discrete_problem(SeqView A, SeqView B, SeqView Q, SeqView R, const FinalCost& Q_final,
                            SeqView N = SeqView(), std::optional<Index> horizon = std::nullopt,
                            bool Q_indefinite = false);

//! Result of a sweep: K (T, s, n) and P (T+1, n, n), allocated once.
class LQRSolution {
 public:
  LQRSolution() = default;
  //! From saved arrays K (T x s x n) and P ((T+1) x n x n), both per step
  //! (not constant) and finite; copied. Throws naming K or P.
  LQRSolution(const SeqView& K, const SeqView& P);
  //! Storage uninitialized: the sweep (or the caller) writes every entry.
  LQRSolution(Index T, Index n, Index s)
      : K(T, s, n, MatrixSeq::Uninitialized{}), P(T + 1, n, n, MatrixSeq::Uninitialized{}) {}
  Index horizon() const { return K.T(); }
  Index n() const { return K.cols(); }
  Index s() const { return K.rows(); }

  //! Optimal cost x' P_step x from state x (n) at step (in [0, T]).
  double cost_to_go(const Eigen::Ref<const Eigen::VectorXd>& x, Index step = 0) const;

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
//! naming the step, the smallest pivot of H_i and the weight to blame
//! (R_i, Q_final or the P_{i+1} that Q made) when H_i is not positive
//! definite within kPivotTolerance.
void riccati_sweep(const LQRProblem& problem, LQRSolution& out, const ProgressFn* progress = nullptr);

//! Convenience: validate, allocate, sweep.
LQRSolution solve_discrete(const LQRProblem& problem, const ProgressFn* progress = nullptr);

}  // namespace directable
