#pragma once
// Weakly compressible SPH in 2D and 3D (the MPC/SPH paper's fluid): cubic
// spline kernel (support 2h), Tait equation of state, Monaghan artificial
// viscosity, uniform-grid neighbour search, boundary particles for walls
// (mirrored pressure), gravity, a moving rigid sphere (kinematic), and a
// per-particle external force as the control. Symplectic Euler; every
// loop is parallel (symmetric pairs evaluated once and added to both
// particles in two phases of disjoint chunks: no atomics, the same results
// for any thread count). And the paper's simplified prediction model: body
// forces and the pressure term only, neighbour sets frozen over the window,
// with its exact vector-Jacobian product.
//
// One implementation for both dimensions: the class templates below are
// only declared here; their bodies live in src/sph.cpp, explicitly
// instantiated for D = 2 and D = 3 (nothing heavy for includers to compile).
#include <Eigen/Core>
#include <memory>
#include <mutex>
#include <vector>

#include "directable/control/mpc/mpc.hpp"
#include "directable/core/errors.hpp"
#include "directable/core/parallel.hpp"
#include "directable/core/sequence.hpp"

namespace directable {

template <int D>
struct SPHParamsT {
  using Vec = Eigen::Matrix<double, D, 1>;
  double spacing = 0.02;   //!< initial particle spacing dx; mass = rho0 dx^D
  double h = 0.026;        //!< smoothing length (kernel support 2h)
  double rho0 = 1000.0;    //!< rest density
  double c0 = 20.0;        //!< speed of sound; Tait B = rho0 c0^2 / gamma
  double gamma = 7.0;
  double viscosity = 0.05;  //!< Monaghan alpha
  double dt = 5e-4;
  Vec gravity = down();     //!< default: -9.81 along the last axis (y in 2D, z in 3D)
  Vec lo = Vec::Zero(), hi = Vec::Ones();  //!< domain box
  static Vec down() {
    Vec g = Vec::Zero();
    g[D - 1] = -9.81;
    return g;
  }
  double mass() const;
  double tait_B() const { return rho0 * c0 * c0 / gamma; }
  void validate() const;
};
using SPHParams = SPHParamsT<2>;
using SPHParams3D = SPHParamsT<3>;

//! Cubic spline kernel (support radius 2h); sigma = 10/(7 pi h^2) in 2D,
//! 1/(pi h^3) in 3D.
template <int D>
struct CubicSpline {
  double h, sigma;
  explicit CubicSpline(double h_);
  double W(double r) const;
  double dW(double r) const;   //!< dW/dr
  double d2W(double r) const;  //!< d2W/dr2
};
using CubicSpline2D = CubicSpline<2>;
using CubicSpline3D = CubicSpline<3>;

//! Uniform grid over a box with cells of size `cell` (>= the search radius);
//! points are kept sorted by cell for cache-friendly scans.
template <int D>
class NeighbourGrid {
 public:
  using Vec = Eigen::Matrix<double, D, 1>;
  void build(const double* pts, Index count, const Vec& lo, const Vec& hi, double cell);
  //! Calls f(j, r, d2) for every point j with d2 = |r|^2 < radius^2, r = p - pts_j
  //! (defined in sph.cpp; used there only).
  template <class F>
  void for_each(const Vec& p, double radius, F f) const;

