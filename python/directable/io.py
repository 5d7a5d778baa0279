"""Save and load precomputations as .npz (float64, lossless)."""
from __future__ import annotations

import os

import numpy as np

from . import _core

_KIND = "__directable_kind__"


def _npz_path(path) -> str:
    # np.savez appends ".npz" to other names; load must open the same file
    path = os.fspath(path)
    return path if path.endswith(".npz") else path + ".npz"


def save(path, obj, **extra) -> None:
    """Save an LQRSolution, Discretization or Tracker (plus ``extra`` arrays,
    e.g. a reference ``z_ref=..., w_ff=...``) to ``path`` (".npz" is
    appended when missing)."""
    if isinstance(obj, _core.LQRSolution):
        fields = dict(K=obj.K, P=obj.P)
        kind = "LQRSolution"
    elif isinstance(obj, _core.Discretization):
        fields = dict(Phi=obj.Phi, Gamma=obj.Gamma, Q=obj.Q, N=obj.N, R=obj.R, Rc=obj.Rc,
                      dt=np.float64(obj.dt), method=np.str_(obj.method.name))
        kind = "Discretization"
    elif isinstance(obj, _core.Tracker):
        fields = dict(K=obj.K, z_ref=obj.z_ref, w_ff=obj.w_ff, loop=np.bool_(obj.loop),
                      gain_dtype=np.str_(obj.gain_dtype))
        for name in ("w_min", "w_max"):
            if getattr(obj, name) is not None:
                fields[name] = getattr(obj, name)
        kind = "Tracker"
    elif obj is None:
        fields, kind = {}, "arrays"
    else:
        raise TypeError(f"cannot save {type(obj).__name__}; expected LQRSolution, Discretization, Tracker or None")
    clash = sorted(set(extra) & (set(fields) | {_KIND, "w_min", "w_max"} if kind == "Tracker" else set(fields) | {_KIND}))
    if clash:
        raise ValueError(f"extra array names {clash} collide with the fields of the saved {kind}; rename them")
    arrays = {k: np.asarray(v) for k, v in extra.items()}
    arrays.update(fields)
    arrays[_KIND] = np.str_(kind)
    np.savez(_npz_path(path), **arrays)


def load(path):
    """Inverse of ``save``: returns (object, dict of the extra arrays)."""
    with np.load(_npz_path(path), allow_pickle=False) as f:
        data = {k: f[k] for k in f.files}
    kind = str(data.pop(_KIND, "arrays"))
    keys = {
        "LQRSolution": ("K", "P"),
        "Discretization": ("Phi", "Gamma", "Q", "N", "R", "Rc", "dt", "method"),
        "Tracker": ("K", "z_ref", "w_ff", "loop", "w_min", "w_max", "gain_dtype"),
        "arrays": (),
    }[kind]
    parts = {k: data.pop(k, None) for k in keys}
    if kind == "LQRSolution":
        obj = _core.LQRSolution(parts["K"], parts["P"])
    elif kind == "Discretization":
        method = getattr(_core.DiscretizeMethod, str(parts["method"]))
        obj = _core.Discretization(parts["Phi"], parts["Gamma"], parts["Q"], parts["N"], parts["R"], parts["Rc"],
                                   float(parts["dt"]), method)
    elif kind == "Tracker":
        K = parts["K"]
        obj = _core.Tracker(K[0] if K.shape[0] == 1 else K, parts["z_ref"], parts["w_ff"], bool(parts["loop"]),
                            parts["w_min"], parts["w_max"], str(parts["gain_dtype"]))
    else:
        obj = None
    return obj, data
