"""Characters (Treuille thesis ch. 5): clips, blending, transition table, tasks, bases, learning, value iteration."""
import threading

import numpy as np
import pytest

import directable.characters as ch
from reference import characters as ref

WJ_L_ANKLE, WJ_R_ANKLE = 13, 17


@pytest.fixture(scope="module")
def walker():
    return ch.synthetic_walker()


@pytest.fixture(scope="module")
def clips(walker):
    return ch.synthetic_clips(walker, gaits=("slow", "walk", "run"), turns=(-0.8, 0.0, 0.8))


@pytest.fixture(scope="module")
def motion(clips):
    return ch.MotionModel(clips)


@pytest.fixture(scope="module")
def walk18(walker):
    clips = ch.synthetic_clips(walker, gaits=("walk",), turns=np.linspace(-1.2, 1.2, 9))
    return ch.MotionModel(clips)


# ----------------------------------------------------------------- skeleton and clips

def test_walker_and_mirror_map(walker):
    assert 15 <= walker.joints <= 20
    m = walker.mirror
    assert np.array_equal(m[m], np.arange(walker.joints))
    assert m[WJ_L_ANKLE] == WJ_R_ANKLE


def test_clip_layout(clips):
    assert clips.K == 18 and len(clips.poses) == 18
    assert clips.constraint_frames.shape == (18, 2) and clips.stance_foot.shape == (18, 2)
    p = clips.params
    assert set(p) == {"speed", "turn", "rho", "torso", "spin"} and p.speed.shape == (18,)
    assert np.all(p.speed[clips.gait == 4] > p.speed[clips.gait == 1].max())  # runs faster than slow walks
    mo = clips.mirror_of
    assert np.array_equal(mo[mo], np.arange(18))
    assert np.allclose(p.turn[mo], -p.turn)


def test_thesis_counts(walker):
    cs = ch.synthetic_clips(walker, counts="thesis", turns=(-1.0, 0.0, 1.0))
    assert cs.K == 384
    counts = np.bincount(cs.gait, minlength=5)
    assert counts.tolist() == [18, 87, 124, 65, 90]
    assert np.all(cs.mirror_of >= 0)


def test_stance_foot_exactly_fixed_in_each_half(clips):
    for k in range(clips.K):
        P = clips.poses[k]
        a, b = clips.constraint_frames[k]
        h = (a + b) // 2
        for (lo, hi), foot in zip(((0, h), (h, len(P) - 1)), clips.stance_foot[k]):
            assert np.max(np.abs(P[lo:hi + 1, foot] - P[a if lo == 0 else b, foot])) == 0.0


def test_mirroring_twice_is_identity(clips):
    P = clips.poses[3]
    assert np.array_equal(ch.mirror_poses(clips.skeleton, ch.mirror_poses(clips.skeleton, P)), P)
    # the mirror of a synthetic clip is its partner in the set
    assert np.allclose(clips.mirrored(0), clips.poses[clips.mirror_of[0]], atol=1e-12)


def test_poses_are_views(clips):
    P = clips.poses[0]
    assert not P.flags.writeable
    assert np.shares_memory(P, clips.poses[0])


def test_clipset_from_arrays_round_trip(clips):
    p = clips.params
    again = ch.ClipSet(list(clips.poses), clips.constraint_frames, clips.stance_foot, clips.gait, dict(p),
                       mirror_of=clips.mirror_of)
    assert again.K == clips.K
    assert np.array_equal(again.poses[5], clips.poses[5])


# ----------------------------------------------------------------- blending and the transition table

def test_blend_continuous_at_both_ends(motion, rng):
    for _ in range(10):
        c, n = rng.integers(motion.K, size=2)
        blended, a, b = motion.blend(c, n)
        assert np.max(np.abs(blended[0] - a[0])) < 1e-12
        assert np.max(np.abs(blended[-1] - b[-1])) < 1e-12


