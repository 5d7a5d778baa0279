"""The controlled simulation: model + controller + disturbances, in C++."""
from __future__ import annotations

import warnings

import numpy as np

from . import _core
from ._validate import (as_float_array, finite_array, index_array, integer, optional_array, real,
                        run_with_progress, zeros)

Simulation = _core.Simulation
SimulationResult = _core.SimulationResult


def simulate(model, z0, steps, dt, controller=None, t0=0.0, disturbance=None, open_loop=None, kicks=None,
             jump_steps=None, start_index=0, progress=None) -> SimulationResult:
    """Run ``steps`` steps in one C++ call (GIL released).

    Parameters
    ----------
    model : Model
        The plant, ``z' = F(z, t) + B w``.
    z0 : (n,) array
        Initial state.
    steps : int
        Number of steps N.
    dt : float
        Step length (s).
    controller : Tracker, optional
        An LQR or PD tracker (``lqr.tracker``, ``lqr.pd_tracker``); None runs
        open loop.
    t0 : float, optional
        Time of the first step (s).
    disturbance : (N, s) array, optional
        Control-space forces added to ``w`` at each step.
    open_loop : (N, s) array, optional
        Controls used when there is no controller.
    kicks : (N, n) array, optional
        Added to the state before each step.
    jump_steps : sequence of int, optional
        Steps at which the controller re-targets the closest reference state.
    start_index : int or None, optional
        Reference step the controller starts from (None: the tracker's
        ``index``, where a previous run left it); it advances by one per step.
    progress : None, bool or callable(done, total), optional
        True shows a tqdm bar; Ctrl-C stops the run within 0.2 s.

    Returns
    -------
    SimulationResult
        ``states`` (N+1, n), ``controls`` (N, s), ``feedback`` (N, s),
        ``tracking_error`` (N+1,), ``effort`` (N,), ``ref_index`` (N+1,):
        read-only views of the C++ result.

    Notes
    -----
    The run keeps its own reference index, so one tracker may serve several
    runs at once (the GIL is released); afterwards ``controller.index`` is
    where the run ended.

    Past the tracker's horizon T a tracker made with ``loop=True`` rewinds
    to reference step 0; any other holds the last reference state and gain,
    and a run that will get there (``start_index + steps > T``, no
    ``jump_steps``) issues a ``RuntimeWarning`` (shown once per calling line,
    as Python's warnings are by default) saying from which step it holds.
    """
    js = None if jump_steps is None else index_array(jump_steps, "jump_steps", "(k,)").ravel()
    if js is not None and js.size and (js.min() < 0 or js.max() > np.iinfo(np.int32).max):
        raise ValueError(f"jump_steps must be step numbers in [0, 2^31), got {js.min()} .. {js.max()}")
    js = None if js is None else js.astype(np.int32)
    if controller is not None and not isinstance(controller, _core.Tracker):
        raise TypeError(f"controller must be a directable Tracker or None, got {type(controller).__name__}")
    if controller is not None and not controller.loop and js is None:
        _warn_past_horizon(controller, steps, start_index)
    return run_with_progress(
        _core.simulate, progress, "simulate", model=model, z0=as_float_array(z0, "z0"), steps=integer(steps, "steps"),
        dt=real(dt, "dt"), controller=controller, t0=real(t0, "t0"), disturbance=optional_array(disturbance, "disturbance"),
        open_loop=optional_array(open_loop, "open_loop"), kicks=optional_array(kicks, "kicks"), jump_steps=js,
        start_index=integer(start_index, "start_index", allow_none=True))


def _warn_past_horizon(tracker, steps, start_index):
    """RuntimeWarning where a run without loop goes past the tracker's horizon (bad arguments are the core's)."""
    try:
        start = tracker.index if start_index is None else int(start_index)
        held = start + int(steps) - tracker.horizon
    except (TypeError, ValueError):
        return
    if held > 0 and 0 <= start <= tracker.horizon:
        warnings.warn(f"simulate runs {int(steps)} steps from reference step {start}, past the tracker's horizon "
                      f"{tracker.horizon}: its last {held} steps hold the last reference state and gain (make the "
                      f"tracker with loop=True to rewind to step 0, or run fewer steps)", RuntimeWarning, stacklevel=3)


def push(steps, dim, at, force, duration=1):
    """A disturbance that pushes for ``duration`` steps.

    Parameters
    ----------
    steps : int
        Length of the run N.
    dim : int
        Control dimension s.
    at : int
        First step of the push, in [0, steps).
    force : (dim,) array
        Control-space force (N) applied on steps ``[at, at + duration)``.
    duration : int, optional
        Number of steps, >= 1.

    Returns
    -------
    (steps, dim) ndarray
        The ``disturbance`` argument of :func:`simulate`.
    """
    force = as_float_array(force, "force")
    steps, dim, at, duration = (integer(steps, "steps"), integer(dim, "dim"), integer(at, "at"),
                                integer(duration, "duration"))
    if not np.all(np.isfinite(force)):
        raise ValueError(f"force must be finite, got {force}")
    if force.shape != (dim,):
        raise ValueError(f"force must have shape ({dim},), got {force.shape}")
    if not 0 <= at < steps or duration < 1:
        raise ValueError(f"push must start in [0, {steps}) and last >= 1 step, got at={at}, duration={duration}")
    d = zeros((steps, dim), f"steps x dim = {steps} x {dim}")
    d[at:at + duration] = force
    return d


def summary(result: SimulationResult, dt: float, z_target=None, z_ref=None) -> dict:
    """Scalar measures of a run: RMS/final tracking error, control effort.

    Parameters
    ----------
    result : SimulationResult
        A run of :func:`simulate`.
    dt : float
        Its step length (s).
    z_target : (n,) array, optional
        Adds ``final_distance``, the last state's distance to it.
    z_ref : (N+1, n) array, optional
        Measure the tracking error against this reference instead of the
        controller's own (also for runs without a controller).

    Returns
    -------
    dict
        ``rms_tracking_error``, ``final_tracking_error`` (state units),
        ``feedback_effort`` (sum of ``effort`` times dt), ``total_effort``
        (sum of ``|w|^2 dt``) and, with ``z_target``, ``final_distance``.
    """
    dt = real(dt, "dt", positive=True)
    err = result.tracking_error
    if z_ref is not None:
        z_ref = finite_array(z_ref, "z_ref", result.states.shape, of="that of the run's states")
        err = np.linalg.norm(result.states - z_ref, axis=1)
    out = {
        "rms_tracking_error": float(np.sqrt(np.mean(np.square(err)))),
        "final_tracking_error": float(err[-1]),
        "feedback_effort": float(np.sum(result.effort) * dt),
        "total_effort": float(np.sum(np.square(result.controls)) * dt),
    }
    if z_target is not None:
        z_target = finite_array(z_target, "z_target", result.states.shape[1:], of="one state of the run")
        out["final_distance"] = float(np.linalg.norm(result.states[-1] - z_target))
    for key, cause in (("feedback_effort", f"dt = {dt}"), ("total_effort", f"dt = {dt}"),
                       ("final_distance", "z_target (too far from the final state)")):
        if key in out and not np.isfinite(out[key]):
            raise ValueError(f"{key} overflows: {cause} is too large")
    return out
