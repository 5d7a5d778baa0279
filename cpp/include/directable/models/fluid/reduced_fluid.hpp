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

//! Per-run buffers of the reduced step.
struct ReducedFluidData {
  explicit ReducedFluidData(Index r) : expm(r, 0), zt(r), za(r), A(r, r), C(r, 0), Ediff(r, r) {}
  BorderedExpm expm;
  Eigen::VectorXd zt, za;  //!< after the force, after advection
  Eigen::MatrixXd A, C, Ediff;
  double diff_dt = -1.0;  //!< dt of the cached diffusion exponential
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
  double viscosity() const { return nu_; }
  const RowMatrix& basis() const { return B_; }
  const Eigen::MatrixXd& advection_tensor(Index k) const { return adv_[k]; }  //!< Ahat_k, r x r
  const Eigen::MatrixXd& diffusion_matrix() const { return Dhat_; }           //!< Dhat, r x r
  //! max |B'B - I| (0 for the orthonormal basis the energy guarantee needs).
  double orthonormality_error() const { return orth_err_; }

  //! Ahat(z) = sum_k z_k Ahat_k.
  void advection_matrix(const Eigen::Ref<const Eigen::VectorXd>& z, Eigen::Ref<Eigen::MatrixXd> A) const;
  //! F(z) = Ahat(z) z + nu Dhat z.
  void dynamics(const Eigen::Ref<const Eigen::VectorXd>& z, Eigen::Ref<Eigen::VectorXd> F) const;
  //! dF/dz = Ahat(z) + [Ahat_0 z ... Ahat_{r-1} z] + nu Dhat, added into J (r x r).
  void add_jacobian(const Eigen::Ref<const Eigen::VectorXd>& z, Eigen::Ref<RowMatrix> J) const;

  std::unique_ptr<ReducedFluidData> create_data() const { return std::make_unique<ReducedFluidData>(r_); }
  //! z_next: force (zt = z + dt w), advection by exp(dt Ahat(zt)) (exact,
  //! orthogonal), diffusion by the precomputed exp(dt nu Dhat).
  void step(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const Eigen::VectorXd>& w, double dt,
            Eigen::Ref<Eigen::VectorXd> z_next, ReducedFluidData& d) const;
  //! The same with the object's own scratch data (convenience; not thread-safe).
  void step(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const Eigen::VectorXd>& w, double dt,
            Eigen::Ref<Eigen::VectorXd> z_next) const;
  //! States (T+1) x r from z0 under controls W (T x r), one step each.
  RowMatrix rollout(const Eigen::Ref<const Eigen::VectorXd>& z0, const Eigen::Ref<const RowMatrix>& W, double dt) const;

  //! Velocity modes Psi(x) (2 x r) and optionally dPsi/dx, dPsi/dy (2 x r).
  void modes(double x, double y, Eigen::Ref<RowMatrix> Psi, RowMatrix* dPsi_dx = nullptr,
             RowMatrix* dPsi_dy = nullptr) const;
  //! Psi(x) z without allocation.
  Eigen::Vector2d velocity(double x, double y, const Eigen::Ref<const Eigen::VectorXd>& z) const;

 private:
  std::shared_ptr<const MACGrid2D> grid_;
  Index r_;
  double nu_;
  RowMatrix B_;                      //!< N x r
  std::vector<Eigen::MatrixXd> adv_;  //!< r matrices r x r
  Eigen::MatrixXd Dhat_;
  double orth_err_ = 0.0;
  mutable std::unique_ptr<ReducedFluidData> scratch_;
};

//! Particles p_1..p_P immersed in a reduced fluid: state x = [p (2P), z (r)],
//!   p_i' = Psi(p_i) z,  z' = Ahat(z) z + nu Dhat z + w,  B = [0; I].
class FluidParticles final : public Model {
 public:
  FluidParticles(std::shared_ptr<const ReducedFluid> fluid, Index particles);

  Index state_dim() const override { return 2 * P_ + fluid_->r(); }
  Index control_dim() const override { return fluid_->r(); }
  Index particles() const { return P_; }
  const ReducedFluid& fluid() const { return *fluid_; }
  std::shared_ptr<const ReducedFluid> fluid_ptr() const { return fluid_; }
  void dynamics(const Eigen::Ref<const Eigen::VectorXd>& x, double t, Eigen::Ref<Eigen::VectorXd> F) const override;
  //! Appendix C: dp_i'/dp_i = [dPsi/dx z, dPsi/dy z], dp_i'/dz = Psi(p_i),
  //! dz'/dz = Ahat(z) + [Ahat_k z]_k + nu Dhat.
  void jacobian(const Eigen::Ref<const Eigen::VectorXd>& x, double t, Eigen::Ref<RowMatrix> J) const override;
  const Eigen::MatrixXd& control_matrix() const override { return B_; }

  std::unique_ptr<ModelData> create_data() const override;
  //! The reduced fluid step for z, RK2 (midpoint, z averaged over the step)
  //! for the particles, which are clamped to the domain.
  void step(const Eigen::Ref<const Eigen::VectorXd>& x, double t, double dt, const Eigen::Ref<const Eigen::VectorXd>& w,
            Eigen::Ref<Eigen::VectorXd> x_next, ModelData& data) const override;

 private:
  std::shared_ptr<const ReducedFluid> fluid_;
  Index P_;
  Eigen::MatrixXd B_;
};

}  // namespace directable
