"""Obstacles in the 2D fluid (Treuille thesis sec. 3.2, 3.5): fixed solid
masks, moving obstacles in the full solver, boundary bases, coupling
operators and the reduced scene."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import directable as dr
from directable import fluid as F
from directable.experiments import fluid_forcing

from test_fluid import np_advection, np_divergence

NX = 32
DT = 0.01


def yin_yang(n):
    """(n, n) bool mask of a yin-yang: a disk's upper-left half-moon figure (Fig. 3.2)."""
    c = (np.arange(n) + 0.5) / n
    X, Y = np.meshgrid(c, c)
    R, r = 0.3, 0.15
    d = np.hypot(X - 0.5, Y - 0.5)
    half = (X < 0.5) & (d < R)
    half |= np.hypot(X - 0.5, Y - 0.5 - r) < r
    half &= ~(np.hypot(X - 0.5, Y - 0.5 + r) < r)
    return half


def closed_faces_of(grid, solid):
    """(N,) bool: faces touching a solid cell or a wall (NumPy)."""
    nx, ny = grid.nx, grid.ny
    s = solid.reshape(ny, nx)
    cx = np.ones((ny, nx + 1), bool)
    cx[:, 1:-1] = s[:, :-1] | s[:, 1:]
    cy = np.ones((ny + 1, nx), bool)
    cy[1:-1, :] = s[:-1, :] | s[1:, :]
    return np.r_[cx.ravel(), cy.ravel()]


# --- shapes -------------------------------------------------------------------------------------

def test_shapes_inside_surface_and_orientation():
    b = F.box(0.2, 0.1)
    assert b.inside(np.array([[0.0, 0.0], [0.09, 0.04], [0.11, 0.0], [0.0, 0.06]])).tolist() == [True, True, False, False]
    pts, nrm = b.surface(0.01)
    assert pts.shape == nrm.shape == (60, 2)
    np.testing.assert_allclose(np.linalg.norm(nrm, axis=1), 1.0)
    # outward: a step along the normal leaves the box, a step against it enters
    assert not b.inside(pts + 1e-3 * nrm).any() and b.inside(pts - 1e-3 * nrm).all()
    d = F.disk(0.1, 64)
    assert d.radius == pytest.approx(0.1) and d.area == pytest.approx(np.pi * 0.01, rel=2e-3)
    c = F.c_shape(0.15, 0.08)
    assert c.inside(np.array([[-0.11, 0.0]]))[0] and not c.inside(np.array([[0.0, 0.0], [0.11, 0.0]])).any()
    assert c.thickness == pytest.approx(0.07, rel=0.05)
    with pytest.warns(UserWarning, match="clockwise"):
        s = F.Shape2D(np.array([[0, 0], [0, 1.0], [1, 1], [1, 0]]))
    assert s.area == pytest.approx(1.0)
    with pytest.raises(ValueError, match="polygon must be simple"):
        F.Shape2D(np.array([[0, 0], [1, 1.0], [1, 0], [0, 1]]))
    with pytest.raises(ValueError, match="polygon"):
        F.Shape2D(np.array([[0, 0], [1, 1.0]]))


# --- 1. fixed solids ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def yy_grid():
    return F.MACGrid2D(NX, NX, solid=yin_yang(NX))


@pytest.fixture(scope="module")
def yy_basis(yy_grid):
    winds = fluid_forcing.random_winds(yy_grid, 8, 80, seed=3)
    run = F.full_run(yy_grid, 80, DT, winds)
    return F.velocity_basis(yy_grid, run.velocities[1:], 12), run


def test_solid_mask_projection_and_closed_faces(yy_grid, rng):
    closed = closed_faces_of(yy_grid, yy_grid.solid.ravel())
    np.testing.assert_array_equal(yy_grid.wall_mask(), closed)
    u = yy_grid.project(rng.standard_normal(yy_grid.n_faces))
    assert np.abs(u[closed]).max() == 0.0
    fluid = ~yy_grid.solid.ravel()
    div = np_divergence(NX, NX, yy_grid.h, u)
    assert np.abs(div[fluid]).max() * yy_grid.h <= 1e-10 * np.abs(u).max()
    with pytest.raises(ValueError, match=r"solid must have shape \(32, 32\)"):
        F.MACGrid2D(NX, NX, solid=np.zeros((3, 3), bool))


