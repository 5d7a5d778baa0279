#include "directable/control/characters/decision.hpp"

#include <cmath>
#include <limits>

namespace directable {

double basis_value(const DecisionProblem& p, const double* r, const double* state, DecisionData& data) {
  p.features_of(state, data.phi.data(), data.scratch.data());
  const Index c = Index(state[0]);
  return data.phi.dot(Eigen::Map<const Eigen::VectorXd>(r + c * p.features, p.features));
}

Index choose_by_value(const DecisionProblem& p, const double* r, double alpha, const double* state, DecisionData& data,
                      double* best_out) {
  p.expand(state, data.next.data(), data.costs.data());
  // V at every successor in one batched pass (forbidden clips included: cheaper than compacting)
  p.values_of(data.next.data(), p.clips, r, data.values.data(), data.batch.data());
  return argmin_value(data.costs.data(), data.values.data(), p.clips, alpha, best_out);
}

Index argmin_value(const double* costs, const double* values, Index K, double alpha, double* best_out) {
  Index best = -1;
  double best_value = std::numeric_limits<double>::infinity();
  for (Index k = 0; k < K; ++k) {
    if (!std::isfinite(costs[k])) continue;  // a forbidden clip
    const double v = costs[k] + alpha * values[k];
    if (v < best_value) best_value = v, best = k;
  }
  if (best_out) *best_out = best_value;
  return best;
}

Index choose_greedy(const DecisionProblem& p, const double* state, DecisionData& data) {
  p.expand(state, data.next.data(), data.costs.data());
  const double here = p.state_cost(state);
  Index best = -1;
  double best_value = std::numeric_limits<double>::infinity();
  for (Index k = 0; k < p.clips; ++k) {
    if (!std::isfinite(data.costs[k])) continue;
    const double v = data.costs[k] - here + p.state_cost(&data.next(k, 0));
    if (v < best_value) best_value = v, best = k;
  }
  return best;
}

}  // namespace directable
