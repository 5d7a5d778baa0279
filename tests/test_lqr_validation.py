"""Bad input to the LQR family is refused once, in the C++ core, with the
argument named and the expected and received shapes: saved solutions and
discretizations, the cost-to-go, the structured exponential, the tracker's
per-run state and the simulation's start index."""
from __future__ import annotations

import numpy as np
import pytest

import directable as dr
from directable import _core, lqr, mpc, sim

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
    with pytest.raises(ValueError, match=r"^weights must be symmetric positive semidefinite, got smallest eigenvalue -1 "):
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


# ------------------------------------------------------------------ weights
# One check in the C++ core (core/weights.hpp: check_weight) for every entry
# point that takes a weight: symmetric (|M_ij - M_ji| <= 1e-10 max|M|), Q and
# Q_final positive semidefinite (smallest eigenvalue >= -1e-12 max|M|), R
# positive semidefinite in the LQR (H_i = R_i + B_i' P_{i+1} B_i is checked
# definite per step) and positive definite in the MPC.

def _lqr_entry_points(rng, n=2, s=1, T=5, dt=0.05):
    """Each LQR entry point as f(Q, R, Q_final) -> result, on one small problem."""
    A = 0.3 * rng.standard_normal((T, n, n))
    B = rng.standard_normal((n, s))
    disc = lqr.discretize(A, B, dt, 1.0, 1.0)
    return {
        "solve_discrete": lambda Q, R, Qf: lqr.solve_discrete(A, B, Q, R, Qf),
        "discretize": lambda Q, R, Qf: lqr.discretize(A, B, dt, Q, R),
        "solve_continuous": lambda Q, R, Qf: lqr.solve_continuous(A, B, dt, Q, R, Qf),
        "solve_stationary": lambda Q, R, Qf: lqr.solve_stationary(0.5 * np.eye(n), B, Q, R),
        "retune": lambda Q, R, Qf: lqr.retune(disc, Qf, R=R),
    }


@pytest.mark.parametrize("Q, smallest", [(-np.eye(2), "-1"), (np.diag([1.0, -1e-3]), "-0.001"),
                                         (np.array([-1.0, 1.0]), "-1")],
                         ids=["negative-definite", "slightly-indefinite", "negative-diagonal"])
def test_Q_not_semidefinite_is_refused_everywhere_with_the_tolerance(rng, Q, smallest):
    """The issue's case: solve_continuous(A, B, dt, -np.eye(2), R, Qf) was
    accepted; every entry point now refuses it with the same message."""
    message = (rf"^Q must be symmetric positive semidefinite, got smallest eigenvalue {smallest} "
               r"\(the tolerance is -1e-12 max\|Q\|\)$")
    for name, call in _lqr_entry_points(rng).items():
        if name == "retune":
            continue  # takes no Q (its Q_final is checked below)
        with pytest.raises(ValueError, match=message):
            call(Q, 1.0, np.eye(2))
    with pytest.raises(ValueError, match=message):
        mpc.HorizonOptimizer(mpc.LinearModel(np.eye(2), np.ones((2, 1))), horizon=3, Q=Q, R=1.0, C=1.0)


def test_negative_Q_final_is_refused_everywhere(rng):
    message = r"^Q_final must be symmetric positive semidefinite, got smallest eigenvalue -2 \(the tolerance"
    for name, call in _lqr_entry_points(rng).items():
        if name in ("discretize", "solve_stationary"):
            continue  # no terminal weight
        with pytest.raises(ValueError, match=message):
            call(1.0, 1.0, np.diag([1.0, -2.0]))


def test_negative_R_is_refused_everywhere_and_singular_R_only_in_the_mpc(rng):
    for name, call in _lqr_entry_points(rng, s=2).items():
        with pytest.raises(ValueError, match=r"^R must be symmetric positive semidefinite, got smallest eigenvalue -1 "):
            call(1.0, np.diag([1.0, -1.0]), 1.0)
    model = mpc.LinearModel(np.eye(2), np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"^R must be symmetric positive definite, got smallest eigenvalue 0 "
                                         r"\(it must exceed 1e-14 max\|R\|\)$"):
        mpc.HorizonOptimizer(model, horizon=3, Q=1.0, R=np.array([[1.0, 1.0], [1.0, 1.0]]), C=1.0)
    with pytest.raises(ValueError, match=r"^R must be symmetric positive definite, got smallest eigenvalue 0 "
                                         r"\(it must exceed 1e-14 max\|R\|\)$"):
        mpc.HorizonOptimizer(model, horizon=3, Q=1.0, R=np.array([1.0, 0.0]), C=1.0)


