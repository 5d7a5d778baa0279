#!/usr/bin/env python
"""Benchmarks of directable's LQR precomputation and runtime controller.

    python benchmarks/bench_lqr.py [--quick] [--write]

Prints markdown tables; ``--write`` also writes ``benchmarks/RESULTS.md``
(machine, versions, command, results against the issue's targets).

Every time is the best of several repeats in this one process (the machine
is shared and noisy; the minimum is the least disturbed run). Comparisons
are ratios of times measured back to back in the same process.

Sections
  1/2  gain precomputation (discretize + Riccati sweep) vs a straightforward
       NumPy/SciPy version of the same algorithm (tests/reference/lqr.py), results
       checked first; directable on 1 thread vs all cores
  3    Riccati sweep alone vs NumPy, and vs the flop limit at the measured
       single-thread DGEMM rate
  4    re-tuning (sweep only) n = 48, T = 1000
  5    one control step inside the C++ simulation loop, n = 128, s = 64
  6    one control call from Python
  7    other libraries: python-control / SciPy DARE (stationary problem),
       Crocoddyl's DDP backward pass on the same time-varying LQ problem
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy
import scipy.linalg as sla

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_common import best, best_cpu, per_call, write_section  # noqa: E402
from reference import lqr as ref  # noqa: E402  (tests/reference, on the path through bench_common)
from reference.darex import residual as dare_residual  # noqa: E402

import directable  # noqa: E402
from directable import _core, lqr, models, sim  # noqa: E402

_SO_MTIME = Path(_core.__file__).stat().st_mtime  # to detect a rebuild during the run

try:
    from threadpoolctl import threadpool_info, threadpool_limits
except ImportError:  # pragma: no cover - optional
    threadpool_limits = None
    threadpool_info = None


# ----------------------------------------------------------------------------- helpers


def blas_threads(k):
    """Context limiting NumPy/SciPy's BLAS to k threads (None: leave as is)."""
    if k is None or threadpool_limits is None:
        return contextlib.nullcontext()
    return threadpool_limits(limits=k, user_api="blas")


def sweep_flops(n: int, s: int) -> float:
    """Flops of one Riccati step as counted in RESULTS.md (general dense products).

    P A 2n^3, A'(PA) 2n^3, P B 2n^2 s, B'(PB) 2ns^2, B'(PA) 2sn^2, G'K 2n^2 s,
    Cholesky s^3/3, two triangular solves with n right-hand sides 2s^2 n.
    """
    return 4.0 * n**3 + 6.0 * n**2 * s + 4.0 * n * s**2 + s**3 / 3.0


def sweep_flops_sqrt(n: int, s: int) -> float:
    """Flops of one step of directable's square-root sweep.

    Cholesky of P n^3/3, L'[B A] n^2 (n+s), lower half of U'U n (n+s)^2,
    Cholesky of H s^3/3, two triangular solves with n right-hand sides
    2 s^2 n, lower half of the rank-s update Y'Y s n^2.
    """
    return n**3 / 3.0 + n**2 * (n + s) + n * (n + s) ** 2 + s**3 / 3.0 + 2.0 * s**2 * n + s * n**2


def relerr(a, b):
    a = np.asarray(a)
    b = np.asarray(b)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


def fmt_t(t):
    if t is None or not np.isfinite(t):
        return "—"
    if t >= 1.0:
        return f"{t:.2f} s"
    if t >= 1e-3:
        return f"{t * 1e3:.1f} ms"
    if t >= 1e-6:
        return f"{t * 1e6:.2f} µs"
    return f"{t * 1e9:.0f} ns"


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def problem(n, T, seed=0, dt=0.01):
    """A time-varying damped mass-spring system, n = 2m states, s = m controls.

    A_i = [[0, I], [-K_i, -C_i]] with K_i = K0 (1 + 0.3 sin phi_i) + 20 K1 (1 + cos phi_i)
    (K0 SPD with eigenvalues 1..400 in a random basis, K1 = W W' random PSD),
    C_i = 0.02 K_i + 0.1 I (Rayleigh damping), phi_i = 2 pi i / T; B = [0; I].
    Cost Q = I, R = 0.01 I, Q_final = 10 I; dt = 0.01.
    """
    m = n // 2
    rng = np.random.default_rng(seed)
    U, _ = np.linalg.qr(rng.standard_normal((m, m)))
    K0 = (U * np.geomspace(1.0, 400.0, m)) @ U.T
    W = rng.standard_normal((m, m)) / np.sqrt(m)
    K1 = W @ W.T
    A = np.zeros((T, n, n))
    I = np.eye(m)
    for i, ph in enumerate(np.linspace(0.0, 2 * np.pi, T, endpoint=False)):
        Ki = K0 * (1 + 0.3 * np.sin(ph)) + 20.0 * K1 * (1 + np.cos(ph))
        A[i, :m, m:] = I
        A[i, m:, :m] = -Ki
        A[i, m:, m:] = -(0.02 * Ki + 0.1 * I)
    B = np.zeros((n, m))
    B[m:] = I
    return A, B, dt, np.eye(n), 0.01 * np.eye(m), 10.0 * np.eye(n)


def pade_info(A0, B, dt, Q):
    """Pade degree / squarings the Al-Mohy-Higham choice makes for step 0's Van Loan matrix."""
    n, s = B.shape
    p = n + s
    F = np.zeros((p, p))
    F[:n, :n] = A0
    F[:n, n:] = B
    M = np.zeros((2 * p, 2 * p))
    M[:p, :p] = -F.T
    M[:n, p:p + n] = Q
    M[p:, p:] = F
    try:
        _, _, degree, squarings = _core.expm_bordered(M * dt, np.zeros((2 * p, 0)))
        return f"{degree}/{squarings}"
    except Exception:  # noqa: BLE001 - informative only
        return "?"


# ----------------------------------------------------------------------------- machine


def machine_info():
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        fam = [ln for ln in Path("/proc/cpuinfo").read_text().splitlines() if ln.startswith(("cpu family", "model\t"))]
        fam = ", ".join(ln.split(":")[0].strip() + " " + ln.split(":")[1].strip() for ln in fam[:2])
    except OSError:
        fam = ""
    blas = []
    if threadpool_info is not None:
        for d in threadpool_info():
            if d.get("user_api") == "openmp":
                blas.append(f"OpenMP {Path(d.get('filepath', '')).name} ({d.get('num_threads')} threads)")
            else:
                blas.append(f"{d.get('internal_api')} {d.get('version')} ({Path(d.get('filepath', '')).name}, "
                            f"{d.get('num_threads')} threads, {d.get('architecture')})")
    info = {
        "cpu": f"{cpu} ({fam})" if fam else cpu,
        "cores": os.cpu_count(),
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "directable": getattr(directable, "__version__", "?"),
        "build_info": _core.build_info(),
        "blas": blas,
        "omp": os.environ.get("OMP_NUM_THREADS", "unset"),
    }
    try:
        g = subprocess.run(["git", "-C", str(HERE.parent), "describe", "--always", "--dirty"], capture_output=True,
                           text=True).stdout.strip()
        info["git"] = f"commit {g}" if g else "unknown"
    except OSError:
        info["git"] = "unknown"
    so = Path(_core.__file__)
    info["so"] = f"`{so.name}` built {datetime.datetime.fromtimestamp(so.stat().st_mtime).strftime('%Y-%m-%d %H:%M')}"
    for mod in ("control", "slycot", "crocoddyl", "threadpoolctl"):
        try:
            info[mod] = __import__(mod).__version__
        except Exception as exc:  # noqa: BLE001
            info[mod] = f"not available ({type(exc).__name__})"
    return info


# ----------------------------------------------------------------------------- GEMM rates


def numpy_gemm_rate(n, threads=1, seconds=0.25):
    """GFLOP/s of NumPy's a @ b (n x n) with `threads` BLAS threads: best batch, about `seconds` spent."""
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    c = np.empty((n, n))
    batch = max(1, int(0.005 * 30e9 / (2 * n**3)))
    best_t, spent, k = float("inf"), 0.0, 0
    with blas_threads(threads):
        np.matmul(a, b, out=c)
        while k < 3 or (spent < seconds and k < 50):
            t0 = time.perf_counter()
            for _ in range(batch):
                np.matmul(a, b, out=c)
            dt = time.perf_counter() - t0
            spent += dt
            k += 1
            best_t = min(best_t, dt / batch)
    return 2.0 * n**3 / best_t * 1e-9


_EIGEN_CACHE = {}


def eigen_gemm_rates(sizes):
    """Memoized _eigen_gemm_rates (compiling costs seconds)."""
    key = tuple(sorted(set(sizes)))
    for k, v in _EIGEN_CACHE.items():
        if set(key) <= set(k):
            return v
    _EIGEN_CACHE[key] = _eigen_gemm_rates(key)
    return _EIGEN_CACHE[key]


