"""Argument conversion shared by the Python layer.

Arrays become float64 C-contiguous (no copy when they already are); shapes,
finiteness and definiteness are checked in C++ so every entry point is
covered. Here only what NumPy would silently get wrong is rejected: complex,
object and string data.
"""
from __future__ import annotations

import contextlib
import numbers

import numpy as np


def as_float_array(x, name: str) -> np.ndarray:
    """``x`` as a C-contiguous float64 array, or TypeError naming ``name``."""
    if isinstance(x, np.ndarray):
        arr = x
    else:
        try:
            arr = np.asarray(x)
        except Exception as exc:  # ragged lists and the like
            raise TypeError(f"{name} must be a real numeric array: {exc}") from None
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    # (np.ascontiguousarray would turn a 0-d scalar into shape (1,))
    return np.asarray(arr, dtype=np.float64, order="C")


def _shape_text(shape) -> str:
    dims = ", ".join("n" if d is None else str(d) for d in shape)
    return f"({dims},)" if len(shape) == 1 else f"({dims})"


def finite_array(x, name: str, shape=None, of: str | None = None) -> np.ndarray:
    """``x`` as :func:`as_float_array` does, checked as the core checks its
    arrays: the shape (``shape``: a tuple of sizes, None for any size, or a
    list of such tuples, one of which must match; None: any shape) and that
    every entry is finite. The one check of the Python layer's own helpers
    (the functions that never reach the core): a ValueError naming ``name``,
    the expected and the received, in the core's words; ``of`` says where
    the expected shape comes from (``"that of q"``), so that a wrong ``q``
    is named in the refusal of its partner too."""
    arr = as_float_array(x, name)
    if shape is not None:
        options = shape if isinstance(shape, list) else [shape]
        if not any(len(s) == arr.ndim and all(e is None or e == g for e, g in zip(s, arr.shape)) for s in options):
            source = f" ({of})" if of else ""
            raise ValueError(f"{name} must have shape {' or '.join(_shape_text(s) for s in options)}{source}, "
                             f"got {_shape_text(arr.shape)}")
    if not np.isfinite(arr).all():
        i = int(np.flatnonzero(~np.isfinite(arr.ravel()))[0])
        raise ValueError(f"{name} must be finite, got {arr.ravel()[i]} at flat index {i}")
    return arr


def index_array(x, name: str, shape_hint: str) -> np.ndarray:
    """Indices as a C-contiguous int64 array; floats pass only when they are
    finite whole numbers, anything else is a TypeError naming ``name``."""
    a = np.asarray(x)
    if a.dtype.kind not in "iu":
        if a.dtype.kind == "f" and a.size and np.all(np.isfinite(a)) and np.all(a == np.round(a)):
            a = a.astype(np.int64)
        else:
            raise TypeError(f"{name} must be an integer array {shape_hint}, got dtype {a.dtype}")
    return np.ascontiguousarray(a, dtype=np.int64)


def iterable(x, name: str, what: str = "a sequence"):
    """``x`` itself when it can be iterated (not consumed: a generator stays a
    generator), or TypeError naming ``name``, what it must be and what it got
    (instead of Python's nameless "'float' object is not iterable")."""
    try:
        iter(x)
    except TypeError:
        raise TypeError(f"{name} must be {what}, got {type(x).__name__} {_short_repr(x)}") from None
    return x


def _short_repr(x, limit: int = 60) -> str:
    text = repr(x)
    return text if len(text) <= limit else text[:limit - 3] + "..."


@contextlib.contextmanager
def about(name: str):
    """Refusals (ValueError, TypeError) of the calls inside, prefixed with the
    argument of the caller they concern: a composite function that hands its
    argument to an inner call under another name (``fluid.velocity_basis``
    projects ``snapshots`` with ``MACGrid2D.project(u)``) names its own."""
    try:
        yield
    except (ValueError, TypeError) as exc:
        raise type(exc)(f"{name}: {exc}") from None


def check_size(what: str, *shape, itemsize: int = 8) -> None:
    """MemoryError naming ``what`` (the argument that sized the request) when
    an array of ``shape`` would not fit in the machine's memory: the core's
    own check (``_core.check_allocation``), so a Python-side array is refused
    as the core's buffers are, with the size, before NumPy tries."""
    from . import _core

    _core.check_allocation(what, float(itemsize) * float(np.prod([float(s) for s in shape])))


def zeros(shape, what: str) -> np.ndarray:
    """``np.zeros(shape)`` after :func:`check_size` (``what`` names the argument that sized it)."""
    check_size(what, *shape)
    return np.zeros(shape)


