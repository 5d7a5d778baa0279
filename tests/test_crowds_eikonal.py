"""Continuum crowds, the potential: the fast-marching rule against a pure-
Python heap implementation, its properties and accuracy, scikit-fmm, and the
velocity field."""
import numpy as np
import pytest

from reference import crowds as ref
from directable import crowds
from directable.fluid import MACGrid2D


def random_case(rng, nx, ny, blocked_fraction=0.1):
    cost = rng.uniform(0.5, 3.0, (4, ny, nx))
    blocked = rng.random((ny, nx)) < blocked_fraction
    goal = np.zeros((ny, nx), bool)
    goal[rng.integers(ny), rng.integers(nx)] = True
    goal[rng.integers(ny), rng.integers(nx)] = True
    blocked &= ~goal
    # a blocked cell: no move into or out of it (what the speed field gives)
    nb = ref.neighbour_arrays(blocked, True)
    cost[nb | blocked[None]] = np.inf
    return cost, goal, blocked


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("heap", ["indexed", "lazy"])
def test_eikonal_matches_python_reference(seed, heap):
    rng = np.random.default_rng(seed)
    nx, ny = 23, 17
    cost, goal, blocked = random_case(rng, nx, ny)
    h = 1.0 if seed % 2 == 0 else 0.5
    phi = crowds.eikonal(cost, goal, blocked, h=h, heap=heap)
    phi_ref = ref.eikonal(cost, goal, blocked, h=h)
    np.testing.assert_array_equal(np.isinf(phi), np.isinf(phi_ref))
    assert np.isinf(phi).sum() > blocked.sum() - 1  # the +inf pattern includes every blocked cell
    fin = np.isfinite(phi_ref)
    np.testing.assert_allclose(phi[fin], phi_ref[fin], rtol=1e-12, atol=1e-12)
    assert (phi[goal] == 0).all()


