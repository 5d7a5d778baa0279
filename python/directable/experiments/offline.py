"""The experiments' offline steps as executor tasks (``directable.executors``):
fluid training runs, the fluid P/PD gain search, PD gain grids and LQR
weight sweeps on reduced solids. Each task ships what rebuilds its model (a
grid size and a basis, a mesh's spec and a basis), never a live C++ object;
a worker rebuilds it once (``executors.cached``) and reuses it for its next
tasks. Results are the in-process ones bit for bit, whatever the executor.

    from directable.experiments import offline
    snaps = offline.fluid_training_runs(grid, [dict(steps=60, dt=0.01, winds=w)], executor=client)
    table = offline.pd_gain_grid(scene, kps, kds, z0, disturbance, executor=client)
"""
from __future__ import annotations

import numpy as np

from .. import executors, lqr, sim
from .. import fluid as F
from .._validate import as_float_array
from ..fem import ReducedStVK, _model_from_spec

__all__ = ["fluid_training_runs", "fluid_gain_runs", "pd_runs", "pd_gain_grid", "lqr_weight_sweep", "reduced_solid_spec",
           "reduced_solid"]


# ---------------------------------------------------------------- fluids

def _grid(nx, ny, h):
    return executors.cached(("grid", nx, ny, h), lambda: F.MACGrid2D(nx, ny, h))


def _training_run(nx, ny, h, steps, dt, winds, u0, viscosity):
    """One full fluid run (a task): its velocity snapshots (steps, N) after the start."""
    return F.full_run(_grid(nx, ny, h), steps, dt, winds, u0=u0, viscosity=viscosity).velocities[1:]


def fluid_training_runs(grid, runs, executor=None, progress=None) -> list:
    """Full fluid runs over random wind fields (the basis' training data).

    Parameters
    ----------
    grid : MACGrid2D
    runs : sequence of dict
        Each with ``steps``, ``dt`` (s), ``winds`` (list of ``fluid_forcing.Wind``)
        and optionally ``u0`` (N,) and ``viscosity``.
    executor : None, concurrent.futures.Executor, dask.distributed.Client or "ray"
    progress : None, bool or callable(done, total)

    Returns
    -------
    list of (steps_k, N) arrays
        Each run's velocities after its start, in the order of ``runs``.
    """
    tasks = [(grid.nx, grid.ny, grid.h, int(r["steps"]), float(r["dt"]), list(r.get("winds", ())),
              None if r.get("u0") is None else as_float_array(r["u0"], "u0"), float(r.get("viscosity", 0.0)))
             for r in runs]
    return executors.map_tasks(_training_run, tasks, executor, progress=progress, desc="fluid training runs")


def _fluid_scenario_spec(scn):
    g = scn.grid
    return (g.nx, g.ny, g.h, np.ascontiguousarray(scn.basis), float(scn.fluid.viscosity), int(scn.particles))


def _fluid_model(spec):
    nx, ny, h, basis, viscosity, particles = spec

    def build():
        fluid = F.ReducedFluid(_grid(nx, ny, h), basis, viscosity)
        return F.FluidParticles(fluid, particles)

    return executors.cached(executors.spec_key(*spec), build)


def _fluid_gain_run(spec, gains, x_ref, steps, dt, disturbance):
    """Closed-loop reduced-fluid runs under eq. 14 PD gains (a task): the
    sweep's dict for the rows (k_z, k_p, k_pdot) of ``gains``, on one thread."""
    law = F.ParticlePD(_fluid_model(spec), x_ref, dt)
    return law.sweep(gains, x_ref[0], steps, disturbance, threads=1)


def fluid_gain_runs(scn, gains, disturbance, executor=None, progress=None) -> dict:
    """Closed-loop runs of a reduced-fluid scenario (``reduced_fluid_paths``)
    under each row of eq. 14 gains (``fluid.ParticlePD``), one task per row.

    Parameters
    ----------
    scn : reduced_fluid_paths.FluidScenario
        The scenario.
    gains : (m, 3) array
        Rows (k_z, k_p, k_pdot).
    disturbance : (steps, r) array
        Reduced disturbance.
    executor : optional
        None, a concurrent.futures.Executor, a dask.distributed.Client or "ray" (``executors.map_tasks``).
    progress : None, bool or callable(done, total), optional
        One report over the tasks.

    Returns
    -------
    dict
        As ``ParticlePD.sweep``: ``final_error`` (m, P), ``max_error`` (m, P),
        ``effort`` (m,), ``diverged_at`` (m,).
    """
    spec = _fluid_scenario_spec(scn)
    d = as_float_array(disturbance, "disturbance")
    G = as_float_array(gains, "gains")
    tasks = [(spec, G[k:k + 1], scn.x_ref, scn.steps, scn.dt, d) for k in range(len(G))]
    parts = executors.map_tasks(_fluid_gain_run, tasks, executor, progress=progress, desc="gain search")
    return {key: np.concatenate([p[key] for p in parts]) for key in ("final_error", "max_error", "effort",
                                                                        "diverged_at")}


# ---------------------------------------------------------------- reduced solids

def reduced_solid_spec(model, U) -> tuple:
    """What rebuilds a ``ReducedStVK(model, U)`` in a worker.

    Parameters
    ----------
    model : fem.StVKModel
        The full model.
    U : (N, r) array
        The basis.

    Returns
    -------
    tuple
        The full model's spec and the basis.
    """
    return (model.spec(), np.ascontiguousarray(U))


