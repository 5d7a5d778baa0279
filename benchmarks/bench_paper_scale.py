"""Barbic & Popovic 2008, Tables 1 and 2 at the paper's sizes, with the
offline precomputation serial and on a local Dask cluster.

For each scene (T-shape, flower, creature = the paper's dinosaur, fluid, leaves = the fluid with several
particles), and the MPC paper's shark (``--scenes shark``):
  offline   centre-line / training runs, enrichment runs serial and on a
            ``dask.distributed.LocalCluster`` (same snapshots bit for bit),
            PCA, cubic coefficients; peak memory (``resource.getrusage``) of
            this process and of the workers
  Table 1   r, dofs, T, LQR precomputation (linearize + discretize + sweep; CPU time of one thread, and the
            wall time on all cores beside it)
            against a NumPy/SciPy transcription (discretization + the NumPy
            Riccati sweep on an evenly strided subset of steps, scaled) in
            the same run (the closed-form eigen-decomposition discretization of
            tests/reference on every k-th step, scaled), gain storage (r s T doubles)
  Table 2   reduced step without control (FS), control cost per step, full
            step (FU), FU / FS
  the papers' experiments on the same scenes: the T-shape's strike (clearance to the balls), the
            flower's bee (miss distance, controlled and not), the dinosaur's final-cost LQR vs PD (effort
            ratio, paper 6.3), figure 5's three control levels (effort and path error), the shark held by
            MPC (H = 5) against PD and no control (shape error, control energy, seconds per frame)
printed as a table with the paper's row beside ours, and written to the
``paper_scale`` section of benchmarks/RESULTS.md.

    python benchmarks/bench_paper_scale.py --size medium            # ~10 min on 2 cores
    python benchmarks/bench_paper_scale.py --size paper --workers 2 # the papers' sizes (see RESULTS.md)
    python benchmarks/bench_paper_scale.py --size small --no-write  # a quick check
    python benchmarks/bench_paper_scale.py --size paper --scenes T-shape --runs 10 --no-write
    python benchmarks/bench_paper_scale.py --size paper --scenes dinosaur --runs 2 --linear-solver cg --no-write

Each scene's full size is ``fem_scenes.PAPER_SIZE`` (the fluid: 256^2, r = 64).
"""
from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np

import directable as dr
from directable import fem, lqr, models, reduce
from directable.experiments import fem_scenes, paper_scale, reduced_fluid_paths, sph_shape
from bench_common import best_of, publish
import reference.lqr as ref  # tests/reference, on the path through bench_common

# the paper's rows: r, dofs, T, LQR time (s), gain storage (MB) | FS, control, FU (ms per step)
PAPER = {
    "T-shape": (24, 1032, 501, 17.5, 4.4, 0.8, 0.02, 95.0),
    "flower": (24, 12705, 1281, 46.9, 11.2, 0.8, 0.02, 2300.0),
    "dinosaur": (30, 53178, 181, 12.5, 2.5, 1.4, 0.03, 22000.0),
    "fluid": (64, 131584, 90, 8.4, 3.1, 3.0, 0.07, 78.0),
    "leaves": (64, 131584, 200, 15.2, 6.5, 3.0, 0.07, 78.0),
}

