#pragma once
// Exact discretization of the continuous LTV tracking problem with control
// held constant over each step (Barbic-Popovic appendix A):
//   z' = A_i z + B w  on [t_i, t_i + dt),  cost  int z'Q z + w'R w dt,
//   Phi_i = e^{A_i dt}, Gamma_i = int_0^dt e^{A_i t} dt B,
//   [[Q_i, N_i], [N_i', R_i]] = int_0^dt e^{F't} [[Q, 0], [0, R]] e^{F t} dt,
// with F = [[A_i, B], [0, 0]]. "exact" evaluates the integral with one Van
// Loan block exponential; "simpson" is the paper's quadrature over powers
// of e^{A h}, h = dt / intervals.
#include <Eigen/Core>
#include <optional>
#include <utility>

#include "directable/control/lqr/riccati.hpp"
#include "directable/core/sequence.hpp"
#include "directable/core/progress.hpp"

namespace directable {

enum class DiscretizeMethod { Exact, Simpson };

struct DiscretizeOptions {
  DiscretizeMethod method = DiscretizeMethod::Exact;
  int simpson_intervals = 10;  //!< even; the paper's "10 integration points"
  int threads = 0;             //!< 0: all cores
  //! Qc and Q_final may be indefinite (LQRProblem::Q_indefinite); else both
  //! must be positive semidefinite.
  bool Q_indefinite = false;
};

//! Reference-dependent part of the tracking problem. Phi and Gamma depend
//! only on A, B, dt; Q, N, R also on the continuous weights Qc, Rc. Because
//! the integrals are linear in the weights, scaling Qc by alpha_Q and Rc by
//! alpha_R, or replacing Rc, needs no new exponential (see make_problem).
class Discretization {
 public:
  Discretization() = default;
  //! Storage for T steps, uninitialized: the discretization writes every entry.
  Discretization(Index T, Index n, Index s, double dt);
  //! From saved arrays (copied): Phi (T x n x n), Gamma (T x n x s), Q
  //! (T x n x n), N (T x n x s), R (T x s x s), all per step, and Rc (T or 1
  //! x s x s); finite, dt > 0. Throws naming the argument.
  Discretization(const SeqView& Phi, const SeqView& Gamma, const SeqView& Q, const SeqView& N, const SeqView& R,
                 const SeqView& Rc, double dt, DiscretizeMethod method);

  Index horizon() const { return Phi.T(); }
  Index n() const { return Phi.rows(); }
  Index s() const { return Gamma.cols(); }
  double dt = 0.0;  //!< step length (s)
  DiscretizeMethod method = DiscretizeMethod::Exact;

  MatrixSeq Phi;    //!< T x (n x n)
  MatrixSeq Gamma;  //!< T x (n x s)
  MatrixSeq Q;      //!< T x (n x n)   for the weights given to discretize()
  MatrixSeq N;      //!< T x (n x s)
  MatrixSeq R;      //!< T x (s x s)   includes dt * Rc
  MatrixSeq Rc;     //!< T x (s x s)   the continuous control weight (kept for re-tuning)

  //! The discrete problem for weights (alpha_Q Qc, alpha_R Rc) and final
  //! cost Q_final, viewing this object's arrays (keep it alive). If
  //! R_new (s x s, or T x s x s) is given it replaces Rc.
  //! Q_indefinite: Q_final may be indefinite (LQRProblem::Q_indefinite).
  LQRProblem make_problem(const FinalCost& Q_final, double alpha_Q = 1.0,
                          double alpha_R = 1.0, SeqView R_new = SeqView(), bool Q_indefinite = false) const;
};

//! A: T x (n x n) or constant, B: n x s (or T x ...), Qc: n x n (or
//! T x ...), Rc: s x s (or T x ...), Qc and Rc symmetric positive
//! semidefinite (Qc only symmetric where options.Q_indefinite); shapes and
//! the horizon as for check_lqr_shapes (the horizon is required when every
//! input is constant). Parallel over steps.
Discretization discretize(SeqView A, SeqView B, double dt, SeqView Qc, SeqView Rc, std::optional<Index> horizon,
                          const DiscretizeOptions& options = {}, const ProgressFn* progress = nullptr);

//! discretize() and then the Riccati sweep for the final cost Q_final (n x n)
//! at alpha_Q = alpha_R = 1, run as a pipeline: steps are discretized from
//! the last one down and the calling thread sweeps each step as soon as it
//! is ready, discretizing further steps whenever it would wait. Same results
//! as the two calls; progress counts 2T (T steps each).
std::pair<Discretization, LQRSolution> solve_continuous(SeqView A, SeqView B, double dt, SeqView Qc, SeqView Rc,
                                                         const FinalCost& Q_final, std::optional<Index> horizon,
                                                         const DiscretizeOptions& options = {},
                                                         const ProgressFn* progress = nullptr);

}  // namespace directable
