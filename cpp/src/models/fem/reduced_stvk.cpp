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
    : r_(U.cols()), n_pairs_(U.cols() * (U.cols() + 1) / 2), alpha_(alpha < 0 ? full.alpha() : alpha),
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
  reduced_mass_ = U.transpose() * full.mass().asDiagonal() * U;
  check_positive_definite("U' M U (the basis columns must be linearly independent)", reduced_mass_);
  reduced_mass_inverse_ = reduced_mass_.ldlt().solve(Eigen::MatrixXd::Identity(r_, r_));
  reduced_mass_inverse_ = 0.5 * (reduced_mass_inverse_ + reduced_mass_inverse_.transpose()).eval();
  control_.setZero(2 * r_, r_);
  control_.bottomRows(r_) = reduced_mass_inverse_;
  index_pairs();
  Eigen::MatrixXd linear, cubic, quartic;
  accumulate_elements(full, U, linear, cubic, quartic, progress);
  symmetrize(linear, cubic, quartic);
}

void ReducedStVK::index_pairs() {
  pair_index_.setConstant(r_, r_, -1);
  pair_first_.resize(n_pairs_);
  pair_second_.resize(n_pairs_);
  for (Index m = 0, a = 0; m < r_; ++m)
    for (Index n = m; n < r_; ++n, ++a) {
      pair_index_(m, n) = int(a);
      pair_first_[a] = int(m);
      pair_second_[a] = int(n);
    }
}

// Element by element, in chunks: features of L_m = sym(G_m) and of
// N_mn = sym(G_m' G_n), then the coefficient sums as matrix products.
void ReducedStVK::accumulate_elements(const StVKFEM& full, const Eigen::Ref<const Eigen::MatrixXd>& U,
                                      Eigen::MatrixXd& linear, Eigen::MatrixXd& cubic, Eigen::MatrixXd& quartic,
                                      const ProgressFn* progress) const {
  const TetMesh& mesh = full.mesh();
  const Index E = mesh.num_tets(), C = std::min<Index>(E, 256);
  const double mu = full.mu(), la = full.lambda();
  Eigen::MatrixXd XL(r_, 6 * C), XN(n_pairs_, 6 * C), tL(r_, C), tN(n_pairs_, C);
  linear.setZero(r_, r_);
  cubic.setZero(r_, n_pairs_);
  quartic.setZero(n_pairs_, n_pairs_);
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
      for (Index a = 0; a < n_pairs_; ++a) {
        const Mat3 GG = G[pair_first_[a]].transpose() * G[pair_second_[a]];
        const Mat3 Nmn = 0.5 * (GG + GG.transpose());
        sym6(Nmn, s, XN.row(a).segment<6>(6 * k));
        tN(a, k) = s * Nmn.trace();
      }
    }
    linear.noalias() += mu * XL * XL.transpose() + 0.5 * la * tL * tL.transpose();
    cubic.noalias() += mu * XL * XN.transpose() + 0.5 * la * tL * tN.transpose();
    quartic.noalias() += 0.5 * mu * XN * XN.transpose() + 0.25 * la * tN * tN.transpose();
    if (!throttle.report(e0 + nc)) throw Cancelled();
  }
  throttle.finish(E);
}

// Full symmetrization over index permutations.
void ReducedStVK::symmetrize(const Eigen::MatrixXd& linear, const Eigen::MatrixXd& cubic,
                             const Eigen::MatrixXd& quartic) {
  linear_ = linear + linear.transpose();
  cubic_.resize(n_pairs_, r_);
  for (Index a = 0; a < n_pairs_; ++a)
    for (Index k = 0; k < r_; ++k) {
      const Index m = pair_first_[a], n = pair_second_[a];
      cubic_(a, k) = (cubic(k, a) + cubic(m, pair(n, k)) + cubic(n, pair(m, k))) / 3.0;
    }
  quartic_.resize(n_pairs_, n_pairs_);
  for (Index a = 0; a < n_pairs_; ++a)
    for (Index b = 0; b < n_pairs_; ++b) {
      const Index m = pair_first_[a], n = pair_second_[a], k = pair_first_[b], l = pair_second_[b];
      quartic_(a, b) = (quartic(a, b) + quartic(pair(m, k), pair(n, l)) + quartic(pair(m, l), pair(n, k))) / 3.0;
    }
}

void ReducedStVK::set_newton(int max_iterations, double tolerance) {
  if (max_iterations < 1) throw std::invalid_argument("max_iterations must be >= 1, got " + std::to_string(max_iterations));
  check_positive("tolerance", tolerance);
  max_iterations_ = max_iterations;
  tolerance_ = tolerance;
}

void ReducedStVK::unpack(const Eigen::VectorXd& y, double scale, Eigen::MatrixXd& out) const {
  for (Index a = 0; a < n_pairs_; ++a) {
    out(pair_first_[a], pair_second_[a]) += scale * y[a];
    if (pair_first_[a] != pair_second_[a]) out(pair_second_[a], pair_first_[a]) += scale * y[a];
  }
}

