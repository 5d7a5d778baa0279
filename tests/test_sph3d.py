"""3D SPH fluid and its prediction model (issue 6, sec. 2: "3D once 2D is complete")."""
from __future__ import annotations

import numpy as np
import pytest

from directable import mpc, sph

DX = 0.02
H = 1.3 * DX


def _W(r, h, dim):
    sigma = 10.0 / (7.0 * np.pi * h * h) if dim == 2 else 1.0 / (np.pi * h**3)
    q = r / h
    return sigma * np.where(q < 1, 1 - 1.5 * q**2 + 0.75 * q**3, np.where(q < 2, 0.25 * (2 - q) ** 3, 0.0))


@pytest.mark.parametrize("dim", [2, 3])
def test_kernel_integrates_to_one(dim):
    """Integral of W = 1 (radial quadrature of the formula), and the C++ kernel's
    lattice sum: an interior particle of a regular lattice has density rho0."""
    h = 0.05
    r = np.linspace(0, 2 * h, 20001)
    shell = 2 * np.pi * r if dim == 2 else 4 * np.pi * r**2
    assert np.trapezoid(_W(r, h, dim) * shell, r) == pytest.approx(1.0, rel=1e-6)
    dx = 0.01
    lo, hi = np.zeros(dim), np.full(dim, 0.12)
    pts = sph.block(lo, hi, dx)
    cls = sph.SPHFluid2D if dim == 2 else sph.SPHFluid3D
    fluid = cls(pts, np.zeros((0, dim)), spacing=dx, h=2.0 * dx, gravity=np.zeros(dim))
    fluid.step()
    centre = np.argmin(np.linalg.norm(pts - hi / 2, axis=1))
    assert fluid.densities[centre] == pytest.approx(1000.0, rel=2e-3)
    # and it equals the brute-force NumPy sum with the 3D / 2D normalisation
    d = np.linalg.norm(pts - pts[centre], axis=1)
    assert fluid.densities[centre] == pytest.approx(fluid.mass * _W(d, 2.0 * dx, dim).sum(), rel=1e-12)


def _small_fluid3(rng, jitter=0.15, **kw):
    pts = sph.block((0.3, 0.3, 0.0), (0.36, 0.38, 0.06), DX)
    pts = pts + jitter * DX * rng.uniform(-1, 1, pts.shape)
    walls = sph.box_walls((0.0, 0.0, 0.0), (1.0, 1.0, 1.0), DX)
    walls = walls[np.linalg.norm(walls - [0.33, 0.34, 0.0], axis=1) < 0.2]  # the nearby part of the floor
    args = dict(spacing=DX, h=H)
    args.update(kw)
    return sph.SPHFluid3D(pts, walls, **args), pts, walls


def test_prediction_vjp_3d_equals_finite_differences(rng):
    fluid, pts, walls = _small_fluid3(rng)
    N = fluid.size
    assert N == 36 and fluid.mass == pytest.approx(1000.0 * DX**3)
    pred = fluid.prediction_model()
    assert (pred.n, pred.s) == (6 * N, 3 * N)
    x = np.concatenate([pts.ravel(), rng.standard_normal(3 * N) * 0.01])
    u = rng.standard_normal(3 * N) * 1e-4
    lam = rng.standard_normal(6 * N)
    # the particles touch the floor: pressures are positive and wall pairs take part
    assert np.abs(pred.pressure_acceleration(pts.ravel())).max() > 1.0
    gx, gu = pred.vjp(x, u, lam)
    h = 1e-7
    fd_x = np.array([lam @ (pred.step(x + h * e, u) - pred.step(x - h * e, u)) / (2 * h) for e in np.eye(6 * N)])
    hu = 1e-3
    fd_u = np.array([lam @ (pred.step(x, u + hu * e) - pred.step(x, u - hu * e)) / (2 * hu) for e in np.eye(3 * N)])
    np.testing.assert_allclose(gx, fd_x, rtol=1e-5, atol=1e-6 * np.abs(fd_x).max())
    np.testing.assert_allclose(gu, fd_u, rtol=1e-7, atol=1e-9 * np.abs(fd_u).max())
    # the tape of window step i is reused only at the same positions
    xn = pred.step(x, u, 2)
    np.testing.assert_array_equal(pred.vjp(x, u, lam, 2)[0], gx)
    np.testing.assert_array_equal(pred.vjp(xn, u, lam, 2)[0], pred.vjp(xn, u, lam, 3)[0])


