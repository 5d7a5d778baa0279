#include "directable/models/fluid/shape2d.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "directable/core/errors.hpp"
#include "directable/models/fluid/mac_grid.hpp"

namespace directable {

namespace {

double cross(const Eigen::Vector2d& a, const Eigen::Vector2d& b) { return a[0] * b[1] - a[1] * b[0]; }

// Whether the closed segments [a, b] and [c, d] share a point.
bool segments_meet(const Eigen::Vector2d& a, const Eigen::Vector2d& b, const Eigen::Vector2d& c,
                   const Eigen::Vector2d& d) {
  const double d1 = cross(b - a, c - a), d2 = cross(b - a, d - a), d3 = cross(d - c, a - c), d4 = cross(d - c, b - c);
  if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))) return true;
  auto on = [](const Eigen::Vector2d& p, const Eigen::Vector2d& q, const Eigen::Vector2d& r, double o) {
    return o == 0.0 && std::min(p[0], q[0]) <= r[0] && r[0] <= std::max(p[0], q[0]) && std::min(p[1], q[1]) <= r[1] &&
           r[1] <= std::max(p[1], q[1]);
  };
  return on(a, b, c, d1) || on(a, b, d, d2) || on(c, d, a, d3) || on(c, d, b, d4);
}

// Closest point to p on the segment [a, b].
Eigen::Vector2d closest_on_segment(const Eigen::Vector2d& p, const Eigen::Vector2d& a, const Eigen::Vector2d& b) {
  const Eigen::Vector2d e = b - a;
  const double t = std::clamp((p - a).dot(e) / e.squaredNorm(), 0.0, 1.0);
  return a + t * e;
}

}  // namespace

Shape2D::Shape2D(const Eigen::Ref<const RowMatrix>& vertices) : vertices_(vertices) {
  const Index V = vertices_.rows();
  if (V < 3 || vertices_.cols() != 2) throw_shape("polygon", "(V, 2) with V >= 3", shape_str(V, vertices_.cols()));
  check_finite("polygon", vertices_.data(), vertices_.size());
  auto v = [&](Index i) { return Eigen::Vector2d(vertices_.row((i % V + V) % V).transpose()); };
  for (Index i = 0; i < V; ++i)
    if ((v(i + 1) - v(i)).norm() == 0.0)
      throw std::invalid_argument("polygon has a zero-length edge at vertex " + std::to_string(i));
  for (Index i = 0; i < V; ++i)
    for (Index j = i + 2; j < V; ++j) {
      if (i == 0 && j == V - 1) continue;  // adjacent through the closing edge
      if (segments_meet(v(i), v(i + 1), v(j), v(j + 1)))
        throw std::invalid_argument("polygon must be simple (not self-intersecting): edges " + std::to_string(i) +
                                    " and " + std::to_string(j) + " intersect");
    }
  double a2 = 0.0;
  for (Index i = 0; i < V; ++i) a2 += cross(v(i), v(i + 1));
  if (a2 < 0.0) {
    vertices_ = vertices_.colwise().reverse().eval();
    reversed_ = true;
    a2 = -a2;
  }
  area_ = 0.5 * a2;
  radius_ = vertices_.rowwise().norm().maxCoeff();
  // thickness: from each edge midpoint along the inward normal to the first other edge
  thickness_ = std::numeric_limits<double>::infinity();
  for (Index i = 0; i < V; ++i) {
    const Eigen::Vector2d a = v(i), b = v(i + 1), m = 0.5 * (a + b);
    const Eigen::Vector2d e = (b - a).normalized(), inward(-e[1], e[0]);
    for (Index j = 0; j < V; ++j) {
      if (j == i) continue;
      const Eigen::Vector2d c = v(j), d = v(j + 1), f = d - c;
      const double den = cross(inward, f);
      if (den == 0.0) continue;
      const double t = cross(c - m, f) / den, s = cross(c - m, inward) / den;
      if (t > 0.0 && s >= 0.0 && s <= 1.0) thickness_ = std::min(thickness_, t);
    }
  }
}

