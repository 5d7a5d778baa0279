#pragma once
// The dimension-free pieces of boundary bases and coupling tables (Treuille
// thesis sec. 3.5.1, 3.5.6): what a 2D and a 3D boundary basis share once the
// grid-specific parts (surface-speed operator, local divergence rows, pose
// maps) are known.
//
// - collect_surface_speeds + SurfaceSpeedPCA: the PCA of S R^-1 B over the
//   training poses (the smaller of the two Gram matrices is decomposed);
// - LeastNormFields: min |u|^2 s.t. K u = [0; s] through the factored normal
//   equations K K' (one factorisation, any number of right-hand sides);
// - NodeTable: matrices tabulated on a regular grid of d axes, interpolated
//   multilinearly, optionally PCA-compressed over the nodes.
#include <Eigen/Core>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <functional>
#include <string>
#include <vector>

#include "directable/core/progress.hpp"
#include "directable/core/types.hpp"

namespace directable {

//! Principal directions of surface speeds collected over training poses.
struct SurfaceSpeedPCA {
  Eigen::MatrixXd directions;  //!< q x p, orthonormal columns s_1..s_p
  Eigen::VectorXd energy;      //!< p, fraction of the collected energy per direction
  Index rank = 0;              //!< numerical rank of the collected speeds (eigenvalues > 1e-10 of the largest)
};

//! Collects M_i = fill(i) (q x r each, i < n poses) in parallel and returns
//! their PCA with at most p directions (p is cut to the rank). Keeps every M_i
//! (q x n r) when n r <= q and decomposes the (n r)^2 Gram, else sums the
//! q x q Gram per chunk of poses (deterministic order). Throws domain_error
//! when every collected speed is zero.
SurfaceSpeedPCA collect_surface_speeds(Index n, Index q, Index r, Index p, int threads, const ProgressFn* progress,
                                       const std::function<void(Index, Eigen::Ref<Eigen::MatrixXd>)>& fill);

//! Minimum-norm solutions of K u = [0 (n_zero rows); s (the other rows)]:
//! u = K' (K K')^-1 c with two steps of iterative refinement; the residual
//! is checked against 1e-8 max |s|.
class LeastNormFields {
 public:
  //! K: constraints x variables; the first n_zero rows have a zero right-hand side.
  LeastNormFields(Eigen::SparseMatrix<double> K, Index n_zero);
  Index variables() const { return K_.cols(); }
  //! u (variables x k) for the speeds s (rows - n_zero x k); returns the largest residual.
  double solve(const Eigen::Ref<const Eigen::MatrixXd>& speeds, Eigen::MatrixXd& u) const;

 private:
  Eigen::SparseMatrix<double> K_;  //!< constraints x variables
  Index n_zero_;
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> normal_;  //!< K K', constraints x constraints
};

//! Checks one axis of a table: >= 1 node, finite, uniformly spaced with a
//! spacing > 0 (message names "<what> <axis>").
void check_table_axis(const std::string& name, const Eigen::VectorXd& a);

//! Per-thread buffers of NodeTable::interpolate.
struct NodeTableData {
  Eigen::VectorXd mixed;  //!< entry width: the interpolated row
  Eigen::VectorXd flat;   //!< rows cols: the decompressed operator
};

//! rows x cols matrices on the nodes of a regular grid of d uniform axes
//! (node n has index i_0 + n_0 (i_1 + n_1 (...)): the first axis fastest).
class NodeTable {
 public:
  NodeTable() = default;
  //! value(n, M) fills node n's matrix M (rows x cols); compress > 0 keeps
  //! that many PCA modes over the nodes (modes of zero variance dropped).
  NodeTable(std::vector<Eigen::VectorXd> axes, Index rows, Index cols, Index compress, int threads,
            const ProgressFn* progress, const std::function<void(Index, Eigen::Ref<Eigen::MatrixXd>)>& value);
  //! Nodes of the grid and the coordinates of node n (d).
  Index nodes() const { return nodes_; }
  Eigen::VectorXd node(Index n) const { return node(axes_, n); }
  static Eigen::VectorXd node(const std::vector<Eigen::VectorXd>& axes, Index n);
  const std::vector<Eigen::VectorXd>& axes() const { return axes_; }
  bool empty() const { return nodes_ == 0; }
  Index bytes() const;
  //! The multilinear interpolation at key (d coordinates, clamped to the axes) into out (rows x cols).
  void interpolate(const double* key, Eigen::Ref<Eigen::MatrixXd> out, NodeTableData& d) const;

 private:
  std::vector<Eigen::VectorXd> axes_;
  Index nodes_ = 0, rows_ = 0, cols_ = 0;
  RowMatrix entries_;        //!< nodes x (rows cols), or the PCA coefficients nodes x k
  Eigen::MatrixXd modes_;    //!< k x (rows cols) (compressed only)
  Eigen::RowVectorXd mean_;  //!< rows cols (compressed only)
};

}  // namespace directable