def test_yin_yang_basis_skew_and_energy(yy_grid, yy_basis):
    B, run = yy_basis
    closed = yy_grid.wall_mask()
    assert np.abs(B[closed]).max() == 0.0
    assert yy_grid.max_divergence(B) <= 1e-10
    red = dr.ReducedFluid(yy_grid, B, 0.0)
    A = red.advection_tensor()
    assert np.abs(A + A.transpose(0, 2, 1)).max() <= 1e-12 * np.abs(A).max()
    # the full stencil on a basis field is skew (NumPy transcription)
    k = 3
    M = np.stack([np_advection(NX, NX, yy_grid.h, B[:, k], B[:, j]) for j in range(B.shape[1])], axis=1)
    np.testing.assert_allclose(B.T @ M, A[k], atol=1e-10 * np.abs(A[k]).max())
    z = B.T @ run.velocities[40]
    Z = red.rollout(z, np.zeros((1000, B.shape[1])), DT)
    e = np.linalg.norm(Z, axis=1)
    assert np.abs(e / e[0] - 1).max() <= 1e-10


# --- 1. moving obstacles ------------------------------------------------------------------------

def fluid_solid_faces(grid, solid):
    nx, ny = grid.nx, grid.ny
    s = solid.reshape(ny, nx)
    fx = np.zeros((ny, nx + 1), bool)
    fx[:, 1:-1] = s[:, :-1] ^ s[:, 1:]
    fy = np.zeros((ny + 1, nx), bool)
    fy[1:-1, :] = s[:-1, :] ^ s[1:, :]
    return np.r_[fx.ravel(), fy.ravel()]


@pytest.mark.parametrize("solver", ["direct", "pcg"])
def test_moving_disk_boundary_conditions_and_far_field(solver):
    grid = F.MACGrid2D(NX, NX)
    sim = F.FluidSim2D(grid, 0.0, DT, pressure_solver=solver)
    disk = F.disk(0.12)
    vel = np.array([0.5, 0.2, 1.5])
    pose = np.array([0.4, 0.45, 0.0])
    for t in range(10):
        ob = F.Obstacle(disk, pose=pose, velocity=vel)
        sim.step(obstacles=[ob])
        u = sim.velocity
        solid = sim.step_solid.ravel()
        div = np_divergence(NX, NX, grid.h, u)
        assert np.abs(div[~solid]).max() * grid.h <= 1e-10 * np.abs(u).max()
        # every cell is divergence-free: the solid cells hold the rigid field
        assert np.abs(div).max() * grid.h <= 1e-10 * np.abs(u).max()
        faces = fluid_solid_faces(grid, solid)
        X = F.face_positions(grid)[faces]
        isx = np.arange(grid.n_faces)[faces] < grid.n_xfaces
        rig = np.where(isx, vel[0] - vel[2] * (X[:, 1] - pose[1]), vel[1] + vel[2] * (X[:, 0] - pose[0]))
        np.testing.assert_allclose(u[faces], rig, rtol=0, atol=1e-12)
        pose = pose + DT * vel
    if solver == "pcg":
        assert 0 < sim.pcg_iterations and sim.pcg_residual <= 1e-12
    # the far field decays: the speed far from the disk is a small fraction of the speed next to it
    speed = np.linalg.norm(grid.velocity_at(u, np.array([[0.95, 0.95], [pose[0] + 0.15, pose[1]]])), axis=1)
    assert speed[0] < 0.2 * speed[1]


def test_direct_and_pcg_pressure_agree():
    grid = F.MACGrid2D(NX, NX)
    runs = []
    for solver in ("direct", "pcg"):
        sim = F.FluidSim2D(grid, 0.0, DT, pressure_solver=solver)
        sim.step(grid.wind([0.3, 0.5], [1, 0], 5.0, 0.1), obstacles=[F.Obstacle(F.box(0.1, 0.2), (0.6, 0.5, 0.3), (0, 0, 0))])
        runs.append(sim.velocity)
    np.testing.assert_allclose(runs[0], runs[1], atol=1e-9 * np.abs(runs[0]).max())


