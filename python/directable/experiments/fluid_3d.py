"""Treuille thesis sec. 3.6, the 3D scenes: "3D Boundaries" (Fig. 3.9), a
flat plate moved through a rising updraft, and "Leaves" (Fig. 3.1), a box car
driven along one of four precomputed paths through leaves lying on a road.

3D Boundaries: full runs with the plate (laid flat, its normal up) moved
around three training positions in an upward jet; their snapshots give the
reduced basis, the plate's poses along the runs the boundary basis (p fields
plus 6 rigid). At run time the plate, and a plate with an aperture it was not
trained on, are moved; the metrics are those of the 2D scene: surface energy
removed per step (on the fly and with tables 1, 2, 4 voxels apart), smoke
entering the plate with and without boundary handling, the error against the
full solver by basis size, and the per-step cost split of Table 3.2.

Leaves: training runs the full 3D solver once per path (the car as a moving
obstacle, plus a gust); the snapshots of every run stream into one PCA
basis (r = 32 in the thesis). The car's boundary basis comes from its poses
along the four paths, and per path its feedforward and feedback are
tabulated at the path's nodes only (the thesis' "tables along the paths").
At run time the user drives the car along a path at any speed; the scene
interpolates the tables at the car's place on the path, cancels the flow
through the car's surface (eq. 3.9-3.12), and 4000 leaves ride u' with a
small downward drift and are pushed out of the car.

Sizes: the thesis used 256 x 64 x 128; ``leaves_scene`` defaults to
128 x 32 x 64, the tests run 32 x 8 x 16.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .. import fluid as F
from ..reduce import IncrementalPCA

__all__ = ["PlateScene", "plate_path", "plate_scene", "run_plate", "plate_removal", "plate_smoke_entering",
           "plate_basis_error", "plate_untrained", "plate_timings", "plate_table_axes", "plot_plate",
           "LeavesScene", "car_paths", "car_shape", "car_obstacle", "car_pose", "leaves_scene", "run_leaves",
           "LeavesRun", "plot_slice", "plot_leaves", "plot_split"]


# --- 3D Boundaries (Fig. 3.9) ----------------------------------------------------------------------

FLAT = np.array([-np.pi / 2, 0.0, 0.0])  # rotation vector laying a plate flat: its normal (z) turned up (+y)


def plate_path(center, steps, dt, amplitude=0.1, axis=0, cycles=1.0, phase=0.0):
    """Poses (steps, 6) and velocities (steps, 6) of a flat plate swaying
    ``amplitude`` (m) along world ``axis`` around ``center`` (3,) (m) for
    ``cycles`` periods over ``steps`` steps of ``dt`` (s)."""
    t = np.arange(steps) * dt
    w = 2 * np.pi * cycles / (steps * dt)
    poses = np.zeros((steps, 6))
    vel = np.zeros((steps, 6))
    poses[:, :3] = center
    poses[:, axis] += amplitude * np.sin(w * t + phase)
    poses[:, 3:] = FLAT
    vel[:, axis] = amplitude * w * np.cos(w * t + phase)
    return poses, vel


def _obstacles(shape, poses, vel):
    return lambda i: [F.Obstacle3D(shape, poses[i, :3], rotation=poses[i, 3:], velocity=vel[i, :3],
                                   angular_velocity=vel[i, 3:])]


@dataclass
class PlateScene:
    """The trained "3D Boundaries" scene: grid, reduced fluid, the plate and
    its boundary basis, the training paths (poses, velocities), the full
    training runs, the updraft force (N,) and the precomputation time (s)."""

    grid: object
    reduced: object
    plate: object
    boundary: object
    dt: float
    paths: list
    runs: list
    updraft: np.ndarray
    viscosity: float = 0.0
    seconds: dict = field(default_factory=dict)

    def train_poses(self, every=4):
        return np.vstack([p[::every] for p, _ in self.paths])


def plate_scene(n=32, r=16, p=24, steps=24, dt=0.02, heights=(0.35, 0.5, 0.65), updraft=6.0, amplitude=0.03,
                viscosity=0.0, threads=0, progress=None) -> PlateScene:
    """Trains the 3D Boundaries scene on an n^3 grid (paper 64^3, r = 64).

    Parameters
    ----------
    n : int
        Cells per side (h = 1/n m).
    r : int
        Reduced basis size.
    p : int
        Boundary fields wanted (cut to the rank of the collected surface speeds).
    steps : int
        Steps of each training run.
    dt : float
        Time step (s).
    heights : sequence of float
        The plate's three training heights y (m), centred in x and z.
    updraft : float
        Magnitude (m/s^2) of the rising jet under the plate.
    amplitude : float
        Sway (m) of the plate along x around each training position.
    """
    t0 = time.perf_counter()
    grid = F.MACGrid3D(n, n, n)
    h = grid.h
    plate = F.plate(0.4, 0.4, 2.0 * h)
    jet = grid.wind([0.5, 0.15, 0.5], [0.0, 1.0, 0.0], updraft, 0.2)
    pca = IncrementalPCA(grid.n_faces, 2 * r)
    paths, runs = [], []
    for k, y in enumerate(heights):
        poses, vel = plate_path(np.array([0.5, y, 0.5]), steps + 1, dt, amplitude, axis=0, phase=k)
        run = F.full_run3d(grid, steps, dt, force=jet, obstacles=_obstacles(plate, poses, vel),
                           viscosity=viscosity, pca=pca, progress=progress)
        paths.append((poses[:steps], vel[:steps]))
        runs.append(run)
    t1 = time.perf_counter()
    basis = F.velocity_basis(grid, pca, r)
    reduced = F.ReducedFluid(grid, basis, viscosity)
    t2 = time.perf_counter()
    train = np.vstack([pp[::4] for pp, _ in paths])
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        bb = F.BoundaryBasis3D.build(reduced, plate, train, p, threads=threads)
    t3 = time.perf_counter()
    return PlateScene(grid, reduced, plate, bb, dt, paths, runs, jet, viscosity,
                      {"full_runs": t1 - t0, "basis": t2 - t1, "boundary": t3 - t2})


def run_plate(sc: PlateScene, coupling, poses, vel, z0, w=None, leaves=None, drift=None):
    """Runs the reduced scene along a path.

    Returns (Z (T+1, r), surface energy removed per step (T,), particles
    (T+1, P, 3) or None). ``w``: (T, r) reduced forces (default the updraft's);
    ``leaves``: optional (P, 3) particles advected through u' + ``drift``."""
    scene = F.ReducedScene3D(sc.reduced, [coupling])
    T = len(poses)
    Z = np.zeros((T + 1, sc.reduced.r))
    Z[0] = z0
    rem = np.zeros(T)
    jet = sc.reduced.basis.T @ sc.updraft
    X = [leaves] if leaves is not None else None
    for t in range(T):
        P, V = poses[t:t + 1], vel[t:t + 1]
        Z[t + 1], c, zf = scene.step(Z[t], jet if w is None else w[t], sc.dt, P, V, return_flow=True)
        rem[t] = scene.surface_energy_removed(zf, c, P, V)[0]
        if X is not None:
            X.append(scene.advect_particles(X[-1], zf, c, P, sc.dt, drift)[0])
    return Z, rem, (np.asarray(X) if X is not None else None)


def plate_table_axes(poses, h, spacing):
    """Pose-table axes (xs, ys, zs, rxs, rys, rzs) covering ``poses`` (T, 6) with
    positions ``spacing`` voxels apart (the rotation fixed at the first pose's)."""
    lo, hi = poses[:, :3].min(0) - spacing * h, poses[:, :3].max(0) + spacing * h
    axes = [np.arange(lo[i], hi[i] + spacing * h, spacing * h) for i in range(3)]
    return (*axes, *[np.array([poses[0, 3 + i]]) for i in range(3)])


def plate_removal(sc: PlateScene, spacings=(1, 2, 4), run=0) -> dict:
    """Mean surface energy removed per step along training path ``run``: on
    the fly ("exact") and with tabulated feedforward and feedback spaced 1, 2,
    4 voxels apart (Fig. 3.11b in 3D), with the tables' bytes."""
    poses, vel = sc.paths[run]
    z0 = sc.reduced.basis.T @ sc.runs[run].velocities[0]
    out = {"exact": float(run_plate(sc, F.Coupling3D(sc.reduced, sc.boundary), poses, vel, z0)[1].mean())}
    for s in spacings:
        cpl = F.Coupling3D(sc.reduced, sc.boundary, pose_table=plate_table_axes(poses, sc.grid.h, s), precompute="both")
        out[s] = float(run_plate(sc, cpl, poses, vel, z0)[1].mean())
        out[f"bytes_{s}"] = cpl.table_bytes
    return out


def plate_smoke_entering(sc: PlateScene, run=0, boundary=True) -> float:
    """Smoke carried into the plate's cells over path ``run`` (per grid cell,
    from unit smoke everywhere outside it), advected through u' (boundary
    handling) or B z alone, relative to the plate's rigid motion."""
    grid, red = sc.grid, sc.reduced
    poses, vel = sc.paths[run]
    z = red.basis.T @ sc.runs[run].velocities[0]
    scene = F.ReducedScene3D(red, [F.Coupling3D(red, sc.boundary)])
    cells = (np.stack(np.meshgrid(np.arange(grid.nx), np.arange(grid.ny), np.arange(grid.nz), indexing="ij"),
                      axis=-1).transpose(2, 1, 0, 3).reshape(-1, 3) + 0.5) * grid.h
    X = F.face_positions3d(grid)
    axis = np.searchsorted([grid.n_xfaces, grid.n_xfaces + grid.n_yfaces], np.arange(grid.n_faces), side="right")
    rho = np.ones(grid.n_cells)
    jet = red.basis.T @ sc.updraft
    total = 0.0
    for t in range(len(poses)):
        P, V = poses[t:t + 1], vel[t:t + 1]
        zn, coeffs, zf = scene.step(z, jet, sc.dt, P, V, return_flow=True)
        ob = F.Obstacle3D(sc.plate, P[0, :3], rotation=P[0, 3:])
        inside = ob.inside(cells)
        rho[inside] = 0.0
        u = scene.velocity_field(zf, coeffs, P) if boundary else red.basis @ zf
        rigid = F.rigid_velocity3d(P[0], V[0], X)[np.arange(grid.n_faces), axis]
        rho = grid.advect_cells(u - rigid, rho, sc.dt)
        total += rho[inside].sum()
        z = zn if boundary else red.step(z, jet, sc.dt)
    return total / grid.n_cells


def plate_basis_error(sc: PlateScene, rs=(4, 8, 16), run=0, viscosity=None) -> dict:
    """Fig. 3.10a in 3D: mean relative error |u' - u*| / |u*| of the reduced
    scene (first r fields, its own boundary basis) against the full run
    ``run`` along the same path."""
    import warnings
    full = sc.runs[run]
    poses, vel = sc.paths[run]
    B_all = sc.reduced.basis
    out = {}
    for r in rs:
        B = np.ascontiguousarray(B_all[:, :r])
        red = F.ReducedFluid(sc.grid, B, sc.viscosity if viscosity is None else float(viscosity))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            bb = F.BoundaryBasis3D.build(red, sc.plate, sc.train_poses(), sc.boundary.p)
        scene = F.ReducedScene3D(red, [F.Coupling3D(red, bb)])
        z = B.T @ full.velocities[0]
        jet = B.T @ sc.updraft
        errs = []
        for t in range(len(poses)):
            z, c, zf = scene.step(z, jet, sc.dt, poses[t:t + 1], vel[t:t + 1], return_flow=True)
            u = scene.velocity_field(zf, c, poses[t:t + 1])
            ref = full.velocities[t + 1]
            errs.append(np.linalg.norm(u - ref) / max(np.linalg.norm(ref), 1e-300))
        out[r] = float(np.mean(errs))
    return out


def plate_untrained(sc: PlateScene, run=0, aperture=(0.16, 0.16)) -> dict:
    """On-the-fly removal for the trained plate and a plate with an aperture
    the training never saw (its boundary basis from the same reduced basis
    and training poses), moved along path ``run``."""
    import warnings
    poses, vel = sc.paths[run]
    z0 = sc.reduced.basis.T @ sc.runs[run].velocities[0]
    out = {"plate": float(run_plate(sc, F.Coupling3D(sc.reduced, sc.boundary), poses, vel, z0)[1].mean())}
    holed = F.plate(0.4, 0.4, 2.0 * sc.grid.h, aperture=aperture)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        bb = F.BoundaryBasis3D.build(sc.reduced, holed, sc.train_poses(), sc.boundary.p)
    out["aperture"] = float(run_plate(sc, F.Coupling3D(sc.reduced, bb), poses, vel, z0)[1].mean())
    return out


def plate_timings(sc: PlateScene, coupling=None, particles=4000, steps=20, run=0) -> dict:
    """Milliseconds per reduced step of Table 3.2's parts, each the best of
    ``steps`` timed calls at one state (the least disturbed on a shared
    machine): "vels" (advect, diffuse, force: the step without objects),
    "bound" (the step with the plate minus "vels": feedforward, feedback and
    their application), "media" (``particles`` tracers through u'), and one
    full step of the training solver ("full") for the speed-up."""
    red = sc.reduced
    coupling = coupling if coupling is not None else F.Coupling3D(sc.reduced, sc.boundary)
    scene = F.ReducedScene3D(red, [coupling])
    empty = F.ReducedScene3D(red, [])
    poses, vel = sc.paths[run]
    P, V = poses[len(poses) // 2][None], vel[len(vel) // 2][None]
    X = np.random.default_rng(0).uniform(0.05, 0.95, (particles, 3))
    z = red.basis.T @ sc.runs[run].velocities[len(poses) // 2]
    jet = red.basis.T @ sc.updraft
    none6 = np.zeros((0, 6))
    data, edata = scene.create_data(), empty.create_data()
    _, c, zf = scene.step(z, jet, sc.dt, P, V, data, return_flow=True)

    def best(fn):
        out = np.inf
        for _ in range(steps):
            a = time.perf_counter()
            fn()
            out = min(out, time.perf_counter() - a)
        return 1e3 * out

    vels = best(lambda: empty.step(z, jet, sc.dt, none6, none6, edata))
    both = best(lambda: scene.step(z, jet, sc.dt, P, V, data))
    media = best(lambda: scene.advect_particles(X, zf, c, P, sc.dt, data=data))
    sim = F.FluidSim3D(sc.grid, sc.viscosity, sc.dt)
    sim.velocity = sc.runs[run].velocities[-1]
    a = time.perf_counter()
    sim.step(sc.updraft, _obstacles(sc.plate, poses, vel)(0))
    full = 1e3 * (time.perf_counter() - a)
    out = {"vels": vels, "bound": max(both - vels, 0.0), "media": media}
    out["total"] = out["vels"] + out["bound"] + out["media"]
    out["full"] = full
    out["speedup"] = full / out["total"]
    return out


def car_paths(grid, steps) -> list[np.ndarray]:
    """Four car paths (steps+1, 3) in metres along the road (the floor, y = 0):
    three straight lanes along x at z = 0.3, 0.5 and 0.7 of the depth, and one
    diagonal crossing, each from 15 % to 85 % of the width."""
    W, D = grid.nx * grid.h, grid.nz * grid.h
    y = 2.0 * grid.h  # the car's centre: it stands half a cell above the floor
    s = np.linspace(0.0, 1.0, steps + 1)[:, None]
    x = 0.15 * W + 0.7 * W * s
    lanes = [np.hstack([x, np.full_like(s, y), np.full_like(s, z * D)]) for z in (0.3, 0.5, 0.7)]
    diag = np.hstack([x, np.full_like(s, y), (0.3 + 0.4 * s) * D])
    return lanes + [diag]


def car_shape(grid) -> F.Shape3D:
    """The car: a box 4 x 3 x 3 cells (length along its heading x)."""
    return F.Shape3D.box(4 * grid.h, 3 * grid.h, 3 * grid.h)


def car_obstacle(shape, path, s, speed) -> F.Obstacle3D:
    """The car at path parameter s in [0, 1] (linear in the samples) moving at
    ``speed`` (path units per second, i.e. ds/dt), heading along the path."""
    n = len(path) - 1
    t = np.clip(s, 0.0, 1.0) * n
    i = min(int(t), n - 1)
    a = t - i
    pos = (1 - a) * path[i] + a * path[i + 1]
    tangent = (path[i + 1] - path[i]) * n  # d position / ds
    heading = np.arctan2(-tangent[2], tangent[0])  # yaw about +y so that local x points along the path
    return F.Obstacle3D(shape, pos, rotation=(0.0, heading, 0.0), velocity=tangent * speed)


def car_pose(path, s) -> np.ndarray:
    """The car's pose (6,) at path parameter s in [0, 1]: position and the yaw
    (rotation vector about +y) heading it along the path."""
    n = len(path) - 1
    t = np.clip(s, 0.0, 1.0) * n
    i = min(int(t), n - 1)
    a = t - i
    tangent = path[i + 1] - path[i]
    return np.r_[(1 - a) * path[i] + a * path[i + 1], 0.0, np.arctan2(-tangent[2], tangent[0]), 0.0]


@dataclass
class LeavesScene:
    """The trained scene: grid, the reduced fluid, the car and its boundary
    basis, its paths, one coupling per path (feedforward and feedback
    tabulated at the path's nodes only), and the precomputation time (s)."""

    grid: object
    fluid: object
    car: F.Shape3D
    paths: list
    boundary: object
    couplings: list
    dt: float
    steps: int
    precompute_seconds: float
    energy: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def r(self) -> int:
        return self.fluid.r

    @property
    def table_bytes(self) -> int:
        return int(sum(c.table_bytes for c in self.couplings))

    def scene(self, path) -> F.ReducedScene3D:
        """The reduced scene of the car on ``path``."""
        return F.ReducedScene3D(self.fluid, [self.couplings[path]])


def leaves_scene(shape=(128, 32, 64), r=32, p=16, steps=48, dt=0.02, viscosity=0.0, gust=4.0, threads=0,
                 progress=None) -> LeavesScene:
    """Trains the Leaves scene: one full run per path (the car crossing the
    road in ``steps`` steps, a gust along +z during the first quarter), all
    snapshots streamed into one PCA, the reduced fluid, the car's boundary
    basis from its poses along the four paths, and per path a coupling whose
    feedforward and feedback are tabulated at the path's nodes ("tables
    along the paths only").

    Parameters
    ----------
    shape : (nx, ny, nz)
        Grid cells (h = 1 / nx, y up). The thesis used 256 x 64 x 128.
    r : int
        Basis size (32 in the thesis).
    p : int
        Boundary fields of the car (cut to the rank of its surface speeds).
    steps : int
        Steps of a crossing in training; the path tables have steps + 1 nodes.
    dt : float
        Time step (s).
    viscosity : float
        Viscosity of the full runs and of the reduced model (m^2/s).
    gust : float
        Magnitude (m/s^2) of the training gust.
    """
    import warnings
    t0 = time.perf_counter()
    nx, ny, nz = shape
    grid = F.MACGrid3D(nx, ny, nz)
    paths = car_paths(grid, steps)
    car = car_shape(grid)
    pca = IncrementalPCA(grid.n_faces, 2 * r)
    wind = grid.wind([0.5, 0.5 * ny * grid.h, 0.2 * nz * grid.h], [0.0, 0.3, 1.0], gust, 0.25)
    for path in paths:
        speed = 1.0 / (steps * dt)
        F.full_run3d(grid, steps, dt, force=lambda i: wind if i < steps // 4 else None,
                     obstacles=lambda i, path=path: [car_obstacle(car, path, i / steps, speed)],
                     viscosity=viscosity, pca=pca, record_velocities=False, progress=progress)
    basis = F.velocity_basis(grid, pca, r)
    fluid = F.ReducedFluid(grid, basis, viscosity)
    nodes = [np.array([car_pose(path, i / steps) for i in range(steps + 1)]) for path in paths]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        bb = F.BoundaryBasis3D.build(fluid, car, np.vstack([n[::2] for n in nodes]), p, threads=threads)
    couplings = [F.Coupling3D(fluid, bb, path=n, precompute="both", threads=threads) for n in nodes]
    return LeavesScene(grid, fluid, car, paths, bb, couplings, dt, steps, time.perf_counter() - t0,
                       pca.basis(r).energy)


@dataclass
class LeavesRun:
    """A reduced Leaves run: reduced states (T+1, r), leaves (T+1, P, 3), car
    positions (T+1, 3), leaves pushed out of the car per step (T,), the
    surface energy removed per step (T,), and the per-step cost split (ms):
    velocities (advect, diffuse), boundary (table lookups, feedforward and
    feedback), media (leaves)."""

    z: np.ndarray
    leaves: np.ndarray
    car: np.ndarray
    pushed: np.ndarray
    removed: np.ndarray
    ms_velocities: np.ndarray
    ms_boundary: np.ndarray
    ms_media: np.ndarray

    def split(self) -> dict:
        """Median ms per step of each part, and the total."""
        v, b, m = (float(np.median(a)) for a in (self.ms_velocities, self.ms_boundary, self.ms_media))
        return {"vels": v, "bound": b, "media": m, "total": v + b + m}


def run_leaves(scene, path=0, leaves=4000, steps=None, speed=1.0, drift=(0.0, -0.05, 0.0), seed=0,
               threads=0, record_leaves=True, removal=False) -> LeavesRun:
    """Drives the car along ``path`` at ``speed`` times its training speed and
    moves ``leaves`` leaves through the reduced field with the car's boundary
    fields (u' of eq. 3.9), pushing them out of the car.

    Parameters
    ----------
    scene : LeavesScene
    path : int
        Which of the four paths.
    leaves : int
        Number of leaves, scattered over the road (within 2 cells of the floor).
    steps : int, optional
        Steps to run (default: the crossing at this speed).
    speed : float
        Car speed relative to training (the user may drive faster or slower).
    drift : (3,) array
        Constant drift of the leaves (m/s): the "small gravitational force".
    threads : int
        Threads of the leaf advection (<= 0: the team chosen by measurement).
    removal : bool
        Also measure the surface energy removed per step (costs a surface query).
    """
    g, dt, r = scene.grid, scene.dt, scene.r
    rate = speed / (scene.steps * dt)  # ds/dt
    steps = int(np.ceil(1.0 / (rate * dt))) if steps is None else int(steps)
    rng = np.random.default_rng(seed)
    L = rng.uniform([0.05, 0.2 * g.h, 0.05], [g.nx * g.h - 0.05, 2.0 * g.h, g.nz * g.h - 0.05], size=(leaves, 3))
    P = scene.paths[path]
    L = L[~car_obstacle(scene.car, P, 0.0, rate).inside(L)]
    sc = scene.scene(path)
    data = sc.create_data()
    fdata = scene.fluid.create_data()
    z = np.zeros(r)
    zero = np.zeros(r)
    Z, X, C = [z], [L] if record_leaves else [], [car_pose(P, 0.0)[:3]]
    pushed, removed, tv, tb, tm = (np.zeros(steps) for _ in range(5))
    for i in range(steps):
        s = min((i + 1) * rate * dt, 1.0)  # the car where this step leaves it: the leaves are pushed out of it there
        pose = car_pose(P, s)[None]
        moving = i * rate * dt < 1.0
        ob = car_obstacle(scene.car, P, s, rate if moving else 0.0)
        vel = np.r_[ob.velocity, 0.0, 0.0, 0.0][None]
        t0 = time.perf_counter()
        scene.fluid.step(z, zero, dt, fdata)  # the velocity part alone, for the split
        t1 = time.perf_counter()
        z_next, c, zf = sc.step(z, zero, dt, pose, vel, data, return_flow=True)
        t2 = time.perf_counter()
        L, n = sc.advect_particles(L, zf, c, pose, dt, drift, threads, data)
        t3 = time.perf_counter()
        tv[i], tb[i], tm[i] = (t1 - t0) * 1e3, max(t2 - t1 - (t1 - t0), 0.0) * 1e3, (t3 - t2) * 1e3
        pushed[i] = n
        if removal:
            removed[i] = sc.surface_energy_removed(zf, c, pose, vel)[0]
        z = z_next
        Z.append(z)
        C.append(pose[0, :3])
        if record_leaves:
            X.append(L)
    return LeavesRun(np.asarray(Z), np.asarray(X) if record_leaves else L[None], np.asarray(C), pushed, removed,
                     tv, tb, tm)


# --- plots ----------------------------------------------------------------------------------------


def plot_slice(grid, q, k=None, ax=None, cmap="Greys", title=None):
    """Image of the cell field q (n_cells,) on the x-y slice k (default the middle
    of z), x (m) to the right and y (m) up. Returns the Axes."""
    import matplotlib.pyplot as plt

    ax = ax if ax is not None else plt.gca()
    k = grid.nz // 2 if k is None else k
    img = np.asarray(q).reshape(grid.nz, grid.ny, grid.nx)[k]
    ax.imshow(img, origin="lower", cmap=cmap, extent=(0, grid.nx * grid.h, 0, grid.ny * grid.h))
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    if title:
        ax.set_title(title)
    return ax


def plot_plate(sc, u, pose, ax=None, k=None, title=None):
    """Speed |u| (m/s) of a face field u (N,) on the x-y slice k (default the
    plate's z) with velocity arrows and the plate's section at ``pose`` (6,).
    Returns the Axes."""
    import matplotlib.pyplot as plt

    ax = ax if ax is not None else plt.gca()
    g = sc.grid
    k = int(np.clip(pose[2] / g.h, 0, g.nz - 1)) if k is None else k
    c = (np.arange(g.nx) + 0.5) * g.h
    X, Y = np.meshgrid(c, (np.arange(g.ny) + 0.5) * g.h)
    pts = np.stack([X.ravel(), Y.ravel(), np.full(X.size, (k + 0.5) * g.h)], axis=1)
    v = g.velocity_at(np.ascontiguousarray(u), pts)
    speed = np.linalg.norm(v, axis=1).reshape(X.shape)
    im = ax.imshow(speed, origin="lower", extent=(0, g.nx * g.h, 0, g.ny * g.h), cmap="viridis")
    step = max(1, g.nx // 16)
    ax.quiver(X[::step, ::step], Y[::step, ::step], v[:, 0].reshape(X.shape)[::step, ::step],
              v[:, 1].reshape(X.shape)[::step, ::step], color="w", angles="xy")
    ob = F.Obstacle3D(sc.plate, pose[:3], rotation=pose[3:])
    inside = ob.inside(pts).reshape(X.shape)
    ax.contour(X, Y, inside.astype(float), levels=[0.5], colors="r", linewidths=1.5)
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    plt.colorbar(im, ax=ax, label="speed (m/s)")
    if title:
        ax.set_title(title)
    return ax


def plot_leaves(scene, run, step=-1, ax=None):
    """Top view (x, z in m) of the leaves at ``step`` and the car's track. Returns the Axes."""
    import matplotlib.pyplot as plt

    ax = ax if ax is not None else plt.gca()
    L = run.leaves[step]
    ax.scatter(L[:, 0], L[:, 2], s=2, c=L[:, 1], cmap="YlGn")
    ax.plot(run.car[:, 0], run.car[:, 2], "r-", lw=2, label="car")
    ax.set_xlim(0, scene.grid.nx * scene.grid.h)
    ax.set_ylim(0, scene.grid.nz * scene.grid.h)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("z (m)")
    ax.legend(loc="upper right")
    return ax


def plot_split(run, ax=None, paper=(1.2, 0.3, 0.2)):
    """Bars of the median per-step cost (ms) of velocities, boundary and media,
    next to the thesis' Table 3.2 Leaves row. Returns the Axes."""
    import matplotlib.pyplot as plt

    ax = ax if ax is not None else plt.gca()
    s = run.split()
    x = np.arange(3)
    ax.bar(x - 0.2, [s["vels"], s["bound"], s["media"]], 0.4, label="directable (this machine)")
    ax.bar(x + 0.2, paper, 0.4, label="thesis Table 3.2")
    ax.set_xticks(x, ["vels", "bound", "media"])
    ax.set_ylabel("time per step (ms)")
    ax.legend()
    return ax
