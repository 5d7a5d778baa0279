"""SPH fluid in 2D and 3D and its simplified prediction model. A test that is
the same in both dimensions runs over ``dim``; the rest is 2D (the fuller
checks) or 3D only."""
from __future__ import annotations

import numpy as np
import pytest

from directable import mpc, sph

DX = 0.02
H = 1.3 * DX


def _sigma(h, dim):
    """The cubic spline's normalisation in 2D or 3D."""
    return 10.0 / (7.0 * np.pi * h * h) if dim == 2 else 1.0 / (np.pi * h**3)


def _W(r, h=H, dim=2):
    q = r / h
    return _sigma(h, dim) * np.where(q < 1, 1 - 1.5 * q**2 + 0.75 * q**3, np.where(q < 2, 0.25 * (2 - q) ** 3, 0.0))


def _dW(r, h=H, dim=2):
    q = r / h
    return _sigma(h, dim) / h * np.where(q < 1, -3 * q + 2.25 * q**2, np.where(q < 2, -0.75 * (2 - q) ** 2, 0.0))


def _fluid_class(dim):
    return sph.SPHFluid2D if dim == 2 else sph.SPHFluid3D


def _small_fluid(rng, dim=2, jitter=0.15, **kw):
    """A small jittered block resting on the floor: 30 particles in 2D, 36 in 3D
    (with the nearby part of the floor as walls)."""
    if dim == 2:
        pts = sph.block((0.3, 0.0), (0.42, 0.1), DX) + jitter * DX * rng.uniform(-1, 1, (30, 2))
        walls = sph.box_walls((0.0, 0.0), (1.0, 1.0), DX)
    else:
        pts = sph.block((0.3, 0.3, 0.0), (0.36, 0.38, 0.06), DX)
        pts = pts + jitter * DX * rng.uniform(-1, 1, pts.shape)
        walls = sph.box_walls((0.0, 0.0, 0.0), (1.0, 1.0, 1.0), DX)
        walls = walls[np.linalg.norm(walls - [0.33, 0.34, 0.0], axis=1) < 0.2]
    args = dict(spacing=DX, h=H)
    args.update(kw)
    return _fluid_class(dim)(pts, walls, **args), pts, walls


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
    fluid = _fluid_class(dim)(pts, np.zeros((0, dim)), spacing=dx, h=2.0 * dx, gravity=np.zeros(dim))
    fluid.step()
    centre = np.argmin(np.linalg.norm(pts - hi / 2, axis=1))
    assert fluid.densities[centre] == pytest.approx(1000.0, rel=2e-3)
    # and it equals the brute-force NumPy sum with the 3D / 2D normalisation
    d = np.linalg.norm(pts - pts[centre], axis=1)
    assert fluid.densities[centre] == pytest.approx(fluid.mass * _W(d, 2.0 * dx, dim).sum(), rel=1e-12)


def test_density_matches_numpy_brute_force(rng):
    fluid, pts, walls = _small_fluid(rng, gravity=np.zeros(2))
    fluid.step()
    m = 1000.0 * DX * DX
    allp = np.vstack([pts, walls])
    d = np.linalg.norm(pts[:, None, :] - allp[None, :, :], axis=2)
    rho = m * _W(d).sum(axis=1)
    np.testing.assert_allclose(fluid.densities, rho, rtol=1e-12)
    B = 1000.0 * 20.0**2 / 7.0
    np.testing.assert_allclose(fluid.pressures, np.maximum(0, B * ((rho / 1000.0) ** 7 - 1)), rtol=1e-10, atol=1e-8)
    assert fluid.size == 30 and fluid.mass == pytest.approx(m)


