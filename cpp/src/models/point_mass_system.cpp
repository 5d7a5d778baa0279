#include "directable/models/point_mass_system.hpp"

#include <cmath>
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

double symplectic_update_soa(Index V, double dt, const double* __restrict dt_over_m, const double* __restrict keep,
                             const double* __restrict FX, const double* __restrict FY, const double* __restrict FZ,
                             double* __restrict X, double* __restrict Y, double* __restrict Z, double* __restrict VX,
                             double* __restrict VY, double* __restrict VZ, double* __restrict speed2) {
  for (Index a = 0; a < V; ++a) {
    // keep[a] = 1 leaves the sum's bits as symplectic_update's; 0 zeroes a pinned node's velocity
    const double vx = keep[a] * (VX[a] + dt_over_m[a] * FX[a]);
    const double vy = keep[a] * (VY[a] + dt_over_m[a] * FY[a]);
    const double vz = keep[a] * (VZ[a] + dt_over_m[a] * FZ[a]);
    VX[a] = vx;
    VY[a] = vy;
    VZ[a] = vz;
    X[a] += dt * vx;
    Y[a] += dt * vy;
    Z[a] += dt * vz;
    speed2[a] = vx * vx + vy * vy + vz * vz;
  }
  // a separate reduction: a running maximum in the loop above would keep it from vectorising
  return Eigen::Map<const Eigen::ArrayXd>(speed2, V).maxCoeff<Eigen::PropagateNaN>();
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
