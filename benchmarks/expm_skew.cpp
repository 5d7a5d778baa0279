// Exponential of an antisymmetric r x r matrix (the reduced advection step):
// the library's scaling-and-squaring Pade (linalg/expm, BorderedExpm with no
// border) against the eigen-decomposition the thesis uses (eq. 3.8; here the
// Hermitian eigen-solver of i X, the cheapest exact eigen route for a skew
// matrix). Compiled by bench_fluid.py against libdirectable_core.a.
//
// usage: expm_skew r scale   ->  "r pade_us eig_us pade_orth_err eig_orth_err"
#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "directable/linalg/expm.hpp"

int main(int argc, char** argv) {
  const int r = argc > 1 ? std::atoi(argv[1]) : 64;
  const double scale = argc > 2 ? std::atof(argv[2]) : 0.05;
  Eigen::MatrixXd X = Eigen::MatrixXd::Random(r, r);
  X = scale * (X - X.transpose()).eval();
  Eigen::MatrixXd C(r, 0), E1(r, r), E2(r, r);
  directable::BorderedExpm ex(r, 0);
  auto time_it = [](auto&& f) {
    double best = 1e30;
    for (int t = 0; t < 7; ++t) {
      const int reps = 200;
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < reps; ++i) f();
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps);
    }
    return best * 1e6;
  };
  const double pade = time_it([&] { ex.compute(X, C); E1 = ex.E(); });
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXcd> es(r);
  const std::complex<double> I(0.0, 1.0);
  Eigen::MatrixXcd H(r, r);
  const double eig = time_it([&] {
    H = -I * X.cast<std::complex<double>>();  // Hermitian: X = i H
    es.compute(H);
    const Eigen::VectorXcd d = (I * es.eigenvalues().cast<std::complex<double>>()).array().exp();
    E2 = (es.eigenvectors() * d.asDiagonal() * es.eigenvectors().adjoint()).real();
  });
  const Eigen::MatrixXd Id = Eigen::MatrixXd::Identity(r, r);
  std::printf("%d %.2f %.2f %.2e %.2e\n", r, pade, eig, (E1.transpose() * E1 - Id).norm(),
              (E2.transpose() * E2 - Id).norm());
  return 0;
}
