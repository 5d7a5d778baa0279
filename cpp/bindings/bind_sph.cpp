#include "common.hpp"
#include "directable/models/sph/fluid.hpp"
#include "directable/models/sph/prediction.hpp"

namespace directable::py_bind {

namespace {

// Declarations only, for one dimension D (the 2D and 3D classes share them).
template <int D>
void bind_dim(py::module_& m, const char* fluid_name, const char* pred_name) {
  using Fluid = SPHFluid<D>;
  using Pred = SPHPredictionT<D>;
  using Vec = Eigen::Matrix<double, D, 1>;
  const std::string Ds = std::to_string(D);
  const std::string doc = Ds + R"doc(D weakly compressible SPH: cubic-spline kernel (support 2h), Tait EOS,
Monaghan viscosity, uniform-grid neighbour search, boundary particles,
gravity, a moving rigid sphere and per-particle control forces. Particle
arrays are (N, )doc" + Ds + ").";
  py::class_<Pred, PredictionModel, std::shared_ptr<Pred>> pred_cls(
      m, pred_name,
      ("Simplified " + Ds + "D SPH prediction model (pressure + body forces, frozen neighbours),\n"
       "with its exact VJP; a PredictionModel for the HorizonOptimizer. Within a solve (or calls\n"
       "that share one data), the step of window step i keeps a tape that the VJP at the same positions reuses.")
          .c_str());
  pred_cls.def("pressure_acceleration",
           [](const Pred& s, const Array& positions) {
             Eigen::VectorXd a(s.s());
             s.pressure_acceleration(vector(positions, "positions", s.s(), true), a);
             return a;
           },
           py::arg("positions"), ("positions (" + Ds + "N,) -> pressure acceleration (" + Ds + "N,).").c_str());

