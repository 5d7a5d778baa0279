#pragma once
// A continuum crowd (Treuille thesis ch. 4, Fig. 4.3): groups of people
// sharing a goal and parameters, moved each step down their group's
// potential. CrowdModel is the immutable definition (grid, groups, options,
// agents); CrowdData holds the people and every buffer of a run.
//
// One step: (1) splat everyone into one density and mean velocity;
// (2) predictive discomfort: each walking person advanced by its velocity
// of eq. 4.6 (CrowdData::intended) for k = 1..K steps, splatted (scale x density, exponent lambda_p) into the
// discomfort of the other groups; moving agents add discomfort and speed ahead of themselves and
// close their disc; (3) per group (in parallel): planning speed (expected
// speed of periodic closures), unit cost, potential, and the velocity field
// built from the actual speed (red closures stop people); (4) Euler update
// with the bilinearly interpolated velocity (norm capped at the group's
// largest speed), never entering a blocked or closed cell; (5) minimum
// distance; (6) arrival: removal or stop.
#include <Eigen/Core>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "directable/core/parallel.hpp"
#include "directable/core/progress.hpp"
#include "directable/core/types.hpp"
#include "directable/models/crowds/crowd_grid.hpp"
#include "directable/models/crowds/eikonal.hpp"
#include "directable/models/crowds/min_distance.hpp"

namespace directable {

//! A moving obstacle driven by a rule (a car, a flying saucer): it sits at
//! path[step mod T], closes the cells whose centres lie within `radius`, and
//! over the next `lookahead` path points adds `discomfort_ahead` to the
//! discomfort and `speed_ahead` to the speed of every move out of the cells
//! within `radius` of them (people get out of its way quickly).
struct CrowdAgent {
  RowMatrix path;  //!< (T x 2) positions per step, looped
  double radius = 1.0, discomfort_ahead = 0.0, speed_ahead = 0.0;
  Index lookahead = 0;
  void validate(const std::string& name) const;
};

//! One group's goal and parameters.
struct CrowdGroupSpec {
  std::vector<std::uint8_t> goal;  //!< (ny nx)
  CrowdParams params;
};

struct CrowdOptions {
  Index predictive_steps = 0;       //!< K
  double predictive_scale = 0.1;    //!< density scale of the predicted splats
  double predictive_lambda = 1.0;   //!< their exponent
  bool remove_on_arrival = true;    //!< else arrived people stop and stay as obstacles
  Index min_distance_iterations = 1;
  double lam = 2.0;                 //!< density exponent of the one density of all groups
  double delta_min = 0.3;           //!< minimum distance between any two people
  //! Plan with the expected speed of periodic closures (else with the
  //! current state: a red closure looks like a wall to the planner).
  bool expected_periodic = true;
};

class CrowdModel {
 public:
  CrowdModel(std::shared_ptr<const CrowdGrid> grid, std::vector<CrowdGroupSpec> groups, CrowdOptions options,
             std::vector<CrowdAgent> agents);
  const CrowdGrid& grid() const { return *grid_; }
  std::shared_ptr<const CrowdGrid> grid_ptr() const { return grid_; }
  Index n_groups() const { return Index(groups_.size()); }
  const CrowdGroupSpec& group(Index g) const { return groups_[g]; }
  const CrowdOptions& options() const { return options_; }
  const std::vector<CrowdAgent>& agents() const { return agents_; }
  //! Group g's topographical speed f_T (4 x ny nx, topographic_speed's
  //! sentinel on closed moves): fixed by the grid and the parameters.
  const RowMatrix& topographic(Index g) const { return topographic_[g]; }
  //! Largest speed a person of group g can reach (f_max plus agents' speed_ahead).
  double speed_cap(Index g) const;
  //! max over groups of speed_cap * dt / h (> 1 breaks the one-cell-per-step bound).
  double cfl(double dt) const;

