#include "common.hpp"
#include "directable/models/sph.hpp"

namespace directable::py_bind {

namespace {

Eigen::Map<const Eigen::VectorXd> points(const Array& a, const std::string& name, Index rows = -1) {
  if (a.ndim() != 2 || a.shape(1) != 2 || (rows >= 0 && a.shape(0) != rows))
    throw_shape(name, rows >= 0 ? shape_str(rows, 2) : "(N, 2)",
                a.ndim() == 2 ? shape_str(a.shape(0), a.shape(1)) : std::to_string(a.ndim()) + "-D array");
  check_finite(name, a.data(), a.size());
  return Eigen::Map<const Eigen::VectorXd>(a.data(), a.size());
}

Eigen::Vector2d vec2(const Array& a, const std::string& name) { return vector(a, name, 2, true); }

RowMatrix as_points(const Eigen::VectorXd& v) { return Eigen::Map<const RowMatrix>(v.data(), v.size() / 2, 2); }

}  // namespace

void bind_sph(py::module_& m) {
  py::class_<SPHFluid2D, std::shared_ptr<SPHFluid2D>>(m, "SPHFluid2D", R"doc(
2D weakly compressible SPH: cubic-spline kernel (support 2h), Tait EOS,
Monaghan viscosity, uniform-grid neighbour search, boundary particles,
gravity, a moving rigid sphere and per-particle control forces.)doc")
      .def(py::init([](const Array& fluid, const Array& boundary, double spacing, double h, double rho0, double c0,
                       double gamma, double viscosity, double dt, const Array& gravity, const Array& lo,
                       const Array& hi) {
        SPHParams p;
        p.spacing = spacing;
        p.h = h;
        p.rho0 = rho0;
        p.c0 = c0;
        p.gamma = gamma;
        p.viscosity = viscosity;
        p.dt = dt;
        p.gravity = vec2(gravity, "gravity");
        p.lo = vec2(lo, "lo");
        p.hi = vec2(hi, "hi");
        auto f = points(fluid, "fluid");
        const Index M = boundary.ndim() == 2 ? boundary.shape(0) : -1;
        auto b = points(boundary, "boundary");
        return std::make_shared<SPHFluid2D>(p, f.data(), f.size() / 2, b.data(), M);
      }), py::arg("fluid"), py::arg("boundary"), py::arg("spacing"), py::arg("h"), py::arg("rho0") = 1000.0,
         py::arg("c0") = 20.0, py::arg("gamma") = 7.0, py::arg("viscosity") = 0.05, py::arg("dt") = 5e-4,
         py::arg("gravity") = Eigen::Vector2d(0.0, -9.81), py::arg("lo") = Eigen::Vector2d(0.0, 0.0),
         py::arg("hi") = Eigen::Vector2d(1.0, 1.0),
         "fluid (N, 2), boundary (M, 2) particle positions; particle mass rho0 spacing^2; domain box lo, hi (2,).")
      .def_property_readonly("size", &SPHFluid2D::size, "N fluid particles.")
      .def_property_readonly("mass", [](const SPHFluid2D& s) { return s.params().mass(); }, "Particle mass.")
      .def_property_readonly("dt", [](const SPHFluid2D& s) { return s.params().dt; }, "Time step.")
      .def_property_readonly("positions", [](const SPHFluid2D& s) { return as_points(s.positions()); }, "(N, 2) copy.")
      .def_property_readonly("velocities", [](const SPHFluid2D& s) { return as_points(s.velocities()); }, "(N, 2) copy.")
      .def_property_readonly("densities", [](const SPHFluid2D& s) { return Eigen::VectorXd(s.densities()); }, "(N,) copy.")
      .def_property_readonly("pressures", [](const SPHFluid2D& s) { return Eigen::VectorXd(s.pressures()); }, "(N,) copy.")
      .def_property_readonly("sphere_centre", [](const SPHFluid2D& s) { return Eigen::Vector2d(s.sphere_centre()); },
                             "(2,) centre of the sphere.")
      .def("set_sphere", [](SPHFluid2D& s, const Array& centre, double radius, const Array& velocity) {
        s.set_sphere(vec2(centre, "centre"), radius, vec2(velocity, "velocity"));
      }, py::arg("centre"), py::arg("radius"), py::arg("velocity"),
         "Moving rigid sphere: centre (2,) inside the domain, radius > 0, velocity (2,).")
      .def("remove_sphere", &SPHFluid2D::remove_sphere, "No sphere from now on.")
      .def("set_state", [](SPHFluid2D& s, const Array& positions, const Array& velocities) {
        s.set_state(points(positions, "positions", s.size()), points(velocities, "velocities", s.size()));
      }, py::arg("positions"), py::arg("velocities"), "positions, velocities (N, 2).")
      .def("step", [](SPHFluid2D& s, const OptArray& force, Index steps) {
        const double* f = nullptr;
        if (force) f = points(*force, "force", s.size()).data();
        if (steps < 1) throw std::invalid_argument("steps must be >= 1, got " + std::to_string(steps));
        py::gil_scoped_release release;
        for (Index k = 0; k < steps; ++k) s.step(f);
      }, py::arg("force") = py::none(), py::arg("steps") = 1,
         "Advance `steps` steps with per-particle forces (N, 2) held (GIL released); a diverging step raises.")
      .def("prediction_model", [](SPHFluid2D& s, std::optional<double> dt) {
        SPHParams p = s.params();
        if (dt) p.dt = *dt;
        return std::make_shared<SPHPrediction>(p, s.neighbours(), s.boundary());
      }, py::arg("dt") = py::none(), R"doc(The paper's simplified prediction model at the current state: body forces
and pressure only, neighbour sets frozen. State (4N,) = [positions (2N),
velocities (2N)] (x0, y0, x1, ...), control (2N,) = forces; its step is dt
(default: the simulation's; a frame of several simulation steps may be used).)doc");

  py::class_<SPHPrediction, PredictionModel, std::shared_ptr<SPHPrediction>>(m, "SPHPrediction", R"doc(
Simplified SPH prediction model (pressure + body forces, frozen neighbours),
with its exact VJP; a PredictionModel for the HorizonOptimizer.)doc")
      .def("pressure_acceleration", [](const SPHPrediction& s, const Array& positions) {
        Eigen::VectorXd a(s.s());
        s.pressure_acceleration(vector(positions, "positions", s.s(), true), a);
        return a;
      }, py::arg("positions"), "positions (2N,) -> pressure acceleration (2N,).");
}

}  // namespace directable::py_bind
