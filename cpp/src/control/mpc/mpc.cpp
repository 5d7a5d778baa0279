#include "directable/control/mpc/mpc.hpp"
#include "directable/core/progress.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace directable {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

ConstVecMap ref_row(const SeqView& r, Index i) { return ConstVecMap(r.data + i * r.step_stride, r.cols); }

}  // namespace

// ------------------------------------------------------------------ models
void PredictionModel::jacobians(const CRefVec&, const CRefVec&, Eigen::Ref<RowMatrix>, Eigen::Ref<RowMatrix>,
                                Index) const {
  throw std::invalid_argument("this prediction model offers no Jacobians (use method='lbfgs')");
}

LinearPredictionModel::LinearPredictionModel(RowMatrix A, RowMatrix B) : A_(std::move(A)), B_(std::move(B)) {
  if (A_.rows() < 1 || A_.rows() != A_.cols()) throw_shape("A", "(n, n) with n >= 1", shape_str(A_.rows(), A_.cols()));
  if (B_.rows() != A_.rows() || B_.cols() < 1)
    throw_shape("B", "(" + std::to_string(A_.rows()) + ", s) with s >= 1", shape_str(B_.rows(), B_.cols()));
  check_finite("A", A_.data(), A_.size());
  check_finite("B", B_.data(), B_.size());
}

void LinearPredictionModel::step(const CRefVec& x, const CRefVec& u, RefVec x_next, Index) const {
  x_next.noalias() = A_ * x;
  x_next.noalias() += B_ * u;
}

void LinearPredictionModel::vjp(const CRefVec&, const CRefVec&, const CRefVec& lam, RefVec gx, RefVec gu,
                                Index) const {
  gx.noalias() = A_.transpose() * lam;
  gu.noalias() = B_.transpose() * lam;
}

void LinearPredictionModel::jacobians(const CRefVec&, const CRefVec&, Eigen::Ref<RowMatrix> A,
                                      Eigen::Ref<RowMatrix> B, Index) const {
  A = A_;
  B = B_;
}

ModelEulerPrediction::ModelEulerPrediction(std::shared_ptr<const Model> model, double dt, double t0)
    : model_(std::move(model)), dt_(dt), t0_(t0) {
  if (!model_) throw std::invalid_argument("model is missing");
  check_positive("dt", dt);
  if (!std::isfinite(t0)) throw std::domain_error("t0 must be finite");
}

namespace {
// Per-thread scratch of the Euler adapter (const methods may run concurrently;
// sized on first use, no allocation afterwards).
struct EulerScratch {
  Eigen::VectorXd F;
  RowMatrix J;
  void size(Index n) {
    if (F.size() != n) F.resize(n);
    if (J.rows() != n) J.resize(n, n);
  }
};
EulerScratch& euler_scratch(Index n) {
  thread_local EulerScratch s;
  s.size(n);
  return s;
}
}  // namespace

void ModelEulerPrediction::step(const CRefVec& x, const CRefVec& u, RefVec x_next, Index i) const {
  auto& w = euler_scratch(n());
  model_->dynamics(x, t0_ + double(i) * dt_, w.F);
  x_next = x + dt_ * w.F;
  x_next.noalias() += dt_ * (model_->control_matrix() * u);
}

void ModelEulerPrediction::vjp(const CRefVec& x, const CRefVec&, const CRefVec& lam, RefVec gx, RefVec gu,
                               Index i) const {
  auto& w = euler_scratch(n());
  model_->jacobian(x, t0_ + double(i) * dt_, w.J);
  gx = lam;
  gx.noalias() += dt_ * (w.J.transpose() * lam);
  gu.noalias() = dt_ * (model_->control_matrix().transpose() * lam);
}

void ModelEulerPrediction::jacobians(const CRefVec& x, const CRefVec&, Eigen::Ref<RowMatrix> A,
                                     Eigen::Ref<RowMatrix> B, Index i) const {
  model_->jacobian(x, t0_ + double(i) * dt_, A);
  A *= dt_;
  A.diagonal().array() += 1.0;
  B = dt_ * model_->control_matrix();
}

// ------------------------------------------------------------------ substeps
SubstepPrediction::SubstepPrediction(std::shared_ptr<const PredictionModel> inner, Index count)
    : inner_(std::move(inner)), count_(count) {
  if (!inner_) throw std::invalid_argument("model is missing");
  if (count_ < 1) throw std::invalid_argument("count must be >= 1 inner steps per step, got " + std::to_string(count_));
}

void SubstepPrediction::step(const CRefVec& x, const CRefVec& u, RefVec x_next, Index i) const {
  Eigen::VectorXd a = x, b(x.size());
  for (Index j = 0; j < count_; ++j) {
    inner_->step(a, u, b, i * count_ + j);
    a.swap(b);
  }
  x_next = a;
}

