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
//   multilinearly, optionally PCA-compressed over the nodes;
// - scene_step and its checks: the per-step loop of Fig. 3.7 around the
//   objects' couplings, for a scene of any dimension.
#include <Eigen/Core>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "directable/core/progress.hpp"
#include "directable/core/types.hpp"
#include "directable/models/fluid/galerkin_fluid.hpp"

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
  //! u (variables x k) for the speeds s (rows - n_zero x k); returns the
  //! largest residual. speed_multipliers, when given, receives the speed
  //! rows of y = (K K')^-1 [0; s] (u = K' y): (M_ss s, the energy metric of
  //! the surface speeds applied to s, where M_ss is the speed block of (K K')^-1).
  double solve(const Eigen::Ref<const Eigen::MatrixXd>& speeds, Eigen::MatrixXd& u,
               Eigen::MatrixXd* speed_multipliers = nullptr) const;

 private:
  Eigen::SparseMatrix<double> K_;  //!< constraints x variables
  Index n_zero_;
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> normal_;  //!< K K', constraints x constraints
};

//! Checks one axis of a table: >= 1 node, finite, uniformly spaced with a
//! spacing > 0 (message names "<what> <axis>").
void check_table_axis(const std::string& name, const Eigen::VectorXd& a);

//! Per-thread buffers of NodeTable::interpolate and NodeTable::apply.
struct NodeTableData {
  Eigen::VectorXd mixed;  //!< entry width: the interpolated row
  Eigen::VectorXd flat;   //!< rows cols: the decompressed operator
};

//! rows x cols matrices on the nodes of a regular grid of d uniform axes
//! (node n has index i_0 + n_0 (i_1 + n_1 (...)): the first axis fastest).
//! A node's matrix is one contiguous row of the table (column-major inside).
//! Plain tables may be stored in single precision (half the memory and half
//! the bytes a lookup reads; entries rounded to ~6e-8 relative), and are
//! applied node by node without forming the interpolated operator.
class NodeTable {
 public:
  NodeTable() = default;
  //! value(n, M) fills node n's matrix M (rows x cols); compress > 0 keeps
  //! that many PCA modes over the nodes (modes of zero variance dropped);
  //! single: store a plain table in float (not with compress).
  NodeTable(std::vector<Eigen::VectorXd> axes, Index rows, Index cols, Index compress, int threads,
            const ProgressFn* progress, const std::function<void(Index, Eigen::Ref<Eigen::MatrixXd>)>& value,
            bool single = false);
  //! Nodes of the grid and the coordinates of node n (d).
  Index nodes() const { return nodes_; }
  Eigen::VectorXd node(Index n) const { return node(axes_, n); }
  static Eigen::VectorXd node(const std::vector<Eigen::VectorXd>& axes, Index n);
  const std::vector<Eigen::VectorXd>& axes() const { return axes_; }
  bool empty() const { return nodes_ == 0; }
  bool compressed() const { return modes_.size() > 0; }
  bool single() const { return entries32_.size() > 0; }
  Index bytes() const;
  //! Calls fn(node, weight) for each node around key (d coordinates, clamped
  //! to the axes) with a nonzero multilinear weight (at most 2^d of them).
  template <class Fn>
  void for_each_corner(const double* key, Fn&& fn) const;
  //! The multilinear interpolation at key into out (rows x cols).
  void interpolate(const double* key, Eigen::Ref<Eigen::MatrixXd> out, NodeTableData& d) const;
  //! out (rows) += T(key) x (x: cols) for the interpolated operator T(key),
  //! without forming it for a plain table (sum_n w_n T_n x, each node's
  //! matrix read once).
  void apply(const double* key, const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> out,
             NodeTableData& d) const;

 private:
  std::vector<Eigen::VectorXd> axes_;
  Index nodes_ = 0, rows_ = 0, cols_ = 0;
  RowMatrix entries_;        //!< nodes x (rows cols), or the PCA coefficients nodes x k (double tables)
  Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> entries32_;  //!< nodes x (rows cols) (single)
  Eigen::MatrixXd modes_;    //!< k x (rows cols) (compressed only)
  Eigen::RowVectorXd mean_;  //!< rows cols (compressed only)
};