  py::class_<Fluid, std::shared_ptr<Fluid>>(m, fluid_name, doc.c_str())
      .def(py::init([](const Array& fluid, const Array& boundary, double spacing, double h, double rho0, double c0,
                       double gamma, double viscosity, double dt, const OptArray& gravity, const OptArray& lo,
                       const OptArray& hi) {
             SPHParamsT<D> p;
             p.spacing = spacing;
             p.h = h;
             p.rho0 = rho0;
             p.c0 = c0;
             p.gamma = gamma;
             p.viscosity = viscosity;
             p.dt = dt;
             if (gravity) p.gravity = vector(*gravity, "gravity", D, true);
             if (lo) p.lo = vector(*lo, "lo", D, true);
             if (hi) p.hi = vector(*hi, "hi", D, true);
             return std::make_shared<Fluid>(p, flat_points(fluid, "fluid", D), flat_points(boundary, "boundary", D));
           }),
           py::arg("fluid"), py::arg("boundary"), py::arg("spacing"), py::arg("h"), py::arg("rho0") = 1000.0,
           py::arg("c0") = 20.0, py::arg("gamma") = 7.0, py::arg("viscosity") = 0.05, py::arg("dt") = 5e-4,
           py::arg("gravity") = py::none(), py::arg("lo") = py::none(), py::arg("hi") = py::none(),
           ("fluid (N, " + Ds + "), boundary (M, " + Ds + ") particle positions; particle mass rho0 spacing^" + Ds +
            "; gravity (" + Ds + ",) (default -9.81 along the last axis); domain box lo, hi (" + Ds +
            ",) (default the unit box).")
               .c_str())
      .def_property_readonly("size", &Fluid::size, "N fluid particles.")
      .def_property_readonly("dim", [](const Fluid&) { return D; }, "Spatial dimension.")
      .def_property_readonly("mass", [](const Fluid& s) { return s.params().mass(); }, "Particle mass.")
      .def_property_readonly("dt", [](const Fluid& s) { return s.params().dt; }, "Time step.")
      .def_property_readonly("positions", [](const Fluid& s) { return as_points<D>(s.positions()); },
                             ("(N, " + Ds + ") copy.").c_str())
      .def_property_readonly("velocities", [](const Fluid& s) { return as_points<D>(s.velocities()); },
                             ("(N, " + Ds + ") copy.").c_str())
      .def_property_readonly("densities", [](const Fluid& s) { return Eigen::VectorXd(s.densities()); }, "(N,) copy.")
      .def_property_readonly("pressures", [](const Fluid& s) { return Eigen::VectorXd(s.pressures()); }, "(N,) copy.")
      .def_property_readonly("sphere_centre", [](const Fluid& s) { return Vec(s.sphere_centre()); },
                             ("(" + Ds + ",) centre of the sphere.").c_str())
      .def("set_sphere",
           [](Fluid& s, const Array& centre, double radius, const Array& velocity) {
             auto c = vector(centre, "centre", D, true);
             auto v = vector(velocity, "velocity", D, true);
             py::gil_scoped_release release;
             ObjectLock busy(&s);
             s.set_sphere(c, radius, v);
           },
           py::arg("centre"), py::arg("radius"), py::arg("velocity"),
           ("Moving rigid sphere: centre (" + Ds + ",) inside the domain, radius > 0, velocity (" + Ds + ",).").c_str())
      .def("remove_sphere",
           [](Fluid& s) {
             py::gil_scoped_release release;
             ObjectLock busy(&s);
             s.remove_sphere();
           },
           "No sphere from now on.")
      .def("set_state",
           [](Fluid& s, const Array& positions, const Array& velocities) {
             auto p = flat_points(positions, "positions", D, s.size());
             auto v = flat_points(velocities, "velocities", D, s.size());
             py::gil_scoped_release release;
             ObjectLock busy(&s);
             s.set_state(p, v);
           },
           py::arg("positions"), py::arg("velocities"), ("positions, velocities (N, " + Ds + ").").c_str())
      .def("step",
           [](Fluid& s, const OptArray& force, Index steps, py::object progress) {
             const Eigen::VectorXd none;
             const CRefVec f = force ? CRefVec(flat_points(*force, "force", D, s.size())) : CRefVec(none);
             Progress prog(progress);
             prog.run([&](const ProgressFn* fn) {
               ObjectLock busy(&s);
               s.advance(steps, f, fn);
             });
           },
           py::arg("force") = py::none(), py::arg("steps") = 1, py::arg("progress") = py::none(),
           ("Advance `steps` steps with finite per-particle forces (N, " + Ds +
            ") held (GIL released; progress(done, steps) throttled, Ctrl-C stops between steps);\n"
            "a diverging step raises ValueError naming the step.")
               .c_str())
      .def("prediction_model",
           [](Fluid& s, std::optional<double> dt) {
             SPHParamsT<D> p = s.params();
             if (dt) p.dt = *dt;
             py::gil_scoped_release release;
             ObjectLock busy(&s);
             return std::make_shared<Pred>(p, s.neighbours(), s.boundary());
           },
           py::arg("dt") = py::none(),
           ("The paper's simplified prediction model at the current state: body forces\n"
            "and pressure only, neighbour sets frozen. State (" + std::to_string(2 * D) + "N,) = [positions (" + Ds +
            "N),\nvelocities (" + Ds + "N)], particle-major; control (" + Ds +
            "N,) = forces; its step is dt (default:\nthe simulation's; a frame of several simulation steps may be used).")
               .c_str());

  pred_cls.def("refreeze",
               [](Pred& self, Fluid& fluid) {
                 py::gil_scoped_release release;
                 ObjectLock busy_fluid(&fluid);
                 self.refreeze(fluid);
               },
               py::arg("fluid"),
               "Freezes the neighbour sets of `fluid`'s current state (same particle and boundary counts):\n"
               "one model, and one HorizonOptimizer on it, for a whole receding-horizon run (GIL released;\n"
               "not while the model is in use elsewhere).");
}

}  // namespace

void bind_sph(py::module_& m) {
  bind_dim<2>(m, "SPHFluid2D", "SPHPrediction");
  bind_dim<3>(m, "SPHFluid3D", "SPHPrediction3D");
}

}  // namespace directable::py_bind