def _eigen_gemm_rates(sizes):
    """Eigen's n x n GEMM rate from eigen_gemm.cpp compiled with directable's flags.

    Returns {"serial": {n: (colmajor, rowmajor)}, "parallel": {...}} in GFLOP/s
    (serial: -DEIGEN_DONT_PARALLELIZE; parallel: -fopenmp, Eigen's own GEMM
    threads on all cores), or an error string.
    """
    cxx = shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++")
    if cxx is None:
        return "no C++ compiler found"
    try:
        prefix = subprocess.run([sys.executable, "-m", "cmeel", "cmake"], capture_output=True, text=True,
                                check=True).stdout.strip()
        inc = Path(prefix) / "include" / "eigen3"
        if not inc.is_dir():
            raise FileNotFoundError(inc)
    except Exception as exc:  # noqa: BLE001
        return f"Eigen headers not found ({exc})"
    import hashlib

    src = (HERE / "eigen_gemm.cpp").read_text()
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "directable-bench"
    out = {}
    for variant, flags in (("serial", ["-DEIGEN_DONT_PARALLELIZE"]), ("parallel", ["-fopenmp"])):
        cmd = [cxx, "-O3", "-march=native", "-DNDEBUG", "-std=c++17", *flags, f"-I{inc}"]
        key = hashlib.sha1((src + " ".join(cmd) + str(Path(cxx).stat().st_mtime)).encode()).hexdigest()[:12]
        exe = cache / f"eigen_gemm_{variant}_{key}"
        if not exe.exists():  # compiling Eigen's GEMM takes seconds: keep the binary
            cache.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory() as tmp:
                tmp_exe = Path(tmp) / exe.name
                r = subprocess.run(cmd + [str(HERE / "eigen_gemm.cpp"), "-o", str(tmp_exe)], capture_output=True,
                                   text=True)
                if r.returncode:
                    return "compile failed: " + r.stderr[-300:]
                shutil.move(str(tmp_exe), exe)
        r = subprocess.run([str(exe)] + [str(n) for n in sizes], capture_output=True, text=True)
        out[variant] = {}
        for line in r.stdout.split("\n"):
            if line.strip():
                n, col, row = line.split()
                out[variant][int(n)] = (float(col), float(row))
    return out


# ----------------------------------------------------------------------------- one-core worker


def directable_times(n, T, reps):
    """directable's precomputation times (and cores kept busy) for the test problem (n, T)."""
    A, B, dt, Q, R, Qf = problem(n, T)
    t_all, c_all = best_cpu(lambda: lqr.solve_continuous(A, B, dt, Q, R, Qf), reps)
    t_disc, c_disc = best_cpu(lambda: lqr.discretize(A, B, dt, Q, R), reps)
    disc = lqr.discretize(A, B, dt, Q, R)
    t_sweep, c_sweep = best_cpu(lambda: lqr.solve_discrete(disc.Phi, disc.Gamma, disc.Q, disc.R, Qf, N=disc.N), reps)
    return dict(t_all=t_all, c_all=c_all, t_disc=t_disc, c_disc=c_disc, t_sweep=t_sweep, c_sweep=c_sweep)


def retune_problem():
    n, T = 48, 1000
    A, B, dt, Q, R, Qf = problem(n, T, seed=3)
    return n, T, dt, lqr.discretize(A, B, dt, Q, R), Qf


def best_rounds(fn, reps, rounds):
    """best_cpu over `rounds` rounds a second apart: (best time, its cores busy, the rounds' best times).
    On this shared machine slow stretches of a few seconds come and go; one round can fall into one."""
    res = []
    for k in range(rounds):
        if k:
            time.sleep(1.0)
        res.append(best_cpu(fn, reps))
    t, cores = min(res)
    return t, cores, [r[0] for r in res]


def retune_time(reps, rounds=1):
    _, _, _, disc, Qf = retune_problem()
    return best_rounds(lambda: lqr.retune(disc, Qf, alpha_Q=2.0, alpha_R=0.5), reps, rounds)


# Issue 23's recorded references: µs per stage, N = 500 stages, s = n/2, time-varying A_i, B_i, constant Q, R,
# one core pinned, CPU-time minima over 9 interleaved rounds, measured on an AMD EPYC (Zen 4) machine, not here.
ISSUE23_MACHINE = "AMD EPYC Zen 4 (issue 23's machine, recorded there)"
ISSUE23_REFERENCE = {  # n: (HPIPM factorization alone, HPIPM + K of every stage, Crocoddyl backwardPass)
    16: (0.88, 1.20, 4.15), 48: (17.9, 26.1, 67.7), 64: (35.9, 52.9, 144.0), 128: (219.0, 321.0, 997.0),
}


# HPIPM re-measured on this project's machine kind (Intel Xeon, cpu family 6 model 207, AVX-512): HPIPM and
# BLASFEO built from source outside the repository (BLASFEO X64_INTEL_HASWELL, LA=HIGH_PERFORMANCE; HPIPM
# TARGET=AVX), a C driver timing d_ocp_qp_fact_kkt_step (ric_alg = 1) and, separately, the factorization followed
# by d_ocp_qp_ipm_get_ric_K on every stage; same family (N = 500, s as given, A_i = I + 0.1/sqrt(n) randn,
# B_i = randn/sqrt(n), Q = R = I), pinned with taskset -c 0, CPU-time minima over interleaved rounds, on a
# machine shared with other jobs (load in THIS_MACHINE_HPIPM_NOTE).
THIS_MACHINE = "Intel Xeon, cpu family 6 model 207 (this project's machine kind, re-measured 2026-11-27)"
THIS_MACHINE_HPIPM = {  # (n, s): (factorization alone, factorization + K of every stage), µs per stage
    (16, 8): (1.56, 2.11),
    (48, 24): (23.1, 42.5),
    (64, 32): (46.9, 87.3),
    (128, 64): (314, 494),
    (256, 128): (2.33e+03, 3.88e+03),
    (48, 1): (14.1, 15.5),
    (48, 4): (14.3, 16.4),
    (128, 4): (154, 159),
}
THIS_MACHINE_HPIPM_NOTE = (
    "2026-11-27 03:40-03:53 UTC, 5 rounds (each the best of 2 calls), 1-minute load average 22.05 at "
    "start, 12.0 at end (the machine was heavily loaded: every time here, HPIPM's and directable's alike,"
    " is inflated by sharing the core's caches, so compare ratios, not absolute times)")


def family_problem(n, s, N=500, seed=7):
    """Issue 23's problem family: N stages, time-varying A_i (n, n) near the identity, B_i (n, s), Q = I, R = I."""
    rng = np.random.default_rng(seed)
    A = np.eye(n) + 0.1 / np.sqrt(n) * rng.standard_normal((N, n, n))
    B = rng.standard_normal((N, n, s)) / np.sqrt(n)
    return A, B, np.eye(n), np.eye(s), np.eye(n)


def family_times(cases, rounds):
    """Per-stage CPU and wall times (s) of lqr.solve_discrete on each (n, s) of `cases`: minima over interleaved
    rounds, as two lists."""
    probs = [family_problem(n, s) for n, s in cases]
    t = [float("inf")] * len(cases)
    w = [float("inf")] * len(cases)
    for _ in range(rounds):
        for k, (A, B, Q, R, Qf) in enumerate(probs):
            c0, w0 = time.process_time(), time.perf_counter()
            lqr.solve_discrete(A, B, Q, R, Qf)
            t[k] = min(t[k], (time.process_time() - c0) / A.shape[0])
            w[k] = min(w[k], (time.perf_counter() - w0) / A.shape[0])
    return t, w


def worker(tasks):
    """Runs in a subprocess (see one_core); prints the results as JSON."""
    out = []
    for task in tasks:
        if task[0] == "precompute":
            out.append(directable_times(*task[1:]))
        elif task[0] == "retune":
            out.append(retune_time(*task[1:]))
        elif task[0] == "family":
            out.append(family_times(*task[1:]))
    print("RESULT " + json.dumps(out))


def one_core(tasks, threads=1):
    """Runs `tasks` in a fresh process with OMP_NUM_THREADS=threads (and one BLAS thread); threads=None leaves
    OMP_NUM_THREADS as it is (the default team).

    directable's threads=1 only limits the per-step loop; Eigen's GEMMs may
    still open OpenMP teams of their own. OMP_NUM_THREADS=1 gives the
    true one-core time.
    """
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    r = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(tasks)], env=env,
                       capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError("one-core worker failed: " + r.stderr[-2000:])


# ----------------------------------------------------------------------------- sections


