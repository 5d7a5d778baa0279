#pragma once
// Boundary bases of moving 3D objects (Treuille thesis sec. 3.5.1, 3.5.5,
// "3D Boundaries" of sec. 3.6): the 2D construction of boundary_basis.hpp
// on a MACGrid3D, with the shared PCA and least-norm solve of
// boundary_tools.hpp.
//
// Surface samples x_k with outward normals n_k (object frame, q of them);
// S maps a MAC field to n_k . u(x_k) (trilinear interpolation). Offline,
// S R^-1 b is collected at every training pose for every column b of the
// reduced basis; its first p principal directions s_1..s_p become local
// fields (a MACGrid3D in the object frame, spacing h): minimum norm, zero
// divergence on the local cells outside the shape, zero flux through the
// local grid's outer faces, S u = s_k, so S Btilde is orthonormal (eq.
// 3.10). Six rigid fields do the same for the surface speeds of unit
// translations along x, y, z and unit rotations about x, y, z.
//
// Poses: world = R local + c, given as rows (c (3), rotation vector (3),
// axis times angle in rad); [R u](x) = R u(R' (x - c)).
#include <Eigen/Core>
#include <Eigen/SparseCore>
#include <memory>
#include <string>
#include <vector>

#include "directable/core/progress.hpp"
#include "directable/models/fluid/mac_grid3d.hpp"
#include "directable/models/fluid/shape3d.hpp"

namespace directable {

//! A rigid pose: world = R local + c.
struct Pose3D {
  Pose3D() = default;
  //! From a row (c (3), rotation vector (3)).
  explicit Pose3D(const double* row);
  Eigen::Vector3d c = Eigen::Vector3d::Zero();
  Eigen::Matrix3d R = Eigen::Matrix3d::Identity();
  Eigen::Vector3d to_world(const Eigen::Vector3d& p) const { return R * p + c; }
  Eigen::Vector3d to_local(const Eigen::Vector3d& x) const { return R.transpose() * (x - c); }
};

//! Where the speeds S reads are taken. surface: samples of the shape's
//! surface (Shape3D::surface) with its normals. faces: the centres of the
//! local grid's faces that touch a cell whose centre lies inside the shape,
//! each with its own axis as normal: the faces the full solver closes
//! (FluidSim3D gives every face touching a solid cell the rigid normal
//! velocity), so u' meets the full solver's boundary condition there.
//! faces_and_surface: the faces between two cells inside the shape (the
//! inside moves rigidly, as in the full solver) plus the surface samples (no
//! flow through the true surface, whose edges the closed faces miss by up to
//! half a cell).
enum class BoundarySamples { surface, faces, faces_and_surface };
//! "surface", "faces" or "faces+surface"; anything else is an invalid_argument naming `samples`.
BoundarySamples boundary_samples_from(const std::string& name);
//! The name boundary_samples_from reads.
const char* boundary_samples_name(BoundarySamples samples);

//! S of a 3D grid at world points (P x 3) with unit normals (P x 3): P x N,
//! row k = n_k . (trilinear interpolation at x_k, clamped to the domain).
Eigen::SparseMatrix<double, Eigen::RowMajor> surface_speed_operator(const MACGrid3D& g,
                                                                     const Eigen::Ref<const RowMatrix>& points,
                                                                     const Eigen::Ref<const RowMatrix>& normals);

class BoundaryBasis3D {
 public:
  //! basis: B (N x r) on grid; poses: n x 6 training poses; p: fields wanted
  //! (cut to the rank of the collected speeds, see requested_p());
  //! surface_spacing <= 0: h; local_half (3): half-sizes of the local box
  //! along the object's axes, each <= 0 for the default (the shape's extent
  //! plus 4h); the box must hold the shape with a cell to spare.
  //! samples = faces: surface_spacing is unused; the collected speeds are
  //! made flux-free over the closed faces before the PCA (the divergence
  //! rows of the fluid cells then sum to a combination of the speed rows,
  //! one of them is dropped), so the fields meet them exactly.
  BoundaryBasis3D(std::shared_ptr<const MACGrid3D> grid, const Eigen::Ref<const RowMatrix>& basis,
                  std::shared_ptr<const Shape3D> shape, const Eigen::Ref<const RowMatrix>& poses, Index p,
                  double surface_spacing, const Eigen::Vector3d& local_half, bool rigid, int threads = 0,
                  const ProgressFn* progress = nullptr, BoundarySamples samples = BoundarySamples::surface);

