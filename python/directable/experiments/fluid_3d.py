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
from .._validate import integer, real
from ..reduce import IncrementalPCA

__all__ = ["PlateScene", "plate_path", "plate_scene", "run_plate", "plate_removal", "plate_smoke_entering", "surface_quadrature",
           "plate_basis_error", "plate_error_curves", "plate_wind_angles", "plate_viscosity", "plate_projection_error",
           "plate_untrained", "plate_timings", "plate_table_axes", "plot_plate",
           "LeavesScene", "car_paths", "car_shape", "car_obstacle", "car_pose", "leaves_scene", "run_leaves",
           "LeavesRun", "plot_slice", "plot_leaves", "plot_split"]


# --- 3D Boundaries (Fig. 3.9) ----------------------------------------------------------------------

FLAT = np.array([-np.pi / 2, 0.0, 0.0])  # rotation vector laying a plate flat: its normal (z) turned up (+y)


def plate_path(center, steps, dt, amplitude=0.1, axis=0, cycles=1.0, phase=0.0):
    """The path of a flat plate swaying sinusoidally around a centre.

    Parameters
    ----------
    center : (3,) array
        Centre of the sway (m).
    steps : int
        Samples of the path.
    dt : float
        Time between samples (s).
    amplitude : float
        Sway (m) along ``axis``.
    axis : int
        World axis of the sway (0, 1, 2).
    cycles : float
        Periods over the path.
    phase : float
        Phase of the sway (rad).

    Returns
    -------
    poses : (steps, 6) array
        Position (m) and rotation vector (rad, the plate laid flat).
    velocities : (steps, 6) array
        Linear (m/s) and angular (rad/s, zero) velocity.
    """
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
    """The trained "3D Boundaries" scene (``plate_scene``).

    Parameters
    ----------
    grid : MACGrid3D
    reduced : ReducedFluid3D
    plate : Shape3D
    boundary : BoundaryBasis3D
        The plate's boundary basis.
    dt : float
        Time step (s).
    paths : list of (poses (T, 6), velocities (T, 6))
        The training paths.
    runs : list of FullRun3D
        The full training runs along them.
    updraft : (N,) array
        The rising jet's force field (m/s^2).
    viscosity : float
        nu of the reduced model (m^2/s).
    seconds : dict
        Precomputation time (s) of the full runs, the basis, the boundary basis.
    jet_args : tuple
        (center, direction, magnitude, width) of ``updraft`` (``MACGrid3D.wind``),
        to rebuild it on another grid; empty if it is not such a gust.
    samples : {"faces+surface", "faces", "surface"}
        Where ``boundary`` reads normal speeds (``BoundaryBasis3D.build``);
        the scene's other boundary bases are built the same way.
    margin : float or None
        Cells between the plate's extent and its local box (None: the
        build's default).
    """

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
    jet_args: tuple = ()
    samples: str = "faces+surface"
    margin: float | None = 8

    def train_poses(self, every=4):
        """The boundary basis' training poses: every ``every``-th pose of each path.

        Parameters
        ----------
        every : int
            Stride along the paths.

        Returns
        -------
        (n, 6) array
        """
        return np.vstack([p[::every] for p, _ in self.paths])


