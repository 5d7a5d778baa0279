"""Character animation (Treuille thesis ch. 5): runtime decision, pose
synthesis, transition table, learning (warm HiGHS vs cold linprog; the
non-LP part vs NumPy) and value iteration (vs NumPy), in the same run.

    python benchmarks/bench_characters.py [--quick] [--scale]

``--scale`` adds the thesis's 384-clip navigation controller (long).
"""
from __future__ import annotations

import os
import sys
import time

import numpy as np

from bench_common import best, publish

import directable.characters as ch
from directable import _core
from directable.experiments import characters as ex
from reference import characters as ref

QUICK = "--quick" in sys.argv


NOTES = """
What changed (profiled with `perf record`: before, `Basis::values` with its gather of r, the AoS successors and a
scalar remainder of the 18-clip loops dominated): the learner's scan runs in column form (`choose_many`):
successors stored by variable, r laid out once per scan per distinct row of next clips as (nb, K) so no gather,
the clip axis padded to a multiple of 8 (AVX-512 without a scalar remainder), the terms accumulated in registers
8 states at a time, `x / scale` as a product; the characters kernels are now in the dispatched hot files. Value
iteration: each full sweep tries the previous policy first and skips a clip, exactly, when its cost plus alpha
times the least grid value of its next clip over the successor's last-axis cell cannot beat the best; once a sweep
changes at most one point in 1000 the policy is evaluated to the tolerance (the stopping rule is still the Bellman
residual <= 1e-9). perf after: `GridValue::corners` and the interpolation still take half of value iteration.

Times are CPU seconds of the process (`time.process_time`): with load averages of 12-20 on the 2 cores the wall
time is 5-10x larger and mostly waiting for a core. Single-threaded rows pass `threads=1`.

Changes behind the table (found by timing the pieces; perf was not run; before: table 3.3 s, decision 28 us, scan 1.4x NumPy, value iteration
8.9 s wall): Psi's rotation hoisted out of the per-joint loop (it took a sin and cos per joint and frame); the
transition table also stored as (K, K) arrays per quantity so a state's K successors and costs are straight
passes; the angle wrap without `fmod`; V at all K successors (or a whole block of samples' successors) from one
batched basis call; value iteration's policy evaluation in parallel and settled only to 1e-4 of the outer
residual, with evenly spaced axes located by a division. The LP: HiGHS dual simplex, warm-started, is 93 % of
the learning's wall time but about 1.3 s of CPU; its `threads=1` or `presolve="off"` did not reduce the CPU time.

Experiments (`directable.experiments.characters`, measured in this session, same load):
- sample deletion (degree 4, 8 d x 24 theta samples, 30 starts, 3 deletion seeds): cost ratios 1.018, 1.011,
  0.991 -- within 5 % both ways; with 8 theta-samples they were 0.92, 1.11, 1.07.
- spinning navigation (60 walking clips: spins -2, 0, 2 rad/s x 10 side-step directions x 2 feet): the
  earlier clip set spun only one way (0, 1.5, 3 rad/s), and since steps alternate feet (a right-first clip is the
  mirror image of a left-first one, its spin negated) every other step could at best stop spinning: the played
  spin missed 2 rad/s by 1.3 rad/s. With spins both ways the table learned at omega-hat = 0, 1.5, 3 and
  interpolated at 2 plays clips spinning at exactly 2 rad/s (mean |omega - omega-hat| 0.0), direction error
  0.30 rad, discounted cost 7.20 (learned at 2 directly: 7.20; greedy 10.15); 6 starts x 20 steps, 33 s wall at
  load 28. The test asserts the spin within 0.2 rad/s.
- torso separable (tau-hat learned at -0.4, 0, 0.4, asked 0.2): 10.31 against 10.29 learned directly.
- fixed obstacle: the obstacle is now also charged along each transition (`obstacle_samples=3`; one walk cycle
  covers ~1.1 m, more than twice sigma_O = 0.5 m, so charged only at the clip starts a policy can step across it
  between two samples) and the basis is Fig. 5.6's times P2(theta) (with u-v terms alone the LP cannot tell
  heading into the obstacle from heading away). Measured before these changes: value iteration 52 %, LP 2.5 %,
  greedy 0 %. With the new task and basis (18 clips, 57 terms per clip, 4
  samples per axis) the loop converged after 11 iterations (new pairs 1152, 1040, 1020, 986, 794, 586, 369, 209,
  53, 23, 4; 171 s of CPU, 17 min wall at load 7-28), and then the LP was found unbounded in the bumps' and the u-v
  polynomials' terms: `fixed_obstacle` now passes a box |r| <= 1e4 (`bounds=`). With it (40 episodes, 12 steps,
  obstacle 2-3 m ahead, sigma_O 0.5 m; 201 s wall at load 4-7, LP 200 s of it) the LP policy passes in 2.5 % of the
  episodes (closest pelvis approaches 0.24-0.32 m), greedy 0 %: NOT MET, the charging along transitions and the
  theta factor did not fix it; the test stays an expected failure. Next to try: the sampling near the obstacle
  (4 points per axis put none within sigma_O of it) and value iteration on this task as the reference.
- moving obstacles / crowd: with the obstacle charged along transitions, value functions tabulated over
  (u_dot, v_dot) in {-1.2, 0, 1.2}^2 m/s and a box |r| <= 1e4 (at 4 samples per axis the bumps' coefficients are
  otherwise unbounded), 8 crossing characters, 10 steps: 0 close encounters with and without avoidance, but the
  closest approach is 0.50 m with avoidance against 1.09 m without (392 s wall at load 28); 16 characters, 12
  steps, 4 samples per axis: 10 close encounters with avoidance against 0 without, closest 0.01 m against 0.96 m
  (93 s wall at load 5). NOT MET: avoidance makes the crossing worse, which points at the crowd's obstacle model
  (the neighbour's frame or velocity) rather than at the value function; the test is an expected failure.
- the thesis-scale controller (`thesis_scale()`: 384 clips, walk gait, samples of the walk clips only: 124 x 64 =
  7,936; the other clips' coefficients fixed at 0): clips 0.1 s, transition table 3.2 s wall, first scan 7,936
  rows; in its 30-minute limit (load 28 falling to 4) it solved 3 LPs
  (7,936, then 7,867 and 7,742 new rows: 1,860 free columns, the rest fixed at 0) and was still adding ~7,700 pairs
  per iteration, so it did NOT finish; the first LP and second scan took about 11 minutes of wall time at load 25-28
  (3 min of process CPU). Measured to the end on 2026-11-27 (11 LPs, 42,832 rows, 9 min of CPU, 384 MB; the
  float32 runtime table 7,688 B): see the session notes below.
"""


