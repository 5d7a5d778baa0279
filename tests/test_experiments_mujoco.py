"""Tan et al. sec. 4.1 in 3D on MuJoCo (kick, volleyball, basketball) and the peer
comparison with MuJoCo's position actuators, at CI size."""
import numpy as np
import pytest

pytest.importorskip("mujoco")
from directable.experiments import mujoco_scenes as ms  # noqa: E402

ERROR_BEFORE_CONTACT = 0.15  # rad, max joint error of the tracking before the ball arrives


@pytest.fixture(scope="module", params=["kick", "volleyball", "basketball"])
def scene(request):
    return request.param, ms.run_scene(request.param, "spd")


def test_humanoid_asset_is_an_adult_with_30_dofs_and_ball_joints():
    m = ms.humanoid()
    assert m.nv == 30 and m.nq == 37
    assert 60 < m.body_subtreemass[m.body("pelvis").id] < 90
    assert sum(int(m.joint(i).type[0]) == 1 for i in range(m.njnt)) == 6  # spine, neck, shoulders, hips


def test_keyframe_reference_passes_through_the_keyframes():
    m = ms.humanoid()
    q = ms.keyframe_reference(m, "kick")
    for t, pose in ms.KEYFRAMES["kick"]:
        k = int(round(t / ms.DT))
        if "knee_r" in pose:
            assert q[k, m.joint("knee_r").qposadr[0]] == pytest.approx(pose["knee_r"], abs=1e-12)
    quats = q[:, m.joint("hip_r").qposadr[0]:][:, :4]
    np.testing.assert_allclose(np.linalg.norm(quats, axis=1), 1.0, atol=1e-12)
    with pytest.raises(ValueError, match="motion must be one of"):
        ms.keyframe_reference(m, "dance")


def test_scene_tracks_then_reacts_then_recovers_with_spd_at_dt_1_30(scene):
    name, r = scene
    c = r.contact_step
    assert not r.diverged and r.dt == pytest.approx(1 / 30)
    assert c > 5, "the ball must reach the body"
    assert np.max(r.error[:c]) < ERROR_BEFORE_CONTACT
    t_e, t_f = r.table[3], r.table[4]
    np.testing.assert_allclose(r.gain[:c], r.table[0])
    np.testing.assert_allclose(r.gain[c + 1:c + int(t_e / r.dt)], r.table[1])
    # the reaction: the hit limb's velocity departs from the ball-free run at contact
    after = slice(c + 1, c + 4)
    if name == "kick":  # the leg slows down into the heavy ball
        assert np.all(r.limb_speed[after] < 0.75 * r.limb_speed_free[after])
    else:  # the arms are knocked by the ball
        assert np.all(r.limb_speed[after] > r.limb_speed_free[after] + 0.3)
    if name == "volleyball":  # SPD joint-limit servos hold the elbows
        assert r.elbow.min() > ms.ELBOW_RANGE[0] - 0.02
    recovered = c + int(round((t_e + t_f + 0.5) / r.dt))
    if name == "kick":  # kd = 96 kp dt: a 3.2 s time constant, recovery is slow by design
        assert np.max(r.error[recovered:]) < 0.75 * np.max(r.error[c:recovered])
    else:
        assert recovered < r.error.size
        assert np.max(r.error[recovered:]) < 0.05


def test_kick_recovers_in_time_with_the_light_ball_gains():
    r = ms.run_scene("kick", "spd", table="soccer_light")
    c = r.contact_step
    recovered = c + int(round((r.table[3] + r.table[4] + 0.5) / r.dt))
    assert not r.diverged and np.max(r.error[recovered:]) < 0.1


@pytest.mark.parametrize("name", ["kick", "volleyball", "basketball"])
def test_explicit_pd_at_the_same_gains_diverges_and_reports_the_step(name):
    r = ms.run_scene(name, "pd", seconds_after=0.0)
    assert r.diverged and 0 <= r.diverged_at < 10
    assert np.all(np.isnan(r.qpos[r.diverged_at + 1:]))


def test_bad_scene_arguments():
    with pytest.raises(ValueError, match="name must be one of"):
        ms.run_scene("golf")
    with pytest.raises(ValueError, match="controller must be"):
        ms.run_scene("kick", "lqr")
    with pytest.raises(ValueError, match="dt must be > 0"):
        ms.run_scene("kick", dt=-1.0)


def test_plots_return_axes():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    r = ms.run_scene("volleyball", seconds_after=0.0)
    ax = ms.plot_scene(r)
    assert ax.get_xlabel() == "time (s)"
    m = ms.humanoid((0.27, 0.105))
    ax = ms.plot_stick(m, r.qpos[r.contact_step])
    assert ax.get_xlabel() == "x (m)"
    plt.close("all")


def test_peer_spd_and_implicit_position_actuators_are_stable_where_explicit_pd_diverges():
    from directable.experiments import mujoco_peer as mp
    dt = 1 / 30
    runs = {c: mp.track(c, 1e4, dt, hold=0.0) for c in mp.CONTROLLERS}  # kp = 1e4 m_sup
    assert runs["pd"].diverged_at >= 0 and not runs["pd"].stable
    assert runs["spd"].stable and np.nanmax(runs["spd"].error) < 0.1
    assert runs["position"].stable
    assert runs["spd"].smoothness < runs["position"].smoothness
    assert runs["spd"].tau.shape == (runs["spd"].qpos.shape[0] - 1, 24)
    k_pd = mp.largest_stable_gain("pd", dt, iters=5)
    assert 0 < k_pd < 1e4
    assert not mp.track("pd", 2 * k_pd, dt, hold=0.0).stable
    assert mp.largest_stable_gain("spd", dt, iters=2) == 1e8
    rows = mp.compare(dts=(1 / 30,), iters=2, hold=0.0)
    assert [r["controller"] for r in rows] == list(mp.CONTROLLERS)
    assert "| spd | 1/30 |" in mp.table(rows)
    text = mp.verdict(rows)
    assert text.startswith("At dt = 1/30 s MuJoCo's position actuators are as stable as SPD")
    assert "explicit PD is stable only up to k" in text
    with pytest.raises(ValueError, match="controller must be one of"):
        mp.track("lqr", 1.0)


def test_lqr_balances_the_upper_body_under_a_push_and_it_falls_without_feedback():
    m, r, _ = ms.balance_run(steps=250)
    lean = r.x[:, 1]  # spine rotation about y (rad)
    assert not r.diverged
    assert 0.005 < np.max(np.abs(lean)) < 0.2
    assert np.max(np.abs(r.x[-1, :14])) < 0.01  # the upper body is back upright
    m, r, _ = ms.balance_run(steps=250, feedback=False)
    assert r.diverged or np.nanmax(np.abs(r.x[:, :3])) > 0.5
