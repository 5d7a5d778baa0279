"""Near-optimal character animation (Treuille thesis ch. 5; Treuille, Lee &
Popovic 2007): clips blended without foot-skate, a low-dimensional value
function learned by linear programming, and real-time clip choice.

    import directable.characters as ch
    clips = ch.synthetic_clips(ch.synthetic_walker(), gaits=("walk",))
    motion = ch.MotionModel(clips)
    task = ch.Navigation(motion, gamma_x=0.1, gamma_psi=1.0, gamma_rho=1.0)
    phi = ch.basis.polynomial("d", 2, scale=2) * ch.basis.polynomial("theta", 4, scale=np.pi)
    vf = ch.learn(task, phi, ch.samples(task, per_dim=8))
    episode = ch.Controller(task, vf).run([0, 0.5, 1.0], 40, events=[(20, {"path_angle": np.pi})])

Conventions (eq. 5.2 read literally): the ground plane is (x, z) with y up; a
clip's root faces +z at theta = 0 and x is lateral; headings rotate (x, z) ->
(cos x - sin z, sin x + cos z). A task's desired path runs along +z, so
Navigation's d is the thesis's x (the lateral offset from the path) and theta
the root heading relative to the path; the obstacle tasks' (u, v) is the
obstacle's position relative to the character, lateral and along the path.
Lengths in metres, angles in radians, durations in seconds.

Clips are one walk cycle each, C_in then C_out, with the constraint frames at
mid-stance. Blending C -> C' plays C' mirrored when its C'_in plants the other
foot; when the set holds C''s mirror image (``mirror_of``; synthetic sets are
generated in mirror pairs) that clip is what the state holds next, so the
decision process is exact.
"""
from __future__ import annotations

import concurrent.futures
import time
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from .. import _core
from .._validate import (as_float_array, check_size, finite_array, finite_real, index_array, integer, iterable,
                         progress_callback, real)
from . import basis
from ._bvh import BVHClip, load_bvh, write_bvh
from ._lp import LPStatus, make_solver, require_highspy

__all__ = ["Skeleton", "synthetic_walker", "synthetic_clips", "ClipSet", "ClipParams", "MotionModel", "Animation",
           "Navigation", "SpinningNavigation", "FixedObstacle", "MovingObstacle", "basis", "samples", "learn",
           "ValueFunction", "value_iteration", "GridValueFunction", "tabulate", "ValueFunctionTable", "Controller",
           "Episode", "crowd", "CrowdResult", "mirror_poses", "GAITS", "THESIS_COUNTS", "load_bvh", "write_bvh",
           "BVHClip"]

Skeleton = _core.CharacterSkeleton
Animation = _core.CharacterAnimation

#: The synthetic gaits, slowest first.
GAITS = ("stand", "slow", "walk", "fast", "run")
#: The thesis's clip counts per gait (sec. 5.4): 384 clips.
THESIS_COUNTS = {"stand": 18, "slow": 87, "walk": 124, "fast": 65, "run": 90}
_PARAMS = ("speed", "turn", "rho", "torso", "spin")


def synthetic_walker():
    """The synthetic biped: 19 joints (pelvis, spine, chest, neck, head, two
    arms of shoulder/elbow/hand, two legs of hip/knee/ankle/toe), left = +x.

    Returns
    -------
    Skeleton
    """
    return _core.synthetic_walker()