void SubstepPrediction::vjp(const CRefVec& x, const CRefVec& u, const CRefVec& lam, RefVec gx, RefVec gu,
                            Index i) const {
  // forward: the inner states X_0 = x .. X_{k-1}; backward: chain the VJPs, sum the control parts
  const Index n = x.size();
  std::vector<Eigen::VectorXd> X(count_, Eigen::VectorXd(n));
  X[0] = x;
  for (Index j = 0; j + 1 < count_; ++j) inner_->step(X[j], u, X[j + 1], i * count_ + j);
  Eigen::VectorXd l = lam, lx(n), lu(u.size());
  gu.setZero();
  for (Index j = count_ - 1; j >= 0; --j) {
    inner_->vjp(X[j], u, l, lx, lu, i * count_ + j);
    gu += lu;
    l.swap(lx);
  }
  gx = l;
}

void SubstepPrediction::jacobians(const CRefVec& x, const CRefVec& u, Eigen::Ref<RowMatrix> A, Eigen::Ref<RowMatrix> B,
                                  Index i) const {
  const Index n = x.size(), s = u.size();
  RowMatrix Aj(n, n), Bj(n, s);
  Eigen::VectorXd a = x, b(n);
  A.setIdentity();
  B.setZero();
  for (Index j = 0; j < count_; ++j) {
    inner_->jacobians(a, u, Aj, Bj, i * count_ + j);
    B = (Aj * B + Bj).eval();
    A = (Aj * A).eval();
    if (j + 1 < count_) {
      inner_->step(a, u, b, i * count_ + j);
      a.swap(b);
    }
  }
}

// ------------------------------------------------------------------ weights
void CostWeight::apply(const CRefVec& e, RefVec out) const {
  if (is_dense())
    out.noalias() = 0.5 * (dense * e + dense.transpose() * e);
  else
    out = diag.cwiseProduct(e);
}

double CostWeight::quad(const CRefVec& e) const {
  if (is_dense()) return e.dot(dense * e);
  return e.dot(diag.cwiseProduct(e));
}

Eigen::MatrixXd CostWeight::matrix() const {
  if (is_dense()) return 0.5 * (dense + dense.transpose());
  return diag.asDiagonal();
}

void CostWeight::validate(const std::string& name, Index dim_expected, bool positive) const {
  if (is_dense()) {
    check_shape(name, dense.rows(), dense.cols(), dim_expected, dim_expected);
    check_finite(name, dense.data(), dense.size());
    const Eigen::MatrixXd S = matrix();
    const double lo = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(S, Eigen::EigenvaluesOnly).eigenvalues().minCoeff();
    const double scale = std::max(1.0, S.cwiseAbs().maxCoeff());
    if (positive ? !(lo > 1e-14 * scale) : lo < -1e-12 * scale)
      throw std::domain_error(name + " must be symmetric positive " + (positive ? "definite" : "semi-definite") +
                              ", got smallest eigenvalue " + std::to_string(lo));
  } else {
    if (diag.size() != dim_expected)
      throw_shape(name, "(" + std::to_string(dim_expected) + ",) or (" + std::to_string(dim_expected) + ", " +
                            std::to_string(dim_expected) + ")",
                  "(" + std::to_string(diag.size()) + ",)");
    check_finite(name, diag.data(), diag.size());
    for (Index k = 0; k < diag.size(); ++k)
      if (positive ? !(diag[k] > 0) : diag[k] < 0)
        throw std::domain_error(name + " weights must be " + (positive ? "positive" : "non-negative") + ", got " +
                                std::to_string(diag[k]) + " at index " + std::to_string(k));
  }
}

void MPCOptions::validate() const {
  if (horizon < 1) throw std::invalid_argument("horizon must be a positive number of steps, got " + std::to_string(horizon));
  if (iterations < 0) throw std::invalid_argument("iterations must be >= 0, got " + std::to_string(iterations));
  if (memory < 1) throw std::invalid_argument("memory must be >= 1, got " + std::to_string(memory));
  if (!std::isfinite(time_budget) && time_budget > 0)
    throw std::domain_error("time_budget must be finite, got " + std::to_string(time_budget));
  if (std::isnan(time_budget)) throw std::domain_error("time_budget must not be NaN");
}

