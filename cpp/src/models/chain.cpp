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

PlanarChain::PlanarChain(ChainParams p) : params_(std::move(p)) {
  links_ = params_.masses.size();
  if (links_ < 1) throw std::invalid_argument("masses must hold at least one link, got shape (0,)");
  check_len("lengths", params_.lengths, links_, false);
  check_len("inertias", params_.inertias, links_, true);
  check_len("coms", params_.coms, links_, true);
  root_dofs_ = params_.free_root ? 2 : 0;
  dofs_ = links_ + root_dofs_;
  check_len("damping", params_.damping, dofs_, true);
  check_len("q_min", params_.q_min, dofs_, true);
  check_len("q_max", params_.q_max, dofs_, true);
  for (Index i = 0; i < links_; ++i) {
    check_positive("masses[" + std::to_string(i) + "]", params_.masses[i]);
    check_positive("lengths[" + std::to_string(i) + "]", params_.lengths[i]);
  }
  if (params_.inertias.size() == 0) params_.inertias = params_.masses.cwiseProduct(params_.lengths.cwiseAbs2()) / 12.0;
  if (params_.coms.size() == 0) params_.coms = 0.5 * params_.lengths;
  if (params_.damping.size() == 0) params_.damping.setZero(dofs_);
  const double inf = std::numeric_limits<double>::infinity();
  if (params_.q_min.size() == 0) params_.q_min.setConstant(dofs_, -inf);
  if (params_.q_max.size() == 0) params_.q_max.setConstant(dofs_, inf);
  for (Index i = 0; i < links_; ++i) {
    if (!(params_.inertias[i] >= 0) || !std::isfinite(params_.inertias[i]))
      throw std::domain_error("inertias[" + std::to_string(i) + "] must be finite and >= 0, got " +
                              std::to_string(params_.inertias[i]));
    check_finite("coms", params_.coms.data(), links_);
  }
  for (Index i = 0; i < dofs_; ++i) {
    if (!(params_.damping[i] >= 0) || !std::isfinite(params_.damping[i]))
      throw std::domain_error("damping[" + std::to_string(i) + "] must be finite and >= 0, got " +
                              std::to_string(params_.damping[i]));
    if (std::isnan(params_.q_min[i]) || std::isnan(params_.q_max[i]) || !(params_.q_min[i] <= params_.q_max[i]))
      throw std::domain_error("joint limits must satisfy q_min <= q_max (coordinate " + std::to_string(i) +
                              "), got q_min = " + std::to_string(params_.q_min[i]) + ", q_max = " + std::to_string(params_.q_max[i]));
  }
  if (!std::isfinite(params_.gravity)) throw std::domain_error("gravity must be finite, got " + std::to_string(params_.gravity));
  // B at the rest state (q = 0).
  auto ws = create_data();
  auto& d = cast(*ws);
  Eigen::VectorXd q0 = Eigen::VectorXd::Zero(dofs_);
  mass_matrix(q0, d.M, d);
  B_rest_.setZero(2 * dofs_, dofs_);
  B_rest_.bottomRows(dofs_) = d.M.llt().solve(Eigen::MatrixXd::Identity(dofs_, dofs_));
}

std::unique_ptr<ModelData> PlanarChain::create_data() const {
  auto d = std::make_unique<ChainData>();
  for (auto* v : {&d->k1, &d->k2, &d->k3, &d->k4, &d->tmp, &d->Bw}) v->setZero(2 * dofs_);
  d->phi.setZero(links_);
  d->omega.setZero(links_);
  d->alpha.setZero(links_);
  for (auto* m : {&d->p, &d->c, &d->d, &d->ap, &d->ac, &d->f}) m->setZero(2, links_ + 1);
  for (auto* v : {&d->qdd, &d->tau, &d->C, &d->rhs, &d->zeros}) v->setZero(dofs_);
  d->zq.setZero(2 * dofs_);
  d->state.setZero(2 * dofs_);
  d->M.setZero(dofs_, dofs_);
  // sized by a factorisation (an LLT made with a size only leaves its info unset; UBSan)
  d->llt.compute(Eigen::MatrixXd::Identity(dofs_, dofs_));
  d->subtree_mass.setZero(links_ + 1);
  d->subtree_moment.setZero(2, links_ + 1);
  d->subtree_inertia.setZero(links_ + 1);
  return d;
}

