"""Barbic & Popovic 2008 at the paper's own scale: the T-shape striking two
balls (figure 1) and the dinosaur's LQR vs PD with a final cost only
(sec. 6), on scenes of any size (``fem_scenes.PAPER_SIZE`` gives the
paper's; the tests use small ones). The offline parts go to an executor
(``directable.executors``).

    from directable.experiments import fem_scenes, paper_scale
    s = fem_scenes.t_shape_scene(r=10, T=100)
    hit = paper_scale.t_shape_strike(s)          # clearances to the balls (m)
    c = fem_scenes.creature_scene()
    cmp = paper_scale.lqr_vs_pd_final_cost(c)    # PD's effort at LQR's final error
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import lqr, models, sim
from .._validate import as_float_array, real
from . import offline

__all__ = ["Balls", "strike_balls", "ball_clearance", "t_shape_strike", "lqr_vs_pd_final_cost"]


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
