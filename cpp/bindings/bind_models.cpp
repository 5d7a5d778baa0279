#include "common.hpp"
#include "directable/models/spring_chain.hpp"

namespace directable::py_bind {

namespace {

// Lets Python subclasses of Model drive the C++ loop (each call takes the GIL).
class PyModel : public Model {
 public:
  Index state_dim() const override { PYBIND11_OVERRIDE_PURE(Index, Model, state_dim, ); }
  Index control_dim() const override { PYBIND11_OVERRIDE_PURE(Index, Model, control_dim, ); }
  void dynamics(const Eigen::Ref<const Eigen::VectorXd>& z, double t, Eigen::Ref<Eigen::VectorXd> F) const override {
    py::gil_scoped_acquire gil;
    py::function f = py::get_override(static_cast<const Model*>(this), "dynamics");
    if (!f) throw std::runtime_error("Model subclass must define dynamics(z, t)");
    Array r = f(Eigen::VectorXd(z), t);
    F = vector(r, "dynamics(z, t)", F.size());
  }
  void jacobian(const Eigen::Ref<const Eigen::VectorXd>& z, double t, Eigen::Ref<RowMatrix> J) const override {
    py::gil_scoped_acquire gil;
    py::function f = py::get_override(static_cast<const Model*>(this), "jacobian");
    if (!f) throw std::runtime_error("Model subclass must define jacobian(z, t)");
    Array r = f(Eigen::VectorXd(z), t);
    Eigen::MatrixXd Jm = matrix(r, "jacobian(z, t)");
    check_shape("jacobian(z, t)", Jm.rows(), Jm.cols(), J.rows(), J.cols());
    J = Jm;
  }
  //! B is constant: fetched from Python on the first call, under the GIL
  //! (which orders the fill before every later read), and never rewritten,
  //! so the reference handed out stays valid and threads may share it.
  const Eigen::MatrixXd& control_matrix() const override {
    py::gil_scoped_acquire gil;
    if (!control_->filled) {
      py::function f = py::get_override(static_cast<const Model*>(this), "control_matrix");
      if (!f) throw std::runtime_error("Model subclass must define control_matrix()");
      control_->B = matrix(f().cast<Array>(), "control_matrix()");
      control_->filled = true;
    }
    return control_->B;
  }

