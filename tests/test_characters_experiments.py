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


def test_obstacle_coordinates_follow_the_synthesised_roots(motion):
    """(u, v) after each transition is the obstacle minus the synthesised root (pelvis) at the clip start."""
    task = ch.FixedObstacle(motion, gamma_x=3.0, gamma_O=20.0, sigma_O=0.5, gamma_psi=1.0, gamma_rho=1.0)
    rng = np.random.default_rng(3)
    d0, th0, obstacle = 0.2, 0.3, np.array([0.0, 2.5])
    state, seq = np.array([8.0, obstacle[0] - d0, obstacle[1], th0]), [8]
    for _ in range(5):
        state = task.successors(state[None, :])[0, int(rng.integers(task.K))]
        seq.append(int(state[0]))
        anim = motion.synthesize(seq, start_pose=(d0, 0.0, th0))
        root = anim.roots[-1]
        np.testing.assert_allclose(state[1:3], obstacle - root[:2], atol=1e-9)
        assert abs((state[3] - root[2] + np.pi) % (2 * np.pi) - np.pi) < 1e-9


def test_fixed_obstacle_task_value_iteration(motion):
    """FOA's task model: the tabular policy passes at >= sigma_O and returns to the path."""
    r = ex.fixed_obstacle(motion, episodes=20, grid=(21, 21, 36), learn=False)
    assert r["grid"] >= 0.95
    assert r["greedy"] < r["grid"]


def test_obstacle_lp_unbounded_in_a_bump_between_samples_is_explained(motion):
    """A bump narrower than the sample spacing, seen at successors but not at samples, leaves r free:
    the LP raises naming that bump (no implicit box hides it); sampling where the bump lives bounds it."""
    task = ch.FixedObstacle(motion, gamma_x=3.0, gamma_O=20.0, sigma_O=0.5, obstacle_samples=3)
    b = ch.basis
    phi = (b.polynomial("u", 1, scale=2.0) * b.polynomial("v", 1, scale=2.0)
           + b.gaussian("v", 0.5, 1.5, 3, sigma2=0.05) * b.gaussian("u", 0.0, 0.0, 1, sigma2=0.5))
    with pytest.raises(ValueError, match=r"unbounded.*basis terms \['G\(v-1\)\*G\(u-0\)'\].*constant term.*bounds="):
        ch.learn(task, phi, ch.samples(task, per_dim=3))
    near = ch.samples(task, per_dim={"u": 3, "v": 9, "theta": 3}, ranges={"v": (0.0, 2.0)})
    vf = ch.learn(task, phi, np.vstack([ch.samples(task, per_dim=3), near]))
    assert vf.converged and np.all(np.isfinite(vf.r))


def test_obstacle_regret_scores_choices_against_value_iteration(motion):
    """The FOA diagnosis: value iteration scored by itself has no regret; an LP policy's regret is >= 0 and
    every decision falls in one phase."""
    task = ch.FixedObstacle(motion, gamma_x=3.0, gamma_O=20.0, sigma_O=0.5, obstacle_samples=3)
    vi = ch.value_iteration(task, {"u": 7, "v": 7, "theta": 12})
    starts = [[8, 0.1, 2.0, 0.0], [8, -0.2, 1.5, 0.1], [8, 0.0, 1.0, -0.1]]
    own = ex.obstacle_regret(task, vi, vi, starts, steps=6)
    assert sum(p["decisions"] for p in own.values()) == 18
    for p in own.values():
        assert p["disagree"] == 0.0 and abs(p["regret"]) < 1e-9
    phi = ch.basis.polynomial("u", 2, scale=2.0) * ch.basis.polynomial("theta", 2, scale=np.pi)
    vf = ch.learn(task, phi, ch.samples(task, per_dim=4))
    lp = ex.obstacle_regret(task, vf, vi, starts, steps=6)
    assert sum(p["decisions"] for p in lp.values()) == 18
    assert all(p["regret"] >= -1e-9 for p in lp.values())
    assert abs(sum(p["share"] for p in lp.values()) - 1.0) < 1e-9 or all(p["regret"] == 0 for p in lp.values())


@pytest.mark.xfail(strict=True, reason="FOA with the LP policy not met: the task model passes with value "
                   "iteration (test above); Fig. 5.6's basis gives a bounded LP (no box) whose policy passes 0 %. "
                   "Scored against value iteration (obstacle_regret) 90 % of the LP policy's regret is on the approach "
                   "(V of (u, v) cannot tell the avoiding turn) and the return fails in the navigation part: a "
                   "quadratic in u has no kink at the path (the pull within 0.5 m is ~20x too weak); on Navigation "
                   "alone P2(d) P8(theta) + narrow bumps at the path returns in 100 %, P2(d) P4(theta) in 40 %; "
                   "the combined FOA LP is minutes, not seconds; see benchmarks/RESULTS.md, characters")
def test_fixed_obstacle_avoidance(motion):
    # the basis (P4(u) P2(v) + the Gaussians of Fig. 5.6), the uniform samples joined with a grid
    # around the obstacle so that the LP is bounded without a box
    r = ex.fixed_obstacle(motion, per_dim=5, theta_degree=0, episodes=40,
                          near=dict(near_per_dim={"u": 7, "v": 7, "theta": 8},
                                    near_ranges={"u": (-1.2, 1.2), "v": (-0.6, 1.8)}))
    assert r["value_function"].converged and np.max(np.abs(r["value_function"].r)) < 1e4
    assert r["value"] >= 0.95
    assert r["greedy"] < r["value"]


def test_crossing_starts_collide_without_avoidance():
    """The crowd scenario has close encounters to avoid: pair m meets at its crossing point."""
    motion = ex.walking_motion(5)
    straight = int(np.argmin(np.abs(motion.clips.params.turn)))
    starts = ex.crossing_starts(16, straight)
    task = ch.MovingObstacle(motion, gamma_O=20.0, sigma_O=0.5, gamma_psi=1.0, gamma_rho=1.0)
    ctrls = [ch.Controller(task, policy="greedy") for _ in range(16)]
    plain = ch.crowd(ctrls, starts, 20, 3.0, avoid=False)
    assert plain.close_encounters >= 6


@pytest.mark.xfail(strict=True, raises=(AssertionError, ValueError), reason="MOA crowd not met: at CI size "
                   "(4 samples per axis) the moving-obstacle LPs do not bound the bumps' coefficients, and learn() "
                   "now raises naming them instead of returning a boxed r (with the former box |r| <= 1e4 active, 7 "
                   "close encounters with avoidance against 1 without); see benchmarks/RESULTS.md, characters")
def test_crowd_avoids_close_encounters():
    r = ex.crowd_crossing(characters=16, per_dim=4, steps=20)
    assert r["avoid"].close_encounters < r["plain"].close_encounters