def _pressure_acceleration(pts, walls, m, B=1000.0 * 20.0**2 / 7.0):
    """NumPy reference of the prediction model's pressure term over all pairs within 2h."""
    dim = pts.shape[1]
    dff = pts[:, None, :] - pts[None, :, :]
    rff = np.linalg.norm(dff, axis=2)
    dfb = pts[:, None, :] - walls[None, :, :]
    rfb = np.linalg.norm(dfb, axis=2)
    rho = m * (_W(rff, dim=dim).sum(1) + _W(rfb, dim=dim).sum(1))
    P = np.maximum(0.0, B * ((rho / 1000.0) ** 7 - 1)) / rho**2
    with np.errstate(invalid="ignore", divide="ignore"):
        gff = np.where(rff[..., None] > 0, (_dW(rff, dim=dim) / rff)[..., None] * dff, 0.0)
        gfb = (_dW(rfb, dim=dim) / rfb)[..., None] * dfb
    return -m * ((P[:, None] + P[None, :])[..., None] * gff).sum(1) - m * (2 * P[:, None, None] * gfb).sum(1)


@pytest.mark.parametrize("dim", [2, 3])
def test_prediction_step_matches_numpy(rng, dim):
    fluid, pts, walls = _small_fluid(rng, dim)
    pred = fluid.prediction_model()
    N = fluid.size
    assert (pred.n, pred.s) == (2 * dim * N, dim * N)
    m, dt = fluid.mass, fluid.dt
    # neighbours = pairs within 2h of the frozen state (positions unchanged here)
    a = _pressure_acceleration(pts, walls, m)
    np.testing.assert_allclose(pred.pressure_acceleration(pts.ravel()), a.ravel(), rtol=1e-9, atol=1e-9 * np.abs(a).max())
    x = np.concatenate([pts.ravel(), rng.standard_normal(dim * N) * 0.01])
    u = rng.standard_normal(dim * N) * 1e-3
    gravity = np.zeros(dim)
    gravity[-1] = -9.81
    vn = x[dim * N:] + dt * (a.ravel() + np.tile(gravity, N) + u / m)
    np.testing.assert_allclose(pred.step(x, u), np.concatenate([pts.ravel() + dt * vn, vn]), rtol=1e-12, atol=1e-12)
    # and with the fluid at rest, no control
    x0 = np.concatenate([pts.ravel(), np.zeros(dim * N)])
    v0 = dt * (a.ravel() + np.tile(gravity, N))
    np.testing.assert_allclose(pred.step(x0, np.zeros(dim * N)), np.concatenate([pts.ravel() + dt * v0, v0]),
                               rtol=1e-12, atol=1e-12)


def test_frozen_neighbours_after_steps_are_the_pairs_within_2h(rng):
    """The frozen sets come from the simulator's Verlet lists (built some steps
    earlier): still exactly the pairs within 2h of the current positions."""
    fluid, _, walls = _small_fluid(rng, jitter=0.3)
    fluid.step(steps=40)
    pred = fluid.prediction_model()
    pts = fluid.positions
    a = _pressure_acceleration(pts, walls, fluid.mass)
    assert np.abs(a).max() > 0
    np.testing.assert_allclose(pred.pressure_acceleration(pts.ravel()), a.ravel(), rtol=1e-9, atol=1e-9 * np.abs(a).max())


@pytest.mark.parametrize("dim", [2, 3])
def test_verlet_lists_of_a_scrambled_fluid_hit_by_a_sphere_match_brute_force(dim):
    """Every step's densities equal the NumPy sum over all pairs within 2h of
    the step's positions: the neighbour grid (half-radius cells, rows clipped
    to the ball, branch-free collection of j > i) and the Verlet lists miss
    no pair, with particles in random index order (no lattice order) pushed
    by a fast sphere (a rebuild at most steps) and with walls."""
    rng = np.random.default_rng(7)
    lo = np.full(dim, 0.3)
    lo[-1] = 0.0
    pts = sph.block(lo, lo + 0.1, DX)
    pts = (pts + 0.3 * DX * rng.uniform(-1, 1, pts.shape))[rng.permutation(len(pts))]
    walls = sph.box_walls(np.zeros(dim), np.ones(dim), DX)
    walls = walls[np.linalg.norm(walls - (lo + 0.05), axis=1) < 0.2]
    fluid = _fluid_class(dim)(pts, walls, spacing=DX, h=H)
    centre = pts.mean(axis=0)
    centre[0] = 0.27
    velocity = np.zeros(dim)
    velocity[0] = 10.0  # 5 mm per step, skin / 2 = 3.9 mm
    fluid.set_sphere(centre, 0.04, velocity)
    m = fluid.mass
    rebuilds = 0  # steps after which some particle has moved more than skin / 2 = 0.15 h: the lists are rebuilt
    for _ in range(12):
        x = fluid.positions.copy()
        fluid.step()
        rff = np.linalg.norm(x[:, None, :] - x[None, :, :], axis=2)
        rfb = np.linalg.norm(x[:, None, :] - walls[None, :, :], axis=2)
        rho = m * (_W(rff, dim=dim).sum(1) + _W(rfb, dim=dim).sum(1))
        np.testing.assert_allclose(fluid.densities, rho, rtol=1e-12)
        rebuilds += np.linalg.norm(fluid.positions - x, axis=1).max() > 0.15 * H
    assert rebuilds >= 6


