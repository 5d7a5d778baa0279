#pragma once
// What a clip-choosing controller needs of a task, passed as functions so the
// controller never sees a concrete model (Treuille thesis sec. 5.3): the K
// successors of a state with their costs c_s(X) + c_t(X, X') (+inf for a
// forbidden clip), the state cost alone, and the basis Phi(X).
#include <functional>

#include "directable/core/types.hpp"

namespace directable {

struct DecisionProblem {
  Index clips = 0;     //!< K
  Index dim = 0;       //!< state columns, the clip first
  Index features = 0;  //!< nb (0 when no basis is attached)
  Index scratch = 0;   //!< doubles `features_of` needs as scratch
  //! next (K, dim) and costs (K,) from one state (dim,)
  std::function<void(const double* state, double* next, double* costs)> expand;
  std::function<double(const double* state)> state_cost;
  Index value_scratch = 0;  //!< doubles per state that `values_of` needs as scratch
  //! phi (features,) from one state
  std::function<void(const double* state, double* phi, double* scratch)> features_of;
  //! V(X_s) = Phi(X_s) . r[C_s] at n states (n, dim) row-major under r (K,
  //! nb): out (n,); the same value as features_of and a dot product, but
  //! each basis family is evaluated for all n states in one pass
  std::function<void(const double* states, Index n, const double* r, double* out, double* scratch)> values_of;
  //! The scans' form of eq. 5.10 (set with a basis). `prepare` lays r (K,
  //! nb) out as coef (coef_size,): for each distinct row of next clips, the
  //! coefficients of the K successors stored by term, (nb, K); `choose_many`
  //! then picks the best clip of n states (n, dim) with the successors
  //! stored by variable, so each loop is a contiguous pass over the K clips
  //! with no gather. best (n,) gets -1 where every clip is forbidden.
  Index coef_size = 0;
  Index many_scratch = 0;  //!< doubles of scratch `choose_many` needs (any n)
  std::function<void(const double* r, double* coef)> prepare;
  std::function<void(const double* states, Index n, const double* coef, double alpha, Index* best,
                     double* best_value, double* scratch)>
      choose_many;
};

//! Per-thread buffers of one decision.
struct DecisionData {
  explicit DecisionData(const DecisionProblem& p)
      : next(p.clips, p.dim), costs(p.clips), phi(p.features), scratch(p.scratch), values(p.clips),
        batch(p.clips * p.value_scratch) {}
  RowMatrix next;           //!< (K, dim)
  Eigen::VectorXd costs;    //!< (K,)
  Eigen::VectorXd phi;      //!< (nb,)
  Eigen::VectorXd scratch;
  Eigen::VectorXd values;   //!< (K,) V at the K successors
  Eigen::VectorXd batch;    //!< (K value_scratch,)
};

//! argmin_k costs[k] + alpha values[k] over the finite costs (-1 when none
//! is finite: every clip forbidden); *best_out receives the minimum.
Index argmin_value(const double* costs, const double* values, Index K, double alpha, double* best_out = nullptr);

//! V(X) = Phi(X) r[C]; r is (K, nb) row-major.
double basis_value(const DecisionProblem& p, const double* r, const double* state, DecisionData& data);

//! eq. 5.10: argmin_k c(X, k) + alpha V(f(X, k)); -1 when every clip is
//! forbidden. *best_out receives the minimum. Like every choose_* below it
//! leaves the expansion of `state` (successors, costs) in data.
Index choose_by_value(const DecisionProblem& p, const double* r, double alpha, const double* state, DecisionData& data,
                      double* best_out = nullptr);
//! eq. 5.6: argmin_k c_t(X, X') + c_s(X').
Index choose_greedy(const DecisionProblem& p, const double* state, DecisionData& data);

}  // namespace directable
