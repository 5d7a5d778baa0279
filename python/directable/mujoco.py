"""MuJoCo as a plant: LQR tracking and Stable PD (Tan, Liu & Turk 2011) on any MuJoCo model.

Needs the optional extra: ``pip install "directable[mujoco]"`` (MuJoCo >= 3.1).

State convention (tangent space, the one of ``mjd_transitionFD``)
    ``x = [dq (nv), qvel (nv), act (na)]``, ``nx = 2 nv + na``. ``dq`` is
    the position as a displacement from the model's reference pose
    ``model.qpos0``: ``qpos = mj_integratePos(qpos0, dq, 1)`` and
    ``dq = mj_differentiatePos(qpos0, qpos)``. Hinge and slide joints
    therefore hold ``qpos - qpos0``; a ball joint holds the rotation vector
    (axis times angle, in the joint's local frame) of ``qpos0^-1 qpos``; a
    free joint holds its position offset and that rotation vector. The chart
    is one-to-one for rotations below pi from ``qpos0``. Differences of
    states, ``x (-) x_ref``, are never vector subtractions of positions: the
    position part is ``mj_differentiatePos(qpos_ref, qpos)``, the tangent
    vector of the linearization ``A``, ``B``.

Quaternions given by the caller (``qpos``-sized arguments of ``spd``) that
are not unit length are normalised; a deviation beyond 1e-6 also issues a
``UserWarning``; a zero or non-finite quaternion is a ``ValueError``.

Loops. ``reference_rollout`` (open loop) uses ``mujoco.rollout``, MuJoCo's
C++ loop. ``run`` is one call into directable's C++ core for an
``LQRTracker`` or ``SPDTracker`` with an array (or no) disturbance
(generalized forces, or Cartesian forces on the bodies): the core
(``sim/mujoco_loop``) calls MuJoCo's C API, which it finds at run time in
the shared library the ``mujoco`` package loaded (where the process mapped
it from, else ``libmujoco.so.*`` beside ``mujoco/__init__.py``:
``dlopen``/``dlsym``, so directable builds without MuJoCo), on the addresses of ``MjModel``/``MjData`` and of their NumPy
views. It releases the GIL, stops on Ctrl-C and reports a bad state with
its step. The C API types were written against MuJoCo 4.0 (``mujoco.h`` of
4.0.0); another major.minor release is refused by the compiled path, and
then, as for a callable disturbance, a ``callback``, a tracker of another
class (subclasses included: their ``control`` is Python) or
``engine="python"``, ``run`` is a Python loop over
MuJoCo's step functions (``mj_step1`` / ``mj_step2`` where the controller
needs the current mass matrix) with the same results to rounding.
``compiled_loop_available()`` says which applies. ``spd`` likewise uses the
compiled kernel (mj_fullM, then eq. 11 by the tree-sparse L'DL factorisation
of ``M + dt (D + Kd)``) and falls back to NumPy + ``chain.spd_step``.
benchmarks/bench_mujoco.py measures both against ``mj_step`` alone.

Divergence: MuJoCo resets a state that goes non-finite (``mjWARN_BADQACC``
and friends); ``run`` checks the warning counters and the state after every
step and reports the first bad step in ``RunResult.diverged_at`` (with a
``RuntimeWarning``), its later rows NaN.
"""
from __future__ import annotations

import os
import time
import warnings
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

try:
    import mujoco as _mj
    from mujoco import rollout as _rollout
except ImportError:  # pragma: no cover - exercised only without the extra
    raise ImportError('directable.mujoco needs MuJoCo: pip install "directable[mujoco]" '
                      '(or pip install "mujoco>=3.1")') from None

import glob

from . import _core
from . import lqr as _lqr
from ._validate import as_float_array, finite_array, index_array, integer, iterable, progress_callback, real

_BAD_WARNINGS = tuple(int(w) for w in (_mj.mjtWarning.mjWARN_BADQACC, _mj.mjtWarning.mjWARN_BADQPOS,
                                       _mj.mjtWarning.mjWARN_BADQVEL, _mj.mjtWarning.mjWARN_BADCTRL))


_MAXVAL = 1e10  # MuJoCo's mjMAXVAL: a larger control or force is "bad"


def _bad_warnings(data):
    return sum(data.warning[k].number for k in _BAD_WARNINGS)


# ----------------------------------------------------------------------------- helpers

def _check_model(model, data=None):
    if model is None or not isinstance(model, _mj.MjModel):
        raise ValueError(f"model must be a mujoco.MjModel, got {type(model).__name__}")
    if data is not None and not isinstance(data, _mj.MjData):
        raise ValueError(f"data must be a mujoco.MjData, got {type(data).__name__}")


def _step_data(i, data, T):
    """The step index of a tracker's ``control`` (0 <= i < T) and its MjData, or TypeError / ValueError naming them."""
    i = integer(i, "i")
    if not 0 <= i < T:
        raise ValueError(f"i must be in [0, {T}), got {i}")
    if not isinstance(data, _mj.MjData):
        raise TypeError(f"data must be a mujoco.MjData, got {type(data).__name__}")
    return i


def nx(model) -> int:
    """Size of the tangent state of ``model``.

    Parameters
    ----------
    model : mujoco.MjModel
        The MuJoCo model.

    Returns
    -------
    int
        ``nx = 2 nv + na`` (see the module docstring for the layout).
    """
    _check_model(model)
    return 2 * model.nv + model.na


def _array(x, name, shape):
    """float64 array of exactly ``shape`` (``-1`` entries free), finite; ValueError naming ``name``."""
    if x is None:
        raise ValueError(f"{name} must be an array of shape {_fmt(shape)}, got None")
    a = as_float_array(x, name)
    if a.ndim != len(shape) or any(s not in (-1, t) for s, t in zip(shape, a.shape)):
        raise ValueError(f"{name} must have shape {_fmt(shape)}, got {a.shape}")
    if not np.isfinite(a.sum()) and not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite, got non-finite entries")
    return a


