"""Weakly compressible SPH fluid in 2D and 3D (MPC/SPH paper) and its
simplified prediction model for :mod:`directable.mpc`.

    import directable as dr
    fluid = dr.sph.SPHFluid2D(dr.sph.block((0.2, 0.0), (0.5, 0.3), dx), dr.sph.box_walls((0, 0), (1, 1), dx),
                              spacing=dx, h=1.3 * dx)
    fluid.step(force)                      # force (N, 2) per particle
    pred = fluid.prediction_model()        # pressure + gravity, neighbours frozen; state (4N,), control (2N,)

    fluid3 = dr.sph.SPHFluid3D(dr.sph.block((0.4, 0.4, 0.0), (0.6, 0.6, 0.2), dx),
                               dr.sph.box_walls((0, 0, 0), (1, 1, 1), dx), spacing=dx, h=1.3 * dx)

Particle arrays are (N, 2) in 2D and (N, 3) in 3D (gravity along -y in 2D,
-z in 3D by default); the prediction model's state is
``[positions.ravel(), velocities.ravel()]`` and its control ``forces.ravel()``.
"""
from __future__ import annotations

import numpy as np

from . import _core
from ._validate import real

SPHFluid2D = _core.SPHFluid2D
SPHFluid3D = _core.SPHFluid3D
SPHPrediction = _core.SPHPrediction
SPHPrediction3D = _core.SPHPrediction3D


def _corners(lo, hi):
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    if lo.ndim != 1 or lo.shape != hi.shape or lo.size not in (2, 3):
        raise ValueError(f"lo and hi must both have shape (2,) or (3,), got {lo.shape} and {hi.shape}")
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise ValueError("lo and hi must be finite")
    return lo, hi


def block(lo, hi, spacing) -> np.ndarray:
    """Particles on a square (cubic) lattice filling [lo, hi) at the cell centres.

    Parameters
    ----------
    lo, hi : (2,) or (3,) array
        Corners of the box (m).
    spacing : float
        Lattice spacing (m), > 0.

    Returns
    -------
    (N, 2) or (N, 3) ndarray
        Positions (m), x varying fastest.
    """
    dx = real(spacing, "spacing")
    if not dx > 0:
        raise ValueError(f"spacing must be positive, got {spacing!r}")
    lo, hi = _corners(lo, hi)
    axes = [np.arange(lo[k] + dx / 2, hi[k], dx) for k in range(lo.size)]
    grids = np.meshgrid(*axes[::-1], indexing="ij")[::-1]
    return np.column_stack([g.ravel() for g in grids])


def box_walls(lo, hi, spacing, layers=3) -> np.ndarray:
    """Boundary particles in ``layers`` rows just outside the box [lo, hi].

    Parameters
    ----------
    lo, hi : (2,) or (3,) array
        Corners of the box (m).
    spacing : float
        Lattice spacing (m).
    layers : int, optional
        Rows of wall particles.

    Returns
    -------
    (M, 2) or (M, 3) ndarray
        Positions (m), like the corners.
    """
    dx = real(spacing, "spacing")
    lo, hi = _corners(lo, hi)
    outer = block(lo - layers * dx, hi + layers * dx, dx)
    inside = np.all((outer > lo) & (outer < hi), axis=1)
    return outer[~inside]


def state(fluid) -> np.ndarray:
    """The prediction model's state of a fluid: ``[positions.ravel(), velocities.ravel()]``.

    Parameters
    ----------
    fluid : SPHFluid2D or SPHFluid3D
        The fluid.

    Returns
    -------
    (2 D N,) ndarray
        Positions (m) then velocities (m/s) of its N particles in D dimensions.
    """
    if not isinstance(fluid, (_core.SPHFluid2D, _core.SPHFluid3D)):
        raise TypeError(f"fluid must be an SPHFluid2D or SPHFluid3D, got {type(fluid).__name__}")
    return np.concatenate([fluid.positions.ravel(), fluid.velocities.ravel()])


__all__ = ["SPHFluid2D", "SPHFluid3D", "SPHPrediction", "SPHPrediction3D", "block", "box_walls", "state"]
