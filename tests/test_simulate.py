"""The controlled simulation loop in C++: ``directable.sim.simulate`` and the
per-step ``directable.Simulation``."""
from __future__ import annotations

import contextlib
import gc

import numpy as np
import pytest

import directable as dr
from directable import lqr, models, sim
from reference.problems import noncontiguous_views


def _setup(rng, make_chain, m=3, T=60, dt=0.01, cubic=400.0, loop=False):
    """A reference (open-loop rollout under a smooth w_ff) and LQR gains from
    the linearization along it."""
    chain = make_chain(m, cubic=cubic)
    s = chain.control_dim()
    t = np.arange(T) * dt
    w_ff = np.stack([np.sin(2 * np.pi * (j + 1) * t / (T * dt)) for j in range(s)], axis=1) * 2.0
    z0 = np.zeros(2 * m)
    z_ref = models.rollout(chain, z0, w_ff, dt)
    A = models.linearize(chain, z_ref, dt)
    sol = lqr.solve_continuous(A, chain.control_matrix(), dt, 100.0, 0.1, 100.0)
    make_tracker = lambda: lqr.tracker(sol, z_ref, w_ff, loop=loop)  # noqa: E731
    return chain, z_ref, w_ff, sol, make_tracker


def _python_loop(chain, tracker, z0, steps, dt, disturbance=None, kicks=None, jumps=(), start=0):
    n, s = tracker.n, tracker.s
    tracker.index = start
    z = np.array(z0, float)
    out = dict(states=[z.copy()], controls=[], feedback=[], tracking_error=[], effort=[], ref_index=[])
    for i in range(steps):
        if i in jumps:
            tracker.jump_to_nearest(z)
        out["ref_index"].append(tracker.index)
        out["tracking_error"].append(np.linalg.norm(z - tracker.z_ref[tracker.index]))
        if kicks is not None:
            z = z + kicks[i]
        w, fb = np.empty(s), np.empty(s)
        tracker.control_into(z, w, fb)
        applied = w if disturbance is None else w + disturbance[i]
        z = chain.step(z, applied, dt)
        tracker.advance()
        out["controls"].append(w)
        out["feedback"].append(fb)
        out["effort"].append(fb @ fb)
        out["states"].append(z.copy())
    out["ref_index"].append(tracker.index)
    out["tracking_error"].append(np.linalg.norm(z - tracker.z_ref[tracker.index]))
    return {k: np.array(v) for k, v in out.items()}


def _assert_result_equals(res, ref, rtol=1e-12):
    for key in ("states", "controls", "feedback", "tracking_error", "effort"):
        got = np.asarray(getattr(res, key))
        assert got.shape == ref[key].shape, key
        np.testing.assert_allclose(got, ref[key], rtol=rtol, atol=1e-14, err_msg=key)
    np.testing.assert_array_equal(res.ref_index, ref["ref_index"])


@pytest.mark.parametrize("loop", [False, True])
def test_simulate_equals_python_loop(rng, make_chain, loop):
    chain, z_ref, w_ff, sol, make_tracker = _setup(rng, make_chain, loop=loop)
    steps = 90  # past the end of the 60-step reference: hold or loop
    D = np.zeros((steps, 3))
    D[20:25] = rng.standard_normal(3) * 5
    z0 = z_ref[0] + 0.05 * rng.standard_normal(6)
    tr_c, tr_py = make_tracker(), make_tracker()
    # holding past the horizon is said once; looping is what was asked for
    said = contextlib.nullcontext() if loop else pytest.warns(RuntimeWarning, match="past the tracker's horizon")
    with said:
        res = sim.simulate(chain, z0, steps, 0.01, controller=tr_c, disturbance=D)
    ref = _python_loop(chain, tr_py, z0, steps, 0.01, disturbance=D)
    _assert_result_equals(res, ref)
    assert tr_c.index == tr_py.index == (steps % 60 if loop else 60)
    # the applied control excludes the disturbance; effort = |w_fb|^2
    np.testing.assert_allclose(np.asarray(res.controls) - np.asarray(res.feedback),
                               w_ff[np.minimum(np.arange(steps) % 60 if loop else np.arange(steps), 59)],
                               rtol=1e-12, atol=1e-12)


