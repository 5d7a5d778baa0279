#include "directable/models/fluid/mac_grid.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "directable/core/errors.hpp"

namespace directable {

namespace {

using Trip = Eigen::Triplet<double>;

// Bilinear stencil on a lattice of (maxi+1) x (maxj+1) nodes at fractional
// coordinates (fx, fy) (already clamped); gx, gy = d fx / dx, d fy / dy.
template <class IndexFn>
void lattice_stencil(double fx, double fy, Index maxi, Index maxj, double gx, double gy, IndexFn idx, Stencil4& s) {
  Index i0 = std::min<Index>(Index(std::floor(fx)), std::max<Index>(maxi - 1, 0));
  Index j0 = std::min<Index>(Index(std::floor(fy)), std::max<Index>(maxj - 1, 0));
  const Index i1 = std::min(i0 + 1, maxi), j1 = std::min(j0 + 1, maxj);
  const double tx = maxi > 0 ? fx - double(i0) : 0.0, ty = maxj > 0 ? fy - double(j0) : 0.0;
  if (maxi == 0) gx = 0.0;
  if (maxj == 0) gy = 0.0;
  s.idx[0] = idx(i0, j0), s.idx[1] = idx(i1, j0), s.idx[2] = idx(i0, j1), s.idx[3] = idx(i1, j1);
  s.w[0] = (1 - tx) * (1 - ty), s.w[1] = tx * (1 - ty), s.w[2] = (1 - tx) * ty, s.w[3] = tx * ty;
  s.dx[0] = -(1 - ty) * gx, s.dx[1] = (1 - ty) * gx, s.dx[2] = -ty * gx, s.dx[3] = ty * gx;
  s.dy[0] = -(1 - tx) * gy, s.dy[1] = -tx * gy, s.dy[2] = (1 - tx) * gy, s.dy[3] = tx * gy;
}

// Clamps f into [0, hi]; returns the derivative factor (0 when clamped).
double clamp_coord(double& f, double hi, double g) {
  // NaN (a departure point from an overflowing u dt) lands on 0: casting it to an index is undefined
  if (std::isnan(f) || f < 0.0) { f = 0.0; return 0.0; }
  if (f > hi) { f = hi; return 0.0; }
  return g;
}

double apply(const Stencil4& s, const Eigen::Ref<const Eigen::VectorXd>& u) {
  return s.w[0] * u[s.idx[0]] + s.w[1] * u[s.idx[1]] + s.w[2] * u[s.idx[2]] + s.w[3] * u[s.idx[3]];
}

}  // namespace

MACGrid2D::MACGrid2D(Index nx, Index ny, double h, const Mask& solid) : nx_(nx), ny_(ny), h_(h) {
  if (nx < 2 || ny < 2)
    throw std::invalid_argument("grid size (nx, ny) must be at least (2, 2), got (" + std::to_string(nx) + ", " +
                                std::to_string(ny) + ")");
  // the pressure and diffusion operators scale with 1/h^2: it must be finite and nonzero
  if (!(h >= 1e-100 && h <= 1e100))
    throw std::domain_error("h must be finite and lie in [1e-100, 1e100] (operators scale with 1/h^2), got " +
                            std::to_string(h));
  // the sparse factorizations index with int: an honest limit, not an allocation that never ends
  if (nx > (1 << 20) || ny > (1 << 20) || (nx + 1) * (ny + 1) > Index(std::numeric_limits<int>::max() / 8))
    throw std::invalid_argument("grid size (nx, ny) = (" + std::to_string(nx) + ", " + std::to_string(ny) +
                                ") is too large: at most 2^28 cells (the sparse solvers' int indices)");
  if (solid.size() != 0 && solid.size() != n_cells())
    throw_shape("solid", "(" + std::to_string(ny) + ", " + std::to_string(nx) + ") (ny, nx)",
                "(" + std::to_string(solid.size()) + ",) cells");
  solid_ = solid.size() ? solid : Mask::Constant(n_cells(), false);
  has_solid_ = solid_.any();
  if (solid_.all()) throw std::invalid_argument("solid covers every cell: no fluid left");
  closed_.resize(n_faces());
  for (Index f = 0; f < n_faces(); ++f) {
    Index a, b;
    face_cells(f, a, b);
    closed_[f] = a < 0 || b < 0 || solid_[a] || solid_[b];
  }
  Eigen::SparseMatrix<double> A;
  assemble_pressure_matrix(*this, solid_, A);
  pressure_solver_.compute(A);
  if (pressure_solver_.info() != Eigen::Success) throw std::runtime_error("pressure factorisation failed");
  assemble_face_laplacian();
}

void MACGrid2D::face_cells(Index f, Index& a, Index& b) const {
  if (f < n_xfaces()) {
    const Index i = f % (nx_ + 1), j = f / (nx_ + 1);
    a = i > 0 ? j * nx_ + i - 1 : -1;
    b = i < nx_ ? j * nx_ + i : -1;
    return;
  }
  const Index g = f - n_xfaces(), i = g % nx_, j = g / nx_;
  a = j > 0 ? (j - 1) * nx_ + i : -1;
  b = j < ny_ ? j * nx_ + i : -1;
}

Eigen::Vector2d MACGrid2D::face_center(Index f) const {
  if (f < n_xfaces()) return {double(f % (nx_ + 1)) * h_, (double(f / (nx_ + 1)) + 0.5) * h_};
  const Index g = f - n_xfaces();
  return {(double(g % nx_) + 0.5) * h_, double(g / nx_) * h_};
}

// Pressure: Neumann Laplacian among fluid cells (SPD after pinning one cell
// per connected region, which a compatible right-hand side leaves at zero).
void assemble_pressure_matrix(const MACGrid2D& g, const Mask& solid, Eigen::SparseMatrix<double>& A) {
  const Index nx = g.nx(), ny = g.ny(), C = g.n_cells();
  const double ih2 = 1.0 / (g.h() * g.h());
  std::vector<Trip> t;
  t.reserve(size_t(10 * C));
  auto cell = [&](Index i, Index j) { return j * nx + i; };
  for (Index j = 0; j < ny; ++j)
    for (Index i = 0; i < nx; ++i) {
      const Index c = cell(i, j);
      if (solid[c]) {
        t.emplace_back(c, c, 1.0);
        continue;
      }
      if (i + 1 < nx && !solid[cell(i + 1, j)]) {
        const Index d = cell(i + 1, j);
        t.emplace_back(c, c, ih2), t.emplace_back(d, d, ih2), t.emplace_back(c, d, -ih2), t.emplace_back(d, c, -ih2);
      }
      if (j + 1 < ny && !solid[cell(i, j + 1)]) {
        const Index d = cell(i, j + 1);
        t.emplace_back(c, c, ih2), t.emplace_back(d, d, ih2), t.emplace_back(c, d, -ih2), t.emplace_back(d, c, -ih2);
      }
    }
  // one pinned cell per connected fluid region (flood fill), the first in row-major order
  std::vector<char> seen(size_t(C), 0);
  std::vector<Index> stack;
  for (Index c0 = 0; c0 < C; ++c0) {
    if (solid[c0] || seen[size_t(c0)]) continue;
    t.emplace_back(c0, c0, ih2);
    seen[size_t(c0)] = 1, stack.push_back(c0);
    while (!stack.empty()) {
      const Index c = stack.back();
      stack.pop_back();
      const Index i = c % nx, j = c / nx;
      const Index nb[4] = {i > 0 ? c - 1 : -1, i + 1 < nx ? c + 1 : -1, j > 0 ? c - nx : -1, j + 1 < ny ? c + nx : -1};
      for (Index d : nb)
        if (d >= 0 && !solid[d] && !seen[size_t(d)]) seen[size_t(d)] = 1, stack.push_back(d);
    }
  }
  A.resize(C, C);
  A.setFromTriplets(t.begin(), t.end());
}

void subtract_pressure_gradient(const MACGrid2D& g, const Mask& solid, const Eigen::Ref<const Eigen::VectorXd>& p,
                                Eigen::Ref<Eigen::VectorXd> u) {
  const Index nx = g.nx(), ny = g.ny();
  const double ih = 1.0 / g.h();
  for (Index j = 0; j < ny; ++j)
    for (Index i = 1; i < nx; ++i) {
      const Index a = j * nx + i - 1, b = j * nx + i;
      if (!solid[a] && !solid[b]) u[g.xface(i, j)] -= (p[b] - p[a]) * ih;
    }
  for (Index j = 1; j < ny; ++j)
    for (Index i = 0; i < nx; ++i) {
      const Index a = (j - 1) * nx + i, b = j * nx + i;
      if (!solid[a] && !solid[b]) u[g.yface(i, j)] -= (p[b] - p[a]) * ih;
    }
}

// Face Laplacian: graph Laplacian among the non-wall faces of each
// component; wall faces are zero Dirichlet neighbours.
void MACGrid2D::assemble_face_laplacian() {
  const double ih2 = 1.0 / (h_ * h_);
  std::vector<Trip> t;
  auto link = [&](Index a, Index b) {  // a non-wall; b a face or -1 (no neighbour)
    if (b < 0) return;
    t.emplace_back(a, a, -ih2);
    if (!is_wall_face(b)) t.emplace_back(a, b, ih2);
  };
  for (Index j = 0; j < ny_; ++j)
    for (Index i = 1; i < nx_; ++i) {
      const Index a = xface(i, j);
      if (closed_[a]) continue;
      link(a, xface(i - 1, j)), link(a, xface(i + 1, j));
      link(a, j > 0 ? xface(i, j - 1) : -1), link(a, j + 1 < ny_ ? xface(i, j + 1) : -1);
    }
  for (Index j = 1; j < ny_; ++j)
    for (Index i = 0; i < nx_; ++i) {
      const Index a = yface(i, j);
      if (closed_[a]) continue;
      link(a, yface(i, j - 1)), link(a, yface(i, j + 1));
      link(a, i > 0 ? yface(i - 1, j) : -1), link(a, i + 1 < nx_ ? yface(i + 1, j) : -1);
    }
  laplacian_.resize(n_faces(), n_faces());
  laplacian_.setFromTriplets(t.begin(), t.end());
}

void MACGrid2D::divergence(const Eigen::Ref<const Eigen::VectorXd>& u, Eigen::Ref<Eigen::VectorXd> div) const {
  const double ih = 1.0 / h_;
  for (Index j = 0; j < ny_; ++j)
    for (Index i = 0; i < nx_; ++i)
      div[j * nx_ + i] = (u[xface(i + 1, j)] - u[xface(i, j)] + u[yface(i, j + 1)] - u[yface(i, j)]) * ih;
}

double MACGrid2D::max_divergence(const Eigen::Ref<const RowMatrix>& U) const {
  check_shape("basis", U.rows(), U.cols(), n_faces(), U.cols());
  for (Index f = 0; f < U.rows(); ++f) check_finite("basis", U.row(f).data(), U.cols(), f * U.cols());
  Eigen::VectorXd col(n_faces()), div(n_cells());
  double m = 0.0;
  for (Index k = 0; k < U.cols(); ++k) {
    col = U.col(k);
    divergence(col, div);
    m = std::max(m, div.cwiseAbs().maxCoeff() * h_);
    for (Index f = 0; f < n_faces(); ++f)
      if (is_wall_face(f)) m = std::max(m, std::abs(col[f]));
  }
  return m;
}

void MACGrid2D::project(Eigen::Ref<Eigen::VectorXd> u, Eigen::Ref<Eigen::VectorXd> p) const {
  if (has_solid_) {
    for (Index f = 0; f < n_faces(); ++f)
      if (closed_[f]) u[f] = 0.0;
  } else {
    for (Index j = 0; j < ny_; ++j) u[xface(0, j)] = 0.0, u[xface(nx_, j)] = 0.0;
    for (Index i = 0; i < nx_; ++i) u[yface(i, 0)] = 0.0, u[yface(i, ny_)] = 0.0;
  }
  divergence(u, p);
  p = -p;
  p = pressure_solver_.solve(p);
  subtract_pressure_gradient(*this, solid_, p, u);
}

void MACGrid2D::project_rows(Eigen::Ref<RowMatrix> fields) const {
  if (fields.cols() != n_faces())
    throw_shape("u", "(k, " + std::to_string(n_faces()) + ")", shape_str(fields.rows(), fields.cols()));
  check_finite("u", fields.data(), fields.size());
  Eigen::VectorXd pressure(n_cells());
  for (Index k = 0; k < fields.rows(); ++k) {
    auto u = fields.row(k).transpose();
    project(u, pressure);
  }
}

void MACGrid2D::clamp(double& x, double& y) const {
  x = std::clamp(x, 0.0, width());
  y = std::clamp(y, 0.0, height());
}

void MACGrid2D::x_stencil(double x, double y, Stencil4& s) const {
  double fx = x / h_, fy = y / h_ - 0.5;
  const double gx = clamp_coord(fx, double(nx_), 1.0 / h_), gy = clamp_coord(fy, double(ny_ - 1), 1.0 / h_);
  lattice_stencil(fx, fy, nx_, ny_ - 1, gx, gy, [this](Index i, Index j) { return xface(i, j); }, s);
}

void MACGrid2D::y_stencil(double x, double y, Stencil4& s) const {
  double fx = x / h_ - 0.5, fy = y / h_;
  const double gx = clamp_coord(fx, double(nx_ - 1), 1.0 / h_), gy = clamp_coord(fy, double(ny_), 1.0 / h_);
  lattice_stencil(fx, fy, nx_ - 1, ny_, gx, gy, [this](Index i, Index j) { return yface(i, j); }, s);
}

void MACGrid2D::cell_stencil(double x, double y, Stencil4& s) const {
  double fx = x / h_ - 0.5, fy = y / h_ - 0.5;
  const double gx = clamp_coord(fx, double(nx_ - 1), 1.0 / h_), gy = clamp_coord(fy, double(ny_ - 1), 1.0 / h_);
  lattice_stencil(fx, fy, nx_ - 1, ny_ - 1, gx, gy, [this](Index i, Index j) { return j * nx_ + i; }, s);
}

Eigen::Vector2d MACGrid2D::velocity_at(const Eigen::Ref<const Eigen::VectorXd>& u, double x, double y) const {
  Stencil4 sx, sy;
  x_stencil(x, y, sx);
  y_stencil(x, y, sy);
  return {apply(sx, u), apply(sy, u)};
}

void MACGrid2D::velocities_at(const Eigen::Ref<const Eigen::VectorXd>& u, const Eigen::Ref<const RowMatrix>& points,
                              Eigen::Ref<RowMatrix> out) const {
  if (u.size() != n_faces()) throw_shape("u", "(" + std::to_string(n_faces()) + ",)", "(" + std::to_string(u.size()) + ",)");
  check_finite("u", u.data(), u.size());
  check_shape("points", points.rows(), points.cols(), points.rows(), 2);
  check_finite("points", points.data(), points.size());
  check_shape("out", out.rows(), out.cols(), points.rows(), 2);
  for (Index k = 0; k < points.rows(); ++k) {
    double x = points(k, 0), y = points(k, 1);
    clamp(x, y);
    out.row(k) = velocity_at(u, x, y).transpose();
  }
}

void MACGrid2D::advect_velocity(const Eigen::Ref<const Eigen::VectorXd>& u, double dt,
                                Eigen::Ref<Eigen::VectorXd> out) const {
  check_finite("dt", &dt, 1);
  auto trace = [&](double x, double y) {
    const Eigen::Vector2d v1 = velocity_at(u, x, y);
    const Eigen::Vector2d v2 = velocity_at(u, x - 0.5 * dt * v1[0], y - 0.5 * dt * v1[1]);
    return Eigen::Vector2d(x - dt * v2[0], y - dt * v2[1]);
  };
  Stencil4 s;
  for (Index j = 0; j < ny_; ++j)
    for (Index i = 0; i <= nx_; ++i) {
      if (closed_[xface(i, j)]) { out[xface(i, j)] = 0.0; continue; }
      const Eigen::Vector2d b = trace(double(i) * h_, (double(j) + 0.5) * h_);
      x_stencil(b[0], b[1], s);
      out[xface(i, j)] = apply(s, u);
    }
  for (Index j = 0; j <= ny_; ++j)
    for (Index i = 0; i < nx_; ++i) {
      if (closed_[yface(i, j)]) { out[yface(i, j)] = 0.0; continue; }
      const Eigen::Vector2d b = trace((double(i) + 0.5) * h_, double(j) * h_);
      y_stencil(b[0], b[1], s);
      out[yface(i, j)] = apply(s, u);
    }
}

void MACGrid2D::advect_cells(const Eigen::Ref<const Eigen::VectorXd>& u, const Eigen::Ref<const Eigen::VectorXd>& q,
                             double dt, Eigen::Ref<Eigen::VectorXd> out) const {
  check_finite("dt", &dt, 1);
  Stencil4 s;
  for (Index j = 0; j < ny_; ++j)
    for (Index i = 0; i < nx_; ++i) {
      const double x = (double(i) + 0.5) * h_, y = (double(j) + 0.5) * h_;
      const Eigen::Vector2d v1 = velocity_at(u, x, y);
      const Eigen::Vector2d v2 = velocity_at(u, x - 0.5 * dt * v1[0], y - 0.5 * dt * v1[1]);
      cell_stencil(x - dt * v2[0], y - dt * v2[1], s);
      out[j * nx_ + i] = apply(s, q);
    }
}

void MACGrid2D::advect_particles(const Eigen::Ref<const Eigen::VectorXd>& u, Eigen::Ref<RowMatrix> p, double dt) const {
  check_finite("dt", &dt, 1);
  for (Index k = 0; k < p.rows(); ++k) {
    double x = p(k, 0), y = p(k, 1);
    clamp(x, y);
    const Eigen::Vector2d v1 = velocity_at(u, x, y);
    double mx = x + 0.5 * dt * v1[0], my = y + 0.5 * dt * v1[1];
    clamp(mx, my);
    const Eigen::Vector2d v2 = velocity_at(u, mx, my);
    x += dt * v2[0], y += dt * v2[1];
    clamp(x, y);
    p(k, 0) = x, p(k, 1) = y;
  }
}

void MACGrid2D::add_wind(Eigen::Ref<Eigen::VectorXd> f, double cx, double cy, double dirx, double diry,
                         double magnitude, double width) const {
  check_positive("width", width);
  if (!std::isfinite(magnitude)) throw std::domain_error("magnitude must be finite, got " + std::to_string(magnitude));
  if (!std::isfinite(cx) || !std::isfinite(cy)) throw std::domain_error("center must be finite");
  if (!std::isfinite(dirx) || !std::isfinite(diry)) throw std::domain_error("direction must be finite");
  if (f.size() != n_faces()) throw_shape("f", "(" + std::to_string(n_faces()) + ",)", "(" + std::to_string(f.size()) + ",)");
  const double iw2 = 1.0 / (width * width);
  auto g = [&](double x, double y) { return magnitude * std::exp(-((x - cx) * (x - cx) + (y - cy) * (y - cy)) * iw2); };
  for (Index j = 0; j < ny_; ++j)
    for (Index i = 1; i < nx_; ++i) f[xface(i, j)] += dirx * g(double(i) * h_, (double(j) + 0.5) * h_);
  for (Index j = 1; j < ny_; ++j)
    for (Index i = 0; i < nx_; ++i) f[yface(i, j)] += diry * g((double(i) + 0.5) * h_, double(j) * h_);
}

FluidSim2D::FluidSim2D(std::shared_ptr<const MACGrid2D> grid, double viscosity, double dt, PressureSolver solver,
                       double tolerance)
    : grid_(std::move(grid)), viscosity_(viscosity), dt_(dt), solver_(solver), tolerance_(tolerance) {
  if (!grid_) throw std::invalid_argument("grid must be a MACGrid2D, got None");
  if (!(tolerance > 0.0 && tolerance < 1.0))
    throw std::domain_error("tolerance must be in (0, 1), got " + std::to_string(tolerance));
  if (!(viscosity >= 0.0) || !std::isfinite(viscosity))
    throw std::domain_error("viscosity must be finite and >= 0, got " + std::to_string(viscosity));
  check_positive("dt", dt);
  const Index N = grid_->n_faces();
  if (viscosity_ > 0.0) {
    Eigen::SparseMatrix<double> I(N, N);
    I.setIdentity();
    Eigen::SparseMatrix<double> M = I - (viscosity_ * dt_) * grid_->laplacian();
    diffusion_solver_.compute(M);
    if (diffusion_solver_.info() != Eigen::Success) throw std::runtime_error("diffusion factorisation failed");
  }
  velocity_.setZero(N), advected_.setZero(N);
  const Index C = grid_->n_cells();
  density_.setZero(C), advected_density_.setZero(C), pressure_.setZero(C), rhs_.setZero(C);
  particles_.resize(0, 2);
  step_solid_ = grid_->solid();
  owner_.setConstant(C, -1);
}

void FluidSim2D::set_velocity(const Eigen::Ref<const Eigen::VectorXd>& u) {
  const Index N = grid_->n_faces();
  if (u.size() != N) throw_shape("velocity", "(" + std::to_string(N) + ",)", "(" + std::to_string(u.size()) + ",)");
  check_finite("velocity", u.data(), N);
  velocity_ = u;
}

void FluidSim2D::set_density(const Eigen::Ref<const Eigen::VectorXd>& rho) {
  const Index C = grid_->n_cells();
  if (rho.size() != C) throw_shape("density", "(" + std::to_string(C) + ",)", "(" + std::to_string(rho.size()) + ",)");
  check_finite("density", rho.data(), C);
  density_ = rho;
}

void FluidSim2D::set_particles(const Eigen::Ref<const RowMatrix>& p) {
  check_shape("particles", p.rows(), p.cols(), p.rows(), 2);
  check_finite("particles", p.data(), p.size());
  particles_ = p;
}

void FluidSim2D::step(const Eigen::Ref<const Eigen::VectorXd>& f) {
  if (f.size() != 0) {
    const Index N = grid_->n_faces();
    if (f.size() != N) throw_shape("force", "(" + std::to_string(N) + ",)", "(" + std::to_string(f.size()) + ",)");
    check_finite("force", f.data(), N);
  }
  advance(f);
}

void FluidSim2D::advance(const Eigen::Ref<const Eigen::VectorXd>& f) {
  const MACGrid2D& g = *grid_;
  if (f.size() != 0) velocity_ += dt_ * f;
  g.advect_velocity(velocity_, dt_, advected_);
  if (viscosity_ > 0.0)
    velocity_ = diffusion_solver_.solve(advected_);
  else
    velocity_.swap(advected_);
  g.project(velocity_, pressure_);
  g.advect_cells(velocity_, density_, dt_, advected_density_);
  density_.swap(advected_density_);
  g.advect_particles(velocity_, particles_, dt_);
}

void FluidSim2D::step(const Eigen::Ref<const Eigen::VectorXd>& f, const std::vector<Obstacle2D>& obstacles) {
  if (obstacles.empty()) return step(f);
  if (f.size() != 0) {
    const Index N = grid_->n_faces();
    if (f.size() != N) throw_shape("force", "(" + std::to_string(N) + ",)", "(" + std::to_string(f.size()) + ",)");
    check_finite("force", f.data(), N);
  }
  for (size_t k = 0; k < obstacles.size(); ++k) obstacles[k].check_in_domain(*grid_, "obstacles[" + std::to_string(k) + "]");
  advance_obstacles(f, obstacles);
}

// Closes the cells the obstacles cover, sets every face touching a solid
// cell to the rigid normal velocity (zero for fixed solids and walls), and
// solves the pressure over the fluid cells (Bridson, "Fluid Simulation for
// Computer Graphics", ch. 5: the solid's flux enters the divergence).
void FluidSim2D::project_obstacles(const std::vector<Obstacle2D>& obstacles) {
  const MACGrid2D& g = *grid_;
  const Index nx = g.nx(), ny = g.ny(), C = g.n_cells(), N = g.n_faces();
  const double h = g.h();
  const Mask& fixed = g.solid();
  for (Index c = 0; c < C; ++c) owner_[c] = fixed[c] ? -2 : -1;
  for (size_t k = 0; k < obstacles.size(); ++k) {
    const Obstacle2D& o = obstacles[k];
    const double R = o.shape->radius();
    const Index i0 = std::max<Index>(0, Index(std::floor((o.pose.x - R) / h - 0.5))),
                i1 = std::min<Index>(nx - 1, Index(std::ceil((o.pose.x + R) / h - 0.5))),
                j0 = std::max<Index>(0, Index(std::floor((o.pose.y - R) / h - 0.5))),
                j1 = std::min<Index>(ny - 1, Index(std::ceil((o.pose.y + R) / h - 0.5)));
    for (Index j = j0; j <= j1; ++j)
      for (Index i = i0; i <= i1; ++i)
        if (owner_[j * nx + i] == -1 && o.inside_world((double(i) + 0.5) * h, (double(j) + 0.5) * h))
          owner_[j * nx + i] = int(k);
  }
  for (Index c = 0; c < C; ++c) step_solid_[c] = owner_[c] != -1;
  if (step_solid_.all()) throw std::invalid_argument("obstacles cover every cell: no fluid left");
  for (Index f = 0; f < N; ++f) {
    Index a, b;
    g.face_cells(f, a, b);
    if (a < 0 || b < 0) {
      velocity_[f] = 0.0;
      continue;
    }
    if (!step_solid_[a] && !step_solid_[b]) continue;
    const int k = owner_[a] >= 0 ? owner_[a] : owner_[b];
    if (k < 0) {
      velocity_[f] = 0.0;
      continue;
    }
    const Eigen::Vector2d x = g.face_center(f);
    const Eigen::Vector2d v = rigid_velocity(obstacles[size_t(k)].pose, obstacles[size_t(k)].velocity, x[0], x[1]);
    velocity_[f] = f < g.n_xfaces() ? v[0] : v[1];
  }
  g.divergence(velocity_, rhs_);
  for (Index c = 0; c < C; ++c) rhs_[c] = step_solid_[c] ? 0.0 : -rhs_[c];
  assemble_pressure_matrix(g, step_solid_, pressure_matrix_);
  if (solver_ == PressureSolver::Direct) {
    moving_direct_.compute(pressure_matrix_);
    if (moving_direct_.info() != Eigen::Success) throw std::runtime_error("pressure factorisation failed");
    pressure_ = moving_direct_.solve(rhs_);
  } else {
    moving_pcg_.setTolerance(tolerance_);
    moving_pcg_.setMaxIterations(std::max<Index>(200, 4 * (nx + ny)));
    moving_pcg_.compute(pressure_matrix_);
    if (moving_pcg_.info() != Eigen::Success) throw std::runtime_error("incomplete Cholesky factorisation failed");
    pressure_ = moving_pcg_.solveWithGuess(rhs_, pressure_);
    pcg_iterations_ = moving_pcg_.iterations();
    pcg_residual_ = moving_pcg_.error();
    if (moving_pcg_.info() != Eigen::Success)
      throw std::runtime_error("pressure PCG did not converge: relative residual " + std::to_string(pcg_residual_) +
                               " after " + std::to_string(pcg_iterations_) + " iterations (tolerance " +
                               std::to_string(tolerance_) + ")");
  }
  subtract_pressure_gradient(g, step_solid_, pressure_, velocity_);
}

void FluidSim2D::advance_obstacles(const Eigen::Ref<const Eigen::VectorXd>& f, const std::vector<Obstacle2D>& obstacles) {
  const MACGrid2D& g = *grid_;
  if (f.size() != 0) velocity_ += dt_ * f;
  g.advect_velocity(velocity_, dt_, advected_);
  if (viscosity_ > 0.0)
    velocity_ = diffusion_solver_.solve(advected_);
  else
    velocity_.swap(advected_);
  project_obstacles(obstacles);
  g.advect_cells(velocity_, density_, dt_, advected_density_);
  density_.swap(advected_density_);
  for (Index c = 0; c < g.n_cells(); ++c)
    if (step_solid_[c]) density_[c] = 0.0;
  g.advect_particles(velocity_, particles_, dt_);
  // push particles out of the obstacles along the surface normal (a tenth of a cell beyond the surface)
  for (Index k = 0; k < particles_.rows(); ++k)
    for (const Obstacle2D& o : obstacles) {
      const Eigen::Vector2d l = o.pose.to_local(particles_(k, 0), particles_(k, 1));
      if (!o.shape->inside(l[0], l[1])) continue;
      Eigen::Vector2d q, n;
      o.shape->closest_boundary(l[0], l[1], q, n);
      q += 0.1 * g.h() * n;
      const Eigen::Vector2d w = o.pose.to_world(q[0], q[1]);
      double x = w[0], y = w[1];
      g.clamp(x, y);
      particles_(k, 0) = x, particles_(k, 1) = y;
    }
}

FluidRun FluidSim2D::run_obstacles(const Eigen::Ref<const RowMatrix>& forces,
                                   const std::vector<std::shared_ptr<const Shape2D>>& shapes,
                                   const Eigen::Ref<const RowMatrix>& poses, const Eigen::Ref<const RowMatrix>& velocities,
                                   bool record_density, const ProgressFn* progress) {
  const Index T = forces.rows(), N = grid_->n_faces(), K = Index(shapes.size());
  check_shape("forces", T, forces.cols(), T, N);
  check_finite("forces", forces.data(), forces.size());
  check_shape("poses", poses.rows(), poses.cols(), T, 3 * K);
  check_finite("poses", poses.data(), poses.size());
  check_shape("velocities", velocities.rows(), velocities.cols(), T, 3 * K);
  check_finite("velocities", velocities.data(), velocities.size());
  std::vector<Obstacle2D> obstacles;
  for (Index k = 0; k < K; ++k) {
    if (!shapes[size_t(k)]) throw std::invalid_argument("shapes[" + std::to_string(k) + "] must be a Shape2D, got None");
    obstacles.emplace_back(shapes[size_t(k)], poses.row(0).segment(3 * k, 3).transpose(),
                           velocities.row(0).segment(3 * k, 3).transpose());
  }
  for (Index t = 0; t < T; ++t)
    for (Index k = 0; k < K; ++k) {
      Obstacle2D o(shapes[size_t(k)], poses.row(t).segment(3 * k, 3).transpose(),
                   velocities.row(t).segment(3 * k, 3).transpose());
      o.check_in_domain(*grid_, "obstacle " + std::to_string(k) + " at step " + std::to_string(t));
    }
  return run_with(T, record_density, progress, [&](Index t, Eigen::VectorXd& f) {
    f = forces.row(t).transpose();
    for (Index k = 0; k < K; ++k) {
      obstacles[size_t(k)].pose = Pose2D(poses(t, 3 * k), poses(t, 3 * k + 1), poses(t, 3 * k + 2));
      obstacles[size_t(k)].velocity = velocities.row(t).segment(3 * k, 3).transpose();
    }
  }, &obstacles);
}

template <class ForceFn>
FluidRun FluidSim2D::run_with(Index T, bool record_density, const ProgressFn* progress, ForceFn force,
                              const std::vector<Obstacle2D>* obstacles) {
  const Index N = grid_->n_faces(), P = particles_.rows();
  FluidRun out;
  out.velocities.resize(T + 1, N);
  out.particles.resize(T + 1, 2 * P);
  if (record_density) out.density.resize(T + 1, grid_->n_cells());
  auto record = [&](Index t) {
    out.velocities.row(t) = velocity_.transpose();
    out.particles.row(t) = Eigen::Map<const Eigen::RowVectorXd>(particles_.data(), 2 * P);
    if (record_density) out.density.row(t) = density_.transpose();
  };
  record(0);
  Eigen::VectorXd f(N);
  ProgressThrottle throttle(progress, T);
  for (Index t = 0; t < T; ++t) {
    f.setZero();
    force(t, f);
    if (obstacles && !obstacles->empty())
      advance_obstacles(f, *obstacles);
    else
      advance(f);
    if (!velocity_.allFinite())
      throw std::domain_error("fluid run: the velocity became non-finite at step " + std::to_string(t) +
                              ": reduce dt or the forces");
    record(t + 1);
    if (!throttle.report(t + 1)) throw Cancelled();
  }
  throttle.finish(T);
  return out;
}

FluidRun FluidSim2D::run(const Eigen::Ref<const RowMatrix>& forces, bool record_density, const ProgressFn* progress) {
  const Index T = forces.rows(), N = grid_->n_faces();
  check_shape("forces", T, forces.cols(), T, N);
  check_finite("forces", forces.data(), forces.size());
  return run_with(T, record_density, progress, [&](Index t, Eigen::VectorXd& f) { f = forces.row(t).transpose(); });
}

FluidRun FluidSim2D::run_particle_winds(const Eigen::Ref<const RowMatrix>& directions,
                                        const Eigen::Ref<const Eigen::VectorXd>& magnitudes, double width,
                                        const ProgressFn* progress) {
  const Index T = directions.rows(), P = particles_.rows();
  check_shape("directions", T, directions.cols(), T, 2);
  check_finite("directions", directions.data(), directions.size());
  if (magnitudes.size() != P)
    throw_shape("magnitudes", "(" + std::to_string(P) + ",) (one per particle)",
                "(" + std::to_string(magnitudes.size()) + ",)");
  check_finite("magnitudes", magnitudes.data(), P);
  check_positive("width", width);
  const MACGrid2D& g = *grid_;
  // each wind into its own field first, then summed: the same rounding as
  // adding MACGrid2D.wind fields one by one (no fused multiply-add across winds)
  Eigen::VectorXd wind(g.n_faces());
  return run_with(T, false, progress, [&](Index t, Eigen::VectorXd& f) {
    for (Index k = 0; k < P; ++k) {
      wind.setZero();
      g.add_wind(wind, particles_(k, 0), particles_(k, 1), directions(t, 0), directions(t, 1), magnitudes[k], width);
      f += wind;
    }
  });
}

}  // namespace directable
