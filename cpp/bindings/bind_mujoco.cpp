// MuJoCo as a plant (sim/mujoco_loop): the library handle, views of a
// model's and a data's arrays by address, the SPD torque and whole runs.
// The Python layer (directable.mujoco) reads the addresses from MuJoCo's own
// NumPy views and keeps the MjModel / MjData alive while a view is used.
#include <cstdint>

#include "common.hpp"
#include "directable/sim/mujoco_loop.hpp"
#include "tracker_object.hpp"

namespace directable::py_bind {

namespace {

template <class T>
T* address(std::uintptr_t a) {
  return reinterpret_cast<T*>(a);
}

//! A 2-D array argument as the core's RowsView (ndim checked by the core's shape check).
RowsView rows(const Array& a) {
  return {a.data(), a.ndim() >= 1 ? Index(a.shape(0)) : 0, a.ndim() == 2 ? Index(a.shape(1)) : -1};
}
RowsView rows(const OptArray& a) { return a ? rows(*a) : RowsView{}; }
RowsOut rows_out(py::array_t<double, py::array::c_style>& a) {
  return {a.mutable_data(), a.ndim() >= 1 ? Index(a.shape(0)) : 0, a.ndim() == 2 ? Index(a.shape(1)) : -1};
}

using BoolArray = py::array_t<bool, py::array::c_style | py::array::forcecast>;
using OutArray = py::array_t<double, py::array::c_style>;

py::tuple status_tuple(const MujocoRunStatus& s) { return py::make_tuple(s.done, s.diverged_at, s.reason); }

}  // namespace

void bind_mujoco(py::module_& m) {
  py::class_<MujocoApi, std::shared_ptr<MujocoApi>>(m, "MujocoLibrary", R"doc(
MuJoCo's C API loaded at run time from the shared library at path (the one
the mujoco Python package loaded: libmujoco.so.* beside mujoco/__init__.py).
ValueError when it cannot be opened or is not MuJoCo 4.0.x, the release
the compiled loop was written against.)doc")
      .def(py::init([](const std::string& path) {
             return std::const_pointer_cast<MujocoApi>(MujocoApi::load(path));
           }),
           py::arg("path"))
      .def_readonly("path", &MujocoApi::path)
      .def_readonly("version", &MujocoApi::version, "mj_version(): 100 * (100 * major + minor) + patch")
      .def_property_readonly_static("header_version", [](py::object) { return MujocoApi::header_version; });

  py::class_<MujocoModel, std::shared_ptr<MujocoModel>>(m, "MujocoModel", R"doc(
View of a mujoco.MjModel for the compiled loops: the model's address, its
sizes, dof_parentid (nv,), the qpos index of every ball / free joint's
quaternion, and the addresses of qpos0 (nq,) and dof_damping
(nv,). Made by directable.mujoco; the MjModel must outlive it.)doc")
      .def(py::init([](std::shared_ptr<MujocoApi> api, std::uintptr_t model, Index nq, Index nv, Index na, Index nu,
                       Index nbody, const Eigen::VectorXi& dof_parent, const Eigen::VectorXi& quat_adr, std::uintptr_t qpos0,
                       std::uintptr_t dof_damping) {
             return std::make_shared<MujocoModel>(api, address<const MjModelHandle>(model), nq, nv, na, nu, nbody,
                                                  std::vector<int>(dof_parent.data(), dof_parent.data() + dof_parent.size()),
                                                  std::vector<int>(quat_adr.data(), quat_adr.data() + quat_adr.size()),
                                                  address<const double>(qpos0), address<double>(dof_damping));
           }),
           py::arg("library"), py::arg("model"), py::arg("nq"), py::arg("nv"), py::arg("na"), py::arg("nu"),
           py::arg("nbody"), py::arg("dof_parent"), py::arg("quat_adr"), py::arg("qpos0"), py::arg("dof_damping"))
      .def_readonly("nq", &MujocoModel::nq)
      .def_readonly("nv", &MujocoModel::nv)
      .def_readonly("na", &MujocoModel::na)
      .def_readonly("nu", &MujocoModel::nu);

