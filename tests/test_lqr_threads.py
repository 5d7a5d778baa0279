"""One const model may be shared by threads; a Data object belongs to one
thread. The same tracker, LQR solution and discretization used from 4 Python
threads at once give the single-thread results bit for bit, and the long
calls release the GIL while they run."""
from __future__ import annotations

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from directable import lqr, models, sim

THREADS = 4
FIELDS = ("states", "controls", "feedback", "tracking_error", "effort", "ref_index")


def _problem(make_chain, m=3, T=80, dt=0.01):
    chain = make_chain(m, cubic=400.0)
    s = chain.control_dim()
    t = np.arange(T) * dt
    w_ff = np.stack([np.sin(2 * np.pi * (j + 1) * t / (T * dt)) for j in range(s)], axis=1) * 2.0
    z_ref = models.rollout(chain, np.zeros(2 * m), w_ff, dt)
    A = models.linearize(chain, z_ref, dt)
    sol = lqr.solve_continuous(A, chain.control_matrix(), dt, 100.0, 0.1, 100.0)
    return chain, z_ref, w_ff, sol, dt


def _runs(rng, chain, z_ref, steps):
    """Per-thread inputs: a different start, push and jump for each run."""
    n, s = z_ref.shape[1], chain.control_dim()
    out = []
    for k in range(THREADS):
        push = np.zeros((steps, s))
        push[10 + 7 * k:15 + 7 * k] = 20.0 * rng.standard_normal(s)
        out.append(dict(z0=z_ref[3 * k] + 0.02 * rng.standard_normal(n), disturbance=push, start_index=3 * k,
                        jump_steps=[40 + k]))
    return out


def _simulate(chain, tracker, dt, steps, run):
    res = sim.simulate(chain, run["z0"], steps, dt, controller=tracker, disturbance=run["disturbance"],
                       start_index=run["start_index"], jump_steps=run["jump_steps"])
    return {f: np.array(getattr(res, f)) for f in FIELDS}


def _assert_bitwise_equal(got, expected):
    for f in FIELDS:
        assert np.array_equal(got[f], expected[f]), f


@pytest.mark.parametrize("gain_dtype", ["float64", "float32", "float16", "int8"])
def test_one_tracker_serves_four_simulations_at_once(rng, make_chain, gain_dtype):
    chain, z_ref, w_ff, sol, dt = _problem(make_chain)
    tracker = lqr.tracker(sol, z_ref, w_ff, loop=True, gain_dtype=gain_dtype)
    steps = 4000  # the loop rewinds the 80-step reference: every run passes every gain many times
    runs = _runs(rng, chain, z_ref, steps)
    expected = [_simulate(chain, tracker, dt, steps, r) for r in runs]
    # the runs differ from each other, so a run that used another's data would show
    assert not np.array_equal(expected[0]["states"], expected[1]["states"])
    for _ in range(3):
        with ThreadPoolExecutor(THREADS) as pool:
            got = list(pool.map(lambda r: _simulate(chain, tracker, dt, steps, r), runs))
        for g, e in zip(got, expected):
            _assert_bitwise_equal(g, e)


def test_per_step_calls_beside_a_running_simulation(rng, make_chain):
    """The Tracker object's own index (the per-step calls) is not the one a
    simulate run moves while it runs."""
    chain, z_ref, w_ff, sol, dt = _problem(make_chain)
    tracker = lqr.tracker(sol, z_ref, w_ff, loop=True)
    steps = 20000
    run = _runs(rng, chain, z_ref, steps)[0]
    expected = _simulate(chain, tracker, dt, steps, run)
    z = z_ref[5] + 0.01
    tracker.index = 5
    w_expected = tracker.control(z)
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(_simulate, chain, tracker, dt, steps, run)
        seen = []
        while not future.done():
            tracker.index = 5
            seen.append(tracker.control(z))
        got = future.result()
    _assert_bitwise_equal(got, expected)
    for w in seen:
        assert np.array_equal(w, w_expected)


def test_one_solution_and_discretization_serve_four_threads(rng, make_chain):
    chain, z_ref, w_ff, sol, dt = _problem(make_chain)
    disc = sol.discretization
    n = z_ref.shape[1]
    tunings = [dict(alpha_Q=1.0 + k, alpha_R=0.5 + 0.25 * k) for k in range(THREADS)]
    states = rng.standard_normal((THREADS, n))

    def work(k):
        re = lqr.retune(disc, 100.0 * np.eye(n), **tunings[k])
        again = lqr.solve_continuous(models.linearize(chain, z_ref, dt), chain.control_matrix(), dt, 100.0, 0.1,
                                     100.0, threads=1)
        return (np.array(re.K), np.array(re.P), np.array(again.K), sol.cost_to_go(states[k], k),
                np.array(lqr.tracker(sol, z_ref, w_ff).control(z_ref[k])))

    expected = [work(k) for k in range(THREADS)]
    with ThreadPoolExecutor(THREADS) as pool:
        got = list(pool.map(work, range(THREADS)))
    for g, e in zip(got, expected):
        for a, b in zip(g, e):
            assert np.array_equal(a, b)
    assert not np.array_equal(expected[0][0], expected[1][0])  # the tunings differ


def test_simulate_releases_the_gil(rng, make_chain):
    """With the interpreter's forced switches turned off, the main thread runs
    Python while another thread is inside simulate only if simulate released
    the GIL: each time.sleep of the main thread must take the GIL back."""
    chain, z_ref, w_ff, sol, dt = _problem(make_chain)
    tracker = lqr.tracker(sol, z_ref, w_ff, loop=True)
    steps = 20000
    t0 = time.perf_counter()
    sim.simulate(chain, z_ref[0], steps, dt, controller=tracker)
    repeats = max(1, int(np.ceil(0.3 / (time.perf_counter() - t0))))  # >= 0.3 s of simulation
    finished = threading.Event()
    ticks = 0

    def worker():
        for _ in range(repeats):
            sim.simulate(chain, z_ref[0], steps, dt, controller=tracker)
        finished.set()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        thread = threading.Thread(target=worker)
        thread.start()
        while not finished.is_set():
            time.sleep(0.001)
            ticks += 1
        thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert ticks >= 20, ticks
