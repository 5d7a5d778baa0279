"""LQR vs PD on the built-in Duffing spring chain (Barbic & Popovic 2008, sec. 6).

The story, each step a function so that notebooks and tests can reuse it:

1. ``make_scenario``: the spring chain (``z = [x, v]``, every mass driven),
   a reference ``z_ref`` made by rolling out a smooth sinusoidal feed-forward
   force program ``w_ff`` open loop, and a user push (a strong force impulse
   on two middle masses half-way through).
2. ``lqr_solution``: linearize ``A_i = dF/dz(z_ref[i])`` and precompute the
   time-varying LQR gains of ``int z'Q z + w'R w dt + z_T' Q_final z_T`` in
   the paper's "gentle forces" regime: ``Q = alpha_Q I`` small, ``R = alpha_R
   I``, ``Q_final`` large.
3. ``run_scenario``: three runs under the same push: uncontrolled (``w = w_ff``
   open loop), PD (``w = w_ff - kp dx - kd dv``) and LQR
   (``w = w_ff + K_i (z - z_ref[i])``).
4. ``match_pd``: the scalar PD gain ``g`` (``kp = g``, ``kd = 2 sqrt(g m)``,
   critically damped for a free mass) is found by bisection so that PD spends
   the same feedback effort ``sum |w_fb|^2 dt`` as LQR; then the final
   distance to the reference's final state and the RMS tracking error are
   compared. The claim "LQR beats PD at equal effort" is measured here, not
   assumed. As in the paper, PD is also tuned to LQR's final error to show
   how much more effort it then needs.

``run_demo`` does all of it, writes PNG plots and prints a summary table;
``python -m directable demo`` / ``directable demo`` call it.
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field

import numpy as np

from .. import lqr, models, sim

__all__ = [
    "Scenario",
    "make_model",
    "reference_forces",
    "make_scenario",
    "lqr_solution",
    "run_scenario",
    "metrics",
    "pd_controller",
    "match_pd",
    "format_table",
    "run_demo",
]

#: Default cost weights (the paper's gentle-force regime: tiny running state
#: cost, control ten times dearer, large final cost).
ALPHA_Q = 1e-3
ALPHA_R = 1e-2
Q_FINAL = 1e3


@dataclass
class Scenario:
    """Everything a controlled run needs: model, reference, push.

    Parameters
    ----------
    model : Model
        The plant (state (n,), control (s,)).
    dt : float
        Step (s).
    z0 : (n,) ndarray
        Start state.
    w_ff : (T, s) ndarray
        Feed-forward force program (N).
    z_ref : (T+1, n) ndarray
        Its open-loop rollout: the reference.
    disturbance : (T, s) ndarray
        The user push (N).
    push_steps : tuple of int
        (first step, end step) of the push.
    pushed : list of int
        Indices of the pushed masses.
    push_force : float
        Size of the push (N).
    masses : int
        Number of masses of the chain.
    info : dict, optional
        Further facts about the scene.
    """

    model: object
    dt: float
    z0: np.ndarray
    w_ff: np.ndarray  #: (T, s) feed-forward force program
    z_ref: np.ndarray  #: (T+1, n) its open-loop rollout: the reference
    disturbance: np.ndarray  #: (T, s) the user push
    push_steps: tuple  #: (first step, end step) of the push
    pushed: list  #: indices of the pushed masses
    push_force: float
    masses: int
    info: dict = field(default_factory=dict)

    @property
    def steps(self) -> int:
        """Number of steps T."""
        return self.w_ff.shape[0]

    @property
    def z_final(self) -> np.ndarray:
        """(n,) last reference state."""
        return self.z_ref[-1]

    @property
    def time(self) -> np.ndarray:
        """(T+1,) times of the reference states (s)."""
        return np.arange(self.steps + 1) * self.dt


def make_model(masses=8, mass=1.0, stiffness=40.0, cubic=400.0, damping=0.2):
    """The built-in nonlinear (Duffing) spring chain, every mass actuated.

    Parameters
    ----------
    masses : int, optional
        Number of masses m.
    mass, stiffness, cubic, damping : float, optional
        As in :func:`directable.models.spring_chain` (kg, N/m, N/m^3, N s/m).

    Returns
    -------
    SpringChain
    """
    return models.spring_chain(masses, mass=mass, stiffness=stiffness, cubic=cubic, damping=damping)


def reference_forces(masses, steps, dt, amplitude=6.0, seed=0) -> np.ndarray:
    """A smooth feed-forward force program.

    One sinusoid per mass (frequency 0.3-0.8 Hz, random phase) faded in over 0.5 s.

    Parameters
    ----------
    masses : int
        Number of masses m.
    steps : int
        Number of steps T.
    dt : float
        Step length (s).
    amplitude : float, optional
        Force amplitude (N).
    seed : int, optional
        Seed of the frequencies and phases.

    Returns
    -------
    (T, m) ndarray
        Forces (N).
    """
    rng = np.random.default_rng(seed)
    freq = rng.uniform(0.3, 0.8, masses)
    phase = rng.uniform(0.0, 2.0 * np.pi, masses)
    t = (np.arange(steps) * dt)[:, None]
    return amplitude * np.sin(2.0 * np.pi * freq * t + phase) * (1.0 - np.exp(-t / 0.5))


def make_scenario(masses=8, steps=800, dt=0.01, seed=0, amplitude=6.0, push_force=30.0, push_at=0.5,
                  push_duration=0.1) -> Scenario:
    """Model, reference (open-loop rollout of ``reference_forces``) and a push.

    Parameters
    ----------
    masses : int, optional
        Number of masses m.
    steps : int, optional
        Number of steps T, at least 20.
    dt : float, optional
        Step length (s).
    seed : int, optional
        Seed of the reference forces.
    amplitude : float, optional
        Reference force amplitude (N).
    push_force : float, optional
        Force (N) on the two middle masses.
    push_at : float, optional
        Start of the push as a fraction of the horizon.
    push_duration : float, optional
        Length of the push (s).

    Returns
    -------
    Scenario
    """
    masses, steps = int(masses), int(steps)
    if steps < 20:
        raise ValueError(f"steps must be at least 20, got {steps}")
    model = make_model(masses)
    w_ff = reference_forces(masses, steps, dt, amplitude, seed)
    z0 = np.zeros(2 * masses)
    z_ref = models.rollout(model, z0, w_ff, dt)
    at = int(round(push_at * steps))
    dur = max(1, int(round(push_duration / dt)))
    if not 0 <= at < steps - dur:
        raise ValueError(f"the push ({dur} steps from step {at}, push_at={push_at:g} of the horizon) must end "
                         f"before the last of the {steps} steps: use more steps or an earlier push_at")
    pushed = sorted({max(masses // 2 - 1, 0), masses // 2} & set(range(masses)))
    force = np.zeros(masses)
    force[pushed] = push_force
    disturbance = sim.push(steps, masses, at, force, dur)
    return Scenario(model, float(dt), z0, w_ff, z_ref, disturbance, (at, at + dur), pushed, float(push_force),
                    masses, {"seed": seed, "amplitude": amplitude})


def lqr_solution(scn: Scenario, alpha_Q=ALPHA_Q, alpha_R=ALPHA_R, q_final=Q_FINAL, method="exact", progress=None):
    """Linearize along the reference and solve the continuous LQR problem.

    Parameters
    ----------
    scn : Scenario
        From :func:`make_scenario`.
    alpha_Q, alpha_R, q_final : float, optional
        ``Q = alpha_Q I``, ``R = alpha_R I``, ``Q_final = q_final I``.
    method : {"exact", "simpson"}, optional
        As in :func:`directable.lqr.discretize`.
    progress : None, bool or callable(done, total), optional
        Progress report.

    Returns
    -------
    LQRSolution
        ``.K``, ``.P``, ``.discretization``.
    """
    A = models.linearize(scn.model, scn.z_ref, scn.dt)
    B = np.asarray(scn.model.control_matrix())
    return lqr.solve_continuous(A, B, scn.dt, alpha_Q, alpha_R, q_final, method=method, progress=progress)


def run_scenario(scn: Scenario, controller=None, progress=None):
    """One run under the scenario's push.

    Each run starts at reference step 0 (``sim.simulate``'s ``start_index``),
    so one Tracker serves any number of runs.

    Parameters
    ----------
    scn : Scenario
        From :func:`make_scenario`.
    controller : Tracker, optional
        None runs open loop (``w = w_ff``); a Tracker's ``w_ff`` must be the scenario's.
    progress : None, bool or callable(done, total), optional
        Progress report.

    Returns
    -------
    SimulationResult
    """
    if controller is None:
        return sim.simulate(scn.model, scn.z0, scn.steps, scn.dt, None, disturbance=scn.disturbance,
                            open_loop=scn.w_ff, progress=progress)
    return sim.simulate(scn.model, scn.z0, scn.steps, scn.dt, controller, disturbance=scn.disturbance,
                        progress=progress)


def tracking_error(scn: Scenario, result) -> np.ndarray:
    """``|z_i - z_ref[i]|`` computed from the states (also right for runs without a controller).

    Parameters
    ----------
    scn : Scenario
        From :func:`make_scenario`.
    result : SimulationResult
        A run.

    Returns
    -------
    (T+1,) ndarray
    """
    return np.linalg.norm(np.asarray(result.states) - scn.z_ref, axis=1)


def metrics(scn: Scenario, result) -> dict:
    """Final distance, RMS and largest tracking error, feedback effort and peak force of a run.

    Parameters
    ----------
    scn : Scenario
        From :func:`make_scenario`.
    result : SimulationResult
        A run.

    Returns
    -------
    dict
        ``final_distance``, ``rms_tracking_error``, ``max_tracking_error``,
        ``error_after_push`` (state units), ``feedback_effort`` (N^2 s),
        ``peak_feedback_force`` (N), and the rest of ``sim.summary``.
    """
    err = tracking_error(scn, result)
    s = sim.summary(result, scn.dt, scn.z_final)
    a, b = scn.push_steps
    return {
        "final_distance": s["final_distance"],
        "rms_tracking_error": float(np.sqrt(np.mean(err ** 2))),
        "max_tracking_error": float(err.max()),
        "error_after_push": float(err[b]),
        "feedback_effort": s["feedback_effort"],
        "total_effort": s["total_effort"],
        "peak_feedback_force": float(np.abs(np.asarray(result.feedback)).max()),
    }


def pd_controller(scn: Scenario, gain: float):
    """PD tracker with ``kp = gain``, ``kd = 2 sqrt(gain m)`` (critical damping of a free mass ``m``).

    Parameters
    ----------
    scn : Scenario
        From :func:`make_scenario`; the tracker uses its ``w_ff``.
    gain : float
        Stiffness gain (N/m).

    Returns
    -------
    Tracker
    """
    g = float(gain)
    masses = np.asarray(scn.model.masses, dtype=float)
    return lqr.pd_tracker(g, 2.0 * np.sqrt(g * masses), scn.z_ref, scn.w_ff)


def match_pd(scn: Scenario, target: float, key="feedback_effort", rtol=1e-3, lo=1e-6, hi=None, max_iter=80,
             history=None):
    """Bisection (on ``log g``) for the PD gain whose run has ``metrics[key] == target``.

    ``key="feedback_effort"`` grows with the gain, ``"final_distance"``
    shrinks with it.

    Parameters
    ----------
    scn : Scenario
        From :func:`make_scenario`.
    target : float
        Value of ``metrics[key]`` to match.
    key : str, optional
        Which metric.
    rtol : float, optional
        Relative tolerance of the match.
    lo, hi : float, optional
        Gain bracket (N/m); ``hi`` defaults to ``min(m) / dt^2`` (PD frequency
        ``1/dt``, where RK4 is still stable) when matching effort and to a tenth
        of that (RK4 still accurate) otherwise.
    max_iter : int, optional
        Bisection steps.
    history : list, optional
        Every tried (gain, metrics) is appended to it.

    Returns
    -------
    gain : float
    result : SimulationResult
    metrics : dict
    """
    increasing = key != "final_distance"
    if hi is None:
        hi = (1.0 if increasing else 0.1) * float(np.min(scn.model.masses)) / scn.dt ** 2

    def evaluate(g):
        try:
            res = run_scenario(scn, pd_controller(scn, g))
        except ValueError as exc:  # the explicit integrator blew up: the gain is too high
            if "diverged" not in str(exc):
                raise
            return None, None
        met = metrics(scn, res)
        if history is not None:
            history.append((g, met))
        return res, met

    def too_low(value):
        return value < target if increasing else value > target

    _, m_lo = evaluate(lo)
    for _ in range(6):
        _, m_hi = evaluate(hi)
        if m_hi is not None:
            break
        hi /= 10.0
    if m_lo is None or m_hi is None or too_low(m_hi[key]) or not too_low(m_lo[key]):
        if m_lo is None or m_hi is None:
            raise RuntimeError(f"PD runs diverged for gains in [{lo:g}, {hi:g}]")
        raise RuntimeError(f"PD gains in [{lo:g}, {hi:g}] give {key} in [{m_lo[key]:.4g}, {m_hi[key]:.4g}], "
                           f"which does not bracket the target {target:.4g}")
    best = None
    for _ in range(max_iter):
        g = math.sqrt(lo * hi)
        res, met = evaluate(g)
        if met is None:
            hi = g
            continue
        if best is None or abs(met[key] - target) < abs(best[2][key] - target):
            best = (g, res, met)
        if abs(met[key] - target) <= rtol * abs(target):
            break
        if too_low(met[key]):
            lo = g
        else:
            hi = g
    if best is None:
        raise RuntimeError(f"no PD gain in [{lo:g}, {hi:g}] gave a finite run")
    return best


def format_table(rows: dict, title="") -> str:
    """Plain-text table of {controller: metrics}.

    Parameters
    ----------
    rows : dict of str to dict
        Metrics of each controller (:func:`metrics`).
    title : str, optional
        First line.

    Returns
    -------
    str
    """
    cols = [("final_distance", "final dist"), ("rms_tracking_error", "RMS error"),
            ("max_tracking_error", "max error"), ("feedback_effort", "fb effort"),
            ("peak_feedback_force", "peak |w_fb|")]
    width = max(len(k) for k in rows) + 2
    lines = [title] if title else []
    header = "controller".ljust(width) + "".join(f"{name:>13}" for _, name in cols)
    lines += [header, "-" * len(header)]
    for label, met in rows.items():
        lines.append(label.ljust(width) + "".join(f"{met[k]:>13.4g}" for k, _ in cols))
    return "\n".join(lines)


def _save_plots(out_dir, scn, runs, points, sweep) -> list:
    from matplotlib.figure import Figure  # before the folder exists: no empty folder without matplotlib

    from .. import plotting

    os.makedirs(out_dir, exist_ok=True)
    dt, push = scn.dt, scn.push_steps
    files = []

    def save(fig, name):
        path = os.path.join(out_dir, name)
        fig.savefig(path, dpi=110)
        files.append(path)

    m = scn.masses
    fig = Figure(figsize=(9, 6.4), layout="constrained")
    axs = fig.subplots(2, 1, sharex=True)
    p = scn.pushed[-1]
    plotting.plot_trajectories(runs, scn.z_ref, coords=[p], coord_names=[f"x{p}"], dt=dt, ax=axs[0], push=push,
                               title=f"Position of pushed mass {p}")
    plotting.plot_trajectories(runs, scn.z_ref, coords=[m - 1], coord_names=[f"x{m - 1}"], dt=dt, ax=axs[1],
                               push=push, title=f"Position of the last mass {m - 1}")
    axs[0].set_xlabel("")
    fig.suptitle("Trajectories vs reference (thick grey: reference; orange: push)")
    save(fig, "trajectories.png")

    fig = Figure(figsize=(8, 4), layout="constrained")
    plotting.plot_tracking_error(runs, scn.z_ref, dt=dt, ax=fig.subplots(), push=push,
                                 title="Tracking error after the push (equal effort for PD and LQR)")
    save(fig, "tracking_error.png")

    fig = Figure(figsize=(8, 6.4), layout="constrained")
    axs = fig.subplots(2, 1, sharex=True)
    fb = {k: v for k, v in runs.items() if k != "uncontrolled"}
    plotting.plot_control_effort(fb, dt=dt, ax=axs[0], push=push, title="Feedback effort per step")
    plotting.plot_control_effort(fb, dt=dt, ax=axs[1], cumulative=True, push=push,
                                 title="Cumulative feedback effort (equal at the end by construction)")
    axs[0].set_xlabel("")
    save(fig, "control_effort.png")

    fig = Figure(figsize=(6, 4.6), layout="constrained")
    plotting.plot_error_vs_effort(points, ax=fig.subplots(), curve=sweep, curve_label="PD, other gains",
                                  xlabel=r"feedback effort $\sum |w_{fb}|^2 dt$ [N$^2$ s]",
                                  ylabel=r"final distance $\|z_T - z_{ref,T}\|$ [m, m/s]",
                                  title="Final distance to target vs feedback effort")
    save(fig, "error_vs_effort.png")
    return files


def run_demo(out_dir="demo-output", masses=8, steps=800, plots=True, progress=True, seed=0, dt=0.01,
             alpha_Q=ALPHA_Q, alpha_R=ALPHA_R, q_final=Q_FINAL, push_force=30.0, verbose=True) -> dict:
    """Uncontrolled vs PD vs LQR on the spring chain under one push.

    Parameters
    ----------
    out_dir : str, optional
        Folder of the PNG plots.
    masses : int, optional
        Number of masses.
    steps : int, optional
        Number of steps, at least 20.
    plots : bool, optional
        Write the plots.
    progress : bool, optional
        Show progress bars.
    seed : int, optional
        Seed of the reference forces.
    dt : float, optional
        Step length (s).
    alpha_Q, alpha_R, q_final : float, optional
        LQR weights, as in :func:`lqr_solution`.
    push_force : float, optional
        Push (N).
    verbose : bool, optional
        Print the table.

    Returns
    -------
    dict
        ``"results"`` {uncontrolled, pd, lqr: metrics}, ``"pd_gain"``,
        ``"pd_equal_final"`` (PD tuned to LQR's final distance: gain, metrics,
        effort ratio), ``"push_deviation"`` (tracking error of the uncontrolled
        run right after the push), ``"params"``, ``"timings"`` (seconds),
        ``"files"`` (PNGs written) and ``"table"`` (the printed text).
    """
    t_start = time.perf_counter()
    timings = {}
    scn = make_scenario(masses, steps, dt, seed, push_force=push_force)
    timings["reference"] = time.perf_counter() - t_start

    t = time.perf_counter()
    sol = lqr_solution(scn, alpha_Q, alpha_R, q_final, progress=progress)
    timings["lqr_precompute"] = time.perf_counter() - t

    t = time.perf_counter()
    res_unc = run_scenario(scn)
    res_lqr = run_scenario(scn, lqr.tracker(sol, scn.z_ref, scn.w_ff))
    timings["simulate_two_runs"] = time.perf_counter() - t
    met_unc, met_lqr = metrics(scn, res_unc), metrics(scn, res_lqr)

    t = time.perf_counter()
    history = []
    g_pd, res_pd, met_pd = match_pd(scn, met_lqr["feedback_effort"], "feedback_effort", history=history)
    try:
        g_fin, _, met_fin = match_pd(scn, met_lqr["final_distance"], "final_distance", rtol=1e-2, history=history)
        equal_final = {"gain": g_fin, **met_fin,
                       "effort_ratio": met_fin["feedback_effort"] / max(met_lqr["feedback_effort"], 1e-300)}
    except RuntimeError as exc:  # PD cannot reach LQR's final error with the gains tried
        equal_final = {"gain": float("nan"), "error": str(exc), "effort_ratio": float("inf")}
    timings["pd_bisection"] = time.perf_counter() - t

    results = {"uncontrolled": met_unc, "pd": met_pd, "lqr": met_lqr}
    push_dev = float(tracking_error(scn, res_unc)[scn.push_steps[1]])
    ratio = met_pd["final_distance"] / max(met_lqr["final_distance"], 1e-300)
    n, s = scn.model.state_dim(), scn.model.control_dim()
    title = (f"spring chain: {masses} masses (n={n}, s={s}), {steps} steps of dt={dt:g}; push {push_force:g} on "
             f"masses {scn.pushed} for steps {scn.push_steps[0]}-{scn.push_steps[1]}\n"
             f"LQR: Q={alpha_Q:g} I, R={alpha_R:g} I, Q_final={q_final:g} I; "
             f"PD: kp=g, kd=2 sqrt(g m), g={g_pd:.4g} matched to LQR's feedback effort")
    table = format_table({"uncontrolled": met_unc, "PD": met_pd, "LQR": met_lqr}, title)
    table += (f"\n\nat equal feedback effort ({met_lqr['feedback_effort']:.4g}), PD ends {ratio:.3g}x farther "
              f"from the final target than LQR ({met_pd['final_distance']:.3g} vs {met_lqr['final_distance']:.3g});"
              f"\ndeviation right after the push (uncontrolled): {push_dev:.3g}")
    if math.isfinite(equal_final["gain"]):
        table += (f"\nPD tuned to LQR's final distance (g={equal_final['gain']:.4g}) needs "
                  f"{equal_final['effort_ratio']:.3g}x LQR's effort")

    files = []
    if plots:
        t = time.perf_counter()
        runs = {"uncontrolled": res_unc, "PD": res_pd, "LQR": res_lqr}
        points = {"uncontrolled": (0.0, met_unc["final_distance"]),
                  "PD": (met_pd["feedback_effort"], met_pd["final_distance"]),
                  "LQR": (met_lqr["feedback_effort"], met_lqr["final_distance"])}
        sweep = ([h[1]["feedback_effort"] for h in history], [h[1]["final_distance"] for h in history])
        files = _save_plots(out_dir, scn, runs, points, sweep)
        timings["plots"] = time.perf_counter() - t
    timings["total"] = time.perf_counter() - t_start
    table += f"\n\ntime: {timings['total']:.2f} s (LQR precomputation {timings['lqr_precompute'] * 1e3:.1f} ms)"
    if files:
        table += f"\nplots: {', '.join(files)}"
    if verbose:
        print(table, flush=True)
    return {
        "results": results,
        "pd_gain": g_pd,
        "pd_equal_final": equal_final,
        "pd_over_lqr_final_distance": ratio,
        "push_deviation": push_dev,
        "params": {"masses": masses, "steps": steps, "dt": dt, "seed": seed, "alpha_Q": alpha_Q,
                   "alpha_R": alpha_R, "q_final": q_final, "push_force": push_force, "push_steps": scn.push_steps,
                   "pushed": scn.pushed},
        "timings": timings,
        "files": files,
        "table": table,
    }
