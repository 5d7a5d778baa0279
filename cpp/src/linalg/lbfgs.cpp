#include "directable/linalg/lbfgs.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "directable/core/clock.hpp"
#include "directable/core/errors.hpp"

namespace directable {

void LBFGSOptions::validate() const {
  if (iterations < 0) throw std::invalid_argument("iterations must be >= 0, got " + std::to_string(iterations));
  if (memory < 1) throw std::invalid_argument("memory must be >= 1, got " + std::to_string(memory));
  if (std::isnan(time_budget)) throw std::domain_error("time_budget must not be NaN");
  if (!(std::isfinite(initial_scale) && initial_scale >= 0))
    throw std::domain_error("initial_scale must be finite and >= 0, got " + std::to_string(initial_scale));
}

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

// A bound of the wrong size may as well be an x0 of the wrong size: the message names both.
// An infinite bound on the wrong side (lower = +inf, upper = -inf) leaves no finite point.
void check_bound(const Eigen::VectorXd& b, const char* name, Index N, double empty_side) {
  if (b.size() != 0 && b.size() != N)
    throw_shape(name, "(" + std::to_string(N) + ",) (the size of x0) or None", "(" + std::to_string(b.size()) + ",)");
  for (Index k = 0; k < b.size(); ++k) {
    if (std::isnan(b[k])) throw std::domain_error(std::string(name) + " must not contain NaN (index " + std::to_string(k) + ")");
    if (b[k] == empty_side)
      throw std::domain_error(std::string(name) + " must leave a finite point feasible, got " + std::to_string(b[k]) +
                              " at index " + std::to_string(k));
  }
}

void check_box(const Eigen::VectorXd& lower, const Eigen::VectorXd& upper, Index N) {
  check_bound(lower, "lower", N, std::numeric_limits<double>::infinity());
  check_bound(upper, "upper", N, -std::numeric_limits<double>::infinity());
  if (lower.size() == N && upper.size() == N)
    for (Index k = 0; k < N; ++k)
      if (lower[k] > upper[k])
        throw std::invalid_argument("lower must be <= upper, got lower[" + std::to_string(k) + "] = " +
                                    std::to_string(lower[k]) + " > upper[" + std::to_string(k) + "] = " +
                                    std::to_string(upper[k]));
}

// One minimisation: the box, the workspace and the ring buffer of pairs
// (the newest pair is head - 1), with one method per pass of an iteration.
class ProjectedLBFGS {
 public:
  ProjectedLBFGS(Index N, Index memory, double initial_scale, const Eigen::VectorXd& lower,
                 const Eigen::VectorXd& upper, LBFGSWorkspace& w)
      : N_(N), m_(memory), initial_scale_(initial_scale), lo_(lower.size() == N ? lower.data() : nullptr),
        hi_(upper.size() == N ? upper.data() : nullptr), bounded_(lo_ || hi_), w_(w) {
    if (w.S.rows() != N || w.S.cols() != m_) {
      w.S.resize(N, m_);
      w.Y.resize(N, m_);
    }
    for (Eigen::VectorXd* v : {&w.g, &w.gn, &w.d, &w.xn, &w.q, &w.free})
      if (v->size() != N) v->resize(N);
    for (Eigen::VectorXd* v : {&w.rho, &w.alpha, &w.sy, &w.yy})
      if (v->size() != m_) v->resize(m_);
  }

  bool bounded() const { return bounded_; }
  bool has_pairs() const { return stored_ > 0; }
  //! s'y / y'y of the first pair this run stored (the curvature along its
  //! first step, the step a related problem's first step resembles; later
  //! pairs, taken near a minimum of a non-smooth cost, scatter by 100x);
  //! when none, the estimate of scale_from_values, else the initial scale.
  double scale() const {
    if (first_scale_ > 0) return first_scale_;
    return value_scale_ > 0 ? value_scale_ : initial_scale_;
  }
  double clamp(Index k, double v) const {
    if (lo_) v = std::max(v, lo_[k]);
    if (hi_) v = std::min(v, hi_[k]);
    return v;
  }

  // A solve that stores no pair (a single iteration whose point gets no
  // gradient) still learns the curvature along its step s = xn - x from the
  // values alone: f(xn) = f + g's + s'Hs / 2 on a quadratic, so s's / s'Hs
  // (Barzilai-Borwein's first scale, the Rayleigh quotient of the inverse
  // Hessian along s) starts the next, related problem with a scaled step
  // instead of a unit-length one.
  void scale_from_values(const double* X, double f, double fn, double gs) {
    const double curvature = 2.0 * (fn - f - gs);  // s'Hs
    const double* XN = w_.xn.data();
    double ss = 0.0;
    for (Index k = 0; k < N_; ++k) ss += (XN[k] - X[k]) * (XN[k] - X[k]);
    if (!(curvature > 0 && ss > 0 && std::isfinite(curvature))) return;
    value_scale_ = ss / curvature;
    // A step backtracked far (a cost much steeper along it than the scale
    // assumed) measures the curvature of that short piece only: one solve
    // moves a given scale by at most 100x either way, so that the next
    // step is neither rounding noise nor a long overshoot.
    if (initial_scale_ > 0) value_scale_ = std::clamp(value_scale_, 1e-2 * initial_scale_, 1e2 * initial_scale_);
  }

