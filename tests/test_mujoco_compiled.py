"""directable.mujoco's compiled path: MuJoCo's C API found at run time, whole runs in C++, the SPD kernel.

Every compiled result is compared with the Python loop (``engine="python"``) or an independent
NumPy transcription of eq. 11 on a dense mass matrix.
"""
import threading

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")
import directable.mujoco as dm  # noqa: E402
from directable import _core  # noqa: E402

available, where = dm.compiled_loop_available()
pytestmark = pytest.mark.skipif(not available, reason=f"compiled MuJoCo loop unavailable: {where}")

# a free-floating two-body tree with a ball joint, a hinge, damping, armature and one motor
TREE = """
<mujoco><option timestep="0.01" integrator="implicitfast" gravity="0 0 -9.81"/>
<worldbody><geom type="plane" size="5 5 .1"/>
<body pos="0 0 1"><freejoint/><geom type="box" size=".1 .08 .05" mass="3"/>
<body pos="0 0 -0.1"><joint name="b" type="ball" damping="0.3" armature="0.05"/>
<geom type="capsule" fromto="0 0 0 0.1 0 -0.5" size="0.04" mass="1.5"/>
<body pos="0.1 0 -0.5"><joint name="e" type="hinge" axis="0 1 0" damping="0.2" armature="0.01"/>
<geom type="capsule" fromto="0 0 0 0 0.1 -0.4" size="0.03" mass="1"/></body></body>
<body pos="0.1 0 0"><joint name="h2" type="hinge" axis="1 0 0" damping="0.1"/>
<geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="0.5"/></body></body></worldbody>
<actuator><motor joint="e" gear="2"/><motor joint="h2" gear="1"/></actuator></mujoco>"""


def tree_model(integrator="implicitfast"):
    m = mujoco.MjModel.from_xml_string(TREE.replace("implicitfast", integrator))
    return m


def random_state(m, seed=0):
    rng = np.random.default_rng(seed)
    d = mujoco.MjData(m)
    x = np.zeros(dm.nx(m))
    x[:m.nv] = rng.normal(scale=0.3, size=m.nv)
    x[m.nv:2 * m.nv] = rng.normal(scale=0.5, size=m.nv)
    dm.set_state(m, d, x)
    mujoco.mj_forward(m, d)
    return d


def numpy_spd(m, d, q_ref, qd_ref, kp, kd, dt, damping):
    """Eq. 11 with a dense NumPy solve (independent of the tree factorisation)."""
    M = np.zeros((m.nv, m.nv))
    mujoco.mj_fullM(m, d, M)
    C = d.qfrc_bias - d.qfrc_passive
    q = d.qpos.copy()
    mujoco.mj_integratePos(m, q, d.qvel, dt)
    p = np.zeros(m.nv)
    mujoco.mj_differentiatePos(m, p, 1.0, q_ref, q)
    A = M + dt * np.diag(damping + kd)
    qdd = np.linalg.solve(A, -C - kp * p - kd * (d.qvel - qd_ref))
    return -kp * p - kd * (d.qvel + dt * qdd - qd_ref), qdd


def test_the_library_is_the_one_mujoco_loaded_and_of_the_header_release():
    lib = dm._library()
    assert lib.version == mujoco.mj_version()
    assert lib.version // 10000 == _core.MujocoLibrary.header_version // 10000
    with pytest.raises(ValueError, match="library must be a loadable MuJoCo shared library"):
        _core.MujocoLibrary("/nonexistent/libmujoco.so")
    import ctypes.util
    libm = ctypes.util.find_library("m")
    if libm:
        with pytest.raises(ValueError, match="has no symbol mj_version"):
            _core.MujocoLibrary(libm)


