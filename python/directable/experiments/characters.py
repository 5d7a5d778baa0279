"""Treuille thesis sec. 5.4 on synthetic clips: planning vs greedy (Fig. 5.4),
basis degree (Fig. 5.7), sample deletion, gait switching across value
functions learned on different clip sets, fixed-obstacle avoidance (Fig. 5.6)
and a small crowd of moving-obstacle avoiders (Fig. 5.5). Built only on the
public ``directable.characters`` API; each function returns plain numbers the
tests assert and the notebook plots.
"""
from __future__ import annotations

import time

import numpy as np

from .. import characters as ch


def walking_motion(n_turns=9, gaits=("walk",), **kw):
    """The walking clip set of the navigation experiments: 2 x n_turns clips.

    Parameters
    ----------
    n_turns : int
        Turn values evenly spaced on [-1.2, 1.2] rad per cycle.
    gaits : sequence of str
        Gaits of the clips.
    **kw
        Passed to :func:`directable.characters.synthetic_clips`.

    Returns
    -------
    MotionModel
    """
    clips = ch.synthetic_clips(ch.synthetic_walker(), gaits=gaits, turns=np.linspace(-1.2, 1.2, n_turns), **kw)
    return ch.MotionModel(clips)


def navigation_basis(d_degree=2, theta_degree=4):
    """P_a(d) P_b(theta), the navigation basis of the thesis (P2 P4: 15 terms per clip).

    Parameters
    ----------
    d_degree, theta_degree : int
        Polynomial degrees in d (scaled by 2 m) and theta (scaled by pi rad).

    Returns
    -------
    directable.characters.basis.Basis
    """
    return ch.basis.polynomial("d", d_degree, scale=2.0) * ch.basis.polynomial("theta", theta_degree, scale=np.pi)


def _random_starts(task, n, seed):
    rng = np.random.default_rng(seed)
    return [np.array([rng.integers(task.K), rng.uniform(-1, 1), rng.uniform(-np.pi, np.pi)]) for _ in range(n)]


def planning_vs_greedy(motion=None, per_dim=8, starts=50, steps=30, reversal_step=10, vi_grid=(41, 72), seed=0,
                       solver="highspy"):
    """Fig. 5.4: a reversal of the desired direction, and random starts.

    Parameters
    ----------
    motion : MotionModel, optional
        Default :func:`walking_motion`.
    per_dim : int
        LP samples per variable.
    starts : int
        Random starts compared.
    steps : int
        Clip choices per episode.
    reversal_step : int
        Step at which the desired path turns by pi.
    vi_grid : (int, int)
        Value iteration grid points in d and theta.
    seed : int
        Seed of the random starts.
    solver : str
        LP solver of :func:`directable.characters.learn`.

    Returns
    -------
    dict
        ``reversal``: Episodes of the value and greedy policies;
        ``reversal_ratio``: value / greedy discounted cost; ``random_ratio``
        (value / greedy) and ``vi_ratio`` (value / value iteration) over the
        random starts; ``value_function``, ``grid``.
    """
    motion = motion or walking_motion()
    task = ch.Navigation(motion, gamma_x=0.1, gamma_psi=1.0, gamma_rho=1.0)
    vf = ch.learn(task, navigation_basis(), ch.samples(task, per_dim=per_dim), solver=solver)
    vi = ch.value_iteration(task, {"d": vi_grid[0], "theta": vi_grid[1]})
    straight = int(np.argmin(np.abs(motion.clips.params.turn)))
    events = [(reversal_step, {"path_angle": np.pi})]
    value = ch.Controller(task, vf)
    greedy = ch.Controller(task, policy="greedy")
    grid = ch.Controller(task, policy="grid", grid_values=vi)
    x0 = [straight, 0.0, 0.0]
    rev = {"value": value.run(x0, steps, events), "greedy": greedy.run(x0, steps, events)}
    totals = {"value": 0.0, "greedy": 0.0, "grid": 0.0}
    for s in _random_starts(task, starts, seed):
        for name, c in (("value", value), ("greedy", greedy), ("grid", grid)):
            totals[name] += c.run(s, steps).discounted_cost
    return dict(reversal=rev, reversal_ratio=rev["value"].discounted_cost / rev["greedy"].discounted_cost,
                random_ratio=totals["value"] / totals["greedy"], vi_ratio=totals["value"] / totals["grid"],
                value_function=vf, grid=vi, task=task)


