#include "directable/models/fem/fem.hpp"
#include "directable/core/progress.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <string>

namespace directable {

namespace {
using Mat3 = Eigen::Matrix3d;
using Vec3 = Eigen::Vector3d;

// Displacement gradient G = sum_a u_a grad N_a' of element e.
inline Mat3 disp_gradient(const Eigen::Ref<const Eigen::VectorXd>& u, const IndexMatrix& T, Index e,
                          const Eigen::Matrix<double, 4, 3>& g) {
  Mat3 G = Mat3::Zero();
  for (int a = 0; a < 4; ++a) G += u.segment<3>(3 * T(e, a)) * g.row(a);
  return G;
}
}  // namespace

TetMesh::TetMesh(const Eigen::Ref<const RowMatrix>& vertices, const Eigen::Ref<const IndexMatrix>& tets)
    : X_(vertices), T_(tets) {
  if (X_.cols() != 3 || X_.rows() < 4) throw_shape("vertices", "(V, 3) with V >= 4", shape_str(X_.rows(), X_.cols()));
  if (T_.cols() != 4 || T_.rows() < 1) throw_shape("tets", "(E, 4) with E >= 1", shape_str(T_.rows(), T_.cols()));
  check_finite("vertices", X_.data(), X_.size());
  const Index V = X_.rows(), E = T_.rows();
  std::vector<char> used(V, 0);
  for (Index e = 0; e < E; ++e)
    for (int a = 0; a < 4; ++a) {
      const Index i = T_(e, a);
      if (i < 0 || i >= V)
        throw std::invalid_argument("tets[" + std::to_string(e) + "] refers to vertex " + std::to_string(i) +
                                    ", expected an index in [0, " + std::to_string(V) + ")");
      used[i] = 1;
    }
  for (Index i = 0; i < V; ++i)
    if (!used[i])
      throw std::invalid_argument("vertex " + std::to_string(i) + " is referenced by no tetrahedron (unreferenced vertices are not allowed)");
  // Size scale for the degeneracy test: bounding-box diagonal.
  const double h = (X_.colwise().maxCoeff() - X_.colwise().minCoeff()).norm();
  vol_.resize(E);
  grad_.resize(E);
  for (Index e = 0; e < E; ++e) {
    Mat3 Dm;
    for (int c = 0; c < 3; ++c) Dm.col(c) = (X_.row(T_(e, c + 1)) - X_.row(T_(e, 0))).transpose();
    const double det = Dm.determinant();
    double lmax = 0;
    for (int c = 0; c < 3; ++c) lmax = std::max(lmax, Dm.col(c).norm());
    if (!(std::abs(det) > 1e-12 * lmax * lmax * lmax) || !(lmax > 1e-12 * h))
      throw std::domain_error("tets[" + std::to_string(e) + "] is degenerate (zero volume)");
    if (det < 0)
      throw std::domain_error("tets[" + std::to_string(e) + "] is inverted (negative volume " + std::to_string(det / 6) +
                              "): expected vertices ordered so that (x1-x0, x2-x0, x3-x0) is right-handed");
    vol_[e] = det / 6.0;
    const Mat3 Dinv = Dm.inverse();  // rows: grad N_1..3
    grad_[e].bottomRows<3>() = Dinv;
    grad_[e].row(0) = -Dinv.colwise().sum();
  }
}

StVKFEM::StVKFEM(const TetMesh& mesh, double young, double poisson, double density, const std::vector<Index>& fixed,
                 double alpha, double beta)
    : mesh_(mesh), density_(density), alpha_(alpha), beta_(beta), fixed_(fixed) {
  check_positive("young", young);
  check_positive("density", density);
  if (!(poisson > -1.0 && poisson < 0.5))
    throw std::domain_error("poisson must lie in (-1, 0.5), got " + std::to_string(poisson));
  if (!(alpha >= 0) || !(beta >= 0) || !std::isfinite(alpha + beta))
    throw std::domain_error("damping alpha and beta must be finite and >= 0, got " + std::to_string(alpha) + ", " +
                            std::to_string(beta));
  mu_ = young / (2.0 * (1.0 + poisson));
  lambda_ = young * poisson / ((1.0 + poisson) * (1.0 - 2.0 * poisson));
  const Index V = mesh_.num_vertices(), E = mesh_.num_tets(), N = 3 * V;
  mask_.assign(N, 0);
  for (Index i : fixed_) {
    if (i < 0 || i >= V)
      throw std::invalid_argument("fixed vertex " + std::to_string(i) + " out of range, expected [0, " +
                                  std::to_string(V) + ")");
    mask_[3 * i] = mask_[3 * i + 1] = mask_[3 * i + 2] = 1;
  }
  mass_.setZero(N);
  const auto& T = mesh_.tets();
  for (Index e = 0; e < E; ++e)
    for (int a = 0; a < 4; ++a) mass_.segment<3>(3 * T(e, a)).array() += density * mesh_.volumes()[e] / 4.0;
  // Pattern: every vertex pair sharing a tet, full 3x3 blocks.
  std::vector<Eigen::Triplet<double, int>> trip;
  trip.reserve(E * 144);
  for (Index e = 0; e < E; ++e)
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b)
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j) trip.emplace_back(int(3 * T(e, a) + i), int(3 * T(e, b) + j), 0.0);
  pattern_.resize(N, N);
  pattern_.setFromTriplets(trip.begin(), trip.end());
  pattern_.makeCompressed();
  slot_.resize(E * 144);
  for (Index e = 0; e < E; ++e)
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b)
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j) {
            const int row = int(3 * T(e, a) + i), col = int(3 * T(e, b) + j);
            const int* begin = pattern_.innerIndexPtr() + pattern_.outerIndexPtr()[col];
            const int* end = pattern_.innerIndexPtr() + pattern_.outerIndexPtr()[col + 1];
            slot_[e * 144 + (3 * a + i) * 12 + (3 * b + j)] = int(std::lower_bound(begin, end, row) - pattern_.innerIndexPtr());
          }
}

