#include "directable/sim/servo_tracking.hpp"

#include <cmath>
#include <limits>
#include <string>

namespace directable {

namespace {

std::string vshape(Index k) { return "(" + std::to_string(k) + ",)"; }

using CMap = Eigen::Map<const Eigen::VectorXd>;

//! Buffers of one tracking run: the servo's, and the integrator's.
struct ServoTrackingData {
  explicit ServoTrackingData(const Articulated& model) : servo(model) {
    const Index n = model.dofs();
    for (auto* v : {&q_next, &qd_next, &stage_q, &stage_qd, &tau_total}) v->setZero(n);
    for (int k = 0; k < 4; ++k) {
      kq[k].setZero(n);
      kv[k].setZero(n);
    }
  }
  ServoWorkspace servo;
  Eigen::VectorXd q_next, qd_next;    //!< n each: the state after the step
  Eigen::VectorXd stage_q, stage_qd;  //!< n each: an RK4 stage's state
  Eigen::VectorXd kq[4], kv[4];       //!< n each: RK4 stage derivatives of q and qd
  Eigen::VectorXd tau_total;          //!< n: servo + feed-forward + external torque, held over the RK4 stages
};

//! qdd = M(q)^-1 (tau - C(q, qd)) with the servo workspace's buffers.
void acceleration(const Articulated& model, const Eigen::Ref<const Eigen::VectorXd>& q,
                  const Eigen::Ref<const Eigen::VectorXd>& qd, const Eigen::Ref<const Eigen::VectorXd>& tau,
                  Eigen::Ref<Eigen::VectorXd> qdd, ServoWorkspace& ws) {
  model.mass_matrix(q, ws.M, *ws.model_ws);
  model.bias_forces(q, qd, ws.C, *ws.model_ws);
  ws.llt.compute(ws.M);
  if (ws.llt.info() != Eigen::Success) throw std::domain_error("the mass matrix M(q) must be symmetric positive definite");
  qdd = tau - ws.C;
  ws.llt.solveInPlace(qdd);
}

//! The servo's inputs of step i (SPD looks at the reference of step i+1).
ServoInputs servo_inputs(const TrackInputs& in, Index n, Index i) {
  auto row = [n](const SeqView& v, Index k) -> const double* {
    return v.empty() ? nullptr : v.data + (v.is_constant() ? 0 : k) * n;
  };
  const Index ref_shift = in.servo == Servo::spd ? 1 : 0;
  ServoInputs si;
  si.q_ref = row(in.q_ref, i + ref_shift);
  si.qd_ref = row(in.qd_ref, i + ref_shift);
  si.kp = row(in.kp, i);
  si.kd = row(in.kd, i);
  si.tau_ff = row(in.tau_ff, i);
  si.tau_ext = row(in.tau_ext, i);
  si.tau_min = in.tau_min.size() ? in.tau_min.data() : nullptr;
  si.tau_max = in.tau_max.size() ? in.tau_max.data() : nullptr;
  return si;
}

//! (q_next, qd_next) from (q, qd) under the servo torque of d.servo (whose
//! qdd is the acceleration at the step's start), then the joint limits.
void integrate(const Articulated& model, Integrator integrator, const Eigen::VectorXd& q, const Eigen::VectorXd& qd,
               double dt, const ServoInputs& si, ServoTrackingData& d) {
  ServoWorkspace& ws = d.servo;
  switch (integrator) {
    case Integrator::explicit_euler:
      d.q_next = q + dt * qd;
      d.qd_next = qd + dt * ws.qdd;
      break;
    case Integrator::semi_implicit_euler:
      d.qd_next = qd + dt * ws.qdd;
      d.q_next = q + dt * d.qd_next;
      break;
    case Integrator::rk4: {
      d.tau_total = ws.tau;
      if (si.tau_ext) d.tau_total += CMap(si.tau_ext, model.dofs());
      d.kq[0] = qd;
      d.kv[0] = ws.qdd;
      for (int k = 1; k < 4; ++k) {
        const double h = k == 3 ? dt : 0.5 * dt;
        d.stage_q = q + h * d.kq[k - 1];
        d.stage_qd = qd + h * d.kv[k - 1];
        d.kq[k] = d.stage_qd;
        acceleration(model, d.stage_q, d.stage_qd, d.tau_total, d.kv[k], ws);
      }
      d.q_next = q + (dt / 6.0) * (d.kq[0] + 2.0 * d.kq[1] + 2.0 * d.kq[2] + d.kq[3]);
      d.qd_next = qd + (dt / 6.0) * (d.kv[0] + 2.0 * d.kv[1] + 2.0 * d.kv[2] + d.kv[3]);
      break;
    }
  }
  model.project_limits(d.q_next, d.qd_next);
}

//! Marks step i and everything after it as diverged (NaN rows).
void mark_divergence(TrackResult& r, Index i, Index T) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  r.diverged = true;
  r.diverged_at = i;
  for (Index k = i + 1; k <= T; ++k) {
    r.q[k].setConstant(nan);
    r.qd[k].setConstant(nan);
  }
  for (Index k = i; k < T; ++k) r.tau[k].setConstant(nan);
}

}  // namespace

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
  TrackResult r;
  r.q = VectorSeq(T + 1, n);
  r.qd = VectorSeq(T + 1, n);
  r.tau = VectorSeq(T, n);
  ServoTrackingData d(model);
  Eigen::VectorXd q = q0, qd = qd0;
  r.q[0] = q;
  r.qd[0] = qd;
  ProgressThrottle throttle(progress, T);
  for (Index i = 0; i < T; ++i) {
    const ServoInputs si = servo_inputs(in, n, i);
    bool bad = !q.allFinite() || !qd.allFinite();
    if (!bad) {
      servo(model, in.servo, q, qd, in.dt, si, d.servo);
      integrate(model, in.integrator, q, qd, in.dt, si, d);
      bad = !d.q_next.allFinite() || !d.qd_next.allFinite() || d.q_next.cwiseAbs().maxCoeff() > in.max_state ||
            d.qd_next.cwiseAbs().maxCoeff() > in.max_state;
    }
    if (bad) {
      mark_divergence(r, i, T);
      break;
    }
    r.tau[i] = d.servo.tau;
    q.swap(d.q_next);
    qd.swap(d.qd_next);
    r.q[i + 1] = q;
    r.qd[i + 1] = qd;
    r.steps = i + 1;
    if (!throttle.report(i + 1)) break;
  }
  throttle.finish(r.steps == T || r.diverged ? T : r.steps);
  return r;
}

}  // namespace directable
