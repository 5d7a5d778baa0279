#pragma once
// Projected L-BFGS on a box: minimises f(x) subject to lower <= x <= upper
// with a fixed iteration count, an optional wall-clock budget and an
// optional projected-gradient tolerance.
#include <Eigen/Core>
#include <functional>

#include "directable/core/types.hpp"

namespace directable {

struct LBFGSOptions {
  Index iterations = 100;
  Index memory = 10;         //!< stored (s, y) pairs
  double time_budget = 0.0;  //!< seconds; <= 0: none
  double gtol = 0.0;         //!< stop when the projected gradient's max-norm <= gtol
  //! > 0: the inverse-Hessian scale of the steps taken before any (s, y)
  //! pair is stored, e.g. s'y / y'y carried over from a related problem (the
  //! previous receding-horizon window); 0: such a step has unit length.
  double initial_scale = 0.0;
  //! Asked before every iteration (if set): false stops, the point so far is returned.
  std::function<bool()> keep_going;
  //! iterations >= 0, memory >= 1, time_budget not NaN, initial_scale finite
  //! and >= 0; throws naming the field.
  void validate() const;
};

struct LBFGSResult {
  double cost_initial = 0.0;  //!< f at the (projected) starting point
  double cost = 0.0;          //!< f at the returned point
  Index iterations = 0;       //!< iterations performed
  Index evaluations = 0;      //!< evaluations of f
  Index gradients = 0;        //!< evaluations of the gradient
  double seconds = 0.0;       //!< wall-clock time
  //! s'y / y'y of the first stored pair; when none was stored (one
  //! iteration whose point got no gradient), s's / s'Hs along the last step
  //! from the values alone (within 100x of options.initial_scale when that
  //! is > 0); else options.initial_scale: the curvature scale to start a
  //! related problem with.
  double scale = 0.0;
};

//! fg(x, g): returns f(x) and writes its gradient into g (N).
using ObjectiveFn = std::function<double(const Eigen::VectorXd&, Eigen::VectorXd&)>;
//! f(x) alone, or, once f(x) is certain to exceed `bound`, any value > bound
//! (an evaluation may stop there: a line-search trial above the bound is
//! rejected whatever its exact value).
using ValueFn = std::function<double(const Eigen::VectorXd&, double bound)>;

//! Buffers of minimize_lbfgs; pass one to reuse them across calls (no
//! allocation once sized).
struct LBFGSWorkspace {
  Eigen::MatrixXd S, Y;                  //!< N x memory: the ring buffers of the pairs s = dx, y = dg
  Eigen::VectorXd rho, alpha, sy, yy;    //!< memory: 1 / s'y, two-loop coefficients, s'y, y'y per pair
  Eigen::VectorXd g, gn, d, xn, q, free; //!< N: gradient, trial gradient, direction, trial point, two-loop
                                         //!< vector, 1 on the free variables and 0 on those held at a bound
};

//! Minimises from x (projected first) in place; lower/upper: N entries or
//! empty (unbounded). value (optional): f alone, for the line search's
//! shortened trials (a unit step's trial calls fg); after such a trial is
//! accepted, fg is called at the same point for the gradient (it may reuse
//! its work). Given value, the last iteration (the iteration limit's) calls
//! value alone: no gradient at the returned point. Throws domain_error if f
//! is not finite at the start.
LBFGSResult minimize_lbfgs(const ObjectiveFn& fg, Eigen::VectorXd& x, const Eigen::VectorXd& lower,
                           const Eigen::VectorXd& upper, const LBFGSOptions& options,
                           LBFGSWorkspace* workspace = nullptr, const ValueFn& value = {});

}  // namespace directable