def degree_study(motion=None, degrees=tuple(range(1, 11)), theta_samples=24, d_samples=5, starts=20, steps=30,
                 seed=0, solver="highspy"):
    """Fig. 5.7: the degree of P_N(theta) in a navigation controller.

    Parameters
    ----------
    motion : MotionModel, optional
        Default :func:`walking_motion`.
    degrees : sequence of int
        Degrees N tried; the highest is the reference.
    theta_samples, d_samples : int
        LP samples per variable (high degrees need >= 24 theta-samples).
    starts, steps : int
        Random starts and clip choices per episode of the policy cost.
    seed : int
        Seed of the random starts.
    solver : str
        LP solver.

    Returns
    -------
    dict
        ``degrees``; ``sse``: sum of squared differences from the highest
        degree's V over the samples; ``relative``: the same as a fraction of
        its sum of squares; ``policy_cost``: mean discounted cost of the
        policy from random starts; ``lp_seconds``.
    """
    motion = motion or walking_motion()
    task = ch.Navigation(motion, gamma_x=0.1, gamma_psi=1.0, gamma_rho=1.0)
    X = ch.samples(task, per_dim={"d": d_samples, "theta": theta_samples})
    starts_ = _random_starts(task, starts, seed)
    values, costs, lp = {}, {}, {}
    for N in degrees:
        vf = ch.learn(task, navigation_basis(2, N), X, solver=solver)
        values[N] = vf.value(X)
        lp[N] = vf.lp_seconds
        costs[N] = float(np.mean([ch.Controller(task, vf).run(s, steps).discounted_cost for s in starts_]))
    top = values[max(degrees)]
    sse = {N: float(np.sum((values[N] - top) ** 2)) for N in degrees}
    return dict(degrees=list(degrees), sse=sse, relative={N: sse[N] / float(np.sum(top ** 2)) for N in degrees},
                policy_cost=costs, lp_seconds=lp)


def sample_deletion(motion=None, per_dim=None, drop=0.5, starts=30, steps=30, seed=0, solver="highspy"):
    """Deleting a fraction of the samples at random: the policy's mean
    discounted cost with all samples and with the rest (and their ratio).

    The default grid has 8 d-samples and 24 theta-samples (as the degree
    study needs): with 8 theta-samples the LP is so loosely constrained that
    the deletion moves the cost by -8 % to +19 % depending on the seed.

    Parameters
    ----------
    motion : MotionModel, optional
        Default :func:`walking_motion`.
    per_dim : dict, optional
        Samples per variable before deletion.
    drop : float
        Fraction deleted, in [0, 1).
    starts, steps : int
        Random starts and clip choices per episode.
    seed : int
        Seeds the starts (and, + 1, the deletion).
    solver : str
        LP solver.

    Returns
    -------
    dict
        ``full`` and ``dropped``: mean discounted costs; ``ratio``:
        dropped / full; ``samples``: (all, kept) sample counts.
    """
    per_dim = per_dim or {"d": 8, "theta": 24}
    motion = motion or walking_motion()
    task = ch.Navigation(motion, gamma_x=0.1, gamma_psi=1.0, gamma_rho=1.0)
    full = ch.learn(task, navigation_basis(), ch.samples(task, per_dim=per_dim), solver=solver)
    part = ch.learn(task, navigation_basis(), ch.samples(task, per_dim=per_dim, drop=drop, seed=seed + 1),
                    solver=solver)
    s0 = _random_starts(task, starts, seed)
    a = float(np.mean([ch.Controller(task, full).run(s, steps).discounted_cost for s in s0]))
    b = float(np.mean([ch.Controller(task, part).run(s, steps).discounted_cost for s in s0]))
    return dict(full=a, dropped=b, ratio=b / a, samples=(len(full.samples), len(part.samples)))


def gait_switch(per_dim=6, steps=24, switch_step=10, solver="highspy"):
    """Walk -> run mid-episode with value functions learned separately on the
    walking and the running clips (switchability, eq. 5.10 across value
    functions).

    Parameters
    ----------
    per_dim : int
        LP samples per variable.
    steps : int
        Clip choices.
    switch_step : int
        Step at which the desired gait becomes "run".
    solver : str
        LP solver.

    Returns
    -------
    dict
        ``episode``, ``animation`` (the synthesised clips), ``table`` (the
        two value functions), ``motion``, ``gaits`` (gait name of every
        state's clip).
    """
    motion = ch.MotionModel(ch.synthetic_clips(ch.synthetic_walker(), gaits=("walk", "run"),
                                               turns=(-0.8, 0.0, 0.8)))
    gait = motion.clips.gait
    names = motion.clips.gait_names

    # runs cover ~1.4 m per step: sample a wider band than 4 m so that no
    # successor leaves it far enough for the polynomials to be unbounded
    def make(g):
        return ch.Navigation(motion, gamma_x=0.1, gamma_psi=1.0, gamma_rho=1.0, gait=g, ranges={"d": (-4, 4)})

    basis = ch.basis.polynomial("d", 2, scale=4.0) * ch.basis.polynomial("theta", 4, scale=np.pi)
    table = ch.tabulate(make, ["walk", "run"], basis,
                        lambda t: ch.samples(t, per_dim=per_dim, ranges={"d": (-4, 4)}), parameter="gait",
                        solver=solver)
    start = int(np.flatnonzero(gait == names.index("walk"))[0])
    ep = ch.Controller(make("walk"), table).run([start, 0.0, 0.0], steps, events=[(switch_step, {"gait": "run"})])
    anim = motion.synthesize(ep.clips)
    return dict(episode=ep, animation=anim, table=table, motion=motion,
                gaits=[names[g] for g in gait[ep.clips]])


