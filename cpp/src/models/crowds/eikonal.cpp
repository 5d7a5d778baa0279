#include "directable/models/crowds/eikonal.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

#include "directable/core/errors.hpp"

namespace directable {

namespace {

constexpr std::uint8_t kFar = 0, kCandidate = 1, kKnown = 2;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Indexed binary min-heap of (phi, cell) entries, ordered by phi then by
// flat index, with decrease-key; the keys sit in the entries (no indirection
// in the sift loops) and `slot` maps a cell to its entry.
class IndexedHeap {
 public:
  using Entry = std::pair<double, Index>;
  IndexedHeap(std::vector<Entry>& heap, std::vector<Index>& slot) : heap_(heap), slot_(slot) { heap_.clear(); }
  bool empty() const { return heap_.empty(); }
  void push(Index c, double key) {
    heap_.emplace_back(key, c);
    up(Index(heap_.size()) - 1);
  }
  void decrease(Index c, double key) {
    heap_[slot_[c]].first = key;
    up(slot_[c]);
  }
  Index pop() {
    const Index top = heap_[0].second;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) {
      heap_[0] = last;
      down(0);
    }
    return top;
  }

 private:
  static bool less(const Entry& a, const Entry& b) {
    return a.first < b.first || (a.first == b.first && a.second < b.second);
  }
  void up(Index k) {
    const Entry e = heap_[k];
    while (k > 0) {
      const Index parent = (k - 1) / 2;
      if (!less(e, heap_[parent])) break;
      heap_[k] = heap_[parent];
      slot_[heap_[k].second] = k;
      k = parent;
    }
    heap_[k] = e;
    slot_[e.second] = k;
  }
  void down(Index k) {
    const Index n = Index(heap_.size());
    const Entry e = heap_[k];
    for (;;) {
      Index child = 2 * k + 1;
      if (child >= n) break;
      if (child + 1 < n && less(heap_[child + 1], heap_[child])) ++child;
      if (!less(heap_[child], e)) break;
      heap_[k] = heap_[child];
      slot_[heap_[k].second] = k;
      k = child;
    }
    heap_[k] = e;
    slot_[e.second] = k;
  }
  std::vector<Entry>& heap_;
  std::vector<Index>& slot_;
};

// Lazy deletion (std::push_heap / pop_heap on the workspace's buffer, the
// operations of std::priority_queue): every decrease pushes a new entry and
// stale ones are skipped when they reach the top.
class LazyHeap {
 public:
  using Entry = std::pair<double, Index>;
  LazyHeap(std::vector<Entry>& storage, const std::uint8_t* state, const double* phi)
      : q_(storage), state_(state), phi_(phi) {
    q_.clear();
  }
  void push(Index c, double key) {
    q_.emplace_back(key, c);
    std::push_heap(q_.begin(), q_.end(), std::greater<Entry>());
  }
  void decrease(Index c, double key) { push(c, key); }
  bool empty() {
    skip();
    return q_.empty();
  }
  Index pop() {
    skip();
    const Index c = q_.front().second;
    std::pop_heap(q_.begin(), q_.end(), std::greater<Entry>());
    q_.pop_back();
    return c;
  }

