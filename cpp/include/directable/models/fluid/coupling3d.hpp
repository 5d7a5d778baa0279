#pragma once
// Coupling of a 3D reduced fluid with an object's boundary basis (Treuille
// thesis sec. 3.5.2-3.5.6, the 3D scenes of sec. 3.6):
//   feedforward F = -(S Btilde)' S R^-1 B    (p x r, eq. 3.11)
//   feedback    G = B' R [Btilde, rigid]     (r x m, eq. 3.12)
// on the fly, or tabulated and interpolated: over a grid of poses (axes x,
// y, z and the three rotation-vector components, multilinear), or along a
// path of poses (the Leaves scene's "tables along the paths only": linear
// along the polyline, at the path point closest to the object's position).
#include <Eigen/Core>
#include <memory>
#include <vector>

#include "directable/core/progress.hpp"
#include "directable/models/fluid/boundary_basis3d.hpp"
#include "directable/models/fluid/boundary_tools.hpp"
#include "directable/models/fluid/coupling.hpp"  // Precompute
#include "directable/models/fluid/reduced_fluid3d.hpp"

namespace directable {

//! Where a 3D coupling is tabulated: a pose grid (axes x, y, z and
//! optionally rx, ry, rz, the rotation vector; without them the rotation is
//! the identity; an axis of one node holds that coordinate fixed) or a path
//! (n x 6 poses, n >= 2). Exactly one of the two.
struct PoseTable3D {
  std::vector<Eigen::VectorXd> axes;  //!< 3 or 6 uniform axes (grid), or empty
  RowMatrix path;                     //!< n x 6 (path), or empty
};

//! Per-thread buffers of the on-the-fly operators and the table lookups.
struct Coupling3DData {
  Eigen::MatrixXd M;          //!< q x r, S R^-1 B
  std::vector<Index> faces;   //!< world faces under the local box
  Eigen::MatrixXd values;     //!< faces x m, R [Btilde, rigid] on those faces
  Eigen::MatrixXd B_faces;    //!< faces x r, the basis rows of those faces
  NodeTableData table;
};

class Coupling3D {
 public:
  //! table: nullptr unless precompute is Feedback or Both; compress: 0 for
  //! plain tables, k > 0 for k PCA modes over the nodes.
  Coupling3D(std::shared_ptr<const ReducedFluid3D> reduced, std::shared_ptr<const BoundaryBasis3D> basis,
             const PoseTable3D* table, Precompute precompute, Index compress, int threads = 0,
             const ProgressFn* progress = nullptr);

  const ReducedFluid3D& reduced() const { return *reduced_; }
  const BoundaryBasis3D& boundary() const { return *basis_; }
  std::shared_ptr<const BoundaryBasis3D> boundary_ptr() const { return basis_; }
  Index p() const { return basis_->p(); }
  Index m() const { return basis_->m(); }
  Index r() const { return reduced_->r(); }
  Precompute precompute() const { return precompute_; }
  bool path_table() const { return path_.rows() > 0; }
  Index table_nodes() const { return G_table_.nodes(); }
  Index table_bytes() const { return F_table_.bytes() + G_table_.bytes(); }
  //! The pose of table node n (6).
  Eigen::Matrix<double, 1, 6> node_pose(Index n) const;
  std::unique_ptr<Coupling3DData> create_data() const;

  //! Eq. 3.11 at pose, from the surface samples.
  void feedforward_exact(const Pose3D& pose, Eigen::Ref<Eigen::MatrixXd> F, Coupling3DData& d) const;
  //! Eq. 3.12 at pose, by resampling the boundary fields onto the world grid.
  void feedback_exact(const Pose3D& pose, Eigen::Ref<Eigen::MatrixXd> G, Coupling3DData& d) const;
  //! F at pose (row: c, rotation vector): the table when precompute is Both, else exact.
  void feedforward(const double* pose, Eigen::Ref<Eigen::MatrixXd> F, Coupling3DData& d) const;
  //! G at pose: the table unless precompute is None.
  void feedback(const double* pose, Eigen::Ref<Eigen::MatrixXd> G, Coupling3DData& d) const;

 private:
  //! The table key of a pose: its 6 coordinates (grid) or its path parameter (path).
  void key(const double* pose, double* out) const;

  std::shared_ptr<const ReducedFluid3D> reduced_;
  std::shared_ptr<const BoundaryBasis3D> basis_;
  Precompute precompute_;
  RowMatrix path_;  //!< n x 6 path poses (path tables)
  NodeTable F_table_, G_table_;
};

}  // namespace directable
