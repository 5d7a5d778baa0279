"""3D boundary bases and coupling (Treuille thesis sec. 3.5 in 3D, "3D
Boundaries"): the boundary-basis tests on a plate against independent NumPy /
SciPy transcriptions, the coupling operators and their tables, the scene
loop, particles, bad input and threads."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.spatial.transform import Rotation

from directable import fluid as F
from directable.models import finite_difference_jacobian
from reference.fluid3d import np_interp_matrix
from reference.threads import in_threads

# --- independent NumPy references -------------------------------------------------------------


def np_surface_operator(g, points, normals):
    """S: (q, N), row k = n_k . (trilinear interpolation at x_k)."""
    return sum(sp.diags(normals[:, a]) @ np_interp_matrix(g, points, a) for a in range(3)).tocsr()


def np_divergence_matrix(g):
    """(n_cells, N) divergence of a MAC field, built from the layout."""
    nx, ny, nz, h = g.nx, g.ny, g.nz, g.h
    k, j, i = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    cell = ((k * ny + j) * nx + i).ravel()
    xf = lambda i, j, k: ((k * ny + j) * (nx + 1) + i).ravel()
    yf = lambda i, j, k: (g.n_xfaces + (k * (ny + 1) + j) * nx + i).ravel()
    zf = lambda i, j, k: (g.n_xfaces + g.n_yfaces + (k * ny + j) * nx + i).ravel()
    cols = [xf(i + 1, j, k), xf(i, j, k), yf(i, j + 1, k), yf(i, j, k), zf(i, j, k + 1), zf(i, j, k)]
    sgn = [1, -1, 1, -1, 1, -1]
    return sp.csr_matrix((np.concatenate([s * np.ones(len(cell)) / h for s in sgn]),
                          (np.tile(cell, 6), np.concatenate(cols))), shape=(g.n_cells, g.n_faces))


def cell_centres(g):
    k, j, i = np.meshgrid(np.arange(g.nz), np.arange(g.ny), np.arange(g.nx), indexing="ij")
    return (np.stack([i.ravel(), j.ravel(), k.ravel()], axis=1) + 0.5) * g.h


def rotation(pose):
    return Rotation.from_rotvec(pose[3:]).as_matrix()


def np_scatter(g, bb, pose, local_fields):
    """R u on the interior world faces whose centres lie in the local box: (faces, values (faces, k))."""
    X = F.face_positions3d(g)
    closed = g.closed_mask()
    R = rotation(pose)
    L = (X - pose[:3]) @ R + bb.half_size
    inside = np.all((L >= 0) & (L <= 2 * bb.half_size), axis=1) & ~closed
    faces = np.flatnonzero(inside)
    axis = np.searchsorted([g.n_xfaces, g.n_xfaces + g.n_yfaces], faces, side="right")
    loc = bb.local_grid
    vals = np.zeros((len(faces), local_fields.shape[1]))
    for c in range(3):
        Ic = np_interp_matrix(loc, L[faces], c)
        vals += R[axis, c][:, None] * (Ic @ local_fields)
    return faces, vals


def divergence_free_basis(g, r, rng):
    S = g.project(rng.standard_normal((r, g.n_faces)), tol=1e-13)
    return np.ascontiguousarray(np.linalg.qr(S.T)[0])


# --- fixtures ----------------------------------------------------------------------------------

FLAT = np.array([np.pi / 2, 0.0, 0.0])  # the plate's normal (z) turned to y: a horizontal plate


@pytest.fixture(scope="module")
def grid():
    return F.MACGrid3D(12, 12, 12)


@pytest.fixture(scope="module")
def reduced(grid):
    return F.ReducedFluid(grid, divergence_free_basis(grid, 8, np.random.default_rng(3)), 0.0)


@pytest.fixture(scope="module")
def train_poses():
    return np.array([[0.5, 0.35, 0.5, *FLAT], [0.45, 0.5, 0.55, *FLAT], [0.55, 0.65, 0.45, 0.2, 0.3, 0.1]])


@pytest.fixture(scope="module")
def bb(grid, reduced, train_poses):
    plate = F.plate(0.34, 0.34, 2 * grid.h)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return F.BoundaryBasis3D.build(reduced, plate, train_poses, 12)


# --- boundary basis ----------------------------------------------------------------------------


def test_surface_speeds_orthonormal_eq_3_10(bb):
    SB = bb.surface_speeds
    assert SB.shape == (bb.q, bb.p) and bb.p == 12
    np.testing.assert_allclose(SB.T @ SB, np.eye(bb.p), atol=1e-10)
    assert np.all(np.diff(bb.energy) <= 1e-15) and 0 < bb.energy.sum() <= 1 + 1e-12
    a, b = bb.surface_points, bb.surface_points  # read-only views of the basis's own buffer
    assert np.shares_memory(a, b) and not a.flags.writeable and a.shape == (bb.q, 3)


def test_numpy_surface_operator_reproduces_surface_speeds(bb):
    loc = bb.local_grid
    S = np_surface_operator(loc, bb.surface_points + bb.half_size, bb.surface_normals)
    np.testing.assert_allclose(S @ bb.fields, bb.surface_speeds, atol=1e-10)
    assert bb.fields.shape == (loc.n_faces, bb.p) and bb.rigid_fields.shape == (loc.n_faces, 6)


def test_fields_divergence_free_outside_and_zero_on_outer_faces(bb):
    loc = bb.local_grid
    outside = ~bb.shape.inside(cell_centres(loc) - bb.half_size)
    assert 0 < (~outside).sum() < loc.n_cells
    D = np_divergence_matrix(loc)
    U = np.hstack([bb.fields, bb.rigid_fields])
    assert np.abs(D[outside] @ U).max() * loc.h <= 1e-10 * max(1.0, np.abs(U).max())
    assert np.abs(U[loc.closed_mask()]).max() == 0.0


def test_fields_equal_scipy_kkt_least_norm_solve(bb):
    loc = bb.local_grid
    outside = ~bb.shape.inside(cell_centres(loc) - bb.half_size)
    free = ~loc.closed_mask()
    D = np_divergence_matrix(loc)[outside][:, free]
    S = np_surface_operator(loc, bb.surface_points + bb.half_size, bb.surface_normals)[:, free]
    K = sp.vstack([D, S]).tocsc()
    nv, nc = K.shape[1], K.shape[0]
    KKT = sp.bmat([[sp.eye(nv), K.T], [K, None]]).tocsc()
    rhs = np.zeros((nv + nc, bb.p))
    rhs[nv + D.shape[0]:] = bb.surface_speeds
    sol = spla.splu(KKT).solve(rhs)[:nv]
    ref = np.zeros((loc.n_faces, bb.p))
    ref[free] = sol
    assert np.linalg.norm(bb.fields - ref) <= 1e-8 * np.linalg.norm(ref)


def test_rigid_fields_surface_speeds(bb):
    loc = bb.local_grid
    S = np_surface_operator(loc, bb.surface_points + bb.half_size, bb.surface_normals)
    n, x = bb.surface_normals, bb.surface_points
    want = np.hstack([n, np.cross(x, n)])  # n . e_a and n . (e_a x x)
    np.testing.assert_allclose(S @ bb.rigid_fields, want, atol=1e-9)


def np_faces_touching(loc, solid):
    """Faces of a local grid touching a solid cell: indices, in layout order."""
    D = np_divergence_matrix(loc)
    return np.flatnonzero(np.asarray(abs(D[solid]).sum(axis=0)).ravel() > 0)


def test_face_samples_meet_the_full_solvers_condition(grid, reduced, train_poses):
    # samples="faces": the speeds are read at every local face touching a solid cell (the faces FluidSim3D
    # closes), each along its own axis; the fields meet them exactly, interior faces included
    plate = F.plate(0.34, 0.34, 2 * grid.h)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        bf = F.BoundaryBasis3D.build(reduced, plate, train_poses, 12, samples="faces")
    loc = bf.local_grid
    assert bf.samples == "faces"
    solid = plate.inside(cell_centres(loc) - bf.half_size)
    faces = np_faces_touching(loc, solid)
    X = F.face_positions3d(loc)
    axis = np.searchsorted([loc.n_xfaces, loc.n_xfaces + loc.n_yfaces], faces, side="right")
    assert bf.q == len(faces)
    np.testing.assert_allclose(bf.surface_points, X[faces] - bf.half_size, atol=1e-12)
    np.testing.assert_array_equal(bf.surface_normals, np.eye(3)[axis])
    U = np.hstack([bf.fields, bf.rigid_fields])
    np.testing.assert_allclose(U[faces, :bf.p], bf.surface_speeds, atol=1e-10)  # S reads the face itself
    np.testing.assert_allclose(bf.surface_speeds.T @ bf.surface_speeds, np.eye(bf.p), atol=1e-10)  # eq. 3.10
    x, n = bf.surface_points, bf.surface_normals
    np.testing.assert_allclose(bf.rigid_fields[faces], np.hstack([n, np.cross(x, n)]), atol=1e-10)
    D = np_divergence_matrix(loc)
    assert np.abs(D[~solid] @ U).max() * loc.h <= 1e-10 * np.abs(U).max()  # every fluid cell, the corner too
    assert np.abs(U[loc.closed_mask()]).max() == 0.0
    # the speeds are flux-free over the solid: what leaves it through its faces into fluid cells sums to zero
    out = np.asarray(D[~solid][:, faces].sum(axis=0)).ravel() * loc.h
    np.testing.assert_allclose(out @ bf.surface_speeds, 0.0, atol=1e-10)
    # the fields are the least-norm ones: a SciPy KKT solve on the free faces, fixed faces given
    free = np.setdiff1d(np.flatnonzero(~loc.closed_mask()), faces)
    Df, Dx = D[~solid][:, free], D[~solid][:, faces]
    lap = (Df @ Df.T).tocsr()  # singular (constants): lsqr's solution, whose gradient is unique
    for got, S in ((bf.fields, bf.surface_speeds), (bf.rigid_fields, bf.rigid_fields[faces])):
        for k in (0, S.shape[1] - 1):
            lam = spla.lsqr(lap, -(Dx @ S[:, k]), atol=1e-14, btol=1e-14, iter_lim=20000)[0]
            np.testing.assert_allclose(got[free, k], Df.T @ lam, atol=1e-7 * np.abs(S).max())
    with pytest.raises(ValueError, match="samples"):
        F.BoundaryBasis3D.build(reduced, plate, train_poses, 4, samples="edges")


def test_faces_and_surface_samples(grid, reduced, train_poses):
    # samples="faces+surface": the faces between two solid cells (the inside moves rigidly, as FluidSim3D fills it)
    # then the surface samples of "surface"; the fields meet both exactly, are divergence-free on every fluid cell
    # (none dropped: no flux identity ties these rows) and are the least-norm ones
    plate = F.plate(0.34, 0.34, 2 * grid.h)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        bs = F.BoundaryBasis3D.build(reduced, plate, train_poses, 12)
        bf = F.BoundaryBasis3D.build(reduced, plate, train_poses, 12, samples="faces+surface")
    loc = bf.local_grid
    assert bf.samples == "faces+surface" and bs.samples == "surface"
    solid = plate.inside(cell_centres(loc) - bf.half_size)
    D = np_divergence_matrix(loc)
    inner = np.flatnonzero(np.asarray(abs(D[~solid]).sum(axis=0)).ravel() == 0)
    inner = np.intersect1d(inner, np_faces_touching(loc, solid))  # faces of solid cells with no fluid cell beside
    axis = np.searchsorted([loc.n_xfaces, loc.n_xfaces + loc.n_yfaces], inner, side="right")
    k = len(inner)
    assert k > 0 and bf.q == k + bs.q
    X = F.face_positions3d(loc)
    np.testing.assert_allclose(bf.surface_points[:k], X[inner] - bf.half_size, atol=1e-12)
    np.testing.assert_array_equal(bf.surface_normals[:k], np.eye(3)[axis])
    np.testing.assert_allclose(bf.surface_points[k:], bs.surface_points, atol=1e-15)
    np.testing.assert_allclose(bf.surface_normals[k:], bs.surface_normals, atol=1e-15)
    S = np_surface_operator(loc, bf.surface_points + bf.half_size, bf.surface_normals)
    np.testing.assert_allclose(S @ bf.fields, bf.surface_speeds, atol=1e-10)
    np.testing.assert_allclose(bf.surface_speeds.T @ bf.surface_speeds, np.eye(bf.p), atol=1e-10)  # eq. 3.10
    x, n = bf.surface_points, bf.surface_normals
    np.testing.assert_allclose(S @ bf.rigid_fields, np.hstack([n, np.cross(x, n)]), atol=1e-10)
    U = np.hstack([bf.fields, bf.rigid_fields])
    assert np.abs(D[~solid] @ U).max() * loc.h <= 1e-10 * np.abs(U).max()
    assert np.abs(U[loc.closed_mask()]).max() == 0.0
    # least norm: u = K' lambda for the constraint rows K = [D (fluid cells); S] on the free faces
    free = np.flatnonzero(~loc.closed_mask())
    K = sp.vstack([D[~solid][:, free], sp.csr_matrix(S[:, free])]).tocsr()
    for got, rhs in ((bf.fields, bf.surface_speeds), (bf.rigid_fields, S @ bf.rigid_fields)):
        b = np.r_[np.zeros((~solid).sum()), rhs[:, 0]]
        lam = spla.spsolve((K @ K.T).tocsc(), b)  # K has full row rank here: no row repeats another
        np.testing.assert_allclose(got[free, 0], K.T @ lam, atol=1e-8 * np.abs(rhs).max())
    with pytest.raises(ValueError, match=r'samples must be "surface", "faces" or "faces\+surface", got "edges"'):
        F.BoundaryBasis3D.build(reduced, plate, train_poses, 4, samples="edges")


# --- coupling ----------------------------------------------------------------------------------


def test_feedforward_matches_numpy(grid, reduced, bb, train_poses):
    c = F.Coupling3D(reduced, bb)
    B = reduced.basis
    for pose in [train_poses[0], train_poses[2], np.array([0.4, 0.6, 0.5, 0.3, -0.2, 0.5])]:
        R = rotation(pose)
        Sw = np_surface_operator(grid, np.clip(bb.surface_points @ R.T + pose[:3], 0, 1), bb.surface_normals @ R.T)
        np.testing.assert_allclose(c.feedforward(pose), -bb.surface_speeds.T @ (Sw @ B), atol=1e-9)


def test_feedback_matches_scattered_fields(grid, reduced, bb, train_poses):
    c = F.Coupling3D(reduced, bb)
    A = np.hstack([bb.fields, bb.rigid_fields])
    for pose in [train_poses[0], np.array([0.4, 0.6, 0.5, 0.3, -0.2, 0.5])]:
        faces, vals = np_scatter(grid, bb, pose, A)
        assert len(faces) > 0
        np.testing.assert_allclose(c.feedback(pose), reduced.basis[faces].T @ vals, atol=1e-9)


def test_tables_at_their_nodes_equal_the_exact_operators(reduced, bb, train_poses):
    xs, ys, zs = np.array([0.45, 0.5]), np.array([0.35, 0.4, 0.45]), np.array([0.5])
    t = F.Coupling3D(reduced, bb, pose_table=(xs, ys, zs, [FLAT[0]], [0.0], [0.0]), precompute="both")
    assert t.table_nodes == 6
    for n in range(t.table_nodes):
        pose = t.node_pose(n)
        np.testing.assert_allclose(t.feedforward(pose), t.feedforward(pose, exact=True), atol=1e-10)
        np.testing.assert_allclose(t.feedback(pose), t.feedback(pose, exact=True), atol=1e-10)
    # between nodes: the multilinear blend of the node values
    mid = np.array([0.475, 0.375, 0.5, *FLAT])
    a, b = np.array([0.45, 0.35, 0.5, *FLAT]), np.array([0.5, 0.4, 0.5, *FLAT])
    c, d = np.array([0.45, 0.4, 0.5, *FLAT]), np.array([0.5, 0.35, 0.5, *FLAT])
    blend = sum(t.feedback(p, exact=True) for p in (a, b, c, d)) / 4
    np.testing.assert_allclose(t.feedback(mid), blend, atol=1e-12)
    # a path table: linear along the polyline, located by the closest point
    path = np.array([[0.4, 0.5, 0.5, *FLAT], [0.5, 0.5, 0.5, *FLAT], [0.6, 0.55, 0.5, *FLAT]])
    pt = F.Coupling3D(reduced, bb, path=path, precompute="both")
    for n in range(3):
        np.testing.assert_allclose(pt.feedforward(path[n]), pt.feedforward(path[n], exact=True), atol=1e-10)
    off = np.array([0.45, 0.52, 0.5, *FLAT])  # above the first segment's midpoint
    np.testing.assert_allclose(pt.feedback(off), 0.5 * (pt.feedback(path[0], exact=True) +
                                                         pt.feedback(path[1], exact=True)), atol=1e-12)
    compressed = F.Coupling3D(reduced, bb, pose_table=(xs, ys, zs, [FLAT[0]], [0.0], [0.0]), precompute="both",
                              compress=3)
    assert compressed.table_bytes < t.table_bytes


def test_removal_with_p_equal_to_rank_is_complete(reduced, grid, train_poses):
    plate = F.plate(0.34, 0.34, 2 * grid.h)
    with pytest.warns(UserWarning, match="p = 500 exceeds the rank"):
        full = F.BoundaryBasis3D.build(reduced, plate, train_poses, 500)
    assert full.p == full.rank <= 3 * reduced.r
    scene = F.ReducedScene3D(reduced, [F.Coupling3D(reduced, full)])
    z = np.random.default_rng(0).standard_normal(reduced.r)
    for pose in train_poses:
        P, V = pose[None], np.zeros((1, 6))
        zn, coeffs, zf = scene.step(z, np.zeros(reduced.r), 0.01, P, V, return_flow=True)
        assert scene.surface_energy_removed(zf, coeffs, P, V)[0] >= 0.999


def test_scene_step_and_eq_3_9(grid, reduced, bb, train_poses):
    c = F.Coupling3D(reduced, bb)
    scene = F.ReducedScene3D(reduced, [c])
    assert scene.max_m == bb.p + 6
    rng = np.random.default_rng(1)
    z, w = rng.standard_normal(reduced.r), rng.standard_normal(reduced.r)
    pose = train_poses[2]
    vel = np.array([0.3, -0.1, 0.2, 0.5, 0.1, -0.4])
    zn, coeffs, zf = scene.step(z, w, 0.01, pose[None], vel[None], return_flow=True)
    np.testing.assert_allclose(zf, reduced.step(z, np.zeros(reduced.r), 0.01) + 0.01 * w, atol=1e-12)
    R = rotation(pose)
    np.testing.assert_allclose(coeffs[0, :bb.p], c.feedforward(pose) @ zf, atol=1e-12)
    np.testing.assert_allclose(coeffs[0, bb.p:], np.concatenate([R.T @ vel[:3], R.T @ vel[3:]]), atol=1e-12)
    np.testing.assert_allclose(zn, zf + c.feedback(pose) @ coeffs[0], atol=1e-12)
    # u' = B z + R (local fields . coeffs), on the faces and at points
    A = np.hstack([bb.fields, bb.rigid_fields])
    faces, vals = np_scatter(grid, bb, pose, A)
    u = reduced.basis @ zf
    u[faces] += vals @ coeffs[0]
    np.testing.assert_allclose(scene.velocity_field(zf, coeffs, pose[None]), u, atol=1e-12)
    pts = rng.uniform(0.1, 0.9, (30, 3))
    loc = (pts - pose[:3]) @ R + bb.half_size
    inbox = np.all((loc >= 0) & (loc <= 2 * bb.half_size), axis=1)
    want = np.stack([np_interp_matrix(grid, pts, a) @ (reduced.basis @ zf) for a in range(3)], axis=1)
    lf = A @ coeffs[0]
    lv = np.stack([np_interp_matrix(bb.local_grid, np.clip(loc, 0, 2 * bb.half_size), a) @ lf for a in range(3)], axis=1)
    want[inbox] += lv[inbox] @ R.T
    np.testing.assert_allclose(scene.velocity_at(pts, zf, coeffs, pose[None]), want, atol=1e-12)


def test_particles_pushed_out_and_match_velocity(grid, reduced, bb, train_poses):
    scene = F.ReducedScene3D(reduced, [F.Coupling3D(reduced, bb)])
    pose, vel = train_poses[0], np.zeros(6)
    rng = np.random.default_rng(2)
    z = rng.standard_normal(reduced.r)
    zn, coeffs, zf = scene.step(z, np.zeros(reduced.r), 0.01, pose[None], vel[None], return_flow=True)
    R = rotation(pose)
    local = rng.uniform(-0.15, 0.15, (200, 3)) * [1, 1, 0.1]  # in and around the plate
    pts = local @ R.T + pose[:3]
    out, pushed = scene.advect_particles(pts, zf, coeffs, pose[None], 1e-3, drift=(0, -0.05, 0))
    assert pushed > 0 and not bb.shape.inside((out - pose[:3]) @ R).any()
    far = np.array([[0.15, 0.15, 0.15], [0.85, 0.8, 0.2]])
    moved, n = scene.advect_particles(far, zf, coeffs, pose[None], 1e-4, threads=1)
    v = scene.velocity_at(far, zf, coeffs, pose[None]) + 0.0
    np.testing.assert_allclose((moved - far) / 1e-4, v, rtol=1e-2, atol=1e-6)
    # the parallel kernel is RK2 through u' (velocity_at, the per-point query) wherever nothing is pushed
    cloud = rng.uniform(0.02, 0.98, (2000, 3))
    cloud = cloud[~bb.shape.inside((cloud - pose[:3]) @ R)]
    hi = np.array([grid.nx, grid.ny, grid.nz]) * grid.h
    dt, drift = 0.02, np.array([0.0, -0.05, 0.0])
    mid = np.clip(cloud + 0.5 * dt * (scene.velocity_at(cloud, zf, coeffs, pose[None]) + drift), 0, hi)
    want = np.clip(cloud + dt * (scene.velocity_at(mid, zf, coeffs, pose[None]) + drift), 0, hi)
    data = scene.create_data()
    for threads in (1, 2):
        got, n = scene.advect_particles(cloud, zf, coeffs, pose[None], dt, drift, threads, data)
        kept = ~bb.shape.inside((want - pose[:3]) @ R)
        np.testing.assert_allclose(got[kept], want[kept], rtol=0, atol=1e-13)
        assert n == (~kept).sum()


def test_bad_input(grid, reduced, bb, train_poses):
    plate = F.plate(0.34, 0.34, 2 * grid.h)
    bad = train_poses.copy()
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match="poses"):
        F.BoundaryBasis3D.build(reduced, plate, bad, 4)
    with pytest.raises(ValueError, match=r"poses must have shape \(n, 6\)"):
        F.BoundaryBasis3D.build(reduced, plate, train_poses[:, :3], 4)
    with pytest.raises(ValueError, match="spacing .* is too fine"):
        F.BoundaryBasis3D.build(reduced, plate, train_poses, 4, surface_spacing=1e-300)
    with pytest.raises(MemoryError, match="local grid"):
        F.BoundaryBasis3D.build(reduced, plate, train_poses, 4, local_size=1e300)
    with pytest.raises(ValueError, match="local_size must contain the shape"):
        F.BoundaryBasis3D.build(reduced, plate, train_poses, 4, local_size=0.1)
    with pytest.raises(ValueError, match="spacing > 0"):
        F.Coupling3D(reduced, bb, pose_table=([0.5, 0.5], [0.5], [0.5]), precompute="both")
    with pytest.raises(ValueError, match="pose_table or path is required"):
        F.Coupling3D(reduced, bb, precompute="feedback")
    with pytest.raises(ValueError, match="3D ReducedFluid, got None"):
        F.BoundaryBasis3D.build(None, plate, train_poses, 4)
    scene = F.ReducedScene3D(reduced, [F.Coupling3D(reduced, bb)])
    z = np.zeros(reduced.r)
    with pytest.raises(ValueError, match="velocities"):
        scene.step(z, z, 0.01, train_poses[:1], np.full((1, 6), np.nan))
    with pytest.raises(ValueError, match=r"poses must have shape \(1, 6\)"):
        scene.step(z, z, 0.01, train_poses[:2], np.zeros((2, 6)))
    other = F.MACGrid3D(6, 6, 6)
    with pytest.raises(ValueError, match="basis"):
        F.ReducedFluid(other, reduced.basis, 0.0)


def test_scene_shared_by_threads(reduced, bb, train_poses):
    scene = F.ReducedScene3D(reduced, [F.Coupling3D(reduced, bb)])
    z0 = np.random.default_rng(4).standard_normal(reduced.r)
    vel = np.array([[0.2, 0.0, 0.1, 0.0, 0.3, 0.0]])

    def run(_):
        z = z0
        for i in range(5):
            z, c = scene.step(z, np.zeros(reduced.r), 0.01, train_poses[i % 3][None], vel)
        return z

    ref = run(0)
    for out in in_threads(run):
        np.testing.assert_array_equal(out, ref)


def test_fluid_particles_on_a_scene_jacobian_and_push_out(reduced, bb, train_poses):
    scene = F.ReducedScene3D(reduced, [F.Coupling3D(reduced, bb)])
    pose, vel = train_poses[2][None], np.array([[0.2, 0.1, 0.0, 0.0, 0.0, 0.5]])
    model = F.FluidParticles(scene, 3, pose, vel, drift=(0.0, -0.05, 0.0))
    assert isinstance(model, F.FluidParticles3D) and model.has_scene
    R = rotation(pose[0])
    rng = np.random.default_rng(5)
    local = np.array([[0.05, 0.08, 0.12], [-0.1, 0.013, -0.13], [0.3, 0.3, 0.3]])  # two in the box (off its lattice lines), one outside
    P = local @ R.T + pose[0, :3]
    z = rng.standard_normal(reduced.r)
    x = np.r_[P.ravel(), z]
    # the particle velocity is u' of eq. 3.9 with the feedforward at the fixed pose, plus the drift
    c = F.Coupling3D(reduced, bb)
    coeffs = np.r_[c.feedforward(pose[0]) @ z, R.T @ vel[0, :3], R.T @ vel[0, 3:]][None]
    v = scene.velocity_at(P, z, coeffs, pose) + [0.0, -0.05, 0.0]
    np.testing.assert_allclose(model.dynamics(x, 0.0)[:9], v.ravel(), atol=1e-12)
    J = model.jacobian(x, 0.0)
    np.testing.assert_allclose(J, finite_difference_jacobian(model, x), rtol=1e-5, atol=1e-6 * np.abs(J).max())
    inside = np.r_[pose[0, :3], pose[0, :3], pose[0, :3] + 0.3, z]  # two particles at the plate's centre
    xn = model.step(inside, np.zeros(reduced.r), 0.01)
    assert not bb.shape.inside((xn[:9].reshape(3, 3) - pose[0, :3]) @ R).any()
    zn, _ = scene.step(z, np.zeros(reduced.r), 0.01, pose, vel)
    np.testing.assert_allclose(model.step(x, np.zeros(reduced.r), 0.01)[9:], zn, atol=1e-12)


def test_lqr_tracks_a_particle_past_the_plate(reduced, bb, train_poses):
    """The leaf example with an obstacle in 3D: the scene model's Jacobian (boundary terms included) drives an LQR
    tracker that brings a perturbed particle back onto a reference passing the plate."""
    import directable as dr
    scene = F.ReducedScene3D(reduced, [F.Coupling3D(reduced, bb)])
    pose, vel = train_poses[:1], np.zeros((1, 6))
    model = F.FluidParticles(scene, 1, pose, vel)
    r, dt, T = reduced.r, 0.02, 25
    x0 = np.r_[pose[0, :3] + [-0.2, 0.1, 0.03], np.zeros(r)]
    w = np.tile(np.random.default_rng(6).standard_normal(r) * 20.0, (T, 1))  # the reference moves 5 cm past the plate
    ref = dr.models.rollout(model, x0, w, dt)
    A = dr.models.linearize(model, ref, dt)
    Q = np.diag(np.r_[np.full(3, 1e4), np.full(r, 1e-2)])
    sol = dr.lqr.solve_continuous(A, model.control_matrix(), dt, Q, 1e-3 * np.eye(r), Q)
    ctrl = dr.lqr.tracker(sol, ref, w)
    start = x0 + np.r_[0.04, -0.03, 0.02, np.zeros(r)]
    closed = dr.sim.simulate(model, start, T, dt, controller=ctrl)
    opened = dr.sim.simulate(model, start, T, dt, open_loop=w)
    err = lambda run: np.linalg.norm(run.states[-1, :3] - ref[-1, :3])
    assert np.linalg.norm(ref[-1, :3] - ref[0, :3]) > 0.03 and err(closed) < 0.2 * err(opened)