// ------------------------------------------------------------------ L-BFGS
namespace {
// The L-BFGS vectors (N = H s, 5e4 .. 3e5 in the SPH benchmark) do not fit
// the L2 cache: every pass streams them, so the iteration merges what it
// can into one pass (the two-loop recursion's dot products into the passes
// that update q, the line search's g.(xn - x) into forming xn, the new
// pair's products into writing it). Reductions keep 16 partial sums (4 SIMD
// registers: the adds' latency would bound the pass with fewer) in a fixed
// order.
constexpr int kLanes = 16;

inline double lanes_sum(const double* acc) {
  double h[kLanes / 2];
  for (int l = 0; l < kLanes / 2; ++l) h[l] = acc[l] + acc[l + kLanes / 2];
  return ((h[0] + h[4]) + (h[1] + h[5])) + ((h[2] + h[6]) + (h[3] + h[7]));
}

// q[k] = upd(k, q[k]) for every k; returns sum_k v[k] q[k] of the new q.
template <class Update>
double update_dot(Index n, double* q, const double* v, Update upd) {
  double acc[kLanes] = {};
  Index k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const double nq = upd(k + l, q[k + l]);
      q[k + l] = nq;
      acc[l] += v[k + l] * nq;
    }
  double r = lanes_sum(acc);
  for (; k < n; ++k) {
    q[k] = upd(k, q[k]);
    r += v[k] * q[k];
  }
  return r;
}
}  // namespace

