"""Stationary LQR (``lqr.solve_stationary``), semidefinite R in the sweep, and
``Q_final="dare"``, on the DAREX collection (Benner, Laub & Mehrmann 1995)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla

from directable import lqr
from reference import rel_err
from reference.darex import CASES, EXACT, ILL_CONDITIONED, residual
from reference.lqr import dense_lq, random_spd, random_stable

EPS = np.finfo(float).eps


def _reference(k):
    """SciPy's solution, or the collection's closed form where QZ is known to be inaccurate."""
    if k in EXACT:
        return EXACT[k]
    A, B, Q, R, S = CASES[k]
    if k == 13:  # A symmetric, B = I, Q = R = 1e6 I: per eigenvalue a of A, p = 1e6 (a^2 + sqrt(a^4 + 4)) / 2
        a, V = np.linalg.eigh(A)
        return 1e6 * (V * ((a**2 + np.sqrt(a**4 + 4)) / 2)) @ V.T
    return sla.solve_discrete_are(A, B, Q, R, s=S)


def _rel_residual(k, P):
    A, B, Q, R, S = CASES[k]
    return np.linalg.norm(residual(A, B, Q, R, S, P)) / np.linalg.norm(P)


@pytest.mark.parametrize("k", sorted(CASES), ids=[f"darex{k}" for k in sorted(CASES)])
def test_darex_matches_scipy_with_a_residual_as_small(k):
    """Every real DAREX case: P to 1e-10 relative (1e-6 for #13, #14) of SciPy's
    (or the closed form), the residual no larger than SciPy's (or at rounding
    level), K the gain of P, and A + BK stable."""
    A, B, Q, R, S = CASES[k]
    sol = lqr.solve_stationary(A, B, Q, R, N=S, allow_indefinite_Q=True)
    P_ref = _reference(k)
    tol = 1e-6 if k in ILL_CONDITIONED else 1e-10
    assert rel_err(sol.P, P_ref) < tol
    np.testing.assert_array_equal(sol.P, sol.P.T)
    ours = _rel_residual(k, sol.P)
    scipy_P = sla.solve_discrete_are(A, B, Q, R, s=S)
    theirs = _rel_residual(k, scipy_P)
    assert ours <= max(theirs, 16 * EPS), (ours, theirs)
    assert abs(sol.residual - ours) <= max(0.5 * ours, 16 * EPS)  # its own formula: equal to rounding
    G = B.T @ sol.P @ A + (0 if S is None else S.T)
    K = -np.linalg.solve(R + B.T @ sol.P @ B, G)
    assert rel_err(sol.K, K) < (1e-6 if k in ILL_CONDITIONED else 1e-9)
    rho = np.abs(np.linalg.eigvals(A + B @ sol.K)).max()
    assert sol.spectral_radius == pytest.approx(rho, rel=1e-9)
    assert rho < 1
    assert 1 <= sol.iterations <= 80
    P, K2, radius = sol  # unpacks
    assert P is not None and np.shares_memory(P, sol.P) and radius == sol.spectral_radius


def test_darex14_converges_where_the_sweep_crawls():
    """#14 (an eigenvalue 1 - 1e-8, B = 1e-8): doubling needs a few dozen steps."""
    A, B, Q, R, _ = CASES[14]
    sol = lqr.solve_stationary(A, B, Q, R)
    assert sol.iterations <= 40
    assert sol.residual < 1e-12


@pytest.mark.parametrize("k", sorted(CASES), ids=[f"darex{k}" for k in sorted(CASES)])
def test_sweep_from_the_stationary_solution_stays_there(k):
    """The finite-horizon sweep with Q_final = P_stationary returns P_i = P at
    every step and K_i = K (singular R #3, #4 included); Q_final="dare" gives
    the same terminal cost."""
    A, B, Q, R, S = CASES[k]
    st = lqr.solve_stationary(A, B, Q, R, N=S, allow_indefinite_Q=True)
    T = 6
    tol = 1e-6 if k in ILL_CONDITIONED else 1e-9
    sol = lqr.solve_discrete(A, B, Q, R, st.P, N=S, horizon=T, allow_indefinite_Q=True)
    for i in range(T + 1):
        assert rel_err(sol.P[i], st.P) < tol, i
    for i in range(T):
        assert rel_err(sol.K[i], st.K) < tol, i
    dare = lqr.solve_discrete(A, B, Q, R, "dare", N=S, horizon=T, allow_indefinite_Q=True)
    np.testing.assert_allclose(dare.P[T], 0.5 * (st.P + st.P.T), rtol=0, atol=0)
    np.testing.assert_array_equal(dare.K, sol.K)


