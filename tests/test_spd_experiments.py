"""The paper's experiments: the qualitative claims of
Tan, Liu & Turk (2011), tables 1-2, figure 4, sec. 4.2 and 4.3, and a
PD / SPD / LQR comparison on one tracking task with a push. Sizes are small
(a few hundred steps); the notebook shows the full figures."""
from __future__ import annotations

import numpy as np
import pytest

import directable as dr
from reference.chain import two_link_reference
from directable import chain as dc

GAINS = (3e1, 3e2, 3e3, 3e4)


@pytest.fixture(scope="module")
def table():
    ch = dc.PlanarChain([1.0, 1.0], [1.0, 1.0])
    dt, T = 1 / 60, 600  # 10 s
    q_ref, qd_ref = two_link_reference(T, dt)
    out = {}
    for kp in GAINS:
        for controller in ("pd", "spd"):
            for vel in (False, True):
                r = dc.track(ch, q_ref, qd_ref if vel else None, dt, kp, kp * dt, controller=controller)
                out[controller, vel, kp] = (r, dc.tracking_errors(r.q, q_ref))
    return out


def test_table_pd_diverges_at_high_gain(table):
    for vel in (False, True):
        for kp in (3e1, 3e2):
            assert not table["pd", vel, kp][0].diverged
        for kp in (3e3, 3e4):
            r, (e_inf, e_2) = table["pd", vel, kp]
            assert r.diverged and r.diverged_at >= 0
            assert np.all(np.isinf(e_inf)) and np.all(np.isinf(e_2))


def test_table_spd_bounded_and_error_falls_with_gain(table):
    for vel in (False, True):
        errs = []
        for kp in GAINS:
            r, (e_inf, e_2) = table["spd", vel, kp]
            assert not r.diverged and np.all(np.isfinite(r.q))
            assert np.all(e_inf < 0.6)
            errs.append((e_inf, e_2))
        e_inf = np.array([e[0] for e in errs])
        e_2 = np.array([e[1] for e in errs])
        assert np.all(np.diff(e_inf, axis=0) < 0), e_inf  # per joint, falls as kp grows
        # the 2-norm too, except that without reference velocity it saturates at
        # the tracking lag from 3e3 on (the paper's table 2: 0.2294 -> 0.2295)
        assert np.all(np.diff(e_2[:3], axis=0) < 0), e_2
        assert np.all(e_2[3] < (1.0 if vel else 1.05) * e_2[2]), e_2


def test_table_spd_beats_pd_where_both_run(table):
    for vel in (False, True):
        for kp in (3e1, 3e2):
            assert np.all(table["spd", vel, kp][1][0] < table["pd", vel, kp][1][0])


def test_table_reference_velocity_reduces_spd_error(table):
    # with reference velocity the error falls further (about linearly in kp)
    for kp in (3e3, 3e4):
        without = table["spd", False, kp][1][0]
        with_v = table["spd", True, kp][1][0]
        assert np.all(with_v < 0.3 * without)
    e3, e4 = table["spd", True, 3e3][1][0], table["spd", True, 3e4][1][0]
    assert np.all(e4 < 0.3 * e3)
    # without it the error saturates (tracking lag): less than 2x gain from 3e3 to 3e4
    n3, n4 = table["spd", False, 3e3][1][0], table["spd", False, 3e4][1][0]
    assert np.all(n4 > 0.5 * n3)


def test_largest_stable_time_step_against_gain():
    ch = dc.PlanarChain([1.0, 1.0], [1.0, 1.0])
    q_of_t = lambda t: np.c_[np.cos(t), np.cos(t) + 1]  # noqa: E731
    qd_of_t = lambda t: np.c_[-np.sin(t), -np.sin(t)]  # noqa: E731
    dts = np.geomspace(3e-4, 1 / 30, 16)
    pd = [dc.largest_stable_dt(ch, q_of_t, qd_of_t, kp, "pd", duration=2.0, dts=dts) for kp in (3e2, 3e4, 3e6)]
    spd = [dc.largest_stable_dt(ch, q_of_t, qd_of_t, kp, "spd", duration=2.0, dts=dts) for kp in (3e2, 3e4, 3e6)]
    assert pd[0] > pd[1] > pd[2] > 0  # PD: the step must shrink as the gain grows
    assert all(s == pytest.approx(1 / 30) for s in spd)  # SPD: bound by the reference's sampling only
    assert spd[2] > 20 * pd[2]


