#pragma once
// Sparse LDL' of a symmetric matrix whose unknowns come in groups of b
// (b = 3 for the x, y, z of a node): the ordering (AMD on the graph of the
// groups), the elimination tree and the supernodes are computed once from
// the pattern; each numeric factorisation is multifrontal with dense
// kernels on the supernodes' fronts, into buffers sized once, and does not
// allocate. No pivoting: the matrix must have an LDL' factorisation in the
// chosen order (true for a definite matrix, and for the shifted systems of
// implicit integrators); a zero or non-finite pivot is reported.
//
// The input is the scalar matrix in CSR form on a pattern fixed at
// construction (row_offsets, columns: both triangles stored, symmetric
// pattern, every group's b rows listing the same columns, diagonal present).
// Only its values change between factorisations; they are read through a
// scatter map computed once, from whichever triangle lies below the
// diagonal in the elimination order (the values must be symmetric).
#include <Eigen/Core>
#include <vector>

#include "directable/core/types.hpp"

namespace directable {

//! Buffers of one numeric factorisation (one per thread).
struct BlockLDLTData {
  Eigen::VectorXd factor;   //!< sum over supernodes of f_s p_s: column-major f_s x p_s panels [L11 with D on its diagonal; L21]
  Eigen::VectorXd updates;  //!< the update matrices (u_s x u_s each, lower triangle used) waiting for their parents, at fixed offsets
  Eigen::VectorXd panel;    //!< max over supernodes of u_s p_s: L21 D during the update
  Eigen::VectorXd work;     //!< n: the permuted right-hand side during a solve
  Eigen::VectorXd below;    //!< max u_s: gathered / scattered rows below a supernode
  bool factorized = false;  //!< the last factorize() succeeded
  Index failed_pivot = -1;  //!< after a failed factorize(): the unknown (original index) whose pivot was zero or non-finite
};

//! Where a b x b block of the matrix lives in BlockLDLTData::factor: entry
//! (i, j) of block (later group, earlier group in the elimination order) at
//! factor[offset + j * stride + i]. For a diagonal block only entries i >= j
//! are read (the others may hold anything).
struct BlockLDLTSlot {
  Index offset = 0;
  Index stride = 0;
};

class BlockLDLT {
 public:
  //! n = b * groups unknowns; row_offsets: n + 1, columns: nnz (CSR of a
  //! symmetric pattern). Throws std::invalid_argument for a pattern that is
  //! not grouped by b, not symmetric or lacks a diagonal entry.
  BlockLDLT(Index n, int b, const std::vector<int>& row_offsets, const std::vector<int>& columns);

  BlockLDLTData create_data() const;

  //! Numeric factorisation of the matrix with these CSR values (nnz).
  //! Returns false on a zero or non-finite pivot (data.failed_pivot names it).
  bool factorize(const double* values, BlockLDLTData& data) const;
  //! Assembly straight into the factor's panels, for callers that form the
  //! matrix block by block (no CSR values written and read back):
  //! clear_panels() zeroes them, the caller adds or writes each block of the
  //! lower triangle (in elimination order) at block_slot(g, h), and
  //! factorize_assembled() factorises what was assembled. Blocks of the
  //! matrix are symmetric pairs, so the caller writes one of (g, h), (h, g).
  void clear_panels(BlockLDLTData& data) const;
  //! The slot of block (g, h) (groups, in [0, n / b)); std::invalid_argument
  //! when the pattern has no such block.
  BlockLDLTSlot block_slot(Index g, Index h) const;
  //! Like factorize(), on the panels filled since clear_panels().
  bool factorize_assembled(BlockLDLTData& data) const;
  //! x <- A^-1 x, with the factorisation in data. x: n.
  void solve(BlockLDLTData& data, Eigen::Ref<Eigen::VectorXd> x) const;

  Index size() const { return n_; }
  Index supernode_count() const { return static_cast<Index>(first_.size()) - 1; }
  //! Scalar entries of L below the diagonal (the fill of the ordering).
  Index factor_nonzeros() const { return factor_nonzeros_; }
  //! Multiply-adds of one numeric factorisation.
  double factor_flops() const { return flops_; }
  //! Explicit zeros stored by merging small supernodes (relaxed amalgamation).
  Index stored_zeros() const { return stored_zeros_; }

 private:
  //! The numeric factorisation of supernodes in order, with (values) or
  //! without (null: already assembled) the scatter of CSR values.
  bool factorize_panels(const double* values, BlockLDLTData& d) const;
  //! Extend-add of supernode s's children: their columns in the panel
  //! (panel_columns) or beyond it, into T (leading dimension ld, offset shift).
  void extend_add_children(int s, Index np, BlockLDLTData& d, double* T, Index ld, Index shift, bool panel_columns) const;

  Index n_ = 0, groups_ = 0;
  int b_ = 1;
  std::vector<int> order_;        //!< groups: order_[k] = group eliminated k-th
  std::vector<int> position_;     //!< groups: inverse of order_
  // Supernode s eliminates the groups first_[s] .. first_[s+1]-1 (in elimination order).
  std::vector<int> first_;        //!< supernodes + 1
  std::vector<int> supernode_of_; //!< groups, by elimination step: the supernode eliminating it
  std::vector<int> front_groups_; //!< concatenated per supernode: its groups (elimination order), pivots first, ascending
  std::vector<int> front_start_;  //!< supernodes + 1: offsets into front_groups_
  std::vector<Index> panel_offset_;   //!< supernodes + 1: offsets of the panels in BlockLDLTData::factor
  std::vector<Index> update_offset_;  //!< supernodes: where its update matrix lies in BlockLDLTData::updates
  std::vector<int> relative_;     //!< per supernode, per group below its pivots: position in the parent's front
  std::vector<int> relative_start_;  //!< supernodes + 1
  std::vector<int> children_;     //!< concatenated children of each supernode
  std::vector<int> children_start_;  //!< supernodes + 1
  std::vector<int> scatter_src_;  //!< CSR entry index, grouped by supernode
  std::vector<int> scatter_dst_;  //!< offset within that supernode's front (column-major, f_s x f_s)
  std::vector<int> scatter_start_;  //!< supernodes + 1
  Index max_panel_ = 0, max_below_ = 0, max_front_ = 0, updates_size_ = 0, factor_nonzeros_ = 0, stored_zeros_ = 0;
  double flops_ = 0.0;
};

}  // namespace directable
