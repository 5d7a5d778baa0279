#include "directable/models/characters/motion_model.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include "directable/core/errors.hpp"
#include "directable/core/parallel.hpp"

namespace directable {

namespace {

//! Heading of a ground-plane direction under eq. 5.2's rotation: rot(h)
//! maps +z onto (vx, vz).
double heading(double vx, double vz) { return std::atan2(-vx, vz); }

}  // namespace

GroundPose GroundPose::operator*(const GroundPose& o) const {
  const double c = std::cos(theta), s = std::sin(theta);
  return {x + c * o.x - s * o.z, z + s * o.x + c * o.z, theta + o.theta};
}

void GroundPose::apply(const double* p, double* out) const {
  const double c = std::cos(theta), s = std::sin(theta);
  const double px = p[0], pz = p[2];
  out[0] = c * px - s * pz + x;
  out[1] = p[1];
  out[2] = s * px + c * pz + z;
}

MotionModel::MotionModel(std::shared_ptr<const ClipSet> clips, const Eigen::Ref<const Eigen::VectorXd>& joint_weights,
                         double velocity_weight, int threads, const ProgressFn* progress)
    : clips_(std::move(clips)), velocity_weight_(velocity_weight) {
  if (!clips_) throw std::invalid_argument("clips must be a ClipSet, got None");
  const Index K = this->K(), J = joints();
  weights_ = joint_weights.size() == 0 ? Eigen::VectorXd::Ones(J) : Eigen::VectorXd(joint_weights);
  if (weights_.size() != J) throw_shape("joint_weights", "(" + std::to_string(J) + ",)", "(" + std::to_string(weights_.size()) + ",)");
  check_finite("joint_weights", weights_.data(), J);
  if ((weights_.array() < 0.0).any()) throw std::domain_error("joint_weights must be >= 0");
  if (!(velocity_weight >= 0.0) || !std::isfinite(velocity_weight))
    throw std::domain_error("velocity_weight must be a finite value >= 0, got " + std::to_string(velocity_weight));
  mirrored_.reserve(K);
  for (Index k = 0; k < K; ++k) mirrored_.push_back(mirror_poses(clips_->skeleton(), clips_->poses()[k]));
  table_.resize(K * K);
  parallel_steps(K, threads, progress, K, [J] { return std::vector<double>(std::size_t(6 * J)); },
                 [&](Index c, std::vector<double>& work) {
                   for (Index n = 0; n < K; ++n) table_[c * K + n] = compute(c, play(c, n), work.data());
                 });
  TransitionArrays& T = arrays_;
  for (RowMatrix* m : {&T.dx, &T.dz, &T.dtheta, &T.duration, &T.psi, &T.direction, &T.torso, &T.spin, &T.next_state})
    m->resize(K, K);
  T.gait.resize(std::size_t(K * K));
  for (Index c = 0; c < K; ++c)
    for (Index n = 0; n < K; ++n) {
      const Transition& t = table_[c * K + n];
      const Index o = t.played;
      T.dx(c, n) = t.move.x, T.dz(c, n) = t.move.z, T.dtheta(c, n) = t.move.theta;
      T.duration(c, n) = t.duration, T.psi(c, n) = t.psi;
      T.direction(c, n) = t.move.theta + param(o, kRho);
      T.torso(c, n) = param(o, kTorso), T.spin(c, n) = param(o, kSpin);
      T.next_state(c, n) = double(state_clip(o));
      T.gait[std::size_t(c * K + n)] = gait(o);
    }
}

double MotionModel::param(Index o, ClipParam p) const {
  const Index K = this->K();
  const double v = clips_->params()(o % K, p);
  return (o < K || p == kSpeed) ? v : -v;
}

Index MotionModel::in_frame(Index o) const { return clips_->constraint_frames()(o % K(), 0); }
Index MotionModel::out_frame(Index o) const { return clips_->constraint_frames()(o % K(), 1); }
Index MotionModel::in_foot(Index o) const {
  const Index f = clips_->stance_foot()(o % K(), 0);
  return o < K() ? f : clips_->skeleton().mirror()[f];
}
Index MotionModel::out_foot(Index o) const {
  const Index f = clips_->stance_foot()(o % K(), 1);
  return o < K() ? f : clips_->skeleton().mirror()[f];
}

Index MotionModel::play(Index from, Index next) const {
  if (in_foot(next) == out_foot(from)) return next;
  const Index twin = clips_->mirror_of()[next];
  return twin >= 0 ? twin : next + K();
}

Transition MotionModel::compute(Index from, Index o2, double* work) const {
  const ClipSet& cs = *clips_;
  const Index J = joints();
  const RowMatrix& A = oriented_poses(from);
  const RowMatrix& B = oriented_poses(o2);
  const Index foot = out_foot(from);
  const Index b = out_frame(from), a2 = in_frame(o2);
  Transition t;
  t.played = o2;
  t.before = std::min(b - cs.half(from % K()), a2);
  t.after = std::min(A.rows() - 1 - b, cs.half(o2 % K()) - a2);
  // reorient C' so its planted foot (position and heading) matches C's
  const Index toe = cs.skeleton().first_child(foot);
  double rotation = 0.0;
  if (toe >= 0)
    rotation = heading(A(b, 3 * toe) - A(b, 3 * foot), A(b, 3 * toe + 2) - A(b, 3 * foot + 2)) -
               heading(B(a2, 3 * toe) - B(a2, 3 * foot), B(a2, 3 * toe + 2) - B(a2, 3 * foot + 2));
  GroundPose spin{0.0, 0.0, rotation};
  double moved[3];
  spin.apply(&B(a2, 3 * foot), moved);
  t.move = {A(b, 3 * foot) - moved[0], A(b, 3 * foot + 2) - moved[2], rotation};
  t.duration = double(b - a2) * cs.dt();
  // Psi: weighted squared position and velocity differences over the
  // overlap; C''s frames are moved by t.move (rotation hoisted out of the loops)
  const Index n = t.before + t.after + 1;
  const double c = std::cos(rotation), s = std::sin(rotation), mx = t.move.x, mz = t.move.z;
  const double vw = velocity_weight_ / (cs.dt() * cs.dt());
  const double* w = weights_.data();
  double* prev = work;        // (3 J) differences of the previous overlap frame
  double* diff = work + 3 * J;  // (3 J) differences of this frame
  double psi = 0.0;
  for (Index j = 0; j < n; ++j) {
    const double* a = &A(b - t.before + j, 0);
    const double* q = &B(a2 - t.before + j, 0);
    double pos = 0.0, vel = 0.0;
    for (Index i = 0; i < J; ++i) {
      const double dx = a[3 * i] - (c * q[3 * i] - s * q[3 * i + 2] + mx);
      const double dy = a[3 * i + 1] - q[3 * i + 1];
      const double dz = a[3 * i + 2] - (s * q[3 * i] + c * q[3 * i + 2] + mz);
      diff[3 * i] = dx, diff[3 * i + 1] = dy, diff[3 * i + 2] = dz;
      pos += w[i] * (dx * dx + dy * dy + dz * dz);
      if (j > 0) {
        const double ex = dx - prev[3 * i], ey = dy - prev[3 * i + 1], ez = dz - prev[3 * i + 2];
        vel += w[i] * (ex * ex + ey * ey + ez * ez);
      }
    }
    psi += pos + vw * vel;
    std::swap(prev, diff);
  }
  t.psi = psi;
  return t;
}

void MotionModel::blend_pose(const double* a, const double* b, double w, Index root, double* out) const {
  const Skeleton& sk = clips_->skeleton();
  for (int d = 0; d < 3; ++d) out[3 * root + d] = (1.0 - w) * a[3 * root + d] + w * b[3 * root + d];
  const auto& order = sk.order_from(root);
  const auto& towards = sk.towards(root);
  for (std::size_t i = 1; i < order.size(); ++i) {
    const Index j = order[i], q = towards[j];
    Eigen::Vector3d va, vb;
    for (int d = 0; d < 3; ++d) va[d] = a[3 * j + d] - a[3 * q + d], vb[d] = b[3 * j + d] - b[3 * q + d];
    const Eigen::Vector3d mix = (1.0 - w) * va + w * vb;
    const double length = (1.0 - w) * va.norm() + w * vb.norm();
    const double mn = mix.norm();
    // bone direction interpolated, length interpolated; a degenerate mix
    // (opposite bones) falls back to the linear blend
    const Eigen::Vector3d bone = mn > 1e-12 * (1.0 + length) ? Eigen::Vector3d(mix * (length / mn)) : mix;
    for (int d = 0; d < 3; ++d) out[3 * j + d] = out[3 * q + d] + bone[d];
  }
}

namespace {
double smoothstep(Index j, Index n) {
  if (n <= 1) return 1.0;
  const double s = double(j) / double(n - 1);
  return s * s * (3.0 - 2.0 * s);
}
}  // namespace

BlendFrames MotionModel::blend(Index c, Index next) const {
  const Index K = this->K(), J = joints();
  const auto check_clip = [K](const char* name, Index i) {
    if (i < 0 || i >= K)
      throw std::invalid_argument(std::string(name) + " must be a clip index in [0, " + std::to_string(K) + "), got " +
                                  std::to_string(i));
  };
  check_clip("clip", c);
  check_clip("next_clip", next);
  const Transition& t = transition(c, next);
  const RowMatrix& A = oriented_poses(c);
  const RowMatrix& B = oriented_poses(t.played);
  const Index n = t.before + t.after + 1, b = out_frame(c), a2 = in_frame(t.played);
  BlendFrames out{RowMatrix(n, 3 * J), RowMatrix(n, 3 * J), RowMatrix(n, 3 * J)};
  for (Index j = 0; j < n; ++j) {
    out.from.row(j) = A.row(b - t.before + j);
    for (Index q = 0; q < J; ++q) t.move.apply(&B(a2 - t.before + j, 3 * q), &out.to(j, 3 * q));
    blend_pose(&out.from(j, 0), &out.to(j, 0), smoothstep(j, n), out_foot(c), &out.blended(j, 0));
  }
  return out;
}

Animation MotionModel::synthesize(const std::vector<Index>& sequence, const GroundPose& start) const {
  const Index K = this->K(), J = joints(), n = Index(sequence.size());
  if (n < 1) throw std::invalid_argument("clip_sequence must hold at least one clip, got 0");
  for (Index i = 0; i < n; ++i)
    if (sequence[i] < 0 || sequence[i] >= K)
      throw std::invalid_argument("clip_sequence[" + std::to_string(i) + "] must lie in [0, " + std::to_string(K) +
                                  "), got " + std::to_string(sequence[i]));
  if (!std::isfinite(start.x) || !std::isfinite(start.z) || !std::isfinite(start.theta))
    throw std::domain_error("start_pose must be finite");
  Animation anim;
  anim.played.resize(n);
  anim.played[0] = sequence[0];
  std::vector<Transition> trans(std::max<Index>(n - 1, 0));
  std::vector<double> work(std::size_t(6 * J));
  std::vector<GroundPose> world(n);
  world[0] = start;
  Index F = 0;
  for (Index i = 0; i + 1 < n; ++i) {
    anim.played[i + 1] = play(anim.played[i], sequence[i + 1]);
    trans[i] = anim.played[i] < K ? transition(anim.played[i], sequence[i + 1])
                                  : compute(anim.played[i], anim.played[i + 1], work.data());
    world[i + 1] = world[i] * trans[i].move;
  }
  // frames of clip i: [first_i, last_i] outside the overlaps, then its overlap with i+1
  std::vector<Index> first(n), last(n);
  for (Index i = 0; i < n; ++i) {
    const Index o = anim.played[i];
    first[i] = i == 0 ? 0 : in_frame(o) + trans[i - 1].after + 1;
    last[i] = i + 1 == n ? oriented_poses(o).rows() - 1 : out_frame(o) - trans[i].before - 1;
    F += std::max<Index>(0, last[i] - first[i] + 1) + (i + 1 < n ? trans[i].before + trans[i].after + 1 : 0);
  }
  anim.frames.resize(F, 3 * J);
  anim.contact_foot.resize(F);
  anim.clip_of_frame.resize(F);
  anim.roots.resize(n, 3);
  std::vector<double> wa(3 * J), wb(3 * J);
  Index f = 0;
  for (Index i = 0; i < n; ++i) {
    const Index o = anim.played[i];
    const RowMatrix& P = oriented_poses(o);
    anim.roots.row(i) << world[i].x, world[i].z, world[i].theta;
    for (Index k = first[i]; k <= last[i]; ++k, ++f) {
      for (Index q = 0; q < J; ++q) world[i].apply(&P(k, 3 * q), &anim.frames(f, 3 * q));
      anim.contact_foot[f] = k <= clips_->half(o % K) ? in_foot(o) : out_foot(o);
      anim.clip_of_frame[f] = state_clip(o);
    }
    if (i + 1 == n) break;
    const Transition& t = trans[i];
    const Index o2 = anim.played[i + 1], m = t.before + t.after + 1;
    const RowMatrix& Q = oriented_poses(o2);
    const Index b = out_frame(o), a2 = in_frame(o2);
    for (Index j = 0; j < m; ++j, ++f) {
      for (Index q = 0; q < J; ++q) {
        world[i].apply(&P(b - t.before + j, 3 * q), &wa[3 * q]);
        world[i + 1].apply(&Q(a2 - t.before + j, 3 * q), &wb[3 * q]);
      }
      blend_pose(wa.data(), wb.data(), smoothstep(j, m), out_foot(o), &anim.frames(f, 0));
      anim.contact_foot[f] = out_foot(o);
      anim.clip_of_frame[f] = state_clip(j < t.before ? o : o2);
    }
  }
  return anim;
}

}  // namespace directable
