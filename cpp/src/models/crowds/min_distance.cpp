#include "directable/models/crowds/min_distance.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace directable {

namespace {

// Square bins of side >= delta over the bounding box of the participants;
// the side grows when the box would need more than ~4 bins per point.
struct Binning {
  double x0 = 0.0, y0 = 0.0, side = 1.0;
  Index bx = 1, by = 1;
};

Binning bin_points(const Eigen::Ref<const RowMatrix>& P, const std::vector<std::uint8_t>& participates, double delta,
                   MinDistanceWorkspace& ws) {
  const Index n = P.rows();
  double lo_x = std::numeric_limits<double>::infinity(), lo_y = lo_x, hi_x = -lo_x, hi_y = -lo_x;
  Index count = 0;
  for (Index k = 0; k < n; ++k) {
    if (!participates.empty() && !participates[k]) continue;
    lo_x = std::min(lo_x, P(k, 0)), hi_x = std::max(hi_x, P(k, 0));
    lo_y = std::min(lo_y, P(k, 1)), hi_y = std::max(hi_y, P(k, 1));
    ++count;
  }
  Binning b;
  if (count == 0) {
    ws.bin_of.assign(n, -1);
    ws.bin_start.assign(2, 0);
    ws.order.clear();
    return b;
  }
  b.x0 = lo_x, b.y0 = lo_y;
  b.side = std::max(delta, 1e-12);
  const double w = hi_x - lo_x, hgt = hi_y - lo_y;
  const double max_bins = 4.0 * double(count) + 16.0;
  while ((std::floor(w / b.side) + 1.0) * (std::floor(hgt / b.side) + 1.0) > max_bins) b.side *= 2.0;
  b.bx = Index(std::floor(w / b.side)) + 1, b.by = Index(std::floor(hgt / b.side)) + 1;
  const Index bins = b.bx * b.by;
  ws.bin_of.resize(n);
  ws.bin_start.assign(bins + 1, 0);
  for (Index k = 0; k < n; ++k) {
    if (!participates.empty() && !participates[k]) {
      ws.bin_of[k] = -1;
      continue;
    }
    const Index i = std::min(Index((P(k, 0) - b.x0) / b.side), b.bx - 1);
    const Index j = std::min(Index((P(k, 1) - b.y0) / b.side), b.by - 1);
    ws.bin_of[k] = j * b.bx + i;
    ++ws.bin_start[ws.bin_of[k] + 1];
  }
  for (Index c = 0; c < bins; ++c) ws.bin_start[c + 1] += ws.bin_start[c];
  ws.order.resize(count);
  // Stable fill: points of a bin stay in index order.
  std::vector<Index>& start = ws.bin_start;
  for (Index k = 0; k < n; ++k)
    if (ws.bin_of[k] >= 0) ws.order[start[ws.bin_of[k]]++] = k;
  for (Index c = bins; c > 0; --c) start[c] = start[c - 1];
  start[0] = 0;
  return b;
}

// Calls pair(k, m) for every participating m > k in the 3 x 3 bins around k.
template <class Pair>
void for_near(const Binning& b, const MinDistanceWorkspace& ws, Index k, Pair pair) {
  const Index bin = ws.bin_of[k];
  const Index i = bin % b.bx, j = bin / b.bx;
  for (Index jj = std::max<Index>(j - 1, 0); jj <= std::min(j + 1, b.by - 1); ++jj)
    for (Index ii = std::max<Index>(i - 1, 0); ii <= std::min(i + 1, b.bx - 1); ++ii) {
      const Index c = jj * b.bx + ii;
      for (Index s = ws.bin_start[c]; s < ws.bin_start[c + 1]; ++s)
        if (ws.order[s] > k) pair(ws.order[s]);
    }
}

void check_delta(double delta, const char* name) {
  if (!(delta >= 0.0) || !std::isfinite(delta))
    throw std::domain_error(std::string(name) + " must be finite and >= 0, got " + std::to_string(delta));
}

}  // namespace