MPCStats minimize_lbfgs(const ObjectiveFn& fg, Eigen::VectorXd& x, const Eigen::VectorXd& lower,
                        const Eigen::VectorXd& upper, const LBFGSOptions& opt, LBFGSWorkspace* workspace,
                        const ValueFn& value) {
  const auto t0 = Clock::now();
  const Index N = x.size();
  const bool has_lo = lower.size() == N, has_hi = upper.size() == N;
  const bool bounded = has_lo || has_hi;
  const double* lo = has_lo ? lower.data() : nullptr;
  const double* hi = has_hi ? upper.data() : nullptr;
  auto clamp = [lo, hi](Index k, double v) {
    if (lo) v = std::max(v, lo[k]);
    if (hi) v = std::min(v, hi[k]);
    return v;
  };
  const Index m = std::max<Index>(1, opt.memory);
  LBFGSWorkspace local;
  LBFGSWorkspace& w = workspace ? *workspace : local;
  if (w.S.rows() != N || w.S.cols() != m) {
    w.S.resize(N, m);
    w.Y.resize(N, m);
  }
  for (Eigen::VectorXd* v : {&w.g, &w.gn, &w.d, &w.xn, &w.q, &w.free})
    if (v->size() != N) v->resize(N);
  for (Eigen::VectorXd* v : {&w.rho, &w.alpha, &w.sy, &w.yy})
    if (v->size() != m) v->resize(m);
  Eigen::VectorXd &rho = w.rho, &alpha = w.alpha, &sy = w.sy, &yy = w.yy;
  auto S = [&](Index j) { return w.S.data() + j * N; };  // column j of the ring buffers
  auto Y = [&](Index j) { return w.Y.data() + j * N; };
  double *X = x.data(), *G = w.g.data(), *D = w.d.data(), *Q = w.q.data(), *FR = w.free.data();
  Index stored = 0, head = 0;  // ring buffer: the newest pair is head - 1
  MPCStats st;
  if (bounded)
    for (Index k = 0; k < N; ++k) X[k] = clamp(k, X[k]);
  double f = fg(x, w.g);
  ++st.evaluations;
  ++st.gradients;
  st.cost_initial = f;
  if (!std::isfinite(f)) throw std::domain_error("objective is not finite at the starting point");
  for (Index it = 0; it < opt.iterations; ++it) {
    if (opt.time_budget > 0 && seconds_since(t0) >= opt.time_budget) break;
    X = x.data();  // (x and xn swap below)
    G = w.g.data();
    // free variables (not held at a bound by the gradient), the projected
    // gradient's max-norm, and q = g on the free set: one pass
    double pg = 0.0;
    if (bounded) {
      for (Index k = 0; k < N; ++k) {
        const bool held = (lo && X[k] <= lo[k] && G[k] > 0) || (hi && X[k] >= hi[k] && G[k] < 0);
        FR[k] = held ? 0.0 : 1.0;
        Q[k] = G[k] * FR[k];
        pg = std::max(pg, std::abs(G[k]) * FR[k]);
      }
    } else {
      w.q = w.g;
      pg = w.g.cwiseAbs().maxCoeff();
    }
    if (pg <= opt.gtol || pg == 0.0) break;
    // two-loop recursion on the free subspace: newest pair to oldest
    // (alpha_j = rho_j s_j.q, q -= alpha_j y_j), q *= gamma, oldest to newest
    // (beta_j = rho_j y_j.q, q += (alpha_j - beta_j) s_j); then d = -q on the
    // free set and d.g
    double gamma = 1.0, coef_last = 0.0;
    const double* s_last = nullptr;  // the last update q += coef_last s_last, merged into forming d
    if (stored == 0) {
      gamma = 1.0 / std::max(1.0, w.q.norm());
    } else {
      const Index jn = (head - 1 + m) % m, jo = (head - stored + m) % m;  // newest, oldest
      alpha[jn] = rho[jn] * Eigen::Map<const Eigen::VectorXd>(S(jn), N).dot(w.q);
      for (Index c = 0; c + 1 < stored; ++c) {
        const Index j = (head - 1 - c + m) % m, next = (head - 2 - c + m) % m;
        const double a = alpha[j];
        const double* y = Y(j);
        alpha[next] = rho[next] * update_dot(N, Q, S(next), [a, y](Index k, double v) { return v - a * y[k]; });
      }
      gamma = sy[jn] / yy[jn];  // s'y / y'y of the newest pair
      double beta = 0.0;
      {
        const double a = alpha[jo], gm = gamma;
        const double* y = Y(jo);
        beta = rho[jo] * update_dot(N, Q, y, [a, y, gm](Index k, double v) { return (v - a * y[k]) * gm; });
      }
      for (Index c = stored - 1; c >= 1; --c) {
        const Index j = (head - 1 - c + m) % m, next = (head - c + m) % m;
        const double coef = alpha[j] - beta;
        const double* s = S(j);
        beta = rho[next] * update_dot(N, Q, Y(next), [coef, s](Index k, double v) { return v + coef * s[k]; });
      }
      coef_last = alpha[jn] - beta;
      s_last = S(jn);
    }
    // d (and d.g) in one pass; one loop per case keeps it branch-free (SIMD)
    double dg = 0.0;
    if (s_last && bounded)
      dg = update_dot(N, D, G, [=](Index k, double) { return -((Q[k] + coef_last * s_last[k]) * FR[k]); });
    else if (s_last)
      dg = update_dot(N, D, G, [=](Index k, double) { return -(Q[k] + coef_last * s_last[k]); });
    else if (bounded)
      dg = update_dot(N, D, G, [=](Index k, double) { return -((Q[k] * gamma) * FR[k]); });
    else
      dg = update_dot(N, D, G, [=](Index k, double) { return -(Q[k] * gamma); });
    if (!(dg < 0)) {  // not a descent direction: restart with steepest descent
      stored = 0;
      const double scale = 1.0 / std::max(1.0, w.g.norm());
      for (Index k = 0; k < N; ++k) D[k] = -(bounded ? G[k] * FR[k] : G[k]) * scale;
    }
    // projected backtracking (Armijo along the projection arc). A unit step
    // is usually accepted: its trial evaluates the gradient with the cost;
    // shorter trials evaluate the cost alone when `value` is given (the
    // gradient follows once one is accepted).
    double t = 1.0, fn = 0.0;
    bool accepted = false, has_gradient = false;
    for (int ls = 0; ls < 40; ++ls) {
      double* XN = w.xn.data();
      // xn = P(x + t d) and g.(xn - x): one pass
      double acc[kLanes] = {};
      Index k = 0;
      for (; k + kLanes <= N; k += kLanes)
        for (int l = 0; l < kLanes; ++l) {
          const Index i = k + l;
          const double v = bounded ? clamp(i, X[i] + t * D[i]) : X[i] + t * D[i];
          XN[i] = v;
          acc[l] += G[i] * (v - X[i]);
        }
      double gdx = lanes_sum(acc);
      for (; k < N; ++k) {
        const double v = bounded ? clamp(k, X[k] + t * D[k]) : X[k] + t * D[k];
        XN[k] = v;
        gdx += G[k] * (v - X[k]);
      }
      const bool with_gradient = ls == 0 || !value;
      fn = with_gradient ? fg(w.xn, w.gn) : value(w.xn);
      ++st.evaluations;
      if (with_gradient) ++st.gradients;
      if (std::isfinite(fn) && fn <= f + 1e-4 * gdx) {
        accepted = true;
        has_gradient = with_gradient;
        break;
      }
      t *= 0.5;
    }
    if (!accepted || !(fn < f)) break;  // no further decrease possible (converged to round-off)
    if (!has_gradient) {
      fg(w.xn, w.gn);
      ++st.gradients;
    }
    // the new pair s = xn - x, y = gn - g with s.y, s.s, y.y: one pass. Its
    // slot is the oldest pair's when the memory is full: a rejected pair
    // (no positive curvature) leaves that slot overwritten, so the oldest
    // pair is dropped then.
    const Index j = head;
    {
      double* s = S(j);
      double* y = Y(j);
      const double *XN = w.xn.data(), *GN = w.gn.data();
      double a_sy[kLanes] = {}, a_ss[kLanes] = {}, a_yy[kLanes] = {};
      Index k = 0;
      for (; k + kLanes <= N; k += kLanes)
        for (int l = 0; l < kLanes; ++l) {
          const Index i = k + l;
          const double sv = XN[i] - X[i], yv = GN[i] - G[i];
          s[i] = sv;
          y[i] = yv;
          a_sy[l] += sv * yv;
          a_ss[l] += sv * sv;
          a_yy[l] += yv * yv;
        }
      double vsy = lanes_sum(a_sy), vss = lanes_sum(a_ss), vyy = lanes_sum(a_yy);
      for (; k < N; ++k) {
        const double sv = XN[k] - X[k], yv = GN[k] - G[k];
        s[k] = sv;
        y[k] = yv;
        vsy += sv * yv;
        vss += sv * sv;
        vyy += yv * yv;
      }
      if (vsy > 1e-12 * std::sqrt(vss) * std::sqrt(vyy) && vsy > 0) {
        rho[j] = 1.0 / vsy;
        sy[j] = vsy;
        yy[j] = vyy;
        head = (head + 1) % m;
        stored = std::min(stored + 1, m);
      } else if (stored == m) {
        stored = m - 1;
      }
    }
    x.swap(w.xn);
    w.g.swap(w.gn);
    f = fn;
    ++st.iterations;
  }
  st.cost = f;
  st.seconds = seconds_since(t0);
  return st;
}