def test_prediction_vjp_equals_finite_differences(rng):
    fluid, pts, _ = _small_fluid(rng)
    pred = fluid.prediction_model()
    N = fluid.size
    x = np.concatenate([pts.ravel(), rng.standard_normal(2 * N) * 0.01])
    u = rng.standard_normal(2 * N) * 1e-3
    lam = rng.standard_normal(4 * N)
    gx, gu = pred.vjp(x, u, lam)
    h = 1e-7
    fd_x = np.array([lam @ (pred.step(x + h * e, u) - pred.step(x - h * e, u)) / (2 * h) for e in np.eye(4 * N)])
    hu = 1e-2  # the step is affine in u: a large step has no truncation error, less round-off
    fd_u = np.array([lam @ (pred.step(x, u + hu * e) - pred.step(x, u - hu * e)) / (2 * hu) for e in np.eye(2 * N)])
    np.testing.assert_allclose(gx, fd_x, rtol=1e-5, atol=1e-6 * np.abs(fd_x).max())
    np.testing.assert_array_equal(pred.vjp_controls(x, u, lam), gu)
    np.testing.assert_allclose(gu, fd_u, rtol=1e-7, atol=1e-9 * np.abs(fd_u).max())


def test_mpc_adjoint_gradient_over_sph_window_equals_finite_differences(rng):
    fluid, pts, _ = _small_fluid(rng)
    pred = fluid.prediction_model()
    N, Hz = fluid.size, 3
    x0 = sph.state(fluid)
    ref = np.tile(x0, (Hz + 1, 1))
    opt = mpc.HorizonOptimizer(pred, Hz, np.r_[np.ones(2 * N), np.zeros(2 * N)], 1e-6, np.r_[np.ones(2 * N), np.zeros(2 * N)])
    u = rng.standard_normal((Hz, 2 * N)) * 1e-3
    _, g = opt.cost_and_gradient(x0, ref, u)
    h = 1e-2  # forces move particles by ~dt^2 h / m: far inside the kernel's smooth range
    for idx in [(0, 0), (1, 7), (2, 2 * N - 1), (0, 31)]:
        up, um = u.copy(), u.copy()
        up[idx] += h
        um[idx] -= h
        fd = (opt.cost_and_gradient(x0, ref, up)[0] - opt.cost_and_gradient(x0, ref, um)[0]) / (2 * h)
        assert g[idx] == pytest.approx(fd, rel=1e-6, abs=1e-9 * np.abs(g).max())


