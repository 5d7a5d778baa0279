#include "directable/control/riccati.hpp"

#include <sstream>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace directable {

namespace {

// C (+)= A B with C's columns split over `threads` threads. The sweep is
// sequential in time, so for large n its products are what can use the
// cores (Eigen's own GEMM threading stays off: it would also fire inside
// the per-step parallel loops).
template <class Dst, class Lhs, class Rhs>
void gemm(Dst&& C, const Lhs& A, const Rhs& B, int threads, bool accumulate = false) {
  const Index cols = C.cols();
  if (threads <= 1 || cols < 32 * threads) {
    if (accumulate)
      C.noalias() += A * B;
    else
      C.noalias() = A * B;
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int t = 0; t < threads; ++t) {
    const Index c0 = cols * t / threads, c1 = cols * (t + 1) / threads;
    if (accumulate)
      C.middleCols(c0, c1 - c0).noalias() += A * B.middleCols(c0, c1 - c0);
    else
      C.middleCols(c0, c1 - c0).noalias() = A * B.middleCols(c0, c1 - c0);
  }
}

int sweep_threads(Index n) {
#ifdef _OPENMP
  // Below this size a fork/join per product costs more than it saves
  // (measured: at n = 64 two threads were 1.7x slower than one on a shared
  // 2-core machine; at n = 128 on an idle one they were 1.8x faster).
  return n >= 96 ? omp_get_max_threads() : 1;
#else
  (void)n;
  return 1;
#endif
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
  A.check_finite("A");
  B.check_finite("B");
  Q.check_finite("Q");
  N.check_finite("N");
  for (const auto& term : R_terms) term.first.check_finite("R");
  check_finite("Q_final", Q_final.data(), Q_final.size());
  if (!std::isfinite(q_scale)) throw std::domain_error("cost scale must be finite");
}

RiccatiWorkspace::RiccatiWorkspace(Index n, Index s)
    : PA(n, n), PB(n, s), H(s, s), G(s, n), Kc(s, n), Pn(n, n), llt(s) {}

void riccati_sweep(const LQRProblem& pb, LQRSolution& out, const ProgressFn* progress) {
  const Index T = pb.horizon, n = pb.n(), s = pb.s();
  if (out.horizon() != T || out.n() != n || out.s() != s)
    throw std::invalid_argument("riccati_sweep: output not sized " + shape_str(T, s, n));
  RiccatiWorkspace ws(n, s);
  ProgressThrottle throttle(progress, T);
  const int threads = sweep_threads(n);

  out.P[T] = 0.5 * (pb.Q_final + pb.Q_final.transpose());
  for (Index i = T - 1; i >= 0; --i) {
    const auto A = pb.A[i];
    const auto B = pb.B[i];
    const auto Pnext = out.P[i + 1];
    gemm(ws.PA, Pnext, A, threads);
    gemm(ws.PB, Pnext, B, threads);
    // H = R + B' P B, G = N' + B' P A
    ws.H.noalias() = B.transpose() * ws.PB;
    for (const auto& term : pb.R_terms) ws.H += term.second * term.first[i];
    // Cholesky reads one triangle: use the symmetric part (x'Rx sees only it).
    for (Index c = 0; c < s; ++c)
      for (Index r = c + 1; r < s; ++r) ws.H(r, c) = ws.H(c, r) = 0.5 * (ws.H(r, c) + ws.H(c, r));
    gemm(ws.G, B.transpose(), ws.PA, threads);
    if (!pb.N.empty()) ws.G += pb.q_scale * pb.N[i].transpose();
    ws.llt.compute(ws.H);
    if (ws.llt.info() != Eigen::Success) {
      std::ostringstream msg;
      msg << "R + B' P B is not positive definite at step " << i
          << " (R must be symmetric positive definite, or B' P B must make it so)";
      throw std::domain_error(msg.str());
    }
    ws.Kc = ws.G;
    ws.llt.solveInPlace(ws.Kc);
    ws.Kc = -ws.Kc;
    auto K = out.K[i];
    K = ws.Kc;
    // P_i = Q + A' P A + G' K, symmetrized against round-off drift.
    gemm(ws.Pn, A.transpose(), ws.PA, threads);
    gemm(ws.Pn, ws.G.transpose(), ws.Kc, threads, true);
    ws.Pn += pb.q_scale * pb.Q[i];
    auto P = out.P[i];
    P = 0.5 * (ws.Pn + ws.Pn.transpose());
    if (!throttle.report(T - i)) break;
  }
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
