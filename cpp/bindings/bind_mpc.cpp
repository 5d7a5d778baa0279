#include "common.hpp"
#include "directable/control/mpc/mpc.hpp"
#include "directable/models/model.hpp"

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
// optionally has_jacobians and jacobians(x, u, i).
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
  void step(const CRefVec& x, const CRefVec& u, RefVec x_next, Index i) const override {
    py::gil_scoped_acquire gil;
    Array r = call("step")(Eigen::VectorXd(x), Eigen::VectorXd(u), i);
    x_next = vector(r, "step(x, u, i)", x_next.size(), true);
  }
  void vjp(const CRefVec& x, const CRefVec& u, const CRefVec& lam, RefVec gx, RefVec gu, Index i) const override {
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
  void jacobians(const CRefVec& x, const CRefVec& u, Eigen::Ref<RowMatrix> A, Eigen::Ref<RowMatrix> B,
                 Index i) const override {
    py::gil_scoped_acquire gil;
    py::tuple r = call("jacobians")(Eigen::VectorXd(x), Eigen::VectorXd(u), i);
    if (r.size() != 2) throw std::invalid_argument("jacobians(x, u, i) must return (A (n, n), B (n, s))");
    Eigen::MatrixXd Am = matrix(r[0].cast<Array>(), "jacobians(...)[0]"), Bm = matrix(r[1].cast<Array>(), "jacobians(...)[1]");
    check_shape("jacobians(...)[0]", Am.rows(), Am.cols(), A.rows(), A.cols());
    check_shape("jacobians(...)[1]", Bm.rows(), Bm.cols(), B.rows(), B.cols());
    A = Am;
    B = Bm;
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

// u_reference (H, s) or None -> the optimizer's control reference (empty = zero).
void set_u_reference(HorizonOptimizer& self, const OptArray& ur) {
  if (!ur) {
    self.set_control_reference(Eigen::VectorXd());
    return;
  }
  if (ur->ndim() != 2 || ur->shape(0) != self.horizon() || ur->shape(1) != self.s())
    throw_shape("u_reference", shape_str(self.horizon(), self.s()),
                ur->ndim() == 2 ? shape_str(ur->shape(0), ur->shape(1)) : std::to_string(ur->ndim()) + "-D array");
  self.set_control_reference(Eigen::Map<const Eigen::VectorXd>(ur->data(), ur->size()));
}

py::dict stats_dict(const MPCStats& st) {
  py::dict d;
  d["cost_initial"] = st.cost_initial;
  d["cost"] = st.cost;
  d["iterations"] = st.iterations;
  d["evaluations"] = st.evaluations;
  d["gradients"] = st.gradients;
  d["seconds"] = st.seconds;
  return d;
}

}  // namespace

void bind_mpc(py::module_& m) {
  py::class_<PredictionModel, PyPredictionModel, std::shared_ptr<PredictionModel>>(m, "PredictionModel", R"doc(
Discrete prediction model x+ = step(x, u) with its vector-Jacobian product.

Subclass it in Python by defining the properties n and s, step(x, u, i) ->
(n,) and vjp(x, u, lam, i) -> ((n,), (s,)); for method='gauss_newton' also
has_jacobians = True and jacobians(x, u, i) -> ((n, n), (n, s)). The C++
optimizer then calls back into Python (slow, but any model can be driven).)doc")
      .def(py::init<>())
      .def_property_readonly("n", &PredictionModel::n, "State dimension.")
      .def_property_readonly("s", &PredictionModel::s, "Control dimension.")
      .def_property_readonly("has_jacobians", &PredictionModel::has_jacobians,
                             "Whether jacobians() is available (Gauss-Newton method).")
      .def("step", [](const PredictionModel& self, const Array& x, const Array& u, Index i) {
        auto xv = vector(x, "x", self.n(), true);
        auto uv = vector(u, "u", self.s(), true);
        Eigen::VectorXd out(self.n());
        self.step(xv, uv, out, i);
        return out;
      }, py::arg("x"), py::arg("u"), py::arg("i") = 0, "x (n,), u (s,) -> x+ (n,) at window step i.")
      .def("vjp", [](const PredictionModel& self, const Array& x, const Array& u, const Array& lam, Index i) {
        auto xv = vector(x, "x", self.n(), true);
        auto uv = vector(u, "u", self.s(), true);
        auto lv = vector(lam, "lam", self.n(), true);
        Eigen::VectorXd gx(self.n()), gu(self.s());
        self.vjp(xv, uv, lv, gx, gu, i);
        return py::make_tuple(gx, gu);
      }, py::arg("x"), py::arg("u"), py::arg("lam"), py::arg("i") = 0,
         "x (n,), u (s,), lam (n,) -> ((dx+/dx)' lam (n,), (dx+/du)' lam (s,)).")
      .def("vjp_controls", [](const PredictionModel& self, const Array& x, const Array& u, const Array& lam, Index i) {
        auto xv = vector(x, "x", self.n(), true);
        auto uv = vector(u, "u", self.s(), true);
        auto lv = vector(lam, "lam", self.n(), true);
        Eigen::VectorXd gx(self.n()), gu(self.s());
        self.vjp_controls(xv, uv, lv, gx, gu, i);
        return gu;
      }, py::arg("x"), py::arg("u"), py::arg("lam"), py::arg("i") = 0,
         "(dx+/du)' lam (s,) alone, as the optimizer's adjoint pass takes it at the window's first step\n"
         "(cheaper than vjp where the model offers it).")
      .def("jacobians", [](const PredictionModel& self, const Array& x, const Array& u, Index i) {
        auto xv = vector(x, "x", self.n(), true);
        auto uv = vector(u, "u", self.s(), true);
        RowMatrix A(self.n(), self.n()), B(self.n(), self.s());
        self.jacobians(xv, uv, A, B, i);
        return py::make_tuple(A, B);
      }, py::arg("x"), py::arg("u"), py::arg("i") = 0, "x (n,), u (s,) -> (A (n, n), B (n, s)) = (dx+/dx, dx+/du).");

  py::class_<LinearPredictionModel, PredictionModel, std::shared_ptr<LinearPredictionModel>>(
      m, "LinearPredictionModel", "Discrete linear model x+ = A x + B u.")
      .def(py::init([](const Array& A, const Array& B) {
        return std::make_shared<LinearPredictionModel>(matrix(A, "A"), matrix(B, "B"));
      }), py::arg("A"), py::arg("B"), "A (n, n), B (n, s) (copied).")
      .def_property_readonly("A", [](const LinearPredictionModel& s) { return RowMatrix(s.A()); }, "(n, n) copy.")
      .def_property_readonly("B", [](const LinearPredictionModel& s) { return RowMatrix(s.B()); }, "(n, s) copy.");

  py::class_<ModelEulerPrediction, PredictionModel, std::shared_ptr<ModelEulerPrediction>>(m, "ModelEulerPrediction", R"doc(
Prediction with a Model z' = F(z, t) + B w: one explicit Euler step
x+ = x + dt (F(x, t0 + i dt) + B u) per window step i (a simplified
predictor); exact VJP and Jacobians of that step.)doc")
      .def(py::init([](std::shared_ptr<Model> model, double dt, double t0) {
        return std::make_shared<ModelEulerPrediction>(model, dt, t0);
      }), py::arg("model"), py::arg("dt"), py::arg("t0") = 0.0, "model: a Model (n states, s controls); dt > 0.")
      .def_property_readonly("dt", &ModelEulerPrediction::dt, "Step length.");

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

  py::enum_<MPCMethod>(m, "MPCMethod")
      .value("lbfgs", MPCMethod::LBFGS)
      .value("gauss_newton", MPCMethod::GaussNewton);

  py::class_<HorizonOptimizer, std::shared_ptr<HorizonOptimizer>>(m, "HorizonOptimizer", R"doc(
Optimises the controls of one window of J = ||x_H - r_H||^2_C +
sum_{i<H} ||x_i - r_i||^2_Q + ||u_i||^2_R over a PredictionModel.)doc")
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
      .def_property_readonly("has_solution", &HorizonOptimizer::has_solution,
                             "Whether a previous solution exists (used as warm start).")
      .def("reset", &HorizonOptimizer::reset, "Forget the previous solution (next solve starts from u = 0).")
      .def("cost_and_gradient", [](HorizonOptimizer& self, const Array& x0, const Array& reference, const Array& u,
                                   const OptArray& u_reference) {
        if (u.ndim() != 2 || u.shape(0) != self.horizon() || u.shape(1) != self.s())
          throw_shape("u", shape_str(self.horizon(), self.s()), u.ndim() == 2 ? shape_str(u.shape(0), u.shape(1)) : "another rank");
        check_finite("u", u.data(), u.size());
        auto xv = vector(x0, "x0", self.n());
        const SeqView ref = vector_seq(reference, "reference");
        self.check_inputs(xv, ref);
        set_u_reference(self, u_reference);
        Eigen::VectorXd uv = Eigen::Map<const Eigen::VectorXd>(u.data(), u.size()), g;
        double J;
        {
          py::gil_scoped_release release;
          J = self.cost_and_gradient(xv, ref, uv, &g);
        }
        RowMatrix G = Eigen::Map<const RowMatrix>(g.data(), self.horizon(), self.s());
        return py::make_tuple(J, G);
      }, py::arg("x0"), py::arg("reference"), py::arg("u"), py::arg("u_reference") = py::none(),
         "x0 (n,), reference (H+1, n), u (H, s), u_reference (H, s) or None (zero) -> (J, dJ/du (H, s)) by one "
         "adjoint pass; the control term is ||u - u_reference||^2_R.")
      .def("solve", [](HorizonOptimizer& self, const Array& x0, const Array& reference, const OptArray& u0,
                       const OptArray& u_reference) {
        auto xv = vector(x0, "x0", self.n());
        const SeqView ref = vector_seq(reference, "reference");
        set_u_reference(self, u_reference);
        Eigen::VectorXd start;
        if (u0) {
          if (u0->ndim() != 2 || u0->shape(0) != self.horizon() || u0->shape(1) != self.s())
            throw_shape("u0", shape_str(self.horizon(), self.s()),
                        u0->ndim() == 2 ? shape_str(u0->shape(0), u0->shape(1)) : "another rank");
          start = Eigen::Map<const Eigen::VectorXd>(u0->data(), u0->size());
        }
        MPCStats st;
        {
          py::gil_scoped_release release;
          st = self.solve(xv, ref, u0 ? &start : nullptr);
        }
        py::dict d = stats_dict(st);
        d["u"] = RowMatrix(Eigen::Map<const RowMatrix>(self.controls().data(), self.horizon(), self.s()));
        d["states"] = RowMatrix(Eigen::Map<const RowMatrix>(self.states().data(), self.horizon() + 1, self.n()));
        return d;
      }, py::arg("x0"), py::arg("reference"), py::arg("u0") = py::none(), py::arg("u_reference") = py::none(),
         R"doc(Optimise one window (GIL released).

x0 (n,), reference (H+1, n), u0 (H, s) or None (warm start: the previous
solution shifted by one step, zeros the first time), u_reference (H, s) or
None: the control term is ||u_i - u_reference_i||^2_R (e.g. a feed-forward). Returns a dict with u
(H, s), states (H+1, n), cost, cost_initial, iterations, evaluations (cost), gradients,
seconds.)doc")
      .def("run", [](HorizonOptimizer& self, std::shared_ptr<PredictionModel> plant, const Array& x0,
                     const Array& reference, Index steps, py::object progress) {
        auto xv = vector(x0, "x0", self.n(), true);
        const SeqView ref = vector_seq(reference, "reference");
        self.set_control_reference(Eigen::VectorXd());  // the loop weighs ||u||^2_R
        Progress prog(progress);
        auto res = prog.run([&](const ProgressFn* fn) { return run_receding(self, *plant, xv, ref, steps, fn); });
        py::dict d;
        d["states"] = RowMatrix(Eigen::Map<const RowMatrix>(res.states.data(), steps + 1, self.n()));
        d["controls"] = RowMatrix(Eigen::Map<const RowMatrix>(res.controls.data(), steps, self.s()));
        d["cost_initial"] = res.cost_initial;
        d["cost"] = res.cost;
        d["seconds"] = res.seconds;
        d["iterations"] = res.iterations;
        return d;
      }, py::arg("plant"), py::arg("x0"), py::arg("reference"), py::arg("steps"), py::arg("progress") = py::none(),
         R"doc(Receding-horizon loop (GIL released): at each step optimise the window
reference[t : t+H+1] from the plant's actual state (warm-started), apply the
first control to plant, shift. x0 (n,), reference (steps+H+1, n). Returns a
dict with states (steps+1, n), controls (steps, s), and per step cost_initial,
cost, seconds, iterations (steps,).)doc");

  m.def("minimize_lbfgs", [](py::function fun, const Array& x0, const OptArray& lower, const OptArray& upper,
                             Index iterations, Index memory, double gtol) {
    Eigen::VectorXd x = vector(x0, "x0", -1, true);
    Eigen::VectorXd lo = optional_vector(lower, "lower"), hi = optional_vector(upper, "upper");
    if (lo.size() && lo.size() != x.size()) throw_shape("lower", "(" + std::to_string(x.size()) + ",)", "(" + std::to_string(lo.size()) + ",)");
    if (hi.size() && hi.size() != x.size()) throw_shape("upper", "(" + std::to_string(x.size()) + ",)", "(" + std::to_string(hi.size()) + ",)");
    if (iterations < 0) throw std::invalid_argument("iterations must be >= 0");
    LBFGSOptions o;
    o.iterations = iterations;
    o.memory = memory;
    o.gtol = gtol;
    auto fg = [&](const Eigen::VectorXd& v, Eigen::VectorXd& g) {
      py::tuple r = fun(Eigen::VectorXd(v));
      g = r[1].cast<Eigen::VectorXd>();
      if (g.size() != v.size()) throw std::invalid_argument("fun must return (f, gradient of shape (N,))");
      return r[0].cast<double>();
    };
    const MPCStats st = minimize_lbfgs(fg, x, lo, hi, o);
    py::dict d = stats_dict(st);
    d["x"] = x;
    return d;
  }, py::arg("fun"), py::arg("x0"), py::arg("lower") = py::none(), py::arg("upper") = py::none(),
     py::arg("iterations") = 100, py::arg("memory") = 10, py::arg("gtol") = 0.0,
     R"doc(Projected L-BFGS on a box. fun(x (N,)) -> (f, gradient (N,)); x0 (N,);
lower/upper (N,) or None. Returns a dict with x (N,), cost, cost_initial,
iterations, evaluations, gradients, seconds. Holds the GIL (fun is Python).)doc");
}

}  // namespace directable::py_bind