SIZES = {
    "small": {"T-shape": dict(r=10, T=100, runs=4), "flower": dict(r=10, T=150, runs=4),
              "dinosaur": dict(r=8, T=60, h=0.2, runs=4), "fluid": dict(n=32, r=16, steps=90, enrich=4),
              "leaves": dict(n=32, r=16, steps=200, particles=4, enrich=4)},
    "medium": {"T-shape": dict(r=24, T=501, runs=8), "flower": dict(r=24, T=400, refine=2, runs=8),
               "dinosaur": dict(r=30, T=181, h=0.15, runs=20), "fluid": dict(n=64, r=32, steps=90, enrich=8),
               "leaves": dict(n=64, r=32, steps=200, particles=4, enrich=8)},
    "paper": {"T-shape": fem_scenes.PAPER_SIZE["t_shape"], "flower": fem_scenes.PAPER_SIZE["flower"],
              "dinosaur": fem_scenes.PAPER_SIZE["creature"], "fluid": dict(n=256, r=64, steps=90, enrich=16),
              "leaves": dict(n=256, r=64, steps=200, particles=4, enrich=16)},
}
# the MPC paper's shark (sph_shape): particle spacing and run length per size. Two L-BFGS iterations per
# frame, warm-started from the previous frame's plan (a real-time iteration scheme: the iterations a window
# would need are spread over the frames it overlaps): at 344 particles they restore the shark as well as 15
# (error max 3.2 vs 1.7 mm, final 0.07 vs 0.00 mm, a quarter of the control energy); one is not enough
# (the first L-BFGS step is a normalised gradient step: 84 mm, never restored). The prediction's steps per frame
# follow the spacing ("auto": c0 dt / h <= 2, 5 at the paper's spacing): a fixed 2 made the paper-size
# prediction explode after the impact and the shark drift away under MPC. At the paper's size one iteration per
# frame (the next window starts from its curvature, L-BFGS's value-only scale) and a softer prediction (8 m/s
# sound speed: 2 stable steps per frame instead of 5) bring a frame to about 1 s of CPU; the exact prediction
# with 2 iterations restores it as well at 2.5 s (RESULTS.md).
SHARK = {"small": dict(spacing=0.04, frames=30, impact=8, horizon=5, prediction_substeps="auto", iterations=2),
         "medium": dict(spacing=0.02, frames=40, impact=10, horizon=5, prediction_substeps="auto", iterations=2),
         "paper": dict(spacing=sph_shape.PAPER_SPACING, frames=40, impact=10, horizon=5, prediction_substeps="auto",
                       iterations=1, prediction_sound_speed=8.0)}
FLUIDS = ("fluid", "leaves")  # reduced_fluid_paths scenarios: one particle (fig. 2) / several leaves (table 1 row 5)
BUILDERS = {"T-shape": fem_scenes.t_shape_scene, "flower": fem_scenes.plant_scene,
            "dinosaur": fem_scenes.creature_scene}


