"""Goal-directed cloth control (Jeon & Choi): window, path generation, inverse
dynamics, arrival fix, editing, several nodes, target pose, the paper's
experiments and the comparison with MPC / LQR."""
from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from directable import cloth as dc
from directable.experiments import cloth as ex
from reference.cloth import NumpyCloth, plan_single, retime as retime_ref


@pytest.fixture(scope="module")
def fig3():
    scene = ex.fig3_scene(20)
    return scene, ex.run_plan(scene)


def test_control_window():
    assert dc.control_window(0.3, 1000.0) == 90
    assert dc.control_window(0.3, 1000.0, t_c=40) == 40
    assert dc.control_window(0.0, 1000.0) == 1
    with pytest.raises(ValueError, match="t_c"):
        dc.control_window(0.3, 1000.0, t_c=0)
    with pytest.raises(ValueError, match="alpha"):
        dc.control_window(0.3, -1.0)


def test_plan_equals_numpy_reference():
    args = (8, 7, 0.05, 0.01, 200.0, 50.0, 5.0, 0.02)
    c, r = dc.ClothGrid(*args, pinned=[0]), NumpyCloth(*args, pinned=[0])
    dt = 0.002
    pilot = c.rollout(c.positions0, np.zeros((56, 3)), dt, 200)
    node, t_c = 30, 150
    goal = pilot.x[t_c, node] + [0.1, 0.05, -0.05]
    kw = dict(alpha=3000.0, beta=1.0, gamma=1e-6)
    p = dc.plan(c, pilot, [(node, t_c, goal)], dt, seek_angle=30.0, **kw)
    ref = plan_single(r, pilot.x, pilot.v, node, t_c, goal, dt, seek_angle_deg=30.0, **kw)
    assert p.t_start == ref["t_start"] and p.t_end == t_c
    assert p.closest_step[0] == ref["closest_step"] > 0
    np.testing.assert_allclose(p.generated[0], ref["generated"], atol=1e-12)
    np.testing.assert_allclose(p.targets[0], ref["targets"], atol=1e-12)
    np.testing.assert_allclose(p.forces[:, 0], ref["forces"], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(p.paths[0], ref["paths"], atol=1e-12)


def test_inverse_dynamics_reproduces_the_target_path(fig3):
    scene, res = fig3
    p = res["plan"]
    # applying u_i lands the node on q*_{i+1} up to rounding (the dt^2 of eq. 6)
    np.testing.assert_allclose(p.paths[0], p.targets[0], rtol=0, atol=1e-12)
    assert p.reached[0] and p.cost[0] > 0


def test_fig3_reaches_goal_exactly(fig3):
    scene, res = fig3
    p, run = res["plan"], res["run"]
    # apply returns the rollout type plus the applied forces
    assert isinstance(run, dc.ClothRollout) and run.u.shape == (scene["steps"], scene["cloth"].node_count, 3)
    assert p.final_distance[0] <= 1e-9
    assert np.linalg.norm(run.x[scene["t_c"], scene["node"]] - scene["goal"]) <= 1e-9
    # before the window the run is the pilot; forces only in [t_start, t_end) on the node
    np.testing.assert_array_equal(run.x[:p.t_start + 1], scene["pilot"].x[:p.t_start + 1])
    u = np.array(run.u)
    assert np.abs(np.delete(u, scene["node"], axis=1)).max() == 0
    assert np.abs(u[:p.t_start]).max() == 0 and np.abs(u[p.t_end:]).max() == 0
    np.testing.assert_array_equal(u[p.t_start:p.t_end, scene["node"]], p.forces[:, 0])


def test_fig3_free_nodes_obey_free_motion(fig3):
    scene, res = fig3
    assert ex.free_motion_residual(scene["cloth"], res["run"], scene["dt"], res["plan"].nodes) <= 1e-9


def test_fig3_path_is_smooth(fig3):
    scene, res = fig3
    theta_max = scene["plan_args"]["seek_angle"]
    assert ex.turning_angles(res["plan"].paths[0]).max() <= theta_max


def test_literal_heuristic_misses_and_the_arrival_fix_lands(fig3):
    scene, res = fig3
    p = res["plan"]
    assert np.linalg.norm(p.generated[0, -1] - scene["goal"]) > 0.01
    assert p.final_distance[0] < 1e-9


def test_fig3_edited_blended_path_ends_on_goal(fig3):
    scene, res = fig3
    e = ex.fig3_edit(scene, res)
    assert np.linalg.norm(e["path"][-1] - scene["goal"]) < 1e-12
    assert e["plan"].final_distance[0] <= 1e-9
    assert np.linalg.norm(e["run"].x[scene["t_c"], scene["node"]] - scene["goal"]) <= 1e-9
    # the edit changed the path
    assert np.abs(e["plan"].paths[0] - res["plan"].paths[0]).max() > 1e-3


def test_fig3_two_nodes_with_overlapping_windows(fig3):
    scene, _ = fig3
    res = ex.fig3_two_nodes(scene)
    p = res["plan"]
    assert len(p.nodes) == 2 and p.window_start[0] == p.window_start[1] == p.t_start
    assert p.t_end == scene["t_c"] and p.window_end == [scene["t_c"], scene["t_c"] - 10]
    assert max(p.final_distance) <= 1e-9 and all(p.reached)
    for k, node in enumerate(p.nodes):
        assert np.linalg.norm(res["run"].x[p.window_end[k], node] - p.goals[k]) <= 1e-9
    assert ex.free_motion_residual(scene["cloth"], res["run"], scene["dt"], p.nodes) <= 1e-9


def test_non_overlapping_windows_stay_apart(fig3):
    scene, _ = fig3
    c, pilot = scene["cloth"], scene["pilot"]
    a, b = c.node(2, 2), c.node(17, 17)
    goals = [(a, 120, pilot.x[120, a] + [0, 0, 0.05]), (b, 280, pilot.x[280, b] + [0.05, 0, 0])]
    p = dc.plan(c, pilot, goals, scene["dt"], alpha=1000.0, gamma=1e-6)
    assert p.window_start[1] > p.window_end[0]
    assert p.t_start == p.window_start[0] and p.t_end == 280
    assert max(p.final_distance) <= 1e-9
    # node a is free after its goal step
    assert np.abs(p.forces[p.window_end[0] - p.t_start:, 0]).max() == 0


def test_fig4_sphere_scene():
    scene = ex.fig4_scene(20)
    res = ex.run_plan(scene)
    assert res["plan"].final_distance[0] <= 1e-6
    assert np.linalg.norm(res["run"].x[scene["t_c"], scene["node"]] - scene["goal"]) <= 1e-6
    limit = 0.01 * scene["radius"]
    assert ex.sphere_depth(scene["pilot"].x, scene["radius"]) <= limit
    assert ex.sphere_depth(res["run"].x, scene["radius"]) <= limit
    # the corner curls in the pilot and the controlled run uncurls it
    t_c, c = scene["t_c"], scene["cloth"]
    assert ex.corner_bend(c, scene["pilot"].x[t_c]) > 45.0
    assert ex.corner_bend(c, res["run"].x[t_c]) < 0.5 * ex.corner_bend(c, scene["pilot"].x[t_c])
    # the cloth touches the sphere during the window (the inverse dynamics holds under contact)
    window = res["run"].x[res["plan"].t_start:res["plan"].t_end]
    assert (np.linalg.norm(window, axis=2) < scene["radius"]).any()


def test_fig5_target_pose():
    scene = ex.fig5_scene(20)
    res = ex.run_plan(scene, goals=scene["goals"])
    p = res["plan"]
    assert len(p.nodes) == 25 and all(p.reached)
    assert p.final_distance.max() <= 1e-9
    x = res["run"].x[scene["t_c"], scene["nodes"]]
    np.testing.assert_allclose(x, [g for _, _, g in scene["goals"]], atol=1e-9)
    bound = ex.run_plan(scene, goals=scene["goals"], f_max=0.5)["plan"]
    assert not all(bound.reached) and bound.final_distance.max() > 1e-3


def test_curl_goals_geometry():
    c = dc.ClothGrid(10, 10, 0.1, 0.01, 100.0, 0.0, 0.0, 0.0)
    region = dc.corner_region(c, 3)
    x = c.positions0
    flat = dc.curl_goals(c, x, region, 0.0, 0.0)
    np.testing.assert_allclose(flat, x[region], atol=1e-12)
    g = dc.curl_goals(c, x, region, 90.0, 0.0)
    hinge = c.node(2, 2)
    np.testing.assert_allclose(g[region.index(hinge)], x[hinge], atol=1e-12)
    # distances to the hinge are kept, the corner rises above the cloth
    d0 = np.linalg.norm(x[region] - x[hinge], axis=1)
    np.testing.assert_allclose(np.linalg.norm(g - x[hinge], axis=1), d0, atol=1e-12)
    assert g[region.index(0), 2] > 0.1
    r = dc.curl_goals(c, x, region, 0.0, 90.0)
    np.testing.assert_allclose(r[:, 2], 0.0, atol=1e-12)


def test_gamma_sweep_final_distance_grows(fig3):
    scene, _ = fig3
    rows = ex.gamma_sweep(scene, [1e-8, 1e-7, 1e-6, 3e-6, 1e-5, 3e-5, 1e-4, 1e-3, 1e-2], f_max=36.0)
    d = [r["final_distance"] for r in rows]
    assert rows[0]["reached"] and not rows[-1]["reached"]
    assert all(b >= a - 1e-12 for a, b in zip(d, d[1:]))
    assert d[-1] > 1e-3


def test_large_beta_gives_a_nearly_straight_path(fig3):
    scene, _ = fig3
    assert ex.straightness(scene)["chord_over_arc"] >= 0.98


def test_widening_lowers_the_turning_angle(fig3):
    scene, _ = fig3
    rows = ex.widening(scene)
    mean = [r["mean_turning"] for r in rows]
    assert all(b < a for a, b in zip(mean, mean[1:]))
    assert rows[-1]["max_turning"] < rows[0]["max_turning"]


def test_length_ratio_options(fig3):
    scene, _ = fig3
    goals = [(scene["node"], scene["t_c"], scene["goal"])]
    a = dc.plan(scene["cloth"], scene["pilot"], goals, scene["dt"], length_ratio="squared", **scene["plan_args"])
    b = dc.plan(scene["cloth"], scene["pilot"], goals, scene["dt"], length_ratio="linear", **scene["plan_args"])
    assert not np.allclose(a.generated, b.generated)
    assert b.final_distance[0] <= 1e-9


def test_retime_and_blend():
    path = np.array([[0.0, 0, 0], [1, 0, 0], [1, 2, 0]])
    ref = np.array([[0.0, 0, 0], [0, 0, 1], [0, 0, 3], [0, 0, 6]])  # steps 1, 2, 3
    out = dc.retime(path, ref)
    np.testing.assert_allclose(out, retime_ref(path, ref), atol=1e-15)
    np.testing.assert_allclose(out, [[0, 0, 0], [0.5, 0, 0], [1, 0.5, 0], [1, 2, 0]], atol=1e-15)
    still = dc.retime(path, np.zeros((5, 3)))
    np.testing.assert_allclose(still, [[0, 0, 0], [0.75, 0, 0], [1, 0.5, 0], [1, 1.25, 0], [1, 2, 0]], atol=1e-15)
    # Newton interpolation passes through its control points
    P = np.array([[0.0, 0, 0], [1, 1, 0], [2, 0, 1], [3, 3, 3]])
    line = np.linspace(P[0], P[-1], 7)
    curve = dc.blend_path(line, P, 1.0)
    np.testing.assert_allclose(curve[[0, 2, 4, 6]], P, atol=1e-12)
    half = dc.blend_path(line, P, 0.5)
    np.testing.assert_allclose(half, 0.5 * (line + curve), atol=1e-15)
    np.testing.assert_array_equal(dc.blend_path(line, P, 0.0), line)


def test_f_max_is_reported_not_raised(fig3):
    scene, _ = fig3
    p = dc.plan(scene["cloth"], scene["pilot"], [(scene["node"], scene["t_c"], scene["goal"])], scene["dt"],
                **dict(scene["plan_args"], f_max=1.0))
    assert not p.reached[0] and p.final_distance[0] > 0.01
    assert np.linalg.norm(p.forces, axis=2).max() <= 1.0 + 1e-12


def test_plan_arrays_are_views_that_keep_the_plan_alive(fig3):
    scene, _ = fig3
    p = dc.plan(scene["cloth"], scene["pilot"], [(scene["node"], scene["t_c"], scene["goal"])], scene["dt"],
                **scene["plan_args"])
    f = p.forces
    assert f.shape == (p.t_end - p.t_start, 1, 3) and not f.flags.writeable
    assert p.paths.shape == (1, p.t_end - p.t_start + 1, 3)
    del p
    assert np.isfinite(f).all()
    pilot = scene["pilot"]
    x = pilot.x
    assert np.shares_memory(x, pilot.x) and x.base is not None


def test_plan_from_threads_equals_single_thread(fig3):
    scene, _ = fig3
    goals = [(scene["node"], scene["t_c"], scene["goal"])]
    ref = np.array(dc.plan(scene["cloth"], scene["pilot"], goals, scene["dt"], **scene["plan_args"]).forces)
    out, errors = [], []

    def work():
        try:
            for _ in range(3):
                out.append(np.array(dc.plan(scene["cloth"], scene["pilot"], goals, scene["dt"],
                                            **scene["plan_args"]).forces))
        except Exception as exc:  # pragma: no cover
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(out) == 12
    for f in out:
        np.testing.assert_array_equal(f, ref)


def test_heuristic_against_mpc_and_lqr():
    scene = ex.comparison_scene(6)
    rows = {r["method"]: r for r in ex.compare_optimal(scene)}
    h, m, l = rows["heuristic"], rows["MPC (Gauss-Newton)"], rows["LQR (final cost)"]
    assert h["final_error"] < 1e-9
    assert m["final_error"] < 1e-4 and l["final_error"] < 1e-3
    # the optimal methods are the lower bound on effort; the heuristic is much faster
    assert m["effort"] <= h["effort"] and l["effort"] <= h["effort"]
    assert h["seconds"] * 10 < min(m["seconds"], l["seconds"])
    assert math.isfinite(h["mean_turning"])