def optional_array(x, name: str):
    return None if x is None else as_float_array(x, name)


def actuation_matrix(actuated, m: int):
    """None, a list of driven coordinate indices, or an (m, s) matrix -> (m, s) or None."""
    if actuated is None:
        return None
    a = np.asarray(actuated)
    if a.ndim == 1 and a.dtype.kind in "iu":
        if a.size == 0 or a.min() < 0 or a.max() >= m:
            raise ValueError(f"actuated indices must lie in [0, {m}), got {a.tolist()}")
        S = np.zeros((m, a.size))
        S[a, np.arange(a.size)] = 1.0
        return S
    return as_float_array(a, "actuated")


def real(x, name: str, finite: bool = False, positive: bool = False) -> float:
    """A real number (not a string, not a bool), or TypeError naming ``name``;
    ``finite``/``positive``: also a ValueError unless it is finite (and > 0),
    in the core's words (``check_positive``)."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (numbers.Real, np.ndarray)) or (
            isinstance(x, np.ndarray) and (x.ndim != 0 or x.dtype.kind not in "iuf")):
        raise TypeError(f"{name} must be a real number, got {x!r}")
    try:
        value = float(x)
    except OverflowError:
        raise ValueError(f"{name} must be a real number within the float range, got {x!r}") from None
    if positive and not (value > 0 and np.isfinite(value)):
        raise ValueError(f"{name} must be a positive finite number, got {value}")
    if finite and not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    return value


def integer(x, name: str, allow_none: bool = False):
    """An int (numpy integers too; not bool, not float), or TypeError naming ``name``."""
    if x is None and allow_none:
        return None
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an int, got {x!r}")
    return int(x)


def broadcast(x, size: int, name: str, optional: bool = False):
    """A per-entry parameter: a scalar means that value for each of ``size``
    entries, (size,); arrays pass unchanged (their shape is checked in C++).
    ``optional``: None passes as None (otherwise it is a TypeError)."""
    if x is None and optional:
        return None
    arr = as_float_array(x, name)
    return np.full(size, float(arr)) if arr.ndim == 0 else arr


def weight(x, dim: int, name: str) -> np.ndarray:
    """A cost weight: a scalar means scalar * identity(dim); arrays pass."""
    if isinstance(x, numbers.Real) and not isinstance(x, bool):
        return float(x) * np.eye(dim)
    arr = as_float_array(x, name)
    if arr.ndim == 0:
        return float(arr) * np.eye(dim)
    return arr


def progress_callback(progress, desc: str, passes: int = 1):
    """None/False: no report; True: a tqdm bar; a callable: itself.

    ``passes``: how many times the core walks the time steps (the pipelined
    discretization + sweep reports ``2 T`` units of work): the bar counts
    time steps, ``done / passes`` of ``total / passes``, so a 800-step
    problem shows 800; a callable gets the core's own ``(done, total)``.

    Returns (callback for the core, closer to call when done).
    """
    if progress is None or progress is False:
        return None, lambda: None
    if callable(progress):
        return progress, lambda: None
    if progress is True:
        try:  # a notebook widget bar when ipywidgets is there, else text
            import ipywidgets  # noqa: F401
            from tqdm.auto import tqdm
        except ImportError:
            from tqdm import tqdm

        bar = tqdm(total=None, desc=desc, unit="step", leave=False)

        def update(done, total):
            total = total // passes
            if bar.total != total:
                bar.total = total
            bar.n = min(done // passes, total)
            bar.refresh()

        def close():
            bar.close()

        return update, close
    raise TypeError(f"progress must be None, a bool or a callable(done, total), got {type(progress).__name__}")


def run_with_progress(fn, progress, desc: str, passes: int = 1, **kwargs):
    cb, close = progress_callback(progress, desc, passes)
    try:
        return fn(progress=cb, **kwargs)
    finally:
        close()


def finite_real(x, name: str, minimum: float | None = None, strict: bool = False) -> float:
    """:func:`real`, finite, and ``>= minimum`` (``> minimum`` when
    ``strict``), or ValueError naming ``name``, the bound and the value."""
    v = real(x, name, finite=True)
    if minimum is not None and (v <= minimum if strict else v < minimum):
        raise ValueError(f"{name} must be {'>' if strict else '>='} {minimum:g}, got {v:g}")
    return v


def points_array(x, name: str, dim: int) -> np.ndarray:
    """(P, dim) points (P may be 0), or TypeError / ValueError naming ``name``."""
    arr = as_float_array(x, name)
    if arr.ndim != 2 or arr.shape[1] != dim:
        raise ValueError(f"{name} must have shape (P, {dim}), got {arr.shape}")
    return arr
