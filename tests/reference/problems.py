"""Inputs the feature tests share: a small LQ problem, wrongly shaped and
wrongly typed variants of its arguments, and non-contiguous views of an array."""
from __future__ import annotations

import numpy as np


T, n, s = 4, 3, 2


def small_lq(rng):
    """A small time-varying LQ problem (T, n, s) = (4, 3, 2) with a cross term N."""
    return dict(A=rng.standard_normal((T, n, n)) * 0.4, B=rng.standard_normal((T, n, s)),
                Q=np.tile(np.eye(n), (T, 1, 1)), R=np.tile(np.eye(s), (T, 1, 1)), Q_final=np.eye(n),
                N=0.05 * rng.standard_normal((T, n, s)))


def continuous_args(a):
    """The arguments of ``lqr.discretize`` for the problem ``a`` (dt = 0.1)."""
    return dict(A=a["A"], B=a["B"], dt=0.1, Q=a["Q"], R=a["R"])


# argument name and a wrongly shaped value, per case
SHAPE_CASES = {
    "A non-square": ("A", lambda a: a["A"][:, :, :2]),
    "A 1-D": ("A", lambda a: np.ones(3)),
    "A 4-D": ("A", lambda a: a["A"][None]),
    "B rows": ("B", lambda a: a["B"][:, :2]),
    "B 1-D": ("B", lambda a: np.ones(3)),
    "Q shape": ("Q", lambda a: np.eye(n + 1)),
    "Q 4-D": ("Q", lambda a: a["Q"][None]),
    "R shape": ("R", lambda a: np.eye(s + 1)),
    "R 1-D": ("R", lambda a: np.ones(s + 1)),  # (s,) would be the diagonal weight
    "N shape": ("N", lambda a: np.zeros((T, n, n))),
    "Q_final shape": ("Q_final", lambda a: np.eye(n - 1)),
    "Q_final 3-D": ("Q_final", lambda a: np.eye(n)[None]),
}


# values that are no real numeric array
BAD_DTYPES = {
    "complex": lambda x: np.asarray(x) + 0j,
    "object": lambda x: np.asarray(x).astype(object),
    "string": lambda x: np.asarray(x).astype(str),
    "ragged": lambda x: [[1.0, 2.0], [3.0]],
    "None": lambda x: None,
}


def noncontiguous_views(x):
    """Views with the values of x but not C-contiguous: Fortran order, a
    stepped slice, negative strides, a transposed view."""
    x = np.asarray(x, float)
    out = {}
    if x.ndim >= 2:
        out["fortran"] = np.asfortranarray(x)
        out["transposed"] = np.ascontiguousarray(np.swapaxes(x, -1, -2)).swapaxes(-1, -2)
    big = np.full(x.shape[:-1] + (2 * x.shape[-1],), np.nan)
    big[..., ::2] = x
    out["stepped"] = big[..., ::2]
    out["reversed"] = np.ascontiguousarray(x[::-1])[::-1]
    for k, v in out.items():
        assert np.array_equal(v, x)
        if x.size > 1 and x.shape[-1] > 1:
            assert not v.flags.c_contiguous or k == "reversed" and x.shape[0] == 1, k
    return out
