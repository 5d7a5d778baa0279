#include "directable/control/mpc/settings.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "directable/core/errors.hpp"

namespace directable {

void MPCOptions::validate() const {
  if (horizon < 1) throw std::invalid_argument("horizon must be a positive number of steps, got " + std::to_string(horizon));
  if (iterations < 0) throw std::invalid_argument("iterations must be >= 0, got " + std::to_string(iterations));
  if (memory < 1) throw std::invalid_argument("memory must be >= 1, got " + std::to_string(memory));
  if (std::isnan(time_budget)) throw std::domain_error("time_budget must not be NaN");
  if (!std::isfinite(time_budget) && time_budget > 0)
    throw std::domain_error("time_budget must be finite, got " + std::to_string(time_budget));
}

void ControlLimits::validate(Index s) const {
  auto check_limit = [&](const Eigen::VectorXd& v, const char* name) {
    if (v.size() == 0) return;
    if (v.size() != s) throw_shape(name, "(" + std::to_string(s) + ",)", "(" + std::to_string(v.size()) + ",)");
    for (Index k = 0; k < s; ++k)
      if (std::isnan(v[k])) throw std::domain_error(std::string(name) + " must not contain NaN");
  };
  check_limit(lower, "lower");
  check_limit(upper, "upper");
  if (lower.size() == s && upper.size() == s)
    for (Index k = 0; k < s; ++k)
      if (lower[k] > upper[k])
        throw std::invalid_argument("lower must be <= upper, got lower[" + std::to_string(k) + "] = " +
                                    std::to_string(lower[k]) + " > upper = " + std::to_string(upper[k]));
}

}  // namespace directable
