#include "directable/control/spd.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>

namespace directable {

namespace {

std::string vshape(Index k) { return "(" + std::to_string(k) + ",)"; }

using CMap = Eigen::Map<const Eigen::VectorXd>;

}  // namespace

ServoWorkspace::ServoWorkspace(const Articulated& model) : model_ws(model.create_workspace()) {
  const Index n = model.dofs();
  M.setZero(n, n);
  A.setZero(n, n);
  llt.compute(Eigen::MatrixXd::Identity(n, n));  // sized, with its info set (a size-only LLT leaves it unset)
  for (auto* v : {&C, &e, &rhs, &qdd, &tau}) v->setZero(n);
}

void servo(const Articulated& model, Servo kind, const Eigen::Ref<const Eigen::VectorXd>& q,
           const Eigen::Ref<const Eigen::VectorXd>& qd, double dt, const ServoInputs& in, ServoWorkspace& ws) {
  const Index n = model.dofs();
  model.mass_matrix(q, ws.M, *ws.model_ws);
  model.bias_forces(q, qd, ws.C, *ws.model_ws);
  auto& tau = ws.tau;
  if (in.tau_ff)
    tau = CMap(in.tau_ff, n);
  else
    tau.setZero();
  bool solved = false;
  if (kind != Servo::none) {
    const CMap kp(in.kp, n), kd(in.kd, n);
    // position error: current (PD) or predicted (SPD) against the reference
    ws.e = q;
    if (kind == Servo::spd) ws.e += dt * qd;
    ws.e -= CMap(in.q_ref, n);
    ws.rhs = qd;  // the velocity error
    if (in.qd_ref) ws.rhs -= CMap(in.qd_ref, n);
    tau -= kp.cwiseProduct(ws.e);
    if (kind == Servo::pd) {
      tau -= kd.cwiseProduct(ws.rhs);
    } else {
      // (M + Kd dt) qdd = -C + tau_ext + tau_ff - Kp e - Kd (qd - qdbar)
      ws.A = ws.M;
      ws.A.diagonal() += dt * kd;
      ws.qdd = tau - kd.cwiseProduct(ws.rhs) - ws.C;
      if (in.tau_ext) ws.qdd += CMap(in.tau_ext, n);
      ws.llt.compute(ws.A);
      if (ws.llt.info() != Eigen::Success)
        throw std::domain_error("M(q) + Kd dt must be symmetric positive definite (check the mass matrix and kd >= 0)");
      ws.llt.solveInPlace(ws.qdd);
      tau -= kd.cwiseProduct(ws.rhs + dt * ws.qdd);
      solved = true;
    }
  }
  bool clamped = false;
  if (in.tau_min || in.tau_max) {
    for (Index i = 0; i < n; ++i) {
      if (in.tau_min && tau[i] < in.tau_min[i]) {
        tau[i] = in.tau_min[i];
        clamped = true;
      }
      if (in.tau_max && tau[i] > in.tau_max[i]) {
        tau[i] = in.tau_max[i];
        clamped = true;
      }
    }
  }
  if (!solved || clamped) {
    ws.rhs = tau - ws.C;
    if (in.tau_ext) ws.rhs += CMap(in.tau_ext, n);
    ws.llt.compute(ws.M);
    if (ws.llt.info() != Eigen::Success) throw std::domain_error("the mass matrix M(q) must be symmetric positive definite");
    ws.qdd = ws.llt.solve(ws.rhs);
  }
}

void spd_from_matrices(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& C,
                       const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
                       const Eigen::Ref<const Eigen::VectorXd>& q_ref_next, const Eigen::Ref<const Eigen::VectorXd>& qd_ref_next,
                       const Eigen::Ref<const Eigen::VectorXd>& kp, const Eigen::Ref<const Eigen::VectorXd>& kd, double dt,
                       Eigen::Ref<Eigen::VectorXd> tau, Eigen::Ref<Eigen::VectorXd> qdd) {
  // n is the size most of the vectors agree on, so the one argument of another size is the one named
  const Index sizes[] = {q.size(), C.size(), qd.size(), q_ref_next.size(), qd_ref_next.size(), kp.size(), kd.size()};
  Index n = sizes[0];
  int best = 0;
  for (Index a : sizes) {
    const int votes = int(std::count(std::begin(sizes), std::end(sizes), a));
    if (votes > best) best = votes, n = a;
  }
  if (n < 1) throw_shape("q", "(n,) with n >= 1", vshape(n));
  check_shape("M", M.rows(), M.cols(), n, n);
  auto chk = [n](const char* name, Index k) {
    if (k != n) throw_shape(name, vshape(n), vshape(k));
  };
  chk("q", q.size());
  chk("C", C.size());
  chk("qd", qd.size());
  chk("q_ref_next", q_ref_next.size());
  chk("qd_ref_next", qd_ref_next.size());
  chk("kp", kp.size());
  chk("kd", kd.size());
  check_positive("dt", dt);
  check_finite("M", M.data(), M.size());
  check_finite("C", C.data(), n);
  check_finite("q", q.data(), n);
  check_finite("qd", qd.data(), n);
  check_finite("q_ref_next", q_ref_next.data(), n);
  check_finite("qd_ref_next", qd_ref_next.data(), n);
  check_finite("kp", kp.data(), n);
  check_finite("kd", kd.data(), n);
  for (Index k = 0; k < n; ++k)
    if (kp[k] < 0 || kd[k] < 0)
      throw std::domain_error(std::string(kp[k] < 0 ? "kp" : "kd") + " must be >= 0, got " +
                              std::to_string(kp[k] < 0 ? kp[k] : kd[k]) + " at index " + std::to_string(k));
  Eigen::VectorXd e = q + dt * qd - q_ref_next;
  Eigen::VectorXd ev = qd - qd_ref_next;
  Eigen::MatrixXd A = M;
  A.diagonal() += dt * kd;
  Eigen::LLT<Eigen::MatrixXd> llt(A);
  if (llt.info() != Eigen::Success) throw std::domain_error("M + Kd dt must be symmetric positive definite");
  qdd = llt.solve(-C - kp.cwiseProduct(e) - kd.cwiseProduct(ev));
  tau = -kp.cwiseProduct(e) - kd.cwiseProduct(ev + dt * qdd);
}

CoordinateTree::CoordinateTree(std::vector<int> parent) : parent_(std::move(parent)) {
  start_.reserve(parent_.size() + 1);
  start_.push_back(0);
  for (std::size_t k = 0; k < parent_.size(); ++k) {
    if (parent_[k] < -1 || parent_[k] >= static_cast<int>(k))
      throw std::invalid_argument("parent[" + std::to_string(k) + "] must be in [-1, " + std::to_string(k) +
                                  ") (a parent before its child), got " + std::to_string(parent_[k]));
    for (int i = parent_[k]; i >= 0; i = parent_[static_cast<std::size_t>(i)]) ancestors_.push_back(i);
    start_.push_back(ancestors_.size());
  }
}

TreeSPDWorkspace::TreeSPDWorkspace(Index n) : H(RowMatrix::Zero(n, n)), gain(Eigen::VectorXd::Zero(n)),
                                              qdd(Eigen::VectorXd::Zero(n)) {}

Index tree_ldl(const CoordinateTree& tree, RowMatrix& H) {
  const Index n = tree.size();
  for (Index k = n - 1; k >= 0; --k) {
    const double hkk = H(k, k);
    if (!(hkk > 0)) return k;
    const double inv_hkk = 1.0 / hkk;
    double* row_k = H.row(k).data();
    for (const int* pi = tree.ancestors_begin(k), *end = tree.ancestors_end(k); pi != end; ++pi) {
      const int i = *pi;
      const double a = row_k[i] * inv_hkk;
      double* row_i = H.row(i).data();
      // H_ij -= a H_kj for j = i and i's ancestors (k's ancestors beyond i, the same list)
      row_i[i] -= a * row_k[i];
      for (const int* pj = pi + 1; pj != end; ++pj) row_i[*pj] -= a * row_k[*pj];
      row_k[i] = a;
    }
  }
  return -1;
}

void tree_ldl_solve(const CoordinateTree& tree, const RowMatrix& H, double* x) {
  const Index n = tree.size();
  for (Index k = n - 1; k >= 0; --k) {  // L' z = b
    const double* row_k = H.row(k).data();
    const double xk = x[k];
    for (const int* pi = tree.ancestors_begin(k), *end = tree.ancestors_end(k); pi != end; ++pi)
      x[*pi] -= row_k[*pi] * xk;
  }
  for (Index k = 0; k < n; ++k) x[k] /= H(k, k);  // D y = z
  for (Index k = 0; k < n; ++k) {  // L x = y
    const double* row_k = H.row(k).data();
    double s = x[k];
    for (const int* pi = tree.ancestors_begin(k), *end = tree.ancestors_end(k); pi != end; ++pi)
      s -= row_k[*pi] * x[*pi];
    x[k] = s;
  }
}

void tree_spd(const CoordinateTree& tree, const TreeSPDInputs& in, TreeSPDWorkspace& ws, double* tau) {
  const Index n = tree.size();
  const double dt = in.dt;
  double* qdd = ws.qdd.data();
  for (Index k = 0; k < n; ++k) {
    const bool on = !in.actuated || in.actuated[k];
    const double kp = on ? in.kp[k] : 0.0, kd = on ? in.kd[k] : 0.0;
    const double ev = in.qd[k] - (in.qd_ref ? in.qd_ref[k] : 0.0);
    const double servo = -kp * in.p[k] - kd * ev;
    tau[k] = servo;  // completed below by -Kd dt qdd
    qdd[k] = servo - in.C[k];
    ws.gain[k] = kd;
    ws.H(k, k) += dt * (kd + (in.damping ? in.damping[k] : 0.0));
  }
  const Index bad = tree_ldl(tree, ws.H);
  if (bad >= 0)
    throw std::domain_error("M + dt (D + Kd) must be positive definite: pivot " + std::to_string(bad) +
                            " is <= 0 (check the mass matrix, the damping and kd >= 0)");
  tree_ldl_solve(tree, ws.H, qdd);
  for (Index k = 0; k < n; ++k) tau[k] -= ws.gain[k] * dt * qdd[k];
}

}  // namespace directable
