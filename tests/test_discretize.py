"""Discretization of the continuous LTV problem (appendix A), re-tuning and
``solve_continuous``."""
from __future__ import annotations

import gc

import numpy as np
import pytest
import scipy.linalg as sla

from directable import lqr
from reference import rel_err
from reference.lqr import eig_discretize, random_spd, rk4_discretize, van_loan_scipy
from reference.problems import BAD_DTYPES, continuous_args, n, noncontiguous_views, s, SHAPE_CASES, small_lq, T

FIELDS = ("Phi", "Gamma", "Q", "N", "R")


def _fields(d):
    return [getattr(d, f) for f in FIELDS]


def _problem(rng, T, n, s, dt=0.1, norm=2.5):
    """Time-varying A (||A dt|| ~ norm: growing, decaying and oscillating modes),
    B, Qc, Rc per step."""
    A = rng.standard_normal((T, n, n)) * (norm / dt / np.sqrt(n) / 2)
    B = rng.standard_normal((T, n, s))
    Qc = np.stack([random_spd(rng, n) for _ in range(T)])
    Rc = np.stack([random_spd(rng, s) for _ in range(T)])
    return A, B, Qc, Rc, dt


def _stiff_A(rng, n, dt, lo, hi):
    """Mildly non-normal A whose real negative eigenvalues l have |l| dt
    spread log-uniformly over [lo, hi]."""
    V = np.eye(n) + 0.3 * rng.standard_normal((n, n))
    lam = -np.logspace(np.log10(lo), np.log10(hi), n) / dt
    return V @ np.diag(lam) @ np.linalg.inv(V)


# ------------------------------------------------------------------ exact
@pytest.mark.parametrize("n,s", [(1, 1), (4, 1), (4, 4), (6, 3)], ids=["n1s1", "n4s1", "n4s4", "n6s3"])
def test_exact_equals_van_loan_and_fine_step_reference(rng, n, s):
    """Time-varying A, B, Q, R: exact = SciPy expm of the full Van Loan matrix
    (one per step) = RK4 with 2000 sub-steps of the matrix ODEs."""
    A, B, Qc, Rc, dt = _problem(rng, 5, n, s)
    d = lqr.discretize(A, B, dt, Qc, Rc, method="exact")
    assert d.Phi.shape == (5, n, n) and d.Gamma.shape == (5, n, s)
    assert d.Q.shape == (5, n, n) and d.N.shape == (5, n, s) and d.R.shape == (5, s, s)
    assert (d.horizon, d.n, d.s, d.dt) == (5, n, s, dt)
    vl = van_loan_scipy(A, B, Qc, Rc, dt)
    rk = rk4_discretize(A, B, Qc, Rc, dt, substeps=2000)
    for name, got, v, r in zip(FIELDS, _fields(d), vl, rk):
        # SciPy's float64 expm of a 2(n+s) matrix with ||.|| ~ 5: ~1e-13 agreement expected
        assert rel_err(got, v) < 1e-11, name
        assert rel_err(got, r) < 1e-10, name


def test_phi_is_expm_and_gamma_is_its_integral(rng):
    A, B, Qc, Rc, dt = _problem(rng, 6, 5, 2)
    d = lqr.discretize(A, B, dt, Qc, Rc)
    for i in range(6):
        assert rel_err(d.Phi[i], sla.expm(A[i] * dt)) < 1e-12
        # Gamma = int_0^dt e^{At} dt B  <=>  A Gamma = (Phi - I) B
        np.testing.assert_allclose(A[i] @ d.Gamma[i], (d.Phi[i] - np.eye(5)) @ B[i],
                                   atol=1e-11 * np.linalg.norm(d.Phi[i]) * np.linalg.norm(B[i]))


