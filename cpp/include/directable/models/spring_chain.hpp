#pragma once
// The Duffing spring chain: the library's small nonlinear test model.
#include <Eigen/Core>

#include "directable/models/model.hpp"

namespace directable {

//! 1D chain of point masses joined by damped Duffing springs, the first one
//! tied to a wall: spring j joins mass j-1 (the wall for j = 0) and mass j,
//! extension d_j = x_j - x_{j-1}, tension k_j d_j + k3_j d_j^3 + c_j d_j'.
//! State z = [x (m), v (m)]; control w (s) are forces on the masses chosen
//! by `actuated` (m x s, identity by default): B = [0; M^-1 S].
class SpringChain final : public Model {
 public:
  SpringChain(const Eigen::Ref<const Eigen::VectorXd>& masses, const Eigen::Ref<const Eigen::VectorXd>& stiffness,
              const Eigen::Ref<const Eigen::VectorXd>& cubic, const Eigen::Ref<const Eigen::VectorXd>& damping,
              const Eigen::Ref<const Eigen::MatrixXd>& actuated);

  Index state_dim() const override { return 2 * m_; }
  Index control_dim() const override { return B_.cols(); }
  Index masses_count() const { return m_; }
  void dynamics(const Eigen::Ref<const Eigen::VectorXd>& z, double t, Eigen::Ref<Eigen::VectorXd> F) const override;
  void jacobian(const Eigen::Ref<const Eigen::VectorXd>& z, double t, Eigen::Ref<RowMatrix> J) const override;
  const Eigen::MatrixXd& control_matrix() const override { return B_; }
  //! Elastic energy plus kinetic energy.
  double energy(const Eigen::Ref<const Eigen::VectorXd>& z) const;

  const Eigen::VectorXd& masses() const { return mass_; }
  const Eigen::VectorXd& stiffness() const { return k_; }
  const Eigen::VectorXd& cubic() const { return k3_; }
  const Eigen::VectorXd& damping() const { return c_; }
  const Eigen::MatrixXd& actuated() const { return S_; }

 private:
  Index m_;
  Eigen::VectorXd mass_, k_, k3_, c_;  //!< m each
  Eigen::MatrixXd S_;                  //!< m x s
  Eigen::MatrixXd B_;                  //!< 2m x s
};

}  // namespace directable