// ------------------------------------------------------------------ optimizer
HorizonOptimizer::HorizonOptimizer(std::shared_ptr<const PredictionModel> model, MPCOptions options, CostWeight Q,
                                   CostWeight R, CostWeight C, ControlLimits limits)
    : model_(std::move(model)), opt_(options), Q_(std::move(Q)), R_(std::move(R)), C_(std::move(C)),
      limits_(std::move(limits)) {
  if (!model_) throw std::invalid_argument("model is missing");
  opt_.validate();
  const Index n = model_->n(), s = model_->s(), H = opt_.horizon;
  Q_.validate("Q", n, false);
  R_.validate("R", s, true);
  C_.validate("C", n, false);
  auto check_limit = [&](const Eigen::VectorXd& v, const char* name) {
    if (v.size() == 0) return;
    if (v.size() != s) throw_shape(name, "(" + std::to_string(s) + ",)", "(" + std::to_string(v.size()) + ",)");
    for (Index k = 0; k < s; ++k)
      if (std::isnan(v[k])) throw std::domain_error(std::string(name) + " must not contain NaN");
  };
  check_limit(limits_.lower, "lower");
  check_limit(limits_.upper, "upper");
  if (limits_.lower.size() == s && limits_.upper.size() == s)
    for (Index k = 0; k < s; ++k)
      if (limits_.lower[k] > limits_.upper[k])
        throw std::invalid_argument("lower must be <= upper, got lower[" + std::to_string(k) + "] = " +
                                    std::to_string(limits_.lower[k]) + " > upper = " + std::to_string(limits_.upper[k]));
  if (limits_.lower.size() == s) lower_ = limits_.lower.replicate(H, 1);
  if (limits_.upper.size() == s) upper_ = limits_.upper.replicate(H, 1);
  if (opt_.method == MPCMethod::GaussNewton && !model_->has_jacobians())
    throw std::invalid_argument("method 'gauss_newton' needs a model with Jacobians; this one offers only VJPs");

  u_ = Eigen::VectorXd::Zero(H * s);
  u_try_.resize(H * s);
  e_.resize(n);
  we_.resize(n);
  lam_.resize(n);
  lam_next_.resize(n);
  gx_.resize(n);
  gu_.resize(s);
  x_ = VectorSeq(H + 1, n);
  x_try_ = VectorSeq(H + 1, n);
  if (opt_.method == MPCMethod::GaussNewton) {
    A_aug_ = MatrixSeq(H, n + 1, n + 1);
    B_aug_ = MatrixSeq(H, n + 1, s);
    Q_aug_ = MatrixSeq(H, n + 1, n + 1);
    N_aug_ = MatrixSeq(H, n + 1, s);
    Qd_ = Q_.matrix();
    Rd_ = R_.matrix();
    Cd_ = C_.matrix();
    Ja_.resize(n, n);
    Jb_.resize(n, s);
  }
}

void HorizonOptimizer::check_inputs(const CRefVec& x0, const SeqView& reference) const {
  const Index n = this->n(), H = horizon();
  if (x0.size() != n) throw_shape("x0", "(" + std::to_string(n) + ",)", "(" + std::to_string(x0.size()) + ",)");
  check_finite("x0", x0.data(), n);
  if (reference.T != H + 1 || reference.cols != n || reference.rows != 1)
    throw_shape("reference", "(" + std::to_string(H + 1) + ", " + std::to_string(n) + ") = (horizon+1, n)",
                "(" + std::to_string(reference.T) + ", " + std::to_string(reference.cols) + ")");
  check_finite("reference", reference.data, (H + 1) * n);
}

