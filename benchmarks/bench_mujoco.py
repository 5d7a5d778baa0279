"""directable on MuJoCo: linearization, SPD torque and the closed-loop run.

On the humanoid of directable.experiments (30 DOFs, ball joints):
- ``mujoco.linearize`` over T steps (threads, each with its own MjData) against
  a serial Python loop of ``mjd_transitionFD``;
- the SPD torque of one step (``SPDTracker.control``: mj_fullM, manifold
  error, the C++ eq. 11 solve) against ``mj_step`` itself and against a
  NumPy transcription of eq. 11 on the same M and bias;
- the closed-loop LQR run (``mujoco.run`` over the upper-body balance model,
  14 motors) per step, against ``mj_step`` alone;
- the peer comparison table (explicit PD, SPD, implicitfast position
  actuators).

    python benchmarks/bench_mujoco.py [--no-write] [--small]
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np
import mujoco
from mujoco import rollout

import directable.mujoco as dm
from directable.experiments import mujoco_peer as mp
from directable.experiments import mujoco_scenes as ms
from bench_common import best_cpu, publish


def serial_linearize(model, ref, ctrl, eps=1e-6):
    n = dm.nx(model)
    d = mujoco.MjData(model)
    A = np.zeros((ctrl.shape[0], n, n))
    B = np.zeros((ctrl.shape[0], n, model.nu))
    for i in range(ctrl.shape[0]):
        dm.set_state(model, d, ref[i])
        d.ctrl[:] = ctrl[i]
        mujoco.mjd_transitionFD(model, d, eps, True, A[i], B[i], None, None)
    return A, B


def numpy_spd(model, data, M, q_ref_next, qd_ref_next, kp, kd, dt):
    """Eq. 11 in NumPy on the same M (mj_fullM) and bias, manifold error by MuJoCo's functions."""
    dm._full_mass(model, data, M)  # mj_fullM (its signature changed in MuJoCo 3.3)
    M = M + dt * np.diag(model.dof_damping)
    C = data.qfrc_bias - data.qfrc_passive
    q = data.qpos.copy()
    mujoco.mj_integratePos(model, q, data.qvel, dt)
    p = np.zeros(model.nv)
    mujoco.mj_differentiatePos(model, p, 1.0, q_ref_next, q)
    qdd = np.linalg.solve(M + np.diag(kd * dt), -C - kp * p - kd * (data.qvel - qd_ref_next))
    return -kp * p - kd * (data.qvel + dt * qdd - qd_ref_next)


def cpu_best(fn, repeats=15, number=1):
    """Smallest CPU time (s) of ``number`` calls of ``fn`` over ``repeats`` tries, per call. The loops
    measured here run on the calling thread, so CPU time leaves out the time other processes of a
    shared machine take from it (wall time does not)."""
    fn()
    t = float("inf")
    for _ in range(repeats):
        c0 = time.process_time()
        for _ in range(number):
            fn()
        t = min(t, (time.process_time() - c0) / number)
    return t