 private:
  int cell_of(double x, int axis) const;
  Vec lo_;
  double cell_ = 1.0;
  int n_[3] = {1, 1, 1};
  std::vector<Index> start_, order_, cell_index_, cursor_;
  std::vector<double> sorted_;  //!< positions in cell order (D per point)
};

//! Frozen neighbour sets: CSR lists of fluid-fluid (symmetric, self
//! excluded) and fluid-boundary pairs.
struct NeighbourLists {
  std::vector<Index> fluid_start, fluid, wall_start, wall;
};

//! Neighbour table of the simulator (a Verlet list: candidates within 2h +
//! skin, rebuilt once some particle has moved skin/2 since the last build):
//! fixed stride per particle (grown when a particle has more candidates),
//! neighbour index, and W'(d)/d of the current step (0 beyond 2h). Fluid
//! pairs are listed once, by their first particle (j > i); walls per particle.
struct SPHPairTable {
  Index stride = 0;
  std::vector<int> count, index;
  std::vector<double> a;  //!< W'(d)/d per pair (walls); fluid: of the pairs within 2h (near)
  std::vector<int> near_count, near;  //!< fluid: the candidates within 2h this step, compacted
};


template <int D>
class SPHFluid {
 public:
  using Vec = Eigen::Matrix<double, D, 1>;
  using Params = SPHParamsT<D>;
  //! fluid (N, D) and boundary (M, D) positions, row-major.
  SPHFluid(Params params, const double* fluid, Index N, const double* boundary, Index M);

  Index size() const { return N_; }
  Index boundary_size() const { return M_; }
  const Params& params() const { return prm_; }
  //! Moving rigid sphere (kinematic): centre inside the domain, radius > 0.
  void set_sphere(const Vec& centre, double radius, const Vec& velocity);
  void remove_sphere() { sphere_on_ = false; }
  bool has_sphere() const { return sphere_on_; }
  const Vec& sphere_centre() const { return sc_; }

  //! One step with per-particle forces (N x D, row-major; nullptr = none).
  //! Throws domain_error if the state becomes non-finite or explodes.
  void step(const double* force = nullptr);

  Eigen::VectorXd& positions() { return x_; }   //!< DN (x0, y0, [z0,] x1, ...)
  Eigen::VectorXd& velocities() { return v_; }  //!< DN
  const Eigen::VectorXd& positions() const { return x_; }
  const Eigen::VectorXd& velocities() const { return v_; }
  const Eigen::VectorXd& densities() const { return rho_; }
  const Eigen::VectorXd& pressures() const { return p_; }
  const Eigen::VectorXd& boundary() const { return xb_; }
  Index steps_taken() const { return steps_; }

  //! Replaces positions and velocities (DN each, finite).
  void set_state(const Eigen::Ref<const Eigen::VectorXd>& positions, const Eigen::Ref<const Eigen::VectorXd>& velocities);
  //! Current neighbour sets: the pairs within 2h of the current positions
  //! (from the Verlet lists, rebuilt first if due).
  NeighbourLists neighbours();
  //! The same into `nb`, reusing its buffers.
  void neighbours(NeighbourLists& nb);

