"""Long runs stop when the progress callback raises (real SIGINT: test_bad_input.py)."""
import time

import numpy as np
import pytest

import directable as dr


class SlowModel(dr.Model):
    """A 2-state Python model whose Jacobian takes 1 ms, so a linearization
    outlasts the 50 ms progress throttle with tiny arrays."""

    def state_dim(self):
        return 2

    def control_dim(self):
        return 1

    def dynamics(self, z, t):
        return np.array([z[1], -z[0]])

    def jacobian(self, z, t):
        time.sleep(1e-3)
        return np.array([[0.0, 1.0], [-1.0, 0.0]])

    def control_matrix(self):
        return np.array([[0.0], [1.0]])


@pytest.mark.parametrize("which", ["discretize", "solve_continuous", "sweep", "sweep_team", "simulate", "linearize"])
def test_exception_in_progress_callback_stops_the_run(which):
    calls = []

    def cb(done, total):
        calls.append((done, total))
        raise KeyboardInterrupt

    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        if which == "discretize":  # ~4000 x 0.1 ms
            n, T = 32, 4000
            dr.discretize(np.tile(-np.eye(n), (T, 1, 1)), np.ones((n, n // 2)), 0.01, np.eye(n), np.eye(n // 2),
                          threads=1, progress=cb)
        elif which == "solve_continuous":  # the pipeline on all cores, ~4000 x 0.1 ms
            n, T = 32, 4000
            dr.solve_continuous(np.tile(-np.eye(n), (T, 1, 1)), np.ones((n, n // 2)), 0.01, np.eye(n),
                                np.eye(n // 2), np.eye(n), progress=cb)
        elif which == "sweep":  # ~4000 x 50 us
            dr.solve_discrete(np.eye(48), np.ones((48, 24)), 1.0, 1.0, 1.0, horizon=4000, progress=cb)
        elif which == "sweep_team":  # n >= 96: chunks on a team of threads, ~2000 x 0.2 ms
            dr.solve_discrete(0.99 * np.eye(128), np.ones((128, 64)), 1.0, 1.0, 1.0, horizon=2000, progress=cb)
        elif which == "simulate":
            dr.simulate(dr.models.spring_chain(masses=16), np.zeros(32), 400_000, 1e-3, progress=cb)
        else:
            dr.models.linearize(SlowModel(), np.zeros((2001, 2)), 0.01, threads=1, progress=cb)
    assert calls and all(total > 0 and 0 <= done < total for done, total in calls)
    assert time.perf_counter() - t0 < 10.0
