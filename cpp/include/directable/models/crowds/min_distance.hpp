#pragma once
// Minimum-distance enforcement between people (Treuille thesis sec. 4.2.5):
// every pair closer than delta_min is pushed apart symmetrically along the
// line joining them; neighbours come from a binning of the points into
// square bins of side delta_min, so one pass costs O(P).
#include <Eigen/Core>
#include <cstdint>
#include <utility>
#include <vector>

#include "directable/core/types.hpp"
#include "directable/models/crowds/crowd_grid.hpp"

namespace directable {

//! Bins of one pass, reused while the sizes stay the same. One thread at a time.
struct MinDistanceWorkspace {
  std::vector<Index> bin_start;  //!< (bins + 1) offsets into `order`
  std::vector<Index> order;      //!< (P) points sorted by bin
  std::vector<Index> bin_of;     //!< (P) bin of each point, -1 if it takes no part
};

//! Moves (x, y) from (x0, y0) but never into a cell that is blocked or
//! closed (closed: ny nx or empty) other than the one it started in: each
//! axis whose move would enter such a cell is reverted (x first, then y).
//! The result is clamped into the domain.
void constrain_move(const CrowdGrid& grid, const std::vector<std::uint8_t>& closed, double x0, double y0, double& x,
                    double& y);

//! Pairs (i < j) of the participating points (participates: P or empty =
//! all) at distance <= delta, in a deterministic order.
void min_distance_pairs(const Eigen::Ref<const RowMatrix>& positions, const std::vector<std::uint8_t>& participates,
                        double delta, MinDistanceWorkspace& ws, std::vector<std::pair<Index, Index>>& pairs);

//! `iterations` Gauss-Seidel passes over the close pairs (P x 2 positions,
//! updated in place). participates (P or empty = all) selects who counts;
//! movable (P or empty = all) who may be pushed (a fixed partner leaves the
//! whole correction to the other). With a grid, people are kept out of
//! blocked and `closed` cells (constrain_move). Validates delta, iterations
//! and, with a grid, the positions.
void enforce_min_distance(Eigen::Ref<RowMatrix> positions, const std::vector<std::uint8_t>& participates,
                          const std::vector<std::uint8_t>& movable, double delta_min, Index iterations,
                          const CrowdGrid* grid, const std::vector<std::uint8_t>& closed, MinDistanceWorkspace& ws);

}  // namespace directable
