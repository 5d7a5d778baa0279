#include "directable/models/fluid/boundary_basis3d.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "directable/core/allocation.hpp"
#include "directable/core/errors.hpp"
#include "directable/models/fluid/boundary_tools.hpp"

namespace directable {

namespace {

using Trip = Eigen::Triplet<double>;

// The three component stencils of a 3D grid at a point (already clamped).
void stencils(const MACGrid3D& g, const Eigen::Vector3d& x, Stencil8 s[3]) {
  g.x_stencil(x[0], x[1], x[2], s[0]);
  g.y_stencil(x[0], x[1], x[2], s[1]);
  g.z_stencil(x[0], x[1], x[2], s[2]);
}

}  // namespace

BoundarySamples boundary_samples_from(const std::string& name) {
  if (name == "surface") return BoundarySamples::surface;
  if (name == "faces") return BoundarySamples::faces;
  if (name == "faces+surface") return BoundarySamples::faces_and_surface;
  throw std::invalid_argument("samples must be \"surface\", \"faces\" or \"faces+surface\", got \"" + name + "\"");
}

const char* boundary_samples_name(BoundarySamples samples) {
  return samples == BoundarySamples::faces ? "faces"
         : samples == BoundarySamples::faces_and_surface ? "faces+surface"
                                                         : "surface";
}

Pose3D::Pose3D(const double* row) : c(row[0], row[1], row[2]), R(rotation_from_vector(Eigen::Vector3d(row[3], row[4], row[5]))) {}

Eigen::SparseMatrix<double, Eigen::RowMajor> surface_speed_operator(const MACGrid3D& g,
                                                                     const Eigen::Ref<const RowMatrix>& points,
                                                                     const Eigen::Ref<const RowMatrix>& normals) {
  std::vector<Trip> t;
  t.reserve(std::size_t(24 * points.rows()));
  Stencil8 s[3];
  for (Index k = 0; k < points.rows(); ++k) {
    Eigen::Vector3d x = points.row(k).transpose();
    g.clamp(x);
    stencils(g, x, s);
    for (int c = 0; c < 3; ++c)
      for (int a = 0; a < 8; ++a)
        if (s[c].w[a] != 0.0 && normals(k, c) != 0.0) t.emplace_back(k, s[c].idx[a], normals(k, c) * s[c].w[a]);
  }
  Eigen::SparseMatrix<double, Eigen::RowMajor> S(points.rows(), g.n_faces());
  S.setFromTriplets(t.begin(), t.end());
  return S;
}

BoundaryBasis3D::BoundaryBasis3D(std::shared_ptr<const MACGrid3D> grid, const Eigen::Ref<const RowMatrix>& basis,
                                 std::shared_ptr<const Shape3D> shape, const Eigen::Ref<const RowMatrix>& poses, Index p,
                                 double surface_spacing, const Eigen::Vector3d& local_half, bool rigid, int threads,
                                 const ProgressFn* progress, BoundarySamples samples)
    : shape_(std::move(shape)), p_(p), requested_p_(p), samples_(samples) {
  if (!grid) throw std::invalid_argument("reduced must be a 3D ReducedFluid, got None");
  if (!shape_) throw std::invalid_argument("shape must be a Shape3D, got None");
  const MACGrid3D& g = *grid;
  const double h = g.h();
  const Index N = g.n_faces(), r = basis.cols();
  if (basis.rows() != N) throw_shape("basis", "(" + std::to_string(N) + ", r)", shape_str(basis.rows(), basis.cols()));
  if (poses.cols() != 6 || poses.rows() < 1)
    throw_shape("poses", "(n, 6) with n >= 1 (position, rotation vector)", shape_str(poses.rows(), poses.cols()));
  check_finite("poses", poses.data(), poses.size());
  if (p < 1) throw std::invalid_argument("p must be >= 1, got " + std::to_string(p));
  if (surface_spacing <= 0.0) surface_spacing = h;
  check_positive("surface_spacing", surface_spacing);
  if (!local_half.allFinite()) throw std::domain_error("local_size must be finite");
  const Eigen::Vector3d extent = shape_->lower().cwiseAbs().cwiseMax(shape_->upper().cwiseAbs());
  Index n[3];
  double want_cells = 1.0;
  for (int a = 0; a < 3; ++a)
    want_cells *= 2.0 * std::ceil((local_half[a] > 0.0 ? local_half[a] : extent[a] + 4.0 * h) / h);
  check_allocation("the local grid of " + std::to_string(want_cells) + " cells (local_size)", 3.0 * 8.0 * 10.0 * want_cells);
  // a local box beyond the whole domain resolves nothing more, at a cost that grows as its cube
  const double domain = h * double(std::max({g.nx(), g.ny(), g.nz()}));
  if (local_half.maxCoeff() > domain)
    throw std::invalid_argument("local_size must be at most the domain's size " + std::to_string(domain) +
                                " m along each axis, got " + std::to_string(local_half.maxCoeff()));
  for (int a = 0; a < 3; ++a) {
    const double want = local_half[a] > 0.0 ? local_half[a] : extent[a] + 4.0 * h;
    if (!(want > extent[a] + h))
      throw std::invalid_argument("local_size must contain the shape with a cell to spare: along axis " +
                                  std::to_string(a) + " the shape reaches " + std::to_string(extent[a]) +
                                  " from its origin, so local_size must exceed " + std::to_string(extent[a] + h) +
                                  ", got " + std::to_string(want));
    n[a] = 2 * Index(std::ceil(want / h - 1e-9));
    half_size_[a] = 0.5 * double(n[a]) * h;
  }
  local_ = std::make_shared<MACGrid3D>(n[0], n[1], n[2], h, CellMask(), 0);
  const MACGrid3D& L = *local_;
  const bool faces = samples_ != BoundarySamples::surface;
  std::vector<char> solid(std::size_t(L.n_cells()));
  for (Index c = 0; c < L.n_cells(); ++c) solid[std::size_t(c)] = shape_->inside(L.cell_center(c) - half_size_);
  if (std::find(solid.begin(), solid.end(), 1) == solid.end())
    throw std::invalid_argument("the shape covers no cell centre of its local grid (thinner than a cell of size " +
                                std::to_string(h) + "): it cannot hold a boundary field");
  // faces: phi(s) is the net flux of face speeds s out of the solid cells (+1 where the fluid cell lies on the
  // face's + side, -1 on its - side, 0 between two solid cells); min-norm fields exist only for phi(s) = 0.
  Eigen::VectorXd phi;
  if (faces) {
    std::vector<double> sign(std::size_t(L.n_faces()), 0.0);
    std::vector<char> closed_by_shape(std::size_t(L.n_faces()), 0);
    for (Index k = 0; k < n[2]; ++k)
      for (Index j = 0; j < n[1]; ++j)
        for (Index i = 0; i < n[0]; ++i) {
          if (!solid[std::size_t(L.cell(i, j, k))]) continue;
          const Index f[6] = {L.xface(i + 1, j, k), L.xface(i, j, k), L.yface(i, j + 1, k),
                              L.yface(i, j, k),     L.zface(i, j, k + 1), L.zface(i, j, k)};
          const Index nb[6][3] = {{i + 1, j, k}, {i - 1, j, k}, {i, j + 1, k},
                                  {i, j - 1, k}, {i, j, k + 1}, {i, j, k - 1}};
          for (int a = 0; a < 6; ++a) {  // the box keeps a cell to spare: every neighbour exists
            closed_by_shape[std::size_t(f[a])] = 1;
            if (!solid[std::size_t(L.cell(nb[a][0], nb[a][1], nb[a][2]))]) sign[std::size_t(f[a])] = a % 2 ? -1.0 : 1.0;
          }
        }
    std::vector<Index> fs;
    for (Index f = 0; f < L.n_faces(); ++f)
      if (closed_by_shape[std::size_t(f)]) fs.push_back(f);
    const Index q = Index(fs.size());
    points_.resize(q, 3), normals_.setZero(q, 3), phi.resize(q);
    for (Index k = 0; k < q; ++k) {
      const Index f = fs[std::size_t(k)];
      points_.row(k) = (L.face_center(f) - half_size_).transpose();
      normals_(k, f < L.n_xfaces() ? 0 : f < L.n_xfaces() + L.n_yfaces() ? 1 : 2) = 1.0;
      phi[k] = sign[std::size_t(f)];
    }
    if (samples_ == BoundarySamples::faces_and_surface) {
      // the faces between two solid cells (the object's inside moves rigidly, as in the full solver) and the
      // surface samples (no flow through the true surface, whose edges the closed faces' staircase misses by up
      // to half a cell): the surface samples read no inside face, so no row repeats another
      Index kept = 0;
      for (Index k = 0; k < points_.rows(); ++k)
        if (phi[k] == 0.0) points_.row(kept) = points_.row(k), normals_.row(kept++) = normals_.row(k);
      RowMatrix sp, sn;
      shape_->surface(surface_spacing, sp, sn);
      points_.conservativeResize(kept + sp.rows(), 3), normals_.conservativeResize(kept + sp.rows(), 3);
      points_.bottomRows(sp.rows()) = sp;
      normals_.bottomRows(sp.rows()) = sn;
      phi.setZero(kept + sp.rows());
    }
  } else {
    shape_->surface(surface_spacing, points_, normals_);
  }
  const Index q = points_.rows();
  {
    RowMatrix shifted = points_.rowwise() + half_size_.transpose();
    S_local_ = surface_speed_operator(L, shifted, normals_);
  }

  const double phi2 = faces ? phi.squaredNorm() : 0.0;
  const SurfaceSpeedPCA pca =
      collect_surface_speeds(poses.rows(), q, r, p, threads, progress, [&](Index i, Eigen::Ref<Eigen::MatrixXd> M) {
        world_surface_speeds(g, basis, Pose3D(poses.row(i).data()), M);
        if (phi2 > 0.0) {  // the interpolated speeds carry a small net flux: keep only their flux-free part
          const Eigen::RowVectorXd flux = phi.transpose() * M;
          M.noalias() -= (phi / phi2) * flux;
        }
      });
  rank_ = pca.rank;
  p_ = pca.directions.cols();
  energy_ = pca.energy;

  // Minimum-norm fields: the variables are the local grid's interior faces (outer faces stay zero).
  const Index NL = L.n_faces();
  const auto closed = L.closed_mask();
  std::vector<Index> var(std::size_t(NL), -1), face_of;
  for (Index f = 0; f < NL; ++f)
    if (!closed[f]) var[std::size_t(f)] = Index(face_of.size()), face_of.push_back(f);
  std::vector<Trip> t;
  Index row = 0;
  const double ih = 1.0 / h;
  // faces: the fluid cells' divergence rows sum to phi's combination of the speed rows; drop the first (a corner)
  bool dropped = samples_ != BoundarySamples::faces;
  for (Index k = 0; k < n[2]; ++k)
    for (Index j = 0; j < n[1]; ++j)
      for (Index i = 0; i < n[0]; ++i) {
        if (solid[std::size_t(L.cell(i, j, k))]) continue;
        if (!dropped) {
          dropped = true;
          continue;
        }
        const Index f[6] = {L.xface(i + 1, j, k), L.xface(i, j, k), L.yface(i, j + 1, k),
                            L.yface(i, j, k),     L.zface(i, j, k + 1), L.zface(i, j, k)};
        for (int a = 0; a < 6; ++a)
          if (var[std::size_t(f[a])] >= 0) t.emplace_back(row, var[std::size_t(f[a])], a % 2 ? -ih : ih);
        ++row;
      }
  const Index n_div = row;
  for (Index k = 0; k < q; ++k)
    for (Eigen::SparseMatrix<double, Eigen::RowMajor>::InnerIterator it(S_local_, k); it; ++it)
      if (var[std::size_t(it.col())] >= 0) t.emplace_back(n_div + k, var[std::size_t(it.col())], it.value());
  Eigen::SparseMatrix<double> K(n_div + q, Index(face_of.size()));
  K.setFromTriplets(t.begin(), t.end());
  const LeastNormFields solver(std::move(K), n_div);
  auto solve = [&](const Eigen::MatrixXd& speeds, Eigen::MatrixXd& fields) {
    Eigen::MatrixXd u;
    constraint_error_ = std::max(constraint_error_, solver.solve(speeds, u));
    fields.setZero(NL, speeds.cols());
    for (std::size_t v = 0; v < face_of.size(); ++v) fields.row(face_of[v]) = u.row(Index(v));
  };
  solve(pca.directions, fields_);
  if (rigid) {
    Eigen::MatrixXd rs(q, 6);  // n . e_a and n . (e_a x x) = (x x n)_a
    for (Index k = 0; k < q; ++k) {
      const Eigen::Vector3d x = points_.row(k).transpose(), nk = normals_.row(k).transpose();
      rs.row(k).head<3>() = nk.transpose();
      rs.row(k).tail<3>() = x.cross(nk).transpose();
    }
    solve(rs, rigid_fields_);
  } else {
    rigid_fields_.resize(NL, 0);
  }
  all_fields_.resize(NL, m());
  all_fields_ << fields_, rigid_fields_;
  surface_speeds_ = S_local_ * fields_;
}

void BoundaryBasis3D::world_surface(const Pose3D& pose, RowMatrix& points, RowMatrix& normals) const {
  points = (points_ * pose.R.transpose()).rowwise() + pose.c.transpose();
  normals = normals_ * pose.R.transpose();
}

void BoundaryBasis3D::world_surface_speeds(const MACGrid3D& g, const Eigen::Ref<const RowMatrix>& basis,
                                           const Pose3D& pose, Eigen::Ref<Eigen::MatrixXd> M) const {
  Stencil8 s[3];
  for (Index k = 0; k < points_.rows(); ++k) {
    Eigen::Vector3d x = pose.to_world(points_.row(k).transpose());
    const Eigen::Vector3d nk = pose.R * normals_.row(k).transpose();
    g.clamp(x);
    stencils(g, x, s);
    auto row = M.row(k);
    row.setZero();
    for (int c = 0; c < 3; ++c)
      for (int a = 0; a < 8; ++a) row.noalias() += (nk[c] * s[c].w[a]) * basis.row(s[c].idx[a]);
  }
}

bool BoundaryBasis3D::in_box(const Eigen::Vector3d& p, Eigen::Vector3d& l) const {
  l = p + half_size_;
  return (l.array() >= 0.0).all() && (l.array() <= 2.0 * half_size_.array()).all();
}

bool BoundaryBasis3D::local_velocity(const Eigen::Ref<const Eigen::VectorXd>& u, const Eigen::Vector3d& p,
                                     Eigen::Vector3d& v) const {
  Eigen::Vector3d l;
  if (!in_box(p, l)) {
    v.setZero();
    return false;
  }
  v = local_->velocity_at(u, l);
  return true;
}

void BoundaryBasis3D::resample(const MACGrid3D& g, const Pose3D& pose,
                               const Eigen::Ref<const Eigen::MatrixXd>& local_fields, std::vector<Index>& faces,
                               Eigen::MatrixXd& values) const {
  const double h = g.h();
  const Index k = local_fields.cols();
  faces.clear();
  // world bounds of the local box
  const Eigen::Vector3d reach = pose.R.cwiseAbs() * half_size_;
  const Eigen::Vector3d lo = pose.c - reach, hi = pose.c + reach;
  const Index n[3] = {g.nx(), g.ny(), g.nz()};
  std::vector<Eigen::Vector3d> at;  // local-grid coordinates of each face centre
  std::vector<int> axis_of;
  Eigen::Vector3d l;
  for (int a = 0; a < 3; ++a) {
    Index b0[3], b1[3];  // lattice ranges of the a-faces near the box (interior along a)
    for (int d = 0; d < 3; ++d) {
      const double off = d == a ? 0.0 : 0.5;
      b0[d] = std::max<Index>(d == a ? 1 : 0, Index(std::floor(lo[d] / h - off)));
      b1[d] = std::min<Index>(n[d] - 1, Index(std::ceil(hi[d] / h - off)));
    }
    for (Index kk = b0[2]; kk <= b1[2]; ++kk)
      for (Index j = b0[1]; j <= b1[1]; ++j)
        for (Index i = b0[0]; i <= b1[0]; ++i) {
          Eigen::Vector3d x((double(i) + 0.5) * h, (double(j) + 0.5) * h, (double(kk) + 0.5) * h);
          x[a] -= 0.5 * h;
          if (!in_box(pose.to_local(x), l)) continue;
          faces.push_back(a == 0 ? g.xface(i, j, kk) : a == 1 ? g.yface(i, j, kk) : g.zface(i, j, kk));
          at.push_back(l), axis_of.push_back(a);
        }
  }
  values.resize(Index(faces.size()), k);
  Stencil8 s[3];
  for (std::size_t f = 0; f < faces.size(); ++f) {
    auto row = values.row(Index(f));
    row.setZero();
    stencils(*local_, at[f], s);
    const int a = axis_of[f];  // world component a of R u_local: sum_c R(a, c) u_c
    for (int c = 0; c < 3; ++c) {
      const double d = pose.R(a, c);
      if (d == 0.0) continue;
      for (int b = 0; b < 8; ++b) row.noalias() += (d * s[c].w[b]) * local_fields.row(s[c].idx[b]);
    }
  }
}

}  // namespace directable
