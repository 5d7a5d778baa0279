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
from .._validate import integer
from ..fluid import FluidParticles, ReducedFluid
from . import offline
from .fluid_forcing import PerlinForce, random_winds

__all__ = ["FluidScenario", "make_scenario", "lqr_controller", "run_reduced", "path_error", "p_gain", "pd_gain",
           "gain_search", "user_pushes", "control_levels"]

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


def p_gain(scn: FluidScenario, kp) -> np.ndarray:
    """Proportional gain on the reduced velocity: w = -kp (z - z_ref).

    Parameters
    ----------
    scn : FluidScenario
        The scenario.
    kp : float
        Gain (1/s).

    Returns
    -------
    (r, 2P + r) ndarray
        The gain matrix K (``w = K (x - x_ref)``).
    """
    K = np.zeros((scn.r, scn.model.state_dim()))
    K[:, 2 * scn.particles:] = -kp * np.eye(scn.r)
    return K


def pd_gain(scn: FluidScenario, kp, kd) -> np.ndarray:
    """PD on the particles through the modes at the reference position:
    w = -kp Psi' (p - p_ref) - kd (z - z_ref) (the paper's PD for particles).

    Parameters
    ----------
    scn : FluidScenario
        The scenario.
    kp : float
        Position gain (1/s^2 per grid unit).
    kd : float
        Velocity gain (1/s).

    Returns
    -------
    (r, 2P + r) ndarray
        The gain matrix K (``w = K (x - x_ref)``).
    """
    K = p_gain(scn, kd)
    for i in range(scn.particles):
        Psi = scn.fluid.modes(scn.x_ref[0, 2 * i:2 * i + 2])
        K[:, 2 * i:2 * i + 2] -= kp * Psi.T
    return K


def gain_search(scn: FluidScenario, budget, noise, seed=0, grid_size=10, executor=None, progress=None):
    """Systematic search over P (kp) and PD (kp, kd) gains (about 10 + 10x10
    settings); among the runs whose control effort sum |w|^2 dt stays within
    ``budget``, the one ending closest to the reference. The runs go to
    ``executor`` (``directable.executors``; the same choice on any).

    Parameters
    ----------
    scn : FluidScenario
        The scenario.
    budget : float
        Largest control effort sum |w|^2 dt allowed.
    noise : float
        Amplitude of the Perlin-noise disturbance.
    seed : int, optional
        Seed of the noise.
    grid_size : int, optional
        Gains per axis of the grid.
    executor : optional
        Where the runs go (``directable.executors.map_tasks``).
    progress : None, bool or callable(done, total), optional
        Progress over the runs.

    Returns
    -------
    dict
        Per kind ("P", "PD") the best ``gains``, ``final_error`` (grid
        units), ``effort`` and its ``result`` (SimulationResult);
        ``settings``: how many were tried, ``tried``: how many did not diverge.
    """
    best = {}
    kps = np.geomspace(0.1, 300.0, grid_size)
    kds = np.geomspace(0.1, 100.0, grid_size)
    settings = [("P", (k,)) for k in kps] + [("PD", (kp, kd)) for kp in kps for kd in kds]
    gains = [p_gain(scn, *g) if kind == "P" else pd_gain(scn, *g) for kind, g in settings]
    d = PerlinForce(scn.r, noise, 0.3, seed).series(scn.steps, scn.dt) if noise else np.zeros((scn.steps, scn.r))
    outcomes = offline.fluid_gain_runs(scn, gains, d, executor, progress)
    for (kind, g), K, out in zip(settings, gains, outcomes):
        if out is None or out[1] > budget:  # diverged, or over budget
            continue
        err = float(out[0].max())
        if kind not in best or err < best[kind]["final_error"]:
            best[kind] = dict(gains=g, final_error=err, effort=out[1], K=K)
    for b in best.values():  # the chosen runs themselves, here
        K = b.pop("K")
        b["result"] = run_reduced(scn, lqr.tracker(np.broadcast_to(K, (scn.steps,) + K.shape).copy(), scn.x_ref),
                                  noise, seed)
    best["settings"] = len(settings)
    best["tried"] = sum(o is not None for o in outcomes)
    return best


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