  py::class_<MujocoData, std::shared_ptr<MujocoData>>(m, "MujocoData", R"doc(
View of a mujoco.MjData for the compiled loops: its address, the addresses
of qpos, qvel, act, ctrl, qfrc_applied, xfrc_applied, qfrc_bias, qfrc_passive and of the
four warning counters mjWARN_BADQACC, BADQPOS, BADQVEL, BADCTRL; with the
buffers of the SPD torque. Made by directable.mujoco; the MjData must
outlive it.)doc")
      .def(py::init([](std::shared_ptr<MujocoModel> model, std::uintptr_t data, std::uintptr_t qpos,
                       std::uintptr_t qvel, std::uintptr_t act, std::uintptr_t ctrl, std::uintptr_t qfrc_applied,
                       std::uintptr_t xfrc_applied, std::uintptr_t qfrc_bias, std::uintptr_t qfrc_passive, const std::vector<std::uintptr_t>& warnings) {
             std::vector<const int*> counters;
             for (auto w : warnings) counters.push_back(address<const int>(w));
             return std::make_shared<MujocoData>(deref(model, "model", "MujocoModel"), address<MjDataHandle>(data),
                                                 address<double>(qpos), address<double>(qvel), address<double>(act),
                                                 address<double>(ctrl), address<double>(qfrc_applied), address<double>(xfrc_applied),
                                                 address<const double>(qfrc_bias), address<const double>(qfrc_passive),
                                                 std::move(counters));
           }),
           py::arg("model"), py::arg("data"), py::arg("qpos"), py::arg("qvel"), py::arg("act"), py::arg("ctrl"),
           py::arg("qfrc_applied"), py::arg("xfrc_applied"), py::arg("qfrc_bias"), py::arg("qfrc_passive"), py::arg("warnings"),
           py::keep_alive<1, 2>());

  m.def("mujoco_spd", [](const MujocoModel& model, MujocoData& data, const OptArray& q_ref_next,
                         const OptArray& qd_ref_next, const OptArray& kp, const OptArray& kd, double dt,
                         const OptArray& damping, const std::optional<BoolArray>& actuated, bool forward,
                         const OptArray& tau_ff, bool return_qacc) -> py::object {
    const Index nv = model.nv;
    const Eigen::VectorXd kpv = broadcast_vector(kp, "kp", nv), kdv = broadcast_vector(kd, "kd", nv);
    MujocoSPDInputs in;
    if (q_ref_next) in.q_ref_next = vector(*q_ref_next, "q_ref_next", model.nq).data();
    if (qd_ref_next) in.qd_ref_next = vector(*qd_ref_next, "qd_ref_next", nv).data();
    if (kp) in.kp = kpv.data();
    if (kd) in.kd = kdv.data();
    if (damping) in.damping = vector(*damping, "damping", nv).data();
    if (tau_ff) in.tau_ff = vector(*tau_ff, "tau_ff", nv).data();
    if (actuated) {
      in.actuated = actuated->data();
      in.actuated_size = actuated->ndim() == 1 ? Index(actuated->shape(0)) : Index(actuated->size());
    }
    in.dt = dt;
    const double deviation = mujoco_spd(model, data, in, forward);
    if (deviation > 1e-6) {
      const std::string msg = "q_ref_next: quaternions of norm " + std::to_string(1.0 + deviation) + " normalised to 1";
      if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 2) != 0) throw py::error_already_set();
    }
    py::array_t<double> tau(nv);
    std::copy(data.tau.data(), data.tau.data() + nv, tau.mutable_data());
    if (!return_qacc) return std::move(tau);
    py::array_t<double> qdd(nv);
    std::copy(data.spd.qdd.data(), data.spd.qdd.data() + nv, qdd.mutable_data());
    return py::make_tuple(tau, qdd);
  }, py::arg("model"), py::arg("data"), py::arg("q_ref_next"), py::arg("qd_ref_next"), py::arg("kp"), py::arg("kd"),
     py::arg("dt"), py::arg("damping") = py::none(), py::arg("actuated") = py::none(), py::arg("forward") = true,
     py::arg("tau_ff") = py::none(), py::arg("return_qacc") = false,
     R"doc(Stable PD torque (nv,) (Tan et al. eq. 11) at the state of a MuJoCo data, or
