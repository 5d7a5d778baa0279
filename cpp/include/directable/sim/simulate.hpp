#pragma once
// The controlled simulation: model + (optional) tracking controller +
// disturbances, stepped in C++. One class serves per-step stepping from
// Python and whole runs (simulate), so both follow the same code path.
// The model and the tracker are only read: a simulation owns the model's
// and the tracker's per-run data, so several simulations may share them
// from several threads.
#include <Eigen/Core>
#include <memory>

#include "directable/control/lqr/tracker.hpp"
#include "directable/models/model.hpp"
#include "directable/core/progress.hpp"

namespace directable {

struct SimulationResult {
  VectorSeq states;          //!< (N+1) x n
  VectorSeq controls;        //!< N x s   w = w_ff + w_fb actually applied (without disturbance)
  VectorSeq feedback;        //!< N x s   w_fb
  Eigen::VectorXd tracking_error;  //!< N+1   |z_i - z_ref[index_i]|
  Eigen::VectorXd effort;          //!< N     |w_fb,i|^2
  Eigen::VectorXi ref_index;       //!< N+1   tracked reference step
};

class ControlledSimulation {
 public:
  //! The model and controller must outlive this object; controller may be
  //! null (then the open-loop control given to step() is applied). The
  //! controller starts at reference step `start_index` (in [0, T]).
  ControlledSimulation(const Model& model, const Tracker* controller, const Eigen::Ref<const Eigen::VectorXd>& z0,
                       double dt, double t0 = 0.0, Index start_index = 0);

  //! One step: w = controller(z) (+ w_open if no controller) + w_ext, then
  //! the model's step; `kick` (n, may be null) is added to z first.
  void step(const double* w_ext, const double* w_open, const double* kick);
  //! step() for the arguments of a per-step call (each null or of its
  //! size: s, s, n), checked finite; throws if the new state is not finite.
  void checked_step(const double* w_ext, const double* w_open, const double* kick);
  //! Moves the controller to the reference step closest to the state.
  void jump_to_nearest();

  const Eigen::VectorXd& state() const { return z_; }
  void set_state(const Eigen::Ref<const Eigen::VectorXd>& z);
  double time() const { return t_; }
  Index steps_taken() const { return steps_; }
  const Eigen::VectorXd& last_control() const { return w_; }
  const Eigen::VectorXd& last_feedback() const { return w_fb_; }
  double dt() const { return dt_; }
  //! The controller's reference step (0 without one).
  Index reference_index() const { return ctrl_ ? ctrl_data_.index() : 0; }
  //! |z - z_ref[index]| for the controller's current index (0 without one).
  double tracking_error() const;

 private:
  const Model& model_;
  const Tracker* ctrl_;
  TrackerData ctrl_data_;              //!< the controller's per-run state (empty without one)
  std::unique_ptr<ModelData> data_;    //!< the model's per-run buffers
  Eigen::VectorXd z_, z_next_;         //!< n   state, next state
  Eigen::VectorXd w_, w_fb_, w_apply_; //!< s   control, its feedback part, control + disturbance
  double dt_, t_;
  Index steps_ = 0;
};

struct SimulationInputs {
  SeqView disturbance;   //!< N x s control-space forces w_ext, or empty
  SeqView open_loop;     //!< N x s control when there is no controller (e.g. w_ff), or empty
  SeqView kicks;         //!< N x n state increments applied before step i, or empty
  Eigen::VectorXi jump_steps;  //!< steps at which the controller jumps to the nearest reference state
};

//! Runs N steps in one call, the controller (may be null) starting at
//! reference step `start_index`; the result's ref_index[N] is where it ended.
SimulationResult simulate(const Model& model, const Tracker* controller, const Eigen::Ref<const Eigen::VectorXd>& z0,
                          Index steps, double dt, double t0, const SimulationInputs& inputs, Index start_index = 0,
                          const ProgressFn* progress = nullptr);

}  // namespace directable
