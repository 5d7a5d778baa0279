#pragma once
// Weakly compressible SPH in 2D and 3D (the MPC/SPH paper's fluid): cubic
// spline kernel (support 2h), Tait equation of state, Monaghan artificial
// viscosity, uniform-grid neighbour search, boundary particles for walls
// (mirrored pressure), gravity, a moving rigid sphere (kinematic), and a
// per-particle external force as the control. Symplectic Euler; every
// loop is parallel (symmetric pairs evaluated once and added to both
// particles in two phases of disjoint chunks: no atomics, the same results
// for any thread count).
//
// One implementation for both dimensions: the class template below is only
// declared here; its bodies live in src/models/sph/fluid.cpp, explicitly
// instantiated for D = 2 and D = 3 (nothing heavy for includers to compile).
#include <Eigen/Core>
#include <vector>

#include "directable/core/parallel.hpp"
#include "directable/core/progress.hpp"
#include "directable/core/types.hpp"
#include "directable/models/sph/kernel.hpp"
#include "directable/models/sph/neighbour_grid.hpp"
#include "directable/models/sph/parameters.hpp"

namespace directable {

//! Neighbour table of the simulator (a Verlet list: candidates within 2h +
//! skin, rebuilt once some particle has moved skin/2 since the last build):
//! fixed stride per particle (grown when a particle has more candidates),
//! neighbour index, and W'(d)/d of the current step (0 beyond 2h). Fluid
//! pairs are listed once, by their first particle (j > i); walls per particle.
struct SPHPairTable {
  Index stride = 0;
  std::vector<int> count, index;
  std::vector<double> a;  //!< W'(d)/d per pair (walls); fluid: of the pairs within 2h (near)
  std::vector<int> near_count, near;  //!< fluid: the candidates within 2h this step, compacted
};

//! The simulator is its own per-run state: particles, neighbour tables and
//! scratch all belong to one run, driven by one thread at a time (the
//! parallel loops inside a step are its own). Const methods only read.
template <int D>
class SPHFluid {
 public:
  using Vec = Eigen::Matrix<double, D, 1>;
  using Params = SPHParamsT<D>;
  //! fluid (N, D) and boundary (M, D) positions, flattened row-major (DN and
  //! DM values: x0, y0, [z0,] x1, ...); N >= 1, all inside the domain box.
  SPHFluid(Params params, const CRefVec& fluid, const CRefVec& boundary);

  Index size() const { return fluid_count_; }
  Index boundary_size() const { return boundary_count_; }
  const Params& params() const { return params_; }
  //! Moving rigid sphere (kinematic): centre inside the domain, radius > 0.
  void set_sphere(const Vec& centre, double radius, const Vec& velocity);
  void remove_sphere() { has_sphere_ = false; }
  bool has_sphere() const { return has_sphere_; }
  const Vec& sphere_centre() const { return sphere_centre_; }

  //! `steps` >= 1 steps with the per-particle forces `force` held (DN,
  //! finite; empty: none). Progress reports (steps done, steps) throttled;
  //! throws Cancelled when it asks to stop (the steps taken stay taken), and
  //! domain_error naming the step if the state becomes non-finite or explodes.
  void advance(Index steps, const CRefVec& force, const ProgressFn* progress = nullptr);
  //! One step without forces.
  void step();

  const Eigen::VectorXd& positions() const { return positions_; }    //!< DN (x0, y0, [z0,] x1, ...)
  const Eigen::VectorXd& velocities() const { return velocities_; }  //!< DN
  const Eigen::VectorXd& densities() const { return densities_; }    //!< N
  const Eigen::VectorXd& pressures() const { return pressures_; }    //!< N
  const Eigen::VectorXd& boundary() const { return boundary_; }      //!< DM
  Index steps_taken() const { return steps_taken_; }

  //! Replaces positions and velocities (DN each, finite).
  void set_state(const CRefVec& positions, const CRefVec& velocities);
  //! Current neighbour sets: the pairs within 2h of the current positions
  //! (from the Verlet lists, rebuilt first if due).
  NeighbourLists neighbours();
  //! The same into `nb`, reusing its buffers.
  void neighbours(NeighbourLists& nb);

 private:
  void step_with(const double* force);  //!< one step; force DN or nullptr (validated by the caller)
  void search();       //!< densities, pressures and W'/d over the lists (rebuilt when needed)
  void build_lists();  //!< grid + candidate lists within 2h + skin
  //! Pressure, viscosity, wall, gravity and control accelerations into accelerations_.
  void accelerate(const double* force);
  //! Symplectic Euler from accelerations_, then the sphere and the domain box.
  void integrate();
  Params params_;
  CubicSpline<D> kernel_;
  Index fluid_count_, boundary_count_;  //!< N, M
  Eigen::VectorXd positions_, velocities_, accelerations_;  //!< DN each
  Eigen::VectorXd densities_, pressures_, pressure_by_rho2_;  //!< N each (p / rho^2)
  Eigen::VectorXd boundary_;                                //!< DM
  NeighbourGrid<D> fluid_grid_, wall_grid_;
  SPHPairTable fluid_pairs_, wall_pairs_;
  std::vector<Index> chunk_;        //!< chunks of particles of the two-phase pair scatter (see fluid.cpp)
  std::vector<Index> fill_cursor_;  //!< neighbours(): fill positions per particle (N)
  Eigen::VectorXd positions_at_build_;  //!< DN, positions at the last list build
  double skin_ = 0.0;
  bool lists_stale_ = true;
  TeamChooser team_;
  int threads_ = 1;  //!< threads of the current step
  bool has_sphere_ = false;
  Vec sphere_centre_ = Vec::Zero(), sphere_velocity_ = Vec::Zero();
  double sphere_radius_ = 0.0;
  Index steps_taken_ = 0;
};
using SPHFluid2D = SPHFluid<2>;
using SPHFluid3D = SPHFluid<3>;

extern template class SPHFluid<2>;
extern template class SPHFluid<3>;

}  // namespace directable
