"""Continuum crowds, the fields: splat, speed, unit cost, parameters, grid
(NumPy transcriptions in crowds_reference.py) and their bad input."""
import numpy as np
import pytest

from reference import crowds as ref
from directable import crowds

P_KEYS = ("f_max", "rho_min", "rho_max", "lam", "delta_min", "alpha", "beta", "gamma", "f_min", "s_min", "s_max",
          "flow_floor")


def pdict(p):
    return {k: getattr(p, k) for k in P_KEYS}


def random_grid(rng, nx=13, ny=9, h=1.0, blocked_fraction=0.1):
    height = rng.uniform(0, 3, (ny, nx))
    disc = rng.uniform(0, 1, (ny, nx))
    blocked = rng.random((ny, nx)) < blocked_fraction
    return crowds.CrowdGrid(nx, ny, h, height=height, discomfort=disc, blocked=blocked)


@pytest.mark.parametrize("h", [1.0, 0.5])
@pytest.mark.parametrize("lam", [1.0, 2.0, 3.9, 10.0])
def test_splat_matches_numpy(h, lam):
    rng = np.random.default_rng(1)
    grid = crowds.CrowdGrid(11, 7, h)
    pos = rng.uniform([0, 0], [11 * h, 7 * h], (300, 2))
    vel = rng.normal(size=(300, 2))
    rho, ubar = crowds.splat(grid, pos, vel, lam)
    rho_ref, ubar_ref = ref.splat(11, 7, h, pos, vel, lam)
    assert rho.shape == (7, 11) and ubar.shape == (7, 11, 2)
    np.testing.assert_allclose(rho, rho_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ubar, ubar_ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("lam", [1.0, 2.0, 3.9])
def test_splat_own_cell_gets_at_least_rho_bar_others_at_most(lam):
    rng = np.random.default_rng(2)
    grid = crowds.CrowdGrid(10, 10)
    rho_bar = 2.0 ** -lam
    for p in rng.uniform(1, 9, (200, 2)):
        rho, _ = crowds.splat(grid, p[None], np.zeros((1, 2)), lam)
        own = (int(p[1]), int(p[0]))
        assert rho[own] >= rho_bar - 1e-12
        others = rho.copy()
        others[own] = 0
        assert others.max() <= rho_bar + 1e-12


def test_splat_is_lipschitz_in_position():
    rng = np.random.default_rng(3)
    grid = crowds.CrowdGrid(10, 10)
    lam, eps = 2.0, 1e-6
    for p in rng.uniform(1, 9, (100, 2)):
        d = rng.normal(size=2)
        d /= np.linalg.norm(d)
        r0, _ = crowds.splat(grid, p[None], np.zeros((1, 2)), lam)
        r1, _ = crowds.splat(grid, (p + eps * d)[None], np.zeros((1, 2)), lam)
        assert np.abs(r1 - r0).max() <= lam * 1.0 * eps * 1.0001  # |d min(.)^lam| <= lam |d min|


def test_splat_drops_off_grid_cells_and_mean_velocity_is_zero_where_empty():
    grid = crowds.CrowdGrid(5, 4)
    rho, ubar = crowds.splat(grid, [[0.1, 0.1]], [[1.0, -2.0]], 2.0)
    # the person sits below-left of cell (0, 0)'s centre: only cell (0, 0) is on the grid
    assert rho[0, 0] == pytest.approx(min(0.6, 0.6) ** 2)
    assert np.count_nonzero(rho) == 1
    np.testing.assert_array_equal(ubar[0, 0], [1.0, -2.0])
    assert not ubar[1:].any()


@pytest.mark.parametrize("floor", [0.0, 0.1])
@pytest.mark.parametrize("name", ["lanes", "vortex", "armies", "quad", "city"])
def test_speed_and_cost_match_numpy(name, floor):
    rng = np.random.default_rng(4)
    grid = random_grid(rng)
    params = crowds.Params(**{**crowds.Params.table_4_1(name).to_dict(), "flow_floor": floor})
    p = pdict(params)
    pos = rng.uniform([0, 0], [13, 9], (200, 2))
    vel = rng.normal(scale=0.2, size=(200, 2))
    lam = params.lam
    rho, ubar = crowds.splat(grid, pos, vel, lam)
    rho = rho * (p["rho_max"] / max(rho.max(), 1e-9))  # spread the densities over [0, rho_max]
    f = crowds.speed_field(grid, rho, ubar, params)
    f_ref = ref.speed(grid.height, grid.blocked, rho, ubar, p)
    assert f.shape == (4, 9, 13)
    np.testing.assert_allclose(f, f_ref, rtol=1e-12, atol=1e-12)
    c = crowds.unit_cost(grid, f, grid.discomfort, params)
    c_ref = ref.cost(f_ref, grid.discomfort, p)
    np.testing.assert_array_equal(np.isinf(c), np.isinf(c_ref))
    fin = np.isfinite(c_ref)
    np.testing.assert_allclose(c[fin], c_ref[fin], rtol=1e-12)


def test_speed_on_flat_empty_ground_is_f_max_and_zero_at_walls():
    blocked = np.zeros((5, 6), bool)
    blocked[2, 3] = True
    grid = crowds.CrowdGrid(6, 5, blocked=blocked)
    params = crowds.Params.table_4_1("city")
    f = crowds.speed_field(grid, np.zeros((5, 6)), np.zeros((5, 6, 2)), params)
    assert f[0, 0, 0] == params.f_max  # E from (0, 0)
    assert (f[0, :, -1] == 0).all() and (f[1, -1, :] == 0).all() and (f[2, :, 0] == 0).all() and (f[3, 0, :] == 0).all()
    assert (f[:, 2, 3] == 0).all()  # out of the wall
    assert f[0, 2, 2] == 0 and f[2, 2, 4] == 0 and f[1, 1, 3] == 0 and f[3, 3, 3] == 0  # into the wall
    c = crowds.unit_cost(grid, f, np.zeros((5, 6)), params)
    assert np.isinf(c[:, 2, 3]).all()


def test_slopes_change_the_speed_within_f_min_f_max():
    H = np.tile(np.arange(6.0) * 0.2, (4, 1))  # uphill to the east, slope 0.2
    grid = crowds.CrowdGrid(6, 4, height=H)
    p = crowds.Params.table_4_1("armies")  # slopes clamped into [-0.3, 0.3]
    f = crowds.speed_field(grid, np.zeros((4, 6)), np.zeros((4, 6, 2)), p)
    east, west = f[0, 1, 2], f[2, 1, 2]
    assert east == pytest.approx(p.f_max + (0.2 + 0.3) / 0.6 * (p.f_min - p.f_max))
    assert west == pytest.approx(p.f_max + (-0.2 + 0.3) / 0.6 * (p.f_min - p.f_max))
    assert p.f_min <= east < west <= p.f_max


def test_table_4_1():
    lanes = crowds.Params.table_4_1("lanes")
    assert (lanes.f_max, lanes.rho_min, lanes.rho_max, lanes.delta_min, lanes.lam) == (0.12, 0.001, 0.056, 0.5, 10.0)
    assert (lanes.alpha, lanes.beta, lanes.gamma) == (0.0, 1.0, 0.0)
    city = crowds.Params.table_4_1("city")
    assert (city.f_max, city.rho_min, city.rho_max, city.delta_min, city.lam) == (0.15, 0.25, 0.563, 0.3, 2.0)
    assert (city.alpha, city.beta, city.gamma) == (0.164, 0.016, 0.82)
    armies = crowds.Params.table_4_1("armies")
    assert (armies.s_min, armies.s_max) == (-0.3, 0.3) and armies.rho_max == 34.491
    assert crowds.Params.table_4_1("quad").f_max == 0.375
    assert crowds.Params.table_4_1("vortex").lam == 3.9
    assert (city.s_min, city.s_max, city.f_min) == (0.0, 1.0, 0.0)
    with pytest.raises(ValueError, match="name must be one of"):
        crowds.Params.table_4_1("mall")


BASE = dict(f_max=0.15, rho_min=0.25, rho_max=0.5, lam=2.0, delta_min=0.3, alpha=0.1, beta=0.1, gamma=0.1)


@pytest.mark.parametrize("change, match", [
    (dict(rho_min=0.6), "rho_min must be < rho_max"),
    (dict(rho_min=0.5), "rho_min must be < rho_max"),
    (dict(lam=0.0), "lam must be"),
    (dict(lam=-1.0), "lam must be"),
    (dict(f_max=0.0), "f_max must be"),
    (dict(f_max=-0.1), "f_max must be"),
    (dict(f_min=0.2), "f_min must lie in"),
    (dict(s_min=1.0, s_max=1.0), "s_min must be < s_max"),
    (dict(alpha=-0.1), "alpha must be"),
    (dict(beta=-0.1), "beta must be"),
    (dict(gamma=-0.1), "gamma must be"),
    (dict(alpha=0.0, beta=0.0, gamma=0.0), "must not all be zero"),
    (dict(f_max=float("nan")), "f_max must be"),
    (dict(flow_floor=-0.1), "flow_floor must lie in"),
    (dict(flow_floor=1.5), "flow_floor must lie in"),
])
def test_bad_params(change, match):
    with pytest.raises(ValueError, match=match):
        crowds.Params(**{**BASE, **change})


def test_rho_max_may_be_infinite():
    p = crowds.Params(**{**BASE, "rho_max": np.inf})
    grid = crowds.CrowdGrid(4, 4)
    rho = np.full((4, 4), 100.0)
    f = crowds.speed_field(grid, rho, np.zeros((4, 4, 2)), p)
    assert f[0, 0, 0] == p.f_max  # no flow-speed term


def test_bad_field_shapes():
    grid = crowds.CrowdGrid(6, 5)
    p = crowds.Params.table_4_1("city")
    with pytest.raises(ValueError, match=r"rho must have shape \(5, 6\), got \(6, 5\)"):
        crowds.speed_field(grid, np.zeros((6, 5)), np.zeros((5, 6, 2)), p)
    with pytest.raises(ValueError, match=r"ubar must have shape \(5, 6, 2\)"):
        crowds.speed_field(grid, np.zeros((5, 6)), np.zeros((5, 6)), p)
    # as many entries as (5, 6, 2), so only the array's own shape tells them apart
    with pytest.raises(ValueError, match=r"ubar must have shape \(5, 6, 2\), got \(5, 12\)"):
        crowds.speed_field(grid, np.zeros((5, 6)), np.zeros((5, 12)), p)
    with pytest.raises(ValueError, match=r"speed must have shape \(4, 5, 6\)"):
        crowds.unit_cost(grid, np.zeros((3, 5, 6)), np.zeros((5, 6)), p)
    with pytest.raises(ValueError, match=r"discomfort must have shape \(5, 6\)"):
        crowds.unit_cost(grid, np.ones((4, 5, 6)), np.zeros((5, 5)), p)
    with pytest.raises(ValueError, match=r"height must have shape \(5, 6\)"):
        crowds.CrowdGrid(6, 5, height=np.zeros((6, 5)))
    with pytest.raises(ValueError, match=r"blocked must have shape \(5, 6\)"):
        crowds.CrowdGrid(6, 5, blocked=np.zeros(30, bool))
    with pytest.raises(ValueError, match=r"positions must have shape \(P, 2\)"):
        crowds.splat(grid, np.zeros((3, 3)), np.zeros((3, 3)), 2.0)
    with pytest.raises(ValueError, match=r"velocities must have shape \(3, 2\)"):
        crowds.splat(grid, np.zeros((3, 2)), np.zeros((2, 2)), 2.0)
    with pytest.raises(ValueError, match="positions"):
        crowds.splat(grid, [[np.nan, 1.0]], [[0.0, 0.0]], 2.0)
    with pytest.raises(ValueError, match="lam must be"):
        crowds.splat(grid, [[1.0, 1.0]], [[0.0, 0.0]], 0.0)
    with pytest.raises(ValueError, match="discomfort must be >= 0"):
        crowds.CrowdGrid(6, 5, discomfort=-np.ones((5, 6)))
    with pytest.raises(ValueError, match="height"):
        crowds.CrowdGrid(6, 5, height=np.full((5, 6), np.nan))
    with pytest.raises((TypeError, ValueError)):
        crowds.speed_field(grid, None, np.zeros((5, 6, 2)), p)


def test_periodic_closures():
    grid = crowds.CrowdGrid(6, 4)
    mask = np.zeros((4, 6), bool)
    mask[:, 3] = True
    grid.set_periodic(mask, 0.25, 8.0, 0.0)
    np.testing.assert_array_equal(grid.expected_speed_factor, np.where(mask, 0.25, 1.0))
    assert not grid.red(1.0).any() and (grid.red(2.0) == mask).all() and not grid.red(8.5).any()
    p = crowds.Params.table_4_1("city")
    plan = crowds.speed_field(grid, np.zeros((4, 6)), np.zeros((4, 6, 2)), p)
    assert plan[0, 1, 2] == pytest.approx(0.25 * p.f_max)  # expected speed into the crossing
    red = crowds.speed_field(grid, np.zeros((4, 6)), np.zeros((4, 6, 2)), p, time=3.0)
    assert red[0, 1, 2] == 0.0 and red[0, 1, 3] == p.f_max  # nobody enters; leaving is allowed
    green = crowds.speed_field(grid, np.zeros((4, 6)), np.zeros((4, 6, 2)), p, time=0.0)
    assert green[0, 1, 2] == p.f_max
    with pytest.raises(ValueError, match="green_fraction must lie in"):
        grid.set_periodic(mask, 1.5, 8.0)
    with pytest.raises(ValueError, match="period must be"):
        grid.set_periodic(mask, 0.5, 0.0)


def test_flow_floor_keeps_a_dense_standing_crowd_passable():
    grid = crowds.CrowdGrid(6, 4)
    rho = np.full((4, 6), 10.0)  # far above rho_max: w = 1, speed = the flow speed
    ubar = np.zeros((4, 6, 2))
    p0 = crowds.Params.table_4_1("city")
    assert not crowds.speed_field(grid, rho, ubar, p0)[0, 1, 1:-1].any()  # eq. 4.9: max(0, ubar . n) = 0
    p = crowds.Params(**{**p0.to_dict(), "flow_floor": 0.05})
    f = crowds.speed_field(grid, rho, ubar, p)
    np.testing.assert_allclose(f[0, :, :-1], 0.05 * p.f_max, rtol=1e-15)
    assert (f[0, :, -1] == 0).all()  # still 0 off the grid
    ubar[..., 0] = 0.1  # moving with the flow: the flow speed, above the floor
    np.testing.assert_allclose(crowds.speed_field(grid, rho, ubar, p)[0, :, :-1], 0.1, rtol=1e-15)
    assert "flow_floor=0.05" in repr(p)
    import pickle
    assert pickle.loads(pickle.dumps(p)).flow_floor == 0.05


def test_field_functions_do_not_keep_or_alias_their_arguments():
    rng = np.random.default_rng(5)
    grid = random_grid(rng)
    p = crowds.Params.table_4_1("city")
    pos = rng.uniform([0, 0], [13, 9], (50, 2))
    rho, ubar = crowds.splat(grid, pos, np.zeros((50, 2)), p.lam)
    f = crowds.speed_field(grid, rho, ubar, p)
    c = crowds.unit_cost(grid, f, grid.discomfort, p)
    for out, arg in ((f, rho), (f, ubar), (c, f)):
        assert not np.shares_memory(out, arg)
    with pytest.raises(ValueError, match="rho"):
        crowds.speed_field(grid, np.full((9, 13), np.nan), ubar, p)
    with pytest.raises(ValueError, match="speed"):
        crowds.unit_cost(grid, np.full((4, 9, 13), np.nan), grid.discomfort, p)


def test_out_arrays_are_written_in_place_with_the_same_values():
    rng = np.random.default_rng(6)
    grid = random_grid(rng)
    p = crowds.Params.table_4_1("vortex")
    pos = rng.uniform([0, 0], [13, 9], (80, 2))
    pos = pos[~grid.blocked[pos[:, 1].astype(int), pos[:, 0].astype(int)]]
    vel = rng.normal(scale=0.1, size=pos.shape)
    rho, ubar = crowds.splat(grid, pos, vel, p.lam)
    f = crowds.speed_field(grid, rho, ubar, p)
    c = crowds.unit_cost(grid, f, grid.discomfort, p)
    R, U = np.full((9, 13), np.nan), np.full((9, 13, 2), np.nan)
    F, C = np.full((4, 9, 13), np.nan), np.full((4, 9, 13), np.nan)
    for _ in range(2):  # a second call overwrites every entry of the first
        r2, u2 = crowds.splat(grid, pos, vel, p.lam, out=(R, U))
        f2 = crowds.speed_field(grid, R, U, p, out=F)
        c2 = crowds.unit_cost(grid, F, grid.discomfort, p, out=C)
        assert r2 is R and u2 is U and f2 is F and c2 is C
        assert np.shares_memory(r2, R) and np.shares_memory(f2, F) and np.shares_memory(c2, C)
        np.testing.assert_array_equal(R, rho)
        np.testing.assert_array_equal(U, ubar)
        np.testing.assert_array_equal(F, f)
        np.testing.assert_array_equal(C, c)
        R[...] = U[...] = F[...] = C[...] = 7.0


def test_bad_out_arrays():
    grid = crowds.CrowdGrid(6, 5)
    p = crowds.Params.table_4_1("city")
    rho, ubar = np.zeros((5, 6)), np.zeros((5, 6, 2))
    f = crowds.speed_field(grid, rho, ubar, p)
    with pytest.raises(ValueError, match=r"out must have shape \(4, 5, 6\), got \(4, 6, 5\)"):
        crowds.speed_field(grid, rho, ubar, p, out=np.empty((4, 6, 5)))
    with pytest.raises(TypeError, match="out must be a float64 ndarray .* got float32 array"):
        crowds.unit_cost(grid, f, rho, p, out=np.empty((4, 5, 6), np.float32))
    with pytest.raises(TypeError, match="out must be a float64 ndarray .* got list"):
        crowds.unit_cost(grid, f, rho, p, out=[0.0] * 120)
    with pytest.raises(ValueError, match="out must be C-contiguous"):
        crowds.unit_cost(grid, f, rho, p, out=np.empty((4, 5, 12))[:, :, ::2])
    ro = np.empty((4, 5, 6))
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="out must be writeable"):
        crowds.unit_cost(grid, f, rho, p, out=ro)
    with pytest.raises(ValueError, match="cost must not share memory with speed"):
        crowds.unit_cost(grid, f, rho, p, out=f)
    both = np.zeros((4, 5, 6))
    with pytest.raises(ValueError, match="speed must not share memory with rho"):
        crowds.speed_field(grid, both[0], ubar, p, out=both)
    with pytest.raises(TypeError, match=r"out must be a tuple \(rho, ubar\)"):
        crowds.splat(grid, [[1.0, 1.0]], [[0.0, 0.0]], 2.0, out=rho)
    with pytest.raises(ValueError, match=r"out\[1\] \(ubar\) must have shape \(5, 6, 2\), got \(5, 6\)"):
        crowds.splat(grid, [[1.0, 1.0]], [[0.0, 0.0]], 2.0, out=(rho, np.zeros((5, 6))))
    pos = np.zeros((30, 2)) + 1.0
    with pytest.raises(ValueError, match="rho must not share memory with positions"):
        crowds.splat(grid, pos, np.zeros((30, 2)), 2.0, out=(pos.reshape(-1)[:30].reshape(5, 6), ubar))