(tau, qacc) with return_qacc: q_ref_next (nq,), qd_ref_next (nv,) or None,
kp, kd scalars or (nv,), dt (s), damping (nv,) the joint damping the
integrator treats implicitly or None, actuated (nv,) bool or None, forward:
run mj_fwdPosition + mj_fwdVelocity first, tau_ff (nv,) a known feed-forward
(not included in the returned torque). See directable.mujoco.spd.)doc");

  m.def("mujoco_run_lqr", [](const MujocoModel& model, MujocoData& data, const TrackerObject& tracker,
                             const Array& qpos_ref, const Array& qvel_ref, const OptArray& act_ref, Index steps,
                             const OptArray& disturbance, const OptArray& body_forces, double max_state, OutArray x,
                             OutArray qpos, OutArray u, py::object progress) {
    MujocoRunOptions options;
    options.steps = steps;
    options.disturbance = rows(disturbance);
    options.body_forces = rows(body_forces);
    options.max_state = max_state;
    const MujocoRunOutput out{rows_out(x), rows_out(qpos), rows_out(u)};
    Progress prog(progress);
    const auto status = prog.run([&](const ProgressFn* fn) {
      ObjectLock lock(&data);
      return mujoco_run_lqr(model, data, *tracker.schedule, rows(qpos_ref), rows(qvel_ref), rows(act_ref), options,
                            out, fn);
    });
    return status_tuple(status);
  }, py::arg("model"), py::arg("data"), py::arg("tracker"), py::arg("qpos_ref"), py::arg("qvel_ref"),
     py::arg("act_ref"), py::arg("steps"), py::arg("disturbance"), py::arg("body_forces"), py::arg("max_state"),
     py::arg("x"),
     py::arg("qpos"), py::arg("u"), py::arg("progress") = py::none(),
     R"doc(A whole LQR run on MuJoCo's controls in C++ (GIL released): w = w_ff + K (x (-) x_ref)
with the tracker built on a zero reference. qpos_ref (T+1, nq), qvel_ref
(T+1, nv), act_ref (T+1, na) or None; disturbance (steps, nv) or None;
body_forces (steps, 6 nbody) written to xfrc_applied before each step, or None.
Writes x (steps+1, nx), qpos (steps+1, nq), u (steps, nu) row by row and
returns (done, diverged_at, reason). See directable.mujoco.run.)doc");

  m.def("mujoco_run_servo", [](const MujocoModel& model, MujocoData& data, Servo kind, bool damping_method,
                               const Array& qpos_ref, const Array& qvel_ref, const Array& kp, const Array& kd,
                               const OptArray& tau_ff, const OptArray& damping, double dt, Index steps,
                               const OptArray& disturbance, const OptArray& body_forces, double max_state, OutArray x,
                               OutArray qpos, OutArray u, py::object progress) {
    MujocoServo servo;
    servo.kind = kind;
    servo.method = damping_method ? SPDMethod::damping : SPDMethod::solve;
    servo.qpos_ref = rows(qpos_ref);
    servo.qvel_ref = rows(qvel_ref);
    servo.kp = rows(kp);
    servo.kd = rows(kd);
    servo.tau_ff = rows(tau_ff);
    if (damping) servo.damping = vector(*damping, "damping", model.nv).data();
    servo.dt = dt;
    MujocoRunOptions options;
    options.steps = steps;
    options.disturbance = rows(disturbance);
    options.body_forces = rows(body_forces);
    options.max_state = max_state;
    const MujocoRunOutput out{rows_out(x), rows_out(qpos), rows_out(u)};
    Progress prog(progress);
    const auto status = prog.run([&](const ProgressFn* fn) {
      std::optional<ObjectLock> model_lock;  // the "damping" method writes the model's joint damping for a step
      if (damping_method) model_lock.emplace(&model);
      ObjectLock lock(&data);
      return mujoco_run_servo(model, data, servo, options, out, fn);
    });
    return status_tuple(status);
  }, py::arg("model"), py::arg("data"), py::arg("kind"), py::arg("damping_method"), py::arg("qpos_ref"),
     py::arg("qvel_ref"), py::arg("kp"), py::arg("kd"), py::arg("tau_ff"), py::arg("damping"), py::arg("dt"),
     py::arg("steps"), py::arg("disturbance"), py::arg("body_forces"), py::arg("max_state"), py::arg("x"),
     py::arg("qpos"), py::arg("u"), py::arg("progress") = py::none(),
     R"doc(A whole PD / SPD servo run on qfrc_applied in C++ (GIL released). qpos_ref
(T+1, nq), qvel_ref (T+1, nv), kp, kd (T, nv), tau_ff (T, nv) or None,
damping (nv,): the model's joint damping before the run (the "damping"
method writes D + Kd for each step and restores it) or, for "solve", the
damping treated implicitly (None: none). Writes x, qpos, u (steps, nv) and
returns (done, diverged_at, reason). See directable.mujoco.run.)doc");
}

}  // namespace directable::py_bind