class ClipParams(dict):
    """Per-clip parameters, (K,) arrays by name and as attributes: speed (m/s),
    turn (rad per cycle), rho (motion direction relative to the root, rad),
    torso (rad), spin (rad/s)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


class ClipSet:
    """A set of K motion clips (thesis sec. 5.1), validated in C++.

    Parameters
    ----------
    poses : list of (m_k, J, 3) array_like
        Joint positions of each clip in its root frame (metres).
    constraint_frames : (K, 2) int array_like
        Mid-stance frame of C_in and of C_out (a < b < m_k).
    stance_foot : (K, 2) int array_like
        Joint planted in C_in and in C_out (mirror partners).
    gait : (K,) ints or gait names
    params : dict of (K,) arrays or (K, 5) array_like
        speed, turn, rho, torso, spin (see :class:`ClipParams`).
    skeleton : Skeleton, optional
        The skeleton of the poses (default: :func:`synthetic_walker`).
    mirror_of : (K,) ints, optional
        The clip that is each clip's mirror image (-1: none).
    dt : float
        Frame time, s.
    foot_tolerance : float
        How far (m) a stance foot may move during its plant.
    contacts : (K, 4) ints, optional
        First and last frame of the C_in and C_out plants (default: the two
        half-cycles, split at (a + b) / 2).
    gait_names : sequence of str, optional
    """

    def __init__(self, poses, constraint_frames, stance_foot, gait, params, skeleton=None, mirror_of=None,
                 dt=1.0 / 30.0, foot_tolerance=1e-6, contacts=None, gait_names=None):
        if poses is None or isinstance(poses, np.ndarray) and poses.ndim != 3 and poses.dtype != object:
            raise ValueError("poses must be a list of (m_k, J, 3) arrays, one per clip")
        poses = [as_float_array(p, f"poses[{k}]")
                 for k, p in enumerate(iterable(poses, "poses", "a list of (m_k, J, 3) arrays"))]
        if gait is None:
            raise ValueError("gait must be a (K,) array of gait indices or names, got None")
        gait = np.asarray(gait)
        if gait.ndim != 1:
            raise ValueError(f"gait must be a (K,) array of gait indices or names, got shape {gait.shape}")
        names = gait.dtype.kind == "U" or (gait.dtype.kind == "O" and all(isinstance(g, str) for g in gait.tolist()))
        gait = gait.tolist() if names else index_array(gait, "gait", "(K,)").tolist()
        if gait_names is None:
            gait_names = list(GAITS) if all(isinstance(g, str) for g in gait) or not gait else \
                [str(i) for i in range(max(int(g) for g in gait) + 1)]
            if gait and all(isinstance(g, (int, np.integer)) for g in gait) and max(gait) < len(GAITS):
                gait_names = list(GAITS)
        gait_names = list(gait_names)
        gait_ids = []
        for g in gait:
            if isinstance(g, str):
                if g not in gait_names:
                    raise ValueError(f"gait: unknown gait {g!r}, expected one of {gait_names}")
                gait_ids.append(gait_names.index(g))
            else:
                gait_ids.append(int(g))
        if isinstance(params, dict):
            missing = [p for p in _PARAMS if p not in params]
            if missing:
                raise ValueError(f"params must give {_PARAMS}, missing {missing}")
            params = np.stack([as_float_array(params[p], f"params[{p!r}]") for p in _PARAMS], axis=1)
        params = as_float_array(params, "params")
        if skeleton is None:
            skeleton = synthetic_walker()
        self._core = _core.CharacterClipSet(skeleton, poses, constraint_frames, stance_foot, gait_ids, gait_names,
                                            params, None if mirror_of is None else [int(m) for m in mirror_of],
                                            real(dt, "dt"), real(foot_tolerance, "foot_tolerance"), contacts)

    @classmethod
    def _wrap(cls, core):
        self = cls.__new__(cls)
        self._core = core
        return self

    K = property(lambda self: self._core.clips, doc="number of clips")
    skeleton = property(lambda self: self._core.skeleton, doc="the Skeleton")
    poses = property(lambda self: self._core.poses, doc="list of (m_k, J, 3) read-only views, root frame, m")
    constraint_frames = property(lambda self: self._core.constraint_frames, doc="(K, 2) mid-stance frames")
    stance_foot = property(lambda self: self._core.stance_foot, doc="(K, 2) planted joint of C_in, C_out")
    gait = property(lambda self: self._core.gait, doc="(K,) gait index into gait_names")
    gait_names = property(lambda self: tuple(self._core.gait_names), doc="gait names")
    mirror_of = property(lambda self: self._core.mirror_of, doc="(K,) mirror-image clip, -1: none")
    dt = property(lambda self: self._core.dt, doc="frame time, s")

    @property
    def params(self):
        """:class:`ClipParams` of (K,) arrays: speed, turn, rho, torso, spin."""
        P = self._core.param_matrix
        return ClipParams({name: P[:, i].copy() for i, name in enumerate(_PARAMS)})

    def mirrored(self, k):
        """Clip k reflected through the sagittal plane, left and right swapped.

        Parameters
        ----------
        k : int
            Clip index.

        Returns
        -------
        (m_k, J, 3) ndarray
            Joint positions in the clip's root frame, m.
        """
        k = integer(k, "k")
        if not 0 <= k < len(self.poses):
            raise ValueError(f"k must be a clip index in [0, {len(self.poses)}), got {k}")
        return mirror_poses(self.skeleton, self.poses[k])

    def gait_index(self, gait):
        """Gait indices of a name, an index, or a collection of them.

        Parameters
        ----------
        gait : str, int, sequence of them, or None
            Gait names (``gait_names``) or indices.

        Returns
        -------
        list of int or None
            None when ``gait`` is None.
        """
        if gait is None:
            return None
        items = [gait] if isinstance(gait, str) or np.ndim(gait) == 0 else list(iterable(gait, "gait"))
        out = []
        for g in items:
            if isinstance(g, str):
                if g not in self.gait_names:
                    raise ValueError(f"gait: unknown gait {g!r}, expected one of {self.gait_names}")
                out.append(self.gait_names.index(g))
            else:
                if np.ndim(g) != 0:
                    raise ValueError(f"gait must be a name, an index or a flat collection of them, got an item of "
                                     f"shape {np.shape(g)}")
                gi = int(index_array([g], "gait", "of indices or names")[0])
                if not 0 <= gi < len(self.gait_names):
                    raise ValueError(f"gait: index {gi} outside [0, {len(self.gait_names)})")
                out.append(gi)
        return out

    def subset(self, indices):
        """A ClipSet of some clips (mirror links kept where both clips stay).

        Parameters
        ----------
        indices : sequence of int
            The clips to keep, in their new order.

        Returns
        -------
        ClipSet
        """
        idx = index_array(iterable(indices, "indices", "a sequence of clip indices"), "indices", "(k,)")
        if idx.ndim != 1 or np.any((idx < 0) | (idx >= len(self.poses))):
            raise ValueError(f"indices must be a sequence of clip indices in [0, {len(self.poses)}), "
                             f"got {idx.tolist()}")
        idx = idx.tolist()
        where = {k: i for i, k in enumerate(idx)}
        mo = self.mirror_of
        P = self._core.param_matrix
        return ClipSet([self.poses[k] for k in idx], self.constraint_frames[idx], self.stance_foot[idx],
                       self.gait[idx], P[idx], skeleton=self.skeleton,
                       mirror_of=[where.get(int(mo[k]), -1) for k in idx], dt=self.dt, gait_names=self.gait_names)

    def __repr__(self):
        return f"ClipSet(K={self.K}, J={self.skeleton.joints})"


def mirror_poses(skeleton, poses):
    """(m, J, 3) poses reflected through x -> -x with left and right joints swapped.

    Parameters
    ----------
    skeleton : Skeleton
        Gives the left/right joint partners (``mirror``).
    poses : (m, J, 3) array_like
        Joint positions, m.

    Returns
    -------
    (m, J, 3) ndarray
        The mirror image, m; mirroring twice gives the poses back.
    """
    return _core.mirror_poses(skeleton, as_float_array(poses, "poses"))


def synthetic_clips(skeleton, gaits=GAITS, turns=(-1.2, -0.6, 0.0, 0.6, 1.2), torsos=(0.0,), spins=(0.0,),
                    sidesteps=(0.0,), counts=None, seed=0, dt=1.0 / 30.0):
    """Synthetic walk cycles with the properties the method needs.

    Each clip is one cycle of two half-cycles; the stance foot is exactly fixed
    during each (the skeleton is placed from the planted ankle) and the
    constraint frames are at mid-stance. Every parameter combination comes in
    both chiralities (left foot first, and its mirror image).

    Parameters
    ----------
    skeleton : Skeleton
        :func:`synthetic_walker` or a skeleton of the same topology.
    gaits : sequence of str
        From "stand", "slow", "walk", "fast", "run".
    turns : sequence of float
        Heading change per cycle, rad.
    torsos : sequence of float
        Torso angle relative to the root, rad.
    spins : sequence of float
        Extra root rotation rate, rad/s (the legs keep their direction).
    sidesteps : sequence of float
        Direction of leg swing relative to the root (side-stepping), rad.
    counts : None, "thesis", dict or sequence
        None: every combination per gait (2 x the product of the lists);
        "thesis": the thesis's 384 clips (18 stand, 87 slow, 124 walk, 65
        fast, 90 run); otherwise clips per gait, the combinations first and
        then parameters drawn uniformly within the ranges.
    seed : int
    dt : float
        Frame time, s.

    Returns
    -------
    ClipSet
    """
    gaits = [gaits] if isinstance(gaits, str) else list(iterable(gaits, "gaits", "a gait name or a sequence of them"))
    turns = list(iterable(turns, "turns", "a sequence of turning rates (rad/s)"))
    if counts is None:
        cnt = []
    elif isinstance(counts, str):
        if counts != "thesis":
            raise ValueError(f"counts must be None, 'thesis', a dict or a sequence, got {counts!r}")
        cnt = [THESIS_COUNTS.get(g, -1) for g in gaits]
    elif isinstance(counts, dict):
        cnt = [integer(counts.get(g, -1), f"counts[{g!r}]") for g in gaits]
    else:
        cnt = [integer(c, "counts") for c in counts]
    core = _core.synthetic_clips(skeleton, gaits, [real(t, "turns") for t in turns],
                                 [real(t, "torsos") for t in torsos], [real(t, "spins") for t in spins],
                                 [real(t, "sidesteps") for t in sidesteps], cnt, integer(seed, "seed"), real(dt, "dt"))
    return ClipSet._wrap(core)


class MotionModel:
    """Blending and the transition table of a clip set (thesis sec. 5.1).

    Parameters
    ----------
    clips : ClipSet
    joint_weights : (J,) array_like, optional
        Weights of each joint in Psi (default ones).
    velocity_weight : float
        Weight (s^2) of the squared velocity differences in Psi.
    threads : int
        Threads for the all-pairs table (0: all).
    progress : bool or callable
    """

    def __init__(self, clips, joint_weights=None, velocity_weight=0.01, threads=0, progress=False):
        if not isinstance(clips, ClipSet):
            raise TypeError(f"clips must be a ClipSet, got {type(clips).__name__}")
        self.clips = clips
        cb, close = progress_callback(progress, "transition table")
        try:
            self._core = _core.MotionModel(clips._core, None if joint_weights is None else
                                           as_float_array(joint_weights, "joint_weights"),
                                           real(velocity_weight, "velocity_weight"), integer(threads, "threads"), cb)
        finally:
            close()

    @property
    def K(self):
        """Number of clips (int)."""
        return self._core.K

    def transition_table(self):
        """Every transition C -> C' (rows C, columns C').

        Returns
        -------
        dict of (K, K) arrays
            ``dx``, ``dz`` (m) and ``dtheta`` (rad): C''s root frame in C's
            root frame; ``dt``: the duration from C's start to C''s start (s);
            ``psi``: the physics cost (m^2); ``next_clip``: the clip the state
            holds next (C' or its mirror image).
        """
        return self._core.transition_table()

    def blend(self, clip, next_clip):
        """The overlap of one blend, in C's root frame.

        Parameters
        ----------
        clip : int
            C, the clip that ends.
        next_clip : int
            C', the clip asked for next (played mirrored when its C'_in
            plants the other foot).

        Returns
        -------
        blended, from_clip, to_clip : (n, J, 3) ndarray
            The blended frames and the two clips' frames they start and end at.
        """
        return self._core.blend(integer(clip, "clip"), integer(next_clip, "next_clip"))

    def synthesize(self, clip_sequence, start_pose=(0.0, 0.0, 0.0)):
        """Animation of a clip sequence.

        Parameters
        ----------
        clip_sequence : sequence of int
        start_pose : (x, z, theta)
            World pose of the first clip's root frame (m, m, rad).

        Returns
        -------
        Animation
            ``frames`` (F, J, 3) world positions (m), ``contact_foot`` (F,),
            ``clip_of_frame`` (F,), ``roots`` (n, 3) world (x, z, theta) of each
            clip's root frame, ``played`` (n,) the clip that played each step.
        """
        seq = np.asarray(clip_sequence)
        if seq.ndim != 1 or seq.dtype.kind not in "iu":
            raise ValueError(f"clip_sequence must be a 1-D sequence of clip indices, got {clip_sequence!r}")
        if np.shape(start_pose) != (3,):
            raise ValueError(f"start_pose must be (x, z, theta), got {start_pose!r}")
        x, z, th = (real(v, "start_pose") for v in start_pose)
        return self._core.synthesize([int(c) for c in seq], x, z, th)


# --------------------------------------------------------------------------- tasks

class _Task:
    """Common part of the tasks: eq. 5.2 successors and eq. 5.4-5.5 costs in C++."""

    kind = ""
    switchable: tuple = ()
    separable: tuple = ()

    def __init__(self, motion, ranges=None, **params):
        if not isinstance(motion, MotionModel):
            raise TypeError(f"motion must be a MotionModel, got {type(motion).__name__}")
        self.motion = motion
        self.params = dict(params)
        self._ranges_arg = ranges
        gait = params.pop("gait", None)
        flags = []
        if gait is not None:
            allowed = set(motion.clips.gait_index(gait))
            flags = [i in allowed for i in range(len(motion.clips.gait_names))]
        samples_ = params.pop("obstacle_samples", None)
        kw = {k: real(v, k) for k, v in params.items()}
        if samples_ is not None:
            kw["obstacle_samples"] = integer(samples_, "obstacle_samples")
        if ranges is not None and isinstance(ranges, dict):
            names = self.variables_of_kind()
            ranges = [ranges.get(v, (-np.pi, np.pi) if v == "theta" else (-2.0, 2.0)) for v in names]
        self._core = _core.CharacterTask(motion._core, self.kind, gait=flags,
                                         ranges=None if ranges is None else as_float_array(ranges, "ranges"), **kw)

    @classmethod
    def variables_of_kind(cls):
        """Names of the continuous state columns of this kind of task, without building one.

        Returns
        -------
        tuple of str
        """
        return {"navigation": ("d", "theta"), "spinning_navigation": ("theta",)}.get(cls.kind, ("u", "v", "theta"))

    @property
    def variables(self):
        """Names of the continuous state columns 1.. (column 0 is the clip)."""
        return tuple(self._core.variables)

    @property
    def cyclic(self):
        """Per continuous variable: whether it is an angle wrapped into [-pi, pi) (tuple of bool)."""
        return tuple(self._core.cyclic)

    @property
    def ranges(self):
        """(d - 1, 2): the domain of each continuous variable."""
        return self._core.ranges

    @property
    def K(self):
        """Number of clips (int)."""
        return self._core.K

    @property
    def dim(self):
        """d, the state's columns: the clip and the continuous variables (int)."""
        return self._core.dim

    def with_params(self, **changes):
        """The same task with some parameters changed (user edits).

        Parameters
        ----------
        **changes
            Constructor arguments to replace (``gait``, ``torso``, ``spin``,
            ``offset``, ``u_dot``, ``v_dot``, a cost weight ...).

        Returns
        -------
        task object
            A new task of the same kind on the same motion model.
        """
        p = dict(self.params)
        p.update(changes)
        return type(self)(self.motion, ranges=self._ranges_arg, **p)

    def successors(self, states):
        """eq. 5.2 for every clip.

        Parameters
        ----------
        states : (S, d) array_like
            The clip index in column 0, then ``variables`` (m, rad).

        Returns
        -------
        (S, K, d) ndarray
            The state after each next clip (column 0: the clip the state
            holds next); obstacles move by (u_dot, v_dot) dt.
        """
        return self._core.successors(as_float_array(states, "states"))

    def state_costs(self, states):
        """eq. 5.4, the state cost c_s.

        Parameters
        ----------
        states : (S, d) array_like
            The clip index in column 0, then ``variables`` (m, rad).

        Returns
        -------
        (S,) ndarray
            Cost units.
        """
        return self._core.state_costs(as_float_array(states, "states"))

    def transition_costs(self, states):
        """eq. 5.5, the transition cost c_t of choosing each clip next.

        Parameters
        ----------
        states : (S, d) array_like
            The clip index in column 0, then ``variables`` (m, rad).

        Returns
        -------
        (S, K) ndarray
            Cost units; +inf for a clip outside the desired gait.
        """
        return self._core.transition_costs(as_float_array(states, "states"))

    def __repr__(self):
        return f"{type(self).__name__}(K={self.K}, variables={self.variables}, params={self.params})"