@pytest.mark.parametrize("integrator", ["implicitfast", "Euler", "RK4"])
def test_spd_kernel_matches_a_dense_numpy_solve_on_a_tree(integrator):
    m = tree_model(integrator)
    d = random_state(m)
    rng = np.random.default_rng(1)
    q_ref = m.qpos0.copy()
    mujoco.mj_integratePos(m, q_ref, rng.normal(scale=0.2, size=m.nv), 1.0)
    qd_ref = rng.normal(size=m.nv)
    kp = rng.uniform(10, 1e4, m.nv)
    kd = rng.uniform(1, 50, m.nv)
    dt = m.opt.timestep
    implicit = dm._implicit_damping(m)
    tau, qacc = dm.spd(m, d, q_ref, qd_ref, kp, kd, dt, forward=False, return_qacc=True)
    ref_tau, ref_qdd = numpy_spd(m, d, q_ref, qd_ref, kp, kd, dt, m.dof_damping if implicit else np.zeros(m.nv))
    np.testing.assert_allclose(tau, ref_tau, rtol=1e-10, atol=1e-8 * np.abs(ref_tau).max())
    np.testing.assert_allclose(qacc, ref_qdd, rtol=1e-10, atol=1e-8 * np.abs(ref_qdd).max())
    # the NumPy fallback (used with other MuJoCo releases) agrees
    fb = dm._spd_numpy(m, d, q_ref, qd_ref, kp, kd, dt, None, False, False)
    np.testing.assert_allclose(tau, fb, rtol=1e-9, atol=1e-8 * np.abs(ref_tau).max())


def test_spd_kernel_mask_scalar_gains_and_fresh_outputs():
    m = tree_model()
    d = random_state(m, 3)
    mask = np.zeros(m.nv, bool)
    mask[6:] = True  # the root is not actuated
    tau = dm.spd(m, d, m.qpos0, None, 300.0, 20.0, actuated=mask)
    assert np.all(tau[:6] == 0) and np.all(tau[6:] != 0)
    kp, kd = np.where(mask, 300.0, 0.0), np.where(mask, 20.0, 0.0)
    ref, _ = numpy_spd(m, d, m.qpos0, np.zeros(m.nv), kp, kd, m.opt.timestep, m.dof_damping)
    np.testing.assert_allclose(tau, ref, rtol=1e-10, atol=1e-9)
    tau2 = dm.spd(m, d, m.qpos0, None, 300.0, 20.0, actuated=mask)
    assert not np.shares_memory(tau, tau2)  # each call returns its own array
    np.testing.assert_array_equal(tau, tau2)


def test_spd_kernel_bad_input():
    m = tree_model()
    d = mujoco.MjData(m)
    with pytest.raises(ValueError, match=r"q_ref_next must have shape \(13,\)"):
        dm.spd(m, d, np.zeros(3), None, 1.0, 1.0)
    with pytest.raises(ValueError, match="kd must be finite and >= 0"):
        dm.spd(m, d, m.qpos0, None, 1.0, -np.ones(m.nv))
    with pytest.raises(ValueError, match="q_ref_next must be finite"):
        q = m.qpos0.copy()
        q[0] = np.nan
        dm.spd(m, d, q, None, 1.0, 1.0)
    with pytest.raises(ValueError, match="q_ref_next must be an array"):
        dm.spd(m, d, None, None, 1.0, 1.0)
    with pytest.raises(ValueError, match="zero quaternion"):
        q = m.qpos0.copy()
        q[3:7] = 0
        dm.spd(m, d, q, None, 1.0, 1.0)
    other = mujoco.MjData(mujoco.MjModel.from_xml_string(TREE))
    with pytest.raises(ValueError, match="data must be an MjData of model"):
        dm.spd(m, other, m.qpos0, None, 1.0, 1.0)


