"""Scenes and experiments of Jeon & Choi's cloth control (Fig. 3, 4, 5 and
sec. 5), and the same goal solved by the library's optimal control (MPC with
Gauss-Newton, LQR with a final cost only).

Every scene returns a plain dict; every plot takes ``ax=None`` and returns
the Axes. Scene parameters are this library's choices (the paper gives
none): a cloth of 5 cm spacing and 10 g nodes, dt = 2 ms.
"""
from __future__ import annotations

import time

import numpy as np

from .. import cloth as dc
from .. import lqr, models, mpc


# -- measurements ----------------------------------------------------------------------------------------------------

def turning_angles(path) -> np.ndarray:
    """Angles between successive steps of a path.

    Parameters
    ----------
    path : array_like, shape (n+1, 3)
        Positions (m), one per step.

    Returns
    -------
    numpy.ndarray, shape (k,)
        The turning angle (degrees) at each interior point; steps shorter
        than 1e-12 m are skipped, so k <= n - 1 (empty for fewer than two steps).
    """
    d = np.diff(np.asarray(path, float), axis=0)
    d = d[np.linalg.norm(d, axis=1) > 1e-12]
    if len(d) < 2:
        return np.zeros(0)
    cos = np.einsum("ij,ij->i", d[1:], d[:-1]) / (np.linalg.norm(d[1:], axis=1) * np.linalg.norm(d[:-1], axis=1))
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def chord_over_arc(path) -> float:
    """Straightness of a path: chord over arc length.

    Parameters
    ----------
    path : array_like, shape (n+1, 3)
        Positions (m), one per step.

    Returns
    -------
    float
        |end - start| / arc length (dimensionless): 1 for a straight path
        (and for a path that does not move), smaller the more it bends.
    """
    path = np.asarray(path, float)
    arc = np.linalg.norm(np.diff(path, axis=0), axis=1).sum()
    return float(np.linalg.norm(path[-1] - path[0]) / arc) if arc > 0 else 1.0


def free_motion_residual(cloth, run, dt, controlled) -> float:
    """How far the free nodes of a run are from the free equation of motion.

    Parameters
    ----------
    cloth : directable.cloth.ClothGrid
        The cloth that made the run.
    run : ClothRollout or PointMassRun
        A symplectic run: ``.x``, ``.v`` of shape (T+1, V, 3) in m and m/s.
    dt : float
        Its step (s).
    controlled : sequence of int
        The controlled nodes (excluded, as the pinned ones are).

    Returns
    -------
    float
        max over steps and free nodes of |M a - F^A| / max |F^A| (relative,
        dimensionless), with a = (v_{i+1} - v_i) / dt and F^A at (x_i, v_i):
        0 to rounding when no hidden force acts.
    """
    free = np.ones(cloth.node_count, bool)
    free[list(controlled)] = False
    free[cloth.pinned] = False
    worst, scale = 0.0, 0.0
    for i in range(run.x.shape[0] - 1):
        F = cloth.forces(run.x[i], run.v[i])
        Ma = cloth.mass * (run.v[i + 1] - run.v[i]) / dt
        worst = max(worst, np.abs(Ma - F)[free].max())
        scale = max(scale, np.abs(F[free]).max())
    return worst / scale


# -- scenes ----------------------------------------------------------------------------------------------------------

def patch(n=20, pinned=(), origin=(0.0, 0.0, 0.0), k_struct=300.0, k_shear=60.0, k_bend=6.0, damping=0.02,
          spacing=0.05, mass=0.01) -> dc.ClothGrid:
    """The experiments' n x n cloth patch.

    Parameters
    ----------
    n : int
        Nodes per side.
    pinned : sequence of int
        Pinned node indices.
    origin : array_like, shape (3,)
        Position of node 0 (m).
    k_struct, k_shear, k_bend : float
        Spring stiffnesses (N/m).
    damping : float
        Damper along every spring (N s/m).
    spacing : float
        Rest distance of neighbours (m).
    mass : float
        Mass of each node (kg).

    Returns
    -------
    directable.cloth.ClothGrid
        The cloth, gravity (0, 0, -9.81) m/s^2, no secondary bending.
    """
    return dc.ClothGrid(n, n, spacing, mass, k_struct, k_shear, k_bend, damping, pinned=pinned, origin=origin)