def test_constant_A_with_horizon(rng):
    n, s, T, dt = 4, 2, 7, 0.05
    A = rng.standard_normal((n, n)) * 10
    B = rng.standard_normal((n, s))
    Qc, Rc = random_spd(rng, n), random_spd(rng, s)
    d = lqr.discretize(A, B, dt, Qc, Rc, horizon=T)
    assert d.Phi.shape == (T, n, n)
    ref = van_loan_scipy(A, B, Qc, Rc, dt, T=1)
    rk = rk4_discretize(A, B, Qc, Rc, dt, substeps=2000, T=1)
    for name, got, v, r in zip(FIELDS, _fields(d), ref, rk):
        for i in range(T):
            np.testing.assert_array_equal(got[i], got[0])
        assert rel_err(got[0], v[0]) < 1e-11, name
        assert rel_err(got[0], r[0]) < 1e-10, name
    # = the same constant matrices given as sequences
    tile = lambda M: np.tile(M, (T, 1, 1))  # noqa: E731
    seq = lqr.discretize(tile(A), tile(B), dt, tile(Qc), tile(Rc))
    for name, a, b in zip(FIELDS, _fields(d), _fields(seq)):
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-300, err_msg=name)
    # constant weights with time-varying A; scalar weights
    mixed = lqr.discretize(tile(A), B, dt, 2.0, 0.5)
    ref2 = lqr.discretize(tile(A), tile(B), dt, tile(2.0 * np.eye(n)), tile(0.5 * np.eye(s)))
    for name, a, b in zip(FIELDS, _fields(mixed), _fields(ref2)):
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-300, err_msg=name)


@pytest.mark.parametrize("s", [1, 5], ids=["s1", "s=n"])
def test_exact_moderately_stiff_matches_closed_form(rng, s):
    """|l| dt in [1e-2, 10]: exact = closed-form integrals of the eigen-expansion
    (this also validates the closed-form reference against Van Loan)."""
    n, dt = 5, 0.1
    for _ in range(3):
        A = _stiff_A(rng, n, dt, 1e-2, 10.0)
        B = rng.standard_normal((n, s))
        Qc, Rc = random_spd(rng, n), random_spd(rng, s)
        d = lqr.discretize(A, B, dt, Qc, Rc, horizon=1)
        ref = eig_discretize(A, B, Qc, Rc, dt)
        vl = van_loan_scipy(A, B, Qc, Rc, dt, T=1)
        for name, got, r, v in zip(FIELDS, _fields(d), ref, vl):
            assert rel_err(v[0], r) < 1e-10, name  # the two references agree
            assert rel_err(got[0], r) < 1e-10, name


@pytest.mark.parametrize("s", [1, 4], ids=["s1", "s=n"])
def test_exact_stiff_matches_closed_form(rng, s):
    # regression: the Van Loan exp(-A'dt) block once lost all accuracy / overflowed for |l| dt >~ 30
    """Stiff time-varying A: |l| dt spread over [1e-2, 1e3]. Phi, Gamma and
    the cost integrals must match the closed form to 1e-9."""
    n, dt, T = 4, 0.1, 3
    A = np.stack([_stiff_A(rng, n, dt, 1e-2, 1e3) for _ in range(T)])
    B = rng.standard_normal((T, n, s))
    Qc, Rc = random_spd(rng, n), random_spd(rng, s)
    d = lqr.discretize(A, B, dt, Qc, Rc)
    for i in range(T):
        ref = eig_discretize(A[i], B[i], Qc, Rc, dt)
        for name, got, r in zip(FIELDS, _fields(d), ref):
            assert rel_err(got[i], r) < 1e-9, (name, i)


def test_exact_stiff_is_never_silently_wrong(rng):
    # regression: Q, N, R were once wrong by 1e25 at |l| dt = 100 without an error
    """Whatever the stiffness: an accurate result or a ValueError, never garbage."""
    n, dt = 4, 0.1
    A = _stiff_A(rng, n, dt, 1.0, 100.0)
    B = rng.standard_normal((n, 2))
    ref = eig_discretize(A, B, np.eye(n), np.eye(2), dt)
    try:
        d = lqr.discretize(A, B, dt, np.eye(n), np.eye(2), horizon=1)
    except ValueError:
        return
    for name, got, r in zip(FIELDS, _fields(d), ref):
        assert rel_err(got[0], r) < 1e-6, name


def test_simpson_stiff_converges(rng):
    """The quadrature has no exp(-A't): on a stiff A it converges (slowly)."""
    n, dt = 4, 0.1
    A = _stiff_A(rng, n, dt, 1e-2, 1e3)
    B = rng.standard_normal((n, 2))
    ref = eig_discretize(A, B, np.eye(n), np.eye(2), dt)
    errs = []
    for iv in (10, 100, 1000):
        d = lqr.discretize(A, B, dt, np.eye(n), np.eye(2), method="simpson", intervals=iv, horizon=1)
        assert rel_err(d.Phi[0], ref[0]) < 1e-11
        assert rel_err(d.Gamma[0], ref[1]) < 1e-11
        errs.append(max(rel_err(got[0], r) for got, r in zip(_fields(d)[2:], ref[2:])))
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 1e-4


