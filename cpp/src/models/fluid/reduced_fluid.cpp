#include "directable/models/fluid/reduced_fluid.hpp"

#include "directable/core/parallel.hpp"
#include "directable/core/progress.hpp"

#include <Eigen/Eigenvalues>
#include <cmath>
#include <string>

namespace directable {

void advection_apply(const MACGrid2D& g, const Eigen::Ref<const Eigen::VectorXd>& u,
                     const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::VectorXd> out) {
  const Index nx = g.nx(), ny = g.ny();
  const double ih = 1.0 / g.h();
  out.setZero();
  // flux F from face a to face b through their common boundary (velocity U
  // positive from a to b): q' = -div(u q) on each face's control volume.
  auto flux = [&](Index a, Index b, double U) {
    const double F = 0.5 * U * (q[a] + q[b]) * ih;
    out[a] -= F;
    out[b] += F;
  };
  // x-faces: boundaries at cell centres (x-direction), at nodes (y-direction).
  for (Index j = 0; j < ny; ++j)
    for (Index i = 0; i < nx; ++i)
      flux(g.xface(i, j), g.xface(i + 1, j), 0.5 * (u[g.xface(i, j)] + u[g.xface(i + 1, j)]));
  for (Index j = 0; j + 1 < ny; ++j)
    for (Index i = 1; i < nx; ++i)
      flux(g.xface(i, j), g.xface(i, j + 1), 0.5 * (u[g.yface(i - 1, j + 1)] + u[g.yface(i, j + 1)]));
  // y-faces: boundaries at cell centres (y-direction), at nodes (x-direction).
  for (Index j = 0; j < ny; ++j)
    for (Index i = 0; i < nx; ++i)
      flux(g.yface(i, j), g.yface(i, j + 1), 0.5 * (u[g.yface(i, j)] + u[g.yface(i, j + 1)]));
  for (Index j = 1; j < ny; ++j)
    for (Index i = 0; i + 1 < nx; ++i)
      flux(g.yface(i, j), g.yface(i + 1, j), 0.5 * (u[g.xface(i + 1, j - 1)] + u[g.xface(i + 1, j)]));
}

ReducedFluid::ReducedFluid(std::shared_ptr<const MACGrid2D> grid, const Eigen::Ref<const RowMatrix>& basis,
                           double viscosity, int threads, const ProgressFn* progress)
    : grid_(std::move(grid)), r_(basis.cols()), viscosity_(viscosity), basis_(basis) {
  if (!grid_) throw std::invalid_argument("grid must be a MACGrid2D, got None");
  const Index N = grid_->n_faces();
  if (basis.rows() != N || r_ < 1)
    throw_shape("basis", "(" + std::to_string(N) + ", r) with r >= 1 for a " + std::to_string(grid_->nx()) + "x" +
                             std::to_string(grid_->ny()) + " grid",
                shape_str(basis.rows(), basis.cols()));
  check_finite("basis", basis_.data(), basis_.size());
  if (!(viscosity >= 0.0) || !std::isfinite(viscosity))
    throw std::domain_error("viscosity must be finite and >= 0, got " + std::to_string(viscosity));
  divergence_error_ = grid_->max_divergence(basis_);
  const Eigen::MatrixXd B = basis_;  // column-major copy for the GEMMs
  orthonormality_error_ = (B.transpose() * B - Eigen::MatrixXd::Identity(r_, r_)).cwiseAbs().maxCoeff();
  diffusion_ = B.transpose() * (grid_->laplacian() * B);
  diffusion_ = 0.5 * (diffusion_ + diffusion_.transpose()).eval();
  if (viscosity_ > 0.0) {  // exp(dt nu Dhat) for any dt from one eigen-decomposition
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(diffusion_);
    diffusion_eigenvectors_ = es.eigenvectors();
    diffusion_eigenvalues_ = es.eigenvalues();
  }
  advection_.assign(r_, Eigen::MatrixXd::Zero(r_, r_));
  parallel_steps(r_, threads, progress, r_, [&] { return Eigen::MatrixXd(N, r_); },
                 [&](Index k, Eigen::MatrixXd& M) {
                   for (Index j = 0; j < r_; ++j) advection_apply(*grid_, B.col(k), B.col(j), M.col(j));
                   advection_[k].noalias() = B.transpose() * M;
                 });
}

void ReducedFluid::advection_matrix(const Eigen::Ref<const Eigen::VectorXd>& z, Eigen::Ref<Eigen::MatrixXd> A) const {
  A.setZero();
  for (Index k = 0; k < r_; ++k) A += z[k] * advection_[k];
}

void ReducedFluid::dynamics(const Eigen::Ref<const Eigen::VectorXd>& z, Eigen::Ref<Eigen::VectorXd> F) const {
  F.noalias() = viscosity_ * diffusion_ * z;
  for (Index k = 0; k < r_; ++k) F.noalias() += (z[k] * advection_[k]) * z;
}

void ReducedFluid::add_jacobian(const Eigen::Ref<const Eigen::VectorXd>& z, Eigen::Ref<RowMatrix> J) const {
  J += viscosity_ * diffusion_;
  for (Index k = 0; k < r_; ++k) {
    J += z[k] * advection_[k];
    J.col(k).noalias() += advection_[k] * z;
  }
}

void ReducedFluid::check_reduced(const char* name, const Eigen::Ref<const Eigen::VectorXd>& v) const {
  if (v.size() != r_) throw_shape(name, "(" + std::to_string(r_) + ",)", "(" + std::to_string(v.size()) + ",)");
  check_finite(name, v.data(), v.size());
}

void ReducedFluid::step(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const Eigen::VectorXd>& w,
                        double dt, Eigen::Ref<Eigen::VectorXd> z_next, ReducedFluidData& data) const {
  check_reduced("z", z);
  check_reduced("w", w);
  check_positive("dt", dt);
  advance(z, w, dt, z_next, data);
  if (!z_next.allFinite())
    throw std::domain_error("reduced step diverged (non-finite velocity) with dt = " + std::to_string(dt) +
                            ": reduce dt or |z|, |w|");
}

void ReducedFluid::advance(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const Eigen::VectorXd>& w,
                           double dt, Eigen::Ref<Eigen::VectorXd> z_next, ReducedFluidData& d) const {
  d.z_forced = z + dt * w;
  advection_matrix(d.z_forced, d.advection);
  d.advection *= dt;
  // Advection: exact exponential of the antisymmetric dt Ahat(zt). We use
  // the scaling-and-squaring Pade approximant of linalg/expm (Al-Mohy &
  // Higham degree choice) rather than the thesis' eigen-decomposition: a
  // diagonal Pade approximant of an antisymmetric matrix, q(X)^-1 p(X) with
  // q(X) = p(-X) = p(X)', is orthogonal in exact arithmetic, and so are its
  // squares, so |z| is kept to rounding (the energy test holds to 1e-10
  // over 1000 steps), while it costs a handful of r x r products and one
  // LU. Measured at r = 64 (benchmarks/expm_skew.cpp, run by
  // bench_fluid.py): Pade 140-210 us against 730-900 us for the complex
  // Hermitian eigen-decomposition of i Ahat that the thesis' method needs
  // (3.5-6x), and |E'E - I| 4e-15 against 3e-14.
  d.expm.compute(d.advection, d.no_border);
  d.z_advected.noalias() = d.expm.E() * d.z_forced;
  if (viscosity_ > 0.0) {
    if (d.diffusion_dt != dt) {  // exp(dt nu Dhat) = V exp(dt nu Lambda) V', once per dt
      d.diffusion_exp = diffusion_eigenvectors_ *
                        (dt * viscosity_ * diffusion_eigenvalues_).array().exp().matrix().asDiagonal() *
                        diffusion_eigenvectors_.transpose();
      d.diffusion_dt = dt;
    }
    z_next.noalias() = d.diffusion_exp * d.z_advected;
  } else {
    z_next = d.z_advected;
  }
}

RowMatrix ReducedFluid::rollout(const Eigen::Ref<const Eigen::VectorXd>& z0, const Eigen::Ref<const RowMatrix>& W,
                                double dt) const {
  check_reduced("z0", z0);
  check_shape("w", W.rows(), W.cols(), W.rows(), r_);
  check_finite("w", W.data(), W.size());
  check_positive("dt", dt);
  RowMatrix Z(W.rows() + 1, r_);
  Z.row(0) = z0.transpose();
  auto data = create_data();
  Eigen::VectorXd z(r_), z_next(r_), w(r_);
  z = z0;
  for (Index i = 0; i < W.rows(); ++i) {
    w = W.row(i).transpose();
    advance(z, w, dt, z_next, *data);
    Z.row(i + 1) = z_next.transpose();
    z.swap(z_next);
  }
  return Z;
}

void ReducedFluid::modes(double x, double y, Eigen::Ref<RowMatrix> Psi, RowMatrix* dx, RowMatrix* dy) const {
  Stencil4 s[2];
  grid_->x_stencil(x, y, s[0]);
  grid_->y_stencil(x, y, s[1]);
  Psi.setZero();
  if (dx) dx->setZero(2, r_);
  if (dy) dy->setZero(2, r_);
  for (int c = 0; c < 2; ++c)
    for (int a = 0; a < 4; ++a) {
      const auto row = basis_.row(s[c].idx[a]);
      Psi.row(c) += s[c].w[a] * row;
      if (dx) dx->row(c) += s[c].dx[a] * row;
      if (dy) dy->row(c) += s[c].dy[a] * row;
    }
}

Eigen::Vector2d ReducedFluid::velocity(double x, double y, const Eigen::Ref<const Eigen::VectorXd>& z) const {
  Stencil4 s[2];
  grid_->x_stencil(x, y, s[0]);
  grid_->y_stencil(x, y, s[1]);
  Eigen::Vector2d v(0.0, 0.0);
  for (int c = 0; c < 2; ++c)
    for (int a = 0; a < 4; ++a) v[c] += s[c].w[a] * basis_.row(s[c].idx[a]).dot(z);
  return v;
}

void ReducedFluid::velocities(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const RowMatrix>& points,
                              Eigen::Ref<RowMatrix> out) const {
  check_reduced("z", z);
  check_shape("points", points.rows(), points.cols(), points.rows(), 2);
  check_finite("points", points.data(), points.size());
  check_shape("out", out.rows(), out.cols(), points.rows(), 2);
  for (Index k = 0; k < points.rows(); ++k) out.row(k) = velocity(points(k, 0), points(k, 1), z).transpose();
}

FluidParticles::FluidParticles(std::shared_ptr<const ReducedFluid> fluid, Index particles)
    : fluid_(std::move(fluid)), particles_(particles) {
  if (!fluid_) throw std::invalid_argument("fluid must be a ReducedFluid, got None");
  if (particles_ < 0) throw std::invalid_argument("particles must be >= 0, got " + std::to_string(particles_));
  const Index r = fluid_->r();
  control_.setZero(2 * particles_ + r, r);
  control_.bottomRows(r).setIdentity();
}

void FluidParticles::dynamics(const Eigen::Ref<const Eigen::VectorXd>& x, double, Eigen::Ref<Eigen::VectorXd> F) const {
  const auto z = x.tail(fluid_->r());
  for (Index i = 0; i < particles_; ++i) F.segment<2>(2 * i) = fluid_->velocity(x[2 * i], x[2 * i + 1], z);
  fluid_->dynamics(z, F.tail(fluid_->r()));
}

void FluidParticles::jacobian(const Eigen::Ref<const Eigen::VectorXd>& x, double, Eigen::Ref<RowMatrix> J) const {
  const Index r = fluid_->r();
  const auto z = x.tail(r);
  J.setZero();
  RowMatrix Psi(2, r), dx(2, r), dy(2, r);
  for (Index i = 0; i < particles_; ++i) {
    fluid_->modes(x[2 * i], x[2 * i + 1], Psi, &dx, &dy);
    J.block(2 * i, 2 * particles_, 2, r) = Psi;
    J.block(2 * i, 2 * i, 2, 1) = dx * z;
    J.block(2 * i, 2 * i + 1, 2, 1) = dy * z;
  }
  fluid_->add_jacobian(z, J.bottomRightCorner(r, r));
}

namespace {
struct FluidParticlesData : ModelData {
  explicit FluidParticlesData(Index r) : fluid(r), zmid(r) {}
  ReducedFluidData fluid;
  Eigen::VectorXd zmid;
};
}  // namespace

std::unique_ptr<ModelData> FluidParticles::create_data() const {
  return std::make_unique<FluidParticlesData>(fluid_->r());
}

void FluidParticles::step(const Eigen::Ref<const Eigen::VectorXd>& x, double, double dt,
                          const Eigen::Ref<const Eigen::VectorXd>& w, Eigen::Ref<Eigen::VectorXd> x_next,
                          ModelData& data) const {
  auto& d = static_cast<FluidParticlesData&>(data);
  const Index r = fluid_->r();
  const auto z = x.tail(r);
  fluid_->advance(z, w, dt, x_next.tail(r), d.fluid);
  d.zmid = 0.5 * (z + x_next.tail(r));
  const MACGrid2D& g = fluid_->grid();
  for (Index i = 0; i < particles_; ++i) {
    double px = x[2 * i], py = x[2 * i + 1];
    g.clamp(px, py);
    const Eigen::Vector2d v1 = fluid_->velocity(px, py, z);
    double mx = px + 0.5 * dt * v1[0], my = py + 0.5 * dt * v1[1];
    g.clamp(mx, my);
    const Eigen::Vector2d v2 = fluid_->velocity(mx, my, d.zmid);
    px += dt * v2[0], py += dt * v2[1];
    g.clamp(px, py);
    x_next[2 * i] = px, x_next[2 * i + 1] = py;
  }
}

}  // namespace directable
