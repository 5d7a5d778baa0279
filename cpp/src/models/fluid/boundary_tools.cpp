#include "directable/models/fluid/boundary_tools.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/QR>
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
  if (wide) {  // left singular vectors C v / sqrt(lambda), re-orthonormalised (small lambda lose accuracy)
    out.directions = C * vec.leftCols(k);
    for (Index j = 0; j < k; ++j) out.directions.col(j) /= std::sqrt(lam[j]);
    const Eigen::HouseholderQR<Eigen::MatrixXd> qr(out.directions);
    Eigen::MatrixXd Q = qr.householderQ() * Eigen::MatrixXd::Identity(q, k);
    for (Index j = 0; j < k; ++j)
      if (qr.matrixQR()(j, j) < 0.0) Q.col(j) = -Q.col(j);
    out.directions = std::move(Q);
  } else {
    out.directions = vec.leftCols(k);
  }
  // one sign per direction whatever the decomposition: its largest entry positive
  for (Index j = 0; j < k; ++j) {
    Index at = 0;
    out.directions.col(j).cwiseAbs().maxCoeff(&at);
    if (out.directions(at, j) < 0.0) out.directions.col(j) = -out.directions.col(j);
  }
  return out;
}

LeastNormFields::LeastNormFields(Eigen::SparseMatrix<double> K, Index n_zero) : K_(std::move(K)), n_zero_(n_zero) {
  const Eigen::SparseMatrix<double> KKt = K_ * K_.transpose();
  normal_.compute(KKt);
  if (normal_.info() != Eigen::Success)
    throw std::domain_error("the boundary-field constraints are singular: use a larger surface_spacing");
}

double LeastNormFields::solve(const Eigen::Ref<const Eigen::MatrixXd>& speeds, Eigen::MatrixXd& u,
                              Eigen::MatrixXd* speed_multipliers) const {
  const Index rows = K_.rows(), q = rows - n_zero_;
  if (speeds.rows() != q) throw_shape("speeds", "(" + std::to_string(q) + ", k)", shape_str(speeds.rows(), speeds.cols()));
  Eigen::MatrixXd c = Eigen::MatrixXd::Zero(rows, speeds.cols());
  c.bottomRows(q) = speeds;
  Eigen::MatrixXd y = normal_.solve(c);  // u = K' y
  u = K_.transpose() * y;
  for (int it = 0; it < 2; ++it) {  // iterative refinement
    const Eigen::MatrixXd dy = normal_.solve((c - K_ * u).eval());
    y += dy;
    u += K_.transpose() * dy;
  }
  if (speed_multipliers) *speed_multipliers = y.bottomRows(q);
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
                     const ProgressFn* progress, const std::function<void(Index, Eigen::Ref<Eigen::MatrixXd>)>& value,
                     bool single)
    : axes_(std::move(axes)), rows_(rows), cols_(cols) {
  if (axes_.empty() || axes_.size() > 16)
    throw std::invalid_argument("a table needs 1 to 16 axes, got " + std::to_string(axes_.size()));
  if (single && compress > 0)
    throw std::invalid_argument("a single-precision table cannot be compressed: give compress=None or float64");
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
    if (single)
      entries32_ = X.cast<float>();
    else
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
  return (entries_.size() + modes_.size() + mean_.size()) * Index(sizeof(double)) +
         entries32_.size() * Index(sizeof(float));
}

void NodeTable::interpolate(const double* key, Eigen::Ref<Eigen::MatrixXd> out, NodeTableData& d) const {
  const bool sp = single();
  d.mixed.setZero(sp ? entries32_.cols() : entries_.cols());
  for_each_corner(key, [&](Index n, double w) {
    if (sp)
      d.mixed.noalias() += w * entries32_.row(n).transpose().cast<double>();
    else
      d.mixed.noalias() += w * entries_.row(n).transpose();
  });
  if (!compressed()) {
    out = Eigen::Map<const Eigen::MatrixXd>(d.mixed.data(), rows_, cols_);
  } else {
    d.flat = mean_.transpose();
    d.flat.noalias() += modes_.transpose() * d.mixed;
    out = Eigen::Map<const Eigen::MatrixXd>(d.flat.data(), rows_, cols_);
  }
}

