#include <utility>

#include "common.hpp"
#include "directable/control/mpc/optimizer.hpp"
#include "directable/linalg/lbfgs.hpp"
#include "directable/models/model.hpp"
#include "directable/models/prediction/euler.hpp"
#include "directable/models/prediction/linear.hpp"
#include "directable/models/prediction/substeps.hpp"
#include "directable/sim/plant_servo.hpp"
#include "directable/sim/receding_horizon.hpp"
#include "directable/sim/sph_plant.hpp"

namespace directable::py_bind {

namespace {

CostWeight cost_weight(const Array& a, const std::string& name) {
  CostWeight w;
  if (a.ndim() == 1)
    w.diag = Eigen::Map<const Eigen::VectorXd>(a.data(), a.shape(0));
  else if (a.ndim() == 2)
    w.dense = Eigen::Map<const RowMatrix>(a.data(), a.shape(0), a.shape(1));
  else
    throw std::invalid_argument(name + " must be a (n,) diagonal or an (n, n) matrix, got a " +
                                std::to_string(a.ndim()) + "-D array");
  return w;
}

// Lets Python subclasses of PredictionModel drive the optimizer (each call
// takes the GIL): define n, s (properties), step(x, u, i) and vjp(x, u, lam, i);
// optionally has_jacobians and jacobians(x, u, i). The data argument is
// unused: a Python model keeps what it needs itself.
class PyPredictionModel : public PredictionModel {
 public:
  Index n() const override {
    py::gil_scoped_acquire gil;
    return attr("n").cast<Index>();
  }
  Index s() const override {
    py::gil_scoped_acquire gil;
    return attr("s").cast<Index>();
  }
  void step(const CRefVec& x, const CRefVec& u, RefVec x_next, Index i, PredictionData&) const override {
    py::gil_scoped_acquire gil;
    Array r = call("step")(Eigen::VectorXd(x), Eigen::VectorXd(u), i);
    x_next = vector(r, "step(x, u, i)", x_next.size(), true);
  }
  void vjp(const CRefVec& x, const CRefVec& u, const CRefVec& lam, RefVec gx, RefVec gu, Index i,
           PredictionData&) const override {
    py::gil_scoped_acquire gil;
    py::tuple r = call("vjp")(Eigen::VectorXd(x), Eigen::VectorXd(u), Eigen::VectorXd(lam), i);
    if (r.size() != 2) throw std::invalid_argument("vjp(x, u, lam, i) must return (gx (n,), gu (s,))");
    gx = vector(r[0].cast<Array>(), "vjp(...)[0]", gx.size(), true);
    gu = vector(r[1].cast<Array>(), "vjp(...)[1]", gu.size(), true);
  }
  bool has_jacobians() const override {
    py::gil_scoped_acquire gil;
    py::object self = py::cast(static_cast<const PredictionModel*>(this));
    if (py::type::of(self).attr("has_jacobians").is(py::type::of<PredictionModel>().attr("has_jacobians"))) return false;
    return self.attr("has_jacobians").cast<bool>();
  }
  void jacobians(const CRefVec& x, const CRefVec& u, Eigen::Ref<RowMatrix> A, Eigen::Ref<RowMatrix> B, Index i,
                 PredictionData&) const override {
    py::gil_scoped_acquire gil;
    py::tuple r = call("jacobians")(Eigen::VectorXd(x), Eigen::VectorXd(u), i);
    if (r.size() != 2) throw std::invalid_argument("jacobians(x, u, i) must return (A (n, n), B (n, s))");
    A = rows_view(r[0].cast<Array>(), "jacobians(...)[0]", A.cols(), A.rows(), true);
    B = rows_view(r[1].cast<Array>(), "jacobians(...)[1]", B.cols(), B.rows(), true);
  }

