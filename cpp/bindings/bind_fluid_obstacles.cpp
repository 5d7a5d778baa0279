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

RowMatrix coeff_view(const Array& a) { return rows_view(a, "boundary_coeffs", -1, -1, false, "K", "m"); }

}  // namespace

void bind_fluid_shapes(py::module_& m) {
  py::class_<Shape2D, std::shared_ptr<Shape2D>>(m, "Shape2D", R"doc(
A closed polygon in its object frame (the obstacle's origin): vertices (V, 2),
counter-clockwise (a clockwise polygon is reversed with a warning), simple.)doc")
      .def(py::init([](const Array& polygon) {
        auto s = std::make_shared<Shape2D>(rows_view(polygon, "polygon", -1, -1, false, "V", "2"));
        if (s->reversed())
          PyErr_WarnEx(PyExc_UserWarning, "polygon is clockwise: reversed to counter-clockwise", 1);
        return s;
      }), py::arg("polygon"))
      .def_property_readonly("vertices", [](const Shape2D& s) { return s.vertices(); }, "(V, 2), counter-clockwise.")
      .def_property_readonly("radius", &Shape2D::radius, "Largest vertex distance from the origin.")
      .def_property_readonly("area", &Shape2D::area)
      .def_property_readonly("thickness", &Shape2D::thickness,
                             "Thinnest part (inward from each edge midpoint to the opposite side).")
      .def("inside", [](const Shape2D& s, const Array& points) {
        auto P = rows_view(points, "points", 2, -1, true);
        Mask out(P.rows());
        for (Index k = 0; k < P.rows(); ++k) out[k] = s.inside(P(k, 0), P(k, 1));
        return out;
      }, py::arg("points"), "(P,) bool: whether each object-frame point (P, 2) is inside.")
      .def("surface", [](const Shape2D& s, double spacing) {
        RowMatrix pts, nrm;
        s.surface(spacing, pts, nrm);
        return py::make_tuple(pts, nrm);
      }, py::arg("spacing"), "(points (q, 2), outward normals (q, 2)): edge pieces of length <= spacing, at their midpoints.");

  py::class_<Obstacle2D>(m, "Obstacle", R"doc(
A Shape2D at pose (x, y, theta) moving with velocity (vx, vy, omega):
world = Rot(theta) local + (x, y); rigid velocity v(x) = (vx, vy) + omega z x (x - t).)doc")
      .def(py::init([](std::shared_ptr<Shape2D> shape, const Array& pose, const Array& velocity) {
        return Obstacle2D(shape, vector(pose, "pose"), vector(velocity, "velocity"));
      }), py::arg("shape"), py::arg("pose") = Eigen::Vector3d::Zero(), py::arg("velocity") = Eigen::Vector3d::Zero())
      .def_property_readonly("shape", [](const Obstacle2D& o) { return std::const_pointer_cast<Shape2D>(o.shape); })
      .def_property_readonly("pose", [](const Obstacle2D& o) { return Eigen::Vector3d(o.pose.x, o.pose.y, o.pose.theta); })
      .def_property_readonly("velocity", [](const Obstacle2D& o) { return o.velocity; });
}

void bind_fluid_boundaries(py::module_& m) {
  py::class_<BoundaryBasis, std::shared_ptr<BoundaryBasis>>(m, "BoundaryBasis", R"doc(
Boundary basis of one object (Treuille thesis sec. 3.5.1, 3.5.5): p
divergence-free local fields whose surface speeds are the principal
directions of the reduced basis's surface speeds over training poses, and
3 rigid fields (unit x, y translation and unit rotation). Build with
BoundaryBasis.build.)doc")
      .def_static("build", [](py::object reduced, std::shared_ptr<Shape2D> shape, const Array& poses, Index p,
                              std::optional<double> surface_spacing, std::optional<double> local_size, bool rigid,
                              int threads, py::object progress) {
        if (reduced.is_none()) throw std::invalid_argument("reduced must be a ReducedFluid, got None");
        auto rf = reduced.cast<std::shared_ptr<ReducedFluid>>();
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
         "Builds the basis from the ReducedFluid's basis and the training poses (n, 3) (parallel over poses, GIL released).")
      .def_property_readonly("p", &BoundaryBasis::p)
      .def_property_readonly("q", &BoundaryBasis::q)
      .def_property_readonly("rank", &BoundaryBasis::rank, "Rank of the collected surface speeds.")
      .def_property_readonly("half_size", &BoundaryBasis::half_size,
                             "Half-size of the local grid: object point x is at x + half_size in local-grid coordinates.")
      .def_property_readonly("shape", [](const BoundaryBasis& b) { return std::const_pointer_cast<Shape2D>(b.shape_ptr()); })
      .def_property_readonly("local_grid", [](const BoundaryBasis& b) { return std::const_pointer_cast<MACGrid2D>(b.local_grid_ptr()); })
      .def_property_readonly("surface_points", [](py::object self) {
        return readonly(py::array_t<double>({self.cast<const BoundaryBasis&>().q(), Index(2)},
                                            self.cast<const BoundaryBasis&>().surface_points().data(), self));
      }, "(q, 2), object frame.")
      .def_property_readonly("surface_normals", [](py::object self) {
        return readonly(py::array_t<double>({self.cast<const BoundaryBasis&>().q(), Index(2)},
                                            self.cast<const BoundaryBasis&>().surface_normals().data(), self));
      }, "(q, 2), object frame, outward.")
      .def_property_readonly("fields", [](const BoundaryBasis& b) { return b.fields(); }, "(N_local, p).")
      .def_property_readonly("rigid_fields", [](const BoundaryBasis& b) { return b.rigid_fields(); }, "(N_local, 3).")
      .def_property_readonly("surface_speeds", [](const BoundaryBasis& b) { return b.surface_speeds(); },
                             "(q, p) = S Btilde, orthonormal columns (eq. 3.10).")
      .def_property_readonly("energy", [](const BoundaryBasis& b) { return b.energy(); },
                             "(p,) fraction of the collected surface speeds' energy per mode.")
      .def_property_readonly("constraint_error", &BoundaryBasis::constraint_error);

  py::class_<Coupling, std::shared_ptr<Coupling>>(m, "Coupling", R"doc(
Feedforward F = -(S Btilde)' S R^-1 B (p, r) and feedback G = B' R [Btilde,
rigid] (r, p+3) of one object (eq. 3.11-3.12), on the fly or tabulated on a
pose grid and interpolated multilinearly.)doc")
      .def(py::init([](py::object reduced, std::shared_ptr<BoundaryBasis> basis, std::optional<py::tuple> pose_table,
                       const std::string& precompute, std::optional<Index> compress, int threads, py::object progress) {
        if (reduced.is_none()) throw std::invalid_argument("reduced must be a ReducedFluid, got None");
        auto rf = reduced.cast<std::shared_ptr<ReducedFluid>>();
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
          axes.x = vector((*pose_table)[0].cast<Array>(), "pose_table xs");
          axes.y = vector((*pose_table)[1].cast<Array>(), "pose_table ys");
          axes.theta = vector((*pose_table)[2].cast<Array>(), "pose_table thetas");
        }
        if (compress && *compress < 1) throw std::invalid_argument("compress must be >= 1 or None, got " + std::to_string(*compress));
        Progress prog(progress);
        return prog.run([&](const ProgressFn* fn) {
          return std::make_shared<Coupling>(rf, basis, pose_table ? &axes : nullptr, pc, compress.value_or(0), threads, fn);
        });
      }), py::arg("reduced"), py::arg("boundary_basis"), py::arg("pose_table") = py::none(), py::arg("precompute") = "none",
         py::arg("compress") = py::none(), py::arg("threads") = 0, py::arg("progress") = py::none(),
         "pose_table: (xs, ys, thetas), uniformly spaced nodes; precompute: \"none\", \"feedback\" or \"both\"; "
         "compress: k PCA modes over the poses (None: plain tables).")
      .def_property_readonly("p", &Coupling::p)
      .def_property_readonly("m", &Coupling::m, "p + rigid fields.")
      .def_property_readonly("table_bytes", &Coupling::table_bytes)
      .def_property_readonly("table_nodes", &Coupling::table_nodes)
      .def_property_readonly("boundary_basis", [](const Coupling& c) { return std::const_pointer_cast<BoundaryBasis>(c.boundary_ptr()); })
      .def("feedforward", [](const Coupling& c, const Array& pose, bool exact) {
        Eigen::MatrixXd F(c.p(), c.r());
        auto d = c.create_data();
        if (exact) c.feedforward_exact(pose_arg(pose), F, *d); else c.feedforward(pose_arg(pose), F, *d);
        return F;
      }, py::arg("pose"), py::arg("exact") = false, "F (p, r) at pose (3,) (table when tabulated unless exact).")
      .def("feedback", [](const Coupling& c, const Array& pose, bool exact) {
        Eigen::MatrixXd G(c.r(), c.m());
        auto d = c.create_data();
        if (exact) c.feedback_exact(pose_arg(pose), G, *d); else c.feedback(pose_arg(pose), G, *d);
        return G;
      }, py::arg("pose"), py::arg("exact") = false, "G (r, p+3) at pose (3,) (table when tabulated unless exact).");

  py::class_<ReducedSceneData, std::shared_ptr<ReducedSceneData>>(m, "ReducedSceneData",
                                                                   "Buffers of a ReducedScene (one per thread).");
  py::class_<ReducedScene, std::shared_ptr<ReducedScene>>(m, "ReducedScene", R"doc(
A reduced fluid with moving objects (Fig. 3.7): advect, diffuse, add forces,
then per object r~ = F z and the rigid coefficients (vx, vy, omega), and
z += sum G [r~; v].)doc")
      .def(py::init([](py::object reduced, const std::vector<std::shared_ptr<Coupling>>& couplings) {
        if (reduced.is_none()) throw std::invalid_argument("reduced must be a ReducedFluid, got None");
        std::vector<std::shared_ptr<const Coupling>> c(couplings.begin(), couplings.end());
        return std::make_shared<ReducedScene>(reduced.cast<std::shared_ptr<ReducedFluid>>(), c);
      }), py::arg("reduced"), py::arg("couplings"))
      .def_property_readonly("objects", &ReducedScene::objects)
      .def_property_readonly("max_m", &ReducedScene::max_m, "Columns of boundary_coeffs.")
      .def("create_data", [](const ReducedScene& s) { return std::shared_ptr<ReducedSceneData>(s.create_data()); })
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
         "u' (eq. 3.9) at points (P, 2): (P, 2).")
      .def("velocity_field", [](const ReducedScene& s, const Array& z, const Array& coeffs, const Array& poses) {
        Eigen::VectorXd u(s.reduced().grid().n_faces());
        auto d = s.create_data();
        s.velocity_field(vector(z, "z"), coeff_view(coeffs), rows_view(poses, "poses", -1), u, *d);
        return u;
      }, py::arg("z"), py::arg("boundary_coeffs"), py::arg("poses"), "u' on the world grid's faces (N,).")
      .def("surface_speed", [](const ReducedScene& s, Index object, const Array& z, const Array& coeffs,
                               const Array& poses, bool boundary) {
        if (object < 0 || object >= s.objects())
          throw std::invalid_argument("object must be in [0, " + std::to_string(s.objects()) + "), got " + std::to_string(object));
        Eigen::VectorXd out(s.coupling(object).boundary().q());
        auto d = s.create_data();
        s.surface_speed(object, vector(z, "z"), coeff_view(coeffs), rows_view(poses, "poses", -1), boundary, out, *d);
        return out;
      }, py::arg("object"), py::arg("z"), py::arg("boundary_coeffs"), py::arg("poses"), py::arg("boundary") = true,
         "Normal speeds (q,) of u' (or of B z without boundary) at the object's surface points.")
      .def("surface_energy_removed", [](const ReducedScene& s, const Array& z, const Array& coeffs, const Array& poses,
                                        const Array& velocities) {
        Eigen::VectorXd out(s.objects());
        auto d = s.create_data();
        s.surface_energy_removed(vector(z, "z"), coeff_view(coeffs), rows_view(poses, "poses", -1),
                                 rows_view(velocities, "velocities", -1), out, *d);
        return out;
      }, py::arg("z"), py::arg("boundary_coeffs"), py::arg("poses"), py::arg("velocities"),
         "(K,) 1 - |S(u' - rigid)|^2 / |S(B z - rigid)|^2 per object (z: the flow state the coefficients cancel).")
      .def("advect_particles", [](const ReducedScene& s, const Array& points, const Array& z, const Array& coeffs,
                                  const Array& poses, double dt) {
        RowMatrix X = rows_view(points, "points", -1);
        auto d = s.create_data();
        s.advect_particles(X, vector(z, "z"), coeff_view(coeffs), rows_view(poses, "poses", -1), dt, *d);
        return X;
      }, py::arg("points"), py::arg("z"), py::arg("boundary_coeffs"), py::arg("poses"), py::arg("dt"),
         "Points (P, 2) after one RK2 step through u', pushed out of the objects.");
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
      .def_property_readonly("has_scene", [](const FluidParticles& p) { return p.scene() != nullptr; });
}

}  // namespace directable::py_bind
