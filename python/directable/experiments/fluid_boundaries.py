"""Reduced fluids with obstacles (Treuille thesis sec. 3.2, 3.5, 3.6): the
"Fixed boundary" yin-yang scene (Fig. 3.2-3.4) and the "2D Boundaries"
c-shape scene (Fig. 3.5, 3.8a, 3.10, 3.11), built on the public API.

    fb = fluid_boundaries.fixed_boundary(n=32, r=16)            # CI size (paper: 512^2, 64 fields)
    sc = fluid_boundaries.c_shape_scene(n=32, r=16, p=32)       # CI size (paper: 128^2, r = 64, p = 23)
    rm = fluid_boundaries.removal(sc, spacings=(1, 2, 4))       # Fig. 3.11b
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from .. import fluid as F
from .._validate import as_float_array, integer, real
from ..fluid import ReducedFluid
from . import fluid_forcing

__all__ = ["yin_yang", "fixed_boundary", "match_viscosity", "CShapeScene", "c_shape_path", "c_shape_scene",
           "run_scene", "removal", "smoke_entering", "tracers_entering", "plot_local_field", "plot_smoke",
           "plot_removal", "basis_error", "untrained_shapes", "reduced_scene_run", "error_curves",
           "wind_angle_error", "plot_error_curves", "plot_wind_angle_error", "table_coupling",
           "leaf_with_obstacle", "obstacle_model", "smoke_inside", "smoke_inside_of_flow", "coupling_growth"]


def yin_yang(n) -> np.ndarray:
    """A yin-yang solid on the unit square (Fig. 3.2).

    One half of a disk of radius 0.3 with the two small disks of radius 0.15
    added and removed.

    Parameters
    ----------
    n : int
        Cells per side.

    Returns
    -------
    (n, n) bool array
        The solid cells (row j = height y), for ``MACGrid2D(n, n, solid=...)``.
    """
    n = integer(n, "n")
    c = (np.arange(n) + 0.5) / n
    X, Y = np.meshgrid(c, c)
    half = (X < 0.5) & (np.hypot(X - 0.5, Y - 0.5) < 0.3)
    half |= np.hypot(X - 0.5, Y - 0.65) < 0.15
    half &= ~(np.hypot(X - 0.5, Y - 0.35) < 0.15)
    return half


def _energy(U):
    return np.sum(U * U, axis=1)


def match_viscosity(reduced_basis, grid, run, bounds=(1e-5, 1.0)) -> tuple[float, float, float]:
    """The viscosity whose reduced energy decay best matches the full run's
    (its numerical dissipation), fitted on the unforced last third of ``run``
    (``ReducedFluid.match_viscosity``).

    Parameters
    ----------
    reduced_basis : (N, r) array
        The basis.
    grid : MACGrid2D
        Its grid.
    run : FullRun
        A full run whose last third is unforced.
    bounds : (float, float)
        Search interval of nu (m^2/s).

    Returns
    -------
    nu : float
        The matched viscosity (m^2/s).
    residual : float
        RMS log-energy mismatch at nu.
    residual_inviscid : float
        The same at nu = 0 (the reduced energy stays constant there).
    """
    B = np.ascontiguousarray(reduced_basis)
    T = run.velocities.shape[0] - 1
    start = T - T // 3
    nu, res = ReducedFluid(grid, B, 0.0).match_viscosity(run, start=start, bounds=bounds)
    full = _energy(run.velocities[start:])
    res0 = float(np.sqrt(np.mean(np.log(full[1:] / full[0]) ** 2)))
    return nu, res, res0


def fixed_boundary(n=32, r=16, steps=120, dt=0.01, winds=10, seed=0) -> dict:
    """The "Fixed boundary" scene (Fig. 3.2-3.4) around a yin-yang solid.

    A PCA basis of a forced full run, its energy kept at nu = 0, and the nu
    matching the full solver's numerical dissipation.

    Parameters
    ----------
    n : int
        Cells per side (paper 512).
    r : int
        Basis size (paper 64).
    steps : int
        Steps of the full run (its last third unforced).
    dt : float
        Step (s).
    winds : int
        Number of random winds in the first two thirds.
    seed : int
        Seed of the winds.

    Returns
    -------
    dict
        grid, basis (N, r), run (FullRun), max_divergence (every field, incl.
        closed faces), energy_drift (max relative change of |z| over 1000
        unforced steps at nu = 0), nu (matched viscosity, m^2/s), nu_residual
        (RMS log-energy mismatch at nu) and inviscid_residual (at nu = 0).
    """
    grid = F.MACGrid2D(n, n, solid=yin_yang(n))
    ws = fluid_forcing.random_winds(grid, winds, 2 * steps // 3, seed=seed)
    run = F.full_run(grid, steps, dt, ws)
    B = F.velocity_basis(grid, run.velocities[1:], r)
    red = ReducedFluid(grid, B, 0.0)
    Z = red.rollout(B.T @ run.velocities[steps // 2], np.zeros((1000, B.shape[1])), dt)
    e = np.linalg.norm(Z, axis=1)
    nu, res, res0 = match_viscosity(B, grid, run)
    return dict(grid=grid, basis=B, run=run, max_divergence=grid.max_divergence(B),
                energy_drift=float(np.abs(e / e[0] - 1).max()), nu=nu, nu_residual=res, inviscid_residual=res0)


def c_shape_path(t, seed=0, n_steps=100, margin=0.25):
    """A smooth random path of the c-shape across the unit square.

    Parameters
    ----------
    t : float
        Step (s), for the velocities.
    seed : int
        Seed of the path's height, amplitude, phase and turn.
    n_steps : int
        Number of poses T.
    margin : float
        Distance of the path's ends from the domain's sides (m).

    Returns
    -------
    poses : (T, 3) array
        (x, y, theta) (m, m, rad).
    velocities : (T, 3) array
        (vx, vy, omega) (m/s, m/s, rad/s), by finite differences.
    """
    rng = np.random.default_rng(seed)
    s = np.linspace(0.0, 1.0, n_steps)
    y0, amp, ph = rng.uniform(0.35, 0.65), rng.uniform(0.05, 0.12), rng.uniform(0, 2 * np.pi)
    x = margin + (1 - 2 * margin) * s
    y = y0 + amp * np.sin(2 * np.pi * s + ph)
    th = rng.uniform(-0.5, 0.5) + 0.8 * s
    poses = np.stack([x, y, th], axis=1)
    vel = np.gradient(poses, t, axis=0)
    return poses, vel


@dataclass
class CShapeScene:
    """The trained "2D Boundaries" scene: grid, reduced fluid, the c-shape's boundary basis.

    Attributes
    ----------
    grid : MACGrid2D
        The world grid.
    reduced : ReducedFluid
        The reduced fluid (r PCA fields of the training runs).
    shape : Shape2D
        The c-shape.
    boundary : BoundaryBasis
        Its boundary basis.
    dt : float
        Step (s).
    training_runs : list of FullRun
        The full runs with the c-shape.
    paths : list of (poses, velocities)
        The c-shape's path in each run, (T, 3) each.
    viscosity : float
        The reduced model's viscosity (m^2/s).
    local_size : float or None
        Half-size of the boundary fields' local grid (m); None: the default.
    """

    grid: object
    reduced: object
    shape: object
    boundary: object
    dt: float
    training_runs: list = field(default_factory=list)
    paths: list = field(default_factory=list)
    viscosity: float = 0.0
    local_size: float | None = None

    def train_poses(self) -> np.ndarray:
        """The poses the boundary bases are trained on: every 4th pose of every training path.

        Returns
        -------
        (n, 3) array
            (x, y, theta) (m, m, rad).
        """
        return np.vstack([pp[::4] for pp, _ in self.paths])

    def boundary_basis(self, reduced, shape, p, **kw):
        """A boundary basis of ``shape`` for ``reduced`` from the training poses (the scene's local size).

        Parameters
        ----------
        reduced : ReducedFluid
            The reduced fluid.
        shape : Shape2D
            The object's shape.
        p : int
            Boundary fields wanted (cut to the rank silently).
        **kw
            More arguments of ``BoundaryBasis.build``.

        Returns
        -------
        BoundaryBasis
            The basis.
        """
        return _boundary_basis(reduced, shape, self.train_poses(), p, local_size=self.local_size, **kw)


def _boundary_basis(reduced, shape, poses, p, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # p above the rank of the speeds: reduced, as asked
        return F.BoundaryBasis.build(reduced, shape, poses, p, **kw)


def _training_run(grid, shape, steps, dt, seed, viscosity):
    poses, vel = c_shape_path(dt, seed, steps)
    ws = fluid_forcing.random_winds(grid, 6, steps, seed=seed)
    run = F.full_run(grid, steps, dt, ws, viscosity=viscosity, obstacles=([shape], poses[:, None], vel[:, None]))
    return run, poses, vel


def c_shape_scene(n=32, r=16, p=32, runs=3, steps=100, dt=0.01, viscosity=0.0, threads=0, seed=0,
                  local_size=None) -> CShapeScene:
    """Trains the "2D Boundaries" c-shape scene.

    Full runs with the c-shape moved along random paths through random
    winds (paper: 144 runs at 128^2), a PCA basis of r fields and a
    boundary basis of p fields (plus 3 rigid) from the poses of the
    training paths.

    Parameters
    ----------
    n : int
        Cells per side (paper 128).
    r : int
        Basis size (paper 64).
    p : int
        Boundary fields wanted (paper 23; cut to the rank).
    runs : int
        Training runs.
    steps : int
        Steps per run.
    dt : float
        Step (s).
    viscosity : float
        Viscosity of the full runs and the reduced model (m^2/s).
    threads : int
        Threads of the boundary-basis build (0: all).
    seed : int
        Seed of the paths and winds.
    local_size : float, optional
        Half-size of the boundary fields' local grid (m); default the
        shape's radius + 4h.

    Returns
    -------
    CShapeScene
        The trained scene.
    """
    grid = F.MACGrid2D(n, n)
    shape = F.c_shape(0.12, 0.07, segments=16)
    trs, paths = [], []
    for k in range(integer(runs, "runs")):
        run, poses, vel = _training_run(grid, shape, steps, dt, seed + k, viscosity)
        trs.append(run)
        paths.append((poses, vel))
    snaps = np.vstack([t.velocities[1:] for t in trs])
    B = F.velocity_basis(grid, snaps, r)
    red = ReducedFluid(grid, B, real(viscosity, "viscosity"))
    sc = CShapeScene(grid, red, shape, None, dt, trs, paths, viscosity, local_size)
    sc.boundary = sc.boundary_basis(red, shape, p, threads=threads)
    return sc


def _table_axes(poses, h, spacing):
    lo, hi = poses[:, :2].min(0) - spacing * h, poses[:, :2].max(0) + spacing * h
    axes = [np.arange(lo[i], hi[i] + spacing * h, spacing * h) for i in range(2)]
    th = np.arange(poses[:, 2].min() - 0.1, poses[:, 2].max() + 0.2, 0.1)
    return axes[0], axes[1], th


def table_coupling(sc: CShapeScene, spacing, run=0, boundary=None) -> "F.Coupling":
    """F and G tabulated over the poses of a training path (Fig. 3.11b).

    Parameters
    ----------
    sc : CShapeScene
        The trained scene.
    spacing : float
        Spacing of the table's positions, in voxels (angles are 0.1 rad apart).
    run : int
        Training path whose poses the table covers.
    boundary : BoundaryBasis, optional
        Default the scene's.

    Returns
    -------
    Coupling
        With ``precompute="both"``.
    """
    return F.Coupling(sc.reduced, sc.boundary if boundary is None else boundary,
                      pose_table=_table_axes(sc.paths[run][0], sc.grid.h, real(spacing, "spacing")), precompute="both")


def run_scene(sc: CShapeScene, coupling, poses, vel, z0, w=None):
    """Runs the reduced scene with one object along a path.

    Parameters
    ----------
    sc : CShapeScene
        The trained scene.
    coupling : Coupling
        The object's coupling.
    poses : (T, 3) array
        The object's (x, y, theta) per step (m, m, rad).
    vel : (T, 3) array
        Its (vx, vy, omega) per step (m/s, m/s, rad/s).
    z0 : (r,) array
        Initial reduced state.
    w : (T, r) array, optional
        Reduced forces per step.

    Returns
    -------
    Z : (T+1, r) array
        Reduced states.
    removed : (T,) array
        Surface energy removed per step (``ReducedScene.surface_energy_removed``).
    """
    scene = F.ReducedScene(sc.reduced, [coupling])
    T = len(poses)
    Z = np.zeros((T + 1, sc.reduced.r))
    Z[0] = z0
    rem = np.zeros(T)
    zero = np.zeros(sc.reduced.r)
    for t in range(T):
        Z[t + 1], c, zf = scene.step(Z[t], zero if w is None else w[t], sc.dt, poses[t:t + 1], vel[t:t + 1],
                                     return_flow=True)
        rem[t] = scene.surface_energy_removed(zf, c, poses[t:t + 1], vel[t:t + 1])[0]
    return Z, rem


def removal(sc: CShapeScene, spacings=(1, 2, 4), run=0, shape_coupling=None) -> dict:
    """Mean surface energy removed per step along a training path (Fig. 3.11b).

    Parameters
    ----------
    sc : CShapeScene
        The trained scene.
    spacings : sequence of float
        Table spacings to try, in voxels.
    run : int
        Training path.
    shape_coupling : Coupling, optional
        Unused; kept for callers that pass one.

    Returns
    -------
    dict
        "exact": on the fly; each spacing: with tables (feedforward and
        feedback) that far apart; "bytes_<spacing>": their table_bytes.
    """
    poses, vel = sc.paths[run]
    z0 = sc.reduced.basis.T @ sc.training_runs[run].velocities[0]
    out = {}
    _, rem = run_scene(sc, F.Coupling(sc.reduced, sc.boundary), poses, vel, z0)
    out["exact"] = float(rem.mean())
    for s in spacings:
        cpl = table_coupling(sc, s, run)
        _, rem = run_scene(sc, cpl, poses, vel, z0)
        out[s] = float(rem.mean())
        out[f"bytes_{s}"] = cpl.table_bytes
    return out


def smoke_entering(sc: CShapeScene, run=0, boundary=True, coupling=None, spacing=None) -> float:
    """Smoke carried across the object's surface into it per step.

    The thesis' smoke test ("fluid will traverse the boundary", sec. 3.7.1)
    measured as the inflow through the surface. The object follows training
    path ``run``; the flow relative to it is u' - v with boundary handling
    (``coupling``, default on the fly) or B z - v without (v: the rigid
    velocity). The smoke entering per step is

        dt sum_k max(0, -(u - v)(x_k) . n_k) ds,

    at surface points ``spacing`` apart (default h/8: four times finer than
    the boundary basis' samples, so the residual between them counts), from
    unit smoke everywhere outside the object: what an exact transport
    carries across a surface whose normal relative speed is that of the
    flow. It vanishes exactly for a perfect boundary condition.

    Why not the smoke found inside the object (``smoke_inside``, the first
    version of this measure): there the smoke is moved by semi-Lagrangian
    advection on the grid, and that scheme carries smoke across a surface
    the flow does not cross. The object's cells are a staircase of its
    outline (a cell is inside when its centre is); each step a cell's value
    is read back along the flow from the 4 cells around its departure
    point, so an inside cell within a cell of the surface mixes in outside
    smoke whenever the flow moves along the surface, at a rate of order
    |u_t| dt / h per step. The boundary fields cancel only the normal flow
    (slip stays), so that leak remains with a perfect boundary basis, and it
    grows with the tangential speed: ``smoke_inside`` of a flow rotating
    rigidly about a disk, exactly tangential to it, is far from zero
    (tests/test_fluid_obstacles_experiments.py), while the inflow is zero.

    Parameters
    ----------
    sc : CShapeScene
        The trained scene.
    run : int
        Training path the object follows (and whose first state starts the flow).
    boundary : bool
        With boundary handling (u') or without (B z).
    coupling : Coupling, optional
        The coupling used with boundary handling; default on the fly.
    spacing : float, optional
        Spacing of the surface samples of the measure (m); default h/8.

    Returns
    -------
    float
        Mean smoke entering per step, in cells' worth of unit smoke (divided by h^2).
    """
    grid, red = sc.grid, sc.reduced
    poses, vel = sc.paths[run]
    z = red.basis.T @ sc.training_runs[run].velocities[0]
    scene = F.ReducedScene(red, [F.Coupling(red, sc.boundary) if coupling is None else coupling])
    plain = F.ReducedScene(red, [])
    pts, nrm = sc.shape.surface(grid.h / 8 if spacing is None else real(spacing, "spacing"))
    ds = _perimeter(sc.shape) / len(pts)
    zero, none = np.zeros(red.r), np.zeros((0, 3))
    total = 0.0
    for t in range(len(poses)):
        zn, coeffs, zf = scene.step(z, zero, sc.dt, poses[t:t + 1], vel[t:t + 1], return_flow=True)
        cs, sn = np.cos(poses[t, 2]), np.sin(poses[t, 2])
        rot = np.array([[cs, -sn], [sn, cs]])
        X, N = pts @ rot.T + poses[t, :2], nrm @ rot.T
        v = (scene.velocity_at(X, zf, coeffs, poses[t:t + 1]) if boundary
             else plain.velocity_at(X, zf, np.zeros((0, 0)), none))
        vx, vy, om = vel[t]
        rigid = np.stack([vx - om * (X[:, 1] - poses[t, 1]), vy + om * (X[:, 0] - poses[t, 0])], axis=1)
        total += sc.dt * ds * np.maximum(-np.sum((v - rigid) * N, axis=1), 0.0).sum()
        z = zn if boundary else red.step(z, zero, sc.dt)
    return total / len(poses) / grid.h ** 2


def smoke_inside_of_flow(grid, shape, poses, rigid_velocities, flows, dt) -> float:
    """Smoke found in an object's cells after semi-Lagrangian advection, per step.

    Each step the cells whose centres lie in the object (at ``poses[t]``)
    are emptied, the cell smoke (unit outside at the start) is advected one
    step through ``flows[t]`` minus the object's rigid velocity (its frame),
    and the smoke then in the object's cells is counted.

    Parameters
    ----------
    grid : MACGrid2D
        The world grid.
    shape : Shape2D
        The object's shape.
    poses : (T, 3) array
        The object's (x, y, theta) per step (m, m, rad).
    rigid_velocities : (T, 3) array
        Its (vx, vy, omega) per step (m/s, m/s, rad/s).
    flows : callable or (T, N) array
        The world velocity per step (``flows(t) -> (N,)`` or row t), m/s.
    dt : float
        Step (s).

    Returns
    -------
    float
        Mean smoke in the object's cells per step, in cells' worth.
    """
    poses, rv, dt = np.asarray(poses, float), np.asarray(rigid_velocities, float), real(dt, "dt")
    c = (np.arange(grid.nx) + 0.5) * grid.h
    X, Y = np.meshgrid(c, (np.arange(grid.ny) + 0.5) * grid.h)
    cells = np.stack([X.ravel(), Y.ravel()], axis=1)
    rho = np.ones(grid.n_cells)
    fp = F.face_positions(grid)
    isx = np.arange(grid.n_faces) < grid.n_xfaces
    total = 0.0
    for t in range(len(poses)):
        cs, sn = np.cos(poses[t, 2]), np.sin(poses[t, 2])
        inside = shape.inside((cells - poses[t, :2]) @ np.array([[cs, -sn], [sn, cs]]))
        rho[inside] = 0.0
        u = flows(t) if callable(flows) else flows[t]
        vx, vy, om = rv[t]
        rigid = np.where(isx, vx - om * (fp[:, 1] - poses[t, 1]), vy + om * (fp[:, 0] - poses[t, 0]))
        rho = grid.advect_cells(u - rigid, rho, dt)
        total += rho[inside].sum()
    return float(total / len(poses))


def smoke_inside(sc: CShapeScene, run=0, boundary=True, coupling=None) -> float:
    """The first smoke measure: smoke found in the object's cells per step.

    The object follows training path ``run`` through the reduced flow u'
    (with boundary handling: ``coupling``, default on the fly) or B z
    (without); see ``smoke_inside_of_flow``. Reported beside
    ``smoke_entering``: this measure counts the semi-Lagrangian scheme's
    leak along the surface (see ``smoke_entering``), which boundary
    handling cannot remove, so it stays large with a perfect boundary basis.

    Parameters
    ----------
    sc : CShapeScene
        The trained scene.
    run : int
        Training path the object follows.
    boundary : bool
        With boundary handling (u') or without (B z).
    coupling : Coupling, optional
        The coupling used with boundary handling; default on the fly.

    Returns
    -------
    float
        Mean smoke in the object's cells per step, in cells' worth.
    """
    red = sc.reduced
    poses, vel = sc.paths[run]
    scene = F.ReducedScene(red, [F.Coupling(red, sc.boundary) if coupling is None else coupling])
    zero = np.zeros(red.r)
    state = {"z": red.basis.T @ sc.training_runs[run].velocities[0]}

    def flow(t):
        zn, coeffs, zf = scene.step(state["z"], zero, sc.dt, poses[t:t + 1], vel[t:t + 1], return_flow=True)
        if boundary:
            u = scene.velocity_field(zf, coeffs, poses[t:t + 1])
            state["z"] = zn
        else:
            u = red.basis @ zf
            state["z"] = red.step(state["z"], zero, sc.dt)
        return u
    return smoke_inside_of_flow(sc.grid, sc.shape, poses, vel, flow, dt=sc.dt)


def coupling_growth(sc: CShapeScene, projection="surface", poses=None, boundary=None) -> np.ndarray:
    """Growth of the coupled step at still poses: the spectral radius of I + G F.

    With the object at rest (zero rigid coefficients) the coupling maps z
    to (I + G_p F) z once per step (G_p: the feedback's first p columns).
    With the thesis' feedforward (``projection="surface"``, eq. 3.11) its
    spectral radius exceeds 1 at some poses (1.18 at most over the training
    poses of the CI scene ``c_shape_scene(32, 16, 32)``), so an unforced
    scene at nu = 0 with a still object gains energy. The energy-weighted
    projection (``projection="energy"``), which would make the correction
    an orthogonal projection for a flow divergence-free on the local grid,
    measures 1.28 there: the growth comes from the discretisation (the
    world field sampled at the surface, R^-1, and the local fields
    resampled onto world faces, R, are not adjoint; the local box cuts the
    flow), not from the inner product of eq. 3.11.

    Parameters
    ----------
    sc : CShapeScene
        The trained scene.
    projection : {"surface", "energy"}
        The feedforward's projection (see ``Coupling``).
    poses : (n, 3) array, optional
        Poses (m, m, rad); default the training poses.
    boundary : BoundaryBasis, optional
        Default the scene's.

    Returns
    -------
    (n,) array
        max |eigenvalue| of I + G_p F at each pose.
    """
    red = sc.reduced
    bb = sc.boundary if boundary is None else boundary
    cpl = F.Coupling(red, bb, projection=projection)
    poses = sc.train_poses() if poses is None else np.asarray(poses, float).reshape(-1, 3)
    out = np.empty(len(poses))
    for k, pose in enumerate(poses):
        M = np.eye(red.r) + cpl.feedback(pose)[:, :bb.p] @ cpl.feedforward(pose)
        out[k] = np.abs(np.linalg.eigvals(M)).max()
    return out


def _perimeter(shape) -> float:
    V = shape.vertices
    return float(np.linalg.norm(np.roll(V, -1, axis=0) - V, axis=1).sum())


def tracers_entering(sc: CShapeScene, run=0, boundary=True, count=400, seed=0) -> float:
    """Fraction of tracers found inside the object after a step, per step.

    Tracer particles (smoke without numerical diffusion) are seeded in a
    band around the object each step and moved one step through u' (or B z
    alone) relative to the object, before any push-out.

    Parameters
    ----------
    sc : CShapeScene
        The trained scene.
    run : int
        Training path the object follows.
    boundary : bool
        Through u' (True) or B z (False).
    count : int
        Tracers per step.
    seed : int
        Seed of the tracers.

    Returns
    -------
    float
        Mean fraction of the tracers that entered, per step.
    """
    red = sc.reduced
    poses, vel = sc.paths[run]
    z = red.basis.T @ sc.training_runs[run].velocities[0]
    scene = F.ReducedScene(red, [F.Coupling(red, sc.boundary)])
    plain = F.ReducedScene(red, [])
    rng = np.random.default_rng(seed)
    zero = np.zeros(red.r)
    entered = 0
    R = sc.shape.radius
    for t in range(len(poses)):
        zn, coeffs, zf = scene.step(z, zero, sc.dt, poses[t:t + 1], vel[t:t + 1], return_flow=True)
        a, rr = rng.uniform(0, 2 * np.pi, 4 * count), R * rng.uniform(0.3, 1.3, 4 * count)
        local = np.stack([rr * np.cos(a), rr * np.sin(a)], axis=1)
        local = local[~sc.shape.inside(local)][:count]
        cs, sn = np.cos(poses[t, 2]), np.sin(poses[t, 2])
        rot = np.array([[cs, -sn], [sn, cs]])
        pts = local @ rot.T + poses[t, :2]
        vb = scene.velocity_at(pts, zf, coeffs, poses[t:t + 1]) if boundary else plain.velocity_at(
            pts, zf, np.zeros((0, 0)), np.zeros((0, 3)))
        vx, vy, om = vel[t]
        rigid = np.stack([vx - om * (pts[:, 1] - poses[t, 1]), vy + om * (pts[:, 0] - poses[t, 0])], axis=1)
        moved = pts + sc.dt * (vb - rigid)  # in the object's frame
        entered += sc.shape.inside((moved - poses[t, :2]) @ rot).sum() / len(pts)
        z = zn
    return float(entered / len(poses))


# --- plots -------------------------------------------------------------------------------------

def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt
        _, ax = plt.subplots(figsize=(4, 4))
    return ax


def plot_local_field(bb, u, ax=None, stride=1):
    """Quiver of a boundary basis' local field in the object frame, with the shape's outline (Fig. 3.5).

    Parameters
    ----------
    bb : BoundaryBasis
        The basis.
    u : (N_local,) array
        A local field (e.g. a column of ``bb.fields``).
    ax : matplotlib Axes, optional
        Where to draw; a new figure by default.
    stride : int
        Draw every stride-th cell centre.

    Returns
    -------
    matplotlib Axes
        The axes drawn on.
    """
    ax = _axes(ax)
    L, hs = bb.local_grid, bb.half_size
    c = (np.arange(L.nx) + 0.5) * L.h
    X, Y = np.meshgrid(c[::stride], c[::stride])
    pts = np.stack([X.ravel(), Y.ravel()], axis=1)
    v = L.velocity_at(np.ascontiguousarray(u), pts)
    ax.quiver(pts[:, 0] - hs, pts[:, 1] - hs, v[:, 0], v[:, 1], angles="xy", color="tab:blue")
    V = np.vstack([bb.shape.vertices, bb.shape.vertices[:1]])
    ax.plot(V[:, 0], V[:, 1], "k-", lw=1.5)
    ax.set_aspect("equal")
    ax.set_xlabel("x (m, object frame)")
    ax.set_ylabel("y (m, object frame)")
    return ax


def plot_smoke(grid, density, shapes=(), poses=(), ax=None):
    """Smoke density as an image with the objects' outlines at their poses.

    Parameters
    ----------
    grid : MACGrid2D
        The grid of the density.
    density : (nx ny,) array
        Cell densities.
    shapes : sequence of Shape2D
        The objects' shapes.
    poses : (K, 3) array
        Their (x, y, theta) (m, m, rad).
    ax : matplotlib Axes, optional
        Where to draw; a new figure by default.

    Returns
    -------
    matplotlib Axes
        The axes drawn on.
    """
    ax = _axes(ax)
    ax.imshow(F.cell_image(grid, density), origin="lower", extent=(0, grid.nx * grid.h, 0, grid.ny * grid.h),
              cmap="Greys", vmin=0, vmax=max(1e-12, float(np.max(density))))
    for s, p in zip(shapes, poses):
        c, sn = np.cos(p[2]), np.sin(p[2])
        V = np.vstack([s.vertices, s.vertices[:1]]) @ np.array([[c, sn], [-sn, c]]) + p[:2]
        ax.plot(V[:, 0], V[:, 1], "r-", lw=1.5)
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    return ax


def plot_removal(rm, ax=None):
    """Surface energy removed against the table spacing (Fig. 3.11b).

    Parameters
    ----------
    rm : dict
        The result of ``removal()``.
    ax : matplotlib Axes, optional
        Where to draw; a new figure by default.

    Returns
    -------
    matplotlib Axes
        The axes drawn on.
    """
    ax = _axes(ax)
    sp = sorted(k for k in rm if isinstance(k, (int, np.integer)))
    ax.plot(sp, [100 * rm[s] for s in sp], "o-", label="tabulated")
    ax.axhline(100 * rm["exact"], color="k", ls="--", label="on the fly")
    ax.set_xlabel("table spacing (voxels)")
    ax.set_ylabel("surface energy removed per step (%)")
    ax.legend()
    return ax


def _forces(grid, winds, T):
    forces = np.zeros((T, grid.n_faces))
    for w in winds:
        forces[max(w.start, 0):max(w.start + w.duration, 0)] += w.field(grid)
    return forces


def _resample(coarse, u, fine) -> np.ndarray:
    """A MAC field u of grid ``coarse`` sampled (bilinearly) at the faces of grid ``fine`` (same domain)."""
    pos = F.face_positions(fine)
    v = coarse.velocity_at(np.ascontiguousarray(u), pos)
    return np.where(np.arange(fine.n_faces) < fine.n_xfaces, v[:, 0], v[:, 1])


def _relative_errors(U, ref) -> np.ndarray:
    return np.linalg.norm(U - ref, axis=1) / np.maximum(np.linalg.norm(ref, axis=1), 1e-300)


def reduced_scene_run(sc: CShapeScene, r, poses, vel, u0, forces, p=None, viscosity=None) -> np.ndarray:
    """The reduced scene on the first r PCA fields of a scene, along a path.

    Its own boundary basis from the training poses, coupling on the fly.

    Parameters
    ----------
    sc : CShapeScene
        The trained scene.
    r : int
        Number of PCA fields used.
    poses : (T, 3) array or None
        The object's (x, y, theta) per step (m, m, rad); None: no object (B z alone).
    vel : (T, 3) array
        Its (vx, vy, omega) per step (m/s, m/s, rad/s).
    u0 : (N,) array
        Initial velocity (m/s), projected onto the basis.
    forces : (T, N) array
        Face accelerations per step (m/s^2).
    p : int, optional
        Boundary fields; default the scene's p.
    viscosity : float, optional
        The reduced model's viscosity (m^2/s); default the scene's.

    Returns
    -------
    (T, N) array
        u' after each step on the world grid (m/s).
    """
    grid = sc.grid
    B = np.ascontiguousarray(sc.reduced.basis[:, :integer(r, "r")])
    red = ReducedFluid(grid, B, sc.viscosity if viscosity is None else real(viscosity, "viscosity"))
    z = B.T @ u0
    if poses is None:
        return red.rollout(z, forces @ B, sc.dt)[1:] @ B.T
    bb = sc.boundary_basis(red, sc.shape, sc.boundary.p if p is None else p)
    scene = F.ReducedScene(red, [F.Coupling(red, bb)])
    U = np.zeros((len(poses), grid.n_faces))
    for t in range(len(poses)):
        z, coeffs, zf = scene.step(z, B.T @ forces[t], sc.dt, poses[t:t + 1], vel[t:t + 1], return_flow=True)
        U[t] = scene.velocity_field(zf, coeffs, poses[t:t + 1])
    return U


def error_curves(sc: CShapeScene, rs=(4, 8, 16), sizes=None, run=0, viscosity=None) -> dict:
    """Fig. 3.10a: relative error per step against a full run of the scene.

    The error |u - u*| / |u*| against the full run ``run`` (the "ground
    truth" u*, along the same path under the same winds) of

    - the reduced scene with the first r PCA fields, for each r in ``rs``
      (its own boundary basis, coupling on the fly);
    - full runs at the coarser resolutions ``sizes``, same winds, path and
      solver, their fields sampled bilinearly at the reference grid's faces.

    Parameters
    ----------
    sc : CShapeScene
        The trained scene.
    rs : sequence of int
        Basis sizes.
    sizes : sequence of int, optional
        Cells per side of the coarser full runs; default 1/2, 3/4 and 7/8 of
        the scene's (the paper's 64, 96 and 112 of 128).
    run : int
        The reference training run.
    viscosity : float, optional
        The reduced model's viscosity (m^2/s); default the scene's.

    Returns
    -------
    dict
        ``reduced`` {r: (T,) array}, ``downsampled`` {n: (T,) array}, and
        ``mean`` {("r", r) or ("n", n): mean error}.
    """
    full = sc.training_runs[run]
    poses, vel = sc.paths[run]
    grid = sc.grid
    T = len(poses)
    ref = full.velocities[1:T + 1]
    forces = _forces(grid, full.forces, T)
    out = {"reduced": {}, "downsampled": {}, "mean": {}}
    for r in rs:
        e = _relative_errors(reduced_scene_run(sc, r, poses, vel, full.velocities[0], forces, viscosity=viscosity), ref)
        out["reduced"][int(r)], out["mean"][("r", int(r))] = e, float(e.mean())
    n = grid.nx
    sizes = tuple(int(round(n * f)) for f in (0.5, 0.75, 0.875)) if sizes is None else sizes
    for m in sizes:
        m = integer(m, "sizes")
        gc = F.MACGrid2D(m, m, h=grid.nx * grid.h / m)
        u0 = _resample(grid, full.velocities[0], gc)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # a coarse grid leaks through the thin c
            low = F.full_run(gc, T, sc.dt, full.forces, viscosity=sc.viscosity, u0=u0,
                             obstacles=([sc.shape], poses[:, None], vel[:, None]))
        U = np.stack([_resample(gc, u, grid) for u in low.velocities[1:]])
        e = _relative_errors(U, ref)
        out["downsampled"][m], out["mean"][("n", m)] = e, float(e.mean())
    return out


def basis_error(sc: CShapeScene, rs=(4, 8, 16), run=0, p=None, viscosity=None) -> dict:
    """Fig. 3.10a, reduced runs only: mean relative error against a full run.

    Parameters
    ----------
    sc : CShapeScene
        The trained scene.
    rs : sequence of int
        Basis sizes (first r PCA fields, each with its own boundary basis).
    run : int
        The reference training run (same path, same winds).
    p : int, optional
        Boundary fields; default the scene's p.
    viscosity : float, optional
        The reduced model's viscosity (m^2/s); default the scene's.

    Returns
    -------
    dict
        {r: mean |u' - u*| / |u*| over the run}.
    """
    full = sc.training_runs[run]
    poses, vel = sc.paths[run]
    forces = _forces(sc.grid, full.forces, len(poses))
    ref = full.velocities[1:len(poses) + 1]
    return {r: float(_relative_errors(reduced_scene_run(sc, r, poses, vel, full.velocities[0], forces, p=p,
                                                        viscosity=viscosity), ref).mean()) for r in rs}


def _angle_wind(angle_deg, steps, magnitude):
    a = np.deg2rad(angle_deg)
    return [fluid_forcing.Wind((0.5, 0.5), (np.cos(a), np.sin(a)), magnitude, 0.35, 0, min(5, steps))]


def wind_angle_error(n=32, r=16, p=32, angles=range(0, 91, 15), train_angles=(0, 90), steps=60, dt=0.01,
                     magnitude=40.0, viscosity=0.0, reduced_viscosity=None, seed=0, path_scale=1.0,
                     obstacle=True, local_size=None) -> dict:
    """Fig. 3.10b / 3.11a: trained with winds at some angles, tested at others.

    The c-shape moves along one path (``c_shape_path(dt, seed, steps)``);
    each run starts at rest and a broad wind (centred in the domain, width
    0.35) blows for its first 5 steps at the run's angle. The full runs at
    the training angles give the PCA basis (r fields) and, from the path's
    poses, the boundary basis (p fields); each test angle's reduced run
    (coupling on the fly) is compared with the full run at that angle.

    Parameters
    ----------
    n : int
        Cells per side.
    r : int
        Basis size.
    p : int
        Boundary fields wanted.
    angles : sequence of float
        Test wind angles (degrees).
    train_angles : sequence of float
        Training wind angles (degrees).
    steps : int
        Steps per run.
    dt : float
        Step (s).
    magnitude : float
        Wind acceleration (m/s^2).
    viscosity : float
        Viscosity of the full runs (m^2/s).
    reduced_viscosity : float, optional
        The reduced model's viscosity (m^2/s); default ``viscosity``.
    seed : int
        Seed of the path.
    path_scale : float
        Scales the path's excursion (and velocities) about its start.
    obstacle : bool
        With the c-shape (False: the reduced fluid alone).
    local_size : float, optional
        Half-size of the boundary fields' local grid (m).

    Returns
    -------
    dict
        ``angles`` (k,), ``error`` (k,): mean relative error |u' - u*| / |u*|
        over the run, ``curves`` (k, T) per step, ``train_angles`` and
        ``scene`` (the trained CShapeScene).
    """
    grid = F.MACGrid2D(integer(n, "n"), n)
    shape = F.c_shape(0.12, 0.07, segments=16)
    poses, vel = c_shape_path(dt, seed, integer(steps, "steps"))
    poses = poses[0] + path_scale * (poses - poses[0])
    vel = path_scale * vel
    obst = ([shape], poses[:, None], vel[:, None]) if obstacle else None

    def full(angle):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return F.full_run(grid, steps, dt, _angle_wind(angle, steps, magnitude), viscosity=viscosity,
                              obstacles=obst)
    runs = {float(a): full(a) for a in train_angles}
    B = F.velocity_basis(grid, np.vstack([u.velocities[1:] for u in runs.values()]), r)
    nu = viscosity if reduced_viscosity is None else reduced_viscosity
    red = ReducedFluid(grid, B, real(nu, "reduced_viscosity"))
    sc = CShapeScene(grid, red, shape, None, dt, list(runs.values()), [(poses, vel)], nu, local_size)
    sc.boundary = sc.boundary_basis(red, shape, p)
    angles = np.asarray(list(angles), float)
    curves = []
    for a in angles:
        truth = runs.get(float(a)) or full(a)
        forces = _forces(grid, truth.forces, steps)
        U = reduced_scene_run(sc, r, poses if obstacle else None, vel, truth.velocities[0], forces)
        curves.append(_relative_errors(U, truth.velocities[1:]))
    curves = np.array(curves)
    return dict(angles=angles, error=curves.mean(axis=1), curves=curves, train_angles=[float(a) for a in train_angles],
                scene=sc)


def plot_error_curves(ec, ax=None):
    """Fig. 3.10a: error per step of the reduced runs (green) and the downsampled full runs (blue).

    Parameters
    ----------
    ec : dict
        The result of ``error_curves()``.
    ax : matplotlib Axes, optional
        Where to draw; a new figure by default.

    Returns
    -------
    matplotlib Axes
        The axes drawn on.
    """
    ax = _axes(ax)
    greens, blues = ["#2ca02c", "#74c476", "#a1d99b", "#c7e9c0"], ["#08519c", "#3182bd", "#6baed6", "#9ecae1"]
    for k, (r, e) in enumerate(sorted(ec["reduced"].items())):
        ax.plot(np.arange(1, len(e) + 1), e, color=greens[k % 4], label=f"{r} bases")
    for k, (m, e) in enumerate(sorted(ec["downsampled"].items())):
        ax.plot(np.arange(1, len(e) + 1), e, color=blues[k % 4], ls="--", label=f"full {m}x{m}")
    ax.set_xlabel("time step")
    ax.set_ylabel("relative error |u - u*| / |u*|")
    ax.legend(fontsize="small")
    return ax


def plot_wind_angle_error(wa, ax=None):
    """Fig. 3.10b: mean relative error against the test wind's angle, the training angles marked.

    Parameters
    ----------
    wa : dict
        The result of ``wind_angle_error()``.
    ax : matplotlib Axes, optional
        Where to draw; a new figure by default.

    Returns
    -------
    matplotlib Axes
        The axes drawn on.
    """
    ax = _axes(ax)
    ax.plot(wa["angles"], wa["error"], "o-", color="tab:green")
    for a in wa["train_angles"]:
        ax.axvline(a, color="0.6", ls=":", label="trained" if a == wa["train_angles"][0] else None)
    ax.legend(fontsize="small")
    ax.set_xlabel("wind angle (degrees)")
    ax.set_ylabel("mean relative error |u - u*| / |u*|")
    return ax


def untrained_shapes(sc: CShapeScene, run=0, p=None) -> dict:
    """Removal (on the fly) for shapes the training runs never saw.

    A disk and a box, as in the thesis' 2D Boundaries scene: their boundary
    bases come from the same reduced basis and training poses.

    Parameters
    ----------
    sc : CShapeScene
        The trained scene.
    run : int
        Training path the shapes follow.
    p : int, optional
        Boundary fields; default the scene's p.

    Returns
    -------
    dict
        {"disk": mean removal, "box": mean removal}.
    """
    poses, vel = sc.paths[run]
    z0 = sc.reduced.basis.T @ sc.training_runs[run].velocities[0]
    out = {}
    for name, shape in (("disk", F.disk(0.08, 24)), ("box", F.box(0.16, 0.08))):
        bb = sc.boundary_basis(sc.reduced, shape, sc.boundary.p if p is None else p, surface_spacing=sc.grid.h)
        _, rem = run_scene(sc, F.Coupling(sc.reduced, bb), poses, vel, z0)
        out[name] = float(rem.mean())
    return out


def obstacle_model(scn, shape, pose, p=24, seed=0, surface_spacing=None) -> "F.FluidParticles":
    """The leaf scenario's particles in its reduced fluid with a still object in the flow.

    A boundary basis trained at 24 poses jittered around ``pose`` (2 cells,
    0.1 rad), coupled on the fly, and ``FluidParticles`` on the scene with the
    object held at ``pose``: the particle velocity and its Jacobian include
    the boundary fields.

    Parameters
    ----------
    scn : reduced_fluid_paths.FluidScenario
        The trained leaf scenario.
    shape : Shape2D
        The object.
    pose : (3,) array
        Its (x, y, theta) (m, m, rad).
    p : int
        Boundary fields (plus 3 rigid).
    seed : int
        Seed of the training poses.
    surface_spacing : float, optional
        Spacing of the surface samples (m); default one grid cell.

    Returns
    -------
    FluidParticles
        State [p (2P), z (r)], on the scene.
    """
    pose = as_float_array(pose, "pose")
    rng = np.random.default_rng(seed)
    train = pose + rng.uniform(-1, 1, (24, 3)) * np.array([2 * scn.grid.h, 2 * scn.grid.h, 0.1])
    spacing = scn.grid.h if surface_spacing is None else real(surface_spacing, "surface_spacing")
    bb = _boundary_basis(scn.fluid, shape, train, p, surface_spacing=spacing)
    scene = F.ReducedScene(scn.fluid, [F.Coupling(scn.fluid, bb)])
    return F.FluidParticles(scene, scn.particles, poses=pose[None], velocities=np.zeros((1, 3)))


def leaf_with_obstacle(scn, shape=None, pose=(0.42, 0.33, 0.0), p=24, noise=20.0, seed=0) -> dict:
    """The leaf of ``reduced_fluid_paths`` (Barbic & Popovic's S path) with a
    still obstacle in the flow: ``FluidParticles`` on a ``ReducedScene``,
    whose particle velocities and Jacobian include the boundary fields, so the
    time-varying LQR is computed about the leaf's reference with the object
    present. The boundary basis is trained at poses jittered around ``pose``.

    Parameters
    ----------
    scn : reduced_fluid_paths.FluidScenario
        The trained leaf scenario.
    shape : Shape2D, optional
        Default a box 0.1 x 0.06 m.
    pose : (3,) array
        The object's (x, y, theta) (m, m, rad), fixed.
    p : int
        Boundary fields (plus 3 rigid).
    noise : float
        Amplitude of the Perlin disturbance on the reduced coordinates.
    seed : int
        Seed of the training poses and the disturbance.

    Returns
    -------
    dict
        ``open`` and ``lqr`` (SimulationResult), ``error_open``,
        ``error_lqr`` (T+1, P) distances to the reference path (m),
        ``inside``: the number of recorded particle positions inside the
        object, and ``model`` (the FluidParticles on the scene).
    """
    from .. import lqr, models, sim
    from .reduced_fluid_paths import PerlinForce, path_error
    shape = F.box(0.1, 0.06) if shape is None else shape
    pose = np.asarray(pose, float)
    model = obstacle_model(scn, shape, pose, p, seed)
    P, r = scn.particles, scn.r
    q = np.r_[np.full(2 * P, 1e5), np.ones(r)]
    A = models.linearize(model, scn.x_ref, scn.dt)
    sol = lqr.solve_continuous(A, model.control_matrix(), scn.dt, np.diag(q), 1e-3 * np.eye(r), 10 * np.diag(q))
    trk = lqr.tracker(sol, scn.x_ref)
    d = PerlinForce(r, noise, 0.3, seed).series(scn.steps, scn.dt)
    res_open = sim.simulate(model, scn.x_ref[0], scn.steps, scn.dt, disturbance=d)
    res_lqr = sim.simulate(model, scn.x_ref[0], scn.steps, scn.dt, controller=trk, disturbance=d)
    c, s = np.cos(pose[2]), np.sin(pose[2])
    pts = np.vstack([res.states[:, :2 * P].reshape(-1, 2) for res in (res_open, res_lqr)])
    inside = int(shape.inside((pts - pose[:2]) @ np.array([[c, -s], [s, c]])).sum())
    return {"open": res_open, "lqr": res_lqr, "error_open": path_error(scn, res_open.states),
            "error_lqr": path_error(scn, res_lqr.states), "inside": inside, "model": model}
