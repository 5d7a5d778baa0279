#pragma once
// Reduced (Galerkin) fluid of Treuille's thesis ch. 3 on a MAC grid, and
// the fluid with immersed particles as a controllable Model (Barbic &
// Popovic 2008, appendix C).
//
//   z' = Ahat(z) z + nu Dhat z + w,   Ahat(z) = sum_k z_k Ahat_k,
//   Ahat_k = B' A(b_k) B  (eq. 3.7),  Dhat = B' D B,
// with A(u) the conservation-form advection stencil (eq. 3.4, 3.13-3.14):
// every flux between two neighbouring face control volumes is the
// interpolated flux velocity times the average of the two face values, so
// the off-diagonal part of A(u) is exactly antisymmetric and the diagonal is
// the control volume's divergence (zero for a divergence-free u).
#include <Eigen/Core>
#include <memory>
#include <vector>

#include "directable/models/fluid/galerkin_fluid.hpp"
#include "directable/models/fluid/mac_grid.hpp"
#include "directable/models/model.hpp"
#include "directable/core/progress.hpp"

namespace directable {

//! Conservation-form advection out = A(flux) q on a MAC grid (both N).
void advection_apply(const MACGrid2D& g, const Eigen::Ref<const Eigen::VectorXd>& flux,
                     const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::VectorXd> out);

class ReducedFluid : public GalerkinFluid {
 public:
  //! basis: N x r, columns orthonormal (plain dot product), divergence-free,
  //! zero on wall faces. Precomputes the r advection matrices (parallel).
  ReducedFluid(std::shared_ptr<const MACGrid2D> grid, const Eigen::Ref<const RowMatrix>& basis, double viscosity,
               int threads = 0, const ProgressFn* progress = nullptr);

  const MACGrid2D& grid() const { return *grid_; }
  std::shared_ptr<const MACGrid2D> grid_ptr() const { return grid_; }
  //! Velocity modes Psi(x) (2 x r) and optionally dPsi/dx, dPsi/dy (2 x r).
  void modes(double x, double y, Eigen::Ref<RowMatrix> Psi, RowMatrix* dPsi_dx = nullptr,
             RowMatrix* dPsi_dy = nullptr) const;
  //! Psi(x) z without allocation.
  Eigen::Vector2d velocity(double x, double y, const Eigen::Ref<const Eigen::VectorXd>& z) const;
  //! Psi(p_k) z for every row p_k of points (P x 2), written to out (P x 2).
  void velocities(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const RowMatrix>& points,
                  Eigen::Ref<RowMatrix> out) const;

 private:
  std::shared_ptr<const MACGrid2D> grid_;
};

class SceneAtPoses;

//! Particles p_1..p_P immersed in a reduced fluid: state x = [p (2P), z (r)],
//!   p_i' = Psi(p_i) z,  z' = Ahat(z) z + nu Dhat z + w,  B = [0; I].
class FluidParticles final : public Model {
 public:
  FluidParticles(std::shared_ptr<const ReducedFluid> fluid, Index particles);
  //! Particles in a scene whose objects stay at fixed poses: they move with
  //! u' = Psi(p) z + the boundary fields [F z; v] (linear in z, in the
  //! Jacobian too); step() advances z by the scene's step (feedback
  //! included) and pushes particles out of the objects.
  FluidParticles(std::shared_ptr<const SceneAtPoses> scene, Index particles);
  const SceneAtPoses* scene() const { return scene_.get(); }

  Index state_dim() const override { return 2 * particles_ + fluid_->r(); }
  Index control_dim() const override { return fluid_->r(); }
  Index particles() const { return particles_; }
  const ReducedFluid& fluid() const { return *fluid_; }
  std::shared_ptr<const ReducedFluid> fluid_ptr() const { return fluid_; }
  void dynamics(const Eigen::Ref<const Eigen::VectorXd>& x, double t, Eigen::Ref<Eigen::VectorXd> F) const override;
  //! Appendix C: dp_i'/dp_i = [dPsi/dx z, dPsi/dy z], dp_i'/dz = Psi(p_i),
  //! dz'/dz = Ahat(z) + [Ahat_k z]_k + nu Dhat.
  void jacobian(const Eigen::Ref<const Eigen::VectorXd>& x, double t, Eigen::Ref<RowMatrix> J) const override;
  const Eigen::MatrixXd& control_matrix() const override { return control_; }

  std::unique_ptr<ModelData> create_data() const override;
  //! The reduced fluid step for z, RK2 (midpoint, z averaged over the step)
  //! for the particles, which are clamped to the domain.
  void step(const Eigen::Ref<const Eigen::VectorXd>& x, double t, double dt, const Eigen::Ref<const Eigen::VectorXd>& w,
            Eigen::Ref<Eigen::VectorXd> x_next, ModelData& data) const override;

 private:
  Eigen::Vector2d particle_velocity(double x, double y, const Eigen::Ref<const Eigen::VectorXd>& z) const;

  std::shared_ptr<const ReducedFluid> fluid_;
  std::shared_ptr<const SceneAtPoses> scene_;  //!< null: no objects
  Index particles_;
  Eigen::MatrixXd control_;  //!< B = [0; I], (2P + r) x r
};

}  // namespace directable