void constrain_move(const CrowdGrid& grid, const std::vector<std::uint8_t>& closed, double x0, double y0, double& x,
                    double& y) {
  const double w = grid.mac().width(), hgt = grid.mac().height();
  // Largest double below the upper edge: the domain is half-open for cells.
  x = std::clamp(x, 0.0, std::nextafter(w, 0.0));
  y = std::clamp(y, 0.0, std::nextafter(hgt, 0.0));
  const auto& blocked = grid.blocked();
  auto shut = [&](Index c) { return c >= 0 && (blocked[c] || (!closed.empty() && closed[c])); };
  const Index c0 = grid.cell_of(x0, y0);
  const Index cx = grid.cell_of(x, y0);
  if (cx != c0 && shut(cx)) x = x0;
  const Index c1 = grid.cell_of(x, y0), cy = grid.cell_of(x, y);
  if (cy != c1 && shut(cy)) y = y0;
}

void min_distance_pairs(const Eigen::Ref<const RowMatrix>& P, const std::vector<std::uint8_t>& participates,
                        double delta, MinDistanceWorkspace& ws, std::vector<std::pair<Index, Index>>& pairs) {
  check_delta(delta, "delta_min");
  pairs.clear();
  const Binning b = bin_points(P, participates, delta, ws);
  const double d2 = delta * delta;
  for (Index k = 0; k < P.rows(); ++k) {
    if (ws.bin_of[k] < 0) continue;
    for_near(b, ws, k, [&](Index m) {
      const double dx = P(m, 0) - P(k, 0), dy = P(m, 1) - P(k, 1);
      if (dx * dx + dy * dy <= d2) pairs.emplace_back(k, m);
    });
  }
}

void enforce_min_distance(Eigen::Ref<RowMatrix> P, const std::vector<std::uint8_t>& participates,
                          const std::vector<std::uint8_t>& movable, double delta, Index iterations,
                          const CrowdGrid* grid, const std::vector<std::uint8_t>& closed, MinDistanceWorkspace& ws) {
  check_delta(delta, "delta_min");
  if (iterations < 0) throw std::domain_error("iterations must be >= 0, got " + std::to_string(iterations));
  if (grid) grid->check_positions("positions", P);
  if (delta == 0.0) return;
  const double d2 = delta * delta;
  if (!std::isfinite(d2))
    throw std::domain_error("delta_min must be small enough to square, got " + std::to_string(delta));
  auto can_move = [&](Index k) { return movable.empty() || movable[k]; };
  auto move = [&](Index k, double dx, double dy) {
    const double x0 = P(k, 0), y0 = P(k, 1);
    double x = x0 + dx, y = y0 + dy;
    if (grid) constrain_move(*grid, closed, x0, y0, x, y);
    P(k, 0) = x, P(k, 1) = y;
  };
  for (Index it = 0; it < iterations; ++it) {
    const Binning b = bin_points(P, participates, delta, ws);
    for (Index k = 0; k < P.rows(); ++k) {
      if (ws.bin_of[k] < 0) continue;
      for_near(b, ws, k, [&](Index m) {
        double dx = P(m, 0) - P(k, 0), dy = P(m, 1) - P(k, 1);
        const double r2 = dx * dx + dy * dy;
        if (r2 >= d2) return;
        const bool mk = can_move(k), mm = can_move(m);
        if (!mk && !mm) return;
        double r = std::sqrt(r2);
        if (r == 0.0) dx = 1.0, dy = 0.0, r = 1.0;  // coincident: split along x
        const double push = (delta - std::sqrt(r2)) / r;  // per unit of (dx, dy)
        const double share_k = mk ? (mm ? 0.5 : 1.0) : 0.0, share_m = mm ? (mk ? 0.5 : 1.0) : 0.0;
        if (mk) move(k, -share_k * push * dx, -share_k * push * dy);
        if (mm) move(m, share_m * push * dx, share_m * push * dy);
      });
    }
  }
}

}  // namespace directable
