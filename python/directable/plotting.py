"""Plot helpers for comparing controlled runs (uncontrolled, PD, LQR, ...).

Every helper takes ``ax=None`` (a new figure is made when None), draws on
that Axes, returns it and never calls ``plt.show()``. matplotlib (a default
dependency) is imported lazily inside the functions, so importing
``directable.plotting`` costs nothing when plots are not needed.

A *run* is a :class:`directable.sim.SimulationResult` or a plain states array
``(T+1, n)``; ``runs`` is a mapping ``{label: run}`` (a dict keeps its order,
which sets the colours) or a sequence of ``(label, run)`` pairs.

    import directable.plotting as dp
    ax = dp.plot_tracking_error({"PD": pd_result, "LQR": lqr_result}, z_ref, dt=dt)
    ax.figure.savefig("error.png")
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

__all__ = [
    "plot_trajectories",
    "plot_tracking_error",
    "plot_control_effort",
    "plot_error_vs_effort",
    "tracking_error",
    "plot_particles",
    "particle_animation",
]

# Fixed colours for the usual labels so every figure of a comparison agrees.
_COLORS = {"reference": "black", "uncontrolled": "tab:green", "open loop": "tab:green", "pd": "tab:red",
           "lqr": "tab:blue"}


def _axes(ax, figsize=(7.0, 3.6)):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize, layout="constrained")
    return ax


def _items(runs) -> list:
    if isinstance(runs, Mapping):
        return list(runs.items())
    if isinstance(runs, Sequence) and all(isinstance(r, tuple) and len(r) == 2 for r in runs):
        return list(runs)
    raise TypeError("runs must be a mapping {label: run} or a sequence of (label, run) pairs")


def _color(label: str):
    return _COLORS.get(str(label).lower())


def _states(run, name="run") -> np.ndarray:
    x = getattr(run, "states", run)
    x = np.asarray(x, dtype=float)
    if x.ndim != 2:
        raise ValueError(f"{name} must be a SimulationResult or a (T+1, n) states array, got shape {x.shape}")
    return x


def _time(count: int, dt, t0=0.0) -> np.ndarray:
    if dt is None:
        return np.arange(count, dtype=float)
    return t0 + np.arange(count) * float(dt)


def _time_label(dt) -> str:
    return "step" if dt is None else "time [s]"


def _mark_push(ax, push, dt):
    """Shade the push interval; ``push`` = (start_step, end_step)."""
    if push is None:
        return
    a, b = push
    scale = 1.0 if dt is None else float(dt)
    ax.axvspan(a * scale, b * scale, color="tab:orange", alpha=0.25, lw=0, label="push")


def tracking_error(run, z_ref=None) -> np.ndarray:
    """``|z_i - z_ref[i]|`` of a run.

    Parameters
    ----------
    run : SimulationResult, TrackResult or (T+1, n) array
        The run (a plain states array needs ``z_ref``).
    z_ref : (>= T+1, n) array, optional
        Reference: the error is computed from the states, which also works for
        runs without a controller (their ``SimulationResult.tracking_error``
        is 0); without it the result's own ``tracking_error`` is used.

    Returns
    -------
    (T+1,) ndarray
        The distance per step, in state units.
    """
    if z_ref is None:
        if not hasattr(run, "tracking_error"):
            raise ValueError("z_ref is needed when the run is a plain states array")
        return np.asarray(run.tracking_error, dtype=float)
    x = _states(run)
    z_ref = np.asarray(z_ref, dtype=float)
    if z_ref.shape[-1] != x.shape[1] or z_ref.shape[0] < x.shape[0]:
        raise ValueError(f"z_ref must have shape (>= {x.shape[0]}, {x.shape[1]}), got {z_ref.shape}")
    return np.linalg.norm(x - z_ref[: x.shape[0]], axis=1)


def plot_trajectories(runs, z_ref=None, coords=None, dt=None, ax=None, coord_names=None, push=None, title=None):
    """Selected state coordinates of each run against time, with the reference.

    Each coordinate gets its own line style, each run its own colour.

    Parameters
    ----------
    runs : dict or sequence
        ``{label: SimulationResult or (T+1, n) states}`` or ``(label, run)`` pairs.
    z_ref : array_like, optional
        (T+1, n) reference, drawn as a wide grey band.
    coords : int or sequence of int, optional
        Indices of z to draw (default: the first one).
    dt : float, optional
        Time step in s; None puts steps on the x axis.
    ax : matplotlib.axes.Axes, optional
        Where to draw (a new figure when None).
    coord_names : sequence of str, optional
        Legend names of the coordinates (default ``z[i]``).
    push : tuple of int, optional
        (start_step, end_step) of a push, shaded.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _axes(ax)
    items = _items(runs)
    coords = [0] if coords is None else [int(c) for c in np.atleast_1d(coords)]
    names = coord_names if coord_names is not None else [f"z[{c}]" for c in coords]
    if len(names) != len(coords):
        raise ValueError(f"coord_names must name {len(coords)} coordinates, got {len(names)}")
    styles = ["-", "--", ":", "-."]
    if z_ref is not None:
        zr = np.asarray(z_ref, dtype=float)
        t = _time(zr.shape[0], dt)
        for k, (c, nm) in enumerate(zip(coords, names)):
            if not 0 <= c < zr.shape[1]:
                raise ValueError(f"coords must lie in [0, {zr.shape[1]}), got {c}")
            if items:  # a wide grey band under the runs
                ax.plot(t, zr[:, c], color="black", lw=2.2, alpha=0.35, ls=styles[k % 4], label=f"reference {nm}")
            else:  # the reference alone: one colour per coordinate
                ax.plot(t, zr[:, c], color=f"C{k % 10}", lw=1.4, label=f"reference {nm}")
    for label, run in items:
        x = _states(run, f"runs[{label!r}]")
        t = _time(x.shape[0], dt)
        for k, (c, nm) in enumerate(zip(coords, names)):
            if not 0 <= c < x.shape[1]:
                raise ValueError(f"coords must lie in [0, {x.shape[1]}), got {c}")
            ax.plot(t, x[:, c], color=_color(label), ls=styles[k % 4], lw=1.3, label=f"{label} {nm}")
    _mark_push(ax, push, dt)
    ax.set_xlabel(_time_label(dt))
    ax.set_ylabel("coordinate value")
    ax.set_title(title or "Trajectories vs reference")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", ncols=2 if (len(items) + 1) * len(coords) > 5 else 1)
    return ax


