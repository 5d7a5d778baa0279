"""3D reduced fluid: the conservation-form stencil (eq. 3.13-3.14) against a
NumPy transcription, antisymmetry (eq. 3.15), energy, Jacobians, particles
with drift, agreement with the full solver, threads, bad input."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import directable as dr
from directable import fluid as F
from directable.models import finite_difference_jacobian

# --- independent NumPy reference ---------------------------------------------------------------


def _blocks(g, v):
    nx, ny, nz = g.nx, g.ny, g.nz
    a, b = g.n_xfaces, g.n_xfaces + g.n_yfaces
    return [v[:a].reshape(nz, ny, nx + 1), v[a:b].reshape(nz, ny + 1, nx), v[b:].reshape(nz + 1, ny, nx)]


def _at(axis, s, ndim=3):
    idx = [slice(None)] * ndim
    idx[axis] = s
    return tuple(idx)


def np_advection(g, u, q):
    """-div(u q) on the face control volumes of a 3D MAC grid (eq. 3.13 with the flux velocities of eq. 3.14),
    by array slicing: component a lives on array axis 2 - a (x on the last axis)."""
    U, Q = _blocks(g, u), _blocks(g, q)
    out = [np.zeros_like(b) for b in Q]
    for a in range(3):
        A = 2 - a
        # flux along a itself, through the cell centres
        Fc = 0.5 * (U[a][_at(A, slice(None, -1))] + U[a][_at(A, slice(1, None))]) \
            * 0.5 * (Q[a][_at(A, slice(None, -1))] + Q[a][_at(A, slice(1, None))]) / g.h
        out[a][_at(A, slice(None, -1))] -= Fc
        out[a][_at(A, slice(1, None))] += Fc
        for d in range(3):
            if d == a:
                continue
            D = 2 - d
            ud = U[d][_at(D, slice(1, -1))]  # interior d-faces: the edges between neighbouring a-faces
            V = 0.5 * (ud[_at(A, slice(None, -1))] + ud[_at(A, slice(1, None))])  # averaged over the two cells
            qin = Q[a][_at(A, slice(1, -1))]  # interior a-faces
            Fe = V * 0.5 * (qin[_at(D, slice(None, -1))] + qin[_at(D, slice(1, None))]) / g.h
            o = out[a][_at(A, slice(1, -1))]
            o[_at(D, slice(None, -1))] -= Fe
            o[_at(D, slice(1, None))] += Fe
    return np.concatenate([o.ravel() for o in out])


def divergence_free_basis(g, r, rng):
    """r orthonormal divergence-free fields of g (projected random fields, orthonormalised: combinations stay
    divergence-free and zero on the closed faces)."""
    S = g.project(rng.standard_normal((r, g.n_faces)), tol=1e-13)
    return np.ascontiguousarray(np.linalg.qr(S.T)[0])


# --- fixtures ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def grid():
    return F.MACGrid3D(5, 4, 3)


@pytest.fixture(scope="module")
def basis(grid):
    return divergence_free_basis(grid, 6, np.random.default_rng(7))


@pytest.fixture(scope="module")
def reduced(grid, basis):
    return dr.ReducedFluid(grid, basis, 0.0)


# --- tests -------------------------------------------------------------------------------------


def test_reduced_fluid_dispatches_to_3d(reduced, grid, basis):
    assert isinstance(reduced, F.ReducedFluid3D) and isinstance(reduced, dr._core.GalerkinFluid)
    assert reduced.r == 6 and reduced.grid is not None
    assert reduced.divergence_error < 1e-12 and reduced.orthonormality_error < 1e-12


def test_advection_tensor_matches_numpy_stencil(grid, basis, reduced):
    T = reduced.advection_tensor()
    for k in range(basis.shape[1]):
        M = np.array([np_advection(grid, basis[:, k], basis[:, j]) for j in range(basis.shape[1])]).T
        np.testing.assert_allclose(T[k], basis.T @ M, rtol=1e-11, atol=1e-12 * np.abs(T).max())


@pytest.mark.parametrize("with_solid", [False, True])
def test_advection_matrices_antisymmetric(rng, with_solid):
    solid = None
    if with_solid:
        solid = np.zeros((5, 6, 7), bool)
        solid[1:4, 2:4, 3:5] = True
    g = F.MACGrid3D(7, 6, 5, solid=solid)
    B = divergence_free_basis(g, 10, rng)
    T = dr.ReducedFluid(g, B).advection_tensor()
    assert np.abs(T + T.transpose(0, 2, 1)).max() < 1e-12 * max(1.0, np.abs(T).max())
    assert np.abs(T).max() > 1e-3  # not trivially zero
    # the full stencil: skew for a divergence-free flux, not for a divergent one
    u, q = B @ rng.standard_normal(10), rng.standard_normal(g.n_faces) * (~g.closed_mask())
    assert abs(q @ np_advection(g, u, q)) < 1e-10 * np.abs(np_advection(g, u, q)).sum()
    v = rng.standard_normal(g.n_faces) * (~g.closed_mask())
    assert abs(q @ np_advection(g, v, q)) > 1e-3


def test_energy_preserved_over_1000_steps(reduced, rng):
    z0 = rng.standard_normal(reduced.r)
    Z = reduced.rollout(z0, np.zeros((1000, reduced.r)), 0.05)
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), np.linalg.norm(z0), rtol=1e-10)
    assert np.linalg.norm(Z[-1] - z0) > 1e-3  # the state moves


def test_viscous_decay_and_jacobian(grid, basis, rng):
    f = dr.ReducedFluid(grid, basis, 0.05)
    D = f.diffusion_matrix()
    assert np.linalg.eigvalsh(D).max() < 0
    z = rng.standard_normal(f.r)
    np.testing.assert_allclose(f.jacobian(z), finite_difference_jacobian_z(f, z), rtol=1e-6,
                               atol=1e-7 * np.abs(f.jacobian(z)).max())
    Z = f.rollout(z, np.zeros((20, f.r)), 0.05)
    assert np.all(np.diff(np.linalg.norm(Z, axis=1)) < 0)


def finite_difference_jacobian_z(f, z, eps=1e-6):
    J = np.empty((z.size, z.size))
    for j in range(z.size):
        e = np.zeros(z.size)
        e[j] = eps
        J[:, j] = (f.dynamics(z + e) - f.dynamics(z - e)) / (2 * eps)
    return J


def test_modes_interpolate_basis_and_gradients_fd(grid, basis, reduced, rng):
    z = rng.standard_normal(reduced.r)
    P = rng.uniform(0.15, [1.0 - 0.15, 0.8 - 0.15, 0.6 - 0.15], size=(6, 3))
    np.testing.assert_allclose(reduced.velocity(z, P), grid.velocity_at(basis @ z, P), rtol=1e-12, atol=1e-14)
    for x in P:
        G = reduced.mode_gradients(x)
        for d in range(3):
            e = np.zeros(3)
            e[d] = 1e-6
            fd = (reduced.modes(x + e) - reduced.modes(x - e)) / 2e-6
            np.testing.assert_allclose(G[d], fd, atol=1e-6)


def test_particle_model_jacobian_and_drift(grid, basis, reduced, rng):
    m = F.FluidParticles3D(reduced, 2, drift=(0.0, -0.1, 0.0))
    x = np.r_[rng.uniform(0.2, 0.5, 6), rng.standard_normal(reduced.r)]
    J = m.jacobian(x, 0.0)
    np.testing.assert_allclose(J, finite_difference_jacobian(m, x), rtol=1e-5, atol=1e-6 * np.abs(J).max())
    zero = np.r_[np.full(6, 0.3), np.zeros(reduced.r)]
    xn = m.step(zero, np.zeros(reduced.r), 0.1)
    np.testing.assert_allclose(xn[:6].reshape(2, 3) - 0.3, [[0, -0.01, 0]] * 2, atol=1e-15)


def test_rigid_rotation_mode_keeps_particles_on_their_circle():
    g = F.MACGrid3D(24, 24, 6)
    X = F.face_positions3d(g)
    u = np.zeros(g.n_faces)
    a, b = g.n_xfaces, g.n_xfaces + g.n_yfaces
    u[:a], u[a:b] = -(X[:a, 1] - 0.5), X[a:b, 0] - 0.5
    u = g.project(u, tol=1e-12)  # the box's closest divergence-free field: rigid away from the walls
    s = np.linalg.norm(u)
    f = dr.ReducedFluid(g, (u / s)[:, None])
    m = F.FluidParticles3D(f, 2)
    x = np.r_[0.65, 0.5, 0.1, 0.5, 0.35, 0.2, s]  # z = s: the rotation at unit angular velocity
    r0 = np.array([0.15, 0.15])
    dt = 2 * np.pi / 400
    for _ in range(400):
        x = m.step(x, np.zeros(1), dt)
    r = np.linalg.norm(x[:6].reshape(2, 3)[:, :2] - 0.5, axis=1)
    np.testing.assert_allclose(r, r0, rtol=0.03)  # the projected field is rigid to the discretisation error
    np.testing.assert_allclose(x[[2, 5]], [0.1, 0.2], atol=1e-12)
    assert x[-1] == pytest.approx(s, rel=1e-12)


def test_reduced_tracks_full_run():
    g = F.MACGrid3D(10, 10, 10)
    f = g.wind([0.5, 0.3, 0.5], [0.3, 1, 0], 6.0, 0.15)
    run = F.full_run3d(g, 30, 0.02, force=lambda i: f if i < 5 else None)
    B = F.velocity_basis(g, run.velocities[1:], 12)
    red = dr.ReducedFluid(g, B)
    W = np.array([(f if i < 5 else np.zeros(g.n_faces)) @ B for i in range(30)])
    Zr = red.rollout(np.zeros(12), W, 0.02)
    Zf = run.velocities @ B
    err = np.linalg.norm(Zr - Zf, axis=1)[1:] / np.linalg.norm(Zf, axis=1)[1:]
    assert err[:10].max() < 0.1 and err.max() < 0.5


def test_reduced_particles_pushed_out_of_obstacle(grid, basis, reduced, rng):
    z = rng.standard_normal(reduced.r)
    box = F.Obstacle3D(F.Shape3D.box(0.3, 0.3, 0.3), (0.5, 0.4, 0.3))
    P = rng.uniform(0.3, 0.6, size=(300, 3)) * [1, 1, 0.5]
    out, pushed = reduced.advect_particles(z, z, P, 0.01, drift=(0, -0.05, 0), obstacles=[box])
    assert pushed > 0 and not box.inside(out).any()
    # without obstacles: RK2 through Psi z + drift, checked against the model's own step
    m = F.FluidParticles3D(reduced, 1, drift=(0, -0.05, 0))
    x = np.r_[P[0], z]
    xn = m.step(x, np.zeros(reduced.r), 0.01)
    zn = xn[3:]
    one, _ = reduced.advect_particles(z, zn, P[:1], 0.01, drift=(0, -0.05, 0))
    np.testing.assert_allclose(one[0], xn[:3], atol=1e-15)
    # the team size never changes the result (each particle is independent)
    data = reduced.create_data()
    ref, _ = reduced.advect_particles(z, zn, P, 0.01, obstacles=[box], threads=1)
    for _ in range(8):  # the measured team choice probes both sizes
        out, _ = reduced.advect_particles(z, zn, P, 0.01, obstacles=[box], data=data)
        np.testing.assert_array_equal(out, ref)


def test_threads_share_one_model(reduced, rng):
    z0 = rng.standard_normal(reduced.r)
    ref = [z0]
    for _ in range(50):
        ref.append(reduced.step(ref[-1], np.zeros(reduced.r), 0.05))
    results = {}

    def work(k):
        z = z0
        for _ in range(50):
            z = reduced.step(z, np.zeros(reduced.r), 0.05)
        results[k] = z

    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for k in range(4):
        np.testing.assert_array_equal(results[k], ref[-1])


def test_bad_input(grid, basis, reduced):
    with pytest.raises(ValueError, match=r"basis must have shape \(\d+, r\) with r >= 1 for a 5x4x3 grid"):
        dr.ReducedFluid(grid, basis[:-1])
    with pytest.raises(ValueError, match="viscosity must be finite"):
        dr.ReducedFluid(grid, basis, -1.0)
    with pytest.warns(RuntimeWarning, match="not divergence-free"):
        dr.ReducedFluid(grid, np.linalg.qr(np.random.default_rng(0).standard_normal((grid.n_faces, 2)))[0])
    with pytest.raises(ValueError, match=r"z must have shape \(6,\)"):
        reduced.step(np.zeros(5), np.zeros(6), 0.1)
    with pytest.raises(ValueError, match="drift must be finite"):
        F.FluidParticles3D(reduced, 1, drift=(0, np.nan, 0))
    with pytest.raises(ValueError, match="z_next must have shape"):
        reduced.advect_particles(np.zeros(6), np.zeros(2), np.zeros((1, 3)), 0.1)


def test_fluid_particles_dispatches_to_3d(reduced):
    m = F.FluidParticles(reduced, 3, drift=(0.0, -0.1, 0.0))
    assert isinstance(m, F.FluidParticles3D) and m.particles == 3 and m.state_dim() == 9 + reduced.r
    np.testing.assert_array_equal(m.drift, [0.0, -0.1, 0.0])


def test_particle_kernel_against_numpy_rk2(grid, basis, reduced, rng):
    """The particle kernel (parallel over particles in cell order) against a
    NumPy RK2 through SciPy interpolation matrices: a dense cloud, some
    particles outside the domain (clamped), the same result on any team."""
    from reference.fluid3d import np_particles_rk2

    z, zn = rng.standard_normal(reduced.r), rng.standard_normal(reduced.r)
    hi = np.array([grid.nx, grid.ny, grid.nz]) * grid.h
    P = rng.uniform(-0.02, 1.02, size=(3000, 3)) * hi  # some outside: clamped
    want = np_particles_rk2(grid, basis, z, 0.5 * (z + zn), P, 0.01, drift=(0.0, -0.05, 0.0))
    data = reduced.create_data()
    for threads in (1, 2, 0):
        out, pushed = reduced.advect_particles(z, zn, P, 0.01, drift=(0, -0.05, 0), threads=threads, data=data)
        np.testing.assert_allclose(out, want, rtol=0, atol=1e-13)
        assert pushed == 0
    # a second call with other states and fewer particles reuses the data's buffers
    out, _ = reduced.advect_particles(zn, z, P[:500], 0.02, data=data)
    np.testing.assert_allclose(out, np_particles_rk2(grid, basis, zn, 0.5 * (z + zn), P[:500], 0.02), atol=1e-13)
