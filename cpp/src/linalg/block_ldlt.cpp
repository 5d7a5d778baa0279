#include "directable/linalg/block_ldlt.hpp"

#include <Eigen/OrderingMethods>
#include <Eigen/SparseCore>
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

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

  // Fundamental supernodes (k joins k - 1 when k - 1 is its only child and
  // column k - 1 is column k plus k itself), then relaxed amalgamation: a
  // supernode merges into its parent when it is the parent's last child (so
  // that its groups come right before the parent's) and the merged
  // supernode stays small or stores few explicit zeros. Merging cuts the
  // number of small dense calls, which dominate at these sizes.
  std::vector<int> child_count(G, 0);
  for (int k = 0; k < G; ++k)
    if (parent[k] >= 0) ++child_count[parent[k]];
  std::vector<int> fund(1, 0);
  for (int k = 1; k < G; ++k)
    if (!(parent[k - 1] == k && child_count[k] == 1 && structure[k - 1].size() == structure[k].size() + 1))
      fund.push_back(k);
  fund.push_back(G);
  {
    const int F = static_cast<int>(fund.size()) - 1;
    std::vector<int> sn_of(G);
    for (int s = 0; s < F; ++s)
      for (int k = fund[s]; k < fund[s + 1]; ++k) sn_of[k] = s;
    // per (possibly merged) supernode ending at fundamental supernode s: its first group and stored zeros
    first_.clear();
    int begin = 0;
    double zeros = 0.0;
    for (int s = 0; s < F; ++s) {
      const std::vector<int>& below = structure[fund[s + 1] - 1];
      const int next = s + 1;
      bool merge = false;
      if (next < F && !below.empty() && sn_of[below.front()] == next) {
        // merged: the groups begin .. fund[next + 1] - 1 with the rows of next's front
        const double piv = fund[next + 1] - begin;
        const double rows_next = static_cast<double>(fund[next + 1] - fund[next]) +
                                 static_cast<double>(structure[fund[next + 1] - 1].size());
        const double own = static_cast<double>(fund[s + 1] - begin);
        // columns begin .. fund[s+1]-1 gain the rows of next's front they lack
        const double extra = own * (rows_next - static_cast<double>(below.size()));
        const double total = piv * (piv + 1.0) / 2.0 + piv * static_cast<double>(structure[fund[next + 1] - 1].size());
        const double z = zeros + extra;
        merge = piv <= 4.0 || (piv <= 16.0 && z <= 0.5 * total) || (piv <= 48.0 && z <= 0.1 * total);
        if (merge) zeros = z;
      }
      if (!merge) {
        first_.push_back(begin);
        stored_zeros_ += static_cast<Index>(zeros) * b_ * b_;
        begin = fund[s + 1];
        zeros = 0.0;
      }
    }
    first_.push_back(G);
  }
  const int S = static_cast<int>(first_.size()) - 1;
  supernode_of_.assign(G, 0);
  for (int s = 0; s < S; ++s)
    for (int k = first_[s]; k < first_[s + 1]; ++k) supernode_of_[k] = s;
  const std::vector<int>& supernode_of = supernode_of_;

  front_start_.assign(1, 0);
  panel_offset_.assign(1, 0);
  front_groups_.clear();
  std::vector<int> parent_sn(S, -1);
  for (int s = 0; s < S; ++s) {
    for (int k = first_[s]; k < first_[s + 1]; ++k) front_groups_.push_back(k);
    // rows below the pivots: the union of the pivot columns' structures (the last one's, unless merged)
    std::vector<int> below;
    for (int k = first_[s]; k < first_[s + 1]; ++k)
      for (int q : structure[k])
        if (q >= first_[s + 1]) below.push_back(q);
    std::sort(below.begin(), below.end());
    below.erase(std::unique(below.begin(), below.end()), below.end());
    front_groups_.insert(front_groups_.end(), below.begin(), below.end());
    front_start_.push_back(static_cast<int>(front_groups_.size()));
    const Index f = b_ * static_cast<Index>(front_start_[s + 1] - front_start_[s]);
    const Index p = b_ * static_cast<Index>(first_[s + 1] - first_[s]), u = f - p;
    panel_offset_.push_back(panel_offset_.back() + f * p);
    max_panel_ = std::max(max_panel_, std::max<Index>(u, 16) * p);  // L21 D, or a block of panel_ldlt
    max_below_ = std::max(max_below_, u);
    max_front_ = std::max(max_front_, f * f);
    if (!below.empty()) parent_sn[s] = supernode_of[below.front()];
    for (Index j = 0; j < p; ++j) {
      const double c = static_cast<double>(p - 1 - j + u);
      factor_nonzeros_ += static_cast<Index>(c);
      flops_ += 0.5 * c * (c + 1.0);
    }
  }
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
  // Each update matrix (u_s x u_s) lives from its supernode's factorisation
  // to its parent's, at an offset fixed here (first fit among the matrices
  // alive at the same time, the children of s among them): s's update is
  // formed in place there, and no front is copied onto a stack.
  update_offset_.assign(S, 0);
  {
    struct Live {
      Index offset, size;
      int parent;
    };
    std::vector<Live> live;  // sorted by offset
    for (int s = 0; s < S; ++s) {
      if (parent_sn[s] < 0) continue;
      // the matrices consumed before s are free
      live.erase(std::remove_if(live.begin(), live.end(), [&](const Live& l) { return l.parent < s; }), live.end());
      const Index u = b_ * Index(front_start_[s + 1] - front_start_[s]) - b_ * Index(first_[s + 1] - first_[s]);
      Index at = 0;
      auto pos = live.begin();
      for (; pos != live.end() && pos->offset < at + u * u; ++pos) at = std::max(at, pos->offset + pos->size);
      update_offset_[s] = at;
      live.insert(pos, Live{at, u * u, parent_sn[s]});
      updates_size_ = std::max(updates_size_, at + u * u);
    }
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
  // Where each stored value goes. Column (group k, component ic) of
  // supernode s's front takes the entries on or below the diagonal in
  // elimination order; by symmetry of the values they are those of CSR row
  // order_[k] * b + ic, so the map is one pass over the pattern (front
  // positions from a per-supernode table, no searches), and each front's
  // entries are written column by column.
  {
    std::vector<int> front_pos(G, -1);
    scatter_start_.assign(1, 0);
    scatter_src_.clear();
    scatter_dst_.clear();
    for (int s = 0; s < S; ++s) {
      const int fb = front_start_[s], fe = front_start_[s + 1];
      for (int t = fb; t < fe; ++t) front_pos[front_groups_[t]] = t - fb;
      const Index f = b_ * static_cast<Index>(fe - fb);
      for (int k = first_[s]; k < first_[s + 1]; ++k)
        for (int ic = 0; ic < b_; ++ic) {
          const Index col = b_ * static_cast<Index>(k - first_[s]) + ic;
          const Index r = static_cast<Index>(order_[k]) * b_ + ic;
          for (int e = row_offsets[r]; e < row_offsets[r + 1]; ++e) {
            const int c = columns[e], q = position_[c / b], ir = c % b;
            if (q < k || (q == k && ir < ic)) continue;
            scatter_src_.push_back(e);
            scatter_dst_.push_back(static_cast<int>(col * f + b_ * static_cast<Index>(front_pos[q]) + ir));
          }
        }
      scatter_start_.push_back(static_cast<int>(scatter_src_.size()));
    }
  }
}