def test_per_step_simulation_equals_simulate(rng, make_chain):
    chain, z_ref, w_ff, sol, make_tracker = _setup(rng, make_chain)
    steps, dt = 60, 0.01
    D = 0.5 * rng.standard_normal((steps, 3))
    kicks = np.zeros((steps, 6))
    kicks[10] = 0.02 * rng.standard_normal(6)
    z0 = z_ref[0] + 0.01
    res = sim.simulate(chain, z0, steps, dt, controller=make_tracker(), disturbance=D, kicks=kicks)
    tr = make_tracker()
    stepper = dr.Simulation(chain, z0, dt, controller=tr)
    assert stepper.tracking_error == pytest.approx(res.tracking_error[0], rel=1e-14)
    for i in range(steps):
        stepper.step(w_ext=D[i], kick=kicks[i])
        np.testing.assert_array_equal(stepper.last_control, res.controls[i])
        np.testing.assert_array_equal(stepper.last_feedback, res.feedback[i])
        np.testing.assert_array_equal(stepper.state, res.states[i + 1])
        assert stepper.tracking_error == res.tracking_error[i + 1]
    assert stepper.steps == steps
    assert stepper.dt == dt
    assert stepper.time == pytest.approx(steps * dt, rel=1e-12)
    # the kick is applied to the state before the control is computed
    ref = _python_loop(chain, make_tracker(), z0, steps, dt, disturbance=D, kicks=kicks)
    _assert_result_equals(res, ref)
    # state can be set (a user drag), then stepping continues from there
    stepper.state = z_ref[-1]
    np.testing.assert_array_equal(stepper.state, z_ref[-1])


def test_no_controller_open_loop_and_disturbance(rng, make_chain):
    chain = make_chain(3)
    steps, dt = 40, 0.01
    W = rng.standard_normal((steps, 3))
    D = rng.standard_normal((steps, 3))
    z0 = 0.1 * rng.standard_normal(6)
    res = sim.simulate(chain, z0, steps, dt, open_loop=W, disturbance=D)
    np.testing.assert_array_equal(res.controls, W)  # the disturbance is not part of the control
    np.testing.assert_array_equal(res.feedback, np.zeros((steps, 3)))
    np.testing.assert_array_equal(res.effort, np.zeros(steps))
    np.testing.assert_array_equal(res.tracking_error, np.zeros(steps + 1))
    np.testing.assert_array_equal(res.states, models.rollout(chain, z0, W + D, dt))
    # no control at all = zero control
    free = sim.simulate(chain, z0, steps, dt)
    np.testing.assert_array_equal(free.states, models.rollout(chain, z0, np.zeros((steps, 3)), dt))


def test_kicks_without_controller(rng, make_chain):
    chain = make_chain(2)
    steps, dt = 10, 0.02
    kicks = np.zeros((steps, 4))
    kicks[3] = [0.0, 0.0, 1.0, -1.0]
    z0 = np.zeros(4)
    res = sim.simulate(chain, z0, steps, dt, kicks=kicks)
    z = z0
    for i in range(steps):
        z = chain.step(z + kicks[i], np.zeros(2), dt)
        np.testing.assert_array_equal(res.states[i + 1], z)


def test_jump_steps_retarget_the_nearest_reference_state(rng, make_chain):
    chain, z_ref, w_ff, sol, make_tracker = _setup(rng, make_chain)
    tr = make_tracker()
    z0 = z_ref[37] + 1e-5
    res = sim.simulate(chain, z0, 10, 0.01, controller=tr, jump_steps=[0])
    assert list(res.ref_index) == list(range(37, 48))
    # a jump in the middle of a run, checked against the Python loop
    tr1, tr2 = make_tracker(), make_tracker()
    z0 = z_ref[0] + 0.05
    res = sim.simulate(chain, z0, 30, 0.01, controller=tr1, jump_steps=np.array([5, 17]))
    ref = _python_loop(chain, tr2, z0, 30, 0.01, jumps=(5, 17))
    _assert_result_equals(res, ref)
    for j in (5, 17):
        assert res.ref_index[j] == tr1.nearest_index(res.states[j])