NOTES = """
The full sizes: `python benchmarks/bench_paper_scale.py --size paper --workers 2` (CG at the flower and creature; or
`--scenes T-shape,fluid` for the rows that fit an hour). What bounds them is the full FEM step (implicit Newmark,
Newton). With `linear_solver="direct"` (Eigen's simplicial sparse LDL^T, refactorised every Newton iteration)
it grows about cubically with the mesh: 5.6 s per step at 10,356 dofs and 67 s at 22,479 dofs (creature
h = 0.06 and 0.045, load ~16), 117 s at 52,308 dofs (the creature, h = 0.033, load ~5). With
`linear_solver="cg"` (block-Jacobi 3x3 preconditioned conjugate gradients, `linalg/pcg`) the step is 29x faster
at 52k dofs and 2.5x at the flower's 12.5k; on the 1k T-shape the direct solver stays faster (it stays the
default). `python benchmarks/bench_fem.py --solvers-only --sizes 1k,12.5k,52k --steps 3` (16:04 UTC, load
average 5.1 before and after; the 52k direct column from `--sizes 52k --steps 1 --direct-max-dofs 100000`,
16:04-16:06 UTC, load 5.0-5.5), steps from rest under the scene's peak force held (a step load), CG to
`cg_tolerance = 1e-4` of each Newton residual:

| mesh | dofs (tets) | dt s | assembly ms / Newton it. | direct s / step (Newton its) | CG s / step (Newton its, CG its / step) | direct / CG | max abs u diff / max u |
|---|---|---|---|---|---|---|---|
| T-shape (1k) | 1,035 (960) | 0.02 | 1 | 0.015 (4.3) | 0.026 (4.3, 562) | 0.6x | 1.5e-10 |
| flower (12.5k) | 12,495 (18,144) | 0.005 | 29 | 1.088 (3.7) | 0.439 (3.7, 545) | 2.5x | 9.1e-11 |
| creature (52k) | 52,308 (82,134) | 0.02 | 145 | 117.4 (4.0, 1 step) | 4.03 (4.0, 1422; 5.41 s, 1672 its over 3 steps) | 29x | 4.8e-11 |

Profile: assembly (internal forces + tangent stiffness) is 10% (direct) / 24% (CG) of a step at 12.5k and
0.5% / 14% at 52k; the rest is the linear solve: factorisation with `"direct"` (about 29 s per Newton
iteration at 52k), with `"cg"` 147 (12.5k) and 355 (52k) CG iterations per Newton iteration at 0.6 and 2.4 ms
each (one sparse mat-vec). The Newmark matrix is not mass-dominated on these meshes: the median of
K_ii / (m_i / (beta dt^2)) is 338 (1k), 190 (12.5k) and 1942 (52k), hence the hundreds of iterations; an
incomplete Cholesky (Eigen's IncompleteCholesky, tried) cut them 2.7x but cost as much per step. With CG a full
run is ~8 min for the flower (T = 1281) and ~14 min for the creature (T = 181; its first 25 steps under the
scene's own sine force: 4.5 s per step, 4.0 Newton and 1293 CG iterations per step, 16:13-16:15 UTC, load 3.9-4.1): the creature's 20 enrichment runs (~10 full runs on average, the
impulse times being stratified) are ~2-3 h serial, ~1-1.5 h on 2 workers, instead of ~2.5 days; neither
scene's paper-size row fits a 10-minute command (the benchmark runs the centre-line 3 times and the
enrichment twice, serial and on the cluster), so they are not in the tables above. The reduced side (the
LQR precomputation, FS, control cost) does not depend on it. The T-shape at the paper's size (1035 dofs,
49 ms per full step at load ~10, T = 501, 50 runs: about 13,000 full steps, ~11 min serial, ~6 min on 2
workers) fits the command above with `--scenes T-shape,fluid` (and the default direct solver).

The shark at the MPC paper's size (`--size paper --scenes shark`: 28,470 particles in 3D, H = 5): MPC restores it
(error max 6.5 mm, final 5.0 mm; PD 15.2 mm, no control 56.9 mm) at 0.74-0.97 s of CPU per frame at load 4-5.5 (one
thread; one warm-started L-BFGS iteration, a prediction at 8 m/s in 2 steps per frame; 1.17 s before the neighbour
grid's rework, the bounded line-search rollouts and the prediction's hot copy, the same errors), 2.49 s with the exact prediction (5 steps) and 2
iterations (the paper: ~60 s per frame); the issue's <= 1 s is met, the simulation ~0.45 s of it (RESULTS.md). The
1.7x creature enrichment on 2 Dask
workers needs an idle machine: `--size medium --scenes dinosaur --workers 2`."""


