#pragma once
// Rigid 2D obstacles for the MAC fluid (Treuille thesis sec. 3.5): a closed
// polygon in its object frame, and an obstacle = shape + pose + rigid
// velocity. Pose convention: world = Rot(theta) local + t; the resampling
// operator is [R u](x) = Rot(theta) u(Rot(theta)^-1 (x - t)).
#include <Eigen/Core>
#include <memory>

#include "directable/core/sequence.hpp"

namespace directable {

class Shape2D {
 public:
  //! vertices: V x 2 (V >= 3), finite, simple (no two non-adjacent edges
  //! meet). A clockwise polygon is reversed (reversed() tells).
  explicit Shape2D(const Eigen::Ref<const RowMatrix>& vertices);

  const RowMatrix& vertices() const { return vertices_; }  //!< V x 2, counter-clockwise
  bool reversed() const { return reversed_; }
  double radius() const { return radius_; }  //!< max |vertex|: the disk around the origin that holds the shape
  double area() const { return area_; }
  //! Smallest distance between a vertex and a non-adjacent edge, and
  //! between the two sides of the shape measured along the inward normal of
  //! each edge midpoint: the thinnest part, which leaks below one cell.
  double thickness() const { return thickness_; }
  //! Whether the object-frame point (x, y) lies inside (crossing number).
  bool inside(double x, double y) const;
  //! Closest boundary point to (x, y) and the outward normal there.
  void closest_boundary(double x, double y, Eigen::Vector2d& point, Eigen::Vector2d& normal) const;
  //! Surface samples: each edge cut into ceil(length / spacing) equal
  //! pieces, one point at each piece's midpoint with the edge's outward
  //! normal. points, normals: q x 2.
  void surface(double spacing, RowMatrix& points, RowMatrix& normals) const;

 private:
  RowMatrix vertices_;  //!< V x 2
  bool reversed_ = false;
  double radius_ = 0.0, area_ = 0.0, thickness_ = 0.0;
};

//! A pose (x, y, theta) and its rigid motion.
struct Pose2D {
  double x = 0.0, y = 0.0, theta = 0.0;
  double c = 1.0, s = 0.0;  //!< cos theta, sin theta
  Pose2D() = default;
  Pose2D(double x_, double y_, double theta_);
  //! World point of an object-frame point.
  Eigen::Vector2d to_world(double lx, double ly) const { return {c * lx - s * ly + x, s * lx + c * ly + y}; }
  //! Object-frame point of a world point.
  Eigen::Vector2d to_local(double wx, double wy) const {
    const double dx = wx - x, dy = wy - y;
    return {c * dx + s * dy, -s * dx + c * dy};
  }
  Eigen::Vector2d rotate(double vx, double vy) const { return {c * vx - s * vy, s * vx + c * vy}; }
  Eigen::Vector2d unrotate(double vx, double vy) const { return {c * vx + s * vy, -s * vx + c * vy}; }
};

//! Rigid velocity (vx, vy, omega) at the world point (wx, wy) of a body at pose.
inline Eigen::Vector2d rigid_velocity(const Pose2D& pose, const Eigen::Vector3d& v, double wx, double wy) {
  return {v[0] - v[2] * (wy - pose.y), v[1] + v[2] * (wx - pose.x)};
}

//! Reads a pose from 3 numbers, checked finite (named in the message).
Pose2D make_pose(const std::string& name, const Eigen::Ref<const Eigen::VectorXd>& p);

class MACGrid2D;

//! A shape at a pose moving with a rigid velocity (vx, vy, omega).
struct Obstacle2D {
  Obstacle2D(std::shared_ptr<const Shape2D> shape, const Eigen::Ref<const Eigen::VectorXd>& pose,
             const Eigen::Ref<const Eigen::VectorXd>& velocity);
  std::shared_ptr<const Shape2D> shape;
  Pose2D pose;
  Eigen::Vector3d velocity;  //!< (vx, vy, omega)
  bool inside_world(double wx, double wy) const {
    const Eigen::Vector2d l = pose.to_local(wx, wy);
    return shape->inside(l[0], l[1]);
  }
  //! Throws invalid_argument naming `name` when the shape's disk leaves the grid's domain.
  void check_in_domain(const MACGrid2D& g, const std::string& name) const;
};

}  // namespace directable