void ReducedStVK::evaluate(const Eigen::Ref<const Eigen::VectorXd>& p, Eigen::Ref<Eigen::VectorXd> R,
                           Eigen::MatrixXd* K, Eigen::VectorXd& pairs) const {
  if (p.size() != r_) throw_shape("p", "(" + std::to_string(r_) + ",)", "(" + std::to_string(p.size()) + ",)");
  if (pairs.size() != 3 * n_pairs_) pairs.resize(3 * n_pairs_);
  auto pi = pairs.segment(0, n_pairs_), y = pairs.segment(n_pairs_, n_pairs_), z = pairs.segment(2 * n_pairs_, n_pairs_);
  for (Index a = 0; a < n_pairs_; ++a) pi[a] = (pair_first_[a] == pair_second_[a] ? 1.0 : 2.0) * p[pair_first_[a]] * p[pair_second_[a]];
  y.noalias() = quartic_ * pi;
  z.noalias() = cubic_ * p;
  R.noalias() = linear_ * p;
  for (Index a = 0; a < n_pairs_; ++a) {
    const double q = 3.0 * z[a] + 2.0 * y[a];
    const Index m = pair_first_[a], n = pair_second_[a];
    R[m] += q * p[n];
    if (m != n) R[n] += q * p[m];
  }
  if (K) {
    *K = linear_;
    for (Index a = 0; a < n_pairs_; ++a) {
      const double q = 6.0 * (z[a] + y[a]);
      (*K)(pair_first_[a], pair_second_[a]) += q;
      if (pair_first_[a] != pair_second_[a]) (*K)(pair_second_[a], pair_first_[a]) += q;
    }
  }
}

void ReducedStVK::stiffness_derivative(const Eigen::Ref<const Eigen::VectorXd>& p, const Eigen::Ref<const Eigen::VectorXd>& v,
                                       Eigen::MatrixXd& H, Eigen::VectorXd& pairs) const {
  if (p.size() != r_) throw_shape("p", "(" + std::to_string(r_) + ",)", "(" + std::to_string(p.size()) + ",)");
  if (v.size() != r_) throw_shape("v", "(" + std::to_string(r_) + ",)", "(" + std::to_string(v.size()) + ",)");
  if (pairs.size() != 3 * n_pairs_) pairs.resize(3 * n_pairs_);
  auto dpi = pairs.segment(0, n_pairs_), y = pairs.segment(n_pairs_, n_pairs_), z = pairs.segment(2 * n_pairs_, n_pairs_);
  for (Index a = 0; a < n_pairs_; ++a) {
    const Index m = pair_first_[a], n = pair_second_[a];
    dpi[a] = (m == n ? 1.0 : 2.0) * (p[m] * v[n] + v[m] * p[n]);
  }
  y.noalias() = quartic_ * dpi;
  z.noalias() = cubic_ * v;
  H.setZero(r_, r_);
  for (Index a = 0; a < n_pairs_; ++a) {
    const double q = 6.0 * (z[a] + y[a]);
    H(pair_first_[a], pair_second_[a]) += q;
    if (pair_first_[a] != pair_second_[a]) H(pair_second_[a], pair_first_[a]) += q;
  }
}

double ReducedStVK::energy(const Eigen::Ref<const Eigen::VectorXd>& p) const {
  // Homogeneous parts: W = p'Pp/2 + S[p,p,p] + T[p,p,p,p]/2 = p'(P/2 + Z + Y/2) p.
  Eigen::VectorXd pairs(3 * n_pairs_);
  auto pi = pairs.segment(0, n_pairs_);
  if (p.size() != r_) throw_shape("p", "(" + std::to_string(r_) + ",)", "(" + std::to_string(p.size()) + ",)");
  for (Index a = 0; a < n_pairs_; ++a) pi[a] = (pair_first_[a] == pair_second_[a] ? 1.0 : 2.0) * p[pair_first_[a]] * p[pair_second_[a]];
  const Eigen::VectorXd y = quartic_ * pi, z = cubic_ * p;
  return 0.5 * p.dot(linear_ * p) + pi.dot(z) + 0.5 * pi.dot(y);
}

void ReducedStVK::dynamics(const Eigen::Ref<const Eigen::VectorXd>& z, double, Eigen::Ref<Eigen::VectorXd> F) const {
  const auto p = z.head(r_), v = z.tail(r_);
  Eigen::VectorXd R(r_), pairs(3 * n_pairs_);
  Eigen::MatrixXd K(r_, r_);
  evaluate(p, R, &K, pairs);
  F.head(r_) = v;
  F.tail(r_) = -alpha_ * v - reduced_mass_inverse_ * (beta_ * (K * v) + R);
}

