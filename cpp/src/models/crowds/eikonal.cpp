#include "directable/models/crowds/eikonal.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "directable/core/errors.hpp"

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace directable {

namespace {

constexpr std::uint8_t kFar = 0, kCandidate = 1, kClosed = 2;  // closed: known, blocked or border
constexpr double kInf = std::numeric_limits<double>::infinity();

// Heap entries compare as one unsigned 128-bit number, the value's bits
// high and the padded cell index low: by value, then by flat index (the
// padded order is the flat order).
using HeapEntry = EikonalHeapEntry;
#if defined(__SIZEOF_INT128__)
inline unsigned __int128 wide(const HeapEntry& e) { return (static_cast<unsigned __int128>(e.key) << 64) | e.cell; }
inline bool less(const HeapEntry& a, const HeapEntry& b) { return wide(a) < wide(b); }
#else
inline bool less(const HeapEntry& a, const HeapEntry& b) { return a.key < b.key || (a.key == b.key && a.cell < b.cell); }
#endif
inline std::uint64_t key_bits(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}
constexpr HeapEntry kSentinel{~std::uint64_t(0), ~std::uint64_t(0)};

// Indexed binary min-heap with decrease-key, rooted at 1 so that the two
// children 2k, 2k + 1 of an entry lie side by side in one aligned 32 bytes
// (never split across cache lines). Taking the top out moves the hole at
// the root down along the smaller children to a leaf (one branch-free
// comparison per level; the sentinel after the last entry stands for a
// missing right child). The march pushes about one new cell per accepted
// cell: the first push after the top went out rises from that hole instead
// of from the end, and only a hole no push filled takes the last entry.
class IndexedHeap {
 public:
  // entries: at least N + 4 of them (the first 32-byte boundary in it is the
  // heap's entry 0)
  IndexedHeap(HeapEntry* entries, std::int32_t* slot)
      : h_(reinterpret_cast<HeapEntry*>((reinterpret_cast<std::uintptr_t>(entries) + 31) & ~std::uintptr_t(31))),
        slot_(slot) {
    h_[1] = kSentinel;
  }
  bool empty() const { return n_ == 0; }
  void push(Index c, double key) {
    const HeapEntry e{std::uint64_t(c), key_bits(key)};
    if (hole_) {  // a leaf: no entry has it as parent, so decreases meanwhile never read it
      place(hole_, e);
      hole_ = 0;
      return;
    }
    h_[n_ + 2] = kSentinel;
    place(++n_, e);
  }
  void decrease(Index c, double key) { place(slot_[c], HeapEntry{std::uint64_t(c), key_bits(key)}); }
  Index top() const { return Index(h_[1].cell); }
  // Takes the top out, leaving a hole at a leaf for the next push or close_top.
  void open_top() {
    std::int32_t k = 1;
    for (std::int32_t c = 2; c <= n_; c = 2 * k) {
      c += less(h_[c + 1], h_[c]);
      h_[k] = h_[c];
      slot_[h_[k].cell] = k;
      k = c;
    }
    hole_ = k;
  }
  // A hole that no push filled takes the last entry.
  void close_top() {
    if (!hole_) return;
    const std::int32_t k = hole_;
    hole_ = 0;
    const HeapEntry last = h_[n_];
    h_[n_--] = kSentinel;
    if (k <= n_) place(k, last);
  }

 private:
  void place(std::int32_t k, const HeapEntry e) {
    while (k > 1) {
      const std::int32_t parent = k >> 1;
      if (!less(e, h_[parent])) break;
      h_[k] = h_[parent];
      slot_[h_[k].cell] = k;
      k = parent;
    }
    h_[k] = e;
    slot_[e.cell] = k;
  }
  HeapEntry* h_;
  std::int32_t* slot_;
  std::int32_t n_ = 0, hole_ = 0;  // hole_: a leaf left by open_top, 0 when none
};

// Lazy deletion (std::push_heap / pop_heap on the workspace's buffer, the
// operations of std::priority_queue): every decrease pushes a new entry and
// stale ones are skipped when they reach the top.
class LazyHeap {
 public:
  LazyHeap(std::vector<HeapEntry>& storage, const std::uint8_t* state, const double* trial)
      : q_(storage), state_(state), trial_(trial) {
    q_.clear();
  }
  void push(Index c, double key) {
    q_.push_back(HeapEntry{std::uint64_t(c), key_bits(key)});
    std::push_heap(q_.begin(), q_.end(), greater);
  }
  void decrease(Index c, double key) { push(c, key); }
  bool empty() {
    while (!q_.empty() && (state_[q_.front().cell] == kClosed || q_.front().key != key_bits(trial_[q_.front().cell]))) {
      std::pop_heap(q_.begin(), q_.end(), greater);
      q_.pop_back();
    }
    return q_.empty();
  }
  Index top() const { return Index(q_.front().cell); }  // after empty() returned false
  void open_top() {
    std::pop_heap(q_.begin(), q_.end(), greater);
    q_.pop_back();
  }
  void close_top() {}

 private:
  static bool greater(const HeapEntry& a, const HeapEntry& b) { return less(b, a); }
  std::vector<HeapEntry>& q_;
  const std::uint8_t* state_;
  const double* trial_;
};

// The update of one cell (header comment) from the values of its E, N, W, S
// neighbours (+inf unless KNOWN) and h C of the moves into them (+inf where
// closed). Ties go to W and S. Every comparison is written as the vector
// form below evaluates it, so both give the same value.
inline double update_value(double kE, double kN, double kW, double kS, double cE, double cN, double cW, double cS) {
  const double bE = kE + cE, bW = kW + cW, bN = kN + cN, bS = kS + cS;
  const bool east = bE < bW, north = bN < bS;
  const double best_x = east ? bE : bW, best_y = north ? bN : bS;
  const double one_sided = best_y < best_x ? best_y : best_x;
  if (best_x == kInf || best_y == kInf) return one_sided;
  const double phi_x = east ? kE : kW, phi_y = north ? kN : kS;
  const double c_x = east ? cE : cW, c_y = north ? cN : cS;
  const double wx = 1.0 / (c_x * c_x), wy = 1.0 / (c_y * c_y), sw = wx + wy;
  const double diff = phi_x - phi_y;
  const double disc = sw - wx * wy * diff * diff;
  if (disc < 0.0) return one_sided;
  const double root = (phi_x * wx + phi_y * wy + std::sqrt(disc)) / sw;
  return root < (phi_x < phi_y ? phi_y : phi_x) ? one_sided : root;
}

// The updates of the four neighbours E, N, W, S of the padded cell p, into
// v. known (with two rows of +inf beyond each end) and moves (4 per padded
// cell) are the march's arrays, W the padded row length. The four updates
// are independent: one vector evaluation where AVX is compiled in, without a
// branch that depends on the front's shape.
inline void update_neighbours(const double* known, const double* moves, Index W, Index p, double* v) {
  const double* k = known + p;
  const double* m0 = moves + 4 * (p + 1);
  const double* m1 = moves + 4 * (p + W);
  const double* m2 = moves + 4 * (p - 1);
  const double* m3 = moves + 4 * (p - W);
#if defined(__AVX__)
  // lane l is the neighbour l (E, N, W, S); K<d>: the KNOWN value beside it in direction d
  const __m256d KE = _mm256_set_pd(k[1 - W], k[0], k[W + 1], k[2]);
  const __m256d KN = _mm256_set_pd(k[0], k[W - 1], k[2 * W], k[W + 1]);
  const __m256d KW = _mm256_set_pd(k[-W - 1], k[-2], k[W - 1], k[0]);
  const __m256d KS = _mm256_set_pd(k[-2 * W], k[-W - 1], k[0], k[1 - W]);
  // the neighbours' four costs side by side, transposed to one vector per direction
  const __m256d r0 = _mm256_loadu_pd(m0), r1 = _mm256_loadu_pd(m1), r2 = _mm256_loadu_pd(m2),
                r3 = _mm256_loadu_pd(m3);
  const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
  const __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
  const __m256d CE = _mm256_permute2f128_pd(t0, t2, 0x20), CN = _mm256_permute2f128_pd(t1, t3, 0x20);
  const __m256d CW = _mm256_permute2f128_pd(t0, t2, 0x31), CS = _mm256_permute2f128_pd(t1, t3, 0x31);
  const __m256d bE = _mm256_add_pd(KE, CE), bW = _mm256_add_pd(KW, CW);
  const __m256d bN = _mm256_add_pd(KN, CN), bS = _mm256_add_pd(KS, CS);
  const __m256d east = _mm256_cmp_pd(bE, bW, _CMP_LT_OQ), north = _mm256_cmp_pd(bN, bS, _CMP_LT_OQ);
  const __m256d best_x = _mm256_blendv_pd(bW, bE, east), best_y = _mm256_blendv_pd(bS, bN, north);
  const __m256d one_sided = _mm256_blendv_pd(best_x, best_y, _mm256_cmp_pd(best_y, best_x, _CMP_LT_OQ));
  const __m256d inf = _mm256_set1_pd(kInf);
  const __m256d both = _mm256_and_pd(_mm256_cmp_pd(best_x, inf, _CMP_NEQ_UQ), _mm256_cmp_pd(best_y, inf, _CMP_NEQ_UQ));
  const __m256d phi_x = _mm256_blendv_pd(KW, KE, east), phi_y = _mm256_blendv_pd(KS, KN, north);
  const __m256d c_x = _mm256_blendv_pd(CW, CE, east), c_y = _mm256_blendv_pd(CS, CN, north);
  const __m256d one = _mm256_set1_pd(1.0);
  const __m256d wx = _mm256_div_pd(one, _mm256_mul_pd(c_x, c_x)), wy = _mm256_div_pd(one, _mm256_mul_pd(c_y, c_y));
  const __m256d sw = _mm256_add_pd(wx, wy);
  const __m256d diff = _mm256_sub_pd(phi_x, phi_y);
  const __m256d disc = _mm256_sub_pd(sw, _mm256_mul_pd(_mm256_mul_pd(_mm256_mul_pd(wx, wy), diff), diff));
  const __m256d root = _mm256_div_pd(
      _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(phi_x, wx), _mm256_mul_pd(phi_y, wy)), _mm256_sqrt_pd(disc)), sw);
  const __m256d larger = _mm256_blendv_pd(phi_x, phi_y, _mm256_cmp_pd(phi_x, phi_y, _CMP_LT_OQ));
  // the root where both axes count, the discriminant is not negative and the root not below max(phi_x, phi_y)
  const __m256d two_sided = _mm256_and_pd(
      _mm256_and_pd(both, _mm256_cmp_pd(disc, _mm256_setzero_pd(), _CMP_NLT_UQ)), _mm256_cmp_pd(root, larger, _CMP_NLT_UQ));
  _mm256_storeu_pd(v, _mm256_blendv_pd(one_sided, root, two_sided));
#else
  v[0] = update_value(k[2], k[W + 1], k[0], k[1 - W], m0[kEast], m0[kNorth], m0[kWest], m0[kSouth]);
  v[1] = update_value(k[W + 1], k[2 * W], k[W - 1], k[0], m1[kEast], m1[kNorth], m1[kWest], m1[kSouth]);
  v[2] = update_value(k[0], k[W - 1], k[-2], k[-W - 1], m2[kEast], m2[kNorth], m2[kWest], m2[kSouth]);
  v[3] = update_value(k[1 - W], k[0], k[-W - 1], k[-2 * W], m3[kEast], m3[kNorth], m3[kWest], m3[kSouth]);
#endif
}

