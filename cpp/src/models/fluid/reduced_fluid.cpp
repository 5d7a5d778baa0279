#include "directable/models/fluid/reduced_fluid.hpp"

#include "directable/models/fluid/reduced_scene.hpp"

#include "directable/core/allocation.hpp"
#include "directable/core/errors.hpp"
#include "directable/core/parallel.hpp"
#include "directable/core/progress.hpp"

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
    : GalerkinFluid(basis, grid ? grid->n_faces() : 0,
                    grid ? std::to_string(grid->nx()) + "x" + std::to_string(grid->ny()) : std::string("None"), viscosity),
      grid_(std::move(grid)) {
  if (!grid_) throw std::invalid_argument("grid must be a MACGrid2D, got None");
  const MACGrid2D& g = *grid_;
  project_operators(
      g.laplacian(),
      [&g](const Eigen::Ref<const Eigen::VectorXd>& u, const Eigen::Ref<const Eigen::VectorXd>& q,
           Eigen::Ref<Eigen::VectorXd> out) { advection_apply(g, u, q, out); },
      g.max_divergence(basis_), threads, progress);
}

void ReducedFluid::modes(double x, double y, Eigen::Ref<RowMatrix> Psi, RowMatrix* dx, RowMatrix* dy) const {
  const double point[2] = {x, y};
  check_finite("x", point, 2);  // a NaN point would index the stencil through an undefined cast
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
  // the control map, (2 particles + r) x r
  check_allocation("particles = " + std::to_string(particles_) + " (the control map)",
                   8.0 * (2.0 * double(particles_) + double(r)) * double(r));
  control_.setZero(2 * particles_ + r, r);
  control_.bottomRows(r).setIdentity();
}

namespace {
std::shared_ptr<const ReducedFluid> scene_fluid(const std::shared_ptr<const SceneAtPoses>& scene) {
  if (!scene) throw std::invalid_argument("scene must be a ReducedScene, got None");
  return scene->scene().reduced_ptr();
}
}  // namespace

FluidParticles::FluidParticles(std::shared_ptr<const SceneAtPoses> scene, Index particles)
    : FluidParticles(scene_fluid(scene), particles) {
  scene_ = std::move(scene);
}

Eigen::Vector2d FluidParticles::particle_velocity(double x, double y, const Eigen::Ref<const Eigen::VectorXd>& z) const {
  Eigen::Vector2d v = fluid_->velocity(x, y, z);
  if (scene_) scene_->add_terms(x, y, z, v, nullptr, nullptr);
  return v;
}

void FluidParticles::dynamics(const Eigen::Ref<const Eigen::VectorXd>& x, double, Eigen::Ref<Eigen::VectorXd> F) const {
  const auto z = x.tail(fluid_->r());
  for (Index i = 0; i < particles_; ++i) F.segment<2>(2 * i) = particle_velocity(x[2 * i], x[2 * i + 1], z);
  fluid_->dynamics(z, F.tail(fluid_->r()));
}

void FluidParticles::jacobian(const Eigen::Ref<const Eigen::VectorXd>& x, double, Eigen::Ref<RowMatrix> J) const {
  const Index r = fluid_->r();
  const auto z = x.tail(r);
  J.setZero();
  RowMatrix Psi(2, r), dx(2, r), dy(2, r);
  for (Index i = 0; i < particles_; ++i) {
    fluid_->modes(x[2 * i], x[2 * i + 1], Psi, &dx, &dy);
    Eigen::Matrix2d dp;
    dp.col(0) = dx * z, dp.col(1) = dy * z;
    if (scene_) {
      Eigen::Vector2d v(0, 0);
      scene_->add_terms(x[2 * i], x[2 * i + 1], z, v, &Psi, &dp);
    }
    J.block(2 * i, 2 * particles_, 2, r) = Psi;
    J.block(2 * i, 2 * i, 2, 2) = dp;
  }
  fluid_->add_jacobian(z, J.bottomRightCorner(r, r));
}

namespace {
struct FluidParticlesData : ModelData {
  explicit FluidParticlesData(Index r) : fluid(r), zmid(r) {}
  ReducedFluidData fluid;
  Eigen::VectorXd zmid;
  std::unique_ptr<ReducedSceneData> scene;  //!< with a scene
  RowMatrix coeffs;                         //!< K x max_m, with a scene
};
}  // namespace

std::unique_ptr<ModelData> FluidParticles::create_data() const {
  auto d = std::make_unique<FluidParticlesData>(fluid_->r());
  if (scene_) {
    d->scene = scene_->scene().create_data();
    d->coeffs.resize(scene_->scene().objects(), scene_->scene().max_m());
  }
  return d;
}

void FluidParticles::step(const Eigen::Ref<const Eigen::VectorXd>& x, double, double dt,
                          const Eigen::Ref<const Eigen::VectorXd>& w, Eigen::Ref<Eigen::VectorXd> x_next,
                          ModelData& data) const {
  auto& d = static_cast<FluidParticlesData&>(data);
  const Index r = fluid_->r();
  const auto z = x.tail(r);
  if (scene_)
    scene_->scene().step(z, w, dt, scene_->poses(), scene_->velocities(), x_next.tail(r), d.coeffs, *d.scene);
  else
    fluid_->advance(z, w, dt, x_next.tail(r), d.fluid);
  d.zmid = 0.5 * (z + x_next.tail(r));
  const MACGrid2D& g = fluid_->grid();
  for (Index i = 0; i < particles_; ++i) {
    double px = x[2 * i], py = x[2 * i + 1];
    g.clamp(px, py);
    const Eigen::Vector2d v1 = particle_velocity(px, py, z);
    double mx = px + 0.5 * dt * v1[0], my = py + 0.5 * dt * v1[1];
    g.clamp(mx, my);
    const Eigen::Vector2d v2 = particle_velocity(mx, my, d.zmid);
    px += dt * v2[0], py += dt * v2[1];
    g.clamp(px, py);
    if (scene_) scene_->push_out(px, py);
    x_next[2 * i] = px, x_next[2 * i + 1] = py;
  }
}

}  // namespace directable
