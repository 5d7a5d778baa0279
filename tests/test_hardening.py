"""Hostile input answered by a clear error, never a crash, a NaN result or a
silently changed argument: None for an object argument, NumPy floats for
counts, non-finite steps. Each case runs in a fresh interpreter, so a crash
(SIGSEGV) fails its own case instead of taking pytest down."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import directable as dr
from directable import fluid, mpc

_SETUP = """
import numpy as np
import directable as dr
from directable import _core, chain, fluid, mpc
chain2 = dr.models.spring_chain(masses=2)
planar = chain.PlanarChain(np.ones(2), np.ones(2))
grid = fluid.MACGrid2D(4, 4)
"""

# (call, exception types, text the message must contain)
_NONE_OBJECTS = {
    "simulate(model=None)": ("dr.simulate(None, np.zeros(4), 3, 0.01)", (TypeError, ValueError), "model"),
    "_core.simulate(model=None)": ("_core.simulate(None, np.zeros(4), 3, 0.01)", (TypeError, ValueError), "model"),
    "Simulation(model=None)": ("dr.Simulation(None, np.zeros(4), 0.01)", (TypeError, ValueError), "model"),
    "ReducedFluid(grid=None)": ("_core.ReducedFluid(None, np.zeros((40, 3)))", (TypeError, ValueError), "grid"),
    "FluidSim2D(grid=None)": ("fluid.FluidSim2D(None, 0.0, 0.01)", (TypeError, ValueError), "grid"),
    "FluidParticles(fluid=None)": ("fluid.FluidParticles(None, 1)", (TypeError, ValueError), "fluid"),
    "_core.track(model=None)": ("_core.track(None, np.zeros(2), np.zeros(2), np.zeros((3, 2)), kp=np.ones(2), "
                                "kd=np.ones(2), dt=0.01)", (TypeError, ValueError), "model"),
    "HorizonOptimizer(model=None)": ("_core.HorizonOptimizer(None, 3, np.ones(4), np.ones(2), np.ones(4))",
                                     (TypeError, ValueError), "model"),
    "EulerPrediction(model=None)": ("_core.EulerPrediction(None, 0.1, 0.0)", (TypeError, ValueError), "model"),
    "SubstepPrediction(model=None)": ("_core.SubstepPrediction(None, 2)", (TypeError, ValueError), "model"),
    "ModelPlant(model=None)": ("_core.ModelPlant(None, np.zeros(4), 0.1, 1, 0.0, None)", (TypeError, ValueError),
                               "model"),
    "run_plant_servo(plant=None)": ("_core.run_plant_servo(None, *[np.zeros(2)] * 5, 3, None)",
                                    (TypeError, ValueError), "plant"),
    "NewmarkFEM(model=None)": ("_core.NewmarkFEM(None, 0.01)", (TypeError, ValueError), "model"),
    "simulate(z0=None)": ("dr.simulate(chain2, None, 3, 0.01)", (TypeError, ValueError), "z0"),
    "Tracker.control(None)": ("dr.lqr.tracker(np.zeros((3, 2, 4)), np.zeros((4, 4))).control(None)",
                              (TypeError, ValueError), ""),
}


def _outcome(code):
    prog = _SETUP + textwrap.dedent(f"""
        try:
            {code}
        except Exception as e:
            print("RAISED", type(e).__name__, str(e).replace(chr(10), " "))
        else:
            print("RETURNED")
        """)
    r = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, f"crashed (exit {r.returncode}): {r.stderr[-1500:]}"
    return r.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("case", list(_NONE_OBJECTS))
def test_none_for_an_argument_is_a_clear_error(case):
    code, types, word = _NONE_OBJECTS[case]
    out = _outcome(code)
    assert out.startswith("RAISED"), out
    _, name, message = out.split(" ", 2)
    assert name in {t.__name__ for t in types}, out
    assert word in message, out


@pytest.mark.parametrize("value", [np.float32(8.7), np.float64(8.0), 8.5, "8"])
def test_counts_are_not_truncated(value):
    with pytest.raises(TypeError):
        fluid.MACGrid2D(value, 8)


def test_numpy_integers_pass_as_counts():
    g = fluid.MACGrid2D(np.int64(8), np.int32(6))
    assert (g.nx, g.ny) == (8, 6)


@pytest.mark.parametrize("which", ["advect_velocity", "advect_cells", "advect_particles"])
@pytest.mark.parametrize("dt", [np.nan, np.inf])
def test_non_finite_dt_of_advection(which, dt):
    g = fluid.MACGrid2D(8, 8)
    u = np.zeros(g.n_faces)
    args = {"advect_velocity": (u,), "advect_cells": (u, np.zeros(g.n_cells)),
            "advect_particles": (u, np.array([[0.5, 0.5]]))}[which]
    with pytest.raises(ValueError, match="dt must be finite"):
        getattr(g, which)(*args, dt)


def test_nan_bounds_of_minimize_lbfgs():
    with pytest.raises(ValueError, match="lower"):
        mpc.minimize_lbfgs(lambda x: (float(x @ x), 2 * x), np.ones(2), lower=np.array([np.nan, 0.0]))


@pytest.mark.parametrize("name", ["w_min", "w_max"])
def test_empty_control_limits_are_not_read_as_no_limits(name):
    with pytest.raises(ValueError, match=name):
        dr.lqr.tracker(np.zeros((3, 1, 2)), np.zeros((4, 2)), **{name: np.array([])})


def test_nan_state_of_a_simulation_is_reported_with_the_step():
    chain = dr.models.spring_chain(masses=2)
    with pytest.raises(ValueError, match="step"):
        dr.simulate(chain, np.ones(4), 50, 1e303)


def test_sizes_beyond_the_memory_are_memory_errors():
    with pytest.raises(MemoryError, match="nodes would need"):
        dr.cloth.ClothGrid(3, 10**12, 0.1, 0.02, 10.0, 0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="too large"):
        fluid.MACGrid2D(10**7, 10**7)


_NONE_SELF = """
import inspect, sys
import directable
from directable import _core
seen = 0
for cname, cls in sorted(vars(_core).items()):
    if not isinstance(cls, type):
        continue
    for name, member in sorted(vars(cls).items()):
        if name in ("__new__", "__init__", "__init_subclass__", "__subclasshook__", "__class_getitem__"):
            continue  # pybind11 checks the instance of a constructor itself
        if type(member).__name__ == "pybind11_static_property":
            continue  # a class-level property: its accessor gets the class, not an instance
        if isinstance(member, property):
            funcs = [(name + ".fget", member.fget), (name + ".fset", member.fset)]
        elif isinstance(member, (staticmethod, classmethod)) or not callable(member):
            continue
        else:
            funcs = [(name, member)]
        for label, f in funcs:
            if f is None or type(f).__name__ not in ("builtin_function_or_method", "instancemethod"):
                continue
            f = getattr(f, "__func__", f)
            for nargs in range(5):  # whatever the arity: None as self must be refused
                print(cname, label, nargs, flush=True)
                try:
                    f(None, *[None] * nargs)
                except TypeError:
                    pass
                except Exception as e:  # noqa: BLE001
                    print("UNEXPECTED", cname, label, type(e).__name__, e, flush=True)
                else:
                    if not (label.startswith("__") and nargs == 1):  # comparison operators: NotImplemented
                        print("ACCEPTED", cname, label, nargs, flush=True)
                seen += 1
