"""Every offline step that takes ``executor=`` gives the in-process result
bit for bit on a real two-process Dask cluster (and a spawn process pool):
the enrichment runs, the fluid training runs, the gain searches and the
batched LQR solves."""
from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp

import numpy as np
import pytest

from directable import fem, lqr
from directable.experiments import fem_scenes


@pytest.fixture(scope="module")
def t_scene():
    return fem_scenes.t_shape_scene(r=6, T=40, runs=3)


def test_enrich_same_snapshots_on_every_executor(t_scene, dask_client):
    s = t_scene
    u, v, a = fem.centerline(s.model, s.dt, s.forces, return_acceleration=True)
    ref = fem.enrich(s.model, s.dt, s.forces, runs=4, u=u, v=v, a=a, seed=3)
    calls = []
    on_dask = fem.enrich(s.model, s.dt, s.forces, runs=4, u=u, v=v, a=a, seed=3, executor=dask_client,
                         progress=lambda d, t: calls.append((d, t)))
    assert np.array_equal(on_dask, ref)
    assert calls[-1] == (4, 4)
    with cf.ProcessPoolExecutor(2, mp_context=mp.get_context("spawn")) as ex:
        assert np.array_equal(fem.enrich(s.model, s.dt, s.forces, runs=4, u=u, v=v, a=a, seed=3, executor=ex), ref)
    # the centre-line is computed when not given; the same snapshots again
    assert np.array_equal(fem.enrich(s.model, s.dt, s.forces, runs=4, seed=3, executor=dask_client), ref)


def test_enrich_refuses_bad_executor_and_model(t_scene):
    s = t_scene
    with pytest.raises(TypeError, match="executor must be None"):
        fem.enrich(s.model, s.dt, s.forces, runs=2, executor=object())
    bare = fem._core.StVKFEM(s.mesh, 1e5, 0.3, 1e3, [int(i) for i in s.model.fixed])
    with pytest.raises(TypeError, match="model must be a directable.fem.StVKModel to run on an executor"):
        fem.enrich(bare, s.dt, s.forces, runs=2, executor=cf.ThreadPoolExecutor(1))


def test_model_spec_rebuilds_the_same_model(t_scene):
    m = t_scene.model
    m2 = fem._model_from_spec(m.spec())
    u = 1e-3 * np.random.default_rng(0).standard_normal(m.dofs)
    assert np.array_equal(m.internal_forces(u), m2.internal_forces(u))
    assert np.array_equal(m.mass, m2.mass) and m2.fixed == m.fixed
