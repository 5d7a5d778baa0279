#include "common.hpp"
#include "directable/models/fem/fem.hpp"
#include "directable/models/fem/reduced_stvk.hpp"

namespace directable::py_bind {

namespace {

using IndexArray = InputArray<int64_t>;

void bind_mesh_and_material(py::module_& m) {
  py::class_<TetMesh, std::shared_ptr<TetMesh>>(m, "TetMesh", R"doc(
Tetrahedral mesh: vertices (V, 3), tets (E, 4) vertex indices, each tet
positively oriented. Degenerate or inverted tets, indices out of range and
unreferenced vertices raise.)doc")
      .def(py::init([](const Array& vertices, const IndexArray& tets) {
        if (tets.ndim() != 2) throw std::invalid_argument("tets must be an (E, 4) integer array, got a " +
                                                          std::to_string(tets.ndim()) + "-D array");
        Eigen::Map<const IndexMatrix> T(tets.data(), tets.shape(0), tets.shape(1));
        return std::make_shared<TetMesh>(rows_view(vertices, "vertices", -1), T);
      }), py::arg("vertices"), py::arg("tets"))
      .def_property_readonly("vertices", [](const TetMesh& s) { return RowMatrix(s.vertices()); }, "(V, 3) rest positions.")
      .def_property_readonly("tets", [](const TetMesh& s) { return IndexMatrix(s.tets()); }, "(E, 4) vertex indices.")
      .def_property_readonly("volumes", [](const TetMesh& s) { return Eigen::VectorXd(s.volumes()); }, "(E,) rest volumes.")
      .def_property_readonly("num_vertices", &TetMesh::num_vertices, "V.")
      .def_property_readonly("num_tets", &TetMesh::num_tets, "E.");

  py::class_<StVKFEM, std::shared_ptr<StVKFEM>>(m, "StVKFEM", R"doc(
Full St. Venant-Kirchhoff tetrahedral FEM: energy density mu E:E +
lambda/2 (tr E)^2, lumped mass, Rayleigh damping D(u) = alpha M + beta K(u),
fixed vertices. u (3V,) ordered [x0, y0, z0, x1, ...].)doc")
      .def(py::init([](const TetMesh& mesh, double young, double poisson, double density, std::vector<Index> fixed,
                       double alpha, double beta) {
        return std::make_shared<StVKFEM>(mesh, young, poisson, density, fixed, alpha, beta);
      }), py::arg("mesh"), py::arg("young"), py::arg("poisson"), py::arg("density"), py::arg("fixed"),
         py::arg("alpha") = 0.0, py::arg("beta") = 0.0)
      .def("energy", [](const StVKFEM& s, const Array& u) { return s.energy(vector(u, "u", s.dofs(), true)); },
           py::arg("u"), R"doc(Elastic energy of a displacement.

Parameters
----------
u : (3V,) array
    Displacement (m).

Returns
-------
float
    Energy (J).)doc")
      .def("internal_forces", [](const StVKFEM& s, const Array& u) {
        Eigen::VectorXd f(s.dofs());
        s.internal_forces(vector(u, "u", s.dofs(), true), f);
        return f;
      }, py::arg("u"), R"doc(Internal forces: the gradient of the elastic energy.

Parameters
----------
u : (3V,) array
    Displacement (m).

Returns
-------
(3V,) ndarray
    Forces (N).)doc")
      .def("stiffness_csc", [](const StVKFEM& s, const Array& u) {
        SparseMatrix K;
        s.tangent_stiffness(vector(u, "u", s.dofs(), true), K);
        return compressed_arrays(K);
      }, py::arg("u"), R"doc(Tangent stiffness at a displacement, as CSC arrays.

Parameters
----------
u : (3V,) array
    Displacement (m).

Returns
-------
data, indices, indptr : ndarray
    The (3V, 3V) symmetric matrix (N/m) in compressed sparse columns.)doc")
      .def_property_readonly("mass", [](const StVKFEM& s) { return Eigen::VectorXd(s.mass()); }, "Lumped mass diagonal (3V,).")
      .def_property_readonly("mu", &StVKFEM::mu, "Lame mu = E / (2 (1 + nu)).")
      .def_property_readonly("lam", &StVKFEM::lambda, "Lame lambda = E nu / ((1 + nu)(1 - 2 nu)).")
      .def_property_readonly("alpha", &StVKFEM::alpha, "Rayleigh mass factor.")
      .def_property_readonly("beta", &StVKFEM::beta, "Rayleigh stiffness factor.")
      .def_property_readonly("fixed", &StVKFEM::fixed, "Fixed vertex indices.")
      .def_property_readonly("dofs", &StVKFEM::dofs, "3V.");
}

void bind_newmark(py::module_& m) {
  py::class_<NewmarkFEM>(m, "NewmarkFEM", R"doc(
Implicit Newmark integrator (beta = 1/4, gamma = 1/2) of a StVKFEM with
Newton iterations; each iteration's linear system solved by a sparse LDL'
factorization (linear_solver="direct", symbolic analysis done once) or by
block-Jacobi preconditioned conjugate gradients (linear_solver="cg", to
max(cg_tolerance |r|, 0.1 tolerance |r_0|), at most cg_max_iterations).
Holds the state u, v (3V,) each; the StVKFEM is shared read-only.)doc")
      .def(py::init([](std::shared_ptr<StVKFEM> model, double dt, int max_iterations, double tolerance,
                       const std::string& linear_solver, double cg_tolerance, int cg_max_iterations) {
        LinearSolverSettings ls;
        ls.method = linear_solver_from_string(linear_solver);
        ls.cg_tolerance = cg_tolerance;
        ls.cg_max_iterations = cg_max_iterations;
        return std::make_unique<NewmarkFEM>(model, dt, max_iterations, tolerance, ls);
      }), py::arg("model"), py::arg("dt"),
           py::arg("max_iterations") = 20, py::arg("tolerance") = 1e-8, py::arg("linear_solver") = "direct",
           py::arg("cg_tolerance") = 1e-4, py::arg("cg_max_iterations") = 1000)
      .def("set_state", [](NewmarkFEM& s, const Array& u, const Array& v, const OptArray& a) {
        auto uv = vector(u, "u"), vv = vector(v, "v");
        Eigen::VectorXd av = optional_vector(a, "a");
        py::gil_scoped_release rel;
        ObjectLock busy(&s);  // not while another thread steps it
        s.set_state(uv, vv, av);
      }, py::arg("u"), py::arg("v"), py::arg("a") = py::none(),
         R"doc(Sets the state.

Parameters
----------
u : (3V,) array
    Displacement (m).
v : (3V,) array
    Velocity (m/s).
a : (3V,) array, optional
    Acceleration (m/s^2); default: consistent with the next step's force.)doc")
      .def("step", [](NewmarkFEM& s, const Array& f) {
        auto fv = vector(f, "f_ext");
        py::gil_scoped_release rel;
        ObjectLock busy(&s);  // two threads stepping one simulator take turns
        return s.step(fv);
      }, py::arg("f_ext"), R"doc(One step with external forces held.

Parameters
----------
f_ext : (3V,) array
    External forces (N).

Returns
-------
int
    Newton iterations taken.)doc")
      .def("run", [](NewmarkFEM& s, const Array& forces, py::object progress) {
        auto F = rows_view(forces, "forces", -1, -1, false, "T", "3V");
        Progress prog(progress);
        NewmarkRun run = prog.run([&](const ProgressFn* fn) {
          ObjectLock busy(&s);
          return s.run(F, fn);
        });
        return RowMatrix(std::move(run.displacement));
      }, py::arg("forces"), py::arg("progress") = py::none(),
         "Runs T steps under forces (T, 3V); returns displacements (T+1, 3V). GIL released.")
      .def("run_states", [](NewmarkFEM& s, const Array& forces, py::object progress) {
        auto F = rows_view(forces, "forces", -1, -1, false, "T", "3V");
        Progress prog(progress);
        NewmarkRun run = prog.run([&](const ProgressFn* fn) {
          ObjectLock busy(&s);
          return s.run(F, fn);
        });
        return std::make_tuple(std::move(run.displacement), std::move(run.velocity), std::move(run.acceleration));
      }, py::arg("forces"), py::arg("progress") = py::none(),
         R"doc(Runs T steps under forces (T, 3V) from the current state: (u, v, a), each
(T+1, 3V), the initial state first (a[0] is NaN when the initial acceleration
is left to the first step). GIL released, throttled progress(done, total),
Ctrl-C stops it; a Newton failure names its step.)doc")
      .def("static_solve", [](NewmarkFEM& s, const Array& f, int iters) {
        auto fv = vector(f, "f_ext");
        py::gil_scoped_release rel;
        ObjectLock busy(&s);
        return s.static_solve(fv, iters);
      }, py::arg("f_ext"), py::arg("max_iterations") = 50, R"doc(Static equilibrium f_int(u) = f_ext (Newton, direct solves).

Parameters
----------
f_ext : (3V,) array
    External forces (N).
max_iterations : int, optional
    Newton iterations.

Returns
-------
(3V,) ndarray
    Displacement u (m).)doc")
      .def_property_readonly("u", [](const NewmarkFEM& s) { return read_locked(&s, [&] { return Eigen::VectorXd(s.u()); }); },
                             "(3V,) displacement (m), a copy.")
      .def_property_readonly("v", [](const NewmarkFEM& s) { return read_locked(&s, [&] { return Eigen::VectorXd(s.v()); }); },
                             "(3V,) velocity (m/s), a copy.")
      .def_property_readonly("a", [](const NewmarkFEM& s) { return read_locked(&s, [&] { return Eigen::VectorXd(s.a()); }); },
                             "(3V,) Newmark acceleration (m/s^2), a copy.")
      .def_property_readonly("dt", &NewmarkFEM::dt, "Time step.")
      .def_property_readonly("linear_solver", [](const NewmarkFEM& s) {
        return std::string(s.linear_solver().method == LinearSolver::cg ? "cg" : "direct");
      }, "\"direct\" or \"cg\".")
      .def_property_readonly("cg_tolerance", [](const NewmarkFEM& s) { return s.linear_solver().cg_tolerance; },
                             "CG stop, relative to the Newton residual.")
      .def_property_readonly("cg_max_iterations", [](const NewmarkFEM& s) { return s.linear_solver().cg_max_iterations; },
                             "CG iteration cap per linear solve.")
      .def_property_readonly("last_cg_iterations", [](const NewmarkFEM& s) {
        return read_locked(&s, [&] { return s.last_cg_iterations(); });
      },
                             "CG iterations of the last step, summed over its Newton iterations (0 when direct).");
}

void bind_reduced_stvk(py::module_& m) {
  py::class_<ReducedStVK, Model, std::shared_ptr<ReducedStVK>>(m, "ReducedStVK", R"doc(
Reduced StVK model on a basis U (3V, r): internal forces U' f(U p) as
precomputed cubic polynomials in p. A Model with z = [p, p'] (n = 2r), control
w (r,) reduced forces, B = [0; (U'MU)^-1], implicit Newmark step.)doc")
      .def(py::init([](const StVKFEM& full, const Array& U, double alpha, double beta, bool damping_hessian,
                       py::object progress) {
        Eigen::MatrixXd Um = matrix(U, "U");
        Progress prog(progress);
        return prog.run([&](const ProgressFn* fn) {
          return std::make_shared<ReducedStVK>(full, Um, alpha, beta, damping_hessian, fn);
        });
      }), py::arg("full"), py::arg("U"), py::arg("alpha") = -1.0, py::arg("beta") = -1.0,
         py::arg("damping_hessian") = true, py::arg("progress") = py::none())
      .def("internal_forces", [](const ReducedStVK& s, const Array& p) {
        Eigen::VectorXd R(s.r()), pairs;
        s.evaluate(vector(p, "p", s.r(), true), R, nullptr, pairs);
        return R;
      }, py::arg("p"), R"doc(Reduced internal forces R(p) = U' f(U p).

Parameters
----------
p : (r,) array
    Reduced coordinates.

Returns
-------
(r,) ndarray)doc")
      .def("tangent_stiffness", [](const ReducedStVK& s, const Array& p) {
        Eigen::VectorXd R(s.r()), pairs;
        Eigen::MatrixXd K(s.r(), s.r());
        s.evaluate(vector(p, "p", s.r(), true), R, &K, pairs);
        return K;
      }, py::arg("p"), R"doc(Reduced stiffness K(p) = dR/dp.

Parameters
----------
p : (r,) array
    Reduced coordinates.

Returns
-------
(r, r) ndarray)doc")
      .def("stiffness_derivative", [](const ReducedStVK& s, const Array& p, const Array& v) {
        Eigen::VectorXd pairs;
        Eigen::MatrixXd H(s.r(), s.r());
        s.stiffness_derivative(vector(p, "p", s.r(), true), vector(v, "v", s.r(), true), H, pairs);
        return H;
      }, py::arg("p"), py::arg("v"), R"doc(Derivative of the stiffness along v: d(K(p) v)/dp.

Parameters
----------
p : (r,) array
    Reduced coordinates.
v : (r,) array
    Direction.

Returns
-------
(r, r) ndarray)doc")
      .def("energy", [](const ReducedStVK& s, const Array& p) { return s.energy(vector(p, "p", s.r(), true)); },
           py::arg("p"), R"doc(Reduced elastic energy.

Parameters
----------
p : (r,) array
    Reduced coordinates.

Returns
-------
float
    Energy (J).)doc")
      .def("set_newton", &ReducedStVK::set_newton, py::arg("max_iterations"), py::arg("tolerance") = 1e-10,
           R"doc(Newton iterations of step().

Parameters
----------
max_iterations : int
    1: one linearized implicit step.
tolerance : float, optional
    Relative residual that stops the iterations.)doc")
      .def_property_readonly("r", &ReducedStVK::r, "Reduced dimension r (state n = 2r).")
      .def_property_readonly("reduced_mass", [](const ReducedStVK& s) { return Eigen::MatrixXd(s.reduced_mass()); }, "U'MU, (r, r).")
      .def_property_readonly("alpha", &ReducedStVK::alpha, "Reduced Rayleigh mass factor: D = alpha U'MU + beta K(p).")
      .def_property_readonly("beta", &ReducedStVK::beta, "Reduced Rayleigh stiffness factor.")
      .def_property("damping_hessian", &ReducedStVK::damping_hessian, &ReducedStVK::set_damping_hessian,
                    "Whether jacobian() includes the damping-Hessian term beta dK/dp : p'.");
}

}  // namespace

void bind_fem(py::module_& m) {
  bind_mesh_and_material(m);
  bind_newmark(m);
  bind_reduced_stvk(m);
}

}  // namespace directable::py_bind
