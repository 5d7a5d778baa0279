#include "directable/models/sph/neighbour_grid.hpp"

#include <cmath>

namespace directable {

template <int D>
void NeighbourGrid<D>::build(const double* pts, Index count, const Vec& lo, const Vec& hi, double radius) {
  lo_ = lo;
  cell_ = 0.5 * radius;
  inv_cell_ = 1.0 / cell_;
  Index cells = 1;
  for (int k = 0; k < D; ++k) {
    n_[k] = std::max(1, int(std::ceil((hi[k] - lo[k]) * inv_cell_)));
    cells *= n_[k];
  }
  start_.assign(cells + 1, 0);
  cell_index_.resize(count);
  order_.resize(count);
  for (int a = 0; a < D; ++a) sorted_[a].resize(count);
  for (Index i = 0; i < count; ++i) {
    Index c = cell_of(pts[D * i + D - 1], D - 1);
    for (int k = D - 2; k >= 0; --k) c = c * n_[k] + cell_of(pts[D * i + k], k);
    cell_index_[i] = c;
    ++start_[c + 1];
  }
  for (Index c = 0; c < cells; ++c) start_[c + 1] += start_[c];
  // counting sort, stable: the cell's running slot is kept in cell_index_'s
  // place (start_ restored after)
  for (Index i = 0; i < count; ++i) {
    const Index k = start_[cell_index_[i]]++;
    order_[k] = int(i);
    for (int a = 0; a < D; ++a) sorted_[a][k] = pts[D * i + a];
  }
  for (Index c = cells; c > 0; --c) start_[c] = start_[c - 1];
  start_[0] = 0;
}

template class NeighbourGrid<2>;
template class NeighbourGrid<3>;

}  // namespace directable
