"""Argument conversion shared by the Python layer.

Arrays become float64 C-contiguous (no copy when they already are); shapes,
finiteness and definiteness are checked in C++ so every entry point is
covered. Here only what NumPy would silently get wrong is rejected: complex,
object and string data.
"""
from __future__ import annotations

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
    return np.ascontiguousarray(arr, dtype=np.float64)


def optional_array(x, name: str):
    return None if x is None else as_float_array(x, name)


def weight(x, dim: int, name: str) -> np.ndarray:
    """A cost weight: a scalar means scalar * identity(dim); arrays pass."""
    if isinstance(x, numbers.Real) and not isinstance(x, bool):
        return float(x) * np.eye(dim)
    arr = as_float_array(x, name)
    if arr.ndim == 0:
        return float(arr) * np.eye(dim)
    return arr


def progress_callback(progress, desc: str):
    """None/False: no report; True: a tqdm bar; a callable: itself.

    Returns (callback for the core, closer to call when done).
    """
    if progress is None or progress is False:
        return None, lambda: None
    if callable(progress):
        return progress, lambda: None
    if progress is True:
        from tqdm.auto import tqdm

        bar = tqdm(total=None, desc=desc, unit="step", leave=False)

        def update(done, total):
            if bar.total != total:
                bar.total = total
            bar.n = done
            bar.refresh()

        def close():
            bar.close()

        return update, close
    raise TypeError(f"progress must be None, a bool or a callable(done, total), got {type(progress).__name__}")


def run_with_progress(fn, progress, desc: str, **kwargs):
    cb, close = progress_callback(progress, desc)
    try:
        return fn(progress=cb, **kwargs)
    finally:
        close()
