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
      .def_property_readonly("r", &GalerkinFluid::r)
      .def_property_readonly("viscosity", &GalerkinFluid::viscosity)
      .def_property_readonly("orthonormality_error", &GalerkinFluid::orthonormality_error, "max |B'B - I|.")
      .def_property_readonly("divergence_error", &GalerkinFluid::divergence_error,
                             "max |div| h or |closed-face value| over the basis columns.")
      .def("create_data", [](const GalerkinFluid& f) { return std::shared_ptr<ReducedFluidData>(f.create_data()); },
           "Buffers for step() (one per thread; reusing one keeps exp(dt nu D) from being recomputed).")
      .def_property_readonly("basis", [](const GalerkinFluid& f) { return f.basis(); }, "(N, r)")
      .def("advection_matrix", [](const GalerkinFluid& f, const Array& z) {
        Eigen::MatrixXd A(f.r(), f.r());
        f.advection_matrix(vector(z, "z", f.r(), true), A);
        return A;
      }, py::arg("z"), "A(z) = sum_k z_k B' A(b_k) B, (r, r) for z (r,).")
      .def("advection_tensor", [](const GalerkinFluid& f) {
        py::array_t<double> out({f.r(), f.r(), f.r()});
        auto a = out.mutable_unchecked<3>();
        for (Index k = 0; k < f.r(); ++k)
          for (Index i = 0; i < f.r(); ++i)
            for (Index j = 0; j < f.r(); ++j) a(k, i, j) = f.advection_tensor(k)(i, j);
        return out;
      }, "(r, r, r): [k] = B' A(b_k) B.")
      .def("diffusion_matrix", [](const GalerkinFluid& f) { return f.diffusion_matrix(); }, "D = B' Lap B, (r, r).")
      .def("dynamics", [](const GalerkinFluid& f, const Array& z) {
        Eigen::VectorXd F(f.r());
        f.dynamics(vector(z, "z", f.r(), true), F);
        return F;
      }, py::arg("z"), "A(z) z + nu D z, (r,) for z (r,).")
      .def("jacobian", [](const GalerkinFluid& f, const Array& z) {
        RowMatrix J = RowMatrix::Zero(f.r(), f.r());
        f.add_jacobian(vector(z, "z", f.r(), true), J);
        return J;
      }, py::arg("z"), "d(A(z) z + nu D z)/dz, (r, r).")
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
      }, py::arg("z0"), py::arg("w"), py::arg("dt"), "States (T+1, r) from z0 (r,) under controls w (T, r).");
}

}  // namespace directable::py_bind
