#pragma once
// Planar chain of rigid links joined by hinges, in generalized coordinates.
//
// Conventions (fixed): link i hangs from joint i; joint angles are relative to
// the parent link (the first one to the world's -y axis); q = 0 hangs straight
// down, gravity g points along -y. The root joint is pinned at the origin, or,
// with a free root, q = [x, y, theta_1 .. theta_L] adds the root position.
// Link i: mass m_i, length l_i, centre of mass at distance com_i from its
// joint along the link (l_i / 2 by default), inertia I_i about its centre of
// mass (m_i l_i^2 / 12 by default).
//
//   M(q) q'' + C(q, q') = tau,   C = Coriolis/centrifugal + gravity + damping q'
//
// M by a composite-rigid-body recursion (O(n^2)), C by recursive Newton-Euler
// (O(n)). Joint limits are hard: after each integration step an angle past
// its limit is put back on it and its velocity into the limit is removed
// (an inelastic stop); they are not part of M or C.
//
// As a Model: z = [q, q'], control w = tau (all n coordinates actuated),
// F(z) = [q'; -M^-1 C], its Jacobian is exact (forward-mode differentiation
// of the Newton-Euler recursion). The interface's B is constant, so
// control_matrix() is B at the rest state q = 0; step() uses the exact
// state-dependent map tau -> q'' (RK4, tau held), and linearize_along()
// gives A_i and B_i along a reference for the LQR.
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <memory>

#include "directable/models/articulated.hpp"
#include "directable/models/model.hpp"

namespace directable {

struct ChainParams {
  Eigen::VectorXd masses;   //!< L, > 0
  Eigen::VectorXd lengths;  //!< L, > 0
  Eigen::VectorXd inertias; //!< L (>= 0) or empty: m l^2 / 12
  Eigen::VectorXd coms;     //!< L or empty: l / 2
  Eigen::VectorXd damping;  //!< n (>= 0) or empty: 0  (viscous, per coordinate)
  Eigen::VectorXd q_min;    //!< n or empty: no lower limit (-inf allowed)
  Eigen::VectorXd q_max;    //!< n or empty: no upper limit (+inf allowed)
  double gravity = 9.81;
  bool free_root = false;
};

//! Workspace of the chain (kinematics, mass matrix, factorization).
struct ChainData : ModelData {
  Eigen::VectorXd phi, omega, alpha;     //!< L absolute angles, angular velocities, accelerations
  Eigen::Matrix2Xd p, c, d, ap, ac, f;   //!< joints (L+1), COMs, directions, accelerations, forces
  Eigen::VectorXd qdd, tau, C, rhs, zeros;  //!< n
  Eigen::VectorXd zq;                    //!< 2n contiguous [q, qd] for the recursion
  Eigen::VectorXd state;                 //!< 2n contiguous copy of the state a step starts from
  Eigen::MatrixXd M;                     //!< n x n
  Eigen::LLT<Eigen::MatrixXd> llt;
  Eigen::VectorXd subtree_mass;      //!< L+1: mass of links >= k (0 past the last)
  Eigen::Matrix2Xd subtree_moment;   //!< 2 x (L+1): their first moment about joint k
  Eigen::VectorXd subtree_inertia;   //!< L+1: their rotational inertia about joint k
};

class PlanarChain final : public Model, public Articulated {
 public:
  explicit PlanarChain(ChainParams params);

  // Articulated
  Index dofs() const override { return dofs_; }
  std::unique_ptr<ModelData> create_workspace() const override { return create_data(); }
  void mass_matrix(const Eigen::Ref<const Eigen::VectorXd>& q, Eigen::Ref<Eigen::MatrixXd> M,
                   ModelData& ws) const override;
  void bias_forces(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
                   Eigen::Ref<Eigen::VectorXd> C, ModelData& ws) const override;
  void project_limits(Eigen::Ref<Eigen::VectorXd> q, Eigen::Ref<Eigen::VectorXd> qd) const override;

