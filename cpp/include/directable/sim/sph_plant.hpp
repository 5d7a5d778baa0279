#pragma once
// The SPH fluid as the plant of a receding-horizon loop: state [positions;
// velocities] (2DN), control per-particle forces (DN) held over a frame of
// simulation steps; optionally a sphere launched at one frame, and a
// prediction model refrozen at the fluid's state before every window.
#include <memory>

#include "directable/models/sph/fluid.hpp"
#include "directable/models/sph/prediction.hpp"
#include "directable/sim/plant.hpp"

namespace directable {

template <int D>
class SPHPlant : public Plant {
 public:
  using Vec = Eigen::Matrix<double, D, 1>;
  //! frame_steps >= 1 simulation steps per control step; prediction (or
  //! null): refrozen at the fluid's state at the start of every step.
  SPHPlant(std::shared_ptr<SPHFluid<D>> fluid, Index frame_steps,
           std::shared_ptr<SPHPredictionT<D>> prediction = nullptr);
  //! Launches the sphere (centre inside the domain, radius > 0) at the
  //! start of control step `frame` (>= 0).
  void launch_sphere(Index frame, const Vec& centre, double radius, const Vec& velocity);
  Index n() const override { return 2 * D * fluid_->size(); }
  Index s() const override { return D * fluid_->size(); }
  void state(RefVec x) const override;
  void advance(Index t, const CRefVec& u) override;
  void begin_step(Index t) override;

 private:
  std::shared_ptr<SPHFluid<D>> fluid_;
  std::shared_ptr<SPHPredictionT<D>> prediction_;
  Index frame_steps_;
  Index launch_frame_ = -1;  //!< no launch when < 0
  Vec centre_ = Vec::Zero(), velocity_ = Vec::Zero();
  double radius_ = 0.0;
};

extern template class SPHPlant<2>;
extern template class SPHPlant<3>;

}  // namespace directable