 private:
  py::object attr(const char* name) const {  // caller holds the GIL
    py::object self = py::cast(static_cast<const PredictionModel*>(this));
    // the base class's property would call back here: require the subclass's own
    if (py::type::of(self).attr(name).is(py::type::of<PredictionModel>().attr(name)))
      throw std::runtime_error(std::string("PredictionModel subclass must define ") + name);
    return self.attr(name);
  }
  py::function call(const char* name) const {
    py::function f = py::get_override(static_cast<const PredictionModel*>(this), name);
    if (!f) throw std::runtime_error(std::string("PredictionModel subclass must define ") + name + "()");
    return f;
  }
};

py::dict stats_dict(double cost_initial, double cost, Index iterations, Index evaluations, Index gradients,
                    double seconds) {
  py::dict d;
  d["cost_initial"] = cost_initial;
  d["cost"] = cost;
  d["iterations"] = iterations;
  d["evaluations"] = evaluations;
  d["gradients"] = gradients;
  d["seconds"] = seconds;
  return d;
}

RowMatrix as_rows(const double* data, Index rows, Index cols) { return Eigen::Map<const RowMatrix>(data, rows, cols); }

// The caller's data, or a fresh one for this call.
PredictionData& data_or_fresh(const PredictionModel& model, PredictionData* data,
                              std::unique_ptr<PredictionData>& fresh) {
  if (data) {
    model.check_data(*data);
    return *data;
  }
  fresh = model.create_data();
  return *fresh;
}

// (gx, gu) of vjp, or of vjp_controls (gx unspecified) with controls_only.
std::pair<Eigen::VectorXd, Eigen::VectorXd> vjp_call(const PredictionModel& self, const Array& x, const Array& u,
                                                     const Array& lam, Index i, PredictionData* data,
                                                     bool controls_only) {
  auto xv = vector(x, "x");
  auto uv = vector(u, "u");
  self.check_arguments(xv, "x", uv, "u");
  auto lv = vector(lam, "lam", self.n(), true);
  Eigen::VectorXd gx(self.n()), gu(self.s());
  std::unique_ptr<PredictionData> fresh;
  PredictionData& d = data_or_fresh(self, data, fresh);
  Progress prog{py::none()};  // Ctrl-C inside one step (Substeps of a huge count)
  prog.run_checked([&] {
    if (controls_only)
      self.vjp_controls(xv, uv, lv, gx, gu, i, d);
    else
      self.vjp(xv, uv, lv, gx, gu, i, d);
    return 0;
  });
  return {gx, gu};
}

// One chained declaration per class (long, but declarations only).
void bind_prediction_models(py::module_& m) {
  py::class_<PredictionData>(m, "PredictionData", R"doc(
Buffers of a prediction model's calls (tapes, scratch), from its
create_data(); one per thread. Passing the same data to successive calls
lets a model reuse what it recorded (e.g. the SPH model's tapes).)doc");

  py::class_<PredictionModel, PyPredictionModel, std::shared_ptr<PredictionModel>>(m, "PredictionModel", R"doc(
Discrete prediction model x+ = step(x, u) with its vector-Jacobian product.

Subclass it in Python by defining the properties n and s, step(x, u, i) ->
(n,) and vjp(x, u, lam, i) -> ((n,), (s,)); for method='gauss_newton' also
has_jacobians = True and jacobians(x, u, i) -> ((n, n), (n, s)). The C++
optimizer then calls back into Python (slow, but any model can be driven).
The C++ models are immutable: one may be used from several threads at once.)doc")
      .def(py::init<>())
      .def_property_readonly("n", &PredictionModel::n, "State dimension.")
      .def_property_readonly("s", &PredictionModel::s, "Control dimension.")
      .def_property_readonly("has_jacobians", &PredictionModel::has_jacobians,
                             "Whether jacobians() is available (Gauss-Newton method).")
      .def("create_data", &PredictionModel::create_data, R"doc(Buffers for this model's calls (one per thread).

Returns
-------
PredictionData)doc")
      .def("step", [](const PredictionModel& self, const Array& x, const Array& u, Index i, PredictionData* data) {
        auto xv = vector(x, "x");
        auto uv = vector(u, "u");
        self.check_arguments(xv, "x", uv, "u");
        Eigen::VectorXd out(self.n());
        std::unique_ptr<PredictionData> fresh;
        PredictionData& d = data_or_fresh(self, data, fresh);
        Progress prog{py::none()};  // Ctrl-C inside one step (Substeps of a huge count)
        prog.run_checked([&] {
          self.step(xv, uv, out, i, d);
          return 0;
        });
        return out;
      }, py::arg("x"), py::arg("u"), py::arg("i") = 0, py::arg("data") = py::none(),
         R"doc(One step x+ = f(x, u).

Parameters
----------
x : (n,) array
    State.
u : (s,) array
    Control.
i : int, optional
    Window step (for time-varying models).
data : PredictionData, optional
    From create_data() (one per thread); None: a fresh one.

Returns
-------
(n,) ndarray
    x+.)doc")
      .def("vjp", [](const PredictionModel& self, const Array& x, const Array& u, const Array& lam, Index i,
                     PredictionData* data) { return vjp_call(self, x, u, lam, i, data, false); },
         py::arg("x"), py::arg("u"), py::arg("lam"), py::arg("i") = 0, py::arg("data") = py::none(),
         R"doc(Vector-Jacobian products of one step (the adjoint pass).

Parameters
----------
x : (n,) array
    State.
u : (s,) array
    Control.
lam : (n,) array
    Adjoint of x+.
i : int, optional
    Window step (for time-varying models).
data : PredictionData, optional
    From create_data() (one per thread); None: a fresh one.

Returns
-------
dx : (n,) ndarray
    (dx+/dx)' lam.
du : (s,) ndarray
    (dx+/du)' lam.)doc")
      .def("vjp_controls", [](const PredictionModel& self, const Array& x, const Array& u, const Array& lam, Index i,
                              PredictionData* data) { return vjp_call(self, x, u, lam, i, data, true).second; },
         py::arg("x"), py::arg("u"), py::arg("lam"), py::arg("i") = 0, py::arg("data") = py::none(),
         R"doc((dx+/du)' lam alone, as the optimizer's adjoint pass takes it at the window's first step.

Cheaper than vjp where the model offers it.

Parameters
----------
x : (n,) array
    State.
u : (s,) array
    Control.
lam : (n,) array
    Adjoint of x+.
i : int, optional
    Window step (for time-varying models).
data : PredictionData, optional
    From create_data() (one per thread); None: a fresh one.

Returns
-------
(s,) ndarray)doc")
      .def("jacobians", [](const PredictionModel& self, const Array& x, const Array& u, Index i, PredictionData* data) {
        auto xv = vector(x, "x");
        auto uv = vector(u, "u");
        self.check_arguments(xv, "x", uv, "u");
        RowMatrix A(self.n(), self.n()), B(self.n(), self.s());
        std::unique_ptr<PredictionData> fresh;
        PredictionData& d = data_or_fresh(self, data, fresh);
        Progress prog{py::none()};
        prog.run_checked([&] {
          self.jacobians(xv, uv, A, B, i, d);
          return 0;
        });
        return py::make_tuple(A, B);
      }, py::arg("x"), py::arg("u"), py::arg("i") = 0, py::arg("data") = py::none(),
         R"doc(Jacobians of one step (Gauss-Newton method).

Parameters
----------
x : (n,) array
    State.
u : (s,) array
    Control.
i : int, optional
    Window step (for time-varying models).
data : PredictionData, optional
    From create_data() (one per thread); None: a fresh one.

Returns
-------
A : (n, n) ndarray
    dx+/dx.
B : (n, s) ndarray
    dx+/du.)doc");

  py::class_<LinearPrediction, PredictionModel, std::shared_ptr<LinearPrediction>>(
      m, "LinearPrediction", "Discrete linear model x+ = A x + B u.")
      .def(py::init([](const Array& A, const Array& B) {
        return std::make_shared<LinearPrediction>(matrix(A, "A"), matrix(B, "B"));
      }), py::arg("A"), py::arg("B"), "A (n, n), B (n, s) (copied).")
      .def_property_readonly("A", [](const LinearPrediction& s) { return RowMatrix(s.A()); }, "(n, n) copy.")
      .def_property_readonly("B", [](const LinearPrediction& s) { return RowMatrix(s.B()); }, "(n, s) copy.");

  py::class_<EulerPrediction, PredictionModel, std::shared_ptr<EulerPrediction>>(m, "EulerPrediction", R"doc(
Prediction with a Model z' = F(z, t) + B w: one explicit Euler step
x+ = x + dt (F(x, t0 + i dt) + B u) per window step i (a simplified
predictor); exact VJP and Jacobians of that step.)doc")
      .def(py::init([](std::shared_ptr<Model> model, double dt, double t0) {
        return std::make_shared<EulerPrediction>(model, dt, t0);
      }), py::arg("model"), py::arg("dt"), py::arg("t0") = 0.0, "model: a Model (n states, s controls); dt > 0.")
      .def_property_readonly("dt", &EulerPrediction::dt, "Step length.");

  py::class_<SubstepPrediction, PredictionModel, std::shared_ptr<SubstepPrediction>>(m, "SubstepPrediction", R"doc(
`count` steps of another prediction model per step, the control held (e.g.
a frame of simulation steps); VJP and Jacobians chained exactly.)doc")
      .def(py::init([](std::shared_ptr<PredictionModel> model, Index count) {
        return std::make_shared<SubstepPrediction>(model, count);
      }), py::arg("model"), py::arg("count"), "model: a PredictionModel; count >= 1 inner steps per step.")
      .def_property_readonly("count", &SubstepPrediction::count, "Inner steps per step.")
      .def_property_readonly("model", [](const SubstepPrediction& s) {
        return std::const_pointer_cast<PredictionModel>(s.inner());
      }, "The inner model.");
}

void bind_plants(py::module_& m) {
  py::class_<Plant, std::shared_ptr<Plant>>(m, "Plant", R"doc(
The system a receding-horizon loop drives (HorizonOptimizer.run): its state
(n,), advanced one control step at a time with the control (s,) held.)doc")
      .def_property_readonly("n", &Plant::n, "State dimension.")
      .def_property_readonly("s", &Plant::s, "Control dimension.")
      .def_property_readonly("state", [](const Plant& self) {
        return read_locked(&self, [&] {  // not in the middle of a run's step
          Eigen::VectorXd x(self.n());
          self.state(x);
          return x;
        });
      }, "Current state (n,) (a copy).");

  py::class_<ModelPlant, Plant, std::shared_ptr<ModelPlant>>(m, "ModelPlant", R"doc(
A Model integrated by its own step as a receding-horizon plant.

Each control step takes `substeps` steps of dt / substeps with the control
w = u + disturbance[t]. The plant keeps its state: runs on one plant from
several threads take turns.

Parameters
----------
model : Model
    The continuous model z' = F(z, t) + B w.
x0 : (n,) array
    Initial state.
dt : float
    Length of one control step (s), > 0.
substeps : int, optional
    Model steps per control step, >= 1.
t0 : float, optional
    Time of the initial state (s).
disturbance : (T, s) array, optional
    Forces added to the control at steps t < T; none when None.)doc")
      .def(py::init([](std::shared_ptr<Model> model, const Array& x0, double dt, Index substeps, double t0,
                       const OptArray& disturbance) {
        return std::make_shared<ModelPlant>(model, vector(x0, "x0"), dt, substeps, t0,
                                            vector_seq(disturbance, "disturbance"));
      }), py::arg("model"), py::arg("x0"), py::arg("dt"), py::arg("substeps") = 1, py::arg("t0") = 0.0,
         py::arg("disturbance") = py::none(),
         "Builds the plant (see the class).");

  py::class_<DiscretePlant, Plant, std::shared_ptr<DiscretePlant>>(m, "DiscretePlant", R"doc(
A prediction model as the plant: x+ = step(x, u + disturbance[t]).

The plant keeps its state: runs on one plant from several threads take turns.

Parameters
----------
model : PredictionModel
    The discrete model x+ = f(x, u).
x0 : (n,) array
    Initial state.
disturbance : (T, s) array, optional
    Added to the control at steps t < T; none when None.)doc")
      .def(py::init([](std::shared_ptr<PredictionModel> model, const Array& x0, const OptArray& disturbance) {
        return std::make_shared<DiscretePlant>(model, vector(x0, "x0"), vector_seq(disturbance, "disturbance"));
      }), py::arg("model"), py::arg("x0"), py::arg("disturbance") = py::none(),
         "Builds the plant (see the class).");

  m.def("run_plant_servo", [](std::shared_ptr<Plant> plant, const Array& q_ref, const Array& qd_ref, const Array& kp,
                              const Array& kd, const Array& u_ff, Index steps, py::object progress) {
    if (!plant) throw std::invalid_argument("plant must be a Plant, got None");
    const PlantServoLaw law{vector(q_ref, "q_ref"), vector(qd_ref, "qd_ref"), vector(kp, "kp"), vector(kd, "kd"),
                            vector(u_ff, "u_ff")};
    Progress prog(progress);
    auto res = prog.run([&](const ProgressFn* fn) {
      ObjectLock busy(plant.get());  // a plant keeps its state: one run at a time
      return run_plant_servo(*plant, law, steps, fn);
    });
    return py::make_tuple(as_rows(res.states.data(), steps + 1, plant->n()),
                          as_rows(res.controls.data(), steps, plant->s()));
  }, py::arg("plant"), py::arg("q_ref"), py::arg("qd_ref"), py::arg("kp"), py::arg("kd"), py::arg("u_ff"),
     py::arg("steps"), py::arg("progress") = py::none(),
     R"doc(PD servo on a plant with state [q, q'] (s = n / 2), GIL released:
u_t = u_ff + kp * (q_ref - q_t) + kd * (qd_ref - q'_t) for t < steps, after
the plant's events of step t. q_ref, qd_ref, kp, kd, u_ff (s,). Returns
(states (steps+1, n), controls (steps, s)).)doc");
}

// One chained declaration per class (long, but declarations only).
void bind_optimizer(py::module_& m) {
  py::enum_<MPCMethod>(m, "MPCMethod")
      .value("lbfgs", MPCMethod::LBFGS)
      .value("gauss_newton", MPCMethod::GaussNewton);

  py::class_<HorizonWorkspace>(m, "HorizonWorkspace", R"doc(
Buffers of one thread's solves with a HorizonOptimizer, and the previous
solution (the warm start of the next solve). Make one per thread with
HorizonOptimizer.create_workspace().)doc")
      .def_property_readonly("has_solution", [](const HorizonWorkspace& w) {
        return read_locked(&w, [&] { return w.has_solution; });
      },
                             "Whether a previous solution exists (used as warm start).")
      .def("reset", [](HorizonWorkspace& w) {
        py::gil_scoped_release release;
        ObjectLock busy(&w);  // not during another thread's solve
        w.forget_solution();
      },
           "Forget the previous solution (the next solve starts from u = 0, with a unit-length first step).")
      .def_property_readonly("curvature_scale", [](const HorizonWorkspace& w) {
        return read_locked(&w, [&] { return w.curvature_scale; });
      },
                             "s'y / y'y of the last L-BFGS solve's first correction pair (0: none): the first "
                             "step's scale of the next warm-started solve.");

  py::class_<HorizonOptimizer, std::shared_ptr<HorizonOptimizer>>(m, "HorizonOptimizer", R"doc(
Optimises the controls of one window of J = ||x_H - r_H||^2_C +
sum_{i<H} ||x_i - r_i||^2_Q + ||u_i - ur_i||^2_R over a PredictionModel.
Immutable: one optimizer may solve from several threads, each with its own
HorizonWorkspace.)doc")
      .def(py::init([](std::shared_ptr<PredictionModel> model, Index horizon, const Array& Q, const Array& R,
                       const Array& C, Index iterations, double time_budget, Index memory, MPCMethod method,
                       const OptArray& lower, const OptArray& upper) {
        MPCOptions o;
        o.horizon = horizon;
        o.iterations = iterations;
        o.time_budget = time_budget;
        o.memory = memory;
        o.method = method;
        ControlLimits lim{optional_vector(lower, "lower"), optional_vector(upper, "upper")};
        return std::make_shared<HorizonOptimizer>(model, o, cost_weight(Q, "Q"), cost_weight(R, "R"),
                                                  cost_weight(C, "C"), lim);
      }), py::arg("model"), py::arg("horizon"), py::arg("Q"), py::arg("R"), py::arg("C"), py::arg("iterations") = 50,
         py::arg("time_budget") = 0.0, py::arg("memory") = 10, py::arg("method") = MPCMethod::LBFGS,
         py::arg("lower") = py::none(), py::arg("upper") = py::none(),
         "Q, C (n,) diagonal or (n, n); R (s,) or (s, s), positive definite; lower/upper (s,) or None; "
         "time_budget seconds per solve (<= 0: none).")
      .def_property_readonly("n", &HorizonOptimizer::n)
      .def_property_readonly("s", &HorizonOptimizer::s)
      .def_property_readonly("horizon", &HorizonOptimizer::horizon)
      .def("create_workspace", &HorizonOptimizer::create_workspace, "A new workspace (no previous solution).")
      .def("cost_and_gradient", [](const HorizonOptimizer& self, HorizonWorkspace& ws, const Array& x0,
                                   const Array& reference, const Array& u, const OptArray& u_reference) {
        auto xv = vector(x0, "x0");
        const SeqView ref = vector_seq(reference, "reference"), uv = vector_seq(u, "u"),
                      ur = vector_seq(u_reference, "u_reference");
        double J;
        RowMatrix gradient;
        {
          py::gil_scoped_release release;
          ObjectLock busy(&ws);
          J = self.cost_and_gradient(ws, xv, ref, uv, ur);
          gradient = as_rows(ws.gradient.data(), self.horizon(), self.s());
        }
        return py::make_tuple(J, gradient);
      }, py::arg("workspace"), py::arg("x0"), py::arg("reference"), py::arg("u"), py::arg("u_reference") = py::none(),
         "x0 (n,), reference (H+1, n), u (H, s), u_reference (H, s) or None (zero) -> (J, dJ/du (H, s)) by one "
         "adjoint pass; the control term is ||u - u_reference||^2_R.")
      .def("solve", [](const HorizonOptimizer& self, HorizonWorkspace& ws, const Array& x0, const Array& reference,
                       const OptArray& u0, const OptArray& u_reference, const std::optional<double>& curvature_scale) {
        auto xv = vector(x0, "x0");
        const SeqView ref = vector_seq(reference, "reference"), start = vector_seq(u0, "u0"),
                      ur = vector_seq(u_reference, "u_reference");
        // Ctrl-C and the GIL: checked between iterations; one workspace
        // serves one solve at a time (a second thread waits for it)
        // the results are copied before the workspace is released
        struct Solved {
          MPCStats st;
          RowMatrix u, states;
        };
        Progress prog{py::none()};
        auto keep_going = prog.keep_going();
        const Solved out = prog.run_checked([&] {
          ObjectLock busy(&ws);
          const MPCStats st = self.solve(ws, xv, ref, start, ur, keep_going, curvature_scale.value_or(-1.0));
          return Solved{st, as_rows(ws.u.data(), self.horizon(), self.s()),
                        as_rows(ws.states.data(), self.horizon() + 1, self.n())};
        });
        const MPCStats& st = out.st;
        py::dict d = stats_dict(st.cost_initial, st.cost, st.iterations, st.evaluations, st.gradients, st.seconds);
        d["u"] = out.u;
        d["states"] = out.states;
        d["curvature_scale"] = st.curvature_scale;
        return d;
      }, py::arg("workspace"), py::arg("x0"), py::arg("reference"), py::arg("u0") = py::none(),
         py::arg("u_reference") = py::none(), py::arg("curvature_scale") = py::none(),
         R"doc(Optimise one window (GIL released) with the buffers of `workspace`.

x0 (n,), reference (H+1, n), u0 (H, s) or None (warm start: the workspace's
previous solution shifted by one step, zeros the first time), u_reference
(H, s) or None: the control term is ||u_i - u_reference_i||^2_R (e.g. a
feed-forward). curvature_scale: L-BFGS's first-step scale (a previous
solve's curvature_scale; 0: a unit-length step), None: the workspace's when
warm-starting from it. Returns a dict with u (H, s), states (H+1, n), cost,
cost_initial, iterations, evaluations (cost), gradients, seconds,
curvature_scale.)doc")
      .def("run", [](const HorizonOptimizer& self, std::shared_ptr<Plant> plant, const Array& reference, Index steps,
                     const OptArray& u_reference, const OptArray& u0, py::object progress) {
        if (!plant) throw std::invalid_argument("plant is missing");
        const SeqView ref = vector_seq(reference, "reference"), ur = vector_seq(u_reference, "u_reference"),
                      start = vector_seq(u0, "u0");
        Progress prog(progress);
        auto res = prog.run([&](const ProgressFn* fn) {
          ObjectLock busy(plant.get());  // a plant keeps its state: one run at a time
          return run_receding(self, *plant, ref, steps, ur, start, fn);
        });
        py::dict d;
        d["states"] = as_rows(res.states.data(), steps + 1, self.n());
        d["controls"] = as_rows(res.controls.data(), steps, self.s());
        d["cost_initial"] = res.cost_initial;
        d["cost"] = res.cost;
        d["seconds"] = res.seconds;
        d["iterations"] = res.iterations;
        return d;
      }, py::arg("plant"), py::arg("reference"), py::arg("steps"), py::arg("u_reference") = py::none(),
         py::arg("u0") = py::none(), py::arg("progress") = py::none(),
         R"doc(Receding-horizon loop (GIL released): at each step optimise the window
reference[t : t+H+1] from the plant's actual state (warm-started), apply the
first control to plant, shift. reference (steps+H+1, n); u_reference
(steps+H, s) or None; u0 (H, s): the first window's starting controls, or
None. Returns a dict with states (steps+1, n), controls (steps, s), and per
step cost_initial, cost, seconds, iterations (steps,).)doc");
}

template <int D>
void bind_sph_plant(py::module_& m, const char* name) {
  using Vec = Eigen::Matrix<double, D, 1>;
  const std::string Ds = std::to_string(D);
  py::class_<SPHPlant<D>, Plant, std::shared_ptr<SPHPlant<D>>>(
      m, name,
      ("The " + Ds + "D SPH fluid as a receding-horizon plant." + R"doc(

State (2 D N,) = [positions; velocities], control (D N,): per-particle forces
held over frame_steps simulation steps. Steps the fluid in place (the fluid's
lock is taken per step; runs on one plant take turns).

Parameters
----------
fluid : SPHFluid2D or SPHFluid3D
    The fluid, stepped in place.
frame_steps : int
    Simulation steps per control step, >= 1.
prediction : SPHPrediction or SPHPrediction3D, optional
    A prediction model of this fluid, refrozen at the fluid's state before
    every window; None for none.)doc")
          .c_str())
      .def(py::init([](std::shared_ptr<SPHFluid<D>> fluid, Index frame_steps,
                       std::shared_ptr<SPHPredictionT<D>> prediction) {
        return std::make_shared<SPHPlant<D>>(fluid, frame_steps, prediction);
      }), py::arg("fluid"), py::arg("frame_steps"), py::arg("prediction") = py::none(),
         "Builds the plant (see the class).")
      .def("launch_sphere", [](SPHPlant<D>& self, Index frame, const Array& centre, double radius,
                               const Array& velocity) {
        const Vec c = vector(centre, "centre", D), v = vector(velocity, "velocity", D);
        py::gil_scoped_release release;
        ObjectLock busy(static_cast<Plant*>(&self));  // not while a run steps the plant
        self.launch_sphere(frame, c, radius, v);
      }, py::arg("frame"), py::arg("centre"), py::arg("radius"), py::arg("velocity"),
         R"doc(Schedules the rigid sphere's launch at the start of control step `frame`.

Parameters
----------
frame : int
    Control step at whose start the sphere appears, >= 0.
centre : (D,) array
    Its centre (m), inside the domain.
radius : float
    Its radius (m), > 0.
velocity : (D,) array
    Its velocity (m/s).)doc");
}

}  // namespace

void bind_sph_plants(py::module_& m) {
  bind_sph_plant<2>(m, "SPHPlant2D");
  bind_sph_plant<3>(m, "SPHPlant3D");
}

void bind_mpc(py::module_& m) {
  bind_prediction_models(m);
  bind_plants(m);
  bind_optimizer(m);

  m.def("minimize_lbfgs", [](py::function fun, const Array& x0, const OptArray& lower, const OptArray& upper,
                             Index iterations, Index memory, double gtol, double initial_scale) {
    Eigen::VectorXd x = vector(x0, "x0", -1, true);
    LBFGSOptions o;
    o.iterations = iterations;
    o.memory = memory;
    o.gtol = gtol;
    o.initial_scale = initial_scale;
    auto fg = [&](const Eigen::VectorXd& v, Eigen::VectorXd& g) {
      py::tuple r = fun(Eigen::VectorXd(v));
      if (r.size() != 2) throw std::invalid_argument("fun must return (f, gradient of shape (N,))");
      g = vector(r[1].cast<Array>(), "fun(x)[1]", v.size());
      return r[0].cast<double>();
    };
    const LBFGSResult st =
        minimize_lbfgs(fg, x, optional_vector(lower, "lower"), optional_vector(upper, "upper"), o);
    py::dict d = stats_dict(st.cost_initial, st.cost, st.iterations, st.evaluations, st.gradients, st.seconds);
    d["x"] = x;
    d["scale"] = st.scale;
    return d;
  }, py::arg("fun"), py::arg("x0"), py::arg("lower") = py::none(), py::arg("upper") = py::none(),
     py::arg("iterations") = 100, py::arg("memory") = 10, py::arg("gtol") = 0.0, py::arg("initial_scale") = 0.0,
     R"doc(Projected L-BFGS on a box: minimises fun over lower <= x <= upper.

Holds the GIL (fun is Python); Ctrl-C stops it between evaluations.

Parameters
----------
fun : callable(x) -> (float, (N,) array)
    The objective and its gradient at x (N,).
x0 : (N,) array
    Starting point, finite (projected onto the box first).
lower, upper : (N,) array, optional
    Bounds (-inf / +inf allowed; lower <= upper); None for none.
iterations : int, optional
    Most iterations, >= 0.
memory : int, optional
    Correction pairs kept, >= 1.
gtol : float, optional
    Stop when the projected gradient's largest entry is <= gtol.
initial_scale : float, optional
    > 0: the inverse-Hessian scale of the first step (before any correction
    pair exists), e.g. the ``scale`` of a previous, related minimisation
    (units of x per unit of gradient); 0: the first step has unit length.

Returns
-------
dict
    ``x`` (N,), ``cost``, ``cost_initial``, ``iterations``, ``evaluations``,
    ``gradients``, ``seconds``, ``scale`` (s'y / y'y of the first stored
    pair, ``initial_scale`` if none: the curvature scale to start a related
    problem with).)doc");
}

}  // namespace directable::py_bind
