"""Independent NumPy/SciPy references for the LQR core: random LQ problems, the
optimal control as one dense linear system, SciPy's DARE, the Van Loan
discretization by SciPy's expm (also timed by ``benchmarks/bench_lqr.py``), a
brute-force RK4 discretization, a closed form for diagonalisable A, and the
plain Riccati sweep.

Nothing here calls ``directable``: each function re-derives what the C++ core
computes from its definition (the Barbic-Popovic appendix A) by a different
algorithm, so that agreement is evidence of correctness.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla


def random_spd(rng, n, floor=0.2):
    """Symmetric positive definite (n, n), eigenvalues >= floor."""
    M = rng.standard_normal((n, n))
    return M @ M.T / max(n, 1) + floor * np.eye(n)


def random_stable(rng, n, radius=0.95):
    """Random (n, n) matrix with spectral radius ``radius`` (non-normal)."""
    X = rng.standard_normal((n, n))
    rho = np.max(np.abs(np.linalg.eigvals(X)))
    return X * (radius / rho)


def random_lq(rng, T, n, s, cross=True, radius=0.95):
    """A random time-varying LQ problem with a cross term.

    Returns dict A (T,n,n), B (T,n,s), Q (T,n,n), R (T,s,s), N (T,n,s) or
    None, Q_final (n,n). Each stage weight [[Q, N], [N', R]] is positive
    definite, so the problem is strictly convex in the controls.
    """
    A = np.stack([random_stable(rng, n, radius * rng.uniform(0.8, 1.2)) for _ in range(T)])
    B = rng.standard_normal((T, n, s))
    Q = np.empty((T, n, n))
    R = np.empty((T, s, s))
    N = np.empty((T, n, s))
    for i in range(T):
        W = random_spd(rng, n + s, floor=0.3)
        Q[i] = W[:n, :n]
        R[i] = W[n:, n:]
        N[i] = W[:n, n:] if cross else 0.0
    return dict(A=A, B=B, Q=Q, R=R, N=N if cross else None, Q_final=random_spd(rng, n))


# ------------------------------------------------------ dense LQ (one system)
def dense_lq(A, B, Q, R, Q_final, N=None):
    """Optimal LQ control as ONE dense linear system in u = (u_0..u_{T-1}).

    With x = F x0 + G u (x = (x_0..x_T) stacked) the cost is
    J = x' Qb x + 2 x' Nb u + u' Rb u = x0' F'QbF x0 + 2 x0' L' u + u' H u,
    H = G'QbG + G'Nb + Nb'G + Rb, L = G'QbF + Nb'F. The optimum is
    u* = -H^{-1} L x0 =: Kb x0 and J* = x0' (F'QbF + L'Kb) x0.

    Returns (Kb (T, s, n): u*_i = Kb[i] x0,  P0 (n, n): J* = x0' P0 x0).
    """
    A, B, Q, R = (np.asarray(x, float) for x in (A, B, Q, R))
    T, n, s = B.shape
    F = np.zeros(((T + 1) * n, n))
    G = np.zeros(((T + 1) * n, T * s))
    F[:n] = np.eye(n)
    for i in range(T):
        r0, r1 = i * n, (i + 1) * n
        F[r1:r1 + n] = A[i] @ F[r0:r1]
        G[r1:r1 + n] = A[i] @ G[r0:r1]
        G[r1:r1 + n, i * s:(i + 1) * s] += B[i]
    Qb = sla.block_diag(*Q, Q_final)
    Rb = sla.block_diag(*R)
    Nb = np.zeros(((T + 1) * n, T * s))
    if N is not None:
        for i in range(T):
            Nb[i * n:(i + 1) * n, i * s:(i + 1) * s] = N[i]
    H = G.T @ Qb @ G + G.T @ Nb + Nb.T @ G + Rb
    H = 0.5 * (H + H.T)
    L = G.T @ Qb @ F + Nb.T @ F
    Kb = -np.linalg.solve(H, L)
    P0 = F.T @ Qb @ F + L.T @ Kb
    return Kb.reshape(T, s, n), 0.5 * (P0 + P0.T)


def lq_cost(A, B, Q, R, Q_final, N, x0, u):
    """Cost of the control sequence u (T, s) from x0; also the states."""
    T = len(u)
    x = np.empty((T + 1, len(x0)))
    x[0] = x0
    J = 0.0
    for i in range(T):
        J += x[i] @ Q[i] @ x[i] + u[i] @ R[i] @ u[i]
        if N is not None:
            J += 2 * x[i] @ N[i] @ u[i]
        x[i + 1] = A[i] @ x[i] + B[i] @ u[i]
    return J + x[T] @ Q_final @ x[T], x


def closed_loop(A, B, K, x0):
    """States (T+1, n) and controls (T, s) of x_{i+1} = (A_i + B_i K_i) x_i."""
    T = len(K)
    x = np.empty((T + 1, len(x0)))
    u = np.empty((T, K.shape[1]))
    x[0] = x0
    for i in range(T):
        u[i] = K[i] @ x[i]
        x[i + 1] = A[i] @ x[i] + B[i] @ u[i]
    return x, u


def dare_gain(A, B, Q, R, N=None):
    """Infinite-horizon P and K (u = K x) from SciPy's DARE solver."""
    P = sla.solve_discrete_are(A, B, Q, R, s=N)
    G = B.T @ P @ A + (0 if N is None else N.T)
    K = -np.linalg.solve(R + B.T @ P @ B, G)
    return P, K


# --------------------------------------------------------- discretization refs
def _seq(x, T):
    x = np.asarray(x, float)
    return np.broadcast_to(x, (T,) + x.shape[-2:]) if x.ndim == 2 else x


def van_loan_step(A, B, dt, Qc, Rc):
    """Exact discretization of one step (A (n, n), B (n, s)): Phi, Gamma, Q, N, R.

    One SciPy expm of the Van Loan matrix ``[[-F', blkdiag(Qc, 0)], [0, F]] dt``
    with ``F = [[A, B], [0, 0]]``: ``e^{F dt} = [[Phi, Gamma], [0, I]]`` and
    ``int_0^dt e^{F't} blkdiag(Qc, 0) e^{Ft} dt = E22' E12`` (Van Loan 1978,
    thm 1) give ``[[Q, N], [N', R - Rc dt]]``. No structure is exploited.
    """
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


def van_loan_scipy(A, B, Qc, Rc, dt, T=None):
    """Phi, Gamma, Q, N, R (each (T, ...)) by :func:`van_loan_step` per step;
    A (T, n, n) or (n, n) (then T steps, default 1), B, Qc, Rc per step or constant."""
    A = np.asarray(A, float)
    T = T or (A.shape[0] if A.ndim == 3 else 1)
    A, B, Qc, Rc = _seq(A, T), _seq(B, T), _seq(Qc, T), _seq(Rc, T)
    n, s = B.shape[1:]
    out = [np.empty((T, n, n)), np.empty((T, n, s)), np.empty((T, n, n)), np.empty((T, n, s)), np.empty((T, s, s))]
    for i in range(T):
        for k, v in enumerate(van_loan_step(A[i], B[i], dt, Qc[i], Rc[i])):
            out[k][i] = v
    return out


def rk4_discretize(A, B, Qc, Rc, dt, substeps=2000, T=None):
    """Brute force: integrate Y' = F Y (Y = e^{F t}) together with
    W' = Y' blkdiag(Qc, Rc) Y by classical RK4 over ``substeps`` sub-steps,
    vectorised over the T time steps. Returns Phi, Gamma, Q, N, R."""
    A = np.asarray(A, float)
    T = T or (A.shape[0] if A.ndim == 3 else 1)
    A, B, Qc, Rc = _seq(A, T), _seq(B, T), _seq(Qc, T), _seq(Rc, T)
    n, s = B.shape[1:]
    m = n + s
    F = np.zeros((T, m, m))
    F[:, :n, :n] = A
    F[:, :n, n:] = B
    Wc = np.zeros((T, m, m))
    Wc[:, :n, :n] = Qc
    Wc[:, n:, n:] = Rc
    Y = np.broadcast_to(np.eye(m), (T, m, m)).copy()
    W = np.zeros((T, m, m))
    h = dt / substeps
    tr = lambda X: np.swapaxes(X, 1, 2)  # noqa: E731
    q = lambda X: tr(X) @ Wc @ X  # noqa: E731
    for _ in range(substeps):
        k1 = F @ Y
        Y2 = Y + 0.5 * h * k1
        k2 = F @ Y2
        Y3 = Y + 0.5 * h * k2
        k3 = F @ Y3
        Y4 = Y + h * k3
        k4 = F @ Y4
        W = W + (h / 6.0) * (q(Y) + 2 * q(Y2) + 2 * q(Y3) + q(Y4))
        Y = Y + (h / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4)
    W = 0.5 * (W + tr(W))
    return Y[:, :n, :n], Y[:, :n, n:], W[:, :n, :n], W[:, :n, n:], W[:, n:, n:]


def _int_exp(a, dt):
    """int_0^dt e^{a t} dt = expm1(a dt) / a, elementwise (complex a)."""
    a = np.asarray(a, complex)
    out = np.full(a.shape, dt, dtype=complex)
    nz = np.abs(a * dt) > 1e-300
    out[nz] = _expm1c(a[nz] * dt) / a[nz]
    return out


def _expm1c(x):
    """expm1 for complex x without cancellation for small |x|."""
    x = np.asarray(x, complex)
    small = np.abs(x) < 1e-3
    # e^{a+ib} - 1 = expm1(a) cos b + (cos b - 1) + i e^a sin b, cos b - 1 = -2 sin^2(b/2)
    out = np.expm1(x.real) * np.cos(x.imag) - 2 * np.sin(x.imag / 2) ** 2 + 1j * np.exp(x.real) * np.sin(x.imag)
    xs = x[small]
    out[small] = xs * (1 + xs / 2 * (1 + xs / 3 * (1 + xs / 4 * (1 + xs / 5 * (1 + xs / 6)))))
    return out


def eig_discretize(A, B, Qc, Rc, dt):
    """Closed-form discretization of ONE step for a diagonalisable A = V L V^-1.

    With Phi(t) = V e^{Lt} V^-1 and Gamma(t) = V diag((e^{l t} - 1)/l) V^-1 B,
    every integral is a sum of exponentials integrated exactly, so this is
    accurate for stiff A (|l| dt up to 1e3 and beyond) as long as V is well
    conditioned, where the Van Loan matrix exponential overflows."""
    A = np.asarray(A, float)
    lam, V = np.linalg.eig(A.astype(complex))
    Vi = np.linalg.inv(V)
    ViB = Vi @ B
    M = V.T @ Qc @ V  # Phi(t)' Qc Phi(t) = Vi' e^{Lt} M e^{Lt} Vi
    L2 = lam[:, None] + lam[None, :]
    I2 = _int_exp(L2, dt)
    I1 = _int_exp(lam, dt)
    Phi = (V * np.exp(lam * dt)) @ Vi
    Gam = (V * I1) @ ViB
    Q = Vi.T @ (M * I2) @ Vi
    # int e^{l_j t} (e^{l_k t} - 1) / l_k dt
    N = Vi.T @ (M * (I2 - I1[:, None]) / lam[None, :]) @ ViB
    # int (e^{l_j t} - 1)(e^{l_k t} - 1) / (l_j l_k) dt
    Rm = M * (I2 - I1[:, None] - I1[None, :] + dt) / (lam[:, None] * lam[None, :])
    R = ViB.T @ Rm @ ViB + dt * Rc
    return tuple(np.real(x) for x in (Phi, Gam, Q, N, R))


# ------------------------------------------------------------ Riccati sweep
def riccati_sweep(A, B, Q, R, Q_final, N=None):
    """Backward sweep of the discrete LTV LQR with cross terms, written the
    obvious way: ``K = -(R + B'PB)^{-1} (N' + B'PA)`` (Cholesky via
    ``scipy.linalg.cho_factor``), ``P = Q + A'PA + G'K`` (symmetrized).
    A (T, n, n); B, Q, R per step or constant. Returns K (T, s, n), P (T+1, n, n)."""
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


def solve_continuous_scipy(A, B, dt, Qc, Rc, Q_final):
    """:func:`van_loan_scipy` then :func:`riccati_sweep`: K (T, s, n), P (T+1, n, n)
    and the discretization (Phi, Gamma, Q, N, R)."""
    Phi, Gam, Q, N, R = van_loan_scipy(A, B, Qc, Rc, dt)
    K, P = riccati_sweep(Phi, Gam, Q, R, Q_final, N)
    return K, P, (Phi, Gam, Q, N, R)