  // Free variables (not held at a bound by the gradient), q = g on the free
  // set, and the projected gradient's max-norm: one pass.
  double free_set(const double* X) {
    const double* G = w_.g.data();
    double *Q = w_.q.data(), *FR = w_.free.data();
    if (!bounded_) {
      w_.q = w_.g;
      return w_.g.cwiseAbs().maxCoeff();
    }
    double pg = 0.0;
    for (Index k = 0; k < N_; ++k) {
      const bool held = (lo_ && X[k] <= lo_[k] && G[k] > 0) || (hi_ && X[k] >= hi_[k] && G[k] < 0);
      FR[k] = held ? 0.0 : 1.0;
      Q[k] = G[k] * FR[k];
      pg = std::max(pg, std::abs(G[k]) * FR[k]);
    }
    return pg;
  }

  // The search direction d (into w.d) from the two-loop recursion on the
  // free subspace; steepest descent when that is not a descent direction.
  void direction() {
    double gamma = 1.0, coef_last = 0.0;
    const double* s_last = nullptr;  // the last update q += coef_last s_last, merged into forming d
    if (stored_ == 0)
      gamma = initial_scale_ > 0 ? initial_scale_ : 1.0 / std::max(1.0, w_.q.norm());
    else
      two_loop(gamma, coef_last, s_last);
    // d (and d.g) in one pass; one loop per case keeps it branch-free (SIMD)
    const double *G = w_.g.data(), *Q = w_.q.data(), *FR = w_.free.data();
    double* D = w_.d.data();
    double dg = 0.0;
    if (s_last && bounded_)
      dg = update_dot(N_, D, G, [=](Index k, double) { return -((Q[k] + coef_last * s_last[k]) * FR[k]); });
    else if (s_last)
      dg = update_dot(N_, D, G, [=](Index k, double) { return -(Q[k] + coef_last * s_last[k]); });
    else if (bounded_)
      dg = update_dot(N_, D, G, [=](Index k, double) { return -((Q[k] * gamma) * FR[k]); });
    else
      dg = update_dot(N_, D, G, [=](Index k, double) { return -(Q[k] * gamma); });
    if (!(dg < 0)) {  // not a descent direction: restart with steepest descent
      stored_ = 0;
      const double scale = 1.0 / std::max(1.0, w_.g.norm());
      for (Index k = 0; k < N_; ++k) D[k] = -(bounded_ ? G[k] * FR[k] : G[k]) * scale;
    }
  }

  // xn = P(x + t d) into w.xn; returns g.(xn - x): one pass.
  double trial_point(const double* X, double t) {
    const double *G = w_.g.data(), *D = w_.d.data();
    double* XN = w_.xn.data();
    double acc[kLanes] = {};
    Index k = 0;
    for (; k + kLanes <= N_; k += kLanes)
      for (int l = 0; l < kLanes; ++l) {
        const Index i = k + l;
        const double v = bounded_ ? clamp(i, X[i] + t * D[i]) : X[i] + t * D[i];
        XN[i] = v;
        acc[l] += G[i] * (v - X[i]);
      }
    double gdx = lanes_sum(acc);
    for (; k < N_; ++k) {
      const double v = bounded_ ? clamp(k, X[k] + t * D[k]) : X[k] + t * D[k];
      XN[k] = v;
      gdx += G[k] * (v - X[k]);
    }
    return gdx;
  }

  // Stores the pair s = xn - x, y = gn - g (with s.y, s.s, y.y: one pass).
  // Its slot is the oldest pair's when the memory is full: a rejected pair
  // (no positive curvature) leaves that slot overwritten, so the oldest
  // pair is dropped then.
  void push_pair(const double* X) {
    const Index j = head_;
    double* s = w_.S.data() + j * N_;
    double* y = w_.Y.data() + j * N_;
    const double *XN = w_.xn.data(), *GN = w_.gn.data(), *G = w_.g.data();
    double a_sy[kLanes] = {}, a_ss[kLanes] = {}, a_yy[kLanes] = {};
    Index k = 0;
    for (; k + kLanes <= N_; k += kLanes)
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
    for (; k < N_; ++k) {
      const double sv = XN[k] - X[k], yv = GN[k] - G[k];
      s[k] = sv;
      y[k] = yv;
      vsy += sv * yv;
      vss += sv * sv;
      vyy += yv * yv;
    }
    if (vsy > 1e-12 * std::sqrt(vss) * std::sqrt(vyy) && vsy > 0) {
      w_.rho[j] = 1.0 / vsy;
      w_.sy[j] = vsy;
      w_.yy[j] = vyy;
      if (first_scale_ == 0) first_scale_ = vsy / vyy;
      head_ = (head_ + 1) % m_;
      stored_ = std::min(stored_ + 1, m_);
    } else if (stored_ == m_) {
      stored_ = m_ - 1;
    }
  }

