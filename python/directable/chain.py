"""Articulated planar chains and PD / Stable PD servos (Tan, Liu & Turk 2011).

Conventions (fixed): the root joint is pinned at the origin (``free_root=True``
adds the root position, ``q = [x, y, theta_1 .. theta_L]``); each joint angle
is relative to its parent link; ``q = 0`` hangs straight down with gravity
along -y; links are uniform rods unless inertias / centres of mass are given.
``M(q) qdd + C(q, qd) = tau`` with ``C`` = Coriolis/centrifugal + gravity +
joint damping. Arrays: float64, time first -- ``q_ref (T+1, n)``,
``tau (T, n)``, per-step gains ``(T, n)``.

    import directable as dr
    chain = dr.chain.PlanarChain([1.0, 1.0], [1.0, 1.0])
    run = dr.chain.track(chain, q_ref, qd_ref, dt=1/60, kp=3e4, kd=3e4/60)
    run.q, run.qd, run.tau, run.diverged, run.diverged_at

The whole tracking loop runs in C++ (``_core.track``); a model of another
engine plugs in through ``ExternalModel`` (callbacks) or ``spd_step``
(arrays).
"""
from __future__ import annotations

import warnings

import numpy as np

from . import _core
from ._validate import (as_float_array, broadcast, check_size, finite_array, finite_real, integer, optional_array,
                        real, run_with_progress)

PlanarChain = _core.PlanarChain
Articulated = _core.Articulated
TrackResult = _core.TrackResult
Integrator = _core.Integrator
Servo = _core.Servo

_INTEGRATORS = {
    "euler": Integrator.explicit_euler, "explicit_euler": Integrator.explicit_euler,
    "semi_implicit": Integrator.semi_implicit_euler, "semi_implicit_euler": Integrator.semi_implicit_euler,
    "symplectic_euler": Integrator.semi_implicit_euler, "rk4": Integrator.rk4,
}
_SERVOS = {"spd": Servo.spd, "pd": Servo.pd, "none": Servo.none}


class ExternalModel(Articulated):
    """An articulated model defined by callbacks, e.g. from MuJoCo or Pinocchio.

    ``mass_matrix(q) -> (n, n)`` and ``bias_forces(q, qd) -> (n,)`` (Coriolis,
    gravity and passive forces, ``M qdd + C = tau``). ``track`` then runs the
    PD/SPD loop in C++ calling back into Python for M and C at every step
    (and every RK4 stage).

    Parameters
    ----------
    mass_matrix : callable(q) -> (n, n) array
        Joint-space mass matrix M(q).
    bias_forces : callable(q, qd) -> (n,) array
        C(q, qd): Coriolis, gravity and passive forces.
    dofs : int
        n, the number of joint coordinates.
    """

    def __init__(self, mass_matrix, bias_forces, dofs):
        super().__init__()
        if not callable(mass_matrix) or not callable(bias_forces):
            raise TypeError("mass_matrix and bias_forces must be callables")
        self._M, self._C, self._n = mass_matrix, bias_forces, integer(dofs, "dofs")
        if self._n < 1:
            raise ValueError(f"dofs must be >= 1, got {self._n}")

    def dofs(self):
        """Number of joint coordinates n.

        Returns
        -------
        int
        """
        return self._n

    def mass_matrix(self, q):
        """The mass matrix from the callback.

        Parameters
        ----------
        q : (n,) array
            Joint positions.

        Returns
        -------
        (n, n) ndarray
        """
        return np.asarray(self._M(np.asarray(q)), dtype=float)

    def bias_forces(self, q, qd):
        """The bias forces from the callback.

        Parameters
        ----------
        q, qd : (n,) array
            Joint positions and velocities.

        Returns
        -------
        (n,) ndarray
        """
        return np.asarray(self._C(np.asarray(q), np.asarray(qd)), dtype=float)


def _limits(tau_limit, tau_min, tau_max, n):
    if tau_limit is not None:
        if tau_min is not None or tau_max is not None:
            raise ValueError("give either tau_limit or tau_min/tau_max, not both")
        lim = broadcast(tau_limit, n, "tau_limit")
        if np.any(lim < 0):
            raise ValueError(f"tau_limit must be >= 0, got {lim}")
        return -lim, lim
    return broadcast(tau_min, n, "tau_min", optional=True), broadcast(tau_max, n, "tau_max", optional=True)


