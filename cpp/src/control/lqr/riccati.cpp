#include "directable/control/lqr/riccati.hpp"

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <exception>
#include <sstream>
#include <thread>
#include <vector>


#include "directable/control/lqr/stationary.hpp"
#include "directable/core/parallel.hpp"
#include "riccati_kernels.hpp"
#include "directable/core/progress.hpp"
#include "directable/core/clock.hpp"

namespace directable {

namespace {

int max_sweep_threads(const LQRProblem& pb) {
  // Below this size a step is too short for a team to pay. Inside a
  // parallel region (the pipeline of solve_continuous) the other threads
  // are busy discretizing.
  if (pb.n() < 96 || in_parallel_region()) return 1;
  return resolve_threads(pb.threads);
}

// Whether the cores look free enough for a team of `team` threads: the
// 1-minute load average (our own running thread included; it counts the
// whole system, as the number of processors does) leaves room for the
// team's other members. Where the system does not say, they do.
bool cores_look_free(int team) {
#if defined(__unix__) || defined(__APPLE__)
  double load[1];
  const unsigned cores = std::thread::hardware_concurrency();
  if (cores > 0 && getloadavg(load, 1) == 1) return load[0] + double(team - 1) <= double(cores) + 0.5;
#endif
  return true;
}

// The sweep's choice between a team and one thread, chunk by chunk, by
// measurement, built never to lose to one thread:
//  - on a loaded machine (cores_look_free false, asked at the start and
//    again before every team chunk) it does not try the team:
//    a member that waits for a core stalls each of a step's meetings for a
//    scheduler slice, so even a short probe costs more than it can win;
//  - else the first chunk runs on one thread, then a short probe
//    (kProbeSteps) on the team; the team is kept only while it beats the
//    one-thread time by kMargin (hysteresis against noise), is dropped at
//    the first chunk that does not beat the one-thread time, and the
//    one-thread time is re-measured every kRecheck team chunks;
//  - each lost probe doubles the wait before the next (kMinWait ..
//    kMaxWait chunks), so where the team keeps losing the probes cost
//    little.
// The results do not depend on the choice (a team step is bitwise the
// one-thread step).
class SweepThreadChoice {
 public:
  explicit SweepThreadChoice(int team) : team_(team > 1 && cores_look_free(team) ? team : 1) {}
  //! Threads for the next chunk. Before each team chunk the load is looked
  //! at again (a few microseconds against a chunk's milliseconds): load that
  //! arrives during the sweep ends the team before it stalls a chunk, and
  //! counts as a lost probe.
  int begin() {
    if (team_ <= 1 || state_ == State::alone || state_ == State::recheck) return 1;
    if (!cores_look_free(team_)) {
      lose();
      return 1;
    }
    return team_;  // probe or team
  }
  //! At most this many steps in the chunk that begin() sized.
  Index max_steps(Index chunk) const { return state_ == State::probe ? std::min(chunk, kProbeSteps) : chunk; }
  //! Wall time per step of that chunk.
  void end(double seconds_per_step) {
    if (team_ <= 1) return;
    switch (state_) {
      case State::alone:
        t_one_ = std::min(t_one_, seconds_per_step);
        if (--until_probe_ <= 0) state_ = State::probe;
        break;
      case State::recheck:
        t_one_ = seconds_per_step;
        state_ = State::team;
        break;
      case State::probe:
        if (seconds_per_step < kMargin * t_one_) {
          state_ = State::team;
          wait_ = kMinWait;
          team_chunks_ = 0;
        } else {
          lose();
        }
        break;
      case State::team:
        if (!(seconds_per_step < t_one_)) {
          lose();
        } else if (++team_chunks_ % kRecheck == 0) {
          state_ = State::recheck;
        }
        break;
    }
  }
  int team() const { return team_; }

