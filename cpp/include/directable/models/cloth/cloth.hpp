#pragma once
// Mass-spring cloth (Jeon-Choi, sec. 3.1): an nx x ny grid of point masses
// joined by linear springs with dampers along them, gravity, pinned nodes
// and penalty colliders. Node (i, j) has index j*nx + i and starts at
// origin + (i*spacing, j*spacing, 0); flat vectors are q = [x0, y0, z0, ...].
//
// The model is immutable once built (its colliders are constructor
// arguments), so one const ClothModel may be shared by threads; every
// per-run buffer lives in a ClothData.
#include <Eigen/Core>
#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCore>
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "directable/core/progress.hpp"
#include "directable/core/sequence.hpp"
#include "directable/linalg/block_ldlt.hpp"
#include "directable/models/point_mass_system.hpp"

namespace directable {

struct ClothParams {
  Index nx = 2, ny = 2;
  double spacing = 0.1;      //!< rest distance of neighbours (m), > 0
  double mass = 0.01;        //!< per node (kg), > 0
  double k_struct = 100.0;   //!< structural stiffness (N/m), > 0
  double k_shear = 0.0;      //!< shear stiffness (N/m), >= 0 (0: no shear springs)
  double k_bend = 0.0;       //!< primary bending (N/m), >= 0
  double k_bend2 = 0.0;      //!< secondary bending (N/m), >= 0
  double damping = 0.0;      //!< damper along every spring present (N s/m), >= 0
  Eigen::Vector3d gravity{0.0, 0.0, -9.81};  //!< m/s^2
  Eigen::Vector3d origin{0.0, 0.0, 0.0};     //!< position of node 0 (m)
  std::vector<Index> pinned;                 //!< node indices
};

//! A penalty collider, part of F^A. With depth phi < 0 inside the collider
//! the normal force is -stiffness phi n, and the regularised Coulomb
//! friction is -friction |f_n| v_t / sqrt(|v_t|^2 + eps^2), eps = 1e-3 m/s.
//! Being a smooth function of (x, v) it keeps the inverse dynamics exact.
struct Collider {
  enum class Kind { sphere, plane };
  Kind kind = Kind::plane;
  Eigen::Vector3d point{0.0, 0.0, 0.0};   //!< sphere centre / a point of the plane (m)
  Eigen::Vector3d normal{0.0, 0.0, 1.0};  //!< plane normal (unit, pointing out of the solid)
  double radius = 0.0;                    //!< sphere radius (m)
  double stiffness = 0.0;                 //!< N/m, > 0
  double friction = 0.0;                  //!< Coulomb coefficient, >= 0
  static constexpr double slip_velocity = 1e-3;  //!< eps of the friction (m/s)
};

//! Springs joining node (i, j) to node (i + di, j + dj) for every node where
//! both exist: one "family" per offset, all with the same rest length and
//! stiffness. Their start nodes a and end nodes a + dj*nx + di are two
//! contiguous index ranges, so the force loop runs over whole families on
//! structure-of-arrays positions (vectorised).
struct SpringFamily {
  int di = 0, dj = 0;
  double rest = 0.0;       //!< m
  double stiffness = 0.0;  //!< N/m
  Index i_begin = 0, i_end = 0, j_end = 0;  //!< valid nodes: i in [i_begin, i_end), j in [0, j_end)
  Index count() const { return (i_end - i_begin) * j_end; }
};

//! symplectic: eq. 4-5. implicit: backward Euler, one Newton step, solved
//! by a direct sparse LDL' (linalg/block_ldlt: node-level AMD ordering and
//! supernodes analysed once per model, multifrontal numeric factorisation
//! with dense kernels). implicit_cg: the same step solved by Jacobi-
//! preconditioned conjugate gradients (Baraff-Witkin's solver), to a
//! relative residual of 1e-12.
enum class ClothIntegrator { symplectic, implicit, implicit_cg };

struct ClothData : PointMassData {
  // positions and velocities in structure-of-arrays form (V each)
  Eigen::VectorXd X, Y, Z, VX, VY, VZ;
  Eigen::VectorXd FX, FY, FZ;            //!< V each, force accumulators
  Eigen::VectorXd DX, DY, DZ, L;         //!< V each, per-family spring vectors (then the springs' forces on their start nodes), inverse lengths
  Eigen::VectorXd F;                     //!< 3V
  Eigen::VectorXd dt_over_m;             //!< V, dt / m per node for the dt of dt_over_m_for (symplectic_step)
  double dt_over_m_for = 0.0;            //!< s, the dt that dt_over_m holds (0: none yet)
  Eigen::VectorXd speed2;                //!< V, each node's |v+|^2 after a symplectic_step (m^2/s^2)
  Eigen::VectorXd Kx, Kv;                //!< nnz each, values of dF/dx, dF/dv on the model's pattern
  // The implicit step's per-spring and per-node terms (structure of arrays):
  Eigen::MatrixXd Bs;                    //!< V x 6, one family's blocks B = dt dF/dv + dt^2 sym(dF/dx) (xx yy zz xy xz yz), per spring slot
  Eigen::MatrixXd Ks;                    //!< V x 3, one family's dt^2 dF_a/dx_b (v_b - v_a), per spring slot
  Eigen::MatrixXd Dg;                    //!< V x 6, per node: the sum of its springs' B (the diagonal block less M)
  Eigen::MatrixXd Kn;                    //!< V x 3, per node: dt^2 (dF/dx v), the springs' part
  Eigen::SparseMatrix<double> A;         //!< 3V x 3V, backward-Euler system matrix (pattern of the model)
  //! Symbolic LDL' analysis of A (implicit): ordering, supernodes, maps. Made
  //! once per data rather than per model, so that building a large cloth
  //! for explicit runs costs nothing of it (a 10^6-node analysis takes seconds).
  std::shared_ptr<const BlockLDLT> analysis;
  BlockLDLTData factor;                  //!< numeric LDL' of A (implicit): panels and fronts sized once
  //! implicit: where each spring's off-diagonal block (spring order of the
  //! families) and each node's diagonal block (V) lie in factor's panels, so
  //! that the step assembles A there directly.
  std::vector<BlockLDLTSlot> spring_slots, node_slots;
  Eigen::ConjugateGradient<Eigen::SparseMatrix<double>, Eigen::Lower | Eigen::Upper> cg;
  Eigen::VectorXd rhs, dv;               //!< 3V each
};

class ClothModel final : public PointMassSystem {
 public:
  //! Validates everything (std::invalid_argument / std::domain_error naming the argument).
  ClothModel(const ClothParams& params, std::vector<Collider> colliders = {});

