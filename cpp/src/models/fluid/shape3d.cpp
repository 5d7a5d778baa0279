#include "directable/models/fluid/shape3d.hpp"

#include <Eigen/Geometry>
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <stdexcept>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "directable/core/errors.hpp"

namespace directable {

namespace {

// Closest point to p on triangle (a, b, c) (Ericson, Real-Time Collision
// Detection, 5.1.5).
Eigen::Vector3d closest_on_triangle(const Eigen::Vector3d& p, const Eigen::Vector3d& a, const Eigen::Vector3d& b,
                                    const Eigen::Vector3d& c) {
  const Eigen::Vector3d ab = b - a, ac = c - a, ap = p - a;
  const double d1 = ab.dot(ap), d2 = ac.dot(ap);
  if (d1 <= 0 && d2 <= 0) return a;
  const Eigen::Vector3d bp = p - b;
  const double d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0 && d4 <= d3) return b;
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) return a + (d1 / (d1 - d3)) * ab;
  const Eigen::Vector3d cp = p - c;
  const double d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0 && d5 <= d6) return c;
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) return a + (d2 / (d2 - d6)) * ac;
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) return b + ((d4 - d3) / ((d4 - d3) + (d5 - d6))) * (c - b);
  const double denom = 1.0 / (va + vb + vc);
  return a + ab * (vb * denom) + ac * (vc * denom);
}

void check_size(const char* name, double v) {
  if (!(v > 0.0) || !std::isfinite(v)) throw std::domain_error(std::string(name) + " must be finite and > 0, got " + std::to_string(v));
}

}  // namespace

Shape3D::Shape3D(const Eigen::Ref<const RowMatrix>& vertices, const TriangleMatrix& triangles)
    : vertices_(vertices), triangles_(triangles) {
  check_shape("vertices", vertices.rows(), vertices.cols(), vertices.rows(), 3);
  if (vertices.rows() < 4) throw_shape("vertices", "(V, 3) with V >= 4", shape_str(vertices.rows(), 3));
  check_finite("vertices", vertices_.data(), vertices_.size());
  if (triangles.rows() < 4) throw_shape("triangles", "(F, 3) with F >= 4", shape_str(triangles.rows(), 3));
  const Index V = vertices.rows();
  for (Index f = 0; f < triangles.rows(); ++f)
    for (int a = 0; a < 3; ++a)
      if (triangles(f, a) < 0 || triangles(f, a) >= V)
        throw std::invalid_argument("triangles must index vertices in [0, " + std::to_string(V) + "), got " +
                                    std::to_string(triangles(f, a)) + " in triangle " + std::to_string(f));
  // closed and consistently oriented: every directed edge once, and its reverse once
  std::map<std::pair<Index, Index>, int> edges;
  for (Index f = 0; f < triangles.rows(); ++f)
    for (int a = 0; a < 3; ++a) ++edges[{triangles(f, a), triangles(f, (a + 1) % 3)}];
  for (const auto& [e, n] : edges) {
    const auto it = edges.find({e.second, e.first});
    if (n != 1 || it == edges.end() || it->second != 1)
      throw std::invalid_argument("triangles must form a closed, consistently oriented mesh: edge (" +
                                  std::to_string(e.first) + ", " + std::to_string(e.second) + ") is not shared by "
                                  "exactly two triangles in opposite directions");
  }
  volume_ = 0.0;
  for (Index f = 0; f < triangles.rows(); ++f) {
    const Eigen::Vector3d a = vertices_.row(triangles(f, 0)), b = vertices_.row(triangles(f, 1)),
                          c = vertices_.row(triangles(f, 2));
    volume_ += a.dot(b.cross(c)) / 6.0;
  }
  if (volume_ < 0.0) {
    triangles_.col(1).swap(triangles_.col(2));
    volume_ = -volume_, reversed_ = true;
  }
  if (!(volume_ > 0.0)) throw std::invalid_argument("triangles must enclose a volume, got volume 0");
  lo_ = vertices_.colwise().minCoeff().transpose();
  hi_ = vertices_.colwise().maxCoeff().transpose();
  radius_ = vertices_.rowwise().norm().maxCoeff();
}

