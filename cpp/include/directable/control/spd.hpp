#pragma once
// PD and Stable PD (Tan, Liu & Turk 2011) servo laws on articulated bodies
// (the loop that tracks a whole reference with them is sim/servo_tracking).
//
//   PD  (eq. 1/4):  tau = tau_ff - Kp (q^n - qbar^n) - Kd (qd^n - qdbar^n)
//   SPD (eq. 5/11): tau = tau_ff - Kp (q^n + dt qd^n - qbar^{n+1})
//                                - Kd (qd^n + dt qdd^n - qdbar^{n+1}),
//                   qdd^n = (M + Kd dt)^-1 (-C - Kp (q^n + dt qd^n - qbar^{n+1})
//                                           - Kd (qd^n - qdbar^{n+1}) + tau_ff + tau_ext)
// Gains are diagonal (per coordinate), constant or per step; without a
// reference velocity qdbar = 0 (eq. 1 and 3). Torque limits clamp tau; a
// clamped SPD torque is then applied as a plain torque (qdd = M^-1 (tau - C + tau_ext)).
#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cstdint>
#include <memory>
#include <vector>

#include "directable/models/articulated.hpp"

namespace directable {

enum class Servo { none = 0, pd = 1, spd = 2 };

//! Buffers of the servo laws, allocated once per run (one per thread).
struct ServoWorkspace {
  explicit ServoWorkspace(const Articulated& model);
  std::unique_ptr<ModelData> model_ws;  //!< the model's own workspace
  Eigen::MatrixXd M, A;                 //!< n x n: M(q) and M + Kd dt
  Eigen::LLT<Eigen::MatrixXd> llt;
  Eigen::VectorXd C, e, rhs;            //!< n each: C(q, qd), position error, velocity error / right-hand side
  Eigen::VectorXd qdd, tau;             //!< n each: the results
};

//! Per-step inputs of a servo (pointers to n values; null means zero /
//! absent; tau_min/tau_max null means unlimited).
struct ServoInputs {
  const double* q_ref = nullptr;   //!< qbar^n (PD) or qbar^{n+1} (SPD)
  const double* qd_ref = nullptr;  //!< the same for the reference velocity, or null (zero)
  const double* kp = nullptr;
  const double* kd = nullptr;
  const double* tau_ff = nullptr;
  const double* tau_ext = nullptr;
  const double* tau_min = nullptr;
  const double* tau_max = nullptr;
};

//! Servo torque tau (n) and the resulting acceleration qdd (n) at (q, qd),
//! written to ws.tau and ws.qdd. No allocation.
void servo(const Articulated& model, Servo kind, const Eigen::Ref<const Eigen::VectorXd>& q,
           const Eigen::Ref<const Eigen::VectorXd>& qd, double dt, const ServoInputs& in, ServoWorkspace& ws);

//! SPD from given matrices (a model of another engine): M (n x n), C (n,)
//! (everything but the servo: bias, gravity, external forces with a minus
//! sign). Returns tau and qdd in the output arguments.
void spd_from_matrices(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& C,
                       const Eigen::Ref<const Eigen::VectorXd>& q, const Eigen::Ref<const Eigen::VectorXd>& qd,
                       const Eigen::Ref<const Eigen::VectorXd>& q_ref_next, const Eigen::Ref<const Eigen::VectorXd>& qd_ref_next,
                       const Eigen::Ref<const Eigen::VectorXd>& kp, const Eigen::Ref<const Eigen::VectorXd>& kd, double dt,
                       Eigen::Ref<Eigen::VectorXd> tau, Eigen::Ref<Eigen::VectorXd> qdd);

// ---------------------------------------------------------------------------
// SPD on a tree-structured mass matrix (any articulated body, in the
// coordinates of another engine). A joint-space inertia matrix of a
// kinematic tree has M_kj != 0 only when j is k or one of k's ancestors;
// with parent indices lambda(k) < k the factorisation H = L' D L keeps that
// sparsity (Featherstone 2005, "Efficient factorization of the joint-space
// inertia matrix"): O(n d^2) for a tree of depth d instead of n^3 / 3.
//
// The inputs are already on the manifold: p is the predicted position error
// q (+) dt qd (-) qbar_{n+1} as a tangent vector (for hinges it is
// q + dt qd - qbar), so the same law serves ball and free joints.
//   qdd = (M + dt D + dt Kd)^-1 (-C - Kp p - Kd (qd - qdbar_{n+1}))
//   tau = -Kp p - Kd (qd + dt qdd - qdbar_{n+1})
// D is the joint damping the integrator of the plant treats implicitly (or
// zero), C everything but the servo (bias minus passive forces, minus a
// known feed-forward).

//! The tree of an articulated body's coordinates: parent[k] in [-1, k)
//! (-1: a root). Checked once, here.
class CoordinateTree {
 public:
  explicit CoordinateTree(std::vector<int> parent);
  Index size() const { return static_cast<Index>(parent_.size()); }
  int parent(Index k) const { return parent_[static_cast<std::size_t>(k)]; }
  //! k's ancestors, nearest first, as [begin, end) of one flat array: the
  //! factorisation walks them as a list instead of chasing parent links.
  const int* ancestors_begin(Index k) const { return ancestors_.data() + start_[static_cast<std::size_t>(k)]; }
  const int* ancestors_end(Index k) const { return ancestors_.data() + start_[static_cast<std::size_t>(k) + 1]; }

 private:
  std::vector<int> parent_;     //!< n: the parent coordinate of each, -1 for a root
  std::vector<int> ancestors_;  //!< every coordinate's ancestors, nearest first, one after the other
  std::vector<std::size_t> start_;  //!< n + 1: where each coordinate's ancestors start in ancestors_
};

//! Buffers of tree_spd for one tree of n coordinates (one per thread).
struct TreeSPDWorkspace {
  explicit TreeSPDWorkspace(Index n);
  RowMatrix H;            //!< n x n: M on entry, then its L'DL factors (lower triangle)
  Eigen::VectorXd gain;   //!< n: Kd as applied (zero where a coordinate is not actuated)
  Eigen::VectorXd qdd;    //!< n: the predicted acceleration
};

//! Inputs of tree_spd: pointers to n values each; qd_ref, damping and kp/kd
//! scale (the actuated mask) may be null (zero / none / all actuated).
struct TreeSPDInputs {
  const double* C = nullptr;        //!< bias minus passive (minus feed-forward) forces
  const double* p = nullptr;        //!< predicted position error on the manifold
  const double* qd = nullptr;       //!< current velocity
  const double* qd_ref = nullptr;   //!< qdbar_{n+1}, or null (zero)
  const double* kp = nullptr;
  const double* kd = nullptr;
  const double* damping = nullptr;  //!< D, or null (none)
  const bool* actuated = nullptr;  //!< true where the coordinate gets a torque, or null (all)
  double dt = 0;
};

//! Eq. 11 with ws.H holding M (n x n, symmetric) on entry: writes tau (n)
//! and ws.qdd. No allocation; domain_error when M + dt (D + Kd) is not
//! positive definite (a pivot <= 0), naming the coordinate.
void tree_spd(const CoordinateTree& tree, const TreeSPDInputs& in, TreeSPDWorkspace& ws, double* tau);

//! In place: H (n x n, its lower triangle read) -> its L'DL factors by the
//! tree's sparsity. Returns the first coordinate whose pivot is <= 0, or -1.
Index tree_ldl(const CoordinateTree& tree, RowMatrix& H);
//! x <- H^-1 x from the factors of tree_ldl.
void tree_ldl_solve(const CoordinateTree& tree, const RowMatrix& H, double* x);

}  // namespace directable