def cpu(fn, repeats=3):
    """Least CPU time (s) of fn() over `repeats` runs after a warm-up: on a shared, loaded machine the
    wall time mostly measures waiting for a core, the CPU time what the work costs. Single-threaded
    calls (threads=1) are timed where a team's spin-waits would count as work."""
    fn()
    out = float("inf")
    for _ in range(repeats):
        c0 = time.process_time()
        fn()
        out = min(out, time.process_time() - c0)
    return out


def nav(motion):
    return ch.Navigation(motion, gamma_x=0.1, gamma_psi=1.0, gamma_rho=1.0)


def numpy_decision(tab, rho, r, x, alpha, degrees=(2, 4), scales=(2.0, np.pi)):
    S, cost = ref.navigation(tab, rho, np.ones(len(rho), bool), 0.1, 1.0, 1.0, x[None, :])
    phi = ref.features(S[0], degrees, scales, (1, 2))
    return int(np.argmin(cost[0] + alpha * np.einsum("kb,kb->k", phi, r[S[0, :, 0].astype(int)])))


def main():
    rows = []
    load = os.getloadavg()[0]
    # 1. transition table, K = 384
    t0 = time.perf_counter()
    big = ch.synthetic_clips(ch.synthetic_walker(), counts="thesis", turns=(-1.2, -0.6, 0, 0.6, 1.2))
    t_clips = time.perf_counter() - t0
    reps = 1 if QUICK else 3
    c_table = cpu(lambda: ch.MotionModel(big, threads=1), reps)
    t_table = best(lambda: ch.MotionModel(big), repeats=reps)
    rows.append(("transition table, K = 384 (all pairs, Psi)", f"{c_table:.3f} s CPU (1 thread); {t_table:.3f} s wall (all cores)",
                 "<= 1 s", f"clips generated in {t_clips:.2f} s"))
    motion = ch.MotionModel(big)
    task = nav(motion)
    # 2. runtime decision, K = 384, nb = 15
    phi = ex.navigation_basis()
    r = np.random.default_rng(0).normal(size=(motion.K, phi.size))
    problem = _core.DecisionProblem(task._core, phi._core(task))
    x0 = np.array([0.0, 0.3, 0.5])
    n = 200 if QUICK else 2000
    c_run = cpu(lambda: problem.run("value", r, None, 0.9, x0, n)) / n
    t_run = best(lambda: problem.run("value", r, None, 0.9, x0, n)) / n
    tab = motion.transition_table()
    rho = motion.clips.params.rho
    c_np = cpu(lambda: [numpy_decision(tab, rho, r, x0, 0.9) for _ in range(20)]) / 20
    assert numpy_decision(tab, rho, r, x0, 0.9) == problem.choose("value", r, None, 0.9, x0)
    rows.append(("runtime decision, K = 384, nb = 15 (per clip, in an episode)",
                 f"{c_run * 1e6:.1f} us CPU ({t_run * 1e6:.1f} us wall)", "<= 20 us, >= 10x NumPy",
                 f"NumPy vectorised argmin {c_np * 1e6:.0f} us CPU: {c_np / c_run:.1f}x"))
    # 3. pose synthesis per frame, J = 19
    seq = np.random.default_rng(1).integers(motion.K, size=200)
    anim = motion.synthesize(seq)
    F = anim.frames.shape[0]
    c_syn = cpu(lambda: motion.synthesize(seq)) / F
    rows.append(("pose synthesis per frame, J = 19 (blends included)", f"{c_syn * 1e6:.2f} us CPU", "<= 2 us", f"{F} frames"))
    # 4. learning, K = 18, 8 x 8 samples, P2 P4
    m18 = ex.walking_motion()
    t18 = nav(m18)
    X = ch.samples(t18, per_dim=8)
    warm = ch.learn(t18, phi, X, solver="highspy")
    c_warm = cpu(lambda: ch.learn(t18, phi, X, solver="highspy", threads=1), reps)
    c0 = time.process_time()
    cold = ch.learn(t18, phi, X, solver="scipy-simplex", threads=1)
    c_cold = time.process_time() - c0
    c0 = time.process_time()
    ch.learn(t18, phi, X, solver="scipy", threads=1)
    c_ipm = time.process_time() - c0
    dr = np.max(np.abs(warm.value(X) - cold.value(X)))
    rows.append(("learning K = 18, 8x8 samples, P2(d) P4(theta), warm highspy, end to end",
                 f"{c_warm:.2f} s CPU ({warm.iterations} it, {warm.n_constraints} rows; wall {warm.seconds:.1f} s, "
                 f"LP {100 * warm.lp_seconds / warm.seconds:.0f} % of it)",
                 "<= 3 s, >= 5x cold linprog", f"cold linprog (highs) loop {c_cold:.2f} s CPU: {c_cold / c_warm:.1f}x; "
                 f"highs-ipm {c_ipm:.2f} s CPU; max |V_warm - V_cold| on samples {dr:.1e}"))
    # 5. the non-LP part: one scan of every sample, C++ vs NumPy
    L = _core.ValueLearning(_core.DecisionProblem(t18._core, phi._core(t18)), X, 0.9)
    rr = np.ascontiguousarray(warm.r)
    c_scan = cpu(lambda: [L.best_clips(rr, 1) for _ in range(10)]) / 10
    tab18, rho18 = m18.transition_table(), m18.clips.params.rho

    def numpy_scan():
        S, cost = ref.navigation(tab18, rho18, np.ones(m18.K, bool), 0.1, 1.0, 1.0, X)
        f = ref.features(S.reshape(-1, 3), (2, 4), (2.0, np.pi), (1, 2)).reshape(len(X), m18.K, -1)
        return np.argmin(cost + 0.9 * np.einsum("skb,skb->sk", f, rr[S[..., 0].astype(int)]), axis=1)

    c_nscan = cpu(numpy_scan)
    same = np.mean(numpy_scan() == L.best_clips(rr))
    rows.append((f"non-LP part: one scan of {len(X)} samples x {m18.K} clips", f"{c_scan * 1e3:.3f} ms CPU (1 thread)",
                 ">= 20x NumPy", f"NumPy {c_nscan * 1e3:.1f} ms CPU: {c_nscan / c_scan:.1f}x (same argmin on {100 * same:.0f} %)"))
    # 6. value iteration on 18 x 121 x 144
    grid = {"d": 31, "theta": 36} if QUICK else {"d": 121, "theta": 144}
    c0 = time.process_time()
    vi = ch.value_iteration(t18, grid, threads=1)
    c_vi = time.process_time() - c0
    axes = vi.axes
    # NumPy: time a few sweeps of plain value iteration and scale by the sweeps it needs
    c0 = time.process_time()
    ref.value_iteration(lambda S: ref.navigation(tab18, rho18, np.ones(m18.K, bool), 0.1, 1.0, 1.0, S),
                        m18.K, axes, (False, True), 0.9, tol=0.0, max_sweeps=3)
    c_np3 = time.process_time() - c0
    sweeps_needed = int(np.ceil(np.log(1e-9) / np.log(0.9)))
    c_np_vi = c_np3 / 3 * sweeps_needed
    rows.append((f"value iteration {m18.K} x {grid['d']} x {grid['theta']} (tol 1e-9)",
                 f"{c_vi:.2f} s CPU, 1 thread ({vi.sweeps} full sweeps, {vi.evaluations} evaluations)", "<= 3 s, >= 5x NumPy",
                 f"NumPy value iteration ~{c_np_vi:.0f} s CPU (3 sweeps incl. set-up {c_np3:.1f} s, x {sweeps_needed} sweeps): "
                 f"{c_np_vi / c_vi:.0f}x"))
    # 7. the thesis-scale controller
    if "--scale" in sys.argv:
        s = ex.thesis_scale(progress=True)
        rows.append((f"384-clip navigation (walk gait: {s['samples']} samples of its clips), 8x8 samples, P2 P4",
                     f"{s['seconds']:.1f} s wall ({s['cpu_seconds']:.1f} s CPU), {s['nbytes']} B, peak {s['peak_memory_mb']:.0f} MB",
                     "<= 45 min, < 13 KB, ~2 GB", f"{s['iterations']} it, {s['constraints']} rows, LP {s['lp_seconds']:.1f} s, "
                     f"clips {s['clips_seconds']:.1f} s, table {s['table_seconds']:.1f} s"))
    table = "| what | measured | target | compared with (same run) |\n|---|---|---|---|\n" + "\n".join(
        f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows)
    print(table)
    publish("characters", "Characters: clip blending, LP-learned value functions, runtime control",
            f", load average {load:.1f} at the start (the machine is shared: CPU times measure the work, "
            f"wall times also the wait for a core){' (--quick)' if QUICK else ''}", table + "\n" + NOTES)


if __name__ == "__main__":
    main()
