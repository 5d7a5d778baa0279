#pragma once
// Full (unreduced) simulation: linear tetrahedral St. Venant-Kirchhoff FEM
// with lumped mass, tangential Rayleigh damping D(u) = alpha M + beta K(u),
// fixed vertices and implicit Newmark time stepping (Newton iterations on a
// sparse LDL' factorization whose symbolic analysis is reused, or on
// block-Jacobi preconditioned conjugate gradients).
//
// Conventions: displacement u (3V) ordered [x0, y0, z0, x1, ...];
// internal_forces(u) is the gradient of the elastic energy, so the
// equations of motion read  M u'' + D u' + f_int(u) = f_ext.
#include <Eigen/Core>
#include <Eigen/Sparse>
#include <Eigen/SparseCholesky>
#include <memory>
#include <vector>

#include "directable/core/errors.hpp"
#include "directable/core/sequence.hpp"
#include "directable/core/progress.hpp"
#include "directable/linalg/pcg.hpp"
#include <string>

namespace directable {

using IndexMatrix = Eigen::Matrix<Eigen::Index, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using SparseMatrix = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;

//! Tetrahedral mesh: vertices (V x 3), tets (E x 4). Rejects indices out
//! of range, unreferenced vertices, degenerate and inverted tets.
class TetMesh {
 public:
  TetMesh(const Eigen::Ref<const RowMatrix>& vertices, const Eigen::Ref<const IndexMatrix>& tets);
  Index num_vertices() const { return vertices_.rows(); }
  Index num_tets() const { return tets_.rows(); }
  const RowMatrix& vertices() const { return vertices_; }
  const IndexMatrix& tets() const { return tets_; }
  //! Rest volumes (E).
  const Eigen::VectorXd& volumes() const { return volumes_; }
  //! Shape-function gradients of tet e: 4 x 3, row a = grad N_a.
  Eigen::Matrix<double, 4, 3> gradients(Index e) const { return gradients_[e]; }

 private:
  RowMatrix vertices_;                                  //!< V x 3 rest positions
  IndexMatrix tets_;                                    //!< E x 4 vertex indices
  Eigen::VectorXd volumes_;                             //!< E rest volumes
  std::vector<Eigen::Matrix<double, 4, 3>> gradients_;  //!< E of 4 x 3: shape-function gradients
};

//! St. Venant-Kirchhoff material on a TetMesh: energy density
//! mu E:E + lambda/2 (tr E)^2, Green strain E = (F'F - I)/2.
class StVKFEM {
 public:
  StVKFEM(const TetMesh& mesh, double young, double poisson, double density, const std::vector<Index>& fixed,
          double alpha = 0.0, double beta = 0.0);

  Index dofs() const { return 3 * mesh_.num_vertices(); }
  const TetMesh& mesh() const { return mesh_; }
  double mu() const { return mu_; }
  double lambda() const { return lambda_; }
  double alpha() const { return alpha_; }
  double beta() const { return beta_; }
  const std::vector<Index>& fixed() const { return fixed_; }
  //! true for every constrained dof (3V).
  const std::vector<char>& fixed_mask() const { return fixed_mask_; }
  //! Lumped mass diagonal (3V).
  const Eigen::VectorXd& mass() const { return mass_; }

  double energy(const Eigen::Ref<const Eigen::VectorXd>& u) const;
  void internal_forces(const Eigen::Ref<const Eigen::VectorXd>& u, Eigen::Ref<Eigen::VectorXd> f) const;
  //! Tangent stiffness dF/du (3V x 3V) written into K, whose pattern must be
  //! that of pattern() (values overwritten).
  void tangent_stiffness(const Eigen::Ref<const Eigen::VectorXd>& u, SparseMatrix& K) const;
  //! The stiffness sparsity pattern (all values zero).
  SparseMatrix pattern() const;

