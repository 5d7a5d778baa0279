#pragma once
// Coupling of a reduced fluid and an object's boundary basis (Treuille
// thesis sec. 3.5.2-3.5.6):
//   feedforward F = -(S Btilde)' S R^-1 B      (p x r, eq. 3.11; or with the
//               energy weights of the boundary basis in place of (S Btilde)')
//   feedback    G = B' R [Btilde, rigid]       (r x m, eq. 3.12)
// on the fly, or tabulated over a grid of poses and interpolated
// multilinearly (optionally PCA-compressed over the poses).
#include <Eigen/Core>
#include <memory>
#include <vector>

#include "directable/core/progress.hpp"
#include "directable/models/fluid/boundary_basis.hpp"
#include "directable/models/fluid/boundary_tools.hpp"
#include "directable/models/fluid/reduced_fluid.hpp"

namespace directable {

//! Nodes of a pose table: uniformly spaced, increasing x, y and theta
//! (each >= 1 node); the table holds every (x, y, theta) combination.
struct PoseAxes {
  Eigen::VectorXd x, y, theta;
};

//! Per-thread buffers of the on-the-fly operators.
struct CouplingData {
  RowMatrix M;                  //!< min(q, 64) x r, S R^-1 B for a block of surface points (rows contiguous: each sums basis rows)
  std::vector<Index> faces;     //!< world faces under the local box
  Eigen::MatrixXd values;       //!< faces x m, R [Btilde, rigid] on those faces
  Eigen::MatrixXd B_faces;      //!< faces x r, the basis rows of those faces
  NodeTableData table;          //!< the table lookups' buffers
  //! min(q, 64) x r, the same block in float (the single-precision feedforward)
  Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> M32;
  Eigen::VectorXd row;          //!< r: one surface point's row of S R^-1 B, accumulated in double
  Eigen::VectorXd speeds;       //!< q: S R^-1 B z, the flow's normal speeds at the surface
  Eigen::VectorXd local;        //!< N_local: the object's combined local field [Btilde, rigid] c
  Eigen::VectorXd face_value;   //!< N (on the first on-the-fly apply): (B z)_f, valid where face_stamp[f] == stamp
  std::vector<unsigned> face_stamp;  //!< N
  unsigned stamp = 0;
};

//! A row-major float matrix: the single-precision feedforward's output.
using RowMatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

enum class Precompute { None, Feedback, Both };

//! How the feedforward projects the flow's surface speeds onto the boundary
//! fields: Surface is eq. 3.11 (Stilde', the Euclidean projection of the
//! speeds at the samples); Energy uses the boundary basis' energy_weights()
//! instead, the least-energy field combination (the same F where the speeds
//! lie in the span of S Btilde). Energy was the tested hypothesis for the
//! growth of I + G F at still poses and measured worse (DESIGN.md); it is
//! kept to reproduce that measurement.
enum class FeedforwardProjection { Surface, Energy };

class Coupling {
 public:
  //! Surface points per block of the on-the-fly feedforward.
  static constexpr Index kSurfaceBlock = 64;
  //! table: the pose grid (nullptr: none; required unless precompute is
  //! None); compress: 0 for a plain table, k > 0 to keep k PCA modes;
  //! single: store plain tables in float (half the memory and the bytes a
  //! step reads).
  Coupling(std::shared_ptr<const ReducedFluid> reduced, std::shared_ptr<const BoundaryBasis> basis,
           const PoseAxes* table, Precompute precompute, Index compress, int threads = 0,
           const ProgressFn* progress = nullptr, bool single = false,
           FeedforwardProjection projection = FeedforwardProjection::Surface);

  const ReducedFluid& reduced() const { return *reduced_; }
  const BoundaryBasis& boundary() const { return *basis_; }
  std::shared_ptr<const BoundaryBasis> boundary_ptr() const { return basis_; }
  Index p() const { return basis_->p(); }
  Index m() const { return basis_->m(); }
  Index r() const { return reduced_->r(); }
  Precompute precompute() const { return precompute_; }
  FeedforwardProjection projection() const { return projection_; }
  //! p x q: the projection of surface speeds in F = -W S R^-1 B (Stilde' or energy_weights()).
  const Eigen::MatrixXd& feedforward_weights() const { return weights_; }
  Index compress() const { return compress_; }
  Index table_nodes() const { return G_table_.nodes(); }
  bool single() const { return G_table_.single(); }
  //! Bytes of the stored tables (F and/or G, or their PCA modes and coefficients).
  Index table_bytes() const { return F_table_.bytes() + G_table_.bytes(); }
  std::unique_ptr<CouplingData> create_data() const;

  //! Eq. 3.11 at pose, computed from the surface samples.
  void feedforward_exact(const Pose2D& pose, Eigen::Ref<Eigen::MatrixXd> F, CouplingData& d) const;
  //! The same in single precision: each row of S R^-1 B is summed in double
  //! and rounded, the p x q x r product runs in float (twice the lanes of a
  //! vector; F to ~1e-6 relative). F is row-major (NumPy's layout), so a
  //! caller's preallocated (p, r) float32 array is written in place; its
  //! shape is checked (named "out").
  void feedforward_exact(const Pose2D& pose, Eigen::Ref<RowMatrixF> F, CouplingData& d) const;
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
  Pose2D node_pose(Index n) const;
  //! A pose as a table key (x, y, theta).
  static Eigen::Vector3d key(const Pose2D& pose) { return Eigen::Vector3d(pose.x, pose.y, pose.theta); }

  std::shared_ptr<const ReducedFluid> reduced_;
  std::shared_ptr<const BoundaryBasis> basis_;
  Precompute precompute_;
  FeedforwardProjection projection_;
  Index compress_;
  Eigen::MatrixXd weights_;  //!< p x q, W of F = -W S R^-1 B
  Eigen::MatrixXf weights32_;  //!< p x q, W rounded to float
  std::vector<Eigen::VectorXd> axes_;  //!< x, y, theta nodes of the tables
  NodeTable F_table_, G_table_;         //!< p x r and r x m per node
};

}  // namespace directable
