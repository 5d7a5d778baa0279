"""Bad input (issue 2, sec. 5): every mistake gives a ValueError/TypeError that
names the argument -- never a crash, never a silent NaN or a misread array --
and the progress/interrupt contract of the long precomputations."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import directable as dr
from directable import _core, lqr, models, sim

T, n, s = 4, 3, 2


def _base(rng):
    return dict(A=rng.standard_normal((T, n, n)) * 0.4, B=rng.standard_normal((T, n, s)),
                Q=np.tile(np.eye(n), (T, 1, 1)), R=np.tile(np.eye(s), (T, 1, 1)), Q_final=np.eye(n),
                N=0.05 * rng.standard_normal((T, n, s)))


def _disc_args(a):
    return dict(A=a["A"], B=a["B"], dt=0.1, Q=a["Q"], R=a["R"])


# ------------------------------------------------------------------- shapes
SHAPE_CASES = {
    "A non-square": ("A", lambda a: a["A"][:, :, :2]),
    "A 1-D": ("A", lambda a: np.ones(3)),
    "A 4-D": ("A", lambda a: a["A"][None]),
    "B rows": ("B", lambda a: a["B"][:, :2]),
    "B 1-D": ("B", lambda a: np.ones(3)),
    "Q shape": ("Q", lambda a: np.eye(n + 1)),
    "Q 4-D": ("Q", lambda a: a["Q"][None]),
    "R shape": ("R", lambda a: np.eye(s + 1)),
    "R 1-D": ("R", lambda a: np.ones(s)),
    "N shape": ("N", lambda a: np.zeros((T, n, n))),
    "Q_final shape": ("Q_final", lambda a: np.eye(n - 1)),
    "Q_final 3-D": ("Q_final", lambda a: np.eye(n)[None]),
}


@pytest.mark.parametrize("case", list(SHAPE_CASES))
def test_solve_discrete_wrong_shapes(rng, case):
    name, make = SHAPE_CASES[case]
    a = _base(rng)
    a[name] = make(a)
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        lqr.solve_discrete(**a)


@pytest.mark.parametrize("case", [c for c in SHAPE_CASES if SHAPE_CASES[c][0] in ("A", "B", "Q", "R")])
def test_discretize_wrong_shapes(rng, case):
    name, make = SHAPE_CASES[case]
    a = _base(rng)
    a[name] = make(a)
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        lqr.discretize(**_disc_args(a))


def test_shape_message_gives_expected_shape(rng):
    a = _base(rng)
    a["B"] = a["B"][:, :2]
    with pytest.raises(ValueError, match=r"B must have shape \(3, 2\) or \(4, 3, 2\), got \(4, 2, 2\)"):
        lqr.solve_discrete(**a)


# ----------------------------------------------------------------- horizons
def test_mismatched_horizons(rng):
    a = _base(rng)
    for name in ("B", "Q", "R", "N"):
        b = dict(a)
        b[name] = a[name][:T - 1]
        with pytest.raises(ValueError, match=rf"{name} has {T - 1} steps but the horizon is {T}"):
            lqr.solve_discrete(**b)
    with pytest.raises(ValueError, match="horizon"):
        lqr.solve_discrete(**a, horizon=T + 1)
    with pytest.raises(ValueError, match=r"\bB\b.*horizon"):
        lqr.discretize(**_disc_args(dict(a, B=a["B"][:2])))
    with pytest.raises(ValueError, match="horizon"):
        lqr.discretize(**_disc_args(a), horizon=T + 3)


def test_horizon_missing_or_invalid(rng):
    a = _base(rng)
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


# ------------------------------------------------------------------- dtypes
BAD_DTYPES = {
    "complex": lambda x: np.asarray(x) + 0j,
    "object": lambda x: np.asarray(x).astype(object),
    "string": lambda x: np.asarray(x).astype(str),
    "ragged": lambda x: [[1.0, 2.0], [3.0]],
    "None": lambda x: None,
}


@pytest.mark.parametrize("name,kind", [(nm, k) for nm in ("A", "B", "Q", "R", "Q_final", "N") for k in BAD_DTYPES
                                       if not (nm == "N" and k == "None")])  # N=None: no cross term
def test_solve_discrete_bad_dtypes(rng, name, kind):
    a = _base(rng)
    a[name] = BAD_DTYPES[kind](a[name])
    with pytest.raises(TypeError, match=rf"\b{name}\b"):
        lqr.solve_discrete(**a)


@pytest.mark.parametrize("kind", ["complex", "object", "string"])
@pytest.mark.parametrize("name", ["A", "B", "Q", "R"])
def test_discretize_bad_dtypes(rng, name, kind):
    a = _base(rng)
    a[name] = BAD_DTYPES[kind](a[name])
    with pytest.raises(TypeError, match=rf"\b{name}\b"):
        lqr.discretize(**_disc_args(a))


def test_complex_scalar_weight(rng):
    a = _base(rng)
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


# ---------------------------------------------------------- non-contiguous
def _noncontiguous(x):
    """Views with the values of x but not C-contiguous: Fortran order, a
    stepped slice, negative strides, a transposed view."""
    x = np.asarray(x, float)
    out = {}
    if x.ndim >= 2:
        out["fortran"] = np.asfortranarray(x)
        out["transposed"] = np.ascontiguousarray(np.swapaxes(x, -1, -2)).swapaxes(-1, -2)
    big = np.full(x.shape[:-1] + (2 * x.shape[-1],), np.nan)
    big[..., ::2] = x
    out["stepped"] = big[..., ::2]
    out["reversed"] = np.ascontiguousarray(x[::-1])[::-1]
    for k, v in out.items():
        assert np.array_equal(v, x)
        if x.size > 1 and x.shape[-1] > 1:
            assert not v.flags.c_contiguous or k == "reversed" and x.shape[0] == 1, k
    return out


@pytest.mark.parametrize("name", ["A", "B", "Q", "R", "N", "Q_final"])
def test_solve_discrete_noncontiguous_same_result(rng, name):
    a = _base(rng)
    a["Q"] = a["Q"] + 0.1 * np.swapaxes(a["A"], 1, 2) @ a["A"]  # not a multiple of I
    a["Q_final"] = a["Q"][0] + np.diag([0.0, 1.0, 2.0])
    ref = lqr.solve_discrete(**a)
    for kind, v in _noncontiguous(a[name]).items():
        got = lqr.solve_discrete(**dict(a, **{name: v}))
        np.testing.assert_array_equal(got.K, ref.K, err_msg=kind)
        np.testing.assert_array_equal(got.P, ref.P, err_msg=kind)


@pytest.mark.parametrize("name", ["A", "B", "Q", "R"])
def test_discretize_noncontiguous_same_result(rng, name):
    a = _base(rng)
    ref = lqr.discretize(**_disc_args(a))
    for kind, v in _noncontiguous(a[name]).items():
        got = lqr.discretize(**_disc_args(dict(a, **{name: v})))
        for f in ("Phi", "Gamma", "Q", "N", "R"):
            np.testing.assert_array_equal(getattr(got, f), getattr(ref, f), err_msg=f"{kind} {f}")


def test_retune_noncontiguous_same_result(rng):
    a = _base(rng)
    d = lqr.discretize(**_disc_args(a))
    Qf = np.arange(9.0).reshape(3, 3) / 10 + np.eye(3)
    Rn = np.array([[2.0, 0.3], [0.3, 1.0]])
    ref = lqr.retune(d, Qf, 1.0, 2.0, R=Rn)
    for v in _noncontiguous(Qf).values():
        np.testing.assert_array_equal(lqr.retune(d, v, 1.0, 2.0, R=Rn).K, ref.K)
    for v in _noncontiguous(Rn).values():
        np.testing.assert_array_equal(lqr.retune(d, Qf, 1.0, 2.0, R=v).K, ref.K)
        np.testing.assert_array_equal(d.solve(Qf, 1.0, 2.0, v).K, ref.K)


def test_tracker_and_simulation_noncontiguous_same_result(rng, make_chain):
    chain = make_chain(2)
    Tt = 10
    K = rng.standard_normal((Tt, 2, 4))
    z_ref = 0.1 * rng.standard_normal((Tt + 1, 4))
    w_ff = rng.standard_normal((Tt, 2))
    D = rng.standard_normal((Tt, 2))
    kicks = 0.01 * rng.standard_normal((Tt, 4))
    z0 = np.array([0.1, -0.1, 0.0, 0.2])
    ref = sim.simulate(chain, z0, Tt, 0.01, controller=lqr.tracker(K, z_ref, w_ff), disturbance=D, kicks=kicks)
    tr = lqr.tracker(K, z_ref, w_ff)
    w_ref = tr.control(z0)
    for kind, Kv in _noncontiguous(K).items():
        zr, ff = _noncontiguous(z_ref)[kind], _noncontiguous(w_ff)[kind]
        tv = lqr.tracker(Kv, zr, ff)
        # also the raw class (direct C++ binding)
        tv2 = lqr.Tracker(Kv, zr, ff)
        for t in (tv, tv2):
            np.testing.assert_array_equal(t.K, K)
            np.testing.assert_array_equal(t.control(z0), w_ref)
        res = sim.simulate(chain, _noncontiguous(z0)["stepped"], Tt, 0.01, controller=tv,
                           disturbance=_noncontiguous(D)[kind], kicks=_noncontiguous(kicks)[kind])
        np.testing.assert_array_equal(res.states, ref.states, err_msg=kind)
    # per-step calls with strided vectors
    for v in _noncontiguous(z0).values():
        np.testing.assert_array_equal(tr.control(v), w_ref)
        np.testing.assert_array_equal(chain.step(v, _noncontiguous(w_ref)["stepped"], 0.01),
                                      chain.step(z0, w_ref, 0.01))
        np.testing.assert_array_equal(chain.jacobian(v), chain.jacobian(z0))
        np.testing.assert_array_equal(chain.dynamics(v), chain.dynamics(z0))
        assert tr.nearest_index(v, weights=_noncontiguous(np.arange(1.0, 5.0))["stepped"]) == \
            tr.nearest_index(z0, weights=np.arange(1.0, 5.0))
    Z = 0.2 * rng.standard_normal((6, 4))
    for kind, v in _noncontiguous(Z).items():
        np.testing.assert_array_equal(models.linearize(chain, v, 0.01), models.linearize(chain, Z, 0.01))


def test_pd_gain_noncontiguous(rng):
    kp = np.array([1.0, 2.0, 3.0])
    S = np.array([[1.0, 0.0], [0.0, 0.5], [0.0, 1.0]])  # (m, s), as a model's actuation
    ref = lqr.pd_gain(kp[:2], 0.5, 6, actuated=S)
    for v in _noncontiguous(S).values():
        np.testing.assert_array_equal(lqr.pd_gain(kp[:2], 0.5, 6, actuated=v), ref)
    np.testing.assert_array_equal(lqr.pd_gain(np.array([1.0, 9.0, 2.0])[::2], 0.5, 6, actuated=S), ref)


# ---------------------------------------------------------------- NaN / inf
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("where", ["first", "last"])
@pytest.mark.parametrize("name", ["A", "B", "Q", "R", "N", "Q_final"])
def test_solve_discrete_nonfinite(rng, name, where, bad):
    a = _base(rng)
    x = a[name].copy()
    x.flat[0 if where == "first" else -1] = bad
    a[name] = x
    with pytest.raises(ValueError, match=rf"\b{name}\b.*finite"):
        lqr.solve_discrete(**a)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("name", ["A", "B", "Q", "R"])
def test_discretize_nonfinite(rng, name, bad):
    a = _base(rng)
    x = a[name].copy()
    x.flat[-1] = bad
    a[name] = x
    with pytest.raises(ValueError, match=rf"\b{name}\b.*finite"):
        lqr.discretize(**_disc_args(a))


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_nonfinite_scalar_weights(rng):
    a = _base(rng)
    for bad in (np.nan, np.inf):
        with pytest.raises(ValueError, match=r"\bQ\b"):
            lqr.solve_discrete(a["A"], a["B"], bad, 1.0, 1.0)
        with pytest.raises(ValueError, match=r"\bQ_final\b"):
            lqr.solve_discrete(a["A"], a["B"], 1.0, 1.0, bad)
        with pytest.raises(ValueError, match=r"\bR\b"):
            lqr.discretize(a["A"], a["B"], 0.1, 1.0, bad)


def test_overflowing_problems_raise_instead_of_nan(rng):
    a = _base(rng)
    with pytest.raises(ValueError, match="non-finite"):
        lqr.solve_discrete(**dict(a, A=a["A"] * 1e80))
    with pytest.raises(ValueError, match="reduce dt"):
        lqr.discretize(np.eye(n) * 800, a["B"][0], 1.0, 1.0, 1.0, horizon=2)
    with pytest.raises(ValueError, match="reduce dt"):
        lqr.discretize(np.eye(n) * 1e10, a["B"][0], 1.0, 1.0, 1.0, horizon=2)


# ------------------------------------------------------------ definiteness
@pytest.mark.parametrize("R", [-np.eye(s), np.zeros((s, s)), np.diag([1.0, 0.0]), np.diag([1.0, -1e-3]),
                               np.array([[1.0, 5.0], [0.0, 1.0]])],
                         ids=["negative", "zero", "singular", "indefinite", "nonsym-indefinite"])
def test_R_not_positive_definite(rng, R):
    a = _base(rng)
    with pytest.raises(ValueError, match=r"\bR\b.*positive definite"):
        lqr.solve_discrete(**dict(a, R=R))
    with pytest.raises(ValueError, match=r"\bR\b.*positive definite"):
        lqr.discretize(a["A"], a["B"], 0.1, a["Q"], R)


@pytest.mark.parametrize("R", [np.zeros((s, s)), np.diag([1.0, 0.0]), np.diag([1.0, -1e-3])],
                         ids=["zero", "singular", "indefinite"])
def test_retune_R_not_positive_definite(rng, R):
    # regression: a replacement R in retune() was once not checked for definiteness
    d = lqr.discretize(**_disc_args(_base(rng)))
    with pytest.raises(ValueError, match=r"\bR\b.*positive definite"):
        lqr.retune(d, np.eye(n), R=R)


def test_retune_R_negative_definite(rng):
    d = lqr.discretize(**_disc_args(_base(rng)))
    with pytest.raises(ValueError, match=r"\bR\b.*positive definite"):
        lqr.retune(d, np.eye(n), R=-np.eye(s))


def test_R_sequence_with_one_bad_step_names_the_step(rng):
    a = _base(rng)
    R = a["R"].copy()
    R[2] = -np.eye(s)
    with pytest.raises(ValueError, match=r"R\[2\].*positive definite"):
        lqr.solve_discrete(**dict(a, R=R))
    with pytest.raises(ValueError, match=r"R\[2\].*positive definite"):
        lqr.discretize(a["A"], a["B"], 0.1, a["Q"], R)


def test_scalar_R_not_positive(rng):
    a = _base(rng)
    for bad in (0.0, -1.0):
        with pytest.raises(ValueError, match=r"\bR\b"):
            lqr.solve_discrete(a["A"], a["B"], 1.0, bad, 1.0)
        with pytest.raises(ValueError, match=r"\bR\b"):
            lqr.solve_continuous(a["A"], a["B"], 0.1, 1.0, bad, 1.0)


# --------------------------------------------------------- dt, method, ...
@pytest.mark.parametrize("dt", [0.0, -0.1, np.nan, np.inf, -np.inf])
def test_dt_not_positive(rng, dt):
    a = _base(rng)
    with pytest.raises(ValueError, match=r"\bdt\b"):
        lqr.discretize(**dict(_disc_args(a), dt=dt))
    with pytest.raises(ValueError, match=r"\bdt\b"):
        lqr.solve_continuous(a["A"], a["B"], dt, 1.0, 1.0, 1.0)


def test_dt_wrong_type(rng):
    a = _base(rng)
    for dt in ("x", 0.1j, np.array([0.1, 0.2]), None):
        with pytest.raises(TypeError, match=r"\bdt\b"):
            lqr.discretize(**dict(_disc_args(a), dt=dt))


def test_dt_in_models_and_simulation(rng, make_chain):
    chain = make_chain(2)
    for dt in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match=r"\bdt\b"):
            sim.simulate(chain, np.zeros(4), 3, dt)
        with pytest.raises(ValueError, match=r"\bdt\b"):
            dr.Simulation(chain, np.zeros(4), dt)
        with pytest.raises(ValueError, match=r"\bdt\b"):
            chain.step(np.zeros(4), np.zeros(2), dt)
        with pytest.raises(ValueError, match=r"\bdt\b"):
            models.linearize(chain, np.zeros((3, 4)), dt)


@pytest.mark.parametrize("method", ["euler", "Exact", "", None, 1])
def test_bad_method(rng, method):
    a = _base(rng)
    with pytest.raises(ValueError, match="method"):
        lqr.discretize(**_disc_args(a), method=method)
    with pytest.raises(ValueError, match="method"):
        lqr.solve_continuous(a["A"], a["B"], 0.1, 1.0, 1.0, 1.0, method=method)


@pytest.mark.parametrize("intervals", [3, 1, 0, -2, 11])
def test_bad_simpson_intervals(rng, intervals):
    a = _base(rng)
    with pytest.raises(ValueError, match="intervals"):
        lqr.discretize(**_disc_args(a), method="simpson", intervals=intervals)
    # the exact method ignores them
    lqr.discretize(**_disc_args(a), method="exact", intervals=intervals)


def test_bad_retune_scales(rng):
    d = lqr.discretize(**_disc_args(_base(rng)))
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


# ---------------------------------------------------- tracker / simulation
def test_tracker_bad_input(rng):
    K = rng.standard_normal((T, s, n))
    z_ref = rng.standard_normal((T + 1, n))
    w_ff = rng.standard_normal((T, s))
    cases = [
        (TypeError, "K", lambda: lqr.tracker(K + 0j, z_ref)),
        (TypeError, "z_ref", lambda: lqr.tracker(K, z_ref.astype(str))),
        (TypeError, "w_ff", lambda: lqr.tracker(K, z_ref, w_ff.astype(object))),
        (ValueError, "K", lambda: lqr.tracker(K[:, :, :2], z_ref)),
        (ValueError, "K", lambda: lqr.tracker(K[:2], z_ref)),
        (ValueError, "z_ref", lambda: lqr.tracker(K, z_ref[0])),
        (ValueError, "z_ref", lambda: lqr.tracker(K, z_ref[:1])),
        (ValueError, "w_ff", lambda: lqr.tracker(K, z_ref, w_ff[:2])),
        (ValueError, "w_ff", lambda: lqr.tracker(K, z_ref, w_ff[:, :1])),
        (ValueError, "w_min", lambda: lqr.tracker(K, z_ref, w_min=np.zeros(s + 1))),
        (ValueError, "w_max", lambda: lqr.tracker(K, z_ref, w_max=np.zeros(s + 1))),
        (ValueError, "w_min", lambda: lqr.tracker(K, z_ref, w_min=np.ones(s), w_max=-np.ones(s))),
        (ValueError, "K", lambda: lqr.tracker(np.where(np.arange(K.size).reshape(K.shape) == 7, np.nan, K), z_ref)),
        (ValueError, "z_ref", lambda: lqr.tracker(K, np.where(np.arange(z_ref.size).reshape(z_ref.shape) == 5,
                                                              np.inf, z_ref))),
        (ValueError, "w_ff", lambda: lqr.tracker(K, z_ref, np.full((T, s), np.nan))),
    ]
    for exc, name, f in cases:
        with pytest.raises(exc, match=rf"\b{name}\b"):
            f()
    tr = lqr.tracker(K, z_ref, w_ff)
    with pytest.raises(ValueError, match=r"\bz\b"):
        tr.control(np.zeros(n + 1))
    with pytest.raises(ValueError, match=r"\bz\b"):
        tr.control(np.zeros((1, n)))
    with pytest.raises(ValueError, match=r"\bw\b"):
        tr.control_into(np.zeros(n), np.zeros(s + 1), np.zeros(s))
    ro = np.zeros(s)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        tr.control_into(np.zeros(n), ro, np.zeros(s))


@pytest.mark.parametrize("out", ["float32", "int64", "strided"])
def test_control_into_never_silently_drops_the_output(rng, out):
    tr = lqr.tracker(np.ones((T, s, n)), np.zeros((T + 1, n)), np.ones((T, s)))
    z = np.arange(1.0, n + 1)
    expect = tr.control(z)
    if out == "strided":
        buf = np.zeros(2 * s)
        w = buf[::2]
    else:
        w = np.zeros(s, dtype=out)
    try:
        tr.control_into(z, w, np.zeros(s))
    except (TypeError, ValueError):
        return  # refusing the array is fine
    np.testing.assert_array_equal(w, expect.astype(w.dtype))


def test_simulate_bad_input(rng, make_chain):
    chain = make_chain(2)
    tr = lqr.tracker(np.zeros((5, 2, 4)), np.zeros((6, 4)))
    cases = [
        (ValueError, "z0", lambda: sim.simulate(chain, np.zeros(3), 5, 0.01)),
        (TypeError, "z0", lambda: sim.simulate(chain, np.zeros(4) + 0j, 5, 0.01)),
        (ValueError, "z0", lambda: sim.simulate(chain, np.array([np.nan, 0, 0, 0]), 5, 0.01)),
        (ValueError, "steps", lambda: sim.simulate(chain, np.zeros(4), 0, 0.01)),
        (ValueError, "steps", lambda: sim.simulate(chain, np.zeros(4), -2, 0.01)),
        (ValueError, "disturbance", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01, disturbance=np.zeros((4, 2)))),
        (ValueError, "disturbance", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01, disturbance=np.zeros((5, 3)))),
        (ValueError, "disturbance", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01,
                                                         disturbance=np.full((5, 2), np.inf))),
        (TypeError, "disturbance", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01,
                                                        disturbance=np.zeros((5, 2)).astype(str))),
        (ValueError, "open_loop", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01, open_loop=np.zeros((5, 1)))),
        (ValueError, "open_loop", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01,
                                                       open_loop=np.full((5, 2), np.nan))),
        (ValueError, "open_loop", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01, controller=tr,
                                                       open_loop=np.zeros((5, 2)))),
        (ValueError, "kicks", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01, kicks=np.zeros((5, 2)))),
        (ValueError, "kicks", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01, kicks=np.full((5, 4), np.nan))),
        (ValueError, "jump_steps", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01, controller=tr,
                                                        jump_steps=[5])),
        (ValueError, "jump_steps", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01, controller=tr,
                                                        jump_steps=[-1])),
        (ValueError, "jump_steps", lambda: sim.simulate(chain, np.zeros(4), 5, 0.01, jump_steps=[1])),
        (ValueError, "controller", lambda: sim.simulate(make_chain(3), np.zeros(6), 5, 0.01, controller=tr)),
    ]
    for exc, name, f in cases:
        with pytest.raises(exc, match=name):
            f()
    # divergence is reported, not returned as NaN/inf states
    with pytest.raises(ValueError, match="non-finite|diverged"):
        sim.simulate(chain, np.array([1e200, 0.0, 0.0, 0.0]), 3, 0.01)
    stepper = dr.Simulation(chain, np.zeros(4), 0.01)
    with pytest.raises(ValueError, match="w_ext"):
        stepper.step(w_ext=np.array([np.nan, 0.0]))
    with pytest.raises(ValueError, match="w_ext"):
        stepper.step(w_ext=np.zeros(3))
    with pytest.raises(ValueError, match="kick"):
        stepper.step(kick=np.full(4, np.inf))
    with pytest.raises(ValueError, match="w_open"):
        stepper.step(w_open=np.zeros(1))
    with pytest.raises(ValueError, match=r"\bz\b|state"):
        stepper.state = np.array([np.nan, 0, 0, 0])
    with pytest.raises(ValueError, match="z0"):
        dr.Simulation(chain, np.zeros(5), 0.01)
    with pytest.raises(ValueError, match="controller"):
        dr.Simulation(make_chain(3), np.zeros(6), 0.01, controller=tr)
    assert stepper.steps == 0  # the failed calls did not step


def test_simulate_controller_wrong_type(make_chain):
    # regression: a non-Tracker controller once gave AttributeError
    with pytest.raises(TypeError, match="controller"):
        sim.simulate(make_chain(2), np.zeros(4), 5, 0.01, controller="lqr")


def test_simulate_controller_wrong_type_without_start_index(make_chain):
    with pytest.raises(TypeError):
        sim.simulate(make_chain(2), np.zeros(4), 5, 0.01, controller="lqr", start_index=None)


def test_models_bad_input(rng, make_chain):
    chain = make_chain(2)
    cases = [
        (ValueError, "masses", lambda: models.spring_chain(0)),
        (ValueError, "masses", lambda: make_chain(2, mass=[1.0, -1.0])),
        (ValueError, "masses", lambda: make_chain(2, mass=[1.0, np.inf])),
        (ValueError, "stiffness", lambda: make_chain(2, stiffness=[1.0, np.nan])),
        (ValueError, "damping", lambda: make_chain(2, damping=[-1.0, 0.0])),
        (TypeError, "masses", lambda: models.spring_chain(np.ones(2) + 0j)),
        (ValueError, "actuated", lambda: make_chain(2, actuated=[2])),
        (ValueError, "actuated", lambda: make_chain(2, actuated=[-1])),
        (ValueError, "actuated", lambda: make_chain(2, actuated=np.ones((3, 1)))),
        (ValueError, "stiffness", lambda: models.spring_chain(np.ones(3), stiffness=np.ones(2), cubic=np.ones(3),
                                                              damping=np.ones(3))),
        (ValueError, r"\bz\b", lambda: chain.dynamics(np.zeros(3))),
        (ValueError, r"\bz\b", lambda: chain.jacobian(np.zeros(5))),
        (ValueError, r"\bz\b", lambda: chain.energy(np.zeros(3))),
        (ValueError, r"\bw\b", lambda: chain.step(np.zeros(4), np.zeros(3), 0.01)),
        (ValueError, "non-finite", lambda: chain.step(np.array([np.nan, 0, 0, 0]), np.zeros(2), 0.01)),
        (ValueError, "z_ref", lambda: models.linearize(chain, np.zeros((5, 3)), 0.01)),
        (ValueError, "z_ref", lambda: models.linearize(chain, np.zeros(4), 0.01)),
        (ValueError, "z_ref", lambda: models.linearize(chain, np.full((5, 4), np.nan), 0.01)),
        (TypeError, "z_ref", lambda: models.linearize(chain, np.zeros((5, 4)) + 0j, 0.01)),
        (ValueError, "z_ref", lambda: models.linearize(chain, np.zeros((3, 4)), 0.01, horizon=5)),
        (ValueError, r"\bw\b", lambda: models.rollout(chain, np.zeros(4), np.zeros(3), 0.01)),
    ]
    for exc, name, f in cases:
        with pytest.raises(exc, match=name):
            f()


def test_expm_bordered_bad_input():
    with pytest.raises(ValueError, match=r"\bH\b"):
        _core.expm_bordered(np.zeros((2, 3)), np.zeros((2, 1)))
    with pytest.raises(ValueError, match=r"\bH\b"):
        _core.expm_bordered(np.zeros(3), np.zeros((3, 1)))


# ------------------------------------------- entry points the Python layer does not wrap
_DIRECT_CLASS_CASES = {
    "Tracker.control complex z": lambda tr, ch: tr.control(np.zeros(4) + 1j),
    "Tracker.control string z": lambda tr, ch: tr.control(np.array(["1", "2", "3", "4"])),
    "Tracker.control object z": lambda tr, ch: tr.control(np.array([1.0, None, 0.0, 0.0])),
    "Tracker(K complex)": lambda tr, ch: lqr.Tracker(np.zeros((5, 2, 4)) + 1j, np.zeros((6, 4))),
    "Model.step complex z": lambda tr, ch: ch.step(np.zeros(4) + 1j, np.zeros(2), 0.01),
    "Model.dynamics complex z": lambda tr, ch: ch.dynamics(np.zeros(4) + 1j),
    "Simulation complex z0": lambda tr, ch: dr.Simulation(ch, np.zeros(4) + 1j, 0.01),
    "SpringChain complex masses": lambda tr, ch: dr.SpringChain(np.ones(2) + 1j, np.ones(2), np.ones(2), np.ones(2)),
}


@pytest.mark.filterwarnings("ignore:Casting complex values to real")
@pytest.mark.parametrize("case", list(_DIRECT_CLASS_CASES))
def test_direct_bindings_reject_non_real_dtypes(make_chain, case):
    tr = lqr.tracker(np.zeros((5, 2, 4)), np.zeros((6, 4)))
    with pytest.raises(TypeError):
        _DIRECT_CLASS_CASES[case](tr, make_chain(2))


_SILENT_NAN_CASES = {
    "Tracker.control(z with NaN)": ("z", lambda tr: tr.control(np.array([np.nan, 0.0, 0.0, 0.0]))),
    "Tracker.control(z with inf)": ("z", lambda tr: tr.control(np.array([np.inf, 0.0, 0.0, 0.0]))),
    "nearest_index(z with NaN)": ("z", lambda tr: tr.nearest_index(np.array([np.nan, 0.0, 0.0, 0.0]))),
    "nearest_index(weights NaN)": ("weights", lambda tr: tr.nearest_index(np.zeros(4),
                                                                         weights=np.array([np.nan, 1, 1, 1]))),
    "nearest_index(weights < 0)": ("weights", lambda tr: tr.nearest_index(np.zeros(4), weights=-np.ones(4))),
    "tracker(w_min NaN)": ("w_min", lambda tr: lqr.tracker(np.zeros((5, 2, 4)), np.zeros((6, 4)),
                                                          w_min=np.array([np.nan, 0.0]))),
    "tracker(w_max NaN)": ("w_max", lambda tr: lqr.tracker(np.zeros((5, 2, 4)), np.zeros((6, 4)),
                                                          w_max=np.array([np.nan, 0.0]))),
}


@pytest.mark.parametrize("case", list(_SILENT_NAN_CASES))
def test_tracker_nonfinite_runtime_input(case):
    name, f = _SILENT_NAN_CASES[case]
    tr = lqr.tracker(np.ones((5, 2, 4)), np.linspace(0, 1, 24).reshape(6, 4))
    with pytest.raises(ValueError, match=name):
        f(tr)


_MISREAD_SCALARS = {
    "discretize(dt='0.1')": (TypeError, "dt", lambda a, ch: lqr.discretize(a["A"], a["B"], "0.1", 1.0, 1.0)),
    "simulate(dt='0.01')": (TypeError, "dt", lambda a, ch: sim.simulate(ch, np.zeros(4), 3, "0.01")),
    "retune(alpha_Q='2')": (TypeError, "alpha_Q",
                            lambda a, ch: lqr.retune(lqr.discretize(a["A"], a["B"], 0.1, 1.0, 1.0), 1.0, "2")),
    "simulate(steps=2.5)": ((TypeError, ValueError), "steps", lambda a, ch: sim.simulate(ch, np.zeros(4), 2.5, 0.01)),
    "discretize(intervals=2.5)": ((TypeError, ValueError), "intervals",
                                  lambda a, ch: lqr.discretize(a["A"], a["B"], 0.1, 1.0, 1.0, method="simpson",
                                                               intervals=2.5)),
}


@pytest.mark.parametrize("case", list(_MISREAD_SCALARS))
def test_scalar_arguments_are_not_misread(rng, make_chain, case):
    # regression: numeric strings were once parsed and non-integer counts truncated
    exc, name, f = _MISREAD_SCALARS[case]
    with pytest.raises(exc, match=name):
        f(_base(rng), make_chain(2))


def _run_isolated(code):
    """Run code in a fresh interpreter: a crash (segfault) must not take pytest down."""
    prog = "import numpy as np\nfrom directable import lqr, _core\n" + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=60)


_EMPTY_CASES = {
    "solve_discrete n=0": """
        try:
            lqr.solve_discrete(np.zeros((0, 0)), np.zeros((0, 1)), np.zeros((0, 0)), np.eye(1), np.zeros((0, 0)),
                               horizon=2)
        except ValueError as e:
            print("ValueError", e)
        """,
    "expm_bordered 0x0": """
        try:
            E, G, _, _ = _core.expm_bordered(np.zeros((0, 0)), np.zeros((0, 0)))
            assert np.asarray(E).shape == (0, 0) and np.asarray(G).shape == (0, 0)
            print("OK")
        except ValueError as e:
            print("ValueError", e)
        """,
}


@pytest.mark.parametrize("case", list(_EMPTY_CASES))
def test_empty_dimensions_do_not_crash(case):
    # regression: solve_discrete with n = 0 and expm_bordered(0x0) once segfaulted
    r = _run_isolated(_EMPTY_CASES[case])
    assert r.returncode == 0, f"interpreter died with {r.returncode}: {r.stderr[-500:]}"
    assert r.stdout.startswith("ValueError") or r.stdout.startswith("OK"), r.stdout + r.stderr


def test_empty_control_dimension():
    """s = 0 (no control): either a ValueError or the plain cost of the free motion."""
    try:
        sol = lqr.solve_discrete(np.eye(2) * 0.5, np.zeros((2, 0)), 1.0, np.zeros((0, 0)), 1.0, horizon=3)
    except ValueError as exc:
        assert "s = 0" in str(exc) or "B" in str(exc)
        return
    assert sol.K.shape == (3, 0, 2)
    np.testing.assert_allclose(sol.P[0], (1 + 0.25 + 0.25**2 + 0.25**3) * np.eye(2), rtol=1e-15)


# --------------------------------------------------------------- progress
def _sized_run(rng, which, seconds):
    """(total steps, run(progress)) for a precomputation lasting ~``seconds`` here."""
    A = rng.standard_normal((30, 30)) * 0.15
    B = rng.standard_normal((30, 15))
    Ad1 = rng.standard_normal((1, 20, 20))
    Bd = rng.standard_normal((20, 10))

    def make(T):
        if which == "solve_discrete":
            return lambda cb: lqr.solve_discrete(A, B, 1.0, 1.0, 1.0, horizon=T, progress=cb)
        Ad = np.repeat(Ad1, T, axis=0)
        return lambda cb: lqr.discretize(Ad, Bd, 0.1, 1.0, 1.0, progress=cb)

    per_step = np.inf
    for _ in range(3):  # the fastest of three calibration runs: a busy machine only makes the real run longer
        t0 = time.perf_counter()
        make(2000)(None)
        per_step = min(per_step, (time.perf_counter() - t0) / 2000)
    T = int(np.clip(seconds / per_step, 2000, 1_000_000))
    return T, make(T)


@pytest.mark.parametrize("which", ["solve_discrete", "discretize", "solve_continuous", "retune", "linearize",
                                   "simulate"])
def test_progress_called_with_done_total(rng, make_chain, which):
    a = _base(rng)
    chain = make_chain(2)
    calls = []
    cb = lambda done, total: calls.append((done, total))  # noqa: E731
    run = {
        "solve_discrete": lambda: lqr.solve_discrete(**a, progress=cb),
        "discretize": lambda: lqr.discretize(**_disc_args(a), progress=cb),
        "solve_continuous": lambda: lqr.solve_continuous(a["A"], a["B"], 0.1, 1.0, 1.0, 1.0, progress=cb),
        "retune": lambda: lqr.retune(lqr.discretize(**_disc_args(a)), 1.0, 2.0, 1.0, progress=cb),
        "linearize": lambda: models.linearize(chain, np.zeros((T + 1, 4)), 0.01, progress=cb),
        "simulate": lambda: sim.simulate(chain, np.zeros(4), T, 0.01, progress=cb),
    }[which]
    run()
    assert calls, "callback never called"
    # solve_continuous counts the discretization's T steps and the sweep's T
    work = 2 * T if which == "solve_continuous" else T
    assert calls[-1] == (work, work)
    for done, total in calls:
        assert isinstance(done, int) and isinstance(total, int)
        assert 0 <= done <= total == work
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


@pytest.mark.parametrize("which", ["solve_discrete", "discretize"])
def test_progress_reports_midway_and_exception_stops_the_run(rng, which):
    total, run = _sized_run(rng, which, 0.4)
    calls = []
    run(lambda d, t: calls.append((d, t)))
    assert len(calls) >= 2 and calls[0][0] < total, calls  # reported during the run, not only at the end

    class Stop(Exception):
        pass

    seen = []

    def stop(done, tot):
        seen.append((done, tot))
        raise Stop(f"stopped at {done}")

    with pytest.raises(Stop, match="stopped at"):
        run(stop)
    assert len(seen) == 1  # no further report after the exception: the computation stopped
    assert seen[0][0] < total


@pytest.mark.parametrize("which", ["solve_continuous", "linearize", "simulate", "retune"])
def test_progress_exception_propagates(rng, make_chain, which):
    a = _base(rng)
    chain = make_chain(2)

    def boom(done, total):
        raise KeyError("from the callback")

    run = {
        "solve_continuous": lambda: lqr.solve_continuous(a["A"], a["B"], 0.1, 1.0, 1.0, 1.0, progress=boom),
        "linearize": lambda: models.linearize(chain, np.zeros((T + 1, 4)), 0.01, progress=boom),
        "simulate": lambda: sim.simulate(chain, np.zeros(4), T, 0.01, progress=boom),
        "retune": lambda: lqr.retune(lqr.discretize(**_disc_args(a)), 1.0, progress=boom),
    }[which]
    with pytest.raises(KeyError, match="from the callback"):
        run()


def test_progress_bar_and_bad_progress(rng, capsys):
    a = _base(rng)
    ref = lqr.solve_continuous(a["A"], a["B"], 0.1, 1.0, 1.0, 1.0)
    bar = lqr.solve_continuous(a["A"], a["B"], 0.1, 1.0, 1.0, 1.0, progress=True)
    np.testing.assert_array_equal(bar.K, ref.K)
    with pytest.raises(TypeError, match="progress"):
        lqr.solve_discrete(**a, progress=3)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("which", ["solve_discrete", "discretize"])
def test_ctrl_c_interrupts_a_long_precomputation(rng, which):
    """SIGINT during the GIL-free C++ loop: the Python handler runs and its
    exception ends the computation early (no callback needed). In-process,
    with a private handler so that pytest itself is never interrupted."""
    _, run_cb = _sized_run(rng, which, 0.5)
    run = lambda: run_cb(None)  # noqa: E731

    class Interrupted(Exception):
        pass

    def handler(signum, frame):
        raise Interrupted()

    t0 = time.perf_counter()
    run()
    full = time.perf_counter() - t0
    old = signal.signal(signal.SIGINT, handler)
    timer = threading.Timer(0.02, os.kill, (os.getpid(), signal.SIGINT))
    try:
        t0 = time.perf_counter()
        timer.start()
        with pytest.raises(Interrupted):
            run()
            time.sleep(1.0)  # (a signal arriving after the run still lands here, and the time check fails)
        elapsed = time.perf_counter() - t0
    finally:
        timer.cancel()
        timer.join()
        signal.signal(signal.SIGINT, old)
    assert full > 0.15, full  # long enough for the check below to mean something
    assert elapsed < 0.5 * full, (elapsed, full)


@pytest.mark.parametrize("which", ["solve_discrete", "discretize"])
def test_gil_is_released_during_precomputation(rng, which):
    """Another Python thread keeps running while the C++ loop works: it gets
    far more than the ~1% of its idle rate it would get if the GIL were held
    (one 5 ms switch interval out of a 0.5 s computation)."""
    _, run = _sized_run(rng, which, 0.5)
    started, done = threading.Event(), threading.Event()

    def work():
        started.set()
        run(None)
        done.set()

    count, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < 0.05:  # the idle rate of this loop
        count += 1
    rate = count / (time.perf_counter() - t0)
    worker = threading.Thread(target=work)
    worker.start()
    started.wait()
    count, t0 = 0, time.perf_counter()
    while not done.is_set():
        time.perf_counter()
        count += 1
    elapsed = time.perf_counter() - t0
    worker.join()
    assert elapsed > 0.1, elapsed
    assert count > 0.05 * rate * elapsed, (count, rate * elapsed)


_SENTINEL_CASES = {
    "nearest_index(last=-5)": ("last|window", lambda ch, tr: tr.nearest_index(np.zeros(4), 0, -5)),
    "linearize(horizon=-5)": ("horizon", lambda ch, tr: models.linearize(ch, np.zeros((4, 4)), 0.1, horizon=-5)),
    "SpringChain(actuated (m, 0))": ("actuated", lambda ch, tr: dr.SpringChain(np.ones(2), np.ones(2), np.ones(2),
                                                                                np.ones(2), np.zeros((2, 0)))),
}


@pytest.mark.parametrize("case", list(_SENTINEL_CASES))
def test_out_of_range_values_are_not_taken_for_defaults(make_chain, case):
    name, f = _SENTINEL_CASES[case]
    tr = lqr.tracker(np.zeros((5, 2, 4)), np.zeros((6, 4)))
    with pytest.raises(ValueError, match=name):
        f(make_chain(2), tr)


def test_save_load_same_path_without_suffix(tmp_path):
    sol = lqr.solve_discrete(np.eye(2), np.ones((2, 1)), 1.0, 1.0, 1.0, horizon=2)
    dr.save(tmp_path / "gains", sol)
    obj, _ = dr.load(tmp_path / "gains")
    np.testing.assert_array_equal(obj.K, sol.K)
