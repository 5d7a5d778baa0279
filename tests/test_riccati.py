"""Discrete time-varying LQR: ``directable.lqr.solve_discrete``."""
from __future__ import annotations

import gc
import os
import subprocess
import sys

import numpy as np
import pytest

from directable import lqr
from reference import rel_err
from reference.lqr import closed_loop, dare_gain, dense_lq, lq_cost, random_lq, random_spd, random_stable
from reference.problems import BAD_DTYPES, continuous_args, n, noncontiguous_views, s, SHAPE_CASES, small_lq, T

SIZES = [(1, 1, 1), (5, 3, 2), (20, 6, 3), (40, 10, 10)]


def _solve(p, **kw):
    return lqr.solve_discrete(p["A"], p["B"], p["Q"], p["R"], p["Q_final"], N=p["N"], **kw)


# ------------------------------------------------------------------ dense optimum
@pytest.mark.parametrize("cross", [True, False], ids=["N", "noN"])
@pytest.mark.parametrize("T,n,s", SIZES, ids=[f"T{T}n{n}s{s}" for T, n, s in SIZES])
def test_equals_dense_optimum(rng, T, n, s, cross):
    """Riccati controls and cost = the optimum of the LQ problem solved as ONE
    dense linear system in all controls (1e-9 relative)."""
    p = random_lq(rng, T, n, s, cross=cross)
    sol = _solve(p)
    assert sol.K.shape == (T, s, n) and sol.P.shape == (T + 1, n, n)
    assert (sol.horizon, sol.n, sol.s) == (T, n, s)
    Kb, P0 = dense_lq(p["A"], p["B"], p["Q"], p["R"], p["Q_final"], p["N"])
    # the whole linear map x0 -> J*, and x0 -> u_0
    assert rel_err(sol.P[0], P0) < 1e-9
    assert rel_err(sol.K[0], Kb[0]) < 1e-9
    for _ in range(3):
        x0 = rng.standard_normal(n)
        u_dense = Kb @ x0  # (T, s)
        x_ric, u_ric = closed_loop(p["A"], p["B"], sol.K, x0)
        assert rel_err(u_ric, u_dense) < 1e-9
        J_dense, _ = lq_cost(p["A"], p["B"], p["Q"], p["R"], p["Q_final"], p["N"], x0, u_dense)
        J_ric = x0 @ sol.P[0] @ x0
        assert abs(J_ric - J_dense) <= 1e-9 * abs(J_dense)
        assert abs(sol.cost_to_go(x0) - J_dense) <= 1e-9 * abs(J_dense)
        # no other control sequence does better (the optimum is strict)
        J_pert, _ = lq_cost(p["A"], p["B"], p["Q"], p["R"], p["Q_final"], p["N"], x0,
                            u_dense + 1e-3 * rng.standard_normal(u_dense.shape))
        assert J_pert > J_dense


def _one_thread_sweep(p, tmp_path):
    """solve_discrete in another process with OMP_NUM_THREADS=1: K, P."""
    np.savez(tmp_path / "p.npz", **{k: v for k, v in p.items() if v is not None})
    code = ("import sys, numpy as np; from directable import lqr; d = np.load(sys.argv[1]); "
            "N = d['N'] if 'N' in d else None; "
            "sol = lqr.solve_discrete(d['A'], d['B'], d['Q'], d['R'], d['Q_final'], N=N); "
            "np.savez(sys.argv[2], K=sol.K, P=sol.P)")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "p.npz"), str(tmp_path / "one.npz")], env=env,
                   check=True)
    one = np.load(tmp_path / "one.npz")
    return one["K"], one["P"]


@pytest.mark.parametrize("case, T, n, s", [("definite", 40, 100, 30), ("semidefinite", 40, 100, 30),
                                           ("more controls than states", 16, 100, 150),
                                           ("one control", 16, 130, 1)])
