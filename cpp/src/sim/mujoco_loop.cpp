#include "directable/sim/mujoco_loop.hpp"

#include <cmath>
#include <stdexcept>

#include "directable/core/errors.hpp"

namespace directable {

namespace {

constexpr double kMaxInput = 1e10;  // MuJoCo's mjMAXVAL: a larger control or force is "bad"

using CVec = Eigen::Map<const Eigen::VectorXd>;
using Vec = Eigen::Map<Eigen::VectorXd>;

void check_rows(const char* name, const RowsView& v, Index rows, Index cols, bool optional = false) {
  if (optional && !v.data) return;
  if (!v.data) throw std::invalid_argument(std::string(name) + " must be given, got nothing");
  check_shape(name, v.rows, v.cols, rows, cols);
}

bool finite_within(const double* v, Index n, double bound) {
  for (Index k = 0; k < n; ++k)
    if (!(std::abs(v[k]) <= bound)) return false;
  return true;
}

//! Writes the state of `data` into row i of the outputs x and qpos.
void record(const MujocoModel& model, const MujocoData& data, const MujocoRunOutput& out, Index i) {
  const Index nx = model.nx(), nv = model.nv;
  double* x = out.x.data + i * nx;
  model.api->differentiate_pos(model.m, x, 1.0, model.qpos0, data.qpos);
  std::copy(data.qvel, data.qvel + nv, x + nv);
  std::copy(data.act, data.act + model.na, x + 2 * nv);
  std::copy(data.qpos, data.qpos + model.nq, out.qpos.data + i * model.nq);
}

//! After step i: MuJoCo's warnings, the input and the new state. Empty when fine.
std::string check_step(const MujocoModel& model, const MujocoData& data, long warnings_before, const double* u,
                       Index nu, double max_state) {
  if (data.warning_count() != warnings_before)
    return "MuJoCo flagged the state or the control as unstable (mjWARN_BAD*) and reset the data";
  if (!finite_within(u, nu, kMaxInput)) return "the controller's output is non-finite or beyond 1e10";
  if (!finite_within(data.qpos, model.nq, max_state) || !finite_within(data.qvel, model.nv, max_state))
    return "the state became non-finite or exceeded max_state";
  return {};
}

void check_output(const char* name, const RowsOut& o, Index rows, Index cols) {
  if (!o.data) throw std::invalid_argument(std::string(name) + " must be given, got nothing");
  check_shape(name, o.rows, o.cols, rows, cols);
}

void check_outputs(const MujocoModel& model, const MujocoRunOutput& out, Index steps, Index nu) {
  check_output("x", out.x, steps + 1, model.nx());
  check_output("qpos", out.qpos, steps + 1, model.nq);
  check_output("u", out.u, steps, nu);
}

//! Step i's Cartesian forces on the bodies, where the run has them.
void apply_body_forces(const MujocoModel& model, MujocoData& data, const MujocoRunOptions& options, Index i) {
  if (options.body_forces.data)
    std::copy(options.body_forces.row(i), options.body_forces.row(i) + 6 * model.nbody, data.xfrc_applied);
}

//! Gains: finite and >= 0 (domain_error naming the first bad entry).
void check_gains(const char* name, const double* k, Index size) {
  for (Index i = 0; i < size; ++i)
    if (!(k[i] >= 0) || !std::isfinite(k[i]))
      throw std::domain_error(std::string(name) + " must be finite and >= 0, got " + std::to_string(k[i]) +
                              " at flat index " + std::to_string(i));
}

//! The data's views were made for this mjModel (two views of one mjModel are the same model).
void check_same_model(const MujocoModel& model, const MujocoData& data) {
  if (data.model->m != model.m) throw std::invalid_argument("data must belong to model (made for another model)");
}

void check_options(const MujocoModel& model, const MujocoRunOptions& o) {
  if (o.steps < 1) throw std::invalid_argument("steps must be >= 1, got " + std::to_string(o.steps));
  check_rows("disturbance", o.disturbance, o.steps, model.nv, true);
  if (o.disturbance.data) check_finite("disturbance", o.disturbance.data, o.steps * model.nv);
  check_rows("body_forces", o.body_forces, o.steps, 6 * model.nbody, true);
  if (o.body_forces.data) check_finite("body_forces", o.body_forces.data, o.steps * 6 * model.nbody);
  if (!(o.max_state > 0)) throw std::domain_error("max_state must be > 0, got " + std::to_string(o.max_state));
}

//! Restores MuJoCo's joint damping when a "damping" SPD run ends, however it ends.
class DampingRestore {
 public:
  DampingRestore(const MujocoModel& model, const double* d0) : model_(model), d0_(d0) {}
  ~DampingRestore() {
    if (d0_) std::copy(d0_, d0_ + model_.nv, model_.dof_damping);
  }
  DampingRestore(const DampingRestore&) = delete;
  DampingRestore& operator=(const DampingRestore&) = delete;

