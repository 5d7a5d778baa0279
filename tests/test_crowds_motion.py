"""Continuum crowds, motion: no local minima, descent of the potential,
bounded speeds, minimum distance (against cKDTree), determinism at any thread
count, 4 Python threads sharing one grid, stuck people, CFL warning, bad input."""
import threading
import warnings

import numpy as np
import pytest

from reference import crowds as ref
from directable import crowds
from directable.fluid import MACGrid2D


def maze(n=21):
    """A serpentine maze: walls with alternating gaps."""
    blocked = np.zeros((n, n), bool)
    for k, x in enumerate(range(4, n - 2, 4)):
        blocked[:, x] = True
        if k % 2 == 0:
            blocked[n - 3:n - 1, x] = False
        else:
            blocked[1:3, x] = False
    return blocked


def lone_walker(n=21):
    blocked = maze(n)
    grid = crowds.CrowdGrid(n, n, blocked=blocked)
    p = crowds.Params(f_max=0.3, rho_min=0.3, rho_max=0.6, lam=2.0, delta_min=0.3, alpha=0.0, beta=1.0, gamma=0.0)
    goal = np.zeros((n, n), bool)
    goal[n // 2, n - 1] = True
    crowd = crowds.Crowd(grid, p, [crowds.Group(goal=goal, positions=[[1.5, n / 2]])])
    return crowd, grid, p, goal


def test_lone_person_leaves_a_maze_without_local_minima():
    crowd, grid, p, goal = lone_walker()
    phi_start = crowd.fields(0)["phi"][10, 1]
    assert np.isfinite(phi_start)
    run = crowd.run(int(1.5 * phi_start))
    arrived = np.flatnonzero(~run.active[:, 0])
    assert arrived.size and arrived[0] <= 1.15 * phi_start


def interp_phi(phi, pts):
    """Bilinear interpolation of cell-centred phi at pts (P, 2) (h = 1)."""
    ny, nx = phi.shape
    fx = np.clip(pts[:, 0] - 0.5, 0, nx - 1)
    fy = np.clip(pts[:, 1] - 0.5, 0, ny - 1)
    i0 = np.minimum(fx.astype(int), nx - 2)
    j0 = np.minimum(fy.astype(int), ny - 2)
    tx, ty = fx - i0, fy - j0
    return ((1 - tx) * (1 - ty) * phi[j0, i0] + tx * (1 - ty) * phi[j0, i0 + 1]
            + (1 - tx) * ty * phi[j0 + 1, i0] + tx * ty * phi[j0 + 1, i0 + 1]), (i0, j0)


def test_phi_decreases_at_every_unobstructed_person_and_speeds_stay_below_f_max():
    rng = np.random.default_rng(0)
    n = 30
    grid = crowds.CrowdGrid(n, n)
    p = crowds.Params.table_4_1("city")
    goal = np.zeros((n, n), bool)
    goal[:, -1] = True
    goal2 = np.zeros((n, n), bool)
    goal2[-1, :] = True
    pos = rng.uniform(1, 25, (60, 2))
    crowd = crowds.Crowd(grid, p, [crowds.Group(goal, pos[:30]), crowds.Group(goal2, pos[30:])], min_distance_iterations=0)
    checked = 0
    for _ in range(40):
        before = crowd.positions
        fields = [crowd.fields(g) for g in range(2)]
        active = crowd.active
        crowd.step()
        after = crowd.positions
        assert np.linalg.norm(after - before, axis=1).max() <= p.f_max + 1e-12
        for g in range(2):
            m = active & (crowd.group_of == g) & crowd.active
            phi = fields[g]["phi"]
            a, (i0, j0) = interp_phi(phi, before[m])
            b, _ = interp_phi(phi, after[m])
            # unobstructed: nobody else within 2.5 cells (own density only) and away from the walls
            others = np.linalg.norm(before[m][:, None] - before[active][None], axis=2)
            alone = (others < 2.5).sum(axis=1) == 1
            inside = (i0 < n - 2) & (j0 < n - 2) & np.isfinite(a) & alone
            assert (b[inside] < a[inside]).all()
            checked += inside.sum()
    assert checked > 300


def test_person_velocity_is_the_mac_interpolation_of_the_field():
    n = 16
    grid = crowds.CrowdGrid(n, n)
    p = crowds.Params.table_4_1("city")
    goal = np.zeros((n, n), bool)
    goal[3, 12] = True
    pos = np.array([[2.3, 9.1], [7.7, 1.4], [5.5, 5.5]])
    crowd = crowds.Crowd(grid, p, [crowds.Group(goal, pos)], min_distance_iterations=0)
    u = crowd.fields(0)["velocity"]
    crowd.step(1.0)
    v = MACGrid2D(n, n, 1.0).velocity_at(u, pos)
    np.testing.assert_allclose(crowd.positions - pos, v, rtol=1e-13, atol=1e-15)


def test_close_pairs_equal_ckdtree_and_min_distance_is_enforced():
    spatial = pytest.importorskip("scipy.spatial")
    rng = np.random.default_rng(1)
    delta = 0.5
    # half close packing: 500 discs of diameter delta at packing fraction ~0.45
    area = 500 * np.pi * (delta / 2) ** 2 / 0.45
    L = np.sqrt(area)
    pos = rng.uniform(0, L, (500, 2))
    pairs = crowds.close_pairs(pos, delta)
    expected = spatial.cKDTree(pos).query_pairs(delta)
    assert set(map(tuple, pairs.tolist())) == expected
    assert (pairs[:, 0] < pairs[:, 1]).all() and len(expected) > 100
    out = crowds.enforce_min_distance(pos, delta, iterations=30)
    d = spatial.distance.pdist(out)
    assert d.min() >= 0.95 * delta
    assert spatial.distance.pdist(pos).min() < 0.5 * delta  # it had work to do
    # the input is not modified, the result is new
    assert not np.shares_memory(out, pos)


def test_one_pass_pushes_an_isolated_pair_to_exactly_delta_symmetrically():
    out = crowds.enforce_min_distance([[1.0, 1.0], [1.2, 1.0], [5.0, 5.0]], 0.5)
    np.testing.assert_allclose(out, [[0.85, 1.0], [1.35, 1.0], [5.0, 5.0]], atol=1e-15)


def test_min_distance_never_pushes_into_blocked_cells():
    blocked = np.zeros((6, 6), bool)
    blocked[:, 3] = True
    grid = crowds.CrowdGrid(6, 6, blocked=blocked)
    pos = np.array([[2.9, 2.5], [2.7, 2.5], [2.8, 2.6]])
    out = crowds.enforce_min_distance(pos, 0.8, iterations=10, grid=grid)
    assert (out[:, 0] < 3.0).all()
    with pytest.raises(ValueError, match=r"positions.*blocked cells at rows \[0\]"):
        crowds.enforce_min_distance([[3.5, 1.0]], 0.5, grid=grid)


def armies_small(threads=0):
    from directable.crowds import scenes
    return scenes.armies(retreating=60, chasing=200, n=24, threads=threads)


def test_runs_are_deterministic_at_any_thread_count():
    from directable.crowds import scenes
    results = []
    for threads in (1, 2, 4):
        crowd = scenes.quad(people=120, n=30, predictive_steps=5, threads=threads)
        run = crowd.run(30)
        results.append(np.array(run.positions))
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])
    a = armies_small(1).run(20).positions
    b = armies_small(0).run(20).positions
    np.testing.assert_array_equal(a, b)