print("DONE", seen)
"""


def test_none_as_self_of_every_bound_method_is_a_type_error():
    """``Class.method(None, ...)`` (an unbound method called with None as
    self) is a TypeError for every method and property of every bound class,
    never a null object handed to C++."""
    r = subprocess.run([sys.executable, "-X", "faulthandler", "-c", _NONE_SELF], capture_output=True, text=True,
                       timeout=120)
    lines = r.stdout.splitlines()
    assert r.returncode == 0, f"crashed (exit {r.returncode}) at {lines[-1:]}: {r.stderr[-1500:]}"
    assert lines[-1].startswith("DONE") and int(lines[-1].split()[1]) > 1000, lines[-3:]
    odd = [line for line in lines if line.startswith(("UNEXPECTED", "ACCEPTED"))]
    assert not odd, odd


@pytest.mark.parametrize("bad, got", [(None, "None"), (np.ones((1, 2)) + 1j, "dtype complex128"),
                                      (np.array([None, 1.0], dtype=object), "dtype object"), ("abc", "dtype <U3")])
def test_refused_array_arguments_are_named(bad, got):
    """The array caster's refusal names the argument, for Python-layer and raw extension calls alike."""
    g = fluid.MACGrid2D(4, 4)
    with pytest.raises(TypeError, match=rf"^points must be a real numeric array, got {got}"):
        g.advect_particles(np.zeros(g.n_faces), bad, 0.1)
    with pytest.raises(TypeError, match=rf"^control_points must be a real numeric array, got {got}"):
        dr._core.cloth_blend(np.zeros((5, 3)), bad, 0.5)


def test_substeps_of_a_huge_count_step_without_a_tape():
    """A step keeps two inner states; only the VJP records the count inner states, and a count whose
    tape cannot fit is a MemoryError with the size."""
    lin = mpc.LinearModel(0.5 * np.eye(2), np.ones((2, 1)))
    few, many = mpc.Substeps(lin, 3), mpc.Substeps(lin, 10**13)
    x, u = np.ones(2), np.zeros(1)
    np.testing.assert_allclose(few.step(x, u), 0.125 * x)
    with pytest.raises(MemoryError, match="inner states"):
        many.vjp(x, u, np.ones(2))