def test_discretization_properties(rng):
    A, B, Qc, Rc, dt = _problem(rng, 4, 5, 3)
    d = lqr.discretize(A, B, dt, Qc, Rc)
    for i in range(4):
        np.testing.assert_allclose(d.Q[i], d.Q[i].T, rtol=0, atol=1e-15 * np.abs(d.Q[i]).max())
        np.testing.assert_allclose(d.R[i], d.R[i].T, rtol=0, atol=1e-15 * np.abs(d.R[i]).max())
        # the joint weight is an integral of PSD matrices plus dt * blkdiag(0, Rc): PD
        W = np.block([[d.Q[i], d.N[i]], [d.N[i].T, d.R[i]]])
        ev = np.linalg.eigvalsh(0.5 * (W + W.T))
        assert ev.min() > 0
        assert np.linalg.eigvalsh(d.R[i] - dt * Rc[i]).min() >= -1e-12 * np.abs(d.R[i]).max()


def test_threads_give_identical_results(rng):
    A, B, Qc, Rc, dt = _problem(rng, 16, 4, 2)
    for method in ("exact", "simpson"):
        one = lqr.discretize(A, B, dt, Qc, Rc, method=method, threads=1)
        two = lqr.discretize(A, B, dt, Qc, Rc, method=method, threads=2)
        auto = lqr.discretize(A, B, dt, Qc, Rc, method=method)
        for f in FIELDS:
            np.testing.assert_array_equal(getattr(one, f), getattr(two, f))
            np.testing.assert_array_equal(getattr(one, f), getattr(auto, f))


def test_discretization_views(rng):
    A, B, Qc, Rc, dt = _problem(rng, 3, 3, 2)
    d = lqr.discretize(A, B, dt, Qc, Rc)
    views = [getattr(d, f) for f in FIELDS]
    copies = [np.array(v) for v in views]
    for f, v in zip(FIELDS, views):
        assert not v.flags.writeable, f
        assert np.shares_memory(v, getattr(d, f)), f
    del d
    gc.collect()
    for v, c in zip(views, copies):
        np.testing.assert_array_equal(v, c)


# ---------------------------------------------------------------- simpson
@pytest.mark.parametrize("n,s", [(3, 1), (4, 4)], ids=["s1", "s=n"])
def test_simpson_converges_like_h4(rng, n, s):
    A, B, Qc, Rc, dt = _problem(rng, 3, n, s)
    exact = lqr.discretize(A, B, dt, Qc, Rc)
    errs = []
    for iv in (4, 8, 16, 32):
        d = lqr.discretize(A, B, dt, Qc, Rc, method="simpson", intervals=iv)
        # Phi, Gamma are exact powers of e^{A h}: only the cost integrals are quadrature
        assert rel_err(d.Phi, exact.Phi) < 1e-12
        assert rel_err(d.Gamma, exact.Gamma) < 1e-12
        errs.append(max(rel_err(a, b) for a, b in zip(_fields(d)[2:], _fields(exact)[2:])))
    ratios = np.array(errs[:-1]) / np.array(errs[1:])
    assert np.all((ratios > 11) & (ratios < 22)), (errs, ratios)  # h^4: 16 per halving
    assert errs[-1] < 1e-4
    assert exact.method == lqr._core.DiscretizeMethod.exact
    assert d.method == lqr._core.DiscretizeMethod.simpson


def test_simpson_default_is_ten_intervals(rng):
    A, B, Qc, Rc, dt = _problem(rng, 2, 3, 1)
    a = lqr.discretize(A, B, dt, Qc, Rc, method="simpson")
    b = lqr.discretize(A, B, dt, Qc, Rc, method="simpson", intervals=10)
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))