def test_four_python_threads_sharing_one_grid_and_params_give_single_thread_results():
    from directable.crowds import scenes
    n = 30
    lay = scenes.city_layout(n, 2)
    grid = crowds.CrowdGrid(n, n, discomfort=lay["street"] * 1.0, blocked=lay["building"])
    params = crowds.Params.table_4_1("city")
    rng = np.random.default_rng(3)
    walk = lay["sidewalk"]
    goal_a = walk & (np.arange(n)[None, :] > n - 5)
    goal_b = walk & (np.arange(n)[None, :] < 4)
    pa = scenes.scatter(rng, walk & ~goal_a & ~goal_b, 60)
    pb = scenes.scatter(rng, walk & ~goal_a & ~goal_b, 60)

    def make():
        return crowds.Crowd(grid, params, [crowds.Group(goal_a, pa), crowds.Group(goal_b, pb)], threads=1)

    single = np.array(make().run(40).positions)
    out = [None] * 4

    def work(k):
        out[k] = np.array(make().run(40).positions)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for r in out:
        np.testing.assert_array_equal(r, single)


def test_walled_in_people_are_reported_and_stand_still():
    blocked = np.zeros((8, 8), bool)
    blocked[1:4, 1] = blocked[1:4, 3] = blocked[1, 1:4] = blocked[3, 1:4] = True  # a closed box around (2, 2)
    grid = crowds.CrowdGrid(8, 8, blocked=blocked)
    goal = np.zeros((8, 8), bool)
    goal[7, 7] = True
    p = crowds.Params.table_4_1("city")
    crowd = crowds.Crowd(grid, p, [crowds.Group(goal, [[2.5, 2.5], [5.5, 5.5]])])
    run = crowd.run(10)
    np.testing.assert_array_equal(run.stuck, [0])
    assert (run.positions[:, 0] == [2.5, 2.5]).all()
    assert np.isfinite(crowd.velocities).all() and (crowd.velocities[0] == 0).all()
    assert crowd.stuck.tolist() == [True, False]


