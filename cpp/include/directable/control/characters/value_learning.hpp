#pragma once
// The approximate-LP loop of Treuille thesis sec. 5.3.2. Each step scans
// every sample for its best next clip under the current r (eq. 5.10; in
// parallel, streaming: one sample's K successors at a time), adds the new
// (X, X') pairs to L and assembles their constraint rows
//   Phi(X) r[C] - alpha Phi(X') r[C'] <= c_s(X) + c_t(X, X')
// as CSR over the K nb unknowns (coefficients of the same clip merged). The
// LP itself (max sum_X V(X)) is solved outside, by the caller's solver.
#include <vector>

#include "directable/control/characters/decision.hpp"
#include "directable/core/progress.hpp"

namespace directable {

//! Constraint rows in CSR form.
struct ConstraintRows {
  std::vector<long long> indptr;  //!< (rows + 1,)
  std::vector<int> indices;       //!< (nnz,) column = clip * nb + basis term
  std::vector<double> values;     //!< (nnz,)
  Eigen::VectorXd rhs;            //!< (rows,)
  Index rows() const { return Index(indptr.size()) - 1; }
};

class ValueLearning {
 public:
  //! samples (S, dim): copied; alpha in [0, 1).
  ValueLearning(DecisionProblem problem, const Eigen::Ref<const RowMatrix>& samples, double alpha);

  //! c (K nb,): sum over the samples of Phi(X) on their clip's block (the
  //! LP maximises c . r).
  Eigen::VectorXd objective(int threads) const;
  //! One scan under r (K, nb): appends the new pairs and returns their rows.
  ConstraintRows step(const Eigen::Ref<const RowMatrix>& r, int threads, const ProgressFn* progress);
  //! Best next clip of every sample under r (the scan alone).
  std::vector<Index> best_clips(const Eigen::Ref<const RowMatrix>& r, int threads, const ProgressFn* progress) const;

  const DecisionProblem& problem() const { return problem_; }
  const RowMatrix& samples() const { return samples_; }
  double alpha() const { return alpha_; }
  Index constraints() const { return Index(pair_sample_.size()); }
  const std::vector<Index>& pair_sample() const { return pair_sample_; }
  const std::vector<Index>& pair_clip() const { return pair_clip_; }
  const std::vector<Index>& history() const { return history_; }

 private:
  DecisionProblem problem_;
  RowMatrix samples_;  //!< (S, dim)
  double alpha_;
  std::vector<unsigned char> seen_;  //!< (S K): pair already in L
  std::vector<Index> pair_sample_, pair_clip_, history_;
};

//! V(X) for many states: values (S,).
void basis_values(const DecisionProblem& p, const Eigen::Ref<const RowMatrix>& r,
                  const Eigen::Ref<const RowMatrix>& states, Eigen::Ref<Eigen::VectorXd> values, int threads);

}  // namespace directable
