#include "directable/models/fluid/galerkin_fluid.hpp"

#include <Eigen/Eigenvalues>
#include <cmath>
#include <sstream>
#include <limits>
#include <vector>
#include <string>

#include "directable/core/errors.hpp"
#include "directable/core/parallel.hpp"
#include "directable/core/progress.hpp"

namespace directable {

GalerkinFluid::GalerkinFluid(const Eigen::Ref<const RowMatrix>& basis, Index n_faces, const std::string& grid,
                             double viscosity)
    : r_(basis.cols()), viscosity_(viscosity), basis_(basis) {
  if (basis.rows() != n_faces || r_ < 1)
    throw_shape("basis", "(" + std::to_string(n_faces) + ", r) with r >= 1 for a " + grid + " grid",
                shape_str(basis.rows(), basis.cols()));
  check_finite("basis", basis_.data(), basis_.size());
  if (!(viscosity >= 0.0) || !std::isfinite(viscosity))
    throw std::domain_error("viscosity must be finite and >= 0, got " + std::to_string(viscosity));
}

void GalerkinFluid::project_operators(const Eigen::SparseMatrix<double>& laplacian, const AdvectionStencil& advection,
                                      double divergence_error, int threads, const ProgressFn* progress) {
  divergence_error_ = divergence_error;
  const Index N = basis_.rows();
  const Eigen::MatrixXd B = basis_;  // column-major copy for the GEMMs
  orthonormality_error_ = (B.transpose() * B - Eigen::MatrixXd::Identity(r_, r_)).cwiseAbs().maxCoeff();
  diffusion_ = B.transpose() * (laplacian * B);
  diffusion_ = 0.5 * (diffusion_ + diffusion_.transpose()).eval();
  if (viscosity_ > 0.0) {  // exp(dt nu Dhat) for any dt from one eigen-decomposition
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(diffusion_);
    diffusion_eigenvectors_ = es.eigenvectors();
    diffusion_eigenvalues_ = es.eigenvalues();
  }
  advection_.assign(r_, Eigen::MatrixXd::Zero(r_, r_));
  parallel_steps(r_, threads, progress, r_, [&] { return Eigen::MatrixXd(N, r_); },
                 [&](Index k, Eigen::MatrixXd& M) {
                   for (Index j = 0; j < r_; ++j) advection(B.col(k), B.col(j), M.col(j));
                   advection_[k].noalias() = B.transpose() * M;
                 });
  advection_lower_.resize(r_ * (r_ - 1) / 2, r_);
  for (Index k = 0; k < r_; ++k)
    for (Index j = 0, e = 0; j < r_; ++j)
      for (Index i = j + 1; i < r_; ++i) advection_lower_(e++, k) = 0.5 * (advection_[k](i, j) - advection_[k](j, i));
}

void GalerkinFluid::advection_matrix(const Eigen::Ref<const Eigen::VectorXd>& z, Eigen::Ref<Eigen::MatrixXd> A) const {
  for (Index j = 0, e = 0; j < r_; ++j) {
    A(j, j) = 0.0;
    for (Index i = j + 1; i < r_; ++i, ++e) {
      const double a = advection_lower_.row(e).dot(z);
      A(i, j) = a, A(j, i) = -a;
    }
  }
}

void GalerkinFluid::dynamics(const Eigen::Ref<const Eigen::VectorXd>& z, Eigen::Ref<Eigen::VectorXd> F) const {
  F.noalias() = viscosity_ * diffusion_ * z;
  for (Index k = 0; k < r_; ++k) F.noalias() += (z[k] * advection_[k]) * z;
}

void GalerkinFluid::add_jacobian(const Eigen::Ref<const Eigen::VectorXd>& z, Eigen::Ref<RowMatrix> J) const {
  J += viscosity_ * diffusion_;
  for (Index k = 0; k < r_; ++k) {
    J += z[k] * advection_[k];
    J.col(k).noalias() += advection_[k] * z;
  }
}

void GalerkinFluid::check_reduced(const char* name, const Eigen::Ref<const Eigen::VectorXd>& v) const {
  if (v.size() != r_) throw_shape(name, "(" + std::to_string(r_) + ",)", "(" + std::to_string(v.size()) + ",)");
  check_finite(name, v.data(), v.size());
}

void GalerkinFluid::step(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const Eigen::VectorXd>& w,
                         double dt, Eigen::Ref<Eigen::VectorXd> z_next, ReducedFluidData& data) const {
  check_reduced("z", z);
  check_reduced("w", w);
  check_positive("dt", dt);
  advance(z, w, dt, z_next, data);
  if (!z_next.allFinite())
    throw std::domain_error("reduced step diverged (non-finite velocity) with dt = " + std::to_string(dt) +
                            ": reduce dt or |z|, |w|");
}

void GalerkinFluid::advance(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const Eigen::VectorXd>& w,
                            double dt, Eigen::Ref<Eigen::VectorXd> z_next, ReducedFluidData& d) const {
  d.z_forced = z + dt * w;
  advection_matrix(d.z_forced, d.advection);
  d.advection *= dt;
  // A huge dt overflows here (the exponential would then refuse its own argument, naming neither dt nor z).
  if (!d.advection.allFinite()) {
    std::ostringstream msg;
    msg << "dt = " << dt << " is too large for this z and w: dt A(z + dt w) overflows";
    throw std::domain_error(msg.str());
  }
  // Advection: exact exponential of the antisymmetric dt Ahat(zt). We use
  // the scaling-and-squaring Pade approximant of linalg/expm (Al-Mohy &
  // Higham degree choice) rather than the thesis' eigen-decomposition: a
  // diagonal Pade approximant of an antisymmetric matrix, q(X)^-1 p(X) with
  // q(X) = p(-X) = p(X)', is orthogonal in exact arithmetic, and so are its
  // squares, so |z| is kept to rounding (the energy test holds to 1e-10
  // over 1000 steps), while it costs a handful of r x r products and one
  // LU. Measured at r = 64 (benchmarks/expm_skew.cpp, run by
  // bench_fluid.py): Pade 140-210 us against 730-900 us for the complex
  // Hermitian eigen-decomposition of i Ahat that the thesis' method needs
  // (3.5-6x), and |E'E - I| 4e-15 against 3e-14.
  d.expm.compute(d.advection, d.no_border);
  d.z_advected.noalias() = d.expm.E() * d.z_forced;
  if (viscosity_ > 0.0) {
    if (d.diffusion_dt != dt) {  // exp(dt nu Dhat) = V exp(dt nu Lambda) V', once per dt
      d.diffusion_exp = diffusion_eigenvectors_ *
                        (dt * viscosity_ * diffusion_eigenvalues_).array().exp().matrix().asDiagonal() *
                        diffusion_eigenvectors_.transpose();
      d.diffusion_dt = dt;
    }
    z_next.noalias() = d.diffusion_exp * d.z_advected;
  } else {
    z_next = d.z_advected;
  }
}

RowMatrix GalerkinFluid::rollout(const Eigen::Ref<const Eigen::VectorXd>& z0, const Eigen::Ref<const RowMatrix>& W,
                                 double dt) const {
  check_reduced("z0", z0);
  check_shape("w", W.rows(), W.cols(), W.rows(), r_);
  check_finite("w", W.data(), W.size());
  check_positive("dt", dt);
  RowMatrix Z(W.rows() + 1, r_);
  Z.row(0) = z0.transpose();
  auto data = create_data();
  Eigen::VectorXd z(r_), z_next(r_), w(r_);
  z = z0;
  for (Index i = 0; i < W.rows(); ++i) {
    cancellation_point();  // Ctrl-C: a rollout may be long
    w = W.row(i).transpose();
    advance(z, w, dt, z_next, *data);
    if (!z_next.allFinite()) {
      std::ostringstream msg;
      msg << "rollout diverged (non-finite velocity) at step " << i + 1 << " with dt = " << dt
          << ": reduce dt or |z0|, |w|";
      throw std::domain_error(msg.str());
    }
    Z.row(i + 1) = z_next.transpose();
    z.swap(z_next);
  }
  return Z;
}

ViscosityFit GalerkinFluid::fit_viscosity(const Eigen::Ref<const Eigen::VectorXd>& z0,
                                          const Eigen::Ref<const RowMatrix>& W,
                                          const Eigen::Ref<const Eigen::VectorXd>& energy, double dt, double lo,
                                          double hi) const {
  check_reduced("z0", z0);
  const Index T = W.rows();
  if (T < 1) throw std::invalid_argument("w must have at least one step, got 0");
  check_shape("w", W.rows(), W.cols(), T, r_);
  check_finite("w", W.data(), W.size());
  if (energy.size() != T + 1)
    throw_shape("energy", "(" + std::to_string(T + 1) + ",) (one more than the steps of w)",
                "(" + std::to_string(energy.size()) + ",)");
  check_finite("energy", energy.data(), energy.size());
  if (!(energy.minCoeff() > 0.0)) throw std::domain_error("energy must be > 0 at every step");
  if (!(z0.squaredNorm() > 0.0)) throw std::domain_error("z0 must not be zero (the run's projected start)");
  check_positive("dt", dt);
  if (!(lo > 0.0) || !(hi > lo) || !std::isfinite(hi))
    throw std::domain_error("bounds must satisfy 0 < lo < hi < inf, got (" + std::to_string(lo) + ", " +
                            std::to_string(hi) + ")");
  // exp(dt nu Dhat) = V exp(dt nu Lambda) V' for every trial nu from one decomposition
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(diffusion_);
  const Eigen::MatrixXd& V = es.eigenvectors();
  const Eigen::VectorXd& lambda = es.eigenvalues();
  const Eigen::VectorXd target = (energy.array() / energy[0]).log().matrix();
  auto data = create_data();
  ReducedFluidData& d = *data;
  Eigen::VectorXd z(r_), y(r_);
  Index evaluations = 0;
  auto mismatch = [&](double nu) {
    ++evaluations;
    cancellation_point();
    z = z0;
    const double e0 = z0.squaredNorm();
    double sum = 0.0;
    for (Index i = 0; i < T; ++i) {
      d.z_forced.noalias() = z + dt * W.row(i).transpose();
      advection_matrix(d.z_forced, d.advection);
      d.advection *= dt;
      d.expm.compute(d.advection, d.no_border);
      d.z_advected.noalias() = d.expm.E() * d.z_forced;
      y.noalias() = V.transpose() * d.z_advected;
      y.array() *= (dt * nu * lambda.array()).exp();
      z.noalias() = V * y;
      const double e = z.squaredNorm();
      if (!(e > 0.0) || !std::isfinite(e)) return std::numeric_limits<double>::infinity();
      const double diff = std::log(e / e0) - target[i + 1];
      sum += diff * diff;
    }
    return sum / double(T);
  };
  // scan, then golden section on the bracket around the best scanned value
  constexpr int kScan = 13;
  const double a0 = std::log(lo), a1 = std::log(hi);
  std::vector<double> xs(kScan), fs(kScan);
  int best = 0;
  for (int k = 0; k < kScan; ++k) {
    xs[size_t(k)] = a0 + (a1 - a0) * k / (kScan - 1);
    fs[size_t(k)] = mismatch(std::exp(xs[size_t(k)]));
    if (fs[size_t(k)] < fs[size_t(best)]) best = k;
  }
  double a = xs[size_t(std::max(best - 1, 0))], b = xs[size_t(std::min(best + 1, kScan - 1))];
  const double g = 0.5 * (std::sqrt(5.0) - 1.0);
  double c = b - g * (b - a), e = a + g * (b - a);
  double fc = mismatch(std::exp(c)), fe = mismatch(std::exp(e));
  for (int it = 0; it < 30 && b - a > 1e-6; ++it) {
    if (fc < fe) {
      b = e, e = c, fe = fc;
      c = b - g * (b - a), fc = mismatch(std::exp(c));
    } else {
      a = c, c = e, fc = fe;
      e = a + g * (b - a), fe = mismatch(std::exp(e));
    }
  }
  double x = fc < fe ? c : e, f = std::min(fc, fe);
  if (fs[size_t(best)] < f) x = xs[size_t(best)], f = fs[size_t(best)];
  if (!std::isfinite(f))
    throw std::domain_error("no viscosity in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                            "] gives a finite reduced rollout with dt = " + std::to_string(dt) + ": reduce dt or |w|");
  ViscosityFit fit;
  fit.nu = std::exp(x);
  fit.residual = std::sqrt(f);
  fit.evaluations = evaluations;
  return fit;
}

}  // namespace directable
