#pragma once
// The horizon optimizer's settings: method, horizon, iteration and time
// limits, and the box limits on the controls.
#include <Eigen/Core>

#include "directable/core/types.hpp"

namespace directable {

enum class MPCMethod { LBFGS, GaussNewton };

struct MPCOptions {
  Index horizon = 1;         //!< window steps H
  Index iterations = 50;     //!< fixed iteration count (an upper bound)
  double time_budget = 0.0;  //!< seconds per solve; <= 0: none
  Index memory = 10;         //!< L-BFGS pairs
  MPCMethod method = MPCMethod::LBFGS;
  //! horizon >= 1, iterations >= 0, memory >= 1, time_budget not NaN/inf.
  void validate() const;
};

//! Box limits on every control; empty vectors mean unbounded.
struct ControlLimits {
  Eigen::VectorXd lower, upper;  //!< s each, or empty
  bool empty() const { return lower.size() == 0 && upper.size() == 0; }
  //! Sizes s (or empty), no NaN, lower <= upper; throws naming the argument.
  void validate(Index s) const;
};

}  // namespace directable
