#include "directable/control/spd.hpp"
#include "directable/core/progress.hpp"

#include <cmath>
#include <limits>
#include <string>

namespace directable {

namespace {

std::string vshape(Index k) { return "(" + std::to_string(k) + ",)"; }

using CMap = Eigen::Map<const Eigen::VectorXd>;

//! qdd = M(q)^-1 (tau - C(q, qd)) with the workspace's buffers.
void accel(const Articulated& model, const Eigen::Ref<const Eigen::VectorXd>& q,
           const Eigen::Ref<const Eigen::VectorXd>& qd, const Eigen::Ref<const Eigen::VectorXd>& tau,
           Eigen::Ref<Eigen::VectorXd> qdd, ServoWorkspace& ws) {
  model.mass_matrix(q, ws.M, *ws.model_ws);
  model.bias_forces(q, qd, ws.C, *ws.model_ws);
  ws.llt.compute(ws.M);
  if (ws.llt.info() != Eigen::Success) throw std::domain_error("the mass matrix M(q) must be symmetric positive definite");
  qdd = tau - ws.C;
  ws.llt.solveInPlace(qdd);
}

}  // namespace

ServoWorkspace::ServoWorkspace(const Articulated& model) : model_ws(model.create_workspace()) {
  const Index n = model.dofs();
  M.setZero(n, n);
  A.setZero(n, n);
  llt = Eigen::LLT<Eigen::MatrixXd>(n);
  for (auto* v : {&C, &e, &rhs, &qdd, &tau, &q1, &qd1, &qdd_k, &tmp_q, &tmp_qd}) v->setZero(n);
  for (int k = 0; k < 4; ++k) {
    kq[k].setZero(n);
    kv[k].setZero(n);
  }
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

void check_track_inputs(const Articulated& model, const Eigen::Ref<const Eigen::VectorXd>& q0,
                        const Eigen::Ref<const Eigen::VectorXd>& qd0, const TrackInputs& in) {
  const Index n = model.dofs();
  const auto& r = in.q_ref;
  if (r.empty() || r.rows != 1 || r.cols != n || r.T < 2)
    throw_shape("q_ref", "(T+1, " + std::to_string(n) + ") with T >= 1", r.empty() ? "nothing" : shape_str(r.T, r.cols));
  const Index T = r.T - 1;
  auto seq = [&](const SeqView& v, const char* name, Index len, bool allow_const) {
    if (v.empty()) return;
    const bool ok = v.rows == 1 && v.cols == n && (v.T == len || (allow_const && v.is_constant()));
    if (!ok) {
      std::string exp = shape_str(len, n);
      if (allow_const) exp = vshape(n) + " or " + exp;
      throw_shape(name, exp, v.is_constant() ? vshape(v.cols) : shape_str(v.T, v.cols));
    }
    v.check_finite(name);
  };
  seq(in.q_ref, "q_ref", T + 1, false);
  seq(in.qd_ref, "qd_ref", T + 1, false);
  seq(in.tau_ff, "tau_ff", T, false);
  seq(in.tau_ext, "tau_ext", T, false);
  if (in.servo != Servo::none) {
    if (in.kp.empty() || in.kd.empty()) throw std::invalid_argument("kp and kd are required for a PD or SPD servo");
    seq(in.kp, "kp", T, true);
    seq(in.kd, "kd", T, true);
    for (auto [v, name] : {std::pair{&in.kp, "kp"}, std::pair{&in.kd, "kd"}}) {
      const Index len = (v->is_constant() ? 1 : v->T) * n;
      for (Index k = 0; k < len; ++k)
        if (v->data[k] < 0)
          throw std::domain_error(std::string(name) + " must be >= 0, got " + std::to_string(v->data[k]) + " at flat index " +
                                  std::to_string(k));
    }
  }
  if (q0.size() != n) throw_shape("q0", vshape(n), vshape(q0.size()));
  if (qd0.size() != n) throw_shape("qd0", vshape(n), vshape(qd0.size()));
  check_finite("q0", q0.data(), n);
  check_finite("qd0", qd0.data(), n);
  check_positive("dt", in.dt);
  check_positive("max_state", in.max_state);
  for (auto [v, name] : {std::pair{&in.tau_min, "tau_min"}, std::pair{&in.tau_max, "tau_max"}}) {
    if (v->size() == 0) continue;
    if (v->size() != n) throw_shape(name, vshape(n), vshape(v->size()));
    for (Index i = 0; i < n; ++i)
      if (std::isnan((*v)[i])) throw std::domain_error(std::string(name) + " must not be NaN (index " + std::to_string(i) + ")");
  }
  if (in.tau_min.size() && in.tau_max.size())
    for (Index i = 0; i < n; ++i)
      if (!(in.tau_min[i] <= in.tau_max[i]))
        throw std::domain_error("tau_min must be <= tau_max, got " + std::to_string(in.tau_min[i]) + " > " +
                                std::to_string(in.tau_max[i]) + " at index " + std::to_string(i));
}

TrackResult track(const Articulated& model, const Eigen::Ref<const Eigen::VectorXd>& q0,
                  const Eigen::Ref<const Eigen::VectorXd>& qd0, const TrackInputs& in, const ProgressFn* progress) {
  check_track_inputs(model, q0, qd0, in);
  const Index n = model.dofs(), T = in.q_ref.T - 1;
  const double dt = in.dt, nan = std::numeric_limits<double>::quiet_NaN();
  TrackResult r;
  r.q = VectorSeq(T + 1, n);
  r.qd = VectorSeq(T + 1, n);
  r.tau = VectorSeq(T, n);
  ServoWorkspace ws(model);
  Eigen::VectorXd q = q0, qd = qd0, tau_tot(n);
  r.q[0] = q;
  r.qd[0] = qd;
  ProgressThrottle throttle(progress, T);
  auto row = [n](const SeqView& v, Index i) -> const double* {
    return v.empty() ? nullptr : v.data + (v.is_constant() ? 0 : i) * n;
  };
  const Index ref_shift = in.servo == Servo::spd ? 1 : 0;  // SPD looks at step n+1
  for (Index i = 0; i < T; ++i) {
    ServoInputs si;
    si.q_ref = row(in.q_ref, i + ref_shift);
    si.qd_ref = row(in.qd_ref, i + ref_shift);
    si.kp = row(in.kp, i);
    si.kd = row(in.kd, i);
    si.tau_ff = row(in.tau_ff, i);
    si.tau_ext = row(in.tau_ext, i);
    si.tau_min = in.tau_min.size() ? in.tau_min.data() : nullptr;
    si.tau_max = in.tau_max.size() ? in.tau_max.data() : nullptr;
    bool bad = false;
    if (!q.allFinite() || !qd.allFinite()) bad = true;
    if (!bad) {
      servo(model, in.servo, q, qd, dt, si, ws);
      switch (in.integrator) {
        case Integrator::explicit_euler:
          ws.q1 = q + dt * qd;
          ws.qd1 = qd + dt * ws.qdd;
          break;
        case Integrator::semi_implicit_euler:
          ws.qd1 = qd + dt * ws.qdd;
          ws.q1 = q + dt * ws.qd1;
          break;
        case Integrator::rk4: {
          tau_tot = ws.tau;
          if (si.tau_ext) tau_tot += CMap(si.tau_ext, n);
          ws.kq[0] = qd;
          ws.kv[0] = ws.qdd;
          for (int k = 1; k < 4; ++k) {
            const double h = k == 3 ? dt : 0.5 * dt;
            ws.tmp_q = q + h * ws.kq[k - 1];
            ws.tmp_qd = qd + h * ws.kv[k - 1];
            ws.kq[k] = ws.tmp_qd;
            accel(model, ws.tmp_q, ws.tmp_qd, tau_tot, ws.kv[k], ws);
          }
          ws.q1 = q + (dt / 6.0) * (ws.kq[0] + 2.0 * ws.kq[1] + 2.0 * ws.kq[2] + ws.kq[3]);
          ws.qd1 = qd + (dt / 6.0) * (ws.kv[0] + 2.0 * ws.kv[1] + 2.0 * ws.kv[2] + ws.kv[3]);
          break;
        }
      }
      model.project_limits(ws.q1, ws.qd1);
      bad = !ws.q1.allFinite() || !ws.qd1.allFinite() || ws.q1.cwiseAbs().maxCoeff() > in.max_state ||
            ws.qd1.cwiseAbs().maxCoeff() > in.max_state;
    }
    if (bad) {
      r.diverged = true;
      r.diverged_at = i;
      for (Index k = i + 1; k <= T; ++k) {
        r.q[k].setConstant(nan);
        r.qd[k].setConstant(nan);
      }
      for (Index k = i; k < T; ++k) r.tau[k].setConstant(nan);
      break;
    }
    r.tau[i] = ws.tau;
    q.swap(ws.q1);
    qd.swap(ws.qd1);
    r.q[i + 1] = q;
    r.qd[i + 1] = qd;
    r.steps = i + 1;
    if (!throttle.report(i + 1)) break;
  }
  throttle.finish(r.steps == T || r.diverged ? T : r.steps);
  return r;
}

}  // namespace directable
