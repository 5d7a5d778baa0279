"""NumPy references of the 3D MAC grid's interpolation and of the reduced
particle kernel (independent of the C++ stencils)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def np_interp_matrix(g, points, axis):
    """(P, N) SciPy matrix of the trilinear interpolation of MAC component ``axis`` at points (P, 3) (clamped)."""
    n = np.array([g.nx, g.ny, g.nz])
    h = g.h
    dims = n.copy()
    dims[axis] += 1  # face lattice of this component: (nx+1, ny, nz) for x, ...
    offset = [0, g.n_xfaces, g.n_xfaces + g.n_yfaces][axis]
    f = points / h - np.where(np.arange(3) == axis, 0.0, 0.5)
    f = np.clip(f, 0.0, dims - 1)
    lo = np.minimum(np.floor(f).astype(int), np.maximum(dims - 2, 0))
    t = f - lo
    rows, cols, vals = [], [], []
    for c in range(8):
        b = np.array([(c >> a) & 1 for a in range(3)])
        idx = np.minimum(lo + b, dims - 1)
        w = np.prod(np.where(b == 1, t, 1.0 - t), axis=1)
        rows.append(np.arange(len(points)))
        cols.append(offset + (idx[:, 2] * dims[1] + idx[:, 1]) * dims[0] + idx[:, 0])
        vals.append(w)
    return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                         shape=(len(points), g.n_faces))


def np_velocity_matrices(g, points):
    """The three (P, N) interpolation matrices of the x, y, z components at points (P, 3)."""
    return [np_interp_matrix(g, points, a) for a in range(3)]


def np_particles_rk2(g, basis, z, z_mid, points, dt, drift=(0.0, 0.0, 0.0)):
    """One RK2 (midpoint) step of points (P, 3) through Psi z, then Psi z_mid at the
    midpoints, plus drift (3,) (m/s), each position clamped to the domain."""
    hi = np.array([g.nx, g.ny, g.nz]) * g.h
    x = np.clip(np.asarray(points, float), 0.0, hi)

    def vel(p, zz):
        u = basis @ zz
        return np.stack([M @ u for M in np_velocity_matrices(g, p)], axis=1) + np.asarray(drift, float)

    m = np.clip(x + 0.5 * dt * vel(x, z), 0.0, hi)
    return np.clip(x + dt * vel(m, z_mid), 0.0, hi)
