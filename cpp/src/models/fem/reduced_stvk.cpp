#include "directable/models/fem/reduced_stvk.hpp"
#include "directable/core/progress.hpp"

#include <Eigen/Dense>
#include <cmath>
#include <string>

namespace directable {

namespace {
using Mat3 = Eigen::Matrix3d;
constexpr double kSqrt2 = 1.4142135623730951;
// Symmetric 3x3 as 6 numbers with A:B = sym6(A).sym6(B).
template <class Row>
inline void sym6(const Mat3& A, double s, Row out) {
  out[0] = s * A(0, 0);
  out[1] = s * A(1, 1);
  out[2] = s * A(2, 2);
  out[3] = s * kSqrt2 * A(0, 1);
  out[4] = s * kSqrt2 * A(0, 2);
  out[5] = s * kSqrt2 * A(1, 2);
}
}  // namespace

ReducedStVK::ReducedStVK(const StVKFEM& full, const Eigen::Ref<const Eigen::MatrixXd>& U, double alpha, double beta,
                         bool damping_hessian, const ProgressFn* progress)
    : r_(U.cols()), np_(U.cols() * (U.cols() + 1) / 2), alpha_(alpha < 0 ? full.alpha() : alpha),
      beta_(beta < 0 ? full.beta() : beta), damping_hessian_(damping_hessian) {
  const Index N = full.dofs();
  if (U.rows() != N || U.cols() < 1) throw_shape("U", "(" + std::to_string(N) + ", r) with r >= 1", shape_str(U.rows(), U.cols()));
  check_finite("U", U.data(), U.size());
  if (!std::isfinite(alpha_ + beta_)) throw std::domain_error("alpha and beta must be finite");
  const double umax = U.cwiseAbs().maxCoeff();
  for (Index i = 0; i < N; ++i)
    if (full.fixed_mask()[i] && U.row(i).cwiseAbs().maxCoeff() > 1e-10 * umax)
      throw std::invalid_argument("U must vanish on the fixed vertices' dofs (row " + std::to_string(i) +
                                  " is nonzero): build it from displacements of the constrained model");
  Mr_ = U.transpose() * full.mass().asDiagonal() * U;
  check_positive_definite("U' M U (the basis columns must be linearly independent)", Mr_);
  Minv_ = Mr_.ldlt().solve(Eigen::MatrixXd::Identity(r_, r_));
  Minv_ = 0.5 * (Minv_ + Minv_.transpose()).eval();
  B_.setZero(2 * r_, r_);
  B_.bottomRows(r_) = Minv_;
  pidx_.setConstant(r_, r_, -1);
  pm_.resize(np_);
  pn_.resize(np_);
  for (Index m = 0, a = 0; m < r_; ++m)
    for (Index n = m; n < r_; ++n, ++a) {
      pidx_(m, n) = int(a);
      pm_[a] = int(m);
      pn_[a] = int(n);
    }
  // Element by element, in chunks: features of L_m = sym(G_m) and of
  // N_mn = sym(G_m' G_n), then the coefficient sums as matrix products.
  const TetMesh& mesh = full.mesh();
  const Index E = mesh.num_tets(), C = std::min<Index>(E, 256);
  const double mu = full.mu(), la = full.lambda();
  Eigen::MatrixXd XL(r_, 6 * C), XN(np_, 6 * C), tL(r_, C), tN(np_, C);
  Eigen::MatrixXd Pm = Eigen::MatrixXd::Zero(r_, r_), c = Eigen::MatrixXd::Zero(r_, np_), D = Eigen::MatrixXd::Zero(np_, np_);
  std::vector<Mat3> G(r_);
  ProgressThrottle throttle(progress, E);
  for (Index e0 = 0; e0 < E; e0 += C) {
    const Index nc = std::min(C, E - e0);
    XL.setZero();
    XN.setZero();
    tL.setZero();
    tN.setZero();
    for (Index k = 0; k < nc; ++k) {
      const Index e = e0 + k;
      const auto g = mesh.gradients(e);
      const double s = std::sqrt(mesh.volumes()[e]);
      for (Index m = 0; m < r_; ++m) {
        G[m].setZero();
        for (int a = 0; a < 4; ++a) G[m] += U.block<3, 1>(3 * mesh.tets()(e, a), m) * g.row(a);
        const Mat3 L = 0.5 * (G[m] + G[m].transpose());
        sym6(L, s, XL.row(m).segment<6>(6 * k));
        tL(m, k) = s * L.trace();
      }
      for (Index a = 0; a < np_; ++a) {
        const Mat3 GG = G[pm_[a]].transpose() * G[pn_[a]];
        const Mat3 Nmn = 0.5 * (GG + GG.transpose());
        sym6(Nmn, s, XN.row(a).segment<6>(6 * k));
        tN(a, k) = s * Nmn.trace();
      }
    }
    Pm.noalias() += mu * XL * XL.transpose() + 0.5 * la * tL * tL.transpose();
    c.noalias() += mu * XL * XN.transpose() + 0.5 * la * tL * tN.transpose();
    D.noalias() += 0.5 * mu * XN * XN.transpose() + 0.25 * la * tN * tN.transpose();
    if (!throttle.report(e0 + nc)) throw Cancelled();
  }
  throttle.finish(E);
  P_ = Pm + Pm.transpose();
  // Full symmetrization over index permutations.
  S_.resize(np_, r_);
  for (Index a = 0; a < np_; ++a)
    for (Index k = 0; k < r_; ++k) {
      const Index m = pm_[a], n = pn_[a];
      S_(a, k) = (c(k, a) + c(m, pair(n, k)) + c(n, pair(m, k))) / 3.0;
    }
  T_.resize(np_, np_);
  for (Index a = 0; a < np_; ++a)
    for (Index b = 0; b < np_; ++b) {
      const Index m = pm_[a], n = pn_[a], k = pm_[b], l = pn_[b];
      T_(a, b) = (D(a, b) + D(pair(m, k), pair(n, l)) + D(pair(m, l), pair(n, k))) / 3.0;
    }
}

void ReducedStVK::set_newton(int max_iterations, double tolerance) {
  if (max_iterations < 1) throw std::invalid_argument("max_iterations must be >= 1, got " + std::to_string(max_iterations));
  check_positive("tolerance", tolerance);
  max_it_ = max_iterations;
  tol_ = tolerance;
}

void ReducedStVK::unpack(const Eigen::VectorXd& y, double scale, Eigen::MatrixXd& out) const {
  for (Index a = 0; a < np_; ++a) {
    out(pm_[a], pn_[a]) += scale * y[a];
    if (pm_[a] != pn_[a]) out(pn_[a], pm_[a]) += scale * y[a];
  }
}

void ReducedStVK::evaluate(const Eigen::Ref<const Eigen::VectorXd>& p, Eigen::Ref<Eigen::VectorXd> R,
                           Eigen::MatrixXd* K, Eigen::VectorXd& pairs) const {
  if (p.size() != r_) throw_shape("p", "(" + std::to_string(r_) + ",)", "(" + std::to_string(p.size()) + ",)");
  if (pairs.size() != 3 * np_) pairs.resize(3 * np_);
  auto pi = pairs.segment(0, np_), y = pairs.segment(np_, np_), z = pairs.segment(2 * np_, np_);
  for (Index a = 0; a < np_; ++a) pi[a] = (pm_[a] == pn_[a] ? 1.0 : 2.0) * p[pm_[a]] * p[pn_[a]];
  y.noalias() = T_ * pi;
  z.noalias() = S_ * p;
  R.noalias() = P_ * p;
  for (Index a = 0; a < np_; ++a) {
    const double q = 3.0 * z[a] + 2.0 * y[a];
    const Index m = pm_[a], n = pn_[a];
    R[m] += q * p[n];
    if (m != n) R[n] += q * p[m];
  }
  if (K) {
    *K = P_;
    for (Index a = 0; a < np_; ++a) {
      const double q = 6.0 * (z[a] + y[a]);
      (*K)(pm_[a], pn_[a]) += q;
      if (pm_[a] != pn_[a]) (*K)(pn_[a], pm_[a]) += q;
    }
  }
}

void ReducedStVK::stiffness_derivative(const Eigen::Ref<const Eigen::VectorXd>& p, const Eigen::Ref<const Eigen::VectorXd>& v,
                                       Eigen::MatrixXd& H, Eigen::VectorXd& pairs) const {
  if (p.size() != r_) throw_shape("p", "(" + std::to_string(r_) + ",)", "(" + std::to_string(p.size()) + ",)");
  if (v.size() != r_) throw_shape("v", "(" + std::to_string(r_) + ",)", "(" + std::to_string(v.size()) + ",)");
  if (pairs.size() != 3 * np_) pairs.resize(3 * np_);
  auto dpi = pairs.segment(0, np_), y = pairs.segment(np_, np_), z = pairs.segment(2 * np_, np_);
  for (Index a = 0; a < np_; ++a) {
    const Index m = pm_[a], n = pn_[a];
    dpi[a] = (m == n ? 1.0 : 2.0) * (p[m] * v[n] + v[m] * p[n]);
  }
  y.noalias() = T_ * dpi;
  z.noalias() = S_ * v;
  H.setZero(r_, r_);
  for (Index a = 0; a < np_; ++a) {
    const double q = 6.0 * (z[a] + y[a]);
    H(pm_[a], pn_[a]) += q;
    if (pm_[a] != pn_[a]) H(pn_[a], pm_[a]) += q;
  }
}

double ReducedStVK::energy(const Eigen::Ref<const Eigen::VectorXd>& p) const {
  // Homogeneous parts: W = p'Pp/2 + S[p,p,p] + T[p,p,p,p]/2 = p'(P/2 + Z + Y/2) p.
  Eigen::VectorXd pairs(3 * np_);
  auto pi = pairs.segment(0, np_);
  if (p.size() != r_) throw_shape("p", "(" + std::to_string(r_) + ",)", "(" + std::to_string(p.size()) + ",)");
  for (Index a = 0; a < np_; ++a) pi[a] = (pm_[a] == pn_[a] ? 1.0 : 2.0) * p[pm_[a]] * p[pn_[a]];
  const Eigen::VectorXd y = T_ * pi, z = S_ * p;
  return 0.5 * p.dot(P_ * p) + pi.dot(z) + 0.5 * pi.dot(y);
}

void ReducedStVK::dynamics(const Eigen::Ref<const Eigen::VectorXd>& z, double, Eigen::Ref<Eigen::VectorXd> F) const {
  const auto p = z.head(r_), v = z.tail(r_);
  Eigen::VectorXd R(r_), pairs(3 * np_);
  Eigen::MatrixXd K(r_, r_);
  evaluate(p, R, &K, pairs);
  F.head(r_) = v;
  F.tail(r_) = -alpha_ * v - Minv_ * (beta_ * (K * v) + R);
}

void ReducedStVK::jacobian(const Eigen::Ref<const Eigen::VectorXd>& z, double, Eigen::Ref<RowMatrix> J) const {
  const auto p = z.head(r_), v = z.tail(r_);
  Eigen::VectorXd R(r_), pairs(3 * np_);
  Eigen::MatrixXd K(r_, r_), H(r_, r_);
  evaluate(p, R, &K, pairs);
  J.setZero();
  J.topRightCorner(r_, r_).setIdentity();
  if (damping_hessian_ && beta_ != 0) {
    stiffness_derivative(p, v, H, pairs);
    J.bottomLeftCorner(r_, r_) = -Minv_ * (K + beta_ * H);
  } else {
    J.bottomLeftCorner(r_, r_) = -Minv_ * K;
  }
  J.bottomRightCorner(r_, r_) = -Minv_ * (beta_ * K);
  J.bottomRightCorner(r_, r_).diagonal().array() -= alpha_;
}

std::unique_ptr<ModelData> ReducedStVK::create_data() const {
  auto d = std::make_unique<ReducedStVKData>();
  const Index n = state_dim();
  for (auto* v : {&d->k1, &d->k2, &d->k3, &d->k4, &d->tmp, &d->Bw}) v->setZero(n);
  for (auto* v : {&d->p, &d->v, &d->a, &d->pn, &d->vn, &d->an, &d->R, &d->res, &d->dp}) v->setZero(r_);
  d->pairs.setZero(3 * np_);
  d->K.setZero(r_, r_);
  d->H.setZero(r_, r_);
  d->A.setZero(r_, r_);
  d->ldlt = Eigen::LDLT<Eigen::MatrixXd>(r_);
  return d;
}

void ReducedStVK::step(const Eigen::Ref<const Eigen::VectorXd>& z, double, double h,
                       const Eigen::Ref<const Eigen::VectorXd>& w, Eigen::Ref<Eigen::VectorXd> z_next,
                       ModelData& data) const {
  auto& d = static_cast<ReducedStVKData&>(data);
  const double nb = 0.25, ng = 0.5, c0 = 1.0 / (nb * h * h), c1 = ng / (nb * h);
  d.pn = z.head(r_);
  d.vn = z.tail(r_);
  // Consistent acceleration at the start: Mr a = w - D v - R.
  evaluate(d.pn, d.R, &d.K, d.pairs);
  d.res.noalias() = w - d.R - beta_ * (d.K * d.vn);
  d.an.noalias() = Minv_ * d.res;
  d.an -= alpha_ * d.vn;
  d.p = d.pn + h * d.vn + h * h * (0.5 - nb) * d.an;
  double r0 = -1;
  for (int it = 0; it < max_it_ + 1; ++it) {
    d.a = c0 * (d.p - d.pn) - d.vn / (nb * h) - (0.5 / nb - 1.0) * d.an;
    d.v = d.vn + h * ((1.0 - ng) * d.an + ng * d.a);
    evaluate(d.p, d.R, &d.K, d.pairs);
    d.tmp.head(r_).noalias() = Mr_ * (d.a + alpha_ * d.v);
    d.res.noalias() = w - d.R - d.tmp.head(r_) - beta_ * (d.K * d.v);
    const double rn = d.res.norm();
    if (!std::isfinite(rn)) throw std::domain_error("reduced Newmark step produced a non-finite residual: reduce dt or the forces");
    if (r0 < 0) r0 = std::max(rn, 1e-300);
    if (it == max_it_) {
      if (max_it_ > 1 && rn > tol_ * std::max(r0, w.norm() + d.R.norm()) && rn > 1e-12)
        throw std::runtime_error("reduced Newmark step: Newton did not converge in " + std::to_string(max_it_) +
                                 " iterations: reduce dt or the forces");
      break;
    }
    if (it > 0 && rn <= tol_ * std::max(r0, w.norm() + d.R.norm())) break;
    d.A = (1.0 + c1 * beta_) * d.K + (c0 + c1 * alpha_) * Mr_;
    if (damping_hessian_ && beta_ != 0) {
      stiffness_derivative(d.p, d.v, d.H, d.pairs);
      d.A += beta_ * d.H;
    }
    d.ldlt.compute(d.A);
    d.dp = d.ldlt.solve(d.res);
    d.p += d.dp;
    if (max_it_ == 1) {  // one linearized implicit step (Barbic & James): update and stop
      d.a = c0 * (d.p - d.pn) - d.vn / (nb * h) - (0.5 / nb - 1.0) * d.an;
      d.v = d.vn + h * ((1.0 - ng) * d.an + ng * d.a);
      break;
    }
  }
  z_next.head(r_) = d.p;
  z_next.tail(r_) = d.v;
}

}  // namespace directable
