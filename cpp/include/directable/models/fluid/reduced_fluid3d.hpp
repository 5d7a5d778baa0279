#pragma once
// Reduced (Galerkin) fluid on a 3D MAC grid (Treuille thesis sec. 3.6-3.7)
// and particles immersed in it as a controllable Model.
//
// The advection stencil is the 3D conservation form (eq. 3.13) with the
// flux velocities interpolated as in eq. 3.14: every flux between two
// neighbouring face control volumes is the interpolated flux velocity times
// the average of the two face values, so the off-diagonal part of A(u) is
// exactly antisymmetric and its diagonal is the control volume's divergence.
// Time stepping is GalerkinFluid's, shared with the 2D model.
#include <Eigen/Core>
#include <memory>
#include <vector>

#include "directable/core/progress.hpp"
#include "directable/models/fluid/galerkin_fluid.hpp"
#include "directable/models/fluid/mac_grid3d.hpp"
#include "directable/models/fluid/shape3d.hpp"
#include "directable/models/model.hpp"

namespace directable {

//! Conservation-form advection out = A(flux) q on a 3D MAC grid (all N).
void advection_apply(const MACGrid3D& g, const Eigen::Ref<const Eigen::VectorXd>& flux,
                     const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::VectorXd> out);

//! Particles advanced stage by stage together by the RK2 kernels (a batch's
//! basis-row loads overlap).
inline constexpr int kParticleBatch = 8;

class ReducedFluid3D : public GalerkinFluid {
 public:
  //! basis: N x r, columns orthonormal, divergence-free, zero on the grid's
  //! closed faces. Precomputes the r advection matrices (parallel).
  ReducedFluid3D(std::shared_ptr<const MACGrid3D> grid, const Eigen::Ref<const RowMatrix>& basis, double viscosity,
                 int threads = 0, const ProgressFn* progress = nullptr);

  const MACGrid3D& grid() const { return *grid_; }
  std::shared_ptr<const MACGrid3D> grid_ptr() const { return grid_; }

  //! Velocity modes Psi(x) (3 x r) at a point (clamped), and optionally
  //! dPsi/dx, dPsi/dy, dPsi/dz (3 x r each, in dPsi[0..2]).
  void modes(const Eigen::Vector3d& x, Eigen::Ref<RowMatrix> Psi, RowMatrix* dPsi = nullptr) const;
  //! Psi(x) z without allocation (x clamped to the domain).
  Eigen::Vector3d velocity(const Eigen::Vector3d& x, const Eigen::Ref<const Eigen::VectorXd>& z) const;
  //! Psi(p_k) z for every row of points (P x 3), written to out (P x 3).
  void velocities(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const RowMatrix>& points,
                  Eigen::Ref<RowMatrix> out) const;
  //! One RK2 (midpoint) step of the particles (P x 3, in place) through the
  //! reduced field over a step from z to z_next (the field at the midpoint
  //! is Psi (z + z_next) / 2) plus a constant drift (3); particles are
  //! clamped to the domain and pushed out of the obstacles along the
  //! surface normal. Parallel over particles; returns how many were pushed.
  //! threads <= 0 with data: the team (all cores or one) is chosen by
  //! measurement over the calls that share data (shared cores stall teams).
  Index advect_particles(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const Eigen::VectorXd>& z_next,
                         Eigen::Ref<RowMatrix> points, double dt, const Eigen::Vector3d& drift,
                         const std::vector<Obstacle3D>& obstacles, int threads = 0,
                         ReducedFluidData* data = nullptr) const;

 private:
  std::shared_ptr<const MACGrid3D> grid_;
};

class SceneAtPoses3D;

//! Particles p_1..p_P in a 3D reduced fluid: state x = [p (3P), z (r)],
//!   p_i' = Psi(p_i) z + d,  z' = Ahat(z) z + nu Dhat z + w,  B = [0; I],
//! with d a constant drift (the leaves' small gravitational force).
class FluidParticles3D final : public Model {
 public:
  FluidParticles3D(std::shared_ptr<const ReducedFluid3D> fluid, Index particles,
                   const Eigen::Vector3d& drift = Eigen::Vector3d::Zero());
  //! Particles in a scene whose objects stay at fixed poses: they move with
  //! u' (eq. 3.9, linear in z, so the Jacobian holds the boundary terms);
  //! step() advances z by the scene's step (feedforward, feedback) and
  //! pushes particles out of the objects.
  FluidParticles3D(std::shared_ptr<const SceneAtPoses3D> scene, Index particles,
                   const Eigen::Vector3d& drift = Eigen::Vector3d::Zero());
  const SceneAtPoses3D* scene() const { return scene_.get(); }

  Index state_dim() const override { return 3 * particles_ + fluid_->r(); }
  Index control_dim() const override { return fluid_->r(); }
  Index particles() const { return particles_; }
  const Eigen::Vector3d& drift() const { return drift_; }
  const ReducedFluid3D& fluid() const { return *fluid_; }
  std::shared_ptr<const ReducedFluid3D> fluid_ptr() const { return fluid_; }
  void dynamics(const Eigen::Ref<const Eigen::VectorXd>& x, double t, Eigen::Ref<Eigen::VectorXd> F) const override;
  //! dp_i'/dp_i = [dPsi/dx z, dPsi/dy z, dPsi/dz z], dp_i'/dz = Psi(p_i),
  //! dz'/dz = Ahat(z) + [Ahat_k z]_k + nu Dhat.
  void jacobian(const Eigen::Ref<const Eigen::VectorXd>& x, double t, Eigen::Ref<RowMatrix> J) const override;
  const Eigen::MatrixXd& control_matrix() const override { return control_; }

  std::unique_ptr<ModelData> create_data() const override;
  //! The reduced fluid step for z, RK2 (midpoint, z averaged over the step)
  //! for the particles, clamped to the domain.
  void step(const Eigen::Ref<const Eigen::VectorXd>& x, double t, double dt, const Eigen::Ref<const Eigen::VectorXd>& w,
            Eigen::Ref<Eigen::VectorXd> x_next, ModelData& data) const override;

 private:
  Eigen::Vector3d particle_velocity(const Eigen::Vector3d& p, const Eigen::Ref<const Eigen::VectorXd>& z) const;

  std::shared_ptr<const ReducedFluid3D> fluid_;
  Index particles_;
  Eigen::Vector3d drift_;
  Eigen::MatrixXd control_;                      //!< B = [0; I], (3P + r) x r
  std::shared_ptr<const SceneAtPoses3D> scene_;  //!< null: no objects
};

}  // namespace directable