def plate_scene(n=32, r=16, p=24, steps=24, dt=0.02, heights=(0.35, 0.5, 0.65), updraft=6.0, amplitude=0.03,
                viscosity=0.0, threads=0, progress=None, samples="faces+surface", margin=8, width=0.4) -> PlateScene:
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
    viscosity : float
        nu of the full runs and of the reduced model (m^2/s).
    threads : int
        Threads of the boundary-basis build (<= 0: all).
    progress : None, bool or callable
        Progress of the full runs.
    samples : {"faces+surface", "faces", "surface"}
        Where the plate's boundary fields read normal speeds
        (``BoundaryBasis3D.build``). "faces" holds them to the full solver's
        condition on every face touching the plate's cells (the
        reduced-vs-full error is lowest and falls with r, but flow crosses
        the true surface within half a cell of its edges, where trilinear
        interpolation reads open faces: 15 % of the inflow without boundary
        handling, the full solver itself 27 %); "surface" samples the
        surface h apart (least inflow, but the error does not fall with r);
        "faces+surface" (default) the faces inside the plate and the
        surface samples: inflow <= 10 % of the unhandled one and an error
        that falls with r (benchmarks/RESULTS.md, 3D section).
    margin : float or None
        Cells between the plate's extent and its local box (None: the
        build's default, radius + 4h).
    width : float
        Side (m) of the square plate (its thickness is 2h). A whole even
        number of cells puts its rims on the local grid's faces: with
        ``samples="faces"`` a 0.375 m plate at 32^3 lets 5.2 % of the
        unhandled inflow through (the 0.4 m one 10.8 %) at the lowest error
        against the full run measured (benchmarks/RESULTS.md, 3D section).

    Returns
    -------
    PlateScene
    """
    t0 = time.perf_counter()
    grid = F.MACGrid3D(n, n, n)
    h = grid.h
    plate = F.plate(real(width, "width"), real(width, "width"), 2.0 * h)
    jet_args = ([0.5, 0.15, 0.5], [0.0, 1.0, 0.0], updraft, 0.2)
    jet = grid.wind(*jet_args)
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
    bb = _plate_boundary(reduced, plate, train, p, samples, margin, threads)
    t3 = time.perf_counter()
    return PlateScene(grid, reduced, plate, bb, dt, paths, runs, jet, viscosity,
                      {"full_runs": t1 - t0, "basis": t2 - t1, "boundary": t3 - t2}, jet_args, samples, margin)


def run_plate(sc: PlateScene, coupling, poses, vel, z0, w=None, leaves=None, drift=None):
    """Runs the reduced scene with one coupled plate along a path.

    Parameters
    ----------
    sc : PlateScene
    coupling : Coupling3D
        The plate's coupling (on the fly or tabulated).
    poses, vel : (T, 6) arrays
        The plate's poses and velocities per step.
    z0 : (r,) array
        Initial reduced velocity.
    w : (T, r) array, optional
        Reduced forces (default the updraft's).
    leaves : (P, 3) array, optional
        Particles advected through u' + ``drift``.
    drift : (3,) array, optional
        The particles' drift (m/s).

    Returns
    -------
    Z : (T+1, r) array
        Reduced states.
    removed : (T,) array
        Surface energy removed per step.
    particles : (T+1, P, 3) array or None
    """
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
    """Pose-table axes covering a path.

    Parameters
    ----------
    poses : (T, 6) array
        The path.
    h : float
        Cell side (m).
    spacing : float
        Node spacing in cells.

    Returns
    -------
    tuple of 6 arrays
        (xs, ys, zs, rxs, rys, rzs): positions ``spacing`` h apart (m), the
        rotation fixed at the first pose's (rad).
    """
    lo, hi = poses[:, :3].min(0) - spacing * h, poses[:, :3].max(0) + spacing * h
    axes = [np.arange(lo[i], hi[i] + spacing * h, spacing * h) for i in range(3)]
    return (*axes, *[np.array([poses[0, 3 + i]]) for i in range(3)])


def plate_removal(sc: PlateScene, spacings=(1, 2, 4), run=0) -> dict:
    """Fig. 3.11b in 3D: mean surface energy removed per step, on the fly and tabulated.

    Parameters
    ----------
    sc : PlateScene
    spacings : sequence of float
        Table spacings (cells).
    run : int
        Training path followed.

    Returns
    -------
    dict
        "exact": on the fly; s: with feedforward and feedback tabulated s
        cells apart; "bytes_s": that table's memory.
    """
    poses, vel = sc.paths[run]
    z0 = sc.reduced.basis.T @ sc.runs[run].velocities[0]
    out = {"exact": float(run_plate(sc, F.Coupling3D(sc.reduced, sc.boundary), poses, vel, z0)[1].mean())}
    for s in spacings:
        cpl = F.Coupling3D(sc.reduced, sc.boundary, pose_table=plate_table_axes(poses, sc.grid.h, s), precompute="both")
        out[s] = float(run_plate(sc, cpl, poses, vel, z0)[1].mean())
        out[f"bytes_{s}"] = cpl.table_bytes
    return out


def surface_quadrature(shape, spacing):
    """A midpoint rule on the surface of ``shape``: every triangle cut into
    m^2 congruent pieces at most ``spacing`` across, one node at each piece's
    centroid weighted by its area.

    Parameters
    ----------
    shape : Shape3D
    spacing : float
        Largest edge (m) of a piece.

    Returns
    -------
    points : (q, 3) array
        Nodes in the object frame (m).
    normals : (q, 3) array
        Outward unit normals.
    areas : (q,) array
        Weights (m^2); they sum to the surface area.
    """
    spacing = real(spacing, "spacing")
    if not spacing > 0:
        raise ValueError(f"spacing must be > 0, got {spacing}")
    V, T = np.asarray(shape.vertices), np.asarray(shape.triangles)
    P, N, A = [], [], []
    for a, b, c in V[T]:
        e1, e2 = b - a, c - a
        n = np.cross(e1, e2)
        area = 0.5 * np.linalg.norm(n)
        m = max(1, int(np.ceil(max(np.linalg.norm(e1), np.linalg.norm(e2), np.linalg.norm(c - b)) / spacing)))
        i, j = np.meshgrid(np.arange(m), np.arange(m), indexing="ij")
        up = i + j <= m - 1  # pieces pointing like the triangle, then the m(m-1)/2 turned ones
        down = i + j <= m - 2
        s = np.r_[i[up] + 1 / 3, i[down] + 2 / 3] / m
        t = np.r_[j[up] + 1 / 3, j[down] + 2 / 3] / m
        P.append(a + s[:, None] * e1 + t[:, None] * e2)
        N.append(np.broadcast_to(n / (2 * area), (len(s), 3)))
        A.append(np.full(len(s), area / m ** 2))
    return np.vstack(P), np.vstack(N), np.concatenate(A)


def plate_smoke_entering(sc: PlateScene, run=0, boundary=True, spacing=None) -> float:
    """Smoke carried across the plate's surface into it per step ("fluid will
    traverse the boundary", thesis sec. 3.7.1), in cells' worth of smoke, from
    unit smoke everywhere outside the plate: the 2D scene's metric
    (``fluid_boundaries.smoke_entering``) on a surface.

    The plate follows training path ``run``; the flow relative to it is
    u' - v with boundary handling (on-the-fly coupling) or B z - v without
    (v: the rigid velocity; the state then evolves without the coupling). The
    smoke entering per step is the inflow through the surface,

        dt sum_k max(0, -(u - v)(x_k) . n_k) dA_k,

    by a midpoint rule (``surface_quadrature``) with pieces ``spacing`` across
    (default h/8: four times finer than the boundary basis' samples, so the
    residual between them counts).

    Parameters
    ----------
    sc : PlateScene
    run : int
        Training path followed.
    boundary : bool
        With the boundary fields (u') or without (B z alone).
    spacing : float, optional
        Quadrature piece size (m).

    Returns
    -------
    float
        Mean smoke entering per step, in cells (divided by h^3).
    """
    grid, red = sc.grid, sc.reduced
    poses, vel = sc.paths[run]
    z = red.basis.T @ sc.runs[run].velocities[0]
    scene = F.ReducedScene3D(red, [F.Coupling3D(red, sc.boundary)])
    plain = F.ReducedScene3D(red, [])
    pts, nrm, area = surface_quadrature(sc.plate, grid.h / 8 if spacing is None else spacing)
    jet = red.basis.T @ sc.updraft
    none = np.zeros((0, 6))
    total = 0.0
    for t in range(len(poses)):
        P, V = poses[t:t + 1], vel[t:t + 1]
        zn, coeffs, zf = scene.step(z, jet, sc.dt, P, V, return_flow=True)
        R = F.Obstacle3D(sc.plate, P[0, :3], rotation=P[0, 3:]).rotation
        X, N = pts @ R.T + P[0, :3], nrm @ R.T
        u = (scene.velocity_at(X, zf, coeffs, P) if boundary
             else plain.velocity_at(X, zf, np.zeros((0, 0)), none))
        rel = u - F.rigid_velocity3d(P[0], V[0], X)
        total += sc.dt * np.sum(area * np.maximum(-np.sum(rel * N, axis=1), 0.0))
        z = zn if boundary else red.step(z, jet, sc.dt)
    return total / len(poses) / grid.h ** 3


def _plate_rollout(sc: PlateScene, red, bb, run, observe, force=None, u0=None):
    """The reduced scene with the plate coupled on the fly along training path
    ``run`` from the full run's first state (or ``u0``) under the updraft (or
    the face field ``force``); observe(t, u') per step."""
    poses, vel = sc.paths[run]
    scene = F.ReducedScene3D(red, [F.Coupling3D(red, bb)])
    z = red.basis.T @ (sc.runs[run].velocities[0] if u0 is None else u0)
    jet = red.basis.T @ (sc.updraft if force is None else force)
    for t in range(len(poses)):
        z, c, zf = scene.step(z, jet, sc.dt, poses[t:t + 1], vel[t:t + 1], return_flow=True)
        observe(t, scene.velocity_field(zf, c, poses[t:t + 1]))


def _plate_boundary(red, plate, poses, p, samples="surface", margin=None, threads=0):
    """An object's boundary basis for a reduced fluid: ``samples`` as
    ``BoundaryBasis3D.build``, local box the shape's extent plus ``margin``
    cells (None: the build's default)."""
    import warnings
    kw = {"threads": threads} if samples == "surface" else {"samples": samples, "threads": threads}
    if margin is not None:
        ext = np.abs(np.asarray(plate.vertices)).max(axis=0)
        kw["local_size"] = ext + real(margin, "margin") * red.grid.h
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return F.BoundaryBasis3D.build(red, plate, poses, p, **kw)


def plate_viscosity(sc: PlateScene, run=0, candidates=None) -> tuple[float, np.ndarray]:
    """The reduced viscosity that matches the full solver's numerical dissipation.

    The full training run loses energy to semi-Lagrangian smearing that a
    reduced model at nu = 0 keeps (its advection preserves energy exactly),
    so compared at nu = 0 a larger basis only carries the excess energy
    further. The fit runs the reduced scene (all r fields, the plate coupled
    on the fly) along training path ``run`` for each candidate nu and keeps
    the one whose kinetic energy |u'|^2 per step best matches the full run's
    (least squares on the logarithm).

    Parameters
    ----------
    sc : PlateScene
    run : int
        Training path (its full run is the target).
    candidates : (k,) array, optional
        Viscosities to try (m^2/s); default 0 and a log grid 1e-4 .. 1.

    Returns
    -------
    nu : float
        The best viscosity (m^2/s).
    errors : (k,) array
        Squared log-energy mismatch per candidate.
    """
    full = np.sum(sc.runs[run].velocities[1:] ** 2, axis=1)
    cand = np.r_[0.0, np.geomspace(1e-4, 1.0, 17)] if candidates is None else np.asarray(candidates, float)
    errs = np.zeros(len(cand))
    for k, nu in enumerate(cand):
        red = F.ReducedFluid(sc.grid, sc.reduced.basis, float(nu))  # the boundary basis depends on B only
        E = np.zeros(len(full))

        def energy(t, u, E=E):
            E[t] = u @ u

        _plate_rollout(sc, red, sc.boundary, run, energy)
        ok = (E > 0) & (full > 0)
        errs[k] = np.sum((np.log(E[ok]) - np.log(full[ok])) ** 2) if ok.all() else np.inf
    return float(cand[int(np.argmin(errs))]), errs


def plate_basis_error(sc: PlateScene, rs=(4, 8, 16), run=1, viscosity=None, samples="faces+surface", margin=8) -> dict:
    """Fig. 3.10a in 3D: the reduced scene's error against the full solver by basis size.

    For each r the reduced fluid keeps the first r fields, gets its own
    boundary basis (same training poses and p) and runs along training path
    ``run`` with the plate coupled on the fly, from the full run's first
    state; the error of a step is |u' - u*| / |u*| on the grid's faces.

    Parameters
    ----------
    sc : PlateScene
    rs : sequence of int
        Basis sizes (each <= the scene's r).
    run : int
        Training path (its full run is the reference u*). Path 1 sways at
        a height on the grid's lattice, where the local grid's cells line up
        with the world's at rest.
    viscosity : "matched", float or None
        nu of the reduced runs (m^2/s): "matched" fits the full solver's
        numerical dissipation (``plate_viscosity``, all r fields); None: the
        scene's own.
    samples : {"faces+surface", "faces", "surface"}
        Where the boundary fields read normal speeds (``BoundaryBasis3D.build``,
        ``plate_scene``).
    margin : float or None
        The local box reaches this many cells beyond the plate (None: the
        default 4).

    Returns
    -------
    dict
        r -> mean relative error over the run.

    Notes
    -----
    With ``samples="surface"`` (the surface sampled h apart) the error does
    not fall with r: at 16^3 0.69 / 0.62 / 0.69 for r = 4, 8, 16 on path 0
    although the projection error (``plate_projection_error``) falls 0.25 /
    0.07 / 0.008. The floor comes from the boundary handling, not the basis
    (the reduced fluid alone, without the plate, is just as far from a run
    with it: the plate's own flow dominates) nor viscosity: the full solver
    closes every face touching a solid cell and fills the solid with the
    rigid velocity, while surface-sampled min-norm fields leave the plate's
    inside still and spread its edge over three rows of faces; on the first
    step from rest |u' - u*| / |u*| is 1.02 whatever r. With
    ``samples="faces"`` the fields meet the full solver's condition on those
    faces: first-step error 0.44 (path 0) and 0.24 (path 1), and on path 1
    with an 8-cell margin 0.377 / 0.130 / 0.127 / 0.120 / 0.123 for r = 4 /
    6 / 8 / 12 / 16 (benchmarks/RESULTS.md); what remains is the local box
    (no flow through its outer faces; the world walls unseen) and the
    sub-cell offset of the swaying plate against the world grid.
    """
    if isinstance(viscosity, str):
        if viscosity != "matched":
            raise ValueError(f'viscosity must be "matched", a number or None, got {viscosity!r}')
        nu = plate_viscosity(sc, run)[0]
    else:
        nu = sc.viscosity if viscosity is None else real(viscosity, "viscosity")
    out = {}
    for r, e in _plate_reduced_curves(sc, rs, run, nu, samples, margin).items():
        out[r] = float(e.mean())
    return out


def _plate_reduced_curves(sc, rs, run, nu, samples, margin, force=None, u0=None, reference=None):
    """Per-step |u' - u*| / |u*| of the reduced scene with the first r fields, for each r."""
    full = sc.runs[run].velocities if reference is None else reference
    out = {}
    for r in rs:
        red = F.ReducedFluid(sc.grid, np.ascontiguousarray(sc.reduced.basis[:, :integer(r, "rs")]), nu)
        bb = _plate_boundary(red, sc.plate, sc.train_poses(), sc.boundary.p, samples, margin)
        errs = np.zeros(len(sc.paths[run][0]))

        def error(t, u, errs=errs):
            errs[t] = np.linalg.norm(u - full[t + 1]) / max(np.linalg.norm(full[t + 1]), 1e-300)

        _plate_rollout(sc, red, bb, run, error, force=force, u0=u0)
        out[int(r)] = errs
    return out


def _resample3d(coarse, u, fine) -> np.ndarray:
    """A MAC field u of grid ``coarse`` sampled (trilinearly) at the faces of grid ``fine`` (same domain)."""
    pos, axis = _face_positions3d(fine)
    v = np.asarray(coarse.velocity_at(np.ascontiguousarray(u), pos))
    return v[np.arange(len(pos)), axis]


def _face_positions3d(g):
    """Face centres (N, 3) of a MACGrid3D in the velocity vector's order, and each face's axis (N,)."""
    h, out, axes = g.h, [], []
    for a, shape in enumerate([(g.nz, g.ny, g.nx + 1), (g.nz, g.ny + 1, g.nx), (g.nz + 1, g.ny, g.nx)]):
        k, j, i = np.meshgrid(*[np.arange(m) for m in shape], indexing="ij")
        x = np.stack([(i + 0.5) * h, (j + 0.5) * h, (k + 0.5) * h], axis=-1).reshape(-1, 3)
        x[:, a] -= 0.5 * h
        out.append(x)
        axes.append(np.full(len(x), a))
    return np.vstack(out), np.concatenate(axes)


def plate_error_curves(sc: PlateScene, rs=(4, 8, 16), sizes=None, run=1, viscosity=None, samples="faces+surface",
                       margin=8) -> dict:
    """Fig. 3.10a in 3D: error per step against the full run, of reduced runs by basis size and of coarser full runs.

    The 2D scene's metric (``fluid_boundaries.error_curves``): |u - u*| /
    |u*| against training run ``run`` for the reduced scene with the first r
    PCA fields (``plate_basis_error``'s runs), and for full runs of the same
    path and updraft at coarser resolutions, their fields sampled
    trilinearly at the reference grid's faces.

    Parameters
    ----------
    sc : PlateScene
    rs : sequence of int
        Basis sizes.
    sizes : sequence of int, optional
        Cells per side of the coarser full runs; default 1/2, 3/4 and 7/8 of
        the scene's (the paper's 64, 96, 112 of 128).
    run : int
        The reference training run.
    viscosity : float, optional
        nu of the reduced runs (m^2/s); default the scene's.
    samples, margin
        The boundary bases' samples and local-box margin (``plate_basis_error``).

    Returns
    -------
    dict
        ``reduced`` {r: (T,) array}, ``downsampled`` {n: (T,) array} and
        ``mean`` {("r", r) or ("n", n): mean error}: the layout of
        ``fluid_boundaries.error_curves`` (``fluid_boundaries.plot_error_curves`` draws it).
    """
    import warnings
    nu = sc.viscosity if viscosity is None else real(viscosity, "viscosity")
    out = {"reduced": _plate_reduced_curves(sc, rs, run, nu, samples, margin), "downsampled": {}, "mean": {}}
    for r, e in out["reduced"].items():
        out["mean"][("r", r)] = float(e.mean())
    n, ref = sc.grid.nx, sc.runs[run].velocities
    poses, vel = sc.paths[run]
    T = len(poses)
    sizes = tuple(int(round(n * f)) for f in (0.5, 0.75, 0.875)) if sizes is None else sizes
    for m in sizes:
        m = integer(m, "sizes")
        gc = F.MACGrid3D(m, m, m)
        jet = gc.wind(*sc.jet_args) if sc.jet_args else _resample3d(sc.grid, sc.updraft, gc)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the plate is thinner than a coarse cell
            low = F.full_run3d(gc, T, sc.dt, force=jet, obstacles=_obstacles(sc.plate, poses, vel),
                               viscosity=sc.viscosity, u0=_resample3d(sc.grid, ref[0], gc))
        e = np.array([np.linalg.norm(_resample3d(gc, low.velocities[t + 1], sc.grid) - ref[t + 1])
                      / max(np.linalg.norm(ref[t + 1]), 1e-300) for t in range(T)])
        out["downsampled"][m], out["mean"][("n", m)] = e, float(e.mean())
    return out


def plate_wind_angles(n=16, r=16, p=24, angles=range(0, 91, 15), train_angles=(0, 90), steps=16, dt=0.02,
                      magnitude=8.0, height=0.5, amplitude=0.03, viscosity=0.0, samples="faces+surface", margin=8,
                      progress=None) -> dict:
    """Fig. 3.10b / 3.11a in 3D: the plate scene trained with gusts at some angles, tested at others.

    The flat plate sways along x at ``height`` (the scene's path 1); a
    Gaussian gust (width 0.25 m) aimed at the plate's centre blows from
    ``angle`` degrees off the vertical towards +x (0: the updraft from below,
    90: sideways). The full runs at the training angles give the PCA basis
    (r fields) and, with the path's poses, the boundary basis; each test
    angle's reduced run (coupling on the fly) is compared with the full run
    at that angle: |u' - u*| / |u*| per step.

    Parameters
    ----------
    n : int
        Cells per side.
    r : int
        Basis size.
    p : int
        Boundary fields wanted.
    angles : sequence of float
        Test gust angles (degrees).
    train_angles : sequence of float
        Training gust angles (degrees).
    steps : int
        Steps per run.
    dt : float
        Step (s).
    magnitude : float
        Peak gust acceleration (m/s^2).
    height : float
        The plate's height (m).
    amplitude : float
        Its sway along x (m).
    viscosity : float
        nu of the full and reduced runs (m^2/s).
    samples, margin
        The boundary basis' samples and local-box margin (``plate_basis_error``).
    progress : None, bool or callable
        Progress of each full run.

    Returns
    -------
    dict
        ``angles`` (k,), ``error`` (k,) mean relative error, ``curves`` (k,
        T) per step, ``train_angles``: the layout of
        ``fluid_boundaries.wind_angle_error`` (``fluid_boundaries.plot_wind_angle_error``
        draws it).
    """
    grid = F.MACGrid3D(integer(n, "n"), n, n)
    h = grid.h
    plate = F.plate(0.4, 0.4, 2.0 * h)
    centre = np.array([0.5, real(height, "height"), 0.5])
    poses, vel = plate_path(centre, integer(steps, "steps") + 1, dt, amplitude, axis=0)

    def gust(angle):
        a = np.deg2rad(angle)
        d = np.array([np.sin(a), np.cos(a), 0.0])
        return grid.wind(centre - 0.3 * d, d, magnitude, 0.25)

    def full(angle, pca=None):
        return F.full_run3d(grid, steps, dt, force=gust(angle), obstacles=_obstacles(plate, poses, vel),
                            viscosity=viscosity, pca=pca, progress=progress)

    pca = IncrementalPCA(grid.n_faces, 2 * integer(r, "r"))
    runs = {float(a): full(a, pca) for a in train_angles}
    red = F.ReducedFluid(grid, F.velocity_basis(grid, pca, r), viscosity)
    sc = PlateScene(grid, red, plate, _plate_boundary(red, plate, poses[:steps:4], p, samples, margin), dt,
                    [(poses[:steps], vel[:steps])], list(runs.values()), gust(train_angles[0]), viscosity,
                    samples=samples, margin=margin)
    angles = np.asarray(list(angles), float)
    curves = []
    for a in angles:
        truth = runs.get(float(a)) or full(a)
        curves.append(_plate_reduced_curves(sc, [r], 0, viscosity, samples, margin, force=gust(a),
                                            u0=truth.velocities[0], reference=truth.velocities)[r])
    curves = np.array(curves)
    return dict(angles=angles, error=curves.mean(axis=1), curves=curves, train_angles=[float(a) for a in train_angles])


def plate_projection_error(sc: PlateScene, rs=(4, 8, 16), run=0) -> dict:
    """The best error a basis of r fields allows: |u* - B B' u*| / |u*| of the
    full run's states, averaged over the steps (the floor under
    ``plate_basis_error``).

    Parameters
    ----------
    sc : PlateScene
    rs : sequence of int
        Basis sizes.
    run : int
        Training path.

    Returns
    -------
    dict
        r -> mean relative projection error.
    """
    U = sc.runs[run].velocities[1:]
    nrm = np.maximum(np.linalg.norm(U, axis=1), 1e-300)
    out = {}
    for r in rs:
        B = sc.reduced.basis[:, :r]
        out[r] = float(np.mean(np.linalg.norm(U - (U @ B) @ B.T, axis=1) / nrm))
    return out


def plate_untrained(sc: PlateScene, run=0, aperture=(0.16, 0.16)) -> dict:
    """On-the-fly removal for the trained plate and for a plate with an aperture.

    The training never saw the aperture: its boundary basis comes from the
    same reduced basis and training poses.

    Parameters
    ----------
    sc : PlateScene
    run : int
        Path followed.
    aperture : (2,) array
        Sides of the hole (m).

    Returns
    -------
    dict
        Mean removal per step, "plate" and "aperture".
    """
    poses, vel = sc.paths[run]
    z0 = sc.reduced.basis.T @ sc.runs[run].velocities[0]
    out = {"plate": float(run_plate(sc, F.Coupling3D(sc.reduced, sc.boundary), poses, vel, z0)[1].mean())}
    side = 2.0 * np.abs(np.asarray(sc.plate.vertices))[:, :2].max(axis=0)  # the scene's plate: width (x), height (y)
    holed = F.plate(side[0], side[1], 2.0 * sc.grid.h, aperture=aperture)
    bb = _plate_boundary(sc.reduced, holed, sc.train_poses(), sc.boundary.p, sc.samples, sc.margin)
    out["aperture"] = float(run_plate(sc, F.Coupling3D(sc.reduced, bb), poses, vel, z0)[1].mean())
    return out


def plate_timings(sc: PlateScene, coupling=None, particles=4000, steps=20, run=0) -> dict:
    """Milliseconds per reduced step of Table 3.2's parts.

    Each part is the best of ``steps`` timed calls at one state (the least
    disturbed on a shared machine): "vels" (advect, diffuse, force: the step
    without objects), "bound" (the step with the plate minus "vels":
    feedforward, feedback and their application), "media" (``particles``
    tracers through u'), and one full step of the training solver ("full").

    Parameters
    ----------
    sc : PlateScene
    coupling : Coupling3D, optional
        Default: on the fly.
    particles : int
        Tracers of the media step.
    steps : int
        Timed calls per part.
    run : int
        Path whose middle state is timed.

    Returns
    -------
    dict
        "vels", "bound", "media", "total", "full" (ms) and "speedup".
    """
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
    """The car's four paths along the road (the floor, y = 0).

    Three straight lanes along x at z = 0.3, 0.5 and 0.7 of the depth, and
    one diagonal crossing, each from 15 % to 85 % of the width.

    Parameters
    ----------
    grid : MACGrid3D
    steps : int
        Segments of each path.

    Returns
    -------
    list of 4 (steps+1, 3) arrays
        Positions of the car's centre (m).
    """
    W, D = grid.nx * grid.h, grid.nz * grid.h
    y = 2.0 * grid.h  # the car's centre: it stands half a cell above the floor
    s = np.linspace(0.0, 1.0, steps + 1)[:, None]
    x = 0.15 * W + 0.7 * W * s
    lanes = [np.hstack([x, np.full_like(s, y), np.full_like(s, z * D)]) for z in (0.3, 0.5, 0.7)]
    diag = np.hstack([x, np.full_like(s, y), (0.3 + 0.4 * s) * D])
    return lanes + [diag]


def car_shape(grid) -> F.Shape3D:
    """The car: a box 4 x 3 x 3 cells, its length along its heading x.

    Parameters
    ----------
    grid : MACGrid3D

    Returns
    -------
    Shape3D
    """
    return F.Shape3D.box(4 * grid.h, 3 * grid.h, 3 * grid.h)


def car_obstacle(shape, path, s, speed) -> F.Obstacle3D:
    """The car on a path, heading along it.

    Parameters
    ----------
    shape : Shape3D
        The car.
    path : (n+1, 3) array
        The path (m).
    s : float
        Path parameter in [0, 1] (linear in the samples).
    speed : float
        ds/dt (1/s): the car's velocity is d position/ds times speed.

    Returns
    -------
    Obstacle3D
    """
    n = len(path) - 1
    t = np.clip(s, 0.0, 1.0) * n
    i = min(int(t), n - 1)
    a = t - i
    pos = (1 - a) * path[i] + a * path[i + 1]
    tangent = (path[i + 1] - path[i]) * n  # d position / ds
    heading = np.arctan2(-tangent[2], tangent[0])  # yaw about +y so that local x points along the path
    return F.Obstacle3D(shape, pos, rotation=(0.0, heading, 0.0), velocity=tangent * speed)


def car_pose(path, s) -> np.ndarray:
    """The car's pose on a path.

    Parameters
    ----------
    path : (n+1, 3) array
        The path (m).
    s : float
        Path parameter in [0, 1].

    Returns
    -------
    (6,) array
        Position (m) and the yaw (rotation vector about +y, rad) heading it along the path.
    """
    n = len(path) - 1
    t = np.clip(s, 0.0, 1.0) * n
    i = min(int(t), n - 1)
    a = t - i
    tangent = path[i + 1] - path[i]
    return np.r_[(1 - a) * path[i] + a * path[i + 1], 0.0, np.arctan2(-tangent[2], tangent[0]), 0.0]


@dataclass
class LeavesScene:
    """The trained Leaves scene (``leaves_scene``).

    Parameters
    ----------
    grid : MACGrid3D
    fluid : ReducedFluid3D
    car : Shape3D
    paths : list of (n+1, 3) arrays
        The car's four paths (m).
    boundary : BoundaryBasis3D
        The car's boundary basis.
    couplings : list of Coupling3D
        One per path, feedforward and feedback tabulated at its nodes.
    dt : float
        Time step (s).
    steps : int
        Steps of a crossing in training.
    precompute_seconds : float
        Training time (s).
    energy : (r,) array
        Energy fraction per basis field.
    """

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
        """Basis size."""
        return self.fluid.r

    @property
    def table_bytes(self) -> int:
        """Bytes of the four paths' tables."""
        return int(sum(c.table_bytes for c in self.couplings))

    def scene(self, path) -> F.ReducedScene3D:
        """The reduced scene of the car on one path.

        Parameters
        ----------
        path : int
            Which of the four paths.

        Returns
        -------
        ReducedScene3D
        """
        return F.ReducedScene3D(self.fluid, [self.couplings[path]])


def leaves_scene(shape=(128, 32, 64), r=32, p=16, steps=48, dt=0.02, viscosity=0.0, gust=4.0, threads=0,
                 progress=None, samples="faces", margin=None) -> LeavesScene:
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
    threads : int
        Threads of the boundary basis and the tables (<= 0: all).
    progress : None, bool or callable
        Progress of the full runs.
    samples : {"faces", "surface"}
        Where the car's boundary fields read normal speeds
        (``BoundaryBasis3D.build``): "faces" holds them to the full solver's
        condition on the faces touching the car's cells.
    margin : float or None
        Cells between the car's extent and its local box (None: the build's
        default, radius + 4h).

    Returns
    -------
    LeavesScene
    """
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
    bb = _plate_boundary(fluid, car, np.vstack([n[::2] for n in nodes]), p, samples, margin, threads)
    couplings = [F.Coupling3D(fluid, bb, path=n, precompute="both", threads=threads) for n in nodes]
    return LeavesScene(grid, fluid, car, paths, bb, couplings, dt, steps, time.perf_counter() - t0,
                       pca.basis(r).energy)


@dataclass
class LeavesRun:
    """A reduced Leaves run (``run_leaves``).

    Parameters
    ----------
    z : (T+1, r) array
        Reduced states.
    leaves : (T+1, P, 3) array
        Leaf positions (m) (only the last, (1, P, 3), without recording).
    car : (T+1, 3) array
        Car positions (m).
    pushed : (T,) array
        Leaves pushed out of the car per step.
    removed : (T,) array
        Surface energy removed per step (zero unless measured).
    ms_velocities, ms_boundary, ms_media : (T,) arrays
        Per-step cost (ms): advect and diffuse; table lookups, feedforward
        and feedback; the leaves.
    """

    z: np.ndarray
    leaves: np.ndarray
    car: np.ndarray
    pushed: np.ndarray
    removed: np.ndarray
    ms_velocities: np.ndarray
    ms_boundary: np.ndarray
    ms_media: np.ndarray

    def split(self) -> dict:
        """Median cost per step of each part.

        Returns
        -------
        dict
            "vels", "bound", "media" and "total" (ms).
        """
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
        The trained scene.
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
    seed : int
        Seed of the leaves' scatter.
    record_leaves : bool
        Keep every step's leaves (else only the last).
    removal : bool
        Also measure the surface energy removed per step (costs a surface query).

    Returns
    -------
    LeavesRun
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


def leaves_error(scene, path=0, viscosity=0.0, progress=None) -> dict:
    """The reduced Leaves scene against the full solver: the car crossing
    ``path`` once at its training speed from still air (no gust), both runs
    fed the same poses step by step; per step |u' - u*| / |u*| on the world
    faces, u' the reduced field with the car's boundary fields (eq. 3.9).

    Parameters
    ----------
    scene : LeavesScene
        The trained scene.
    path : int
        Which of the four paths.
    viscosity : float
        Viscosity of the full run (m^2/s): the training runs' (the reduced
        fluid keeps its own).
    progress : None, bool or callable
        Progress of the full run.

    Returns
    -------
    dict
        "error": (T,) per-step relative error, "mean": its mean, "full_seconds"
        and "reduced_seconds": the runs' wall times (s).
    """
    T, dt, P = scene.steps, scene.dt, scene.paths[path]
    speed = 1.0 / (T * dt)
    obstacles = [car_obstacle(scene.car, P, i / T, speed) for i in range(T)]
    t0 = time.perf_counter()
    full = F.full_run3d(scene.grid, T, dt, obstacles=lambda i: [obstacles[i]], viscosity=viscosity,
                        progress=progress)
    t1 = time.perf_counter()
    sc = scene.scene(path)
    data = sc.create_data()
    z, zero = np.zeros(scene.r), np.zeros(scene.r)
    err = np.zeros(T)
    for i in range(T):
        pose = car_pose(P, i / T)[None]
        vel = np.r_[obstacles[i].velocity, 0.0, 0.0, 0.0][None]
        z, c, zf = sc.step(z, zero, dt, pose, vel, data, return_flow=True)
        u = sc.velocity_field(zf, c, pose)
        err[i] = np.linalg.norm(u - full.velocities[i + 1]) / max(np.linalg.norm(full.velocities[i + 1]), 1e-300)
    return {"error": err, "mean": float(err.mean()), "full_seconds": t1 - t0,
            "reduced_seconds": time.perf_counter() - t1}


# --- plots ----------------------------------------------------------------------------------------


def plot_slice(grid, q, k=None, ax=None, cmap="Greys", title=None):
    """Image of a cell field on an x-y slice.

    Parameters
    ----------
    grid : MACGrid3D
    q : (n_cells,) array
        Cell values (e.g. smoke density).
    k : int, optional
        The slice's z index (default the middle).
    ax : matplotlib Axes, optional
    cmap : str
        Colour map.
    title : str, optional

    Returns
    -------
    matplotlib Axes
        x (m) to the right, y (m) up.
    """
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
    """Speed of a face field on an x-y slice, with arrows and the plate's section.

    Parameters
    ----------
    sc : PlateScene
    u : (N,) array
        Face velocities (m/s).
    pose : (6,) array
        The plate's pose.
    ax : matplotlib Axes, optional
    k : int, optional
        The slice's z index (default the plate's).
    title : str, optional

    Returns
    -------
    matplotlib Axes
        Speed |u| (m/s) coloured, x and y in m.
    """
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
    """Top view of the leaves and the car's track.

    Parameters
    ----------
    scene : LeavesScene
    run : LeavesRun
    step : int
        Which recorded step's leaves.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes
        x and z in m.
    """
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
    """Bars of the median per-step cost next to the thesis' Table 3.2 Leaves row.

    Parameters
    ----------
    run : LeavesRun
    ax : matplotlib Axes, optional
    paper : (3,) sequence
        The thesis' vels, bound, media (ms).

    Returns
    -------
    matplotlib Axes
    """
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