def test_synthesis_is_foot_skate_free(motion, rng):
    seq = rng.integers(motion.K, size=50)
    anim = motion.synthesize(seq, start_pose=(1.0, -2.0, 0.3))
    F = anim.frames.shape[0]
    assert anim.frames.shape[1:] == (19, 3) and anim.contact_foot.shape == (F,) and anim.clip_of_frame.shape == (F,)
    foot = anim.contact_foot
    starts = np.flatnonzero(np.r_[True, foot[1:] != foot[:-1]])
    ends = np.r_[starts[1:], F]
    assert len(starts) == 51  # C_out and the next C_in share their plant
    for s, e in zip(starts, ends):
        pos = anim.frames[s:e, foot[s]]
        assert np.max(np.abs(pos - pos[0])) < 1e-12
    # no jump anywhere: consecutive frames move less than a fast step
    assert np.max(np.linalg.norm(np.diff(anim.frames, axis=0), axis=2)) < 0.35


def test_transition_table_matches_numpy(motion, clips, rng):
    tab = motion.transition_table()
    for key in ("dx", "dz", "dtheta", "dt", "psi", "next_clip"):
        assert tab[key].shape == (motion.K, motion.K)
    sk = clips.skeleton
    for _ in range(10):
        c, n = (int(v) for v in rng.integers(motion.K, size=2))
        A = np.asarray(clips.poses[c])
        foot = clips.stance_foot[c, 1]
        B = np.asarray(clips.poses[n])
        if clips.stance_foot[n, 0] != foot:
            B = ref.mirror(B, sk.mirror)
            assert tab["next_clip"][c, n] == clips.mirror_of[n]
        toe = foot + 1
        dx, dz, dth, dur, psi = ref.transition(A, B, clips.constraint_frames[c], clips.constraint_frames[n], foot,
                                               toe, clips.dt, np.ones(19), 0.01)
        got = [tab[k][c, n] for k in ("dx", "dz", "dtheta", "dt", "psi")]
        assert np.allclose(got, [dx, dz, dth, dur, psi], rtol=1e-10, atol=1e-12)


def test_composed_transitions_reproduce_root_trajectory(motion, rng):
    seq = rng.integers(motion.K, size=30)
    anim = motion.synthesize(seq, start_pose=(0.5, 1.0, -0.4))
    tab = motion.transition_table()
    x, z, th = 0.5, 1.0, -0.4
    clip = int(anim.played[0])
    for i in range(1, len(seq)):
        n = int(seq[i])
        c_, s_ = np.cos(th), np.sin(th)
        x, z, th = x + c_ * tab["dx"][clip, n] - s_ * tab["dz"][clip, n], \
            z + s_ * tab["dx"][clip, n] + c_ * tab["dz"][clip, n], th + tab["dtheta"][clip, n]
        clip = int(tab["next_clip"][clip, n])
        assert clip == anim.played[i]
        assert np.allclose(anim.roots[i], [x, z, th], atol=1e-10)
    # and the frames agree with the clip poses placed at those roots
    i = len(seq) - 1
    last = np.asarray(motion.clips.poses[anim.played[i]])[-1]
    assert np.allclose(anim.frames[-1], ref.rot(th, last) + np.array([x, 0, z]), atol=1e-10)


def test_transition_table_threads_agree(clips):
    a = ch.MotionModel(clips, threads=1).transition_table()
    b = ch.MotionModel(clips, threads=2).transition_table()
    for k in a:
        assert np.array_equal(a[k], b[k])


# ----------------------------------------------------------------- tasks

def test_navigation_successors_and_costs_match_numpy(motion, rng):
    task = ch.Navigation(motion, gamma_x=0.3, gamma_psi=0.7, gamma_rho=1.1, gait="walk")
    assert task.variables == ("d", "theta")
    X = np.c_[rng.integers(motion.K, size=20), rng.uniform(-2, 2, 20), rng.uniform(-np.pi, np.pi, 20)]
    S = task.successors(X)
    assert S.shape == (20, motion.K, 3)
    cost = task.transition_costs(X) + task.state_costs(X)[:, None]
    tab = motion.transition_table()
    gait_ok = motion.clips.gait == 2
    S_ref, c_ref = ref.navigation(tab, motion.clips.params.rho, gait_ok, 0.3, 0.7, 1.1, X)
    assert np.allclose(S, S_ref, atol=1e-12)
    assert np.array_equal(np.isinf(cost), np.isinf(c_ref))
    fin = np.isfinite(c_ref)
    assert np.allclose(cost[fin], c_ref[fin], rtol=1e-12)


