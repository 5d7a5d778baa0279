"""One const PlanarChain shared by threads: the servo tracking loop and the
linearization run with the GIL released and give the single-thread
results bit for bit."""
from __future__ import annotations

import threading

import numpy as np

from reference.chain import two_link_reference
from directable import chain as dc


def _run_in_threads(work, count=4, repeat=3):
    results = [None] * count

    def body(k):
        for _ in range(repeat):
            results[k] = work(k)

    threads = [threading.Thread(target=body, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_one_chain_tracked_by_four_threads():
    ch = dc.PlanarChain([1.0, 0.8, 0.6], [1.0, 0.7, 0.5], damping=0.05, q_min=-2.0, q_max=2.0)
    T, dt = 300, 1 / 120
    q2, qd2 = two_link_reference(T, dt)
    q_ref = np.column_stack([q2, 0.5 * q2[:, 0]])
    qd_ref = np.column_stack([qd2, 0.5 * qd2[:, 0]])
    setups = [("spd", "euler", 0.1), ("pd", "semi_implicit", -0.1), ("spd", "rk4", 0.05), ("none", "rk4", 0.0)]

    def work(k):
        controller, integrator, offset = setups[k]
        r = dc.track(ch, q_ref, qd_ref, dt, 400.0, 400.0 * dt * 2, controller=controller, integrator=integrator,
                     q0=q_ref[0] + offset)
        return np.array(r.q), np.array(r.qd), np.array(r.tau)

    single = [work(k) for k in range(4)]
    for k, (q, qd, tau) in enumerate(_run_in_threads(work)):
        np.testing.assert_array_equal(q, single[k][0])
        np.testing.assert_array_equal(qd, single[k][1])
        np.testing.assert_array_equal(tau, single[k][2])
    assert not np.array_equal(single[0][0], single[1][0])  # the four runs differ


def test_one_chain_linearized_by_four_threads(rng):
    ch = dc.PlanarChain([1.0, 0.8], [1.0, 0.7], free_root=True)
    T, n = 50, ch.n
    z_refs = [np.cumsum(rng.standard_normal((T + 1, 2 * n)) * 0.05, axis=0) for _ in range(4)]

    def work(k):
        A, B = ch.linearize(z_refs[k], threads=1)
        return np.array(A), np.array(B)

    single = [work(k) for k in range(4)]
    for k, (A, B) in enumerate(_run_in_threads(work)):
        np.testing.assert_array_equal(A, single[k][0])
        np.testing.assert_array_equal(B, single[k][1])
