"""Reduced models: the Model interface, the Duffing spring chain and the
linearizer."""
from __future__ import annotations

import numpy as np
import pytest

import directable as dr
from directable import models, sim
from reference.spring_chain import chain_control_matrix, chain_dynamics, chain_energy, rk4_step



def _fd_jacobian(f, z, eps=1e-6):
    n = z.size
    J = np.empty((n, n))
    for j in range(n):
        h = eps * max(1.0, abs(z[j]))
        e = np.zeros(n)
        e[j] = h
        J[:, j] = (f(z + e) - f(z - e)) / (2 * h)
    return J


CHAINS = {
    "uniform": dict(m=4),
    "varied": dict(m=5, mass=[1.0, 2.0, 0.5, 1.5, 3.0], stiffness=[30.0, 50, 10, 40, 20],
                   cubic=[100.0, 0, 300, 50, 500], damping=[0.1, 0.0, 0.5, 0.2, 1.0]),
    "single": dict(m=1, cubic=50.0),
    "actuated": dict(m=4, actuated=[1, 3]),
}


def _chain_params(make_chain, spec):
    spec = dict(spec)
    m = spec.pop("m")
    chain = make_chain(m, **spec)
    full = lambda key, default: np.array(np.broadcast_to(np.asarray(spec.get(key, default), float), (m,)))  # noqa: E731
    p = dict(masses=full("mass", 1.0), k=full("stiffness", 40.0), k3=full("cubic", 400.0), c=full("damping", 0.2))
    act = spec.get("actuated")
    S = None
    if act is not None:
        S = np.zeros((m, len(act)))
        S[act, np.arange(len(act))] = 1.0
    return chain, p, S


@pytest.mark.parametrize("name", list(CHAINS))
def test_chain_dynamics_jacobian_and_B(rng, make_chain, name):
    chain, p, S = _chain_params(make_chain, CHAINS[name])
    m = len(p["masses"])
    n = 2 * m
    assert chain.state_dim() == n
    assert chain.control_dim() == (m if S is None else S.shape[1])
    np.testing.assert_array_equal(chain.masses, p["masses"])
    np.testing.assert_allclose(chain.control_matrix(), chain_control_matrix(p["masses"], S), rtol=1e-15)
    for _ in range(5):
        z = 0.3 * rng.standard_normal(n)
        F = chain.dynamics(z, 0.0)
        np.testing.assert_allclose(F, chain_dynamics(p["masses"], p["k"], p["k3"], p["c"], S, z), rtol=1e-13,
                                   atol=1e-13 * np.abs(F).max())
        J = chain.jacobian(z)
        J_fd = _fd_jacobian(lambda x: chain.dynamics(x, 0.0), z)
        np.testing.assert_allclose(J, J_fd, rtol=1e-6, atol=1e-6 * np.abs(J).max())
        # the library's own finite-difference helper agrees too
        np.testing.assert_allclose(models.finite_difference_jacobian(chain, z), J, rtol=1e-6,
                                   atol=1e-6 * np.abs(J).max())
        assert chain.energy(z) == pytest.approx(chain_energy(p["masses"], p["k"], p["k3"], z), rel=1e-13)