BlockLDLTData BlockLDLT::create_data() const {
  BlockLDLTData d;
  d.factor.setZero(panel_offset_.back());
  d.updates.setZero(std::max<Index>(updates_size_, 1));
  d.panel.setZero(std::max<Index>(max_panel_, 1));
  d.work.setZero(n_);
  d.below.setZero(std::max<Index>(max_below_, 1));
  return d;
}

namespace {

#if defined(__AVX512F__)
// C -= A B' (or C = -A B') on the lower trapezoid of C (m x n, entries i >= j),
// A m x k and B n x k, all column-major and read in place. Tiles of 24 x 8
// of C stay in 24 AVX-512 registers over the whole k loop (A's 24 rows
// loaded, B's 8 entries broadcast per step); the bottom rows are masked and
// the tile on the diagonal stores only its lower part. At the fronts of a
// cloth (k <= 156, m <= 204) this runs at 2-3x the speed of Eigen's packed
// GEMM, whose packing costs as much as the products at these sizes.
template <int RV, int NC>
void lower_tile(Index k, const double* A, Index lda, const double* B, Index ldb, double* C, Index ldc, __mmask8 last,
                bool diagonal, bool assign) {
  // every loop over the tile unrolled, so that the accumulators live in registers only
  __m512d acc[RV][NC];
#pragma GCC unroll 4
  for (int v = 0; v < RV; ++v)
#pragma GCC unroll 8
    for (int c = 0; c < NC; ++c) acc[v][c] = _mm512_setzero_pd();
  for (Index l = 0; l < k; ++l, A += lda, B += ldb) {
    __m512d a[RV];
#pragma GCC unroll 4
    for (int v = 0; v < RV; ++v) a[v] = v + 1 < RV ? _mm512_loadu_pd(A + 8 * v) : _mm512_maskz_loadu_pd(last, A + 8 * v);
#pragma GCC unroll 8
    for (int c = 0; c < NC; ++c) {
      const __m512d b = _mm512_set1_pd(B[c]);
#pragma GCC unroll 4
      for (int v = 0; v < RV; ++v) acc[v][c] = _mm512_fmadd_pd(a[v], b, acc[v][c]);
    }
  }
#pragma GCC unroll 8
  for (int c = 0; c < NC; ++c)
#pragma GCC unroll 4
    for (int v = 0; v < RV; ++v) {
      __mmask8 mask = v + 1 < RV ? __mmask8(0xFF) : last;
      // on the diagonal tile row 8 v + r of column c is stored when 8 v + r >= c
      if (diagonal && c > 8 * v) mask &= __mmask8(0xFF << (c - 8 * v));
      double* out = C + 8 * v + c * ldc;
      const __m512d old = assign ? _mm512_setzero_pd() : _mm512_maskz_loadu_pd(mask, out);
      _mm512_mask_storeu_pd(out, mask, _mm512_sub_pd(old, acc[v][c]));
    }
}

using LowerTile = void (*)(Index, const double*, Index, const double*, Index, double*, Index, __mmask8, bool, bool);
template <int RV, int... NC>
constexpr std::array<LowerTile, sizeof...(NC)> lower_tiles(std::integer_sequence<int, NC...>) {
  return {&lower_tile<RV, NC + 1>...};
}
const std::array<std::array<LowerTile, 8>, 3> kLowerTiles = {lower_tiles<1>(std::make_integer_sequence<int, 8>()),
                                                            lower_tiles<2>(std::make_integer_sequence<int, 8>()),
                                                            lower_tiles<3>(std::make_integer_sequence<int, 8>())};
#endif

//! C (m x n, leading dimension ldc, m >= n) -= A B' (assign: C = -A B') on
//! the lower trapezoid (i >= j); A: m x k (lda), B: n x k (ldb).
void lower_update(Index m, Index n, Index k, const double* A, Index lda, const double* B, Index ldb, double* C, Index ldc,
                  bool assign) {
#if defined(__AVX512F__)
  for (Index j0 = 0; j0 < n; j0 += 8) {
    const Index nc = std::min<Index>(8, n - j0);
    for (Index i0 = j0; i0 < m; i0 += 24) {
      const Index rows = std::min<Index>(24, m - i0), rv = (rows + 7) / 8;
      const __mmask8 last = __mmask8((1u << (rows - 8 * (rv - 1))) - 1u);
      kLowerTiles[rv - 1][nc - 1](k, A + i0, lda, B + j0, ldb, C + i0 + j0 * ldc, ldc, last, i0 == j0, assign);
    }
  }
#else
  FrontMap Cm(C, m, n, Eigen::OuterStride<>(ldc));
  const Eigen::Map<const Eigen::MatrixXd, 0, Eigen::OuterStride<>> Am(A, m, k, Eigen::OuterStride<>(lda)),
      Bm(B, n, k, Eigen::OuterStride<>(ldb));
  if (assign) Cm.topRows(n).triangularView<Eigen::Lower>().setZero(), Cm.bottomRows(m - n).setZero();
  Cm.topRows(n).triangularView<Eigen::Lower>() -= Am.topRows(n) * Bm.transpose();
  if (m > n) Cm.bottomRows(m - n).noalias() -= Am.bottomRows(m - n) * Bm.transpose();
#endif
}

//! LDL' of the p columns of a panel (f x p, leading dimension f, lower part):
//! L (unit lower, f x p) and D (on the diagonal) in place. Left to right in
//! blocks of nb columns; within a block, groups of 3 columns are factorised
//! by rank-1 updates among themselves and update the rest of the block in
//! one fused pass (a third of the memory traffic of rank-1 updates); then
//! one product updates the columns right of the block. W: scratch of
//! (p - nb) x nb. Returns the first zero or non-finite pivot's column, or -1.
Index panel_ldlt(double* P, Index f, Index p, double* W) {
  constexpr Index nb = 16, ng = 3;
  for (Index k0 = 0; k0 < p; k0 += nb) {
    const Index k1 = std::min(p, k0 + nb);
    for (Index g0 = k0; g0 < k1; g0 += ng) {
      const Index g1 = std::min(k1, g0 + ng);
      for (Index k = g0; k < g1; ++k) {
        double* colk = P + k * f;
        const double dk = colk[k];
        if (!(std::isfinite(dk) && dk != 0.0)) return k;
        const double inv = 1.0 / dk;
        for (Index j = k + 1; j < g1; ++j) {
          const double l = colk[j] * inv;
          double* colj = P + j * f;
          for (Index i = j; i < f; ++i) colj[i] -= colk[i] * l;
        }
        for (Index i = k + 1; i < f; ++i) colk[i] *= inv;
      }
      // columns g1..k1-1 -= L(:, g) D_g L(j, g)'
      const Index w = g1 - g0;
      const double* a = P + g0 * f;
      for (Index j = g1; j < k1; ++j) {
        double* colj = P + j * f;
        if (w == 3) {
          const double* b = a + f;
          const double* c = b + f;
          const double ca = a[j] * a[g0], cb = b[j] * b[g0 + 1], cc = c[j] * c[g0 + 2];
          for (Index i = j; i < f; ++i) colj[i] -= a[i] * ca + b[i] * cb + c[i] * cc;
        } else {
          for (Index k = 0; k < w; ++k) {
            const double* colk = a + k * f;
            const double ck = colk[j] * colk[g0 + k];
            for (Index i = j; i < f; ++i) colj[i] -= colk[i] * ck;
          }
        }
      }
    }
    if (k1 == p) break;
    // columns k1..p-1, rows k1..f-1: -= L(rows, block) D L(k1..p-1, block)'. Only the lower triangle of
    // the square top part is needed: computing all of it would double the flops of a root front (u = 0).
    const Index rows = f - k1, cols = p - k1, w = k1 - k0;
    FrontMap Lb(P + k0 * f + k1, rows, w, Eigen::OuterStride<>(f));
    FrontMap Wb(W, cols, w, Eigen::OuterStride<>(cols));
    for (Index k = 0; k < w; ++k) Wb.col(k) = Lb.col(k).head(cols) * P[(k0 + k) * f + k0 + k];
    lower_update(rows, cols, w, Lb.data(), f, W, cols, P + k1 * f + k1, f, false);
  }
  return -1;
}

//! Adds the lower triangle of a child's update matrix C (uc x uc, column-
//! major, groups of b) for its group columns [jb0, jb1) into a target of
//! leading dimension ld whose row and column 0 is the parent front's row
//! and column `shift`; rel: the child's groups' positions in the parent
//! front. B: the group size when known at compile time (0: runtime b).
template <int B>
void extend_add(const double* C, Index uc, const int* rel, Index jb0, Index jb1, double* T, Index ld, Index shift,
                Index runtime_b) {
  const Index b = B > 0 ? B : runtime_b, nbc = uc / b;
  for (Index jb = jb0; jb < jb1; ++jb)
    for (Index jj = 0; jj < b; ++jj) {
      const double* src = C + (jb * b + jj) * uc;
      double* dst = T + (rel[jb] * b + jj - shift) * ld - shift;
      for (Index ii = jj; ii < b; ++ii) dst[rel[jb] * b + ii] += src[jb * b + ii];
      for (Index ib = jb + 1; ib < nbc; ++ib) {
        const Index r = rel[ib] * b;
        for (Index ii = 0; ii < b; ++ii) dst[r + ii] += src[ib * b + ii];
      }
    }
}

}  // namespace

