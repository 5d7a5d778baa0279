#include "directable/control/spd.hpp"

#include <cmath>
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
  llt = Eigen::LLT<Eigen::MatrixXd>(n);
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
  const Index n = q.size();
  check_shape("M", M.rows(), M.cols(), n, n);
  auto chk = [n](const char* name, Index k) {
    if (k != n) throw_shape(name, vshape(n), vshape(k));
  };
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
  if ((kp.array() < 0).any() || (kd.array() < 0).any()) throw std::domain_error("kp and kd must be >= 0");
  Eigen::VectorXd e = q + dt * qd - q_ref_next;
  Eigen::VectorXd ev = qd - qd_ref_next;
  Eigen::MatrixXd A = M;
  A.diagonal() += dt * kd;
  Eigen::LLT<Eigen::MatrixXd> llt(A);
  if (llt.info() != Eigen::Success) throw std::domain_error("M + Kd dt must be symmetric positive definite");
  qdd = llt.solve(-C - kp.cwiseProduct(e) - kd.cwiseProduct(ev));
  tau = -kp.cwiseProduct(e) - kd.cwiseProduct(ev + dt * qdd);
}

}  // namespace directable
