// repr of every class of the module and pickling of the objects a
// researcher ships to worker processes (concurrent.futures, Dask, Ray):
// registered after every other binding, from each class's exposed state.
#include <functional>

#include "directable/sim/simulate.hpp"
#include "pickle.hpp"

namespace directable::py_bind {

namespace {

using ArgsFn = std::function<py::tuple(py::handle)>;

bool is_array(py::handle v) { return py::isinstance<py::array>(v); }

bool is_plain(py::handle v) {
  return v.is_none() || py::isinstance<py::bool_>(v) || py::isinstance<py::int_>(v) ||
         py::isinstance<py::float_>(v) || py::isinstance<py::str>(v) || py::hasattr(py::type::of(v), "__members__");
}

// Properties of a class (its own and inherited), in alphabetical order.
std::vector<std::string> property_names(py::handle cls) {
  std::vector<std::string> names;
  const py::object property = py::module_::import("builtins").attr("property");
  for (py::handle name : py::module_::import("builtins").attr("dir")(cls)) {
    const std::string s = py::str(name);
    if (s.empty() || s[0] == '_') continue;
    if (py::isinstance(py::getattr(cls, name), property)) names.push_back(s);
  }
  return names;
}

// Rebuilds an object: cls(*args), then the state attributes and __dict__.
py::object restore(py::object cls, py::tuple args, py::dict state, py::object instance_dict) {
  py::object obj = cls(*args);
  for (auto item : state) py::setattr(obj, item.first, item.second);
  if (!instance_dict.is_none()) obj.attr("__dict__").attr("update")(instance_dict);
  return obj;
}

void add_reduce_fn(py::handle cls, ArgsFn args, std::vector<std::string> state) {
  py::object type = py::reinterpret_borrow<py::object>(cls);
  type.attr("__reduce__") = py::cpp_function(
      [args = std::move(args), state = std::move(state)](py::object self) {
        // the object's own class: a Python subclass with the same constructor comes back as itself
        py::object type = py::type::of(self);
        // looked up when pickling: the module is not importable while it initialises
        py::object restorer = py::module_::import("directable._core").attr("_restore");
        py::dict st;
        for (const std::string& a : state) st[py::str(a)] = self.attr(a.c_str());
        py::object d = py::hasattr(self, "__dict__") ? py::object(self.attr("__dict__")) : py::object(py::none());
        return py::make_tuple(restorer, py::make_tuple(type, args(self), st, d));
      },
      py::is_method(type), py::name("__reduce__"), "Pickling support: rebuilt with the class's constructor.");
}

// Simulation results have no constructor of their own: rebuilt from arrays.
std::shared_ptr<SimulationResult> simulation_result(const Array& states, const Array& controls, const Array& feedback,
                                                    const Array& tracking_error, const Array& effort,
                                                    const InputArray<int>& ref_index) {
  auto r = std::make_shared<SimulationResult>();
  auto seq = [](const Array& a) {
    VectorSeq v(a.shape(0), a.ndim() > 1 ? a.shape(1) : 0);
    std::copy(a.data(), a.data() + a.size(), v.data());
    return v;
  };
  r->states = seq(states);
  r->controls = seq(controls);
  r->feedback = seq(feedback);
  r->tracking_error = Eigen::Map<const Eigen::VectorXd>(tracking_error.data(), tracking_error.size());
  r->effort = Eigen::Map<const Eigen::VectorXd>(effort.data(), effort.size());
  r->ref_index = Eigen::Map<const Eigen::VectorXi>(ref_index.data(), ref_index.size());
  return r;
}

}  // namespace

std::string repr_value(py::handle value) {
  if (is_array(value)) {
    py::array a = py::reinterpret_borrow<py::array>(value);
    std::string shape = "(";
    for (py::ssize_t k = 0; k < a.ndim(); ++k) shape += (k ? ", " : "") + std::to_string(a.shape(k));
    if (a.ndim() == 1) shape += ",";
    return shape + ") " + std::string(py::str(a.dtype()));
  }
  return py::repr(value);
}

std::string repr_from(py::handle self, const std::vector<std::string>& attrs) {
  std::string out = std::string(py::str(py::type::of(self).attr("__name__"))) + "(";
  bool first = true;
  for (const std::string& a : attrs) {
    py::object v;
    try {
      v = self.attr(a.c_str());
    } catch (py::error_already_set&) {
      continue;  // e.g. a property that needs a run first
    }
    out += (first ? "" : ", ") + a + "=" + repr_value(v);
    first = false;
  }
  return out + ")";
}

void add_repr(py::handle cls, std::vector<std::string> attrs) {
  py::object type = py::reinterpret_borrow<py::object>(cls);
  const bool listed = !attrs.empty();
  if (!listed) attrs = property_names(cls);
  type.attr("__repr__") = py::cpp_function(
      [attrs = std::move(attrs), listed](py::object self) {
        if (listed) return repr_from(self, attrs);
        std::vector<std::string> plain;  // unlisted classes: scalars only, never a large array
        for (const std::string& a : attrs) {
          try {
            if (is_plain(self.attr(a.c_str()))) plain.push_back(a);
          } catch (py::error_already_set&) {
          }
        }
        return repr_from(self, plain);
      },
      py::is_method(type), py::name("__repr__"));
}

void add_reduce(py::handle cls, std::vector<std::string> args, std::vector<std::string> state) {
  add_reduce_fn(
      cls,
      [args = std::move(args)](py::handle self) {
        py::list values;
        for (const std::string& a : args) values.append(self.attr(a.c_str()));
        return py::tuple(values);
      },
      std::move(state));
}

void bind_pickle(py::module_& m) {
  m.def("_restore", &restore, py::arg("cls"), py::arg("args"), py::arg("state"), py::arg("instance_dict"),
        "Unpickling: cls(*args), then the attributes of state and the instance __dict__.");
  m.def("_simulation_result", &simulation_result, py::arg("states"), py::arg("controls"), py::arg("feedback"),
        py::arg("tracking_error"), py::arg("effort"), py::arg("ref_index"),
        "Unpickling of a SimulationResult from its arrays (copied).");

  // What each repr shows: sizes, horizon, the dtype of stored gains.
  const std::vector<std::pair<const char*, std::vector<std::string>>> reprs = {
      {"LQRSolution", {"horizon", "n", "s", "K", "P"}},
      {"Discretization", {"horizon", "n", "s", "dt", "method"}},
      {"Tracker", {"horizon", "n", "s", "gain_dtype", "loop", "index", "K"}},
      {"SimulationResult", {"states", "controls"}},
      {"SpringChain", {"masses", "actuated"}},
      {"PlanarChain", {"links", "n", "free_root", "gravity", "masses"}},
      {"TrackResult", {"steps", "diverged", "q", "tau"}},
      {"TetMesh", {"num_vertices", "num_tets"}},
      {"ReducedStVK", {"r", "alpha", "beta", "damping_hessian"}},
      {"ReducedFluid", {"r", "viscosity", "grid"}},
      {"LinearPrediction", {"n", "s", "A", "B"}},
      {"HorizonOptimizer", {"horizon", "n", "s"}},
      {"CrowdRun", {"positions"}},
      {"ClothRollout", {"x"}},
      {"PointMassRun", {"x", "u"}},
  };
  for (const auto& [name, attrs] : reprs)
    if (py::hasattr(m, name)) add_repr(m.attr(name), attrs);
  // Every other class: its scalar properties.
  const py::object type_type = py::module_::import("builtins").attr("type");
  for (auto item : m.attr("__dict__").cast<py::dict>()) {
    py::handle cls = item.second;
    if (!py::isinstance(cls, type_type) || py::hasattr(cls, "__members__")) continue;  // not a class, or an enum
    if (py::cast<py::dict>(cls.attr("__dict__")).contains("__repr__")) continue;
    add_repr(cls);
  }

  // Pickling through the constructor, from the exposed arguments.
  add_reduce(m.attr("LQRSolution"), {"K", "P"});
  add_reduce(m.attr("Discretization"), {"Phi", "Gamma", "Q", "N", "R", "Rc", "dt", "method"});
  add_reduce_fn(
      m.attr("Tracker"),
      [](py::handle t) {
        // A constant gain is stored as one (1, s, n) step: given back as (s, n).
        py::array K = t.attr("K");
        py::object gains = K.shape(0) == 1 && t.attr("horizon").cast<Index>() != 1 ? K[py::int_(0)] : py::object(K);
        return py::make_tuple(gains, t.attr("z_ref"), t.attr("w_ff"), t.attr("loop"), t.attr("w_min"),
                              t.attr("w_max"), t.attr("gain_dtype"));
      },
      {"index"});
  add_reduce(m.attr("SpringChain"), {"masses", "stiffness", "cubic", "damping", "actuated"});
  add_reduce(m.attr("PlanarChain"),
             {"masses", "lengths", "gravity", "inertias", "coms", "damping", "q_min", "q_max", "free_root"});
  add_reduce(m.attr("TetMesh"), {"vertices", "tets"});
  add_reduce(m.attr("MACGrid2D"), {"nx", "ny", "h"});
  add_reduce(m.attr("LinearPrediction"), {"A", "B"});
  add_reduce(m.attr("CrowdParams"), {"f_max", "rho_min", "rho_max", "lam", "delta_min", "alpha", "beta", "gamma",
                                     "f_min", "s_min", "s_max", "flow_floor"});
  add_reduce(m.attr("CrowdGrid"), {"nx", "ny", "h", "height", "discomfort", "blocked"});
  add_reduce(m.attr("CrowdAgent"), {"path", "radius", "discomfort_ahead", "speed_ahead", "lookahead"});
  py::object result_type = m.attr("SimulationResult");
  result_type.attr("__reduce__") = py::cpp_function(
      [](py::object r) {
        py::object make_result = py::module_::import("directable._core").attr("_simulation_result");
        return py::make_tuple(make_result, py::make_tuple(r.attr("states"), r.attr("controls"), r.attr("feedback"),
                                                          r.attr("tracking_error"), r.attr("effort"),
                                                          r.attr("ref_index")));
      },
      py::is_method(result_type), py::name("__reduce__"), "Pickling support: rebuilt from the arrays.");
}

}  // namespace directable::py_bind
