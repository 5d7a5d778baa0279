#pragma once
// Full 3D MAC fluid with moving rigid obstacles: the offline reference
// simulator and snapshot source of the 3D reduced fluid.
//
// One step: force (plus buoyancy of the smoke), semi-Lagrangian advection,
// implicit viscosity (CG on I - nu dt D), obstacles (cells whose centres lie
// inside one are solid for this step, every face touching them takes the
// rigid normal velocity at its centre: Bridson, ch. 5), projection over the
// fluid cells (MIC(0)-PCG, the boundary fluxes in the right-hand side), then
// smoke and particles advected through the new field plus the uniform
// updraft; smoke inside solids is zero, particles inside are pushed out
// along the surface normal. The field left after a step (the snapshot) has
// the rigid velocity on every face inside a solid, so it is divergence-free
// everywhere.
#include <Eigen/Core>
#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCore>
#include <memory>
#include <vector>

#include "directable/models/fluid/mac_grid3d.hpp"
#include "directable/models/fluid/shape3d.hpp"

namespace directable {

class FluidSim3D {
 public:
  //! updraft: uniform velocity (3) added to the advection of smoke and
  //! particles (the thesis' "uniform updraft"); buoyancy: acceleration (3)
  //! per unit smoke density added to the velocity each step. tol: relative
  //! residual of the pressure PCG.
  FluidSim3D(std::shared_ptr<const MACGrid3D> grid, double viscosity, double dt,
             const Eigen::Vector3d& updraft = Eigen::Vector3d::Zero(),
             const Eigen::Vector3d& buoyancy = Eigen::Vector3d::Zero(), double tol = 1e-8);

  const MACGrid3D& grid() const { return *grid_; }
  std::shared_ptr<const MACGrid3D> grid_ptr() const { return grid_; }
  double viscosity() const { return viscosity_; }
  double dt() const { return dt_; }
  double tol() const { return tol_; }
  const Eigen::Vector3d& updraft() const { return updraft_; }
  const Eigen::Vector3d& buoyancy() const { return buoyancy_; }
  const Eigen::VectorXd& velocity() const { return velocity_; }
  const Eigen::VectorXd& density() const { return density_; }
  const RowMatrix& particles() const { return particles_; }
  //! Cells solid in the last step (fixed mask and obstacles), n_cells.
  const CellMask& solid() const { return solid_; }
  //! Iterations and relative residual of the last pressure solve.
  Index pressure_iterations() const { return pressure_.iterations; }
  double pressure_residual() const { return pressure_.residual; }
  //! Particles pushed out of obstacles in the last step.
  Index pushed_particles() const { return pushed_; }

  void set_velocity(const Eigen::Ref<const Eigen::VectorXd>& u);
  void set_density(const Eigen::Ref<const Eigen::VectorXd>& rho);
  void set_particles(const Eigen::Ref<const RowMatrix>& p);
  //! One step under the acceleration field f (N; empty = none) with the
  //! obstacles at their poses for this step. Checks f and that every
  //! obstacle lies inside the domain; throws domain_error when the velocity
  //! becomes non-finite. progress is polled during advection and every
  //! PCG iteration; returning false (Ctrl-C) throws Cancelled and leaves the
  //! state of a partial step.
  void step(const Eigen::Ref<const Eigen::VectorXd>& f, const std::vector<Obstacle3D>& obstacles,
            const ProgressFn* progress = nullptr);

  //! Marks the cells whose centres lie inside any obstacle (in addition to
  //! `solid`, n_cells) and writes the owning obstacle per cell (-1 none).
  static void mark_obstacles(const MACGrid3D& g, const std::vector<Obstacle3D>& obstacles, CellMask& solid,
                             std::vector<int>& owner);
  //! Sets every face touching an obstacle cell to the rigid normal velocity
  //! of that obstacle at the face centre.
  static void apply_obstacle_velocities(const MACGrid3D& g, const std::vector<Obstacle3D>& obstacles,
                                        const std::vector<int>& owner, Eigen::Ref<Eigen::VectorXd> u);
  //! Checks that every obstacle's world bounds lie inside the domain.
  static void check_inside_domain(const MACGrid3D& g, const std::vector<Obstacle3D>& obstacles);

 private:
  std::shared_ptr<const MACGrid3D> grid_;
  double viscosity_, dt_, tol_;
  Eigen::Vector3d updraft_, buoyancy_;
  Eigen::SparseMatrix<double, Eigen::RowMajor> diffusion_;  //!< I - nu dt D, N x N
  Eigen::ConjugateGradient<Eigen::SparseMatrix<double, Eigen::RowMajor>, Eigen::Lower | Eigen::Upper> diffusion_cg_;
  Eigen::VectorXd velocity_, density_;           //!< N, n_cells
  Eigen::VectorXd advected_, advected_density_;  //!< N, n_cells: step buffers
  RowMatrix particles_;                          //!< P x 3
  CellMask solid_;                               //!< n_cells, solid this step
  std::vector<int> owner_;                       //!< n_cells, obstacle owning a cell (-1 none)
  PressureWorkspace3D pressure_;
  Index pushed_ = 0;
};

}  // namespace directable
