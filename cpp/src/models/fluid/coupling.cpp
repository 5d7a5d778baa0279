#include "directable/models/fluid/coupling.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <string>

#include "directable/core/errors.hpp"
#include "directable/core/parallel.hpp"

namespace directable {

namespace {

void check_axis(const char* name, const Eigen::VectorXd& a) {
  const std::string n = std::string("pose_table ") + name;
  if (a.size() < 1) throw std::invalid_argument(n + " must have at least one node, got 0");
  check_finite(n, a.data(), a.size());
  if (a.size() < 2) return;
  const double d = a[1] - a[0];
  if (!(d > 0.0)) throw std::invalid_argument(n + " must have a spacing > 0, got " + std::to_string(d));
  for (Index i = 1; i < a.size(); ++i)
    if (std::abs((a[i] - a[i - 1]) - d) > 1e-9 * std::max(1.0, std::abs(d)))
      throw std::invalid_argument(n + " must be uniformly spaced: step " + std::to_string(i) + " is " +
                                  std::to_string(a[i] - a[i - 1]) + ", the first " + std::to_string(d));
}

// Cell and weight of v on a uniform axis (clamped to its ends).
void axis_weight(const Eigen::VectorXd& a, double v, Index& i0, double& t) {
  if (a.size() == 1) { i0 = 0, t = 0.0; return; }
  const double f = std::clamp((v - a[0]) / (a[1] - a[0]), 0.0, double(a.size() - 1));
  i0 = std::min<Index>(Index(std::floor(f)), a.size() - 2);
  t = f - double(i0);
}

}  // namespace

Coupling::Coupling(std::shared_ptr<const ReducedFluid> reduced, std::shared_ptr<const BoundaryBasis> basis,
                   const PoseAxes* table, Precompute precompute, Index compress, int threads,
                   const ProgressFn* progress)
    : reduced_(std::move(reduced)), basis_(std::move(basis)), precompute_(precompute), compress_(compress) {
  if (!reduced_) throw std::invalid_argument("reduced must be a ReducedFluid, got None");
  if (!basis_) throw std::invalid_argument("boundary_basis must be a BoundaryBasis, got None");
  if (basis_->h() != reduced_->grid().h())
    throw std::invalid_argument("boundary_basis was built on a grid of spacing " + std::to_string(basis_->h()) +
                                ", the reduced fluid's grid has " + std::to_string(reduced_->grid().h()));
  if (compress < 0) throw std::invalid_argument("compress must be >= 1 or None, got " + std::to_string(compress));
  if (precompute_ == Precompute::None) return;
  if (!table) throw std::invalid_argument("pose_table is required when precompute is \"feedback\" or \"both\"");
  axes_ = *table;
  check_axis("x", axes_.x), check_axis("y", axes_.y), check_axis("theta", axes_.theta);
  n_nodes_ = axes_.x.size() * axes_.y.size() * axes_.theta.size();
  build_table(G_table_, r(), m(), false, threads, progress);
  if (precompute_ == Precompute::Both) build_table(F_table_, p(), r(), true, threads, progress);
}

Pose2D Coupling::node_pose(Index n) const {
  const Index nx = axes_.x.size(), ny = axes_.y.size();
  return Pose2D(axes_.x[n % nx], axes_.y[(n / nx) % ny], axes_.theta[n / (nx * ny)]);
}

std::unique_ptr<CouplingData> Coupling::create_data() const {
  auto d = std::make_unique<CouplingData>();
  d->M.resize(basis_->q(), r());
  d->speeds.resize(basis_->q());
  d->local.resize(basis_->local_grid().n_faces());
  return d;
}

void Coupling::build_table(Table& t, Index rows, Index cols, bool forward, int threads, const ProgressFn* progress) {
  t.rows = rows, t.cols = cols;
  const Index d = rows * cols;
  Eigen::MatrixXd X(n_nodes_, d);
  parallel_steps(n_nodes_, threads, progress, n_nodes_, [&] { return std::make_pair(create_data(), Eigen::MatrixXd(rows, cols)); },
                 [&](Index n, auto& w) {
                   if (forward)
                     feedforward_exact(node_pose(n), w.second, *w.first);
                   else
                     feedback_exact(node_pose(n), w.second, *w.first);
                   X.row(n) = Eigen::Map<const Eigen::RowVectorXd>(w.second.data(), d);
                 });
  if (compress_ == 0) {
    t.entries = X;
    return;
  }
  // PCA over the poses: X ~ mean + coefficients modes
  t.mean = X.colwise().mean();
  X.rowwise() -= t.mean;
  Index k = std::min({compress_, n_nodes_, d});
  Eigen::VectorXd lam;
  if (n_nodes_ <= d) {
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(X * X.transpose());
    lam = es.eigenvalues().reverse();
    t.modes = es.eigenvectors().rowwise().reverse().leftCols(k).transpose() * X;  // k x d, row norms sqrt(lambda)
  } else {
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(X.transpose() * X);
    lam = es.eigenvalues().reverse();
    t.modes = es.eigenvectors().rowwise().reverse().leftCols(k).transpose();
  }
  // modes of (numerically) zero variance carry nothing and would not be orthogonal: keep the others
  while (k > 1 && !(lam[k - 1] > 1e-13 * lam[0])) --k;
  t.modes.conservativeResize(k, d);
  for (Index i = 0; i < k; ++i) t.modes.row(i).normalize();
  t.entries = X * t.modes.transpose();  // nodes x k
}

Index Coupling::table_bytes() const {
  Index n = 0;
  for (const Table* t : {&F_table_, &G_table_}) n += t->entries.size() + t->modes.size() + t->mean.size();
  return n * Index(sizeof(double));
}

int Coupling::node_weights(const Pose2D& pose, Index nodes[8], double weights[8]) const {
  Index ix, iy, it;
  double tx, ty, tt;
  axis_weight(axes_.x, pose.x, ix, tx);
  axis_weight(axes_.y, pose.y, iy, ty);
  axis_weight(axes_.theta, pose.theta, it, tt);
  const Index nx = axes_.x.size(), ny = axes_.y.size();
  int count = 0;
  for (int c = 0; c < 8; ++c) {
    const int bx = c & 1, by = (c >> 1) & 1, bt = (c >> 2) & 1;
    const double w = (bx ? tx : 1 - tx) * (by ? ty : 1 - ty) * (bt ? tt : 1 - tt);
    if (w == 0.0) continue;
    nodes[count] = (ix + bx) + nx * ((iy + by) + ny * (it + bt));
    weights[count++] = w;
  }
  return count;
}

void Coupling::interpolate(const Table& t, const Pose2D& pose, Eigen::Ref<Eigen::MatrixXd> out, CouplingData& d) const {
  Index nodes[8];
  double weights[8];
  const int count = node_weights(pose, nodes, weights);
  d.mixed.setZero(t.entries.cols());
  for (int c = 0; c < count; ++c) d.mixed.noalias() += weights[c] * t.entries.row(nodes[c]).transpose();
  if (t.modes.size() == 0) {
    out = Eigen::Map<const Eigen::MatrixXd>(d.mixed.data(), t.rows, t.cols);
  } else {
    d.flat = t.mean.transpose();
    d.flat.noalias() += t.modes.transpose() * d.mixed;
    out = Eigen::Map<const Eigen::MatrixXd>(d.flat.data(), t.rows, t.cols);
  }
}

void Coupling::feedforward_exact(const Pose2D& pose, Eigen::Ref<Eigen::MatrixXd> F, CouplingData& d) const {
  basis_->world_surface_speeds(reduced_->grid(), reduced_->basis(), pose, d.M);
  F.noalias() = -basis_->surface_speeds().transpose() * d.M;
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
    interpolate(F_table_, pose, F, d);
  else
    feedforward_exact(pose, F, d);
}

void Coupling::feedback(const Pose2D& pose, Eigen::Ref<Eigen::MatrixXd> G, CouplingData& d) const {
  if (precompute_ != Precompute::None)
    interpolate(G_table_, pose, G, d);
  else
    feedback_exact(pose, G, d);
}

void Coupling::apply(const Pose2D& pose, const Eigen::Ref<const Eigen::VectorXd>& z,
                     const Eigen::Ref<const Eigen::VectorXd>& rigid, Eigen::Ref<Eigen::VectorXd> c,
                     Eigen::Ref<Eigen::VectorXd> z_next, CouplingData& d) const {
  const Index P = p(), M = m();
  const RowMatrix& B = reduced_->basis();
  const MACGrid2D& g = reduced_->grid();
  Index nodes[8];
  double weights[8];
  auto cp = c.head(P);
  // feedforward (eq. 3.11)
  if (precompute_ == Precompute::Both && F_table_.modes.size() == 0) {
    const int count = node_weights(pose, nodes, weights);
    cp.setZero();
    for (int k = 0; k < count; ++k) cp.noalias() += weights[k] * node_matrix(F_table_, nodes[k]) * z;
  } else if (precompute_ == Precompute::Both) {
    d.op.resize(P, r());
    interpolate(F_table_, pose, d.op, d);
    cp.noalias() = d.op * z;
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
    cp.noalias() = -basis_->surface_speeds().transpose() * d.speeds;
  }
  c.tail(M - P) = rigid;
  // feedback (eq. 3.12)
  if (precompute_ != Precompute::None && G_table_.modes.size() == 0) {
    const int count = node_weights(pose, nodes, weights);
    for (int k = 0; k < count; ++k) z_next.noalias() += weights[k] * node_matrix(G_table_, nodes[k]) * c;
  } else if (precompute_ != Precompute::None) {
    d.op.resize(r(), M);
    interpolate(G_table_, pose, d.op, d);
    z_next.noalias() += d.op * c;
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