def test_static_obstacle_leaks_no_smoke():
    grid = F.MACGrid2D(NX, NX)
    wall = F.box(0.25, 1.0)  # from the bottom wall to the top: two chambers
    ob = F.Obstacle(wall, pose=(0.5, 0.5, 0.0))
    sim = F.FluidSim2D(grid, 0.0, DT)
    c = (np.arange(NX) + 0.5) / NX
    X, Y = np.meshgrid(c, c)
    sim.density = (X < 0.3).astype(float).ravel()
    sim.particles = np.array([[0.2, 0.5], [0.3, 0.3]])
    wind = grid.wind([0.2, 0.5], [1, 0], 20.0, 0.15)
    for t in range(100):
        sim.step(wind if t < 30 else None, obstacles=[ob])
    right = (X > 0.625 + grid.h).ravel()
    assert sim.density[right].max() == 0.0
    assert (sim.density[sim.step_solid.ravel()] == 0).all()
    assert (sim.particles[:, 0] < 0.375).all()
    # without the obstacle the same wind carries smoke across
    free = F.FluidSim2D(grid, 0.0, DT)
    free.density = (X < 0.3).astype(float).ravel()
    for t in range(100):
        free.step(wind if t < 30 else None)
    assert free.density[right].max() > 1e-3


def test_obstacle_bad_input():
    grid = F.MACGrid2D(NX, NX)
    sim = F.FluidSim2D(grid, 0.0, DT)
    with pytest.raises(ValueError, match="pose"):
        F.Obstacle(F.disk(0.1), pose=(np.nan, 0.5, 0), velocity=(0, 0, 0))
    with pytest.raises(ValueError, match="velocity"):
        F.Obstacle(F.disk(0.1), pose=(0.5, 0.5, 0), velocity=(0, np.inf, 0))
    with pytest.raises(ValueError, match=r"obstacles\[0\] extends outside the domain"):
        sim.step(obstacles=[F.Obstacle(F.disk(0.1), pose=(0.05, 0.5, 0))])
    with pytest.warns(RuntimeWarning, match="thinner than one cell"):
        sim.step(obstacles=[F.Obstacle(F.box(0.3, 0.01), pose=(0.5, 0.5, 0))])
    with pytest.raises(ValueError, match="pressure_solver"):
        F.FluidSim2D(grid, 0.0, DT, pressure_solver="amg")


# --- 2. boundary basis --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def world():
    grid = F.MACGrid2D(NX, NX)
    winds = fluid_forcing.random_winds(grid, 8, 80, seed=1)
    run = F.full_run(grid, 80, DT, winds)
    B = F.velocity_basis(grid, run.velocities[1:], 10)
    return grid, B, dr.ReducedFluid(grid, B, 0.0), run


def training_poses():
    xs, ys = np.meshgrid(np.linspace(0.4, 0.6, 3), np.linspace(0.4, 0.6, 3))
    return np.stack([xs.ravel(), ys.ravel(), np.zeros(9)], axis=1)


@pytest.fixture(scope="module")
def cshape():
    return F.c_shape(0.12, 0.06, segments=12)


@pytest.fixture(scope="module")
def bbasis(world, cshape):
    return F.BoundaryBasis.build(world[2], cshape, training_poses(), 12)


def np_surface_operator(grid, points, normals):
    """S (q, N) as a dense matrix, by probing velocity_at with unit fields."""
    S = np.zeros((len(points), grid.n_faces))
    for f in range(grid.n_faces):
        e = np.zeros(grid.n_faces)
        e[f] = 1.0
        S[:, f] = np.sum(grid.velocity_at(e, points) * normals, axis=1)
    return S


def test_boundary_basis_eq_3_10_and_surface_speeds(bbasis):
    SB = bbasis.surface_speeds
    np.testing.assert_allclose(SB.T @ SB, np.eye(bbasis.p), atol=1e-10)
    L = bbasis.local_grid
    S = np_surface_operator(L, bbasis.surface_points + bbasis.half_size, bbasis.surface_normals)
    np.testing.assert_allclose(S @ bbasis.fields, SB, atol=1e-10)
    assert np.all(np.diff(bbasis.energy) <= 0) and 0 < bbasis.energy.sum() <= 1 + 1e-12