 private:
  enum class State { alone, probe, team, recheck };
  void lose() {
    state_ = State::alone;
    until_probe_ = wait_;
    wait_ = std::min(2 * wait_, kMaxWait);
  }
  static constexpr Index kProbeSteps = 2;
  static constexpr double kMargin = 0.9;
  static constexpr int kMinWait = 4, kMaxWait = 256, kRecheck = 16;
  const int team_;
  State state_ = State::alone;
  int until_probe_ = 1, wait_ = kMinWait, team_chunks_ = 0;
  double t_one_ = 1e300;
};

// Finiteness of step i of a sequence, checked where the sweep reads it
// (a constant matrix once, at the first step swept). The flat index in the
// message is the one of the whole (T, rows, cols) array.
void check_step_finite(const char* name, const SeqView& v, Index i, Index T) {
  if (v.empty() || (v.is_constant() && i != T - 1)) return;
  check_finite(name, v.data + i * v.step_stride, v.rows * v.cols, i * v.step_stride);
}

// Runs f(b0, b1) over blocks of [0, count) (columns of a product, or rows
// of a right-side triangular solve) on `threads` threads. The sweep is
// sequential in time, so for large n its products are what can use the
// cores (Eigen's own GEMM threading stays off: it would also fire inside the
// per-step parallel loops).
//
// The blocks depend on `count` only, never on `threads`: a kernel's
// rounding can depend on its block's shape (Eigen's AVX-512 GEMM and
// triangular kernels do), so one thread walks the same blocks a team
// shares out, and the sweep's results stay independent of the team.
constexpr int kProductBlocks = 4;  // the largest team a step uses

inline int product_blocks(Index count) { return count < 32 * kProductBlocks ? 1 : kProductBlocks; }

template <class F>
void split_range(Index count, int threads, F f) {
  const int blocks = product_blocks(count);
  if (blocks == 1) return f(Index(0), count);
#pragma omp parallel for num_threads(std::max(1, std::min(threads, blocks))) schedule(static)
  for (int b = 0; b < blocks; ++b) f(count * b / blocks, count * (b + 1) / blocks);
}

// Lower triangle of Z += alpha X' Y (X, Y: k x m, Z: m x m), the upper one
// untouched: half the flops of a general product. With several threads the
// columns are cut so that each block holds the same share of the triangle.
template <class ZType, class XType, class YType>
void lower_product(ZType& Z, const XType& X, const YType& Y, double alpha, bool accumulate, int threads) {
  const Index m = Z.cols();
  if (X.rows() == 0) {  // k = 0 (no control): X' Y = 0, and Eigen's product would bind a null reference
    if (!accumulate) Z.template triangularView<Eigen::Lower>().setZero();
    return;
  }
  auto block = [&](Index c0, Index c1) {
    const Index w = c1 - c0;
    auto D = Z.block(c0, c0, w, w).template triangularView<Eigen::Lower>();
    auto S = Z.block(c1, c0, m - c1, w);
    if (accumulate) {
      D += alpha * X.middleCols(c0, w).transpose() * Y.middleCols(c0, w);
      if (c1 < m) S.noalias() += alpha * X.rightCols(m - c1).transpose() * Y.middleCols(c0, w);
    } else {
      D = alpha * X.middleCols(c0, w).transpose() * Y.middleCols(c0, w);
      if (c1 < m) S.noalias() = alpha * X.rightCols(m - c1).transpose() * Y.middleCols(c0, w);
    }
  };
  const int blocks = product_blocks(m);
  if (blocks == 1) return block(0, m);
#pragma omp parallel for num_threads(std::max(1, std::min(threads, blocks))) schedule(static)
  for (int b = 0; b < blocks; ++b) {
    // column c has m - c entries: equal shares of m^2 / 2
    auto cut = [&](int k) { return k == blocks ? m : Index(m * (1.0 - std::sqrt(1.0 - double(k) / blocks))); };
    block(cut(b), cut(b + 1));
  }
}

// "R" for a constant R, "R[i]" for a time-varying one.
std::string step_label(const char* name, bool varies, Index i) {
  return varies ? std::string(name) + "[" + std::to_string(i) + "]" : std::string(name);
}

std::string num(double x) {
  std::ostringstream o;
  o.precision(3);
  o << x;
  return o.str();
}

// The largest |entry| of steps [from, T) of a sequence (those the backward
// sweep has read; a pipelined producer may still be writing the others).
double largest_entry(const SeqView& v, Index from) {
  if (v.empty() || v.rows * v.cols == 0) return 0.0;
  const Index first = v.is_constant() ? 0 : from, count = v.is_constant() ? 1 : v.T - from;
  double m = 0.0;
  for (Index i = first; i < first + count; ++i) m = std::max(m, v[i].cwiseAbs().maxCoeff());
  return m;
}

// The cost-to-go overflowed at `step`: no single input is at fault, so the
// message names the inputs it came from with their magnitudes.
[[noreturn]] void throw_overflow(const LQRProblem& pb, Index step) {
  std::ostringstream msg;
  msg << "Riccati sweep produced non-finite cost-to-go at step " << step
      << ": the weights and dynamics are too large for double precision (largest |entry| of steps >= " << step
      << ": Q " << num(largest_entry(pb.Q, step));
  if (pb.q_scale != 1.0) msg << " scaled by alpha_Q = " << num(pb.q_scale);
  msg << ", Q_final " << (pb.Q_final_stationary ? std::string("\"dare\"") : num(pb.Q_final.size() ? pb.Q_final.cwiseAbs().maxCoeff() : 0.0));
  double r = 0.0;
  for (const auto& term : pb.R_terms) r = std::max(r, std::abs(term.second) * largest_entry(term.first, step));
  msg << ", R " << num(r) << ", A " << num(largest_entry(pb.A, step)) << ", B " << num(largest_entry(pb.B, step)) << ")";
  throw std::domain_error(msg.str());
}

// H_i = R_i + B_i' P_{i+1} B_i failed (a pivot below kPivotTolerance): the
// error path recomputes it from the inputs (P_{i+1} is in `out`) to say
// which pivot failed and whom to blame: R_i, Q_final, or the P_{i+1} that
// an indefinite Q made.
[[noreturn]] void throw_H_not_definite(const LQRProblem& pb, const LQRSolution& out, Index i, bool R_varies) {
  const Index s = pb.s(), T = pb.horizon;
  Eigen::MatrixXd R = Eigen::MatrixXd::Zero(s, s);
  for (const auto& term : pb.R_terms) {
    const auto Rk = term.first[i];
    R += (0.5 * term.second) * (Rk + Rk.transpose());
  }
  const Eigen::MatrixXd P = 0.5 * (out.P[i + 1] + out.P[i + 1].transpose());
  const auto B = pb.B[i];
  const Eigen::MatrixXd H = R + B.transpose() * P * B;
  if (!H.allFinite()) throw_overflow(pb, i + 1);
  // unpivoted LDL': the pivots the Cholesky factorization meets
  Eigen::MatrixXd L = Eigen::MatrixXd::Zero(s, s);
  Eigen::VectorXd d = Eigen::VectorXd::Zero(s);
  Index bad = 0;
  for (Index j = 0; j < s; ++j) {
    d(j) = H(j, j);
    for (Index k = 0; k < j; ++k) d(j) -= L(j, k) * L(j, k) * d(k);
    bad = j;
    if (!(d(j) > kPivotTolerance * std::abs(H(j, j)))) break;
    for (Index r = j + 1; r < s; ++r) {
      double x = H(r, j);
      for (Index k = 0; k < j; ++k) x -= L(r, k) * L(j, k) * d(k);
      L(r, j) = x / d(j);
    }
  }
  std::ostringstream msg;
  msg << "R + B' P B is not positive definite at step " << i << ": its Cholesky pivot " << bad << " is "
      << num(d(bad)) << " (it must exceed " << kPivotTolerance << " times the diagonal entry " << num(H(bad, bad))
      << "); ";
  // the eigensolver lives in the core's cold code (weights.hpp), compiled once, not per dispatch level
  const double r_min = smallest_eigenvalue(R.data(), s), p_min = smallest_eigenvalue(P.data(), P.rows());
  if (r_min < -kSemidefiniteTolerance * R.cwiseAbs().maxCoeff()) {
    msg << step_label("R", R_varies, i) << " is not positive semidefinite (smallest eigenvalue " << num(r_min) << ")";
  } else if (p_min < -kSemidefiniteTolerance * P.cwiseAbs().maxCoeff()) {
    if (i + 1 == T)
      msg << "Q_final is not positive semidefinite (smallest eigenvalue " << num(p_min)
          << ") and R is too small to make up for it";
    else
      msg << "P[" << i + 1 << "] is indefinite (smallest eigenvalue " << num(p_min)
          << "): Q or Q_final is too negative for R to make up for it";
  } else {
    msg << step_label("R", R_varies, i) << " is singular (smallest eigenvalue " << num(r_min)
        << ") and B' P B does not make up for it on its null space";
    if (pb.R_origin) msg << " (" << pb.R_origin << ")";
  }
  throw std::domain_error(msg.str());
}

// R_i's lower triangle in R (s x s, column-major) is mirrored and checked
// positive semidefinite; "R" or "R[i]" in the message.
void check_R_semidefinite(Eigen::MatrixXd& R, bool R_varies, Index i) {
  R.triangularView<Eigen::StrictlyUpper>() = R.transpose();
  check_weight(step_label("R", R_varies, i), R.data(), R.rows(), Definiteness::semidefinite);
}

// Symmetry of step i's Q and R terms (a constant one once, at the first
// step swept), where the sweep reads them.
void check_step_symmetric(const char* name, const SeqView& v, Index i, Index T) {
  if (v.empty() || (v.is_constant() && i != T - 1)) return;
  check_symmetric(step_label(name, !v.is_constant(), i), v[i].data(), v.rows);
}

// Step i's Q (a constant one once): symmetric positive semidefinite unless
// the problem allows an indefinite Q.
void check_step_Q(const LQRProblem& pb, Index i) {
  const SeqView& Q = pb.Q;
  if (Q.empty() || (Q.is_constant() && i != pb.horizon - 1)) return;
  check_state_weight(step_label("Q", !Q.is_constant(), i), Q[i].data(), Q.rows, pb.Q_indefinite);
}

// The stationary P of step T-1's problem, symmetric to the last bit.
Eigen::MatrixXd stationary_final_cost(const LQRProblem& pb) {
  const Index i = pb.horizon - 1, s = pb.s();
  Eigen::MatrixXd R = Eigen::MatrixXd::Zero(s, s);
  for (const auto& term : pb.R_terms) R += term.second * term.first[i];
  const Eigen::MatrixXd N = pb.N.empty() ? Eigen::MatrixXd() : Eigen::MatrixXd(pb.q_scale * pb.N[i]);
  try {
    StationaryOptions options;
    options.Q_indefinite = pb.Q_indefinite;
    const Eigen::MatrixXd P = solve_stationary(pb.A[i], pb.B[i], pb.q_scale * pb.Q[i], R, N, options).P;
    return 0.5 * (P + P.transpose());
  } catch (const std::domain_error& e) {
    throw std::domain_error(std::string("Q_final = \"dare\" (the stationary solution of step ") +
                            std::to_string(i) + "'s problem): " + e.what());
  }
}

void check_step(const LQRProblem& pb, Index i) {
  if (pb.sequences_checked) return;
  const Index T = pb.horizon;
  check_step_finite("A", pb.A, i, T);
  check_step_finite("B", pb.B, i, T);
  check_step_finite("Q", pb.Q, i, T);
  check_step_finite("N", pb.N, i, T);
  for (const auto& term : pb.R_terms) check_step_finite("R", term.first, i, T);
  check_step_Q(pb, i);
  for (const auto& term : pb.R_terms) check_step_symmetric("R", term.first, i, T);
}

// The sweep on detail::CompactRiccati, from step T-1 down: the step
// kernel, the inputs of the next step, and the state of the loop.
class CompactSweep {
 public:
  CompactSweep(const LQRProblem& pb, LQRSolution& out, ProgressThrottle& throttle, bool R_varies)
      : pb_(pb), out_(out), throttle_(throttle), R_varies_(R_varies), kernel_(pb.n(), pb.s()),
        R_factor_(pb.s(), pb.s()), R_ptr_(pb.R_terms.size()), R_scale_(pb.R_terms.size()) {
    for (std::size_t k = 0; k < pb.R_terms.size(); ++k) R_scale_[k] = pb.R_terms[k].second;
  }