// The march on the padded grid of the workspace (cell (i, j) at (j + 1) W +
// i + 1, W = nx + 2, a closed border around): no bounds checks in the loop.
// Lays the workspace out for a march on cost (4 rows of stride
// cost_stride): states from blocked (or none), tentative and KNOWN values
// +inf, h C of each cell's four moves side by side. Returns whether every
// cost is >= 0 or +inf (false on a negative or NaN cost), so that checked
// callers validate in the same pass over cost.
bool lay_out(Index nx, Index ny, double h, const double* cost, Index cost_stride, const std::uint8_t* blocked,
             EikonalWorkspace& ws) {
  const Index W = nx + 2;
  std::uint8_t* state = ws.state.data();
  double* trial = ws.trial.data();
  double* known = ws.known.data() + 2 * W;
  double* moves = ws.moves.data();
  const double* c0 = cost;
  const double* c1 = cost + cost_stride;
  const double* c2 = cost + 2 * cost_stride;
  const double* c3 = cost + 3 * cost_stride;
  bool valid = true;
#if defined(__AVX__)
  const __m256d hh = _mm256_set1_pd(h), zero = _mm256_setzero_pd();
  __m256d ok = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
#endif
  for (Index j = 0; j < ny; ++j) {
    const Index row = (j + 1) * W + 1, r = j * nx;
    if (blocked) {
      for (Index i = 0; i < nx; ++i) state[row + i] = blocked[r + i] ? kClosed : kFar;
    } else {
      std::fill_n(state + row, nx, kFar);
    }
    std::fill_n(trial + row, nx, kInf);
    std::fill_n(known + row, nx, kInf);
    double* m = moves + 4 * row;
    Index i = 0;
#if defined(__AVX__)
    // four cells at a time: the four direction rows transposed to four cells' moves
    for (; i + 4 <= nx; i += 4) {
      const __m256d e = _mm256_loadu_pd(c0 + r + i), no = _mm256_loadu_pd(c1 + r + i),
                    w = _mm256_loadu_pd(c2 + r + i), so = _mm256_loadu_pd(c3 + r + i);
      ok = _mm256_and_pd(ok, _mm256_and_pd(_mm256_and_pd(_mm256_cmp_pd(e, zero, _CMP_GE_OQ), _mm256_cmp_pd(no, zero, _CMP_GE_OQ)),
                                           _mm256_and_pd(_mm256_cmp_pd(w, zero, _CMP_GE_OQ), _mm256_cmp_pd(so, zero, _CMP_GE_OQ))));
      const __m256d he = _mm256_mul_pd(hh, e), hn = _mm256_mul_pd(hh, no), hw = _mm256_mul_pd(hh, w),
                    hs = _mm256_mul_pd(hh, so);
      const __m256d t0 = _mm256_unpacklo_pd(he, hn), t1 = _mm256_unpackhi_pd(he, hn);
      const __m256d t2 = _mm256_unpacklo_pd(hw, hs), t3 = _mm256_unpackhi_pd(hw, hs);
      _mm256_storeu_pd(m + 4 * i, _mm256_permute2f128_pd(t0, t2, 0x20));
      _mm256_storeu_pd(m + 4 * i + 4, _mm256_permute2f128_pd(t1, t3, 0x20));
      _mm256_storeu_pd(m + 4 * i + 8, _mm256_permute2f128_pd(t0, t2, 0x31));
      _mm256_storeu_pd(m + 4 * i + 12, _mm256_permute2f128_pd(t1, t3, 0x31));
    }
#endif
    for (; i < nx; ++i) {
      const double e = c0[r + i], no = c1[r + i], w = c2[r + i], so = c3[r + i];
      valid &= (e >= 0.0) & (no >= 0.0) & (w >= 0.0) & (so >= 0.0);
      m[4 * i + kEast] = h * e, m[4 * i + kNorth] = h * no, m[4 * i + kWest] = h * w, m[4 * i + kSouth] = h * so;
    }
  }
#if defined(__AVX__)
  valid &= _mm256_movemask_pd(ok) == 0xF;
#endif
  return valid;
}

