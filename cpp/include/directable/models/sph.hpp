#pragma once
// 2D weakly compressible SPH (the MPC/SPH paper's fluid): cubic-spline
// kernel (support 2h), Tait equation of state, Monaghan artificial
// viscosity, uniform-grid neighbour search, boundary particles for walls
// (mirrored pressure), gravity, a moving rigid sphere (kinematic), and a
// per-particle external force as the control. Symplectic Euler; every
// particle loop is parallel. And the paper's simplified prediction model:
// body forces and the pressure term only, neighbour sets frozen over the
// window, with its exact vector-Jacobian product.
#include <Eigen/Core>
#include <memory>
#include <vector>

#include "directable/control/mpc.hpp"
#include "directable/core/errors.hpp"
#include "directable/core/sequence.hpp"

namespace directable {

struct SPHParams {
  double spacing = 0.02;   //!< initial particle spacing dx; mass = rho0 dx^2
  double h = 0.026;        //!< smoothing length (kernel support 2h)
  double rho0 = 1000.0;    //!< rest density
  double c0 = 20.0;        //!< speed of sound; Tait B = rho0 c0^2 / gamma
  double gamma = 7.0;
  double viscosity = 0.05;  //!< Monaghan alpha
  double dt = 5e-4;
  Eigen::Vector2d gravity{0.0, -9.81};
  Eigen::Vector2d lo{0.0, 0.0}, hi{1.0, 1.0};  //!< domain box
  double mass() const { return rho0 * spacing * spacing; }
  double tait_B() const { return rho0 * c0 * c0 / gamma; }
  void validate() const;
};

//! Cubic spline kernel in 2D, support radius 2h.
struct CubicSpline2D {
  double h, sigma;
  explicit CubicSpline2D(double h_);
  double W(double r) const;
  double dW(double r) const;   //!< dW/dr
  double d2W(double r) const;  //!< d2W/dr2
};

//! Uniform grid over a box with cells of size `cell`; neighbours within `radius`.
class NeighbourGrid {
 public:
  void build(const double* pts, Index count, const Eigen::Vector2d& lo, const Eigen::Vector2d& hi, double cell);
  //! Calls f(j) for every point j with |p - pts_j| < radius (radius <= cell).
  template <class F>
  void for_each(const double* pts, const Eigen::Vector2d& p, double radius, F f) const {
    const int cx = cell_x(p[0]), cy = cell_y(p[1]);
    const double r2 = radius * radius;
    for (int y = std::max(cy - 1, 0); y <= std::min(cy + 1, ny_ - 1); ++y)
      for (int x = std::max(cx - 1, 0); x <= std::min(cx + 1, nx_ - 1); ++x) {
        const Index c = Index(y) * nx_ + x;
        for (Index k = start_[c]; k < start_[c + 1]; ++k) {
          const Index j = order_[k];
          const double dx = p[0] - pts[2 * j], dy = p[1] - pts[2 * j + 1];
          if (dx * dx + dy * dy < r2) f(j);
        }
      }
  }

 private:
  int cell_x(double x) const { return std::min(std::max(int((x - lo_[0]) / cell_), 0), nx_ - 1); }
  int cell_y(double y) const { return std::min(std::max(int((y - lo_[1]) / cell_), 0), ny_ - 1); }
  Eigen::Vector2d lo_;
  double cell_ = 1.0;
  int nx_ = 0, ny_ = 0;
  std::vector<Index> start_, order_, cell_of_;
};

//! Frozen neighbour sets: CSR lists of fluid-fluid (symmetric, self
//! excluded) and fluid-boundary pairs.
struct NeighbourLists {
  std::vector<Index> fluid_start, fluid, wall_start, wall;
};

class SPHFluid2D {
 public:
  //! fluid (N, 2) and boundary (M, 2) positions, row-major.
  SPHFluid2D(SPHParams params, const double* fluid, Index N, const double* boundary, Index M);

  Index size() const { return N_; }
  Index boundary_size() const { return M_; }
  const SPHParams& params() const { return prm_; }
  //! Moving rigid sphere (kinematic): centre inside the domain, radius > 0.
  void set_sphere(const Eigen::Vector2d& centre, double radius, const Eigen::Vector2d& velocity);
  void remove_sphere() { sphere_on_ = false; }
  bool has_sphere() const { return sphere_on_; }
  const Eigen::Vector2d& sphere_centre() const { return sc_; }

  //! One step with per-particle forces (N x 2, row-major; nullptr = none).
  //! Throws domain_error if the state becomes non-finite or explodes.
  void step(const double* force = nullptr);

  Eigen::VectorXd& positions() { return x_; }   //!< 2N (x0, y0, x1, ...)
  Eigen::VectorXd& velocities() { return v_; }  //!< 2N
  const Eigen::VectorXd& positions() const { return x_; }
  const Eigen::VectorXd& velocities() const { return v_; }
  const Eigen::VectorXd& densities() const { return rho_; }
  const Eigen::VectorXd& pressures() const { return p_; }
  const Eigen::VectorXd& boundary() const { return xb_; }
  Index steps_taken() const { return steps_; }

  //! Replaces positions and velocities (2N each, finite).
  void set_state(const Eigen::Ref<const Eigen::VectorXd>& positions, const Eigen::Ref<const Eigen::VectorXd>& velocities);
  //! Current neighbour sets (rebuilt from the current positions).
  NeighbourLists neighbours();

 private:
  void search();
  SPHParams prm_;
  CubicSpline2D kernel_;
  Index N_, M_;
  Eigen::VectorXd x_, v_, a_, rho_, p_, xb_;
  NeighbourGrid fluid_grid_, wall_grid_;
  bool sphere_on_ = false;
  Eigen::Vector2d sc_{0, 0}, sv_{0, 0};
  double sr_ = 0.0;
  Index steps_ = 0;
};

//! The paper's simplified prediction model. State x = [positions (2N);
//! velocities (2N)], control u = per-particle force (2N):
//!   v+ = v + dt (a_p(x) + g + u / m),  x+ = x + dt v+,
//! a_p the SPH pressure acceleration over the frozen neighbour lists
//! (boundary particles mirror the fluid particle's pressure).
class SPHPrediction : public PredictionModel {
 public:
  SPHPrediction(SPHParams params, NeighbourLists lists, Eigen::VectorXd boundary);
  Index n() const override { return 4 * N_; }
  Index s() const override { return 2 * N_; }
  void step(const CRefVec& x, const CRefVec& u, RefVec x_next, Index i) const override;
  void vjp(const CRefVec& x, const CRefVec& u, const CRefVec& lam, RefVec gx, RefVec gu, Index i) const override;
  //! Pressure acceleration a_p (2N) at positions (2N).
  void pressure_acceleration(const CRefVec& pos, Eigen::Ref<Eigen::VectorXd> a) const;

 private:
  struct Scratch {
    Eigen::VectorXd rho, P, dP, a, mu, barP;
  };
  Scratch& scratch() const;
  void density(const CRefVec& pos, Scratch& w) const;
  SPHParams prm_;
  CubicSpline2D kernel_;
  NeighbourLists nb_;
  Eigen::VectorXd xb_;
  Index N_;
};

}  // namespace directable