  // Where a team could pay (n >= 96, several cores) the steps go in chunks,
  // each on a team or on the one thread (SweepThreadChoice): a step
  // is then ~0.1-0.5 ms, while on a core shared with another job a team
  // member that loses its core stalls the team at each of the step's
  // meetings.
  void run() {
    const Index T = pb_.horizon;
    kernel_.load_P(out_.P[T].data());
    // phases 3 and 6 of a team step are serial: more than 4 threads would idle
    SweepThreadChoice choice(std::min(max_sweep_threads(pb_), 4));
    i_ = T - 1;
    prepare(i_);
    while (i_ >= 0 && !stop_) {
      const bool choose = choice.team() > 1 && kernel_.factored();
      const int threads = choose ? choice.begin() : 1;
      const Index first = i_;
      const double t0 = now_seconds();
      const bool h_definite =
          threads <= 1 ? chunk_alone(kChunk) : chunk_on_team(threads, choice.max_steps(kChunk));
      if (!h_definite) {
        kernel_.finish();
        throw_H_not_definite(pb_, out_, i_, R_varies_);
      }
      if (choose) choice.end((now_seconds() - t0) / double(std::max<Index>(first - i_, 1)));
    }
    kernel_.finish();
  }

 private:
  static constexpr Index kChunk = 8;  // steps per choice between the team and one thread

