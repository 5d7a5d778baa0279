#pragma once
// Preconditioned conjugate gradients with a 3x3 block-Jacobi preconditioner
// for symmetric positive definite sparse matrices of 3-vector unknowns
// (FEM, cloth: dof 3i + c is component c of node i), both triangles stored.
// All buffers live in a workspace sized once: a solve does not allocate.
#include <Eigen/Core>
#include <Eigen/Sparse>
#include <vector>

#include "directable/core/types.hpp"

namespace directable {

//! Buffers of block-Jacobi PCG on an n x n system (n a multiple of 3).
struct PCGWorkspace {
  Eigen::VectorXd residual;        //!< n: b - A x
  Eigen::VectorXd preconditioned;  //!< n: P^-1 residual
  Eigen::VectorXd direction;       //!< n: search direction p
  Eigen::VectorXd product;         //!< n: A p
  std::vector<Eigen::Matrix3d> block_inverses;  //!< n/3 of 3 x 3: inverses of A's diagonal blocks
  //! Sizes every buffer for n unknowns (n a multiple of 3).
  void resize(Index n);
};

struct PCGResult {
  int iterations = 0;              //!< CG iterations done
  double residual_norm = 0.0;      //!< ||b - A x|| at return (recurrence)
  bool converged = false;          //!< residual_norm <= target
};

//! Inverts A's 3x3 diagonal blocks into ws.block_inverses. A: n x n
//! (column-major, both triangles). Throws std::domain_error naming the
//! block when one is not positive definite.
void block_jacobi_setup(const Eigen::SparseMatrix<double>& A, PCGWorkspace& ws);

//! Solves A x = b by CG preconditioned with ws.block_inverses (set by
//! block_jacobi_setup), starting from x's value, until ||b - A x|| <= target
//! (absolute, in b's units) or max_iterations iterations. A: n x n, b, x: n.
PCGResult pcg_block_jacobi(const Eigen::SparseMatrix<double>& A, const Eigen::Ref<const Eigen::VectorXd>& b,
                           Eigen::Ref<Eigen::VectorXd> x, double target, int max_iterations, PCGWorkspace& ws);

}  // namespace directable
