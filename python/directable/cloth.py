"""Mass-spring cloth and its goal-directed control (Jeon & Choi).

A researcher runs a pilot simulation, picks a node, a step ``t_c`` and a
goal, and gets the control window, the heuristic path and the control
forces; edits the path; and runs the second phase, in which the node
reaches its goal exactly while the rest of the cloth follows physically::

    import directable as dr
    cloth = dr.cloth.ClothGrid(20, 20, 0.05, 0.01, 200.0, 50.0, 5.0, 0.02)
    pilot = cloth.rollout(cloth.positions0, np.zeros((400, 3)), dt=0.005, steps=200)
    plan = dr.cloth.plan(cloth, pilot, [(node, 150, goal)], dt=0.005)
    run = dr.cloth.apply(cloth, pilot.x[0], pilot.v[0], 0.005, 200, plan)

Node (i, j) has index ``j*nx + i`` and starts at ``origin + (i, j, 0) *
spacing``; arrays of node vectors are (V, 3), positions in m, forces in N.
The numerics run in C++ (``directable._core``); this module converts
arguments and builds SciPy matrices.
"""
from __future__ import annotations

import math

import numpy as np

from . import _core
from ._validate import as_float_array, integer, real, run_with_progress

ClothRollout = _core.ClothRollout
ClothPlan = _core.ClothPlan
PointMassRun = _core.PointMassRun
ClothCollider = _core.ClothCollider

_METHODS = {"symplectic": _core.ClothIntegrator.symplectic, "implicit": _core.ClothIntegrator.implicit,
            "implicit_cg": _core.ClothIntegrator.implicit_cg}


def Sphere(center, radius, stiffness, friction=0.0) -> ClothCollider:
    """A sphere collider: penalty normal force ``stiffness * depth`` (N)
    plus regularised Coulomb friction (coefficient ``friction``).

    Parameters
    ----------
    center : array_like, shape (3,)
        Centre of the sphere (m).
    radius : float
        Radius (m, > 0).
    stiffness : float
        Penalty stiffness of the normal force (N/m, > 0).
    friction : float
        Coulomb coefficient of the regularised friction (>= 0, dimensionless).

    Returns
    -------
    ClothCollider
        The collider, for :meth:`ClothGrid.add_collider`.

    Notes
    -----
    The collider force is a smooth function of (x, v) and part of F^A, so
    the inverse dynamics of :func:`plan` (eq. 7) stays exact under contact.
    """
    return ClothCollider.sphere(as_float_array(center, "center"), real(radius, "radius"),
                                real(stiffness, "stiffness"), real(friction, "friction"))


def Plane(point, normal, stiffness, friction=0.0) -> ClothCollider:
    """A plane collider (penalty normal force and regularised Coulomb friction, as :func:`Sphere`).

    Parameters
    ----------
    point : array_like, shape (3,)
        A point of the plane (m).
    normal : array_like, shape (3,)
        Normal pointing out of the solid (normalised by the model; must not be zero).
    stiffness : float
        Penalty stiffness of the normal force (N/m, > 0).
    friction : float
        Coulomb coefficient of the regularised friction (>= 0, dimensionless).

    Returns
    -------
    ClothCollider
        The collider, for :meth:`ClothGrid.add_collider`.

    Notes
    -----
    Part of F^A and smooth in (x, v): the inverse dynamics of :func:`plan` stays exact under contact.
    """
    return ClothCollider.plane(as_float_array(point, "point"), as_float_array(normal, "normal"),
                               real(stiffness, "stiffness"), real(friction, "friction"))


def _method(method):
    if not isinstance(method, str) or method not in _METHODS:
        raise ValueError(f"method must be one of {sorted(_METHODS)}, got {method!r}")
    return _METHODS[method]


