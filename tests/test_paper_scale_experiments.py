"""The papers' remaining experiments at any size (small here): the flower's
wind, push, bee and endless loop (Barbic & Popovic fig. 4), figure 5's three
control levels spanning 1e5 in cost, and the MPC paper's shark in 3D (the
paper's ~28,000 particles at ``sph_shape.PAPER_SPACING``)."""
from __future__ import annotations

import numpy as np
import pytest

from directable.experiments import fem_scenes, paper_scale, reduced_fluid_paths, sph_shape


@pytest.fixture(scope="module")
def flower():
    return fem_scenes.plant_scene(r=10, T=120, runs=2)


@pytest.fixture(scope="module")
def bee(flower):
    return paper_scale.flower_bee(flower)


def test_wind_is_periodic_smooth_and_on_the_leaves_only(flower):
    w = paper_scale.leaf_wind(flower, amplitude=2.0, seed=3)
    leaves = paper_scale.leaf_vertices(flower)
    X = np.asarray(flower.mesh.vertices)
    assert 0 < leaves.size < len(X) and not np.isin(flower.tips[0], leaves) and np.isin(flower.tips[1:], leaves).all()
    on = np.zeros(flower.model.dofs, bool)
    on[3 * leaves + 1] = on[3 * leaves + 2] = True
    assert np.all(w[:, ~on] == 0) and np.any(w[:, on] != 0)
    total = w.reshape(flower.T, -1, 3).sum(axis=1)                       # (T, 3) total force
    assert np.allclose(np.sqrt(np.mean(total[:, 1:] ** 2, axis=0)), 2.0, rtol=0.35)
    # periodic over T (the sines' periods divide it): the wrap-around step is as small as any other
    steps = np.abs(np.diff(np.vstack([w, w[:1]]), axis=0)).max(axis=1)
    assert steps[-1] <= 1.01 * steps.max()
    assert np.array_equal(w, paper_scale.leaf_wind(flower, amplitude=2.0, seed=3))   # seeded
    assert not np.array_equal(w, paper_scale.leaf_wind(flower, amplitude=2.0, seed=4))


def test_the_bee_lands_only_under_control(flower, bee):
    assert bee["landed"]["lqr"] and not bee["landed"]["uncontrolled"], bee["miss"]
    assert bee["miss"]["uncontrolled"] > 5 * bee["miss"]["lqr"]
    t = bee["land_step"]
    np.testing.assert_allclose(bee["bee"][t], flower.tip_positions(bee["z_ref"][t])[0, 1])   # on the reference leaf
    assert np.linalg.norm(bee["bee"][0] - bee["bee"][t]) > 0.1                               # it flew there
    # the wind is in the feed-forward: the reference leaves move with it
    assert not np.allclose(bee["z_ref"], flower.z_ref)
    np.testing.assert_allclose(bee["w_ff"] - flower.w_ff, bee["wind"] @ flower.basis.U, atol=1e-12)


def test_the_loop_is_endless_under_control(bee):
    err = bee["loop_error"]                                # (loops, T+1)
    assert err.shape[0] == 2
    # the second loop starts where the first ended (the seam), and the controller pulls it back onto the reference
    np.testing.assert_array_equal(bee["runs"]["lqr"][1].states[0], bee["runs"]["lqr"][0].states[-1])
    assert err[1, -1] < 0.05 and err[1].max() < 0.2
    unc = bee["runs"]["uncontrolled"][1].states
    assert np.linalg.norm(unc[-1] - bee["z_ref"][-1]) > 2 * np.linalg.norm(bee["runs"]["lqr"][1].states[-1]
                                                                           - bee["z_ref"][-1])


def test_flower_bee_bad_input(flower):
    with pytest.raises(ValueError, match="leaf must be in"):
        paper_scale.flower_bee(flower, leaf=len(flower.tips))
    with pytest.raises(ValueError, match="loops must be >= 1, got 0"):
        paper_scale.flower_bee(flower, loops=0)
    with pytest.raises(ValueError, match="land_fraction"):
        paper_scale.flower_bee(flower, land_fraction=0.0)


def test_figure5_control_levels_span_1e5():
    scn = reduced_fluid_paths.make_scenario(n=32, r=16, steps=60, particles=3, magnitude=15.0, enrich=2)
    out = reduced_fluid_paths.control_levels(scn, pushes=reduced_fluid_paths.user_pushes(scn))
    a = out["alpha_R"]
    assert a.max() / a.min() == pytest.approx(1e5)
    # cheaper control: more force, closer paths; every level beats no control
    assert np.all(np.diff(out["effort"]) > 0), out["effort"]
    final = out["path_error"][:, -1].mean(axis=1)
    mean = out["path_error"].mean(axis=(1, 2))
    assert np.all(np.diff(mean) < 0), mean
    assert mean[-1] < 0.5 * mean[0]
    assert mean[0] < out["uncontrolled_path_error"].mean()
    assert final[-1] < final[0]
    assert out["path_error"].shape == (3, scn.steps + 1, 3) and out["velocity_error"].shape == (3, scn.steps + 1)
    with pytest.raises(ValueError, match="alpha_Rs must be"):
        reduced_fluid_paths.control_levels(scn, alpha_Rs=(1.0, -1.0))


def test_shark_has_the_papers_particle_count():
    pts = sph_shape.shark_shape(sph_shape.PAPER_SPACING)
    assert 27_000 <= len(pts) <= 29_000                                # the paper: 28,000 particles
    assert pts.min() > 0 and pts.max() < 1                             # inside the fluid's unit box
    small = sph_shape.shark_shape()
    assert small.shape[1] == 3 and 200 < len(small) < 600
    # a dorsal fin above the body and a tail behind it
    c = small.mean(axis=0)
    assert small[:, 2].max() - c[2] > 0.15 and c[0] - small[:, 0].min() > 0.4


def test_mpc_restores_the_3d_shark_pd_and_no_control_do_worse():
    kw = dict(reference=sph_shape.shark_shape(), spacing=0.04, frames=40, impact=6, substeps=10,
              prediction_substeps=2, iterations=10)
    runs = {c: sph_shape.shape_experiment(c, horizon=5, **kw) for c in ("none", "pd", "mpc")}
    N = len(kw["reference"])
    m = runs["mpc"]
    assert m.positions.shape == (41, N, 3) and m.forces.shape == (40, N, 3)
    assert m.error[:6].max() < 1e-4                      # held against gravity before the impact
    assert m.error[6:].max() > 1e-3                      # knocked by the sphere (1 mm on average)
    assert m.error[-1] < 0.25 * m.error.max()            # restored
    assert m.error[-1] < runs["pd"].error[-1] and m.error[-1] < runs["none"].error[-1]
    assert runs["none"].energy == 0 and m.energy > 0
