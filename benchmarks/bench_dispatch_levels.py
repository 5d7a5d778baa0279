"""Which hot kernels pay for their extra ISA copies: every family of
``DIRECTABLE_HOT_SOURCES`` timed under the baseline, x86-64-v3 and x86-64-v4
variants of the same portable build (``DIRECTABLE_KERNELS`` forces one), in
the same run, one variant per subprocess, alternating, on one thread.

    python benchmarks/bench_dispatch_levels.py [--quick] [--rounds 3]

The times are CPU seconds of the process (best of several calls), so that
other jobs on a shared machine inflate them less than wall time. A level
stays in the build (``CMakeLists.txt``: ``DIRECTABLE_HOT_SOURCES`` for
x86-64-v3, ``DIRECTABLE_V4_SOURCES`` for x86-64-v4) only for the families
where it gains at least 5 % over the level below; the build must have been
made with every family at every level for this comparison
(``DIRECTABLE_V4_SOURCES`` = all hot sources, the ``-DDIRECTABLE_V4_ALL=ON``
configuration).
"""
from __future__ import annotations

import argparse
import os
import pathlib

from bench_common import host, json_from_subprocess, publish
from bench_lqr import md_table

LEVELS = ("x86-64", "x86-64-v3", "x86-64-v4")

#: family -> the hot sources whose code it times
FAMILIES = {
    "riccati sweep": "control/lqr/riccati, riccati_kernels",
    "discretize": "control/lqr/discretize, linalg/expm",
    "tracker loop": "control/lqr/tracker, sim/simulate, models/model, spring_chain",
    "SPH step": "models/sph/fluid",
    "cloth": "models/cloth/cloth, cloth_integrators, linalg/block_ldlt",
    "reduced fluid 2D": "models/fluid/galerkin_fluid, boundary_basis, coupling, reduced_scene",
    "reduced fluid 3D": "models/fluid/reduced_fluid3d, reduced_scene3d",
    "crowds": "models/crowds/*",
}

CASES = r"""
import json, sys, time
import numpy as np
sys.path.insert(0, {bench!r})
import directable as dr
from directable import cloth as dc, fluid as F, sph
from directable.crowds import scenes as crowd_scenes
from bench_lqr import problem
dr._core.set_max_threads(1)
quick = {quick!r}

def cpu(fn, repeats=5, min_time=0.3):
    fn()
    best, spent, k = float("inf"), 0.0, 0
    while k < repeats or (spent < min_time and k < 30):
        t0 = time.process_time()
        fn()
        dt = time.process_time() - t0
        best, spent, k = min(best, dt), spent + dt, k + 1
    return best

out = {{"kernels": dr.build_info().get("kernels", "?")}}
cases = {{}}
n, T = (48, 200) if quick else (64, 600)
A, B, dt, Q, R, Qf = problem(n, T)
disc = dr.lqr.discretize(A, B, dt, Q, R, threads=1)
cases["riccati sweep"] = [(f"sweep n={{n}}, T={{T}}", lambda: dr.lqr.solve_discrete(disc.Phi, disc.Gamma, disc.Q, disc.R, Qf, N=disc.N))]
A2, B2, dt2, Q2, R2, Qf2 = problem(128, 40 if quick else 100)
disc2 = dr.lqr.discretize(A2, B2, dt2, Q2, R2, threads=1)
cases["riccati sweep"].append(("sweep n=128", lambda: dr.lqr.solve_discrete(disc2.Phi, disc2.Gamma, disc2.Q, disc2.R, Qf2, N=disc2.N)))
cases["discretize"] = [(f"discretize n={{n}}, T={{T}}", lambda: dr.lqr.discretize(A, B, dt, Q, R, threads=1)),
                       ("discretize n=128", lambda: dr.lqr.discretize(A2, B2, dt2, Q2, R2, threads=1))]
model = dr.models.spring_chain(32)
z_ref = dr.models.rollout(model, np.zeros(64), np.ones((2000, 32)), 0.01)
ctrl = dr.lqr.tracker(dr.lqr.pd_gain(10.0, 2.0, 64), z_ref)
cases["tracker loop"] = [("simulate m=32, 2000 steps", lambda: dr.simulate(model, z_ref[0] + 0.1, 2000, 0.01, controller=ctrl, start_index=0))]
DX = 0.02
fluid = sph.SPHFluid2D(sph.block((0.1, 0.0), (0.5, 0.3), DX), sph.box_walls((0.0, 0.0), (1.0, 1.0), DX), spacing=DX, h=1.3 * DX)
x0 = sph.state(fluid)
def sph_steps():
    fluid.step(steps=20)
cases["SPH step"] = [(f"SPH 2D, {{fluid.n_fluid if hasattr(fluid, 'n_fluid') else len(x0) // 4}} particles, 20 steps", sph_steps)]
c = dc.ClothGrid(20, 20, 0.05, 0.01, 300.0, 60.0, 6.0, 0.02)
xc, vc = c.positions0, np.zeros((c.node_count, 3))
cases["cloth"] = [("cloth 20x20, 200 symplectic steps", lambda: c.rollout(xc, vc, 0.002, 200)),
                  ("cloth 20x20, 10 implicit steps (block LDL')", lambda: c.rollout(xc, vc, 0.005, 10, method="implicit"))]
rng = np.random.default_rng(0)
g2 = F.MACGrid2D(48, 48)
B2d = np.ascontiguousarray(np.linalg.qr(np.asarray(g2.project(rng.standard_normal((48, g2.n_faces)))).T)[0])
red2 = dr.ReducedFluid(g2, B2d, 0.001)
poses = np.array([[0.5, 0.5, 0.0]])
bb = F.BoundaryBasis.build(red2, F.c_shape(0.12, 0.06, segments=12), poses, 8)
scene = F.ReducedScene(red2, [F.Coupling(red2, bb)])
z2 = rng.standard_normal(red2.r)
w2 = np.zeros(red2.r)
def scene_steps():
    z = z2
    for t in range(20):
        z, _ = scene.step(z, w2, 0.01, poses + 0.001 * t, np.array([[0.1, 0.0, 0.2]]))
cases["reduced fluid 2D"] = [("2D scene r=48, one coupling, 20 steps", scene_steps),
                             ("2D Galerkin rollout r=48, 200 steps", lambda: red2.rollout(z2, np.zeros((200, red2.r)), 0.01))]
g3 = F.MACGrid3D(12, 12, 12)
B3 = np.ascontiguousarray(np.linalg.qr(g3.project(rng.standard_normal((48, g3.n_faces)), tol=1e-10).T)[0])
red3 = dr.ReducedFluid(g3, B3, 0.0)
z3 = rng.standard_normal(48)
P3 = rng.uniform(0.1, 0.9, (4000, 3))
cases["reduced fluid 3D"] = [("3D particles r=48, 4000 leaves, one RK2 step", lambda: red3.advect_particles(z3, z3, P3, 0.01))]
city = crowd_scenes.city(people=600 if quick else 2000, threads=1)
city.run(3)
cases["crowds"] = [("city 120^2, 5 steps", lambda: city.run(5))]
for fam, items in cases.items():
    for label, fn in items:
        out[fam + " | " + label] = cpu(fn, repeats=3 if quick else 5)
print(json.dumps(out))
"""


