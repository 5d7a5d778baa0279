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
    """Save an LQRSolution, Discretization or Tracker, with extra arrays, as .npz.

    Parameters
    ----------
    path : str or os.PathLike
        File name (".npz" is appended when missing).
    obj : LQRSolution, Discretization, Tracker or None
        What to store (None: only the extra arrays).
    **extra : array_like
        Arrays stored beside it, e.g. a reference ``z_ref=..., w_ff=...``.
    """
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


_FIELDS = {  # kind -> {field: (required, what)}; what: "array", "scalar", "bool", "str"
    "LQRSolution": {"K": (True, "array"), "P": (True, "array")},
    "Discretization": {"Phi": (True, "array"), "Gamma": (True, "array"), "Q": (True, "array"), "N": (True, "array"),
                       "R": (True, "array"), "Rc": (True, "array"), "dt": (True, "scalar"), "method": (True, "str")},
    "Tracker": {"K": (True, "array"), "z_ref": (True, "array"), "w_ff": (True, "array"), "loop": (True, "bool"),
                "w_min": (False, "array"), "w_max": (False, "array"), "gain_dtype": (True, "str")},
    "arrays": {},
}


def _field(file: str, name: str, value, what: str):
    """A stored field checked for its type: real arrays, a real finite
    scalar, a bool stored as a bool (not the string 'False'), a string."""
    def bad(expected):
        return ValueError(f"{file}: field {name!r} must be {expected}, got dtype {value.dtype} "
                          f"shape {value.shape}")

    if what == "array":
        if value.dtype.kind not in "iuf":
            raise bad("a real numeric array")
        return value
    if value.ndim != 0:
        raise bad("a single value (0-d)")
    if what == "scalar":
        if value.dtype.kind not in "iuf" or not np.isfinite(value):
            raise bad(f"a finite real number (got {value!r})")
        return float(value)
    if what == "bool":
        if value.dtype.kind != "b":
            raise bad("a boolean")
        return bool(value)
    if value.dtype.kind != "U":
        raise bad("a string")
    return str(value)


def load(path):
    """Inverse of :func:`save`.

    Parameters
    ----------
    path : str or os.PathLike
        File written by :func:`save` (".npz" is appended when missing).

    Returns
    -------
    obj : LQRSolution, Discretization, Tracker or None
        The stored object, rebuilt.
    extra : dict of str to ndarray
        The extra arrays.

    Notes
    -----
    Every stored field is checked (type, dtype, the kind's enum names,
    booleans stored as booleans) and the object is rebuilt through the same
    validating constructors as a new one (shapes, finiteness), so an edited,
    truncated or foreign file raises ``ValueError`` naming the file and the
    field. Pickled objects are never loaded.
    """
    file = _npz_path(path)
    try:
        with np.load(file, allow_pickle=False) as f:
            data = {k: f[k] for k in f.files}
    except FileNotFoundError:
        raise
    except Exception as exc:  # not a zip, truncated, an object array needing pickle, a bare .npy
        raise ValueError(f"{file}: not a readable directable .npz file ({type(exc).__name__}: {exc})") from None
    for name, value in data.items():  # a member that is not an .npy comes back as raw bytes
        if not isinstance(value, np.ndarray):
            raise ValueError(f"{file}: member {name!r} is not a NumPy array ({type(value).__name__})")
    raw_kind = data.pop(_KIND, np.str_("arrays"))
    if raw_kind.ndim != 0 or raw_kind.dtype.kind != "U" or str(raw_kind) not in _FIELDS:
        raise ValueError(f"{file}: field {_KIND!r} must be one of {sorted(_FIELDS)}, got {raw_kind!r}")
    kind = str(raw_kind)
    parts = {}
    for name, (required, what) in _FIELDS[kind].items():
        if name not in data:
            if required:
                raise ValueError(f"{file}: field {name!r} of the saved {kind} is missing")
            parts[name] = None
            continue
        parts[name] = _field(file, name, data.pop(name), what)
    try:
        if kind == "LQRSolution":
            obj = _core.LQRSolution(parts["K"], parts["P"])
        elif kind == "Discretization":
            methods = _core.DiscretizeMethod.__members__
            if parts["method"] not in methods:
                raise ValueError(f"field 'method' must be one of {sorted(methods)}, got {parts['method']!r}")
            obj = _core.Discretization(parts["Phi"], parts["Gamma"], parts["Q"], parts["N"], parts["R"], parts["Rc"],
                                       parts["dt"], methods[parts["method"]])
        elif kind == "Tracker":
            K = parts["K"]
            obj = _core.Tracker(K[0] if K.ndim == 3 and K.shape[0] == 1 else K, parts["z_ref"], parts["w_ff"],
                                parts["loop"], parts["w_min"], parts["w_max"], parts["gain_dtype"])
        else:
            obj = None
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{file}: the saved {kind} is not valid: {exc}") from None
    return obj, data
