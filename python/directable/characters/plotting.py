"""Plots of character animation: stick figures, per-step costs, value slices,
crowd trajectories. Each takes ``ax=None`` and returns the Axes; nothing calls
``plt.show()``. Ground-plane views show x (lateral) right and z (forward) up.
"""
from __future__ import annotations

import numpy as np


def _axes(ax, projection=None):
    if ax is None:
        import matplotlib.pyplot as plt

        ax = plt.figure().add_subplot(projection=projection)
    return ax


def plot_pose(frame, skeleton, ax=None, contact=None, color="C0", view="side"):
    """One pose as a stick figure.

    Parameters
    ----------
    frame : (J, 3) array_like
        World joint positions, m.
    skeleton : Skeleton
        Gives the bones (``parents``).
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure).
    contact : int, optional
        Joint in contact with the ground, marked with a dot.
    color : matplotlib colour
        Colour of the bones.
    view : {"side", "top"}
        "side": z (m) horizontal, y (m) up; "top": x and z.

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _axes(ax)
    P = np.asarray(frame)
    h, v = (2, 1) if view == "side" else (0, 2)
    for j, p in enumerate(skeleton.parents):
        if p >= 0:
            ax.plot([P[p, h], P[j, h]], [P[p, v], P[j, v]], color=color, lw=1.5)
    if contact is not None:
        ax.plot(P[contact, h], P[contact, v], "o", color="C3", ms=5)
    ax.set_aspect("equal")
    ax.set_xlabel("z (m)" if view == "side" else "x (m)")
    ax.set_ylabel("y (m)" if view == "side" else "z (m)")
    return ax


def plot_animation(animation, skeleton, ax=None, every=4, view="side"):
    """Every ``every``-th frame of an Animation as stick figures, feet in contact marked.

    Parameters
    ----------
    animation : Animation
        From ``MotionModel.synthesize``: ``frames`` (F, J, 3) world positions, m.
    skeleton : Skeleton
        Gives the bones.
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure).
    every : int
        Draw one frame in ``every``; the colour runs from the first frame to the last.
    view : {"side", "top"}
        "side": z (m) horizontal, y (m) up; "top": x and z (m).

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _axes(ax)
    F = animation.frames.shape[0]
    cmap = __import__("matplotlib").colormaps["viridis"]
    for f in range(0, F, every):
        plot_pose(animation.frames[f], skeleton, ax, contact=animation.contact_foot[f], color=cmap(f / max(F - 1, 1)),
                  view=view)
    ax.set_title(f"{F} frames, feet in contact marked")
    return ax


def plot_step_costs(episodes, ax=None, event=None):
    """c_s + c_t per step (Fig. 5.4) for a dict of name -> Episode.

    Parameters
    ----------
    episodes : dict of str to Episode
        One line per policy; ``step_costs`` (steps,) in cost units.
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure).
    event : int, optional
        Step of a user edit, marked by a vertical line.

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _axes(ax)
    for name, ep in episodes.items():
        ax.plot(np.arange(len(ep.step_costs)), ep.step_costs, marker="o", ms=3,
                label=f"{name} (discounted {ep.discounted_cost:.2f})")
    if event is not None:
        ax.axvline(event, color="k", ls=":", lw=1, label="user reverses the path")
    ax.set_xlabel("step (clip transitions)")
    ax.set_ylabel("c_s + c_t (cost units)")
    ax.legend()
    return ax


def plot_value_slice(value_function, clip, ax=None, fixed=None, n=60):
    """V over the first two continuous variables of a task at one clip (Fig. 5.6).

    Parameters
    ----------
    value_function : ValueFunction or GridValueFunction
        Anything with ``task`` and ``value(states)``.
    clip : int
        The clip of the slice (column 0 of the states).
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure).
    fixed : dict, optional
        Values of the other variables (default 0; m or rad).
    n : int
        Points per axis of the slice.

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _axes(ax)
    task = value_function.task
    names = task.variables
    fixed = dict(fixed or {})
    lo = task.ranges
    if len(names) == 1:
        x = np.linspace(lo[0, 0], lo[0, 1], n)
        ax.plot(x, value_function.value(np.c_[np.full(n, clip), x]))
        ax.set_xlabel(f"{names[0]} (rad)" if names[0] == "theta" else f"{names[0]} (m)")
        ax.set_ylabel("V")
        return ax
    a = np.linspace(lo[0, 0], lo[0, 1], n)
    b = np.linspace(lo[1, 0], lo[1, 1], n)
    A, B = np.meshgrid(a, b, indexing="ij")
    S = np.zeros((A.size, len(names) + 1))
    S[:, 0] = clip
    S[:, 1], S[:, 2] = A.ravel(), B.ravel()
    for i, v in enumerate(names[2:], start=3):
        S[:, i] = fixed.get(v, 0.0)
    V = value_function.value(S).reshape(A.shape)
    im = ax.pcolormesh(A, B, V, shading="auto")
    ax.figure.colorbar(im, ax=ax, label="V (cost units)")
    unit = lambda v: "rad" if v == "theta" else "m"  # noqa: E731
    ax.set_xlabel(f"{names[0]} ({unit(names[0])})")
    ax.set_ylabel(f"{names[1]} ({unit(names[1])})")
    return ax


def plot_crowd(result, ax=None):
    """Crowd trajectories (x, z) with the closest approaches marked.

    Parameters
    ----------
    result : CrowdResult
        From :func:`directable.characters.crowd`: ``positions`` (T, P, 2), m.
    ax : matplotlib.axes.Axes, optional
        Where to draw (default: a new figure).

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _axes(ax)
    P = result.positions
    for i in range(P.shape[1]):
        ax.plot(P[:, i, 0], P[:, i, 1], lw=1)
        ax.plot(P[0, i, 0], P[0, i, 1], "k.", ms=4)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("z (m)")
    ax.set_title(f"{result.close_encounters} close encounters, min distance {result.min_distance:.2f} m")
    return ax
