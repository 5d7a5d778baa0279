"""directable: real-time directable physically based simulation.

Time-varying LQR tracking of reduced simulations with gentle control forces
(Barbic & Popovic 2008), and PD / Stable PD servos on articulated chains
(Tan, Liu & Turk 2011), on a C++17/Eigen core.

    import directable as dr
    sol = dr.lqr.solve_continuous(A, B, dt, Q, R, Q_final)
"""
from ._loader import load_core as _load_core

_core = _load_core()  # the build of the C++ core that suits this CPU (runtime dispatch)

from . import chain, cloth, fem, fluid, io, lqr, models, mpc, reduce, sim, sph
from .fem import ReducedStVK
from .io import load, save
from .lqr import discretize, solve_continuous, solve_discrete
from .fluid import ReducedFluid
from .models import Model, SpringChain
from .sim import Simulation, simulate

__version__ = "0.1.0"


def build_info() -> dict:
    """How the installed C++ core was built and what it runs on.

    Returns
    -------
    dict
        ``version``: the package version; ``kernels``: the instruction-set
        level the hot kernels were compiled for ("x86-64", "x86-64-v3",
        "x86-64-v4", or "aarch64"), with " (native)" for a
        ``DIRECTABLE_NATIVE=ON`` build tuned to the building CPU; ``cpu``: the
        highest level this CPU offers; ``native``; ``compiler``;
        ``build_type``; ``eigen`` (version); ``simd`` (Eigen's instruction
        sets in the kernels); ``openmp`` (bool); ``threads`` (of the
        parallel precomputations).
    """
    info = dict(_core.build_info())
    if info.get("native"):
        info["kernels"] += " (native)"
    return {"version": __version__, **info}

__all__ = ["chain", "cloth", "fem", "ReducedStVK", "fluid", "ReducedFluid", "lqr", "models", "mpc", "sph", "reduce", "sim", "io", "save", "load", "discretize", "solve_discrete", "solve_continuous",
           "Model", "SpringChain", "Simulation", "simulate", "build_info", "__version__"]
