#include "directable/models/sph/parameters.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "pair_kernels.hpp"

namespace directable {

template <int D>
double SPHParamsT<D>::mass() const {
  return rho0 * std::pow(spacing, double(D));
}

template <int D>
void SPHParamsT<D>::validate() const {
  auto pos = [](const char* name, double v) {
    if (!(v > 0) || !std::isfinite(v))
      throw std::domain_error(std::string(name) + " must be positive and finite, got " + std::to_string(v));
  };
  pos("spacing", spacing);
  pos("h", h);
  pos("rho0", rho0);
  pos("c0", c0);
  pos("gamma", gamma);
  pos("dt", dt);
  if (!(viscosity >= 0) || !std::isfinite(viscosity))
    throw std::domain_error("viscosity must be >= 0, got " + std::to_string(viscosity));
  if (!gravity.allFinite()) throw std::domain_error("gravity must be finite");
  bool ok = lo.allFinite() && hi.allFinite();
  for (int k = 0; k < D; ++k) ok = ok && hi[k] > lo[k];
  if (!ok)
    throw std::invalid_argument("domain must have lo < hi (finite), got lo = " + vec_str<D>(lo) + ", hi = " +
                                vec_str<D>(hi));
}

template struct SPHParamsT<2>;
template struct SPHParamsT<3>;

}  // namespace directable
