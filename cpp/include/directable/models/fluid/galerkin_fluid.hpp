#pragma once
// The grid-independent part of the reduced fluid (Treuille thesis ch. 3,
// eq. 3.7-3.8): once the r reduced advection matrices Ahat_k = B' A(b_k) B
// and Dhat = B' D B are known, time stepping never sees the grid, so the 2D
// and the 3D reduced fluids share it (ReducedFluid, ReducedFluid3D).
//
//   z' = Ahat(z) z + nu Dhat z + w,   Ahat(z) = sum_k z_k Ahat_k.
#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <functional>
#include <memory>
#include <vector>

#include "directable/core/parallel.hpp"
#include "directable/core/progress.hpp"
#include "directable/core/types.hpp"
#include "directable/linalg/expm.hpp"

namespace directable {

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
  TeamChooser particle_team;             //!< team of the particle advection, chosen by measurement
  std::vector<std::pair<Index, Index>> particle_order;  //!< P: (cell, particle), the visiting order of the particles
};

//! out = A(flux) q for the full advection stencil of a grid (all vectors N).
using AdvectionStencil = std::function<void(const Eigen::Ref<const Eigen::VectorXd>& flux,
                                            const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::VectorXd> out)>;

//! A viscosity fitted to a run's energy decay (GalerkinFluid::fit_viscosity).
struct ViscosityFit {
  double nu = 0.0;        //!< m^2/s
  double residual = 0.0;  //!< RMS of log(E_red(t)/E_red(0)) - log(E(t)/E(0)) over the run at nu
  Index evaluations = 0;  //!< reduced rollouts tried
};

class GalerkinFluid {
 public:
  Index r() const { return r_; }
  double viscosity() const { return viscosity_; }
  const RowMatrix& basis() const { return basis_; }
  const Eigen::MatrixXd& advection_tensor(Index k) const { return advection_[k]; }  //!< Ahat_k, r x r
  const Eigen::MatrixXd& diffusion_matrix() const { return diffusion_; }           //!< Dhat, r x r
  //! max |B'B - I| (0 for the orthonormal basis the energy guarantee needs).
  double orthonormality_error() const { return orthonormality_error_; }
  //! max |div| h or |closed-face value| over the basis columns (0 for a
  //! divergence-free basis that vanishes on walls and solids).
  double divergence_error() const { return divergence_error_; }

  //! Ahat(z) = sum_k z_k Ahat_k, exactly antisymmetric (each Ahat_k is, to rounding).
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
  //! The viscosity that makes this model's energy follow a run's: the full
  //! solver dissipates by its advection scheme's numerical viscosity, which
  //! the reduced model (exact, energy-preserving advection) only has through
  //! nu. energy: (T+1) kinetic energies of the run (any common scale),
  //! z0 (r) its projected start, W (T x r) its projected forces. Minimises
  //! the mean squared difference of the normalised log energies over nu in
  //! [lo, hi] (a log-spaced scan, then golden section in log nu); the model's
  //! own viscosity is not used.
  ViscosityFit fit_viscosity(const Eigen::Ref<const Eigen::VectorXd>& z0, const Eigen::Ref<const RowMatrix>& W,
                             const Eigen::Ref<const Eigen::VectorXd>& energy, double dt, double lo, double hi) const;
  //! States (T+1) x r from z0 under controls W (T x r), one step each.
  RowMatrix rollout(const Eigen::Ref<const Eigen::VectorXd>& z0, const Eigen::Ref<const RowMatrix>& W, double dt) const;

 protected:
  //! Checks the basis (N x r, finite) and the viscosity, keeps B; `grid`
  //! describes the grid in the shape message.
  GalerkinFluid(const Eigen::Ref<const RowMatrix>& basis, Index n_faces, const std::string& grid, double viscosity);
  //! Projects the grid's operators: Dhat = B' D B and Ahat_k = B' A(b_k) B
  //! (parallel over k); divergence_error is the grid's measure of B.
  void project_operators(const Eigen::SparseMatrix<double>& laplacian, const AdvectionStencil& advection,
                         double divergence_error, int threads, const ProgressFn* progress);
  void check_reduced(const char* name, const Eigen::Ref<const Eigen::VectorXd>& v) const;

  Index r_;
  double viscosity_;
  RowMatrix basis_;                          //!< B, N x r
  std::vector<Eigen::MatrixXd> advection_;   //!< Ahat_k = B' A(b_k) B, r matrices r x r
  //! r(r-1)/2 x r: row e = entry (i, j), i > j (column by column) of every
  //! Ahat_k, so that Ahat(z) is r(r-1)/2 dot products reading half the tensor once
  RowMatrix advection_lower_;
  Eigen::MatrixXd diffusion_;                //!< Dhat = B' D B, r x r, symmetric
  Eigen::MatrixXd diffusion_eigenvectors_;   //!< r x r, orthonormal eigenvectors of Dhat (empty when nu = 0)
  Eigen::VectorXd diffusion_eigenvalues_;    //!< r, eigenvalues of Dhat, <= 0 (empty when nu = 0)
  double orthonormality_error_ = 0.0;
  double divergence_error_ = 0.0;
};

}  // namespace directable