  const double* N_of(Index i) const { return pb_.N.empty() ? nullptr : pb_.N[i].data(); }

  // Step i's inputs: ready (the pipeline's hook), finite, R_i; and what
  // step i - 1 will read, for step i to prefetch.
  void prepare(Index i) {
    const Index n = pb_.n(), s = pb_.s();
    if (pb_.before_step) pb_.before_step(i);
    check_step(pb_, i);
    if (R_varies_ || i == pb_.horizon - 1) {
      for (std::size_t k = 0; k < R_ptr_.size(); ++k) R_ptr_[k] = pb_.R_terms[k].first[i].data();
      kernel_.set_R(R_ptr_.data(), R_scale_.data(), int(R_ptr_.size()));
      if (pb_.check_R_semidefinite) {
        kernel_.copy_R(R_factor_.data(), s);
        check_R_semidefinite(R_factor_, R_varies_, i);
      }
    }
    // In a pipeline step i - 1 may still be in the making: no prefetch then.
    if (i > 0 && !pb_.before_step) {
      auto& next = kernel_.next;  // step i - 1's data, in the order it reads it
      for (const auto& term : pb_.R_terms)
        if (!term.first.is_constant()) next.add(term.first[i - 1].data(), s * s * sizeof(double));
      if (!pb_.A.is_constant()) next.add(pb_.A[i - 1].data(), n * n * sizeof(double));
      if (!pb_.B.is_constant()) next.add(pb_.B[i - 1].data(), n * s * sizeof(double));
      if (!pb_.N.empty() && !pb_.N.is_constant()) next.add(pb_.N[i - 1].data(), n * s * sizeof(double));
      if (!pb_.Q.is_constant()) next.add(pb_.Q[i - 1].data(), n * n * sizeof(double));
    }
  }

