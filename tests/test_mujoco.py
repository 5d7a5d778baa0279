"""directable.mujoco: linearization, tangent states, LQR and SPD on MuJoCo models."""
import importlib
import subprocess
import sys
import warnings

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")
import directable.mujoco as dm  # noqa: E402

PENDULUM = """
<mujoco><option timestep="0.01" integrator="Euler" gravity="0 0 -9.81"/>
<worldbody><body><joint name="h" type="hinge" axis="0 1 0"/>
<geom type="sphere" pos="0 0 -1" size="0.05" mass="2"/></body></worldbody>
<actuator><motor joint="h" gear="1"/></actuator></mujoco>"""

BALL = """
<mujoco><option timestep="0.01" integrator="Euler"/>
<worldbody><body pos="0 0 1"><joint name="b" type="ball" damping="0.3" armature="0.05"/>
<geom type="capsule" fromto="0 0 0 0.1 0 -0.5" size="0.04" mass="1.5"/>
<body pos="0.1 0 -0.5"><joint name="e" type="hinge" axis="0 1 0" damping="0.2"/>
<geom type="capsule" fromto="0 0 0 0 0.1 -0.4" size="0.03" mass="1"/></body></body></worldbody>
<actuator><motor joint="e" gear="2"/></actuator></mujoco>"""


def model(xml):
    return mujoco.MjModel.from_xml_string(xml)


def asset(name):
    from importlib.resources import files
    return mujoco.MjModel.from_xml_path(str(files("directable.experiments") / "assets" / name))


def step_fd(m, x, u, eps=1e-6):
    """Our own centred differences of one mj_step in the tangent space."""
    d = mujoco.MjData(m)
    n = dm.nx(m)

    def f(x, u):
        dm.set_state(m, d, x)
        d.ctrl[:] = u
        mujoco.mj_step(m, d)
        return dm.state(m, d)

    def diff(a, b):  # a (-) b
        return dm.difference(m, a, b)

    A = np.zeros((n, n))
    for j in range(n):
        e = np.zeros(n)
        e[j] = eps
        xp, xm = x.copy(), x.copy()
        # a tangent perturbation of the position is applied on the manifold
        qp, qm = dm.qpos_of(m, x), dm.qpos_of(m, x)
        if j < m.nv:
            mujoco.mj_integratePos(m, qp, e[:m.nv], 1.0)
            mujoco.mj_integratePos(m, qm, -e[:m.nv], 1.0)
            xp = dm.tangent_of(m, qp, x[m.nv:2 * m.nv], x[2 * m.nv:])
            xm = dm.tangent_of(m, qm, x[m.nv:2 * m.nv], x[2 * m.nv:])
        else:
            xp[j] += eps
            xm[j] -= eps
        A[:, j] = diff(f(xp, u), f(xm, u)) / (2 * eps)
    B = np.zeros((n, m.nu))
    for j in range(m.nu):
        e = np.zeros(m.nu)
        e[j] = eps
        B[:, j] = diff(f(x, u + e), f(x, u - e)) / (2 * eps)
    return A, B


def test_linearize_pendulum_matches_the_analytic_euler_step():
    m = model(PENDULUM)
    T, dt = 4, m.opt.timestep
    q = np.array([0.3, -1.0, 2.0, 0.0, 0.7])
    ref = np.stack([q, np.zeros(5)], axis=1)
    A, B = dm.linearize(m, ref, np.zeros((T, 1)))
    inertia = 2 * 1.0 + 0.4 * 2 * 0.05 ** 2
    for i in range(T):
        a_q = -2 * 9.81 * 1.0 * np.cos(q[i]) / inertia
        # semi-implicit Euler: v' = v + dt a, q' = q + dt v'
        A_ref = np.array([[1 + dt * dt * a_q, dt], [dt * a_q, 1]])
        B_ref = np.array([[dt * dt / inertia], [dt / inertia]])
        np.testing.assert_allclose(A[i], A_ref, atol=1e-6)
        np.testing.assert_allclose(B[i], B_ref, atol=1e-7)