def foa_basis(offset=0.0, theta_degree=2):
    """Fig. 5.6's basis, P4(u) P2(v) plus G_{0,-3/2,4} G_{x+u,x+u,1}, times P_N(theta).

    In this library's layout u is the obstacle's lateral and v its
    along-path position relative to the character, so the four bumps run
    along v over the 1.5 m ahead of the character and the single one along u
    sits at the obstacle's offset from the path (where u is when the
    character is on it). Fig. 5.6 shows the bases as slices at fixed theta;
    V must depend on theta (the obstacle task's state includes it): with
    the u-v terms alone the LP cannot raise V where the character heads into
    the obstacle without breaking the constraints where it heads away, and
    the policy does not avoid (measured: 2.5 % of the episodes pass).

    Parameters
    ----------
    offset : float
        d + u, the obstacle's lateral offset from the path, m.
    theta_degree : int
        N of the P_N(theta) factor (0: Fig. 5.6's 19 terms alone).

    Returns
    -------
    directable.characters.basis.Basis
        19 (N + 1) terms per clip.
    """
    b = ch.basis
    fig56 = (b.polynomial("u", 4, scale=2.0) * b.polynomial("v", 2, scale=2.0)
             + b.gaussian("v", 0.0, 1.5, 4) * b.gaussian("u", offset, offset, 1))
    return fig56 if theta_degree == 0 else fig56 * b.polynomial("theta", theta_degree, scale=np.pi)


def obstacle_samples_near(task, per_dim, near_per_dim=None, near_ranges=None):
    """The uniform samples of an obstacle task joined with a denser grid around the obstacle.

    The uniform grid of the thesis (4 m per linear axis) puts few samples
    within the bumps that resolve V near the obstacle; a bump narrower than
    the sample spacing is larger at some successors than at every sample,
    so the LP cannot bound its coefficient (sec. 5.4 samples where the
    character goes: here, where it meets the obstacle).

    Parameters
    ----------
    task : FixedObstacle or MovingObstacle
    per_dim : int or dict
        The uniform grid (:func:`directable.characters.samples`).
    near_per_dim : int or dict, optional
        Points per variable of the second grid (None: no second grid).
    near_ranges : dict, optional
        Its (lo, hi) per linear variable, m (theta always covers [-pi, pi)).

    Returns
    -------
    (S, 4) ndarray
        Distinct samples, the clip index in column 0.
    """
    X = ch.samples(task, per_dim=per_dim)
    if near_per_dim is None:
        return X
    Y = ch.samples(task, per_dim=near_per_dim, ranges=near_ranges)
    return np.ascontiguousarray(np.unique(np.vstack([X, Y]), axis=0))


def obstacle_passes(motion, episode, start, obstacle):
    """Closest distance (m) of the pelvis' ground track to an obstacle, and
    the animation: the episode's clips synthesised from the start pose
    (x, z, theta) in the path frame, where the obstacle sits at ``obstacle``
    (x, z).

    Parameters
    ----------
    motion : MotionModel
        Synthesises the episode's clips.
    episode : Episode
        Its ``clips`` are played.
    start : (x, z, theta)
        World pose of the first clip's root frame (m, m, rad).
    obstacle : (x, z)
        The obstacle's world position, m.

    Returns
    -------
    distance : float
        Closest distance of the pelvis' ground track to the obstacle, m.
    animation : Animation
    """
    anim = motion.synthesize(episode.clips, start_pose=start)
    track = anim.frames[:, 0, :][:, [0, 2]]
    return float(np.min(np.linalg.norm(track - np.asarray(obstacle), axis=1))), anim