ChainData& PlanarChain::cast(ModelData& ws) const {
  auto* d = dynamic_cast<ChainData*>(&ws);
  if (!d) throw std::invalid_argument("PlanarChain needs the workspace of create_data()");
  return *d;
}

void PlanarChain::kinematics(const Eigen::Ref<const Eigen::VectorXd>& q, ChainData& w) const {
  Eigen::Vector2d pos = root_dofs_ ? Eigen::Vector2d(q[0], q[1]) : Eigen::Vector2d::Zero();
  double phi = 0.0;
  w.p.col(0) = pos;
  for (Index i = 0; i < links_; ++i) {
    phi += q[root_dofs_ + i];
    w.phi[i] = phi;
    w.d.col(i) << std::sin(phi), -std::cos(phi);
    w.c.col(i) = w.p.col(i) + params_.coms[i] * w.d.col(i);
    w.p.col(i + 1) = w.p.col(i) + params_.lengths[i] * w.d.col(i);
  }
}

void PlanarChain::mass_matrix(const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::MatrixXd> M,
                              ModelData& ws) const {
  auto& w = cast(ws);
  kinematics(q, w);
  // Composite rigid bodies: subtree k (links >= k) has mass subtree_mass[k], first
  // moment subtree_moment[k] about joint k and rotational inertia subtree_inertia[k] about joint k.
  // For j <= k: M_jk = subtree_inertia[k] + (p_k - p_j) . subtree_moment[k].
  w.subtree_mass[links_] = 0.0;
  w.subtree_moment.col(links_).setZero();
  w.subtree_inertia[links_] = 0.0;
  for (Index k = links_ - 1; k >= 0; --k) {
    const Eigen::Vector2d rc = w.c.col(k) - w.p.col(k);
    const Eigen::Vector2d rl = w.p.col(k + 1) - w.p.col(k);
    const double m = params_.masses[k];
    w.subtree_mass[k] = m + w.subtree_mass[k + 1];
    w.subtree_moment.col(k) = m * rc + w.subtree_moment.col(k + 1) + w.subtree_mass[k + 1] * rl;
    w.subtree_inertia[k] = params_.inertias[k] + m * rc.squaredNorm() + w.subtree_inertia[k + 1] + 2.0 * rl.dot(w.subtree_moment.col(k + 1)) +
               w.subtree_mass[k + 1] * rl.squaredNorm();
  }
  for (Index k = 0; k < links_; ++k) {
    for (Index j = 0; j <= k; ++j) {
      const double v = w.subtree_inertia[k] + (w.p.col(k) - w.p.col(j)).dot(w.subtree_moment.col(k));
      M(root_dofs_ + j, root_dofs_ + k) = v;
      M(root_dofs_ + k, root_dofs_ + j) = v;
    }
  }
  if (root_dofs_) {
    M(0, 0) = M(1, 1) = w.subtree_mass[0];
    M(0, 1) = M(1, 0) = 0.0;
    for (Index j = 0; j < links_; ++j) {
      // d c_i / d theta_j = z x (c_i - p_j): summed with masses, z x subtree_moment[j].
      M(0, root_dofs_ + j) = M(root_dofs_ + j, 0) = -w.subtree_moment(1, j);
      M(1, root_dofs_ + j) = M(root_dofs_ + j, 1) = w.subtree_moment(0, j);
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
  if (links_ > kStack) {
    heap.resize(7 * links_);
    buf = heap.data();
  }
  S *acx = buf, *acy = buf + links_, *rcx = buf + 2 * links_, *rcy = buf + 3 * links_, *lx = buf + 4 * links_, *ly = buf + 5 * links_,
    *al = buf + 6 * links_;
  // Gravity as an upward acceleration of the base.
  S apx = root_dofs_ ? qdd[0] : S(0.0);
  S apy = (root_dofs_ ? qdd[1] : S(0.0)) + S(params_.gravity);
  S phi(0.0), om(0.0), alpha(0.0);
  for (Index i = 0; i < links_; ++i) {
    phi = phi + q[root_dofs_ + i];
    om = om + qd[root_dofs_ + i];
    alpha = alpha + qdd[root_dofs_ + i];
    const S s = sin(phi), c = cos(phi);
    const S om2 = om * om;
    const double a = params_.coms[i], l = params_.lengths[i];
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
  for (Index i = links_ - 1; i >= 0; --i) {
    const S Fx = S(params_.masses[i]) * acx[i], Fy = S(params_.masses[i]) * acy[i];
    nz = S(params_.inertias[i]) * al[i] + nz + (rcx[i] * Fy - rcy[i] * Fx) + (lx[i] * fy - ly[i] * fx);
    fx = Fx + fx;
    fy = Fy + fy;
    tau[root_dofs_ + i] = nz + S(params_.damping[root_dofs_ + i]) * qd[root_dofs_ + i];
  }
  if (root_dofs_) {
    tau[0] = fx + S(params_.damping[0]) * qd[0];
    tau[1] = fy + S(params_.damping[1]) * qd[1];
  }
}

void PlanarChain::inverse_dynamics(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
                                   const Eigen::Ref<const Eigen::VectorXd>& qdd, Eigen::Ref<Eigen::VectorXd> tau,
                                   ChainData& ws) const {
  // Contiguous copies (Ref may be strided); no allocation.
  ws.zq.head(dofs_) = q;
  ws.zq.tail(dofs_) = qd;
  ws.rhs = qdd;
  rnea<double>(ws.zq.data(), ws.zq.data() + dofs_, ws.rhs.data(), ws.tau.data());
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
  Eigen::VectorXd qdd(dofs_);
  forward_dynamics(q, qd, tau, qdd, w);  // leaves the factorization of M in w.llt
  std::vector<Dual> dq(dofs_), dqd(dofs_), dqdd(dofs_), dtau(dofs_);
  for (Index i = 0; i < dofs_; ++i) {
    dq[i] = Dual(q[i]);
    dqd[i] = Dual(qd[i]);
    dqdd[i] = Dual(qdd[i]);
  }
  Eigen::MatrixXd dID(dofs_, 2 * dofs_);
  for (Index k = 0; k < 2 * dofs_; ++k) {
    Dual& seed = k < dofs_ ? dq[k] : dqd[k - dofs_];
    seed.d = 1.0;
    rnea<Dual>(dq.data(), dqd.data(), dqdd.data(), dtau.data());
    seed.d = 0.0;
    for (Index i = 0; i < dofs_; ++i) dID(i, k) = dtau[i].d;
  }
  w.llt.solveInPlace(dID);
  J = -dID;
}

void PlanarChain::project_limits(Eigen::Ref<Eigen::VectorXd> q, Eigen::Ref<Eigen::VectorXd> qd) const {
  for (Index i = 0; i < dofs_; ++i) {
    if (q[i] < params_.q_min[i]) {
      q[i] = params_.q_min[i];
      if (qd[i] < 0) qd[i] = 0.0;
    } else if (q[i] > params_.q_max[i]) {
      q[i] = params_.q_max[i];
      if (qd[i] > 0) qd[i] = 0.0;
    }
  }
}

double PlanarChain::kinetic_energy(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd) const {
  if (q.size() != dofs_) throw_shape("q", vec_shape(dofs_), vec_shape(q.size()));
  if (qd.size() != dofs_) throw_shape("qd", vec_shape(dofs_), vec_shape(qd.size()));
  auto ws = create_data();
  auto& w = cast(*ws);
  mass_matrix(q, w.M, w);
  return 0.5 * qd.dot(w.M * qd);
}

double PlanarChain::potential_energy(const Eigen::Ref<const Eigen::VectorXd>& q) const {
  if (q.size() != dofs_) throw_shape("q", vec_shape(dofs_), vec_shape(q.size()));
  auto ws = create_data();
  auto& w = cast(*ws);
  kinematics(q, w);
  double V = 0.0;
  for (Index i = 0; i < links_; ++i) V += params_.masses[i] * params_.gravity * w.c(1, i);
  return V;
}

Eigen::Matrix2Xd PlanarChain::joint_positions(const Eigen::Ref<const Eigen::VectorXd>& q) const {
  if (q.size() != dofs_) throw_shape("q", vec_shape(dofs_), vec_shape(q.size()));
  auto ws = create_data();
  auto& w = cast(*ws);
  kinematics(q, w);
  return w.p;
}

void PlanarChain::check_samples(const char* name, const Eigen::Ref<const RowMatrix>& x, Index rows) const {
  if (x.cols() != dofs_ || x.rows() != rows)
    throw_shape(name, shape_str(rows, dofs_), shape_str(x.rows(), x.cols()));
  check_finite(name, x.data(), x.size());
}

void PlanarChain::inverse_dynamics_along(const Eigen::Ref<const RowMatrix>& q, const Eigen::Ref<const RowMatrix>& qd,
                                         const Eigen::Ref<const RowMatrix>& qdd, Eigen::Ref<RowMatrix> tau) const {
  if (q.cols() != dofs_) throw_shape("q", "(T, " + std::to_string(dofs_) + ")", shape_str(q.rows(), q.cols()));
  const Index T = q.rows();
  check_samples("q", q, T);
  check_samples("qd", qd, T);
  check_samples("qdd", qdd, T);
  check_shape("tau", tau.rows(), tau.cols(), T, dofs_);
  auto ws = create_data();
  auto& w = cast(*ws);
  for (Index i = 0; i < T; ++i) {
    auto tau_i = tau.row(i).transpose();
    inverse_dynamics(q.row(i).transpose(), qd.row(i).transpose(), qdd.row(i).transpose(), tau_i, w);
  }
}

void PlanarChain::energies_along(const Eigen::Ref<const RowMatrix>& q, const Eigen::Ref<const RowMatrix>& qd,
                                 Eigen::Ref<Eigen::VectorXd> energy) const {
  if (q.cols() != dofs_) throw_shape("q", "(T, " + std::to_string(dofs_) + ")", shape_str(q.rows(), q.cols()));
  const Index T = q.rows();
  check_samples("q", q, T);
  check_samples("qd", qd, T);
  if (energy.size() != T) throw_shape("energy", vec_shape(T), vec_shape(energy.size()));
  for (Index i = 0; i < T; ++i)
    energy[i] = kinetic_energy(q.row(i).transpose(), qd.row(i).transpose()) + potential_energy(q.row(i).transpose());
}

void PlanarChain::joint_positions_along(const Eigen::Ref<const RowMatrix>& q, Eigen::Ref<RowMatrix> positions) const {
  if (q.cols() != dofs_) throw_shape("q", "(T, " + std::to_string(dofs_) + ")", shape_str(q.rows(), q.cols()));
  check_samples("q", q, q.rows());
  check_shape("positions", positions.rows(), positions.cols(), q.rows(), 2 * (links_ + 1));
  auto ws = create_data();
  auto& w = cast(*ws);
  for (Index i = 0; i < q.rows(); ++i) {
    kinematics(q.row(i).transpose(), w);
    positions.row(i) = Eigen::Map<const Eigen::RowVectorXd>(w.p.data(), 2 * (links_ + 1));
  }
}

void PlanarChain::dynamics(const Eigen::Ref<const Eigen::VectorXd>& z, double, Eigen::Ref<Eigen::VectorXd> F) const {
  auto ws = create_data();
  auto& w = cast(*ws);
  F.head(dofs_) = z.tail(dofs_);
  forward_dynamics(z.head(dofs_), z.tail(dofs_), w.zeros, F.tail(dofs_), w);
}

void PlanarChain::jacobian(const Eigen::Ref<const Eigen::VectorXd>& z, double, Eigen::Ref<RowMatrix> J) const {
  auto ws = create_data();
  auto& w = cast(*ws);
  J.setZero();
  J.topRightCorner(dofs_, dofs_).setIdentity();
  Eigen::VectorXd zero = Eigen::VectorXd::Zero(dofs_);
  dynamics_jacobian(z.head(dofs_), z.tail(dofs_), zero, J.bottomRows(dofs_), w);
}

void PlanarChain::step(const Eigen::Ref<const Eigen::VectorXd>& z, double, double dt,
                       const Eigen::Ref<const Eigen::VectorXd>& w, Eigen::Ref<Eigen::VectorXd> z_next,
                       ModelData& data) const {
  auto& d = cast(data);
  auto f = [&](const Eigen::VectorXd& x, Eigen::VectorXd& k) {
    k.head(dofs_) = x.tail(dofs_);
    forward_dynamics(x.head(dofs_), x.tail(dofs_), w, k.tail(dofs_), d);
  };
  d.state = z;
  f(d.state, d.k1);
  d.tmp = d.state + 0.5 * dt * d.k1;
  f(d.tmp, d.k2);
  d.tmp = d.state + 0.5 * dt * d.k2;
  f(d.tmp, d.k3);
  d.tmp = d.state + dt * d.k3;
  f(d.tmp, d.k4);
  z_next = d.state + (dt / 6.0) * (d.k1 + 2.0 * d.k2 + 2.0 * d.k3 + d.k4);
  project_limits(z_next.head(dofs_), z_next.tail(dofs_));
}

void PlanarChain::linearize_along(SeqView z_ref, SeqView tau_ref, MatrixSeq& A, MatrixSeq& B, int threads) const {
  const Index n2 = 2 * dofs_;
  // the reference states are the rows [q_ref, qd_ref]: the messages say so
  if (z_ref.empty() || z_ref.rows != 1 || z_ref.cols != n2 || z_ref.T < 2)
    throw_shape("z_ref = [q_ref, qd_ref]", "(T+1, " + std::to_string(n2) + ") with T >= 1",
                z_ref.empty() ? "nothing" : shape_str(z_ref.T, z_ref.cols));
  const Index T = z_ref.T - 1;
  if (!tau_ref.empty() && (tau_ref.rows != 1 || tau_ref.cols != dofs_ || tau_ref.T != T))
    throw_shape("tau_ref", shape_str(T, dofs_), shape_str(tau_ref.T, tau_ref.cols));
  z_ref.check_finite("z_ref = [q_ref, qd_ref]");
  tau_ref.check_finite("tau_ref");
  A = MatrixSeq(T, n2, n2);
  B = MatrixSeq(T, n2, dofs_);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(dofs_);
  parallel_steps(T, threads, nullptr, T, [this] { return create_data(); }, [&](Index i, std::unique_ptr<ModelData>& ws) {
    auto& w = cast(*ws);
    ConstVecMap z(z_ref.data + i * n2, n2);
    auto Ai = A[i];
    Ai.setZero();
    Ai.topRightCorner(dofs_, dofs_).setIdentity();
    if (tau_ref.empty())
      dynamics_jacobian(z.head(dofs_), z.tail(dofs_), zero, Ai.bottomRows(dofs_), w);
    else
      dynamics_jacobian(z.head(dofs_), z.tail(dofs_), ConstVecMap(tau_ref.data + i * dofs_, dofs_), Ai.bottomRows(dofs_), w);
    auto Bi = B[i];
    Bi.setZero();
    Bi.bottomRows(dofs_) = w.llt.solve(Eigen::MatrixXd::Identity(dofs_, dofs_));
  });
}

template void PlanarChain::rnea<double>(const double*, const double*, const double*, double*) const;

}  // namespace directable