@pytest.mark.parametrize("seed", range(3))
def test_eikonal_ties_follow_the_rule(seed):
    """Integer costs make many exactly equal tentative values: the order of
    acceptance (smaller flat index first) and the per-axis ties (W, S) decide
    which neighbours are KNOWN: a wrong tie would change phi by far more than
    rounding (FMA contraction in C++ leaves ~1e-14). Both heaps must agree
    bit for bit."""
    rng = np.random.default_rng(100 + seed)
    nx, ny = 31, 26
    cost = rng.integers(1, 4, (4, ny, nx)).astype(float)
    blocked = rng.random((ny, nx)) < 0.08
    goal = np.zeros((ny, nx), bool)
    goal[rng.integers(ny, size=3), rng.integers(nx, size=3)] = True
    blocked &= ~goal
    cost[ref.neighbour_arrays(blocked, True) | blocked[None]] = np.inf
    phi_ref = ref.eikonal(cost, goal, blocked)
    phi = crowds.eikonal(cost, goal, blocked)
    np.testing.assert_array_equal(np.isinf(phi), np.isinf(phi_ref))
    fin = np.isfinite(phi_ref)
    np.testing.assert_allclose(phi[fin], phi_ref[fin], rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(crowds.eikonal(cost, goal, blocked, heap="lazy"), phi)


def test_eikonal_heaps_agree_bit_for_bit_on_a_large_grid():
    rng = np.random.default_rng(11)
    cost, goal, blocked = random_case(rng, 150, 130)
    np.testing.assert_array_equal(crowds.eikonal(cost, goal, blocked, heap="indexed"),
                                  crowds.eikonal(cost, goal, blocked, heap="lazy"))


@pytest.mark.parametrize("shape", [(1, 1), (1, 9), (9, 1), (2, 13), (13, 2), (6, 5)])
def test_eikonal_thin_grids_ignore_finite_costs_off_the_grid(shape):
    """The march runs on the grid padded by a closed border: a finite cost
    of a move off the grid (the caller's array, not a speed field's +inf)
    must not open it, on grids one cell thin too; sizes and heaps alternate
    so one workspace is laid out again between calls."""
    ny, nx = shape
    rng = np.random.default_rng(ny * 31 + nx)
    for heap in ("lazy", "indexed"):
        cost = rng.uniform(0.5, 3.0, (4, ny, nx))  # every move finite, off-grid ones included
        goal = np.zeros((ny, nx), bool)
        goal[rng.integers(ny), rng.integers(nx)] = True
        phi = crowds.eikonal(cost, goal, h=0.7, heap=heap)
        np.testing.assert_allclose(phi, ref.eikonal(cost, goal, h=0.7), rtol=1e-13, atol=1e-13)
        crowds.eikonal(np.ones((4, ny + 3, nx + 1)), np.ones((ny + 3, nx + 1), bool), heap=heap)


def test_eikonal_upper_bound_property():
    rng = np.random.default_rng(7)
    for _ in range(5):
        cost, goal, blocked = random_case(rng, 30, 20)
        phi = crowds.eikonal(cost, goal, blocked)
        for d, (di, dj) in enumerate(ref.DIRS):
            nb = np.full_like(phi, np.inf)
            sl_dst = (slice(max(dj, 0), phi.shape[0] + min(dj, 0)), slice(max(di, 0), phi.shape[1] + min(di, 0)))
            sl_src = (slice(max(-dj, 0), phi.shape[0] + min(-dj, 0)), slice(max(-di, 0), phi.shape[1] + min(-di, 0)))
            nb[sl_src] = phi[sl_dst]
            ok = np.isfinite(phi) & np.isfinite(nb) & np.isfinite(cost[d])
            assert (phi[ok] <= nb[ok] + cost[d][ok] + 1e-12).all()


@pytest.mark.parametrize("n, bound", [(41, 0.08), (81, 0.05), (161, 0.035)])
def test_isotropic_accuracy(n, bound):
    goal = np.zeros((n, n), bool)
    c = n // 2
    goal[c, c] = True
    phi = crowds.eikonal(np.ones((4, n, n)), goal)
    j, i = np.mgrid[0:n, 0:n]
    dist = np.hypot(i - c, j - c)
    far = dist >= n / 4
    err = np.abs(phi[far] - dist[far]) / dist[far]
    assert err.max() <= bound
    assert err.max() > 0.5 * bound  # the measured error of the rule, not a looser one


def test_eikonal_no_reallocation_and_repeatable():
    rng = np.random.default_rng(8)
    cost, goal, blocked = random_case(rng, 40, 40)
    a = crowds.eikonal(cost, goal, blocked)
    b = crowds.eikonal(cost, goal, blocked)
    np.testing.assert_array_equal(a, b)


def test_eikonal_bad_input():
    cost = np.ones((4, 5, 6))
    goal = np.zeros((5, 6), bool)
    with pytest.raises(ValueError, match="goal must contain at least one goal cell"):
        crowds.eikonal(cost, goal)
    goal[2, 2] = True
    blocked = goal.copy()
    with pytest.raises(ValueError, match="fully blocked"):
        crowds.eikonal(cost, goal, blocked)
    with pytest.raises(ValueError, match=r"goal must have shape \(5, 6\)"):
        crowds.eikonal(cost, goal.T)
    with pytest.raises(ValueError, match=r"cost must have shape \(4, ny, nx\)"):
        crowds.eikonal(np.ones((5, 6)), goal)
    bad = cost.copy()
    bad[1, 2, 3] = np.nan
    with pytest.raises(ValueError, match="cost must be >= 0"):
        crowds.eikonal(bad, goal)
    bad[1, 2, 3] = -1
    with pytest.raises(ValueError, match="cost must be >= 0"):
        crowds.eikonal(bad, goal)
    with pytest.raises(ValueError, match="heap must be"):
        crowds.eikonal(cost, goal, heap="fibonacci")
    with pytest.raises(ValueError, match="goal"):
        crowds.eikonal(cost, None)


def test_eikonal_rejects_a_bad_cost_at_every_position():
    # nx = 7: cells in the layout's 4-wide vector pass and in its scalar tail
    rng = np.random.default_rng(3)
    cost = rng.uniform(0.5, 2.0, (4, 3, 7))
    goal = np.zeros((3, 7), bool)
    goal[1, 3] = True
    good = crowds.eikonal(cost, goal)
    for d in range(4):
        for j in range(3):
            for i in range(7):
                for value in (np.nan, -1e-300, -np.inf):
                    bad = cost.copy()
                    bad[d, j, i] = value
                    with pytest.raises(ValueError, match=f"cost must be >= 0 or \\+inf, got .* at flat index {d * 21 + j * 7 + i}$"):
                        crowds.eikonal(bad, goal)
    # a rejected call leaves nothing behind: the next one gives the same phi, bit for bit
    np.testing.assert_array_equal(crowds.eikonal(cost, goal), good)
    # +inf is a closed move, not an error
    closed = cost.copy()
    closed[0, 1, 3] = np.inf
    assert np.isfinite(crowds.eikonal(closed, goal)).all()


def test_blocked_goal_cells_are_ignored():
    goal = np.zeros((5, 6), bool)
    goal[0, 0] = goal[4, 5] = True
    blocked = np.zeros((5, 6), bool)
    blocked[0, 0] = True
    phi = crowds.eikonal(np.ones((4, 5, 6)), goal, blocked)
    assert np.isinf(phi[0, 0]) and phi[4, 5] == 0


def test_matches_scikit_fmm_on_heterogeneous_speed():
    skfmm = pytest.importorskip("skfmm", reason="pip install 'directable[crowds]' for scikit-fmm")
    n = 81
    rng = np.random.default_rng(9)
    j, i = np.mgrid[0:n, 0:n]
    speed = 1.0 + 0.5 * np.sin(i / 9.0) * np.cos(j / 7.0) + 0.1 * rng.random((n, n))
    obstacle = (np.abs(i - 50) < 4) & (np.abs(j - 40) < 18)
    goal = np.zeros((n, n), bool)
    goal[40, 20] = True
    # isotropic cost: 1 / speed of the cell moved into
    cost = 1.0 / ref.neighbour_arrays(speed, 1.0)
    cost[ref.neighbour_arrays(obstacle, True) | obstacle[None]] = np.inf
    phi = crowds.eikonal(cost, goal, obstacle)
    level = np.ma.MaskedArray(np.hypot(i - 20, j - 40) - 0.5, mask=obstacle)
    t = skfmm.travel_time(level, speed, dx=1.0, order=1)
    # the front starts at radius 0.5 for skfmm: compare beyond 3 cells
    sel = ~obstacle & (np.hypot(i - 20, j - 40) >= 3) & np.isfinite(phi) & ~np.ma.getmaskarray(t)
    tt = np.ma.getdata(t)[sel] + 0.5 / speed[40, 20]
    rel = np.abs(phi[sel] - tt) / tt
    assert rel.max() <= 0.08


def straight_field(n=20, p=None):
    grid = crowds.CrowdGrid(n, n)
    p = p or crowds.Params.table_4_1("city")
    f = crowds.speed_field(grid, np.zeros((n, n)), np.zeros((n, n, 2)), p)
    c = crowds.unit_cost(grid, f, np.zeros((n, n)), p)
    return grid, p, f, c


def test_velocity_points_down_the_potential_and_is_bounded():
    rng = np.random.default_rng(10)
    n = 24
    blocked = rng.random((n, n)) < 0.1
    height = rng.uniform(0, 2, (n, n))
    grid = crowds.CrowdGrid(n, n, height=height, blocked=blocked)
    p = crowds.Params.table_4_1("armies")
    pos = np.argwhere(~blocked)[:, ::-1] + 0.5
    rho, ubar = crowds.splat(grid, pos[::3], rng.normal(scale=0.1, size=(len(pos[::3]), 2)), p.lam)
    f = crowds.speed_field(grid, rho, ubar, p)
    c = crowds.unit_cost(grid, f, np.zeros((n, n)), p)
    goal = np.zeros((n, n), bool)
    goal[n // 2, n // 2] = True
    blocked[n // 2, n // 2] = False
    phi = crowds.eikonal(c, goal, grid.blocked)
    u = crowds.velocity_field(grid, phi, c, f)
    mac = MACGrid2D(n, n, 1.0)
    assert u.shape == (mac.n_faces,)
    nxf = (n + 1) * n
    ux, uy = u[:nxf].reshape(n, n + 1), u[nxf:].reshape(n + 1, n)
    with np.errstate(invalid="ignore"):
        dphx = phi[:, 1:] - phi[:, :-1]
        dphy = phi[1:, :] - phi[:-1, :]
        assert (np.nan_to_num(ux[:, 1:-1] * dphx) <= 0).all() and (np.nan_to_num(uy[1:-1, :] * dphy) <= 0).all()
    assert np.abs(u).max() <= p.f_max + 1e-15
    assert (ux[:, [0, -1]] == 0).all() and (uy[[0, -1], :] == 0).all()
    bl = grid.blocked
    assert (ux[:, 1:][bl] == 0).all() and (ux[:, :-1][bl] == 0).all()
    assert (uy[1:, :][bl] == 0).all() and (uy[:-1, :][bl] == 0).all()
    assert np.isfinite(u).all()


def test_velocity_on_open_ground_is_the_unit_direction_times_f_max():
    grid, p, f, c = straight_field()
    goal = np.zeros((20, 20), bool)
    goal[:, -1] = True  # the east column
    phi = crowds.eikonal(c, goal)
    u = crowds.velocity_field(grid, phi, c, f)
    v = MACGrid2D(20, 20, 1.0).velocity_at(u, np.array([[5.3, 7.7], [10.0, 3.2]]))
    np.testing.assert_allclose(v, [[p.f_max, 0], [p.f_max, 0]], atol=1e-14)
