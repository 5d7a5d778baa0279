"""Reduced fluid benchmark.

Measures, in one process: the reduced step at r = 64 (64x64 grid), the LQR
control evaluation, the full 256x256 step and the speedup, the gain
precomputation (linearize + discretize + Riccati) for r = 64, 3 particles,
T = 200, and the two ways of exponentiating the antisymmetric advection
matrix (benchmarks/expm_skew.cpp, compiled against the built core when a
build tree and a compiler are there). Prints a table and writes its section
of benchmarks/RESULTS.md between <!-- fluid:begin --> and <!-- fluid:end -->.

    python benchmarks/bench_fluid.py [--no-write] [--full-n 256]
"""
from __future__ import annotations

import argparse
import glob
import pathlib
import subprocess

import numpy as np

import directable as dr
from directable import fluid as F
from directable.experiments import fluid_forcing
from bench_common import best_of, publish

HERE = pathlib.Path(__file__).resolve().parent


def expm_comparison(r=64):
    lib = sorted(glob.glob(str(HERE.parent / "build" / "*" / "libdirectable_core.a")))
    eigen = glob.glob(str(pathlib.Path(np.__file__).parents[1] / "cmeel.prefix" / "include" / "eigen3"))
    if not lib or not eigen:
        return None
    exe = "/tmp/directable_expm_skew"
    cmd = ["g++", "-O3", "-march=native", "-DNDEBUG", "-DEIGEN_DONT_PARALLELIZE", "-std=c++17", "-fopenmp",
           f"-I{HERE.parent / 'cpp' / 'include'}", f"-I{eigen[0]}", str(HERE / "expm_skew.cpp"), lib[-1], "-o", exe]
    try:
        subprocess.run(cmd, check=True, capture_output=True)
        out = subprocess.run([exe, str(r), "0.05"], check=True, capture_output=True, text=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return None
    return dict(pade_us=float(out[1]), eig_us=float(out[2]), pade_orth=float(out[3]), eig_orth=float(out[4]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-write", action="store_true", help="do not update benchmarks/RESULTS.md")
    ap.add_argument("--full-n", type=int, default=256, help="grid size of the full-step measurement")
    ap.add_argument("--r", type=int, default=64)
    args = ap.parse_args(argv)
    r, dt = args.r, 0.01
    rows = []

    # basis: PCA of a 64x64 full run with random winds
    g = F.MACGrid2D(64, 64)
    run = F.full_run(g, 2 * r + 20, dt, fluid_forcing.random_winds(g, 30, 2 * r + 20, seed=0))
    B = F.velocity_basis(g, run.velocities[1:], r)
    t_pre = best_of(lambda: dr.ReducedFluid(g, B, 0.01), repeat=2)
    fluid = dr.ReducedFluid(g, B, 0.01)
    z0 = F.project(B, run.velocities[-1])
    W = np.zeros((2000, r))
    t_step = best_of(lambda: fluid.rollout(z0, W, dt), repeat=3) / len(W)
    rows.append(("reduced step, r = %d (64x64 basis)" % r, t_step * 1e3, "ms", "< 0.3 ms (paper 3.0 ms)"))
    rows.append(("advection tensor precomputation, r = %d, 64x64" % r, t_pre, "s", ""))

    # control: a closed-loop run minus an open-loop run, per step (3 particles)
    model = F.FluidParticles(fluid, 3)
    n = model.state_dim()
    x0 = np.r_[0.3, 0.3, 0.5, 0.5, 0.7, 0.4, z0]
    T = 200
    x_ref = dr.models.rollout(model, x0, np.zeros((T, r)), dt)
    K = np.random.default_rng(0).standard_normal((T, r, n)) * 1e-3
    trk = dr.lqr.tracker(K, x_ref)
    t_open = best_of(lambda: dr.sim.simulate(model, x0, T, dt), repeat=5) / T
    t_closed = best_of(lambda: dr.sim.simulate(model, x0, T, dt, controller=trk), repeat=5) / T
    rows.append(("particle model step (3 particles), open loop", t_open * 1e6, "us", ""))
    rows.append(("particle model step (3 particles), closed loop (LQR)", t_closed * 1e6, "us", ""))
    w, w_fb = np.zeros(r), np.zeros(r)
    xs = x_ref[5].copy()
    trk.index = 5
    t_ctrl = best_of(lambda: trk.control_into(xs, w, w_fb), repeat=5, number=20000)
    rows.append(("LQR control w = K (x - x_ref), from Python (call overhead included)", t_ctrl * 1e6, "us", "< 10 us"))

    # gain precomputation: r = 64, 3 particles, T = 200
    q = np.r_[np.full(6, 1e4), np.ones(r)]

    def gains():
        A = dr.models.linearize(model, x_ref, dt)
        dr.lqr.solve_continuous(A, model.control_matrix(), dt, np.diag(q), 1e-2 * np.eye(r), 10 * np.diag(q))
    t_gain = best_of(gains, repeat=1)
    rows.append((f"gain precomputation r = {r}, 3 particles, T = {T}", t_gain, "s", "paper 15.2 s"))

    # full step
    gf = F.MACGrid2D(args.full_n, args.full_n)
    sim = F.FluidSim2D(gf, 0.0, dt)
    sim.velocity = gf.project(np.random.default_rng(1).standard_normal(gf.n_faces))
    sim.particles = np.array([[0.3, 0.3], [0.5, 0.5], [0.7, 0.4]])
    t_full = best_of(lambda: sim.step(), repeat=3)
    rows.append((f"full step {args.full_n}x{args.full_n} (SL advection + projection)", t_full * 1e3, "ms", ""))
    speed = t_full / t_closed
    rows.append(("speedup: full step / closed-loop reduced step", speed, "x", "paper ~26x"))

    ex = expm_comparison(r)
    if ex:
        rows.append((f"exp of skew {r}x{r}: Pade (used)", ex["pade_us"], "us", f"orthogonality error {ex['pade_orth']:.1e}"))
        rows.append((f"exp of skew {r}x{r}: Hermitian eigen-decomposition", ex["eig_us"], "us",
                     f"orthogonality error {ex['eig_orth']:.1e}"))

    table = "| measurement | value | unit | target / note |\n|---|---:|---|---|\n" + "\n".join(
        f"| {a} | {v:.4g} | {u} | {c} |" for a, v, u, c in rows)
    print(table)
    if args.no_write:
        return
    publish("fluid", "Reduced fluid (issue 4)",
            f", threads = {dr._core.max_threads()}; best of several runs; dt = 0.01; viscosity 0.01 in the reduced "
            "step; the machine is shared, so times are upper bounds.", table)


if __name__ == "__main__":
    main()
