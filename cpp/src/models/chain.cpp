#include "directable/models/chain.hpp"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "directable/core/parallel.hpp"

namespace directable {

namespace {

//! Forward-mode dual number (value, one directional derivative): the
//! Newton-Euler recursion instantiated on it gives exact derivatives.
struct Dual {
  double v = 0.0, d = 0.0;
  Dual() = default;
  Dual(double v_, double d_ = 0.0) : v(v_), d(d_) {}
};
inline Dual operator+(Dual a, Dual b) { return {a.v + b.v, a.d + b.d}; }
inline Dual operator-(Dual a, Dual b) { return {a.v - b.v, a.d - b.d}; }
inline Dual operator-(Dual a) { return {-a.v, -a.d}; }
inline Dual operator*(Dual a, Dual b) { return {a.v * b.v, a.v * b.d + a.d * b.v}; }
inline Dual& operator+=(Dual& a, Dual b) { return a = a + b; }
inline Dual sin(Dual a) { return {std::sin(a.v), std::cos(a.v) * a.d}; }
inline Dual cos(Dual a) { return {std::cos(a.v), -std::sin(a.v) * a.d}; }

std::string vec_shape(Index k) { return "(" + std::to_string(k) + ",)"; }

void check_len(const std::string& name, const Eigen::VectorXd& v, Index k, bool allow_empty) {
  if (allow_empty && v.size() == 0) return;
  if (v.size() != k) throw_shape(name, vec_shape(k), vec_shape(v.size()));
}

}  // namespace

PlanarChain::PlanarChain(ChainParams p) : P_(std::move(p)) {
  L_ = P_.masses.size();
  if (L_ < 1) throw std::invalid_argument("masses must hold at least one link, got shape (0,)");
  check_len("lengths", P_.lengths, L_, false);
  check_len("inertias", P_.inertias, L_, true);
  check_len("coms", P_.coms, L_, true);
  r_ = P_.free_root ? 2 : 0;
  n_ = L_ + r_;
  check_len("damping", P_.damping, n_, true);
  check_len("q_min", P_.q_min, n_, true);
  check_len("q_max", P_.q_max, n_, true);
  for (Index i = 0; i < L_; ++i) {
    check_positive("masses[" + std::to_string(i) + "]", P_.masses[i]);
    check_positive("lengths[" + std::to_string(i) + "]", P_.lengths[i]);
  }
  if (P_.inertias.size() == 0) P_.inertias = P_.masses.cwiseProduct(P_.lengths.cwiseAbs2()) / 12.0;
  if (P_.coms.size() == 0) P_.coms = 0.5 * P_.lengths;
  if (P_.damping.size() == 0) P_.damping.setZero(n_);
  const double inf = std::numeric_limits<double>::infinity();
  if (P_.q_min.size() == 0) P_.q_min.setConstant(n_, -inf);
  if (P_.q_max.size() == 0) P_.q_max.setConstant(n_, inf);
  for (Index i = 0; i < L_; ++i) {
    if (!(P_.inertias[i] >= 0) || !std::isfinite(P_.inertias[i]))
      throw std::domain_error("inertias[" + std::to_string(i) + "] must be finite and >= 0, got " +
                              std::to_string(P_.inertias[i]));
    check_finite("coms", P_.coms.data(), L_);
  }
  for (Index i = 0; i < n_; ++i) {
    if (!(P_.damping[i] >= 0) || !std::isfinite(P_.damping[i]))
      throw std::domain_error("damping[" + std::to_string(i) + "] must be finite and >= 0, got " +
                              std::to_string(P_.damping[i]));
    if (std::isnan(P_.q_min[i]) || std::isnan(P_.q_max[i]) || !(P_.q_min[i] <= P_.q_max[i]))
      throw std::domain_error("joint limits must satisfy q_min <= q_max (coordinate " + std::to_string(i) +
                              "), got q_min = " + std::to_string(P_.q_min[i]) + ", q_max = " + std::to_string(P_.q_max[i]));
  }
  if (!std::isfinite(P_.gravity)) throw std::domain_error("gravity must be finite, got " + std::to_string(P_.gravity));
  if (P_.free_root) {
    // Without a root joint a rotating free body has no inertia about its joint
    // unless the links have some: a point-mass chain is still fine (M > 0 as
    // long as the masses are positive), nothing to check.
  }
  // B at the rest state (q = 0).
  auto ws = create_data();
  auto& d = cast(*ws);
  Eigen::VectorXd q0 = Eigen::VectorXd::Zero(n_);
  mass_matrix(q0, d.M, d);
  B_rest_.setZero(2 * n_, n_);
  B_rest_.bottomRows(n_) = d.M.llt().solve(Eigen::MatrixXd::Identity(n_, n_));
}

std::unique_ptr<ModelData> PlanarChain::create_data() const {
  auto d = std::make_unique<ChainData>();
  for (auto* v : {&d->k1, &d->k2, &d->k3, &d->k4, &d->tmp, &d->Bw}) v->setZero(2 * n_);
  d->phi.setZero(L_);
  d->omega.setZero(L_);
  d->alpha.setZero(L_);
  for (auto* m : {&d->p, &d->c, &d->d, &d->ap, &d->ac, &d->f}) m->setZero(2, L_ + 1);
  for (auto* v : {&d->qdd, &d->tau, &d->C, &d->rhs, &d->zeros}) v->setZero(n_);
  d->zq.setZero(2 * n_);
  d->M.setZero(n_, n_);
  d->llt = Eigen::LLT<Eigen::MatrixXd>(n_);
  d->g_m.setZero(L_ + 1);
  d->g_h.setZero(2, L_ + 1);
  d->g_J.setZero(L_ + 1);
  return d;
}

ChainData& PlanarChain::cast(ModelData& ws) const {
  auto* d = dynamic_cast<ChainData*>(&ws);
  if (!d) throw std::invalid_argument("PlanarChain needs the workspace of create_data()");
  return *d;
}

void PlanarChain::kinematics(const Eigen::Ref<const Eigen::VectorXd>& q, ChainData& w) const {
  Eigen::Vector2d pos = r_ ? Eigen::Vector2d(q[0], q[1]) : Eigen::Vector2d::Zero();
  double phi = 0.0;
  w.p.col(0) = pos;
  for (Index i = 0; i < L_; ++i) {
    phi += q[r_ + i];
    w.phi[i] = phi;
    w.d.col(i) << std::sin(phi), -std::cos(phi);
    w.c.col(i) = w.p.col(i) + P_.coms[i] * w.d.col(i);
    w.p.col(i + 1) = w.p.col(i) + P_.lengths[i] * w.d.col(i);
  }
}

void PlanarChain::mass_matrix(const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::MatrixXd> M,
                              ModelData& ws) const {
  auto& w = cast(ws);
  kinematics(q, w);
  // Composite rigid bodies: subtree k (links >= k) has mass g_m[k], first
  // moment g_h[k] about joint k and rotational inertia g_J[k] about joint k.
  // For j <= k: M_jk = g_J[k] + (p_k - p_j) . g_h[k].
  w.g_m[L_] = 0.0;
  w.g_h.col(L_).setZero();
  w.g_J[L_] = 0.0;
  for (Index k = L_ - 1; k >= 0; --k) {
    const Eigen::Vector2d rc = w.c.col(k) - w.p.col(k);
    const Eigen::Vector2d rl = w.p.col(k + 1) - w.p.col(k);
    const double m = P_.masses[k];
    w.g_m[k] = m + w.g_m[k + 1];
    w.g_h.col(k) = m * rc + w.g_h.col(k + 1) + w.g_m[k + 1] * rl;
    w.g_J[k] = P_.inertias[k] + m * rc.squaredNorm() + w.g_J[k + 1] + 2.0 * rl.dot(w.g_h.col(k + 1)) +
               w.g_m[k + 1] * rl.squaredNorm();
  }
  for (Index k = 0; k < L_; ++k) {
    for (Index j = 0; j <= k; ++j) {
      const double v = w.g_J[k] + (w.p.col(k) - w.p.col(j)).dot(w.g_h.col(k));
      M(r_ + j, r_ + k) = v;
      M(r_ + k, r_ + j) = v;
    }
  }
  if (r_) {
    M(0, 0) = M(1, 1) = w.g_m[0];
    M(0, 1) = M(1, 0) = 0.0;
    for (Index j = 0; j < L_; ++j) {
      // d c_i / d theta_j = z x (c_i - p_j): summed with masses, z x g_h[j].
      M(0, r_ + j) = M(r_ + j, 0) = -w.g_h(1, j);
      M(1, r_ + j) = M(r_ + j, 1) = w.g_h(0, j);
    }
  }
}

template <class S>
void PlanarChain::rnea(const S* q, const S* qd, const S* qdd, S* tau) const {
  using std::cos;
  using std::sin;
  // Scratch on the stack for short chains, on the heap (once) for long ones.
  constexpr Index kStack = 64;
  S stack_buf[7 * kStack];
  std::vector<S> heap;
  S* buf = stack_buf;
  if (L_ > kStack) {
    heap.resize(7 * L_);
    buf = heap.data();
  }
  S *acx = buf, *acy = buf + L_, *rcx = buf + 2 * L_, *rcy = buf + 3 * L_, *lx = buf + 4 * L_, *ly = buf + 5 * L_,
    *al = buf + 6 * L_;
  // Gravity as an upward acceleration of the base.
  S apx = r_ ? qdd[0] : S(0.0);
  S apy = (r_ ? qdd[1] : S(0.0)) + S(P_.gravity);
  S phi(0.0), om(0.0), alpha(0.0);
  for (Index i = 0; i < L_; ++i) {
    phi = phi + q[r_ + i];
    om = om + qd[r_ + i];
    alpha = alpha + qdd[r_ + i];
    const S s = sin(phi), c = cos(phi);
    const S om2 = om * om;
    const double a = P_.coms[i], l = P_.lengths[i];
    // direction d = (s, -c), z x d = (c, s)
    rcx[i] = S(a) * s;
    rcy[i] = -(S(a) * c);
    acx[i] = apx + alpha * S(a) * c - om2 * rcx[i];
    acy[i] = apy + alpha * S(a) * s - om2 * rcy[i];
    lx[i] = S(l) * s;
    ly[i] = -(S(l) * c);
    al[i] = alpha;
    apx = apx + alpha * S(l) * c - om2 * lx[i];
    apy = apy + alpha * S(l) * s - om2 * ly[i];
  }
  S fx(0.0), fy(0.0), nz(0.0);  // force and moment that link i+1 receives from link i
  for (Index i = L_ - 1; i >= 0; --i) {
    const S Fx = S(P_.masses[i]) * acx[i], Fy = S(P_.masses[i]) * acy[i];
    nz = S(P_.inertias[i]) * al[i] + nz + (rcx[i] * Fy - rcy[i] * Fx) + (lx[i] * fy - ly[i] * fx);
    fx = Fx + fx;
    fy = Fy + fy;
    tau[r_ + i] = nz + S(P_.damping[r_ + i]) * qd[r_ + i];
  }
  if (r_) {
    tau[0] = fx + S(P_.damping[0]) * qd[0];
    tau[1] = fy + S(P_.damping[1]) * qd[1];
  }
}

void PlanarChain::inverse_dynamics(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
                                   const Eigen::Ref<const Eigen::VectorXd>& qdd, Eigen::Ref<Eigen::VectorXd> tau,
                                   ChainData& ws) const {
  // Contiguous copies (Ref may be strided); no allocation.
  ws.zq.head(n_) = q;
  ws.zq.tail(n_) = qd;
  ws.rhs = qdd;
  rnea<double>(ws.zq.data(), ws.zq.data() + n_, ws.rhs.data(), ws.tau.data());
  tau = ws.tau;
}

void PlanarChain::bias_forces(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
                              Eigen::Ref<Eigen::VectorXd> C, ModelData& ws) const {
  auto& w = cast(ws);
  inverse_dynamics(q, qd, w.zeros, C, w);
}

void PlanarChain::forward_dynamics(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
                                   const Eigen::Ref<const Eigen::VectorXd>& tau, Eigen::Ref<Eigen::VectorXd> qdd,
                                   ChainData& w) const {
  bias_forces(q, qd, w.C, w);
  mass_matrix(q, w.M, w);
  w.llt.compute(w.M);
  if (w.llt.info() != Eigen::Success) throw std::domain_error("mass matrix is not positive definite");
  qdd = tau - w.C;
  w.llt.solveInPlace(qdd);
}

void PlanarChain::dynamics_jacobian(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
                                    const Eigen::Ref<const Eigen::VectorXd>& tau, Eigen::Ref<RowMatrix> J,
                                    ChainData& w) const {
  // M qdd + C = tau  =>  d qdd/dz = -M^-1 d(ID(q, qd, qdd))/dz at fixed qdd.
  Eigen::VectorXd qdd(n_);
  forward_dynamics(q, qd, tau, qdd, w);  // leaves the factorization of M in w.llt
  std::vector<Dual> dq(n_), dqd(n_), dqdd(n_), dtau(n_);
  for (Index i = 0; i < n_; ++i) {
    dq[i] = Dual(q[i]);
    dqd[i] = Dual(qd[i]);
    dqdd[i] = Dual(qdd[i]);
  }
  Eigen::MatrixXd dID(n_, 2 * n_);
  for (Index k = 0; k < 2 * n_; ++k) {
    Dual& seed = k < n_ ? dq[k] : dqd[k - n_];
    seed.d = 1.0;
    rnea<Dual>(dq.data(), dqd.data(), dqdd.data(), dtau.data());
    seed.d = 0.0;
    for (Index i = 0; i < n_; ++i) dID(i, k) = dtau[i].d;
  }
  w.llt.solveInPlace(dID);
  J = -dID;
}

void PlanarChain::project_limits(Eigen::Ref<Eigen::VectorXd> q, Eigen::Ref<Eigen::VectorXd> qd) const {
  for (Index i = 0; i < n_; ++i) {
    if (q[i] < P_.q_min[i]) {
      q[i] = P_.q_min[i];
      if (qd[i] < 0) qd[i] = 0.0;
    } else if (q[i] > P_.q_max[i]) {
      q[i] = P_.q_max[i];
      if (qd[i] > 0) qd[i] = 0.0;
    }
  }
}

double PlanarChain::kinetic_energy(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd) const {
  if (q.size() != n_) throw_shape("q", vec_shape(n_), vec_shape(q.size()));
  if (qd.size() != n_) throw_shape("qd", vec_shape(n_), vec_shape(qd.size()));
  auto ws = create_data();
  auto& w = cast(*ws);
  mass_matrix(q, w.M, w);
  return 0.5 * qd.dot(w.M * qd);
}

double PlanarChain::potential_energy(const Eigen::Ref<const Eigen::VectorXd>& q) const {
  if (q.size() != n_) throw_shape("q", vec_shape(n_), vec_shape(q.size()));
  auto ws = create_data();
  auto& w = cast(*ws);
  kinematics(q, w);
  double V = 0.0;
  for (Index i = 0; i < L_; ++i) V += P_.masses[i] * P_.gravity * w.c(1, i);
  return V;
}

Eigen::Matrix2Xd PlanarChain::joint_positions(const Eigen::Ref<const Eigen::VectorXd>& q) const {
  if (q.size() != n_) throw_shape("q", vec_shape(n_), vec_shape(q.size()));
  auto ws = create_data();
  auto& w = cast(*ws);
  kinematics(q, w);
  return w.p;
}

void PlanarChain::dynamics(const Eigen::Ref<const Eigen::VectorXd>& z, double, Eigen::Ref<Eigen::VectorXd> F) const {
  auto ws = create_data();
  auto& w = cast(*ws);
  F.head(n_) = z.tail(n_);
  forward_dynamics(z.head(n_), z.tail(n_), w.zeros, F.tail(n_), w);
}

void PlanarChain::jacobian(const Eigen::Ref<const Eigen::VectorXd>& z, double, Eigen::Ref<RowMatrix> J) const {
  auto ws = create_data();
  auto& w = cast(*ws);
  J.setZero();
  J.topRightCorner(n_, n_).setIdentity();
  Eigen::VectorXd zero = Eigen::VectorXd::Zero(n_);
  dynamics_jacobian(z.head(n_), z.tail(n_), zero, J.bottomRows(n_), w);
}

void PlanarChain::step(const Eigen::Ref<const Eigen::VectorXd>& z, double, double dt,
                       const Eigen::Ref<const Eigen::VectorXd>& w, Eigen::Ref<Eigen::VectorXd> z_next,
                       ModelData& data) const {
  auto& d = cast(data);
  auto f = [&](const Eigen::VectorXd& x, Eigen::VectorXd& k) {
    k.head(n_) = x.tail(n_);
    forward_dynamics(x.head(n_), x.tail(n_), w, k.tail(n_), d);
  };
  d.Bw = z;  // (a contiguous copy of z)
  f(d.Bw, d.k1);
  d.tmp = d.Bw + 0.5 * dt * d.k1;
  f(d.tmp, d.k2);
  d.tmp = d.Bw + 0.5 * dt * d.k2;
  f(d.tmp, d.k3);
  d.tmp = d.Bw + dt * d.k3;
  f(d.tmp, d.k4);
  z_next = d.Bw + (dt / 6.0) * (d.k1 + 2.0 * d.k2 + 2.0 * d.k3 + d.k4);
  project_limits(z_next.head(n_), z_next.tail(n_));
}

void PlanarChain::linearize_along(SeqView z_ref, SeqView tau_ref, MatrixSeq& A, MatrixSeq& B, int threads) const {
  const Index n2 = 2 * n_;
  if (z_ref.empty() || z_ref.rows != 1 || z_ref.cols != n2 || z_ref.T < 2)
    throw_shape("z_ref", "(T+1, " + std::to_string(n2) + ") with T >= 1",
                z_ref.empty() ? "nothing" : shape_str(z_ref.T, z_ref.cols));
  const Index T = z_ref.T - 1;
  if (!tau_ref.empty() && (tau_ref.rows != 1 || tau_ref.cols != n_ || tau_ref.T != T))
    throw_shape("tau_ref", shape_str(T, n_), shape_str(tau_ref.T, tau_ref.cols));
  z_ref.check_finite("z_ref");
  tau_ref.check_finite("tau_ref");
  A = MatrixSeq(T, n2, n2);
  B = MatrixSeq(T, n2, n_);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(n_);
  parallel_steps(T, threads, nullptr, T, [this] { return create_data(); }, [&](Index i, std::unique_ptr<ModelData>& ws) {
    auto& w = cast(*ws);
    ConstVecMap z(z_ref.data + i * n2, n2);
    auto Ai = A[i];
    Ai.setZero();
    Ai.topRightCorner(n_, n_).setIdentity();
    if (tau_ref.empty())
      dynamics_jacobian(z.head(n_), z.tail(n_), zero, Ai.bottomRows(n_), w);
    else
      dynamics_jacobian(z.head(n_), z.tail(n_), ConstVecMap(tau_ref.data + i * n_, n_), Ai.bottomRows(n_), w);
    auto Bi = B[i];
    Bi.setZero();
    Bi.bottomRows(n_) = w.llt.solve(Eigen::MatrixXd::Identity(n_, n_));
  });
}

template void PlanarChain::rnea<double>(const double*, const double*, const double*, double*) const;

}  // namespace directable