def test_linearize_ball_joint_matches_own_finite_differences_and_threads_agree():
    m = model(BALL)
    rng = np.random.default_rng(0)
    T = 3
    ref = rng.normal(scale=0.4, size=(T + 1, dm.nx(m)))
    ctrl = rng.normal(size=(T, m.nu))
    A, B = dm.linearize(m, ref, ctrl, threads=2)
    A1, B1 = dm.linearize(m, ref, ctrl, threads=1)
    np.testing.assert_array_equal(A, A1)
    np.testing.assert_array_equal(B, B1)
    assert A.shape == (T, 8, 8) and B.shape == (T, 8, 1)
    for i in range(T):
        A_fd, B_fd = step_fd(m, ref[i], ctrl[i])
        np.testing.assert_allclose(A[i], A_fd, atol=2e-5)
        np.testing.assert_allclose(B[i], B_fd, atol=2e-5)


def test_state_round_trip_and_quaternion_tangent():
    m = model(BALL)
    d = mujoco.MjData(m)
    x = np.array([0.3, -0.2, 0.5, 0.4, 1, 2, 3, 4.0])
    dm.set_state(m, d, x)
    # ball joint: the rotation vector (0.3, -0.2, 0.5) as a quaternion
    ang = np.linalg.norm(x[:3])
    np.testing.assert_allclose(d.qpos[:4], np.r_[np.cos(ang / 2), np.sin(ang / 2) * x[:3] / ang], atol=1e-14)
    np.testing.assert_allclose(dm.state(m, d), x, atol=1e-13)
    np.testing.assert_allclose(dm.qpos_of(m, x), d.qpos, atol=1e-15)
    # the difference is not a vector subtraction for the ball joint
    y = x.copy()
    y[:3] = [-0.1, 0.4, 0.2]
    dxy = dm.difference(m, x, y)
    d2 = mujoco.MjData(m)
    q = dm.qpos_of(m, y)
    mujoco.mj_integratePos(m, q, dxy[:m.nv], 1.0)
    np.testing.assert_allclose(q, dm.qpos_of(m, x), atol=1e-12)
    assert np.linalg.norm(dxy[:3] - (x[:3] - y[:3])) > 1e-2
    del d2


def test_reference_rollout_matches_a_python_mj_step_loop():
    m = model(BALL)
    rng = np.random.default_rng(3)
    x0 = rng.normal(scale=0.3, size=dm.nx(m))
    ctrl = rng.normal(size=(20, 1))
    xs = dm.reference_rollout(m, x0, ctrl)
    d = mujoco.MjData(m)
    dm.set_state(m, d, x0)
    for i in range(20):
        d.ctrl[:] = ctrl[i]
        mujoco.mj_step(m, d)
        np.testing.assert_allclose(xs[i + 1], dm.state(m, d), atol=1e-12)
    assert xs.shape == (21, dm.nx(m))


def cartpole_run(push, with_control=True):
    m = asset("cartpole.xml")
    d = mujoco.MjData(m)
    T = 300
    ref = np.zeros((T + 1, 4))
    tr = dm.LQRTracker.from_linearization(m, ref, np.zeros((T, 1)), Q=np.diag([1.0, 10, 1, 1]), R=0.01)
    if not with_control:
        tr = dm.LQRTracker(m, ref, np.zeros((T, 1, 4)))
    dist = np.zeros((T, m.nv))
    dist[20:25, 0] = push  # a push on the cart, N, for 0.05 s
    d.qpos[1] = 0.02
    return dm.run(m, d, tr, T, disturbance=dist)


def test_lqr_cartpole_tracks_the_upright_pole_under_a_push():
    r = cartpole_run(30.0)
    assert not r.diverged
    assert np.max(np.abs(r.x[25:, 1])) > 0.01  # the push tilts the pole
    assert abs(r.x[-1, 0]) < 0.05 and np.max(np.abs(r.x[-1, 1:])) < 1e-2  # and the tracker brings it back
    assert np.max(np.abs(r.x[:, 1])) < 0.5
    free = cartpole_run(30.0, with_control=False)
    assert np.max(np.abs(free.x[:, 1])) > 1.0  # the pole falls without feedback


