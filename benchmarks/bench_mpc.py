"""MPC + SPH benchmark.

One controlled frame = one MPC solve (H = 5, 10 L-BFGS iterations, the
simplified prediction model at the frame's state) + `substeps` simulation
steps. Targets on a 2-core machine: <= 1 s per frame for 28,000 particles,
<= 50 ms per frame for 5,000 (paper: about one minute per frame for 28,000
particles on a 4-core Xeon E5-1607). The split is measured from Python:
simulation (the substeps), neighbour freeze (`refreeze`: one prediction
model and one optimizer serve the whole run, re-frozen at each frame's state),
prediction (H model steps), adjoint (H VJPs) per evaluation, and the
optimiser's remainder (solve time - evaluations x prediction - gradients x adjoint;
it also holds the cache misses the prediction and adjoint suffer inside the
solve and not in the isolated per-call timings). Each size runs with 1
thread and with all cores (`--threads`); the load average is recorded,
since on a shared machine other processes take cores (and OpenMP barriers
then wait for descheduled threads).
Writes its section of benchmarks/RESULTS.md between <!-- mpc:begin --> and
<!-- mpc:end -->.

    python benchmarks/bench_mpc.py [--no-write] [--sizes 5000 28000] [--threads 1 2] [--frames 5]
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

from directable import _core, mpc, sph
from bench_common import host, write_section

BEGIN, END = "<!-- mpc:begin -->", "<!-- mpc:end -->"
HORIZON, ITERATIONS, SUBSTEPS = 5, 10, 10
# One-off A/B on the same machine and command (main's SPH/MPC sources swapped
# in and rebuilt), kept with the section because it is not rerun each time.
HISTORY = (
    "Before the issue-6-sph performance work (main at 5be34f4: per-pair kernel terms recomputed in every pass, "
    "VJP recomputing the forward densities, grid scan every SPH step, L-BFGS buffers allocated per solve), "
    "same machine, same command, 2026-11-26 01:47 UTC, load average about 4: 1 thread 399.7 ms per frame "
    "(CPU 395.5 ms) at 5041 particles and 2378.4 ms (CPU 2356.8 ms) at 27889; 2 threads 2662.7 ms and "
    "3829.2 ms. What changed: a forward tape per window step that the VJP reuses (densities, pressures, "
    "kernel terms), kernel terms once per symmetric pair (branch-free cubic spline, SIMD over blocks of pairs), "
    "symmetric / antisymmetric pair terms of the VJP and pressure acceleration computed once per pair and "
    "gathered per particle (no atomics), Verlet neighbour lists with a 0.3 h skin in the simulator, "
    "a cell-sorted grid, fewer parallel regions, a reusable L-BFGS workspace, no final rollout after the solve, "
    "one prediction model and one optimizer for the run (`refreeze`), the team size chosen by measurement.\n\n"
    "The 5041-particle target (from main at 7c80720), same machine and command, 2026-11-26 05:23 UTC, load "
    "average about 3, main's build first, then this one: 5041 particles 75.1 ms (1 thread) and 80.6 ms "
    "(2 threads) -> 37.9 and 36.6 ms; 27889 particles 479.1 and 479.9 ms -> 279.1 and 304.5 ms. CPU per frame "
    "(1 thread, C++ driver, best of 60 frames): 71.1 -> 33.6 ms. What changed: symmetric pairs evaluated once "
    "and added to both particles in the simulator and the prediction model (no per-pair scratch and no gather "
    "passes; two phases of particle chunks whose pairs reach at most into the next chunk: no atomics, results "
    "independent of the thread count), the kernel's square roots and divisions as SIMD in registers, the "
    "simulator's viscosity branch-free (the sign of v.r is random in a fluid at rest: a mispredicted branch per "
    "pair) and its force pass over the pairs within 2h only, the neighbour freeze from the Verlet lists, the "
    "prediction's first window step reusing its taped pressure acceleration (it starts at the frame's state in "
    "every evaluation), the adjoint's first step computing the control gradient alone, L-BFGS passes merged "
    "(16 partial sums per reduction) and line-search trials without the adjoint. Sums are taken in another "
    "order: results change at rounding level; in this benchmark's ill-conditioned window (R = 1e-8, zero "
    "pressure in the hovering block) the L-BFGS path moves the controls' corrections by up to 0.4 % over "
    "frames, as a one-ulp change of the starting controls does in main.\n\n"
    "Threads: the machine's two cores are shared with other sessions; with a fixed team, OpenMP's default "
    "active wait makes every barrier wait for a descheduled thread, and 2 threads ran 2.5-5x slower than 1 "
    "(before the adaptive team, 02:04 UTC, load 6.6: 329.9 ms at 5041 particles and 1207.9 ms at 27889, "
    "against 181.8 and 832.4 ms for 1 thread). The SPH step, the prediction step and the VJP now pick their "
    "team by measurement (all threads vs one, re-probed every 64-1024 calls), so the all-core rows follow "
    "the faster of the two.")


def fluid_of(count):
    """A block of about `count` particles in the unit box; dt scaled with the spacing (CFL)."""
    side = 0.8
    dx = side / np.sqrt(count)
    pts = sph.block((0.1, 0.1), (0.1 + side, 0.1 + side), dx)
    fluid = sph.SPHFluid2D(pts, sph.box_walls((0, 0), (1, 1), dx), spacing=dx, h=1.3 * dx, viscosity=0.2,
                           dt=5e-4 * dx / 0.02)
    return fluid, pts


def bench(count, frames=5):
    fluid, ref = fluid_of(count)
    N = fluid.size
    g = np.array([0.0, 9.81]) * fluid.mass
    x_ref = np.concatenate([ref.ravel(), np.zeros(2 * N)])
    W = np.r_[1e4 * np.ones(2 * N), np.zeros(2 * N)]
    rows = []
    # one prediction model and one optimizer for the run (the sliding window);
    # every frame re-freezes the model's neighbour sets at the current state
    pred = fluid.prediction_model(dt=SUBSTEPS * fluid.dt)
    opt = mpc.HorizonOptimizer(pred, HORIZON, W, 1e-8, W, iterations=ITERATIONS)
    for _ in range(frames):
        c0 = time.process_time()
        t0 = time.perf_counter()
        pred.refreeze(fluid)
        t_freeze = time.perf_counter() - t0
        x0 = sph.state(fluid)
        u0 = np.tile(np.tile(g, N), (HORIZON, 1))
        t0 = time.perf_counter()
        res = opt.solve(x0, np.tile(x_ref, (HORIZON + 1, 1)), u0=u0)
        t_solve = time.perf_counter() - t0
        # prediction and adjoint of one evaluation, timed call by call with one
        # data (window step i passed on, so that the VJP reuses the forward tape
        # as in the solve). A first untimed pass sizes the data's tapes; the
        # refreeze then invalidates them: a step at its tape's positions reuses
        # the taped pressure acceleration (in the solve, only step 0 does so,
        # from the second evaluation on: this times every step in full).
        cp0 = time.process_time()
        data, xs = pred.create_data(), [x0]
        for i in range(HORIZON):
            xs.append(pred.step(xs[-1], res.u[i], i, data=data))
        pred.refreeze(fluid)
        xs, t0 = [x0], time.perf_counter()
        for i in range(HORIZON):
            xs.append(pred.step(xs[-1], res.u[i], i, data=data))
        t_pred = time.perf_counter() - t0
        lam, t0 = np.ones(4 * N), time.perf_counter()
        for i in reversed(range(1, HORIZON)):
            lam = pred.vjp(xs[i], res.u[i], lam, i, data=data)[0]
        # as the solve: the first step's gradient in x0 is not needed
        pred.vjp_controls(xs[0], res.u[0], lam, 0, data=data)
        t_adj = time.perf_counter() - t0
        cp_split = time.process_time() - cp0
        t0 = time.perf_counter()
        fluid.step(res.u[0].reshape(N, 2), steps=SUBSTEPS)
        t_sim = time.perf_counter() - t0
        cpu = time.process_time() - c0 - cp_split  # CPU seconds of the frame (the split's timing calls excluded)
        rows.append(dict(cpu=cpu, sim=t_sim, freeze=t_freeze, pred=t_pred * res.evaluations, adj=t_adj * res.gradients,
                         solve=t_solve, evals=res.evaluations, grads=res.gradients,
                         total=t_sim + t_freeze + t_solve))
    best = dict(min(rows, key=lambda r: r["total"]))
    best["cpu"] = min(r["cpu"] for r in rows)
    best["opt"] = max(0.0, best["solve"] - best["pred"] - best["adj"])
    return N, best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-write", action="store_true", help="do not update benchmarks/RESULTS.md")
    ap.add_argument("--sizes", type=int, nargs="+", default=[5000, 28000])
    ap.add_argument("--threads", type=int, nargs="+", default=sorted({1, _core.max_threads()}))
    ap.add_argument("--frames", type=int, default=5, help="frames per size; the best one is reported")
    args = ap.parse_args()
    targets = {5000: 0.05, 28000: 1.0}
    lines, loads = [], []
    for count in args.sizes:
        for threads in args.threads:
            _core.set_max_threads(threads)
            loads.append(os.getloadavg()[0])
            N, b = bench(count, args.frames)
            tgt = targets.get(count)
            verdict = "" if tgt is None else ("met" if b["total"] <= tgt else "NOT met")
            cpu = f"{1e3 * b['cpu']:.1f} ms" if threads == 1 else "-"
            # cost evaluations (rollouts), and the gradients (adjoint passes) where fewer
            evals = str(b["evals"]) if b["grads"] == b["evals"] else f"{b['evals']} ({b['grads']})"
            line = (f"| {N} | {threads} | {1e3 * b['total']:.1f} ms | {cpu} | "
                    f"{'-' if tgt is None else f'<= {1e3 * tgt:.0f} ms'} {verdict} | "
                    f"{1e3 * b['sim']:.1f} | {1e3 * b['freeze']:.1f} | {1e3 * b['pred']:.1f} | {1e3 * b['adj']:.1f} | "
                    f"{1e3 * b['opt']:.1f} | {evals} |")
            print(line, flush=True)
            lines.append(line)
    if args.no_write:
        return
    section = (f"{BEGIN}\n## MPC + SPH (issue 6)\n\n`python benchmarks/bench_mpc.py` on {host()} "
               f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; 1-minute load average "
               f"{min(loads):.1f}-{max(loads):.1f} from other processes on the shared machine); best of "
               f"{args.frames} frames. A frame: one MPC solve (H = {HORIZON}, {ITERATIONS} L-BFGS iterations, "
               f"the simplified prediction model) + {SUBSTEPS} SPH steps. Split in ms: simulation, neighbour "
               "freeze (`pred.refreeze(fluid)`: one prediction model and one optimizer for the run, re-frozen at "
               "each frame's state; building both anew every frame costs about 30 ms more at 5041 particles and "
               "150 ms more at 27889, mostly first-touch page faults of the buffers), prediction and adjoint (per-call timings x cost and gradient evaluations; every "
               "prediction step timed in full, while in the solve the first step reuses its tape from the second "
               "evaluation on, so that the optimiser remainder comes out that much smaller), "
               "optimiser remainder (L-BFGS, cost terms, and the cache misses of the model inside the solve). "
               "CPU time (1 thread only): the process's CPU seconds for the frame, a load-independent estimate "
               "of the wall time on an idle core (the split's timing calls excluded). "
               "Paper: about 60 s per frame for 28,000 particles on a 4-core Xeon E5-1607.\n\n"
               "| particles | threads | per frame | CPU time | target | sim | freeze | prediction | adjoint | optimiser | evaluations (gradients) |\n"
               "|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|\n" + "\n".join(lines) +
               f"\n\n{HISTORY}\n{END}")
    write_section(section, BEGIN, END)


if __name__ == "__main__":
    main()