// f(c) for each unblocked goal cell c of n, in increasing order; eight
// bytes of the mask at a time, since goals are usually a few cells.
template <class F>
void for_each_goal(Index n, const std::uint8_t* goal, const std::uint8_t* blocked, F&& f) {
  Index c = 0;
  for (; c + 8 <= n; c += 8) {
    std::uint64_t word;
    std::memcpy(&word, goal + c, sizeof word);
    if (word == 0) continue;
    for (Index k = c; k < c + 8; ++k)
      if (goal[k] && !(blocked && blocked[k])) f(k);
  }
  for (; c < n; ++c)
    if (goal[c] && !(blocked && blocked[c])) f(c);
}

// The march on the workspace laid out by lay_out.
template <class Heap>
void march(Index nx, Index ny, const std::uint8_t* goal, const std::uint8_t* blocked, EikonalWorkspace& ws,
           Heap& heap, double* phi) {
  const Index n = nx * ny, W = nx + 2;
  std::uint8_t* state = ws.state.data();
  double* trial = ws.trial.data();
  double* known = ws.known.data() + 2 * W;
  double* moves = ws.moves.data();
  const Index offset[4] = {1, W, -1, -W};
  double v[4];
  // Unrolled: each direction's tests get branches of their own, which
  // predict better (the neighbour behind the front is mostly closed).
  auto relax = [&](Index p) {  // the values v of p's neighbours, computed
#pragma GCC unroll 4
    for (int d = 0; d < 4; ++d) {
      const Index q = p + offset[d];
      if (state[q] == kClosed || !(v[d] < trial[q])) continue;
      trial[q] = v[d];
      if (state[q] == kCandidate) {
        heap.decrease(q, v[d]);
      } else {
        state[q] = kCandidate;
        heap.push(q, v[d]);
      }
    }
  };
  auto padded = [&](Index c) { return (c / nx + 1) * W + c % nx + 1; };
  for_each_goal(n, goal, blocked, [&](Index c) {
    const Index p = padded(c);
    known[p] = trial[p] = 0.0, state[p] = kClosed;
  });
  for_each_goal(n, goal, blocked, [&](Index c) {
    update_neighbours(known, moves, W, padded(c), v);
    relax(padded(c));
  });
  // The neighbours' updates are issued before the top's hole moves down: their
  // divisions and square root run while the descent does (neither
  // reads what the other writes), and the misprediction at the end of that
  // loop no longer discards them.
  while (!heap.empty()) {
    const Index p = heap.top();
    state[p] = kClosed;
    known[p] = trial[p];
    update_neighbours(known, moves, W, p, v);
    heap.open_top();
    relax(p);
    heap.close_top();
  }
  for (Index j = 0; j < ny; ++j) std::copy_n(known + (j + 1) * W + 1, nx, phi + j * nx);
}

}  // namespace

