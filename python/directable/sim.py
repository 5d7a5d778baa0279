"""The controlled simulation: model + controller + disturbances, in C++."""
from __future__ import annotations

import numpy as np

from . import _core
from ._validate import as_float_array, optional_array, run_with_progress

Simulation = _core.Simulation
SimulationResult = _core.SimulationResult


def simulate(model, z0, steps, dt, controller=None, t0=0.0, disturbance=None, open_loop=None, kicks=None,
             jump_steps=None, progress=None) -> SimulationResult:
    """Run ``steps`` steps in one C++ call (GIL released).

    z0 (n,); controller: a Tracker (LQR or PD) or None; disturbance (steps, s)
    control-space forces added to w; open_loop (steps, s) control used when
    there is no controller; kicks (steps, n) added to the state before each
    step; jump_steps: steps at which the controller re-targets the closest
    reference state. The controller's index advances by one per step.

    Returns a SimulationResult with states (N+1, n), controls (N, s),
    feedback (N, s), tracking_error (N+1,), effort (N,), ref_index (N+1,).
    """
    js = None if jump_steps is None else np.asarray(jump_steps, dtype=np.int32).ravel()
    return run_with_progress(
        _core.simulate, progress, "simulate", model=model, z0=as_float_array(z0, "z0"), steps=int(steps),
        dt=float(dt), controller=controller, t0=float(t0), disturbance=optional_array(disturbance, "disturbance"),
        open_loop=optional_array(open_loop, "open_loop"), kicks=optional_array(kicks, "kicks"), jump_steps=js)


def push(steps, dim, at, force, duration=1):
    """Disturbance array (steps, dim): ``force`` (dim,) applied on steps [at, at + duration)."""
    force = as_float_array(force, "force")
    if force.shape != (dim,):
        raise ValueError(f"force must have shape ({dim},), got {force.shape}")
    if not 0 <= at < steps or duration < 1:
        raise ValueError(f"push must start in [0, {steps}) and last >= 1 step, got at={at}, duration={duration}")
    d = np.zeros((steps, dim))
    d[at:at + duration] = force
    return d


def summary(result: SimulationResult, dt: float, z_target=None) -> dict:
    """Scalar measures of a run: RMS/final tracking error, control effort."""
    out = {
        "rms_tracking_error": float(np.sqrt(np.mean(np.square(result.tracking_error)))),
        "final_tracking_error": float(result.tracking_error[-1]),
        "feedback_effort": float(np.sum(result.effort) * dt),
        "total_effort": float(np.sum(np.square(result.controls)) * dt),
    }
    if z_target is not None:
        out["final_distance"] = float(np.linalg.norm(result.states[-1] - np.asarray(z_target)))
    return out