Shape3D Shape3D::box(double w, double h, double d) {
  check_size("w", w), check_size("h", h), check_size("d", d);
  RowMatrix V(8, 3);
  for (int c = 0; c < 8; ++c) V.row(c) << ((c & 1) ? 0.5 : -0.5) * w, ((c & 2) ? 0.5 : -0.5) * h, ((c & 4) ? 0.5 : -0.5) * d;
  TriangleMatrix F(12, 3);
  F << 0, 2, 1, 1, 2, 3,  // z-
      4, 5, 6, 5, 7, 6,   // z+
      0, 1, 4, 1, 5, 4,   // y-
      2, 6, 3, 3, 6, 7,   // y+
      0, 4, 2, 2, 4, 6,   // x-
      1, 3, 5, 3, 7, 5;   // x+
  return Shape3D(V, F);
}

Shape3D Shape3D::sphere(double r, int subdivisions) {
  check_size("r", r);
  // the mesh's volume (~ r^3) must be a finite, nonzero double
  if (r < 1e-100 || r > 1e100) {
    std::ostringstream msg;
    msg << "r must lie in [1e-100, 1e100] m, got " << r;
    throw std::domain_error(msg.str());
  }
  if (subdivisions < 0 || subdivisions > 5)
    throw std::invalid_argument("subdivisions must be in [0, 5], got " + std::to_string(subdivisions));
  const double t = (1.0 + std::sqrt(5.0)) / 2.0;
  std::vector<Eigen::Vector3d> V = {{-1, t, 0}, {1, t, 0}, {-1, -t, 0}, {1, -t, 0}, {0, -1, t}, {0, 1, t},
                                    {0, -1, -t}, {0, 1, -t}, {t, 0, -1}, {t, 0, 1}, {-t, 0, -1}, {-t, 0, 1}};
  std::vector<Eigen::Matrix<Index, 3, 1>> F = {{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11},
                                               {1, 5, 9},  {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
                                               {3, 9, 4},  {3, 4, 2},  {3, 2, 6},   {3, 6, 8},  {3, 8, 9},
                                               {4, 9, 5},  {2, 4, 11}, {6, 2, 10},  {8, 6, 7},  {9, 8, 1}};
  for (auto& v : V) v.normalize();
  for (int s = 0; s < subdivisions; ++s) {
    std::map<std::pair<Index, Index>, Index> mid;
    auto midpoint = [&](Index a, Index b) {
      const auto key = std::minmax(a, b);
      const auto it = mid.find(key);
      if (it != mid.end()) return it->second;
      V.push_back((V[std::size_t(a)] + V[std::size_t(b)]).normalized());
      return mid[key] = Index(V.size()) - 1;
    };
    std::vector<Eigen::Matrix<Index, 3, 1>> G;
    for (const auto& f : F) {
      const Index a = midpoint(f[0], f[1]), b = midpoint(f[1], f[2]), c = midpoint(f[2], f[0]);
      G.push_back({f[0], a, c}), G.push_back({f[1], b, a}), G.push_back({f[2], c, b}), G.push_back({a, b, c});
    }
    F.swap(G);
  }
  RowMatrix Vm(Index(V.size()), 3);
  for (std::size_t i = 0; i < V.size(); ++i) Vm.row(Index(i)) = r * V[i].transpose();
  TriangleMatrix Fm(Index(F.size()), 3);
  for (std::size_t i = 0; i < F.size(); ++i) Fm.row(Index(i)) = F[i].transpose();
  return Shape3D(Vm, Fm);
}

Shape3D Shape3D::plate(double w, double h, double thickness, double aw, double ah) {
  check_size("w", w), check_size("h", h), check_size("thickness", thickness);
  const bool hole = aw > 0.0 || ah > 0.0;
  if (!hole) return box(w, h, thickness);
  if (!(aw > 0.0 && ah > 0.0 && aw < w && ah < h) || !std::isfinite(aw) || !std::isfinite(ah))
    throw std::domain_error("aperture must be (aw, ah) with 0 < aw < w = " + std::to_string(w) + " and 0 < ah < h = " +
                            std::to_string(h) + ", got (" + std::to_string(aw) + ", " + std::to_string(ah) + ")");
  // outer ring O0..O3 and inner ring I0..I3 (counter-clockwise seen from +z), on z = -t/2 (0..7) and +t/2 (8..15)
  const double X[2] = {0.5 * w, 0.5 * aw}, Y[2] = {0.5 * h, 0.5 * ah}, Z[2] = {-0.5 * thickness, 0.5 * thickness};
  const double sx[4] = {-1, 1, 1, -1}, sy[4] = {-1, -1, 1, 1};
  RowMatrix V(16, 3);
  auto vid = [](int layer, int ring, int q) { return Index(8 * layer + 4 * ring + q); };
  for (int layer = 0; layer < 2; ++layer)
    for (int ring = 0; ring < 2; ++ring)
      for (int q = 0; q < 4; ++q) V.row(vid(layer, ring, q)) << sx[q] * X[ring], sy[q] * Y[ring], Z[layer];
  std::vector<Eigen::Matrix<Index, 3, 1>> F;
  auto quad = [&](Index a, Index b, Index c, Index d) { F.push_back({a, b, c}), F.push_back({a, c, d}); };
  for (int q = 0; q < 4; ++q) {
    const int n = (q + 1) % 4;
    quad(vid(1, 0, q), vid(1, 0, n), vid(1, 1, n), vid(1, 1, q));  // top annulus (+z normal)
    quad(vid(0, 0, q), vid(0, 1, q), vid(0, 1, n), vid(0, 0, n));  // bottom annulus (-z normal)
    quad(vid(0, 0, q), vid(0, 0, n), vid(1, 0, n), vid(1, 0, q));  // outer side
    quad(vid(0, 1, q), vid(1, 1, q), vid(1, 1, n), vid(0, 1, n));  // inner side (facing the hole)
  }
  TriangleMatrix Fm(Index(F.size()), 3);
  for (std::size_t i = 0; i < F.size(); ++i) Fm.row(Index(i)) = F[i].transpose();
  return Shape3D(V, Fm);
}

bool Shape3D::inside(const Eigen::Vector3d& p) const {
  if ((p.array() < lo_.array()).any() || (p.array() > hi_.array()).any()) return false;
  // generalised winding number: sum of the signed solid angles (Van Oosterom & Strackee)
  double omega = 0.0;
  for (Index f = 0; f < triangles_.rows(); ++f) {
    const Eigen::Vector3d a = vertices_.row(triangles_(f, 0)).transpose() - p,
                          b = vertices_.row(triangles_(f, 1)).transpose() - p,
                          c = vertices_.row(triangles_(f, 2)).transpose() - p;
    const double la = a.norm(), lb = b.norm(), lc = c.norm();
    const double num = a.dot(b.cross(c));
    const double den = la * lb * lc + a.dot(b) * lc + b.dot(c) * la + c.dot(a) * lb;
    omega += 2.0 * std::atan2(num, den);
  }
  return omega > 2.0 * kPi;
}

Eigen::Vector3d Shape3D::closest_point(const Eigen::Vector3d& p, Eigen::Vector3d& normal) const {
  double best = std::numeric_limits<double>::infinity();
  Eigen::Vector3d out = p;
  for (Index f = 0; f < triangles_.rows(); ++f) {
    const Eigen::Vector3d a = vertices_.row(triangles_(f, 0)), b = vertices_.row(triangles_(f, 1)),
                          c = vertices_.row(triangles_(f, 2));
    const Eigen::Vector3d q = closest_on_triangle(p, a, b, c);
    const double d = (q - p).squaredNorm();
    if (d < best) best = d, out = q, normal = (b - a).cross(c - a).normalized();
  }
  return out;
}

void Shape3D::surface(double spacing, RowMatrix& points, RowMatrix& normals) const {
  check_size("spacing", spacing);
  // Dense candidates (centroids of a regular subdivision of each triangle into
  // pieces at most spacing / 2 across), then one sample per plane and cube of
  // side `spacing`: the candidate nearest the mean of its cube's candidates.
  // Long thin triangles (a plate's sides) get the density of the others.
  std::map<std::array<long long, 4>, Index> planes;
  std::map<std::array<long long, 4>, std::size_t> cubes;
  struct Cube {
    Eigen::Vector3d sum = Eigen::Vector3d::Zero();
    std::vector<std::size_t> members;
  };
  std::vector<Cube> bucket;
  std::vector<Eigen::Vector3d> P, N;
  double candidates = 0.0;  // m^2 per triangle: refuse a spacing that would take more than memory allows
  for (Index f = 0; f < triangles_.rows(); ++f) {
    const Eigen::Vector3d a = vertices_.row(triangles_(f, 0)), b = vertices_.row(triangles_(f, 1)),
                          c = vertices_.row(triangles_(f, 2));
    const double m = std::ceil(2.0 * std::max({(b - a).norm(), (c - b).norm(), (a - c).norm()}) / spacing);
    candidates += m * m;
  }
  if (!(candidates <= 5e7))
    throw std::invalid_argument("spacing " + std::to_string(spacing) + " is too fine for a shape of radius " +
                                std::to_string(radius_) + ": it would take about " + std::to_string(candidates) +
                                " candidate samples (at most 5e7)");
  for (Index f = 0; f < triangles_.rows(); ++f) {
    const Eigen::Vector3d a = vertices_.row(triangles_(f, 0)), b = vertices_.row(triangles_(f, 1)),
                          c = vertices_.row(triangles_(f, 2));
    const Eigen::Vector3d n = (b - a).cross(c - a).normalized();
    const std::array<long long, 4> pk = {std::llround(n[0] * 1e6), std::llround(n[1] * 1e6), std::llround(n[2] * 1e6),
                                         std::llround(n.dot(a) / spacing * 1e6)};
    const Index plane = planes.emplace(pk, Index(planes.size())).first->second;
    const double edge = std::max({(b - a).norm(), (c - b).norm(), (a - c).norm()});
    const int m = std::max(1, int(std::ceil(2.0 * edge / spacing)));
    auto add = [&](const Eigen::Vector3d& x) {
      const std::array<long long, 4> key = {plane, (long long)std::floor(x[0] / spacing),
                                            (long long)std::floor(x[1] / spacing), (long long)std::floor(x[2] / spacing)};
      const auto it = cubes.emplace(key, bucket.size()).first;
      if (it->second == bucket.size()) bucket.emplace_back();
      Cube& cube = bucket[it->second];
      cube.sum += x;
      cube.members.push_back(P.size());
      P.push_back(x), N.push_back(n);
    };
    auto pt = [&](double s, double t) { return a + (s / m) * (b - a) + (t / m) * (c - a); };
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m - i; ++j) {
        const double u = double(i), v = double(j);
        add((pt(u, v) + pt(u + 1, v) + pt(u, v + 1)) / 3.0);
        if (j < m - i - 1) add((pt(u + 1, v) + pt(u + 1, v + 1) + pt(u, v + 1)) / 3.0);
      }
  }
  points.resize(Index(bucket.size()), 3);
  normals.resize(Index(bucket.size()), 3);
  for (std::size_t q = 0; q < bucket.size(); ++q) {
    const Eigen::Vector3d mean = bucket[q].sum / double(bucket[q].members.size());
    std::size_t best = bucket[q].members[0];
    for (std::size_t k : bucket[q].members)
      if ((P[k] - mean).squaredNorm() < (P[best] - mean).squaredNorm()) best = k;
    points.row(Index(q)) = P[best].transpose(), normals.row(Index(q)) = N[best].transpose();
  }
}

