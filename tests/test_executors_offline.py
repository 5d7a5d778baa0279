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


def test_fluid_training_runs_and_gain_search_on_dask(dask_client):
    from directable.experiments import reduced_fluid_paths as R

    here = R.make_scenario(n=16, r=6, steps=30, enrich=2)
    there = R.make_scenario(n=16, r=6, steps=30, enrich=2, executor=dask_client)
    assert np.array_equal(here.basis, there.basis)
    a = R.gain_search(here, budget=50.0, noise=2.0, grid_size=3)
    b = R.gain_search(here, budget=50.0, noise=2.0, grid_size=3, executor=dask_client)
    assert a["settings"] == b["settings"] == 12 and a["tried"] == b["tried"]
    for kind in ("P", "PD"):
        assert a[kind]["gains"] == b[kind]["gains"]
        assert a[kind]["final_error"] == b[kind]["final_error"] and a[kind]["effort"] == b[kind]["effort"]
        # the reported error is the chosen run's own
        assert R.path_error(here, b[kind]["result"].states)[-1].max() == b[kind]["final_error"]


def test_lqr_batch_and_weight_sweep_on_dask(dask_client):
    from directable.experiments import offline

    rng = np.random.default_rng(4)
    problems = [dict(A=0.3 * rng.standard_normal((30, 4, 4)), B=rng.standard_normal((4, 2)), dt=0.02, Q=10.0, R=0.1,
                     Q_final=5.0) for _ in range(3)]
    here = lqr.solve_continuous_batch(problems)
    there = lqr.solve_continuous_batch(problems, executor=dask_client)
    for p, h, t in zip(problems, here, there):
        direct = lqr.solve_continuous(**p)
        assert np.array_equal(h.K, direct.K) and np.array_equal(t.K, direct.K) and np.array_equal(t.P, direct.P)
    sweep = offline.lqr_weight_sweep(problems[0]["A"], problems[0]["B"], 0.02, 10.0, 0.1, 5.0, [0.1, 1.0, 10.0],
                                     executor=dask_client)
    gains = [np.abs(s.K).max() for s in sweep]
    assert gains[0] > gains[1] > gains[2]  # a heavier control weight, smaller gains
    assert np.array_equal(sweep[1].K, here[0].K)


def test_pd_gain_grid_on_dask(t_scene, dask_client):
    from directable.experiments import offline

    s = t_scene
    spec = offline.reduced_solid_spec(s.model, s.basis.U)
    push = s.push(5, np.r_[np.zeros(s.model.dofs - 3), 50.0, 0, 0], duration=3)
    z0 = s.z_ref[0]
    here = offline.pd_gain_grid(spec, [10.0, 100.0], [1.0, 5.0], s.z_ref, s.w_ff, z0, s.dt, push)
    there = offline.pd_gain_grid(spec, [10.0, 100.0], [1.0, 5.0], s.z_ref, s.w_ff, z0, s.dt, push,
                                 executor=dask_client)
    assert np.array_equal(here["final"], there["final"]) and np.array_equal(here["effort"], there["effort"])
    assert here["kp"].tolist() == [10.0, 10.0, 100.0, 100.0] and here["kd"].tolist() == [1.0, 5.0, 1.0, 5.0]
    direct = dr_simulate_pd(s, 100.0, 5.0, z0, push)
    assert np.array_equal(direct, here["final"][3])
    err = np.linalg.norm(here["final"] - s.z_ref[-1], axis=1)
    assert err[3] < err[0]  # stiffer PD tracks better


def dr_simulate_pd(s, kp, kd, z0, push):
    from directable import sim

    return np.array(sim.simulate(s.red, z0, s.T, s.dt, controller=lqr.pd_tracker(kp, kd, s.z_ref, s.w_ff),
                                 disturbance=push).states[-1])


@pytest.mark.parametrize("method", ["fork", "forkserver", "spawn"])
def test_every_entry_point_on_a_process_pool(method, t_scene):
    """Each offline entry point on a 2-process pool of every start method
    gives the in-process result bit for bit (fork: after the parent's thread
    pool has run the same work)."""
    from directable.experiments import offline
    from directable.experiments import reduced_fluid_paths as R

    s = t_scene
    u, v, a = fem.centerline(s.model, s.dt, s.forces, return_acceleration=True)
    snaps = fem.enrich(s.model, s.dt, s.forces, runs=2, u=u, v=v, a=a, seed=5)
    rng = np.random.default_rng(7)
    problems = [dict(A=0.3 * rng.standard_normal((20, 4, 4)), B=rng.standard_normal((4, 2)), dt=0.02, Q=10.0, R=0.1,
                     Q_final=5.0) for _ in range(2)]
    gains = lqr.solve_continuous_batch(problems)
    spec = offline.reduced_solid_spec(s.model, s.basis.U)
    push = s.push(5, np.r_[np.zeros(s.model.dofs - 3), 50.0, 0, 0], duration=3)
    grid = offline.pd_gain_grid(spec, [10.0, 100.0], [1.0], s.z_ref, s.w_ff, s.z_ref[0], s.dt, push)
    scn = R.make_scenario(n=16, r=4, steps=20, enrich=2)
    search = R.gain_search(scn, budget=50.0, noise=2.0, grid_size=2)
    with cf.ProcessPoolExecutor(2, mp_context=mp.get_context(method)) as ex:
        assert np.array_equal(fem.enrich(s.model, s.dt, s.forces, runs=2, u=u, v=v, a=a, seed=5, executor=ex), snaps)
        for here, there in zip(gains, lqr.solve_continuous_batch(problems, executor=ex)):
            assert np.array_equal(here.K, there.K) and np.array_equal(here.P, there.P)
        there = offline.pd_gain_grid(spec, [10.0, 100.0], [1.0], s.z_ref, s.w_ff, s.z_ref[0], s.dt, push, executor=ex)
        assert np.array_equal(grid["final"], there["final"]) and np.array_equal(grid["effort"], there["effort"])
        assert np.array_equal(R.make_scenario(n=16, r=4, steps=20, enrich=2, executor=ex).basis, scn.basis)
        other = R.gain_search(scn, budget=50.0, noise=2.0, grid_size=2, executor=ex)
        for kind in ("P", "PD"):
            assert other[kind]["gains"] == search[kind]["gains"]
            assert other[kind]["final_error"] == search[kind]["final_error"]