namespace {

void march_with(Index nx, Index ny, const std::uint8_t* goal, const std::uint8_t* blocked, EikonalWorkspace& ws,
                double* phi, EikonalHeap kind) {
  if (kind == EikonalHeap::kIndexed) {
    IndexedHeap heap(ws.heap.data(), ws.slot.data());
    march(nx, ny, goal, blocked, ws, heap, phi);
  } else {
    LazyHeap heap(ws.lazy, ws.state.data(), ws.trial.data());
    march(nx, ny, goal, blocked, ws, heap, phi);
  }
}

}  // namespace

EikonalHeap eikonal_heap(const std::string& name) {
  if (name == "indexed") return EikonalHeap::kIndexed;
  if (name == "lazy") return EikonalHeap::kLazy;
  throw std::domain_error("heap must be 'indexed' or 'lazy', got '" + name + "'");
}

void EikonalWorkspace::resize(Index nx_new, Index ny_new, EikonalHeap kind) {
  const Index W = nx_new + 2, padded = W * (ny_new + 2);
  if (padded + 1 > Index(std::numeric_limits<std::int32_t>::max()))
    throw std::invalid_argument("grid (ny, nx) must have fewer than 2^31 cells with its border, got (" +
                                std::to_string(ny_new) + ", " + std::to_string(nx_new) + ")");
  if (nx_new != nx || ny_new != ny) {
    nx = nx_new, ny = ny_new;
    state.assign(padded, kClosed);
    trial.assign(padded, kInf);
    known.assign(padded + 4 * W, kInf);
    moves.assign(4 * padded, kInf);
    slot.assign(padded, 0);
    heap.assign(padded + 4, kSentinel);
  }
  // the lazy heap holds up to one entry per improvement: at most 4 per accepted cell
  if (kind == EikonalHeap::kLazy && lazy.capacity() < std::size_t(4 * padded)) lazy.reserve(4 * padded);
}