def _fmt(shape):
    return "(" + ", ".join("T" if s == -1 else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


_FREE, _BALL = int(_mj.mjtJoint.mjJNT_FREE), int(_mj.mjtJoint.mjJNT_BALL)


def _quat_slices(model):
    """Start indices in qpos of every quaternion (ball: 4 values, free: after 3 positions)."""
    jt = np.asarray(model.jnt_type)
    adr = np.asarray(model.jnt_qposadr)
    return np.sort(np.concatenate([adr[jt == _BALL], adr[jt == _FREE] + 3])).astype(int)


def normalize_quaternions(model, qpos, name="qpos"):
    """``qpos`` with each ball / free joint quaternion made unit length.

    A deviation of the norm from 1 beyond 1e-6 warns (``UserWarning``); a
    zero or non-finite quaternion raises ``ValueError`` naming ``name``.

    Parameters
    ----------
    model : mujoco.MjModel
        The MuJoCo model.
    qpos : (nq,) or (T, nq) array_like
        Generalized positions (m, rad; quaternions of ball and free joints).
    name : str
        The argument's name in error messages and warnings.

    Returns
    -------
    (nq,) or (T, nq) ndarray
        A normalised copy (the input is not modified).
    """
    _check_model(model)
    q = np.array(_array(qpos, name, (-1, model.nq)) if np.ndim(qpos) == 2 else _array(qpos, name, (model.nq,)))
    starts = _quat_slices(model)
    if starts.size == 0:
        return q
    idx = starts[:, None] + np.arange(4)[None, :]
    quats = q[..., idx]
    norm = np.linalg.norm(quats, axis=-1, keepdims=True)
    if np.any(norm < 1e-9):
        raise ValueError(f"{name} holds a zero quaternion (ball/free joint); expected unit quaternions")
    if np.any(np.abs(norm - 1.0) > 1e-6):
        warnings.warn(f"{name}: quaternions of norm {float(np.max(np.abs(norm - 1))) + 1:.6g} normalised to 1",
                      UserWarning, stacklevel=2)
    q[..., idx] = quats / norm
    return q


def _full_mass(model, data, out):
    try:  # MuJoCo >= 3.3: mj_fullM(m, d, dst)
        _mj.mj_fullM(model, data, out)
    except TypeError:  # older: mj_fullM(m, dst, qM)
        _mj.mj_fullM(model, out, data.qM)
    return out


# ----------------------------------------------------------------------------- the compiled path

_LIBRARY = []  # [MujocoLibrary or the reason it is unavailable (str)], filled on first use


def _library():
    """The MuJoCo C API for the compiled loops, or None when unavailable (see ``compiled_loop_available``)."""
    if not _LIBRARY:
        folder = os.path.dirname(_mj.__file__)
        found = _loaded_libraries() or sorted(
            glob.glob(os.path.join(folder, "libmujoco.so*")) + glob.glob(os.path.join(folder, "libmujoco*.dylib"))
            + glob.glob(os.path.join(folder, "mujoco.dll")))
        if not found:
            _LIBRARY.append(f"no MuJoCo shared library beside {_mj.__file__}")
        else:
            try:
                _LIBRARY.append(_core.MujocoLibrary(found[-1]))
            except ValueError as e:
                _LIBRARY.append(str(e))
    lib = _LIBRARY[0]
    return None if isinstance(lib, str) else lib


def _loaded_libraries():
    """Paths of the MuJoCo library already mapped into this process (Linux), the one ``import mujoco``
    loaded wherever it lives; empty where the process' maps cannot be read."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split(None, 5)[5].strip() for line in maps
                     if "libmujoco" in line and len(line.split(None, 5)) == 6}
    except OSError:
        return []
    return sorted(p for p in paths if os.path.isfile(p))


def compiled_loop_available():
    """Whether ``run`` and ``spd`` use the compiled path, and why not.

    The compiled path needs MuJoCo's C API, found at run time in the
    installed ``mujoco`` package, of the release it was written for (4.0).

    Returns
    -------
    available : bool
        True when the compiled loops run.
    detail : str
        The shared library's path when available, else the reason.
    """
    lib = _library()
    return (True, lib.path) if lib is not None else (False, _LIBRARY[0])


def _address(a):
    return a.__array_interface__["data"][0]


_MODEL_VIEWS = weakref.WeakKeyDictionary()
_DATA_VIEWS = weakref.WeakKeyDictionary()


def _model_view(model):
    view = _MODEL_VIEWS.get(model)
    if view is None:
        view = _MODEL_VIEWS[model] = _core.MujocoModel(
            _library(), model._address, model.nq, model.nv, model.na, model.nu, model.nbody,
            np.asarray(model.dof_parentid, dtype=np.int32), _quat_slices(model).astype(np.int32),
            _address(model.qpos0), _address(model.dof_damping))
    return view


def _data_entry(model, data):
    """``(model address, MujocoData view, MujocoModel view, model.opt, model.dof_damping)`` of ``data``,
    made once per MjData (ValueError if it belongs to another model). The entry holds the model's
    option struct and damping view (which keep the model alive), never ``data`` itself."""
    entry = _DATA_VIEWS.get(data)
    if entry is None or entry[0] != model._address:
        if data.model._address != model._address:
            raise ValueError("data must be an MjData of model (it was made for another MjModel)")
        counters = data.warning.number
        base, stride = _address(counters), counters.strides[0]
        mview = _model_view(model)
        view = _core.MujocoData(mview, data._address, _address(data.qpos), _address(data.qvel), _address(data.act),
                                _address(data.ctrl), _address(data.qfrc_applied), _address(data.xfrc_applied),
                                _address(data.qfrc_bias),
                                _address(data.qfrc_passive), [base + stride * k for k in _BAD_WARNINGS])
        entry = _DATA_VIEWS[data] = (model._address, view, mview, model.opt, model.dof_damping)
    return entry


def _data_view(model, data):
    """The compiled view of ``data`` (see ``_data_entry``)."""
    return _data_entry(model, data)[1]


# ----------------------------------------------------------------------------- state

def qpos_of(model, x) -> np.ndarray:
    """Generalized positions of tangent states (``mj_integratePos`` from ``qpos0``).

    Parameters
    ----------
    model : mujoco.MjModel
        The MuJoCo model.
    x : (nx,) or (T, nx) array_like
        Tangent states ``[dq, qvel, act]``.

    Returns
    -------
    (nq,) or (T, nq) ndarray
        ``qpos`` of each state (m, rad; unit quaternions).
    """
    _check_model(model)
    n = nx(model)
    x = _array(x, "x", (-1, n)) if np.ndim(x) == 2 else _array(x, "x", (n,))
    flat = np.atleast_2d(x)
    out = np.empty((flat.shape[0], model.nq))
    for i, xi in enumerate(flat):
        out[i] = model.qpos0
        _mj.mj_integratePos(model, out[i], xi[:model.nv].copy(), 1.0)
    return out if x.ndim == 2 else out[0]


def tangent_of(model, qpos, qvel=None, act=None) -> np.ndarray:
    """Tangent states of positions, velocities and actuator states.

    Parameters
    ----------
    model : mujoco.MjModel
        The MuJoCo model.
    qpos : (nq,) or (T, nq) array_like
        Generalized positions (quaternions normalised, see
        ``normalize_quaternions``).
    qvel : (nv,) or (T, nv) array_like, optional
        Generalized velocities (zero if None).
    act : (na,) or (T, na) array_like, optional
        Actuator states (zero if None).

    Returns
    -------
    (nx,) or (T, nx) ndarray
        ``x = [qpos (-) qpos0, qvel, act]``.
    """
    _check_model(model)
    q = normalize_quaternions(model, qpos, "qpos")
    flat = np.atleast_2d(q)
    T = flat.shape[0]
    x = np.zeros((T, nx(model)))
    for i, qi in enumerate(flat):
        _mj.mj_differentiatePos(model, x[i, :model.nv], 1.0, model.qpos0, qi)
    if qvel is not None:
        x[:, model.nv:2 * model.nv] = _array(qvel, "qvel", (T, model.nv) if q.ndim == 2 else (model.nv,))
    if act is not None:
        x[:, 2 * model.nv:] = _array(act, "act", (T, model.na) if q.ndim == 2 else (model.na,))
    return x if q.ndim == 2 else x[0]


def state(model, data) -> np.ndarray:
    """Tangent state of ``data`` (see the module docstring).

    Parameters
    ----------
    model : mujoco.MjModel
        The MuJoCo model.
    data : mujoco.MjData
        The simulation state of ``model``.

    Returns
    -------
    (nx,) ndarray
        ``x = [dq, qvel, act]`` with ``dq = qpos (-) qpos0``.
    """
    _check_model(model, data)
    if data is None:
        raise ValueError("data must be a mujoco.MjData, got None")
    x = np.empty(nx(model))
    _mj.mj_differentiatePos(model, x[:model.nv], 1.0, model.qpos0, data.qpos)
    x[model.nv:2 * model.nv] = data.qvel
    x[2 * model.nv:] = data.act
    return x


def set_state(model, data, x) -> None:
    """Write a tangent state into ``data``.

    Sets ``qpos``, ``qvel`` and ``act``; derived quantities (positions of
    bodies, contacts) are not recomputed.

    Parameters
    ----------
    model : mujoco.MjModel
        The MuJoCo model.
    data : mujoco.MjData
        Written in place.
    x : (nx,) array_like
        Tangent state ``[dq, qvel, act]``.
    """
    _check_model(model, data)
    x = _array(x, "x", (nx(model),))
    data.qpos[:] = model.qpos0
    _mj.mj_integratePos(model, data.qpos, x[:model.nv].copy(), 1.0)
    data.qvel[:] = x[model.nv:2 * model.nv]
    data.act[:] = x[2 * model.nv:]


def difference(model, x, x_ref) -> np.ndarray:
    """``x (-) x_ref``: the tangent vector from ``x_ref`` to ``x``.

    Parameters
    ----------
    model : mujoco.MjModel
        The MuJoCo model.
    x, x_ref : (nx,) array_like
        Tangent states.

    Returns
    -------
    (nx,) ndarray
        Positions by ``mj_differentiatePos(qpos_ref, qpos)`` (not a vector
        subtraction), velocities and actuator states subtracted.
    """
    _check_model(model)
    n = nx(model)
    x, x_ref = _array(x, "x", (n,)), _array(x_ref, "x_ref", (n,))
    d = x - x_ref
    _mj.mj_differentiatePos(model, d[:model.nv], 1.0, qpos_of(model, x_ref), qpos_of(model, x))
    return d


# ----------------------------------------------------------------------------- linearization

def linearize(model, reference, ctrl_ref, eps=1e-6, centered=True, threads=None):
    """Discrete linearization along a reference with MuJoCo's ``mjd_transitionFD``.

    Parameters
    ----------
    model : mujoco.MjModel
        The plant.
    reference : (T+1, nx) or (T, nx) array_like
        Tangent states (the last one is not needed).
    ctrl_ref : (T, nu) array_like
        Controls along the reference.
    eps : float
        Finite-difference step (> 0), in tangent units.
    centered : bool
        Centred (True) or forward differences.
    threads : int, optional
        Worker threads, each stepping its own copy of ``MjData`` (MuJoCo
        releases the GIL); default ``os.cpu_count()``.

    Returns
    -------
    A : (T, nx, nx) ndarray
        State Jacobians: ``dx_{i+1} = A_i dx_i + B_i du_i``, ``dx`` in the
        tangent space of the module docstring.
    B : (T, nx, nu) ndarray
        Control Jacobians.
    """
    _check_model(model)
    n = nx(model)
    ctrl_ref = _array(ctrl_ref, "ctrl_ref", (-1, model.nu))
    T = ctrl_ref.shape[0]
    reference = _array(reference, "reference", (-1, n))
    if reference.shape[0] not in (T, T + 1):
        raise ValueError(f"reference must have shape ({T + 1}, {n}) for ctrl_ref of {T} steps, "
                         f"got {reference.shape}")
    if T < 1:
        raise ValueError(f"ctrl_ref must hold at least one step, got shape {ctrl_ref.shape}")
    eps = real(eps, "eps")
    if not eps > 0:
        raise ValueError(f"eps must be > 0, got {eps}")
    threads = (os.cpu_count() or 1) if threads is None else integer(threads, "threads")
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    A = np.zeros((T, n, n))
    B = np.zeros((T, n, model.nu))
    threads = min(threads, T)
    chunks = np.array_split(np.arange(T), threads)

    def work(idx):
        d = _mj.MjData(model)
        for i in idx:
            set_state(model, d, reference[i])
            d.ctrl[:] = ctrl_ref[i]
            _mj.mjd_transitionFD(model, d, eps, bool(centered), A[i], B[i], None, None)

    if threads == 1:
        work(chunks[0])
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(work, chunks))
    return A, B


def reference_rollout(model, x0, ctrl, data=None):
    """Open-loop states of ``ctrl`` from ``x0`` with ``mujoco.rollout``.

    Parameters
    ----------
    model : mujoco.MjModel
        The plant.
    x0 : (nx,) array_like
        Tangent initial state.
    ctrl : (T, nu) array_like
        Controls.
    data : mujoco.MjData, optional
        The MjData to roll out with (a new one if None); it ends in the last
        state.

    Returns
    -------
    (T+1, nx) ndarray
        Tangent states, ``x[0] = x0``.

    Raises
    ------
    RuntimeError
        Naming the step, if the rollout goes non-finite or MuJoCo flags it
        unstable.
    """
    _check_model(model, data)
    n = nx(model)
    x0 = _array(x0, "x0", (n,))
    ctrl = _array(ctrl, "ctrl", (-1, model.nu))
    T = ctrl.shape[0]
    if T < 1:
        raise ValueError(f"ctrl must hold at least one step, got shape {ctrl.shape}")
    d = _mj.MjData(model) if data is None else data
    set_state(model, d, x0)
    spec = _mj.mjtState.mjSTATE_FULLPHYSICS
    s0 = np.empty(_mj.mj_stateSize(model, spec))
    _mj.mj_getState(model, d, s0, spec)
    warn0 = _bad_warnings(d)
    states, _ = _rollout.rollout(model, d, s0[None], ctrl[None])
    states = states[0]
    if _bad_warnings(d) != warn0:  # MuJoCo flagged a step: find which, with a plain loop
        _mj.mj_setState(model, d, s0, spec)
        for i in range(T):
            w0 = _bad_warnings(d)
            d.ctrl[:] = ctrl[i]
            _mj.mj_step(model, d)
            if _bad_warnings(d) != w0:
                raise RuntimeError(f"reference_rollout diverged at step {i} (MuJoCo flagged the state or "
                                   f"control as unstable)")
    # layout of mjSTATE_FULLPHYSICS: time, qpos, qvel, act, ...
    qpos = states[:, 1:1 + model.nq]
    qvel = states[:, 1 + model.nq:1 + model.nq + model.nv]
    act = states[:, 1 + model.nq + model.nv:1 + model.nq + model.nv + model.na]
    ok = np.all(np.isfinite(states), axis=1) & (states[:, 0] > s0[0])
    if not np.all(ok):
        i = int(np.argmin(ok))
        raise RuntimeError(f"reference_rollout diverged at step {i} (non-finite state or MuJoCo reset)")
    x = np.empty((T + 1, n))
    x[0] = x0
    x[1:] = tangent_of(model, qpos, qvel, act)
    return x


# ----------------------------------------------------------------------------- LQR

class LQRTracker:
    """Time-varying LQR feedback on MuJoCo controls: ``w = w_ff + K (x (-) x_ref)``.

    Parameters
    ----------
    model : mujoco.MjModel
        The plant.
    x_ref : (T+1, nx) array_like
        Tangent reference states.
    K : (T, nu, nx) or (nu, nx) array_like, or lqr.LQRSolution
        Gains (``directable`` sign convention: K carries the minus sign);
        one (nu, nx) gain holds for every step.
    ctrl_ref : (T, nu) array_like, optional
        Feed-forward controls ``w_ff`` (zero if None).

    The feedback product runs in the C++ ``lqr.Tracker`` on the tangent
    difference, which is taken with ``mj_differentiatePos``.
    """

    target = "ctrl"

    def __init__(self, model, x_ref, K, ctrl_ref=None):
        _check_model(model)
        n = nx(model)
        self.model = model
        self.x_ref = _array(x_ref, "x_ref", (-1, n))
        T = self.x_ref.shape[0] - 1
        if T < 1:
            raise ValueError(f"x_ref must hold at least two states, got shape {self.x_ref.shape}")
        if isinstance(K, _lqr.LQRSolution):
            K = K.K
        K = as_float_array(K, "K")
        if K.shape not in ((T, model.nu, n), (model.nu, n)):
            raise ValueError(f"K must have shape ({T}, {model.nu}, {n}) or ({model.nu}, {n}), got {K.shape}")
        self.ctrl_ref = np.zeros((T, model.nu)) if ctrl_ref is None else _array(ctrl_ref, "ctrl_ref",
                                                                                 (T, model.nu))
        self.steps = T
        self.qpos_ref = qpos_of(model, self.x_ref)
        self._tracker = _lqr.tracker(K, np.zeros((T + 1, n)), self.ctrl_ref)
        nv = model.nv
        self._dx = np.zeros(n)
        self._dq, self._dv, self._da = self._dx[:nv], self._dx[nv:2 * nv], self._dx[2 * nv:]
        self._qvel_ref = np.ascontiguousarray(self.x_ref[:, nv:2 * nv])
        self._act_ref = np.ascontiguousarray(self.x_ref[:, 2 * nv:])
        self._na = model.na
        self._w = np.zeros(model.nu)
        self._wfb = np.zeros(model.nu)

    @classmethod
    def from_linearization(cls, model, x_ref, ctrl_ref, Q, R, Q_final=None, eps=1e-6, threads=None):
        """A tracker whose gains come from linearizing the model along the reference.

        ``linearize`` along ``(x_ref, ctrl_ref)``, then the Riccati sweep
        (``lqr.solve_discrete``).

        Parameters
        ----------
        model : mujoco.MjModel
            The plant.
        x_ref : (T+1, nx) array_like
            Tangent reference states.
        ctrl_ref : (T, nu) array_like
            Feed-forward controls.
        Q : scalar, (nx,) or (nx, nx) array_like
            State weight (any form ``lqr.solve_discrete`` takes), symmetric
            positive semidefinite (checked as there).
        R : scalar, (nu,) or (nu, nu) array_like
            Control weight, symmetric positive semidefinite.
        Q_final : scalar, (nx,) or (nx, nx) array_like, optional
            Final state weight (default ``Q``), symmetric positive
            semidefinite.
        eps : float
            Finite-difference step of the linearization (tangent units).
        threads : int, optional
            Threads of the linearization (default: all cores).

        Returns
        -------
        LQRTracker
        """
        A, B = linearize(model, x_ref, ctrl_ref, eps=eps, threads=threads)
        sol = _lqr.solve_discrete(A, B, Q, R, Q if Q_final is None else Q_final)
        return cls(model, x_ref, sol, ctrl_ref)

    def reset(self):
        """Back to step 0."""
        self._tracker.rewind()

    def control(self, i, data) -> np.ndarray:
        """Control at step ``i`` for the state in ``data``.

        Parameters
        ----------
        i : int
            Step index, 0 <= i < T.
        data : mujoco.MjData
            The current state.

        Returns
        -------
        (nu,) ndarray
            ``w_ff[i] + K_i (x (-) x_ref[i])``: a view of the tracker's
            buffer, overwritten by the next call.
        """
        i = _step_data(i, data, len(self.qpos_ref) - 1)
        _mj.mj_differentiatePos(self.model, self._dq, 1.0, self.qpos_ref[i], data.qpos)
        np.subtract(data.qvel, self._qvel_ref[i], out=self._dv)
        if self._na:
            np.subtract(data.act, self._act_ref[i], out=self._da)
        tracker = self._tracker
        tracker.index = i
        tracker.control_into(self._dx, self._w, self._wfb)
        return self._w


# ----------------------------------------------------------------------------- SPD

def gain_schedule(k, steps, nv, name="kp"):
    """A gain as a per-step, per-DOF schedule.

    Parameters
    ----------
    k : scalar, (nv,) or (steps, nv) array_like
        The gain, >= 0 (N m / rad or N m s / rad).
    steps : int
        Number of steps, >= 1.
    nv : int
        Number of DOFs, >= 1.
    name : str
        The argument's name in error messages.

    Returns
    -------
    (steps, nv) ndarray
        The gain broadcast to every step and DOF (a contiguous copy).
    """
    steps = integer(steps, "steps")
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    nv = integer(nv, "nv")
    if nv < 1:
        raise ValueError(f"nv must be >= 1, got {nv}")
    if k is None:
        raise ValueError(f"{name} must be a scalar, ({nv},) or ({steps}, {nv}), got None")
    k = as_float_array(k, name)
    if k.shape not in ((), (nv,), (steps, nv)):
        raise ValueError(f"{name} must be a scalar, ({nv},) or ({steps}, {nv}), got shape {k.shape}")
    if not np.all(np.isfinite(k)) or np.any(k < 0):
        raise ValueError(f"{name} must be finite and >= 0, got min {float(np.min(k))}")
    return np.ascontiguousarray(np.broadcast_to(k, (steps, nv)))


def zordan_hodgins_schedule(steps, dt, contact_steps, k_t, k_r, t_e, t_f):
    """Gain multiplier per step of Zordan & Hodgins (2002), Tan et al. Table 3.

    The gain is ``k_t`` (tracking) until a contact; at each step in
    ``contact_steps`` it drops to ``k_r`` (reaction), stays there for
    ``t_e`` seconds, then recovers linearly to ``k_t`` over ``t_f`` seconds.
    A contact during a reaction or recovery restarts the reaction.

    Parameters
    ----------
    steps : int
        Number of steps, >= 1.
    dt : float
        Time step (s), > 0.
    contact_steps : iterable of int
        Step indices where a contact starts.
    k_t, k_r : float
        Tracking and reaction gains, >= 0.
    t_e, t_f : float
        Reaction and recovery durations (s), >= 0.

    Returns
    -------
    (steps,) ndarray
        Gains; multiply by a per-DOF scale (e.g. the mass each joint
        supports).
    """
    steps = integer(steps, "steps")
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    vals = {}
    for name, v in (("dt", dt), ("k_t", k_t), ("k_r", k_r), ("t_e", t_e), ("t_f", t_f)):
        if v is None:
            raise ValueError(f"{name} must be a real number >= 0, got None")
        vals[name] = real(v, name)
        if not (np.isfinite(vals[name]) and vals[name] >= 0):
            raise ValueError(f"{name} must be finite and >= 0, got {vals[name]}")
    if vals["dt"] <= 0:
        raise ValueError(f"dt must be > 0, got {vals['dt']}")
    t = np.arange(steps) * vals["dt"]
    g = np.full(steps, vals["k_t"])
    contacts = index_array(np.atleast_1d(iterable(contact_steps, "contact_steps", "an iterable of int")),
                           "contact_steps", "(k,)")
    if contacts.ndim != 1:
        raise ValueError(f"contact_steps must be a 1-D sequence of step indices, got shape {contacts.shape}")
    for c in sorted(contacts.tolist()):
        if not 0 <= c < steps:
            raise ValueError(f"contact_steps must lie in [0, {steps}), got {c}")
        s = t - t[c]
        after = s >= 0
        rec = np.clip((s - vals["t_e"]) / vals["t_f"], 0, 1) if vals["t_f"] > 0 else (s >= vals["t_e"]) * 1.0
        g = np.where(after, vals["k_r"] + (vals["k_t"] - vals["k_r"]) * rec, g)
    return g


def supported_mass(model) -> np.ndarray:
    """Mass each DOF supports: the subtree mass of the body the DOF moves.

    Parameters
    ----------
    model : mujoco.MjModel
        The MuJoCo model.

    Returns
    -------
    (nv,) ndarray
        Masses (kg), for gains that scale with the load a joint carries.
    """
    _check_model(model)
    return np.asarray(model.body_subtreemass[model.dof_bodyid], dtype=float).copy()


_IMPLICIT = (int(_mj.mjtIntegrator.mjINT_IMPLICIT), int(_mj.mjtIntegrator.mjINT_IMPLICITFAST))
_EULER, _EULERDAMP = int(_mj.mjtIntegrator.mjINT_EULER), int(_mj.mjtDisableBit.mjDSBL_EULERDAMP)


def _implicit_damping(model):
    """Whether MuJoCo's integrator of ``model`` treats joint damping implicitly."""
    opt = model.opt
    integ = int(opt.integrator)
    return integ in _IMPLICIT or (integ == _EULER and not opt.disableflags & _EULERDAMP)


_KERNELS = weakref.WeakKeyDictionary()  # spd()'s buffers, per model


class _SPDKernel:
    """Per-model buffers and constants of ``spd`` (no argument checks: callers check)."""

    def __init__(self, model):
        nv = model.nv
        self.model = model
        self.M = np.zeros((nv, nv))
        self.qpred = np.zeros(model.nq)
        self.p = np.zeros(nv)
        self.qd = np.zeros(nv)
        self.qd_dt = np.zeros(nv)
        self.zero = np.zeros(nv)
        self.damping = np.array(model.dof_damping) if _implicit_damping(model) else np.zeros(nv)
        starts = _quat_slices(model)
        self.quat_idx = starts[:, None] + np.arange(4)[None, :]
        self.diag = np.diag_indices(nv)

    def __call__(self, data, q_ref_next, qd_ref_next, kp, kd, dt, tau_ff=None):
        m = self.model
        _full_mass(m, data, self.M)
        self.M[self.diag] += dt * self.damping
        C = data.qfrc_bias - data.qfrc_passive
        if tau_ff is not None:  # a feed-forward torque enters the prediction like a known force
            C -= tau_ff
        self.qpred[:] = data.qpos
        self.qd[:] = data.qvel
        _mj.mj_integratePos(m, self.qpred, self.qd, dt)
        _mj.mj_differentiatePos(m, self.p, 1.0, q_ref_next, self.qpred)
        # the core's eq. 11 takes e = q + dt qd - q_ref_next: the manifold error p enters as
        # q = p, q_ref_next = dt qd
        np.multiply(self.qd, dt, out=self.qd_dt)
        return _core.spd_step(self.M, C, self.p, self.qd, self.qd_dt,
                              self.zero if qd_ref_next is None else qd_ref_next, kp, kd, dt)


def spd(model, data, q_ref_next, qd_ref_next, kp, kd, dt=None, actuated=None, forward=True,
        return_qacc=False):
    """Stable PD joint torques (Tan, Liu & Turk 2011, eq. 11) on a MuJoCo model.

    ``tau = -Kp (q (+) dt qd (-) qbar_{n+1}) - Kd (qd + dt qdd - qdbar_{n+1})`` with
    ``qdd = (M + dt D + dt Kd)^-1 (-C - Kp (q (+) dt qd (-) qbar) - Kd (qd - qdbar))``,
    ``M`` from ``mj_fullM`` (armature included), ``C = qfrc_bias - qfrc_passive``,
    ``D`` the joint damping when the integrator treats it implicitly
    (Euler, implicit, implicitfast); the position error is taken on the
    joint manifold (``mj_integratePos``, ``mj_differentiatePos``), so ball
    and free joints are handled as rotations. Contact and constraint forces
    are not predicted.

    One call into the compiled kernel (``compiled_loop_available()``):
    ``M + dt (D + Kd)`` is factorised as ``L' D L`` with the sparsity of the
    kinematic tree (``dof_parentid``; Featherstone 2005), O(nv d^2) for a
    tree of depth d. Without it, a NumPy transcription with a dense Cholesky.

    Parameters
    ----------
    model : mujoco.MjModel
        The plant.
    data : mujoco.MjData
        The current state.
    q_ref_next : (nq,) array_like
        Reference ``qpos`` at the next step (quaternions normalised, see
        the module docstring).
    qd_ref_next : (nv,) array_like or None
        Reference velocity at the next step (zero if None).
    kp, kd : scalar or (nv,) array_like
        Gains, >= 0 (N m / rad, N m s / rad; N/m, N s/m for slides).
    dt : float, optional
        Time step (s), > 0; default ``model.opt.timestep``.
    actuated : (nv,) bool array_like, optional
        DOFs that get a torque (None: all); the others get zero torque, and
        still enter the coupled prediction.
    forward : bool
        Compute ``M`` and ``C`` at the current state first
        (``mj_fwdPosition`` + ``mj_fwdVelocity``); False when ``mj_step1``
        has just done it.
    return_qacc : bool
        Also return the predicted acceleration.

    Returns
    -------
    tau : (nv,) ndarray
        Generalized forces to apply (e.g. to ``data.qfrc_applied``).
    qacc : (nv,) ndarray
        The predicted acceleration; only with ``return_qacc``.
    """
    if type(model) is not _mj.MjModel or type(data) is not _mj.MjData:
        _check_model(model, data)
        if data is None:
            raise ValueError("data must be a mujoco.MjData, got None")
    if dt is None:
        dt = model.opt.timestep
    if _library() is not None:  # the compiled kernel checks every argument
        entry = _DATA_VIEWS.get(data)
        if entry is None or entry[0] != model._address:
            entry = _data_entry(model, data)
        _, view, mview, opt, damping = entry
        integ = opt.integrator
        implicit = integ in _IMPLICIT or (integ == _EULER and not opt.disableflags & _EULERDAMP)
        if actuated is not None:
            actuated = _mask(actuated, model.nv)
        return _core.mujoco_spd(mview, view, q_ref_next, qd_ref_next, kp, kd, dt, damping if implicit else None,
                                actuated, bool(forward), None, bool(return_qacc))
    return _spd_numpy(model, data, q_ref_next, qd_ref_next, kp, kd, dt, actuated, forward, return_qacc)


def _spd_numpy(model, data, q_ref_next, qd_ref_next, kp, kd, dt, actuated, forward, return_qacc):
    """``spd`` without the compiled kernel (a MuJoCo release other than the one it was written for)."""
    nv, nq = model.nv, model.nq
    dt = real(dt, "dt")
    if not dt > 0:
        raise ValueError(f"dt must be > 0, got {dt}")
    kernel = _KERNELS.get(model)
    if kernel is None:
        kernel = _KERNELS[model] = _SPDKernel(model)
    q_ref_next = _array(q_ref_next, "q_ref_next", (nq,))
    if kernel.quat_idx.size:
        norm = np.sqrt(np.sum(np.square(q_ref_next[kernel.quat_idx]), axis=1))
        if np.any(np.abs(norm - 1.0) > 1e-12):
            q_ref_next = normalize_quaternions(model, q_ref_next, "q_ref_next")
    qd_ref_next = np.zeros(nv) if qd_ref_next is None else _array(qd_ref_next, "qd_ref_next", (nv,))
    kp = _gain(kp, nv, "kp")
    kd = _gain(kd, nv, "kd")
    if actuated is not None:
        mask = _mask(actuated, nv)
        kp = np.where(mask, kp, 0.0)
        kd = np.where(mask, kd, 0.0)
    if forward:
        _mj.mj_fwdPosition(model, data)
        _mj.mj_fwdVelocity(model, data)
    kernel.damping = model.dof_damping if _implicit_damping(model) else kernel.zero
    tau, qacc = kernel(data, q_ref_next, qd_ref_next, kp, kd, dt)
    return (tau, qacc) if return_qacc else tau


def _mask(actuated, nv):
    mask = np.asarray(actuated)
    if mask.shape != (nv,) or mask.dtype != bool:
        raise ValueError(f"actuated must be a bool mask of shape ({nv},), got dtype {mask.dtype} "
                         f"shape {mask.shape}")
    return mask


def _gain(k, nv, name):
    if k is None:
        raise ValueError(f"{name} must be a scalar or ({nv},), got None")
    k = as_float_array(k, name)
    if k.shape not in ((), (nv,)):
        raise ValueError(f"{name} must be a scalar or ({nv},), got shape {k.shape}")
    if not (k.min() >= 0 and np.isfinite(k.max())):
        raise ValueError(f"{name} must be finite and >= 0, got min {float(np.min(k))}")
    return k if k.ndim else np.full(nv, float(k))


class SPDTracker:
    """Stable PD tracking of a ``qpos`` reference, for ``run``.

    The torques go to ``data.qfrc_applied``.

    Parameters
    ----------
    model : mujoco.MjModel
        The plant.
    qpos_ref : (T+1, nq) array_like
        Reference positions (quaternions normalised).
    qvel_ref : (T+1, nv) array_like or None
        Reference velocities (zero if None).
    kp, kd : scalar, (nv,) or (T, nv) array_like
        Gains (a schedule), >= 0 (N m / rad, N m s / rad).
    actuated : (nv,) bool array_like, optional
        DOFs that get a torque (None: all).
    controller : {"spd", "pd"}
        "spd" (eq. 11) or "pd" (explicit: ``-kp (q (-) qbar_n) - kd (qd - qdbar_n)``).
    tau_ff : (T, nv) array_like, optional
        Feed-forward torques added to the servo's (e.g. ``inverse_dynamics``
        of the reference); None for none.
    method : {"auto", "solve", "damping"}
        How "spd" solves eq. 11. "solve": ``spd``'s explicit ``(M + dt D + dt Kd)``
        solve (mj_fullM, C++ Cholesky) after ``mj_step1``. "damping": eq. 11 is the servo
        ``-Kp p + Kd qdbar`` applied explicitly plus ``Kd`` as joint damping that MuJoCo's
        integrator already treats implicitly: ``(M + dt (D + Kd)) qdd = -C - D qd - Kd qd
        - Kp p + Kd qdbar`` is eq. 11 term by term, and MuJoCo's own factorization does
        the solve (``model.dof_damping`` holds ``D + Kd`` during a step and is restored by
        ``run``); the torque ``-Kp p - Kd (qd + dt qdd - qdbar)`` is recovered from the next
        velocity. "auto" (default): "damping" where the integrator treats damping
        implicitly (Euler with eulerdamp, implicit, implicitfast), else "solve".
    """

    target = "qfrc"

    def __init__(self, model, qpos_ref, qvel_ref, kp, kd, actuated=None, controller="spd", tau_ff=None,
                 method="auto"):
        _check_model(model)
        self.model = model
        self.qpos_ref = normalize_quaternions(model, _array(qpos_ref, "qpos_ref", (-1, model.nq)), "qpos_ref")
        T = self.qpos_ref.shape[0] - 1
        if T < 1:
            raise ValueError(f"qpos_ref must hold at least two states, got shape {self.qpos_ref.shape}")
        self.qvel_ref = np.zeros((T + 1, model.nv)) if qvel_ref is None else _array(qvel_ref, "qvel_ref",
                                                                                    (T + 1, model.nv))
        self.kp = gain_schedule(kp, T, model.nv, "kp")
        self.kd = gain_schedule(kd, T, model.nv, "kd")
        if controller not in ("spd", "pd"):
            raise ValueError(f"controller must be 'spd' or 'pd', got {controller!r}")
        self.controller = controller
        self.actuated = None if actuated is None else _mask(actuated, model.nv)
        if self.actuated is not None:
            self.kp[:, ~self.actuated] = 0.0
            self.kd[:, ~self.actuated] = 0.0
        self.tau_ff = None if tau_ff is None else _array(tau_ff, "tau_ff", (T, model.nv))
        self.steps = T
        self._e = np.zeros(model.nv)
        self._kernel = _SPDKernel(model)
        if method not in ("auto", "solve", "damping"):
            raise ValueError(f"method must be 'auto', 'solve' or 'damping', got {method!r}")
        implicit = _implicit_damping(model)
        if method == "damping" and not implicit:
            raise ValueError("method 'damping' needs an integrator that treats joint damping implicitly "
                             f"(Euler, implicit, implicitfast), got {model.opt.integrator}")
        self.method = ("damping" if implicit else "solve") if method == "auto" else method
        self.needs_forward = controller == "spd" and self.method == "solve"
        self._dt = float(model.opt.timestep)
        self._qpred = np.zeros(model.nq)
        self._damp0 = np.array(model.dof_damping)
        self._damp_view = model.dof_damping
        self._kd_used = np.zeros((T, model.nv))
        self._custom_kd = False  # _torque() was called with gains other than the schedule's
        self._fast = controller == "spd" and self.method == "damping" and self.tau_ff is None
        self._kdq = self.kd * self.qvel_ref[1:] if self._fast else None
        self._tau = np.zeros(model.nv)

    def control(self, i, data) -> np.ndarray:
        """Servo input for step ``i``.

        Parameters
        ----------
        i : int
            Step index, 0 <= i < T.
        data : mujoco.MjData
            The current state (for "spd" by "solve", ``M`` and ``C``
            current: after ``mj_step1``).

        Returns
        -------
        (nv,) ndarray
            The torque (N m) for "pd" and "spd" by "solve"; for "spd" by
            "damping" the explicit part ``-Kp p + Kd qdbar (+ tau_ff)``, with
            ``model.dof_damping`` set to ``D + Kd`` for the step.
        """
        i = _step_data(i, data, len(self.qpos_ref) - 1)
        if self._fast:
            m, qpred, e, tau = self.model, self._qpred, self._e, self._tau
            qpred[:] = data.qpos
            _mj.mj_integratePos(m, qpred, data.qvel, self._dt)
            _mj.mj_differentiatePos(m, e, 1.0, self.qpos_ref[i + 1], qpred)
            np.add(self._damp0, self.kd[i], out=self._damp_view)
            np.multiply(self.kp[i], e, out=tau)
            return np.subtract(self._kdq[i], tau, out=tau)
        return self._torque(i, data, self.kp[i], self.kd[i], self.qpos_ref[i + 1])

    def reset(self):
        """Nothing to rewind (the step index comes with each call)."""

    def finish(self, u, qvel_next):
        """After a run: restore ``model.dof_damping`` and recover the torques.

        Parameters
        ----------
        u : (T, nv) ndarray
            The inputs ``control`` returned, per step.
        qvel_next : (T, nv) ndarray
            The velocity after each step (rad/s, m/s).

        Returns
        -------
        (T, nv) ndarray
            The applied torques (N m): ``u - Kd qvel_next`` for the "damping"
            method, ``u`` itself otherwise.
        """
        self._damp_view[:] = self._damp0
        return self._finish(finite_array(u, "u"), finite_array(qvel_next, "qvel_next"))

    def _finish(self, u, qvel_next):
        # run() hands over its own buffers, non-finite from a diverged step on: it reports that step itself
        self._damp_view[:] = self._damp0
        nv = self.model.nv
        if u.ndim != 2 or u.shape[1] != nv:
            raise ValueError(f"u must have shape (T, {nv}), got {u.shape}")
        if qvel_next.ndim != 2 or qvel_next.shape[1] != nv or qvel_next.shape[0] < u.shape[0]:
            raise ValueError(f"qvel_next must have shape ({u.shape[0]}, {nv}) (a row per row of u), "
                             f"got {qvel_next.shape}")
        if self.controller == "spd" and self.method == "damping":
            kd = self._kd_used if self._custom_kd else self.kd
            u = u - kd[:u.shape[0]] * qvel_next[:u.shape[0]]
        self._custom_kd = False
        return u

    def _torque(self, i, data, kp, kd, q_ref_next):
        m = self.model
        ff = None if self.tau_ff is None else self.tau_ff[i]
        if self.controller == "spd" and self.method == "damping":
            qpred = self._qpred
            qpred[:] = data.qpos
            _mj.mj_integratePos(m, qpred, data.qvel, self._dt)
            _mj.mj_differentiatePos(m, self._e, 1.0, q_ref_next, qpred)
            np.add(self._damp0, kd, out=self._damp_view)
            self._kd_used[i] = kd
            self._custom_kd = True
            tau = kd * self.qvel_ref[i + 1] - kp * self._e
        elif self.controller == "spd" and _library() is not None:
            tau = _core.mujoco_spd(_model_view(m), _data_view(m, data), q_ref_next, self.qvel_ref[i + 1], kp, kd,
                                   m.opt.timestep, self._kernel.damping, None, False, ff, False)
        elif self.controller == "spd":
            tau = self._kernel(data, q_ref_next, self.qvel_ref[i + 1], kp, kd, m.opt.timestep, ff)[0]
        else:
            _mj.mj_differentiatePos(m, self._e, 1.0, self.qpos_ref[i], data.qpos)
            tau = -kp * self._e - kd * (data.qvel - self.qvel_ref[i])
        return tau if ff is None else tau + ff


def reference_velocities(model, qpos_ref, dt):
    """Velocities and accelerations of a ``qpos`` sequence by tangent differences.

    Centred differences (one-sided at the ends) of ``mj_differentiatePos``.

    Parameters
    ----------
    model : mujoco.MjModel
        The MuJoCo model.
    qpos_ref : (T+1, nq) array_like
        Positions sampled every ``dt``, T >= 1.
    dt : float
        Sampling step (s), > 0.

    Returns
    -------
    qvel : (T+1, nv) ndarray
        Velocities (rad/s, m/s).
    qacc : (T+1, nv) ndarray
        Accelerations (rad/s^2, m/s^2).
    """
    _check_model(model)
    q = normalize_quaternions(model, qpos_ref, "qpos_ref")
    if q.ndim != 2 or q.shape[0] < 2:
        raise ValueError(f"qpos_ref must have shape (T+1, {model.nq}) with T >= 1, got {q.shape}")
    dt = real(dt, "dt")
    if not dt > 0:
        raise ValueError(f"dt must be > 0, got {dt}")
    T1 = q.shape[0]
    step = np.zeros((T1 - 1, model.nv))  # (q_{i+1} (-) q_i) / dt
    for i in range(T1 - 1):
        _mj.mj_differentiatePos(model, step[i], dt, q[i], q[i + 1])
    v = np.empty((T1, model.nv))
    v[0], v[-1] = step[0], step[-1]
    v[1:-1] = 0.5 * (step[:-1] + step[1:])
    a = np.gradient(v, dt, axis=0)
    return v, a


def inverse_dynamics(model, qpos, qvel, qacc) -> np.ndarray:
    """Generalized forces that produce given accelerations (``mj_inverse``).

    Contacts are included as MuJoCo computes them; the result serves as the
    feed-forward torque of a reference.

    Parameters
    ----------
    model : mujoco.MjModel
        The MuJoCo model.
    qpos : (nq,) or (T, nq) array_like
        Positions.
    qvel : (nv,) or (T, nv) array_like
        Velocities.
    qacc : (nv,) or (T, nv) array_like
        Accelerations wanted.

    Returns
    -------
    (T, nv) ndarray
        Generalized forces (N m, N), one row per state (T = 1 for 1-D input).
    """
    _check_model(model)
    q = np.atleast_2d(normalize_quaternions(model, qpos, "qpos"))
    T = q.shape[0]
    v = _array(np.atleast_2d(qvel), "qvel", (T, model.nv))
    a = _array(np.atleast_2d(qacc), "qacc", (T, model.nv))
    d = _mj.MjData(model)
    out = np.empty((T, model.nv))
    for i in range(T):
        d.qpos[:], d.qvel[:], d.qacc[:] = q[i], v[i], a[i]
        _mj.mj_inverse(model, d)
        out[i] = d.qfrc_inverse
    return out


# ----------------------------------------------------------------------------- the closed loop

@dataclass
class RunResult:
    """A closed-loop run of ``run``; rows after a divergence are NaN.

    Parameters
    ----------
    x : (T+1, nx) ndarray
        Tangent states.
    qpos : (T+1, nq) ndarray
        Generalized positions.
    u : (T, nu) or (T, nv) ndarray
        The applied controls (``ctrl``) or torques (``qfrc_applied``, N m).
    diverged : bool
        Whether the run diverged.
    diverged_at : int
        The step whose result was bad, -1 if none.
    """
    x: np.ndarray
    qpos: np.ndarray
    u: np.ndarray
    diverged: bool
    diverged_at: int


def run(model, data, tracker, steps, disturbance=None, callback=None, max_state=1e6, engine="auto",
        progress=None) -> RunResult:
    """Run ``steps`` closed-loop steps of ``tracker`` (``LQRTracker`` or ``SPDTracker``) from ``data``.

    Parameters
    ----------
    model : mujoco.MjModel
        The plant.
    data : mujoco.MjData
        The initial state; advanced in place.
    tracker : LQRTracker, SPDTracker or object
        Anything with ``control(i, data) -> (nu,) or (nv,)``, ``target``
        ("ctrl" or "qfrc") and ``steps`` (the reference length).
    steps : int
        Number of steps, 1 <= steps <= tracker.steps.
    disturbance : array_like, callable or None
        (steps, nv) generalized force added to ``qfrc_applied``
        (N, N m); or (steps, nbody, 6) Cartesian forces and torques on the
        bodies (N, N m, in world axes at each body's centre of mass, as
        ``data.xfrc_applied``), written to ``xfrc_applied`` before each step;
        or a callable ``f(i, model, data)`` that sets anything before step
        ``i`` (Python loop); None for none
    callback : callable, optional
        ``f(i, model, data)`` after each step (e.g. to record).
    max_state : float
        ``|qpos|`` or ``|qvel|`` beyond this counts as divergence.
    engine : {"auto", "compiled", "python"}
        "auto" (default): one C++ call (GIL released, Ctrl-C checked)
        for an ``LQRTracker`` or ``SPDTracker`` with an array or no
        disturbance and no callback, where ``compiled_loop_available()``;
        else the Python loop. "compiled": the C++ call or ``ValueError``
        saying why not. "python": the Python loop (same results to rounding).
    progress : None, bool or callable
        True for a tqdm bar, or ``f(done, total)``, called at most every
        50 ms.

    Returns
    -------
    RunResult
        A divergence (a control or torque beyond 1e10 or not finite,
        MuJoCo's reset after a bad acceleration / state, or ``max_state``)
        is reported with its step index in ``diverged_at`` and as a
        ``RuntimeWarning``.
    """
    _check_model(model, data)
    if tracker is None or not hasattr(tracker, "control"):
        raise ValueError(f"tracker must be an LQRTracker or SPDTracker, got {type(tracker).__name__}")
    steps = integer(steps, "steps")
    if not 1 <= steps <= tracker.steps:
        raise ValueError(f"steps must be in [1, {tracker.steps}] (the tracker's reference), got {steps}")
    max_state = real(max_state, "max_state")
    if not max_state > 0:
        raise ValueError(f"max_state must be > 0, got {max_state}")
    if engine not in ("auto", "compiled", "python"):
        raise ValueError(f"engine must be 'auto', 'compiled' or 'python', got {engine!r}")
    nv = model.nv
    dist_fn = None
    dist = None
    body = None
    if callable(disturbance):
        dist_fn = disturbance
    elif disturbance is not None and np.ndim(disturbance) == 3:
        body = _array(disturbance, "disturbance", (steps, model.nbody, 6))
    elif disturbance is not None:
        if np.ndim(disturbance) != 2:
            raise ValueError(f"disturbance must have shape ({steps}, {nv}) or ({steps}, {model.nbody}, 6), "
                             f"got {np.shape(disturbance)}")
        dist = _array(disturbance, "disturbance", (steps, nv))
    why_not = _why_not_compiled(tracker, dist_fn, callback) if engine != "python" else "engine='python'"
    if why_not is None:
        return _run_compiled(model, data, tracker, steps, dist, body, max_state, progress)
    if engine == "compiled":
        raise ValueError(f"engine='compiled' cannot run this: {why_not}")
    to_ctrl = tracker.target == "ctrl"
    split = getattr(tracker, "needs_forward", False)
    if hasattr(tracker, "reset"):
        tracker.reset()
    qpos = np.full((steps + 1, model.nq), np.nan)
    qvel = np.full((steps + 1, nv), np.nan)
    act = np.full((steps + 1, model.na), np.nan)
    u = np.full((steps, model.nu if to_ctrl else nv), np.nan)
    qpos[0], qvel[0], act[0] = data.qpos, data.qvel, data.act
    bad = -1
    step1, step2, mjstep, control = _mj.mj_step1, _mj.mj_step2, _mj.mj_step, tracker.control
    d_qvel, d_qpos, d_act = data.qvel, data.qpos, data.act  # views into MjData
    d_in = data.ctrl if to_ctrl else data.qfrc_applied
    has_act = model.na > 0
    if to_ctrl:
        data.qfrc_applied[:] = 0.0
    done = 0
    report, close = progress_callback(progress, "MuJoCo run")
    next_report = time.monotonic() + 0.05
    try:
        for i in range(steps):
            t_prev = data.time
            if split:
                step1(model, data)
            w = control(i, data)
            d_in[:] = w
            if dist is not None:
                data.qfrc_applied[:] = dist[i] if to_ctrl else data.qfrc_applied + dist[i]
            if body is not None:
                data.xfrc_applied[:] = body[i]
            if dist_fn is not None:
                dist_fn(i, model, data)
            if split:
                step2(model, data)
            else:
                mjstep(model, data)
            u[i] = w
            done = i + 1
            if not data.time > t_prev:  # MuJoCo reset a state gone bad (time back to 0)
                bad = i
                break
            qpos[i + 1], qvel[i + 1] = d_qpos, d_qvel
            if has_act:
                act[i + 1] = d_act
            if callback is not None:
                callback(i, model, data)
            if report is not None and (time.monotonic() >= next_report or i + 1 == steps):
                report(i + 1, steps)
                next_report = time.monotonic() + 0.05
    finally:
        close()
        if hasattr(tracker, "_finish"):
            u = tracker._finish(u, qvel[1:])
        elif hasattr(tracker, "finish"):
            u = tracker.finish(u, qvel[1:])
    # the first step whose input or resulting state is non-finite or beyond max_state
    ok = (np.all(np.abs(u[:done]) < _MAXVAL, axis=1)
          & np.all(np.abs(qvel[1:done + 1]) <= max_state, axis=1)
          & np.all(np.abs(qpos[1:done + 1]) <= max_state, axis=1))
    if bad >= 0:
        ok[bad] = False
    if not np.all(ok):
        bad = int(np.argmin(ok))
        u[bad:] = np.nan
        qpos[bad + 1:] = np.nan
        qvel[bad + 1:] = np.nan
        act[bad + 1:] = np.nan
    x = np.full((steps + 1, nx(model)), np.nan)
    for i in range(steps + 1 if bad < 0 else bad + 1):
        _mj.mj_differentiatePos(model, x[i, :nv], 1.0, model.qpos0, qpos[i])
    x[:, nv:2 * nv], x[:, 2 * nv:] = qvel, act
    if bad >= 0:
        warnings.warn(f"run diverged at step {bad}", RuntimeWarning, stacklevel=2)
    return RunResult(x, qpos, u, bad >= 0, bad)


def _why_not_compiled(tracker, dist_fn, callback):
    """None when ``run`` can be one C++ call, else the reason."""
    if _library() is None:
        return _LIBRARY[0]
    if type(tracker) not in (LQRTracker, SPDTracker):
        return (f"the tracker is a {type(tracker).__name__}, whose control() is Python "
                "(LQRTracker, SPDTracker run compiled)")
    if dist_fn is not None:
        return "the disturbance is a Python callable"
    if callback is not None:
        return "a Python callback runs after each step"
    return None


def _run_compiled(model, data, tracker, steps, dist, body, max_state, progress):
    view = _data_view(model, data)
    x = np.full((steps + 1, nx(model)), np.nan)
    qpos = np.full((steps + 1, model.nq), np.nan)
    lqr = isinstance(tracker, LQRTracker)
    u = np.full((steps, model.nu if lqr else model.nv), np.nan)
    flat_body = None if body is None else body.reshape(steps, -1)
    cb, close = progress_callback(progress, "MuJoCo run")
    try:
        if lqr:
            done, bad, why = _core.mujoco_run_lqr(_model_view(model), view, tracker._tracker, tracker.qpos_ref,
                                                  tracker._qvel_ref, tracker._act_ref, steps, dist, flat_body,
                                                  max_state, x, qpos, u, cb)
        else:
            damping_method = tracker.controller == "spd" and tracker.method == "damping"
            if damping_method:
                damping = tracker._damp0
            elif tracker.controller == "spd":
                damping = tracker._kernel.damping
            else:
                damping = None
            kind = _core.Servo.spd if tracker.controller == "spd" else _core.Servo.pd
            done, bad, why = _core.mujoco_run_servo(_model_view(model), view, kind, damping_method, tracker.qpos_ref,
                                                    tracker.qvel_ref, tracker.kp, tracker.kd, tracker.tau_ff, damping,
                                                    float(model.opt.timestep), steps, dist, flat_body, max_state, x,
                                                    qpos, u, cb)
    finally:
        close()
    if bad >= 0:
        u[bad:] = np.nan
        warnings.warn(f"run diverged at step {bad}: {why}", RuntimeWarning, stacklevel=3)
    return RunResult(x, qpos, u, bad >= 0, bad)


__all__ = ["nx", "state", "set_state", "qpos_of", "tangent_of", "difference", "normalize_quaternions",
           "linearize", "reference_rollout", "LQRTracker", "SPDTracker", "spd", "gain_schedule",
           "zordan_hodgins_schedule", "supported_mass", "reference_velocities", "inverse_dynamics", "run",
           "RunResult", "compiled_loop_available"]
