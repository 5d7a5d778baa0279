"""Barbic & Popovic 2008 at the paper's own scale: the T-shape striking two
balls (figure 1) and the dinosaur's LQR vs PD with a final cost only
(sec. 6), on scenes of any size (``fem_scenes.PAPER_SIZE`` gives the
paper's; the tests use small ones). The offline parts go to an executor
(``directable.executors``).

    from directable.experiments import fem_scenes, paper_scale
    s = fem_scenes.t_shape_scene(r=10, T=100)
    hit = paper_scale.t_shape_strike(s)          # clearances to the balls (m)
    f = fem_scenes.plant_scene(r=10, T=200)
    bee = paper_scale.flower_bee(f)              # wind, a push, the bee's landing, two loops
    c = fem_scenes.creature_scene()
    cmp = paper_scale.lqr_vs_pd_final_cost(c)    # PD's effort at LQR's final error
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import lqr, models, sim
from .._validate import as_float_array, integer, real
from . import offline

__all__ = ["Balls", "strike_balls", "ball_clearance", "t_shape_strike", "leaf_vertices", "leaf_wind", "flower_bee",
           "lqr_vs_pd_final_cost"]


@dataclass(frozen=True)
class Balls:
    """Suspended balls the T's tips should strike.

    Parameters
    ----------
    centres : (m, 3) ndarray
        World positions (m).
    radius : float
        Radius (m).
    steps : (m,) ndarray
        Reference steps at which each tip touches its ball.
    """

    centres: np.ndarray
    radius: float
    steps: np.ndarray


def strike_balls(scene, radius=0.02, axis=0) -> Balls:
    """One ball per tip of the T, just beyond where the reference tip reaches farthest out.

    The left end's ball lies to -x, the right end's to +x; the reference tip
    touches the ball's surface at that step.

    Parameters
    ----------
    scene : fem_scenes.Scene
        The T-shape scene (``scene.tips``: the two ends of its bar).
    radius : float, optional
        Ball radius (m).
    axis : int, optional
        Direction of the swing.

    Returns
    -------
    Balls
    """
    radius = real(radius, "radius")
    ref = scene.tip_positions(scene.z_ref)  # (T+1, m, 3)
    rest = ref[0]
    centres, steps = [], []
    for j in range(ref.shape[1]):
        side = np.sign(rest[j, axis] - rest[:, axis].mean()) or 1.0
        t = int(np.argmax(side * ref[:, j, axis]))
        c = ref[t, j].copy()
        c[axis] += side * radius
        centres.append(c)
        steps.append(t)
    return Balls(np.array(centres), radius, np.array(steps))


def ball_clearance(scene, states, balls: Balls) -> np.ndarray:
    """The closest each tip comes to its ball's surface over a run.

    Parameters
    ----------
    scene : fem_scenes.Scene
        The scene.
    states : (k, 2r) array
        Reduced states of the run.
    balls : Balls
        From :func:`strike_balls`.

    Returns
    -------
    (m,) ndarray
        Clearance (m): <= 0 means the tip strikes the ball.
    """
    tips = scene.tip_positions(as_float_array(states, "states"))  # (k, m, 3)
    d = np.linalg.norm(tips - balls.centres[None], axis=2) - balls.radius
    return d.min(axis=0)


def t_shape_strike(scene, radius=0.02, push_force=384.0, push_lead=10, q=1e4, R=1e-4, balls=None) -> dict:
    """Figure 1: the T is pushed sideways (out of plane, ``push_force`` N in
    all, spread over its bar, for one step ``push_lead`` steps before the
    first strike: its effect has not died out when the tips should hit, at
    any T); LQR with an output cost on
    the tips at the strike steps brings both tips onto the balls, the
    uncontrolled T misses them.

    Parameters
    ----------
    scene : fem_scenes.Scene
        The T-shape scene.
    radius : float, optional
        Ball radius (m).
    push_force : float, optional
        Total push (N).
    push_lead : int, optional
        Steps between the push and the first strike.
    q : float, optional
        Weight of the tips' output cost at the strike steps.
    R : float or array, optional
        Control weight.
    balls : Balls, optional
        Default :func:`strike_balls`.

    Returns
    -------
    dict
        ``balls``; ``clearance`` {"reference", "lqr", "uncontrolled"}: (m,)
        closest approach of each tip to its ball's surface (m); ``runs``
        {"lqr", "uncontrolled"}: SimulationResults; ``solution``: the LQR.
    """
    s = scene
    T, r, dt = s.T, s.r, s.dt
    balls = strike_balls(s, radius) if balls is None else balls
    C = s.output_matrix()
    Q = np.zeros((T, 2 * r, 2 * r))
    for t in balls.steps:
        if t < T:
            Q[t] += q / dt * C.T @ C
    Q_final = (q * C.T @ C if T in balls.steps else 0.0) + 1e-9 * np.eye(2 * r)
    sol = lqr.solve_continuous(models.linearize(s.red, s.z_ref, dt), s.red.control_matrix(), dt, Q=Q, R=R,
                               Q_final=Q_final)
    f = np.zeros(s.model.dofs)
    f[3 * s.top + 1] = real(push_force, "push_force") / s.top.size
    push = s.push(max(0, int(balls.steps.min()) - int(push_lead)), f)
    unc = sim.simulate(s.red, s.z_ref[0], T, dt, open_loop=s.w_ff + push)
    con = sim.simulate(s.red, s.z_ref[0], T, dt, controller=lqr.tracker(sol, s.z_ref, s.w_ff), disturbance=push)
    return dict(balls=balls, solution=sol, runs=dict(lqr=con, uncontrolled=unc),
                clearance=dict(reference=ball_clearance(s, s.z_ref, balls), lqr=ball_clearance(s, con.states, balls),
                               uncontrolled=ball_clearance(s, unc.states, balls)))


def leaf_vertices(scene) -> np.ndarray:
    """The flower's leaf vertices: those outside the stem's column.

    Parameters
    ----------
    scene : fem_scenes.Scene
        A ``plant_scene`` (the stem's width is that of its top face).

    Returns
    -------
    (k,) ndarray of int
        Vertex indices.
    """
    X = np.asarray(scene.mesh.vertices)
    top = X[np.abs(X[:, 2] - X[:, 2].max()) <= 1e-9 * max(1.0, np.ptp(X[:, 2])), 0]  # the stem's top face
    half = (top.max() - top.min()) / 2
    return np.flatnonzero(np.abs(X[:, 0] - (top.max() + top.min()) / 2) > 1.01 * half)


def leaf_wind(scene, amplitude=2.0, seed=0, harmonics=4) -> np.ndarray:
    """Stochastic wind on the leaves (the paper's feed-forward that keeps them in constant motion).

    Each leaf vertex gets, in y and z, a sum of ``harmonics`` sines with
    random amplitudes and phases whose periods divide the horizon: the wind
    is periodic over ``T`` steps, so the looped motion stays seamless.

    Parameters
    ----------
    scene : fem_scenes.Scene
        A ``plant_scene``.
    amplitude : float, optional
        Total wind force on all leaves, RMS per direction (N).
    seed : int, optional
        Seed of the amplitudes and phases.
    harmonics : int, optional
        Sines per vertex and direction (periods T, T/2, ...).

    Returns
    -------
    (T, 3V) ndarray
        Full wind forces (N) per step.
    """
    amplitude = real(amplitude, "amplitude")
    harmonics = integer(harmonics, "harmonics")
    rng = np.random.default_rng(integer(seed, "seed"))
    leaves = leaf_vertices(scene)
    T = scene.T
    phase = 2 * np.pi * np.arange(T) / T                               # (T,)
    k = np.arange(1, harmonics + 1)
    a = rng.standard_normal((leaves.size, 2, harmonics)) / k           # (v, 2, K): slower sines stronger
    phi = rng.uniform(0, 2 * np.pi, (leaves.size, 2, harmonics))
    # (T, v, 2): random smooth periodic signals, then scaled to the requested RMS total
    sig = np.einsum("vdk,tvdk->tvd", a, np.sin(k * phase[:, None, None, None] + phi))
    sig *= amplitude / max(np.sqrt(np.mean(np.sum(sig, axis=1) ** 2)), 1e-300)
    f = np.zeros((T, scene.model.dofs))
    f[:, 3 * leaves + 1] = sig[:, :, 0]
    f[:, 3 * leaves + 2] = sig[:, :, 1]
    return f


def flower_bee(scene, wind=2.0, seed=0, leaf=1, land_fraction=0.7, push_force=None, push_lead=15, push_steps=3,
               q=1.0, q_land=1e4, R=1e-3, loops=2, bee_radius=0.01) -> dict:
    """Figure 4: the flower swings (its scripted loop), stochastic wind on
    the leaves is part of the feed-forward, a user pushes the stem hard,
    and a bee following a scripted space-time path lands on a leaf's tip
    only under control; the motion loops endlessly by rewinding the
    tracked time, the controller absorbing the seam.

    The reference is the reduced run under swing + wind; LQR tracks it
    (``q``: state weight) with an output cost ``q_land`` on the leaf's tip at
    the landing step. The bee flies in a straight line from above and to the
    side to the reference tip position at the landing step and stays there.

    Parameters
    ----------
    scene : fem_scenes.Scene
        A ``plant_scene`` (``PAPER_SIZE["flower"]`` is the paper's).
    wind : float, optional
        Wind amplitude (N), see :func:`leaf_wind`.
    seed : int, optional
        Seed of the wind.
    leaf : int, optional
        Which tip the bee lands on (``scene.tips[leaf]``; 0 is the stem's top).
    land_fraction : float, optional
        Landing step as a fraction of T.
    push_force : float, optional
        Total sideways (y) push on the stem's top (N), default twice the
        swing's peak force.
    push_lead : int, optional
        Steps between the push and the landing.
    push_steps : int, optional
        Steps the push lasts.
    q : float, optional
        Tracking weight on the reduced state (per coordinate).
    q_land : float, optional
        Output weight on the leaf tip at the landing step.
    R : float or array, optional
        Control weight.
    loops : int, optional
        Loops of the motion run back to back (the push in the first).
    bee_radius : float, optional
        Landing tolerance (m): the bee lands if the tip is this close.

    Returns
    -------
    dict
        ``land_step``; ``bee`` (T+1, 3) path (m); ``miss`` {"lqr",
        "uncontrolled"}: distance (m) of the leaf's tip from the bee at the
        landing step; ``landed`` {"lqr", "uncontrolled"}: bool; ``z_ref``
        (T+1, 2r) the reference with wind; ``w_ff`` (T, r) swing + wind;
        ``wind`` (T, 3V) the full wind force (N); ``seam``: relative state
        mismatch between the reference's last and first frames; ``loop_error``
        (loops, T+1): controlled tracking error ``|z - z_ref| / max |z_ref|``
        per loop; ``runs`` {"lqr", "uncontrolled"}: lists of one
        SimulationResult per loop; ``solution``: the LQR.
    """
    s = scene
    T, r, dt = s.T, s.r, s.dt
    leaf = integer(leaf, "leaf")
    if not 0 <= leaf < len(s.tips):
        raise ValueError(f"leaf must be in [0, {len(s.tips)}), got {leaf}")
    loops = integer(loops, "loops")
    if loops < 1:
        raise ValueError(f"loops must be >= 1, got {loops}")
    t_land = int(round(real(land_fraction, "land_fraction") * T))
    if not 0 < t_land <= T:
        raise ValueError(f"land_fraction must put the landing in (0, T], got step {t_land} of {T}")
    f_wind = leaf_wind(s, wind, seed)
    w_ff = s.w_ff + f_wind @ s.basis.U
    z_ref = models.rollout(s.red, s.z_ref[0], w_ff, dt)
    dofs = 3 * int(s.tips[leaf]) + np.arange(3)
    C = np.zeros((3, 2 * r))
    C[:, :r] = s.basis.U[dofs]
    Q = np.tile(q * np.eye(2 * r), (T, 1, 1))
    if t_land < T:
        Q[t_land] += q_land / dt * C.T @ C
    Q_final = q * np.eye(2 * r) + (q_land * C.T @ C if t_land == T else 0.0)
    sol = lqr.solve_continuous(models.linearize(s.red, z_ref, dt), s.red.control_matrix(), dt, Q=Q, R=R,
                               Q_final=Q_final)
    tracker = lqr.tracker(sol, z_ref, w_ff)
    # the bee: a straight flight onto the reference tip position at the landing step
    spot = s.tip_positions(z_ref[t_land])[0, leaf]
    X = np.asarray(s.mesh.vertices)
    start = spot + np.array([0.0, 0.5, 0.5]) * max(np.ptp(X[:, 2]), 1e-3)
    frac = np.clip(np.arange(T + 1) / t_land, 0.0, 1.0)[:, None]
    bee = start + frac * (spot - start)
    # the user's push on the stem's top, sideways
    f = np.zeros(s.model.dofs)
    amount = 2 * np.abs(s.forces).sum(axis=1).max() if push_force is None else real(push_force, "push_force")
    f[3 * s.top + 1] = amount / s.top.size
    push = s.push(max(0, t_land - integer(push_lead, "push_lead")), f, duration=integer(push_steps, "push_steps"))
    runs = dict(lqr=[], uncontrolled=[])
    z_con = z_unc = z_ref[0]
    for k in range(loops):  # each loop rewinds the tracked time to 0 and starts from where the last ended
        d = push if k == 0 else np.zeros_like(push)
        con = sim.simulate(s.red, z_con, T, dt, controller=tracker, disturbance=d)
        unc = sim.simulate(s.red, z_unc, T, dt, open_loop=w_ff + d)
        runs["lqr"].append(con)
        runs["uncontrolled"].append(unc)
        z_con, z_unc = con.states[-1], unc.states[-1]
    tip = lambda z: s.tip_positions(z)[0, leaf]  # noqa: E731
    miss = dict(lqr=float(np.linalg.norm(tip(runs["lqr"][0].states[t_land]) - spot)),
                uncontrolled=float(np.linalg.norm(tip(runs["uncontrolled"][0].states[t_land]) - spot)))
    scale = np.abs(z_ref).max()
    loop_error = np.array([np.linalg.norm(run.states - z_ref, axis=1) / scale for run in runs["lqr"]])
    return dict(land_step=t_land, bee=bee, miss=miss, landed={k: v <= bee_radius for k, v in miss.items()},
                z_ref=z_ref, w_ff=w_ff, wind=f_wind, seam=float(np.linalg.norm(z_ref[-1] - z_ref[0]) / scale),
                loop_error=loop_error, runs=runs, solution=sol)


def lqr_vs_pd_final_cost(scene, push_force=None, push_fraction=0.2, push_steps=3, q_final=1e3, R=1e-3,
                         kps=np.geomspace(1.0, 3e3, 12), zetas=(0.25, 0.5, 1.0, 2.0), executor=None,
                         progress=None) -> dict:
    """Section 6's dinosaur experiment on any scene: a sideways push of
    ``push_force`` N in all (default: the scripted force's peak) on the
    driven vertices for ``push_steps`` steps; zero position cost, a final
    cost on the tips only; LQR against every PD of a gain grid (kp
    per mode, kd = 2 zeta sqrt(kp): the basis is mass-orthonormal), run on
    ``executor``. Efforts are sum |w_fb|^2 dt of the feedback.

    Parameters
    ----------
    scene : fem_scenes.Scene
        The scene.
    push_force : float, optional
        Total push (N); default the scripted force's peak.
    push_fraction : float, optional
        When the push starts, as a fraction of the horizon.
    push_steps : int, optional
        Steps the push lasts.
    q_final : float, optional
        Final cost on the tips.
    R : float or array, optional
        Control weight.
    kps : (a,) array, optional
        PD stiffness per mode.
    zetas : sequence of float, optional
        Damping ratios: ``kd = 2 zeta sqrt(kp)``.
    executor : optional
        Where the PD runs go (``executors.map_tasks``).
    progress : None, bool or callable(done, total), optional
        Progress report.

    Returns
    -------
    dict
        ``lqr``: (final tip error (m), effort); ``open_loop_error`` (m);
        ``pd``: dict of the grid (``kp``, ``kd``, ``final_error``, ``effort``);
        ``pd_at_lqr_error``: the least effort of a PD reaching LQR's final
        error (inf if none) and ``effort_ratio`` = that / LQR's (paper: 6.3);
        ``pd_at_lqr_effort_error``: the least final error of a PD within
        LQR's effort.
    """
    s = scene
    T, r, dt = s.T, s.r, s.dt
    C = s.output_matrix()
    sol = lqr.solve_continuous(models.linearize(s.red, s.z_ref, dt), s.red.control_matrix(), dt,
                               Q=np.zeros((2 * r, 2 * r)), R=R, Q_final=q_final * C.T @ C + 1e-9 * np.eye(2 * r),
                               horizon=T)
    f = np.zeros(s.model.dofs)
    amount = np.abs(s.forces).sum(axis=1).max() if push_force is None else real(push_force, "push_force")
    f[3 * s.top + 1] = amount / s.top.size
    push = s.push(int(push_fraction * T), f, duration=push_steps)
    run = sim.simulate(s.red, s.z_ref[0], T, dt, controller=lqr.tracker(sol, s.z_ref, s.w_ff), disturbance=push)
    err = lambda z: float(np.linalg.norm(C @ (z - s.z_ref[-1])))  # noqa: E731
    e_lqr, j_lqr = err(run.states[-1]), float(np.sum(np.square(run.feedback)) * dt)
    e_open = err(sim.simulate(s.red, s.z_ref[0], T, dt, open_loop=s.w_ff + push).states[-1])
    grid = _pd_grid(s, kps, zetas, push, executor, progress)
    ok = grid["final_error"] <= e_lqr
    j_pd = float(grid["effort"][ok].min()) if ok.any() else float("inf")
    within = grid["effort"] <= j_lqr
    return dict(lqr=(e_lqr, j_lqr), open_loop_error=e_open, pd=grid, pd_at_lqr_error=j_pd, effort_ratio=j_pd / j_lqr,
                pd_at_lqr_effort_error=float(grid["final_error"][within].min()) if within.any() else float("inf"),
                solution=sol, run=run)


def _pd_grid(s, kps, zetas, push, executor, progress):
    kps = np.atleast_1d(as_float_array(kps, "kps"))
    spec = offline.reduced_solid_spec(s.model, s.basis.U)
    C = s.output_matrix()
    kp_all, kd_all, fin, eff = [], [], [], []
    for zeta in zetas:  # one grid per damping ratio: kd follows kp
        for kp in kps:
            kp_all.append(kp)
            kd_all.append(2 * zeta * np.sqrt(kp))
    out = offline.pd_runs(spec, kp_all, kd_all, s.z_ref, s.w_ff, s.z_ref[0], s.dt, push, executor, progress)
    for final, effort in out:
        fin.append(np.inf if final is None else float(np.linalg.norm(C @ (final - s.z_ref[-1]))))
        eff.append(np.inf if final is None else effort)
    return dict(kp=np.array(kp_all), kd=np.array(kd_all), final_error=np.array(fin), effort=np.array(eff))
