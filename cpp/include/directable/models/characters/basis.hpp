#pragma once
// Value-function bases of Treuille thesis eq. 5.11 and sec. 5.4: families
// P_N(x) (polynomials of degree <= N) and G_{a,b,N}(x) (N Gaussian bumps
// evenly spaced on [a, b], width sigma^2), outer products of families and
// unions of products. The value is tabulated along the clip: V(X) =
// Phi(X) r[C]. Polynomials are evaluated as Legendre polynomials of x /
// scale (the same span as the monomials, far better conditioned for the
// LP); `monomial` evaluates (x / scale)^k instead.
#include <string>
#include <vector>

#include "directable/core/types.hpp"

namespace directable {

struct BasisFamily {
  enum class Kind { kPolynomial, kGaussian };
  Kind kind = Kind::kPolynomial;
  Index column = 1;     //!< state column of the variable (0 is the clip)
  Index degree = 0;     //!< polynomial: N
  double scale = 1.0;   //!< polynomial: x is divided by scale
  double a = 0.0, b = 0.0;  //!< Gaussian centres span [a, b]
  Index n = 1;          //!< Gaussian: count
  double sigma2 = 2.0;  //!< Gaussian: sigma^2
  Index size() const { return kind == Kind::kPolynomial ? degree + 1 : n; }
};

class Basis {
 public:
  //! products: a union of outer products of families (an empty product is
  //! the constant 1).
  explicit Basis(std::vector<std::vector<BasisFamily>> products, bool monomial = false);
  Index size() const { return size_; }  //!< nb
  Index max_column() const { return max_column_; }
  Index scratch_size() const { return scratch_; }
  //! Phi(x) (nb,) for one state; scratch holds scratch_size() doubles.
  void evaluate(const double* state, double* phi, double* scratch) const;
  //! V = Phi(X_s) . r[C_s] at n states (rows of X, `stride` doubles apart,
  //! the clip in column 0) under r (K, nb) row-major: out (n,). The
  //! families are evaluated for all n states at once and the outer products
  //! never materialise Phi; scratch holds batch_scratch() * n doubles.
  void values(const double* X, Index n, Index stride, const double* r, double* out, double* scratch) const;
  Index batch_scratch() const { return 2 * max_product_ + max_family_ + 1; }  // + each state's row of r
  //! V_i = Phi(X_i) . coef[:, i] at n states stored by variable (column j
  //! of state i at cols[j ld + i]) with each state's coefficients stored by
  //! term (coef (nb, n): term j of state i at coef[j n + i]). The scans'
  //! layout: every loop is a contiguous pass over the states, with no
  //! gather. The same arithmetic as values(), term by term. scratch holds
  //! column_scratch() * n doubles.
  void values_columns(const double* cols, Index ld, Index n, const double* coef, double* out, double* scratch) const;
  Index column_scratch() const { return 2 * max_product_ + max_family_; }
  const std::vector<std::vector<BasisFamily>>& products() const { return products_; }

 private:
  std::vector<std::vector<BasisFamily>> products_;
  bool monomial_;
  //! g (f.size(), n): family f at n states, g[j n + s]; the variable of
  //! state i at x[i stride] (stride 1: a column of the scans' layout)
  template <bool kContiguous>
  void family_values(const BasisFamily& f, const double* x, Index n, Index stride, double* g) const;
  Index size_ = 0, scratch_ = 0, max_column_ = 0;
  Index max_product_ = 1, max_family_ = 1;  //!< largest product and family sizes
};

}  // namespace directable
