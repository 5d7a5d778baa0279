#pragma once
// The receding-horizon closed loop: at step t read the plant's state,
// optimise the window reference[t .. t+H] from it (warm-started from the
// previous window's solution shifted by one step), apply the first control
// to the plant for one control step, shift.
//
// The plant is anything behind the Plant interface: a continuous Model
// integrated by its own step (ModelPlant), a discrete prediction model
// (DiscretePlant), or a full simulator (e.g. the SPH fluid, sim/sph_plant.hpp).
// A plant whose prediction model is frozen or linearised at its actual
// state refreshes that model in begin_step().
#include <Eigen/Core>
#include <memory>

#include "directable/control/mpc/optimizer.hpp"
#include "directable/core/progress.hpp"
#include "directable/core/sequence.hpp"
#include "directable/models/model.hpp"
#include "directable/models/prediction_model.hpp"

namespace directable {

class Plant {
 public:
  virtual ~Plant() = default;
  virtual Index n() const = 0;  //!< state dimension
  virtual Index s() const = 0;  //!< control dimension
  //! The current state (n).
  virtual void state(RefVec x) const = 0;
  //! Advances over control step t with the control u (s) held, plus any
  //! disturbance the plant applies at t.
  virtual void advance(Index t, const CRefVec& u) = 0;
  //! Called at the start of control step t, before its window is
  //! optimised: the plant's own events at t (e.g. an impact) and the
  //! refresh of a prediction model frozen or linearised at the plant's
  //! state. Default: nothing.
  virtual void begin_step(Index t) { (void)t; }
};

//! Forces a plant adds to the control at steps t < T (T x s; T = 0: none).
class PlantDisturbance {
 public:
  //! forces (T x s, finite) or empty; copied. Throws naming "disturbance".
  PlantDisturbance(const SeqView& forces, Index s);
  //! u + forces[t] (or u for t >= T), in a buffer of this object.
  const Eigen::VectorXd& applied(Index t, const CRefVec& u);

 private:
  VectorSeq forces_;   //!< T x s
  Eigen::VectorXd w_;  //!< s: the applied control
};

//! A continuous Model z' = F(z, t) + B w integrated by its own step,
//! `substeps` steps of dt / substeps per control step, w = u + disturbance[t].
class ModelPlant : public Plant {
 public:
  //! z0 (n, finite); dt > 0; substeps >= 1; disturbance (T x s) or empty:
  //! forces added to the control at steps t < T. Copies its arguments.
  ModelPlant(std::shared_ptr<const Model> model, const CRefVec& z0, double dt, Index substeps = 1, double t0 = 0.0,
             const SeqView& disturbance = SeqView());
  Index n() const override { return model_->state_dim(); }
  Index s() const override { return model_->control_dim(); }
  void state(RefVec x) const override { x = z_; }
  void advance(Index t, const CRefVec& u) override;

 private:
  std::shared_ptr<const Model> model_;
  std::unique_ptr<ModelData> data_;
  double h_, t_;  //!< substep length, current time
  Index substeps_;
  PlantDisturbance disturbance_;
  Eigen::VectorXd z_, z_next_;  //!< n each
};

//! A discrete model x+ = f_0(x, u + disturbance[t]) (e.g. the true system
//! beside a simplified prediction).
class DiscretePlant : public Plant {
 public:
  //! x0 (n, finite); disturbance (T x s) or empty. Copies its arguments.
  DiscretePlant(std::shared_ptr<const PredictionModel> model, const CRefVec& x0,
                const SeqView& disturbance = SeqView());
  Index n() const override { return model_->n(); }
  Index s() const override { return model_->s(); }
  void state(RefVec x) const override { x = x_; }
  void advance(Index t, const CRefVec& u) override;

 private:
  std::shared_ptr<const PredictionModel> model_;
  std::unique_ptr<PredictionData> data_;
  PlantDisturbance disturbance_;
  Eigen::VectorXd x_, x_next_;  //!< n each
};

//! Result of a receding-horizon run.
struct RecedingResult {
  VectorSeq states;    //!< (steps+1) x n: the plant's states
  VectorSeq controls;  //!< steps x s: the applied first controls
  Eigen::VectorXd cost_initial, cost, seconds;  //!< steps each: per window
  Eigen::VectorXi iterations;                   //!< steps
};

//! The closed loop over `steps` control steps. reference ((steps+H+1) x n);
//! u_reference ((steps+H) x s, window t weighs ||u_i - u_reference[t+i]||^2_R)
//! or empty (zero); u0 (H x s): the first window's starting controls, or
//! empty (zeros); later windows warm-start. Throws naming the argument for
//! bad shapes and domain_error with the step if the plant's state becomes
//! non-finite; Cancelled when progress asks to stop.
RecedingResult run_receding(const HorizonOptimizer& optimizer, Plant& plant, const SeqView& reference, Index steps,
                            const SeqView& u_reference = SeqView(), const SeqView& u0 = SeqView(),
                            const ProgressFn* progress = nullptr);

}  // namespace directable