def test_simulate_start_index_and_the_callers_controller(rng, make_chain):
    chain, z_ref, w_ff, sol, make_tracker = _setup(rng, make_chain)
    tr = make_tracker()
    sim.simulate(chain, z_ref[0], 25, 0.01, controller=tr)
    assert tr.index == 25  # the caller's tracker advanced
    res = sim.simulate(chain, z_ref[0], 5, 0.01, controller=tr, start_index=None)  # continue where it stopped
    assert list(res.ref_index) == list(range(25, 31))
    res = sim.simulate(chain, z_ref[0], 5, 0.01, controller=tr)  # default: from reference step 0
    assert list(res.ref_index) == list(range(0, 6))
    res = sim.simulate(chain, z_ref[12], 5, 0.01, controller=tr, start_index=12)
    assert list(res.ref_index) == list(range(12, 18))
    ref = _python_loop(chain, make_tracker(), z_ref[12], 5, 0.01, start=12)
    _assert_result_equals(res, ref)


def test_lqr_returns_to_reference_after_push_linear_model(rng, make_chain):
    """Linear chain (no cubic term): after a push the LQR drives the state back
    onto the reference; feed-forward alone does not."""
    dt = 0.01
    chain, z_ref, w_ff, sol, make_tracker = _setup(rng, make_chain, cubic=0.0, T=400, dt=dt)
    push = sim.push(400, 3, at=100, force=np.array([40.0, -30.0, 20.0]), duration=5)
    lqr_run = sim.simulate(chain, z_ref[0], 400, dt, controller=make_tracker(), disturbance=push)
    ff_only = lqr.tracker(np.zeros((400, 3, 6)), z_ref, w_ff)
    ff_run = sim.simulate(chain, z_ref[0], 400, dt, controller=ff_only, disturbance=push)
    e = np.asarray(lqr_run.tracking_error)
    e_ff = np.asarray(ff_run.tracking_error)
    assert e[:100].max() < 1e-9  # on the reference before the push (same RK4 as the rollout)
    peak = e[100:110].max()
    assert peak > 1e-2
    assert e[-1] < 1e-3 * peak
    assert e[-1] < 1e-2 * e_ff[-1]
    # the error keeps shrinking after the push (no drift back out)
    assert e[250:].max() < 0.05 * peak
    summary = sim.summary(lqr_run, dt, z_target=z_ref[-1])
    assert summary["final_distance"] == pytest.approx(e[-1], rel=1e-12)
    assert summary["feedback_effort"] > 0


def test_lqr_tracks_nonlinear_chain_better_than_feed_forward(rng, make_chain):
    dt = 0.01
    chain, z_ref, w_ff, sol, make_tracker = _setup(rng, make_chain, cubic=400.0, T=300, dt=dt)
    push = sim.push(300, 3, at=50, force=np.array([30.0, 0.0, -30.0]), duration=5)
    e = np.asarray(sim.simulate(chain, z_ref[0], 300, dt, controller=make_tracker(), disturbance=push).tracking_error)
    ff = lqr.tracker(np.zeros((300, 3, 6)), z_ref, w_ff)
    e_ff = np.asarray(sim.simulate(chain, z_ref[0], 300, dt, controller=ff, disturbance=push).tracking_error)
    assert e[-1] < 0.05 * e_ff[-1]
    assert e[-1] < 0.05 * e[50:60].max()


def test_reduced_gain_storage_tracks_like_float64_in_closed_loop(rng, make_chain):
    """float32/float16/int8 gains perturb the feedback by their rounding only:
    the pushed nonlinear chain follows the float64 run closely."""
    dt, T = 0.01, 300
    chain, z_ref, w_ff, sol, _ = _setup(rng, make_chain, cubic=400.0, T=T, dt=dt)
    push = sim.push(T, 3, at=50, force=np.array([30.0, 0.0, -30.0]), duration=5)
    runs = {g: sim.simulate(chain, z_ref[0], T, dt, controller=lqr.tracker(sol, z_ref, w_ff, gain_dtype=g),
                            disturbance=push) for g in ("float64", "float32", "float16", "int8")}
    z64 = np.asarray(runs["float64"].states)
    dev = np.abs(z64 - z_ref).max()  # how far the push moves the chain off the reference
    e64 = np.asarray(runs["float64"].tracking_error)
    for g, tol in (("float32", 1e-6), ("float16", 1e-3), ("int8", 1e-2)):
        gap = np.abs(np.asarray(runs[g].states) - z64).max()
        assert 0 < gap <= tol * dev, (g, gap, dev)
        e = np.asarray(runs[g].tracking_error)
        assert e[-1] <= 1.01 * e64[-1]


