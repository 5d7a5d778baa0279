"""The full FEM step's linear solvers: block-Jacobi conjugate gradients
against the sparse LDL' over a run, and against SciPy's sparse solve on one
Newton system; failures and bad settings named."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from directable import fem


@pytest.fixture(scope="module")
def model():
    mesh = fem.cantilever(1.0, 0.2, 0.2, n=(8, 2, 2))
    fixed = fem.vertices_where(mesh, lambda X: X[:, 0] < 1e-9)
    return fem.StVKModel(mesh, young=2e4, poisson=0.3, density=100.0, fixed=fixed, alpha=0.2, beta=0.01)


def _forces(model, T, scale=1.0):
    X = np.asarray(model.mesh.vertices)
    tip = np.flatnonzero(X[:, 0] > 1 - 1e-9)
    f = np.zeros((T, model.dofs))
    f[:, 3 * tip + 2] = -scale * np.sin(np.linspace(0, np.pi, T))[:, None]
    f[:, 3 * tip + 1] = 0.3 * scale * np.cos(np.linspace(0, 2 * np.pi, T))[:, None]
    return f


def test_direct_is_the_default_and_unchanged(model):
    forces = _forces(model, 10)
    sim = fem.Simulator(model, 0.01)
    assert sim.linear_solver == "direct" and sim.last_cg_iterations == 0
    got = sim.run_states(forces)
    ref = fem.Simulator(model, 0.01, linear_solver="direct").run_states(forces)
    for x, y in zip(got, ref):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("dt", [0.01, 0.03])
def test_cg_agrees_with_direct_over_a_run(model, dt):
    T = 60
    forces = _forces(model, T)
    tol = 1e-8
    ud, vd, _ = fem.Simulator(model, dt, tolerance=tol).run_states(forces)
    sim = fem.Simulator(model, dt, tolerance=tol, linear_solver="cg")
    uc, vc, _ = sim.run_states(forces)
    assert sim.linear_solver == "cg" and sim.last_cg_iterations > 0
    # both solve every step's Newton system to the same relative tolerance:
    # the runs agree far below the motion's size, over the whole run
    scale = np.abs(ud).max()
    assert scale > 1e-3
    assert np.abs(uc - ud).max() <= 1e-6 * scale
    assert np.abs(vc - vd).max() <= 1e-6 * np.abs(vd).max()
    # and each CG step satisfies the equations of motion: the residual of the
    # Newmark step computed here, independently, from the run's states
    M = np.asarray(model.mass)
    K = lambda u: sp.csc_matrix(model.tangent_stiffness(u))  # noqa: E731
    free = np.ones(model.dofs, bool)
    free[model.fixed_dofs] = False
    _, _, ac = fem.Simulator(model, dt, tolerance=tol, linear_solver="cg").run_states(forces)
    for t in (5, 30, T - 1):
        u, v, a = uc[t + 1], vc[t + 1], ac[t + 1]
        r = forces[t] - model.internal_forces(u) - M * a - model.alpha * M * v - model.beta * (K(u) @ v)
        assert np.linalg.norm(r[free]) <= 1e-6 * max(np.linalg.norm(forces[t]), 1e-3)


def test_cg_newton_system_matches_scipy(model):
    """One step from a deformed state: the CG correction of the first Newton
    iteration equals SciPy's sparse solve of the same Newmark matrix, so the
    step itself agrees with one Newton step computed here."""
    dt = 0.01
    rng = np.random.default_rng(0)
    free = np.ones(model.dofs, bool)
    free[model.fixed_dofs] = False
    u0 = 1e-3 * rng.standard_normal(model.dofs) * free
    f = _forces(model, 5)[2]
    sim = fem.Simulator(model, dt, max_iterations=1, tolerance=1e-14, linear_solver="cg", cg_tolerance=1e-12)
    sim.set_state(u0, np.zeros(model.dofs), np.zeros(model.dofs))
    try:
        sim.step(f)
    except RuntimeError:
        pass  # one Newton iteration: the step may report non-convergence; u is the first update
    # reference: one Newton iteration of implicit Newmark from (u0, 0, 0), predictor u0
    M = np.asarray(model.mass)
    nb, ng = 0.25, 0.5
    K = sp.csc_matrix(model.tangent_stiffness(u0))
    a = np.zeros(model.dofs)  # predictor u = u0 from rest: the Newmark acceleration is zero
    v = np.zeros(model.dofs)
    r = f - model.internal_forces(u0) - M * a - model.alpha * M * v - model.beta * (K @ v)
    A = K * (1 + ng / (nb * dt) * model.beta) + sp.diags(M * (1 / (nb * dt * dt) + ng / (nb * dt) * model.alpha))
    du = np.zeros(model.dofs)
    du[free] = spla.spsolve(sp.csc_matrix(A[free][:, free]), r[free])
    np.testing.assert_allclose(sim.u, u0 + du, rtol=0, atol=1e-9 * np.abs(du).max())


def test_cg_failure_names_step_and_residual(model):
    forces = _forces(model, 4)
    sim = fem.Simulator(model, 0.01, linear_solver="cg", cg_tolerance=1e-12, cg_max_iterations=1)
    with pytest.raises(RuntimeError, match=r"step 0: conjugate gradients did not converge in 1 iterations "
                                           r"\(linear residual .*Newton residual.*cg_max_iterations"):
        sim.run_states(forces)
    with pytest.raises(RuntimeError, match="conjugate gradients did not converge"):
        fem.Simulator(model, 0.01, linear_solver="cg", cg_tolerance=1e-12, cg_max_iterations=1).step(forces[1])


def test_bad_linear_solver_settings_are_named(model):
    with pytest.raises(ValueError, match=r'linear_solver must be "direct" or "cg", got "lu"'):
        fem.Simulator(model, 0.01, linear_solver="lu")
    with pytest.raises(TypeError, match="linear_solver"):
        fem.Simulator(model, 0.01, linear_solver=None)
    with pytest.raises(ValueError, match=r"cg_tolerance must lie in \(0, 1\), got 0"):
        fem.Simulator(model, 0.01, linear_solver="cg", cg_tolerance=0.0)
    with pytest.raises(ValueError, match="cg_tolerance"):
        fem.Simulator(model, 0.01, linear_solver="cg", cg_tolerance=float("nan"))
    with pytest.raises(ValueError, match="cg_max_iterations must be >= 1, got 0"):
        fem.Simulator(model, 0.01, linear_solver="cg", cg_max_iterations=0)
    with pytest.raises(TypeError, match="cg_max_iterations"):
        fem.Simulator(model, 0.01, linear_solver="cg", cg_max_iterations=2.5)


def test_enrich_and_centerline_take_the_solver(model):
    dt, T = 0.01, 20
    forces = _forces(model, T)
    u, v, a = fem.centerline(model, dt, forces, return_acceleration=True, linear_solver="cg")
    ud, _ = fem.centerline(model, dt, forces)
    assert np.abs(u - ud).max() <= 1e-6 * np.abs(ud).max()
    snaps = fem.enrich(model, dt, forces, runs=2, u=u, v=v, a=a, seed=1, linear_solver="cg")
    snaps_d = fem.enrich(model, dt, forces, runs=2, u=u, v=v, a=a, seed=1)
    assert snaps.shape == snaps_d.shape
    assert np.abs(snaps - snaps_d).max() <= 1e-6 * np.abs(snaps_d).max()
