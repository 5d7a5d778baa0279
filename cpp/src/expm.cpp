#include "directable/linalg/expm.hpp"

#include <algorithm>
#include <cmath>

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

}  // namespace

BorderedExpm::BorderedExpm(Index m, Index k) : m_(m), k_(k) {
  for (Elem* e : {&M_, &M2_, &M4_, &M6_, &M8_, &U_, &V_, &T1_, &T2_}) {
    e->X.setZero(m, m);
    e->Y.setZero(m, k);
  }
  E_.setZero(m, m);
  G_.setZero(m, k);
  tmpX_.setZero(m, m);
  tmpY_.setZero(m, k);
  lu_ = Eigen::PartialPivLU<Eigen::MatrixXd>(m);
}

void BorderedExpm::mul_M(const Elem& a, Elem& out) {
  out.X.noalias() = M_.X * a.X;
  out.Y.noalias() = M_.X * a.Y;
  out.Y += a.c * M_.Y;
  out.c = 0.0;
}

double BorderedExpm::norm1(const Elem& a) const {
  double nx = m_ ? a.X.cwiseAbs().colwise().sum().maxCoeff() : 0.0;
  double ny = k_ ? (a.Y.cwiseAbs().colwise().sum().array() + std::abs(a.c)).maxCoeff() : 0.0;
  return std::max(nx, ny);
}

// Hager/Higham estimate of ||P Q||_1 (a lower bound, as in SciPy's expm)
// from a few products with vectors, so no m^3 product is formed.
double BorderedExpm::power_norm_estimate(const Elem& P, const Elem& Q) const {
  const Index N = m_ + k_;
  Eigen::VectorXd x = Eigen::VectorXd::Constant(N, 1.0 / double(N)), y(N), t(N), z(N), xi(N);
  auto apply = [&](const Elem& e, const Eigen::VectorXd& in, Eigen::VectorXd& out) {
    out.head(m_).noalias() = e.X * in.head(m_);
    if (k_) {
      out.head(m_).noalias() += e.Y * in.tail(k_);
      out.tail(k_) = e.c * in.tail(k_);
    }
  };
  auto apply_t = [&](const Elem& e, const Eigen::VectorXd& in, Eigen::VectorXd& out) {
    out.head(m_).noalias() = e.X.transpose() * in.head(m_);
    if (k_) {
      out.tail(k_).noalias() = e.Y.transpose() * in.head(m_);
      out.tail(k_) += e.c * in.tail(k_);
    }
  };
  double est = 0.0;
  Index last_j = -1;
  for (int it = 0; it < 5; ++it) {
    apply(Q, x, t);
    apply(P, t, y);
    double e = y.lpNorm<1>();
    if (it > 0 && e <= est) break;
    est = e;
    for (Index i = 0; i < N; ++i) xi[i] = y[i] >= 0 ? 1.0 : -1.0;
    apply_t(P, xi, t);
    apply_t(Q, t, z);
    Index j;
    double zmax = z.cwiseAbs().maxCoeff(&j);
    if (it > 0 && (zmax <= z.dot(x) || j == last_j)) break;
    x.setZero();
    x[j] = 1.0;
    last_j = j;
  }
  // Higham's extra test vector guards against unlucky starting points.
  for (Index i = 0; i < N; ++i) x[i] = (i % 2 ? -1.0 : 1.0) * (1.0 + double(i) / double(std::max<Index>(N - 1, 1)));
  apply(Q, x, t);
  apply(P, t, y);
  return std::max(est, 2.0 * y.lpNorm<1>() / (3.0 * double(N)));
}