def peak_mb() -> float:
    """Peak resident memory of the calling process (MB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def lqr_precomputation(A, B, dt, Q, R, Q_final, stride, van_loan=False):
    """(our CPU time on one thread, our wall time on all cores, NumPy/SciPy CPU
    time on one thread) of the same gains; the reference discretizes and
    sweeps every ``stride``-th step, its time scaled to all T steps (both are
    O(T) with the same cost per step). CPU time of one thread (``threads=1``,
    BLAS limited to one thread for the reference) is what a loaded machine
    inflates least; the wall time on all cores is the idle machine's number
    only when the machine is idle. ``van_loan``: SciPy's expm of the Van Loan
    matrix (the fluids: their particle block makes A singular, which the
    eigen-decomposition form divides by) instead of the closed-form
    eigen-decomposition (the stiff solids, where expm overflows)."""
    from threadpoolctl import threadpool_limits

    T = A.shape[0]
    t_cpu = best_of(lambda: lqr.solve_continuous(A, B, dt, Q, R, Q_final, threads=1), 3, clock=time.thread_time)
    t_wall = best_of(lambda: lqr.solve_continuous(A, B, dt, Q, R, Q_final), 2)
    idx = np.arange(0, T, stride)

    def reference():
        # per-step eigen-decomposition discretization: SciPy's Van Loan exponential overflows on the stiff reduced solids
        steps = [ref.van_loan_step(A[i], B, dt, Q, R) if van_loan else ref.eig_discretize(A[i], B, Q, R, dt)
                 for i in idx]
        Phi, Gam, Qd, N, Rd = (np.array([st[k] for st in steps]) for k in range(5))
        ref.riccati_sweep(Phi, Gam, Qd, Rd, Q_final, N)

    with threadpool_limits(1):
        t_np = best_of(reference, 1, clock=time.thread_time) * T / len(idx)
    return t_cpu, t_wall, t_np


def fem_row(name, params, client, full_steps, linear_solver=None):
    build = BUILDERS[name]
    p = dict(params)
    runs = p.pop("runs")
    linear_solver = linear_solver or p.pop("linear_solver", "direct")
    p.pop("linear_solver", None)
    # offline, serial: the scene's own pipeline with the enrichment in-process
    s, t_scene = timed(lambda: build(**p, runs=runs, linear_solver=linear_solver))
    u, v, a = fem.centerline(s.model, s.dt, s.forces, return_acceleration=True, linear_solver=linear_solver)
    t_center = timed(lambda: fem.centerline(s.model, s.dt, s.forces, linear_solver=linear_solver))[1]
    kw = dict(runs=runs, fraction=0.1, u=u, v=v, a=a, seed=0, linear_solver=linear_solver)
    snaps, t_enrich = timed(lambda: fem.enrich(s.model, s.dt, s.forces, **kw))
    snaps_c, t_enrich_c = timed(lambda: fem.enrich(s.model, s.dt, s.forces, executor=client, **kw))
    same = bool(np.array_equal(snaps, snaps_c))
    basis, t_pca = timed(lambda: reduce.pca(snaps, s.r, mass=s.model.mass))
    _, t_coef = timed(lambda: dr.ReducedStVK(s.model, basis.U))
    spec_bytes = sum(np.asarray(x).nbytes for x in s.model.spec() if isinstance(x, np.ndarray))
    per_task = spec_bytes + 3 * s.model.dofs * 8 + s.forces.shape[0] // 2 * max(1, np.count_nonzero(
        np.any(s.forces != 0, axis=0))) * 8

    # Table 1: LQR precomputation
    r, T, dt = s.r, s.T, s.dt
    A = models.linearize(s.red, s.z_ref, dt)
    B = s.red.control_matrix()
    n = 2 * r
    Q, R, Qf = np.eye(n), 1e-3 * np.eye(r), 1e3 * np.eye(n)
    t_lin = best_of(lambda: models.linearize(s.red, s.z_ref, dt), 3, clock=time.thread_time)
    t_lqr, t_wall, t_np = lqr_precomputation(A, B, dt, Q, R, Qf, stride=max(1, T // 25))
    sol = lqr.solve_continuous(A, B, dt, Q, R, Qf)
    storage = r * 2 * r * T * 8 / 1e6  # K (T, s = r, n = 2r)

    # Table 2: reduced step, control cost, full step
    z0 = s.z_ref[0]
    fs = best_of(lambda: dr.simulate(s.red, z0, T, dt, open_loop=s.w_ff), 3) / T
    tr = lqr.tracker(sol, s.z_ref, s.w_ff)
    ctl = max(0.0, best_of(lambda: dr.simulate(s.red, z0, T, dt, controller=tr), 3) / T - fs)
    sim = fem.Simulator(s.model, dt, linear_solver=linear_solver)
    k = min(full_steps, T)
    fu = best_of(lambda: sim.run(s.forces[:k]), 1) / k
    exp = fem_experiment(name, s, client)
    return dict(exp=exp, name=name, r=r, dofs=s.model.dofs, T=T, t_lqr=t_lin + t_lqr, t_wall=t_lin + t_wall, t_np=t_lin + t_np, storage=storage,
                fs=fs, ctl=ctl, fu=fu, scene=t_scene, center=t_center, enrich=t_enrich, enrich_c=t_enrich_c,
                same=same, pca=t_pca, coef=t_coef, runs=runs, per_task=per_task, k=snaps.shape[0])


def fem_experiment(name, s, client):
    """The paper's experiment on the scene just built: one line of text."""
    t0 = time.perf_counter()
    if name == "T-shape":
        c = paper_scale.t_shape_strike(s)["clearance"]
        text = (f"strike: clearance to the balls LQR {1e3 * c['lqr'].max():.2f} mm, uncontrolled "
                f"{1e3 * c['uncontrolled'].min():.1f} mm (<= 0: touching)")
    elif name == "flower":
        b = paper_scale.flower_bee(s)
        text = (f"bee: leaf tip {1e3 * b['miss']['lqr']:.2f} mm from the bee under LQR (lands: {b['landed']['lqr']}), "
                f"{1e3 * b['miss']['uncontrolled']:.1f} mm uncontrolled (lands: {b['landed']['uncontrolled']}); "
                f"loop seam {b['seam']:.3f}, second loop's error at its end {b['loop_error'][-1, -1]:.4f}")
    else:
        c = paper_scale.lqr_vs_pd_final_cost(s, executor=client)
        text = (f"final cost only: LQR error {1e3 * c['lqr'][0]:.2f} mm (open loop {1e3 * c['open_loop_error']:.1f} mm); "
                f"PD at LQR's error needs {c['effort_ratio']:.1f}x LQR's effort (paper 6.3x); PD within LQR's "
                f"effort ends {1e3 * c['pd_at_lqr_effort_error']:.1f} mm off")
    return f"{text} [{time.perf_counter() - t0:.0f} s]"


