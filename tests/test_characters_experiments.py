"""Sec. 5.4 experiments at CI size (the notebook shows them larger)."""
import numpy as np
import pytest

import directable.characters as ch
from directable.experiments import characters as ex

pytest.importorskip("highspy")


@pytest.fixture(scope="module")
def motion():
    return ex.walking_motion()


def test_planning_beats_greedy_fig_5_4(motion):
    r = ex.planning_vs_greedy(motion, per_dim=8, starts=50, steps=30)
    assert r["reversal_ratio"] <= 0.8
    assert r["random_ratio"] <= 0.6
    assert r["vi_ratio"] <= 1.2
    value, greedy = r["reversal"]["value"], r["reversal"]["greedy"]
    # before the reversal both walk the path alike; after it, planning pays more at first, then less
    assert np.all(np.isfinite(value.step_costs)) and len(value.step_costs) == 30
    assert value.step_costs[10:].sum() < greedy.step_costs[10:].sum()


def test_degree_study_fig_5_7(motion):
    r = ex.degree_study(motion, degrees=(2, 6, 8), theta_samples=24, d_samples=3, starts=10)
    assert r["sse"][8] == 0.0
    assert r["policy_cost"][6] <= r["policy_cost"][2] * 1.0001
    assert 0 < r["relative"][2]


def test_deleting_half_the_samples(motion):
    r = ex.sample_deletion(motion, drop=0.5, starts=20)
    assert r["samples"][1] == r["samples"][0] // 2
    # the thesis: no appreciable change, both ways
    assert abs(r["ratio"] - 1.0) <= 0.05


def test_spinning_navigation_spin_separable():
    r = ex.spinning_navigation(starts=6, steps=20)
    assert r["K"] == 60
    # the played clips spin as asked (2 rad/s, between the tabulated 1.5 and 3)
    assert r["spin_error"] < 0.2 and abs(r["spin"] - 2.0) < 0.2
    # the hat-interpolated table (learned at 0, 1.5, 3 rad/s) acts like a function learned at 2 rad/s
    assert r["interpolated"] <= 1.05 * r["direct"]
    assert r["interpolated"] < r["greedy"]
    assert r["direction_error"] < 0.4  # rad: the spinning character keeps its direction


def test_torso_separable():
    r = ex.torso_separable(starts=6, steps=20, per_dim=6)
    assert r["interpolated"] <= 1.05 * r["direct"]
    assert 0.0 < r["torso"] <= 0.4  # the played torso angles lean towards the desired 0.2 rad


def test_gait_switch_is_continuous():
    r = ex.gait_switch(per_dim=6, steps=20, switch_step=8)
    ep, anim = r["episode"], r["animation"]
    assert np.all(np.isfinite(ep.step_costs))
    assert r["gaits"][:9] == ["walk"] * 9 and r["gaits"][-1] == "run"
    # continuity: frame-to-frame motion stays below a running stride's per-frame motion
    assert np.max(np.linalg.norm(np.diff(anim.frames, axis=0), axis=2)) < 0.35
    foot = anim.contact_foot
    starts = np.flatnonzero(np.r_[True, foot[1:] != foot[:-1]])
    for s, e in zip(starts, np.r_[starts[1:], len(foot)]):
        assert np.ptp(anim.frames[s:e, foot[s]], axis=0).max() < 1e-12
    assert r["table"].nbytes < 13 * 1024 * 2


@pytest.mark.xfail(strict=True, reason="FOA unverified: with the obstacle charged along transitions and Fig. 5.6's "
                   "basis times P2(theta), under a box on r, the LP policy still passes in 2.5 % of 40 episodes "
                   "(closest approaches 0.24-0.32 m), greedy 0 %; before these changes the LP policy passed in 2.5 % of the episodes, value "
                   "iteration 52 %; see benchmarks/RESULTS.md, characters")
def test_fixed_obstacle_avoidance(motion):
    r = ex.fixed_obstacle(motion, per_dim=4, episodes=40, steps=12)
    assert r["value"] >= 0.95
    assert r["greedy"] < r["value"]


@pytest.mark.xfail(strict=True, reason="MOA crowd not met yet: 8 crossing characters, 10 steps, value functions "
                   "over (u_dot, v_dot) in {-1.2, 0, 1.2}^2: 0 close encounters with and without avoidance, closest "
                   "approach 0.50 m with avoidance vs 1.09 m without (16 characters: 10 encounters vs 0); see "
                   "benchmarks/RESULTS.md, characters")
def test_crowd_avoids_close_encounters():
    r = ex.crowd_crossing(characters=8, per_dim=4, steps=10)
    assert r["avoid"].close_encounters < r["plain"].close_encounters