def _gain(k, n, T, name):
    """A servo gain as (n,) or (T, n); checked here because the SPD stability
    warning compares kp and kd before the core sees them."""
    k = broadcast(k, n, name)
    if k.shape not in ((n,), (T, n)):
        raise ValueError(f"{name} must be a scalar, ({n},) or ({T}, {n}), got shape {k.shape}")
    return k


def _dofs(model):
    if not isinstance(model, Articulated):
        raise TypeError(f"chain must be a PlanarChain or an Articulated model, got {type(model).__name__}")
    return model.dofs()


def track(chain, q_ref, qd_ref, dt, kp, kd, controller="spd", q0=None, qd0=None, integrator="euler", *,
          tau_ff=None, tau_ext=None, tau_limit=None, tau_min=None, tau_max=None, max_state=1e6,
          progress=None) -> TrackResult:
    """Track ``q_ref`` with a PD or SPD servo; the whole loop runs in C++.

    Parameters
    ----------
    chain : PlanarChain or any Articulated (e.g. ExternalModel)
    q_ref : (T+1, n) reference positions
    qd_ref : (T+1, n) reference velocities, or None: track zero velocity
        (eq. 1 / 3 of the paper instead of eq. 4 / 5)
    dt : time step
    kp, kd : scalar, (n,) or (T, n) per-step diagonal gains, >= 0
    controller : "spd" (eq. 5/11: next-step prediction, (M + Kd dt)^-1 solve),
        "pd" (eq. 1/4) or "none" (feed-forward torque only)
    q0, qd0 : (n,) initial state; default q_ref[0] and qd_ref[0] (or zero)
    integrator : "euler" (explicit, the paper's), "semi_implicit" or "rk4"
    tau_ff, tau_ext : (T, n) feed-forward torque (part of ``tau``) and
        external torque (a push; not part of ``tau``)
    tau_limit : scalar or (n,) symmetric torque limit; or tau_min / tau_max
    tau_min, tau_max : scalar or (n,), optional
        Asymmetric torque limits (N m), instead of ``tau_limit``.
    max_state : |q| or |qd| beyond this counts as divergence
    progress : None, bool or callable(done, total), optional
        True shows a tqdm bar; Ctrl-C stops the loop.

    Returns
    -------
    TrackResult with ``q``, ``qd`` (T+1, n), ``tau`` (T, n), ``diverged``,
    ``diverged_at`` (step index or -1) and ``steps``. A divergent run stops
    at the first bad step; the rows after it are NaN.

    SPD is stable for any gains when ``kd >= kp dt`` (paper, appendix); a
    smaller ``kd`` is allowed with a RuntimeWarning.
    """
    n = _dofs(chain)
    q_ref = as_float_array(q_ref, "q_ref")
    if q_ref.ndim != 2 or q_ref.shape[1] != n or q_ref.shape[0] < 2:
        raise ValueError(f"q_ref must have shape (T+1, {n}) with T >= 1, got {q_ref.shape}")
    T = q_ref.shape[0] - 1
    qd_ref = optional_array(qd_ref, "qd_ref")
    dt = real(dt, "dt")
    if controller not in _SERVOS:
        raise ValueError(f"controller must be one of {sorted(_SERVOS)}, got {controller!r}")
    if integrator not in _INTEGRATORS:
        raise ValueError(f"integrator must be one of {sorted(_INTEGRATORS)}, got {integrator!r}")
    kp = _gain(kp, n, T, "kp")
    kd = _gain(kd, n, T, "kd")
    if controller == "spd" and dt > 0 and np.all(np.isfinite(kp)) and np.all(np.isfinite(kd)):
        if np.any(kd < kp * dt * (1 - 1e-12)):
            warnings.warn(f"kd < kp * dt (min kd / (kp dt) = {np.min(kd / np.maximum(kp * dt, 1e-300)):.3g}): "
                          "SPD stability is not guaranteed (paper, appendix: choose kd >= kp dt)",
                          RuntimeWarning, stacklevel=2)
    if q0 is None:
        q0 = q_ref[0]
    if qd0 is None:
        qd0 = qd_ref[0] if qd_ref is not None and qd_ref.ndim == 2 and qd_ref.shape[0] > 0 else np.zeros(n)
    tmin, tmax = _limits(tau_limit, tau_min, tau_max, n)
    return run_with_progress(
        _core.track, progress, "track", model=chain, q0=as_float_array(q0, "q0"), qd0=as_float_array(qd0, "qd0"),
        q_ref=q_ref, qd_ref=qd_ref, kp=kp, kd=kd, dt=dt, servo=_SERVOS[controller],
        integrator=_INTEGRATORS[integrator], tau_ff=optional_array(tau_ff, "tau_ff"),
        tau_ext=optional_array(tau_ext, "tau_ext"), tau_min=tmin, tau_max=tmax, max_state=real(max_state, "max_state"))


