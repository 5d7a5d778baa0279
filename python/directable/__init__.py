"""directable: real-time directable physically based simulation.

Time-varying LQR tracking of reduced simulations with gentle control forces
(Barbic & Popovic 2008), and PD / Stable PD servos on articulated chains
(Tan, Liu & Turk 2011), on a C++17/Eigen core.

    import directable as dr
    sol = dr.lqr.solve_continuous(A, B, dt, Q, R, Q_final)
"""
from . import _core, chain, cloth, fem, fluid, io, lqr, models, mpc, reduce, sim, sph
from .fem import ReducedStVK
from .io import load, save
from .lqr import discretize, solve_continuous, solve_discrete
from .fluid import ReducedFluid
from .models import Model, SpringChain
from .sim import Simulation, simulate

__version__ = "0.1.0"

__all__ = ["chain", "cloth", "fem", "ReducedStVK", "fluid", "ReducedFluid", "lqr", "models", "mpc", "sph", "reduce", "sim", "io", "save", "load", "discretize", "solve_discrete", "solve_continuous",
           "Model", "SpringChain", "Simulation", "simulate", "__version__"]