# ------------------------------------------------------------- re-tuning
@pytest.mark.parametrize("method", ["exact", "simpson"])
def test_retune_equals_fresh_discretization(rng, method):
    n, s, T = 4, 2, 12
    A, B, Qc, Rc, dt = _problem(rng, T, n, s, norm=1.5)
    Qf = random_spd(rng, n)
    disc = lqr.discretize(A, B, dt, Qc, Rc, method=method)
    for aQ, aR in [(1.0, 1.0), (3.0, 1.0), (1.0, 0.2), (0.5, 7.0), (0.0, 2.0)]:
        fresh = lqr.discretize(A, B, dt, aQ * Qc, aR * Rc, method=method)
        ref = lqr.solve_discrete(fresh.Phi, fresh.Gamma, fresh.Q, fresh.R, Qf, N=fresh.N)
        for sol in (disc.solve(Qf, aQ, aR), lqr.retune(disc, Qf, aQ, aR)):
            assert rel_err(sol.K, ref.K) < 1e-10, (aQ, aR)
            assert rel_err(sol.P, ref.P) < 1e-10, (aQ, aR)
    # a new continuous R (constant or per step), with and without scaling
    for R_new in (random_spd(rng, s), np.stack([random_spd(rng, s) for _ in range(T)])):
        for aQ, aR in [(1.0, 1.0), (2.0, 0.3)]:
            fresh = lqr.discretize(A, B, dt, aQ * Qc, aR * R_new, method=method)
            ref = lqr.solve_discrete(fresh.Phi, fresh.Gamma, fresh.Q, fresh.R, Qf, N=fresh.N)
            sol = lqr.retune(disc, Qf, aQ, aR, R=R_new)
            assert rel_err(sol.K, ref.K) < 1e-10
            assert rel_err(sol.P, ref.P) < 1e-10
            sol2 = disc.solve(Qf, aQ, aR, R_new)
            np.testing.assert_array_equal(sol2.K, sol.K)
    # re-tuning leaves the discretization untouched
    again = lqr.discretize(A, B, dt, Qc, Rc, method=method)
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(disc, f), getattr(again, f))


def test_retune_scalar_final_weight(rng):
    A, B, Qc, Rc, dt = _problem(rng, 5, 3, 1)
    disc = lqr.discretize(A, B, dt, Qc, Rc)
    a = lqr.retune(disc, 2.0, 1.5, 0.5)
    b = disc.solve(2.0 * np.eye(3), 1.5, 0.5)
    np.testing.assert_array_equal(a.K, b.K)


@pytest.mark.parametrize("method", ["exact", "simpson"])
@pytest.mark.parametrize("threads, T", [(1, 15), (2, 15), (2, 3), (0, 200)])
def test_solve_continuous_is_discretize_then_solve_discrete(rng, method, threads, T):
    # with several threads the two run as a pipeline: same numbers
    n, s = 5, 2
    A, B, Qc, Rc, dt = _problem(rng, T, n, s, norm=1.5)
    Qf = random_spd(rng, n)
    sol = lqr.solve_continuous(A, B, dt, Qc, Rc, Qf, method=method, intervals=6, threads=threads)
    d = lqr.discretize(A, B, dt, Qc, Rc, method=method, intervals=6)
    ref = lqr.solve_discrete(d.Phi, d.Gamma, d.Q, d.R, Qf, N=d.N)
    assert rel_err(sol.K, ref.K) < 1e-12
    assert rel_err(sol.P, ref.P) < 1e-12
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(sol.discretization, f), getattr(d, f))
    # constant A with horizon=
    sol_c = lqr.solve_continuous(A[0], B[0], dt, Qc[0], Rc[0], Qf, method=method, horizon=9, intervals=6)
    d_c = lqr.discretize(A[0], B[0], dt, Qc[0], Rc[0], method=method, horizon=9, intervals=6)
    ref_c = lqr.solve_discrete(d_c.Phi, d_c.Gamma, d_c.Q, d_c.R, Qf, N=d_c.N)
    assert rel_err(sol_c.K, ref_c.K) < 1e-12


@pytest.mark.parametrize("threads", [1, 0])
def test_solve_continuous_large_n_equals_the_two_calls_bit_for_bit(rng, threads):
    # n >= 96: solve_discrete sweeps on a team of threads, solve_continuous on
    # the calling thread (threads=1: everything on it; 0: beside the
    # discretizing threads); the team does the same arithmetic in the same
    # order, so all give the same numbers.
    n, s, T = 100, 20, 24
    A, B, Qc, Rc, dt = _problem(rng, T, n, s, norm=1.5)
    Qf = random_spd(rng, n)
    sol = lqr.solve_continuous(A, B, dt, Qc, Rc, Qf, threads=threads)
    d = lqr.discretize(A, B, dt, Qc, Rc)
    ref = lqr.solve_discrete(d.Phi, d.Gamma, d.Q, d.R, Qf, N=d.N)
    np.testing.assert_array_equal(sol.K, ref.K)
    np.testing.assert_array_equal(sol.P, ref.P)


