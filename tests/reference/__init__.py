"""Independent references shared by ``tests/`` and ``benchmarks/``.

Nothing here calls ``directable``: each module re-derives what the C++ core
computes by a different algorithm, so that agreement is evidence of
correctness. ``lqr``: LQ problems, dense optimum, Van Loan and RK4
discretizations, Riccati sweep; ``expm``: extended-precision exponential;
``spring_chain``: the Duffing chain; ``chain``: planar chains and PD/SPD
servos; ``crowds``: continuum-crowd fields and the fast-marching rule;
``cloth``: the mass-spring cloth and the goal-directed path search in
NumPy; ``problems``: inputs the feature tests share.
"""
from __future__ import annotations

import numpy as np


def rel_err(a, b) -> float:
    """||a - b|| / ||b|| (Frobenius over all entries); absolute when b == 0."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    nb = np.linalg.norm(b)
    d = np.linalg.norm(a - b)
    return float(d / nb) if nb > 0 else float(d)