 private:
  const MujocoModel& model_;
  const double* d0_;
};

}  // namespace

MujocoModel::MujocoModel(std::shared_ptr<const MujocoApi> api_, const MjModelHandle* model, Index nq_, Index nv_,
                         Index na_, Index nu_, Index nbody_, std::vector<int> dof_parent, std::vector<int> quat_adr_,
                         const double* qpos0_, double* dof_damping_)
    : api(std::move(api_)), m(model), nq(nq_), nv(nv_), na(na_), nu(nu_), nbody(nbody_), tree(std::move(dof_parent)),
      quat_adr(std::move(quat_adr_)), qpos0(qpos0_), dof_damping(dof_damping_) {
  if (!api) throw std::invalid_argument("api must be a loaded MuJoCo library, got None");
  if (!m || !qpos0 || !dof_damping) throw std::invalid_argument("model must be a MuJoCo model, got a null address");
  if (nq < 0 || nv < 0 || na < 0 || nu < 0 || nq < nv || nbody < 1)
    throw std::invalid_argument("model sizes must satisfy nq >= nv >= 0, na, nu >= 0, nbody >= 1");
  if (tree.size() != nv)
    throw_shape("dof_parent", "(" + std::to_string(nv) + ",)", "(" + std::to_string(tree.size()) + ",)");
  for (int a : quat_adr)
    if (a < 0 || a + 4 > nq)
      throw std::invalid_argument("quat_adr must index quaternions inside qpos (nq = " + std::to_string(nq) +
                                  "), got " + std::to_string(a));
}

MujocoData::MujocoData(const MujocoModel& model_, MjDataHandle* data, double* qpos_, double* qvel_, double* act_,
                       double* ctrl_, double* qfrc_applied_, double* xfrc_applied_, const double* qfrc_bias_,
                       const double* qfrc_passive_,
                       std::vector<const int*> warnings_)
    : d(data), qpos(qpos_), qvel(qvel_), act(act_), ctrl(ctrl_), qfrc_applied(qfrc_applied_), xfrc_applied(xfrc_applied_),
      qfrc_bias(qfrc_bias_),
      qfrc_passive(qfrc_passive_), warnings(std::move(warnings_)), model(&model_), spd(model_.nv),
      qpred(Eigen::VectorXd::Zero(model_.nq)), q_ref(Eigen::VectorXd::Zero(model_.nq)), p(Eigen::VectorXd::Zero(model_.nv)),
      C(Eigen::VectorXd::Zero(model_.nv)), dx(Eigen::VectorXd::Zero(model_.nx())),
      w(Eigen::VectorXd::Zero(model_.nu)), w_fb(Eigen::VectorXd::Zero(model_.nu)),
      tau(Eigen::VectorXd::Zero(model_.nv)) {
  if (!d || !qpos || !qvel || !qfrc_applied || !xfrc_applied || !qfrc_bias || !qfrc_passive || (model_.na && !act) ||
      (model_.nu && !ctrl))
    throw std::invalid_argument("data must be a MuJoCo data of the model, got a null address");
  if (warnings.size() != 4)
    throw std::invalid_argument("warnings must hold 4 counters, got " + std::to_string(warnings.size()));
  for (auto* w : warnings)
    if (!w) throw std::invalid_argument("warnings must be addresses of MuJoCo's counters, got a null address");
}

long MujocoData::warning_count() const {
  long n = 0;
  for (auto* w : warnings) n += *w;
  return n;
}

double mujoco_spd(const MujocoModel& model, MujocoData& data, const MujocoSPDInputs& in, bool forward) {
  check_same_model(model, data);
  const Index nv = model.nv;
  if (!in.q_ref_next)
    throw std::invalid_argument("q_ref_next must be an array of shape (" + std::to_string(model.nq) + ",), got None");
  if (!in.kp) throw std::invalid_argument("kp must be a scalar or (" + std::to_string(nv) + ",), got None");
  if (!in.kd) throw std::invalid_argument("kd must be a scalar or (" + std::to_string(nv) + ",), got None");
  if (!(in.dt > 0) || !std::isfinite(in.dt)) throw std::domain_error("dt must be > 0 and finite, got " + std::to_string(in.dt));
  check_finite("q_ref_next", in.q_ref_next, model.nq);
  if (in.qd_ref_next) check_finite("qd_ref_next", in.qd_ref_next, nv);
  check_gains("kp", in.kp, nv);
  check_gains("kd", in.kd, nv);
  if (in.tau_ff) check_finite("tau_ff", in.tau_ff, nv);
  if (in.actuated && in.actuated_size != nv)
    throw_shape("actuated", "(" + std::to_string(nv) + ",)", "(" + std::to_string(in.actuated_size) + ",)");
  std::copy(in.q_ref_next, in.q_ref_next + model.nq, data.q_ref.data());
  double deviation = 0;
  for (int a : model.quat_adr) {
    auto quat = data.q_ref.segment<4>(a);
    const double norm = quat.norm();
    if (!(norm > 1e-9) || !std::isfinite(norm))
      throw std::domain_error("q_ref_next holds a zero quaternion or a non-finite one at qpos index " + std::to_string(a) +
                              "; expected unit quaternions");
    deviation = std::max(deviation, std::abs(norm - 1.0));
    if (norm != 1.0) quat /= norm;
  }
  const MujocoApi& api = *model.api;
  if (forward) {
    api.fwd_position(model.m, data.d);
    api.fwd_velocity(model.m, data.d);
  }
  api.full_m(model.m, data.d, data.spd.H.data());
  std::copy(data.qpos, data.qpos + model.nq, data.qpred.data());
  api.integrate_pos(model.m, data.qpred.data(), data.qvel, in.dt);
  api.differentiate_pos(model.m, data.p.data(), 1.0, data.q_ref.data(), data.qpred.data());
  for (Index k = 0; k < nv; ++k)
    data.C[k] = data.qfrc_bias[k] - data.qfrc_passive[k] - (in.tau_ff ? in.tau_ff[k] : 0.0);
  TreeSPDInputs t;
  t.C = data.C.data();
  t.p = data.p.data();
  t.qd = data.qvel;
  t.qd_ref = in.qd_ref_next;
  t.kp = in.kp;
  t.kd = in.kd;
  t.damping = in.damping;
  t.actuated = in.actuated;
  t.dt = in.dt;
  tree_spd(model.tree, t, data.spd, data.tau.data());
  return deviation;
}

MujocoRunStatus mujoco_run_lqr(const MujocoModel& model, MujocoData& data, const Tracker& tracker,
                               const RowsView& qpos_ref, const RowsView& qvel_ref, const RowsView& act_ref,
                               const MujocoRunOptions& options, const MujocoRunOutput& out,
                               const ProgressFn* progress) {
  check_same_model(model, data);
  check_options(model, options);
  const Index T = options.steps, nv = model.nv, na = model.na, nu = model.nu;
  if (tracker.n() != model.nx() || tracker.s() != nu)
    throw std::invalid_argument("tracker must map " + std::to_string(model.nx()) + " states to " +
                                std::to_string(nu) + " controls, got " + std::to_string(tracker.n()) + " -> " +
                                std::to_string(tracker.s()));
  if (tracker.horizon() < T)
    throw std::invalid_argument("steps must be <= the tracker's horizon " + std::to_string(tracker.horizon()) +
                                ", got " + std::to_string(T));
  check_rows("qpos_ref", qpos_ref, qpos_ref.rows, model.nq);
  check_rows("qvel_ref", qvel_ref, qpos_ref.rows, nv);
  check_rows("act_ref", act_ref, qpos_ref.rows, na, na == 0);
  check_finite("qpos_ref", qpos_ref.data, qpos_ref.rows * model.nq);
  check_finite("qvel_ref", qvel_ref.data, qvel_ref.rows * nv);
  if (act_ref.data) check_finite("act_ref", act_ref.data, act_ref.rows * na);
  if (qpos_ref.rows < T + 1)
    throw std::invalid_argument("qpos_ref must hold at least steps + 1 = " + std::to_string(T + 1) + " rows, got " +
                                std::to_string(qpos_ref.rows));
  check_outputs(model, out, T, nu);
  const MujocoApi& api = *model.api;
  TrackerData td = tracker.create_data();
  ProgressThrottle throttle(progress, T);
  MujocoRunStatus status;
  std::fill(data.qfrc_applied, data.qfrc_applied + nv, 0.0);
  record(model, data, out, 0);
  double* dq = data.dx.data();
  for (Index i = 0; i < T; ++i) {
    api.differentiate_pos(model.m, dq, 1.0, qpos_ref.row(i), data.qpos);
    for (Index k = 0; k < nv; ++k) dq[nv + k] = data.qvel[k] - qvel_ref.row(i)[k];
    for (Index k = 0; k < na; ++k) dq[2 * nv + k] = data.act[k] - act_ref.row(i)[k];
    tracker.set_index(td, i);
    tracker.control(data.dx, td, data.w, data.w_fb);
    std::copy(data.w.data(), data.w.data() + nu, data.ctrl);
    if (options.disturbance.data)
      std::copy(options.disturbance.row(i), options.disturbance.row(i) + nv, data.qfrc_applied);
    apply_body_forces(model, data, options, i);
    const long before = data.warning_count();
    api.step(model.m, data.d);
    std::copy(data.w.data(), data.w.data() + nu, out.u.data + i * nu);
    status.done = i + 1;
    status.reason = check_step(model, data, before, data.w.data(), nu, options.max_state);
    if (!status.reason.empty()) {
      status.diverged_at = i;
      break;
    }
    record(model, data, out, i + 1);
    if (!throttle.report(i + 1)) break;
  }
  throttle.finish(status.done);
  return status;
}

MujocoRunStatus mujoco_run_servo(const MujocoModel& model, MujocoData& data, const MujocoServo& servo,
                                 const MujocoRunOptions& options, const MujocoRunOutput& out,
                                 const ProgressFn* progress) {
  check_same_model(model, data);
  check_options(model, options);
  const Index T = options.steps, nv = model.nv, nq = model.nq;
  if (servo.kind == Servo::none) throw std::invalid_argument("servo must be 'pd' or 'spd', got none");
  const Index horizon = servo.kp.rows;
  check_rows("qpos_ref", servo.qpos_ref, horizon + 1, nq);
  check_rows("qvel_ref", servo.qvel_ref, horizon + 1, nv);
  check_rows("kp", servo.kp, horizon, nv);
  check_rows("kd", servo.kd, horizon, nv);
  check_rows("tau_ff", servo.tau_ff, horizon, nv, true);
  check_finite("qpos_ref", servo.qpos_ref.data, (horizon + 1) * nq);
  check_finite("qvel_ref", servo.qvel_ref.data, (horizon + 1) * nv);
  check_gains("kp", servo.kp.data, horizon * nv);
  check_gains("kd", servo.kd.data, horizon * nv);
  if (servo.tau_ff.data) check_finite("tau_ff", servo.tau_ff.data, horizon * nv);
  if (horizon < T)
    throw std::invalid_argument("steps must be <= the servo's horizon " + std::to_string(horizon) + ", got " +
                                std::to_string(T));
  const bool damping_method = servo.kind == Servo::spd && servo.method == SPDMethod::damping;
  if (!(servo.dt > 0) || !std::isfinite(servo.dt))
    throw std::domain_error("dt must be > 0 and finite, got " + std::to_string(servo.dt));
  if (damping_method && !servo.damping)
    throw std::invalid_argument("the 'damping' method needs the model's joint damping, got nothing");
  check_outputs(model, out, T, nv);
  const MujocoApi& api = *model.api;
  ProgressThrottle throttle(progress, T);
  MujocoRunStatus status;
  DampingRestore restore(model, damping_method ? servo.damping : nullptr);
  record(model, data, out, 0);
  double* tau = data.tau.data();
  double* p = data.p.data();
  const bool split = servo.kind == Servo::spd && !damping_method;  // mj_step1, the servo on fresh M and C, mj_step2
  for (Index i = 0; i < T; ++i) {
    const double* kp = servo.kp.row(i);
    const double* kd = servo.kd.row(i);
    const double* ff = servo.tau_ff.data ? servo.tau_ff.row(i) : nullptr;
    if (servo.kind == Servo::pd) {
      api.differentiate_pos(model.m, p, 1.0, servo.qpos_ref.row(i), data.qpos);
      const double* vr = servo.qvel_ref.row(i);
      for (Index k = 0; k < nv; ++k) tau[k] = -kp[k] * p[k] - kd[k] * (data.qvel[k] - vr[k]);
    } else if (damping_method) {
      std::copy(data.qpos, data.qpos + nq, data.qpred.data());
      api.integrate_pos(model.m, data.qpred.data(), data.qvel, servo.dt);
      api.differentiate_pos(model.m, p, 1.0, servo.qpos_ref.row(i + 1), data.qpred.data());
      const double* vr = servo.qvel_ref.row(i + 1);
      for (Index k = 0; k < nv; ++k) {
        model.dof_damping[k] = servo.damping[k] + kd[k];
        tau[k] = kd[k] * vr[k] - kp[k] * p[k];
      }
    } else {
      api.step1(model.m, data.d);
      MujocoSPDInputs in;
      in.q_ref_next = servo.qpos_ref.row(i + 1);
      in.qd_ref_next = servo.qvel_ref.row(i + 1);
      in.kp = kp;
      in.kd = kd;
      in.damping = servo.damping;
      in.tau_ff = ff;
      in.dt = servo.dt;
      mujoco_spd(model, data, in, false);
    }
    if (ff)
      for (Index k = 0; k < nv; ++k) tau[k] += ff[k];
    for (Index k = 0; k < nv; ++k)
      data.qfrc_applied[k] = tau[k] + (options.disturbance.data ? options.disturbance.row(i)[k] : 0.0);
    apply_body_forces(model, data, options, i);
    const long before = data.warning_count();
    if (split)
      api.step2(model.m, data.d);
    else
      api.step(model.m, data.d);
    double* u = out.u.data + i * nv;
    if (damping_method)  // the input was -Kp p + Kd qdbar: the torque includes -Kd qd_{n+1}
      for (Index k = 0; k < nv; ++k) u[k] = tau[k] - kd[k] * data.qvel[k];
    else
      std::copy(tau, tau + nv, u);
    status.done = i + 1;
    status.reason = check_step(model, data, before, u, nv, options.max_state);
    if (!status.reason.empty()) {
      status.diverged_at = i;
      break;
    }
    record(model, data, out, i + 1);
    if (!throttle.report(i + 1)) break;
  }
  throttle.finish(status.done);
  return status;
}

}  // namespace directable
