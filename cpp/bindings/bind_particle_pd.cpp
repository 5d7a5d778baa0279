// The eq. 14 PD baseline of a reduced fluid with particles (Barbic & Popovic
// 2008 sec. 6): the law and its closed loops.
#include "common.hpp"
#include "directable/control/particle_pd.hpp"
#include "directable/sim/particle_pd_run.hpp"

namespace directable::py_bind {

void bind_particle_pd(py::module_& m) {
  py::class_<ParticlePD, std::shared_ptr<ParticlePD>>(m, "ParticlePD", R"doc(
Barbic & Popovic's PD law for a reduced fluid with particles (eq. 14):
w = -k_z (z - z_ref) - Psi(p)' (k_p (p - p_ref) + k_pdot (p' - p_ref')).

Psi(p) (d P x r) and the particles' rate p' are the model's, evaluated at the
current state (the dp'/dz block of its Jacobian and the particle rows of its
dynamics), so a FluidParticles on a ReducedScene includes the boundary
fields. p_ref' is the model's rate at the reference state, so w vanishes on
the reference. A P controller is k_pdot = 0.

Parameters
----------
model : Model
    State [p (d P), z (r)], control matrix [0; I] (a FluidParticles).
particles : int
    Number of particles P.
x_ref : (T+1, n) array
    Reference states (m for the positions, reduced units for z).
dt : float
    Step between reference states (s).
k_z : float
    Gain on the reduced velocity error (1/s), >= 0.
k_p : float
    Gain on the particle position error (1/s^2 per m of error, through Psi'), >= 0.
k_pdot : float
    Gain on the particle velocity error (1/s per m/s of error, through Psi'), >= 0.
t0 : float
    Time of x_ref[0] (s).)doc")
      .def(py::init([](std::shared_ptr<Model> model, Index particles, const Array& x_ref, double dt, double k_z,
                       double k_p, double k_pdot, double t0) {
             auto X = rows_view(x_ref, "x_ref", -1, -1, false, "T+1", "n");
             return std::make_shared<ParticlePD>(model, particles, X, ParticlePDGains{k_z, k_p, k_pdot}, dt, t0);
           }),
           py::arg("model"), py::arg("particles"), py::arg("x_ref"), py::arg("dt"), py::arg("k_z") = 0.0,
           py::arg("k_p") = 0.0, py::arg("k_pdot") = 0.0, py::arg("t0") = 0.0)
      .def("with_gains", [](const ParticlePD& c, double k_z, double k_p, double k_pdot) {
             return std::make_shared<ParticlePD>(c.with_gains({k_z, k_p, k_pdot}));
           }, py::arg("k_z"), py::arg("k_p"), py::arg("k_pdot"), R"doc(The same model and reference with other gains.

Parameters
----------
k_z, k_p, k_pdot : float
    Gains of eq. 14 (1/s, 1/s^2, 1/s), each >= 0.

Returns
-------
ParticlePD
    Shares the reference (and its rates) with this law.)doc")
      .def_property_readonly("gains", [](const ParticlePD& c) {
             return py::make_tuple(c.gains().k_z, c.gains().k_p, c.gains().k_pdot);
           }, "(k_z, k_p, k_pdot).")
      .def_property_readonly("particles", &ParticlePD::particles, "Number of particles P.")
      .def_property_readonly("space_dim", &ParticlePD::space_dim, "d: 2 or 3.")
      .def_property_readonly("horizon", &ParticlePD::horizon, "T: reference steps.")
      .def_property_readonly("dt", &ParticlePD::dt, "Step between reference states (s).")
      .def_property_readonly("t0", &ParticlePD::t0, "Time of x_ref[0] (s).")
      .def_property_readonly("model", [](const ParticlePD& c) { return std::const_pointer_cast<Model>(c.model_ptr()); },
                             "The model.")
      .def_property_readonly("reference", [](py::object self) {
             return view(self.cast<const ParticlePD&>().reference(), self);
           }, "(T+1, n) read-only view of the reference states (a copy taken at construction).")
      .def_property_readonly("reference_rates", [](py::object self) {
             return view(self.cast<const ParticlePD&>().reference_rates(), self);
           }, "(T+1, d P) read-only view of p'(x_ref[i]), the model's particle rates on the reference (m/s).")
      .def("control", [](const ParticlePD& c, const Array& x, Index step) {
             Eigen::VectorXd w(c.r());
             ParticlePDData d = c.create_data();
             c.checked_control(vector(x, "x"), step, w, d);
             return w;
           }, py::arg("x"), py::arg("step"), R"doc(The control of eq. 14 at a state.

Parameters
----------
x : (n,) array
    State [p, z].
step : int
    Reference step i in [0, T].

Returns
-------
(r,) array
    w, the reduced force.)doc")
      .def("gain", [](const ParticlePD& c, Index step) {
             RowMatrix K(c.r(), c.n());
             ParticlePDData d = c.create_data();
             c.gain(step, K, d);
             return K;
           }, py::arg("step"), R"doc(The law's gain dw/dx at the reference state x_ref[step].

K = -[Psi'(k_p I + k_pdot Y), k_z I + k_pdot Psi' Psi] with Psi = dp'/dz and
Y = dp'/dp (the gradient of Psi times z) at x_ref[step]: exact there, and
comparable with an LQR tracker's gain matrices.

Parameters
----------
step : int
    Reference step i in [0, T].

Returns
-------
(r, n) array
    K_i.)doc")
      .def("run", [](const ParticlePD& c, const Array& x0, Index steps, const OptArray& disturbance,
                     py::object progress) {
             auto x = vector(x0, "x0");
             SeqView d = vector_seq(disturbance, "disturbance");
             Progress prog(progress);
             return prog.run([&](const ProgressFn* fn) {
               return std::make_shared<SimulationResult>(simulate_particle_pd(c, x, steps, d, fn));
             });
           }, py::arg("x0"), py::arg("steps"), py::arg("disturbance") = py::none(), py::arg("progress") = py::none(),
           R"doc(A closed-loop run under this law (GIL released).

Parameters
----------
x0 : (n,) array
    Start state.
steps : int
    Steps, in [1, T].
disturbance : (steps, r) array, optional
    Reduced forces added to w over each step.
progress : None or callable(done, total)
    Progress report.

Returns
-------
SimulationResult
    states (steps+1, n), controls = feedback (steps, r): w; effort (steps,):
    |w|^2; tracking_error (steps+1,): |x - x_ref[i]|.)doc")
      .def("sweep", [](const ParticlePD& c, const Array& gains, const Array& x0, Index steps,
                       const OptArray& disturbance, int threads, py::object progress) {
             auto G = rows_view(gains, "gains", 3, -1, false, "m");
             auto x = vector(x0, "x0");
             SeqView d = vector_seq(disturbance, "disturbance");
             Progress prog(progress);
             auto out = prog.run([&](const ProgressFn* fn) {
               return sweep_particle_pd(c, G, x, steps, d, threads, fn);
             });
             py::dict res;
             res["final_error"] = out.final_error;
             res["max_error"] = out.max_error;
             res["effort"] = out.effort;
             res["diverged_at"] = out.diverged_at;
             return res;
           }, py::arg("gains"), py::arg("x0"), py::arg("steps"), py::arg("disturbance") = py::none(),
           py::arg("threads") = 0, py::arg("progress") = py::none(),
           R"doc(Closed-loop runs under many gain settings, in parallel (GIL released).

Parameters
----------
gains : (m, 3) array
    Rows (k_z, k_p, k_pdot), each >= 0.
x0 : (n,) array
    Start state of every run.
steps : int
    Steps, in [1, T].
disturbance : (steps, r) array, optional
    Reduced forces added to w, the same for every run.
threads : int
    Threads (<= 0: all cores).
progress : None or callable(done, total)
    Progress over the settings.

Returns
-------
dict
    ``final_error`` (m, P): distance of each particle to its reference at
    the last step (m); ``max_error`` (m, P): the largest over the run;
    ``effort`` (m,): sum |w|^2 dt; ``diverged_at`` (m,): the step whose state
    went non-finite, -1 for none (errors and effort inf there).)doc");
}

}  // namespace directable::py_bind
