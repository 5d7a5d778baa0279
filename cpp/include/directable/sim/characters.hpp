#pragma once
// Closed loops of character control (Treuille thesis sec. 5.3.3): a task and
// a basis joined into the controller's DecisionProblem, and episodes that
// choose a clip at the end of every clip.
#include <memory>
#include <vector>

#include "directable/control/characters/decision.hpp"
#include "directable/control/characters/value_iteration.hpp"
#include "directable/models/characters/basis.hpp"
#include "directable/models/characters/task.hpp"

namespace directable {

//! The controller's view of a task (and a basis, which may be null). The
//! functions share ownership of both.
DecisionProblem decision_problem(std::shared_ptr<const Task> task, std::shared_ptr<const Basis> basis);

enum class CharacterPolicy { kValue, kGreedy, kGrid };

struct Episode {
  RowMatrix states;            //!< (steps + 1, d): the state at the start of each clip
  std::vector<Index> clips;    //!< (steps + 1,): clip of each state
  Eigen::VectorXd step_costs;  //!< (steps,): c_s(X_t) + c_t(X_t, X_t+1)
};

//! `steps` decisions from state0 under a policy: kValue needs r (K, nb),
//! kGrid a GridValue; alpha is the discount of eq. 5.10.
Episode run_episode(const DecisionProblem& problem, CharacterPolicy policy, const Eigen::Ref<const RowMatrix>& r,
                    const GridValue* grid, double alpha, const Eigen::Ref<const Eigen::VectorXd>& state0, Index steps);

//! One decision of the same policies.
Index choose_clip(const DecisionProblem& problem, CharacterPolicy policy, const Eigen::Ref<const RowMatrix>& r,
                  const GridValue* grid, double alpha, const Eigen::Ref<const Eigen::VectorXd>& state,
                  DecisionData& data);

}  // namespace directable