def fluid_experiment(scn):
    """Figure 5's three control levels on a scenario with several particles."""
    t0 = time.perf_counter()
    out = reduced_fluid_paths.control_levels(scn, pushes=reduced_fluid_paths.user_pushes(scn))
    parts = [f"alpha_R {a:g}: effort {e:.3g}, mean path error {p.mean():.3f} cells"
             for a, e, p in zip(out["alpha_R"], out["effort"], out["path_error"])]
    return (f"figure 5 with three pushes: " + "; ".join(parts)
            + f"; uncontrolled {out['uncontrolled_path_error'].mean():.3f} cells [{time.perf_counter() - t0:.0f} s]")


def shark_row(params, frames=None):
    """The MPC paper's shark: MPC (H = 5), PD and no control on the same impact.

    Per frame: wall time and the process's CPU time (all threads; with one
    thread a load-independent estimate of the wall time on an idle core) of
    the whole closed-loop frame (simulation, neighbour freeze, the window's
    solve)."""
    p = dict(params)
    if frames is not None:
        p["frames"] = frames
    ref = sph_shape.shark_shape(p.pop("spacing"))
    out = {}
    for c in ("none", "pd", "mpc"):
        t0, c0 = time.perf_counter(), time.process_time()
        run = sph_shape.shape_experiment(c, reference=ref, spacing=params["spacing"], **p)
        out[c] = run, time.perf_counter() - t0, time.process_time() - c0
    mpc_run, wall, cpu = out["mpc"]
    cpu_frame = cpu / p["frames"]
    lines = [f"shark, {len(ref):,} particles (paper ~28,000), {p['frames']} frames, impact at frame {p['impact']}, "
             f"H = {p['horizon']}, {p['iterations']} L-BFGS iterations per frame (warm-started), "
             f"{mpc_run.prediction_substeps} prediction steps per frame ({p['prediction_substeps']}; prediction sound speed "
             f"{p.get('prediction_sound_speed') or sph_shape.SOUND_SPEED} m/s), {threads()} thread(s): MPC frame (simulation + "
             f"freeze + solve) CPU {cpu_frame:.2f} s, wall {wall / p['frames']:.2f} s (window solve median "
             f"{np.median(mpc_run.seconds):.2f} s wall; paper ~60 s; target <= 1 s CPU: "
             f"{'met' if cpu_frame <= 1.0 else 'NOT met'})"]
    for c, (run, wall, cpu) in out.items():
        lines.append(f"  {c}: shape error max {1e3 * run.error.max():.1f} mm, final {1e3 * run.error[-1]:.2f} mm, "
                     f"control energy {run.energy:.3g} N^2 s, run {wall:.0f} s wall, {cpu / p['frames']:.2f} s CPU "
                     f"per frame")
    return "\n".join(lines)


def threads():
    """The core's thread count (OMP_NUM_THREADS, else the machine's)."""
    return int(os.environ.get("OMP_NUM_THREADS", os.cpu_count() or 1))