 private:
  std::shared_ptr<const CrowdGrid> grid_;
  std::vector<CrowdGroupSpec> groups_;
  CrowdOptions options_;
  std::vector<CrowdAgent> agents_;
  std::vector<RowMatrix> topographic_;  // per group, (4 x ny nx)
  double speed_ahead_ = 0.0;
};

//! Fields of one group (E N W S anisotropic fields are 4 x ny nx).
struct CrowdGroupData {
  std::vector<std::uint8_t> goal;  //!< (ny nx) current goal
  RowMatrix speed, cost;           //!< planning speed and unit cost
  RowMatrix speed_actual;          //!< speed people move with where it differs from `speed` (periodic closures), else empty
  Eigen::VectorXd phi;             //!< (ny nx) potential
  //! (n_faces) MAC velocity. crowd_fields computes every face; a step only
  //! the faces its walking people read (the others keep older values).
  Eigen::VectorXd velocity;
  std::vector<std::uint32_t> face_stamp;  //!< (n_faces) the `stamp` at which each face was last computed
  std::uint32_t stamp = 0;                //!< counts the steps' partial velocity fields
  Eigen::VectorXd discomfort;      //!< (ny nx) g this group plans with
  EikonalWorkspace eikonal;
  //! (ny nx) cells from which the goal can be reached through open moves
  //! whatever the density (walls, closed cells), and the search's queue;
  //! computed in a step only when someone stands where phi = inf.
  std::vector<std::uint8_t> reachable;
  std::vector<Index> queue;
  Index reachable_step = -1;  //!< the step `reachable` was computed for
  bool any_walking = false;
  double seconds_speed_cost = 0.0, seconds_potential = 0.0, seconds_velocity = 0.0;  //!< this group's last fields
  //! The speed people actually move with (4 x ny nx).
  const RowMatrix& actual_speed() const { return speed_actual.size() ? speed_actual : speed; }
};

//! The people and every buffer of a run. Belongs to one thread at a time.
struct CrowdData {
  RowMatrix positions, velocities;        //!< (P x 2) velocities: the last step's displacement / dt
  //! (P x 2) velocity of eq. 4.6 at the last step (the interpolated field,
  //! before walls and minimum distance): what predictive discomfort
  //! extrapolates, so that the pushes of the minimum distance, multiplied
  //! by the horizon, do not shake the predicted paths.
  RowMatrix intended;
  std::vector<int> group_of;              //!< (P)
  std::vector<std::uint8_t> active;       //!< (P) still walking
  std::vector<std::uint8_t> arrived;      //!< (P) reached the goal
  //! (P) ever walled in: in a cell from which no open path leads to the goal.
  //! (People behind a dense crowd at rest also stand where phi = inf, but
  //! are not walled in: they walk on once the jam moves.)
  std::vector<std::uint8_t> stuck;
  Index step = 0;
  double time = 0.0;
  //! Length of the current (or last) step: predictive discomfort advances
  //! people by k dt times their velocity, k = 1..K (1 before any step).
  double dt = 1.0;
  Eigen::VectorXd rho, discomfort, extra_speed;  //!< (ny nx) density, static + agents' discomfort, agents' speed
  RowMatrix ubar;                                 //!< (ny nx x 2)
  std::vector<std::uint8_t> closed_plan, closed_move, red, participates, agent_cells;
  RowMatrix predicted;                            //!< (P x 2) scratch
  Eigen::MatrixXd predictive;                     //!< (ny nx x groups) predicted splats per group
  Eigen::VectorXd predictive_total;               //!< (ny nx) their sum
  std::vector<CrowdGroupData> groups;
  MinDistanceWorkspace min_distance;
  //! Wall time of the last step's stages, seconds: density (splat,
  //! predictive discomfort, agents), speed and unit cost, potential
  //! (eikonal), motion (velocity fields, Euler, minimum distance, arrival);
  //! per-group stages are summed over the groups.
  Eigen::Vector4d stage_seconds = Eigen::Vector4d::Zero();
  //! Team size of the per-group loop when all cores are asked for (on
  //! shared cores one thread can beat a stalled team; results do not depend on it).
  TeamChooser team;
};

//! Positions per step, who was walking, wall time per step, people ever stuck.
struct CrowdRun {
  Index T = 0, P = 0;
  std::vector<double> positions;      //!< (T+1) x P x 2
  std::vector<std::uint8_t> active;   //!< (T+1) x P
  Eigen::VectorXd step_times;         //!< (T) seconds
  RowMatrix stage_times;              //!< (T x 4) seconds: CrowdData::stage_seconds of each step
  std::vector<Index> stuck;           //!< sorted person indices
};

//! Validated data for the people positions (P x 2) with group_of (P).
CrowdData create_crowd_data(const CrowdModel& model, const Eigen::Ref<const RowMatrix>& positions,
                            const std::vector<int>& group_of);
//! Replaces group g's goal (validated: shape, at least one free cell).
void set_group_goal(const CrowdModel& model, CrowdData& data, Index g, const std::vector<std::uint8_t>& goal);
//! Group g's fields (std::domain_error when g is out of range).
const CrowdGroupData& group_data(const CrowdModel& model, const CrowdData& data, Index g);
//! 1 in the cells (ny nx) holding a walking person of group g.
void occupied_cells(const CrowdModel& model, const CrowdData& data, Index g, std::vector<std::uint8_t>& out);
//! Stages 1-3 of a step at the data's current time (the fields of every group).
void crowd_fields(const CrowdModel& model, CrowdData& data, int threads);
//! One step of length dt (> 0, finite).
void crowd_step(const CrowdModel& model, CrowdData& data, double dt, int threads);
//! Hook called before every step with the step index (dynamic goals).
using CrowdBeforeStep = std::function<void(Index)>;
//! `steps` steps, recording positions and activity; throws Cancelled when
//! progress asks to stop.
CrowdRun crowd_run(const CrowdModel& model, CrowdData& data, Index steps, double dt, int threads,
                   const CrowdBeforeStep& before_step, const ProgressFn* progress);

}  // namespace directable
