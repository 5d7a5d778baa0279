"""The LP of the approximate-LP loop (Treuille thesis sec. 5.3.2), behind one
small interface: ``add_rows`` appends constraint rows (CSR, assembled in C++)
``a . r <= rhs``, ``solve`` maximises ``c . r`` over all rows so far.

- :class:`HighsSolver` keeps one ``highspy`` model and adds rows to it, so each
  solve starts from the previous basis (a warm start, the default);
- :class:`ScipySolver` re-solves the whole LP with ``scipy.optimize.linprog``
  (``method="highs-ipm"``), the fallback when highspy is not installed.
"""
from __future__ import annotations

import time

import numpy as np

INSTALL_HINT = ("highspy is not installed: pip install 'directable[characters]' (or pip install highspy), "
                "or pass solver='scipy'")


def require_highspy():
    """highspy, or ValueError saying how to install it."""
    try:
        import highspy
    except ImportError:
        raise ValueError(f"solver='highspy': {INSTALL_HINT}") from None
    return highspy


class LPStatus:
    OPTIMAL = "optimal"
    UNBOUNDED = "unbounded"
    INFEASIBLE = "infeasible"


class HighsSolver:
    """Warm-started HiGHS (dual simplex) through highspy."""

    name = "highspy"

    def __init__(self, c, lower, upper, warm_start=True):
        self._hs = require_highspy()
        self._c = np.asarray(c, dtype=np.float64)
        self._lower, self._upper = lower, upper
        self.warm_start = warm_start
        self._rows = []
        self._new_model()
        self.seconds = 0.0

    def _new_model(self):
        hs = self._hs
        h = hs.Highs()
        h.setOptionValue("output_flag", False)
        n = self._c.size
        h.addVars(n, self._lower, self._upper)
        h.changeColsCost(n, np.arange(n, dtype=np.int32), self._c)
        h.changeObjectiveSense(hs.ObjSense.kMaximize)
        self._h = h

    def _add(self, data, indices, indptr, rhs):
        m = rhs.size
        if m == 0:
            return
        self._h.addRows(m, np.full(m, -np.inf), rhs, data.size, indptr[:-1].astype(np.int32),
                        indices.astype(np.int32), data)

    def add_rows(self, data, indices, indptr, rhs):
        t = time.perf_counter()
        self._rows.append((data, indices, indptr, rhs))
        if self.warm_start:
            self._add(data, indices, indptr, rhs)
        self.seconds += time.perf_counter() - t

    def solve(self):
        t = time.perf_counter()
        if not self.warm_start:
            self._new_model()
            for rows in self._rows:
                self._add(*rows)
        h = self._h
        h.run()
        status = h.getModelStatus()
        S = self._hs.HighsModelStatus
        if status not in (S.kOptimal, S.kInfeasible, S.kUnbounded, S.kUnboundedOrInfeasible):
            # numerical trouble from the warm basis: solve the whole LP once from scratch
            self._new_model()
            for rows in self._rows:
                self._add(*rows)
            h = self._h
            h.run()
            status = h.getModelStatus()
        self.seconds += time.perf_counter() - t
        if status == S.kOptimal:
            return LPStatus.OPTIMAL, np.asarray(h.getSolution().col_value)
        if status == S.kInfeasible:
            return LPStatus.INFEASIBLE, None
        if status in (S.kUnbounded, S.kUnboundedOrInfeasible):
            return LPStatus.UNBOUNDED, None
        raise ValueError(f"the LP solver stopped with status {h.modelStatusToString(status)}")


class ScipySolver:
    """Cold re-solves with scipy.optimize.linprog (HiGHS interior point)."""

    name = "scipy"

    def __init__(self, c, lower, upper, method="highs-ipm"):
        self._c = np.asarray(c, dtype=np.float64)
        self._bounds = list(zip(lower, upper))
        self._blocks = []
        self.method = method
        self.seconds = 0.0

    def add_rows(self, data, indices, indptr, rhs):
        from scipy.sparse import csr_matrix

        if rhs.size:
            self._blocks.append((csr_matrix((data, indices, indptr), shape=(rhs.size, self._c.size)), rhs))

    def solve(self):
        from scipy.optimize import linprog
        from scipy.sparse import vstack

        t = time.perf_counter()
        A = vstack([b[0] for b in self._blocks], format="csr")
        b = np.concatenate([b[1] for b in self._blocks])
        res = linprog(-self._c, A_ub=A, b_ub=b, bounds=self._bounds, method=self.method)
        self.seconds += time.perf_counter() - t
        if res.status == 0:
            return LPStatus.OPTIMAL, np.asarray(res.x)
        if res.status == 2:
            return LPStatus.INFEASIBLE, None
        if res.status == 3:
            return LPStatus.UNBOUNDED, None
        raise ValueError(f"the LP solver stopped: {res.message}")


def make_solver(solver, c, lower, upper, warm_start):
    if solver == "highspy":
        return HighsSolver(c, lower, upper, warm_start)
    if solver in ("scipy", "highs-ipm"):
        return ScipySolver(c, lower, upper, "highs-ipm")
    if solver in ("scipy-simplex", "highs"):
        return ScipySolver(c, lower, upper, "highs")
    raise ValueError(f"solver must be 'highspy' or 'scipy', got {solver!r}")