@pytest.mark.parametrize("k", [3, 4])
def test_singular_R_sweep_equals_dense_optimum(k):
    """KKT optimality with a singular R (DAREX #3: R = 0; #4: rank 1): the
    sweep's gains and cost-to-go are the optimum of the LQ problem solved as
    one dense system (which is well posed: its Hessian is definite)."""
    A, B, Q, R, S = CASES[k]
    T, n, s = 8, A.shape[0], B.shape[1]
    Q_final = lqr.solve_stationary(A, B, Q, R, N=S, allow_indefinite_Q=True).P + np.eye(n)
    sol = lqr.solve_discrete(A, B, Q, R, Q_final, N=S, horizon=T, allow_indefinite_Q=True)
    seq = lambda M: np.repeat(M[None], T, axis=0)
    Kb, P0 = dense_lq(seq(A), seq(B), seq(Q), seq(R), Q_final, None if S is None else seq(S))
    assert rel_err(sol.P[0], P0) < 1e-9
    assert rel_err(sol.K[0], Kb[0]) < 1e-9


def test_zero_R_random_problem_equals_dense_optimum(rng):
    """R = 0 on a random problem: fine as long as B'PB is definite."""
    T, n, s = 10, 5, 2
    A = rng.standard_normal((T, n, n)) * 0.4
    B = rng.standard_normal((T, n, s))
    Q = np.stack([random_spd(rng, n) for _ in range(T)])
    Q_final = random_spd(rng, n)
    R = np.zeros((T, s, s))
    sol = lqr.solve_discrete(A, B, Q, R, Q_final)
    Kb, P0 = dense_lq(A, B, Q, R, Q_final)
    assert rel_err(sol.P[0], P0) < 1e-9
    assert rel_err(sol.K[0], Kb[0]) < 1e-9


@pytest.mark.parametrize("n,s", [(3, 1), (6, 3)])
def test_cross_term_and_random_problems_match_scipy(rng, n, s):
    A = random_stable(rng, n, radius=1.4)
    B = rng.standard_normal((n, s))
    W = random_spd(rng, n + s, floor=0.3)
    Q, R, N = W[:n, :n], W[n:, n:], W[:n, n:]
    sol = lqr.solve_stationary(A, B, Q, R, N=N)
    assert rel_err(sol.P, sla.solve_discrete_are(A, B, Q, R, s=N)) < 1e-10


def test_dare_terminal_cost_in_retune_and_solve_continuous(rng):
    """Q_final="dare" in retune and solve_continuous: the stationary P of the
    last step's discrete problem (alpha_Q Q, alpha_R R) is P_T."""
    T, n, s, dt = 6, 4, 2, 0.05
    A = np.stack([random_stable(rng, n, 1.2) for _ in range(T)])
    B = rng.standard_normal((n, s))
    sol = lqr.solve_continuous(A, B, dt, np.eye(n), 0.1 * np.eye(s), "dare")
    d = sol.discretization
    st = lqr.solve_stationary(d.Phi[-1], d.Gamma[-1], d.Q[-1], d.R[-1], N=d.N[-1])
    assert rel_err(sol.P[T], st.P) < 1e-12
    re = lqr.retune(d, "dare", alpha_Q=2.0, alpha_R=0.5)
    R_last = 2.0 * (d.R[-1] - dt * d.Rc[-1]) + 0.5 * dt * d.Rc[-1]
    st2 = lqr.solve_stationary(d.Phi[-1], d.Gamma[-1], 2.0 * d.Q[-1], R_last, N=2.0 * d.N[-1])
    assert rel_err(re.P[T], st2.P) < 1e-10


def test_dare_name_is_checked(rng):
    with pytest.raises(ValueError, match=r"Q_final must be .*'dare', got 'care'"):
        lqr.solve_discrete(np.eye(2), np.ones((2, 1)), 1.0, 1.0, "care", horizon=3)


# ------------------------------------------------------------------ errors
def test_unstabilizable_pair_is_named():
    A = np.diag([2.0, 0.5])
    B = np.array([[0.0], [1.0]])
    with pytest.raises(ValueError, match=r"\(A, B\) is not stabilizable: the eigenvalue 2"):
        lqr.solve_stationary(A, B, np.eye(2), 1.0)


def test_undetectable_pair_is_named():
    A = np.diag([1.0, 0.5])
    B = np.array([[1.0], [1.0]])
    with pytest.raises(ValueError, match=r"\(A, Q\) is not detectable: the eigenvalue 1"):
        lqr.solve_stationary(A, B, np.diag([0.0, 1.0]), 1.0)


def test_dare_terminal_cost_of_an_unstabilizable_last_step_says_so():
    A = np.diag([2.0, 0.5])
    B = np.array([[0.0], [1.0]])
    with pytest.raises(ValueError, match=r"Q_final = \"dare\".*not stabilizable"):
        lqr.solve_discrete(A, B, 1.0, 1.0, "dare", horizon=4)


def test_singular_R_with_dependent_B_columns_is_refused():
    B = np.array([[1.0, 1.0], [0.0, 0.0]])
    with pytest.raises(ValueError, match=r"R is singular and B has dependent columns"):
        lqr.solve_stationary(np.eye(2) * 0.5, B, 1.0, np.zeros((2, 2)))