def rollout(chain, q0, qd0, dt, steps, tau=None, integrator="rk4", tau_ext=None) -> TrackResult:
    """Unservoed simulation from (q0, qd0) under given torques.

    Parameters
    ----------
    chain : PlanarChain or Articulated
        The chain.
    q0, qd0 : (n,) array
        Initial positions (rad) and velocities (rad/s).
    dt : float
        Time step (s).
    steps : int
        Number of steps T.
    tau : (T, n) array, optional
        Joint torques (N m), zero if None.
    integrator : {"rk4", "euler", "semi_implicit"}, optional
        As in :func:`track`.
    tau_ext : (T, n) array, optional
        External torques (N m).

    Returns
    -------
    TrackResult
        ``q``, ``qd`` (T+1, n); ``tau`` is the given torque.
    """
    n = _dofs(chain)
    steps = integer(steps, "steps")
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    check_size(f"steps = {steps} (the run's q, qd and reference)", 3, steps + 1, n)
    return track(chain, np.zeros((steps + 1, n)), None, dt, 0.0, 0.0, controller="none", q0=q0, qd0=qd0,
                 integrator=integrator, tau_ff=tau, tau_ext=tau_ext)


def spd_step(M, C, q, qd, q_ref_next, qd_ref_next, kp, kd, dt):
    """One SPD evaluation from another engine's ``M`` and ``C``.

    Parameters
    ----------
    M : (n, n) array
        Mass matrix at the current state.
    C : (n,) array
        Bias forces (Coriolis, gravity, passive).
    q, qd : (n,) array
        Current positions and velocities.
    q_ref_next, qd_ref_next : (n,) array
        Reference at the next step (``qd_ref_next`` None: zero).
    kp, kd : float or (n,) array
        Gains.
    dt : float
        Time step (s).

    Returns
    -------
    tau : (n,) ndarray
        Torque to apply in that engine before stepping it.
    qdd : (n,) ndarray
        The acceleration SPD predicts.
    """
    M = as_float_array(M, "M")
    n = M.shape[0] if M.ndim == 2 else -1  # the mass matrix fixes n (the core names the others against it)
    qd_ref_next = np.zeros(max(n, 0)) if qd_ref_next is None else qd_ref_next
    return _core.spd_step(M, as_float_array(C, "C"), as_float_array(q, "q"), as_float_array(qd, "qd"),
                          as_float_array(q_ref_next, "q_ref_next"), as_float_array(qd_ref_next, "qd_ref_next"),
                          broadcast(kp, max(n, 0), "kp"), broadcast(kd, max(n, 0), "kd"), real(dt, "dt"))


def linearize(chain, q_ref, qd_ref, tau_ref=None, threads=0):
    """Linearization of ``z' = [qd; M^-1 (tau - C)]`` along a reference, for ``directable.lqr``.

    Parameters
    ----------
    chain : PlanarChain or Articulated
        The chain.
    q_ref, qd_ref : (T+1, n) array
        Reference positions and velocities.
    tau_ref : (T, n) array, optional
        Reference torques (zero if None).
    threads : int, optional
        Cores (0: all).

    Returns
    -------
    A : (T, 2n, 2n) ndarray
    B : (T, 2n, n) ndarray
    """
    q_ref, qd_ref = as_float_array(q_ref, "q_ref"), as_float_array(qd_ref, "qd_ref")
    return chain.linearize(_state(q_ref, qd_ref, "q_ref", "qd_ref"), optional_array(tau_ref, "tau_ref"),
                           integer(threads, "threads"))


def state(q, qd) -> np.ndarray:
    """The state ``z = [q, qd]``.

    Parameters
    ----------
    q, qd : (T, n) or (n,) array
        Positions and velocities.

    Returns
    -------
    (T, 2n) or (2n,) ndarray
    """
    return _state(q, qd, "q", "qd")


def _state(q, qd, q_name, qd_name):
    q = finite_array(q, q_name, [(None, None), (None,)])
    qd = finite_array(qd, qd_name, q.shape, of=f"that of {q_name}")
    return np.ascontiguousarray(np.concatenate([q, qd], axis=-1))


