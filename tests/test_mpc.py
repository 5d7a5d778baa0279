"""MPC horizon optimizer: adjoint gradient, projected L-BFGS,
Gauss-Newton via the Riccati sweep, warm start, receding-horizon loop."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize

import directable as dr
from directable import lqr, mpc


# ------------------------------------------------------------ NumPy references
def _window_matrices(A, B, H):
    """x = Phi x0 + Gam u for the stacked states x_0..x_H, u_0..u_{H-1}."""
    n, s = B.shape
    Phi = np.zeros(((H + 1) * n, n))
    Gam = np.zeros(((H + 1) * n, H * s))
    P = np.eye(n)
    for i in range(H + 1):
        Phi[i * n:(i + 1) * n] = P
        P = A @ P
        for j in range(i):
            Gam[i * n:(i + 1) * n, j * s:(j + 1) * s] = np.linalg.matrix_power(A, i - 1 - j) @ B
    return Phi, Gam


def _dense(W, dim):
    W = np.asarray(W, float)
    return np.diag(W) if W.ndim == 1 else 0.5 * (W + W.T)


def _block_weights(Q, R, C, n, s, H):
    Wx = np.zeros(((H + 1) * n, (H + 1) * n))
    for i in range(H):
        Wx[i * n:(i + 1) * n, i * n:(i + 1) * n] = _dense(Q, n)
    Wx[H * n:, H * n:] = _dense(C, n)
    Wu = np.kron(np.eye(H), _dense(R, s))
    return Wx, Wu


def dense_window(A, B, Q, R, C, x0, ref):
    """Exact minimiser and cost of the window, one dense linear solve."""
    n, s = B.shape
    H = ref.shape[0] - 1
    Phi, Gam = _window_matrices(A, B, H)
    Wx, Wu = _block_weights(Q, R, C, n, s, H)
    c = Phi @ x0 - ref.ravel()
    u = -np.linalg.solve(Gam.T @ Wx @ Gam + Wu, Gam.T @ Wx @ c)
    e = Gam @ u + c
    return u.reshape(H, s), e @ Wx @ e + u @ Wu @ u


def np_cost(A, B, Q, R, C, x0, ref, u):
    H = u.shape[0]
    x, J = np.array(x0, float), 0.0
    Qd, Rd, Cd = _dense(Q, len(x0)), _dense(R, B.shape[1]), _dense(C, len(x0))
    for i in range(H):
        e = x - ref[i]
        J += e @ Qd @ e + u[i] @ Rd @ u[i]
        x = A @ x + B @ u[i]
    e = x - ref[H]
    return J + e @ Cd @ e


def random_system(rng, n, s, scale=0.9):
    A = rng.standard_normal((n, n))
    A *= scale / max(abs(np.linalg.eigvals(A)))
    return A, rng.standard_normal((n, s))


def random_spd(rng, d, shift=0.5):
    M = rng.standard_normal((d, d))
    return M @ M.T / d + shift * np.eye(d)


WEIGHTS = {
    "diag": lambda rng, n, s: (rng.uniform(0.5, 2, n), rng.uniform(0.1, 1, s), rng.uniform(1, 5, n)),
    "dense": lambda rng, n, s: (random_spd(rng, n), random_spd(rng, s), random_spd(rng, n)),
    "scalar": lambda rng, n, s: (1.5, 0.2, 4.0),
}


# ------------------------------------------------------------ gradient
def _fd_cost_gradient(opt, x0, ref, u, u_reference=None, h=1e-6):
    """Central-difference gradient of the window cost in the controls u (H, s)."""
    fd = np.zeros_like(u)
    for idx in np.ndindex(*u.shape):
        up, um = u.copy(), u.copy()
        up[idx] += h
        um[idx] -= h
        fd[idx] = (opt.cost_and_gradient(x0, ref, up, u_reference)[0]
                   - opt.cost_and_gradient(x0, ref, um, u_reference)[0]) / (2 * h)
    return fd


@pytest.mark.parametrize("kind", sorted(WEIGHTS))
def test_adjoint_gradient_equals_finite_differences(rng, kind):
    n, s, H = 4, 2, 6
    A, B = random_system(rng, n, s, scale=1.1)
    Q, R, C = WEIGHTS[kind](rng, n, s)
    opt = mpc.HorizonOptimizer(mpc.LinearModel(A, B), H, Q, R, C)
    x0, ref, u = rng.standard_normal(n), rng.standard_normal((H + 1, n)), rng.standard_normal((H, s))
    J, g = opt.cost_and_gradient(x0, ref, u)
    assert g.shape == (H, s)
    Qf = Q if not np.isscalar(Q) else Q * np.ones(n)
    Rf = R if not np.isscalar(R) else R * np.ones(s)
    Cf = C if not np.isscalar(C) else C * np.ones(n)
    assert J == pytest.approx(np_cost(A, B, Qf, Rf, Cf, x0, ref, u), rel=1e-12)
    fd = _fd_cost_gradient(opt, x0, ref, u)
    assert np.max(np.abs(g - fd)) <= 1e-6 * max(1.0, np.max(np.abs(fd)))


def test_linear_model_step_vjp_jacobians(rng):
    n, s = 3, 2
    A, B = random_system(rng, n, s)
    m = mpc.LinearModel(A, B)
    x, u, lam = rng.standard_normal(n), rng.standard_normal(s), rng.standard_normal(n)
    np.testing.assert_allclose(m.step(x, u), A @ x + B @ u, rtol=1e-14, atol=1e-14)
    gx, gu = m.vjp(x, u, lam)
    np.testing.assert_allclose(gx, A.T @ lam, atol=1e-14)
    np.testing.assert_allclose(gu, B.T @ lam, atol=1e-14)
    np.testing.assert_array_equal(m.vjp_controls(x, u, lam), gu)  # (the default: vjp's gu)
    Ja, Jb = m.jacobians(x, u)
    np.testing.assert_array_equal(Ja, A)
    np.testing.assert_array_equal(Jb, B)
    assert (m.n, m.s, m.has_jacobians) == (n, s, True)


# ------------------------------------------------------------ L-BFGS on standard functions
def _rosenbrock(x):
    f = np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    g = np.zeros_like(x)
    g[:-1] = -400.0 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2 * (1 - x[:-1])
    g[1:] += 200.0 * (x[1:] - x[:-1] ** 2)
    return f, g


@pytest.mark.parametrize("N", [2, 6])
def test_lbfgs_rosenbrock(N):
    x0 = np.full(N, -1.2)
    x0[1::2] = 1.0
    r = mpc.minimize_lbfgs(_rosenbrock, x0, iterations=500)
    np.testing.assert_allclose(r["x"], np.ones(N), atol=1e-6)
    assert r["cost"] < 1e-12 and r["cost_initial"] == pytest.approx(_rosenbrock(x0)[0])
    assert 0 < r["iterations"] <= 500


def test_lbfgs_fixed_iteration_count_is_respected():
    r = mpc.minimize_lbfgs(_rosenbrock, np.array([-1.2, 1.0]), iterations=3)
    assert r["iterations"] == 3 and r["cost"] < r["cost_initial"]


def test_lbfgs_convex_quadratic_closed_form(rng):
    N = 30
    M = random_spd(rng, N, shift=0.1)
    b = rng.standard_normal(N)
    r = mpc.minimize_lbfgs(lambda x: (0.5 * x @ M @ x - b @ x, M @ x - b), np.zeros(N), iterations=300)
    x_star = np.linalg.solve(M, b)
    np.testing.assert_allclose(r["x"], x_star, atol=1e-7 * max(1, np.abs(x_star).max()))


def test_lbfgs_box_constrained_quadratic(rng):
    """Separable quadratic: the box minimum is the clipped unconstrained one."""
    N = 12
    d = rng.uniform(0.5, 5, N)
    c = rng.standard_normal(N) * 2
    lo, hi = -0.5 * np.ones(N), 0.7 * np.ones(N)
    r = mpc.minimize_lbfgs(lambda x: (0.5 * np.sum(d * (x - c) ** 2), d * (x - c)), np.zeros(N), lower=lo,
                           upper=hi, iterations=200)
    np.testing.assert_allclose(r["x"], np.clip(c, lo, hi), atol=1e-9)


def test_lbfgs_initial_scale_gives_the_first_step_its_curvature(rng):
    """On f = c/2 |x - b|^2 the stored pair's s'y / y'y is 1/c: the returned
    scale; started with it, the first step lands on the minimum (one
    iteration, one pair of evaluations), where a unit-length first step does
    not; 0 (the default) is the unit-length step, bit for bit."""
    N, c = 6, 4.0
    b = rng.standard_normal(N)
    f = lambda x: (0.5 * c * float((x - b) @ (x - b)), c * (x - b))  # noqa: E731
    r = mpc.minimize_lbfgs(f, np.zeros(N), iterations=3)
    assert r["scale"] == pytest.approx(1 / c, rel=1e-12)
    one = mpc.minimize_lbfgs(f, np.zeros(N), iterations=1, initial_scale=r["scale"])
    np.testing.assert_allclose(one["x"], b, atol=1e-12)
    assert one["evaluations"] == 2 and one["scale"] == pytest.approx(1 / c)
    unit = mpc.minimize_lbfgs(f, np.zeros(N), iterations=1)
    assert np.abs(unit["x"] - b).max() > 0.1
    assert mpc.minimize_lbfgs(f, np.zeros(N), iterations=0)["scale"] == 0.0  # no pair, no initial scale
    same = mpc.minimize_lbfgs(f, np.zeros(N), iterations=1, initial_scale=0.0)
    np.testing.assert_array_equal(same["x"], unit["x"])
    for bad in (-1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="initial_scale"):
            mpc.minimize_lbfgs(f, np.zeros(N), initial_scale=bad)


def test_warm_start_carries_the_curvature_scale(rng):
    """A warm-started solve starts L-BFGS with the previous window's s'y / y'y:
    equal, bit for bit, to a solve from the shifted plan given that scale
    explicitly; reset() forgets it; a NaN scale is refused by name."""
    n, s, H = 4, 2, 6
    A, B = random_system(rng, n, s)
    ref = rng.standard_normal((H + 2, n))
    x0 = rng.standard_normal(n)
    opt = mpc.HorizonOptimizer(mpc.LinearModel(A, B), H, 1.0, 0.1, 1.0, iterations=2)
    ws = opt.create_workspace()
    first = opt.solve(x0, ref[:H + 1], workspace=ws)
    assert first.curvature_scale > 0 and ws.curvature_scale == first.curvature_scale
    x1 = first.states[1]
    warm = opt.solve(x1, ref[1:], workspace=ws)
    shifted = np.vstack([first.u[1:], first.u[-1:]])
    explicit = opt.solve(x1, ref[1:], u0=shifted, curvature_scale=first.curvature_scale,
                         workspace=opt.create_workspace())
    np.testing.assert_array_equal(warm.u, explicit.u)
    unit = opt.solve(x1, ref[1:], u0=shifted, workspace=opt.create_workspace())
    assert np.abs(unit.u - warm.u).max() > 0  # the scale changed the iterates
    ws.reset()
    assert ws.curvature_scale == 0.0 and not ws.has_solution
    with pytest.raises(ValueError, match="curvature_scale"):
        opt.solve(x1, ref[1:], curvature_scale=np.nan)


def test_single_iteration_learns_the_curvature_scale(rng):
    """One iteration stores no (s, y) pair (its point gets no gradient), yet
    its solve reports the curvature along its step from the values alone:
    s's / s'Hs, checked against the window's Hessian by finite differences of
    the gradient (exact on a linear model). The next warm-started window
    starts with that scale instead of a unit-length step."""
    n, s, H = 4, 2, 5
    A, B = random_system(rng, n, s)
    ref = rng.standard_normal((H + 2, n))
    x0 = rng.standard_normal(n)
    opt = mpc.HorizonOptimizer(mpc.LinearModel(A, B), H, 1.0, 0.1, 1.0, iterations=1)
    ws = opt.create_workspace()
    first = opt.solve(x0, ref[:H + 1], workspace=ws)
    step = first.u.ravel()  # from u = 0
    _, g0 = opt.cost_and_gradient(x0, ref[:H + 1], np.zeros((H, s)))
    Hess = np.empty((H * s, H * s))
    for k in range(H * s):
        e = np.zeros(H * s)
        e[k] = 1.0
        Hess[:, k] = (opt.cost_and_gradient(x0, ref[:H + 1], e.reshape(H, s))[1] - g0).ravel()
    expected = step @ step / (step @ Hess @ step)
    assert first.iterations == 1
    np.testing.assert_allclose(first.curvature_scale, expected, rtol=1e-6)
    assert ws.curvature_scale == first.curvature_scale
    warm = opt.solve(first.states[1], ref[1:], workspace=ws)
    explicit = opt.solve(first.states[1], ref[1:], u0=np.vstack([first.u[1:], first.u[-1:]]),
                         curvature_scale=first.curvature_scale, workspace=opt.create_workspace())
    np.testing.assert_array_equal(warm.u, explicit.u)
    # a given scale moves by at most 100x in one solve: far too short a step
    # measures rounding, far too long a one a backtracked piece
    x1 = first.states[1]
    for given in (1e-12, 1e6):
        res = opt.solve(x1, ref[1:], u0=first.u, curvature_scale=given, workspace=opt.create_workspace())
        assert 1e-2 * given <= res.curvature_scale <= 1e2 * given
    assert not 1e-2 * 1e-12 <= expected <= 1e2 * 1e-12 and not 1e-2 * 1e6 <= expected <= 1e2 * 1e6


# ------------------------------------------------------------ one window
@pytest.mark.parametrize("kind", ["diag", "dense"])
def test_lbfgs_window_converges_to_exact_solution(rng, kind):
    n, s, H = 4, 2, 8
    A, B = random_system(rng, n, s)
    Q, R, C = WEIGHTS[kind](rng, n, s)
    x0, ref = rng.standard_normal(n), rng.standard_normal((H + 1, n))
    u_star, J_star = dense_window(A, B, Q, R, C, x0, ref)
    opt = mpc.HorizonOptimizer(mpc.LinearModel(A, B), H, Q, R, C, iterations=300)
    res = opt.solve(x0, ref)
    assert res.u.shape == (H, s) and res.states.shape == (H + 1, n)
    assert res.cost == pytest.approx(J_star, rel=1e-9)
    np.testing.assert_allclose(res.u, u_star, atol=1e-5 * max(1, np.abs(u_star).max()))
    assert 0 < res.iterations <= 300 and res.cost_decrease > 0


def _lqr_window_first_gain(A, B, Q, R, C, ref):
    """directable.lqr on the state [x; 1] with the reference folded into the
    (time-varying) weights: J = sum [x;1]' Qa_i [x;1] + u'Ru + [x;1]' Ca [x;1]."""
    n, s = B.shape
    H = ref.shape[0] - 1
    Aa = np.zeros((n + 1, n + 1))
    Aa[:n, :n], Aa[n, n] = A, 1.0
    Ba = np.vstack([B, np.zeros((1, s))])

    def fold(W, r):
        Wd = _dense(W, n)
        M = np.zeros((n + 1, n + 1))
        M[:n, :n], M[:n, n], M[n, :n], M[n, n] = Wd, -Wd @ r, -r @ Wd, r @ Wd @ r
        return M

    Qa = np.stack([fold(Q, ref[i]) for i in range(H)])
    sol = lqr.solve_discrete(Aa, Ba, Qa, _dense(R, s), fold(C, ref[H]))
    return sol