void BlockLDLT::extend_add_children(int s, Index np, BlockLDLTData& d, double* T, Index ld, Index shift,
                                    bool panel_columns) const {
  const Index b = b_;
  for (int ci = children_start_[s]; ci < children_start_[s + 1]; ++ci) {
    const int c = children_[ci];
    const Index uc = b * (front_start_[c + 1] - front_start_[c]) - b * (first_[c + 1] - first_[c]);
    const Index nbc = uc / b;
    const double* C = d.updates.data() + update_offset_[c];
    const int* rel = relative_.data() + relative_start_[c];
    Index split = 0;  // the child's groups before `split` fall in the parent's pivot columns
    while (split < nbc && rel[split] < np) ++split;
    const Index jb0 = panel_columns ? 0 : split, jb1 = panel_columns ? split : nbc;
    if (b == 3)
      extend_add<3>(C, uc, rel, jb0, jb1, T, ld, shift, b);
    else
      extend_add<0>(C, uc, rel, jb0, jb1, T, ld, shift, b);
  }
}

void BlockLDLT::clear_panels(BlockLDLTData& d) const {
  d.factorized = false;
  if (d.factor.size() != panel_offset_.back())
    throw std::invalid_argument("BlockLDLT::clear_panels: the data was created by another factorisation");
  d.factor.setZero();
}

