#pragma once
// The SPH smoothing kernel. Bodies in src/models/sph/kernel.cpp,
// instantiated for D = 2 and D = 3.

namespace directable {

//! Cubic spline kernel (support radius 2h); sigma = 10/(7 pi h^2) in 2D,
//! 1/(pi h^3) in 3D.
template <int D>
struct CubicSpline {
  double h, sigma;
  explicit CubicSpline(double h_);
  double W(double r) const;
  double dW(double r) const;   //!< dW/dr
  double d2W(double r) const;  //!< d2W/dr2
};
using CubicSpline2D = CubicSpline<2>;
using CubicSpline3D = CubicSpline<3>;

extern template struct CubicSpline<2>;
extern template struct CubicSpline<3>;

}  // namespace directable