def test_window_matches_lqr_with_reference_folded_in(rng):
    n, s, H = 3, 2, 10
    A, B = random_system(rng, n, s)
    Q, R, C = WEIGHTS["diag"](rng, n, s)
    x0, ref = rng.standard_normal(n), rng.standard_normal((H + 1, n))
    sol = _lqr_window_first_gain(A, B, Q, R, C, ref)
    z, u_lqr = np.append(x0, 1.0), []
    for i in range(H):
        u_lqr.append(sol.K[i] @ z)
        z = np.append(A @ z[:n] + B @ u_lqr[-1], 1.0)
    u_lqr = np.array(u_lqr)
    for method, iters in [("lbfgs", 300), ("gauss_newton", 1)]:
        res = mpc.HorizonOptimizer(mpc.LinearModel(A, B), H, Q, R, C, iterations=iters, method=method).solve(x0, ref)
        np.testing.assert_allclose(res.u, u_lqr, atol=1e-6 * max(1, np.abs(u_lqr).max()))
        assert res.cost == pytest.approx(sol.cost_to_go(np.append(x0, 1.0)), rel=1e-8)


def test_gauss_newton_one_sweep_is_exact_on_linear_model(rng):
    n, s, H = 5, 2, 7
    A, B = random_system(rng, n, s, scale=1.2)
    Q, R, C = WEIGHTS["dense"](rng, n, s)
    x0, ref = rng.standard_normal(n), rng.standard_normal((H + 1, n))
    u_star, J_star = dense_window(A, B, Q, R, C, x0, ref)
    opt = mpc.HorizonOptimizer(mpc.LinearModel(A, B), H, Q, R, C, iterations=1, method="gauss_newton")
    res = opt.solve(x0, ref, u0=rng.standard_normal((H, s)))
    assert res.iterations == 1
    np.testing.assert_allclose(res.u, u_star, atol=1e-9 * max(1, np.abs(u_star).max()))
    assert res.cost == pytest.approx(J_star, rel=1e-10)


