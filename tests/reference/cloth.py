"""NumPy reference of the mass-spring cloth and of the goal-directed path
search (Jeon & Choi), written independently of the C++ core: springs as an
explicit (a, b, rest, k) list, vectorised forces with an ``np.bincount``
scatter, and the path search with one NumPy evaluation per step over all
candidates. Used by tests/test_cloth*.py and benchmarks/bench_cloth.py."""
from __future__ import annotations

import math

import numpy as np


def springs(nx, ny, spacing, k_struct, k_shear, k_bend, k_bend2=0.0):
    """(a, b, rest, k) arrays of every spring present (stiffness 0: absent)."""
    a, b, rest, k = [], [], [], []
    offsets = [((1, 0), k_struct), ((0, 1), k_struct), ((1, 1), k_shear), ((-1, 1), k_shear),
               ((2, 0), k_bend), ((0, 2), k_bend), ((2, 2), k_bend2), ((-2, 2), k_bend2)]
    for (di, dj), kk in offsets:
        if kk == 0.0:
            continue
        for j in range(ny):
            for i in range(nx):
                i2, j2 = i + di, j + dj
                if 0 <= i2 < nx and 0 <= j2 < ny:
                    a.append(j * nx + i)
                    b.append(j2 * nx + i2)
                    rest.append(spacing * math.hypot(di, dj))
                    k.append(kk)
    return np.array(a), np.array(b), np.array(rest), np.array(k)


class NumpyCloth:
    """The same cloth as ``directable.cloth.ClothGrid`` (same arguments), in NumPy."""

    def __init__(self, nx, ny, spacing, mass, k_struct, k_shear, k_bend, damping, gravity=(0, 0, -9.81), pinned=(),
                 origin=(0, 0, 0), k_bend2=0.0, colliders=()):
        self.nx, self.ny, self.V = nx, ny, nx * ny
        self.a, self.b, self.rest, self.k = springs(nx, ny, spacing, k_struct, k_shear, k_bend, k_bend2)
        self.c = damping
        self.m = np.full(self.V, float(mass))
        self.g = np.asarray(gravity, float)
        self.pinned = np.zeros(self.V, bool)
        self.pinned[list(pinned)] = True
        self.colliders = list(colliders)  # ("sphere", center, radius, k, mu) or ("plane", point, normal, k, mu)
        ii, jj = np.meshgrid(np.arange(nx), np.arange(ny))
        self.x0 = np.asarray(origin, float) + spacing * np.stack([ii.ravel(), jj.ravel(), np.zeros(self.V)], axis=1)

    def forces(self, x, v):
        d = x[self.b] - x[self.a]
        L = np.sqrt(np.einsum("ij,ij->i", d, d))
        rel = np.einsum("ij,ij->i", v[self.b] - v[self.a], d) / L
        f = ((self.k * (L - self.rest) + self.c * rel) / L)[:, None] * d
        F = np.empty_like(x)
        for c in range(3):
            F[:, c] = (np.bincount(self.a, f[:, c], self.V) - np.bincount(self.b, f[:, c], self.V)
                       + self.m * self.g[c])
        for col in self.colliders:
            F += self._collider(col, x, v)
        return F

    def forces_add_at(self, x, v):
        """The same forces with ``np.add.at`` (the slower NumPy scatter)."""
        d = x[self.b] - x[self.a]
        L = np.sqrt(np.einsum("ij,ij->i", d, d))
        rel = np.einsum("ij,ij->i", v[self.b] - v[self.a], d) / L
        f = ((self.k * (L - self.rest) + self.c * rel) / L)[:, None] * d
        F = self.m[:, None] * self.g
        np.add.at(F, self.a, f)
        np.add.at(F, self.b, -f)
        return F

    @staticmethod
    def _collider(col, x, v, eps=1e-3):
        kind, p, q, k, mu = col
        if kind == "sphere":
            r = x - p
            rho = np.linalg.norm(r, axis=1)
            phi = rho - q
            n = r / np.where(rho > 0, rho, 1.0)[:, None]
        else:
            n = np.broadcast_to(np.asarray(q, float) / np.linalg.norm(q), x.shape)
            phi = np.einsum("ij,ij->i", x - p, n)
        inside = phi < 0
        fn = np.where(inside, -k * phi, 0.0)
        vt = v - np.einsum("ij,ij->i", v, n)[:, None] * n
        g = vt / np.sqrt(np.einsum("ij,ij->i", vt, vt) + eps * eps)[:, None]
        return fn[:, None] * n - mu * fn[:, None] * g

    def step(self, x, v, dt, u=None):
        F = self.forces(x, v)
        if u is not None:
            F = F + u
        v = v + dt * F / self.m[:, None]
        v[self.pinned] = 0.0
        return x + dt * v, v

    def rollout(self, x0, v0, dt, steps, u=None):
        xs, vs = [x0.copy()], [np.where(self.pinned[:, None], 0.0, v0)]
        for i in range(steps):
            x, v = self.step(xs[-1], vs[-1], dt, None if u is None else u[i])
            xs.append(x)
            vs.append(v)
        return np.array(xs), np.array(vs)


