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
#include <algorithm>
#include <cmath>
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
  //! p x q: W = (A'A)^-1 (M_ss Stilde)' for the fields A (N_local x p) and
  //! the speed block M_ss of (K K')^-1. W s are the coefficients of the
  //! field combination whose surface speeds best match s in the energy of
  //! the least-norm fields (W Stilde = I): the alternative to Stilde' in
  //! the feedforward (Coupling's "energy" projection).
  const Eigen::MatrixXd& energy_weights() const { return energy_weights_; }
  //! S on the local grid: q x N_local.
  const Eigen::SparseMatrix<double, Eigen::RowMajor>& local_surface_operator() const { return S_local_; }
  //! Largest |S u - s| and largest |div| h on outside cells over the fields (solve accuracy).
  double constraint_error() const { return constraint_error_; }

  //! World surface points and normals (q x 2 each) at a pose.
  void world_surface(const Pose2D& pose, RowMatrix& points, RowMatrix& normals) const;
  //! S R^-1 B at a pose: the surface speeds (q x r) of the columns of
  //! basis (N x r) on the world grid g; with first, only the rows first ..
  //! first + M.rows() - 1 (a block of surface points).
  void world_surface_speeds(const MACGrid2D& g, const Eigen::Ref<const RowMatrix>& basis, const Pose2D& pose,
                            Eigen::Ref<RowMatrix> M, Index first = 0) const;
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
  //! Surface point k at pose on the world grid g: the stencils of the x and
  //! y velocity components there and the world normal n (S's row k is
  //! n_x sx + n_y sy).
  void surface_stencils(const MACGrid2D& g, const Pose2D& pose, Index k, Stencil4& sx, Stencil4& sy,
                        Eigen::Vector2d& n) const;
  //! Calls fn(face, sx, sy, d) for every world face of g whose centre falls
  //! inside the local box at pose: sx, sy the local grid's stencils there and
  //! d the row of Rot that gives the face's world component of a local
  //! velocity (R u at the face = d . (sx u, sy u)).
  template <class Fn>
  void for_each_world_face(const MACGrid2D& g, const Pose2D& pose, Fn&& fn) const;

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
  Eigen::MatrixXd energy_weights_;                           //!< p x q
  double constraint_error_ = 0.0;
};

template <class Fn>
void BoundaryBasis::for_each_world_face(const MACGrid2D& g, const Pose2D& pose, Fn&& fn) const {
  const double h = g.h(), reach = half_size_ * 1.4142135623730951, w = local_->width();
  auto visit = [&](Index f, double x, double y, bool is_x) {
    const Eigen::Vector2d l = pose.to_local(x, y);
    const double lx = l[0] + half_size_, ly = l[1] + half_size_;
    if (!(lx >= 0.0 && lx <= w && ly >= 0.0 && ly <= w)) return;
    Stencil4 sx, sy;
    local_->x_stencil(lx, ly, sx);
    local_->y_stencil(lx, ly, sy);
    // e . Rot u_local: the world component is Rot's row e applied to (u_x, u_y)
    const Eigen::Vector2d d = is_x ? Eigen::Vector2d(pose.c, -pose.s) : Eigen::Vector2d(pose.s, pose.c);
    fn(f, sx, sy, d);
  };
  const Index i0 = std::max<Index>(0, Index(std::floor((pose.x - reach) / h)) - 1),
              i1 = std::min<Index>(g.nx(), Index(std::ceil((pose.x + reach) / h)) + 1),
              j0 = std::max<Index>(0, Index(std::floor((pose.y - reach) / h)) - 1),
              j1 = std::min<Index>(g.ny(), Index(std::ceil((pose.y + reach) / h)) + 1);
  for (Index j = j0; j < std::min(j1 + 1, g.ny()); ++j)
    for (Index i = std::max<Index>(i0, 1); i <= std::min(i1, g.nx() - 1); ++i)
      visit(g.xface(i, j), double(i) * h, (double(j) + 0.5) * h, true);
  for (Index j = std::max<Index>(j0, 1); j <= std::min(j1, g.ny() - 1); ++j)
    for (Index i = i0; i < std::min(i1 + 1, g.nx()); ++i)
      visit(g.yface(i, j), (double(i) + 0.5) * h, double(j) * h, false);
}

}  // namespace directable
