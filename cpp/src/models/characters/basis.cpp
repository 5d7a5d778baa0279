#include "directable/models/characters/basis.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>

namespace directable {

Basis::Basis(std::vector<std::vector<BasisFamily>> products, bool monomial)
    : products_(std::move(products)), monomial_(monomial) {
  if (products_.empty()) throw std::invalid_argument("basis must hold at least one term, got none");
  for (const auto& prod : products_) {
    Index size = 1, scratch = 0;
    for (const auto& f : prod) {
      if (f.column < 1) throw std::invalid_argument("basis variables are state columns >= 1 (0 is the clip)");
      if (f.kind == BasisFamily::Kind::kPolynomial) {
        if (f.degree < 0) throw std::invalid_argument("degree must be >= 0, got " + std::to_string(f.degree));
        if (!(f.scale > 0.0) || !std::isfinite(f.scale))
          throw std::domain_error("scale must be a finite value > 0, got " + std::to_string(f.scale));
      } else {
        if (f.n < 1) throw std::invalid_argument("n (the number of Gaussians) must be >= 1, got " + std::to_string(f.n));
        if (!(f.sigma2 > 0.0) || !std::isfinite(f.sigma2))
          throw std::domain_error("sigma2 must be a finite value > 0, got " + std::to_string(f.sigma2));
        if (!std::isfinite(f.a) || !std::isfinite(f.b)) throw std::domain_error("Gaussian centres a, b must be finite");
      }
      size *= f.size();
      scratch += f.size();
      if (f.size() > max_family_) max_family_ = f.size();
      if (f.column > max_column_) max_column_ = f.column;
    }
    size_ += size;
    if (size > max_product_) max_product_ = size;
    if (scratch > scratch_) scratch_ = scratch;
  }
}

void Basis::evaluate(const double* x, double* phi, double* scratch) const {
  double* out = phi;
  for (const auto& prod : products_) {
    // values of each family, then their outer product expanded in place
    Index cur = 1;
    out[0] = 1.0;
    for (const auto& f : prod) {
      const double v = x[f.column];
      const Index s = f.size();
      double* g = scratch;
      if (f.kind == BasisFamily::Kind::kPolynomial) {
        const double t = v * (1.0 / f.scale);  // a product, as in family_values (a division would not vectorise as cheaply)
        g[0] = 1.0;
        if (s > 1) g[1] = t;
        for (Index k = 1; k + 1 < s; ++k)
          g[k + 1] = monomial_ ? g[k] * t : ((2.0 * double(k) + 1.0) * t * g[k] - double(k) * g[k - 1]) * (1.0 / double(k + 1));
      } else {
        const double step = f.n > 1 ? (f.b - f.a) / double(f.n - 1) : 0.0;
        for (Index i = 0; i < s; ++i) {
          const double e = v - (f.a + double(i) * step);
          g[i] = std::exp(-e * e * (1.0 / f.sigma2));
        }
      }
      for (Index i = cur - 1; i >= 0; --i) {
        const double head = out[i];
        for (Index j = s - 1; j >= 0; --j) out[i * s + j] = head * g[j];
      }
      cur *= s;
    }
    out += cur;
  }
}

template <bool kContiguous>
void Basis::family_values(const BasisFamily& f, const double* x, Index n, Index stride, double* g) const {
  const Index s = f.size(), step_x = kContiguous ? 1 : stride;
  if (f.kind == BasisFamily::Kind::kPolynomial) {
    double* t = s > 1 ? g + n : g;  // row 1 holds t = x / scale
    const double inv_scale = 1.0 / f.scale;
    for (Index i = 0; i < n; ++i) t[i] = x[i * step_x] * inv_scale;
    for (Index i = 0; i < n; ++i) g[i] = 1.0;
    // the same recurrence (and so the same bits) as evaluate()
    for (Index k = 1; k + 1 < s; ++k) {
      const double *gk = g + k * n, *gm = g + (k - 1) * n;
      double* gn = g + (k + 1) * n;
      if (monomial_)
        for (Index i = 0; i < n; ++i) gn[i] = gk[i] * t[i];
      else
        for (Index i = 0; i < n; ++i)
          gn[i] = ((2.0 * double(k) + 1.0) * t[i] * gk[i] - double(k) * gm[i]) * (1.0 / double(k + 1));
    }
  } else {
    const double step = f.n > 1 ? (f.b - f.a) / double(f.n - 1) : 0.0, inv_s2 = 1.0 / f.sigma2;
    for (Index j = 0; j < s; ++j) {
      const double centre = f.a + double(j) * step;
      double* gj = g + j * n;
      for (Index i = 0; i < n; ++i) {
        const double e = x[i * step_x] - centre;
        gj[i] = std::exp(-e * e * inv_s2);
      }
    }
  }
}

void Basis::values_columns(const double* cols, Index ld, Index n, const double* coef, double* out,
                           double* scratch) const {
  double* P = scratch;                     // (max_product, n): the product of all families but the last
  double* Q = scratch + max_product_ * n;  // (max_product, n): the next one
  double* G = Q + max_product_ * n;        // (max_family, n)
  for (Index i = 0; i < n; ++i) out[i] = 0.0;
  Index offset = 0;
  for (const auto& prod : products_) {
    Index cur = 1;
    for (Index i = 0; i < n; ++i) P[i] = 1.0;
    const Index F = Index(prod.size());
    for (Index q = 0; q + 1 < F; ++q) {
      const BasisFamily& f = prod[q];
      const Index s = f.size();
      family_values<true>(f, cols + f.column * ld, n, 1, G);
      for (Index a = 0; a < cur; ++a)
        for (Index j = 0; j < s; ++j) {
          const double *pa = P + a * n, *gj = G + j * n;
          double* qa = Q + (a * s + j) * n;
          for (Index i = 0; i < n; ++i) qa[i] = pa[i] * gj[i];
        }
      std::swap(P, Q);
      cur *= s;
    }
    Index s = 1;
    if (F > 0) {
      s = prod[F - 1].size();
      family_values<true>(prod[F - 1], cols + prod[F - 1].column * ld, n, 1, G);
    } else {
      for (Index i = 0; i < n; ++i) G[i] = 1.0;
    }
    // out += sum over the terms, W states at a time held in registers
    // across all terms (one load and store of out per product, not per
    // term); the same order of additions as values()
    constexpr Index W = 8;
    Index i0 = 0;
    for (; i0 + W <= n; i0 += W) {
      double acc[W];
      for (Index w = 0; w < W; ++w) acc[w] = out[i0 + w];
      for (Index a = 0; a < cur; ++a)
        for (Index j = 0; j < s; ++j) {
          const double *pa = P + a * n + i0, *gj = G + j * n + i0, *ct = coef + (offset + a * s + j) * n + i0;
          for (Index w = 0; w < W; ++w) acc[w] += pa[w] * gj[w] * ct[w];
        }
      for (Index w = 0; w < W; ++w) out[i0 + w] = acc[w];
    }
    for (Index a = 0; a < cur; ++a)
      for (Index j = 0; j < s; ++j) {
        const double *pa = P + a * n, *gj = G + j * n, *ct = coef + (offset + a * s + j) * n;
        for (Index i = i0; i < n; ++i) out[i] += pa[i] * gj[i] * ct[i];
      }
    offset += cur * s;
  }
}

void Basis::values(const double* X, Index n, Index stride, const double* r, double* out, double* scratch) const {
  double* P = scratch;                     // (max_product, n): the product of all families but the last
  double* Q = scratch + max_product_ * n;  // (max_product, n): the next one
  double* G = Q + max_product_ * n;        // (max_family, n)
  // each state's row of r as an offset, so the loops below run over states
  // (contiguous in P and G, a gather in r)
  double* base = Q + max_product_ * n + max_family_ * n;  // (n,): exact integers
  for (Index i = 0; i < n; ++i) out[i] = 0.0, base[i] = double(Index(X[i * stride]) * size_);
  Index offset = 0;
  for (const auto& prod : products_) {
    Index cur = 1;
    for (Index i = 0; i < n; ++i) P[i] = 1.0;
    const Index F = Index(prod.size());
    for (Index q = 0; q + 1 < F; ++q) {
      const BasisFamily& f = prod[q];
      const Index s = f.size();
      family_values<false>(f, X + f.column, n, stride, G);
      // row order as evaluate(): the last family fastest
      for (Index a = 0; a < cur; ++a)
        for (Index j = 0; j < s; ++j) {
          const double *pa = P + a * n, *gj = G + j * n;
          double* qa = Q + (a * s + j) * n;
          for (Index i = 0; i < n; ++i) qa[i] = pa[i] * gj[i];
        }
      std::swap(P, Q);
      cur *= s;
    }
    // the last family multiplied in while accumulating: its product is never stored
    Index s = 1;
    if (F > 0) {
      s = prod[F - 1].size();
      family_values<false>(prod[F - 1], X + prod[F - 1].column, n, stride, G);
    } else {
      for (Index i = 0; i < n; ++i) G[i] = 1.0;
    }
    for (Index a = 0; a < cur; ++a)
      for (Index j = 0; j < s; ++j) {
        const double *pa = P + a * n, *gj = G + j * n, *rt = r + offset + a * s + j;
        for (Index i = 0; i < n; ++i) out[i] += pa[i] * gj[i] * rt[Index(base[i])];
      }
    offset += cur * s;
  }
}

}  // namespace directable
