#include "directable/sim/sph_plant.hpp"

#include <stdexcept>
#include <string>

#include "directable/core/errors.hpp"

namespace directable {

template <int D>
SPHPlant<D>::SPHPlant(std::shared_ptr<SPHFluid<D>> fluid, Index frame_steps,
                      std::shared_ptr<SPHPredictionT<D>> prediction)
    : fluid_(std::move(fluid)), prediction_(std::move(prediction)), frame_steps_(frame_steps) {
  if (!fluid_) throw std::invalid_argument("fluid is missing");
  if (frame_steps < 1) throw std::invalid_argument("frame_steps must be >= 1, got " + std::to_string(frame_steps));
  if (prediction_ && (prediction_->n() != n() || prediction_->s() != s()))
    throw std::invalid_argument("prediction must have the fluid's dimensions n = " + std::to_string(n()) +
                                ", got n = " + std::to_string(prediction_->n()));
}

template <int D>
void SPHPlant<D>::launch_sphere(Index frame, const Vec& centre, double radius, const Vec& velocity) {
  if (frame < 0) throw std::invalid_argument("frame must be >= 0, got " + std::to_string(frame));
  check_finite("centre", centre.data(), D);
  check_finite("velocity", velocity.data(), D);
  check_positive("radius", radius);
  launch_frame_ = frame;
  centre_ = centre;
  velocity_ = velocity;
  radius_ = radius;
}

template <int D>
void SPHPlant<D>::state(RefVec x) const {
  const Index m = D * fluid_->size();
  x.head(m) = fluid_->positions();
  x.tail(m) = fluid_->velocities();
}

template <int D>
void SPHPlant<D>::begin_step(Index t) {
  if (t == launch_frame_) fluid_->set_sphere(centre_, radius_, velocity_);
  if (prediction_) prediction_->refreeze(*fluid_);
}

template <int D>
void SPHPlant<D>::advance(Index, const CRefVec& u) {
  fluid_->advance(frame_steps_, u);
}

template class SPHPlant<2>;
template class SPHPlant<3>;

}  // namespace directable
