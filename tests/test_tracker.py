"""Runtime tracking controller ``w = w_ff[i] + K[i] (z - z_ref[i])`` and the PD
baseline (the paper's sec. 4, 7 and eq. 14)."""
from __future__ import annotations

import gc

import numpy as np
import pytest

from directable import lqr
from reference.problems import n, noncontiguous_views, s, T


def _data(rng, T=6, n=4, s=2):
    K = rng.standard_normal((T, s, n))
    z_ref = rng.standard_normal((T + 1, n))
    w_ff = rng.standard_normal((T, s))
    return K, z_ref, w_ff


def _law(K, z_ref, w_ff, i, z):
    j = min(i, len(K) - 1)
    return w_ff[j] + K[j] @ (z - z_ref[i])


def test_control_law_at_every_index(rng):
    K, z_ref, w_ff = _data(rng)
    tr = lqr.tracker(K, z_ref, w_ff)
    assert (tr.horizon, tr.n, tr.s, tr.index, tr.loop) == (6, 4, 2, 0, False)
    for i in range(6):
        tr.index = i
        for _ in range(3):
            z = rng.standard_normal(4)
            w = tr.control(z)
            assert w.shape == (2,) and w.dtype == np.float64
            np.testing.assert_allclose(w, _law(K, z_ref, w_ff, i, z), rtol=1e-14, atol=1e-14)
            # control does not advance
            assert tr.index == i
        # on the reference the feedback vanishes exactly
        np.testing.assert_array_equal(tr.control(z_ref[i]), w_ff[i])
    # control_into: w and the feedback part in place
    tr.index = 2
    z = rng.standard_normal(4)
    w, fb = np.empty(2), np.empty(2)
    tr.control_into(z, w, fb)
    np.testing.assert_array_equal(w, tr.control(z))
    np.testing.assert_allclose(fb, K[2] @ (z - z_ref[2]), rtol=1e-14, atol=1e-14)


def _stored_rows(K, dtype):
    """Independent reference of reduced gain storage, as the float64 gains it
    stands for. float32/float16: each row of K as a power-of-two scale 2^-e
    times K 2^e rounded to dtype (NumPy rounds float64 to float16 directly,
    ties to even), with max |K 2^e| in [2^14, 2^15). int8: see _int8_storage."""
    K = np.asarray(K, float)
    if dtype != "int8":
        m = np.abs(K).max(axis=-1, keepdims=True)
        e = np.where(m > 0, 15 - np.frexp(m)[1], 0)
        return np.ldexp(np.ldexp(K, e).astype(dtype).astype(np.float64), -e)
    q, grid, c = _int8_storage(K)
    return q * grid[..., None] * c


def _int8_column_scales(K):
    cm = np.abs(K.reshape(-1, K.shape[-1])).max(axis=0)
    e = np.frexp(cm)[1]
    return np.where(cm > 0, np.ldexp(1.0, np.maximum(e - e[cm > 0].max(initial=0), -60)), 1.0)


def _int8_storage(K):
    """int8 storage of a schedule K (..., s, n): columns balanced by powers of
    two c_j = 2^(e_j - E) (2^(e_j - 1) <= the column's largest entry over all
    steps < 2^e_j, E the largest e_j, c_j >= 2^-60, zero columns 1), then each
    row of K / c rounded to integers q (ties to even) on the grid max|row| / 127.
    Returns q (..., s, n) as int64, grid (..., s), c (n,)."""
    c = _int8_column_scales(K)
    v = K / c
    m = np.abs(v).max(axis=-1)
    grid = np.where(m > 0, m / 127.0, 1.0)
    return np.rint(v / grid[..., None]).astype(np.int64), grid, c


_REDUCED = ["float32", "float16", "int8"]
_UNIT_ROUNDOFF = {"float32": 2.0**-24, "float16": 2.0**-11}


