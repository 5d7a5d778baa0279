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
from ..fluid import FluidParticles, ReducedFluid
from . import offline
from .fluid_forcing import PerlinForce, random_winds

__all__ = ["FluidScenario", "make_scenario", "lqr_controller", "run_reduced", "path_error", "p_gain", "pd_gain",
           "gain_search"]

# S path: the wind that carries the leaf turns right, up, left, up (an S lying on its side).
S_SCHEDULE = ((1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, 1.0))


@dataclass
class FluidScenario:
    """A trained leaf scenario: reduced model, reference run and reference state.

    Attributes
    ----------
    grid : MACGrid2D
        The world grid.
    fluid : ReducedFluid
        The reduced fluid.
    model : FluidParticles
        Particles in the reduced fluid, x = [p (2P), z (r)].
    basis : (N, r) array
        The velocity basis.
    x_ref : (T+1, 2P + r) array
        Reference states: the full run's particles (m) and its projected velocities.
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
        """Number of particles P."""
        return self.model.particles

    @property
    def r(self) -> int:
        """Basis size r."""
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
    particles' reference positions (paper sec. 5.2), the reduced model, and
    the reference state x_ref = [particles, B' u] (sec. 5.3).

    Parameters
    ----------
    n : int
        Grid cells per side (domain [0, 1]^2 m).
    r : int
        Basis size.
    steps : int
        Steps T of the reference run.
    dt : float
        Step (s).
    particles : int
        Number of particles P (1 to 3).
    viscosity : float
        Viscosity of the full runs and the reduced model (m^2/s).
    magnitude : float
        Strength of the guiding winds (m/s^2).
    enrich : int
        Number of enrichment runs.
    seed : int
        Seed of the winds.
    executor : optional
        Where the enrichment runs go (``directable.executors``; the same basis on any).

    Returns
    -------
    FluidScenario
        The trained scenario.
    """
    grid = F.MACGrid2D(n, n)
    starts = np.array([[0.2, 0.2], [0.35, 0.15], [0.2, 0.35]])[:particles]
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
    """Time-varying LQR about the reference (appendix C linearization), no feed-forward.

    Parameters
    ----------
    scn : FluidScenario
        The scenario.
    particle_weight : float
        State cost on the particle positions (1/m^2), >> velocity_weight (sec. 4.4).
    velocity_weight : float
        State cost on the reduced velocity.
    alpha_R : float
        Control cost (times the identity).
    final_weight : float
        Final cost, as a multiple of the state cost.
    progress : None, bool or callable(done, total)
        Progress report of the Riccati solve.

    Returns
    -------
    LQRSolution
        The gains (``lqr.tracker(sol.K, scn.x_ref)`` makes a controller).
    """
    A = models.linearize(scn.model, scn.x_ref, scn.dt)
    P, r = scn.particles, scn.r
    q = np.r_[np.full(2 * P, particle_weight), np.full(r, velocity_weight)]
    sol = lqr.solve_continuous(A, scn.model.control_matrix(), scn.dt, np.diag(q), alpha_R * np.eye(r),
                               final_weight * np.diag(q), progress=progress)
    return sol


def run_reduced(scn: FluidScenario, controller=None, noise=0.0, seed=0, period=0.3, pushes=None):
    """Reduced run from x_ref[0] under a Perlin-noise force and optional pushes.

    Parameters
    ----------
    scn : FluidScenario
        The scenario.
    controller : Tracker, optional
        Closed loop; None runs open loop.
    noise : float
        Amplitude of the Perlin-noise force (reduced acceleration), continuous in time.
    seed : int
        Seed of the noise.
    period : float
        Time scale of the noise (s).
    pushes : (steps, r) array, optional
        Extra reduced forces per step.

    Returns
    -------
    SimulationResult
        States (T+1, 2P + r) and controls.
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
        A run's states.

    Returns
    -------
    (T+1, P) array
        Distances (m).
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
    (r, 2P + r) array
        The gain matrix K of w = K (x - x_ref).
    """
    K = np.zeros((scn.r, scn.model.state_dim()))
    K[:, 2 * scn.particles:] = -kp * np.eye(scn.r)
    return K


def pd_gain(scn: FluidScenario, kp, kd) -> np.ndarray:
    """PD on the particles through the modes at the reference start position.

    w = -kp Psi' (p - p_ref) - kd (z - z_ref).

    Parameters
    ----------
    scn : FluidScenario
        The scenario.
    kp : float
        Gain on the particle error (1/s^2 per m, through Psi').
    kd : float
        Gain on the reduced-velocity error (1/s).

    Returns
    -------
    (r, 2P + r) array
        The gain matrix K of w = K (x - x_ref).
    """
    K = p_gain(scn, kd)
    for i in range(scn.particles):
        Psi = scn.fluid.modes(scn.x_ref[0, 2 * i:2 * i + 2])
        K[:, 2 * i:2 * i + 2] -= kp * Psi.T
    return K


def gain_search(scn: FluidScenario, budget, noise, seed=0, grid_size=10, executor=None, progress=None):
    """Systematic search over P (kp) and PD (kp, kd) gains (Fig. 7's protocol).

    About grid_size + grid_size^2 settings; among the runs whose control
    effort sum |w|^2 dt stays within ``budget``, the one ending closest to
    the reference.

    Parameters
    ----------
    scn : FluidScenario
        The scenario.
    budget : float
        Largest control effort sum |w|^2 dt allowed.
    noise : float
        Amplitude of the Perlin-noise disturbance.
    seed : int
        Seed of the noise.
    grid_size : int
        Gains per axis of the search.
    executor : optional
        Where the runs go (``directable.executors``; the same choice on any).
    progress : None, bool or callable(done, total)
        Progress report.

    Returns
    -------
    dict
        "P" and "PD": the best gains, final_error (m), effort and result
        (SimulationResult); "settings" and "tried" counts.
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
