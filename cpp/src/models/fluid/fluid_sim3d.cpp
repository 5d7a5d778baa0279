#include "directable/models/fluid/fluid_sim3d.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "directable/core/errors.hpp"

namespace directable {

FluidSim3D::FluidSim3D(std::shared_ptr<const MACGrid3D> grid, double viscosity, double dt,
                       const Eigen::Vector3d& updraft, const Eigen::Vector3d& buoyancy, double tol)
    : grid_(std::move(grid)), viscosity_(viscosity), dt_(dt), tol_(tol), updraft_(updraft), buoyancy_(buoyancy) {
  if (!grid_) throw std::invalid_argument("grid must be a MACGrid3D, got None");
  if (!(viscosity >= 0.0) || !std::isfinite(viscosity))
    throw std::domain_error("viscosity must be finite and >= 0, got " + std::to_string(viscosity));
  check_positive("dt", dt);
  check_positive("tol", tol);
  if (!updraft.allFinite()) throw std::domain_error("updraft must be finite");
  if (!buoyancy.allFinite()) throw std::domain_error("buoyancy must be finite");
  const Index N = grid_->n_faces(), C = grid_->n_cells();
  if (viscosity_ > 0.0) {
    Eigen::SparseMatrix<double, Eigen::RowMajor> I(N, N);
    I.setIdentity();
    const Eigen::SparseMatrix<double, Eigen::RowMajor> D = grid_->laplacian();
    diffusion_ = I - (viscosity_ * dt_) * D;
    diffusion_cg_.setTolerance(1e-12);
    diffusion_cg_.compute(diffusion_);
  }
  velocity_.setZero(N), advected_.setZero(N);
  density_.setZero(C), advected_density_.setZero(C);
  particles_.resize(0, 3);
  solid_ = grid_->solid();
  owner_.assign(std::size_t(C), -1);
  pressure_.resize(C);
}

void FluidSim3D::set_velocity(const Eigen::Ref<const Eigen::VectorXd>& u) {
  grid_->check_field("velocity", u);
  velocity_ = u;
}

void FluidSim3D::set_density(const Eigen::Ref<const Eigen::VectorXd>& rho) {
  grid_->check_cells("density", rho);
  density_ = rho;
}

void FluidSim3D::set_particles(const Eigen::Ref<const RowMatrix>& p) {
  check_shape("particles", p.rows(), p.cols(), p.rows(), 3);
  check_finite("particles", p.data(), p.size());
  particles_ = p;
}

void FluidSim3D::check_inside_domain(const MACGrid3D& g, const std::vector<Obstacle3D>& obstacles) {
  const Eigen::Vector3d size(g.width(), g.height(), g.depth());
  for (std::size_t o = 0; o < obstacles.size(); ++o) {
    Eigen::Vector3d lo, hi;
    obstacles[o].world_bounds(lo, hi);
    if ((lo.array() < 0.0).any() || (hi.array() > size.array()).any())
      throw std::invalid_argument("obstacles[" + std::to_string(o) + "] must lie inside the domain [0, " +
                                  std::to_string(size[0]) + "] x [0, " + std::to_string(size[1]) + "] x [0, " +
                                  std::to_string(size[2]) + "], got bounds (" + std::to_string(lo[0]) + ", " +
                                  std::to_string(lo[1]) + ", " + std::to_string(lo[2]) + ") - (" +
                                  std::to_string(hi[0]) + ", " + std::to_string(hi[1]) + ", " +
                                  std::to_string(hi[2]) + ")");
  }
}

void FluidSim3D::mark_obstacles(const MACGrid3D& g, const std::vector<Obstacle3D>& obstacles, CellMask& solid,
                                std::vector<int>& owner) {
  std::fill(owner.begin(), owner.end(), -1);
  const double h = g.h();
  const Index n[3] = {g.nx(), g.ny(), g.nz()};
  for (std::size_t o = 0; o < obstacles.size(); ++o) {
    Eigen::Vector3d lo, hi;
    obstacles[o].world_bounds(lo, hi);
    Index a[3], b[3];  // cells whose centres may lie inside the bounds
    for (int d = 0; d < 3; ++d) {
      a[d] = std::max<Index>(0, Index(std::ceil(lo[d] / h - 0.5)));
      b[d] = std::min<Index>(n[d] - 1, Index(std::floor(hi[d] / h - 0.5)));
    }
    for (Index k = a[2]; k <= b[2]; ++k)
      for (Index j = a[1]; j <= b[1]; ++j)
        for (Index i = a[0]; i <= b[0]; ++i) {
          const Index c = g.cell(i, j, k);
          if (owner[std::size_t(c)] >= 0 || g.solid()[c]) continue;
          if (obstacles[o].inside(g.cell_center(c))) solid[c] = true, owner[std::size_t(c)] = int(o);
        }
  }
}

void FluidSim3D::apply_obstacle_velocities(const MACGrid3D& g, const std::vector<Obstacle3D>& obstacles,
                                           const std::vector<int>& owner, Eigen::Ref<Eigen::VectorXd> u) {
  for (Index f = 0; f < g.n_faces(); ++f) {
    Index c0, c1;
    int axis;
    g.face_cells(f, c0, c1, axis);
    if (c0 < 0 || c1 < 0 || g.solid()[c0] || g.solid()[c1]) continue;  // walls and fixed solids stay zero
    const int o = owner[std::size_t(c0)] >= 0 ? owner[std::size_t(c0)] : owner[std::size_t(c1)];
    if (o < 0) continue;
    u[f] = obstacles[std::size_t(o)].rigid_velocity(g.face_center(f))[axis];
  }
}

void FluidSim3D::step(const Eigen::Ref<const Eigen::VectorXd>& f, const std::vector<Obstacle3D>& obstacles,
                      const ProgressFn* progress) {
  const MACGrid3D& g = *grid_;
  if (f.size() != 0) g.check_field("force", f);
  check_inside_domain(g, obstacles);
  if (f.size() != 0) velocity_ += dt_ * f;
  if (buoyancy_.squaredNorm() > 0.0)  // density averaged onto the faces (zero beyond the walls)
    for (Index face = 0; face < g.n_faces(); ++face) {
      Index c0, c1;
      int axis;
      g.face_cells(face, c0, c1, axis);
      if (c0 < 0 || c1 < 0 || buoyancy_[axis] == 0.0) continue;
      velocity_[face] += dt_ * buoyancy_[axis] * 0.5 * (density_[c0] + density_[c1]);
    }
  g.advect_velocity(velocity_, dt_, advected_, progress);
  if (viscosity_ > 0.0) {
    velocity_ = diffusion_cg_.solveWithGuess(advected_, advected_);
    if (diffusion_cg_.info() != Eigen::Success)
      throw std::domain_error("viscosity CG did not converge: relative residual " +
                              std::to_string(diffusion_cg_.error()) + " (the diffusion system of dt = " +
                              std::to_string(dt_) + " s and viscosity = " + std::to_string(viscosity_) +
                              " m^2/s, from the advected velocity)");
  } else {
    velocity_.swap(advected_);
  }
  solid_ = g.solid();
  mark_obstacles(g, obstacles, solid_, owner_);
  // fixed solid faces are zero, obstacle faces (including those inside the obstacle) rigid
  for (Index face = 0; face < g.n_faces(); ++face) {
    Index c0, c1;
    int axis;
    g.face_cells(face, c0, c1, axis);
    if (c0 >= 0 && c1 >= 0 && (g.solid()[c0] || g.solid()[c1])) velocity_[face] = 0.0;
  }
  apply_obstacle_velocities(g, obstacles, owner_, velocity_);
  g.project_with(velocity_, solid_, pressure_, tol_, obstacles.empty(), progress, true);
  if (!velocity_.allFinite()) throw std::domain_error("fluid step: the velocity became non-finite");
  g.advect_cells(velocity_, density_, dt_, updraft_, advected_density_);
  density_.swap(advected_density_);
  for (Index c = 0; c < g.n_cells(); ++c)
    if (solid_[c]) density_[c] = 0.0;
  g.advect_particles(velocity_, particles_, dt_, updraft_);
  pushed_ = 0;
  const double margin = 1e-3 * g.h();
  for (Index k = 0; k < particles_.rows(); ++k) {
    Eigen::Vector3d x = particles_.row(k).transpose();
    for (const auto& o : obstacles)
      if (o.push_out(x, margin)) ++pushed_;
    g.clamp(x);
    particles_.row(k) = x.transpose();
  }
}

}  // namespace directable
