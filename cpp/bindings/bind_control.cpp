#include "common.hpp"
#include "directable/control/lqr/discretize.hpp"
#include "directable/control/lqr/riccati.hpp"
#include "directable/control/lqr/stationary.hpp"
#include "directable/control/lqr/tracker.hpp"
#include "tracker_object.hpp"

namespace directable::py_bind {

namespace {

// Q_final: an (n, n) array, or "dare" (the stationary P of the last step).
FinalCost final_cost(const py::object& Q_final) {
  if (py::isinstance<py::str>(Q_final)) {
    const auto name = Q_final.cast<std::string>();
    if (name == "dare") return FinalCost::stationary_solution();
    throw std::invalid_argument("Q_final must be an (n, n) array, a scalar or \"dare\", got \"" + name + "\"");
  }
  return FinalCost(matrix(Q_final.cast<Array>(), "Q_final"));
}

// Sweep of an already validated problem (GIL released).
std::shared_ptr<LQRSolution> sweep(const LQRProblem& p, py::object progress) {
  auto sol = std::make_shared<LQRSolution>(p.horizon, p.n(), p.s());
  Progress prog(progress);
  prog.run([&](const ProgressFn* fn) {
    riccati_sweep(p, *sol, fn);
    return 0;
  });
  return sol;
}

// LQRSolution and the discrete sweep.
void bind_riccati(py::module_& m) {
  py::class_<LQRSolution, std::shared_ptr<LQRSolution>>(m, "LQRSolution", R"doc(
Gains and cost-to-go of a discrete LQR problem.

K (T, s, n) and P (T+1, n, n) are read-only NumPy views of this object's
memory (no copy): they stay valid as long as any of them or this object is
alive. Copy them (np.array(sol.K)) to modify.

Parameters
----------
K : (T, s, n) array
    Gains (copied), e.g. from a saved file.
P : (T+1, n, n) array
    Cost-to-go matrices (copied).)doc", py::dynamic_attr())
      .def(py::init([](const Array& K, const Array& P) {
        return std::make_shared<LQRSolution>(matrix_seq(K, "K"), matrix_seq(P, "P"));
      }), py::arg("K"), py::arg("P"), "From saved arrays K (T, s, n) and P (T+1, n, n) (copied).")
      .def_property_readonly("K", [](py::object self) { return view(self.cast<LQRSolution&>().K, self); },
                             "(T, s, n) feedback gains, u_i = K_i x_i.")
      .def_property_readonly("P", [](py::object self) { return view(self.cast<LQRSolution&>().P, self); },
                             "(T+1, n, n) cost-to-go matrices, J*_i(x) = x' P_i x.")
      .def_property_readonly("horizon", &LQRSolution::horizon, "Number of steps T.")
      .def_property_readonly("n", &LQRSolution::n, "State size n.")
      .def_property_readonly("s", &LQRSolution::s, "Control size s.")
      .def("cost_to_go", [](const LQRSolution& self, const Array& x, Index step) {
        return self.cost_to_go(vector(x, "x"), step);
      }, py::arg("x"), py::arg("step") = 0, R"doc(Optimal cost x' P_step x from a state.

Parameters
----------
x : (n,) array
    State (deviation from the reference).
step : int, optional
    Step in [0, T].

Returns
-------
float
    The cost to go.)doc");

  m.def("solve_discrete", [](const Array& A, const Array& B, const Array& Q, const Array& R, const py::object& Q_final,
                             const OptArray& N, std::optional<Index> horizon, py::object progress,
                             bool allow_indefinite_Q) {
    LQRProblem p = discrete_problem(matrix_seq(A, "A"), matrix_seq(B, "B"), matrix_seq(Q, "Q"), matrix_seq(R, "R"),
                                    final_cost(Q_final), matrix_seq(N, "N"), horizon, allow_indefinite_Q);
    return sweep(p, progress);
  }, py::arg("A"), py::arg("B"), py::arg("Q"), py::arg("R"), py::arg("Q_final"), py::arg("N") = py::none(),
     py::arg("horizon") = py::none(), py::arg("progress") = py::none(), py::arg("allow_indefinite_Q") = false,
     R"doc(Riccati backward sweep of the discrete LTV LQR problem (GIL released).

A (T, n, n), B (T, n, s), Q (T, n, n), R (T, s, s), N (T, n, s): per step, or
one matrix constant in time; Q_final (n, n) or "dare" (the stationary solution
of the last step's problem). Q and Q_final symmetric positive semidefinite
(symmetric only with allow_indefinite_Q), R symmetric positive semidefinite.
progress(done, total) is called at most every 50 ms. Returns an LQRSolution.)doc");

}

// The stationary (infinite-horizon) problem.
void bind_stationary(py::module_& m) {
  py::class_<StationaryLQR, std::shared_ptr<StationaryLQR>>(m, "StationaryLQR", R"doc(
Stabilizing solution of the discrete algebraic Riccati equation.

P (n, n), K (s, n) are read-only views of this object's memory. Unpacks as
(P, K, spectral_radius).)doc")
      .def_property_readonly("P", [](py::object self) { return view(self.cast<StationaryLQR&>().P, self); },
                             "(n, n) stationary cost-to-go, J*(x) = x' P x.")
      .def_property_readonly("K", [](py::object self) { return view(self.cast<StationaryLQR&>().K, self); },
                             "(s, n) stationary gain, u = K x.")
      .def_readonly("spectral_radius", &StationaryLQR::spectral_radius, "Spectral radius of A + B K (< 1).")
      .def_readonly("iterations", &StationaryLQR::iterations, "Doubling steps taken.")
      .def_readonly("refinements", &StationaryLQR::refinements, "Newton steps that lowered the residual.")
      .def_readonly("residual", &StationaryLQR::residual,
                    "Relative Riccati residual |Q + A'PA - P - G'H^-1 G|_F / |P|_F.")
      .def("__iter__", [](py::object self) {
        const auto& r = self.cast<StationaryLQR&>();
        return py::iter(py::make_tuple(view(r.P, self), view(r.K, self), r.spectral_radius));
      })
      .def("__repr__", [](const StationaryLQR& r) {
        return py::str("StationaryLQR(n={}, s={}, spectral_radius={:.6g}, iterations={}, refinements={}, "
                       "residual={:.2e})")
            .format(r.P.rows(), r.K.rows(), r.spectral_radius, r.iterations, r.refinements, r.residual);
      });

  m.def("solve_stationary", [](const Array& A, const Array& B, const Array& Q, const Array& R, const OptArray& N,
                               py::object progress, bool allow_indefinite_Q) {
    const Eigen::MatrixXd a = matrix(A, "A"), b = matrix(B, "B"), q = matrix(Q, "Q"), r = matrix(R, "R");
    const Eigen::MatrixXd nn = N ? matrix(*N, "N") : Eigen::MatrixXd();
    StationaryOptions options;
    options.Q_indefinite = allow_indefinite_Q;
    Progress prog(progress);
    return prog.run([&](const ProgressFn* fn) {
      return std::make_shared<StationaryLQR>(solve_stationary(a, b, q, r, nn, options, fn));
    });
  }, py::arg("A"), py::arg("B"), py::arg("Q"), py::arg("R"), py::arg("N") = py::none(), py::arg("progress") = py::none(),
     py::arg("allow_indefinite_Q") = false,
     R"doc(Stabilizing solution of the DARE P = Q + A'PA - G'(R + B'PB)^-1 G,
G = B'PA + N', by structure-preserving doubling with Newton refinement (GIL
released). A (n, n), B (n, s), Q (n, n) symmetric positive semidefinite
(symmetric only with allow_indefinite_Q), R (s, s) symmetric
positive semidefinite, N (n, s) or None. progress(done, total) is called at
most every 50 ms (a doubling or Newton step done; total: the most there can
be). Returns a StationaryLQR.)doc");
}

// Discretization and the continuous problem (declarations only: long as
// one chained class definition).
void bind_discretize(py::module_& m) {
  py::enum_<DiscretizeMethod>(m, "DiscretizeMethod")
      .value("exact", DiscretizeMethod::Exact)
      .value("simpson", DiscretizeMethod::Simpson);

  py::class_<Discretization, std::shared_ptr<Discretization>>(m, "Discretization", R"doc(
Exact (or Simpson) discretization of a continuous LTV tracking problem.

Phi (T, n, n), Gamma (T, n, s), Q (T, n, n), N (T, n, s), R (T, s, s) are
read-only views of this object's memory, valid while any of them or the
object is alive. Rc is the continuous control weight kept for re-tuning.

Parameters
----------
Phi, Gamma, Q, N, R, Rc : arrays
    Saved arrays (copied), shapes as the properties.
dt : float
    Step length (s).
method : DiscretizeMethod, optional
    How they were computed.)doc")
      .def(py::init([](const Array& Phi, const Array& Gamma, const Array& Q, const Array& N, const Array& R,
                       const Array& Rc, double dt, DiscretizeMethod method) {
        return std::make_shared<Discretization>(matrix_seq(Phi, "Phi"), matrix_seq(Gamma, "Gamma"), matrix_seq(Q, "Q"),
                                                matrix_seq(N, "N"), matrix_seq(R, "R"), matrix_seq(Rc, "Rc"), dt, method);
      }), py::arg("Phi"), py::arg("Gamma"), py::arg("Q"), py::arg("N"), py::arg("R"), py::arg("Rc"), py::arg("dt"),
         py::arg("method") = DiscretizeMethod::Exact, "From saved arrays (copied); shapes as the properties.")
      .def_property_readonly("Phi", [](py::object self) { return view(self.cast<Discretization&>().Phi, self); },
                             "(T, n, n) state transitions e^{A_i dt}.")
      .def_property_readonly("Gamma", [](py::object self) { return view(self.cast<Discretization&>().Gamma, self); },
                             "(T, n, s) control matrices of the held control.")
      .def_property_readonly("Q", [](py::object self) { return view(self.cast<Discretization&>().Q, self); },
                             "(T, n, n) discrete state weights.")
      .def_property_readonly("N", [](py::object self) { return view(self.cast<Discretization&>().N, self); },
                             "(T, n, s) discrete cross weights (2 x' N u).")
      .def_property_readonly("R", [](py::object self) { return view(self.cast<Discretization&>().R, self); },
                             "(T, s, s) discrete control weights.")
      .def_property_readonly("Rc", [](py::object self) { return view(self.cast<Discretization&>().Rc, self); },
                             "(T, s, s) continuous control weight, kept for re-tuning.")
      .def_readonly("dt", &Discretization::dt, "Step length (s).")
      .def_readonly("method", &Discretization::method, "DiscretizeMethod used (exact or simpson).")
      .def_property_readonly("horizon", &Discretization::horizon, "Number of steps T.")
      .def_property_readonly("n", &Discretization::n, "State size n.")
      .def_property_readonly("s", &Discretization::s, "Control size s.")
      .def("solve", [](std::shared_ptr<Discretization> self, const py::object& Q_final, double alpha_Q, double alpha_R,
                       const OptArray& R, py::object progress, bool allow_indefinite_Q) {
        return sweep(self->make_problem(final_cost(Q_final), alpha_Q, alpha_R, matrix_seq(R, "R"), allow_indefinite_Q),
                     progress);
      }, py::arg("Q_final"), py::arg("alpha_Q") = 1.0, py::arg("alpha_R") = 1.0, py::arg("R") = py::none(),
         py::arg("progress") = py::none(), py::arg("allow_indefinite_Q") = false,
         R"doc(Riccati sweep for re-tuned weights, without a new discretization.

Parameters
----------
Q_final : (n, n) array or "dare"
    Terminal weight; "dare": the stationary P of the last step.
alpha_Q, alpha_R : float, optional
    Continuous weights become alpha_Q * Q and alpha_R * R.
R : (s, s) or (T, s, s) array, optional
    A new continuous control weight replacing the one discretized.
progress : None, bool or callable(done, total), optional
    Progress report; Ctrl-C stops the sweep.
allow_indefinite_Q : bool, optional
    Q_final may be indefinite (symmetric only); by default it must be
    positive semidefinite (smallest eigenvalue >= -1e-12 max|Q_final|).

Returns
-------
LQRSolution
    K (T, s, n) and P (T+1, n, n).)doc");

  m.def("discretize", [](const Array& A, const Array& B, double dt, const Array& Q, const Array& R,
                         DiscretizeMethod method, std::optional<Index> horizon, int intervals, int threads,
                         py::object progress, bool allow_indefinite_Q) {
    SeqView a = matrix_seq(A, "A"), b = matrix_seq(B, "B"), q = matrix_seq(Q, "Q"), r = matrix_seq(R, "R");
    DiscretizeOptions opt;
    opt.method = method;
    opt.simpson_intervals = intervals;
    opt.threads = threads;
    opt.Q_indefinite = allow_indefinite_Q;
    Progress prog(progress);
    return prog.run([&](const ProgressFn* fn) {
      return std::make_shared<Discretization>(discretize(a, b, dt, q, r, horizon, opt, fn));
    });
  }, py::arg("A"), py::arg("B"), py::arg("dt"), py::arg("Q"), py::arg("R"), py::arg("method") = DiscretizeMethod::Exact,
     py::arg("horizon") = py::none(), py::arg("intervals") = 10, py::arg("threads") = 0,
     py::arg("progress") = py::none(), py::arg("allow_indefinite_Q") = false,
     R"doc(Discretize z' = A_i z + B w (w held over each step dt) and the cost
int z'Qz + w'Rw dt. A (T, n, n), B (T, n, s), Q (T, n, n), R (T, s, s), or
single matrices (constant; then horizon is required). Parallel over steps
(threads=0: all cores), GIL released, progress(done, total) throttled.)doc");

  m.def("solve_continuous", [](const Array& A, const Array& B, double dt, const Array& Q, const Array& R,
                               const py::object& Q_final, DiscretizeMethod method, std::optional<Index> horizon,
                               int intervals, int threads, py::object progress, bool allow_indefinite_Q) {
    SeqView a = matrix_seq(A, "A"), b = matrix_seq(B, "B"), q = matrix_seq(Q, "Q"), r = matrix_seq(R, "R");
    const FinalCost qf = final_cost(Q_final);
    DiscretizeOptions opt;
    opt.method = method;
    opt.simpson_intervals = intervals;
    opt.threads = threads;
    opt.Q_indefinite = allow_indefinite_Q;
    Progress prog(progress);
    auto both = prog.run([&](const ProgressFn* fn) { return solve_continuous(a, b, dt, q, r, qf, horizon, opt, fn); });
    return py::make_tuple(std::make_shared<Discretization>(std::move(both.first)),
                          std::make_shared<LQRSolution>(std::move(both.second)));
  }, py::arg("A"), py::arg("B"), py::arg("dt"), py::arg("Q"), py::arg("R"), py::arg("Q_final"),
     py::arg("method") = DiscretizeMethod::Exact, py::arg("horizon") = py::none(), py::arg("intervals") = 10,
     py::arg("threads") = 0, py::arg("progress") = py::none(), py::arg("allow_indefinite_Q") = false,
     R"doc(discretize() and the Riccati sweep for Q_final (n, n) as one pipeline:
steps are discretized from the last one down while the calling thread sweeps
each one as soon as it is ready. Returns (Discretization, LQRSolution), the
same results as the two calls, on `threads` cores (0: all; 1: the calling
thread only, the sweep too). GIL released, progress(done, 2T) throttled.)doc");

}

// The runtime controller and the PD gain (declarations only: long as one
// chained class definition).
void bind_tracker(py::module_& m) {
  py::class_<TrackerObject, std::shared_ptr<TrackerObject>>(m, "Tracker", R"doc(
Runtime tracking controller w = w_ff[i] + K[i] (z - z_ref[i]).

K (T, s, n) or one (s, n) gain, z_ref (T+1, n), w_ff (T, s) or None (zero),
are copied. loop: rewind to step 0 after the last step. w_min, w_max (s,)
or scalars: optional box limits on w. gain_dtype: "float64" (default),
"float32", "float16" or "int8", the storage of the gains the control step
multiplies by (see directable.lqr.tracker for each one's error bound).

The gains are read-only after construction. The per-step calls (control,
advance, index, ...) move this object's own reference index; simulate and
Simulation keep their own, so one Tracker may drive several runs at once,
from several threads.

Parameters
----------
K : (T, s, n) or (s, n) array
    Gains (copied).
z_ref : (T+1, n) array
    Reference states (copied).
w_ff : (T, s) array, optional
    Feed-forward controls (zero when None).
loop : bool, optional
    Rewind to step 0 after the last step.
w_min, w_max : (s,) array or float, optional
    Box limits on w.
gain_dtype : str, optional
    "float64", "float32", "float16" or "int8".)doc")
      .def(py::init([](const Array& K, const Array& z_ref, const OptArray& w_ff, bool loop, const OptArray& w_min,
                       const OptArray& w_max, const std::string& gain_dtype) {
        SeqView gains = matrix_seq(K, "K");
        TrackerOptions opt;
        opt.loop = loop;
        opt.gain_precision = gain_precision_from_name(gain_dtype);
        opt.w_min = broadcast_vector(w_min, "w_min", gains.rows);
        opt.w_max = broadcast_vector(w_max, "w_max", gains.rows);
        return std::make_shared<TrackerObject>(
            std::make_shared<const Tracker>(gains, vector_seq(z_ref, "z_ref"), vector_seq(w_ff, "w_ff"), opt));
      }), py::arg("K"), py::arg("z_ref"), py::arg("w_ff") = py::none(), py::arg("loop") = false,
         py::arg("w_min") = py::none(), py::arg("w_max") = py::none(), py::arg("gain_dtype") = "float64")
      .def("control", [](TrackerObject& self, const Array& z) {
        const Tracker& t = *self.schedule;
        py::array_t<double> w(t.s());
        Eigen::VectorXd fb(t.s());
        Eigen::Map<Eigen::VectorXd> wm(w.mutable_data(), t.s());
        t.control(vector(z, "z", t.n(), true), self.data, wm, fb);
        return w;
      }, py::arg("z"), R"doc(Control for a state at the current index (does not advance).

Parameters
----------
z : (n,) array
    State.

Returns
-------
(s,) ndarray
    w = w_ff[i] + K[i] (z - z_ref[i]), clipped to [w_min, w_max].)doc")
      .def("control_into", [](TrackerObject& self, const Array& z, py::array_t<double, py::array::c_style> w,
                              py::array_t<double, py::array::c_style> w_fb) {
        const Tracker& t = *self.schedule;
        auto zv = vector(z, "z", t.n(), true);
        if (w.ndim() != 1 || w.shape(0) != t.s() || w_fb.ndim() != 1 || w_fb.shape(0) != t.s())
          throw std::invalid_argument("w and w_fb must be float64 arrays of shape (" + std::to_string(t.s()) + ",)");
        Eigen::Map<Eigen::VectorXd> wm(w.mutable_data(), t.s()), fm(w_fb.mutable_data(), t.s());
        t.control(zv, self.data, wm, fm);
      }, py::arg("z"), py::arg("w").noconvert(), py::arg("w_fb").noconvert(),
         R"doc(Writes the control and its feedback part in place (no allocation).

Parameters
----------
z : (n,) array
    State.
w : (s,) float64 C-contiguous array
    Receives the control (other arrays are refused, never copied).
w_fb : (s,) float64 C-contiguous array
    Receives the feedback part K[i] (z - z_ref[i]).)doc")
      .def("advance", [](TrackerObject& self) { self.schedule->advance(self.data); },
           "Moves to the next reference step.")
      .def("rewind", [](TrackerObject& self) { self.schedule->set_index(self.data, 0); }, "Back to reference step 0.")
      .def_property("index", [](const TrackerObject& self) { return self.data.index(); },
                    [](TrackerObject& self, Index i) { self.schedule->set_index(self.data, i); },
                    "Tracked reference step (0..T) of the per-step calls.")
      .def("nearest_index", [](const TrackerObject& self, const Array& z, Index first, Index last,
                               const OptArray& weights) {
        const Eigen::VectorXd w = optional_vector(weights, "weights");
        return self.schedule->nearest_index(vector(z, "z"), first, last, weights ? &w : nullptr);
      }, py::arg("z"), py::arg("first") = 0, py::arg("last") = -1, py::arg("weights") = py::none(),
         R"doc(Reference step with the state closest to z.

Parameters
----------
z : (n,) array
    State.
first, last : int, optional
    Steps searched, [first, last] (last -1: T).
weights : (n,) array, optional
    Per-coordinate weights of the distance.

Returns
-------
int
    The step.)doc")
      .def("jump_to_nearest", [](TrackerObject& self, const Array& z) {
        return self.schedule->jump_to_nearest(vector(z, "z"), self.data);
      }, py::arg("z"), R"doc(Moves the tracked index to the reference state closest to z.

Parameters
----------
z : (n,) array
    State.

Returns
-------
int
    The new index.)doc")
      .def_property_readonly("horizon", [](const TrackerObject& self) { return self.schedule->horizon(); },
                             "Number of reference steps T.")
      .def_property_readonly("n", [](const TrackerObject& self) { return self.schedule->n(); }, "State size n.")
      .def_property_readonly("s", [](const TrackerObject& self) { return self.schedule->s(); }, "Control size s.")
      .def_property_readonly("loop", [](const TrackerObject& self) { return self.schedule->options().loop; },
                             "Whether the reference rewinds to step 0 after its last step.")
      .def_property_readonly("gain_dtype", [](const TrackerObject& self) {
        return gain_precision_name(self.schedule->options().gain_precision);
      }, "Storage of the gains the control step reads: \"float64\", \"float32\", \"float16\" or \"int8\".")
      .def_property_readonly("w_min", [](const TrackerObject& self) -> py::object {
        const Eigen::VectorXd& w_min = self.schedule->options().w_min;
        return w_min.size() ? py::cast(Eigen::VectorXd(w_min)) : py::none();
      }, "(s,) lower limits on w, or None.")
      .def_property_readonly("w_max", [](const TrackerObject& self) -> py::object {
        const Eigen::VectorXd& w_max = self.schedule->options().w_max;
        return w_max.size() ? py::cast(Eigen::VectorXd(w_max)) : py::none();
      }, "(s,) upper limits on w, or None.")
      .def_property_readonly("K", [](py::object self) { return view(self.cast<TrackerObject&>().schedule->gains(), self); },
                             "(T, s, n) gains, or (1, s, n) for a constant gain.")
      .def_property_readonly("z_ref", [](py::object self) {
        return view(self.cast<TrackerObject&>().schedule->reference(), self);
      }, "(T+1, n) reference states (read-only view).")
      .def_property_readonly("w_ff", [](py::object self) {
        return view(self.cast<TrackerObject&>().schedule->feed_forward(), self);
      }, "(T, s) feed-forward controls (read-only view).");

  m.def("pd_gain", [](const Array& kp, const Array& kd, Index n, const OptArray& actuated) {
    Eigen::VectorXd p = kp.ndim() == 0 ? Eigen::VectorXd::Constant(1, *kp.data()) : Eigen::VectorXd(vector(kp, "kp"));
    Eigen::VectorXd d = kd.ndim() == 0 ? Eigen::VectorXd::Constant(1, *kd.data()) : Eigen::VectorXd(vector(kd, "kd"));
    RowMatrix S = actuated ? RowMatrix(matrix(*actuated, "actuated")) : RowMatrix();
    return pd_gain(p, d, n, S);
  }, py::arg("kp"), py::arg("kd"), py::arg("n"), py::arg("actuated") = py::none(),
     R"doc(PD gain on z = [q, qd]: K = -[diag(kp) S', diag(kd) S'].

Parameters
----------
kp, kd : float or (s,) array
    Stiffness and damping gains.
n : int
    State size.
actuated : (n/2, s) array, optional
    S mapping the controls to the coordinates' forces, as a model's
    actuation (identity when None).

Returns
-------
(s, n) ndarray
    The gain K.)doc");
}

}  // namespace

void bind_control(py::module_& m) {
  bind_riccati(m);
  bind_stationary(m);
  bind_discretize(m);
  bind_tracker(m);
}

}  // namespace directable::py_bind