@pytest.mark.parametrize("bad_step", [0, 57, 119])
def test_solve_continuous_reports_a_failing_step(rng, bad_step):
    # An exponential that overflows at one step of the pipeline is reported
    # (with the flat index of that step), whichever thread computed it, and
    # no thread is left waiting for the missing step.
    n, s, T = 4, 2, 120
    A, B, Qc, Rc, dt = _problem(rng, T, n, s, norm=1.0)
    A[bad_step] = 800.0 * np.eye(n) / dt
    for threads in (1, 2):
        with pytest.raises(ValueError, match="exponential overflowed") as e:
            lqr.solve_continuous(A, B, dt, Qc, Rc, np.eye(n), threads=threads)
        flat = int(str(e.value).rsplit(" ", 1)[-1])
        assert flat // (n * n) == bad_step


def test_continuous_gains_approach_care_for_small_dt(rng):
    """Sanity of the whole chain: dt -> 0, long horizon -> continuous ARE gain."""
    n, s = 3, 1
    A = rng.standard_normal((n, n))
    B = rng.standard_normal((n, s))
    Qc, Rc = np.eye(n), np.eye(s)
    P_care = sla.solve_continuous_are(A, B, Qc, Rc)
    K_care = -np.linalg.solve(Rc, B.T @ P_care)
    errs = []
    for dt in (0.04, 0.02, 0.01):
        sol = lqr.solve_continuous(A, B, dt, Qc, Rc, np.zeros((n, n)), horizon=int(40 / dt))
        errs.append(rel_err(sol.K[0], K_care))
        assert rel_err(sol.P[0], P_care) < 10 * dt
    assert errs[0] > errs[1] > errs[2]
    assert errs[2] < 0.05


@pytest.mark.parametrize("case", [c for c in SHAPE_CASES if SHAPE_CASES[c][0] in ("A", "B", "Q", "R")])
def test_discretize_wrong_shapes(rng, case):
    name, make = SHAPE_CASES[case]
    a = small_lq(rng)
    a[name] = make(a)
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        lqr.discretize(**continuous_args(a))


@pytest.mark.parametrize("kind", ["complex", "object", "string"])
@pytest.mark.parametrize("name", ["A", "B", "Q", "R"])
def test_discretize_bad_dtypes(rng, name, kind):
    a = small_lq(rng)
    a[name] = BAD_DTYPES[kind](a[name])
    with pytest.raises(TypeError, match=rf"\b{name}\b"):
        lqr.discretize(**continuous_args(a))


@pytest.mark.parametrize("name", ["A", "B", "Q", "R"])
def test_discretize_noncontiguous_same_result(rng, name):
    a = small_lq(rng)
    ref = lqr.discretize(**continuous_args(a))
    for kind, v in noncontiguous_views(a[name]).items():
        got = lqr.discretize(**continuous_args(dict(a, **{name: v})))
        for f in ("Phi", "Gamma", "Q", "N", "R"):
            np.testing.assert_array_equal(getattr(got, f), getattr(ref, f), err_msg=f"{kind} {f}")


def test_retune_noncontiguous_same_result(rng):
    a = small_lq(rng)
    d = lqr.discretize(**continuous_args(a))
    Qf = np.arange(9.0).reshape(3, 3) / 10 + np.eye(3)
    Qf = Qf + Qf.T  # weights must be symmetric (a transposed view of it is the same matrix)
    Rn = np.array([[2.0, 0.3], [0.3, 1.0]])
    ref = lqr.retune(d, Qf, 1.0, 2.0, R=Rn)
    for v in noncontiguous_views(Qf).values():
        np.testing.assert_array_equal(lqr.retune(d, v, 1.0, 2.0, R=Rn).K, ref.K)
    for v in noncontiguous_views(Rn).values():
        np.testing.assert_array_equal(lqr.retune(d, Qf, 1.0, 2.0, R=v).K, ref.K)
        np.testing.assert_array_equal(d.solve(Qf, 1.0, 2.0, v).K, ref.K)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("name", ["A", "B", "Q", "R"])