  // Up to kChunk steps on the calling thread; false where H_i is not
  // positive definite (i_ is then that step).
  bool chunk_alone(Index steps) {
    const Index T = pb_.horizon;
    for (Index k = 0; k < steps && i_ >= 0 && !stop_; ++k, --i_) {
      if (!kernel_.step(pb_.A[i_].data(), pb_.B[i_].data(), pb_.Q[i_].data(), N_of(i_), pb_.q_scale,
                        out_.P[i_ + 1].data(), out_.K[i_].data(), out_.P[i_].data()) ||
          kernel_.h_pivot_ratio() < kPivotTolerance)
        return false;
      if (!throttle_.report(T - i_))
        stop_ = true;
      else if (i_ > 0)
        prepare(i_ - 1);
    }
    return true;
  }

  // Up to kChunk steps on a team of `threads`; thread 0 reports progress
  // and prepares the next step. False as chunk_alone.
  bool chunk_on_team(int threads, Index steps) {
    const Index T = pb_.horizon;
    bool go_on = true, h_failed = false;
    std::exception_ptr error;
#pragma omp parallel num_threads(threads)
    {
#pragma omp single
      sync_.set_size(team_size());
      const int t = thread_rank();
      for (Index k = 1;; ++k) {
        if (!kernel_.step_team(t, sync_, pb_.A[i_].data(), pb_.B[i_].data(), pb_.Q[i_].data(), N_of(i_),
                               pb_.q_scale, out_.K[i_].data(), out_.P[i_].data())) {
          if (t == 0) h_failed = true;
          break;
        }
        if (t == 0 && kernel_.h_pivot_ratio() < kPivotTolerance) {
          h_failed = true;
          go_on = false;
        } else if (t == 0) {
          try {
            if (!throttle_.report(T - i_))
              stop_ = true;
            else if (i_ > 0)
              prepare(i_ - 1);
          } catch (...) {
            error = std::current_exception();
            stop_ = true;
          }
          --i_;
          go_on = !stop_ && i_ >= 0 && k < steps && kernel_.factored();
        }
        sync_.wait();
        if (!go_on) break;
      }
    }
    if (error) {
      kernel_.finish();
      std::rethrow_exception(error);
    }
    return !h_failed;
  }

