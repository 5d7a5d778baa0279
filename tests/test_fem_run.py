"""Whole Newmark runs of the full StVK FEM in one C++ call (u, v, a), against
the step-by-step loop; progress, cancel and failures named by their step."""
from __future__ import annotations

import numpy as np
import pytest

from directable import fem


@pytest.fixture(scope="module")
def model():
    mesh = fem.cantilever(1.0, 0.25, 0.25, n=(4, 1, 1))
    fixed = fem.vertices_where(mesh, lambda X: X[:, 0] < 1e-9)
    return fem.StVKModel(mesh, young=1e4, poisson=0.3, density=100.0, fixed=fixed, alpha=0.2, beta=0.01)


def _forces(model, T):
    X = np.asarray(model.mesh.vertices)
    tip = np.flatnonzero(X[:, 0] > 1 - 1e-9)
    f = np.zeros((T, model.dofs))
    f[:, 3 * tip + 2] = -np.sin(np.linspace(0, np.pi, T))[:, None]
    f[:, 3 * tip + 1] = 0.3 * np.cos(np.linspace(0, 2 * np.pi, T))[:, None]
    return f


def _step_loop(model, dt, forces, u0, v0, a0):
    sim = fem.Simulator(model, dt)
    sim.set_state(u0, v0, a0)
    u, v, a = [sim.u], [sim.v], [np.full(model.dofs, np.nan) if a0 is None else sim.a]
    for f in forces:
        sim.step(f)
        u.append(sim.u), v.append(sim.v), a.append(sim.a)
    return np.array(u), np.array(v), np.array(a)


@pytest.mark.parametrize("consistent_start", [True, False])
def test_run_states_equal_the_step_loop(model, consistent_start, rng):
    T, dt = 30, 0.01
    forces = _forces(model, T)
    u0 = np.where(np.isin(np.arange(model.dofs), model.fixed_dofs), 0.0, 1e-3 * rng.standard_normal(model.dofs))
    v0 = np.where(np.isin(np.arange(model.dofs), model.fixed_dofs), 0.0, 1e-2 * rng.standard_normal(model.dofs))
    a0 = None if consistent_start else np.where(np.isin(np.arange(model.dofs), model.fixed_dofs), 0.0,
                                                rng.standard_normal(model.dofs))
    ref = _step_loop(model, dt, forces, u0, v0, a0)
    sim = fem.Simulator(model, dt)
    sim.set_state(u0, v0, a0)
    got = sim.run_states(forces)
    for x, y in zip(got, ref):
        assert x.shape == (T + 1, model.dofs)
        np.testing.assert_array_equal(x, y)
    assert np.isnan(got[2][0]).all() == consistent_start
    np.testing.assert_array_equal(sim.u, got[0][-1])  # the simulator ends in the last state
    # centerline is that run from the given state
    u, v, a = fem.centerline(model, dt, forces, u0, v0, a0, return_acceleration=True)
    for x, y in zip((u, v, a), ref):
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(fem.Simulator(model, dt).run(forces), fem.Simulator(model, dt).run_states(forces)[0])


def test_run_reports_progress_and_stops_on_callback_error(model):
    forces = _forces(model, 20)
    calls = []
    fem.Simulator(model, 0.01).run_states(forces, progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1] == (20, 20)

    def stop(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fem.Simulator(model, 0.01).run_states(np.zeros((20000, model.dofs)), progress=stop)


def test_run_failures_name_their_step(model):
    sim = fem.Simulator(model, 0.01, max_iterations=2, tolerance=1e-14)
    f = np.zeros((3, model.dofs))
    f[1:, 3 * np.flatnonzero(np.asarray(model.mesh.vertices)[:, 0] > 1 - 1e-9) + 2] = 5e4  # a huge load from step 1
    with pytest.raises(RuntimeError, match="step 1: .*converge"):
        sim.run_states(f)
    with pytest.raises(ValueError, match=rf"forces.*\(T, {model.dofs}\)"):
        fem.Simulator(model, 0.01).run_states(np.zeros((3, 5)))
    bad = np.zeros((3, model.dofs))
    bad[2, 4] = np.inf
    with pytest.raises(ValueError, match="forces"):
        fem.Simulator(model, 0.01).run_states(bad)
