"""Barbic & Popovic's PD baseline for a reduced fluid with particles (eq. 14),
its closed loops, and the viscosity matched to the full solver's dissipation."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from directable import fluid as F
from directable.experiments import reduced_fluid_paths as E


@pytest.fixture(scope="module")
def scn():
    return E.make_scenario(n=16, r=8, steps=40, particles=2, enrich=1)


def _eq14_numpy(scn, x, i, k_z, k_p, k_pdot):
    """Eq. 14 from ReducedFluid.modes: Psi at the particles' current positions."""
    P, f = scn.particles, scn.fluid
    xr = scn.x_ref[i]
    z, zr = x[2 * P:], xr[2 * P:]
    w = -k_z * (z - zr)
    for a in range(P):
        Psi, Psi_ref = f.modes(x[2 * a:2 * a + 2]), f.modes(xr[2 * a:2 * a + 2])
        dp = x[2 * a:2 * a + 2] - xr[2 * a:2 * a + 2]
        dpdot = Psi @ z - Psi_ref @ zr
        w -= Psi.T @ (k_p * dp + k_pdot * dpdot)
    return w


def test_eq14_matches_a_numpy_transcription_at_the_current_position(scn):
    law = F.ParticlePD(scn.model, scn.x_ref, scn.dt, 2.0, 300.0, 40.0)
    assert law.particles == 2 and law.horizon == scn.steps and law.gains == (2.0, 300.0, 40.0)
    rng = np.random.default_rng(0)
    for i in (0, 7, scn.steps):
        x = scn.x_ref[i] + 0.03 * rng.standard_normal(scn.x_ref.shape[1])
        np.testing.assert_allclose(law.control(x, i), _eq14_numpy(scn, x, i, 2.0, 300.0, 40.0), rtol=1e-12, atol=1e-12)
        # Psi is the one at the particle, not at its reference: frozen at the reference the force differs
        P = scn.particles
        frozen = -2.0 * (x[2 * P:] - scn.x_ref[i, 2 * P:]) - scn.fluid.modes(scn.x_ref[i, :2]).T @ (
            300.0 * (x[:2] - scn.x_ref[i, :2]))
        assert np.linalg.norm(law.control(x, i) - frozen) > 1e-3 * np.linalg.norm(frozen)
    # on the reference the law is silent (no feed-forward)
    assert np.abs(law.control(scn.x_ref[5], 5)).max() < 1e-12
    # the reference rates are the model's particle velocities there
    np.testing.assert_allclose(law.reference_rates[3], scn.model.dynamics(scn.x_ref[3], 0.0)[:4], rtol=1e-13)


@pytest.mark.parametrize("i", [0, 11, 39])
def test_gain_is_the_finite_difference_derivative_of_the_law(scn, i):
    # K_i uses Y = d p'/d p = [dPsi/dx z, dPsi/dy z], the gradient of Psi at the reference state
    law = F.ParticlePD(scn.model, scn.x_ref, scn.dt, 1.5, 200.0, 30.0)
    K = law.gain(i)
    x0 = scn.x_ref[i]
    eps = 1e-6
    fd = np.column_stack([(law.control(x0 + eps * e, i) - law.control(x0 - eps * e, i)) / (2 * eps)
                          for e in np.eye(len(x0))])
    np.testing.assert_allclose(K, fd, rtol=1e-6, atol=1e-6 * np.abs(K).max())


def test_mode_gradients_are_finite_differences_of_the_modes(scn):
    rng = np.random.default_rng(3)
    for p in rng.uniform(0.1, 0.9, (5, 2)):
        dx, dy = scn.fluid.mode_gradients(p)
        eps = 1e-7
        for d, e in ((dx, [eps, 0]), (dy, [0, eps])):
            fd = (scn.fluid.modes(p + e) - scn.fluid.modes(p - np.asarray(e))) / (2 * eps)
            np.testing.assert_allclose(d, fd, rtol=1e-5, atol=1e-7 * np.abs(d).max())