  //! tau = M(q) qdd + C(q, qd) (recursive Newton-Euler).
  void inverse_dynamics(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
                        const Eigen::Ref<const Eigen::VectorXd>& qdd, Eigen::Ref<Eigen::VectorXd> tau,
                        ChainData& ws) const;
  //! qdd = M^-1 (tau - C).
  void forward_dynamics(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
                        const Eigen::Ref<const Eigen::VectorXd>& tau, Eigen::Ref<Eigen::VectorXd> qdd,
                        ChainData& ws) const;
  //! d qdd / d[q, qd] at (q, qd, tau): n x 2n, exact.
  void dynamics_jacobian(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
                         const Eigen::Ref<const Eigen::VectorXd>& tau, Eigen::Ref<RowMatrix> J, ChainData& ws) const;

  double kinetic_energy(const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd) const;
  double potential_energy(const Eigen::Ref<const Eigen::VectorXd>& q) const;
  //! Joint positions (the root first, then each link's far end): 2 x (L+1).
  Eigen::Matrix2Xd joint_positions(const Eigen::Ref<const Eigen::VectorXd>& q) const;

  // Along a trajectory: row i of each T x n argument is sample i; shapes and
  // finiteness are checked; one workspace serves every sample.
  //! tau_i = M(q_i) qdd_i + C(q_i, qd_i), written to tau (T x n).
  void inverse_dynamics_along(const Eigen::Ref<const RowMatrix>& q, const Eigen::Ref<const RowMatrix>& qd,
                              const Eigen::Ref<const RowMatrix>& qdd, Eigen::Ref<RowMatrix> tau) const;
  //! Kinetic plus potential energy of each sample, written to energy (T).
  void energies_along(const Eigen::Ref<const RowMatrix>& q, const Eigen::Ref<const RowMatrix>& qd,
                      Eigen::Ref<Eigen::VectorXd> energy) const;
  //! Joint positions of each sample, written to positions (T x 2(L+1), x0 y0 x1 y1 ...).
  void joint_positions_along(const Eigen::Ref<const RowMatrix>& q, Eigen::Ref<RowMatrix> positions) const;

  // Model (z = [q, qd], w = tau)
  Index state_dim() const override { return 2 * dofs_; }
  Index control_dim() const override { return dofs_; }
  void dynamics(const Eigen::Ref<const Eigen::VectorXd>& z, double t, Eigen::Ref<Eigen::VectorXd> F) const override;
  void jacobian(const Eigen::Ref<const Eigen::VectorXd>& z, double t, Eigen::Ref<RowMatrix> J) const override;
  const Eigen::MatrixXd& control_matrix() const override { return B_rest_; }
  std::unique_ptr<ModelData> create_data() const override;
  //! RK4 with tau = w held, exact M(q)^-1, then the joint limits.
  void step(const Eigen::Ref<const Eigen::VectorXd>& z, double t, double dt, const Eigen::Ref<const Eigen::VectorXd>& w,
            Eigen::Ref<Eigen::VectorXd> z_next, ModelData& data) const override;

  //! A_i = df/dz, B_i = df/dtau of f(z, tau) = [qd; M^-1 (tau - C)] at
  //! (z_ref[i], tau_ref[i]) for i < T; tau_ref may be empty (zero torque).
  void linearize_along(SeqView z_ref, SeqView tau_ref, MatrixSeq& A, MatrixSeq& B, int threads = 0) const;

  Index links() const { return links_; }
  Index root_dofs() const { return root_dofs_; }
  const ChainParams& params() const { return params_; }

 private:
  template <class S>
  void rnea(const S* q, const S* qd, const S* qdd, S* tau) const;
  void kinematics(const Eigen::Ref<const Eigen::VectorXd>& q, ChainData& ws) const;
  void check_samples(const char* name, const Eigen::Ref<const RowMatrix>& x, Index rows) const;
  ChainData& cast(ModelData& ws) const;

  ChainParams params_;       //!< validated, defaults filled in
  Index links_;              //!< L
  Index root_dofs_;          //!< 2 with a free root, else 0
  Index dofs_;               //!< n = L + root_dofs_
  Eigen::MatrixXd B_rest_;   //!< 2n x n, B at q = 0
};

}  // namespace directable