  const LQRProblem& pb_;
  LQRSolution& out_;
  ProgressThrottle& throttle_;
  const bool R_varies_;
  detail::CompactRiccati kernel_;
  detail::TeamSync sync_{1};
  Eigen::MatrixXd R_factor_;          //!< s x s   R_i's factor, where its definiteness is checked
  std::vector<const double*> R_ptr_;  //!< step i's matrix of each R term
  std::vector<double> R_scale_;       //!< each R term's scale
  Index i_ = 0;                       //!< the next step to sweep
  bool stop_ = false;                 //!< cancelled by the progress callback
};

// Square-root form of the sweep, on Eigen's products (and a team of threads
// for large n). With P_{i+1} = L L' and U = L' [B A],
//   Z = U'U = [[B'PB, B'PA], [A'PB, A'PA]]  (lower triangle only),
// H = R + B'PB = L_H L_H', Y' = G' L_H^{-T}, and then
//   K = -L_H^{-T} Y,   P_i = Q + A'PA - Y'Y.
// Per step (s = n/2) that is about 5.1 n^3 flops instead of 8 n^3 for the
// textbook products, and every product is a TRMM/SYRK/GEMM. Where P_{i+1}
// is only semidefinite (its Cholesky fails), Z = [B A]' (P [B A]) instead.
void eigen_sweep(const LQRProblem& pb, LQRSolution& out, ProgressThrottle& throttle, bool R_varies) {
  const Index T = pb.horizon, n = pb.n(), s = pb.s(), m = n + s;
  RiccatiWorkspace ws(n, s);
  SweepThreadChoice choice(max_sweep_threads(pb));  // a team only where it measures faster
  using ColMap = Eigen::Map<Eigen::MatrixXd>;
  // P_i is symmetric, so its row-major storage is also its column-major one.
  auto store_P = [&](Index i) { std::copy(ws.L.data(), ws.L.data() + n * n, out.P[i].data()); };
  ws.L = Eigen::Map<const Eigen::MatrixXd>(out.P[T].data(), n, n);
  for (Index i = T - 1; i >= 0; --i) {
    if (pb.before_step) pb.before_step(i);
    const int threads = choice.begin();
    const double t0 = now_seconds();
    check_step(pb, i);
    const auto A = pb.A[i];  // row-major maps: the products read them in place
    const auto B = pb.B[i];
    Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt_P(ws.L);  // in place: L now holds the factor
    // U = X [B A] for X = L' (square-root form) or X = P, split over columns.
    auto U_of = [&](const auto& X) {
      split_range(m, threads, [&](Index c0, Index c1) {
        if (c0 < s) ws.U.middleCols(c0, std::min(c1, s) - c0).noalias() = X * B.middleCols(c0, std::min(c1, s) - c0);
        if (c1 > s) {
          const Index a0 = std::max(c0, s);
          ws.U.middleCols(a0, c1 - a0).noalias() = X * A.middleCols(a0 - s, c1 - a0);
        }
      });
    };
    if (llt_P.info() == Eigen::Success) {
      U_of(ws.L.triangularView<Eigen::Lower>().transpose());
      lower_product(ws.Z, ws.U, ws.U, 1.0, false, threads);
    } else {
      U_of(Eigen::Map<const Eigen::MatrixXd>(out.P[i + 1].data(), n, n));
      ws.BA.leftCols(s) = B;
      ws.BA.rightCols(n) = A;
      lower_product(ws.Z, ws.BA, ws.U, 1.0, false, threads);
    }
    // H (lower) += sym(R), G' += N
    auto H = ws.Z.topLeftCorner(s, s);
    if (R_varies || i == T - 1) {
      ws.R.setZero();
      for (const auto& term : pb.R_terms) {
        const auto R = term.first[i];
        for (Index c = 0; c < s; ++c)
          for (Index r = c; r < s; ++r) ws.R(r, c) += 0.5 * term.second * (R(r, c) + R(c, r));
      }
      if (pb.check_R_semidefinite) {
        ws.Rllt = ws.R;
        check_R_semidefinite(ws.Rllt, R_varies, i);
      }
    }
    H.triangularView<Eigen::Lower>() += ws.R;
    auto Yt = ws.Z.bottomLeftCorner(n, s);
    if (!pb.N.empty()) Yt += pb.q_scale * pb.N[i];
    Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt_H(H);
    if (llt_H.info() != Eigen::Success || pivot_ratio(H.data(), s, ws.Z.outerStride()) < kPivotTolerance)
      throw_H_not_definite(pb, out, i, R_varies);
    // K' (n x s, column-major) is K (s x n, row-major) in place. Both
    // solves act on rows independently: split the rows over the team.
    ColMap Kt(out.K[i].data(), n, s);
    split_range(n, threads, [&](Index r0, Index r1) {
      auto Yr = Yt.middleRows(r0, r1 - r0);
      auto Kr = Kt.middleRows(r0, r1 - r0);
      llt_H.matrixU().solveInPlace<Eigen::OnTheRight>(Yr);  // Y' = G' L_H^{-T}
      Kr = -Yr;
      llt_H.matrixL().solveInPlace<Eigen::OnTheRight>(Kr);  // K' = -Y' L_H^{-1}
    });
    auto Paa = ws.Z.bottomRightCorner(n, n);
    lower_product(Paa, Yt.transpose(), Yt.transpose(), -1.0, true, threads);
    // P_i = Paa (mirrored) + q sym(Q_i). Q_i is read once, in memory order
    // (it comes from DRAM); the transposed read then hits the cache.
    for (Index c = 0; c < n; ++c) {
      for (Index r = c; r < n; ++r) ws.L(r, c) = Paa(r, c);
      for (Index r = 0; r < c; ++r) ws.L(r, c) = Paa(c, r);
    }
    const Eigen::Map<const Eigen::MatrixXd> Qt(pb.Q[i].data(), n, n);  // Q_i' (row-major read as column-major)
    ws.L += (0.5 * pb.q_scale) * Qt;
    ws.L += (0.5 * pb.q_scale) * Qt.transpose();
    store_P(i);
    choice.end(now_seconds() - t0);
    if (!throttle.report(T - i)) break;
  }
}

}  // namespace

void check_state_weight(const std::string& label, const double* M, Index n, bool indefinite_allowed) {
  if (indefinite_allowed)
    check_symmetric(label, M, n);
  else
    check_weight(label, M, n, Definiteness::semidefinite);
}

double pivot_ratio(const double* F, Index s, Index ld) {
  // diag_j = sum_{k <= j} F[k ld + j]^2, summed over k in increasing order
  // as before, but row by row over blocks of columns: contiguous reads
  // (a strided walk per column was ~3% of a step at n = 16).
  constexpr Index kBlock = 128;
  double diag[kBlock];
  double ratio = 1.0;
  for (Index j0 = 0; j0 < s; j0 += kBlock) {
    const Index j1 = std::min(s, j0 + kBlock);
    std::fill(diag, diag + (j1 - j0), 0.0);
    for (Index k = 0; k < j1; ++k) {
      const double* row = F + k * ld;
      for (Index j = std::max(k, j0); j < j1; ++j) diag[j - j0] += row[j] * row[j];
    }
    for (Index j = j0; j < j1; ++j) {
      const double d = F[j * ld + j] * F[j * ld + j];
      if (!(d >= ratio * diag[j - j0])) ratio = diag[j - j0] > 0.0 ? d / diag[j - j0] : 0.0;
    }
  }
  return ratio;
}

LQRDimensions check_lqr_shapes(const SeqView& A, const SeqView& B, const SeqView& Q, const SeqView& N,
                               const SeqView& R, std::optional<Index> horizon) {
  if (A.empty()) throw std::invalid_argument("A is missing");
  if (B.empty()) throw std::invalid_argument("B is missing");
  const Index n = A.rows, s = B.cols;
  if (n < 1)
    throw std::invalid_argument("need at least one state, got n = 0 (A " + shape_str(A.rows, A.cols) + ", B " +
                                shape_str(B.rows, B.cols) + ")");
  Index T = -1;
  if (horizon) {
    T = *horizon;
  } else {
    for (const SeqView* v : {&A, &B, &Q, &N, &R})
      if (!v->empty() && !v->is_constant()) {
        T = v->T;
        break;
      }
    if (T < 0) throw std::invalid_argument("horizon must be given when A, B, Q, R (and N) are all constant in time");
  }
  if (T <= 0) throw std::invalid_argument("horizon must be a positive number of steps, got " + std::to_string(T));
  auto got = [](const SeqView& v) { return v.is_constant() ? shape_str(v.rows, v.cols) : shape_str(v.T, v.rows, v.cols); };
  // n is A's, unless B and Q agree on another one: then A is the odd one out
  const Index n_BQ = (!Q.empty() && B.rows == Q.rows && Q.rows == Q.cols) ? B.rows : -1;
  if (A.rows != A.cols) {
    std::string msg = "A must have shape (T, n, n) or (n, n): square (n, n) blocks, time first";
    if (n_BQ > 0) msg += " (n = " + std::to_string(n_BQ) + " from B and Q)";
    msg += ", got " + got(A);
    if (!A.is_constant() && A.T == A.rows) msg += " (time last? np.moveaxis(A, -1, 0) puts it first)";
    throw std::invalid_argument(msg);
  }
  if (n_BQ > 0 && n_BQ != n)
    throw_shape("A", shape_str(T, n_BQ, n_BQ) + " or " + shape_str(n_BQ, n_BQ) + " (n = " + std::to_string(n_BQ) +
                         " from B and Q)", got(A));
  A.check("A", n, n, T);
  B.check("B", n, s, T);
  Q.check("Q", n, n, T);
  if (!N.empty()) N.check("N", n, s, T);
  R.check("R", s, s, T);
  return {T, n, s};
}

void LQRProblem::validate() const {
  if (R_terms.empty()) throw std::invalid_argument("R is missing");
  const LQRDimensions dims = check_lqr_shapes(A, B, Q, N, R_terms[0].first, horizon);
  for (const auto& term : R_terms) term.first.check("R", dims.s, dims.s, dims.T);
  if (!Q_final_stationary) {
    check_shape("Q_final", Q_final.rows(), Q_final.cols(), dims.n, dims.n);
    check_finite("Q_final", Q_final.data(), Q_final.size());
    check_state_weight("Q_final", Q_final.data(), dims.n, Q_indefinite);
  }
  if (!std::isfinite(q_scale)) throw std::domain_error("cost scale must be finite");
}

LQRProblem discrete_problem(SeqView A, SeqView B, SeqView Q, SeqView R, const FinalCost& Q_final,
                            SeqView N, std::optional<Index> horizon, bool Q_indefinite) {
  LQRProblem p;
  p.Q_indefinite = Q_indefinite;
  p.A = A;
  p.B = B;
  p.Q = Q;
  p.N = N;
  p.R_terms.emplace_back(R, 1.0);
  p.horizon = check_lqr_shapes(A, B, Q, N, R, horizon).T;
  p.Q_final = Q_final.matrix;
  p.Q_final_stationary = Q_final.stationary;
  p.check_R_semidefinite = true;
  p.validate();
  return p;
}

LQRSolution::LQRSolution(const SeqView& K_saved, const SeqView& P_saved) {
  if (K_saved.empty()) throw std::invalid_argument("K is missing");
  if (P_saved.empty()) throw std::invalid_argument("P is missing");
  if (K_saved.is_constant())
    throw_shape("K", "(T, s, n)", shape_str(K_saved.rows, K_saved.cols));
  const Index T = K_saved.T, s = K_saved.rows, n = K_saved.cols;
  if (P_saved.is_constant() || P_saved.T != T + 1 || P_saved.rows != n || P_saved.cols != n)
    throw_shape("P", shape_str(T + 1, n, n),
                P_saved.is_constant() ? shape_str(P_saved.rows, P_saved.cols)
                                      : shape_str(P_saved.T, P_saved.rows, P_saved.cols));
  K_saved.check_finite("K");
  P_saved.check_finite("P");
  K = MatrixSeq(T, s, n, MatrixSeq::Uninitialized{});
  P = MatrixSeq(T + 1, n, n, MatrixSeq::Uninitialized{});
  std::copy(K_saved.data, K_saved.data + T * s * n, K.data());
  std::copy(P_saved.data, P_saved.data + (T + 1) * n * n, P.data());
}

double LQRSolution::cost_to_go(const Eigen::Ref<const Eigen::VectorXd>& x, Index step) const {
  if (x.size() != n()) throw_shape("x", "(" + std::to_string(n()) + ",)", "(" + std::to_string(x.size()) + ",)");
  if (step < 0 || step > horizon())
    throw std::invalid_argument("step must be in [0, " + std::to_string(horizon()) + "], got " + std::to_string(step));
  check_finite("x", x.data(), x.size());
  const double J = double(x.transpose() * P[step] * x);
  if (!std::isfinite(J))
    throw std::domain_error("x is too large: its cost-to-go x' P[" + std::to_string(step) +
                            "] x overflows (largest |x_i| = " + num(x.cwiseAbs().maxCoeff()) + ")");
  return J;
}

RiccatiWorkspace::RiccatiWorkspace(Index n, Index s)
    : L(n, n), BA(n, s + n), U(n, s + n), Z(s + n, s + n), R(s, s), Rllt(s, s) {
  Z.setZero();  // its strict upper triangle is never written
}

// Square-root form of the sweep: see eigen_sweep; compact_sweep does the
// same steps with its own kernels for small n (CompactSweep).
void riccati_sweep(const LQRProblem& pb, LQRSolution& out, const ProgressFn* progress) {
  const Index T = pb.horizon, n = pb.n(), s = pb.s();
  if (out.horizon() != T || out.n() != n || out.s() != s)
    throw std::invalid_argument("riccati_sweep: output not sized " + shape_str(T, s, n));
  ProgressThrottle throttle(progress, T);
  bool R_varies = false;
  for (const auto& term : pb.R_terms) R_varies = R_varies || !term.first.is_constant();
  if (pb.Q_final_stationary) {
    if (pb.before_step) pb.before_step(T - 1);
    check_step(pb, T - 1);
    out.P[T] = stationary_final_cost(pb);
  } else {
    out.P[T] = 0.5 * (pb.Q_final + pb.Q_final.transpose());
  }
  // The compact step (on one thread or a team) where it applies; else
  // Eigen's products (a team splits them for large n).
  if (detail::compact_riccati_applies(n, s))
    CompactSweep(pb, out, throttle, R_varies).run();
  else
    eigen_sweep(pb, out, throttle, R_varies);
  throttle.finish(T);
  if (!out.P[0].allFinite() || !out.K[0].allFinite()) throw_overflow(pb, 0);
}

LQRSolution solve_discrete(const LQRProblem& problem, const ProgressFn* progress) {
  problem.validate();
  LQRSolution out(problem.horizon, problem.n(), problem.s());
  riccati_sweep(problem, out, progress);
  return out;
}

}  // namespace directable
