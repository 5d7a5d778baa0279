#include <cstring>
#include <limits>

#include "common.hpp"
#include "directable/models/crowds/crowd.hpp"
#include "directable/models/crowds/crowd_grid.hpp"
#include "directable/models/crowds/eikonal.hpp"
#include "directable/models/crowds/min_distance.hpp"

namespace directable::py_bind {

namespace {

using Mask = std::vector<std::uint8_t>;
std::string cells_str(Index ny, Index nx) { return "(" + std::to_string(ny) + ", " + std::to_string(nx) + ")"; }

//! A (ny, nx) bool mask argument as flat bytes (None is an error).
Mask mask(const py::object& a, const std::string& name, Index ny, Index nx) {
  if (a.is_none()) throw std::invalid_argument(name + " must be a (" + std::to_string(ny) + ", " + std::to_string(nx) + ") bool array, got None");
  auto b = py::array_t<bool, py::array::c_style | py::array::forcecast>::ensure(a);
  if (!b) throw std::invalid_argument(name + " must be a bool array");
  if (b.ndim() != 2 || b.shape(0) != ny || b.shape(1) != nx) throw_shape(name, cells_str(ny, nx), shape_of(b));
  Mask m(b.size());  // NumPy bools are bytes 0 or 1: copied as bytes
  std::memcpy(m.data(), b.data(), m.size());
  return m;
}

//! A (ny, nx) float field viewed as a flat vector.
Eigen::Map<const Eigen::VectorXd> cells(const Array& a, const std::string& name, Index ny, Index nx) {
  if (a.ndim() != 2 || a.shape(0) != ny || a.shape(1) != nx) throw_shape(name, cells_str(ny, nx), shape_of(a));
  return Eigen::Map<const Eigen::VectorXd>(a.data(), a.size());
}

//! A (ny, nx, 2) field of vectors viewed as (ny nx, 2). The core sees only
//! the (ny nx, 2) view, so the array's own shape is checked here: a
//! (ny, 2 nx) array has as many entries and would pass there.
Eigen::Map<const RowMatrix> cell_vectors(const Array& a, const std::string& name, Index ny, Index nx) {
  if (a.ndim() != 3 || a.shape(0) != ny || a.shape(1) != nx || a.shape(2) != 2)
    throw_shape(name, "(" + std::to_string(ny) + ", " + std::to_string(nx) + ", 2)", shape_of(a));
  return Eigen::Map<const RowMatrix>(a.data(), ny * nx, 2);
}

//! A (4, ny, nx) anisotropic field viewed as (4, ny nx).
Eigen::Map<const RowMatrix> field4(const Array& a, const std::string& name, Index ny, Index nx) {
  if (a.ndim() != 3 || a.shape(0) != 4 || a.shape(1) != ny || a.shape(2) != nx)
    throw_shape(name, "(4, " + std::to_string(ny) + ", " + std::to_string(nx) + ")", shape_of(a));
  return Eigen::Map<const RowMatrix>(a.data(), 4, ny * nx);
}

py::array image(const Eigen::VectorXd& v, Index ny, Index nx) {
  py::array_t<double> out({ny, nx});
  std::copy(v.data(), v.data() + v.size(), out.mutable_data());
  return out;
}
py::array image4(const RowMatrix& m, Index ny, Index nx) {
  py::array_t<double> out({Index(4), ny, nx});
  std::copy(m.data(), m.data() + m.size(), out.mutable_data());
  return out;
}
py::array bool_image(const Mask& m, Index ny, Index nx) {
  py::array_t<bool> out({ny, nx});
  std::copy(m.begin(), m.end(), out.mutable_data());
  return out;
}
py::array bool_vector(const Mask& m) {
  py::array_t<bool> out(Index(m.size()));
  std::copy(m.begin(), m.end(), out.mutable_data());
  return out;
}

//! The Python Crowd: a shared immutable model and this object's run data.
struct PyCrowd {
  std::shared_ptr<const CrowdModel> model;
  CrowdData data;
};

}  // namespace

// Declarations only (one .def per bound function or method, no logic): its
// length is the size of the crowd API.
void bind_crowds(py::module_& m) {
  using P = CrowdParams;
  py::class_<P>(m, "CrowdParams", R"doc(
Continuum-crowd parameters (Treuille thesis Table 4.1, eq. 4.4, 4.8-4.10).

Immutable; invalid values raise ValueError naming the parameter. Units of
Table 4.1: lengths in cells (h = 1), time in steps (dt = 1).

Parameters
----------
f_max : float
    Unobstructed speed (cells/step) on flat or downhill ground, > 0.
rho_min, rho_max : float
    Densities (people per cell, as splatted) between which the speed blends
    from the terrain speed to the flow speed (eq. 4.10); 0 <= rho_min <
    rho_max. rho_max = inf removes the flow-speed term.
lam : float
    Density exponent lambda of the splat (sec. 4.2.1), > 0.
delta_min : float
    Minimum distance between people (cells), >= 0.
alpha, beta, gamma : float
    Weights of path length, time and discomfort per unit time in the unit
    cost of eq. 4.4, >= 0 and not all zero.
f_min : float
    Speed (cells/step) on the steepest uphill slope s_max, in [0, f_max].
s_min, s_max : float
    Slope range of eq. 4.8 (height difference per cell length): slopes are
    clamped into it, s_min giving f_max and s_max giving f_min; s_min < s_max.
flow_floor : float
    In [0, 1]: the flow speed of eq. 4.9 never falls below flow_floor x f_T.
    0 is the formula as printed; a small floor keeps a dense crowd standing
    still (rho >= rho_max, ubar = 0) from locking for ever.)doc")
      .def(py::init([](double f_max, double rho_min, double rho_max, double lam, double delta_min, double alpha,
                       double beta, double gamma, double f_min, double s_min, double s_max, double flow_floor) {
             P p;
             p.f_max = f_max, p.rho_min = rho_min, p.rho_max = rho_max, p.lam = lam, p.delta_min = delta_min;
             p.alpha = alpha, p.beta = beta, p.gamma = gamma, p.f_min = f_min, p.s_min = s_min, p.s_max = s_max;
             p.flow_floor = flow_floor;
             p.validate();
             return p;
           }),
           py::arg("f_max"), py::arg("rho_min"), py::arg("rho_max"), py::arg("lam"), py::arg("delta_min"),
           py::arg("alpha"), py::arg("beta"), py::arg("gamma"), py::arg("f_min") = 0.0, py::arg("s_min") = 0.0,
           py::arg("s_max") = 1.0, py::arg("flow_floor") = 0.0)
      .def_static("table_4_1", &P::table_4_1, py::arg("name"), R"doc(A row of Table 4.1.

Parameters
----------
name : str
    "lanes", "vortex", "armies" (which also sets s_min, s_max = -0.3, 0.3,
    sec. 4.4), "quad" or "city".

Returns
-------
CrowdParams
    f_max, rho_min, rho_max, delta_min, lam, alpha, beta, gamma of that row;
    f_min = 0 and flow_floor = 0.)doc")
      .def_readonly("f_max", &P::f_max, "Unobstructed speed, cells/step.")
      .def_readonly("rho_min", &P::rho_min, "Density (people per cell) where the flow speed starts to count.")
      .def_readonly("rho_max", &P::rho_max, "Density (people per cell) from which people move with the flow (inf: never).")
      .def_readonly("lam", &P::lam, "Density exponent lambda of the splat.")
      .def_readonly("delta_min", &P::delta_min, "Minimum distance between people, cells.")
      .def_readonly("alpha", &P::alpha, "Weight of path length in the unit cost (eq. 4.4).")
      .def_readonly("beta", &P::beta, "Weight of time in the unit cost (eq. 4.4).")
      .def_readonly("gamma", &P::gamma, "Weight of discomfort per unit time in the unit cost (eq. 4.4).")
      .def_readonly("f_min", &P::f_min, "Speed on the steepest uphill slope s_max, cells/step.")
      .def_readonly("s_min", &P::s_min, "Slope (height per cell length) giving f_max; gentler slopes are clamped to it.")
      .def_readonly("s_max", &P::s_max, "Slope (height per cell length) giving f_min; steeper slopes are clamped to it.")
      .def_readonly("flow_floor", &P::flow_floor, "Lower bound of the flow speed as a share of the terrain speed, in [0, 1].")
      .def("to_dict", [](const P& p) {
        py::dict d;
        d["f_max"] = p.f_max, d["rho_min"] = p.rho_min, d["rho_max"] = p.rho_max, d["lam"] = p.lam;
        d["delta_min"] = p.delta_min, d["alpha"] = p.alpha, d["beta"] = p.beta, d["gamma"] = p.gamma;
        d["f_min"] = p.f_min, d["s_min"] = p.s_min, d["s_max"] = p.s_max;
        d["flow_floor"] = p.flow_floor;
        return d;
      }, R"doc(The parameters as a dict.

Returns
-------
dict of str to float
    Every constructor argument by name: ``Params(**{**p.to_dict(), "gamma":
    0.0})`` makes a variant.)doc")
      .def("__repr__", [](const P& p) {
        return "Params(f_max=" + std::to_string(p.f_max) + ", rho_min=" + std::to_string(p.rho_min) +
               ", rho_max=" + std::to_string(p.rho_max) + ", lam=" + std::to_string(p.lam) +
               ", delta_min=" + std::to_string(p.delta_min) + ", alpha=" + std::to_string(p.alpha) +
               ", beta=" + std::to_string(p.beta) + ", gamma=" + std::to_string(p.gamma) +
               (p.flow_floor != 0.0 ? ", flow_floor=" + std::to_string(p.flow_floor) : std::string()) + ")";
      });

  using G = CrowdGrid;
  py::class_<G, std::shared_ptr<G>>(m, "CrowdGrid", R"doc(
The crowd's world: size, height field, static discomfort, walls and
periodic closures.

Cell (i, j) is row j, column i of every (ny, nx) array, centred at
((i + 1/2) h, (j + 1/2) h); the domain is [0, nx h] x [0, ny h] (the layout
of MACGrid2D). Anisotropic fields are (4, ny, nx) in the order E, N, W, S.

Parameters
----------
nx, ny : int
    Cells along x and y, >= 1.
h : float
    Cell size (length units), > 0.
height : (ny, nx) array_like, optional
    Terrain height (length units) of eq. 4.8; None: flat.
discomfort : (ny, nx) array_like, optional
    Static discomfort g >= 0 (eq. 4.4); None: zero.
blocked : (ny, nx) bool array_like, optional
    Walls and obstacles: nobody moves into or out of them.)doc")
      .def(py::init([](Index nx, Index ny, double h, const OptArray& height, const OptArray& discomfort,
                       const py::object& blocked) {
             const Eigen::VectorXd none;
             Eigen::VectorXd H = height ? Eigen::VectorXd(cells(*height, "height", ny, nx)) : none;
             Eigen::VectorXd D = discomfort ? Eigen::VectorXd(cells(*discomfort, "discomfort", ny, nx)) : none;
             Mask B = blocked.is_none() ? Mask() : mask(blocked, "blocked", ny, nx);
             return std::make_shared<G>(nx, ny, h, H, D, B);
           }),
           py::arg("nx"), py::arg("ny"), py::arg("h") = 1.0, py::arg("height") = py::none(),
           py::arg("discomfort") = py::none(), py::arg("blocked") = py::none())
      .def_property_readonly("nx", &G::nx, "Cells along x.")
      .def_property_readonly("ny", &G::ny, "Cells along y.")
      .def_property_readonly("h", &G::h, "Cell size (length units).")
      .def_property_readonly("n_faces", [](const G& g) { return g.mac().n_faces(); }, "N, the size of a MAC velocity vector.")
      .def_property_readonly("height", [](const G& g) { return image(g.height(), g.ny(), g.nx()); }, "(ny, nx) height field (a copy).")
      .def_property_readonly("discomfort", [](const G& g) { return image(g.discomfort(), g.ny(), g.nx()); },
                             "(ny, nx) static discomfort (a copy).")
      .def_property_readonly("blocked", [](const G& g) { return bool_image(g.blocked(), g.ny(), g.nx()); }, "(ny, nx) bool walls (a copy).")
      .def_property_readonly("expected_speed_factor", [](const G& g) { return image(g.expected_factor(), g.ny(), g.nx()); },
                             "(ny, nx) product of the green fractions of the periodic closures over each cell.")
      .def("set_periodic", [](G& g, const py::object& msk, double green_fraction, double period, double phase) {
             g.add_periodic(mask(msk, "mask", g.ny(), g.nx()), green_fraction, period, phase);
           }, py::arg("mask"), py::arg("green_fraction"), py::arg("period"), py::arg("phase") = 0.0,
           R"doc(Adds a periodic closure (a traffic light, a door opening and closing), sec. 4.1.3.

The cells of the mask are closed (nobody moves into them) while red: outside
the first green_fraction of each period of time + phase. A crowd plans with
the expected speed green_fraction x f into them. Configure before building
a Crowd: the crowd shares the grid as it is then.

Parameters
----------
mask : (ny, nx) bool array_like
    Cells closed while red.
green_fraction : float
    Share of each period that is green, in [0, 1].
period : float
    Period (steps), > 0.
phase : float
    Time (steps) added before taking the time modulo the period.)doc")
      .def("red", [](const G& g, double time) {
             Mask r;
             g.red_cells(time, r);
             return bool_image(r, g.ny(), g.nx());
           }, py::arg("time"), R"doc(Cells closed by a red periodic closure.

Parameters
----------
time : float
    Time (steps).

Returns
-------
(ny, nx) bool ndarray
    True where some closure is red at that time.)doc");

  m.def("crowd_splat", [](const G& grid, const Array& positions, const Array& velocities, double lam,
                          const py::object& out) {
        auto X = rows_view(positions, "positions", 2, -1, true, "P");
        auto V = rows_view(velocities, "velocities", 2, X.rows(), true, "P");
        py::object rho_out = py::none(), ubar_out = py::none();
        if (!out.is_none()) {
          if (!py::isinstance<py::tuple>(out) || py::len(out) != 2)
            throw py::type_error("out must be a tuple (rho, ubar) of float64 arrays, got " +
                                 py::str(py::type::handle_of(out).attr("__name__")).cast<std::string>());
          rho_out = out[py::int_(0)], ubar_out = out[py::int_(1)];
        }
        auto R = out_array<double>(rho_out, "out[0] (rho)", "float64", {grid.ny(), grid.nx()});
        auto U = out_array<double>(ubar_out, "out[1] (ubar)", "float64", {grid.ny(), grid.nx(), 2});
        Eigen::Map<Eigen::VectorXd> rho(R.mutable_data(), grid.n_cells());
        Eigen::Map<RowMatrix> ubar(U.mutable_data(), grid.n_cells(), 2);
        splat(grid, X, V, Mask(), lam, rho, ubar);
        return py::make_tuple(R, U);
      }, py::arg("grid"), py::arg("positions"), py::arg("velocities"), py::arg("lam"), py::arg("out") = py::none(),
      "Density splat (sec. 4.2.1) of positions (P, 2) and mean velocity (eq. 4.7): (rho (ny, nx), ubar (ny, nx, 2)), written into out=(rho, ubar) if given.");
  m.def("crowd_speed_field", [](const G& grid, const Array& rho, const Array& ubar, const P& params,
                                std::optional<double> time, const py::object& out) {
        auto R = cells(rho, "rho", grid.ny(), grid.nx());
        auto U = cell_vectors(ubar, "ubar", grid.ny(), grid.nx());
        auto A = out_array<double>(out, "out", "float64", {4, grid.ny(), grid.nx()});
        Eigen::Map<RowMatrix> S(A.mutable_data(), 4, grid.n_cells());
        Mask closed;
        const Eigen::VectorXd none;
        if (time) grid.red_cells(*time, closed);
        speed_field(grid, params, R, U, closed, (!time && !grid.periodic().empty()) ? grid.expected_factor() : none, S);
        return A;
      }, py::arg("grid"), py::arg("rho"), py::arg("ubar"), py::arg("params"), py::arg("time") = py::none(),
      py::arg("out") = py::none(),
      "Speed field (4, ny, nx) of eq. 4.8-4.10 (into out if given); time=None: expected speed of periodic closures, else the actual speed at that time.");
  m.def("crowd_unit_cost", [](const G& grid, const Array& speed, const Array& discomfort, const P& params,
                              const py::object& out) {
        auto S = field4(speed, "speed", grid.ny(), grid.nx());
        auto D = cells(discomfort, "discomfort", grid.ny(), grid.nx());
        auto A = out_array<double>(out, "out", "float64", {4, grid.ny(), grid.nx()});
        Eigen::Map<RowMatrix> C(A.mutable_data(), 4, grid.n_cells());
        unit_cost(grid, params, S, D, C);
        return A;
      }, py::arg("grid"), py::arg("speed"), py::arg("discomfort"), py::arg("params"), py::arg("out") = py::none(),
      "Unit cost (4, ny, nx) of eq. 4.4 (into out if given), +inf where the speed is 0.");
  m.def("crowd_eikonal", [](const Array& cost, const py::object& goal, const py::object& blocked, double h,
                            const std::string& heap) {
        if (cost.ndim() != 3 || cost.shape(0) != 4) throw_shape("cost", "(4, ny, nx)", shape_of(cost));
        const Index ny = cost.shape(1), nx = cost.shape(2);
        auto C = field4(cost, "cost", ny, nx);
        Mask gm = mask(goal, "goal", ny, nx);
        Mask bm = blocked.is_none() ? Mask() : mask(blocked, "blocked", ny, nx);
        const EikonalHeap kind = eikonal_heap(heap);
        py::array_t<double> phi({ny, nx});
        Eigen::Map<Eigen::VectorXd> out(phi.mutable_data(), nx * ny);
        {
          py::gil_scoped_release release;
          thread_local EikonalWorkspace workspace;  // reused by this thread's calls
          eikonal(nx, ny, h, C, gm, bm, workspace, out, kind);
        }
        return phi;
      }, py::arg("cost"), py::arg("goal"), py::arg("blocked") = py::none(), py::arg("h") = 1.0,
      py::arg("heap") = "indexed",
      "Potential phi (ny, nx) by anisotropic fast marching of cost (4, ny, nx) from goal (ny, nx) bool; +inf where unreachable.");
  m.def("crowd_velocity_field", [](const G& grid, const Array& phi, const Array& cost, const Array& speed) {
        auto F = cells(phi, "phi", grid.ny(), grid.nx());
        auto C = field4(cost, "cost", grid.ny(), grid.nx());
        auto S = field4(speed, "speed", grid.ny(), grid.nx());
        Eigen::VectorXd u(grid.mac().n_faces());
        velocity_field(grid, F, C, S, u);
        return u;
      }, py::arg("grid"), py::arg("phi"), py::arg("cost"), py::arg("speed"),
      "MAC velocity (N,) walking down phi (ny, nx) with the speeds (4, ny, nx).");
  m.def("crowd_min_distance", [](const Array& positions, double delta_min, Index iterations, std::shared_ptr<G> grid) {
        RowMatrix X = rows_view(positions, "positions", 2, -1, true, "P");
        MinDistanceWorkspace ws;
        {
          py::gil_scoped_release release;
          enforce_min_distance(X, Mask(), Mask(), delta_min, iterations, grid.get(), Mask(), ws);
        }
        return X;
      }, py::arg("positions"), py::arg("delta_min"), py::arg("iterations") = 1, py::arg("grid") = nullptr,
      "Positions (P, 2) after `iterations` passes pushing every pair closer than delta_min apart symmetrically.");
  m.def("crowd_close_pairs", [](const Array& positions, double delta_min) {
        auto X = rows_view(positions, "positions", 2, -1, true, "P");
        MinDistanceWorkspace ws;
        std::vector<std::pair<Index, Index>> pairs;
        min_distance_pairs(X, Mask(), delta_min, ws, pairs);
        py::array_t<std::int64_t> out({Index(pairs.size()), Index(2)});
        auto o = out.mutable_unchecked<2>();
        for (std::size_t k = 0; k < pairs.size(); ++k) o(k, 0) = pairs[k].first, o(k, 1) = pairs[k].second;
        return out;
      }, py::arg("positions"), py::arg("delta_min"), "(K, 2) pairs i < j at distance <= delta_min (cell binning).");

  py::class_<CrowdAgent>(m, "CrowdAgent", R"doc(
A moving obstacle driven by a rule (a car, a flying saucer; sec. 4.3).

At step t it sits at path[t mod T] and closes the cells whose centres lie
within radius; over the next lookahead path points it adds
discomfort_ahead to the discomfort and speed_ahead to the speed of the
moves out of the cells within radius of them, so people get out of its way
quickly.

Parameters
----------
path : (T, 2) array_like
    Positions (length units) per step, looped.
radius : float
    Radius of the closed disc (length units), >= 0.
discomfort_ahead : float
    Discomfort added ahead of the agent, >= 0.
speed_ahead : float
    Speed (length per step) added to moves out of the cells ahead, >= 0.
lookahead : int
    Path points ahead that receive discomfort and speed, >= 0.)doc")
      .def(py::init([](const Array& path, double radius, double discomfort_ahead, double speed_ahead, Index lookahead) {
             CrowdAgent a;
             a.path = rows_view(path, "path", 2, -1, false, "T");
             a.radius = radius, a.discomfort_ahead = discomfort_ahead, a.speed_ahead = speed_ahead, a.lookahead = lookahead;
             a.validate("agent");
             return a;
           }),
           py::arg("path"), py::arg("radius"), py::arg("discomfort_ahead") = 0.0, py::arg("speed_ahead") = 0.0,
           py::arg("lookahead") = 0)
      .def_property_readonly("path", [](const CrowdAgent& a) { return RowMatrix(a.path); }, "(T, 2) positions (a copy).")
      .def_readonly("radius", &CrowdAgent::radius, "Radius of the closed disc (length units).")
      .def_readonly("discomfort_ahead", &CrowdAgent::discomfort_ahead, "Discomfort added ahead of the agent.")
      .def_readonly("speed_ahead", &CrowdAgent::speed_ahead, "Speed (length per step) added to moves out of the cells ahead.")
      .def_readonly("lookahead", &CrowdAgent::lookahead, "Path points ahead that receive discomfort and speed.");

  py::class_<CrowdRun, std::shared_ptr<CrowdRun>>(m, "CrowdRun", "Recorded run: positions (T+1, P, 2), active (T+1, P), step_times (T,) s, stage_times (T, 4) s, stuck (K,) person indices.")
      .def_property_readonly("positions", [](py::object self) {
        const auto& r = self.cast<const CrowdRun&>();
        return readonly(py::array_t<double>({r.T + 1, r.P, Index(2)}, r.positions.data(), self));
      }, "(T+1, P, 2) positions (read-only view).")
      .def_property_readonly("active", [](py::object self) {
        const auto& r = self.cast<const CrowdRun&>();
        return readonly(py::array_t<bool>({r.T + 1, r.P}, reinterpret_cast<const bool*>(r.active.data()), self));
      }, "(T+1, P) bool: still walking (read-only view).")
      .def_property_readonly("step_times", [](py::object self) {
        return view_vector(self.cast<const CrowdRun&>().step_times, self);
      }, "(T,) wall time of each step, seconds.")
      .def_property_readonly("stage_times", [](py::object self) {
        return view(self.cast<const CrowdRun&>().stage_times, self);
      }, "(T, 4) wall time of each step's stages, seconds: density (splat, predictive discomfort, agents), speed + unit cost, potential (eikonal), motion (velocity fields, Euler, minimum distance, arrival); per-group stages summed over the groups.")
      .def_property_readonly("stuck", [](const CrowdRun& r) {
        py::array_t<std::int64_t> out(Index(r.stuck.size()));
        std::copy(r.stuck.begin(), r.stuck.end(), out.mutable_data());
        return out;
      }, "(K,) people walled in at some step: in a cell with no open path to the goal (walls, closed cells), whatever the density. People held behind a dense crowd at rest also stand still (phi = inf there) but are not listed.");

  py::class_<PyCrowd, std::shared_ptr<PyCrowd>>(m, "Crowd", R"doc(
A continuum crowd: an immutable model (grid, groups' goals and parameters,
options, agents) that threads may share, and this object's people and
buffers. Prefer directable.crowds.Crowd.)doc")
      .def(py::init([](std::shared_ptr<G> grid, const std::vector<py::object>& goals, const std::vector<Array>& positions,
                       const std::vector<P>& params, Index predictive_steps, double predictive_scale,
                       double predictive_lambda, bool remove_on_arrival, double lam, double delta_min,
                       Index min_distance_iterations, const std::vector<CrowdAgent>& agents, bool expected_periodic) {
             if (!grid) throw std::invalid_argument("grid must be a CrowdGrid, got None");
             if (goals.size() != positions.size() || goals.size() != params.size())
               throw std::invalid_argument("goals, positions and params must have one entry per group, got " +
                                           std::to_string(goals.size()) + ", " + std::to_string(positions.size()) +
                                           " and " + std::to_string(params.size()));
             std::vector<CrowdGroupSpec> specs;
             Index total = 0;
             for (std::size_t g = 0; g < goals.size(); ++g) {
               specs.push_back({mask(goals[g], "groups[" + std::to_string(g) + "].goal", grid->ny(), grid->nx()), params[g]});
               total += rows_view(positions[g], "groups[" + std::to_string(g) + "].positions", 2, -1, false, "P").rows();
             }
             CrowdOptions o;
             o.predictive_steps = predictive_steps, o.predictive_scale = predictive_scale;
             o.predictive_lambda = predictive_lambda, o.remove_on_arrival = remove_on_arrival;
             o.lam = lam, o.delta_min = delta_min, o.min_distance_iterations = min_distance_iterations;
             o.expected_periodic = expected_periodic;
             RowMatrix X(total, 2);
             std::vector<int> group_of(total);
             Index row = 0;
             for (std::size_t g = 0; g < positions.size(); ++g) {
               auto Xg = rows_view(positions[g], "groups[" + std::to_string(g) + "].positions", 2, -1, false, "P");
               X.middleRows(row, Xg.rows()) = Xg;
               std::fill(group_of.begin() + row, group_of.begin() + row + Xg.rows(), int(g));
               row += Xg.rows();
             }
             auto self = std::make_shared<PyCrowd>();
             self->model = std::make_shared<const CrowdModel>(grid, std::move(specs), o, agents);
             self->data = create_crowd_data(*self->model, X, group_of);
             return self;
           }),
           py::arg("grid"), py::arg("goals"), py::arg("positions"), py::arg("params"), py::arg("predictive_steps") = 0,
           py::arg("predictive_scale") = 0.1, py::arg("predictive_lambda") = 1.0, py::arg("remove_on_arrival") = true,
           py::arg("lam") = 2.0, py::arg("delta_min") = 0.3, py::arg("min_distance_iterations") = 1,
           py::arg("agents") = std::vector<CrowdAgent>(), py::arg("expected_periodic") = true)
      .def_property_readonly("grid", [](const PyCrowd& c) { return std::const_pointer_cast<G>(c.model->grid_ptr()); })
      .def_property_readonly("n_groups", [](const PyCrowd& c) { return c.model->n_groups(); })
      .def_property_readonly("positions", [](const PyCrowd& c) {
        return read_locked(&c, [&] { return RowMatrix(c.data.positions); });
      }, "(P, 2) (a copy).")
      .def_property_readonly("velocities", [](const PyCrowd& c) {
        return read_locked(&c, [&] { return RowMatrix(c.data.velocities); });
      }, "(P, 2) (a copy).")
      .def_property_readonly("group_of", [](const PyCrowd& c) {
        const auto group_of = read_locked(&c, [&] { return c.data.group_of; });
        py::array_t<std::int64_t> out(Index(group_of.size()));
        std::copy(group_of.begin(), group_of.end(), out.mutable_data());
        return out;
      }, "(P,) group index of each person.")
      .def_property_readonly("active", [](const PyCrowd& c) {
        return bool_vector(read_locked(&c, [&] { return c.data.active; }));
      }, "(P,) bool: still walking.")
      .def_property_readonly("arrived", [](const PyCrowd& c) {
        return bool_vector(read_locked(&c, [&] { return c.data.arrived; }));
      }, "(P,) bool: reached the goal.")
      .def_property_readonly("stuck", [](const PyCrowd& c) {
        return bool_vector(read_locked(&c, [&] { return c.data.stuck; }));
      }, "(P,) bool: ever walled in (no open path to the goal, whatever the density).")
      .def_property_readonly("step_index", [](const PyCrowd& c) { return read_locked(&c, [&] { return c.data.step; }); },
                             "Steps taken so far.")
      .def_property_readonly("time", [](const PyCrowd& c) { return read_locked(&c, [&] { return c.data.time; }); },
                             "Time walked so far (s): the sum of the steps' dt.")
      .def("cfl", [](const PyCrowd& c, double dt) { return c.model->cfl(dt); }, py::arg("dt"),
           "Largest speed * dt / h over the groups (> 1: people may skip cells).")
      .def("set_goal", [](PyCrowd& c, Index group, const py::object& goal) {
             const G& g = c.model->grid();
             auto m = mask(goal, "goal", g.ny(), g.nx());
             py::gil_scoped_release release;
             ObjectLock busy(&c);  // not while another thread steps the crowd
             set_group_goal(*c.model, c.data, group, m);
           }, py::arg("group"), py::arg("goal"), "Replaces a group's goal (ny, nx) bool.")
      .def("occupied", [](const PyCrowd& c, Index group) {
             const G& g = c.model->grid();
             const Mask occ = read_locked(&c, [&] {
               Mask cells;
               occupied_cells(*c.model, c.data, group, cells);
               return cells;
             });
             return bool_image(occ, g.ny(), g.nx());
           }, py::arg("group"), "(ny, nx) bool: cells holding a walking person of the group.")
      .def("step", [](PyCrowd& c, double dt, int threads) {
             py::gil_scoped_release release;
             ObjectLock busy(&c);  // two threads stepping one crowd take turns
             crowd_step(*c.model, c.data, dt, threads);
           }, py::arg("dt") = 1.0, py::arg("threads") = 0, "One step of length dt (groups on `threads` threads, 0 = all).")
      .def("run", [](PyCrowd& c, Index steps, double dt, int threads, const py::object& before_step,
                     const py::object& callback) {
             CrowdBeforeStep hook;
             if (!before_step.is_none())
               hook = [&before_step](Index step) {
                 py::gil_scoped_acquire gil;
                 before_step(step);
               };
             Progress progress(callback);
             auto run = progress.run([&](const ProgressFn* fn) {
               ObjectLock busy(&c);
               return std::make_shared<CrowdRun>(crowd_run(*c.model, c.data, steps, dt, threads, hook, fn));
             });
             return run;
           }, py::arg("steps"), py::arg("dt") = 1.0, py::arg("threads") = 0, py::arg("before_step") = py::none(),
           py::arg("progress") = py::none(),
           "`steps` steps (GIL released); before_step(step) is called first each step; progress(done, total).")
      .def("fields", [](PyCrowd& c, Index group, int threads) {
             const CrowdModel& model = *c.model;
             group_data(model, c.data, group);  // validates the index before the work
             py::gil_scoped_release release;
             ObjectLock busy(&c);
             crowd_fields(model, c.data, threads);
             py::gil_scoped_acquire gil;
             const G& g = model.grid();
             const CrowdGroupData& gd = group_data(model, c.data, group);
             py::array_t<double> U({g.ny(), g.nx(), Index(2)});
             std::copy(c.data.ubar.data(), c.data.ubar.data() + c.data.ubar.size(), U.mutable_data());
             py::dict d;
             d["rho"] = image(c.data.rho, g.ny(), g.nx());
             d["ubar"] = U;
             d["discomfort"] = image(gd.discomfort, g.ny(), g.nx());
             d["speed"] = image4(gd.speed, g.ny(), g.nx());
             d["speed_actual"] = image4(gd.actual_speed(), g.ny(), g.nx());
             d["cost"] = image4(gd.cost, g.ny(), g.nx());
             d["phi"] = image(gd.phi, g.ny(), g.nx());
             d["velocity"] = Eigen::VectorXd(gd.velocity);
             d["goal"] = bool_image(gd.goal, g.ny(), g.nx());
             return d;
           }, py::arg("group"), py::arg("threads") = 0,
           "The fields of the current state for one group: rho, ubar, discomfort (total g), speed (planning), speed_actual, cost, phi, velocity (N,), goal.");
}

}  // namespace directable::py_bind