void HorizonOptimizer::set_control_reference(const Eigen::VectorXd& ur) {
  if (ur.size() == 0) {
    ur_.resize(0);
    return;
  }
  if (ur.size() != horizon() * s())
    throw_shape("u_reference", shape_str(horizon(), s()), "(" + std::to_string(ur.size()) + " values)");
  check_finite("u_reference", ur.data(), ur.size());
  ur_ = ur;
}

void HorizonOptimizer::project(Eigen::VectorXd& u) const {
  if (lower_.size()) u = u.cwiseMax(lower_);
  if (upper_.size()) u = u.cwiseMin(upper_);
}

void HorizonOptimizer::rollout(const CRefVec& x0, const Eigen::VectorXd& u, VectorSeq& xs) const {
  const Index s = this->s();
  xs[0] = x0;
  for (Index i = 0; i < horizon(); ++i) model_->step(xs[i], u.segment(i * s, s), xs[i + 1], i);
}

namespace {
// The window's cost terms without temporaries for diagonal weights (the
// usual case: one pass over each vector instead of three); dense weights
// go through the workspace vector e.
double quad_diff(const CostWeight& W, const CRefVec& a, const CRefVec& b, Eigen::VectorXd& e) {
  if (W.is_dense()) {
    e = a - b;
    return W.quad(e);
  }
  return (a - b).dot(W.diag.cwiseProduct(a - b));
}

// out = 2 W (a - b) (+ *add): the gradient of ||a - b||^2_W.
void grad_diff(const CostWeight& W, const CRefVec& a, const CRefVec& b, const Eigen::VectorXd* add, RefVec out,
               Eigen::VectorXd& e, Eigen::VectorXd& we) {
  if (W.is_dense()) {
    e = a - b;
    W.apply(e, we);
    if (add)
      out = 2.0 * we + *add;
    else
      out = 2.0 * we;
  } else if (add) {
    out = 2.0 * W.diag.cwiseProduct(a - b) + *add;
  } else {
    out = 2.0 * W.diag.cwiseProduct(a - b);
  }
}
}  // namespace

double HorizonOptimizer::cost_of(const VectorSeq& xs, const Eigen::VectorXd& u, const SeqView& ref) {
  const Index s = this->s(), H = horizon();
  double J = 0.0;
  for (Index i = 0; i < H; ++i) {
    J += quad_diff(Q_, xs[i], ref_row(ref, i), e_) +
         (ur_.size() ? quad_diff(R_, u.segment(i * s, s), ur_.segment(i * s, s), du_) : R_.quad(u.segment(i * s, s)));
  }
  return J + quad_diff(C_, xs[H], ref_row(ref, H), e_);
}

double HorizonOptimizer::cost_and_gradient(const CRefVec& x0, const SeqView& ref, const CRefVec& u,
                                           Eigen::VectorXd* grad) {
  // the rollout with cost_of's terms taken as each state is produced (while
  // it is in cache; the same sum in the same order)
  const Index s = this->s(), H = horizon();
  u_try_ = u;
  x_[0] = x0;
  double J = 0.0;
  for (Index i = 0; i < H; ++i) {
    J += quad_diff(Q_, x_[i], ref_row(ref, i), e_) +
         (ur_.size() ? quad_diff(R_, u_try_.segment(i * s, s), ur_.segment(i * s, s), du_)
                     : R_.quad(u_try_.segment(i * s, s)));
    model_->step(x_[i], u_try_.segment(i * s, s), x_[i + 1], i);
  }
  J += quad_diff(C_, x_[H], ref_row(ref, H), e_);
  if (grad) adjoint(ref, *grad);
  return J;
}

void HorizonOptimizer::adjoint(const SeqView& ref, Eigen::VectorXd& grad) {
  const Index s = this->s(), H = horizon();
  grad.resize(H * s);
  grad_diff(C_, x_[H], ref_row(ref, H), nullptr, lam_, e_, we_);
  for (Index i = H - 1; i >= 0; --i) {
    // (the first step's gx, the gradient with respect to the given x0, is not needed)
    if (i > 0)
      model_->vjp(x_[i], u_try_.segment(i * s, s), lam_, gx_, gu_, i);
    else
      model_->vjp_controls(x_[i], u_try_.segment(i * s, s), lam_, gx_, gu_, i);
    auto gi = grad.segment(i * s, s);
    if (ur_.size()) {
      du_ = u_try_.segment(i * s, s) - ur_.segment(i * s, s);
      R_.apply(du_, gi);
      gi = 2.0 * gi + gu_;
    } else if (R_.is_dense()) {
      R_.apply(u_try_.segment(i * s, s), gi);
      gi = 2.0 * gi + gu_;
    } else {
      gi = 2.0 * R_.diag.cwiseProduct(u_try_.segment(i * s, s)) + gu_;
    }
    if (i > 0) grad_diff(Q_, x_[i], ref_row(ref, i), &gx_, lam_, e_, we_);
  }
}