@pytest.mark.parametrize("method", ["lbfgs", "gauss_newton"])
def test_box_limits_match_scipy(rng, method):
    n, s, H = 3, 2, 6
    A, B = random_system(rng, n, s)
    Q, R, C = np.ones(n), 0.01 * np.ones(s), 5 * np.ones(n)
    x0, ref = 10 * rng.standard_normal(n), np.zeros((H + 1, n))
    lo, hi = -0.3, 0.4
    u_free, _ = dense_window(A, B, Q, R, C, x0, ref)
    assert u_free.min() < lo or u_free.max() > hi  # the limits matter here
    Phi, Gam = _window_matrices(A, B, H)
    Wx, Wu = _block_weights(Q, R, C, n, s, H)
    c = Phi @ x0 - ref.ravel()

    def f(v):  # independent dense cost and gradient
        e = Gam @ v + c
        return e @ Wx @ e + v @ Wu @ v, 2 * Gam.T @ Wx @ e + 2 * Wu @ v

    ref_sol = scipy.optimize.minimize(f, np.zeros(H * s), jac=True, method="L-BFGS-B", bounds=[(lo, hi)] * (H * s),
                                      options=dict(ftol=1e-16, gtol=1e-12, maxiter=2000))
    opt = mpc.HorizonOptimizer(mpc.LinearModel(A, B), H, Q, R, C, iterations=300, lower=lo, upper=hi)
    res = opt.solve(x0, ref)
    assert np.all(res.u >= lo) and np.all(res.u <= hi)
    assert np.any(np.isclose(res.u, lo)) or np.any(np.isclose(res.u, hi))  # limits are active
    if method == "lbfgs":
        assert res.cost == pytest.approx(ref_sol.fun, rel=1e-7)
        np.testing.assert_allclose(res.u.ravel(), ref_sol.x, atol=1e-4)
    else:  # clamped iLQR: feasible and decreasing, not the exact box optimum
        gn = mpc.HorizonOptimizer(mpc.LinearModel(A, B), H, Q, R, C, iterations=20, lower=lo, upper=hi,
                                  method="gauss_newton").solve(x0, ref)
        assert np.all(gn.u >= lo) and np.all(gn.u <= hi)
        assert gn.cost < gn.cost_initial and gn.cost >= ref_sol.fun * (1 - 1e-9)