def test_chain_is_time_invariant_and_linear_without_cubic(rng, make_chain):
    chain = make_chain(3, cubic=0.0)
    z = rng.standard_normal(6)
    np.testing.assert_array_equal(chain.dynamics(z, 0.0), chain.dynamics(z, 12.5))
    J = chain.jacobian(z)
    np.testing.assert_allclose(chain.dynamics(z), J @ z, rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(J, chain.jacobian(np.zeros(6)))


def test_step_is_rk4_with_held_control(rng, make_chain):
    chain, p, S = _chain_params(make_chain, CHAINS["actuated"])
    B = chain.control_matrix()
    f = lambda z, t: chain_dynamics(p["masses"], p["k"], p["k3"], p["c"], S, z)  # noqa: E731
    for dt in (1e-3, 0.02):
        z = 0.3 * rng.standard_normal(8)
        w = rng.standard_normal(2)
        np.testing.assert_allclose(chain.step(z, w, dt), rk4_step(f, z, 0.0, dt, B @ w), rtol=1e-13, atol=1e-14)


def _energy_drift(chain, z0, dt, t_end):
    steps = int(round(t_end / dt))
    res = sim.simulate(chain, z0, steps, dt)
    E = np.array([chain.energy(z) for z in res.states])
    return E


def test_energy_conserved_without_damping_as_dt_shrinks(make_chain):
    chain = make_chain(4, damping=0.0)
    z0 = np.concatenate([[0.1, -0.05, 0.15, 0.0], [0.0, 0.3, 0.0, -0.2]])
    E0 = chain.energy(z0)
    drifts = []
    for dt in (0.02, 0.01, 0.005):
        E = _energy_drift(chain, z0, dt, 2.0)
        drifts.append(np.abs(E - E0).max() / E0)
    assert drifts[0] < 5e-3
    ratios = np.array(drifts[:-1]) / np.array(drifts[1:])
    assert np.all(ratios > 10), (drifts, ratios)  # RK4: ~2^4 per halving
    assert drifts[-1] < 5e-6


def test_energy_decreases_with_damping(make_chain):
    c = np.array([0.5, 0.2, 1.0, 0.3])
    chain = make_chain(4, damping=c)
    z0 = np.concatenate([[0.1, -0.05, 0.15, 0.0], [0.0, 0.3, 0.0, -0.2]])
    dt = 0.005
    res = sim.simulate(chain, z0, 400, dt)
    Z = np.asarray(res.states)
    E = np.array([chain.energy(z) for z in Z])
    assert np.all(np.diff(E) < 0)
    assert E[-1] < 0.8 * E[0]
    # dE/dt = -sum_j c_j (v_j - v_{j-1})^2: the loss matches its integral
    v = Z[:, 4:]
    dv = np.diff(np.concatenate([np.zeros((len(v), 1)), v], axis=1), axis=1)
    power = (c * dv**2).sum(axis=1)
    loss = np.sum(0.5 * (power[1:] + power[:-1])) * dt
    assert (E[0] - E[-1]) == pytest.approx(loss, rel=1e-4)


def test_spring_chain_broadcasts_scalars(make_chain):
    """(Regression: as_float_array once made spring_chain(4) a ONE-mass chain.)"""
    chain = models.spring_chain(4, mass=2.0, stiffness=30.0, cubic=10.0, damping=0.1)
    assert chain.state_dim() == 8
    np.testing.assert_array_equal(chain.masses, np.full(4, 2.0))
    np.testing.assert_array_equal(chain.stiffness, np.full(4, 30.0))
    ref = make_chain(4, mass=2.0, stiffness=30.0, cubic=10.0, damping=0.1)
    z = np.linspace(-0.2, 0.3, 8)
    np.testing.assert_array_equal(chain.dynamics(z), ref.dynamics(z))


def test_spring_chain_actuation(make_chain):
    chain = make_chain(4, mass=2.0, actuated=[0, 2])
    S = np.zeros((4, 2))
    S[0, 0] = S[2, 1] = 1.0
    np.testing.assert_array_equal(chain.actuated, S)
    np.testing.assert_allclose(chain.control_matrix(), np.vstack([np.zeros((4, 2)), S / 2.0]))
    M = np.array([[1.0], [0.5], [0.0], [-1.0]])
    chain2 = make_chain(4, actuated=M)
    np.testing.assert_array_equal(chain2.control_matrix(), np.vstack([np.zeros((4, 1)), M]))
    assert make_chain(4).control_dim() == 4


# ---------------------------------------------------------------- linearize
def test_linearize_equals_per_step_jacobian(rng, make_chain):
    chain = make_chain(5)
    T, dt = 25, 0.01
    z_ref = 0.3 * rng.standard_normal((T + 1, 10))
    A = models.linearize(chain, z_ref, dt)
    assert A.shape == (T, 10, 10)
    for i in range(T):
        np.testing.assert_array_equal(A[i], chain.jacobian(z_ref[i], i * dt))
    np.testing.assert_array_equal(models.linearize(chain, z_ref, dt, threads=1), A)
    np.testing.assert_array_equal(models.linearize(chain, z_ref, dt, horizon=10), A[:10])
    # the array owns its memory through the capsule and outlives everything else
    del chain
    np.testing.assert_array_equal(A[0], A[0].copy())


class TimeVaryingLinear(dr.Model):
    """z' = (A0 + t A1) z + B w, a Python model with an explicit time dependence."""

    def __init__(self, A0, A1, B):
        super().__init__()
        self.A0, self.A1, self.B = (np.asarray(x, float) for x in (A0, A1, B))
        self.times = []

    def state_dim(self):
        return self.A0.shape[0]

    def control_dim(self):
        return self.B.shape[1]

    def dynamics(self, z, t):
        self.times.append(t)
        return (self.A0 + t * self.A1) @ z

    def jacobian(self, z, t):
        return self.A0 + t * self.A1

    def control_matrix(self):
        return self.B


def test_python_model_in_linearize_and_simulate(rng):
    n, s = 3, 2
    model = TimeVaryingLinear(rng.standard_normal((n, n)), 0.3 * rng.standard_normal((n, n)),
                              rng.standard_normal((n, s)))
    T, dt, t0 = 8, 0.05, 0.7
    z_ref = rng.standard_normal((T + 1, n))
    A = models.linearize(model, z_ref, dt, t0=t0)
    for i in range(T):
        np.testing.assert_allclose(A[i], model.A0 + (t0 + i * dt) * model.A1, rtol=1e-15, atol=1e-15)
    # simulate (C++ loop calling back into Python) = a NumPy RK4 loop
    z0 = rng.standard_normal(n)
    W = rng.standard_normal((T, s))
    model.times.clear()
    res = sim.simulate(model, z0, T, dt, t0=t0, open_loop=W)
    f = lambda z, t: (model.A0 + t * model.A1) @ z  # noqa: E731
    z = z0.copy()
    expect = [z]
    for i in range(T):
        z = rk4_step(f, z, t0 + i * dt, dt, model.B @ W[i])
        expect.append(z)
    np.testing.assert_allclose(res.states, np.array(expect), rtol=1e-12, atol=1e-13)
    np.testing.assert_array_equal(res.controls, W)
    # RK4 evaluates at t, t + dt/2 (twice), t + dt
    np.testing.assert_allclose(model.times[:4], [t0, t0 + dt / 2, t0 + dt / 2, t0 + dt], rtol=1e-15)
    assert len(model.times) == 4 * T
    # model.step and the per-step Simulation use the same code path
    np.testing.assert_allclose(model.step(z0, W[0], dt, t0), expect[1], rtol=1e-13, atol=1e-14)
    stepper = dr.Simulation(model, z0, dt, t0=t0)
    for i in range(T):
        stepper.step(w_open=W[i])
    np.testing.assert_array_equal(stepper.state, res.states[-1])
    assert stepper.time == pytest.approx(t0 + T * dt, rel=1e-14)


def test_python_model_errors_propagate(rng):
    class Broken(TimeVaryingLinear):
        def jacobian(self, z, t):
            raise ArithmeticError("no jacobian here")

    class WrongShape(TimeVaryingLinear):
        def dynamics(self, z, t):
            return np.zeros(z.size + 1)

    args = (np.eye(2), np.zeros((2, 2)), np.ones((2, 1)))
    with pytest.raises(ArithmeticError, match="no jacobian"):
        models.linearize(Broken(*args), np.zeros((4, 2)), 0.1)
    with pytest.raises(ValueError, match="dynamics"):
        sim.simulate(WrongShape(*args), np.zeros(2), 3, 0.1)


def test_rollout_is_open_loop_simulation(rng, make_chain):
    chain = make_chain(3)
    W = 0.5 * rng.standard_normal((30, 3))
    z0 = 0.1 * rng.standard_normal(6)
    states = models.rollout(chain, z0, W, 0.01)
    res = sim.simulate(chain, z0, 30, 0.01, open_loop=W)
    np.testing.assert_array_equal(states, res.states)
    z = z0
    for i in range(30):
        z = chain.step(z, W[i], 0.01)
    np.testing.assert_array_equal(states[-1], z)


def test_models_bad_input(rng, make_chain):
    chain = make_chain(2)
    cases = [
        (ValueError, "masses", lambda: models.spring_chain(0)),
        (ValueError, "masses", lambda: make_chain(2, mass=[1.0, -1.0])),
        (ValueError, "masses", lambda: make_chain(2, mass=[1.0, np.inf])),
        (ValueError, "stiffness", lambda: make_chain(2, stiffness=[1.0, np.nan])),
        (ValueError, "damping", lambda: make_chain(2, damping=[-1.0, 0.0])),
        (TypeError, "masses", lambda: models.spring_chain(np.ones(2) + 0j)),
        (ValueError, "actuated", lambda: make_chain(2, actuated=[2])),
        (ValueError, "actuated", lambda: make_chain(2, actuated=[-1])),
        (ValueError, "actuated", lambda: make_chain(2, actuated=np.ones((3, 1)))),
        (ValueError, "stiffness", lambda: models.spring_chain(np.ones(3), stiffness=np.ones(2), cubic=np.ones(3),
                                                              damping=np.ones(3))),
        (ValueError, r"\bz\b", lambda: chain.dynamics(np.zeros(3))),
        (ValueError, r"\bz\b", lambda: chain.jacobian(np.zeros(5))),
        (ValueError, r"\bz\b", lambda: chain.energy(np.zeros(3))),
        (ValueError, r"\bw\b", lambda: chain.step(np.zeros(4), np.zeros(3), 0.01)),
        (ValueError, "non-finite", lambda: chain.step(np.array([np.nan, 0, 0, 0]), np.zeros(2), 0.01)),
        (ValueError, "z_ref", lambda: models.linearize(chain, np.zeros((5, 3)), 0.01)),
        (ValueError, "z_ref", lambda: models.linearize(chain, np.zeros(4), 0.01)),
        (ValueError, "z_ref", lambda: models.linearize(chain, np.full((5, 4), np.nan), 0.01)),
        (TypeError, "z_ref", lambda: models.linearize(chain, np.zeros((5, 4)) + 0j, 0.01)),
        (ValueError, "z_ref", lambda: models.linearize(chain, np.zeros((3, 4)), 0.01, horizon=5)),
        (ValueError, r"\bw\b", lambda: models.rollout(chain, np.zeros(4), np.zeros(3), 0.01)),
    ]
    for exc, name, f in cases:
        with pytest.raises(exc, match=name):
            f()
