#include "directable/control/characters/value_learning.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "directable/core/errors.hpp"
#include "directable/core/parallel.hpp"

namespace directable {

namespace {
//! Samples per parallel work item: one sample is too little work to pay for
//! the scheduling (on shared cores a team of two stalled 10x with one).
constexpr Index kBlock = 64;
Index blocks(Index n) { return (n + kBlock - 1) / kBlock; }

void check_r(const DecisionProblem& p, const Eigen::Ref<const RowMatrix>& r) {
  check_shape("r", r.rows(), r.cols(), p.clips, p.features);
  check_finite("r", r.data(), r.size());
}
}  // namespace

ValueLearning::ValueLearning(DecisionProblem problem, const Eigen::Ref<const RowMatrix>& samples, double alpha)
    : problem_(std::move(problem)), samples_(samples), alpha_(alpha) {
  if (!(alpha >= 0.0 && alpha < 1.0)) throw std::domain_error("alpha must lie in [0, 1), got " + std::to_string(alpha));
  if (samples.rows() < 1) throw std::invalid_argument("samples must hold at least one state, got 0");
  if (!problem_.choose_many) throw std::invalid_argument("basis must be given to learn a value function");
  check_shape("samples", samples.rows(), samples.cols(), samples.rows(), problem_.dim);
  seen_.assign(std::size_t(samples.rows() * problem_.clips), 0);
}

Eigen::VectorXd ValueLearning::objective(int threads) const {
  const DecisionProblem& p = problem_;
  const Index S = samples_.rows(), nb = p.features;
  RowMatrix phi(S, nb);
  parallel_steps(blocks(S), threads, nullptr, blocks(S), [&] { return DecisionData(p); }, [&](Index b, DecisionData& d) {
    for (Index s = b * kBlock; s < std::min(S, (b + 1) * kBlock); ++s)
      p.features_of(&samples_(s, 0), &phi(s, 0), d.scratch.data());
  });
  Eigen::VectorXd c = Eigen::VectorXd::Zero(p.clips * nb);
  for (Index s = 0; s < S; ++s) c.segment(Index(samples_(s, 0)) * nb, nb) += phi.row(s).transpose();
  return c;
}

std::vector<Index> ValueLearning::best_clips(const Eigen::Ref<const RowMatrix>& r, int threads,
                                             const ProgressFn* progress) const {
  check_r(problem_, r);
  const DecisionProblem& p = problem_;
  const Index S = samples_.rows();
  std::vector<Index> best(S, -1);
  std::vector<double> value(S);
  // r laid out once per scan for the column form of eq. 5.10 (see DecisionProblem)
  Eigen::VectorXd coef(p.coef_size);
  p.prepare(r.data(), coef.data());
  parallel_steps(blocks(S), threads, progress, blocks(S), [&] { return Eigen::VectorXd(p.many_scratch); },
                 [&](Index b, Eigen::VectorXd& scratch) {
                   const Index first = b * kBlock, n = std::min(S, first + kBlock) - first;
                   p.choose_many(&samples_(first, 0), n, coef.data(), alpha_, &best[first], &value[first],
                                 scratch.data());
                 });
  return best;
}

ConstraintRows ValueLearning::step(const Eigen::Ref<const RowMatrix>& r, int threads, const ProgressFn* progress) {
  const DecisionProblem& p = problem_;
  const Index S = samples_.rows(), K = p.clips, nb = p.features, dim = p.dim;
  const std::vector<Index> best = best_clips(r, threads, progress);
  std::vector<Index> fresh;
  for (Index s = 0; s < S; ++s) {
    if (best[s] < 0) continue;  // every clip forbidden: no constraint
    unsigned char& flag = seen_[std::size_t(s * K + best[s])];
    if (!flag) flag = 1, fresh.push_back(s);
  }
  const Index n = Index(fresh.size());
  history_.push_back(n);
  // rows of the new pairs, assembled in parallel into fixed slots
  ConstraintRows rows;
  rows.rhs.resize(n);
  std::vector<Index> clip_a(n), clip_b(n);
  RowMatrix block(n, 2 * nb);
  parallel_steps(n, threads, nullptr, n, [&] { return DecisionData(p); }, [&](Index i, DecisionData& d) {
    const Index s = fresh[i], k = best[s];
    const double* x = &samples_(s, 0);
    p.expand(x, d.next.data(), d.costs.data());
    rows.rhs[i] = d.costs[k];
    p.features_of(x, &block(i, 0), d.scratch.data());
    p.features_of(&d.next(k, 0), &block(i, nb), d.scratch.data());
    clip_a[i] = Index(x[0]);
    clip_b[i] = Index(d.next(k, 0));
    (void)dim;
  });
  rows.indptr.assign(1, 0);
  rows.indptr.reserve(n + 1);
  rows.indices.reserve(std::size_t(2 * n * nb));
  rows.values.reserve(std::size_t(2 * n * nb));
  auto push = [&](Index clip, const double* v, double scale) {
    for (Index j = 0; j < nb; ++j) {
      rows.indices.push_back(int(clip * nb + j));
      rows.values.push_back(scale * v[j]);
    }
  };
  for (Index i = 0; i < n; ++i) {
    const double* a = &block(i, 0);
    const double* b = &block(i, nb);
    if (clip_a[i] == clip_b[i]) {
      for (Index j = 0; j < nb; ++j) {
        rows.indices.push_back(int(clip_a[i] * nb + j));
        rows.values.push_back(a[j] - alpha_ * b[j]);
      }
    } else if (clip_a[i] < clip_b[i]) {
      push(clip_a[i], a, 1.0);
      push(clip_b[i], b, -alpha_);
    } else {
      push(clip_b[i], b, -alpha_);
      push(clip_a[i], a, 1.0);
    }
    rows.indptr.push_back((long long)rows.indices.size());
    pair_sample_.push_back(fresh[i]);
    pair_clip_.push_back(best[fresh[i]]);
  }
  for (Index i = 0; i < n; ++i)
    if (!std::isfinite(rows.rhs[i]))
      throw std::domain_error("the cost of sample " + std::to_string(fresh[i]) + " became non-finite in the LP rows");
  return rows;
}

void basis_values(const DecisionProblem& p, const Eigen::Ref<const RowMatrix>& r,
                  const Eigen::Ref<const RowMatrix>& states, Eigen::Ref<Eigen::VectorXd> values, int threads) {
  check_r(p, r);
  check_shape("values", values.size(), 1, states.rows(), 1);
  parallel_steps(states.rows(), threads, nullptr, states.rows(), [&] { return DecisionData(p); },
                 [&](Index s, DecisionData& d) { values[s] = basis_value(p, r.data(), states.row(s).data(), d); });
}

}  // namespace directable
