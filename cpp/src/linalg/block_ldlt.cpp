#include "directable/linalg/block_ldlt.hpp"

#include <Eigen/OrderingMethods>
#include <Eigen/SparseCore>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace directable {

namespace {

using FrontMap = Eigen::Map<Eigen::MatrixXd, 0, Eigen::OuterStride<>>;

//! Column structures of the group-level factor for an elimination order:
//! structure[k] = the groups (by elimination step, ascending) below k in
//! column k of L; parent[k] = its first entry or -1 (the elimination tree).
void symbolic(const std::vector<std::vector<int>>& graph, const std::vector<int>& order, std::vector<int>& parent,
              std::vector<std::vector<int>>& structure) {
  const int G = static_cast<int>(order.size());
  std::vector<int> position(G);
  for (int k = 0; k < G; ++k) position[order[k]] = k;
  std::vector<std::vector<int>> children(G);
  std::vector<int> mark(G, -1);
  parent.assign(G, -1);
  structure.assign(G, {});
  for (int k = 0; k < G; ++k) {
    std::vector<int>& s = structure[k];
    mark[k] = k;
    for (int g : graph[order[k]]) {
      const int q = position[g];
      if (q > k && mark[q] != k) {
        mark[q] = k;
        s.push_back(q);
      }
    }
    for (int c : children[k])
      for (int q : structure[c])
        if (mark[q] != k) {
          mark[q] = k;
          s.push_back(q);
        }
    std::sort(s.begin(), s.end());
    if (!s.empty()) {
      parent[k] = s.front();
      children[s.front()].push_back(k);
    }
  }
}

}  // namespace