class Navigation(_Task):
    """Navigation (N, Table 5.1): follow a straight path with a desired gait and torso.

    State (clip, d, theta): d the signed lateral offset from the path (the
    thesis's x), theta the root heading relative to the path. c_s = gamma_x
    |d|; c_t = gamma_psi Psi + gamma_rho |theta' + rho'| + gamma_tau |tau' -
    torso|, +inf for a clip outside ``gait``. The gait is switchable, the
    torso separable.

    Parameters
    ----------
    motion : MotionModel
        The clips and their transition table.
    gamma_x : float
        Weight of the deviation |d| (cost units per m), >= 0.
    gamma_psi : float
        Weight of the physics cost Psi (per m^2), >= 0.
    gamma_rho : float
        Weight of the motion direction error |theta' + rho'| (per rad), >= 0.
    gamma_tau : float
        Weight of the torso error |tau' - torso| (per rad), >= 0.
    gait : str, int or sequence, optional
        The desired gait(s): clips of other gaits cost +inf (default: all).
    torso : float
        Desired torso angle tau-hat relative to the root, rad.
    ranges : dict or (2, 2) array_like, optional
        Sampled domain of d (m; default [-2, 2]); theta always covers [-pi, pi).

    Attributes
    ----------
    motion : MotionModel
    params : dict
        The constructor's parameters (what ``with_params`` edits).
    """

    kind = "navigation"
    switchable = ("gait",)
    separable = ("torso",)

    def __init__(self, motion, gamma_x=0.1, gamma_psi=1.0, gamma_rho=1.0, gamma_tau=0.0, gait=None, torso=0.0,
                 ranges=None):
        super().__init__(motion, ranges, gamma_x=gamma_x, gamma_psi=gamma_psi, gamma_rho=gamma_rho,
                         gamma_tau=gamma_tau, gait=gait, torso=torso)


class SpinningNavigation(_Task):
    """Spinning navigation (SN): move along a direction while spinning at ``spin`` rad/s.

    State (clip, theta). c_t = gamma_psi Psi + gamma_rho |theta' + rho'| +
    gamma_omega |omega' - spin|.

    Parameters
    ----------
    motion : MotionModel
        The clips and their transition table.
    gamma_psi : float
        Weight of the physics cost Psi (per m^2), >= 0.
    gamma_rho : float
        Weight of the motion direction error (per rad), >= 0.
    gamma_omega : float
        Weight of the spin error |omega' - spin| (per rad/s), >= 0.
    spin : float
        Desired spin omega-hat, rad/s (separable).
    ranges : optional
        Unused (theta covers [-pi, pi)); kept for a uniform constructor.

    Attributes
    ----------
    motion : MotionModel
    params : dict
        The constructor's parameters (what ``with_params`` edits).
    """

    kind = "spinning_navigation"
    separable = ("spin",)

    def __init__(self, motion, gamma_psi=1.0, gamma_rho=1.0, gamma_omega=1.0, spin=0.0, ranges=None):
        super().__init__(motion, ranges, gamma_psi=gamma_psi, gamma_rho=gamma_rho, gamma_omega=gamma_omega,
                         spin=spin)