def fixed_obstacle(motion=None, per_dim=6, episodes=100, steps=16, seed=0, solver="highspy", sigma_O=0.5,
                   gamma_O=20.0, gamma_x=3.0, offset=0.0, obstacle_samples=3, theta_degree=2, ahead=(2.0, 3.0),
                   grid=None, bounds=None, learn=True, basis=None, near=None):
    """Fixed obstacle avoidance (FOA, Table 5.1): an obstacle ahead on the path.

    Each episode starts on or near the path (|d| <= 0.3 m, heading within
    0.2 rad of it) with the obstacle ``ahead`` metres ahead (beyond the
    sampled 2 m the value function sees it at the edge). It succeeds when
    the pelvis' continuous ground track (the synthesised animation, not only
    the clip starts) stays at least sigma_O from the obstacle and the
    character ends within 0.2 m of the path.

    Parameters
    ----------
    motion : MotionModel, optional
        Default :func:`walking_motion` (18 clips).
    per_dim : int
        LP samples per variable.
    episodes, steps : int
        Episodes and clip choices per episode.
    seed : int
        Seed of the starts.
    solver : str
        LP solver.
    sigma_O, gamma_O, gamma_x : float
        Obstacle width (m), obstacle and deviation weights. With
        gamma_x = 0.3 even the value-iteration policy passed the obstacle
        (at about 1 m) but drifted back too slowly to end within 0.2 m of
        the path (0 % of 40 episodes, 12 steps); at 3.0 it passes and
        returns in 100 % (16 steps, a 21 x 21 x 36 grid).
    offset : float
        The obstacle's lateral offset from the path, m.
    obstacle_samples : int
        Points per transition at which the obstacle is charged (see
        :class:`~directable.characters.FixedObstacle`).
    theta_degree : int
        See :func:`foa_basis`.
    ahead : (float, float)
        Range of the obstacle's initial distance ahead, m.
    grid : (int, int, int), optional
        Also run the value-iteration policy on this (u, v, theta) grid.
    learn : bool
        Learn the LP value function and run its policy (False: only greedy
        and, with ``grid``, value iteration).
    bounds : optional
        Passed to :func:`directable.characters.learn`: a box on r. A box
        that is active hides an unbounded LP rather than fixing it: the
        coefficients at the box make V meaningless between the samples
        (measured on the moving-obstacle task at 4 samples per axis: 14 %
        of r at +-1e4 and V between -2,900 and 13,000 where value iteration
        gives 0 to 30); sample densely enough instead (``near``).
    basis : directable.characters.basis.Basis, optional
        Default :func:`foa_basis` (``offset``, ``theta_degree``).
    near : dict, optional
        Extra samples where the obstacle terms live: ``near_per_dim`` and
        ``near_ranges`` of :func:`obstacle_samples_near`, a second grid
        joined to the uniform one.

    Returns
    -------
    dict
        Success rates ``value`` (when learned) and ``greedy`` (and ``grid``), their
        episodes (``value_episodes`` ...), closest distances (m,
        ``value_closest`` ...) and starts (``value_starts`` ...: (episodes,
        3) lateral offset d0 (m), obstacle distance ahead v0 (m), heading
        (rad)), ``value_function``, ``task``.
    """
    motion = motion or walking_motion()
    task = ch.FixedObstacle(motion, gamma_x=gamma_x, gamma_O=gamma_O, sigma_O=sigma_O, gamma_psi=1.0,
                            gamma_rho=1.0, offset=offset, obstacle_samples=obstacle_samples)
    X = obstacle_samples_near(task, per_dim, **(near or {}))
    vf = ch.learn(task, basis or foa_basis(offset, theta_degree), X, solver=solver, bounds=bounds) if learn else None
    straight = int(np.argmin(np.abs(motion.clips.params.turn)))
    result = {}
    policies = ([("value", ch.Controller(task, vf))] if learn else []) + [
        ("greedy", ch.Controller(task, policy="greedy"))]
    if grid is not None:
        vi = ch.value_iteration(task, {"u": grid[0], "v": grid[1], "theta": grid[2]})
        policies.append(("grid", ch.Controller(task, policy="grid", grid_values=vi)))
    for name, ctrl in policies:
        rng = np.random.default_rng(seed)
        ok, eps, closest, starts = 0, [], [], []
        for _ in range(episodes):
            d0, v0, th0 = rng.uniform(-0.3, 0.3), rng.uniform(*ahead), rng.uniform(-0.2, 0.2)
            starts.append((d0, v0, th0))
            ep = ctrl.run([straight, offset - d0, v0, th0], steps)
            dist, _ = obstacle_passes(motion, ep, (d0, 0.0, th0), (offset, v0))
            d_end = abs(offset - ep.states[-1, 1])  # d = (d + u) - u
            ok += bool(dist >= sigma_O and d_end <= 0.2)
            eps.append(ep)
            closest.append(dist)
        result[name] = ok / episodes
        result[name + "_episodes"] = eps
        result[name + "_closest"] = np.array(closest)
        result[name + "_starts"] = np.array(starts)
    result["value_function"] = vf
    result["task"] = task
    return result


