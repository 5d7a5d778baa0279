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
from ._validate import check_size, finite_array, integer, real

SPHFluid2D = _core.SPHFluid2D
SPHFluid3D = _core.SPHFluid3D
SPHPrediction = _core.SPHPrediction
SPHPrediction3D = _core.SPHPrediction3D


def _corners(lo, hi):
    lo = finite_array(lo, "lo", [(2,), (3,)])
    return lo, finite_array(hi, "hi", lo.shape, of="that of lo")


def _lattice(lo, hi, dx, what):
    """The cell centres of a dx lattice filling [lo, hi), after the memory check (``what`` names the call)."""
    with np.errstate(over="ignore"):  # an overflowing count is refused by the check
        counts = np.maximum(np.ceil((hi - lo) / dx), 0.0)
    check_size(what, float(np.prod(counts)), lo.size)
    axes = [np.arange(lo[k] + dx / 2, hi[k], dx) for k in range(lo.size)]
    grids = np.meshgrid(*axes[::-1], indexing="ij")[::-1]
    return np.column_stack([g.ravel() for g in grids])


def block(lo, hi, spacing) -> np.ndarray:
    """Particles on a square (cubic) lattice filling [lo, hi) at the cell centres.

    Parameters
    ----------
    lo, hi : (2,) or (3,) array
        Corners of the box (m), finite.
    spacing : float
        Lattice spacing (m), > 0.

    Returns
    -------
    (N, 2) or (N, 3) ndarray
        Positions (m), x varying fastest.
    """
    dx = real(spacing, "spacing", positive=True)
    lo, hi = _corners(lo, hi)
    return _lattice(lo, hi, dx, f"the block of lo = {lo.tolist()}, hi = {hi.tolist()}, spacing = {dx}")


def box_walls(lo, hi, spacing, layers=3) -> np.ndarray:
    """Boundary particles in ``layers`` rows just outside the box [lo, hi].

    Parameters
    ----------
    lo, hi : (2,) or (3,) array
        Corners of the box (m), finite.
    spacing : float
        Lattice spacing (m), > 0.
    layers : int, optional
        Rows of wall particles, >= 1.

    Returns
    -------
    (M, 2) or (M, 3) ndarray
        Positions (m), like the corners.
    """
    dx = real(spacing, "spacing", positive=True)
    lo, hi = _corners(lo, hi)
    layers = integer(layers, "layers")
    if layers < 1:
        raise ValueError(f"layers must be >= 1, got {layers}")
    with np.errstate(over="ignore"):  # an overflowing box is refused by the size check
        outer = _lattice(lo - layers * dx, hi + layers * dx, dx,
                         f"the walls of lo = {lo.tolist()}, hi = {hi.tolist()}, spacing = {dx}, layers = {layers}")
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