Obstacle3D::Obstacle3D(std::shared_ptr<const Shape3D> shape, const Eigen::Vector3d& position,
                       const Eigen::Matrix3d& rotation, const Eigen::Vector3d& velocity,
                       const Eigen::Vector3d& angular_velocity)
    : shape_(std::move(shape)), c_(position), v_(velocity), w_(angular_velocity), R_(rotation) {
  if (!shape_) throw std::invalid_argument("shape must be a Shape3D, got None");
  if (!position.allFinite()) throw std::domain_error("position must be finite");
  if (!velocity.allFinite()) throw std::domain_error("velocity must be finite");
  if (!angular_velocity.allFinite()) throw std::domain_error("angular_velocity must be finite");
  if (!rotation.allFinite()) throw std::domain_error("rotation must be finite");
  const double err = (rotation.transpose() * rotation - Eigen::Matrix3d::Identity()).cwiseAbs().maxCoeff();
  if (err > 1e-9 || rotation.determinant() < 0.0)
    throw std::domain_error("rotation must be a proper rotation matrix (R'R = I, det R = 1), got |R'R - I| = " +
                            std::to_string(err) + ", det R = " + std::to_string(rotation.determinant()));
}

void Obstacle3D::world_bounds(Eigen::Vector3d& lo, Eigen::Vector3d& hi) const {
  lo.setConstant(std::numeric_limits<double>::infinity());
  hi = -lo;
  const RowMatrix& V = shape_->vertices();
  for (Index i = 0; i < V.rows(); ++i) {
    const Eigen::Vector3d x = to_world(V.row(i).transpose());
    lo = lo.cwiseMin(x), hi = hi.cwiseMax(x);
  }
}