def _rounding_bound(K, i, dz, gain_dtype):
    """Per row, the documented bound on |w_fb - K[i] dz| from the storage
    rounding (int8's column scales come from the whole schedule K, and int8
    also rounds c .* dz to int16)."""
    if gain_dtype != "int8":
        return _UNIT_ROUNDOFF[gain_dtype] * (np.abs(K[i]) @ np.abs(dz))
    c = _int8_column_scales(K)
    M = np.abs(K[i] / c).max(axis=-1)
    return M * ((c * np.abs(dz)).sum() / 254 + (len(dz) + 1) * 2.0**-15 * (c * np.abs(dz)).max())


def _int8_feedback(K, i, dz):
    """Independent reference of the int8 control step, bit for bit: x = c .* dz
    scaled by 2^(15-g) (2^(g-1) <= max |x| < 2^g), rounded to int16 (ties to
    even, saturating), an exact integer product with the stored rows, then
    scaled back by the row's grid and 2^(g-15)."""
    q, grid, c = _int8_storage(K)
    x = dz * c
    g = np.frexp(np.abs(x).max())[1]
    xq = np.clip(np.rint(np.ldexp(x, 15 - g)), -32768, 32767).astype(np.int64)
    return (q[i] @ xq).astype(np.float64) * grid[i] * 2.0 ** (g - 15)