def test_line_search_trials_without_gradient_give_the_same_iterates():
    """solve() evaluates shortened line-search trials without the adjoint pass
    (and reuses the accepted trial's rollout for its gradient): the same
    iterates as L-BFGS over cost_and_gradient, with fewer gradients."""
    fluid, pts, _ = _small_fluid(np.random.default_rng(0))
    pred = fluid.prediction_model(dt=20 * fluid.dt)  # stiff: the unit step is often too long
    N, Hz = fluid.size, 3
    x0 = sph.state(fluid)
    ref = np.tile(np.concatenate([pts.ravel() + 0.01, np.zeros(2 * N)]), (Hz + 1, 1))
    W = np.r_[1e4 * np.ones(2 * N), np.zeros(2 * N)]
    opt = mpc.HorizonOptimizer(pred, Hz, W, 1e-8, W, iterations=15)
    u0 = np.zeros((Hz, 2 * N))
    r = opt.solve(x0, ref, u0=u0)

    def fg(u):
        J, g = opt.cost_and_gradient(x0, ref, u.reshape(Hz, 2 * N))
        return J, g.ravel()

    plain = mpc.minimize_lbfgs(fg, u0.ravel(), iterations=15)
    np.testing.assert_array_equal(r.u.ravel(), plain["x"])
    assert (r.cost, r.iterations, r.evaluations) == (plain["cost"], plain["iterations"], plain["evaluations"])
    assert plain["gradients"] == plain["evaluations"]
    assert r.iterations <= r.gradients < r.evaluations  # (no gradient at the last iteration's point)


def test_step_reuses_the_tape_only_at_its_positions(rng):
    """step() reuses the pressure acceleration taped at bit-identical positions
    (other controls, other velocities); a VJP taken elsewhere invalidates it."""
    fluid, pts, _ = _small_fluid(rng)
    N = fluid.size
    pred = fluid.prediction_model(dt=5 * fluid.dt)
    fresh = lambda: fluid.prediction_model(dt=5 * fluid.dt)  # noqa: E731
    x = np.concatenate([pts.ravel(), rng.standard_normal(2 * N) * 0.01])
    u1, u2 = rng.standard_normal((2, 2 * N)) * 1e-3
    data = pred.create_data()  # the tapes live in the data that successive calls share
    pred.step(x, u1, 0, data=data)
    x_v = x.copy()
    x_v[2 * N:] += 0.01  # same positions, other velocities
    # (to rounding: the reusing path has its own copy of the update)
    np.testing.assert_allclose(pred.step(x_v, u2, 0, data=data), fresh().step(x_v, u2, 0), rtol=1e-14, atol=0)
    x2 = x.copy()
    x2[:2 * N] += 1e-4 * rng.standard_normal(2 * N)
    pred.vjp(x2, u1, rng.standard_normal(4 * N), 0, data=data)  # re-tapes step 0 at x2, without the acceleration
    np.testing.assert_allclose(pred.step(x2, u2, 0, data=data), fresh().step(x2, u2, 0), rtol=1e-14, atol=0)


def test_refreeze_equals_a_fresh_model(rng):
    """One model re-frozen every frame (buffers and tapes reused) = a new model per frame."""
    fluid, pts, _ = _small_fluid(rng)
    N = fluid.size
    pred = fluid.prediction_model(dt=5 * fluid.dt)
    u = rng.standard_normal(2 * N) * 1e-3
    lam = rng.standard_normal(4 * N)
    data = pred.create_data()
    for _ in range(3):
        x = sph.state(fluid)
        pred.step(x, u, 1, data=data), pred.vjp(x, u, lam, 1, data=data)  # fills the tape of step 1
        fluid.step(steps=20)
        pred.refreeze(fluid)
        fresh = fluid.prediction_model(dt=5 * fluid.dt)
        x = sph.state(fluid)
        np.testing.assert_array_equal(pred.step(x, u, 1, data=data), fresh.step(x, u, 1))
        for a, b in zip(pred.vjp(x, u, lam, 1, data=data), fresh.vjp(x, u, lam, 1)):
            np.testing.assert_array_equal(a, b)
    other, _, _ = _small_fluid(rng)
    other.step()
    bigger = sph.SPHFluid2D(np.vstack([pts, [[0.6, 0.6]]]), np.zeros((0, 2)), spacing=DX, h=H)
    with pytest.raises(ValueError, match="refreeze"):
        pred.refreeze(bigger)
    pred.refreeze(other)  # same counts: fine