def obstacle_regret(task, value_function, grid_values, starts, steps=16, alpha=0.9, pass_band=(-0.8, 0.3)):
    """Where an LP value function mis-ranks FOA's choices, measured against value iteration.

    Plays the LP policy (eq. 5.10 with ``value_function``) from each start
    and, at every decision, scores its clip with value iteration's
    Q(X, k) = c_s(X) + c_t(X, k) + alpha V_VI(X'_k): the regret is
    Q(X, k_LP) - min_k Q(X, k) (>= 0; zero where the LP picks value
    iteration's clip). The decisions are split by the obstacle's distance
    ahead v: ``approach`` (v above ``pass_band``), ``pass`` (inside it) and
    ``return`` (below it: the obstacle behind, the character going back to
    the path). V_LP and V_VI are compared at the visited states of each
    phase.

    Parameters
    ----------
    task : FixedObstacle
        The task both value functions were computed for.
    value_function : ValueFunction
        The learned V (:func:`directable.characters.learn`).
    grid_values : GridValueFunction
        Value iteration's V (:func:`directable.characters.value_iteration`).
    starts : (E, 4) array_like
        Start states (clip, u, v, theta): m, m, rad.
    steps : int
        Decisions per episode.
    alpha : float
        Discount of both value functions.
    pass_band : (float, float)
        The v interval (m) counted as passing the obstacle.

    Returns
    -------
    dict
        Per phase (``approach``, ``pass``, ``return``) a dict with
        ``decisions``; ``disagree`` (fraction where the clips differ);
        ``regret`` (mean, cost units); ``share`` (of the total regret);
        ``v_lp``, ``v_vi`` (mean V at the visited states, cost units) and
        ``corr`` (their correlation, nan under 3 decisions).
    """
    rows = []
    for s0 in np.atleast_2d(np.asarray(starts, dtype=float)):
        x = s0.copy()
        for _ in range(steps):
            succ = task.successors(x[None])[0]
            c = task.transition_costs(x[None])[0] + task.state_costs(x[None])[0]
            q = c + alpha * grid_values.value(succ)
            k = int(np.argmin(c + alpha * value_function.value(succ)))  # eq. 5.10 with the LP's V
            phase = "approach" if x[2] > pass_band[1] else ("pass" if x[2] >= pass_band[0] else "return")
            rows.append((phase, k != int(np.argmin(q)), q[k] - q.min(),
                         float(value_function.value(x[None])[0]), float(grid_values.value(x[None])[0])))
            x = succ[k]
    total = sum(r[2] for r in rows) or 1.0
    out = {}
    for phase in ("approach", "pass", "return"):
        R = [r for r in rows if r[0] == phase]
        vl, vv = np.array([r[3] for r in R]), np.array([r[4] for r in R])
        out[phase] = dict(decisions=len(R), disagree=float(np.mean([r[1] for r in R])) if R else 0.0,
                          regret=float(np.mean([r[2] for r in R])) if R else 0.0,
                          share=float(sum(r[2] for r in R) / total),
                          v_lp=float(vl.mean()) if R else float("nan"), v_vi=float(vv.mean()) if R else float("nan"),
                          corr=float(np.corrcoef(vl, vv)[0, 1]) if len(R) >= 3 and vl.std() > 0 and vv.std() > 0
                          else float("nan"))
    return out


def moa_basis():
    """A basis for moving-obstacle avoidance: bumps around the obstacle and a bilinear trend, all times P2(theta).

    The bumps (3 across, 4 over the 1.5 m ahead, sigma^2 = 0.25 m^2) must
    depend on the heading: without theta the LP cannot raise V where the
    character walks into the obstacle without breaking the constraints
    where it walks away (measured: V 0.3 instead of value iteration's 10.6
    at an obstacle 1.5 m ahead, and no avoidance).

    Returns
    -------
    directable.characters.basis.Basis
        48 terms per clip.
    """
    b = ch.basis
    return ((b.polynomial("u", 1, scale=2.0) * b.polynomial("v", 1, scale=2.0)
             + b.gaussian("u", -0.6, 0.6, 3, sigma2=0.25) * b.gaussian("v", 0.0, 1.5, 4, sigma2=0.25))
            * b.polynomial("theta", 2, scale=np.pi))


