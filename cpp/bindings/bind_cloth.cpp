// Mass-spring cloth, its goal-directed control and the second-phase run.
#include "common.hpp"
#include "directable/control/cloth/goal_path.hpp"
#include "directable/control/cloth/path_editing.hpp"
#include "directable/models/cloth/cloth.hpp"
#include "directable/models/cloth/cloth_control_model.hpp"
#include "directable/sim/point_mass_run.hpp"

namespace directable::py_bind {

namespace {

//! (T, V, 3) read-only view of a VectorSeq of flat 3V rows owned by `owner`.
py::array node_seq(const VectorSeq& s, py::handle owner) {
  return readonly(py::array_t<double>({s.T(), s.dim() / 3, Index(3)}, s.data(), owner));
}

Eigen::Vector3d vec3(const Array& a, const std::string& name) { return vector(a, name, 3); }

GoalPathSettings settings(double alpha, double beta, double gamma, double delta, double seek_angle, Index samples,
                          Index azimuths, double widen, double f_max, const std::string& length_ratio, double tolerance) {
  GoalPathSettings s;
  s.alpha = alpha;
  s.beta = beta;
  s.gamma = gamma;
  s.delta = delta;
  s.seek_angle = seek_angle;
  s.samples = samples;
  s.azimuths = azimuths;
  s.widen = widen;
  s.f_max = f_max;
  if (length_ratio == "squared") s.length_ratio = LengthRatio::squared;
  else if (length_ratio == "linear") s.length_ratio = LengthRatio::linear;
  else throw std::invalid_argument("length_ratio must be \"squared\" or \"linear\", got \"" + length_ratio + "\"");
  s.tolerance = tolerance;
  return s;
}

}  // namespace

// Declarations only (one .def per bound function or method, no logic): its
// length is the size of the cloth API.
void bind_cloth(py::module_& m) {
  py::enum_<ClothIntegrator>(m, "ClothIntegrator", "Cloth integrators: symplectic Euler, backward Euler (LDL' or CG).")
      .value("symplectic", ClothIntegrator::symplectic)
      .value("implicit", ClothIntegrator::implicit)
      .value("implicit_cg", ClothIntegrator::implicit_cg);

  py::class_<Collider>(m, "ClothCollider", "A penalty collider of the cloth (sphere or plane), part of F^A.")
      .def_static("sphere", [](const Array& center, double radius, double stiffness, double friction) {
        Collider c;
        c.kind = Collider::Kind::sphere;
        c.point = vec3(center, "center");
        c.radius = radius;
        c.stiffness = stiffness;
        c.friction = friction;
        return c;
      }, py::arg("center"), py::arg("radius"), py::arg("stiffness"), py::arg("friction"))
      .def_static("plane", [](const Array& point, const Array& normal, double stiffness, double friction) {
        Collider c;
        c.kind = Collider::Kind::plane;
        c.point = vec3(point, "point");
        c.normal = vec3(normal, "normal");
        c.stiffness = stiffness;
        c.friction = friction;
        return c;
      }, py::arg("point"), py::arg("normal"), py::arg("stiffness"), py::arg("friction"))
      .def_property_readonly("kind", [](const Collider& c) { return c.kind == Collider::Kind::sphere ? "sphere" : "plane"; })
      .def_property_readonly("point", [](const Collider& c) { return Eigen::Vector3d(c.point); })
      .def_property_readonly("normal", [](const Collider& c) { return Eigen::Vector3d(c.normal); })
      .def_property_readonly("radius", [](const Collider& c) { return c.radius; })
      .def_property_readonly("stiffness", [](const Collider& c) { return c.stiffness; })
      .def_property_readonly("friction", [](const Collider& c) { return c.friction; });

  py::class_<ClothRollout, std::shared_ptr<ClothRollout>>(m, "ClothRollout", "Positions and velocities of a cloth run.")
      .def_property_readonly("x", [](py::object self) { return node_seq(self.cast<ClothRollout&>().x, self); },
                             "(T+1, V, 3) positions (m), read-only view.")
      .def_property_readonly("v", [](py::object self) { return node_seq(self.cast<ClothRollout&>().v, self); },
                             "(T+1, V, 3) velocities (m/s), read-only view.");

  py::class_<PointMassRun, ClothRollout, std::shared_ptr<PointMassRun>>(
      m, "PointMassRun", "A run with control forces: a ClothRollout (x, v) plus u.")
      .def_property_readonly("u", [](py::object self) { return node_seq(self.cast<PointMassRun&>().u, self); },
                             "(T, V, 3) applied control forces (N), read-only view.");

  py::class_<ClothControlModel, Model, std::shared_ptr<ClothControlModel>>(m, "ClothControlModel", R"doc(
The cloth as a Model: z = [q, q'] (6V), w = forces on the controlled nodes
(3 per node), B = [0; M^-1 S], analytic Jacobian; step() is symplectic Euler.)doc")
      .def_property_readonly("controlled", &ClothControlModel::controlled);

  py::class_<ClothModel, std::shared_ptr<ClothModel>>(m, "ClothModel", R"doc(
Immutable mass-spring cloth (nx x ny nodes, node (i, j) = j*nx + i). Build
a new one to change colliders: a model in use is never modified.)doc")
      .def(py::init([](Index nx, Index ny, double spacing, double mass, double k_struct, double k_shear, double k_bend,
                       double damping, const Array& gravity, std::vector<Index> pinned, const Array& origin,
                       double k_bend2, std::vector<Collider> colliders) {
        ClothParams p;
        p.nx = nx;
        p.ny = ny;
        p.spacing = spacing;
        p.mass = mass;
        p.k_struct = k_struct;
        p.k_shear = k_shear;
        p.k_bend = k_bend;
        p.k_bend2 = k_bend2;
        p.damping = damping;
        p.gravity = vec3(gravity, "gravity");
        p.origin = vec3(origin, "origin");
        p.pinned = std::move(pinned);
        return std::make_shared<ClothModel>(p, std::move(colliders));
      }), py::arg("nx"), py::arg("ny"), py::arg("spacing"), py::arg("mass"), py::arg("k_struct"), py::arg("k_shear"),
         py::arg("k_bend"), py::arg("damping"), py::arg("gravity"), py::arg("pinned"), py::arg("origin"),
         py::arg("k_bend2"), py::arg("colliders"))
      .def_property_readonly("node_count", &ClothModel::node_count, "V.")
      .def_property_readonly("spring_count", &ClothModel::spring_count, "Springs present.")
      .def_property_readonly("positions0", [](const ClothModel& c) { return as_points<3>(c.positions0()); }, "(V, 3) rest grid (m).")
      .def_property_readonly("pinned", [](const ClothModel& c) {
        std::vector<Index> out;
        for (Index a = 0; a < c.node_count(); ++a)
          if (c.pinned()[a]) out.push_back(a);
        return out;
      }, "Pinned node indices.")
      .def_property_readonly("colliders", &ClothModel::colliders)
      .def("forces", [](const ClothModel& c, const Array& x, const Array& v) {
        auto xs = flat_points(x, "x", 3, c.node_count());
        auto vs = flat_points(v, "v", 3, c.node_count());
        auto d = c.create_data();
        c.applied_forces(xs, vs, d->F, *d);
        return as_points<3>(d->F);
      }, py::arg("x"), py::arg("v"), "F^A (V, 3) at x, v (V, 3).")
      .def("energy", [](const ClothModel& c, const Array& x) {
        auto xs = flat_points(x, "x", 3, c.node_count());
        return c.energy(xs);
      }, py::arg("x"), "Spring + gravity + collider potential (J).")
      .def("force_jacobians", [](const ClothModel& c, const Array& x, const Array& v) {
        auto xs = flat_points(x, "x", 3, c.node_count());
        auto vs = flat_points(v, "v", 3, c.node_count());
        auto d = c.create_data();
        c.forces_and_jacobians(xs, vs, *d);
        auto ints = [](const std::vector<int>& v) { return py::array_t<int>(static_cast<py::ssize_t>(v.size()), v.data()); };
        return py::make_tuple(ints(c.row_offsets()), ints(c.columns()), d->Kx, d->Kv);
      }, py::arg("x"), py::arg("v"), "(indptr, indices, dF/dx values, dF/dv values) of the CSR (3V, 3V) Jacobians.")
      .def("step", [](const ClothModel& c, const Array& x, const Array& v, double dt, const OptArray& u,
                      ClothIntegrator method) {
        const Index V = c.node_count();
        Eigen::VectorXd xs = flat_points(x, "x", 3, V), vs = flat_points(v, "v", 3, V);
        const double* up = u ? flat_points(*u, "u", 3, V).data() : nullptr;
        cloth_step(c, xs, vs, dt, up, method);
        return py::make_tuple(as_points<3>(xs), as_points<3>(vs));
      }, py::arg("x"), py::arg("v"), py::arg("dt"), py::arg("u") = py::none(), py::arg("method") = ClothIntegrator::symplectic,
         "One step: (x+, v+), each (V, 3).")
      .def("rollout", [](const ClothModel& c, const Array& x0, const Array& v0, double dt, Index steps, const OptArray& u,
                         ClothIntegrator method, py::object progress) {
        const Index V = c.node_count();
        auto xs = flat_points(x0, "x0", 3, V);
        auto vs = flat_points(v0, "v0", 3, V);
        SeqView us = u ? matrix_seq(*u, "u") : SeqView();
        Progress prog(progress);
        return prog.run([&](const ProgressFn* fn) {
          return std::make_shared<ClothRollout>(cloth_rollout(c, xs, vs, dt, steps, us, method, fn));
        });
      }, py::arg("x0"), py::arg("v0"), py::arg("dt"), py::arg("steps"), py::arg("u") = py::none(),
         py::arg("method") = ClothIntegrator::symplectic, py::arg("progress") = py::none(),
         "steps steps in one call (GIL released): a ClothRollout.")
      .def("as_model", [](std::shared_ptr<ClothModel> c, std::vector<Index> controlled) {
        return std::make_shared<ClothControlModel>(c, std::move(controlled));
      }, py::arg("controlled"), "The cloth as a Model driven by forces on the controlled nodes.");

  py::class_<ClothPlan, std::shared_ptr<ClothPlan>>(m, "ClothPlan", "Paths and forces of goal-directed control.")
      .def_property_readonly("t_start", [](const ClothPlan& p) { return p.t_start; }, "First step of the merged window (int); the window is [t_start, t_end), n = t_end - t_start steps.")
      .def_property_readonly("t_end", [](const ClothPlan& p) { return p.t_end; }, "End of the merged window (int, exclusive): the latest goal's t_c.")
      .def_property_readonly("nodes", [](const ClothPlan& p) { return p.nodes; }, "The c controlled nodes (list of int), in the order of the goals.")
      .def_property_readonly("window_start", [](const ClothPlan& p) { return p.window_start; }, "Per node (c ints): first step of its window, after overlapping windows were merged.")
      .def_property_readonly("window_end", [](const ClothPlan& p) { return p.window_end; }, "Per node (c ints): its t_c, the step at which it must be on its goal.")
      .def_property_readonly("goals", [](const ClothPlan& p) { return RowMatrix(p.goals); }, "(c, 3) goal positions q# (m), one row per node.")
      .def_property_readonly("paths", [](py::object self) { return view(self.cast<ClothPlan&>().paths, self); }, "(c, n+1, 3) node positions (m) of the second pass over the merged window (read-only view).")
      .def_property_readonly("generated", [](py::object self) { return view(self.cast<ClothPlan&>().generated, self); }, "(c, n+1, 3) node positions (m) of the first pass, the heuristic path search (read-only view; empty for follow).")
      .def_property_readonly("targets", [](py::object self) { return view(self.cast<ClothPlan&>().targets, self); }, "(c, n+1, 3) the cut and re-timed paths (m) the second pass follows; NaN outside each node's window (read-only view).")
      .def_property_readonly("forces", [](py::object self) { return view(self.cast<ClothPlan&>().forces, self); }, "(n, c, 3) control forces (N) of the second pass, zero outside each node's window (read-only view).")
      .def_property_readonly("reached", [](const ClothPlan& p) { return std::vector<bool>(p.reached.begin(), p.reached.end()); }, "Per node (c bools): whether it ends on its goal to the plan's tolerance (False where f_max clipped a force).")
      .def_property_readonly("final_distance", [](const ClothPlan& p) { return Eigen::VectorXd(p.final_distance); }, "(c,) distance |q_{t_c} - q#| (m) of each node from its goal at its t_c.")
      .def_property_readonly("cost", [](const ClothPlan& p) { return Eigen::VectorXd(p.cost); }, "(c,) eq. 14's cost of each node over its window: sum of 1/2 (beta |q - q#|^2 + gamma |u|^2) (m^2 and N^2 weighted).")
      .def_property_readonly("closest_step", [](const ClothPlan& p) { return p.closest_step; }, "Per node (c ints): step of the first pass's closest approach to the goal, counted from the window start.")
      .def_property_readonly("clipped_forces", [](const ClothPlan& p) { return p.clipped_forces; }, "Number of forces that f_max shortened (int; 0 without a limit).");

  m.def("cloth_plan", [](const ClothModel& c, const Array& pilot_x, const Array& pilot_v,
                         const std::vector<std::tuple<Index, Index, Array>>& goals, double dt, double alpha, double beta,
                         double gamma, double delta, double seek_angle, Index samples, Index azimuths, double widen,
                         double f_max, const std::string& length_ratio, double tolerance) {
    std::vector<NodeGoal> g;
    for (std::size_t k = 0; k < goals.size(); ++k)
      g.push_back({std::get<0>(goals[k]), std::get<1>(goals[k]),
                   vec3(std::get<2>(goals[k]), "goals[" + std::to_string(k) + "] goal")});
    const GoalPathSettings s = settings(alpha, beta, gamma, delta, seek_angle, samples, azimuths, widen, f_max,
                                        length_ratio, tolerance);
    SeqView px = matrix_seq(pilot_x, "pilot.x"), pv = matrix_seq(pilot_v, "pilot.v");
    py::gil_scoped_release release;
    return std::make_shared<ClothPlan>(plan_goal_paths(c, px, pv, g, dt, s));
  }, py::arg("cloth"), py::arg("pilot_x"), py::arg("pilot_v"), py::arg("goals"), py::arg("dt"), py::arg("alpha"),
     py::arg("beta"), py::arg("gamma"), py::arg("delta"), py::arg("seek_angle"), py::arg("samples"), py::arg("azimuths"),
     py::arg("widen"), py::arg("f_max"), py::arg("length_ratio"), py::arg("tolerance"),
     "Goal-directed paths and forces for goals [(node, t_c, goal (3,))] over a pilot (T+1, V, 3); GIL released.");

  m.def("cloth_follow", [](const ClothModel& c, const Array& pilot_x, const Array& pilot_v, double dt,
                           std::vector<Index> nodes, std::vector<Index> window_start, std::vector<Index> window_end,
                           const Array& paths, double beta, double gamma, double f_max, double tolerance) {
    GoalPathSettings s;
    s.beta = beta;
    s.gamma = gamma;
    s.f_max = f_max;
    s.tolerance = tolerance;
    SeqView px = matrix_seq(pilot_x, "pilot.x"), pv = matrix_seq(pilot_v, "pilot.v"), tg = matrix_seq(paths, "paths");
    py::gil_scoped_release release;
    return std::make_shared<ClothPlan>(follow_paths(c, px, pv, dt, nodes, window_start, window_end, tg, s));
  }, py::arg("cloth"), py::arg("pilot_x"), py::arg("pilot_v"), py::arg("dt"), py::arg("nodes"), py::arg("window_start"),
     py::arg("window_end"), py::arg("paths"), py::arg("beta"), py::arg("gamma"), py::arg("f_max"), py::arg("tolerance"),
     "Second pass along given paths (c, n+1, 3) over the nodes' windows; GIL released.");

  m.def("cloth_apply", [](const ClothModel& c, const Array& x0, const Array& v0, double dt, Index steps, Index t_start,
                          std::vector<Index> nodes, const Array& forces, py::object progress) {
    const Index V = c.node_count();
    auto xs = flat_points(x0, "x0", 3, V);
    auto vs = flat_points(v0, "v0", 3, V);
    SeqView f = matrix_seq(forces, "plan.forces");
    Progress prog(progress);
    return prog.run([&](const ProgressFn* fn) {
      return std::make_shared<PointMassRun>(run_with_forces(c, xs, vs, dt, steps, t_start, nodes, f, fn));
    });
  }, py::arg("cloth"), py::arg("x0"), py::arg("v0"), py::arg("dt"), py::arg("steps"), py::arg("t_start"),
     py::arg("nodes"), py::arg("forces"), py::arg("progress") = py::none(),
     "Symplectic run with forces (n, c, 3) on nodes from step t_start; GIL released.");

  m.def("cloth_control_window", &control_window, py::arg("distance"), py::arg("alpha"), py::arg("t_c"),
        "Eq. 11: round(alpha distance^2) steps, clipped to [1, t_c].");
  m.def("cloth_retime", [](const Array& path, const Array& reference) {
    auto p = matrix(path, "path");
    auto r = matrix(reference, "reference");
    RowMatrix out(r.rows(), 3);
    retime_path(p, r, out);
    return out;
  }, py::arg("path"), py::arg("reference"), "Re-timed path (n+1, 3) on path (m+1, 3) spaced like reference (n+1, 3).");
  m.def("cloth_blend", [](const Array& path, const Array& control_points, double weight) {
    auto p = matrix(path, "path");
    RowMatrix out(p.rows(), p.cols() == 3 ? 3 : p.cols());
    blend_path(p, matrix(control_points, "control_points"), weight, out);
    return out;
  }, py::arg("path"), py::arg("control_points"), py::arg("weight"),
     "(1 - weight) path + weight Newton curve through control_points (4, 3).");
  m.def("cloth_curl_goals", [](const Array& x, std::vector<Index> region, double curl_deg, double rotate_deg) {
    return curl_goals(matrix(x, "x_at_tc"), region, curl_deg, rotate_deg);
  }, py::arg("x_at_tc"), py::arg("region"), py::arg("curl_deg"), py::arg("rotate_deg"),
     "Target pose goals (r, 3) of a region rotated by curl_deg about its hinge and rotate_deg about the normal.");
}

}  // namespace directable::py_bind