BlockLDLTSlot BlockLDLT::block_slot(Index g, Index h) const {
  if (g < 0 || g >= groups_ || h < 0 || h >= groups_)
    throw std::invalid_argument("BlockLDLT::block_slot: groups (" + std::to_string(g) + ", " + std::to_string(h) +
                                ") out of range [0, " + std::to_string(groups_) + ")");
  const int k = std::min(position_[g], position_[h]), q = std::max(position_[g], position_[h]);
  const int s = supernode_of_[k];
  const int* begin = front_groups_.data() + front_start_[s];
  const int* end = front_groups_.data() + front_start_[s + 1];
  const int* at = std::lower_bound(begin, end, q);
  if (at == end || *at != q)
    throw std::invalid_argument("BlockLDLT::block_slot: block (" + std::to_string(g) + ", " + std::to_string(h) +
                                ") is not in the pattern");
  const Index f = b_ * static_cast<Index>(end - begin);
  return {panel_offset_[s] + b_ * static_cast<Index>(k - first_[s]) * f + b_ * static_cast<Index>(at - begin), f};
}

bool BlockLDLT::factorize(const double* values, BlockLDLTData& d) const { return factorize_panels(values, d); }

bool BlockLDLT::factorize_assembled(BlockLDLTData& d) const { return factorize_panels(nullptr, d); }

