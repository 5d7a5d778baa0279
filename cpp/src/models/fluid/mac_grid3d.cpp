#include "directable/models/fluid/mac_grid3d.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "directable/core/allocation.hpp"
#include "directable/core/errors.hpp"
#include "directable/core/parallel.hpp"

namespace directable {

namespace {

using Trip = Eigen::Triplet<double>;

// Trilinear stencil on a lattice of (mi+1) x (mj+1) x (mk+1) nodes at
// fractional coordinates f (already clamped); g = d f / dx per axis.
template <class IndexFn>
void lattice_stencil(const double f[3], const Index m[3], double g[3], IndexFn idx, Stencil8& s) {
  Index lo[3], hi[3];
  double t[3];
  for (int a = 0; a < 3; ++a) {
    lo[a] = std::min<Index>(Index(std::floor(f[a])), std::max<Index>(m[a] - 1, 0));
    hi[a] = std::min(lo[a] + 1, m[a]);
    t[a] = m[a] > 0 ? f[a] - double(lo[a]) : 0.0;
    if (m[a] == 0) g[a] = 0.0;
  }
  for (int c = 0; c < 8; ++c) {
    const int bx = c & 1, by = (c >> 1) & 1, bz = (c >> 2) & 1;
    const double wx = bx ? t[0] : 1 - t[0], wy = by ? t[1] : 1 - t[1], wz = bz ? t[2] : 1 - t[2];
    const double sx = bx ? g[0] : -g[0], sy = by ? g[1] : -g[1], sz = bz ? g[2] : -g[2];
    s.idx[c] = idx(bx ? hi[0] : lo[0], by ? hi[1] : lo[1], bz ? hi[2] : lo[2]);
    s.w[c] = wx * wy * wz;
    s.dx[c] = sx * wy * wz, s.dy[c] = wx * sy * wz, s.dz[c] = wx * wy * sz;
  }
}

// Clamps f into [0, hi]; returns the derivative factor (0 when clamped).
double clamp_coord(double& f, double hi, double g) {
  if (f < 0.0) { f = 0.0; return 0.0; }
  if (f > hi) { f = hi; return 0.0; }
  return g;
}

double apply(const Stencil8& s, const Eigen::Ref<const Eigen::VectorXd>& u) {
  double v = 0.0;
  for (int c = 0; c < 8; ++c) v += s.w[c] * u[s.idx[c]];
  return v;
}

std::string dims(Index a) { return "(" + std::to_string(a) + ",)"; }

}  // namespace

PressureWorkspace3D::PressureWorkspace3D(Index cells) { resize(cells); }

void PressureWorkspace3D::resize(Index cells) {
  for (Eigen::VectorXd* v : {&rhs, &p, &r, &z, &s, &q, &precon}) v->setZero(cells);
  component.assign(std::size_t(cells), -1);
  flags.assign(std::size_t(cells), 0);
  queue.assign(std::size_t(cells), 0);
}

MACGrid3D::MACGrid3D(Index nx, Index ny, Index nz, double h, const CellMask& solid, Index direct_limit,
                     const std::vector<Index>& solid_shape)
    : nx_(nx), ny_(ny), nz_(nz), h_(h) {
  if (nx < 2 || ny < 2 || nz < 2)
    throw std::invalid_argument("grid size (nx, ny, nz) must be at least (2, 2, 2), got (" + std::to_string(nx) + ", " +
                                std::to_string(ny) + ", " + std::to_string(nz) + ")");
  // the pressure and diffusion operators scale with 1/h^2: it must be finite and nonzero
  if (!(h >= 1e-100 && h <= 1e100))
    throw std::domain_error("h must be finite and lie in [1e-100, 1e100] (operators scale with 1/h^2), got " +
                            std::to_string(h));
  // faces, the face Laplacian (7 entries of 12 bytes each) and the solver buffers: about 10 doubles per face
  check_allocation("a 3D MAC grid of (nx, ny, nz) = (" + std::to_string(nx) + ", " + std::to_string(ny) + ", " +
                       std::to_string(nz) + ") cells", 3.0 * 8.0 * 10.0 * double(nx) * double(ny) * double(nz));
  const bool shape_ok = solid_shape.empty() ? solid.size() == n_cells()
                                             : solid_shape == std::vector<Index>{nz, ny, nx};
  if (solid.size() != 0 && !shape_ok) {
    std::string got = "(";
    for (std::size_t d = 0; d < solid_shape.size(); ++d) got += (d ? ", " : "") + std::to_string(solid_shape[d]);
    if (solid_shape.empty()) got += std::to_string(solid.size()) + ",";
    throw_shape("solid", "(nz, ny, nx) = (" + std::to_string(nz) + ", " + std::to_string(ny) + ", " +
                             std::to_string(nx) + ")", got + ")");
  }
  solid_ = solid.size() ? solid : CellMask::Constant(n_cells(), false);
  if (solid_.all()) throw std::invalid_argument("solid must leave at least one fluid cell, got every cell solid");
  if (direct_limit < 0) direct_limit = kDefaultDirectLimit;
  direct_ = Index((!solid_).count()) <= direct_limit;
  if (direct_) factor_pressure();
  assemble_face_laplacian();
}

bool MACGrid3D::is_wall_face(Index f) const {
  Index c0, c1;
  int axis;
  face_cells(f, c0, c1, axis);
  return c0 < 0 || c1 < 0;
}

void MACGrid3D::face_cells(Index f, Index& c0, Index& c1, int& axis) const {
  Index i, j, k;
  if (f < n_xfaces()) {
    axis = 0, i = f % (nx_ + 1), j = (f / (nx_ + 1)) % ny_, k = f / ((nx_ + 1) * ny_);
    c0 = i > 0 ? cell(i - 1, j, k) : -1, c1 = i < nx_ ? cell(i, j, k) : -1;
  } else if (f < n_xfaces() + n_yfaces()) {
    const Index g = f - n_xfaces();
    axis = 1, i = g % nx_, j = (g / nx_) % (ny_ + 1), k = g / (nx_ * (ny_ + 1));
    c0 = j > 0 ? cell(i, j - 1, k) : -1, c1 = j < ny_ ? cell(i, j, k) : -1;
  } else {
    const Index g = f - n_xfaces() - n_yfaces();
    axis = 2, i = g % nx_, j = (g / nx_) % ny_, k = g / (nx_ * ny_);
    c0 = k > 0 ? cell(i, j, k - 1) : -1, c1 = k < nz_ ? cell(i, j, k) : -1;
  }
}

Eigen::Array<bool, Eigen::Dynamic, 1> MACGrid3D::closed_mask() const {
  Eigen::Array<bool, Eigen::Dynamic, 1> m(n_faces());
  for (Index f = 0; f < n_faces(); ++f) {
    Index c0, c1;
    int axis;
    face_cells(f, c0, c1, axis);
    m[f] = c0 < 0 || c1 < 0 || solid_[c0] || solid_[c1];
  }
  return m;
}

Eigen::Vector3d MACGrid3D::face_center(Index f) const {
  Index c0, c1;
  int axis;
  face_cells(f, c0, c1, axis);
  const Index c = c1 >= 0 ? c1 : c0;
  Eigen::Vector3d x = cell_center(c);
  x[axis] += c1 >= 0 ? -0.5 * h_ : 0.5 * h_;
  return x;
}

Eigen::Vector3d MACGrid3D::cell_center(Index c) const {
  const Index i = c % nx_, j = (c / nx_) % ny_, k = c / (nx_ * ny_);
  return {(double(i) + 0.5) * h_, (double(j) + 0.5) * h_, (double(k) + 0.5) * h_};
}

// Direct pressure: the fluid-cell Laplacian with one pinned cell per
// connected component (the compatible right-hand side leaves it at zero).
void MACGrid3D::factor_pressure() {
  const Index C = n_cells();
  fluid_index_.assign(std::size_t(C), -1);
  Index n = 0;
  for (Index c = 0; c < C; ++c)
    if (!solid_[c]) fluid_index_[std::size_t(c)] = n++;
  PressureWorkspace3D ws(C);
  ws.rhs.setZero();
  make_compatible(solid_, ws);
  std::vector<char> seen(std::size_t(ws.component_count.size()), 0);
  pinned_.clear();
  std::vector<Trip> t;
  t.reserve(std::size_t(7 * n));
  for (Index k = 0; k < nz_; ++k)
    for (Index j = 0; j < ny_; ++j)
      for (Index i = 0; i < nx_; ++i) {
        const Index c = cell(i, j, k);
        if (solid_[c]) continue;
        const Index a = fluid_index_[std::size_t(c)];
        auto link = [&](Index d) {
          if (solid_[d]) return;
          const Index b = fluid_index_[std::size_t(d)];
          t.emplace_back(a, a, 1.0), t.emplace_back(b, b, 1.0), t.emplace_back(a, b, -1.0), t.emplace_back(b, a, -1.0);
        };
        if (i + 1 < nx_) link(cell(i + 1, j, k));
        if (j + 1 < ny_) link(cell(i, j + 1, k));
        if (k + 1 < nz_) link(cell(i, j, k + 1));
        char& s = seen[std::size_t(ws.component[std::size_t(c)])];
        if (!s) s = 1, pinned_.push_back(a), t.emplace_back(a, a, 1.0);
      }
  Eigen::SparseMatrix<double> A(n, n);
  A.setFromTriplets(t.begin(), t.end());
  pressure_solver_.compute(A);
  if (pressure_solver_.info() != Eigen::Success) throw std::runtime_error("pressure factorisation failed");
}

// Face Laplacian: graph Laplacian among the open faces of each component;
// closed faces are zero Dirichlet neighbours, missing tangential neighbours
// (beyond a wall) zero-gradient.
void MACGrid3D::assemble_face_laplacian() {
  const double ih2 = 1.0 / (h_ * h_);
  const auto closed = closed_mask();
  std::vector<Trip> t;
  t.reserve(std::size_t(7 * n_faces()));
  auto link = [&](Index a, Index b) {
    if (b < 0) return;
    t.emplace_back(a, a, -ih2);
    if (!closed[b]) t.emplace_back(a, b, ih2);
  };
  for (Index k = 0; k < nz_; ++k)
    for (Index j = 0; j < ny_; ++j)
      for (Index i = 0; i <= nx_; ++i) {
        const Index a = xface(i, j, k);
        if (closed[a]) continue;
        link(a, xface(i - 1, j, k)), link(a, xface(i + 1, j, k));
        link(a, j > 0 ? xface(i, j - 1, k) : -1), link(a, j + 1 < ny_ ? xface(i, j + 1, k) : -1);
        link(a, k > 0 ? xface(i, j, k - 1) : -1), link(a, k + 1 < nz_ ? xface(i, j, k + 1) : -1);
      }
  for (Index k = 0; k < nz_; ++k)
    for (Index j = 0; j <= ny_; ++j)
      for (Index i = 0; i < nx_; ++i) {
        const Index a = yface(i, j, k);
        if (closed[a]) continue;
        link(a, yface(i, j - 1, k)), link(a, yface(i, j + 1, k));
        link(a, i > 0 ? yface(i - 1, j, k) : -1), link(a, i + 1 < nx_ ? yface(i + 1, j, k) : -1);
        link(a, k > 0 ? yface(i, j, k - 1) : -1), link(a, k + 1 < nz_ ? yface(i, j, k + 1) : -1);
      }
  for (Index k = 0; k <= nz_; ++k)
    for (Index j = 0; j < ny_; ++j)
      for (Index i = 0; i < nx_; ++i) {
        const Index a = zface(i, j, k);
        if (closed[a]) continue;
        link(a, zface(i, j, k - 1)), link(a, zface(i, j, k + 1));
        link(a, i > 0 ? zface(i - 1, j, k) : -1), link(a, i + 1 < nx_ ? zface(i + 1, j, k) : -1);
        link(a, j > 0 ? zface(i, j - 1, k) : -1), link(a, j + 1 < ny_ ? zface(i, j + 1, k) : -1);
      }
  laplacian_.resize(n_faces(), n_faces());
  laplacian_.setFromTriplets(t.begin(), t.end());
}

void MACGrid3D::divergence(const Eigen::Ref<const Eigen::VectorXd>& u, Eigen::Ref<Eigen::VectorXd> div) const {
  const double ih = 1.0 / h_;
  for (Index k = 0; k < nz_; ++k)
    for (Index j = 0; j < ny_; ++j)
      for (Index i = 0; i < nx_; ++i)
        div[cell(i, j, k)] = (u[xface(i + 1, j, k)] - u[xface(i, j, k)] + u[yface(i, j + 1, k)] - u[yface(i, j, k)] +
                              u[zface(i, j, k + 1)] - u[zface(i, j, k)]) *
                             ih;
}

double MACGrid3D::max_divergence(const Eigen::Ref<const RowMatrix>& U) const {
  check_shape("basis", U.rows(), U.cols(), n_faces(), U.cols());
  for (Index k = 0; k < U.rows(); ++k) check_finite("basis", U.row(k).data(), U.cols(), k * U.cols());
  const auto closed = closed_mask();
  Eigen::VectorXd col(n_faces()), div(n_cells());
  double m = 0.0;
  for (Index k = 0; k < U.cols(); ++k) {
    col = U.col(k);
    divergence(col, div);
    for (Index c = 0; c < n_cells(); ++c)
      if (!solid_[c]) m = std::max(m, std::abs(div[c]) * h_);
    for (Index f = 0; f < n_faces(); ++f)
      if (closed[f]) m = std::max(m, std::abs(col[f]));
  }
  return m;
}

void MACGrid3D::make_compatible(const CellMask& solid, PressureWorkspace3D& ws) const {
  const Index C = n_cells();
  std::fill(ws.component.begin(), ws.component.end(), Index(-1));
  Index n_comp = 0;
  for (Index seed = 0; seed < C; ++seed) {
    if (solid[seed] || ws.component[std::size_t(seed)] >= 0) continue;
    Index head = 0, tail = 0;
    ws.queue[std::size_t(tail++)] = seed;
    ws.component[std::size_t(seed)] = n_comp;
    while (head < tail) {
      const Index c = ws.queue[std::size_t(head++)];
      const Index i = c % nx_, j = (c / nx_) % ny_, k = c / (nx_ * ny_);
      const Index nb[6] = {i > 0 ? c - 1 : -1,         i + 1 < nx_ ? c + 1 : -1,
                           j > 0 ? c - nx_ : -1,       j + 1 < ny_ ? c + nx_ : -1,
                           k > 0 ? c - nx_ * ny_ : -1, k + 1 < nz_ ? c + nx_ * ny_ : -1};
      for (Index d : nb)
        if (d >= 0 && !solid[d] && ws.component[std::size_t(d)] < 0) {
          ws.component[std::size_t(d)] = n_comp;
          ws.queue[std::size_t(tail++)] = d;
        }
    }
    ++n_comp;
  }
  ws.component_sum.setZero(n_comp);
  ws.component_count.setZero(n_comp);
  for (Index c = 0; c < C; ++c) {
    const Index m = ws.component[std::size_t(c)];
    if (m < 0) continue;
    ws.component_sum[m] += ws.rhs[c];
    ws.component_count[m] += 1.0;
  }
  ws.component_sum.array() /= ws.component_count.array();
  for (Index c = 0; c < C; ++c) {
    const Index m = ws.component[std::size_t(c)];
    ws.rhs[c] = m < 0 ? 0.0 : ws.rhs[c] - ws.component_sum[m];
  }
}

// MIC(0)-preconditioned CG on the fluid cells (Bridson, ch. 5): A is the
// graph Laplacian of the fluid cells (diagonal = fluid neighbours, -1 to
// each). The neighbour pattern is packed once per solve into one byte per
// cell (bit a: the +a neighbour is fluid, bit 3 + a: the -a neighbour, bit
// 6: the cell itself), so the sweeps do no index arithmetic.
void MACGrid3D::solve_pcg(const CellMask& solid, PressureWorkspace3D& ws, double tol, bool warm,
                          const ProgressFn* progress) const {
  const Index C = n_cells();
  const Index stride[3] = {1, nx_, nx_ * ny_};
  constexpr double tau = 0.97, sigma = 0.25;
  constexpr unsigned char kFluid = 64;
  auto& fl = ws.flags;
  for (Index k = 0, c = 0; k < nz_; ++k)
    for (Index j = 0; j < ny_; ++j)
      for (Index i = 0; i < nx_; ++i, ++c) {
        unsigned char f = 0;
        if (!solid[c]) {
          f = kFluid;
          if (i + 1 < nx_ && !solid[c + 1]) f |= 1;
          if (j + 1 < ny_ && !solid[c + stride[1]]) f |= 2;
          if (k + 1 < nz_ && !solid[c + stride[2]]) f |= 4;
          if (i > 0 && !solid[c - 1]) f |= 8;
          if (j > 0 && !solid[c - stride[1]]) f |= 16;
          if (k > 0 && !solid[c - stride[2]]) f |= 32;
        }
        fl[std::size_t(c)] = f;
      }
  auto count = [](unsigned char f) {
    int n = 0;
    for (int b = 0; b < 6; ++b) n += (f >> b) & 1;
    return double(n);
  };
  double* precon = ws.precon.data();
  for (Index c = 0; c < C; ++c) {
    const unsigned char f = fl[std::size_t(c)];
    if (!(f & kFluid)) { precon[c] = 0.0; continue; }
    const double d = count(f);
    double e = d;
    for (int a = 0; a < 3; ++a) {
      if (!(f & (8 << a))) continue;
      const Index n = c - stride[a];
      const unsigned char g = fl[std::size_t(n)];
      const unsigned m = (g & 7u) & ~(1u << a);  // the neighbour's other upper couplings
      const double others = double((m & 1u) + ((m >> 1) & 1u) + ((m >> 2) & 1u));
      const double pn = precon[n];
      e -= pn * pn * (1.0 + tau * others);
    }
    if (e < sigma * d) e = d;
    precon[c] = d > 0.0 ? 1.0 / std::sqrt(e) : 0.0;
  }
  auto apply_A = [&](const Eigen::VectorXd& xv, Eigen::VectorXd& yv) {
    const double* x = xv.data();
    double* y = yv.data();
    for (Index c = 0; c < C; ++c) {
      const unsigned char f = fl[std::size_t(c)];
      double v = 0.0;
      if (f & 1) v += x[c] - x[c + 1];
      if (f & 2) v += x[c] - x[c + stride[1]];
      if (f & 4) v += x[c] - x[c + stride[2]];
      if (f & 8) v += x[c] - x[c - 1];
      if (f & 16) v += x[c] - x[c - stride[1]];
      if (f & 32) v += x[c] - x[c - stride[2]];
      y[c] = v;
    }
  };
  auto apply_M = [&](const Eigen::VectorXd& rv, Eigen::VectorXd& zv) {
    const double* r = rv.data();
    double* q = ws.q.data();  // forward substitution L q = r
    double* z = zv.data();
    for (Index c = 0; c < C; ++c) {
      const unsigned char f = fl[std::size_t(c)];
      double t = r[c];
      if (f & 8) t += precon[c - 1] * q[c - 1];
      if (f & 16) t += precon[c - stride[1]] * q[c - stride[1]];
      if (f & 32) t += precon[c - stride[2]] * q[c - stride[2]];
      q[c] = t * precon[c];
    }
    for (Index c = C - 1; c >= 0; --c) {  // back substitution L' z = q
      const unsigned char f = fl[std::size_t(c)];
      double t = 0.0;
      if (f & 1) t += z[c + 1];
      if (f & 2) t += z[c + stride[1]];
      if (f & 4) t += z[c + stride[2]];
      z[c] = (q[c] + precon[c] * t) * precon[c];
    }
  };
  const double bnorm = ws.rhs.cwiseAbs().maxCoeff();
  ws.iterations = 0;
  ws.residual = 0.0;
  if (bnorm == 0.0 || !warm) {
    ws.p.setZero();
    ws.r = ws.rhs;
    if (bnorm == 0.0) return;
  } else {  // the last solve's pressure as the initial guess: r = b - A p0 (zero on solid cells)
    for (Index c = 0; c < C; ++c)
      if (!(fl[std::size_t(c)] & kFluid)) ws.p[c] = 0.0;
    apply_A(ws.p, ws.r);
    ws.r = ws.rhs - ws.r;
    ws.residual = ws.r.cwiseAbs().maxCoeff() / bnorm;
    if (ws.residual <= tol) return;
  }
  apply_M(ws.r, ws.z);
  ws.s = ws.z;
  double rho = ws.z.dot(ws.r);
  const Index max_iter = std::max<Index>(200, 4 * (nx_ + ny_ + nz_));
  Eigen::VectorXd& As = ws.z;  // z is free until the next preconditioning
  ProgressThrottle throttle(progress, max_iter);
  for (Index it = 1; it <= max_iter; ++it) {
    if (!throttle.report(it)) throttle.finish(it);  // throws Cancelled
    apply_A(ws.s, As);
    const double alpha = rho / ws.s.dot(As);
    ws.p.noalias() += alpha * ws.s;
    ws.r.noalias() -= alpha * As;
    ws.iterations = it;
    ws.residual = ws.r.cwiseAbs().maxCoeff() / bnorm;
    if (ws.residual <= tol) return;
    apply_M(ws.r, ws.z);
    const double rho_new = ws.z.dot(ws.r);
    ws.s = ws.z + (rho_new / rho) * ws.s;
    rho = rho_new;
  }
  throw std::domain_error("pressure PCG did not converge: relative residual " + std::to_string(ws.residual) +
                          " > tol " + std::to_string(tol) + " after " + std::to_string(max_iter) +
                          " iterations; raise tol or check the solid cells");
}

void MACGrid3D::project(Eigen::Ref<Eigen::VectorXd> u, PressureWorkspace3D& ws, double tol,
                        const ProgressFn* progress) const {
  for (Index f = 0; f < n_faces(); ++f) {
    Index c0, c1;
    int axis;
    face_cells(f, c0, c1, axis);
    if (c0 >= 0 && c1 >= 0 && (solid_[c0] || solid_[c1])) u[f] = 0.0;
  }
  project_with(u, solid_, ws, tol, true, progress);
}

void MACGrid3D::project_with(Eigen::Ref<Eigen::VectorXd> u, const CellMask& solid, PressureWorkspace3D& ws, double tol,
                             bool fixed_mask, const ProgressFn* progress, bool warm_start) const {
  check_positive("tol", tol);
  if (ws.p.size() != n_cells()) ws.resize(n_cells());
  // walls are closed
  for (Index k = 0; k < nz_; ++k)
    for (Index j = 0; j < ny_; ++j) u[xface(0, j, k)] = 0.0, u[xface(nx_, j, k)] = 0.0;
  for (Index k = 0; k < nz_; ++k)
    for (Index i = 0; i < nx_; ++i) u[yface(i, 0, k)] = 0.0, u[yface(i, ny_, k)] = 0.0;
  for (Index j = 0; j < ny_; ++j)
    for (Index i = 0; i < nx_; ++i) u[zface(i, j, 0)] = 0.0, u[zface(i, j, nz_)] = 0.0;
  // A psi = -(net outflux) over fluid cells, then u -= grad psi (psi = p dt / (rho h))
  divergence(u, ws.rhs);
  ws.rhs *= -h_;
  make_compatible(solid, ws);
  if (fixed_mask && direct_) {
    Eigen::VectorXd b(pressure_solver_.rows());
    for (Index c = 0; c < n_cells(); ++c)
      if (!solid[c]) b[fluid_index_[std::size_t(c)]] = ws.rhs[c];
    b = pressure_solver_.solve(b);
    for (Index c = 0; c < n_cells(); ++c) ws.p[c] = solid[c] ? 0.0 : b[fluid_index_[std::size_t(c)]];
    ws.iterations = 0;
    ws.residual = 0.0;
  } else {
    solve_pcg(solid, ws, tol, warm_start && ws.p.allFinite(), progress);
  }
  for (Index f = 0; f < n_faces(); ++f) {
    Index c0, c1;
    int axis;
    face_cells(f, c0, c1, axis);
    if (c0 < 0 || c1 < 0 || solid[c0] || solid[c1]) continue;
    u[f] -= ws.p[c1] - ws.p[c0];
  }
}

void MACGrid3D::project_rows(Eigen::Ref<RowMatrix> fields, double tol) const {
  if (fields.cols() != n_faces())
    throw_shape("u", "(k, " + std::to_string(n_faces()) + ")", shape_str(fields.rows(), fields.cols()));
  check_finite("u", fields.data(), fields.size());
  PressureWorkspace3D ws(n_cells());
  Eigen::VectorXd u(n_faces());
  for (Index k = 0; k < fields.rows(); ++k) {
    u = fields.row(k).transpose();
    project(u, ws, tol);
    fields.row(k) = u.transpose();
  }
}

void MACGrid3D::cell_order(const Eigen::Ref<const RowMatrix>& points, std::vector<std::pair<Index, Index>>& order) const {
  order.resize(std::size_t(points.rows()));
  const double ih = 1.0 / h_;
  for (Index k = 0; k < points.rows(); ++k) {
    const Index i = std::clamp<Index>(Index(points(k, 0) * ih), 0, nx_ - 1),
                j = std::clamp<Index>(Index(points(k, 1) * ih), 0, ny_ - 1),
                c = std::clamp<Index>(Index(points(k, 2) * ih), 0, nz_ - 1);
    order[std::size_t(k)] = {cell(i, j, c), k};
  }
  std::sort(order.begin(), order.end());
}

void MACGrid3D::clamp(Eigen::Vector3d& p) const {
  p[0] = std::clamp(p[0], 0.0, width());
  p[1] = std::clamp(p[1], 0.0, height());
  p[2] = std::clamp(p[2], 0.0, depth());
}

void MACGrid3D::x_stencil(double x, double y, double z, Stencil8& s) const {
  double f[3] = {x / h_, y / h_ - 0.5, z / h_ - 0.5}, g[3];
  const Index m[3] = {nx_, ny_ - 1, nz_ - 1};
  for (int a = 0; a < 3; ++a) g[a] = clamp_coord(f[a], double(m[a]), 1.0 / h_);
  lattice_stencil(f, m, g, [this](Index i, Index j, Index k) { return xface(i, j, k); }, s);
}

void MACGrid3D::y_stencil(double x, double y, double z, Stencil8& s) const {
  double f[3] = {x / h_ - 0.5, y / h_, z / h_ - 0.5}, g[3];
  const Index m[3] = {nx_ - 1, ny_, nz_ - 1};
  for (int a = 0; a < 3; ++a) g[a] = clamp_coord(f[a], double(m[a]), 1.0 / h_);
  lattice_stencil(f, m, g, [this](Index i, Index j, Index k) { return yface(i, j, k); }, s);
}

void MACGrid3D::z_stencil(double x, double y, double z, Stencil8& s) const {
  double f[3] = {x / h_ - 0.5, y / h_ - 0.5, z / h_}, g[3];
  const Index m[3] = {nx_ - 1, ny_ - 1, nz_};
  for (int a = 0; a < 3; ++a) g[a] = clamp_coord(f[a], double(m[a]), 1.0 / h_);
  lattice_stencil(f, m, g, [this](Index i, Index j, Index k) { return zface(i, j, k); }, s);
}

void MACGrid3D::cell_stencil(double x, double y, double z, Stencil8& s) const {
  double f[3] = {x / h_ - 0.5, y / h_ - 0.5, z / h_ - 0.5}, g[3];
  const Index m[3] = {nx_ - 1, ny_ - 1, nz_ - 1};
  for (int a = 0; a < 3; ++a) g[a] = clamp_coord(f[a], double(m[a]), 1.0 / h_);
  lattice_stencil(f, m, g, [this](Index i, Index j, Index k) { return cell(i, j, k); }, s);
}

void MACGrid3D::weights(int axis, const Eigen::Vector3d& p, Stencil8& s) const {
  // component a's lattice: nodes at i h along a (0..n_a), (j + 1/2) h across; cells: (i + 1/2) h along all
  const Index n[3] = {nx_, ny_, nz_};
  Index lo[3], m[3];
  double t[3];
  for (int a = 0; a < 3; ++a) {
    const bool on_nodes = a == axis;
    m[a] = on_nodes ? n[a] : n[a] - 1;
    const double f = std::clamp(p[a] / h_ - (on_nodes ? 0.0 : 0.5), 0.0, double(m[a]));
    lo[a] = std::min<Index>(Index(f), std::max<Index>(m[a] - 1, 0));
    t[a] = m[a] > 0 ? f - double(lo[a]) : 0.0;
  }
  const Index sx = 1, sy = axis == 0 ? nx_ + 1 : nx_, sz = sy * (axis == 1 ? ny_ + 1 : ny_);
  const Index base = (axis == 0 ? 0 : axis == 1 ? n_xfaces() : axis == 2 ? n_xfaces() + n_yfaces() : 0) +
                     lo[0] * sx + lo[1] * sy + lo[2] * sz;
  const Index step[3] = {lo[0] < m[0] ? sx : 0, lo[1] < m[1] ? sy : 0, lo[2] < m[2] ? sz : 0};
  for (int c = 0; c < 8; ++c) {
    const int bx = c & 1, by = (c >> 1) & 1, bz = (c >> 2) & 1;
    s.idx[c] = base + bx * step[0] + by * step[1] + bz * step[2];
    s.w[c] = (bx ? t[0] : 1 - t[0]) * (by ? t[1] : 1 - t[1]) * (bz ? t[2] : 1 - t[2]);
  }
}

Eigen::Vector3d MACGrid3D::velocity_at(const Eigen::Ref<const Eigen::VectorXd>& u, const Eigen::Vector3d& p) const {
  Stencil8 s;
  Eigen::Vector3d v;
  for (int a = 0; a < 3; ++a) {
    weights(a, p, s);
    v[a] = apply(s, u);
  }
  return v;
}

void MACGrid3D::check_field(const char* name, const Eigen::Ref<const Eigen::VectorXd>& u) const {
  if (u.size() != n_faces()) throw_shape(name, dims(n_faces()), dims(u.size()));
  check_finite(name, u.data(), u.size());
}

void MACGrid3D::check_cells(const char* name, const Eigen::Ref<const Eigen::VectorXd>& q) const {
  if (q.size() != n_cells()) throw_shape(name, dims(n_cells()), dims(q.size()));
  check_finite(name, q.data(), q.size());
}

void MACGrid3D::velocities_at(const Eigen::Ref<const Eigen::VectorXd>& u, const Eigen::Ref<const RowMatrix>& points,
                              Eigen::Ref<RowMatrix> out) const {
  check_field("u", u);
  check_shape("points", points.rows(), points.cols(), points.rows(), 3);
  check_finite("points", points.data(), points.size());
  check_shape("out", out.rows(), out.cols(), points.rows(), 3);
  for (Index k = 0; k < points.rows(); ++k) {
    Eigen::Vector3d p = points.row(k).transpose();
    clamp(p);
    out.row(k) = velocity_at(u, p).transpose();
  }
}

void MACGrid3D::advect_velocity(const Eigen::Ref<const Eigen::VectorXd>& u, double dt, Eigen::Ref<Eigen::VectorXd> out,
                                const ProgressFn* progress) const {
  check_finite("dt", &dt, 1);
  // one task per (axis, k) slab of faces: the slabs write disjoint faces
  const Index slabs[3] = {nz_, nz_, nz_ + 1};
  parallel_steps(slabs[0] + slabs[1] + slabs[2], 0, progress, slabs[0] + slabs[1] + slabs[2], [] { return Stencil8(); },
                 [&](Index task, Stencil8& s) {
                   const int axis = task < slabs[0] ? 0 : task < slabs[0] + slabs[1] ? 1 : 2;
                   const Index k = task - (axis > 0 ? slabs[0] : 0) - (axis > 1 ? slabs[1] : 0);
                   const Index mi = nx_ + (axis == 0), mj = ny_ + (axis == 1);
                   for (Index j = 0; j < mj; ++j)
                     for (Index i = 0; i < mi; ++i) {
                       const Index f = axis == 0 ? xface(i, j, k) : axis == 1 ? yface(i, j, k) : zface(i, j, k);
                       const Index along = axis == 0 ? i : axis == 1 ? j : k, n = axis == 0 ? nx_ : axis == 1 ? ny_ : nz_;
                       if (along == 0 || along == n) { out[f] = 0.0; continue; }
                       Eigen::Vector3d x((double(i) + 0.5) * h_, (double(j) + 0.5) * h_, (double(k) + 0.5) * h_);
                       x[axis] -= 0.5 * h_;
                       Eigen::Vector3d m = x - 0.5 * dt * velocity_at(u, x);
                       clamp(m);
                       Eigen::Vector3d b = x - dt * velocity_at(u, m);
                       clamp(b);
                       weights(axis, b, s);
                       out[f] = apply(s, u);
                     }
                 });
}

void MACGrid3D::advect_cells(const Eigen::Ref<const Eigen::VectorXd>& u, const Eigen::Ref<const Eigen::VectorXd>& q,
                             double dt, const Eigen::Vector3d& drift, Eigen::Ref<Eigen::VectorXd> out) const {
  check_finite("dt", &dt, 1);
  check_finite("drift", drift.data(), 3);
  parallel_steps(nz_, 0, nullptr, nz_, [] { return Stencil8(); }, [&](Index k, Stencil8& s) {
    for (Index c = k * nx_ * ny_; c < (k + 1) * nx_ * ny_; ++c) {
      const Eigen::Vector3d x = cell_center(c);
      Eigen::Vector3d m = x - 0.5 * dt * (velocity_at(u, x) + drift);
      clamp(m);
      Eigen::Vector3d b = x - dt * (velocity_at(u, m) + drift);
      clamp(b);
      weights(3, b, s);
      out[c] = apply(s, q);
    }
  });
}

void MACGrid3D::advect_particles(const Eigen::Ref<const Eigen::VectorXd>& u, Eigen::Ref<RowMatrix> p, double dt,
                                 const Eigen::Vector3d& drift) const {
  check_finite("dt", &dt, 1);
  check_finite("drift", drift.data(), 3);
  for (Index k = 0; k < p.rows(); ++k) {
    Eigen::Vector3d x = p.row(k).transpose();
    clamp(x);
    Eigen::Vector3d m = x + 0.5 * dt * (velocity_at(u, x) + drift);
    clamp(m);
    x += dt * (velocity_at(u, m) + drift);
    clamp(x);
    p.row(k) = x.transpose();
  }
}

void MACGrid3D::add_wind(Eigen::Ref<Eigen::VectorXd> f, const Eigen::Vector3d& center,
                         const Eigen::Vector3d& direction, double magnitude, double width) const {
  check_positive("width", width);
  if (!std::isfinite(magnitude)) throw std::domain_error("magnitude must be finite, got " + std::to_string(magnitude));
  if (!center.allFinite()) throw std::domain_error("center must be finite");
  if (!direction.allFinite()) throw std::domain_error("direction must be finite");
  if (f.size() != n_faces()) throw_shape("f", dims(n_faces()), dims(f.size()));
  const double iw2 = 1.0 / (width * width);
  for (Index face = 0; face < n_faces(); ++face) {
    Index c0, c1;
    int axis;
    face_cells(face, c0, c1, axis);
    if (c0 < 0 || c1 < 0 || solid_[c0] || solid_[c1] || direction[axis] == 0.0) continue;
    const Eigen::Vector3d x = face_center(face);
    f[face] += direction[axis] * magnitude * std::exp(-(x - center).squaredNorm() * iw2);
  }
}

}  // namespace directable
