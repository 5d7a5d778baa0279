#pragma once
// The plant of a closed loop: the system a controller drives one control
// step at a time, behind one interface (the receding-horizon loop knows no
// concrete plant). A continuous Model integrated by its own step
// (ModelPlant), a discrete prediction model (DiscretePlant); full simulators
// have their own (e.g. sim/sph_plant.hpp).
#include <Eigen/Core>
#include <memory>

#include "directable/core/sequence.hpp"
#include "directable/core/types.hpp"
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

}  // namespace directable
