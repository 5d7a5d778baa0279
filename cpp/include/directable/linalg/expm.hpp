#pragma once
// Structured matrix exponentials for the discretization (Pade approximants
// with the scaling choice of Al-Mohy & Higham 2009: the scaling uses
// ||M^j||^(1/j), not ||M||, so stiff non-normal matrices are not
// over-squared).
//
// BorderedExpm: M = [[H, C], [0, 0]] (H m x m, C m x k). Every power keeps
// the zero block row, M^j = [[H^j, H^(j-1) C], [0, 0]], so a product costs
// 2 m^2 (m + k) flops instead of 2 (m + k)^3, and
// exp(M) = [[exp(H), phi1(H) C], [0, I]]: the zero-order-hold matrix.
//
// VanLoanExpm: the Van Loan matrix [[-F', Qbar], [0, F]] with
// F = [[A, B], [0, 0]] (A n x n, B n x s) and Qbar = blkdiag(Q, 0). Its
// top-left block is -F' = a transposed polynomial of F, so only the F part
// (bordered, n-sized) and the coupling block Z (p x p, p = n + s) are
// stored; a product costs about 4 n p^2 + 2 n^2 p flops instead of
// 2 (2p)^3, roughly 4x fewer at s = n/2.
#include <Eigen/Core>
#include <Eigen/LU>

#include "directable/core/errors.hpp"

namespace directable {

//! [[X, Y], [0, c I]], a polynomial in a bordered matrix.
struct BorderedElem {
  Eigen::MatrixXd X;  //!< m x m
  Eigen::MatrixXd Y;  //!< m x k
  double c = 0.0;
};

//! [[parity * F', Z], [0, F]] with F a BorderedElem: a polynomial in the
//! Van Loan matrix that is even (parity +1) or odd (parity -1).
struct VanLoanElem {
  BorderedElem F;
  Eigen::MatrixXd Z;  //!< p x p, p = n + s
  int parity = 1;
};

class BorderedExpm {
 public:
  BorderedExpm(Index m, Index k);

  //! exp([[H, C], [0, 0]]) -> E() = exp(H), G() = phi1(H) C. k may be 0.
  void compute(const Eigen::Ref<const Eigen::MatrixXd>& H, const Eigen::Ref<const Eigen::MatrixXd>& C);

  const Eigen::MatrixXd& E() const { return E_; }  //!< m x m
  const Eigen::MatrixXd& G() const { return G_; }  //!< m x k
  int pade_degree() const { return degree_; }
  int squarings() const { return squarings_; }

 private:
  Index m_, k_;
  int degree_ = 0, squarings_ = 0;
  BorderedElem pow_[5], U_, V_, T1_, T2_;  // pow_: M, M^2, M^4, M^6, M^8
  Eigen::MatrixXd E_, G_, tmpX_, tmpY_;
  Eigen::PartialPivLU<Eigen::MatrixXd> lu_;
};

class VanLoanExpm {
 public:
  VanLoanExpm(Index n, Index s);

  //! Exponential of [[-F', Qbar], [0, F]] with F = [[Ad, Bd], [0, 0]],
  //! Qbar = blkdiag(Qd, 0) (all already multiplied by dt). Results:
  //! Phi = e^{Ad}, Gamma = phi1(Ad) Bd and W = e^{F'} E12 =
  //! int_0^1 e^{F' t} Qbar e^{F t} dt (p x p).
  void compute(const Eigen::Ref<const Eigen::MatrixXd>& Ad, const Eigen::Ref<const Eigen::MatrixXd>& Bd,
               const Eigen::Ref<const Eigen::MatrixXd>& Qd);

  const Eigen::MatrixXd& Phi() const { return Phi_; }  //!< n x n
  const Eigen::MatrixXd& Gamma() const { return Gamma_; }  //!< n x s
  const Eigen::MatrixXd& W() const { return W_; }  //!< p x p
  int pade_degree() const { return degree_; }
  int squarings() const { return squarings_; }

 private:
  Index n_, s_, p_;
  int degree_ = 0, squarings_ = 0;
  VanLoanElem pow_[5], U_, V_, T1_, T2_;
  BorderedElem rF_, tmpB_;  // e^{F h}, scratch
  Eigen::MatrixXd Z_, tmpZ_, Phi_, Gamma_, W_;
  Eigen::PartialPivLU<Eigen::MatrixXd> luq_, lup_;
};

}  // namespace directable
