#pragma once
// Neighbour search of the SPH family: a uniform grid over a box, and the
// frozen neighbour sets handed from the simulator to the prediction model.
// The grid's build lives in src/models/sph/neighbour_grid.cpp (instantiated
// for D = 2 and D = 3); its scans (templates on the visitor) are defined
// here, inline in the callers' loops.
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "directable/core/types.hpp"

namespace directable {

//! Uniform grid over a box for searches within a fixed radius R. Cells are
//! R / 2 wide and the points are counting-sorted by cell (x fastest), their
//! coordinates kept per axis in that order, so a row of cells along x is one
//! contiguous range. A search visits the rows of the 5 (2D) or 5 x 5 (3D)
//! neighbourhood that reach within R of the point and, in each, only the cells
//! the ball's chord covers: about twice the ball's volume is tested, against
//! 27 R^3 for a 3 x 3 x 3 stencil of R-wide cells.
template <int D>
class NeighbourGrid {
 public:
  using Vec = Eigen::Matrix<double, D, 1>;
  //! Sorts `count` points (D values each, row-major) into the grid of the box
  //! lo - hi for searches within `radius` (> 0). Points outside the box go to
  //! the border cells (still found, only less cheaply). Reuses its buffers.
  void build(const double* pts, Index count, const Vec& lo, const Vec& hi, double radius);
  //! The points j > `after` within `radius` (<= the build's) of p, in grid order, into out[0 ..
  //! cap) (cap >= 1; branch-free: out[cap - 1] is overwritten once the count
  //! reaches cap). Returns the count, which may exceed cap - 1: the list is
  //! complete only when it is < cap.
  int collect(const Vec& p, double radius, Index after, int* out, int cap) const;

 private:
  int cell_of(double x, int axis) const;
  //! Calls row(b, e) for each range [b, e) of sorted points that can hold a
  //! point within radius of p (rows of cells, clipped to the ball's chord).
  template <class Row>
  void rows(const Vec& p, double radius, Row row) const;
  Vec lo_ = Vec::Zero();
  double cell_ = 1.0, inv_cell_ = 1.0;
  int n_[3] = {1, 1, 1};
  std::vector<Index> start_;       //!< cells + 1: first sorted point of each cell
  std::vector<Index> cell_index_;  //!< count: the cell of each point (build scratch)
  std::vector<int> order_;         //!< count: point index of each sorted slot
  std::vector<double> sorted_[3];  //!< count each: coordinates per axis in sorted order
};

//! Frozen neighbour sets: CSR lists of fluid-fluid (symmetric, self
//! excluded) and fluid-boundary pairs.
struct NeighbourLists {
  std::vector<Index> fluid_start, fluid, wall_start, wall;
};

template <int D>
inline int NeighbourGrid<D>::cell_of(double x, int axis) const {
  // clamped in double first (a far point must not overflow the int), NaN
  // included (a non-finite radius or box: the first cell)
  const double c = (x - lo_[axis]) * inv_cell_;
  if (!(c > 0.0)) return 0;
  return c < double(n_[axis] - 1) ? int(c) : n_[axis] - 1;
}

template <int D>
template <class Row>
void NeighbourGrid<D>::rows(const Vec& p, double radius, Row row) const {
  const double r2 = radius * radius;
  constexpr double inf = std::numeric_limits<double>::infinity();
  // squared distance from coordinate x to cell c's slab along an axis (the
  // border cells reach to infinity: they hold the clamped outside points)
  auto gap2 = [&](double x, int c, int axis) {
    const double a = c == 0 ? -inf : lo_[axis] + c * cell_, b = c == n_[axis] - 1 ? inf : a + cell_;
    const double g = std::max(std::max(a - x, x - b), 0.0);
    return g * g;
  };
  const int z0 = D == 3 ? cell_of(p[D - 1] - radius, D - 1) : 0;
  const int z1 = D == 3 ? cell_of(p[D - 1] + radius, D - 1) : 0;
  for (int z = z0; z <= z1; ++z) {
    const double gz = D == 3 ? gap2(p[D - 1], z, D - 1) : 0.0;
    if (gz >= r2) continue;
    const int y0 = cell_of(p[1] - radius, 1), y1 = cell_of(p[1] + radius, 1);
    for (int y = y0; y <= y1; ++y) {
      const double rest = r2 - gz - gap2(p[1], y, 1);
      if (rest <= 0.0) continue;
      const double w = std::sqrt(rest);
      const Index base = (Index(z) * n_[1] + y) * n_[0];
      row(start_[base + cell_of(p[0] - w, 0)], start_[base + cell_of(p[0] + w, 0) + 1]);
    }
  }
}

namespace neighbour_detail {
// collect's scan: every candidate is written and kept (c advanced) only if it
// counts, with no branch on the outcome (it follows no pattern). A free
// function so that its pointers and counters stay in registers.
template <int D>
inline int collect_ranges(const Eigen::Matrix<double, D, 1>& p, double r2, Index after, const Index* range,
                          int rows, const int* ord, const double* sx, const double* sy, const double* sz, int* out,
                          int cap) {
  const double px = p[0], py = p[1], pz = p[D - 1];
  const int last = cap - 1;
  int c = 0;
  for (int r = 0; r < rows; ++r) {
    const Index e = range[2 * r + 1];
    for (Index k = range[2 * r]; k < e; ++k) {
      const double dx = px - sx[k], dy = py - sy[k], dz = D == 3 ? pz - sz[k] : 0.0;
      const int j = ord[k];
      out[c < last ? c : last] = j;
      c += int(dx * dx + dy * dy + dz * dz < r2) & int(j > after);
    }
  }
  return c;
}
}  // namespace neighbour_detail

template <int D>
inline int NeighbourGrid<D>::collect(const Vec& p, double radius, Index after, int* out, int cap) const {
  // the ranges first, then one tight loop with everything in registers (a
  // store through `out` inside a captured lambda reloads the captures)
  // radius <= the build's: at most 6 cells per axis (5, and one more
  // where p +- radius rounds across a cell border)
  Index range[2 * 36];
  int rows_found = 0;
  rows(p, radius, [&](Index b, Index e) {
    range[2 * rows_found] = b;
    range[2 * rows_found + 1] = e;
    ++rows_found;
  });
  return neighbour_detail::collect_ranges<D>(p, radius * radius, after, range, rows_found, order_.data(), sorted_[0].data(),
                        sorted_[1].data(), sorted_[D - 1].data(), out, cap);
}

extern template class NeighbourGrid<2>;
extern template class NeighbourGrid<3>;

}  // namespace directable
