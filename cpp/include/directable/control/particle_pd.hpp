#pragma once
// The PD baseline of Barbic & Popovic 2008 (sec. 6, eq. 14) for a reduced
// fluid with immersed particles, on the Model interface:
//
//   w = -k_z dz - Psi(p)' (k_p dp + k_pdot dp'),
//   dz = z - z_ref[i],  dp = p - p_ref[i],  dp' = p'(x) - p'(x_ref[i]).
//
// The paper prints the particle terms without the map from particle space
// (d P) to the reduced forces (r): a force f applied at the particles enters
// the reduced coordinates as Psi(p)' f (the reduced force of point forces at
// p), so Psi is evaluated where the force acts, the particle's current
// position. Psi(p) (d P x r) is the block dp'/dz of the model's Jacobian at
// the current state and p'(x) the particle rows of its dynamics, so a scene
// with objects (whose boundary fields move the particles too) is covered.
// dp' is the exact rate of the position error under the model; the
// reference rate p'(x_ref[i]) makes w vanish on the reference (no
// feed-forward, as the LQR it is compared with).
//
// The law's gain at the reference, dw/dx at x_ref[i], is exact there (the
// term with dPsi'/dp multiplies a zero force):
//   K_i = -[Psi'(k_p I + k_pdot Y), k_z I + k_pdot Psi' Psi],
// with Y = dp'/dp = [dPsi/dx_k z] (appendix C) at x_ref[i]: the constant-gain
// law as the time-varying gain matrices an LQR tracker would use.
//
// A controller sees the model through its interface only: the state must be
// x = [p (d P), z (r)] with control matrix [0; I] (FluidParticles, 2D or 3D).
#include <Eigen/Core>
#include <memory>

#include "directable/core/types.hpp"
#include "directable/models/model.hpp"

namespace directable {

//! Scalar gains of eq. 14 (each >= 0): k_z on the reduced velocity (1/s),
//! k_p on the particle positions and k_pdot on their rates (through Psi').
struct ParticlePDGains {
  double k_z = 0.0, k_p = 0.0, k_pdot = 0.0;
};

//! Per-thread buffers of the law (one per run).
struct ParticlePDData {
  RowMatrix J;        //!< n x n: the model's Jacobian at the evaluated state
  Eigen::VectorXd F;  //!< n: the model's dynamics at the evaluated state
  Eigen::VectorXd f;  //!< d P: k_p dp + k_pdot dp', the force at the particles
};

class ParticlePD {
 public:
  //! model: state [p (d P), z (r)], control r entering z only; x_ref:
  //! (T+1) x n, T >= 1; dt: the step between reference states (s), t0 the
  //! time of x_ref[0]. Evaluates the reference rates p'(x_ref[i]) once.
  ParticlePD(std::shared_ptr<const Model> model, Index particles, const Eigen::Ref<const RowMatrix>& x_ref,
             const ParticlePDGains& gains, double dt, double t0 = 0.0);

  //! The same model and reference with other gains (shares the reference).
  ParticlePD with_gains(const ParticlePDGains& gains) const;

  const Model& model() const { return *model_; }
  std::shared_ptr<const Model> model_ptr() const { return model_; }
  Index particles() const { return P_; }
  Index space_dim() const { return d_; }            //!< d: 2 or 3
  Index r() const { return r_; }
  Index n() const { return n_; }
  Index horizon() const { return x_ref_->rows() - 1; }  //!< T
  double dt() const { return dt_; }
  double t0() const { return t0_; }
  const ParticlePDGains& gains() const { return gains_; }
  const RowMatrix& reference() const { return *x_ref_; }             //!< (T+1) x n
  const RowMatrix& reference_rates() const { return *pdot_ref_; }    //!< (T+1) x d P: p'(x_ref[i])

  ParticlePDData create_data() const;
  //! w (r) at state x (n) and reference step i in [0, T]. No allocation.
  void control(const Eigen::Ref<const Eigen::VectorXd>& x, Index i, Eigen::Ref<Eigen::VectorXd> w,
               ParticlePDData& data) const;
  //! The same with the inputs checked (x: n, finite; i in [0, T]).
  void checked_control(const Eigen::Ref<const Eigen::VectorXd>& x, Index i, Eigen::Ref<Eigen::VectorXd> w,
                       ParticlePDData& data) const;
  //! K_i = dw/dx at x_ref[i] (r x n), i in [0, T].
  void gain(Index i, Eigen::Ref<RowMatrix> K, ParticlePDData& data) const;

 private:
  ParticlePD() = default;
  void check_step(Index i) const;

  std::shared_ptr<const Model> model_;
  Index P_ = 0, d_ = 0, r_ = 0, n_ = 0;
  std::shared_ptr<const RowMatrix> x_ref_;     //!< (T+1) x n
  std::shared_ptr<const RowMatrix> pdot_ref_;  //!< (T+1) x d P
  ParticlePDGains gains_;
  double dt_ = 0.0, t0_ = 0.0;
};

}  // namespace directable