  Index node_count() const override { return V_; }
  const Eigen::VectorXd& node_masses() const override { return masses_; }
  const std::vector<std::uint8_t>& pinned() const override { return pinned_; }
  std::unique_ptr<PointMassData> create_point_mass_data() const override { return create_data(); }
  void applied_forces(const Eigen::Ref<const Eigen::VectorXd>& x, const Eigen::Ref<const Eigen::VectorXd>& v,
                      Eigen::Ref<Eigen::VectorXd> F, PointMassData& data) const override;

  //! Buffers for `method`: the implicit steps get the system matrix, and
  //! ClothIntegrator::implicit the symbolic analysis of its LDL' (once per
  //! data: a rollout analyses once for all its steps) and the factor's buffers.
  std::unique_ptr<ClothData> create_data(ClothIntegrator method = ClothIntegrator::symplectic) const;
  const ClothParams& params() const { return params_; }
  const std::vector<Collider>& colliders() const { return colliders_; }
  const std::vector<SpringFamily>& families() const { return families_; }
  Index spring_count() const;
  //! 3V, the rest positions of the grid.
  const Eigen::VectorXd& positions0() const { return q0_; }

  //! Spring potential + gravity potential (relative to z = 0 along gravity) +
  //! collider penalty potential (J).
  double energy(const Eigen::Ref<const Eigen::VectorXd>& x) const;

  //! F^A and its Jacobians dF/dx, dF/dv as values on the CSR pattern
  //! (row_offsets(), columns()). Throws for a degenerate spring.
  void forces_and_jacobians(const Eigen::Ref<const Eigen::VectorXd>& x, const Eigen::Ref<const Eigen::VectorXd>& v,
                            ClothData& data) const;
  const std::vector<int>& row_offsets() const { return row_offsets_; }  //!< 3V + 1
  const std::vector<int>& columns() const { return columns_; }          //!< nnz

  //! One step in place. symplectic: eq. 4-5. implicit: backward Euler with one
  //! Newton step (Baraff-Witkin): (M - dt dF/dv - dt^2 sym(dF/dx)) dv =
  //! dt (F + u + dt dF/dx v). The matrix uses the symmetric part of dF/dx
  //! (exact for undamped springs and frictionless colliders) so that a
  //! sparse LDL' factorisation with a pattern analysed once applies.
  //! Throws std::domain_error when a pivot of the factorisation vanishes.
  //! u: 3V or empty. Returns the largest node |v+|^2 (see symplectic_update).
  double step(Eigen::Ref<Eigen::VectorXd> x, Eigen::Ref<Eigen::VectorXd> v, double dt, const double* u,
              ClothIntegrator method, ClothData& data) const;

  //! The symplectic step (eq. 4-5) in place on the state that data holds
  //! in structure-of-arrays form (load_state, store_state): a run of steps
  //! converts its state once, not twice per step. u: 3V or null. Returns
  //! the largest node |v+|^2 (NaN when a velocity is NaN).
  double symplectic_step(double dt, const double* u, ClothData& data) const;
  //! x, v (3V each, flat) into data's structure-of-arrays state.
  void load_state(const Eigen::Ref<const Eigen::VectorXd>& x, const Eigen::Ref<const Eigen::VectorXd>& v,
                  ClothData& data) const;
  //! data's structure-of-arrays state into flat x, v (3V each).
  void store_state(const ClothData& data, double* x, double* v) const;