def test_obstacle_tasks_move_the_obstacle(walk18):
    foa = ch.FixedObstacle(walk18, offset=0.5)
    moa = ch.MovingObstacle(walk18, u_dot=0.3, v_dot=-0.2)
    X = np.array([[0, 0.2, 1.5, 0.1]])
    tab = walk18.transition_table()
    for task, vel in ((foa, (0, 0)), (moa, (0.3, -0.2))):
        S = task.successors(X)[0]
        c, s = np.cos(0.1), np.sin(0.1)
        wx = c * tab["dx"][0] - s * tab["dz"][0]
        wz = s * tab["dx"][0] + c * tab["dz"][0]
        assert np.allclose(S[:, 1], 0.2 + vel[0] * tab["dt"][0] - wx)
        assert np.allclose(S[:, 2], 1.5 + vel[1] * tab["dt"][0] - wz)
    # FOA: d + u is constant, so |d| = |offset - u|
    assert np.isclose(foa.state_costs(X)[0], 0.1 * abs(0.5 - 0.2) + 10 * np.exp(-(0.2 ** 2 + 1.5 ** 2) / 0.25))


def test_obstacle_charged_along_the_transition(walk18):
    """obstacle_samples = m adds the obstacle term at m - 1 points of the chord to the next state."""
    X = np.array([[0, 0.2, 0.9, 0.1], [3, -0.4, 0.3, -2.0]])
    tab = walk18.transition_table()
    for cls, kw, vel in ((ch.FixedObstacle, {"offset": 0.3}, (0.0, 0.0)),
                         (ch.MovingObstacle, {"u_dot": 0.3, "v_dot": -0.5}, (0.3, -0.5))):
        one = cls(walk18, gamma_O=7.0, sigma_O=0.5, **kw)
        three = cls(walk18, gamma_O=7.0, sigma_O=0.5, obstacle_samples=3, **kw)
        extra = three.transition_costs(X) - one.transition_costs(X)
        S = one.successors(X)
        for i, x in enumerate(X):
            du, dv = S[i, :, 1] - x[1], S[i, :, 2] - x[2]  # the obstacle's move relative to the character
            want = sum(7.0 * np.exp(-((x[1] + f * du) ** 2 + (x[2] + f * dv) ** 2) / 0.25) for f in (1 / 3, 2 / 3))
            assert np.allclose(extra[i], want, rtol=1e-12, atol=1e-14)
        assert np.array_equal(three.successors(X), S) and np.array_equal(three.state_costs(X), one.state_costs(X))
    with pytest.raises(ValueError, match="obstacle_samples"):
        ch.FixedObstacle(walk18, obstacle_samples=0)


def test_scan_matches_numpy_and_the_decision(walk18, rng):
    """The learner's scan (successors by variable, r laid out per row of next clips) picks the
    NumPy argmin of eq. 5.10, and the same clip as the runtime decision, for every sample."""
    from directable import _core
    task = ch.Navigation(walk18, gamma_x=0.1, gamma_psi=1.0, gamma_rho=1.0)
    phi = ch.basis.polynomial("d", 2, scale=2.0) * ch.basis.polynomial("theta", 4, scale=np.pi)
    X = ch.samples(task, per_dim=7)
    r = rng.normal(size=(task.K, phi.size))
    problem = _core.DecisionProblem(task._core, phi._core(task))
    best = _core.ValueLearning(problem, X, 0.9).best_clips(r, 1)
    S, cost = ref.navigation(walk18.transition_table(), walk18.clips.params.rho, np.ones(task.K, bool), 0.1, 1.0,
                             1.0, X)
    f = ref.features(S.reshape(-1, 3), (2, 4), (2.0, np.pi), (1, 2)).reshape(len(X), task.K, -1)
    q = cost + 0.9 * np.einsum("skb,skb->sk", f, r[S[..., 0].astype(int)])
    # asking for a clip or its mirror image plays the same clip: exact ties, so compare the minimum
    picked = q[np.arange(len(X)), best]
    assert np.allclose(picked, q.min(axis=1), rtol=1e-12, atol=1e-12)
    assert np.mean(best == np.argmin(q, axis=1)) > 0.95
    # an obstacle task (the value function sees (u, v) clamped) through both paths
    foa = ch.FixedObstacle(walk18, gamma_O=10.0, sigma_O=0.5, obstacle_samples=2)
    psi = ch.basis.polynomial("u", 2, scale=2.0) * ch.basis.polynomial("v", 2, scale=2.0) \
        * ch.basis.polynomial("theta", 2, scale=np.pi) + ch.basis.gaussian("v", 0.0, 1.5, 3)
    Y = ch.samples(foa, per_dim=4)
    r = rng.normal(size=(foa.K, psi.size))
    pr = _core.DecisionProblem(foa._core, psi._core(foa))
    scan = _core.ValueLearning(pr, Y, 0.9).best_clips(r, 2)
    one = np.array([pr.choose("value", r, None, 0.9, y) for y in Y])
    assert np.array_equal(scan, one)