template <class Fn>
void NodeTable::for_each_corner(const double* key, Fn&& fn) const {
  const std::size_t D = axes_.size();
  Index stride[16];
  double t[16];
  int moving[16], n_moving = 0;
  Index base = 0, s = 1;
  for (std::size_t a = 0; a < D; ++a) {
    const Eigen::VectorXd& ax = axes_[a];
    stride[a] = s;
    Index lo = 0;
    t[a] = 0.0;
    if (ax.size() > 1) {
      const double f = std::clamp((key[a] - ax[0]) / (ax[1] - ax[0]), 0.0, double(ax.size() - 1));
      lo = std::min<Index>(Index(std::floor(f)), ax.size() - 2);
      t[a] = f - double(lo);
      if (t[a] > 0.0) moving[n_moving++] = int(a);
    }
    base += lo * s;
    s *= ax.size();
  }
  for (int c = 0; c < (1 << n_moving); ++c) {
    double w = 1.0;
    Index n = base;
    for (int b = 0; b < n_moving; ++b) {
      const int a = moving[b];
      if ((c >> b) & 1)
        w *= t[a], n += stride[a];
      else
        w *= 1.0 - t[a];
    }
    if (w != 0.0) fn(n, w);
  }
}

//! Checks a scene's K x cols poses or velocities (shape, finite; the message names `name`).
void check_scene_rows(const char* name, const Eigen::Ref<const RowMatrix>& rows, Index objects, Index cols);
//! Checks the state of a scene query: z (r, finite), boundary_coeffs (K x
//! max_m, finite) and poses (K x cols, finite).
void check_scene_state(Index r, Index objects, Index max_m, Index pose_cols, const Eigen::Ref<const Eigen::VectorXd>& z,
                       const Eigen::Ref<const RowMatrix>& coeffs, const Eigen::Ref<const RowMatrix>& poses);

//! Checks a scene's couplings (none missing, each built on `reduced`) and
//! returns their largest coefficient count m.
template <class Coupling, class Fluid>
Index check_scene_couplings(const Fluid* reduced, const std::vector<std::shared_ptr<const Coupling>>& couplings,
                            const std::string& reduced_type, const std::string& coupling_type) {
  if (!reduced) throw std::invalid_argument("reduced must be a " + reduced_type + ", got None");
  Index max_m = 0;
  for (std::size_t i = 0; i < couplings.size(); ++i) {
    if (!couplings[i])
      throw std::invalid_argument("couplings[" + std::to_string(i) + "] must be a " + coupling_type + ", got None");
    if (&couplings[i]->reduced() != reduced)
      throw std::invalid_argument("couplings[" + std::to_string(i) + "] was built for another ReducedFluid");
    max_m = std::max(max_m, couplings[i]->m());
  }
  return max_m;
}

//! One step of a reduced scene (Treuille thesis Fig. 3.7), whatever the
//! dimension: checks z and w (r, finite), dt > 0, poses and velocities
//! (K x pose_cols, finite); advects and diffuses z (steps 1-2) and adds the
//! force dt w (step 3) into z_flow; sets z_next = z_flow and coeffs = 0;
//! then object(i) does steps 4-6 for object i: writes its coefficients
//! (row i of coeffs, from z_flow and its velocity) and adds its feedback to z_next.
void scene_step(const GalerkinFluid& fluid, Index objects, Index pose_cols, const Eigen::Ref<const Eigen::VectorXd>& z,
                const Eigen::Ref<const Eigen::VectorXd>& w, double dt, const Eigen::Ref<const RowMatrix>& poses,
                const Eigen::Ref<const RowMatrix>& velocities, Eigen::Ref<Eigen::VectorXd> z_next,
                Eigen::Ref<RowMatrix> coeffs, ReducedFluidData& fluid_data, const Eigen::VectorXd& zero_w,
                Eigen::VectorXd& z_flow, const std::function<void(Index)>& object);

}  // namespace directable
