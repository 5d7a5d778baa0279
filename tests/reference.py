"""Independent NumPy/SciPy reference implementations for the test suite.

Nothing here calls ``directable``: every function re-derives what the C++
core computes from its definition (DESIGN.md, the Barbic-Popovic appendix A)
by a different algorithm, so that agreement is evidence of correctness.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla


# --------------------------------------------------------------------- helpers
def rel_err(a, b) -> float:
    """||a - b|| / ||b|| (Frobenius over all entries); absolute when b == 0."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    nb = np.linalg.norm(b)
    d = np.linalg.norm(a - b)
    return float(d / nb) if nb > 0 else float(d)


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


def van_loan_scipy(A, B, Qc, Rc, dt, T=None):
    """Phi, Gamma, Q, N, R by ONE scipy expm of the full Van Loan matrix per
    step: with F = [[A, B], [0, 0]] and W = blkdiag(Qc, Rc),
    expm([[-F', W], [0, F]] dt) = [[., E12], [0, E22]], int_0^dt e^{F't} W
    e^{Ft} dt = E22' E12 (Van Loan 1978, thm 1)."""
    A = np.asarray(A, float)
    T = T or (A.shape[0] if A.ndim == 3 else 1)
    A, B, Qc, Rc = _seq(A, T), _seq(B, T), _seq(Qc, T), _seq(Rc, T)
    n, s = B.shape[1:]
    m = n + s
    out = [np.empty((T, n, n)), np.empty((T, n, s)), np.empty((T, n, n)), np.empty((T, n, s)), np.empty((T, s, s))]
    for i in range(T):
        F = np.zeros((m, m))
        F[:n, :n] = A[i]
        F[:n, n:] = B[i]
        C = np.zeros((2 * m, 2 * m))
        C[:m, :m] = -F.T
        C[:m, m:] = sla.block_diag(Qc[i], Rc[i])
        C[m:, m:] = F
        E = sla.expm(C * dt)
        E22, E12 = E[m:, m:], E[:m, m:]
        W = E22.T @ E12
        for k, v in enumerate((E22[:n, :n], E22[:n, n:], W[:n, :n], W[:n, n:], W[n:, n:])):
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


# ------------------------------------------------------ extended-precision expm
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


# ------------------------------------------------------------- spring chain
def chain_dynamics(masses, k, k3, c, S, z):
    """F(z) of the damped Duffing chain (first mass tied to a wall), NumPy."""
    m = len(masses)
    x, v = z[:m], z[m:]
    d = np.diff(np.concatenate([[0.0], x]))
    dd = np.diff(np.concatenate([[0.0], v]))
    t = k * d + k3 * d**3 + c * dd  # tension of spring j (joins j-1 and j)
    f = -t.copy()
    f[:-1] += t[1:]
    return np.concatenate([v, f / masses])


def chain_energy(masses, k, k3, z):
    m = len(masses)
    x, v = z[:m], z[m:]
    d = np.diff(np.concatenate([[0.0], x]))
    return 0.5 * np.sum(masses * v**2) + np.sum(0.5 * k * d**2 + 0.25 * k3 * d**4)


def chain_control_matrix(masses, S):
    m = len(masses)
    S = np.eye(m) if S is None else np.asarray(S, float)
    return np.vstack([np.zeros((m, S.shape[1])), S / np.asarray(masses)[:, None]])


def rk4_step(f, z, t, dt, Bw):
    """Classical RK4 of z' = f(z, t) + Bw with Bw held over the step."""
    k1 = f(z, t) + Bw
    k2 = f(z + 0.5 * dt * k1, t + 0.5 * dt) + Bw
    k3 = f(z + 0.5 * dt * k2, t + 0.5 * dt) + Bw
    k4 = f(z + dt * k3, t + dt) + Bw
    return z + (dt / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4)
