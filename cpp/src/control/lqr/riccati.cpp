#include "directable/control/lqr/riccati.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <sstream>
#include <vector>

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
template <class F>
void split_range(Index count, int threads, F f) {
  if (threads <= 1 || count < 32 * threads) return f(Index(0), count);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int t = 0; t < threads; ++t) f(count * t / threads, count * (t + 1) / threads);
}

// Lower triangle of Z += alpha X' Y (X, Y: k x m, Z: m x m), the upper one
// untouched: half the flops of a general product. With several threads the
// columns are cut so that each block holds the same share of the triangle.
template <class ZType, class XType, class YType>
void lower_product(ZType& Z, const XType& X, const YType& Y, double alpha, bool accumulate, int threads) {
  const Index m = Z.cols();
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
  if (threads <= 1 || m < 32 * threads) return block(0, m);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int t = 0; t < threads; ++t) {
    // column c has m - c entries: equal shares of m^2 / 2
    auto cut = [&](int k) { return k == threads ? m : Index(m * (1.0 - std::sqrt(1.0 - double(k) / threads))); };
    block(cut(t), cut(t + 1));
  }
}

[[noreturn]] void throw_H_not_definite(Index i) {
  std::ostringstream msg;
  msg << "R + B' P B is not positive definite at step " << i
      << " (R must be symmetric positive definite, or B' P B must make it so)";
  throw std::domain_error(msg.str());
}

// R_i's lower triangle in Rllt (s x s) is factored in place; "R" or "R[i]"
// in the message.
void check_R_definite(Eigen::MatrixXd& Rllt, bool R_varies, Index i) {
  Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt_R(Rllt);
  if (llt_R.info() != Eigen::Success)
    throw std::domain_error((R_varies ? "R[" + std::to_string(i) + "]" : std::string("R")) +
                            " must be symmetric positive definite");
}

void check_step(const LQRProblem& pb, Index i) {
  if (pb.sequences_checked) return;
  const Index T = pb.horizon;
  check_step_finite("A", pb.A, i, T);
  check_step_finite("B", pb.B, i, T);
  check_step_finite("Q", pb.Q, i, T);
  check_step_finite("N", pb.N, i, T);
  for (const auto& term : pb.R_terms) check_step_finite("R", term.first, i, T);
}

// The sweep on detail::CompactRiccati. Where a team could pay (n >= 96,
// several cores) the steps go in chunks, each on a team or on the one
// thread, whichever measures faster: a step is then ~0.1-0.5 ms, while on
// a core shared with another job a team member that loses its core stalls
// the team at each of the step's meetings.
void compact_sweep(const LQRProblem& pb, LQRSolution& out, ProgressThrottle& throttle, bool R_varies) {
  const Index T = pb.horizon, n = pb.n(), s = pb.s();
  detail::CompactRiccati kernel(n, s);
  Eigen::MatrixXd Rllt(s, s);  // R_i's factor, where its definiteness is checked
  const int terms = int(pb.R_terms.size());
  std::vector<const double*> R_ptr(terms);
  std::vector<double> R_scale(terms);
  for (int k = 0; k < terms; ++k) R_scale[k] = pb.R_terms[k].second;
  kernel.load_P(out.P[T].data());
  // Step i's inputs: ready (the pipeline's hook), finite, R_i; and what
  // step i - 1 will read, for step i to prefetch.
  auto prepare = [&](Index i) {
    if (pb.before_step) pb.before_step(i);
    check_step(pb, i);
    if (R_varies || i == T - 1) {
      for (int k = 0; k < terms; ++k) R_ptr[k] = pb.R_terms[k].first[i].data();
      kernel.set_R(R_ptr.data(), R_scale.data(), terms);
      if (pb.check_R_definite) {
        kernel.copy_R(Rllt.data(), s);
        check_R_definite(Rllt, R_varies, i);
      }
    }
    // In a pipeline step i - 1 may still be in the making: no prefetch then.
    if (i > 0 && !pb.before_step) {
      auto& next = kernel.next;  // step i - 1's data, in the order it reads it
      for (const auto& term : pb.R_terms)
        if (!term.first.is_constant()) next.add(term.first[i - 1].data(), s * s * sizeof(double));
      if (!pb.A.is_constant()) next.add(pb.A[i - 1].data(), n * n * sizeof(double));
      if (!pb.B.is_constant()) next.add(pb.B[i - 1].data(), n * s * sizeof(double));
      if (!pb.N.empty() && !pb.N.is_constant()) next.add(pb.N[i - 1].data(), n * s * sizeof(double));
      if (!pb.Q.is_constant()) next.add(pb.Q[i - 1].data(), n * n * sizeof(double));
    }
  };
  const double* const N0 = nullptr;
  auto N_of = [&](Index i) { return pb.N.empty() ? N0 : pb.N[i].data(); };
  // phases 3 and 6 of a team step are serial: more than 4 threads would idle
  const int team = std::min(max_sweep_threads(pb), 4);
  TeamChooser chooser(team);
  detail::TeamSync sync(1);
  constexpr Index kChunk = 8;  // steps per choice between the team and one thread
  bool stop = false;
  std::exception_ptr error;
  Index i = T - 1;
  prepare(i);
  while (i >= 0 && !stop) {
    const bool choose = team > 1 && kernel.factored();
    const int threads = choose ? chooser.begin() : 1;
    const Index first = i;
    const double t0 = now_seconds();
    bool h_failed = false;
    if (threads <= 1) {
      for (Index k = 0; k < kChunk && i >= 0 && !stop; ++k, --i) {
        if (!kernel.step(pb.A[i].data(), pb.B[i].data(), pb.Q[i].data(), N_of(i), pb.q_scale, out.P[i + 1].data(),
                         out.K[i].data(), out.P[i].data())) {
          h_failed = true;
          break;
        }
        if (!throttle.report(T - i))
          stop = true;
        else if (i > 0)
          prepare(i - 1);
      }
    } else {
      bool go_on = true;
#pragma omp parallel num_threads(threads)
      {
#pragma omp single
        sync.set_size(team_size());
        const int t = thread_rank();
        for (Index k = 1;; ++k) {
          if (!kernel.step_team(t, sync, pb.A[i].data(), pb.B[i].data(), pb.Q[i].data(), N_of(i), pb.q_scale,
                                out.K[i].data(), out.P[i].data())) {
            if (t == 0) h_failed = true;
            break;
          }
          if (t == 0) {
            try {
              if (!throttle.report(T - i))
                stop = true;
              else if (i > 0)
                prepare(i - 1);
            } catch (...) {
              error = std::current_exception();
              stop = true;
            }
            --i;
            go_on = !stop && i >= 0 && k < kChunk && kernel.factored();
          }
          sync.wait();
          if (!go_on) break;
        }
      }
      if (error) {
        kernel.finish();
        std::rethrow_exception(error);
      }
    }
    if (h_failed) {
      kernel.finish();
      throw_H_not_definite(i);
    }
    if (choose) chooser.end((now_seconds() - t0) / double(std::max<Index>(first - i, 1)));
  }
  kernel.finish();
}

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
  TeamChooser chooser(max_sweep_threads(pb));  // a team only where it measures faster
  using ColMap = Eigen::Map<Eigen::MatrixXd>;
  // P_i is symmetric, so its row-major storage is also its column-major one.
  auto store_P = [&](Index i) { std::copy(ws.L.data(), ws.L.data() + n * n, out.P[i].data()); };
  ws.L = Eigen::Map<const Eigen::MatrixXd>(out.P[T].data(), n, n);
  for (Index i = T - 1; i >= 0; --i) {
    if (pb.before_step) pb.before_step(i);
    const int threads = chooser.begin();
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
      if (pb.check_R_definite) {
        ws.Rllt = ws.R;
        check_R_definite(ws.Rllt, R_varies, i);
      }
    }
    H.triangularView<Eigen::Lower>() += ws.R;
    auto Yt = ws.Z.bottomLeftCorner(n, s);
    if (!pb.N.empty()) Yt += pb.q_scale * pb.N[i];
    Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> llt_H(H);
    if (llt_H.info() != Eigen::Success) throw_H_not_definite(i);
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
    chooser.end(now_seconds() - t0);
    if (!throttle.report(T - i)) break;
  }
}

}  // namespace