MPCStats HorizonOptimizer::solve(const CRefVec& x0, const SeqView& reference, const Eigen::VectorXd* u0) {
  check_inputs(x0, reference);
  const Index s = this->s(), H = horizon();
  if (u0) {
    if (u0->size() != H * s) throw_shape("u0", shape_str(H, s), "(" + std::to_string(u0->size()) + " values)");
    check_finite("u0", u0->data(), u0->size());
    u_ = *u0;
  } else if (has_solution_) {  // warm start: shift by one step, repeat the last control
    if (H > 1) u_.head((H - 1) * s) = u_.tail((H - 1) * s).eval();
  } else {
    u_.setZero();
  }
  project(u_);
  MPCStats st;
  if (opt_.method == MPCMethod::GaussNewton) {
    st = solve_gauss_newton(x0, reference);
  } else {
    LBFGSOptions lo;
    lo.iterations = opt_.iterations;
    lo.memory = opt_.memory;
    lo.time_budget = opt_.time_budget;
    u_opt_ = u_;
    // A shortened line-search trial evaluates the cost alone (a rollout);
    // once it is accepted, its gradient reuses that rollout (the adjoint pass
    // only): one forward and one adjoint per accepted point.
    bool rolled = false;  // x_ holds the rollout of u_try_ from a cost-only trial
    double J_rolled = 0.0;
    auto value = [&](const Eigen::VectorXd& v) {
      J_rolled = cost_and_gradient(x0, reference, v, nullptr);
      rolled = true;
      return J_rolled;
    };
    auto fg = [&](const Eigen::VectorXd& v, Eigen::VectorXd& g) {
      if (rolled && v == u_try_) {
        rolled = false;
        adjoint(reference, g);
        return J_rolled;
      }
      rolled = false;
      return cost_and_gradient(x0, reference, v, &g);
    };
    st = minimize_lbfgs(fg, u_opt_, lower_, upper_, lo, &lbfgs_, value);
    u_ = u_opt_;
  }
  // x_ already holds the rollout of the last evaluated controls (u_try_);
  // roll out again only if the optimiser returned other controls.
  if (opt_.method != MPCMethod::LBFGS || u_try_.size() != u_.size() || u_try_ != u_) rollout(x0, u_, x_);
  has_solution_ = true;
  return st;
}

