#include "directable/control/mpc/optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "directable/core/allocation.hpp"
#include "directable/core/clock.hpp"
#include "directable/core/errors.hpp"

namespace directable {

namespace {
ConstVecMap ref_row(const SeqView& r, Index i) { return ConstVecMap(r.data + i * r.step_stride, r.cols); }
}  // namespace

HorizonOptimizer::HorizonOptimizer(std::shared_ptr<const PredictionModel> model, MPCOptions options, CostWeight Q,
                                   CostWeight R, CostWeight C, ControlLimits limits)
    : model_(std::move(model)), opt_(options), Q_(std::move(Q)), R_(std::move(R)), C_(std::move(C)),
      limits_(std::move(limits)) {
  if (!model_) throw std::invalid_argument("model must be a prediction model, got None");
  opt_.validate();
  const Index n = model_->n(), s = model_->s(), H = opt_.horizon;
  // a workspace: states and adjoints (H + 1) n, controls, gradients, bounds and the L-BFGS pairs H s each
  check_allocation("horizon = " + std::to_string(H) + " (the optimizer's workspace)",
                   8.0 * double(H) * (4.0 * double(n) + (2.0 * double(opt_.memory) + 6.0) * double(s)));
  Q_.validate("Q", n, false);
  R_.validate("R", s, true);
  C_.validate("C", n, false);
  limits_.validate(s);
  if (limits_.lower.size() == s) lower_ = limits_.lower.replicate(H, 1);
  if (limits_.upper.size() == s) upper_ = limits_.upper.replicate(H, 1);
  if (opt_.method == MPCMethod::GaussNewton) {
    if (!model_->has_jacobians())
      throw std::invalid_argument("method 'gauss_newton' needs a model with Jacobians; this one offers only VJPs");
    Qd_ = Q_.matrix();
    Rd_ = R_.matrix();
    Cd_ = C_.matrix();
  }
}

HorizonWorkspace HorizonOptimizer::create_workspace() const {
  const Index n = this->n(), s = this->s(), H = horizon();
  HorizonWorkspace ws;
  ws.n = n;
  ws.s = s;
  ws.horizon = H;
  ws.model_data = model_->create_data();
  ws.u = Eigen::VectorXd::Zero(H * s);
  ws.u_try.resize(H * s);
  ws.u_opt.resize(H * s);
  ws.gradient.resize(H * s);
  for (Eigen::VectorXd* v : {&ws.e, &ws.we, &ws.lam, &ws.gx}) v->resize(n);
  ws.gu.resize(s);
  ws.du.resize(s);
  ws.states = VectorSeq(H + 1, n);
  ws.states_try = VectorSeq(H + 1, n);
  if (opt_.method == MPCMethod::GaussNewton) {
    ws.A_aug = MatrixSeq(H, n + 1, n + 1);
    ws.B_aug = MatrixSeq(H, n + 1, s);
    ws.Q_aug = MatrixSeq(H, n + 1, n + 1);
    ws.N_aug = MatrixSeq(H, n + 1, s);
    ws.A_step.resize(n, n);
    ws.B_step.resize(n, s);
    ws.z.resize(n + 1);
    ws.sweep = LQRSolution(H, n + 1, s);
  }
  return ws;
}

void HorizonOptimizer::check_workspace(const HorizonWorkspace& ws) const {
  if (ws.n != n() || ws.s != s() || ws.horizon != horizon() || !ws.model_data || ws.model_data->model != model_.get())
    throw std::invalid_argument("workspace was made for n = " + std::to_string(ws.n) + ", s = " + std::to_string(ws.s) +
                                ", horizon = " + std::to_string(ws.horizon) + ", not this optimizer's n = " +
                                std::to_string(n()) + ", s = " + std::to_string(s()) +
                                ", horizon = " + std::to_string(horizon()) + " (use this optimizer's create_workspace())");
}

void HorizonOptimizer::check_inputs(const CRefVec& x0, const SeqView& reference) const {
  const Index n = this->n(), H = horizon();
  if (x0.size() != n) throw_shape("x0", "(" + std::to_string(n) + ",)", "(" + std::to_string(x0.size()) + ",)");
  check_finite("x0", x0.data(), n);
  if (reference.empty()) throw std::invalid_argument("reference is missing");
  if (reference.T != H + 1 || reference.cols != n || reference.rows != 1)
    throw_shape("reference", "(" + std::to_string(H + 1) + ", " + std::to_string(n) + ") = (horizon+1, n)",
                "(" + std::to_string(reference.T) + ", " + std::to_string(reference.cols) + ")");
  check_finite("reference", reference.data, (H + 1) * n);
}

void HorizonOptimizer::check_controls(const char* name, const SeqView& u) const {
  if (u.empty()) return;
  if (u.rows != 1 || u.T != horizon() || u.cols != s())
    throw_shape(name, shape_str(horizon(), s()) + " = (horizon, s)",
                u.rows == 1 ? shape_str(u.T, u.cols) : shape_str(u.T, u.rows, u.cols));
  check_finite(name, u.data, u.T * u.cols);
}

void HorizonOptimizer::set_control_reference(HorizonWorkspace& ws, const SeqView& ur) const {
  if (ur.empty())
    ws.u_reference.resize(0);
  else
    ws.u_reference = ConstVecMap(ur.data, horizon() * s());
}

void HorizonOptimizer::project(Eigen::VectorXd& u) const {
  if (lower_.size()) u = u.cwiseMax(lower_);
  if (upper_.size()) u = u.cwiseMin(upper_);
}

void HorizonOptimizer::rollout(HorizonWorkspace& ws, const CRefVec& x0, const Eigen::VectorXd& u,
                               VectorSeq& xs) const {
  const Index s = this->s();
  xs[0] = x0;
  for (Index i = 0; i < horizon(); ++i) model_->step(xs[i], u.segment(i * s, s), xs[i + 1], i, *ws.model_data);
}

double HorizonOptimizer::cost_of(HorizonWorkspace& ws, const VectorSeq& xs, const Eigen::VectorXd& u,
                                 const SeqView& ref) const {
  const Index s = this->s(), H = horizon();
  const Eigen::VectorXd& ur = ws.u_reference;
  double J = 0.0;
  for (Index i = 0; i < H; ++i) {
    J += Q_.quad_diff(xs[i], ref_row(ref, i), ws.e) +
         (ur.size() ? R_.quad_diff(u.segment(i * s, s), ur.segment(i * s, s), ws.du) : R_.quad(u.segment(i * s, s)));
  }
  return J + C_.quad_diff(xs[H], ref_row(ref, H), ws.e);
}

double HorizonOptimizer::rollout_cost(HorizonWorkspace& ws, const CRefVec& x0, const SeqView& ref,
                                      double bound) const {
  // the rollout with cost_of's terms taken as each state is produced (while
  // it is in cache; the same sum in the same order). Diagonal weights are
  // >= 0 (validated), so each term is >= 0 in floating point too and a
  // partial sum above the bound decides a line-search trial: its remaining
  // steps (a long trial step's rollout) are not taken. (A dense weight's
  // rounding could make a term slightly negative: no cut.)
  const bool cut = !(Q_.is_dense() || R_.is_dense() || C_.is_dense());
  const Index s = this->s(), H = horizon();
  const Eigen::VectorXd &u = ws.u_try, &ur = ws.u_reference;
  VectorSeq& x = ws.states;
  x[0] = x0;
  double J = 0.0;
  for (Index i = 0; i < H; ++i) {
    J += Q_.quad_diff(x[i], ref_row(ref, i), ws.e) +
         (ur.size() ? R_.quad_diff(u.segment(i * s, s), ur.segment(i * s, s), ws.du) : R_.quad(u.segment(i * s, s)));
    if (cut && J > bound) return J;
    model_->step(x[i], u.segment(i * s, s), x[i + 1], i, *ws.model_data);
  }
  return J + C_.quad_diff(x[H], ref_row(ref, H), ws.e);
}

double HorizonOptimizer::cost_and_gradient(HorizonWorkspace& ws, const CRefVec& x0, const SeqView& reference,
                                           const SeqView& u, const SeqView& u_reference) const {
  check_workspace(ws);
  check_inputs(x0, reference);
  if (u.empty()) throw std::invalid_argument("u is missing");
  check_controls("u", u);
  check_controls("u_reference", u_reference);
  set_control_reference(ws, u_reference);
  ws.u_try = ConstVecMap(u.data, horizon() * s());
  const double J = rollout_cost(ws, x0, reference);
  adjoint(ws, reference, ws.gradient);
  return J;
}

void HorizonOptimizer::adjoint(HorizonWorkspace& ws, const SeqView& ref, Eigen::VectorXd& grad) const {
  const Index s = this->s(), H = horizon();
  const VectorSeq& x = ws.states;
  const Eigen::VectorXd &u = ws.u_try, &ur = ws.u_reference;
  grad.resize(H * s);
  C_.grad_diff(x[H], ref_row(ref, H), nullptr, ws.lam, ws.e, ws.we);
  for (Index i = H - 1; i >= 0; --i) {
    // (the first step's gx, the gradient with respect to the given x0, is not needed)
    if (i > 0)
      model_->vjp(x[i], u.segment(i * s, s), ws.lam, ws.gx, ws.gu, i, *ws.model_data);
    else
      model_->vjp_controls(x[i], u.segment(i * s, s), ws.lam, ws.gx, ws.gu, i, *ws.model_data);
    auto gi = grad.segment(i * s, s);
    if (ur.size()) {
      ws.du = u.segment(i * s, s) - ur.segment(i * s, s);
      R_.apply(ws.du, gi);
      gi = 2.0 * gi + ws.gu;
    } else if (R_.is_dense()) {
      R_.apply(u.segment(i * s, s), gi);
      gi = 2.0 * gi + ws.gu;
    } else {
      gi = 2.0 * R_.diag.cwiseProduct(u.segment(i * s, s)) + ws.gu;
    }
    if (i > 0) Q_.grad_diff(x[i], ref_row(ref, i), &ws.gx, ws.lam, ws.e, ws.we);
  }
}

MPCStats HorizonOptimizer::solve(HorizonWorkspace& ws, const CRefVec& x0, const SeqView& reference,
                                 const SeqView& u0, const SeqView& u_reference,
                                 const std::function<bool()>& keep_going, double curvature_scale) const {
  check_workspace(ws);
  check_inputs(x0, reference);
  check_controls("u0", u0);
  check_controls("u_reference", u_reference);
  if (!std::isfinite(curvature_scale))
    throw std::domain_error("curvature_scale must be finite, got " + std::to_string(curvature_scale));
  set_control_reference(ws, u_reference);
  const Index s = this->s(), H = horizon();
  const bool warm = u0.empty() && ws.has_solution;
  const double initial_scale = curvature_scale >= 0 ? curvature_scale : warm ? ws.curvature_scale : 0.0;
  if (!u0.empty()) {
    ws.u = ConstVecMap(u0.data, H * s);
  } else if (ws.has_solution) {  // warm start: shift by one step, repeat the last control
    if (H > 1) ws.u.head((H - 1) * s) = ws.u.tail((H - 1) * s).eval();
  } else {
    ws.u.setZero();
  }
  project(ws.u);
  const MPCStats st = opt_.method == MPCMethod::GaussNewton ? solve_gauss_newton(ws, x0, reference, keep_going)
                                                            : solve_lbfgs(ws, x0, reference, keep_going, initial_scale);
  // ws.states already holds the rollout of the last evaluated controls
  // (u_try); roll out again only if the optimiser returned other controls.
  if (opt_.method != MPCMethod::LBFGS || ws.u_try != ws.u) rollout(ws, x0, ws.u, ws.states);
  ws.has_solution = true;
  return st;
}

MPCStats HorizonOptimizer::solve_lbfgs(HorizonWorkspace& ws, const CRefVec& x0, const SeqView& reference,
                                       const std::function<bool()>& keep_going, double initial_scale) const {
  LBFGSOptions lo;
  lo.keep_going = keep_going;
  lo.initial_scale = initial_scale;
  lo.iterations = opt_.iterations;
  lo.memory = opt_.memory;
  lo.time_budget = opt_.time_budget;
  ws.u_opt = ws.u;
  // A shortened line-search trial evaluates the cost alone (a rollout);
  // once it is accepted, its gradient reuses that rollout (the adjoint pass
  // only): one forward and one adjoint per accepted point.
  // A trial whose partial cost passes the Armijo bound stops its rollout
  // there (rejected either way): ws.states is then incomplete.
  bool rolled = false;  // ws.states holds the whole rollout of ws.u_try from a cost-only trial
  bool partial = false;  // the last rollout stopped at the bound
  double J_rolled = 0.0;
  auto value = [&](const Eigen::VectorXd& v, double bound) {
    ws.u_try = v;
    J_rolled = rollout_cost(ws, x0, reference, bound);
    partial = J_rolled > bound;
    rolled = !partial;
    return J_rolled;
  };
  auto fg = [&](const Eigen::VectorXd& v, Eigen::VectorXd& g) {
    if (rolled && v == ws.u_try) {
      rolled = false;
      adjoint(ws, reference, g);
      return J_rolled;
    }
    rolled = partial = false;
    ws.u_try = v;
    const double J = rollout_cost(ws, x0, reference);
    adjoint(ws, reference, g);
    return J;
  };
  const LBFGSResult r = minimize_lbfgs(fg, ws.u_opt, lower_, upper_, lo, &ws.lbfgs, value);
  ws.u = ws.u_opt;
  // solve() keeps ws.states when ws.u_try is the returned point: only a
  // whole rollout may be kept
  if (partial && ws.u_try == ws.u) rollout(ws, x0, ws.u, ws.states);
  MPCStats st;
  st.cost_initial = r.cost_initial;
  st.cost = r.cost;
  st.iterations = r.iterations;
  st.evaluations = r.evaluations;
  st.gradients = r.gradients;
  st.seconds = r.seconds;
  st.curvature_scale = ws.curvature_scale = r.scale;
  return st;
}

void HorizonOptimizer::linearize_window(HorizonWorkspace& ws, const SeqView& ref, LQRProblem& pb) const {
  // In z = [dx; 1] the window cost is an LQ problem with Q_aug = [Q, Q e;
  // e'Q, e'Q e], N_aug = [0; (ubar - ur)' R], A_aug = diag(A_i, 1), B_aug = [B_i; 0].
  const Index n = this->n(), s = this->s(), H = horizon();
  const Eigen::VectorXd &u = ws.u, &ur = ws.u_reference;
  for (Index i = 0; i < H; ++i) {
    model_->jacobians(ws.states[i], u.segment(i * s, s), ws.A_step, ws.B_step, i, *ws.model_data);
    auto A = ws.A_aug[i];
    A.setZero();
    A.topLeftCorner(n, n) = ws.A_step;
    A(n, n) = 1.0;
    auto B = ws.B_aug[i];
    B.setZero();
    B.topRows(n) = ws.B_step;
    ws.e = ws.states[i] - ref_row(ref, i);
    ws.we.noalias() = Qd_ * ws.e;
    auto Qa = ws.Q_aug[i];
    Qa.topLeftCorner(n, n) = Qd_;
    Qa.topRightCorner(n, 1) = ws.we;
    Qa.bottomLeftCorner(1, n) = ws.we.transpose();
    Qa(n, n) = ws.e.dot(ws.we);
    auto Na = ws.N_aug[i];
    Na.setZero();
    if (ur.size())
      Na.bottomRows(1) = (Rd_ * (u.segment(i * s, s) - ur.segment(i * s, s))).transpose();
    else
      Na.bottomRows(1) = (Rd_ * u.segment(i * s, s)).transpose();
  }
  ws.e = ws.states[H] - ref_row(ref, H);
  ws.we.noalias() = Cd_ * ws.e;
  pb.Q_final.topLeftCorner(n, n) = Cd_;
  pb.Q_final.topRightCorner(n, 1) = ws.we;
  pb.Q_final.bottomLeftCorner(1, n) = ws.we.transpose();
  pb.Q_final(n, n) = ws.e.dot(ws.we);
}

void HorizonOptimizer::gauss_newton_trial(HorizonWorkspace& ws, const CRefVec& x0, double a) const {
  // du_i = Kx_i dx_i + a k_i from the sweep's gains, clamped to the limits
  const Index n = this->n(), s = this->s(), H = horizon();
  ws.states_try[0] = x0;
  for (Index i = 0; i < H; ++i) {
    ws.z.head(n) = ws.states_try[i] - ws.states[i];
    ws.z[n] = a;
    auto ui = ws.u_try.segment(i * s, s);
    ui = ws.u.segment(i * s, s) + ws.sweep.K[i] * ws.z;
    if (lower_.size()) ui = ui.cwiseMax(lower_.segment(i * s, s));
    if (upper_.size()) ui = ui.cwiseMin(upper_.segment(i * s, s));
    model_->step(ws.states_try[i], ui, ws.states_try[i + 1], i, *ws.model_data);
  }
}

MPCStats HorizonOptimizer::solve_gauss_newton(HorizonWorkspace& ws, const CRefVec& x0, const SeqView& ref,
                                              const std::function<bool()>& keep_going) const {
  // Linearize about (xbar, ubar) (linearize_window); one Riccati sweep gives
  // du_i = K_i [dx_i; 1]; the forward pass rolls the model out with
  // du_i = Kx_i dx_i + a k_i, halving a until J decreases.
  const double t0 = now_seconds();
  const Index n = this->n(), s = this->s(), H = horizon();
  MPCStats st;
  rollout(ws, x0, ws.u, ws.states);
  double J = cost_of(ws, ws.states, ws.u, ref);
  if (!std::isfinite(J))
    throw std::domain_error("the window's cost is not finite at the starting controls: the prediction model "
                            "diverged over the horizon (e.g. an explicit step too long for a stiff model; use "
                            "more substeps)");
  st.cost_initial = J;
  st.evaluations = 1;
  LQRProblem pb;
  pb.horizon = H;
  pb.A = ws.A_aug.view();
  pb.B = ws.B_aug.view();
  pb.Q = ws.Q_aug.view();
  pb.N = ws.N_aug.view();
  pb.R_terms.emplace_back(SeqView::constant(Rd_.data(), s, s), 1.0);  // symmetric: layout-agnostic
  pb.Q_final = Eigen::MatrixXd(n + 1, n + 1);
  for (Index k = 0; k < opt_.iterations; ++k) {
    if (opt_.time_budget > 0 && now_seconds() - t0 >= opt_.time_budget) break;
    if (keep_going && !keep_going()) break;
    linearize_window(ws, ref, pb);
    riccati_sweep(pb, ws.sweep);
    bool improved = false;
    double J_try = J;
    for (double a = 1.0; a > 1e-10; a *= 0.5) {
      gauss_newton_trial(ws, x0, a);
      J_try = cost_of(ws, ws.states_try, ws.u_try, ref);
      ++st.evaluations;
      if (std::isfinite(J_try) && J_try < J) {
        improved = true;
        break;
      }
    }
    if (!improved) break;
    ws.u.swap(ws.u_try);
    std::swap(ws.states, ws.states_try);
    const double dec = J - J_try;
    J = J_try;
    ++st.iterations;
    if (dec <= 1e-15 * std::max(1.0, std::abs(J))) break;
  }
  st.cost = J;
  st.seconds = now_seconds() - t0;
  return st;
}

}  // namespace directable
