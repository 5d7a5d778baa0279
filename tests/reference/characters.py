"""Character animation (Treuille thesis ch. 5) re-derived in NumPy: the blend's
alignment and physics cost, the navigation task's transition and costs, the
value-function basis, the approximate-LP loop (SciPy linprog, dense
assembly) and tabular value iteration. Shared by the tests and the benchmark.
"""
from __future__ import annotations

import numpy as np
from numpy.polynomial import legendre


def wrap(a):
    return (np.asarray(a) + np.pi) % (2 * np.pi) - np.pi


def rot(theta, p):
    """eq. 5.2's rotation of (..., 3) points about y: (x, z) -> (c x - s z, s x + c z)."""
    c, s = np.cos(theta), np.sin(theta)
    out = np.array(p, dtype=float, copy=True)
    out[..., 0] = c * p[..., 0] - s * p[..., 2]
    out[..., 2] = s * p[..., 0] + c * p[..., 2]
    return out


def mirror(poses, mirror_map):
    """(m, J, 3) reflected x -> -x, joints swapped by mirror_map."""
    out = np.array(poses)[:, mirror_map, :].copy()
    out[..., 0] *= -1
    return out


def transition(A, B, a_frames, b_frames, foot, toe, dt, joint_weights, velocity_weight):
    """One blend C -> C' (B already mirrored if needed): (dx, dz, dtheta, duration, psi).

    a_frames, b_frames: (in, out) constraint frames of C and C'."""
    b, a2 = a_frames[1], b_frames[0]
    hA, hB = sum(a_frames) // 2, sum(b_frames) // 2
    before = min(b - hA, a2)
    after = min(len(A) - 1 - b, hB - a2)
    head = lambda v: np.arctan2(-v[0], v[2])  # noqa: E731
    th = head(A[b, toe] - A[b, foot]) - head(B[a2, toe] - B[a2, foot])
    t = A[b, foot] - rot(th, B[a2, foot])
    Bt = rot(th, B) + np.array([t[0], 0.0, t[2]])
    ia = np.arange(b - before, b + after + 1)
    ib = np.arange(a2 - before, a2 + after + 1)
    D = A[ia] - Bt[ib]                      # (n, J, 3)
    psi = np.sum(joint_weights * np.sum(D ** 2, axis=2))
    V = np.diff(D, axis=0) / dt
    psi += velocity_weight * np.sum(joint_weights * np.sum(V ** 2, axis=2))
    return t[0], t[2], th, (b - a2) * dt, psi


def navigation(table, rho, gait_ok, gx, gpsi, grho, states):
    """Navigation successors (S, K, 3) and costs c_s + c_t (S, K) from the transition table."""
    c = states[:, 0].astype(int)
    d, th = states[:, 1:2], states[:, 2:3]
    dx, dz, dth = table["dx"][c], table["dz"][c], table["dtheta"][c]
    nxt = table["next_clip"][c]
    ct, st = np.cos(th), np.sin(th)
    S = np.empty(dx.shape + (3,))
    S[..., 0] = nxt
    S[..., 1] = d + ct * dx - st * dz
    S[..., 2] = wrap(th + dth)
    cost = gx * np.abs(d) + gpsi * table["psi"][c] + grho * np.abs(wrap(S[..., 2] + rho[nxt]))
    cost = np.where(gait_ok[nxt], cost, np.inf)
    return S, cost


def features(states, degrees, scales, columns):
    """Outer product of Legendre families P_N(x / scale), last family fastest: (S, nb)."""
    out = np.ones((len(states), 1))
    for N, s, col in zip(degrees, scales, columns):
        g = legendre.legvander(states[:, col] / s, N)
        out = (out[:, :, None] * g[:, None, :]).reshape(len(states), -1)
    return out


def alp(succ_cost, feats, samples, K, alpha, max_iterations=50):
    """The LP loop in NumPy/SciPy with dense rows, |r| <= 1e4: returns r (K, nb), iterations, rows.

    succ_cost(states) -> (next (S, K, d), cost (S, K)); feats(states) -> (S, nb)."""
    from scipy.optimize import linprog

    S = len(samples)
    Phi = feats(samples)
    nb = Phi.shape[1]
    nxt, cost = succ_cost(samples)
    PhiN = feats(nxt.reshape(-1, nxt.shape[-1])).reshape(S, K, nb)
    clip = samples[:, 0].astype(int)
    nclip = nxt[..., 0].astype(int)
    c = np.zeros(K * nb)
    for s in range(S):
        c[clip[s] * nb:(clip[s] + 1) * nb] += Phi[s]
    r = np.zeros((K, nb))
    seen = set()
    rows, rhs = [], []
    it = 0
    for it in range(max_iterations):
        q = cost + alpha * np.einsum("skb,skb->sk", PhiN, r[nclip])
        best = np.argmin(q, axis=1)
        new = [(s, k) for s, k in enumerate(best) if np.isfinite(cost[s, k]) and (s, k) not in seen]
        if not new:
            break
        for s, k in new:
            seen.add((s, k))
            row = np.zeros(K * nb)
            row[clip[s] * nb:(clip[s] + 1) * nb] += Phi[s]
            row[nclip[s, k] * nb:(nclip[s, k] + 1) * nb] -= alpha * PhiN[s, k]
            rows.append(row)
            rhs.append(cost[s, k])
        res = linprog(-c, A_ub=np.array(rows), b_ub=np.array(rhs), bounds=(-1e4, 1e4), method="highs")
        assert res.status == 0, res.message
        r = res.x.reshape(K, nb)
    return r, it, len(rows)


def value_iteration(succ_cost, K, axes, cyclic, alpha, tol=1e-9, max_sweeps=5000):
    """Plain value iteration with multilinear interpolation: V (K, *shape), sweeps."""
    mesh = np.meshgrid(np.arange(K, dtype=float), *axes, indexing="ij")
    X = np.stack([m.ravel() for m in mesh], axis=1)
    nxt, cost = succ_cost(X)
    N, Kc, d = nxt.shape
    shape = tuple(len(a) for a in axes)
    # interpolation corners of every successor (precomputed once)
    idx = [nxt[..., 0].astype(int)]
    lo, hi, t = [], [], []
    for i, a in enumerate(axes):
        v = nxt[..., i + 1]
        n = len(a)
        if cyclic[i]:
            h = 2 * np.pi / n
            s = np.mod((v - a[0]) / h, n)
            j = np.minimum(np.floor(s).astype(int), n - 1)
            lo.append(j), hi.append((j + 1) % n), t.append(s - j)
        else:
            vc = np.clip(v, a[0], a[-1])
            j = np.clip(np.searchsorted(a, vc, side="right") - 1, 0, n - 2)
            lo.append(j), hi.append(j + 1), t.append((vc - a[j]) / (a[j + 1] - a[j]))
    V = np.zeros((K,) + shape)
    sweeps = 0
    for sweeps in range(1, max_sweeps + 1):
        Vn = np.zeros(nxt.shape[:2])
        for mask in range(2 ** len(axes)):
            w = np.ones(nxt.shape[:2])
            ind = [idx[0]]
            for i in range(len(axes)):
                up = (mask >> i) & 1
                w = w * (t[i] if up else 1 - t[i])
                ind.append(hi[i] if up else lo[i])
            Vn += w * V[tuple(ind)]
        q = np.where(np.isfinite(cost), cost + alpha * Vn, np.inf)
        new = q.min(axis=1).reshape(V.shape)
        delta = np.max(np.abs(new - V))
        V = new
        if delta <= tol:
            break
    return V, sweeps