def tail_setup(links=10, steps_per_key=40):
    m, l = np.full(links, 0.02), np.full(links, 0.08)
    ch = dc.PlanarChain(m, l, gravity=0.0, free_root=True, damping=np.r_[0, 0, np.full(links, 5e-4)])
    K = 5
    key_steps = np.arange(K) * steps_per_key
    root = np.array([[0, 0, 0], [0.5, 0, np.pi / 2], [0.5, 0.5, np.pi], [0, 0.5, 1.5 * np.pi], [0, 0, 2 * np.pi]])
    key_q = np.zeros((K, ch.n))
    key_q[:, :3] = root
    m_sup = np.r_[m.sum(), m.sum(), [m[j:].sum() for j in range(links)]]
    kt = np.r_[2e4 * m_sup[:3], 300 * m_sup[3:]]  # stiff root, compliant tail
    return ch, key_steps, key_q, kt


def test_keyframe_tail_crossfade():
    ch, key_steps, key_q, kt = tail_setup()
    dt, T = 1 / 60, key_steps[-1]
    q_ref, kp = dc.crossfade(key_steps, key_q, kt, T)
    assert q_ref.shape == (T + 1, ch.n) and kp.shape == (T, ch.n)
    r = dc.track(ch, q_ref, None, dt, kp, 10 * kp * dt, q0=key_q[0])
    assert not r.diverged
    # keyframes met (root position and orientation), tail swings (secondary
    # motion), where a cubic spline of the root keeps the tail rigid (all zero)
    assert np.abs(r.q[key_steps, :2] - key_q[:, :2]).max() < 0.05
    assert np.abs(r.q[key_steps, 2] - key_q[:, 2]).max() < 0.1
    assert np.abs(r.q[:, 3:]).max() > 0.2
    # PD with the same gains explodes at once
    assert dc.track(ch, q_ref, None, dt, kp, 10 * kp * dt, controller="pd", q0=key_q[0]).diverged


def test_crossfade_profile():
    q_ref, kp = dc.crossfade([0, 10, 20], np.array([[0.0], [1.0], [3.0]]), 2.0, 20)
    # at a keyframe the reference is (almost) the keyframe and the gain is (1 + 0.005) kt
    assert q_ref[10, 0] == pytest.approx(1.0, abs=1e-2) and kp[9, 0] == pytest.approx(2.0 * 1.005)
    # mid-way the gain has faded to about 0.005 kt and the target is the next key
    assert kp[4, 0] == pytest.approx(2.0 * (0.5 ** 24 * 2 + 0.005), rel=1e-6)
    assert q_ref[5, 0] == pytest.approx((0.5 ** 24 * 0 + (0.5 ** 24 + 0.005) * 1) / (2 * 0.5 ** 24 + 0.005))


def test_pd_spd_lqr_with_a_push():
    ch = dc.PlanarChain([1.0, 1.0], [1.0, 1.0], damping=0.1)
    dt, T = 1 / 60, 180
    q_ref, qd_ref = two_link_reference(T, dt)
    t = np.arange(T + 1) * dt
    tau_ff = dc.inverse_dynamics(ch, q_ref, qd_ref, -np.c_[np.cos(t), np.cos(t)])[:T]
    push = np.zeros((T, 2))
    push[60:66] = [30.0, 15.0]

    def score(q, tau):
        return np.sqrt(np.mean(np.sum((q - q_ref) ** 2, axis=1))), np.sum((tau - tau_ff) ** 2) * dt

    base = dc.rollout(ch, q_ref[0], qd_ref[0], dt, T, tau=tau_ff, tau_ext=push)
    e_free = score(base.q, base.tau)[0]
    res = {"pd": [], "spd": [], "lqr": []}
    for kp in (10.0, 30.0, 100.0, 300.0):
        for c in ("pd", "spd"):
            r = dc.track(ch, q_ref, qd_ref, dt, kp, max(kp * dt, 2 * np.sqrt(kp)), controller=c, integrator="rk4",
                         tau_ff=tau_ff, tau_ext=push)
            res[c].append(None if r.diverged else score(r.q, r.tau))
    A, B = dc.linearize(ch, q_ref, qd_ref, tau_ff)
    z_ref = dc.state(q_ref, qd_ref)
    for R in (1e-2, 1e-3, 1e-4):
        sol = dr.lqr.solve_continuous(A, B, dt, Q=np.diag([1.0, 1.0, 0.01, 0.01]), R=R, Q_final=1.0)
        run = dr.simulate(ch, z_ref[0], T, dt, controller=dr.lqr.tracker(sol, z_ref, tau_ff), disturbance=push)
        res["lqr"].append(score(run.states[:, :2], run.controls))
    assert all(s is not None for s in res["spd"]) and any(s is None for s in res["pd"])
    lqr = np.array(res["lqr"])
    assert np.all(np.diff(lqr[:, 0]) < 0) and np.all(np.diff(lqr[:, 1]) > 0)  # trade-off: error vs effort
    best = lambda c: min(s[0] for s in res[c] if s is not None)  # noqa: E731
    assert best("spd") < best("pd")  # high gains only SPD can use
    assert best("lqr") < 0.1 * e_free and best("spd") < 0.1 * e_free
