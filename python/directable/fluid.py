"""Reduced fluids with immersed particles (Treuille thesis ch. 3; Barbic &
Popovic 2008 sec. 4.4, 5, appendix C).

    grid = dr.fluid.MACGrid2D(64, 64)             # h = 1/64, domain [0,1]^2
    run = dr.fluid.full_run(grid, steps, dt, winds)  # the offline reference
    basis = dr.fluid.velocity_basis(grid, run.velocities, r=32)
    fluid = dr.ReducedFluid(grid, basis, viscosity)  # z' = A(z) z + nu D z + w
    model = dr.fluid.FluidParticles(fluid, particles=1)  # x = [p, z], B = [0; I]

Velocity fields are flat MAC vectors (all x-faces, then all y-faces; see
``MACGrid2D``); basis columns are orthonormal in the plain dot product.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import _core
from ._validate import (about, as_float_array, check_size, finite_array, finite_real, integer, points_array, real,
                        run_with_progress, zeros)
from .reduce import pca
from ._fluid3d import GalerkinSteps, _grid

MACGrid2D = _core.MACGrid2D
FluidSim2D = _core.FluidSim2D
Shape2D = _core.Shape2D
Obstacle = _core.Obstacle
BoundaryBasis = _core.BoundaryBasis
Coupling = _core.Coupling


class FluidParticles(_core.FluidParticles):
    __doc__ = _core.FluidParticles.__doc__

    def __new__(cls, fluid=None, *args, **kwargs):
        if isinstance(fluid, (_core.ReducedFluid3D, _core.ReducedScene3D)):  # 3D (directable.fluid.FluidParticles3D)
            return FluidParticles3D(fluid, *args, **kwargs)
        return super().__new__(cls)


__all__ = ["MACGrid2D", "FluidSim2D", "ReducedFluid", "FluidParticles", "FullRun", "full_run", "velocity_basis",
           "project", "face_positions", "cell_image",
           "Shape2D", "Obstacle", "disk", "box", "c_shape", "BoundaryBasis", "Coupling", "ReducedScene", "ParticlePD"]


def disk(r, segments=48) -> Shape2D:
    """A disk centred on the origin, as a regular polygon.

    Parameters
    ----------
    r : float
        Radius (m), > 0.
    segments : int
        Number of sides, >= 3.

    Returns
    -------
    Shape2D
        The polygon, counter-clockwise.
    """
    r = real(r, "r", positive=True)
    segments = integer(segments, "segments")
    if segments < 3:
        raise ValueError(f"segments must be >= 3 (a polygon), got {segments}")
    a = 2 * np.pi * np.arange(segments) / segments
    return Shape2D(np.stack([r * np.cos(a), r * np.sin(a)], axis=1))


def box(w, h) -> Shape2D:
    """A rectangle centred on the origin.

    Parameters
    ----------
    w : float
        Width along x (m), > 0.
    h : float
        Height along y (m), > 0.

    Returns
    -------
    Shape2D
        The rectangle, counter-clockwise.
    """
    w, h = real(w, "w", positive=True), real(h, "h", positive=True)
    return Shape2D(np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]]))


def c_shape(outer, inner, opening=np.pi / 2, segments=32) -> Shape2D:
    """A "C": an annulus around the origin with a gap centred on +x.

    Parameters
    ----------
    outer : float
        Outer radius (m).
    inner : float
        Inner radius (m), 0 < inner < outer.
    opening : float
        Angle of the gap (rad), in (0, 2 pi).
    segments : int
        Segments of each arc.

    Returns
    -------
    Shape2D
        The polygon, counter-clockwise.
    """
    outer, inner = finite_real(outer, "outer", 0.0, strict=True), finite_real(inner, "inner", 0.0, strict=True)
    opening = real(opening, "opening")
    if not 0 < inner < outer:
        raise ValueError(f"need 0 < inner < outer, got inner={inner}, outer={outer}")
    if not 0 < opening < 2 * np.pi:
        raise ValueError(f"opening must be in (0, 2 pi), got {opening}")
    segments = integer(segments, "segments")
    if segments < 1:
        raise ValueError(f"segments must be >= 1, got {segments}")
    check_size("segments", 2 * segments + 2, 2)
    a = np.linspace(opening / 2, 2 * np.pi - opening / 2, segments + 1)
    out = np.stack([outer * np.cos(a), outer * np.sin(a)], axis=1)
    inn = np.stack([inner * np.cos(a[::-1]), inner * np.sin(a[::-1])], axis=1)
    return Shape2D(np.vstack([out, inn]))


class ReducedScene(_core.ReducedScene):
    __doc__ = _core.ReducedScene.__doc__

    def step(self, z, w, dt, poses, velocities, data=None, return_flow=False):
        """One step of Fig. 3.7: advect, diffuse, add forces, feedforward, feedback.

        Parameters
        ----------
        z : (r,) array
            Reduced velocity.
        w : (r,) array
            Reduced force (acceleration), added after advection and diffusion.
        dt : float
            Step length (s), > 0.
        poses : (K, 3) array
            Each object's (x, y, theta) (m, m, rad).
        velocities : (K, 3) array
            Each object's (vx, vy, omega) (m/s, m/s, rad/s).
        data : ReducedSceneData, optional
            Buffers from ``create_data()``; by default one per calling thread.
        return_flow : bool
            Also return the flow state the coefficients were computed from.

        Returns
        -------
        z_next : (r,) array
        boundary_coeffs : (K, max_m) array
            Row i = [F_i z_flow (p_i), vx, vy, omega], zero-padded.
        z_flow : (r,) array, only with ``return_flow``
        """
        if data is None:
            data = _thread_data(self)
        return super().step(z, w, dt, poses, velocities, data, return_flow)

    def advect_smoke(self, density, z, boundary_coeffs, poses, dt):
        """Moves a smoke density one semi-Lagrangian step through u' (eq. 3.9).

        The density is read back along u' (``velocity_field``) with bilinear
        interpolation (``MACGrid2D.advect_cells``); the cells whose centres lie
        inside an object are then emptied.

        Parameters
        ----------
        density : (nx ny,) array
            Cell densities.
        z : (r,) array
            Reduced flow state (the one the coefficients were computed from).
        boundary_coeffs : (K, max_m) array
            The objects' coefficients, as ``step`` returns them.
        poses : (K, 3) array
            The objects' (x, y, theta) (m, m, rad).
        dt : float
            Step (s), > 0.

        Returns
        -------
        (nx ny,) array
            The advected density, zero inside the objects.
        """
        grid = self.reduced.grid
        poses = points_array(poses, "poses", 3)
        u = self.velocity_field(z, boundary_coeffs, poses)
        with about("density"):
            rho = grid.advect_cells(u, as_float_array(density, "density"), real(dt, "dt"))
        c = (np.arange(grid.nx) + 0.5) * grid.h
        X, Y = np.meshgrid(c, (np.arange(grid.ny) + 0.5) * grid.h)
        cells = np.stack([X.ravel(), Y.ravel()], axis=1)
        for cpl, (x, y, th) in zip(self.couplings, poses):
            cs, sn = np.cos(th), np.sin(th)
            rho[cpl.boundary_basis.shape.inside((cells - (x, y)) @ np.array([[cs, -sn], [sn, cs]]))] = 0.0
        return rho


class ReducedFluid(GalerkinSteps, _core.ReducedFluid):
    __doc__ = _core.ReducedFluid.__doc__

    def __new__(cls, grid=None, *args, **kwargs):
        if isinstance(grid, _core.MACGrid3D):  # the 3D model (directable.fluid.ReducedFluid3D)
            return ReducedFluid3D(grid, *args, **kwargs)
        return super().__new__(cls)

    def match_viscosity(self, run, forces=None, start=0, stop=None, bounds=(1e-6, 1.0)) -> tuple[float, float]:
        """The viscosity that matches the full solver's numerical dissipation.

        Fitted on the energy decay of a (training) run: the full solver's
        semi-Lagrangian advection loses energy, the reduced advection keeps
        it exactly, so nu stands in for the loss. The reduced model is
        rolled out from the run's projected start under its projected forces
        for trial viscosities, and nu minimises the mean squared difference
        of the normalised log energies (``GalerkinFluid.fit_viscosity``). Use
        ``ReducedFluid(grid, basis, nu)`` for the matched model.

        Parameters
        ----------
        run : FullRun
            A full run on this model's grid (its ``velocities`` (T+1, N), m/s).
        forces : (T, N) array, optional
            The face accelerations (m/s^2) applied in the window's steps;
            None: the window is unforced.
        start, stop : int, optional
            The window of the run, steps ``start .. stop`` (default all).
        bounds : (float, float)
            Search interval of nu (m^2/s), 0 < lo < hi.

        Returns
        -------
        nu : float
            The matched viscosity (m^2/s).
        residual : float
            RMS of the log-energy mismatch at nu (about the relative energy
            error; 0 for a perfect match).
        """
        if not hasattr(run, "velocities") or not hasattr(run, "dt"):
            raise TypeError(f"run must be a FullRun (velocities, dt), got {type(run).__name__}")
        U = as_float_array(run.velocities, "run.velocities")
        start = integer(start, "start")
        stop = U.shape[0] - 1 if stop is None else integer(stop, "stop")
        if not 0 <= start < stop < U.shape[0]:
            raise ValueError(f"start and stop must satisfy 0 <= start < stop <= {U.shape[0] - 1}, got {start}, {stop}")
        U = U[start:stop + 1]
        B = self.basis
        if forces is None:
            W = np.zeros((stop - start, self.r))
        else:
            f = as_float_array(forces, "forces")
            if f.shape != (stop - start, U.shape[1]):
                raise ValueError(f"forces must have shape ({stop - start}, {U.shape[1]}), got {f.shape}")
            W = f @ B
        lo, hi = (real(b, "bounds") for b in bounds)
        return self.fit_viscosity(B.T @ U[0], np.sum(U * U, axis=1), run.dt, W, lo, hi)


class ParticlePD(_core.ParticlePD):
    __doc__ = _core.ParticlePD.__doc__

    def __init__(self, model, x_ref, dt, k_z=0.0, k_p=0.0, k_pdot=0.0, particles=None, t0=0.0):
        """Eq. 14 of Barbic & Popovic 2008 on a model with particles.

        Parameters
        ----------
        model : FluidParticles
            State [p (d P), z (r)], control [0; I] (2D or 3D, on a scene or not).
        x_ref : (T+1, n) array
            Reference states (positions in m, reduced velocities).
        dt : float
            Step between reference states (s).
        k_z : float
            Gain on the reduced velocity error (1/s), >= 0.
        k_p : float
            Gain on the particle position error (1/s^2, through Psi(p)'), >= 0.
        k_pdot : float
            Gain on the particle velocity error (1/s, through Psi(p)'), >= 0; 0: a P controller.
        particles : int, optional
            Number of particles P; default ``model.particles``.
        t0 : float
            Time of x_ref[0] (s).
        """
        if particles is None:
            particles = getattr(model, "particles", None)
            if particles is None:
                raise ValueError(f"particles must be given for a model without a particle count, got {model!r}")
        super().__init__(model, particles, x_ref, dt, k_z, k_p, k_pdot, t0)

    def with_gains(self, k_z, k_p, k_pdot) -> "ParticlePD":
        """The same model and reference with other gains.

        Parameters
        ----------
        k_z, k_p, k_pdot : float
            Gains of eq. 14 (1/s, 1/s^2, 1/s), each >= 0.

        Returns
        -------
        ParticlePD
        """
        return ParticlePD(self.model, self.reference, self.dt, k_z, k_p, k_pdot, self.particles, self.t0)

    def run(self, x0, steps, disturbance=None, progress=None):
        """A closed-loop run under this law (GIL released).

        Parameters
        ----------
        x0 : (n,) array
            Start state.
        steps : int
            Steps, in [1, T].
        disturbance : (steps, r) array, optional
            Reduced forces added to w over each step.
        progress : None, bool or callable(done, total)
            True: a tqdm bar.

        Returns
        -------
        SimulationResult
            states (steps+1, n), controls (steps, r) = w, effort (steps,) = |w|^2.
        """
        return run_with_progress(super().run, progress, "PD run", x0=x0, steps=steps, disturbance=disturbance)

    def sweep(self, gains, x0, steps, disturbance=None, threads=0, progress=None) -> dict:
        """Closed-loop runs under many gain settings, in parallel (GIL released).

        Parameters
        ----------
        gains : (m, 3) array
            Rows (k_z, k_p, k_pdot), each >= 0.
        x0 : (n,) array
            Start state of every run.
        steps : int
            Steps, in [1, T].
        disturbance : (steps, r) array, optional
            Reduced forces added to w, the same for every run.
        threads : int
            Threads (<= 0: all cores).
        progress : None, bool or callable(done, total)
            Progress over the settings.

        Returns
        -------
        dict
            ``final_error`` (m, P) and ``max_error`` (m, P): particle
            distances to the reference (m), inf where diverged; ``effort``
            (m,): sum |w|^2 dt, inf where diverged; ``diverged_at`` (m,).
        """
        return run_with_progress(super().sweep, progress, "PD gains", gains=gains, x0=x0, steps=steps,
                                 disturbance=disturbance, threads=threads)


@dataclass
class FullRun:
    """A full-grid run (``full_run``).

    Attributes
    ----------
    velocities : (T+1, N) array
        Face velocities per state (m/s), the initial one first.
    particles : (T+1, P, 2) array
        Particle positions (m).
    density : (T+1, nx ny) array or None
        Smoke density per state, when recorded.
    dt : float
        Step (s).
    forces : list
        The winds of the run.
    """

    velocities: np.ndarray
    particles: np.ndarray
    density: np.ndarray | None
    dt: float
    forces: list = field(default_factory=list)


def face_positions(grid) -> np.ndarray:
    """Positions of a 2D grid's faces in the velocity vector's order.

    Parameters
    ----------
    grid : MACGrid2D
        The grid.

    Returns
    -------
    (N, 2) array
        Face centres (m): x-faces first, then y-faces.
    """
    nx, ny, h = _grid(grid, _core.MACGrid2D, "MACGrid2D").nx, grid.ny, grid.h
    i, j = np.meshgrid(np.arange(nx + 1), np.arange(ny), indexing="xy")
    xf = np.stack([i.ravel() * h, (j.ravel() + 0.5) * h], axis=1)
    i, j = np.meshgrid(np.arange(nx), np.arange(ny + 1), indexing="xy")
    yf = np.stack([(i.ravel() + 0.5) * h, j.ravel() * h], axis=1)
    return np.vstack([xf, yf])


def cell_image(grid, q) -> np.ndarray:
    """A cell field as an image.

    Parameters
    ----------
    grid : MACGrid2D
        The grid.
    q : (nx ny,) array
        Cell values.

    Returns
    -------
    (ny, nx) array
        Row j at height y (``origin="lower"`` for imshow); a view of ``q``
        when it is a float64 C-contiguous array.
    """
    shape = (grid.ny, grid.nx)
    return finite_array(q, "q", [(grid.n_cells,), shape]).reshape(shape)


def full_run(grid, steps, dt, winds=(), particles=None, viscosity=0.0, density=None, u0=None,
             extra_force=None, progress=None, obstacles=None, pressure_solver="direct") -> FullRun:
    """Runs the full simulator ``steps`` steps in one C++ call.

    Parameters
    ----------
    grid : MACGrid2D
    steps : int
        Number of steps T.
    dt : float
        Time step (s).
    winds : sequence
        Wind impulses, each with ``field(grid)`` (N,), ``start`` and
        ``duration`` in steps (e.g. ``directable.experiments.fluid_forcing.Wind``),
        applied on steps [start, start + duration).
    particles : (P, 2) array, optional
        Initial particle positions.
    viscosity : float
        Kinematic viscosity (>= 0).
    density : (nx ny,) array, optional
        Initial smoke density; its states are then recorded.
    u0 : (N,) array, optional
        Initial velocity (projected first).
    extra_force : callable, optional
        ``extra_force(i) -> (N,)`` or None: one more acceleration field per step.
    progress : None, bool or callable(done, total)
        Progress report of the run (GIL released, Ctrl-C stops it).
    obstacles : (shapes, poses, velocities), optional
        K moving obstacles: ``shapes`` a sequence of K ``Shape2D``, ``poses``
        (T, K, 3) their (x, y, theta) during each step (m, m, rad) and
        ``velocities`` (T, K, 3) their (vx, vy, omega) (m/s, m/s, rad/s).
    pressure_solver : {"direct", "pcg"}
        Pressure solve of the steps with obstacles (see ``FluidSim2D``).

    Returns
    -------
    FullRun
        velocities (T+1, N), particles (T+1, P, 2), density (T+1, nx ny) or None.
    """
    steps = integer(steps, "steps")
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    sim = FluidSim2D(grid, real(viscosity, "viscosity"), real(dt, "dt"), pressure_solver=pressure_solver)
    if u0 is not None:
        with about("u0"):
            sim.velocity = grid.project(as_float_array(u0, "u0"))
    sim.particles = np.zeros((0, 2)) if particles is None else points_array(particles, "particles", 2)
    if density is not None:
        sim.density = as_float_array(density, "density")
    forces = zeros((steps, grid.n_faces), "steps")
    for w in winds:
        forces[max(w.start, 0):max(w.start + w.duration, 0)] += w.field(grid)
    if extra_force is not None:
        for i in range(steps):  # the caller's forcing, sampled once per step before the run
            e = extra_force(i)
            if e is not None:
                forces[i] += e
    if obstacles is None:
        U, X, Dn = run_with_progress(sim.run, progress, "full fluid run", forces=forces,
                                     record_density=density is not None)
    else:
        shapes, poses, vels = obstacles
        poses = as_float_array(poses, "poses").reshape(steps, -1)
        vels = as_float_array(vels, "velocities").reshape(steps, -1)
        U, X, Dn = run_with_progress(sim.run_obstacles, progress, "full fluid run", forces=forces, shapes=list(shapes),
                                     poses=poses, velocities=vels, record_density=density is not None)
    return FullRun(U, X, Dn, float(dt), list(winds))


def velocity_basis(grid, snapshots, r, method="auto", seed=0) -> np.ndarray:
    """A velocity basis: the PCA (``directable.reduce.pca``) of velocity snapshots.

    Each snapshot is re-projected first, so every basis field is a
    combination of divergence-free free-slip fields, hence one itself; the
    closed faces (walls, faces of solid cells) are exactly zero. A
    ``MACGrid3D`` streams the snapshots instead (``velocity_basis3d``).

    Parameters
    ----------
    grid : MACGrid2D or MACGrid3D
        The grid of the snapshots.
    snapshots : (k, N) array
        Velocity fields as rows (m/s).
    r : int
        Basis size.
    method : str
        PCA method of ``directable.reduce.pca``.
    seed : int
        Seed of a randomised PCA.

    Returns
    -------
    (N, r) array
        Orthonormal columns.
    """
    if isinstance(grid, _core.MACGrid3D):  # streamed (directable.fluid.velocity_basis3d)
        return velocity_basis3d(grid, snapshots, r)
    S = as_float_array(snapshots, "snapshots")
    if S.ndim != 2 or S.shape[1] != grid.n_faces:
        raise ValueError(f"snapshots must have shape (k, {grid.n_faces}), got {S.shape}")
    with about("snapshots"):
        S = grid.project(S)
    keep = np.linalg.norm(S, axis=1) > 0
    if not keep.any():
        raise ValueError("snapshots are all zero: no velocity basis")
    U = np.ascontiguousarray(pca(S[keep], r, method=method, seed=seed).U)
    U[grid.wall_mask()] = 0.0  # exactly: the PCA's rounding would leave ~1e-16 on closed faces
    return U


def project(basis, velocities) -> np.ndarray:
    """Reduced coordinates z = B' u.

    Parameters
    ----------
    basis : (N, r) array
        Orthonormal basis B.
    velocities : (T, N) or (N,) array
        Fields (m/s).

    Returns
    -------
    (T, r) or (r,) array
        Their coordinates.
    """
    basis = finite_array(basis, "basis", (None, None))
    return finite_array(velocities, "velocities", [(None, basis.shape[0]), (basis.shape[0],)],
                        of="N = the rows of basis") @ basis


# 3D: MACGrid3D, FluidSim3D, ReducedFluid3D, ... (and the per-thread step buffers both models use)
from ._fluid3d import *  # noqa: E402,F401,F403
from ._fluid3d import __all__ as _all_3d, _thread_data  # noqa: E402
__all__ += _all_3d
