#include "directable/control/lqr/discretize.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>

#include "directable/core/parallel.hpp"
#include "directable/linalg/expm.hpp"
#include "directable/core/progress.hpp"

namespace directable {

Discretization::Discretization(Index T, Index n, Index s, double dt_)
    // Every step's blocks are written by the discretization (or copied from
    // step 0): no zero fill, which cost ~10% at n = 16.
    : dt(dt_),
      Phi(T, n, n, MatrixSeq::Uninitialized{}),
      Gamma(T, n, s, MatrixSeq::Uninitialized{}),
      Q(T, n, n, MatrixSeq::Uninitialized{}),
      N(T, n, s, MatrixSeq::Uninitialized{}),
      R(T, s, s, MatrixSeq::Uninitialized{}) {}

Discretization::Discretization(const SeqView& Phi_saved, const SeqView& Gamma_saved, const SeqView& Q_saved,
                               const SeqView& N_saved, const SeqView& R_saved, const SeqView& Rc_saved, double dt_,
                               DiscretizeMethod method_)
    : dt(dt_), method(method_) {
  check_positive("dt", dt);
  if (Phi_saved.empty() || Gamma_saved.empty()) throw std::invalid_argument("Phi and Gamma are required");
  const Index T = Phi_saved.T, n = Phi_saved.rows, s = Gamma_saved.cols;
  // Saved arrays are per step: a single matrix is refused, not broadcast.
  auto copy = [T](MatrixSeq& dst, const SeqView& src, const char* name, Index rows, Index cols, bool may_be_single) {
    const bool steps_ok = !src.empty() && !src.is_constant() && (src.T == T || (may_be_single && src.T == 1));
    if (!steps_ok || src.rows != rows || src.cols != cols)
      throw_shape(name, shape_str(T, rows, cols),
                  src.empty() ? "nothing" : src.is_constant() ? shape_str(src.rows, src.cols) : shape_str(src.T, src.rows, src.cols));
    src.check_finite(name);
    dst = MatrixSeq(src.T, rows, cols, MatrixSeq::Uninitialized{});
    std::copy(src.data, src.data + src.T * rows * cols, dst.data());
  };
  copy(Phi, Phi_saved, "Phi", n, n, false);
  copy(Gamma, Gamma_saved, "Gamma", n, s, false);
  copy(Q, Q_saved, "Q", n, n, false);
  copy(N, N_saved, "N", n, s, false);
  copy(R, R_saved, "R", s, s, false);
  copy(Rc, Rc_saved, "Rc", s, s, true);
}

LQRProblem Discretization::make_problem(const FinalCost& Q_final, double alpha_Q,
                                        double alpha_R, SeqView R_new, bool Q_indefinite) const {
  LQRProblem p;
  p.Q_indefinite = Q_indefinite;
  p.A = Phi.view();
  p.B = Gamma.view();
  p.Q = Q.view();
  p.N = N.view();
  p.q_scale = alpha_Q;
  p.horizon = horizon();
  p.Q_final = Q_final.matrix;
  p.Q_final_stationary = Q_final.stationary;
  p.sequences_checked = true;  // checked when this object was made; R_new below
  // R_i = alpha_Q (R_i - dt Rc_i) + alpha_R dt Rnew_i: the Gamma'QGamma
  // integral scales with Q, the control term is dt times the weight.
  p.R_terms.emplace_back(R.view(), alpha_Q);
  p.R_origin = "R_i = alpha_R R dt + alpha_Q (the integral of Gamma' Q Gamma) of the discretization: a Q or alpha_Q "
               "large against R rounds R's part away";
  if (R_new.empty()) {
    if (alpha_R != alpha_Q) p.R_terms.emplace_back(Rc.view(), (alpha_R - alpha_Q) * dt);
  } else {
    R_new.check("R", s(), s(), horizon());
    R_new.check_finite("R");
    for (Index i = 0; i < (R_new.is_constant() ? 1 : horizon()); ++i)
      check_weight(R_new.is_constant() ? std::string("R") : "R[" + std::to_string(i) + "]", R_new[i].data(), s(),
                   Definiteness::semidefinite);
    p.R_terms.emplace_back(Rc.view(), -alpha_Q * dt);
    p.R_terms.emplace_back(R_new, alpha_R * dt);
  }
  if (!std::isfinite(alpha_Q) || alpha_Q < 0) throw std::domain_error("alpha_Q must be finite and >= 0");
  if (!std::isfinite(alpha_R) || alpha_R <= 0) throw std::domain_error("alpha_R must be finite and > 0");
  p.validate();
  return p;
}

namespace {

// Per-thread buffers for one step's discretization.
struct StepWorkspace {
  StepWorkspace(Index n, Index s, const DiscretizeOptions& opt)
      : vanloan(opt.method == DiscretizeMethod::Exact ? n : 0, opt.method == DiscretizeMethod::Exact ? s : 0),
        zoh(opt.method == DiscretizeMethod::Simpson ? n : 0, opt.method == DiscretizeMethod::Simpson ? s : 0) {
    H.setZero(n, n);
    C.setZero(n, s);
    Qd.setZero(n, n);
    if (opt.method == DiscretizeMethod::Simpson) {
      Phik.setZero(n, n);
      Gamk.setZero(n, s);
      QPhi.setZero(n, n);
      QGam.setZero(n, s);
    }
    tmpX.setZero(n, n);
    tmpS.setZero(s, s);
  }
  VanLoanExpm vanloan;
  BorderedExpm zoh;
  Eigen::MatrixXd H, C, Qd;                //!< A dt (n x n), B dt (n x s), Qc dt (n x n)
  Eigen::MatrixXd Phik, Gamk, QPhi, QGam;  //!< Simpson: Phi(t_k) n x n, Gamma(t_k) n x s, Qc Phi, Qc Gamma
  Eigen::MatrixXd tmpX;  //!< n x n
  Eigen::MatrixXd tmpS;  //!< s x s
};

void discretize_step_exact(ConstMatMap A, ConstMatMap B, ConstMatMap Qc, ConstMatMap Rc, double dt, StepWorkspace& ws,
                           MatMap Phi, MatMap Gam, MatMap Q, MatMap N, MatMap R) {
  const Index n = A.rows(), s = B.cols();
  // Van Loan: exp([[-F', Qbar], [0, F]] dt), F = [[A, B], [0, 0]],
  // Qbar = blkdiag(Qc, 0); W = int_0^dt e^{F't} Qbar e^{F t} dt.
  ws.H = dt * A;
  ws.C = dt * B;
  ws.Qd = dt * Qc;
  ws.vanloan.compute(ws.H, ws.C, ws.Qd);
  const auto& W = ws.vanloan.W();
  Phi = ws.vanloan.Phi();
  Gam = ws.vanloan.Gamma();
  Q = 0.5 * (W.topLeftCorner(n, n) + W.topLeftCorner(n, n).transpose());
  N = W.topRightCorner(n, s);
  R = 0.5 * (W.bottomRightCorner(s, s) + W.bottomRightCorner(s, s).transpose()) + dt * Rc;
}

void discretize_step_simpson(ConstMatMap A, ConstMatMap B, ConstMatMap Qc, ConstMatMap Rc, double dt, int intervals,
                             StepWorkspace& ws, MatMap Phi, MatMap Gam, MatMap Q, MatMap N, MatMap R) {
  const double h = dt / intervals;
  ws.H = h * A;
  ws.C = h * B;
  ws.zoh.compute(ws.H, ws.C);
  const auto& Eh = ws.zoh.E();
  const auto& Gh = ws.zoh.G();
  ws.Phik.setIdentity();
  ws.Gamk.setZero();
  Q.setZero();
  N.setZero();
  R.setZero();
  // Simpson weights h/3 [1, 4, 2, 4, ..., 4, 1]; Phi(t_k) = (e^{A h})^k,
  // Gamma(t_{k+1}) = Gamma(t_k) + Phi(t_k) Gamma(h).
  for (int k = 0; k <= intervals; ++k) {
    const double w = (h / 3.0) * ((k == 0 || k == intervals) ? 1.0 : (k % 2 ? 4.0 : 2.0));
    ws.QPhi.noalias() = Qc * ws.Phik;
    ws.QGam.noalias() = Qc * ws.Gamk;
    Q.noalias() += w * (ws.Phik.transpose() * ws.QPhi);
    N.noalias() += w * (ws.QPhi.transpose() * ws.Gamk);
    R.noalias() += w * (ws.Gamk.transpose() * ws.QGam);
    if (k == intervals) break;
    ws.Gamk.noalias() += ws.Phik * Gh;
    ws.tmpX.noalias() = ws.Phik * Eh;
    ws.Phik.swap(ws.tmpX);
  }
  Phi = ws.Phik;
  Gam = ws.Gamk;
  ws.tmpX = 0.5 * (Q + Q.transpose());
  Q = ws.tmpX;
  ws.tmpS = 0.5 * (R + R.transpose());
  R = ws.tmpS + dt * Rc;
}

}  // namespace

namespace {

// Checks the inputs of discretize() and returns the horizon.
Index checked_horizon(const SeqView& A, const SeqView& B, double dt, const SeqView& Qc, const SeqView& Rc,
                      std::optional<Index> horizon, const DiscretizeOptions& options) {
  const Index T = check_lqr_shapes(A, B, Qc, SeqView(), Rc, horizon).T;
  check_positive("dt", dt);
  A.check_finite("A");
  B.check_finite("B");
  Qc.check_finite("Q");
  Rc.check_finite("R");
  for (Index i = 0; i < (Rc.is_constant() ? 1 : T); ++i)
    check_weight(Rc.is_constant() ? std::string("R") : "R[" + std::to_string(i) + "]", Rc[i].data(), Rc.rows,
                 Definiteness::semidefinite);
  for (Index i = 0; i < (Qc.is_constant() ? 1 : T); ++i)
    check_state_weight(Qc.is_constant() ? std::string("Q") : "Q[" + std::to_string(i) + "]", Qc[i].data(), Qc.rows,
                       options.Q_indefinite);
  if (options.method == DiscretizeMethod::Simpson && (options.simpson_intervals < 2 || options.simpson_intervals % 2))
    throw std::invalid_argument("simpson intervals must be an even number >= 2, got " +
                                std::to_string(options.simpson_intervals));
  return T;
}

// The steps that discretize() computes: one when every input is constant
// (replicated afterwards by replicate_constant), else T.
Index steps_to_compute(const SeqView& A, const SeqView& B, const SeqView& Qc, const SeqView& Rc, Index T) {
  return A.is_constant() && B.is_constant() && Qc.is_constant() && Rc.is_constant() ? 1 : T;
}

Discretization allocate(Index T, const SeqView& A, const SeqView& B, const SeqView& Rc, double dt,
                        const DiscretizeOptions& options) {
  Discretization out(T, A.rows, B.cols, dt);
  out.method = options.method;
  out.Rc = MatrixSeq(Rc.is_constant() ? 1 : T, B.cols, B.cols);
  for (Index i = 0; i < out.Rc.T(); ++i) out.Rc[i] = Rc[i];
  return out;
}

// Step i of the discretization, checked finite while it is still in cache.
void compute_step(Index i, const SeqView& A, const SeqView& B, const SeqView& Qc, const SeqView& Rc, double dt,
                  const DiscretizeOptions& options, StepWorkspace& ws, Discretization& out) {
  if (options.method == DiscretizeMethod::Exact)
    discretize_step_exact(A[i], B[i], Qc[i], Rc[i], dt, ws, out.Phi[i], out.Gamma[i], out.Q[i], out.N[i], out.R[i]);
  else
    discretize_step_simpson(A[i], B[i], Qc[i], Rc[i], dt, options.simpson_intervals, ws, out.Phi[i], out.Gamma[i],
                            out.Q[i], out.N[i], out.R[i]);
  for (MatrixSeq* m : {&out.Phi, &out.Gamma, &out.Q, &out.N, &out.R}) {
    const Index size = m->rows() * m->cols();
    check_finite("discretization result (the exponential overflowed: reduce dt)", m->data() + i * size, size, i * size);
  }
}

// Copies step 0 over the horizon when it was the only step computed.
void replicate_constant(Discretization& out, Index computed) {
  if (computed != 1) return;
  for (Index i = 1; i < out.horizon(); ++i) {
    out.Phi[i] = out.Phi[0];
    out.Gamma[i] = out.Gamma[0];
    out.Q[i] = out.Q[0];
    out.N[i] = out.N[0];
    out.R[i] = out.R[0];
  }
}

}  // namespace

Discretization discretize(SeqView A, SeqView B, double dt, SeqView Qc, SeqView Rc, std::optional<Index> horizon,
                          const DiscretizeOptions& options, const ProgressFn* progress) {
  const Index T = checked_horizon(A, B, dt, Qc, Rc, horizon, options);
  const Index n = A.rows, s = B.cols;
  Discretization out = allocate(T, A, B, Rc, dt, options);
  const Index count = steps_to_compute(A, B, Qc, Rc, T);
  parallel_steps(
      count, options.threads, progress, T, [&] { return StepWorkspace(n, s, options); },
      [&](Index i, StepWorkspace& ws) { compute_step(i, A, B, Qc, Rc, dt, options, ws, out); });
  replicate_constant(out, count);
  return out;
}

namespace {

// The inputs of solve_continuous, checked.
struct ContinuousInputs {
  const SeqView &A, &B, &Qc, &Rc;
  double dt;
  const DiscretizeOptions& options;
  Index T, n, s;
  void step(Index i, StepWorkspace& ws, Discretization& out) const {
    compute_step(i, A, B, Qc, Rc, dt, options, ws, out);
  }
};

// Discretization, then the sweep (nothing to overlap); progress over both.
void solve_in_sequence(const ContinuousInputs& in, const FinalCost& Q_final, int threads,
                       Index count, Discretization& disc, LQRSolution& sol, const ProgressFn* progress) {
  const Index T = in.T, n = in.n, s = in.s;
  const DiscretizeOptions& options = in.options;
  ProgressFn half;
  if (progress) half = [&](Index done, Index) { return (*progress)(done, 2 * T); };
  parallel_steps(
      count, threads, progress ? &half : nullptr, T, [&] { return StepWorkspace(n, s, options); },
      [&](Index i, StepWorkspace& ws) { in.step(i, ws, disc); });
  replicate_constant(disc, count);
  ProgressFn second;
  if (progress) second = [&](Index done, Index) { return (*progress)(T + done, 2 * T); };
  LQRProblem pb = disc.make_problem(Q_final, 1.0, 1.0, SeqView(), in.options.Q_indefinite);
  pb.threads = threads;
  riccati_sweep(pb, sol, progress ? &second : nullptr);
}

void solve_pipelined(const ContinuousInputs& in, const FinalCost& Q_final, int threads,
                     Discretization& disc, LQRSolution& sol, const ProgressFn* progress) {
  const Index T = in.T, n = in.n, s = in.s;
  const DiscretizeOptions& options = in.options;
  // Pipeline: steps are discretized from the last one down, which is the
  // order the sweep consumes them. The calling thread (thread 0) sweeps; when
  // its next step is not ready it discretizes the next unclaimed step
  // instead of waiting, so no core idles and the sweep leaves the critical
  // path (at n = 16 it is a fifth of the work).
  std::atomic<Index> next{T - 1};  // highest step not yet claimed
  std::atomic<Index> finished{0};
  std::unique_ptr<std::atomic<bool>[]> ready(new std::atomic<bool>[T]);
  for (Index i = 0; i < T; ++i) ready[i].store(false, std::memory_order_relaxed);
  std::atomic<bool> cancel{false};
  std::exception_ptr error;
  std::mutex mutex;
  ProgressThrottle throttle(progress, 2 * T);
  auto fail = [&] {
    std::lock_guard<std::mutex> lock(mutex);
    if (!error) error = std::current_exception();
    cancel = true;
  };
  // Claims and discretizes one step; false when none is left.
  auto work_one = [&](StepWorkspace& ws) {
    const Index i = next.fetch_sub(1, std::memory_order_relaxed);
    if (i < 0) return false;
    in.step(i, ws, disc);
    ready[i].store(true, std::memory_order_release);
    finished.fetch_add(1, std::memory_order_relaxed);
    return true;
  };
#pragma omp parallel num_threads(threads)
  {
    StepWorkspace ws(n, s, options);
#ifdef _OPENMP
    const bool sweeper = thread_rank() == 0;
#else
    const bool sweeper = true;
#endif
    if (sweeper) {
      try {
        LQRProblem pb = disc.make_problem(Q_final, 1.0, 1.0, SeqView(), in.options.Q_indefinite);
        pb.before_step = [&](Index i) {
          while (!ready[i].load(std::memory_order_acquire)) {
            if (cancel.load(std::memory_order_relaxed)) throw Cancelled();
            if (!work_one(ws)) std::this_thread::yield();  // step i is in another thread's hands
          }
          if (!throttle.report(finished.load(std::memory_order_relaxed) + (T - 1 - i))) throw Cancelled();
        };
        riccati_sweep(pb, sol, nullptr);
      } catch (...) {
        fail();
      }
    } else {
      try {
        while (!cancel.load(std::memory_order_relaxed) && work_one(ws)) {
        }
      } catch (...) {
        fail();
      }
    }
  }
  if (error) {
    // A worker's error explains why the sweep stopped: report it, not the
    // Cancelled the sweeping thread raised on seeing the flag.
    std::rethrow_exception(error);
  }
  throttle.finish(2 * T);
}

}  // namespace

std::pair<Discretization, LQRSolution> solve_continuous(SeqView A, SeqView B, double dt, SeqView Qc, SeqView Rc,
                                                         const FinalCost& Q_final, std::optional<Index> horizon,
                                                         const DiscretizeOptions& options,
                                                         const ProgressFn* progress) {
  const Index T = checked_horizon(A, B, dt, Qc, Rc, horizon, options);
  const Index n = A.rows, s = B.cols;
  if (!Q_final.stationary) {
    check_shape("Q_final", Q_final.matrix.rows(), Q_final.matrix.cols(), n, n);
    check_finite("Q_final", Q_final.matrix.data(), Q_final.matrix.size());
    check_state_weight("Q_final", Q_final.matrix.data(), n, options.Q_indefinite);
  }
  const int threads = resolve_threads(options.threads);
  const ContinuousInputs in{A, B, Qc, Rc, dt, options, T, n, s};
  Discretization disc = allocate(T, A, B, Rc, dt, options);
  LQRSolution sol(T, n, s);
  const Index count = steps_to_compute(A, B, Qc, Rc, T);
  if (threads <= 1 || count == 1 || T < 2 * threads)
    solve_in_sequence(in, Q_final, threads, count, disc, sol, progress);
  else
    solve_pipelined(in, Q_final, threads, disc, sol, progress);
  return {std::move(disc), std::move(sol)};
}

}  // namespace directable