def np_constraints(bbasis, cshape):
    """K = [D; S] of the least-norm fields over the local grid's inner faces (NumPy/SciPy), the inner faces, the
    outside cells."""
    L, h, hs = bbasis.local_grid, bbasis.local_grid.h, bbasis.half_size
    c = (np.arange(L.nx) + 0.5) * h - hs
    X, Y = np.meshgrid(c, c)
    outside = ~cshape.inside(np.stack([X.ravel(), Y.ravel()], axis=1))
    inner = np.flatnonzero(~L.wall_mask())
    D = np.stack([np_divergence(L.nx, L.ny, h, np.eye(L.n_faces)[f]) for f in inner], axis=1)[outside]
    S = np_surface_operator(L, bbasis.surface_points + hs, bbasis.surface_normals)[:, inner]
    return sp.csr_matrix(np.vstack([D, S])), D.shape[0], inner, outside


def test_boundary_fields_divergence_free_outside_and_least_norm(bbasis, cshape):
    L, h = bbasis.local_grid, bbasis.local_grid.h
    K, n_div, inner, outside = np_constraints(bbasis, cshape)
    allf = np.hstack([bbasis.fields, bbasis.rigid_fields])
    for k in range(allf.shape[1]):
        div = np_divergence(L.nx, L.ny, h, allf[:, k])
        assert np.abs(div[outside]).max() * h <= 1e-10 * np.abs(allf[:, k]).max()
    wall = L.wall_mask()
    assert np.abs(allf[wall]).max() == 0.0
    # independent least-norm solve: SciPy sparse KKT
    n, m = K.shape[1], K.shape[0]
    KKT = sp.bmat([[sp.eye(n), K.T], [K, None]], format="csc")
    S = K[n_div:].toarray()
    targets = np.hstack([bbasis.surface_speeds, S @ allf[inner, bbasis.p:]])
    for k in range(targets.shape[1]):
        rhs = np.r_[np.zeros(n), np.zeros(n_div), targets[:, k]]
        u = spla.spsolve(KKT, rhs)[:n]
        np.testing.assert_allclose(allf[inner, k], u, rtol=0, atol=1e-8 * np.abs(u).max())


def test_rigid_field_surface_speeds(bbasis):
    L, hs = bbasis.local_grid, bbasis.half_size
    P, N = bbasis.surface_points, bbasis.surface_normals
    S = np_surface_operator(L, P + hs, N)
    expect = np.stack([N[:, 0], N[:, 1], -N[:, 0] * P[:, 1] + N[:, 1] * P[:, 0]], axis=1)
    np.testing.assert_allclose(S @ bbasis.rigid_fields, expect, atol=1e-10)


def test_boundary_basis_bad_input(world, cshape):
    red = world[2]
    with pytest.raises(ValueError, match="local_size"):
        F.BoundaryBasis.build(red, cshape, training_poses(), 4, local_size=0.1)
    with pytest.raises(ValueError, match="poses"):
        F.BoundaryBasis.build(red, cshape, np.array([[0.5, np.nan, 0]]), 4)
    with pytest.raises(ValueError, match="reduced"):
        F.BoundaryBasis.build(None, cshape, training_poses(), 4)
    with pytest.warns(UserWarning, match=r"p = 500 exceeds the rank"):
        b = F.BoundaryBasis.build(red, cshape, training_poses()[:1], 500)
    assert b.p == b.rank <= red.r


# --- 3. coupling --------------------------------------------------------------------------------

def world_surface(b, pose):
    c, s = np.cos(pose[2]), np.sin(pose[2])
    Rm = np.array([[c, -s], [s, c]])
    return b.surface_points @ Rm.T + pose[:2], b.surface_normals @ Rm.T, Rm


def test_feedforward_matches_numpy(world, bbasis):
    grid, B, red, _ = world
    cpl = F.Coupling(red, bbasis)
    pose = np.array([0.47, 0.52, 0.4])
    X, Nw, _ = world_surface(bbasis, pose)
    SRB = np.stack([np.sum(grid.velocity_at(B[:, j].copy(), X) * Nw, axis=1) for j in range(B.shape[1])], axis=1)
    np.testing.assert_allclose(cpl.feedforward(pose), -bbasis.surface_speeds.T @ SRB, atol=1e-9)


