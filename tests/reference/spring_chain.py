"""Independent NumPy reference of the damped Duffing spring chain: dynamics,
energy, control matrix and one RK4 step."""
from __future__ import annotations

import numpy as np


def chain_dynamics(masses, k, k3, c, S, z):
    """F(z) of the damped Duffing chain (first mass tied to a wall), NumPy."""
    m = len(masses)
    x, v = z[:m], z[m:]
    d = np.diff(np.concatenate([[0.0], x]))
    dd = np.diff(np.concatenate([[0.0], v]))
    t = k * d + k3 * d**3 + c * dd  # tension of spring j (joins j-1 and j)
    f = -t.copy()
    f[:-1] += t[1:]
    return np.concatenate([v, f / masses])


def chain_energy(masses, k, k3, z):
    m = len(masses)
    x, v = z[:m], z[m:]
    d = np.diff(np.concatenate([[0.0], x]))
    return 0.5 * np.sum(masses * v**2) + np.sum(0.5 * k * d**2 + 0.25 * k3 * d**4)


def chain_control_matrix(masses, S):
    m = len(masses)
    S = np.eye(m) if S is None else np.asarray(S, float)
    return np.vstack([np.zeros((m, S.shape[1])), S / np.asarray(masses)[:, None]])


def rk4_step(f, z, t, dt, Bw):
    """Classical RK4 of z' = f(z, t) + Bw with Bw held over the step."""
    k1 = f(z, t) + Bw
    k2 = f(z + 0.5 * dt * k1, t + 0.5 * dt) + Bw
    k3 = f(z + 0.5 * dt * k2, t + 0.5 * dt) + Bw
    k4 = f(z + dt * k3, t + dt) + Bw
    return z + (dt / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4)