MPCStats HorizonOptimizer::solve_gauss_newton(const CRefVec& x0, const SeqView& ref) {
  // Linearize about (xbar, ubar); in z = [dx; 1] the window cost is an LQ
  // problem with Q_aug = [Q, Q e; e'Q, e'Q e], N_aug = [0; ubar' R] and
  // A_aug = diag(A_i, 1), B_aug = [B_i; 0]. One Riccati sweep gives
  // du_i = K_i [dx_i; 1]; the forward pass rolls the model out with
  // du_i = Kx_i dx_i + a k_i, halving a until J decreases.
  const auto t0 = Clock::now();
  const Index n = this->n(), s = this->s(), H = horizon();
  MPCStats st;
  rollout(x0, u_, x_);
  double J = cost_of(x_, u_, ref);
  if (!std::isfinite(J))
    throw std::domain_error("the window's cost is not finite at the starting controls: the prediction model "
                            "diverged over the horizon (e.g. an explicit step too long for a stiff model; use "
                            "more substeps)");
  st.cost_initial = J;
  st.evaluations = 1;
  LQRProblem pb;
  pb.horizon = H;
  pb.A = A_aug_.view();
  pb.B = B_aug_.view();
  pb.Q = Q_aug_.view();
  pb.N = N_aug_.view();
  pb.R_terms.emplace_back(SeqView::constant(Rd_.data(), s, s), 1.0);  // symmetric: layout-agnostic
  pb.Q_final = Eigen::MatrixXd(n + 1, n + 1);
  LQRSolution sol(H, n + 1, s);
  Eigen::VectorXd z(n + 1);
  for (Index k = 0; k < opt_.iterations; ++k) {
    if (opt_.time_budget > 0 && seconds_since(t0) >= opt_.time_budget) break;
    for (Index i = 0; i < H; ++i) {
      model_->jacobians(x_[i], u_.segment(i * s, s), Ja_, Jb_, i);
      auto A = A_aug_[i];
      A.setZero();
      A.topLeftCorner(n, n) = Ja_;
      A(n, n) = 1.0;
      auto B = B_aug_[i];
      B.setZero();
      B.topRows(n) = Jb_;
      e_ = x_[i] - ref_row(ref, i);
      we_.noalias() = Qd_ * e_;
      auto Qa = Q_aug_[i];
      Qa.topLeftCorner(n, n) = Qd_;
      Qa.topRightCorner(n, 1) = we_;
      Qa.bottomLeftCorner(1, n) = we_.transpose();
      Qa(n, n) = e_.dot(we_);
      auto Na = N_aug_[i];
      Na.setZero();
      if (ur_.size())
        Na.bottomRows(1) = (Rd_ * (u_.segment(i * s, s) - ur_.segment(i * s, s))).transpose();
      else
        Na.bottomRows(1) = (Rd_ * u_.segment(i * s, s)).transpose();
    }
    e_ = x_[H] - ref_row(ref, H);
    we_.noalias() = Cd_ * e_;
    pb.Q_final.topLeftCorner(n, n) = Cd_;
    pb.Q_final.topRightCorner(n, 1) = we_;
    pb.Q_final.bottomLeftCorner(1, n) = we_.transpose();
    pb.Q_final(n, n) = e_.dot(we_);
    riccati_sweep(pb, sol);
    bool improved = false;
    double J_try = J;
    for (double a = 1.0; a > 1e-10; a *= 0.5) {
      x_try_[0] = x0;
      for (Index i = 0; i < H; ++i) {
        z.head(n) = x_try_[i] - x_[i];
        z[n] = a;
        u_try_.segment(i * s, s) = u_.segment(i * s, s) + sol.K[i] * z;
        if (lower_.size()) u_try_.segment(i * s, s) = u_try_.segment(i * s, s).cwiseMax(lower_.segment(i * s, s));
        if (upper_.size()) u_try_.segment(i * s, s) = u_try_.segment(i * s, s).cwiseMin(upper_.segment(i * s, s));
        model_->step(x_try_[i], u_try_.segment(i * s, s), x_try_[i + 1], i);
      }
      J_try = cost_of(x_try_, u_try_, ref);
      ++st.evaluations;
      if (std::isfinite(J_try) && J_try < J) {
        improved = true;
        break;
      }
    }
    if (!improved) break;
    u_.swap(u_try_);
    std::swap(x_, x_try_);
    const double dec = J - J_try;
    J = J_try;
    ++st.iterations;
    if (dec <= 1e-15 * std::max(1.0, std::abs(J))) break;
  }
  st.cost = J;
  st.seconds = seconds_since(t0);
  return st;
}

// ------------------------------------------------------------------ receding horizon
RecedingResult run_receding(HorizonOptimizer& opt, const PredictionModel& plant, const CRefVec& x0,
                            const SeqView& reference, Index steps, const ProgressFn* progress) {
  const Index n = opt.n(), s = opt.s(), H = opt.horizon();
  if (plant.n() != n || plant.s() != s)
    throw std::invalid_argument("plant must have the optimizer's dimensions n = " + std::to_string(n) + ", s = " +
                                std::to_string(s) + ", got n = " + std::to_string(plant.n()) + ", s = " +
                                std::to_string(plant.s()));
  if (steps < 1) throw std::invalid_argument("steps must be >= 1, got " + std::to_string(steps));
  if (x0.size() != n) throw_shape("x0", "(" + std::to_string(n) + ",)", "(" + std::to_string(x0.size()) + ",)");
  if (reference.rows != 1 || reference.cols != n || reference.T != steps + H + 1)
    throw_shape("reference", "(" + std::to_string(steps + H + 1) + ", " + std::to_string(n) + ") = (steps+horizon+1, n)",
                "(" + std::to_string(reference.T) + ", " + std::to_string(reference.cols) + ")");
  check_finite("reference", reference.data, reference.T * n);
  RecedingResult out;
  out.states = VectorSeq(steps + 1, n);
  out.controls = VectorSeq(steps, s);
  out.cost_initial.resize(steps);
  out.cost.resize(steps);
  out.seconds.resize(steps);
  out.iterations.resize(steps);
  out.states[0] = x0;
  opt.reset();
  ProgressThrottle throttle(progress, steps);
  for (Index t = 0; t < steps; ++t) {
    const SeqView window(reference.data + t * n, H + 1, 1, n, false);
    const MPCStats st = opt.solve(out.states[t], window);
    out.controls[t] = opt.controls().head(s);
    plant.step(out.states[t], out.controls[t], out.states[t + 1], 0);
    if (!out.states[t + 1].allFinite())
      throw std::domain_error("plant state became non-finite at step " + std::to_string(t));
    out.cost_initial[t] = st.cost_initial;
    out.cost[t] = st.cost;
    out.seconds[t] = st.seconds;
    out.iterations[t] = int(st.iterations);
    if (!throttle.report(t + 1)) break;
  }
  throttle.finish(steps);
  return out;
}

}  // namespace directable