 private:
  void search();       //!< densities, pressures and W'/d over the lists (rebuilt when needed)
  void build_lists();  //!< grid + candidate lists within 2h + skin
  Params prm_;
  CubicSpline<D> kernel_;
  Index N_, M_;
  Eigen::VectorXd x_, v_, a_, rho_, p_, pr2_, xb_;  // pr2_ = p / rho^2
  NeighbourGrid<D> fluid_grid_, wall_grid_;
  SPHPairTable fluid_pairs_, wall_pairs_;
  std::vector<Index> chunk_;   //!< chunks of particles of the two-phase pair scatter (see sph.cpp)
  std::vector<Index> cursor_;  //!< neighbours(): fill positions per particle
  Eigen::VectorXd x_built_;  //!< positions at the last list build
  double skin_ = 0.0;
  bool rebuild_ = true;
  TeamChooser team_;
  int nt_ = 1;  //!< threads of the current step
  bool sphere_on_ = false;
  Vec sc_ = Vec::Zero(), sv_ = Vec::Zero();
  double sr_ = 0.0;
  Index steps_ = 0;
};
using SPHFluid2D = SPHFluid<2>;
using SPHFluid3D = SPHFluid<3>;

//! The paper's simplified prediction model. State x = [positions (DN);
//! velocities (DN)], control u = per-particle force (DN):
//!   v+ = v + dt (a_p(x) + g + u / m),  x+ = x + dt v+,
//! a_p the SPH pressure acceleration over the frozen neighbour lists
//! (boundary particles mirror the fluid particle's pressure).
//!
//! Kernel terms are evaluated once per symmetric pair (i < j) and every pair
//! term is added to both particles, in two phases of chunks of particles
//! that touch disjoint particles (parallel, no atomics, the same sums for
//! any thread count).
//! step(x, u, ., i) records a tape for window step i (densities, pressures,
//! kernel derivatives per pair, the pressure acceleration, and the positions
//! it was taken at); step and vjp(x, ., ., ., ., i) reuse it when x's
//! positions are bit-identical to those, else recompute. Tapes are allocated on the first visit of each i and
//! guarded by a lock (concurrent callers fall back to per-thread scratch).
template <int D>
class SPHPredictionT : public PredictionModel {
 public:
  using Params = SPHParamsT<D>;
  SPHPredictionT(Params params, NeighbourLists lists, Eigen::VectorXd boundary);
  ~SPHPredictionT() override;
  //! Freezes the neighbour sets of `fluid`'s current state (same particle and
  //! boundary counts), reusing every buffer and tape: one model (and one
  //! HorizonOptimizer on it) for a whole receding-horizon run. Not
  //! concurrently with step/vjp.
  void refreeze(SPHFluid<D>& fluid);
  Index n() const override { return 2 * D * N_; }
  Index s() const override { return D * N_; }
  void step(const CRefVec& x, const CRefVec& u, RefVec x_next, Index i) const override;
  void vjp(const CRefVec& x, const CRefVec& u, const CRefVec& lam, RefVec gx, RefVec gu, Index i) const override;
  //! gu = dt/m (lam_v + dt lam_x): no pair pass.
  void vjp_controls(const CRefVec& x, const CRefVec& u, const CRefVec& lam, RefVec gx, RefVec gu,
                    Index i) const override;
  //! Pressure acceleration a_p (DN) at positions (DN).
  void pressure_acceleration(const CRefVec& pos, Eigen::Ref<Eigen::VectorXd> a) const;

  struct Tape;

 private:
  Tape* tape(Index i) const;  //!< slot of window step i (created on first use)
  //! Checks nb_ and builds the pair structures from it; `symmetric`: the
  //! lists come from SPHFluid::neighbours (symmetric by construction, not re-checked).
  void freeze(bool symmetric = false);
  void forward(const double* X, Tape& t, int threads) const;
  //! The step's inputs and output: velocities V (DN), controls U (DN), next state xn (2DN).
  struct Step {
    const double *V, *U;
    double* xn;
  };
  //! Pressure accelerations into a (DN); given st, also the step into st->xn.
  void accel(const double* X, const Tape& t, double* a, int threads, const Step* st = nullptr) const;
  int team_begin(TeamChooser& team) const;
  void team_end(TeamChooser& team, double seconds) const;
  Params prm_;
  CubicSpline<D> kernel_;
  NeighbourLists nb_;
  Eigen::VectorXd xb_;
  Index N_;
  // symmetric fluid pairs i < j (kernel terms computed once per pair; the
  // partners j of particle i are pair_j_[pair_start_[i] .. [i+1]]), the
  // chunks of particles of the two-phase pair scatter (chunk_[c] ..
  // chunk_[c+1]; see sph.cpp), and a 32-bit copy of the wall lists
  std::vector<int> pair_j_, wall_;
  std::vector<Index> pair_start_, chunk_;
  mutable std::mutex tapes_mutex_, team_mutex_;
  mutable TeamChooser step_team_, vjp_team_;
  mutable std::vector<std::unique_ptr<Tape>> tapes_;
};
using SPHPrediction = SPHPredictionT<2>;
using SPHPrediction3D = SPHPredictionT<3>;

extern template struct SPHParamsT<2>;
extern template struct SPHParamsT<3>;
extern template struct CubicSpline<2>;
extern template struct CubicSpline<3>;
extern template class NeighbourGrid<2>;
extern template class NeighbourGrid<3>;
extern template class SPHFluid<2>;
extern template class SPHFluid<3>;
extern template class SPHPredictionT<2>;
extern template class SPHPredictionT<3>;

}  // namespace directable
