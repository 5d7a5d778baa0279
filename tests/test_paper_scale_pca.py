"""``reduce.pca`` on snapshot matrices larger than memory: a NumPy memmap and
a zarr array read in column blocks (exact), a ``dask.array`` through
``dask.array.linalg.svd_compressed`` (randomized, on the Dask cluster): the
same mass-orthonormal basis as the in-memory path, to 1e-8 in subspace
angle, on a case that fits both ways."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from directable import fem, reduce
from directable.experiments import fem_scenes


@pytest.fixture(scope="module")
def snaps():
    s = fem_scenes.t_shape_scene(r=6, T=40, runs=3)
    u, v, a = fem.centerline(s.model, s.dt, s.forces, return_acceleration=True)
    return fem.enrich(s.model, s.dt, s.forces, runs=4, u=u, v=v, a=a, seed=2), np.asarray(s.model.mass)


def max_angle(U1, U2, mass):
    """Largest principal angle (rad) between span U1 and span U2 in the mass inner product."""
    sq = np.sqrt(mass)[:, None]
    return float(np.max(scipy.linalg.subspace_angles(U1 * sq, U2 * sq)))


@pytest.mark.parametrize("r", [6])
def test_memmap_and_zarr_give_the_in_memory_basis(snaps, tmp_path, r):
    X, mass = snaps
    ref = reduce.pca(X, r, mass=mass, method="svd")
    mm = np.lib.format.open_memmap(tmp_path / "snaps.npy", mode="w+", dtype=np.float64, shape=X.shape)
    mm[:] = X
    mm.flush()
    disk = np.load(tmp_path / "snaps.npy", mmap_mode="r")
    for block in (None, 37):  # one block, and many uneven ones
        b = reduce.pca(disk, r, mass=mass, block=block)
        assert max_angle(b.U, ref.U, mass) < 1e-8
        assert np.allclose(b.singular_values, ref.singular_values, rtol=1e-10)
        assert np.allclose(b.energy, ref.energy, rtol=1e-10)
        assert np.allclose((b.U * mass[:, None]).T @ b.U, np.eye(r), atol=1e-10)  # U' M U = I
    zarr = pytest.importorskip("zarr")
    z = zarr.open_array(str(tmp_path / "snaps.zarr"), mode="w", shape=X.shape, chunks=(X.shape[0], 50),
                        dtype="f8")
    z[:] = X
    bz = reduce.pca(z, r, mass=mass, block=50)
    assert max_angle(bz.U, ref.U, mass) < 1e-8


def test_dask_array_gives_the_in_memory_basis(snaps, dask_client):
    da = pytest.importorskip("dask.array")
    X, mass = snaps
    r = 6
    ref = reduce.pca(X, r, mass=mass, method="svd")
    b = reduce.pca(da.from_array(X, chunks=(X.shape[0], 64)), r, mass=mass, power_iterations=4)
    assert max_angle(b.U, ref.U, mass) < 1e-8
    assert np.allclose(b.singular_values, ref.singular_values, rtol=1e-10)
    assert np.allclose(b.energy, ref.energy, rtol=1e-8)


def test_out_of_core_bad_input(snaps, tmp_path):
    X, mass = snaps
    mm = np.lib.format.open_memmap(tmp_path / "bad.npy", mode="w+", dtype=np.float64, shape=X.shape)
    mm[:] = X
    mm[3, 100] = np.nan
    with pytest.raises(ValueError, match=r"snapshots must be finite \(found NaN or inf in columns"):
        reduce.pca(mm, 4, mass=mass)
    with pytest.raises(ValueError, match=r"r must be in \[1, "):
        reduce.pca(mm, 10**6)
    with pytest.raises(ValueError, match="mass must have shape"):
        reduce.pca(mm, 4, mass=mass[:-1])
    da = pytest.importorskip("dask.array")
    bad = da.from_array(np.where(np.arange(X.shape[1]) == 5, np.nan, X), chunks=(X.shape[0], 64))
    with pytest.raises(ValueError, match="snapshots must be finite"):
        reduce.pca(bad, 4, mass=mass)