def rollout_per_step(model, steps):
    """Seconds per step of MuJoCo's own C++ loop (``mujoco.rollout``, zero controls, states recorded)."""
    d = mujoco.MjData(model)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    s0 = np.empty((1, mujoco.mj_stateSize(model, spec)))
    mujoco.mj_getState(model, d, s0[0], spec)
    ctrl = np.zeros((1, steps, model.nu))
    return cpu_best(lambda: rollout.rollout(model, d, s0, ctrl)) / steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-write", action="store_true", help="do not update benchmarks/RESULTS.md")
    ap.add_argument("--small", action="store_true", help="CI size: short horizons, no RESULTS.md")
    args = ap.parse_args()
    T = 50 if args.small else 500
    rows = []
    load = os.getloadavg()[0]

    # 1. linearize along T steps of the humanoid (the volleyball reference)
    h = ms.humanoid()
    q_ref = ms.keyframe_reference(h, "volleyball", hold=20.0)[:T + 1]
    ref = dm.tangent_of(h, q_ref)
    ctrl = np.zeros((T, 0))
    t_serial, cores_serial = best_cpu(lambda: serial_linearize(h, ref, ctrl), repeats=5)
    t_par, cores_par = best_cpu(lambda: dm.linearize(h, ref, ctrl), repeats=5)
    A1, _ = serial_linearize(h, ref, ctrl)
    A2, _ = dm.linearize(h, ref, ctrl)
    assert np.array_equal(A1, A2)
    rows.append(("linearize, humanoid (nx = 60), T = %d" % T, f"{t_par * 1e3:.1f} ms",
                 f"serial mjd_transitionFD loop {t_serial * 1e3:.1f} ms", f"{t_serial / t_par:.2f}x"))

    # 2. SPD torque per step on the humanoid against mj_step and NumPy
    d = mujoco.MjData(h)
    d.qvel[:] = np.random.default_rng(0).normal(scale=0.3, size=h.nv)
    mujoco.mj_forward(h, d)
    kp = 1e4 * dm.supported_mass(h)
    kd = 2 * kp * h.opt.timestep
    M = np.zeros((h.nv, h.nv))
    zero = np.zeros(h.nv)
    dt = h.opt.timestep
    tau = dm.spd(h, d, h.qpos0, None, kp, kd, dt, forward=False)
    np.testing.assert_allclose(tau, numpy_spd(h, d, M, h.qpos0, zero, kp, kd, dt), rtol=1e-9, atol=1e-6)
    n = 200 if args.small else 5000
    d2 = mujoco.MjData(h)
    t_spd, t_np, t_step = (cpu_best(f, repeats=11, number=n) for f in (
        lambda: dm.spd(h, d, h.qpos0, None, kp, kd, dt, forward=False),
        lambda: numpy_spd(h, d, M, h.qpos0, zero, kp, kd, dt),
        lambda: mujoco.mj_step(h, d2)))
    rows.append(("spd() torque, humanoid (nv = 30), one Python call, arguments checked", f"{t_spd * 1e6:.1f} us",
                 f"NumPy eq. 11 {t_np * 1e6:.1f} us", f"{t_np / t_spd:.1f}x faster (target >= 5x)"))
    rows.append(("spd() torque, humanoid (nv = 30), one Python call, arguments checked", f"{t_spd * 1e6:.1f} us",
                 f"mj_step (Python call) {t_step * 1e6:.1f} us", f"{t_spd / t_step:.2f}x mj_step (target <= 2x)"))

    # SPD inside whole runs: the loop's own cost is a run with zero gains (mj_step, the bookkeeping)
    steps = 100 if args.small else 1000
    q_hold = np.tile(h.qpos0, (steps + 1, 1))
    dd = mujoco.MjData(h)
    t_roll_h = rollout_per_step(h, steps)

    def spd_run(method, engine, controller="spd", k=1.0):
        tr = dm.SPDTracker(h, q_hold, None, k * kp, k * kd, method=method, controller=controller)

        def go():
            mujoco.mj_resetData(h, dd)
            dm.run(h, dd, tr, steps, engine=engine)
        return go

    t_loop = cpu_best(spd_run("auto", "compiled", "pd", 0.0)) / steps
    rows.append((f"run(SPDTracker) loop with zero gains, humanoid, {steps} steps, one C++ call",
                 f"{t_loop * 1e6:.1f} us/step", f"mujoco.rollout {t_roll_h * 1e6:.1f} us/step",
                 f"{(t_loop - t_roll_h) * 1e6:+.1f} us/step"))
    for method in ("solve", "damping"):
        t = cpu_best(spd_run(method, "compiled")) / steps
        t_py = cpu_best(spd_run(method, "python"), repeats=5) / steps
        extra = max(t - t_loop, 1e-9)
        rows.append((f"SPD per step inside run(SPDTracker, method={method!r}), humanoid, one C++ call",
                     f"{extra * 1e6:.1f} us/step (run {t * 1e6:.1f})",
                     f"mj_step {t_roll_h * 1e6:.1f} us; NumPy eq. 11 {t_np * 1e6:.1f} us",
                     f"{extra / t_roll_h:.2f}x mj_step; {t_np / extra:.0f}x cheaper than NumPy"))
        rows.append((f"run(SPDTracker, method={method!r}), humanoid, {steps} steps, Python loop (fallback)",
                     f"{t_py * 1e6:.1f} us/step", f"one C++ call {t * 1e6:.1f} us/step", f"{t_py / t:.1f}x slower"))

    # 3. closed-loop LQR run per step over mj_step alone (upper-body balance, 14 motors)
    m, _, x_ref = ms.balance_run(steps=10)
    x_ref = np.zeros((steps + 1, dm.nx(m)))
    K = np.random.default_rng(1).normal(scale=1e-3, size=(steps, m.nu, dm.nx(m)))
    lqr = dm.LQRTracker(m, x_ref, K)
    dd = mujoco.MjData(m)

    def closed(engine):
        def go():
            mujoco.mj_resetData(m, dd)
            dm.run(m, dd, lqr, steps, engine=engine)
        return go

    def bare():
        mujoco.mj_resetData(m, dd)
        for _ in range(steps):
            mujoco.mj_step(m, dd)

    t_run, t_bare = (cpu_best(f) / steps for f in (closed("compiled"), bare))
    t_run_py = cpu_best(closed("python"), repeats=5) / steps
    t_roll = rollout_per_step(m, steps)
    rows.append((f"run(LQRTracker), balance model (nv = 24, nu = 14), {steps} steps, one C++ call",
                 f"{t_run * 1e6:.1f} us/step", f"mujoco.rollout {t_roll * 1e6:.1f} us/step",
                 f"+{(t_run - t_roll) * 1e6:.1f} us/step (target <= 5)"))
    rows.append((f"run(LQRTracker), balance model, {steps} steps, one C++ call",
                 f"{t_run * 1e6:.1f} us/step", f"Python mj_step loop {t_bare * 1e6:.1f} us/step",
                 f"{(t_run - t_bare) * 1e6:+.1f} us/step"))
    rows.append((f"run(LQRTracker), balance model, {steps} steps, Python loop (fallback)",
                 f"{t_run_py * 1e6:.1f} us/step", f"Python mj_step loop {t_bare * 1e6:.1f} us/step",
                 f"+{(t_run_py - t_bare) * 1e6:.1f} us/step"))

    # 4. the peer comparison
    peer = mp.compare(dts=(1 / 30,) if args.small else mp.DTS, k_equal=30.0, iters=4 if args.small else 10)

    table = "| measurement | directable | compared with | ratio |\n|---|---|---|---|\n" + "\n".join(
        f"| {a} | {b} | {c} | {e} |" for a, b, c, e in rows)
    print(table)
    print(mp.table(peer))
    print(mp.verdict(peer))
    if args.no_write or args.small:
        return
    conditions = (f", MuJoCo {mujoco.__version__}, {os.cpu_count()} threads for linearize; load average "
                  f"{load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end (other processes share the "
                  "cores: single-thread timings are the smallest CPU time of several runs, which leaves out "
                  "the time other processes take; linearize is wall time). The threads of linearize kept "
                  f"{cores_par:.2f} cores busy (the serial loop {cores_serial:.2f}): where the process gets "
                  "less than two cores, its threads cannot show their speed-up (MuJoCo releases the GIL "
                  "in mjd_transitionFD).\n\n"
                  "`run` is one C++ call (sim/mujoco_loop: MuJoCo's C API found with dlopen/dlsym in the "
                  "library the mujoco package loaded; GIL released); its cost per step is compared with "
                  "MuJoCo's own C++ loop, `mujoco.rollout` of zero controls (both record the states). "
                  "The Python loop is the fallback (callable disturbances, callbacks, other MuJoCo "
                  "releases). `spd()` is one Python call into the compiled kernel (mj_fullM, then eq. 11 "
                  "by the tree-sparse L'DL factorisation of M + dt (D + Kd)).")
    peer_intro = ("Peer comparison on the welded-root humanoid tracking the kick (kp = k m_sup, kd = kv = 2 kp dt; "
                  "error and torque rate at k = 30; inf: diverged; 1e+08 is the bisection's upper end):")
    publish("mujoco", "directable on MuJoCo", conditions,
            table + "\n\n" + peer_intro + "\n\n" + mp.table(peer) + "\n\n" + mp.verdict(peer))


if __name__ == "__main__":
    main()
