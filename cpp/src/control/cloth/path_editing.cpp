#include "directable/control/cloth/path_editing.hpp"

#include <Eigen/Geometry>
#include <Eigen/SVD>
#include <algorithm>
#include <cmath>
#include <string>

namespace directable {

void retime_path(const Eigen::Ref<const RowMatrix>& path, const Eigen::Ref<const RowMatrix>& reference,
                 Eigen::Ref<RowMatrix> out) {
  if (path.cols() != 3 || path.rows() < 2) throw_shape("path", "(m+1, 3) with m >= 1", shape_str(path.rows(), path.cols()));
  if (reference.cols() != 3 || reference.rows() < 2)
    throw_shape("reference", "(n+1, 3) with n >= 1", shape_str(reference.rows(), reference.cols()));
  check_shape("out", out.rows(), out.cols(), reference.rows(), 3);
  check_finite("path", path.data(), path.size());
  check_finite("reference", reference.data(), reference.size());
  const Index m = path.rows() - 1, n = reference.rows() - 1;
  // cumulative arc length of the path (eq. 21) and of the reference (eq. 20-22)
  Eigen::VectorXd s_path(m + 1), s_ref(n + 1);
  s_path[0] = s_ref[0] = 0.0;
  for (Index i = 0; i < m; ++i) s_path[i + 1] = s_path[i] + (path.row(i + 1) - path.row(i)).norm();
  for (Index i = 0; i < n; ++i) s_ref[i + 1] = s_ref[i] + (reference.row(i + 1) - reference.row(i)).norm();
  const double total_path = s_path[m], total_ref = s_ref[n];
  Index seg = 0;
  for (Index i = 0; i <= n; ++i) {
    // eq. 24: d*_i = d_i d*_Tot / d_Tot; a still reference gives equal steps
    const double frac = total_ref > 0.0 ? s_ref[i] / total_ref : static_cast<double>(i) / static_cast<double>(n);
    const double target = frac * total_path;
    while (seg < m - 1 && s_path[seg + 1] < target) ++seg;
    const double len = s_path[seg + 1] - s_path[seg];
    const double t = len > 0.0 ? std::clamp((target - s_path[seg]) / len, 0.0, 1.0) : 1.0;
    out.row(i) = (1.0 - t) * path.row(seg) + t * path.row(seg + 1);
  }
  out.row(0) = path.row(0);
  out.row(n) = path.row(m);
}

void blend_path(const Eigen::Ref<const RowMatrix>& path, const Eigen::Ref<const RowMatrix>& control_points, double weight,
                Eigen::Ref<RowMatrix> out) {
  if (path.cols() != 3 || path.rows() < 2) throw_shape("path", "(n+1, 3) with n >= 1", shape_str(path.rows(), path.cols()));
  check_shape("control_points", control_points.rows(), control_points.cols(), 4, 3);
  check_shape("out", out.rows(), out.cols(), path.rows(), 3);
  check_finite("path", path.data(), path.size());
  check_finite("control_points", control_points.data(), control_points.size());
  if (!std::isfinite(weight)) throw std::domain_error("weight must be finite, got " + std::to_string(weight));
  if (weight < 0.0 || weight > 1.0) throw std::invalid_argument("weight must lie in [0, 1], got " + std::to_string(weight));
  // Newton divided differences at t = 0, 1/3, 2/3, 1
  const double t[4] = {0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0};
  Eigen::Matrix<double, 4, 3> a = control_points;
  for (int level = 1; level < 4; ++level)
    for (int i = 3; i >= level; --i) a.row(i) = (a.row(i) - a.row(i - 1)) / (t[i] - t[i - level]);
  const Index n = path.rows() - 1;
  for (Index i = 0; i <= n; ++i) {
    const double s = static_cast<double>(i) / static_cast<double>(n);
    Eigen::RowVector3d p = a.row(3);
    for (int k = 2; k >= 0; --k) p = a.row(k) + (s - t[k]) * p;
    out.row(i) = (1.0 - weight) * path.row(i) + weight * p;
  }
}

RowMatrix curl_goals(const Eigen::Ref<const RowMatrix>& positions, const std::vector<Index>& region, double curl_deg,
                     double rotate_deg) {
  if (positions.cols() != 3 || positions.rows() < 3)
    throw_shape("x_at_tc", "(V, 3) with V >= 3", shape_str(positions.rows(), positions.cols()));
  check_finite("x_at_tc", positions.data(), positions.size());
  if (!std::isfinite(curl_deg)) throw std::domain_error("curl_deg must be finite, got " + std::to_string(curl_deg));
  if (!std::isfinite(rotate_deg)) throw std::domain_error("rotate_deg must be finite, got " + std::to_string(rotate_deg));
  const Index V = positions.rows();
  if (region.empty()) throw std::invalid_argument("region must list at least one node");
  for (Index k : region)
    if (k < 0 || k >= V)
      throw std::invalid_argument("region node " + std::to_string(k) + " is out of range [0, " + std::to_string(V) + ")");
  const Eigen::RowVector3d centroid = positions.colwise().mean();
  const RowMatrix centred = positions.rowwise() - centroid;
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(centred, Eigen::ComputeThinV);
  Eigen::Vector3d normal = svd.matrixV().col(2);
  if (normal.z() < 0.0 || (normal.z() == 0.0 && normal.sum() < 0.0)) normal = -normal;
  Eigen::RowVector3d region_centroid = Eigen::RowVector3d::Zero();
  for (Index k : region) region_centroid += positions.row(k);
  region_centroid /= static_cast<double>(region.size());
  Eigen::Vector3d d = (region_centroid - centroid).transpose();
  d -= d.dot(normal) * normal;
  if (!(d.norm() > 1e-12)) throw std::invalid_argument(
        "region must lie off the cloth's centre in the positions (its outward direction is undefined)");
  d.normalize();
  Index hinge = region[0];
  for (Index k : region)
    if ((positions.row(k) - centroid).dot(d.transpose()) < (positions.row(hinge) - centroid).dot(d.transpose())) hinge = k;
  const Eigen::Vector3d h = positions.row(hinge).transpose();
  const Eigen::Vector3d axis = normal.cross(d).normalized();
  const double deg = 3.14159265358979323846 / 180.0;
  // rotating d about axis by -curl lifts it towards the normal
  const Eigen::Matrix3d R = Eigen::AngleAxisd(rotate_deg * deg, normal).toRotationMatrix() *
                            Eigen::AngleAxisd(-curl_deg * deg, axis).toRotationMatrix();
  RowMatrix goals(region.size(), 3);
  for (std::size_t r = 0; r < region.size(); ++r)
    goals.row(r) = (h + R * (positions.row(region[r]).transpose() - h)).transpose();
  return goals;
}

}  // namespace directable
