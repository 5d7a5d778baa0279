#include "directable/sim/point_mass_run.hpp"

#include <string>

namespace directable {

PointMassRun run_with_forces(const PointMassSystem& system, const Eigen::Ref<const Eigen::VectorXd>& x0,
                             const Eigen::Ref<const Eigen::VectorXd>& v0, double dt, Index steps, Index t_start,
                             const std::vector<Index>& nodes, SeqView forces, const ProgressFn* progress) {
  const Index V = system.node_count(), n3 = 3 * V;
  check_shape("x0", x0.size(), 1, n3, 1);
  check_shape("v0", v0.size(), 1, n3, 1);
  check_finite("x0", x0.data(), n3);
  check_finite("v0", v0.data(), n3);
  check_positive("dt", dt);
  if (steps < 0) throw std::invalid_argument("steps must be >= 0, got " + std::to_string(steps));
  if (t_start < 0) throw std::invalid_argument("plan.t_start must be >= 0, got " + std::to_string(t_start));
  const Index c = static_cast<Index>(nodes.size());
  for (Index k = 0; k < c; ++k) {
    if (nodes[k] < 0 || nodes[k] >= V)
      throw std::invalid_argument("plan.nodes[" + std::to_string(k) + "] = " + std::to_string(nodes[k]) +
                                  " is out of range [0, " + std::to_string(V) + ")");
    if (system.pinned()[nodes[k]])
      throw std::invalid_argument("plan.nodes[" + std::to_string(k) + "] = " + std::to_string(nodes[k]) + " is pinned");
  }
  if (forces.empty() || forces.is_constant() || forces.rows != c || forces.cols != 3)
    throw_shape("plan.forces", "(n, " + std::to_string(c) + ", 3)", shape_str(forces.T, forces.rows, forces.cols));
  check_finite("plan.forces", forces.data, forces.T * c * 3);

  PointMassRun run{{VectorSeq(steps + 1, n3, MatrixSeq::Uninitialized{}), VectorSeq(steps + 1, n3, MatrixSeq::Uninitialized{})},
                   VectorSeq(steps, n3)};
  auto data = system.create_point_mass_data();
  Eigen::VectorXd x = x0, v = v0, F(n3);
  for (Index a = 0; a < V; ++a)
    if (system.pinned()[a]) v.segment<3>(3 * a).setZero();
  run.x[0] = x;
  run.v[0] = v;
  ProgressThrottle throttle(progress, steps);
  for (Index i = 0; i < steps; ++i) {
    system.applied_forces(x, v, F, *data);
    const Index r = i - t_start;
    if (r >= 0 && r < forces.T) {
      auto u = run.u[i];
      for (Index k = 0; k < c; ++k) u.segment<3>(3 * nodes[k]) += forces[r].row(k).transpose();
      F += u;
    }
    check_divergence("apply", symplectic_update(system, x, v, F, dt), i);
    run.x[i + 1] = x;
    run.v[i + 1] = v;
    if (!throttle.report(i + 1)) break;
  }
  throttle.finish(steps);
  return run;
}

}  // namespace directable
