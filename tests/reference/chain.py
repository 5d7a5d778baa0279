"""Independent NumPy references for the planar chain and the PD/SPD servos:
kinematics written out link by link, the mass matrix from
finite-difference Jacobians of the centres of mass, the bias forces from
finite differences of the Lagrangian, and the servo loop of the paper
(eq. 1, 4, 5, 11) stepped in Python."""
from __future__ import annotations

import numpy as np


class RefChain:
    def __init__(self, masses, lengths, gravity=9.81, inertias=None, coms=None, damping=None, free_root=False):
        self.m = np.asarray(masses, float)
        self.l = np.asarray(lengths, float)
        self.L = self.m.size
        self.g = gravity
        self.I = self.m * self.l ** 2 / 12 if inertias is None else np.asarray(inertias, float)
        self.a = self.l / 2 if coms is None else np.asarray(coms, float)
        self.r = 2 if free_root else 0
        self.n = self.L + self.r
        self.c_damp = np.zeros(self.n) if damping is None else np.broadcast_to(np.asarray(damping, float), (self.n,))

    def coms(self, q):
        """(L, 2) centres of mass and (L,) absolute angles."""
        base = np.array(q[:2]) if self.r else np.zeros(2)
        phi = np.cumsum(q[self.r:])
        out = np.empty((self.L, 2))
        joint = base.copy()
        for i in range(self.L):
            d = np.array([np.sin(phi[i]), -np.cos(phi[i])])
            out[i] = joint + self.a[i] * d
            joint = joint + self.l[i] * d
        return out, phi

    def mass_matrix(self, q, h=1e-6):
        n = self.n
        Jc = np.empty((self.L, 2, n))
        for k in range(n):
            e = np.zeros(n)
            e[k] = h
            Jc[:, :, k] = (self.coms(q + e)[0] - self.coms(q - e)[0]) / (2 * h)
        M = np.zeros((n, n))
        for i in range(self.L):
            Jw = np.zeros(n)
            Jw[self.r:self.r + i + 1] = 1.0
            M += self.m[i] * Jc[i].T @ Jc[i] + self.I[i] * np.outer(Jw, Jw)
        return M

    def potential(self, q):
        return float(np.sum(self.m * self.g * self.coms(q)[0][:, 1]))

    def kinetic(self, q, qd):
        return 0.5 * qd @ self.mass_matrix(q) @ qd

    def bias_forces(self, q, qd, h=1e-5):
        """Euler-Lagrange with qdd = 0: C = (dM/dt) qd - dT/dq + dV/dq + damping qd."""
        n = self.n
        Mdot = (self.mass_matrix(q + h * qd) - self.mass_matrix(q - h * qd)) / (2 * h)
        dT = np.empty(n)
        dV = np.empty(n)
        for k in range(n):
            e = np.zeros(n)
            e[k] = h
            dT[k] = (self.kinetic(q + e, qd) - self.kinetic(q - e, qd)) / (2 * h)
            dV[k] = (self.potential(q + e) - self.potential(q - e)) / (2 * h)
        return Mdot @ qd - dT + dV + self.c_damp * qd


def servo_loop(M_of, C_of, q0, qd0, q_ref, qd_ref, kp, kd, dt, controller, tau_lim=None):
    """The paper's loop with explicit Euler, in plain NumPy. kp, kd (T, n)."""
    T, n = q_ref.shape[0] - 1, q_ref.shape[1]
    qd_ref = np.zeros_like(q_ref) if qd_ref is None else qd_ref
    q, qd = q0.copy(), qd0.copy()
    qs, taus = [q.copy()], []
    for i in range(T):
        M, C = M_of(q), C_of(q, qd)
        Kp, Kd = np.diag(kp[i]), np.diag(kd[i])
        if controller == "pd":
            tau = -Kp @ (q - q_ref[i]) - Kd @ (qd - qd_ref[i])
            if tau_lim is not None:
                tau = np.clip(tau, -tau_lim, tau_lim)
            qdd = np.linalg.solve(M, tau - C)
        else:
            e = q + dt * qd - q_ref[i + 1]
            qdd = np.linalg.solve(M + Kd * dt, -C - Kp @ e - Kd @ (qd - qd_ref[i + 1]))
            tau = -Kp @ e - Kd @ (qd + dt * qdd - qd_ref[i + 1])
            if tau_lim is not None and np.any(np.abs(tau) > tau_lim):
                tau = np.clip(tau, -tau_lim, tau_lim)
                qdd = np.linalg.solve(M, tau - C)
        q, qd = q + dt * qd, qd + dt * qdd
        qs.append(q.copy())
        taus.append(tau)
    return np.array(qs), np.array(taus)


def two_link_reference(T, dt):
    """The paper's sec. 3.4 task: q1 = cos t, q2 = cos t + 1."""
    t = np.arange(T + 1) * dt
    q = np.stack([np.cos(t), np.cos(t) + 1.0], axis=1)
    qd = np.stack([-np.sin(t), -np.sin(t)], axis=1)
    return q, qd