def crossing_starts(characters, clip, spacing=1.2, approach=1.5, jitter=0.1, rng=None):
    """Start poses of two groups crossing at right angles, timed so that pair m meets.

    Group A (even indices) walks +z along the lanes x = a_m, group B (odd)
    walks +x along z = a_m; both start ``approach`` m before the first lane,
    so A_m and B_m reach the crossing point (a_m, a_m) at the same time and,
    ignoring each other, collide there (the other pairs cross at least one
    lane spacing apart in time).

    Parameters
    ----------
    characters : int
        Crowd size (even: half per group).
    clip : int
        Start clip of every character.
    spacing : float
        Distance between lanes, m.
    approach : float
        Distance from the start line to the first lane, m.
    jitter : float
        Uniform noise on the start positions (+-, m).
    rng : numpy.random.Generator, optional

    Returns
    -------
    (characters, 4) ndarray
        (x, z, theta, clip) per character: m, m, rad, index.
    """
    rng = rng or np.random.default_rng(0)
    M = characters // 2
    lanes = spacing * np.arange(M) - spacing * (M - 1) / 2.0
    start = lanes[0] - approach
    starts = []
    for m in range(M):
        j = rng.uniform(-jitter, jitter, 2)
        starts.append([lanes[m] + j[0], start + j[1], 0.0, clip])           # A_m walks +z
        starts.append([start + j[1], lanes[m] - j[0], -np.pi / 2, clip])   # B_m walks +x
    return np.array(starts[:characters])


def crowd_crossing(characters=16, per_dim=5, steps=14, velocities=(-1.2, 0.0, 1.2), radius=3.0, seed=0,
                   solver="highspy", bounds=None, gamma_O=20.0, sigma_O=0.5, obstacle_samples=3, spacing=1.2):
    """Moving obstacle avoidance in a crowd on crossing courses (Fig. 5.5).

    Two groups cross at right angles, timed so that without avoidance pair
    m meets at its crossing point (:func:`crossing_starts`; the earlier
    random starts gave no close encounter without avoidance, so nothing to
    reduce). Each character
    fits a moving obstacle (position and velocity in its path frame) to the
    neighbours within ``radius`` at each of its clip transitions and avoids
    the one of highest value (:func:`directable.characters.crowd`); the
    value functions are tabulated over the obstacle velocity (u_dot, v_dot)
    on ``velocities`` x ``velocities`` and interpolated bilinearly.

    Parameters
    ----------
    characters : int
        Crowd size (half walk +z, half +x).
    per_dim : int
        LP samples per variable.
    steps : int
        Clip choices per character.
    velocities : sequence of float
        Grid of u_dot and v_dot (m/s) of the tabulated value functions.
    radius : float
        Neighbourhood radius, m.
    seed : int
        Seed of the start positions.
    solver : str
        LP solver.
    bounds : optional
        Passed to :func:`directable.characters.learn`: a box on r. With a
        moving obstacle some samples' successors leave the sampled square
        (where V sees them clamped), and at 4-5 samples per axis the LP
        leaves the bumps' coefficients unbounded: without a box
        :func:`~directable.characters.learn` then raises, naming them. An
        active box does not make V meaningful (see :func:`fixed_obstacle`).
    gamma_O, sigma_O : float
        Obstacle weight and width (m).
    obstacle_samples : int
        Points per transition at which the obstacle is charged.
    spacing : float
        Distance between lanes, m.

    Returns
    -------
    dict
        ``avoid`` and ``plain`` (CrowdResult with and without avoidance,
        on the same starts); ``table``.
    """
    motion = walking_motion(5)
    basis = moa_basis()
    grid = [(u, v) for u in velocities for v in velocities]

    def make(vel):
        return ch.MovingObstacle(motion, gamma_O=gamma_O, sigma_O=sigma_O, gamma_psi=1.0, gamma_rho=1.0,
                                 u_dot=vel[0], v_dot=vel[1], obstacle_samples=obstacle_samples)

    table = ch.tabulate(make, grid, basis, lambda t: ch.samples(t, per_dim=per_dim), parameter=("u_dot", "v_dot"),
                        solver=solver, bounds=bounds)
    rng = np.random.default_rng(seed)
    straight = int(np.argmin(np.abs(motion.clips.params.turn)))
    starts = crossing_starts(characters, straight, spacing=spacing, rng=rng)
    ctrls = [ch.Controller(make((0.0, 0.0)), table) for _ in range(characters)]
    avoid = ch.crowd(ctrls, starts, steps, radius)
    plain = ch.crowd(ctrls, starts, steps, radius, avoid=False)
    return dict(avoid=avoid, plain=plain, table=table)


