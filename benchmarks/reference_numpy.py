"""A straightforward NumPy/SciPy implementation of directable's LQR precomputation.

The same algorithm as ``directable.lqr.solve_continuous(..., method="exact")``
(Barbic & Popovic 2008, appendix A; DESIGN.md conventions), written the
obvious way, to check directable's results and to time it against:

* discretization: per step one Van Loan block exponential
  ``scipy.linalg.expm`` of the 2(n+s) x 2(n+s) matrix
  ``[[-F', blkdiag(Q, 0)], [0, F]] dt`` with ``F = [[A, B], [0, 0]]``, giving
  ``Phi, Gamma`` (from ``e^{F dt}``) and the cost integrals
  ``[[Q_i, N_i], [N_i', R_i]] = e^{F dt}' E_12``, then ``R_i += R dt``;
* Riccati sweep with cross terms:
  ``K = -(R + B'PB)^{-1} (N' + B'PA)`` (Cholesky via ``scipy.linalg.cho_factor``),
  ``P = Q + A'PA + G'K`` (symmetrized), ``u_i = K_i x_i``.

No structure is exploited (the zero block row of F, the symmetry of P);
the BLAS does the work, on as many threads as it is allowed.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla


def _seq(X, T):
    X = np.asarray(X, dtype=float)
    return X if X.ndim == 3 else np.broadcast_to(X, (T,) + X.shape)


def discretize_step(A, B, dt, Qc, Rc):
    """Exact discretization of one step: Phi, Gamma, Q, N, R."""
    n, s = B.shape
    m = n + s
    F = np.zeros((m, m))
    F[:n, :n] = A
    F[:n, n:] = B
    Qbar = np.zeros((m, m))
    Qbar[:n, :n] = Qc
    M = np.zeros((2 * m, 2 * m))
    M[:m, :m] = -F.T
    M[:m, m:] = Qbar
    M[m:, m:] = F
    E = sla.expm(M * dt)
    E22 = E[m:, m:]  # e^{F dt} = [[Phi, Gamma], [0, I]]
    W = E22.T @ E[:m, m:]  # int_0^dt e^{F't} Qbar e^{Ft} dt
    W = 0.5 * (W + W.T)
    Phi = E22[:n, :n].copy()
    Gam = E22[:n, n:].copy()
    return Phi, Gam, W[:n, :n].copy(), W[:n, n:].copy(), W[n:, n:] + dt * Rc


def discretize(A, B, dt, Qc, Rc):
    """Per-step exact discretization; A (T, n, n), B (T, n, s) or (n, s)."""
    A = np.asarray(A, dtype=float)
    T, n = A.shape[0], A.shape[1]
    B, Qc, Rc = _seq(B, T), _seq(Qc, T), _seq(Rc, T)
    s = B.shape[2]
    Phi = np.empty((T, n, n))
    Gam = np.empty((T, n, s))
    Q = np.empty((T, n, n))
    N = np.empty((T, n, s))
    R = np.empty((T, s, s))
    for i in range(T):
        Phi[i], Gam[i], Q[i], N[i], R[i] = discretize_step(A[i], B[i], dt, Qc[i], Rc[i])
    return Phi, Gam, Q, N, R


def riccati(A, B, Q, R, Q_final, N=None):
    """Backward sweep of the discrete LTV LQR with cross terms: K (T, s, n), P (T+1, n, n)."""
    A = np.asarray(A, dtype=float)
    T, n = A.shape[0], A.shape[1]
    B, Q, R = _seq(B, T), _seq(Q, T), _seq(R, T)
    s = B.shape[2]
    K = np.empty((T, s, n))
    P = np.empty((T + 1, n, n))
    P[T] = 0.5 * (Q_final + Q_final.T)
    for i in range(T - 1, -1, -1):
        Ai, Bi, Pn = A[i], B[i], P[i + 1]
        PA = Pn @ Ai
        PB = Pn @ Bi
        H = R[i] + Bi.T @ PB
        G = Bi.T @ PA
        if N is not None:
            G += N[i].T
        K[i] = -sla.cho_solve(sla.cho_factor(H, lower=True, check_finite=False), G, check_finite=False)
        Pi = Q[i] + Ai.T @ PA + G.T @ K[i]
        P[i] = 0.5 * (Pi + Pi.T)
    return K, P


def solve_continuous(A, B, dt, Qc, Rc, Q_final):
    """discretize + riccati: K (T, s, n), P (T+1, n, n) and the discretization."""
    Phi, Gam, Q, N, R = discretize(A, B, dt, Qc, Rc)
    K, P = riccati(Phi, Gam, Q, R, Q_final, N)
    return K, P, (Phi, Gam, Q, N, R)


def sweep_flops(n: int, s: int) -> float:
    """Flops of one Riccati step as counted in RESULTS.md (general dense products).

    P A 2n^3, A'(PA) 2n^3, P B 2n^2 s, B'(PB) 2ns^2, B'(PA) 2sn^2, G'K 2n^2 s,
    Cholesky s^3/3, two triangular solves with n right-hand sides 2s^2 n.
    """
    return 4.0 * n**3 + 6.0 * n**2 * s + 4.0 * n * s**2 + s**3 / 3.0


def sweep_flops_sqrt(n: int, s: int) -> float:
    """Flops of one step of directable's square-root sweep.

    Cholesky of P n^3/3, L'[B A] n^2 (n+s), lower half of U'U n (n+s)^2,
    Cholesky of H s^3/3, two triangular solves with n right-hand sides
    2 s^2 n, lower half of the rank-s update Y'Y s n^2.
    """
    return n**3 / 3.0 + n**2 * (n + s) + n * (n + s) ** 2 + s**3 / 3.0 + 2.0 * s**2 * n + s * n**2