def test_single_precision_feedforward(world, bbasis):
    # the float32 on-the-fly feedforward (the product in float, rows of S R^-1 B summed in double): ~1e-6 relative
    grid, B, red, run = world
    cpl = F.Coupling(red, bbasis)
    for pose in (np.array([0.47, 0.52, 0.4]), np.array([0.55, 0.45, -1.0])):
        F64, F32 = cpl.feedforward(pose, exact=True), cpl.feedforward_single(pose)
        assert F32.dtype == np.float32 and F32.shape == F64.shape
        assert np.abs(F32 - F64).max() <= 1e-5 * np.abs(F64).max()
        # the boundary coefficients of a flow state, and so what the step removes, agree to the same order
        z = B.T @ run.velocities[40]
        c64, c32 = F64 @ z, F32.astype(float) @ z
        assert np.linalg.norm(c32 - c64) <= 1e-5 * np.linalg.norm(c64)


def test_single_precision_feedforward_into_out(world, bbasis):
    # the per-step form: the pose as three floats, F written into the caller's float32 array (no copy, no result
    # allocated) and that array returned
    _, _, red, _ = world
    cpl = F.Coupling(red, bbasis)
    pose = (0.47, 0.52, 0.4)
    want = cpl.feedforward_single(np.array(pose))
    out = np.full((cpl.p, red.r), np.nan, dtype=np.float32)
    got = cpl.feedforward_single(pose, out=out)
    assert got is out and np.shares_memory(got, out)
    np.testing.assert_array_equal(out, want)
    out[:] = 0.0
    cpl.feedforward_single([0.47, 0.52, 0.4], out)  # a list goes the array way, same values
    np.testing.assert_array_equal(out, want)
    with pytest.raises(TypeError, match=r"out must be a float32 ndarray \(%d, %d\), got float64 array" % (cpl.p, red.r)):
        cpl.feedforward_single(pose, out=np.zeros((cpl.p, red.r)))
    with pytest.raises(ValueError, match="out must be C-contiguous"):
        cpl.feedforward_single(pose, out=np.zeros((red.r, cpl.p), np.float32).T)
    with pytest.raises(ValueError, match=r"out.*\(%d, %d\)" % (cpl.p, red.r)):
        cpl.feedforward_single(pose, out=np.zeros((cpl.p + 1, red.r), np.float32))
    ro = np.zeros((cpl.p, red.r), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="out must be writeable"):
        cpl.feedforward_single(pose, out=ro)
    with pytest.raises(ValueError, match="pose"):
        cpl.feedforward_single((0.47, float("nan"), 0.4), out=out)
    with pytest.raises(ValueError, match="pose"):
        cpl.feedforward_single((0.47, 0.52), out=out)
    with pytest.raises(TypeError, match="pose"):
        cpl.feedforward_single(None, out=out)


def test_feedback_matches_independent_scatter(world, bbasis):
    grid, B, red, _ = world
    cpl = F.Coupling(red, bbasis)
    pose = np.array([0.47, 0.52, 0.4])
    allf = np.hstack([bbasis.fields, bbasis.rigid_fields])
    fp = F.face_positions(grid)
    _, _, Rm = world_surface(bbasis, pose)
    local = (fp - pose[:2]) @ Rm + bbasis.half_size  # Rot^-1 (x - t), in local-grid coordinates
    w = bbasis.local_grid.nx * bbasis.local_grid.h
    keep = np.all((local >= 0) & (local <= w), axis=1) & ~grid.wall_mask()
    isx = np.arange(grid.n_faces) < grid.n_xfaces
    R = np.zeros((grid.n_faces, allf.shape[1]))
    for k in range(allf.shape[1]):
        v = bbasis.local_grid.velocity_at(allf[:, k].copy(), local[keep]) @ Rm.T
        R[keep, k] = np.where(isx[keep], v[:, 0], v[:, 1])
    np.testing.assert_allclose(cpl.feedback(pose), B.T @ R, atol=1e-9)


