#pragma once
// The reduced-fluid base class (GalerkinFluid) shared by the 2D and 3D
// bindings: its Python class, and the basis-quality warnings of both
// constructors.
#include "common.hpp"
#include "directable/models/fluid/galerkin_fluid.hpp"

namespace directable::py_bind {

//! RuntimeWarnings for a basis that is not divergence-free (above
//! divergence_tol; `project` names the grid method that fixes it) or whose
//! columns are not orthonormal.
void warn_basis_quality(const GalerkinFluid& f, double divergence_tol, const char* project);

}  // namespace directable::py_bind
