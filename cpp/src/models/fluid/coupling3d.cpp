#include "directable/models/fluid/coupling3d.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "directable/core/errors.hpp"

namespace directable {

Coupling3D::Coupling3D(std::shared_ptr<const ReducedFluid3D> reduced, std::shared_ptr<const BoundaryBasis3D> basis,
                       const PoseTable3D* table, Precompute precompute, Index compress, int threads,
                       const ProgressFn* progress)
    : reduced_(std::move(reduced)), basis_(std::move(basis)), precompute_(precompute) {
  if (!reduced_) throw std::invalid_argument("reduced must be a 3D ReducedFluid, got None");
  if (!basis_) throw std::invalid_argument("boundary_basis must be a BoundaryBasis3D, got None");
  if (basis_->h() != reduced_->grid().h())
    throw std::invalid_argument("boundary_basis was built on a grid of spacing " + std::to_string(basis_->h()) +
                                ", the reduced fluid's grid has " + std::to_string(reduced_->grid().h()));
  if (compress < 0) throw std::invalid_argument("compress must be >= 1 or None, got " + std::to_string(compress));
  if (precompute_ == Precompute::None) return;
  if (!table || (table->axes.empty() && table->path.rows() == 0))
    throw std::invalid_argument("pose_table or path is required when precompute is \"feedback\" or \"both\"");
  std::vector<Eigen::VectorXd> axes;
  if (table->path.rows() > 0) {
    if (!table->axes.empty()) throw std::invalid_argument("give either pose_table or path, not both");
    check_shape("path", table->path.rows(), table->path.cols(), table->path.rows(), 6);
    if (table->path.rows() < 2) throw_shape("path", "(n, 6) with n >= 2", shape_str(table->path.rows(), 6));
    check_finite("path", table->path.data(), table->path.size());
    path_ = table->path;
    axes.push_back(Eigen::VectorXd::LinSpaced(path_.rows(), 0.0, double(path_.rows() - 1)));
  } else {
    if (table->axes.size() != 3 && table->axes.size() != 6)
      throw std::invalid_argument("pose_table must be (xs, ys, zs) or (xs, ys, zs, rxs, rys, rzs), got " +
                                  std::to_string(table->axes.size()) + " axes");
    axes = table->axes;
    while (axes.size() < 6) axes.push_back(Eigen::VectorXd::Zero(1));  // no rotation
    const char* names[6] = {"xs", "ys", "zs", "rxs", "rys", "rzs"};
    for (int a = 0; a < 6; ++a) check_table_axis(std::string("pose_table ") + names[a], axes[std::size_t(a)]);
  }
  auto pose_of = [&](Index n) {
    if (path_.rows() > 0) return Pose3D(path_.row(n).data());
    const Eigen::VectorXd x = NodeTable::node(axes, n);
    return Pose3D(x.data());
  };
  const Index rr = r(), pp = p(), mm = m();
  G_table_ = NodeTable(axes, rr, mm, compress, threads, progress, [&](Index n, Eigen::Ref<Eigen::MatrixXd> G) {
    auto d = create_data();
    feedback_exact(pose_of(n), G, *d);
  });
  if (precompute_ == Precompute::Both)
    F_table_ = NodeTable(axes, pp, rr, compress, threads, progress, [&](Index n, Eigen::Ref<Eigen::MatrixXd> F) {
      auto d = create_data();
      feedforward_exact(pose_of(n), F, *d);
    });
}

Eigen::Matrix<double, 1, 6> Coupling3D::node_pose(Index n) const {
  if (path_.rows() > 0) {
    if (n < 0 || n >= path_.rows())
      throw std::invalid_argument("node must be in [0, " + std::to_string(path_.rows()) + "), got " + std::to_string(n));
    return path_.row(n);
  }
  if (G_table_.empty()) throw std::invalid_argument("the coupling has no table");
  if (n < 0 || n >= G_table_.nodes())
    throw std::invalid_argument("node must be in [0, " + std::to_string(G_table_.nodes()) + "), got " + std::to_string(n));
  return NodeTable::node(G_table_.axes(), n).transpose();
}

std::unique_ptr<Coupling3DData> Coupling3D::create_data() const {
  auto d = std::make_unique<Coupling3DData>();
  d->M.resize(basis_->q(), r());
  return d;
}

void Coupling3D::key(const double* pose, double* out) const {
  if (path_.rows() == 0) {
    std::copy(pose, pose + 6, out);
    return;
  }
  // the closest point of the polyline of path positions
  const Eigen::Vector3d x(pose[0], pose[1], pose[2]);
  double best = std::numeric_limits<double>::infinity();
  for (Index i = 0; i + 1 < path_.rows(); ++i) {
    const Eigen::Vector3d a = path_.row(i).head<3>().transpose(), b = path_.row(i + 1).head<3>().transpose();
    const Eigen::Vector3d e = b - a;
    const double len2 = e.squaredNorm();
    const double t = len2 > 0.0 ? std::clamp((x - a).dot(e) / len2, 0.0, 1.0) : 0.0;
    const double dist = (a + t * e - x).squaredNorm();
    if (dist < best) best = dist, out[0] = double(i) + t;
  }
}

void Coupling3D::feedforward_exact(const Pose3D& pose, Eigen::Ref<Eigen::MatrixXd> F, Coupling3DData& d) const {
  basis_->world_surface_speeds(reduced_->grid(), reduced_->basis(), pose, d.M);
  F.noalias() = -basis_->surface_speeds().transpose() * d.M;
}

void Coupling3D::feedback_exact(const Pose3D& pose, Eigen::Ref<Eigen::MatrixXd> G, Coupling3DData& d) const {
  basis_->resample(reduced_->grid(), pose, basis_->all_fields(), d.faces, d.values);
  const RowMatrix& B = reduced_->basis();
  d.B_faces.resize(Index(d.faces.size()), r());
  for (std::size_t a = 0; a < d.faces.size(); ++a) d.B_faces.row(Index(a)) = B.row(d.faces[a]);
  G.noalias() = d.B_faces.transpose() * d.values;
}

void Coupling3D::feedforward(const double* pose, Eigen::Ref<Eigen::MatrixXd> F, Coupling3DData& d) const {
  if (precompute_ == Precompute::Both) {
    double k[6];
    key(pose, k);
    F_table_.interpolate(k, F, d.table);
  } else {
    feedforward_exact(Pose3D(pose), F, d);
  }
}

void Coupling3D::feedback(const double* pose, Eigen::Ref<Eigen::MatrixXd> G, Coupling3DData& d) const {
  if (precompute_ != Precompute::None) {
    double k[6];
    key(pose, k);
    G_table_.interpolate(k, G, d.table);
  } else {
    feedback_exact(Pose3D(pose), G, d);
  }
}

}  // namespace directable