bool Obstacle3D::push_out(Eigen::Vector3d& x, double margin) const {
  const Eigen::Vector3d p = to_local(x);
  if (!shape_->inside(p)) return false;
  Eigen::Vector3d n;
  const Eigen::Vector3d q = shape_->closest_point(p, n);
  x = to_world(q + margin * n);
  return true;
}

Eigen::Matrix3d rotation_from_vector(const Eigen::Vector3d& rotvec) {
  if (!rotvec.allFinite()) throw std::domain_error("rotation must be finite");
  const double angle = rotvec.norm();
  if (angle == 0.0) return Eigen::Matrix3d::Identity();
  return Eigen::AngleAxisd(angle, rotvec / angle).toRotationMatrix();
}

namespace {
// The one check of a batch of world or object points: P x 3, finite.
void check_points(const Eigen::Ref<const RowMatrix>& points, Index out_rows) {
  check_shape("points", points.rows(), points.cols(), points.rows(), 3);
  check_finite("points", points.data(), points.size());
  check_shape("output", out_rows, 3, points.rows(), 3);
}
}  // namespace

void Shape3D::inside(const Eigen::Ref<const RowMatrix>& points, Eigen::Ref<Eigen::Array<bool, Eigen::Dynamic, 1>> in) const {
  check_points(points, in.size());
  for (Index k = 0; k < points.rows(); ++k) in[k] = inside(Eigen::Vector3d(points.row(k).transpose()));
}

void Shape3D::closest_point(const Eigen::Ref<const RowMatrix>& points, Eigen::Ref<RowMatrix> closest,
                            Eigen::Ref<RowMatrix> normals) const {
  check_points(points, closest.rows());
  check_points(points, normals.rows());
  for (Index k = 0; k < points.rows(); ++k) {
    Eigen::Vector3d n;
    closest.row(k) = closest_point(Eigen::Vector3d(points.row(k).transpose()), n).transpose();
    normals.row(k) = n.transpose();
  }
}

void Obstacle3D::inside(const Eigen::Ref<const RowMatrix>& points, Eigen::Ref<Eigen::Array<bool, Eigen::Dynamic, 1>> in) const {
  check_points(points, in.size());
  for (Index k = 0; k < points.rows(); ++k) in[k] = inside(Eigen::Vector3d(points.row(k).transpose()));
}

void Obstacle3D::rigid_velocity(const Eigen::Ref<const RowMatrix>& points, Eigen::Ref<RowMatrix> velocities) const {
  check_points(points, velocities.rows());
  for (Index k = 0; k < points.rows(); ++k)
    velocities.row(k) = rigid_velocity(Eigen::Vector3d(points.row(k).transpose())).transpose();
}

}  // namespace directable