class FixedObstacle(_Task):
    """Fixed obstacle avoidance (FOA): follow the path, avoid an obstacle.

    State (clip, u, v, theta): (u, v) the obstacle relative to the character
    (lateral, along the path). ``offset`` = d + u, the obstacle's lateral
    offset from the path, is constant (separable). c_s = gamma_x |offset - u|
    + gamma_O exp(-(u^2 + v^2) / sigma_O^2); c_t = gamma_psi Psi + gamma_rho
    |theta' + rho'|.

    Parameters
    ----------
    motion : MotionModel
        The clips and their transition table.
    gamma_x : float
        Weight of the deviation from the path (per m), >= 0.
    gamma_O : float
        Weight of the obstacle cost, >= 0.
    sigma_O : float
        Obstacle width, m, > 0.
    gamma_psi : float
        Weight of the physics cost Psi (per m^2), >= 0.
    gamma_rho : float
        Weight of the motion direction error (per rad), >= 0.
    offset : float
        d + u, the obstacle's lateral offset from the path, m.
    ranges : dict or (3, 2) array_like, optional
        Sampled domains of u and v (m; default [-2, 2] each); the value
        function sees (u, v) clamped into them.
    obstacle_samples : int
        Points per transition at which the obstacle term is charged: the
        state (eq. 5.4) and ``obstacle_samples - 1`` more evenly along the
        chord to the next state, added to c_t. One walk cycle covers about
        1.1 m, more than twice a person-sized sigma_O, so with 1 (eq. 5.4
        read literally) a policy may step across the obstacle between two
        clip starts.

    Attributes
    ----------
    motion : MotionModel
    params : dict
        The constructor's parameters (what ``with_params`` edits).
    """

    kind = "fixed_obstacle"
    separable = ("offset",)

    def __init__(self, motion, gamma_x=0.1, gamma_O=10.0, sigma_O=0.5, gamma_psi=1.0, gamma_rho=1.0, offset=0.0,
                 ranges=None, obstacle_samples=1):
        super().__init__(motion, ranges, gamma_x=gamma_x, gamma_O=gamma_O, sigma_O=sigma_O, gamma_psi=gamma_psi,
                         gamma_rho=gamma_rho, offset=offset, obstacle_samples=obstacle_samples)


class MovingObstacle(_Task):
    """Moving obstacle avoidance (MOA): keep a direction, avoid an obstacle moving at (u_dot, v_dot).

    State (clip, u, v, theta); the obstacle moves by (u_dot, v_dot) dt per
    transition (separable). c_s = gamma_O exp(-(u^2 + v^2) / sigma_O^2);
    c_t = gamma_psi Psi + gamma_rho |theta' + rho'|.

    Parameters
    ----------
    motion : MotionModel
        The clips and their transition table.
    gamma_O : float
        Weight of the obstacle cost, >= 0.
    sigma_O : float
        Obstacle width, m, > 0.
    gamma_psi : float
        Weight of the physics cost Psi (per m^2), >= 0.
    gamma_rho : float
        Weight of the motion direction error (per rad), >= 0.
    u_dot, v_dot : float
        The obstacle's velocity in the path frame, m/s (separable).
    ranges : dict or (3, 2) array_like, optional
        Sampled domains of u and v (m; default [-2, 2] each).
    obstacle_samples : int
        Points per transition at which the obstacle term is charged (see
        :class:`FixedObstacle`).

    Attributes
    ----------
    motion : MotionModel
    params : dict
        The constructor's parameters (what ``with_params`` edits).
    """

    kind = "moving_obstacle"
    separable = ("u_dot", "v_dot")

    def __init__(self, motion, gamma_O=10.0, sigma_O=0.5, gamma_psi=1.0, gamma_rho=1.0, u_dot=0.0, v_dot=0.0,
                 ranges=None, obstacle_samples=1):
        super().__init__(motion, ranges, gamma_O=gamma_O, sigma_O=sigma_O, gamma_psi=gamma_psi, gamma_rho=gamma_rho,
                         u_dot=u_dot, v_dot=v_dot, obstacle_samples=obstacle_samples)


def samples(task, per_dim=8, ranges=None, drop=0.0, seed=0, clips=None):
    """State samples: every clip times a uniform grid over the continuous variables.

    Parameters
    ----------
    task : task object
    per_dim : int or dict
        Points per variable (a dict gives them by name).
    ranges : dict, optional
        (lo, hi) per linear variable; default 4 m about 0 ([-2, 2]). Cyclic
        variables cover [-pi, pi).
    drop : float
        Fraction of the samples deleted at random, in [0, 1).
    seed : int
        Seed of the deletion.
    clips : None, "gait" or sequence of int
        The clips whose states are sampled: all (default), the clips of the
        task's desired gait (a gait-restricted controller never evaluates V
        at another gait's clips, so their coefficients stay 0), or the
        given indices.

    Returns
    -------
    (S, d) ndarray
        The clip index in column 0.
    """
    drop = real(drop, "drop")
    if not 0.0 <= drop < 1.0:
        raise ValueError(f"drop must lie in [0, 1), got {drop}")
    ranges = dict(ranges or {})
    unknown = [v for v in ranges if v not in task.variables]
    if unknown:
        raise ValueError(f"ranges: unknown variable {unknown[0]!r}; the task's variables are {task.variables}")
    counts = []
    for v in task.variables:
        n = integer(per_dim[v] if isinstance(per_dim, dict) else per_dim, "per_dim")
        if n < 1:
            raise ValueError(f"per_dim must be >= 1, got {n}")
        counts.append(n)
    # the meshgrid and the stacked samples: K prod(per_dim) rows of 1 + len(counts) columns, twice
    check_size(f"per_dim = {per_dim} ({task.K} clips x {' x '.join(map(str, counts))} samples)",
               2 * (1 + len(counts)), task.K, *counts)
    axes = []
    for v, cyc, n in zip(task.variables, task.cyclic, counts):
        if cyc:
            axes.append(np.linspace(-np.pi, np.pi, n, endpoint=False))
        else:
            lo, hi = ranges.get(v, (-2.0, 2.0))
            axes.append(np.linspace(real(lo, "ranges"), real(hi, "ranges"), n))
    if clips is None:
        held = np.arange(task.K, dtype=float)
    elif isinstance(clips, str):
        if clips != "gait":
            raise ValueError(f"clips must be None, 'gait' or clip indices, got {clips!r}")
        gait = task.params.get("gait")
        held = np.arange(task.K, dtype=float) if gait is None else np.flatnonzero(
            np.isin(task.motion.clips.gait, task.motion.clips.gait_index(gait))).astype(float)
    else:
        held = np.unique(np.asarray([integer(c, "clips") for c in clips], dtype=float))
        if held.size == 0 or held[0] < 0 or held[-1] >= task.K:
            raise ValueError(f"clips must be clip indices in [0, {task.K}), got {clips!r}")
    mesh = np.meshgrid(held, *axes, indexing="ij")
    X = np.stack([m.ravel() for m in mesh], axis=1)
    if drop > 0:
        rng = np.random.default_rng(integer(seed, "seed"))
        keep = rng.permutation(len(X))[: max(1, int(round(len(X) * (1 - drop))))]
        X = X[np.sort(keep)]
    task._core.check_states(np.ascontiguousarray(X), "samples", True)
    return np.ascontiguousarray(X)


