"""Bad input to directable.characters: ValueError naming the argument, never a crash or NaN."""
import sys

import numpy as np
import pytest

import directable.characters as ch


@pytest.fixture(scope="module")
def clips():
    return ch.synthetic_clips(ch.synthetic_walker(), gaits=("walk",), turns=(-0.5, 0.5))


@pytest.fixture(scope="module")
def task(clips):
    return ch.Navigation(ch.MotionModel(clips))


def _args(clips):
    return [np.array(p) for p in clips.poses], clips.constraint_frames, clips.stance_foot, clips.gait, dict(clips.params)


def test_inconsistent_joint_counts(clips):
    poses, cf, sf, g, p = _args(clips)
    poses[1] = poses[1][:, :-1]
    with pytest.raises(ValueError, match=r"poses\[1\].*J = 19"):
        ch.ClipSet(poses, cf, sf, g, p)


def test_nan_poses(clips):
    poses, cf, sf, g, p = _args(clips)
    poses[2][3, 4, 1] = np.nan
    with pytest.raises(ValueError, match=r"poses\[2\]"):
        ch.ClipSet(poses, cf, sf, g, p)


def test_constraint_frames_outside_clip(clips):
    poses, cf, sf, g, p = _args(clips)
    cf = cf.copy()
    cf[0, 1] = 500
    with pytest.raises(ValueError, match=r"constraint_frames\[0\].*0 <= a < b < m"):
        ch.ClipSet(poses, cf, sf, g, p)


def test_stance_foot_moving_during_contact(clips):
    poses, cf, sf, g, p = _args(clips)
    poses[0][1, sf[0, 0]] += [0.01, 0.0, 0.0]
    with pytest.raises(ValueError, match=r"poses\[0\]: the stance foot .* moves .*foot_tolerance"):
        ch.ClipSet(poses, cf, sf, g, p)
    ch.ClipSet(poses, cf, sf, g, p, foot_tolerance=0.02)  # within a looser tolerance


def test_clipset_none_and_shapes(clips):
    poses, cf, sf, g, p = _args(clips)
    with pytest.raises(ValueError, match="poses"):
        ch.ClipSet(None, cf, sf, g, p)
    with pytest.raises(ValueError, match="stance_foot"):
        ch.ClipSet(poses, cf, sf[:, :1], g, p)
    with pytest.raises(ValueError, match="gait"):
        ch.ClipSet(poses, cf, sf, None, p)


@pytest.mark.parametrize("alpha", [-0.1, 1.0, 1.5])
def test_alpha_outside_unit_interval(task, alpha):
    phi = ch.basis.polynomial("d", 1)
    with pytest.raises(ValueError, match="alpha must lie in \\[0, 1\\)"):
        ch.learn(task, phi, ch.samples(task, per_dim=3), alpha=alpha, solver="scipy")
    with pytest.raises(ValueError, match="alpha"):
        ch.value_iteration(task, 4, alpha=alpha)


def test_basis_parameters():
    with pytest.raises(ValueError, match="degree must be >= 0"):
        ch.basis.polynomial("d", -1)
    with pytest.raises(ValueError, match="n \\(the number of Gaussians\\) must be >= 1"):
        ch.basis.gaussian("d", 0, 1, 0)
    with pytest.raises(ValueError, match="sigma2 must be"):
        ch.basis.gaussian("d", 0, 1, 3, sigma2=0.0)
    with pytest.raises(ValueError, match="sigma2 must be"):
        ch.basis.gaussian("d", 0, 1, 3, sigma2=-1.0)


def test_unknown_basis_variable(task):
    phi = ch.basis.polynomial("speed", 2)
    with pytest.raises(ValueError, match="unknown variable 'speed'.*\\('d', 'theta'\\)"):
        ch.learn(task, phi, ch.samples(task, per_dim=3), solver="scipy")


def test_empty_and_out_of_range_samples(task):
    phi = ch.basis.polynomial("d", 1)
    with pytest.raises(ValueError, match="samples"):
        ch.learn(task, phi, np.zeros((0, 3)), solver="scipy")
    X = ch.samples(task, per_dim=3)
    X[4, 1] = 7.0
    with pytest.raises(ValueError, match=r"samples\[4\]: d = 7.* outside the task's range"):
        ch.learn(task, phi, X, solver="scipy")
    X = ch.samples(task, per_dim=3)
    X[0, 0] = task.K
    with pytest.raises(ValueError, match=r"samples\[0, 0\] must be a clip index"):
        ch.learn(task, phi, X, solver="scipy")
    with pytest.raises(ValueError, match="samples"):
        ch.learn(task, phi, X[:, :2], solver="scipy")


@pytest.mark.parametrize("name", ["gamma_x", "gamma_psi", "gamma_rho", "gamma_tau"])
def test_negative_cost_weights(clips, name):
    with pytest.raises(ValueError, match=f"{name} must be a finite cost weight >= 0"):
        ch.Navigation(ch.MotionModel(clips), **{name: -1.0})


def test_obstacle_width(clips):
    with pytest.raises(ValueError, match="sigma_O"):
        ch.FixedObstacle(ch.MotionModel(clips), sigma_O=0.0)


def test_highspy_missing_says_how_to_install(task, monkeypatch):
    monkeypatch.setitem(sys.modules, "highspy", None)
    with pytest.raises(ValueError, match="pip install 'directable\\[characters\\]'.*solver='scipy'"):
        ch.learn(task, ch.basis.polynomial("d", 1), ch.samples(task, per_dim=3), solver="highspy")


def test_unknown_solver_policy_and_gait(task, clips):
    with pytest.raises(ValueError, match="solver"):
        ch.learn(task, ch.basis.polynomial("d", 1), ch.samples(task, per_dim=3), solver="cplex")
    with pytest.raises(ValueError, match="policy"):
        ch.Controller(task, policy="random")
    with pytest.raises(ValueError, match="gait: unknown gait 'gallop'"):
        ch.Navigation(task.motion, gait="gallop")
    with pytest.raises(ValueError, match="gait: no clip"):
        ch.Navigation(task.motion, gait="run")


def test_states_of_wrong_shape_and_nan(task):
    with pytest.raises(ValueError, match=r"states must have shape \(S, 3\)"):
        task.successors(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="states"):
        task.state_costs(np.array([[0, np.nan, 0.0]]))
    with pytest.raises(ValueError, match="state0"):
        ch.Controller(task, policy="greedy").run([0, np.inf, 0], 3)


def test_synthesize_bad_sequence(task):
    with pytest.raises(ValueError, match=r"clip_sequence\[1\]"):
        task.motion.synthesize([0, 99])
    with pytest.raises(ValueError, match="clip_sequence"):
        task.motion.synthesize([])


def test_synthetic_clip_arguments():
    w = ch.synthetic_walker()
    with pytest.raises(ValueError, match="unknown gait 'skip'"):
        ch.synthetic_clips(w, gaits=("skip",))
    with pytest.raises(ValueError, match="turns"):
        ch.synthetic_clips(w, turns=())
    with pytest.raises(ValueError, match="counts"):
        ch.synthetic_clips(w, counts="many")


def test_skeleton_arguments():
    with pytest.raises(ValueError, match="offsets must have shape"):
        ch.Skeleton([-1, 0], np.zeros((3, 3)))
    with pytest.raises(ValueError, match=r"parents\[1\]"):
        ch.Skeleton([-1, 3, 0], np.zeros((3, 3)))
