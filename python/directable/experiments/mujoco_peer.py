"""Stable PD against its peers on MuJoCo: explicit PD, SPD (ours) and MuJoCo's own
``position`` actuators integrated with ``implicitfast``, on the humanoid of
``mujoco_scenes`` (root welded, 24 DOFs) tracking the kick motion.

Gains: ``kp_j = k m_sup_j`` (``m_sup_j`` the mass the DOF supports, kg;
``k`` in N m / (rad kg)), ``kd_j = c kp_j dt`` (the position actuators get
``kv = kd``). PD and SPD servo to the reference positions and velocities
(eq. 4 and 11; SPD targets step ``n+1``, PD step ``n``); a position actuator
servos to the next reference position with zero target velocity (MuJoCo's
actuator has no velocity reference), its ``kp`` part explicit and its
``kv`` part implicit in ``implicitfast``; on ball joints its error is the
difference of rotation-vector components, not the manifold difference.
PD and SPD run with MuJoCo's Euler integrator (joint damping implicit).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from .. import mujoco as dm
from .._validate import real
from . import mujoco_scenes as ms

CONTROLLERS = ("pd", "spd", "position")
DTS = (1 / 30, 1 / 60, 1 / 120)


def fixed_humanoid(controller, kp=None, kv=None, dt=1 / 30):
    """The humanoid of ``mujoco_scenes`` with its root welded at 1 m.

    Parameters
    ----------
    controller : {"pd", "spd", "position"}
        "position" adds one MuJoCo ``position`` actuator per DOF (gains
        ``kp``, ``kv``) and integrates with ``implicitfast``; otherwise
        MuJoCo's Euler integrator and no actuators (the servo writes
        ``qfrc_applied``).
    kp : (24,) array_like, optional
        Position gains of the actuators (N m / rad), one per DOF; only for
        "position".
    kv : (24,) array_like, optional
        Velocity gains of the actuators (N m s / rad); only for "position".
    dt : float
        Time step (s).

    Returns
    -------
    mujoco.MjModel
        The welded humanoid, 24 DOFs, ``opt.timestep = dt``.
    """
    mujoco = dm._mj
    xml = ms.humanoid_xml().replace('<freejoint name="root"/>', "")
    if controller == "position":
        xml = xml.replace('integrator="Euler"', 'integrator="implicitfast"')
        base = mujoco.MjModel.from_xml_string(xml)
        lines = []
        k = 0
        for j in range(base.njnt):
            name, ball = base.joint(j).name, int(base.joint(j).type[0]) == 1
            for axis in (np.eye(3) if ball else [None]):
                gear = "" if axis is None else ' gear="{} {} {}"'.format(*axis.astype(int))
                lines.append(f'<position joint="{name}"{gear} kp="{kp[k]:.17g}" kv="{kv[k]:.17g}"/>')
                k += 1
        xml = xml.replace("</mujoco>", "<actuator>" + "".join(lines) + "</actuator></mujoco>")
    m = mujoco.MjModel.from_xml_string(xml)
    m.opt.timestep = dt
    return m


class _PositionServo:
    target = "ctrl"

    def __init__(self, ctrl_ref):
        self.ctrl_ref = ctrl_ref
        self.steps = ctrl_ref.shape[0] - 1

    def control(self, i, data):
        return self.ctrl_ref[i + 1]


@dataclass
class PeerRun:
    """One tracking run of the welded humanoid (``track``).

    Parameters
    ----------
    controller : str
        "pd", "spd" or "position".
    dt : float
        Time step (s).
    k : float
        Gain per supported mass: ``kp = k m_sup`` (N m / (rad kg)).
    qpos : (T+1, 24) ndarray
        Joint positions of the run (rad); rows after a divergence are NaN.
    qpos_ref : (T+1, 24) ndarray
        The reference positions (rad).
    tau : (T, 24) ndarray
        Joint torques applied (N m).
    error : (T+1,) ndarray
        Largest joint error per step (rad), on the joint manifold.
    diverged_at : int
        The first bad step, -1 if none.
    """
    controller: str
    dt: float
    k: float
    qpos: np.ndarray
    qpos_ref: np.ndarray
    tau: np.ndarray
    error: np.ndarray
    diverged_at: int

    @property
    def stable(self):
        """No divergence and the error stays below pi (a limp, sagging body is stable; an
        oscillation that grows is not)."""
        return self.diverged_at < 0 and np.nanmax(self.error) < np.pi

    @property
    def smoothness(self):
        """RMS torque rate (N m / s) over the run, inf if diverged."""
        if self.diverged_at >= 0:
            return np.inf
        return float(np.sqrt(np.mean(np.square(np.diff(self.tau, axis=0) / self.dt))))


def track(controller, k, dt=1 / 30, c=2.0, hold=0.5):
    """Track the kick motion with one servo on the welded humanoid.

    Parameters
    ----------
    controller : {"pd", "spd", "position"}
        Explicit PD, Stable PD (eq. 11), or MuJoCo's position actuators.
    k : float
        Gain per supported mass (N m / (rad kg)): ``kp = k m_sup``, >= 0.
    dt : float
        Time step (s), > 0.
    c : float
        Damping ratio of the gains: ``kd = c kp dt``, >= 0.
    hold : float
        Seconds the first keyframe is held before the motion starts.

    Returns
    -------
    PeerRun
        Positions, torques and errors of the run; a divergence is in
        ``diverged_at`` (no warning).
    """
    mujoco = dm._mj
    if controller not in CONTROLLERS:
        raise ValueError(f"controller must be one of {CONTROLLERS}, got {controller!r}")
    k, dt, c = real(k, "k"), real(dt, "dt"), real(c, "c")
    if not (k >= 0 and dt > 0 and c >= 0):
        raise ValueError(f"k, dt and c must be >= 0 (dt > 0), got k={k}, dt={dt}, c={c}")
    body = fixed_humanoid("spd", dt=dt)
    m_sup = dm.supported_mass(body)
    kp = k * m_sup
    kd = c * kp * dt
    # the keyframes in the tangent space of the welded model: the humanoid's minus the root
    free = ms.humanoid()
    q_free = ms.keyframe_reference(free, "kick", dt, hold=hold)
    qpos_ref = q_free[:, 7:]
    qvel_ref, _ = dm.reference_velocities(body, qpos_ref, dt)
    model = fixed_humanoid(controller, kp, kd, dt) if controller == "position" else body
    data = mujoco.MjData(model)
    data.qpos[:] = qpos_ref[0]
    data.qvel[:] = qvel_ref[0]
    if controller == "position":
        ctrl_ref = dm.tangent_of(body, qpos_ref)[:, :body.nv]
        servo = _PositionServo(ctrl_ref)
    else:
        servo = dm.SPDTracker(model, qpos_ref, qvel_ref, kp, kd, controller=controller)
    taus = []
    record = (lambda i, m, d: taus.append(np.array(d.qfrc_actuator))) if controller == "position" else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = dm.run(model, data, servo, servo.steps, callback=record)
    T = servo.steps
    if controller == "position":
        tau = np.full((T, model.nv), np.nan)
        tau[:len(taus)] = taus
    else:
        tau = r.u
    err = np.full(T + 1, np.nan)
    e = np.zeros(model.nv)
    for i in range(T + 1):
        if np.all(np.isfinite(r.qpos[i])):
            mujoco.mj_differentiatePos(model, e, 1.0, qpos_ref[i], r.qpos[i])
            err[i] = np.max(np.abs(e))
    return PeerRun(controller, dt, k, r.qpos, qpos_ref, tau, err, r.diverged_at)


def largest_stable_gain(controller, dt, c=2.0, lo=1.0, hi=1e8, iters=12, hold=0.0):
    """Largest gain at which ``track`` stays stable, by bisection on ``log k``.

    Parameters
    ----------
    controller : {"pd", "spd", "position"}
        The servo (see ``track``).
    dt : float
        Time step (s).
    c : float
        Damping ratio: ``kd = c kp dt``.
    lo, hi : float
        The bracket of ``k`` (N m / (rad kg)).
    iters : int
        Bisection steps (each one ``track`` run).
    hold : float
        Seconds the first keyframe is held.

    Returns
    -------
    float
        The largest stable ``k`` found (stable: no divergence, error < pi);
        ``hi`` itself if stable there, 0 if ``lo`` is not.
    """
    if track(controller, hi, dt, c, hold).stable:
        return float(hi)
    if not track(controller, lo, dt, c, hold).stable:
        return 0.0
    a, b = np.log(lo), np.log(hi)
    for _ in range(iters):
        mid = 0.5 * (a + b)
        if track(controller, float(np.exp(mid)), dt, c, hold).stable:
            a = mid
        else:
            b = mid
    return float(np.exp(a))


def compare(dts=DTS, k_equal=300.0, c=2.0, iters=12, hold=0.5):
    """The comparison of the three servos over time steps.

    Parameters
    ----------
    dts : sequence of float
        Time steps (s).
    k_equal : float
        The gain (N m / (rad kg)) at which error and smoothness are compared.
    c : float
        Damping ratio: ``kd = c kp dt``.
    iters : int
        Bisection steps of ``largest_stable_gain``.
    hold : float
        Seconds the first keyframe is held in the equal-gain runs.

    Returns
    -------
    list of dict
        One row per (dt, controller): ``controller``, ``dt`` (s), ``k_max``
        (largest stable k), ``error`` (max tracking error at ``k_equal``,
        rad; inf if unstable) and ``smoothness`` (RMS torque rate, N m/s).
    """
    rows = []
    for dt in dts:
        for ctrl in CONTROLLERS:
            run = track(ctrl, k_equal, dt, c, hold)
            rows.append(dict(controller=ctrl, dt=float(dt),
                             k_max=largest_stable_gain(ctrl, dt, c, iters=iters),
                             error=float(np.nanmax(run.error)) if run.stable else np.inf,
                             smoothness=run.smoothness))
    return rows


def table(rows) -> str:
    """Markdown table of ``compare``'s rows.

    Parameters
    ----------
    rows : list of dict
        What ``compare`` returns.

    Returns
    -------
    str
        A Markdown table, one line per row.
    """
    out = ["| controller | dt (s) | largest stable k (kp = k m_sup) | max error at equal k (rad) | "
           "RMS torque rate (N m/s) |", "|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['controller']} | 1/{round(1 / r['dt'])} | {r['k_max']:.3g} | {r['error']:.3g} | "
                   f"{r['smoothness']:.3g} |")
    return "\n".join(out)


def verdict(rows) -> str:
    """Plain sentences on where MuJoCo's implicit position actuators match SPD, and where not.

    Parameters
    ----------
    rows : list of dict
        What ``compare`` returns.

    Returns
    -------
    str
        One sentence per time step: largest stable gain, error and torque
        rate at the equal gain, position actuators against SPD.
    """
    out = []
    for dt in sorted({r["dt"] for r in rows}, reverse=True):
        by = {r["controller"]: r for r in rows if r["dt"] == dt}
        if "spd" not in by or "position" not in by:
            continue
        s, p = by["spd"], by["position"]
        parts = []
        if p["k_max"] >= s["k_max"]:
            parts.append(f"as stable as SPD (largest stable k {p['k_max']:.3g} vs {s['k_max']:.3g})")
        else:
            parts.append(f"less stable than SPD (largest stable k {p['k_max']:.3g} vs {s['k_max']:.3g})")
        if p["error"] <= s["error"]:
            parts.append(f"as accurate or better at the equal gain ({p['error']:.3g} vs {s['error']:.3g} rad)")
        else:
            parts.append(f"less accurate at the equal gain ({p['error']:.3g} vs {s['error']:.3g} rad)")
        if p["smoothness"] <= s["smoothness"]:
            parts.append(f"as smooth or smoother ({p['smoothness']:.3g} vs {s['smoothness']:.3g} N m/s)")
        else:
            parts.append(f"rougher ({p['smoothness']:.3g} vs {s['smoothness']:.3g} N m/s)")
        pd = by.get("pd")
        tail = f"; explicit PD is stable only up to k = {pd['k_max']:.3g}" if pd is not None else ""
        out.append(f"At dt = 1/{round(1 / dt)} s MuJoCo's position actuators are " + ", ".join(parts) + tail + ".")
    return " ".join(out)


def plot(rows, ax=None):
    """Largest stable gain against the time step, per controller (log-log).

    Parameters
    ----------
    rows : list of dict
        What ``compare`` returns.
    ax : matplotlib.axes.Axes, optional
        Where to draw (a new figure if None).

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(5, 3.5))
    for ctrl in CONTROLLERS:
        pts = [(r["dt"], r["k_max"]) for r in rows if r["controller"] == ctrl]
        ax.loglog([p[0] for p in pts], [max(p[1], 1e-1) for p in pts], "o-", label=ctrl)
    ax.set_xlabel("time step dt (s)")
    ax.set_ylabel("largest stable k (N m / (rad kg))")
    ax.legend()
    return ax