def test_result_arrays_are_readonly_views(rng, make_chain):
    chain = make_chain(2)
    res = sim.simulate(chain, np.full(4, 0.1), 10, 0.01)
    states = res.states
    copy = np.array(states)
    assert not states.flags.writeable
    assert np.shares_memory(res.states, res.states)
    assert states.shape == (11, 4) and res.controls.shape == (10, 2) and res.feedback.shape == (10, 2)
    assert res.tracking_error.shape == (11,) and res.effort.shape == (10,) and res.ref_index.shape == (11,)
    del res
    gc.collect()
    np.testing.assert_array_equal(states, copy)


def test_simulate_progress(rng, make_chain):
    chain = make_chain(2)
    calls = []
    sim.simulate(chain, np.zeros(4), 50, 0.01, progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1] == (50, 50)


def test_push_helper():
    d = sim.push(10, 2, at=3, force=np.array([1.0, -2.0]), duration=2)
    expect = np.zeros((10, 2))
    expect[3:5] = [1.0, -2.0]
    np.testing.assert_array_equal(d, expect)
    with pytest.raises(ValueError, match="force"):
        sim.push(10, 2, at=3, force=np.ones(3))
    with pytest.raises(ValueError, match="push"):
        sim.push(10, 2, at=10, force=np.ones(2))


def test_tracker_and_simulation_noncontiguous_same_result(rng, make_chain):
    chain = make_chain(2)
    Tt = 10
    K = rng.standard_normal((Tt, 2, 4))
    z_ref = 0.1 * rng.standard_normal((Tt + 1, 4))
    w_ff = rng.standard_normal((Tt, 2))
    D = rng.standard_normal((Tt, 2))
    kicks = 0.01 * rng.standard_normal((Tt, 4))
    z0 = np.array([0.1, -0.1, 0.0, 0.2])
    ref = sim.simulate(chain, z0, Tt, 0.01, controller=lqr.tracker(K, z_ref, w_ff), disturbance=D, kicks=kicks)
    tr = lqr.tracker(K, z_ref, w_ff)
    w_ref = tr.control(z0)
    for kind, Kv in noncontiguous_views(K).items():
        zr, ff = noncontiguous_views(z_ref)[kind], noncontiguous_views(w_ff)[kind]
        tv = lqr.tracker(Kv, zr, ff)
        # also the raw class (direct C++ binding)
        tv2 = lqr.Tracker(Kv, zr, ff)
        for t in (tv, tv2):
            np.testing.assert_array_equal(t.K, K)
            np.testing.assert_array_equal(t.control(z0), w_ref)
        res = sim.simulate(chain, noncontiguous_views(z0)["stepped"], Tt, 0.01, controller=tv,
                           disturbance=noncontiguous_views(D)[kind], kicks=noncontiguous_views(kicks)[kind])
        np.testing.assert_array_equal(res.states, ref.states, err_msg=kind)
    # per-step calls with strided vectors
    for v in noncontiguous_views(z0).values():
        np.testing.assert_array_equal(tr.control(v), w_ref)
        np.testing.assert_array_equal(chain.step(v, noncontiguous_views(w_ref)["stepped"], 0.01),
                                      chain.step(z0, w_ref, 0.01))
        np.testing.assert_array_equal(chain.jacobian(v), chain.jacobian(z0))
        np.testing.assert_array_equal(chain.dynamics(v), chain.dynamics(z0))
        assert tr.nearest_index(v, weights=noncontiguous_views(np.arange(1.0, 5.0))["stepped"]) == \
            tr.nearest_index(z0, weights=np.arange(1.0, 5.0))
    Z = 0.2 * rng.standard_normal((6, 4))
    for kind, v in noncontiguous_views(Z).items():
        np.testing.assert_array_equal(models.linearize(chain, v, 0.01), models.linearize(chain, Z, 0.01))