BlockLDLT::BlockLDLT(Index n, int b, const std::vector<int>& row_offsets, const std::vector<int>& columns)
    : n_(n), b_(b) {
  if (b < 1 || n < 1 || n % b != 0)
    throw std::invalid_argument("BlockLDLT: the size n = " + std::to_string(n) + " must be a positive multiple of the group size " +
                                std::to_string(b));
  if (static_cast<Index>(row_offsets.size()) != n + 1 || row_offsets.front() != 0 ||
      row_offsets.back() != static_cast<int>(columns.size()))
    throw std::invalid_argument("BlockLDLT: row_offsets must have n + 1 = " + std::to_string(n + 1) +
                                " entries from 0 to nnz = " + std::to_string(columns.size()));
  groups_ = n / b;
  const int G = static_cast<int>(groups_);
  // the group graph, and checks of the scalar pattern against it
  std::vector<std::vector<int>> graph(G);
  for (int g = 0; g < G; ++g) {
    std::vector<int>& nb = graph[g];
    for (int e = row_offsets[b * g]; e < row_offsets[b * g + 1]; ++e) {
      if (columns[e] < 0 || columns[e] >= n)
        throw std::invalid_argument("BlockLDLT: column " + std::to_string(columns[e]) + " out of range [0, " + std::to_string(n) + ")");
      nb.push_back(columns[e] / b);
    }
    std::sort(nb.begin(), nb.end());
    nb.erase(std::unique(nb.begin(), nb.end()), nb.end());
    if (!std::binary_search(nb.begin(), nb.end(), g))
      throw std::invalid_argument("BlockLDLT: the pattern lacks the diagonal block of group " + std::to_string(g));
    for (int r = b * g; r < b * g + b; ++r) {
      const int count = row_offsets[r + 1] - row_offsets[r];
      if (count != b * static_cast<int>(nb.size()))
        throw std::invalid_argument("BlockLDLT: row " + std::to_string(r) + " does not list full " + std::to_string(b) +
                                    "-column groups");
    }
  }
  for (int g = 0; g < G; ++g)
    for (int h : graph[g])
      if (!std::binary_search(graph[h].begin(), graph[h].end(), g))
        throw std::invalid_argument("BlockLDLT: the pattern is not symmetric (groups " + std::to_string(g) + " and " +
                                    std::to_string(h) + ")");

  // AMD on the group graph, then a postorder of its elimination tree (same
  // fill) so that supernodes and their children are contiguous
  std::vector<int> amd(G);
  {
    std::vector<Eigen::Triplet<double>> t;
    for (int g = 0; g < G; ++g)
      for (int h : graph[g]) t.emplace_back(h, g, 1.0);
    Eigen::SparseMatrix<double, Eigen::ColMajor, int> P(G, G);
    P.setFromTriplets(t.begin(), t.end());
    Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> perm;
    Eigen::AMDOrdering<int>()(P, perm);
    // perm.indices()[k] = the group eliminated k-th
    for (int k = 0; k < G; ++k) amd[k] = perm.indices()[k];
  }
  std::vector<int> parent;
  std::vector<std::vector<int>> structure;
  symbolic(graph, amd, parent, structure);
  {
    std::vector<std::vector<int>> kids(G);
    std::vector<int> roots;
    for (int k = 0; k < G; ++k) (parent[k] < 0 ? roots : kids[parent[k]]).push_back(k);
    order_.clear();
    std::vector<std::pair<int, std::size_t>> stack;
    for (int r : roots) {
      stack.push_back({r, 0});
      while (!stack.empty()) {
        auto& [k, next] = stack.back();
        if (next < kids[k].size()) {
          const int c = kids[k][next++];
          stack.push_back({c, 0});
        } else {
          order_.push_back(amd[k]);
          stack.pop_back();
        }
      }
    }
  }
  symbolic(graph, order_, parent, structure);
  position_.assign(G, 0);
  for (int k = 0; k < G; ++k) position_[order_[k]] = k;

  // fundamental supernodes: k joins k - 1 when k - 1 is its only child and
  // column k - 1 is column k plus k itself
  std::vector<int> child_count(G, 0);
  for (int k = 0; k < G; ++k)
    if (parent[k] >= 0) ++child_count[parent[k]];
  first_.assign(1, 0);
  for (int k = 1; k < G; ++k)
    if (!(parent[k - 1] == k && child_count[k] == 1 && structure[k - 1].size() == structure[k].size() + 1))
      first_.push_back(k);
  first_.push_back(G);
  const int S = static_cast<int>(first_.size()) - 1;
  std::vector<int> supernode_of(G);
  for (int s = 0; s < S; ++s)
    for (int k = first_[s]; k < first_[s + 1]; ++k) supernode_of[k] = s;

  front_start_.assign(1, 0);
  front_offset_.assign(1, 0);
  front_groups_.clear();
  std::vector<int> parent_sn(S, -1);
  for (int s = 0; s < S; ++s) {
    for (int k = first_[s]; k < first_[s + 1]; ++k) front_groups_.push_back(k);
    const std::vector<int>& below = structure[first_[s + 1] - 1];
    front_groups_.insert(front_groups_.end(), below.begin(), below.end());
    front_start_.push_back(static_cast<int>(front_groups_.size()));
    const Index f = b_ * static_cast<Index>(front_start_[s + 1] - front_start_[s]);
    const Index p = b_ * static_cast<Index>(first_[s + 1] - first_[s]), u = f - p;
    front_offset_.push_back(front_offset_.back() + f * f);
    max_panel_ = std::max(max_panel_, u * p);
    max_below_ = std::max(max_below_, u);
    if (!below.empty()) parent_sn[s] = supernode_of[below.front()];
    for (Index j = 0; j < p; ++j) {
      const double c = static_cast<double>(p - 1 - j + u);
      factor_nonzeros_ += static_cast<Index>(c);
      flops_ += 0.5 * c * (c + 1.0);
    }
  }
  front_total_ = front_offset_.back();
  children_start_.assign(S + 1, 0);
  for (int s = 0; s < S; ++s)
    if (parent_sn[s] >= 0) ++children_start_[parent_sn[s] + 1];
  for (int s = 0; s < S; ++s) children_start_[s + 1] += children_start_[s];
  children_.assign(children_start_[S], 0);
  {
    std::vector<int> fill(children_start_.begin(), children_start_.end() - 1);
    for (int s = 0; s < S; ++s)
      if (parent_sn[s] >= 0) children_[fill[parent_sn[s]]++] = s;
  }
  // positions of each supernode's below groups in its parent's front
  relative_start_.assign(1, 0);
  relative_.clear();
  for (int s = 0; s < S; ++s) {
    const int np = first_[s + 1] - first_[s];
    if (parent_sn[s] >= 0) {
      const int* pb = front_groups_.data() + front_start_[parent_sn[s]];
      const int* pe = front_groups_.data() + front_start_[parent_sn[s] + 1];
      for (int t = front_start_[s] + np; t < front_start_[s + 1]; ++t)
        relative_.push_back(static_cast<int>(std::lower_bound(pb, pe, front_groups_[t]) - pb));
    }
    relative_start_.push_back(static_cast<int>(relative_.size()));
  }
  // where each stored value goes: the entries on or below the diagonal in elimination order
  std::vector<std::vector<std::pair<int, int>>> per_sn(S);
  for (Index r = 0; r < n; ++r) {
    const int pr = position_[r / b], ir = static_cast<int>(r % b);
    for (int e = row_offsets[r]; e < row_offsets[r + 1]; ++e) {
      const int c = columns[e], pc = position_[c / b], ic = c % b;
      if (pr < pc || (pr == pc && ir < ic)) continue;
      const int s = supernode_of[pc];
      const int* fb = front_groups_.data() + front_start_[s];
      const int* fe = front_groups_.data() + front_start_[s + 1];
      const Index f = b_ * (fe - fb);
      const Index row = b_ * (std::lower_bound(fb, fe, pr) - fb) + ir;
      const Index col = b_ * static_cast<Index>(pc - first_[s]) + ic;
      per_sn[s].push_back({e, static_cast<int>(col * f + row)});
    }
  }
  scatter_start_.assign(1, 0);
  for (int s = 0; s < S; ++s) {
    std::sort(per_sn[s].begin(), per_sn[s].end(), [](auto x, auto y) { return x.second < y.second; });
    for (auto [e, d] : per_sn[s]) {
      scatter_src_.push_back(e);
      scatter_dst_.push_back(d);
    }
    scatter_start_.push_back(static_cast<int>(scatter_src_.size()));
  }
}