class ClothGrid:
    """An nx x ny mass-spring cloth (Jeon & Choi sec. 3.1).

    Parameters
    ----------
    nx, ny : nodes along x and y (>= 2)
    spacing : rest distance of neighbours (m, > 0)
    mass : per node (kg, > 0)
    k_struct : structural stiffness, (i,j)-(i+1,j) and (i,j)-(i,j+1) (N/m, > 0)
    k_shear : shear stiffness, both diagonals of each quad (N/m, >= 0; 0: absent)
    k_bend : primary bending, (i,j)-(i+2,j) and (i,j)-(i,j+2) (N/m, >= 0)
    damping : damper along every spring present (N s/m, >= 0)
    gravity : (3,) m/s^2
    pinned : node indices that never move
    origin : (3,) position of node 0 (m)
    k_bend2 : secondary bending, (i,j)-(i+2,j+2) and (i+2,j)-(i,j+2) (N/m, >= 0)

    The C++ model is immutable: :meth:`add_collider` builds a new one, so a
    model already handed to a run (``as_model``, a plan) never changes.
    """

    def __init__(self, nx, ny, spacing, mass, k_struct, k_shear, k_bend, damping, gravity=(0.0, 0.0, -9.81),
                 pinned=(), origin=(0.0, 0.0, 0.0), k_bend2=0.0):
        if pinned is None:
            raise TypeError("pinned must be a sequence of node indices, got None")
        self._args = dict(nx=integer(nx, "nx"), ny=integer(ny, "ny"), spacing=real(spacing, "spacing"),
                          mass=real(mass, "mass"), k_struct=real(k_struct, "k_struct"),
                          k_shear=real(k_shear, "k_shear"), k_bend=real(k_bend, "k_bend"),
                          damping=real(damping, "damping"), gravity=as_float_array(gravity, "gravity"),
                          pinned=[integer(k, "pinned") for k in pinned], origin=as_float_array(origin, "origin"),
                          k_bend2=real(k_bend2, "k_bend2"))
        self._colliders = []
        self.core = _core.ClothModel(**self._args, colliders=self._colliders)

    # -- description ---------------------------------------------------------------------------------------------
    @property
    def nx(self) -> int:
        """Nodes along x (int)."""
        return self._args["nx"]

    @property
    def ny(self) -> int:
        """Nodes along y (int)."""
        return self._args["ny"]

    @property
    def spacing(self) -> float:
        """Rest distance of neighbouring nodes (m)."""
        return self._args["spacing"]

    @property
    def mass(self) -> float:
        """Mass of each node (kg)."""
        return self._args["mass"]

    @property
    def node_count(self) -> int:
        """V = nx * ny."""
        return self.core.node_count

    @property
    def spring_count(self) -> int:
        """Number of springs present (a type whose stiffness is 0 has none)."""
        return self.core.spring_count

    @property
    def pinned(self) -> list:
        """Indices of the pinned nodes (list of int)."""
        return self.core.pinned

    @property
    def colliders(self) -> list:
        """The colliders added so far (a copy of the list; Sphere / Plane objects)."""
        return list(self._colliders)

    @property
    def positions0(self) -> np.ndarray:
        """(V, 3) rest grid (m)."""
        return self.core.positions0

    def node(self, i, j) -> int:
        """Index of node (i, j).

        Parameters
        ----------
        i : int
            Column, in [0, nx).
        j : int
            Row, in [0, ny).

        Returns
        -------
        int
            ``j*nx + i``.
        """
        i, j = integer(i, "i"), integer(j, "j")
        if not (0 <= i < self.nx and 0 <= j < self.ny):
            raise ValueError(f"node (i, j) must lie in [0, {self.nx}) x [0, {self.ny}), got ({i}, {j})")
        return j * self.nx + i

    def add_collider(self, collider) -> "ClothGrid":
        """Add a penalty collider; rebuilds the (immutable) C++ model.

        Parameters
        ----------
        collider : Sphere or Plane
            Made by :func:`Sphere` or :func:`Plane`.

        Returns
        -------
        ClothGrid
            self, so that calls chain.
        """
        if not isinstance(collider, ClothCollider):
            raise TypeError(f"collider must be directable.cloth.Sphere(...) or Plane(...), got {type(collider).__name__}")
        colliders = self._colliders + [collider]
        self.core = _core.ClothModel(**self._args, colliders=colliders)
        self._colliders = colliders
        return self

    # -- physics -------------------------------------------------------------------------------------------------
    def forces(self, x, v) -> np.ndarray:
        """The applied forces F^A: springs, dampers, gravity and colliders.

        Parameters
        ----------
        x : array_like, shape (V, 3)
            Node positions (m).
        v : array_like, shape (V, 3)
            Node velocities (m/s).

        Returns
        -------
        numpy.ndarray, shape (V, 3)
            F^A (N), forces on pinned nodes included (the integrators ignore them).
        """
        return self.core.forces(as_float_array(x, "x"), as_float_array(v, "v"))

    def energy(self, x) -> float:
        """Potential energy: springs, gravity (zero at the origin) and collider penalties.

        Parameters
        ----------
        x : array_like, shape (V, 3)
            Node positions (m).

        Returns
        -------
        float
            The potential energy (J); :meth:`forces` is its negative gradient when damping and friction are off.
        """
        return self.core.energy(as_float_array(x, "x"))

    def force_jacobians(self, x, v):
        """The analytic Jacobians of :meth:`forces`.

        Parameters
        ----------
        x : array_like, shape (V, 3)
            Node positions (m).
        v : array_like, shape (V, 3)
            Node velocities (m/s).

        Returns
        -------
        dF_dx : scipy.sparse.csr_matrix, shape (3V, 3V)
            dF^A/dx (N/m), in the flat order q = [x0, y0, z0, x1, ...].
        dF_dv : scipy.sparse.csr_matrix, shape (3V, 3V)
            dF^A/dv (N s/m), same pattern.
        """
        from scipy import sparse

        indptr, indices, Kx, Kv = self.core.force_jacobians(as_float_array(x, "x"), as_float_array(v, "v"))
        n = 3 * self.node_count
        indptr, indices = np.asarray(indptr, dtype=np.int32), np.asarray(indices, dtype=np.int32)
        return (sparse.csr_matrix((Kx, indices, indptr), shape=(n, n)),
                sparse.csr_matrix((Kv, indices.copy(), indptr.copy()), shape=(n, n)))

    def step(self, x, v, dt, u=None, method="symplectic"):
        """One step from (x, v) with control forces u.

        Parameters
        ----------
        x : array_like, shape (V, 3)
            Node positions (m).
        v : array_like, shape (V, 3)
            Node velocities (m/s); pinned nodes' are taken as zero.
        dt : float
            Time step (s, > 0).
        u : array_like, shape (V, 3), optional
            Control forces (N); None for none.
        method : {"symplectic", "implicit", "implicit_cg"}
            The integrator (see Notes).

        Returns
        -------
        x_next : numpy.ndarray, shape (V, 3)
            Positions after the step (m).
        v_next : numpy.ndarray, shape (V, 3)
            Velocities after the step (m/s).

        Raises
        ------
        ValueError
            For bad shapes, non-finite input, dt <= 0, a degenerate spring, a
            vanishing pivot of the implicit system, or a step that diverges
            (a node faster than energy and momentum allow; the message names
            the step).

        Notes
        -----
        ``"symplectic"``: eq. 4-5, v+ = v + dt M^-1 (F^A + u), x+ = x + dt v+.
        ``"implicit"``: backward Euler with one Newton step (Baraff-Witkin),
        (M - dt dF/dv - dt^2 sym(dF/dx)) dv = dt (F + u + dt dF/dx v), solved
        directly by a supernodal sparse LDL' (exact to rounding): the ordering
        (AMD on the node graph) and symbolic analysis are done once per call
        (a :meth:`rollout` analyses once for all its steps), and each step
        refactorises into buffers sized once.
        ``"implicit_cg"``: the same system solved by Jacobi-preconditioned
        conjugate gradients (Baraff-Witkin's solver) to 1e-12 relative residual,
        warm-started from the previous step: about 3x faster on a 20 x 20
        cloth (benchmarks/RESULTS.md), for matrices that stay definite.
        """
        return self.core.step(as_float_array(x, "x"), as_float_array(v, "v"), real(dt, "dt"),
                              None if u is None else as_float_array(u, "u"), _method(method))

    def rollout(self, x0, v0, dt, steps, u=None, method="symplectic", progress=None) -> ClothRollout:
        """``steps`` steps in one C++ call (GIL released, Ctrl-C stops it).

        Parameters
        ----------
        x0 : array_like, shape (V, 3)
            Initial positions (m).
        v0 : array_like, shape (V, 3)
            Initial velocities (m/s); pinned nodes' are taken as zero.
        dt : float
            Time step (s, > 0).
        steps : int
            Number of steps T (>= 0).
        u : array_like, shape (T, V, 3), optional
            Control forces (N) per step; None for none.
        method : {"symplectic", "implicit", "implicit_cg"}
            The integrator, as in :meth:`step` (the implicit system is analysed once per rollout).
        progress : bool or callable, optional
            True for a tqdm bar, or a callback ``f(done, total)``.

        Returns
        -------
        ClothRollout
            ``.x`` and ``.v``, each (T+1, V, 3) read-only views (m, m/s).

        Raises
        ------
        ValueError
            For bad input, or a run that diverges (the message names the step).
        """
        integrator = _method(method)
        return run_with_progress(self.core.rollout, progress, "cloth", x0=as_float_array(x0, "x0"),
                                 v0=as_float_array(v0, "v0"), dt=real(dt, "dt"), steps=integer(steps, "steps"),
                                 u=None if u is None else as_float_array(u, "u"), method=integrator)

    def as_model(self, controlled) -> _core.ClothControlModel:
        """The cloth as a ``directable.models.Model`` for LQR, MPC and ``simulate``.

        Parameters
        ----------
        controlled : sequence of int
            The nodes whose forces are the controls (3 per node; not pinned).

        Returns
        -------
        ClothControlModel
            z = [q, q'] (6V: m, m/s), w = the forces on the controlled nodes
            (3c, N), B = [0; M^-1 S], an analytic Jacobian; its ``step`` is
            symplectic Euler.
        """
        if controlled is None:
            raise TypeError("controlled must be a sequence of node indices, got None")
        return self.core.as_model([integer(k, "controlled") for k in np.atleast_1d(controlled).tolist()])


