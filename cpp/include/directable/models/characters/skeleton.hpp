#pragma once
// A kinematic skeleton for clip blending (Treuille thesis sec. 5.1): joint
// parents, rest offsets, the left/right partner of every joint (mirroring)
// and, for every joint, the tree re-rooted at it (blending with the stance
// foot as the root). Axes: y up, a clip's root faces +z, x is lateral.
#include <vector>

#include "directable/core/types.hpp"

namespace directable {

class Skeleton {
 public:
  //! parents (J,): parents[0] = -1 and parents[j] < j otherwise; offsets
  //! (J, 3): the rest offset of each joint from its parent (the root's is its
  //! rest position); mirror (J,) or empty: the partner of each joint under
  //! x -> -x, found from the offsets when empty.
  Skeleton(std::vector<Index> parents, const Eigen::Ref<const RowMatrix>& offsets, std::vector<Index> mirror = {});

  Index joints() const { return Index(parents_.size()); }
  const std::vector<Index>& parents() const { return parents_; }
  const RowMatrix& offsets() const { return offsets_; }  //!< (J, 3) metres
  const std::vector<Index>& mirror() const { return mirror_; }
  //! First child of joint j (-1 for a leaf): the toe that orients a foot.
  Index first_child(Index j) const { return first_child_[j]; }
  //! Joints in breadth-first order from `root` (root first) and each
  //! joint's neighbour towards the root in that re-rooted tree.
  const std::vector<Index>& order_from(Index root) const { return order_[root]; }
  const std::vector<Index>& towards(Index root) const { return towards_[root]; }

 private:
  std::vector<Index> parents_;
  RowMatrix offsets_;  //!< (J, 3)
  std::vector<Index> mirror_, first_child_;
  std::vector<std::vector<Index>> order_, towards_;  //!< (J, J) each
};

//! The synthetic biped of 19 joints used by synthetic_clips: pelvis, spine,
//! chest, neck, head, two arms (shoulder, elbow, hand), two legs (hip,
//! knee, ankle, toe); left is +x.
Skeleton synthetic_walker();

//! Joint indices of the synthetic walker's feet (ankles) and hips.
struct WalkerJoints {
  static constexpr Index pelvis = 0, chest = 2, l_hip = 11, l_ankle = 13, l_toe = 14, r_hip = 15, r_ankle = 17,
                         r_toe = 18;
};

}  // namespace directable