# ------------------------------------------------------------ warm start, budget, loop
def test_warm_start_shifts_previous_solution(rng):
    n, s, H = 3, 1, 8
    A, B = random_system(rng, n, s)
    Q, R, C = WEIGHTS["diag"](rng, n, s)
    ref = np.zeros((H + 1, n))
    opt = mpc.HorizonOptimizer(mpc.LinearModel(A, B), H, Q, R, C, iterations=200)
    x0 = rng.standard_normal(n)
    first = opt.solve(x0, ref)
    x1 = A @ x0 + B @ first.u[0]
    opt2 = mpc.HorizonOptimizer(mpc.LinearModel(A, B), H, Q, R, C, iterations=0)
    cold = opt2.solve(x1, ref)
    assert cold.iterations == 0
    np.testing.assert_array_equal(cold.u, 0.0)
    warm0 = mpc.HorizonOptimizer(mpc.LinearModel(A, B), H, Q, R, C, iterations=0)
    shifted = np.vstack([first.u[1:], first.u[-1:]])
    warm = warm0.solve(x1, ref, u0=shifted)
    # the optimizer's own warm start is exactly the shifted previous solution
    opt_zero_iter = mpc.HorizonOptimizer(mpc.LinearModel(A, B), H, Q, R, C, iterations=200)
    opt_zero_iter.solve(x0, ref)
    second = opt_zero_iter.solve(x1, ref)
    assert second.cost_initial == pytest.approx(warm.cost_initial, rel=1e-10)
    assert warm.cost_initial < cold.cost_initial


def test_time_budget_stops_early(rng):
    n, s, H = 20, 5, 40
    A, B = random_system(rng, n, s)
    opt = mpc.HorizonOptimizer(mpc.LinearModel(A, B), H, 1.0, 0.01, 1.0, iterations=100000, time_budget=1e-4)
    res = opt.solve(rng.standard_normal(n), rng.standard_normal((H + 1, n)))
    assert res.iterations < 100000 and res.seconds < 0.5
    assert res.cost <= res.cost_initial


@pytest.mark.parametrize("method", ["lbfgs", "gauss_newton"])
def test_receding_horizon_loop_equals_lqr_of_each_window(rng, method):
    n, s, H, steps = 3, 2, 5, 12
    A, B = random_system(rng, n, s)
    Q, R, C = WEIGHTS["diag"](rng, n, s)
    t = np.arange(steps + H + 1)[:, None]
    ref = np.sin(0.3 * t + np.arange(n)[None, :])
    x0 = rng.standard_normal(n)
    # NumPy reference: at each step, the first control of the window's LQR solution
    xs, us = [x0], []
    for k in range(steps):
        sol = _lqr_window_first_gain(A, B, Q, R, C, ref[k:k + H + 1])
        us.append(sol.K[0] @ np.append(xs[-1], 1.0))
        xs.append(A @ xs[-1] + B @ us[-1])
    xs, us = np.array(xs), np.array(us)
    model = mpc.LinearModel(A, B)
    opt = mpc.HorizonOptimizer(model, H, Q, R, C, iterations=200 if method == "lbfgs" else 1, method=method)
    run = opt.run(model, x0, ref, steps)
    assert run.states.shape == (steps + 1, n) and run.controls.shape == (steps, s)
    np.testing.assert_allclose(run.controls, us, atol=1e-6)
    np.testing.assert_allclose(run.states, xs, atol=1e-6)
    assert np.all(run.cost <= run.cost_initial + 1e-12)


def test_restart_from_actual_state_corrects_model_mismatch(rng):
    """The optimizer predicts with a wrong model; restarting every window from
    the plant's actual state still tracks (the paper's point)."""
    n, s, H, steps = 2, 1, 5, 60
    A = np.array([[1.0, 0.1], [0.0, 1.0]])
    B = np.array([[0.005], [0.1]])
    plant = mpc.LinearModel(A, B)
    wrong = mpc.LinearModel(A, 0.7 * B)  # 30 % weaker actuation predicted
    ref = np.zeros((steps + H + 1, n))
    ref[:, 0] = 1.0
    opt = mpc.HorizonOptimizer(wrong, H, [10.0, 0.1], 0.01, [50.0, 1.0], iterations=100)
    run = opt.run(plant, np.zeros(n), ref, steps)
    assert abs(run.states[-1, 0] - 1.0) < 0.02 and abs(run.states[-1, 1]) < 0.05
    # the open-loop plan of the wrong model, applied blindly, misses the target
    plan = mpc.HorizonOptimizer(wrong, steps, [10.0, 0.1], 0.01, [50.0, 1.0], iterations=300).solve(
        np.zeros(n), ref[:steps + 1])
    x = np.zeros(n)
    for u in plan.u:
        x = A @ x + B @ u
    assert abs(x[0] - 1.0) > 5 * abs(run.states[-1, 0] - 1.0)


# ------------------------------------------------------------ bad input
def _opt(**kw):
    A, B = np.eye(2), np.ones((2, 1))
    args = dict(model=mpc.LinearModel(A, B), horizon=3, Q=1.0, R=1.0, C=1.0)
    args.update(kw)
    return mpc.HorizonOptimizer(**args)


@pytest.mark.parametrize("kw,exc,word", [
    (dict(horizon=0), ValueError, "horizon"),
    (dict(Q=-1.0), ValueError, "Q"),
    (dict(C=np.array([1.0, -2.0])), ValueError, "C"),
    (dict(R=0.0), ValueError, "R"),
    (dict(R=np.array([[1.0, 0], [0, 1.0]])), ValueError, "R"),
    (dict(Q=np.array([[1.0, 2.0], [2.0, 1.0]])), ValueError, "Q"),
    (dict(Q=np.array([np.nan, 1.0])), ValueError, "Q"),
    (dict(lower=1.0, upper=0.0), ValueError, "lower"),
    (dict(iterations=-1), ValueError, "iterations"),
    (dict(time_budget=-1.0), ValueError, "time_budget"),
    (dict(method="newton"), ValueError, "method"),
    (dict(model="A"), TypeError, "model"),
    (dict(horizon=2.5), TypeError, "horizon"),
    (dict(horizon=-3), ValueError, "horizon"),
    (dict(R=np.array([-1.0])), ValueError, "R"),
    (dict(Q=np.array([1.0, 1.0, 1.0])), ValueError, "Q"),
    (dict(C=np.array([[1.0, 0.0], [0.0, np.inf]])), ValueError, "C"),
    (dict(lower=np.array([np.nan])), ValueError, "lower"),
])
def test_bad_construction(kw, exc, word):
    with pytest.raises(exc, match=word):
        _opt(**kw)


def test_bad_input_messages_name_expected_and_received():
    opt = _opt()
    with pytest.raises(ValueError, match=r"reference.*\(4, 2\).*\(3, 2\)"):
        opt.solve(np.zeros(2), np.zeros((3, 2)))
    with pytest.raises(ValueError, match=r"horizon.*0"):
        _opt(horizon=0)
    with pytest.raises(ValueError, match=r"u0.*\(3, 1\).*\(2, 1\)"):
        opt.solve(np.zeros(2), np.zeros((4, 2)), u0=np.zeros((2, 1)))


