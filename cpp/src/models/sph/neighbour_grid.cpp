#include "directable/models/sph/neighbour_grid.hpp"

#include <cmath>

namespace directable {

template <int D>
void NeighbourGrid<D>::build(const double* pts, Index count, const Vec& lo, const Vec& hi, double cell) {
  lo_ = lo;
  cell_ = cell;
  Index cells = 1;
  for (int k = 0; k < D; ++k) {
    n_[k] = std::max(1, int(std::ceil((hi[k] - lo[k]) / cell)));
    cells *= n_[k];
  }
  start_.assign(cells + 1, 0);
  cell_index_.resize(count);
  order_.resize(count);
  sorted_.resize(D * count);
  for (Index i = 0; i < count; ++i) {
    Index c = cell_of(pts[D * i + D - 1], D - 1);
    for (int k = D - 2; k >= 0; --k) c = c * n_[k] + cell_of(pts[D * i + k], k);
    cell_index_[i] = c;
    ++start_[c + 1];
  }
  for (Index c = 0; c < cells; ++c) start_[c + 1] += start_[c];
  cursor_.assign(start_.begin(), start_.end() - 1);
  for (Index i = 0; i < count; ++i) {  // counting sort, stable
    const Index k = cursor_[cell_index_[i]]++;
    order_[k] = i;
    for (int a = 0; a < D; ++a) sorted_[D * k + a] = pts[D * i + a];
  }
}

template class NeighbourGrid<2>;
template class NeighbourGrid<3>;

}  // namespace directable
