"""3D reduced fluids (Treuille thesis sec. 3.6-3.7): the grid, the full
solver with moving obstacles, the reduced model and immersed particles.

    grid = dr.fluid.MACGrid3D(32, 32, 32)              # h = 1/32, domain [0,1]^3
    plate = dr.fluid.plate(0.4, 0.4, 0.08)              # w (x), h (y), thickness (z)
    ob = dr.fluid.Obstacle3D(plate, (0.5, 0.5, 0.5), rotation=(np.pi / 2, 0, 0))
    run = dr.fluid.full_run3d(grid, steps, dt, force=..., obstacles=lambda i: [ob])
    basis = dr.fluid.velocity_basis(grid, run.velocities, r=32)  # streamed PCA
    fluid = dr.ReducedFluid(grid, basis, viscosity)     # a ReducedFluid3D
    poses = np.array([dr.fluid.pose6((0.5, 0.5, 0.5), (np.pi / 2, 0, 0))])  # (n, 6): position, rotation vector
    bb = dr.fluid.BoundaryBasis3D.build(fluid, plate, poses, p=24)          # sec. 3.5.1 in 3D, 6 rigid fields
    scene = dr.fluid.ReducedScene3D(fluid, [dr.fluid.Coupling3D(fluid, bb)])
    z, coeffs = scene.step(z, w, dt, poses[:1], velocities)                # Fig. 3.7; velocities (K, 6)

Velocity fields are flat MAC vectors (x-faces, y-faces, z-faces, i fastest;
see ``MACGrid3D``); cell fields are (nz ny nx,) with i fastest. Memory: a
basis is N r float64, about 3 n^3 r 8 bytes on an n^3 grid (a 64^3 basis of
64 fields is 400 MB), and each full snapshot 3 n^3 8 bytes (6.3 MB at 64^3).
"""
from __future__ import annotations

import threading
import warnings
from dataclasses import dataclass
from typing import Callable, Iterable

import numpy as np

from . import _core
from ._validate import (about, as_float_array, finite_array, integer, iterable, points_array, progress_callback, real)
from .reduce import IncrementalPCA

MACGrid3D = _core.MACGrid3D
Shape3D = _core.Shape3D
Obstacle3D = _core.Obstacle3D
FluidParticles3D = _core.FluidParticles3D
BoundaryBasis3D = _core.BoundaryBasis3D
Coupling3D = _core.Coupling3D

__all__ = ["MACGrid3D", "FluidSim3D", "Shape3D", "Obstacle3D", "ReducedFluid3D", "FluidParticles3D", "FullRun3D",
           "full_run3d", "velocity_basis3d", "face_positions3d", "cell_volume", "sphere", "plate", "basis_bytes",
           "BoundaryBasis3D", "Coupling3D", "ReducedScene3D", "pose6", "rigid_velocity3d"]


def sphere(r, subdivisions=2) -> Shape3D:
    """An icosphere centred on the object origin.

    Parameters
    ----------
    r : float
        Radius (m).
    subdivisions : int
        Times the icosahedron's triangles are split in four.

    Returns
    -------
    Shape3D
    """
    return Shape3D.sphere(r, subdivisions)


def plate(w, h, thickness, aperture=None) -> Shape3D:
    """A plate centred on the object origin, its normal along z.

    Parameters
    ----------
    w, h : float
        Sides along x and y (m).
    thickness : float
        Extent along z (m).
    aperture : (2,) array, optional
        Sides (aw, ah) (m) of a centred rectangular hole through it.

    Returns
    -------
    Shape3D
    """
    return Shape3D.plate(w, h, thickness, aperture)