@pytest.mark.parametrize("call, name", [
    ("dr.chain.rollout(dr.chain.PlanarChain(np.ones(2), np.ones(2)), np.zeros(2), np.zeros(2), 0.01, 10**13)",
     "steps"),
    ("dr.sim.push(10**13, 2, 3, np.ones(2))", "steps"),
    ("dr.models.spring_chain(masses=10**13)", "masses"),
    ("mpc.HorizonOptimizer(mpc.LinearModel(np.eye(3), np.ones((3, 2))), 10**13, 1.0, 0.1, 1.0)", "horizon"),
    ("dr._core.pd_gain(np.ones(1), np.ones(1), 2 * 10**12)", "n"),
    ("fluid.FluidParticles(fluid.ReducedFluid(g, U, 0.0), 10**13)", "particles"),
    ("fluid.MACGrid3D(10**5, 10**5, 10**5)", "nx"),
    ("c.rollout(c.positions0, np.zeros_like(c.positions0), 0.001, 10**13)", "steps"),
])
def test_sizes_beyond_the_memory_name_their_argument(call, name):
    """A MemoryError names the argument that sized the request and the size, before anything is allocated
    (the Python layer's own arrays go through the core's check too)."""
    g = fluid.MACGrid2D(4, 4)
    U = np.linalg.qr(np.stack([g.project(np.sin(np.arange(g.n_faces) * (k + 1))) for k in range(3)]).T)[0]
    c = dr.cloth.ClothGrid(3, 3, 0.1, 0.02, 10.0, 0.0, 0.0, 0.0)
    with pytest.raises(MemoryError, match=rf"(?<![\w]){name}(?![\w]).* would need .* GB"):
        eval(call, {"dr": dr, "np": np, "mpc": mpc, "fluid": fluid, "g": g, "U": U, "c": c})


def test_bounds_that_leave_no_feasible_point_are_refused():
    f = lambda x: (float(x @ x), 2 * x)  # noqa: E731
    with pytest.raises(ValueError, match=r"lower must be <= upper, got lower\[1\] = 2"):
        mpc.minimize_lbfgs(f, np.ones(2), lower=np.array([0.0, 2.0]), upper=np.ones(2))
    with pytest.raises(ValueError, match="upper must leave a finite point feasible, got -inf at index 0"):
        mpc.minimize_lbfgs(f, np.ones(2), upper=np.array([-np.inf, 1.0]))
    with pytest.raises(ValueError, match="lower must leave a finite point feasible"):
        mpc.minimize_lbfgs(f, np.ones(2), lower=np.array([0.0, np.inf]))
    with pytest.raises(ValueError, match=r"the size of x0"):
        mpc.minimize_lbfgs(f, np.ones(3), lower=-np.ones(2))


def test_spd_step_names_the_argument_of_the_wrong_size():
    args = dict(M=np.eye(2), C=np.zeros(2), q=np.zeros(3), qd=np.zeros(2), q_ref_next=np.ones(2),
                qd_ref_next=np.zeros(2), kp=10.0, kd=1.0, dt=0.01)
    with pytest.raises(ValueError, match=r"^q must have shape \(2,\), got \(3,\)"):
        dr.chain.spd_step(**args)
    with pytest.raises(ValueError, match=r"^kd must be >= 0, got -1"):
        dr.chain.spd_step(**dict(args, q=np.zeros(2), kd=-1.0))


def test_overflowing_weights_are_named_with_their_size():
    A = np.tile(0.9 * np.eye(3), (4, 1, 1))
    with pytest.raises(ValueError, match=r"non-finite cost-to-go at step \d+: .*too large.*Q 1e\+308"):
        dr.lqr.solve_discrete(A, np.ones((3, 2)), 1e308 * np.eye(3), np.eye(2), np.eye(3))


def test_composite_calls_name_their_own_arguments():
    from directable import characters

    g = fluid.MACGrid2D(4, 4)
    snaps = np.ones((3, g.n_faces))
    snaps[1, 2] = np.nan
    with pytest.raises(ValueError, match="^snapshots: "):
        fluid.velocity_basis(g, snaps, r=2)
    walker = characters.synthetic_walker()
    with pytest.raises(TypeError, match="^turns must be a sequence"):
        characters.synthetic_clips(walker, gaits=("walk",), turns=0.5)
    with pytest.raises(TypeError, match="^gaits must be a gait name or a sequence"):
        characters.synthetic_clips(walker, gaits=3, turns=(0.5,))
    with pytest.raises(ValueError, match=r"^q_ref must be finite"):
        dr.chain.linearize(dr.chain.PlanarChain(np.ones(2), np.ones(2)), np.full((3, 2), np.nan), np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"^r must lie in \[1e-100, 1e100\] m"):
        fluid.sphere(1e-200, 1)