def test_lqr_feedback_uses_the_manifold_difference():
    m = model(BALL)
    d = mujoco.MjData(m)
    ref = np.zeros((3, dm.nx(m)))
    ref[:, :3] = [0.2, 0.1, -0.3]
    K = np.random.default_rng(1).normal(size=(1, dm.nx(m)))
    tr = dm.LQRTracker(m, ref, np.broadcast_to(K, (2, 1, 8)), ctrl_ref=np.full((2, 1), 0.5))
    x = np.array([0.5, -0.2, 0.1, 0.3, 0.1, 0.2, 0.3, 0.4])
    dm.set_state(m, d, x)
    np.testing.assert_allclose(tr.control(1, d), 0.5 + K @ dm.difference(m, x, ref[1]), atol=1e-12)


def quat_mul(a, b):
    w1, v1, w2, v2 = a[0], a[1:], b[0], b[1:]
    return np.r_[w1 * w2 - v1 @ v2, w1 * v2 + w2 * v1 + np.cross(v1, v2)]


def quat_log(q):  # rotation vector of a unit quaternion
    q = q if q[0] >= 0 else -q
    s = np.linalg.norm(q[1:])
    return np.zeros(3) if s < 1e-15 else 2 * np.arctan2(s, q[0]) * q[1:] / s


def quat_exp(v):
    a = np.linalg.norm(v)
    return np.r_[1, 0, 0, 0] if a == 0 else np.r_[np.cos(a / 2), np.sin(a / 2) * v / a]


def spd_numpy(M, C, damping, qpos, qvel, q_ref, qd_ref, kp, kd, dt):
    """Eq. 11 of Tan et al. with the ball joint (qpos[:4]) handled by hand, hinge qpos[4]."""
    q_pred_ball = quat_mul(qpos[:4], quat_exp(qvel[:3] * dt))  # body-frame angular velocity
    conj = q_ref[:4] * np.r_[1, -1, -1, -1]
    p = np.r_[quat_log(quat_mul(conj, q_pred_ball)), qpos[4] + dt * qvel[3] - q_ref[4]]
    A = M + dt * np.diag(damping) + dt * np.diag(kd)
    qdd = np.linalg.solve(A, -C - kp * p - kd * (qvel - qd_ref))
    return -kp * p - kd * (qvel + dt * qdd - qd_ref), qdd