class GalerkinSteps:
    """The Python step of every reduced fluid (2D and 3D share GalerkinFluid's step)."""

    def step(self, z, w, dt, data=None):
        """One reduced step: force, exact advection exp(dt A(z)), diffusion exp(dt nu D).

        Parameters
        ----------
        z : (r,) array
            Reduced velocity.
        w : (r,) array
            Reduced force (acceleration), held over the step.
        dt : float
            Step length (s), > 0.
        data : ReducedFluidData, optional
            Buffers from ``create_data()``, used by one thread at a time. By
            default each calling thread gets its own, kept for its later
            steps; the model itself is read-only and may be shared by threads.

        Returns
        -------
        (r,) array
            The next reduced velocity.
        """
        return _core.GalerkinFluid.step(self, z, w, dt, _thread_data(self) if data is None else data)


class ReducedFluid3D(GalerkinSteps, _core.ReducedFluid3D):
    __doc__ = _core.ReducedFluid3D.__doc__

    def advect_particles(self, z, z_next, points, dt, drift=None, obstacles=(), threads=0, data=None):
        """One RK2 (midpoint) step of particles through the reduced field plus a drift.

        The field is Psi z at the start and Psi (z + z_next) / 2 at the
        midpoint. Parallel over particles (visited in cell order), GIL released.

        Parameters
        ----------
        z, z_next : (r,) arrays
            Reduced velocity at the start and the end of the step.
        points : (P, 3) array
            Positions (m); not modified.
        dt : float
            Step (s).
        drift : (3,) array, optional
            Constant drift (m/s), e.g. the leaves' small fall speed.
        obstacles : sequence of Obstacle3D
            Particles that end inside one are pushed out along the surface normal.
        threads : int
            Threads (<= 0: the team chosen by measurement over the calls sharing ``data``).
        data : ReducedFluidData, optional
            Buffers from ``create_data()``; by default one per calling thread.

        Returns
        -------
        points : (P, 3) array
            Moved, clamped to the domain, outside the obstacles.
        pushed : int
            Pushes out of an obstacle in this step.
        """
        obstacles = () if obstacles is None else list(obstacles)
        return super().advect_particles(z, z_next, points, dt, drift, obstacles, threads,
                                        _thread_data(self) if data is None else data)



def _thread_data(fluid):
    """The calling thread's own step buffers of a reduced fluid (created once)."""
    local = fluid.__dict__.get("_thread_data")
    if local is None:
        local = fluid.__dict__.setdefault("_thread_data", threading.local())
    data = getattr(local, "data", None)
    if data is None:
        data = local.data = fluid.create_data()
    return data


class ReducedScene3D(_core.ReducedScene3D):
    __doc__ = _core.ReducedScene3D.__doc__

    def step(self, z, w, dt, poses, velocities, data=None, return_flow=False):
        """One step of Fig. 3.7 in 3D: advect, diffuse, add forces, feedforward, feedback.

        Parameters
        ----------
        z : (r,) array
            Reduced velocity.
        w : (r,) array
            Reduced force (acceleration), added after advection and diffusion.
        dt : float
            Step length (s), > 0.
        poses : (K, 6) array
            Each object's position (m) and rotation vector (rad): world = R local + position.
        velocities : (K, 6) array
            Each object's velocity (m/s) and angular velocity (rad/s), world frame.
        data : ReducedScene3DData, optional
            Buffers from ``create_data()``; by default one per calling thread.
        return_flow : bool
            Also return the flow state the coefficients were computed from.

        Returns
        -------
        z_next : (r,) array
        boundary_coeffs : (K, max_m) array
            Row i = [F_i z_flow (p_i), R_i' v_i (3), R_i' omega_i (3)], zero-padded.
        z_flow : (r,) array, only with ``return_flow``
        """
        return super().step(z, w, dt, poses, velocities, _thread_data(self) if data is None else data, return_flow)

    def advect_particles(self, points, z, boundary_coeffs, poses, dt, drift=None, threads=0, data=None):
        """One RK2 (midpoint) step of particles through u' (eq. 3.9) plus a drift.

        Parameters
        ----------
        points : (P, 3) array
            Particle positions (m).
        z : (r,) array
            The flow state the coefficients cancel (``step(..., return_flow=True)``).
        boundary_coeffs : (K, max_m) array
            From ``step``.
        poses : (K, 6) array
            The objects' poses of this step.
        dt : float
            Step (s).
        drift : (3,) array, optional
            Constant drift (m/s), e.g. the leaves' small fall speed.
        threads : int
            Threads (<= 0: the team chosen by measurement over the calls sharing ``data``).
        data : ReducedScene3DData, optional
            By default one per calling thread.

        Returns
        -------
        points : (P, 3) array
            Moved, clamped to the domain and pushed out of the objects.
        pushed : int
            Particles pushed out of an object in this step.
        """
        return super().advect_particles(points, z, boundary_coeffs, poses, dt, drift, threads,
                                        _thread_data(self) if data is None else data)


