#include "directable/models/fluid/reduced_scene3d.hpp"

#include <atomic>
#include <string>

#include "directable/core/clock.hpp"
#include "directable/core/errors.hpp"
#include "directable/models/fluid/boundary_tools.hpp"

namespace directable {

ReducedScene3D::ReducedScene3D(std::shared_ptr<const ReducedFluid3D> reduced,
                               std::vector<std::shared_ptr<const Coupling3D>> couplings)
    : reduced_(std::move(reduced)), couplings_(std::move(couplings)) {
  max_m_ = check_scene_couplings(reduced_.get(), couplings_, "3D ReducedFluid", "Coupling3D");
}

std::unique_ptr<ReducedScene3DData> ReducedScene3D::create_data() const {
  auto d = std::make_unique<ReducedScene3DData>();
  const Index r = reduced_->r();
  d->fluid = reduced_->create_data();
  d->zero_w.setZero(r), d->z_flow.setZero(r);
  for (const auto& c : couplings_) {
    d->coupling.push_back(c->create_data());
    d->F.emplace_back(c->p(), r);
    d->G.emplace_back(r, c->m());
    d->local.emplace_back(Eigen::VectorXd::Zero(c->boundary().local_grid().n_faces()));
  }
  d->poses.resize(couplings_.size());
  return d;
}

void ReducedScene3D::check_poses(const Eigen::Ref<const RowMatrix>& poses, const char* name) const {
  check_scene_rows(name, poses, objects(), 6);
}

void ReducedScene3D::check_state(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const RowMatrix>& coeffs,
                                 const Eigen::Ref<const RowMatrix>& poses) const {
  check_scene_state(reduced_->r(), objects(), max_m_, 6, z, coeffs, poses);
}

void ReducedScene3D::step(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const Eigen::VectorXd>& w,
                          double dt, const Eigen::Ref<const RowMatrix>& poses,
                          const Eigen::Ref<const RowMatrix>& velocities, Eigen::Ref<Eigen::VectorXd> z_next,
                          Eigen::Ref<RowMatrix> coeffs, ReducedScene3DData& d) const {
  scene_step(*reduced_, objects(), 6, z, w, dt, poses, velocities, z_next, coeffs, *d.fluid, d.zero_w, d.z_flow,
             [&](Index i) {
               const Coupling3D& c = *couplings_[std::size_t(i)];
               const double* pose = poses.row(i).data();
               c.feedforward(pose, d.F[std::size_t(i)], *d.coupling[std::size_t(i)]);
               c.feedback(pose, d.G[std::size_t(i)], *d.coupling[std::size_t(i)]);
               auto ci = coeffs.row(i);
               ci.head(c.p()).noalias() = (d.F[std::size_t(i)] * d.z_flow).transpose();
               if (c.m() > c.p()) {  // unit motions of the object frame: the velocity seen from there
                 const Pose3D P(pose);
                 ci.segment<3>(c.p()) = (P.R.transpose() * velocities.row(i).head<3>().transpose()).transpose();
                 ci.segment<3>(c.p() + 3) = (P.R.transpose() * velocities.row(i).tail<3>().transpose()).transpose();
               }
               z_next.noalias() += d.G[std::size_t(i)] * ci.head(c.m()).transpose();
             });
}

void ReducedScene3D::prepare(const Eigen::Ref<const RowMatrix>& coeffs, const Eigen::Ref<const RowMatrix>& poses,
                             bool boundary, ReducedScene3DData& d) const {
  for (Index i = 0; i < objects(); ++i) {
    const Coupling3D& c = *couplings_[std::size_t(i)];
    d.poses[std::size_t(i)] = Pose3D(poses.row(i).data());
    if (boundary)
      d.local[std::size_t(i)].noalias() = c.boundary().all_fields() * coeffs.row(i).head(c.m()).transpose();
    else
      d.local[std::size_t(i)].setZero();
  }
}

Eigen::Vector3d ReducedScene3D::velocity(const Eigen::Vector3d& x, const Eigen::Ref<const Eigen::VectorXd>& z,
                                         const ReducedScene3DData& d) const {
  Eigen::Vector3d v = reduced_->velocity(x, z), l;
  for (Index i = 0; i < objects(); ++i) {
    const Pose3D& P = d.poses[std::size_t(i)];
    if (couplings_[std::size_t(i)]->boundary().local_velocity(d.local[std::size_t(i)], P.to_local(x), l)) v += P.R * l;
  }
  return v;
}

void ReducedScene3D::velocity_at(const Eigen::Ref<const RowMatrix>& points, const Eigen::Ref<const Eigen::VectorXd>& z,
                                 const Eigen::Ref<const RowMatrix>& coeffs, const Eigen::Ref<const RowMatrix>& poses,
                                 Eigen::Ref<RowMatrix> out, ReducedScene3DData& d) const {
  check_state(z, coeffs, poses);
  check_shape("points", points.rows(), points.cols(), points.rows(), 3);
  check_finite("points", points.data(), points.size());
  prepare(coeffs, poses, true, d);
  const MACGrid3D& g = reduced_->grid();
  for (Index k = 0; k < points.rows(); ++k) {
    Eigen::Vector3d x = points.row(k).transpose();
    g.clamp(x);
    out.row(k) = velocity(x, z, d).transpose();
  }
}

void ReducedScene3D::velocity_field(const Eigen::Ref<const Eigen::VectorXd>& z,
                                    const Eigen::Ref<const RowMatrix>& coeffs, const Eigen::Ref<const RowMatrix>& poses,
                                    Eigen::Ref<Eigen::VectorXd> u, ReducedScene3DData& d) const {
  check_state(z, coeffs, poses);
  u.noalias() = reduced_->basis() * z;
  for (Index i = 0; i < objects(); ++i) {
    const Coupling3D& c = *couplings_[std::size_t(i)];
    Coupling3DData& cd = *d.coupling[std::size_t(i)];
    const Eigen::VectorXd local = c.boundary().all_fields() * coeffs.row(i).head(c.m()).transpose();
    c.boundary().resample(reduced_->grid(), Pose3D(poses.row(i).data()), local, cd.faces, cd.values);
    for (std::size_t a = 0; a < cd.faces.size(); ++a) u[cd.faces[a]] += cd.values(Index(a), 0);
  }
}

void ReducedScene3D::surface_speed(Index i, const Eigen::Ref<const Eigen::VectorXd>& z,
                                   const Eigen::Ref<const RowMatrix>& coeffs, const Eigen::Ref<const RowMatrix>& poses,
                                   bool boundary, Eigen::Ref<Eigen::VectorXd> out, ReducedScene3DData& d) const {
  check_state(z, coeffs, poses);
  if (i < 0 || i >= objects())
    throw std::invalid_argument("object must be in [0, " + std::to_string(objects()) + "), got " + std::to_string(i));
  const BoundaryBasis3D& b = couplings_[std::size_t(i)]->boundary();
  if (out.size() != b.q()) throw_shape("out", "(" + std::to_string(b.q()) + ",)", "(" + std::to_string(out.size()) + ",)");
  prepare(coeffs, poses, boundary, d);
  const MACGrid3D& g = reduced_->grid();
  const Pose3D& P = d.poses[std::size_t(i)];
  for (Index k = 0; k < b.q(); ++k) {
    Eigen::Vector3d x = P.to_world(b.surface_points().row(k).transpose());
    g.clamp(x);
    out[k] = (P.R * b.surface_normals().row(k).transpose()).dot(velocity(x, z, d));
  }
}

void ReducedScene3D::surface_energy_removed(const Eigen::Ref<const Eigen::VectorXd>& z,
                                            const Eigen::Ref<const RowMatrix>& coeffs,
                                            const Eigen::Ref<const RowMatrix>& poses,
                                            const Eigen::Ref<const RowMatrix>& velocities,
                                            Eigen::Ref<Eigen::VectorXd> out, ReducedScene3DData& d) const {
  check_state(z, coeffs, poses);  // before the poses are read below
  check_poses(velocities, "velocities");
  if (out.size() != objects()) throw_shape("out", "(" + std::to_string(objects()) + ",)", "(" + std::to_string(out.size()) + ",)");
  for (Index i = 0; i < objects(); ++i) {
    const BoundaryBasis3D& b = couplings_[std::size_t(i)]->boundary();
    const Pose3D pose(poses.row(i).data());
    const Eigen::Vector3d v = velocities.row(i).head<3>().transpose(), w = velocities.row(i).tail<3>().transpose();
    Eigen::VectorXd with(b.q()), without(b.q()), rigid(b.q());
    surface_speed(i, z, coeffs, poses, true, with, d);
    surface_speed(i, z, coeffs, poses, false, without, d);
    for (Index k = 0; k < b.q(); ++k) {
      const Eigen::Vector3d x = pose.to_world(b.surface_points().row(k).transpose());
      rigid[k] = (pose.R * b.surface_normals().row(k).transpose()).dot(v + w.cross(x - pose.c));
    }
    const double den = (without - rigid).squaredNorm();
    out[i] = den > 0.0 ? 1.0 - (with - rigid).squaredNorm() / den : 1.0;
  }
}

Index ReducedScene3D::advect_particles(Eigen::Ref<RowMatrix> points, const Eigen::Ref<const Eigen::VectorXd>& z,
                                       const Eigen::Ref<const RowMatrix>& coeffs,
                                       const Eigen::Ref<const RowMatrix>& poses, double dt,
                                       const Eigen::Vector3d& drift, int threads, ReducedScene3DData& d) const {
  check_state(z, coeffs, poses);
  check_shape("points", points.rows(), points.cols(), points.rows(), 3);
  check_finite("points", points.data(), points.size());
  check_positive("dt", dt);
  if (!drift.allFinite()) throw std::domain_error("drift must be finite");
  prepare(coeffs, poses, true, d);
  const MACGrid3D& g = reduced_->grid();
  const Index P = points.rows();
  const bool choose = threads <= 0;
  const int team = choose ? d.particle_team.begin() : resolve_threads(threads);
  const double t0 = now_seconds();
  const Index chunks = std::max<Index>(1, std::min<Index>(P, 4 * Index(team)));
  const double margin = 1e-3 * g.h();
  std::atomic<Index> pushed{0};
  g.cell_order(points, d.particle_order);
  parallel_steps(chunks, team, nullptr, chunks, [] { return 0; }, [&](Index c, int&) {
    Index moved = 0;
    // stage by stage over a batch of neighbours in cell order (ReducedFluid3D::advect_particles)
    const Index end = (c + 1) * P / chunks;
    for (Index q0 = c * P / chunks; q0 < end; q0 += kParticleBatch) {
      const int count = int(std::min<Index>(kParticleBatch, end - q0));
      Eigen::Vector3d xs[kParticleBatch], ms[kParticleBatch];
      for (int b = 0; b < count; ++b) {
        xs[b] = points.row(d.particle_order[std::size_t(q0 + b)].second).transpose();
        g.clamp(xs[b]);
      }
      for (int b = 0; b < count; ++b) {
        ms[b] = xs[b] + 0.5 * dt * (velocity(xs[b], z, d) + drift);
        g.clamp(ms[b]);
      }
      for (int b = 0; b < count; ++b) xs[b] += dt * (velocity(ms[b], z, d) + drift);
      for (int b = 0; b < count; ++b) {
        Eigen::Vector3d& x = xs[b];
        g.clamp(x);
        for (Index i = 0; i < objects(); ++i) {
          const Shape3D& s = couplings_[std::size_t(i)]->boundary().shape();
          const Pose3D& pose = d.poses[std::size_t(i)];
          const Eigen::Vector3d l = pose.to_local(x);
          if (!s.inside(l)) continue;
          Eigen::Vector3d n;
          const Eigen::Vector3d q = s.closest_point(l, n);
          x = pose.to_world(q + margin * n);
          g.clamp(x);
          ++moved;
        }
        points.row(d.particle_order[std::size_t(q0 + b)].second) = x.transpose();
      }
    }
    pushed += moved;
  });
  if (choose) d.particle_team.end(now_seconds() - t0);
  return pushed.load();
}

SceneAtPoses3D::SceneAtPoses3D(std::shared_ptr<const ReducedScene3D> scene, const Eigen::Ref<const RowMatrix>& poses,
                               const Eigen::Ref<const RowMatrix>& velocities)
    : scene_(std::move(scene)), poses_(poses), velocities_(velocities) {
  if (!scene_) throw std::invalid_argument("scene must be a ReducedScene3D, got None");
  scene_->check_poses(poses, "poses");
  scene_->check_poses(velocities, "velocities");
  const Index r = scene_->reduced().r();
  for (Index i = 0; i < scene_->objects(); ++i) {
    const Coupling3D& c = scene_->coupling(i);
    pose_list_.emplace_back(poses_.row(i).data());
    auto d = c.create_data();
    F_.emplace_back(c.p(), r);
    c.feedforward(poses_.row(i).data(), F_.back(), *d);
    Eigen::VectorXd rigid(6);
    rigid.head<3>() = pose_list_.back().R.transpose() * velocities_.row(i).head<3>().transpose();
    rigid.tail<3>() = pose_list_.back().R.transpose() * velocities_.row(i).tail<3>().transpose();
    rigid_.push_back(rigid);
  }
}

void SceneAtPoses3D::add_terms(const Eigen::Vector3d& x, const Eigen::Ref<const Eigen::VectorXd>& z,
                               Eigen::Vector3d& v, RowMatrix* dv_dz, Eigen::Matrix3d* dv_dx) const {
  Eigen::Vector3d l;
  Stencil8 s[3];
  for (Index i = 0; i < scene_->objects(); ++i) {
    const Coupling3D& c = scene_->coupling(i);
    const BoundaryBasis3D& b = c.boundary();
    const Pose3D& P = pose_list_[std::size_t(i)];
    if (!b.in_box(P.to_local(x), l)) continue;
    const MACGrid3D& L = b.local_grid();
    L.x_stencil(l[0], l[1], l[2], s[0]);
    L.y_stencil(l[0], l[1], l[2], s[1]);
    L.z_stencil(l[0], l[1], l[2], s[2]);
    const Eigen::MatrixXd& A = b.all_fields();  // N_local x m
    const Index p = c.p(), m = c.m();
    Eigen::VectorXd coeff(m);
    coeff.head(p).noalias() = F_[std::size_t(i)] * z;
    if (m > p) coeff.tail(m - p) = rigid_[std::size_t(i)];
    Eigen::Vector3d loc = Eigen::Vector3d::Zero();
    Eigen::Matrix3d dloc = Eigen::Matrix3d::Zero();  // d local velocity / d local position
    RowMatrix Lm = RowMatrix::Zero(3, m);
    for (int comp = 0; comp < 3; ++comp)
      for (int a = 0; a < 8; ++a) {
        const auto row = A.row(s[comp].idx[a]);
        Lm.row(comp).noalias() += s[comp].w[a] * row;
        const double val = row.dot(coeff);
        loc[comp] += s[comp].w[a] * val;
        dloc(comp, 0) += s[comp].dx[a] * val;
        dloc(comp, 1) += s[comp].dy[a] * val;
        dloc(comp, 2) += s[comp].dz[a] * val;
      }
    v += P.R * loc;
    if (dv_dz) dv_dz->noalias() += P.R * (Lm.leftCols(p) * F_[std::size_t(i)]);
    if (dv_dx) *dv_dx += P.R * dloc * P.R.transpose();
  }
}

bool SceneAtPoses3D::push_out(Eigen::Vector3d& x) const {
  const MACGrid3D& g = scene_->reduced().grid();
  bool moved = false;
  for (Index i = 0; i < scene_->objects(); ++i) {
    const Shape3D& s = scene_->coupling(i).boundary().shape();
    const Pose3D& P = pose_list_[std::size_t(i)];
    const Eigen::Vector3d l = P.to_local(x);
    if (!s.inside(l)) continue;
    Eigen::Vector3d n;
    const Eigen::Vector3d q = s.closest_point(l, n);
    x = P.to_world(q + 1e-3 * g.h() * n);
    g.clamp(x);
    moved = true;
  }
  return moved;
}

}  // namespace directable
