#pragma once
// Goal-directed control of a point-mass system by the heuristic of Jeon &
// Choi (sec. 3.5-4): a control window before the goal time (eq. 11-12), a
// path generated step by step with the simulation in the loop (eq. 15-19),
// the control forces by inverse dynamics (eq. 7), and the arrival fix the
// paper's editing tools provide: cut at the closest approach, end on the
// goal (the remaining offset is spread along the cut path by a smoothstep of
// its arc length), re-time by the pilot's step lengths (eq. 20-24) and
// recompute the forces in a second pass.
//
// Inverse dynamics: eq. 7 and 18 divide by dt, which is inconsistent with
// eq. 6; the force that makes a node reach q*_{i+1} in one symplectic step is
//   u_i = M (q*_{i+1} - q*_i - dt q'*_i - dt^2 M^-1 F^A) / dt^2,
// used here (with this u the node lands on q*_{i+1} up to rounding).
#include <Eigen/Core>
#include <cstdint>
#include <limits>
#include <vector>

#include "directable/core/sequence.hpp"
#include "directable/models/point_mass_system.hpp"

namespace directable {

//! Eq. 15 prints L as a ratio of squared distances; `linear` uses distances.
enum class LengthRatio { squared, linear };

struct GoalPathSettings {
  double alpha = 500.0;     //!< window scale (steps / m^2), eq. 11, >= 0
  double beta = 1.0;        //!< goal weight (1/m^2 units of J), eq. 14, >= 0
  double gamma = 1e-6;      //!< force weight (per N^2), eq. 14, >= 0
  double delta = 1.0;       //!< radius scale, eq. 15, > 0
  double seek_angle = 0.5235987755982988;  //!< theta_max (rad, 30 degrees), in [0, pi]
  Index samples = 33;       //!< polar angles from -theta to theta, >= 1
  Index azimuths = 8;       //!< planes through R_i, spread over a half turn, >= 1
  double widen = 0.3;       //!< fraction of the window over which theta grows to theta_max, in [0, 1]
  double f_max = std::numeric_limits<double>::infinity();  //!< force limit |u_i| <= f_max (N), > 0; inf: none (eq. 13 prints |u|^2)
  LengthRatio length_ratio = LengthRatio::squared;
  double tolerance = 1e-6;  //!< reached: final distance <= tolerance (m)
  void validate() const;
};

struct NodeGoal {
  Index node = 0;
  Index t_c = 0;            //!< goal step in the pilot
  Eigen::Vector3d goal;     //!< q# (m)
};

//! Eq. 11: T_r = round(alpha distance^2) steps, clipped to [1, t_c].
//! Throws std::invalid_argument when t_c < 1 (no window of one step fits).
Index control_window(double distance, double alpha, Index t_c);

struct ClothPlan {
  Index t_start = 0, t_end = 0;         //!< merged window [t_start, t_end) of steps, n = t_end - t_start
  std::vector<Index> nodes;             //!< c controlled nodes, in the order of the goals
  std::vector<Index> window_start;      //!< c, per node (after merging overlapping windows)
  std::vector<Index> window_end;        //!< c, per node: its t_c
  RowMatrix goals;                      //!< c x 3
  MatrixSeq paths;                      //!< c x (n+1) x 3, node positions of the second pass
  MatrixSeq generated;                  //!< c x (n+1) x 3, first pass (empty for follow_paths)
  MatrixSeq targets;                    //!< c x (n+1) x 3, cut + re-timed path (NaN outside the node's window)
  MatrixSeq forces;                     //!< n x c x 3 (N), zero outside the node's window
  std::vector<std::uint8_t> reached;    //!< c
  Eigen::VectorXd final_distance;       //!< c, |q_{t_c} - q#| (m)
  Eigen::VectorXd cost;                 //!< c, eq. 14 over the node's window
  std::vector<Index> closest_step;      //!< c, step of the first pass's closest approach, from the window start
  Index clipped_forces = 0;             //!< forces that f_max shortened
};

//! Plans every goal jointly (sec. 4): overlapping windows are merged (the
//! earlier start wins) and at every step each controlled node's candidates
//! see the state produced by all forces chosen so far. pilot_x, pilot_v:
//! (T+1) x V x 3. Never throws for an unreachable goal: see reached.
ClothPlan plan_goal_paths(const PointMassSystem& system, SeqView pilot_x, SeqView pilot_v,
                          const std::vector<NodeGoal>& goals, double dt, const GoalPathSettings& settings);

//! The second pass alone: from the pilot state at t_start, forces by inverse
//! dynamics so that each node follows targets (c x (n+1) x 3) over its
//! window [window_start, window_end]; its goal is the target at window_end.
ClothPlan follow_paths(const PointMassSystem& system, SeqView pilot_x, SeqView pilot_v, double dt,
                       const std::vector<Index>& nodes, const std::vector<Index>& window_start,
                       const std::vector<Index>& window_end, SeqView targets, const GoalPathSettings& settings);

}  // namespace directable
