#pragma once
// The MPC/SPH paper's simplified prediction model of the SPH fluid: body
// forces and the pressure term only, neighbour sets frozen over the window,
// with its exact vector-Jacobian product.
//
// Declared here for D = 2 and D = 3; the bodies live in
// src/models/sph/prediction.cpp, explicitly instantiated for both.
#include <Eigen/Core>
#include <memory>
#include <mutex>
#include <vector>

#include "directable/control/mpc/mpc.hpp"
#include "directable/core/parallel.hpp"
#include "directable/models/sph/fluid.hpp"

namespace directable {

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
  // chunk_[c+1]; see prediction.cpp), and a 32-bit copy of the wall lists
  std::vector<int> pair_j_, wall_;
  std::vector<Index> pair_start_, chunk_;
  mutable std::mutex tapes_mutex_, team_mutex_;
  mutable TeamChooser step_team_, vjp_team_;
  mutable std::vector<std::unique_ptr<Tape>> tapes_;
};
using SPHPrediction = SPHPredictionT<2>;
using SPHPrediction3D = SPHPredictionT<3>;

extern template class SPHPredictionT<2>;
extern template class SPHPredictionT<3>;

}  // namespace directable