def fig3_scene(n=20, steps=300, dt=0.002, offset=(0.15, 0.0, 0.25)):
    """Fig. 3: a free-falling n x n patch, no pins; one node dragged at t_c.

    Parameters
    ----------
    n : int
        Nodes per side.
    steps : int
        Steps of the pilot run.
    dt : float
        Time step (s).
    offset : array_like, shape (3,)
        The goal's offset (m) from node (0.7 n, n/2)'s pilot position at t_c = 5/6 of the run.

    Returns
    -------
    dict
        ``cloth`` (ClothGrid), ``dt`` (s), ``steps``, ``x0``, ``v0`` (V, 3), ``pilot`` (the pilot
        rollout), ``node``, ``t_c``, ``goal`` (3,) m, and ``plan_args`` (the keyword arguments of
        :func:`directable.cloth.plan` the scene uses).
    """
    cloth = patch(n)
    x0, v0 = cloth.positions0, np.zeros((cloth.node_count, 3))
    pilot = cloth.rollout(x0, v0, dt, steps)
    node = cloth.node(int(0.7 * n), n // 2)
    t_c = (5 * steps) // 6
    goal = pilot.x[t_c, node] + np.asarray(offset, float)
    return dict(cloth=cloth, dt=dt, steps=steps, x0=x0, v0=v0, pilot=pilot, node=node, t_c=t_c, goal=goal,
                plan_args=dict(alpha=1000.0, beta=1.0, gamma=1e-6, seek_angle=30.0))


def run_plan(scene, goals=None, **overrides):
    """:func:`directable.cloth.plan` and :func:`directable.cloth.apply` on a scene.

    Parameters
    ----------
    scene : dict
        A scene of this module (``fig3_scene``, ``fig4_scene``, ...).
    goals : list of (node, t_c, goal_xyz), optional
        The goals; None for the scene's own single goal.
    **overrides
        Keyword arguments of ``plan`` that replace the scene's ``plan_args``.

    Returns
    -------
    dict
        ``plan`` (ClothPlan), ``run`` (the second-phase PointMassRun over the scene's steps)
        and ``seconds`` (wall time of the plan, s).
    """
    args = dict(scene["plan_args"], **overrides)
    goals = goals if goals is not None else [(scene["node"], scene["t_c"], scene["goal"])]
    t = time.perf_counter()
    plan = dc.plan(scene["cloth"], scene["pilot"], goals, scene["dt"], **args)
    seconds = time.perf_counter() - t
    run = dc.apply(scene["cloth"], scene["x0"], scene["v0"], scene["dt"], scene["steps"], plan)
    return dict(plan=plan, run=run, seconds=seconds)


def fig3_edit(scene, result, lift=(0.0, 0.0, 0.05), weight=0.5):
    """Fig. 3(c): an edited path, blended with a user curve, re-timed and followed.

    Parameters
    ----------
    scene : dict
        :func:`fig3_scene`'s scene.
    result : dict
        :func:`run_plan`'s result on it.
    lift : array_like, shape (3,)
        Offset (m) of the two inner control points of the user curve (the
        others are the target path's start and the goal).
    weight : float
        Blend weight in [0, 1] of :func:`directable.cloth.blend_path`.

    Returns
    -------
    dict
        ``path`` (n+1, 3) the blended and re-timed path (m), ``blended`` (before re-timing),
        ``control_points`` (4, 3), ``plan`` (the second pass along it) and ``run`` (its second-phase run).
    """
    plan = result["plan"]
    k = 0
    start, end = plan.window_start[k] - plan.t_start, plan.window_end[k] - plan.t_start
    target = np.array(plan.targets[k, start:end + 1])
    idx = np.linspace(0, len(target) - 1, 4).round().astype(int)
    control = target[idx].copy()
    control[1:3] += np.asarray(lift, float)
    blended = dc.blend_path(target, control, weight)
    pilot_path = scene["pilot"].x[plan.window_start[k]:plan.window_end[k] + 1, plan.nodes[k]]
    edited = dc.retime(blended, pilot_path)
    paths = np.array(plan.targets)
    paths[k, start:end + 1] = edited
    followed = dc.follow(scene["cloth"], scene["pilot"], plan, paths, scene["dt"])
    run = dc.apply(scene["cloth"], scene["x0"], scene["v0"], scene["dt"], scene["steps"], followed)
    return dict(path=edited, blended=blended, control_points=control, plan=followed, run=run)


def fig3_two_nodes(scene, second_offset=(-0.1, 0.1, 0.2)):
    """Fig. 3(e): a second node (the first's mirror) with an overlapping window.

    Parameters
    ----------
    scene : dict
        :func:`fig3_scene`'s scene.
    second_offset : array_like, shape (3,)
        The second goal's offset (m) from its node's pilot position at t_c - 10.

    Returns
    -------
    dict
        :func:`run_plan`'s result for both goals, planned jointly.
    """
    cloth, n = scene["cloth"], scene["cloth"].nx
    node2 = cloth.node(n - 1 - int(0.7 * n), n // 2)
    t2 = scene["t_c"] - 10
    goal2 = scene["pilot"].x[t2, node2] + np.asarray(second_offset, float)
    goals = [(scene["node"], scene["t_c"], scene["goal"]), (node2, t2, goal2)]
    return run_plan(scene, goals=goals)


def fig4_scene(n=20, steps=1000, dt=0.0005, radius=0.25, stiffness=6e4, friction=0.3, window=50):
    """Fig. 4: the patch, centred 3 cm above a sphere, falls on it and its
    corners droop and curl; node (0, 0), the corner, is moved to uncurl it:
    its goal continues the corner's diagonal straight, one rest diagonal
    beyond node (1, 1) along the direction from node (2, 2) (pilot positions
    at t_c). alpha is chosen so that the control window is ``window`` steps.
    The penalty stiffness keeps every node within 1 % of the radius of the
    surface (dt below the contact's stability limit 2 sqrt(m / stiffness)).

    Parameters
    ----------
    n : int
        Nodes per side.
    steps : int
        Steps of the pilot run; t_c = 4/5 of it.
    dt : float
        Time step (s).
    radius : float
        Sphere radius (m).
    stiffness : float
        Penalty stiffness of the sphere (N/m).
    friction : float
        Coulomb coefficient of the sphere.
    window : int
        The control window (steps) that alpha is chosen for.

    Returns
    -------
    dict
        ``cloth`` (ClothGrid), ``dt`` (s), ``steps``, ``x0``, ``v0`` (V, 3), ``pilot`` (the pilot
        rollout), ``node``, ``t_c``, ``goal`` (3,) m, and ``plan_args`` (the keyword arguments of
        :func:`directable.cloth.plan` the scene uses), and ``radius``.
    """
    spacing = 0.05
    half = 0.5 * spacing * (n - 1)
    cloth = patch(n, origin=(-half, -half, radius + 0.03), spacing=spacing)
    cloth.add_collider(dc.Sphere((0.0, 0.0, 0.0), radius, stiffness, friction))
    x0, v0 = cloth.positions0, np.zeros((cloth.node_count, 3))
    pilot = cloth.rollout(x0, v0, dt, steps)
    node = cloth.node(0, 0)
    t_c = (4 * steps) // 5
    X = pilot.x[t_c]
    q1, q2 = X[cloth.node(1, 1)], X[cloth.node(2, 2)]
    goal = q1 + np.sqrt(2.0) * spacing * (q1 - q2) / np.linalg.norm(q1 - q2)
    alpha = window / max(np.sum((goal - X[node]) ** 2), 1e-12)
    return dict(cloth=cloth, dt=dt, steps=steps, x0=x0, v0=v0, pilot=pilot, node=node, t_c=t_c, goal=goal,
                radius=radius, plan_args=dict(alpha=alpha, beta=1.0, gamma=1e-6, seek_angle=30.0))


def corner_bend(cloth, x, corner=(0, 0)) -> float:
    """How much a corner of the cloth curls.

    Parameters
    ----------
    cloth : directable.cloth.ClothGrid
        The cloth.
    x : array_like, shape (V, 3)
        Node positions (m).
    corner : tuple of int
        (0 or 1, 0 or 1): which corner, 0 for the low index and 1 for the
        high one along i and j.

    Returns
    -------
    float
        The angle (degrees) between the diagonal edges corner-(1,1) and
        (1,1)-(2,2) counted inward from the corner: 0 when the corner
        continues its diagonal straight.
    """
    ci, cj = corner
    di, dj = (1 if ci == 0 else -1), (1 if cj == 0 else -1)
    i0, j0 = (0 if ci == 0 else cloth.nx - 1), (0 if cj == 0 else cloth.ny - 1)
    path = [cloth.node(i0 + k * di, j0 + k * dj) for k in range(3)]
    return float(turning_angles(np.asarray(x)[path])[0])


def sphere_depth(x, radius, center=(0.0, 0.0, 0.0)) -> float:
    """Deepest penetration of any node into a sphere.

    Parameters
    ----------
    x : array_like, shape (..., V, 3)
        Node positions (m), e.g. a whole run (T+1, V, 3).
    radius : float
        Sphere radius (m).
    center : array_like, shape (3,)
        Sphere centre (m).

    Returns
    -------
    float
        The largest depth (m) of a node inside the sphere, 0 when none is.
    """
    r = np.linalg.norm(np.asarray(x) - np.asarray(center), axis=-1)
    return float(max(0.0, (radius - r).max()))


def fig5_scene(n=20, region=5, steps=300, dt=0.002, curl_deg=60.0, rotate_deg=30.0):
    """Fig. 5: a corner region given a target pose (curl and rotate).

    A patch pinned along its far edge swings down; the region x region corner
    patch at (0, 0) gets the goals of :func:`directable.cloth.curl_goals` at t_c.

    Parameters
    ----------
    n : int
        Nodes per side.
    region : int
        Side of the corner patch (nodes).
    steps : int
        Steps of the pilot run; t_c = 2/3 of it.
    dt : float
        Time step (s).
    curl_deg, rotate_deg : float
        The pose's curl and rotate angles (degrees).

    Returns
    -------
    dict
        ``cloth``, ``dt`` (s), ``steps``, ``x0``, ``v0``, ``pilot``, ``nodes`` (the region), ``t_c``,
        ``goals`` (a list of (node, t_c, goal_xyz)) and ``plan_args``.
    """
    cloth = patch(n, pinned=[(n - 1) * n + i for i in range(n)])
    x0, v0 = cloth.positions0, np.zeros((cloth.node_count, 3))
    pilot = cloth.rollout(x0, v0, dt, steps)
    nodes = dc.corner_region(cloth, region)
    t_c = (2 * steps) // 3
    goals_xyz = dc.curl_goals(cloth, pilot.x[t_c], nodes, curl_deg, rotate_deg)
    goals = [(k, t_c, g) for k, g in zip(nodes, goals_xyz)]
    return dict(cloth=cloth, dt=dt, steps=steps, x0=x0, v0=v0, pilot=pilot, nodes=nodes, t_c=t_c, goals=goals,
                plan_args=dict(alpha=1000.0, beta=1.0, gamma=1e-6, seek_angle=30.0))


# -- parameters (paper sec. 5) ---------------------------------------------------------------------------------------

def gamma_sweep(scene, gammas, f_max):
    """The plan's outcome per force weight gamma under a force limit (paper sec. 5).

    Parameters
    ----------
    scene : dict
        A single-goal scene (:func:`fig3_scene`).
    gammas : sequence of float
        Force weights (per N^2).
    f_max : float
        Force limit (N).

    Returns
    -------
    list of dict
        Per gamma: ``gamma``, ``final_distance`` (m) and ``reached`` (bool).
    """
    rows = []
    for g in gammas:
        p = dc.plan(scene["cloth"], scene["pilot"], [(scene["node"], scene["t_c"], scene["goal"])], scene["dt"],
                    **dict(scene["plan_args"], gamma=g, f_max=f_max))
        rows.append(dict(gamma=g, final_distance=float(p.final_distance[0]), reached=bool(p.reached[0])))
    return rows


def straightness(scene, beta=1.0, gamma=1e-12, seek_angle=90.0):
    """Straightness of the path when the goal weight dominates (beta >> gamma).

    Parameters
    ----------
    scene : dict
        A single-goal scene (:func:`fig3_scene`).
    beta, gamma : float
        Weights of eq. 19 (per m^2, per N^2).
    seek_angle : float
        The constant seek angle (degrees; widen = 0).

    Returns
    -------
    dict
        ``chord_over_arc`` of the first-pass path up to its closest approach, and the ``plan``.
    """
    p = dc.plan(scene["cloth"], scene["pilot"], [(scene["node"], scene["t_c"], scene["goal"])], scene["dt"],
                **dict(scene["plan_args"], beta=beta, gamma=gamma, seek_angle=seek_angle, widen=0.0))
    c = p.closest_step[0]
    start = p.window_start[0] - p.t_start
    return dict(chord_over_arc=chord_over_arc(p.generated[0, start:start + c + 1]), plan=p)


def widening(scene, widens=(0.0, 0.3, 0.6, 1.0), beta=1.0, gamma=1e-9, seek_angle=90.0):
    """Turning angles (degrees) of the generated path up to its closest approach,
    the pilot's step into the window included (so a sharp first turn counts),
    per widen fraction (0: the constant angle theta_max from the first step).

    Parameters
    ----------
    scene : dict
        A single-goal scene (:func:`fig3_scene`).
    widens : sequence of float
        Fractions of the window over which the seek angle grows to theta_max.
    beta, gamma : float
        Weights of eq. 19 (per m^2, per N^2).
    seek_angle : float
        theta_max (degrees).

    Returns
    -------
    list of dict
        Per fraction: ``widen``, ``mean_turning`` and ``max_turning`` (degrees).
    """
    rows = []
    node = scene["node"]
    for w in widens:
        p = dc.plan(scene["cloth"], scene["pilot"], [(node, scene["t_c"], scene["goal"])], scene["dt"],
                    **dict(scene["plan_args"], widen=w, beta=beta, gamma=gamma, seek_angle=seek_angle))
        start = p.window_start[0] - p.t_start
        path = np.vstack([scene["pilot"].x[p.window_start[0] - 1, node][None],
                          p.generated[0, start:start + p.closest_step[0] + 1]])
        angles = turning_angles(path)
        rows.append(dict(widen=w, mean_turning=float(angles.mean()), max_turning=float(angles.max())))
    return rows


# -- beyond the paper: the heuristic against MPC and LQR ------------------------------------------------------------

def comparison_scene(n=10, steps=150, dt=0.002, offset=(0.08, 0.05, 0.1)):
    """The scene of the heuristic against MPC and LQR.

    An n x n patch (6V states) soft enough that MPC's explicit Euler
    predictor stays stable over the window; node (n/2, n/2) dragged at t_c.

    Parameters
    ----------
    n : int
        Nodes per side.
    steps : int
        Steps of the pilot run; t_c = steps - 10.
    dt : float
        Time step (s).
    offset : array_like, shape (3,)
        The goal's offset (m) from the node's pilot position at t_c.

    Returns
    -------
    dict
        ``cloth`` (ClothGrid), ``dt`` (s), ``steps``, ``x0``, ``v0`` (V, 3), ``pilot`` (the pilot
        rollout), ``node``, ``t_c``, ``goal`` (3,) m, and ``plan_args`` (the keyword arguments of
        :func:`directable.cloth.plan` the scene uses).
    """
    cloth = dc.ClothGrid(n, n, 0.1, 0.02, 20.0, 5.0, 1.0, 0.05)
    x0, v0 = cloth.positions0, np.zeros((cloth.node_count, 3))
    pilot = cloth.rollout(x0, v0, dt, steps)
    node = cloth.node(n // 2, n // 2)
    t_c = steps - 10
    goal = pilot.x[t_c, node] + np.asarray(offset, float)
    return dict(cloth=cloth, dt=dt, steps=steps, x0=x0, v0=v0, pilot=pilot, node=node, t_c=t_c, goal=goal,
                plan_args=dict(alpha=2000.0, beta=1.0, gamma=1e-6, seek_angle=30.0))


def _outcome(scene, t_start, u_node, seconds, method):
    """Applies node forces u_node (H, 3) from t_start on the true (symplectic) cloth."""
    cloth, node, dt = scene["cloth"], scene["node"], scene["dt"]
    H = len(u_node)
    u = np.zeros((H, cloth.node_count, 3))
    u[:, node] = u_node
    run = cloth.rollout(scene["pilot"].x[t_start], scene["pilot"].v[t_start], dt, H, u=u)
    path = run.x[:, node]
    incoming = scene["pilot"].x[t_start - 1, node][None] if t_start > 0 else path[:0]
    return dict(method=method, effort=float(np.sum(u_node ** 2) * dt),
                final_error=float(np.linalg.norm(path[-1] - scene["goal"])),
                mean_turning=float(turning_angles(np.vstack([incoming, path])).mean()), seconds=seconds, path=path,
                u=u_node)


def _hit(scene, ts, solve, target, corrections, method):
    """Runs solve(target) -> node forces (H, 3) and moves the target by a
    Broyden (secant) update of d(final position)/d(target), starting from I,
    until the cloth's final node position hits the goal (``corrections`` passes)."""
    goal = np.asarray(scene["goal"], float)
    J = np.eye(3)
    target = np.array(target, float)
    out = _outcome(scene, ts, solve(target), 0.0, method)
    for _ in range(corrections):
        miss = goal - out["path"][-1]
        step = np.linalg.solve(J, miss)
        new = _outcome(scene, ts, solve(target + step), 0.0, method)
        dy = new["path"][-1] - out["path"][-1]
        J += np.outer(dy - J @ step, step) / max(step @ step, 1e-300)
        target, out = target + step, new
    return out


def compare_optimal(scene, rho=1e-3, terminal=1e6, corrections=4):
    """The same single-node goal three ways: the heuristic, MPC and LQR.

    Parameters
    ----------
    scene : dict
        :func:`comparison_scene`'s scene.
    rho : float
        Control weight R = rho I of MPC and LQR (per N^2).
    terminal : float
        Final weight on the node's position (per m^2).
    corrections : int
        Secant target corrections of MPC and LQR (see below).

    Returns
    -------
    list of dict
        Per method: ``method``, ``effort`` (sum |u|^2 dt, N^2 s), ``final_error``
        (m, on the symplectic cloth), ``mean_turning`` (degrees, the pilot's step
        into the window included), ``seconds`` (wall time of the solve,
        corrections included), ``path`` (H+1, 3) m and ``u`` (H, 3) N.

    Notes
    -----

    MPC: ``HorizonOptimizer(EulerModel(cloth.as_model([j]), dt), horizon=T_r,
    Q=0, R=rho, C=terminal on the node's position, method="gauss_newton")``,
    one window solved and applied open loop to the cloth. LQR:
    ``lqr.solve_continuous`` on the linearisation along the pilot (exact
    discretisation), Q = 0, the same R and final weight; the final offset is
    carried back along the free linear motion, r_i = Phi_i^-1 r_{i+1}, and
    the optimal control of the linear model, u = K (dz - r) along its own
    closed loop, is applied open loop to the cloth. Both predict with a model that is
    not the symplectic cloth (explicit Euler; a linearisation), so both get
    ``corrections`` passes that move their target by a secant (Broyden)
    step on the miss measured on the cloth: the errors then match the
    heuristic's closely and the efforts compare at (nearly) equal final error.
    """
    cloth, node, dt = scene["cloth"], scene["node"], scene["dt"]
    t0 = time.perf_counter()
    plan = dc.plan(cloth, scene["pilot"], [(node, scene["t_c"], scene["goal"])], dt, **scene["plan_args"])
    t_heur = time.perf_counter() - t0
    ts, H = plan.t_start, plan.t_end - plan.t_start
    rows = [_outcome(scene, ts, np.array(plan.forces[:, 0]), t_heur, "heuristic")]
    pos = slice(3 * node, 3 * node + 3)

    V = cloth.node_count
    n = 6 * V
    model = cloth.as_model([node])
    z0 = np.concatenate([scene["pilot"].x[ts].ravel(), scene["pilot"].v[ts].ravel()])
    C = np.zeros(n)
    C[pos] = terminal
    t0 = time.perf_counter()
    opt = mpc.HorizonOptimizer(mpc.EulerModel(model, dt), horizon=H, Q=0.0, R=rho, C=C, method="gauss_newton",
                               iterations=10)

    def solve_mpc(target):
        reference = np.zeros((H + 1, n))
        reference[-1, pos] = target
        return np.array(opt.solve(z0, reference).u)

    out = _hit(scene, ts, solve_mpc, scene["goal"], corrections, "MPC (Gauss-Newton)")
    out["seconds"] = time.perf_counter() - t0
    rows.append(out)

    t0 = time.perf_counter()
    z_ref = np.concatenate([scene["pilot"].x[ts:ts + H + 1].reshape(H + 1, -1),
                            scene["pilot"].v[ts:ts + H + 1].reshape(H + 1, -1)], axis=1)
    A = models.linearize(model, z_ref, dt)
    B = np.asarray(model.control_matrix())
    Qf = np.zeros((n, n))
    Qf[pos, pos] = terminal * np.eye(3)
    disc = lqr.discretize(A, B, dt, np.zeros((n, n)), rho * np.eye(3))
    K = np.asarray(disc.solve(Qf).K)
    # the free linear motion carried back from a unit offset of each coordinate of the node
    back = np.zeros((H + 1, n, 3))
    back[-1, pos] = np.eye(3)
    for i in range(H - 1, -1, -1):
        back[i] = np.linalg.solve(disc.Phi[i], back[i + 1])
    Phi, Gamma = np.asarray(disc.Phi), np.asarray(disc.Gamma)

    def solve_lqr(target):
        # the optimal control of the linear model (its closed loop from dz = 0), applied open loop to the cloth
        r = back @ (target - z_ref[-1, pos])
        dz = np.zeros(n)
        u_lqr = np.zeros((H, 3))
        for i in range(H):
            u_lqr[i] = K[i] @ (dz - r[i])
            dz = Phi[i] @ dz + Gamma[i] @ u_lqr[i]
        return u_lqr

    out = _hit(scene, ts, solve_lqr, scene["goal"], corrections, "LQR (final cost)")
    out["seconds"] = time.perf_counter() - t0
    rows.append(out)
    return rows


# -- plots -----------------------------------------------------------------------------------------------------------

def _axes3d(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        ax = plt.figure(figsize=(5.0, 4.5)).add_subplot(projection="3d")
    return ax


def plot_cloth(cloth, x, ax=None, color="tab:blue", alpha=0.6, label=None):
    """The cloth as a 3D surface.

    Parameters
    ----------
    cloth : directable.cloth.ClothGrid
        The cloth (its grid gives the surface's connectivity).
    x : array_like, shape (V, 3)
        Node positions (m).
    ax : mpl_toolkits.mplot3d.Axes3D, optional
        Where to draw; a new figure's 3D axes when None.
    color : str
        Surface colour.
    alpha : float
        Surface opacity in [0, 1].
    label : str, optional
        Legend entry.

    Returns
    -------
    mpl_toolkits.mplot3d.Axes3D
        The axes, labelled in m.
    """
    ax = _axes3d(ax)
    X = np.asarray(x).reshape(cloth.ny, cloth.nx, 3)
    ax.plot_surface(X[..., 0], X[..., 1], X[..., 2], color=color, alpha=alpha, linewidth=0.2, edgecolor="k")
    if label:
        ax.plot([], [], color=color, label=label)
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_zlabel("z (m)")
    return ax


def plot_paths(paths, goal=None, ax=None):
    """Node paths in 3D (Fig. 3's coloured lines).

    Parameters
    ----------
    paths : dict of str to array_like, shape (n+1, 3)
        Label -> positions (m); "pilot", "generated", "edited" and
        "re-timed" get the figure's colours.
    goal : array_like, shape (3,), optional
        The goal (m), drawn as a cross.
    ax : mpl_toolkits.mplot3d.Axes3D, optional
        Where to draw; a new figure's 3D axes when None.

    Returns
    -------
    mpl_toolkits.mplot3d.Axes3D
        The axes, labelled in m, with a legend.
    """
    ax = _axes3d(ax)
    colors = {"pilot": "tab:green", "generated": "tab:cyan", "edited": "tab:orange", "re-timed": "tab:red"}
    for label, p in paths.items():
        p = np.asarray(p)
        ax.plot(p[:, 0], p[:, 1], p[:, 2], color=colors.get(label), label=label)
    if goal is not None:
        ax.scatter(*np.asarray(goal), color="k", marker="x", s=40, label="goal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_zlabel("z (m)")
    ax.legend(loc="upper left", fontsize=8)
    return ax


def plot_sweep(rows, x, y, ax=None, xlabel=None, ylabel=None, logx=False):
    """A parameter sweep as one quantity against another.

    Parameters
    ----------
    rows : list of dict
        The sweep, one dict per value (e.g. :func:`gamma_sweep`'s rows).
    x, y : str
        The keys plotted on the horizontal and vertical axes.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure's axes when None.
    xlabel, ylabel : str, optional
        Axis labels with units (default: the keys).
    logx : bool
        Logarithmic horizontal axis.

    Returns
    -------
    matplotlib.axes.Axes
        The axes.
    """
    if ax is None:
        import matplotlib.pyplot as plt

        ax = plt.figure(figsize=(4.5, 3.2)).add_subplot()
    ax.plot([r[x] for r in rows], [r[y] for r in rows], "o-")
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    return ax


def plot_comparison(rows, ax=None):
    """Node force magnitude against step for each method of :func:`compare_optimal`.

    Parameters
    ----------
    rows : list of dict
        :func:`compare_optimal`'s result: each with "method", "effort"
        (N^2 s) and "u" of shape (H, 3) (N).
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure's axes when None.

    Returns
    -------
    matplotlib.axes.Axes
        The axes: |u| (N) against the step in the window.
    """
    if ax is None:
        import matplotlib.pyplot as plt

        ax = plt.figure(figsize=(5.5, 3.2)).add_subplot()
    for r in rows:
        ax.plot(np.linalg.norm(r["u"], axis=1), label=f"{r['method']}: effort {r['effort']:.3g} N^2 s")
    ax.set_xlabel("step in the window")
    ax.set_ylabel("|u| (N)")
    ax.legend(fontsize=8)
    return ax


__all__ = ["turning_angles", "chord_over_arc", "free_motion_residual", "patch", "fig3_scene", "run_plan", "fig3_edit",
           "fig3_two_nodes", "fig4_scene", "corner_bend", "sphere_depth", "fig5_scene", "gamma_sweep", "straightness", "widening",
           "comparison_scene", "compare_optimal", "plot_cloth", "plot_paths", "plot_sweep", "plot_comparison"]
