#include "common.hpp"
#include "galerkin_fluid.hpp"
#include "directable/models/fluid/boundary_basis3d.hpp"
#include "directable/models/fluid/coupling3d.hpp"
#include "directable/models/fluid/fluid_sim3d.hpp"
#include "directable/models/fluid/mac_grid3d.hpp"
#include "directable/models/fluid/reduced_fluid3d.hpp"
#include "directable/models/fluid/reduced_scene3d.hpp"
#include "directable/models/fluid/shape3d.hpp"

namespace directable::py_bind {

namespace {

using G3 = MACGrid3D;

RowMatrix coeffs3(const Array& a) { return rows_view(a, "boundary_coeffs", -1, -1, false, "K", "m"); }
Eigen::Map<const RowMatrix> poses6(const Array& a, const char* name) { return rows_view(a, name, -1, -1, false, "K", "6"); }

Eigen::Vector3d vec3(const Array& a, const char* name) { return vector(a, name, 3); }
Eigen::Vector3d opt_vec3(const OptArray& a, const char* name) {
  return a ? Eigen::Vector3d(vector(*a, name, 3)) : Eigen::Vector3d::Zero();
}

//! A (3, 3) rotation matrix, a (3,) rotation vector (axis times angle) or None (identity).
Eigen::Matrix3d rotation_arg(const OptArray& a) {
  if (!a) return Eigen::Matrix3d::Identity();
  if (a->ndim() == 1) return rotation_from_vector(vector(*a, "rotation", 3));
  return rows_view(*a, "rotation", 3, 3);
}

//! A bool mask array (any shape) as flat cell flags and its shape.
CellMask mask_arg(const py::array& a, std::vector<Index>& shape) {
  py::array_t<bool, py::array::c_style | py::array::forcecast> b(a);
  shape.assign(b.shape(), b.shape() + b.ndim());
  return Eigen::Map<const CellMask>(b.data(), b.size());
}

py::array_t<bool> bool_array(const Eigen::Array<bool, Eigen::Dynamic, 1>& m, std::vector<py::ssize_t> shape) {
  py::array_t<bool> out(shape);
  std::copy(m.data(), m.data() + m.size(), out.mutable_data());
  return out;
}

void bind_grid3d(py::module_& m) {
  py::class_<G3, std::shared_ptr<G3>>(m, "MACGrid3D", R"doc(
3D MAC grid on [0, nx h] x [0, ny h] x [0, nz h] with free-slip walls and optional fixed solid cells.

A velocity field is a flat (N,) vector: all x-faces (nz x ny x (nx+1), i
fastest; face (i, j, k) at (i h, (j+1/2) h, (k+1/2) h)), then y-faces
(nz x (ny+1) x nx), then z-faces ((nz+1) x ny x nx). Cell quantities are
(nz ny nx,) with i fastest (reshape to (nz, ny, nx)). The pressure is solved
over the fluid cells: by a sparse LDL' factorised here when there are at most
direct_limit fluid cells, else by MIC(0)-preconditioned CG.)doc")
      .def(py::init([](Index nx, Index ny, Index nz, std::optional<double> h, std::optional<py::array> solid,
                       std::optional<Index> direct_limit) {
        std::vector<Index> shape;
        CellMask mask = solid ? mask_arg(*solid, shape) : CellMask();
        return std::make_shared<G3>(nx, ny, nz, h.value_or(1.0 / double(nx)), mask, direct_limit.value_or(-1), shape);
      }), py::arg("nx"), py::arg("ny"), py::arg("nz"), py::arg("h") = py::none(), py::arg("solid") = py::none(),
         py::arg("direct_limit") = py::none(),
         R"doc(A grid of nx x ny x nz cells of side h.

Parameters
----------
nx, ny, nz : int
    Cells along x, y, z (>= 1).
h : float, optional
    Cell side (m); default 1 / nx.
solid : (nz, ny, nx) bool array, optional
    Fixed solid cells; the pressure solve and the face Laplacian respect them.
direct_limit : int, optional
    Most fluid cells for which project() factorises the Poisson matrix once
    (sparse LDL'); above it, MIC(0)-preconditioned CG. Default 8192
    (measured crossover, benchmarks/bench_fluid3d.py).)doc")
      .def_property_readonly("nx", &G3::nx, "Cells along x.")
      .def_property_readonly("ny", &G3::ny, "Cells along y.")
      .def_property_readonly("nz", &G3::nz, "Cells along z.")
      .def_property_readonly("h", &G3::h, "Cell side (m).")
      .def_property_readonly("n_faces", &G3::n_faces, "N, the size of a velocity vector.")
      .def_property_readonly("n_xfaces", &G3::n_xfaces, "nz ny (nx+1).")
      .def_property_readonly("n_yfaces", &G3::n_yfaces, "nz (ny+1) nx.")
      .def_property_readonly("n_zfaces", &G3::n_zfaces, "(nz+1) ny nx.")
      .def_property_readonly("n_cells", &G3::n_cells, "nx ny nz.")
      .def_property_readonly("uses_direct_solver", &G3::uses_direct_solver,
                             "Whether project() uses the LDL' factor (else MIC(0)-PCG).")
      .def_property_readonly("solid", [](const G3& g) {
        return bool_array(g.solid(), {g.nz(), g.ny(), g.nx()});
      }, "(nz, ny, nx) bool: the fixed solid cells.")
      .def("closed_mask", [](const G3& g) { return bool_array(g.closed_mask(), {g.n_faces()}); },
           R"doc(The faces a field of this grid always has zero.

Returns
-------
(N,) bool array
    Wall faces and faces touching a fixed solid cell.)doc")
      .def("divergence", [](const G3& g, const Array& u) {
        Eigen::VectorXd d(g.n_cells());
        auto uv = vector(u, "u");
        g.check_field("u", uv);
        g.divergence(uv, d);
        return d;
      }, py::arg("u"), R"doc(Discrete divergence of a velocity field.

Parameters
----------
u : (N,) array
    Face velocities (m/s).

Returns
-------
(n_cells,) array
    div u per cell (1/s).)doc")
      .def("max_divergence", [](const G3& g, const Array& U) { return g.max_divergence(rows_view(U, "basis", -1)); },
           py::arg("basis"), R"doc(How far the columns of a basis are from divergence-free, free-slip fields.

Parameters
----------
basis : (N, r) array
    Velocity fields as columns.

Returns
-------
float
    Largest |div| h over fluid cells or |value| on a closed face (m/s).)doc")
      .def("project", [](const G3& g, const Array& u, double tol) -> py::object {
        if (u.ndim() == 2) {
          RowMatrix fields = rows_view(u, "u", -1, -1, false, "k", "N");
          {
            py::gil_scoped_release release;
            g.project_rows(fields, tol);
          }
          return py::cast(std::move(fields));
        }
        Eigen::VectorXd out = vector(u, "u");
        Progress prog{py::none()};
        prog.run([&](const ProgressFn* fn) {
          g.check_field("u", out);
          PressureWorkspace3D ws(g.n_cells());
          g.project(out, ws, tol, fn);
        });
        return py::cast(std::move(out));
      }, py::arg("u"), py::arg("tol") = 1e-10,
         R"doc(Divergence-free projection: closed faces zeroed, pressure over the fluid cells.

Parameters
----------
u : (N,) or (k, N) array
    A velocity field (m/s), or k of them as rows (projected in parallel).
tol : float
    Relative residual of the pressure PCG (the direct solve is exact). A PCG
    that does not reach it raises ValueError with its residual.

Returns
-------
(N,) or (k, N) array
    The projected field(s).)doc")
      .def("velocity_at", [](const G3& g, const Array& u, const Array& pts) {
        auto P = rows_view(pts, "points", 3);
        RowMatrix out(P.rows(), 3);
        g.velocities_at(vector(u, "u"), P, out);
        return out;
      }, py::arg("u"), py::arg("points"), R"doc(Trilinearly interpolated velocities of a face field.

Parameters
----------
u : (N,) array
    Face velocities (m/s).
points : (P, 3) array
    World points (m), clamped to the domain.

Returns
-------
(P, 3) array
    Velocities (m/s).)doc")
      .def("advect_velocity", [](const G3& g, const Array& u, double dt) {
        auto uv = vector(u, "u");
        g.check_field("u", uv);
        Eigen::VectorXd out(g.n_faces());
        py::gil_scoped_release release;
        g.advect_velocity(uv, dt, out);
        return out;
      }, py::arg("u"), py::arg("dt"), R"doc(Semi-Lagrangian self-advection of a velocity field (RK2 back-trace).

Parameters
----------
u : (N,) array
    Face velocities (m/s).
dt : float
    Step (s).

Returns
-------
(N,) array
    The advected field (m/s), not projected.)doc")
      .def("advect_cells", [](const G3& g, const Array& u, const Array& q, double dt, const OptArray& drift) {
        auto uv = vector(u, "u");
        auto qv = vector(q, "q");
        g.check_field("u", uv);
        g.check_cells("q", qv);
        const Eigen::Vector3d d = opt_vec3(drift, "drift");
        Eigen::VectorXd out(g.n_cells());
        py::gil_scoped_release release;
        g.advect_cells(uv, qv, dt, d, out);
        return out;
      }, py::arg("u"), py::arg("q"), py::arg("dt"), py::arg("drift") = py::none(),
         R"doc(Semi-Lagrangian advection of a cell quantity (smoke) through u plus a drift.

Parameters
----------
u : (N,) array
    Face velocities (m/s).
q : (n_cells,) array
    The cell quantity.
dt : float
    Step (s).
drift : (3,) array, optional
    Uniform drift added to u (m/s).

Returns
-------
(n_cells,) array
    q after the step.)doc")
      .def("advect_particles", [](const G3& g, const Array& u, const Array& pts, double dt, const OptArray& drift) {
        auto uv = vector(u, "u");
        g.check_field("u", uv);
        RowMatrix P = rows_view(pts, "points", 3, -1, true);
        g.advect_particles(uv, P, dt, opt_vec3(drift, "drift"));
        return P;
      }, py::arg("u"), py::arg("points"), py::arg("dt"), py::arg("drift") = py::none(),
         R"doc(One RK2 (midpoint) step of points through a face field plus a drift.

Parameters
----------
u : (N,) array
    Face velocities (m/s).
points : (P, 3) array
    Positions (m).
dt : float
    Step (s).
drift : (3,) array, optional
    Uniform drift (m/s).

Returns
-------
(P, 3) array
    The moved points, clamped to the domain.)doc")
      .def("wind", [](const G3& g, const Array& center, const Array& direction, double magnitude, double width) {
        Eigen::VectorXd f = Eigen::VectorXd::Zero(g.n_faces());
        g.add_wind(f, vec3(center, "center"), vec3(direction, "direction"), magnitude, width);
        return f;
      }, py::arg("center"), py::arg("direction"), py::arg("magnitude"), py::arg("width"),
         R"doc(A Gaussian wind force field on the open faces.

Parameters
----------
center : (3,) array
    Centre of the gust (m).
direction : (3,) array
    Its direction (normalised here).
magnitude : float
    Peak acceleration (m/s^2).
width : float
    Gaussian width (m).

Returns
-------
(N,) array
    magnitude * direction * exp(-|x - center|^2 / width^2) at each open face (m/s^2).)doc");
}

void bind_shapes3d(py::module_& m) {
  py::class_<Shape3D, std::shared_ptr<Shape3D>>(m, "Shape3D", R"doc(
A rigid 3D shape: a closed triangle mesh in the object frame (vertices (V, 3),
triangles (F, 3) int, outward-oriented; an inward mesh is reversed, see
`reversed`). Inside test by generalised winding number.

Parameters
----------
vertices : (V, 3) array
    Vertex positions (m), object frame.
triangles : (F, 3) int array
    Vertex indices of each triangle, consistently oriented; every edge
    shared by exactly two triangles.)doc")
      .def(py::init([](const Array& vertices, const py::array_t<Index, py::array::c_style | py::array::forcecast>& tri) {
        auto V = rows_view(vertices, "vertices", 3);
        if (tri.ndim() != 2 || tri.shape(1) != 3)
          throw_shape("triangles", "(F, 3)", shape_str(tri.ndim() > 0 ? tri.shape(0) : 0, tri.ndim() > 1 ? tri.shape(1) : 0));
        TriangleMatrix F = Eigen::Map<const TriangleMatrix>(tri.data(), tri.shape(0), 3);
        return std::make_shared<Shape3D>(V, F);
      }), py::arg("vertices"), py::arg("triangles"))
      .def_static("box", [](double w, double h, double d) { return std::make_shared<Shape3D>(Shape3D::box(w, h, d)); },
                  py::arg("w"), py::arg("h"), py::arg("d"), R"doc(A box centred on the object origin.

Parameters
----------
w, h, d : float
    Sides along x, y, z (m).

Returns
-------
Shape3D)doc")
      .def_static("sphere", [](double r, int s) { return std::make_shared<Shape3D>(Shape3D::sphere(r, s)); },
                  py::arg("r"), py::arg("subdivisions") = 2, R"doc(An icosphere centred on the object origin.

Parameters
----------
r : float
    Radius (m).
subdivisions : int
    Times the icosahedron's triangles are split in four (2: 320 triangles).

Returns
-------
Shape3D)doc")
      .def_static("plate", [](double w, double h, double t, const OptArray& aperture) {
        Eigen::Vector2d a = aperture ? Eigen::Vector2d(vector(*aperture, "aperture", 2)) : Eigen::Vector2d::Zero();
        return std::make_shared<Shape3D>(Shape3D::plate(w, h, t, a[0], a[1]));
      }, py::arg("w"), py::arg("h"), py::arg("thickness"), py::arg("aperture") = py::none(),
         R"doc(A plate centred on the object origin, its normal along z.

Parameters
----------
w, h : float
    Sides along x and y (m).
thickness : float
    Extent along z (m).
aperture : (2,) array, optional
    Sides (aw, ah) (m) of a centred rectangular hole through it.

Returns
-------
Shape3D)doc")
      .def_property_readonly("vertices", [](const Shape3D& s) { return s.vertices(); }, "(V, 3) vertex positions (m), object frame.")
      .def_property_readonly("triangles", [](const Shape3D& s) { return s.triangles(); }, "(F, 3) vertex indices, outward-oriented.")
      .def_property_readonly("reversed", &Shape3D::reversed, "Whether the given mesh was inward and got reversed.")
      .def_property_readonly("volume", &Shape3D::volume, "Enclosed volume (m^3).")
      .def_property_readonly("radius", &Shape3D::radius, "Largest vertex distance from the origin (m).")
      .def_property_readonly("min_extent", &Shape3D::min_extent, "Smallest side of the bounding box (m).")
      .def("inside", [](const Shape3D& s, const Array& pts) {
        auto P = rows_view(pts, "points", 3);
        Eigen::Array<bool, Eigen::Dynamic, 1> in(P.rows());
        s.inside(P, in);
        return bool_array(in, {P.rows()});
      }, py::arg("points"), R"doc(Which points lie inside the shape (generalised winding number > 1/2).

Parameters
----------
points : (P, 3) array
    Object-frame points (m).

Returns
-------
(P,) bool array)doc")
      .def("surface", [](const Shape3D& s, double spacing) {
        RowMatrix P, N;
        s.surface(spacing, P, N);
        return py::make_tuple(P, N);
      }, py::arg("spacing"), R"doc(Surface samples about spacing apart (one per plane and cube of that side).

Parameters
----------
spacing : float
    Sample spacing (m).

Returns
-------
points : (q, 3) array
    Object frame (m).
normals : (q, 3) array
    Outward unit normals.)doc")
      .def("closest_point", [](const Shape3D& s, const Array& pts) {
        auto P = rows_view(pts, "points", 3);
        RowMatrix Q(P.rows(), 3), N(P.rows(), 3);
        s.closest_point(P, Q, N);
        return py::make_tuple(Q, N);
      }, py::arg("points"), R"doc(The closest surface point of each point, with its outward normal.

Parameters
----------
points : (P, 3) array
    Object-frame points (m).

Returns
-------
closest : (P, 3) array
    Surface points (m).
normals : (P, 3) array
    Outward unit normals of the triangles they lie on.)doc");

  py::class_<Obstacle3D, std::shared_ptr<Obstacle3D>>(m, "Obstacle3D", R"doc(
A Shape3D at a pose with a rigid velocity: world = R local + position,
velocity at x = velocity + angular_velocity x (x - position).)doc")
      .def(py::init([](std::shared_ptr<Shape3D> shape, const Array& position, const OptArray& rotation,
                       const OptArray& velocity, const OptArray& angular_velocity) {
        return std::make_shared<Obstacle3D>(shape, vec3(position, "position"), rotation_arg(rotation),
                                            opt_vec3(velocity, "velocity"),
                                            opt_vec3(angular_velocity, "angular_velocity"));
      }), py::arg("shape"), py::arg("position"), py::arg("rotation") = py::none(), py::arg("velocity") = py::none(),
         py::arg("angular_velocity") = py::none(),
         R"doc(A shape placed in the world and moving rigidly.

Parameters
----------
shape : Shape3D
position : (3,) array
    World position of the object origin (m).
rotation : (3, 3) or (3,) array, optional
    Rotation matrix, or rotation vector (axis times angle, rad); None: identity.
velocity : (3,) array, optional
    Linear velocity (m/s); default zero.
angular_velocity : (3,) array, optional
    Angular velocity (rad/s), world frame; default zero.)doc")
      .def_property_readonly("shape", [](const Obstacle3D& o) { return std::const_pointer_cast<Shape3D>(o.shape_ptr()); },
                             "The Shape3D (object frame).")
      .def_property_readonly("position", [](const Obstacle3D& o) { return Eigen::Vector3d(o.position()); },
                             "(3,) world position of the object origin (m).")
      .def_property_readonly("rotation", [](const Obstacle3D& o) { return Eigen::Matrix3d(o.rotation()); },
                             "(3, 3) rotation matrix R: world = R local + position.")
      .def_property_readonly("velocity", [](const Obstacle3D& o) { return Eigen::Vector3d(o.velocity()); },
                             "(3,) linear velocity (m/s).")
      .def_property_readonly("angular_velocity", [](const Obstacle3D& o) { return Eigen::Vector3d(o.angular_velocity()); },
                             "(3,) angular velocity (rad/s), world frame.")
      .def("inside", [](const Obstacle3D& o, const Array& pts) {
        auto P = rows_view(pts, "points", 3);
        Eigen::Array<bool, Eigen::Dynamic, 1> in(P.rows());
        o.inside(P, in);
        return bool_array(in, {P.rows()});
      }, py::arg("points"), R"doc(Which world points lie inside the obstacle.

Parameters
----------
points : (P, 3) array
    World points (m).

Returns
-------
(P,) bool array)doc")
      .def("rigid_velocity", [](const Obstacle3D& o, const Array& pts) {
        auto P = rows_view(pts, "points", 3);
        RowMatrix V(P.rows(), 3);
        o.rigid_velocity(P, V);
        return V;
      }, py::arg("points"), R"doc(The rigid velocity velocity + angular_velocity x (x - position).

Parameters
----------
points : (P, 3) array
    World points x (m).

Returns
-------
(P, 3) array
    Velocities (m/s).)doc");
}

void bind_sim3d(py::module_& m) {
  py::class_<FluidSim3D, std::shared_ptr<FluidSim3D>>(m, "FluidSim3D", R"doc(
Full 3D MAC fluid with moving obstacles: per step force (+ buoyancy of the
smoke), semi-Lagrangian advection, implicit viscosity (CG), obstacle cells
made solid with their rigid normal velocity on every face they touch,
projection over the fluid cells (MIC(0)-PCG to tol), then smoke and particles
advected through the new field plus the uniform updraft (smoke in solids is
zero, particles are pushed out of obstacles).

Parameters
----------
grid : MACGrid3D
viscosity : float
    Kinematic viscosity (m^2/s), >= 0.
dt : float
    Step (s), > 0.
updraft : (3,) array, optional
    Uniform velocity (m/s) carrying smoke and particles besides the flow.
buoyancy : (3,) array, optional
    Acceleration per unit smoke density (m/s^2).
tol : float
    Relative residual of the pressure PCG.)doc")
      .def(py::init([](std::shared_ptr<G3> grid, double viscosity, double dt, const OptArray& updraft,
                       const OptArray& buoyancy, double tol) {
        return std::make_shared<FluidSim3D>(grid, viscosity, dt, opt_vec3(updraft, "updraft"),
                                            opt_vec3(buoyancy, "buoyancy"), tol);
      }), py::arg("grid"), py::arg("viscosity") = 0.0, py::arg("dt") = 0.01, py::arg("updraft") = py::none(),
         py::arg("buoyancy") = py::none(), py::arg("tol") = 1e-8)
      .def_property_readonly("grid", [](const FluidSim3D& s) { return std::const_pointer_cast<G3>(s.grid_ptr()); },
                             "The MACGrid3D.")
      .def_property_readonly("dt", &FluidSim3D::dt, "Step (s).")
      .def_property_readonly("viscosity", &FluidSim3D::viscosity, "Kinematic viscosity (m^2/s).")
      .def_property_readonly("tol", &FluidSim3D::tol, "Relative residual of the pressure PCG.")
      .def_property_readonly("updraft", [](const FluidSim3D& s) { return Eigen::Vector3d(s.updraft()); },
                             "(3,) uniform velocity carrying smoke and particles (m/s).")
      .def_property_readonly("buoyancy", [](const FluidSim3D& s) { return Eigen::Vector3d(s.buoyancy()); },
                             "(3,) acceleration per unit smoke density (m/s^2).")
      .def_property("velocity", [](const FluidSim3D& s) { return read_locked(&s, [&] { return Eigen::VectorXd(s.velocity()); }); },
                    [](FluidSim3D& s, const Array& u) {
                      auto v = vector(u, "velocity");
                      py::gil_scoped_release release;
                      ObjectLock busy(&s);  // not while another thread steps it
                      s.set_velocity(v);
                    },
                    "Velocity (N,) (a copy; assign to set).")
      .def_property("density", [](const FluidSim3D& s) { return read_locked(&s, [&] { return Eigen::VectorXd(s.density()); }); },
                    [](FluidSim3D& s, const Array& q) {
                      auto v = vector(q, "density");
                      py::gil_scoped_release release;
                      ObjectLock busy(&s);
                      s.set_density(v);
                    },
                    "Smoke density (n_cells,) (a copy; assign to set).")
      .def_property("particles", [](const FluidSim3D& s) { return read_locked(&s, [&] { return RowMatrix(s.particles()); }); },
                    [](FluidSim3D& s, const Array& p) {
                      auto P = rows_view(p, "particles", 3);
                      py::gil_scoped_release release;
                      ObjectLock busy(&s);
                      s.set_particles(P);
                    },
                    "Particle positions (P, 3) (a copy; assign to set).")
      .def_property_readonly("solid", [](const FluidSim3D& s) {
        return bool_array(read_locked(&s, [&] { return s.solid(); }), {s.grid().nz(), s.grid().ny(), s.grid().nx()});
      }, "(nz, ny, nx) bool: the cells solid in the last step.")
      .def_property_readonly("pressure_iterations", [](const FluidSim3D& s) {
        return read_locked(&s, [&] { return s.pressure_iterations(); });
      }, "PCG iterations of the last step (0: direct).")
      .def_property_readonly("pressure_residual", [](const FluidSim3D& s) {
        return read_locked(&s, [&] { return s.pressure_residual(); });
      }, "Relative residual of the last pressure solve.")
      .def_property_readonly("pushed_particles", [](const FluidSim3D& s) {
        return read_locked(&s, [&] { return s.pushed_particles(); });
      }, "Particles pushed out of obstacles in the last step.")
      .def("step", [](FluidSim3D& s, const OptArray& force, const std::vector<Obstacle3D>& obstacles) {
        Eigen::VectorXd f = optional_vector(force, "force");
        Progress prog{py::none()};  // Ctrl-C stops the step within the throttle interval
        prog.run([&](const ProgressFn* fn) {
          ObjectLock busy(&s);  // two threads stepping one simulation take turns
          s.step(f, obstacles, fn);
        });
      }, py::arg("force") = py::none(), py::arg("obstacles") = std::vector<Obstacle3D>(),
         "One step with the acceleration field force (N,) or None and the obstacles (Obstacle3D, at this step's poses).");
}

void bind_reduced3d(py::module_& m) {
  py::class_<ReducedFluid3D, GalerkinFluid, std::shared_ptr<ReducedFluid3D>>(m, "ReducedFluid3D", R"doc(
Reduced (Galerkin) fluid on a MACGrid3D (Treuille thesis sec. 3.6-3.7): z' = A(z) z + nu D z + w.

basis (N, r): orthonormal, divergence-free columns, zero on the closed faces.
The advection matrices B' A(b_k) B come from the 3D conservation-form
stencil (eq. 3.13-3.14), precomputed in parallel with the GIL released.

Parameters
----------
grid : MACGrid3D
basis : (N, r) array
    Velocity basis B (copied).
viscosity : float
    nu (m^2/s), >= 0.
divergence_tol : float
    A basis whose divergence or closed-face values exceed this warns.
threads : int
    Threads of the precomputation (<= 0: all).
progress : None, bool or callable(done, total)
    Progress of the precomputation (True: a tqdm bar).)doc")
      .def(py::init([](std::shared_ptr<G3> grid, const Array& basis, double viscosity, double divergence_tol,
                       int threads, py::object progress) {
        auto B = rows_view(basis, "basis", -1, -1, false, "N", "r");
        Progress prog(progress);
        auto f = prog.run([&](const ProgressFn* fn) {
          return std::make_shared<ReducedFluid3D>(grid, B, viscosity, threads, fn);
        });
        warn_basis_quality(*f, divergence_tol, "MACGrid3D.project");
        return f;
      }), py::arg("grid"), py::arg("basis"), py::arg("viscosity") = 0.0, py::arg("divergence_tol") = 1e-8,
         py::arg("threads") = 0, py::arg("progress") = py::none())
      .def_property_readonly("grid", [](const ReducedFluid3D& f) { return std::const_pointer_cast<G3>(f.grid_ptr()); },
                             "The MACGrid3D of the basis.")
      .def("modes", [](const ReducedFluid3D& f, const Array& x) {
        RowMatrix Psi(3, f.r());
        f.modes(vec3(x, "x"), Psi);
        return Psi;
      }, py::arg("x"), R"doc(The velocity modes at a point: u(x) = Psi(x) z.

Parameters
----------
x : (3,) array
    World point (m), clamped to the domain.

Returns
-------
(3, r) array
    Psi(x), trilinear interpolation of the basis fields.)doc")
      .def("mode_gradients", [](const ReducedFluid3D& f, const Array& x) {
        RowMatrix Psi(3, f.r()), d[3];
        f.modes(vec3(x, "x"), Psi, d);
        return py::make_tuple(d[0], d[1], d[2]);
      }, py::arg("x"), R"doc(Spatial derivatives of the velocity modes at a point.

Parameters
----------
x : (3,) array
    World point (m), clamped to the domain.

Returns
-------
dPsi_dx, dPsi_dy, dPsi_dz : (3, r) arrays
    Derivatives (1/m) of Psi(x) along x, y, z.)doc")
      .def("velocity", [](const ReducedFluid3D& f, const Array& z, const Array& pts) {
        auto P = rows_view(pts, "points", 3);
        RowMatrix out(P.rows(), 3);
        f.velocities(vector(z, "z"), P, out);
        return out;
      }, py::arg("z"), py::arg("points"), R"doc(The reduced velocity field at points.

Parameters
----------
z : (r,) array
    Reduced velocity.
points : (P, 3) array
    World points (m), clamped to the domain.

Returns
-------
(P, 3) array
    Psi(p) z at each point (m/s).)doc")
      .def("advect_particles", [](const ReducedFluid3D& f, const Array& z, const Array& z_next, const Array& pts,
                                  double dt, const OptArray& drift, const std::vector<Obstacle3D>& obstacles,
                                  int threads, std::shared_ptr<ReducedFluidData> data) {
        RowMatrix P = rows_view(pts, "points", 3, -1, true);
        auto zv = vector(z, "z");
        auto zn = vector(z_next, "z_next");
        const Eigen::Vector3d d = opt_vec3(drift, "drift");
        Index pushed;
        {
          py::gil_scoped_release release;
          pushed = f.advect_particles(zv, zn, P, dt, d, obstacles, threads, data.get());
        }
        return py::make_tuple(P, pushed);
      }, py::arg("z"), py::arg("z_next"), py::arg("points"), py::arg("dt"), py::arg("drift") = py::none(),
         py::arg("obstacles") = std::vector<Obstacle3D>(), py::arg("threads") = 0, py::arg("data") = py::none(),
         R"doc(One RK2 (midpoint) step of particles through the reduced field plus a drift.

The field is Psi z at the start and Psi (z + z_next) / 2 at the midpoint.
Parallel over particles (visited in cell order), GIL released.

Parameters
----------
z, z_next : (r,) arrays
    Reduced velocity at the start and the end of the step.
points : (P, 3) array
    Positions (m); not modified (the result is a new array).
dt : float
    Step (s).
drift : (3,) array, optional
    Constant drift (m/s), e.g. the leaves' small fall speed.
obstacles : list of Obstacle3D
    Particles that end inside one are pushed out along the surface normal.
threads : int
    Threads (<= 0 with data: the team chosen by measurement over the calls
    sharing data; <= 0 without: all cores).
data : ReducedFluidData, optional
    Buffers from create_data(), one per thread (None: fresh ones).

Returns
-------
points : (P, 3) array
    Moved, clamped to the domain, outside the obstacles.
pushed : int
    Pushes out of an obstacle in this step.)doc");

  py::class_<FluidParticles3D, Model, std::shared_ptr<FluidParticles3D>>(m, "FluidParticles3D", R"doc(
P particles in a 3D reduced fluid as a Model: state [p_1 .. p_P (3 each), z (r)],
control w (r,), B = [0; I], p_i' = Psi(p_i) z + drift, z' = A(z) z + nu D z + w.)doc")
      .def(py::init([](std::shared_ptr<ReducedFluid3D> fluid, Index particles, const OptArray& drift) {
        return std::make_shared<FluidParticles3D>(fluid, particles, opt_vec3(drift, "drift"));
      }), py::arg("fluid"), py::arg("particles"), py::arg("drift") = py::none())
      .def(py::init([](std::shared_ptr<ReducedScene3D> scene, Index particles, const Array& poses,
                       const Array& velocities, const OptArray& drift) {
        auto sp = std::make_shared<SceneAtPoses3D>(scene, poses6(poses, "poses"), poses6(velocities, "velocities"));
        return std::make_shared<FluidParticles3D>(sp, particles, opt_vec3(drift, "drift"));
      }), py::arg("scene"), py::arg("particles"), py::arg("poses"), py::arg("velocities"), py::arg("drift") = py::none(),
         R"doc(Particles in a ReducedScene3D whose K objects stay at poses (K, 6) moving with
velocities (K, 6): p_i' = u'(p_i) + drift (eq. 3.9, linear in z: the Jacobian
holds the boundary terms); step() advances z by the scene's step (Fig. 3.7)
and pushes particles out of the objects.)doc")
      .def_property_readonly("has_scene", [](const FluidParticles3D& p) { return p.scene() != nullptr; },
                             "Whether the particles move in a ReducedScene3D (u' with boundary terms).")
      .def_property_readonly("particles", &FluidParticles3D::particles, "Number of particles P.")
      .def_property_readonly("drift", [](const FluidParticles3D& p) { return Eigen::Vector3d(p.drift()); },
                             "(3,) constant drift of the particles (m/s).")
      .def_property_readonly("fluid", [](const FluidParticles3D& p) {
        return std::const_pointer_cast<ReducedFluid3D>(p.fluid_ptr());
      }, "The ReducedFluid3D.");
}



std::shared_ptr<ReducedFluid3D> reduced_arg(const py::object& reduced) {
  return object_arg<ReducedFluid3D>(reduced, "reduced", "3D ReducedFluid");
}

void bind_boundaries3d(py::module_& m) {
  py::class_<BoundaryBasis3D, std::shared_ptr<BoundaryBasis3D>>(m, "BoundaryBasis3D", R"doc(
Boundary basis of one 3D object (Treuille thesis sec. 3.5.1, 3.5.5, "3D
Boundaries"): p divergence-free fields on a local MAC grid in the object
frame whose surface speeds are the principal directions of the reduced
basis's surface speeds over the training poses, and 6 rigid fields (unit
translations along x, y, z and unit rotations about x, y, z). Build with
BoundaryBasis3D.build. Poses are rows (position (3) m, rotation vector (3)
rad): world = R local + position.)doc")
      .def_static("build", [](py::object reduced, std::shared_ptr<Shape3D> shape, const Array& poses, Index p,
                              std::optional<double> surface_spacing, const OptArray& local_size, bool rigid, int threads,
                              py::object progress, const std::string& samples) {
        auto rf = reduced_arg(reduced);
        const BoundarySamples where = boundary_samples_from(samples);
        auto P = rows_view(poses, "poses", -1, -1, false, "n", "6");
        const Eigen::VectorXd half = broadcast_vector(local_size, "local_size", 3);
        const Eigen::Vector3d lh = half.size() ? Eigen::Vector3d(half) : Eigen::Vector3d::Zero();
        Progress prog(progress);
        auto b = prog.run([&](const ProgressFn* fn) {
          return std::make_shared<BoundaryBasis3D>(rf->grid_ptr(), rf->basis(), shape, P, p,
                                                   surface_spacing.value_or(0.0), lh, rigid, threads, fn, where);
        });
        if (b->p() < b->requested_p())
          PyErr_WarnEx(PyExc_UserWarning,
                       ("p = " + std::to_string(b->requested_p()) + " exceeds the rank " + std::to_string(b->rank()) +
                        " of the collected surface speeds: reduced to p = " + std::to_string(b->p()))
                           .c_str(),
                       1);
        return b;
      }, py::arg("reduced"), py::arg("shape"), py::arg("poses"), py::arg("p"), py::arg("surface_spacing") = py::none(),
         py::arg("local_size") = py::none(), py::arg("rigid") = true, py::arg("threads") = 0,
         py::arg("progress") = py::none(), py::arg("samples") = "surface",
         R"doc(Builds the boundary basis of a shape from a 3D reduced fluid and training poses.

Parallel over poses, GIL released. p larger than the rank of the collected
surface speeds is reduced to it with a UserWarning naming p.

Parameters
----------
reduced : ReducedFluid3D
shape : Shape3D
poses : (n, 6) array
    Training poses: position (m), rotation vector (rad).
p : int
    Boundary fields wanted.
surface_spacing : float, optional
    Spacing of the surface samples (m); default h.
local_size : float or (3,) array, optional
    Half-size (m) of the local box along the object's axes; default the
    shape's extent plus 4 h. It must contain the shape.
rigid : bool
    Also build the 6 rigid fields (unit translations, unit rotations).
threads : int
    Threads (<= 0: all).
progress : None, bool or callable(done, total)
    Progress over the poses (True: a tqdm bar).
samples : {"surface", "faces", "faces+surface"}
    Where S reads normal speeds. "surface": samples of the shape's surface
    ``surface_spacing`` apart with its normals. "faces": the centres of the
    local grid's faces touching a cell whose centre lies inside the shape,
    each with its axis as normal (q grows with the volume): the faces the
    full solver closes, so u' meets its boundary condition there (interior
    faces included: inside the shape u' moves with the object). The
    collected speeds are made flux-free over those faces before the PCA.
    "faces+surface": the faces between two cells inside the shape (its
    inside moves rigidly) plus the surface samples ``surface_spacing``
    apart: little flow crosses the true surface, whose edges the closed
    faces miss by up to half a cell (the 3D Boundaries scene's default).

Returns
-------
BoundaryBasis3D)doc")
      .def_property_readonly("samples", [](const BoundaryBasis3D& b) {
        return std::string(boundary_samples_name(b.samples()));
      }, "\"surface\", \"faces\" or \"faces+surface\": where S reads normal speeds (see build).")
      .def_property_readonly("p", &BoundaryBasis3D::p, "Number of boundary fields.")
      .def_property_readonly("q", &BoundaryBasis3D::q, "Number of surface samples.")
      .def_property_readonly("rank", &BoundaryBasis3D::rank, "Rank of the collected surface speeds.")
      .def_property_readonly("half_size", [](const BoundaryBasis3D& b) { return Eigen::Vector3d(b.half_size()); },
                             "(3,) half-sizes (m): object point x is at x + half_size in local-grid coordinates.")
      .def_property_readonly("shape", [](const BoundaryBasis3D& b) { return std::const_pointer_cast<Shape3D>(b.shape_ptr()); },
                             "The Shape3D the basis was built for.")
      .def_property_readonly("local_grid", [](const BoundaryBasis3D& b) {
        return std::const_pointer_cast<MACGrid3D>(b.local_grid_ptr());
      }, "The object's local MACGrid3D (spacing h, object frame shifted by half_size).")
      .def_property_readonly("surface_points", [](py::object self) {
        return view(self.cast<const BoundaryBasis3D&>().surface_points(), self);
      }, "(q, 3), object frame (m).")
      .def_property_readonly("surface_normals", [](py::object self) {
        return view(self.cast<const BoundaryBasis3D&>().surface_normals(), self);
      }, "(q, 3), object frame, outward.")
      .def_property_readonly("fields", [](const BoundaryBasis3D& b) { return b.fields(); }, "(N_local, p).")
      .def_property_readonly("rigid_fields", [](const BoundaryBasis3D& b) { return b.rigid_fields(); }, "(N_local, 6).")
      .def_property_readonly("surface_speeds", [](const BoundaryBasis3D& b) { return b.surface_speeds(); },
                             "(q, p) = S Btilde, orthonormal columns (eq. 3.10).")
      .def_property_readonly("energy", [](const BoundaryBasis3D& b) { return b.energy(); },
                             "(p,) fraction of the collected surface speeds' energy per mode.")
      .def_property_readonly("constraint_error", &BoundaryBasis3D::constraint_error,
                             "Largest residual of the field constraints (divergence, surface speeds).");

  py::class_<Coupling3D, std::shared_ptr<Coupling3D>>(m, "Coupling3D", R"doc(
Feedforward F = -(S Btilde)' S R^-1 B (p, r) and feedback G = B' R [Btilde,
rigid] (r, p+6) of one 3D object (eq. 3.11-3.12), on the fly or tabulated:
over a pose grid (xs, ys, zs[, rxs, rys, rzs]) interpolated multilinearly,
or along a path of poses (n, 6) interpolated linearly at the path point
closest to the object's position.

Parameters
----------
reduced : ReducedFluid3D
boundary_basis : BoundaryBasis3D
pose_table : tuple of arrays, optional
    (xs, ys, zs) or (xs, ys, zs, rxs, rys, rzs): uniformly spaced nodes (m,
    rad) of a pose grid.
precompute : str
    "none" (both on the fly), "feedback" or "both" tabulated.
compress : int, optional
    Store the tables as k PCA modes over the nodes (None: plain tables).
path : (n, 6) array, optional
    Tables at these poses only (a precomputed path).
threads : int
    Threads of the tabulation (<= 0: all).
progress : None, bool or callable(done, total)
    Progress over the nodes (True: a tqdm bar).)doc")
      .def(py::init([](py::object reduced, std::shared_ptr<BoundaryBasis3D> basis, std::optional<py::tuple> pose_table,
                       const std::string& precompute, std::optional<Index> compress, const OptArray& path, int threads,
                       py::object progress) {
        auto rf = reduced_arg(reduced);
        Precompute pc;
        if (precompute == "none")
          pc = Precompute::None;
        else if (precompute == "feedback")
          pc = Precompute::Feedback;
        else if (precompute == "both")
          pc = Precompute::Both;
        else
          throw std::invalid_argument("precompute must be \"none\", \"feedback\" or \"both\", got \"" + precompute + "\"");
        PoseTable3D table;
        if (pose_table)
          for (std::size_t a = 0; a < pose_table->size(); ++a)
            table.axes.push_back(vector(array_item((*pose_table)[a], "pose_table axis " + std::to_string(a)),
                                           "pose_table axis " + std::to_string(a)));
        if (path) table.path = rows_view(*path, "path", -1, -1, false, "n", "6");
        if (compress && *compress < 1) throw std::invalid_argument("compress must be >= 1 or None, got " + std::to_string(*compress));
        Progress prog(progress);
        return prog.run([&](const ProgressFn* fn) {
          return std::make_shared<Coupling3D>(rf, basis, (pose_table || path) ? &table : nullptr, pc,
                                              compress.value_or(0), threads, fn);
        });
      }), py::arg("reduced"), py::arg("boundary_basis"), py::arg("pose_table") = py::none(),
         py::arg("precompute") = "none", py::arg("compress") = py::none(), py::arg("path") = py::none(),
         py::arg("threads") = 0, py::arg("progress") = py::none(),
         "The coupling operators of one object (parameters: see the class).")
      .def_property_readonly("p", &Coupling3D::p, "Boundary fields of the object.")
      .def_property_readonly("m", &Coupling3D::m, "p + rigid fields.")
      .def_property_readonly("table_bytes", &Coupling3D::table_bytes, "Bytes held by the tables (0 on the fly).")
      .def_property_readonly("table_nodes", &Coupling3D::table_nodes, "Pose nodes of the tables (0 on the fly).")
      .def("node_pose", [](const Coupling3D& c, Index n) { return Eigen::VectorXd(c.node_pose(n).transpose()); },
           py::arg("n"), R"doc(The pose of a table node.

Parameters
----------
n : int
    Node index in [0, table_nodes).

Returns
-------
(6,) array
    Position (m) and rotation vector (rad).)doc")
      .def_property_readonly("boundary_basis", [](const Coupling3D& c) {
        return std::const_pointer_cast<BoundaryBasis3D>(c.boundary_ptr());
      }, "The BoundaryBasis3D.")
      .def("feedforward", [](const Coupling3D& c, const Array& pose, bool exact) {
        auto P = vector(pose, "pose", 6, true);
        Eigen::MatrixXd F(c.p(), c.r());
        auto d = c.create_data();
        if (exact) c.feedforward_exact(Pose3D(P.data()), F, *d); else c.feedforward(P.data(), F, *d);
        return F;
      }, py::arg("pose"), py::arg("exact") = false, R"doc(The feedforward F = -(S Btilde)' S R^-1 B at a pose (eq. 3.11).

Parameters
----------
pose : (6,) array
    Position (m), rotation vector (rad).
exact : bool
    Compute it on the fly even when tabulated.

Returns
-------
(p, r) array
    Boundary coefficients per unit reduced velocity.)doc")
      .def("feedback", [](const Coupling3D& c, const Array& pose, bool exact) {
        auto P = vector(pose, "pose", 6, true);
        Eigen::MatrixXd G(c.r(), c.m());
        auto d = c.create_data();
        if (exact) c.feedback_exact(Pose3D(P.data()), G, *d); else c.feedback(P.data(), G, *d);
        return G;
      }, py::arg("pose"), py::arg("exact") = false, R"doc(The feedback G = B' R [Btilde, rigid] at a pose (eq. 3.12).

Parameters
----------
pose : (6,) array
    Position (m), rotation vector (rad).
exact : bool
    Compute it on the fly even when tabulated.

Returns
-------
(r, m) array
    Reduced velocity per unit boundary coefficient (m = p + 6).)doc");

  py::class_<ReducedScene3DData, std::shared_ptr<ReducedScene3DData>>(m, "ReducedScene3DData",
                                                                     "Buffers of a ReducedScene3D (one per thread).");
  py::class_<ReducedScene3D, std::shared_ptr<ReducedScene3D>>(m, "ReducedScene3D", R"doc(
A 3D reduced fluid with moving objects (Fig. 3.7): advect, diffuse, add
forces, then per object r~ = F z and the rigid coefficients (the object's
velocity and angular velocity in its own frame), and z += sum G [r~; v; w].
Poses and velocities are (K, 6): (position m, rotation vector rad) and
(velocity m/s, angular velocity rad/s), world frame.)doc")
      .def(py::init([](py::object reduced, const std::vector<std::shared_ptr<Coupling3D>>& couplings) {
        std::vector<std::shared_ptr<const Coupling3D>> c(couplings.begin(), couplings.end());
        return std::make_shared<ReducedScene3D>(reduced_arg(reduced), c);
      }), py::arg("reduced"), py::arg("couplings"), R"doc(A scene of K objects.

Parameters
----------
reduced : ReducedFluid3D
couplings : list of Coupling3D
    One per object, each built for reduced.)doc")
      .def_property_readonly("objects", &ReducedScene3D::objects, "Number of objects K.")
      .def_property_readonly("max_m", &ReducedScene3D::max_m, "Columns of boundary_coeffs.")
      .def("create_data", [](const ReducedScene3D& s) { return std::shared_ptr<ReducedScene3DData>(s.create_data()); },
           R"doc(Buffers for step() and advect_particles(), owned by one thread at a time.

Returns
-------
ReducedScene3DData)doc")
      .def("step", [](const ReducedScene3D& s, const Array& z, const Array& w, double dt, const Array& poses,
                      const Array& velocities, std::shared_ptr<ReducedScene3DData> data, bool return_flow) -> py::tuple {
        auto zv = vector(z, "z");
        auto wv = vector(w, "w");
        auto P = poses6(poses, "poses");
        auto V = poses6(velocities, "velocities");
        Eigen::VectorXd zn(s.reduced().r()), flow;
        RowMatrix c(s.objects(), s.max_m());
        {
          py::gil_scoped_release release;
          if (!data) data = s.create_data();
          s.step(zv, wv, dt, P, V, zn, c, *data);
          flow = data->z_flow;
        }
        if (return_flow) return py::make_tuple(zn, c, flow);
        return py::make_tuple(zn, c);
      }, py::arg("z"), py::arg("w"), py::arg("dt"), py::arg("poses"), py::arg("velocities"),
         py::arg("data") = py::none(), py::arg("return_flow") = false,
         "(z_next (r,), boundary_coeffs (K, max_m)) [, z_flow (r,): the state the coefficients cancel, when return_flow].")
      .def("velocity_at", [](const ReducedScene3D& s, const Array& points, const Array& z, const Array& coeffs,
                             const Array& poses) {
        auto X = rows_view(points, "points", -1);
        RowMatrix out(X.rows(), 3);
        auto d = s.create_data();
        s.velocity_at(X, vector(z, "z"), coeffs3(coeffs), poses6(poses, "poses"), out, *d);
        return out;
      }, py::arg("points"), py::arg("z"), py::arg("boundary_coeffs"), py::arg("poses"),
         R"doc(The velocity u' of eq. 3.9 (B z plus the objects' boundary fields) at points.

Parameters
----------
points : (P, 3) array
    World points (m), clamped to the domain.
z : (r,) array
    The flow state the coefficients cancel (step(..., return_flow=True)).
boundary_coeffs : (K, max_m) array
    From step().
poses : (K, 6) array
    The objects' poses of that step.

Returns
-------
(P, 3) array
    u' (m/s).)doc")
      .def("velocity_field", [](const ReducedScene3D& s, const Array& z, const Array& coeffs, const Array& poses) {
        Eigen::VectorXd u(s.reduced().grid().n_faces());
        auto d = s.create_data();
        s.velocity_field(vector(z, "z"), coeffs3(coeffs), poses6(poses, "poses"), u, *d);
        return u;
      }, py::arg("z"), py::arg("boundary_coeffs"), py::arg("poses"), R"doc(u' (eq. 3.9) on the world grid's faces.

Parameters
----------
z : (r,) array
    The flow state the coefficients cancel.
boundary_coeffs : (K, max_m) array
    From step().
poses : (K, 6) array
    The objects' poses.

Returns
-------
(N,) array
    B z plus each object's boundary field resampled onto the faces (m/s).)doc")
      .def("surface_speed", [](const ReducedScene3D& s, Index object, const Array& z, const Array& coeffs,
                               const Array& poses, bool boundary) {
        if (object < 0 || object >= s.objects())
          throw std::invalid_argument("object must be in [0, " + std::to_string(s.objects()) + "), got " + std::to_string(object));
        Eigen::VectorXd out(s.coupling(object).boundary().q());
        auto d = s.create_data();
        s.surface_speed(object, vector(z, "z"), coeffs3(coeffs), poses6(poses, "poses"), boundary, out, *d);
        return out;
      }, py::arg("object"), py::arg("z"), py::arg("boundary_coeffs"), py::arg("poses"), py::arg("boundary") = true,
         R"doc(Normal speeds of u' (or of B z alone) at an object's surface samples.

Parameters
----------
object : int
    Which object, in [0, K).
z : (r,) array
    The flow state the coefficients cancel.
boundary_coeffs : (K, max_m) array
    From step().
poses : (K, 6) array
    The objects' poses.
boundary : bool
    With the boundary fields (u') or without (B z).

Returns
-------
(q,) array
    n . u at the object's surface points (m/s), world frame.)doc")
      .def("surface_energy_removed", [](const ReducedScene3D& s, const Array& z, const Array& coeffs, const Array& poses,
                                        const Array& velocities) {
        Eigen::VectorXd out(s.objects());
        auto d = s.create_data();
        s.surface_energy_removed(vector(z, "z"), coeffs3(coeffs), poses6(poses, "poses"),
                                 poses6(velocities, "velocities"), out, *d);
        return out;
      }, py::arg("z"), py::arg("boundary_coeffs"), py::arg("poses"), py::arg("velocities"),
         R"doc(The thesis's metric: the share of the relative surface flow the boundary fields remove.

Parameters
----------
z : (r,) array
    The flow state the coefficients cancel.
boundary_coeffs : (K, max_m) array
    From step().
poses, velocities : (K, 6) arrays
    The objects' poses and velocities (m/s, rad/s) of that step.

Returns
-------
(K,) array
    1 - |S(u' - rigid)|^2 / |S(B z - rigid)|^2 per object.)doc")
      .def("advect_particles", [](const ReducedScene3D& s, const Array& points, const Array& z, const Array& coeffs,
                                  const Array& poses, double dt, const OptArray& drift, int threads,
                                  std::shared_ptr<ReducedScene3DData> data) {
        RowMatrix X = rows_view(points, "points", -1);
        auto zv = vector(z, "z");
        RowMatrix C = coeffs3(coeffs);
        auto P = poses6(poses, "poses");
        const Eigen::Vector3d dr = opt_vec3(drift, "drift");
        Index pushed;
        {
          py::gil_scoped_release release;
          if (!data) data = s.create_data();
          pushed = s.advect_particles(X, zv, C, P, dt, dr, threads, *data);
        }
        return py::make_tuple(X, pushed);
      }, py::arg("points"), py::arg("z"), py::arg("boundary_coeffs"), py::arg("poses"), py::arg("dt"),
         py::arg("drift") = py::none(), py::arg("threads") = 0, py::arg("data") = py::none(),
         "(points (P, 3) after one RK2 step through u' + drift (3,) m/s, pushed out of the objects; number pushed). "
         "Parallel over particles, GIL released; threads <= 0 with data: the team chosen by measurement.");
}

}  // namespace

void bind_fluid3d(py::module_& m) {
  bind_grid3d(m);
  bind_shapes3d(m);
  bind_sim3d(m);
  bind_reduced3d(m);
  bind_boundaries3d(m);
}

}  // namespace directable::py_bind