# --------------------------------------------------------------------------- learning

@dataclass
class ValueFunction:
    """A learned value function V(X) = Phi(X) . r[C] (made by :func:`learn`).

    Attributes
    ----------
    task : task object
        The task it was learned for.
    basis : basis.Basis
        Phi.
    alpha : float
        The discount of eq. 5.7.
    r : (K, nb) ndarray
        Coefficients per clip, cost units.
    iterations : int
        LP solves of the loop.
    n_constraints : int
        Rows of L.
    history : list of int
        New pairs per iteration (the last 0 when converged).
    pairs : (n_constraints, 2) ndarray
        Sample index and next clip of every row of L.
    samples : (S, d) ndarray
    lp_seconds, seconds : float
        Time in the LP solver, and the whole learn.
    solver : str
        Which LP solver ran.
    converged : bool
        Whether the loop stopped because no pair was new.
    clips : (n,) ndarray of int16 or int32
        The runtime table's clips: those whose row of r is not all zero
        (the controller's V is exactly 0 at every other clip).
    r32 : (n, nb) ndarray of float32
        The runtime table: r[clips] in single precision. This is all that
        :class:`Controller` reads; ``r`` (double, every clip) stays for
        analysis. Rounding r to float32 moves V by at most
        ``value_error_bound`` (cost units), so a decision can change only
        where two clips' c_t + alpha V differ by less than
        ``2 alpha value_error_bound``.
    """

    task: object
    basis: object
    alpha: float
    r: np.ndarray
    iterations: int
    n_constraints: int
    history: list
    pairs: np.ndarray
    samples: np.ndarray
    lp_seconds: float
    seconds: float
    solver: str
    converged: bool
    _problem: object = field(default=None, repr=False, init=False)
    clips: np.ndarray = field(default=None, init=False)
    r32: np.ndarray = field(default=None, init=False)

    def __post_init__(self):
        used = np.flatnonzero(np.any(self.r != 0.0, axis=1))
        self.clips = used.astype(np.int16 if self.task.K <= np.iinfo(np.int16).max else np.int32)
        self.r32 = np.ascontiguousarray(self.r[used], dtype=np.float32)

    @property
    def nbytes(self):
        """The controller's memory: the float32 runtime table and its clip indices (bytes).

        The thesis's figures (< 13 KB navigation, < 18 KB avoidance) count
        the coefficients the runtime decision reads; the motion clips and
        the transition table are shared by every controller and not counted.
        """
        return int(self.r32.nbytes + self.clips.nbytes)

    def runtime_r(self):
        """The coefficients the controller decides with: r32 expanded to (K, nb) doubles.

        Returns
        -------
        (K, nb) ndarray
            r rounded to float32 at the table's clips, exactly 0 elsewhere
            (a per-call buffer: the controller keeps only ``r32``).
        """
        r = np.zeros(self.r.shape)
        r[self.clips] = self.r32
        return r

    @property
    def value_error_bound(self):
        """Largest change of V that rounding r to float32 can cause, cost units.

        Returns
        -------
        float
            max over clips of sum_j max |phi_j| |r_j - r32_j|, with max
            |phi_j| over the task's ranges (``basis.feature_bounds``).
        """
        dr = np.abs(self.runtime_r() - self.r)
        return float(np.max(dr @ self.basis.feature_bounds(self.task)))

    def problem(self):
        """The task and basis as the C++ controller sees them (built once, then cached).

        Returns
        -------
        directable._core.DecisionProblem
        """
        if self._problem is None:
            self._problem = _core.DecisionProblem(self.task._core, self.basis._core(self.task))
        return self._problem

    def value(self, states):
        """V at many states.

        Parameters
        ----------
        states : (S, d) array_like
            The clip index in column 0, then the task's variables (m, rad).

        Returns
        -------
        (S,) ndarray
            Cost units.
        """
        return self.problem().values(self.r, as_float_array(states, "states"))


def _lp_bounds(bounds, n):
    if bounds is None:
        return np.full(n, -np.inf), np.full(n, np.inf)
    if np.ndim(bounds) == 0:
        b = real(bounds, "bounds")
        if not b > 0:
            raise ValueError(f"bounds must be > 0 (|r| <= bounds) or a (lo, hi) pair, got {b}")
        return np.full(n, -b), np.full(n, b)
    if np.shape(bounds) != (2,):
        raise ValueError(f"bounds must be None, a float or a (lo, hi) pair, got shape {np.shape(bounds)}")
    lo, hi = bounds
    return np.full(n, real(lo, "bounds")), np.full(n, real(hi, "bounds"))


def learn(task, basis, samples, alpha=0.9, max_iterations=50, solver="highspy", warm_start=True, bounds=None,
          threads=0, progress=False, callback=None):
    """Learn a value function by the approximate-LP loop (thesis sec. 5.3.2).

    Each iteration scans every sample for its best next clip under the
    current V (eq. 5.10; C++, parallel), adds the new (X, X') pairs to L, and
    solves max sum_X V(X) s.t. V(X) - alpha V(X') <= c_s(X) + c_t(X, X') over
    L. It stops when no pair is new.

    Parameters
    ----------
    task : task object
    basis : basis.Basis
    samples : (S, d) array_like
        From :func:`samples`; they must lie in the task's ranges.
    alpha : float
        Discount in [0, 1).
    max_iterations : int
    solver : {"highspy", "scipy"}
        "highspy" keeps one HiGHS model and adds rows (warm start);
        "scipy" re-solves with ``linprog(method="highs-ipm")``.
    warm_start : bool
        highspy only: False rebuilds the model every iteration.
    bounds : None, float or (lo, hi)
        Box on every coefficient of r.
    threads : int
        Threads of the scans (0: all).
    progress : bool or callable
    callback : callable, optional
        ``callback(iteration, r, new_pairs)`` after each solve.

    Returns
    -------
    ValueFunction

    Raises
    ------
    ValueError
        For an unbounded LP (naming the basis terms left free) or an
        infeasible one (naming samples).
    """
    t0 = time.perf_counter()
    alpha = real(alpha, "alpha")
    if not 0.0 <= alpha < 1.0:
        raise ValueError(f"alpha must lie in [0, 1), got {alpha}")
    max_iterations = integer(max_iterations, "max_iterations")
    if solver not in ("highspy", "scipy", "highs-ipm", "highs", "scipy-simplex"):
        raise ValueError(f"solver must be 'highspy' or 'scipy', got {solver!r}")
    if solver == "highspy":
        require_highspy()  # fails early, with the install hint
    X = as_float_array(samples, "samples")
    threads = integer(threads, "threads")
    problem = _core.DecisionProblem(task._core, basis._core(task))
    L = _core.ValueLearning(problem, X, alpha)
    K, nb = task.K, basis.size
    c = L.objective(threads)
    r = np.zeros((K, nb))
    cb, close = progress_callback(progress, "value function scans")
    converged = False
    iterations = 0
    lp = None
    box = None
    try:
        for it in range(max_iterations + 1):
            data, indices, indptr, rhs = L.step(r, threads, cb)
            if rhs.size == 0:
                converged = True
                break
            if it == max_iterations:
                break
            if lp is None:
                # The first LPs see few pairs and may leave directions of r
                # free: without user bounds a wide box, sized by the costs,
                # keeps them finite; whether the final LP is bounded is
                # checked after the loop.
                if bounds is None:
                    box = 1e4 * max(1.0, float(np.max(rhs))) / (1.0 - alpha)
                lower, upper = _lp_bounds(box if bounds is None else bounds, K * nb)
                # clips that no sample holds and no allowed transition reaches never enter a row:
                # their coefficients are fixed at 0 rather than left free in the LP
                idle = np.repeat(~_reachable_clips(task, X), nb)
                lower[idle], upper[idle] = 0.0, 0.0
                lp = make_solver(solver, c, lower, upper, warm_start)
            lp.add_rows(data, indices, indptr, rhs)
            status, x = lp.solve()
            iterations += 1
            if status == LPStatus.UNBOUNDED:
                raise ValueError(_unbounded_message(basis, None))
            if status == LPStatus.INFEASIBLE:
                bad = sorted(set(L.pairs[:, 0].tolist()))[:10]
                raise ValueError(f"the LP is infeasible (bounds={bounds!r} exclude every value function that the "
                                 f"constraints allow); offending samples (indices): {bad}, e.g. {X[bad[0]].tolist()}")
            r = x.reshape(K, nb)
            if callback is not None:
                callback(it, r, int(rhs.size))
        if box is not None and np.any(np.abs(r) >= 0.999 * box):
            _check_bounded(lp, c, r, box, basis, K, nb)
    finally:
        close()
    return ValueFunction(task=task, basis=basis, alpha=alpha, r=r, iterations=iterations,
                         n_constraints=int(L.constraints), history=[int(h) for h in L.history], pairs=L.pairs,
                         samples=X, lp_seconds=0.0 if lp is None else lp.seconds,
                         seconds=time.perf_counter() - t0, solver=solver if lp is None else lp.name,
                         converged=converged)


