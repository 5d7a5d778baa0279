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
//! in place; pinned nodes keep zero velocity. Returns max over the nodes of
//! |v+|^2 (m^2/s^2; NaN if any is), which callers use to detect divergence
//! without a second pass.
double symplectic_update(const PointMassSystem& system, Eigen::Ref<Eigen::VectorXd> x, Eigen::Ref<Eigen::VectorXd> v,
                         const Eigen::Ref<const Eigen::VectorXd>& F_total, double dt);

//! symplectic_update on structure-of-arrays state (V each): the same
//! arithmetic, so that a run kept in that form (ClothModel::symplectic_step)
//! rounds exactly as the runs through symplectic_update (sim/point_mass_run,
//! the cloth planner); both live in this one file so that the compiler
//! contracts them alike. dt_over_m: dt / m per node; keep: 1 for a free
//! node, 0 for a pinned one (its velocity must be zero); speed2: V, receives
//! each node's |v+|^2. Returns the largest |v+|^2 (NaN if any is). On
//! restrict parameters and branch-free, so that it vectorises.
double symplectic_update_soa(Index V, double dt, const double* __restrict dt_over_m, const double* __restrict keep,
                             const double* __restrict FX, const double* __restrict FY, const double* __restrict FZ,
                             double* __restrict X, double* __restrict Y, double* __restrict Z, double* __restrict VX,
                             double* __restrict VY, double* __restrict VZ, double* __restrict speed2);

//! A node faster than this (m/s) means the run has diverged.
inline constexpr double kDivergenceSpeed = 1e4;

//! Throws std::domain_error "<what> diverged at step <step>" unless
//! max_speed_squared (from symplectic_update or an implicit step: the
//! largest |v|^2 of any node) is finite and below kDivergenceSpeed^2. The
//! maximum, not the mean: one node shot away by a stiff collider is a
//! diverged run even when the rest of the cloth is at rest.
//! bound: the largest plausible speed (m/s) where the caller knows a tighter
//! one (ClothSpeedBound).
void check_divergence(const char* what, double max_speed_squared, Index step, double bound = kDivergenceSpeed);

}  // namespace directable