def test_spinning_navigation(walker):
    cs = ch.synthetic_clips(walker, gaits=("walk",), turns=(0.0,), spins=(-2.0, 0.0, 2.0))
    motion = ch.MotionModel(cs)
    task = ch.SpinningNavigation(motion, gamma_psi=0.0, gamma_rho=0.0, spin=2.0)
    assert task.variables == ("theta",)
    c = task.transition_costs(np.array([[0, 0.0]]))[0]
    spin = cs.params.spin[motion.transition_table()["next_clip"][0]]  # the clip that plays
    assert np.all(c[spin == 2.0] < c[spin == -2.0])


# ----------------------------------------------------------------- bases and samples

def test_basis_evaluation_matches_numpy(rng):
    phi = ch.basis.polynomial("d", 2, scale=2.0) * ch.basis.polynomial("theta", 4, scale=np.pi)
    X = np.c_[np.zeros(7), rng.uniform(-2, 2, 7), rng.uniform(-3, 3, 7)]
    got = phi.evaluate(X)
    assert got.shape == (7, 15) and phi.size == 15
    assert np.allclose(got, ref.features(X, (2, 4), (2.0, np.pi), (1, 2)), atol=1e-13)
    g = ch.basis.gaussian("u", 0.0, -1.5, 4, sigma2=2.0)
    u = X[:, 1:2]
    centres = np.linspace(0.0, -1.5, 4)
    assert np.allclose(g.evaluate(X[:, :2]), np.exp(-(u - centres) ** 2 / 2.0))
    assert (phi + g).size == 19 and len((phi + g).term_names) == 19


def test_legendre_and_monomial_spans_are_equal(rng):
    phi = ch.basis.polynomial("theta", 6, scale=np.pi) * ch.basis.polynomial("d", 2, scale=2.0)
    X = np.c_[np.zeros(200), rng.uniform(-3, 3, 200), rng.uniform(-2, 2, 200)]
    L = phi.evaluate(X)
    M = phi.evaluate(X, monomial=True)
    coef = np.linalg.lstsq(L, M, rcond=None)[0]
    assert np.max(np.abs(L @ coef - M)) < 1e-10
    assert np.linalg.cond(L) < np.linalg.cond(M)


def test_samples_grid(walk18):
    task = ch.Navigation(walk18)
    X = ch.samples(task, per_dim=4)
    assert X.shape == (18 * 16, 3)
    assert set(np.unique(X[:, 2])) == set(np.linspace(-np.pi, np.pi, 4, endpoint=False))
    assert X[:, 1].min() == -2 and X[:, 1].max() == 2
    half = ch.samples(task, per_dim=4, drop=0.5, seed=1)
    assert len(half) == len(X) // 2


# ----------------------------------------------------------------- learning and value iteration

@pytest.fixture(scope="module")
def small_nav(walker):
    clips = ch.synthetic_clips(walker, gaits=("walk",), turns=(-1.0, 0.0, 1.0))
    motion = ch.MotionModel(clips)
    return ch.Navigation(motion, gamma_x=0.2, gamma_psi=0.5, gamma_rho=1.0)


def _nav_ref(task):
    tab = task.motion.transition_table()
    rho = task.motion.clips.params.rho
    ok = np.ones(task.K, bool)
    p = task.params
    return lambda X: ref.navigation(tab, rho, ok, p["gamma_x"], p["gamma_psi"], p["gamma_rho"], X)


