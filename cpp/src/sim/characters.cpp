#include "directable/sim/characters.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

#include "directable/core/errors.hpp"

namespace directable {

namespace {
//! The distinct rows of the transition table's next clips (a synthetic set
//! has two: the clips as asked for, or their mirror images) and which one
//! each clip's row is: the scans store r once per distinct row.
struct NextClipRows {
  std::vector<Index> row_of;        //!< (K,) distinct row of each clip
  std::vector<std::vector<Index>> rows;  //!< distinct rows, each (K,)
};

void scan_layout(DecisionProblem& p, const std::shared_ptr<const Task>& task, const std::shared_ptr<const Basis>& basis) {
  const Index K = task->clips(), nb = basis->size(), dim = task->dim();
  const RowMatrix& next = task->motion().arrays().next_state;
  auto layout = std::make_shared<NextClipRows>();
  std::map<std::vector<Index>, Index> index;
  layout->row_of.resize(K);
  for (Index c = 0; c < K; ++c) {
    std::vector<Index> row(K);
    for (Index k = 0; k < K; ++k) row[k] = Index(next(c, k));
    auto it = index.emplace(row, Index(layout->rows.size())).first;
    if (it->second == Index(layout->rows.size())) layout->rows.push_back(std::move(row));
    layout->row_of[c] = it->second;
  }
  // the clip axis padded to a multiple of the widest vector (8 doubles): the
  // basis loops then run without a scalar remainder; padded successors are
  // zeros with zero coefficients and are never candidates
  const Index Kp = (K + 7) / 8 * 8;
  p.coef_size = Index(layout->rows.size()) * nb * Kp;
  p.many_scratch = (dim + 1 + basis->column_scratch()) * Kp + K;
  p.prepare = [layout, K, Kp, nb](const double* r, double* coef) {
    for (std::size_t q = 0; q < layout->rows.size(); ++q) {
      const Index* row = layout->rows[q].data();
      double* out = coef + Index(q) * nb * Kp;
      for (Index j = 0; j < nb; ++j) {
        for (Index k = 0; k < K; ++k) out[j * Kp + k] = r[row[k] * nb + j];
        for (Index k = K; k < Kp; ++k) out[j * Kp + k] = 0.0;
      }
    }
  };
  p.choose_many = [task, basis, layout, K, Kp, nb, dim](const double* X, Index n, const double* coef, double alpha,
                                                        Index* best, double* best_value, double* scratch) {
    double* cols = scratch;            // (dim, Kp) successors by variable
    double* values = cols + dim * Kp;  // (Kp,)
    double* costs = values + Kp;       // (K,)
    double* work = costs + K;
    for (Index j = 0; j < dim; ++j) std::fill(cols + j * Kp + K, cols + (j + 1) * Kp, 0.0);
    for (Index i = 0; i < n; ++i) {
      const double* x = X + i * dim;
      task->expand_columns(x, cols, Kp, costs);
      task->clamp_columns(cols, K, Kp);
      basis->values_columns(cols, Kp, Kp, coef + layout->row_of[Index(x[0])] * nb * Kp, values, work);
      best[i] = argmin_value(costs, values, K, alpha, best_value + i);
    }
  };
}
}  // namespace

DecisionProblem decision_problem(std::shared_ptr<const Task> task, std::shared_ptr<const Basis> basis) {
  if (!task) throw std::invalid_argument("task must be a task object, got None");
  DecisionProblem p;
  p.clips = task->clips();
  p.dim = task->dim();
  p.expand = [task](const double* x, double* next, double* costs) { task->expand(x, next, costs); };
  p.state_cost = [task](const double* x) { return task->state_cost(x); };
  if (basis) {
    if (basis->max_column() >= task->dim())
      throw std::invalid_argument("basis uses state column " + std::to_string(basis->max_column()) +
                                  " but the task's states have " + std::to_string(task->dim()) + " columns");
    p.features = basis->size();
    const Index dim = task->dim();
    if (!task->clamps_values()) {
      p.scratch = basis->scratch_size();
      p.value_scratch = basis->batch_scratch();
      p.features_of = [basis](const double* x, double* phi, double* scratch) { basis->evaluate(x, phi, scratch); };
      p.values_of = [basis, dim](const double* X, Index n, const double* r, double* out, double* scratch) {
        basis->values(X, n, dim, r, out, scratch);
      };
    } else {
      // the basis sees the state clamped into the task's value domain
      p.scratch = basis->scratch_size() + dim;
      p.value_scratch = basis->batch_scratch() + dim;
      p.features_of = [basis, task, dim](const double* x, double* phi, double* scratch) {
        double* y = scratch + basis->scratch_size();
        std::copy(x, x + dim, y);
        task->clamp_to_domain(y, 1);
        basis->evaluate(y, phi, scratch);
      };
      p.values_of = [basis, task, dim](const double* X, Index n, const double* r, double* out, double* scratch) {
        double* Y = scratch + basis->batch_scratch() * n;
        std::copy(X, X + n * dim, Y);
        task->clamp_to_domain(Y, n);
        basis->values(Y, n, dim, r, out, scratch);
      };
    }
    scan_layout(p, task, basis);
  }
  return p;
}

Index choose_clip(const DecisionProblem& p, CharacterPolicy policy, const Eigen::Ref<const RowMatrix>& r,
                  const GridValue* grid, double alpha, const Eigen::Ref<const Eigen::VectorXd>& x, DecisionData& data) {
  switch (policy) {
    case CharacterPolicy::kValue: return choose_by_value(p, r.data(), alpha, x.data(), data);
    case CharacterPolicy::kGreedy: return choose_greedy(p, x.data(), data);
    case CharacterPolicy::kGrid: return choose_by_grid(p, *grid, alpha, x.data(), data);
  }
  return -1;
}

Episode run_episode(const DecisionProblem& p, CharacterPolicy policy, const Eigen::Ref<const RowMatrix>& r,
                    const GridValue* grid, double alpha, const Eigen::Ref<const Eigen::VectorXd>& state0, Index steps) {
  if (steps < 0) throw std::invalid_argument("steps must be >= 0, got " + std::to_string(steps));
  if (!(alpha >= 0.0 && alpha < 1.0)) throw std::domain_error("alpha must lie in [0, 1), got " + std::to_string(alpha));
  check_shape("state0", state0.size(), 1, p.dim, 1);
  check_finite("state0", state0.data(), state0.size());
  if (state0[0] < 0 || state0[0] >= double(p.clips) || state0[0] != std::floor(state0[0]))
    throw std::invalid_argument("state0[0] must be a clip index in [0, " + std::to_string(p.clips) + "), got " +
                                std::to_string(state0[0]));
  if (policy == CharacterPolicy::kValue) {
    check_shape("r", r.rows(), r.cols(), p.clips, p.features);
    check_finite("r", r.data(), r.size());
  }
  if (policy == CharacterPolicy::kGrid && !grid) throw std::invalid_argument("grid_values must be given for policy 'grid'");
  Episode ep;
  ep.states.resize(steps + 1, p.dim);
  ep.clips.resize(steps + 1);
  ep.step_costs.resize(steps);
  ep.states.row(0) = state0.transpose();
  ep.clips[0] = Index(state0[0]);
  DecisionData data(p);
  Eigen::VectorXd x = state0;
  for (Index t = 0; t < steps; ++t) {
    // every policy leaves the expansion of x in data
    const Index k = choose_clip(p, policy, r, grid, alpha, x, data);
    if (k < 0) throw std::domain_error("no allowed next clip at step " + std::to_string(t));
    x = data.next.row(k).transpose();
    if (!x.allFinite() || !std::isfinite(data.costs[k]))
      throw std::domain_error("state became non-finite at step " + std::to_string(t));
    ep.step_costs[t] = data.costs[k];
    ep.states.row(t + 1) = x.transpose();
    ep.clips[t + 1] = Index(x[0]);
  }
  return ep;
}

}  // namespace directable