 private:
  void skip() {
    while (!q_.empty() && (state_[q_.front().second] == kKnown || q_.front().first != phi_[q_.front().second])) {
      std::pop_heap(q_.begin(), q_.end(), std::greater<Entry>());
      q_.pop_back();
    }
  }
  std::vector<Entry>& q_;
  const std::uint8_t* state_;
  const double* phi_;
};

// The update of cell M = (i, j) from its KNOWN neighbours (header comment).
inline double update_value(Index nx, Index ny, double h, const double* cost, Index n, const std::uint8_t* state,
                           const double* phi, Index i, Index j) {
  const Index M = j * nx + i;
  double best_x = kInf, phi_x = 0.0, c_x = 0.0, best_y = kInf, phi_y = 0.0, c_y = 0.0;
  // x axis: W first, E replaces it only when strictly better (ties to W).
  if (i > 0 && state[M - 1] == kKnown) {
    const double c = h * cost[kWest * n + M];
    if (c < kInf) best_x = phi[M - 1] + c, phi_x = phi[M - 1], c_x = c;
  }
  if (i + 1 < nx && state[M + 1] == kKnown) {
    const double c = h * cost[kEast * n + M];
    if (c < kInf && phi[M + 1] + c < best_x) best_x = phi[M + 1] + c, phi_x = phi[M + 1], c_x = c;
  }
  if (j > 0 && state[M - nx] == kKnown) {
    const double c = h * cost[kSouth * n + M];
    if (c < kInf) best_y = phi[M - nx] + c, phi_y = phi[M - nx], c_y = c;
  }
  if (j + 1 < ny && state[M + nx] == kKnown) {
    const double c = h * cost[kNorth * n + M];
    if (c < kInf && phi[M + nx] + c < best_y) best_y = phi[M + nx] + c, phi_y = phi[M + nx], c_y = c;
  }
  if (best_x == kInf || best_y == kInf) return std::min(best_x, best_y);
  const double wx = 1.0 / (c_x * c_x), wy = 1.0 / (c_y * c_y), sw = wx + wy;
  const double diff = phi_x - phi_y;
  const double disc = sw - wx * wy * diff * diff;
  const double one_sided = std::min(best_x, best_y);
  if (disc < 0.0) return one_sided;
  const double root = (phi_x * wx + phi_y * wy + std::sqrt(disc)) / sw;
  return root < std::max(phi_x, phi_y) ? one_sided : root;
}

template <class Heap>
void march(Index nx, Index ny, double h, const double* cost, const std::uint8_t* goal, const std::uint8_t* blocked,
           std::uint8_t* state, double* phi, Heap& heap) {
  const Index n = nx * ny;
  auto relax = [&](Index i, Index j) {
    const Index M = j * nx + i;
    if (state[M] == kKnown || (blocked && blocked[M])) return;
    const double v = update_value(nx, ny, h, cost, n, state, phi, i, j);
    if (!(v < phi[M])) return;
    phi[M] = v;
    if (state[M] == kCandidate) {
      heap.decrease(M, v);
    } else {
      state[M] = kCandidate;
      heap.push(M, v);
    }
  };
  auto relax_neighbours = [&](Index M) {
    const Index i = M % nx, j = M / nx;
    if (i + 1 < nx) relax(i + 1, j);
    if (j + 1 < ny) relax(i, j + 1);
    if (i > 0) relax(i - 1, j);
    if (j > 0) relax(i, j - 1);
  };
  for (Index c = 0; c < n; ++c) {
    phi[c] = kInf;
    state[c] = kFar;
  }
  for (Index c = 0; c < n; ++c)
    if (goal[c] && !(blocked && blocked[c])) phi[c] = 0.0, state[c] = kKnown;
  for (Index c = 0; c < n; ++c)
    if (goal[c] && !(blocked && blocked[c])) relax_neighbours(c);
  while (!heap.empty()) {
    const Index M = heap.pop();
    state[M] = kKnown;
    relax_neighbours(M);
  }
}

}  // namespace

void EikonalWorkspace::resize(Index n) {
  if (Index(state.size()) == n) return;
  state.assign(n, 0);
  slot.assign(n, 0);
  heap.clear();
  heap.reserve(4 * n);  // the lazy heap holds up to one entry per update
}

void eikonal_unchecked(Index nx, Index ny, double h, const Eigen::Ref<const RowMatrix>& cost,
                       const std::vector<std::uint8_t>& goal, const std::vector<std::uint8_t>& blocked,
                       EikonalWorkspace& ws, Eigen::Ref<Eigen::VectorXd> phi, EikonalHeap kind) {
  const Index n = nx * ny;
  ws.resize(n);
  const std::uint8_t* b = blocked.empty() ? nullptr : blocked.data();
  if (kind == EikonalHeap::kIndexed) {
    IndexedHeap heap(ws.heap, ws.slot);
    march(nx, ny, h, cost.data(), goal.data(), b, ws.state.data(), phi.data(), heap);
  } else {
    LazyHeap heap(ws.heap, ws.state.data(), phi.data());
    march(nx, ny, h, cost.data(), goal.data(), b, ws.state.data(), phi.data(), heap);
  }
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
  const double* c = cost.data();
  for (Index k = 0; k < 4 * n; ++k)
    if (!(c[k] >= 0.0))
      throw std::domain_error("cost must be >= 0 or +inf, got " + std::to_string(c[k]) + " at flat index " +
                              std::to_string(k));
  bool any = false, free = false;
  for (Index k = 0; k < n; ++k)
    if (goal[k]) any = true, free = free || blocked.empty() || !blocked[k];
  if (!any) throw std::domain_error("goal must contain at least one goal cell, got an empty mask");
  if (!free) throw std::domain_error("goal must contain at least one unblocked cell, got a fully blocked goal");
  eikonal_unchecked(nx, ny, h, cost, goal, blocked, ws, phi, kind);
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
