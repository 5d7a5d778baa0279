"""SPD constraints (Tan, Liu & Turk 2011, sec. 4.3): a particle on a polyline
curve (eq. 12-13) and a distance constraint (a massless rod, eq. 14-16),
stepped with explicit Euler.

A small (6-DOF) demonstration written in NumPy: the per-step work is one
nearest-point query and one 6x6 solve, so Python overhead, not arithmetic,
dominates -- it is kept out of the C++ core on purpose.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validate import as_float_array, integer, real


def helix(segments, radius=1.0, pitch=0.5, turns=2.0) -> np.ndarray:
    """Vertices of a helix around the z axis, descending.

    Parameters
    ----------
    segments : int
        Number of segments N.
    radius : float, optional
        Radius (m).
    pitch : float, optional
        Drop per turn (m).
    turns : float, optional
        Number of turns.

    Returns
    -------
    (N+1, 3) ndarray
    """
    segments = integer(segments, "segments")
    if segments < 1:
        raise ValueError(f"segments must be >= 1, got {segments}")
    s = np.linspace(0.0, 2 * np.pi * turns, segments + 1)
    return np.stack([radius * np.cos(s), radius * np.sin(s), -pitch * s / (2 * np.pi)], axis=1)


def nearest_on_polyline(points, x):
    """Closest point to x on a polyline.

    Parameters
    ----------
    points : (N+1, 3) array
        The polyline's vertices.
    x : (3,) array
        The point.

    Returns
    -------
    (3,) ndarray
    """
    a, b = points[:-1], points[1:]
    ab = b - a
    t = np.clip(np.einsum("ij,ij->i", x - a, ab) / np.einsum("ij,ij->i", ab, ab), 0.0, 1.0)
    p = a + t[:, None] * ab
    k = np.argmin(np.einsum("ij,ij->i", p - x, p - x))
    return p[k]


@dataclass
class ConstraintRun:
    """Trajectories of :func:`helix_and_rod`.

    Parameters
    ----------
    x1 : (T+1, 3) ndarray
        Particle on the curve (m).
    x2 : (T+1, 3) ndarray
        Particle on the rod (m).
    curve_error : (T+1,) ndarray
        Distance of x1 from the curve (m).
    rod_error : (T+1,) ndarray
        ``|x1 - x2| - r0`` (m).
    """
    x1: np.ndarray  #: (T+1, 3) particle on the curve
    x2: np.ndarray  #: (T+1, 3) particle on the rod
    curve_error: np.ndarray  #: (T+1,) distance of x1 from the curve
    rod_error: np.ndarray  #: (T+1,) |x1 - x2| - r0


def helix_and_rod(curve, steps, dt, kp=1e16, kd=None, r0=0.5, mass=(1.0, 1.0), gravity=9.81, x2_offset=None):
    """Particle 1 on ``curve`` (N+1, 3), particle 2 at distance ``r0`` from it.

    Both constraints are SPD servos with gains ``kp`` and ``kd`` (default
    ``1.5 kp dt``, the paper's): the predicted positions
    ``x + dt v`` are pulled onto the curve / to the rod length, the damping
    acts only along the constraint direction, and the accelerations solve
    ``(M + kd dt sum_c d_c d_c' D_c) a = f`` (eq. 13 and 16). Gravity along -z.

    Parameters
    ----------
    curve : (N+1, 3) array
        Polyline particle 1 is held on (m).
    steps : int
        Number of steps T.
    dt : float
        Time step (s).
    kp : float, optional
        Stiffness gain of both constraints.
    kd : float, optional
        Damping gain (default ``1.5 kp dt``).
    r0 : float, optional
        Rod length (m).
    mass : (2,) sequence, optional
        Masses of the particles (kg).
    gravity : float, optional
        (m/s^2).
    x2_offset : (3,) array, optional
        Direction from particle 1 to particle 2 at the start (default +x).

    Returns
    -------
    ConstraintRun
    """
    curve = as_float_array(curve, "curve")
    if curve.ndim != 2 or curve.shape[1] != 3 or curve.shape[0] < 2:
        raise ValueError(f"curve must have shape (N+1, 3) with N >= 1, got {curve.shape}")
    steps, dt, kp, r0 = integer(steps, "steps"), real(dt, "dt"), real(kp, "kp"), real(r0, "r0")
    kd = 1.5 * kp * dt if kd is None else real(kd, "kd")
    if dt <= 0 or kp < 0 or kd < 0 or r0 <= 0 or steps < 1:
        raise ValueError("need steps >= 1, dt > 0, kp >= 0, kd >= 0, r0 > 0")
    m = np.repeat(np.asarray(mass, float), 3)
    g = np.tile([0.0, 0.0, -gravity], 2)
    x = np.zeros(6)
    x[:3] = curve[0]
    off = np.array([r0, 0.0, 0.0]) if x2_offset is None else as_float_array(x2_offset, "x2_offset")
    x[3:] = curve[0] + r0 * off / np.linalg.norm(off)
    v = np.zeros(6)
    xs = [x.copy()]
    I3 = np.eye(3)
    for _ in range(steps):
        xp = x + dt * v  # predicted positions
        A = np.diag(m)
        f = m * g
        # particle on curve (eq. 12-13)
        target = nearest_on_polyline(curve, xp[:3])
        dev = xp[:3] - target
        dist = np.linalg.norm(dev)
        d = dev / dist if dist > 0 else np.zeros(3)
        P = np.outer(d, d)
        A[:3, :3] += kd * dt * P
        f[:3] += -kp * dev - kd * P @ v[:3]
        # distance constraint (eq. 14-16): D = [[I, -I], [-I, I]]
        rel = xp[:3] - xp[3:]
        r = np.linalg.norm(rel)
        d2 = rel / r
        P2 = np.outer(d2, d2)
        DP = np.block([[P2, -P2], [-P2, P2]])
        A += kd * dt * DP
        frod = -kp * (rel - r0 * d2)
        f += np.r_[frod, -frod] - kd * DP @ v
        a = np.linalg.solve(A, f)
        x = x + dt * v
        v = v + dt * a
        xs.append(x.copy())
    xs = np.array(xs)
    curve_err = np.array([np.linalg.norm(p - nearest_on_polyline(curve, p)) for p in xs[:, :3]])
    rod_err = np.linalg.norm(xs[:, :3] - xs[:, 3:], axis=1) - r0
    return ConstraintRun(xs[:, :3], xs[:, 3:], curve_err, rod_err)


__all__ = ["helix", "nearest_on_polyline", "helix_and_rod", "ConstraintRun"]
