"""Forcing for the reduced-fluid experiments: Gaussian wind impulses (the
full runs that a velocity basis is extracted from, Barbic & Popovic 2008
sec. 5.2) and Perlin-noise disturbances, smooth in time, on the reduced
coordinates (sec. 6).

    winds = fluid_forcing.random_winds(grid, 10, steps, seed=4)
    run = dr.fluid.full_run(grid, steps, dt, winds)
    w = fluid_forcing.PerlinForce(r, amplitude=5.0).series(steps, dt)   # (steps, r)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validate import as_float_array, integer, real
from ..fluid import face_positions

__all__ = ["Wind", "random_winds", "perlin", "PerlinForce"]


@dataclass(frozen=True)
class Wind:
    """A wind impulse: acceleration ``magnitude * direction * exp(-|x - center|^2 / width^2)``.

    Parameters
    ----------
    center : (2,) tuple
        Centre (m).
    direction : (2,) tuple
        Direction (normalised when used).
    magnitude : float
        Peak acceleration (m/s^2).
    width : float
        Gaussian width (m).
    start : int, optional
        First step.
    duration : int, optional
        Number of steps, applied on [start, start + duration).
    """

    center: tuple
    direction: tuple
    magnitude: float
    width: float
    start: int = 0
    duration: int = 1

    def field(self, grid) -> np.ndarray:
        """The impulse's acceleration on a grid's faces.

        Parameters
        ----------
        grid : MACGrid2D
            The grid.

        Returns
        -------
        (n_faces,) ndarray
            Face-normal accelerations (m/s^2).
        """
        d = np.asarray(self.direction, float)
        d = d / max(np.linalg.norm(d), 1e-300)
        return grid.wind(np.asarray(self.center, float), d, real(self.magnitude, "magnitude"),
                         real(self.width, "width"))


def random_winds(grid, count, steps, seed=0, magnitude=(20.0, 60.0), width=(0.05, 0.15), duration=(2, 8),
                 centers=None, velocity=None) -> list:
    """Wind impulses at random times, directions and strengths (basis enrichment, paper sec. 5.2).

    Parameters
    ----------
    grid : MACGrid2D
        The grid.
    count : int
        Number of impulses.
    steps : int
        Length of the run they fall in.
    seed : int, optional
        Random seed.
    magnitude : (2,) tuple, optional
        Range of peak accelerations (m/s^2).
    width : (2,) tuple, optional
        Range of widths, as fractions of the domain width.
    duration : (2,) tuple of int, optional
        Range of durations (steps).
    centers : (count, 2) array, optional
        Where they are (e.g. at a particle's position).
    velocity : (n_faces,) array, optional
        Without ``centers``: faces drawn with probability proportional to the
        squared speed (biased to high-velocity regions); with neither,
        uniformly in the inner domain.

    Returns
    -------
    list of Wind
    """
    rng = np.random.default_rng(seed)
    W, H = grid.nx * grid.h, grid.ny * grid.h
    count = integer(count, "count")
    if centers is not None:
        centers = as_float_array(centers, "centers")
        if centers.shape != (count, 2):
            raise ValueError(f"centers must have shape ({count}, 2), got {centers.shape}")
    elif velocity is not None:
        u = as_float_array(velocity, "velocity")
        if u.shape != (grid.n_faces,):
            raise ValueError(f"velocity must have shape ({grid.n_faces},), got {u.shape}")
        w = u ** 2
        if not np.isfinite(w).all() or w.sum() <= 0:
            raise ValueError("velocity must be finite and not all zero")
        centers = face_positions(grid)[rng.choice(grid.n_faces, size=count, p=w / w.sum())]
    out = []
    for k in range(count):
        c = (rng.uniform(0.2, 0.8) * W, rng.uniform(0.2, 0.8) * H) if centers is None else tuple(centers[k])
        a = rng.uniform(0, 2 * np.pi)
        out.append(Wind(c, (np.cos(a), np.sin(a)), rng.uniform(*magnitude), rng.uniform(*width) * W,
                        int(rng.integers(0, max(steps - 1, 1))), int(rng.integers(duration[0], duration[1] + 1))))
    return out


def _fade(t):
    return t * t * t * (t * (t * 6 - 15) + 10)


def perlin(t, seed=0, channels=1) -> np.ndarray:
    """1D Perlin gradient noise, continuous (C^2) in t, zero at integers, roughly in [-0.5, 0.5].

    Parameters
    ----------
    t : (k,) array
        Sample points.
    seed : int, optional
        Random seed.
    channels : int, optional
        Independent channels.

    Returns
    -------
    (k, channels) ndarray
    """
    t = np.atleast_1d(as_float_array(t, "t"))
    rng = np.random.default_rng(seed)
    n = int(np.floor(t.max())) + 2 if t.size else 2
    lo = int(np.floor(t.min())) if t.size else 0
    grads = rng.uniform(-1.0, 1.0, size=(n - lo + 1, channels))
    i0 = np.floor(t).astype(int)
    f = (t - i0)[:, None]
    g0, g1 = grads[i0 - lo], grads[i0 - lo + 1]
    return (1 - _fade(f)) * g0 * f + _fade(f) * g1 * (f - 1)


class PerlinForce:
    """Reduced Perlin-noise force ``w(t) = amplitude * perlin(t / period)`` per mode, continuous in time.

    Parameters
    ----------
    r : int
        Number of modes.
    amplitude : float
        Force scale (N).
    period : float, optional
        Time scale of the noise (s).
    seed : int, optional
        Random seed.
    """

    def __init__(self, r, amplitude, period=0.5, seed=0):
        self.r, self.amplitude, self.period, self.seed = integer(r, "r"), real(amplitude, "amplitude"), \
            real(period, "period"), seed

    def series(self, steps, dt) -> np.ndarray:
        """Every step's force.

        Parameters
        ----------
        steps : int
            Number of steps.
        dt : float
            Step length (s); step i is at t = i dt.

        Returns
        -------
        (steps, r) ndarray
        """
        t = np.arange(integer(steps, "steps")) * real(dt, "dt") / self.period
        return self.amplitude * perlin(t, seed=self.seed, channels=self.r)