 private:
  //! F^A (gravity, springs, dampers, colliders) of data's state into data.FX/FY/FZ.
  void soa_applied_forces(ClothData& data) const;
  void spring_forces(ClothData& data) const;
  void collider_forces(ClothData& data) const;
  [[noreturn]] void throw_degenerate(const SpringFamily& f, const ClothData& data) const;
  void build_pattern();
  int block_slot(Index row_node, Index col_node) const;
  //! Adds B to (accumulate) or writes B into the 3x3 block of node row r that starts at CSR entry `entry`.
  void add_block(double* values, Index r, int entry, const Eigen::Matrix3d& B, bool accumulate = true) const;
  //! Writes the row-major 3x3 block B (9) of node row r at CSR entry `entry`.
  void write_block(double* values, Index r, int entry, const double* B) const;
  //! The backward-Euler system of step(): the values of A, and data.rhs (u: 3V or null), in one pass over the
  //! springs; A goes into data.A (CSR), or with into_factor straight into the panels of data.factor.
  void implicit_system(const Eigen::Ref<const Eigen::VectorXd>& x, const Eigen::Ref<const Eigen::VectorXd>& v, double dt,
                       const double* u, ClothData& data, bool into_factor) const;

  ClothParams params_;
  std::vector<Collider> colliders_;
  Index V_;
  Eigen::VectorXd masses_;               //!< V
  std::vector<std::uint8_t> pinned_;     //!< V
  Eigen::VectorXd keep_;                 //!< V, 1 for a free node, 0 for a pinned one (symplectic_update_soa)
  Eigen::VectorXd q0_;                   //!< 3V
  std::vector<SpringFamily> families_;
  std::vector<Index> family_first_;           //!< per family: first start node a_lo
  std::vector<Eigen::ArrayXd> family_weight_;  //!< per family: 1 where node a_lo + k starts a spring, else 0
  // CSR pattern of the 3V x 3V Jacobians: 3x3 blocks for every node pair
  // joined by a spring, and the diagonal blocks (symmetric pattern).
  std::vector<int> row_offsets_;         //!< 3V + 1
  std::vector<int> columns_;             //!< nnz
  std::vector<int> block_cols_;          //!< per node: sorted neighbour nodes (offsets in block_start_)
  std::vector<int> block_start_;         //!< V + 1
  std::vector<int> spring_entry_;        //!< 4 per spring (family order): first entry of blocks (a,a), (a,b), (b,a), (b,b)
  std::vector<int> diagonal_entry_;      //!< V: first entry of each node's diagonal block
};

//! The fastest any node of an uncontrolled-or-controlled run from (x0, v0)
//! can plausibly be: by energy and momentum, a node's speed is at most its
//! initial speed, plus what gravity adds (|g| t), what the controls add
//! (the integral of max_a |u_a| / m_a), and what the initial elastic and
//! collider energy can give the lightest node (sqrt(2 E / m_min)). The
//! bound is twice that, never below kMinDivergenceSpeed, and what gravity
//! and the controls add counts up to kDivergenceSpeed only (a huge dt
//! would otherwise excuse any speed). Damping and
//! implicit integration only remove energy, so a faster node means the
//! run has diverged, e.g. a node shot off a penalty collider that is too
//! stiff for dt, which never reaches an absolute speed limit.
class ClothSpeedBound {
 public:
  static constexpr double kMinDivergenceSpeed = 100.0;  //!< m/s
  ClothSpeedBound(const ClothModel& model, const Eigen::Ref<const Eigen::VectorXd>& x0,
                  const Eigen::Ref<const Eigen::VectorXd>& v0);
  //! Accounts for one step of dt with controls u (3V, or null).
  void add_step(double dt, const double* u);
  double bound() const;  //!< m/s

 private:
  const ClothModel& model_;
  double initial_ = 0.0;  //!< m/s, initial speed + what the initial energy allows
  double gained_ = 0.0;   //!< m/s, what gravity and the controls added since
};

//! One step of a fresh run from (x, v) in place, with the checks of a
//! rollout's step 0: shapes, finite x, v and u (3V or null), dt > 0, pinned
//! velocities zeroed, and a diverging step reported ("step diverged at
//! step 0 ..."), never returned as NaN. Each call analyses the implicit
//! system anew; runs of many steps belong to cloth_rollout.
void cloth_step(const ClothModel& model, Eigen::Ref<Eigen::VectorXd> x, Eigen::Ref<Eigen::VectorXd> v, double dt,
                const double* u, ClothIntegrator method);

//! A cloth run: positions and velocities (T+1) x 3V each.
using ClothRollout = PointMassRollout;

//! steps steps from (x0, v0), controls u ((T, 3V) or empty), in one call.
//! Throws std::domain_error with the step index when the run diverges.
ClothRollout cloth_rollout(const ClothModel& model, const Eigen::Ref<const Eigen::VectorXd>& x0,
                           const Eigen::Ref<const Eigen::VectorXd>& v0, double dt, Index steps, SeqView u,
                           ClothIntegrator method, const ProgressFn* progress = nullptr);

}  // namespace directable
