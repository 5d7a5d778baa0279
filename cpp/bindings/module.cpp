#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace directable::py_bind {
void bind_core(py::module_& m);
void bind_control(py::module_& m);
void bind_models(py::module_& m);
void bind_sim(py::module_& m);
void bind_chain(py::module_& m);
void bind_galerkin_fluid(py::module_& m);
void bind_fluid(py::module_& m);
void bind_fluid3d(py::module_& m);
void bind_particle_pd(py::module_& m);
void bind_fem(py::module_& m);
void bind_mpc(py::module_& m);
void bind_sph(py::module_& m);
void bind_sph_plants(py::module_& m);
void bind_crowds(py::module_& m);
void bind_cloth(py::module_& m);
void bind_characters(py::module_& m);
void bind_mujoco(py::module_& m);
void bind_pickle(py::module_& m);      // after the classes: repr and pickling of every one
void finish_functions(py::module_& m);  // last: tidy signatures (help(), the stub), self never None
}  // namespace directable::py_bind

PYBIND11_MODULE(_core, m) {
  m.doc() = "directable C++ core: discretization, Riccati sweep, tracking, models, controlled simulation, articulated chains and PD/SPD servos, StVK FEM and reduced StVK, reduced fluids, MPC horizon optimizer, SPH fluid, continuum crowds, mass-spring cloth and its goal-directed control, clip-blending characters with value functions learned by linear programming";
  directable::py_bind::bind_core(m);
  directable::py_bind::bind_control(m);
  directable::py_bind::bind_models(m);
  directable::py_bind::bind_sim(m);
  directable::py_bind::bind_chain(m);
  directable::py_bind::bind_galerkin_fluid(m);
  directable::py_bind::bind_fluid(m);
  directable::py_bind::bind_fluid3d(m);
  directable::py_bind::bind_particle_pd(m);
  directable::py_bind::bind_fem(m);
  directable::py_bind::bind_mpc(m);
  directable::py_bind::bind_sph(m);
  directable::py_bind::bind_sph_plants(m);
  directable::py_bind::bind_crowds(m);
  directable::py_bind::bind_cloth(m);
  directable::py_bind::bind_characters(m);
  directable::py_bind::bind_mujoco(m);
  directable::py_bind::bind_pickle(m);
  directable::py_bind::finish_functions(m);
}