def test_discretize_nonfinite(rng, name, bad):
    a = small_lq(rng)
    x = a[name].copy()
    x.flat[-1] = bad
    a[name] = x
    with pytest.raises(ValueError, match=rf"\b{name}\b.*finite"):
        lqr.discretize(**continuous_args(a))


@pytest.mark.parametrize("R", [np.diag([1.0, -1e-3]), np.array([[1.0, 2.0], [2.0, 1.0]])],
                         ids=["indefinite", "indefinite-offdiag"])
def test_retune_R_not_positive_semidefinite(rng, R):
    d = lqr.discretize(**continuous_args(small_lq(rng)))
    with pytest.raises(ValueError, match=r"^R must be symmetric positive semidefinite, got smallest eigenvalue -"):
        lqr.retune(d, np.eye(n), R=R)


@pytest.mark.parametrize("R", [np.zeros((s, s)), np.diag([1.0, 0.0])], ids=["zero", "singular"])
def test_retune_semidefinite_R_is_accepted(rng, R):
    """A free actuator (issue 24): the discrete R_i keeps the Gamma'Q Gamma integral, so H_i stays definite."""
    d = lqr.discretize(**continuous_args(small_lq(rng)))
    assert np.isfinite(lqr.retune(d, np.eye(n), R=R).K).all()


def test_retune_R_negative_definite(rng):
    d = lqr.discretize(**continuous_args(small_lq(rng)))
    with pytest.raises(ValueError, match=r"\bR\b.*positive semidefinite"):
        lqr.retune(d, np.eye(n), R=-np.eye(s))


@pytest.mark.parametrize("dt", [0.0, -0.1, np.nan, np.inf, -np.inf])
def test_dt_not_positive(rng, dt):
    a = small_lq(rng)
    with pytest.raises(ValueError, match=r"\bdt\b"):
        lqr.discretize(**dict(continuous_args(a), dt=dt))
    with pytest.raises(ValueError, match=r"\bdt\b"):
        lqr.solve_continuous(a["A"], a["B"], dt, 1.0, 1.0, 1.0)


def test_dt_wrong_type(rng):
    a = small_lq(rng)
    for dt in ("x", 0.1j, np.array([0.1, 0.2]), None):
        with pytest.raises(TypeError, match=r"\bdt\b"):
            lqr.discretize(**dict(continuous_args(a), dt=dt))


@pytest.mark.parametrize("method", ["euler", "Exact", "", None, 1])
def test_bad_method(rng, method):
    a = small_lq(rng)
    with pytest.raises(ValueError, match="method"):
        lqr.discretize(**continuous_args(a), method=method)
    with pytest.raises(ValueError, match="method"):
        lqr.solve_continuous(a["A"], a["B"], 0.1, 1.0, 1.0, 1.0, method=method)


@pytest.mark.parametrize("intervals", [3, 1, 0, -2, 11])
def test_bad_simpson_intervals(rng, intervals):
    a = small_lq(rng)
    with pytest.raises(ValueError, match="intervals"):
        lqr.discretize(**continuous_args(a), method="simpson", intervals=intervals)
    # the exact method ignores them
    lqr.discretize(**continuous_args(a), method="exact", intervals=intervals)


def test_bad_retune_scales(rng):
    d = lqr.discretize(**continuous_args(small_lq(rng)))
    for aQ in (-1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="alpha_Q"):
            lqr.retune(d, np.eye(n), aQ, 1.0)
    for aR in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="alpha_R"):
            lqr.retune(d, np.eye(n), 1.0, aR)
    with pytest.raises(ValueError, match="Q_final"):
        lqr.retune(d, np.eye(n + 1))
    with pytest.raises(ValueError, match="Q_final"):
        lqr.retune(d, np.full((n, n), np.nan))
    with pytest.raises(TypeError, match="Q_final"):
        lqr.retune(d, np.eye(n) + 0j)
    with pytest.raises(ValueError, match=r"\bR\b"):
        lqr.retune(d, np.eye(n), R=np.eye(s + 1))
    with pytest.raises(ValueError, match=r"\bR\b"):
        lqr.retune(d, np.eye(n), R=np.full((s, s), np.inf))
    with pytest.raises(ValueError, match=r"\bR\b"):
        lqr.retune(d, np.eye(n), R=np.tile(np.eye(s), (T + 1, 1, 1)))
