"""Bad input to the LQR family is refused once, in the C++ core, with the
argument named and the expected and received shapes: saved solutions and
discretizations, the cost-to-go, the structured exponential, the tracker's
per-run state and the simulation's start index."""
from __future__ import annotations

import numpy as np
import pytest

import directable as dr
from directable import _core, lqr, sim

T, n, s = 4, 3, 2


def _solution(rng):
    A = 0.4 * rng.standard_normal((T, n, n))
    B = rng.standard_normal((T, n, s))
    return lqr.solve_discrete(A, B, 1.0, 1.0, 1.0)


def test_saved_solution_is_checked(rng):
    sol = _solution(rng)
    K, P = np.array(sol.K), np.array(sol.P)
    again = lqr.LQRSolution(K, P)
    assert np.array_equal(again.K, K) and np.array_equal(again.P, P)
    with pytest.raises(ValueError, match=r"P must have shape \(5, 3, 3\), got \(4, 3, 3\)"):
        lqr.LQRSolution(K, P[:T])
    with pytest.raises(ValueError, match=r"P must have shape \(5, 3, 3\), got \(3, 3\)"):
        lqr.LQRSolution(K, P[0])
    with pytest.raises(ValueError, match=r"K must have shape \(T, s, n\), got \(2, 3\)"):
        lqr.LQRSolution(K[0], P)
    bad = K.copy()
    bad[1, 0, 2] = np.nan
    with pytest.raises(ValueError, match=r"\bK\b"):
        lqr.LQRSolution(bad, P)
    with pytest.raises(ValueError, match=r"\bK\b"):
        lqr.LQRSolution(np.ones(3), P)


def test_cost_to_go_is_checked(rng):
    sol = _solution(rng)
    x = rng.standard_normal(n)
    assert sol.cost_to_go(x, T) == pytest.approx(x @ sol.P[T] @ x, rel=1e-14)
    with pytest.raises(ValueError, match=r"x must have shape \(3,\), got \(4,\)"):
        sol.cost_to_go(np.ones(n + 1))
    for step in (-1, T + 1):
        with pytest.raises(ValueError, match=rf"step must be in \[0, {T}\], got {step}"):
            sol.cost_to_go(x, step)


def test_saved_discretization_is_checked(rng):
    A = 0.4 * rng.standard_normal((T, n, n))
    d = lqr.discretize(A, rng.standard_normal((n, s)), 0.1, 1.0, 1.0)
    parts = dict(Phi=np.array(d.Phi), Gamma=np.array(d.Gamma), Q=np.array(d.Q), N=np.array(d.N), R=np.array(d.R),
                 Rc=np.array(d.Rc))
    again = lqr.Discretization(**parts, dt=d.dt)
    for name in parts:
        assert np.array_equal(getattr(again, name), parts[name]), name
    assert parts["Rc"].shape == (1, s, s)  # a constant continuous weight is kept once
    cases = {
        "Gamma": (parts["Gamma"][:T - 1], r"Gamma must have shape \(4, 3, 2\), got \(3, 3, 2\)"),
        "Q": (parts["Q"][0], r"Q must have shape \(4, 3, 3\), got \(3, 3\)"),
        "N": (parts["N"][:, :, :1], r"N must have shape \(4, 3, 2\), got \(4, 3, 1\)"),
        "R": (np.full_like(parts["R"], np.inf), r"\bR\b"),
        "Rc": (np.ones((2, s, s)), r"Rc must have shape \(4, 2, 2\), got \(2, 2, 2\)"),
    }
    for name, (value, message) in cases.items():
        with pytest.raises(ValueError, match=message):
            lqr.Discretization(**dict(parts, **{name: value}), dt=d.dt)
    for dt in (0.0, -0.1, np.nan):
        with pytest.raises(ValueError, match=r"\bdt\b"):
            lqr.Discretization(**parts, dt=dt)


