"""repr of the core objects says what they are: sizes, horizon, stored dtypes."""
import inspect
import re

import numpy as np

import directable as dr
from directable import _core


def _solution(T=20, m=2):
    model = dr.models.spring_chain(m)
    z_ref = dr.models.rollout(model, np.zeros(2 * m), np.ones((T, m)), 0.02)
    A = dr.models.linearize(model, z_ref, 0.02)
    return model, z_ref, dr.lqr.solve_continuous(A, model.control_matrix(), 0.02, 1e-3, 1e-2, 1e3)


def test_lqr_objects():
    model, z_ref, sol = _solution()
    assert repr(sol) == "LQRSolution(horizon=20, n=4, s=2, K=(20, 2, 4) float64, P=(21, 4, 4) float64)"
    assert repr(sol.discretization).startswith("Discretization(horizon=20, n=4, s=2, dt=0.02, method=")
    ctrl = dr.lqr.tracker(sol, z_ref, gain_dtype="int8")
    text = repr(ctrl)
    assert text.startswith("Tracker(horizon=20, n=4, s=2, gain_dtype='int8', loop=False, index=0")
    assert "K=(20, 2, 4) float64" in text


def test_models_and_results():
    model, z_ref, sol = _solution()
    assert repr(model) == "SpringChain(masses=(2,) float64, actuated=(2, 2) float64)"
    run = dr.simulate(model, z_ref[0], 20, 0.02, controller=dr.lqr.tracker(sol, z_ref))
    assert repr(run) == "SimulationResult(states=(21, 4) float64, controls=(20, 2) float64)"
    mesh = dr.fem.cantilever(n=(2, 1, 1))
    assert re.fullmatch(r"TetMesh\(num_vertices=\d+, num_tets=\d+\)", repr(mesh))


def test_every_class_has_its_own_repr():
    # No class of the core falls back to "<directable._core.X object at 0x...>".
    for name, cls in vars(_core).items():
        if inspect.isclass(cls) and not hasattr(cls, "__members__"):
            assert "__repr__" in vars(cls) or any("__repr__" in vars(b) for b in cls.__mro__[1:-1]), name


def test_unlisted_classes_show_scalars_only():
    grid = _core.MACGrid2D(4, 3, 0.25)
    text = repr(grid)
    assert text.startswith("MACGrid2D(") and "nx=4" in text and "ny=3" in text and "h=0.25" in text