SparseMatrix StVKFEM::pattern() const { return pattern_; }

double StVKFEM::energy(const Eigen::Ref<const Eigen::VectorXd>& u) const {
  if (u.size() != dofs()) throw_shape("u", "(" + std::to_string(dofs()) + ",)", "(" + std::to_string(u.size()) + ",)");
  double W = 0;
  for (Index e = 0; e < mesh_.num_tets(); ++e) {
    const Mat3 G = disp_gradient(u, mesh_.tets(), e, mesh_.gradients(e));
    const Mat3 E = 0.5 * (G + G.transpose() + G.transpose() * G);
    const double tr = E.trace();
    W += mesh_.volumes()[e] * (mu_ * E.squaredNorm() + 0.5 * lambda_ * tr * tr);
  }
  return W;
}

void StVKFEM::internal_forces(const Eigen::Ref<const Eigen::VectorXd>& u, Eigen::Ref<Eigen::VectorXd> f) const {
  if (u.size() != dofs()) throw_shape("u", "(" + std::to_string(dofs()) + ",)", "(" + std::to_string(u.size()) + ",)");
  f.setZero();
  const auto& T = mesh_.tets();
  for (Index e = 0; e < mesh_.num_tets(); ++e) {
    const auto g = mesh_.gradients(e);
    const Mat3 G = disp_gradient(u, T, e, g);
    const Mat3 F = Mat3::Identity() + G;
    const Mat3 E = 0.5 * (G + G.transpose() + G.transpose() * G);
    const Mat3 S = 2.0 * mu_ * E + lambda_ * E.trace() * Mat3::Identity();
    const Mat3 P = mesh_.volumes()[e] * F * S;
    for (int a = 0; a < 4; ++a) f.segment<3>(3 * T(e, a)) += P * g.row(a).transpose();
  }
}

void StVKFEM::tangent_stiffness(const Eigen::Ref<const Eigen::VectorXd>& u, SparseMatrix& K) const {
  if (u.size() != dofs()) throw_shape("u", "(" + std::to_string(dofs()) + ",)", "(" + std::to_string(u.size()) + ",)");
  if (K.nonZeros() != pattern_.nonZeros() || K.rows() != dofs()) K = pattern_;
  double* val = K.valuePtr();
  std::fill(val, val + K.nonZeros(), 0.0);
  const auto& T = mesh_.tets();
  for (Index e = 0; e < mesh_.num_tets(); ++e) {
    const auto g = mesh_.gradients(e);
    const double vol = mesh_.volumes()[e];
    const Mat3 G = disp_gradient(u, T, e, g);
    const Mat3 F = Mat3::Identity() + G;
    const Mat3 E = 0.5 * (G + G.transpose() + G.transpose() * G);
    const Mat3 S = 2.0 * mu_ * E + lambda_ * E.trace() * Mat3::Identity();
    const int* slot = slot_.data() + e * 144;
    for (int b = 0; b < 4; ++b)
      for (int j = 0; j < 3; ++j) {
        // dF for a unit displacement of dof (b, j): e_j grad N_b'
        Mat3 dF = Mat3::Zero();
        dF.row(j) = g.row(b);
        const Mat3 FtdF = F.transpose() * dF;
        const Mat3 dE = 0.5 * (FtdF + FtdF.transpose());
        const Mat3 dS = 2.0 * mu_ * dE + lambda_ * dE.trace() * Mat3::Identity();
        const Mat3 dP = vol * (dF * S + F * dS);
        for (int a = 0; a < 4; ++a) {
          const Vec3 col = dP * g.row(a).transpose();
          for (int i = 0; i < 3; ++i) val[slot[(3 * a + i) * 12 + 3 * b + j]] += col[i];
        }
      }
  }
}