def inverse_dynamics(chain, q, qd, qdd) -> np.ndarray:
    """``tau = M qdd + C`` along a trajectory (feed-forward torques of a reference), in one C++ call.

    Parameters
    ----------
    chain : PlanarChain or Articulated
        The chain.
    q, qd, qdd : (T, n) array
        Positions, velocities, accelerations.

    Returns
    -------
    (T, n) ndarray
        Torques (N m).
    """
    q, qd, qdd = (np.atleast_2d(as_float_array(a, name)) for a, name in ((q, "q"), (qd, "qd"), (qdd, "qdd")))
    return chain.inverse_dynamics_along(q, qd, qdd)


def positions(chain, q) -> np.ndarray:
    """Joint positions in the plane.

    Parameters
    ----------
    chain : PlanarChain
        The chain of L links.
    q : (T, n) or (n,) array
        Joint angles (rad).

    Returns
    -------
    (T, L+1, 2) or (L+1, 2) ndarray
        Positions (m), the base first.
    """
    q = as_float_array(q, "q")
    if q.ndim == 1:
        return chain.joint_positions(q)
    return chain.joint_positions_along(q)


def energy(chain, q, qd) -> np.ndarray:
    """Kinetic plus potential energy.

    Parameters
    ----------
    chain : PlanarChain
        The chain.
    q, qd : (n,) or (T, n) array
        Positions and velocities.

    Returns
    -------
    float or (T,) ndarray
        Energy (J).
    """
    q = as_float_array(q, "q")
    qd = as_float_array(qd, "qd")
    if q.ndim == 1:
        return chain.kinetic_energy(q, qd) + chain.potential_energy(q)
    return chain.energies_along(q, qd)


def tracking_errors(q, q_ref):
    """Per-joint error norms of a run, as in the paper's tables 1-2.

    Parameters
    ----------
    q : (T+1, n) array
        The run (rad); the NaN rows of a diverged run (:func:`track`) count
        as an infinite error.
    q_ref : (T+1, n) array
        Its reference (rad), finite.

    Returns
    -------
    inf_norm, two_norm : (n,) ndarray
        Norms of ``q - q_ref`` over the time steps (rad; ``inf`` for a
        diverged run).
    """
    q = as_float_array(q, "q")
    if q.ndim != 2:
        raise ValueError(f"q must have shape (T+1, n), got {q.shape}")
    q_ref = finite_array(q_ref, "q_ref", q.shape, of="that of q")
    e = q - q_ref
    bad = ~np.all(np.isfinite(e), axis=0)
    inf_norm = np.where(bad, np.inf, np.max(np.abs(np.nan_to_num(e)), axis=0))
    two_norm = np.where(bad, np.inf, np.sqrt(np.sum(np.square(np.nan_to_num(e)), axis=0)))
    return inf_norm, two_norm


def crossfade(key_steps, key_q, kt, steps, power=24, floor=0.005):
    """Keyframe tracking with two SPD servos cross-fading their gains (sec. 4.2).

    Between keyframes i and i+1 (at steps ``key_steps[i]``), with alpha the
    normalized time from keyframe i, servo i has gain ``(1 - alpha)^power kt``
    and servo i+1 ``(alpha^power + floor) kt``. Two SPD servos with diagonal
    gains add up to one SPD servo with the summed gain tracking the
    gain-weighted mean of the two keyframes, which is what this returns:
    ``(q_ref (steps+1, n), kp (steps, n))``; use ``kd = c * kp * dt``.

    Parameters
    ----------
    key_steps : (K,) sequence of int
        Increasing steps from 0 to ``steps``.
    key_q : (K, n) array
        Keyframes.
    kt : float or (n,) array
        Gain scale (e.g. proportional to the mass each joint supports).
    steps : int
        Length of the reference.
    power : float, optional
        Exponent of the cross-fade.
    floor : float, optional
        Minimum share of the incoming servo.

    Returns
    -------
    q_ref : (steps+1, n) ndarray
    kp : (steps, n) ndarray
    """
    key_steps = np.asarray(key_steps)
    key_q = as_float_array(key_q, "key_q")
    steps = integer(steps, "steps")
    if key_steps.ndim != 1 or key_steps.dtype.kind not in "iu" or key_steps.size < 2:
        raise TypeError("key_steps must be a 1-D array of at least two ints")
    if np.any(np.diff(key_steps) <= 0) or key_steps[0] != 0 or key_steps[-1] != steps:
        raise ValueError(f"key_steps must increase from 0 to steps={steps}, got {key_steps.tolist()}")
    if key_q.ndim != 2 or key_q.shape[0] != key_steps.size:
        raise ValueError(f"key_q must have shape ({key_steps.size}, n), got {key_q.shape}")
    n = key_q.shape[1]
    finite_array(key_q, "key_q")
    kt = finite_array(kt, "kt")
    if kt.ndim > 1 or kt.size not in (1, n):
        raise ValueError(f"kt must be a scalar or have shape ({n},), got {kt.shape}")
    kt = np.broadcast_to(kt, (n,))
    power = finite_real(power, "power", 0.0)
    floor = finite_real(floor, "floor", 0.0)
    k = np.arange(steps + 1)
    seg = np.clip(np.searchsorted(key_steps, k, side="right") - 1, 0, key_steps.size - 2)
    alpha = (k - key_steps[seg]) / (key_steps[seg + 1] - key_steps[seg])
    w0 = (1.0 - alpha) ** power
    w1 = alpha ** power + floor
    q_ref = (w0[:, None] * key_q[seg] + w1[:, None] * key_q[seg + 1]) / (w0 + w1)[:, None]
    gain = (w0 + w1)[:, None] * kt[None, :]
    if not np.all(np.isfinite(gain)):
        raise ValueError(f"the gains (w0 + w1) kt overflow: kt (max |kt| = {np.max(np.abs(kt)):g}), floor = {floor:g} "
                         f"or power = {power:g} too large")
    return np.ascontiguousarray(q_ref), np.ascontiguousarray(gain[1:])  # SPD on step i targets state i+1