def test_spd_matches_a_numpy_transcription_of_eq_11_with_a_ball_joint():
    m = model(BALL)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(7)
    dm.set_state(m, d, rng.normal(scale=0.5, size=8))
    q_ref = dm.qpos_of(m, rng.normal(scale=0.5, size=8))
    qd_ref = rng.normal(size=4)
    kp, kd, dt = np.array([300.0, 200, 100, 50]), np.array([30.0, 20, 10, 5]), 0.02
    tau, qacc = dm.spd(m, d, q_ref, qd_ref, kp, kd, dt, return_qacc=True)
    M = np.zeros((4, 4))
    dm._full_mass(m, d, M)  # mj_fullM, whose signature changed in MuJoCo 3.3
    C = d.qfrc_bias - d.qfrc_passive
    tau_np, qdd_np = spd_numpy(M, C, m.dof_damping, d.qpos, d.qvel, q_ref, qd_ref, kp, kd, dt)
    np.testing.assert_allclose(tau, tau_np, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(qacc, qdd_np, rtol=1e-10, atol=1e-9)


def test_spd_prediction_is_what_mujoco_integrates_and_the_mask_zeroes_torques():
    m = model(BALL)
    d = mujoco.MjData(m)
    dm.set_state(m, d, np.random.default_rng(2).normal(scale=0.5, size=8))
    q0, v0 = d.qpos.copy(), d.qvel.copy()
    mask = np.array([True, True, False, True])
    tau, qacc = dm.spd(m, d, m.qpos0, None, 500.0, 50.0, m.opt.timestep, actuated=mask, return_qacc=True)
    assert tau[2] == 0.0 and np.all(tau[mask] != 0)
    d.qfrc_applied[:] = tau
    mujoco.mj_step(m, d)
    # implicit joint damping and armature are inside the (M + dt D + dt Kd) solve
    np.testing.assert_allclose(d.qvel, v0 + m.opt.timestep * qacc, atol=1e-10)
    assert not np.allclose(d.qpos, q0)


def humanoid_hold(controller, steps=45, c=2.0):
    h = asset("humanoid.xml")
    d = mujoco.MjData(h)
    kp = 1e4 * dm.supported_mass(h)
    tr = dm.SPDTracker(h, np.tile(h.qpos0, (steps + 1, 1)), None, kp, c * kp * h.opt.timestep,
                       controller=controller)
    d.qvel[:] = np.random.default_rng(0).normal(scale=0.3, size=h.nv)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = dm.run(h, d, tr, steps)
    return r, w


def test_spd_is_stable_at_dt_1_30_where_explicit_pd_diverges_with_the_step_reported():
    r, w = humanoid_hold("spd")
    assert not r.diverged and r.diverged_at == -1 and not w
    assert np.max(np.abs(r.x[-1, :30])) < 1e-2
    r, w = humanoid_hold("pd")
    assert r.diverged and r.diverged_at >= 0
    assert np.all(np.isnan(r.x[r.diverged_at + 1:])) and np.all(np.isfinite(r.x[:r.diverged_at + 1]))
    assert any(f"diverged at step {r.diverged_at}" in str(x.message) for x in w)


def test_zordan_hodgins_schedule():
    g = dm.zordan_hodgins_schedule(100, 0.1, [10], k_t=100.0, k_r=5.0, t_e=1.0, t_f=2.0)
    np.testing.assert_array_equal(g[:10], 100.0)
    np.testing.assert_allclose(g[10:21], 5.0)
    np.testing.assert_allclose(g[25], 5 + 95 * 0.25)
    np.testing.assert_allclose(g[40:], 100.0)
    assert np.all(np.diff(g[20:41]) >= 0)


def test_quaternions_not_unit_are_normalised_with_a_warning():
    m = model(BALL)
    d = mujoco.MjData(m)
    q = np.array([2.0, 0, 0, 0, 0.1])
    with pytest.warns(UserWarning, match="normalised"):
        tau = dm.spd(m, d, q, None, 10.0, 1.0, 0.01)
    np.testing.assert_allclose(tau, dm.spd(m, d, np.array([1.0, 0, 0, 0, 0.1]), None, 10.0, 1.0, 0.01))
    with pytest.raises(ValueError, match="q_ref_next.*zero quaternion"):
        dm.spd(m, d, np.zeros(5), None, 10.0, 1.0, 0.01)


@pytest.mark.parametrize("call, match", [
    (lambda m, d: dm.linearize(m, np.zeros((5, 8)), np.zeros((3, 1))), r"reference must have shape \(4, 8\)"),
    (lambda m, d: dm.linearize(m, np.zeros((4, 7)), np.zeros((3, 1))), r"reference must have shape \(T, 8\)"),
    (lambda m, d: dm.linearize(m, np.zeros((4, 8)), np.zeros((3, 1)), eps=-1), "eps must be > 0"),
    (lambda m, d: dm.set_state(m, d, np.zeros(7)), r"x must have shape \(8,\), got \(7,\)"),
    (lambda m, d: dm.reference_rollout(m, np.zeros(9), np.zeros((3, 1))), r"x0 must have shape \(8,\)"),
    (lambda m, d: dm.reference_rollout(m, np.zeros(8), None), "ctrl must be an array"),
    (lambda m, d: dm.spd(m, d, m.qpos0, None, 1.0, 1.0, 0.01, actuated=np.ones(3, bool)),
     r"actuated must be a bool mask of shape \(4,\)"),
    (lambda m, d: dm.spd(m, d, m.qpos0, None, -1.0, 1.0, 0.01), "kp must be finite and >= 0"),
    (lambda m, d: dm.spd(m, d, m.qpos0, None, 1.0, None, 0.01), "kd must be"),
    (lambda m, d: dm.spd(m, d, m.qpos0, None, 1.0, 1.0, -0.01), "dt must be > 0"),
    (lambda m, d: dm.spd(m, None, m.qpos0, None, 1.0, 1.0, 0.01), "data must be"),
    (lambda m, d: dm.spd(m, d, np.zeros(4), None, 1.0, 1.0, 0.01), r"q_ref_next must have shape \(5,\)"),
    (lambda m, d: dm.SPDTracker(m, np.tile(m.qpos0, (3, 1)), None, np.ones((5, 4)), 1.0),
     r"kp must be a scalar, \(4,\) or \(2, 4\)"),
    (lambda m, d: dm.LQRTracker(m, np.zeros((3, 8)), np.zeros((2, 1, 7))), r"K must have shape \(2, 1, 8\)"),
    (lambda m, d: dm.run(m, d, dm.LQRTracker(m, np.zeros((3, 8)), np.zeros((1, 8))), 5),
     r"steps must be in \[1, 2\]"),
    (lambda m, d: dm.run(m, d, None, 1), "tracker must be"),
    (lambda m, d: dm.zordan_hodgins_schedule(10, 0.1, [1], 1.0, -1.0, 0.1, 0.1), "k_r must be finite and >= 0"),
    (lambda m, d: dm.zordan_hodgins_schedule(10, 0.1, [12], 1.0, 1.0, 0.1, 0.1), r"contact_steps must lie"),
    (lambda m, d: dm.state(None, d), "model must be a mujoco.MjModel"),
])
def test_bad_input_is_a_value_error_naming_the_argument(call, match):
    m = model(BALL)
    d = mujoco.MjData(m)
    with pytest.raises(ValueError, match=match):
        call(m, d)


def test_reference_rollout_reports_divergence_with_the_step():
    m = model(PENDULUM)
    ctrl = np.zeros((10, 1))
    ctrl[4] = 1e300
    with pytest.raises(RuntimeError, match="diverged at step 4"):
        dm.reference_rollout(m, np.zeros(2), ctrl)


def test_missing_mujoco_raises_import_error_with_the_install_line():
    code = ("import sys; sys.modules['mujoco'] = None\n"
            "try:\n    import directable.mujoco\nexcept ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert 'pip install "directable[mujoco]"' in out
    importlib.import_module("directable.mujoco")


def test_spd_by_implicit_damping_equals_the_explicit_solve_and_restores_the_model():
    h = asset("humanoid.xml")
    T = 30
    rng = np.random.default_rng(5)
    q_ref = np.tile(h.qpos0, (T + 1, 1))
    q_ref[:, 7:] += 0.2 * np.sin(np.linspace(0, 2, T + 1))[:, None]
    kp = np.abs(rng.normal(size=(T, h.nv))) * 1e3 * dm.supported_mass(h)
    runs = {}
    damping0 = h.dof_damping.copy()
    for method in ("solve", "damping"):
        d = mujoco.MjData(h)
        with pytest.warns(UserWarning, match="normalised"):
            tr = dm.SPDTracker(h, q_ref, None, kp, 3 * kp * h.opt.timestep, method=method)
        runs[method] = dm.run(h, d, tr, T)
        np.testing.assert_array_equal(h.dof_damping, damping0)
    np.testing.assert_allclose(runs["damping"].qpos, runs["solve"].qpos, atol=1e-9)
    np.testing.assert_allclose(runs["damping"].u, runs["solve"].u, rtol=1e-7, atol=1e-6 * np.abs(runs["solve"].u).max())
    h.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    with pytest.raises(ValueError, match="method 'damping' needs"):
        dm.SPDTracker(h, h.qpos0[None].repeat(2, 0), None, 1.0, 1.0, method="damping")
    assert dm.SPDTracker(h, h.qpos0[None].repeat(2, 0), None, 1.0, 1.0).method == "solve"


def test_run_adds_the_disturbance_to_the_servo_torque():
    m = model(BALL)
    T = 40
    push = np.zeros((T, m.nv))
    push[5:10, 3] = 5.0  # N m on the elbow
    runs = []
    for dist in (None, push):
        d = mujoco.MjData(m)
        tr = dm.SPDTracker(m, np.tile(m.qpos0, (T + 1, 1)), None, 50.0, 5.0)
        runs.append(dm.run(m, d, tr, T, disturbance=dist))
    still, pushed = runs
    np.testing.assert_array_equal(pushed.x[:6], still.x[:6])  # the same until the push acts
    assert np.max(np.abs(pushed.x[10:, 3] - still.x[10:, 3])) > 1e-3  # then the elbow is pushed
    # the recorded torque is the servo's alone, and it resists the push
    assert np.all(pushed.u[6:10, 3] < still.u[6:10, 3])
    with pytest.raises(ValueError, match=r"disturbance must have shape \(40, 4\)"):
        dm.run(m, mujoco.MjData(m), tr, T, disturbance=np.zeros((T, 3)))