def test_tables_at_nodes_memory_and_compression(world, bbasis):
    red = world[2]
    table = (np.linspace(0.4, 0.6, 5), np.linspace(0.4, 0.6, 5), np.array([0.0]))
    cpl = F.Coupling(red, bbasis, pose_table=table, precompute="both")
    for pose in ([0.45, 0.55, 0.0], [0.6, 0.4, 0.0]):
        np.testing.assert_allclose(cpl.feedforward(pose), cpl.feedforward(pose, exact=True), atol=1e-10)
        np.testing.assert_allclose(cpl.feedback(pose), cpl.feedback(pose, exact=True), atol=1e-10)
    coarse = F.Coupling(red, bbasis, pose_table=(table[0][::2], table[1][::2], table[2]), precompute="both")
    assert coarse.table_bytes == pytest.approx(cpl.table_bytes * 9 / 25)
    # doubling the spacing of a 2D table cuts memory by 75 %
    t8 = (np.linspace(0.4, 0.6, 8), np.linspace(0.4, 0.6, 8), np.array([0.0]))
    t4 = (t8[0][::2], t8[1][::2], t8[2])
    a, b = (F.Coupling(red, bbasis, pose_table=t, precompute="feedback").table_bytes for t in (t8, t4))
    assert b == pytest.approx(0.25 * a)
    full_rank = F.Coupling(red, bbasis, pose_table=table, precompute="feedback", compress=25)
    np.testing.assert_allclose(full_rank.feedback([0.45, 0.5, 0.0]), cpl.feedback([0.45, 0.5, 0.0]), atol=1e-9)
    small = F.Coupling(red, bbasis, pose_table=table, precompute="feedback", compress=3)
    d = red.r * (bbasis.p + 3)
    assert small.table_bytes == 8 * (3 * d + d + 25 * 3)  # modes, mean, coefficients
    assert F.Coupling(red, bbasis, pose_table=table, precompute="feedback").table_bytes == 8 * 25 * d
    with pytest.raises(ValueError, match="spacing > 0"):
        F.Coupling(red, bbasis, pose_table=(np.array([0.5, 0.5]), table[1], table[2]), precompute="both")
    with pytest.raises(ValueError, match="pose_table is required"):
        F.Coupling(red, bbasis, precompute="both")


def test_removal_at_training_pose_with_full_rank_basis(world, cshape):
    grid, B, red, run = world
    poses = training_poses()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        b = F.BoundaryBasis.build(red, cshape, poses, 10_000)
    scene = F.ReducedScene(red, [F.Coupling(red, b)])
    z = B.T @ run.velocities[50]
    pose = poses[4:5]
    v = np.array([[0.3, -0.1, 0.5]])
    z1, coeffs, zf = scene.step(z, np.zeros(red.r), DT, pose, v, return_flow=True)
    removed = scene.surface_energy_removed(zf, coeffs, pose, v)
    assert removed[0] >= 0.999
    # poses are checked before they are read (an empty list read past its end under the sanitizers)
    for bad in (np.zeros((0, 3)), np.zeros((2, 3))):
        with pytest.raises(ValueError, match="poses"):
            scene.surface_energy_removed(zf, coeffs, bad, v)
    # Fig. 3.7: z_next = z_flow + G [F z_flow; v]
    cpl = F.Coupling(red, b)
    np.testing.assert_allclose(coeffs[0, :b.p], cpl.feedforward(pose[0]) @ zf, atol=1e-12)
    np.testing.assert_allclose(coeffs[0, b.p:], v[0])  # theta = 0: object and world frames agree
    np.testing.assert_allclose(z1, zf + cpl.feedback(pose[0]) @ coeffs[0], atol=1e-12)
    # u' at the surface: the normal speed is the rigid one
    X, Nw, _ = world_surface(b, pose[0])
    un = np.sum(scene.velocity_at(X, zf, coeffs, pose) * Nw, axis=1)
    np.testing.assert_allclose(un, scene.surface_speed(0, zf, coeffs, pose), atol=1e-12)
    # the velocity field on the grid agrees with velocity_at away from the object's box
    u = scene.velocity_field(zf, coeffs, pose)
    far = np.array([[0.05, 0.05], [0.95, 0.9]])
    np.testing.assert_allclose(grid.velocity_at(u, far), scene.velocity_at(far, zf, coeffs, pose), atol=1e-12)


def test_scene_particles_pushed_out(world, bbasis, cshape):
    grid, B, red, run = world
    scene = F.ReducedScene(red, [F.Coupling(red, bbasis)])
    pose = np.array([[0.5, 0.5, 0.0]])
    pts = np.array([[0.5 - 0.09, 0.5], [0.2, 0.2]])  # the first inside the c's back
    z = B.T @ run.velocities[50]
    z1, coeffs = scene.step(z, np.zeros(red.r), DT, pose, np.zeros((1, 3)))
    out = scene.advect_particles(pts, z, coeffs, pose, DT)
    assert not cshape.inside(out - pose[0, :2]).any()
    with pytest.raises(ValueError, match="poses"):
        scene.step(z, np.zeros(red.r), DT, np.array([[0.5, np.nan, 0]]), np.zeros((1, 3)))
    with pytest.raises(ValueError, match="velocities"):
        scene.step(z, np.zeros(red.r), DT, pose, np.zeros((2, 3)))