def test_bad_values_in_solve_and_gradient():
    """NaN / inf states, references and starting controls, wrong-shaped
    control references: ValueError naming the argument, in solve,
    cost_and_gradient and run alike."""
    opt = _opt()
    x, ref, u = np.zeros(2), np.zeros((4, 2)), np.zeros((3, 1))
    bad_ref = ref.copy()
    bad_ref[2, 1] = np.nan
    with pytest.raises(ValueError, match="reference"):
        opt.solve(x, bad_ref)
    with pytest.raises(ValueError, match="reference"):
        opt.solve(x, np.zeros(8))  # 1-D
    with pytest.raises(ValueError, match="x0"):
        opt.solve(np.array([0.0, np.inf]), ref)
    with pytest.raises(ValueError, match="u0"):
        opt.solve(x, ref, u0=np.full((3, 1), np.nan))
    with pytest.raises(ValueError, match="u0"):
        opt.solve(x, ref, u0=np.zeros(3))  # 1-D
    with pytest.raises(ValueError, match="u_reference"):
        opt.solve(x, ref, u_reference=np.zeros((2, 1)))
    with pytest.raises(ValueError, match="u_reference"):
        opt.solve(x, ref, u_reference=np.full((3, 1), np.nan))
    with pytest.raises(ValueError, match="x0"):
        opt.cost_and_gradient(np.array([np.nan, 0.0]), ref, u)
    with pytest.raises(ValueError, match="reference"):
        opt.cost_and_gradient(x, bad_ref, u)
    with pytest.raises(ValueError, match="u"):
        opt.cost_and_gradient(x, ref, np.zeros((3, 2)))
    with pytest.raises(ValueError, match="u_reference"):
        opt.cost_and_gradient(x, ref, u, u_reference=np.zeros((3, 2)))
    plant = mpc.LinearModel(np.eye(2), np.ones((2, 1)))
    with pytest.raises(ValueError, match="x0"):
        opt.run(plant, np.array([np.nan, 0.0]), np.zeros((7, 2)), steps=3)
    long_ref = np.zeros((7, 2))
    long_ref[5, 0] = np.nan
    with pytest.raises(ValueError, match="reference"):
        opt.run(plant, x, long_ref, steps=3)
    with pytest.raises(ValueError, match="steps"):
        opt.run(plant, x, np.zeros((4, 2)), steps=0)
    # nothing was half-applied: a good solve still works and is finite
    res = opt.solve(np.ones(2), ref)
    assert np.all(np.isfinite(res.u)) and res.cost < res.cost_initial


def test_diverging_prediction_is_reported():
    """A prediction that overflows over the window is an error naming the
    cause, not NaN controls (both methods)."""
    model = mpc.LinearModel(1e200 * np.eye(2), np.ones((2, 1)))
    for method in ("lbfgs", "gauss_newton"):
        opt = mpc.HorizonOptimizer(model, 4, 1.0, 1.0, 1.0, method=method)
        with pytest.raises(ValueError, match="not finite"):
            opt.solve(np.ones(2), np.zeros((5, 2)))


def test_control_reference_shifts_the_optimum(rng):
    """||u - u_ref||^2_R: on a linear model the optimum equals the dense
    solution of the shifted problem; gradient = finite differences."""
    n, s, H = 3, 2, 4
    A, B = random_system(rng, n, s)
    Q, R, C = 1.0, 0.5, 3.0
    x0, ref, ur = rng.standard_normal(n), rng.standard_normal((H + 1, n)), rng.standard_normal((H, s))
    # substitute u = ur + v: x+ = A x + B ur + B v -> fold B ur into the reference by superposition
    Phi, Gam = _window_matrices(A, B, H)
    Wx, Wu = _block_weights(np.full(n, Q), np.full(s, R), np.full(n, C), n, s, H)
    c = Phi @ x0 + Gam @ ur.ravel() - ref.ravel()
    v = -np.linalg.solve(Gam.T @ Wx @ Gam + Wu, Gam.T @ Wx @ c)
    u_exact = ur + v.reshape(H, s)
    for method in ("gauss_newton", "lbfgs"):
        opt = mpc.HorizonOptimizer(mpc.LinearModel(A, B), H, Q, R, C, iterations=200, method=method)
        res = opt.solve(x0, ref, u0=np.zeros((H, s)), u_reference=ur)
        np.testing.assert_allclose(res.u, u_exact, atol=1e-6)
    opt = mpc.HorizonOptimizer(mpc.LinearModel(A, B), H, Q, R, C)
    u = rng.standard_normal((H, s))
    J, g = opt.cost_and_gradient(x0, ref, u, u_reference=ur)
    fd = _fd_cost_gradient(opt, x0, ref, u, ur)
    np.testing.assert_allclose(g, fd, atol=1e-6)
    assert J == pytest.approx(opt.cost_and_gradient(x0, ref, u)[0] - R * np.sum(u**2) + R * np.sum((u - ur) ** 2))


def test_substeps_chain_step_vjp_jacobians(rng):
    """Substeps(model, k): k inner steps, control held; VJP and Jacobians
    equal the chained linear map, and on a nonlinear model finite differences."""
    n, s = 3, 2
    A, B = random_system(rng, n, s)
    m = mpc.Substeps(mpc.LinearModel(A, B), 3)
    assert (m.n, m.s, m.count, m.has_jacobians) == (n, s, 3, True)
    x, u, lam = rng.standard_normal(n), rng.standard_normal(s), rng.standard_normal(n)
    A3, B3 = A @ A @ A, (A @ A + A + np.eye(n)) @ B
    np.testing.assert_allclose(m.step(x, u), A3 @ x + B3 @ u, atol=1e-12)
    Ja, Jb = m.jacobians(x, u)
    np.testing.assert_allclose(Ja, A3, atol=1e-12)
    np.testing.assert_allclose(Jb, B3, atol=1e-12)
    gx, gu = m.vjp(x, u, lam)
    np.testing.assert_allclose(gx, A3.T @ lam, atol=1e-12)
    np.testing.assert_allclose(gu, B3.T @ lam, atol=1e-12)
    with pytest.raises(ValueError, match="count"):
        mpc.Substeps(mpc.LinearModel(A, B), 0)
    with pytest.raises(TypeError, match="model"):
        mpc.Substeps("A", 2)


