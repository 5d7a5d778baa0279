"""Paper experiments for the reduced fluid (Barbic & Popovic 2008 sec. 6,
figures 2, 5, 7): a leaf following an S-shaped path through a perturbed
reduced fluid, several particles at once, and LQR vs P/PD gain searches.

Everything is sized by the grid resolution ``n`` so the tests run at 32x32
and the notebook at 64x64 or more.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import fluid as F
from .. import lqr, models, sim
from .._validate import as_float_array, integer, real
from ..fluid import FluidParticles, ReducedFluid
from . import offline
from .fluid_forcing import PerlinForce, random_winds

__all__ = ["FluidScenario", "make_scenario", "lqr_controller", "run_reduced", "path_error", "pd_controller",
           "gain_directions", "gain_search", "lqr_vs_pd", "plot_lqr_vs_pd", "user_pushes", "control_levels",
           "matched_viscosity_errors"]

# S path: the wind that carries the leaf turns right, up, left, up (an S lying on its side).
S_SCHEDULE = ((1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, 1.0))


@dataclass
class FluidScenario:
    """A reduced-fluid scenario: reference full run, basis, reduced model and reference state.

    Parameters
    ----------
    grid : MACGrid2D
        The n x n grid.
    fluid : ReducedFluid
        The reduced fluid (r modes).
    model : FluidParticles
        Reduced fluid with its P passive particles: state (2P + r,), control (r,).
    basis : (N, r) ndarray
        Velocity modes over the grid's N faces.
    x_ref : (T+1, 2P + r) ndarray
        Reference: the full run's particle positions (grid units) and its
        velocities projected on the basis.
    full : FullRun
        The reference full run.
    dt : float
        Step (s).
    steps : int
        Number of steps T.
    """

    grid: object
    fluid: ReducedFluid
    model: FluidParticles
    basis: np.ndarray           # (N, r)
    x_ref: np.ndarray           # (T+1, 2P + r): full-run particles, projected velocities
    full: F.FullRun             # the reference full run
    dt: float
    steps: int

    @property
    def particles(self) -> int:
        """Number of passive particles (leaves) P.

        Returns
        -------
        int
        """
        return self.model.particles

    @property
    def r(self) -> int:
        """Number of velocity modes.

        Returns
        -------
        int
        """
        return self.fluid.r


def _guided_run(grid, starts, steps, dt, schedule, magnitude, width, viscosity, seed=0):
    """Full run whose winds follow the particles: at every step a wind blows
    at each particle's current position, in the direction the schedule gives
    (one C++ call, ``FluidSim2D.run_particle_winds``)."""
    s = F.FluidSim2D(grid, viscosity, dt)
    s.particles = np.asarray(starts, float)
    rng = np.random.default_rng(seed)
    turns = np.array([np.asarray(schedule[k % len(schedule)], float) for k in range(len(schedule))])
    jitter = rng.uniform(0.8, 1.2, size=len(starts))
    directions = turns[np.minimum(np.arange(steps) * len(turns) // steps, len(turns) - 1)]
    U, X, _ = s.run_particle_winds(directions, magnitude * jitter, width)
    return F.FullRun(U, X, None, dt)


def make_scenario(n=32, r=16, steps=120, dt=0.01, particles=1, viscosity=0.0, magnitude=25.0, enrich=3,
                  seed=0, executor=None) -> FluidScenario:
    """Builds the leaf scenario of Barbic & Popovic sec. 5-6.

    A reference full run (particles blown along an S path), a basis from its
    snapshots plus ``enrich`` enrichment runs with random winds at the
    particles' reference positions (paper sec. 5.2), reduced model, and the
    reference state x_ref = [particles, B' u] (sec. 5.3). The enrichment
    runs go to ``executor`` (``directable.executors``; the same basis on any).

    Parameters
    ----------
    n : int, optional
        Grid resolution (n x n cells; the paper: 256).
    r : int, optional
        Number of velocity modes (the paper: 64).
    steps : int, optional
        Length T of the reference run.
    dt : float, optional
        Step (s).
    particles : int, optional
        Passive particles (leaves) P, >= 1; the first three start at fixed
        places, further ones on a lattice above them.
    viscosity : float, optional
        Kinematic viscosity.
    magnitude : float, optional
        Strength of the guiding winds.
    enrich : int, optional
        Enrichment (training) runs with random winds.
    seed : int, optional
        Seed of the winds.
    executor : optional
        Where the training runs go (``directable.executors.map_tasks``).

    Returns
    -------
    FluidScenario
    """
    particles = integer(particles, "particles")
    if particles < 1:
        raise ValueError(f"particles must be >= 1, got {particles}")
    grid = F.MACGrid2D(n, n)
    extra = [[0.15 + 0.07 * (k % 4), 0.5 + 0.07 * (k // 4)] for k in range(max(0, particles - 3))]
    starts = np.array([[0.2, 0.2], [0.35, 0.15], [0.2, 0.35]] + extra)[:particles]
    width = 0.08
    full = _guided_run(grid, starts, steps, dt, S_SCHEDULE, magnitude, width, viscosity, seed)
    rng = np.random.default_rng(seed + 1)
    runs = []
    for e in range(enrich):
        pts = full.particles[rng.integers(1, steps, size=6), rng.integers(0, particles, size=6)]
        winds = random_winds(grid, 6, steps // 2, seed=seed + 10 + e, centers=pts, magnitude=(10.0, 40.0))
        runs.append(dict(steps=steps // 2, dt=dt, winds=winds, u0=full.velocities[rng.integers(steps)],
                         viscosity=viscosity))
    snaps = [full.velocities[1:]] + offline.fluid_training_runs(grid, runs, executor)
    basis = F.velocity_basis(grid, np.vstack(snaps), r)
    fluid = ReducedFluid(grid, basis, viscosity)
    model = FluidParticles(fluid, particles)
    x_ref = np.hstack([full.particles.reshape(steps + 1, -1), F.project(basis, full.velocities)])
    return FluidScenario(grid, fluid, model, basis, x_ref, full, dt, steps)


def lqr_controller(scn: FluidScenario, particle_weight=1e5, velocity_weight=1.0, alpha_R=1e-3, final_weight=10.0,
                   progress=None):
    """Time-varying LQR about the reference (appendix C linearization), no
    feed-forward. Costs: particle weight >> velocity weight (sec. 4.4).

    Parameters
    ----------
    scn : FluidScenario
        The scenario.
    particle_weight : float, optional
        Weight of the particles' positions (per grid unit squared).
    velocity_weight : float, optional
        Weight of the reduced velocities.
    alpha_R : float, optional
        Control weight, ``R = alpha_R I``.
    final_weight : float, optional
        Final cost as a multiple of the running one.
    progress : None, bool or callable(done, total), optional
        Progress report.

    Returns
    -------
    LQRSolution
        Gains K (T, r, 2P + r).
    """
    A = models.linearize(scn.model, scn.x_ref, scn.dt)
    P, r = scn.particles, scn.r
    q = np.r_[np.full(2 * P, particle_weight), np.full(r, velocity_weight)]
    sol = lqr.solve_continuous(A, scn.model.control_matrix(), scn.dt, np.diag(q), alpha_R * np.eye(r),
                               final_weight * np.diag(q), progress=progress)
    return sol


def run_reduced(scn: FluidScenario, controller=None, noise=0.0, seed=0, period=0.3, pushes=None):
    """Reduced run from x_ref[0] with a Perlin-noise force (amplitude ``noise``,
    continuous in time) and optional pushes.

    Parameters
    ----------
    scn : FluidScenario
        The scenario.
    controller : Tracker, optional
        None: no control.
    noise : float, optional
        Amplitude of the Perlin-noise disturbance (per mode).
    seed : int, optional
        Seed of the noise.
    period : float, optional
        Time scale of the noise (s).
    pushes : (steps, r) array, optional
        Further reduced disturbance forces.

    Returns
    -------
    SimulationResult
        States (steps+1, 2P + r), controls (steps, r).
    """
    d = PerlinForce(scn.r, noise, period, seed).series(scn.steps, scn.dt) if noise else np.zeros((scn.steps, scn.r))
    if pushes is not None:
        d = d + pushes
    return sim.simulate(scn.model, scn.x_ref[0], scn.steps, scn.dt, controller=controller, disturbance=d)


def path_error(scn: FluidScenario, states) -> np.ndarray:
    """Each particle's distance to its reference position.

    Parameters
    ----------
    scn : FluidScenario
        The scenario.
    states : (T+1, 2P + r) array
        States of a run.

    Returns
    -------
    (T+1, P) ndarray
        Distances (grid units).
    """
    P = scn.particles
    return np.linalg.norm((states[:, :2 * P] - scn.x_ref[:, :2 * P]).reshape(len(states), P, 2), axis=2)


def pd_controller(scn: FluidScenario, k_z, k_p, k_pdot=0.0, model=None) -> F.ParticlePD:
    """Barbic & Popovic's PD law (eq. 14) about the scenario's reference.

    w = -k_z (z - z_ref) - Psi(p)' (k_p (p - p_ref) + k_pdot (p' - p_ref')),
    with Psi and the particle rates evaluated at the particles' current
    positions (``fluid.ParticlePD``). k_pdot = 0 is the paper's P controller.

    Parameters
    ----------
    scn : FluidScenario
        The scenario.
    k_z : float
        Gain on the reduced velocity error (1/s).
    k_p : float
        Gain on the particle position error (1/s^2, through Psi').
    k_pdot : float, optional
        Gain on the particle velocity error (1/s, through Psi').
    model : FluidParticles, optional
        The controlled model (e.g. on a scene with obstacles); default ``scn.model``.

    Returns
    -------
    ParticlePD
    """
    return F.ParticlePD(scn.model if model is None else model, scn.x_ref, scn.dt, k_z, k_p, k_pdot)


def gain_directions(scn: FluidScenario, grid_size=10, spread=100.0, model=None) -> tuple[np.ndarray, list]:
    """The gain settings of the Fig. 7 search, as directions (k_z, k_p, k_pdot).

    Each setting is scaled to the control budget by :func:`gain_search`, so
    only the ratios of its gains matter. The particle gains are measured in
    units that make their share of the gain matrix comparable with k_z's:
    k_p = rho_p c, k_pdot = rho_d c with c = 1 / mean |Psi(p_ref)|_F^2 along
    the reference, and rho over ``[1/spread, spread]`` (log-spaced).

    Parameters
    ----------
    scn : FluidScenario
        The scenario.
    grid_size : int or (int, int)
        k: P gets k ratios rho_p (two gains, k_z = 1), PD a k x k grid of
        (rho_p, rho_d) (three gains); 10 gives 110 settings. A pair gives
        the two counts separately (P: a, PD: b x b).
    spread : float
        Largest ratio rho, > 1.
    model : FluidParticles, optional
        The model whose Psi sets c; default ``scn.model``.

    Returns
    -------
    gains : (m, 3) array
        Directions (k_z, k_p, k_pdot).
    kinds : list of str
        "P" or "PD" per row.
    """
    a, b = (grid_size, grid_size) if np.ndim(grid_size) == 0 else grid_size
    a, b = integer(a, "grid_size"), integer(b, "grid_size")
    if a < 1 or b < 1 or not spread > 1:
        raise ValueError(f"grid_size must be >= 1 and spread > 1, got {grid_size!r}, {spread!r}")
    law = pd_controller(scn, 1.0, 0.0, 0.0, model)
    P, n = scn.particles, scn.model.state_dim()
    psi2 = np.mean([np.sum(law.model.jacobian(x, 0.0)[:2 * P, 2 * P:n] ** 2) / P for x in scn.x_ref[::4]])
    c = 1.0 / psi2
    rho_a = np.geomspace(1 / spread, spread, a)
    rho_b = np.geomspace(1 / spread, spread, b)
    gains = [(1.0, rp * c, 0.0) for rp in rho_a] + [(1.0, rp * c, rd * c) for rp in rho_b for rd in rho_b]
    return np.array(gains), ["P"] * a + ["PD"] * (b * b)


def _sweep(scn, law, gains, d, executor, progress):
    if executor is None:
        return law.sweep(gains, scn.x_ref[0], scn.steps, d, progress=progress)
    return offline.fluid_gain_runs(scn, gains, d, executor, progress)


def gain_search(scn: FluidScenario, budget, noise, seed=0, grid_size=10, model=None, pushes=None, spread=100.0,
                iterations=14, executor=None, progress=None) -> dict:
    """Fig. 7's protocol: P and PD (eq. 14) at LQR's control budget.

    Every setting of :func:`gain_directions` (P: two gains, PD: three) is
    scaled so that its run spends the budget: the largest scale s (bisection
    in log s over [1e-3, 1e3], ``iterations`` rounds, each one parallel
    sweep over all settings) whose effort sum |w|^2 dt stays <= budget.
    Among the scaled settings of each kind, the one ending closest to the
    reference is the best; the median one is the "typical" run the paper
    also plots. Runs go to ``executor`` (``directable.executors``; the same
    choice on any) or, by default, to the C++ sweep on all cores.

    Parameters
    ----------
    scn : FluidScenario
        The scenario.
    budget : float
        The control effort sum |w|^2 dt every setting is scaled to (LQR's).
    noise : float
        Amplitude of the Perlin-noise disturbance.
    seed : int, optional
        Seed of the noise.
    grid_size : int or (int, int), optional
        Settings per kind (:func:`gain_directions`).
    model : FluidParticles, optional
        The controlled model (e.g. on a scene with obstacles); default
        ``scn.model``. Not with an executor.
    pushes : (steps, r) array, optional
        Further reduced disturbance forces (user pushes).
    spread : float, optional
        Range of the gain ratios.
    iterations : int, optional
        Bisection rounds of the scale.
    executor : optional
        Where the runs go (``directable.executors.map_tasks``).
    progress : None, bool or callable(done, total), optional
        Progress over each round's runs.

    Returns
    -------
    dict
        Per kind ("P", "PD"): the best ``gains`` (k_z, k_p, k_pdot) tuple,
        ``final_error`` (largest over the particles, m), ``effort`` and its
        ``result`` (SimulationResult); per kind under "typical_P",
        "typical_PD" the same for the median setting. ``all``: ``gains``
        (m, 3) scaled, ``kinds``, ``final_error`` (m,), ``effort`` (m,);
        ``settings``: how many were tried, ``tried``: how many reached the
        budget without diverging.
    """
    if model is not None and executor is not None:
        raise ValueError("model must be None with an executor (workers rebuild the scenario's own model)")
    budget = real(budget, "budget")
    if not budget > 0:
        raise ValueError(f"budget must be > 0, got {budget}")
    dirs, kinds = gain_directions(scn, grid_size, spread, model)
    law = pd_controller(scn, 1.0, 0.0, 0.0, model)
    d = PerlinForce(scn.r, noise, 0.3, seed).series(scn.steps, scn.dt) if noise else np.zeros((scn.steps, scn.r))
    if pushes is not None:
        d = d + as_float_array(pushes, "pushes")
    m = len(dirs)
    lo, hi = np.full(m, np.log(1e-3)), np.full(m, np.log(1e3))
    ok = np.zeros(m, bool)  # the scale lo is known to stay within budget
    for _ in range(integer(iterations, "iterations")):
        mid = 0.5 * (lo + hi)
        out = _sweep(scn, law, dirs * np.exp(mid)[:, None], d, executor, progress)
        within = np.asarray(out["effort"]) <= budget
        lo, hi = np.where(within, mid, lo), np.where(within, hi, mid)
        ok |= within
    gains = dirs * np.exp(lo)[:, None]
    out = _sweep(scn, law, gains, d, executor, progress)
    err = np.asarray(out["final_error"]).max(axis=1)
    effort = np.asarray(out["effort"])
    valid = ok & np.isfinite(err) & (effort <= budget)
    result = {"all": dict(gains=gains, kinds=kinds, final_error=np.where(valid, err, np.nan), effort=effort),
              "settings": m, "tried": int(valid.sum())}
    kinds_arr = np.array(kinds)
    for kind in ("P", "PD"):
        idx = np.flatnonzero(valid & (kinds_arr == kind))
        if not len(idx):
            continue
        order = idx[np.argsort(err[idx], kind="stable")]
        for name, k in ((kind, order[0]), ("typical_" + kind, order[len(order) // 2])):
            g = tuple(float(v) for v in gains[k])
            res = law.with_gains(*g).run(scn.x_ref[0], scn.steps, d)
            result[name] = dict(gains=g, final_error=float(err[k]), effort=float(effort[k]), result=res)
    return result


def lqr_vs_pd(scn: FluidScenario, model=None, noise=5.0, seed=3, alpha_R=1e-2, particle_weight=1e5,
              velocity_weight=1.0, final_weight=0.0, grid_size=10, iterations=14, progress=None) -> dict:
    """Fig. 7: LQR against P and PD (eq. 14) under one control budget.

    The LQR run (expensive control, non-zero position cost, zero final cost
    by default: the figure's setting) under a Perlin disturbance fixes the
    budget, its effort sum |w|^2 dt; :func:`gain_search` then scales about
    100 P and PD settings to that budget and keeps the best and a typical
    one of each kind.

    Parameters
    ----------
    scn : FluidScenario
        The scenario (its reference and basis).
    model : FluidParticles, optional
        The controlled model, e.g. on a scene with an obstacle in the flow;
        default ``scn.model``. The LQR is linearised about the reference on it.
    noise : float
        Amplitude of the Perlin disturbance.
    seed : int
        Seed of the disturbance.
    alpha_R : float
        LQR control weight, R = alpha_R I.
    particle_weight, velocity_weight, final_weight : float
        LQR costs (final as a multiple of the running cost).
    grid_size : int or (int, int)
        Settings per kind (:func:`gain_directions`).
    iterations : int
        Bisection rounds of each setting's scale.
    progress : None, bool or callable(done, total)
        Progress of the LQR solve and the sweeps.

    Returns
    -------
    dict
        ``lqr`` (SimulationResult), ``budget``, ``lqr_error`` (T+1, P)
        distances to the reference (m), ``search`` (:func:`gain_search`'s
        dict), ``errors`` {label: (T+1,) distance of particle 0 (m)}.
    """
    model = scn.model if model is None else model
    A = models.linearize(model, scn.x_ref, scn.dt)
    P, r = scn.particles, scn.r
    q = np.r_[np.full(2 * P, particle_weight), np.full(r, velocity_weight)]
    sol = lqr.solve_continuous(A, model.control_matrix(), scn.dt, np.diag(q), alpha_R * np.eye(r),
                               final_weight * np.diag(q), progress=progress)
    d = PerlinForce(r, noise, 0.3, seed).series(scn.steps, scn.dt) if noise else np.zeros((scn.steps, r))
    res = sim.simulate(model, scn.x_ref[0], scn.steps, scn.dt, controller=lqr.tracker(sol, scn.x_ref), disturbance=d)
    budget = float(np.sum(np.asarray(res.controls) ** 2) * scn.dt)
    search = gain_search(scn, budget, noise, seed, grid_size, model=model, iterations=iterations, progress=progress)
    errors = {"LQR": path_error(scn, res.states)[:, 0]}
    for k in ("P", "typical_P", "PD", "typical_PD"):
        if k in search:
            errors[k] = path_error(scn, search[k]["result"].states)[:, 0]
    return dict(lqr=res, budget=budget, lqr_error=path_error(scn, res.states), search=search, errors=errors)


def plot_lqr_vs_pd(scn: FluidScenario, out: dict, ax=None, shapes=(), poses=()):
    """Fig. 7: the reference path, LQR and the P/PD runs at the same budget.

    Parameters
    ----------
    scn : FluidScenario
        The scenario.
    out : dict
        From :func:`lqr_vs_pd`.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    shapes : sequence of Shape2D, optional
        Obstacles to draw.
    poses : sequence of (3,) arrays, optional
        Their poses (x, y, theta) (m, m, rad).

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 5))
    ax.plot(*scn.x_ref[:, :2].T, "k-", lw=3, label="reference")
    styles = {"P": ("tab:orange", "-"), "typical_P": ("tab:orange", ":"), "PD": ("tab:red", "-"),
              "typical_PD": ("tab:red", ":")}
    s = out["search"]
    for k, (c, ls) in styles.items():
        if k in s:
            g = np.round(s[k]["gains"], 3)
            ax.plot(*s[k]["result"].states[:, :2].T, color=c, ls=ls, lw=1.5,
                    label=f"{k.replace('_', ' ')} {tuple(g.tolist())}: final {s[k]['final_error']:.3f} m")
    e = out["lqr_error"][-1, 0]
    ax.plot(*out["lqr"].states[:, :2].T, "--", color="tab:blue", lw=2, label=f"LQR: final {e:.3f} m")
    for shape, pose in zip(shapes, poses):
        c, sn = np.cos(pose[2]), np.sin(pose[2])
        V = shape.vertices @ np.array([[c, sn], [-sn, c]]) + np.asarray(pose[:2])
        ax.fill(V[:, 0], V[:, 1], color="0.6")
    ax.set_xlim(0, 1), ax.set_ylim(0, 1), ax.set_aspect("equal")
    ax.set_xlabel("x (m)"), ax.set_ylabel("y (m)")
    ax.set_title(f"same control budget ({out['budget']:.3g})")
    ax.legend(fontsize="x-small")
    return ax


def user_pushes(scn: FluidScenario, at=(0.2, 0.5, 0.8), magnitude=30.0, duration=3, seed=5) -> np.ndarray:
    """Figure 5 (top-right): user perturbations F1, F2, F3 at three times.

    Parameters
    ----------
    scn : FluidScenario
        The scenario.
    at : sequence of float, optional
        Push times as fractions of the run.
    magnitude : float, optional
        Scale of each push's random reduced force (per mode, per unit mass).
    duration : int, optional
        Steps each push lasts.
    seed : int, optional
        Seed of the push directions.

    Returns
    -------
    (steps, r) ndarray
        Reduced disturbance forces.
    """
    rng = np.random.default_rng(seed)
    d = np.zeros((scn.steps, scn.r))
    for a in at:
        s = min(int(a * scn.steps), scn.steps - 1)
        d[s:s + duration] = magnitude * rng.standard_normal(scn.r)
    return d


def control_levels(scn: FluidScenario, alpha_Rs=(1e-3, 1e-5, 1e-8), pushes=None, particle_weight=1e5,
                   velocity_weight=1.0, final_weight=10.0, progress=None) -> dict:
    """Figure 5: three LQR control costs, the cheaper ones 100x and 100,000x
    cheaper than the first (by default), with or without user pushes.

    Cheaper control tracks the particles' reference paths and the projected
    velocities more closely and spends more force. (Far more expensive
    control, alpha_R >= 0.1 at the default weights, lets the particles drift
    where the linearization no longer holds, and the final cost then forces
    a burst at the last steps: the effort is no longer monotone there.)

    Parameters
    ----------
    scn : FluidScenario
        The scenario (``make_scenario``; the paper: 256^2, r = 64, three particles).
    alpha_Rs : sequence of float, optional
        Control weights ``R = alpha_R I``, most expensive first.
    pushes : (steps, r) array, optional
        Disturbance (e.g. :func:`user_pushes`); None: none (figure 5, top-left).
    particle_weight, velocity_weight, final_weight : float, optional
        Cost weights, as :func:`lqr_controller`.
    progress : None, bool or callable(done, total), optional
        Progress of each LQR solve.

    Returns
    -------
    dict
        ``alpha_R`` (k,); ``effort`` (k,): sum |w|^2 dt of the control;
        ``path_error`` (k, steps+1, P): particle distances to their
        reference (grid units); ``velocity_error`` (k, steps+1): reduced
        velocity error relative to the reference's largest; the same for the
        uncontrolled run under ``uncontrolled_*``; ``runs``: the
        SimulationResults.
    """
    alphas = np.asarray(alpha_Rs, float)
    if alphas.ndim != 1 or alphas.size == 0 or not np.all(alphas > 0):
        raise ValueError(f"alpha_Rs must be a non-empty sequence of positive floats, got {alpha_Rs!r}")
    P = scn.particles
    zr = scn.x_ref[:, 2 * P:]
    scale = np.linalg.norm(zr, axis=1).max()
    vel = lambda st: np.linalg.norm(st[:, 2 * P:] - zr, axis=1) / scale  # noqa: E731
    runs, effort = [], []
    for a in alphas:
        sol = lqr_controller(scn, particle_weight, velocity_weight, a, final_weight, progress=progress)
        res = run_reduced(scn, lqr.tracker(sol, scn.x_ref), pushes=pushes)
        runs.append(res)
        effort.append(float(np.sum(np.square(res.controls)) * scn.dt))
    unc = run_reduced(scn, None, pushes=pushes)
    return dict(alpha_R=alphas, effort=np.array(effort),
                path_error=np.array([path_error(scn, r.states) for r in runs]),
                velocity_error=np.array([vel(r.states) for r in runs]),
                uncontrolled_path_error=path_error(scn, unc.states), uncontrolled_velocity_error=vel(unc.states),
                runs=runs + [unc])


def matched_viscosity_errors(n=32, rs=(8, 16, 32), steps=100, dt=0.01, runs=4, winds=8, seed=0,
                             executor=None) -> dict:
    """Reduced-vs-full error against the basis size, at the matched viscosity.

    Full runs under random wind impulses train a PCA basis; for each r the
    reduced model on the first r fields gets the viscosity that matches the
    full solver's numerical dissipation on the first run's energy decay
    (``ReducedFluid.match_viscosity``, the run's forces included), and is
    rolled out from that run's projected start under its projected forces.
    At nu = 0 the reduced model keeps energy the full solver loses, and its
    error does not fall with r; at the matched nu it does.

    Parameters
    ----------
    n : int
        Cells per side.
    rs : sequence of int
        Basis sizes, increasing.
    steps : int
        Steps per run.
    dt : float
        Step (s).
    runs : int
        Training runs.
    winds : int
        Wind impulses per run.
    seed : int
        Seed of the winds.
    executor : optional
        Where the training runs go (``directable.executors.map_tasks``).

    Returns
    -------
    dict
        ``rs``; ``nu`` {r: matched viscosity (m^2/s)}, ``residual`` {r: RMS
        log-energy mismatch of the fit}; ``error`` {r: (steps,) relative
        error |u - u*| / |u*| at the matched nu}, ``error_inviscid`` {r: the
        same at nu = 0}; ``mean`` {r: mean error at the matched nu},
        ``mean_inviscid``; ``energy_lost``: the fraction of its kinetic
        energy the full run loses over its last, unforced third; ``start``:
        the first step compared (the run starts at rest).
    """
    from .fluid_boundaries import _forces, _relative_errors
    grid = F.MACGrid2D(integer(n, "n"), n)
    rs = [integer(r, "rs") for r in rs]
    wind_sets = [random_winds(grid, winds, 2 * steps // 3, seed=seed + k) for k in range(integer(runs, "runs"))]
    specs = [dict(steps=steps, dt=dt, winds=w) for w in wind_sets]
    snaps = offline.fluid_training_runs(grid, specs, executor)
    basis = F.velocity_basis(grid, np.vstack(snaps), max(rs))
    full = F.full_run(grid, steps, dt, wind_sets[0])
    forces = _forces(grid, wind_sets[0], steps)
    E = np.sum(full.velocities ** 2, axis=1)
    # the run starts at rest: compare (and fit) from the first step with a tenth of a percent of its peak energy
    start = int(np.argmax(E >= 1e-3 * E.max()))
    ref, forces = full.velocities[start + 1:], forces[start:]
    out = {"rs": rs, "nu": {}, "residual": {}, "error": {}, "error_inviscid": {}, "mean": {}, "mean_inviscid": {},
           "energy_lost": float(1 - E[-1] / E[2 * steps // 3]), "start": start}
    for r in rs:
        B = np.ascontiguousarray(basis[:, :r])
        red0 = ReducedFluid(grid, B, 0.0)
        nu, res = red0.match_viscosity(full, forces, start=start)
        red = ReducedFluid(grid, B, nu)
        z0, W = B.T @ full.velocities[start], forces @ B
        for key, model in (("error", red), ("error_inviscid", red0)):
            e = _relative_errors(model.rollout(z0, W, dt)[1:] @ B.T, ref)
            out[key][r] = e
            out["mean" if key == "error" else "mean_inviscid"][r] = float(e.mean())
        out["nu"][r], out["residual"][r] = nu, res
    return out
