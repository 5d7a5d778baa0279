"""Reduced models offered to the controllers (the ``Model`` interface)."""
from __future__ import annotations

import numpy as np

from . import _core
from ._validate import (actuation_matrix, as_float_array, broadcast, check_size, finite_array, integer, real,
                        run_with_progress)

Model = _core.Model
SpringChain = _core.SpringChain


def spring_chain(masses=8, mass=1.0, stiffness=40.0, cubic=400.0, damping=0.2, actuated=None) -> SpringChain:
    """A chain of ``masses`` unit masses joined by damped Duffing springs.

    Parameters
    ----------
    masses : int or (m,) array, optional
        Number of masses m, or their masses (kg).
    mass : float or (m,) array, optional
        Mass of each (kg), when ``masses`` is a count.
    stiffness : float or (m,) array, optional
        Linear spring stiffness (N/m).
    cubic : float or (m,) array, optional
        Cubic (Duffing) stiffness (N/m^3).
    damping : float or (m,) array, optional
        Damping (N s/m).
    actuated : None, sequence of int or (m, s) array, optional
        None (every mass driven), the driven masses' indices, or a matrix
        mapping the s controls to mass forces.

    Returns
    -------
    SpringChain
        A Model with state ``z = [q, qd]`` (n = 2m) and controls (s,).
    """
    m = integer(masses, "masses") if np.ndim(masses) == 0 else len(masses)
    if m < 1:
        raise ValueError(f"masses must be at least 1, got {masses}")
    check_size(f"masses = {m} (the chain's parameters)", 5, m)
    mvec = broadcast(mass, m, "mass") if np.ndim(masses) == 0 else as_float_array(masses, "masses")
    return SpringChain(mvec, broadcast(stiffness, m, "stiffness"), broadcast(cubic, m, "cubic"),
                       broadcast(damping, m, "damping"), actuation_matrix(actuated, m))


def linearize(model: Model, z_ref, dt, t0=0.0, horizon=None, threads=0, progress=None) -> np.ndarray:
    """Jacobians ``A_i = dF/dz`` along a reference, in parallel.

    Parameters
    ----------
    model : Model
        The model.
    z_ref : (T+1, n) array
        Reference states; ``A_i`` is taken at ``z_ref[i]``, time ``t0 + i dt``.
    dt : float
        Step length (s).
    t0 : float, optional
        Time of ``z_ref[0]`` (s).
    horizon : int, optional
        T, when fewer steps than ``z_ref`` holds are wanted.
    threads : int, optional
        Cores (0: all); the GIL is released.
    progress : None, bool or callable(done, total), optional
        True shows a tqdm bar.

    Returns
    -------
    (T, n, n) ndarray
        The Jacobians (1/s).
    """
    return run_with_progress(_core.linearize, progress, "linearize", model=model,
                             z_ref=as_float_array(z_ref, "z_ref"), dt=real(dt, "dt"), t0=real(t0, "t0"),
                             horizon=integer(horizon, "horizon", allow_none=True),
                             threads=integer(threads, "threads"))


def rollout(model: Model, z0, w, dt, t0=0.0) -> np.ndarray:
    """Open-loop run of a model under given controls: a reference.

    Parameters
    ----------
    model : Model
        The model.
    z0 : (n,) array
        Initial state.
    w : (T, s) array
        Controls, one per step.
    dt : float
        Step length (s).
    t0 : float, optional
        Initial time (s).

    Returns
    -------
    (T+1, n) ndarray
        The states.
    """
    w = as_float_array(w, "w")
    if w.ndim != 2:
        raise ValueError(f"w must be a (T, s) array, got shape {w.shape}")
    res = _core.simulate(model, as_float_array(z0, "z0"), w.shape[0], real(dt, "dt"), None, real(t0, "t0"), None, w)
    return np.array(res.states)


def finite_difference_jacobian(model: Model, z, t=0.0, eps=1e-6) -> np.ndarray:
    """Central-difference ``dF/dz``, to check analytic Jacobians.

    Parameters
    ----------
    model : Model
        The model.
    z : (n,) array
        State, finite (n = ``model.state_dim()``).
    t : float, optional
        Time (s).
    eps : float, optional
        Relative step (times ``max(1, |z_j|)``), > 0.

    Returns
    -------
    (n, n) ndarray
        The Jacobian (1/s); a ValueError where the differences overflow.
    """
    z = finite_array(z, "z", (model.state_dim(),), of="the model's state_dim()")
    t = real(t, "t", finite=True)
    eps = real(eps, "eps", positive=True)
    n = z.size
    J = np.empty((n, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = eps * max(1.0, abs(z[j]))
        if not (np.isfinite(z[j] + e[j]) and np.isfinite(z[j] - e[j]) and z[j] + e[j] != z[j]):
            raise ValueError(f"eps = {eps} gives no usable step at z[{j}] = {z[j]} (the step overflows or rounds away)")
        f_plus, f_minus = model.dynamics(z + e, t), model.dynamics(z - e, t)
        with np.errstate(over="ignore", invalid="ignore"):  # refused below, naming z
            J[:, j] = (f_plus - f_minus) / (2 * e[j])
    if not np.isfinite(J).all():
        raise ValueError(f"the finite differences are not finite at z (eps = {eps}): the dynamics overflow there")
    return J


__all__ = ["Model", "SpringChain", "spring_chain", "linearize", "rollout", "finite_difference_jacobian"]
