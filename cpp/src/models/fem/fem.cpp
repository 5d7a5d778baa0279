#include "directable/models/fem/fem.hpp"
#include "directable/core/progress.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
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
    : vertices_(vertices), tets_(tets) {
  if (vertices_.cols() != 3 || vertices_.rows() < 4) throw_shape("vertices", "(V, 3) with V >= 4", shape_str(vertices_.rows(), vertices_.cols()));
  if (tets_.cols() != 4 || tets_.rows() < 1) throw_shape("tets", "(E, 4) with E >= 1", shape_str(tets_.rows(), tets_.cols()));
  check_finite("vertices", vertices_.data(), vertices_.size());
  const Index V = vertices_.rows(), E = tets_.rows();
  std::vector<char> used(V, 0);
  for (Index e = 0; e < E; ++e)
    for (int a = 0; a < 4; ++a) {
      const Index i = tets_(e, a);
      if (i < 0 || i >= V)
        throw std::invalid_argument("tets[" + std::to_string(e) + "] refers to vertex " + std::to_string(i) +
                                    ", expected an index in [0, " + std::to_string(V) + ")");
      used[i] = 1;
    }
  for (Index i = 0; i < V; ++i)
    if (!used[i])
      throw std::invalid_argument("vertex " + std::to_string(i) + " is referenced by no tetrahedron (unreferenced vertices are not allowed)");
  // Size scale for the degeneracy test: bounding-box diagonal.
  const double h = (vertices_.colwise().maxCoeff() - vertices_.colwise().minCoeff()).norm();
  volumes_.resize(E);
  gradients_.resize(E);
  for (Index e = 0; e < E; ++e) {
    Mat3 Dm;
    for (int c = 0; c < 3; ++c) Dm.col(c) = (vertices_.row(tets_(e, c + 1)) - vertices_.row(tets_(e, 0))).transpose();
    const double det = Dm.determinant();
    double lmax = 0;
    for (int c = 0; c < 3; ++c) lmax = std::max(lmax, Dm.col(c).norm());
    if (!(std::abs(det) > 1e-12 * lmax * lmax * lmax) || !(lmax > 1e-12 * h))
      throw std::domain_error("tets[" + std::to_string(e) + "] is degenerate (zero volume)");
    if (det < 0)
      throw std::domain_error("tets[" + std::to_string(e) + "] is inverted (negative volume " + std::to_string(det / 6) +
                              "): expected vertices ordered so that (x1-x0, x2-x0, x3-x0) is right-handed");
    volumes_[e] = det / 6.0;
    const Mat3 Dinv = Dm.inverse();  // rows: grad N_1..3
    gradients_[e].bottomRows<3>() = Dinv;
    gradients_[e].row(0) = -Dinv.colwise().sum();
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
  fixed_mask_.assign(N, 0);
  for (Index i : fixed_) {
    if (i < 0 || i >= V)
      throw std::invalid_argument("fixed vertex " + std::to_string(i) + " out of range, expected [0, " +
                                  std::to_string(V) + ")");
    fixed_mask_[3 * i] = fixed_mask_[3 * i + 1] = fixed_mask_[3 * i + 2] = 1;
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
  element_slots_.resize(E * 144);
  for (Index e = 0; e < E; ++e)
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b)
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j) {
            const int row = int(3 * T(e, a) + i), col = int(3 * T(e, b) + j);
            const int* begin = pattern_.innerIndexPtr() + pattern_.outerIndexPtr()[col];
            const int* end = pattern_.innerIndexPtr() + pattern_.outerIndexPtr()[col + 1];
            element_slots_[e * 144 + (3 * a + i) * 12 + (3 * b + j)] = int(std::lower_bound(begin, end, row) - pattern_.innerIndexPtr());
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
    const int* slot = element_slots_.data() + e * 144;
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

LinearSolver linear_solver_from_string(const std::string& name) {
  if (name == "direct") return LinearSolver::direct;
  if (name == "cg") return LinearSolver::cg;
  throw std::invalid_argument("linear_solver must be \"direct\" or \"cg\", got \"" + name + "\"");
}

void LinearSolverSettings::validate() const {
  if (!(cg_tolerance > 0 && cg_tolerance < 1))
    throw std::domain_error("cg_tolerance must lie in (0, 1), got " + std::to_string(cg_tolerance));
  if (cg_max_iterations < 1)
    throw std::invalid_argument("cg_max_iterations must be >= 1, got " + std::to_string(cg_max_iterations));
}

NewmarkFEM::NewmarkFEM(std::shared_ptr<const StVKFEM> model, double dt, int max_iterations, double tolerance,
                       const LinearSolverSettings& linear_solver)
    : model_(std::move(model)), dt_(dt), max_iterations_(max_iterations), tolerance_(tolerance),
      linear_(linear_solver) {
  if (!model_) throw std::invalid_argument("model must be a StVKFEM, got None");
  check_positive("dt", dt);
  if (max_iterations < 1) throw std::invalid_argument("max_iterations must be >= 1, got " + std::to_string(max_iterations));
  check_positive("tolerance", tolerance);
  linear_.validate();
  if (model_->fixed().empty())
    throw std::invalid_argument("fixed must name at least one vertex: an unconstrained body has a singular stiffness");
  const Index N = model_->dofs();
  for (auto* x : {&u_, &v_, &a_, &internal_, &residual_, &correction_, &u_prev_, &v_prev_, &a_prev_}) x->setZero(N);
  stiffness_ = model_->pattern();
  system_ = stiffness_;
  diagonal_slots_.assign(N, -1);
  for (int c = 0; c < stiffness_.outerSize(); ++c)
    for (int k = stiffness_.outerIndexPtr()[c]; k < stiffness_.outerIndexPtr()[c + 1]; ++k)
      if (stiffness_.innerIndexPtr()[k] == c) diagonal_slots_[c] = k;
  if (linear_.method == LinearSolver::cg) pcg_.resize(N);
}

void NewmarkFEM::set_state(const Eigen::Ref<const Eigen::VectorXd>& u, const Eigen::Ref<const Eigen::VectorXd>& v,
                           const Eigen::Ref<const Eigen::VectorXd>& a) {
  const Index N = model_->dofs();
  const std::string e = "(" + std::to_string(N) + ",)";
  if (u.size() != N) throw_shape("u", e, "(" + std::to_string(u.size()) + ",)");
  if (v.size() != N) throw_shape("v", e, "(" + std::to_string(v.size()) + ",)");
  check_finite("u", u.data(), N);
  check_finite("v", v.data(), N);
  u_ = u;
  v_ = v;
  for (Index i = 0; i < N; ++i)
    if (model_->fixed_mask()[i]) u_[i] = v_[i] = 0.0;
  if (a.size() == 0) {
    a_.setZero();  // consistent acceleration computed on the first step
    a_prev_.setConstant(std::nan(""));
    return;
  }
  if (a.size() != N) throw_shape("a", e, "(" + std::to_string(a.size()) + ",)");
  check_finite("a", a.data(), N);
  a_ = a;
  for (Index i = 0; i < N; ++i)
    if (model_->fixed_mask()[i]) a_[i] = 0.0;
  a_prev_ = a_;
}

void NewmarkFEM::constrain(SparseMatrix& A) const {
  const auto& mask = model_->fixed_mask();
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

void NewmarkFEM::solve_correction(double residual_norm, double r0) {
  if (linear_.method == LinearSolver::direct) {
    factor(system_);
    correction_ = ldlt_.solve(residual_);
    return;
  }
  block_jacobi_setup(system_, pcg_);
  correction_.setZero();
  const double target = std::max(linear_.cg_tolerance * residual_norm, 0.1 * tolerance_ * r0);
  const PCGResult res = pcg_block_jacobi(system_, residual_, correction_, target, linear_.cg_max_iterations, pcg_);
  last_cg_iterations_ += res.iterations;
  if (!res.converged) {
    char msg[320];
    std::snprintf(msg, sizeof msg,
                  "conjugate gradients did not converge in %d iterations (linear residual %.3g, %.3g of the Newton "
                  "residual %.3g; target %.3g): raise cg_max_iterations, reduce dt or use linear_solver=\"direct\"",
                  res.iterations, res.residual_norm, res.residual_norm / residual_norm, residual_norm, target);
    throw std::runtime_error(msg);
  }
}

int NewmarkFEM::step(const Eigen::Ref<const Eigen::VectorXd>& f_ext) {
  const Index N = model_->dofs();
  if (f_ext.size() != N) throw_shape("f_ext", "(" + std::to_string(N) + ",)", "(" + std::to_string(f_ext.size()) + ",)");
  check_finite("f_ext", f_ext.data(), N);
  return newton_step(f_ext);
}

// Consistent initial acceleration: M a = f_ext - D v - f(u).
void NewmarkFEM::make_acceleration_consistent(const Eigen::Ref<const Eigen::VectorXd>& f_ext) {
  const auto& M = model_->mass();
  const auto& mask = model_->fixed_mask();
  model_->internal_forces(u_, internal_);
  model_->tangent_stiffness(u_, stiffness_);
  residual_ = f_ext - internal_ - model_->alpha() * M.cwiseProduct(v_) - model_->beta() * (stiffness_ * v_);
  a_ = residual_.cwiseQuotient(M);
  for (Index i = 0; i < model_->dofs(); ++i)
    if (mask[i]) a_[i] = 0;
  a_prev_.setZero();
}

int NewmarkFEM::newton_step(const Eigen::Ref<const Eigen::VectorXd>& f_ext) {
  const Index N = model_->dofs();
  const auto& M = model_->mass();
  const auto& mask = model_->fixed_mask();
  const double al = model_->alpha(), be = model_->beta();
  const double nb = 0.25, ng = 0.5, h = dt_;
  if (!a_prev_.allFinite()) make_acceleration_consistent(f_ext);
  last_cg_iterations_ = 0;
  u_prev_ = u_;
  v_prev_ = v_;
  a_prev_ = a_;
  // Predictor: u = u_n + h v_n (keeps a bounded first residual).
  u_ = u_prev_ + h * v_prev_ + h * h * (0.5 - nb) * a_prev_;
  const double c0 = 1.0 / (nb * h * h), c1 = ng / (nb * h);
  double r0 = -1;
  for (int it = 1; it <= max_iterations_; ++it) {
    a_ = c0 * (u_ - u_prev_) - v_prev_ / (nb * h) - (0.5 / nb - 1.0) * a_prev_;
    v_ = v_prev_ + h * ((1.0 - ng) * a_prev_ + ng * a_);
    model_->internal_forces(u_, internal_);
    model_->tangent_stiffness(u_, stiffness_);
    residual_ = f_ext - internal_ - M.cwiseProduct(a_) - al * M.cwiseProduct(v_) - be * (stiffness_ * v_);
    for (Index i = 0; i < N; ++i)
      if (mask[i]) residual_[i] = 0;
    const double rn = residual_.norm();
    if (!std::isfinite(rn)) throw std::domain_error("Newton produced a non-finite residual: reduce dt or the forces");
    if (r0 < 0) r0 = std::max(rn, 1e-300);
    const double scale = std::max(f_ext.norm(), (M.cwiseProduct(a_prev_)).norm());
    if (it > 1 && (rn <= tolerance_ * r0 || rn <= 1e-12 * std::max(1.0, scale))) return it - 1;
    // A = c0 M + c1 (alpha M + beta K) + K (the damping-Hessian term is omitted)
    // same pattern as K: values written in place, no allocation
    const double sk = 1.0 + c1 * be, sm = c0 + c1 * al;
    for (Index k = 0; k < stiffness_.nonZeros(); ++k) system_.valuePtr()[k] = sk * stiffness_.valuePtr()[k];
    for (Index i = 0; i < N; ++i) system_.valuePtr()[diagonal_slots_[i]] += sm * M[i];
    constrain(system_);
    solve_correction(rn, r0);
    u_ += correction_;
    if (correction_.norm() <= 1e-14 * std::max(1.0, u_.norm()) && it > 1) return it;
  }
  throw std::runtime_error("Newton did not converge in " + std::to_string(max_iterations_) +
                           " iterations (residual reduced only to " + std::to_string(residual_.norm() / r0) +
                           " of its initial value): reduce dt or the forces");
}

NewmarkRun NewmarkFEM::run(const Eigen::Ref<const RowMatrix>& forces, const ProgressFn* progress) {
  const Index N = model_->dofs(), T = forces.rows();
  if (forces.cols() != N) throw_shape("forces", "(T, " + std::to_string(N) + ")", shape_str(T, forces.cols()));
  check_finite("forces", forces.data(), forces.size());
  NewmarkRun out;
  out.displacement.resize(T + 1, N);
  out.velocity.resize(T + 1, N);
  out.acceleration.resize(T + 1, N);
  out.displacement.row(0) = u_.transpose();
  out.velocity.row(0) = v_.transpose();
  if (a_prev_.allFinite())
    out.acceleration.row(0) = a_.transpose();
  else
    out.acceleration.row(0).setConstant(std::nan(""));
  ProgressThrottle throttle(progress, T);
  for (Index t = 0; t < T; ++t) {
    try {
      newton_step(forces.row(t).transpose());
    } catch (const std::domain_error& e) {
      throw std::domain_error("step " + std::to_string(t) + ": " + e.what());
    } catch (const Cancelled&) {
      throw;
    } catch (const std::runtime_error& e) {
      throw std::runtime_error("step " + std::to_string(t) + ": " + e.what());
    }
    out.displacement.row(t + 1) = u_.transpose();
    out.velocity.row(t + 1) = v_.transpose();
    out.acceleration.row(t + 1) = a_.transpose();
    if (!throttle.report(t + 1)) throw Cancelled();
  }
  throttle.finish(T);
  return out;
}

Eigen::VectorXd NewmarkFEM::static_solve(const Eigen::Ref<const Eigen::VectorXd>& f_ext, int max_iterations) {
  const Index N = model_->dofs();
  if (f_ext.size() != N) throw_shape("f_ext", "(" + std::to_string(N) + ",)", "(" + std::to_string(f_ext.size()) + ",)");
  check_finite("f_ext", f_ext.data(), N);
  if (max_iterations < 1) throw std::invalid_argument("max_iterations must be >= 1, got " + std::to_string(max_iterations));
  const auto& mask = model_->fixed_mask();
  Eigen::VectorXd u = Eigen::VectorXd::Zero(N), f(N), r(N);
  const double r0 = std::max(f_ext.norm(), 1e-300);
  for (int it = 0; it < max_iterations; ++it) {
    model_->internal_forces(u, f);
    r = f_ext - f;
    for (Index i = 0; i < N; ++i)
      if (mask[i]) r[i] = 0;
    if (!r.allFinite()) throw std::domain_error("static solve produced a non-finite residual");
    if (r.norm() <= 1e-10 * r0) return u;
    model_->tangent_stiffness(u, stiffness_);
    std::copy(stiffness_.valuePtr(), stiffness_.valuePtr() + stiffness_.nonZeros(), system_.valuePtr());
    constrain(system_);
    factor(system_);
    u += ldlt_.solve(r);
  }
  throw std::runtime_error("static solve: Newton did not converge in " + std::to_string(max_iterations) +
                           " iterations (load too large?)");
}

}  // namespace directable
