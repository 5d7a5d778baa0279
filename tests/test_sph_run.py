"""Multi-step runs of the SPH simulator (``step(force, steps, progress)``):
one C++ call equals the same steps taken one by one, reports progress,
names the step that diverged, and runs two fluids from two Python threads
at once. Stopping (callback exception, Ctrl-C) and the released GIL are
tested with the other long runs in test_interrupt.py."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from directable import sph

DX = 0.02
H = 1.3 * DX


def _fluid(dim, side=0.2, **kw):
    lo, hi = (0.1,) + (0.0,) * (dim - 1), (0.1 + side,) + (side,) * (dim - 1)
    cls = sph.SPHFluid2D if dim == 2 else sph.SPHFluid3D
    dx = DX if dim == 2 else 2 * DX
    args = dict(spacing=dx, h=1.3 * dx)
    args.update(kw)
    return cls(sph.block(lo, hi, dx), sph.box_walls((0.0,) * dim, (1.0,) * dim, dx), **args)


def _state(fluid):
    return fluid.positions, fluid.velocities, fluid.densities, fluid.pressures


@pytest.mark.parametrize("dim", [2, 3])
def test_steps_in_one_call_equal_single_steps_bit_for_bit(rng, dim):
    a, b = _fluid(dim, 0.1), _fluid(dim, 0.1)
    force = rng.normal(size=(a.size, dim)) * a.mass
    a.step(force=force, steps=25)
    for _ in range(25):
        b.step(force=force)
    for x, y in zip(_state(a), _state(b)):
        np.testing.assert_array_equal(x, y)
    a.step(steps=7)
    for _ in range(7):
        b.step()
    for x, y in zip(_state(a), _state(b)):
        np.testing.assert_array_equal(x, y)


def test_held_force_matches_a_numpy_reference_for_one_particle():
    """A lone particle far from walls and neighbours: no pair forces, so one
    held force gives symplectic Euler under gravity + F/m, checked in NumPy."""
    fluid = sph.SPHFluid2D(np.array([[0.5, 0.9]]), np.zeros((0, 2)), spacing=DX, h=H, dt=1e-3)
    m, dt = fluid.mass, 1e-3
    F = np.array([[0.3 * m, 2.0 * m]])
    fluid.step(force=F, steps=40)
    x, v = np.array([0.5, 0.9]), np.zeros(2)
    for _ in range(40):
        v = v + dt * (np.array([0.0, -9.81]) + F[0] / m)
        x = x + dt * v
    np.testing.assert_allclose(fluid.velocities[0], v, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fluid.positions[0], x, rtol=1e-12, atol=1e-14)


def test_progress_reports_done_and_total_and_ends_with_the_total():
    fluid = _fluid(2, 0.3)
    calls = []
    fluid.step(steps=60, progress=lambda done, total: calls.append((done, total)))
    assert calls[-1] == (60, 60)
    assert all(total == 60 and 1 <= done <= 60 for done, total in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_diverging_step_is_named(rng):
    fluid = _fluid(2, 0.1)
    with pytest.raises(ValueError, match=r"SPH step [1-5] diverged"):
        fluid.step(force=np.full((fluid.size, 2), 1e9), steps=5)


@pytest.mark.parametrize("dim", [2, 3])
def test_bad_run_arguments_name_the_argument(dim):
    fluid = _fluid(dim, 0.1)
    before = fluid.positions
    with pytest.raises(ValueError, match="steps must be >= 1, got 0"):
        fluid.step(steps=0)
    with pytest.raises(ValueError, match="steps must be >= 1, got -3"):
        fluid.step(force=np.zeros((fluid.size, dim)), steps=-3)
    f = np.zeros((fluid.size, dim))
    f[-1, 0] = np.nan
    with pytest.raises(ValueError, match="force must be finite"):
        fluid.step(force=f, steps=3)
    np.testing.assert_array_equal(fluid.positions, before)  # nothing was stepped


def test_two_fluids_from_two_threads_give_the_sequential_results(rng):
    """Each fluid is its own per-run state; the GIL is released, so two runs
    overlap and must not disturb each other."""
    force = rng.normal(size=(_fluid(2, 0.2).size, 2)) * _fluid(2, 0.2).mass
    ref = [_fluid(2, 0.2), _fluid(2, 0.2)]
    ref[0].step(force=force, steps=40)
    ref[1].step(steps=40)
    runs = [_fluid(2, 0.2), _fluid(2, 0.2)]
    workers = [threading.Thread(target=runs[0].step, kwargs=dict(force=force, steps=40)),
               threading.Thread(target=runs[1].step, kwargs=dict(steps=40))]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    for r, s in zip(ref, runs):
        for x, y in zip(_state(r), _state(s)):
            np.testing.assert_array_equal(x, y)
