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
from .._validate import integer, real
from ..fluid import ReducedFluid
from . import fluid_forcing

__all__ = ["yin_yang", "fixed_boundary", "match_viscosity", "CShapeScene", "c_shape_path", "c_shape_scene",
           "run_scene", "removal", "smoke_entering", "tracers_entering", "plot_local_field", "plot_smoke",
           "plot_removal", "basis_error", "untrained_shapes", "reduced_scene_run", "error_curves",
           "wind_angle_error", "plot_error_curves", "plot_wind_angle_error", "table_coupling",
           "leaf_with_obstacle"]


def yin_yang(n) -> np.ndarray:
    """(n, n) bool mask of a yin-yang solid on the unit square (Fig. 3.2): one
    half of a disk of radius 0.3 with the two small disks of radius 0.15
    added and removed."""
    n = integer(n, "n")
    c = (np.arange(n) + 0.5) / n
    X, Y = np.meshgrid(c, c)
    half = (X < 0.5) & (np.hypot(X - 0.5, Y - 0.5) < 0.3)
    half |= np.hypot(X - 0.5, Y - 0.65) < 0.15
    half &= ~(np.hypot(X - 0.5, Y - 0.35) < 0.15)
    return half


def _energy(U):
    return np.sum(U * U, axis=1)


def match_viscosity(reduced_basis, grid, run, candidates=None) -> tuple[float, np.ndarray]:
    """The viscosity whose reduced energy decay best matches the full run's
    (its numerical dissipation), fitted on the unforced tail of ``run``.

    Parameters
    ----------
    reduced_basis : (N, r) array
    grid : MACGrid2D
    run : FullRun
        A full run whose last third is unforced.
    candidates : (k,) array, optional
        Viscosities to try (m^2/s); default a log grid 1e-4 .. 1.

    Returns
    -------
    (nu, errors): the best viscosity and the squared log-energy mismatch per candidate.
    """
    B = np.asarray(reduced_basis)
    T = run.velocities.shape[0] - 1
    start = T - T // 3
    full = _energy(run.velocities[start:])
    cand = np.geomspace(1e-4, 1.0, 25) if candidates is None else np.asarray(candidates, float)
    z0 = B.T @ run.velocities[start]
    errs = []
    for nu in cand:
        red = ReducedFluid(grid, B, float(nu))
        Z = red.rollout(z0, np.zeros((T - start, B.shape[1])), run.dt)
        errs.append(np.sum((np.log(_energy(Z) / _energy(Z[:1])) - np.log(full / full[0])) ** 2))
    errs = np.array(errs)
    return float(cand[int(np.argmin(errs))]), errs