NewmarkFEM::NewmarkFEM(const StVKFEM& model, double dt, int max_iterations, double tolerance)
    : model_(model), dt_(dt), max_it_(max_iterations), tol_(tolerance) {
  check_positive("dt", dt);
  if (max_iterations < 1) throw std::invalid_argument("max_iterations must be >= 1");
  check_positive("tolerance", tolerance);
  if (model.fixed().empty())
    throw std::invalid_argument("fixed must name at least one vertex: an unconstrained body has a singular stiffness");
  const Index N = model.dofs();
  for (auto* x : {&u_, &v_, &a_, &f_, &r_, &du_, &un_, &vn_, &an_}) x->setZero(N);
  K_ = model.pattern();
  A_ = K_;
  diag_.assign(N, -1);
  for (int c = 0; c < K_.outerSize(); ++c)
    for (int k = K_.outerIndexPtr()[c]; k < K_.outerIndexPtr()[c + 1]; ++k)
      if (K_.innerIndexPtr()[k] == c) diag_[c] = k;
}

void NewmarkFEM::set_state(const Eigen::Ref<const Eigen::VectorXd>& u, const Eigen::Ref<const Eigen::VectorXd>& v,
                           const Eigen::Ref<const Eigen::VectorXd>& a) {
  const Index N = model_.dofs();
  const std::string e = "(" + std::to_string(N) + ",)";
  if (u.size() != N) throw_shape("u", e, "(" + std::to_string(u.size()) + ",)");
  if (v.size() != N) throw_shape("v", e, "(" + std::to_string(v.size()) + ",)");
  check_finite("u", u.data(), N);
  check_finite("v", v.data(), N);
  u_ = u;
  v_ = v;
  for (Index i = 0; i < N; ++i)
    if (model_.fixed_mask()[i]) u_[i] = v_[i] = 0.0;
  if (a.size() == 0) {
    a_.setZero();  // consistent acceleration computed on the first step
    an_.setConstant(std::nan(""));
    return;
  }
  if (a.size() != N) throw_shape("a", e, "(" + std::to_string(a.size()) + ",)");
  check_finite("a", a.data(), N);
  a_ = a;
  for (Index i = 0; i < N; ++i)
    if (model_.fixed_mask()[i]) a_[i] = 0.0;
  an_ = a_;
}

void NewmarkFEM::constrain(SparseMatrix& A) const {
  const auto& mask = model_.fixed_mask();
  for (int c = 0; c < A.outerSize(); ++c)
    for (SparseMatrix::InnerIterator it(A, c); it; ++it)
      if (mask[it.row()] || mask[it.col()]) it.valueRef() = (it.row() == it.col()) ? 1.0 : 0.0;
}

void NewmarkFEM::factor(const SparseMatrix& A) {
  if (!analyzed_) {
    ldlt_.analyzePattern(A);
    analyzed_ = true;
  }
  ldlt_.factorize(A);
  if (ldlt_.info() != Eigen::Success) throw std::runtime_error("sparse factorization failed (singular system matrix)");
}

