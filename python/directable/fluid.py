"""Reduced fluids with immersed particles (Treuille thesis ch. 3; Barbic &
Popovic 2008 sec. 4.4, 5, appendix C).

    grid = dr.fluid.MACGrid2D(64, 64)             # h = 1/64, domain [0,1]^2
    run = dr.fluid.full_run(grid, steps, dt, winds)  # the offline reference
    basis = dr.fluid.velocity_basis(grid, run.velocities, r=32)
    fluid = dr.ReducedFluid(grid, basis, viscosity)  # z' = A(z) z + nu D z + w
    model = dr.fluid.FluidParticles(fluid, particles=1)  # x = [p, z], B = [0; I]

Velocity fields are flat MAC vectors (all x-faces, then all y-faces; see
``MACGrid2D``); basis columns are orthonormal in the plain dot product.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import _core
from ._validate import as_float_array, integer, real
from .reduce import pca

MACGrid2D = _core.MACGrid2D
FluidSim2D = _core.FluidSim2D
ReducedFluid = _core.ReducedFluid
FluidParticles = _core.FluidParticles

__all__ = ["MACGrid2D", "FluidSim2D", "ReducedFluid", "FluidParticles", "FullRun", "full_run", "velocity_basis",
           "project", "face_positions", "cell_image"]


@dataclass
class FullRun:
    """A full-grid run: velocities (T+1, N), particles (T+1, P, 2), density (T+1, nx ny) or None."""

    velocities: np.ndarray
    particles: np.ndarray
    density: np.ndarray | None
    dt: float
    forces: list = field(default_factory=list)


def face_positions(grid) -> np.ndarray:
    """(N, 2) positions of the faces in the velocity vector's order."""
    nx, ny, h = grid.nx, grid.ny, grid.h
    i, j = np.meshgrid(np.arange(nx + 1), np.arange(ny), indexing="xy")
    xf = np.stack([i.ravel() * h, (j.ravel() + 0.5) * h], axis=1)
    i, j = np.meshgrid(np.arange(nx), np.arange(ny + 1), indexing="xy")
    yf = np.stack([(i.ravel() + 0.5) * h, j.ravel() * h], axis=1)
    return np.vstack([xf, yf])


def cell_image(grid, q) -> np.ndarray:
    """A cell field (nx ny,) as an (ny, nx) image (row j = height y)."""
    return np.asarray(q).reshape(grid.ny, grid.nx)


def full_run(grid, steps, dt, winds=(), particles=None, viscosity=0.0, density=None, u0=None,
             extra_force=None) -> FullRun:
    """Runs the full simulator ``steps`` steps. winds: wind impulses, each
    with ``field(grid)`` (N,), ``start`` and ``duration`` in steps (e.g.
    ``directable.experiments.fluid_forcing.Wind``), applied on steps
    [start, start + duration);
    particles (P, 2) initial positions; density (nx ny,) initial smoke;
    extra_force(i) -> (N,) or None per step. Returns every state."""
    steps = integer(steps, "steps")
    sim = FluidSim2D(grid, real(viscosity, "viscosity"), real(dt, "dt"))
    if u0 is not None:
        sim.velocity = grid.project(as_float_array(u0, "u0"))
    P = np.zeros((0, 2)) if particles is None else as_float_array(particles, "particles").reshape(-1, 2)
    sim.particles = P
    if density is not None:
        sim.density = as_float_array(density, "density")
    fields = [(w, w.field(grid)) for w in winds]
    U = np.empty((steps + 1, grid.n_faces))
    X = np.empty((steps + 1, P.shape[0], 2))
    Dn = np.empty((steps + 1, grid.n_cells)) if density is not None else None
    U[0], X[0] = sim.velocity, sim.particles
    if Dn is not None:
        Dn[0] = sim.density
    for i in range(steps):
        f = np.zeros(grid.n_faces)
        for w, fw in fields:
            if w.start <= i < w.start + w.duration:
                f += fw
        if extra_force is not None:
            e = extra_force(i)
            if e is not None:
                f += e
        sim.step(f)
        U[i + 1], X[i + 1] = sim.velocity, sim.particles
        if Dn is not None:
            Dn[i + 1] = sim.density
    return FullRun(U, X, Dn, float(dt), list(winds))


def velocity_basis(grid, snapshots, r, method="auto", seed=0) -> np.ndarray:
    """(N, r) basis: PCA (``directable.reduce.pca``) of velocity snapshots
    (k, N). Each snapshot is re-projected first, so every basis field is a
    combination of divergence-free free-slip fields, hence one itself."""
    S = as_float_array(snapshots, "snapshots")
    if S.ndim != 2 or S.shape[1] != grid.n_faces:
        raise ValueError(f"snapshots must have shape (k, {grid.n_faces}), got {S.shape}")
    S = np.array([grid.project(s) for s in S])
    keep = np.linalg.norm(S, axis=1) > 0
    if not keep.any():
        raise ValueError("snapshots are all zero: no velocity basis")
    U = pca(S[keep], r, method=method, seed=seed).U
    return np.ascontiguousarray(U)


def project(basis, velocities) -> np.ndarray:
    """Reduced coordinates z = B' u: (T, r) for velocities (T, N) (or (r,) for (N,))."""
    return as_float_array(velocities, "velocities") @ as_float_array(basis, "basis")