def lqr_setup(steps=60):
    from directable.experiments import mujoco_scenes as ms
    m = ms.balance_model()
    x_ref = np.zeros((steps + 1, dm.nx(m)))
    tau = dm.inverse_dynamics(m, m.qpos0, np.zeros(m.nv), np.zeros(m.nv))[0]
    gear = np.zeros((m.nu, m.nv))
    mujoco.mj_forward(m, mujoco.MjData(m))
    for a in range(m.nu):  # the motors' moment arms at the upright pose
        d0 = int(m.jnt_dofadr[m.actuator_trnid[a, 0]])
        g = m.actuator_gear[a]
        if int(m.jnt_type[m.actuator_trnid[a, 0]]) == 1:
            gear[a, d0:d0 + 3] = g[:3]
        else:
            gear[a, d0] = g[0]
    ctrl_ref = np.tile(np.linalg.lstsq(gear.T, tau, rcond=None)[0], (steps, 1))
    Q = np.diag(np.r_[np.full(m.nv, 100.0), np.ones(m.nv)])
    tracker = dm.LQRTracker.from_linearization(m, x_ref, ctrl_ref, Q, 1e-3)
    push = np.zeros((steps, m.nv))
    push[10:20, 1] = 40.0  # a push about the spine's y axis (N m)
    return m, tracker, push


