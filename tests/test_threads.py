"""Objects that keep state, used from 4 Python threads at once, many rounds:
the calls that mutate one object wait for each other (a lock per object,
taken with the GIL released), so the result equals the same calls made
serially, bit for bit, and nothing is freed twice.

Per class: SPHFluid2D/3D (step, set_state, set_sphere, remove_sphere,
prediction_model, SPHPrediction.refreeze), FluidSim2D (step, run,
run_particle_winds, the setters) and a HorizonWorkspace (solve,
cost_and_gradient) or a plant (HorizonOptimizer.run) lock; Simulation and
Tracker per-step calls hold the GIL (atomic); const models, solutions and
schedules are shared freely. The getters that copy such an object's state
take the same lock: a read while another thread steps sees whole steps."""
from __future__ import annotations


import numpy as np
import pytest

import directable as dr
from directable import fluid, mpc, sph
from reference.threads import in_threads

THREADS = 4
ROUNDS = 100


def _fluid():
    dx = 0.05
    return sph.SPHFluid2D(sph.block((0.2, 0.0), (0.5, 0.3), dx), sph.box_walls((0, 0), (1, 1), dx),
                          spacing=dx, h=1.3 * dx)


def test_one_sph_fluid_stepped_from_four_threads():
    serial = _fluid()
    fluids = [_fluid() for _ in range(ROUNDS // 10)]
    calls = 3
    serial.step(steps=THREADS * calls)
    for f in fluids:
        in_threads(lambda k: [f.step(steps=1) for _ in range(calls)])
        np.testing.assert_array_equal(f.positions, serial.positions)
        np.testing.assert_array_equal(f.velocities, serial.velocities)


def test_sph_state_set_while_another_thread_steps():
    f = _fluid()
    p0, v0 = f.positions, f.velocities

    def work(k):
        for _ in range(ROUNDS // 4):
            if k % 2:
                f.step(steps=1)
            else:
                f.set_state(p0, v0)
                f.prediction_model()

    in_threads(work)
    assert np.all(np.isfinite(f.positions))


def test_one_full_fluid_stepped_from_four_threads():
    grid = fluid.MACGrid2D(8, 8)
    force = np.sin(np.arange(grid.n_faces))
    serial = fluid.FluidSim2D(grid, 0.01, 0.01)
    for _ in range(THREADS * ROUNDS // 4):
        serial.step(force)
    sim = fluid.FluidSim2D(grid, 0.01, 0.01)
    in_threads(lambda k: [sim.step(force) for _ in range(ROUNDS // 4)])
    np.testing.assert_array_equal(sim.velocity, serial.velocity)


def test_one_simulation_stepped_from_four_threads():
    chain = dr.models.spring_chain(masses=3)
    z0 = 0.1 * np.arange(6.0)
    serial = dr.Simulation(chain, z0, 0.01)
    for _ in range(THREADS * ROUNDS):
        serial.step()
    sim = dr.Simulation(chain, z0, 0.01)
    in_threads(lambda k: [sim.step() for _ in range(ROUNDS)])
    np.testing.assert_array_equal(sim.state, serial.state)
    assert sim.steps == THREADS * ROUNDS


@pytest.mark.parametrize("shared", ["default", "one_workspace"])
def test_one_optimizer_solved_from_four_threads_many_rounds(shared):
    rng = np.random.default_rng(5)
    n, s, H = 4, 2, 4
    A = np.eye(n) + 0.05 * rng.standard_normal((n, n))
    opt = mpc.HorizonOptimizer(mpc.LinearModel(A, rng.standard_normal((n, s))), H, 1.0, 0.1, 10.0, iterations=5)
    x0 = rng.standard_normal((THREADS, n))
    ref = 0.1 * rng.standard_normal((H + 1, n))
    u0 = np.zeros((H, s))
    expected = [opt.solve(x0[k], ref, u0=u0) for k in range(THREADS)]
    ws = opt.create_workspace() if shared == "one_workspace" else None
    results = [[None] * ROUNDS for _ in range(THREADS)]

    def work(k):
        for r in range(ROUNDS):
            results[k][r] = opt.solve(x0[k], ref, u0=u0, workspace=ws)

    in_threads(work)
    for k in range(THREADS):
        for got in results[k]:
            np.testing.assert_array_equal(got.u, expected[k].u)
            assert got.cost == expected[k].cost


def test_tracker_per_step_calls_beside_simulations_many_rounds():
    chain = dr.models.spring_chain(masses=2)
    T = 20
    rng = np.random.default_rng(2)
    K = -rng.uniform(0.0, 1.0, (T, 2, 4))
    z_ref = 0.1 * rng.standard_normal((T + 1, 4))
    tracker = dr.lqr.tracker(K, z_ref, loop=True)
    expected = dr.simulate(chain, np.zeros(4), 200, 0.01, controller=tracker, start_index=0).states.copy()
    z = z_ref[3] + 0.01
    tracker.index = 3
    w3 = tracker.control(z)

    def work(k):
        for _ in range(ROUNDS // 4):
            if k == 0:
                tracker.index = 3
                assert np.array_equal(tracker.control(z), w3)
            else:
                got = dr.simulate(chain, np.zeros(4), 200, 0.01, controller=tracker, start_index=0)
                assert np.array_equal(got.states, expected)

    in_threads(work)


def test_one_3d_fluid_stepped_from_four_threads():
    grid = fluid.MACGrid3D(6, 5, 4, h=0.2)
    force = 0.1 * np.sin(np.arange(grid.n_faces))
    rounds = 6
    serial = fluid.FluidSim3D(grid, viscosity=0.01, dt=0.02)
    for _ in range(THREADS * rounds):
        serial.step(force)
    sim = fluid.FluidSim3D(grid, viscosity=0.01, dt=0.02)
    u0 = sim.velocity

    def work(k):
        # (no setter here: reading then writing back the velocity is two calls,
        # and other threads' steps between them are rightly lost)
        for _ in range(rounds):
            sim.step(force)

    in_threads(work)
    np.testing.assert_array_equal(sim.velocity, serial.velocity)
    assert not np.array_equal(u0, sim.velocity)


def test_one_fem_simulator_stepped_from_four_threads():
    from directable import fem

    mesh = fem.box_mesh((3, 1, 1), h=0.1)
    model = fem.StVKModel(mesh, 1e5, 0.3, 1000.0, fixed=fem.bottom_vertices(mesh, axis=0))
    f = 0.5 * np.ones(3 * mesh.num_vertices)
    rounds = ROUNDS // 10
    serial = fem.Simulator(model, 0.01)
    for _ in range(THREADS * rounds):
        serial.step(f)
    sim = fem.Simulator(model, 0.01)
    in_threads(lambda k: [sim.step(f) for _ in range(rounds)])
    np.testing.assert_array_equal(sim.u, serial.u)
    np.testing.assert_array_equal(sim.v, serial.v)


def test_one_crowd_stepped_from_four_threads():
    from directable import crowds

    def make():
        goal = np.zeros((8, 8), bool)
        goal[:, -1] = True
        pos = np.array([[1.5, 1.5], [2.5, 4.5], [1.2, 6.1], [3.3, 2.2]])
        return crowds.Crowd(crowds.CrowdGrid(8, 8), crowds.Params.table_4_1("lanes"), [crowds.Group(goal, pos)])

    rounds = ROUNDS // 10
    serial = make()
    for _ in range(THREADS * rounds):
        serial.step()
    crowd = make()
    in_threads(lambda k: [crowd.step() for _ in range(rounds)])
    np.testing.assert_array_equal(crowd.positions, serial.positions)
    np.testing.assert_array_equal(crowd.velocities, serial.velocities)


def assert_reads_see_whole_steps(step, read, steps):
    """One thread steps an object while another reads its state as fast as it
    can: every read must equal a state some step left (before or after a
    step), never a mix of two (a getter that copied without the object's
    lock would catch a step half done)."""
    import threading

    states = [read()]
    reads = []
    done = threading.Event()

    def reader():
        while not done.is_set():
            reads.append(read())

    t = threading.Thread(target=reader)
    t.start()
    try:
        for _ in range(steps):
            step()
            states.append(read())  # this thread is the only writer: the state the step left
    finally:
        done.set()
        t.join()
    seen = {s.tobytes() for s in states}
    assert len(seen) > 1, "the steps changed nothing: the test would prove nothing"
    assert reads, "the reader never ran"
    torn = sum(r.tobytes() not in seen for r in reads)
    assert torn == 0, f"{torn} of {len(reads)} reads mixed two steps"


def test_full_fluid_reads_during_steps():
    grid = fluid.MACGrid2D(16, 16)
    force = np.sin(np.arange(grid.n_faces))
    sim = fluid.FluidSim2D(grid, 0.01, 0.01)
    assert_reads_see_whole_steps(lambda: sim.step(force), lambda: sim.velocity, 40)


def test_3d_fluid_reads_during_steps():
    grid = fluid.MACGrid3D(6, 5, 4, h=0.2)
    force = 0.1 * np.sin(np.arange(grid.n_faces))
    sim = fluid.FluidSim3D(grid, viscosity=0.01, dt=0.02)
    assert_reads_see_whole_steps(lambda: sim.step(force), lambda: sim.velocity, 10)


def test_sph_reads_during_steps():
    f = _fluid()
    assert_reads_see_whole_steps(lambda: f.step(steps=2), lambda: f.positions, 10)


def test_fem_reads_during_steps():
    from directable import fem

    mesh = fem.box_mesh((3, 1, 1), h=0.1)
    sim = fem.Simulator(fem.StVKModel(mesh, 1e5, 0.3, 1000.0, fixed=fem.bottom_vertices(mesh, axis=0)), 0.01)
    f = 0.5 * np.ones(3 * mesh.num_vertices)
    assert_reads_see_whole_steps(lambda: sim.step(f), lambda: sim.u, 10)


def test_crowd_reads_during_steps():
    from directable import crowds

    goal = np.zeros((12, 12), bool)
    goal[:, -1] = True
    pos = np.array([[1.5, 1.5], [2.5, 4.5], [1.2, 6.1], [3.3, 2.2], [5.5, 8.5]])
    crowd = crowds.Crowd(crowds.CrowdGrid(12, 12), crowds.Params.table_4_1("lanes"), [crowds.Group(goal, pos)])
    assert_reads_see_whole_steps(lambda: crowd.step(0.2), lambda: crowd.positions, 10)
