#include "directable/control/lqr/stationary.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/SVD>
#include <cmath>
#include <complex>
#include <limits>
#include <sstream>
#include <string>

#include "directable/control/lqr/riccati.hpp"
#include "directable/core/errors.hpp"

namespace directable {

namespace {

using Mat = Eigen::MatrixXd;
using CRef = Eigen::Ref<const Eigen::MatrixXd>;

std::string num(double x) {
  std::ostringstream o;
  o.precision(4);
  o << x;
  return o.str();
}

std::string num(std::complex<double> z) {
  std::ostringstream o;
  o.precision(6);
  o << z.real() << (z.imag() < 0 ? " - " : " + ") << std::abs(z.imag()) << "j";
  return o.str();
}

void symmetrize(Mat& M) { M = 0.5 * (M + M.transpose()).eval(); }

// K = -H^{-1} G with H = R + B'PB, G = B'PA + N' (s x n); false where H
// is not positive definite.
bool gain(const CRef& A, const CRef& B, const CRef& R, const CRef& N, const Mat& P, Mat& K) {
  const Mat PB = P * B;
  Mat H = R + B.transpose() * PB;
  symmetrize(H);
  Eigen::LLT<Mat> llt(H);
  if (llt.info() != Eigen::Success || pivot_ratio(llt.matrixLLT().data(), H.rows(), H.rows()) < kPivotTolerance)
    return false;
  Mat G = PB.transpose() * A;
  if (N.size()) G += N.transpose();
  K = -llt.solve(G);
  return true;
}

// Res(P) = Q + A'PA - P + G'K for K = -H^{-1} G.
Mat residual_with_gain(const CRef& A, const CRef& B, const CRef& Q, const CRef& N, const Mat& P, const Mat& K) {
  Mat G = B.transpose() * P * A;
  if (N.size()) G += N.transpose();
  Mat res = Q + A.transpose() * P * A - P + G.transpose() * K;
  symmetrize(res);
  return res;
}

double rho(const Mat& M) { return Eigen::EigenSolver<Mat>(M, false).eigenvalues().cwiseAbs().maxCoeff(); }

// X = sum_k M'^k C M^k, the solution of M' X M - X + C = 0 for rho(M) < 1,
// by Smith's doubling (X_{j+1} = X_j + M_j' X_j M_j, M_{j+1} = M_j^2).
Mat stein(Mat M, Mat C) {
  const double eps = std::numeric_limits<double>::epsilon();
  for (int j = 0; j < 64; ++j) {
    Mat term = M.transpose() * C * M;
    symmetrize(term);
    C += term;
    if (!(term.norm() > eps * C.norm())) break;
    M = (M * M).eval();
  }
  return C;
}

// Smallest singular value of M relative to its largest one (0 for M = 0).
double relative_smallest_singular_value(const Eigen::MatrixXcd& M) {
  const Eigen::VectorXd sv = Eigen::JacobiSVD<Eigen::MatrixXcd>(M).singularValues();
  return sv(0) > 0 ? sv(sv.size() - 1) / sv(0) : 0.0;
}

// No stabilizing solution was found: the eigenvalue of A that cannot be
// stabilized (PBH test on [A - lambda I, B]) or that Q does not see on the
// unit circle (PBH test on [A - lambda I; Q]); else what was found.
[[noreturn]] void throw_no_stabilizing(const CRef& A, const CRef& B, const CRef& Q, int iterations,
                                       double spectral_radius) {
  const Index n = A.rows(), s = B.cols();
  const double tol = 1e-10;
  const Eigen::VectorXcd eig = Eigen::EigenSolver<Mat>(A, false).eigenvalues();
  for (Index k = 0; k < n; ++k) {
    const std::complex<double> l = eig(k);
    if (std::abs(l) < 1.0 - 1e-8) continue;
    Eigen::MatrixXcd M(n, n + s);
    M.leftCols(n) = A.cast<std::complex<double>>() - l * Eigen::MatrixXcd::Identity(n, n);
    M.rightCols(s) = B.cast<std::complex<double>>();
    if (relative_smallest_singular_value(M) < tol)
      throw std::domain_error("(A, B) is not stabilizable: the eigenvalue " + num(l) + " of A (|lambda| = " +
                              num(std::abs(l)) + " >= 1) cannot be moved by B, so no stabilizing solution exists");
  }
  for (Index k = 0; k < n; ++k) {
    const std::complex<double> l = eig(k);
    if (std::abs(std::abs(l) - 1.0) > 1e-8) continue;
    Eigen::MatrixXcd M(2 * n, n);
    M.topRows(n) = A.cast<std::complex<double>>() - l * Eigen::MatrixXcd::Identity(n, n);
    M.bottomRows(n) = Q.cast<std::complex<double>>();
    if (relative_smallest_singular_value(M) < tol)
      throw std::domain_error("(A, Q) is not detectable: the eigenvalue " + num(l) +
                              " of A lies on the unit circle and Q does not see it, so no stabilizing solution "
                              "exists");
  }
  // no single argument is at fault: the weights and dynamics together (an indefinite Q, weights beyond double range)
  throw std::domain_error("no stabilizing solution of the Riccati equation for these A, B, Q, R (and N) found after " +
                          std::to_string(iterations) + " doubling steps (closed-loop spectral radius " +
                          num(spectral_radius) + "): the pencil has eigenvalues on or too near the unit circle");
}

void validate(const CRef& A, const CRef& B, const CRef& Q, const CRef& R, const CRef& N, bool Q_indefinite) {
  const Index n = A.rows(), s = B.cols();
  if (n < 1) throw std::invalid_argument("need at least one state, got A " + shape_str(A.rows(), A.cols()));
  if (A.cols() != n) throw_shape("A", "(n, n) (square)", shape_str(A.rows(), A.cols()));
  if (s < 1 || B.rows() != n)
    throw_shape("B", "(" + std::to_string(n) + ", s) with s >= 1 (n from A)", shape_str(B.rows(), B.cols()));
  check_shape("Q", Q.rows(), Q.cols(), n, n);
  check_shape("R", R.rows(), R.cols(), s, s);
  if (N.size()) check_shape("N", N.rows(), N.cols(), n, s);
  // the maps below read column-major storage; Ref may carry a stride
  const Mat a = A, b = B, q = Q, r = R, nn = N;
  check_finite("A", a.data(), a.size());
  check_finite("B", b.data(), b.size());
  check_finite("Q", q.data(), q.size());
  check_finite("R", r.data(), r.size());
  if (N.size()) check_finite("N", nn.data(), nn.size());
  // the weight checks read row-major storage, so that their messages name entries as NumPy does
  const RowMatrix q_rows = Q, r_rows = R;
  check_state_weight("Q", q_rows.data(), n, Q_indefinite);
  check_weight("R", r_rows.data(), s, Definiteness::semidefinite);
}

}  // namespace

StationaryLQR solve_stationary(const CRef& A, const CRef& B, const CRef& Q_in, const CRef& R_in, const CRef& N,
                               const StationaryOptions& opt, const ProgressFn* progress) {
  validate(A, B, Q_in, R_in, N, opt.Q_indefinite);
  const Index n = A.rows(), s = B.cols();
  const Mat Q = 0.5 * (Q_in + Q_in.transpose()), R = 0.5 * (R_in + R_in.transpose());

  // Singular R: solve for Y = P - c I, the DARE with R + c B'B, N + c A'B,
  // Q + c (A'A - I) (c of the order of P, so Y is no harder than P).
  Eigen::LLT<Mat> llt_R(R);
  const bool shift = llt_R.info() != Eigen::Success || llt_R.rcond() < 1e-10;
  double c = 0.0;
  Mat Rt = R, Nt = N.size() ? Mat(N) : Mat::Zero(n, s), Qt = Q;
  if (shift) {
    const double b2 = B.squaredNorm();
    c = std::max(Q.norm(), b2 > 0 ? R.norm() / b2 : 0.0);
    if (!(c > 0)) c = 1.0;
    Rt += c * B.transpose() * B;
    Nt += c * A.transpose() * B;
    Qt += c * (A.transpose() * A - Mat::Identity(n, n));
    symmetrize(Rt);
    symmetrize(Qt);
    llt_R.compute(Rt);
    if (llt_R.info() != Eigen::Success || llt_R.rcond() < 1e-13)
      throw std::domain_error("R is singular and B has dependent columns on its null space, so R + B' P B is "
                              "singular for every P");
  }
  // SDA on A_0 = A - B R^{-1} N', G_0 = B R^{-1} B', H_0 = Q - N R^{-1} N'
  const Mat RiBt = llt_R.solve(B.transpose());  // s x n
  const Mat RiNt = llt_R.solve(Nt.transpose());  // s x n
  Mat Ak = A - B * RiNt, Gk = B * RiBt, Hk = Qt - Nt * RiNt;
  symmetrize(Gk);
  symmetrize(Hk);
  Mat W(n, n), X1(n, n), X2(n, n), HX(n, n), Hn(n, n);
  Eigen::PartialPivLU<Mat> lu(n);
  StationaryLQR out;
  const Index total = opt.max_iterations + opt.max_refinements;
  ProgressThrottle throttle(progress, total);
  auto report = [&](Index done) {
    if (!throttle.report(done)) throw Cancelled();
  };
  bool broke_down = false;
  for (int k = 0; k < opt.max_iterations; ++k) {
    report(k);
    W.setIdentity();
    W.noalias() += Gk * Hk;
    lu.compute(W);
    if (!(lu.rcond() > 1e-14)) {
      broke_down = true;
      break;
    }
    X1.noalias() = lu.solve(Ak);  // W^{-1} A_k
    X2.noalias() = lu.solve(Gk);  // W^{-1} G_k
    HX.noalias() = Hk * X1;
    Hn = Hk;
    Hn.noalias() += Ak.transpose() * HX;
    symmetrize(Hn);
    HX.noalias() = X2 * Ak.transpose();
    Gk.noalias() += Ak * HX;
    symmetrize(Gk);
    HX.noalias() = Ak * X1;
    Ak = HX;
    const double change = (Hn - Hk).norm(), size = Hn.norm();
    Hk = Hn;
    out.iterations = k + 1;
    if (!Hk.allFinite() || !Gk.allFinite() || !Ak.allFinite()) {
      broke_down = true;
      break;
    }
    if (change <= opt.tolerance * size) break;
  }
  Mat P = Hk;
  if (shift) P.diagonal().array() += c;
  Mat K(s, n);
  const auto no_solution = [&](double radius) { throw_no_stabilizing(A, B, Q, out.iterations, radius); };
  if (broke_down || !gain(A, B, R, N, P, K)) no_solution(std::numeric_limits<double>::infinity());
  // Newton steps on the residual: P += E with Ac' E Ac - E + Res(P) = 0
  Mat res = residual_with_gain(A, B, Q, N, P, K);
  double res_norm = res.norm();
  double radius = rho(A + B * K);
  for (int k = 0; k < opt.max_refinements && radius < 1.0; ++k) {
    if (!(res_norm > 4 * std::numeric_limits<double>::epsilon() * P.norm())) break;
    report(opt.max_iterations + k);
    Mat P_new = P + stein(A + B * K, res);
    symmetrize(P_new);
    Mat K_new(s, n);
    if (!P_new.allFinite() || !gain(A, B, R, N, P_new, K_new)) break;
    Mat res_new = residual_with_gain(A, B, Q, N, P_new, K_new);
    const double new_norm = res_new.norm();
    if (!(new_norm < res_norm)) break;
    const double new_radius = rho(A + B * K_new);
    if (!(new_radius < 1.0)) break;
    P.swap(P_new);
    K.swap(K_new);
    const bool slow = new_norm > 0.5 * res_norm;  // at rounding level: another step gains nothing
    res_norm = new_norm;
    radius = new_radius;
    ++out.refinements;
    if (slow) break;
  }
  if (!(radius < 1.0)) no_solution(radius);
  throttle.finish(total);
  out.P = P;
  out.K = K;
  out.spectral_radius = radius;
  const double p_norm = out.P.norm();
  out.residual = p_norm > 0 ? res_norm / p_norm : res_norm;
  return out;
}

}  // namespace directable