bool Shape2D::inside(double x, double y) const {
  const Index V = vertices_.rows();
  bool in = false;
  for (Index i = 0, j = V - 1; i < V; j = i++) {
    const double xi = vertices_(i, 0), yi = vertices_(i, 1), xj = vertices_(j, 0), yj = vertices_(j, 1);
    if ((yi > y) != (yj > y) && x < (xj - xi) * (y - yi) / (yj - yi) + xi) in = !in;
  }
  return in;
}

void Shape2D::closest_boundary(double x, double y, Eigen::Vector2d& point, Eigen::Vector2d& normal) const {
  const Index V = vertices_.rows();
  const Eigen::Vector2d p(x, y);
  double best = std::numeric_limits<double>::infinity();
  for (Index i = 0; i < V; ++i) {
    const Eigen::Vector2d a = vertices_.row(i).transpose(), b = vertices_.row((i + 1) % V).transpose();
    const Eigen::Vector2d c = closest_on_segment(p, a, b);
    const double d = (c - p).squaredNorm();
    if (d < best) {
      best = d, point = c;
      const Eigen::Vector2d e = (b - a).normalized();
      normal = Eigen::Vector2d(e[1], -e[0]);  // outward for a counter-clockwise polygon
    }
  }
}

void Shape2D::surface(double spacing, RowMatrix& points, RowMatrix& normals) const {
  check_positive("surface_spacing", spacing);
  const Index V = vertices_.rows();
  Index q = 0;
  std::vector<Index> pieces(V);
  for (Index i = 0; i < V; ++i) {
    const double len = (vertices_.row((i + 1) % V) - vertices_.row(i)).norm();
    pieces[i] = std::max<Index>(1, Index(std::ceil(len / spacing - 1e-9)));
    q += pieces[i];
  }
  points.resize(q, 2), normals.resize(q, 2);
  Index k = 0;
  for (Index i = 0; i < V; ++i) {
    const Eigen::RowVector2d a = vertices_.row(i), b = vertices_.row((i + 1) % V);
    const Eigen::RowVector2d e = (b - a).normalized();
    for (Index m = 0; m < pieces[i]; ++m, ++k) {
      points.row(k) = a + (double(m) + 0.5) / double(pieces[i]) * (b - a);
      normals(k, 0) = e[1], normals(k, 1) = -e[0];
    }
  }
}

Pose2D::Pose2D(double x_, double y_, double theta_)
    : x(x_), y(y_), theta(theta_), c(std::cos(theta_)), s(std::sin(theta_)) {}

Pose2D make_pose(const std::string& name, const Eigen::Ref<const Eigen::VectorXd>& p) {
  if (p.size() != 3) throw_shape(name, "(3,) = (x, y, theta)", "(" + std::to_string(p.size()) + ",)");
  check_finite(name, p.data(), 3);
  return Pose2D(p[0], p[1], p[2]);
}

Obstacle2D::Obstacle2D(std::shared_ptr<const Shape2D> shape_, const Eigen::Ref<const Eigen::VectorXd>& pose_,
                       const Eigen::Ref<const Eigen::VectorXd>& velocity_)
    : shape(std::move(shape_)), pose(make_pose("pose", pose_)) {
  if (!shape) throw std::invalid_argument("shape must be a Shape2D, got None");
  if (velocity_.size() != 3) throw_shape("velocity", "(3,) = (vx, vy, omega)", "(" + std::to_string(velocity_.size()) + ",)");
  check_finite("velocity", velocity_.data(), 3);
  velocity = velocity_;
}

void Obstacle2D::check_in_domain(const MACGrid2D& g, const std::string& name) const {
  // the exact extent: every vertex at this pose
  const RowMatrix& V = shape->vertices();
  for (Index i = 0; i < V.rows(); ++i) {
    const Eigen::Vector2d w = pose.to_world(V(i, 0), V(i, 1));
    if (w[0] < 0.0 || w[0] > g.width() || w[1] < 0.0 || w[1] > g.height())
      throw std::invalid_argument(name + " extends outside the domain [0, " + std::to_string(g.width()) + "] x [0, " +
                                  std::to_string(g.height()) + "]: vertex " + std::to_string(i) + " is at (" +
                                  std::to_string(w[0]) + ", " + std::to_string(w[1]) + ")");
  }
}

}  // namespace directable
