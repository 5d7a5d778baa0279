#include "directable/models/characters/skeleton.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "directable/core/errors.hpp"

namespace directable {

Skeleton::Skeleton(std::vector<Index> parents, const Eigen::Ref<const RowMatrix>& offsets, std::vector<Index> mirror)
    : parents_(std::move(parents)), offsets_(offsets), mirror_(std::move(mirror)) {
  const Index J = joints();
  if (J < 1) throw std::invalid_argument("parents must name at least one joint, got 0");
  check_shape("offsets", offsets.rows(), offsets.cols(), J, 3);
  check_finite("offsets", offsets_.data(), offsets_.size());
  if (parents_[0] != -1)
    throw std::invalid_argument("parents[0] must be -1 (the root), got " + std::to_string(parents_[0]));
  for (Index j = 1; j < J; ++j)
    if (parents_[j] < 0 || parents_[j] >= j)
      throw std::invalid_argument("parents[" + std::to_string(j) + "] must lie in [0, " + std::to_string(j) +
                                  ") (parents listed before children), got " + std::to_string(parents_[j]));
  std::vector<std::vector<Index>> adj(J), children(J);
  first_child_.assign(J, -1);
  for (Index j = 1; j < J; ++j) {
    adj[j].push_back(parents_[j]);
    adj[parents_[j]].push_back(j);
    children[parents_[j]].push_back(j);
    if (first_child_[parents_[j]] < 0) first_child_[parents_[j]] = j;
  }
  if (mirror_.empty()) {
    // The partner of j is the child of its parent's partner whose offset is
    // j's reflected (x -> -x); a joint on the mid-plane is its own partner.
    const double tol = 1e-9 * (1.0 + offsets_.cwiseAbs().maxCoeff());
    mirror_.assign(J, -1);
    mirror_[0] = 0;
    for (Index j = 1; j < J; ++j) {
      const Eigen::RowVector3d reflected(-offsets_(j, 0), offsets_(j, 1), offsets_(j, 2));
      for (Index c : children[mirror_[parents_[j]]])
        if ((offsets_.row(c) - reflected).cwiseAbs().maxCoeff() <= tol) {
          mirror_[j] = c;
          break;
        }
      if (mirror_[j] < 0)
        throw std::invalid_argument("offsets: joint " + std::to_string(j) +
                                    " has no mirror partner (a child of its parent's partner with offset x -> -x); "
                                    "pass mirror= explicitly");
    }
  } else {
    if (Index(mirror_.size()) != J)
      throw std::invalid_argument("mirror must have " + std::to_string(J) + " entries, got " +
                                  std::to_string(mirror_.size()));
    for (Index j = 0; j < J; ++j)
      if (mirror_[j] < 0 || mirror_[j] >= J || mirror_[mirror_[j]] != j)
        throw std::invalid_argument("mirror must be an involution on [0, " + std::to_string(J) + "), entry " +
                                    std::to_string(j) + " is " + std::to_string(mirror_[j]));
  }
  order_.assign(J, {});
  towards_.assign(J, std::vector<Index>(J, -1));
  for (Index r = 0; r < J; ++r) {
    auto& order = order_[r];
    order.reserve(J);
    order.push_back(r);
    for (std::size_t i = 0; i < order.size(); ++i)
      for (Index n : adj[order[i]])
        if (n != r && towards_[r][n] < 0) {
          towards_[r][n] = order[i];
          order.push_back(n);
        }
  }
}

Skeleton synthetic_walker() {
  std::vector<Index> parents = {-1, 0, 1, 2, 3, 2, 5, 6, 2, 8, 9, 0, 11, 12, 13, 0, 15, 16, 17};
  RowMatrix off(19, 3);
  off << 0, 0.95, 0,  // pelvis (rest position)
      0, 0.12, 0,     // spine
      0, 0.20, 0,     // chest
      0, 0.18, 0,     // neck
      0, 0.12, 0,     // head
      0.18, 0.12, 0,  // l_shoulder
      0, -0.28, 0,    // l_elbow
      0, -0.25, 0,    // l_hand
      -0.18, 0.12, 0, // r_shoulder
      0, -0.28, 0,    // r_elbow
      0, -0.25, 0,    // r_hand
      0.10, -0.05, 0, // l_hip
      0, -0.42, 0,    // l_knee
      0, -0.42, 0,    // l_ankle
      0, -0.06, 0.14, // l_toe
      -0.10, -0.05, 0,// r_hip
      0, -0.42, 0,    // r_knee
      0, -0.42, 0,    // r_ankle
      0, -0.06, 0.14; // r_toe
  return Skeleton(parents, off);
}

}  // namespace directable
