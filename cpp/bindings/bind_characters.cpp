#include "common.hpp"
#include "directable/control/characters/value_iteration.hpp"
#include "directable/control/characters/value_learning.hpp"
#include "directable/models/characters/basis.hpp"
#include "directable/models/characters/clips.hpp"
#include "directable/models/characters/motion_model.hpp"
#include "directable/models/characters/skeleton.hpp"
#include "directable/models/characters/task.hpp"
#include "directable/sim/characters.hpp"

namespace directable::py_bind {

namespace {

using IndexArray = InputArray<long long>;
using IndexRows = Eigen::Matrix<Index, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

//! An (rows, cols) integer array (cols < 0: free) as an Index matrix.
IndexRows index_rows(const py::object& a, const std::string& name, Index cols) {
  if (a.is_none()) throw std::invalid_argument(name + " must be an integer array, got None");
  auto b = IndexArray::ensure(a);
  if (!b) throw std::invalid_argument(name + " must be an integer array");
  if (b.ndim() != 2 || (cols >= 0 && b.shape(1) != cols)) throw_shape(name, "(K, " + std::to_string(cols) + ")", shape_of(b));
  IndexRows out(b.shape(0), b.shape(1));
  for (Index i = 0; i < out.size(); ++i) out.data()[i] = Index(b.data()[i]);
  return out;
}

//! (m, J, 3) joint positions as an (m, 3 J) matrix.
RowMatrix frames_in(const Array& a, const std::string& name) {
  if (a.ndim() != 3 || a.shape(2) != 3) throw_shape(name, "(m, J, 3)", shape_of(a));
  return Eigen::Map<const RowMatrix>(a.data(), a.shape(0), a.shape(1) * 3);
}

//! (m, 3 J) owned by `owner` as a read-only (m, J, 3) view.
py::array frames_view(const RowMatrix& m, py::handle owner) {
  return readonly(py::array_t<double>({m.rows(), m.cols() / 3, Index(3)}, m.data(), owner));
}
//! A copy of (m, 3 J) as a fresh (m, J, 3) array.
py::array frames_out(const RowMatrix& m) {
  py::array_t<double> out({m.rows(), m.cols() / 3, Index(3)});
  std::copy(m.data(), m.data() + m.size(), out.mutable_data());
  return out;
}

template <class V>
py::array index_out(const V& v) {
  py::array_t<long long> out(Index(v.size()));
  for (Index i = 0; i < Index(v.size()); ++i) out.mutable_data()[i] = (long long)v[i];
  return out;
}
py::array index_matrix_out(const IndexRows& m) {
  py::array_t<long long> out({m.rows(), m.cols()});
  for (Index i = 0; i < m.size(); ++i) out.mutable_data()[i] = (long long)m.data()[i];
  return out;
}
py::array matrix_out(const RowMatrix& m) {
  py::array_t<double> out({m.rows(), m.cols()});
  std::copy(m.data(), m.data() + m.size(), out.mutable_data());
  return out;
}
py::array vector_out(const Eigen::VectorXd& v) {
  py::array_t<double> out(v.size());
  std::copy(v.data(), v.data() + v.size(), out.mutable_data());
  return out;
}

TaskKind task_kind(const std::string& kind) {
  if (kind == "navigation") return TaskKind::kNavigation;
  if (kind == "spinning_navigation") return TaskKind::kSpinningNavigation;
  if (kind == "fixed_obstacle") return TaskKind::kFixedObstacle;
  if (kind == "moving_obstacle") return TaskKind::kMovingObstacle;
  throw std::invalid_argument("kind must be navigation, spinning_navigation, fixed_obstacle or moving_obstacle, got '" + kind + "'");
}

CharacterPolicy policy_kind(const std::string& policy) {
  if (policy == "value") return CharacterPolicy::kValue;
  if (policy == "greedy") return CharacterPolicy::kGreedy;
  if (policy == "grid") return CharacterPolicy::kGrid;
  throw std::invalid_argument("policy must be 'value', 'greedy' or 'grid', got '" + policy + "'");
}

//! A Python list of products, each a list of family dicts.
std::vector<std::vector<BasisFamily>> families(const py::list& products) {
  std::vector<std::vector<BasisFamily>> out;
  for (const auto& prod : products) {
    std::vector<BasisFamily> fams;
    for (const auto& f : prod.cast<py::list>()) {
      const auto d = f.cast<py::dict>();
      BasisFamily b;
      const auto kind = d["kind"].cast<std::string>();
      b.kind = kind == "gaussian" ? BasisFamily::Kind::kGaussian : BasisFamily::Kind::kPolynomial;
      b.column = d["column"].cast<Index>();
      if (b.kind == BasisFamily::Kind::kPolynomial) {
        b.degree = d["degree"].cast<Index>();
        b.scale = d["scale"].cast<double>();
      } else {
        b.a = d["a"].cast<double>();
        b.b = d["b"].cast<double>();
        b.n = d["n"].cast<Index>();
        b.sigma2 = d["sigma2"].cast<double>();
      }
      fams.push_back(b);
    }
    out.push_back(std::move(fams));
  }
  return out;
}

//! The Python view of a DecisionProblem keeps the task (and basis) alive
//! through the functions' shared pointers.
struct PyProblem {
  DecisionProblem problem;
  std::shared_ptr<const Task> task;
};

//! A (S, d) array of task states, checked by the task.
Eigen::Map<const RowMatrix> states_of(const Task& task, const Array& states, const std::string& name, bool in_ranges) {
  if (states.ndim() != 2) throw_shape(name, "(S, " + std::to_string(task.dim()) + ")", shape_of(states));
  Eigen::Map<const RowMatrix> X(states.data(), states.shape(0), states.shape(1));
  task.check_states(name, X, in_ranges);
  return X;
}

}  // namespace

// Declarations only: conversions from common.hpp, no numerics.
void bind_characters(py::module_& m) {
  py::class_<Skeleton, std::shared_ptr<Skeleton>>(m, "CharacterSkeleton", R"doc(Kinematic skeleton: J joints with parent indices and rest offsets.

Parameters
----------
parents : list of int
    (J,) parent of each joint, -1 for the root (pelvis); parents come before their children.
offsets : (J, 3) array_like
    Rest offset of each joint from its parent, m (y up).
mirror : list of int, optional
    (J,) left/right partner of each joint (itself on the midline); default: found from the offsets' x signs.
)doc")
      .def(py::init([](std::vector<Index> parents, const Array& offsets, std::optional<std::vector<Index>> mirror) {
             return std::make_shared<Skeleton>(std::move(parents), rows_view(offsets, "offsets", 3), mirror.value_or(std::vector<Index>{}));
           }),
           py::arg("parents"), py::arg("offsets"), py::arg("mirror") = py::none())
      .def_property_readonly("joints", &Skeleton::joints, "J, the number of joints (int).")
      .def_property_readonly("parents", [](const Skeleton& s) { return index_out(s.parents()); },
                             "(J,) int array: parent of each joint, -1 for the root.")
      .def_property_readonly("offsets", [](const Skeleton& s) { return matrix_out(s.offsets()); },
                             "(J, 3) array: rest offset of each joint from its parent, m (a copy).")
      .def_property_readonly("mirror", [](const Skeleton& s) { return index_out(s.mirror()); },
                             "(J,) int array: the left/right partner of each joint (itself on the midline).");
  m.def("synthetic_walker", [] { return std::make_shared<Skeleton>(synthetic_walker()); });

  py::class_<ClipSet, std::shared_ptr<ClipSet>>(m, "CharacterClipSet", "Motion clips (thesis sec. 5.1).")
      .def(py::init([](std::shared_ptr<const Skeleton> skeleton, const std::vector<Array>& poses, const py::object& frames,
                       const py::object& feet, std::vector<Index> gait, std::vector<std::string> gait_names,
                       const Array& params, std::optional<std::vector<Index>> mirror_of, double dt, double tol,
                       const py::object& contacts) {
             std::vector<RowMatrix> P;
             for (std::size_t k = 0; k < poses.size(); ++k) P.push_back(frames_in(poses[k], "poses[" + std::to_string(k) + "]"));
             IndexRows c = contacts.is_none() ? IndexRows() : index_rows(contacts, "contacts", 4);
             return std::make_shared<ClipSet>(skeleton, std::move(P), index_rows(frames, "constraint_frames", 2),
                                              index_rows(feet, "stance_foot", 2), std::move(gait), std::move(gait_names),
                                              rows_view(params, "params", kClipParams), mirror_of.value_or(std::vector<Index>{}),
                                              dt, tol, c);
           }),
           py::arg("skeleton"), py::arg("poses"), py::arg("constraint_frames"), py::arg("stance_foot"), py::arg("gait"),
           py::arg("gait_names"), py::arg("params"), py::arg("mirror_of") = py::none(), py::arg("dt") = 1.0 / 30.0,
           py::arg("foot_tolerance") = 1e-6, py::arg("contacts") = py::none())
      .def_property_readonly("clips", &ClipSet::clips)
      .def_property_readonly("skeleton", &ClipSet::skeleton_ptr)
      .def_property_readonly("poses", [](py::object self) {
        const auto& cs = self.cast<const ClipSet&>();
        py::list out;
        for (const auto& P : cs.poses()) out.append(frames_view(P, self));
        return out;
      })
      .def_property_readonly("constraint_frames", [](const ClipSet& c) { return index_matrix_out(c.constraint_frames()); })
      .def_property_readonly("stance_foot", [](const ClipSet& c) { return index_matrix_out(c.stance_foot()); })
      .def_property_readonly("gait", [](const ClipSet& c) { return index_out(c.gait()); })
      .def_property_readonly("gait_names", &ClipSet::gait_names)
      .def_property_readonly("param_matrix", [](const ClipSet& c) { return matrix_out(c.params()); })
      .def_property_readonly("mirror_of", [](const ClipSet& c) { return index_out(c.mirror_of()); })
      .def_property_readonly("dt", &ClipSet::dt)
      .def("half", &ClipSet::half, py::arg("k"));
  m.def("synthetic_clips",
        [](std::shared_ptr<const Skeleton> skeleton, std::vector<std::string> gaits, std::vector<double> turns,
           std::vector<double> torsos, std::vector<double> spins, std::vector<double> sidesteps, std::vector<Index> counts,
           unsigned long long seed, double dt) {
          SyntheticClipSpec spec{gaits, turns, torsos, spins, sidesteps, counts, seed, dt};
          return std::make_shared<ClipSet>(synthetic_clips(skeleton, spec));
        },
        py::arg("skeleton"), py::arg("gaits"), py::arg("turns"), py::arg("torsos"), py::arg("spins"), py::arg("sidesteps"),
        py::arg("counts"), py::arg("seed"), py::arg("dt"));
  m.def("mirror_poses", [](const Skeleton& s, const Array& poses) { return frames_out(mirror_poses(s, frames_in(poses, "poses"))); },
        py::arg("skeleton"), py::arg("poses"));

  py::class_<Animation>(m, "CharacterAnimation", "A synthesised animation (MotionModel.synthesize).")
      .def_property_readonly("frames", [](py::object self) { return frames_view(self.cast<const Animation&>().frames, self); },
                             "(F, J, 3) read-only view: world joint positions of every frame, m.")
      .def_property_readonly("contact_foot", [](const Animation& a) { return index_out(a.contact_foot); },
                             "(F,) int array: the joint planted at each frame (the blend's root).")
      .def_property_readonly("clip_of_frame", [](const Animation& a) { return index_out(a.clip_of_frame); },
                             "(F,) int array: the clip (as the state holds it) each frame belongs to.")
      .def_property_readonly("roots", [](const Animation& a) { return matrix_out(a.roots); },
                             "(n, 3) array: world (x m, z m, theta rad) of each played clip's root frame.")
      .def_property_readonly("played", [](const Animation& a) { return index_out(a.played); },
                             "(n,) int array: the oriented clip that played each step (>= K: mirrored).");

  py::class_<MotionModel, std::shared_ptr<MotionModel>>(m, "MotionModel", "Clip blending and the transition table (thesis sec. 5.1).")
      .def(py::init([](std::shared_ptr<const ClipSet> clips, const OptArray& weights, double velocity_weight, int threads,
                       py::object callback) {
             Progress progress(callback);
             const Eigen::VectorXd w = optional_vector(weights, "joint_weights");
             return progress.run([&](const ProgressFn* fn) {
               return std::make_shared<MotionModel>(clips, w, velocity_weight, threads, fn);
             });
           }),
           py::arg("clips"), py::arg("joint_weights") = py::none(), py::arg("velocity_weight") = 0.01,
           py::arg("threads") = 0, py::arg("progress") = py::none())
      .def_property_readonly("K", &MotionModel::K)
      .def_property_readonly("clips", &MotionModel::clips_ptr)
      .def("transition_table", [](const MotionModel& mm) {
        const Index K = mm.K();
        RowMatrix dx(K, K), dz(K, K), dth(K, K), dt(K, K), psi(K, K);
        IndexRows played(K, K);
        for (Index c = 0; c < K; ++c)
          for (Index n = 0; n < K; ++n) {
            const Transition& t = mm.transition(c, n);
            dx(c, n) = t.move.x, dz(c, n) = t.move.z, dth(c, n) = t.move.theta, dt(c, n) = t.duration, psi(c, n) = t.psi;
            played(c, n) = mm.state_clip(t.played);
          }
        py::dict out;
        out["dx"] = matrix_out(dx), out["dz"] = matrix_out(dz), out["dtheta"] = matrix_out(dth), out["dt"] = matrix_out(dt);
        out["psi"] = matrix_out(psi), out["next_clip"] = index_matrix_out(played);
        return out;
      })
      .def("blend", [](const MotionModel& mm, Index c, Index n) {
        const BlendFrames b = mm.blend(c, n);
        return py::make_tuple(frames_out(b.blended), frames_out(b.from), frames_out(b.to));
      }, py::arg("clip"), py::arg("next_clip"))
      .def("synthesize", [](const MotionModel& mm, std::vector<Index> seq, double x, double z, double theta) {
        py::gil_scoped_release release;
        return mm.synthesize(seq, GroundPose{x, z, theta});
      }, py::arg("clip_sequence"), py::arg("x"), py::arg("z"), py::arg("theta"))
      .def("param", [](const MotionModel& mm, Index o, Index p) { return mm.param(o, ClipParam(p)); });

  py::class_<Task, std::shared_ptr<Task>>(m, "CharacterTask", "A character control task (thesis Table 5.1).")
      .def(py::init([](std::shared_ptr<const MotionModel> motion, const std::string& kind, double gamma_x, double gamma_O,
                       double sigma_O, double gamma_psi, double gamma_rho, double gamma_tau, double gamma_omega,
                       std::vector<bool> gait, double torso, double spin, double offset, double u_dot, double v_dot,
                       const OptArray& ranges, Index obstacle_samples) {
             TaskParams p{gamma_x, gamma_O, sigma_O, gamma_psi, gamma_rho, gamma_tau, gamma_omega, gait, torso, spin, offset,
                          u_dot, v_dot, obstacle_samples};
             RowMatrix R = ranges ? RowMatrix(rows_view(*ranges, "ranges", 2)) : RowMatrix();
             return std::make_shared<Task>(motion, task_kind(kind), p, R);
           }),
           py::arg("motion"), py::arg("kind"), py::arg("gamma_x") = 0.0, py::arg("gamma_O") = 0.0, py::arg("sigma_O") = 1.0,
           py::arg("gamma_psi") = 0.0, py::arg("gamma_rho") = 0.0, py::arg("gamma_tau") = 0.0,
           py::arg("gamma_omega") = 0.0, py::arg("gait") = std::vector<bool>{}, py::arg("torso") = 0.0,
           py::arg("spin") = 0.0, py::arg("offset") = 0.0, py::arg("u_dot") = 0.0, py::arg("v_dot") = 0.0,
           py::arg("ranges") = py::none(), py::arg("obstacle_samples") = 1)
      .def_property_readonly("variables", &Task::variables)
      .def_property_readonly("cyclic", &Task::cyclic)
      .def_property_readonly("ranges", [](const Task& t) { return matrix_out(t.ranges()); })
      .def_property_readonly("dim", &Task::dim)
      .def_property_readonly("K", &Task::clips)
      .def("check_states", [](const Task& t, const Array& s, const std::string& name, bool in_ranges) {
        states_of(t, s, name, in_ranges);
      }, py::arg("states"), py::arg("name") = "states", py::arg("in_ranges") = true)
      .def("successors", [](const Task& t, const Array& states) {
        auto X = states_of(t, states, "states", false);
        const Index S = X.rows(), K = t.clips(), d = t.dim();
        py::array_t<double> out({S, K, d});
        double* o = out.mutable_data();
        {
          py::gil_scoped_release release;
          for (Index s = 0; s < S; ++s) t.successors(X.row(s).data(), o + s * K * d);
        }
        return out;
      }, py::arg("states"))
      .def("state_costs", [](const Task& t, const Array& states) {
        auto X = states_of(t, states, "states", false);
        py::array_t<double> out(X.rows());
        for (Index s = 0; s < X.rows(); ++s) out.mutable_data()[s] = t.state_cost(X.row(s).data());
        return out;
      }, py::arg("states"))
      .def("transition_costs", [](const Task& t, const Array& states) {
        auto X = states_of(t, states, "states", false);
        py::array_t<double> out({X.rows(), t.clips()});
        {
          py::gil_scoped_release release;
          for (Index s = 0; s < X.rows(); ++s) t.transition_costs(X.row(s).data(), out.mutable_data() + s * t.clips());
        }
        return out;
      }, py::arg("states"));

  py::class_<Basis, std::shared_ptr<Basis>>(m, "CharacterBasis", "Value-function basis (thesis eq. 5.11).")
      .def(py::init([](const py::list& products, bool monomial) { return std::make_shared<Basis>(families(products), monomial); }),
           py::arg("products"), py::arg("monomial") = false)
      .def_property_readonly("size", &Basis::size)
      .def("evaluate", [](const Basis& b, const Array& states) {
        auto X = rows_view(states, "states", -1, -1, true, "S", "d");
        if (X.cols() <= b.max_column())
          throw std::invalid_argument("states must have at least " + std::to_string(b.max_column() + 1) +
                                      " columns for this basis, got " + std::to_string(X.cols()));
        py::array_t<double> out({X.rows(), b.size()});
        Eigen::VectorXd scratch(b.scratch_size());
        for (Index s = 0; s < X.rows(); ++s) b.evaluate(X.row(s).data(), out.mutable_data() + s * b.size(), scratch.data());
        return out;
      }, py::arg("states"));

  py::class_<GridValue>(m, "GridValue", "A value function tabulated on a grid, multilinear between points.")
      .def(py::init([](Index clips, std::vector<Eigen::VectorXd> axes, std::vector<bool> cyclic) {
             return std::make_unique<GridValue>(clips, std::move(axes), std::move(cyclic));
           }),
           py::arg("clips"), py::arg("axes"), py::arg("cyclic"))
      .def_property_readonly("values", [](py::object self) {
        const auto& g = self.cast<const GridValue&>();
        return readonly(py::array_t<double>({g.clips(), g.points()}, g.values().data(), self));
      })
      .def_property_readonly("axes", &GridValue::axes)
      .def("__call__", [](const GridValue& g, const Array& states) {
        auto X = rows_view(states, "states", Index(g.axes().size()) + 1, -1, true, "S", "d");
        py::array_t<double> out(X.rows());
        for (Index s = 0; s < X.rows(); ++s) {
          if (X(s, 0) < 0 || X(s, 0) >= double(g.clips())) throw std::invalid_argument("states: clip index out of range");
          out.mutable_data()[s] = g(X.row(s).data());
        }
        return out;
      }, py::arg("states"));
  py::class_<PyProblem, std::shared_ptr<PyProblem>>(m, "DecisionProblem", "A task (and basis) as the controller sees it.")
      .def(py::init([](std::shared_ptr<const Task> task, std::shared_ptr<const Basis> basis) {
             return std::make_shared<PyProblem>(PyProblem{decision_problem(task, basis), task});
           }),
           py::arg("task"), py::arg("basis") = py::none())
      .def_property_readonly("features", [](const PyProblem& p) { return p.problem.features; })
      .def("values", [](const PyProblem& p, const Array& r, const Array& states, int threads) {
        auto X = states_of(*p.task, states, "states", false);
        auto R = rows_view(r, "r", p.problem.features, p.problem.clips);
        Eigen::VectorXd v(X.rows());
        {
          py::gil_scoped_release release;
          basis_values(p.problem, R, X, v, threads);
        }
        return vector_out(v);
      }, py::arg("r"), py::arg("states"), py::arg("threads") = 0)
      .def("choose", [](const PyProblem& p, const std::string& policy, const OptArray& r, const GridValue* grid,
                        double alpha, const Array& state) {
        const auto x = vector(state, "state", p.problem.dim, true);
        auto X = Eigen::Map<const RowMatrix>(x.data(), 1, x.size());
        p.task->check_states("state", X, false);
        RowMatrix R = r ? RowMatrix(rows_view(*r, "r", p.problem.features, p.problem.clips)) : RowMatrix(p.problem.clips, p.problem.features);
        DecisionData data(p.problem);
        return choose_clip(p.problem, policy_kind(policy), R, grid, alpha, x, data);
      }, py::arg("policy"), py::arg("r"), py::arg("grid"), py::arg("alpha"), py::arg("state"))
      .def("run", [](const PyProblem& p, const std::string& policy, const OptArray& r, const GridValue* grid, double alpha,
                     const Array& state0, Index steps) {
        const auto x = vector(state0, "state0", p.problem.dim, true);
        RowMatrix R = r ? RowMatrix(rows_view(*r, "r", p.problem.features, p.problem.clips)) : RowMatrix(p.problem.clips, p.problem.features);
        Episode ep;
        {
          py::gil_scoped_release release;
          ep = run_episode(p.problem, policy_kind(policy), R, grid, alpha, x, steps);
        }
        return py::make_tuple(matrix_out(ep.states), index_out(ep.clips), vector_out(ep.step_costs));
      }, py::arg("policy"), py::arg("r"), py::arg("grid"), py::arg("alpha"), py::arg("state0"), py::arg("steps"));

  py::class_<ValueLearning>(m, "ValueLearning", "The approximate-LP loop's scans and constraint rows (thesis sec. 5.3.2).")
      .def(py::init([](const PyProblem& p, const Array& samples, double alpha) {
             auto X = states_of(*p.task, samples, "samples", true);
             return std::make_unique<ValueLearning>(p.problem, X, alpha);
           }),
           py::arg("problem"), py::arg("samples"), py::arg("alpha"))
      .def("objective", [](const ValueLearning& l, int threads) {
        py::gil_scoped_release release;
        return l.objective(threads);
      }, py::arg("threads") = 0)
      .def("step", [](ValueLearning& l, const Array& r, int threads, py::object callback) {
        auto R = rows_view(r, "r", l.problem().features, l.problem().clips);
        Progress progress(callback);
        ConstraintRows rows = progress.run([&](const ProgressFn* fn) {
          ObjectLock busy(&l);  // the learning state grows with each step: two threads take turns
          return l.step(R, threads, fn);
        });
        py::array_t<double> data(Index(rows.values.size()));
        py::array_t<int> indices(Index(rows.indices.size()));
        py::array_t<long long> indptr(Index(rows.indptr.size()));
        std::copy(rows.values.begin(), rows.values.end(), data.mutable_data());
        std::copy(rows.indices.begin(), rows.indices.end(), indices.mutable_data());
        std::copy(rows.indptr.begin(), rows.indptr.end(), indptr.mutable_data());
        return py::make_tuple(data, indices, indptr, vector_out(rows.rhs));
      }, py::arg("r"), py::arg("threads") = 0, py::arg("progress") = py::none())
      .def("best_clips", [](const ValueLearning& l, const Array& r, int threads) {
        auto R = rows_view(r, "r", l.problem().features, l.problem().clips);
        std::vector<Index> b;
        {
          py::gil_scoped_release release;
          b = l.best_clips(R, threads, nullptr);
        }
        return index_out(b);
      }, py::arg("r"), py::arg("threads") = 0)
      .def_property_readonly("constraints", [](const ValueLearning& l) {
        return read_locked(&l, [&] { return l.constraints(); });
      }, "Constraint rows gathered so far.")
      .def_property_readonly("history", [](const ValueLearning& l) {
        return index_out(read_locked(&l, [&] { return l.history(); }));
      }, "Constraints gathered by each step so far.")
      .def_property_readonly("pairs", [](const ValueLearning& l) {
        return index_matrix_out(read_locked(&l, [&] {
          IndexRows p(l.constraints(), 2);
          for (Index i = 0; i < p.rows(); ++i) p(i, 0) = l.pair_sample()[i], p(i, 1) = l.pair_clip()[i];
          return p;
        }));
      }, "(constraints, 2) the (sample, clip) pair of each constraint row.");

  m.def("value_iteration", [](const PyProblem& p, GridValue& grid, double alpha, double tol, Index max_sweeps, int threads,
                              py::object callback) {
    Progress progress(callback);
    ValueIterationResult r = progress.run([&](const ProgressFn* fn) {
      ObjectLock busy(&grid);  // the grid's values are written in place
      return value_iteration(p.problem, grid, alpha, tol, max_sweeps, threads, fn);
    });
    py::dict out;
    out["sweeps"] = r.sweeps, out["evaluations"] = r.evaluations, out["residual"] = r.residual;
    return out;
  }, py::arg("problem"), py::arg("grid"), py::arg("alpha"), py::arg("tol"), py::arg("max_sweeps"), py::arg("threads") = 0,
     py::arg("progress") = py::none());
}

}  // namespace directable::py_bind
