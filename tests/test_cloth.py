"""Mass-spring cloth: forces, energy, Jacobians, integrators, colliders, the Model adapter."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import directable as dr
from directable import cloth as dc
from reference.cloth import NumpyCloth

ARGS = (6, 5, 0.05, 0.01, 200.0, 50.0, 5.0, 0.02)


def make(damping=0.02, **kw):
    args = list(ARGS)
    args[7] = damping
    return dc.ClothGrid(*args, **kw), NumpyCloth(*args, **kw)


def perturbed(cloth, rng, scale=0.01):
    x = cloth.positions0 + scale * rng.standard_normal((cloth.node_count, 3))
    v = rng.standard_normal((cloth.node_count, 3))
    return x, v


def test_grid_conventions():
    c = dc.ClothGrid(4, 3, 0.1, 0.02, 10.0, 0.0, 0.0, 0.0, origin=(1.0, 2.0, 3.0))
    x0 = c.positions0
    assert x0.shape == (12, 3)
    assert c.node(2, 1) == 1 * 4 + 2
    np.testing.assert_allclose(x0[c.node(2, 1)], [1.2, 2.1, 3.0])
    # stiffness 0 means absent: only structural springs
    assert c.spring_count == 3 * 3 + 4 * 2
    full = dc.ClothGrid(4, 3, 0.1, 0.02, 10.0, 1.0, 1.0, 0.0, k_bend2=1.0)
    assert full.spring_count == 17 + 2 * 3 * 2 + (2 * 3 + 4 * 1) + 2 * 2 * 1


def test_forces_match_numpy_reference(rng):
    c, r = make(k_bend2=2.0, pinned=[3])
    x, v = perturbed(c, rng)
    np.testing.assert_allclose(c.forces(x, v), r.forces(x, v), rtol=0, atol=1e-11)


def test_forces_are_minus_energy_gradient(rng):
    c, _ = make(damping=0.0, k_bend2=2.0)
    x, _ = perturbed(c, rng)
    F = c.forces(x, np.zeros_like(x))
    eps = 1e-6
    grad = np.zeros(x.size)
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = eps
        grad[k] = (c.energy(x + e.reshape(x.shape)) - c.energy(x - e.reshape(x.shape))) / (2 * eps)
    np.testing.assert_allclose(F.ravel(), -grad, rtol=1e-6, atol=1e-6 * np.abs(F).max())


def _fd_jacobians(c, x, v, eps=1e-7):
    n = x.size
    Jx, Jv = np.zeros((n, n)), np.zeros((n, n))
    for k in range(n):
        e = np.zeros(n)
        e[k] = eps
        e = e.reshape(x.shape)
        Jx[:, k] = (c.forces(x + e, v) - c.forces(x - e, v)).ravel() / (2 * eps)
        Jv[:, k] = (c.forces(x, v + e) - c.forces(x, v - e)).ravel() / (2 * eps)
    return Jx, Jv


@pytest.mark.parametrize("with_colliders", [False, True])
def test_jacobians_match_finite_differences(rng, with_colliders):
    c, _ = make(k_bend2=2.0)
    x, v = perturbed(c, rng)
    if with_colliders:
        # a sphere and a tilted plane that both cut through the cloth, with friction
        c.add_collider(dc.Sphere(x[14] + [0.0, 0.0, 0.06], 0.08, 500.0, 0.4))
        c.add_collider(dc.Plane(x[7] + [0.0, 0.0, 0.003], [0.1, 0.2, 1.0], 800.0, 0.3))
        inside = np.linalg.norm(x - (x[14] + [0, 0, 0.06]), axis=1) < 0.08
        assert inside.sum() >= 2
    Kx, Kv = c.force_jacobians(x, v)
    assert Kx.shape == (3 * c.node_count,) * 2 and Kx.format == "csr"
    Jx, Jv = _fd_jacobians(c, x, v)
    scale = np.abs(Jx).max()
    np.testing.assert_allclose(Kx.toarray(), Jx, rtol=0, atol=1e-6 * scale)
    np.testing.assert_allclose(Kv.toarray(), Jv, rtol=0, atol=1e-6 * max(np.abs(Jv).max(), 1.0))


def test_rigid_motion_gives_no_spring_force():
    c = dc.ClothGrid(5, 4, 0.05, 0.01, 200.0, 50.0, 5.0, 0.0, gravity=(0, 0, 0), k_bend2=1.0)
    x0 = c.positions0
    th = 0.7
    R = np.array([[np.cos(th), -np.sin(th), 0], [np.sin(th), np.cos(th), 0], [0, 0, 1]]) @ \
        np.array([[1, 0, 0], [0, np.cos(0.4), -np.sin(0.4)], [0, np.sin(0.4), np.cos(0.4)]])
    for x in (x0 + [0.3, -1.0, 2.0], x0 @ R.T + [0.1, 0.2, 0.3]):
        assert np.abs(c.forces(x, np.zeros_like(x))).max() < 1e-12


def test_symplectic_energy_drift_below_one_percent():
    c = dc.ClothGrid(5, 5, 0.05, 0.01, 100.0, 20.0, 2.0, 0.0, gravity=(0, 0, 0))
    rng = np.random.default_rng(1)
    x0 = c.positions0 + 0.005 * rng.standard_normal((25, 3))
    v0 = np.zeros_like(x0)
    dt = 1e-3
    run = c.rollout(x0, v0, dt, 10_000)
    # symplectic Euler staggers x and v: its kinetic energy is m v_i . v_{i+1} / 2
    E = np.array([c.energy(x) + 0.5 * c.mass * np.sum(v * w)
                  for x, v, w in zip(run.x[:-1:10], run.v[:-1:10], run.v[1::10])])
    assert np.abs(E - E[0]).max() / E[0] < 0.01  # bounded
    assert abs(E[-100:].mean() - E[:100].mean()) / E[0] < 0.002  # no drift


def test_rollout_equals_numpy_reference(rng):
    c, r = make(k_bend2=2.0, pinned=[0, 5])
    x0, v0 = perturbed(c, rng, 0.002)
    u = 0.01 * rng.standard_normal((40, c.node_count, 3))
    run = c.rollout(x0, v0, 0.002, 40, u=u)
    xr, vr = r.rollout(x0, v0, 0.002, 40, u=u)
    assert run.x.shape == (41, c.node_count, 3)
    np.testing.assert_allclose(run.x, xr, rtol=0, atol=1e-12)
    np.testing.assert_allclose(run.v, vr, rtol=0, atol=1e-10)
    # pinned nodes never move
    np.testing.assert_array_equal(run.x[:, 0], np.broadcast_to(x0[0], (41, 3)))
    assert not run.x.flags.writeable and not run.x.flags.owndata


def test_step_equals_one_rollout_step(rng):
    c, _ = make()
    x0, v0 = perturbed(c, rng, 0.002)
    for method in ("symplectic", "implicit", "implicit_cg"):
        x1, v1 = c.step(x0, v0, 0.002, method=method)
        run = c.rollout(x0, v0, 0.002, 1, method=method)
        np.testing.assert_allclose(x1, run.x[1], atol=1e-12)
        np.testing.assert_allclose(v1, run.v[1], atol=1e-10)


def test_implicit_solvers_agree(rng):
    c, _ = make(k_bend2=2.0, pinned=[2])
    x0, v0 = perturbed(c, rng, 0.002)
    a = c.rollout(x0, v0, 0.005, 30, method="implicit")
    b = c.rollout(x0, v0, 0.005, 30, method="implicit_cg")
    np.testing.assert_allclose(a.x, b.x, atol=1e-10)


def test_drape_rest_state_same_for_both_integrators():
    n = 6
    # four pinned corners: every motion stretches a damped spring, so both runs come to rest
    kw = dict(pinned=[0, n - 1, (n - 1) * n, n * n - 1])
    c = dc.ClothGrid(n, n, 0.05, 0.01, 100.0, 20.0, 2.0, 0.2, **kw)
    x0, v0 = c.positions0, np.zeros((n * n, 3))
    sym = c.rollout(x0, v0, 0.002, 10_000).x[-1]
    imp = c.rollout(x0, v0, 0.01, 2_000, method="implicit").x[-1]
    free = np.setdiff1d(np.arange(n * n), kw["pinned"])
    assert np.abs(c.forces(sym, np.zeros_like(sym))[free]).max() < 1e-5
    np.testing.assert_allclose(sym, imp, atol=1e-6)


def test_sphere_collider_holds_the_cloth():
    c = dc.ClothGrid(8, 8, 0.05, 0.01, 200.0, 50.0, 5.0, 0.05, origin=(-0.175, -0.175, 0.22))
    c.add_collider(dc.Sphere((0, 0, 0), 0.2, 5e4, 0.3))
    run = c.rollout(c.positions0, np.zeros((64, 3)), 5e-4, 1500)
    r = np.linalg.norm(run.x, axis=2)
    assert (0.2 - r).max() < 0.002  # penetration below 1 % of the radius
    assert r.min() > 0.19
    assert len(c.colliders) == 1


def test_colliders_match_numpy_reference(rng):
    c, r = make()
    x, v = perturbed(c, rng)
    c.add_collider(dc.Sphere(x[10] + [0, 0, 0.03], 0.06, 700.0, 0.5))
    c.add_collider(dc.Plane(x[3], [0, 0.3, 1.0], 900.0, 0.2))
    r.colliders = [("sphere", x[10] + [0, 0, 0.03], 0.06, 700.0, 0.5), ("plane", x[3], [0, 0.3, 1.0], 900.0, 0.2)]
    np.testing.assert_allclose(c.forces(x, v), r.forces(x, v), atol=1e-11)


def test_add_collider_rebuilds_and_leaves_old_models_alone(rng):
    c, _ = make()
    model = c.as_model([4])
    x, v = perturbed(c, rng)
    z = np.concatenate([x.ravel(), v.ravel()])
    before = model.dynamics(z)
    c.add_collider(dc.Plane(x[4] + [0, 0, 0.5], [0, 0, 1], 1e3, 0.0))
    np.testing.assert_array_equal(model.dynamics(z), before)
    assert not np.allclose(c.as_model([4]).dynamics(z), before)


def test_as_model_dynamics_jacobian_and_step(rng):
    c, _ = make(pinned=[0])
    model = c.as_model([7, 12])
    V = c.node_count
    assert isinstance(model, dr.Model) and model.state_dim() == 6 * V and model.control_dim() == 6
    x, v = perturbed(c, rng)
    v[0] = 0.0
    z = np.concatenate([x.ravel(), v.ravel()])
    F = model.dynamics(z)
    acc = c.forces(x, v) / c.mass
    acc[0] = 0.0
    np.testing.assert_allclose(F[3 * V:], acc.ravel(), atol=1e-12)
    np.testing.assert_allclose(F[:3 * V], np.where(np.arange(3 * V) < 3, 0.0, v.ravel()))
    B = model.control_matrix()
    assert B.shape == (6 * V, 6)
    assert B[3 * V + 3 * 7, 0] == pytest.approx(1 / c.mass) and np.count_nonzero(B) == 6
    J = model.jacobian(z)
    Jfd = dr.models.finite_difference_jacobian(model, z, eps=1e-7)
    np.testing.assert_allclose(J, Jfd, atol=1e-5 * np.abs(J).max())
    w = rng.standard_normal(6)
    u = np.zeros((V, 3))
    u[7], u[12] = w[:3], w[3:]
    x1, v1 = c.step(x, v, 0.002, u=u)
    np.testing.assert_allclose(model.step(z, w, 0.002), np.concatenate([x1.ravel(), v1.ravel()]), atol=1e-13)


def test_as_model_drives_simulate(rng):
    c, _ = make()
    model = c.as_model([3])
    z0 = np.concatenate([c.positions0.ravel(), np.zeros(3 * c.node_count)])
    res = dr.simulate(model, z0, 20, 0.002, open_loop=np.zeros((20, 3)))
    run = c.rollout(c.positions0, np.zeros((c.node_count, 3)), 0.002, 20)
    np.testing.assert_allclose(res.states[-1, :3 * c.node_count], run.x[-1].ravel(), atol=1e-12)


def test_rollout_releases_gil_and_threads_share_the_model():
    c = dc.ClothGrid(12, 12, 0.05, 0.01, 200.0, 50.0, 5.0, 0.02, k_bend2=1.0)
    x0, v0 = c.positions0, np.zeros((144, 3))
    ref = {m: c.rollout(x0, v0, 0.002, 200, method=m).x[-1].copy() for m in ("symplectic", "implicit")}
    out, errors = {}, []

    def work(k):
        try:
            m = ("symplectic", "implicit")[k % 2]
            out[k] = (m, c.rollout(x0, v0, 0.002, 200, method=m).x[-1].copy())
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for m, x in out.values():
        np.testing.assert_array_equal(x, ref[m])


def test_progress_callback_is_called():
    c, _ = make()
    calls = []
    c.rollout(c.positions0, np.zeros((c.node_count, 3)), 0.002, 50, progress=lambda d, t: calls.append((d, t)))
    assert calls and calls[-1] == (50, 50)


def test_forces_zero_copy_input(rng):
    c, _ = make()
    x, v = perturbed(c, rng)
    # C-contiguous float64 input is viewed, not copied: a result that changes with the input proves it is read
    F1 = c.forces(x, v)
    x[3, 2] += 0.01
    assert not np.allclose(c.forces(x, v), F1)


def _implicit_system_scipy(c, x, v, dt, u=None):
    """The backward-Euler system (M - dt dF/dv - dt^2 sym(dF/dx)) dv = dt (F + u + dt dF/dx v), assembled
    from force_jacobians: (A, rhs, free), A sparse (3V, 3V), free the flags of the unpinned coordinates."""
    from scipy import sparse

    n = x.size
    Kx, Kv = c.force_jacobians(x, v)
    A = sparse.identity(n, format="csr") * c.mass - dt * Kv - 0.5 * dt * dt * (Kx + Kx.T)
    rhs = dt * (c.forces(x, v).ravel() + (0.0 if u is None else u.ravel()) + dt * (Kx @ v.ravel()))
    free = np.ones(n, bool)
    free[np.repeat(np.asarray(c.pinned, int) * 3, 3) + np.tile(np.arange(3), len(c.pinned))] = False
    return A, rhs, free


def _implicit_step_scipy(c, x, v, dt, u=None):
    """Backward Euler with one Newton step, solved by SciPy's spsolve, pinned nodes fixed: (x+, v+)."""
    from scipy.sparse.linalg import spsolve

    A, rhs, free = _implicit_system_scipy(c, x, v, dt, u)
    dv = np.zeros(x.size)
    dv[free] = spsolve(A[free][:, free].tocsc(), rhs[free])
    v1 = np.where(free, v.ravel() + dv, 0.0).reshape(x.shape)
    return x + dt * v1, v1