int NewmarkFEM::step(const Eigen::Ref<const Eigen::VectorXd>& f_ext) {
  const Index N = model_.dofs();
  if (f_ext.size() != N) throw_shape("f_ext", "(" + std::to_string(N) + ",)", "(" + std::to_string(f_ext.size()) + ",)");
  check_finite("f_ext", f_ext.data(), N);
  const auto& M = model_.mass();
  const auto& mask = model_.fixed_mask();
  const double al = model_.alpha(), be = model_.beta();
  const double nb = 0.25, ng = 0.5, h = dt_;
  if (!an_.allFinite()) {
    // Consistent initial acceleration: M a = f_ext - D v - f(u).
    model_.internal_forces(u_, f_);
    model_.tangent_stiffness(u_, K_);
    r_ = f_ext - f_ - al * M.cwiseProduct(v_) - be * (K_ * v_);
    a_ = r_.cwiseQuotient(M);
    for (Index i = 0; i < N; ++i)
      if (mask[i]) a_[i] = 0;
    an_.setZero();
  }
  un_ = u_;
  vn_ = v_;
  an_ = a_;
  // Predictor: u = u_n + h v_n (keeps a bounded first residual).
  u_ = un_ + h * vn_ + h * h * (0.5 - nb) * an_;
  const double c0 = 1.0 / (nb * h * h), c1 = ng / (nb * h);
  double r0 = -1;
  for (int it = 1; it <= max_it_; ++it) {
    a_ = c0 * (u_ - un_) - vn_ / (nb * h) - (0.5 / nb - 1.0) * an_;
    v_ = vn_ + h * ((1.0 - ng) * an_ + ng * a_);
    model_.internal_forces(u_, f_);
    model_.tangent_stiffness(u_, K_);
    r_ = f_ext - f_ - M.cwiseProduct(a_) - al * M.cwiseProduct(v_) - be * (K_ * v_);
    for (Index i = 0; i < N; ++i)
      if (mask[i]) r_[i] = 0;
    const double rn = r_.norm();
    if (!std::isfinite(rn)) throw std::domain_error("Newton produced a non-finite residual: reduce dt or the forces");
    if (r0 < 0) r0 = std::max(rn, 1e-300);
    const double scale = std::max(f_ext.norm(), (M.cwiseProduct(an_)).norm());
    if (it > 1 && (rn <= tol_ * r0 || rn <= 1e-12 * std::max(1.0, scale))) return it - 1;
    // A = c0 M + c1 (alpha M + beta K) + K (the damping-Hessian term is omitted)
    // same pattern as K: values written in place, no allocation
    const double sk = 1.0 + c1 * be, sm = c0 + c1 * al;
    for (Index k = 0; k < K_.nonZeros(); ++k) A_.valuePtr()[k] = sk * K_.valuePtr()[k];
    for (Index i = 0; i < N; ++i) A_.valuePtr()[diag_[i]] += sm * M[i];
    constrain(A_);
    factor(A_);
    du_ = ldlt_.solve(r_);
    u_ += du_;
    if (du_.norm() <= 1e-14 * std::max(1.0, u_.norm()) && it > 1) return it;
  }
  throw std::runtime_error("Newton did not converge in " + std::to_string(max_it_) +
                           " iterations (residual reduced only to " + std::to_string(r_.norm() / r0) +
                           " of its initial value): reduce dt or the forces");
}

RowMatrix NewmarkFEM::run(const Eigen::Ref<const RowMatrix>& forces, const ProgressFn* progress) {
  const Index N = model_.dofs();
  if (forces.cols() != N) throw_shape("forces", "(T, " + std::to_string(N) + ")", shape_str(forces.rows(), forces.cols()));
  RowMatrix out(forces.rows() + 1, N);
  out.row(0) = u_.transpose();
  ProgressThrottle throttle(progress, forces.rows());
  for (Index t = 0; t < forces.rows(); ++t) {
    step(forces.row(t).transpose());
    out.row(t + 1) = u_.transpose();
    if (!throttle.report(t + 1)) throw Cancelled();
  }
  throttle.finish(forces.rows());
  return out;
}

Eigen::VectorXd NewmarkFEM::static_solve(const Eigen::Ref<const Eigen::VectorXd>& f_ext, int max_iterations) {
  const Index N = model_.dofs();
  if (f_ext.size() != N) throw_shape("f_ext", "(" + std::to_string(N) + ",)", "(" + std::to_string(f_ext.size()) + ",)");
  check_finite("f_ext", f_ext.data(), N);
  const auto& mask = model_.fixed_mask();
  Eigen::VectorXd u = Eigen::VectorXd::Zero(N), f(N), r(N);
  const double r0 = std::max(f_ext.norm(), 1e-300);
  for (int it = 0; it < max_iterations; ++it) {
    model_.internal_forces(u, f);
    r = f_ext - f;
    for (Index i = 0; i < N; ++i)
      if (mask[i]) r[i] = 0;
    if (!r.allFinite()) throw std::domain_error("static solve produced a non-finite residual");
    if (r.norm() <= 1e-10 * r0) return u;
    model_.tangent_stiffness(u, K_);
    std::copy(K_.valuePtr(), K_.valuePtr() + K_.nonZeros(), A_.valuePtr());
    constrain(A_);
    factor(A_);
    u += ldlt_.solve(r);
  }
  throw std::runtime_error("static solve: Newton did not converge in " + std::to_string(max_iterations) +
                           " iterations (load too large?)");
}

}  // namespace directable
