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
    : grid_(std::move(grid)), r_(basis.cols()), nu_(viscosity), B_(basis) {
  const Index N = grid_->n_faces();
  if (basis.rows() != N || r_ < 1)
    throw_shape("basis", "(" + std::to_string(N) + ", r) with r >= 1 for a " + std::to_string(grid_->nx()) + "x" +
                             std::to_string(grid_->ny()) + " grid",
                shape_str(basis.rows(), basis.cols()));
  check_finite("basis", B_.data(), B_.size());
  if (!(viscosity >= 0.0) || !std::isfinite(viscosity))
    throw std::domain_error("viscosity must be finite and >= 0, got " + std::to_string(viscosity));
  const Eigen::MatrixXd Bc = B_;  // column-major copy for the GEMMs
  orth_err_ = (Bc.transpose() * Bc - Eigen::MatrixXd::Identity(r_, r_)).cwiseAbs().maxCoeff();
  Dhat_ = Bc.transpose() * (grid_->laplacian() * Bc);
  Dhat_ = 0.5 * (Dhat_ + Dhat_.transpose()).eval();
  adv_.assign(r_, Eigen::MatrixXd::Zero(r_, r_));
  parallel_steps(r_, threads, progress, r_, [&] { return Eigen::MatrixXd(N, r_); },
                 [&](Index k, Eigen::MatrixXd& M) {
                   for (Index j = 0; j < r_; ++j) advection_apply(*grid_, Bc.col(k), Bc.col(j), M.col(j));
                   adv_[k].noalias() = Bc.transpose() * M;
                 });
}

void ReducedFluid::advection_matrix(const Eigen::Ref<const Eigen::VectorXd>& z, Eigen::Ref<Eigen::MatrixXd> A) const {
  A.setZero();
  for (Index k = 0; k < r_; ++k) A += z[k] * adv_[k];
}

void ReducedFluid::dynamics(const Eigen::Ref<const Eigen::VectorXd>& z, Eigen::Ref<Eigen::VectorXd> F) const {
  F.noalias() = nu_ * Dhat_ * z;
  for (Index k = 0; k < r_; ++k) F.noalias() += (z[k] * adv_[k]) * z;
}

void ReducedFluid::add_jacobian(const Eigen::Ref<const Eigen::VectorXd>& z, Eigen::Ref<RowMatrix> J) const {
  J += nu_ * Dhat_;
  for (Index k = 0; k < r_; ++k) {
    J += z[k] * adv_[k];
    J.col(k).noalias() += adv_[k] * z;
  }
}

void ReducedFluid::step(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const Eigen::VectorXd>& w,
                        double dt, Eigen::Ref<Eigen::VectorXd> z_next, ReducedFluidData& d) const {
  d.zt = z + dt * w;
  advection_matrix(d.zt, d.A);
  d.A *= dt;
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
  d.expm.compute(d.A, d.C);
  d.za.noalias() = d.expm.E() * d.zt;
  if (nu_ > 0.0) {
    if (d.diff_dt != dt) {  // exp(dt nu Dhat), symmetric: from its eigen-decomposition, once per dt
      Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(Dhat_);
      d.Ediff = es.eigenvectors() * (dt * nu_ * es.eigenvalues()).array().exp().matrix().asDiagonal() *
                es.eigenvectors().transpose();
      d.diff_dt = dt;
    }
    z_next.noalias() = d.Ediff * d.za;
  } else {
    z_next = d.za;
  }
}

void ReducedFluid::step(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const Eigen::VectorXd>& w,
                        double dt, Eigen::Ref<Eigen::VectorXd> z_next) const {
  if (!scratch_) scratch_ = create_data();
  step(z, w, dt, z_next, *scratch_);
}

RowMatrix ReducedFluid::rollout(const Eigen::Ref<const Eigen::VectorXd>& z0, const Eigen::Ref<const RowMatrix>& W,
                                double dt) const {
  check_shape("w", W.rows(), W.cols(), W.rows(), r_);
  RowMatrix Z(W.rows() + 1, r_);
  Z.row(0) = z0.transpose();
  auto d = create_data();
  Eigen::VectorXd a(r_), b(r_), w(r_);
  a = z0;
  for (Index i = 0; i < W.rows(); ++i) {
    w = W.row(i).transpose();
    step(a, w, dt, b, *d);
    Z.row(i + 1) = b.transpose();
    a.swap(b);
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
      const auto row = B_.row(s[c].idx[a]);
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
    for (int a = 0; a < 4; ++a) v[c] += s[c].w[a] * B_.row(s[c].idx[a]).dot(z);
  return v;
}

FluidParticles::FluidParticles(std::shared_ptr<const ReducedFluid> fluid, Index particles)
    : fluid_(std::move(fluid)), P_(particles) {
  if (P_ < 0) throw std::invalid_argument("particles must be >= 0, got " + std::to_string(P_));
  const Index r = fluid_->r();
  B_.setZero(2 * P_ + r, r);
  B_.bottomRows(r).setIdentity();
}

void FluidParticles::dynamics(const Eigen::Ref<const Eigen::VectorXd>& x, double, Eigen::Ref<Eigen::VectorXd> F) const {
  const auto z = x.tail(fluid_->r());
  for (Index i = 0; i < P_; ++i) F.segment<2>(2 * i) = fluid_->velocity(x[2 * i], x[2 * i + 1], z);
  fluid_->dynamics(z, F.tail(fluid_->r()));
}

void FluidParticles::jacobian(const Eigen::Ref<const Eigen::VectorXd>& x, double, Eigen::Ref<RowMatrix> J) const {
  const Index r = fluid_->r();
  const auto z = x.tail(r);
  J.setZero();
  RowMatrix Psi(2, r), dx(2, r), dy(2, r);
  for (Index i = 0; i < P_; ++i) {
    fluid_->modes(x[2 * i], x[2 * i + 1], Psi, &dx, &dy);
    J.block(2 * i, 2 * P_, 2, r) = Psi;
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
  auto d = std::make_unique<FluidParticlesData>(fluid_->r());
  return d;
}

void FluidParticles::step(const Eigen::Ref<const Eigen::VectorXd>& x, double, double dt,
                          const Eigen::Ref<const Eigen::VectorXd>& w, Eigen::Ref<Eigen::VectorXd> x_next,
                          ModelData& data) const {
  auto& d = static_cast<FluidParticlesData&>(data);
  const Index r = fluid_->r();
  const auto z = x.tail(r);
  fluid_->step(z, w, dt, x_next.tail(r), d.fluid);
  d.zmid = 0.5 * (z + x_next.tail(r));
  const MACGrid2D& g = fluid_->grid();
  for (Index i = 0; i < P_; ++i) {
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