@pytest.mark.parametrize("name,kw,match", [
    ("A", dict(A=np.ones((2, 3))), r"\bA must have shape"),
    ("B", dict(B=np.ones((3, 1))), r"\bB must have shape \(2, s\)"),
    ("Q", dict(Q=np.eye(3)), r"\bQ must have shape \(2, 2\), got \(3, 3\)"),
    ("R", dict(R=np.eye(2)), r"\bR must have shape \(1, 1\), got \(2, 2\)"),
    ("N", dict(N=np.ones((2, 2))), r"\bN must have shape \(2, 1\)"),
    ("Qsym", dict(Q=np.array([[1.0, 0.5], [0.0, 1.0]])), r"\bQ must be symmetric"),
    ("Rneg", dict(R=-1.0), r"\bR must be symmetric positive semidefinite, got smallest eigenvalue -1"),
    ("nan", dict(A=np.array([[np.nan, 0], [0, 0.5]])), r"\bA\b.*finite"),
])
def test_stationary_bad_input(name, kw, match):
    args = dict(A=np.eye(2) * 0.5, B=np.ones((2, 1)), Q=np.eye(2), R=1.0, N=None)
    args.update(kw)
    with pytest.raises(ValueError, match=match):
        lqr.solve_stationary(**args)


def test_diagonal_weights_are_diagonal_matrices(rng):
    A, B, Q, R, _ = CASES[6]
    a = lqr.solve_stationary(A, B, np.diag(Q), np.diag(R))
    b = lqr.solve_stationary(A, B, np.diag(np.diag(Q)), R)
    np.testing.assert_array_equal(a.P, b.P)
    s1 = lqr.solve_discrete(A, B, np.diag(Q), np.ones(2), np.ones(4), horizon=3)
    s2 = lqr.solve_discrete(A, B, np.diag(np.diag(Q)), np.eye(2), np.eye(4), horizon=3)
    np.testing.assert_array_equal(s1.K, s2.K)


def test_stationary_releases_the_gil_and_is_thread_safe():
    from concurrent.futures import ThreadPoolExecutor
    A, B, Q, R, _ = CASES[15]
    ref = lqr.solve_stationary(A, B, Q, R)
    with ThreadPoolExecutor(4) as ex:
        for sol in ex.map(lambda _: lqr.solve_stationary(A, B, Q, R), range(4)):
            np.testing.assert_array_equal(sol.P, ref.P)


@pytest.mark.parametrize("k", [1, 2, 6, 9, 11, 15])
def test_darex_matches_python_control_dlqr(k):
    """python-control's dlqr (its own DARE solver: SLICOT where slycot is
    installed, else SciPy) gives the same P and K = -K_dlqr."""
    control = pytest.importorskip("control")  # a test dependency (./dev installs it)
    A, B, Q, R, S = CASES[k]
    K_c, P_c, _ = control.dlqr(A, B, Q, R)
    sol = lqr.solve_stationary(A, B, Q, R)
    assert rel_err(sol.P, np.asarray(P_c)) < 1e-10
    assert np.abs(sol.K + np.asarray(K_c)).max() <= 1e-9 * max(1.0, np.abs(K_c).max())  # #15: K = 0


def test_semidefinite_continuous_R_in_solve_continuous_and_retune(rng):
    """The same rule in discretize / solve_continuous / retune: a continuous
    R that is only semidefinite (one free actuator) is fine, the discrete
    R_i = int Gamma'Q Gamma + R dt being definite; the gains equal the SciPy
    Van Loan reference."""
    from reference.lqr import solve_continuous_scipy

    T, n, s, dt = 5, 4, 2, 0.05
    A = np.stack([random_stable(rng, n, 1.1) for _ in range(T)])
    B = rng.standard_normal((n, s))
    Rc = np.diag([1.0, 0.0])
    sol = lqr.solve_continuous(A, B, dt, np.eye(n), Rc, np.eye(n))
    K, P, _ = solve_continuous_scipy(A, B, dt, np.eye(n), Rc, np.eye(n))
    assert rel_err(sol.K, K) < 1e-9
    re = lqr.retune(sol.discretization, np.eye(n), R=np.zeros((s, s)))
    K0, _, _ = solve_continuous_scipy(A, B, dt, np.eye(n), np.zeros((s, s)), np.eye(n))
    assert rel_err(re.K, K0) < 1e-9
    with pytest.raises(ValueError, match=r"^R must be symmetric positive semidefinite"):
        lqr.retune(sol.discretization, np.eye(n), R=-np.eye(s))


def test_stationary_progress_and_cancel():
    """progress(done, total) is called (at the end at least); an exception from it stops the call."""
    A, B, Q, R, _ = CASES[15]
    calls = []
    sol = lqr.solve_stationary(A, B, Q, R, progress=lambda d, t: calls.append((d, t)))
    assert calls and calls[-1][0] == calls[-1][1] and np.isfinite(sol.P).all()

    class Stop(Exception):
        pass

    def stop(done, total):
        raise Stop

    with pytest.raises(Stop):
        lqr.solve_stationary(A, B, Q, R, progress=stop)