def test_learn_matches_numpy_alp(small_nav):
    phi = ch.basis.polynomial("d", 1, scale=2.0) * ch.basis.polynomial("theta", 2, scale=np.pi)
    X = ch.samples(small_nav, per_dim=5)
    vf = ch.learn(small_nav, phi, X, alpha=0.8, solver="scipy", bounds=1e4)
    feats = lambda S: ref.features(S, (1, 2), (2.0, np.pi), (1, 2))  # noqa: E731
    r, iters, rows = ref.alp(_nav_ref(small_nav), feats, X, small_nav.K, 0.8)
    assert vf.converged
    # the LP optimum's objective is unique (the argmin may differ at ties)
    c = np.zeros_like(r)
    for s in range(len(X)):
        c[int(X[s, 0])] += feats(X[s:s + 1])[0]
    assert np.isclose(np.sum(c * vf.r), np.sum(c * r), rtol=1e-6)
    assert vf.pairs.shape == (vf.n_constraints, 2)
    assert sum(vf.history) == vf.n_constraints and vf.history[-1] == 0
    assert vf.nbytes == vf.r32.nbytes + vf.clips.nbytes and vf.r32.dtype == np.float32


def test_highspy_warm_start_matches_scipy(small_nav):
    pytest.importorskip("highspy")
    phi = ch.basis.polynomial("d", 2, scale=2.0) * ch.basis.polynomial("theta", 4, scale=np.pi)
    X = ch.samples(small_nav, per_dim=6)
    a = ch.learn(small_nav, phi, X, solver="highspy")
    b = ch.learn(small_nav, phi, X, solver="scipy")
    assert a.solver == "highspy" and b.solver == "scipy"
    obj = lambda v: np.sum(v.value(X))  # noqa: E731
    assert np.isclose(obj(a), obj(b), rtol=1e-6)


def test_learned_value_is_a_lower_bound_on_samples(small_nav):
    """The LP's constraints hold at every pair of L."""
    phi = ch.basis.polynomial("d", 2, scale=2.0) * ch.basis.polynomial("theta", 4, scale=np.pi)
    X = ch.samples(small_nav, per_dim=6)
    vf = ch.learn(small_nav, phi, X, solver="scipy")
    S = small_nav.successors(X)
    cost = small_nav.transition_costs(X) + small_nav.state_costs(X)[:, None]
    s, k = vf.pairs[:, 0], vf.pairs[:, 1]
    lhs = vf.value(X[s]) - 0.9 * vf.value(S[s, k])
    assert np.all(lhs <= cost[s, k] + 1e-6)


def test_value_iteration_matches_numpy(small_nav):
    vi = ch.value_iteration(small_nav, {"d": 9, "theta": 12}, alpha=0.8, tol=1e-10)
    V, sweeps = ref.value_iteration(_nav_ref(small_nav), small_nav.K, vi.axes, (False, True), 0.8, tol=1e-10)
    assert vi.values.shape == (small_nav.K, 9, 12)
    assert np.max(np.abs(vi.values - V)) < 1e-7
    assert vi.sweeps < sweeps  # policy iteration needs far fewer full sweeps


def test_learned_policy_close_to_value_iteration(small_nav, rng):
    phi = ch.basis.polynomial("d", 2, scale=2.0) * ch.basis.polynomial("theta", 6, scale=np.pi)
    vf = ch.learn(small_nav, phi, ch.samples(small_nav, per_dim=8), solver="scipy")
    vi = ch.value_iteration(small_nav, {"d": 21, "theta": 36})
    costs = {"value": 0.0, "grid": 0.0}
    for _ in range(10):
        x0 = [rng.integers(small_nav.K), rng.uniform(-1, 1), rng.uniform(-np.pi, np.pi)]
        costs["value"] += ch.Controller(small_nav, vf).run(x0, 30).discounted_cost
        costs["grid"] += ch.Controller(small_nav, policy="grid", grid_values=vi).run(x0, 30).discounted_cost
    assert costs["value"] <= 1.25 * costs["grid"]
    # on the grid the learned V is close to the tabulated one (relative)
    G = np.stack(np.meshgrid(np.arange(small_nav.K), vi.axes[0][5:16], vi.axes[1], indexing="ij"), -1).reshape(-1, 3)
    err = np.linalg.norm(vf.value(G) - vi.value(G)) / np.linalg.norm(vi.value(G))
    assert err < 0.5  # a 15-term basis against a 21 x 36 grid: the policies, not the values, must agree


