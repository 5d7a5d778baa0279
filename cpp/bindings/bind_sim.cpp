#include "common.hpp"
#include "directable/sim/simulate.hpp"
#include "tracker_object.hpp"

namespace directable::py_bind {

// Declarations only: long as one chained definition per class.
void bind_sim(py::module_& m) {
  py::class_<SimulationResult, std::shared_ptr<SimulationResult>>(m, "SimulationResult", R"doc(
Arrays of a controlled run (read-only views of this object's memory).)doc")
      .def_property_readonly("states", [](py::object self) { return view(self.cast<SimulationResult&>().states, self); },
                             "(N+1, n) states.")
      .def_property_readonly("controls", [](py::object self) { return view(self.cast<SimulationResult&>().controls, self); },
                             "(N, s) applied control w = w_ff + w_fb (disturbance excluded).")
      .def_property_readonly("feedback", [](py::object self) { return view(self.cast<SimulationResult&>().feedback, self); },
                             "(N, s) feedback part w_fb.")
      .def_property_readonly("tracking_error",
                             [](py::object self) { return view_vector(self.cast<SimulationResult&>().tracking_error, self); },
                             "(N+1,) |z_i - z_ref[index_i]|.")
      .def_property_readonly("effort", [](py::object self) { return view_vector(self.cast<SimulationResult&>().effort, self); },
                             "(N,) |w_fb|^2 per step.")
      .def_property_readonly("ref_index", [](const SimulationResult& r) { return Eigen::VectorXi(r.ref_index); },
                             "(N+1,) tracked reference step.");

  py::class_<ControlledSimulation, std::shared_ptr<ControlledSimulation>>(m, "Simulation", R"doc(
Model + optional controller stepped one step at a time from Python; the
same code path as simulate(). Keeps model and controller alive. The
controller starts at its current index and then keeps its own (see
`index`): the Tracker object's index does not move.

Parameters
----------
model : Model
    The plant.
z0 : (n,) array
    Initial state.
dt : float
    Step length (s).
controller : Tracker, optional
    LQR or PD tracker; None runs open loop.
t0 : float, optional
    Initial time (s).)doc")
      .def(py::init([](std::shared_ptr<Model> model, const Array& z0, double dt,
                       std::shared_ptr<TrackerObject> controller, double t0) {
        const Tracker* schedule = controller ? controller->schedule.get() : nullptr;
        const Index start = controller ? controller->data.index() : 0;
        return std::make_shared<ControlledSimulation>(deref(model, "model", "directable Model"), schedule,
                                                      vector(z0, "z0"), dt, t0, start);
      }), py::arg("model"), py::arg("z0"), py::arg("dt"), py::arg("controller") = nullptr, py::arg("t0") = 0.0,
         py::keep_alive<1, 2>(), py::keep_alive<1, 5>())
      .def("step", [](ControlledSimulation& self, const OptArray& w_ext, const OptArray& w_open, const OptArray& kick) {
        const Index s = self.last_control().size(), n = self.state().size();
        const double* e = w_ext ? vector(*w_ext, "w_ext", s).data() : nullptr;
        const double* o = w_open ? vector(*w_open, "w_open", s).data() : nullptr;
        const double* k = kick ? vector(*kick, "kick", n).data() : nullptr;
        self.checked_step(e, o, k);
      }, py::arg("w_ext") = py::none(), py::arg("w_open") = py::none(), py::arg("kick") = py::none(),
         R"doc(One step of the closed loop.

Parameters
----------
w_ext : (s,) array, optional
    Disturbance added to the control.
w_open : (s,) array, optional
    Open-loop control, when there is no controller.
kick : (n,) array, optional
    Added to the state first.)doc")
      .def_property("state", [](const ControlledSimulation& s) { return Eigen::VectorXd(s.state()); },
                    [](ControlledSimulation& s, const Array& z) { s.set_state(vector(z, "state")); },
                    "Current state (n,), a copy.")
      .def_property_readonly("time", &ControlledSimulation::time, "Current time (s).")
      .def_property_readonly("steps", &ControlledSimulation::steps_taken, "Steps taken so far.")
      .def_property_readonly("dt", &ControlledSimulation::dt, "Step length (s).")
      .def_property_readonly("index", &ControlledSimulation::reference_index,
                             "The controller's reference step (0 without a controller).")
      .def_property_readonly("last_control", [](const ControlledSimulation& s) { return Eigen::VectorXd(s.last_control()); },
                             "(s,) control applied at the last step (a copy).")
      .def_property_readonly("last_feedback", [](const ControlledSimulation& s) { return Eigen::VectorXd(s.last_feedback()); },
                             "(s,) feedback part of the last control (a copy).")
      .def_property_readonly("tracking_error", &ControlledSimulation::tracking_error,
                             "|z - z_ref[index]| at the current state.");

  m.def("simulate", [](std::shared_ptr<Model> model, const Array& z0, Index steps, double dt,
                       std::shared_ptr<TrackerObject> controller, double t0, const OptArray& disturbance,
                       const OptArray& open_loop, const OptArray& kicks, std::optional<Eigen::VectorXi> jump_steps,
                       std::optional<Index> start_index, py::object progress) {
    const Model& plant = deref(model, "model", "directable Model");
    SimulationInputs in;
    in.disturbance = vector_seq(disturbance, "disturbance");
    in.open_loop = vector_seq(open_loop, "open_loop");
    in.kicks = vector_seq(kicks, "kicks");
    if (jump_steps) in.jump_steps = *jump_steps;
    auto z = vector(z0, "z0");
    // The run keeps its own controller data; the Tracker object's index
    // (where the run starts when start_index is None) moves to where it ended.
    std::shared_ptr<const Tracker> schedule = controller ? controller->schedule : nullptr;
    const Index start = start_index ? *start_index : controller ? controller->data.index() : 0;
    Progress prog(progress);
    auto result = prog.run([&](const ProgressFn* fn) {
      return std::make_shared<SimulationResult>(simulate(plant, schedule.get(), z, steps, dt, t0, in, start, fn));
    });
    if (controller) schedule->set_index(controller->data, result->ref_index[steps]);
    return result;
  }, py::arg("model"), py::arg("z0"), py::arg("steps"), py::arg("dt"), py::arg("controller") = nullptr,
     py::arg("t0") = 0.0, py::arg("disturbance") = py::none(), py::arg("open_loop") = py::none(),
     py::arg("kicks") = py::none(), py::arg("jump_steps") = py::none(), py::arg("start_index") = 0,
     py::arg("progress") = py::none(),
     R"doc(Runs steps steps of model + controller in C++ (GIL released).

z0 (n,); disturbance (N, s) forces added to w; open_loop (N, s) control used
when controller is None; kicks (N, n) added to the state before each step;
jump_steps: steps at which the controller jumps to the closest reference
state; start_index: the controller's first reference step (None: the
Tracker's index). The run keeps its own controller state, so one Tracker may
serve several runs at once; afterwards the Tracker's index is where the run
ended. Returns a SimulationResult.)doc");
}

}  // namespace directable::py_bind