void ReducedStVK::jacobian(const Eigen::Ref<const Eigen::VectorXd>& z, double, Eigen::Ref<RowMatrix> J) const {
  const auto p = z.head(r_), v = z.tail(r_);
  Eigen::VectorXd R(r_), pairs(3 * n_pairs_);
  Eigen::MatrixXd K(r_, r_), H(r_, r_);
  evaluate(p, R, &K, pairs);
  J.setZero();
  J.topRightCorner(r_, r_).setIdentity();
  if (damping_hessian_ && beta_ != 0) {
    stiffness_derivative(p, v, H, pairs);
    J.bottomLeftCorner(r_, r_) = -reduced_mass_inverse_ * (K + beta_ * H);
  } else {
    J.bottomLeftCorner(r_, r_) = -reduced_mass_inverse_ * K;
  }
  J.bottomRightCorner(r_, r_) = -reduced_mass_inverse_ * (beta_ * K);
  J.bottomRightCorner(r_, r_).diagonal().array() -= alpha_;
}

std::unique_ptr<ModelData> ReducedStVK::create_data() const {
  auto d = std::make_unique<ReducedStVKData>();
  const Index n = state_dim();
  for (auto* v : {&d->k1, &d->k2, &d->k3, &d->k4, &d->tmp, &d->Bw}) v->setZero(n);
  for (auto* v : {&d->position, &d->velocity, &d->acceleration, &d->position_prev, &d->velocity_prev,
                  &d->acceleration_prev, &d->forces, &d->residual, &d->correction, &d->mass_term})
    v->setZero(r_);
  d->pairs.setZero(3 * n_pairs_);
  d->stiffness.setZero(r_, r_);
  d->stiffness_change.setZero(r_, r_);
  d->system.setZero(r_, r_);
  d->ldlt.compute(Eigen::MatrixXd::Identity(r_, r_));  // sized, with its info set (a size-only LDLT leaves it unset)
  return d;
}

void ReducedStVK::step(const Eigen::Ref<const Eigen::VectorXd>& z, double, double h,
                       const Eigen::Ref<const Eigen::VectorXd>& w, Eigen::Ref<Eigen::VectorXd> z_next,
                       ModelData& data) const {
  auto& d = static_cast<ReducedStVKData&>(data);
  const double nb = 0.25, ng = 0.5, c0 = 1.0 / (nb * h * h), c1 = ng / (nb * h);
  d.position_prev = z.head(r_);
  d.velocity_prev = z.tail(r_);
  // Consistent acceleration at the start: Mr a = w - D v - R.
  evaluate(d.position_prev, d.forces, &d.stiffness, d.pairs);
  d.residual.noalias() = w - d.forces - beta_ * (d.stiffness * d.velocity_prev);
  d.acceleration_prev.noalias() = reduced_mass_inverse_ * d.residual;
  d.acceleration_prev -= alpha_ * d.velocity_prev;
  d.position = d.position_prev + h * d.velocity_prev + h * h * (0.5 - nb) * d.acceleration_prev;
  double r0 = -1;
  for (int it = 0; it < max_iterations_ + 1; ++it) {
    d.acceleration = c0 * (d.position - d.position_prev) - d.velocity_prev / (nb * h) - (0.5 / nb - 1.0) * d.acceleration_prev;
    d.velocity = d.velocity_prev + h * ((1.0 - ng) * d.acceleration_prev + ng * d.acceleration);
    evaluate(d.position, d.forces, &d.stiffness, d.pairs);
    d.mass_term.noalias() = reduced_mass_ * (d.acceleration + alpha_ * d.velocity);
    d.residual.noalias() = w - d.forces - d.mass_term - beta_ * (d.stiffness * d.velocity);
    const double rn = d.residual.norm();
    if (!std::isfinite(rn)) throw std::domain_error("reduced Newmark step produced a non-finite residual: reduce dt or the forces");
    if (r0 < 0) r0 = std::max(rn, 1e-300);
    if (it == max_iterations_) {
      if (max_iterations_ > 1 && rn > tolerance_ * std::max(r0, w.norm() + d.forces.norm()) && rn > 1e-12)
        throw std::runtime_error("reduced Newmark step: Newton did not converge in " + std::to_string(max_iterations_) +
                                 " iterations: reduce dt or the forces");
      break;
    }
    if (it > 0 && rn <= tolerance_ * std::max(r0, w.norm() + d.forces.norm())) break;
    d.system = (1.0 + c1 * beta_) * d.stiffness + (c0 + c1 * alpha_) * reduced_mass_;
    if (damping_hessian_ && beta_ != 0) {
      stiffness_derivative(d.position, d.velocity, d.stiffness_change, d.pairs);
      d.system += beta_ * d.stiffness_change;
    }
    d.ldlt.compute(d.system);
    d.correction = d.ldlt.solve(d.residual);
    d.position += d.correction;
    if (max_iterations_ == 1) {  // one linearized implicit step (Barbic & James): update and stop
      d.acceleration = c0 * (d.position - d.position_prev) - d.velocity_prev / (nb * h) - (0.5 / nb - 1.0) * d.acceleration_prev;
      d.velocity = d.velocity_prev + h * ((1.0 - ng) * d.acceleration_prev + ng * d.acceleration);
      break;
    }
  }
  z_next.head(r_) = d.position;
  z_next.tail(r_) = d.velocity;
}

}  // namespace directable
