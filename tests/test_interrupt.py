"""Long runs stop when the progress callback raises (real SIGINT: test_bad_input.py)."""
import numpy as np
import pytest

import directable as dr


@pytest.mark.parametrize("which", ["discretize", "sweep", "simulate", "linearize"])
def test_exception_in_progress_callback_stops_the_run(which):
    calls = []

    def cb(done, total):
        calls.append((done, total))
        raise KeyboardInterrupt

    n, T = 32, 4000
    A = np.tile(-np.eye(n), (T, 1, 1))
    B = np.ones((n, n // 2))
    model = dr.models.spring_chain(masses=n // 2)
    with pytest.raises(KeyboardInterrupt):
        if which == "discretize":
            dr.discretize(A, B, 0.01, np.eye(n), np.eye(n // 2), progress=cb)
        elif which == "sweep":
            # slow enough that the 50 ms throttle fires at least once
            dr.solve_discrete(np.tile(np.eye(96), (20000, 1, 1)), np.ones((96, 48)), 1.0, 1.0, 1.0, progress=cb)
        elif which == "simulate":
            dr.simulate(model, np.zeros(n), 2_000_000, 1e-3, progress=cb)
        else:
            dr.models.linearize(model, np.zeros((400_001, n)), 0.01, progress=cb)
    assert calls and all(total > 0 and 0 <= done <= total for done, total in calls)