def run_variant(kernels, quick) -> dict:
    env = {**os.environ, "DIRECTABLE_KERNELS": kernels, "OMP_NUM_THREADS": "1"}
    code = CASES.format(bench=str(pathlib.Path(__file__).resolve().parent), quick=quick)
    return json_from_subprocess(code, env)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller problems, no RESULTS.md")
    ap.add_argument("--rounds", type=int, default=2, help="alternating rounds per variant (best kept)")
    args = ap.parse_args()
    load0 = os.getloadavg()
    results = {}
    for _ in range(args.rounds):  # alternate, so that a busy moment hurts every variant alike
        for level in LEVELS:
            r = run_variant(level, args.quick)
            kept = results.setdefault(level, r)
            for key, value in r.items():
                if key != "kernels":
                    kept[key] = min(kept[key], value)
    for level in LEVELS:
        if results[level]["kernels"] != level:
            raise SystemExit(f"asked for {level}, the build loaded {results[level]['kernels']}: "
                             "this comparison needs a portable build with every level")
    header = ["family (hot sources)", "case", "x86-64", "x86-64-v3", "x86-64-v4", "v3 gain", "v4 gain over v3"]
    rows = []
    for key in results["x86-64"]:
        if key == "kernels":
            continue
        fam, label = key.split(" | ", 1)
        t0, t3, t4 = (results[lvl][key] for lvl in LEVELS)
        rows.append([f"{fam} ({FAMILIES[fam]})", label, f"{t0 * 1e3:.2f} ms", f"{t3 * 1e3:.2f} ms",
                     f"{t4 * 1e3:.2f} ms", f"**{t0 / t3 - 1:+.0%}**", f"**{t3 / t4 - 1:+.0%}**"])
    table = md_table(header, rows)
    load1 = os.getloadavg()
    conditions = (f"; CPU time of one thread, best of {args.rounds} alternating rounds x several calls; "
                  f"load average {load0[0]:.1f} at the start, {load1[0]:.1f} at the end")
    print(f"{host()}{conditions}")
    print(table)
    if not args.quick:
        publish("dispatch_levels", "Which hot kernels pay for an ISA copy", conditions, table)


if __name__ == "__main__":
    main()
