"""Whole runs of the full MAC fluid in one C++ call (FluidSim2D.run), and one
const ReducedFluid shared by threads."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import directable as dr
from directable import fluid as F
from directable.experiments import fluid_forcing

NX, DT, STEPS = 16, 0.01, 30  # a 16 x 16 grid, 30 steps of 0.01 s


@pytest.fixture(scope="module")
def grid():
    return F.MACGrid2D(NX, NX)


def _winds(grid, steps, seed=4):
    f = np.zeros((steps, grid.n_faces))
    for w in fluid_forcing.random_winds(grid, 5, steps, seed=seed):
        f[w.start:w.start + w.duration] += w.field(grid)
    return f


def _start(grid, viscosity, rng):
    sim = F.FluidSim2D(grid, viscosity, DT)
    sim.particles = rng.uniform(0.1, 0.9, size=(3, 2))
    sim.density = rng.uniform(0.0, 1.0, size=grid.n_cells)
    return sim


@pytest.mark.parametrize("viscosity", [0.0, 0.01])
def test_run_equals_the_step_loop(grid, viscosity, rng):
    forces = _winds(grid, STEPS)
    state = rng.bit_generator.state
    loop = _start(grid, viscosity, rng)
    U, X, D = [loop.velocity], [loop.particles], [loop.density]
    for f in forces:
        loop.step(f)
        U.append(loop.velocity), X.append(loop.particles), D.append(loop.density)
    rng.bit_generator.state = state
    sim = _start(grid, viscosity, rng)
    u, x, d = sim.run(forces, record_density=True)
    np.testing.assert_array_equal(u, np.array(U))
    np.testing.assert_array_equal(x, np.array(X))
    np.testing.assert_array_equal(d, np.array(D))
    assert u.shape == (STEPS + 1, grid.n_faces) and x.shape == (STEPS + 1, 3, 2)
    np.testing.assert_array_equal(sim.velocity, u[-1])  # the simulator ends in the last state
    _, _, none = F.FluidSim2D(grid, viscosity, DT).run(forces[:2])
    assert none is None


def test_full_run_matches_a_numpy_step_loop(grid):
    winds = fluid_forcing.random_winds(grid, 4, STEPS, seed=7)
    run = F.full_run(grid, STEPS, DT, winds, particles=[[0.3, 0.5]], density=np.ones(grid.n_cells))
    sim = F.FluidSim2D(grid, 0.0, DT)
    sim.particles = np.array([[0.3, 0.5]])
    sim.density = np.ones(grid.n_cells)
    fields = [w.field(grid) for w in winds]
    for i in range(STEPS):
        f = np.zeros(grid.n_faces)
        for w, fw in zip(winds, fields):
            if w.start <= i < w.start + w.duration:
                f += fw
        sim.step(f)
    np.testing.assert_array_equal(run.velocities[-1], sim.velocity)
    np.testing.assert_array_equal(run.particles[-1], sim.particles)
    np.testing.assert_array_equal(run.density[-1], sim.density)


def test_run_reports_progress_and_stops_on_callback_error(grid):
    forces = _winds(grid, STEPS)
    calls = []
    F.FluidSim2D(grid, 0.0, DT).run(forces, progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1] == (STEPS, STEPS)

    def stop(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        F.FluidSim2D(grid, 0.0, DT).run(np.zeros((2000, grid.n_faces)), progress=stop)


def test_run_bad_input(grid):
    sim = F.FluidSim2D(grid, 0.0, DT)
    with pytest.raises(ValueError, match=rf"forces.*\(30, {grid.n_faces}\).*\(30, 7\)"):
        sim.run(np.zeros((30, 7)))
    with pytest.raises(ValueError, match="forces"):
        sim.run(np.zeros(grid.n_faces))
    bad = np.zeros((3, grid.n_faces))
    bad[1, 5] = np.nan
    with pytest.raises(ValueError, match="forces"):
        sim.run(bad)
    with pytest.raises(ValueError, match="step 0"):
        sim.run(np.full((3, grid.n_faces), np.finfo(float).max))
    with pytest.raises(ValueError, match="particles"):
        sim.particles = np.zeros((2, 3))
    with pytest.raises(ValueError, match="velocity"):
        sim.velocity = np.full(grid.n_faces, np.inf)
    with pytest.raises(ValueError, match="magnitude"):
        grid.wind([0.5, 0.5], [1, 0], np.inf, 0.1)
    with pytest.raises(ValueError, match="center"):
        grid.wind([np.nan, 0.5], [1, 0], 1.0, 0.1)


def test_interpolation_in_the_core_matches_numpy(grid, rng):
    u = grid.project(rng.standard_normal(grid.n_faces))
    pts = rng.uniform(-0.2, 1.2, size=(20, 2))  # some outside: clamped
    clamped = np.clip(pts, 0.0, 1.0)
    h = grid.h
    ux = u[:grid.n_xfaces].reshape(NX, NX + 1)
    uy = u[grid.n_xfaces:].reshape(NX + 1, NX)

    def bilinear(a, fx, fy):
        i0 = np.clip(np.floor(fx).astype(int), 0, a.shape[1] - 2)
        j0 = np.clip(np.floor(fy).astype(int), 0, a.shape[0] - 2)
        tx, ty = fx - i0, fy - j0
        return ((1 - tx) * (1 - ty) * a[j0, i0] + tx * (1 - ty) * a[j0, i0 + 1] + (1 - tx) * ty * a[j0 + 1, i0]
                + tx * ty * a[j0 + 1, i0 + 1])

    vx = bilinear(ux, clamped[:, 0] / h, np.clip(clamped[:, 1] / h - 0.5, 0, NX - 1))
    vy = bilinear(uy, np.clip(clamped[:, 0] / h - 0.5, 0, NX - 1), clamped[:, 1] / h)
    np.testing.assert_allclose(grid.velocity_at(u, pts), np.column_stack([vx, vy]), rtol=1e-12, atol=1e-12)
    mask = grid.wall_mask()
    assert mask.dtype == bool and mask.sum() == 2 * NX + 2 * NX


@pytest.fixture(scope="module")
def reduced(grid):
    forces = _winds(grid, STEPS, seed=2)
    u, _, _ = F.FluidSim2D(grid, 0.0, DT).run(forces)
    basis = F.velocity_basis(grid, u[1:], 8)
    return dr.ReducedFluid(grid, basis, 0.02)


def test_step_with_own_data_equals_step_with_fresh_data(reduced, rng):
    z = rng.standard_normal(reduced.r)
    w = rng.standard_normal(reduced.r)
    data = reduced.create_data()
    a = reduced.step(z, w, DT, data)
    np.testing.assert_array_equal(a, reduced.step(z, w, DT))
    np.testing.assert_array_equal(reduced.step(a, w, DT, data), reduced.step(a, w, DT))
    np.testing.assert_array_equal(reduced.step(a, w, 2 * DT, data), reduced.step(a, w, 2 * DT))  # another dt
    assert reduced.divergence_error < 1e-8


def test_one_reduced_fluid_shared_by_four_threads(reduced, rng):
    starts = rng.standard_normal((4, reduced.r))
    W = rng.standard_normal((40, reduced.r))

    def steps(z0, own_data=True):
        z, data, out = z0, reduced.create_data() if own_data else None, []
        for w in W:
            z = reduced.step(z, w, DT, data)  # data None: the calling thread's default
            out.append(z)
        return np.array(out)

    single = [steps(z0) for z0 in starts]
    rollouts = [reduced.rollout(z0, W, DT) for z0 in starts]
    results, defaults, rolled = [None] * 4, [None] * 4, [None] * 4

    def work(k):
        for _ in range(3):
            results[k] = steps(starts[k])
            defaults[k] = steps(starts[k], own_data=False)
            rolled[k] = reduced.rollout(starts[k], W, DT)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        np.testing.assert_array_equal(results[k], single[k])
        np.testing.assert_array_equal(defaults[k], single[k])
        np.testing.assert_array_equal(rolled[k], rollouts[k])


def test_projection_of_many_fields_in_one_call(grid, rng):
    S = rng.standard_normal((6, grid.n_faces))
    P = grid.project(S)
    np.testing.assert_array_equal(P, np.array([grid.project(s) for s in S]))
    np.testing.assert_allclose(grid.project(P), P, rtol=0, atol=1e-12)  # a projection
    with pytest.raises(ValueError, match=rf"u must have shape \(k, {grid.n_faces}\), got \(2, 5\)"):
        grid.project(np.zeros((2, 5)))
    S[3, 7] = np.nan
    with pytest.raises(ValueError, match="u"):
        grid.project(S)


def test_particle_winds_equal_the_step_loop(grid, rng):
    starts = rng.uniform(0.2, 0.8, size=(3, 2))
    directions = rng.standard_normal((STEPS, 2))
    magnitudes = rng.uniform(10.0, 30.0, size=3)
    loop = F.FluidSim2D(grid, 0.0, DT)
    loop.particles = starts
    U, X = [loop.velocity], [loop.particles]
    for d in directions:
        f = np.zeros(grid.n_faces)
        for k, p in enumerate(loop.particles):
            f += grid.wind(p, d, magnitudes[k], 0.08)
        loop.step(f)
        U.append(loop.velocity), X.append(loop.particles)
    sim = F.FluidSim2D(grid, 0.0, DT)
    sim.particles = starts
    u, x, density = sim.run_particle_winds(directions, magnitudes, 0.08)
    np.testing.assert_array_equal(u, np.array(U))
    np.testing.assert_array_equal(x, np.array(X))
    assert density is None
    with pytest.raises(ValueError, match=r"magnitudes.*\(3,\).*\(2,\)"):
        sim.run_particle_winds(directions, magnitudes[:2], 0.08)
    with pytest.raises(ValueError, match=r"directions.*\(30, 2\).*\(30, 3\)"):
        sim.run_particle_winds(np.zeros((STEPS, 3)), magnitudes, 0.08)
    with pytest.raises(ValueError, match="width"):
        sim.run_particle_winds(directions, magnitudes, 0.0)