def test_float32_runtime_table(small_nav, rng):
    """The controller decides with r rounded to float32, stored for the clips with coefficients only."""
    phi = ch.basis.polynomial("d", 2, scale=2.0) * ch.basis.polynomial("theta", 4, scale=np.pi)
    vf = ch.learn(small_nav, phi, ch.samples(small_nav, per_dim=5), solver="scipy")
    held = np.flatnonzero(np.any(vf.r != 0, axis=1))
    assert np.array_equal(vf.clips, held)
    assert vf.nbytes == held.size * phi.size * 4 + vf.clips.nbytes < vf.r.nbytes
    np.testing.assert_array_equal(vf.runtime_r()[held], vf.r[held].astype(np.float32))
    assert not np.any(np.delete(vf.runtime_r(), held, axis=0))
    # the bound on |V - V32| holds at random states of the ranges (and is not vacuous)
    S = np.column_stack([rng.integers(small_nav.K, size=500), rng.uniform(-2, 2, 500), rng.uniform(-np.pi, np.pi, 500)])
    problem = vf.problem()
    dv = np.abs(problem.values(vf.runtime_r(), S) - vf.value(S))
    eps = vf.value_error_bound
    assert np.max(dv) <= eps and 0 < eps < 1e-5 * np.max(np.abs(vf.value(S)))
    # every float32 decision is optimal under the double r to within 2 alpha eps
    ctrl = ch.Controller(small_nav, vf)
    for _ in range(5):
        x0 = [held[rng.integers(held.size)], rng.uniform(-1, 1), rng.uniform(-np.pi, np.pi)]
        ep = ctrl.run(x0, 20)
        for t in range(20):
            x = ep.states[t][None, :]
            q = small_nav.transition_costs(x)[0] + 0.9 * vf.value(small_nav.successors(x)[0])
            assert q[int(ep.clips[t + 1])] <= np.min(q) + 2 * 0.9 * eps + 1e-12


def test_unbounded_lp_is_explained(small_nav):
    # after one iteration the few pairs of L leave a direction of r free
    phi = ch.basis.polynomial("d", 1, scale=2.0) * ch.basis.polynomial("theta", 2, scale=np.pi)
    X = ch.samples(small_nav, per_dim=5)
    with pytest.raises(ValueError, match=r"unbounded.*basis terms \[.*\].*constant term.*bounds="):
        ch.learn(small_nav, phi, X, alpha=0.8, solver="scipy", max_iterations=1)
    vf = ch.learn(small_nav, phi, X, alpha=0.8, solver="scipy", max_iterations=1, bounds=100.0)
    assert np.all(np.isfinite(vf.r)) and np.max(np.abs(vf.r)) <= 100.0


def test_infeasible_lp_is_explained(small_nav):
    phi = ch.basis.polynomial("d", 0)
    with pytest.raises(ValueError, match="infeasible.*samples"):
        ch.learn(small_nav, phi, ch.samples(small_nav, per_dim=3), solver="scipy", bounds=(1e3, 1e4))


def test_controller_threads_agree(small_nav):
    phi = ch.basis.polynomial("d", 2, scale=2.0) * ch.basis.polynomial("theta", 4, scale=np.pi)
    vf = ch.learn(small_nav, phi, ch.samples(small_nav, per_dim=5), solver="scipy")
    ctrl = ch.Controller(small_nav, vf)
    x0 = [1, 0.3, 2.0]
    want = ctrl.run(x0, 40)
    out = [None] * 4

    def go(i):
        out[i] = ctrl.run(x0, 40)

    ts = [threading.Thread(target=go, args=(i,)) for i in range(4)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    for o in out:
        assert np.array_equal(o.clips, want.clips) and np.array_equal(o.step_costs, want.step_costs)