def _condition_estimate(A):
    """kappa_1(A) = |A|_1 |A^-1|_1 of a sparse square matrix, both norms by Higham's estimator (onenormest;
    A^-1 applied through a sparse LU)."""
    from scipy.sparse.linalg import LinearOperator, onenormest, splu

    lu = splu(A)
    inverse = LinearOperator(A.shape, matvec=lu.solve, rmatvec=lambda b: lu.solve(b, trans="T"), dtype=float)
    return onenormest(A) * onenormest(inverse)


@pytest.mark.parametrize("shape,kw", [
    ((2, 2), {}), ((3, 9), dict(pinned=[0])), ((12, 10), dict(k_bend2=2.0, pinned=[0, 11])),
    ((20, 20), {}), ((20, 20), dict(k_bend2=2.0)),
    ((5, 4), dict(k_bend2=1.0, pinned=[0, 1, 5, 6])),  # springs with both ends pinned, a frictional plane
])
def test_implicit_step_equals_scipy_spsolve(rng, shape, kw):
    # the supernodal LDL' (linalg/block_ldlt) against SuperLU on the same system, for grids whose
    # elimination trees range from one supernode (2 x 2) to merged and fundamental ones (20 x 20)
    c = dc.ClothGrid(*shape, 0.05, 0.01, 300.0, 60.0, 6.0, 0.05, **kw)
    x = c.positions0 + 0.005 * rng.standard_normal((c.node_count, 3))
    v = 0.2 * rng.standard_normal((c.node_count, 3))
    v[c.pinned] = 0.0
    u = 0.01 * rng.standard_normal((c.node_count, 3))
    if shape == (12, 10):  # a frictional sphere touching some nodes
        c.add_collider(dc.Sphere(x[55] + [0.0, 0.0, 0.07], 0.08, 2e3, 0.4))
    if shape == (5, 4):  # a tilted frictional plane below half of the nodes
        c.add_collider(dc.Plane(x[12], [0.3, 0.1, 1.0], 2e3, 0.5))
    eps = np.finfo(float).eps
    for dt in (0.002, 0.02):
        x1, v1 = c.step(x, v, dt, u=u, method="implicit")
        xr, vr = _implicit_step_scipy(c, x, v, dt, u)
        # Two backward-stable solves of the same system (its right-hand side assembled in another order) agree
        # to the forward-error bound c_n eps kappa(A) |dv|, kappa the condition number of the free block (its
        # 1-norm estimate: Higham's estimator on A and on A^-1 through a sparse LU) and c_n = sqrt(n) the
        # typical growth of n rounding errors; then v+ = v + dv and x+ = x + dt v+ each add one rounding of
        # their own size. A fixed 1e-13 m on x was missed by 1.16e-13 m in the -O1 baseline build, where
        # kappa = 2.6e3 (20 x 20, dt = 0.02 s); this bound scales with the system instead.
        A, _, free = _implicit_system_scipy(c, x, v, dt, u)
        kappa = _condition_estimate(A[free][:, free].tocsc())
        dv = (vr - v).ravel()[free]
        tol_v = np.sqrt(free.sum()) * eps * (kappa * np.abs(dv).max() + np.abs(vr).max())
        tol_x = dt * tol_v + eps * np.abs(xr).max()
        np.testing.assert_allclose(v1, vr, rtol=0, atol=tol_v)
        np.testing.assert_allclose(x1, xr, rtol=0, atol=tol_x)


def test_implicit_step_data_is_reused_without_drift(rng):
    # a rollout reuses one factorisation buffer for every step: its steps equal fresh single steps
    c = dc.ClothGrid(9, 8, 0.05, 0.01, 300.0, 60.0, 6.0, 0.05, k_bend2=1.0, pinned=[3])
    x, v = c.positions0, np.zeros((c.node_count, 3))
    run = c.rollout(x, v, 0.01, 25, method="implicit")
    for i in (0, 12, 24):
        x1, v1 = c.step(run.x[i], run.v[i], 0.01, method="implicit")
        np.testing.assert_array_equal(x1, run.x[i + 1])
        np.testing.assert_array_equal(v1, run.v[i + 1])