def test_run_equals_the_per_step_loop_and_the_sweep(scn):
    rng = np.random.default_rng(1)
    d = 3.0 * rng.standard_normal((scn.steps, scn.r))
    law = F.ParticlePD(scn.model, scn.x_ref, scn.dt, 1.0, 100.0, 10.0)
    res = law.run(scn.x_ref[0], scn.steps, d)
    x = scn.x_ref[0].copy()
    for i in range(scn.steps):
        w = law.control(x, i)
        np.testing.assert_array_equal(w, res.controls[i])
        x = scn.model.step(x, w + d[i], scn.dt, 0.0)
        np.testing.assert_array_equal(x, res.states[i + 1])
    assert np.allclose(res.effort, np.sum(np.asarray(res.controls) ** 2, axis=1))
    gains = np.array([[1.0, 100.0, 10.0], [0.5, 0.0, 0.0], [3.0, 50.0, 0.0]])
    one = law.sweep(gains, scn.x_ref[0], scn.steps, d, threads=1)
    two = law.sweep(gains, scn.x_ref[0], scn.steps, d, threads=2)
    for k in one:
        np.testing.assert_array_equal(one[k], two[k])
    P = scn.particles
    final = np.linalg.norm((res.states[-1, :2 * P] - scn.x_ref[-1, :2 * P]).reshape(P, 2), axis=1)
    np.testing.assert_array_equal(one["final_error"][0], final)
    assert one["effort"][0] == pytest.approx(np.sum(np.asarray(res.controls) ** 2) * scn.dt, rel=1e-12)
    assert np.all(one["diverged_at"] == -1)
    # the same law from four Python threads at once: the single-thread results bit for bit
    out = [None] * 4

    def work(k):
        out[k] = law.run(scn.x_ref[0], scn.steps, d).states

    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    for o in out:
        np.testing.assert_array_equal(o, res.states)


def test_reference_is_a_read_only_view_kept_alive(scn):
    law = F.ParticlePD(scn.model, scn.x_ref, scn.dt, 1.0)
    ref = law.reference
    assert not ref.flags.writeable and np.shares_memory(ref, law.reference)
    assert not np.shares_memory(ref, scn.x_ref)  # the law keeps its own copy, never the caller's array
    del law
    assert np.array_equal(ref, scn.x_ref)  # the view keeps its owner alive


def test_divergence_is_reported_with_the_step(scn):
    law = F.ParticlePD(scn.model, scn.x_ref, scn.dt, 1e12, 1e15, 1e12)
    with pytest.raises(ValueError, match="diverged .* at step"):
        law.run(scn.x_ref[0], scn.steps)
    out = law.sweep(np.array([[1e12, 1e15, 1e12], [1.0, 0.0, 0.0]]), scn.x_ref[0], scn.steps)
    assert out["diverged_at"][0] >= 0 and np.isinf(out["final_error"][0]).all() and np.isinf(out["effort"][0])
    assert out["diverged_at"][1] == -1 and np.isfinite(out["final_error"][1]).all()


def test_bad_input(scn):
    x_ref, dt = scn.x_ref, scn.dt
    with pytest.raises((TypeError, ValueError), match="model"):
        F.ParticlePD(None, x_ref, dt, particles=1)
    with pytest.raises(ValueError, match="x_ref must have shape"):
        F.ParticlePD(scn.model, x_ref[:, :-1], dt)
    with pytest.raises(ValueError, match="x_ref"):
        F.ParticlePD(scn.model, np.where(np.arange(x_ref.size).reshape(x_ref.shape) == 5, np.nan, x_ref), dt)
    with pytest.raises(ValueError, match="particles"):
        F.ParticlePD(scn.model, x_ref, dt, particles=3)
    with pytest.raises(ValueError, match="k_p must be finite and >= 0"):
        F.ParticlePD(scn.model, x_ref, dt, 1.0, -1.0)
    with pytest.raises(ValueError, match="k_pdot must be finite"):
        F.ParticlePD(scn.model, x_ref, dt, 1.0, 1.0, np.nan)
    with pytest.raises(ValueError, match="dt"):
        F.ParticlePD(scn.model, x_ref, 0.0)
    law = F.ParticlePD(scn.model, x_ref, dt, 1.0)
    with pytest.raises(ValueError, match=r"step must lie in \[0, 40\], got 41"):
        law.control(x_ref[0], 41)
    with pytest.raises(ValueError, match="x must have shape"):
        law.control(x_ref[0, :-1], 0)
    with pytest.raises(ValueError, match="steps must lie in"):
        law.run(x_ref[0], 41)
    with pytest.raises(ValueError, match="disturbance must have shape"):
        law.run(x_ref[0], 10, np.zeros((9, scn.r)))
    with pytest.raises(ValueError, match="gains must have shape"):
        law.sweep(np.ones((2, 2)), x_ref[0], 10)
    with pytest.raises(ValueError, match="x0"):
        law.run(np.full(x_ref.shape[1], np.nan), 10)


