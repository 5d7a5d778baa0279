"""Paper experiments on the reduced fluid (Barbic & Popovic
2008 figures 2, 5 and 7) at a test-sized 32x32 grid."""
from __future__ import annotations

import numpy as np
import pytest

import directable as dr
from directable.experiments import reduced_fluid_paths as E

NOISE = 5.0


@pytest.fixture(scope="module")
def leaf():
    scn = E.make_scenario(n=32, r=16, steps=120)
    return scn, E.lqr_controller(scn)


def test_reference_is_an_s_path(leaf):
    scn, _ = leaf
    p = scn.x_ref[:, :2]
    # right, then up, then back left, then up again
    q = len(p) // 4
    assert p[q, 0] - p[0, 0] > 0.15 and p[2 * q, 1] - p[q, 1] > 0.15
    assert p[3 * q, 0] - p[2 * q, 0] < -0.15 and p[-1, 1] - p[3 * q, 1] > 0.0
    assert np.all((p > 0) & (p < 1))


@pytest.mark.parametrize("seed", [0, 1])
def test_leaf_follows_path_under_perlin_noise(leaf, seed):
    scn, sol = leaf
    ctrl = E.run_reduced(scn, dr.lqr.tracker(sol, scn.x_ref), noise=NOISE, seed=seed)
    free = E.run_reduced(scn, None, noise=NOISE, seed=seed)
    e_ctrl = E.path_error(scn, ctrl.states)[:, 0]
    e_free = E.path_error(scn, free.states)[:, 0]
    assert e_ctrl.max() < 0.03  # stated distance: within 0.03 (one cell of 1/32) all along
    assert e_ctrl[-1] < 0.01
    assert e_free[-1] > 0.3     # uncontrolled: leaves the path
    # the noise is a real perturbation: without control the two seeds end apart
    other = E.run_reduced(scn, None, noise=NOISE, seed=1 - seed)
    assert np.linalg.norm(other.states[-1, :2] - free.states[-1, :2]) > 1e-3


def test_three_particles_three_costs():
    scn = E.make_scenario(n=32, r=16, steps=120, particles=3, magnitude=15.0)
    pushes = np.zeros((scn.steps, scn.r))
    rng = np.random.default_rng(5)
    for s in (20, 50, 80):  # user impulses at three times
        pushes[s:s + 3] = 30 * rng.standard_normal(scn.r)
    finals, rel = [], []
    for alpha_R in (1e-3, 1e-2, 1e-1):
        sol = E.lqr_controller(scn, alpha_R=alpha_R)
        res = E.run_reduced(scn, dr.lqr.tracker(sol, scn.x_ref), pushes=pushes)
        e = E.path_error(scn, res.states)
        z, zr = res.states[:, 6:], scn.x_ref[:, 6:]
        rel.append(np.linalg.norm(z - zr, axis=1).max() / np.linalg.norm(zr, axis=1).max())
        finals.append(e[-1].max())
    free = E.path_error(scn, E.run_reduced(scn, None, pushes=pushes).states)[-1].max()
    assert finals[0] < 0.01 and finals[1] < 0.02     # every particle back on its path
    assert finals[0] <= finals[1] < finals[2] < free  # cheaper control tracks better
    assert rel[0] < rel[1] < rel[2]


def test_lqr_beats_p_and_pd_under_same_budget(leaf):
    # Fig. 7: about 100 P (two gains) and PD (three gains, eq. 14) settings, each scaled to LQR's control budget
    scn, _ = leaf
    out = E.lqr_vs_pd(scn, noise=NOISE, seed=3)
    s, budget = out["search"], out["budget"]
    assert s["settings"] == 110 and s["tried"] >= 100
    valid = np.isfinite(s["all"]["final_error"])
    assert np.all(np.abs(s["all"]["effort"][valid] / budget - 1) < 0.02)  # every compared run spends the budget
    lqr_err = out["lqr_error"][-1, 0]
    for kind in ("P", "PD"):
        assert s[kind]["effort"] <= budget
        assert lqr_err < s[kind]["final_error"]
        # the reported error is the chosen run's own
        assert E.path_error(scn, s[kind]["result"].states)[-1].max() == pytest.approx(s[kind]["final_error"], rel=1e-12)
    assert s["PD"]["final_error"] <= s["P"]["final_error"]  # P is suboptimal to PD (the paper's finding)
