"""Reduced deformable benchmark, against the paper's
tables 1 and 2 (Barbic & Popovic 2008, a 2008 laptop).

Targets: reduced step at r = 30 (forces + stiffness + implicit solve)
< 0.15 ms (paper 1.4 ms); control cost per step < 5 us (paper 20-30 us);
gain precomputation for r = 24, T = 500 < 1 s (paper 17.5 s); and the
full-vs-reduced speed-up on our meshes (paper: up to 15,700x). Prints a
table and writes its section of benchmarks/RESULTS.md between the markers
<!-- fem:begin --> and <!-- fem:end -->.

    python benchmarks/bench_fem.py [--no-write] [--refine 2]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import directable as dr
from directable import fem, lqr, models
from directable.experiments import fem_scenes
from bench_common import best_of, publish


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-write", action="store_true", help="do not update benchmarks/RESULTS.md")
    ap.add_argument("--refine", type=int, default=2, help="T-shape mesh refinement (1: 132 tets, 2: 1056)")
    args = ap.parse_args()

    t0 = time.perf_counter()
    s = fem_scenes.t_shape_scene(r=30, T=500, dt=0.01, runs=10, refine=args.refine)
    t_scene = time.perf_counter() - t0
    mesh, red, T, dt = s.mesh, s.red, s.T, s.dt
    t0 = time.perf_counter()
    dr.ReducedStVK(s.model, s.basis.U)
    t_coef = time.perf_counter() - t0

    # full step (implicit Newmark + Newton, sparse LDL')
    sim = fem.Simulator(s.model, dt)
    n_full = 50
    t_full = best_of(lambda: sim.run(s.forces[:n_full]), 3) / n_full

    # reduced step r = 30, in the C++ loop (open loop, implicit Newmark)
    z0 = s.z_ref[0]
    t_red = {}
    for name, iters in (("Newton to 1e-10", 20), ("one Newton iteration (paper)", 1)):
        red.set_newton(iters)
        t_red[name] = best_of(lambda: dr.simulate(red, z0, T, dt, open_loop=s.w_ff), 5) / T
    red.set_newton(20)

    # control cost per step: tracker.control in the loop, measured as the
    # difference between a controlled and an open-loop run of the same model
    A30 = models.linearize(red, s.z_ref, dt)
    sol30 = lqr.solve_continuous(A30, red.control_matrix(), dt, Q=np.eye(60), R=1e-3, Q_final=1e3 * np.eye(60))
    ctrl = lqr.tracker(sol30, s.z_ref, s.w_ff)
    # one control evaluation w = w_ff + K (z - z_ref) through the bound
    # control_into (no allocation): an upper bound, it includes the Python call
    z = np.ascontiguousarray(s.z_ref[T // 2] + 1e-3)
    w, fb = np.empty(30), np.empty(30)
    ctrl.index = T // 2
    calls = 20000

    def control_loop():
        for _ in range(calls):
            ctrl.control_into(z, w, fb)

    t_ctrl = best_of(control_loop, 5) / calls

    # gain precomputation r = 24, T = 500: linearize + discretize + Riccati sweep
    s24 = fem_scenes.t_shape_scene(r=24, T=500, dt=0.01, runs=10, refine=args.refine)

    def gains():
        A = models.linearize(s24.red, s24.z_ref, dt)
        lqr.solve_continuous(A, s24.red.control_matrix(), dt, Q=np.eye(48), R=1e-3, Q_final=1e3 * np.eye(48))

    t_gain = best_of(gains, 3)

    step_red = t_red["one Newton iteration (paper)"]

    # finer meshes: the reduced step does not depend on the mesh, the full one does
    finer = []
    for k in (args.refine + 1, args.refine + 2):
        m = fem.t_shape(h=0.1, refine=k)
        fm = fem.StVKModel(m, 2e6, 0.3, 1000.0, fixed=fem.bottom_vertices(m), alpha=0.5, beta=0.005)
        Xk = np.asarray(m.vertices)
        bar = np.flatnonzero(Xk[:, 2] > Xk[:, 2].max() - 0.101)
        f = np.zeros((5, fm.dofs))
        f[:, 3 * bar] = 96.0 / bar.size
        sk = fem.Simulator(fm, dt)
        finer.append((m, best_of(lambda: sk.run(f), 2) / 5))
    lines = [
        f"Mesh: T-shape, {mesh.num_vertices} vertices, {mesh.num_tets} tets ({3 * mesh.num_vertices} dofs); "
        f"dt = {dt}; scene build (centre-line + 10 enrichment runs + PCA + coefficients) {t_scene:.2f} s; "
        f"cubic-polynomial coefficients at r = 30: {t_coef * 1e3:.0f} ms.",
        "",
        "| measure | ours | target | paper (2008 laptop) |",
        "|---|---:|---:|---:|",
        f"| full implicit Newmark step ({3 * mesh.num_vertices} dofs) | {t_full * 1e3:.2f} ms | - | - |",
    ]
    for name, t in t_red.items():
        lines.append(f"| reduced step r = 30, {name} | {t * 1e3:.3f} ms | < 0.15 ms | 1.4 ms |")
    lines += [
        f"| control cost per step, r = 30 (one `Tracker.control_into` call from Python, upper bound) | {t_ctrl * 1e6:.2f} us | < 5 us | 20-30 us |",
        f"| gains r = 24, T = 500 (linearize + discretize + Riccati) | {t_gain:.3f} s | < 1 s | 17.5 s |",
        f"| full / reduced step speed-up | {t_full / step_red:.0f}x | - | up to 15,700x |",
    ]
    for m, tf in finer:
        lines.append(f"| full step, finer T-shape ({m.num_tets} tets, {3 * m.num_vertices} dofs); speed-up over the "
                     f"r = 30 reduced step | {tf * 1e3:.1f} ms; {tf / step_red:.0f}x | - | up to 15,700x |")
    lines += [
        "",
        f"Reduced step (paper's one Newton iteration) {step_red * 1e3:.3f} ms: "
        f"{'met' if step_red < 1.5e-4 else 'MISSED'}; control {t_ctrl * 1e6:.2f} us: "
        f"{'met' if t_ctrl < 5e-6 else 'MISSED'}; gains {t_gain:.3f} s: {'met' if t_gain < 1 else 'MISSED'}.",
    ]
    table = "\n".join(lines)
    print(table)
    if args.no_write:
        return
    publish("fem", "Reduced deformable solids (issue 3)",
            "; best of several runs; times per step from whole C++ runs (`directable.simulate`).", table)


if __name__ == "__main__":
    main()
