#pragma once
// The second phase of goal-directed control (Jeon & Choi): a point-mass
// system stepped by symplectic Euler (eq. 4-5) with the planned control
// forces applied at their time stamps, in one call.
#include <Eigen/Core>
#include <vector>

#include "directable/core/progress.hpp"
#include "directable/core/sequence.hpp"
#include "directable/models/point_mass_system.hpp"

namespace directable {

//! A rollout plus the control forces that were applied.
struct PointMassRun : PointMassRollout {
  VectorSeq u;  //!< T x 3V, the control forces applied (N)
};

//! `steps` steps from (x0, v0); at step i with t_start <= i < t_start + n,
//! forces[i - t_start] (n x c x 3) acts on `nodes` (c). Forces on a pinned
//! node are rejected. Throws std::domain_error with the step index when the
//! run diverges.
PointMassRun run_with_forces(const PointMassSystem& system, const Eigen::Ref<const Eigen::VectorXd>& x0,
                             const Eigen::Ref<const Eigen::VectorXd>& v0, double dt, Index steps, Index t_start,
                             const std::vector<Index>& nodes, SeqView forces, const ProgressFn* progress = nullptr);

}  // namespace directable