@pytest.mark.parametrize("dim", [2, 3])
def test_column_settles_in_the_box(dim):
    """A tank filled to half height: stays in, comes to rest, barely compressed."""
    width, steps = {2: (0.2, 600), 3: (0.1, 500)}[dim]
    pts = sph.block((0.0,) * dim, (width,) * dim, DX)
    box = (width,) * (dim - 1) + (2 * width,)
    fluid = _fluid_class(dim)(pts, sph.box_walls((0.0,) * dim, box, DX), spacing=DX, h=H, viscosity=0.2)
    height0 = pts[:, -1].mean()
    fluid.step(steps=steps)
    p = fluid.positions
    assert np.all(p >= 0) and np.all(p[:, :-1] <= width) and np.all(p[:, -1] <= 2 * width)
    assert np.sqrt((fluid.velocities**2).sum(1).mean()) < 0.08  # vs sqrt(2 g 0.2) = 2 m/s free fall
    assert (fluid.densities / 1000.0 - 1).max() < 0.03  # weakly compressible (deficits: free surface)
    assert abs(p[:, -1].mean() - height0) < 0.02


def test_unconfined_column_collapses():
    pts = sph.block((0.0, 0.0), (0.2, 0.2), DX)
    dam = sph.SPHFluid2D(pts + [0.4, 0.0], sph.box_walls((0, 0), (1, 1), DX), spacing=DX, h=H)
    dam.step(steps=400)  # an unconfined column collapses sideways (dam break)
    assert np.ptp(dam.positions[:, 0]) > 0.3


@pytest.mark.parametrize("dim", [2, 3])
def test_control_force_holds_particles_against_gravity(dim):
    """A force m*g per particle cancels gravity exactly for a free particle."""
    pts = np.full((1, dim), 0.5)
    fluid = _fluid_class(dim)(pts, np.zeros((0, dim)), spacing=DX, h=H)
    lift = np.zeros((1, dim))
    lift[0, -1] = 9.81 * fluid.mass
    fluid.step(force=lift, steps=100)
    np.testing.assert_allclose(fluid.positions, pts, atol=1e-12)
    free = _fluid_class(dim)(pts, np.zeros((0, dim)), spacing=DX, h=H)
    free.step(steps=100)
    t = 100 * free.dt
    assert free.positions[0, -1] == pytest.approx(0.5 - 9.81 * t * t / 2, rel=0.02)  # symplectic Euler
    np.testing.assert_allclose(free.positions[0, :-1], 0.5)


def test_sphere_pushes_particles_out():
    pts = sph.block((0.3, 0.3), (0.7, 0.5), DX)
    fluid = sph.SPHFluid2D(pts, np.zeros((0, 2)), spacing=DX, h=H, gravity=np.zeros(2))
    fluid.set_sphere([0.5, 0.4], 0.05, [0.0, 0.0])
    fluid.step()
    assert np.all(np.linalg.norm(fluid.positions - [0.5, 0.4], axis=1) >= 0.05 - 1e-12)
    moving = sph.SPHFluid2D(pts, np.zeros((0, 2)), spacing=DX, h=H, gravity=np.zeros(2))
    moving.set_sphere([0.1, 0.4], 0.05, [2.0, 0.0])
    moving.step(steps=200)
    np.testing.assert_allclose(moving.sphere_centre, [0.1 + 2.0 * 200 * moving.dt, 0.4])
    assert moving.velocities[:, 0].max() > 0.5  # the fluid was hit


