#pragma once
// Path editing of Jeon & Choi sec. 3.6 and the target pose of Fig. 5.
#include <Eigen/Core>
#include <vector>

#include "directable/core/sequence.hpp"

namespace directable {

//! Temporal re-parameterisation (eq. 20-24): the n+1 points of `out` lie on
//! the polyline `path` (m+1 x 3, m >= 1) at arc lengths proportional to the
//! cumulative step lengths of `reference` (n+1 x 3), from path's first point
//! to its last. Eq. 20 prints squared step lengths; plain lengths are used
//! (squares would not add up to arc length). A reference that does not move
//! gives equal steps.
void retime_path(const Eigen::Ref<const RowMatrix>& path, const Eigen::Ref<const RowMatrix>& reference,
                 Eigen::Ref<RowMatrix> out);

//! (1 - weight) path + weight curve, where the curve is the Newton-form
//! interpolating polynomial through 4 control points (4 x 3) at parameters
//! 0, 1/3, 2/3, 1, evaluated at i / n for the n+1 points of path.
void blend_path(const Eigen::Ref<const RowMatrix>& path, const Eigen::Ref<const RowMatrix>& control_points,
                double weight, Eigen::Ref<RowMatrix> out);

//! Goals (r x 3) for a region of nodes of a cloth at positions (V x 3): the
//! region is rotated by curl_deg about its hinge and then by rotate_deg about
//! the cloth normal through the hinge point. The cloth normal is the
//! direction of least spread of all nodes (pointing to +z where it can); the
//! outward direction d is the region centroid's offset from the cloth
//! centroid within the plane; the hinge point is the region node that lies
//! innermost along d, and the hinge axis is normal x d. A positive curl
//! lifts the region's outer part towards the normal.
RowMatrix curl_goals(const Eigen::Ref<const RowMatrix>& positions, const std::vector<Index>& region, double curl_deg,
                     double rotate_deg);

}  // namespace directable
