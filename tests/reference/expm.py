"""Extended-precision matrix exponential, the reference of the expm tests."""
from __future__ import annotations

import numpy as np


def expm_longdouble(M):
    """exp(M) by Taylor series + scaling and squaring in np.longdouble
    (80-bit on x86-64: ~1e-19 unit round-off), rounded back to float64.
    A reference about 1000x more precise than any float64 algorithm, for
    the moderate sizes used in the tests."""
    M = np.asarray(M, dtype=np.longdouble)
    m = M.shape[0]
    if m == 0:
        return np.zeros((0, 0))
    nrm = float(np.max(np.sum(np.abs(M), axis=0)))
    s = max(0, int(np.ceil(np.log2(nrm))) + 2) if nrm > 0 else 0
    X = M / np.longdouble(2.0) ** s
    E = np.eye(m, dtype=np.longdouble)
    term = np.eye(m, dtype=np.longdouble)
    for k in range(1, 30):
        term = term @ X / k
        E = E + term
    for _ in range(s):
        E = E @ E
    return E.astype(np.float64)


LONGDOUBLE_IS_EXTENDED = np.finfo(np.longdouble).eps < 1e-18