def pose6(position, rotation=None) -> np.ndarray:
    """A pose row: position and rotation vector.

    Parameters
    ----------
    position : (3,) array
        Position (m).
    rotation : (3,) array, optional
        Rotation vector (axis times angle, rad); None: identity.

    Returns
    -------
    (6,) array
    """
    out = np.zeros(6)
    out[:3] = finite_array(position, "position", (3,))
    if rotation is not None:
        out[3:] = finite_array(rotation, "rotation", (3,))
    return out


def rigid_velocity3d(pose, velocity, points) -> np.ndarray:
    """Rigid velocities v + omega x (x - c) of a moving object at world points.

    Parameters
    ----------
    pose : (6,) array
        Position c (m) and rotation vector (rad).
    velocity : (6,) array
        Linear v (m/s) and angular omega (rad/s) velocity, world frame.
    points : (P, 3) array
        World points x (m).

    Returns
    -------
    (P, 3) array
        Velocities (m/s).
    """
    pose, velocity = finite_array(pose, "pose", (6,)), finite_array(velocity, "velocity", (6,))
    points = finite_array(points, "points", [(None, 3), (3,)])
    with np.errstate(over="ignore", invalid="ignore"):
        out = velocity[:3] + np.cross(velocity[3:], points - pose[:3])
    if not np.isfinite(out).all():
        raise ValueError("the rigid velocity overflows: velocity times the distance of points from pose is beyond "
                         "the float range")
    return out


class FluidSim3D(_core.FluidSim3D):
    __doc__ = _core.FluidSim3D.__doc__

    def step(self, force=None, obstacles=()):
        """One full step.

        Parameters
        ----------
        force : (N,) array, optional
            Acceleration field (m/s^2) on the faces, held over the step.
        obstacles : sequence of Obstacle3D
            The obstacles at this step's poses and velocities. Cells whose
            centres lie inside one are solid for this step. An obstacle
            thinner than one cell warns that fluid will leak through it.
        """
        obstacles = list(iterable(obstacles, "obstacles", "a sequence of Obstacle3D"))
        h = self.grid.h
        for k, o in enumerate(obstacles):
            if isinstance(o, Obstacle3D) and o.shape.min_extent < h:
                warnings.warn(f"obstacles[{k}] is {o.shape.min_extent:.3g} m thin, less than one cell (h = {h:.3g} m): "
                              "fluid will leak through it; make it at least h thick", RuntimeWarning, stacklevel=2)
        super().step(force, obstacles)


@dataclass
class FullRun3D:
    """A full 3D run (``full_run3d``).

    Parameters
    ----------
    velocities : (T+1, N) array or None
        Face velocities (m/s); None when streamed into a PCA only.
    particles : (T+1, P, 3) array
        Particle positions (m).
    density : (T+1, n_cells) array or None
        Smoke density, when one was given.
    pressure_iterations : (T,) int array
        PCG iterations of each step's projection (0: direct).
    dt : float
        Time step (s).
    """

    velocities: np.ndarray | None
    particles: np.ndarray
    density: np.ndarray | None
    pressure_iterations: np.ndarray
    dt: float


