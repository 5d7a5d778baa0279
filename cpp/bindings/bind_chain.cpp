#include "common.hpp"
#include "directable/control/spd.hpp"
#include "directable/sim/servo_tracking.hpp"
#include "directable/models/chain.hpp"

namespace directable::py_bind {

namespace {

// Python subclasses of Articulated (a model of another engine): the C++
// tracking loop calls back into Python (each call takes the GIL).
class PyArticulated : public Articulated {
 public:
  Index dofs() const override { PYBIND11_OVERRIDE_PURE(Index, Articulated, dofs, ); }
  void mass_matrix(const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::MatrixXd> M, ModelData&) const override {
    py::gil_scoped_acquire gil;
    py::function f = py::get_override(static_cast<const Articulated*>(this), "mass_matrix");
    if (!f) throw std::runtime_error("Articulated subclass must define mass_matrix(q)");
    Array r = f(Eigen::VectorXd(q));
    Eigen::MatrixXd Mm = matrix(r, "mass_matrix(q)");
    check_shape("mass_matrix(q)", Mm.rows(), Mm.cols(), M.rows(), M.cols());
    check_finite("mass_matrix(q)", Mm.data(), Mm.size());
    M = Mm;
  }
  void bias_forces(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
                   Eigen::Ref<Eigen::VectorXd> C, ModelData&) const override {
    py::gil_scoped_acquire gil;
    py::function f = py::get_override(static_cast<const Articulated*>(this), "bias_forces");
    if (!f) throw std::runtime_error("Articulated subclass must define bias_forces(q, qd)");
    Array r = f(Eigen::VectorXd(q), Eigen::VectorXd(qd));
    C = vector(r, "bias_forces(q, qd)", C.size(), true);
  }
};

}  // namespace

namespace {

void bind_servo_enums(py::module_& m) {
  py::enum_<Integrator>(m, "Integrator", "Time integrator of the articulated-body loops.")
      .value("explicit_euler", Integrator::explicit_euler)
      .value("semi_implicit_euler", Integrator::semi_implicit_euler)
      .value("rk4", Integrator::rk4);
  py::enum_<Servo>(m, "Servo", "Servo of the tracking loop: none (feed-forward only), pd, spd.")
      .value("none", Servo::none)
      .value("pd", Servo::pd)
      .value("spd", Servo::spd);
}

void bind_articulated(py::module_& m) {
  py::class_<Articulated, PyArticulated, std::shared_ptr<Articulated>>(m, "Articulated", R"doc(
Articulated body in generalized coordinates, M(q) q'' + C(q, q') = tau.

Subclass it in Python by defining dofs() -> n, mass_matrix(q) -> (n, n) and
bias_forces(q, qd) -> (n,) (Coriolis, gravity, passive forces) to drive a
model of another engine with the C++ PD/SPD loop (slow: calls back into
Python twice per step, four times more with RK4).)doc")
      .def(py::init<>())
      .def("dofs", &Articulated::dofs, R"doc(Number of generalized coordinates.

Returns
-------
int
    n.)doc")
      .def("mass_matrix", [](const Articulated& self, const Array& q) {
        auto ws = self.create_workspace();
        Eigen::MatrixXd M(self.dofs(), self.dofs());
        self.mass_matrix(vector(q, "q", self.dofs(), true), M, *ws);
        return M;
      }, py::arg("q"), R"doc(Mass matrix M(q).

Parameters
----------
q : (n,) array
    Joint coordinates (rad; m for a free root's position).

Returns
-------
(n, n) ndarray
    Symmetric positive definite.)doc")
      .def("bias_forces", [](const Articulated& self, const Array& q, const Array& qd) {
        auto ws = self.create_workspace();
        Eigen::VectorXd C(self.dofs());
        self.bias_forces(vector(q, "q", self.dofs(), true), vector(qd, "qd", self.dofs(), true), C, *ws);
        return C;
      }, py::arg("q"), py::arg("qd"), R"doc(Bias forces C(q, qd): Coriolis/centrifugal, gravity and damping.

Parameters
----------
q : (n,) array
    Joint coordinates (rad; m for a free root's position).
qd : (n,) array
    Their velocities.

Returns
-------
(n,) ndarray
    Forces (N m; N).)doc");
}

using PlanarChainClass = py::class_<PlanarChain, Model, Articulated, std::shared_ptr<PlanarChain>>;

//! Dynamics, energies, kinematics and linearization.
void bind_planar_chain_dynamics(PlanarChainClass& cls) {
  cls.def("inverse_dynamics", [](const PlanarChain& self, const Array& q, const Array& qd, const Array& qdd) {
        const Index n = self.dofs();
        auto ws = self.create_data();
        Eigen::VectorXd tau(n);
        self.inverse_dynamics(vector(q, "q", n, true), vector(qd, "qd", n, true), vector(qdd, "qdd", n, true), tau,
                              static_cast<ChainData&>(*ws));
        return tau;
      }, py::arg("q"), py::arg("qd"), py::arg("qdd"), R"doc(Inverse dynamics tau = M(q) qdd + C(q, qd).

Parameters
----------
q : (n,) array
    Joint coordinates (rad; m for a free root's position).
qd : (n,) array
    Their velocities.
qdd : (n,) array
    Accelerations.

Returns
-------
(n,) ndarray
    Torques.)doc")
      .def("forward_dynamics", [](const PlanarChain& self, const Array& q, const Array& qd, const Array& tau) {
        const Index n = self.dofs();
        auto ws = self.create_data();
        Eigen::VectorXd qdd(n);
        self.forward_dynamics(vector(q, "q", n, true), vector(qd, "qd", n, true), vector(tau, "tau", n, true), qdd,
                              static_cast<ChainData&>(*ws));
        return qdd;
      }, py::arg("q"), py::arg("qd"), py::arg("tau"), R"doc(Forward dynamics qdd = M(q)^-1 (tau - C(q, qd)).

Parameters
----------
q : (n,) array
    Joint coordinates (rad; m for a free root's position).
qd : (n,) array
    Their velocities.
tau : (n,) array
    Torques.

Returns
-------
(n,) ndarray
    Accelerations.)doc")
      .def("dynamics_jacobian", [](const PlanarChain& self, const Array& q, const Array& qd, const Array& tau) {
        const Index n = self.dofs();
        auto ws = self.create_data();
        RowMatrix J(n, 2 * n);
        self.dynamics_jacobian(vector(q, "q", n, true), vector(qd, "qd", n, true), vector(tau, "tau", n, true), J,
                               static_cast<ChainData&>(*ws));
        return J;
      }, py::arg("q"), py::arg("qd"), py::arg("tau"),
         R"doc(d qdd / d[q, qd], exact (forward-mode differentiation of Newton-Euler).

Parameters
----------
q : (n,) array
    Joint coordinates (rad; m for a free root's position).
qd : (n,) array
    Their velocities.
tau : (n,) array
    Torques.

Returns
-------
(n, 2n) ndarray)doc")
      .def("kinetic_energy", [](const PlanarChain& self, const Array& q, const Array& qd) {
        return self.kinetic_energy(vector(q, "q", self.dofs(), true), vector(qd, "qd", self.dofs(), true));
      }, py::arg("q"), py::arg("qd"), R"doc(Kinetic energy qd' M(q) qd / 2.

Parameters
----------
q : (n,) array
    Joint coordinates (rad; m for a free root's position).
qd : (n,) array
    Their velocities.

Returns
-------
float
    Energy (J).)doc")
      .def("potential_energy", [](const PlanarChain& self, const Array& q) {
        return self.potential_energy(vector(q, "q", self.dofs(), true));
      }, py::arg("q"), R"doc(Gravitational energy sum m_i g y_i (zero at the root's height).

Parameters
----------
q : (n,) array
    Joint coordinates (rad; m for a free root's position).

Returns
-------
float
    Energy (J).)doc")
      .def("joint_positions", [](const PlanarChain& self, const Array& q) {
        RowMatrix P = self.joint_positions(vector(q, "q", self.dofs(), true)).transpose();
        return P;
      }, py::arg("q"), R"doc(Positions of the root and of each link's far end.

Parameters
----------
q : (n,) array
    Joint coordinates (rad; m for a free root's position).

Returns
-------
(L+1, 2) ndarray
    Positions (m).)doc")
      .def("inverse_dynamics_along", [](const PlanarChain& self, const Array& q, const Array& qd, const Array& qdd) {
        auto Q = rows_view(q, "q", -1, -1, false, "T");
        RowMatrix tau(Q.rows(), self.dofs());
        self.inverse_dynamics_along(Q, rows_view(qd, "qd", -1, -1, false, "T"), rows_view(qdd, "qdd", -1, -1, false, "T"),
                                    tau);
        return tau;
      }, py::arg("q"), py::arg("qd"), py::arg("qdd"), R"doc(tau = M qdd + C along a trajectory.

Parameters
----------
q, qd, qdd : (T, n) array
    Coordinates, velocities, accelerations.

Returns
-------
(T, n) ndarray
    Torques.)doc")
      .def("energies_along", [](const PlanarChain& self, const Array& q, const Array& qd) {
        auto Q = rows_view(q, "q", -1, -1, false, "T");
        Eigen::VectorXd energy(Q.rows());
        self.energies_along(Q, rows_view(qd, "qd", -1, -1, false, "T"), energy);
        return energy;
      }, py::arg("q"), py::arg("qd"), R"doc(Kinetic plus potential energy along a trajectory.

Parameters
----------
q, qd : (T, n) array
    Coordinates and velocities.

Returns
-------
(T,) ndarray
    Energy (J).)doc")
      .def("joint_positions_along", [](const PlanarChain& self, const Array& q) {
        auto Q = rows_view(q, "q", -1, -1, false, "T");
        RowMatrix positions(Q.rows(), 2 * (self.links() + 1));
        self.joint_positions_along(Q, positions);
        return py::cast(std::move(positions)).attr("reshape")(Q.rows(), self.links() + 1, 2);
      }, py::arg("q"), R"doc(Joint positions along a trajectory.

Parameters
----------
q : (T, n) array
    Coordinates.

Returns
-------
(T, L+1, 2) ndarray
    Positions (m).)doc")
      .def("linearize", [](const PlanarChain& self, const Array& z_ref, const OptArray& tau_ref, int threads) {
        SeqView z = vector_seq(z_ref, "z_ref");
        SeqView t = vector_seq(tau_ref, "tau_ref");
        auto A = std::make_unique<MatrixSeq>();
        auto B = std::make_unique<MatrixSeq>();
        {
          py::gil_scoped_release release;
          self.linearize_along(z, t, *A, *B, threads);
        }
        std::vector<py::ssize_t> sa{A->T(), A->rows(), A->cols()}, sb{B->T(), B->rows(), B->cols()};
        return py::make_tuple(owning_array(std::move(A), sa), owning_array(std::move(B), sb));
      }, py::arg("z_ref"), py::arg("tau_ref") = py::none(), py::arg("threads") = 0,
         R"doc((A, B) of f(z, tau) = [qd; M^-1 (tau - C)] along a reference: A (T, 2n, 2n)
and B (T, 2n, n) at z_ref[i] (T+1, 2n), tau_ref[i] (T, n) (zero if None),
for directable.lqr.discretize/solve_continuous. GIL released.

Parameters
----------
z_ref : (T+1, 2n) array
    Reference states [q, qd].
tau_ref : (T, n) array, optional
    Reference torques (zero when None).
threads : int, optional
    Cores (0: all).

Returns
-------
A : (T, 2n, 2n) ndarray
B : (T, 2n, n) ndarray)doc");
}

void bind_planar_chain(py::module_& m) {
  PlanarChainClass cls(m, "PlanarChain", R"doc(
Planar chain of L rigid links joined by hinges (generalized coordinates).

The root joint is pinned at the origin (free_root: q = [x, y, theta_1..L]
adds the root position); joint angles are relative to the parent link; q = 0
hangs straight down, gravity along -y. Links are uniform rods (centre of mass
at l/2, inertia m l^2/12 about it) unless inertias/coms are given. damping
(n,) is viscous per coordinate; q_min/q_max (n,) are hard joint limits.
M q'' + C = tau with C = Coriolis/centrifugal + gravity + damping q'.
As a Model: z = [q, q'], control = tau (n,). Immutable: shared freely by threads.

Parameters
----------
masses : (L,) array
    Link masses (kg), > 0.
lengths : (L,) array
    Link lengths (m), > 0.
gravity : float, optional
    Gravitational acceleration (m/s^2), along -y.
inertias : float or (L,) array, optional
    Link inertias about their centres of mass (kg m^2); uniform rods when None.
coms : float or (L,) array, optional
    Distances of the centres of mass from the joints (m); l/2 when None.
damping : float or (n,) array, optional
    Viscous damping per coordinate (N m s/rad), n = L (+ 2 with free_root).
q_min, q_max : float or (n,) array, optional
    Hard joint limits (rad; m for a free root's position).
free_root : bool, optional
    The root position (x, y) is free: q = [x, y, theta_1..L].)doc");
  cls.def(py::init([](const Array& masses, const Array& lengths, double gravity, const OptArray& inertias,
                       const OptArray& coms, const OptArray& damping, const OptArray& q_min, const OptArray& q_max,
                       bool free_root) {
        ChainParams p;
        p.masses = vector(masses, "masses", -1, true);
        p.lengths = vector(lengths, "lengths", -1, true);
        const Index L = p.masses.size(), n = L + (free_root ? 2 : 0);
        p.inertias = broadcast_vector(inertias, "inertias", L);
        p.coms = broadcast_vector(coms, "coms", L);
        p.damping = broadcast_vector(damping, "damping", n);
        p.q_min = broadcast_vector(q_min, "q_min", n);
        p.q_max = broadcast_vector(q_max, "q_max", n);
        p.gravity = gravity;
        p.free_root = free_root;
        return std::make_shared<PlanarChain>(std::move(p));
      }), py::arg("masses"), py::arg("lengths"), py::arg("gravity") = 9.81, py::arg("inertias") = py::none(),
         py::arg("coms") = py::none(), py::arg("damping") = py::none(), py::arg("q_min") = py::none(),
         py::arg("q_max") = py::none(), py::arg("free_root") = false,
         "masses (L,) > 0, lengths (L,) > 0, inertias (L,) about the COMs, coms (L,) distances from the joints, "
         "damping/q_min/q_max (n,) with n = L (+2 with free_root); scalars are broadcast.")
      .def_property_readonly("links", &PlanarChain::links, "Number of links L.")
      .def_property_readonly("n", &PlanarChain::dofs, "Number of coordinates n = L (+2 with a free root).")
      .def_property_readonly("free_root", [](const PlanarChain& c) { return c.params().free_root; },
                             "Whether the root moves freely in the plane (two more coordinates).")
      .def_property_readonly("masses", [](const PlanarChain& c) { return c.params().masses; }, "(L,)")
      .def_property_readonly("lengths", [](const PlanarChain& c) { return c.params().lengths; }, "(L,)")
      .def_property_readonly("inertias", [](const PlanarChain& c) { return c.params().inertias; }, "(L,) about the COMs")
      .def_property_readonly("coms", [](const PlanarChain& c) { return c.params().coms; }, "(L,)")
      .def_property_readonly("damping", [](const PlanarChain& c) { return c.params().damping; }, "(n,)")
      .def_property_readonly("q_min", [](const PlanarChain& c) { return c.params().q_min; }, "(n,)")
      .def_property_readonly("q_max", [](const PlanarChain& c) { return c.params().q_max; }, "(n,)")
      .def_property_readonly("gravity", [](const PlanarChain& c) { return c.params().gravity; },
                             "Gravity (m/s^2), along -y.");
  bind_planar_chain_dynamics(cls);
}

void bind_servo_tracking(py::module_& m) {
  py::class_<TrackResult, std::shared_ptr<TrackResult>>(m, "TrackResult", R"doc(
A PD/SPD tracking run (arrays are read-only views of this object's memory).
Rows after a divergence are NaN: q[:diverged_at+1] and tau[:diverged_at] are
the valid part.)doc")
      .def_property_readonly("q", [](py::object self) { return view(self.cast<TrackResult&>().q, self); }, "(T+1, n)")
      .def_property_readonly("qd", [](py::object self) { return view(self.cast<TrackResult&>().qd, self); }, "(T+1, n)")
      .def_property_readonly("tau", [](py::object self) { return view(self.cast<TrackResult&>().tau, self); },
                             "(T, n) servo + feed-forward torque (without tau_ext)")
      .def_property_readonly("diverged", [](const TrackResult& r) { return r.diverged; },
                             "Whether the run left the valid states (the rows after diverged_at are NaN).")
      .def_property_readonly("diverged_at", [](const TrackResult& r) { return r.diverged_at; },
                             "Step whose result was non-finite or beyond max_state, or -1.")
      .def_property_readonly("steps", [](const TrackResult& r) { return r.steps; }, "Steps completed with a valid state.");

  m.def("track", [](std::shared_ptr<Articulated> model, const Array& q0, const Array& qd0, const Array& q_ref,
                    const OptArray& qd_ref, const OptArray& kp, const OptArray& kd, double dt, Servo servo,
                    Integrator integrator, const OptArray& tau_ff, const OptArray& tau_ext, const OptArray& tau_min,
                    const OptArray& tau_max, double max_state, py::object progress) {
    const Articulated& chain = deref(model, "model", "articulated model (PlanarChain, Articulated)");
    TrackInputs in;
    in.q_ref = vector_seq(q_ref, "q_ref");
    in.qd_ref = vector_seq(qd_ref, "qd_ref");
    if (kp) in.kp = vector_or_sequence(*kp, "kp");
    if (kd) in.kd = vector_or_sequence(*kd, "kd");
    in.tau_ff = vector_seq(tau_ff, "tau_ff");
    in.tau_ext = vector_seq(tau_ext, "tau_ext");
    in.tau_min = optional_vector(tau_min, "tau_min");
    in.tau_max = optional_vector(tau_max, "tau_max");
    in.servo = servo;
    in.integrator = integrator;
    in.dt = dt;
    in.max_state = max_state;
    auto q = vector(q0, "q0");
    auto v = vector(qd0, "qd0");
    Progress prog(progress);
    return prog.run([&](const ProgressFn* fn) { return std::make_shared<TrackResult>(track(chain, q, v, in, fn)); });
  }, py::arg("model"), py::arg("q0"), py::arg("qd0"), py::arg("q_ref"), py::arg("qd_ref") = py::none(),
     py::arg("kp") = py::none(), py::arg("kd") = py::none(), py::arg("dt") = 0.0, py::arg("servo") = Servo::spd,
     py::arg("integrator") = Integrator::explicit_euler, py::arg("tau_ff") = py::none(), py::arg("tau_ext") = py::none(),
     py::arg("tau_min") = py::none(), py::arg("tau_max") = py::none(), py::arg("max_state") = 1e6,
     py::arg("progress") = py::none(),
     R"doc(Tracking loop in C++ (GIL released): T steps of a PD/SPD servo + integrator.

q0, qd0 (n,); q_ref (T+1, n); qd_ref (T+1, n) or None (zero reference
velocity); kp, kd (n,) or (T, n); tau_ff, tau_ext (T, n) feed-forward and
external torques; tau_min, tau_max (n,) torque limits. Divergence (a
non-finite state or |q|, |qd| > max_state) stops the run and is reported in
the TrackResult (q, qd (T+1, n), tau (T, n), diverged, diverged_at).)doc");

  m.def("spd_step", [](const Array& M, const Array& C, const Array& q, const Array& qd, const Array& q_ref_next,
                       const Array& qd_ref_next, const Array& kp, const Array& kd, double dt) {
    auto Mm = rows_view(M, "M", -1, -1, false, "n", "n");
    Eigen::VectorXd tau(Mm.rows()), qdd(Mm.rows());
    spd_from_matrices(Mm, vector(C, "C"), vector(q, "q"), vector(qd, "qd"), vector(q_ref_next, "q_ref_next"),
                      vector(qd_ref_next, "qd_ref_next"), vector(kp, "kp"), vector(kd, "kd"), dt, tau, qdd);
    return py::make_tuple(tau, qdd);
  }, py::arg("M"), py::arg("C"), py::arg("q"), py::arg("qd"), py::arg("q_ref_next"), py::arg("qd_ref_next"),
     py::arg("kp"), py::arg("kd"), py::arg("dt"),
     R"doc(One SPD evaluation (eq. 5/11) from given M (n, n) and C (n,): returns (tau,
qdd), each (n,). q, qd, q_ref_next, qd_ref_next, kp, kd (n,). For models of
another engine: apply tau there and step it.)doc");
}

}  // namespace

void bind_chain(py::module_& m) {
  bind_servo_enums(m);
  bind_articulated(m);
  bind_planar_chain(m);
  bind_servo_tracking(m);
}

}  // namespace directable::py_bind
