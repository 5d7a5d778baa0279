"""Real clips from BVH motion capture (the extension point of sec. 5.1).

``load_bvh`` parses a file with the ``bvh`` package (``pip install
'directable[bvh]'``) and runs the forward kinematics here, in NumPy: every
joint's OFFSET plus its position channels, rotated by its parent's world
rotation; rotation channels compose in the order the file lists them
(degrees). ``write_bvh`` writes joint positions as a BVH of position
channels (zero rotations), which is how the library produces a synthetic
file to test the loader on.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .._validate import as_float_array, finite_real, real

BVH_HINT = "load_bvh needs the bvh package: pip install 'directable[bvh]' (or pip install bvh)"


@dataclass
class BVHClip:
    """Joint positions read from a BVH file.

    Attributes
    ----------
    skeleton : Skeleton
        Parents and rest offsets (scaled to metres).
    poses : (m, J, 3) ndarray
        World joint positions per frame, metres, y up.
    dt : float
        Frame time, s.
    names : list of str
        Joint names in file order (End Sites are not joints).
    """

    skeleton: object
    poses: np.ndarray
    dt: float
    names: list


def _axis_rotation(axis, degrees):
    """(m, 3, 3) rotations about x, y or z by per-frame angles."""
    a = np.deg2rad(degrees)
    c, s = np.cos(a), np.sin(a)
    R = np.zeros(a.shape + (3, 3))
    i = "XYZ".index(axis)
    j, k = (i + 1) % 3, (i + 2) % 3
    R[..., i, i] = 1.0
    R[..., j, j] = c
    R[..., k, k] = c
    R[..., k, j] = s
    R[..., j, k] = -s
    return R


def _path(path):
    """A file name (str or os.PathLike): an int would be taken by open() as a file descriptor (stdin, stdout)."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    return path


def load_bvh(path, scale=1.0):
    """Read a BVH file into joint positions.

    Parameters
    ----------
    path : str or path-like
    scale : float
        Multiplies every length (e.g. 0.01 for a file in centimetres).

    Returns
    -------
    BVHClip
    """
    try:
        from bvh import Bvh
    except ImportError:
        raise ImportError(BVH_HINT) from None
    from . import Skeleton

    scale = finite_real(scale, "scale", 0.0, strict=True)
    try:
        fh = open(_path(path))
    except FileNotFoundError:
        raise ValueError(f"path {path!r}: no such file") from None
    with fh:
        doc = Bvh(fh.read())
    names = doc.get_joints_names()
    J = len(names)
    if J == 0:
        raise ValueError(f"{path}: no ROOT joint found")
    parents = [doc.joint_parent_index(n) for n in names]
    offsets = np.array([doc.joint_offset(n) for n in names], dtype=float) * scale
    frames = np.array(doc.frames, dtype=float)
    m = doc.nframes
    if frames.shape[0] != m:
        raise ValueError(f"{path}: the header says {m} frames, the file holds {frames.shape[0]}")
    R = np.zeros((m, J, 3, 3))
    P = np.zeros((m, J, 3))
    col = 0
    for j, name in enumerate(names):
        channels = doc.joint_channels(name)
        values = frames[:, col:col + len(channels)]
        col += len(channels)
        local = offsets[j] + np.zeros((m, 3))
        rot = np.broadcast_to(np.eye(3), (m, 3, 3)).copy()
        for c, ch in enumerate(channels):
            if ch.endswith("position"):
                local[:, "XYZ".index(ch[0])] += scale * values[:, c]
            elif ch.endswith("rotation"):
                rot = rot @ _axis_rotation(ch[0], values[:, c])
            else:
                raise ValueError(f"{path}: unknown channel {ch!r} of joint {name!r}")
        p = parents[j]
        if p < 0:
            R[:, j], P[:, j] = rot, local
        else:
            R[:, j] = R[:, p] @ rot
            P[:, j] = P[:, p] + np.einsum("mab,mb->ma", R[:, p], local)
    return BVHClip(Skeleton(parents, offsets), P, doc.frame_time, list(names))


def write_bvh(path, skeleton, poses, dt=1.0 / 30.0, names=None):
    """Write joint positions as a BVH file of position channels.

    Parameters
    ----------
    path : str or path-like
    skeleton : Skeleton
    poses : (m, J, 3) array_like
        Joint positions, metres.
    dt : float
        Frame time, s.
    names : sequence of str, optional
        Joint names (default ``joint0``, ``joint1``, ...).
    """
    poses = as_float_array(poses, "poses")
    J = skeleton.joints
    if poses.ndim != 3 or poses.shape[1:] != (J, 3):
        raise ValueError(f"poses must have shape (m, {J}, 3), got {poses.shape}")
    parents = list(skeleton.parents)
    offsets = np.asarray(skeleton.offsets)
    names = list(names) if names is not None else [f"joint{j}" for j in range(J)]
    children = {j: [c for c in range(J) if parents[c] == j] for j in range(J)}
    lines = ["HIERARCHY"]

    def emit(j, depth):
        pad = "  " * depth
        lines.append(f"{pad}{'ROOT' if parents[j] < 0 else 'JOINT'} {names[j]}")
        lines.append(pad + "{")
        lines.append(f"{pad}  OFFSET {' '.join(f'{v:.9f}' for v in offsets[j])}")
        lines.append(f"{pad}  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation")
        for c in children[j]:
            emit(c, depth + 1)
        if not children[j]:
            lines.append(f"{pad}  End Site")
            lines.append(pad + "  {")
            lines.append(f"{pad}    OFFSET 0.0 0.0 0.0")
            lines.append(pad + "  }")
        lines.append(pad + "}")

    emit(0, 0)
    order = [j for j in _depth_first(children, 0)]
    if sorted(order) != list(range(J)):
        raise ValueError("skeleton must be one tree rooted at joint 0")
    lines += ["MOTION", f"Frames: {poses.shape[0]}", f"Frame Time: {real(dt, 'dt'):.9f}"]
    for f in range(poses.shape[0]):
        row = []
        for j in order:
            p = parents[j]
            t = poses[f, j] - (0.0 if p < 0 else poses[f, p]) - offsets[j]
            row += [f"{v:.12f}" for v in t] + ["0", "0", "0"]
        lines.append(" ".join(row))
    with open(_path(path), "w") as fh:
        fh.write("\n".join(lines) + "\n")


def _depth_first(children, j):
    yield j
    for c in children[j]:
        yield from _depth_first(children, c)
