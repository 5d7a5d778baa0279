#include "directable/models/characters/clips.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "directable/core/errors.hpp"

namespace directable {

namespace {

std::string idx(Index k) { return "[" + std::to_string(k) + "]"; }

//! The ground-plane rotation of eq. 5.2: (x, z) -> (c x - s z, s x + c z).
Eigen::Vector3d rot(double theta, const Eigen::Vector3d& p) {
  const double c = std::cos(theta), s = std::sin(theta);
  return {c * p.x() - s * p.z(), p.y(), s * p.x() + c * p.z()};
}

}  // namespace

ClipSet::ClipSet(std::shared_ptr<const Skeleton> skeleton, std::vector<RowMatrix> poses,
                 const Eigen::Ref<const IndexPairs>& constraint_frames, const Eigen::Ref<const IndexPairs>& stance_foot,
                 std::vector<Index> gait, std::vector<std::string> gait_names, const Eigen::Ref<const RowMatrix>& params,
                 std::vector<Index> mirror_of, double dt, double foot_tolerance,
                 const Eigen::Ref<const Eigen::Matrix<Index, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>& contacts)
    : skeleton_(std::move(skeleton)),
      poses_(std::move(poses)),
      constraint_frames_(constraint_frames),
      stance_foot_(stance_foot),
      gait_(std::move(gait)),
      gait_names_(std::move(gait_names)),
      params_(params),
      mirror_of_(std::move(mirror_of)),
      dt_(dt) {
  if (!skeleton_) throw std::invalid_argument("skeleton must be a Skeleton, got None");
  const Index K = clips(), J = joints();
  if (K < 1) throw std::invalid_argument("poses must hold at least one clip, got 0");
  if (!(dt > 0.0) || !std::isfinite(dt)) throw std::domain_error("dt must be a positive frame time, got " + std::to_string(dt));
  if (!(foot_tolerance >= 0.0))
    throw std::domain_error("foot_tolerance must be >= 0, got " + std::to_string(foot_tolerance));
  check_shape("constraint_frames", constraint_frames.rows(), constraint_frames.cols(), K, 2);
  check_shape("stance_foot", stance_foot.rows(), stance_foot.cols(), K, 2);
  check_shape("params", params.rows(), params.cols(), K, kClipParams);
  check_finite("params", params_.data(), params_.size());
  if (Index(gait_.size()) != K) throw_shape("gait", "(" + std::to_string(K) + ",)", "(" + std::to_string(gait_.size()) + ",)");
  if (mirror_of_.empty()) mirror_of_.assign(K, -1);
  if (Index(mirror_of_.size()) != K)
    throw_shape("mirror_of", "(" + std::to_string(K) + ",)", "(" + std::to_string(mirror_of_.size()) + ",)");
  const bool has_contacts = contacts.size() > 0;
  if (has_contacts) check_shape("contacts", contacts.rows(), contacts.cols(), K, 4);
  for (Index k = 0; k < K; ++k) {
    const RowMatrix& P = poses_[k];
    if (P.cols() != 3 * J)
      throw std::invalid_argument("poses" + idx(k) + " must have shape (m, " + std::to_string(J) +
                                  ", 3) like the skeleton (J = " + std::to_string(J) + "), got (" +
                                  std::to_string(P.rows()) + ", " + std::to_string(P.cols() / 3) + ", 3)");
    check_finite("poses" + idx(k), P.data(), P.size());
    const Index m = P.rows(), a = constraint_frames_(k, 0), b = constraint_frames_(k, 1);
    if (!(0 <= a && a < b && b < m))
      throw std::invalid_argument("constraint_frames" + idx(k) + " must satisfy 0 <= a < b < m = " + std::to_string(m) +
                                  " (frames of the clip), got (" + std::to_string(a) + ", " + std::to_string(b) + ")");
    for (int half = 0; half < 2; ++half) {
      const Index f = stance_foot_(k, half);
      if (f < 0 || f >= J)
        throw std::invalid_argument("stance_foot" + idx(k) + " must be joint indices in [0, " + std::to_string(J) +
                                    "), got " + std::to_string(f));
    }
    if (skeleton_->mirror()[stance_foot_(k, 0)] != stance_foot_(k, 1) || stance_foot_(k, 0) == stance_foot_(k, 1))
      throw std::invalid_argument("stance_foot" + idx(k) + " must plant one foot in C_in and its mirror partner in C_out, got (" +
                                  std::to_string(stance_foot_(k, 0)) + ", " + std::to_string(stance_foot_(k, 1)) + ")");
    if (gait_[k] < 0 || gait_[k] >= Index(gait_names_.size()))
      throw std::invalid_argument("gait" + idx(k) + " must index the " + std::to_string(gait_names_.size()) +
                                  " gait names, got " + std::to_string(gait_[k]));
    if (mirror_of_[k] < -1 || mirror_of_[k] >= K)
      throw std::invalid_argument("mirror_of" + idx(k) + " must be -1 or a clip index, got " + std::to_string(mirror_of_[k]));
    const Index h = half(k);
    Index ranges[2][2] = {{0, h}, {h, m - 1}};
    if (has_contacts) ranges[0][0] = contacts(k, 0), ranges[0][1] = contacts(k, 1), ranges[1][0] = contacts(k, 2), ranges[1][1] = contacts(k, 3);
    for (int half_i = 0; half_i < 2; ++half_i) {
      const Index c = constraint_frames_(k, half_i), foot = stance_foot_(k, half_i);
      const Index first = ranges[half_i][0], last = ranges[half_i][1];
      if (!(0 <= first && first <= c && c <= last && last < m))
        throw std::invalid_argument("contacts" + idx(k) + " must contain the constraint frame " + std::to_string(c) +
                                    " within the clip's " + std::to_string(m) + " frames, got [" + std::to_string(first) +
                                    ", " + std::to_string(last) + "]");
      for (Index f = first; f <= last; ++f) {
        const double moved = (P.block(f, 3 * foot, 1, 3) - P.block(c, 3 * foot, 1, 3)).norm();
        if (moved > foot_tolerance)
          throw std::domain_error("poses" + idx(k) + ": the stance foot (joint " + std::to_string(foot) + ") moves " +
                                  std::to_string(moved) + " m during its plant (frame " + std::to_string(f) +
                                  "), more than foot_tolerance = " + std::to_string(foot_tolerance) + " m");
      }
    }
  }
  for (Index k = 0; k < K; ++k) {
    const Index t = mirror_of_[k];
    if (t >= 0 && (mirror_of_[t] != k || stance_foot_(t, 0) != stance_foot_(k, 1)))
      throw std::invalid_argument("mirror_of" + idx(k) + " = " + std::to_string(t) +
                                  " must be a clip that names it back and plants the other foot first");
  }
}

RowMatrix mirror_poses(const Skeleton& skeleton, const Eigen::Ref<const RowMatrix>& poses) {
  const Index J = skeleton.joints();
  check_shape("poses", poses.rows(), poses.cols(), poses.rows(), 3 * J);
  for (Index f = 0; f < poses.rows(); ++f) check_finite("poses", poses.row(f).data(), poses.cols(), f * poses.cols());
  RowMatrix out(poses.rows(), poses.cols());
  const auto& mirror = skeleton.mirror();
  for (Index f = 0; f < poses.rows(); ++f)
    for (Index j = 0; j < J; ++j) {
      const Index s = mirror[j];
      out(f, 3 * j) = -poses(f, 3 * s);
      out(f, 3 * j + 1) = poses(f, 3 * s + 1);
      out(f, 3 * j + 2) = poses(f, 3 * s + 2);
    }
  return out;
}

const std::vector<std::string>& synthetic_gait_names() {
  static const std::vector<std::string> names = {"stand", "slow", "walk", "fast", "run"};
  return names;
}

namespace {

//! Timing and amplitudes of one synthetic gait.
struct GaitShape {
  double cycle;   //!< s
  double swing;   //!< thigh amplitude, rad
  double knee;    //!< swing-knee flexion, rad
  double lean;    //!< forward torso lean, rad
};

const GaitShape kGaits[] = {
    {1.20, 0.05, 0.10, 0.00},  // stand: weight shifts in place
    {1.30, 0.22, 0.50, 0.02},  // slow
    {1.10, 0.32, 0.70, 0.04},  // walk
    {0.95, 0.42, 0.90, 0.08},  // fast
    {0.75, 0.55, 1.30, 0.18},  // run
};

struct Combo {
  double turn, torso, spin, sidestep;
};

//! One left-foot-first clip: bone vectors from the gait's phase, joints
//! placed from the planted ankle so the stance foot is exactly fixed.
RowMatrix generate_clip(const Skeleton& sk, const GaitShape& g, const Combo& c, double dt, Index* half_out,
                        double* turn_out) {
  const Index J = sk.joints();
  const Index h = std::max<Index>(4, 2 * Index(std::lround(g.cycle / (4.0 * dt))));
  const Index m = 2 * h + 1;
  const double T = double(2 * h) * dt;
  const double total_turn = c.turn + c.spin * T;
  auto phi = [&](double t) { return total_turn * t; };
  using WJ = WalkerJoints;
  const auto& off = sk.offsets();
  auto len = [&](Index j) { return off.row(j).norm(); };
  RowMatrix P(m, 3 * J);
  std::vector<Eigen::Vector3d> bone(J), pos(J);
  const Eigen::Vector3d up(0, 1, 0);
  Eigen::Vector3d plant;
  for (Index f = 0; f < m; ++f) {
    const double t = double(f) / double(2 * h);
    const double heading = phi(t), beta = c.sidestep + c.turn * t, torso = heading + c.torso;
    const Eigen::Vector3d fwd = rot(beta, {0, 0, 1});
    for (int side = 0; side < 2; ++side) {  // 0 left (stance first), 1 right
      const double a = (side == 0 ? 1.0 : -1.0) * g.swing * std::cos(2.0 * M_PI * t);
      const bool swinging = side == 0 ? t > 0.5 : t < 0.5;
      const double s = side == 0 ? (t > 0.5 ? 2.0 * t - 1.0 : 2.0 * t) : (t < 0.5 ? 2.0 * t : 2.0 * t - 1.0);
      const double knee = (swinging ? g.knee : 0.1 * g.swing) * std::sin(M_PI * s);
      const Index hip = side == 0 ? WJ::l_hip : WJ::r_hip;
      // foot heading: fixed at mid-stance while planted, swept between plants
      const double stance_mid = side == 0 ? 0.25 : 0.75;
      double foot_heading;
      if (!swinging) foot_heading = phi(stance_mid);
      else {
        const double from = side == 0 ? 0.25 : -0.25, to = from + 1.0;
        foot_heading = phi(from) + (phi(to) - phi(from)) * s;
      }
      bone[hip] = rot(heading, off.row(hip).transpose());
      bone[hip + 1] = len(hip + 1) * (std::sin(a) * fwd - std::cos(a) * up);
      bone[hip + 2] = len(hip + 2) * (std::sin(a - knee) * fwd - std::cos(a - knee) * up);
      bone[hip + 3] = rot(foot_heading, off.row(hip + 3).transpose());
      // arms swing against the leg of their side
      const Index shoulder = side == 0 ? 5 : 8;
      const Eigen::Vector3d tf = rot(torso, {0, 0, 1});
      const double arm = -0.8 * a;
      bone[shoulder] = rot(torso, off.row(shoulder).transpose());
      bone[shoulder + 1] = len(shoulder + 1) * (std::sin(arm) * tf - std::cos(arm) * up);
      bone[shoulder + 2] = len(shoulder + 2) * (std::sin(arm + 0.3) * tf - std::cos(arm + 0.3) * up);
    }
    for (Index j : {Index(1), Index(2), Index(3), Index(4)}) {
      const double l = len(j);
      const double lean = g.lean * (j == 1 ? 0.5 : 1.0);
      bone[j] = rot(j == 1 ? heading : torso, Eigen::Vector3d(0, l * std::cos(lean), l * std::sin(lean)));
    }
    // place the joints from the planted ankle: left on [0, h], right after
    const Index root = f <= h ? WJ::l_ankle : WJ::r_ankle;
    if (f == 0) plant = Eigen::Vector3d(0, len(WJ::l_toe) * 0.0 + 0.06, 0);
    pos[root] = plant;
    const auto& order = sk.order_from(root);
    const auto& towards = sk.towards(root);
    const auto& parents = sk.parents();
    for (std::size_t i = 1; i < order.size(); ++i) {
      const Index j = order[i], q = towards[j];
      pos[j] = parents[j] == q ? Eigen::Vector3d(pos[q] + bone[j]) : Eigen::Vector3d(pos[q] - bone[q]);
    }
    if (f == h) plant = pos[WJ::r_ankle];  // the right foot lands where the left-rooted frame puts it
    for (Index j = 0; j < J; ++j) P.block(f, 3 * j, 1, 3) = pos[j].transpose();
  }
  // the clip's root frame: the pelvis' ground projection at frame 0
  const double x0 = P(0, 3 * WJ::pelvis), z0 = P(0, 3 * WJ::pelvis + 2);
  for (Index f = 0; f < m; ++f)
    for (Index j = 0; j < J; ++j) P(f, 3 * j) -= x0, P(f, 3 * j + 2) -= z0;
  *half_out = h;
  *turn_out = total_turn;
  return P;
}

}  // namespace

ClipSet synthetic_clips(std::shared_ptr<const Skeleton> skeleton, const SyntheticClipSpec& spec) {
  if (!skeleton) throw std::invalid_argument("skeleton must be a Skeleton, got None");
  const Skeleton walker = synthetic_walker();
  if (skeleton->parents() != walker.parents())
    throw std::invalid_argument("skeleton must have the synthetic walker's topology (19 joints, parents " 
                                "of synthetic_walker()), got " + std::to_string(skeleton->joints()) + " joints");
  const auto& names = synthetic_gait_names();
  if (spec.gaits.empty()) throw std::invalid_argument("gaits must name at least one gait, got none");
  const std::pair<const char*, const std::vector<double>*> ranges[] = {
      {"turns", &spec.turns}, {"torsos", &spec.torsos}, {"spins", &spec.spins}, {"sidesteps", &spec.sidesteps}};
  for (const auto& [name, v] : ranges) {
    if (v->empty()) throw std::invalid_argument(std::string(name) + " must hold at least one value, got none");
    check_finite(name, v->data(), Index(v->size()));
  }
  if (!(spec.dt > 0.0)) throw std::domain_error("dt must be > 0, got " + std::to_string(spec.dt));
  if (!spec.counts.empty() && spec.counts.size() != spec.gaits.size())
    throw std::invalid_argument("counts must give one count per gait (" + std::to_string(spec.gaits.size()) +
                                "), got " + std::to_string(spec.counts.size()));
  std::vector<Index> gait_ids;
  for (const auto& gname : spec.gaits) {
    auto it = std::find(names.begin(), names.end(), gname);
    if (it == names.end())
      throw std::invalid_argument("gaits: unknown gait '" + gname + "', expected one of stand, slow, walk, fast, run");
    gait_ids.push_back(Index(it - names.begin()));
  }
  std::vector<Combo> combos;
  for (double turn : spec.turns)
    for (double torso : spec.torsos)
      for (double spin : spec.spins)
        for (double side : spec.sidesteps) combos.push_back({turn, torso, spin, side});
  // one label per clip, gait by gait; clips are generated in mirror pairs
  std::vector<Index> labels;
  std::vector<Index> first_of_gait;
  for (std::size_t g = 0; g < gait_ids.size(); ++g) {
    const Index n = spec.counts.empty() || spec.counts[g] < 0 ? 2 * Index(combos.size()) : spec.counts[g];
    if (n < 0) throw std::invalid_argument("counts must be >= 0");
    first_of_gait.push_back(Index(labels.size()));
    for (Index i = 0; i < n; ++i) labels.push_back(Index(g));
  }
  const Index K = Index(labels.size());
  if (K == 0) throw std::invalid_argument("counts must ask for at least one clip");
  std::mt19937_64 rng(spec.seed);
  auto span = [](const std::vector<double>& v) { return std::make_pair(*std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())); };
  auto draw = [&](const std::vector<double>& v) {
    auto [lo, hi] = span(v);
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  std::vector<RowMatrix> poses(K);
  ClipSet::IndexPairs frames(K, 2), feet(K, 2);
  RowMatrix params(K, kClipParams);
  std::vector<Index> gait(K), mirror_of(K, -1);
  std::vector<Index> used(gait_ids.size(), 0);
  using WJ = WalkerJoints;
  for (Index k = 0; k < K; k += 2) {
    const Index g = labels[k];
    const Index n_in_gait = used[g];
    Combo c = n_in_gait / 2 < Index(combos.size()) ? combos[n_in_gait / 2]
                                                    : Combo{draw(spec.turns), draw(spec.torsos), draw(spec.spins), draw(spec.sidesteps)};
    Index h;
    double turn;
    RowMatrix P = generate_clip(*skeleton, kGaits[gait_ids[g]], c, spec.dt, &h, &turn);
    const Index m = P.rows();
    const double dx = P(m - 1, 3 * WJ::pelvis), dz = P(m - 1, 3 * WJ::pelvis + 2);
    const double speed = std::hypot(dx, dz) / (double(m - 1) * spec.dt);
    const double rho = std::hypot(dx, dz) > 1e-9 ? std::atan2(-dx, dz) : 0.0;
    const double row[kClipParams] = {speed, turn, rho, c.torso, c.spin};
    for (Index s = 0; s < 2 && k + s < K; ++s) {
      const Index kk = k + s;
      poses[kk] = s == 0 ? P : mirror_poses(*skeleton, P);
      frames(kk, 0) = h / 2;
      frames(kk, 1) = h + h / 2;
      feet(kk, 0) = s == 0 ? WJ::l_ankle : WJ::r_ankle;
      feet(kk, 1) = s == 0 ? WJ::r_ankle : WJ::l_ankle;
      gait[kk] = gait_ids[labels[kk]];
      for (Index p = 0; p < kClipParams; ++p) params(kk, p) = (s == 0 || p == kSpeed) ? row[p] : -row[p];
      ++used[labels[kk]];
    }
    if (k + 1 < K) mirror_of[k] = k + 1, mirror_of[k + 1] = k;
  }
  return ClipSet(skeleton, std::move(poses), frames, feet, std::move(gait), names, params, std::move(mirror_of), spec.dt);
}

}  // namespace directable
