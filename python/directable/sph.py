"""2D weakly compressible SPH fluid (MPC/SPH paper) and its simplified
prediction model for :mod:`directable.mpc`.

    import directable as dr
    fluid = dr.sph.SPHFluid2D(dr.sph.block((0.2, 0.0), (0.5, 0.3), dx), dr.sph.box_walls((0, 0), (1, 1), dx),
                              spacing=dx, h=1.3 * dx)
    fluid.step(force)                      # force (N, 2) per particle
    pred = fluid.prediction_model()        # pressure + gravity, neighbours frozen; state (4N,), control (2N,)

Particle arrays are (N, 2); the prediction model's state is
``[positions.ravel(), velocities.ravel()]`` and its control ``forces.ravel()``.
"""
from __future__ import annotations

import numpy as np

from . import _core
from ._validate import real

SPHFluid2D = _core.SPHFluid2D
SPHPrediction = _core.SPHPrediction


def block(lo, hi, spacing) -> np.ndarray:
    """Particles on a square lattice filling [lo, hi) (cell centres), (N, 2)."""
    dx = real(spacing, "spacing")
    if not dx > 0:
        raise ValueError(f"spacing must be positive, got {spacing!r}")
    xs = np.arange(lo[0] + dx / 2, hi[0], dx)
    ys = np.arange(lo[1] + dx / 2, hi[1], dx)
    X, Y = np.meshgrid(xs, ys)
    return np.column_stack([X.ravel(), Y.ravel()])


def box_walls(lo, hi, spacing, layers=3) -> np.ndarray:
    """Boundary particles in ``layers`` rows just outside the box [lo, hi], (M, 2)."""
    dx = real(spacing, "spacing")
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    outer = block(lo - layers * dx, hi + layers * dx, dx)
    inside = np.all((outer > lo) & (outer < hi), axis=1)
    return outer[~inside]


def state(fluid) -> np.ndarray:
    """The prediction model's state (4N,) of a fluid: [positions, velocities]."""
    return np.concatenate([fluid.positions.ravel(), fluid.velocities.ravel()])


__all__ = ["SPHFluid2D", "SPHPrediction", "block", "box_walls", "state"]