def thesis_scale(per_dim=8, solver="highspy", threads=0, gait="walk", progress=False):
    """The 384-clip navigation controller of the thesis: time, memory, iterations, rows.

    The clips are the thesis's counts (18 standing, 87 slow, 124 normal, 65
    fast, 90 runs) with the torso angles -0.4, 0, 0.4 rad; the controller
    is the navigation task of one gait (the gait is switchable: one such
    controller per gait), learned from samples of that gait's clips.

    Parameters
    ----------
    per_dim : int
        LP samples per variable (the thesis used 5-8).
    solver : str
        LP solver.
    threads : int
        Threads of the transition table and the scans (0: all).
    gait : str
        The desired gait of the controller.
    progress : bool
        Print each stage's time as it finishes.

    Returns
    -------
    dict
        ``K``; ``clips_seconds`` (synthetic clips) and ``table_seconds``
        (the transition table), s; ``seconds`` and ``lp_seconds`` (the
        learning and its LP share, wall s); ``cpu_seconds`` (process CPU of
        the learning); ``iterations``; ``constraints``; ``samples``;
        ``nbytes`` (the controller's memory: its float32 runtime table,
        :attr:`~directable.characters.ValueFunction.nbytes`, bytes;
        ``nbytes_float64`` the sampled clips' rows of r in double precision,
        as the thesis counted);
        ``peak_memory_mb`` (the process' peak resident memory, MB);
        ``value_function``.
    """
    t0 = time.perf_counter()
    clips = ch.synthetic_clips(ch.synthetic_walker(), counts="thesis", turns=(-1.2, -0.6, 0, 0.6, 1.2),
                               torsos=(-0.4, 0.0, 0.4))
    t_clips = time.perf_counter() - t0
    t0 = time.perf_counter()
    motion = ch.MotionModel(clips, threads=threads)
    t_table = time.perf_counter() - t0
    if progress:
        print(f"clips {t_clips:.1f} s, transition table {t_table:.1f} s", flush=True)
    task = ch.Navigation(motion, gamma_x=0.1, gamma_psi=1.0, gamma_rho=1.0, gamma_tau=0.5, gait=gait)
    X = ch.samples(task, per_dim=per_dim, clips="gait")
    c0 = time.process_time()
    vf = ch.learn(task, navigation_basis(), X, solver=solver, threads=threads,
                  callback=(lambda it, r, n: print(f"iteration {it}: {n} new rows", flush=True)) if progress else None)
    cpu = time.process_time() - c0
    held = np.unique(X[:, 0].astype(int))
    try:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # kB on Linux
    except ImportError:  # not on every platform
        peak = float("nan")
    return dict(K=motion.K, peak_memory_mb=peak, clips_seconds=t_clips, table_seconds=t_table, seconds=vf.seconds, lp_seconds=vf.lp_seconds,
                cpu_seconds=cpu, iterations=vf.iterations, constraints=vf.n_constraints, samples=len(X),
                nbytes=vf.nbytes, nbytes_float64=int(vf.r[held].nbytes), value_function=vf)