def test_cfl_warning_once():
    crowd, *_ = lone_walker()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        crowd.step(4.0)  # 0.3 * 4 > 1
        crowd.step(4.0)
    assert sum("dt / h" in str(x.message) for x in w) == 1


def test_predictive_discomfort_lies_ahead_for_the_other_groups():
    grid = crowds.CrowdGrid(20, 5)
    p = crowds.Params.table_4_1("city")
    east = np.zeros((5, 20), bool)
    east[:, -1] = True
    west = np.zeros((5, 20), bool)
    west[:, 0] = True
    crowd = crowds.Crowd(grid, p, [crowds.Group(east, [[2.5, 2.5]]), crowds.Group(west, [[17.5, 0.5]])],
                         predictive_steps=10)
    crowd.step()
    v = crowd.velocities[0]
    assert v[0] > 0
    g_other = crowd.fields(1)["discomfort"]  # group 1 plans around group 0's predicted path
    ahead = (crowd.positions[0] + 10 * v).astype(int)
    assert g_other[2, 3:ahead[0] + 1].sum() > 0 and g_other[2, :2].sum() == 0
    expected = 0.1 * sum(crowds.splat(grid, (crowd.positions[0] + q * v)[None], np.zeros((1, 2)), 1.0)[0]
                         for q in range(1, 11))
    np.testing.assert_allclose(g_other, expected, atol=1e-12)
    g_own = crowd.fields(0)["discomfort"]  # a group does not avoid its own predicted path
    assert g_own[2, :12].sum() == 0


def test_predictive_discomfort_advances_people_by_k_steps_of_length_dt():
    """Sec. 4.1.3 / issue sec. 3: each person advanced by its velocity for k = 1..K steps of the run's dt."""
    grid = crowds.CrowdGrid(30, 5)
    p = crowds.Params.table_4_1("city")
    east = np.zeros((5, 30), bool)
    east[:, -1] = True
    west = np.zeros((5, 30), bool)
    west[:, 0] = True
    for dt in (0.5, 2.0):
        crowd = crowds.Crowd(grid, p, [crowds.Group(east, [[2.5, 2.5]]), crowds.Group(west, [[27.5, 0.5]])],
                             predictive_steps=6)
        crowd.step(dt)
        v = crowd.velocities[0]  # no wall or neighbour in the way: the intended velocity
        expected = 0.1 * sum(crowds.splat(grid, (crowd.positions[0] + q * dt * v)[None], np.zeros((1, 2)), 1.0)[0]
                             for q in range(1, 7))
        np.testing.assert_allclose(crowd.fields(1)["discomfort"], expected, atol=1e-12)


def test_arrival_remove_or_stop():
    grid = crowds.CrowdGrid(10, 3)
    p = crowds.Params.table_4_1("quad")
    goal = np.zeros((3, 10), bool)
    goal[:, -1] = True
    for mode in ("remove", "stop"):
        crowd = crowds.Crowd(grid, p, [crowds.Group(goal, [[1.5, 1.5]])], on_arrival=mode)
        run = crowd.run(60)
        assert not run.active[-1, 0] and crowd.arrived[0]
        assert run.positions[-1, 0, 0] >= 9.0
    with pytest.raises(ValueError, match="on_arrival"):
        crowds.Crowd(grid, p, [crowds.Group(goal, [[1.5, 1.5]])], on_arrival="vanish")