def test_large_n_team_steps_equal_one_thread_bit_for_bit(rng, tmp_path, case, T, n, s):
    """At n >= 96 on several cores the sweep runs chunks of 8 steps on a team
    of threads (the first chunks always: they are timed against one thread,
    and the faster goes on). A team step does the one-thread step's
    arithmetic in the same order, so K and P equal a one-thread run's
    (OMP_NUM_THREADS=1, another process) bit for bit, and the dense
    optimum's. Semidefinite: Q of rank 30 and Q_final = 0 make the first
    P_{i+1} singular, where the step needs the one-thread path, and the
    team takes over once P_i is definite. (On one core both runs are the
    one-thread sweep.)"""
    p = random_lq(rng, T, n, s, cross=case != "semidefinite")
    if case == "semidefinite":
        W = rng.standard_normal((T, n, 30))
        p["Q"] = W @ W.transpose(0, 2, 1)
        p["Q_final"] = np.zeros((n, n))
    sol = _solve(p)
    K1, P1 = _one_thread_sweep(p, tmp_path)
    np.testing.assert_array_equal(sol.K, K1)
    np.testing.assert_array_equal(sol.P, P1)
    for i in (T - 1, T - 5, T - 12, 0):  # in the first (team) chunk, the second, and the last one
        Kb, P0 = dense_lq(p["A"][i:], p["B"][i:], p["Q"][i:], p["R"][i:], p["Q_final"],
                          None if p["N"] is None else p["N"][i:])
        assert np.abs(sol.P[i] - P0).max() <= 1e-9 * max(1.0, np.abs(P0).max()), i
        assert np.abs(sol.K[i] - Kb[0]).max() <= 1e-9 * max(1.0, np.abs(Kb[0]).max()), i


def test_large_n_bad_step_inside_a_team_chunk_is_named(rng):
    """Each step's inputs are checked as the sweep reaches them, by the
    calling thread, also while a team steps: the error names the step and
    no thread is left waiting."""
    T, n, s = 40, 100, 30
    p = random_lq(rng, T, n, s)
    R = p["R"].copy()
    R[35] = -np.eye(s)  # reached in the first chunk (steps 39 .. 32)
    with pytest.raises(ValueError, match=r"R\[35\].*positive semidefinite"):
        _solve(dict(p, R=R))
    A = p["A"].copy()
    A[28, 3, 4] = np.nan  # in the second chunk
    with pytest.raises(ValueError, match=r"\bA\b.*finite"):
        _solve(dict(p, A=A))
    sol = _solve(p)  # and the next sweep runs as usual
    assert np.isfinite(sol.K).all()


@pytest.mark.parametrize("rank", [0, 2, 5])
def test_semidefinite_cost_to_go_equals_dense_optimum(rng, rank):
    """With Q of low rank and Q_final = 0 the cost-to-go P_i is singular at
    the end of the horizon (the sweep's Cholesky form does not apply there)
    and becomes definite later: every P_i and K_i still equal the dense
    optimum of the tail problem."""
    T, n, s = 12, 6, 3
    p = random_lq(rng, T, n, s, cross=False)
    W = rng.standard_normal((T, n, rank))
    p["Q"] = W @ W.transpose(0, 2, 1)
    p["Q_final"] = np.zeros((n, n))
    sol = _solve(p)
    assert np.linalg.eigvalsh(sol.P[T - 1]).min() < 1e-12 * max(1.0, np.abs(sol.P[T - 1]).max())
    for i in range(T):
        Kb, P0 = dense_lq(p["A"][i:], p["B"][i:], p["Q"][i:], p["R"][i:], p["Q_final"], None)
        assert np.abs(sol.P[i] - P0).max() <= 1e-9 * max(1.0, np.abs(P0).max()), i
        assert np.abs(sol.K[i] - Kb[0]).max() <= 1e-9 * max(1.0, np.abs(Kb[0]).max()), i
        np.testing.assert_array_equal(sol.P[i], sol.P[i].T)


@pytest.mark.parametrize("T,n,s", [(5, 3, 2), (20, 6, 3)])
def test_every_step_equals_dense_tail_problem(rng, T, n, s):
    """P_i and K_i solve the tail problem that starts at step i."""
    p = random_lq(rng, T, n, s)
    sol = _solve(p)
    for i in range(T):
        Kb, P0 = dense_lq(p["A"][i:], p["B"][i:], p["Q"][i:], p["R"][i:], p["Q_final"], p["N"][i:])
        assert rel_err(sol.P[i], P0) < 1e-9, i
        assert rel_err(sol.K[i], Kb[0]) < 1e-9, i
    np.testing.assert_array_equal(sol.P[T], p["Q_final"])