def spinning_navigation(spins=(-2.0, 0.0, 2.0), sidesteps=tuple(np.linspace(-np.pi, np.pi, 10, endpoint=False)),
                        desired=(0.0, 1.5, 3.0), query=2.0, per_dim=24, degree=6, starts=10, steps=30, seed=0,
                        solver="highspy", gamma_psi=0.2, gamma_omega=2.0):
    """Spinning navigation (SN, Table 5.1): walking clips that spin the root
    (60 with the defaults), a desired spin omega-hat separable.

    A spinning character keeps its world direction only by stepping in a
    direction rho relative to its root that turns against the spin, so the
    clips combine every spin with side-steps all around (rho covering
    [-pi, pi)), and the controller strings them together. Steps alternate
    feet: after a left-first clip the next plays right-first, as the mirror
    image of a left-first clip, whose spin is negated. A spin is kept up
    only if the set spins both ways, so ``spins`` is symmetric (with only
    positive spins every other step can at best stop spinning: the played
    spin then missed 2 rad/s by 1.3 rad/s on average).

    One value function is learned per desired spin in ``desired`` and the
    table interpolates them (hat bases) at ``query``; that policy is compared
    with one learned at ``query`` directly and with greedy.

    Parameters
    ----------
    spins : sequence of float
        Spins of the left-first clips, rad/s (their mirrors spin the other way).
    sidesteps : sequence of float
        Leg swing directions relative to the root, rad.
    desired : sequence of float
        omega-hat of the tabulated value functions, rad/s.
    query : float
        omega-hat asked for, rad/s.
    per_dim : int
        LP samples of theta.
    degree : int
        Degree of P_N(theta).
    starts, steps : int
        Random starts and clip choices per episode.
    seed : int
        Seed of the starts.
    solver : str
        LP solver.
    gamma_psi, gamma_omega : float
        Weights of Psi and of the spin error.

    Returns
    -------
    dict
        ``K``; ``table``; mean discounted costs ``interpolated``, ``direct``,
        ``greedy`` at ``query``; ``spin_error``: mean |omega - omega-hat|
        (rad/s) of the clips the interpolated policy plays; ``spin``: their
        mean spin (rad/s); ``direction_error``: mean |theta + rho| (rad)
        along its episodes.
    """
    motion = ch.MotionModel(ch.synthetic_clips(ch.synthetic_walker(), gaits=("walk",), turns=(0.0,), spins=spins,
                                               sidesteps=sidesteps))

    def make(w):
        return ch.SpinningNavigation(motion, gamma_psi=gamma_psi, gamma_rho=1.0, gamma_omega=gamma_omega, spin=w)

    basis = ch.basis.polynomial("theta", degree, scale=np.pi)
    table = ch.tabulate(make, list(desired), basis, lambda t: ch.samples(t, per_dim=per_dim), solver=solver)
    task = make(query)
    direct = ch.learn(task, basis, ch.samples(task, per_dim=per_dim), solver=solver)
    rng = np.random.default_rng(seed)
    x0 = [[rng.integers(task.K), rng.uniform(-np.pi, np.pi)] for _ in range(starts)]
    spin = motion.clips.params.spin
    rho = motion.clips.params.rho
    out = {"K": motion.K, "table": table}
    for name, ctrl in (("interpolated", ch.Controller(task, table)), ("direct", ch.Controller(task, direct)),
                       ("greedy", ch.Controller(task, policy="greedy"))):
        eps = [ctrl.run(s, steps) for s in x0]
        out[name] = float(np.mean([e.discounted_cost for e in eps]))
        if name == "interpolated":
            clips = np.concatenate([e.clips[1:] for e in eps])
            thetas = np.concatenate([e.states[1:, 1] for e in eps])
            out["spin_error"] = float(np.mean(np.abs(spin[clips] - query)))
            out["spin"] = float(np.mean(spin[clips]))
            out["direction_error"] = float(np.mean(np.abs((thetas + rho[clips] + np.pi) % (2 * np.pi) - np.pi)))
    return out


def torso_separable(torsos=(-0.4, 0.0, 0.4), desired=(-0.4, 0.0, 0.4), query=0.2, per_dim=8, starts=10, steps=30,
                    seed=0, solver="highspy"):
    """Navigation with the desired torso angle tau-hat separable (Table 5.1):
    value functions learned at ``desired`` torso angles, interpolated at
    ``query``, against one learned at ``query`` directly.

    Parameters
    ----------
    torsos : sequence of float
        Torso angles of the clips, rad.
    desired : sequence of float
        tau-hat of the tabulated value functions, rad.
    query : float
        tau-hat asked for, rad.
    per_dim : int
        LP samples per variable.
    starts, steps : int
        Random starts and clip choices per episode.
    seed : int
        Seed of the starts.
    solver : str
        LP solver.

    Returns
    -------
    dict
        mean discounted costs ``interpolated`` and ``direct``; ``torso``: the
        mean torso angle of the clips the interpolated policy plays;
        ``table``.
    """
    motion = ch.MotionModel(ch.synthetic_clips(ch.synthetic_walker(), gaits=("walk",), turns=(-0.9, -0.3, 0.3, 0.9),
                                               torsos=torsos))

    def make(tau):
        return ch.Navigation(motion, gamma_x=0.1, gamma_psi=1.0, gamma_rho=1.0, gamma_tau=2.0, torso=tau)

    basis = navigation_basis()
    table = ch.tabulate(make, list(desired), basis, lambda t: ch.samples(t, per_dim=per_dim), parameter="torso",
                        solver=solver)
    task = make(query)
    direct = ch.learn(task, basis, ch.samples(task, per_dim=per_dim), solver=solver)
    x0 = _random_starts(task, starts, seed)
    eps = [ch.Controller(task, table).run(s, steps) for s in x0]
    out = {"table": table, "interpolated": float(np.mean([e.discounted_cost for e in eps])),
           "direct": float(np.mean([ch.Controller(task, direct).run(s, steps).discounted_cost for s in x0]))}
    out["torso"] = float(np.mean(motion.clips.params.torso[np.concatenate([e.clips[1:] for e in eps])]))
    return out
