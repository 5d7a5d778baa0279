"""SPD tracking benchmark (issue 5, sec. 5).

Targets: a 40-link SPD tracking step < 20 us in the C++ loop; a 2-link run of
10,000 steps from Python < 10 ms. Compared with the same SPD written in NumPy
(M and C from the C++ chain, the SPD solve and Euler step in NumPy) in the
same process. Prints a table and writes its section of benchmarks/RESULTS.md
between the markers <!-- spd:begin --> and <!-- spd:end -->.

    python benchmarks/bench_spd.py [--no-write]
"""
from __future__ import annotations

import argparse

import numpy as np

from directable import chain as dc
from bench_common import best_of, publish


def reference(T, n, dt):
    t = np.arange(T + 1) * dt
    q = 0.3 * np.sin(t[:, None] + np.linspace(0, 1, n)[None, :])
    qd = 0.3 * np.cos(t[:, None] + np.linspace(0, 1, n)[None, :])
    return q, qd


def numpy_spd(chain, q_ref, qd_ref, dt, kp, kd):
    n = q_ref.shape[1]
    q, qd = q_ref[0].copy(), qd_ref[0].copy()
    Kp, Kd = np.full(n, kp), np.full(n, kd)
    for i in range(q_ref.shape[0] - 1):
        M, C = chain.mass_matrix(q), chain.bias_forces(q, qd)
        e = q + dt * qd - q_ref[i + 1]
        ev = qd - qd_ref[i + 1]
        qdd = np.linalg.solve(M + np.diag(Kd * dt), -C - Kp * e - Kd * ev)
        q, qd = q + dt * qd, qd + dt * qdd
    return q


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-write", action="store_true", help="do not update benchmarks/RESULTS.md")
    args = ap.parse_args()
    dt, rows = 1 / 60, []

    # 40-link chain: per-step time of the C++ loop, and NumPy in the same process
    for links, T_cpp, T_np in ((2, 10_000, 2_000), (10, 5_000, 1_000), (40, 2_000, 300)):
        ch = dc.PlanarChain(np.full(links, 0.1), np.full(links, 0.05), damping=0.01)
        q_ref, qd_ref = reference(T_cpp, links, dt)
        kp = 3e4
        t_cpp = best_of(lambda: dc.track(ch, q_ref, qd_ref, dt, kp, kp * dt), 5)
        t_np = best_of(lambda: numpy_spd(ch, q_ref[:T_np + 1], qd_ref[:T_np + 1], dt, kp, kp * dt), 2)
        r = dc.track(ch, q_ref, qd_ref, dt, kp, kp * dt)
        q_np = numpy_spd(ch, q_ref[:T_np + 1], qd_ref[:T_np + 1], dt, kp, kp * dt)
        agree = np.abs(q_np - r.q[T_np]).max()
        rows.append((f"SPD step, {links}-link chain", T_cpp, t_cpp / T_cpp * 1e6, t_np / T_np * 1e6, agree))

    # 2-link, 10,000 steps, one call from Python (validation included)
    ch = dc.PlanarChain([1.0, 1.0], [1.0, 1.0])
    t = np.arange(10_001) * dt
    q_ref, qd_ref = np.c_[np.cos(t), np.cos(t) + 1], np.c_[-np.sin(t), -np.sin(t)]
    t_run = best_of(lambda: dc.track(ch, q_ref, qd_ref, dt, 3e4, 3e4 * dt), 7)

    step40 = rows[-1][2]
    lines = [
        "| case | steps | C++ loop (us/step) | NumPy SPD (us/step) | speed-up | max abs diff |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, T, a, b, d in rows:
        lines.append(f"| {name} | {T} | {a:.2f} | {b:.1f} | {b / a:.0f}x | {d:.1e} |")
    lines.append("")
    lines.append(f"2-link run of 10,000 steps, one `directable.chain.track` call from Python: "
                 f"**{t_run * 1e3:.2f} ms** (target < 10 ms: {'met' if t_run < 0.01 else 'MISSED'}).  ")
    lines.append(f"40-link SPD step in the C++ loop: **{step40:.2f} us** (target < 20 us: "
                 f"{'met' if step40 < 20 else 'MISSED'}).")
    table = "\n".join(lines)
    print(table)
    if args.no_write:
        return
    publish("spd", "Stable PD tracking (issue 5)",
            "; best of several runs; explicit Euler, dt = 1/60, kp = 3e4, kd = kp dt. NumPy SPD: M and C from the "
            "C++ chain, the SPD solve and step in NumPy.", table)


if __name__ == "__main__":
    main()
