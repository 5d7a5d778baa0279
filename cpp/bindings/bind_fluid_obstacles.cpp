#include "common.hpp"
#include "directable/models/fluid/boundary_basis.hpp"
#include "directable/models/fluid/coupling.hpp"
#include "directable/models/fluid/reduced_scene.hpp"
#include "directable/models/fluid/shape2d.hpp"

namespace directable::py_bind {

namespace {

//! A (3,) pose or velocity argument.
Eigen::Vector3d triple(const Array& a, const std::string& name) { return vector(a, name, 3, true); }

Pose2D pose_arg(const Array& a) { return make_pose("pose", vector(a, "pose")); }

//! A pose given as a tuple of three Python numbers (read directly, no NumPy
//! array made) or as anything Array takes.
Pose2D pose_object(py::handle pose) {
  PyObject* t = pose.ptr();
  if (pose.is_none()) throw py::type_error("pose must be a real numeric array or a tuple of 3 floats, got None");
  if (PyTuple_Check(t) && PyTuple_GET_SIZE(t) == 3) {
    Eigen::Vector3d v;
    bool numbers = true;
    for (int i = 0; i < 3 && numbers; ++i) {
      PyObject* o = PyTuple_GET_ITEM(t, i);
      numbers = PyFloat_CheckExact(o) || PyLong_CheckExact(o);
      if (numbers) v[i] = PyFloat_AsDouble(o);
    }
    if (numbers && !PyErr_Occurred()) return make_pose("pose", v);
    PyErr_Clear();
  }
  return pose_arg(array_item(pose, "pose"));
}

RowMatrix coeff_view(const Array& a) { return rows_view(a, "boundary_coeffs", -1, -1, false, "K", "m"); }

}  // namespace

void bind_fluid_shapes(py::module_& m) {
  py::class_<Shape2D, std::shared_ptr<Shape2D>>(m, "Shape2D", R"doc(
A rigid 2D shape: a closed simple polygon in its object frame.

The object frame's origin is the obstacle's position; world = Rot(theta)
local + (x, y). A clockwise polygon is reversed with a UserWarning; a
self-intersecting one raises ValueError.

Parameters
----------
polygon : (V, 2) array
    Vertices (m), counter-clockwise, V >= 3, finite.)doc")
      .def(py::init([](const Array& polygon) {
        auto s = std::make_shared<Shape2D>(rows_view(polygon, "polygon", -1, -1, false, "V", "2"));
        if (s->reversed())
          PyErr_WarnEx(PyExc_UserWarning, "polygon is clockwise: reversed to counter-clockwise", 1);
        return s;
      }), py::arg("polygon"))
      .def_property_readonly("vertices", [](const Shape2D& s) { return s.vertices(); }, "(V, 2), counter-clockwise.")
      .def_property_readonly("radius", &Shape2D::radius, "Largest vertex distance from the origin (m).")
      .def_property_readonly("area", &Shape2D::area, "Enclosed area (m^2).")
      .def_property_readonly("thickness", &Shape2D::thickness,
                             "Thinnest part (m): inward from each edge midpoint to the opposite side.")
      .def("inside", [](const Shape2D& s, const Array& points) {
        auto P = rows_view(points, "points", 2, -1, true);
        Mask out(P.rows());
        for (Index k = 0; k < P.rows(); ++k) out[k] = s.inside(P(k, 0), P(k, 1));
        return out;
      }, py::arg("points"), R"doc(Whether object-frame points lie inside the polygon.

Parameters
----------
points : (P, 2) array
    Points in the object frame (m).

Returns
-------
(P,) bool array
    True where the point is inside.)doc")
      .def("surface", [](const Shape2D& s, double spacing) {
        RowMatrix pts, nrm;
        s.surface(spacing, pts, nrm);
        return py::make_tuple(pts, nrm);
      }, py::arg("spacing"), R"doc(Surface samples: the midpoints of edge pieces of length <= spacing.

Parameters
----------
spacing : float
    Largest distance between samples along an edge (m), > 0.

Returns
-------
points : (q, 2) array
    Sample positions in the object frame (m).
normals : (q, 2) array
    Outward unit normals there.)doc");

  py::class_<Obstacle2D>(m, "Obstacle", R"doc(
A Shape2D at a pose, moving rigidly (one step's obstacle of FluidSim2D.step).

world = Rot(theta) local + (x, y); its rigid velocity field is
v(x) = (vx, vy) + omega z x (x - (x, y)).

Parameters
----------
shape : Shape2D
    The shape, in its object frame.
pose : (3,) array
    (x, y, theta) in (m, m, rad).
velocity : (3,) array
    (vx, vy, omega) in (m/s, m/s, rad/s).)doc")
      .def(py::init([](std::shared_ptr<Shape2D> shape, const Array& pose, const Array& velocity) {
        return Obstacle2D(shape, vector(pose, "pose"), vector(velocity, "velocity"));
      }), py::arg("shape"), py::arg("pose") = Eigen::Vector3d::Zero(), py::arg("velocity") = Eigen::Vector3d::Zero())
      .def_property_readonly("shape", [](const Obstacle2D& o) { return std::const_pointer_cast<Shape2D>(o.shape); },
                             "The Shape2D (object frame).")
      .def_property_readonly("pose", [](const Obstacle2D& o) { return Eigen::Vector3d(o.pose.x, o.pose.y, o.pose.theta); },
                             "(3,) array: (x, y, theta) in (m, m, rad).")
      .def_property_readonly("velocity", [](const Obstacle2D& o) { return o.velocity; },
                             "(3,) array: (vx, vy, omega) in (m/s, m/s, rad/s).");
}

void bind_fluid_boundaries(py::module_& m) {
  py::class_<BoundaryBasis, std::shared_ptr<BoundaryBasis>>(m, "BoundaryBasis", R"doc(
Boundary basis of one object (Treuille thesis sec. 3.5.1, 3.5.5).

p divergence-free fields on a local MAC grid in the object frame whose
surface speeds S Btilde are the principal directions of the reduced
basis's surface speeds S R^-1 B over training poses (orthonormal, eq.
3.10), and 3 rigid fields whose surface speeds are those of unit x and y
translation and unit rotation. Each field is the minimum-norm local field
with zero divergence on the local cells outside the shape and zero flux
through the local grid's outer faces. Build with BoundaryBasis.build.)doc")
      .def_static("build", [](py::object reduced, std::shared_ptr<Shape2D> shape, const Array& poses, Index p,
                              std::optional<double> surface_spacing, std::optional<double> local_size, bool rigid,
                              int threads, py::object progress) {
        auto rf = object_arg<ReducedFluid>(reduced, "reduced", "ReducedFluid");
        auto P = rows_view(poses, "poses", -1, -1, false, "n", "3");
        Progress prog(progress);
        auto b = prog.run([&](const ProgressFn* fn) {
          return std::make_shared<BoundaryBasis>(rf->grid_ptr(), rf->basis(), shape, P, p, surface_spacing.value_or(0.0),
                                                 local_size.value_or(0.0), rigid, threads, fn);
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
         py::arg("progress") = py::none(),
         R"doc(Builds an object's boundary basis from a reduced fluid and training poses.

Parallel over the poses, GIL released.

Parameters
----------
reduced : ReducedFluid
    The 2D reduced fluid whose basis B (N, r) the fields complement.
shape : Shape2D
    The object's shape.
poses : (n, 3) array
    Training poses (x, y, theta) in (m, m, rad), finite.
p : int
    Boundary fields wanted, >= 1; cut (with a UserWarning naming p) to the
    rank of the collected surface speeds.
surface_spacing : float, optional
    Spacing of the surface samples (m); default h/2.
local_size : float, optional
    Half-size of the local grid (m); default the shape's radius + 4h. It
    must contain the shape with a cell to spare.
rigid : bool
    Also build the 3 rigid fields (sec. 3.5.5).
threads : int
    Worker threads (0: all).
progress : None, bool or callable(done, total)
    Progress report.

Returns
-------
BoundaryBasis
    The basis; ``p`` may be smaller than asked.)doc")
      .def_property_readonly("p", &BoundaryBasis::p, "Number of boundary fields (without the rigid ones).")
      .def_property_readonly("q", &BoundaryBasis::q, "Number of surface samples.")
      .def_property_readonly("rank", &BoundaryBasis::rank, "Rank of the collected surface speeds.")
      .def_property_readonly("half_size", &BoundaryBasis::half_size,
                             "Half-size of the local grid: object point x is at x + half_size in local-grid coordinates.")
      .def_property_readonly("shape", [](const BoundaryBasis& b) { return std::const_pointer_cast<Shape2D>(b.shape_ptr()); },
                             "The object's Shape2D.")
      .def_property_readonly("local_grid", [](const BoundaryBasis& b) { return std::const_pointer_cast<MACGrid2D>(b.local_grid_ptr()); },
                             "MACGrid2D of the fields, in the object frame shifted by half_size (spacing h).")
      .def_property_readonly("surface_points", [](py::object self) {
        return readonly(py::array_t<double>({self.cast<const BoundaryBasis&>().q(), Index(2)},
                                            self.cast<const BoundaryBasis&>().surface_points().data(), self));
      }, "(q, 2), object frame.")
      .def_property_readonly("surface_normals", [](py::object self) {
        return readonly(py::array_t<double>({self.cast<const BoundaryBasis&>().q(), Index(2)},
                                            self.cast<const BoundaryBasis&>().surface_normals().data(), self));
      }, "(q, 2), object frame, outward.")
      .def_property_readonly("fields", [](const BoundaryBasis& b) { return b.fields(); },
                             "(N_local, p) array: the boundary fields Btilde on the local grid.")
      .def_property_readonly("rigid_fields", [](const BoundaryBasis& b) { return b.rigid_fields(); },
                             "(N_local, 3) array: fields of unit x, y translation and unit rotation (rad/s).")
      .def_property_readonly("surface_speeds", [](const BoundaryBasis& b) { return b.surface_speeds(); },
                             "(q, p) = S Btilde, orthonormal columns (eq. 3.10).")
      .def_property_readonly("energy", [](const BoundaryBasis& b) { return b.energy(); },
                             "(p,) fraction of the collected surface speeds' energy per mode.")
      .def_property_readonly("energy_weights", [](const BoundaryBasis& b) { return b.energy_weights(); },
                             "(p, q) W = (A'A)^-1 (M_ss S Btilde)': the least-energy field coefficients for given surface "
                             "speeds (W S Btilde = I); the feedforward's projection with projection=\"energy\".")
      .def_property_readonly("constraint_error", &BoundaryBasis::constraint_error,
                             "Largest residual of the fields' constraints (surface speeds, divergence times h).");

  py::class_<Coupling, std::shared_ptr<Coupling>>(m, "Coupling", R"doc(
Coupling of a reduced fluid and one object's boundary basis (eq. 3.11-3.12).

Feedforward F = -(S Btilde)' S R^-1 B (p, r) and feedback
G = B' R [Btilde, rigid] (r, p+3), computed on the fly or tabulated on a
pose grid and interpolated multilinearly (thesis sec. 3.5.6).

Parameters
----------
reduced : ReducedFluid
    The 2D reduced fluid (basis B, N x r).
boundary_basis : BoundaryBasis
    The object's boundary basis, built on the same grid spacing.
pose_table : tuple of three 1D arrays, optional
    (xs, ys, thetas): uniformly spaced, increasing table nodes (m, m, rad);
    every combination is tabulated. Required unless precompute is "none".
precompute : {"none", "feedback", "both"}
    What is tabulated: nothing, G, or F and G.
compress : int, optional
    Keep k PCA modes of the tables over the poses (None: plain tables).
threads : int
    Worker threads of the tabulation (0: all).
progress : None, bool or callable(done, total)
    Progress report of the tabulation.
table_dtype : {"float64", "float32"}
    Storage of plain tables: float32 halves the memory and the bytes a
    scene step reads (entries rounded to ~6e-8 relative); not with compress.
projection : {"surface", "energy"}
    The feedforward's projection of the flow's surface speeds: "surface" is
    eq. 3.11 as printed, (S Btilde)'; "energy" uses the basis'
    energy_weights, the least-energy field combination. Both cancel speeds
    in the span of S Btilde exactly. "energy" was the tested hypothesis for
    the growth of I + G F at still poses (spectral radius up to 1.18 with
    eq. 3.11) and measured worse (1.28, and half the surface energy
    removed): kept to reproduce that measurement (DESIGN.md), not for use.)doc")
      .def(py::init([](py::object reduced, std::shared_ptr<BoundaryBasis> basis, std::optional<py::tuple> pose_table,
                       const std::string& precompute, std::optional<Index> compress, int threads, py::object progress,
                       const std::string& table_dtype, const std::string& projection) {
        auto rf = object_arg<ReducedFluid>(reduced, "reduced", "ReducedFluid");
        Precompute pc;
        if (precompute == "none")
          pc = Precompute::None;
        else if (precompute == "feedback")
          pc = Precompute::Feedback;
        else if (precompute == "both")
          pc = Precompute::Both;
        else
          throw std::invalid_argument("precompute must be \"none\", \"feedback\" or \"both\", got \"" + precompute + "\"");
        PoseAxes axes;
        if (pose_table) {
          if (pose_table->size() != 3)
            throw std::invalid_argument("pose_table must be (xs, ys, thetas), got " + std::to_string(pose_table->size()) + " items");
          axes.x = vector(array_item((*pose_table)[0], "pose_table xs"), "pose_table xs");
          axes.y = vector(array_item((*pose_table)[1], "pose_table ys"), "pose_table ys");
          axes.theta = vector(array_item((*pose_table)[2], "pose_table thetas"), "pose_table thetas");
        }
        if (compress && *compress < 1) throw std::invalid_argument("compress must be >= 1 or None, got " + std::to_string(*compress));
        if (projection != "surface" && projection != "energy")
          throw std::invalid_argument("projection must be \"surface\" or \"energy\", got \"" + projection + "\"");
        if (table_dtype != "float64" && table_dtype != "float32")
          throw std::invalid_argument("table_dtype must be \"float64\" or \"float32\", got \"" + table_dtype + "\"");
        Progress prog(progress);
        return prog.run([&](const ProgressFn* fn) {
          return std::make_shared<Coupling>(rf, basis, pose_table ? &axes : nullptr, pc, compress.value_or(0), threads, fn,
                                            table_dtype == "float32",
                                            projection == "energy" ? FeedforwardProjection::Energy
                                                                   : FeedforwardProjection::Surface);
        });
      }), py::arg("reduced"), py::arg("boundary_basis"), py::arg("pose_table") = py::none(), py::arg("precompute") = "none",
         py::arg("compress") = py::none(), py::arg("threads") = 0, py::arg("progress") = py::none(),
         py::arg("table_dtype") = "float64", py::arg("projection") = "surface")
      .def_property_readonly("p", &Coupling::p, "Number of boundary fields (coefficients r~ = F z).")
      .def_property_readonly("m", &Coupling::m, "p + rigid fields: the object's coefficient count.")
      .def_property_readonly("table_bytes", &Coupling::table_bytes, "Bytes of the stored tables (0 without tables).")
      .def_property_readonly("table_nodes", &Coupling::table_nodes, "Poses in the table (0 without tables).")
      .def_property_readonly("projection", [](const Coupling& c) {
        return std::string(c.projection() == FeedforwardProjection::Energy ? "energy" : "surface");
      }, "The feedforward's projection, \"surface\" (eq. 3.11) or \"energy\".")
      .def_property_readonly("table_dtype", [](const Coupling& c) { return std::string(c.single() ? "float32" : "float64"); },
                             "Storage of the tables, \"float64\" or \"float32\".")
      .def_property_readonly("boundary_basis", [](const Coupling& c) { return std::const_pointer_cast<BoundaryBasis>(c.boundary_ptr()); },
                             "The object's BoundaryBasis.")
      .def("feedforward", [](const Coupling& c, const Array& pose, bool exact) {
        Eigen::MatrixXd F(c.p(), c.r());
        auto d = c.create_data();
        if (exact) c.feedforward_exact(pose_arg(pose), F, *d); else c.feedforward(pose_arg(pose), F, *d);
        return F;
      }, py::arg("pose"), py::arg("exact") = false, R"doc(The feedforward F (eq. 3.11) at a pose.

Parameters
----------
pose : (3,) array
    (x, y, theta) in (m, m, rad).
exact : bool
    Compute it from the surface samples even when F is tabulated.

Returns
-------
(p, r) array
    F: the boundary coefficients r~ = F z of a flow state z.)doc")
      .def("feedforward_single", [](const Coupling& c, py::handle pose, py::handle out) -> py::object {
        const Pose2D P = pose_object(pose);
        auto d = c.create_data();
        if (out.is_none()) {
          RowMatrixF F(c.p(), c.r());
          c.feedforward_exact(P, F, *d);
          return py::cast(std::move(F));
        }
        auto A = out_array<float>(out, "out", "float32", {c.p(), c.r()});
        Eigen::Map<RowMatrixF> F(A.mutable_data(), c.p(), c.r());
        c.feedforward_exact(P, F, *d);
        return py::reinterpret_borrow<py::object>(out);
      }, py::arg("pose"), py::arg("out") = py::none(), R"doc(The on-the-fly feedforward F (eq. 3.11) in single precision.

Each row of S R^-1 B is summed in double and rounded to float; the
(p x q) (q x r) product then runs in float, twice the lanes per vector
instruction of the double computation (``feedforward(pose, exact=True)``),
with F to about 1e-6 relative. For a per-step call, pass the pose as a
tuple of three floats (read without making an array) and a preallocated
``out``: nothing is allocated for the result and nothing is copied.

Parameters
----------
pose : (3,) array or tuple of 3 floats
    (x, y, theta) in (m, m, rad).
out : (p, r) float32 array, optional
    C-contiguous, writeable: F is written into it in place and it is
    returned (the same object).

Returns
-------
(p, r) float32 array
    F: the boundary coefficients r~ = F z of a flow state z (``out`` when
    given).)doc")
      .def("feedback", [](const Coupling& c, const Array& pose, bool exact) {
        Eigen::MatrixXd G(c.r(), c.m());
        auto d = c.create_data();
        if (exact) c.feedback_exact(pose_arg(pose), G, *d); else c.feedback(pose_arg(pose), G, *d);
        return G;
      }, py::arg("pose"), py::arg("exact") = false, R"doc(The feedback G (eq. 3.12) at a pose.

Parameters
----------
pose : (3,) array
    (x, y, theta) in (m, m, rad).
exact : bool
    Resample the boundary fields even when G is tabulated.

Returns
-------
(r, m) array
    G = B' R [Btilde, rigid]: z gains G c for coefficients c (m,).)doc");

  py::class_<ReducedSceneData, std::shared_ptr<ReducedSceneData>>(m, "ReducedSceneData",
                                                                   "Buffers of a ReducedScene (one per thread).");
  py::class_<ReducedScene, std::shared_ptr<ReducedScene>>(m, "ReducedScene", R"doc(
A reduced fluid with moving objects (Treuille thesis Fig. 3.7).

Each step advects, diffuses and adds forces, then per object computes the
boundary coefficients r~ = F z and the rigid ones (the object's velocity in
its own frame), and adds z += sum_i G_i [r~_i; v_i]. The full field is
u' = B z + sum_i R_i [Btilde_i, rigid_i] c_i (eq. 3.9). The scene is
immutable and may be shared by threads, each with its own data.

Parameters
----------
reduced : ReducedFluid
    The 2D reduced fluid.
couplings : list of Coupling
    One per object, each built for ``reduced``.)doc")
      .def(py::init([](py::object reduced, const std::vector<std::shared_ptr<Coupling>>& couplings) {
        auto rf = object_arg<ReducedFluid>(reduced, "reduced", "ReducedFluid");
        std::vector<std::shared_ptr<const Coupling>> c(couplings.begin(), couplings.end());
        return std::make_shared<ReducedScene>(rf, c);
      }), py::arg("reduced"), py::arg("couplings"))
      .def_property_readonly("objects", &ReducedScene::objects, "Number of objects K.")
      .def_property_readonly("reduced", [](const ReducedScene& s) { return std::const_pointer_cast<ReducedFluid>(s.reduced_ptr()); },
                             "The ReducedFluid.")
      .def_property_readonly("couplings", [](const ReducedScene& s) {
        std::vector<std::shared_ptr<Coupling>> out;
        for (Index i = 0; i < s.objects(); ++i) out.push_back(std::const_pointer_cast<Coupling>(s.coupling_ptr(i)));
        return out;
      }, "The objects' Couplings (list of K).")
      .def_property_readonly("max_m", &ReducedScene::max_m, "Columns of boundary_coeffs (the largest m).")
      .def("create_data", [](const ReducedScene& s) { return std::shared_ptr<ReducedSceneData>(s.create_data()); },
           R"doc(Buffers for one thread's steps.

Returns
-------
ReducedSceneData
    Pass it to ``step``; one per thread.)doc")
      .def("step", [](const ReducedScene& s, const Array& z, const Array& w, double dt, const Array& poses,
                      const Array& velocities, std::shared_ptr<ReducedSceneData> data, bool return_flow) -> py::tuple {
        auto zv = vector(z, "z");
        auto wv = vector(w, "w");
        auto P = rows_view(poses, "poses", -1, -1, false, "K", "3");
        auto V = rows_view(velocities, "velocities", -1, -1, false, "K", "3");
        Eigen::VectorXd zn(s.reduced().r());
        RowMatrix c(s.objects(), s.max_m());
        Eigen::VectorXd flow;
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
      .def("velocity_at", [](const ReducedScene& s, const Array& points, const Array& z, const Array& coeffs,
                             const Array& poses) {
        auto X = rows_view(points, "points", -1);
        RowMatrix out(X.rows(), 2);
        auto d = s.create_data();
        s.velocity_at(X, vector(z, "z"), coeff_view(coeffs), rows_view(poses, "poses", -1), out, *d);
        return out;
      }, py::arg("points"), py::arg("z"), py::arg("boundary_coeffs"), py::arg("poses"),
         R"doc(The velocity u' of eq. 3.9 at points.

Parameters
----------
points : (P, 2) array
    World points (m), clamped to the domain.
z : (r,) array
    Reduced flow state (the one the coefficients were computed from).
boundary_coeffs : (K, max_m) array
    The objects' coefficients, as ``step`` returns them.
poses : (K, 3) array
    The objects' (x, y, theta) (m, m, rad).

Returns
-------
(P, 2) array
    B z plus each object's resampled local field (m/s).)doc")
      .def("velocity_field", [](const ReducedScene& s, const Array& z, const Array& coeffs, const Array& poses) {
        Eigen::VectorXd u(s.reduced().grid().n_faces());
        auto d = s.create_data();
        s.velocity_field(vector(z, "z"), coeff_view(coeffs), rows_view(poses, "poses", -1), u, *d);
        return u;
      }, py::arg("z"), py::arg("boundary_coeffs"), py::arg("poses"), R"doc(The velocity u' of eq. 3.9 on the world grid's faces.

Parameters
----------
z : (r,) array
    Reduced flow state.
boundary_coeffs : (K, max_m) array
    The objects' coefficients.
poses : (K, 3) array
    The objects' (x, y, theta) (m, m, rad).

Returns
-------
(N,) array
    B z plus the boundary fields resampled onto the faces under each object's local grid (m/s).)doc")
      .def("surface_speed", [](const ReducedScene& s, Index object, const Array& z, const Array& coeffs,
                               const Array& poses, bool boundary) {
        if (object < 0 || object >= s.objects())
          throw std::invalid_argument("object must be in [0, " + std::to_string(s.objects()) + "), got " + std::to_string(object));
        Eigen::VectorXd out(s.coupling(object).boundary().q());
        auto d = s.create_data();
        s.surface_speed(object, vector(z, "z"), coeff_view(coeffs), rows_view(poses, "poses", -1), boundary, out, *d);
        return out;
      }, py::arg("object"), py::arg("z"), py::arg("boundary_coeffs"), py::arg("poses"), py::arg("boundary") = true,
         R"doc(Normal speeds of the flow at one object's surface samples.

Parameters
----------
object : int
    Index of the object, 0 <= object < K.
z : (r,) array
    Reduced flow state.
boundary_coeffs : (K, max_m) array
    The objects' coefficients.
poses : (K, 3) array
    The objects' (x, y, theta) (m, m, rad).
boundary : bool
    Of u' (True) or of B z alone (False).

Returns
-------
(q,) array
    n_k . u(x_k) at the world surface samples (m/s).)doc")
      .def("surface_energy_removed", [](const ReducedScene& s, const Array& z, const Array& coeffs, const Array& poses,
                                        const Array& velocities) {
        Eigen::VectorXd out(s.objects());
        auto d = s.create_data();
        s.surface_energy_removed(vector(z, "z"), coeff_view(coeffs), rows_view(poses, "poses", -1),
                                 rows_view(velocities, "velocities", -1), out, *d);
        return out;
      }, py::arg("z"), py::arg("boundary_coeffs"), py::arg("poses"), py::arg("velocities"),
         R"doc(Surface energy removed per object, the thesis' metric (Fig. 3.11b).

Parameters
----------
z : (r,) array
    The flow state the coefficients cancel (``step(..., return_flow=True)``'s z_flow).
boundary_coeffs : (K, max_m) array
    The objects' coefficients.
poses : (K, 3) array
    The objects' (x, y, theta) (m, m, rad).
velocities : (K, 3) array
    The objects' (vx, vy, omega) (m/s, m/s, rad/s).

Returns
-------
(K,) array
    1 - |S(u' - rigid)|^2 / |S(B z - rigid)|^2 (1: the relative normal flow is cancelled).)doc")
      .def("advect_particles", [](const ReducedScene& s, const Array& points, const Array& z, const Array& coeffs,
                                  const Array& poses, double dt) {
        RowMatrix X = rows_view(points, "points", -1);
        auto d = s.create_data();
        s.advect_particles(X, vector(z, "z"), coeff_view(coeffs), rows_view(poses, "poses", -1), dt, *d);
        return X;
      }, py::arg("points"), py::arg("z"), py::arg("boundary_coeffs"), py::arg("poses"), py::arg("dt"),
         R"doc(Moves particles one RK2 (midpoint) step through u'.

Parameters
----------
points : (P, 2) array
    World positions (m).
z : (r,) array
    Reduced flow state.
boundary_coeffs : (K, max_m) array
    The objects' coefficients (held over the step).
poses : (K, 3) array
    The objects' (x, y, theta) (m, m, rad).
dt : float
    Step (s), > 0.

Returns
-------
(P, 2) array
    New positions, clamped to the domain and pushed out of the objects along their normals.)doc");
}

void bind_scene_particles(py::class_<FluidParticles, Model, std::shared_ptr<FluidParticles>>& cls) {
  cls.def(py::init([](std::shared_ptr<ReducedScene> scene, Index particles, const Array& poses, const Array& velocities) {
        auto sp = std::make_shared<SceneAtPoses>(scene, rows_view(poses, "poses", -1), rows_view(velocities, "velocities", -1));
        return std::make_shared<FluidParticles>(sp, particles);
      }), py::arg("scene"), py::arg("particles"), py::arg("poses"), py::arg("velocities"),
      R"doc(Particles in a ReducedScene whose K objects stay at poses (K, 3) moving with
velocities (K, 3): p_i' = u'(p_i) (eq. 3.9, linear in z: the Jacobian holds
the boundary terms); step() advances z by the scene's step (Fig. 3.7) and
pushes particles out of the objects.)doc")
      .def_property_readonly("has_scene", [](const FluidParticles& p) { return p.scene() != nullptr; },
                             "Whether the particles move in a ReducedScene (with boundary terms).");
}

}  // namespace directable::py_bind