 private:
  TetMesh mesh_;
  double mu_, lambda_;         //!< Lame parameters
  double density_;             //!< mass per volume
  double alpha_, beta_;        //!< Rayleigh damping D = alpha M + beta K
  std::vector<Index> fixed_;   //!< fixed vertex indices
  std::vector<char> fixed_mask_;    //!< 3V: 1 on every constrained dof
  Eigen::VectorXd mass_;            //!< 3V lumped mass diagonal
  std::vector<int> element_slots_;  //!< E x 144: value index of each element entry in the pattern
  SparseMatrix pattern_;            //!< 3V x 3V stiffness sparsity, values zero
};

//! Every state of a Newmark run, (T+1) x 3V each, the initial state first.
//! acceleration's first row is NaN when the initial acceleration was left to
//! be made consistent by the first step.
struct NewmarkRun {
  RowMatrix displacement, velocity, acceleration;
};

//! How each Newton iteration solves its linear system.
//! direct: sparse LDL' (Eigen SimplicialLDLT), refactorised every iteration,
//! symbolic analysis once. cg: conjugate gradients preconditioned with the
//! inverses of the 3x3 diagonal blocks (the system matrix is symmetric and,
//! at the step sizes used, dominated by the mass term M / (beta dt^2)).
enum class LinearSolver { direct, cg };

//! "direct" or "cg"; anything else throws std::invalid_argument naming linear_solver.
LinearSolver linear_solver_from_string(const std::string& name);

//! Settings of the linear solve inside Newton. cg stops at
//! ||r_cg|| <= max(cg_tolerance ||r||, 0.1 tolerance ||r_0||), r the Newton
//! residual of the iteration, r_0 the step's first one, tolerance Newton's:
//! solving further than Newton's own stop test needs is wasted work.
struct LinearSolverSettings {
  LinearSolver method = LinearSolver::direct;
  double cg_tolerance = 1e-4;    //!< relative to the Newton residual, in (0, 1)
  int cg_max_iterations = 1000;  //!< per linear solve, >= 1
  //! Throws std::domain_error / std::invalid_argument naming the field.
  void validate() const;
};

//! Implicit Newmark (beta = 1/4, gamma = 1/2) with Newton iterations on the
//! free dofs. The material model is shared read-only; the state (u, v, a),
//! the Newton buffers and the factorization belong to this object (one
//! simulator per thread).
class NewmarkFEM {
 public:
  NewmarkFEM(std::shared_ptr<const StVKFEM> model, double dt, int max_iterations = 20, double tolerance = 1e-8,
             const LinearSolverSettings& linear_solver = LinearSolverSettings());
  //! Sets u, v (3V each) and the acceleration a (3V), or, when a is empty,
  //! the consistent acceleration M a = f_ext - D v - f(u) of the next step.
  void set_state(const Eigen::Ref<const Eigen::VectorXd>& u, const Eigen::Ref<const Eigen::VectorXd>& v,
                 const Eigen::Ref<const Eigen::VectorXd>& a = Eigen::VectorXd());
  //! One step with external force f_ext (3V) held; returns Newton iterations.
  //! Throws std::runtime_error when Newton does not converge.
  int step(const Eigen::Ref<const Eigen::VectorXd>& f_ext);
  //! Runs forces.rows() steps (forces: T x 3V) from the current state and
  //! returns every state; the simulator ends in the last one. A Newton
  //! failure or a non-finite residual is reported with its step.
  NewmarkRun run(const Eigen::Ref<const RowMatrix>& forces, const ProgressFn* progress = nullptr);
  //! Static equilibrium f_int(u) = f_ext by Newton from u = 0 (always the
  //! direct solver: the stiffness alone is far from mass-dominated).
  Eigen::VectorXd static_solve(const Eigen::Ref<const Eigen::VectorXd>& f_ext, int max_iterations = 50);
  const Eigen::VectorXd& u() const { return u_; }
  const Eigen::VectorXd& v() const { return v_; }
  const Eigen::VectorXd& a() const { return a_; }
  double dt() const { return dt_; }
  const LinearSolverSettings& linear_solver() const { return linear_; }
  //! Conjugate-gradient iterations of the last step (0 with the direct solver).
  int last_cg_iterations() const { return last_cg_iterations_; }
  std::shared_ptr<const StVKFEM> model_ptr() const { return model_; }

 private:
  int newton_step(const Eigen::Ref<const Eigen::VectorXd>& f_ext);
  void make_acceleration_consistent(const Eigen::Ref<const Eigen::VectorXd>& f_ext);
  void constrain(SparseMatrix& A) const;
  void factor(const SparseMatrix& A);
  //! correction_ = system_^-1 residual_ with the chosen solver; r0: the step's first Newton residual norm.
  void solve_correction(double residual_norm, double r0);
  std::shared_ptr<const StVKFEM> model_;
  double dt_;
  int max_iterations_;
  double tolerance_;
  Eigen::VectorXd u_, v_, a_;                 //!< 3V each: the current state
  Eigen::VectorXd u_prev_, v_prev_, a_prev_;  //!< 3V each: the state at the start of the step (a_prev_ NaN: make a consistent)
  Eigen::VectorXd internal_, residual_, correction_;  //!< 3V each: f_int(u), Newton residual and update
  SparseMatrix stiffness_, system_;           //!< 3V x 3V, K(u) and the Newton matrix, the pattern's sparsity
  std::vector<int> diagonal_slots_;           //!< value index of each diagonal entry of the pattern
  LinearSolverSettings linear_;
  Eigen::SimplicialLDLT<SparseMatrix> ldlt_;
  bool analyzed_ = false;
  PCGWorkspace pcg_;                          //!< 3V-sized CG buffers (cg only)
  int last_cg_iterations_ = 0;
};

}  // namespace directable
