#pragma once
// Matrix exponential of bordered matrices M = [[H, C], [0, 0]] (H m x m,
// C m x k). Every power keeps the zero block row, M^j = [[H^j, H^(j-1) C],
// [0, 0]], so a product costs 2 m^2 (m + k) flops instead of 2 (m + k)^3,
// and exp(M) = [[exp(H), phi1(H) C], [0, I]]. This is the shape of both the
// zero-order-hold discretization [[A, B], [0, 0]] dt and the Van Loan cost
// matrix. Pade approximants and the scaling choice of Al-Mohy & Higham
// (2009): the scaling uses ||M^j||^(1/j), not ||M||, so stiff non-normal
// matrices are not over-squared.
#include <Eigen/Core>
#include <Eigen/LU>

#include "directable/core/errors.hpp"

namespace directable {

class BorderedExpm {
 public:
  BorderedExpm(Index m, Index k);

  //! exp([[H, C], [0, 0]]) -> E() = exp(H), G() = phi1(H) C. k may be 0.
  void compute(const Eigen::Ref<const Eigen::MatrixXd>& H, const Eigen::Ref<const Eigen::MatrixXd>& C);

  const Eigen::MatrixXd& E() const { return E_; }  //!< m x m
  const Eigen::MatrixXd& G() const { return G_; }  //!< m x k
  int pade_degree() const { return degree_; }
  int squarings() const { return squarings_; }
  Index m() const { return m_; }
  Index k() const { return k_; }

 private:
  // A bordered element [[X, Y], [0, c I]].
  struct Elem {
    Eigen::MatrixXd X, Y;
    double c = 0.0;
  };
  void mul_M(const Elem& a, Elem& out);  // out = M * a
  double norm1(const Elem& a) const;     // 1-norm of [[X, Y], [0, c I]]
  double power_norm_estimate(const Elem& P, const Elem& Q) const;  // ~||P Q||_1

  Index m_, k_;
  int degree_ = 0, squarings_ = 0;
  Elem M_, M2_, M4_, M6_, M8_, U_, V_, T1_, T2_;
  Eigen::MatrixXd E_, G_, tmpX_, tmpY_;
  Eigen::PartialPivLU<Eigen::MatrixXd> lu_;
};

}  // namespace directable
