#pragma once
// Rigid 3D obstacles for the MAC fluid: a closed triangle mesh in the object
// frame, and its pose and rigid velocity in the world
// (world = R local + c, velocity v + omega x (x - c)).
#include <Eigen/Core>
#include <Eigen/Geometry>
#include <memory>

#include "directable/core/types.hpp"

namespace directable {

using TriangleMatrix = Eigen::Matrix<Index, Eigen::Dynamic, 3, Eigen::RowMajor>;

class Shape3D {
 public:
  //! vertices (V x 3), triangles (F x 3) of a closed, consistently oriented
  //! mesh. An inward-oriented mesh (negative volume) is reversed and
  //! reversed() reports it; an open mesh (an edge not shared by exactly two
  //! triangles in opposite directions) is an invalid_argument.
  Shape3D(const Eigen::Ref<const RowMatrix>& vertices, const TriangleMatrix& triangles);

  //! Box of sides (w, h, d) along (x, y, z), centred on the origin.
  static Shape3D box(double w, double h, double d);
  //! Sphere of radius r (icosphere, `subdivisions` times refined).
  static Shape3D sphere(double r, int subdivisions = 2);
  //! Plate of w (x) by h (y), thickness along z, centred on the origin, with a
  //! centred rectangular aperture (aw, ah) through it when aw, ah > 0.
  static Shape3D plate(double w, double h, double thickness, double aw = 0.0, double ah = 0.0);

  const RowMatrix& vertices() const { return vertices_; }        //!< V x 3
  const TriangleMatrix& triangles() const { return triangles_; }  //!< F x 3
  bool reversed() const { return reversed_; }
  double volume() const { return volume_; }
  //! Largest distance of a vertex from the object origin.
  double radius() const { return radius_; }
  //! Smallest extent of the mesh's bounding box (the thickness of a plate).
  double min_extent() const { return (hi_ - lo_).minCoeff(); }
  const Eigen::Vector3d& lower() const { return lo_; }
  const Eigen::Vector3d& upper() const { return hi_; }

  //! Whether a point (object frame) is inside (generalised winding number > 1/2).
  bool inside(const Eigen::Vector3d& p) const;
  //! inside() of every row of `points` (P x 3, finite: checked, named "points") into `in` (P).
  void inside(const Eigen::Ref<const RowMatrix>& points, Eigen::Ref<Eigen::Array<bool, Eigen::Dynamic, 1>> in) const;
  //! The closest surface point to p (object frame) and its outward normal.
  Eigen::Vector3d closest_point(const Eigen::Vector3d& p, Eigen::Vector3d& normal) const;
  //! closest_point() of every row of `points` (P x 3, finite: checked, named "points") into `closest` and `normals` (P x 3).
  void closest_point(const Eigen::Ref<const RowMatrix>& points, Eigen::Ref<RowMatrix> closest,
                     Eigen::Ref<RowMatrix> normals) const;
  //! Surface samples about `spacing` apart (one per plane and cube of that side), with outward normals: points (q x 3), normals (q x 3).
  void surface(double spacing, RowMatrix& points, RowMatrix& normals) const;

 private:
  RowMatrix vertices_;
  TriangleMatrix triangles_;
  bool reversed_ = false;
  double volume_ = 0.0, radius_ = 0.0;
  Eigen::Vector3d lo_, hi_;  //!< bounding box
};

//! A shape at a pose with a rigid velocity.
class Obstacle3D {
 public:
  //! rotation: a proper rotation matrix (|R'R - I| <= 1e-9, det R > 0);
  //! position, velocity and angular velocity finite.
  Obstacle3D(std::shared_ptr<const Shape3D> shape, const Eigen::Vector3d& position, const Eigen::Matrix3d& rotation,
             const Eigen::Vector3d& velocity, const Eigen::Vector3d& angular_velocity);

  const Shape3D& shape() const { return *shape_; }
  std::shared_ptr<const Shape3D> shape_ptr() const { return shape_; }
  const Eigen::Vector3d& position() const { return c_; }
  const Eigen::Matrix3d& rotation() const { return R_; }
  const Eigen::Vector3d& velocity() const { return v_; }
  const Eigen::Vector3d& angular_velocity() const { return w_; }

  Eigen::Vector3d to_local(const Eigen::Vector3d& x) const { return R_.transpose() * (x - c_); }
  Eigen::Vector3d to_world(const Eigen::Vector3d& p) const { return R_ * p + c_; }
  bool inside(const Eigen::Vector3d& x) const { return shape_->inside(to_local(x)); }
  //! Rigid velocity v + omega x (x - c) at a world point.
  Eigen::Vector3d rigid_velocity(const Eigen::Vector3d& x) const { return v_ + w_.cross(x - c_); }
  //! inside() of every world point, a row of `points` (P x 3, finite: checked, named "points"), into `in` (P).
  void inside(const Eigen::Ref<const RowMatrix>& points, Eigen::Ref<Eigen::Array<bool, Eigen::Dynamic, 1>> in) const;
  //! rigid_velocity() of every row of `points` (P x 3, finite: checked, named "points") into `velocities` (P x 3).
  void rigid_velocity(const Eigen::Ref<const RowMatrix>& points, Eigen::Ref<RowMatrix> velocities) const;
  //! World bounding box of the transformed mesh.
  void world_bounds(Eigen::Vector3d& lo, Eigen::Vector3d& hi) const;
  //! Moves a world point inside the shape out along the normal of its
  //! closest surface point, `margin` beyond the surface; returns whether it moved.
  bool push_out(Eigen::Vector3d& x, double margin) const;

 private:
  std::shared_ptr<const Shape3D> shape_;
  Eigen::Vector3d c_, v_, w_;
  Eigen::Matrix3d R_;
};

//! The rotation matrix of a rotation vector (axis times angle, radians).
Eigen::Matrix3d rotation_from_vector(const Eigen::Vector3d& rotvec);

}  // namespace directable
