"""Full StVK FEM and the reduced StVK model."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import directable as dr
from directable import fem, reduce


def numpy_forces(X, T, u, mu, lam):
    """Independent reference: gradient of sum_e vol (mu E:E + lam/2 tr(E)^2)."""
    Dm = np.stack([X[T[:, k]] - X[T[:, 0]] for k in (1, 2, 3)], axis=2)  # (E, 3, 3) columns
    vol = np.linalg.det(Dm) / 6
    Dinv = np.linalg.inv(Dm)
    Ds = np.stack([u.reshape(-1, 3)[T[:, k]] - u.reshape(-1, 3)[T[:, 0]] for k in (1, 2, 3)], axis=2)
    F = np.eye(3) + Ds @ Dinv
    E = 0.5 * (np.swapaxes(F, 1, 2) @ F - np.eye(3))
    S = 2 * mu * E + lam * np.trace(E, axis1=1, axis2=2)[:, None, None] * np.eye(3)
    H = vol[:, None, None] * F @ S @ np.swapaxes(Dinv, 1, 2)  # forces on vertices 1..3 (columns)
    f = np.zeros_like(u).reshape(-1, 3)
    for k in range(3):
        np.add.at(f, T[:, k + 1], H[:, :, k])
    np.add.at(f, T[:, 0], -H.sum(axis=2))
    return f.ravel()


@pytest.fixture(scope="module")
def small():
    mesh = fem.cantilever(1.0, 0.25, 0.25, n=(4, 1, 1))
    fixed = fem.vertices_where(mesh, lambda X: X[:, 0] < 1e-9)
    model = fem.StVKModel(mesh, young=1e4, poisson=0.3, density=100.0, fixed=fixed, alpha=0.2, beta=0.01)
    return mesh, model


def _rand_u(model, scale, seed=0):
    u = np.random.default_rng(seed).standard_normal(model.dofs) * scale
    return u


def test_forces_are_energy_gradient(small):
    mesh, model = small
    u = _rand_u(model, 0.05)
    f = model.internal_forces(u)
    eps = 1e-6
    fd = np.array([(model.energy(u + eps * e) - model.energy(u - eps * e)) / (2 * eps) for e in np.eye(u.size)])
    assert np.max(np.abs(f - fd)) < 1e-6 * np.max(np.abs(f))


def test_forces_match_numpy_reference(small):
    mesh, model = small
    u = _rand_u(model, 0.1, seed=3)
    ref = numpy_forces(np.asarray(mesh.vertices), np.asarray(mesh.tets), u, model.mu, model.lam)
    assert np.allclose(model.internal_forces(u), ref, rtol=1e-12, atol=1e-10 * np.abs(ref).max())
    assert model.mu == pytest.approx(1e4 / 2.6) and model.lam == pytest.approx(1e4 * 0.3 / (1.3 * 0.4))


def test_stiffness_is_force_jacobian_and_symmetric(small):
    _, model = small
    u = _rand_u(model, 0.05, seed=1)
    K = model.tangent_stiffness(u)
    assert sp.issparse(K) and K.shape == (model.dofs, model.dofs)
    Kd = K.toarray()
    eps = 1e-6
    fd = np.column_stack([(model.internal_forces(u + eps * e) - model.internal_forces(u - eps * e)) / (2 * eps)
                          for e in np.eye(u.size)])
    assert np.max(np.abs(Kd - fd)) < 1e-6 * np.max(np.abs(Kd))
    assert np.allclose(Kd, Kd.T, atol=1e-9 * np.abs(Kd).max())


def test_rigid_motions_give_zero_force(small):
    mesh, model = small
    X = np.asarray(mesh.vertices)
    c, s = np.cos(0.7), np.sin(0.7)
    R = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]) @ np.array([[1, 0, 0], [0, c, s], [0, -s, c]])
    for u in ((X @ R.T - X + [0.3, -1.0, 2.0]).ravel(), np.tile([1.0, 2.0, -3.0], len(X))):
        assert np.max(np.abs(model.internal_forces(u))) < 1e-9 * model.mu
        assert abs(model.energy(u)) < 1e-12 * model.mu
    # ... while a stretch does not
    assert np.max(np.abs(model.internal_forces((0.1 * X).ravel()))) > 1e-3 * model.mu


def test_mass_matrix(small):
    mesh, model = small
    M = model.mass_matrix()
    assert sp.issparse(M) and M.shape == (model.dofs, model.dofs)
    assert M.diagonal().sum() == pytest.approx(3 * 100.0 * 1.0 * 0.25 * 0.25)
    assert np.allclose(M.diagonal(), model.mass)


def test_cantilever_tip_deflection_matches_euler_bernoulli():
    L, w, h, E = 1.0, 0.1, 0.1, 1e6
    # linear tets lock in bending: 6 x 6 cells across give 8% (4 x 4: 13%)
    mesh = fem.cantilever(L, w, h, n=(60, 6, 6))
    fixed = fem.vertices_where(mesh, lambda X: X[:, 0] < 1e-9)
    model = fem.StVKModel(mesh, young=E, poisson=0.0, density=1.0, fixed=fixed)
    X = np.asarray(mesh.vertices)
    tip = np.flatnonzero(X[:, 0] > L - 1e-9)
    P = 1e-3  # small load: linear regime
    f = np.zeros(model.dofs)
    f[3 * tip + 2] = -P / tip.size
    u = fem.Simulator(model, dt=0.01).static_solve(f)
    deflection = -u[3 * tip + 2].mean()
    eb = P * L ** 3 / (3 * E * w * h ** 3 / 12)
    assert abs(deflection / eb - 1) < 0.10, (deflection, eb)


# ---------------------------------------------------------------- reduced StVK

@pytest.fixture(scope="module")
def reduced(small):
    mesh, model = small
    rng = np.random.default_rng(7)
    snaps = rng.standard_normal((12, model.dofs))
    snaps[:, model.fixed_dofs] = 0.0
    basis = reduce.pca(snaps, 5, mass=model.mass)
    return model, basis.U, dr.ReducedStVK(model, basis.U)


def test_reduced_forces_equal_projected_full_forces(reduced):
    model, U, red = reduced
    rng = np.random.default_rng(2)
    for scale in (1e-3, 0.05, 0.3):
        p = rng.standard_normal(U.shape[1]) * scale
        ref = U.T @ model.internal_forces(U @ p)
        assert np.linalg.norm(red.internal_forces(p) - ref) <= 1e-9 * np.linalg.norm(ref)
        Kref = U.T @ (model.tangent_stiffness(U @ p) @ U)
        assert np.linalg.norm(red.tangent_stiffness(p) - Kref) <= 1e-9 * np.linalg.norm(Kref)
        assert red.energy(p) == pytest.approx(model.energy(U @ p), rel=1e-9)


def test_reduced_stiffness_and_its_derivative_vs_finite_differences(reduced):
    _, U, red = reduced
    rng = np.random.default_rng(4)
    p, v = rng.standard_normal((2, U.shape[1])) * 0.1
    eps = 1e-6
    I = np.eye(p.size)
    fd = np.column_stack([(red.internal_forces(p + eps * e) - red.internal_forces(p - eps * e)) / (2 * eps) for e in I])
    K = red.tangent_stiffness(p)
    assert np.max(np.abs(K - fd)) < 1e-6 * np.abs(K).max()
    fdH = np.column_stack([(red.tangent_stiffness(p + eps * e) @ v - red.tangent_stiffness(p - eps * e) @ v) / (2 * eps)
                           for e in I])
    H = red.stiffness_derivative(p, v)
    assert np.max(np.abs(H - fdH)) < 1e-6 * np.abs(H).max()


def test_reduced_first_order_model_appendix_b(reduced):
    model, U, red = reduced
    r = U.shape[1]
    assert red.state_dim() == 2 * r and red.control_dim() == r
    assert np.allclose(red.reduced_mass, np.eye(r), atol=1e-10)  # mass-orthonormal basis
    assert np.allclose(red.control_matrix(), np.vstack([np.zeros((r, r)), np.eye(r)]), atol=1e-9)
    z = np.random.default_rng(5).standard_normal(2 * r) * 0.1
    F = red.dynamics(z)
    p, pd = z[:r], z[r:]
    assert np.allclose(F[:r], pd)
    D = model.alpha * np.eye(r) + model.beta * red.tangent_stiffness(p)
    assert np.allclose(F[r:], -D @ pd - red.internal_forces(p), atol=1e-10 * np.abs(F).max())
    J = red.jacobian(z)
    fd = dr.models.finite_difference_jacobian(red, z)
    assert np.max(np.abs(J - fd)) < 1e-6 * np.abs(J).max()
    red.damping_hessian = False
    try:
        J0 = red.jacobian(z)
    finally:
        red.damping_hessian = True
    omitted = -model.beta * red.stiffness_derivative(p, pd)
    assert np.allclose(J - J0, np.block([[np.zeros((r, r)), np.zeros((r, r))], [omitted, np.zeros((r, r))]]), atol=1e-10)
    assert np.abs(omitted).max() > 1e-6  # the test can tell them apart


def test_reduced_simulation_reproduces_projected_full_run(small):
    mesh, model = small
    dt, T = 0.01, 60
    X = np.asarray(mesh.vertices)
    tip = np.flatnonzero(X[:, 0] > 1 - 1e-9)
    forces = np.zeros((T, model.dofs))
    forces[:20, 3 * tip + 2] = -3.0  # large enough to bend visibly
    forces[:20, 3 * tip + 1] = 2.0
    full = fem.Simulator(model, dt).run(forces)
    assert np.abs(full).max() > 0.05  # a nonlinear, visible motion
    basis = reduce.pca(full[1:], 12, mass=model.mass)
    red = dr.ReducedStVK(model, basis.U)
    w = forces @ basis.U  # reduced forces U' f
    run = dr.simulate(red, np.zeros(2 * basis.r), T, dt, open_loop=w)
    q_red = run.states[:, :basis.r] @ basis.U.T
    err = np.linalg.norm(q_red - full, axis=1).max() / np.linalg.norm(full, axis=1).max()
    assert err < 0.02, err


def test_bad_input():
    X = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]])
    fem.TetMesh(X, [[0, 1, 2, 3]])
    with pytest.raises(ValueError, match="inverted"):
        fem.TetMesh(X, [[0, 2, 1, 3]])
    with pytest.raises(ValueError, match="degenerate"):
        fem.TetMesh(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0.0]]), [[0, 1, 2, 3]])
    with pytest.raises(ValueError, match="unreferenced|referenced by no"):
        fem.TetMesh(np.vstack([X, [5, 5, 5]]), [[0, 1, 2, 3]])
    with pytest.raises(ValueError, match="tets"):
        fem.TetMesh(X, [[0, 1, 2, 7]])
    with pytest.raises(ValueError, match="tets"):
        fem.TetMesh(X, [[0, 1, 2]])
    with pytest.raises(TypeError, match="tets"):
        fem.TetMesh(X, [[0, 1, 2, 3.5]])
    with pytest.raises(ValueError, match="vertices"):
        fem.TetMesh(np.full((4, 3), np.nan), [[0, 1, 2, 3]])
    mesh = fem.TetMesh(X, [[0, 1, 2, 3]])
    with pytest.raises(ValueError, match="poisson"):
        fem.StVKModel(mesh, 1.0, 0.5, 1.0)
    with pytest.raises(ValueError, match="young"):
        fem.StVKModel(mesh, -1.0, 0.3, 1.0)
    with pytest.raises(ValueError, match="fixed"):
        fem.StVKModel(mesh, 1.0, 0.3, 1.0, fixed=[9])
    free = fem.StVKModel(mesh, 1.0, 0.3, 1.0)
    with pytest.raises(ValueError, match="fixed"):
        fem.Simulator(free, 0.01)
    model = fem.StVKModel(mesh, 1.0, 0.3, 1.0, fixed=[0])
    with pytest.raises(ValueError, match="u"):
        model.internal_forces(np.zeros(5))
    with pytest.raises(ValueError, match="u"):
        model.internal_forces(np.full(12, np.nan))
    with pytest.raises(TypeError):
        model.internal_forces(np.zeros(12, complex))
    with pytest.raises(ValueError, match="U"):
        dr.ReducedStVK(model, np.ones((11, 2)))
    U = np.zeros((12, 2))
    U[3, 0] = U[7, 1] = 1
    with pytest.raises(ValueError, match="fixed"):
        dr.ReducedStVK(model, U + np.eye(12)[:, :2])  # moves vertex 0
    with pytest.raises(ValueError, match="independent"):
        dr.ReducedStVK(model, np.column_stack([U[:, 0], U[:, 0]]))
    red = dr.ReducedStVK(model, U)
    with pytest.raises(ValueError, match="p"):
        red.internal_forces(np.zeros(3))
    sim = fem.Simulator(model, 0.01, max_iterations=2, tolerance=1e-14)
    f = np.zeros(12)
    f[3:] = 50.0  # a huge load: Newton cannot converge in 2 iterations
    with pytest.raises(RuntimeError, match="converge"):
        sim.step(f)


def test_mesh_generators_are_conforming():
    L, w, h = 1.0, 0.2, 0.1
    mesh = fem.cantilever(L, w, h, n=(5, 2, 1))
    assert mesh.num_tets == 5 * 2 * 1 * 6 and np.asarray(mesh.volumes).sum() == pytest.approx(L * w * h)
    X = np.asarray(mesh.vertices)
    tri = fem.surface_triangles(mesh)
    area = 0.5 * np.linalg.norm(np.cross(X[tri[:, 1]] - X[tri[:, 0]], X[tri[:, 2]] - X[tri[:, 0]]), axis=1).sum()
    assert area == pytest.approx(2 * (L * w + L * h + w * h))  # no interior face left unmatched
    T = fem.t_shape(h=0.1)
    assert np.asarray(T.volumes).sum() == pytest.approx((9 + 6 + 7) * 1e-3)
    assert fem.bottom_vertices(T).size == 16  # the 3 x 3 base's bottom grid
    assert fem.t_shape(h=0.1, refine=2).num_tets == 8 * T.num_tets
    plant = fem.stem(h=0.1, height=8, leaves=((3, 2), (6, -2)))
    assert np.asarray(plant.volumes).sum() == pytest.approx(12 * 1e-3)


def test_enrichment_is_time_stratified_around_the_centre_line(small):
    mesh, model = small
    T, dt = 40, 0.01
    X = np.asarray(mesh.vertices)
    tip = np.flatnonzero(X[:, 0] > 1 - 1e-9)
    forces = np.zeros((T, model.dofs))
    forces[:, 3 * tip + 2] = -np.sin(np.linspace(0, np.pi, T))[:, None]
    u, v, a = fem.centerline(model, dt, forces, return_acceleration=True)
    snaps, times = fem.enrich(model, dt, forces, runs=4, fraction=0.1, u=u, v=v, a=a, seed=1, return_times=True)
    assert np.all((times >= np.arange(4) * 10) & (times < np.arange(1, 5) * 10))
    assert snaps.shape == (T + 1 + sum(T - times), model.dofs)
    assert np.array_equal(snaps[:T + 1], u)
    runs = np.split(snaps[T + 1:], np.cumsum(T - times)[:-1])
    for t0, run in zip(times, runs):
        dev = np.abs(run - u[t0 + 1:]).max()
        assert 0 < dev < 0.5 * np.abs(u).max()  # a tunnel around the centre-line, not away from it
    same = fem.enrich(model, dt, forces, runs=4, fraction=0.0, u=u, v=v, a=a, seed=1)
    for t0, run in zip(times, np.split(same[T + 1:], np.cumsum(T - times)[:-1])):
        assert np.allclose(run, u[t0 + 1:], atol=1e-9)
    assert np.all(snaps[:, model.fixed_dofs] == 0)


def test_reduced_newton_failure_is_reported(reduced):
    model, U, red = reduced
    red.set_newton(2, 1e-14)
    try:
        with pytest.raises(RuntimeError, match="converge"):
            dr.simulate(red, np.zeros(2 * U.shape[1]), 3, 0.05, open_loop=np.full((3, U.shape[1]), 1e4))
    finally:
        red.set_newton(20, 1e-10)
    with pytest.raises(ValueError, match="max_iterations"):
        red.set_newton(0)


def test_load_mesh_through_meshio(tmp_path):
    meshio = pytest.importorskip("meshio")
    mesh = fem.t_shape(h=0.1)
    X, T = np.asarray(mesh.vertices), np.asarray(mesh.tets)
    T_flipped = T.copy()
    T_flipped[::2] = T_flipped[::2][:, [1, 0, 2, 3]]  # files may store either orientation
    pts = np.vstack([X, [[9.0, 9.0, 9.0]]])  # plus an unreferenced point (dropped)
    path = tmp_path / "t.vtu"
    meshio.write(str(path), meshio.Mesh(pts, [("tetra", T_flipped)]))
    loaded = fem.load_mesh(path)
    assert loaded.num_vertices == mesh.num_vertices and loaded.num_tets == mesh.num_tets
    assert np.asarray(loaded.volumes).sum() == pytest.approx(np.asarray(mesh.volumes).sum())
    tri = meshio.Mesh(X, [("triangle", T[:, :3])])
    meshio.write(str(tmp_path / "s.vtu"), tri)
    with pytest.raises(ValueError, match="no tetrahedra"):
        fem.load_mesh(tmp_path / "s.vtu")
