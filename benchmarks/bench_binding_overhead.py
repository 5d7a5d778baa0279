"""Per-call cost of the Python bindings: the same calls timed on two builds of
the extension that differ only in how the bindings were compiled (for example
`-Os` against `-O1`), in the same run, alternating one subprocess per build
and round, one thread.

    python benchmarks/bench_binding_overhead.py A/_core*.so B/_core*.so [--labels Os O1] [--rounds 5]

Each extension is run from a copy of the installed package in which it is the
only extension (the baseline kernels: `DIRECTABLE_KERNELS` plays no part), so
the two columns differ by the bindings' code alone. The calls are the
per-step ones a Python loop makes: a tracker's control (small arrays in and
out), the same into preallocated arrays, one cloth step, and a scalar
property. Reported: the best per-call time of each build over all rounds
(timeit minima, garbage collection off) and their ratio.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import tempfile

from bench_common import host, json_from_subprocess, package_with
from bench_lqr import md_table

CASES = """
import json, sys
import numpy as np
sys.path.insert(0, {bench!r})
from bench_common import per_call
import directable as dr
dr._core.set_max_threads(1)
rng = np.random.default_rng(7)
out = {{}}
n, s, T = 16, 8, 100
tr = dr.lqr.tracker(rng.standard_normal((T, s, n)), rng.standard_normal((T + 1, n)), rng.standard_normal((T, s)))
tr.index = 10
z, w, wfb = rng.standard_normal(n), np.empty(s), np.empty(s)
out["tracker.control(z), n=16, s=8"] = per_call(lambda: tr.control(z), {number})
out["tracker.control_into(z, w, w_fb)"] = per_call(lambda: tr.control_into(z, w, wfb), {number})
out["tracker.index (scalar property)"] = per_call(lambda: tr.index, {number})
cloth = dr.cloth.ClothGrid(5, 5, 0.05, 0.01, 100.0, 20.0, 2.0, 0.02)
x, v = cloth.positions0.copy(), np.zeros((cloth.node_count, 3))
out["ClothGrid.step(x, v, dt), 5x5 nodes"] = per_call(lambda: cloth.step(x, v, 0.002), {number} // 4)
print(json.dumps(out))
"""


def run(pythonpath: str, number: int) -> dict:
    env = {**os.environ, "PYTHONPATH": pythonpath, "OMP_NUM_THREADS": "1"}
    env.pop("DIRECTABLE_KERNELS", None)
    code = CASES.format(bench=str(pathlib.Path(__file__).resolve().parent), number=number)
    return json_from_subprocess(code, env)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("extensions", nargs=2, type=pathlib.Path, help="the two builds' _core*.so")
    ap.add_argument("--labels", nargs=2, default=["A", "B"])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--number", type=int, default=20000, help="calls per timeit repeat")
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        paths = [package_with(ext.resolve(), pathlib.Path(tmp) / f"{k}-{label}")
                 for k, (ext, label) in enumerate(zip(args.extensions, args.labels))]
        best = [{}, {}]
        for _ in range(args.rounds):
            for k, path in enumerate(paths):
                for case, t in run(path, args.number).items():
                    best[k][case] = min(best[k].get(case, float("inf")), t)
    load1 = os.getloadavg()[0]
    rows = [[case, f"{best[0][case] * 1e9:.0f} ns", f"{best[1][case] * 1e9:.0f} ns",
             f"**{best[1][case] / best[0][case]:.3f}**"] for case in best[0]]
    print(f"{host()}; {args.rounds} alternating rounds, load average {load0:.1f} -> {load1:.1f}\n")
    print(md_table(["call", args.labels[0], args.labels[1], f"{args.labels[1]} / {args.labels[0]}"], rows))


if __name__ == "__main__":
    main()