void eikonal_unchecked(Index nx, Index ny, double h, const Eigen::Ref<const RowMatrix>& cost,
                       const std::vector<std::uint8_t>& goal, const std::vector<std::uint8_t>& blocked,
                       EikonalWorkspace& ws, Eigen::Ref<Eigen::VectorXd> phi, EikonalHeap kind) {
  ws.resize(nx, ny, kind);
  const std::uint8_t* b = blocked.empty() ? nullptr : blocked.data();
  lay_out(nx, ny, h, cost.data(), cost.outerStride(), b, ws);
  march_with(nx, ny, goal.data(), b, ws, phi.data(), kind);
}

void eikonal(Index nx, Index ny, double h, const Eigen::Ref<const RowMatrix>& cost,
             const std::vector<std::uint8_t>& goal, const std::vector<std::uint8_t>& blocked, EikonalWorkspace& ws,
             Eigen::Ref<Eigen::VectorXd> phi, EikonalHeap kind) {
  const Index n = nx * ny;
  if (nx < 1 || ny < 1)
    throw std::invalid_argument("grid size (nx, ny) must be at least (1, 1), got (" + std::to_string(nx) + ", " +
                                std::to_string(ny) + ")");
  if (!(h > 0.0) || !std::isfinite(h)) throw std::domain_error("h must be finite and > 0, got " + std::to_string(h));
  if (cost.rows() != 4 || cost.cols() != n)
    throw_shape("cost", "(4, " + std::to_string(ny) + ", " + std::to_string(nx) + ")",
                "(" + std::to_string(cost.rows()) + ", " + std::to_string(cost.cols()) + " cells)");
  const std::string cells = "(" + std::to_string(ny) + ", " + std::to_string(nx) + ")";
  if (Index(goal.size()) != n) throw_shape("goal", cells, "(" + std::to_string(goal.size()) + " cells)");
  if (!blocked.empty() && Index(blocked.size()) != n)
    throw_shape("blocked", cells, "(" + std::to_string(blocked.size()) + " cells)");
  if (phi.size() != n) throw_shape("phi", cells, "(" + std::to_string(phi.size()) + " cells)");
  std::uint8_t any = 0, free = 0;  // byte reductions without branches (they vectorise)
  const std::uint8_t* g = goal.data();
  for (Index k = 0; k < n; ++k) any |= g[k];
  if (blocked.empty()) {
    free = any;
  } else {
    const std::uint8_t* b = blocked.data();
    for (Index k = 0; k < n; ++k) free |= g[k] & std::uint8_t(-std::uint8_t(b[k] == 0));
  }
  if (!any) throw std::domain_error("goal must contain at least one goal cell, got an empty mask");
  if (!free) throw std::domain_error("goal must contain at least one unblocked cell, got a fully blocked goal");
  ws.resize(nx, ny, kind);
  const std::uint8_t* b = blocked.empty() ? nullptr : blocked.data();
  // the costs are checked in the layout's pass over them; the position only on failure
  if (!lay_out(nx, ny, h, cost.data(), cost.outerStride(), b, ws)) {
    const double* c = cost.data();
    const Index stride = cost.outerStride();
    for (Index d = 0; d < 4; ++d)
      for (Index k = 0; k < n; ++k)
        if (!(c[d * stride + k] >= 0.0))
          throw std::domain_error("cost must be >= 0 or +inf, got " + std::to_string(c[d * stride + k]) +
                                  " at flat index " + std::to_string(d * n + k));
  }
  march_with(nx, ny, goal.data(), b, ws, phi.data(), kind);
}