 private:
  // Newest pair to oldest (alpha_j = rho_j s_j.q, q -= alpha_j y_j),
  // q *= gamma, oldest to newest (beta_j = rho_j y_j.q, q += (alpha_j -
  // beta_j) s_j); the newest pair's last update is left to direction().
  void two_loop(double& gamma, double& coef_last, const double*& s_last) {
    const Index N = N_, m = m_, head = head_, stored = stored_;
    auto S = [&](Index j) { return w_.S.data() + j * N; };  // column j of the ring buffers
    auto Y = [&](Index j) { return w_.Y.data() + j * N; };
    Eigen::VectorXd &rho = w_.rho, &alpha = w_.alpha;
    double* Q = w_.q.data();
    const Index jn = (head - 1 + m) % m, jo = (head - stored + m) % m;  // newest, oldest
    alpha[jn] = rho[jn] * Eigen::Map<const Eigen::VectorXd>(S(jn), N).dot(w_.q);
    for (Index c = 0; c + 1 < stored; ++c) {
      const Index j = (head - 1 - c + m) % m, next = (head - 2 - c + m) % m;
      const double a = alpha[j];
      const double* y = Y(j);
      alpha[next] = rho[next] * update_dot(N, Q, S(next), [a, y](Index k, double v) { return v - a * y[k]; });
    }
    gamma = w_.sy[jn] / w_.yy[jn];  // s'y / y'y of the newest pair
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

  Index N_, m_;
  double initial_scale_;    //!< gamma before any pair is stored (0: unit-length steps)
  double value_scale_ = 0;  //!< s's / s'Hs from scale_from_values (0: none)
  double first_scale_ = 0;  //!< s'y / y'y of the first stored pair (0: none)
  const double *lo_, *hi_;  //!< N each, or null (unbounded on that side)
  bool bounded_;
  LBFGSWorkspace& w_;
  Index stored_ = 0, head_ = 0;
};
}  // namespace

LBFGSResult minimize_lbfgs(const ObjectiveFn& fg, Eigen::VectorXd& x, const Eigen::VectorXd& lower,
                           const Eigen::VectorXd& upper, const LBFGSOptions& opt, LBFGSWorkspace* workspace,
                           const ValueFn& value) {
  const double t0 = now_seconds();
  const Index N = x.size();
  opt.validate();
  check_box(lower, upper, N);
  LBFGSWorkspace local;
  ProjectedLBFGS run(N, opt.memory, opt.initial_scale, lower, upper, workspace ? *workspace : local);
  LBFGSWorkspace& w = workspace ? *workspace : local;
  LBFGSResult st;
  if (run.bounded())
    for (Index k = 0; k < N; ++k) x[k] = run.clamp(k, x[k]);
  double f = fg(x, w.g);
  ++st.evaluations;
  ++st.gradients;
  st.cost_initial = f;
  if (!std::isfinite(f)) throw std::domain_error("objective is not finite at the starting point");
  for (Index it = 0; it < opt.iterations; ++it) {
    if (opt.time_budget > 0 && now_seconds() - t0 >= opt.time_budget) break;
    if (opt.keep_going && !opt.keep_going()) break;
    const double* X = x.data();  // (x and xn swap below)
    const double pg = run.free_set(X);
    if (pg <= opt.gtol || pg == 0.0) break;
    run.direction();
    // projected backtracking (Armijo along the projection arc). With
    // `value`, every trial evaluates the cost alone, which may stop once it
    // passes the Armijo bound, and the accepted point's gradient follows
    // (fg may reuse the trial's work: a receding-horizon solve reuses its
    // rollout, so a rejected trial costs no adjoint pass and a long one only
    // the part of its rollout below the bound). The last iteration's point
    // needs no gradient (nothing uses it).
    const bool last = it + 1 == opt.iterations && value;
    double t = 1.0, fn = 0.0, gdx_accepted = 0.0;
    bool accepted = false, has_gradient = false;
    for (int ls = 0; ls < 40; ++ls) {
      const double gdx = run.trial_point(X, t);
      gdx_accepted = gdx;
      const bool with_gradient = !value;
      const double bound = f + 1e-4 * gdx;  // Armijo: accepted iff fn <= bound
      fn = with_gradient ? fg(w.xn, w.gn) : value(w.xn, bound);
      ++st.evaluations;
      if (with_gradient) ++st.gradients;
      if (std::isfinite(fn) && fn <= bound) {
        accepted = true;
        has_gradient = with_gradient;
        break;
      }
      t *= 0.5;
    }
    if (!accepted || !(fn < f)) break;  // no further decrease possible (converged to round-off)
    if (last) {
      if (!run.has_pairs()) run.scale_from_values(X, f, fn, gdx_accepted);
      x.swap(w.xn);
      f = fn;
      ++st.iterations;
      break;
    }
    if (!has_gradient) {
      fg(w.xn, w.gn);
      ++st.gradients;
    }
    run.push_pair(X);
    x.swap(w.xn);
    w.g.swap(w.gn);
    f = fn;
    ++st.iterations;
  }
  st.cost = f;
  st.scale = run.scale();
  st.seconds = now_seconds() - t0;
  return st;
}

}  // namespace directable