def full_run3d(grid, steps, dt, force=None, obstacles=None, particles=None, density=None, u0=None, viscosity=0.0,
               updraft=None, buoyancy=None, tol=1e-8, record_velocities=True, pca=None, snapshot_every=1,
               progress=None) -> FullRun3D:
    """Runs the full 3D solver ``steps`` steps.

    Parameters
    ----------
    grid : MACGrid3D
    steps : int
        Number of steps T.
    dt : float
        Time step (s).
    force : None, (N,) array or callable(i) -> (N,) array or None
        Acceleration field (m/s^2) of step i.
    obstacles : None or callable(i) -> sequence of Obstacle3D
        The obstacles of step i (poses and rigid velocities).
    particles : (P, 3) array, optional
        Initial particle positions (m).
    density : (n_cells,) array, optional
        Initial smoke density; its states are then recorded.
    u0 : (N,) array, optional
        Initial velocity (projected first).
    viscosity, updraft, buoyancy, tol
        As ``FluidSim3D``: viscosity (m^2/s), uniform updraft velocity (3,)
        (m/s) carrying smoke and particles, buoyancy acceleration (3,) per
        unit density, relative residual of the pressure PCG.
    record_velocities : bool
        Keep every velocity (T+1, N) in memory (6.3 MB a snapshot at 64^3).
    pca : IncrementalPCA, optional
        Streams every ``snapshot_every``-th velocity into this PCA (chunks of
        16) instead of, or besides, recording them.
    snapshot_every : int
        Stride (>= 1) of the velocities streamed into ``pca``.
    progress : None, bool or callable(done, total)
        Progress of the run (a tqdm bar with True). Ctrl-C stops it between steps.

    Returns
    -------
    FullRun3D
    """
    steps = integer(steps, "steps")
    if steps < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    sim = FluidSim3D(grid, real(viscosity, "viscosity"), real(dt, "dt"), updraft, buoyancy, real(tol, "tol"))
    if u0 is not None:
        with about("u0"):
            sim.velocity = grid.project(as_float_array(u0, "u0"))
    if particles is not None:
        sim.particles = points_array(particles, "particles", 3)
    if density is not None:
        sim.density = as_float_array(density, "density")
    every = integer(snapshot_every, "snapshot_every")
    if every < 1:
        raise ValueError(f"snapshot_every must be >= 1, got {every}")
    U = [sim.velocity] if record_velocities else None
    X = [sim.particles]
    D = [sim.density] if density is not None else None
    its = np.zeros(steps, dtype=np.int64)
    chunk = []

    def stream(u):
        if pca is not None:
            chunk.append(u)
            if len(chunk) == 16:
                pca.add(grid.project(np.asarray(chunk)))
                chunk.clear()

    stream(sim.velocity)
    cb, close = progress_callback(progress, "full 3D fluid run")
    try:
        for i in range(steps):
            f = force(i) if callable(force) else force
            sim.step(f, obstacles(i) if obstacles is not None else ())
            its[i] = sim.pressure_iterations
            u = sim.velocity
            if record_velocities:
                U.append(u)
            if (i + 1) % every == 0:
                stream(u)
            X.append(sim.particles)
            if D is not None:
                D.append(sim.density)
            if cb is not None:
                cb(i + 1, steps)
        if pca is not None and chunk:
            pca.add(grid.project(np.asarray(chunk)))
    finally:
        close()
    return FullRun3D(np.asarray(U) if U is not None else None, np.asarray(X), np.asarray(D) if D is not None else None,
                     its, float(dt))


