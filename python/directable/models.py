"""Reduced models offered to the controllers (the ``Model`` interface)."""
from __future__ import annotations

import numpy as np

from . import _core
from ._validate import actuation_matrix, as_float_array, broadcast, integer, real, run_with_progress

Model = _core.Model
SpringChain = _core.SpringChain


def spring_chain(masses=8, mass=1.0, stiffness=40.0, cubic=400.0, damping=0.2, actuated=None) -> SpringChain:
    """A chain of ``masses`` unit masses joined by damped Duffing springs.

    Scalars are broadcast to every mass/spring; arrays (m,) are used as is.
    ``actuated``: None (every mass driven), a list of driven mass indices, or
    an (m, s) matrix mapping controls to mass forces.
    """
    m = integer(masses, "masses") if np.ndim(masses) == 0 else len(masses)
    if m < 1:
        raise ValueError(f"masses must be at least 1, got {masses}")
    mvec = broadcast(mass, m, "mass") if np.ndim(masses) == 0 else as_float_array(masses, "masses")
    return SpringChain(mvec, broadcast(stiffness, m, "stiffness"), broadcast(cubic, m, "cubic"),
                       broadcast(damping, m, "damping"), actuation_matrix(actuated, m))


def linearize(model: Model, z_ref, dt, t0=0.0, horizon=None, threads=0, progress=None) -> np.ndarray:
    """``A_i = dF/dz`` at ``z_ref[i]`` (time ``t0 + i dt``): (T, n, n) for z_ref (T+1, n)."""
    return run_with_progress(_core.linearize, progress, "linearize", model=model,
                             z_ref=as_float_array(z_ref, "z_ref"), dt=real(dt, "dt"), t0=real(t0, "t0"),
                             horizon=integer(horizon, "horizon", allow_none=True),
                             threads=integer(threads, "threads"))


def rollout(model: Model, z0, w, dt, t0=0.0) -> np.ndarray:
    """Open-loop states (T+1, n) from z0 (n,) under controls w (T, s): a reference."""
    w = as_float_array(w, "w")
    if w.ndim != 2:
        raise ValueError(f"w must be a (T, s) array, got shape {w.shape}")
    res = _core.simulate(model, as_float_array(z0, "z0"), w.shape[0], real(dt, "dt"), None, real(t0, "t0"), None, w)
    return np.array(res.states)


def finite_difference_jacobian(model: Model, z, t=0.0, eps=1e-6) -> np.ndarray:
    """Central-difference dF/dz (n, n), to check analytic Jacobians."""
    z = as_float_array(z, "z")
    n = z.size
    J = np.empty((n, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = eps * max(1.0, abs(z[j]))
        J[:, j] = (model.dynamics(z + e, t) - model.dynamics(z - e, t)) / (2 * e[j])
    return J


__all__ = ["Model", "SpringChain", "spring_chain", "linearize", "rollout", "finite_difference_jacobian"]