def _reachable_clips(task, X):
    """(K,) bool: the clips of the samples and those an allowed transition from them reaches."""
    held = np.unique(X[:, 0].astype(int))
    out = np.zeros(task.K, bool)
    out[held] = True
    probe = np.zeros((held.size, task.dim))
    probe[:, 0] = held
    allowed = np.isfinite(task.transition_costs(probe))  # the gait constraint depends on the clips only
    nxt = task.motion.transition_table()["next_clip"][held]
    out[nxt[allowed]] = True
    return out


def _check_bounded(lp, c, r, box, basis, K, nb):
    """Coefficients at the implicit box: unbounded if a wider box raises the optimum."""
    from scipy.sparse import csr_matrix

    blocks = getattr(lp, "_blocks", None) or [(csr_matrix((d, i, p), shape=(rhs.size, K * nb)), rhs)
                                              for d, i, p, rhs in lp._rows]
    wide = make_solver("scipy-simplex", c, np.full(K * nb, -100 * box), np.full(K * nb, 100 * box), False)
    wide._blocks = blocks
    status, x = wide.solve()
    here = float(c @ r.ravel())
    if status == LPStatus.UNBOUNDED or (status == LPStatus.OPTIMAL and float(c @ x) > here + 1e-7 * (1 + abs(here))):
        hit = np.flatnonzero(np.abs(x if x is not None else r.ravel()) >= 0.999 * box)
        raise ValueError(_unbounded_message(basis, hit % nb))


def _unbounded_message(basis, terms):
    names = basis.term_names
    free = sorted({names[j] for j in terms}) if terms is not None else []
    detail = f" (basis terms {free})" if free else ""
    return (f"the LP is unbounded: the sampled constraints do not bound some direction of r{detail}; "
            f"add a constant term (e.g. basis.constant() + ...) or pass bounds=")


# --------------------------------------------------------------------------- value iteration

@dataclass
class GridValueFunction:
    """A tabulated value function on a grid (the reference of :func:`value_iteration`).

    Attributes
    ----------
    task : task object
        The task it was computed for.
    alpha : float
        The discount.
    values : (K, n_1, ..., n_D) ndarray
    axes : list of (n_i,) ndarray
    sweeps, evaluations : int
        Full Bellman sweeps, and policy-evaluation sweeps between them.
    residual : float
        max |T V - V| of the last full sweep.
    seconds : float
        Wall time of the computation, s.
    """

    task: object
    alpha: float
    axes: list
    values: np.ndarray
    sweeps: int
    evaluations: int
    residual: float
    seconds: float
    _core: object = field(default=None, repr=False, init=False)

    def value(self, states):
        """V at many states, multilinear between grid points (cyclic axes wrapped, linear ones clamped).

        Parameters
        ----------
        states : (S, d) array_like
            The clip index in column 0, then the task's variables (m, rad).

        Returns
        -------
        (S,) ndarray
            Cost units.
        """
        return self._core(as_float_array(states, "states"))


def _grid_axes(task, grid):
    axes = []
    for i, (v, cyc) in enumerate(zip(task.variables, task.cyclic)):
        spec = grid[v] if isinstance(grid, dict) else (grid[i] if isinstance(grid, (list, tuple)) else grid)
        if np.ndim(spec) == 0:
            n = integer(spec, "grid")
            if n < 2:
                raise ValueError(f"grid must give >= 2 points per axis, got {n} for {v!r}")
            lo, hi = task.ranges[i]
            axes.append(np.linspace(-np.pi, np.pi, n, endpoint=False) if cyc else np.linspace(lo, hi, n))
        else:
            a = as_float_array(spec, f"grid[{v!r}]")
            if cyc:
                raise ValueError(f"grid[{v!r}]: a cyclic axis is given by its number of points")
            axes.append(a)
    return axes


def value_iteration(task, grid, alpha=0.9, tol=1e-9, max_sweeps=10000, threads=0, progress=False):
    """Tabular dynamic programming on a grid (C++): the "exact" reference policy.

    Parameters
    ----------
    task : task object
    grid : int, sequence or dict
        Points per variable (cyclic axes cover [-pi, pi), linear axes the
        task's ranges), or explicit increasing axes for linear variables.
    alpha : float
        Discount in [0, 1).
    tol : float
        Bound on the Bellman residual max |T V - V|.
    max_sweeps : int
    threads : int
    progress : bool or callable

    Returns
    -------
    GridValueFunction
    """
    t0 = time.perf_counter()
    alpha = real(alpha, "alpha")
    if not 0.0 <= alpha < 1.0:
        raise ValueError(f"alpha must lie in [0, 1), got {alpha}")
    axes = _grid_axes(task, grid)
    g = _core.GridValue(task.K, axes, list(task.cyclic))
    problem = _core.DecisionProblem(task._core, None)
    cb, close = progress_callback(progress, "value iteration")
    try:
        info = _core.value_iteration(problem, g, alpha, real(tol, "tol"), integer(max_sweeps, "max_sweeps"),
                                     integer(threads, "threads"), cb)
    finally:
        close()
    shape = (task.K,) + tuple(len(a) for a in axes)
    out = GridValueFunction(task=task, alpha=alpha, axes=axes, values=g.values.reshape(shape), sweeps=info["sweeps"],
                            evaluations=info["evaluations"], residual=info["residual"],
                            seconds=time.perf_counter() - t0)
    out._core = g  # the C++ table the values view
    return out


# --------------------------------------------------------------------------- switching and separability