def largest_stable_dt(chain, q_of_t, qd_of_t, kp, controller="spd", kd_factor=1.0, duration=5.0,
                      dts=None, tolerance=1.0, integrator="euler"):
    """Largest time step at which tracking stays stable (paper, figure 4).

    For each candidate ``dt`` (default: 40 steps from 1e-4 s to 1/30 s, the
    reference's sampling), tracks ``q_of_t(t)`` (T+1, n) / ``qd_of_t(t)`` for
    ``duration`` seconds with ``kd = kd_factor kp dt``; a run is stable when it
    does not diverge and stays within ``tolerance`` of the reference. Returns
    the largest stable ``dt`` (0.0 if none) -- the candidates are scanned from
    the largest down, so the answer is the largest stable one even when
    stability is not monotone in ``dt``.

    Parameters
    ----------
    chain : PlanarChain or Articulated
        The chain.
    q_of_t, qd_of_t : callable(t) -> (T+1, n) array
        The reference sampled at the times ``t``.
    kp : float or (n,) array
        Stiffness gains.
    controller : {"spd", "pd"}, optional
        The servo.
    kd_factor : float, optional
        ``kd = kd_factor kp dt``.
    duration : float, optional
        Seconds tracked.
    dts : sequence of float, optional
        Candidate steps (s).
    tolerance : float, optional
        Largest error (rad) a stable run may have.
    integrator : str, optional
        As in :func:`track`.

    Returns
    -------
    float
        The largest stable ``dt`` (s), 0.0 if none.
    """
    duration = finite_real(duration, "duration", 0.0, strict=True)
    tolerance = finite_real(tolerance, "tolerance", 0.0, strict=True)
    kd_factor = finite_real(kd_factor, "kd_factor", 0.0)
    kp = finite_array(kp, "kp")
    dts = np.geomspace(1e-4, 1 / 30, 40) if dts is None else finite_array(dts, "dts")
    if dts.ndim != 1 or dts.size == 0 or np.min(dts) <= 0:
        raise ValueError(f"dts must be a non-empty 1-D sequence of steps > 0 (s), got {dts.tolist()}")
    dts = np.sort(dts)
    if not np.all(np.isfinite(kd_factor * kp * dts[-1])):
        raise ValueError(f"kd = kd_factor kp dt overflows: kd_factor = {kd_factor:g}, max |kp| = {np.max(np.abs(kp)):g}")
    check_size("duration", duration / dts[0] + 2, 2 * kp.size + 2)
    for dt in dts[::-1]:
        T = max(1, int(round(duration / dt)))
        t = np.arange(T + 1) * dt
        q_ref, qd_ref = as_float_array(q_of_t(t), "q_of_t(t)"), as_float_array(qd_of_t(t), "qd_of_t(t)")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            r = track(chain, q_ref, qd_ref, float(dt), kp, kd_factor * kp * dt, controller=controller,
                      integrator=integrator)
        if not r.diverged and np.max(np.abs(r.q - q_ref)) < tolerance:
            return float(dt)
    return 0.0


__all__ = ["PlanarChain", "Articulated", "ExternalModel", "TrackResult", "track", "rollout", "spd_step", "linearize",
           "state", "inverse_dynamics", "positions", "energy", "tracking_errors", "crossfade", "largest_stable_dt"]