def test_bad_solve_input():
    opt = _opt()
    with pytest.raises(ValueError, match="reference"):
        opt.solve(np.zeros(2), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="reference"):
        opt.solve(np.zeros(2), np.zeros((4, 3)))
    with pytest.raises(ValueError, match="x0"):
        opt.solve(np.array([np.nan, 0.0]), np.zeros((4, 2)))
    with pytest.raises(ValueError, match="x0"):
        opt.solve(np.zeros(3), np.zeros((4, 2)))
    with pytest.raises(ValueError, match="u0"):
        opt.solve(np.zeros(2), np.zeros((4, 2)), u0=np.zeros((2, 1)))
    with pytest.raises(TypeError, match="reference"):
        opt.solve(np.zeros(2), np.zeros((4, 2), complex))
    with pytest.raises(ValueError, match="reference"):
        opt.run(mpc.LinearModel(np.eye(2), np.ones((2, 1))), np.zeros(2), np.zeros((5, 2)), steps=3)
    with pytest.raises(ValueError, match="plant"):
        opt.run(mpc.LinearModel(np.eye(3), np.ones((3, 1))), np.zeros(2), np.zeros((7, 2)), steps=3)
    with pytest.raises(ValueError, match="A"):
        mpc.LinearModel(np.ones((2, 3)), np.ones((2, 1)))
    with pytest.raises(ValueError, match="B"):
        mpc.LinearModel(np.eye(2), np.ones((3, 1)))
    with pytest.raises(ValueError, match="A"):
        mpc.LinearModel(np.full((2, 2), np.inf), np.ones((2, 1)))


def test_exported():
    assert dr.mpc.HorizonOptimizer is mpc.HorizonOptimizer and dr.mpc.LinearModel is mpc.LinearModel


# ------------------------------------------------------------ a nonlinear Model (spring chain)
def _chain_problem(make_chain, rng, H=6):
    chain = make_chain(m=3, actuated=[0, 2])
    pred = mpc.EulerModel(chain, dt=0.02)
    n, s = pred.n, pred.s
    x0 = 0.3 * rng.standard_normal(n)
    ref = np.zeros((H + 1, n))
    ref[:, :3] = 0.2
    return chain, pred, x0, ref


def _fd_jacobians(pred, x, u, h=1e-6):
    """Central-difference d step / dx and d step / du of a prediction model."""
    Jx = np.column_stack([(pred.step(x + h * e, u) - pred.step(x - h * e, u)) / (2 * h) for e in np.eye(pred.n)])
    Ju = np.column_stack([(pred.step(x, u + h * e) - pred.step(x, u - h * e)) / (2 * h) for e in np.eye(pred.s)])
    return Jx, Ju


def _assert_derivatives_match_fd(pred, x, u, lam):
    """Jacobians equal central differences; the VJP equals both J' lam and the Jacobians' transpose."""
    Jx, Ju = _fd_jacobians(pred, x, u)
    A, B = pred.jacobians(x, u)
    np.testing.assert_allclose(A, Jx, atol=1e-7)
    np.testing.assert_allclose(B, Ju, atol=1e-9)
    gx, gu = pred.vjp(x, u, lam)
    np.testing.assert_allclose(gx, Jx.T @ lam, atol=1e-7)
    np.testing.assert_allclose(gu, Ju.T @ lam, atol=1e-9)
    np.testing.assert_allclose(gx, A.T @ lam, atol=1e-12)
    np.testing.assert_allclose(gu, B.T @ lam, atol=1e-12)


def test_euler_model_vjp_and_jacobians_equal_finite_differences(make_chain, rng):
    chain, pred, x0, _ = _chain_problem(make_chain, rng)
    n, s = pred.n, pred.s
    u, lam = rng.standard_normal(s), rng.standard_normal(n)
    np.testing.assert_allclose(pred.step(x0, u), x0 + 0.02 * (chain.dynamics(x0) + chain.control_matrix() @ u),
                               rtol=1e-14, atol=1e-14)
    _assert_derivatives_match_fd(pred, x0, u, lam)


def test_adjoint_gradient_nonlinear_model_equals_finite_differences(make_chain, rng):
    _, pred, x0, ref = _chain_problem(make_chain, rng)
    H, s = ref.shape[0] - 1, pred.s
    opt = mpc.HorizonOptimizer(pred, H, 1.0, 0.05, 10.0)
    u = rng.standard_normal((H, s))
    _, g = opt.cost_and_gradient(x0, ref, u)
    fd = _fd_cost_gradient(opt, x0, ref, u)
    np.testing.assert_allclose(g, fd, atol=1e-6 * max(1.0, np.abs(fd).max()))


def test_gauss_newton_and_lbfgs_agree_on_nonlinear_model(make_chain, rng):
    _, pred, x0, ref = _chain_problem(make_chain, rng)
    H = ref.shape[0] - 1
    lb = mpc.HorizonOptimizer(pred, H, 1.0, 0.05, 10.0, iterations=500).solve(x0, ref)
    gn = mpc.HorizonOptimizer(pred, H, 1.0, 0.05, 10.0, iterations=30, method="gauss_newton").solve(x0, ref)
    assert gn.cost == pytest.approx(lb.cost, rel=1e-7)
    np.testing.assert_allclose(gn.u, lb.u, atol=1e-4 * max(1.0, np.abs(lb.u).max()))
    assert 1 < gn.iterations <= 30  # nonlinear: more than one sweep needed


# ------------------------------------------------------------ a model written in Python
class Pendulum(mpc.PredictionModel):
    """Discrete damped pendulum x = (angle, rate), torque u; explicit Euler."""

    n, s, has_jacobians = 2, 1, True
    dt = 0.05

    def step(self, x, u, i=0):
        return np.array([x[0] + self.dt * x[1], x[1] + self.dt * (-9.81 * np.sin(x[0]) - 0.1 * x[1] + u[0])])

    def jacobians(self, x, u, i=0):
        A = np.array([[1.0, self.dt], [-self.dt * 9.81 * np.cos(x[0]), 1 - 0.1 * self.dt]])
        return A, np.array([[0.0], [self.dt]])

    def vjp(self, x, u, lam, i=0):
        A, B = self.jacobians(x, u, i)
        return A.T @ lam, B.T @ lam


def test_python_model_gradient_and_both_methods(rng):
    pend, H = Pendulum(), 15
    x0, ref = np.array([0.3, 0.0]), np.tile([np.pi, 0.0], (H + 1, 1))  # swing towards upright
    opt = mpc.HorizonOptimizer(pend, H, [1.0, 0.01], 0.01, [50.0, 1.0], iterations=300)
    u = rng.standard_normal((H, 1))
    _, g = opt.cost_and_gradient(x0, ref, u)
    h = 1e-6
    fd = np.array([(opt.cost_and_gradient(x0, ref, u + h * e.reshape(H, 1))[0]
                    - opt.cost_and_gradient(x0, ref, u - h * e.reshape(H, 1))[0]) / (2 * h) for e in np.eye(H)])
    np.testing.assert_allclose(g.ravel(), fd, rtol=1e-6, atol=1e-8 * np.abs(fd).max())
    lb = opt.solve(x0, ref)
    gn = mpc.HorizonOptimizer(pend, H, [1.0, 0.01], 0.01, [50.0, 1.0], iterations=50,
                              method="gauss_newton").solve(x0, ref)
    assert lb.cost < 0.9 * lb.cost_initial
    assert gn.cost == pytest.approx(lb.cost, rel=1e-4)


