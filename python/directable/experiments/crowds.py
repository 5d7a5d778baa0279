"""The scenes of the continuum-crowd chapter (Treuille thesis sec. 4.3,
Fig. 4.1-4.8, Table 4.1) and the metrics their experiments report; also
reachable as ``directable.crowds.scenes``.

Every scene returns a ready :class:`~directable.crowds.Crowd` with Table
4.1's parameters; sizes are parameters whose defaults are the paper's.
Built only from the public API of :mod:`directable.crowds`.
"""
from __future__ import annotations

import numpy as np

from ..crowds import Agent, Crowd, CrowdGrid, Group, Params

__all__ = ["lanes", "vortex", "armies", "quad", "city", "evacuation", "saucer", "scatter", "lane_index",
           "angular_momentum", "heading_change", "street_fraction", "red_entries", "path_lengths",
           "arrival_steps", "detour_ratio", "saucer_clearance", "city_layout", "mountains", "saucer_path",
           "heading_change_split", "voronoi_density", "plot_voronoi_density"]


def _variant(params, **changes):
    return Params(**{**params.to_dict(), **changes})


def scatter(rng, allowed, count, h=1.0, spacing=0.0):
    """Random points in the allowed cells.

    Parameters
    ----------
    rng : numpy.random.Generator
    allowed : (ny, nx) bool array_like
        Cells the points may lie in.
    count : int
        Number of points.
    h : float
        Cell size (length units).
    spacing : float
        With spacing > 0 points are drawn by rejection so that no two are
        closer than ``spacing`` (length units), falling back to plain draws
        when the region is full.

    Returns
    -------
    (count, 2) ndarray
        Points (length units), each uniform in a random allowed cell (kept
        0.05 h away from its edges).
    """
    cells = np.argwhere(np.asarray(allowed, bool))
    if len(cells) == 0:
        raise ValueError("allowed must contain at least one cell")
    out = []
    tries = 0
    while len(out) < count:
        j, i = cells[rng.integers(len(cells))]
        p = np.array([(i + rng.uniform(0.05, 0.95)) * h, (j + rng.uniform(0.05, 0.95)) * h])
        tries += 1
        if spacing > 0 and out and tries < 200 * count:
            if np.min(np.linalg.norm(np.asarray(out) - p, axis=1)) < spacing:
                continue
        out.append(p)
    return np.asarray(out).reshape(count, 2)


def _band(ny, nx, x0, x1, y0=0, y1=None):
    m = np.zeros((ny, nx), bool)
    m[y0:ny if y1 is None else y1, x0:x1] = True
    return m


# ---------------------------------------------------------------- scenes

