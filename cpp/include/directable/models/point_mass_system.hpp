#pragma once
// A system of point masses in 3D, as a goal-directed controller sees it:
// node count, per-node mass, pinned flags, the applied force F^A(x, v) and
// the semi-implicit (symplectic) Euler step of the Jeon-Choi paper, eq. 4-5:
//   v+ = v + dt M^-1 (F^A(x, v) + u),   x+ = x + dt v+.
// Flat vectors follow eq. 1: q = [x0, y0, z0, x1, ...] (3V).
// A controller includes this header, never a concrete model.
#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <vector>

#include "directable/core/errors.hpp"
#include "directable/core/sequence.hpp"

namespace directable {

//! Positions and velocities of a run of a point-mass system.
struct PointMassRollout {
  VectorSeq x, v;  //!< (T+1) x 3V each (m, m/s)
};

//! Per-run buffers of a point-mass system (one per thread).
struct PointMassData {
  virtual ~PointMassData() = default;
};

class PointMassSystem {
 public:
  virtual ~PointMassSystem() = default;
  virtual Index node_count() const = 0;                    //!< V
  virtual const Eigen::VectorXd& node_masses() const = 0;  //!< V, kg
  //! V flags: 1 for a pinned node (it never moves; forces on it are ignored).
  virtual const std::vector<std::uint8_t>& pinned() const = 0;
  virtual std::unique_ptr<PointMassData> create_point_mass_data() const = 0;
  //! F^A(x, v), 3V (N): every force but the controls. x, v: 3V (m, m/s).
  virtual void applied_forces(const Eigen::Ref<const Eigen::VectorXd>& x, const Eigen::Ref<const Eigen::VectorXd>& v,
                              Eigen::Ref<Eigen::VectorXd> F, PointMassData& data) const = 0;
};

//! Eq. 4-5 given the total force F_total = F^A + u (3V): v and x are updated
//! in place; pinned nodes keep zero velocity. Returns sum |v+|^2 over the
//! nodes (m^2/s^2), which callers use to detect divergence without a second pass.
double symplectic_update(const PointMassSystem& system, Eigen::Ref<Eigen::VectorXd> x, Eigen::Ref<Eigen::VectorXd> v,
                         const Eigen::Ref<const Eigen::VectorXd>& F_total, double dt);

//! Throws std::domain_error "<what> diverged at step <step>" unless
//! speed_squared_sum (from symplectic_update) is finite and below the bound
//! that corresponds to a mean node speed of 1e4 m/s.
void check_divergence(const char* what, double speed_squared_sum, Index nodes, Index step);

}  // namespace directable