def test_dt_in_models_and_simulation(rng, make_chain):
    chain = make_chain(2)
    for dt in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match=r"\bdt\b"):
            sim.simulate(chain, np.zeros(4), 3, dt)
        with pytest.raises(ValueError, match=r"\bdt\b"):
            dr.Simulation(chain, np.zeros(4), dt)
        with pytest.raises(ValueError, match=r"\bdt\b"):
            chain.step(np.zeros(4), np.zeros(2), dt)
        with pytest.raises(ValueError, match=r"\bdt\b"):
            models.linearize(chain, np.zeros((3, 4)), dt)


def test_simulate_bad_input(rng, make_chain):
    chain = make_chain(2)
    tr = lqr.tracker(np.zeros((5, 2, 4)), np.zeros((6, 4)))
    cases = [
        (ValueError, "z0", lambda: sim.simulate(chain, np.zeros(3), 5, 0.01)),
        (TypeError, "z0", lambda: sim.simulate(chain, np.zeros(4) + 0j, 5, 0.01)),
        (ValueError, "z0", lambda: sim.simulate(chain, np.array([np.nan, 0, 0, 0]), 5, 0.01)),
        (ValueError, "steps", lambda: sim.simulate(chain, np.zeros(4), 0, 0.01)),
        (ValueError, "steps", lambda: sim.simulate(chain, np.zeros(4), -2, 0.01)),
        (ValueError, "disturbance", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01, disturbance=np.zeros((4, 2)))),
        (ValueError, "disturbance", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01, disturbance=np.zeros((5, 3)))),
        (ValueError, "disturbance", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01,
                                                         disturbance=np.full((5, 2), np.inf))),
        (TypeError, "disturbance", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01,
                                                        disturbance=np.zeros((5, 2)).astype(str))),
        (ValueError, "open_loop", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01, open_loop=np.zeros((5, 1)))),
        (ValueError, "open_loop", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01,
                                                       open_loop=np.full((5, 2), np.nan))),
        (ValueError, "open_loop", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01, controller=tr,
                                                       open_loop=np.zeros((5, 2)))),
        (ValueError, "kicks", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01, kicks=np.zeros((5, 2)))),
        (ValueError, "kicks", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01, kicks=np.full((5, 4), np.nan))),
        (ValueError, "jump_steps", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01, controller=tr,
                                                        jump_steps=[5])),
        (ValueError, "jump_steps", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01, controller=tr,
                                                        jump_steps=[-1])),
        (ValueError, "jump_steps", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01, jump_steps=[1])),
        (ValueError, "controller", lambda: sim.simulate(make_chain(3), np.zeros(6), 5, 0.01, controller=tr)),
    ]
    for exc, name, f in cases:
        with pytest.raises(exc, match=name):
            f()
    # divergence is reported, not returned as NaN/inf states
    with pytest.raises(ValueError, match="non-finite|diverged"):
        sim.simulate(chain, np.array([1e200, 0.0, 0.0, 0.0]), 3, 0.01)
    stepper = dr.Simulation(chain, np.zeros(4), 0.01)
    with pytest.raises(ValueError, match="w_ext"):
        stepper.step(w_ext=np.array([np.nan, 0.0]))
    with pytest.raises(ValueError, match="w_ext"):
        stepper.step(w_ext=np.zeros(3))
    with pytest.raises(ValueError, match="kick"):
        stepper.step(kick=np.full(4, np.inf))
    with pytest.raises(ValueError, match="w_open"):
        stepper.step(w_open=np.zeros(1))
    with pytest.raises(ValueError, match=r"\bz\b|state"):
        stepper.state = np.array([np.nan, 0, 0, 0])
    with pytest.raises(ValueError, match="z0"):
        dr.Simulation(chain, np.zeros(5), 0.01)
    with pytest.raises(ValueError, match="controller"):
        dr.Simulation(make_chain(3), np.zeros(6), 0.01, controller=tr)
    assert stepper.steps == 0  # the failed calls did not step


def test_simulate_controller_wrong_type(make_chain):
    # a TypeError that names the argument, not an AttributeError from inside
    with pytest.raises(TypeError, match="controller"):
        sim.simulate(make_chain(2), np.zeros(4), 5, 0.01, controller="lqr")


def test_simulate_controller_wrong_type_without_start_index(make_chain):
    with pytest.raises(TypeError):
        sim.simulate(make_chain(2), np.zeros(4), 5, 0.01, controller="lqr", start_index=None)
