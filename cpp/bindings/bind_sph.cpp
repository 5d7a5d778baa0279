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
gravity, a moving rigid sphere and per-particle control forces.

The fluid's state changes with every call that steps or sets it; calls from
several threads on one fluid take turns (a lock per fluid), so they act as
if made one after the other.

Parameters
----------
fluid : (N, D) array
    Initial fluid particle positions (m).
boundary : (M, D) array
    Boundary particle positions (m): fixed walls.
spacing : float
    Particle spacing (m); the particle mass is rho0 spacing^D.
h : float
    Smoothing length (m); the kernel's support is 2 h.
rho0 : float, optional
    Rest density (kg/m^D).
c0 : float, optional
    Speed of sound of the Tait equation of state (m/s).
gamma : float, optional
    Tait exponent.
viscosity : float, optional
    Monaghan's artificial viscosity alpha.
dt : float, optional
    Time step (s).
gravity : (D,) array, optional
    Body acceleration (m/s^2); default -9.81 along the last axis.
lo, hi : (D,) array, optional
    Corners of the domain box (m); default the unit box.)doc";
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
           py::arg("positions"), R"doc(The model's pressure acceleration at the given positions (frozen neighbours).

Parameters
----------
positions : (D N,) array
    Particle positions (m), particle-major (x0, y0, ...).

Returns
-------
(D N,) ndarray
    Pressure acceleration of each particle (m/s^2).)doc");

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
      .def_property_readonly("positions", [](const Fluid& s) {
                               return as_points<D>(read_locked(&s, [&] { return Eigen::VectorXd(s.positions()); }));
                             },
                             ("(N, " + Ds + ") copy.").c_str())
      .def_property_readonly("velocities", [](const Fluid& s) {
                               return as_points<D>(read_locked(&s, [&] { return Eigen::VectorXd(s.velocities()); }));
                             },
                             ("(N, " + Ds + ") copy.").c_str())
      .def_property_readonly("densities", [](const Fluid& s) {
                               return read_locked(&s, [&] { return Eigen::VectorXd(s.densities()); });
                             }, "(N,) copy.")
      .def_property_readonly("pressures", [](const Fluid& s) {
                               return read_locked(&s, [&] { return Eigen::VectorXd(s.pressures()); });
                             }, "(N,) copy.")
      .def_property_readonly("sphere_centre", [](const Fluid& s) {
                               return read_locked(&s, [&] { return Vec(s.sphere_centre()); });
                             },
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
           R"doc(Places a moving rigid sphere that pushes the fluid from now on.

Parameters
----------
centre : (D,) array
    Centre (m), inside the domain.
radius : float
    Radius (m), > 0.
velocity : (D,) array
    Its velocity (m/s), held until the next call.)doc")
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
           py::arg("positions"), py::arg("velocities"), R"doc(Replaces the fluid's state.

Parameters
----------
positions : (N, D) array
    Particle positions (m), finite.
velocities : (N, D) array
    Particle velocities (m/s), finite.)doc")
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
           R"doc(Advances the fluid by `steps` time steps with per-particle forces held.

The GIL is released; Ctrl-C stops between steps (KeyboardInterrupt). A step
whose state becomes non-finite raises ValueError naming the step.

Parameters
----------
force : (N, D) array, optional
    Per-particle control forces (N), finite (each divided by the particle
    mass); none when None.
steps : int, optional
    Number of steps, >= 0.
progress : callable(done, total), optional
    Called (throttled) as the steps finish.)doc")
      .def("prediction_model",
           [](Fluid& s, std::optional<double> dt) {
             SPHParamsT<D> p = s.params();
             if (dt) p.dt = *dt;
             py::gil_scoped_release release;
             ObjectLock busy(&s);
             return std::make_shared<Pred>(p, s.neighbours(), s.boundary());
           },
           py::arg("dt") = py::none(),
           R"doc(The paper's simplified prediction model at the current state.

Body forces and pressure only, with the neighbour sets frozen. Its state
(2 D N,) is [positions (D N), velocities (D N)], particle-major; its control
(D N,) is the per-particle forces.

Parameters
----------
dt : float, optional
    Its step (s); default the simulation's (a frame of several simulation
    steps may be used).

Returns
-------
SPHPrediction or SPHPrediction3D
    An immutable prediction model, shared freely by threads.)doc");

  pred_cls.def("refreeze",
               [](Pred& self, Fluid& fluid) {
                 py::gil_scoped_release release;
                 ObjectLock busy_fluid(&fluid);
                 self.refreeze(fluid);
               },
               py::arg("fluid"),
               R"doc(Freezes the neighbour sets of `fluid`'s current state in this model.

One model, and one HorizonOptimizer on it, then serve a whole
receding-horizon run. The GIL is released; the fluid is locked while it is
read. The model changes: not while it is in use on another thread.

Parameters
----------
fluid : SPHFluid2D or SPHFluid3D
    A fluid with the same particle and boundary counts.)doc");
}

}  // namespace

void bind_sph(py::module_& m) {
  bind_dim<2>(m, "SPHFluid2D", "SPHPrediction");
  bind_dim<3>(m, "SPHFluid3D", "SPHPrediction3D");
}

}  // namespace directable::py_bind
