"""Fixtures of the fuzz table (tests/fuzz_table.py) that cost more than a few
milliseconds or that few entries need: each built on first use and kept
(``functools.cache``), so a worker builds only what its family's entries ask
for. Everything at the smallest size that still makes a valid call."""
from __future__ import annotations

import functools
import os
import tempfile

import numpy as np

import directable as dr
from directable import cloth, fem, fluid, lqr, mpc, sph

cache = functools.cache


@cache
def tmpdir() -> str:
    return tempfile.mkdtemp(prefix="directable-fuzz-")


# ---------------------------------------------------------------- linear-quadratic and MPC

@cache
def sph_plant2d():
    dx = 0.1
    f = sph.SPHFluid2D(sph.block((0.2, 0.0), (0.5, 0.3), dx), sph.box_walls((0, 0), (1, 1), dx), spacing=dx,
                       h=1.3 * dx)
    return mpc.SPHPlant2D(f, 1)


# ---------------------------------------------------------------- FEM

@cache
def small_mesh():
    return fem.box_mesh((2, 1, 1), h=0.1)


@cache
def small_stvk():
    mesh = small_mesh()
    return fem.StVKModel(mesh, 1e5, 0.3, 1000.0, fixed=fem.bottom_vertices(mesh, axis=0))


@cache
def reduced_stvk():
    stvk = small_stvk()
    n = 3 * small_mesh().num_vertices
    free = np.setdiff1d(np.arange(n), stvk.fixed_dofs)
    U = np.zeros((n, 2))
    U[free[:2], [0, 1]] = 1.0
    return fem.ReducedStVK(stvk, U)


@cache
def mesh_file() -> str:
    """The small box mesh written as a .vtu file (meshio), for fem.load_mesh."""
    import meshio

    mesh = small_mesh()
    path = os.path.join(tmpdir(), "box.vtu")
    meshio.write_points_cells(path, np.asarray(mesh.vertices), [("tetra", np.asarray(mesh.tets))])
    return path


# ---------------------------------------------------------------- SPH in 3D

@cache
def sph3d():
    fl, walls = sph3d_points()
    return sph.SPHFluid3D(fl, walls, spacing=0.1, h=0.13)


@cache
def sph_plant3d():
    return mpc.SPHPlant3D(sph3d(), 1)


@cache
def sph3d_points():
    dx = 0.1
    return sph.block((0.2, 0.2, 0.0), (0.4, 0.4, 0.2), dx), sph.box_walls((0, 0, 0), (0.6, 0.6, 0.6), dx, layers=1)


@cache
def pred3d():
    return sph3d().prediction_model()


# ---------------------------------------------------------------- reduction

@cache
def incremental_pca():
    from directable import reduce

    p = reduce.IncrementalPCA(6, 3)
    p.add(np.random.default_rng(0).standard_normal((5, 6)))
    return p