void BorderedExpm::compute(const Eigen::Ref<const Eigen::MatrixXd>& H, const Eigen::Ref<const Eigen::MatrixXd>& C) {
  check_shape("H", H.rows(), H.cols(), m_, m_);
  check_shape("C", C.rows(), C.cols(), m_, k_);
  M_.X = H;
  M_.Y = C;
  M_.c = 0.0;
  if (!std::isfinite(M_.X.sum()) || !std::isfinite(M_.Y.sum()))
    throw std::domain_error("matrix exponential of a matrix with NaN or inf entries");

  // M2 = M * M.
  mul_M(M_, M2_);
  auto prod = [](const Elem& a, const Elem& b, Elem& out) {
    out.X.noalias() = a.X * b.X;
    out.Y.noalias() = a.X * b.Y;
    if (b.c != 0.0) out.Y += b.c * a.Y;
    out.c = a.c * b.c;
  };
  auto set_identity = [this](Elem& e, double scale) {
    e.X.setIdentity();
    e.X *= scale;
    e.Y.setZero();
    e.c = scale;
  };
  auto axpy = [](Elem& y, double a, const Elem& x) {
    y.X += a * x.X;
    y.Y += a * x.Y;
    y.c += a * x.c;
  };

  int s = 0;
  const double* b = nullptr;
  int degree = 13;
  bool have4 = false, have6 = false;
  double d4 = std::pow(power_norm_estimate(M2_, M2_), 0.25);
  double d6 = std::pow(power_norm_estimate(M2_, M2_) * norm1(M2_), 1.0 / 6.0);
  double eta1 = std::max(d4, d6);
  if (eta1 <= kTheta3) {
    degree = 3;
    b = kB3;
  } else {
    prod(M2_, M2_, M4_);
    have4 = true;
    d4 = std::pow(norm1(M4_), 0.25);
    double eta2 = std::max(d4, d6);
    if (eta2 <= kTheta5) {
      degree = 5;
      b = kB5;
    } else {
      prod(M4_, M2_, M6_);
      have6 = true;
      d6 = std::pow(norm1(M6_), 1.0 / 6.0);
      double d8 = std::pow(power_norm_estimate(M4_, M4_), 1.0 / 8.0);
      double eta3 = std::max(d6, d8);
      if (eta3 <= kTheta7) {
        degree = 7;
        b = kB7;
      } else if (eta3 <= kTheta9) {
        degree = 9;
        b = kB9;
      } else {
        double d10 = std::pow(power_norm_estimate(M4_, M6_), 1.0 / 10.0);
        double eta5 = std::min(eta3, std::max(d8, d10));
        s = std::max(0, int(std::ceil(std::log2(eta5 / kTheta13))));
        degree = 13;
        b = kB13;
      }
    }
  }
  degree_ = degree;
  squarings_ = s;

  if (s > 0) {
    // Scale M by 2^-s; powers scale by 2^(-s j).
    double f = std::ldexp(1.0, -s);
    M_.X *= f;
    M_.Y *= f;
    M2_.X *= f * f;
    M2_.Y *= f * f;
    double f4 = f * f * f * f;
    M4_.X *= f4;
    M4_.Y *= f4;
    M6_.X *= f4 * f * f;
    M6_.Y *= f4 * f * f;
  }

  // U = M * (odd part / M), V = even part.
  if (degree == 13) {
    // T1 = b13 M6 + b11 M4 + b9 M2; T2 = M6 * T1 + b7 M6 + b5 M4 + b3 M2 + b1 I
    T1_.X = b[13] * M6_.X + b[11] * M4_.X + b[9] * M2_.X;
    T1_.Y = b[13] * M6_.Y + b[11] * M4_.Y + b[9] * M2_.Y;
    T1_.c = 0.0;
    prod(M6_, T1_, T2_);
    axpy(T2_, b[7], M6_);
    axpy(T2_, b[5], M4_);
    axpy(T2_, b[3], M2_);
    T2_.X.diagonal().array() += b[1];
    T2_.c += b[1];
    mul_M(T2_, U_);
    T1_.X = b[12] * M6_.X + b[10] * M4_.X + b[8] * M2_.X;
    T1_.Y = b[12] * M6_.Y + b[10] * M4_.Y + b[8] * M2_.Y;
    T1_.c = 0.0;
    prod(M6_, T1_, V_);
    axpy(V_, b[6], M6_);
    axpy(V_, b[4], M4_);
    axpy(V_, b[2], M2_);
    V_.X.diagonal().array() += b[0];
    V_.c += b[0];
  } else {
    if (degree >= 5 && !have4) prod(M2_, M2_, M4_);
    if (degree >= 7 && !have6) prod(M4_, M2_, M6_);
    if (degree >= 9) prod(M4_, M4_, M8_);
    const Elem* pw[] = {&M2_, &M4_, &M6_, &M8_};
    set_identity(T2_, b[1]);
    set_identity(V_, b[0]);
    for (int j = 1; 2 * j <= degree; ++j) {
      axpy(T2_, b[2 * j + 1], *pw[j - 1]);
      axpy(V_, b[2 * j], *pw[j - 1]);
    }
    mul_M(T2_, U_);
  }

  // exp(M) ~ (V - U)^-1 (V + U) = [[E, G], [0, I]].
  tmpX_ = V_.X - U_.X;
  lu_.compute(tmpX_);
  tmpX_ = V_.X + U_.X;
  E_.noalias() = lu_.solve(tmpX_);
  if (k_) {
    tmpY_ = 2.0 * U_.Y;
    G_.noalias() = lu_.solve(tmpY_);
  }
  for (int i = 0; i < s; ++i) {
    // [[E, G], [0, I]]^2 = [[E^2, E G + G], [0, I]]
    if (k_) {
      tmpY_.noalias() = E_ * G_;
      G_ += tmpY_;
    }
    tmpX_.noalias() = E_ * E_;
    E_.swap(tmpX_);
  }
}

}  // namespace directable