def test_python_model_missing_methods():
    class NoVJP(mpc.PredictionModel):
        n, s = 1, 1

        def step(self, x, u, i=0):
            return x + u

    opt = mpc.HorizonOptimizer(NoVJP(), 2, 1.0, 1.0, 1.0)
    with pytest.raises(RuntimeError, match="vjp"):
        opt.solve(np.zeros(1), np.ones((3, 1)))
    with pytest.raises(ValueError, match="gauss_newton"):
        mpc.HorizonOptimizer(NoVJP(), 2, 1.0, 1.0, 1.0, method="gauss_newton")

    class NoDims(mpc.PredictionModel):
        pass

    with pytest.raises(RuntimeError, match="define n"):
        mpc.HorizonOptimizer(NoDims(), 2, 1.0, 1.0, 1.0)


def test_substeps_nonlinear_model_equals_finite_differences(make_chain, rng):
    chain = make_chain(m=3, actuated=[0, 2])
    pred = mpc.Substeps(mpc.EulerModel(chain, dt=0.005), 4)
    n, s = pred.n, pred.s
    x0, u, lam = 0.3 * rng.standard_normal(n), rng.standard_normal(s), rng.standard_normal(n)
    inner, x = pred.model, x0
    for j in range(4):
        x = inner.step(x, u, j)
    np.testing.assert_allclose(pred.step(x0, u), x, rtol=1e-14, atol=1e-14)
    _assert_derivatives_match_fd(pred, x0, u, lam)


# ------------------------------------------------------------ the receding-horizon loop in C++
def test_receding_run_on_a_model_plant_equals_the_python_loop(make_chain, rng):
    """run() with a Model plant (its own step, substeps), a feed-forward per
    window, a first-window start and a disturbance: the same states and
    controls as solve() + simulate() step by step with warm starts."""
    chain, pred, x0, _ = _chain_problem(make_chain, rng)
    H, steps, dt, sub = 4, 8, 0.02, 2
    n, s = pred.n, pred.s
    opt = mpc.HorizonOptimizer(mpc.Substeps(mpc.EulerModel(chain, dt=dt / sub), sub), H, 1.0, 0.1, 5.0,
                               iterations=3, method="gauss_newton")
    ref = 0.1 * rng.standard_normal((steps + H + 1, n))
    u_ref = 0.2 * rng.standard_normal((steps + H, s))
    dist = np.zeros((steps, s))
    dist[3] = 0.5
    run = opt.run(chain, x0, ref, steps, u_reference=u_ref, u0=u_ref[:H], dt=dt, substeps=sub, disturbance=dist)
    ws, z, states, controls = opt.create_workspace(), x0, [x0], []
    for k in range(steps):
        res = opt.solve(z, ref[k:k + H + 1], u0=u_ref[:H] if k == 0 else None, u_reference=u_ref[k:k + H],
                        workspace=ws)
        w = np.repeat((res.u[0] + dist[k])[None], sub, axis=0)
        z = dr.simulate(chain, z, sub, dt / sub, t0=k * dt, open_loop=w).states[-1]
        states.append(z)
        controls.append(res.u[0])
    np.testing.assert_array_equal(run.controls, np.array(controls))
    np.testing.assert_array_equal(run.states, np.array(states))
    assert run.iterations.shape == (steps,) and np.all(run.cost <= run.cost_initial)


def test_receding_run_bad_arguments(make_chain, rng):
    chain, pred, x0, _ = _chain_problem(make_chain, rng)
    H, steps = 3, 4
    opt = mpc.HorizonOptimizer(pred, H, 1.0, 0.1, 1.0, iterations=2)
    ref = np.zeros((steps + H + 1, pred.n))
    with pytest.raises(ValueError, match=r"u_reference.*\(7, 2\).*\(6, 2\)"):
        opt.run(pred, x0, ref, steps, u_reference=np.zeros((steps + H - 1, pred.s)))
    with pytest.raises(ValueError, match="u_reference"):
        opt.run(pred, x0, ref, steps, u_reference=np.full((steps + H, pred.s), np.nan))
    with pytest.raises(ValueError, match=r"u0.*\(3, 2\)"):
        opt.run(pred, x0, ref, steps, u0=np.zeros((H + 1, pred.s)))
    with pytest.raises(ValueError, match="disturbance"):
        opt.run(pred, x0, ref, steps, disturbance=np.full((steps, pred.s), np.inf))
    with pytest.raises(ValueError, match="disturbance"):
        opt.run(chain, x0, ref, steps, dt=0.02, disturbance=np.zeros((steps, pred.s + 1)))
    with pytest.raises(TypeError, match="dt"):
        opt.run(chain, x0, ref, steps)
    with pytest.raises(ValueError, match="substeps"):
        opt.run(chain, x0, ref, steps, dt=0.02, substeps=0)
    with pytest.raises(ValueError, match="dt"):
        opt.run(chain, x0, ref, steps, dt=-1.0)
    with pytest.raises(TypeError, match="plant"):
        opt.run("chain", x0, ref, steps)
    plant = mpc.ModelPlant(chain, x0, 0.02)
    with pytest.raises(ValueError, match="x0"):
        opt.run(plant, x0, ref, steps)
    run = opt.run(plant, None, ref, steps)  # the plant object keeps its state
    np.testing.assert_array_equal(plant.state, run.states[-1])


def test_receding_run_reports_a_diverging_plant_with_its_step():
    """The plant's state overflows the window's cost at step 1: the error names the step."""
    unstable = mpc.LinearModel(np.array([[1e200]]), np.array([[1.0]]))
    opt = mpc.HorizonOptimizer(mpc.LinearModel(np.eye(1), np.ones((1, 1))), 2, 1.0, 1.0, 1.0, iterations=1)
    with pytest.raises(ValueError, match=r"step 1\b.*not finite"):
        opt.run(unstable, np.ones(1), np.zeros((8, 1)), 5)


def _sph_fluid():
    from directable import sph

    pts = sph.block((0.3, 0.0), (0.42, 0.1), 0.02)
    return sph.SPHFluid2D(pts, sph.box_walls((0.0, 0.0), (1.0, 1.0), 0.02), spacing=0.02, h=0.026)