def plot_tracking_error(runs, z_ref=None, dt=None, ax=None, log=True, push=None, title=None):
    """Tracking error ``|z_i - z_ref[i]|`` of each run against time.

    Parameters
    ----------
    runs : dict or sequence
        ``{label: SimulationResult or (T+1, n) states}`` or ``(label, run)`` pairs.
    z_ref : array_like, optional
        (T+1, n) reference; needed for uncontrolled runs and plain arrays.
    dt : float, optional
        Time step in s; None puts steps on the x axis.
    ax : matplotlib.axes.Axes, optional
        Where to draw (a new figure when None).
    log : bool
        Logarithmic y axis.
    push : tuple of int, optional
        (start_step, end_step) of a push, shaded.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _axes(ax)
    for label, run in _items(runs):
        e = tracking_error(run, z_ref)
        ax.plot(_time(e.size, dt), e, color=_color(label), lw=1.4, label=str(label))
    _mark_push(ax, push, dt)
    if log:
        ax.set_yscale("log")
    ax.set_xlabel(_time_label(dt))
    ax.set_ylabel(r"tracking error $\|z - z_{ref}\|$")
    ax.set_title(title or "Tracking error")
    ax.grid(True, which="both" if log else "major", alpha=0.3)
    ax.legend(fontsize="small")
    return ax


def _effort(run) -> np.ndarray:
    if hasattr(run, "effort"):
        return np.asarray(run.effort, dtype=float)
    w = np.asarray(run, dtype=float)
    if w.ndim == 1:
        return w
    if w.ndim == 2:
        return np.sum(np.square(w), axis=1)  # feedback forces (T, s) -> |w_fb|^2
    raise ValueError(f"a run must be a SimulationResult, an effort array (T,) or forces (T, s), got shape {w.shape}")


def plot_control_effort(runs, dt=None, ax=None, cumulative=False, push=None, log=False, title=None):
    """Feedback control effort of each run against time.

    Parameters
    ----------
    runs : dict or sequence
        ``{label: SimulationResult, per-step effort (T,), or feedback forces (T, s)}``.
    dt : float, optional
        Time step in s; None puts steps on the x axis.
    ax : matplotlib.axes.Axes, optional
        Where to draw (a new figure when None).
    cumulative : bool
        False draws ``|w_fb,i|^2``; True the running total ``sum_{j<=i} |w_fb,j|^2 dt``,
        whose last value is ``directable.sim.summary(...)["feedback_effort"]``.
    push : tuple of int, optional
        (start_step, end_step) of a push, shaded.
    log : bool
        Symmetric-log y axis.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _axes(ax)
    step = 1.0 if dt is None else float(dt)
    for label, run in _items(runs):
        e = _effort(run)
        y = np.cumsum(e) * step if cumulative else e
        ax.plot(_time(e.size, dt), y, color=_color(label), lw=1.4, label=str(label))
    _mark_push(ax, push, dt)
    if log:
        ax.set_yscale("symlog", linthresh=1e-6)
    ax.set_xlabel(_time_label(dt))
    ax.set_ylabel(r"cumulative effort $\sum |w_{fb}|^2 dt$" if cumulative else r"effort $|w_{fb}|^2$")
    ax.set_title(title or ("Cumulative control effort" if cumulative else "Control effort"))
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return ax


