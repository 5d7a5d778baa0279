"""Bad input for chains and servos (issue 5, sec. 4): clear exceptions that
name the argument (or a warning where the input is legal but risky), never a
crash, never a silent NaN."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from directable import chain as dc


def _chain():
    return dc.PlanarChain([1.0, 1.0], [1.0, 1.0])


@pytest.mark.parametrize("kw,match", [
    (dict(masses=[1.0, 0.0], lengths=[1.0, 1.0]), r"masses\[1\] must be a positive finite number, got 0"),
    (dict(masses=[1.0, -2.0], lengths=[1.0, 1.0]), r"masses\[1\] must be a positive finite number, got -2"),
    (dict(masses=[1.0, 1.0], lengths=[0.0, 1.0]), r"lengths\[0\] must be a positive finite number, got 0"),
    (dict(masses=[1.0, 1.0], lengths=[1.0, -1.0]), r"lengths\[1\]"),
    (dict(masses=[1.0, np.nan], lengths=[1.0, 1.0]), r"masses must be finite"),
    (dict(masses=[1.0, 1.0], lengths=[1.0]), r"lengths must have shape \(2,\), got \(1,\)"),
    (dict(masses=[], lengths=[]), r"masses must hold at least one link"),
    (dict(masses=[[1.0]], lengths=[1.0]), r"masses must have shape \(n,\), got \(1, 1\)"),
    (dict(masses=[1.0, 1.0], lengths=[1.0, 1.0], inertias=[1.0, -1.0]), r"inertias\[1\] must be finite and >= 0"),
    (dict(masses=[1.0, 1.0], lengths=[1.0, 1.0], damping=[1.0, 1.0, 1.0]), r"damping must have shape \(2,\), got \(3,\)"),
    (dict(masses=[1.0, 1.0], lengths=[1.0, 1.0], damping=-1.0), r"damping\[0\] must be finite and >= 0"),
    (dict(masses=[1.0, 1.0], lengths=[1.0, 1.0], q_min=[0.0, 1.0], q_max=[1.0, 0.0]), r"q_min <= q_max"),
    (dict(masses=[1.0, 1.0], lengths=[1.0, 1.0], gravity=np.inf), r"gravity must be finite"),
    (dict(masses=[1.0], lengths=[1.0], free_root=True, damping=[0.0]), r"damping must have shape \(3,\)"),
])
def test_bad_chain_parameters(kw, match):
    with pytest.raises(ValueError, match=match):
        dc.PlanarChain(**kw)


def test_bad_chain_types():
    with pytest.raises(TypeError, match="real numeric array"):
        dc.PlanarChain(["a", "b"], [1.0, 1.0])
    with pytest.raises(TypeError, match="real numeric array"):
        dc.PlanarChain([1 + 1j, 1.0], [1.0, 1.0])


def test_bad_state_arguments():
    ch = _chain()
    with pytest.raises(ValueError, match=r"q must have shape \(2,\), got \(3,\)"):
        ch.mass_matrix(np.zeros(3))
    with pytest.raises(ValueError, match=r"qd must have shape \(2,\), got \(2, 1\)"):
        ch.bias_forces(np.zeros(2), np.zeros((2, 1)))
    with pytest.raises(ValueError, match=r"q must be finite"):
        ch.mass_matrix(np.array([np.nan, 0.0]))
    with pytest.raises(ValueError, match=r"tau must have shape \(2,\)"):
        ch.forward_dynamics(np.zeros(2), np.zeros(2), np.zeros(1))


def _ref(T=10):
    t = np.arange(T + 1) / 60
    return np.c_[np.cos(t), np.cos(t) + 1], np.c_[-np.sin(t), -np.sin(t)]


@pytest.mark.parametrize("change,exc,match", [
    (dict(q_ref=np.zeros((11, 3))), ValueError, r"q_ref must have shape \(T\+1, 2\) with T >= 1, got \(11, 3\)"),
    (dict(q_ref=np.zeros((1, 2))), ValueError, r"q_ref must have shape \(T\+1, 2\)"),
    (dict(q_ref=np.zeros(2)), ValueError, r"q_ref must have shape"),
    (dict(qd_ref=np.zeros((10, 2))), ValueError, r"qd_ref must have shape \(11, 2\), got \(10, 2\)"),
    (dict(kp=np.ones(3)), ValueError, r"kp must be a scalar, \(2,\) or \(10, 2\), got shape \(3,\)"),
    (dict(kd=np.ones((9, 2))), ValueError, r"kd must be a scalar, \(2,\) or \(10, 2\), got shape \(9, 2\)"),
    (dict(kp=-1.0), ValueError, r"kp must be >= 0, got -1"),
    (dict(kp=np.nan), ValueError, r"kp must be finite"),
    (dict(dt=0.0), ValueError, r"dt must be a positive finite number, got 0"),
    (dict(dt="a"), TypeError, r"dt must be a real number"),
    (dict(q0=np.zeros(3)), ValueError, r"q0 must have shape \(2,\), got \(3,\)"),
    (dict(qd0=np.array([np.inf, 0.0])), ValueError, r"qd0 must be finite"),
    (dict(controller="lqr"), ValueError, r"controller must be one of"),
    (dict(integrator="verlet"), ValueError, r"integrator must be one of"),
    (dict(tau_ff=np.zeros((11, 2))), ValueError, r"tau_ff must have shape \(10, 2\), got \(11, 2\)"),
    (dict(tau_ext=np.full((10, 2), np.nan)), ValueError, r"tau_ext must be finite"),
    (dict(tau_min=np.ones(2), tau_max=-np.ones(2)), ValueError, r"tau_min must be <= tau_max"),
    (dict(tau_limit=-1.0), ValueError, r"tau_limit must be >= 0"),
    (dict(tau_limit=np.ones(3)), ValueError, r"tau_min must have shape \(2,\), got \(3,\)"),
    (dict(max_state=0.0), ValueError, r"max_state must be a positive finite number"),
])
def test_bad_track_arguments(change, exc, match):
    q_ref, qd_ref = _ref()
    kw = dict(chain=_chain(), q_ref=q_ref, qd_ref=qd_ref, dt=1 / 60, kp=300.0, kd=5.0)
    kw.update(change)
    with pytest.raises(exc, match=match):
        dc.track(**kw)


def test_nan_reference_is_rejected():
    q_ref, qd_ref = _ref()
    q_ref[4, 1] = np.nan
    with pytest.raises(ValueError, match=r"q_ref must be finite, got nan at flat index 9"):
        dc.track(_chain(), q_ref, qd_ref, 1 / 60, 300.0, 5.0)
    q_ref, qd_ref = _ref()
    qd_ref[2, 0] = np.inf
    with pytest.raises(ValueError, match=r"qd_ref must be finite"):
        dc.track(_chain(), q_ref, qd_ref, 1 / 60, 300.0, 5.0)


def test_bad_model_type():
    q_ref, qd_ref = _ref()
    with pytest.raises(TypeError, match="chain must be a PlanarChain or an Articulated model"):
        dc.track(object(), q_ref, qd_ref, 1 / 60, 300.0, 5.0)


def test_small_kd_warns_for_spd_only():
    q_ref, qd_ref = _ref()
    dt, kp = 1 / 60, 3e3
    with pytest.warns(RuntimeWarning, match=r"kd < kp \* dt .*SPD stability is not guaranteed"):
        r = dc.track(_chain(), q_ref, qd_ref, dt, kp, 0.5 * kp * dt)
    assert r.q.shape == (11, 2)  # allowed: it still runs
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dc.track(_chain(), q_ref, qd_ref, dt, kp, kp * dt)  # kd = kp dt exactly: no warning
        dc.track(_chain(), q_ref, qd_ref, dt, 30.0, 0.1, controller="pd")
    with pytest.warns(RuntimeWarning):  # per-step gains: any step counts
        kpT = np.full((10, 2), kp)
        kdT = kpT * dt
        kdT[7, 1] *= 0.9
        dc.track(_chain(), q_ref, qd_ref, dt, kpT, kdT)


def test_bad_spd_step_arguments():
    M, C, z = np.eye(2), np.zeros(2), np.zeros(2)
    with pytest.raises(ValueError, match=r"M must have shape \(2, 2\), got \(3, 3\)"):
        dc.spd_step(np.eye(3), C, z, z, z, z, 1.0, 1.0, 0.1)
    with pytest.raises(ValueError, match=r"C must have shape \(2,\), got \(3,\)"):
        dc.spd_step(M, np.zeros(3), z, z, z, z, 1.0, 1.0, 0.1)
    with pytest.raises(ValueError, match=r"symmetric positive definite"):
        dc.spd_step(-np.eye(2), C, z, z, z, z, 1.0, 0.0, 0.1)
    with pytest.raises(ValueError, match=r"q_ref_next must be finite"):
        dc.spd_step(M, C, z, z, np.array([np.nan, 0]), z, 1.0, 1.0, 0.1)


def test_bad_linearize_arguments():
    ch = _chain()
    q, qd = _ref()
    with pytest.raises(ValueError, match=r"tau_ref must have shape \(10, 2\), got \(11, 2\)"):
        dc.linearize(ch, q, qd, np.zeros((11, 2)))
    with pytest.raises(ValueError, match=r"q and qd must have the same shape"):
        dc.linearize(ch, q, qd[:5])


def test_bad_crossfade_arguments():
    with pytest.raises(ValueError, match=r"key_steps must increase from 0 to steps=10"):
        dc.crossfade([0, 5, 4, 10], np.zeros((4, 2)), 1.0, 10)
    with pytest.raises(ValueError, match=r"key_q must have shape \(3, n\)"):
        dc.crossfade([0, 5, 10], np.zeros((2, 2)), 1.0, 10)