def test_bad_input_2d(rng):
    fluid, pts, walls = _small_fluid(rng)
    N = fluid.size
    with pytest.raises(ValueError, match="centre"):
        fluid.set_sphere([1.5, 0.5], 0.1, [0, 0])
    with pytest.raises(ValueError, match="centre"):
        fluid.set_sphere([0.5, -0.01], 0.1, [0, 0])
    with pytest.raises(ValueError, match="radius"):
        fluid.set_sphere([0.5, 0.5], -0.1, [0, 0])
    with pytest.raises(ValueError, match="radius"):
        fluid.set_sphere([0.5, 0.5], 0.0, [0, 0])
    with pytest.raises(ValueError, match="radius"):
        fluid.set_sphere([0.5, 0.5], np.nan, [0, 0])
    with pytest.raises(ValueError, match="centre"):
        fluid.set_sphere([0.5, 0.5, 0.5], 0.1, [0, 0])
    with pytest.raises(ValueError, match="velocity"):
        fluid.set_sphere([0.5, 0.5], 0.1, [np.inf, 0])
    with pytest.raises(ValueError, match=r"force.*\(30, 2\).*\(3, 2\)"):
        fluid.step(force=np.zeros((3, 2)))
    with pytest.raises(ValueError, match="force"):
        fluid.step(force=np.zeros(2 * N))
    with pytest.raises(ValueError, match="force"):
        fluid.step(force=np.zeros((N, 3)))
    for bad in (np.nan, np.inf, -np.inf):
        f = np.zeros((N, 2))
        f[N // 2, 1] = bad
        with pytest.raises(ValueError, match="force.*finite|finite.*force"):
            fluid.step(force=f)
    assert fluid.positions.shape == (N, 2) and np.all(np.isfinite(fluid.positions))  # nothing was stepped
    with pytest.raises(ValueError, match="steps"):
        fluid.step(steps=0)
    with pytest.raises(ValueError, match="positions"):
        fluid.set_state(np.full((N, 2), np.nan), np.zeros((N, 2)))
    with pytest.raises(ValueError, match="velocities"):
        fluid.set_state(pts, np.zeros((N + 1, 2)))
    with pytest.raises(ValueError, match="fluid"):
        sph.SPHFluid2D(np.array([[np.nan, 0.5]]), walls, spacing=DX, h=H)
    with pytest.raises(ValueError, match="fluid"):
        sph.SPHFluid2D(np.zeros((3, 3)), walls, spacing=DX, h=H)
    with pytest.raises(ValueError, match="boundary"):
        sph.SPHFluid2D(pts, np.zeros(4), spacing=DX, h=H)
    with pytest.raises(ValueError, match="outside"):
        sph.SPHFluid2D(np.array([[2.0, 0.5]]), walls, spacing=DX, h=H)
    with pytest.raises(ValueError, match="dt"):
        sph.SPHFluid2D(pts, walls, spacing=DX, h=H, dt=-1.0)
    with pytest.raises(ValueError, match="h must"):
        sph.SPHFluid2D(pts, walls, spacing=DX, h=0.0)
    with pytest.raises(ValueError, match="gravity"):
        sph.SPHFluid2D(pts, walls, spacing=DX, h=H, gravity=[0.0, -9.81, 0.0])
    with pytest.raises(ValueError, match="domain"):
        sph.SPHFluid2D(pts, walls, spacing=DX, h=H, lo=[1.0, 0.0], hi=[0.0, 1.0])
    with pytest.raises(ValueError, match="diverged"):
        fluid.step(force=np.full((fluid.size, 2), 1e9), steps=5)


def test_diverging_step_is_reported_not_nan(rng):
    """A step too large for the sound speed blows up: reported, never NaN positions."""
    pts = sph.block((0.3, 0.0), (0.5, 0.2), DX)
    fluid = sph.SPHFluid2D(pts, sph.box_walls((0, 0), (1, 1), DX), spacing=DX, h=H, dt=0.05, c0=50.0)
    with pytest.raises(ValueError, match="diverged"):
        fluid.step(steps=200)
    assert np.all(np.isfinite(fluid.positions))


# ------------------------------------------------------------------- 3D only
def test_prediction_vjp_3d_equals_finite_differences(rng):
    fluid, pts, walls = _small_fluid(rng, 3)
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


def test_isolated_blob_keeps_zero_momentum_3d(rng):
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
    fluid, pts, walls = _small_fluid(rng, 3)
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
    with pytest.raises(ValueError, match=r"hi must have shape \(2,\) \(that of lo\), got \(3,\)"):
        sph.block((0, 0), (1, 1, 1), DX)
