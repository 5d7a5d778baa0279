#include "common.hpp"
#include "galerkin_fluid.hpp"
#include "directable/models/fluid/mac_grid.hpp"
#include "directable/models/fluid/reduced_fluid.hpp"
#include "directable/models/fluid/shape2d.hpp"

namespace directable::py_bind {

void bind_scene_particles(py::class_<FluidParticles, Model, std::shared_ptr<FluidParticles>>& cls);

//! RuntimeWarning for obstacles thinner than a cell of g (they leak).
void warn_thin(const MACGrid2D& g, const std::vector<Obstacle2D>& obstacles) {
  for (size_t k = 0; k < obstacles.size(); ++k)
    if (obstacles[k].shape && obstacles[k].shape->thickness() < g.h())
      PyErr_WarnEx(PyExc_RuntimeWarning,
                   ("obstacles[" + std::to_string(k) + "] is " + std::to_string(obstacles[k].shape->thickness()) +
                    " thick, thinner than one cell (h = " + std::to_string(g.h()) +
                    "): fluid and smoke will leak through it")
                       .c_str(),
                   1);
}

namespace {

using ReducedFluidClass = py::class_<ReducedFluid, GalerkinFluid, std::shared_ptr<ReducedFluid>>;

//! Stepping and evaluation at points.
void bind_reduced_fluid_steps(ReducedFluidClass& cls) {
  cls.def("modes", [](const ReducedFluid& f, const Array& x) {
        auto p = vector(x, "x", 2, true);
        RowMatrix Psi(2, f.r());
        f.modes(p[0], p[1], Psi);
        return Psi;
      }, py::arg("x"), R"doc(The modes Psi(x) at a point: the velocity of each basis field there.

Parameters
----------
x : (2,) array
    A point (m), clamped to the domain.

Returns
-------
(2, r) array
    Psi(x) (velocity per unit of z).)doc")
      .def("mode_gradients", [](const ReducedFluid& f, const Array& x) {
        auto p = vector(x, "x", 2, true);
        RowMatrix Psi(2, f.r()), dx, dy;
        f.modes(p[0], p[1], Psi, &dx, &dy);
        return py::make_tuple(dx, dy);
      }, py::arg("x"), R"doc(Spatial derivatives of the modes at a point.

Parameters
----------
x : (2,) array
    A point (m), clamped to the domain.

Returns
-------
dPsi_dx : (2, r) array
    d Psi / dx (1/s per unit of z), zero across a clamped wall.
dPsi_dy : (2, r) array
    d Psi / dy.)doc")
      .def("velocity", [](const ReducedFluid& f, const Array& z, const Array& pts) {
        auto P = rows_view(pts, "points", -1);
        RowMatrix out(P.rows(), 2);
        f.velocities(vector(z, "z"), P, out);
        return out;
      }, py::arg("z"), py::arg("points"), R"doc(The reduced velocity Psi(p) z at points.

Parameters
----------
z : (r,) array
    Reduced velocity.
points : (P, 2) array
    Points (m), clamped to the domain.

Returns
-------
(P, 2) array
    Velocities (m/s).)doc");
}

void bind_reduced_fluid(py::module_& m) {
  using G = MACGrid2D;
  ReducedFluidClass cls(m, "ReducedFluid", R"doc(
Reduced (Galerkin) fluid, Treuille thesis ch. 3: z' = A(z) z + nu D z + w.

basis (N, r): orthonormal columns (plain dot product), divergence-free and
zero on the wall faces (a basis that is not gets a RuntimeWarning with its
divergence, as does one whose columns are not orthonormal). The r reduced advection matrices B' A(b_k) B (conservation-form
stencil) and D = B' Lap B are precomputed here (parallel, GIL released).

Parameters
----------
grid : MACGrid2D
    The grid of the basis (a MACGrid3D gives the 3D model).
basis : (N, r) array
    The velocity basis B.
viscosity : float
    Kinematic viscosity nu (m^2/s), >= 0.
divergence_tol : float
    Largest max |div| h of the basis before a RuntimeWarning.
threads : int
    Threads of the precomputation (0: all).
progress : None, bool or callable(done, total)
    Progress report of the precomputation.)doc");
  cls.def(py::init([](std::shared_ptr<G> grid, const Array& basis, double viscosity, double divergence_tol, int threads,
                       py::object progress) {
        auto B = rows_view(basis, "basis", -1, -1, false, "N", "r");
        Progress prog(progress);
        auto f = prog.run([&](const ProgressFn* fn) {
          return std::make_shared<ReducedFluid>(grid, B, viscosity, threads, fn);
        });
        warn_basis_quality(*f, divergence_tol, "MACGrid2D.project");
        return f;
      }), py::arg("grid"), py::arg("basis"), py::arg("viscosity") = 0.0, py::arg("divergence_tol") = 1e-8,
         py::arg("threads") = 0, py::arg("progress") = py::none())
      .def_property_readonly("grid", [](const ReducedFluid& f) { return std::const_pointer_cast<G>(f.grid_ptr()); },
                             "The MACGrid2D of the basis.");
  bind_reduced_fluid_steps(cls);
}

void bind_mac_grid(py::module_& m) {
  using G = MACGrid2D;
  py::class_<G, std::shared_ptr<G>>(m, "MACGrid2D", R"doc(
2D MAC grid on [0, nx h] x [0, ny h] with free-slip walls.

A velocity field is a flat (N,) vector, N = ny (nx+1) + (ny+1) nx: all
x-faces first (ny rows x (nx+1) columns, row-major, face (i, j) at
(i h, (j+1/2) h)), then all y-faces ((ny+1) rows x nx columns, face (i, j) at
((i+1/2) h, j h)). Cell quantities (pressure, smoke) are (ny * nx,) row-major.
The pressure Laplacian is factorised once, here.

Parameters
----------
nx, ny : int
    Cells along x and y.
h : float, optional
    Cell size (m); default 1/nx.
solid : (ny, nx) bool array, optional
    Fixed solid cells, whose faces are closed.)doc")
      .def(py::init([](Index nx, Index ny, std::optional<double> h, std::optional<py::array_t<bool, py::array::c_style | py::array::forcecast>> solid) {
        Mask mask;
        if (solid) {
          if (solid->ndim() != 2 || solid->shape(0) != ny || solid->shape(1) != nx)
            throw_shape("solid", "(" + std::to_string(ny) + ", " + std::to_string(nx) + ") (ny, nx)", shape_of(*solid));
          mask = Eigen::Map<const Mask>(solid->data(), nx * ny);
        }
        return std::make_shared<G>(nx, ny, h.value_or(1.0 / double(nx)), mask);
      }), py::arg("nx"), py::arg("ny"), py::arg("h") = py::none(), py::arg("solid") = py::none(),
         "Grid of nx x ny cells of size h (default 1/nx) with an optional (ny, nx) bool mask of fixed solid cells.")
      .def_property_readonly("solid", [](const G& g) {
        py::array_t<bool> out({g.ny(), g.nx()});
        std::copy(g.solid().data(), g.solid().data() + g.n_cells(), out.mutable_data());
        return out;
      }, "(ny, nx) bool: the fixed solid cells.")
      .def_property_readonly("nx", &G::nx, "Cells along x.")
      .def_property_readonly("ny", &G::ny, "Cells along y.")
      .def_property_readonly("h", &G::h, "Cell size (m).")
      .def_property_readonly("n_faces", &G::n_faces, "N, the size of a velocity vector.")
      .def_property_readonly("n_xfaces", &G::n_xfaces, "ny (nx+1).")
      .def_property_readonly("n_yfaces", &G::n_yfaces, "(ny+1) nx.")
      .def_property_readonly("n_cells", &G::n_cells, "nx ny.")
      .def("wall_mask", [](const G& g) { return Mask(g.wall_mask()); },
           R"doc(The closed faces: on the walls or touching a solid cell.

Returns
-------
(N,) bool array
    True on closed faces (always zero in a free-slip field).)doc")
      .def("divergence", [](const G& g, const Array& u) {
        Eigen::VectorXd d(g.n_cells());
        g.divergence(vector(u, "u", g.n_faces(), true), d);
        return d;
      }, py::arg("u"), R"doc(Discrete divergence of a velocity field.

Parameters
----------
u : (N,) array
    Face velocities (m/s).

Returns
-------
(nx ny,) array
    Divergence per cell (1/s).)doc")
      .def("max_divergence", [](const G& g, const Array& U) {
        return g.max_divergence(rows_view(U, "basis", -1));
      }, py::arg("basis"),
         R"doc(How far the columns of a basis are from divergence-free free-slip fields.

Parameters
----------
basis : (N, r) array
    Fields as columns.

Returns
-------
float
    Largest |div| h or |closed-face value| over the columns (0 for divergence-free free-slip fields).)doc")
      .def("project", [](const G& g, const Array& u) -> py::object {
        if (u.ndim() == 2) {
          RowMatrix fields = rows_view(u, "u", -1, -1, false, "k", "N");
          {
            py::gil_scoped_release release;
            g.project_rows(fields);
          }
          return py::cast(std::move(fields));
        }
        Eigen::VectorXd out = vector(u, "u", g.n_faces(), true);
        Eigen::VectorXd p(g.n_cells());
        g.project(out, p);
        return py::cast(std::move(out));
      }, py::arg("u"),
         R"doc(Divergence-free, free-slip projection (sparse LDL', factorised once).

Parameters
----------
u : (N,) or (k, N) array
    A field, or one per row.

Returns
-------
(N,) or (k, N) array
    The projected field(s).)doc")
      .def("velocity_at", [](const G& g, const Array& u, const Array& pts) {
        auto P = rows_view(pts, "points", -1);
        RowMatrix out(P.rows(), 2);
        g.velocities_at(vector(u, "u"), P, out);
        return out;
      }, py::arg("u"), py::arg("points"), R"doc(Bilinearly interpolated velocities at points.

Parameters
----------
u : (N,) array
    Face velocities (m/s).
points : (P, 2) array
    Points (m), clamped to the domain.

Returns
-------
(P, 2) array
    Velocities (m/s).)doc")
      .def("advect_velocity", [](const G& g, const Array& u, double dt) {
        Eigen::VectorXd out(g.n_faces());
        g.advect_velocity(vector(u, "u", g.n_faces(), true), dt, out);
        return out;
      }, py::arg("u"), py::arg("dt"), R"doc(Semi-Lagrangian (RK2 back-trace) self-advection.

Parameters
----------
u : (N,) array
    Face velocities (m/s).
dt : float
    Step (s).

Returns
-------
(N,) array
    The advected field.)doc")
      .def("advect_cells", [](const G& g, const Array& u, const Array& q, double dt) {
        Eigen::VectorXd out(g.n_cells());
        g.advect_cells(vector(u, "u", g.n_faces(), true), vector(q, "q", g.n_cells(), true), dt, out);
        return out;
      }, py::arg("u"), py::arg("q"), py::arg("dt"), R"doc(Semi-Lagrangian advection of a cell field.

Parameters
----------
u : (N,) array
    Face velocities (m/s).
q : (nx ny,) array
    Cell values (e.g. smoke density).
dt : float
    Step (s).

Returns
-------
(nx ny,) array
    The advected cell field (bilinear interpolation at the departure points).)doc")
      .def("advect_particles", [](const G& g, const Array& u, const Array& pts, double dt) {
        RowMatrix P = rows_view(pts, "points", 2, -1, true);
        g.advect_particles(vector(u, "u", g.n_faces(), true), P, dt);
        return P;
      }, py::arg("u"), py::arg("points"), py::arg("dt"), R"doc(Moves points one RK2 (midpoint) step through a field.

Parameters
----------
u : (N,) array
    Face velocities (m/s).
points : (P, 2) array
    Positions (m).
dt : float
    Step (s).

Returns
-------
(P, 2) array
    New positions, clamped to the domain.)doc")
      .def("wind", [](const G& g, const Array& center, const Array& direction, double magnitude, double width) {
        auto c = vector(center, "center", 2);
        auto d = vector(direction, "direction", 2);
        Eigen::VectorXd f = Eigen::VectorXd::Zero(g.n_faces());
        g.add_wind(f, c[0], c[1], d[0], d[1], magnitude, width);
        return f;
      }, py::arg("center"), py::arg("direction"), py::arg("magnitude"), py::arg("width"),
         R"doc(A Gaussian wind force field.

Parameters
----------
center : (2,) array
    Centre of the wind (m).
direction : (2,) array
    Its direction.
magnitude : float
    Its acceleration at the centre (m/s^2).
width : float
    Gaussian width (m).

Returns
-------
(N,) array
    magnitude * direction * exp(-|x - center|^2 / width^2) on the open faces (m/s^2).)doc");
}

//! A FluidRun as (velocities (T+1, N), particles (T+1, P, 2), density (T+1,
//! n_cells) or None): the arrays take over the matrices (moved, not copied).
py::tuple run_arrays(FluidRun run) {
  const py::ssize_t T1 = run.particles.rows(), P = run.particles.cols() / 2;
  py::object density = py::none();
  if (run.density.size() > 0) density = py::cast(std::move(run.density));
  py::object particles = py::cast(std::move(run.particles)).attr("reshape")(T1, P, 2);
  return py::make_tuple(py::cast(std::move(run.velocities)), particles, density);
}

void bind_fluid_sim(py::module_& m) {
  using G = MACGrid2D;
  py::class_<FluidSim2D, std::shared_ptr<FluidSim2D>>(m, "FluidSim2D", R"doc(
Full (unreduced) MAC fluid on a MACGrid2D.

Per step: force, semi-Lagrangian advection, implicit viscosity (factorised
once), pressure projection; smoke density (cells) and particles (P, 2)
advected through the new field. With moving obstacles the pressure is
solved over the fluid cells by a fresh sparse LDL' ("direct") or by
conjugate gradients with an incomplete-Cholesky preconditioner ("pcg").

Parameters
----------
grid : MACGrid2D
    The grid (shared, read-only).
viscosity : float
    Kinematic viscosity (m^2/s), >= 0.
dt : float
    Step (s), > 0.
pressure_solver : {"direct", "pcg"}
    Pressure solve of the steps with obstacles.
tolerance : float
    Relative residual tolerance of "pcg".)doc")
      .def(py::init([](std::shared_ptr<G> grid, double viscosity, double dt, const std::string& pressure_solver,
                       double tolerance) {
        PressureSolver solver;
        if (pressure_solver == "direct")
          solver = PressureSolver::Direct;
        else if (pressure_solver == "pcg")
          solver = PressureSolver::PCG;
        else
          throw std::invalid_argument("pressure_solver must be \"direct\" or \"pcg\", got \"" + pressure_solver + "\"");
        return std::make_shared<FluidSim2D>(grid, viscosity, dt, solver, tolerance);
      }), py::arg("grid"), py::arg("viscosity") = 0.0, py::arg("dt") = 0.01, py::arg("pressure_solver") = "direct",
         py::arg("tolerance") = 1e-12)
      .def_property_readonly("step_solid", [](const FluidSim2D& s) {
        const auto solid = read_locked(&s, [&] { return s.step_solid(); });
        py::array_t<bool> out({s.grid().ny(), s.grid().nx()});
        std::copy(solid.data(), solid.data() + s.grid().n_cells(), out.mutable_data());
        return out;
      }, "(ny, nx) bool: the solid cells of the last step (fixed solids and obstacles).")
      .def_property_readonly("pcg_iterations", [](const FluidSim2D& s) {
        return read_locked(&s, [&] { return s.pcg_iterations(); });
      }, "Iterations of the last obstacle step's PCG.")
      .def_property_readonly("pcg_residual", [](const FluidSim2D& s) {
        return read_locked(&s, [&] { return s.pcg_residual(); });
      }, "Relative residual of the last obstacle step's PCG.")
      .def_property_readonly("grid", [](const FluidSim2D& s) { return std::const_pointer_cast<G>(s.grid_ptr()); },
                             "The MACGrid2D.")
      .def_property_readonly("dt", &FluidSim2D::dt, "Step (s).")
      .def_property_readonly("viscosity", &FluidSim2D::viscosity, "Kinematic viscosity (m^2/s).")
      .def_property("velocity", [](const FluidSim2D& s) { return read_locked(&s, [&] { return Eigen::VectorXd(s.velocity()); }); },
                    [](FluidSim2D& s, const Array& u) {
                      auto v = vector(u, "velocity");
                      py::gil_scoped_release release;
                      ObjectLock busy(&s);
                      s.set_velocity(v);
                    },
                    "Velocity (N,) (a copy; assign to set).")
      .def_property("density", [](const FluidSim2D& s) { return read_locked(&s, [&] { return Eigen::VectorXd(s.density()); }); },
                    [](FluidSim2D& s, const Array& q) {
                      auto v = vector(q, "density");
                      py::gil_scoped_release release;
                      ObjectLock busy(&s);
                      s.set_density(v);
                    },
                    "Smoke density (nx ny,) (a copy; assign to set).")
      .def_property("particles", [](const FluidSim2D& s) { return read_locked(&s, [&] { return RowMatrix(s.particles()); }); },
                    [](FluidSim2D& s, const Array& p) {
                      auto P = rows_view(p, "particles", -1);
                      py::gil_scoped_release release;
                      ObjectLock busy(&s);
                      s.set_particles(P);
                    },
                    "Particle positions (P, 2) (a copy; assign to set).")
      .def("step", [](FluidSim2D& s, const OptArray& force, const std::vector<Obstacle2D>& obstacles) {
        Eigen::VectorXd f = optional_vector(force, "force");
        warn_thin(s.grid(), obstacles);
        py::gil_scoped_release release;
        ObjectLock busy(&s);
        s.step(f, obstacles);
      }, py::arg("force") = py::none(), py::arg("obstacles") = std::vector<Obstacle2D>(),
         R"doc(One step under a force field, with moving obstacles.

Cells whose centres lie inside an obstacle are solid for this step; every
face touching one takes the normal component of the obstacle's rigid
velocity, the pressure is solved over the fluid cells with that flux, smoke
in solid cells is zeroed and particles inside are pushed out along the
surface normal. The new velocity holds the rigid field on the solid cells,
so it is divergence-free on every cell. GIL released.

Parameters
----------
force : (N,) array, optional
    Acceleration field (m/s^2); None: none.
obstacles : list of Obstacle
    The obstacles during this step (thinner than a cell: RuntimeWarning).)doc")
      .def("run_obstacles", [](FluidSim2D& s, const Array& forces, const std::vector<std::shared_ptr<Shape2D>>& shapes,
                               const Array& poses, const Array& velocities, bool record_density, py::object progress) {
        auto F = rows_view(forces, "forces", -1, -1, false, "T", "N");
        auto P = rows_view(poses, "poses", -1, -1, false, "T", "3K");
        auto V = rows_view(velocities, "velocities", -1, -1, false, "T", "3K");
        std::vector<std::shared_ptr<const Shape2D>> sh(shapes.begin(), shapes.end());
        Progress prog(progress);
        return run_arrays(prog.run([&](const ProgressFn* fn) {
          ObjectLock busy(&s);
          return s.run_obstacles(F, sh, P, V, record_density, fn);
        }));
      }, py::arg("forces"), py::arg("shapes"), py::arg("poses"), py::arg("velocities"), py::arg("record_density") = false,
         py::arg("progress") = py::none(),
         R"doc(Runs T steps with K moving obstacles.

GIL released, throttled progress, Ctrl-C stops it.

Parameters
----------
forces : (T, N) array
    Acceleration field per step (m/s^2).
shapes : list of Shape2D
    The K obstacles' shapes.
poses : (T, 3K) array
    Obstacle k's (x, y, theta) during step t in columns 3k..3k+2 (m, m, rad).
velocities : (T, 3K) array
    Its (vx, vy, omega) (m/s, m/s, rad/s).
record_density : bool
    Record the smoke density of every state.
progress : None, bool or callable(done, total)
    Progress report.

Returns
-------
velocities : (T+1, N) array
    The states, the initial one first.
particles : (T+1, P, 2) array
    Particle positions (m).
density : (T+1, nx ny) array or None
    Smoke densities, when recorded.)doc")
      .def("run", [](FluidSim2D& s, const Array& forces, bool record_density, py::object progress) {
        auto F = rows_view(forces, "forces", -1, -1, false, "T", "N");
        Progress prog(progress);
        return run_arrays(prog.run([&](const ProgressFn* fn) {
          ObjectLock busy(&s);
          return s.run(F, record_density, fn);
        }));
      }, py::arg("forces"), py::arg("record_density") = false, py::arg("progress") = py::none(),
         R"doc(Runs T steps, step t under the acceleration field forces[t].

The simulator ends in the last state. GIL released, throttled
progress(done, total), Ctrl-C stops it; a non-finite velocity raises
ValueError naming the step.

Parameters
----------
forces : (T, N) array
    Acceleration field per step (m/s^2).
record_density : bool
    Record the smoke density of every state.
progress : None, bool or callable(done, total)
    Progress report.

Returns
-------
velocities : (T+1, N) array
    The states, the initial one first.
particles : (T+1, P, 2) array
    Particle positions (m).
density : (T+1, nx ny) array or None
    Smoke densities, when recorded.)doc")
      .def("run_particle_winds", [](FluidSim2D& s, const Array& directions, const Array& magnitudes, double width,
                                    py::object progress) {
        auto D = rows_view(directions, "directions", -1, -1, false, "T", "2");
        auto m = vector(magnitudes, "magnitudes");
        Progress prog(progress);
        return run_arrays(prog.run([&](const ProgressFn* fn) {
          ObjectLock busy(&s);
          return s.run_particle_winds(D, m, width, fn);
        }));
      }, py::arg("directions"), py::arg("magnitudes"), py::arg("width"), py::arg("progress") = py::none(),
         R"doc(Runs T steps under winds that follow the particles.

At step t a wind of direction directions[t] and magnitude magnitudes[k]
blows at particle k's position (as MACGrid2D.wind).

Parameters
----------
directions : (T, 2) array
    Wind direction per step.
magnitudes : (P,) array
    Wind acceleration per particle (m/s^2).
width : float
    Gaussian width of the winds (m).
progress : None, bool or callable(done, total)
    Progress report.

Returns
-------
velocities : (T+1, N) array
    The states, the initial one first.
particles : (T+1, P, 2) array
    Particle positions (m).
density : None
    No density is recorded.)doc");
}

void bind_fluid_particles(py::module_& m) {
  using G = MACGrid2D;
  py::class_<FluidParticles, Model, std::shared_ptr<FluidParticles>> cls(m, "FluidParticles", R"doc(
P particles in a reduced fluid as a Model (Barbic & Popovic appendix C):
state [p_1 .. p_P (2 each), z (r)], control w (r,), B = [0; I],
p_i' = Psi(p_i) z, z' = A(z) z + nu D z + w. step() is the reduced fluid step
plus RK2 particles (clamped to the domain).

Parameters
----------
fluid : ReducedFluid
    The reduced fluid.
particles : int
    Number of particles P.)doc");
  cls.def(py::init([](std::shared_ptr<ReducedFluid> fluid, Index particles) {
        return std::make_shared<FluidParticles>(fluid, particles);
      }), py::arg("fluid"), py::arg("particles"))
      .def_property_readonly("particles", &FluidParticles::particles, "Number of particles P.")
      .def_property_readonly("fluid", [](const FluidParticles& p) { return std::const_pointer_cast<ReducedFluid>(p.fluid_ptr()); },
                             "The ReducedFluid.");
  bind_scene_particles(cls);
}

}  // namespace

void bind_fluid_shapes(py::module_& m);
void bind_fluid_boundaries(py::module_& m);

void bind_fluid(py::module_& m) {
  bind_fluid_shapes(m);
  bind_mac_grid(m);
  bind_fluid_sim(m);
  bind_reduced_fluid(m);
  bind_fluid_particles(m);
  bind_fluid_boundaries(m);
}

}  // namespace directable::py_bind