def test_sph_plant_with_refreeze_equals_a_fresh_model_per_frame():
    """One run() call on an SPHPlant2D (the prediction refrozen every frame,
    warm starts, a sphere launched at frame 2) = a Python loop that builds
    a new prediction model and optimizer every frame and starts each window
    from the previous plan shifted by one step, with the previous window's
    curvature scale."""
    from directable import sph

    H, frames, sub = 2, 4, 5
    launch = ([0.2, 0.05], 0.04, [3.0, 0.0])
    kw = dict(iterations=3)

    def optimizer(model, n):
        W = np.r_[1e4 * np.ones(n // 2), np.zeros(n // 2)]
        return mpc.HorizonOptimizer(mpc.Substeps(model, 2), H, W, 1e-8, W, **kw)

    fluid = _sph_fluid()
    x_ref = sph.state(fluid)
    ref = np.tile(x_ref, (frames + H + 1, 1))
    model = fluid.prediction_model(dt=sub * fluid.dt / 2)
    opt = optimizer(model, model.n)
    plant = mpc.SPHPlant2D(fluid, sub, prediction=model)
    plant.launch_sphere(2, *launch)
    run = opt.run(plant, None, ref, frames)

    fluid = _sph_fluid()
    states, u0, scale = [sph.state(fluid)], None, None
    for f in range(frames):
        if f == 2:
            fluid.set_sphere(*launch)
        fresh = fluid.prediction_model(dt=sub * fluid.dt / 2)
        res = optimizer(fresh, fresh.n).solve(sph.state(fluid), ref[f:f + H + 1], u0=u0, curvature_scale=scale)
        u0, scale = np.vstack([res.u[1:], res.u[-1:]]), res.curvature_scale
        fluid.step(res.u[0].reshape(-1, 2), steps=sub)
        states.append(sph.state(fluid))
    np.testing.assert_array_equal(run.states, np.array(states))
    assert np.abs(run.states[-1] - run.states[2]).max() > 1e-3  # the sphere hit it


def test_sph_plant_bad_arguments():
    fluid = _sph_fluid()
    with pytest.raises(ValueError, match="frame_steps"):
        mpc.SPHPlant2D(fluid, 0)
    other = _sph_fluid().prediction_model()
    small = mpc.SPHPlant2D(fluid, 1, prediction=other)  # same counts: fine
    assert small.n == 2 * small.s == 4 * fluid.size
    with pytest.raises(ValueError, match="radius"):
        small.launch_sphere(0, [0.2, 0.05], 0.0, [1.0, 0.0])
    with pytest.raises(ValueError, match="centre"):
        small.launch_sphere(0, [0.2, np.nan], 0.1, [1.0, 0.0])
    with pytest.raises(ValueError, match="frame"):
        small.launch_sphere(-1, [0.2, 0.05], 0.1, [1.0, 0.0])


def test_receding_run_reports_progress_and_stops_on_an_exception():
    """run() reports (done, total) from the C++ loop; an exception from the
    callback (Ctrl-C) stops it at the next step."""
    n, H, steps = 8, 5, 20_000
    model = mpc.LinearModel(0.99 * np.eye(n), np.ones((n, 2)))
    opt = mpc.HorizonOptimizer(model, H, 1.0, 0.1, 1.0, iterations=20)
    ref = np.ones((steps + H + 1, n))
    calls = []

    def cb(done, total):
        calls.append((done, total))
        if len(calls) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        opt.run(model, np.zeros(n), ref, steps, progress=cb)
    assert len(calls) == 2 and all(total == steps and 0 < done < steps for done, total in calls)
    seen = []
    opt.run(model, np.zeros(n), ref[:10 + H + 1], 10, progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (10, 10)


def test_receding_run_stops_inside_a_long_window():
    """A stop request is honoured between the iterations of a window's solve,
    not only between windows: one window here runs for minutes (ill
    conditioned, 1000 iterations, 2 ms per model call)."""
    import time

    class Slow(mpc.PredictionModel):
        n, s = 2, 1

        def step(self, x, u, i):
            time.sleep(1e-3)
            return np.array([x[0] + 0.1 * x[1], x[1] + 0.1 * u[0]])

        def vjp(self, x, u, lam, i):
            time.sleep(1e-3)
            return np.array([lam[0], 0.1 * lam[0] + lam[1]]), np.array([0.1 * lam[1]])

    H = 30
    ref = np.zeros((2 + H + 1, 2))
    ref[:, 0] = np.linspace(0, 1, 2 + H + 1) ** 3
    kw = dict(iterations=1000)
    budget = mpc.HorizonOptimizer(Slow(), H, [1.0, 0.0], 1e-9, [1e3, 1e3], time_budget=1.0, **kw)
    first = budget.solve(np.zeros(2), ref[:H + 1])
    assert first.seconds >= 1.0 and first.iterations < 1000  # the window outlasts 1 s

    def cb(done, total):
        raise KeyboardInterrupt

    opt = mpc.HorizonOptimizer(Slow(), H, [1.0, 0.0], 1e-9, [1e3, 1e3], **kw)
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        opt.run(opt.model, np.zeros(2), ref, 2, progress=cb)
    assert time.perf_counter() - t0 < 0.5


def test_sph_plant_3d_holds_a_cube_in_one_call():
    """The 3D plant: a floating cube held against gravity by one run() call
    (the prediction refrozen every frame) falls far less than without control."""
    from directable import sph

    DX = 0.02
    ref = sph.block((0.4, 0.4, 0.5), (0.48, 0.48, 0.58), DX)
    N, sub, frames, H = len(ref), 5, 20, 2
    fluid = sph.SPHFluid3D(ref, np.zeros((0, 3)), spacing=DX, h=1.3 * DX, viscosity=0.2)
    free = sph.SPHFluid3D(ref, np.zeros((0, 3)), spacing=DX, h=1.3 * DX, viscosity=0.2)
    free.step(steps=sub * frames)
    model = fluid.prediction_model(dt=sub * fluid.dt)
    W = np.r_[1e4 * np.ones(3 * N), np.zeros(3 * N)]
    opt = mpc.HorizonOptimizer(model, H, W, 1e-8, W, iterations=8)
    x_ref = np.concatenate([ref.ravel(), np.zeros(3 * N)])
    hover = np.tile(np.tile([0.0, 0.0, 9.81 * fluid.mass], N), (H, 1))
    run = opt.run(mpc.SPHPlant3D(fluid, sub, prediction=model), None, np.tile(x_ref, (frames + H + 1, 1)), frames,
                  u0=hover)
    np.testing.assert_array_equal(run.states[-1, :3 * N], fluid.positions.ravel())
    fell = np.linalg.norm(free.positions - ref, axis=1).mean()
    held = np.linalg.norm(fluid.positions - ref, axis=1).mean()
    assert fell > 0.01 and held < 0.3 * fell
