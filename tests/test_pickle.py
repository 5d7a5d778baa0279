"""Core objects pickle (round trip, bit for bit) and travel to worker processes."""
import concurrent.futures
import copy
import multiprocessing
import pickle

import numpy as np
import pytest

import directable as dr
from directable import _core


def _problem(T=30, m=3):
    model = dr.models.spring_chain(m)
    dt = 0.02
    w_ff = 0.5 * np.sin(np.arange(T)[:, None] * dt + np.arange(m))
    z_ref = dr.models.rollout(model, np.zeros(2 * m), w_ff, dt)
    A = dr.models.linearize(model, z_ref, dt)
    sol = dr.lqr.solve_continuous(A, model.control_matrix(), dt, 1e-3, 1e-2, 1e3)
    return model, dt, z_ref, w_ff, sol


def _roundtrip(obj):
    return pickle.loads(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def test_lqr_solution_and_its_discretization():
    *_, sol = _problem()
    back = _roundtrip(sol)
    assert type(back) is _core.LQRSolution
    np.testing.assert_array_equal(back.K, sol.K)
    np.testing.assert_array_equal(back.P, sol.P)
    disc = back.discretization  # the attribute solve_continuous attaches travels too
    for name in ("Phi", "Gamma", "Q", "N", "R", "Rc"):
        np.testing.assert_array_equal(getattr(disc, name), getattr(sol.discretization, name))
    assert disc.dt == sol.discretization.dt and disc.method == sol.discretization.method
    # the copy owns its memory: the original may go
    assert not np.shares_memory(back.K, sol.K)
    assert back.K.flags.writeable is False


@pytest.mark.parametrize("gain_dtype", ["float64", "float32", "float16", "int8"])
def test_tracker_controls_bit_for_bit(gain_dtype):
    model, dt, z_ref, w_ff, sol = _problem()
    ctrl = dr.lqr.tracker(sol, z_ref, w_ff, gain_dtype=gain_dtype)
    ctrl.index = 7
    back = _roundtrip(ctrl)
    assert back.gain_dtype == gain_dtype and back.index == 7 and back.horizon == ctrl.horizon
    z = z_ref[7] + 0.01
    np.testing.assert_array_equal(back.control(z), ctrl.control(z))
    run_a = dr.simulate(model, z_ref[0] + 0.1, 30, dt, controller=ctrl, start_index=0)
    run_b = dr.simulate(model, z_ref[0] + 0.1, 30, dt, controller=back, start_index=0)
    np.testing.assert_array_equal(run_a.states, run_b.states)


def test_constant_gain_tracker_and_limits():
    model, dt, z_ref, w_ff, _ = _problem()
    K = dr.lqr.pd_gain(10.0, 2.0, model.state_dim())
    ctrl = _core.Tracker(K, z_ref, w_ff, loop=True, w_min=-1.0, w_max=2.0)
    back = copy.deepcopy(ctrl)
    assert back.loop and back.horizon == ctrl.horizon
    np.testing.assert_array_equal(back.w_min, ctrl.w_min)
    np.testing.assert_array_equal(back.control(z_ref[3] + 0.2), ctrl.control(z_ref[3] + 0.2))


def test_models_and_results():
    model, dt, z_ref, w_ff, sol = _problem()
    back = _roundtrip(model)
    assert type(back) is type(model)
    for name in ("masses", "stiffness", "cubic", "damping", "actuated"):
        np.testing.assert_array_equal(getattr(back, name), getattr(model, name))
    np.testing.assert_array_equal(back.dynamics(z_ref[5]), model.dynamics(z_ref[5]))
    run = dr.simulate(model, z_ref[0], 30, dt, controller=dr.lqr.tracker(sol, z_ref, w_ff))
    r2 = _roundtrip(run)
    for name in ("states", "controls", "feedback", "tracking_error", "effort", "ref_index"):
        np.testing.assert_array_equal(getattr(r2, name), getattr(run, name))


def test_other_models():
    chain = dr.chain.PlanarChain([1.0, 2.0, 0.5], [1.0, 0.5, 0.7])
    back = _roundtrip(chain)
    q = np.array([0.1, -0.2, 0.3])
    np.testing.assert_array_equal(back.mass_matrix(q), chain.mass_matrix(q))
    mesh = dr.fem.cantilever(n=(4, 1, 1))
    back = _roundtrip(mesh)
    assert type(back) is type(mesh)
    np.testing.assert_array_equal(back.vertices, mesh.vertices)
    np.testing.assert_array_equal(back.tets, mesh.tets)
    lin = _core.LinearPrediction(np.eye(2), np.ones((2, 1)))
    np.testing.assert_array_equal(_roundtrip(lin).A, lin.A)


def _track_in_worker(args):
    model, ctrl, z0, steps, dt = args
    return dr.simulate(model, z0, steps, dt, controller=ctrl, start_index=0)


def test_process_pool_runs_what_it_was_sent():
    model, dt, z_ref, w_ff, sol = _problem()
    ctrl = dr.lqr.tracker(sol, z_ref, w_ff)
    starts = [z_ref[0] + d for d in (0.0, 0.05, 0.1)]
    ctx = multiprocessing.get_context("spawn")  # nothing inherited: all of it went through pickle
    with concurrent.futures.ProcessPoolExecutor(2, mp_context=ctx) as pool:
        runs = list(pool.map(_track_in_worker, [(model, ctrl, z0, 30, dt) for z0 in starts]))
    for z0, run in zip(starts, runs):
        np.testing.assert_array_equal(run.states, _track_in_worker((model, ctrl, z0, 30, dt)).states)
