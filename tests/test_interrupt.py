"""Progress and interruption of the long runs: the callback reports (done,
total), an exception from it stops the run, Ctrl-C (SIGINT) interrupts a
GIL-free precomputation, and other Python threads run meanwhile."""
import os
import signal
import sys
import threading
import time

import numpy as np
import pytest

import directable as dr
from directable import lqr, models, sim, sph
from reference.problems import continuous_args, small_lq, T


class SlowModel(dr.Model):
    """A 2-state Python model whose Jacobian takes 1 ms, so a linearization
    outlasts the 50 ms progress throttle with tiny arrays."""

    def state_dim(self):
        return 2

    def control_dim(self):
        return 1

    def dynamics(self, z, t):
        return np.array([z[1], -z[0]])

    def jacobian(self, z, t):
        time.sleep(1e-3)
        return np.array([[0.0, 1.0], [-1.0, 0.0]])

    def control_matrix(self):
        return np.array([[0.0], [1.0]])


@pytest.mark.parametrize("which", ["discretize", "solve_continuous", "sweep", "sweep_team", "simulate", "linearize"])
def test_exception_in_progress_callback_stops_the_run(which):
    calls = []

    def cb(done, total):
        calls.append((done, total))
        raise KeyboardInterrupt

    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        if which == "discretize":  # ~4000 x 0.1 ms
            n, T = 32, 4000
            dr.discretize(np.tile(-np.eye(n), (T, 1, 1)), np.ones((n, n // 2)), 0.01, np.eye(n), np.eye(n // 2),
                          threads=1, progress=cb)
        elif which == "solve_continuous":  # the pipeline on all cores, ~4000 x 0.1 ms
            n, T = 32, 4000
            dr.solve_continuous(np.tile(-np.eye(n), (T, 1, 1)), np.ones((n, n // 2)), 0.01, np.eye(n),
                                np.eye(n // 2), np.eye(n), progress=cb)
        elif which == "sweep":  # ~4000 x 50 us
            dr.solve_discrete(np.eye(48), np.ones((48, 24)), 1.0, 1.0, 1.0, horizon=4000, progress=cb)
        elif which == "sweep_team":  # n >= 96: chunks on a team of threads, ~2000 x 0.2 ms
            dr.solve_discrete(0.99 * np.eye(128), np.ones((128, 64)), 1.0, 1.0, 1.0, horizon=2000, progress=cb)
        elif which == "simulate":
            dr.simulate(dr.models.spring_chain(masses=16), np.zeros(32), 400_000, 1e-3, progress=cb)
        else:
            dr.models.linearize(SlowModel(), np.zeros((2001, 2)), 0.01, threads=1, progress=cb)
    assert calls and all(total > 0 and 0 <= done < total for done, total in calls)
    assert time.perf_counter() - t0 < 10.0


def _sized_run(rng, which, seconds):
    """(total steps, run(progress)) for a precomputation lasting ~``seconds`` here."""
    A = rng.standard_normal((30, 30)) * 0.15
    B = rng.standard_normal((30, 15))
    Ad1 = rng.standard_normal((1, 20, 20))
    Bd = rng.standard_normal((20, 10))

    def make(T):
        if which == "sph_step":  # T steps of a 2D block settling in a box, in one call
            dx = 0.02
            return lambda cb: sph.SPHFluid2D(sph.block((0.3, 0.0), (0.5, 0.2), dx), sph.box_walls((0, 0), (1, 1), dx),
                                             spacing=dx, h=1.3 * dx).step(steps=T, progress=cb)
        if which == "solve_discrete":
            return lambda cb: lqr.solve_discrete(A, B, 1.0, 1.0, 1.0, horizon=T, progress=cb)
        Ad = np.repeat(Ad1, T, axis=0)
        return lambda cb: lqr.discretize(Ad, Bd, 0.1, 1.0, 1.0, progress=cb)

    per_step = np.inf
    for _ in range(3):  # the fastest of three calibration runs: a busy machine only makes the real run longer
        t0 = time.perf_counter()
        make(2000)(None)
        per_step = min(per_step, (time.perf_counter() - t0) / 2000)
    T = int(np.clip(seconds / per_step, 2000, 1_000_000))
    return T, make(T)


@pytest.mark.parametrize("which", ["solve_discrete", "discretize", "solve_continuous", "retune", "linearize",
                                   "simulate"])
def test_progress_called_with_done_total(rng, make_chain, which):
    a = small_lq(rng)
    chain = make_chain(2)
    calls = []
    cb = lambda done, total: calls.append((done, total))  # noqa: E731
    run = {
        "solve_discrete": lambda: lqr.solve_discrete(**a, progress=cb),
        "discretize": lambda: lqr.discretize(**continuous_args(a), progress=cb),
        "solve_continuous": lambda: lqr.solve_continuous(a["A"], a["B"], 0.1, 1.0, 1.0, 1.0, progress=cb),
        "retune": lambda: lqr.retune(lqr.discretize(**continuous_args(a)), 1.0, 2.0, 1.0, progress=cb),
        "linearize": lambda: models.linearize(chain, np.zeros((T + 1, 4)), 0.01, progress=cb),
        "simulate": lambda: sim.simulate(chain, np.zeros(4), T, 0.01, progress=cb),
    }[which]
    run()
    assert calls, "callback never called"
    # solve_continuous counts the discretization's T steps and the sweep's T
    work = 2 * T if which == "solve_continuous" else T
    assert calls[-1] == (work, work)
    for done, total in calls:
        assert isinstance(done, int) and isinstance(total, int)
        assert 0 <= done <= total == work
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


@pytest.mark.parametrize("which", ["solve_discrete", "discretize", "sph_step"])
def test_progress_reports_midway_and_exception_stops_the_run(rng, which):
    total, run = _sized_run(rng, which, 0.4)
    calls = []
    run(lambda d, t: calls.append((d, t)))
    assert len(calls) >= 2 and calls[0][0] < total, calls  # reported during the run, not only at the end

    class Stop(Exception):
        pass

    seen = []

    def stop(done, tot):
        seen.append((done, tot))
        raise Stop(f"stopped at {done}")

    with pytest.raises(Stop, match="stopped at"):
        run(stop)
    assert len(seen) == 1  # no further report after the exception: the computation stopped
    assert seen[0][0] < total


@pytest.mark.parametrize("which", ["solve_continuous", "linearize", "simulate", "retune"])
def test_progress_exception_propagates(rng, make_chain, which):
    a = small_lq(rng)
    chain = make_chain(2)

    def boom(done, total):
        raise KeyError("from the callback")

    run = {
        "solve_continuous": lambda: lqr.solve_continuous(a["A"], a["B"], 0.1, 1.0, 1.0, 1.0, progress=boom),
        "linearize": lambda: models.linearize(chain, np.zeros((T + 1, 4)), 0.01, progress=boom),
        "simulate": lambda: sim.simulate(chain, np.zeros(4), T, 0.01, progress=boom),
        "retune": lambda: lqr.retune(lqr.discretize(**continuous_args(a)), 1.0, progress=boom),
    }[which]
    with pytest.raises(KeyError, match="from the callback"):
        run()


def test_progress_bar_and_bad_progress(rng, capsys):
    a = small_lq(rng)
    ref = lqr.solve_continuous(a["A"], a["B"], 0.1, 1.0, 1.0, 1.0)
    bar = lqr.solve_continuous(a["A"], a["B"], 0.1, 1.0, 1.0, 1.0, progress=True)
    np.testing.assert_array_equal(bar.K, ref.K)
    with pytest.raises(TypeError, match="progress"):
        lqr.solve_discrete(**a, progress=3)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("which", ["solve_discrete", "discretize", "sph_step"])
def test_ctrl_c_interrupts_a_long_precomputation(rng, which):
    """SIGINT during the GIL-free C++ loop: the Python handler runs and its
    exception ends the computation early (no callback needed). In-process,
    with a private handler so that pytest itself is never interrupted."""
    _, run_cb = _sized_run(rng, which, 0.5)
    run = lambda: run_cb(None)  # noqa: E731

    class Interrupted(Exception):
        pass

    def handler(signum, frame):
        raise Interrupted()

    t0 = time.perf_counter()
    run()
    full = time.perf_counter() - t0
    old = signal.signal(signal.SIGINT, handler)
    timer = threading.Timer(0.02, os.kill, (os.getpid(), signal.SIGINT))
    try:
        t0 = time.perf_counter()
        timer.start()
        with pytest.raises(Interrupted):
            run()
            time.sleep(1.0)  # (a signal arriving after the run still lands here, and the time check fails)
        elapsed = time.perf_counter() - t0
    finally:
        timer.cancel()
        timer.join()
        signal.signal(signal.SIGINT, old)
    assert full > 0.15, full  # long enough for the check below to mean something
    assert elapsed < 0.5 * full, (elapsed, full)


@pytest.mark.parametrize("which", ["solve_discrete", "discretize", "sph_step"])
def test_gil_is_released_during_precomputation(rng, which):
    """Another Python thread keeps running while the C++ loop works: it gets
    far more than the ~1% of its idle rate it would get if the GIL were held
    (one 5 ms switch interval out of a 0.5 s computation)."""
    _, run = _sized_run(rng, which, 0.5)
    started, done = threading.Event(), threading.Event()

    def work():
        started.set()
        run(None)
        done.set()

    count, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < 0.05:  # the idle rate of this loop
        count += 1
    rate = count / (time.perf_counter() - t0)
    worker = threading.Thread(target=work)
    worker.start()
    started.wait()
    count, t0 = 0, time.perf_counter()
    while not done.is_set():
        time.perf_counter()
        count += 1
    elapsed = time.perf_counter() - t0
    worker.join()
    assert elapsed > 0.1, elapsed
    assert count > 0.05 * rate * elapsed, (count, rate * elapsed)


# Calls that can run long, each sized to take far longer than the test
# waits: the child starts it, receives SIGINT, must raise KeyboardInterrupt
# promptly and stay usable (a second, small call works).
# A child inherits an ignored SIGINT from a parent started in the background by a non-interactive shell (`cmd &`
# ignores SIGINT and SIGQUIT), and Python then installs no KeyboardInterrupt handler: the child restores it, as an
# interactive session has it.
_CHILD_SETUP = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
import numpy as np
import directable as dr
from directable import chain, fem, fluid, models, mpc, reduce, sph
"""
_LONG_CALLS = {
    "sph_step": ("dx = 0.02\n"
                 "f = sph.SPHFluid2D(sph.block((0.3, 0.0), (0.5, 0.2), dx), sph.box_walls((0, 0), (1, 1), dx),"
                 " spacing=dx, h=1.3 * dx)",
                 "f.step(steps=10**7)", "f.step(steps=1)"),
    "simulate": ("g = fluid.MACGrid2D(16, 16)\nrng = np.random.default_rng(0)\n"
                 "U = fluid.velocity_basis(g, np.stack([g.project(rng.standard_normal(g.n_faces)) for _ in range(24)]),"
                 " r=16)\n"
                 "fp = fluid.FluidParticles(fluid.ReducedFluid(g, U, 0.01), 2)\n"
                 "z0 = np.r_[0.5 * np.ones(4), 0.1 * np.ones(16)]",
                 "dr.simulate(fp, z0, 2 * 10**5, 1e-3)", "dr.simulate(fp, z0, 3, 1e-3)"),
    "mpc_solve": ("rng = np.random.default_rng(0)\n"
                  "n, s, H = 60, 30, 400\n"
                  "A = np.eye(n) + 0.02 * rng.standard_normal((n, n))\n"
                  "opt = mpc.HorizonOptimizer(mpc.LinearModel(A, rng.standard_normal((n, s))), H, 1.0, 1e-9, 1e3,"
                  " iterations=10**8, lower=-1e-3, upper=1e-3)\n"
                  "x0 = rng.standard_normal(n); ref = np.zeros((H + 1, n))",
                  "[opt.solve(x0 * (1 + k), ref, u0=np.zeros((H, s))) for k in range(10**6)]",
                  "opt.solve(x0, ref)"),
    "mpc_run": ("rng = np.random.default_rng(0)\n"
                "lin = mpc.LinearModel(0.9 * np.eye(6), np.ones((6, 2)))\n"
                "opt = mpc.HorizonOptimizer(lin, 20, 1.0, 0.1, 1.0, iterations=50)",
                "opt.run(lin, np.ones(6), np.zeros((10**6 + 21, 6)), 10**6)",
                "opt.run(lin, np.ones(6), np.zeros((24, 6)), 3)"),
    # a long chain and RK4: seconds of stepping on small arrays (a run of millions of steps would
    # spend its first 0.1 s filling the result arrays, before the loop that checks for Ctrl-C)
    "chain_track": ("pc = chain.PlanarChain(np.ones(20), np.ones(20))\nT = 2 * 10**5\nq = np.zeros((T + 1, 20))",
                    "chain.track(pc, q, None, 1e-4, 10.0, 1.0, integrator='rk4')",
                    "chain.track(pc, q[:4], None, 1e-4, 10.0, 1.0, integrator='rk4')"),
    # one prediction step of 10^10 inner steps (no step count to report: a cancellation point per inner step)
    "substeps_step": ("lin = mpc.LinearModel(0.5 * np.eye(2), np.ones((2, 1)))\nsub = mpc.Substeps(lin, 10**10)",
                      "sub.step(np.ones(2), np.zeros(1))", "mpc.Substeps(lin, 3).step(np.ones(2), np.zeros(1))"),
    "substeps_solve": ("lin = mpc.LinearModel(0.5 * np.eye(2), np.ones((2, 1)))\n"
                       "opt = mpc.HorizonOptimizer(mpc.Substeps(lin, 10**7), 3, 1.0, 0.1, 1.0, iterations=10**6)",
                       "opt.solve(np.ones(2), np.zeros((4, 2)))",
                       "mpc.Substeps(lin, 3).vjp(np.ones(2), np.zeros(1), np.ones(2))"),
    "galerkin_rollout": ("g = fluid.MACGrid2D(8, 8)\nrng = np.random.default_rng(0)\n"
                         "U = fluid.velocity_basis(g, np.stack([g.project(rng.standard_normal(g.n_faces))"
                         " for _ in range(12)]), r=8)\nred = fluid.ReducedFluid(g, U, 0.01)\n"
                         "W = np.zeros((2 * 10**6, 8))",
                         "red.rollout(np.ones(8), W, 0.01)", "red.rollout(np.ones(8), W[:3], 0.01)"),
    "fluid_run": ("g = fluid.MACGrid2D(24, 24)\nsim = fluid.FluidSim2D(g, 0.01, 0.01)\n"
                  "F = np.zeros((20000, g.n_faces))",
                  "sim.run(F)", "sim.run(F[:2])"),
    "fem_run": ("mesh = fem.box_mesh((12, 3, 3), h=0.1)\n"
                "m = fem.StVKModel(mesh, 1e5, 0.3, 1000.0, fixed=fem.bottom_vertices(mesh, axis=0))\n"
                "s = fem.Simulator(m, 0.01)\n"
                "F = 5.0 * np.sin(0.3 * np.arange(20000))[:, None] * np.ones(3 * mesh.num_vertices)",  # Newton works each step
                "s.run(F)", "s.run(F[:2])"),
    # the enrichment runs (each a full FEM run), in this process
    "fem_enrich": ("mesh = fem.box_mesh((12, 3, 3), h=0.1)\n"
                   "m = fem.StVKModel(mesh, 1e5, 0.3, 1000.0, fixed=fem.bottom_vertices(mesh, axis=0))\n"
                   "F = 5.0 * np.sin(0.3 * np.arange(20000))[:, None] * np.ones(3 * mesh.num_vertices)",
                   "fem.enrich(m, 0.01, F, runs=4)", "fem.enrich(m, 0.01, F[:4], runs=2)"),
    "sph3d_step": ("dx = 0.05\n"
                   "f = sph.SPHFluid3D(sph.block((0.3, 0.3, 0.0), (0.7, 0.7, 0.3), dx),"
                   " sph.box_walls((0, 0, 0), (1, 1, 1), dx), spacing=dx, h=1.3 * dx)",
                   "f.step(steps=10**7)", "f.step(steps=1)"),
    # the cloth's implicit rollout, ~0.6 ms a step (the symplectic one stores 20x more steps per second than
    # memory allows for a run this long; both poll the same throttle)
    "cloth_rollout": ("from directable import cloth\n"
                      "c = cloth.ClothGrid(20, 20, 0.05, 0.01, 300.0, 60.0, 6.0, 0.02, pinned=[0, 19])",
                      "c.rollout(c.positions0, np.zeros((400, 3)), 0.005, 6000, method='implicit')",
                      "c.rollout(c.positions0, np.zeros((400, 3)), 0.005, 2, method='implicit')"),
    "crowd_run": ("from directable import crowds\n"
                  "goal = np.zeros((40, 40), bool); goal[:, -1] = True\n"
                  "people = np.random.default_rng(0).uniform(1, 30, (200, 2))\n"
                  "c = crowds.Crowd(crowds.CrowdGrid(40, 40), crowds.Params.table_4_1('lanes'),"
                  " [crowds.Group(goal, people)])",
                  "c.run(10**4, dt=0.1)", "c.run(1, dt=0.1)"),
}


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("which", list(_LONG_CALLS))
def test_ctrl_c_in_a_child_process(tmp_path, which):
    """The process receives SIGINT (as from a terminal's Ctrl-C) during the
    long C++ call: KeyboardInterrupt within 0.2 s on an idle machine (the
    assertion allows 0.5 s for a loaded one), and the next call works."""
    setup, call, after = _LONG_CALLS[which]
    script = tmp_path / "child.py"
    script.write_text(_CHILD_SETUP + setup + f"""
{after}
print("ready", flush=True)
t0 = time.perf_counter()
try:
    {call}
    print("finished", time.perf_counter() - t0, flush=True)
except KeyboardInterrupt:
    print("interrupted", time.perf_counter(), flush=True)  # CLOCK_MONOTONIC: the parent's clock too
    {after}
    print("usable", flush=True)
""")
    import subprocess

    child = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready", child.stderr.read()[-2000:]
        time.sleep(0.2)  # well inside the call (each lasts > 0.7 s on an idle machine)
        assert child.poll() is None, "the call ended too early to test"
        t_signal = time.perf_counter()
        child.send_signal(signal.SIGINT)
        line = child.stdout.readline().strip()
        latency = time.perf_counter() - t_signal
        if line.startswith("interrupted ") and sys.platform.startswith("linux"):
            line, t_caught = line.split()
            latency = float(t_caught) - t_signal  # without the parent's own delay in reading the pipe
        rest = child.stdout.read()
        child.wait(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert line == "interrupted", (line, child.stderr.read()[-2000:])
    assert "usable" in rest and child.returncode == 0
    print(f"{which}: KeyboardInterrupt {latency:.3f} s after SIGINT")
    assert latency < 0.5, f"{which}: KeyboardInterrupt {latency:.3f} s after SIGINT"