def fluid_row(name, params, client, full_steps):
    p = dict(params)
    scn, t_serial = timed(lambda: reduced_fluid_paths.make_scenario(**p))
    scn_c, t_cluster = timed(lambda: reduced_fluid_paths.make_scenario(**p, executor=client))
    same = bool(np.array_equal(scn.basis, scn_c.basis))
    T, dt, r = scn.steps, scn.dt, scn.r
    A = models.linearize(scn.model, scn.x_ref, dt)
    B = scn.model.control_matrix()
    n = A.shape[1]
    Q = np.diag(np.r_[np.full(2 * scn.particles, 1e5), np.ones(r)])
    R, Qf = 1e-3 * np.eye(r), 10 * Q
    t_lin = best_of(lambda: models.linearize(scn.model, scn.x_ref, dt), 3, clock=time.thread_time)
    t_lqr, t_wall, t_np = lqr_precomputation(A, B, dt, Q, R, Qf, stride=max(1, T // 15), van_loan=True)
    sol = lqr.solve_continuous(A, B, dt, Q, R, Qf)
    x0 = scn.x_ref[0]
    fs = best_of(lambda: dr.simulate(scn.model, x0, T, dt), 3) / T
    tr = lqr.tracker(sol, scn.x_ref)
    ctl = max(0.0, best_of(lambda: dr.simulate(scn.model, x0, T, dt, controller=tr), 3) / T - fs)
    k = min(full_steps, T)
    fu = best_of(lambda: dr.fluid.full_run(scn.grid, k, dt), 1) / k
    exp = fluid_experiment(scn) if scn.particles >= 3 else ""
    return dict(exp=exp, name=name, r=r, dofs=scn.grid.n_faces, T=T, t_lqr=t_lin + t_lqr, t_wall=t_lin + t_wall, t_np=t_lin + t_np,
                storage=r * n * T * 8 / 1e6, fs=fs, ctl=ctl, fu=fu, scene=t_serial, center=float("nan"),
                enrich=t_serial, enrich_c=t_cluster, same=same, pca=float("nan"), coef=float("nan"),
                runs=p["enrich"], per_task=8 * scn.grid.n_faces, k=0)


def _worker_peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", choices=sorted(SIZES), default="medium")
    ap.add_argument("--scenes", default="T-shape,flower,dinosaur,fluid,leaves")
    ap.add_argument("--workers", type=int, default=2, help="Dask workers (processes, one thread each)")
    ap.add_argument("--full-steps", type=int, default=5, help="full steps timed for FU")
    ap.add_argument("--runs", type=int, default=None, help="override the enrichment runs of every FEM scene")
    ap.add_argument("--linear-solver", choices=("direct", "cg"), default=None,
                    help="the full FEM runs' linear solver (fem.Simulator); default: the size's own (PAPER_SIZE: "
                         "cg for the flower and creature, else direct)")
    ap.add_argument("--shark-frames", type=int, default=None, help="override the shark's frame count")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=":0")
    client = Client(cluster)
    load = os.getloadavg()
    rows, shark = [], None
    for name in args.scenes.split(","):
        if name == "shark":
            t0 = time.perf_counter()
            shark = shark_row(SHARK[args.size], args.shark_frames)
            print(f"shark: done in {time.perf_counter() - t0:.0f} s", flush=True)
            continue
        params = dict(SIZES[args.size][name])
        if args.runs is not None and name not in FLUIDS:
            params["runs"] = args.runs
        t0 = time.perf_counter()
        row = fluid_row(name, params, client, args.full_steps) if name in FLUIDS else fem_row(
            name, params, client, args.full_steps, args.linear_solver)
        row["wall"] = time.perf_counter() - t0
        row["peak"] = peak_mb()
        row["worker_peak"] = max(client.run(_worker_peak_mb).values())
        rows.append(row)
        print(f"{name}: done in {row['wall']:.0f} s", flush=True)
    client.close()
    cluster.close()
    load_after = os.getloadavg()

    t1 = ["| scene | r (paper) | dofs (paper) | T (paper) | LQR precomp. CPU s, 1 thread (paper) | wall s, all cores "
          "| NumPy/SciPy CPU s, 1 thread | ours / NumPy | target 1/10 paper | gains MB (paper) |", "|---" * 10 + "|"]
    t2 = ["| scene | FS ms (paper) | control ms (paper) | FU ms (paper) | FU/FS (paper) |", "|---" * 5 + "|"]
    t3 = ["| scene | runs | snapshots | centre-line s | enrichment serial s | on cluster s | speed-up | same bits "
          "| PCA s | cubic coef. s | bytes/task | peak MB (workers) |", "|---" * 12 + "|"]
    t5 = []
    t4 = ["| scene | tasks | serial fraction | offline s, 1 worker | est. 8 workers | est. 16 workers |", "|---" * 6 + "|"]
    for w in rows:
        p = PAPER[w["name"]]
        ok = "yes" if w["t_lqr"] <= p[3] / 10 else "no"
        t1.append(f"| {w['name']} | {w['r']} ({p[0]}) | {w['dofs']:,} ({p[1]:,}) | {w['T']} ({p[2]}) | "
                  f"{w['t_lqr']:.3f} ({p[3]}) | {w['t_wall']:.3f} | {w['t_np']:.2f} | {w['t_lqr'] / w['t_np']:.3f} | {ok} | "
                  f"{w['storage']:.2f} ({p[4]}) |")
        t2.append(f"| {w['name']} | {1e3 * w['fs']:.4f} ({p[5]}) | {1e3 * w['ctl']:.4f} ({p[6]}) | "
                  f"{1e3 * w['fu']:.1f} ({p[7]:,.0f}) | {w['fu'] / w['fs']:,.0f} ({p[7] / p[5]:,.0f}) |")
        t3.append(f"| {w['name']} | {w['runs']} | {w['k']} | {w['center']:.1f} | {w['enrich']:.1f} | "
                  f"{w['enrich_c']:.1f} | {w['enrich'] / w['enrich_c']:.2f}x | {'yes' if w['same'] else 'NO'} | "
                  f"{w['pca']:.2f} | {w['coef']:.2f} | {w['per_task'] / 1e6:.2f} MB | {w['peak']:.0f} "
                  f"({w['worker_peak']:.0f}) |")
        # Amdahl with the measured per-worker efficiency: the centre-line, PCA and coefficients stay serial;
        # the runs spread over min(N, runs) workers, at most `runs`-fold
        serial = sum(x for x in (w["center"], w["pca"], w["coef"]) if np.isfinite(x))
        eff = min(1.0, w["enrich"] / w["enrich_c"] / args.workers)
        est = lambda N: serial + w["enrich"] / (eff * min(N, w["runs"]))  # noqa: E731
        if w["exp"]:
            t5.append(f"- {w['name']}: {w['exp']}")
        t4.append(f"| {w['name']} | {w['runs']} | {serial / (serial + w['enrich']):.2f} | "
                  f"{serial + w['enrich']:.1f} | {est(8):.1f} | {est(16):.1f} |")
    table = ("Table 1 (ours, paper in brackets)\n\n" + "\n".join(t1) + "\n\nTable 2\n\n" + "\n".join(t2)
             + f"\n\nOffline, serial vs a {args.workers}-worker Dask LocalCluster\n\n" + "\n".join(t3)
             + "\n\nScaling to N workers (Amdahl, with the measured per-worker efficiency; a task ships the "
             "bytes above, its result is (T - t_k + 1) x dofs doubles)\n\n" + "\n".join(t4) + "\n")
    if t5 or shark:
        table += "\nThe papers' experiments on these scenes\n\n" + "\n".join(t5) + "\n"
        if shark:
            table += "\n```\n" + shark + "\n```\n"
    table += NOTES
    print(table)
    if not args.no_write:
        publish("paper_scale", "Tables 1-2 at the papers' sizes (bench_paper_scale)",
                f", `--size {args.size} --workers {args.workers}`, load average {load[0]:.1f} before, "
                f"{load_after[0]:.1f} after (2 shared cores: the machine was busy, timings are upper bounds)",
                table)


if __name__ == "__main__":
    main()