def retime(path, reference):
    """Eq. 20-24 with plain step lengths."""
    s_path = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(path, axis=0), axis=1))])
    s_ref = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(reference, axis=0), axis=1))])
    n = len(reference) - 1
    frac = s_ref / s_ref[-1] if s_ref[-1] > 0 else np.arange(n + 1) / n
    target = frac * s_path[-1]
    out = np.stack([np.interp(target, s_path, path[:, c]) for c in range(3)], axis=1)
    out[0], out[-1] = path[0], path[-1]
    return out


def cone(R, theta, samples, azimuths):
    """Candidate offsets Rot(phi, psi) R (samples * azimuths, 3), polar angles
    from -theta to theta, ordered by |phi| (ties keep the smallest deviation)."""
    f = np.linspace(-1.0, 1.0, samples) if samples > 1 else np.zeros(1)
    f = f[np.argsort(np.abs(f), kind="stable")]
    r = np.linalg.norm(R)
    if r == 0:
        return np.zeros((samples * azimuths, 3))
    Rh = R / r
    axis = np.argmin(np.abs(Rh))
    e1 = np.cross(Rh, np.eye(3)[axis])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(Rh, e1)
    phi = theta * f
    psi = np.pi * np.arange(azimuths) / azimuths
    perp = np.cos(psi)[:, None] * e1 + np.sin(psi)[:, None] * e2  # (az, 3)
    dirs = np.cos(phi)[:, None, None] * Rh + np.sin(phi)[:, None, None] * perp[None]
    return r * dirs.reshape(-1, 3)


def plan_single(cloth: NumpyCloth, pilot_x, pilot_v, node, t_c, goal, dt, alpha, beta, gamma, delta=1.0,
                seek_angle_deg=30.0, samples=33, azimuths=8, widen=0.3, f_max=np.inf):
    """One node's plan: window, first pass, cut + re-time, second pass.
    Returns dict(t_start, generated (n+1, 3), targets (n+1, 3), forces (n, 3), paths (n+1, 3))."""
    j = node
    dist = np.linalg.norm(goal - pilot_x[t_c, j])
    Tr = int(min(max(round(alpha * dist * dist), 1), t_c))
    ts = t_c - Tr
    q0, qn = pilot_x[ts, j], pilot_x[t_c, j]
    L = delta * np.sum((q0 - goal) ** 2) / np.sum((q0 - qn) ** 2)
    theta_max = math.radians(seek_angle_deg)
    m = cloth.m[j]

    def inverse(q, base):
        u = m / dt ** 2 * (q - base)
        nrm = np.linalg.norm(u, axis=-1, keepdims=True)
        scale = np.where(nrm > f_max, f_max / np.where(nrm > 0, nrm, 1.0), 1.0)
        u = u * scale
        return base + dt ** 2 / m * u, u

    x, v = pilot_x[ts].copy(), pilot_v[ts].copy()
    gen = [x[j].copy()]
    for i in range(ts, t_c):
        F = cloth.forces(x, v)
        base = x[j] + dt * v[j] + dt ** 2 / m * F[j]
        R = L * (pilot_x[i + 1, j] - pilot_x[i, j])
        grow = min(1.0, (i - ts + 1) / max(1.0, widen * Tr)) if widen > 0 else 1.0
        q, u = inverse(x[j] + cone(R, theta_max * grow, samples, azimuths), base)
        J = 0.5 * (beta * np.sum((q - goal) ** 2, axis=1) + gamma * np.sum(u ** 2, axis=1))
        F[j] += u[np.argmin(J)]
        v = v + dt * F / cloth.m[:, None]
        v[cloth.pinned] = 0.0
        x = x + dt * v
        gen.append(x[j].copy())
    gen = np.array(gen)
    d = np.linalg.norm(gen - goal, axis=1)
    c = int(np.argmin(d))
    if c == 0:
        cut = np.vstack([gen[:1], goal[None]])
    else:  # shift by a smoothstep of the arc length so that the cut path ends on the goal
        cut = gen[:c + 1].copy()
        s = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(cut, axis=0), axis=1))])
        f = s / s[-1] if s[-1] > 0 else np.arange(c + 1) / c
        cut += (f * f * (3 - 2 * f))[:, None] * (goal - cut[-1])
    targets = retime(cut, pilot_x[ts:t_c + 1, j])
    x, v = pilot_x[ts].copy(), pilot_v[ts].copy()
    paths, forces = [x[j].copy()], []
    for i in range(Tr):
        F = cloth.forces(x, v)
        base = x[j] + dt * v[j] + dt ** 2 / m * F[j]
        _, u = inverse(targets[i + 1], base)
        F[j] += u
        forces.append(u)
        v = v + dt * F / cloth.m[:, None]
        v[cloth.pinned] = 0.0
        x = x + dt * v
        paths.append(x[j].copy())
    return dict(t_start=ts, generated=gen, targets=targets, forces=np.array(forces), paths=np.array(paths),
                closest_step=c)