def test_scene_threads_and_views(world, bbasis):
    """One const scene shared by 4 threads (each with its own data) gives the single-thread results bit for bit;
    the surface samples are read-only views of the basis."""
    from concurrent.futures import ThreadPoolExecutor
    grid, B, red, run = world
    table = (np.linspace(0.4, 0.6, 5), np.linspace(0.4, 0.6, 5), np.array([-0.2, 0.0, 0.2]))
    scene = F.ReducedScene(red, [F.Coupling(red, bbasis, pose_table=table, precompute="both"), F.Coupling(red, bbasis)])
    poses = np.array([[0.45, 0.5, 0.1], [0.2, 0.25, -0.3]])
    vel = np.array([[0.2, 0.0, 0.3], [0.0, -0.1, 0.0]])

    def roll(_):
        z = B.T @ run.velocities[30]
        out = []
        for t in range(20):
            z, c = scene.step(z, np.zeros(red.r), DT, poses + 0.002 * t, vel)
            out.append(z)
        return np.array(out)
    ref = roll(0)
    with ThreadPoolExecutor(4) as ex:
        for res in ex.map(roll, range(4)):
            np.testing.assert_array_equal(res, ref)
    pts = bbasis.surface_points
    assert np.shares_memory(pts, bbasis.surface_points) and not pts.flags.writeable


def test_fluid_particles_on_a_scene_jacobian_and_velocity(world, bbasis, rng):
    from test_fluid import fd_jacobian
    grid, B, red, run = world
    scene = F.ReducedScene(red, [F.Coupling(red, bbasis)])
    poses = np.array([[0.5, 0.5, 0.3]])
    vel = np.array([[0.2, -0.1, 0.4]])
    model = F.FluidParticles(scene, 2, poses=poses, velocities=vel)
    assert model.has_scene
    z = B.T @ run.velocities[40]
    p = np.array([0.5 + 0.15, 0.52, 0.3, 0.3])  # one particle near the object, one far
    x = np.r_[p, z]
    # particle velocities are u' with coefficients [F z; the object's velocity in its own frame]
    c, s = np.cos(0.3), np.sin(0.3)
    v_local = np.array([[c, s], [-s, c]]) @ vel[0, :2]
    coeffs = np.r_[F.Coupling(red, bbasis).feedforward(poses[0]) @ z, v_local, vel[0, 2]][None]
    Fx = model.dynamics(x, 0.0)
    np.testing.assert_allclose(Fx[:4].reshape(2, 2), scene.velocity_at(p.reshape(2, 2), z, coeffs, poses), atol=1e-12)
    J = model.jacobian(x, 0.0)
    Jfd = fd_jacobian(lambda y: model.dynamics(y, 0.0), x, 1e-7)
    np.testing.assert_allclose(J[:4], Jfd[:4], atol=1e-5 * np.abs(Jfd[:4]).max())
    # a step pushes particles out of the object
    x1 = model.step(np.r_[0.5 - 0.09, 0.5, 0.3, 0.3, z], np.zeros(red.r), DT, 0.0)
    assert not bbasis.shape.inside(((x1[:2] - poses[0, :2]) @ np.array([[c, -s], [s, c]]))[None])[0]


