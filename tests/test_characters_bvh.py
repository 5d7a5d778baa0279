"""BVH clips (the real-data extension point of Treuille thesis sec. 5.1): a synthetic clip written by the
library, read back through the bvh package, and a hand-written file with rotations."""
import numpy as np
import pytest

import directable.characters as ch

pytest.importorskip("bvh")


def test_synthetic_clip_round_trip(tmp_path):
    walker = ch.synthetic_walker()
    clips = ch.synthetic_clips(walker, gaits=("walk",), turns=(-0.6, 0.6))
    path = tmp_path / "walk.bvh"
    ch.write_bvh(path, walker, clips.poses[0], dt=clips.dt)
    got = ch.load_bvh(path)
    assert got.poses.shape == clips.poses[0].shape
    assert np.max(np.abs(got.poses - clips.poses[0])) < 1e-9
    assert got.dt == pytest.approx(clips.dt)
    assert np.array_equal(got.skeleton.parents, walker.parents)
    assert np.array_equal(got.skeleton.mirror, walker.mirror)  # found again from the offsets
    # the loaded clips build a validated ClipSet that blends without foot-skate
    poses = []
    for k in range(clips.K):
        ch.write_bvh(path, walker, clips.poses[k], dt=clips.dt)
        poses.append(ch.load_bvh(path).poses)
    again = ch.ClipSet(poses, clips.constraint_frames, clips.stance_foot, clips.gait, dict(clips.params),
                       skeleton=got.skeleton, mirror_of=clips.mirror_of, foot_tolerance=1e-9)
    anim = ch.MotionModel(again).synthesize([0, 1, 2, 3, 0])
    foot = anim.contact_foot
    starts = np.flatnonzero(np.r_[True, foot[1:] != foot[:-1]])
    for s, e in zip(starts, np.r_[starts[1:], len(foot)]):
        assert np.ptp(anim.frames[s:e, foot[s]], axis=0).max() < 1e-8


def test_rotation_channels_and_scale(tmp_path):
    text = """HIERARCHY
ROOT hips
{
  OFFSET 0 100 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT knee
  {
    OFFSET 0 -50 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 -50 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.5
0 0 0 0 0 0 0 0 0
10 0 0 90 0 0 0 0 0
"""
    path = tmp_path / "leg.bvh"
    path.write_text(text)
    got = ch.load_bvh(path, scale=0.01)
    assert got.names == ["hips", "knee"] and got.dt == 0.5
    assert np.allclose(got.poses[0], [[0, 1, 0], [0, 0.5, 0]])
    # a quarter turn about z at the hips swings the knee from -y to +x
    assert np.allclose(got.poses[1], [[0.1, 1, 0], [0.6, 1, 0]])


def test_bad_bvh_arguments(tmp_path):
    walker = ch.synthetic_walker()
    with pytest.raises(ValueError, match=r"poses must have shape \(m, 19, 3\)"):
        ch.write_bvh(tmp_path / "x.bvh", walker, np.zeros((4, 3, 3)))
    with pytest.raises(ValueError, match="scale must be > 0"):
        ch.load_bvh(tmp_path / "x.bvh", scale=0.0)
