"""Runtime CPU dispatch against a native build: the hot kernels of the
portable build (each variant chosen with DIRECTABLE_KERNELS) timed beside a
-march=native build of the same sources, in the same run, one variant per
subprocess, on one thread (the sweep, the discretization, the tracker loop).

    python benchmarks/bench_dispatch.py --build-native [--quick]
    python benchmarks/bench_dispatch.py --native PATH/_core*.so [--quick]

``--build-native`` configures and builds the extension of this checkout with
``-DDIRECTABLE_NATIVE=ON`` into a folder under /tmp (``--native-dir``; the
compiler, pybind11 and Eigen of this environment, ccache when present), so the
native build and the installed dispatched one are timed in the same run.
``--native`` takes the extension of such a build made elsewhere. It is run
from a copy of the installed package with that extension in place of the
dispatched ones. Target: dispatched within 5 % of native.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

from bench_common import host, json_from_subprocess, package_with, publish
from bench_lqr import md_table

CASES = """
import json, sys, time
import numpy as np
sys.path.insert(0, {bench!r})
from bench_common import best
import directable as dr
from bench_lqr import problem
dr._core.set_max_threads(1)
info = dr.build_info()
out = {{"kernels": info.get("kernels", "native" if info.get("avx2") else "?")}}
for n, T in {sizes!r}:
    A, B, dt, Q, R, Qf = problem(n, T)
    disc = dr.lqr.discretize(A, B, dt, Q, R, threads=1)
    out[f"sweep n={{n}}"] = best(lambda: dr.lqr.solve_discrete(disc.Phi, disc.Gamma, disc.Q, disc.R, Qf, N=disc.N))
    out[f"discretize n={{n}}"] = best(lambda: dr.lqr.discretize(A, B, dt, Q, R, threads=1))
model = dr.models.spring_chain(32)
z_ref = dr.models.rollout(model, np.zeros(64), np.ones((2000, 32)), 0.01)
ctrl = dr.lqr.tracker(dr.lqr.pd_gain(10.0, 2.0, 64), z_ref)
out["simulate m=32, 2000 steps"] = best(lambda: dr.simulate(model, z_ref[0] + 0.1, 2000, 0.01, controller=ctrl,
                                                             start_index=0))
print(json.dumps(out))
"""


def run_variant(env_extra, sizes, pythonpath=None) -> dict:
    env = {**os.environ, **env_extra}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    code = CASES.format(bench=str(pathlib.Path(__file__).resolve().parent), sizes=sizes)
    return json_from_subprocess(code, env)


def build_native(build_dir: pathlib.Path, jobs: int) -> pathlib.Path:
    """The _core extension of this checkout built with -DDIRECTABLE_NATIVE=ON in build_dir."""
    root = pathlib.Path(__file__).resolve().parent.parent
    cmake = shutil.which("cmake") or "cmake"
    args = [cmake, "-S", str(root), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release", "-DDIRECTABLE_NATIVE=ON",
            f"-DPython_EXECUTABLE={sys.executable}"]
    import pybind11

    args.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
    try:
        prefix = subprocess.run([sys.executable, "-m", "cmeel", "cmake"], capture_output=True, text=True, check=True)
        args.append(f"-DCMAKE_PREFIX_PATH={prefix.stdout.strip()}")
    except (OSError, subprocess.CalledProcessError):
        pass  # a system Eigen
    if shutil.which("ninja"):
        args += ["-G", "Ninja"] if not (build_dir / "CMakeCache.txt").exists() else []
    if shutil.which("ccache"):
        args.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    print(f"building the native extension in {build_dir} (-j{jobs}) ...", flush=True)
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    subprocess.run([cmake, "--build", str(build_dir), "--target", "_core", "-j", str(jobs)], check=True,
                   stdout=subprocess.DEVNULL)
    return next(build_dir.glob("_core*.so"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--native", type=pathlib.Path, help="the extension of a DIRECTABLE_NATIVE=ON build")
    ap.add_argument("--build-native", action="store_true", help="build the native extension first (into --native-dir)")
    ap.add_argument("--native-dir", type=pathlib.Path, default=pathlib.Path(tempfile.gettempdir()) / "directable-native",
                    help="build folder of --build-native")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="compile jobs of --build-native")
    ap.add_argument("--quick", action="store_true", help="smaller problems, no RESULTS.md")
    ap.add_argument("--rounds", type=int, default=2, help="alternating rounds per variant (best kept)")
    args = ap.parse_args()
    if args.build_native:
        args.native = build_native(args.native_dir, args.jobs)
    sizes = [(48, 200)] if args.quick else [(48, 1000), (128, 200)]
    variants = {"x86-64 (baseline)": ({"DIRECTABLE_KERNELS": "x86-64"}, None),
                "x86-64-v3": ({"DIRECTABLE_KERNELS": "x86-64-v3"}, None),
                "dispatched": ({}, None)}
    tmp = tempfile.TemporaryDirectory()
    if args.native:
        variants["native"] = ({}, package_with(args.native.resolve(), pathlib.Path(tmp.name)))
    results = {}
    for _ in range(args.rounds):  # alternate, so that a busy moment hurts every variant alike
        for name, (env, path) in variants.items():
            r = run_variant(env, sizes, path)
            kept = results.setdefault(name, r)
            for key, value in r.items():
                if key != "kernels":
                    kept[key] = min(kept[key], value)
    ref = "native" if "native" in results else "x86-64 (baseline)"
    cases = [k for k in results[ref] if k != "kernels"]
    header = ["case"] + [f"{name} [{results[name]['kernels']}]" for name in results] + [f"dispatched / {ref}"]
    rows = []
    for case in cases:
        row = [case] + [f"{results[name][case] * 1e3:.2f} ms" for name in results]
        row.append(f"**{results['dispatched'][case] / results[ref][case]:.3f}**")
        rows.append(row)
    table = md_table(header, rows)
    load = os.getloadavg()
    print(f"{host()}; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    print(table)
    if not args.quick:
        publish("dispatch", "Runtime CPU dispatch vs a native build",
                f"; one thread, best of {args.rounds} alternating rounds; load average {load[0]:.1f} during the run",
                table)


if __name__ == "__main__":
    main()
