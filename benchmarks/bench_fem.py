"""Reduced deformable benchmark, against the paper's
tables 1 and 2 (Barbic & Popovic 2008, a 2008 laptop).

Targets: reduced step at r = 30 (forces + stiffness + implicit solve)
< 0.15 ms (paper 1.4 ms); control cost per step < 5 us (paper 20-30 us);
gain precomputation for r = 24, T = 500 < 1 s (paper 17.5 s); and the
full-vs-reduced speed-up on our meshes (paper: up to 15,700x). Prints a
table and writes its section of benchmarks/RESULTS.md between the markers
<!-- fem:begin --> and <!-- fem:end -->.

    python benchmarks/bench_fem.py [--no-write] [--refine 2]
    python benchmarks/bench_fem.py --solvers-only [--sizes 1k,12.5k,52k] [--direct-max-dofs 15000]

The second form times only the full step's linear solvers (``"direct"``:
sparse LDL' every Newton iteration; ``"cg"``: block-Jacobi conjugate
gradients) on the papers' mesh sizes, in one process, with the load, and
prints the rows (RESULTS.md's fem section is written by the first form only).
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

import directable as dr
from directable import fem, lqr, models
from directable.experiments import fem_scenes
from bench_common import best_of, publish

# the papers' full meshes (Barbic & Popovic 2008 Tables 1-2) as built by the scenes,
# with the scenes' materials, step and peak force (held constant from rest: a step load)
SOLVER_SIZES = {
    "1k": dict(scene="T-shape", mesh=lambda: fem.t_shape(h=0.1, refine=2, stem=(1, 1, 4)), young=2e6, dt=0.02,
               force=96.0, axis=0, driven=lambda X: X[:, 2] > X[:, 2].max() - 0.101),
    "12.5k": dict(scene="flower", mesh=lambda: fem.stem(h=0.1, height=8, leaves=((3, 2), (5, -2), (7, 2)), refine=6),
                  young=2e6, dt=0.005, force=60.0, axis=0, driven=lambda X: X[:, 2] > X[:, 2].max() - 0.101),
    "52k": dict(scene="creature", mesh=lambda: fem.creature(0.033), young=5e6, dt=0.02, force=400.0, axis=1,
                driven=lambda X: (X[:, 0] > 0.75) & (X[:, 2] > 1.5)),
}


def load() -> str:
    return os.getloadavg().__repr__()


def solver_rows(sizes, steps=3, direct_max_dofs=15000, cg_tolerance=1e-4):
    """Per mesh: the full step's split (assembly = internal forces + tangent
    stiffness, per Newton iteration) and the step with each linear solver,
    timed as `steps` steps from rest under the scene's peak force; the
    direct solver is skipped above `direct_max_dofs` (its time grows about
    cubically: minutes per step at 52k dofs)."""
    rows = []
    for key in sizes:
        c = SOLVER_SIZES[key]
        mesh = c["mesh"]()
        X = np.asarray(mesh.vertices)
        model = fem.StVKModel(mesh, c["young"], 0.3, 1000.0, fixed=fem.bottom_vertices(mesh), alpha=0.5, beta=0.005)
        driven = np.flatnonzero(c["driven"](X))
        f = np.zeros(model.dofs)
        f[3 * driven + c["axis"]] = c["force"] / driven.size
        u = np.zeros(model.dofs)
        t0 = time.perf_counter()
        for _ in range(3):
            model.internal_forces(u)
            model.stiffness_csc(u)
        t_asm = (time.perf_counter() - t0) / 3  # includes the CSC copy to NumPy: an upper bound
        out = dict(key=key, scene=c["scene"], dofs=model.dofs, tets=mesh.num_tets, dt=c["dt"], asm=t_asm,
                   load_before=os.getloadavg()[0])
        for solver in ("direct", "cg"):
            if solver == "direct" and model.dofs > direct_max_dofs:
                out[solver] = None
                continue
            sim = fem.Simulator(model, c["dt"], linear_solver=solver, cg_tolerance=cg_tolerance)
            newton, cg_its = 0, 0
            t0 = time.perf_counter()
            for _ in range(steps):
                newton += sim.step(f)
                cg_its += sim.last_cg_iterations
            out[solver] = (time.perf_counter() - t0) / steps
            out[solver + "_newton"] = newton / steps
            out[solver + "_cg"] = cg_its / steps
            out[solver + "_u"] = sim.u.copy()
        if out["direct"] is not None:
            out["diff"] = np.abs(out["cg_u"] - out["direct_u"]).max() / np.abs(out["direct_u"]).max()
        out["load_after"] = os.getloadavg()[0]
        rows.append(out)
        print(solver_table([out]), flush=True)
    return rows


def solver_table(rows):
    lines = ["| mesh | dofs (tets) | dt s | assembly ms / Newton it. | direct s / step (Newton its) | "
             "CG s / step (Newton its, CG its / step) | direct / CG | max abs u diff / max u | load 1-min |",
             "|---|---|---|---|---|---|---|---|---|"]
    for o in rows:
        d = "not run" if o["direct"] is None else f"{o['direct']:.3f} ({o['direct_newton']:.1f})"
        ratio = "-" if o["direct"] is None else f"{o['direct'] / o['cg']:.1f}x"
        diff = "-" if o["direct"] is None else f"{o['diff']:.1e}"
        lines.append(f"| {o['scene']} ({o['key']}) | {o['dofs']:,} ({o['tets']:,}) | {o['dt']} | {o['asm'] * 1e3:.0f} | "
                     f"{d} | {o['cg']:.3f} ({o['cg_newton']:.1f}, {o['cg_cg']:.0f}) | {ratio} | {diff} | "
                     f"{o['load_before']:.1f} / {o['load_after']:.1f} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-write", action="store_true", help="do not update benchmarks/RESULTS.md")
    ap.add_argument("--refine", type=int, default=2, help="T-shape mesh refinement (1: 132 tets, 2: 1056)")
    ap.add_argument("--solvers-only", action="store_true", help="only the direct vs CG full-step rows")
    ap.add_argument("--sizes", default="1k,12.5k,52k", help=f"meshes of the solver rows, of {sorted(SOLVER_SIZES)}")
    ap.add_argument("--steps", type=int, default=3, help="full steps timed per solver row")
    ap.add_argument("--direct-max-dofs", type=int, default=15000, help="skip the direct solver above this size")
    args = ap.parse_args()
    sizes = [k for k in args.sizes.split(",") if k]
    if args.solvers_only:
        print(f"load before {load()}")
        solver_rows(sizes, args.steps, args.direct_max_dofs)
        print(f"load after {load()}")
        return

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
    lines += ["", "Full step, direct (sparse LDL' every Newton iteration) vs block-Jacobi CG "
              f"(`linear_solver=\"cg\"`), {args.steps} steps from rest under the scene's peak force, same process:", ""]
    lines.append(solver_table(solver_rows(sizes, args.steps, args.direct_max_dofs)))
    table = "\n".join(lines)
    print(table)
    if args.no_write:
        return
    publish("fem", "Reduced deformable solids (issue 3)",
            "; best of several runs; times per step from whole C++ runs (`directable.simulate`).", table)


if __name__ == "__main__":
    main()
