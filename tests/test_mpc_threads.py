"""Threading rule of the MPC family: one HorizonOptimizer and one prediction
model (linear, an Euler predictor of a SpringChain, the SPH model) used
from 4 Python threads at once, each with its own workspace, give the
single-thread results bit for bit."""
from __future__ import annotations


import numpy as np
import pytest

import directable as dr
from directable import mpc, sph
from reference.threads import in_threads

THREADS = 4


def _linear():
    rng = np.random.default_rng(3)
    n, s = 6, 2
    A = np.eye(n) + 0.05 * rng.standard_normal((n, n))
    B = rng.standard_normal((n, s))
    return mpc.LinearModel(A, B), n, s


def _chain():
    chain = dr.models.spring_chain(masses=4)
    pred = mpc.EulerModel(chain, dt=0.01)
    return pred, pred.n, pred.s


def _sph():
    pts = sph.block((0.3, 0.0), (0.42, 0.1), 0.02)
    fluid = sph.SPHFluid2D(pts, sph.box_walls((0.0, 0.0), (1.0, 1.0), 0.02), spacing=0.02, h=0.026)
    fluid.step(steps=5)
    pred = fluid.prediction_model(dt=5 * fluid.dt)
    return pred, pred.n, pred.s, sph.state(fluid)


def _problem(kind):
    """(prediction model, optimizer, four start states, reference (H+1, n))."""
    H = 4
    if kind == "sph":
        pred, n, s, x = _sph()
        W = np.r_[1e4 * np.ones(n // 2), np.zeros(n // 2)]
        opt = mpc.HorizonOptimizer(pred, H, W, 1e-8, W, iterations=6)
        starts = [x + np.r_[1e-3 * k * np.ones(n // 2), np.zeros(n // 2)] for k in range(THREADS)]
        ref = np.tile(x, (H + 1, 1))
        return pred, opt, starts, ref
    pred, n, s = _linear() if kind == "linear" else _chain()
    method = "gauss_newton" if kind == "chain" else "lbfgs"
    opt = mpc.HorizonOptimizer(pred, H, 1.0, 0.1, 10.0, iterations=8, method=method, lower=-2.0, upper=2.0)
    rng = np.random.default_rng(7)
    starts = [rng.standard_normal(n) for _ in range(THREADS)]
    ref = 0.1 * rng.standard_normal((H + 1, n))
    return pred, opt, starts, ref


def _solves(opt, x0, ref, workspace):
    """Three warm-started solves from x0: every u, state and cost."""
    out = []
    for _ in range(3):
        r = opt.solve(x0, ref, workspace=workspace)
        out.append((r.u, r.states, r.cost, r.iterations))
        x0 = r.states[1]
    return out


@pytest.mark.parametrize("kind", ["linear", "chain", "sph"])
def test_one_optimizer_from_four_threads_equals_one_thread(kind):
    pred, opt, starts, ref = _problem(kind)
    serial = [_solves(opt, x0, ref, opt.create_workspace()) for x0 in starts]
    parallel = in_threads(lambda k: _solves(opt, starts[k], ref, opt.create_workspace()))
    for a, b in zip(serial, parallel):
        for (ua, xa, ca, ia), (ub, xb, cb, ib) in zip(a, b):
            np.testing.assert_array_equal(ua, ub)
            np.testing.assert_array_equal(xa, xb)
            assert (ca, ia) == (cb, ib)


@pytest.mark.parametrize("kind", ["linear", "chain", "sph"])
def test_one_prediction_model_from_four_threads_equals_one_thread(kind):
    pred, _, starts, _ = _problem(kind)
    rng = np.random.default_rng(11)
    u = 1e-3 * rng.standard_normal(pred.s)
    lam = rng.standard_normal(pred.n)

    def calls(k):
        data = pred.create_data()
        x1 = pred.step(starts[k], u, 0, data=data)
        gx, gu = pred.vjp(starts[k], u, lam, 0, data=data)
        x2 = pred.step(x1, u, 1)  # a fresh data per call
        return x1, x2, gx, gu

    serial = [calls(k) for k in range(THREADS)]
    parallel = in_threads(calls)
    for a, b in zip(serial, parallel):
        for va, vb in zip(a, b):
            np.testing.assert_array_equal(va, vb)


def test_receding_runs_from_four_threads_equal_one_thread():
    """run() makes its own workspace: one optimizer drives four plants at once."""
    pred, opt, starts, _ = _problem("linear")
    steps = 6
    ref = np.tile(np.linspace(0.0, 0.5, opt.n), (steps + opt.horizon + 1, 1))
    serial = [opt.run(pred, x0, ref, steps) for x0 in starts]
    parallel = in_threads(lambda k: opt.run(pred, starts[k], ref, steps))
    for a, b in zip(serial, parallel):
        np.testing.assert_array_equal(a.states, b.states)
        np.testing.assert_array_equal(a.controls, b.controls)


def test_workspace_and_data_belong_to_their_maker():
    pred, opt, starts, ref = _problem("linear")
    other = mpc.HorizonOptimizer(mpc.LinearModel(np.eye(3), np.ones((3, 1))), 2, 1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="workspace"):
        opt.solve(starts[0], ref, workspace=other.create_workspace())
    with pytest.raises(TypeError, match="workspace"):
        opt.solve(starts[0], ref, workspace=object())
    with pytest.raises(ValueError, match="data"):
        pred.step(starts[0], np.zeros(pred.s), data=mpc.LinearModel(np.eye(6), np.ones((6, 2))).create_data())