def _cloth(cloth) -> _core.ClothModel:
    if not isinstance(cloth, ClothGrid):
        raise TypeError(f"cloth must be a directable.cloth.ClothGrid, got {type(cloth).__name__}")
    return cloth.core


def _pilot(pilot):
    if pilot is None or not hasattr(pilot, "x") or not hasattr(pilot, "v"):
        raise TypeError(f"pilot must be a rollout result with .x and .v, got {type(pilot).__name__}")
    return as_float_array(pilot.x, "pilot.x"), as_float_array(pilot.v, "pilot.v")


def _f_max(f_max) -> float:
    return math.inf if f_max is None else real(f_max, "f_max")


def control_window(distance, alpha, t_c=None) -> int:
    """The control window of eq. 11.

    Parameters
    ----------
    distance : float
        |q# - q_n|, the goal's distance from the node's pilot position (m, >= 0).
    alpha : float
        Window scale (steps/m^2, >= 0).
    t_c : int, optional
        The goal step: the window is clipped to it; None for no upper clip.

    Returns
    -------
    int
        T_r = round(alpha * distance^2) steps, clipped to [1, t_c].
    """
    t = 2 ** 62 if t_c is None else integer(t_c, "t_c")
    return _core.cloth_control_window(real(distance, "distance"), real(alpha, "alpha"), t)


