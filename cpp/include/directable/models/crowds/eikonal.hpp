#pragma once
// The potential of a continuum crowd (Treuille thesis sec. 4.2.3): an
// anisotropic fast-marching solution of |grad phi| = C (eq. 4.5, 4.11), and
// the velocity field that walks down it.
//
// The marching rule is fixed so that results are reproducible: goal cells
// start KNOWN with phi = 0; the CANDIDATE with the smallest tentative value
// is accepted next (ties: the smaller flat index); after each acceptance its
// non-KNOWN, unblocked neighbours get phi_M <- min(phi_M, update), where the
// update uses only KNOWN neighbours i with finite cost C_{M->i}: per axis the
// neighbour minimising phi_i + h C_{M->i} (ties to W, S); with both axes the
// larger root of ((phi - phi_x)/(h C_x))^2 + ((phi - phi_y)/(h C_y))^2 = 1,
// unless the discriminant is negative or the root is below max(phi_x,
// phi_y), where the one-sided min(phi_x + h C_x, phi_y + h C_y) is used; with
// one axis phi_i + h C_{M->i}.
#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "directable/core/types.hpp"
#include "directable/models/crowds/crowd_grid.hpp"

namespace directable {

//! Priority queue of the march: an indexed binary heap with decrease-key, or
//! std::priority_queue with lazy deletion (kept for the measurement).
enum class EikonalHeap { kIndexed, kLazy };
//! The heap named "indexed" or "lazy"; any other name is a ValueError naming `heap`.
EikonalHeap eikonal_heap(const std::string& name);

//! One entry of the march's heaps: a padded cell index and the bits of its
//! tentative value (>= 0, so the bits order as the values).
struct EikonalHeapEntry {
  std::uint64_t cell;
  std::uint64_t key;
};

//! Buffers of one march on the grid padded by a closed border (cell (i, j)
//! at (j + 1) W + i + 1, W = nx + 2; N = W (ny + 2) padded cells), laid out
//! on first use and reused while the grid size stays the same: no allocation
//! per call after the first. Belongs to one thread at a time.
struct EikonalWorkspace {
  Index nx = -1, ny = -1;             //!< grid the buffers are laid out for
  std::vector<std::uint8_t> state;    //!< (N) 0 far, 1 candidate, 2 closed (known, blocked or border)
  std::vector<double> trial;          //!< (N) tentative phi, +inf where far
  std::vector<double> known;          //!< (N + 4 W) phi of KNOWN cells, +inf elsewhere; two rows of +inf beyond each end
  std::vector<double> moves;          //!< (N x 4) h C of the moves E, N, W, S out of each cell, side by side
  std::vector<EikonalHeapEntry> heap; //!< (N + 4) indexed binary heap from its first 32-byte boundary, rooted at 1, a sentinel after the last entry
  std::vector<EikonalHeapEntry> lazy; //!< (<= 4 N) lazy-deletion heap
  std::vector<std::int32_t> slot;     //!< (N) heap position of a candidate cell (indexed heap)
  //! Lays the buffers out for an nx x ny grid (the lazy heap's on its first use).
  void resize(Index nx, Index ny, EikonalHeap kind);
};

//! phi (n = nx ny) from cost (4 x n, E N W S), goal (n) and blocked (n or
//! empty). Validates its arguments (shapes, NaN or negative costs, a goal
//! with no free cell).
void eikonal(Index nx, Index ny, double h, const Eigen::Ref<const RowMatrix>& cost,
             const std::vector<std::uint8_t>& goal, const std::vector<std::uint8_t>& blocked,
             EikonalWorkspace& workspace, Eigen::Ref<Eigen::VectorXd> phi, EikonalHeap heap = EikonalHeap::kIndexed);

//! The march without validation, for callers that built cost themselves.
void eikonal_unchecked(Index nx, Index ny, double h, const Eigen::Ref<const RowMatrix>& cost,
                       const std::vector<std::uint8_t>& goal, const std::vector<std::uint8_t>& blocked,
                       EikonalWorkspace& workspace, Eigen::Ref<Eigen::VectorXd> phi, EikonalHeap heap);

//! Velocity (MAC faces, MACGrid2D layout) walking down phi. On the face
//! between cells a (left/below) and b: with d = (phi_b - phi_a) / h the
//! normal difference and t the mean of the two cells' upwind tangential
//! differences (the neighbour that the march would pick, counted only when it
//! lies below the cell), u = -f d / sqrt(d^2 + t^2), f the speed of the move
//! down the potential (speed[E or N, a] when phi_b < phi_a, speed[W or S, b]
//! otherwise). So u (phi_b - phi_a) <= 0, |u| <= f, and u = 0 on faces
//! touching a blocked, unreachable (phi = inf) or off-grid cell.
//! phi (n), cost, speed (4 x n), u (n_faces) overwritten.
void velocity_field(const CrowdGrid& grid, const Eigen::Ref<const Eigen::VectorXd>& phi,
                    const Eigen::Ref<const RowMatrix>& cost, const Eigen::Ref<const RowMatrix>& speed,
                    Eigen::Ref<Eigen::VectorXd> u);
//! velocity_field without the checks (the crowd step's own fields).
void velocity_field_unchecked(const CrowdGrid& grid, const Eigen::Ref<const Eigen::VectorXd>& phi,
                              const Eigen::Ref<const RowMatrix>& cost, const Eigen::Ref<const RowMatrix>& speed,
                              Eigen::Ref<Eigen::VectorXd> u);
//! The faces of velocity_field that the bilinear interpolation at (x, y)
//! reads (MACGrid2D::x_stencil and y_stencil), each with the value
//! velocity_field gives it; a face whose stamp (n_faces) is already `now`
//! is skipped and marked faces get `now`. Other faces of u keep their
//! values. A step needs only the faces around its people. Unchecked.
void velocity_faces_at(const CrowdGrid& grid, const Eigen::Ref<const Eigen::VectorXd>& phi,
                       const Eigen::Ref<const RowMatrix>& cost, const Eigen::Ref<const RowMatrix>& speed, double x,
                       double y, std::vector<std::uint32_t>& stamp, std::uint32_t now, Eigen::Ref<Eigen::VectorXd> u);

}  // namespace directable
