"""MPC against the time-varying LQR tracker on the reduced deformable T-shape
(beyond the paper).

Both controllers track the same reduced reference ``z_ref`` of
:func:`directable.experiments.fem_scenes.t_shape_scene` (the bar swung sideways by a
feed-forward ``w_ff``) with the same weights, while a push hits the bar
out of plane:

- LQR: gains precomputed once on the linearization along ``z_ref``
  (:func:`directable.lqr.solve_continuous`), ``w = w_ff + K (z - z_ref)``.
- MPC: every step a window of ``horizon`` steps is optimised from the actual
  state with Gauss-Newton (iLQR) steps on the *nonlinear* reduced model
  (explicit Euler in ``substeps`` steps per control step,
  :func:`directable.mpc.Substeps`), so the linearization follows the pushed
  state; the controls correct the feed-forward (``u_reference = w_ff``, the
  control term is ``||w - w_ff||^2_R`` as for the LQR).

The plant is the reduced model's own implicit Newmark step for both. A small
push keeps the state near ``z_ref``, where the LQR linearization holds; a
large one moves the T far from it (the reduced StVK forces are cubic in the
displacement) and the precomputed gains act on a linearization that no longer
describes the state.

    from directable.experiments import mpc_vs_lqr as me
    res = me.mpc_vs_lqr(push=24.0)      # small push
    res.error["lqr"], res.error["mpc"]  # (T+1,) tip distance to the reference (m)
    res.effort                          # {"lqr": ..., "mpc": ...}: sum |w - w_ff|^2 dt
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .. import lqr, models, mpc
from .._validate import integer, real


@dataclass(frozen=True)
class Comparison:
    """LQR and MPC tracking the same reference under the same push.

    Parameters
    ----------
    t : (T+1,) ndarray
        Times (s).
    error : dict
        {"open loop", "lqr", "mpc"}: (T+1,) largest tip distance to the reference (m).
    states : dict
        {name: (T+1, 2r) ndarray} reduced states.
    feedback : dict
        {"lqr", "mpc"}: (T, r) ``w - w_ff``.
    effort : dict
        {"lqr", "mpc"}: sum of |w - w_ff|^2 dt.
    seconds : dict
        {"lqr", "mpc"}: controller time (LQR: gain precomputation; MPC: all window solves).
    push : (T, r) ndarray
        Reduced disturbance.
    push_at : int
        Step of the push.
    iterations : ndarray, optional
        MPC iterations per step.
    """

    t: np.ndarray
    error: dict
    states: dict
    feedback: dict
    effort: dict
    seconds: dict
    push: np.ndarray
    push_at: int
    iterations: np.ndarray = field(default=None)

    def mean_error(self, name, start=None) -> float:
        """Mean tip error of one controller from a step on.

        Parameters
        ----------
        name : {"open loop", "lqr", "mpc"}
            Which run.
        start : int, optional
            First step (default: the push).

        Returns
        -------
        float
            Mean tip distance (m).
        """
        s = self.push_at if start is None else int(start)
        return float(self.error[name][s:].mean())


def tip_error(scene, states) -> np.ndarray:
    """Largest distance of the scene's tips from the reference's tips.

    Parameters
    ----------
    scene : fem_scenes.Scene
        The scene (its reference and tip vertices).
    states : (k, 2r) array
        Reduced states.

    Returns
    -------
    (k,) ndarray
        Distances (m).
    """
    ref = scene.tip_positions(scene.z_ref[:len(states)])
    got = scene.tip_positions(states)
    return np.linalg.norm(got - ref, axis=2).max(axis=1)


def mpc_vs_lqr(push=24.0, scene=None, horizon=10, iterations=3, substeps=50, q=1e4, r=1e-3, push_at=None,
               push_duration=1, terminal=10.0) -> Comparison:
    """Tracks a scene's reference with the LQR tracker and with receding-horizon MPC under the same push.

    Weights (continuous, as the LQR's): ``Q = q C'C`` on the tip
    displacements (C = ``scene.output_matrix()``) plus ``1e-6 q`` on every
    state, ``R = r I`` on ``w - w_ff``, LQR ``Q_final = Q``. MPC uses the
    same per step (``Q dt``, ``R dt``) and ``C = terminal Q dt`` at the
    window's end.

    Parameters
    ----------
    push : float, optional
        Force (N) on every bar vertex, out of plane (y).
    scene : fem_scenes.Scene, optional
        Default ``fem_scenes.t_shape_scene(r=10, T=100, dt=0.02)``.
    horizon : int, optional
        MPC window (steps).
    iterations : int, optional
        Gauss-Newton steps per window (warm-started).
    substeps : int, optional
        Explicit Euler steps per control step in the prediction.
    q, r : float, optional
        Weights, as above.
    push_at : int, optional
        Step of the push (default T // 5).
    push_duration : int, optional
        Steps the push lasts.
    terminal : float, optional
        Factor of MPC's terminal weight.

    Returns
    -------
    Comparison
    """
    from .. import sim
    from .fem_scenes import t_shape_scene

    push_v = real(push, "push")
    if not np.isfinite(push_v):
        raise ValueError(f"push must be a finite force (N), got {push!r}")
    H, its, sub = integer(horizon, "horizon"), integer(iterations, "iterations"), integer(substeps, "substeps")
    if H < 1:
        raise ValueError(f"horizon must be >= 1, got {horizon!r}")
    if sub < 1:
        raise ValueError(f"substeps must be >= 1, got {substeps!r}")
    q, r, terminal = real(q, "q"), real(r, "r"), real(terminal, "terminal")
    if not (q > 0 and r > 0 and terminal >= 0 and np.isfinite(q + r + terminal)):
        raise ValueError(f"q and r must be > 0 and terminal >= 0 (finite), got q={q!r}, r={r!r}, terminal={terminal!r}")
    s = t_shape_scene(r=10, T=100, dt=0.02) if scene is None else scene
    T, dt, n, m = s.T, s.dt, 2 * s.r, s.r
    at = T // 5 if push_at is None else integer(push_at, "push_at")
    if not 0 <= at < T:
        raise ValueError(f"push_at must be in [0, {T}), got {push_at!r}")
    f = np.zeros(s.model.dofs)
    f[3 * s.top + 1] = push_v
    dist = s.push(at, f, duration=integer(push_duration, "push_duration"))
    Cout = s.output_matrix()
    Q = q * Cout.T @ Cout + 1e-6 * q * np.eye(n)
    B = s.red.control_matrix()

    # LQR: gains once, on the linearization along z_ref
    t0 = time.perf_counter()
    sol = lqr.solve_continuous(models.linearize(s.red, s.z_ref, dt), B, dt, Q=Q, R=r, Q_final=Q)
    ctrl = lqr.tracker(sol, s.z_ref, s.w_ff)
    t_lqr = time.perf_counter() - t0
    run_lqr = sim.simulate(s.red, s.z_ref[0], T, dt, controller=ctrl, disturbance=dist)
    run_open = sim.simulate(s.red, s.z_ref[0], T, dt, open_loop=s.w_ff + dist)

    # MPC: nonlinear prediction, re-linearised every window (iLQR), plant = Newmark
    pred = mpc.Substeps(mpc.EulerModel(s.red, dt / sub), sub)
    opt = mpc.HorizonOptimizer(pred, H, Q * dt, r * dt * np.ones(m), terminal * Q * dt, iterations=its,
                               method="gauss_newton")
    # windows past the end: the feed-forward held, the reference continued by the model under it
    tail = np.repeat(s.w_ff[-1:], H, axis=0)
    ref = np.vstack([s.z_ref, models.rollout(s.red, s.z_ref[-1], tail, dt)[1:]])
    w_ff = np.vstack([s.w_ff, tail])
    # one closed-loop call: the first window starts on the feed-forward, later ones warm-start
    run = opt.run(s.red, s.z_ref[0], ref, T, u_reference=w_ff, u0=w_ff[:H], dt=dt, disturbance=dist)
    X = {"open loop": run_open.states, "lqr": run_lqr.states, "mpc": run.states}
    feedback = {"lqr": np.asarray(run_lqr.feedback), "mpc": run.controls - s.w_ff}
    return Comparison(
        t=np.arange(T + 1) * dt, error={k: tip_error(s, v) for k, v in X.items()}, states=X, feedback=feedback,
        effort={k: float(np.sum(v ** 2) * dt) for k, v in feedback.items()},
        seconds={"lqr": t_lqr, "mpc": float(run.seconds.sum())}, push=dist, push_at=at, iterations=run.iterations)


def plot_comparison(results, ax=None, log=True):
    """Tip error over time: LQR solid, MPC dashed, open loop dotted.

    Parameters
    ----------
    results : dict of str to Comparison
        E.g. a small and a large push.
    ax : matplotlib Axes, optional
        Where to draw (a new figure when None).
    log : bool, optional
        Logarithmic error axis.

    Returns
    -------
    matplotlib.axes.Axes
    """
    from ..plotting import _axes

    ax = _axes(ax)
    for i, (label, c) in enumerate(results.items()):
        col = f"C{i}"
        ax.plot(c.t, c.error["open loop"], ":", color=col, lw=1, label=f"{label}: open loop")
        ax.plot(c.t, c.error["lqr"], "-", color=col, label=f"{label}: LQR")
        ax.plot(c.t, c.error["mpc"], "--", color=col, label=f"{label}: MPC")
        ax.axvline(c.t[c.push_at], color="k", ls=":", lw=0.8)
    if log:
        ax.set_yscale("log")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("tip distance to reference (m)")
    ax.legend(fontsize=7)
    return ax


__all__ = ["Comparison", "mpc_vs_lqr", "tip_error", "plot_comparison"]