def plan(cloth, pilot, goals, dt, alpha=500.0, beta=1.0, gamma=1e-6, delta=1.0, seek_angle=30.0, samples=33,
         azimuths=8, widen=0.3, f_max=None, length_ratio="squared", tolerance=1e-6) -> ClothPlan:
    """Goal-directed paths and control forces (Jeon & Choi sec. 3.5-4), in C++.

    Parameters
    ----------
    cloth : ClothGrid
    pilot : the :meth:`ClothGrid.rollout` result of the pilot run (symplectic, step dt)
    goals : list of ``(node, t_c, goal_xyz)``: node index, goal step in the pilot, goal (3,) m
    dt : the pilot's step (s)
    alpha : window scale, T_r = round(alpha |q# - q_n|^2) steps (eq. 11), steps/m^2
    beta, gamma : weights of the goal distance (per m^2) and of the force (per N^2), eq. 14/19. A node
        of mass m displaced by d from its free landing needs |u| = m d / dt^2, so gamma ~ 1e-6 balances
        beta = 1 for 10 g nodes at dt = 2 ms
    delta : scale of the radius vectors R_i (eq. 15)
    seek_angle : theta_max in degrees: candidates q*_i + Rot(theta) R_i lie on a cone of this half-angle
    samples, azimuths : polar angles from -theta to theta, times planes through R_i over a half turn
    widen : fraction of the window over which the seek angle grows from 0 to theta_max (0: constant)
    f_max : None or the force limit |u_i| <= f_max (N); eq. 13 prints |u|^2 <= F_max, the norm is used
    length_ratio : "squared" (eq. 15 as printed) or "linear" (ratio of distances)
    tolerance : a node has ``reached`` its goal when it ends within this distance (m)

    Returns
    -------
    ClothPlan
        ``t_start``, ``t_end`` (merged window, n = t_end - t_start steps),
        ``nodes``, ``paths`` (nodes, n+1, 3) of the second pass, ``generated`` (first pass),
        ``targets`` (cut + re-timed, NaN outside a node's window), ``forces`` (n, nodes, 3) N,
        ``reached``, ``final_distance`` (m), ``cost`` (eq. 14), ``closest_step``.

    Notes
    -----

    The path is generated with the simulation in the loop: F^A at step i is
    evaluated on the cloth state the forces chosen so far produce. The
    forces come from inverse dynamics with the dt^2 of eq. 6 (eq. 7 and 18
    print dt). The literal heuristic does not land on q#, so the path is cut
    at its closest approach, ended on q#, re-timed by the pilot's step
    lengths (eq. 20-24) and the forces recomputed in a second pass. Goals
    whose windows overlap are merged (the earlier start wins) and planned
    jointly. With f_max binding the node deviates: ``reached`` is False and
    ``final_distance`` tells by how much; nothing is raised.
    """
    px, pv = _pilot(pilot)
    if goals is None:
        raise TypeError("goals must be a list of (node, t_c, goal_xyz), got None")
    parsed = []
    for k, g in enumerate(goals):
        try:
            node, t_c, xyz = g
        except (TypeError, ValueError):
            raise ValueError(f"goals[{k}] must be (node, t_c, goal_xyz), got {g!r}") from None
        parsed.append((integer(node, f"goals[{k}] node"), integer(t_c, f"goals[{k}] t_c"),
                       as_float_array(xyz, f"goals[{k}] goal")))
    if length_ratio not in ("squared", "linear"):
        raise ValueError(f"length_ratio must be 'squared' or 'linear', got {length_ratio!r}")
    return _core.cloth_plan(_cloth(cloth), px, pv, parsed, real(dt, "dt"), real(alpha, "alpha"), real(beta, "beta"),
                            real(gamma, "gamma"), real(delta, "delta"), math.radians(real(seek_angle, "seek_angle")),
                            integer(samples, "samples"), integer(azimuths, "azimuths"), real(widen, "widen"),
                            _f_max(f_max), length_ratio, real(tolerance, "tolerance"))