def lanes(per_group=100, nx=60, ny=16, seed=0, params=None, flow_speed=True, **crowd_kw):
    """Two groups crossing in a corridor (Fig. 4.2a; Table 4.1 "lanes").

    Group 0 starts at the west end and walks to the east column, group 1
    the reverse. The paper's example has 24 people (``per_group=12``).

    Parameters
    ----------
    per_group : int
        People per group.
    nx, ny : int
        Corridor size (cells).
    seed : int
        Seed of the start positions.
    params : Params, optional
        Defaults to Table 4.1 "lanes".
    flow_speed : bool
        False is the ablation without the flow-speed term (rho_max = inf).
    **crowd_kw
        Passed to :class:`~directable.crowds.Crowd`.

    Returns
    -------
    Crowd
    """
    p = params or Params.table_4_1("lanes")
    if not flow_speed:
        p = _variant(p, rho_max=np.inf)
    rng = np.random.default_rng(seed)
    depth = int(np.clip(np.ceil(per_group / (0.6 * ny)), 2, nx // 3))
    grid = CrowdGrid(nx, ny)
    west, east = _band(ny, nx, 0, depth), _band(ny, nx, nx - depth, nx)
    groups = [Group(goal=_band(ny, nx, nx - 1, nx), positions=scatter(rng, west, per_group, spacing=p.delta_min)),
              Group(goal=_band(ny, nx, 0, 1), positions=scatter(rng, east, per_group, spacing=p.delta_min))]
    return Crowd(grid, p, groups, **crowd_kw)


def vortex(per_group=150, n=30, corner=10, seed=0, params=None, min_distance_iterations=4, **crowd_kw):
    """Four groups crossing to the opposite corners (Fig. 4.2b; Table 4.1 "vortex").

    Whether the crossing turns into a vortex, and its sense, depends on the
    random start (seed): it is an emergent symmetry breaking.

    Parameters
    ----------
    per_group : int
        People per group.
    n : int
        Square domain size (cells).
    corner : int
        Side (cells) of the start and goal corners.
    seed : int
        Seed of the start positions.
    params : Params, optional
        Defaults to Table 4.1 "vortex".
    min_distance_iterations : int
        Minimum-distance passes per step.
    **crowd_kw
        Passed to :class:`~directable.crowds.Crowd`.

    Returns
    -------
    Crowd
    """
    p = params or Params.table_4_1("vortex")
    rng = np.random.default_rng(seed)
    grid = CrowdGrid(n, n)
    c = corner
    boxes = [(0, c, 0, c), (n - c, n, 0, c), (n - c, n, n - c, n), (0, c, n - c, n)]  # SW, SE, NE, NW
    groups = []
    for k, (x0, x1, y0, y1) in enumerate(boxes):
        gx0, gx1, gy0, gy1 = boxes[(k + 2) % 4]
        start = _band(n, n, x0, x1, y0, y1)
        goal = np.zeros((n, n), bool)
        goal[gy0:gy1, gx0:gx1] = True
        # the goal is the far corner's outer cells, so people cross the middle
        inner = np.zeros((n, n), bool)
        inner[max(gy0, 0) + (c // 2 if gy0 == 0 else 0):gy1 - (c // 2 if gy1 == n else 0),
              gx0 + (c // 2 if gx0 == 0 else 0):gx1 - (c // 2 if gx1 == n else 0)] = True
        groups.append(Group(goal=goal & ~inner, positions=scatter(rng, start, per_group, spacing=p.delta_min)))
    return Crowd(grid, p, groups, min_distance_iterations=min_distance_iterations, **crowd_kw)


def mountains(n=60, seed=0, peaks=8, height=6.0):
    """A smooth height field of Gaussian hills (the armies' terrain, Fig. 4.8).

    Parameters
    ----------
    n : int
        Grid size (cells).
    seed : int
        Seed of the hills' centres, widths and heights.
    peaks : int
        Number of hills.
    height : float
        Largest hill height (length units).

    Returns
    -------
    (n, n) ndarray
        Height at the cell centres (length units).
    """
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:n, 0:n] + 0.5
    H = np.zeros((n, n))
    for _ in range(peaks):
        cx, cy = rng.uniform(0.15 * n, 0.85 * n, 2)
        w = rng.uniform(0.06, 0.12) * n
        H += rng.uniform(0.5, 1.0) * height * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * w * w))
    return H


def armies(retreating=2000, chasing=8001, n=60, seed=0, params=None, **crowd_kw):
    """A large army chasing a smaller one over mountains (Fig. 4.8; Table 4.1
    "armies", s_min/s_max = -0.3/0.3).

    Group 0 retreats to the east edge; group 1's goal is the cells the
    retreating army occupies (``goal_fn``), or the east edge once it is gone.

    Parameters
    ----------
    retreating, chasing : int
        People in the retreating (group 0) and chasing (group 1) armies.
    n : int
        Grid size (cells).
    seed : int
        Seed of the terrain and the start positions.
    params : Params, optional
        Defaults to Table 4.1 "armies".
    **crowd_kw
        Passed to :class:`~directable.crowds.Crowd`.

    Returns
    -------
    Crowd
    """
    p = params or Params.table_4_1("armies")
    rng = np.random.default_rng(seed)
    grid = CrowdGrid(n, n, height=mountains(n, seed))
    east = _band(n, n, n - 1, n)
    # packed blocks: Table 4.1's densities (rho_min ~ 15 people per cell) are those of armies in formation
    rows = (n // 4, 3 * n // 4)
    retreat = scatter(rng, _band(n, n, n // 3, n // 3 + max(n // 8, 1), *rows), retreating)
    chase = scatter(rng, _band(n, n, 0, max(n // 6, 1), *rows), chasing)
    holder = {}

    def chase_goal(step):
        occ = holder["crowd"].occupied(0)
        return occ if occ.any() else east

    crowd = Crowd(grid, p, [Group(goal=east, positions=retreat),
                            Group(goal=east, positions=chase, goal_fn=chase_goal)], **crowd_kw)
    holder["crowd"] = crowd
    return crowd


def quad(people=400, n=60, doors=8, seed=0, params=None, predictive_steps=10, predictive_scale=0.1,
         predictive_lambda=1.0, **crowd_kw):
    """A school quad as classes get out (sec. 4.3; Table 4.1 "quad").

    People leave from ``doors`` doorways on the walls, each to a random other
    door; one group per destination door. Predictive discomfort of
    ``predictive_steps`` steps (scale 0.1, exponent 1, as in sec. 4.4).

    Parameters
    ----------
    people : int
        People in all.
    n : int
        Square quad size (cells).
    doors : int
        Doorways, at most 8 (two per wall).
    seed : int
        Seed of the destinations and start positions.
    params : Params, optional
        Defaults to Table 4.1 "quad".
    predictive_steps : int
        K, steps of predictive discomfort (sec. 4.1.3); 0 turns it off.
    predictive_scale, predictive_lambda : float
        Density scale and exponent of the predicted splats.
    **crowd_kw
        Passed to :class:`~directable.crowds.Crowd`.

    Returns
    -------
    Crowd
    """
    p = params or Params.table_4_1("quad")
    rng = np.random.default_rng(seed)
    grid = CrowdGrid(n, n)
    w = max(2, n // 15)
    # door centres: two per side
    spots = []
    for t in (n // 3, 2 * n // 3):
        spots += [(t, 0), (n - 1, t), (t, n - 1), (0, t)]
    spots = spots[:doors]
    masks, starts = [], []
    for cx, cy in spots:
        g = np.zeros((n, n), bool)
        st = np.zeros((n, n), bool)
        x0, x1 = max(cx - w // 2, 0), min(cx - w // 2 + w, n)
        y0, y1 = max(cy - w // 2, 0), min(cy - w // 2 + w, n)
        if cy in (0, n - 1):  # a door in the south or north wall
            g[cy, x0:x1] = True
            st[max(cy - 3, 0) if cy else 1:min(cy + 4, n) if cy == 0 else n - 1, x0:x1] = True
        else:
            g[y0:y1, cx] = True
            st[y0:y1, max(cx - 3, 0) if cx else 1:min(cx + 4, n) if cx == 0 else n - 1] = True
        masks.append(g)
        starts.append(st & ~g)
    per = [[] for _ in spots]
    for k in range(people):
        src = k % len(spots)
        dst = (src + 1 + rng.integers(len(spots) - 1)) % len(spots)
        per[dst].append(scatter(rng, starts[src], 1)[0])
    groups = [Group(goal=masks[d], positions=np.asarray(per[d]).reshape(-1, 2)) for d in range(len(spots)) if per[d]]
    return Crowd(grid, p, groups, predictive_steps=predictive_steps, predictive_scale=predictive_scale,
                 predictive_lambda=predictive_lambda, **crowd_kw)


def city_layout(n=120, blocks=4):
    """Masks of the city (Fig. 4.1): buildings, sidewalks, streets, crosswalks
    and the traffic lights of the interior intersections.

    Parameters
    ----------
    n : int
        Grid size (cells).
    blocks : int
        Blocks per side.

    Returns
    -------
    dict of ndarray
        ``building``, ``sidewalk``, ``street`` (outside crosswalks),
        ``crosswalk`` (n, n) bool and ``lights``: (blocks - 1)^2 pairs
        (mask_ns, mask_ew) of the crosswalks of each interior intersection,
        split by the street they cross.
    """
    tile = n // blocks
    t = np.arange(n) % tile
    street_w = max(2, tile // 10)
    walk_w = max(1, tile // 15)
    street_1d = (t < street_w) | (t >= tile - street_w)
    walk_1d = ((t >= street_w) & (t < street_w + walk_w)) | ((t >= tile - street_w - walk_w) & (t < tile - street_w))
    inner_1d = ~street_1d & ~walk_1d
    X, Y = np.meshgrid(np.arange(n), np.arange(n))
    sx, sy = street_1d[X], street_1d[Y]
    wx, wy = walk_1d[X], walk_1d[Y]
    building = inner_1d[X] & inner_1d[Y]
    street = sx | sy
    sidewalk = ~building & ~street
    crosswalk = (sx & wy) | (sy & wx)
    lights = []
    for bi in range(1, blocks):
        for bj in range(1, blocks):
            cx, cy = bi * tile, bj * tile
            near = (np.abs(X + 0.5 - cx) < street_w + walk_w + 0.5) & (np.abs(Y + 0.5 - cy) < street_w + walk_w + 0.5)
            lights.append((near & crosswalk & sy & ~sx, near & crosswalk & sx & ~sy))
    return {"building": building, "sidewalk": sidewalk, "street": street & ~crosswalk, "crosswalk": crosswalk,
            "lights": lights}


def city(people=1500, n=120, blocks=4, seed=0, params=None, gamma=None, street_discomfort=1.0, light_period=60.0,
         lights=True, **crowd_kw):
    """The 16-block city (Fig. 4.1, 4.5, 4.6; Table 4.1 "city").

    Buildings are blocked, the streets outside crosswalks carry discomfort,
    and traffic lights close the crosswalks of the interior intersections
    (each direction green half of ``light_period``). Two groups walk between
    opposite corners.

    Parameters
    ----------
    people : int
        People in all (half per group).
    n : int
        Grid size (cells).
    blocks : int
        Blocks per side.
    seed : int
        Seed of the start positions.
    params : Params, optional
        Defaults to Table 4.1 "city".
    gamma : float, optional
        Overrides the discomfort weight (0 for the ablation).
    street_discomfort : float
        Static discomfort of street cells.
    light_period : float
        Period of the traffic lights (steps).
    lights : bool
        False leaves the crossings always open.
    **crowd_kw
        Passed to :class:`~directable.crowds.Crowd` (``expected_periodic=False``
        is the planning ablation).

    Returns
    -------
    Crowd
    """
    p = params or Params.table_4_1("city")
    if gamma is not None:
        p = _variant(p, gamma=gamma)
    rng = np.random.default_rng(seed)
    lay = city_layout(n, blocks)
    grid = CrowdGrid(n, n, discomfort=street_discomfort * lay["street"].astype(float), blocked=lay["building"])
    if lights:
        for ns, ew in lay["lights"]:
            grid.set_periodic(ns, 0.5, light_period, 0.0)
            grid.set_periodic(ew, 0.5, light_period, light_period / 2)
    c = n // blocks  # the corner blocks' sidewalks are the goals
    sw, ne = np.zeros((n, n), bool), np.zeros((n, n), bool)
    sw[: n // 2, : n // 2] = True
    ne[-n // 2:, -n // 2:] = True
    walk = lay["sidewalk"]
    goal_ne = walk & _band(n, n, n - c, n, n - c, n)
    goal_sw = walk & _band(n, n, 0, c, 0, c)
    half = people // 2
    groups = [Group(goal=goal_ne, positions=scatter(rng, walk & sw & ~goal_sw, half)),
              Group(goal=goal_sw, positions=scatter(rng, walk & ne & ~goal_ne, people - half))]
    return Crowd(grid, p, groups, **crowd_kw)


def evacuation(per_group=150, nx=40, ny=30, speeds=(0.08, 0.12, 0.16), seed=0, params=None, flow_floor=0.05,
               **crowd_kw):
    """A building evacuation (Fig. 4.5): rooms along a corridor, one exit on
    the east wall, one group per walking speed.

    ``flow_floor`` (see :class:`~directable.crowds.Params`) keeps the flow
    speed above that fraction of the terrain speed. With 0 (eq. 4.9 as
    printed) a few people who converge on a one-cell door from three sides
    can come to rest around an empty cell whose density, spilled over from
    them, exceeds rho_max: its speed is then exactly max(0, ubar . n) = 0,
    the cost +inf, the potential behind it +inf, nobody moves, ubar stays 0,
    and the jam is permanent. Whether a run falls into it depends on the
    last bits of rounding (with FMA or without); a floor of 0.05 makes every
    run empty the building (tests/test_crowds_experiments.py).

    Parameters
    ----------
    per_group : int
        People per group.
    nx, ny : int
        Building size (cells).
    speeds : sequence of float
        f_max of each group (cells/step).
    seed : int
        Seed of the start positions.
    params : Params, optional
        Defaults to Table 4.1 "city".
    flow_floor : float or None
        Flow floor of every group; None keeps that of ``params``.
    **crowd_kw
        Passed to :class:`~directable.crowds.Crowd`.

    Returns
    -------
    Crowd
    """
    base = params or Params.table_4_1("city")
    if flow_floor is not None:
        base = _variant(base, flow_floor=flow_floor)
    rng = np.random.default_rng(seed)
    blocked = np.zeros((ny, nx), bool)
    blocked[0, :] = blocked[-1, :] = True
    blocked[:, 0] = blocked[:, -1] = True
    mid = ny // 2
    blocked[mid - 2, :] = blocked[mid + 2, :] = True  # corridor walls
    rooms = list(range(0, nx, 8))
    for x in rooms[1:]:
        blocked[:, x] = True  # room walls
    blocked[mid - 1:mid + 2, 1:nx - 1] = False  # corridor
    for x0 in rooms:
        door = min(x0 + 4, nx - 3)
        blocked[mid - 2, door] = blocked[mid + 2, door] = False
    blocked[mid - 1:mid + 2, nx - 1] = False  # the exit
    exit_ = np.zeros((ny, nx), bool)
    exit_[mid - 1:mid + 2, nx - 1] = True
    inside = ~blocked & ~exit_
    inside[mid - 1:mid + 2, :] = False  # people start in the rooms
    grid = CrowdGrid(nx, ny, blocked=blocked)
    groups = [Group(goal=exit_, positions=scatter(rng, inside, per_group, spacing=0.5),
                    params=_variant(base, f_max=float(s))) for s in speeds]
    return Crowd(grid, base, groups, **crowd_kw)


def saucer_path(n, steps, speed, margin=0.2):
    """A closed elliptical path around the domain's centre.

    Parameters
    ----------
    n : int
        Domain size (cells).
    steps : int
        Path points (one per step).
    speed : float
        Approximate speed along the path (cells/step): sets the number of turns.
    margin : float
        Gap between the ellipse and the domain's edge, as a share of n.

    Returns
    -------
    (steps, 2) ndarray
        Positions (length units).
    """
    r = (0.5 - margin) * n
    turns = max(1, int(round(speed * steps / (2 * np.pi * r))))
    a = np.linspace(0, 2 * np.pi * turns, steps, endpoint=False)
    return np.stack([n / 2 + r * np.cos(a), n / 2 + 0.6 * r * np.sin(a)], axis=1)


def saucer(people=600, n=60, seed=0, params=None, radius=3.0, speed_factor=3.0, lookahead=12,
           discomfort_ahead=2.0, speed_ahead=None, **crowd_kw):
    """A flying saucer crossing two groups in an open square (Fig. 4.6).

    The saucer moves at ``speed_factor`` x f_max, closes its disc and adds
    discomfort and speed ahead of itself over ``lookahead`` path points. The
    returned crowd carries its path as ``crowd.saucer_path``.

    Parameters
    ----------
    people : int
        People in all (half per group).
    n : int
        Square size (cells).
    seed : int
        Seed of the start positions.
    params : Params, optional
        Defaults to Table 4.1 "city".
    radius : float
        Radius of the saucer's disc (cells).
    speed_factor : float
        Saucer speed as a multiple of f_max.
    lookahead : int
        Path points ahead receiving discomfort and speed.
    discomfort_ahead : float
        Discomfort added ahead.
    speed_ahead : float, optional
        Speed (cells/step) added ahead; defaults to f_max.
    **crowd_kw
        Passed to :class:`~directable.crowds.Crowd`.

    Returns
    -------
    Crowd
    """
    p = params or Params.table_4_1("city")
    rng = np.random.default_rng(seed)
    grid = CrowdGrid(n, n)
    v = speed_factor * p.f_max
    circumference = 2 * np.pi * (0.3 * n)
    path = saucer_path(n, max(int(circumference / v), 8), v)
    agent = Agent(path, radius, discomfort_ahead, p.f_max if speed_ahead is None else speed_ahead, lookahead)
    west, east = _band(n, n, 0, 4), _band(n, n, n - 4, n)
    half = people // 2
    keep = np.ones((n, n), bool)
    groups = [Group(goal=_band(n, n, n - 1, n), positions=scatter(rng, west & keep, half)),
              Group(goal=_band(n, n, 0, 1), positions=scatter(rng, east & keep, people - half))]
    crowd = Crowd(grid, p, groups, agents=[agent], **crowd_kw)
    crowd.saucer_path = path
    return crowd


# ---------------------------------------------------------------- metrics

def lane_index(positions, group_of, active, nx, ny, h=1.0):
    """Lane index per frame (the lanes experiment, Fig. 4.2a).

    Over rows of the central third of the corridor, sum |n_A - n_B| / sum
    (n_A + n_B): the occupancy-weighted mean of |n_A - n_B| / (n_A + n_B),
    with n_A, n_B the walking people of groups 0 and 1 in a row.

    Parameters
    ----------
    positions : (T, P, 2) array_like
        Length units.
    group_of : (P,) array_like of int
    active : (T, P) bool array_like
    nx, ny : int
        Corridor size (cells).
    h : float
        Cell size.

    Returns
    -------
    (T,) ndarray
        In [0, 1]; NaN where the central third is empty.
    """
    X = np.asarray(positions)
    A = np.asarray(active, bool)
    g = np.asarray(group_of)
    out = np.full(len(X), np.nan)
    for t in range(len(X)):
        x = X[t, :, 0] / h
        m = A[t] & (x >= nx / 3) & (x < 2 * nx / 3)
        rows = np.clip((X[t, m, 1] / h).astype(int), 0, ny - 1)
        na = np.bincount(rows[g[m] == 0], minlength=ny)
        nb = np.bincount(rows[g[m] == 1], minlength=ny)
        tot = (na + nb).sum()
        if tot:
            out[t] = np.abs(na - nb).sum() / tot
    return out


def angular_momentum(positions, active, center):
    """Normalised angular momentum per frame (the vortex experiment).

    sum (x - c) x v / sum |x - c| |v| over the walking people, with v the
    displacement to the next frame.

    Parameters
    ----------
    positions : (T, P, 2) array_like
        Length units.
    active : (T, P) bool array_like
    center : (2,) array_like
        Centre c (length units).

    Returns
    -------
    (T-1,) ndarray
        In [-1, 1] (positive: counter-clockwise); NaN where nobody moves.
    """
    X = np.asarray(positions)
    A = np.asarray(active, bool)
    r = X[:-1] - np.asarray(center)
    v = X[1:] - X[:-1]
    m = A[:-1] & A[1:]
    cross = np.where(m, r[..., 0] * v[..., 1] - r[..., 1] * v[..., 0], 0.0).sum(axis=1)
    norm = np.where(m, np.linalg.norm(r, axis=2) * np.linalg.norm(v, axis=2), 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(norm > 0, cross / norm, np.nan)


def heading_change(positions, active, min_speed=1e-6):
    """Mean absolute heading change per person-step of walking people (the quad experiment).

    Parameters
    ----------
    positions : (T, P, 2) array_like
        Length units.
    active : (T, P) bool array_like
    min_speed : float
        Steps shorter than this (length units) are left out.

    Returns
    -------
    float
        Radians per person-step; NaN if no step counts.
    """
    X = np.asarray(positions)
    A = np.asarray(active, bool)
    v = X[1:] - X[:-1]
    ang = np.arctan2(v[..., 1], v[..., 0])
    speed = np.linalg.norm(v, axis=2)
    d = np.abs((ang[1:] - ang[:-1] + np.pi) % (2 * np.pi) - np.pi)
    m = A[:-2] & A[1:-1] & A[2:] & (speed[1:] > min_speed) & (speed[:-1] > min_speed)
    return float(d[m].mean()) if m.any() else float("nan")


def _cells(positions, h, nx, ny):
    i = np.clip((positions[..., 0] / h).astype(int), 0, nx - 1)
    j = np.clip((positions[..., 1] / h).astype(int), 0, ny - 1)
    return j, i


def street_fraction(positions, active, street, h=1.0):
    """Fraction of walking person-steps on street cells (the city experiment).

    Parameters
    ----------
    positions : (T, P, 2) array_like
        Length units.
    active : (T, P) bool array_like
    street : (ny, nx) bool array_like
        The cells counted.
    h : float
        Cell size.

    Returns
    -------
    float
        In [0, 1].
    """
    X = np.asarray(positions)
    A = np.asarray(active, bool)
    ny, nx = street.shape
    j, i = _cells(X, h, nx, ny)
    on = street[j, i]
    return float(on[A].mean()) if A.any() else 0.0


def red_entries(run, grid, masks, dt=1.0):
    """Person-steps that moved into a red crossing (the city experiment).

    People whose cell at step t+1 is red at time t (the time of the step)
    and differs from their cell at step t.

    Parameters
    ----------
    run : CrowdRun
    grid : CrowdGrid
    masks : sequence of (ny, nx) bool arrays
        The closure masks to check.
    dt : float
        Step length (steps of time).

    Returns
    -------
    int
    """
    X = np.asarray(run.positions)
    A = np.asarray(run.active, bool)
    union = np.zeros((grid.ny, grid.nx), bool)
    for m in masks:
        union |= m
    j, i = _cells(X, grid.h, grid.nx, grid.ny)
    count = 0
    for t in range(len(X) - 1):
        red = grid.red(t * dt) & union
        moved = (j[t + 1] != j[t]) | (i[t + 1] != i[t])
        count += int((A[t] & moved & red[j[t + 1], i[t + 1]]).sum())
    return count


def path_lengths(positions, active):
    """Length walked by each person while walking.

    Parameters
    ----------
    positions : (T, P, 2) array_like
        Length units.
    active : (T, P) bool array_like

    Returns
    -------
    (P,) ndarray
        Length units.
    """
    X = np.asarray(positions)
    A = np.asarray(active, bool)
    step = np.linalg.norm(X[1:] - X[:-1], axis=2)
    return (step * A[:-1]).sum(axis=0)


def detour_ratio(positions, active):
    """Length walked over net displacement, summed over people.

    >= 1; 1 is a straight walk: how much people go around rather than wait
    (the city's expected-speed experiment).

    Parameters
    ----------
    positions : (T, P, 2) array_like
        Length units.
    active : (T, P) bool array_like

    Returns
    -------
    float
    """
    X = np.asarray(positions)
    A = np.asarray(active, bool)
    last = np.where(A.any(axis=0), A.shape[0] - 1 - np.argmax(A[::-1], axis=0), 0)
    last = np.minimum(last + 1, A.shape[0] - 1)  # the step that arrived
    net = np.linalg.norm(X[last, np.arange(X.shape[1])] - X[0], axis=1)
    return float(path_lengths(X, A).sum() / max(net.sum(), 1e-300))


def arrival_steps(active):
    """First frame at which each person is no longer walking.

    Parameters
    ----------
    active : (T, P) bool array_like

    Returns
    -------
    (P,) ndarray of int
        Frame index; -1 for people still walking at the end.
    """
    A = np.asarray(active, bool)
    done = ~A
    first = np.argmax(done, axis=0)
    return np.where(done.any(axis=0), first, -1)


def saucer_clearance(positions, active, path, radius):
    """Fraction of walking person-steps farther than ``radius`` from the saucer.

    Parameters
    ----------
    positions : (T, P, 2) array_like
        Length units.
    active : (T, P) bool array_like
    path : (L, 2) array_like
        The saucer's positions per step, looped.
    radius : float
        Clearance (length units).

    Returns
    -------
    float
        In [0, 1]; 1 when nobody walks.
    """
    X = np.asarray(positions)
    A = np.asarray(active, bool)
    T = len(X)
    s = np.asarray(path)[np.arange(T) % len(path)]
    d = np.linalg.norm(X - s[:, None, :], axis=2)
    return float((d[A] > radius).mean()) if A.any() else 1.0


def heading_change_split(positions, active, radius=2.0, min_speed=1e-6):
    """Mean absolute heading change (radians) per person-step, split by company.

    A person-step counts as *isolated* when no other walking person is within
    ``radius`` (length units) at the middle frame. Separates the re-planning
    jitter of people far from everyone from the avoidance and pushes inside
    the crowd (the quad experiment).

    Parameters
    ----------
    positions : (T, P, 2) array_like
    active : (T, P) bool array_like
    radius : float
    min_speed : float
        Person-steps slower than this (length per step) are left out.

    Returns
    -------
    isolated, crowded : float
        Mean heading change (rad) of each kind of person-step (NaN if none).
    isolated_fraction : float
        Share of the counted person-steps that were isolated.
    """
    from scipy.spatial import cKDTree

    X = np.asarray(positions, float)
    A = np.asarray(active, bool)
    v = X[1:] - X[:-1]
    ang = np.arctan2(v[..., 1], v[..., 0])
    speed = np.linalg.norm(v, axis=2)
    d = np.abs((ang[1:] - ang[:-1] + np.pi) % (2 * np.pi) - np.pi)
    m = A[:-2] & A[1:-1] & A[2:] & (speed[1:] > min_speed) & (speed[:-1] > min_speed)
    iso = np.zeros_like(m)
    for t in range(1, len(X) - 1):
        walking = np.flatnonzero(A[t])
        if len(walking) == 0:
            continue
        tree = cKDTree(X[t, walking])
        company = np.array([len(c) for c in tree.query_ball_point(X[t, walking], radius)])  # counts oneself
        iso[t - 1, walking] = company == 1

    def mean(mask):
        return float(d[mask].mean()) if mask.any() else float("nan")

    return mean(m & iso), mean(m & ~iso), float((m & iso).sum() / max(m.sum(), 1))


def _pedpy():
    try:
        import pedpy
    except ImportError as exc:
        raise ImportError('the Voronoi density needs PedPy: pip install "directable[pedpy]" '
                          '(or pip install "pedpy>=1.1")') from exc
    return pedpy


def _walkable_area(pedpy, grid):
    """The free part of the grid's domain as a PedPy WalkableArea (the largest
    connected piece where walls split it)."""
    import shapely
    from shapely.geometry import box

    h = grid.h
    free = box(0.0, 0.0, grid.nx * h, grid.ny * h)
    walls = [box(i * h, j * h, (i + 1) * h, (j + 1) * h) for j, i in np.argwhere(grid.blocked)]
    if walls:
        free = free.difference(shapely.union_all(walls))
    if free.geom_type == "MultiPolygon":
        free = max(free.geoms, key=lambda g: g.area)
    return pedpy.WalkableArea(free)


def voronoi_density(run, grid, frames, cut_off=None, dt=1.0):
    """Individual Voronoi cells and densities of the walking people, computed by PedPy.

    Parameters
    ----------
    run : CrowdRun
        A recorded run (``positions`` (T+1, P, 2), ``active`` (T+1, P)).
    grid : CrowdGrid
        Its grid: the free cells make the walkable area.
    frames : sequence of int
        Frames (steps) to analyse.
    cut_off : float, optional
        Radius (length units) that bounds each Voronoi cell (PedPy's cut-off),
        so that people at the edge of a crowd get finite cells.
    dt : float
        Step length (time units): PedPy's frame rate is 1 / dt.

    Returns
    -------
    voronoi : pandas.DataFrame
        PedPy's individual Voronoi data: ``id``, ``frame``, ``polygon``,
        ``density`` (people per length unit squared).
    traj : pedpy.TrajectoryData
    walkable_area : pedpy.WalkableArea
        People outside it (in another piece of a domain split by walls) are
        left out.
    """
    import pandas as pd
    from shapely.geometry import Point

    pedpy = _pedpy()
    X = np.asarray(run.positions)
    A = np.asarray(run.active, bool)
    area = _walkable_area(pedpy, grid)
    rows = []
    for f in frames:
        f = int(f)
        who = np.flatnonzero(A[f])
        inside = [k for k in who if area.polygon.contains(Point(X[f, k]))]
        rows += [(k, f, X[f, k, 0], X[f, k, 1]) for k in inside]
    data = pd.DataFrame(rows, columns=["id", "frame", "x", "y"])
    traj = pedpy.TrajectoryData(data=data, frame_rate=1.0 / dt)
    cut = None if cut_off is None else pedpy.Cutoff(radius=float(cut_off), quad_segments=3)
    voronoi = pedpy.compute_individual_voronoi_polygons(traj_data=traj, walkable_area=area, cut_off=cut)
    return voronoi, traj, area


def plot_voronoi_density(run, grid, frame, cut_off=1.5, ax=None, vmax=None):
    """The Voronoi cells of one frame coloured by individual density (PedPy).

    Parameters
    ----------
    run : CrowdRun
    grid : CrowdGrid
    frame : int
    cut_off : float
        Bound on each cell's radius (length units).
    ax : matplotlib.axes.Axes, optional
    vmax : float, optional
        Top of the colour scale (people per cell area).

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    pedpy = _pedpy()
    voronoi, traj, area = voronoi_density(run, grid, [frame], cut_off=cut_off)
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 6))
    kw = dict(color_by_column=pedpy.DENSITY_COL, cb_label="individual Voronoi density (people / cell²)",
              x_label="x (cells)", y_label="y (cells)", title=f"Voronoi density at step {frame} (PedPy)")
    if vmax is not None:
        kw.update(vmin=0.0, vmax=vmax)
    return pedpy.plot_voronoi_cells(voronoi_data=voronoi, frame=int(frame), traj_data=traj, walkable_area=area,
                                    axes=ax, **kw)
