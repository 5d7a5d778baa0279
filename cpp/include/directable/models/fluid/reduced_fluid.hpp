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

#include "directable/linalg/expm.hpp"
#include "directable/models/fluid/mac_grid.hpp"
#include "directable/models/model.hpp"
#include "directable/core/progress.hpp"

namespace directable {

//! Conservation-form advection out = A(flux) q on a MAC grid (both N).
void advection_apply(const MACGrid2D& g, const Eigen::Ref<const Eigen::VectorXd>& flux,
                     const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::VectorXd> out);

//! Buffers of the reduced step, one per run or per thread (the model itself
//! stays const and may be shared).
struct ReducedFluidData {
  explicit ReducedFluidData(Index r)
      : expm(r, 0), z_forced(r), z_advected(r), advection(r, r), no_border(r, 0), diffusion_exp(r, r) {}
  BorderedExpm expm;
  Eigen::VectorXd z_forced, z_advected;  //!< r each: after the force, after advection
  Eigen::MatrixXd advection;             //!< r x r, dt Ahat(z_forced)
  Eigen::MatrixXd no_border;             //!< r x 0, the empty border of the exponential
  Eigen::MatrixXd diffusion_exp;         //!< r x r, exp(dt nu Dhat) for diffusion_dt
  double diffusion_dt = -1.0;            //!< dt of diffusion_exp (< 0: not computed yet)
};

class ReducedFluid {
 public:
  //! basis: N x r, columns orthonormal (plain dot product), divergence-free,
  //! zero on wall faces. Precomputes the r advection matrices (parallel).
  ReducedFluid(std::shared_ptr<const MACGrid2D> grid, const Eigen::Ref<const RowMatrix>& basis, double viscosity,
               int threads = 0, const ProgressFn* progress = nullptr);

  const MACGrid2D& grid() const { return *grid_; }
  std::shared_ptr<const MACGrid2D> grid_ptr() const { return grid_; }
  Index r() const { return r_; }
  double viscosity() const { return viscosity_; }
  const RowMatrix& basis() const { return basis_; }
  const Eigen::MatrixXd& advection_tensor(Index k) const { return advection_[k]; }  //!< Ahat_k, r x r
  const Eigen::MatrixXd& diffusion_matrix() const { return diffusion_; }           //!< Dhat, r x r
  //! max |B'B - I| (0 for the orthonormal basis the energy guarantee needs).
  double orthonormality_error() const { return orthonormality_error_; }
  //! max |div| h or |wall-face value| over the basis columns (0 for a
  //! divergence-free, free-slip basis).
  double divergence_error() const { return divergence_error_; }

  //! Ahat(z) = sum_k z_k Ahat_k.
  void advection_matrix(const Eigen::Ref<const Eigen::VectorXd>& z, Eigen::Ref<Eigen::MatrixXd> A) const;
  //! F(z) = Ahat(z) z + nu Dhat z.
  void dynamics(const Eigen::Ref<const Eigen::VectorXd>& z, Eigen::Ref<Eigen::VectorXd> F) const;
  //! dF/dz = Ahat(z) + [Ahat_0 z ... Ahat_{r-1} z] + nu Dhat, added into J (r x r).
  void add_jacobian(const Eigen::Ref<const Eigen::VectorXd>& z, Eigen::Ref<RowMatrix> J) const;

  std::unique_ptr<ReducedFluidData> create_data() const { return std::make_unique<ReducedFluidData>(r_); }
  //! z_next: force (zt = z + dt w), advection by exp(dt Ahat(zt)) (exact,
  //! orthogonal), diffusion by exp(dt nu Dhat). Checks z, w (r each, finite)
  //! and dt > 0.
  void step(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const Eigen::VectorXd>& w, double dt,
            Eigen::Ref<Eigen::VectorXd> z_next, ReducedFluidData& data) const;
  //! The same step without the checks, for loops that validated their inputs once.
  void advance(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const Eigen::VectorXd>& w, double dt,
               Eigen::Ref<Eigen::VectorXd> z_next, ReducedFluidData& data) const;
  //! States (T+1) x r from z0 under controls W (T x r), one step each.
  RowMatrix rollout(const Eigen::Ref<const Eigen::VectorXd>& z0, const Eigen::Ref<const RowMatrix>& W, double dt) const;

  //! Velocity modes Psi(x) (2 x r) and optionally dPsi/dx, dPsi/dy (2 x r).
  void modes(double x, double y, Eigen::Ref<RowMatrix> Psi, RowMatrix* dPsi_dx = nullptr,
             RowMatrix* dPsi_dy = nullptr) const;
  //! Psi(x) z without allocation.
  Eigen::Vector2d velocity(double x, double y, const Eigen::Ref<const Eigen::VectorXd>& z) const;
  //! Psi(p_k) z for every row p_k of points (P x 2), written to out (P x 2).
  void velocities(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const RowMatrix>& points,
                  Eigen::Ref<RowMatrix> out) const;

 private:
  void check_reduced(const char* name, const Eigen::Ref<const Eigen::VectorXd>& v) const;

  std::shared_ptr<const MACGrid2D> grid_;
  Index r_;
  double viscosity_;
  RowMatrix basis_;                          //!< B, N x r
  std::vector<Eigen::MatrixXd> advection_;   //!< Ahat_k = B' A(b_k) B, r matrices r x r
  Eigen::MatrixXd diffusion_;                //!< Dhat = B' D B, r x r, symmetric
  Eigen::MatrixXd diffusion_eigenvectors_;   //!< r x r, orthonormal eigenvectors of Dhat (empty when nu = 0)
  Eigen::VectorXd diffusion_eigenvalues_;    //!< r, eigenvalues of Dhat, <= 0 (empty when nu = 0)
  double orthonormality_error_ = 0.0;
  double divergence_error_ = 0.0;
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
