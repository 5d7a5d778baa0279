"""Continuum crowds (Treuille thesis ch. 4; Treuille, Cooper & Popovic 2006).

    grid = dr.crowds.CrowdGrid(60, 16)                    # cells (ny, nx), h = 1
    params = dr.crowds.Params.table_4_1("lanes")
    east = dr.crowds.Group(goal=mask_east, positions=starts_west)
    crowd = dr.crowds.Crowd(grid, params, [east, west])
    run = crowd.run(400)                                   # run.positions (T+1, P, 2)
    crowd.fields(0)                                        # rho, ubar, speed, cost, phi, velocity

Layout: cell (i, j) is row j, column i of every (ny, nx) array, centred at
((i + 1/2) h, (j + 1/2) h); anisotropic fields are (4, ny, nx) in the
direction order E, N, W, S, entry [d, j, i] describing the move from cell
(i, j) into its neighbour in direction d; velocities are flat MAC vectors in
``directable.fluid.MACGrid2D``'s layout (all x-faces, then all y-faces).
Units are those of Table 4.1: lengths in cells when h = 1, time in steps
when dt = 1.

Reading of the expected periodic fields (sec. 4.1.3): while a closure is red
nobody moves into its cells (actual speed 0), and the potential is planned
with the expected speed ``green_fraction * f`` into them, so people wait at a
red light rather than detour.

``directable.crowds.scenes`` builds the paper's scenes (lanes, vortex,
armies, quad, city, evacuation, saucer) and their metrics.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from .. import _core
from .._validate import as_float_array, finite_array, integer, progress_callback, real

CrowdGrid = _core.CrowdGrid
Params = _core.CrowdParams
Agent = _core.CrowdAgent
CrowdRun = _core.CrowdRun

__all__ = ["CrowdGrid", "Params", "Agent", "CrowdRun", "Group", "Crowd", "splat", "speed_field", "unit_cost",
           "eikonal", "velocity_field", "enforce_min_distance", "close_pairs", "scenes"]


def splat(grid, positions, velocities, lam, out=None):
    """Density splat (sec. 4.2.1) and mean velocity (eq. 4.7).

    Parameters
    ----------
    grid : CrowdGrid
        The grid the people are splatted onto.
    positions : (P, 2) array_like
        Positions (length units), inside the domain.
    velocities : (P, 2) array_like
        Velocities (length per step).
    lam : float
        Density exponent lambda > 0 (dimensionless).
    out : tuple of ndarray, optional
        ``(rho, ubar)``: C-contiguous, writeable float64 arrays of shapes
        (ny, nx) and (ny, nx, 2), written in place (nothing is allocated or
        copied: a notebook loop can reuse them every step).

    Returns
    -------
    rho : (ny, nx) ndarray
        Density (people per cell): each person adds min(...)^lam to the four
        cells around it. ``out[0]`` when given.
    ubar : (ny, nx, 2) ndarray
        Density-weighted mean velocity (length per step), 0 where rho = 0.
        ``out[1]`` when given.
    """
    return _core.crowd_splat(grid, as_float_array(positions, "positions"), as_float_array(velocities, "velocities"),
                             real(lam, "lam"), out)


def speed_field(grid, rho, ubar, params, time=None, out=None):
    """Speed field f (eq. 4.8-4.10), cells per step, of every move.

    Parameters
    ----------
    grid : CrowdGrid
        The grid (heights, blocked cells, periodic closures).
    rho : (ny, nx) array_like
        Density (people per cell), as :func:`splat` returns it.
    ubar : (ny, nx, 2) array_like
        Mean velocity (length per step), as :func:`splat` returns it.
    params : Params
        f_max, f_min, rho_min, rho_max, s_min, s_max.
    time : float, optional
        None: the planning speed (moves into periodic closures scaled by
        their green fraction); a time in steps: the actual speed then (zero
        into red closures).
    out : (4, ny, nx) ndarray, optional
        C-contiguous, writeable float64 array written in place (nothing is
        allocated); it must not share memory with ``rho`` or ``ubar``.

    Returns
    -------
    (4, ny, nx) ndarray
        Speed (length per step) of the move from each cell towards E, N, W,
        S; 0 into or out of blocked cells and off the grid. ``out`` when
        given.
    """
    return _core.crowd_speed_field(grid, as_float_array(rho, "rho"), as_float_array(ubar, "ubar"), params,
                                   None if time is None else real(time, "time"), out)


def unit_cost(grid, speed, discomfort, params, out=None):
    """Unit cost C = (alpha f + beta + gamma g) / f of eq. 4.4 (+inf where f = 0).

    Parameters
    ----------
    grid : CrowdGrid
        The grid the fields live on.
    speed : (4, ny, nx) array_like
        Speed f of each move (length per step), as :func:`speed_field`
        returns it.
    discomfort : (ny, nx) array_like
        Total discomfort g (per length), evaluated in the cell moved into.
    params : Params
        The weights alpha, beta, gamma.
    out : (4, ny, nx) ndarray, optional
        C-contiguous, writeable float64 array written in place (nothing is
        allocated); it must not share memory with ``speed`` or
        ``discomfort``.

    Returns
    -------
    (4, ny, nx) ndarray
        Cost per unit length of each move E, N, W, S (time per length when
        alpha = gamma = 0, beta = 1); +inf where the speed is 0. ``out``
        when given.
    """
    return _core.crowd_unit_cost(grid, as_float_array(speed, "speed"), as_float_array(discomfort, "discomfort"),
                                 params, out)


def eikonal(cost, goal, blocked=None, h=1.0, heap="indexed"):
    """Potential phi of |grad phi| = C by anisotropic fast marching (sec. 4.2.3).

    The rule is fixed (see ``cpp/include/directable/models/crowds/eikonal.hpp``):
    goal cells are KNOWN with phi = 0; the smallest CANDIDATE (ties: smaller
    flat index) is accepted next; updates use KNOWN neighbours with finite
    cost only, per axis the neighbour minimising phi_i + h C (ties to W, S),
    the larger root of eq. 4.11 when it is at least max(phi_x, phi_y), else
    the one-sided value.

    Parameters
    ----------
    cost : (4, ny, nx) array_like
        Unit cost per length of each move (E, N, W, S), >= 0 or +inf.
    goal : (ny, nx) bool array_like
    blocked : (ny, nx) bool array_like, optional
        Cells never reached (phi = +inf); blocked goal cells are ignored.
    h : float
        Cell size.
    heap : {"indexed", "lazy"}
        Indexed binary heap with decrease-key, or lazy deletion (same result).

    Returns
    -------
    (ny, nx) ndarray
        phi: 0 on the goal, +inf where unreachable.
    """
    return _core.crowd_eikonal(as_float_array(cost, "cost"), goal, blocked, real(h, "h"), heap)


def velocity_field(grid, phi, cost, speed):
    """MAC velocity walking down phi.

    On the face between cells a (left/below) and b, with d = (phi_b - phi_a)/h
    and t the mean of the two cells' upwind tangential differences (the
    neighbour the march picks, counted only when it lies below the cell), the
    normal component is ``u = -f d / sqrt(d^2 + t^2)``: the speed f of the move
    down the potential times the normalised gradient component. So
    ``u (phi_b - phi_a) <= 0`` and ``|u| <= f``; faces touching blocked,
    unreachable or off-grid cells are 0.

    Parameters
    ----------
    grid : CrowdGrid
    phi : (ny, nx) array_like
    cost, speed : (4, ny, nx) array_like

    Returns
    -------
    (N,) ndarray
        Face velocities (length per step) in MACGrid2D's layout; interpolate
        with ``MACGrid2D(nx, ny, h).velocity_at``.
    """
    return _core.crowd_velocity_field(grid, as_float_array(phi, "phi"), as_float_array(cost, "cost"),
                                      as_float_array(speed, "speed"))


def enforce_min_distance(positions, delta_min, iterations=1, grid=None):
    """Pushes every pair closer than delta_min apart symmetrically (sec. 4.2.5).

    Neighbours come from a binning into bins of side delta_min (linear time);
    each iteration is one Gauss-Seidel pass over the close pairs. With a
    grid, people are never pushed into blocked cells (the offending axis of
    the push is undone) and stay in the domain.

    Parameters
    ----------
    positions : (P, 2) array_like
    delta_min : float
        Minimum distance (length units).
    iterations : int
    grid : CrowdGrid, optional

    Returns
    -------
    (P, 2) ndarray
        New positions (the input is not modified).
    """
    return _core.crowd_min_distance(as_float_array(positions, "positions"), real(delta_min, "delta_min"),
                                    integer(iterations, "iterations"), grid)


def close_pairs(positions, delta_min):
    """(K, 2) int pairs i < j of points at distance <= delta_min (cell binning).

    Parameters
    ----------
    positions : (P, 2) array_like
    delta_min : float

    Returns
    -------
    (K, 2) ndarray of int64
    """
    return _core.crowd_close_pairs(as_float_array(positions, "positions"), real(delta_min, "delta_min"))


@dataclass
class Group:
    """People sharing a goal and parameters.

    Parameters
    ----------
    goal : (ny, nx) bool array_like
        Goal cells.
    positions : (P_g, 2) array_like
        Start positions (length units).
    params : Params, optional
        Overrides the crowd's parameters (speeds and costs) for this group.
    goal_fn : callable(step) -> (ny, nx) bool, optional
        Dynamic goal, called before every step (chasing, theatre seats).
    """

    goal: np.ndarray
    positions: np.ndarray
    params: Optional[Params] = None
    goal_fn: Optional[Callable[[int], np.ndarray]] = None

    def __post_init__(self):
        finite_array(self.positions, "positions")  # (shapes are checked where a Crowd takes the group)


class Crowd:
    """A continuum crowd: groups moved each step down their potentials.

    Parameters
    ----------
    grid : CrowdGrid
    params : Params
        The crowd's parameters: the density exponent ``lam`` and
        ``delta_min`` of everyone, and each group's parameters unless it
        has its own.
    groups : list of Group
    predictive_steps : int
        K steps of predictive discomfort (sec. 4.1.3); 0 turns it off.
    predictive_scale, predictive_lambda : float
        Scale and density exponent of the predicted splats.
    on_arrival : {"remove", "stop"}
        Arrived people leave, or stand on the goal as obstacles.
    agents : list of Agent
        Moving obstacles (cars, a flying saucer).
    min_distance_iterations : int
        Passes of the minimum-distance enforcement per step.
    threads : int
        Threads for the groups (0: all); results do not depend on it.
    expected_periodic : bool
        Plan with the expected speed of periodic closures (people wait at a
        red light); False plans with the current lights (the ablation).

    Attributes
    ----------
    positions, velocities : (P, 2) ndarray
        Group after group, in the order of ``groups``.
    group_of : (P,) ndarray of int
    active : (P,) bool ndarray
        Still walking.
    """

    def __init__(self, grid, params, groups, predictive_steps=0, predictive_scale=0.1, predictive_lambda=1.0,
                 on_arrival="remove", agents=(), min_distance_iterations=1, threads=0, expected_periodic=True):
        if on_arrival not in ("remove", "stop"):
            raise ValueError(f"on_arrival must be 'remove' or 'stop', got {on_arrival!r}")
        if not isinstance(params, Params):
            raise TypeError(f"params must be a Params, got {type(params).__name__}")
        groups = list(groups)
        for k, g in enumerate(groups):
            if not isinstance(g, Group):
                raise TypeError(f"groups[{k}] must be a Group, got {type(g).__name__}")
        self.groups = groups
        self.params = params
        self.threads = integer(threads, "threads")
        self._sim = _core.Crowd(
            grid, [g.goal for g in groups], [as_float_array(g.positions, f"groups[{k}].positions")
                                            for k, g in enumerate(groups)],
            [g.params if g.params is not None else params for g in groups],
            integer(predictive_steps, "predictive_steps"), real(predictive_scale, "predictive_scale"),
            real(predictive_lambda, "predictive_lambda"), on_arrival == "remove", params.lam, params.delta_min,
            integer(min_distance_iterations, "min_distance_iterations"), list(agents), bool(expected_periodic))
        self._cfl_warned = False

    grid = property(lambda self: self._sim.grid, doc="The CrowdGrid.")
    positions = property(lambda self: self._sim.positions, doc="(P, 2) positions (a copy).")
    velocities = property(lambda self: self._sim.velocities, doc="(P, 2) velocities of the last step (a copy).")
    group_of = property(lambda self: self._sim.group_of, doc="(P,) group of each person.")
    active = property(lambda self: self._sim.active, doc="(P,) bool: still walking.")
    arrived = property(lambda self: self._sim.arrived, doc="(P,) bool: reached the goal.")
    stuck = property(lambda self: self._sim.stuck, doc="(P,) bool: ever walled in (no open path to the goal), standing still.")
    step_index = property(lambda self: self._sim.step_index, doc="Steps taken.")

    def occupied(self, group):
        """Cells holding a walking person of one group (a chasing group's goal).

        Parameters
        ----------
        group : int
            Group index, in the order of ``groups``.

        Returns
        -------
        (ny, nx) bool ndarray
        """
        return self._sim.occupied(integer(group, "group"))

    def _before_step(self, step):
        for k, g in enumerate(self.groups):
            if g.goal_fn is not None:
                self._sim.set_goal(k, g.goal_fn(step))

    def _check_cfl(self, dt):
        if not self._cfl_warned and self._sim.cfl(dt) > 1.0:
            self._cfl_warned = True
            warnings.warn(f"speed * dt / h = {self._sim.cfl(dt):.3g} > 1: people may skip cells (reduce dt)",
                          RuntimeWarning, stacklevel=3)

    def step(self, dt=1.0):
        """One step of length dt (steps).

        Parameters
        ----------
        dt : float
        """
        dt = real(dt, "dt")
        self._check_cfl(dt)
        self._before_step(self._sim.step_index)
        self._sim.step(dt, self.threads)

    def run(self, steps, dt=1.0, progress=False):
        """``steps`` steps in one C++ call (GIL released).

        Parameters
        ----------
        steps : int
        dt : float
        progress : bool or callable(done, total)
            True shows a tqdm bar; Ctrl-C stops within a step.

        Returns
        -------
        CrowdRun
            ``positions`` (T+1, P, 2), ``active`` (T+1, P), ``step_times``
            (T,) seconds, ``stage_times`` (T, 4) seconds (density, speed +
            cost, potential, motion; per-group stages summed over the
            groups), ``stuck`` (K,) people walled in at some step (no open
            path to the goal whatever the density; people held behind a
            dense crowd at rest stand still too but are not listed).
        """
        dt = real(dt, "dt")
        self._check_cfl(dt)
        hook = self._before_step if any(g.goal_fn is not None for g in self.groups) else None
        cb, close = progress_callback(progress, "crowd")
        try:
            return self._sim.run(integer(steps, "steps"), dt, self.threads, hook, cb)
        finally:
            close()

    def fields(self, group):
        """The fields of the current state for one group (stages 1-3 of a step, Fig. 4.3).

        Computes every group's fields at the current positions and time
        without moving anyone; the potential is complete over the grid.

        Parameters
        ----------
        group : int
            Group index, in the order of ``groups``.

        Returns
        -------
        dict of ndarray
            ``rho`` (ny, nx) density; ``ubar`` (ny, nx, 2) mean velocity
            (cells/step); ``discomfort`` (ny, nx) total g the group plans
            with (static, predictive, agents); ``speed`` (4, ny, nx) planning
            speed (cells/step, E N W S); ``speed_actual`` (4, ny, nx) the
            speed people move with (red closures 0); ``cost`` (4, ny, nx)
            unit cost; ``phi`` (ny, nx) potential (+inf unreachable);
            ``velocity`` (N,) MAC face velocities (cells/step); ``goal``
            (ny, nx) bool.
        """
        return self._sim.fields(integer(group, "group"), self.threads)


from . import scenes  # noqa: E402  (scenes are built on the names above)
