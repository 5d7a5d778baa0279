#pragma once
// Parameters of the weakly compressible SPH fluid (2D and 3D): particle
// spacing and mass, smoothing length, Tait equation of state, Monaghan
// viscosity, time step, gravity and the domain box. Bodies in
// src/models/sph/parameters.cpp, instantiated for D = 2 and D = 3.
#include <Eigen/Core>

namespace directable {

template <int D>
struct SPHParamsT {
  using Vec = Eigen::Matrix<double, D, 1>;
  double spacing = 0.02;   //!< initial particle spacing dx; mass = rho0 dx^D
  double h = 0.026;        //!< smoothing length (kernel support 2h)
  double rho0 = 1000.0;    //!< rest density
  double c0 = 20.0;        //!< speed of sound; Tait B = rho0 c0^2 / gamma
  double gamma = 7.0;
  double viscosity = 0.05;  //!< Monaghan alpha
  double dt = 5e-4;
  Vec gravity = down();     //!< default: -9.81 along the last axis (y in 2D, z in 3D)
  Vec lo = Vec::Zero(), hi = Vec::Ones();  //!< domain box
  static Vec down() {
    Vec g = Vec::Zero();
    g[D - 1] = -9.81;
    return g;
  }
  double mass() const;
  double tait_B() const { return rho0 * c0 * c0 / gamma; }
  void validate() const;
};
using SPHParams = SPHParamsT<2>;
using SPHParams3D = SPHParamsT<3>;

extern template struct SPHParamsT<2>;
extern template struct SPHParamsT<3>;

}  // namespace directable
