#include "directable/models/fluid/boundary_basis.hpp"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <string>

#include "directable/core/errors.hpp"
#include "directable/models/fluid/boundary_tools.hpp"

namespace directable {

namespace {

using Trip = Eigen::Triplet<double>;

// Adds n . (bilinear interpolation at (x, y)) of grid g to row k.
void add_speed_row(const MACGrid2D& g, Index k, double x, double y, double nx, double ny, std::vector<Trip>& t) {
  Stencil4 sx, sy;
  g.clamp(x, y);
  g.x_stencil(x, y, sx);
  g.y_stencil(x, y, sy);
  for (int a = 0; a < 4; ++a) {
    if (sx.w[a] != 0.0) t.emplace_back(k, sx.idx[a], nx * sx.w[a]);
    if (sy.w[a] != 0.0) t.emplace_back(k, sy.idx[a], ny * sy.w[a]);
  }
}

}  // namespace

Eigen::SparseMatrix<double, Eigen::RowMajor> surface_speed_operator(const MACGrid2D& g,
                                                                     const Eigen::Ref<const RowMatrix>& points,
                                                                     const Eigen::Ref<const RowMatrix>& normals) {
  std::vector<Trip> t;
  t.reserve(size_t(8 * points.rows()));
  for (Index k = 0; k < points.rows(); ++k) add_speed_row(g, k, points(k, 0), points(k, 1), normals(k, 0), normals(k, 1), t);
  Eigen::SparseMatrix<double, Eigen::RowMajor> S(points.rows(), g.n_faces());
  S.setFromTriplets(t.begin(), t.end());
  return S;
}

BoundaryBasis::BoundaryBasis(std::shared_ptr<const MACGrid2D> grid, const Eigen::Ref<const RowMatrix>& basis,
                             std::shared_ptr<const Shape2D> shape, const Eigen::Ref<const RowMatrix>& poses, Index p,
                             double surface_spacing, double local_size, bool rigid, int threads,
                             const ProgressFn* progress)
    : shape_(std::move(shape)), p_(p), requested_p_(p) {
  if (!grid) throw std::invalid_argument("reduced must be a ReducedFluid, got None");
  if (!shape_) throw std::invalid_argument("shape must be a Shape2D, got None");
  const MACGrid2D& g = *grid;
  const double h = g.h();
  const Index N = g.n_faces(), r = basis.cols();
  if (basis.rows() != N) throw_shape("basis", "(" + std::to_string(N) + ", r)", shape_str(basis.rows(), basis.cols()));
  if (poses.cols() != 3 || poses.rows() < 1) throw_shape("poses", "(n, 3) with n >= 1", shape_str(poses.rows(), poses.cols()));
  check_finite("poses", poses.data(), poses.size());
  if (p < 1) throw std::invalid_argument("p must be >= 1, got " + std::to_string(p));
  if (surface_spacing <= 0.0) surface_spacing = 0.5 * h;
  check_positive("surface_spacing", surface_spacing);
  if (local_size <= 0.0) local_size = shape_->radius() + 4.0 * h;
  const double extent = shape_->vertices().cwiseAbs().maxCoeff();
  if (!(local_size > extent + h))
    throw std::invalid_argument("local_size must contain the shape with a cell to spare: the shape reaches " +
                                std::to_string(extent) + " from its origin, so local_size must exceed " +
                                std::to_string(extent + h) + ", got " + std::to_string(local_size));
  const Index nl = 2 * Index(std::ceil(local_size / h - 1e-9));
  half_size_ = 0.5 * double(nl) * h;
  local_ = std::make_shared<MACGrid2D>(nl, nl, h);
  const MACGrid2D& L = *local_;
  shape_->surface(surface_spacing, points_, normals_);
  const Index q = points_.rows();
  {
    RowMatrix shifted = points_.array() + half_size_;
    S_local_ = surface_speed_operator(L, shifted, normals_);
  }

  const SurfaceSpeedPCA pca =
      collect_surface_speeds(poses.rows(), q, r, p, threads, progress, [&](Index i, Eigen::Ref<Eigen::MatrixXd> M) {
        world_surface_speeds(g, basis, Pose2D(poses(i, 0), poses(i, 1), poses(i, 2)), M);
      });
  rank_ = pca.rank;
  p_ = pca.directions.cols();
  energy_ = pca.energy;

  // Minimum-norm fields: variables are the local grid's inner faces (outer faces stay zero).
  const Index NL = L.n_faces();
  std::vector<Index> var(size_t(NL), -1), face_of;
  for (Index f = 0; f < NL; ++f)
    if (!L.is_wall_face(f)) var[size_t(f)] = Index(face_of.size()), face_of.push_back(f);
  const Index nv = Index(face_of.size());
  std::vector<Trip> t;
  Index row = 0;
  const double ih = 1.0 / h;
  for (Index j = 0; j < nl; ++j)
    for (Index i = 0; i < nl; ++i) {
      const double cx = (double(i) + 0.5) * h - half_size_, cy = (double(j) + 0.5) * h - half_size_;
      if (shape_->inside(cx, cy)) continue;
      const Index f[4] = {L.xface(i + 1, j), L.xface(i, j), L.yface(i, j + 1), L.yface(i, j)};
      const double sgn[4] = {ih, -ih, ih, -ih};
      for (int a = 0; a < 4; ++a)
        if (var[size_t(f[a])] >= 0) t.emplace_back(row, var[size_t(f[a])], sgn[a]);
      ++row;
    }
  const Index n_div = row;
  if (n_div == nl * nl)
    throw std::invalid_argument("the shape covers no cell centre of its local grid (thinner than a cell of size " +
                                std::to_string(h) + "): it cannot hold a boundary field");
  for (Index k = 0; k < q; ++k)
    for (Eigen::SparseMatrix<double, Eigen::RowMajor>::InnerIterator it(S_local_, k); it; ++it)
      if (var[size_t(it.col())] >= 0) t.emplace_back(n_div + k, var[size_t(it.col())], it.value());
  Eigen::SparseMatrix<double> K(n_div + q, nv);
  K.setFromTriplets(t.begin(), t.end());
  const LeastNormFields solver(std::move(K), n_div);
  auto solve = [&](const Eigen::MatrixXd& speeds, Eigen::MatrixXd& fields, Eigen::MatrixXd* multipliers) {
    Eigen::MatrixXd u;
    constraint_error_ = std::max(constraint_error_, solver.solve(speeds, u, multipliers));
    fields.setZero(NL, speeds.cols());
    for (Index v = 0; v < nv; ++v) fields.row(face_of[size_t(v)]) = u.row(v);
  };
  Eigen::MatrixXd Y;  // q x p: M_ss Stilde, the energy metric of the surface speeds applied to the directions
  solve(pca.directions, fields_, &Y);
  // W = (A'A)^-1 (M_ss Stilde)': the coefficients of the least-energy combination of the fields whose
  // surface speeds are closest to given ones in the fields' energy (W Stilde = I, as A'A = Stilde' Y)
  const Eigen::MatrixXd AtA = fields_.transpose() * fields_;
  energy_weights_ = AtA.ldlt().solve(Y.transpose());
  if (rigid) {
    Eigen::MatrixXd rs(q, 3);
    for (Index k = 0; k < q; ++k)
      rs(k, 0) = normals_(k, 0), rs(k, 1) = normals_(k, 1),
      rs(k, 2) = -normals_(k, 0) * points_(k, 1) + normals_(k, 1) * points_(k, 0);
    solve(rs, rigid_fields_, nullptr);
  } else {
    rigid_fields_.resize(NL, 0);
  }
  all_fields_.resize(NL, m());
  all_fields_ << fields_, rigid_fields_;
  surface_speeds_ = S_local_ * fields_;
}

void BoundaryBasis::world_surface(const Pose2D& pose, RowMatrix& points, RowMatrix& normals) const {
  const Index q = points_.rows();
  points.resize(q, 2), normals.resize(q, 2);
  for (Index k = 0; k < q; ++k) {
    points.row(k) = pose.to_world(points_(k, 0), points_(k, 1)).transpose();
    normals.row(k) = pose.rotate(normals_(k, 0), normals_(k, 1)).transpose();
  }
}

void BoundaryBasis::surface_stencils(const MACGrid2D& g, const Pose2D& pose, Index k, Stencil4& sx, Stencil4& sy,
                                     Eigen::Vector2d& n) const {
  Eigen::Vector2d x = pose.to_world(points_(k, 0), points_(k, 1));
  n = pose.rotate(normals_(k, 0), normals_(k, 1));
  g.clamp(x[0], x[1]);
  g.x_stencil(x[0], x[1], sx);
  g.y_stencil(x[0], x[1], sy);
}

namespace {

template <class Out>
void surface_speeds_at(const BoundaryBasis& b, const MACGrid2D& g, const Eigen::Ref<const RowMatrix>& basis,
                       const Pose2D& pose, Index first, Out& M) {
  Stencil4 sx, sy;
  Eigen::Vector2d n;
  for (Index k = 0; k < M.rows(); ++k) {
    b.surface_stencils(g, pose, first + k, sx, sy, n);
    auto row = M.row(k);
    row.setZero();
    for (int a = 0; a < 4; ++a) {
      row.noalias() += (n[0] * sx.w[a]) * basis.row(sx.idx[a]);
      row.noalias() += (n[1] * sy.w[a]) * basis.row(sy.idx[a]);
    }
  }
}

}  // namespace

void BoundaryBasis::world_surface_speeds(const MACGrid2D& g, const Eigen::Ref<const RowMatrix>& basis,
                                         const Pose2D& pose, Eigen::Ref<RowMatrix> M, Index first) const {
  surface_speeds_at(*this, g, basis, pose, first, M);
}

void BoundaryBasis::world_surface_speeds(const MACGrid2D& g, const Eigen::Ref<const RowMatrix>& basis,
                                         const Pose2D& pose, Eigen::Ref<Eigen::MatrixXd> M) const {
  surface_speeds_at(*this, g, basis, pose, 0, M);
}

bool BoundaryBasis::local_velocity(const Eigen::Ref<const Eigen::VectorXd>& u, double lx, double ly,
                                   Eigen::Vector2d& v) const {
  const double x = lx + half_size_, y = ly + half_size_;
  const double w = local_->width();
  if (!(x >= 0.0 && x <= w && y >= 0.0 && y <= w)) {
    v.setZero();
    return false;
  }
  v = local_->velocity_at(u, x, y);
  return true;
}

void BoundaryBasis::resample(const MACGrid2D& g, const Pose2D& pose, const Eigen::Ref<const Eigen::MatrixXd>& local_fields,
                             std::vector<Index>& faces, Eigen::MatrixXd& values) const {
  faces.clear();
  for_each_world_face(g, pose, [&](Index f, const Stencil4&, const Stencil4&, const Eigen::Vector2d&) { faces.push_back(f); });
  values.resize(Index(faces.size()), local_fields.cols());
  Index a = 0;
  for_each_world_face(g, pose, [&](Index, const Stencil4& sx, const Stencil4& sy, const Eigen::Vector2d& d) {
    auto row = values.row(a++);
    row.setZero();
    for (int b = 0; b < 4; ++b) {
      row.noalias() += (d[0] * sx.w[b]) * local_fields.row(sx.idx[b]);
      row.noalias() += (d[1] * sy.w[b]) * local_fields.row(sy.idx[b]);
    }
  });
}

}  // namespace directable
