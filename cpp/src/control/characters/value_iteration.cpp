#include "directable/control/characters/value_iteration.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "directable/core/errors.hpp"
#include "directable/core/parallel.hpp"

namespace directable {

GridValue::GridValue(Index clips, std::vector<Eigen::VectorXd> axes, std::vector<bool> cyclic)
    : clips_(clips), axes_(std::move(axes)), cyclic_(std::move(cyclic)) {
  if (axes_.size() != cyclic_.size()) throw std::invalid_argument("grid: one cyclic flag per axis");
  points_ = 1;
  for (std::size_t i = 0; i < axes_.size(); ++i) {
    const auto& a = axes_[i];
    if (a.size() < 2) throw std::invalid_argument("grid axis " + std::to_string(i) + " must hold >= 2 points, got " + std::to_string(a.size()));
    check_finite("grid axis", a.data(), a.size());
    for (Index j = 1; j < a.size(); ++j)
      if (!(a[j] > a[j - 1])) throw std::invalid_argument("grid axis " + std::to_string(i) + " must be increasing");
    points_ *= a.size();
    const double step = (a[a.size() - 1] - a[0]) / double(a.size() - 1);
    bool even = true;
    for (Index j = 1; j < a.size(); ++j) even = even && std::abs((a[j] - a[j - 1]) - step) <= 1e-12 * std::abs(step);
    uniform_.push_back(even);
    inv_step_.push_back(1.0 / step);
  }
  values_ = RowMatrix::Zero(clips_, points_);
}

void GridValue::locate(Index i, double v, Index& lo, Index& hi, double& t) const {
  const auto& a = axes_[std::size_t(i)];
  const Index n = a.size();
  if (cyclic_[std::size_t(i)]) {
    const double h = 2.0 * M_PI / double(n);
    double s = (v - a[0]) / h;
    s -= double(n) * std::floor(s / double(n));
    Index j = Index(std::floor(s));
    if (j >= n) j = n - 1;
    lo = j;
    hi = (j + 1) % n;
    t = s - double(j);
  } else if (v <= a[0]) {
    lo = hi = 0, t = 0.0;
  } else if (v >= a[n - 1]) {
    lo = hi = n - 1, t = 0.0;
  } else if (uniform_[std::size_t(i)]) {
    // an evenly spaced axis: the cell by one division, not a search
    Index l = std::min(Index((v - a[0]) * inv_step_[std::size_t(i)]), n - 2);
    if (a[l] > v) --l;
    else if (a[l + 1] <= v) ++l;
    lo = l, hi = l + 1, t = (v - a[l]) / (a[l + 1] - a[l]);
  } else {
    Index l = 0, r = n - 1;  // a[l] <= v < a[r]
    while (r - l > 1) {
      const Index m = (l + r) / 2;
      (a[m] <= v ? l : r) = m;
    }
    lo = l, hi = r, t = (v - a[l]) / (a[r] - a[l]);
  }
}

Index GridValue::corners(const double* x, Index* index, double* weight) const {
  const Index D = Index(axes_.size());
  Index lo[8], hi[8];
  double t[8];
  for (Index i = 0; i < D; ++i) locate(i, x[i + 1], lo[i], hi[i], t[i]);
  const Index base = Index(x[0]) * points_;
  Index count = 0;
  for (Index mask = 0; mask < (Index(1) << D); ++mask) {
    double w = 1.0;
    Index flat = 0;
    for (Index i = 0; i < D; ++i) {
      const bool up = (mask >> i) & 1;
      w *= up ? t[i] : 1.0 - t[i];
      flat = flat * axes_[i].size() + (up ? hi[i] : lo[i]);
    }
    if (w == 0.0) continue;
    index[count] = base + flat;
    weight[count] = w;
    ++count;
  }
  return count;
}

double GridValue::operator()(const double* x) const {
  Index idx[256];
  double w[256];
  const Index n = corners(x, idx, w);
  double v = 0.0;
  const double* V = values_.data();
  for (Index i = 0; i < n; ++i) v += w[i] * V[idx[i]];
  return v;
}

void GridValue::point(Index c, Index g, double* x) const {
  x[0] = double(c);
  for (Index i = Index(axes_.size()) - 1; i >= 0; --i) {
    const Index n = axes_[i].size();
    x[i + 1] = axes_[i][g % n];
    g /= n;
  }
}

Index choose_by_grid(const DecisionProblem& p, const GridValue& grid, double alpha, const double* state,
                     DecisionData& data) {
  p.expand(state, data.next.data(), data.costs.data());
  Index best = -1;
  double best_value = std::numeric_limits<double>::infinity();
  for (Index k = 0; k < p.clips; ++k) {
    if (!std::isfinite(data.costs[k])) continue;
    const double v = data.costs[k] + alpha * grid(&data.next(k, 0));
    if (v < best_value) best_value = v, best = k;
  }
  return best;
}

ValueIterationResult value_iteration(const DecisionProblem& p, GridValue& grid, double alpha, double tol,
                                     Index max_sweeps, int threads, const ProgressFn* progress) {
  if (!(alpha >= 0.0 && alpha < 1.0)) throw std::domain_error("alpha must lie in [0, 1), got " + std::to_string(alpha));
  if (!(tol > 0.0)) throw std::domain_error("tol must be > 0, got " + std::to_string(tol));
  if (Index(grid.axes().size()) + 1 != p.dim)
    throw std::invalid_argument("grid must give one axis per continuous variable (" + std::to_string(p.dim - 1) +
                                "), got " + std::to_string(grid.axes().size()));
  if (grid.axes().size() > 8) throw std::invalid_argument("grid: at most 8 continuous axes");
  const Index K = p.clips, G = grid.points(), N = K * G, D = p.dim - 1, C = Index(1) << D;
  // the chosen policy's successors: corners and weights, and its cost
  std::vector<int> corner_index(std::size_t(N * C), 0);
  std::vector<double> corner_weight(std::size_t(N * C), 0.0);
  Eigen::VectorXd cost(N), next_values(N);
  RowMatrix& V = grid.values();
  V.setZero();
  ValueIterationResult out;
  constexpr Index kBlock = 256;  // grid points per work item (see value_learning.cpp)
  const Index nblocks = (N + kBlock - 1) / kBlock;
  // the policy of the last full sweep: tried first at the next one, so the
  // bound below discards most other clips without interpolating
  std::vector<Index> policy(std::size_t(N), -1);
  std::vector<Index> block_changed(std::size_t(nblocks), 0);
  std::vector<double> block_change(std::size_t(nblocks), 0.0);
  // per clip and point of the last axis: the least grid value over the other axes. V interpolated in a
  // last-axis cell [lo, hi] is a convex combination of grid values, so it is at least the smaller of
  // the two: an exact lower bound, found without interpolating
  const Index D1 = Index(grid.axes().size()) - 1, L = grid.axes().back().size(), inner = G / L;
  RowMatrix low(K, L);
  ProgressThrottle throttle(progress, max_sweeps);
  for (out.sweeps = 1; out.sweeps <= max_sweeps; ++out.sweeps) {
    for (Index c = 0; c < K; ++c)
      low.row(c) = Eigen::Map<const RowMatrix>(V.row(c).data(), inner, L).colwise().minCoeff();
    // full Bellman sweep: greedy policy under V, its successors' weights
    parallel_steps(nblocks, threads, nullptr, nblocks, [&] { return std::make_pair(DecisionData(p), Eigen::VectorXd(p.dim)); },
                   [&](Index blk, std::pair<DecisionData, Eigen::VectorXd>& w) {
                    Index changed = 0;
                    for (Index n = blk * kBlock; n < std::min(N, (blk + 1) * kBlock); ++n) {
                     double* x = w.second.data();
                     grid.point(n / G, n % G, x);
                     DecisionData& d = w.first;
                     p.expand(x, d.next.data(), d.costs.data());
                     double best = std::numeric_limits<double>::infinity();
                     Index best_k = -1;
                     // a clip is skipped, exactly, when even the least V of its next clip cannot beat the best
                     // so far (ties go to the lowest k, as in a plain scan)
                     auto consider = [&](Index k) {
                       const double c = d.costs[k];
                       if (!std::isfinite(c)) return;
                       Index lo, hi;
                       double t;
                       grid.locate(D1, d.next(k, D1 + 1), lo, hi, t);
                       const Index nc = Index(d.next(k, 0));
                       const double bound = c + alpha * std::min(low(nc, lo), low(nc, hi));
                       if (bound > best || (bound == best && k > best_k)) return;
                       const double v = c + alpha * grid(&d.next(k, 0));
                       if (v < best || (v == best && k < best_k)) best = v, best_k = k;
                     };
                     const Index first = policy[std::size_t(n)];
                     if (first >= 0) consider(first);
                     for (Index k = 0; k < K; ++k)
                       if (k != first) consider(k);
                     changed += best_k != first;
                     policy[std::size_t(n)] = best_k;
                     next_values[n] = best;
                     cost[n] = best_k >= 0 ? d.costs[best_k] : std::numeric_limits<double>::infinity();
                     Index idx[256];
                     double wt[256];
                     const Index m = best_k >= 0 ? grid.corners(&d.next(best_k, 0), idx, wt) : 0;
                     for (Index c = 0; c < C; ++c) {
                       corner_index[std::size_t(n * C + c)] = c < m ? int(idx[c]) : 0;
                       corner_weight[std::size_t(n * C + c)] = c < m ? wt[c] : 0.0;
                     }
                    }
                    block_changed[std::size_t(blk)] = changed;
                   });
    double residual = 0.0;
    const double* Vd = V.data();
    for (Index n = 0; n < N; ++n)
      if (std::isfinite(next_values[n])) residual = std::max(residual, std::abs(next_values[n] - Vd[n]));
      else throw std::domain_error("value_iteration: grid point " + std::to_string(n % G) + " of clip " +
                                   std::to_string(n / G) + " has no allowed next clip");
    out.residual = residual;
    Eigen::Map<Eigen::VectorXd>(V.data(), N) = next_values;
    if (!throttle.report(out.sweeps)) throw Cancelled();
    if (residual <= tol) break;
    // evaluate the fixed policy on the stored weights (modified policy
    // iteration). While the policy still changes, only as far as the outer
    // residual warrants, since the next full sweep changes it anyway; once
    // a sweep changed at most one point in 1000 (near-ties), to the
    // tolerance, so the next sweep is usually the last (the stopping rule
    // stays the Bellman residual). In parallel, in fixed blocks.
    Index changed = 0;
    for (Index c : block_changed) changed += c;
    const double settle = changed * 1000 <= N ? 0.1 * tol * (1.0 - alpha) : std::max(0.1 * tol, 1e-4 * residual);
    for (Index e = 0; e < 100000; ++e) {
      const double* Vc = V.data();
      parallel_steps(nblocks, threads, nullptr, nblocks, [] { return 0; }, [&](Index blk, int&) {
        double change = 0.0;
        for (Index n = blk * kBlock; n < std::min(N, (blk + 1) * kBlock); ++n) {
          const int* ci = &corner_index[std::size_t(n * C)];
          const double* cw = &corner_weight[std::size_t(n * C)];
          double v = 0.0;
          for (Index c = 0; c < C; ++c) v += cw[c] * Vc[ci[c]];
          next_values[n] = cost[n] + alpha * v;
          change = std::max(change, std::abs(next_values[n] - Vc[n]));
        }
        block_change[std::size_t(blk)] = change;
      });
      Eigen::Map<Eigen::VectorXd>(V.data(), N) = next_values;
      ++out.evaluations;
      if (*std::max_element(block_change.begin(), block_change.end()) <= settle) break;
      if (e % 16 == 15 && !throttle.report(out.sweeps)) throw Cancelled();
    }
  }
  if (out.sweeps > max_sweeps) out.sweeps = max_sweeps;
  throttle.finish(out.sweeps);
  return out;
}

}  // namespace directable
