"""Evaluations of a PlanarChain along a whole trajectory in one C++ call,
against the per-sample methods (bit for bit), and their bad input."""
from __future__ import annotations

import numpy as np
import pytest

from directable import chain as dc


@pytest.fixture
def chain():
    return dc.PlanarChain([1.0, 0.7, 0.4], [1.0, 0.8, 0.5], damping=0.1, free_root=True)


def test_along_equals_per_sample(chain, rng):
    T, n = 25, chain.n
    q, qd, qdd = (rng.standard_normal((T, n)) for _ in range(3))
    tau = chain.inverse_dynamics_along(q, qd, qdd)
    np.testing.assert_array_equal(tau, np.array([chain.inverse_dynamics(*x) for x in zip(q, qd, qdd)]))
    energy = chain.energies_along(q, qd)
    np.testing.assert_array_equal(energy, np.array([chain.kinetic_energy(a, b) + chain.potential_energy(a)
                                                    for a, b in zip(q, qd)]))
    pos = chain.joint_positions_along(q)
    assert pos.shape == (T, chain.links + 1, 2)
    np.testing.assert_array_equal(pos, np.array([chain.joint_positions(a) for a in q]))
    # tau is what forward dynamics inverts
    np.testing.assert_allclose(chain.forward_dynamics(q[3], qd[3], tau[3]), qdd[3], rtol=1e-10, atol=1e-10)


def test_along_bad_input(chain):
    n = chain.n
    with pytest.raises(ValueError, match=rf"qd.*\(4, {n}\).*\(3, {n}\)"):
        chain.inverse_dynamics_along(np.zeros((4, n)), np.zeros((3, n)), np.zeros((4, n)))
    with pytest.raises(ValueError, match=rf"q.*\(T, {n}\)"):
        chain.energies_along(np.zeros((4, n + 1)), np.zeros((4, n + 1)))
    bad = np.zeros((2, n))
    bad[1, 0] = np.nan
    with pytest.raises(ValueError, match="q"):
        chain.joint_positions_along(bad)
    with pytest.raises(ValueError, match="q"):
        chain.joint_positions_along(np.zeros(n))
