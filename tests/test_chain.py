"""Planar chains and PD/SPD servos: M and C against the Lagrangian (NumPy
reference), the exact Jacobians against finite differences, energy
conservation, the servo loop against a NumPy loop, the integrators, torque
limits, joint limits, external models; bad input gives clear exceptions that
name the argument (or a warning where the input is legal but risky), never a
crash, never a silent NaN."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import directable as dr
from directable import chain as dc
from reference.chain import RefChain, servo_loop, two_link_reference

CHAINS = {
    "two_rods": dict(masses=[1.0, 1.0], lengths=[1.0, 1.0]),
    "varied": dict(masses=[2.0, 0.5, 1.5, 0.3], lengths=[0.7, 1.2, 0.4, 0.9], inertias=[0.1, 0.02, 0.3, 0.0],
                   coms=[0.2, 0.9, 0.1, 0.45], gravity=3.0),
    "single": dict(masses=[1.5], lengths=[0.8]),
    "free_root": dict(masses=[1.0, 0.7, 0.4], lengths=[1.0, 0.8, 0.5], free_root=True),
}


def _pair(spec):
    return dc.PlanarChain(**spec), RefChain(**spec)


def _fd(f, x, h=1e-6):
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = h
        cols.append((f(x + e) - f(x - e)) / (2 * h))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("name", list(CHAINS))
def test_mass_matrix_matches_reference_and_is_spd(rng, name):
    ch, ref = _pair(CHAINS[name])
    assert ch.n == ref.n and ch.dofs() == ref.n
    for _ in range(4):
        q = rng.uniform(-2, 2, ref.n)
        M = ch.mass_matrix(q)
        assert M.shape == (ref.n, ref.n)
        np.testing.assert_allclose(M, M.T, rtol=0, atol=1e-14)
        assert np.linalg.eigvalsh(M).min() > 0
        np.testing.assert_allclose(M, ref.mass_matrix(q), rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("name", list(CHAINS))
def test_bias_forces_match_lagrangian(rng, name):
    ch, ref = _pair(CHAINS[name])
    for _ in range(3):
        q = rng.uniform(-2, 2, ref.n)
        qd = rng.uniform(-2, 2, ref.n)
        C = ch.bias_forces(q, qd)
        np.testing.assert_allclose(C, ref.bias_forces(q, qd), rtol=1e-5, atol=1e-5 * (1 + np.abs(C).max()))
        # energies agree with the reference too
        assert ch.kinetic_energy(q, qd) == pytest.approx(ref.kinetic(q, qd), rel=1e-7)
        assert ch.potential_energy(q) == pytest.approx(ref.potential(q), rel=1e-12, abs=1e-12)


def test_conventions_hanging_down_and_gravity():
    ch = dc.PlanarChain([1.0, 2.0], [1.0, 0.5])
    P = ch.joint_positions(np.zeros(2))
    np.testing.assert_allclose(P, [[0, 0], [0, -1.0], [0, -1.5]], atol=1e-15)
    # at rest hanging down: no gravity torque; rotated by +90 deg the first joint
    # carries the full weight moment (links along +x, gravity along -y)
    np.testing.assert_allclose(ch.bias_forces(np.zeros(2), np.zeros(2)), 0, atol=1e-12)
    C = ch.bias_forces(np.array([np.pi / 2, 0.0]), np.zeros(2))
    g = 9.81
    np.testing.assert_allclose(C, [g * (1.0 * 0.5 + 2.0 * 1.25), g * 2.0 * 0.25], rtol=1e-12)
    # relative angles: bending the second joint does not move the first link
    P2 = ch.joint_positions(np.array([0.0, np.pi / 2]))
    np.testing.assert_allclose(P2[1], [0, -1], atol=1e-15)
    np.testing.assert_allclose(P2[2], [0.5, -1], atol=1e-15)
    # uniform rods by default
    np.testing.assert_allclose(ch.inertias, [1 / 12, 2 * 0.25 / 12])
    np.testing.assert_allclose(ch.coms, [0.5, 0.25])


def test_damping_enters_bias_forces(rng):
    ch = dc.PlanarChain([1.0, 1.0], [1.0, 1.0], damping=[0.3, 0.7])
    ch0 = dc.PlanarChain([1.0, 1.0], [1.0, 1.0])
    q, qd = rng.standard_normal(2), rng.standard_normal(2)
    np.testing.assert_allclose(ch.bias_forces(q, qd) - ch0.bias_forces(q, qd), [0.3 * qd[0], 0.7 * qd[1]], rtol=1e-12)
    np.testing.assert_allclose(dc.PlanarChain([1.0, 1.0], [1.0, 1.0], damping=0.5).damping, [0.5, 0.5])


@pytest.mark.parametrize("name", list(CHAINS))
def test_dynamics_and_jacobians_match_finite_differences(rng, name):
    spec = dict(CHAINS[name], damping=0.2)
    ch = dc.PlanarChain(**spec)
    n = ch.n
    q, qd, tau = rng.uniform(-1.5, 1.5, n), rng.uniform(-1, 1, n), rng.uniform(-2, 2, n)
    qdd = ch.forward_dynamics(q, qd, tau)
    # M qdd + C = tau, and inverse dynamics inverts it
    np.testing.assert_allclose(ch.mass_matrix(q) @ qdd + ch.bias_forces(q, qd), tau, atol=1e-10)
    np.testing.assert_allclose(ch.inverse_dynamics(q, qd, qdd), tau, atol=1e-10)
    J = ch.dynamics_jacobian(q, qd, tau)
    J_fd = _fd(lambda z: ch.forward_dynamics(z[:n], z[n:], tau), np.r_[q, qd])
    np.testing.assert_allclose(J, J_fd, rtol=1e-6, atol=1e-6)
    # the Model interface: F(z) = [qd; M^-1 (-C)] and its Jacobian
    z = np.r_[q, qd]
    np.testing.assert_allclose(ch.dynamics(z), np.r_[qd, ch.forward_dynamics(q, qd, np.zeros(n))], rtol=1e-13)
    np.testing.assert_allclose(ch.jacobian(z), _fd(ch.dynamics, z), rtol=1e-6, atol=1e-6)
    assert ch.state_dim() == 2 * n and ch.control_dim() == n
    np.testing.assert_allclose(ch.control_matrix()[n:], np.linalg.inv(ch.mass_matrix(np.zeros(n))), rtol=1e-12)


def test_linearize_along_reference(rng):
    ch = dc.PlanarChain([1.0, 0.5, 0.8], [1.0, 0.7, 0.6], damping=0.1)
    T, n = 5, 3
    q, qd, tau = rng.standard_normal((T + 1, n)), rng.standard_normal((T + 1, n)), rng.standard_normal((T, n))
    A, B = dc.linearize(ch, q, qd, tau)
    assert A.shape == (T, 2 * n, 2 * n) and B.shape == (T, 2 * n, n)
    for i in (0, T - 1):
        f = lambda z, u: np.r_[z[n:], ch.forward_dynamics(z[:n], z[n:], u)]  # noqa: E731
        z = np.r_[q[i], qd[i]]
        np.testing.assert_allclose(A[i], _fd(lambda x: f(x, tau[i]), z), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(B[i], _fd(lambda u: f(z, u), tau[i]), rtol=1e-6, atol=1e-6)
    A0, _ = dc.linearize(ch, q, qd)
    np.testing.assert_allclose(A0[0], ch.jacobian(np.r_[q[0], qd[0]]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("integrator,order", [("rk4", 4), ("semi_implicit", 1), ("euler", 1)])
def test_energy_conserved_as_step_shrinks(integrator, order):
    ch = dc.PlanarChain([1.0, 0.6, 0.8], [1.0, 0.8, 0.6])
    q0, qd0, t_end = np.array([1.0, -0.5, 0.8]), np.array([0.0, 1.0, -0.5]), 1.0
    E0 = dc.energy(ch, q0, qd0)
    drifts = []
    for dt in (0.02, 0.01, 0.005):
        r = dc.rollout(ch, q0, qd0, dt, int(round(t_end / dt)), integrator=integrator)
        assert not r.diverged
        drifts.append(np.abs(dc.energy(ch, r.q, r.qd) - E0).max())
    # convergence of the energy error at (about) the integrator's order
    ratios = np.array(drifts[:-1]) / np.array(drifts[1:])
    assert np.all(ratios > 2 ** order * 0.6), (drifts, ratios)
    if integrator == "rk4":
        assert drifts[-1] < 1e-5 * abs(E0) + 1e-6


def test_damping_dissipates_energy():
    ch = dc.PlanarChain([1.0, 1.0], [1.0, 1.0], damping=0.5)
    r = dc.rollout(ch, np.array([1.0, 0.5]), np.zeros(2), 0.005, 400)
    E = dc.energy(ch, r.q, r.qd)
    assert np.all(np.diff(E) < 1e-9) and E[-1] < E[0] - 0.5


def test_model_step_uses_state_dependent_inverse_mass():
    ch = dc.PlanarChain([1.0, 1.0], [1.0, 1.0])
    z, w, dt = np.array([0.4, -0.3, 0.2, 0.1]), np.array([1.0, -2.0]), 1e-3
    r = dc.rollout(ch, z[:2], z[2:], dt, 1, tau=w[None], integrator="rk4")
    np.testing.assert_allclose(ch.step(z, w, dt), np.r_[r.q[1], r.qd[1]], rtol=1e-13)
    # and the torque acts through M(q)^-1, not the rest-state B
    qdd = (ch.step(z, w, dt)[2:] - ch.step(z, 0 * w, dt)[2:]) / dt
    np.testing.assert_allclose(qdd, np.linalg.solve(ch.mass_matrix(z[:2]), w), rtol=1e-2)


# ------------------------------------------------------------------ servos
@pytest.mark.parametrize("controller", ["pd", "spd"])
@pytest.mark.parametrize("with_velocity", [False, True])
def test_servo_loop_matches_numpy(controller, with_velocity):
    ch = dc.PlanarChain([1.0, 1.0], [1.0, 1.0], damping=0.05)
    T, dt = 40, 1 / 60
    q_ref, qd_ref = two_link_reference(T, dt)
    qd_ref = qd_ref if with_velocity else None
    kp = np.linspace(100, 300, T)[:, None] * np.array([1.0, 0.5])  # time-varying, diagonal
    kd = kp * dt * 1.5
    r = dc.track(ch, q_ref, qd_ref, dt, kp, kd, controller=controller, q0=q_ref[0] + 0.1)
    q_np, tau_np = servo_loop(ch.mass_matrix, ch.bias_forces, q_ref[0] + 0.1,
                              np.zeros(2) if qd_ref is None else qd_ref[0], q_ref, qd_ref, kp, kd, dt, controller)
    assert not r.diverged and r.diverged_at == -1 and r.steps == T
    assert r.q.shape == (T + 1, 2) and r.qd.shape == (T + 1, 2) and r.tau.shape == (T, 2)
    np.testing.assert_allclose(r.q, q_np, rtol=1e-10, atol=1e-11)
    np.testing.assert_allclose(r.tau, tau_np, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("controller", ["pd", "spd"])
def test_torque_limits(controller):
    ch = dc.PlanarChain([1.0, 1.0], [1.0, 1.0])
    T, dt, lim = 60, 1 / 60, np.array([8.0, 3.0])
    q_ref, qd_ref = two_link_reference(T, dt)
    kp = np.full((T, 2), 300.0)
    r = dc.track(ch, q_ref, qd_ref, dt, kp, kp * dt, controller=controller, q0=q_ref[0] + 0.5, tau_limit=lim)
    assert np.all(np.abs(r.tau) <= lim + 1e-12)
    assert np.any(np.isclose(np.abs(r.tau), lim))  # the limit was active
    q_np, tau_np = servo_loop(ch.mass_matrix, ch.bias_forces, q_ref[0] + 0.5, qd_ref[0], q_ref, qd_ref, kp, kp * dt,
                              dt, controller, tau_lim=lim)
    np.testing.assert_allclose(r.q, q_np, rtol=1e-10, atol=1e-11)
    r2 = dc.track(ch, q_ref, qd_ref, dt, 300.0, 5.0, controller=controller, tau_min=-lim, tau_max=lim)
    assert np.all(np.abs(r2.tau) <= lim + 1e-12)


def test_spd_toy_example_converges_in_two_steps():
    # sec. 3.2: kp -> inf, kd = kp dt, gravity-free single link: q^2 = qbar
    ch = dc.PlanarChain([1.0], [1.0], gravity=0.0)
    dt, kp = 0.1, 1e12
    q_ref = np.full((4, 1), 0.7)
    r = dc.track(ch, q_ref, None, dt, kp, kp * dt, q0=np.array([0.2]), qd0=np.array([0.3]))
    assert r.q[1, 0] == pytest.approx(0.2 + dt * 0.3)
    assert r.q[2, 0] == pytest.approx(0.7, abs=1e-6)


@pytest.mark.parametrize("integrator,kd_factor", [("euler", 1.0), ("rk4", 1.0), ("semi_implicit", 1.5)])
def test_spd_stable_with_every_integrator(integrator, kd_factor):
    ch = dc.PlanarChain([1.0, 1.0], [1.0, 1.0])
    T, dt = 120, 1 / 60
    q_ref, qd_ref = two_link_reference(T, dt)
    for kp in (3e4, 3e6):
        r = dc.track(ch, q_ref, qd_ref, dt, kp, kd_factor * kp * dt, integrator=integrator)
        assert not r.diverged
        assert np.abs(r.q - q_ref).max() < 0.05


def test_spd_with_semi_implicit_euler_needs_more_damping():
    # The SPD prediction q^{n+1} = q + dt qd is explicit Euler's; with
    # semi-implicit Euler kd = kp dt is not enough at high gain (documented).
    ch = dc.PlanarChain([1.0, 1.0], [1.0, 1.0])
    T, dt = 120, 1 / 60
    q_ref, qd_ref = two_link_reference(T, dt)
    assert dc.track(ch, q_ref, qd_ref, dt, 3e4, 3e4 * dt, integrator="semi_implicit").diverged


def test_divergence_is_reported_not_raised():
    ch = dc.PlanarChain([1.0, 1.0], [1.0, 1.0])
    T, dt = 300, 1 / 60
    q_ref, qd_ref = two_link_reference(T, dt)
    r = dc.track(ch, q_ref, None, dt, 3e4, 3e4 * dt, controller="pd")
    assert r.diverged and 0 <= r.diverged_at < T and r.steps == r.diverged_at
    k = r.diverged_at
    assert np.all(np.isfinite(r.q[:k + 1])) and np.all(np.isnan(r.q[k + 1:]))
    assert np.all(np.isfinite(r.tau[:k])) and np.all(np.isnan(r.tau[k:]))
    assert np.abs(r.q[:k + 1]).max() <= 1e6
    # a tighter bound stops earlier
    r2 = dc.track(ch, q_ref, None, dt, 3e4, 3e4 * dt, controller="pd", max_state=10.0)
    assert r2.diverged and r2.diverged_at <= k


def test_joint_limits_hold():
    ch = dc.PlanarChain([1.0, 1.0], [1.0, 1.0], q_min=[-0.3, -0.2], q_max=[0.3, 0.2])
    r = dc.rollout(ch, np.array([0.25, 0.1]), np.array([3.0, -4.0]), 0.01, 200)
    assert np.all(r.q >= np.array([-0.3, -0.2]) - 1e-15) and np.all(r.q <= np.array([0.3, 0.2]) + 1e-15)
    assert np.isclose(r.q[:, 0].max(), 0.3) and np.isclose(r.q[:, 1].min(), -0.2)
    # the limit also holds against a servo pulling past it
    q_ref = np.tile([1.0, 1.0], (51, 1))
    r2 = dc.track(ch, q_ref, None, 0.01, 1e3, 20.0, q0=np.zeros(2))
    assert not r2.diverged
    assert np.all(r2.q <= np.array([0.3, 0.2]) + 1e-15) and r2.q[-1, 1] == 0.2


def test_external_model_callbacks_and_spd_step(rng):
    ch = dc.PlanarChain([1.0, 0.5], [1.0, 0.5], damping=0.1)
    calls = []

    def M(q):
        calls.append(1)
        return ch.mass_matrix(q)

    ext = dc.ExternalModel(M, ch.bias_forces, 2)
    T, dt = 30, 1 / 60
    q_ref, qd_ref = two_link_reference(T, dt)
    for integrator in ("euler", "rk4"):
        a = dc.track(ch, q_ref, qd_ref, dt, 3e3, 3e3 * dt, integrator=integrator)
        b = dc.track(ext, q_ref, qd_ref, dt, 3e3, 3e3 * dt, integrator=integrator)
        np.testing.assert_array_equal(a.q, b.q)
    assert len(calls) == T + 4 * T
    # spd_step from arrays = the first step of the loop
    tau, qdd = dc.spd_step(ch.mass_matrix(q_ref[0]), ch.bias_forces(q_ref[0], qd_ref[0]), q_ref[0], qd_ref[0],
                           q_ref[1], qd_ref[1], 3e3, 3e3 * dt, dt)
    np.testing.assert_allclose(tau, a.tau[0], rtol=1e-12)
    np.testing.assert_allclose(qd_ref[0] + dt * qdd, dc.track(ch, q_ref, qd_ref, dt, 3e3, 3e3 * dt).qd[1], rtol=1e-12)


def test_external_model_bad_callbacks_raise():
    ext = dc.ExternalModel(lambda q: -np.eye(2), lambda q, qd: np.zeros(2), 2)
    q_ref = np.zeros((3, 2))
    with pytest.raises(ValueError, match="positive definite"):
        dc.track(ext, q_ref, None, 0.01, 1.0, 0.1, controller="pd")
    ext2 = dc.ExternalModel(lambda q: np.eye(3), lambda q, qd: np.zeros(2), 2)
    with pytest.raises(ValueError, match=r"mass_matrix\(q\) must have shape \(2, 2\), got \(3, 3\)"):
        dc.track(ext2, q_ref, None, 0.01, 1.0, 0.1)
    ext3 = dc.ExternalModel(lambda q: np.eye(2), lambda q, qd: np.array([np.nan, 0.0]), 2)
    with pytest.raises(ValueError, match=r"bias_forces\(q, qd\) must be finite"):
        dc.track(ext3, q_ref, None, 0.01, 1.0, 0.1)


def test_lqr_drives_the_chain_through_the_model_interface():
    ch = dc.PlanarChain([1.0, 1.0], [1.0, 1.0], damping=0.1)
    T, dt = 60, 1 / 60
    q_ref, qd_ref = two_link_reference(T, dt)
    qdd_ref = -np.c_[np.cos(np.arange(T + 1) * dt), np.cos(np.arange(T + 1) * dt)]
    tau_ff = dc.inverse_dynamics(ch, q_ref, qd_ref, qdd_ref)[:T]
    A, B = dc.linearize(ch, q_ref, qd_ref, tau_ff)
    sol = dr.lqr.solve_continuous(A, B, dt, Q=np.diag([100.0, 100, 1, 1]), R=1e-2, Q_final=100.0)
    z_ref = dc.state(q_ref, qd_ref)
    ctrl = dr.lqr.tracker(sol, z_ref, tau_ff)
    z0 = z_ref[0] + np.array([0.2, -0.2, 0, 0])
    run = dr.simulate(ch, z0, T, dt, controller=ctrl)
    free = dr.simulate(ch, z0, T, dt, open_loop=tau_ff)
    err = np.linalg.norm(run.states[:, :2] - q_ref, axis=1)
    err_free = np.linalg.norm(free.states[:, :2] - q_ref, axis=1)
    assert err[-1] < 0.02 and err_free[-1] > 10 * err[-1]


# ------------------------------------------------------------------- bad input
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
    with pytest.raises(ValueError, match=r"qd_ref must have shape \(\d+, 2\) \(that of q_ref\), got \(5, 2\)"):
        dc.linearize(ch, q, qd[:5])


def test_bad_crossfade_arguments():
    with pytest.raises(ValueError, match=r"key_steps must increase from 0 to steps=10"):
        dc.crossfade([0, 5, 4, 10], np.zeros((4, 2)), 1.0, 10)
    with pytest.raises(ValueError, match=r"key_q must have shape \(3, n\)"):
        dc.crossfade([0, 5, 10], np.zeros((2, 2)), 1.0, 10)