def follow(cloth, pilot, plan, paths, dt, beta=1.0, gamma=1e-6, f_max=None, tolerance=1e-6) -> ClothPlan:
    """The second pass alone, along edited paths over ``plan``'s windows.

    Parameters
    ----------
    cloth : ClothGrid
        The cloth of the plan.
    pilot : ClothRollout
        The pilot run the plan was made on.
    plan : ClothPlan
        Gives the nodes and their windows.
    paths : array_like, shape (nodes, n+1, 3)
        The paths to follow (m), e.g. ``plan.targets`` with a blended path
        put in; each node's goal is its path at its window end.
    dt : float
        The pilot's step (s).
    beta, gamma : float
        Weights of eq. 14's cost (per m^2, per N^2), >= 0.
    f_max : float, optional
        Force limit |u_i| <= f_max (N); None for none.
    tolerance : float
        Distance (m) within which a node has ``reached`` its goal.

    Returns
    -------
    ClothPlan
        Forces by inverse dynamics with the simulation in the loop, the
        second pass's ``paths``, ``reached``, ``final_distance``, ``cost``
        (``generated`` empty).
    """
    px, pv = _pilot(pilot)
    if not isinstance(plan, ClothPlan):
        raise TypeError(f"plan must be a ClothPlan, got {type(plan).__name__}")
    return _core.cloth_follow(_cloth(cloth), px, pv, real(dt, "dt"), plan.nodes, plan.window_start, plan.window_end,
                              as_float_array(paths, "paths"), real(beta, "beta"), real(gamma, "gamma"), _f_max(f_max),
                              real(tolerance, "tolerance"))


def apply(cloth, x0, v0, dt, steps, plan, progress=None) -> PointMassRun:
    """The second-phase run, in one C++ call (GIL released).

    Parameters
    ----------
    cloth : ClothGrid
        The cloth of the plan.
    x0 : array_like, shape (V, 3)
        Initial positions (m), normally the pilot's.
    v0 : array_like, shape (V, 3)
        Initial velocities (m/s).
    dt : float
        Time step (s), the pilot's.
    steps : int
        Symplectic steps T to run; ``plan.forces`` act on ``plan.nodes`` at steps [t_start, t_end).
    plan : ClothPlan
        The forces to apply.
    progress : bool or callable, optional
        True for a tqdm bar, or a callback ``f(done, total)``.

    Returns
    -------
    PointMassRun
        A :class:`ClothRollout` (``.x``, ``.v`` (T+1, V, 3): m, m/s) with the
        applied forces ``.u`` (T, V, 3) N.
    """
    if not isinstance(plan, ClothPlan):
        raise TypeError(f"plan must be a ClothPlan, got {type(plan).__name__}")
    return run_with_progress(_core.cloth_apply, progress, "cloth", cloth=_cloth(cloth), x0=as_float_array(x0, "x0"),
                             v0=as_float_array(v0, "v0"), dt=real(dt, "dt"), steps=integer(steps, "steps"),
                             t_start=plan.t_start, nodes=plan.nodes, forces=plan.forces)


