#pragma once
// Coupling of a reduced fluid and an object's boundary basis (Treuille
// thesis sec. 3.5.2-3.5.6):
//   feedforward F = -(S Btilde)' S R^-1 B      (p x r, eq. 3.11)
//   feedback    G = B' R [Btilde, rigid]       (r x m, eq. 3.12)
// on the fly, or tabulated over a grid of poses and interpolated
// multilinearly (optionally PCA-compressed over the poses).
#include <Eigen/Core>
#include <memory>
#include <vector>

#include "directable/core/progress.hpp"
#include "directable/models/fluid/boundary_basis.hpp"
#include "directable/models/fluid/reduced_fluid.hpp"

namespace directable {

//! Nodes of a pose table: uniformly spaced, increasing x, y and theta
//! (each >= 1 node); the table holds every (x, y, theta) combination.
struct PoseAxes {
  Eigen::VectorXd x, y, theta;
};

//! Per-thread buffers of the on-the-fly operators.
struct CouplingData {
  RowMatrix M;                  //!< q x r, S R^-1 B (a surface point's row contiguous: it sums basis rows)
  std::vector<Index> faces;     //!< world faces under the local box
  Eigen::MatrixXd values;       //!< faces x m, R [Btilde, rigid] on those faces
  Eigen::VectorXd mixed;        //!< table row width: interpolated table row
  Eigen::VectorXd flat;         //!< rows cols: the interpolated operator, column-major
  Eigen::MatrixXd B_faces;      //!< faces x r, the basis rows of those faces
  Eigen::MatrixXd op;           //!< p x r or r x m: an operator interpolated from a compressed table
  Eigen::VectorXd speeds;       //!< q: S R^-1 B z, the flow's normal speeds at the surface
  Eigen::VectorXd local;        //!< N_local: the object's combined local field [Btilde, rigid] c
  Eigen::VectorXd face_value;   //!< N (on the first on-the-fly apply): (B z)_f, valid where face_stamp[f] == stamp
  std::vector<unsigned> face_stamp;  //!< N
  unsigned stamp = 0;
};

enum class Precompute { None, Feedback, Both };

class Coupling {
 public:
  //! table: the pose grid (nullptr: none; required unless precompute is
  //! None); compress: 0 for a plain table, k > 0 to keep k PCA modes.
  Coupling(std::shared_ptr<const ReducedFluid> reduced, std::shared_ptr<const BoundaryBasis> basis,
           const PoseAxes* table, Precompute precompute, Index compress, int threads = 0,
           const ProgressFn* progress = nullptr);

  const ReducedFluid& reduced() const { return *reduced_; }
  const BoundaryBasis& boundary() const { return *basis_; }
  std::shared_ptr<const BoundaryBasis> boundary_ptr() const { return basis_; }
  Index p() const { return basis_->p(); }
  Index m() const { return basis_->m(); }
  Index r() const { return reduced_->r(); }
  Precompute precompute() const { return precompute_; }
  Index compress() const { return compress_; }
  Index table_nodes() const { return n_nodes_; }
  //! Bytes of the stored tables (F and/or G, or their PCA modes and coefficients).
  Index table_bytes() const;
  std::unique_ptr<CouplingData> create_data() const;

  //! Eq. 3.11 at pose, computed from the surface samples.
  void feedforward_exact(const Pose2D& pose, Eigen::Ref<Eigen::MatrixXd> F, CouplingData& d) const;
  //! Eq. 3.12 at pose, computed by resampling the boundary fields onto the world grid.
  void feedback_exact(const Pose2D& pose, Eigen::Ref<Eigen::MatrixXd> G, CouplingData& d) const;
  //! F at pose: interpolated from the table when precompute is Both, else exact.
  void feedforward(const Pose2D& pose, Eigen::Ref<Eigen::MatrixXd> F, CouplingData& d) const;
  //! G at pose: interpolated from the table unless precompute is None.
  void feedback(const Pose2D& pose, Eigen::Ref<Eigen::MatrixXd> G, CouplingData& d) const;
  //! One object's part of a scene step (Fig. 3.7, steps 4-6) without forming
  //! F or G: c = [F z; rigid] (m) and z_next += G c (r). Tabulated operators
  //! are applied node by node (sum_n w_n F_n z, sum_n w_n G_n c); on the fly,
  //! F z = -(S Btilde)' S R^-1 (B z) reads B z on the faces under the surface
  //! only, and G c = B' R (A c) scatters the one combined local field A c.
  void apply(const Pose2D& pose, const Eigen::Ref<const Eigen::VectorXd>& z,
             const Eigen::Ref<const Eigen::VectorXd>& rigid, Eigen::Ref<Eigen::VectorXd> c,
             Eigen::Ref<Eigen::VectorXd> z_next, CouplingData& d) const;

 private:
  struct Table {
    RowMatrix entries;        //!< nodes x (rows cols): plain table, or PCA coefficients nodes x k (a node's row contiguous)
    Eigen::MatrixXd modes;    //!< k x (rows cols) (compressed only)
    Eigen::RowVectorXd mean;  //!< rows cols (compressed only)
    Index rows = 0, cols = 0;
  };
  void build_table(Table& t, Index rows, Index cols, bool forward, int threads, const ProgressFn* progress);
  void interpolate(const Table& t, const Pose2D& pose, Eigen::Ref<Eigen::MatrixXd> out, CouplingData& d) const;
  //! The (up to 8) table nodes around pose with nonzero multilinear weight; returns their count.
  int node_weights(const Pose2D& pose, Index nodes[8], double weights[8]) const;
  //! Node n's operator (rows x cols, column-major) of an uncompressed table.
  static Eigen::Map<const Eigen::MatrixXd> node_matrix(const Table& t, Index n) {
    return Eigen::Map<const Eigen::MatrixXd>(t.entries.row(n).data(), t.rows, t.cols);
  }
  Pose2D node_pose(Index n) const;

  std::shared_ptr<const ReducedFluid> reduced_;
  std::shared_ptr<const BoundaryBasis> basis_;
  Precompute precompute_;
  Index compress_;
  PoseAxes axes_;
  Index n_nodes_ = 0;
  Table F_table_, G_table_;
};

}  // namespace directable