def velocity_basis3d(grid, snapshots, r, chunk=32, keep=None) -> np.ndarray:
    """(N, r) velocity basis of a 3D grid by streamed PCA.

    Parameters
    ----------
    grid : MACGrid3D
    snapshots : (k, N) array, an iterable of (N,) or (c, N) arrays, or an IncrementalPCA already fed
        The velocity snapshots; arrays are streamed ``chunk`` rows at a time
        through ``directable.reduce.IncrementalPCA`` (memory O(N keep)),
        each row projected first so every basis field is divergence-free and
        zero on the grid's closed faces.
    r : int
        Number of fields. The basis takes N r 8 bytes (``basis_bytes``).
    chunk : int
        Rows projected and streamed at a time.
    keep : int, optional
        Rank kept by the streaming PCA (default 2 r).

    Returns
    -------
    (N, r) array
        Orthonormal columns.
    """
    r = integer(r, "r")
    if isinstance(snapshots, IncrementalPCA):
        pca = snapshots
    else:
        pca = IncrementalPCA(grid.n_faces, keep if keep is not None else 2 * r)
        buf = []

        def flush():
            if buf:
                S = np.vstack(buf)
                if S.shape[1] != grid.n_faces:
                    raise ValueError(f"snapshots must have shape (k, {grid.n_faces}), got rows of {S.shape[1]}")
                with about("snapshots"):
                    S = grid.project(S)
                S = S[np.linalg.norm(S, axis=1) > 0]
                if len(S):
                    pca.add(S)
                buf.clear()

        rows = (as_float_array(snapshots, "snapshots") if isinstance(snapshots, np.ndarray)
                else iterable(snapshots, "snapshots", f"a (k, {grid.n_faces}) array or an iterable of rows"))
        if isinstance(rows, np.ndarray) and rows.ndim != 2:
            raise ValueError(f"snapshots must have shape (k, {grid.n_faces}), got {rows.shape}")
        for s in _row_chunks(rows, chunk):
            buf.append(s)
            if sum(len(b) for b in buf) >= chunk:
                flush()
        flush()
    if pca._SVt.shape[0] == 0:
        raise ValueError("snapshots are all zero: no velocity basis")
    return np.ascontiguousarray(pca.basis(r).U)


def _row_chunks(rows: Iterable, chunk: int):
    if isinstance(rows, np.ndarray):
        for a in range(0, len(rows), chunk):
            yield rows[a:a + chunk]
        return
    for s in rows:
        s = as_float_array(s, "snapshots")
        yield s.reshape(1, -1) if s.ndim == 1 else s


def basis_bytes(grid, r) -> int:
    """Memory of a float64 basis.

    Parameters
    ----------
    grid : MACGrid2D or MACGrid3D
    r : int
        Basis fields.

    Returns
    -------
    int
        N r 8 bytes (3D: a 64^3 grid with r = 64 is about 400 MB).
    """
    return int(_grid(grid, _core.MACGrid3D, "MACGrid3D").n_faces) * integer(r, "r") * 8


def _grid(grid, cls, what):
    if not isinstance(grid, cls):
        raise TypeError(f"grid must be a {what}, got {type(grid).__name__}")
    return grid


def face_positions3d(grid) -> np.ndarray:
    """The face centres of a 3D grid in the velocity vector's order.

    Parameters
    ----------
    grid : MACGrid3D

    Returns
    -------
    (N, 3) array
        Positions (m): x-faces, then y-faces, then z-faces.
    """
    nx, ny, nz, h = _grid(grid, _core.MACGrid3D, "MACGrid3D").nx, grid.ny, grid.nz, grid.h

    def block(mx, my, mz, off):
        k, j, i = np.meshgrid(np.arange(mz), np.arange(my), np.arange(mx), indexing="ij")
        return np.stack([(i.ravel() + off[0]) * h, (j.ravel() + off[1]) * h, (k.ravel() + off[2]) * h], axis=1)

    return np.vstack([block(nx + 1, ny, nz, (0, 0.5, 0.5)), block(nx, ny + 1, nz, (0.5, 0, 0.5)),
                      block(nx, ny, nz + 1, (0.5, 0.5, 0))])


def cell_volume(grid, q) -> np.ndarray:
    """A cell field as a volume.

    Parameters
    ----------
    grid : MACGrid3D
    q : (n_cells,) array
        Cell values, i fastest.

    Returns
    -------
    (nz, ny, nx) array
        Indexed [k, j, i]; a view of ``q`` when it is a float64 C-contiguous array.
    """
    shape = (grid.nz, grid.ny, grid.nx)
    return finite_array(q, "q", [(grid.n_cells,), shape]).reshape(shape)


ForceFn = Callable[[int], "np.ndarray | None"]
