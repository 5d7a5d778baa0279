#include "directable/linalg/expm.hpp"

#include <algorithm>
#include <cmath>

#include "small_gemm.hpp"

namespace directable {

namespace {

// Pade coefficients b_0..b_m (Higham 2005) and the theta_m bounds of
// Al-Mohy & Higham 2009, table 3.1.
const double kB3[] = {120., 60., 12., 1.};
const double kB5[] = {30240., 15120., 3360., 420., 30., 1.};
const double kB7[] = {17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.};
const double kB9[] = {17643225600., 8821612800., 2075673600., 302702400., 30270240.,
                      2162160., 110880., 3960., 90., 1.};
const double kB13[] = {64764752532480000., 32382376266240000., 7771770303897600.,
                       1187353796428800.,  129060195264000.,   10559470521600.,
                       670442572800.,      33522128640.,       1323241920.,
                       40840800.,          960960.,            16380.,
                       182.,               1.};
const double kTheta3 = 1.495585217958292e-2;
const double kTheta5 = 2.539398330063230e-1;
const double kTheta7 = 9.504178996162932e-1;
const double kTheta9 = 2.097847961257068e0;
const double kTheta13 = 5.371920351148152e0;
// Up to this dimension the scaling uses exact norms of formed powers.
const Index kExactNormDim = 64;

using Eigen::MatrixXd;
using Eigen::VectorXd;

// Algebra of bordered elements [[X, Y], [0, c I]].
struct BorderedAlg {
  Index m, k;
  Index dim() const { return m + k; }
  void resize(BorderedElem& e) const {
    e.X.setZero(m, m);
    e.Y.setZero(m, k);
    e.c = 0.0;
  }
  static void prod(const BorderedElem& a, const BorderedElem& b, BorderedElem& out) {
    small_gemm::gemm(out.X, a.X, b.X);
    small_gemm::gemm(out.Y, a.X, b.Y);
    if (b.c != 0.0) out.Y += b.c * a.Y;
    out.c = a.c * b.c;
  }
  static void set_zero(BorderedElem& e) {
    e.X.setZero();
    e.Y.setZero();
    e.c = 0.0;
  }
  static void axpy(BorderedElem& y, double a, const BorderedElem& x) {
    y.X += a * x.X;
    y.Y += a * x.Y;
    y.c += a * x.c;
  }
  static void add_identity(BorderedElem& e, double b) {
    e.X.diagonal().array() += b;
    e.c += b;
  }
  static void scale(BorderedElem& e, double f) {
    e.X *= f;
    e.Y *= f;
    e.c *= f;
  }
  static double norm1(const BorderedElem& e) {
    double nx = e.X.size() ? e.X.cwiseAbs().colwise().sum().maxCoeff() : 0.0;
    double ny = e.Y.size() ? (e.Y.cwiseAbs().colwise().sum().array() + std::abs(e.c)).maxCoeff() : 0.0;
    return std::max(nx, ny);
  }
  // y = e v and y = e' v for v = [v_m; v_k].
  static void apply(const BorderedElem& e, const Eigen::Ref<const VectorXd>& v, Eigen::Ref<VectorXd> y) {
    const Index m = e.X.rows(), k = e.Y.cols();
    y.head(m).noalias() = e.X * v.head(m);
    if (k) {
      y.head(m).noalias() += e.Y * v.tail(k);
      y.tail(k) = e.c * v.tail(k);
    }
  }
  static void apply_t(const BorderedElem& e, const Eigen::Ref<const VectorXd>& v, Eigen::Ref<VectorXd> y) {
    const Index m = e.X.rows(), k = e.Y.cols();
    y.head(m).noalias() = e.X.transpose() * v.head(m);
    if (k) {
      y.tail(k).noalias() = e.Y.transpose() * v.head(m);
      y.tail(k) += e.c * v.tail(k);
    }
  }
};

// Algebra of Van Loan elements [[parity F', Z], [0, F]] (F bordered n, s).
struct VanLoanAlg {
  Index n, s;
  Index p() const { return n + s; }
  Index dim() const { return 2 * p(); }
  void resize(VanLoanElem& e) const {
    BorderedAlg{n, s}.resize(e.F);
    e.Z.setZero(p(), p());
    e.parity = 1;
  }
  void prod(const VanLoanElem& a, const VanLoanElem& b, VanLoanElem& out) const {
    BorderedAlg::prod(a.F, b.F, out.F);
    // Z = (parity_a F_a') Z_b + Z_a F_b, using the zero blocks of both.
    const double pa = a.parity;
    small_gemm::gemm(out.Z.topRows(n), a.F.X, b.Z.topRows(n), pa, 0.0, true);
    small_gemm::gemm(out.Z.bottomRows(s), a.F.Y, b.Z.topRows(n), pa, 0.0, true);
    if (a.F.c != 0.0) out.Z.bottomRows(s) += (pa * a.F.c) * b.Z.bottomRows(s);
    small_gemm::gemm(out.Z.leftCols(n), a.Z.leftCols(n), b.F.X, 1.0, 1.0);
    small_gemm::gemm(out.Z.rightCols(s), a.Z.leftCols(n), b.F.Y, 1.0, 1.0);
    if (b.F.c != 0.0) out.Z.rightCols(s) += b.F.c * a.Z.rightCols(s);
    out.parity = a.parity * b.parity;
  }
  static void set_zero(VanLoanElem& e) {
    BorderedAlg::set_zero(e.F);
    e.Z.setZero();
    e.parity = 1;
  }
  // Only elements of the same parity are ever added (even and odd Pade parts).
  static void axpy(VanLoanElem& y, double a, const VanLoanElem& x) {
    BorderedAlg::axpy(y.F, a, x.F);
    y.Z += a * x.Z;
    y.parity = x.parity;
  }
  static void add_identity(VanLoanElem& e, double b) { BorderedAlg::add_identity(e.F, b); }
  static void scale(VanLoanElem& e, double f) {
    BorderedAlg::scale(e.F, f);
    e.Z *= f;
  }
  double norm1(const VanLoanElem& e) const {
    // Left columns: those of parity F' = row sums of [X Y] (and |c|);
    // right columns: column sums of Z plus those of F.
    double left = std::abs(e.F.c);
    if (n) left = std::max(left, (e.F.X.cwiseAbs().rowwise().sum() + e.F.Y.cwiseAbs().rowwise().sum()).maxCoeff());
    Eigen::RowVectorXd right = e.Z.cwiseAbs().colwise().sum();
    right.head(n) += e.F.X.cwiseAbs().colwise().sum();
    if (s) right.tail(s).array() += e.F.Y.cwiseAbs().colwise().sum().array() + std::abs(e.F.c);
    return std::max(left, right.maxCoeff());
  }
  void apply(const VanLoanElem& e, const Eigen::Ref<const VectorXd>& v, Eigen::Ref<VectorXd> y) const {
    const Index q = p();
    BorderedAlg::apply_t(e.F, v.head(q), y.head(q));
    y.head(q) *= double(e.parity);
    y.head(q).noalias() += e.Z * v.tail(q);
    BorderedAlg::apply(e.F, v.tail(q), y.tail(q));
  }
  void apply_t(const VanLoanElem& e, const Eigen::Ref<const VectorXd>& v, Eigen::Ref<VectorXd> y) const {
    const Index q = p();
    BorderedAlg::apply(e.F, v.head(q), y.head(q));
    y.head(q) *= double(e.parity);
    BorderedAlg::apply_t(e.F, v.tail(q), y.tail(q));
    y.tail(q).noalias() += e.Z.transpose() * v.head(q);
  }
};

// Hager/Higham estimate of ||P Q||_1 (a lower bound, as in SciPy's expm)
// from a few products with vectors, so no product matrix is formed.
template <class Alg, class Elem>
double norm_estimate(const Alg& alg, const Elem& P, const Elem& Q) {
  const Index N = alg.dim();
  VectorXd x = VectorXd::Constant(N, 1.0 / double(N)), y(N), t(N), z(N), xi(N);
  double est = 0.0;
  Index last_j = -1;
  for (int it = 0; it < 5; ++it) {
    alg.apply(Q, x, t);
    alg.apply(P, t, y);
    double e = y.template lpNorm<1>();
    if (it > 0 && e <= est) break;
    est = e;
    for (Index i = 0; i < N; ++i) xi[i] = y[i] >= 0 ? 1.0 : -1.0;
    alg.apply_t(P, xi, t);
    alg.apply_t(Q, t, z);
    Index j;
    double zmax = z.cwiseAbs().maxCoeff(&j);
    if (it > 0 && (zmax <= z.dot(x) || j == last_j)) break;
    x.setZero();
    x[j] = 1.0;
    last_j = j;
  }
  // Higham's extra test vector guards against unlucky starting points.
  for (Index i = 0; i < N; ++i) x[i] = (i % 2 ? -1.0 : 1.0) * (1.0 + double(i) / double(std::max<Index>(N - 1, 1)));
  alg.apply(Q, x, t);
  alg.apply(P, t, y);
  return std::max(est, 2.0 * y.template lpNorm<1>() / (3.0 * double(N)));
}

// The Pade approximant chosen for M: coefficients b, degree, squarings,
// and which of the powers M^4, M^6 the choice has formed.
struct PadeChoice {
  const double* b;
  int degree;
  int squarings;
  bool have4, have6, exact;
};

// Chooses the Pade degree and the squarings for M = pw[0], forming M^2 and
// as many of M^4, M^6, M^8 (pw[2..4]) as the choice needs, and scales the
// formed powers by the squarings.
template <class Alg, class Elem>
PadeChoice choose_pade(const Alg& alg, Elem* pw) {
  Elem &M = pw[0], &M2 = pw[1], &M4 = pw[2], &M6 = pw[3], &M8 = pw[4];
  alg.prod(M, M, M2);
  const double* b = kB13;
  int s = 0;
  int degree = 13;
  // Small matrices: forming M^4, M^6, M^8 and taking exact 1-norms costs
  // less than the estimator's matrix-vector sweeps (measured at n = 16).
  const bool exact = alg.dim() <= kExactNormDim;
  bool have4 = false, have6 = false;
  double d4, d6;
  if (exact) {
    alg.prod(M2, M2, M4);
    alg.prod(M4, M2, M6);
    have4 = have6 = true;
    d4 = std::pow(alg.norm1(M4), 0.25);
    d6 = std::pow(alg.norm1(M6), 1.0 / 6.0);
  } else {
    const double n22 = norm_estimate(alg, M2, M2);
    d4 = std::pow(n22, 0.25);
    d6 = std::pow(n22 * alg.norm1(M2), 1.0 / 6.0);
  }
  if (std::max(d4, d6) <= kTheta3) {
    degree = 3;
    b = kB3;
  } else {
    if (!have4) {
      alg.prod(M2, M2, M4);
      have4 = true;
      d4 = std::pow(alg.norm1(M4), 0.25);
    }
    if (std::max(d4, d6) <= kTheta5) {
      degree = 5;
      b = kB5;
    } else {
      if (!have6) {
        alg.prod(M4, M2, M6);
        have6 = true;
        d6 = std::pow(alg.norm1(M6), 1.0 / 6.0);
      }
      // ||M^8||^(1/8) <= ||M^4||^(1/4) = d4: where max(d4, d6) already
      // passes theta_7 the exact d8 cannot change the choice, so M^8 is
      // formed (or estimated) only when the bound is not enough.
      double d8 = d4;
      if (std::max(d4, d6) > kTheta7) {
        if (exact) {
          alg.prod(M4, M4, M8);
          d8 = std::min(d4, std::pow(alg.norm1(M8), 1.0 / 8.0));
        } else {
          d8 = std::min(d4, std::pow(norm_estimate(alg, M4, M4), 1.0 / 8.0));
        }
      }
      const double eta3 = std::max(d6, d8);
      if (eta3 <= kTheta7) {
        degree = 7;
        b = kB7;
      } else if (eta3 <= kTheta9) {
        degree = 9;
        b = kB9;
      } else {
        const double d10 = std::pow(norm_estimate(alg, M4, M6), 1.0 / 10.0);
        const double eta5 = std::min(eta3, std::max(d8, d10));
        s = std::max(0, int(std::ceil(std::log2(eta5 / kTheta13))));
      }
    }
  }
  if (s > 0) {
    // Scale M by 2^-s; M^j scales by 2^(-s j).
    const double f = std::ldexp(1.0, -s);
    Alg::scale(M, f);
    Alg::scale(M2, f * f);
    Alg::scale(M4, std::pow(f, 4));
    Alg::scale(M6, std::pow(f, 6));
  }
  return {b, degree, s, have4, have6, exact};
}

// The scaled numerator/denominator parts U (odd) and V (even) of the
// chosen approximant, p = V + U, q = V - U.
template <class Alg, class Elem>
void pade_sums(const Alg& alg, Elem* pw, const PadeChoice& choice, Elem& U, Elem& V, Elem& T1, Elem& T2) {
  Elem &M = pw[0], &M2 = pw[1], &M4 = pw[2], &M6 = pw[3], &M8 = pw[4];
  const double* b = choice.b;
  const int degree = choice.degree;
  const bool have4 = choice.have4, have6 = choice.have6, exact = choice.exact;
  if (degree == 13) {
    // U = M [M6 (b13 M6 + b11 M4 + b9 M2) + b7 M6 + b5 M4 + b3 M2 + b1 I]
    // V =    M6 (b12 M6 + b10 M4 + b8 M2) + b6 M6 + b4 M4 + b2 M2 + b0 I
    Alg::set_zero(T1);
    Alg::axpy(T1, b[13], M6);
    Alg::axpy(T1, b[11], M4);
    Alg::axpy(T1, b[9], M2);
    alg.prod(M6, T1, T2);
    Alg::axpy(T2, b[7], M6);
    Alg::axpy(T2, b[5], M4);
    Alg::axpy(T2, b[3], M2);
    Alg::add_identity(T2, b[1]);
    alg.prod(M, T2, U);
    Alg::set_zero(T1);
    Alg::axpy(T1, b[12], M6);
    Alg::axpy(T1, b[10], M4);
    Alg::axpy(T1, b[8], M2);
    alg.prod(M6, T1, V);
    Alg::axpy(V, b[6], M6);
    Alg::axpy(V, b[4], M4);
    Alg::axpy(V, b[2], M2);
    Alg::add_identity(V, b[0]);
  } else {
    if (degree >= 5 && !have4) alg.prod(M2, M2, M4);
    if (degree >= 7 && !have6) alg.prod(M4, M2, M6);
    if (degree >= 9 && !exact) alg.prod(M4, M4, M8);
    Alg::set_zero(T2);
    Alg::add_identity(T2, b[1]);
    Alg::set_zero(V);
    Alg::add_identity(V, b[0]);
    for (int j = 1; 2 * j <= degree; ++j) {
      Alg::axpy(T2, b[2 * j + 1], pw[j]);
      Alg::axpy(V, b[2 * j], pw[j]);
    }
    alg.prod(M, T2, U);
  }
}

// Chooses the Pade degree and the squarings for M = pw[0] and leaves the
// scaled numerator/denominator parts U (odd) and V (even), p = V + U,
// q = V - U. pw[1..4] receive M^2, M^4, M^6, M^8 as needed.
template <class Alg, class Elem>
void pade_parts(const Alg& alg, Elem* pw, Elem& U, Elem& V, Elem& T1, Elem& T2, int& degree, int& squarings) {
  const PadeChoice choice = choose_pade(alg, pw);
  degree = choice.degree;
  squarings = choice.squarings;
  pade_sums(alg, pw, choice, U, V, T1, T2);
}

void check_finite_input(const Eigen::Ref<const MatrixXd>& a, const char* what) {
  if (!a.allFinite()) throw std::domain_error(std::string("matrix exponential: ") + what + " has NaN or inf entries");
}

}  // namespace

BorderedExpm::BorderedExpm(Index m, Index k) : m_(m), k_(k) {
  BorderedAlg alg{m, k};
  for (auto& e : pow_) alg.resize(e);
  for (BorderedElem* e : {&U_, &V_, &T1_, &T2_}) alg.resize(*e);
  E_.setZero(m, m);
  G_.setZero(m, k);
  tmpX_.setZero(m, m);
  tmpY_.setZero(m, k);
  lu_ = Eigen::PartialPivLU<MatrixXd>(m);
}

void BorderedExpm::compute(const Eigen::Ref<const MatrixXd>& H, const Eigen::Ref<const MatrixXd>& C) {
  if (m_ < 1) throw_shape("H", "(m, m) with m >= 1", shape_str(H.rows(), H.cols()));
  check_shape("H", H.rows(), H.cols(), m_, m_);
  check_shape("C", C.rows(), C.cols(), m_, k_);
  check_finite_input(H, "H");
  check_finite_input(C, "C");
  pow_[0].X = H;
  pow_[0].Y = C;
  pow_[0].c = 0.0;
  pade_parts(BorderedAlg{m_, k_}, pow_, U_, V_, T1_, T2_, degree_, squarings_);

  // exp(M) ~ (V - U)^-1 (V + U) = [[E, G], [0, I]]; the identity parts are
  // equal (b0), so G = (V - U)_X^-1 (2 U_Y).
  tmpX_ = V_.X - U_.X;
  lu_.compute(tmpX_);
  tmpX_ = V_.X + U_.X;
  E_.noalias() = lu_.solve(tmpX_);
  if (k_) {
    tmpY_ = 2.0 * U_.Y;
    G_.noalias() = lu_.solve(tmpY_);
  }
  for (int i = 0; i < squarings_; ++i) {
    // [[E, G], [0, I]]^2 = [[E^2, E G + G], [0, I]]
    if (k_) {
      small_gemm::gemm(tmpY_, E_, G_);
      G_ += tmpY_;
    }
    small_gemm::gemm(tmpX_, E_, E_);
    E_.swap(tmpX_);
  }
}

VanLoanExpm::VanLoanExpm(Index n, Index s) : n_(n), s_(s), p_(n + s) {
  VanLoanAlg alg{n, s};
  for (auto& e : pow_) alg.resize(e);
  for (VanLoanElem* e : {&U_, &V_, &T1_, &T2_}) alg.resize(*e);
  BorderedAlg balg{n, s};
  for (BorderedElem* e : {&rF_, &tmpB_}) balg.resize(*e);
  Z_.setZero(p_, p_);
  tmpZ_.setZero(p_, p_);
  Phi_.setZero(n, n);
  Gamma_.setZero(n, s);
  W_.setZero(p_, p_);
  luq_ = Eigen::PartialPivLU<MatrixXd>(n);
  lup_ = Eigen::PartialPivLU<MatrixXd>(n);
}

void VanLoanExpm::compute(const Eigen::Ref<const MatrixXd>& Ad, const Eigen::Ref<const MatrixXd>& Bd,
                          const Eigen::Ref<const MatrixXd>& Qd) {
  const Index n = n_, s = s_;
  if (n < 1) throw std::invalid_argument("Van Loan exponential needs n >= 1");
  check_shape("A", Ad.rows(), Ad.cols(), n, n);
  check_shape("B", Bd.rows(), Bd.cols(), n, s);
  check_shape("Q", Qd.rows(), Qd.cols(), n, n);
  check_finite_input(Ad, "A");
  check_finite_input(Bd, "B");
  check_finite_input(Qd, "Q");
  // W is linear in Q: scale Q to the size of F so that a large weight does
  // not inflate the norms that choose the squarings, and scale W back.
  VanLoanElem& M = pow_[0];
  M.F.X = Ad;
  M.F.Y = Bd;
  M.F.c = 0.0;
  const double q_norm = Qd.cwiseAbs().colwise().sum().maxCoeff();
  const double f_norm = std::max(BorderedAlg::norm1(M.F), 1e-300);
  const double q_scale = q_norm > 0.0 ? f_norm / q_norm : 1.0;
  M.Z.setZero();
  M.Z.topLeftCorner(n, n) = q_scale * Qd;
  M.parity = -1;  // the top-left block is -F'
  VanLoanAlg alg{n, s};
  pade_parts(alg, pow_, U_, V_, T1_, T2_, degree_, squarings_);

  // r = q^-1 p with q = V - U, p = V + U, block by block:
  //   F part  r_F = qF^-1 pF                  (= e^F)
  //   (L part r_L = e^{-F'} is never needed)
  //   Z part  r_Z = q_L^-1 (p_Z - q_Z r_F), q_L = pF'.
  // pF and qF share the identity part b0.
  const double b0 = V_.F.c;
  tmpB_.X = V_.F.X - U_.F.X;  // qX
  luq_.compute(tmpB_.X);
  rF_.X = V_.F.X + U_.F.X;  // pX
  lup_.compute(rF_.X);
  rF_.X = luq_.solve(V_.F.X + U_.F.X);
  rF_.Y.noalias() = luq_.solve(2.0 * U_.F.Y);
  rF_.c = 1.0;
  // tmpZ = p_Z - q_Z r_F = (V_Z + U_Z) - (V_Z - U_Z) r_F
  tmpZ_ = V_.Z - U_.Z;  // q_Z
  Z_ = V_.Z + U_.Z;     // p_Z
  small_gemm::gemm(Z_.leftCols(n), tmpZ_.leftCols(n), rF_.X, -1.0, 1.0);
  small_gemm::gemm(Z_.rightCols(s), tmpZ_.leftCols(n), rF_.Y, -1.0, 1.0);
  Z_.rightCols(s) -= tmpZ_.rightCols(s);
  // Solve [[pX', 0], [pY', b0 I]] r_Z = tmpZ: top rows by the LU of pX.
  tmpB_.Y = V_.F.Y + U_.F.Y;  // pY
  tmpZ_.topRows(n).noalias() = lup_.transpose().solve(Z_.topRows(n));
  Z_.topRows(n) = tmpZ_.topRows(n);
  Z_.bottomRows(s).noalias() -= tmpB_.Y.transpose() * Z_.topRows(n);
  Z_.bottomRows(s) /= b0;

  // W_h = e^{F'h} Z_h at the scaled step h = dt / 2^s. Undoing the scaling
  // by squaring the Van Loan matrix would form e^{-F' dt}, which for
  // strongly damped modes (|lambda| dt >~ 30) swamps W in cancellation;
  // the doubling W(2h) = W(h) + e^{F'h} W(h) e^{F h} only ever multiplies
  // by the bounded e^{F h} instead.
  small_gemm::gemm(W_.topRows(n), rF_.X, Z_.topRows(n), 1.0, 0.0, true);
  W_.bottomRows(s) = Z_.bottomRows(s);
  small_gemm::gemm(W_.bottomRows(s), rF_.Y, Z_.topRows(n), 1.0, 1.0, true);
  for (int i = 0; i < squarings_; ++i) {
    // tmpZ = W E, then W += E' tmpZ, with E = [[X, Y], [0, I]] = e^{F h}.
    small_gemm::gemm(tmpZ_.leftCols(n), W_.leftCols(n), rF_.X);
    tmpZ_.rightCols(s) = W_.rightCols(s);
    small_gemm::gemm(tmpZ_.rightCols(s), W_.leftCols(n), rF_.Y, 1.0, 1.0);
    small_gemm::gemm(W_.topRows(n), rF_.X, tmpZ_.topRows(n), 1.0, 1.0, true);
    W_.bottomRows(s) += tmpZ_.bottomRows(s);
    small_gemm::gemm(W_.bottomRows(s), rF_.Y, tmpZ_.topRows(n), 1.0, 1.0, true);
    BorderedAlg::prod(rF_, rF_, tmpB_);
    std::swap(rF_, tmpB_);
  }
  W_ /= q_scale;
  Phi_ = rF_.X;
  Gamma_ = rF_.Y;
}

}  // namespace directable