namespace {

// The faces of velocity_field (header comment), one at a time; unchecked.
// Holds pointers into the caller's arrays for the duration of one call.
class FaceVelocity {
 public:
  FaceVelocity(const CrowdGrid& grid, const double* phi, const double* cost, Index cost_stride, const double* speed,
               Index speed_stride)
      : nx_(grid.nx()), ny_(grid.ny()), h_(grid.h()), ih_(1.0 / grid.h()), blocked_(grid.blocked().data()),
        phi_(phi), cost_(cost), cs_(cost_stride), speed_(speed), ss_(speed_stride) {}
  bool usable(Index c) const { return !blocked_[c] && phi_[c] < kInf; }
  // Upwind difference of cell c along one axis (lo = W or S neighbour, hi =
  // E or N): the neighbour the march would pick, counted only below phi_c.
  double upwind(Index c, Index lo, Index hi, int d_lo, int d_hi) const {
    double best = kInf, g = 0.0;
    const double c_lo = cost_[d_lo * cs_ + c], c_hi = cost_[d_hi * cs_ + c];
    if (lo >= 0 && usable(lo) && c_lo < kInf) {
      best = phi_[lo] + h_ * c_lo;
      if (phi_[lo] < phi_[c]) g = (phi_[c] - phi_[lo]) * ih_;
    }
    if (hi >= 0 && usable(hi) && c_hi < kInf && phi_[hi] + h_ * c_hi < best)
      g = phi_[hi] < phi_[c] ? (phi_[hi] - phi_[c]) * ih_ : 0.0;
    return g;
  }
  double grad_y(Index i, Index j) const {
    const Index c = j * nx_ + i;
    return upwind(c, j > 0 ? c - nx_ : -1, j + 1 < ny_ ? c + nx_ : -1, kSouth, kNorth);
  }
  double grad_x(Index i, Index j) const {
    const Index c = j * nx_ + i;
    return upwind(c, i > 0 ? c - 1 : -1, i + 1 < nx_ ? c + 1 : -1, kWest, kEast);
  }
  // Normal component on the face between a (left/below) and b, with t the
  // mean tangential difference.
  double face(Index a, Index b, double t, int d_ab, int d_ba) const {
    const double d = (phi_[b] - phi_[a]) * ih_;
    if (d == 0.0) return 0.0;
    const double f = d < 0.0 ? speed_[d_ab * ss_ + a] : speed_[d_ba * ss_ + b];
    return -f * d / std::sqrt(d * d + t * t);
  }
  // x-face i (0..nx) of row j given the tangential differences of its two cells.
  double xface(Index i, Index j, double t_left, double t_right) const {
    if (i == 0 || i == nx_) return 0.0;
    const Index a = j * nx_ + i - 1, b = a + 1;
    return (usable(a) && usable(b)) ? face(a, b, 0.5 * (t_left + t_right), kEast, kWest) : 0.0;
  }
  double yface(Index i, Index j, double t_below, double t_above) const {
    if (j == 0 || j == ny_) return 0.0;
    const Index a = (j - 1) * nx_ + i, b = a + nx_;
    return (usable(a) && usable(b)) ? face(a, b, 0.5 * (t_below + t_above), kNorth, kSouth) : 0.0;
  }
  double xface(Index i, Index j) const {
    if (i == 0 || i == nx_) return 0.0;
    return xface(i, j, grad_y(i - 1, j), grad_y(i, j));
  }
  double yface(Index i, Index j) const {
    if (j == 0 || j == ny_) return 0.0;
    return yface(i, j, grad_x(i, j - 1), grad_x(i, j));
  }

