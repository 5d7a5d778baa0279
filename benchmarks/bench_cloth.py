"""Mass-spring cloth and its goal-directed control: C++ against the NumPy
reference of the same algorithms (tests/reference/cloth.py), on a 20 x 20
cloth; and the heuristic against Gauss-Newton MPC and LQR (the experiments'
comparison). Writes the "cloth" section of RESULTS.md.

    python benchmarks/bench_cloth.py [--no-write] [--compare-size 10]
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

from directable import cloth as dc
from directable.experiments import cloth as ex
from bench_common import best_cpu, best_of, publish
from reference.cloth import NumpyCloth, plan_single  # noqa: E402  (tests/reference, on the path through bench_common)

ARGS = (20, 20, 0.05, 0.01, 300.0, 60.0, 6.0, 0.02)
DT = 0.002


def implicit_step_scipy(c, x, v, dt):
    """The implicit step (no pins, no controls) with SciPy: the system assembled from the C++ Jacobians
    and solved by spsolve (SuperLU); returns (x+, v+)."""
    from scipy import sparse
    from scipy.sparse.linalg import spsolve

    Kx, Kv = c.force_jacobians(x, v)
    A = sparse.identity(x.size, format="csr") * c.mass - dt * Kv - 0.5 * dt * dt * (Kx + Kx.T)
    rhs = dt * (c.forces(x, v).ravel() + dt * (Kx @ v.ravel()))
    v1 = v + spsolve(A.tocsc(), rhs).reshape(v.shape)
    return x + dt * v1, v1


def met(ok):
    return "met" if ok else "MISSED"


def warp_step_seconds(bend2):
    """Optional peer: NVIDIA Warp's CPU backend, the same springs (float32,
    atomic scatter), symplectic Euler; None when warp-lang is not installed."""
    try:
        import warp as wp
    except ImportError:
        return None, None
    wp.config.quiet = True
    wp.init()

    @wp.kernel
    def springs(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), a: wp.array(dtype=int),
                b: wp.array(dtype=int), rest: wp.array(dtype=float), k: wp.array(dtype=float), c: float,
                f: wp.array(dtype=wp.vec3)):
        s = wp.tid()
        d = x[b[s]] - x[a[s]]
        L = wp.length(d)
        t = (k[s] * (L - rest[s]) + c * wp.dot(v[b[s]] - v[a[s]], d) / L) / L * d
        wp.atomic_add(f, a[s], t)
        wp.atomic_sub(f, b[s], t)

    @wp.kernel
    def integrate(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), f: wp.array(dtype=wp.vec3),
                  inv_m: float, g: wp.vec3, dt: float):
        i = wp.tid()
        vn = v[i] + dt * (f[i] * inv_m + g)
        v[i] = vn
        x[i] = x[i] + dt * vn
        f[i] = wp.vec3(0.0, 0.0, 0.0)

    r = NumpyCloth(*ARGS, k_bend2=bend2)
    x = wp.array(r.x0, dtype=wp.vec3, device="cpu")
    v, f = wp.zeros(r.V, dtype=wp.vec3, device="cpu"), wp.zeros(r.V, dtype=wp.vec3, device="cpu")
    a, b = wp.array(r.a.astype(np.int32), dtype=int, device="cpu"), wp.array(r.b.astype(np.int32), dtype=int, device="cpu")
    rest = wp.array(r.rest.astype(np.float32), dtype=float, device="cpu")
    k = wp.array(r.k.astype(np.float32), dtype=float, device="cpu")

    def step():
        wp.launch(springs, dim=len(r.a), inputs=[x, v, a, b, rest, k, ARGS[7], f], device="cpu")
        wp.launch(integrate, dim=r.V, inputs=[x, v, f, 1.0 / ARGS[3], wp.vec3(0.0, 0.0, -9.81), DT], device="cpu")

    step()
    wp.synchronize()
    return best_of(lambda: (step(), wp.synchronize()), 5, 200), wp.__version__


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-write", action="store_true", help="do not update benchmarks/RESULTS.md")
    ap.add_argument("--compare-size", type=int, default=10, help="n of the n x n cloth of the MPC/LQR comparison")
    args = ap.parse_args()
    t_begin = time.perf_counter()
    load0 = os.getloadavg()[0]
    rows, notes = [], []

    # -- one step ---------------------------------------------------------------------------------------------------
    for bend2 in (0.0, 2.0):
        c, r = dc.ClothGrid(*ARGS, k_bend2=bend2), NumpyCloth(*ARGS, k_bend2=bend2)
        x0, v0 = c.positions0, np.zeros((c.node_count, 3))
        steps = 500
        t_cpp, cores_cpp = best_cpu(lambda: c.rollout(x0, v0, DT, steps), 7, min_time=1.0)
        t_cpp /= steps
        x, v = c.rollout(x0, v0, DT, 50).x[-1], c.rollout(x0, v0, DT, 50).v[-1]
        t_np = best_of(lambda: r.step(x, v, DT), 7, 20)
        # the same step's CPU time (NumPy runs it on the calling thread): with the C++ step's CPU time, a ratio
        # that a loaded machine's spells inflate far less than the wall ratio
        t_np_cpu = best_of(lambda: r.step(x, v, DT), 7, 20, clock=time.thread_time)
        t_np_add = best_of(lambda: (r.forces_add_at(x, v), r.step(x, v, DT)), 5, 10) - t_np
        err = np.abs(c.rollout(x, v, DT, 1).x[1] - r.step(x, v, DT)[0]).max()
        t_warp, warp_version = warp_step_seconds(bend2)
        if t_warp is not None:
            notes.append(f"Optional peer, {c.spring_count} springs: NVIDIA Warp {warp_version} on the CPU (float32, "
                         f"one kernel launch for the springs with atomic adds, one for the update): "
                         f"{t_warp * 1e6:.1f} us per step, {t_warp / t_cpp:.1f}x the C++ step.")
        cpu_cpp = t_cpp * cores_cpp
        rows.append((f"symplectic step, {c.spring_count} springs (C++ rollout of {steps} steps, per step)",
                     f"{t_cpp * 1e6:.1f} us wall, {cpu_cpp * 1e6:.1f} us CPU",
                     f"NumPy bincount {t_np * 1e6:.0f} us wall, {t_np_cpu * 1e6:.0f} us CPU; "
                     f"np.add.at forces {t_np_add * 1e6:.0f} us",
                     f"{t_np / t_cpp:.0f}x wall, {t_np_cpu / cpu_cpp:.0f}x CPU",
                     f"<= 20 us, >= 15x: {met(cpu_cpp <= 20e-6 and t_np_cpu / cpu_cpp >= 15)} (CPU), "
                     f"{met(t_cpp <= 20e-6 and t_np / t_cpp >= 15)} (wall)",
                     f"{err:.1e}"))
        # implicit: the C++ step against the same step assembled from force_jacobians and solved by SciPy (SuperLU)
        n_imp = 50
        rng = np.random.default_rng(0)
        xi, vi = x0 + 0.003 * rng.standard_normal(x0.shape), 0.1 * rng.standard_normal(x0.shape)
        t_sp = best_of(lambda: implicit_step_scipy(c, xi, vi, 0.005), 3, 3)
        err_imp = np.abs(c.step(xi, vi, 0.005, method="implicit")[1] - implicit_step_scipy(c, xi, vi, 0.005)[1]).max()
        for method in ("implicit", "implicit_cg"):
            t_imp, cores = best_cpu(lambda: c.rollout(x0, v0, 0.005, n_imp, method=method), 5, min_time=1.0)
            cpu = t_imp * cores / n_imp  # CPU time of the calling thread: what the machine's load does not inflate
            t_imp /= n_imp
            # a rollout of one step: the set-up (for the direct solve, the symbolic analysis) and one step;
            # the difference is what each further step costs, the pattern's analysis reused
            t_one, cores_one = best_cpu(lambda: c.rollout(x0, v0, 0.005, 1, method=method), 5, min_time=0.5)
            step_cpu = (cpu * n_imp - t_one * cores_one) / (n_imp - 1)
            setup = f"; set-up + first step {t_one * cores_one * 1e3:.2f} ms CPU"
            solver = ("supernodal LDL' (linalg/block_ldlt), analysed once per rollout" if method == "implicit"
                      else "Jacobi-PCG to 1e-12")
            rows.append((f"implicit step ({solver}), {c.spring_count} springs (rollout of {n_imp}, per step)",
                         f"{t_imp * 1e3:.2f} ms wall, {cpu * 1e3:.2f} ms CPU; each further step {step_cpu * 1e3:.2f} ms CPU"
                         + setup,
                         f"SciPy spsolve step {t_sp * 1e3:.1f} ms", f"{t_sp / t_imp:.0f}x",
                         f"<= 1 ms: {met(step_cpu <= 1e-3)} (CPU per further step), {met(cpu <= 1e-3)} (CPU, set-up included)",
                         f"{err_imp:.1e} m/s" if method == "implicit" else "-"))

    # -- path generation: 100 steps x 33 x 8 candidates --------------------------------------------------------------
    c, r = dc.ClothGrid(*ARGS), NumpyCloth(*ARGS)
    x0, v0 = c.positions0, np.zeros((c.node_count, 3))
    pilot = c.rollout(x0, v0, DT, 300)
    node, t_c = c.node(14, 10), 250
    goal = pilot.x[t_c, node] + np.array([0.15, 0.0, 0.25])
    dist = np.linalg.norm(goal - pilot.x[t_c, node])
    alpha = 100.0 / dist ** 2  # a window of 100 steps
    kw = dict(alpha=alpha, beta=1.0, gamma=1e-6)
    goals = [(node, t_c, goal)]
    plan = dc.plan(c, pilot, goals, DT, seek_angle=30.0, **kw)
    assert plan.t_end - plan.t_start == 100
    t_plan = best_of(lambda: dc.plan(c, pilot, goals, DT, seek_angle=30.0, **kw), 7)
    px, pv = np.array(pilot.x), np.array(pilot.v)
    t0 = time.perf_counter()
    ref = plan_single(r, px, pv, node, t_c, goal, DT, seek_angle_deg=30.0, **kw)
    t_plan_np = time.perf_counter() - t0
    err = np.abs(ref["forces"] - plan.forces[:, 0]).max()
    rows.append(("path generation + arrival fix, 100 steps x 33 x 8 candidates (both passes)", f"{t_plan * 1e3:.2f} ms",
                 f"NumPy {t_plan_np * 1e3:.0f} ms", f"{t_plan_np / t_plan:.0f}x",
                 f"<= 10 ms, >= 10x: {met(t_plan <= 10e-3 and t_plan_np / t_plan >= 10)}", f"{err:.1e} N"))

    # -- re-time + second phase ---------------------------------------------------------------------------------------
    path = np.array(plan.targets[0])
    ref_path = px[plan.t_start:plan.t_end + 1, node]

    def second_phase():
        retimed = dc.retime(path, ref_path)
        return dc.follow(c, pilot, plan, retimed[None], DT)

    t_second = best_of(second_phase, 7)
    rows.append(("re-time + second phase over the 100-step window (simulation with the inverse-dynamics forces)",
                 f"{t_second * 1e3:.2f} ms", "-", "-", f"<= 5 ms: {met(t_second <= 5e-3)}", "-"))
    t_apply = best_of(lambda: dc.apply(c, x0, v0, DT, plan.t_end, plan), 5)
    rows.append((f"`apply`: the whole second-phase run from step 0 to t_c = {plan.t_end}", f"{t_apply * 1e3:.2f} ms",
                 "-", "-", "-", "-"))

    # -- heuristic vs optimal control ---------------------------------------------------------------------------------
    n = args.compare_size
    scene = ex.comparison_scene(n)
    comp = ex.compare_optimal(scene)
    h = comp[0]
    comp_lines = ["| method | effort sum abs(u)^2 dt (N^2 s) | final error (m) | mean turning (deg) | wall time (s) | "
                  "effort / heuristic | heuristic speed-up |", "|---|---:|---:|---:|---:|---:|---:|"]
    for row in comp:
        comp_lines.append(f"| {row['method']} | {row['effort']:.4g} | {row['final_error']:.1e} | "
                          f"{row['mean_turning']:.2f} | {row['seconds']:.4f} | {row['effort'] / h['effort']:.2f} | "
                          f"{row['seconds'] / h['seconds']:.0f}x |")

    load1 = os.getloadavg()[0]
    table = ["| measure | directable | NumPy reference | speed-up | target | max abs diff |",
             "|---|---:|---:|---:|---|---:|"]
    table += ["| " + " | ".join(row) + " |" for row in rows]
    text = "\n".join(table) + "\n\n" + "".join(note + "\n" for note in notes) + "\n" + (f"Heuristic against the library's optimal control, {n} x {n} cloth "
                                        f"({6 * n * n} states), one node, the same goal "
                                        f"(`directable.experiments.cloth.compare_optimal`; MPC and LQR get four "
                                        f"secant target corrections so that all end on the goal):\n\n") + \
        "\n".join(comp_lines)
    print(text)
    if args.no_write:
        return
    conditions = (f", {time.strftime('%H:%M')} UTC; 1-minute load average {load0:.1f} at start and {load1:.1f} at end (the 2 cores are shared with "
               f"other jobs: times are best of several runs, and the machine's load inflates them; 'CPU' is the process's CPU time "
               f"during the best run, which waiting for a core does not inflate, though sharing one still does); "
               f"{time.perf_counter() - t_begin:.0f} s in all. 20 x 20 cloth, spacing 5 cm, 10 g nodes, "
               f"k = 300 / 60 / 6 (/ 2) N/m, dt = {DT} s. NumPy reference: tests/reference/cloth.py (forces with an "
               f"`np.bincount` scatter; the path search with one NumPy evaluation per step over all candidates).")
    publish("cloth", "Cloth: mass-spring model and goal-directed control (Jeon & Choi)", conditions, text)


if __name__ == "__main__":
    main()