  const Shape3D& shape() const { return *shape_; }
  std::shared_ptr<const Shape3D> shape_ptr() const { return shape_; }
  const MACGrid3D& local_grid() const { return *local_; }
  std::shared_ptr<const MACGrid3D> local_grid_ptr() const { return local_; }
  //! Half-sizes of the local grid: object point x sits at x + half_size() in local-grid coordinates.
  const Eigen::Vector3d& half_size() const { return half_size_; }
  double h() const { return local_->h(); }
  Index q() const { return points_.rows(); }
  Index p() const { return p_; }
  Index requested_p() const { return requested_p_; }
  Index rank() const { return rank_; }
  Index n_rigid() const { return rigid_fields_.cols(); }
  BoundarySamples samples() const { return samples_; }
  Index m() const { return p_ + n_rigid(); }  //!< p + rigid fields: an object's coefficient count
  const RowMatrix& surface_points() const { return points_; }    //!< q x 3, object frame
  const RowMatrix& surface_normals() const { return normals_; }  //!< q x 3, object frame
  const Eigen::MatrixXd& fields() const { return fields_; }              //!< N_local x p
  const Eigen::MatrixXd& rigid_fields() const { return rigid_fields_; }  //!< N_local x 6 (or x 0)
  const Eigen::MatrixXd& all_fields() const { return all_fields_; }      //!< N_local x m
  const Eigen::MatrixXd& surface_speeds() const { return surface_speeds_; }  //!< q x p, S Btilde
  const Eigen::VectorXd& energy() const { return energy_; }  //!< p
  //! S on the local grid: q x N_local.
  const Eigen::SparseMatrix<double, Eigen::RowMajor>& local_surface_operator() const { return S_local_; }
  double constraint_error() const { return constraint_error_; }

  //! World surface points and normals (q x 3 each) at a pose.
  void world_surface(const Pose3D& pose, RowMatrix& points, RowMatrix& normals) const;
  //! S R^-1 B at a pose: surface speeds (q x r) of the columns of basis (N x r) on g.
  void world_surface_speeds(const MACGrid3D& g, const Eigen::Ref<const RowMatrix>& basis, const Pose3D& pose,
                            Eigen::Ref<Eigen::MatrixXd> M) const;
  //! Whether the object point p lies in the local box (its local-grid coordinates in l).
  bool in_box(const Eigen::Vector3d& p, Eigen::Vector3d& l) const;
  //! Velocity (object frame) of the local field u (N_local) at object point p; false (and zero) outside the box.
  bool local_velocity(const Eigen::Ref<const Eigen::VectorXd>& u, const Eigen::Vector3d& p, Eigen::Vector3d& v) const;
  //! R u on the world grid: the interior world faces whose centres fall in
  //! the local box at pose, and their values (faces x k) for the k local fields (N_local x k).
  void resample(const MACGrid3D& g, const Pose3D& pose, const Eigen::Ref<const Eigen::MatrixXd>& local_fields,
                std::vector<Index>& faces, Eigen::MatrixXd& values) const;

 private:
  std::shared_ptr<const Shape3D> shape_;
  std::shared_ptr<const MACGrid3D> local_;
  Eigen::Vector3d half_size_;
  Index p_, requested_p_, rank_ = 0;
  RowMatrix points_, normals_;                            //!< q x 3 each
  Eigen::SparseMatrix<double, Eigen::RowMajor> S_local_;  //!< q x N_local
  Eigen::MatrixXd fields_, rigid_fields_, all_fields_;    //!< N_local x p, x 6, x m
  Eigen::MatrixXd surface_speeds_;                        //!< q x p
  Eigen::VectorXd energy_;                                //!< p
  double constraint_error_ = 0.0;
  BoundarySamples samples_ = BoundarySamples::surface;
};

}  // namespace directable