def fixed_boundary(n=32, r=16, steps=120, dt=0.01, winds=10, seed=0) -> dict:
    """The "Fixed boundary" scene: a yin-yang solid, a PCA basis of a forced
    full run, energy kept at nu = 0 and the nu matching the full solver.

    Returns
    -------
    dict with grid, basis (N, r), run (FullRun), max_divergence (every
    field, incl. closed faces), energy_drift (max relative change of |z| over
    1000 unforced steps at nu = 0), nu (matched viscosity), nu_errors.
    """
    grid = F.MACGrid2D(n, n, solid=yin_yang(n))
    ws = fluid_forcing.random_winds(grid, winds, 2 * steps // 3, seed=seed)
    run = F.full_run(grid, steps, dt, ws)
    B = F.velocity_basis(grid, run.velocities[1:], r)
    red = ReducedFluid(grid, B, 0.0)
    Z = red.rollout(B.T @ run.velocities[steps // 2], np.zeros((1000, B.shape[1])), dt)
    e = np.linalg.norm(Z, axis=1)
    nu, errs = match_viscosity(B, grid, run)
    return dict(grid=grid, basis=B, run=run, max_divergence=grid.max_divergence(B),
                energy_drift=float(np.abs(e / e[0] - 1).max()), nu=nu, nu_errors=errs)


def c_shape_path(t, seed=0, n_steps=100, margin=0.25):
    """A smooth pose path (T, 3) and velocity path (T, 3) of the c-shape across the unit square."""
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
    """The trained "2D Boundaries" scene: grid, reduced fluid, the c-shape's boundary basis."""

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
        """The poses the boundary bases are trained on: every 4th pose of every training path."""
        return np.vstack([pp[::4] for pp, _ in self.paths])

    def boundary_basis(self, reduced, shape, p, **kw):
        """A boundary basis of ``shape`` for ``reduced`` from the training poses (the scene's local size)."""
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
    """Trains the c-shape scene: full runs with the c-shape moved along
    random paths through random winds (paper: 144 runs at 128^2), a PCA
    basis of r fields and a boundary basis of p fields (plus 3 rigid) from
    the poses of the training paths (``local_size``: the half-size of the
    boundary fields' local grid, m; default the shape's radius + 4h)."""
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
    """F and G tabulated over the poses of training path ``run``, positions
    ``spacing`` voxels apart and angles 0.1 rad apart (Fig. 3.11b)."""
    return F.Coupling(sc.reduced, sc.boundary if boundary is None else boundary,
                      pose_table=_table_axes(sc.paths[run][0], sc.grid.h, real(spacing, "spacing")), precompute="both")


def run_scene(sc: CShapeScene, coupling, poses, vel, z0, w=None):
    """Runs the reduced scene along a path; returns (Z (T+1, r), per-step surface energy removed (T,))."""
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
    """Mean surface energy removed per step along training path ``run``:
    on the fly ("exact") and with tables (feedforward and feedback) spaced
    1, 2, 4 voxels apart (Fig. 3.11b)."""
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
    """Smoke carried across the object's surface into it per step ("fluid will
    traverse the boundary", thesis sec. 3.7.1), in cells' worth of smoke,
    from unit smoke everywhere outside the object.

    The object follows training path ``run``; the flow relative to it is u'
    - v with boundary handling (``coupling``, default on the fly) or B z - v
    without (v: the rigid velocity). The smoke entering per step is the
    inflow through the surface,

        dt sum_k max(0, -(u - v)(x_k) . n_k) ds,

    at surface points ``spacing`` apart (default h/8: four times finer than
    the boundary basis' samples, so the residual between them counts).
    Unit smoke upstream is what an exact transport gives: smoke read from a
    semi-Lagrangian field would be thinned near the surface by the emptied
    object cells that numerical diffusion spreads, and that thinning, not the
    boundary conditions, would then decide the number. Returns the mean over
    the steps divided by h^2.
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


def _perimeter(shape) -> float:
    V = shape.vertices
    return float(np.linalg.norm(np.roll(V, -1, axis=0) - V, axis=1).sum())


def tracers_entering(sc: CShapeScene, run=0, boundary=True, count=400, seed=0) -> float:
    """Fraction of tracer particles (smoke without numerical diffusion),
    seeded in a band around the object, found inside it after a step, per
    step (before being pushed out), advected through u' or B z alone."""
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
    """Quiver of a local field u (N_local,) of a BoundaryBasis, in the object frame, with the shape's outline.

    Returns the Axes."""
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
    """Smoke density (nx ny,) as an image with the objects' outlines at their poses (K, 3). Returns the Axes."""
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
    """Surface energy removed against the table spacing (Fig. 3.11b), from ``removal()``. Returns the Axes."""
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
    """The reduced scene on the first ``r`` PCA fields of ``sc`` (with its own
    boundary basis from the training poses, coupling on the fly) along a
    path under the face forces ``forces`` (T, N); returns u' (T, N) after
    each step, on the world grid. With ``poses`` None, the reduced fluid
    alone (no object): B z."""
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
    """Fig. 3.10a: relative error |u - u*| / |u*| per step against the full
    run ``run`` of the scene (the "ground truth" u*, along the same path under
    the same winds), of

    - the reduced scene with the first r PCA fields, for each r in ``rs``
      (its own boundary basis, coupling on the fly; ``viscosity`` the reduced
      model's, default the scene's);
    - full runs at the coarser resolutions ``sizes`` (cells per side; default
      1/2, 3/4 and 7/8 of the scene's, the paper's 64, 96 and 112 of 128),
      same winds, path and solver, their fields sampled bilinearly at the
      reference grid's faces.

    Returns
    -------
    dict with ``reduced`` {r: (T,) array}, ``downsampled`` {n: (T,) array},
    and ``mean`` {("r", r) or ("n", n): mean error}.
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
    """Fig. 3.10a, reduced runs only: mean relative error |u' - u*| / |u*| of
    the reduced scene (first r PCA fields, its own boundary basis) against
    the full run ``run`` along the same path under the same winds, for each
    r in ``rs`` (``viscosity``: the reduced model's, default the scene's)."""
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
    """Fig. 3.10b / 3.11a: a scene trained with initial winds at
    ``train_angles`` (degrees) only, tested with winds at ``angles``.

    The c-shape moves along one path (``c_shape_path(dt, seed, steps)``);
    each run starts at rest and a broad wind (centred in the domain, width
    0.35, ``magnitude`` m/s^2) blows for its first 5 steps at the run's
    angle. The full runs at the training angles give the PCA basis (r
    fields) and, from the path's poses, the boundary basis (p fields); each
    test angle's reduced run (coupling on the fly, reduced viscosity
    ``reduced_viscosity``, default ``viscosity``) is compared with the full
    run at that angle.

    Returns
    -------
    dict with ``angles`` (k,), ``error`` (k,): mean relative error
    |u' - u*| / |u*| over the run, ``curves`` (k, T) per step,
    ``train_angles`` and ``scene`` (the trained CShapeScene).
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
    """Fig. 3.10a: error per step of the reduced runs (green) and the
    downsampled full runs (blue), from ``error_curves()``. Returns the Axes."""
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
    """Fig. 3.10b: mean relative error against the test wind's angle, the
    training angles marked, from ``wind_angle_error()``. Returns the Axes."""
    ax = _axes(ax)
    ax.plot(wa["angles"], wa["error"], "o-", color="tab:green")
    for a in wa["train_angles"]:
        ax.axvline(a, color="0.6", ls=":", label="trained" if a == wa["train_angles"][0] else None)
    ax.legend(fontsize="small")
    ax.set_xlabel("wind angle (degrees)")
    ax.set_ylabel("mean relative error |u - u*| / |u*|")
    return ax


def untrained_shapes(sc: CShapeScene, run=0, p=None) -> dict:
    """Removal (on the fly) for shapes the training runs never saw (a disk
    and a box, as in the thesis' 2D Boundaries scene): their boundary bases
    come from the same reduced basis and training poses."""
    poses, vel = sc.paths[run]
    z0 = sc.reduced.basis.T @ sc.training_runs[run].velocities[0]
    out = {}
    for name, shape in (("disk", F.disk(0.08, 24)), ("box", F.box(0.16, 0.08))):
        bb = sc.boundary_basis(sc.reduced, shape, sc.boundary.p if p is None else p, surface_spacing=sc.grid.h)
        _, rem = run_scene(sc, F.Coupling(sc.reduced, bb), poses, vel, z0)
        out[name] = float(rem.mean())
    return out


def leaf_with_obstacle(scn, shape=None, pose=(0.42, 0.33, 0.0), p=24, noise=20.0, seed=0) -> dict:
    """The leaf of ``reduced_fluid_paths`` (Barbic & Popovic's S path) with a
    still obstacle in the flow: ``FluidParticles`` on a ``ReducedScene``,
    whose particle velocities and Jacobian include the boundary fields, so the
    time-varying LQR is computed about the leaf's reference with the object
    present. The boundary basis is trained at poses jittered around ``pose``.

    Parameters
    ----------
    scn : reduced_fluid_paths.FluidScenario
    shape : Shape2D, optional
        Default a box 0.1 x 0.06 m.
    pose : (3,) array
        The object's (x, y, theta) (m, m, rad), fixed.
    p : int
        Boundary fields (plus 3 rigid).
    noise : float
        Amplitude of the Perlin disturbance on the reduced coordinates.

    Returns
    -------
    dict with ``open`` and ``lqr`` (SimulationResult), ``error_open``,
    ``error_lqr`` (T+1, P) distances to the reference path (m), ``inside``:
    the number of recorded particle positions inside the object, and
    ``model`` (the FluidParticles on the scene).
    """
    from .. import lqr, models, sim
    from .reduced_fluid_paths import PerlinForce, path_error
    shape = F.box(0.1, 0.06) if shape is None else shape
    pose = np.asarray(pose, float)
    rng = np.random.default_rng(seed)
    train = pose + rng.uniform(-1, 1, (24, 3)) * np.array([2 * scn.grid.h, 2 * scn.grid.h, 0.1])
    bb = _boundary_basis(scn.fluid, shape, train, p, surface_spacing=scn.grid.h)
    scene = F.ReducedScene(scn.fluid, [F.Coupling(scn.fluid, bb)])
    model = F.FluidParticles(scene, scn.particles, poses=pose[None], velocities=np.zeros((1, 3)))
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
