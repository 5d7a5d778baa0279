"""Independent NumPy / pure-Python transcriptions of the continuum-crowd
formulas (Treuille thesis ch. 4): the splat, the speed and cost fields, the
fast-marching rule with Python's heapq (lazy deletion), MACGrid2D's bilinear
rule, and a vectorised NumPy step (the benchmark's peer; the velocity field
is passed in)."""
from __future__ import annotations

import heapq
import math

import numpy as np

E, N, W, S = 0, 1, 2, 3
DIRS = ((1, 0), (0, 1), (-1, 0), (0, -1))


def splat(nx, ny, h, positions, velocities, lam):
    """rho (ny, nx), ubar (ny, nx, 2) by the formulas of sec. 4.2.1."""
    p = np.asarray(positions, float)
    v = np.asarray(velocities, float)
    s = p / h - 0.5
    A = np.floor(s)
    d = s - A
    dx, dy = d[:, 0], d[:, 1]
    i, j = A[:, 0].astype(int), A[:, 1].astype(int)
    weights = [np.minimum(1 - dx, 1 - dy) ** lam, np.minimum(dx, 1 - dy) ** lam,
               np.minimum(dx, dy) ** lam, np.minimum(1 - dx, dy) ** lam]
    offsets = [(0, 0), (1, 0), (1, 1), (0, 1)]
    rho = np.zeros((ny, nx))
    mom = np.zeros((ny, nx, 2))
    for w, (oi, oj) in zip(weights, offsets):
        ci, cj = i + oi, j + oj
        ok = (ci >= 0) & (ci < nx) & (cj >= 0) & (cj < ny)
        np.add.at(rho, (cj[ok], ci[ok]), w[ok])
        np.add.at(mom, (cj[ok], ci[ok]), w[ok, None] * v[ok])
    ubar = np.zeros_like(mom)
    pos = rho > 0
    ubar[pos] = mom[pos] / rho[pos, None]
    return rho, ubar


def neighbour_arrays(a, fill):
    """(4, ny, nx): a at the E, N, W, S neighbour of each cell (fill off-grid)."""
    out = np.full((4,) + a.shape, fill, dtype=a.dtype)
    out[E, :, :-1] = a[:, 1:]
    out[N, :-1, :] = a[1:, :]
    out[W, :, 1:] = a[:, :-1]
    out[S, 1:, :] = a[:-1, :]
    return out


def speed(height, blocked, rho, ubar, p, h=1.0, closed=None, factor=None):
    """(4, ny, nx) speed of eq. 4.8-4.10 in the discrete form of the spec."""
    ny, nx = height.shape
    Hn = neighbour_arrays(height, np.nan)
    slope = np.clip((Hn - height[None]) / h, p["s_min"], p["s_max"])
    fT = p["f_max"] + (slope - p["s_min"]) / (p["s_max"] - p["s_min"]) * (p["f_min"] - p["f_max"])
    ux = neighbour_arrays(ubar[..., 0], 0.0)
    uy = neighbour_arrays(ubar[..., 1], 0.0)
    n = np.array(DIRS, float)
    fu = np.maximum(p.get("flow_floor", 0.0) * fT, ux * n[:, 0, None, None] + uy * n[:, 1, None, None])
    fu = np.maximum(fu, 0.0)
    rn = neighbour_arrays(rho, 0.0)
    w = np.clip((rn - p["rho_min"]) / (p["rho_max"] - p["rho_min"]), 0, 1)
    f = fT + w * (fu - fT)
    bn = neighbour_arrays(blocked.astype(bool), True)
    zero = bn | blocked[None].astype(bool)
    if closed is not None:
        zero |= neighbour_arrays(closed.astype(bool), True)
    if factor is not None:
        f = f * neighbour_arrays(factor, 1.0)
    return np.where(zero, 0.0, f)