 private:
  struct ControlMatrix {
    bool filled = false;
    Eigen::MatrixXd B;  //!< n x s
  };
  const std::unique_ptr<ControlMatrix> control_ = std::make_unique<ControlMatrix>();
};

}  // namespace

void bind_models(py::module_& m) {
  py::class_<Model, PyModel, std::shared_ptr<Model>>(m, "Model", R"doc(
Reduced dynamics z' = F(z, t) + B w, the interface controllers drive.

Subclass it in Python by defining state_dim(), control_dim(), dynamics(z, t)
-> (n,), jacobian(z, t) -> (n, n) and control_matrix() -> (n, s) (constant:
read once); the C++
loop then calls back into Python (slow, but handy for prototyping).)doc")
      .def(py::init<>())
      .def("state_dim", &Model::state_dim, R"doc(State size.

Returns
-------
int
    n.)doc")
      .def("control_dim", &Model::control_dim, R"doc(Control size.

Returns
-------
int
    s.)doc")
      .def("dynamics", [](const Model& self, const Array& z, double t) {
        Eigen::VectorXd F(self.state_dim());
        self.dynamics(vector(z, "z", self.state_dim(), true), t, F);
        return F;
      }, py::arg("z"), py::arg("t") = 0.0, R"doc(The drift F(z, t).

Parameters
----------
z : (n,) array
    State.
t : float, optional
    Time (s).

Returns
-------
(n,) ndarray
    F(z, t), the state's rate without control.)doc")
      .def("jacobian", [](const Model& self, const Array& z, double t) {
        RowMatrix J(self.state_dim(), self.state_dim());
        self.jacobian(vector(z, "z", self.state_dim(), true), t, J);
        return J;
      }, py::arg("z"), py::arg("t") = 0.0, R"doc(The Jacobian dF/dz.

Parameters
----------
z : (n,) array
    State.
t : float, optional
    Time (s).

Returns
-------
(n, n) ndarray
    dF/dz at (z, t) (1/s).)doc")
      .def("control_matrix", [](const Model& self) { return Eigen::MatrixXd(self.control_matrix()); }, R"doc(The control matrix.

Returns
-------
(n, s) ndarray
    B of z' = F(z, t) + B w (constant).)doc")
      .def("step", [](const Model& self, const Array& z, const Array& w, double dt, double t) {
        check_positive("dt", dt);
        auto data = self.create_data();
        Eigen::VectorXd out(self.state_dim());
        self.step(vector(z, "z", self.state_dim()), t, dt, vector(w, "w", self.control_dim()), out, *data);
        if (!out.allFinite()) throw std::domain_error("step produced a non-finite state: reduce dt");
        return out;
      }, py::arg("z"), py::arg("w"), py::arg("dt"), py::arg("t") = 0.0,
         R"doc(One step of the model's own integrator with the control held.

Parameters
----------
z : (n,) array
    State.
w : (s,) array
    Control.
dt : float
    Step length (s).
t : float, optional
    Time (s).

Returns
-------
(n,) ndarray
    The next state.)doc");

  py::class_<SpringChain, Model, std::shared_ptr<SpringChain>>(m, "SpringChain", R"doc(
1D chain of m masses joined by damped Duffing springs, the first tied to a
wall. Spring j joins mass j-1 (the wall for j = 0) and mass j with tension
k_j d + k3_j d^3 + c_j d'. State z = [x (m), v (m)], n = 2m; control w (s,)
are forces on the masses selected by actuated (m, s) (identity: s = m).

Parameters
----------
masses : (m,) array
    Masses (kg).
stiffness : (m,) array
    Linear stiffness k_j (N/m).
cubic : (m,) array
    Cubic stiffness k3_j (N/m^3).
damping : (m,) array
    Damping c_j (N s/m).
actuated : (m, s) array, optional
    Which masses the controls push (identity when None).)doc")
      .def(py::init([](const Array& masses, const Array& stiffness, const Array& cubic, const Array& damping,
                       const OptArray& actuated) {
        auto ms = vector(masses, "masses");
        Index m_ = ms.size();
        Eigen::MatrixXd S = actuated ? matrix(*actuated, "actuated") : Eigen::MatrixXd();
        return std::make_shared<SpringChain>(ms, vector(stiffness, "stiffness", m_), vector(cubic, "cubic", m_),
                                             vector(damping, "damping", m_), S);
      }), py::arg("masses"), py::arg("stiffness"), py::arg("cubic"), py::arg("damping"),
         py::arg("actuated") = py::none())
      .def("energy", [](const SpringChain& self, const Array& z) { return self.energy(vector(z, "z", -1, true)); }, py::arg("z"),
           R"doc(Kinetic plus elastic energy.

Parameters
----------
z : (n,) array
    State.

Returns
-------
float
    Energy (J).)doc")
      .def_property_readonly("masses", [](const SpringChain& s) { return s.masses(); }, "(m,) masses (kg).")
      .def_property_readonly("stiffness", [](const SpringChain& s) { return s.stiffness(); }, "(m,) linear stiffness (N/m).")
      .def_property_readonly("cubic", [](const SpringChain& s) { return s.cubic(); }, "(m,) cubic stiffness (N/m^3).")
      .def_property_readonly("damping", [](const SpringChain& s) { return s.damping(); }, "(m,) damping (N s/m).")
      .def_property_readonly("actuated", [](const SpringChain& s) { return s.actuated(); },
                             "(m, s) actuation: which masses the controls push.");

  m.def("linearize", [](const Model& model, const Array& z_ref, double dt, double t0, std::optional<Index> horizon,
                        int threads, py::object progress) {
    SeqView z = vector_seq(z_ref, "z_ref");
    if (horizon && *horizon <= 0)
      throw std::invalid_argument("horizon must be a positive number of steps, got " + std::to_string(*horizon));
    Progress prog(progress);
    auto A = prog.run([&](const ProgressFn* fn) {
      return std::make_unique<MatrixSeq>(linearize(model, z, horizon.value_or(0), t0, dt, threads, fn));
    });
    std::vector<py::ssize_t> shape{A->T(), A->rows(), A->cols()};
    return owning_array(std::move(A), shape);
  }, py::arg("model"), py::arg("z_ref"), py::arg("dt"), py::arg("t0") = 0.0, py::arg("horizon") = py::none(),
     py::arg("threads") = 0, py::arg("progress") = py::none(),
     R"doc(A_i = dF/dz at z_ref[i], t0 + i dt: (T, n, n) for z_ref (T+1, n) (the
last state is not linearized). Parallel over steps, GIL released.)doc");
}

}  // namespace directable::py_bind
