"""Treuille thesis sec. 3.6, the 3D scenes: "Leaves" (Fig. 3.1), a box car
driven along one of four precomputed paths through leaves lying on a road.

Training runs the full 3D solver once per path (the car as a moving
obstacle, plus a gust); the snapshots of every run stream into one PCA
basis (r = 32 in the thesis). Along each path the coupling of the car with
the flow is tabulated by path position, as the thesis precomputed every
coupling force for this scene: the table holds the reduced force that the
car's boundary adds at that position, measured on the training run (the
residual between the projected full run and the free reduced step). At run
time the user drives the car along a path at any speed; the table is
interpolated at the car's path position, 4000 leaves ride the reduced field
with a small downward drift and are pushed out of the car.

Sizes: the thesis used 256 x 64 x 128; ``leaves_scene`` defaults to
128 x 32 x 64, the tests run 32 x 8 x 16.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .. import fluid as F
from ..reduce import IncrementalPCA

__all__ = ["LeavesScene", "car_paths", "car_shape", "car_obstacle", "leaves_scene", "run_leaves", "LeavesRun", "plot_slice",
           "plot_leaves", "plot_split"]


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


@dataclass
class LeavesScene:
    """The trained scene: grid, the reduced fluid, the car, its paths and the
    coupling tables (one (steps+1, r) table of reduced forces per path, indexed
    by path position), and the precomputation time (s)."""

    grid: object
    fluid: object
    car: F.Shape3D
    paths: list
    tables: list
    dt: float
    steps: int
    precompute_seconds: float
    energy: np.ndarray = field(default_factory=lambda: np.zeros(0))

    @property
    def r(self) -> int:
        return self.fluid.r

    def table_force(self, path, s) -> np.ndarray:
        """The tabulated reduced force (r,) of the car at path parameter s (linear interpolation)."""
        T = self.tables[path]
        t = np.clip(s, 0.0, 1.0) * (len(T) - 1)
        i = min(int(t), len(T) - 2)
        a = t - i
        return (1 - a) * T[i] + a * T[i + 1]

    @property
    def table_bytes(self) -> int:
        return int(sum(T.nbytes for T in self.tables))


def leaves_scene(shape=(128, 32, 64), r=32, steps=48, dt=0.02, viscosity=0.0, gust=4.0, progress=None) -> LeavesScene:
    """Trains the Leaves scene: one full run per path (the car crossing the
    road in ``steps`` steps, a gust along +z during the first quarter), all
    snapshots streamed into one PCA, the reduced fluid and the coupling tables.

    Parameters
    ----------
    shape : (nx, ny, nz)
        Grid cells (h = 1 / nx, y up). The thesis used 256 x 64 x 128.
    r : int
        Basis size (32 in the thesis).
    steps : int
        Steps of a crossing in training.
    dt : float
        Time step (s).
    viscosity : float
        Viscosity of the full runs and of the reduced model (m^2/s).
    gust : float
        Magnitude (m/s^2) of the training gust.
    """
    t0 = time.perf_counter()
    nx, ny, nz = shape
    grid = F.MACGrid3D(nx, ny, nz)
    paths = car_paths(grid, steps)
    car = car_shape(grid)
    pca = IncrementalPCA(grid.n_faces, 2 * r)
    wind = grid.wind([0.5, 0.5 * ny * grid.h, 0.2 * nz * grid.h], [0.0, 0.3, 1.0], gust, 0.25)
    runs = []
    for p, path in enumerate(paths):
        speed = 1.0 / (steps * dt)
        run = F.full_run3d(grid, steps, dt, force=lambda i: wind if i < steps // 4 else None,
                           obstacles=lambda i, path=path: [car_obstacle(car, path, i / steps, speed)],
                           viscosity=viscosity, pca=pca, progress=progress)
        runs.append(run.velocities)
    basis = F.velocity_basis(grid, pca, r)
    fluid = F.ReducedFluid(grid, basis, viscosity)
    data = fluid.create_data()
    tables = []
    zero = np.zeros(r)
    for p, U in enumerate(runs):
        Z = U @ basis
        T = np.zeros((steps + 1, r))
        for i in range(steps):
            g = wind @ basis if i < steps // 4 else zero
            free = fluid.step(Z[i], g, dt, data)  # the reduced step without the car
            T[i] = (Z[i + 1] - free) / dt
        T[steps] = T[steps - 1]
        tables.append(T)
    energy = pca.basis(r).energy
    return LeavesScene(grid, fluid, car, paths, tables, dt, steps, time.perf_counter() - t0, energy)


@dataclass
class LeavesRun:
    """A reduced Leaves run: reduced states (T+1, r), leaves (T+1, P, 3), car
    positions (T+1, 3), leaves pushed out of the car per step (T,), and the
    per-step cost split (ms): velocities, boundary (table lookup), media (leaves)."""

    z: np.ndarray
    leaves: np.ndarray
    car: np.ndarray
    pushed: np.ndarray
    ms_velocities: np.ndarray
    ms_boundary: np.ndarray
    ms_media: np.ndarray

    def split(self) -> dict:
        """Median ms per step of each part, and the total."""
        v, b, m = (float(np.median(a)) for a in (self.ms_velocities, self.ms_boundary, self.ms_media))
        return {"vels": v, "bound": b, "media": m, "total": v + b + m}


def run_leaves(scene, path=0, leaves=4000, steps=None, speed=1.0, drift=(0.0, -0.05, 0.0), seed=0,
               threads=0, record_leaves=True) -> LeavesRun:
    """Drives the car along ``path`` at ``speed`` times its training speed and
    moves ``leaves`` leaves through the reduced field.

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
    """
    g, dt, r = scene.grid, scene.dt, scene.r
    rate = speed / (scene.steps * dt)  # ds/dt
    steps = int(np.ceil(1.0 / (rate * dt))) if steps is None else int(steps)
    rng = np.random.default_rng(seed)
    L = rng.uniform([0.05, 0.2 * g.h, 0.05], [g.nx * g.h - 0.05, 2.0 * g.h, g.nz * g.h - 0.05], size=(leaves, 3))
    car0 = car_obstacle(scene.car, scene.paths[path], 0.0, rate)
    L = L[~car0.inside(L)]
    z = np.zeros(r)
    data = scene.fluid.create_data()
    Z, X, C = [z], [L] if record_leaves else [], [car0.position]
    pushed, tv, tb, tm = (np.zeros(steps) for _ in range(4))
    zero = np.zeros(r)
    for i in range(steps):
        s = i * rate * dt
        t0 = time.perf_counter()
        w = scene.table_force(path, s) * speed if s <= 1.0 else zero  # the boundary term scales with the speed
        car = car_obstacle(scene.car, scene.paths[path], min((i + 1) * rate * dt, 1.0), rate)
        t1 = time.perf_counter()
        z_next = scene.fluid.step(z, w, dt, data)
        t2 = time.perf_counter()
        L, n = scene.fluid.advect_particles(z, z_next, L, dt, drift, [car], threads, data)
        t3 = time.perf_counter()
        tb[i], tv[i], tm[i] = (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3
        pushed[i] = n
        z = z_next
        Z.append(z)
        C.append(car.position)
        if record_leaves:
            X.append(L)
    return LeavesRun(np.asarray(Z), np.asarray(X) if record_leaves else L[None], np.asarray(C), pushed, tv, tb, tm)


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
