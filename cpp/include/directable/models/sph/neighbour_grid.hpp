#pragma once
// Neighbour search of the SPH family: a uniform grid over a box, and the
// frozen neighbour sets handed from the simulator to the prediction model.
// The grid's bodies live in src/models/sph/neighbour_grid.cpp (instantiated
// for D = 2 and D = 3); its scan (a template on the visitor) and cell lookup are defined here,
// inline in the callers' loops.
#include <Eigen/Core>
#include <algorithm>
#include <vector>

#include "directable/core/types.hpp"

namespace directable {

//! Uniform grid over a box with cells of size `cell` (>= the search radius);
//! points are kept sorted by cell for cache-friendly scans.
template <int D>
class NeighbourGrid {
 public:
  using Vec = Eigen::Matrix<double, D, 1>;
  void build(const double* pts, Index count, const Vec& lo, const Vec& hi, double cell);
  //! Calls f(j, r, d2) for every point j with d2 = |r|^2 < radius^2, r = p - pts_j
  //! (defined below).
  template <class F>
  void for_each(const Vec& p, double radius, F f) const;

 private:
  int cell_of(double x, int axis) const;
  Vec lo_;
  double cell_ = 1.0;
  int n_[3] = {1, 1, 1};
  std::vector<Index> start_, order_, cell_index_, cursor_;
  std::vector<double> sorted_;  //!< positions in cell order (D per point)
};

//! Frozen neighbour sets: CSR lists of fluid-fluid (symmetric, self
//! excluded) and fluid-boundary pairs.
struct NeighbourLists {
  std::vector<Index> fluid_start, fluid, wall_start, wall;
};

template <int D>
inline int NeighbourGrid<D>::cell_of(double x, int axis) const {
  return std::min(std::max(int((x - lo_[axis]) / cell_), 0), n_[axis] - 1);
}

template <int D>
template <class F>
void NeighbourGrid<D>::for_each(const Vec& p, double radius, F f) const {
  int c[3] = {0, 0, 0};
  for (int k = 0; k < D; ++k) c[k] = cell_of(p[k], k);
  const double r2 = radius * radius;
  const int x0 = std::max(c[0] - 1, 0), x1 = std::min(c[0] + 1, n_[0] - 1);
  const int y0 = std::max(c[1] - 1, 0), y1 = std::min(c[1] + 1, n_[1] - 1);
  const int z0 = D == 3 ? std::max(c[2] - 1, 0) : 0, z1 = D == 3 ? std::min(c[2] + 1, n_[2] - 1) : 0;
  for (int z = z0; z <= z1; ++z)
    for (int y = y0; y <= y1; ++y) {
      const Index row = (Index(z) * n_[1] + y) * n_[0];
      const Index end = start_[row + x1 + 1];
      for (Index k = start_[row + x0]; k < end; ++k) {  // cells x0..x1 are contiguous
        const Vec r = p - Eigen::Map<const Vec>(&sorted_[D * k]);
        const double d2 = r.squaredNorm();
        if (d2 < r2) f(order_[k], r, d2);
      }
    }
}

extern template class NeighbourGrid<2>;
extern template class NeighbourGrid<3>;

}  // namespace directable
