#include "directable/models/sph/prediction.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "directable/core/clock.hpp"
#include "pair_kernels.hpp"

namespace directable {

template <int D>
struct SPHPredictionT<D>::Tape {
  bool valid = false;
  Index freeze = -1;                //!< the model's freeze the tape was taken at
  bool has_acc = false;             //!< acc is the pressure acceleration at pos (taken by step)
  Eigen::VectorXd pos;              //!< positions the tape was taken at (DN)
  Eigen::VectorXd rho, P, dP, bar;  //!< N (bar: VJP scratch)
  Eigen::VectorXd mu, acc, sum;     //!< DN: VJP's mu, pressure acceleration at pos, pair scatter accumulator
  std::vector<double> pa, pb;       //!< per symmetric fluid pair: W'/d, (W'' - W'/d)/d^2
  std::vector<double> wa, wb;       //!< per fluid-wall entry
  void size(Index N, Index np, Index nw) {
    if (pos.size() != D * N) {
      pos.resize(D * N);
      mu.resize(D * N);
      acc.resize(D * N);
      sum.resize(D * N);
      rho.resize(N);
      P.resize(N);
      dP.resize(N);
      bar.resize(N);
      valid = false;
    }
    if (Index(pa.size()) != np) {
      pa.resize(np);
      pb.resize(np);
      valid = false;
    }
    if (Index(wa.size()) != nw) {
      wa.resize(nw);
      wb.resize(nw);
      valid = false;
    }
  }
};

template <int D>
SPHPredictionT<D>::SPHPredictionT(Params params, NeighbourLists lists, Eigen::VectorXd boundary)
    : prm_(params), kernel_(params.h), nb_(std::move(lists)), xb_(std::move(boundary)) {
  prm_.validate();
  freeze();
}

template <int D>
void SPHPredictionT<D>::refreeze(SPHFluid<D>& fluid) {
  if (fluid.size() != N_ || fluid.boundary().size() != xb_.size())
    throw std::invalid_argument("refreeze: fluid must have the model's " + std::to_string(N_) + " particles and " +
                                std::to_string(xb_.size() / D) + " boundary particles, got " +
                                std::to_string(fluid.size()) + " and " + std::to_string(fluid.boundary().size() / D));
  xb_ = fluid.boundary();
  fluid.neighbours(nb_);
  freeze(true);
}

template <int D>
void SPHPredictionT<D>::freeze(bool symmetric) {
  ++freeze_count_;
  N_ = Index(nb_.fluid_start.size()) - 1;
  if (N_ < 1 || Index(nb_.wall_start.size()) != N_ + 1)
    throw std::invalid_argument("neighbour lists must have N+1 starts for fluid and walls");
  if (nb_.fluid_start[0] != 0 || nb_.fluid_start[N_] != Index(nb_.fluid.size()) || nb_.wall_start[0] != 0 ||
      nb_.wall_start[N_] != Index(nb_.wall.size()))
    throw std::invalid_argument("neighbour lists: starts do not match the list lengths");
  for (Index j : nb_.fluid)
    if (j < 0 || j >= N_) throw std::invalid_argument("neighbour lists: fluid index out of range");
  for (Index b : nb_.wall)
    if (b < 0 || D * b + D > xb_.size()) throw std::invalid_argument("neighbour lists: wall index out of range");
  wall_.assign(nb_.wall.begin(), nb_.wall.end());
  const std::vector<Index>& fluid_ = nb_.fluid;
  // symmetric pairs i < j, grouped by i (list order)
  pair_j_.clear();
  pair_j_.reserve(fluid_.size() / 2);
  pair_start_.assign(N_ + 1, 0);
  for (Index i = 0; i < N_; ++i) {
    pair_start_[i] = Index(pair_j_.size());
    for (Index k = nb_.fluid_start[i]; k < nb_.fluid_start[i + 1]; ++k)
      if (fluid_[k] > i) pair_j_.push_back(int(fluid_[k]));
  }
  pair_start_[N_] = Index(pair_j_.size());
  // every entry j < i must be matched by i in j's list
  Index asymmetric = -1;
  if (!symmetric) {
    for (Index i = 0; i < N_; ++i)
      for (Index k = nb_.fluid_start[i]; k < nb_.fluid_start[i + 1]; ++k) {
        const Index j = fluid_[k];
        if (j > i) continue;
        bool found = false;
        for (Index q = nb_.fluid_start[j]; q < nb_.fluid_start[j + 1] && !found; ++q) found = fluid_[q] == i;
        if (!found) asymmetric = std::max(asymmetric, i);
      }
  }
  if (asymmetric >= 0)
    throw std::invalid_argument("neighbour lists must be symmetric (and exclude self pairs): particle " +
                                std::to_string(asymmetric) + " lists a neighbour that does not list it");
  // chunks of the two-phase scatter (pairs of particle i: pair_start_[i] ..)
  build_chunks(
      N_,
      [&](Index i) {
        Index r = i;
        for (Index p = pair_start_[i]; p < pair_start_[i + 1]; ++p) r = std::max<Index>(r, pair_j_[p]);
        return r;
      },
      chunk_);
}

namespace {
// Per-thread buffers of the SPH prediction model: one tape per window step
// (a window's states recur across the solve's evaluations) and the team
// choices of its two parallel passes.
template <int D>
struct SPHPredictionData : PredictionData {
  static constexpr Index kMaxTapes = 256;  //!< window steps with their own tape; later ones share `spare`
  std::vector<std::unique_ptr<typename SPHPredictionT<D>::Tape>> tapes;
  std::unique_ptr<typename SPHPredictionT<D>::Tape> spare;
  TeamChooser step_team, vjp_team;
  typename SPHPredictionT<D>::Tape& tape(Index i) {
    if (i < 0 || i >= kMaxTapes) return *spare;
    if (Index(tapes.size()) <= i) tapes.resize(i + 1);
    if (!tapes[i]) tapes[i] = std::make_unique<typename SPHPredictionT<D>::Tape>();
    return *tapes[i];
  }
};
}  // namespace

template <int D>
std::unique_ptr<PredictionData> SPHPredictionT<D>::make_data() const {
  auto d = std::make_unique<SPHPredictionData<D>>();
  d->spare = std::make_unique<Tape>();
  return d;
}

// rho_i = m (W(0) + sum_j W(|x_i - x_j|) + sum_b W(|x_i - x_b|)),
// p = max(0, B ((rho/rho0)^gamma - 1)), P = p / rho^2, dP = dP/drho;
// and the kernel terms of every frozen pair (once per symmetric pair).
template <int D>
void SPHPredictionT<D>::forward(const double* X, Tape& w, int threads) const {
  const Index np = Index(pair_j_.size());
  w.size(N_, np, Index(wall_.size()));
  const double m = prm_.mass(), B = prm_.tait_B(), g = prm_.gamma, ir0 = 1.0 / prm_.rho0, W0 = kernel_.W(0.0);
  const double* XB = xb_.data();
  const KernelConst ker(kernel_);
  const int *PJ = pair_j_.data(), *WL = wall_.data();
  const Index *PS = pair_start_.data(), *CH = chunk_.data();
  const Index chunks = Index(chunk_.size()) - 1;
  double *pa = w.pa.data(), *pb = w.pb.data(), *sum = w.rho.data();
#pragma omp parallel num_threads(threads) if (N_ >= kParallelMin)
  {
#pragma omp for schedule(static)
    for (Index i = 0; i < N_; ++i) sum[i] = 0.0;
    in_two_phases(chunks, [&](Index c) {
      pred_kernel_pairs<D>(CH[c], CH[c + 1], PS, PJ, X, ker, pa, pb, sum);
    });
#pragma omp for schedule(static)
    for (Index i = 0; i < N_; ++i) {
      double rho = W0 + sum[i];
      const VecD<D> xi = pt<D>(X, i);
      for (Index k = nb_.wall_start[i]; k < nb_.wall_start[i + 1]; ++k) {
        const KernelTerms t = ker((xi - pt<D>(XB, WL[k])).norm());
        rho += t.W;
        w.wa[k] = t.a;
        w.wb[k] = t.b;
      }
      rho *= m;
      // clamped at zero like the simulator (no tensile attraction at the free
      // surface); one division per particle (they dominated this loop)
      const double ir = 1.0 / rho, s = tait_ratio(rho * ir0, g);
      const double pr = s > 1.0 ? B * (s - 1.0) : 0.0, dp = s > 1.0 ? B * g * s * ir : 0.0;
      w.rho[i] = rho;
      w.P[i] = pr * (ir * ir);
      w.dP[i] = (dp - 2.0 * pr * ir) * (ir * ir);
    }
  }
}

// a_i = -m sum_j (P_i + P_j) W'/d (x_i - x_j) - 2 m P_i sum_b W'/d (x_i - x_b); the
// pair term is antisymmetric: once per pair, added to i and subtracted from j.
template <int D>
void SPHPredictionT<D>::accel(const double* X, Tape& w, double* a, int threads, const Step* st) const {
  const double m = prm_.mass(), dt = prm_.dt, im = 1.0 / m;
  const VecD<D> g = prm_.gravity;
  const Index n = D * N_;
  const double* XB = xb_.data();
  const int *PJ = pair_j_.data(), *WL = wall_.data();
  const Index *PS = pair_start_.data(), *CH = chunk_.data();
  const Index chunks = Index(chunk_.size()) - 1;
  const double *pa = w.pa.data(), *P = w.P.data();
  double* F = w.sum.data();  // scratch, not part of the recorded state
#pragma omp parallel num_threads(threads) if (N_ >= kParallelMin)
  {
#pragma omp for schedule(static)
    for (Index k = 0; k < D * N_; ++k) F[k] = 0.0;
    in_two_phases(chunks, [&](Index c) { pred_accel_pairs<D>(CH[c], CH[c + 1], PS, PJ, X, P, pa, F); });
#pragma omp for schedule(static)
    for (Index i = 0; i < N_; ++i) {
      VecD<D> accw = VecD<D>::Zero();
      const VecD<D> xi = pt<D>(X, i);
      for (Index k = nb_.wall_start[i]; k < nb_.wall_start[i + 1]; ++k) accw += w.wa[k] * (xi - pt<D>(XB, WL[k]));
      const VecD<D> ai = -m * pt<D>(F, i) - (2.0 * m * P[i]) * accw;
      Eigen::Map<VecD<D>>(a + D * i) = ai;
      if (!st) continue;
      // the step (symplectic Euler), per particle: x_next may alias X
      const VecD<D> vn = pt<D>(st->V, i) + dt * (ai + g + im * pt<D>(st->U, i));
      Eigen::Map<VecD<D>>(st->xn + n + D * i) = vn;
      Eigen::Map<VecD<D>>(st->xn + D * i) = xi + dt * vn;
    }
  }
}

template <int D>
void SPHPredictionT<D>::pressure_acceleration(const CRefVec& pos, Eigen::Ref<Eigen::VectorXd> a) const {
  Tape w;
  TeamChooser all;
  const int threads = all.begin();
  forward(pos.data(), w, threads);
  accel(pos.data(), w, w.acc.data(), threads);
  a = w.acc;
}

template <int D>
void SPHPredictionT<D>::step(const CRefVec& x, const CRefVec& u, RefVec x_next, Index i, PredictionData& data) const {
  const Index n = D * N_;
  auto& d = static_cast<SPHPredictionData<D>&>(data);
  Tape& w = d.tape(i);
  const double dt = prm_.dt, im = 1.0 / prm_.mass();
  // The pressure acceleration depends on the positions alone: at the tape's
  // own positions (bit-identical) it is reused. In an MPC window, step 0
  // starts at the frame's state in every evaluation of the solve.
  if (w.valid && w.has_acc && w.freeze == freeze_count_ && w.pos.size() == n &&
      std::memcmp(w.pos.data(), x.data(), sizeof(double) * size_t(n)) == 0) {
    const VecD<D> g = prm_.gravity;
    for (Index p = 0; p < N_; ++p) {  // the same update as accel's (streaming: serial)
      const VecD<D> vn = pt<D>(x.data() + n, p) + dt * (pt<D>(w.acc.data(), p) + g + im * pt<D>(u.data(), p));
      const VecD<D> xp = pt<D>(x.data(), p);
      Eigen::Map<VecD<D>>(x_next.data() + n + D * p) = vn;
      Eigen::Map<VecD<D>>(x_next.data() + D * p) = xp + dt * vn;
    }
    return;
  }
  const double t0 = now_seconds();
  const int threads = d.step_team.begin();
  forward(x.data(), w, threads);
  w.pos = x.head(n);  // (before x_next is written: they may be the same vector)
  w.valid = w.has_acc = true;
  w.freeze = freeze_count_;
  const Step st{x.data() + n, u.data(), x_next.data()};
  accel(x.data(), w, w.acc.data(), threads, &st);
  d.step_team.end(now_seconds() - t0);
}

// Reverse mode of step. With mu = lam_v + dt lam_x (adjoint of v+):
//   gx_pos = lam_x + dt (da/dpos)' mu,  gx_vel = mu,  gu = dt mu / m.
// (da/dpos)' mu per particle (the fluid lists are symmetric):
//   barP_k = -m sum_j (mu_k - mu_j).gW_kj - 2 m sum_b mu_k.gW_kb,
//   barrho_k = barP_k dP_k,
//   bar x_k = -m sum_j (P_k + P_j) H_kj (mu_k - mu_j) - 2 m sum_b P_k H_kb mu_k
//             + m sum_j (barrho_k + barrho_j) gW_kj + m sum_b barrho_k gW_kb,
// with gW = a r and H = a I + b r r' (a = W'/d, b = (W'' - W'/d)/d^2, taped).
template <int D>
void SPHPredictionT<D>::vjp(const CRefVec& x, const CRefVec&, const CRefVec& lam, RefVec gx, RefVec gu, Index i,
                            PredictionData& data) const {
  const Index n = D * N_;
  const double t0 = now_seconds();
  auto& d = static_cast<SPHPredictionData<D>&>(data);
  const int threads = d.vjp_team.begin();
  Tape& w = d.tape(i);
  const bool hit = w.valid && w.freeze == freeze_count_ && w.pos.size() == n &&
                   std::memcmp(w.pos.data(), x.data(), sizeof(double) * size_t(n)) == 0;
  if (!hit) {
    forward(x.data(), w, threads);
    w.pos = x.head(n);
    w.valid = true;
    w.has_acc = false;  // (no acceleration pass here)
    w.freeze = freeze_count_;
  }
  const double dt = prm_.dt, m = prm_.mass(), dtm = dt / m;
  const double* L = lam.data();
  double *GX = gx.data(), *GU = gu.data(), *M = w.mu.data();
  const double* X = x.data();
  const double* XB = xb_.data();
  const double* MU = w.mu.data();
  // The pair terms are symmetric (s = a (mu_i - mu_j).r_ij) or antisymmetric
  // (the vector term T_ij = -T_ji): once per pair, scattered to both particles.
  const int *PJ = pair_j_.data(), *WL = wall_.data();
  const Index *PS = pair_start_.data(), *CH = chunk_.data();
  const Index chunks = Index(chunk_.size()) - 1;
  const double *pa = w.pa.data(), *pb = w.pb.data(), *P = w.P.data();
  double *bar = w.bar.data(), *G = w.sum.data();
#pragma omp parallel num_threads(threads) if (N_ >= kParallelMin)
  {
#pragma omp for schedule(static)
    for (Index k = 0; k < N_; ++k) {
      bar[k] = 0.0;
      for (int c = 0; c < D; ++c) {
        G[D * k + c] = 0.0;
        M[D * k + c] = L[n + D * k + c] + dt * L[D * k + c];  // mu = lam_v + dt lam_x
      }
    }
    in_two_phases(chunks, [&](Index c) { vjp_density_pairs<D>(CH[c], CH[c + 1], PS, PJ, X, MU, pa, bar); });
#pragma omp for schedule(static)
    for (Index k = 0; k < N_; ++k) {
      double barw = 0.0;
      const VecD<D> xk = pt<D>(X, k), mk = pt<D>(MU, k);
      for (Index q = nb_.wall_start[k]; q < nb_.wall_start[k + 1]; ++q)
        barw += w.wa[q] * mk.dot(xk - pt<D>(XB, WL[q]));
      bar[k] = (-m * bar[k] - 2.0 * m * barw) * w.dP[k];  // bar rho_k
    }
    in_two_phases(chunks, [&](Index c) { vjp_force_pairs<D>(CH[c], CH[c + 1], PS, PJ, X, MU, P, bar, pa, pb, G); });
#pragma omp for schedule(static)
    for (Index k = 0; k < N_; ++k) {
      VecD<D> gw1 = VecD<D>::Zero(), gw2 = VecD<D>::Zero();
      const VecD<D> xk = pt<D>(X, k), mk = pt<D>(MU, k);
      for (Index q = nb_.wall_start[k]; q < nb_.wall_start[k + 1]; ++q) {
        const VecD<D> r = xk - pt<D>(XB, WL[q]);
        const double a = w.wa[q], b = w.wb[q];
        gw1 += a * mk + (b * r.dot(mk)) * r;  // H mk
        gw2 += a * r;
      }
      const VecD<D> g = m * pt<D>(G, k) - (2.0 * m * P[k]) * gw1 + (m * bar[k]) * gw2;
      for (int c = 0; c < D; ++c) {
        GX[D * k + c] = L[D * k + c] + dt * g[c];
        GX[n + D * k + c] = M[D * k + c];
        GU[D * k + c] = dtm * M[D * k + c];
      }
    }
  }
  d.vjp_team.end(now_seconds() - t0);
}

// The control enters v+ only (v+ = ... + dt u / m): gu = dt mu / m.
template <int D>
void SPHPredictionT<D>::vjp_controls(const CRefVec&, const CRefVec&, const CRefVec& lam, RefVec, RefVec gu, Index,
                                     PredictionData&) const {
  const Index n = D * N_;
  const double dt = prm_.dt, dtm = dt / prm_.mass();
  const double* L = lam.data();
  for (Index k = 0; k < n; ++k) gu[k] = dtm * (L[n + k] + dt * L[k]);  // as vjp's
}
template class SPHPredictionT<2>;
template class SPHPredictionT<3>;

}  // namespace directable