def plot_error_vs_effort(points, ax=None, curve=None, curve_label="PD gain sweep", annotate=True, log=True,
                         xlabel=r"feedback effort $\sum |w_{fb}|^2 dt$ [N$^2$ s]",
                         ylabel=r"final distance $\|z_T - z_{ref,T}\|$", title=None):
    """Scatter of error against control effort, one marker per controller.

    Parameters
    ----------
    points : dict or sequence
        ``{label: (effort, error)}`` or a sequence of ``(label, effort, error)``.
    ax : matplotlib.axes.Axes, optional
        Where to draw (a new figure when None).
    curve : tuple of array_like, optional
        ``(efforts, errors)`` of other runs (e.g. a PD gain sweep), drawn as one
        line ordered by effort, to show what every effort level buys. Points
        that a log axis cannot show (error <= 0, non-finite) are left out, and
        the axes are sized to hold the whole curve.
    curve_label : str
        Legend entry of the curve.
    annotate : bool
        Write each marker's label beside it.
    log : bool
        Symmetric-log effort axis (an effort of 0, the uncontrolled run, stays
        visible) and log error axis.
    xlabel, ylabel : str
        Axis labels; give the units of your problem (the defaults assume
        forces in N and time in s for the effort).
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _axes(ax, figsize=(5.2, 4.2))
    if isinstance(points, Mapping):
        rows = [(lab, *pt) for lab, pt in points.items()]
    else:
        rows = [tuple(p) for p in points]
    if any(len(r) != 3 for r in rows):
        raise ValueError("points must be {label: (effort, error)} or a sequence of (label, effort, error)")
    shown = [float(r[2]) for r in rows]
    efforts = [float(r[1]) for r in rows]
    if curve is not None:
        ce, cr = (np.asarray(c, dtype=float).ravel() for c in curve)
        if ce.shape != cr.shape:
            raise ValueError(f"curve must be (efforts, errors) of one length, got {ce.size} and {cr.size}")
        keep = np.isfinite(ce) & np.isfinite(cr) & ((cr > 0) if log else True)
        ce, cr = ce[keep], cr[keep]
        order = np.lexsort((cr, ce))
        ax.plot(ce[order], cr[order], color="tab:red", alpha=0.45, lw=1.2, marker=".", label=curve_label)
        shown += cr.tolist()
        efforts += ce.tolist()
    markers = ["o", "s", "D", "^", "v", "P", "X"]
    for k, (label, eff, err) in enumerate(rows):
        eff = float(eff)
        ax.scatter([eff], [err], s=70, marker=markers[k % len(markers)], color=_color(label), zorder=3,
                   label=str(label), edgecolors="black", linewidths=0.6)
        if annotate:
            ax.annotate(str(label), (eff, err), textcoords="offset points", xytext=(6, 6), fontsize="small")
    if log:
        positive = [e for e in efforts if e > 0]
        ax.set_xscale("symlog", linthresh=min(positive) if positive else 1.0)
        ax.set_yscale("log")
        errs = [e for e in shown if e > 0 and np.isfinite(e)]
        if errs:  # everything drawn stays inside the axes
            ax.set_ylim(min(errs) / 2.0, max(errs) * 2.0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title or "Error vs effort")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    return ax


def _particle_args(positions, forces):
    pos = np.asarray(positions, dtype=float)
    if pos.ndim != 3 or pos.shape[2] != 2 or pos.shape[0] < 1:
        raise ValueError(f"positions must be (frames, N, 2), got shape {pos.shape}")
    if forces is None:
        return pos, None
    F = np.asarray(forces, dtype=float)
    if F.ndim != 3 or F.shape[1:] != pos.shape[1:] or F.shape[0] not in (pos.shape[0], pos.shape[0] - 1):
        raise ValueError(f"forces must be (frames, N, 2) or (frames-1, N, 2) with positions {pos.shape}, "
                         f"got shape {F.shape}")
    mag = np.linalg.norm(F, axis=2)
    if len(mag) == len(pos) - 1:  # forces[k] acts over frame k -> colours positions[k+1]; frame 0 uncoloured
        mag = np.vstack([np.zeros((1, mag.shape[1])), mag])
    return pos, mag


def plot_particles(positions, forces=None, ax=None, vmax=None, cmap="viridis", size=8.0, xlim=(0, 1), ylim=(0, 1),
                   colorbar=True, title=None):
    """Particles coloured by the control force magnitude |F|.

    Parameters
    ----------
    positions : (N, 2) array
        Positions (m).
    forces : (N, 2) array, optional
        Control forces (N); None draws one colour.
    ax : matplotlib Axes, optional
        Where to draw (a new figure when None).
    vmax : float, optional
        Top of the colour scale (N); None: the largest |F|.
    cmap : str, optional
        Colour map.
    size : float, optional
        Marker size (points^2).
    xlim, ylim : (2,) sequence, optional
        Axis limits (m).
    colorbar : bool, optional
        Add a colour bar labelled ``|F| (N)``.
    title : str, optional
        Axes title.

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _axes(ax, figsize=(4.0, 4.0))
    pos = np.asarray(positions, dtype=float)
    if pos.ndim != 2 or pos.shape[1] != 2:
        raise ValueError(f"positions must be (N, 2), got shape {pos.shape}")
    c = None
    if forces is not None:
        F = np.asarray(forces, dtype=float)
        if F.shape != pos.shape:
            raise ValueError(f"forces must have the shape of positions {pos.shape}, got {F.shape}")
        c = np.linalg.norm(F, axis=1)
    sc = ax.scatter(pos[:, 0], pos[:, 1], c=c, s=size, cmap=cmap, vmin=0.0 if c is not None else None,
                    vmax=vmax if c is not None else None)
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    if c is not None and colorbar:
        ax.figure.colorbar(sc, ax=ax, label="|F| (N)")
    if title:
        ax.set_title(title)
    return ax


