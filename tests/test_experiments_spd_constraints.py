"""SPD constraints of Tan, Liu & Turk (2011) sec. 4.3: a particle held on a
helix and a rod hanging from it."""
from __future__ import annotations

import numpy as np
import pytest

from directable.experiments import spd_constraints as sc


@pytest.mark.parametrize("segments", [2400, 24])
def test_spd_constraints_helix_and_rod(segments):
    curve = sc.helix(segments)
    dt, steps = 1 / 60, 200
    run = sc.helix_and_rod(curve, steps, dt, kp=1e16)  # kd = 1.5 kp dt
    assert np.all(np.isfinite(run.x1)) and np.all(np.isfinite(run.x2))
    assert run.curve_error.max() < 0.05
    assert np.abs(run.rod_error).max() < 0.02
    assert run.x1[-1, 2] < -0.2  # it slides down the helix
    # oscillations at sharp corners damp out and never accumulate
    assert run.curve_error[-50:].max() <= run.curve_error.max()