@pytest.mark.parametrize("gain_dtype", _REDUCED)
@pytest.mark.parametrize("T", [1, 5])
@pytest.mark.parametrize("n, s", [(128, 64), (7, 5), (4, 2), (19, 9)])
def test_reduced_gain_storage_rounds_only_the_gain(rng, gain_dtype, T, n, s):
    # The control step multiplies by the stored gain in single precision: the
    # feedback equals the double product with the stored gain up to float
    # sums, and the exact one up to the storage rounding. K is kept as given.
    # Rows span 6 decades and the second half of the columns (velocity gains,
    # say) is 1000x smaller than the first: what int8's column scales are for.
    K = rng.standard_normal((T, s, n)) * np.logspace(-3, 3, s)[:, None]
    K[..., n // 2:] *= 1e-3
    z_ref = rng.standard_normal((T + 1, n))
    w_ff = rng.standard_normal((T, s))
    tr = lqr.tracker(K[0] if T == 1 else K, z_ref if T > 1 else z_ref[:2], w_ff if T > 1 else None,
                     gain_dtype=gain_dtype)
    assert tr.gain_dtype == gain_dtype and lqr.tracker(K, z_ref, w_ff).gain_dtype == "float64"
    np.testing.assert_array_equal(tr.K, K)
    stored = _stored_rows(K, gain_dtype)
    for i in range(tr.horizon):
        tr.index = i
        z = rng.standard_normal(n) * 1e4
        w, fb = np.empty(s), np.empty(s)
        tr.control_into(z, w, fb)
        dz = z - tr.z_ref[i]
        scale = np.abs(K[i]) @ np.abs(dz)  # sum_j |K_ij dz_j|, per row
        bound = _rounding_bound(K, i, dz, gain_dtype)
        if gain_dtype == "int8":  # integer sums: exact
            np.testing.assert_array_equal(fb, _int8_feedback(K, i, dz))
        else:
            assert np.all(np.abs(fb - stored[i] @ dz) <= 4e-6 * scale)
        assert np.all(np.abs(fb - K[i] @ dz) <= bound + 4e-6 * scale)
        if gain_dtype != "float32":  # the rounding is really there
            assert (np.abs(fb - K[i] @ dz) / scale).max() > 1e-6
        np.testing.assert_allclose(w - tr.w_ff[i], fb, rtol=1e-14, atol=1e-12)


def test_int8_feedback_edge_cases_are_exact(rng):
    # Long rows (the integer sums are widened every 2048 columns, a tail of
    # 4200 % 16 = 8 columns), dz whose largest entry rounds up to 2^15 (int16
    # saturates), and non-finite or tiny dz (the double gains take over).
    T, s, n = 3, 5, 4200
    K = rng.standard_normal((T, s, n)) * 1e3
    tr = lqr.tracker(K, np.zeros((T + 1, n)), gain_dtype="int8")
    for i in range(T):
        tr.index = i
        dz = rng.standard_normal(n)
        np.testing.assert_array_equal(tr.control(dz), _int8_feedback(K, i, dz))
    small = rng.standard_normal((2, 3, 20))
    tr = lqr.tracker(small, np.zeros((3, 20)), gain_dtype="int8")
    dz = rng.uniform(-0.4, 0.4, 20)
    dz[7] = 1 - 2.0**-17  # x 2^15 = 32767.75: rounds to 32768, saturates to 32767
    np.testing.assert_array_equal(tr.control(dz), _int8_feedback(small, 0, dz))
    dz[7] = -(1 - 2.0**-17)  # -32768 fits
    np.testing.assert_array_equal(tr.control(dz), _int8_feedback(small, 0, dz))
    np.testing.assert_array_equal(tr.control(np.zeros(20)), np.zeros(3))
    tiny = rng.standard_normal(20) * 1e-305
    np.testing.assert_allclose(tr.control(tiny), small[0] @ tiny, rtol=1e-12, atol=0)
    assert np.all(tr.control(tiny) != 0)


def test_int8_column_scales_keep_small_columns(rng):
    # Velocity gains 1e-4 of the position gains: one scale per row alone would
    # round them all to 0; the column scales keep them to 1/254 of their own size.
    s, n = 6, 10
    K = rng.uniform(0.5, 1.0, (s, n)) * np.r_[np.ones(n // 2), np.full(n // 2, 1e-4)]
    tr = lqr.tracker(K, np.zeros((2, n)), gain_dtype="int8")
    for j in range(n // 2, n):
        z = np.zeros(n)
        z[j] = 1.0
        np.testing.assert_allclose(tr.control(z), K[:, j], rtol=1 / 127)


@pytest.mark.parametrize("gain_dtype", _REDUCED)
def test_reduced_gain_storage_is_rounded_to_nearest_even(rng, gain_dtype):
    # A unit dz reads one stored column exactly (one product, no sum): it must
    # be NumPy's rounding of the scaled row, ties to even, subnormals included.
    n = 9
    K = np.zeros((5, n))
    K[0] = [2.0**14, 1 + 2.0**-11, 1 + 3 * 2.0**-11, 2.5 * 2.0**-24, 1e-9, -7.3, 0.0, 3e-5, 1 + 2.0**-24]
    K[1] = [1e39, -3e30, 1e-300, 7.0, -1e38, 2e-20, 0.5, 1e25, 1.0]  # beyond float32's range: scaled
    K[2] = 0.0
    K[3:] = rng.standard_normal((2, n)) * 10.0 ** rng.uniform(-12, 3, (2, n))  # wide range within a row
    if gain_dtype == "int8":  # entries on the grid's half points: ties to even
        K = np.vstack([K, np.r_[127.0, 0.5, 1.5, 2.5, -0.5, -1.5, 126.5, 3.0, 4.0]])
    tr = lqr.tracker(K, np.zeros((2, n)), gain_dtype=gain_dtype)
    stored = _stored_rows(K, gain_dtype)
    for j in range(n):
        z = np.zeros(n)
        z[j] = 1.0
        np.testing.assert_array_equal(tr.control(z), stored[:, j], err_msg=f"column {j}")
    if gain_dtype == "float16":
        assert stored[0, 1] == 1.0 and stored[0, 2] == 1 + 2.0**-9 and stored[0, 3] == 2 * 2.0**-24
        assert stored[0, 4] == 0.0 and 0 < stored[0, 7] < 2.0**-14  # flushed / subnormal


def test_gain_dtype_names(rng):
    K, z_ref, w_ff = _data(rng)
    for spelling, name in (("half", "float16"), (np.float16, "float16"), (np.dtype("f4"), "float32"),
                           (float, "float64"), (np.int8, "int8"), ("i1", "int8")):
        assert lqr.tracker(K, z_ref, w_ff, gain_dtype=spelling).gain_dtype == name
    for bad in ("int16", "uint8", "float128", "bf16", None):
        with pytest.raises(ValueError, match="gain_dtype must be"):
            lqr.tracker(K, z_ref, w_ff, gain_dtype=bad)


def test_gain_from_solution_and_constant_gain(rng):
    K, z_ref, w_ff = _data(rng)
    sol = lqr.LQRSolution(K, rng.standard_normal((7, 4, 4)))
    a = lqr.tracker(sol, z_ref, w_ff)
    np.testing.assert_array_equal(a.K, K)
    # one (s, n) gain is constant in time
    Kc = K[0]
    c = lqr.tracker(Kc, z_ref)
    assert c.K.shape == (1, 2, 4)
    for i in range(6):
        c.index = i
        z = rng.standard_normal(4)
        np.testing.assert_allclose(c.control(z), Kc @ (z - z_ref[i]), rtol=1e-14, atol=1e-14)
    # no feed-forward means zero feed-forward
    np.testing.assert_array_equal(c.w_ff, np.zeros((6, 2)))


def test_advance_hold_and_loop(rng):
    K, z_ref, w_ff = _data(rng, T=4)
    tr = lqr.tracker(K, z_ref, w_ff)
    seen = []
    for _ in range(7):
        seen.append(tr.index)
        tr.advance()
    assert seen == [0, 1, 2, 3, 4, 4, 4]  # holds at T without loop
    # at the end: z_ref[T] with the last gain and feed-forward
    z = rng.standard_normal(4)
    np.testing.assert_allclose(tr.control(z), w_ff[3] + K[3] @ (z - z_ref[4]), rtol=1e-14, atol=1e-14)
    tr.rewind()
    assert tr.index == 0
    lp = lqr.tracker(K, z_ref, w_ff, loop=True)
    assert lp.loop
    seen = []
    for _ in range(10):
        seen.append(lp.index)
        lp.advance()
    assert seen == [0, 1, 2, 3, 0, 1, 2, 3, 0, 1]  # rewinds after T steps
    lp.index = 4  # T itself can be set explicitly
    assert lp.index == 4
    for bad in (-1, 5):
        with pytest.raises(ValueError, match="index"):
            lp.index = bad
    assert lp.index == 4


def test_nearest_index_and_jump(rng):
    T, n = 20, 3
    t = np.linspace(0, 2 * np.pi, T + 1)
    z_ref = np.stack([np.cos(t), np.sin(t), 0.1 * t], axis=1)
    tr = lqr.tracker(np.zeros((T, 1, n)), z_ref)

    def brute(z, first, last, w=None):
        w = np.ones(n) if w is None else w
        d = ((z - z_ref[first:last + 1]) ** 2 * w).sum(axis=1)
        return first + int(np.argmin(d))

    for j in (0, 5, 13, 19):
        z = z_ref[j] + 1e-3 * rng.standard_normal(n)
        assert tr.nearest_index(z) == j
        assert tr.nearest_index(z, 0, T - 1) == j
    for _ in range(20):
        z = rng.standard_normal(n)
        first = int(rng.integers(0, T - 1))
        last = int(rng.integers(first, T))
        w = rng.uniform(0.1, 10, n)
        assert tr.nearest_index(z, first, last) == brute(z, first, last)
        assert tr.nearest_index(z, first, last, weights=w) == brute(z, first, last, w)
    # weights change the answer: coordinate 2 dominates when weighted
    z = z_ref[4].copy()
    z[2] = z_ref[15, 2]
    assert tr.nearest_index(z) != tr.nearest_index(z, weights=np.array([1e-6, 1e-6, 1.0]))
    assert tr.nearest_index(z, weights=np.array([1e-6, 1e-6, 1.0])) == 15
    # a window excludes the global minimum
    z = z_ref[3]
    assert tr.nearest_index(z, 10, 19) == brute(z, 10, 19)
    assert tr.nearest_index(z, 10, 19) >= 10
    # jump_to_nearest moves the tracked index and returns it
    tr.index = 0
    assert tr.jump_to_nearest(z_ref[11] + 1e-4) == 11
    assert tr.index == 11
    with pytest.raises(ValueError, match="window"):
        tr.nearest_index(z, 5, 2)
    with pytest.raises(ValueError, match="weights"):
        tr.nearest_index(z, weights=np.ones(n + 1))


def test_limits_clip_and_feedback_is_w_minus_ff(rng):
    K, z_ref, w_ff = _data(rng, s=3)
    w_min = np.array([-0.5, -np.inf, -1.0])
    w_max = np.array([0.5, 0.2, np.inf])
    tr = lqr.tracker(K, z_ref, w_ff, w_min=w_min, w_max=w_max)
    free = lqr.tracker(K, z_ref, w_ff)
    clipped_any = False
    for i in range(6):
        tr.index = free.index = i
        for _ in range(5):
            z = z_ref[i] + 2 * rng.standard_normal(4)
            w_free = free.control(z)
            w = tr.control(z)
            np.testing.assert_array_equal(w, np.clip(w_free, w_min, w_max))
            ww, fb = np.empty(3), np.empty(3)
            tr.control_into(z, ww, fb)
            np.testing.assert_array_equal(ww, w)
            np.testing.assert_allclose(fb, w - w_ff[i], rtol=1e-15, atol=1e-15)
            clipped_any |= not np.array_equal(w, w_free)
    assert clipped_any
    # only a lower or only an upper limit
    lo = lqr.tracker(K, z_ref, w_ff, w_min=np.zeros(3))
    z = rng.standard_normal(4)
    free.index = 0
    np.testing.assert_array_equal(lo.control(z), np.maximum(free.control(z), 0.0))
    hi = lqr.tracker(K, z_ref, w_ff, w_max=np.zeros(3))
    np.testing.assert_array_equal(hi.control(z), np.minimum(free.control(z), 0.0))


def test_scalar_limits_broadcast(rng):
    """(Regression: scalar limits were once not broadcast to (s,).)"""
    K, z_ref, w_ff = _data(rng, s=2)
    tr = lqr.tracker(K, z_ref, w_ff, w_min=-0.1, w_max=0.1)
    z = rng.standard_normal(4)
    np.testing.assert_array_equal(tr.control(z), np.clip(_law(K, z_ref, w_ff, 0, z), -0.1, 0.1))


def test_tracker_copies_inputs_and_exposes_readonly_views(rng):
    K, z_ref, w_ff = _data(rng)
    tr = lqr.tracker(K, z_ref, w_ff)
    z = rng.standard_normal(4)
    w0 = tr.control(z)
    K2, zr2, ff2 = K.copy(), z_ref.copy(), w_ff.copy()
    K[:] = 0
    z_ref[:] = 0
    w_ff[:] = 0
    np.testing.assert_array_equal(tr.control(z), w0)
    views = (tr.K, tr.z_ref, tr.w_ff)
    for v, ref in zip(views, (K2, zr2, ff2)):
        np.testing.assert_array_equal(v, ref)
        assert not v.flags.writeable
    assert np.shares_memory(tr.K, tr.K)
    del tr
    gc.collect()
    for v, ref in zip(views, (K2, zr2, ff2)):
        np.testing.assert_array_equal(v, ref)


# -------------------------------------------------------------------- PD
def test_pd_gain_scalar_per_coordinate_and_actuated(rng):
    m = 3
    n = 2 * m
    K = lqr.pd_gain(2.0, 0.5, n)
    np.testing.assert_array_equal(K, -np.hstack([2.0 * np.eye(m), 0.5 * np.eye(m)]))
    kp = rng.uniform(1, 5, m)
    kd = rng.uniform(0, 1, m)
    np.testing.assert_array_equal(lqr.pd_gain(kp, kd, n), -np.hstack([np.diag(kp), np.diag(kd)]))
    # actuated as for a model: S (m, s) maps the controls to the coordinates' forces
    S = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]])  # drive coordinates 0 and 2
    kp2, kd2 = np.array([3.0, 4.0]), np.array([0.3, 0.4])
    np.testing.assert_array_equal(lqr.pd_gain(kp2, kd2, n, actuated=S),
                                  -np.hstack([np.diag(kp2) @ S.T, np.diag(kd2) @ S.T]))
    np.testing.assert_array_equal(lqr.pd_gain(1.5, 0.2, n, actuated=S), -np.hstack([1.5 * S.T, 0.2 * S.T]))
    # ... or the list of driven coordinates, as models.spring_chain(actuated=[0, 2])
    np.testing.assert_array_equal(lqr.pd_gain(kp2, kd2, n, actuated=[0, 2]), lqr.pd_gain(kp2, kd2, n, actuated=S))
    # a general (non-selection) actuation: the PD force is S' applied to the error
    G = rng.standard_normal((m, 2))
    np.testing.assert_allclose(lqr.pd_gain(kp2, kd2, n, actuated=G),
                               -np.hstack([np.diag(kp2) @ G.T, np.diag(kd2) @ G.T]), rtol=1e-15)
    with pytest.raises(ValueError, match="n"):
        lqr.pd_gain(1.0, 1.0, 5)
    with pytest.raises(ValueError, match="kp"):
        lqr.pd_gain(np.ones(m + 1), 1.0, n)
    with pytest.raises(ValueError, match="kd"):
        lqr.pd_gain(1.0, np.ones(m + 1), n)
    with pytest.raises(ValueError, match="actuated"):
        lqr.pd_gain(1.0, 1.0, n, actuated=np.ones((m + 1, 2)))
    with pytest.raises(ValueError, match="actuated"):
        lqr.pd_gain(1.0, 1.0, n, actuated=[0, m])


def test_pd_on_an_underactuated_chain_pushes_the_driven_masses(make_chain):
    """The PD force w = -kp S'(q - q_ref) - kd S'(qd - qd_ref) on a chain with
    actuated=[1, 3] acts through B = [0; M^-1 S]: same S convention."""
    chain = make_chain(4, actuated=[1, 3])
    K = lqr.pd_gain(10.0, 1.0, 8, actuated=[1, 3])
    dq = np.array([0.0, 0.1, 0.0, -0.2])
    w = K @ np.concatenate([dq, np.zeros(4)])
    np.testing.assert_allclose(w, [-1.0, 2.0], rtol=1e-15)
    np.testing.assert_allclose(chain.control_matrix()[4:] @ w, [0.0, -1.0, 0.0, 2.0], rtol=1e-15)


def test_pd_tracker_is_the_pd_law(rng):
    m, T = 2, 5
    z_ref = rng.standard_normal((T + 1, 2 * m))
    w_ff = rng.standard_normal((T, m))
    kp, kd = np.array([4.0, 9.0]), np.array([0.5, 1.5])
    tr = lqr.pd_tracker(kp, kd, z_ref, w_ff)
    for i in range(T):
        tr.index = i
        z = rng.standard_normal(2 * m)
        q, qd = z[:m], z[m:]
        expect = w_ff[i] - kp * (q - z_ref[i, :m]) - kd * (qd - z_ref[i, m:])
        np.testing.assert_allclose(tr.control(z), expect, rtol=1e-14, atol=1e-14)


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


def test_pd_gain_noncontiguous(rng):
    kp = np.array([1.0, 2.0, 3.0])
    S = np.array([[1.0, 0.0], [0.0, 0.5], [0.0, 1.0]])  # (m, s), as a model's actuation
    ref = lqr.pd_gain(kp[:2], 0.5, 6, actuated=S)
    for v in noncontiguous_views(S).values():
        np.testing.assert_array_equal(lqr.pd_gain(kp[:2], 0.5, 6, actuated=v), ref)
    np.testing.assert_array_equal(lqr.pd_gain(np.array([1.0, 9.0, 2.0])[::2], 0.5, 6, actuated=S), ref)
