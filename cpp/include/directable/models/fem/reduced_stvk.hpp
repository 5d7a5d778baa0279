#pragma once
// Reduced St. Venant-Kirchhoff model (Barbic & James 2005): with u = U p the
// internal forces U' f(U p) are cubic polynomials in p,
//   R(p) = P p + 3 Z(p) p + 2 Y(p) p,   K(p) = dR/dp = P + 6 Z(p) + 6 Y(p),
// Z(p)_{mn} = sum_k cubic_{mnk} p_k,  Y(p)_{mn} = sum_{kl} quartic_{mnkl} p_k p_l,
// with fully symmetric coefficient tensors S and T (reduced elastic energy
// W(p) = p'Pp/2 + S[p,p,p] + T[p,p,p,p]/2) precomputed element by element
// (two matrix products per chunk of elements, then a symmetrization over
// index permutations) and stored over index pairs m <= n: S as
// (r(r+1)/2) x r, T as (r(r+1)/2) x (r(r+1)/2). Evaluation costs O(r^4)
// and never touches the mesh.
//
// As a Model (Barbic & Popovic 2008, appendix B): z = [p, p'],
//   F(z) = [p', Mr^-1 (-D(p) p' - R(p))],  D(p) = alpha Mr + beta K(p),
//   B = [0; Mr^-1]  (= [0; I] for a mass-orthonormal basis),
// with the exact Jacobian, optionally omitting the damping-Hessian term.
// step() is an implicit Newmark step (Newton, dense LDL').
#include <Eigen/Cholesky>
#include <Eigen/Core>

#include "directable/models/fem/fem.hpp"
#include "directable/models/model.hpp"
#include "directable/core/progress.hpp"

namespace directable {

//! Buffers of one reduced Newmark step (one per run or thread).
struct ReducedStVKData : ModelData {
  Eigen::VectorXd position, velocity, acceleration;                 //!< r each: the Newton iterate
  Eigen::VectorXd position_prev, velocity_prev, acceleration_prev;  //!< r each: the step's start
  Eigen::VectorXd forces, residual, correction, mass_term;          //!< r each: R(p), Newton residual and update, Mr (a + alpha v)
  Eigen::VectorXd pairs;                                            //!< 3 r(r+1)/2: scratch of evaluate()
  Eigen::MatrixXd stiffness, stiffness_change, system;              //!< r x r: K(p), dK/dp : v, the Newton matrix
  Eigen::LDLT<Eigen::MatrixXd> ldlt;
};

class ReducedStVK final : public Model {
 public:
  //! U: 3V x r basis. alpha/beta < 0 take the full model's damping.
  ReducedStVK(const StVKFEM& full, const Eigen::Ref<const Eigen::MatrixXd>& U, double alpha = -1, double beta = -1,
              bool damping_hessian = true, const ProgressFn* progress = nullptr);

  Index r() const { return r_; }
  Index state_dim() const override { return 2 * r_; }
  Index control_dim() const override { return r_; }
  void dynamics(const Eigen::Ref<const Eigen::VectorXd>& z, double t, Eigen::Ref<Eigen::VectorXd> F) const override;
  void jacobian(const Eigen::Ref<const Eigen::VectorXd>& z, double t, Eigen::Ref<RowMatrix> J) const override;
  const Eigen::MatrixXd& control_matrix() const override { return control_; }
  std::unique_ptr<ModelData> create_data() const override;
  void step(const Eigen::Ref<const Eigen::VectorXd>& z, double t, double dt, const Eigen::Ref<const Eigen::VectorXd>& w,
            Eigen::Ref<Eigen::VectorXd> z_next, ModelData& data) const override;

  //! R(p) (r) and, if K is non-null, K(p) (r x r). `pairs` is scratch (r(r+1)/2).
  void evaluate(const Eigen::Ref<const Eigen::VectorXd>& p, Eigen::Ref<Eigen::VectorXd> R, Eigen::MatrixXd* K,
                Eigen::VectorXd& pairs) const;
  //! (dK/dp : v) = d/dp (K(p) v), r x r.
  void stiffness_derivative(const Eigen::Ref<const Eigen::VectorXd>& p, const Eigen::Ref<const Eigen::VectorXd>& v,
                            Eigen::MatrixXd& H, Eigen::VectorXd& pairs) const;
  double energy(const Eigen::Ref<const Eigen::VectorXd>& p) const;

  const Eigen::MatrixXd& reduced_mass() const { return reduced_mass_; }
  double alpha() const { return alpha_; }
  double beta() const { return beta_; }
  bool damping_hessian() const { return damping_hessian_; }
  void set_damping_hessian(bool on) { damping_hessian_ = on; }
  void set_newton(int max_iterations, double tolerance);
  //! Coefficients: P (r x r), cubic (npairs x r), quartic (npairs x npairs).
  const Eigen::MatrixXd& linear_coefficients() const { return linear_; }
  const RowMatrix& cubic_coefficients() const { return cubic_; }
  const RowMatrix& quartic_coefficients() const { return quartic_; }

 private:
  Index pair(Index m, Index n) const { return m <= n ? pair_index_(m, n) : pair_index_(n, m); }
  void unpack(const Eigen::VectorXd& y, double scale, Eigen::MatrixXd& out) const;
  void index_pairs();
  //! The element sums behind the coefficients: linear (r x r), cubic
  //! (r x npairs) and quartic (npairs x npairs), before the symmetrization.
  void accumulate_elements(const StVKFEM& full, const Eigen::Ref<const Eigen::MatrixXd>& U, Eigen::MatrixXd& linear,
                           Eigen::MatrixXd& cubic, Eigen::MatrixXd& quartic, const ProgressFn* progress) const;
  void symmetrize(const Eigen::MatrixXd& linear, const Eigen::MatrixXd& cubic, const Eigen::MatrixXd& quartic);

  Index r_, n_pairs_;  //!< r, r(r+1)/2
  double alpha_, beta_;
  bool damping_hessian_;
  int max_iterations_ = 20;
  double tolerance_ = 1e-10;
  Eigen::MatrixXi pair_index_;                 //!< r x r: index of the pair (m, n), m <= n (-1 below the diagonal)
  Eigen::VectorXi pair_first_, pair_second_;   //!< npairs: m and n of each pair
  Eigen::MatrixXd linear_;                     //!< r x r, P: the linear stiffness U'K(0)U
  Eigen::MatrixXd reduced_mass_;               //!< r x r, Mr = U'MU
  Eigen::MatrixXd reduced_mass_inverse_;       //!< r x r, Mr^-1
  Eigen::MatrixXd control_;                    //!< 2r x r, B = [0; Mr^-1]
  RowMatrix cubic_;                            //!< npairs x r, S over pairs (m <= n) and k
  RowMatrix quartic_;                          //!< npairs x npairs, T over pairs (m <= n), (k <= l)
};

}  // namespace directable