def particle_animation(positions, forces, path, fps=10, every=1, ax=None, vmax=None, cmap="viridis", size=8.0,
                       xlim=(0, 1), ylim=(0, 1), dpi=80, title="frame {frame}"):
    """Writes an animated GIF of particle snapshots coloured by the control
    force magnitude (matplotlib's PillowWriter).

    Parameters
    ----------
    positions : (frames, N, 2) array
        Positions (m).
    forces : (frames, N, 2) or (frames-1, N, 2) array, or None
        Control forces (N); in the second form force k acts over frame k,
        colouring ``positions[k+1]`` (e.g. ``ShapeRun.forces``).
    path : str or os.PathLike
        The GIF to write.
    fps : int, optional
        Frames per second of the GIF.
    every : int, optional
        Keep every ``every``-th frame; the GIF has ``ceil(frames / every)``.
    ax : matplotlib Axes, optional
        Where to draw (a new figure when None).
    vmax : float, optional
        Top of the colour scale (N); None: the largest |F|, fixed over the
        animation.
    cmap, size, xlim, ylim
        As in :func:`plot_particles`.
    dpi : int, optional
        Resolution of the GIF.
    title : str, optional
        Per-frame title, formatted with ``frame``.

    Returns
    -------
    matplotlib.axes.Axes
        Its figure holds the last frame.
    """
    from matplotlib.animation import FuncAnimation, PillowWriter

    pos, mag = _particle_args(positions, forces)
    every = int(every)
    if every < 1:
        raise ValueError(f"every must be >= 1, got {every}")
    if int(fps) < 1:
        raise ValueError(f"fps must be >= 1, got {fps}")
    keep = np.arange(0, len(pos), every)
    ax = _axes(ax, figsize=(4.0, 4.0))
    top = vmax if vmax is not None else (float(mag.max()) if mag is not None and mag.max() > 0 else 1.0)
    sc = ax.scatter(pos[0, :, 0], pos[0, :, 1], c=None if mag is None else mag[0], s=size, cmap=cmap,
                    vmin=0.0 if mag is not None else None, vmax=top if mag is not None else None)
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    if mag is not None:
        ax.figure.colorbar(sc, ax=ax, label="|F| (N)")

    def draw(k):
        sc.set_offsets(pos[k])
        if mag is not None:
            sc.set_array(mag[k])
        if title:
            ax.set_title(title.format(frame=int(k)))
        return (sc,)

    anim = FuncAnimation(ax.figure, draw, frames=keep, blit=False)
    anim.save(str(path), writer=PillowWriter(fps=int(fps)), dpi=dpi)
    return ax
