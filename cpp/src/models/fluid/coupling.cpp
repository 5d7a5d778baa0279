#include "directable/models/fluid/coupling.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "directable/core/errors.hpp"

namespace directable {

Coupling::Coupling(std::shared_ptr<const ReducedFluid> reduced, std::shared_ptr<const BoundaryBasis> basis,
                   const PoseAxes* table, Precompute precompute, Index compress, int threads,
                   const ProgressFn* progress, bool single, FeedforwardProjection projection)
    : reduced_(std::move(reduced)), basis_(std::move(basis)), precompute_(precompute), projection_(projection),
      compress_(compress) {
  if (!reduced_) throw std::invalid_argument("reduced must be a ReducedFluid, got None");
  if (!basis_) throw std::invalid_argument("boundary_basis must be a BoundaryBasis, got None");
  if (projection_ == FeedforwardProjection::Surface)
    weights_ = basis_->surface_speeds().transpose();
  else
    weights_ = basis_->energy_weights();
  weights32_ = weights_.cast<float>();
  if (basis_->h() != reduced_->grid().h())
    throw std::invalid_argument("boundary_basis was built on a grid of spacing " + std::to_string(basis_->h()) +
                                ", the reduced fluid's grid has " + std::to_string(reduced_->grid().h()));
  if (compress < 0) throw std::invalid_argument("compress must be >= 1 or None, got " + std::to_string(compress));
  if (precompute_ == Precompute::None) return;
  if (!table) throw std::invalid_argument("pose_table is required when precompute is \"feedback\" or \"both\"");
  axes_ = {table->x, table->y, table->theta};
  check_table_axis("pose_table x", axes_[0]), check_table_axis("pose_table y", axes_[1]);
  check_table_axis("pose_table theta", axes_[2]);
  G_table_ = NodeTable(axes_, r(), m(), compress, threads, progress, [&](Index n, Eigen::Ref<Eigen::MatrixXd> G) {
    auto d = create_data();
    feedback_exact(node_pose(n), G, *d);
  }, single);
  if (precompute_ == Precompute::Both)
    F_table_ = NodeTable(axes_, p(), r(), compress, threads, progress, [&](Index n, Eigen::Ref<Eigen::MatrixXd> F) {
      auto d = create_data();
      feedforward_exact(node_pose(n), F, *d);
    }, single);
}

Pose2D Coupling::node_pose(Index n) const {
  const Eigen::VectorXd x = NodeTable::node(axes_, n);
  return Pose2D(x[0], x[1], x[2]);
}

std::unique_ptr<CouplingData> Coupling::create_data() const {
  auto d = std::make_unique<CouplingData>();
  d->M.resize(std::min<Index>(basis_->q(), kSurfaceBlock), r());
  d->M32.resize(d->M.rows(), r());
  d->row.resize(r());
  d->speeds.resize(basis_->q());
  d->local.resize(basis_->local_grid().n_faces());
  return d;
}

void Coupling::feedforward_exact(const Pose2D& pose, Eigen::Ref<Eigen::MatrixXd> F, CouplingData& d) const {
  // S R^-1 B a block of surface points at a time: the block stays in cache and no q x r buffer is needed
  const Index q = basis_->q();
  F.setZero();
  for (Index k0 = 0; k0 < q; k0 += kSurfaceBlock) {
    const Index kb = std::min(kSurfaceBlock, q - k0);
    auto M = d.M.topRows(kb);
    basis_->world_surface_speeds(reduced_->grid(), reduced_->basis(), pose, M, k0);
    F.noalias() -= weights_.middleCols(k0, kb) * M;
  }
}

void Coupling::feedforward_exact(const Pose2D& pose, Eigen::Ref<RowMatrixF> F, CouplingData& d) const {
  check_shape("out", F.rows(), F.cols(), p(), r());
  const Index q = basis_->q();
  const RowMatrix& B = reduced_->basis();
  const MACGrid2D& g = reduced_->grid();
  Stencil4 sx, sy;
  Eigen::Vector2d n;
  F.setZero();
  for (Index k0 = 0; k0 < q; k0 += kSurfaceBlock) {
    const Index kb = std::min(kSurfaceBlock, q - k0);
    for (Index k = 0; k < kb; ++k) {
      basis_->surface_stencils(g, pose, k0 + k, sx, sy, n);
      d.row.setZero();
      for (int a = 0; a < 4; ++a) {
        d.row.noalias() += (n[0] * sx.w[a]) * B.row(sx.idx[a]).transpose();
        d.row.noalias() += (n[1] * sy.w[a]) * B.row(sy.idx[a]).transpose();
      }
      d.M32.row(k) = d.row.transpose().cast<float>();
    }
    F.noalias() -= weights32_.middleCols(k0, kb) * d.M32.topRows(kb);
  }
}

void Coupling::feedback_exact(const Pose2D& pose, Eigen::Ref<Eigen::MatrixXd> G, CouplingData& d) const {
  basis_->resample(reduced_->grid(), pose, basis_->all_fields(), d.faces, d.values);
  const RowMatrix& B = reduced_->basis();
  d.B_faces.resize(Index(d.faces.size()), r());
  for (size_t a = 0; a < d.faces.size(); ++a) d.B_faces.row(Index(a)) = B.row(d.faces[a]);
  G.noalias() = d.B_faces.transpose() * d.values;
}

void Coupling::feedforward(const Pose2D& pose, Eigen::Ref<Eigen::MatrixXd> F, CouplingData& d) const {
  if (precompute_ == Precompute::Both)
    F_table_.interpolate(key(pose).data(), F, d.table);
  else
    feedforward_exact(pose, F, d);
}

void Coupling::feedback(const Pose2D& pose, Eigen::Ref<Eigen::MatrixXd> G, CouplingData& d) const {
  if (precompute_ != Precompute::None)
    G_table_.interpolate(key(pose).data(), G, d.table);
  else
    feedback_exact(pose, G, d);
}

void Coupling::apply(const Pose2D& pose, const Eigen::Ref<const Eigen::VectorXd>& z,
                     const Eigen::Ref<const Eigen::VectorXd>& rigid, Eigen::Ref<Eigen::VectorXd> c,
                     Eigen::Ref<Eigen::VectorXd> z_next, CouplingData& d) const {
  const Index P = p(), M = m();
  const RowMatrix& B = reduced_->basis();
  const MACGrid2D& g = reduced_->grid();
  const Eigen::Vector3d at = key(pose);
  auto cp = c.head(P);
  // feedforward (eq. 3.11)
  if (precompute_ == Precompute::Both) {
    cp.setZero();
    F_table_.apply(at.data(), z, cp, d.table);
  } else {
    // (B z) on a face is needed by up to 8 surface points: computed once per call. The per-face
    // buffers are sized on a Data's first on-the-fly step (not by create_data: the operator queries don't need them)
    if (d.face_stamp.size() != size_t(B.rows())) d.face_stamp.assign(size_t(B.rows()), 0u), d.face_value.resize(B.rows());
    if (++d.stamp == 0) std::fill(d.face_stamp.begin(), d.face_stamp.end(), 0u), d.stamp = 1;
    auto flow = [&](Index f) {
      if (d.face_stamp[size_t(f)] != d.stamp) d.face_value[f] = B.row(f).dot(z), d.face_stamp[size_t(f)] = d.stamp;
      return d.face_value[f];
    };
    Stencil4 sx, sy;
    Eigen::Vector2d n;
    for (Index k = 0; k < basis_->q(); ++k) {
      basis_->surface_stencils(g, pose, k, sx, sy, n);
      double v = 0.0;
      for (int a = 0; a < 4; ++a) {
        if (sx.w[a] != 0.0) v += n[0] * sx.w[a] * flow(sx.idx[a]);
        if (sy.w[a] != 0.0) v += n[1] * sy.w[a] * flow(sy.idx[a]);
      }
      d.speeds[k] = v;
    }
    cp.noalias() = -weights_ * d.speeds;
  }
  c.tail(M - P) = rigid;
  // feedback (eq. 3.12)
  if (precompute_ != Precompute::None) {
    G_table_.apply(at.data(), c, z_next, d.table);
  } else {
    d.local.noalias() = basis_->all_fields() * c;
    basis_->for_each_world_face(g, pose, [&](Index f, const Stencil4& sx, const Stencil4& sy, const Eigen::Vector2d& e) {
      double v = 0.0;
      for (int b = 0; b < 4; ++b) v += e[0] * sx.w[b] * d.local[sx.idx[b]] + e[1] * sy.w[b] * d.local[sy.idx[b]];
      z_next.noalias() += v * B.row(f).transpose();
    });
  }
}

}  // namespace directable
