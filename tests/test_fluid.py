"""Reduced fluids with immersed particles: full MAC fluid, reduced
advection/diffusion, particles and the appendix-C Jacobian, bad input."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import directable as dr
from directable import fluid as F
from directable.experiments import fluid_forcing


# --- independent NumPy references -------------------------------------------------------------

def np_divergence(nx, ny, h, u):
    ux = u[:ny * (nx + 1)].reshape(ny, nx + 1)
    uy = u[ny * (nx + 1):].reshape(ny + 1, nx)
    return ((ux[:, 1:] - ux[:, :-1]) + (uy[1:, :] - uy[:-1, :])).ravel() / h


def np_advection(nx, ny, h, u, q):
    """Conservation-form advection -div(u q) on the face control volumes (eq. 3.4, 3.13-3.14),
    written with array slicing: flux velocity and advected value both averaged."""
    ux = u[:ny * (nx + 1)].reshape(ny, nx + 1)
    uy = u[ny * (nx + 1):].reshape(ny + 1, nx)
    qx = q[:ny * (nx + 1)].reshape(ny, nx + 1)
    qy = q[ny * (nx + 1):].reshape(ny + 1, nx)
    ox, oy = np.zeros_like(qx), np.zeros_like(qy)
    # x-faces, through cell centres (i, j): between faces i and i+1
    Fc = 0.5 * (ux[:, :-1] + ux[:, 1:]) * 0.5 * (qx[:, :-1] + qx[:, 1:]) / h
    ox[:, :-1] -= Fc
    ox[:, 1:] += Fc
    # x-faces, through nodes (i, j+1), interior i: between rows j and j+1
    V = 0.5 * (uy[1:-1, :-1] + uy[1:-1, 1:])  # (ny-1, nx-1) at nodes i = 1..nx-1
    Fn = V * 0.5 * (qx[:-1, 1:-1] + qx[1:, 1:-1]) / h
    ox[:-1, 1:-1] -= Fn
    ox[1:, 1:-1] += Fn
    # y-faces, through cell centres
    Gc = 0.5 * (uy[:-1, :] + uy[1:, :]) * 0.5 * (qy[:-1, :] + qy[1:, :]) / h
    oy[:-1, :] -= Gc
    oy[1:, :] += Gc
    # y-faces, through nodes (i+1, j), interior j
    U = 0.5 * (ux[:-1, 1:-1] + ux[1:, 1:-1])  # (ny-1, nx-1)
    Gn = U * 0.5 * (qy[1:-1, :-1] + qy[1:-1, 1:]) / h
    oy[1:-1, :-1] -= Gn
    oy[1:-1, 1:] += Gn
    return np.r_[ox.ravel(), oy.ravel()]


def fd_jacobian(f, x, eps=1e-6):
    J = np.empty((f(x).size, x.size))
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = eps
        J[:, j] = (f(x + e) - f(x - e)) / (2 * eps)
    return J


# --- fixtures ----------------------------------------------------------------------------------

NX = 32
DT = 0.01
STEPS = 80


@pytest.fixture(scope="module")
def grid():
    return F.MACGrid2D(NX, NX)


@pytest.fixture(scope="module")
def run(grid):
    winds = fluid_forcing.random_winds(grid, 8, STEPS, seed=1)
    return F.full_run(grid, STEPS, DT, winds, particles=[[0.3, 0.5], [0.6, 0.4]])


@pytest.fixture(scope="module")
def basis(grid, run):
    return F.velocity_basis(grid, run.velocities[1:], 12)


@pytest.fixture(scope="module")
def reduced(grid, basis):
    return dr.ReducedFluid(grid, basis, 0.0)


def forces(grid, run, steps):
    f = np.zeros((steps, grid.n_faces))
    for w in run.forces:
        f[w.start:min(w.start + w.duration, steps)] += w.field(grid)
    return f


# --- 1. full fluid -----------------------------------------------------------------------------

def test_grid_layout_and_sizes():
    g = F.MACGrid2D(5, 3)
    assert g.h == pytest.approx(1 / 5)
    assert (g.n_xfaces, g.n_yfaces, g.n_faces, g.n_cells) == (18, 20, 38, 15)
    pos = F.face_positions(g)
    wall = g.wall_mask()
    W, H = 5 * g.h, 3 * g.h
    expect = np.r_[np.isclose(pos[:18, 0], 0) | np.isclose(pos[:18, 0], W),
                   np.isclose(pos[18:, 1], 0) | np.isclose(pos[18:, 1], H)]
    np.testing.assert_array_equal(wall, expect)
    g2 = F.MACGrid2D(4, 6, h=0.5)
    assert g2.h == 0.5


def test_divergence_matches_numpy_and_projection_is_divergence_free(rng):
    g = F.MACGrid2D(24, 16, h=0.05)
    u = rng.standard_normal(g.n_faces)
    np.testing.assert_allclose(g.divergence(u), np_divergence(24, 16, 0.05, u), rtol=1e-13, atol=1e-12)
    assert np.abs(g.divergence(u)).max() > 1.0
    p = g.project(u)
    assert np.abs(g.divergence(p)).max() * g.h < 1e-12 * np.abs(p).max()
    assert np.all(p[g.wall_mask()] == 0)
    np.testing.assert_allclose(g.project(p), p, atol=1e-12)  # a projection
    # the removed part is a gradient: orthogonal to every divergence-free field
    q = g.project(rng.standard_normal(g.n_faces))
    u0 = u.copy()
    u0[g.wall_mask()] = 0
    assert abs((u0 - p) @ q) < 1e-10 * np.linalg.norm(u0) * np.linalg.norm(q)


def test_particle_in_rigid_rotation_stays_on_circle():
    g = F.MACGrid2D(32, 32)
    pos = F.face_positions(g)
    omega = 2 * np.pi
    c = 0.5
    u = np.where(np.arange(g.n_faces) < g.n_xfaces, -(pos[:, 1] - c) * omega, (pos[:, 0] - c) * omega)
    assert np.abs(g.divergence(u)).max() < 1e-10  # a linear field: exactly divergence-free
    p = np.array([[0.8, 0.5], [0.5, 0.35]])
    r0 = np.linalg.norm(p - c, axis=1)
    dt = 0.005
    for _ in range(int(round(1 / dt))):  # one revolution
        p = g.advect_particles(u, p, dt)
    r = np.linalg.norm(p - c, axis=1)
    assert np.all(np.abs(r - r0) < 5e-4)  # RK2 on a bilinear-exact field: O(dt^2) drift
    np.testing.assert_allclose(p, [[0.8, 0.5], [0.5, 0.35]], atol=5e-3)  # and back where it started


def test_velocity_interpolation_is_exact_for_linear_fields(rng):
    g = F.MACGrid2D(16, 12, h=0.1)
    pos = F.face_positions(g)
    a = rng.standard_normal(6)
    lin = lambda x, y, k: a[3 * k] + a[3 * k + 1] * x + a[3 * k + 2] * y  # noqa: E731
    u = np.where(np.arange(g.n_faces) < g.n_xfaces, lin(pos[:, 0], pos[:, 1], 0), lin(pos[:, 0], pos[:, 1], 1))
    pts = rng.uniform([0.0, 0.0], [1.6, 1.2], size=(20, 2))
    v = g.velocity_at(u, pts)
    np.testing.assert_allclose(v[:, 0], lin(pts[:, 0], np.clip(pts[:, 1], 0.05, 1.15), 0), atol=1e-12)
    np.testing.assert_allclose(v[:, 1], lin(np.clip(pts[:, 0], 0.05, 1.55), pts[:, 1], 1), atol=1e-12)


def test_wind_field_matches_numpy():
    g = F.MACGrid2D(10, 8)
    pos = F.face_positions(g)
    f = g.wind([0.4, 0.3], [0.6, -0.8], 5.0, 0.2)
    w = 5.0 * np.exp(-np.sum((pos - [0.4, 0.3]) ** 2, axis=1) / 0.04)
    expect = np.where(np.arange(g.n_faces) < g.n_xfaces, 0.6 * w, -0.8 * w)
    expect[g.wall_mask()] = 0
    np.testing.assert_allclose(f, expect, rtol=1e-13, atol=1e-15)


def test_full_run_divergence_free_smoke_and_particles(grid, run):
    assert np.abs(run.velocities).max() > 0.1
    for u in run.velocities[::10]:
        assert np.abs(grid.divergence(u)).max() * grid.h < 1e-11 * max(np.abs(u).max(), 1e-30)
    assert np.all(np.isfinite(run.particles))
    assert np.all((run.particles >= 0) & (run.particles <= 1))
    assert np.linalg.norm(run.particles[-1] - run.particles[0]) > 0.05  # the wind moved them
    # smoke: semi-Lagrangian advection stays within the initial bounds and moves with the flow
    rho0 = np.zeros(grid.n_cells)
    rho0[grid.n_cells // 2: grid.n_cells // 2 + 8] = 1.0
    r = F.full_run(grid, 20, DT, run.forces, density=rho0, u0=run.velocities[30])
    assert r.density.min() >= -1e-12 and r.density.max() <= 1 + 1e-12
    assert np.abs(r.density[-1] - rho0).max() > 0.1


def test_viscosity_dissipates_energy(grid, run):
    u0 = run.velocities[40]
    e = [np.sum(F.full_run(grid, 20, DT, (), u0=u0, viscosity=nu).velocities[-1] ** 2) for nu in (0.0, 0.01)]
    assert e[1] < e[0] < np.sum(u0 ** 2)


# --- 2./3. basis and reduced fluid -------------------------------------------------------------

def test_basis_orthonormal_divergence_free_free_slip(grid, basis):
    r = basis.shape[1]
    np.testing.assert_allclose(basis.T @ basis, np.eye(r), atol=1e-12)
    for b in basis.T:
        assert np.abs(np_divergence(NX, NX, grid.h, b)).max() * grid.h < 1e-12
        assert np.all(np.abs(b[grid.wall_mask()]) < 1e-14)
    assert grid.max_divergence(basis) < 1e-12


def test_advection_tensor_matches_numpy_and_is_antisymmetric(grid, basis, reduced):
    T = reduced.advection_tensor()
    r = basis.shape[1]
    assert T.shape == (r, r, r)
    for k in (0, 3, r - 1):
        M = np.array([np_advection(NX, NX, grid.h, basis[:, k], basis[:, j]) for j in range(r)]).T
        np.testing.assert_allclose(T[k], basis.T @ M, rtol=1e-10, atol=1e-10 * np.abs(T[k]).max())
    for A in T:
        assert np.abs(A + A.T).max() <= 1e-12 * np.abs(A).max()
    z = np.random.default_rng(3).standard_normal(r)
    np.testing.assert_allclose(reduced.advection_matrix(z), np.tensordot(z, T, axes=1), rtol=1e-12, atol=1e-12)


def test_full_advection_operator_is_skew_for_divergence_free_flux(grid, rng):
    u = grid.project(rng.standard_normal(grid.n_faces))
    q = grid.project(rng.standard_normal(grid.n_faces))
    # q' A(u) q = 0 (zero-definite, thesis sec. 3.3.1), but not for a divergent flux
    assert abs(q @ np_advection(NX, NX, grid.h, u, q)) < 1e-10 * np.abs(np_advection(NX, NX, grid.h, u, q)).sum()
    v = rng.standard_normal(grid.n_faces)
    v[grid.wall_mask()] = 0
    assert abs(q @ np_advection(NX, NX, grid.h, v, q)) > 1e-3


def test_energy_preserved_without_viscosity(reduced, basis, run):
    z0 = F.project(basis, run.velocities[40])
    Z = reduced.rollout(z0, np.zeros((1000, reduced.r)), DT)
    e = 0.5 * np.sum(Z ** 2, axis=1)
    assert np.abs(e / e[0] - 1).max() < 1e-10
    assert np.linalg.norm(Z[-1] - z0) > 0.1 * np.linalg.norm(z0)  # it did advect
    # step() is the same map
    np.testing.assert_allclose(reduced.step(z0, np.zeros(reduced.r), DT), Z[1], rtol=1e-14, atol=1e-14)


def test_diffusion_decay_as_predicted(grid, basis, run):
    nu = 0.02
    f1 = dr.ReducedFluid(grid, basis[:, :1].copy(), nu)  # r = 1: advection is 0, exact decay
    d = f1.diffusion_matrix()[0, 0]
    assert d < 0
    np.testing.assert_allclose(d, basis[:, 0] @ np_laplacian_apply(grid, basis[:, 0]), rtol=1e-12)
    Z = f1.rollout(np.array([2.0]), np.zeros((100, 1)), DT)
    np.testing.assert_allclose(Z[:, 0], 2.0 * np.exp(nu * d * DT * np.arange(101)), rtol=1e-12)
    # r > 1: each step's energy ratio lies between the extreme diffusion rates
    f = dr.ReducedFluid(grid, basis, nu)
    D = f.diffusion_matrix()
    np.testing.assert_allclose(D, D.T, atol=1e-12)
    lam = np.linalg.eigvalsh(D)
    assert lam.max() < 0
    Z = f.rollout(F.project(basis, run.velocities[40]), np.zeros((200, f.r)), DT)
    ratio = np.sum(Z[1:] ** 2, 1) / np.sum(Z[:-1] ** 2, 1)
    assert np.all(ratio <= np.exp(2 * nu * DT * lam.max()) * (1 + 1e-12))
    assert np.all(ratio >= np.exp(2 * nu * DT * lam.min()) * (1 - 1e-12))


def np_laplacian_apply(grid, u):
    """5-point face Laplacian with zero wall faces (Dirichlet) and free-slip tangential walls."""
    nx, ny, h = grid.nx, grid.ny, grid.h
    ux = u[:grid.n_xfaces].reshape(ny, nx + 1)
    uy = u[grid.n_xfaces:].reshape(ny + 1, nx)

    def lap(a, normal_axis):
        out = np.zeros_like(a)
        for axis in (0, 1):
            for s in (1, -1):
                nb = np.roll(a, -s, axis=axis)
                valid = np.ones_like(a, bool)
                idx = [slice(None)] * 2
                idx[axis] = -1 if s == 1 else 0
                valid[tuple(idx)] = False
                if axis == normal_axis:  # the wall neighbour is a zero Dirichlet value
                    out += np.where(valid, nb - a, -a)
                else:  # free slip: zero gradient
                    out += np.where(valid, nb - a, 0.0)
        return out / h ** 2

    ox, oy = lap(ux, 1), lap(uy, 0)
    ox[:, [0, -1]] = 0
    oy[[0, -1], :] = 0
    return np.r_[ox.ravel(), oy.ravel()]


def test_laplacian_reference_sanity(grid, basis):
    # the reference itself: D is symmetric negative on the basis
    M = np.array([np_laplacian_apply(grid, b) for b in basis.T]).T
    D = basis.T @ M
    np.testing.assert_allclose(D, D.T, atol=1e-9 * np.abs(D).max())
    np.testing.assert_allclose(dr.ReducedFluid(grid, basis, 0.1).diffusion_matrix(), D, rtol=1e-10,
                               atol=1e-10 * np.abs(D).max())


def test_reduced_jacobian_finite_differences(grid, basis, rng):
    f = dr.ReducedFluid(grid, basis, 0.05)
    z = rng.standard_normal(f.r)
    np.testing.assert_allclose(f.jacobian(z), fd_jacobian(f.dynamics, z), rtol=1e-6, atol=1e-6 * np.abs(f.jacobian(z)).max())
    T = f.advection_tensor()
    np.testing.assert_allclose(f.dynamics(z), np.tensordot(z, T, 1) @ z + 0.05 * f.diffusion_matrix() @ z,
                               rtol=1e-12, atol=1e-12)


def test_reduced_tracks_full_run(grid, basis, reduced, run):
    W = forces(grid, run, STEPS) @ basis
    Zr = reduced.rollout(F.project(basis, run.velocities[0]), W, DT)
    Zf = F.project(basis, run.velocities)
    err = np.linalg.norm(Zr - Zf, axis=1) / np.maximum(np.linalg.norm(Zf, axis=1), 1e-12)
    assert err[1:31].max() < 0.15
    assert err[1:].max() < 0.5


# --- 4. particles ------------------------------------------------------------------------------

def test_modes_interpolate_basis_and_gradients_fd(grid, basis, reduced, rng):
    for x in rng.uniform(0.05, 0.95, size=(5, 2)):
        Psi = reduced.modes(x)
        z = rng.standard_normal(reduced.r)
        np.testing.assert_allclose(Psi @ z, grid.velocity_at(basis @ z, x[None])[0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(reduced.velocity(z, x[None])[0], Psi @ z, rtol=1e-12, atol=1e-12)
        dx, dy = reduced.mode_gradients(x)
        e = 1e-7
        np.testing.assert_allclose(dx, (reduced.modes(x + [e, 0]) - reduced.modes(x - [e, 0])) / (2 * e), atol=1e-5)
        np.testing.assert_allclose(dy, (reduced.modes(x + [0, e]) - reduced.modes(x - [0, e])) / (2 * e), atol=1e-5)
        assert np.abs(dx).max() > 1e-3


def test_particle_model_jacobian_appendix_c(grid, basis, rng):
    f = dr.ReducedFluid(grid, basis, 0.01)
    m = F.FluidParticles(f, 3)
    r = f.r
    assert m.state_dim() == 6 + r and m.control_dim() == r
    np.testing.assert_array_equal(m.control_matrix(), np.r_[np.zeros((6, r)), np.eye(r)])
    x = np.r_[rng.uniform(0.1, 0.9, 6), rng.standard_normal(r)]
    J = m.jacobian(x)
    np.testing.assert_allclose(J, fd_jacobian(m.dynamics, x, 1e-7), rtol=1e-5, atol=1e-5 * np.abs(J).max())
    # block structure: particles do not feel each other, z does not feel the particles
    assert np.all(J[:2, 2:6] == 0) and np.all(J[6:, :6] == 0)
    np.testing.assert_allclose(J[0:2, 6:], f.modes(x[0:2]), rtol=1e-14)
    np.testing.assert_allclose(J[6:, 6:], f.jacobian(x[6:]), rtol=1e-14)
    np.testing.assert_allclose(dr.models.finite_difference_jacobian(m, x), J, rtol=1e-4, atol=1e-4 * np.abs(J).max())


def test_particles_follow_full_run(grid, basis, reduced, run):
    W = forces(grid, run, STEPS) @ basis
    m = F.FluidParticles(reduced, 2)
    x = np.r_[run.particles[0].ravel(), F.project(basis, run.velocities[0])]
    P = [x[:4]]
    for i in range(STEPS):
        x = m.step(x, W[i], DT)
        P.append(x[:4])
    P = np.array(P).reshape(-1, 2, 2)
    travel = np.linalg.norm(run.particles[-1] - run.particles[0], axis=1)
    err = np.linalg.norm(P - run.particles, axis=2)
    assert np.all(err[-1] < 0.35 * travel)
    assert np.all(err[:30].max(axis=0) < 0.02)


def test_particles_leaving_domain_are_clamped(grid, basis, reduced):
    m = F.FluidParticles(reduced, 1)
    z = 50 * np.ones(reduced.r)
    x = np.r_[1.5, -0.5, z]
    for _ in range(5):
        x = m.step(x, np.zeros(reduced.r), DT)
        assert np.all(np.isfinite(x))
        assert 0 <= x[0] <= 1 and 0 <= x[1] <= 1
    assert np.all(np.isfinite(grid.advect_particles(basis[:, 0] * 1e3, np.array([[5.0, -3.0]]), 1.0)))


# --- bad input ---------------------------------------------------------------------------------

def test_bad_input(grid, basis):
    with pytest.raises(ValueError, match="nx"):
        F.MACGrid2D(1, 5)
    with pytest.raises(ValueError, match="h"):
        F.MACGrid2D(4, 4, h=-1.0)
    with pytest.raises(ValueError, match=r"basis.*\(2112, r\)"):
        dr.ReducedFluid(grid, basis[:-1], 0.0)
    with pytest.raises(ValueError, match="basis"):
        dr.ReducedFluid(grid, basis[:, 0], 0.0)
    bad = basis.copy()
    bad[5, 0] = np.nan
    with pytest.raises(ValueError, match="basis"):
        dr.ReducedFluid(grid, bad, 0.0)
    with pytest.raises(ValueError, match="viscosity"):
        dr.ReducedFluid(grid, basis, -1.0)
    with pytest.raises(TypeError):
        dr.ReducedFluid(grid, basis.astype(complex), 0.0)
    f = dr.ReducedFluid(grid, basis, 0.0)
    with pytest.raises(ValueError, match=r"z.*\(12,\)"):
        f.step(np.zeros(11), np.zeros(12), DT)
    with pytest.raises(ValueError, match="dt"):
        f.step(np.zeros(12), np.zeros(12), 0.0)
    with pytest.raises(ValueError, match="z"):
        f.advection_matrix(np.full(12, np.nan))
    with pytest.raises(ValueError, match="u"):
        grid.project(np.zeros(5))
    with pytest.raises(ValueError, match="points"):
        grid.velocity_at(np.zeros(grid.n_faces), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="width"):
        grid.wind([0.5, 0.5], [1, 0], 1.0, 0.0)
    with pytest.raises(ValueError, match="snapshots"):
        F.velocity_basis(grid, np.zeros((4, 7)), 2)


def test_non_divergence_free_basis_warns(grid, rng):
    B, _ = np.linalg.qr(rng.standard_normal((grid.n_faces, 3)))
    with pytest.warns(RuntimeWarning, match="divergence"):
        dr.ReducedFluid(grid, B, 0.0)


def test_divergence_free_basis_does_not_warn(grid, basis):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the test
        rf = dr.ReducedFluid(grid, basis, 0.0)
    assert rf.r == basis.shape[1]


def test_perlin_noise_continuous_and_seeded():
    t = np.linspace(0, 5, 5001)
    n = fluid_forcing.perlin(t, seed=2, channels=3)
    assert n.shape == (5001, 3)
    assert np.abs(np.diff(n, axis=0)).max() < 5e-3  # continuous
    np.testing.assert_allclose(n[::1000], 0, atol=1e-12)  # zero at the lattice points
    assert n.std() > 0.05
    assert not np.allclose(n, fluid_forcing.perlin(t, seed=3, channels=3))
    np.testing.assert_array_equal(n, fluid_forcing.perlin(t, seed=2, channels=3))


def test_random_winds_biased_to_fast_regions(grid, run):
    u = run.velocities[40]
    pos = F.face_positions(grid)
    fast = pos[np.argsort(u ** 2)[-grid.n_faces // 10:]]  # the fastest 10% of the faces
    winds = fluid_forcing.random_winds(grid, 200, 50, seed=3, velocity=u)
    c = np.array([w.center for w in winds])
    near = np.min(np.linalg.norm(c[:, None] - fast[None], axis=2), axis=1) < 1e-12
    assert near.mean() > 0.4  # uniform placement would give about 0.1
    at = fluid_forcing.random_winds(grid, 2, 50, centers=[[0.1, 0.2], [0.3, 0.4]])
    assert [w.center for w in at] == [(0.1, 0.2), (0.3, 0.4)]
    with pytest.raises(ValueError, match="centers"):
        fluid_forcing.random_winds(grid, 3, 50, centers=[[0.1, 0.2]])


def test_non_orthonormal_basis_warns(grid, basis):
    with pytest.warns(RuntimeWarning, match="orthonormal"):
        f = dr.ReducedFluid(grid, 2.0 * basis, 0.0)
    assert f.orthonormality_error == pytest.approx(3.0)  # max |4 I - I|


def test_precomputation_reports_progress_and_stops_on_callback_error(grid, basis):
    calls = []
    dr.ReducedFluid(grid, basis, 0.0, progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1] == (basis.shape[1], basis.shape[1])

    def stop(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        dr.ReducedFluid(grid, basis, 0.0, progress=stop)