def test_crowd_bad_input():
    blocked = np.zeros((6, 8), bool)
    blocked[2, 2] = True
    grid = crowds.CrowdGrid(8, 6, blocked=blocked)
    p = crowds.Params.table_4_1("city")
    goal = np.zeros((6, 8), bool)
    goal[0, 7] = True
    G = crowds.Group
    with pytest.raises(ValueError, match=r"positions must be finite, got nan"):
        crowds.Crowd(grid, p, [G(goal, [[1.0, 1.0], [np.nan, 1.0]])])
    with pytest.raises(ValueError, match=r"positions.*outside the domain at rows \[0, 2\]"):
        crowds.Crowd(grid, p, [G(goal, [[-1.0, 1.0], [1.0, 1.0], [1.0, 6.0]])])
    with pytest.raises(ValueError, match=r"positions.*blocked cells at rows \[0\]"):
        crowds.Crowd(grid, p, [G(goal, [[2.5, 2.5]])])
    with pytest.raises(ValueError, match="goal must contain at least one goal cell"):
        crowds.Crowd(grid, p, [G(np.zeros((6, 8), bool), [[1.0, 1.0]])])
    with pytest.raises(ValueError, match="fully blocked"):
        crowds.Crowd(grid, p, [G(blocked, [[1.0, 1.0]])])
    with pytest.raises(ValueError, match=r"goal must have shape \(6, 8\)"):
        crowds.Crowd(grid, p, [G(goal.T, [[1.0, 1.0]])])
    with pytest.raises(ValueError, match=r"positions must have shape \(P, 2\)"):
        crowds.Crowd(grid, p, [G(goal, [[1.0, 1.0, 1.0]])])
    with pytest.raises(ValueError, match="dt must be"):
        crowds.Crowd(grid, p, [G(goal, [[1.0, 1.0]])]).step(0.0)
    with pytest.raises(ValueError, match="goal"):
        crowds.Crowd(grid, p, [G(None, [[1.0, 1.0]])])
    with pytest.raises(TypeError):
        crowds.Crowd(grid, None, [G(goal, [[1.0, 1.0]])])
    crowd = crowds.Crowd(grid, p, [G(goal, [[1.0, 1.0]], goal_fn=lambda step: np.zeros((6, 8), bool))])
    with pytest.raises(ValueError, match="goal must contain"):
        crowd.run(3)
    with pytest.raises(ValueError, match="radius"):
        crowds.Agent(np.zeros((3, 2)), -1.0)


def test_run_arrays_are_read_only_views_and_progress_is_reported():
    crowd, *_ = lone_walker()
    calls = []
    run = crowd.run(20, progress=lambda done, total: calls.append((done, total)))
    assert run.positions.shape == (21, 1, 2) and run.active.shape == (21, 1) and run.step_times.shape == (20,)
    assert not run.positions.flags.writeable
    assert np.shares_memory(run.positions, run.positions)
    assert calls and calls[-1] == (20, 20)
    assert (run.step_times > 0).all()
    assert run.stage_times.shape == (20, 4) and (run.stage_times >= 0).all() and not run.stage_times.flags.writeable
    assert np.shares_memory(run.stage_times, run.stage_times)
    assert (run.stage_times.sum(axis=1) <= run.step_times * 1.01 + 1e-5).all()


def test_a_step_moves_people_with_the_whole_velocity_field():
    """A step computes only the MAC faces its people's stencils read; they must
    move exactly as the whole field of Crowd.fields makes them move."""
    rng = np.random.default_rng(3)
    n = 40
    blocked = np.zeros((n, n), bool)
    blocked[10:30, 20] = True
    grid = crowds.CrowdGrid(n, n, blocked=blocked)
    p = crowds.Params.table_4_1("city")
    goal = np.zeros((n, n), bool)
    goal[:, -1] = True
    X = rng.uniform(2, 18, (300, 2))
    crowd = crowds.Crowd(grid, p, [crowds.Group(goal, X)], min_distance_iterations=0, threads=1)
    for _ in range(5):
        crowd.step()
    before, active = crowd.positions, crowd.active
    u = crowd.fields(0)["velocity"]
    v = MACGrid2D(n, n, 1.0).velocity_at(u, before)
    norm = np.sqrt((v * v).sum(axis=1))
    v = np.where((norm > p.f_max)[:, None], v * (p.f_max / np.maximum(norm, 1e-300))[:, None], v)
    crowd.step()
    np.testing.assert_allclose(crowd.positions[active], (before + v)[active], rtol=0, atol=1e-14)
    assert np.abs(v[active]).sum() > 0