bool BlockLDLT::factorize_panels(const double* values, BlockLDLTData& d) const {
  d.factorized = false;
  d.failed_pivot = -1;
  if (d.factor.size() != panel_offset_.back() || d.updates.size() != std::max<Index>(updates_size_, 1))
    throw std::invalid_argument("BlockLDLT::factorize: the data was created by another factorisation");
  const int S = static_cast<int>(first_.size()) - 1;
  const Index b = b_;
  for (int s = 0; s < S; ++s) {
    const Index np = first_[s + 1] - first_[s];
    const Index f = b * (front_start_[s + 1] - front_start_[s]), p = b * np, u = f - p;
    double* P = d.factor.data() + panel_offset_[s];
    if (values) {
      std::fill(P, P + f * p, 0.0);
      for (int k = scatter_start_[s]; k < scatter_start_[s + 1]; ++k) P[scatter_dst_[k]] = values[scatter_src_[k]];
    }
    // the children's update matrices, first their columns that fall in the panel
    extend_add_children(s, np, d, P, f, 0, true);
    const Index bad = panel_ldlt(P, f, p, d.panel.data());
    if (bad >= 0) {
      d.failed_pivot = b * order_[first_[s] + bad / b] + bad % b;
      return false;
    }
    if (u == 0) continue;
    // update matrix U = -L21 D L21' (lower) in its place, then the children's columns beyond the panel
    FrontMap L21(P + p, u, p, Eigen::OuterStride<>(f));
    FrontMap W(d.panel.data(), u, p, Eigen::OuterStride<>(u));
    for (Index k = 0; k < p; ++k) W.col(k) = L21.col(k) * P[k * f + k];
    double* U = d.updates.data() + update_offset_[s];
    lower_update(u, u, p, L21.data(), f, W.data(), u, U, u, true);
    extend_add_children(s, np, d, U, u, p, false);
  }
  d.factorized = true;
  return true;
}

