"""Reduced fluid benchmark.

Measures, in one process: the reduced step at r = 64 (64x64 grid), the LQR
control evaluation, the full 256x256 step and the speedup, the gain
precomputation (linearize + discretize + Riccati) for r = 64, 3 particles,
T = 200, and the two ways of exponentiating the antisymmetric advection
matrix (benchmarks/expm_skew.cpp, compiled against the built core when a
build tree and a compiler are there). Prints a table and writes its section
of benchmarks/RESULTS.md between <!-- fluid:begin --> and <!-- fluid:end -->.

    python benchmarks/bench_fluid.py [--no-write] [--full-n 256]
    python benchmarks/bench_fluid.py --obstacles [--no-write] [--obstacle-n 128]

--obstacles measures the 2D obstacle pieces instead (Treuille thesis sec.
3.5-3.6, Table 3.2-3.3): the full step with a moving c-shape (direct
re-factorisation against PCG/IC(0)), the boundary-basis precomputation, the
reduced step with two tabulated objects against none, the coupling per
object, and the on-the-fly feedforward against a NumPy/SciPy-sparse
transcription; its section of RESULTS.md is <!-- fluid-obstacles:... -->.
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
from bench_common import best_of, host, publish, write_section

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


def coupling_kernels():
    """benchmarks/coupling_kernels.cpp compiled (-O3 -march=native, the coupling sources with it) against the built
    core and run: its printed lines, or None without a build tree or a compiler."""
    lib = sorted(glob.glob(str(HERE.parent / "build" / "*" / "*" / "libdirectable_core.a")) +
                 glob.glob(str(HERE.parent / "build" / "*" / "libdirectable_core.a")))
    eigen = glob.glob(str(pathlib.Path(np.__file__).parents[1] / "cmeel.prefix" / "include" / "eigen3"))
    if not lib or not eigen:
        return None
    exe = "/tmp/directable_coupling_kernels"
    src = HERE.parent / "cpp" / "src" / "models" / "fluid"
    cmd = ["g++", "-O3", "-march=native", "-DNDEBUG", "-DEIGEN_DONT_PARALLELIZE", "-DEIGEN_MAX_ALIGN_BYTES=32",
           "-DEIGEN_MAX_STATIC_ALIGN_BYTES=32", "-std=gnu++17", "-fopenmp", f"-I{HERE.parent / 'cpp' / 'include'}",
           f"-I{eigen[0]}", str(HERE / "coupling_kernels.cpp"), str(src / "coupling.cpp"),
           str(src / "boundary_basis.cpp"), str(src / "boundary_tools.cpp"), lib[-1], "-o", exe]
    try:
        subprocess.run(cmd, check=True, capture_output=True)
        return subprocess.run([exe], check=True, capture_output=True, text=True).stdout.strip().splitlines()
    except (OSError, subprocess.CalledProcessError):
        return None


def numpy_feedforward(grid, B, bb, pose):
    """-(S Btilde)' S R^-1 B with S assembled as a SciPy sparse matrix at the
    transformed surface points (the reference of the on-the-fly feedforward)."""
    import scipy.sparse as sp
    c, s = np.cos(pose[2]), np.sin(pose[2])
    R = np.array([[c, -s], [s, c]])
    X = bb.surface_points @ R.T + pose[:2]
    Nw = bb.surface_normals @ R.T
    h, nx, ny = grid.h, grid.nx, grid.ny
    rows, cols, vals = [], [], []

    def bilinear(fx, fy, maxi, maxj, index, weight):
        fx, fy = np.clip(fx, 0, maxi), np.clip(fy, 0, maxj)
        i0 = np.minimum(np.floor(fx).astype(int), maxi - 1)
        j0 = np.minimum(np.floor(fy).astype(int), maxj - 1)
        tx, ty = fx - i0, fy - j0
        for di, dj, w in ((0, 0, (1 - tx) * (1 - ty)), (1, 0, tx * (1 - ty)), (0, 1, (1 - tx) * ty), (1, 1, tx * ty)):
            rows.append(np.arange(len(fx)))
            cols.append(index(i0 + di, j0 + dj))
            vals.append(w * weight)

    bilinear(X[:, 0] / h, X[:, 1] / h - 0.5, nx, ny - 1, lambda i, j: j * (nx + 1) + i, Nw[:, 0])
    bilinear(X[:, 0] / h - 0.5, X[:, 1] / h, nx - 1, ny, lambda i, j: ny * (nx + 1) + j * nx + i, Nw[:, 1])
    S = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(len(X), grid.n_faces))
    return -bb.surface_speeds.T @ (S @ B)


def surface_spacing_for(shape, q, lo, hi):
    """A surface spacing (m) in [lo, hi] at which ``shape.surface`` gives q points (the closest count found)."""
    best = None
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        k = len(shape.surface(mid)[0])
        if best is None or abs(k - q) < abs(best[1] - q):
            best = (mid, k)
        if k == q:
            break
        lo, hi = (mid, hi) if k > q else (lo, mid)
    return best[0]


def feedforward_rows(g, B, red, shape, train, r, q=256):
    """The on-the-fly feedforward matrix F at q surface points (double and float32) against the NumPy/SciPy-sparse
    transcription: rows (what, value, unit, note); best-of wall and thread-CPU times."""
    import time
    import warnings
    rows = []
    spacing = surface_spacing_for(shape, q, g.h / 8, 2 * g.h)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        bb = F.BoundaryBasis.build(red, shape, train, r, surface_spacing=spacing)
    cpl = F.Coupling(red, bb)
    pose = np.array([0.5, 0.5, 0.3])
    ref = numpy_feedforward(g, B, bb, pose)
    np.testing.assert_allclose(cpl.feedforward(pose, exact=True), ref, atol=1e-9)
    err32 = np.abs(cpl.feedforward_single(pose) - ref).max() / np.abs(ref).max()
    f64 = lambda: cpl.feedforward(pose, exact=True)  # noqa: E731
    f32 = lambda: cpl.feedforward_single(pose)  # noqa: E731
    fnp = lambda: numpy_feedforward(g, B, bb, pose)  # noqa: E731
    out, pose3 = np.empty((cpl.p, r), np.float32), tuple(float(v) for v in pose)
    fout = lambda: cpl.feedforward_single(pose3, out=out)  # noqa: E731
    assert fout() is out and np.array_equal(out, cpl.feedforward_single(pose))
    calls = ((f64, 100), (f32, 100), (fout, 100), (fnp, 10))
    t64, t32, tout, tnp = (best_of(f, repeat=9, number=n) for f, n in calls)
    c64, c32, cout, cnp = (best_of(f, repeat=9, number=n, clock=time.thread_time) for f, n in calls)
    what = f"q = {bb.q}, p = {bb.p}, r = {r}"
    rows.append((f"on-the-fly feedforward matrix F, {what}, float64 (from Python)", t64 * 1e6, "us",
                 f"CPU {c64 * 1e6:.1f} us (best of 9 x 100 calls)"))
    rows.append((f"on-the-fly feedforward matrix F, {what}, float32 (from Python)", t32 * 1e6, "us",
                 f"CPU {c32 * 1e6:.1f} us; max |F32 - F| / max |F| = {err32:.1e}"))
    rows.append((f"on-the-fly feedforward matrix F, {what}, float32 into out=, pose as 3 floats (from Python)",
                 tout * 1e6, "us", f"CPU {cout * 1e6:.1f} us; target <= 60 us"))
    rows.append(("  NumPy/SciPy-sparse transcription", tnp * 1e6, "us",
                 f"CPU {cnp * 1e6:.0f} us; ratio to float64 {tnp / t64:.1f}x, to float32 into out= "
                 f"{tnp / tout:.1f}x (CPU {cnp / cout:.1f}x; target >= 5x)"))
    return rows


def feedforward_only(n, r):
    """The feedforward rows alone, on the benchmark's scene (basis from a short training run with the c-shape)."""
    from directable.experiments import fluid_boundaries as FB
    dt = 0.01
    g = F.MACGrid2D(n, n)
    shape = F.c_shape(0.12, 0.07, segments=24)
    poses, vel = FB.c_shape_path(dt, 0, 200)
    winds = fluid_forcing.random_winds(g, 20, 2 * r + 20, seed=0)
    run = F.full_run(g, 2 * r + 20, dt, winds, obstacles=([shape], poses[:2 * r + 20, None], vel[:2 * r + 20, None]))
    B = F.velocity_basis(g, run.velocities[1:], r)
    red = dr.ReducedFluid(g, B, 0.0)
    return feedforward_rows(g, B, red, shape, poses[::2], r)