def test_one_shape_check_for_the_sweep_and_the_discretization(rng):
    """solve_discrete, discretize and solve_continuous share the core's check:
    the same bad argument gives the same message."""
    A = 0.4 * rng.standard_normal((T, n, n))
    B = rng.standard_normal((T, n + 1, s))
    messages = set()
    for call in (lambda: lqr.solve_discrete(A, B, 1.0, 1.0, 1.0),
                 lambda: lqr.discretize(A, B, 0.1, 1.0, 1.0),
                 lambda: lqr.solve_continuous(A, B, 0.1, 1.0, 1.0, 1.0)):
        with pytest.raises(ValueError, match=r"B must have shape \(3, 2\) or \(4, 3, 2\), got \(4, 4, 2\)") as e:
            call()
        messages.add(str(e.value))
    assert len(messages) == 1
    # the horizon comes from whichever input varies in time, for each entry point
    B_steps = rng.standard_normal((T, n, s))
    assert lqr.discretize(A[0], B_steps, 0.1, 1.0, 1.0).horizon == T
    assert lqr.solve_discrete(A[0], B_steps, 1.0, 1.0, 1.0).horizon == T


def test_expm_bordered_shapes_are_checked_in_the_core():
    with pytest.raises(ValueError, match=r"H must have shape \(2, 2\), got \(2, 3\)"):
        _core.expm_bordered(np.ones((2, 3)), np.ones((2, 1)))
    with pytest.raises(ValueError, match=r"C must have shape \(2, 1\), got \(3, 1\)"):
        _core.expm_bordered(np.eye(2), np.ones((3, 1)))


def test_tracker_nearest_index_weights_and_state_are_checked(rng):
    z_ref = rng.standard_normal((T + 1, n))
    tr = lqr.tracker(rng.standard_normal((T, s, n)), z_ref)
    assert tr.nearest_index(z_ref[2], weights=np.ones(n)) == 2
    with pytest.raises(ValueError, match=r"weights must be >= 0"):
        tr.nearest_index(z_ref[2], weights=np.array([1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match=r"\bweights\b"):
        tr.nearest_index(z_ref[2], weights=np.array([1.0, np.nan, 1.0]))
    with pytest.raises(ValueError, match=r"weights must have shape \(3,\), got \(2,\)"):
        tr.nearest_index(z_ref[2], weights=np.ones(2))
    with pytest.raises(ValueError, match=r"\bz\b"):
        tr.nearest_index(np.array([np.nan, 0.0, 0.0]))
    with pytest.raises(ValueError, match=r"z must have shape \(3,\), got \(4,\)"):
        tr.jump_to_nearest(np.zeros(n + 1))
    with pytest.raises(ValueError, match=r"w_min must have shape \(2,\), got \(3,\)"):
        lqr.tracker(rng.standard_normal((T, s, n)), z_ref, w_min=np.zeros(3))
    assert np.array_equal(lqr.tracker(np.ones((s, n)), z_ref, w_min=-1.5).w_min, [-1.5, -1.5])


def test_simulate_start_index_is_checked_and_the_stepper_keeps_its_own_index(rng, make_chain):
    chain = make_chain(2)
    z_ref = np.zeros((T + 1, 4))
    tr = lqr.tracker(np.zeros((T, 2, 4)), z_ref)
    for bad in (-1, T + 1):
        with pytest.raises(ValueError, match=rf"start_index must be in \[0, {T}\], got {bad}"):
            sim.simulate(chain, np.zeros(4), 3, 0.01, controller=tr, start_index=bad)
    assert tr.index == 0  # a refused run leaves the tracker where it was
    tr.index = 1
    stepper = dr.Simulation(chain, np.zeros(4), 0.01, controller=tr)
    assert stepper.index == 1  # starts at the tracker's index
    stepper.step()
    stepper.step()
    assert stepper.index == 3
    assert tr.index == 1  # the stepper moved its own index, not the tracker's
    assert dr.Simulation(chain, np.zeros(4), 0.01).index == 0
