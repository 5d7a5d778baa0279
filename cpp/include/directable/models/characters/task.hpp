#pragma once
// Control tasks of Treuille thesis sec. 5.2 and Table 5.1 over a motion
// model: the state layout, the transition function (eq. 5.2) and the costs
// (eq. 5.4-5.5). Reading of eq. 5.2 (stated once here): x is the lateral
// offset from the desired path, z the distance along it, and a clip's root
// faces +z at theta = 0; so Navigation's d is the thesis's x, and (u, v) is
// the obstacle's position relative to the character in the path frame
// (lateral, along).
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "directable/core/types.hpp"
#include "directable/models/characters/motion_model.hpp"

namespace directable {

enum class TaskKind { kNavigation, kSpinningNavigation, kFixedObstacle, kMovingObstacle };

//! Cost weights and the user's intentions (the switchable and separable
//! parameters of the state: desired gait, torso, spin, obstacle offset and
//! velocity).
struct TaskParams {
  double gamma_x = 0.0, gamma_O = 0.0, sigma_O = 1.0, gamma_psi = 0.0, gamma_rho = 0.0, gamma_tau = 0.0,
         gamma_omega = 0.0;
  std::vector<bool> gait;  //!< allowed gaits (indexed by gait id); empty: all
  double torso = 0.0;      //!< desired torso angle tau-hat, rad
  double spin = 0.0;       //!< desired spin omega-hat, rad/s
  double offset = 0.0;     //!< FOA: d + u, the obstacle's lateral offset from the path, m
  double u_dot = 0.0, v_dot = 0.0;  //!< MOA: obstacle velocity in the path frame, m/s
  //! Obstacle tasks: points at which the obstacle term is charged per
  //! transition, the state itself and obstacle_samples - 1 more evenly
  //! along the chord to the next state (added to c_t). One clip covers about
  //! 1.1 m, more than 2 sigma_O of a person-sized obstacle: charged only at
  //! the clip starts (1, eq. 5.4 read literally) a policy can step across
  //! the obstacle between two of them.
  Index obstacle_samples = 1;
};

class Task {
 public:
  //! ranges (d-1, 2): the domain of each continuous variable (cyclic ones
  //! are [-pi, pi)); empty for the defaults (linear: [-2, 2] m).
  Task(std::shared_ptr<const MotionModel> motion, TaskKind kind, TaskParams params,
       const Eigen::Ref<const RowMatrix>& ranges = RowMatrix());

  TaskKind kind() const { return kind_; }
  const TaskParams& params() const { return params_; }
  const MotionModel& motion() const { return *motion_; }
  std::shared_ptr<const MotionModel> motion_ptr() const { return motion_; }
  Index clips() const { return motion_->K(); }
  Index dim() const { return Index(variables_.size()) + 1; }  //!< clip + continuous variables
  const std::vector<std::string>& variables() const { return variables_; }
  const std::vector<bool>& cyclic() const { return cyclic_; }
  const RowMatrix& ranges() const { return ranges_; }  //!< (d-1, 2)

  //! Whether the value function sees states clamped into the ranges: the
  //! obstacle tasks clamp (u, v), so an obstacle beyond the sampled square
  //! counts as one at its edge (where its cost has vanished) and the
  //! polynomials are never extrapolated.
  bool clamps_values() const { return kind_ == TaskKind::kFixedObstacle || kind_ == TaskKind::kMovingObstacle; }
  //! Clamps the obstacle columns of n states (n, d) in place (see clamps_values).
  void clamp_to_domain(double* states, Index n) const;

  //! Checks a (S, d) state array: shape, finiteness, clip indices and, when
  //! in_ranges, the task's ranges (cyclic variables must lie in [-pi, pi]).
  void check_states(const std::string& name, const Eigen::Ref<const RowMatrix>& states, bool in_ranges) const;

  //! eq. 5.2 for every clip: next (K, d) from one state (d,).
  void successors(const double* state, double* next) const;
  //! eq. 5.4
  double state_cost(const double* state) const;
  //! eq. 5.5 for every clip: (K,), +inf outside the desired gait.
  void transition_costs(const double* state, double* costs) const;
  //! successors and c_s(X) + c_t(X, X') in one pass (the learner's hot call).
  void expand(const double* state, double* next, double* costs) const;
  //! The same values as expand with the successors stored by variable:
  //! next (d, ld), column j of clip k at next[j ld + k] (ld >= K), so that
  //! every loop of the scans is a contiguous pass over the K clips.
  void expand_columns(const double* state, double* next, Index ld, double* costs) const;
  //! clamp_to_domain for n states stored by variable (column j at X[j ld + i]).
  void clamp_columns(double* X, Index n, Index ld) const;

 private:
  std::shared_ptr<const MotionModel> motion_;
  TaskKind kind_;
  TaskParams params_;
  std::vector<std::string> variables_;
  std::vector<bool> cyclic_;
  RowMatrix ranges_;  //!< (d-1, 2)
  Index theta_;       //!< column of theta
};

//! Angle wrapped into [-pi, pi) (inline: the scans call it per candidate).
//! Written without branches (both results computed, one selected) so that
//! the loops over the K clips vectorise; an angle already in range is
//! returned unchanged.
inline double wrap_angle(double a) {
  const double two_pi = 2.0 * M_PI;
  double w = a - two_pi * std::floor((a + M_PI) * (1.0 / two_pi));
  w = w >= M_PI ? w - two_pi : w;
  w = w < -M_PI ? w + two_pi : w;
  return (a >= -M_PI && a < M_PI) ? a : w;
}

}  // namespace directable