BlockLDLTData BlockLDLT::create_data() const {
  BlockLDLTData d;
  d.fronts.setZero(front_total_);
  d.panel.setZero(std::max<Index>(max_panel_, 1));
  d.work.setZero(n_);
  d.below.setZero(std::max<Index>(max_below_, 1));
  return d;
}

bool BlockLDLT::factorize(const double* values, BlockLDLTData& d) const {
  d.factorized = false;
  d.failed_pivot = -1;
  const int S = static_cast<int>(first_.size()) - 1;
  const Index b = b_;
  double* fronts = d.fronts.data();
  for (int s = 0; s < S; ++s) {
    const Index f = b * (front_start_[s + 1] - front_start_[s]);
    const Index p = b * (first_[s + 1] - first_[s]), u = f - p;
    double* F = fronts + front_offset_[s];
    for (Index j = 0; j < f; ++j) std::fill(F + j * f + j, F + (j + 1) * f, 0.0);
    for (int k = scatter_start_[s]; k < scatter_start_[s + 1]; ++k) F[scatter_dst_[k]] = values[scatter_src_[k]];
    // extend-add of the children's update matrices
    for (int ci = children_start_[s]; ci < children_start_[s + 1]; ++ci) {
      const int c = children_[ci];
      const Index fc = b * (front_start_[c + 1] - front_start_[c]);
      const Index pc = b * (first_[c + 1] - first_[c]);
      const Index nbc = (fc - pc) / b;
      const double* C = fronts + front_offset_[c] + pc * fc + pc;  // its update matrix, leading dimension fc
      const int* rel = relative_.data() + relative_start_[c];
      for (Index jb = 0; jb < nbc; ++jb)
        for (Index jj = 0; jj < b; ++jj) {
          const double* src = C + (jb * b + jj) * fc;
          double* dst = F + (rel[jb] * b + jj) * f;
          for (Index ii = jj; ii < b; ++ii) dst[rel[jb] * b + ii] += src[jb * b + ii];
          for (Index ib = jb + 1; ib < nbc; ++ib) {
            const Index r = rel[ib] * b;
            for (Index ii = 0; ii < b; ++ii) dst[r + ii] += src[ib * b + ii];
          }
        }
    }
    // dense LDL' of the p pivot columns (right-looking within F11)
    for (Index k = 0; k < p; ++k) {
      double* colk = F + k * f;
      const double dk = colk[k];
      if (!(std::isfinite(dk) && dk != 0.0)) {
        d.failed_pivot = b * order_[first_[s] + k / b] + k % b;
        return false;
      }
      for (Index j = k + 1; j < p; ++j) {
        const double l = colk[j] / dk;
        double* colj = F + j * f;
        for (Index i = j; i < p; ++i) colj[i] -= colk[i] * l;
      }
      for (Index i = k + 1; i < p; ++i) colk[i] /= dk;
    }
    if (u == 0) continue;
    FrontMap Fm(F, f, f, Eigen::OuterStride<>(f));
    auto L11 = Fm.topLeftCorner(p, p);
    auto F21 = Fm.bottomLeftCorner(u, p);
    // F21 <- F21 L11^-T = L21 D, kept in panel; then L21 = F21 D^-1 and F22 -= L21 D L21'
    L11.triangularView<Eigen::UnitLower>().transpose().solveInPlace<Eigen::OnTheRight>(F21);
    FrontMap W(d.panel.data(), u, p, Eigen::OuterStride<>(u));
    W = F21;
    for (Index k = 0; k < p; ++k) F21.col(k) /= L11(k, k);
    Fm.bottomRightCorner(u, u).triangularView<Eigen::Lower>() -= F21 * W.transpose();
  }
  d.factorized = true;
  return true;
}

