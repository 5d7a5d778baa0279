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

template <int D>
class SPHFluid {
 public:
  using Vec = Eigen::Matrix<double, D, 1>;
  using Params = SPHParamsT<D>;
  //! fluid (N, D) and boundary (M, D) positions, row-major.
  SPHFluid(Params params, const double* fluid, Index N, const double* boundary, Index M);

  Index size() const { return N_; }
  Index boundary_size() const { return M_; }
  const Params& params() const { return prm_; }
  //! Moving rigid sphere (kinematic): centre inside the domain, radius > 0.
  void set_sphere(const Vec& centre, double radius, const Vec& velocity);
  void remove_sphere() { sphere_on_ = false; }
  bool has_sphere() const { return sphere_on_; }
  const Vec& sphere_centre() const { return sc_; }

  //! One step with per-particle forces (N x D, row-major; nullptr = none).
  //! Throws domain_error if the state becomes non-finite or explodes.
  void step(const double* force = nullptr);

  Eigen::VectorXd& positions() { return x_; }   //!< DN (x0, y0, [z0,] x1, ...)
  Eigen::VectorXd& velocities() { return v_; }  //!< DN
  const Eigen::VectorXd& positions() const { return x_; }
  const Eigen::VectorXd& velocities() const { return v_; }
  const Eigen::VectorXd& densities() const { return rho_; }
  const Eigen::VectorXd& pressures() const { return p_; }
  const Eigen::VectorXd& boundary() const { return xb_; }
  Index steps_taken() const { return steps_; }

  //! Replaces positions and velocities (DN each, finite).
  void set_state(const Eigen::Ref<const Eigen::VectorXd>& positions, const Eigen::Ref<const Eigen::VectorXd>& velocities);
  //! Current neighbour sets: the pairs within 2h of the current positions
  //! (from the Verlet lists, rebuilt first if due).
  NeighbourLists neighbours();
  //! The same into `nb`, reusing its buffers.
  void neighbours(NeighbourLists& nb);

 private:
  void search();       //!< densities, pressures and W'/d over the lists (rebuilt when needed)
  void build_lists();  //!< grid + candidate lists within 2h + skin
  Params prm_;
  CubicSpline<D> kernel_;
  Index N_, M_;
  Eigen::VectorXd x_, v_, a_, rho_, p_, pr2_, xb_;  // pr2_ = p / rho^2
  NeighbourGrid<D> fluid_grid_, wall_grid_;
  SPHPairTable fluid_pairs_, wall_pairs_;
  std::vector<Index> chunk_;   //!< chunks of particles of the two-phase pair scatter (see fluid.cpp)
  std::vector<Index> cursor_;  //!< neighbours(): fill positions per particle
  Eigen::VectorXd x_built_;  //!< positions at the last list build
  double skin_ = 0.0;
  bool rebuild_ = true;
  TeamChooser team_;
  int nt_ = 1;  //!< threads of the current step
  bool sphere_on_ = false;
  Vec sc_ = Vec::Zero(), sv_ = Vec::Zero();
  double sr_ = 0.0;
  Index steps_ = 0;
};
using SPHFluid2D = SPHFluid<2>;
using SPHFluid3D = SPHFluid<3>;

extern template class SPHFluid<2>;
extern template class SPHFluid<3>;

}  // namespace directable
