// Single-thread Eigen GEMM rate, compiled by bench_lqr.py with directable's
// flags (-O3 -march=native -DNDEBUG -DEIGEN_DONT_PARALLELIZE), to state the
// flop limit of the Riccati sweep in Eigen's own terms.
//
// usage: eigen_gemm n [n ...]   ->  one line per n: "n gflops_colmajor gflops_rowmajor"
#include <Eigen/Core>
#include <chrono>
#include <cstdio>
#include <cstdlib>

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <class M>
double rate(int n) {
  M a = M::Random(n, n), b = M::Random(n, n), c(n, n);
  const int reps = std::max(4, int(2e8 / (2.0 * n * n * n)));
  double best = 1e30;
  for (int trial = 0; trial < 7; ++trial) {
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) {
      c.noalias() = a * b;
      a(0, 0) += 1e-300 * c(0, 0);  // keep the products alive
    }
    double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
    best = std::min(best, dt);
  }
  return 2.0 * n * n * n / best * 1e-9;
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    int n = std::atoi(argv[i]);
    std::printf("%d %.3f %.3f\n", n, rate<Eigen::MatrixXd>(n), rate<RowMatrix>(n));
  }
  return 0;
}