def obstacle_rows(n, r):
    """The 2D obstacle measurements: rows (what, value, unit, note)."""
    import time
    import warnings
    from directable.experiments import fluid_boundaries as FB
    rows, dt = [], 0.01
    g = F.MACGrid2D(n, n)
    shape = F.c_shape(0.12, 0.07, segments=24)
    poses, vel = FB.c_shape_path(dt, 0, 200)
    for solver in ("direct", "pcg"):
        sim = F.FluidSim2D(g, 0.0, dt, pressure_solver=solver)
        sim.velocity = g.project(np.random.default_rng(1).standard_normal(g.n_faces))
        k = iter(range(10 ** 6))

        def step():
            i = next(k) % len(poses)
            sim.step(obstacles=[F.Obstacle(shape, poses[i], vel[i])])
        t = best_of(step, repeat=3, number=3)
        note = "paper 107 ms (full CPU step, 128^2)" if solver == "direct" else f"{sim.pcg_iterations} iterations, tol 1e-12"
        rows.append((f"full step {n}x{n}, moving c-shape, pressure {solver}", t * 1e3, "ms", note))
    t_full = min(r_[1] for r_ in rows) * 1e-3
    # basis and boundary basis from a training run with the c-shape
    winds = fluid_forcing.random_winds(g, 20, 2 * r + 20, seed=0)
    run = F.full_run(g, 2 * r + 20, dt, winds, obstacles=([shape], poses[:2 * r + 20, None], vel[:2 * r + 20, None]))
    B = F.velocity_basis(g, run.velocities[1:], r)
    red = dr.ReducedFluid(g, B, 0.0)
    train = poses[::2]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        t0 = time.perf_counter()
        bb = F.BoundaryBasis.build(red, shape, train, r)
        t_bb = time.perf_counter() - t0
    rows.append((f"boundary basis: {len(train)} poses, p = {bb.p}, q = {bb.q}, local {bb.local_grid.nx}^2",
                 t_bb, "s", "Table 3.3: 2 h (2D Boundaries)"))
    axes = (np.arange(0.2, 0.8 + 1e-9, 2 * g.h), np.arange(0.3, 0.7 + 1e-9, 2 * g.h), np.linspace(-0.5, 0.5, 3))
    t0 = time.perf_counter()
    cpl = F.Coupling(red, bb, pose_table=axes, precompute="both")
    t_tab = time.perf_counter() - t0
    rows.append((f"coupling tables: {cpl.table_nodes} poses (2 voxels apart, 3 angles)", t_tab, "s",
                 f"{cpl.table_bytes / 1e6:.0f} MB"))
    cpl32 = F.Coupling(red, bb, pose_table=axes, precompute="both", table_dtype="float32")
    z = B.T @ run.velocities[-1]
    P2 = np.array([[0.35, 0.5, 0.1], [0.65, 0.45, -0.2]])
    V2 = np.array([[0.3, 0.0, 0.5], [-0.2, 0.1, 0.0]])
    w = np.zeros(r)
    e0 = np.zeros((0, 3))
    fb_only = F.Coupling(red, bb, pose_table=axes, precompute="feedback")

    def step_time(couplings):
        """(best wall time, thread CPU time per step over the same calls) of the scene step from Python."""
        sc = F.ReducedScene(red, couplings)
        d = sc.create_data()
        P, V = (P2, V2) if couplings else (e0, e0)
        c0 = time.thread_time()
        t = best_of(lambda: sc.step(z, w, dt, P, V, d), repeat=20, number=100)
        return t, (time.thread_time() - c0) / 2000
    (t0_, c0_), (t2_, c2_), (tf_, cf_) = step_time([]), step_time([cpl, cpl]), step_time([fb_only, fb_only])
    t32_, c32_ = step_time([cpl32, cpl32])
    rows.append((f"reduced step r = {r}, no objects (from Python)", t0_ * 1e3, "ms",
                 f"CPU {c0_ * 1e3:.3f} ms; issue 4: 0.24 ms"))
    rows.append((f"reduced step r = {r}, two objects, tabulated coupling", t2_ * 1e3, "ms",
                 f"CPU {c2_ * 1e3:.3f} ms; target <= 0.35 ms"))
    rows.append(("coupling per object, tabulated (step difference / 2)", (t2_ - t0_) / 2 * 1e6, "us",
                 f"CPU {(c2_ - c0_) / 2 * 1e6:.1f} us; target <= 10 us"))
    rows.append((f"reduced step r = {r}, two objects, float32 tables ({cpl32.table_bytes / 1e6:.0f} MB)", t32_ * 1e3,
                 "ms", f"CPU {c32_ * 1e3:.3f} ms"))
    rows.append(("coupling per object, float32 tables (step difference / 2)", (t32_ - t0_) / 2 * 1e6, "us",
                 f"CPU {(c32_ - c0_) / 2 * 1e6:.1f} us; target <= 10 us"))
    rows.append((f"reduced step r = {r}, two objects, feedback tabulated, feedforward on the fly (thesis)",
                 tf_ * 1e3, "ms", f"CPU {cf_ * 1e3:.3f} ms"))
    rows.append(("  feedforward on the fly in the step, per object (step difference / 2)", (tf_ - t2_) / 2 * 1e6,
                 "us", f"CPU {(cf_ - c2_) / 2 * 1e6:.1f} us: F z without forming F"))
    rows.append(("speed-up: full step / reduced step with two objects", t_full / t2_, "x", "paper 6x (2D Boundaries)"))
    rows += feedforward_rows(g, B, red, shape, train, r)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-write", action="store_true", help="do not update benchmarks/RESULTS.md")
    ap.add_argument("--full-n", type=int, default=256, help="grid size of the full-step measurement")
    ap.add_argument("--r", type=int, default=64)
    ap.add_argument("--obstacles", action="store_true", help="measure the 2D obstacle pieces instead")
    ap.add_argument("--obstacle-n", type=int, default=128, help="grid size of the obstacle measurements")
    ap.add_argument("--feedforward", action="store_true",
                    help="only the on-the-fly feedforward matrix at q = 256 (printed, not written)")
    args = ap.parse_args(argv)
    r, dt = args.r, 0.01
    rows = []
    if args.feedforward:
        import os
        rows = feedforward_only(args.obstacle_n, r)
        print("\n".join(f"| {a} | {v:.4g} | {u} | {c} |" for a, v, u, c in rows))
        print(f"load average {os.getloadavg()}")
        return
    if args.obstacles:
        import os
        import time
        rows = obstacle_rows(args.obstacle_n, r)
        table = "| measurement | value | unit | target / note |\n|---|---:|---|---|\n" + "\n".join(
            f"| {a} | {v:.4g} | {u} | {c} |" for a, v, u, c in rows)
        kernels = coupling_kernels()
        if kernels:
            table += "\n\nCoupling kernels (benchmarks/coupling_kernels.cpp, -march=native, CPU time):\n\n" + "\n".join(
                f"    {line}" for line in kernels)
        print(table)
        if not args.no_write:
            begin, end = "<!-- fluid-obstacles:begin -->", "<!-- fluid-obstacles:end -->"
            load = os.getloadavg()[0]
            write_section(f"{begin}\n## Reduced fluid with obstacles, 2D (issue 18)\n\n"
                          f"`python benchmarks/bench_fluid.py --obstacles` on {host()} ({time.strftime('%Y-%m-%d')}), "
                          f"threads = {dr._core.max_threads()}, load average {load:.1f} at the end (shared machine: "
                          f"times are upper bounds)\n\n{table}\n{end}", begin, end)
        return

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
