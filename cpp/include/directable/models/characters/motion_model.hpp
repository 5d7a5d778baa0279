#pragma once
// The motion model of Treuille thesis sec. 5.1: any clip may follow any
// other. Blending from C to C' (Fig. 5.1-5.2): mirror C' when its C'_in plants
// the other foot than C_out, overlap the constraint frames, reorient C'
// rigidly in the ground plane so its stance foot coincides with C's at the
// constraint frame, and blend C_out into C'_in with the stance foot as the
// root of the skeleton (bone directions and lengths interpolated outward
// from the foot), so the planted foot cannot skate.
//
// Clips are "oriented": index o < K is clip o as given, K + k its mirror
// image (used only when clip k has no mirror partner in the set).
#include <memory>
#include <vector>

#include "directable/core/progress.hpp"
#include "directable/core/types.hpp"
#include "directable/models/characters/clips.hpp"

namespace directable {

//! A rigid motion of the ground plane: p -> rot(theta) p + (x, z), with the
//! rotation of eq. 5.2, (x, z) -> (cos x - sin z, sin x + cos z).
struct GroundPose {
  double x = 0.0, z = 0.0, theta = 0.0;
  //! this o other (apply `other` first)
  GroundPose operator*(const GroundPose& other) const;
  void apply(const double* p, double* out) const;  //!< a 3-vector (y unchanged)
};

//! One transition C -> C' as the blend plays it.
struct Transition {
  Index played = -1;  //!< oriented clip that plays C' (C' or its mirror)
  GroundPose move;    //!< C''s root frame in C's root frame: (dx, dz, dtheta)
  double duration = 0.0;  //!< s, from C's first frame to C''s first frame
  double psi = 0.0;       //!< physics cost of the blend (eq. 5.5)
  Index before = 0, after = 0;  //!< overlap frames before and after the aligned constraint frames
};

//! A synthesised animation.
struct Animation {
  RowMatrix frames;                 //!< (F, 3 J) world joint positions, m
  std::vector<Index> contact_foot;  //!< (F,) planted joint of each frame
  std::vector<Index> clip_of_frame; //!< (F,) clip index (as the state sees it) of each frame
  RowMatrix roots;                  //!< (n, 3) world (x, z, theta) of each clip's root frame
  std::vector<Index> played;        //!< (n,) oriented clip that played each step
};

//! Blend of one transition over its overlap: the blended frames and the two
//! clips they start and end at, all in C's root frame.
struct BlendFrames {
  RowMatrix blended, from, to;  //!< (n, 3 J) each
};

//! The transition table as (K, K) row-major arrays, rows C and columns the
//! asked-for C', for the scans over every next clip (contiguous per row).
struct TransitionArrays {
  RowMatrix dx, dz, dtheta;  //!< (K, K) C''s root frame in C's, m, m, rad
  RowMatrix duration;        //!< (K, K) s
  RowMatrix psi;             //!< (K, K) physics cost of the blend, m^2
  RowMatrix direction;       //!< (K, K) dtheta + rho of the clip that plays: its motion direction in C's frame, rad
  RowMatrix torso, spin;     //!< (K, K) tau (rad) and omega (rad/s) of the clip that plays
  RowMatrix next_state;      //!< (K, K) the clip the state holds next, as a double (the state's column 0)
  std::vector<Index> gait;   //!< (K K) gait of the clip that plays
};

class MotionModel {
 public:
  //! joint_weights (J,) or empty (ones) and velocity_weight (s^2) weigh the
  //! squared position and velocity differences of Psi.
  MotionModel(std::shared_ptr<const ClipSet> clips, const Eigen::Ref<const Eigen::VectorXd>& joint_weights,
              double velocity_weight, int threads = 0, const ProgressFn* progress = nullptr);

  const ClipSet& clips() const { return *clips_; }
  std::shared_ptr<const ClipSet> clips_ptr() const { return clips_; }
  Index K() const { return clips_->clips(); }
  Index joints() const { return clips_->joints(); }
  const Transition& transition(Index c, Index next) const { return table_[c * K() + next]; }
  const TransitionArrays& arrays() const { return arrays_; }
  //! Clip parameters of an oriented clip (mirrored for o >= K).
  double param(Index oriented, ClipParam p) const;
  Index gait(Index oriented) const { return clips_->gait()[oriented % K()]; }
  //! The clip a state holds after playing an oriented clip.
  Index state_clip(Index oriented) const { return oriented % K(); }
  const RowMatrix& oriented_poses(Index o) const { return o < K() ? clips_->poses()[o] : mirrored_[o - K()]; }
  //! The next oriented clip after oriented clip `from` when `next` is asked for.
  Index play(Index from, Index next) const;
  //! Blend of clip c (as given) into `next`.
  BlendFrames blend(Index c, Index next) const;
  //! Animation of a clip sequence from a world start pose.
  Animation synthesize(const std::vector<Index>& sequence, const GroundPose& start) const;
  const Eigen::VectorXd& joint_weights() const { return weights_; }
  double velocity_weight() const { return velocity_weight_; }

 private:
  //! work: 6 J doubles of scratch (the caller's, one per thread).
  Transition compute(Index from, Index next_oriented, double* work) const;
  Index in_frame(Index o) const;
  Index out_frame(Index o) const;
  Index in_foot(Index o) const;
  Index out_foot(Index o) const;
  //! The blended pose: stance foot `root` at (1-w) a + w b, bones blended outward.
  void blend_pose(const double* a, const double* b, double w, Index root, double* out) const;

  std::shared_ptr<const ClipSet> clips_;
  std::vector<RowMatrix> mirrored_;  //!< K x (m_k, 3 J): mirror image of every clip
  Eigen::VectorXd weights_;          //!< (J,)
  double velocity_weight_;
  std::vector<Transition> table_;    //!< (K * K)
  TransitionArrays arrays_;
};

}  // namespace directable