void BlockLDLT::solve(BlockLDLTData& d, Eigen::Ref<Eigen::VectorXd> x) const {
  if (!d.factorized) throw std::logic_error("BlockLDLT::solve: no successful factorisation in this data");
  if (x.size() != n_)
    throw std::invalid_argument("BlockLDLT::solve: x must have " + std::to_string(n_) + " entries, got " + std::to_string(x.size()));
  using PanelMap = Eigen::Map<const Eigen::MatrixXd, 0, Eigen::OuterStride<>>;
  const int S = static_cast<int>(first_.size()) - 1;
  const Index b = b_, G = groups_;
  double* w = d.work.data();
  for (Index k = 0; k < G; ++k)
    for (Index i = 0; i < b; ++i) w[k * b + i] = x[order_[k] * b + i];
  const double* factor = d.factor.data();
  // forward: L y = P x
  for (int s = 0; s < S; ++s) {
    const Index f = b * (front_start_[s + 1] - front_start_[s]);
    const Index np = first_[s + 1] - first_[s], p = b * np, u = f - p;
    PanelMap L(factor + panel_offset_[s], f, p, Eigen::OuterStride<>(f));
    Eigen::Map<Eigen::VectorXd> xs(w + first_[s] * b, p);
    L.topRows(p).triangularView<Eigen::UnitLower>().solveInPlace(xs);
    if (u == 0) continue;
    Eigen::Map<Eigen::VectorXd> t(d.below.data(), u);
    t.noalias() = L.bottomRows(u) * xs;
    const int* rows = front_groups_.data() + front_start_[s] + np;
    for (Index q = 0; q < u / b; ++q)
      for (Index i = 0; i < b; ++i) w[rows[q] * b + i] -= t[q * b + i];
  }
  // D
  for (int s = 0; s < S; ++s) {
    const Index f = b * (front_start_[s + 1] - front_start_[s]);
    const Index p = b * (first_[s + 1] - first_[s]);
    const double* L = factor + panel_offset_[s];
    for (Index k = 0; k < p; ++k) w[first_[s] * b + k] /= L[k * f + k];
  }
  // backward: L' z = y
  for (int s = S - 1; s >= 0; --s) {
    const Index f = b * (front_start_[s + 1] - front_start_[s]);
    const Index np = first_[s + 1] - first_[s], p = b * np, u = f - p;
    PanelMap L(factor + panel_offset_[s], f, p, Eigen::OuterStride<>(f));
    Eigen::Map<Eigen::VectorXd> xs(w + first_[s] * b, p);
    if (u > 0) {
      Eigen::Map<Eigen::VectorXd> t(d.below.data(), u);
      const int* rows = front_groups_.data() + front_start_[s] + np;
      for (Index q = 0; q < u / b; ++q)
        for (Index i = 0; i < b; ++i) t[q * b + i] = w[rows[q] * b + i];
      xs.noalias() -= L.bottomRows(u).transpose() * t;
    }
    L.topRows(p).transpose().triangularView<Eigen::UnitUpper>().solveInPlace(xs);
  }
  for (Index k = 0; k < G; ++k)
    for (Index i = 0; i < b; ++i) x[order_[k] * b + i] = w[k * b + i];
}

}  // namespace directable
