"""Messages that blame the right argument (LQR, tracker, simulate), and the
weight forms the LQR takes."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from directable import lqr, sim
from reference.lqr import random_spd


def _problem(rng, T=10, n=8, s=4):
    return rng.standard_normal((T, n, n)) * 0.3, rng.standard_normal((T, n, s)), np.eye(n), np.eye(s)


def test_A_with_the_wrong_n_is_blamed_not_B(rng):
    A, B, Q, R = _problem(rng)
    with pytest.raises(ValueError, match=r"^A must have shape \(10, 8, 8\) or \(8, 8\) \(n = 8 from B and Q\), "
                                         r"got \(10, 7, 7\)"):
        lqr.solve_discrete(A[:, :7, :7], B, Q, R, np.eye(8))
    with pytest.raises(ValueError, match=r"^A must have shape .*\(n = 8 from B and Q\), got \(7, 7\)"):
        lqr.solve_discrete(A[0, :7, :7], B, Q, R, np.eye(8))


def test_A_with_time_last_says_time_first(rng):
    A, B, Q, R = _problem(rng, T=50)
    with pytest.raises(ValueError, match=r"^A must have shape \(T, n, n\) or \(n, n\): square \(n, n\) blocks, time "
                                         r"first \(n = 8 from B and Q\), got \(8, 8, 50\) \(time last\? "
                                         r"np.moveaxis\(A, -1, 0\)"):
        lqr.solve_discrete(np.moveaxis(A, 0, -1), B, Q, R, np.eye(8))
    with pytest.raises(ValueError, match=r"^A must have shape \(T, n, n\)"):
        lqr.discretize(np.moveaxis(A, 0, -1), B, 0.01, Q, R)


def test_z_ref_one_row_short_is_blamed_not_K(rng):
    T, n, s = 50, 4, 2
    K = rng.standard_normal((T, s, n))
    with pytest.raises(ValueError, match=r"^z_ref must have T\+1 = 51 rows, one more than K's 50 steps .*got \(50, 4\)"):
        lqr.tracker(K, np.zeros((T, n)))
    lqr.tracker(K, np.zeros((T + 1, n)))  # the right one passes


def test_negative_Q_final_is_refused_by_name_not_blamed_on_R(rng):
    A, B, Q, R = _problem(rng)
    with pytest.raises(ValueError, match=r"^Q_final must be symmetric positive semidefinite, got smallest eigenvalue "
                                         r"-10 \(the tolerance is -1e-12 max\|Q_final\|\)$"):
        lqr.solve_discrete(A, B, Q, 1e-3, -10 * np.eye(8))
    # allowed indefinite, the sweep still blames Q_final (not R) where H_i breaks down
    with pytest.raises(ValueError, match=r"R \+ B' P B is not positive definite at step 9: its Cholesky pivot 0 is "
                                         r"-\S+ .*; Q_final is not positive semidefinite \(smallest eigenvalue -10\)"):
        lqr.solve_discrete(A, B, Q, 1e-3, -10 * np.eye(8), allow_indefinite_Q=True)


def test_indefinite_Q_far_from_the_end_is_blamed(rng):
    """Allowed indefinite, a Q that drives P_{i+1} indefinite a few steps before the end is named."""
    T, n, s = 12, 2, 1
    A = np.eye(n)
    B = np.array([[1.0], [0.0]])
    with pytest.raises(ValueError, match=r"^Q must be symmetric positive semidefinite, got smallest eigenvalue -1 "):
        lqr.solve_discrete(A, B, np.diag([-1.0, 1.0]), 0.5, np.eye(n), horizon=T)
    with pytest.raises(ValueError, match=r"P\[\d+\] is indefinite .*Q or Q_final is too negative"):
        lqr.solve_discrete(A, B, np.diag([-1.0, 1.0]), 0.5, np.eye(n), horizon=T, allow_indefinite_Q=True)


def test_indefinite_Q_is_fine_when_allowed_while_H_stays_definite(rng):
    """allow_indefinite_Q=True (issue 24, DAREX #4 style), checked against the dense optimum;
    refused by default, naming the step of a time-varying Q."""
    from reference.lqr import dense_lq

    T, n, s = 6, 3, 2
    A = rng.standard_normal((T, n, n)) * 0.4
    B = rng.standard_normal((T, n, s))
    Q = np.tile(np.diag([1.0, -0.05, 0.5]), (T, 1, 1))
    R = np.tile(np.eye(s), (T, 1, 1))
    with pytest.raises(ValueError, match=r"^Q\[5\] must be symmetric positive semidefinite, got smallest eigenvalue "
                                         r"-0.05 "):
        lqr.solve_discrete(A, B, Q, R, np.eye(n))
    sol = lqr.solve_discrete(A, B, Q, R, np.eye(n), allow_indefinite_Q=True)
    Kb, P0 = dense_lq(A, B, Q, R, np.eye(n))
    np.testing.assert_allclose(sol.P[0], P0, rtol=1e-9, atol=1e-12)


def test_diagonal_weights_in_every_lqr_entry_point(rng):
    T, n, s, dt = 5, 4, 2, 0.05
    A = rng.standard_normal((T, n, n)) * 0.3
    B = rng.standard_normal((n, s))
    q, r = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.5, 2.0])
    a = lqr.solve_discrete(A, B, q, r, q)
    b = lqr.solve_discrete(A, B, np.diag(q), np.diag(r), np.diag(q))
    np.testing.assert_array_equal(a.K, b.K)
    c = lqr.solve_continuous(A, B, dt, q, r, q)
    d = lqr.solve_continuous(A, B, dt, np.diag(q), np.diag(r), np.diag(q))
    np.testing.assert_array_equal(c.K, d.K)
    e = lqr.retune(c.discretization, q, R=r)
    f = lqr.retune(c.discretization, np.diag(q), R=np.diag(r))
    np.testing.assert_array_equal(e.K, f.K)
    with pytest.raises(ValueError, match=r"^Q must have shape \(T, 4, 4\), \(4, 4\), \(4,\) \(the diagonal\) or be a "
                                         r"scalar, got \(3,\)"):
        lqr.solve_discrete(A, B, q[:3], r, q)


def _tracker_run(make_chain, loop):
    chain = make_chain(m=2)
    n, s = 4, 2
    T = 5
    sol = lqr.solve_discrete(np.eye(n), np.ones((n, s)) * 0.1, 1.0, 1.0, 1.0, horizon=T)
    return chain, lqr.tracker(sol, np.zeros((T + 1, n)), loop=loop)


def test_simulating_past_the_horizon_warns_unless_looping(make_chain):
    chain, tr = _tracker_run(make_chain, loop=False)
    z0 = np.zeros(4)
    with pytest.warns(RuntimeWarning, match=r"simulate runs 8 steps from reference step 0, past the tracker's "
                                            r"horizon 5: its last 3 steps hold"):
        sim.simulate(chain, z0, 8, 0.01, controller=tr)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim.simulate(chain, z0, 5, 0.01, controller=tr, start_index=0)  # up to the horizon: no warning
        chain2, looping = _tracker_run(make_chain, loop=True)
        sim.simulate(chain2, z0, 12, 0.01, controller=looping)
