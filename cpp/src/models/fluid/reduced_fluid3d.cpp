#include "directable/models/fluid/reduced_fluid3d.hpp"

#include <string>

#include "directable/core/allocation.hpp"
#include "directable/core/clock.hpp"
#include "directable/core/errors.hpp"
#include "directable/core/parallel.hpp"
#include "directable/models/fluid/reduced_scene3d.hpp"

namespace directable {

void advection_apply(const MACGrid3D& g, const Eigen::Ref<const Eigen::VectorXd>& u,
                     const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::VectorXd> out) {
  const Index n[3] = {g.nx(), g.ny(), g.nz()};
  const double ih = 1.0 / g.h();
  out.setZero();
  // face index of component a at lattice index (i, j, k) (i along x ...)
  auto face = [&g](int a, const Index* x) {
    return a == 0 ? g.xface(x[0], x[1], x[2]) : a == 1 ? g.yface(x[0], x[1], x[2]) : g.zface(x[0], x[1], x[2]);
  };
  // flux from face A to face B (velocity U positive from A to B): q' = -div(u q) on each control volume
  auto flux = [&](Index A, Index B, double U) {
    const double F = 0.5 * U * (q[A] + q[B]) * ih;
    out[A] -= F;
    out[B] += F;
  };
  for (int a = 0; a < 3; ++a)      // the component (faces normal to axis a)
    for (int d = 0; d < 3; ++d) {  // the direction of the flux
      // lattice index ranges of the lower control volume: faces of component a run 0..n[a] along a
      Index lo[3] = {0, 0, 0}, hi[3] = {n[0] - 1, n[1] - 1, n[2] - 1};
      if (d == a) {
        hi[a] = n[a] - 1;  // boundary at the cell centre between faces idx and idx + e_a
      } else {
        lo[a] = 1, hi[a] = n[a] - 1;  // interior a-faces: both cells beside them exist
        hi[d] = n[d] - 2;             // boundary on the edge between idx and idx + e_d
      }
      Index x[3], y[3], s0[3], s1[3];
      for (x[2] = lo[2]; x[2] <= hi[2]; ++x[2])
        for (x[1] = lo[1]; x[1] <= hi[1]; ++x[1])
          for (x[0] = lo[0]; x[0] <= hi[0]; ++x[0]) {
            for (int c = 0; c < 3; ++c) y[c] = x[c];
            ++y[d];
            double U;
            if (d == a) {
              U = 0.5 * (u[face(a, x)] + u[face(a, y)]);
            } else {  // eq. 3.14: the d-velocity on the edge, averaged over the two cells beside face idx
              for (int c = 0; c < 3; ++c) s0[c] = y[c], s1[c] = y[c];
              --s0[a];
              U = 0.5 * (u[face(d, s0)] + u[face(d, s1)]);
            }
            flux(face(a, x), face(a, y), U);
          }
    }
}

ReducedFluid3D::ReducedFluid3D(std::shared_ptr<const MACGrid3D> grid, const Eigen::Ref<const RowMatrix>& basis,
                               double viscosity, int threads, const ProgressFn* progress)
    : GalerkinFluid(basis, grid ? grid->n_faces() : 0,
                    grid ? std::to_string(grid->nx()) + "x" + std::to_string(grid->ny()) + "x" + std::to_string(grid->nz())
                         : std::string("None"),
                    viscosity),
      grid_(std::move(grid)) {
  if (!grid_) throw std::invalid_argument("grid must be a MACGrid3D, got None");
  const MACGrid3D& g = *grid_;
  project_operators(
      g.laplacian(),
      [&g](const Eigen::Ref<const Eigen::VectorXd>& u, const Eigen::Ref<const Eigen::VectorXd>& q,
           Eigen::Ref<Eigen::VectorXd> out) { advection_apply(g, u, q, out); },
      g.max_divergence(basis_), threads, progress);
}

void ReducedFluid3D::modes(const Eigen::Vector3d& x, Eigen::Ref<RowMatrix> Psi, RowMatrix* dPsi) const {
  check_finite("x", x.data(), 3);  // a NaN point would index the stencil through an undefined cast
  Eigen::Vector3d p = x;
  grid_->clamp(p);
  Stencil8 s[3];
  grid_->x_stencil(p[0], p[1], p[2], s[0]);
  grid_->y_stencil(p[0], p[1], p[2], s[1]);
  grid_->z_stencil(p[0], p[1], p[2], s[2]);
  Psi.setZero();
  if (dPsi)
    for (int d = 0; d < 3; ++d) dPsi[d].setZero(3, r_);
  for (int c = 0; c < 3; ++c)
    for (int a = 0; a < 8; ++a) {
      const auto row = basis_.row(s[c].idx[a]);
      Psi.row(c) += s[c].w[a] * row;
      if (dPsi) {
        dPsi[0].row(c) += s[c].dx[a] * row;
        dPsi[1].row(c) += s[c].dy[a] * row;
        dPsi[2].row(c) += s[c].dz[a] * row;
      }
    }
}

namespace {
// sum_a w_a (b_a . z) over the 8 corner rows b_a (length r) of a stencil, as
// (sum_a w_a b_a) . z: the corners are combined lane by lane (8 lanes, fixed
// order) and reduced once, instead of 8 dot products with 8 horizontal sums.
double stencil_dot(const double* B, Index r, const Stencil8& s, const double* z) {
  using Lanes = Eigen::Array<double, 8, 1>;
  const double* b[8];
  for (int a = 0; a < 8; ++a) b[a] = B + s.idx[a] * r;
  Lanes acc = Lanes::Zero();
  Index j = 0;
  for (; j + 8 <= r; j += 8) {
    Lanes t = s.w[0] * Lanes::Map(b[0] + j);
    for (int a = 1; a < 8; ++a) t += s.w[a] * Lanes::Map(b[a] + j);
    acc += t * Lanes::Map(z + j);
  }
  double v = acc.sum();
  for (; j < r; ++j) {
    double t = 0.0;
    for (int a = 0; a < 8; ++a) t += s.w[a] * b[a][j];
    v += t * z[j];
  }
  return v;
}
}  // namespace

Eigen::Vector3d ReducedFluid3D::velocity(const Eigen::Vector3d& x, const Eigen::Ref<const Eigen::VectorXd>& z) const {
  Stencil8 s;
  Eigen::Vector3d v;
  for (int c = 0; c < 3; ++c) {
    grid_->weights(c, x, s);  // clamps
    v[c] = stencil_dot(basis_.data(), r_, s, z.data());
  }
  return v;
}

void ReducedFluid3D::velocities(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const RowMatrix>& points,
                                Eigen::Ref<RowMatrix> out) const {
  check_reduced("z", z);
  check_shape("points", points.rows(), points.cols(), points.rows(), 3);
  check_finite("points", points.data(), points.size());
  check_shape("out", out.rows(), out.cols(), points.rows(), 3);
  for (Index k = 0; k < points.rows(); ++k) out.row(k) = velocity(points.row(k).transpose(), z).transpose();
}

Index ReducedFluid3D::advect_particles(const Eigen::Ref<const Eigen::VectorXd>& z,
                                       const Eigen::Ref<const Eigen::VectorXd>& z_next, Eigen::Ref<RowMatrix> points,
                                       double dt, const Eigen::Vector3d& drift, const std::vector<Obstacle3D>& obstacles,
                                       int threads, ReducedFluidData* data) const {
  check_reduced("z", z);
  check_reduced("z_next", z_next);
  check_shape("points", points.rows(), points.cols(), points.rows(), 3);
  check_finite("points", points.data(), points.size());
  check_positive("dt", dt);
  if (!drift.allFinite()) throw std::domain_error("drift must be finite");
  const Eigen::VectorXd zmid = 0.5 * (z + z_next);
  const Index P = points.rows();
  const bool choose = data != nullptr && threads <= 0;
  const int team = choose ? data->particle_team.begin() : resolve_threads(threads);
  const double t0 = now_seconds();
  const Index chunks = std::min<Index>(P, 4 * Index(team));
  const double margin = 1e-3 * grid_->h();
  std::atomic<Index> pushed{0};
  std::vector<std::pair<Index, Index>> own_order;
  auto& order = data ? data->particle_order : own_order;
  grid_->cell_order(points, order);
  parallel_steps(chunks, team, nullptr, chunks, [] { return 0; }, [&](Index c, int&) {
    Index moved = 0;
    // stage by stage over a batch of neighbours in cell order: the batch's
    // stencils are independent, so their basis rows are fetched at once
    // rather than one particle's after the other's (measured 12 % faster)
    const Index end = (c + 1) * P / chunks;
    for (Index q0 = c * P / chunks; q0 < end; q0 += kParticleBatch) {
      const int n = int(std::min<Index>(kParticleBatch, end - q0));
      Eigen::Vector3d x[kParticleBatch], m[kParticleBatch];
      for (int i = 0; i < n; ++i) {
        x[i] = points.row(order[std::size_t(q0 + i)].second).transpose();
        grid_->clamp(x[i]);
      }
      for (int i = 0; i < n; ++i) {
        m[i] = x[i] + 0.5 * dt * (velocity(x[i], z) + drift);
        grid_->clamp(m[i]);
      }
      for (int i = 0; i < n; ++i) x[i] += dt * (velocity(m[i], zmid) + drift);
      for (int i = 0; i < n; ++i) {
        for (const auto& o : obstacles)
          if (o.push_out(x[i], margin)) ++moved;
        grid_->clamp(x[i]);
        points.row(order[std::size_t(q0 + i)].second) = x[i].transpose();
      }
    }
    pushed += moved;
  });
  if (choose) data->particle_team.end(now_seconds() - t0);
  return pushed.load();
}

FluidParticles3D::FluidParticles3D(std::shared_ptr<const ReducedFluid3D> fluid, Index particles,
                                   const Eigen::Vector3d& drift)
    : fluid_(std::move(fluid)), particles_(particles), drift_(drift) {
  if (!fluid_) throw std::invalid_argument("fluid must be a 3D ReducedFluid, got None");
  if (particles_ < 0) throw std::invalid_argument("particles must be >= 0, got " + std::to_string(particles_));
  if (!drift.allFinite()) throw std::domain_error("drift must be finite");
  const Index r = fluid_->r();
  // the control map, (3 particles + r) x r
  check_allocation("particles = " + std::to_string(particles_) + " (the control map)",
                   8.0 * (3.0 * double(particles_) + double(r)) * double(r));
  control_.setZero(3 * particles_ + r, r);
  control_.bottomRows(r).setIdentity();
}

namespace {
std::shared_ptr<const ReducedFluid3D> scene_fluid(const std::shared_ptr<const SceneAtPoses3D>& scene) {
  if (!scene) throw std::invalid_argument("scene must be a ReducedScene3D, got None");
  return scene->scene().reduced_ptr();
}
}  // namespace

FluidParticles3D::FluidParticles3D(std::shared_ptr<const SceneAtPoses3D> scene, Index particles,
                                   const Eigen::Vector3d& drift)
    : FluidParticles3D(scene_fluid(scene), particles, drift) {
  scene_ = std::move(scene);
}

Eigen::Vector3d FluidParticles3D::particle_velocity(const Eigen::Vector3d& p,
                                                    const Eigen::Ref<const Eigen::VectorXd>& z) const {
  Eigen::Vector3d v = fluid_->velocity(p, z) + drift_;
  if (scene_) {
    Eigen::Vector3d q = p;
    fluid_->grid().clamp(q);
    scene_->add_terms(q, z, v, nullptr, nullptr);
  }
  return v;
}

void FluidParticles3D::dynamics(const Eigen::Ref<const Eigen::VectorXd>& x, double,
                                Eigen::Ref<Eigen::VectorXd> F) const {
  const auto z = x.tail(fluid_->r());
  for (Index i = 0; i < particles_; ++i) F.segment<3>(3 * i) = particle_velocity(x.segment<3>(3 * i), z);
  fluid_->dynamics(z, F.tail(fluid_->r()));
}

void FluidParticles3D::jacobian(const Eigen::Ref<const Eigen::VectorXd>& x, double, Eigen::Ref<RowMatrix> J) const {
  const Index r = fluid_->r();
  const auto z = x.tail(r);
  J.setZero();
  RowMatrix Psi(3, r), dPsi[3];
  for (Index i = 0; i < particles_; ++i) {
    fluid_->modes(x.segment<3>(3 * i), Psi, dPsi);
    Eigen::Matrix3d dp;
    for (int d = 0; d < 3; ++d) dp.col(d) = dPsi[d] * z;
    if (scene_) {
      Eigen::Vector3d p = x.segment<3>(3 * i), v = Eigen::Vector3d::Zero();
      fluid_->grid().clamp(p);
      scene_->add_terms(p, z, v, &Psi, &dp);
    }
    J.block(3 * i, 3 * particles_, 3, r) = Psi;
    J.block(3 * i, 3 * i, 3, 3) = dp;
  }
  fluid_->add_jacobian(z, J.bottomRightCorner(r, r));
}

namespace {
struct FluidParticles3DData : ModelData {
  explicit FluidParticles3DData(Index r) : fluid(r), zmid(r) {}
  ReducedFluidData fluid;
  Eigen::VectorXd zmid;
  std::unique_ptr<ReducedScene3DData> scene;  //!< with a scene
  RowMatrix coeffs;                           //!< K x max_m, with a scene
};
}  // namespace

std::unique_ptr<ModelData> FluidParticles3D::create_data() const {
  auto d = std::make_unique<FluidParticles3DData>(fluid_->r());
  if (scene_) {
    d->scene = scene_->scene().create_data();
    d->coeffs.resize(scene_->scene().objects(), scene_->scene().max_m());
  }
  return d;
}

void FluidParticles3D::step(const Eigen::Ref<const Eigen::VectorXd>& x, double, double dt,
                            const Eigen::Ref<const Eigen::VectorXd>& w, Eigen::Ref<Eigen::VectorXd> x_next,
                            ModelData& data) const {
  auto& d = static_cast<FluidParticles3DData&>(data);
  const Index r = fluid_->r();
  const auto z = x.tail(r);
  if (scene_)
    scene_->scene().step(z, w, dt, scene_->poses(), scene_->velocities(), x_next.tail(r), d.coeffs, *d.scene);
  else
    fluid_->advance(z, w, dt, x_next.tail(r), d.fluid);
  d.zmid = 0.5 * (z + x_next.tail(r));
  const MACGrid3D& g = fluid_->grid();
  for (Index i = 0; i < particles_; ++i) {
    Eigen::Vector3d p = x.segment<3>(3 * i);
    g.clamp(p);
    Eigen::Vector3d m = p + 0.5 * dt * particle_velocity(p, z);
    g.clamp(m);
    p += dt * particle_velocity(m, d.zmid);
    g.clamp(p);
    if (scene_) scene_->push_out(p);
    x_next.segment<3>(3 * i) = p;
  }
}

}  // namespace directable
