#include "common.hpp"
#include "directable/control/lqr/discretize.hpp"
#include "directable/control/lqr/riccati.hpp"
#include "directable/control/lqr/tracker.hpp"

namespace directable::py_bind {

namespace {

Index horizon_of(std::initializer_list<SeqView> seqs, std::optional<Index> horizon) {
  Index T = -1;
  for (const auto& v : seqs) {
    if (v.empty() || v.is_constant()) continue;
    if (T >= 0 && v.T != T) break;  // the core reports the mismatch with names
    T = v.T;
  }
  if (horizon) {
    if (*horizon <= 0) throw std::invalid_argument("horizon must be a positive number of steps, got " + std::to_string(*horizon));
    return *horizon;
  }
  if (T < 0) throw std::invalid_argument("horizon must be given when A, B, Q, R (and N) are all constant in time");
  return T;
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

}  // namespace

void bind_control(py::module_& m) {
  py::class_<LQRSolution, std::shared_ptr<LQRSolution>>(m, "LQRSolution", R"doc(
Gains and cost-to-go of a discrete LQR problem.

K (T, s, n) and P (T+1, n, n) are read-only NumPy views of this object's
memory (no copy): they stay valid as long as any of them or this object is
alive. Copy them (np.array(sol.K)) to modify.)doc", py::dynamic_attr())
      .def(py::init([](const Array& K, const Array& P) {
        if (K.ndim() != 3 || P.ndim() != 3) throw std::invalid_argument("K must be (T, s, n) and P (T+1, n, n)");
        const Index T = K.shape(0), s = K.shape(1), n = K.shape(2);
        if (P.shape(0) != T + 1 || P.shape(1) != n || P.shape(2) != n)
          throw_shape("P", shape_str(T + 1, n, n), shape_str(P.shape(0), P.shape(1), P.shape(2)));
        auto sol = std::make_shared<LQRSolution>(T, n, s);
        check_finite("K", K.data(), K.size());
        check_finite("P", P.data(), P.size());
        std::copy(K.data(), K.data() + K.size(), sol->K.data());
        std::copy(P.data(), P.data() + P.size(), sol->P.data());
        return sol;
      }), py::arg("K"), py::arg("P"), "From saved arrays K (T, s, n) and P (T+1, n, n) (copied).")
      .def_property_readonly("K", [](py::object self) { return view(self.cast<LQRSolution&>().K, self); },
                             "(T, s, n) feedback gains, u_i = K_i x_i.")
      .def_property_readonly("P", [](py::object self) { return view(self.cast<LQRSolution&>().P, self); },
                             "(T+1, n, n) cost-to-go matrices, J*_i(x) = x' P_i x.")
      .def_property_readonly("horizon", &LQRSolution::horizon)
      .def_property_readonly("n", &LQRSolution::n)
      .def_property_readonly("s", &LQRSolution::s)
      .def("cost_to_go", [](const LQRSolution& self, const Array& x, Index i) {
        auto xv = vector(x, "x", self.n());
        if (i < 0 || i > self.horizon()) throw std::invalid_argument("step must be in [0, T]");
        return double(xv.transpose() * self.P[i] * xv);
      }, py::arg("x"), py::arg("step") = 0, "Optimal cost x' P_step x from state x (n,) at step.");

  m.def("solve_discrete", [](const Array& A, const Array& B, const Array& Q, const Array& R, const Array& Q_final,
                             const OptArray& N, std::optional<Index> horizon, py::object progress) {
    LQRProblem p;
    p.A = matrix_seq(A, "A");
    p.B = matrix_seq(B, "B");
    p.Q = matrix_seq(Q, "Q");
    p.N = matrix_seq(N, "N");
    p.R_terms.emplace_back(matrix_seq(R, "R"), 1.0);
    p.horizon = horizon_of({p.A, p.B, p.Q, p.N, p.R_terms[0].first}, horizon);
    p.Q_final = matrix(Q_final, "Q_final");
    p.check_R_definite = true;
    p.validate();
    return sweep(p, progress);
  }, py::arg("A"), py::arg("B"), py::arg("Q"), py::arg("R"), py::arg("Q_final"), py::arg("N") = py::none(),
     py::arg("horizon") = py::none(), py::arg("progress") = py::none(),
     R"doc(Riccati backward sweep of the discrete LTV LQR problem (GIL released).

A (T, n, n), B (T, n, s), Q (T, n, n), R (T, s, s), N (T, n, s): per step, or
one matrix constant in time; Q_final (n, n). progress(done, total) is called
at most every 50 ms. Returns an LQRSolution.)doc");

  py::enum_<DiscretizeMethod>(m, "DiscretizeMethod")
      .value("exact", DiscretizeMethod::Exact)
      .value("simpson", DiscretizeMethod::Simpson);

  py::class_<Discretization, std::shared_ptr<Discretization>>(m, "Discretization", R"doc(
Exact (or Simpson) discretization of a continuous LTV tracking problem.

Phi (T, n, n), Gamma (T, n, s), Q (T, n, n), N (T, n, s), R (T, s, s) are
read-only views of this object's memory, valid while any of them or the
object is alive. Rc is the continuous control weight kept for re-tuning.)doc")
      .def(py::init([](const Array& Phi, const Array& Gamma, const Array& Q, const Array& N, const Array& R,
                       const Array& Rc, double dt, DiscretizeMethod method) {
        check_positive("dt", dt);
        if (Phi.ndim() != 3 || Gamma.ndim() != 3) throw std::invalid_argument("Phi and Gamma must be 3-D (T, ...) arrays");
        const Index T = Phi.shape(0), n = Phi.shape(1), s = Gamma.shape(2);
        auto d = std::make_shared<Discretization>(T, n, s, dt);
        d->method = method;
        auto fill = [T](MatrixSeq& dst, const Array& src, const char* name, bool may_be_single) {
          const Index Ts = src.ndim() == 3 ? src.shape(0) : -1;
          if (src.ndim() != 3 || src.shape(1) != dst.rows() || src.shape(2) != dst.cols() || !(Ts == T || (may_be_single && Ts == 1)))
            throw_shape(name, shape_str(T, dst.rows(), dst.cols()), src.ndim() == 3 ? shape_str(src.shape(0), src.shape(1), src.shape(2)) : "another rank");
          check_finite(name, src.data(), src.size());
          if (dst.T() != Ts) dst = MatrixSeq(Ts, dst.rows(), dst.cols());
          std::copy(src.data(), src.data() + src.size(), dst.data());
        };
        fill(d->Phi, Phi, "Phi", false);
        fill(d->Gamma, Gamma, "Gamma", false);
        fill(d->Q, Q, "Q", false);
        fill(d->N, N, "N", false);
        fill(d->R, R, "R", false);
        d->Rc = MatrixSeq(1, s, s);
        fill(d->Rc, Rc, "Rc", true);
        return d;
      }), py::arg("Phi"), py::arg("Gamma"), py::arg("Q"), py::arg("N"), py::arg("R"), py::arg("Rc"), py::arg("dt"),
         py::arg("method") = DiscretizeMethod::Exact, "From saved arrays (copied); shapes as the properties.")
      .def_property_readonly("Phi", [](py::object self) { return view(self.cast<Discretization&>().Phi, self); })
      .def_property_readonly("Gamma", [](py::object self) { return view(self.cast<Discretization&>().Gamma, self); })
      .def_property_readonly("Q", [](py::object self) { return view(self.cast<Discretization&>().Q, self); })
      .def_property_readonly("N", [](py::object self) { return view(self.cast<Discretization&>().N, self); })
      .def_property_readonly("R", [](py::object self) { return view(self.cast<Discretization&>().R, self); })
      .def_property_readonly("Rc", [](py::object self) { return view(self.cast<Discretization&>().Rc, self); })
      .def_readonly("dt", &Discretization::dt)
      .def_readonly("method", &Discretization::method)
      .def_property_readonly("horizon", &Discretization::horizon)
      .def_property_readonly("n", &Discretization::n)
      .def_property_readonly("s", &Discretization::s)
      .def("solve", [](std::shared_ptr<Discretization> self, const Array& Q_final, double alpha_Q, double alpha_R,
                       const OptArray& R, py::object progress) {
        LQRProblem p = self->make_problem(matrix(Q_final, "Q_final"), alpha_Q, alpha_R, matrix_seq(R, "R"));
        // R_new was checked positive definite by make_problem; the discretized
        // R_i then are too, and a failure would still be named by the sweep.
        p.validate();
        return sweep(p, progress);
      }, py::arg("Q_final"), py::arg("alpha_Q") = 1.0, py::arg("alpha_R") = 1.0, py::arg("R") = py::none(),
         py::arg("progress") = py::none(),
         R"doc(Riccati sweep for re-tuned weights, without a new discretization.

Continuous weights become alpha_Q * Q and alpha_R * R (R: a new (s, s) or
(T, s, s) continuous control weight replacing the one discretized).
Q_final (n, n). Returns an LQRSolution.)doc");

  m.def("discretize", [](const Array& A, const Array& B, double dt, const Array& Q, const Array& R,
                         DiscretizeMethod method, std::optional<Index> horizon, int intervals, int threads,
                         py::object progress) {
    SeqView a = matrix_seq(A, "A"), b = matrix_seq(B, "B"), q = matrix_seq(Q, "Q"), r = matrix_seq(R, "R");
    Index T = horizon_of({a, b, q, r}, horizon);
    DiscretizeOptions opt;
    opt.method = method;
    opt.simpson_intervals = intervals;
    opt.threads = threads;
    Progress prog(progress);
    return prog.run([&](const ProgressFn* fn) {
      return std::make_shared<Discretization>(discretize(a, b, dt, q, r, T, opt, fn));
    });
  }, py::arg("A"), py::arg("B"), py::arg("dt"), py::arg("Q"), py::arg("R"), py::arg("method") = DiscretizeMethod::Exact,
     py::arg("horizon") = py::none(), py::arg("intervals") = 10, py::arg("threads") = 0,
     py::arg("progress") = py::none(),
     R"doc(Discretize z' = A_i z + B w (w held over each step dt) and the cost
int z'Qz + w'Rw dt. A (T, n, n), B (T, n, s), Q (T, n, n), R (T, s, s), or
single matrices (constant; then horizon is required). Parallel over steps
(threads=0: all cores), GIL released, progress(done, total) throttled.)doc");

  m.def("solve_continuous", [](const Array& A, const Array& B, double dt, const Array& Q, const Array& R,
                               const Array& Q_final, DiscretizeMethod method, std::optional<Index> horizon,
                               int intervals, int threads, py::object progress) {
    SeqView a = matrix_seq(A, "A"), b = matrix_seq(B, "B"), q = matrix_seq(Q, "Q"), r = matrix_seq(R, "R");
    Index T = horizon_of({a, b, q, r}, horizon);
    Eigen::MatrixXd qf = matrix(Q_final, "Q_final");
    DiscretizeOptions opt;
    opt.method = method;
    opt.simpson_intervals = intervals;
    opt.threads = threads;
    Progress prog(progress);
    auto both = prog.run([&](const ProgressFn* fn) { return solve_continuous(a, b, dt, q, r, qf, T, opt, fn); });
    return py::make_tuple(std::make_shared<Discretization>(std::move(both.first)),
                          std::make_shared<LQRSolution>(std::move(both.second)));
  }, py::arg("A"), py::arg("B"), py::arg("dt"), py::arg("Q"), py::arg("R"), py::arg("Q_final"),
     py::arg("method") = DiscretizeMethod::Exact, py::arg("horizon") = py::none(), py::arg("intervals") = 10,
     py::arg("threads") = 0, py::arg("progress") = py::none(),
     R"doc(discretize() and the Riccati sweep for Q_final (n, n) as one pipeline:
steps are discretized from the last one down while the calling thread sweeps
each one as soon as it is ready. Returns (Discretization, LQRSolution), the
same results as the two calls, on `threads` cores (0: all; 1: the calling
thread only, the sweep too). GIL released, progress(done, 2T) throttled.)doc");

  py::class_<Tracker, std::shared_ptr<Tracker>>(m, "Tracker", R"doc(
Runtime tracking controller w = w_ff[i] + K[i] (z - z_ref[i]).

K (T, s, n) or one (s, n) gain, z_ref (T+1, n), w_ff (T, s) or None (zero),
are copied. loop: rewind to step 0 after the last step. w_min, w_max (s,):
optional box limits on w. gain_dtype: "float64" (default), "float32",
"float16" or "int8", the storage of the gains the control step multiplies
by. float32/float16 keep each row of K[i] as a power-of-two scale times
entries rounded to that type, multiplied in single precision: |w_fb - K dz|
<= ~2e-6 (float32) or ~5e-4 (float16) times sum_j |K_ij dz_j|. int8 balances
the columns by powers of two c_j <= 1, rounds each row to 255 levels of its
largest entry and c .* dz to int16, and sums exactly in integers:
|w_fb - K dz|_i <= M_i (sum_j c_j |dz_j| / 254 + (n+1) 2^-15 max_j c_j |dz_j|),
M_i = max_j |K_ij / c_j|. A long time-varying schedule is streamed from
memory at every step, so these halve, quarter or eighth the step's cost
there; K still returns the gains as given.)doc")
      .def(py::init([](const Array& K, const Array& z_ref, const OptArray& w_ff, bool loop, const OptArray& w_min,
                       const OptArray& w_max, const std::string& gain_dtype) {
        TrackerOptions opt;
        opt.loop = loop;
        opt.gain_precision = gain_precision_from_name(gain_dtype);
        if (w_min) opt.w_min = vector(*w_min, "w_min");
        if (w_max) opt.w_max = vector(*w_max, "w_max");
        return std::make_shared<Tracker>(matrix_seq(K, "K"), vector_seq(z_ref, "z_ref"), vector_seq(w_ff, "w_ff"), opt);
      }), py::arg("K"), py::arg("z_ref"), py::arg("w_ff") = py::none(), py::arg("loop") = false,
         py::arg("w_min") = py::none(), py::arg("w_max") = py::none(), py::arg("gain_dtype") = "float64")
      .def("control", [](const Tracker& self, const Array& z) {
        auto zv = vector(z, "z", self.n(), true);
        py::array_t<double> w(self.s());
        Eigen::VectorXd fb(self.s());
        Eigen::Map<Eigen::VectorXd> wm(w.mutable_data(), self.s());
        self.control(zv, wm, fb);
        return w;
      }, py::arg("z"), "Control w (s,) for the state z (n,) at the current index (does not advance).")
      .def("control_into", [](const Tracker& self, const Array& z, py::array_t<double, py::array::c_style> w,
                              py::array_t<double, py::array::c_style> w_fb) {
        auto zv = vector(z, "z", self.n(), true);
        if (w.ndim() != 1 || w.shape(0) != self.s() || w_fb.ndim() != 1 || w_fb.shape(0) != self.s())
          throw std::invalid_argument("w and w_fb must be float64 arrays of shape (" + std::to_string(self.s()) + ",)");
        Eigen::Map<Eigen::VectorXd> wm(w.mutable_data(), self.s()), fm(w_fb.mutable_data(), self.s());
        self.control(zv, wm, fm);
      }, py::arg("z"), py::arg("w").noconvert(), py::arg("w_fb").noconvert(),
         "Writes w and the feedback part w_fb in place: C-contiguous float64 arrays (s,) (others are refused, never copied).")
      .def("advance", &Tracker::advance, "Moves to the next reference step.")
      .def("rewind", &Tracker::rewind, "Back to reference step 0.")
      .def_property("index", &Tracker::index, &Tracker::set_index, "Tracked reference step (0..T).")
      .def("nearest_index", [](const Tracker& self, const Array& z, Index first, Index last, const OptArray& weights) {
        Eigen::VectorXd w;
        if (weights) {
          w = vector(*weights, "weights", self.n(), true);
          if ((w.array() < 0).any()) throw std::domain_error("weights must be >= 0");
        }
        return self.nearest_index(vector(z, "z", self.n(), true), first, last, weights ? &w : nullptr);
      }, py::arg("z"), py::arg("first") = 0, py::arg("last") = -1, py::arg("weights") = py::none(),
         "Reference step in [first, last] with the state closest to z.")
      .def("jump_to_nearest", [](Tracker& self, const Array& z) { return self.jump_to_nearest(vector(z, "z", self.n(), true)); },
           py::arg("z"), "Moves the tracked index to the reference state closest to z; returns it.")
      .def_property_readonly("horizon", &Tracker::horizon)
      .def_property_readonly("n", &Tracker::n)
      .def_property_readonly("s", &Tracker::s)
      .def_property_readonly("loop", [](const Tracker& t) { return t.options().loop; })
      .def_property_readonly("gain_dtype", [](const Tracker& t) { return gain_precision_name(t.options().gain_precision); },
                             "Storage of the gains the control step reads: \"float64\", \"float32\", \"float16\" or \"int8\".")
      .def_property_readonly("w_min", [](const Tracker& t) -> py::object {
        if (!t.options().w_min.size()) return py::none();
        return py::cast(Eigen::VectorXd(t.options().w_min));
      }, "(s,) lower limits on w, or None.")
      .def_property_readonly("w_max", [](const Tracker& t) -> py::object {
        if (!t.options().w_max.size()) return py::none();
        return py::cast(Eigen::VectorXd(t.options().w_max));
      }, "(s,) upper limits on w, or None.")
      .def_property_readonly("K", [](py::object self) { return view(self.cast<Tracker&>().gains(), self); },
                             "(T, s, n) gains, or (1, s, n) for a constant gain.")
      .def_property_readonly("z_ref", [](py::object self) { return view(self.cast<Tracker&>().reference(), self); })
      .def_property_readonly("w_ff", [](py::object self) { return view(self.cast<Tracker&>().feed_forward(), self); });

  m.def("pd_gain", [](const Array& kp, const Array& kd, Index n, const OptArray& actuated) {
    Eigen::VectorXd p = kp.ndim() == 0 ? Eigen::VectorXd::Constant(1, *kp.data()) : Eigen::VectorXd(vector(kp, "kp"));
    Eigen::VectorXd d = kd.ndim() == 0 ? Eigen::VectorXd::Constant(1, *kd.data()) : Eigen::VectorXd(vector(kd, "kd"));
    RowMatrix S = actuated ? RowMatrix(matrix(*actuated, "actuated")) : RowMatrix();
    return pd_gain(p, d, n, S);
  }, py::arg("kp"), py::arg("kd"), py::arg("n"), py::arg("actuated") = py::none(),
     R"doc(PD gain (s, n) on z = [q, qd]: K = -[diag(kp) S', diag(kd) S'].

kp, kd: scalars or (s,); actuated: S (n/2, s) mapping the controls to the
coordinates' forces, as a model's actuation (identity when None).)doc");
}

}  // namespace directable::py_bind