void LQRProblem::validate() const {
  if (A.empty()) throw std::invalid_argument("A is missing");
  if (B.empty()) throw std::invalid_argument("B is missing");
  const Index n = A.rows, s = B.cols, T = horizon;
  if (n < 1)
    throw std::invalid_argument("need at least one state, got n = 0 (A " + shape_str(A.rows, A.cols) + ", B " +
                                shape_str(B.rows, B.cols) + ")");
  if (T <= 0) throw std::invalid_argument("horizon must be a positive number of steps, got " + std::to_string(T));
  if (A.rows != A.cols) throw_shape("A", shape_str(T, n, n) + " (square blocks)", shape_str(A.T, A.rows, A.cols));
  A.check("A", n, n, T);
  B.check("B", n, s, T);
  Q.check("Q", n, n, T);
  if (!N.empty()) N.check("N", n, s, T);
  if (R_terms.empty()) throw std::invalid_argument("R is missing");
  for (const auto& term : R_terms) term.first.check("R", s, s, T);
  check_shape("Q_final", Q_final.rows(), Q_final.cols(), n, n);
  check_finite("Q_final", Q_final.data(), Q_final.size());
  if (!std::isfinite(q_scale)) throw std::domain_error("cost scale must be finite");
}

RiccatiWorkspace::RiccatiWorkspace(Index n, Index s)
    : L(n, n), BA(n, s + n), U(n, s + n), Z(s + n, s + n), R(s, s), Rllt(s, s) {
  Z.setZero();  // its strict upper triangle is never written
}

// Square-root form of the sweep: see eigen_sweep; compact_sweep does the
// same steps with its own kernels for small n.
void riccati_sweep(const LQRProblem& pb, LQRSolution& out, const ProgressFn* progress) {
  const Index T = pb.horizon, n = pb.n(), s = pb.s();
  if (out.horizon() != T || out.n() != n || out.s() != s)
    throw std::invalid_argument("riccati_sweep: output not sized " + shape_str(T, s, n));
  ProgressThrottle throttle(progress, T);
  bool R_varies = false;
  for (const auto& term : pb.R_terms) R_varies = R_varies || !term.first.is_constant();
  out.P[T] = 0.5 * (pb.Q_final + pb.Q_final.transpose());
  // The compact step (on one thread or a team) where it applies; else
  // Eigen's products (a team splits them for large n).
  if (detail::compact_riccati_applies(n, s))
    compact_sweep(pb, out, throttle, R_varies);
  else
    eigen_sweep(pb, out, throttle, R_varies);
  throttle.finish(T);
  if (!out.P[0].allFinite() || !out.K[0].allFinite())
    throw std::domain_error("Riccati sweep produced non-finite cost-to-go (ill-conditioned problem)");
}

LQRSolution solve_discrete(const LQRProblem& problem, const ProgressFn* progress) {
  problem.validate();
  LQRSolution out(problem.horizon, problem.n(), problem.s());
  riccati_sweep(problem, out, progress);
  return out;
}

}  // namespace directable
