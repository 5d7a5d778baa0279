#include "directable/models/point_mass_system.hpp"

#include <cmath>
#include <limits>
#include <string>

namespace directable {

double symplectic_update(const PointMassSystem& system, Eigen::Ref<Eigen::VectorXd> x, Eigen::Ref<Eigen::VectorXd> v,
                         const Eigen::Ref<const Eigen::VectorXd>& F_total, double dt) {
  const Index V = system.node_count();
  const double* m = system.node_masses().data();
  const std::uint8_t* pin = system.pinned().data();
  double* xp = x.data();
  double* vp = v.data();
  const double* F = F_total.data();
  double fastest = 0.0;
  for (Index a = 0; a < V; ++a) {
    const double scale = pin[a] ? 0.0 : dt / m[a];
    double speed2 = 0.0;
    for (int c = 0; c < 3; ++c) {
      const Index k = 3 * a + c;
      const double vn = pin[a] ? 0.0 : vp[k] + scale * F[k];
      vp[k] = vn;
      xp[k] += dt * vn;
      speed2 += vn * vn;
    }
    // a NaN must win the maximum
    fastest = (speed2 > fastest || std::isnan(speed2)) ? speed2 : fastest;
  }
  return fastest;
}

double symplectic_update_soa(Index V, double dt, const double* __restrict dt_over_m, const std::uint8_t* __restrict pin,
                             const double* __restrict FX, const double* __restrict FY, const double* __restrict FZ,
                             double* __restrict X, double* __restrict Y, double* __restrict Z, double* __restrict VX,
                             double* __restrict VY, double* __restrict VZ) {
  double fastest = 0.0;
  int nan = 0;
  for (Index a = 0; a < V; ++a) {
    const double vx = pin[a] ? 0.0 : VX[a] + dt_over_m[a] * FX[a];
    const double vy = pin[a] ? 0.0 : VY[a] + dt_over_m[a] * FY[a];
    const double vz = pin[a] ? 0.0 : VZ[a] + dt_over_m[a] * FZ[a];
    VX[a] = vx;
    VY[a] = vy;
    VZ[a] = vz;
    X[a] += dt * vx;
    Y[a] += dt * vy;
    Z[a] += dt * vz;
    const double speed2 = vx * vx + vy * vy + vz * vz;
    fastest = fastest < speed2 ? speed2 : fastest;
    nan |= speed2 != speed2;
  }
  return nan ? std::numeric_limits<double>::quiet_NaN() : fastest;
}

void check_divergence(const char* what, double max_speed_squared, Index step, double bound) {
  if (!(max_speed_squared <= bound * bound))
    throw std::domain_error(std::string(what) + " diverged at step " + std::to_string(step) +
                            (std::isfinite(max_speed_squared)
                                 ? " (a node's speed is " + std::to_string(std::sqrt(max_speed_squared)) + " m/s, beyond " +
                                       std::to_string(bound) + " m/s)"
                                 : std::string(" (non-finite state)")) +
                            ": reduce dt or use method=\"implicit\"");
}

}  // namespace directable