 private:
  Index nx_, ny_;
  double h_, ih_;
  const std::uint8_t* blocked_;
  const double* phi_;
  const double* cost_;
  Index cs_;
  const double* speed_;
  Index ss_;
};

}  // namespace

void velocity_field(const CrowdGrid& grid, const Eigen::Ref<const Eigen::VectorXd>& phi,
                    const Eigen::Ref<const RowMatrix>& cost, const Eigen::Ref<const RowMatrix>& speed,
                    Eigen::Ref<Eigen::VectorXd> u) {
  // +inf is a value of phi (unreachable) and of cost (a closed direction); NaN and -inf are not
  for (Index c = 0; c < phi.size(); ++c)
    if (std::isnan(phi[c]) || phi[c] == -kInf)
      throw std::domain_error("phi must be a number or +inf (unreachable), got " + std::to_string(phi[c]) +
                              " at cell " + std::to_string(c));
  for (Index k = 0; k < cost.size(); ++k)
    if (std::isnan(cost.data()[k]) || cost.data()[k] < 0.0)
      throw std::domain_error("cost must be >= 0 (or +inf), got " + std::to_string(cost.data()[k]) +
                              " at flat index " + std::to_string(k));
  check_finite("speed", speed.data(), speed.size());
  velocity_field_unchecked(grid, phi, cost, speed, u);
}

