#pragma once
// Motion clips (Treuille thesis sec. 5.1): each clip is one walk cycle of two
// half-cycles C_in and C_out, each with one foot plant and a constraint frame
// at mid-stance. Poses are joint positions in the clip's root frame (the
// root's ground projection at frame 0 is the origin, the root faces +z, y is
// up, x lateral).
#include <memory>
#include <string>
#include <vector>

#include "directable/core/types.hpp"
#include "directable/models/characters/skeleton.hpp"

namespace directable {

//! Columns of ClipSet::params.
enum ClipParam : Index { kSpeed = 0, kTurn = 1, kRho = 2, kTorso = 3, kSpin = 4, kClipParams = 5 };

class ClipSet {
 public:
  using IndexPairs = Eigen::Matrix<Index, Eigen::Dynamic, 2, Eigen::RowMajor>;
  //! poses: K clips of (m_k, 3 J) row-major joint positions (metres);
  //! constraint_frames (K, 2): mid-stance frame of C_in and C_out (a < b);
  //! stance_foot (K, 2): the joint planted in C_in and in C_out (partners
  //! under the skeleton's mirror); gait (K,) indices into gait_names;
  //! params (K, 5): speed (m/s), turn (rad per cycle), rho (motion direction
  //! relative to the root, rad), torso (rad), spin (rad/s); mirror_of (K,)
  //! or empty: the clip that is each clip's mirror image (-1: none);
  //! contacts (K, 4) or empty: first and last frame of the C_in and C_out
  //! plants (default: the half-cycles [0, h] and [h, m-1], h = (a+b)/2); the
  //! stance foot may move at most foot_tolerance metres during a plant.
  ClipSet(std::shared_ptr<const Skeleton> skeleton, std::vector<RowMatrix> poses,
          const Eigen::Ref<const IndexPairs>& constraint_frames, const Eigen::Ref<const IndexPairs>& stance_foot,
          std::vector<Index> gait, std::vector<std::string> gait_names, const Eigen::Ref<const RowMatrix>& params,
          std::vector<Index> mirror_of = {}, double dt = 1.0 / 30.0, double foot_tolerance = 1e-6,
          const Eigen::Ref<const Eigen::Matrix<Index, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>& contacts =
              Eigen::Matrix<Index, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>());

  Index clips() const { return Index(poses_.size()); }
  Index joints() const { return skeleton_->joints(); }
  const Skeleton& skeleton() const { return *skeleton_; }
  std::shared_ptr<const Skeleton> skeleton_ptr() const { return skeleton_; }
  const std::vector<RowMatrix>& poses() const { return poses_; }  //!< K x (m_k, 3 J)
  const IndexPairs& constraint_frames() const { return constraint_frames_; }
  const IndexPairs& stance_foot() const { return stance_foot_; }
  const std::vector<Index>& gait() const { return gait_; }
  const std::vector<std::string>& gait_names() const { return gait_names_; }
  const RowMatrix& params() const { return params_; }  //!< (K, 5)
  const std::vector<Index>& mirror_of() const { return mirror_of_; }
  double dt() const { return dt_; }
  //! Frame where C_in ends and C_out begins: (a + b) / 2.
  Index half(Index k) const { return (constraint_frames_(k, 0) + constraint_frames_(k, 1)) / 2; }
  Index frames(Index k) const { return poses_[k].rows(); }

 private:
  std::shared_ptr<const Skeleton> skeleton_;
  std::vector<RowMatrix> poses_;
  IndexPairs constraint_frames_, stance_foot_;
  std::vector<Index> gait_;
  std::vector<std::string> gait_names_;
  RowMatrix params_;  //!< (K, 5)
  std::vector<Index> mirror_of_;
  double dt_;
};

//! Pose sequence (m, 3 J) reflected through the sagittal plane (x -> -x) with
//! left and right joints swapped; mirroring twice is the identity.
RowMatrix mirror_poses(const Skeleton& skeleton, const Eigen::Ref<const RowMatrix>& poses);

//! Ranges and counts for synthetic clips. Each combination of turn, torso,
//! spin and side-step is generated in both chiralities (left foot first and
//! its mirror). counts[g] < 0 means "every combination" for gait g;
//! otherwise counts[g] clips with the combinations first and then parameters
//! drawn uniformly within the ranges (seeded); a mirror pair may straddle
//! two adjacent gaits, as the thesis shares clips between gaits.
struct SyntheticClipSpec {
  std::vector<std::string> gaits;    //!< from stand, slow, walk, fast, run
  std::vector<double> turns;         //!< heading change per cycle, rad
  std::vector<double> torsos;        //!< torso angle relative to the root, rad
  std::vector<double> spins;         //!< extra root rotation rate, rad/s
  std::vector<double> sidesteps;     //!< leg swing direction relative to the root, rad
  std::vector<Index> counts;         //!< per gait, -1: all combinations
  unsigned long long seed = 0;
  double dt = 1.0 / 30.0;            //!< frame time, s
};

//! Synthetic clips on a skeleton with the synthetic walker's topology; the
//! stance foot is exactly fixed during each half-cycle (the skeleton is
//! placed from the planted ankle).
ClipSet synthetic_clips(std::shared_ptr<const Skeleton> skeleton, const SyntheticClipSpec& spec);

//! The gait names synthetic_clips knows, in order of speed.
const std::vector<std::string>& synthetic_gait_names();

}  // namespace directable