def test_constant_inputs_equal_stacked_sequences(rng):
    """Single matrices + horizon= mean 'constant in time' (DESIGN.md)."""
    T, n, s = 12, 4, 2
    A = random_stable(rng, n)
    B = rng.standard_normal((n, s))
    W = random_spd(rng, n + s)
    Q, N, R = W[:n, :n], W[:n, n:], W[n:, n:]
    Qf = random_spd(rng, n)
    tile = lambda M: np.tile(M, (T, 1, 1))  # noqa: E731
    ref = lqr.solve_discrete(tile(A), tile(B), tile(Q), tile(R), Qf, N=tile(N))
    const = lqr.solve_discrete(A, B, Q, R, Qf, N=N, horizon=T)
    np.testing.assert_allclose(const.K, ref.K, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(const.P, ref.P, rtol=1e-13, atol=1e-15)
    # a mix of constant and per-step inputs: the horizon comes from the sequences
    mixed = lqr.solve_discrete(tile(A), B, Q, tile(R), Qf, N=N)
    np.testing.assert_allclose(mixed.K, ref.K, rtol=1e-13, atol=1e-15)
    # the horizon may also be given redundantly
    again = lqr.solve_discrete(tile(A), tile(B), tile(Q), tile(R), Qf, N=tile(N), horizon=T)
    np.testing.assert_allclose(again.K, ref.K, rtol=1e-13, atol=1e-15)


def test_scalar_weights_mean_multiples_of_identity(rng):
    T, n, s = 6, 3, 2
    A = rng.standard_normal((T, n, n)) * 0.4
    B = rng.standard_normal((T, n, s))
    a = lqr.solve_discrete(A, B, 2.0, 0.5, 3.0)
    b = lqr.solve_discrete(A, B, 2.0 * np.eye(n), 0.5 * np.eye(s), 3.0 * np.eye(n))
    np.testing.assert_allclose(a.K, b.K, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(a.P, b.P, rtol=1e-14, atol=1e-15)
    c = lqr.solve_discrete(A, B, np.float64(2.0), np.float32(0.5), 3)
    np.testing.assert_allclose(c.K, b.K, rtol=1e-14, atol=1e-15)


def test_zero_dim_array_weight_is_a_scalar(rng):
    """(Regression: as_float_array once turned 0-d arrays into shape (1,).)"""
    A = np.eye(2) * 0.9
    B = np.ones((2, 1))
    a = lqr.solve_discrete(A, B, np.array(2.0), np.array(1.0), np.array(1.0), horizon=3)
    b = lqr.solve_discrete(A, B, 2.0, 1.0, 1.0, horizon=3)
    np.testing.assert_array_equal(a.K, b.K)


def test_nonsymmetric_R_is_its_symmetric_part_or_rejected(rng):
    # regression: riccati_sweep once factored a non-symmetric R + B'PB by one triangle
    """u'Ru only depends on (R + R')/2: a non-symmetric R must either be
    rejected (ValueError naming R; it is, as a likely mistake) or give the
    gains of its symmetric part."""
    T, n, s = 5, 3, 2
    A = rng.standard_normal((T, n, n)) * 0.4
    B = rng.standard_normal((T, n, s))
    Rn = np.array([[2.0, 0.9], [-0.9, 1.0]])
    ref = lqr.solve_discrete(A, B, 1.0, 0.5 * (Rn + Rn.T), 1.0)
    try:
        sol = lqr.solve_discrete(A, B, 1.0, Rn, 1.0)
    except ValueError as exc:
        assert "R" in str(exc)
        return
    np.testing.assert_allclose(sol.K, ref.K, rtol=1e-12, atol=1e-14)


def test_nonsymmetric_Q_is_refused_symmetric_within_rounding_is_its_symmetric_part(rng):
    """A clearly non-symmetric Q, Q[i] or Q_final is a mistake and is refused
    naming it and the entries; one symmetric to 1e-10 relative is taken as
    its symmetric part."""
    T, n, s = 5, 3, 2
    A = rng.standard_normal((T, n, n)) * 0.4
    B = rng.standard_normal((T, n, s))
    Qn = random_spd(rng, n) + np.triu(rng.standard_normal((n, n)), 1) * 0.3
    Qs = 0.5 * (Qn + Qn.T)
    with pytest.raises(ValueError, match=r"^Q must be symmetric .* got Q\[0, 1\] = "):
        lqr.solve_discrete(A, B, Qn, 1.0, Qs)
    with pytest.raises(ValueError, match=r"^Q\[3\] must be symmetric"):
        lqr.solve_discrete(A, B, np.stack([Qs, Qs, Qs, Qn, Qs]), 1.0, Qs)
    with pytest.raises(ValueError, match=r"^Q_final must be symmetric"):
        lqr.solve_discrete(A, B, Qs, 1.0, Qn)
    with pytest.raises(ValueError, match=r"^Q must be symmetric"):
        lqr.discretize(A, B[0], 0.1, Qn, 1.0)
    Qr = Qs + np.triu(np.full((n, n), 1e-13 * np.abs(Qs).max()), 1)
    a = lqr.solve_discrete(A, B, Qr, 1.0, Qr)
    b = lqr.solve_discrete(A, B, 0.5 * (Qr + Qr.T), 1.0, 0.5 * (Qr + Qr.T))
    np.testing.assert_allclose(a.K, b.K, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(a.P, b.P, rtol=1e-12, atol=1e-14)


# --------------------------------------------------------------- DARE limit
@pytest.mark.parametrize("cross", [False, True], ids=["noN", "N"])
@pytest.mark.parametrize("n,s", [(1, 1), (4, 2), (8, 8)])
def test_long_horizon_equals_dare(rng, n, s, cross):
    """Time-invariant problem, long horizon: K[0], P[0] -> SciPy's DARE."""
    A = random_stable(rng, n, radius=1.3)  # open-loop unstable: feedback matters
    B = rng.standard_normal((n, s))
    W = random_spd(rng, n + s, floor=0.3)
    Q, R = W[:n, :n], W[n:, n:]
    N = W[:n, n:] if cross else None
    P_are, K_are = dare_gain(A, B, Q, R, N)
    sol = lqr.solve_discrete(A, B, Q, R, np.zeros((n, n)), N=N, horizon=400)
    assert rel_err(sol.P[0], P_are) < 1e-8
    assert rel_err(sol.K[0], K_are) < 1e-8
    # and the DARE solution is a fixed point of the sweep
    fixed = lqr.solve_discrete(A, B, Q, R, P_are, N=N, horizon=25)
    for i in range(25):
        assert rel_err(fixed.P[i], P_are) < 1e-9
        assert rel_err(fixed.K[i], K_are) < 1e-9


# ---------------------------------------------------------------- properties
def test_cost_to_go_symmetric_psd_and_decreasing(rng):
    T, n, s = 30, 6, 3
    p = random_lq(rng, T, n, s)
    sol = _solve(p)
    P = sol.P
    np.testing.assert_array_equal(P, np.swapaxes(P, 1, 2))
    for i in range(T + 1):
        ev = np.linalg.eigvalsh(P[i])
        assert ev.min() >= -1e-12 * ev.max()
    # along the optimal trajectory V_i(x_i) - V_{i+1}(x_{i+1}) is the stage cost >= 0
    x0 = rng.standard_normal(n)
    x, u = closed_loop(p["A"], p["B"], sol.K, x0)
    V = np.array([x[i] @ P[i] @ x[i] for i in range(T + 1)])
    stage = np.array([x[i] @ p["Q"][i] @ x[i] + 2 * x[i] @ p["N"][i] @ u[i] + u[i] @ p["R"][i] @ u[i]
                      for i in range(T)])
    assert np.all(stage > 0)
    assert np.all(np.diff(V) < 0)
    np.testing.assert_allclose(V[:-1] - V[1:], stage, rtol=1e-8, atol=1e-12 * V[0])
    for i in (0, T // 2, T):
        assert sol.cost_to_go(x[i], i) == pytest.approx(V[i], rel=1e-12)


def test_zero_control_weight_directions_still_pd_via_BPB(rng):
    """R only needs R + B'PB > 0 in the sweep: R = 0 is fine where B'PB is
    definite, and refused naming R (and the step) where it is not."""
    A = np.eye(2)
    B = np.array([[1.0], [0.0]])
    sol = lqr.solve_discrete(A, B, 1.0, 0.0, 1.0, horizon=3)
    np.testing.assert_allclose(sol.K[2], [[-1.0, 0.0]], rtol=0, atol=1e-15)  # u = -x_0: x_0 costs, u is free
    with pytest.raises(ValueError, match=r"not positive definite at step 2: its Cholesky pivot 0 is 0 .*"
                                         r"R is singular .* B' P B does not make up for it"):
        lqr.solve_discrete(A, B, 1.0, 0.0, np.diag([0.0, 1.0]), horizon=3)


# ------------------------------------------------------------------- views
def test_gains_are_readonly_views_kept_alive_by_the_owner(rng):
    p = random_lq(rng, 8, 4, 2)
    sol = _solve(p)
    K1, K2, P1 = sol.K, sol.K, sol.P
    assert K1 is not K2
    assert np.shares_memory(K1, K2)  # two accesses view the same C++ buffer
    assert not K1.flags.writeable and not P1.flags.writeable
    assert not K1.flags.owndata
    assert K1.flags.c_contiguous and K1.dtype == np.float64
    with pytest.raises(ValueError):
        K1[0, 0, 0] = 1.0
    owner = K1.base
    while isinstance(owner, np.ndarray):
        owner = owner.base
    assert isinstance(owner, lqr.LQRSolution)
    K_copy, P_copy = np.array(K1), np.array(P1)
    del sol, owner
    gc.collect()
    junk = [np.full(K_copy.shape, -7.0) for _ in range(50)]  # reuse freed memory, if any was freed
    np.testing.assert_array_equal(K1, K_copy)
    np.testing.assert_array_equal(P1, P_copy)
    np.testing.assert_array_equal(K2, K_copy)
    del junk
    # a slice of a view keeps the owner alive too
    sol = _solve(p)
    row = sol.K[3]
    ref = np.array(row)
    del sol
    gc.collect()
    np.testing.assert_array_equal(row, ref)


def test_solution_from_arrays_copies(rng):
    K = rng.standard_normal((4, 2, 3))
    P = rng.standard_normal((5, 3, 3))
    sol = lqr.LQRSolution(K, P)
    np.testing.assert_array_equal(sol.K, K)
    np.testing.assert_array_equal(sol.P, P)
    K[:] = 0
    assert not np.array_equal(sol.K, K)


@pytest.mark.parametrize("case", list(SHAPE_CASES))
def test_solve_discrete_wrong_shapes(rng, case):
    name, make = SHAPE_CASES[case]
    a = small_lq(rng)
    a[name] = make(a)
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        lqr.solve_discrete(**a)


def test_shape_message_gives_expected_shape(rng):
    a = small_lq(rng)
    a["B"] = a["B"][:, :2]
    with pytest.raises(ValueError, match=r"B must have shape \(3, 2\) or \(4, 3, 2\), got \(4, 2, 2\)"):
        lqr.solve_discrete(**a)


def test_mismatched_horizons(rng):
    a = small_lq(rng)
    for name in ("B", "Q", "R", "N"):
        b = dict(a)
        b[name] = a[name][:T - 1]
        with pytest.raises(ValueError, match=rf"{name} has {T - 1} steps but the horizon is {T}"):
            lqr.solve_discrete(**b)
    with pytest.raises(ValueError, match="horizon"):
        lqr.solve_discrete(**a, horizon=T + 1)
    with pytest.raises(ValueError, match=r"\bB\b.*horizon"):
        lqr.discretize(**continuous_args(dict(a, B=a["B"][:2])))
    with pytest.raises(ValueError, match="horizon"):
        lqr.discretize(**continuous_args(a), horizon=T + 3)


def test_horizon_missing_or_invalid(rng):
    a = small_lq(rng)
    const = dict(A=a["A"][0], B=a["B"][0], Q=np.eye(n), R=np.eye(s), Q_final=np.eye(n), N=a["N"][0])
    with pytest.raises(ValueError, match="horizon"):
        lqr.solve_discrete(**const)
    with pytest.raises(ValueError, match="horizon"):
        lqr.discretize(const["A"], const["B"], 0.1, 1.0, 1.0)
    for bad in (0, -3):
        with pytest.raises(ValueError, match="horizon"):
            lqr.solve_discrete(**const, horizon=bad)
        with pytest.raises(ValueError, match="horizon"):
            lqr.discretize(const["A"], const["B"], 0.1, 1.0, 1.0, horizon=bad)
    for bad in (3.0, "3", True):
        with pytest.raises(TypeError, match="horizon"):
            lqr.solve_discrete(**const, horizon=bad)
    with pytest.raises(ValueError, match="horizon"):  # an empty sequence is no horizon either
        lqr.solve_discrete(a["A"][:0], a["B"][:0], 1.0, 1.0, 1.0)
    assert lqr.solve_discrete(**const, horizon=np.int64(3)).horizon == 3


@pytest.mark.parametrize("name,kind", [(nm, k) for nm in ("A", "B", "Q", "R", "Q_final", "N") for k in BAD_DTYPES
                                       if not (nm == "N" and k == "None")])  # N=None: no cross term
def test_solve_discrete_bad_dtypes(rng, name, kind):
    a = small_lq(rng)
    a[name] = BAD_DTYPES[kind](a[name])
    with pytest.raises(TypeError, match=rf"\b{name}\b"):
        lqr.solve_discrete(**a)


def test_complex_scalar_weight(rng):
    a = small_lq(rng)
    with pytest.raises(TypeError, match=r"\bQ\b"):
        lqr.solve_discrete(a["A"], a["B"], 1 + 1j, 1.0, 1.0)


def test_other_real_dtypes_are_converted(rng):
    """int / float32 / bool-free real input: same result as the float64 values."""
    A = rng.integers(-2, 3, (T, n, n)).astype(np.int32)
    B = rng.integers(-2, 3, (T, n, s)).astype(np.int64)
    Q32 = np.eye(n, dtype=np.float32) * 2
    ref = lqr.solve_discrete(A.astype(float) * 0.25, B.astype(float), Q32.astype(float), 1.0, 1.0)
    got = lqr.solve_discrete((A * 0.25).astype(np.float32), B, Q32, np.eye(s, dtype=np.int16), 1)
    np.testing.assert_array_equal(got.K, ref.K)
    lists = lqr.solve_discrete((A * 0.25).tolist(), B.tolist(), Q32.tolist(), np.eye(s).tolist(), 1.0)
    np.testing.assert_array_equal(lists.K, ref.K)


@pytest.mark.parametrize("name", ["A", "B", "Q", "R", "N", "Q_final"])
def test_solve_discrete_noncontiguous_same_result(rng, name):
    a = small_lq(rng)
    a["Q"] = a["Q"] + 0.1 * np.swapaxes(a["A"], 1, 2) @ a["A"]  # not a multiple of I
    a["Q_final"] = a["Q"][0] + np.diag([0.0, 1.0, 2.0])
    ref = lqr.solve_discrete(**a)
    for kind, v in noncontiguous_views(a[name]).items():
        got = lqr.solve_discrete(**dict(a, **{name: v}))
        np.testing.assert_array_equal(got.K, ref.K, err_msg=kind)
        np.testing.assert_array_equal(got.P, ref.P, err_msg=kind)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("where", ["first", "last"])
@pytest.mark.parametrize("name", ["A", "B", "Q", "R", "N", "Q_final"])
def test_solve_discrete_nonfinite(rng, name, where, bad):
    a = small_lq(rng)
    x = a[name].copy()
    x.flat[0 if where == "first" else -1] = bad
    a[name] = x
    with pytest.raises(ValueError, match=rf"\b{name}\b.*finite"):
        lqr.solve_discrete(**a)


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_nonfinite_scalar_weights(rng):
    a = small_lq(rng)
    for bad in (np.nan, np.inf):
        with pytest.raises(ValueError, match=r"\bQ\b"):
            lqr.solve_discrete(a["A"], a["B"], bad, 1.0, 1.0)
        with pytest.raises(ValueError, match=r"\bQ_final\b"):
            lqr.solve_discrete(a["A"], a["B"], 1.0, 1.0, bad)
        with pytest.raises(ValueError, match=r"\bR\b"):
            lqr.discretize(a["A"], a["B"], 0.1, 1.0, bad)


def test_overflowing_problems_raise_instead_of_nan(rng):
    a = small_lq(rng)
    with pytest.raises(ValueError, match="non-finite"):
        lqr.solve_discrete(**dict(a, A=a["A"] * 1e80))
    with pytest.raises(ValueError, match="reduce dt"):
        lqr.discretize(np.eye(n) * 800, a["B"][0], 1.0, 1.0, 1.0, horizon=2)
    with pytest.raises(ValueError, match="reduce dt"):
        lqr.discretize(np.eye(n) * 1e10, a["B"][0], 1.0, 1.0, 1.0, horizon=2)


@pytest.mark.parametrize("R,match", [(-np.eye(s), "positive semidefinite, got smallest eigenvalue -1"),
                                     (np.diag([1.0, -1e-3]), "positive semidefinite, got smallest eigenvalue -0.001"),
                                     (np.array([[1.0, 5.0], [0.0, 1.0]]), "symmetric")],
                         ids=["negative", "indefinite", "nonsym"])
def test_R_not_positive_semidefinite(rng, R, match):
    check_both_refuse_R(small_lq(rng), R, r"^R must be .*" + match)


@pytest.mark.parametrize("R", [np.zeros((s, s)), np.diag([1.0, 0.0])], ids=["zero", "singular"])
def test_semidefinite_R_is_accepted_where_BPB_makes_up(rng, R):
    """Zero or singular R: the sweep runs (B'PB is definite here) and equals the dense optimum."""
    a = small_lq(rng)
    sol = lqr.solve_discrete(**dict(a, R=R))
    Kb, P0 = dense_lq(a["A"], a["B"], a["Q"], np.broadcast_to(R, (T,) + R.shape), a["Q_final"], a["N"])
    assert rel_err(sol.P[0], P0) < 1e-9
    assert rel_err(sol.K[0], Kb[0]) < 1e-9


def test_R_sequence_with_one_bad_step_names_the_step(rng):
    a = small_lq(rng)
    R = a["R"].copy()
    R[2] = -np.eye(s)
    check_both_refuse_R(a, R, r"R\[2\].*positive semidefinite")


def check_both_refuse_R(a, R, match):
    """solve_discrete and discretize of the problem ``a`` with ``R`` raise a ValueError matching ``match``."""
    with pytest.raises(ValueError, match=match):
        lqr.solve_discrete(**dict(a, R=R))
    with pytest.raises(ValueError, match=match):
        lqr.discretize(a["A"], a["B"], 0.1, a["Q"], R)


def test_scalar_R_not_positive(rng):
    a = small_lq(rng)
    for bad in (-1.0,):
        with pytest.raises(ValueError, match=r"\bR\b"):
            lqr.solve_discrete(a["A"], a["B"], 1.0, bad, 1.0)
        with pytest.raises(ValueError, match=r"\bR\b"):
            lqr.solve_continuous(a["A"], a["B"], 0.1, 1.0, bad, 1.0)


def test_empty_control_dimension():
    """s = 0 (no control): either a ValueError or the plain cost of the free motion."""
    try:
        sol = lqr.solve_discrete(np.eye(2) * 0.5, np.zeros((2, 0)), 1.0, np.zeros((0, 0)), 1.0, horizon=3)
    except ValueError as exc:
        assert "s = 0" in str(exc) or "B" in str(exc)
        return
    assert sol.K.shape == (3, 0, 2)
    np.testing.assert_allclose(sol.P[0], (1 + 0.25 + 0.25**2 + 0.25**3) * np.eye(2), rtol=1e-15)
