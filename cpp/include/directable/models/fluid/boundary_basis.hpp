#pragma once
// Boundary bases of moving objects (Treuille thesis sec. 3.5.1, 3.5.5).
//
// An object's surface is sampled at q points x_k with outward normals n_k
// (object frame). The surface-speed operator S maps a MAC field to the q
// normal speeds n_k . u(x_k) (bilinear interpolation, velocity_at's rule).
// Offline, S R^-1 b is collected for every pose of a training set and
// every column b of the reduced basis; the first p principal directions
// s_1..s_p of those speeds become the boundary fields: for each, the
// minimum-norm field u on a local MAC grid (object frame, spacing h)
// with zero divergence on the local cells outside the shape, zero flux
// through the local grid's outer faces and S u = s_k, so S Btilde is
// orthonormal (eq. 3.10). Rigid fields do the same for the surface speeds
// of unit translations and the unit rotation.
#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <memory>
#include <vector>

#include "directable/core/progress.hpp"
#include "directable/models/fluid/mac_grid.hpp"
#include "directable/models/fluid/shape2d.hpp"

namespace directable {

//! S of a grid at world points (P x 2) with unit normals (P x 2): P x N,
//! row k = n_k . (bilinear interpolation at x_k).
Eigen::SparseMatrix<double, Eigen::RowMajor> surface_speed_operator(const MACGrid2D& g,
                                                                     const Eigen::Ref<const RowMatrix>& points,
                                                                     const Eigen::Ref<const RowMatrix>& normals);

class BoundaryBasis {
 public:
  //! basis: the reduced basis B (N x r) on grid; poses: n x 3 training poses
  //! (x, y, theta); p: boundary fields wanted (reduced to the rank of the
  //! collected speeds, see requested_p()); surface_spacing, local_size:
  //! <= 0 for the defaults h/2 and radius + 4h.
  BoundaryBasis(std::shared_ptr<const MACGrid2D> grid, const Eigen::Ref<const RowMatrix>& basis,
                std::shared_ptr<const Shape2D> shape, const Eigen::Ref<const RowMatrix>& poses, Index p,
                double surface_spacing, double local_size, bool rigid, int threads = 0,
                const ProgressFn* progress = nullptr);

  const Shape2D& shape() const { return *shape_; }
  std::shared_ptr<const Shape2D> shape_ptr() const { return shape_; }
  const MACGrid2D& local_grid() const { return *local_; }
  std::shared_ptr<const MACGrid2D> local_grid_ptr() const { return local_; }
  //! Half-size of the local grid: object point x sits at x + half_size() in local-grid coordinates.
  double half_size() const { return half_size_; }
  double h() const { return local_->h(); }
  Index q() const { return points_.rows(); }
  Index p() const { return p_; }
  Index requested_p() const { return requested_p_; }
  Index rank() const { return rank_; }
  Index n_rigid() const { return rigid_fields_.cols(); }
  Index m() const { return p_ + n_rigid(); }  //!< p + rigid fields: the size of an object's coefficient vector
  const RowMatrix& surface_points() const { return points_; }    //!< q x 2, object frame
  const RowMatrix& surface_normals() const { return normals_; }  //!< q x 2, object frame
  const Eigen::MatrixXd& fields() const { return fields_; }              //!< N_local x p
  const Eigen::MatrixXd& rigid_fields() const { return rigid_fields_; }  //!< N_local x 3 (or x 0)
  const Eigen::MatrixXd& all_fields() const { return all_fields_; }      //!< N_local x m: [fields, rigid_fields]
  const Eigen::MatrixXd& surface_speeds() const { return surface_speeds_; }  //!< q x p, S Btilde
  const Eigen::VectorXd& energy() const { return energy_; }  //!< p, fraction of the collected speeds' energy per mode
  //! S on the local grid: q x N_local.
  const Eigen::SparseMatrix<double, Eigen::RowMajor>& local_surface_operator() const { return S_local_; }
  //! Largest |S u - s| and largest |div| h on outside cells over the fields (solve accuracy).
  double constraint_error() const { return constraint_error_; }

  //! World surface points and normals (q x 2 each) at a pose.
  void world_surface(const Pose2D& pose, RowMatrix& points, RowMatrix& normals) const;
  //! S R^-1 B at a pose: the surface speeds (q x r) of the columns of
  //! basis (N x r) on the world grid g.
  void world_surface_speeds(const MACGrid2D& g, const Eigen::Ref<const RowMatrix>& basis, const Pose2D& pose,
                            Eigen::Ref<Eigen::MatrixXd> M) const;
  //! Velocity (object frame) of the local field u (N_local) at the object
  //! point (lx, ly); false (and zero) outside the local grid.
  bool local_velocity(const Eigen::Ref<const Eigen::VectorXd>& u, double lx, double ly, Eigen::Vector2d& v) const;
  //! R u on the world grid: the world faces whose centres fall inside the
  //! local box at pose (faces, list) and their values (faces.size() x k) for
  //! the k local fields (N_local x k).
  void resample(const MACGrid2D& g, const Pose2D& pose, const Eigen::Ref<const Eigen::MatrixXd>& local_fields,
                std::vector<Index>& faces, Eigen::MatrixXd& values) const;

 private:

  std::shared_ptr<const Shape2D> shape_;
  std::shared_ptr<const MACGrid2D> local_;
  double half_size_;
  Index p_, requested_p_, rank_;
  RowMatrix points_, normals_;                               //!< q x 2 each
  Eigen::SparseMatrix<double, Eigen::RowMajor> S_local_;     //!< q x N_local
  Eigen::MatrixXd fields_, rigid_fields_, all_fields_;       //!< N_local x p, N_local x 3, N_local x m
  Eigen::MatrixXd surface_speeds_;                           //!< q x p
  Eigen::VectorXd energy_;                                   //!< p
  double constraint_error_ = 0.0;
};

}  // namespace directable
