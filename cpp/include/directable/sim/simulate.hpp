#pragma once
// The controlled simulation: model + (optional) tracking controller +
// disturbances, stepped in C++. One class serves per-step stepping from
// Python and whole runs (simulate), so both follow the same code path.
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
  //! The model and controller must outlive this object; controller may be null
  //! (then the open-loop control given to step() is applied).
  ControlledSimulation(const Model& model, Tracker* controller, const Eigen::Ref<const Eigen::VectorXd>& z0,
                       double dt, double t0 = 0.0);

  //! One step: w = controller(z) (+ w_open if no controller) + w_ext, then
  //! the model's step; `kick` (n, may be empty) is added to z first.
  void step(const double* w_ext, const double* w_open, const double* kick);

  const Eigen::VectorXd& state() const { return z_; }
  void set_state(const Eigen::Ref<const Eigen::VectorXd>& z);
  double time() const { return t_; }
  Index steps_taken() const { return steps_; }
  const Eigen::VectorXd& last_control() const { return w_; }
  const Eigen::VectorXd& last_feedback() const { return w_fb_; }
  double dt() const { return dt_; }
  //! |z - z_ref[index]| for the controller's current index (0 without one).
  double tracking_error() const;

 private:
  const Model& model_;
  Tracker* ctrl_;
  std::unique_ptr<ModelData> data_;
  Eigen::VectorXd z_, z_next_, w_, w_fb_, w_apply_;
  double dt_, t_;
  Index steps_ = 0;
};

struct SimulationInputs {
  SeqView disturbance;   //!< N x s control-space forces w_ext, or empty
  SeqView open_loop;     //!< N x s control when there is no controller (e.g. w_ff), or empty
  SeqView kicks;         //!< N x n state increments applied before step i, or empty
  Eigen::VectorXi jump_steps;  //!< steps at which the controller jumps to the nearest reference state
};

//! Runs N steps in one call.
SimulationResult simulate(const Model& model, Tracker* controller, const Eigen::Ref<const Eigen::VectorXd>& z0,
                          Index steps, double dt, double t0, const SimulationInputs& inputs,
                          const ProgressFn* progress = nullptr);

}  // namespace directable
