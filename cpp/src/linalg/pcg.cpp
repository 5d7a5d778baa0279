#include "directable/linalg/pcg.hpp"

#include <Eigen/Dense>
#include <cmath>
#include <stdexcept>
#include <string>

namespace directable {

void PCGWorkspace::resize(Index n) {
  for (auto* v : {&residual, &preconditioned, &direction, &product}) v->setZero(n);
  block_inverses.assign(n / 3, Eigen::Matrix3d::Zero());
}

void block_jacobi_setup(const Eigen::SparseMatrix<double>& A, PCGWorkspace& ws) {
  const Index blocks = A.cols() / 3;
  if (Index(ws.block_inverses.size()) != blocks || A.cols() % 3 != 0)
    throw std::invalid_argument("block_jacobi_setup: workspace sized for " + std::to_string(3 * ws.block_inverses.size()) +
                                " unknowns, matrix has " + std::to_string(A.cols()));
  const int* outer = A.outerIndexPtr();
  const int* inner = A.innerIndexPtr();
  const double* val = A.valuePtr();
  for (Index b = 0; b < blocks; ++b) {
    Eigen::Matrix3d D = Eigen::Matrix3d::Zero();
    for (int j = 0; j < 3; ++j) {
      const Index c = 3 * b + j;
      for (int k = outer[c]; k < outer[c + 1]; ++k) {
        const Index r = inner[k];
        if (r >= 3 * b && r < 3 * b + 3) D(r - 3 * b, j) = val[k];
      }
    }
    Eigen::LLT<Eigen::Matrix3d> llt(D);
    if (llt.info() != Eigen::Success || !(D.diagonal().minCoeff() > 0))
      throw std::domain_error("the system matrix is not positive definite (diagonal block of node " + std::to_string(b) +
                              "): conjugate gradients need a definite matrix");
    ws.block_inverses[b] = llt.solve(Eigen::Matrix3d::Identity());
  }
}

namespace {
inline void apply_preconditioner(const PCGWorkspace& ws, const Eigen::VectorXd& r, Eigen::VectorXd& z) {
  const Index blocks = Index(ws.block_inverses.size());
  for (Index b = 0; b < blocks; ++b) z.segment<3>(3 * b).noalias() = ws.block_inverses[b] * r.segment<3>(3 * b);
}
}  // namespace

PCGResult pcg_block_jacobi(const Eigen::SparseMatrix<double>& A, const Eigen::Ref<const Eigen::VectorXd>& b,
                           Eigen::Ref<Eigen::VectorXd> x, double target, int max_iterations, PCGWorkspace& ws) {
  PCGResult out;
  ws.residual.noalias() = A * x;
  ws.residual = b - ws.residual;
  double rnorm = ws.residual.norm();
  out.residual_norm = rnorm;
  if (rnorm <= target) {
    out.converged = true;
    return out;
  }
  apply_preconditioner(ws, ws.residual, ws.preconditioned);
  ws.direction = ws.preconditioned;
  double rz = ws.residual.dot(ws.preconditioned);
  for (int it = 1; it <= max_iterations; ++it) {
    ws.product.noalias() = A * ws.direction;
    const double pAp = ws.direction.dot(ws.product);
    if (!(pAp > 0)) {  // not definite along p (or NaN): stop, the caller reports it
      out.iterations = it;
      return out;
    }
    const double step = rz / pAp;
    x.noalias() += step * ws.direction;
    ws.residual.noalias() -= step * ws.product;
    rnorm = ws.residual.norm();
    out.iterations = it;
    out.residual_norm = rnorm;
    if (rnorm <= target) {
      out.converged = true;
      return out;
    }
    apply_preconditioner(ws, ws.residual, ws.preconditioned);
    const double rz_next = ws.residual.dot(ws.preconditioned);
    ws.direction = ws.preconditioned + (rz_next / rz) * ws.direction;
    rz = rz_next;
  }
  return out;
}

}  // namespace directable