void velocity_field_unchecked(const CrowdGrid& grid, const Eigen::Ref<const Eigen::VectorXd>& phi,
                              const Eigen::Ref<const RowMatrix>& cost, const Eigen::Ref<const RowMatrix>& speed,
                              Eigen::Ref<Eigen::VectorXd> u) {
  const Index nx = grid.nx(), ny = grid.ny();
  const MACGrid2D& mac = grid.mac();
  const FaceVelocity F(grid, phi.data(), cost.data(), cost.outerStride(), speed.data(), speed.outerStride());
  // Each cell's tangential difference serves the two faces beside it: carried
  // along the row (x-faces) or the column (y-faces) instead of computed twice.
  for (Index j = 0; j < ny; ++j) {
    u[mac.xface(0, j)] = u[mac.xface(nx, j)] = 0.0;
    double t_prev = F.grad_y(0, j);
    for (Index i = 1; i < nx; ++i) {
      const double t_next = F.grad_y(i, j);
      u[mac.xface(i, j)] = F.xface(i, j, t_prev, t_next);
      t_prev = t_next;
    }
  }
  for (Index i = 0; i < nx; ++i) {
    u[mac.yface(i, 0)] = u[mac.yface(i, ny)] = 0.0;
    double t_prev = F.grad_x(i, 0);
    for (Index j = 1; j < ny; ++j) {
      const double t_next = F.grad_x(i, j);
      u[mac.yface(i, j)] = F.yface(i, j, t_prev, t_next);
      t_prev = t_next;
    }
  }
}

void velocity_faces_at(const CrowdGrid& grid, const Eigen::Ref<const Eigen::VectorXd>& phi,
                       const Eigen::Ref<const RowMatrix>& cost, const Eigen::Ref<const RowMatrix>& speed, double x,
                       double y, std::vector<std::uint32_t>& stamp, std::uint32_t now, Eigen::Ref<Eigen::VectorXd> u) {
  const MACGrid2D& mac = grid.mac();
  const Index nx = grid.nx(), nxf = mac.n_xfaces();
  const FaceVelocity F(grid, phi.data(), cost.data(), cost.outerStride(), speed.data(), speed.outerStride());
  Stencil4 s;
  mac.x_stencil(x, y, s);
  for (int k = 0; k < 4; ++k) {
    const Index f = s.idx[k];
    if (stamp[f] == now) continue;
    stamp[f] = now;
    u[f] = F.xface(f % (nx + 1), f / (nx + 1));
  }
  mac.y_stencil(x, y, s);
  for (int k = 0; k < 4; ++k) {
    const Index f = s.idx[k];
    if (stamp[f] == now) continue;
    stamp[f] = now;
    u[f] = F.yface((f - nxf) % nx, (f - nxf) / nx);
  }
}

}  // namespace directable
