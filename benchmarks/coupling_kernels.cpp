// CPU time of the 2D coupling kernels (Treuille thesis sec. 3.5.6) at the benchmark sizes (128^2 grid, r = p = 64):
// the tabulated apply per object (F z and G c from float64 and float32 tables, 10 x 10 x 3 poses), the on-the-fly
// apply (F z and G c without tables) and the on-the-fly feedforward matrix F. A random basis: the costs do not depend
// on its content. Compiled and run by bench_fluid.py --obstacles against the built core (CPU time of the thread).
#include <time.h>
#include <cmath>
#include <cstdio>
#include <random>
#include "directable/models/fluid/coupling.hpp"
using namespace directable;

static double cpu() { timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
template <class F> double best(F&& f, int number, int repeat = 9) {
  double b = 1e9;
  for (int k = 0; k < repeat; ++k) { double t0 = cpu(); for (int i = 0; i < number; ++i) f(); b = std::min(b, (cpu() - t0) / number); }
  return b;
}

int main() {
  const Index n = 128, r = 64;
  auto grid = std::make_shared<MACGrid2D>(n, n, 1.0 / n);
  std::mt19937 rng(1);
  std::normal_distribution<double> N01;
  RowMatrix B(grid->n_faces(), r);
  for (Index i = 0; i < B.rows(); ++i) for (Index j = 0; j < r; ++j) B(i, j) = N01(rng) * 0.01;
  auto red = std::make_shared<ReducedFluid>(grid, B, 0.0, 0, nullptr);
  // c-shape: outer 0.12, inner 0.07, opening pi/2, 24 segments
  const int seg = 24; const double op = M_PI / 2;
  RowMatrix V(2 * (seg + 1), 2);
  for (int k = 0; k <= seg; ++k) {
    const double a = op / 2 + (2 * M_PI - op) * k / seg;
    V(k, 0) = 0.12 * std::cos(a), V(k, 1) = 0.12 * std::sin(a);
    const double b = op / 2 + (2 * M_PI - op) * (seg - k) / seg;
    V(seg + 1 + k, 0) = 0.07 * std::cos(b), V(seg + 1 + k, 1) = 0.07 * std::sin(b);
  }
  auto shape = std::make_shared<Shape2D>(V);
  RowMatrix poses(100, 3);
  for (int i = 0; i < 100; ++i) poses(i, 0) = 0.25 + 0.5 * i / 99.0, poses(i, 1) = 0.5 + 0.1 * std::sin(6.28 * i / 99.0), poses(i, 2) = -0.3 + 0.8 * i / 99.0;
  // the spacing that gives q = 256 surface points (the target's size), by bisection on the count
  double lo = 0.25 / n, hi = 1.0 / n;
  for (int it = 0; it < 60; ++it) {
    RowMatrix pts, nrm;
    shape->surface(0.5 * (lo + hi), pts, nrm);
    if (pts.rows() == 256) break;
    (pts.rows() > 256 ? lo : hi) = 0.5 * (lo + hi);
  }
  for (double spacing : {0.5 / n, 0.5 * (lo + hi)}) {
    auto bb = std::make_shared<BoundaryBasis>(grid, B, shape, poses, r, spacing, 0.0, true, 0, nullptr);
    PoseAxes ax;
    ax.x = Eigen::VectorXd::LinSpaced(10, 0.3, 0.3 + 9 * 2.0 / n);
    ax.y = Eigen::VectorXd::LinSpaced(10, 0.4, 0.4 + 9 * 2.0 / n);
    ax.theta = Eigen::VectorXd::LinSpaced(3, -0.5, 0.5);
    Coupling c64(red, bb, &ax, Precompute::Both, 0, 0, nullptr, false);
    Coupling c32(red, bb, &ax, Precompute::Both, 0, 0, nullptr, true);
    Coupling fly(red, bb, nullptr, Precompute::None, 0, 0, nullptr, false);
    auto d = c64.create_data();
    Eigen::VectorXd z = Eigen::VectorXd::Random(r), rigid(3), c(c64.m()), zn(r);
    rigid << 0.3, 0.0, 0.5;
    const Pose2D P1(0.33, 0.43, 0.1), P2(0.37, 0.45, -0.2);
    auto per_obj = [&](const Coupling& cp) {
      return best([&] { zn.setZero(); cp.apply(P1, z, rigid, c, zn, *d); cp.apply(P2, z, rigid, c, zn, *d); }, 2000) / 2;
    };
    const double t64 = per_obj(c64), t32 = per_obj(c32), tfl = per_obj(fly);
    Eigen::MatrixXd F(bb->p(), r);
    const double tff = best([&] { fly.feedforward_exact(Pose2D(0.5, 0.5, 0.3), F, *d); }, 500);
    RowMatrixF F32(bb->p(), r);
    const double tff32 = best([&] { fly.feedforward_exact(Pose2D(0.5, 0.5, 0.3), F32, *d); }, 500);
    const double err32 = (F32.cast<double>() - F).cwiseAbs().maxCoeff() / F.cwiseAbs().maxCoeff();
    std::printf("q = %ld p = %ld: apply per object (F z and G c): float64 tables %.2f us, float32 tables %.2f us, "
                "on the fly %.2f us; feedforward matrix %.1f us, in float32 %.1f us (max rel. difference %.1e) (CPU)\n",
                long(bb->q()), long(bb->p()), t64 * 1e6, t32 * 1e6, tfl * 1e6, tff * 1e6, tff32 * 1e6, err32);
  }
}