def reduced_solid(spec) -> ReducedStVK:
    """The reduced model of :func:`reduced_solid_spec`, built once per process.

    Parameters
    ----------
    spec : tuple
        From :func:`reduced_solid_spec`.

    Returns
    -------
    ReducedStVK
    """
    full_spec, U = spec
    return executors.cached(executors.spec_key(*full_spec, U), lambda: ReducedStVK(_model_from_spec(full_spec), U))


def _pd_run(spec, kp, kd, z_ref, w_ff, z0, steps, dt, disturbance):
    """One PD run of a reduced solid (a task): (final state (2r,), feedback
    effort sum |w_fb|^2 dt), or (None, inf) where the gains are too stiff for
    the step (Newton fails or the state goes non-finite)."""
    red = reduced_solid(spec)
    try:
        res = sim.simulate(red, z0, steps, dt, controller=lqr.pd_tracker(kp, kd, z_ref, w_ff), disturbance=disturbance)
    except (RuntimeError, ValueError):
        return None, float("inf")
    return np.array(res.states[-1]), float(np.sum(res.effort) * dt)


def pd_runs(spec, kps, kds, z_ref, w_ff, z0, dt, disturbance=None, executor=None, progress=None) -> list:
    """Closed-loop runs of a reduced solid under each PD pair (kps[i], kds[i]).

    Parameters
    ----------
    spec : tuple
        ``reduced_solid_spec(model, U)``.
    kps, kds : (m,) arrays
        Position (N/m per mode) and velocity gains (N s/m per mode).
    z_ref : (T+1, 2r) array
        Reference.
    w_ff : (T, r) array
        Feed-forward.
    z0 : (2r,) array
        Start state.
    dt : float
        Time step (s).
    disturbance : (T, r) array, optional
        Reduced disturbance.
    executor : optional
        None, a concurrent.futures.Executor, a dask.distributed.Client or "ray" (``executors.map_tasks``).
    progress : None, bool or callable(done, total), optional
        One report over the tasks.

    Returns
    -------
    list of (final state (2r,) or None, feedback effort sum |w_fb|^2 dt)
    """
    kps = np.atleast_1d(as_float_array(kps, "kps"))
    kds = np.atleast_1d(as_float_array(kds, "kds"))
    if kps.shape != kds.shape:
        raise ValueError(f"kps and kds must have the same shape, got {kps.shape} and {kds.shape}")
    z_ref = as_float_array(z_ref, "z_ref")
    T = z_ref.shape[0] - 1
    d = None if disturbance is None else as_float_array(disturbance, "disturbance")
    w_ff = as_float_array(w_ff, "w_ff")
    z0 = as_float_array(z0, "z0")
    tasks = [(spec, float(a), float(b), z_ref, w_ff, z0, T, float(dt), d) for a, b in zip(kps, kds)]
    return executors.map_tasks(_pd_run, tasks, executor, progress=progress, desc="PD gains")


def pd_gain_grid(spec, kps, kds, z_ref, w_ff, z0, dt, disturbance=None, executor=None, progress=None) -> dict:
    """``pd_runs`` over every pair of ``kps`` (a,) x ``kds`` (b,).

    Parameters
    ----------
    spec, z_ref, w_ff, z0, dt, disturbance
        As in :func:`pd_runs`.
    kps : (a,) array
        Position gains (N/m per mode).
    kds : (b,) array
        Velocity gains (N s/m per mode).
    executor : optional
        None, a concurrent.futures.Executor, a dask.distributed.Client or "ray" (``executors.map_tasks``).
    progress : None, bool or callable(done, total), optional
        One report over the tasks.

    Returns
    -------
    dict
        ``kp``, ``kd`` (a b,) the pairs; ``final`` (a b, 2r) final states
        (NaN where the run failed); ``effort`` (a b,) the runs' feedback
        efforts sum |w_fb|^2 dt (inf where it failed).
    """
    kps = np.atleast_1d(as_float_array(kps, "kps"))
    kds = np.atleast_1d(as_float_array(kds, "kds"))
    kp, kd = (g.ravel() for g in np.meshgrid(kps, kds, indexing="ij"))
    out = pd_runs(spec, kp, kd, z_ref, w_ff, z0, dt, disturbance, executor, progress)
    n = np.shape(z_ref)[1]
    return dict(kp=kp, kd=kd, final=np.array([np.full(n, np.nan) if o[0] is None else o[0] for o in out]),
                effort=np.array([o[1] for o in out]))


def lqr_weight_sweep(A, B, dt, Q, R, Q_final, alphas, executor=None, progress=None) -> list:
    """Gains for each control weight ``alpha R``: one ``lqr.solve_continuous`` per weight, as a batch.

    Parameters
    ----------
    A, B, dt, Q, R, Q_final
        As in :func:`directable.lqr.solve_continuous`.
    alphas : (m,) array
        Factors of R.
    executor : optional
        None, a concurrent.futures.Executor, a dask.distributed.Client or "ray" (``executors.map_tasks``).
    progress : None, bool or callable(done, total), optional
        One report over the tasks.

    Returns
    -------
    list of LQRSolution
        In the order of ``alphas``.
    """
    problems = [dict(A=A, B=B, dt=dt, Q=Q, R=float(a) * np.asarray(R, float) if np.ndim(R) else float(a) * R,
                     Q_final=Q_final) for a in np.atleast_1d(alphas)]
    return lqr.solve_continuous_batch(problems, executor=executor, progress=progress)