class Bench:
    def __init__(self, quick):
        self.quick = quick
        self.T = 40 if quick else 500
        self.sizes = [16, 48, 64, 128]
        self.reps = 2 if quick else 5
        self.np_reps = 1 if quick else 2
        # NumPy discretization cost per step grows as (2(n+s))^3: above this
        # size it is timed on an evenly strided subset of steps and scaled.
        self.np_subset = 8 if quick else 100
        self.summary = []  # (benchmark, directable, baseline, result, target, met)
        self.sections = []  # (title, markdown)
        self.notes = []
        self.store = {}

    def add(self, title, text):
        self.sections.append((title, text))
        print(f"\n## {title}\n\n{text}\n", flush=True)

    # -- 1/2: full precomputation ------------------------------------------------
    def precompute(self):
        T = self.T
        # True one-core directable times (OMP_NUM_THREADS=1), in a subprocess, first.
        single = one_core([["precompute", n, T, self.reps] for n in self.sizes]
                          + [["retune", self.reps + 2, 2 if self.quick else 5]])
        self.store["retune_1core"] = single[-1]
        rows, chk_rows = [], []
        for n, one in zip(self.sizes, single):
            s = n // 2
            A, B, dt, Q, R, Qf = problem(n, T)
            pade = pade_info(A[0], B, dt, Q)
            # Correctness: the full NumPy pipeline vs directable on a short horizon.
            Tc = min(T, 40 if n <= 64 else 12)
            sol_c = lqr.solve_continuous(A[:Tc], B, dt, Q, R, Qf)
            Kc, Pc, _ = ref.solve_continuous_scipy(A[:Tc], B, dt, Q, R, Qf)
            errK_full, errP_full = relerr(sol_c.K, Kc), relerr(sol_c.P, Pc)

            # directable as installed: threads=0 (all cores) and the threads=1 argument.
            d = directable_times(n, T, self.reps)
            t_all = d["t_all"]
            # the threads=1 argument: the calling thread only, as the one-core run (timed the same way)
            t_thr1 = best(lambda: lqr.solve_continuous(A, B, dt, Q, R, Qf, threads=1), 2 if n >= 128 else 3,
                          min_time=0.0)
            disc = lqr.discretize(A, B, dt, Q, R)

            # NumPy/SciPy: discretization on all steps (or a strided subset, scaled), sweep on all steps.
            idx = np.arange(T) if (n <= 48 or T <= self.np_subset) else \
                np.unique(np.linspace(0, T - 1, self.np_subset).round().astype(int))
            npd = ref.van_loan_scipy(A[idx], B, Q, R, dt)
            errD = max(relerr(x, np.asarray(y)[idx]) for x, y in
                       zip(npd, (disc.Phi, disc.Gamma, disc.Q, disc.N, disc.R)))
            Phi, Gam, Qd, Nd, Rd = (np.array(x) for x in (disc.Phi, disc.Gamma, disc.Q, disc.N, disc.R))
            Kn, Pn = ref.riccati_sweep(Phi, Gam, Qd, Rd, Qf, Nd)
            sol_d = lqr.solve_discrete(Phi, Gam, Qd, Rd, Qf, N=Nd)
            errK_sweep = relerr(sol_d.K, Kn)
            np_t = {}
            np_probe = False
            for th in (1, None):
                with blas_threads(th):
                    t0 = time.perf_counter()
                    if th is None:
                        # Multi-threaded OpenBLAS can collapse when the other core is busy (10x and worse):
                        # probe a few steps first and time everything only when the probe is not far slower
                        # than one thread; otherwise report the probe, scaled (marked "probe").
                        pidx = idx[np.linspace(0, len(idx) - 1, min(5, len(idx))).round().astype(int)]
                        tp = best(lambda: ref.van_loan_scipy(A[pidx], B, Q, R, dt), 1, warmup=False,
                                  min_time=0) / len(pidx)
                        Tp = min(T, 50)
                        sp = best(lambda: ref.riccati_sweep(Phi[:Tp], Gam[:Tp], Qd[:Tp], Rd[:Tp], Qf, Nd[:Tp]), 1,
                                  warmup=False, min_time=0) / Tp
                        if tp * T > 2 * np_t[1][0]:
                            td, np_probe = tp * T, True
                        else:
                            td = best(lambda: ref.van_loan_scipy(A[idx], B, Q, R, dt), self.np_reps,
                                      warmup=False) * T / len(idx)
                        if sp * T > 2 * np_t[1][1]:
                            ts, np_probe = sp * T, True
                        else:
                            ts = best(lambda: ref.riccati_sweep(Phi, Gam, Qd, Rd, Qf, Nd), self.np_reps, warmup=False)
                    else:
                        td = best(lambda: ref.van_loan_scipy(A[idx], B, Q, R, dt), self.np_reps,
                                  warmup=not self.quick) * T / len(idx)
                        ts = best(lambda: ref.riccati_sweep(Phi, Gam, Qd, Rd, Qf, Nd), self.np_reps, warmup=not self.quick)
                    print(f"    NumPy BLAS threads={th or 'all'}: {time.perf_counter() - t0:.1f} s spent", flush=True)
                np_t[th] = (td, ts)
            np_all, np_one = sum(np_t[None]), sum(np_t[1])
            np_best = min(np_all, np_one)
            self.store[n] = dict(d=d, one=one, np_sweep_1=np_t[1][1], np_sweep_all=np_t[None][1], T=T,
                                 t_thr1=t_thr1)
            rows.append([n, s, T, pade, f"**{fmt_t(t_all)}**", fmt_t(one["t_all"]), fmt_t(t_thr1),
                         f"{one['t_all'] / t_all:.2f}×",
                         f"{fmt_t(d['t_disc'])} ({d['c_disc']:.1f})", f"{fmt_t(d['t_sweep'])} ({d['c_sweep']:.1f})",
                         fmt_t(np_all) + (" (probe)" if np_probe else ""), fmt_t(np_one),
                         (f"{len(idx)}/{T}" if len(idx) < T else "all"),
                         f"**{np_best / t_all:.1f}×**", f"{np_one / one['t_all']:.1f}×"])
            chk_rows.append([n, Tc, f"{errK_full:.1e}", f"{errP_full:.1e}", f"{errD:.1e}", f"{errK_sweep:.1e}"])
            target = {16: 10.0, 128: 2.0}.get(n)
            self.summary.append([
                f"precompute (discretize + sweep) n={n}, s={s}, T={T}", fmt_t(t_all),
                f"NumPy/SciPy {fmt_t(np_best)}", f"{np_best / t_all:.1f}× faster",
                f"≥ {target:g}×" if target else "—",
                ("yes" if np_best / t_all >= target else "**no**") if target else "—"])
            print(f"  precompute n={n}: directable {fmt_t(t_all)} (1 core {fmt_t(one['t_all'])}, threads=1 "
                  f"{fmt_t(t_thr1)}), NumPy {fmt_t(np_all)} / 1 thread {fmt_t(np_one)}", flush=True)
            for x in (errK_full, errP_full, errD, errK_sweep):
                if not x < 1e-8:
                    self.notes.append(f"**Result mismatch at n={n}**: relative error {x:.2e} > 1e-8.")
        slow = [f"n={n}: {self.store[n]['t_thr1'] / self.store[n]['one']['t_all']:.1f}×" for n in self.sizes
                if self.store[n]["t_thr1"] > 1.5 * self.store[n]["one"]["t_all"]]
        if slow:
            self.notes.append(
                "`solve_continuous(..., threads=1)` was more than 1.5× slower than a one-core run "
                "(OMP_NUM_THREADS=1) in this run: " + ", ".join(slow) + ". Both run the same code on the "
                "calling thread; a gap this large means load from other jobs during one of the two.")
        worse = [f"n={n}" for n in self.sizes if self.store[n]["one"]["t_all"] < self.store[n]["d"]["t_all"]]
        if worse:
            self.notes.append("directable on all cores was slower than on one core (OMP_NUM_THREADS=1) for "
                              + ", ".join(worse) + " in this run (load from other jobs on the 2 cores makes every "
                              "multi-threaded time here fragile: a thread that loses its core stalls the others).")
        head = ["n", "s", "T", "Padé degree/squarings (Van Loan matrix, step 0)", "directable (all cores)",
                "directable 1 core (OMP_NUM_THREADS=1)", "directable threads=1 argument", "parallel speed-up",
                "of which discretize (cores busy)", "of which sweep (cores busy)", "NumPy/SciPy (BLAS all cores)",
                "NumPy/SciPy (BLAS 1 thread)", "NumPy disc. steps timed", "speed-up vs best NumPy",
                "1 core vs NumPy 1 thread"]
        self.add("1–2. Gain precomputation: directable vs NumPy/SciPy (same algorithm)",
                 md_table(head, rows) + "\n\n"
                 "directable's time is `lqr.solve_continuous`, which runs the discretization and the sweep as one "
                 "pipeline (steps discretized from the last one down, each swept as soon as it is ready); the "
                 "'of which' columns time the two calls separately. "
                 "'cores busy' is CPU time / wall time of the best run. 'parallel speed-up' = 1 core / all cores. "
                 "The NumPy discretization is timed on all steps, or on an evenly strided subset of steps "
                 "scaled to T (its steps are independent and alike); its sweep always on all T steps. "
                 "'speed-up vs best NumPy' compares with the faster of the two BLAS settings. "
                 "'(probe)': multi-threaded OpenBLAS was more than 2× slower than one thread on a probe of 5 "
                 "discretization steps / 50 sweep steps, so only the probe was timed and scaled.\n\n"
                 "Results checked before timing (max relative difference |a−b|_max/|b|_max):\n\n" + md_table(
                     ["n", "T (full pipeline check)", "K full pipeline", "P full pipeline",
                      "Phi, Gamma, Q, N, R (timed steps)", "K sweep on the same discretization"], chk_rows))

    # -- 3: sweep vs flop limit --------------------------------------------------
    def sweep(self):
        sizes = self.sizes
        np_rate1 = {n: numpy_gemm_rate(n, 1) for n in sizes}
        np_rateA = {n: numpy_gemm_rate(n, None) for n in sizes}
        eig = eigen_gemm_rates(sorted(set(sizes) | {48}))
        if isinstance(eig, str):
            self.notes.append(f"Eigen GEMM rate not measured: {eig}")
            eig = {"serial": {}, "parallel": {}}
        rows = []
        for n in sizes:
            s = n // 2
            st = self.store[n]
            T = st["T"]
            flops = T * sweep_flops(n, s)
            e1 = max(eig["serial"].get(n, (0.0, 0.0)))
            eA = max(eig["parallel"].get(n, (0.0, 0.0)))
            r1 = max(np_rate1[n], e1)
            rA = max(np_rateA[n], eA, r1)
            t_def, c_def = st["d"]["t_sweep"], st["d"]["c_sweep"]
            t_one = st["one"]["t_sweep"]
            # the installed sweep is judged against the rate of as many cores as it keeps busy
            r_match = rA if c_def > 1.2 else r1
            lim_match = flops / (r_match * 1e9)
            lim1 = flops / (r1 * 1e9)
            rows.append([n, s, T, f"{sweep_flops(n, s) / 1e6:.3f}",
                         f"{fmt_t(t_def)} ({c_def:.1f})", fmt_t(t_one),
                         f"{flops / t_def * 1e-9:.1f} / {flops / t_one * 1e-9:.1f}",
                         fmt_t(st["np_sweep_1"]), fmt_t(st["np_sweep_all"]),
                         f"{min(st['np_sweep_1'], st['np_sweep_all']) / t_def:.1f}×",
                         f"{np_rate1[n]:.1f} / {np_rateA[n]:.1f}",
                         (f"{e1:.1f} / {eA:.1f}" if e1 else "—"),
                         f"**{t_def / lim_match:.2f}×** (at {r_match:.1f})", f"**{t_one / lim1:.2f}×** (at {r1:.1f})",
                         f"{sweep_flops_sqrt(n, s) / 1e6:.3f}",
                         f"{t_one / (T * sweep_flops_sqrt(n, s) / (r1 * 1e9)):.2f}×"])
            if n == 128:
                self.summary.append([f"Riccati sweep alone n=128, s=64, T={T}, as installed", fmt_t(t_def),
                                     f"flop limit {fmt_t(lim_match)} at {r_match:.1f} GFLOP/s "
                                     f"({'all cores' if c_def > 1.2 else '1 core'}, as busy as the sweep)",
                                     f"{t_def / lim_match:.2f}× the limit", "≤ 1.5×",
                                     "yes" if t_def / lim_match <= 1.5 else "**no**"])
                self.summary.append([f"Riccati sweep alone n=128, s=64, T={T}, 1 core (OMP_NUM_THREADS=1)",
                                     fmt_t(t_one), f"flop limit {fmt_t(lim1)} at {r1:.1f} GFLOP/s (1 core)",
                                     f"{t_one / lim1:.2f}× the limit", "≤ 1.5×",
                                     "yes" if t_one / lim1 <= 1.5 else "**no**"])
        slower = [f"n={n} ({self.store[n]['d']['t_sweep'] / self.store[n]['one']['t_sweep']:.1f}×)" for n in sizes
                  if self.store[n]["d"]["t_sweep"] > 1.1 * self.store[n]["one"]["t_sweep"]]
        if slower:
            self.notes.append("The installed Riccati sweep was slower than the same sweep on one core "
                              "(OMP_NUM_THREADS=1, another process) at " + ", ".join(slower) + ". Below n = 96 "
                              "both run the same one-thread code, so the gap is load from other jobs on the "
                              "shared cores during one of the two runs. From n = 96 on the sweep times a team "
                              "against one thread as it goes and keeps the faster.")
        head = ["n", "s", "T", "MFLOP/step", "directable sweep as installed (cores busy)",
                "directable sweep, 1 core", "GFLOP/s reached (installed / 1 core)", "NumPy sweep (BLAS 1 thr)",
                "NumPy sweep (BLAS all)", "installed vs best NumPy", "OpenBLAS n×n dgemm GFLOP/s (1 thr / all)",
                "Eigen n×n GEMM GFLOP/s (1 thr / all)", "installed sweep / flop limit (GFLOP/s used)",
                "1-core sweep / 1-core flop limit", "MFLOP/step directable performs",
                "1-core sweep / limit of the flops it performs"]
        self.add("3. Riccati sweep alone vs NumPy and vs the flop limit",
                 md_table(head, rows) + "\n\nFlops per step (general dense products, no symmetry used): "
                 "P·A 2n³, A'(PA) 2n³, P·B 2n²s, B'(PB) 2ns², B'(PA) 2sn², G'K 2n²s, Cholesky s³/3, two "
                 "triangular solves with n right-hand sides 2s²n; total 4n³ + 6n²s + 4ns² + s³/3. The limit is "
                 "T · flops / GEMM rate, with the faster n×n GEMM rate measured here (NumPy's OpenBLAS "
                 "`a @ b`, or Eigen compiled like directable, `benchmarks/eigen_gemm.cpp`) on one thread for the "
                 "1-core sweep, and on as many cores as the installed sweep keeps busy (CPU/wall > 1.2: all "
                 "cores) for the installed one. The 1-core sweep runs in a subprocess with OMP_NUM_THREADS=1.\n\n"
                 "directable's sweep is the square-root form (P = LL', U = L'[B A], Z = U'U with only its lower "
                 "half formed, H = L_H L_H', P_i = Q + A'PA − Y'Y), so it performs fewer flops than the textbook "
                 "count above: n³/3 + n²(n+s) + n(n+s)² + s³/3 + 2s²n + sn², about 5.1 n³ instead of 8 n³ at "
                 "s = n/2; the last column judges it against the limit of the flops it actually performs. "
                 "Up to n = 256 (n = 128 where built for AVX-512, whose 8-wide GEMM kernels Eigen uses) its "
                 "steps use register-tiled kernels of its own instead of Eigen's products, "
                 "with the same flops: on one thread one joint Cholesky of [[H, G], [G', A'PA + Q]] gives R_H, "
                 "Y = R_H^{-T}G, P_i (the Schur complement) and the next step's factor. At n ≥ 96 the installed "
                 "sweep runs chunks of 8 steps on a team of threads (up to 4) or on one thread: no team while the "
                 "load average leaves no core free (a team is several times slower than one thread when another "
                 "job holds a core), else a 2-step probe, kept only while 10 % faster than one thread; a "
                 "team step splits the same arithmetic into six phases (U = L'[B A] by column strips, Z = U'U by "
                 "panels, R_H, Y by column strips, P_i = A'PA + Q − Y'Y by panels, then R_P beside K), so both "
                 "give the same K and P bit for bit.")

    # -- 4: re-tuning -------------------------------------------------------------
    def retune(self):
        n, T, dt, disc, Qf = retune_problem()
        s = n // 2
        reps = 5 if self.quick else 9
        rounds = 2 if self.quick else 5
        t_same = best_rounds(lambda: lqr.retune(disc, Qf, alpha_Q=2.0, alpha_R=2.0), reps, rounds)[0]
        t_diff, c_diff, t_rounds = retune_time(reps, rounds)
        t_core = best_rounds(lambda: disc.solve(Qf, 2.0, 0.5), reps, rounds)[0]
        if "retune_1core" not in self.store:
            self.store["retune_1core"] = one_core([["retune", reps, rounds]])[0]
        t_one = self.store["retune_1core"][0]
        # check against the NumPy sweep on the scaled problem
        sol = lqr.retune(disc, Qf, alpha_Q=2.0, alpha_R=0.5)
        Rn = 2.0 * (np.asarray(disc.R) - dt * np.asarray(disc.Rc)) + 0.5 * dt * np.asarray(disc.Rc)
        Phi, Gam, Qd, Nd = (np.array(x) for x in (disc.Phi, disc.Gamma, disc.Q, disc.N))
        Kn, _ = ref.riccati_sweep(Phi, Gam, 2.0 * Qd, Rn, Qf, 2.0 * Nd)
        err = relerr(sol.K, Kn)
        with blas_threads(1):
            t_np = best(lambda: ref.riccati_sweep(Phi, Gam, 2.0 * Qd, Rn, Qf, 2.0 * Nd), 2 if self.quick else 3)
        rate = numpy_gemm_rate(n, 1)
        eig = eigen_gemm_rates([n])
        r1 = max([rate] + (list(eig["serial"].get(n, ())) if isinstance(eig, dict) else []))
        lim = T * sweep_flops(n, s) / (r1 * 1e9)
        rows = [[n, s, T, fmt_t(t_same), f"**{fmt_t(t_diff)}** ({c_diff:.1f})", fmt_t(t_core), f"**{fmt_t(t_one)}**",
                 fmt_t(t_np), f"{t_np / t_diff:.1f}×", fmt_t(lim), f"{t_diff / lim:.2f}× / {t_one / lim:.2f}×",
                 f"{err:.1e}"]]
        head = ["n", "s", "T", "retune α_R = α_Q", "retune α_Q=2, α_R=0.5 (cores busy)",
                "same via Discretization.solve", "same, 1 core (OMP_NUM_THREADS=1)", "NumPy sweep (BLAS 1 thr)",
                "speed-up vs NumPy", f"1-core flop limit (at {r1:.1f} GFLOP/s)", "retune / limit (installed / 1 core)",
                "K vs NumPy"]
        self.add("4. Re-tuning (Riccati sweep only, no exponential)", md_table(head, rows) +
                 f"\n\nEach time is the best of {rounds} rounds of at least {reps} calls, a second apart "
                 f"(re-tune α_Q=2, α_R=0.5: the rounds' best times range from {fmt_t(min(t_rounds))} to "
                 f"{fmt_t(max(t_rounds))}, median {fmt_t(float(np.median(t_rounds)))}). "
                 f"The one-core limit of the textbook flop count is {fmt_t(lim)}; of the square-root form's "
                 f"flops {fmt_t(T * sweep_flops_sqrt(n, s) / (r1 * 1e9))}. At n = 48 one step is "
                 f"~{t_diff / T * 1e6:.0f} µs, too short for a fork/join per product to pay on this machine, so the "
                 "re-tune runs on one core.")
        self.summary.append([f"re-tuning (sweep only) n={n}, T={T}", fmt_t(t_diff),
                             f"1 core {fmt_t(t_one)}; NumPy {fmt_t(t_np)}", fmt_t(t_diff), "< 20 ms",
                             "yes" if t_diff < 0.020 else "**no**"])
        if err > 1e-8:
            self.notes.append(f"**retune mismatch**: K differs from the NumPy sweep by {err:.1e}.")

    # -- 5: control step in the C++ loop ----------------------------------------
    def loop(self):
        m = 64
        model = models.spring_chain(masses=m)
        if model.state_dim() != 2 * m:
            self.notes.append(
                f"`directable.models.spring_chain(masses={m})` returned a model with n = {model.state_dim()}, "
                f"s = {model.control_dim()} instead of n = {2 * m}, s = {m} (the scalar defaults pass through "
                "`as_float_array`, whose `np.ascontiguousarray` turns 0-d arrays into shape (1,), so the chain "
                "gets one mass). Section 5 uses per-mass arrays instead: "
                f"`spring_chain(masses=np.ones({m}), stiffness=np.full({m}, 40.0), cubic=np.full({m}, 400.0), "
                f"damping=np.full({m}, 0.2))`.")
            model = models.spring_chain(masses=np.ones(m), stiffness=np.full(m, 40.0), cubic=np.full(m, 400.0),
                                        damping=np.full(m, 0.2))
        n, s = 2 * m, m
        assert (model.state_dim(), model.control_dim()) == (n, s)
        dt = 1e-3
        steps = 4000 if self.quick else 20000
        rng = np.random.default_rng(5)
        z0 = 0.01 * rng.standard_normal(n)
        w_open = np.zeros((steps, s))
        rounds = 5 if self.quick else 11
        configs = {0: (lambda: sim.simulate(model, z0, steps, dt, open_loop=w_open))}
        labels = {1: "constant gain (64 KB, stays in L2)", 16: "T_ref = 16, looped (1 MB of gains: L2/L3)",
                  500: "T_ref = 500, looped (32 MB of gains: L3/DRAM)",
                  "500f": "T_ref = 500, looped, `gain_dtype=\"float32\"` (16 MB)",
                  "500h": "T_ref = 500, looped, `gain_dtype=\"float16\"` (8 MB)",
                  "500q": "T_ref = 500, looped, `gain_dtype=\"int8\"` (4 MB)",
                  "50h": "T_ref = 50, looped, `gain_dtype=\"float16\"` (800 KB: stays in L2)"}
        gain_dtype = {1: "float64", 16: "float64", 500: "float64", "500f": "float32", "500h": "float16",
                      "500q": "int8", "50h": "float16"}
        step_bytes = {k: s * n * np.dtype(g).itemsize for k, g in gain_dtype.items()}
        for key, g in gain_dtype.items():
            Tref = int(key[:-1]) if isinstance(key, str) else key
            K0 = -np.hstack([np.eye(s), np.eye(s)]) * 0.5
            K = K0 + 1e-3 * rng.standard_normal((Tref, s, n)) if Tref > 1 else K0 + 1e-3 * rng.standard_normal((s, n))
            z_ref = 1e-3 * rng.standard_normal((max(Tref, 2) + 1, n))
            w_ff = 1e-3 * rng.standard_normal((max(Tref, 2), s))
            tr = lqr.tracker(K, z_ref, w_ff, loop=True, gain_dtype=g)

            def run(tr=tr):
                tr.rewind()
                return sim.simulate(model, z0, steps, dt, controller=tr)

            configs[key] = run
        # Interleaved rounds (open loop, then each controller), best per configuration: the
        # difference of two bests is less exposed to a burst of load than back-to-back blocks.
        # Rounds 2 s apart: the read rate from the shared L3 changes with the neighbours' load over
        # stretches of seconds to minutes, so the per-round spread is reported beside the best.
        res = {k: float("inf") for k in configs}
        per_round = {k: [] for k in configs}
        for f in configs.values():
            f()
        for r in range(rounds):
            if r:
                time.sleep(2.0)
            for k, f in configs.items():
                t0 = time.perf_counter()
                f()
                per_round[k].append(time.perf_counter() - t0)
                res[k] = min(res[k], per_round[k][-1])
        t_open = res[0]
        spread = {k: np.array(per_round[k]) - np.array(per_round[0]) for k in configs if k}
        # What one core can stream from a schedule of that size (NumPy's sum, one core; a hand-written
        # AVX2 loop reads ~1.5-2x faster from L3): the time to read one step's gain at that rate.
        rate = {}
        for k in (16, 500, "500f", "500h", "500q", "50h"):
            x = np.ones(step_bytes[k] * (int(k[:-1]) if isinstance(k, str) else k) // 8)
            rate[k] = x.nbytes / best(x.sum, 20, min_time=0.0)
        keys = (1, 16, 500, "500f", "500h", "500q", "50h")
        rows = [[labels[k], fmt_t(res[k] / steps),
                 f"{fmt_t((res[k] - t_open) / steps)} (rounds: {fmt_t(spread[k].min() / steps)}–"
                 f"{fmt_t(spread[k].max() / steps)}, median {fmt_t(float(np.median(spread[k])) / steps)})",
                 f"{step_bytes[k] // 1024} KB",
                 f"{rate[k] / 1e9:.0f} GB/s → {fmt_t(step_bytes[k] / rate[k])}" if k in rate else "(in cache)"]
                for k in keys]
        rows.insert(0, ["no controller (open_loop zeros)", fmt_t(t_open / steps), "—", "—", "—"])
        head = ["run (spring_chain(masses=64): n=128, s=64, RK4, dt=1e-3, "
                f"{steps} steps, {rounds} rounds 2 s apart)", "per step (raw, best)",
                "control step = best minus best open loop (per round: range, median)",
                "gain bytes read per step", "one core's read rate over the schedule → time to read one gain"]
        txt = md_table(head, rows) + (
            "\n\nThe control step is w = w_ff[i] + K[i](z − z_ref[i]): an s×n = 64×128 mat-vec (16 k flops), "
            "plus the tracking error norm the loop records. With a time-varying schedule each step reads a new "
            "gain, 64 KB in double, so the step is bound by where the schedule lives. In a tight loop of "
            "mat-vecs this machine's L3 (32 MB, shared with other tenants) streams 40–60 GB/s to one core for "
            "schedules up to ~8 MB (the last column, from NumPy's sum, is that tight-loop rate). With the "
            "model's ~2.5 µs between two reads the rate falls towards DRAM's ~15 GB/s: in a scratch test a "
            "16 KB float16 gain read every 0 / 0.3 / 1.3 / 2.5 µs of pure arithmetic cost 0.53 / 0.60 / 0.72 "
            "/ 0.99 µs, while an 800 KB schedule, which stays in the core's private 1 MB L2, cost 0.4–0.5 µs "
            "at any spacing. Prefetching the next gain (software prefetch after the control, spread over the "
            "mat-vec, or a helper thread reading ahead on the other core) measured no gain and is not used. "
            "`gain_dtype=\"float32\"`/`\"float16\"` store each row of K as a power-of-two scale times "
            "entries rounded to that type (feedback within ~2e-6 / ~5e-4 of Σ|K_ij dz_j|) and multiply in "
            "single precision, so the step reads a half or a quarter of the bytes. `gain_dtype=\"int8\"` "
            "reads an eighth (8 KB, which also fits the 32 KB L1 that a 64 KB double gain does not): columns "
            "balanced by powers of two, 255 levels per row, dz rounded to int16 and the products summed "
            "exactly in integers (`vpmaddwd`, ~0.3 µs for the mat-vec in cache against ~0.45 µs for int8 "
            "widened to float and ~0.75 µs for Eigen's double gemv, which is L2-bound). The model step itself "
            "(RK4, 4 evaluations plus the dense 128×64 B·w) is the open-loop row.")
        txt += "\n\n" + self.storage_accuracy(model, m, dt)
        self.add("5. One control step inside the C++ simulation loop", txt)
        for key, what in ((500, "time-varying K, T_ref=500"), ("500f", "time-varying K, T_ref=500, gain_dtype=float32"),
                          ("500h", "time-varying K, T_ref=500, gain_dtype=float16"),
                          ("500q", "time-varying K, T_ref=500, gain_dtype=int8"),
                          ("50h", "time-varying K, T_ref=50, gain_dtype=float16"), (1, "constant gain")):
            t = (res[key] - t_open) / steps
            med = float(np.median(spread[key])) / steps
            met = "yes" if t < 1e-6 else "**no**"
            if (t < 1e-6) != (med < 1e-6):
                met += f" (best of {rounds} rounds; the median round: {'yes' if med < 1e-6 else 'no'})"
            self.summary.append([f"control step in the C++ loop, n=128, s=64 ({what})", fmt_t(t),
                                 f"raw step {fmt_t(res[key] / steps)}, open loop {fmt_t(t_open / steps)}; "
                                 f"median round {fmt_t(med)}", fmt_t(t), "< 1 µs", met])

    def storage_accuracy(self, model, m, dt, T=500):
        """What reduced gain storage costs in tracking, on a real schedule: LQR gains along a
        driven reference of the same chain, a push, each storage against float64."""
        n = 2 * m
        t = np.arange(T) * dt
        w_ff = np.stack([2.0 * np.sin(2 * np.pi * (1 + j % 5) * t / (T * dt)) for j in range(m)], axis=1)
        z_ref = models.rollout(model, np.zeros(n), w_ff, dt)
        sol = lqr.solve_continuous(models.linearize(model, z_ref, dt), model.control_matrix(), dt, 100.0, 0.1, 100.0)
        K = np.asarray(sol.K)
        push = np.zeros((T, m))
        push[50:55, m // 6], push[50:55, 2 * m // 3] = 30.0, -30.0
        runs = {g: sim.simulate(model, z_ref[0], T, dt, controller=lqr.tracker(sol, z_ref, w_ff, gain_dtype=g),
                                disturbance=push) for g in ("float64", "float32", "float16", "int8")}
        z64 = np.asarray(runs["float64"].states)
        e64 = np.asarray(runs["float64"].tracking_error)
        dev = np.abs(z64 - z_ref).max()
        rows = []
        for g, r in runs.items():
            e = np.asarray(r.tracking_error)
            rows.append([f"`{g}`", f"{np.abs(np.asarray(r.states) - z64).max() / dev:.1e}",
                         f"{e.max() / e64.max():.4f}", f"{e[-1] / e64[-1]:.4f}"])
        head = [f"gain storage (LQR schedule along a driven reference, T={T}, dt={dt:g}, two pushes)",
                "largest state deviation from the float64 run / that run's largest from z_ref",
                "peak tracking error / float64's", "final tracking error / float64's"]
        return (md_table(head, rows) + f"\n\nThe schedule's entries span {np.abs(K).max():.0f} (largest, a velocity "
                f"gain; the largest position gain is {np.abs(K[..., :m]).max():.0f}) down to a median of "
                f"{np.median(np.abs(K)):.0e}: int8's power-of-two column scales give the position columns "
                "their own range.")

    # -- 6: Python control call ---------------------------------------------------
    def pycall(self):
        rows = []
        number = 5000 if self.quick else 20000
        for n in (16, 128):
            s = n // 2
            T = 100
            rng = np.random.default_rng(7)
            K = rng.standard_normal((T, s, n))
            z_ref = rng.standard_normal((T + 1, n))
            w_ff = rng.standard_normal((T, s))
            tr = lqr.tracker(K, z_ref, w_ff)
            tr.index = 10
            z = rng.standard_normal(n)
            w = np.empty(s)
            wfb = np.empty(s)
            ctrl = tr.control
            into = tr.control_into
            assert np.allclose(ctrl(z), w_ff[10] + K[10] @ (z - z_ref[10]))
            t_c = per_call(lambda: ctrl(z), number)
            t_i = per_call(lambda: into(z, w, wfb), number)
            t_adv = per_call(lambda: (into(z, w, wfb), tr.advance(), tr.rewind()), number)
            t_np = per_call(lambda: w_ff[10] + K[10] @ (z - z_ref[10]), number)
            rows.append([n, s, fmt_t(t_c), fmt_t(t_i), fmt_t(t_adv), fmt_t(t_np)])
            if n == 128:
                best_t = min(t_c, t_i)
                self.summary.append(["Python control call n=128, s=64 (control / control_into)",
                                     f"{fmt_t(t_c)} / {fmt_t(t_i)}", f"NumPy expression {fmt_t(t_np)}",
                                     fmt_t(best_t), "< 5 µs", "yes" if max(t_c, t_i) < 5e-6 else
                                     ("control_into only" if t_i < 5e-6 else "**no**")])
        head = ["n", "s", "tracker.control(z)", "tracker.control_into(z, w, w_fb)",
                "control_into + advance + rewind", "NumPy: w_ff[i] + K[i] @ (z - z_ref[i])"]
        self.add("6. One control call from Python (timeit, best of 7)", md_table(head, rows))

    # -- 7: other libraries -------------------------------------------------------
    def family(self):
        """Issue 23: the sweep on its problem family, one core, beside the recorded HPIPM and Crocoddyl figures."""
        rounds = 3 if self.quick else 9
        cases = [(16, 8), (48, 24), (64, 32), (128, 64), (256, 128), (48, 1), (48, 4), (128, 4)]
        one, _ = one_core([["family", cases, rounds]])[0]
        with blas_threads(1):
            peak = numpy_gemm_rate(256, threads=1)
        # the team (default threads) against one thread at n = 128: fresh processes, interleaved, wall-time minima
        load_team0 = os.getloadavg()[0]
        t_team = t1 = float("inf")
        for _ in range(rounds):
            t_team = min(t_team, one_core([["family", [(128, 64)], 2]], threads=None)[0][1][0])
            t1 = min(t1, one_core([["family", [(128, 64)], 2]])[0][1][0])
        load_team1 = os.getloadavg()[0]
        rows = []
        for (n, s), t in zip(cases, one):
            ref_n = ISSUE23_REFERENCE.get(n) if s == n // 2 else None
            here = THIS_MACHINE_HPIPM.get((n, s))
            gf = sweep_flops_sqrt(n, s) / t * 1e-9
            refs = [f"{x:.3g}" for x in ref_n] if ref_n else ["n/a"] * 3
            rows.append([n, s, f"{t * 1e6:.3g}", *(f"{x:.3g}" for x in here or ("n/a", "n/a")),
                         f"{here[0] / (t * 1e6):.2f}" if here else "n/a", *refs,
                         f"{gf:.1f}", f"{gf / peak:.0%}", f"{sweep_flops_sqrt(n, s) / peak * 1e-3:.3g}"])
            if here:
                self.summary.append([f"sweep vs HPIPM factorization, n={n}, s={s} (µs/stage, one core)",
                                     f"{t * 1e6:.3g}", f"{here[0]:.3g} (recorded on {THIS_MACHINE.split(' (')[0]})",
                                     f"{here[0] / (t * 1e6):.2f}× HPIPM's speed", "≥ 1.0×",
                                     "yes" if here[0] >= t * 1e6 else "**no**"])
        text = md_table(["n", "s", "directable solve_discrete (K and P), µs/stage, one core",
                         "HPIPM factorization alone (recorded here)", "HPIPM + K (recorded here)",
                         "HPIPM factorization / directable (≥ 1: directable faster)",
                         "HPIPM factorization (issue 23's machine)", "HPIPM + K (issue 23's machine)",
                         "Crocoddyl backwardPass (issue 23's machine)",
                         "directable GFLOP/s (square-root flop count)", "of this core's GEMM peak",
                         "one-core flop limit, µs/stage"], rows)
        text += (f"\n\nOne core: a subprocess with OMP_NUM_THREADS=1, CPU-time minima over {rounds} interleaved "
                 f"rounds, N = 500 stages, time-varying A_i and B_i, Q = I, R = I. 'Recorded here': HPIPM on "
                 f"{THIS_MACHINE}, {THIS_MACHINE_HPIPM_NOTE}, not re-run by this script (HPIPM is not a dependency). "
                 f"The other HPIPM and the Crocoddyl columns are the figures recorded in issue 23 on "
                 f"{ISSUE23_MACHINE}: they compare machines as well as code. This core's one-thread GEMM peak (NumPy/OpenBLAS, "
                 f"n = 256) measured in the same run: {peak:.1f} GFLOP/s; one core's flop limit per stage at that "
                 f"rate (square-root flop count): "
                 + ", ".join(f"{sweep_flops_sqrt(n, s) / peak * 1e-3:.3g} µs at n = {n}" for n, s in cases[:5])
                 + f". Team at n = 128 (default threads against OMP_NUM_THREADS=1, fresh processes interleaved "
                 f"over {rounds} rounds, wall-time minima, 1-minute load average {load_team0:.1f} → "
                 f"{load_team1:.1f}): {t_team * 1e6:.3g} µs/stage against {t1 * 1e6:.3g} on one thread "
                 f"({t1 / t_team:.2f}× one thread's speed). The sweep's team choice does not try a team while the "
                 f"load average leaves no core free, probes it for 2 steps otherwise and keeps it only while it is "
                 f"10 % faster.")
        self.summary.append(["sweep team vs one thread, n=128, s=64 (wall µs/stage, default threads)",
                             f"{t_team * 1e6:.3g}", f"{t1 * 1e6:.3g} (one thread)", f"{t1 / t_team:.2f}×",
                             "≥ 1.0× loaded; ≥ 1.6× on two idle cores",
                             "yes" if t_team <= t1 * 1.03 else "**no**"])
        self.add("9. Riccati sweep on issue 23's problem family", text)

    def stationary(self):
        """solve_stationary against SciPy's solve_discrete_are (+ gain) and python-control's dlqr."""
        rows = []
        rounds = 3 if self.quick else 9
        for n in (16, 48, 128):
            s = n // 2
            A, B, dt, Q, R, Qf = problem(n, 2)
            disc = lqr.discretize(A[0], B, dt, Q, R, horizon=1)
            Ad, Bd, Qd, Nd, Rd = (np.array(x[0]) for x in (disc.Phi, disc.Gamma, disc.Q, disc.N, disc.R))

            def scipy_gain():
                P = sla.solve_discrete_are(Ad, Bd, Qd, Rd, s=Nd)
                return P, -np.linalg.solve(Rd + Bd.T @ P @ Bd, Bd.T @ P @ Ad + Nd.T)

            solvers = {"directable": lambda: lqr.solve_stationary(Ad, Bd, Qd, Rd, N=Nd), "scipy": scipy_gain}
            try:
                import control

                solvers["control"] = lambda: control.dlqr(Ad, Bd, Qd, Rd, Nd)
            except ImportError:
                pass
            # CPU-time minima over interleaved rounds (the machine is shared), one
            # BLAS thread: multi-threaded OpenBLAS spins on a loaded machine
            t = {k: float("inf") for k in solvers}
            with blas_threads(1):
                for _ in range(rounds):
                    for k, f in solvers.items():
                        reps = max(1, int(0.05 / max(t[k], 1e-6))) if t[k] < float("inf") else 1
                        c0 = time.process_time()
                        for _ in range(reps):
                            f()
                        t[k] = min(t[k], (time.process_time() - c0) / reps)
            st = solvers["directable"]()
            P_sp, K_sp = scipy_gain()
            res = lambda P: np.linalg.norm(dare_residual(Ad, Bd, Qd, Rd, Nd, P)) / np.linalg.norm(P)
            row = [n, s, fmt_t(t["directable"]), fmt_t(t["scipy"]), fmt_t(t.get("control"))]
            row += [f"{t['scipy'] / t['directable']:.1f}×",
                    f"{t['control'] / t['directable']:.1f}×" if "control" in t else "n/a",
                    st.iterations, f"{res(st.P):.1e}", f"{res(P_sp):.1e}", f"{relerr(st.K, K_sp):.1e}"]
            if "control" in t:
                Kc, Pc, _ = control.dlqr(Ad, Bd, Qd, Rd, Nd)
                row.append(f"{res(np.asarray(Pc)):.1e}")
            rows.append(row)
            faster = t["directable"] < min(v for k, v in t.items() if k != "directable")
            self.summary.append([f"stationary LQR, n={n}, s={s}", fmt_t(t["directable"]),
                                 f"scipy {fmt_t(t['scipy'])}, dlqr {fmt_t(t.get('control'))}",
                                 f"{min(v for k, v in t.items() if k != 'directable') / t['directable']:.1f}× "
                                 "the faster peer", "faster than both", "yes" if faster else "no"])
        text = md_table(["n", "s", "directable solve_stationary", "scipy solve_discrete_are + gain",
                         "control.dlqr", "speed-up vs scipy", "speed-up vs dlqr", "doubling steps",
                         "residual (directable)", "residual (scipy)", "K vs scipy", "residual (dlqr)"], rows)
        text += ("\n\nOne core's CPU time per call (BLAS limited to one thread), minimum over interleaved rounds (the machine is shared: "
                 "wall times are noisy, CPU-time minima are not). The problem is one step of section 1's "
                 "discretization (unstable chain, cross term N). Residual: |Q + A'PA - P - G'H^-1 G|_F / |P|_F, "
                 "the same NumPy formula for every solver.")
        self.add("8. Stationary LQR (DARE)", text)

    def others(self):
        txt = []
        # (a) stationary problem: python-control dlqr, SciPy DARE vs long-horizon sweep
        rows = []
        for n in ((16, 48) if self.quick else (16, 48, 128)):
            s = n // 2
            A, B, dt, Q, R, Qf = problem(n, 2)
            disc = lqr.discretize(A[0], B, dt, Q, R, horizon=1)
            Ad, Bd, Qd, Nd, Rd = (np.array(x[0]) for x in (disc.Phi, disc.Gamma, disc.Q, disc.N, disc.R))
            P = sla.solve_discrete_are(Ad, Bd, Qd, Rd, s=Nd)
            K_are = -np.linalg.solve(Rd + Bd.T @ P @ Bd, Bd.T @ P @ Ad + Nd.T)
            # horizon needed for the time-varying sweep to converge to 1e-8
            H = 1500 if n >= 128 else 3000
            solH = lqr.solve_discrete(Ad, Bd, Qd, Rd, Qd, N=Nd, horizon=H)
            errs = np.abs(solH.K[::-1] - K_are).max(axis=(1, 2)) / np.abs(K_are).max()
            ok = np.nonzero(errs < 1e-8)[0]
            Hc = int(ok[0]) + 1 if ok.size else None
            t_are = best(lambda: sla.solve_discrete_are(Ad, Bd, Qd, Rd, s=Nd), 3)
            ctrl = {}
            try:
                import control

                for meth in ("slycot", "scipy"):
                    try:
                        Kc, Sc, _ = control.dlqr(Ad, Bd, Qd, Rd, Nd, method=meth)
                        ctrl[meth] = (best(lambda: control.dlqr(Ad, Bd, Qd, Rd, Nd, method=meth), 3),
                                      relerr(-Kc, K_are))
                    except Exception as exc:  # noqa: BLE001
                        ctrl[meth] = (None, f"{type(exc).__name__}: {exc}")
            except ImportError as exc:
                ctrl["import"] = (None, str(exc))
            Hrun = Hc or H
            t_dir = best(lambda: lqr.solve_discrete(Ad, Bd, Qd, Rd, Qd, N=Nd, horizon=Hrun), 3)
            solr = lqr.solve_discrete(Ad, Bd, Qd, Rd, Qd, N=Nd, horizon=Hrun)
            e_dir = relerr(solr.K[0], K_are)
            c_sly = ctrl.get("slycot", (None, "n/a"))
            c_sci = ctrl.get("scipy", (None, "n/a"))
            rows.append([n, s, fmt_t(c_sly[0]), fmt_t(c_sci[0]), fmt_t(t_are),
                         (str(Hc) if Hc else f"> {H}"), fmt_t(t_dir),
                         f"{e_dir:.1e}", (f"{c_sly[1]:.1e}" if isinstance(c_sly[1], float) else c_sly[1])])
        txt.append(md_table(["n", "s", "control.dlqr (slycot)", "control.dlqr (scipy)",
                             "scipy solve_discrete_are + gain", "horizon for 1e-8", "directable long-horizon sweep",
                             "directable K_0 vs DARE", "dlqr K vs DARE"], rows))
        txt.append("python-control's `dlqr` and SciPy's `solve_discrete_are` solve the *stationary* "
                   "(time-invariant, infinite-horizon) problem; directable solves the finite-horizon "
                   "time-varying one. With constant matrices its K_0 converges to the DARE gain once the horizon "
                   "is long enough (the column 'horizon for 1e-8' is the first horizon whose K_0 agrees to 1e-8), "
                   "so this compares different problems: a DARE solve costs O(n³) once, the sweep O(n³) per step.")
        # (b) Crocoddyl
        try:
            import crocoddyl
        except Exception as exc:  # noqa: BLE001
            txt.append(f"Crocoddyl: not importable ({type(exc).__name__}: {exc}).")
            self.add("7. Other libraries", "\n\n".join(txt))
            return
        rows = []
        for n in ((16, 48) if self.quick else (16, 48, 64, 128)):
            s = n // 2
            T = self.T
            A, B, dt, Q, R, Qf = problem(n, T)
            disc = lqr.discretize(A, B, dt, Q, R)
            Phi, Gam, Qd, Nd, Rd = (np.array(x) for x in (disc.Phi, disc.Gamma, disc.Q, disc.N, disc.R))
            t0 = time.perf_counter()
            zn, zs = np.zeros(n), np.zeros(s)
            run = [crocoddyl.ActionModelLQR(Phi[i], Gam[i], Qd[i], Rd[i], Nd[i], zn, zn, zs) for i in range(T)]
            term = crocoddyl.ActionModelLQR(np.eye(n), np.zeros((n, s)), Qf, np.eye(s), np.zeros((n, s)), zn, zn, zs)
            pb = crocoddyl.ShootingProblem(zn, run, term)
            solver = crocoddyl.SolverDDP(pb)
            solver.setCandidate([zn] * (T + 1), [zs] * T, True)
            solver.preg = 0.0  # no regularization: the plain Riccati recursion
            solver.dreg = 0.0
            t_build = time.perf_counter() - t0
            solver.calcDiff()
            solver.backwardPass()
            Kc = -np.array(solver.K)
            Vxx = np.array(solver.Vxx)
            sol = lqr.solve_discrete(Phi, Gam, Qd, Rd, Qf, N=Nd)
            eK, eP = relerr(Kc, sol.K), relerr(Vxx, sol.P)
            reps = 2 if self.quick else 3
            t_cd = best(solver.calcDiff, reps)
            t_bw = best(solver.backwardPass, reps)
            t_dir = best(lambda: lqr.solve_discrete(Phi, Gam, Qd, Rd, Qf, N=Nd), reps)
            rows.append([n, s, T, fmt_t(t_dir), fmt_t(t_bw), fmt_t(t_cd), fmt_t(t_build),
                         f"{(t_bw + t_cd) / t_dir:.2f}×", f"{eK:.1e}", f"{eP:.1e}", pb.nthreads])
        txt.append(md_table(["n", "s", "T", "directable solve_discrete", "Crocoddyl backwardPass",
                             "Crocoddyl calcDiff", "Crocoddyl problem build (once)",
                             "(backwardPass + calcDiff) / directable", "K vs directable", "Vxx vs P",
                             "Crocoddyl nthreads"], rows))
        txt.append(f"Crocoddyl {crocoddyl.__version__}: `ActionModelLQR(A_i, B_i, Q_i, R_i, N_i, f=0, q=0, r=0)` per "
                   "step on the same discretization (its cost ½x'Qx + ½u'Ru + x'Nu is half of directable's, which "
                   "leaves the gains unchanged and makes Vxx = P), a `ShootingProblem` of horizon T, `SolverDDP` "
                   "with preg = dreg = 0 at the zero trajectory; `calcDiff()` fills the derivatives, "
                   "`backwardPass()` is its Riccati sweep (K_croc = −K, u = ū − K(x − x̄)). The 5-argument "
                   "`ActionModelLQR(A, B, Q, R, N)` Python constructor is bound with vector types in this "
                   "wheel and rejects matrices, so the 8-argument form is used.")
        self.add("7. Other libraries", "\n\n".join(txt))


# ----------------------------------------------------------------------------- main


BEGIN, END = "<!-- lqr:begin -->", "<!-- lqr:end -->"


def write_results(info, bench, cmd, load0, load1, wall):
    """Writes this script's section of RESULTS.md (between the lqr markers), keeping the other sections."""
    b = info["build_info"]
    lines = [
        BEGIN,
        "## LQR precomputation and control (issue 2)",
        "",
        "Generated by `benchmarks/bench_lqr.py --write`; rerun it rather than editing this section.",
        "",
        f"- command: `{cmd}`",
        f"- date: {info['date']}; total run time {wall:.0f} s",
        f"- machine: {info['cpu']}, {info['cores']} cores, shared with other jobs (1-minute load average "
        f"{load0[0]:.2f} at start, {load1[0]:.2f} at end)",
        f"- Python {info['python']}, NumPy {info['numpy']}, SciPy {info['scipy']}, directable {info['directable']}",
        f"- directable build_info: Eigen {b.get('eigen')}, SIMD `{b.get('simd')}`, avx2={b.get('avx2')}, "
        f"fma={b.get('fma')}, openmp={b.get('openmp')}; OMP_NUM_THREADS={info['omp']}",
        f"- directable source: {info['git']}; installed module {info['so']}",
        "- thread pools (threadpoolctl): " + ("; ".join(info["blas"]) if info["blas"] else
                                              "unknown (threadpoolctl not installed)"),
        f"- other libraries: python-control {info['control']}, slycot {info['slycot']}, "
        f"Crocoddyl {info['crocoddyl']}, threadpoolctl {info['threadpoolctl']}",
        "",
        "Every time is the best of several repeats in one process; ratios compare runs made back to back. "
        "Multi-threaded times on this shared 2-core machine are fragile: a thread that loses its core to "
        "another job stalls its team (NumPy's multi-threaded OpenBLAS collapses worst), so the one-core "
        "numbers are given next to them. The test problem (sections 1–4, 7): "
        + " ".join(problem.__doc__.split()),
        "",
        "### Summary against the issue's targets",
        "",
        md_table(["benchmark", "directable", "baseline", "result", "target", "met?"], bench.summary),
        "",
    ]
    if bench.notes:
        lines += ["### Notes", ""] + [f"- {x}" for x in bench.notes] + [""]
    for title, text in bench.sections:
        lines += [f"### {title}", "", text, ""]
    return write_section("\n".join(lines).rstrip() + "\n" + END, BEGIN, END)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="short horizons and fewer repeats (about a minute)")
    ap.add_argument("--write", action="store_true", help="write benchmarks/RESULTS.md")
    ap.add_argument("--only", default="", help="comma list of sections to run: precompute,sweep,retune,loop,"
                                               "pycall,others,stationary,family (sweep needs precompute)")
    ap.add_argument("--wait-idle", type=float, default=0.0, metavar="SECONDS",
                    help="wait up to SECONDS for the 1-minute load average to drop below 1 before starting")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(json.loads(args.worker))
        return
    cmd = "python benchmarks/bench_lqr.py" + (" --quick" if args.quick else "") + (" --write" if args.write else "")
    if args.only:
        cmd += f" --only {args.only}"
    if args.wait_idle > 0:
        t_wait = time.perf_counter()
        while os.getloadavg()[0] >= 1.0 and time.perf_counter() - t_wait < args.wait_idle:
            time.sleep(5)
        print(f"(waited {time.perf_counter() - t_wait:.0f} s for an idle machine; load {os.getloadavg()[0]:.2f})")
    t_start = time.perf_counter()
    load0 = os.getloadavg()
    info = machine_info()
    print(f"# directable LQR benchmarks ({'quick' if args.quick else 'full'})")
    print(f"{info['cpu']}, {info['cores']} cores, Python {info['python']}, NumPy {info['numpy']}, "
          f"SciPy {info['scipy']}; build_info {info['build_info']}; load {load0[0]:.2f}")
    bench = Bench(args.quick)
    sections = ("precompute", "sweep", "retune", "loop", "pycall", "others", "stationary", "family")
    wanted = [x for x in args.only.split(",") if x] or list(sections)
    for name in sections:
        if name in wanted:
            t0 = time.perf_counter()
            getattr(bench, name)()
            print(f"[{name}: {time.perf_counter() - t0:.0f} s]", flush=True)
    load1 = os.getloadavg()
    wall = time.perf_counter() - t_start
    if Path(_core.__file__).stat().st_mtime != _SO_MTIME:
        bench.notes.insert(0, "**WARNING: directable's compiled module was rebuilt while this ran; the one-core "
                              "subprocess and this process may have timed different builds. Rerun.**")
    print("\n## Summary\n")
    print(md_table(["benchmark", "directable", "baseline", "result", "target", "met?"], bench.summary))
    for note in bench.notes:
        print("-", note)
    print(f"\n(total {wall:.0f} s; load average {load0[0]:.2f} -> {load1[0]:.2f})")
    if args.write:
        print(f"wrote {write_results(info, bench, cmd, load0, load1, wall)}")


if __name__ == "__main__":
    main()
