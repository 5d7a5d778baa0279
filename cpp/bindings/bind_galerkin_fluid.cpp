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
      .def_property_readonly("r", &GalerkinFluid::r, "Number r of basis fields (the reduced state's size).")
      .def_property_readonly("viscosity", &GalerkinFluid::viscosity, "Kinematic viscosity nu (m^2/s).")
      .def_property_readonly("orthonormality_error", &GalerkinFluid::orthonormality_error, "max |B'B - I|.")
      .def_property_readonly("divergence_error", &GalerkinFluid::divergence_error,
                             "max |div| h or |closed-face value| over the basis columns.")
      .def("create_data", [](const GalerkinFluid& f) { return std::shared_ptr<ReducedFluidData>(f.create_data()); },
           R"doc(Buffers for step() and the particle kernels, owned by one thread at a time.

Returns
-------
ReducedFluidData
    Sized for this model; reusing one keeps exp(dt nu D) from being
    recomputed and the particle kernels from allocating.)doc")
      .def_property_readonly("basis", [](const GalerkinFluid& f) { return f.basis(); }, "(N, r)")
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
    A(z) (1/s), antisymmetric.)doc")
      .def("advection_tensor", [](const GalerkinFluid& f) {
        py::array_t<double> out({f.r(), f.r(), f.r()});
        auto a = out.mutable_unchecked<3>();
        for (Index k = 0; k < f.r(); ++k)
          for (Index i = 0; i < f.r(); ++i)
            for (Index j = 0; j < f.r(); ++j) a(k, i, j) = f.advection_tensor(k)(i, j);
        return out;
      }, R"doc(The advection tensor, one antisymmetric matrix per basis field.

Returns
-------
(r, r, r) array
    [k] = B' A(b_k) B (1/m), a copy.)doc")
      .def("diffusion_matrix", [](const GalerkinFluid& f) { return f.diffusion_matrix(); }, R"doc(The reduced diffusion matrix D = B' Lap B.

Returns
-------
(r, r) array
    Symmetric, negative semi-definite (1/m^2).)doc")
      .def("dynamics", [](const GalerkinFluid& f, const Array& z) {
        Eigen::VectorXd F(f.r());
        f.dynamics(vector(z, "z", f.r(), true), F);
        return F;
      }, py::arg("z"), R"doc(The reduced dynamics without force, F(z) = A(z) z + nu D z.

Parameters
----------
z : (r,) array
    Reduced velocity.

Returns
-------
(r,) array
    dz/dt (1/s times the units of z).)doc")
      .def("jacobian", [](const GalerkinFluid& f, const Array& z) {
        RowMatrix J = RowMatrix::Zero(f.r(), f.r());
        f.add_jacobian(vector(z, "z", f.r(), true), J);
        return J;
      }, py::arg("z"), R"doc(Jacobian of the reduced dynamics, d(A(z) z + nu D z)/dz.

Parameters
----------
z : (r,) array
    Reduced velocity.

Returns
-------
(r, r) array
    A(z) + [A_k z]_k + nu D (1/s).)doc")
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
         R"doc(Next z (r,): z + dt w, then exp(dt A) (exact, orthogonal), then exp(dt nu D).

data: buffers from create_data(), owned by the calling thread (None: fresh
ones for this call). GIL released.)doc")
      .def("rollout", [](const GalerkinFluid& f, const Array& z0, const Array& w, double dt) {
        auto zz = vector(z0, "z0");
        auto W = rows_view(w, "w", f.r(), -1, false, "T");
        Progress prog{py::none()};  // Ctrl-C between steps
        return prog.run_checked([&] { return f.rollout(zz, W, dt); });
      }, py::arg("z0"), py::arg("w"), py::arg("dt"), R"doc(T reduced steps from z0 under the forces w (Ctrl-C stops between steps).

Parameters
----------
z0 : (r,) array
    Initial reduced velocity.
w : (T, r) array
    Reduced force (acceleration) of each step.
dt : float
    Step length (s), > 0.

Returns
-------
(T+1, r) array
    The states, z0 first.)doc");
}

}  // namespace directable::py_bind
