"""Arguments every entry point converts the same way: non-real dtypes refused by
the bindings the Python layer does not wrap, scalars never misread, empty
dimensions that do not crash, out-of-range values never taken for defaults."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import directable as dr
from directable import lqr, models, sim
from reference.problems import small_lq


_DIRECT_CLASS_CASES = {
    "Tracker.control complex z": lambda tr, ch: tr.control(np.zeros(4) + 1j),
    "Tracker.control string z": lambda tr, ch: tr.control(np.array(["1", "2", "3", "4"])),
    "Tracker.control object z": lambda tr, ch: tr.control(np.array([1.0, None, 0.0, 0.0])),
    "Tracker(K complex)": lambda tr, ch: lqr.Tracker(np.zeros((5, 2, 4)) + 1j, np.zeros((6, 4))),
    "Model.step complex z": lambda tr, ch: ch.step(np.zeros(4) + 1j, np.zeros(2), 0.01),
    "Model.dynamics complex z": lambda tr, ch: ch.dynamics(np.zeros(4) + 1j),
    "Simulation complex z0": lambda tr, ch: dr.Simulation(ch, np.zeros(4) + 1j, 0.01),
    "SpringChain complex masses": lambda tr, ch: dr.SpringChain(np.ones(2) + 1j, np.ones(2), np.ones(2), np.ones(2)),
}


@pytest.mark.filterwarnings("ignore:Casting complex values to real")
@pytest.mark.parametrize("case", list(_DIRECT_CLASS_CASES))
def test_direct_bindings_reject_non_real_dtypes(make_chain, case):
    tr = lqr.tracker(np.zeros((5, 2, 4)), np.zeros((6, 4)))
    with pytest.raises(TypeError):
        _DIRECT_CLASS_CASES[case](tr, make_chain(2))


_MISREAD_SCALARS = {
    "discretize(dt='0.1')": (TypeError, "dt", lambda a, ch: lqr.discretize(a["A"], a["B"], "0.1", 1.0, 1.0)),
    "simulate(dt='0.01')": (TypeError, "dt", lambda a, ch: sim.simulate(ch, np.zeros(4), 3, "0.01")),
    "retune(alpha_Q='2')": (TypeError, "alpha_Q",
                            lambda a, ch: lqr.retune(lqr.discretize(a["A"], a["B"], 0.1, 1.0, 1.0), 1.0, "2")),
    "simulate(steps=2.5)": ((TypeError, ValueError), "steps", lambda a, ch: sim.simulate(ch, np.zeros(4), 2.5, 0.01)),
    "discretize(intervals=2.5)": ((TypeError, ValueError), "intervals",
                                  lambda a, ch: lqr.discretize(a["A"], a["B"], 0.1, 1.0, 1.0, method="simpson",
                                                               intervals=2.5)),
}


@pytest.mark.parametrize("case", list(_MISREAD_SCALARS))
def test_scalar_arguments_are_not_misread(rng, make_chain, case):
    # numeric strings are not parsed, non-integer counts are not truncated
    exc, name, f = _MISREAD_SCALARS[case]
    with pytest.raises(exc, match=name):
        f(small_lq(rng), make_chain(2))


def _run_isolated(code):
    """Run code in a fresh interpreter: a crash (segfault) must not take pytest down."""
    prog = "import numpy as np\nfrom directable import lqr, _core\n" + textwrap.dedent(code)
    return subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=60)


_EMPTY_CASES = {
    "solve_discrete n=0": """
        try:
            lqr.solve_discrete(np.zeros((0, 0)), np.zeros((0, 1)), np.zeros((0, 0)), np.eye(1), np.zeros((0, 0)),
                               horizon=2)
        except ValueError as e:
            print("ValueError", e)
        """,
    "expm_bordered 0x0": """
        try:
            E, G, _, _ = _core.expm_bordered(np.zeros((0, 0)), np.zeros((0, 0)))
            assert np.asarray(E).shape == (0, 0) and np.asarray(G).shape == (0, 0)
            print("OK")
        except ValueError as e:
            print("ValueError", e)
        """,
}


@pytest.mark.parametrize("case", list(_EMPTY_CASES))
def test_empty_dimensions_do_not_crash(case):
    # in a fresh interpreter: a crash here must not take pytest down
    r = _run_isolated(_EMPTY_CASES[case])
    assert r.returncode == 0, f"interpreter died with {r.returncode}: {r.stderr[-500:]}"
    assert r.stdout.startswith("ValueError") or r.stdout.startswith("OK"), r.stdout + r.stderr


_SENTINEL_CASES = {
    "nearest_index(last=-5)": ("last|window", lambda ch, tr: tr.nearest_index(np.zeros(4), 0, -5)),
    "linearize(horizon=-5)": ("horizon", lambda ch, tr: models.linearize(ch, np.zeros((4, 4)), 0.1, horizon=-5)),
    "SpringChain(actuated (m, 0))": ("actuated", lambda ch, tr: dr.SpringChain(np.ones(2), np.ones(2), np.ones(2),
                                                                                np.ones(2), np.zeros((2, 0)))),
}


@pytest.mark.parametrize("case", list(_SENTINEL_CASES))
def test_out_of_range_values_are_not_taken_for_defaults(make_chain, case):
    name, f = _SENTINEL_CASES[case]
    tr = lqr.tracker(np.zeros((5, 2, 4)), np.zeros((6, 4)))
    with pytest.raises(ValueError, match=name):
        f(make_chain(2), tr)


def _unaligned(a):
    """A C-contiguous copy of ``a`` that starts one byte past an aligned
    address, as a buffer unpickled out of band (pickle protocol 5: Dask, Ray)
    can."""
    a = np.ascontiguousarray(a)
    raw = np.empty(a.nbytes + 1, np.uint8)
    out = raw[1:].view(a.dtype).reshape(a.shape)
    out[...] = a
    assert not out.flags.aligned and out.flags.c_contiguous
    return out


def test_unaligned_arrays_are_taken_as_aligned_copies():
    # read through a double* / int64* an unaligned buffer is undefined behaviour
    # (UBSan: "load of misaligned address"): the bindings copy it instead. In a
    # plain build the read happens to work on x86; `./dev sanitize` (this file is
    # in tests/sanitize/tests.txt) is where a missing copy fails.
    from directable import fem
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], float)
    t = np.array([[0, 1, 2, 3]], np.int64)
    here = fem.TetMesh(v, t)
    there = fem.TetMesh(_unaligned(v), _unaligned(t))
    assert np.array_equal(here.vertices, there.vertices) and np.array_equal(here.tets, there.tets)
    assert np.array_equal(here.volumes, there.volumes)
    p = small_lq(np.random.default_rng(3))
    K = lqr.solve_discrete(p["A"], p["B"], p["Q"], p["R"], p["Q_final"]).K
    K_unaligned = lqr.solve_discrete(_unaligned(p["A"]), _unaligned(p["B"]), p["Q"], p["R"], p["Q_final"]).K
    assert np.array_equal(K, K_unaligned)


def test_unaligned_out_array_is_refused():
    from directable import crowds
    grid = crowds.CrowdGrid(6, 5)
    pos = np.array([[2.2, 1.7], [3.1, 2.9]])
    vel = np.ones((2, 2))
    rho, ubar = crowds.splat(grid, pos, vel, 1.0)
    with pytest.raises(ValueError, match="out.*aligned"):
        crowds.splat(grid, pos, vel, 1.0, out=(_unaligned(np.zeros((5, 6))), np.zeros((5, 6, 2))))
    rho2, _ = crowds.splat(grid, pos, vel, 1.0, out=(np.zeros((5, 6)), np.zeros((5, 6, 2))))
    assert np.array_equal(rho, rho2)