class ValueFunctionTable:
    """Value functions learned per value of a switchable or separable parameter (sec. 5.3.4).

    ``mode="switch"`` picks the entry of the task's current value (e.g. the
    gait); ``mode="interpolate"`` blends r linearly (hat bases) between the
    neighbouring values of a numeric parameter, or multilinearly on a grid
    of tuples for a pair of parameters (``("u_dot", "v_dot")``).

    Parameters
    ----------
    parameter : str or tuple of str
        The task parameter(s) the entries stand for.
    values : sequence
        The parameter value of each entry.
    functions : sequence of ValueFunction
        One per value, on the same basis.
    mode : {"switch", "interpolate"}
        How the entries are combined.
    """

    def __init__(self, parameter, values, functions, mode):
        self.parameter, self.mode = parameter, mode
        self.values, self.functions = list(iterable(values, "values")), list(iterable(functions, "functions"))

    @property
    def nbytes(self):
        """The controller's memory: every entry's float32 runtime table (bytes, see ValueFunction.nbytes)."""
        return sum(f.nbytes for f in self.functions)

    def _current(self, task):
        if isinstance(self.parameter, tuple):
            return tuple(task.params[p] for p in self.parameter)
        return task.params[self.parameter]

    def function_for(self, task):
        """The coefficients for the task's current parameter value.

        Parameters
        ----------
        task : task object
            Its ``params`` hold the current value of ``parameter``.

        Returns
        -------
        r : (K, nb) ndarray
            The matching entry's runtime coefficients (its float32 table,
            :meth:`ValueFunction.runtime_r`; "switch") or the hat-basis
            blend of the neighbouring entries' ("interpolate").
        function : ValueFunction
            An entry whose basis (and alpha) go with r.
        """
        value = self._current(task)
        if self.mode == "switch":
            for v, f in zip(self.values, self.functions):
                if v == value or (not isinstance(v, str) and np.ndim(v) == 0 and isinstance(value, (list, tuple))
                                  and len(value) == 1 and v == value[0]):
                    return f.runtime_r(), f
            raise ValueError(f"{self.parameter}={value!r} is not among the tabulated values {self.values}")
        vals = np.asarray(self.values, dtype=float)
        f0 = self.functions[0]
        if vals.ndim == 1:
            x = float(value)
            order = np.argsort(vals)
            xs = vals[order]
            x = min(max(x, xs[0]), xs[-1])
            j = int(np.clip(np.searchsorted(xs, x) - 1, 0, len(xs) - 2)) if len(xs) > 1 else 0
            if len(xs) == 1:
                return self.functions[order[0]].runtime_r(), f0
            t = (x - xs[j]) / (xs[j + 1] - xs[j])
            return (1 - t) * self.functions[order[j]].runtime_r() + t * self.functions[order[j + 1]].runtime_r(), f0
        # a tensor grid of tuples: multilinear weights
        r = np.zeros_like(f0.r)
        cols = [np.unique(vals[:, i]) for i in range(vals.shape[1])]
        weights = []
        for i, c in enumerate(cols):
            x = min(max(float(value[i]), c[0]), c[-1])
            j = int(np.clip(np.searchsorted(c, x) - 1, 0, max(len(c) - 2, 0)))
            t = 0.0 if len(c) == 1 else (x - c[j]) / (c[j + 1] - c[j])
            weights.append({c[j]: 1 - t} if len(c) == 1 else {c[j]: 1 - t, c[j + 1]: t})
        for v, f in zip(vals, self.functions):
            w = np.prod([weights[i].get(v[i], 0.0) for i in range(len(v))])
            if w:
                r = r + w * f.runtime_r()
        return r, f0


def tabulate(make_task, values, basis, samples, parameter=None, mode=None, max_workers=None, **learn_kwargs):
    """Learn one value function per parameter value, in parallel (sec. 5.3.4).

    Parameters
    ----------
    make_task : callable
        ``make_task(value)`` -> task.
    values : sequence
        Parameter values (gait names, torso angles, (u_dot, v_dot) pairs ...).
    basis : basis.Basis
    samples : (S, d) array_like, or a callable ``samples(task)``
    parameter : str or tuple of str, optional
        The task parameter the values stand for (default: the task's first
        switchable or separable parameter).
    mode : {"switch", "interpolate"}, optional
        Default: "switch" for a switchable parameter, else "interpolate".
    max_workers : int, optional
        Learns run concurrently in threads (the scans and HiGHS release the GIL).
    **learn_kwargs
        Passed to :func:`learn`.

    Returns
    -------
    ValueFunctionTable
    """
    values = list(iterable(values, "values"))
    if not values:
        raise ValueError("values must hold at least one parameter value")
    tasks = [make_task(v) for v in values]
    t0 = tasks[0]
    if parameter is None:
        names = t0.switchable + t0.separable
        parameter = t0.separable if t0.separable == ("u_dot", "v_dot") and np.ndim(values[0]) == 1 else names[0]
    if mode is None:
        mode = "switch" if parameter in t0.switchable else "interpolate"
    if mode not in ("switch", "interpolate"):
        raise ValueError(f"mode must be 'switch' or 'interpolate', got {mode!r}")

    def one(task):
        X = samples(task) if callable(samples) else samples
        return learn(task, basis, X, **learn_kwargs)

    with concurrent.futures.ThreadPoolExecutor(max_workers=max_workers or min(len(tasks), 4)) as pool:
        functions = list(pool.map(one, tasks))
    return ValueFunctionTable(parameter, values, functions, mode)


# --------------------------------------------------------------------------- runtime control

@dataclass
class Episode:
    """One controlled run.

    Attributes
    ----------
    clips : (steps + 1,) ndarray
        Clip of each state.
    states : (steps + 1, d) ndarray
    step_costs : (steps,) ndarray
        c_s(X_t) + c_t(X_t, X_t+1), cost units.
    discounted_cost : float
        sum_t alpha^t step_costs[t].
    alpha : float
        The discount.
    """

    clips: np.ndarray
    states: np.ndarray
    step_costs: np.ndarray
    discounted_cost: float
    alpha: float


def _edit_state(task, state, angle):
    """The state after the desired path turns by `angle` about the character."""
    s = np.array(state, dtype=float)
    wrap = lambda a: (a + np.pi) % (2 * np.pi) - np.pi  # noqa: E731
    names = task.variables
    th = names.index("theta") + 1
    s[th] = wrap(s[th] - angle)
    if "d" in names:
        s[names.index("d") + 1] *= np.cos(angle)
    if "u" in names:
        iu, iv = names.index("u") + 1, names.index("v") + 1
        c, sn = np.cos(angle), np.sin(angle)
        u, v = s[iu], s[iv]
        s[iu], s[iv] = c * u + sn * v, -sn * u + c * v
    return s


class Controller:
    """Runtime clip choice (sec. 5.3.3).

    Parameters
    ----------
    task : task object
    value_function : ValueFunction, ValueFunctionTable or None
    policy : {"value", "greedy", "grid"}
        eq. 5.10 with the learned V, eq. 5.6, or eq. 5.10 with the value
        iteration table ``grid_values``.
    grid_values : GridValueFunction, optional
    """

    def __init__(self, task, value_function=None, policy="value", grid_values=None):
        if policy not in ("value", "greedy", "grid"):
            raise ValueError(f"policy must be 'value', 'greedy' or 'grid', got {policy!r}")
        if policy == "value" and value_function is None:
            raise ValueError("policy='value' needs value_function")
        if policy == "grid" and grid_values is None:
            raise ValueError("policy='grid' needs grid_values (from value_iteration)")
        self.task, self.value_function, self.policy, self.grid_values = task, value_function, policy, grid_values
        self.alpha = value_function.alpha if isinstance(value_function, ValueFunction) else (
            value_function.functions[0].alpha if isinstance(value_function, ValueFunctionTable) else (
                grid_values.alpha if grid_values is not None else 0.9))

    def _setup(self, task):
        basis_core = None
        r = None
        if self.policy == "value":
            if isinstance(self.value_function, ValueFunctionTable):
                r, f = self.value_function.function_for(task)
            else:
                r, f = self.value_function.runtime_r(), self.value_function
            basis_core = f.basis._core(task)
        problem = _core.DecisionProblem(task._core, basis_core)
        grid = self.grid_values._core if self.policy == "grid" else None
        return problem, (None if r is None else np.ascontiguousarray(r)), grid

    def choose(self, state):
        """The next clip for one state (eq. 5.10, eq. 5.6 or the grid policy).

        Parameters
        ----------
        state : (d,) array_like
            The clip index first, then the task's variables (m, rad).

        Returns
        -------
        int
            The clip to ask for next.
        """
        problem, r, grid = self._setup(self.task)
        return int(problem.choose(self.policy, r, grid, self.alpha, as_float_array(state, "state")))

    def run(self, state0, steps, events=None):
        """Run ``steps`` clip choices from ``state0``.

        Parameters
        ----------
        state0 : (d,) array_like
        steps : int
        events : list of (step, dict), optional
            User edits applied before that step's decision: task parameters
            (``gait``, ``torso``, ``spin``, ...) or ``"path_angle"`` (rad), a
            turn of the desired path about the character.

        Returns
        -------
        Episode
        """
        steps = integer(steps, "steps")
        if steps < 0:
            raise ValueError(f"steps must be >= 0, got {steps}")
        state = finite_array(state0, "state0")
        if state.shape != (self.task.dim,):
            raise ValueError(f"state0 must have shape ({self.task.dim},), got {state.shape}")
        events = sorted(events or [], key=lambda e: e[0])
        task = self.task
        states, clips, costs = [state[None, :]], [np.array([int(state[0])])], []
        t = 0
        for k in range(len(events) + 1):
            end = steps if k == len(events) else min(max(integer(events[k][0], "events step"), t), steps)
            if end > t:
                problem, r, grid = self._setup(task)
                S, C, c = problem.run(self.policy, r, grid, self.alpha, state, end - t)
                states.append(S[1:]), clips.append(C[1:]), costs.append(c)
                state, t = S[-1].copy(), end
            if k < len(events):
                edit = dict(events[k][1])
                angle = edit.pop("path_angle", None)
                if angle is not None:
                    state = _edit_state(task, state, real(angle, "path_angle"))
                if edit:
                    task = task.with_params(**edit)
        costs = np.concatenate(costs) if costs else np.zeros(0)
        discounted = float(np.sum(costs * self.alpha ** np.arange(costs.size)))
        return Episode(np.concatenate(clips), np.concatenate(states), costs, discounted, self.alpha)


