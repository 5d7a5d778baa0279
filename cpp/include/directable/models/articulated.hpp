#pragma once
// Articulated bodies in generalized coordinates, M(q) q'' + C(q, q') = tau:
// the interface the PD/SPD servos drive. PlanarChain implements it; a model
// from another engine (MuJoCo, Pinocchio, Python) implements it through
// callbacks in the bindings.
#include <Eigen/Core>
#include <memory>

#include "directable/core/sequence.hpp"
#include "directable/models/model.hpp"

namespace directable {

//! Time integrators of the equations of motion, for the loops that step an
//! articulated body with their own servo torques (the body's own step() is RK4).
enum class Integrator { explicit_euler = 0, semi_implicit_euler = 1, rk4 = 2 };

class Articulated {
 public:
  virtual ~Articulated() = default;
  //! Number of generalized coordinates n (q, q' and tau are n each).
  virtual Index dofs() const = 0;
  //! Per-run workspace (allocated once; the hot loop does not allocate).
  virtual std::unique_ptr<ModelData> create_workspace() const { return std::make_unique<ModelData>(); }
  //! M(q), n x n, symmetric positive definite.
  virtual void mass_matrix(const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::MatrixXd> M,
                           ModelData& ws) const = 0;
  //! C(q, q'), n: Coriolis/centrifugal, gravity and passive (damping) forces.
  virtual void bias_forces(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
                           Eigen::Ref<Eigen::VectorXd> C, ModelData& ws) const = 0;
  //! Joint limits, applied after each integration step (default: none).
  virtual void project_limits(Eigen::Ref<Eigen::VectorXd> /*q*/, Eigen::Ref<Eigen::VectorXd> /*qd*/) const {}
};

}  // namespace directable