def test_lqr_run_compiled_equals_the_python_loop_with_a_push():
    m, tracker, push = lqr_setup()
    runs = {}
    for engine in ("compiled", "python"):
        d = mujoco.MjData(m)
        runs[engine] = dm.run(m, d, tracker, tracker.steps, disturbance=push, engine=engine)
        runs[engine].final = d.qpos.copy()
    a, b = runs["compiled"], runs["python"]
    assert not a.diverged and not b.diverged
    np.testing.assert_allclose(a.x, b.x, rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.u, b.u, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(a.qpos, b.qpos, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(a.final, a.qpos[-1])  # the run advanced MjData itself
    lean = np.abs(a.x[:, 1])  # the spine's rotation about y
    assert lean.max() > 1e-3 and lean[-1] < 0.5 * lean.max()  # the push moved the trunk, LQR brought it back


def servo_setup(steps=40, seed=0):
    m = tree_model()
    rng = np.random.default_rng(seed)
    q_ref = np.tile(m.qpos0, (steps + 1, 1))
    for i in range(steps + 1):
        mujoco.mj_integratePos(m, q_ref[i], np.r_[np.zeros(6), 0.3 * np.sin(0.1 * i + np.arange(m.nv - 6))], 1.0)
    v_ref, _ = dm.reference_velocities(m, q_ref, m.opt.timestep)
    kp = 200.0 * (1 + rng.uniform(size=(steps, m.nv)))
    kp[:, :6] = 5e3
    kd = 0.1 * kp
    tau_ff = rng.normal(scale=0.5, size=(steps, m.nv))
    push = np.zeros((steps, m.nv))
    push[5:8, 7] = 20.0
    return m, q_ref, v_ref, kp, kd, tau_ff, push


@pytest.mark.parametrize("controller,method,ff", [("spd", "damping", False), ("spd", "damping", True),
                                                  ("spd", "solve", False), ("spd", "solve", True),
                                                  ("pd", "auto", True)])
def test_servo_run_compiled_equals_the_python_loop(controller, method, ff):
    m, q_ref, v_ref, kp, kd, tau_ff, push = servo_setup()
    damping0 = m.dof_damping.copy()
    if controller == "pd":  # explicit PD is stable only at much lower gains at this step
        kp, kd = 0.005 * kp, 0.0005 * kp
        kp[:, :6] = kd[:, :6] = 0.0
    tr = dm.SPDTracker(m, q_ref, v_ref, kp, kd, controller=controller, method=method,
                       tau_ff=tau_ff if ff else None)
    runs = {}
    for engine in ("compiled", "python"):
        d = mujoco.MjData(m)
        d.qpos[:] = q_ref[0]
        runs[engine] = dm.run(m, d, tr, tr.steps, disturbance=push, engine=engine)
    a, b = runs["compiled"], runs["python"]
    assert not a.diverged and not b.diverged
    scale = np.abs(b.u).max()
    np.testing.assert_allclose(a.x, b.x, rtol=0, atol=1e-10)
    np.testing.assert_allclose(a.u, b.u, rtol=0, atol=1e-10 * scale)
    np.testing.assert_array_equal(m.dof_damping, damping0)  # "damping" restores the model


def test_divergence_is_reported_with_the_same_step_as_the_python_loop():
    from directable.experiments import mujoco_peer as mp
    m = mp.fixed_humanoid("pd", dt=1 / 30)
    q_ref = np.tile(m.qpos0, (61, 1))
    kp = 1e4 * dm.supported_mass(m)
    tr = dm.SPDTracker(m, q_ref, None, kp, 2 * kp / 30, controller="pd")
    out = {}
    for engine in ("compiled", "python"):
        d = mujoco.MjData(m)
        d.qvel[:] = 0.5
        with pytest.warns(RuntimeWarning, match="diverged at step"):
            out[engine] = dm.run(m, d, tr, tr.steps, engine=engine)
    assert out["compiled"].diverged and out["compiled"].diverged_at == out["python"].diverged_at
    k = out["compiled"].diverged_at
    assert np.all(np.isfinite(out["compiled"].x[:k + 1])) and np.all(np.isnan(out["compiled"].u[k:]))


def test_engine_choice_and_bad_input():
    m, tracker, push = lqr_setup(steps=5)
    d = mujoco.MjData(m)
    with pytest.raises(ValueError, match="engine='compiled' cannot run this: the disturbance is a Python callable"):
        dm.run(m, d, tracker, 5, disturbance=lambda i, m, d: None, engine="compiled")
    with pytest.raises(ValueError, match="engine must be"):
        dm.run(m, d, tracker, 5, engine="fast")
    with pytest.raises(ValueError, match=r"disturbance must have shape \(5, 24\)"):
        dm.run(m, d, tracker, 5, disturbance=np.zeros((4, 24)))
    with pytest.raises(ValueError, match=rf"disturbance must have shape \(5, {m.nbody}, 6\)"):
        dm.run(m, d, tracker, 5, disturbance=np.zeros((5, m.nbody, 3)))
    with pytest.raises(ValueError, match=r"disturbance must have shape \(5, 24\) or"):
        dm.run(m, d, tracker, 5, disturbance=np.zeros(5))
    with pytest.raises(ValueError, match="max_state must be > 0"):
        dm.run(m, d, tracker, 5, max_state=-1.0)
    # a Python callable disturbance runs the Python loop, with the same result as an array
    push_fn = (lambda i, m, d: d.qfrc_applied.__setitem__(slice(None), push[i]))
    r1 = dm.run(m, mujoco.MjData(m), tracker, 5, disturbance=push_fn)
    r2 = dm.run(m, mujoco.MjData(m), tracker, 5, disturbance=push)
    np.testing.assert_allclose(r1.x, r2.x, atol=1e-12)


def test_progress_callback_and_cancel_restore_the_model():
    m, q_ref, v_ref, kp, kd, _, _ = servo_setup(steps=40)
    damping0 = m.dof_damping.copy()
    tr = dm.SPDTracker(m, q_ref, v_ref, kp, kd, method="damping")
    for engine in ("compiled", "python"):
        seen = []
        dm.run(m, mujoco.MjData(m), tr, 40, progress=lambda done, total: seen.append((done, total)), engine=engine)
        assert seen and seen[-1] == (40, 40)

    def stop(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        dm.run(m, mujoco.MjData(m), tr, 40, progress=stop)
    np.testing.assert_array_equal(m.dof_damping, damping0)


def test_threads_run_on_their_own_data_and_agree_with_a_serial_run():
    m, q_ref, v_ref, kp, kd, tau_ff, push = servo_setup(steps=40)
    tr = dm.SPDTracker(m, q_ref, v_ref, kp, kd, method="solve", tau_ff=tau_ff)
    serial = dm.run(m, mujoco.MjData(m), tr, 40, disturbance=push).x
    results = [None] * 4

    def work(k):
        for _ in range(10):
            results[k] = dm.run(m, mujoco.MjData(m), tr, 40, disturbance=push).x

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_array_equal(r, serial)


@pytest.mark.skipif(not hasattr(__import__("signal"), "SIGALRM"), reason="POSIX signals")
def test_ctrl_c_interrupts_a_long_compiled_run_within_0_2_s():
    """SIGINT during the GIL-free run: the Python handler's exception ends it early
    (a private handler, so that pytest itself is never interrupted)."""
    import os
    import signal
    import time
    m, tracker, _ = lqr_setup(steps=5)
    steps = 40000  # ~0.3 s on an idle core
    lqr = dm.LQRTracker(m, np.zeros((steps + 1, dm.nx(m))), np.zeros((m.nu, dm.nx(m))))
    d = mujoco.MjData(m)
    t0 = time.perf_counter()
    dm.run(m, d, lqr, steps)
    full = time.perf_counter() - t0

    class Interrupted(Exception):
        pass

    def handler(signum, frame):
        raise Interrupted()

    old = signal.signal(signal.SIGINT, handler)
    timer = threading.Timer(0.02, os.kill, (os.getpid(), signal.SIGINT))
    try:
        mujoco.mj_resetData(m, d)
        t0 = time.perf_counter()
        timer.start()
        with pytest.raises(Interrupted):
            dm.run(m, d, lqr, steps)
            time.sleep(1.0)
        elapsed = time.perf_counter() - t0
    finally:
        timer.cancel()
        timer.join()
        signal.signal(signal.SIGINT, old)
    assert full > 0.1, full
    assert elapsed < min(0.5 * full, 0.02 + 0.2 + 0.1), (elapsed, full)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="fork")
def test_a_forked_child_runs_the_compiled_loop():
    import multiprocessing as mp
    m, q_ref, v_ref, kp, kd, tau_ff, push = servo_setup(steps=20)
    tr = dm.SPDTracker(m, q_ref, v_ref, kp, kd, method="solve", tau_ff=tau_ff)
    here = dm.run(m, mujoco.MjData(m), tr, 20, disturbance=push).x
    ctx = mp.get_context("fork")
    with ctx.Pool(1) as pool:
        there = pool.apply(_child_run, ())
    np.testing.assert_array_equal(there, here)


def _child_run():
    m, q_ref, v_ref, kp, kd, tau_ff, push = servo_setup(steps=20)
    tr = dm.SPDTracker(m, q_ref, v_ref, kp, kd, method="solve", tau_ff=tau_ff)
    return dm.run(m, mujoco.MjData(m), tr, 20, disturbance=push).x


def test_without_the_compiled_path_everything_falls_back_to_python(monkeypatch):
    """Another MuJoCo release than the one the C API types were written for: run and spd
    take the Python loop and the NumPy kernel, with the same results."""
    m, q_ref, v_ref, kp, kd, tau_ff, push = servo_setup(steps=20)
    d = random_state(m, 5)
    tau_c = dm.spd(m, d, q_ref[3], v_ref[3], kp[3], kd[3])
    tr = dm.SPDTracker(m, q_ref, v_ref, kp, kd, method="solve", tau_ff=tau_ff)
    compiled = dm.run(m, mujoco.MjData(m), tr, 20, disturbance=push)
    reason = "MuJoCo 9.9.0 is not supported by the compiled loop"
    monkeypatch.setattr(dm, "_LIBRARY", [reason])
    assert dm.compiled_loop_available() == (False, reason)
    d = random_state(m, 5)
    np.testing.assert_allclose(dm.spd(m, d, q_ref[3], v_ref[3], kp[3], kd[3]), tau_c, rtol=1e-9,
                               atol=1e-9 * np.abs(tau_c).max())
    fallback = dm.run(m, mujoco.MjData(m), tr, 20, disturbance=push)
    np.testing.assert_allclose(fallback.x, compiled.x, rtol=0, atol=1e-10)
    with pytest.raises(ValueError, match="engine='compiled' cannot run this: MuJoCo 9.9.0"):
        dm.run(m, mujoco.MjData(m), tr, 20, engine="compiled")


def test_the_core_checks_a_run_called_directly():
    """The checks live in the core: a direct _core call with bad schedules is a ValueError."""
    m, q_ref, v_ref, kp, kd, tau_ff, _ = servo_setup(steps=5)
    d = mujoco.MjData(m)
    view, mview = dm._data_view(m, d), dm._model_view(m)
    out = lambda: (np.zeros((6, dm.nx(m))), np.zeros((6, m.nq)), np.zeros((5, m.nv)))  # noqa: E731

    def call(**kw):
        args = dict(kind=_core.Servo.spd, damping_method=False, qpos_ref=q_ref, qvel_ref=v_ref, kp=kp, kd=kd,
                    tau_ff=None, damping=None, dt=0.01, steps=5, disturbance=None, body_forces=None,
                    max_state=1e6)
        args.update(kw)
        x, q, u = out()
        return _core.mujoco_run_servo(mview, view, x=x, qpos=q, u=u, **args)

    assert call()[1] == -1
    with pytest.raises(ValueError, match="kp must be finite and >= 0"):
        call(kp=-kp)
    with pytest.raises(ValueError, match="qvel_ref must be finite"):
        call(qvel_ref=np.full_like(v_ref, np.nan))
    with pytest.raises(ValueError, match=r"kd must have shape \(5, 11\)"):
        call(kd=kd[:4])
    with pytest.raises(ValueError, match="steps must be <= the servo's horizon 5"):
        call(steps=6)
    with pytest.raises(ValueError, match="dt must be > 0"):
        call(dt=0.0)
    x, q, u = out()
    with pytest.raises(ValueError, match=r"u must have shape \(5, 11\)"):
        _core.mujoco_run_servo(mview, view, _core.Servo.spd, False, q_ref, v_ref, kp, kd, None, None, 0.01, 5, None,
                               None, 1e6, x, q, u[:4])


def test_mujoco_s_own_reset_is_caught_by_its_warning_counters():
    """A force that makes MuJoCo reset the data (mjWARN_BADQACC) leaves a finite, small state behind:
    only MuJoCo's warning counters, read by address, show it."""
    m, q_ref, v_ref, kp, kd, _, _ = servo_setup(steps=10)
    tr = dm.SPDTracker(m, q_ref, v_ref, kp, kd, method="damping")
    kick = np.zeros((10, m.nv))
    kick[3, 7] = 1e14
    for engine in ("compiled", "python"):
        d = mujoco.MjData(m)
        with pytest.warns(RuntimeWarning, match="diverged at step 3"):
            r = dm.run(m, d, tr, 10, disturbance=kick, engine=engine)
        assert r.diverged_at == 3
        assert d.warning.number[int(mujoco.mjtWarning.mjWARN_BADQACC)] >= 1
        assert np.all(np.isfinite(d.qpos))  # MuJoCo reset it


def test_body_forces_as_an_array_equal_a_python_callable_that_sets_xfrc_applied():
    m, tracker, _ = lqr_setup(steps=40)
    torso = m.body("torso").id
    shove = np.zeros((40, m.nbody, 6))
    shove[10:15, torso, 0] = 150.0

    def shove_fn(i, model, d):
        d.xfrc_applied[:] = shove[i]

    runs = [dm.run(m, mujoco.MjData(m), tracker, 40, disturbance=shove, engine=e) for e in ("compiled", "python")]
    runs.append(dm.run(m, mujoco.MjData(m), tracker, 40, disturbance=shove_fn))
    for r in runs[1:]:
        np.testing.assert_allclose(r.x, runs[0].x, rtol=0, atol=1e-12)
    assert np.abs(runs[0].x[:, 1]).max() > 1e-3  # the push leaned the trunk


def test_spd_from_threads_each_with_its_own_data_is_bit_for_bit_serial():
    m = tree_model()
    states = [random_state(m, seed) for seed in range(4)]
    kp, kd = np.linspace(100, 400, m.nv), np.linspace(5, 20, m.nv)
    serial = [dm.spd(m, d, m.qpos0, None, kp, kd) for d in states]
    out = [None] * 4

    def work(k):
        for _ in range(200):
            out[k] = dm.spd(m, states[k], m.qpos0, None, kp, kd)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for a, b in zip(out, serial):
        np.testing.assert_array_equal(a, b)