void NodeTable::apply(const double* key, const Eigen::Ref<const Eigen::VectorXd>& x, Eigen::Ref<Eigen::VectorXd> out,
                      NodeTableData& d) const {
  if (compressed()) {
    d.flat.resize(rows_ * cols_);
    interpolate(key, Eigen::Map<Eigen::MatrixXd>(d.flat.data(), rows_, cols_), d);
    out.noalias() += Eigen::Map<const Eigen::MatrixXd>(d.flat.data(), rows_, cols_) * x;
    return;
  }
  if (!single()) {
    for_each_corner(key, [&](Index n, double w) {
      out.noalias() += w * Eigen::Map<const Eigen::MatrixXd>(entries_.row(n).data(), rows_, cols_) * x;
    });
    return;
  }
  // float entries, double accumulation, four columns per pass over out (plain loops: the compiler
  // vectorises the float -> double conversion with the multiply-adds)
  double* o = out.data();
  const Index R = rows_;
  for_each_corner(key, [&](Index n, double w) {
    const float* M = entries32_.row(n).data();
    Index j = 0;
    for (; j + 4 <= cols_; j += 4) {
      const double a0 = w * x[j], a1 = w * x[j + 1], a2 = w * x[j + 2], a3 = w * x[j + 3];
      const float *c0 = M + j * R, *c1 = c0 + R, *c2 = c1 + R, *c3 = c2 + R;
      for (Index i = 0; i < R; ++i)
        o[i] += a0 * double(c0[i]) + a1 * double(c1[i]) + a2 * double(c2[i]) + a3 * double(c3[i]);
    }
    for (; j < cols_; ++j) {
      const double a = w * x[j];
      const float* c = M + j * R;
      for (Index i = 0; i < R; ++i) o[i] += a * double(c[i]);
    }
  });
}

void check_scene_rows(const char* name, const Eigen::Ref<const RowMatrix>& rows, Index objects, Index cols) {
  check_shape(name, rows.rows(), rows.cols(), objects, cols);
  check_finite(name, rows.data(), rows.size());
}

void check_scene_state(Index r, Index objects, Index max_m, Index pose_cols, const Eigen::Ref<const Eigen::VectorXd>& z,
                       const Eigen::Ref<const RowMatrix>& coeffs, const Eigen::Ref<const RowMatrix>& poses) {
  if (z.size() != r) throw_shape("z", "(" + std::to_string(r) + ",)", "(" + std::to_string(z.size()) + ",)");
  check_finite("z", z.data(), r);
  check_shape("boundary_coeffs", coeffs.rows(), coeffs.cols(), objects, max_m);
  check_finite("boundary_coeffs", coeffs.data(), coeffs.size());
  check_scene_rows("poses", poses, objects, pose_cols);
}

void scene_step(const GalerkinFluid& fluid, Index objects, Index pose_cols, const Eigen::Ref<const Eigen::VectorXd>& z,
                const Eigen::Ref<const Eigen::VectorXd>& w, double dt, const Eigen::Ref<const RowMatrix>& poses,
                const Eigen::Ref<const RowMatrix>& velocities, Eigen::Ref<Eigen::VectorXd> z_next,
                Eigen::Ref<RowMatrix> coeffs, ReducedFluidData& fluid_data, const Eigen::VectorXd& zero_w,
                Eigen::VectorXd& z_flow, const std::function<void(Index)>& object) {
  const Index r = fluid.r();
  if (z.size() != r) throw_shape("z", "(" + std::to_string(r) + ",)", "(" + std::to_string(z.size()) + ",)");
  check_finite("z", z.data(), r);
  if (w.size() != r) throw_shape("w", "(" + std::to_string(r) + ",)", "(" + std::to_string(w.size()) + ",)");
  check_finite("w", w.data(), r);
  check_positive("dt", dt);
  check_scene_rows("poses", poses, objects, pose_cols);
  check_scene_rows("velocities", velocities, objects, pose_cols);
  // 1-3: advect, diffuse, add forces
  fluid.advance(z, zero_w, dt, z_flow, fluid_data);
  z_flow.noalias() += dt * w;
  // 4-6 per object: feedforward, rigid coefficients, feedback
  z_next = z_flow;
  coeffs.setZero();
  for (Index i = 0; i < objects; ++i) object(i);
  // finite inputs can still overflow (a huge dt or state): refused, never returned as NaN
  if (!z_next.allFinite() || !coeffs.allFinite())
    throw std::domain_error("the scene step became non-finite: dt = " + std::to_string(dt) +
                            " s with z, w and the objects' velocities is beyond what the step can represent");
}

}  // namespace directable
