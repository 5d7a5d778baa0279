#include "directable/models/sph/kernel.hpp"

#include "pair_kernels.hpp"

namespace directable {

template <int D>
CubicSpline<D>::CubicSpline(double h_)
    : h(h_), sigma(D == 2 ? 10.0 / (7.0 * kPi * h_ * h_) : 1.0 / (kPi * h_ * h_ * h_)) {}

template <int D>
double CubicSpline<D>::W(double r) const {
  return kernel_terms<D>(*this, r).W;
}

template <int D>
double CubicSpline<D>::dW(double r) const {
  const double q = r / h;
  if (q < 1.0) return sigma / h * (-3.0 * q + 2.25 * q * q);
  if (q < 2.0) return -sigma / h * 0.75 * (2.0 - q) * (2.0 - q);
  return 0.0;
}

template <int D>
double CubicSpline<D>::d2W(double r) const {
  const double q = r / h;
  if (q < 1.0) return sigma / (h * h) * (-3.0 + 4.5 * q);
  if (q < 2.0) return sigma / (h * h) * 1.5 * (2.0 - q);
  return 0.0;
}

template struct CubicSpline<2>;
template struct CubicSpline<3>;

}  // namespace directable