def test_non_symmetric_weights_are_refused_everywhere(rng):
    Q = np.array([[1.0, 0.5], [0.0, 1.0]])
    message = r"^Q must be symmetric \(\|M_ij - M_ji\| <= 1e-10 max\|M\|\), got Q\[0, 1\] = 0.5 and Q\[1, 0\] = 0$"
    for name, call in _lqr_entry_points(rng).items():
        if name != "retune":
            with pytest.raises(ValueError, match=message):
                call(Q, 1.0, np.eye(2))
    with pytest.raises(ValueError, match=message):
        mpc.HorizonOptimizer(mpc.LinearModel(np.eye(2), np.ones((2, 1))), horizon=3, Q=Q, R=1.0, C=1.0)


def test_tolerance_boundary_of_the_semidefinite_check(rng):
    """A zero eigenvalue rounded to -1e-16 max|Q| passes; -1e-9 max|Q| does not.
    Semidefinite Q (a zero weight on some states) is the common case and is accepted."""
    A, B = 0.3 * rng.standard_normal((4, 2, 2)), rng.standard_normal((2, 1))
    V = np.linalg.qr(rng.standard_normal((2, 2)))[0]
    for lam, ok in ((-1e-16, True), (0.0, True), (-1e-9, False)):
        Q = V @ np.diag([1.0, lam]) @ V.T
        Q = 0.5 * (Q + Q.T)
        if ok:
            lqr.solve_discrete(A, B, Q, 1.0, Q)
        else:
            with pytest.raises(ValueError, match=r"^Q must be symmetric positive semidefinite"):
                lqr.solve_discrete(A, B, Q, 1.0, 1.0)
            with pytest.raises(ValueError, match=r"^Q_final must be symmetric positive semidefinite"):
                lqr.solve_discrete(A, B, 1.0, 1.0, Q)
    lqr.solve_continuous(A, B, 0.05, np.diag([1.0, 0.0]), 1.0, 0.0)  # semidefinite Q, zero Q_final


def test_allow_indefinite_Q_is_a_checked_option(rng):
    A, B = 0.3 * rng.standard_normal((4, 2, 2)), rng.standard_normal((2, 1))
    with pytest.raises(TypeError, match=r"allow_indefinite_Q must be True or False, got str"):
        lqr.solve_discrete(A, B, 1.0, 1.0, 1.0, allow_indefinite_Q="yes")
    Q = np.diag([1.0, -0.01])
    a = lqr.solve_continuous(A, B, 0.05, Q, 1.0, 1.0, allow_indefinite_Q=True)
    b = lqr.retune(a.discretization, np.diag([1.0, -0.01]), allow_indefinite_Q=True)
    assert np.all(np.isfinite(a.K)) and np.all(np.isfinite(b.K))
    with pytest.raises(ValueError, match=r"^Q_final must be symmetric positive semidefinite"):
        lqr.retune(a.discretization, np.diag([1.0, -0.01]))


def test_one_dimensional_diagonal_weights_are_accepted_everywhere(rng):
    """The same forms (scalar, (k,) diagonal, matrix, per step) in every LQR
    entry point and the MPC, with identical results for a diagonal and its matrix."""
    q, r = np.array([1.0, 2.0]), np.array([0.5])
    for name, call in _lqr_entry_points(rng).items():
        a, b = call(q, r, q), call(np.diag(q), np.diag(r), np.diag(q))
        for field in ("K", "P", "Phi"):
            if hasattr(a, field):
                np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=name)
    model = mpc.LinearModel(np.eye(2), np.ones((2, 1)))
    x0, ref = np.array([1.0, -1.0]), np.zeros((4, 2))
    ua = mpc.HorizonOptimizer(model, horizon=3, Q=q, R=r, C=q).solve(x0, ref).u
    ub = mpc.HorizonOptimizer(model, horizon=3, Q=np.diag(q), R=np.diag(r), C=np.diag(q)).solve(x0, ref).u
    np.testing.assert_allclose(ua, ub, rtol=1e-12, atol=1e-14)
