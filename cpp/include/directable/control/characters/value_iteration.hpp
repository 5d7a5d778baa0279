#pragma once
// The "exact" reference of the learned value function: tabular dynamic
// programming on a per-dimension grid of the continuous variables for every
// clip, with multilinear interpolation (cyclic axes wrapped, linear axes
// clamped). Solved by modified policy iteration: a full Bellman sweep picks
// the greedy policy and stores its successors' interpolation weights, then
// the policy is evaluated on those precomputed weights until it settles.
#include <vector>

#include "directable/control/characters/decision.hpp"
#include "directable/core/progress.hpp"

namespace directable {

class GridValue {
 public:
  //! axes: one sorted axis per continuous variable (a cyclic axis is uniform
  //! on [-pi, pi)); values (K, prod n_i), the last axis fastest.
  GridValue(Index clips, std::vector<Eigen::VectorXd> axes, std::vector<bool> cyclic);
  Index clips() const { return clips_; }
  Index points() const { return points_; }
  const std::vector<Eigen::VectorXd>& axes() const { return axes_; }
  const std::vector<bool>& cyclic() const { return cyclic_; }
  RowMatrix& values() { return values_; }
  const RowMatrix& values() const { return values_; }
  //! Interpolated V at a state (clip first).
  double operator()(const double* state) const;
  //! Up to 2^D corners: flat indices into values (clip * points + point) and weights.
  Index corners(const double* state, Index* index, double* weight) const;
  //! The cell of v on axis i: grid indices lo, hi (equal where a linear
  //! axis clamps) and the weight t of hi.
  void locate(Index i, double v, Index& lo, Index& hi, double& t) const;
  //! Coordinates (dim,) of grid point g of clip c.
  void point(Index c, Index g, double* state) const;

 private:
  Index clips_, points_;
  std::vector<Eigen::VectorXd> axes_;
  std::vector<bool> cyclic_;
  std::vector<bool> uniform_;      //!< per axis: evenly spaced (the cell found by a division)
  std::vector<double> inv_step_;   //!< per axis: 1 / spacing of an even axis
  RowMatrix values_;  //!< (K, points)
};

struct ValueIterationResult {
  Index sweeps = 0;       //!< full Bellman sweeps
  Index evaluations = 0;  //!< policy-evaluation sweeps
  double residual = 0.0;  //!< max |T V - V| of the last full sweep
};

//! Fills grid.values(); tol bounds the Bellman residual.
ValueIterationResult value_iteration(const DecisionProblem& p, GridValue& grid, double alpha, double tol,
                                     Index max_sweeps, int threads, const ProgressFn* progress);

//! argmin_k c(X, k) + alpha V_grid(f(X, k)).
Index choose_by_grid(const DecisionProblem& p, const GridValue& grid, double alpha, const double* state,
                     DecisionData& data);

}  // namespace directable