def blend_path(path, control_points, weight) -> np.ndarray:
    """Blend a path with a user curve (sec. 3.6).

    Parameters
    ----------
    path : array_like, shape (n+1, 3)
        The generated path (m).
    control_points : array_like, shape (4, 3)
        The user's control points (m); the curve is the Newton-form
        interpolating polynomial through them at parameters 0, 1/3, 2/3, 1,
        sampled at i/n.
    weight : float
        Blend weight in [0, 1] (0: the path, 1: the curve).

    Returns
    -------
    numpy.ndarray, shape (n+1, 3)
        (1 - weight) path + weight curve (m).
    """
    return _core.cloth_blend(as_float_array(path, "path"), as_float_array(control_points, "control_points"),
                             real(weight, "weight"))


def retime(path, reference) -> np.ndarray:
    """Temporal re-parameterisation (eq. 20-24).

    Parameters
    ----------
    path : array_like, shape (m+1, 3)
        The polyline to re-time (m).
    reference : array_like, shape (n+1, 3)
        The path whose step lengths set the spacing (m), e.g. the pilot's.

    Returns
    -------
    numpy.ndarray, shape (n+1, 3)
        Points on ``path`` from its first point to its last, with arc-length
        steps proportional to the reference's (plain step lengths: eq. 20
        prints their squares).
    """
    return _core.cloth_retime(as_float_array(path, "path"), as_float_array(reference, "reference"))


def curl_goals(cloth, x_at_tc, region, curl_deg, rotate_deg) -> np.ndarray:
    """Goals of a target pose (Fig. 5): a region curled and rotated.

    Parameters
    ----------
    cloth : ClothGrid
        The cloth.
    x_at_tc : array_like, shape (V, 3)
        The cloth's positions at the goal step (m), e.g. ``pilot.x[t_c]``.
    region : sequence of int
        The region's nodes (e.g. :func:`corner_region`).
    curl_deg : float
        Rotation (degrees) about the hinge where the region joins the cloth,
        lifting it towards the cloth normal. The hinge passes through the
        region's innermost node, perpendicular to the direction from the
        cloth's centre to the region's.
    rotate_deg : float
        Then a rotation (degrees) about the normal through the hinge point.

    Returns
    -------
    numpy.ndarray, shape (len(region), 3)
        The goals (m), in the order of ``region``.
    """
    _cloth(cloth)
    if region is None:
        raise TypeError("region must be a sequence of node indices, got None")
    x = as_float_array(x_at_tc, "x_at_tc")
    return _core.cloth_curl_goals(x, [integer(k, "region") for k in np.atleast_1d(region).tolist()],
                                  real(curl_deg, "curl_deg"), real(rotate_deg, "rotate_deg"))


def corner_region(cloth, size, corner=(0, 0)) -> list:
    """Node indices of a square patch at a corner of the grid.

    Parameters
    ----------
    cloth : ClothGrid
        The cloth.
    size : int
        Side of the patch in nodes, in [1, min(nx, ny)].
    corner : tuple of int
        (ci, cj), each 0 (low index end) or 1 (high end).

    Returns
    -------
    list of int
        The size * size node indices, row by row (j outer, i inner).
    """
    size = integer(size, "size")
    if isinstance(corner, (str, bytes)) or np.shape(corner) != (2,) or any(c not in (0, 1) for c in np.ravel(corner)):
        raise ValueError(f"corner must be (ci, cj) with each 0 or 1, got {corner!r}")
    if not 1 <= size <= min(cloth.nx, cloth.ny):
        raise ValueError(f"size must lie in [1, {min(cloth.nx, cloth.ny)}], got {size}")
    ci, cj = (int(c) for c in np.ravel(corner))
    i_range = range(size) if ci == 0 else range(cloth.nx - size, cloth.nx)
    j_range = range(size) if cj == 0 else range(cloth.ny - size, cloth.ny)
    return [j * cloth.nx + i for j in j_range for i in i_range]


__all__ = ["ClothGrid", "Sphere", "Plane", "ClothRollout", "ClothPlan", "PointMassRun", "control_window", "plan",
           "follow", "apply", "blend_path", "retime", "curl_goals", "corner_region"]
