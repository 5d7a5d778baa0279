#include "directable/models/fluid/boundary_tools.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "directable/core/errors.hpp"
#include "directable/core/parallel.hpp"

namespace directable {

SurfaceSpeedPCA collect_surface_speeds(Index n, Index q, Index r, Index p, int threads, const ProgressFn* progress,
                                       const std::function<void(Index, Eigen::Ref<Eigen::MatrixXd>)>& fill) {
  SurfaceSpeedPCA out;
  Eigen::VectorXd lam;
  Eigen::MatrixXd vec;  // eigenvectors of the decomposed Gram, largest first
  const bool wide = n * r <= q;
  Eigen::MatrixXd C;  // q x n r when wide
  if (wide) {
    C.resize(q, n * r);
    parallel_steps(n, threads, progress, n, [] { return 0; },
                   [&](Index i, int&) { fill(i, C.middleCols(i * r, r)); });
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(C.transpose() * C);
    lam = es.eigenvalues().reverse();
    vec = es.eigenvectors().rowwise().reverse();
  } else {
    const Index chunk = 8, n_chunks = (n + chunk - 1) / chunk;
    std::vector<Eigen::MatrixXd> grams(std::size_t(n_chunks), Eigen::MatrixXd::Zero(q, q));
    parallel_steps(n_chunks, threads, progress, n_chunks, [&] { return Eigen::MatrixXd(q, r); },
                   [&](Index c, Eigen::MatrixXd& M) {
                     for (Index i = c * chunk; i < std::min(n, (c + 1) * chunk); ++i) {
                       fill(i, M);
                       grams[std::size_t(c)].selfadjointView<Eigen::Lower>().rankUpdate(M);
                     }
                   });
    Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(q, q);
    for (const auto& G : grams) gram += G;
    gram = gram.selfadjointView<Eigen::Lower>();
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(gram);
    lam = es.eigenvalues().reverse();
    vec = es.eigenvectors().rowwise().reverse();
  }
  const double total = std::max(lam.sum(), 0.0);
  while (out.rank < std::min(q, lam.size()) && lam[0] > 0.0 && lam[out.rank] > 1e-10 * lam[0]) ++out.rank;
  if (out.rank == 0)
    throw std::domain_error("the collected surface speeds are all zero: poses or basis give no flow at the surface");
  const Index k = std::min(p, out.rank);
  out.energy = lam.head(k) / total;
  if (wide) {  // left singular vectors C v / sqrt(lambda)
    out.directions = C * vec.leftCols(k);
    for (Index j = 0; j < k; ++j) out.directions.col(j) /= std::sqrt(lam[j]);
  } else {
    out.directions = vec.leftCols(k);
  }
  return out;
}

LeastNormFields::LeastNormFields(Eigen::SparseMatrix<double> K, Index n_zero) : K_(std::move(K)), n_zero_(n_zero) {
  const Eigen::SparseMatrix<double> KKt = K_ * K_.transpose();
  normal_.compute(KKt);
  if (normal_.info() != Eigen::Success)
    throw std::domain_error("the boundary-field constraints are singular: use a larger surface_spacing");
}

double LeastNormFields::solve(const Eigen::Ref<const Eigen::MatrixXd>& speeds, Eigen::MatrixXd& u) const {
  const Index rows = K_.rows(), q = rows - n_zero_;
  if (speeds.rows() != q) throw_shape("speeds", "(" + std::to_string(q) + ", k)", shape_str(speeds.rows(), speeds.cols()));
  Eigen::MatrixXd c = Eigen::MatrixXd::Zero(rows, speeds.cols());
  c.bottomRows(q) = speeds;
  u = K_.transpose() * normal_.solve(c);
  for (int it = 0; it < 2; ++it) u += K_.transpose() * normal_.solve((c - K_ * u).eval());  // iterative refinement
  const double err = c.size() ? (c - K_ * u).cwiseAbs().maxCoeff() : 0.0;
  const double scale = std::max(1.0, speeds.size() ? speeds.cwiseAbs().maxCoeff() : 0.0);
  if (!(err <= 1e-8 * scale))
    throw std::domain_error("the boundary-field constraints cannot be met (residual " + std::to_string(err) +
                            "): the surface is sampled more finely than the local grid resolves; use a larger "
                            "surface_spacing");
  return err;
}

void check_table_axis(const std::string& n, const Eigen::VectorXd& a) {
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

NodeTable::NodeTable(std::vector<Eigen::VectorXd> axes, Index rows, Index cols, Index compress, int threads,
                     const ProgressFn* progress, const std::function<void(Index, Eigen::Ref<Eigen::MatrixXd>)>& value)
    : axes_(std::move(axes)), rows_(rows), cols_(cols) {
  if (axes_.empty() || axes_.size() > 16)
    throw std::invalid_argument("a table needs 1 to 16 axes, got " + std::to_string(axes_.size()));
  nodes_ = 1;
  for (const auto& a : axes_) nodes_ *= a.size();
  const Index d = rows * cols;
  Eigen::MatrixXd X(nodes_, d);
  parallel_steps(nodes_, threads, progress, nodes_, [&] { return Eigen::MatrixXd(rows, cols); },
                 [&](Index n, Eigen::MatrixXd& M) {
                   value(n, M);
                   X.row(n) = Eigen::Map<const Eigen::RowVectorXd>(M.data(), d);
                 });
  if (compress <= 0) {
    entries_ = X;
    return;
  }
  // PCA over the nodes: X ~ mean + coefficients modes
  mean_ = X.colwise().mean();
  X.rowwise() -= mean_;
  Index k = std::min({compress, nodes_, d});
  Eigen::VectorXd lam;
  if (nodes_ <= d) {
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(X * X.transpose());
    lam = es.eigenvalues().reverse();
    modes_ = es.eigenvectors().rowwise().reverse().leftCols(k).transpose() * X;
  } else {
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(X.transpose() * X);
    lam = es.eigenvalues().reverse();
    modes_ = es.eigenvectors().rowwise().reverse().leftCols(k).transpose();
  }
  // modes of (numerically) zero variance carry nothing and would not be orthogonal
  while (k > 1 && !(lam[k - 1] > 1e-13 * lam[0])) --k;
  modes_.conservativeResize(k, d);
  for (Index i = 0; i < k; ++i)
    if (modes_.row(i).norm() > 0.0) modes_.row(i).normalize();
  entries_ = X * modes_.transpose();
}

Eigen::VectorXd NodeTable::node(const std::vector<Eigen::VectorXd>& axes, Index n) {
  Eigen::VectorXd x(Index(axes.size()));
  for (std::size_t a = 0; a < axes.size(); ++a) {
    const Index m = axes[a].size();
    x[Index(a)] = axes[a][n % m];
    n /= m;
  }
  return x;
}

Index NodeTable::bytes() const {
  return (entries_.size() + modes_.size() + mean_.size()) * Index(sizeof(double));
}

void NodeTable::interpolate(const double* key, Eigen::Ref<Eigen::MatrixXd> out, NodeTableData& d) const {
  const std::size_t D = axes_.size();
  Index lo[16], stride[16];
  double t[16];
  int moving[16], n_moving = 0;
  Index base = 0, s = 1;
  for (std::size_t a = 0; a < D; ++a) {
    const Eigen::VectorXd& ax = axes_[a];
    stride[a] = s;
    lo[a] = 0, t[a] = 0.0;
    if (ax.size() > 1) {
      const double f = std::clamp((key[a] - ax[0]) / (ax[1] - ax[0]), 0.0, double(ax.size() - 1));
      lo[a] = std::min<Index>(Index(std::floor(f)), ax.size() - 2);
      t[a] = f - double(lo[a]);
      if (t[a] > 0.0) moving[n_moving++] = int(a);
    }
    base += lo[a] * s;
    s *= ax.size();
  }
  d.mixed.setZero(entries_.cols());
  for (int c = 0; c < (1 << n_moving); ++c) {
    double w = 1.0;
    Index n = base;
    for (int b = 0; b < n_moving; ++b) {
      const int a = moving[b];
      if ((c >> b) & 1)
        w *= t[a], n += stride[a];
      else
        w *= 1.0 - t[a];
    }
    if (w == 0.0) continue;
    d.mixed.noalias() += w * entries_.row(n).transpose();
  }
  if (modes_.size() == 0) {
    out = Eigen::Map<const Eigen::MatrixXd>(d.mixed.data(), rows_, cols_);
  } else {
    d.flat = mean_.transpose();
    d.flat.noalias() += modes_.transpose() * d.mixed;
    out = Eigen::Map<const Eigen::MatrixXd>(d.flat.data(), rows_, cols_);
  }
}

}  // namespace directable