def test_law_on_a_scene_with_an_obstacle(scn):
    # Psi includes the boundary fields of a FluidParticles on a ReducedScene; the gain is still its derivative
    from directable.experiments import fluid_boundaries as FB
    model = FB.obstacle_model(scn, F.box(0.25, 0.15), pose=(0.5, 0.5, 0.3), p=8, surface_spacing=2 * scn.grid.h)
    law = F.ParticlePD(model, scn.x_ref, scn.dt, 1.0, 200.0, 20.0)
    x = scn.x_ref[10].copy()
    x[:2] = (0.3, 0.5)  # beside the object
    plain = F.ParticlePD(scn.model, scn.x_ref, scn.dt, 1.0, 200.0, 20.0)
    assert np.linalg.norm(law.control(x, 10) - plain.control(x, 10)) > 1e-6
    K, x0, eps = law.gain(10), scn.x_ref[10], 1e-6
    fd = np.column_stack([(law.control(x0 + eps * e, 10) - law.control(x0 - eps * e, 10)) / (2 * eps)
                          for e in np.eye(len(x0))])
    np.testing.assert_allclose(K, fd, rtol=1e-5, atol=1e-5 * np.abs(K).max())


def test_fit_viscosity_recovers_a_known_viscosity(scn):
    f = scn.fluid
    z0 = f.basis.T @ scn.full.velocities[20]
    nu_true = 0.004
    red = F.ReducedFluid(scn.grid, f.basis, nu_true)
    W = np.zeros((80, f.r))
    E = np.sum(red.rollout(z0, W, 0.01) ** 2, axis=1)
    nu, res = f.fit_viscosity(z0, E, 0.01, W)
    assert nu == pytest.approx(nu_true, rel=1e-4) and res < 1e-5
    with pytest.raises(ValueError, match="energy must have shape"):
        f.fit_viscosity(z0, E[:-1], 0.01, W)
    with pytest.raises(ValueError, match="bounds"):
        f.fit_viscosity(z0, E, 0.01, W, 1.0, 0.1)
    with pytest.raises(ValueError, match="start and stop"):
        f.match_viscosity(scn.full, start=5, stop=5)


def test_fig7_with_a_c_shape_in_the_flow():
    # Fig. 7's protocol with an obstacle beside the path (right of it, opening towards it): LQR linearised on the
    # scene, P/PD of eq. 14 with Psi (boundary fields included) at the particle; every setting scaled to LQR's budget
    from directable.experiments import fluid_boundaries as FB
    scn = E.make_scenario(n=32, r=16, steps=120)
    shape, pose = F.c_shape(0.1, 0.05, segments=16), np.array([0.76, 0.35, np.pi])
    model = FB.obstacle_model(scn, shape, pose, p=24)
    out = E.lqr_vs_pd(scn, model=model, noise=5.0, seed=3, grid_size=6)
    s, budget = out["search"], out["budget"]
    assert s["settings"] == 6 + 36 and s["tried"] >= 30
    lqr_err = out["lqr_error"][-1, 0]
    for kind in ("P", "PD"):
        assert s[kind]["effort"] <= budget and s[kind]["effort"] > 0.95 * budget
        assert lqr_err < s[kind]["final_error"]
    # no particle position of any plotted run lies inside the object
    c, sn = np.cos(pose[2]), np.sin(pose[2])
    for res in [out["lqr"]] + [s[k]["result"] for k in ("P", "PD")]:
        local = (res.states[:, :2] - pose[:2]) @ np.array([[c, -sn], [sn, c]])
        assert not shape.inside(local).any()


def test_error_falls_with_r_at_the_matched_viscosity():
    # nu fitted to the full solver's energy decay per basis size; the reduced-vs-full error then falls with r
    mv = E.matched_viscosity_errors(n=32, rs=(8, 16, 32))
    m = mv["mean"]
    assert m[8] > m[16] > m[32]
    for r in mv["rs"]:
        assert 1e-5 < mv["nu"][r] < 1.0 and mv["residual"][r] < 0.2
        assert m[r] < mv["mean_inviscid"][r]  # the matched model beats nu = 0 at every size
    assert mv["energy_lost"] > 0.1  # the full run does dissipate
