#pragma once
// The scalar, index and matrix types every layer speaks. Matrices that cross
// the Python boundary are row-major, NumPy's layout.
#include <Eigen/Core>

namespace directable {

using Index = Eigen::Index;
using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatMap = Eigen::Map<RowMatrix>;
using ConstMatMap = Eigen::Map<const RowMatrix>;
using VecMap = Eigen::Map<Eigen::VectorXd>;
using ConstVecMap = Eigen::Map<const Eigen::VectorXd>;
//! Vector arguments: read-only in, writable out (house convention).
inline constexpr double kPi = 3.14159265358979323846;

using CRefVec = Eigen::Ref<const Eigen::VectorXd>;
using RefVec = Eigen::Ref<Eigen::VectorXd>;

}  // namespace directable