def test_prediction_step_3d_matches_numpy(rng):
    fluid, pts, walls = _small_fluid3(rng)
    pred = fluid.prediction_model()
    N, m, dt, B = fluid.size, fluid.mass, fluid.dt, 1000.0 * 20.0**2 / 7.0
    dff = pts[:, None, :] - pts[None, :, :]
    rff = np.linalg.norm(dff, axis=2)
    dfb = pts[:, None, :] - walls[None, :, :]
    rfb = np.linalg.norm(dfb, axis=2)
    rho = m * (_W(rff, H, 3).sum(1) + _W(rfb, H, 3).sum(1))
    P = np.maximum(0.0, B * ((rho / 1000.0) ** 7 - 1)) / rho**2
    sigma = 1.0 / (np.pi * H**3)
    q = lambda r: r / H  # noqa: E731
    dW = lambda r: sigma / H * np.where(q(r) < 1, -3 * q(r) + 2.25 * q(r) ** 2,  # noqa: E731
                                        np.where(q(r) < 2, -0.75 * (2 - q(r)) ** 2, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        gff = np.where(rff[..., None] > 0, (dW(rff) / rff)[..., None] * dff, 0.0)
        gfb = (dW(rfb) / rfb)[..., None] * dfb
    a = -m * ((P[:, None] + P[None, :])[..., None] * gff).sum(1) - m * (2 * P[:, None, None] * gfb).sum(1)
    np.testing.assert_allclose(pred.pressure_acceleration(pts.ravel()), a.ravel(), rtol=1e-9,
                               atol=1e-9 * np.abs(a).max())
    x = np.concatenate([pts.ravel(), np.zeros(3 * N)])
    vn = dt * (a.ravel() + np.tile([0.0, 0.0, -9.81], N))
    np.testing.assert_allclose(pred.step(x, np.zeros(3 * N)), np.concatenate([pts.ravel() + dt * vn, vn]),
                               rtol=1e-12, atol=1e-12)


def test_column_rests_in_a_3d_box():
    """A tank filled to half height stays in, comes to rest, barely compressed."""
    pts = sph.block((0.0, 0.0, 0.0), (0.1, 0.1, 0.1), DX)
    fluid = sph.SPHFluid3D(pts, sph.box_walls((0, 0, 0), (0.1, 0.1, 0.2), DX), spacing=DX, h=H, viscosity=0.2)
    z0 = pts[:, 2].mean()
    fluid.step(steps=500)
    p = fluid.positions
    assert np.all(p >= 0) and np.all(p[:, :2] <= 0.1) and np.all(p[:, 2] <= 0.2)
    assert np.sqrt((fluid.velocities**2).sum(1).mean()) < 0.08
    assert (fluid.densities / 1000.0 - 1).max() < 0.03  # weakly compressible
    assert abs(p[:, 2].mean() - z0) < 0.02


def test_gravity_force_and_momentum_3d(rng):
    one = np.array([[0.5, 0.5, 0.5]])
    held = sph.SPHFluid3D(one, np.zeros((0, 3)), spacing=DX, h=H)
    held.step(force=np.array([[0.0, 0.0, 9.81 * held.mass]]), steps=50)
    np.testing.assert_allclose(held.positions, one, atol=1e-12)
    free = sph.SPHFluid3D(one, np.zeros((0, 3)), spacing=DX, h=H)
    free.step(steps=100)
    t = 100 * free.dt
    assert free.positions[0, 2] == pytest.approx(0.5 - 9.81 * t * t / 2, rel=0.02)
    np.testing.assert_allclose(free.positions[0, :2], [0.5, 0.5])
    # an isolated compressed blob: pairwise forces cancel, total momentum stays zero
    blob = sph.block((0.4, 0.4, 0.4), (0.48, 0.48, 0.48), 0.8 * DX)
    blob = blob + 0.1 * DX * rng.uniform(-1, 1, blob.shape)
    fluid = sph.SPHFluid3D(blob, np.zeros((0, 3)), spacing=DX, h=H, gravity=np.zeros(3))
    fluid.step(steps=20)
    v = fluid.velocities
    assert np.abs(v).max() > 0.05  # it expands
    assert np.abs(v.sum(0)).max() < 1e-9 * np.abs(v).sum()


def test_sphere_pushes_particles_out_3d():
    pts = sph.block((0.4, 0.4, 0.4), (0.6, 0.6, 0.5), DX)
    fluid = sph.SPHFluid3D(pts, np.zeros((0, 3)), spacing=DX, h=H, gravity=np.zeros(3))
    fluid.set_sphere([0.5, 0.5, 0.45], 0.05, [0.0, 0.0, 0.0])
    fluid.step()
    assert np.all(np.linalg.norm(fluid.positions - [0.5, 0.5, 0.45], axis=1) >= 0.05 - 1e-12)
    fluid.set_sphere([0.3, 0.5, 0.45], 0.04, [2.0, 0.0, 0.0])
    fluid.step(steps=100)
    np.testing.assert_allclose(fluid.sphere_centre, [0.3 + 2.0 * 100 * fluid.dt, 0.5, 0.45])
    assert fluid.velocities[:, 0].max() > 0.5


def test_mpc_holds_a_3d_shape_better_than_no_control():
    """A tiny floating cube held against gravity by MPC over the 3D prediction model."""
    ref = sph.block((0.4, 0.4, 0.5), (0.48, 0.48, 0.58), DX)
    N, substeps, frames, Hz = len(ref), 5, 20, 2

    def run(control):
        fluid = sph.SPHFluid3D(ref, np.zeros((0, 3)), spacing=DX, h=H, viscosity=0.2)
        g = np.tile([0.0, 0.0, 9.81 * fluid.mass], N)
        x_ref = np.concatenate([ref.ravel(), np.zeros(3 * N)])
        W = np.r_[1e4 * np.ones(3 * N), np.zeros(3 * N)]
        for _ in range(frames):
            F = np.zeros((N, 3))
            if control:
                pred = fluid.prediction_model(dt=substeps * fluid.dt)
                opt = mpc.HorizonOptimizer(pred, Hz, W, 1e-8, W, iterations=8)
                res = opt.solve(sph.state(fluid), np.tile(x_ref, (Hz + 1, 1)), u0=np.tile(g, (Hz, 1)))
                assert res.cost <= res.cost_initial
                F = res.u[0].reshape(N, 3)
            fluid.step(F, steps=substeps)
        return np.linalg.norm(fluid.positions - ref, axis=1).mean()

    free, held = run(False), run(True)
    assert free > 0.01  # fell about g t^2 / 2 = 0.012
    assert held < 0.3 * free


def test_bad_input_3d(rng):
    fluid, pts, walls = _small_fluid3(rng)
    N = fluid.size
    with pytest.raises(ValueError, match="centre"):
        fluid.set_sphere([0.5, 0.5, 1.5], 0.1, [0, 0, 0])
    with pytest.raises(ValueError, match="centre"):
        fluid.set_sphere([0.5, 0.5], 0.1, [0, 0, 0])
    with pytest.raises(ValueError, match="radius"):
        fluid.set_sphere([0.5, 0.5, 0.5], 0.0, [0, 0, 0])
    with pytest.raises(ValueError, match="force"):
        fluid.step(force=np.zeros((N, 2)))
    f = np.zeros((N, 3))
    f[0, 0] = np.nan
    with pytest.raises(ValueError, match="force"):
        fluid.step(force=f)
    with pytest.raises(ValueError, match="fluid"):
        sph.SPHFluid3D(np.zeros((4, 2)), walls, spacing=DX, h=H)
    with pytest.raises(ValueError, match="outside"):
        sph.SPHFluid3D(np.array([[0.5, 0.5, -0.5]]), walls, spacing=DX, h=H)
    with pytest.raises(ValueError, match="diverged"):
        fluid.step(force=np.full((N, 3), 1e9), steps=5)
    with pytest.raises(ValueError, match="lo and hi"):
        sph.block((0, 0), (1, 1, 1), DX)
