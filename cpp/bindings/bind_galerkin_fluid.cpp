#include "galerkin_fluid.hpp"

namespace directable::py_bind {

void warn_basis_quality(const GalerkinFluid& f, double divergence_tol, const char* project) {
  if (f.divergence_error() > divergence_tol)
    PyErr_WarnEx(PyExc_RuntimeWarning,
                 ("basis is not divergence-free and free-slip: max |div| h (or closed-face value) = " +
                  std::to_string(f.divergence_error()) + " > " + std::to_string(divergence_tol) + "; project its columns (" +
                  project + ") first")
                     .c_str(),
                 1);
  if (f.orthonormality_error() > 1e-8)
    PyErr_WarnEx(PyExc_RuntimeWarning,
                 ("basis columns are not orthonormal: max |B'B - I| = " + std::to_string(f.orthonormality_error()) +
                  "; energy is then not preserved")
                     .c_str(),
                 1);
}

void bind_galerkin_fluid(py::module_& m) {
  py::class_<ReducedFluidData, std::shared_ptr<ReducedFluidData>>(m, "ReducedFluidData", R"doc(
Buffers of ReducedFluid.step (ReducedFluid.create_data()): one per thread;
the ReducedFluid itself is read-only and may be shared by threads.)doc");

  py::class_<GalerkinFluid, std::shared_ptr<GalerkinFluid>>(m, "GalerkinFluid", R"doc(
The grid-independent reduced fluid z' = A(z) z + nu D z + w (Treuille thesis
eq. 3.7-3.8): the base of the 2D and 3D ReducedFluid.)doc")
      .def_property_readonly("r", &GalerkinFluid::r, "Basis size r (reduced coordinates).")
      .def_property_readonly("viscosity", &GalerkinFluid::viscosity, "Kinematic viscosity nu (m^2/s).")
      .def_property_readonly("orthonormality_error", &GalerkinFluid::orthonormality_error, "max |B'B - I|.")
      .def_property_readonly("divergence_error", &GalerkinFluid::divergence_error,
                             "max |div| h or |closed-face value| over the basis columns.")
      .def("create_data", [](const GalerkinFluid& f) { return std::shared_ptr<ReducedFluidData>(f.create_data()); },
           R"doc(Buffers for step(), one per thread.

Reusing one keeps exp(dt nu D) from being recomputed.

Returns
-------
ReducedFluidData
    The buffers.)doc")
      .def_property_readonly("basis", [](const GalerkinFluid& f) { return f.basis(); }, "(N, r) array: the basis B.")
      .def("advection_matrix", [](const GalerkinFluid& f, const Array& z) {
        Eigen::MatrixXd A(f.r(), f.r());
        f.advection_matrix(vector(z, "z", f.r(), true), A);
        return A;
      }, py::arg("z"), R"doc(The reduced advection matrix A(z) = sum_k z_k B' A(b_k) B.

Parameters
----------
z : (r,) array
    Reduced velocity.

Returns
-------
(r, r) array
    A(z), antisymmetric (1/s).)doc")
      .def("advection_tensor", [](const GalerkinFluid& f) {
        py::array_t<double> out({f.r(), f.r(), f.r()});
        auto a = out.mutable_unchecked<3>();
        for (Index k = 0; k < f.r(); ++k)
          for (Index i = 0; i < f.r(); ++i)
            for (Index j = 0; j < f.r(); ++j) a(k, i, j) = f.advection_tensor(k)(i, j);
        return out;
      }, R"doc(The reduced advection tensor.

Returns
-------
(r, r, r) array
    Entry [k] = B' A(b_k) B (1/m), each antisymmetric.)doc")
      .def("diffusion_matrix", [](const GalerkinFluid& f) { return f.diffusion_matrix(); }, R"doc(The reduced Laplacian.

Returns
-------
(r, r) array
    D = B' Lap B (1/m^2), symmetric negative semi-definite.)doc")
      .def("dynamics", [](const GalerkinFluid& f, const Array& z) {
        Eigen::VectorXd F(f.r());
        f.dynamics(vector(z, "z", f.r(), true), F);
        return F;
      }, py::arg("z"), R"doc(The reduced dynamics without forcing.

Parameters
----------
z : (r,) array
    Reduced velocity.

Returns
-------
(r,) array
    A(z) z + nu D z (reduced acceleration).)doc")
      .def("jacobian", [](const GalerkinFluid& f, const Array& z) {
        RowMatrix J = RowMatrix::Zero(f.r(), f.r());
        f.add_jacobian(vector(z, "z", f.r(), true), J);
        return J;
      }, py::arg("z"), R"doc(Jacobian of the reduced dynamics.

Parameters
----------
z : (r,) array
    Reduced velocity.

Returns
-------
(r, r) array
    d(A(z) z + nu D z)/dz (1/s).)doc")
      .def("step", [](const GalerkinFluid& f, const Array& z, const Array& w, double dt,
                      std::shared_ptr<ReducedFluidData> data) {
        auto zv = vector(z, "z");
        auto wv = vector(w, "w");
        Eigen::VectorXd out(f.r());
        py::gil_scoped_release release;
        if (!data) data = f.create_data();
        f.step(zv, wv, dt, out, *data);
        return out;
      }, py::arg("z"), py::arg("w"), py::arg("dt"), py::arg("data") = py::none(),
         R"doc(One reduced step: z + dt w, then exp(dt A) (exact, orthogonal), then exp(dt nu D).

GIL released.

Parameters
----------
z : (r,) array
    Reduced velocity.
w : (r,) array
    Reduced force (acceleration).
dt : float
    Step (s), > 0.
data : ReducedFluidData, optional
    Buffers from create_data(), owned by the calling thread (None: fresh ones for this call).

Returns
-------
(r,) array
    The next z.)doc")
      .def("rollout", [](const GalerkinFluid& f, const Array& z0, const Array& w, double dt) {
        auto zz = vector(z0, "z0");
        auto W = rows_view(w, "w", f.r(), -1, false, "T");
        Progress prog{py::none()};  // Ctrl-C between steps
        return prog.run_checked([&] { return f.rollout(zz, W, dt); });
      }, py::arg("z0"), py::arg("w"), py::arg("dt"), R"doc(T steps from z0 under the controls w.

Parameters
----------
z0 : (r,) array
    Initial reduced velocity.
w : (T, r) array
    Reduced force per step.
dt : float
    Step (s), > 0.

Returns
-------
(T+1, r) array
    The states, z0 first.)doc")
      .def("fit_viscosity", [](const GalerkinFluid& f, const Array& z0, const Array& energy, double dt, const Array& w,
                               double lo, double hi) {
        auto zz = vector(z0, "z0");
        auto E = vector(energy, "energy");
        auto W = rows_view(w, "w", f.r(), -1, false, "T");
        Progress prog{py::none()};  // Ctrl-C between rollouts
        const ViscosityFit fit = prog.run_checked([&] { return f.fit_viscosity(zz, W, E, dt, lo, hi); });
        return py::make_tuple(fit.nu, fit.residual);
      }, py::arg("z0"), py::arg("energy"), py::arg("dt"), py::arg("w"), py::arg("lo") = 1e-6, py::arg("hi") = 1.0,
      R"doc(The viscosity whose reduced energy decay matches a run's.

The full solver loses energy to its advection scheme's numerical
dissipation; this model's advection keeps it exactly, so only nu can
account for it. Minimises the mean squared difference of
log(E_red(t) / E_red(0)) and log(E(t) / E(0)) over nu in [lo, hi] (a
log-spaced scan, then golden section in log nu), each trial a reduced
rollout from z0 under w with that nu (the model's own viscosity is not used).

Parameters
----------
z0 : (r,) array
    The run's start projected on the basis.
energy : (T+1,) array
    The run's kinetic energy per step (any common scale), > 0.
dt : float
    Step (s), > 0.
w : (T, r) array
    The run's forces projected on the basis (zeros for an unforced run).
lo, hi : float
    Bounds of nu (m^2/s), 0 < lo < hi.

Returns
-------
nu : float
    The fitted viscosity (m^2/s).
residual : float
    RMS of the log-energy difference at nu (0: a perfect match).)doc");
}

}  // namespace directable::py_bind