# --------------------------------------------------------------------------- crowds

@dataclass
class CrowdResult:
    """A crowd run (from :func:`crowd`).

    Attributes
    ----------
    times : (T,) ndarray
        Sample times, s.
    positions : (T, P, 2) ndarray
        World (x, z) of each character's root, m.
    headings : (T, P) ndarray
        World headings, rad.
    close_encounters : int
        Pairs closer than ``encounter_distance`` at some time.
    min_distance : float
        Smallest distance between two characters over the run, m.
    """

    times: np.ndarray
    positions: np.ndarray
    headings: np.ndarray
    close_encounters: int
    min_distance: float


def crowd(controllers, starts, steps, radius, directions=None, avoid=True, encounter_distance=0.5, dt=0.1):
    """Moving-obstacle avoidance in a crowd (sec. 5.4, Fig. 5.5).

    Each character's desired direction is its start heading (or
    ``directions``). At each of its clip transitions it fits a moving
    obstacle (position and velocity in its path frame) to every neighbour
    within ``radius`` and avoids the one of highest value; with no neighbour
    (or ``avoid=False``) the obstacle is placed far behind it, at rest.

    Parameters
    ----------
    controllers : list of Controller
        On MovingObstacle tasks (a ValueFunctionTable over (u_dot, v_dot)
        gives the velocity-specific value functions).
    starts : (P, 4) array_like
        (x, z, theta, clip) per character.
    steps : int
        Clip choices per character.
    radius : float
        Neighbourhood radius, m.
    directions : (P,) array_like, optional
        Desired world directions (rad); default the start headings.
    avoid : bool
        False: every character ignores the others (the baseline).
    encounter_distance : float
        Distance (m) that counts as a close encounter.
    dt : float
        Sampling interval (s) of the returned trajectories.

    Returns
    -------
    CrowdResult
    """
    starts = as_float_array(starts, "starts")
    P = len(controllers)
    if starts.shape != (P, 4):
        raise ValueError(f"starts must have shape ({P}, 4) (x, z, theta, clip), got {starts.shape}")
    finite_array(starts, "starts")
    radius = real(radius, "radius")
    steps = integer(steps, "steps")
    encounter_distance = finite_real(encounter_distance, "encounter_distance", 0.0)
    dt = finite_real(dt, "dt", 0.0, strict=True)
    psi = starts[:, 2].copy() if directions is None else as_float_array(directions, "directions")
    wrap = lambda a: (a + np.pi) % (2 * np.pi) - np.pi  # noqa: E731
    tables = [c.value_function for c in controllers]
    motion = controllers[0].task.motion
    tt = motion.transition_table()
    # per character: list of (time, x, z, theta, clip) at clip starts
    track = [[(0.0, *starts[i, :3], int(starts[i, 3]))] for i in range(P)]

    def where(j, t):
        """Position and velocity of character j at time t (linear between clip starts)."""
        tr = track[j]
        for a, b in zip(tr[:-1], tr[1:]):
            if a[0] <= t <= b[0]:
                w = (t - a[0]) / max(b[0] - a[0], 1e-12)
                vel = np.array([b[1] - a[1], b[2] - a[2]]) / max(b[0] - a[0], 1e-12)
                return np.array([a[1], a[2]]) + w * np.array([b[1] - a[1], b[2] - a[2]]), vel
        last = tr[-1]
        return np.array([last[1], last[2]]), np.zeros(2)

    def frame(i, vec):
        c, s = np.cos(-psi[i]), np.sin(-psi[i])
        return np.array([c * vec[0] - s * vec[1], s * vec[0] + c * vec[1]])

    done = [0] * P
    while min(done) < steps:
        i = int(np.argmin([track[j][-1][0] if done[j] < steps else np.inf for j in range(P)]))
        t, x, z, th, clip = track[i][-1]
        pos = np.array([x, z])
        ctrl = controllers[i]
        best = None
        if avoid:
            for j in range(P):
                if j == i:
                    continue
                pj, vj = where(j, t)
                if np.linalg.norm(pj - pos) > radius:
                    continue
                u, v = frame(i, pj - pos)
                ud, vd = frame(i, vj)
                task = ctrl.task.with_params(u_dot=float(ud), v_dot=float(vd))
                lo, hi = task.ranges[0], task.ranges[1]
                state = np.array([clip, np.clip(u, *lo), np.clip(v, *hi), wrap(th - psi[i])])
                value = Controller(task, tables[i]).value_function
                r, f = value.function_for(task) if isinstance(value, ValueFunctionTable) else (value.runtime_r(), value)
                val = float(_core.DecisionProblem(task._core, f.basis._core(task)).values(
                    np.ascontiguousarray(r), state[None, :])[0])
                if best is None or val > best[0]:
                    best = (val, task, state)
        if best is None:
            task = ctrl.task.with_params(u_dot=0.0, v_dot=0.0)
            state = np.array([clip, 0.0, task.ranges[1][0], wrap(th - psi[i])])
        else:
            _, task, state = best
        k = Controller(task, ctrl.value_function, ctrl.policy, ctrl.grid_values).choose(state)
        dx, dz, dth, dur = tt["dx"][clip, k], tt["dz"][clip, k], tt["dtheta"][clip, k], tt["dt"][clip, k]
        c, s = np.cos(th), np.sin(th)
        track[i].append((t + dur, x + c * dx - s * dz, z + s * dx + c * dz, th + dth, int(tt["next_clip"][clip, k])))
        done[i] += 1
    t_end = min(tr[-1][0] for tr in track)
    times = np.arange(0.0, t_end, real(dt, "dt"))
    positions = np.array([[where(j, t)[0] for j in range(P)] for t in times]).reshape(len(times), P, 2)
    headings = np.array([[np.interp(t, [a[0] for a in track[j]], [a[3] for a in track[j]]) for j in range(P)]
                         for t in times]).reshape(len(times), P)
    close, dmin = 0, np.inf
    for a in range(P):
        for b in range(a + 1, P):
            d = np.linalg.norm(positions[:, a] - positions[:, b], axis=1)
            dmin = min(dmin, float(d.min()) if d.size else np.inf)
            close += int(np.any(d < encounter_distance))
    return CrowdResult(times, positions, headings, close, dmin)
