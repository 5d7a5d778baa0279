#pragma once
// The MPC/SPH paper's simplified prediction model of the SPH fluid: body
// forces and the pressure term only, neighbour sets frozen over the window,
// with its exact vector-Jacobian product.
//
// Declared here for D = 2 and D = 3; the bodies live in
// src/models/sph/prediction.cpp, explicitly instantiated for both.
#include <Eigen/Core>
#include <memory>
#include <vector>

#include "directable/models/prediction_model.hpp"
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
//! step(x, u, ., i, data) records a tape in data for window step i
//! (densities, pressures, kernel derivatives per pair, the pressure
//! acceleration, and the positions and freeze it was taken at); step and
//! vjp(x, ., ., ., ., i, data) reuse it when x's positions are bit-identical
//! to those and the neighbour sets were not refrozen since, else recompute.
//! The model is immutable between refreezes: every tape and the thread-team
//! choice live in the data (create_data()), one per thread.
template <int D>
class SPHPredictionT : public PredictionModel {
 public:
  using Params = SPHParamsT<D>;
  SPHPredictionT(Params params, NeighbourLists lists, Eigen::VectorXd boundary);
  //! Freezes the neighbour sets of `fluid`'s current state (same particle and
  //! boundary counts): one model (and one HorizonOptimizer on it) for a whole
  //! receding-horizon run. Tapes taken before are not reused afterwards. Not
  //! concurrently with step/vjp.
  void refreeze(SPHFluid<D>& fluid);
  Index n() const override { return 2 * D * N_; }
  Index s() const override { return D * N_; }
  void step(const CRefVec& x, const CRefVec& u, RefVec x_next, Index i, PredictionData& data) const override;
  void vjp(const CRefVec& x, const CRefVec& u, const CRefVec& lam, RefVec gx, RefVec gu, Index i,
           PredictionData& data) const override;
  //! gu = dt/m (lam_v + dt lam_x): no pair pass.
  void vjp_controls(const CRefVec& x, const CRefVec& u, const CRefVec& lam, RefVec gx, RefVec gu, Index i,
                    PredictionData& data) const override;
  //! Pressure acceleration a_p (DN) at positions (DN).
  void pressure_acceleration(const CRefVec& pos, Eigen::Ref<Eigen::VectorXd> a) const;

  struct Tape;

 protected:
  std::unique_ptr<PredictionData> make_data() const override;

 private:
  //! Checks nb_ and builds the pair structures from it; `symmetric`: the
  //! lists come from SPHFluid::neighbours (symmetric by construction, not re-checked).
  void freeze(bool symmetric = false);
  void forward(const double* X, Tape& t, int threads) const;
  //! The step's inputs and output: velocities V (DN), controls U (DN), next state xn (2DN).
  struct Step {
    const double *V, *U;
    double* xn;
  };
  //! Pressure accelerations into a (DN), with the tape's `sum` as the pair
  //! accumulator; given st, also the step into st->xn.
  void accel(const double* X, Tape& t, double* a, int threads, const Step* st = nullptr) const;
  Params prm_;
  CubicSpline<D> kernel_;
  NeighbourLists nb_;
  Eigen::VectorXd xb_;
  Index N_;
  Index freeze_count_ = 0;  //!< freezes so far: a tape taken at another freeze is stale
  // symmetric fluid pairs i < j (kernel terms computed once per pair; the
  // partners j of particle i are pair_j_[pair_start_[i] .. [i+1]]), the
  // chunks of particles of the two-phase pair scatter (chunk_[c] ..
  // chunk_[c+1]; see prediction.cpp), and a 32-bit copy of the wall lists
  std::vector<int> pair_j_, wall_;
  std::vector<Index> pair_start_, chunk_;
};
using SPHPrediction = SPHPredictionT<2>;
using SPHPrediction3D = SPHPredictionT<3>;

extern template class SPHPredictionT<2>;
extern template class SPHPredictionT<3>;

}  // namespace directable