void BlockLDLT::solve(BlockLDLTData& d, Eigen::Ref<Eigen::VectorXd> x) const {
  if (!d.factorized) throw std::logic_error("BlockLDLT::solve: no successful factorisation in this data");
  if (x.size() != n_)
    throw std::invalid_argument("BlockLDLT::solve: x must have " + std::to_string(n_) + " entries, got " + std::to_string(x.size()));
  const int S = static_cast<int>(first_.size()) - 1;
  const Index b = b_, G = groups_;
  double* w = d.work.data();
  for (Index k = 0; k < G; ++k)
    for (Index i = 0; i < b; ++i) w[k * b + i] = x[order_[k] * b + i];
  const double* fronts = d.fronts.data();
  // forward: L y = P x
  for (int s = 0; s < S; ++s) {
    const Index f = b * (front_start_[s + 1] - front_start_[s]);
    const Index np = first_[s + 1] - first_[s], p = b * np, u = f - p;
    Eigen::Map<const Eigen::MatrixXd, 0, Eigen::OuterStride<>> Fm(fronts + front_offset_[s], f, f, Eigen::OuterStride<>(f));
    Eigen::Map<Eigen::VectorXd> xs(w + first_[s] * b, p);
    Fm.topLeftCorner(p, p).triangularView<Eigen::UnitLower>().solveInPlace(xs);
    if (u == 0) continue;
    Eigen::Map<Eigen::VectorXd> t(d.below.data(), u);
    t.noalias() = Fm.bottomLeftCorner(u, p) * xs;
    const int* rows = front_groups_.data() + front_start_[s] + np;
    for (Index q = 0; q < u / b; ++q)
      for (Index i = 0; i < b; ++i) w[rows[q] * b + i] -= t[q * b + i];
  }
  // D
  for (int s = 0; s < S; ++s) {
    const Index f = b * (front_start_[s + 1] - front_start_[s]);
    const Index p = b * (first_[s + 1] - first_[s]);
    const double* F = fronts + front_offset_[s];
    for (Index k = 0; k < p; ++k) w[first_[s] * b + k] /= F[k * f + k];
  }
  // backward: L' z = y
  for (int s = S - 1; s >= 0; --s) {
    const Index f = b * (front_start_[s + 1] - front_start_[s]);
    const Index np = first_[s + 1] - first_[s], p = b * np, u = f - p;
    Eigen::Map<const Eigen::MatrixXd, 0, Eigen::OuterStride<>> Fm(fronts + front_offset_[s], f, f, Eigen::OuterStride<>(f));
    Eigen::Map<Eigen::VectorXd> xs(w + first_[s] * b, p);
    if (u > 0) {
      Eigen::Map<Eigen::VectorXd> t(d.below.data(), u);
      const int* rows = front_groups_.data() + front_start_[s] + np;
      for (Index q = 0; q < u / b; ++q)
        for (Index i = 0; i < b; ++i) t[q * b + i] = w[rows[q] * b + i];
      xs.noalias() -= Fm.bottomLeftCorner(u, p).transpose() * t;
    }
    Fm.topLeftCorner(p, p).transpose().triangularView<Eigen::UnitUpper>().solveInPlace(xs);
  }
  for (Index k = 0; k < G; ++k)
    for (Index i = 0; i < b; ++i) x[order_[k] * b + i] = w[k * b + i];
}

}  // namespace directable