def test_single_precision_tables(world, bbasis):
    """float32 tables: half the bytes, the nodes' operators rounded to float, the scene step within float rounding of
    the float64 tables; not with compression."""
    red = world[2]
    table = (np.linspace(0.4, 0.6, 5), np.linspace(0.4, 0.6, 5), np.array([-0.2, 0.0, 0.2]))
    c64 = F.Coupling(red, bbasis, pose_table=table, precompute="both")
    c32 = F.Coupling(red, bbasis, pose_table=table, precompute="both", table_dtype="float32")
    assert c32.table_dtype == "float32" and c64.table_dtype == "float64"
    assert c32.table_bytes * 2 == c64.table_bytes
    node = [0.45, 0.55, 0.2]
    for op in ("feedforward", "feedback"):
        exact = getattr(c64, op)(node, exact=True)
        np.testing.assert_allclose(getattr(c32, op)(node), exact.astype(np.float32), rtol=0,
                                   atol=1e-12 * np.abs(exact).max())  # the node's operator, rounded to float
        between = [0.47, 0.52, 0.1]
        np.testing.assert_allclose(getattr(c32, op)(between), getattr(c64, op)(between),
                                   rtol=0, atol=1e-6 * np.abs(exact).max())
    z = world[1].T @ world[3].velocities[40]
    P, V = np.array([[0.47, 0.52, 0.1]]), np.array([[0.1, 0.2, 0.3]])
    steps = [F.ReducedScene(red, [c]).step(z, np.zeros(red.r), DT, P, V) for c in (c64, c32)]
    np.testing.assert_allclose(steps[1][0], steps[0][0], rtol=0, atol=1e-6 * np.abs(z).max())
    np.testing.assert_allclose(steps[1][1], steps[0][1], rtol=0, atol=1e-6 * np.abs(steps[0][1]).max())
    with pytest.raises(ValueError, match="single-precision table cannot be compressed"):
        F.Coupling(red, bbasis, pose_table=table, precompute="feedback", compress=3, table_dtype="float32")
    with pytest.raises(ValueError, match="table_dtype"):
        F.Coupling(red, bbasis, pose_table=table, precompute="feedback", table_dtype="float16")


def test_energy_projection(world, bbasis, cshape):
    """The energy-weighted feedforward (the tested alternative to eq. 3.11): W S Btilde = I (speeds in the span are
    cancelled as by eq. 3.11), W = (A'A)^-1 Y' with Y = M_ss S Btilde from an independent KKT solve, F = -W S R^-1 B."""
    grid, B, red, _ = world
    W, SB, A = bbasis.energy_weights, bbasis.surface_speeds, bbasis.fields
    np.testing.assert_allclose(W @ SB, np.eye(bbasis.p), atol=1e-8)
    # Y = M_ss S Btilde: the speed rows of (K K')^-1 [0; S Btilde], by SciPy from an independent K
    K, n_div, _, _ = np_constraints(bbasis, cshape)
    rhs = np.vstack([np.zeros((n_div, bbasis.p)), SB])
    Y = spla.splu((K @ K.T).tocsc()).solve(rhs)[n_div:]
    W_ref = np.linalg.solve(A.T @ A, Y.T)
    np.testing.assert_allclose(W, W_ref, rtol=0, atol=1e-8 * np.abs(W_ref).max())
    pose = np.array([0.5, 0.5, 0.0])
    for proj in ("surface", "energy"):
        c = F.Coupling(red, bbasis, projection=proj)
        assert c.projection == proj
        Fm = c.feedforward(pose)
        X, Nw, _ = world_surface(bbasis, pose)
        SRB = np.stack([np.sum(grid.velocity_at(B[:, j].copy(), X) * Nw, axis=1) for j in range(B.shape[1])], axis=1)
        np.testing.assert_allclose(Fm, -(SB.T if proj == "surface" else W) @ SRB, atol=1e-9)
    with pytest.raises(ValueError, match="projection"):
        F.Coupling(red, bbasis, projection="oblique")


def test_scene_smoke_advection(world, bbasis):
    """advect_smoke: the cell density read back along u' (velocity_field + advect_cells), emptied in the object."""
    grid, B, red, run = world
    scene = F.ReducedScene(red, [F.Coupling(red, bbasis)])
    assert scene.reduced is not None and len(scene.couplings) == 1
    pose = np.array([[0.5, 0.5, 0.3]])
    z = B.T @ run.velocities[50]
    _, coeffs, zf = scene.step(z, np.zeros(red.r), DT, pose, np.zeros((1, 3)), return_flow=True)
    rho = np.ones(grid.n_cells)
    out = scene.advect_smoke(rho, zf, coeffs, pose, DT)
    ref = grid.advect_cells(scene.velocity_field(zf, coeffs, pose), rho, DT)
    c = (np.arange(grid.nx) + 0.5) * grid.h
    X, Y = np.meshgrid(c, c)
    cs, sn = np.cos(0.3), np.sin(0.3)
    inside = bbasis.shape.inside((np.stack([X.ravel(), Y.ravel()], 1) - pose[0, :2]) @ np.array([[cs, -sn], [sn, cs]]))
    assert inside.any() and np.all(out[inside] == 0.0)
    np.testing.assert_allclose(out[~inside], ref[~inside], atol=1e-14)
