"""Saving and loading precomputations (.npz, lossless)."""
from __future__ import annotations

import numpy as np
import pytest

import directable as dr
from directable import lqr
from reference.lqr import random_spd



def _disc(rng, method="exact", T=6, n=4, s=2):
    A = rng.standard_normal((T, n, n)) * 3
    B = rng.standard_normal((T, n, s))
    return lqr.discretize(A, B, 0.05, random_spd(rng, n), random_spd(rng, s), method=method, intervals=4)


def test_lqr_solution_round_trip_with_extras(rng, tmp_path):
    sol = lqr.solve_discrete(rng.standard_normal((7, 3, 3)) * 0.5, rng.standard_normal((7, 3, 2)), 1.0, 0.3, 2.0)
    extras = dict(z_ref=rng.standard_normal((8, 3)), w_ff=rng.standard_normal((7, 2)),
                  steps=np.arange(5, dtype=np.int32), flags=np.array([True, False]), scalar=np.float64(np.pi),
                  tiny=np.array([5e-324, -0.0, 1.7976931348623157e308]))
    path = tmp_path / "sol.npz"
    dr.save(path, sol, **extras)
    obj, extra = dr.load(path)
    assert isinstance(obj, lqr.LQRSolution)
    np.testing.assert_array_equal(obj.K, sol.K)
    np.testing.assert_array_equal(obj.P, sol.P)
    assert set(extra) == set(extras)
    for k, v in extras.items():
        assert np.array_equal(extra[k], v), k
        assert extra[k].dtype == np.asarray(v).dtype, k
    assert np.signbit(extra["tiny"][1])  # -0.0 survives: bitwise lossless


@pytest.mark.parametrize("method", ["exact", "simpson"])
def test_discretization_round_trip_and_retune(rng, tmp_path, method):
    d = _disc(rng, method)
    path = tmp_path / "disc.npz"
    dr.save(path, d)
    e, extra = dr.load(path)
    assert extra == {}
    assert isinstance(e, lqr.Discretization)
    for f in ("Phi", "Gamma", "Q", "N", "R", "Rc"):
        np.testing.assert_array_equal(getattr(e, f), getattr(d, f), err_msg=f)
    assert e.dt == d.dt and e.method == d.method
    assert (e.horizon, e.n, e.s) == (d.horizon, d.n, d.s)
    Qf = random_spd(rng, 4)
    R_new = random_spd(rng, 2)
    for args, kw in [((Qf,), {}), ((Qf, 2.0, 0.5), {}), ((Qf, 1.0, 3.0), dict(R=R_new))]:
        a = lqr.retune(d, *args, **kw)
        b = lqr.retune(e, *args, **kw)
        np.testing.assert_array_equal(a.K, b.K)
        np.testing.assert_array_equal(a.P, b.P)


def test_time_varying_R_discretization_round_trip(rng, tmp_path):
    T, n, s = 5, 3, 2
    A = rng.standard_normal((T, n, n))
    B = rng.standard_normal((T, n, s))
    Rc = np.stack([random_spd(rng, s) for _ in range(T)])
    d = lqr.discretize(A, B, 0.1, 1.0, Rc)
    assert d.Rc.shape == (T, s, s)
    dr.save(tmp_path / "d.npz", d)
    e, _ = dr.load(tmp_path / "d.npz")
    np.testing.assert_array_equal(e.Rc, d.Rc)
    np.testing.assert_array_equal(lqr.retune(e, 1.0, 1.0, 2.0).K, lqr.retune(d, 1.0, 1.0, 2.0).K)


@pytest.mark.parametrize("loop", [False, True])
@pytest.mark.parametrize("constant_gain", [False, True])
@pytest.mark.parametrize("gain_dtype", ["float64", "float32", "float16", "int8"])
def test_tracker_round_trip(rng, tmp_path, loop, constant_gain, gain_dtype):
    T, n, s = 6, 4, 2
    K = rng.standard_normal((s, n)) if constant_gain else rng.standard_normal((T, s, n))
    z_ref = rng.standard_normal((T + 1, n))
    w_ff = rng.standard_normal((T, s))
    tr = lqr.tracker(K, z_ref, w_ff, loop=loop, gain_dtype=gain_dtype)
    dr.save(tmp_path / "tr.npz", tr, note=np.array([1.0]))
    tr2, extra = dr.load(tmp_path / "tr.npz")
    assert isinstance(tr2, lqr.Tracker)
    np.testing.assert_array_equal(extra["note"], [1.0])
    for f in ("K", "z_ref", "w_ff"):
        np.testing.assert_array_equal(getattr(tr2, f), getattr(tr, f), err_msg=f)
    assert tr2.loop == loop and tr2.horizon == T and tr2.gain_dtype == gain_dtype
    for i in range(T + 2):
        z = rng.standard_normal(n)
        np.testing.assert_array_equal(tr2.control(z), tr.control(z))
        tr.advance()
        tr2.advance()
        assert tr.index == tr2.index


def test_tracker_limits_round_trip(rng, tmp_path):
    K = rng.standard_normal((4, 2, 3)) * 10
    tr = lqr.tracker(K, rng.standard_normal((5, 3)), None, w_min=np.array([-0.1, -0.2]),
                     w_max=np.array([0.1, 0.2]))
    dr.save(tmp_path / "lim.npz", tr)
    tr2, _ = dr.load(tmp_path / "lim.npz")
    z = rng.standard_normal(3) * 5
    np.testing.assert_array_equal(tr2.control(z), tr.control(z))


def test_arrays_only(tmp_path):
    dr.save(tmp_path / "a.npz", None, x=np.eye(2), y=np.arange(3))
    obj, extra = dr.load(tmp_path / "a.npz")
    assert obj is None
    np.testing.assert_array_equal(extra["x"], np.eye(2))
    np.testing.assert_array_equal(extra["y"], np.arange(3))


def test_extra_name_colliding_with_a_field_is_not_lost(rng, tmp_path):
    # regression: an extra array named like a field was once silently overwritten
    sol = lqr.solve_discrete(np.eye(2), np.ones((2, 1)), 1.0, 1.0, 1.0, horizon=3)
    mine = np.arange(4.0)
    try:
        dr.save(tmp_path / "c.npz", sol, K=mine)
    except ValueError as exc:  # refusing the name is fine too
        assert "K" in str(exc)
        return
    _, extra = dr.load(tmp_path / "c.npz")
    np.testing.assert_array_equal(extra["K"], mine)


def test_save_rejects_unknown_objects(tmp_path):
    with pytest.raises(TypeError, match="cannot save"):
        dr.save(tmp_path / "x.npz", object())


def test_save_load_same_path_without_suffix(tmp_path):
    sol = lqr.solve_discrete(np.eye(2), np.ones((2, 1)), 1.0, 1.0, 1.0, horizon=2)
    dr.save(tmp_path / "gains", sol)
    obj, _ = dr.load(tmp_path / "gains")
    np.testing.assert_array_equal(obj.K, sol.K)
