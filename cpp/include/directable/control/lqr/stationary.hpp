#pragma once
// Stationary (infinite-horizon) discrete LQR, the discrete algebraic Riccati
// equation (DARE)
//   P = Q + A'PA - G' H^{-1} G,   H = R + B'PB,  G = B'PA + N',
//   K = -H^{-1} G                 (u = K x, K carries the minus sign),
// for its stabilizing solution (spectral radius of A + BK below 1).
//
// Solved by the structure-preserving doubling algorithm (SDA; Chu, Fan &
// Lin 2005): on A_0 = A - B R^{-1} N', G_0 = B R^{-1} B', H_0 = Q - N R^{-1} N',
//   W_k = I + G_k H_k,
//   A_{k+1} = A_k W_k^{-1} A_k,
//   G_{k+1} = G_k + A_k W_k^{-1} G_k A_k',
//   H_{k+1} = H_k + A_k' H_k W_k^{-1} A_k  -> P,
// which converges quadratically (the error falls like rho(A + BK)^{2^k}), so
// closed-loop eigenvalues near the unit circle cost a few more doublings
// where iterating the sweep would need ~1 / (1 - rho) steps. Then Newton
// steps on the residual (the Stein equation solved by Smith doubling) bring
// the residual to rounding level.
//
// Singular (semidefinite) R: the equation is rewritten for Y = P - c I,
// whose R + c B'B is positive definite (same solution, same closed loop),
// and solved as above.
#include <Eigen/Core>

#include "directable/core/progress.hpp"
#include "directable/core/types.hpp"

namespace directable {

struct StationaryOptions {
  int max_iterations = 80;   //!< doubling steps (each squares the contraction)
  int max_refinements = 4;   //!< Newton steps after the doubling
  double tolerance = 1e-14;  //!< doubling stops when |H_{k+1} - H_k|_F <= tolerance |H_{k+1}|_F
  //! Q may be indefinite (symmetric only, as in DAREX #4); else it must be
  //! positive semidefinite (LQRProblem::Q_indefinite).
  bool Q_indefinite = false;
};

//! The stabilizing solution and what it took.
struct StationaryLQR {
  RowMatrix P;                 //!< n x n  stationary cost-to-go, J*(x) = x' P x
  RowMatrix K;                 //!< s x n  stationary gain, u = K x
  double spectral_radius = 0;  //!< rho(A + B K) < 1
  int iterations = 0;          //!< doubling steps
  int refinements = 0;         //!< Newton steps that lowered the residual
  double residual = 0;         //!< |Res(P)|_F / |P|_F (|Res(P)|_F where P = 0)
};

//! The stabilizing solution of the DARE for A (n x n), B (n x s), Q (n x n,
//! symmetric positive semidefinite, or indefinite where options.Q_indefinite),
//! R (s x s, symmetric positive semidefinite), N (n x s, or empty: no cross
//! term). Validated here: shapes (invalid_argument), finiteness, symmetry and
//! definiteness (domain_error, check_weight's tolerances). Throws domain_error naming the
//! cause where no stabilizing solution exists: "(A, B) is not stabilizable"
//! or "(A, Q) is not detectable" with the offending eigenvalue of A, or R
//! singular where B cannot make R + B'PB definite. progress(done, total)
//! is called (throttled) after each doubling and Newton step, total being
//! the most steps there can be; false cancels (throws Cancelled).
StationaryLQR solve_stationary(const Eigen::Ref<const Eigen::MatrixXd>& A, const Eigen::Ref<const Eigen::MatrixXd>& B,
                               const Eigen::Ref<const Eigen::MatrixXd>& Q, const Eigen::Ref<const Eigen::MatrixXd>& R,
                               const Eigen::Ref<const Eigen::MatrixXd>& N, const StationaryOptions& options = {},
                               const ProgressFn* progress = nullptr);

}  // namespace directable
