#include "directable/models/fluid/reduced_scene.hpp"

#include <string>

#include "directable/core/errors.hpp"
#include "directable/models/fluid/boundary_tools.hpp"

namespace directable {

ReducedScene::ReducedScene(std::shared_ptr<const ReducedFluid> reduced,
                           std::vector<std::shared_ptr<const Coupling>> couplings)
    : reduced_(std::move(reduced)), couplings_(std::move(couplings)) {
  max_m_ = check_scene_couplings(reduced_.get(), couplings_, "ReducedFluid", "Coupling");
}

std::unique_ptr<ReducedSceneData> ReducedScene::create_data() const {
  auto d = std::make_unique<ReducedSceneData>();
  const Index r = reduced_->r();
  d->fluid = reduced_->create_data();
  d->zero_w.setZero(r), d->z_flow.setZero(r);
  for (const auto& c : couplings_) {
    d->coupling.push_back(c->create_data());
    d->coeffs.emplace_back(c->m());
    d->local.emplace_back(c->boundary().local_grid().n_faces());
  }
  return d;
}

void ReducedScene::check_poses(const Eigen::Ref<const RowMatrix>& poses, const char* name) const {
  check_scene_rows(name, poses, objects(), 3);
}

std::vector<Pose2D> ReducedScene::pose_list(const Eigen::Ref<const RowMatrix>& poses) const {
  std::vector<Pose2D> out;
  for (Index i = 0; i < objects(); ++i) out.emplace_back(poses(i, 0), poses(i, 1), poses(i, 2));
  return out;
}

void ReducedScene::check_state(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const RowMatrix>& coeffs,
                               const Eigen::Ref<const RowMatrix>& poses) const {
  check_scene_state(reduced_->r(), objects(), max_m_, 3, z, coeffs, poses);
}

void ReducedScene::step(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const Eigen::VectorXd>& w,
                        double dt, const Eigen::Ref<const RowMatrix>& poses,
                        const Eigen::Ref<const RowMatrix>& velocities, Eigen::Ref<Eigen::VectorXd> z_next,
                        Eigen::Ref<RowMatrix> coeffs, ReducedSceneData& d) const {
  scene_step(*reduced_, objects(), 3, z, w, dt, poses, velocities, z_next, coeffs, *d.fluid, d.zero_w, d.z_flow,
             [&](Index i) {
               const Coupling& c = *couplings_[size_t(i)];
               const Pose2D pose(poses(i, 0), poses(i, 1), poses(i, 2));
               // the rigid fields are unit motions of the object frame: its velocity seen from there
               const Eigen::Vector2d v = pose.unrotate(velocities(i, 0), velocities(i, 1));
               const Eigen::Vector3d rigid(v[0], v[1], velocities(i, 2));
               auto& ci = d.coeffs[size_t(i)];
               c.apply(pose, d.z_flow, rigid.head(c.m() - c.p()), ci, z_next, *d.coupling[size_t(i)]);
               coeffs.row(i).head(c.m()) = ci.transpose();
             });
}

void ReducedScene::combine_local(const Eigen::Ref<const RowMatrix>& coeffs, ReducedSceneData& d) const {
  for (Index i = 0; i < objects(); ++i) {
    const Coupling& c = *couplings_[size_t(i)];
    d.local[size_t(i)].noalias() = c.boundary().all_fields() * coeffs.row(i).head(c.m()).transpose();
  }
}

Eigen::Vector2d ReducedScene::velocity(double x, double y, const Eigen::Ref<const Eigen::VectorXd>& z,
                                       const std::vector<Pose2D>& poses, const ReducedSceneData& d) const {
  Eigen::Vector2d v = reduced_->velocity(x, y, z), l;
  for (Index i = 0; i < objects(); ++i) {
    const Pose2D& P = poses[size_t(i)];
    const Eigen::Vector2d p = P.to_local(x, y);
    if (couplings_[size_t(i)]->boundary().local_velocity(d.local[size_t(i)], p[0], p[1], l)) v += P.rotate(l[0], l[1]);
  }
  return v;
}

void ReducedScene::velocity_at(const Eigen::Ref<const RowMatrix>& points, const Eigen::Ref<const Eigen::VectorXd>& z,
                               const Eigen::Ref<const RowMatrix>& coeffs, const Eigen::Ref<const RowMatrix>& poses,
                               Eigen::Ref<RowMatrix> out, ReducedSceneData& d) const {
  check_state(z, coeffs, poses);
  check_shape("points", points.rows(), points.cols(), points.rows(), 2);
  check_finite("points", points.data(), points.size());
  combine_local(coeffs, d);
  const auto P = pose_list(poses);
  const MACGrid2D& g = reduced_->grid();
  for (Index k = 0; k < points.rows(); ++k) {
    double x = points(k, 0), y = points(k, 1);
    g.clamp(x, y);
    out.row(k) = velocity(x, y, z, P, d).transpose();
  }
}

void ReducedScene::velocity_field(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const RowMatrix>& coeffs,
                                  const Eigen::Ref<const RowMatrix>& poses, Eigen::Ref<Eigen::VectorXd> u,
                                  ReducedSceneData& d) const {
  check_state(z, coeffs, poses);
  u.noalias() = reduced_->basis() * z;
  for (Index i = 0; i < objects(); ++i) {
    const Coupling& c = *couplings_[size_t(i)];
    CouplingData& cd = *d.coupling[size_t(i)];
    c.boundary().resample(reduced_->grid(), Pose2D(poses(i, 0), poses(i, 1), poses(i, 2)), c.boundary().all_fields(),
                          cd.faces, cd.values);
    const Eigen::VectorXd add = cd.values * coeffs.row(i).head(c.m()).transpose();
    for (size_t a = 0; a < cd.faces.size(); ++a) u[cd.faces[a]] += add[Index(a)];
  }
}

void ReducedScene::surface_speed(Index i, const Eigen::Ref<const Eigen::VectorXd>& z,
                                 const Eigen::Ref<const RowMatrix>& coeffs, const Eigen::Ref<const RowMatrix>& poses,
                                 bool boundary, Eigen::Ref<Eigen::VectorXd> out, ReducedSceneData& d) const {
  check_state(z, coeffs, poses);
  if (i < 0 || i >= objects())
    throw std::invalid_argument("object must be in [0, " + std::to_string(objects()) + "), got " + std::to_string(i));
  const BoundaryBasis& b = couplings_[size_t(i)]->boundary();
  if (out.size() != b.q()) throw_shape("out", "(" + std::to_string(b.q()) + ",)", "(" + std::to_string(out.size()) + ",)");
  if (boundary)
    combine_local(coeffs, d);
  else
    for (auto& l : d.local) l.setZero();
  const auto P = pose_list(poses);
  const MACGrid2D& g = reduced_->grid();
  for (Index k = 0; k < b.q(); ++k) {
    Eigen::Vector2d x = P[size_t(i)].to_world(b.surface_points()(k, 0), b.surface_points()(k, 1));
    const Eigen::Vector2d n = P[size_t(i)].rotate(b.surface_normals()(k, 0), b.surface_normals()(k, 1));
    g.clamp(x[0], x[1]);
    out[k] = n.dot(velocity(x[0], x[1], z, P, d));
  }
}

void ReducedScene::surface_energy_removed(const Eigen::Ref<const Eigen::VectorXd>& z,
                                          const Eigen::Ref<const RowMatrix>& coeffs,
                                          const Eigen::Ref<const RowMatrix>& poses,
                                          const Eigen::Ref<const RowMatrix>& velocities, Eigen::Ref<Eigen::VectorXd> out,
                                          ReducedSceneData& d) const {
  check_state(z, coeffs, poses);  // before the poses are read below
  check_poses(velocities, "velocities");
  if (out.size() != objects()) throw_shape("out", "(" + std::to_string(objects()) + ",)", "(" + std::to_string(out.size()) + ",)");
  for (Index i = 0; i < objects(); ++i) {
    const BoundaryBasis& b = couplings_[size_t(i)]->boundary();
    const Pose2D pose(poses(i, 0), poses(i, 1), poses(i, 2));
    const Eigen::Vector3d v = velocities.row(i).transpose();
    Eigen::VectorXd with(b.q()), without(b.q()), rigid(b.q());
    surface_speed(i, z, coeffs, poses, true, with, d);
    surface_speed(i, z, coeffs, poses, false, without, d);
    for (Index k = 0; k < b.q(); ++k) {
      const Eigen::Vector2d x = pose.to_world(b.surface_points()(k, 0), b.surface_points()(k, 1));
      const Eigen::Vector2d n = pose.rotate(b.surface_normals()(k, 0), b.surface_normals()(k, 1));
      rigid[k] = n.dot(rigid_velocity(pose, v, x[0], x[1]));
    }
    const double den = (without - rigid).squaredNorm();
    out[i] = den > 0.0 ? 1.0 - (with - rigid).squaredNorm() / den : 1.0;
  }
}

void ReducedScene::advect_particles(Eigen::Ref<RowMatrix> points, const Eigen::Ref<const Eigen::VectorXd>& z,
                                    const Eigen::Ref<const RowMatrix>& coeffs, const Eigen::Ref<const RowMatrix>& poses,
                                    double dt, ReducedSceneData& d) const {
  check_state(z, coeffs, poses);
  check_shape("points", points.rows(), points.cols(), points.rows(), 2);
  check_finite("points", points.data(), points.size());
  check_positive("dt", dt);
  combine_local(coeffs, d);
  const auto P = pose_list(poses);
  const MACGrid2D& g = reduced_->grid();
  for (Index k = 0; k < points.rows(); ++k) {
    double x = points(k, 0), y = points(k, 1);
    g.clamp(x, y);
    const Eigen::Vector2d v1 = velocity(x, y, z, P, d);
    double mx = x + 0.5 * dt * v1[0], my = y + 0.5 * dt * v1[1];
    g.clamp(mx, my);
    const Eigen::Vector2d v2 = velocity(mx, my, z, P, d);
    x += dt * v2[0], y += dt * v2[1];
    g.clamp(x, y);
    for (Index i = 0; i < objects(); ++i) {
      const Shape2D& s = couplings_[size_t(i)]->boundary().shape();
      const Eigen::Vector2d l = P[size_t(i)].to_local(x, y);
      if (!s.inside(l[0], l[1])) continue;
      Eigen::Vector2d q, n;
      s.closest_boundary(l[0], l[1], q, n);
      q += 0.1 * g.h() * n;
      const Eigen::Vector2d w = P[size_t(i)].to_world(q[0], q[1]);
      x = w[0], y = w[1];
      g.clamp(x, y);
    }
    points(k, 0) = x, points(k, 1) = y;
  }
}

SceneAtPoses::SceneAtPoses(std::shared_ptr<const ReducedScene> scene, const Eigen::Ref<const RowMatrix>& poses,
                           const Eigen::Ref<const RowMatrix>& velocities)
    : scene_(std::move(scene)), poses_(poses), velocities_(velocities) {
  if (!scene_) throw std::invalid_argument("scene must be a ReducedScene, got None");
  scene_->check_poses(poses, "poses");
  scene_->check_poses(velocities, "velocities");
  const Index r = scene_->reduced().r();
  for (Index i = 0; i < scene_->objects(); ++i) {
    const Coupling& c = scene_->coupling(i);
    pose_list_.emplace_back(poses(i, 0), poses(i, 1), poses(i, 2));
    auto d = c.create_data();
    F_.emplace_back(c.p(), r);
    c.feedforward(pose_list_.back(), F_.back(), *d);
    const Eigen::Vector2d v = pose_list_.back().unrotate(velocities(i, 0), velocities(i, 1));
    rigid_.push_back(Eigen::Vector3d(v[0], v[1], velocities(i, 2)));
  }
}

void SceneAtPoses::add_terms(double x, double y, const Eigen::Ref<const Eigen::VectorXd>& z, Eigen::Vector2d& v,
                             RowMatrix* dv_dz, Eigen::Matrix2d* dv_dp) const {
  for (Index i = 0; i < scene_->objects(); ++i) {
    const Coupling& c = scene_->coupling(i);
    const BoundaryBasis& b = c.boundary();
    const Pose2D& P = pose_list_[size_t(i)];
    const Eigen::Vector2d l = P.to_local(x, y);
    const double lx = l[0] + b.half_size(), ly = l[1] + b.half_size(), w = b.local_grid().width();
    if (!(lx >= 0.0 && lx <= w && ly >= 0.0 && ly <= w)) continue;
    Stencil4 s[2];
    b.local_grid().x_stencil(lx, ly, s[0]);
    b.local_grid().y_stencil(lx, ly, s[1]);
    const Eigen::MatrixXd& A = b.all_fields();  // N_local x m
    const Index p = c.p(), m = c.m();
    Eigen::VectorXd coeff(m);
    coeff.head(p) = F_[size_t(i)] * z;
    if (m > p) coeff.tail(m - p) = rigid_[size_t(i)];
    Eigen::Matrix2d rot;
    rot << P.c, -P.s, P.s, P.c;
    Eigen::Vector2d loc(0, 0);
    Eigen::Matrix2d dloc = Eigen::Matrix2d::Zero();  // d local velocity / d local position
    RowMatrix L = RowMatrix::Zero(2, m);
    for (int comp = 0; comp < 2; ++comp)
      for (int a = 0; a < 4; ++a) {
        const auto row = A.row(s[comp].idx[a]);
        L.row(comp) += s[comp].w[a] * row;
        const double val = row.dot(coeff);
        loc[comp] += s[comp].w[a] * val;
        dloc(comp, 0) += s[comp].dx[a] * val;
        dloc(comp, 1) += s[comp].dy[a] * val;
      }
    v += rot * loc;
    if (dv_dz) dv_dz->noalias() += rot * (L.leftCols(p) * F_[size_t(i)]);
    if (dv_dp) *dv_dp += rot * dloc * rot.transpose();
  }
}

void SceneAtPoses::push_out(double& x, double& y) const {
  const MACGrid2D& g = scene_->reduced().grid();
  for (Index i = 0; i < scene_->objects(); ++i) {
    const Shape2D& s = scene_->coupling(i).boundary().shape();
    const Pose2D& P = pose_list_[size_t(i)];
    const Eigen::Vector2d l = P.to_local(x, y);
    if (!s.inside(l[0], l[1])) continue;
    Eigen::Vector2d q, n;
    s.closest_boundary(l[0], l[1], q, n);
    q += 0.1 * g.h() * n;
    const Eigen::Vector2d w = P.to_world(q[0], q[1]);
    x = w[0], y = w[1];
    g.clamp(x, y);
  }
}

}  // namespace directable