def cost(speed_field, discomfort, p):
    """(4, ny, nx) unit cost of eq. 4.4, +inf where the speed is 0."""
    g = neighbour_arrays(discomfort, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        c = (p["alpha"] * speed_field + p["beta"] + p["gamma"] * g) / speed_field
    return np.where(speed_field > 0, c, np.inf)


def eikonal(cost_field, goal, blocked=None, h=1.0):
    """phi (ny, nx) by the fixed fast-marching rule, with heapq and lazy deletion."""
    _, ny, nx = cost_field.shape
    C = [[[float(cost_field[d, j, i]) for i in range(nx)] for j in range(ny)] for d in range(4)]
    blk = np.zeros((ny, nx), bool) if blocked is None else np.asarray(blocked, bool)
    INF = math.inf
    phi = [[INF] * nx for _ in range(ny)]
    known = [[False] * nx for _ in range(ny)]
    heap = []
    goals = [(j, i) for j in range(ny) for i in range(nx) if goal[j][i] and not blk[j, i]]
    for j, i in goals:
        phi[j][i] = 0.0
        known[j][i] = True

    def value(j, i):
        bx = by = INF
        px = py = cx = cy = 0.0
        for d, (di, dj) in ((W, DIRS[W]), (E, DIRS[E])):
            a, b = i + di, j + dj
            if 0 <= a < nx and known[b][a] and C[d][j][i] < INF:
                v = phi[b][a] + h * C[d][j][i]
                if v < bx:
                    bx, px, cx = v, phi[b][a], h * C[d][j][i]
        for d, (di, dj) in ((S, DIRS[S]), (N, DIRS[N])):
            a, b = i + di, j + dj
            if 0 <= b < ny and known[b][a] and C[d][j][i] < INF:
                v = phi[b][a] + h * C[d][j][i]
                if v < by:
                    by, py, cy = v, phi[b][a], h * C[d][j][i]
        if bx == INF or by == INF:
            return min(bx, by)
        wx, wy = 1.0 / (cx * cx), 1.0 / (cy * cy)
        disc = (wx + wy) - wx * wy * (px - py) ** 2
        if disc < 0:
            return min(bx, by)
        root = (px * wx + py * wy + math.sqrt(disc)) / (wx + wy)
        return min(bx, by) if root < max(px, py) else root

    def relax_around(j, i):
        for di, dj in DIRS:
            a, b = i + di, j + dj
            if 0 <= a < nx and 0 <= b < ny and not known[b][a] and not blk[b, a]:
                v = value(b, a)
                if v < phi[b][a]:
                    phi[b][a] = v
                    heapq.heappush(heap, (v, b * nx + a))

    for j, i in goals:
        relax_around(j, i)
    while heap:
        v, c = heapq.heappop(heap)
        j, i = divmod(c, nx)
        if known[j][i] or v != phi[j][i]:
            continue
        known[j][i] = True
        relax_around(j, i)
    return np.array(phi)


def bilinear_velocity(u, nx, ny, h, points):
    """MACGrid2D.velocity_at's rule, vectorised: (P, 2) from the MAC field u."""
    nxf = (nx + 1) * ny
    ux = u[:nxf].reshape(ny, nx + 1)
    uy = u[nxf:].reshape(ny + 1, nx)

    def lattice(field, fx, fy, maxi, maxj):
        fx = np.clip(fx, 0, maxi)
        fy = np.clip(fy, 0, maxj)
        i0 = np.minimum(np.floor(fx).astype(int), max(maxi - 1, 0))
        j0 = np.minimum(np.floor(fy).astype(int), max(maxj - 1, 0))
        i1, j1 = np.minimum(i0 + 1, maxi), np.minimum(j0 + 1, maxj)
        tx, ty = fx - i0, fy - j0
        return ((1 - tx) * (1 - ty) * field[j0, i0] + tx * (1 - ty) * field[j0, i1]
                + (1 - tx) * ty * field[j1, i0] + tx * ty * field[j1, i1])

    x = np.clip(points[:, 0], 0, nx * h)
    y = np.clip(points[:, 1], 0, ny * h)
    vx = lattice(ux, x / h, y / h - 0.5, nx, ny - 1)
    vy = lattice(uy, x / h - 0.5, y / h, nx - 1, ny)
    return np.stack([vx, vy], axis=1)


def numpy_step(grid, p, goal, positions, velocities, velocity_field, dt=1.0):
    """One single-group step in NumPy with the Python eikonal (the benchmark's
    peer): splat, speed, cost, phi, velocity field (the library's, which is
    not the bottleneck), Euler. Returns new positions and velocities."""
    nx, ny, h = grid.nx, grid.ny, grid.h
    rho, ubar = splat(nx, ny, h, positions, velocities, p["lam"])
    f = speed(grid.height, grid.blocked, rho, ubar, p, h)
    c = cost(f, grid.discomfort, p)
    phi = eikonal(c, goal, grid.blocked, h)
    u = velocity_field(grid, np.where(np.isfinite(phi), phi, np.inf), c, f)
    v = bilinear_velocity(u, nx, ny, h, positions)
    return positions + dt * v, v
