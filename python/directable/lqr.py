"""Time-varying LQR (Barbic & Popovic 2008, sec. 4 and appendix A).

Conventions: float64 arrays, time first. A (T, n, n), B (T, n, s),
gains K (T, s, n), cost-to-go P (T+1, n, n), states (T+1, n), controls
(T, s). A single matrix wherever a sequence is allowed means constant in
time; a scalar cost weight means that multiple of the identity.

Discrete problem: x_{i+1} = A_i x_i + B_i u_i, u_i = K_i x_i,
J = x_T' Q_final x_T + sum_i x_i'Q_i x_i + 2 x_i'N_i u_i + u_i'R_i u_i.
"""
from __future__ import annotations

import numpy as np

from . import _core
from ._validate import actuation_matrix, as_float_array, check_size, integer, optional_array, real, run_with_progress, weight

LQRSolution = _core.LQRSolution
StationaryLQR = _core.StationaryLQR
Discretization = _core.Discretization
Tracker = _core.Tracker

_METHODS = {"exact": _core.DiscretizeMethod.exact, "simpson": _core.DiscretizeMethod.simpson}


def _dims(A, B):
    """(n, s) for sizing scalar weights; the core checks the shapes of A and B."""
    return (A.shape[-1] if A.ndim else 0), (B.shape[-1] if B.ndim else 0)


def _weight(x, dim, name):
    """A cost weight as the core takes it: scalar -> multiple of I, (k,) -> diagonal, arrays pass."""
    w = weight(x, dim, name)
    if w.ndim != 1:
        return w
    if w.shape != (dim,):  # the core would see (k, k): name what was given
        raise ValueError(f"{name} must have shape (T, {dim}, {dim}), ({dim}, {dim}), ({dim},) (the diagonal) or be a "
                         f"scalar, got {w.shape}")
    return np.diag(w)


def _final_weight(Q_final, n):
    """Q_final as the core takes it: a weight, or "dare" (the stationary P of the last step)."""
    if isinstance(Q_final, str):
        if Q_final != "dare":
            raise ValueError(f"Q_final must be an (n, n) array, a scalar or 'dare', got {Q_final!r}")
        return Q_final
    return _weight(Q_final, n, "Q_final")


def solve_discrete(A, B, Q, R, Q_final, N=None, horizon=None, progress=None,
                   allow_indefinite_Q=False) -> LQRSolution:
    """Riccati backward sweep of the discrete time-varying LQR problem.

    Parameters
    ----------
    A : (T, n, n) or (n, n) array_like
        State transitions, time first.
    B : (T, n, s) or (n, s) array_like
        Control matrices.
    Q : (T, n, n), (n, n), (n,) diagonal or scalar (times identity)
        State weight, symmetric positive semidefinite.
    R : (T, s, s), (s, s), (s,) diagonal or scalar
        Control weight, symmetric positive semidefinite.
    Q_final : (n, n), (n,), scalar, or ``"dare"``
        Terminal weight, symmetric positive semidefinite; ``"dare"``: the
        stationary P of the last step's problem (``solve_stationary(A[-1],
        B[-1], Q[-1], R[-1], N[-1]).P``), the natural terminal cost of a
        problem that goes on like its last step.
    N : (T, n, s), (n, s) or None, optional
        Cross term ``2 x' N u``.
    horizon : int, optional
        T, required only when every matrix is constant.
    progress : None, True (tqdm bar) or callable(done, total), optional
        Progress report; Ctrl-C stops the sweep.
    allow_indefinite_Q : bool, optional
        Let Q and Q_final be indefinite (checked symmetric only), as in the
        DARE literature (DAREX #4): the problem is well posed while every
        ``H_i`` below is positive definite. Off by default: a negative
        weight is far more often a sign error than an intent.

    Returns
    -------
    LQRSolution
        ``.K`` (T, s, n) and ``.P`` (T+1, n, n), read-only views of C++
        memory that live as long as the solution or any view of it.

    Raises
    ------
    ValueError
        A shape (naming the argument, the expected and the received shape),
        a non-finite entry, or a weight that breaks the rules in Notes.

    Notes
    -----
    Weights are checked in the C++ core (the same check as the MPC's):
    symmetric means ``|M_ij - M_ji| <= 1e-10 max|M|``; positive
    semidefinite means the smallest eigenvalue of the symmetric part is
    ``>= -1e-12 max|M|`` (the message gives that eigenvalue). R may be
    singular or zero: what must hold is that ``H_i = R_i + B_i' P_{i+1} B_i``
    is positive definite at every step, each pivot of its Cholesky
    factorization above ``1e-13`` times its diagonal entry. Otherwise a
    ValueError names the step, the pivot and the weight to blame (R,
    Q_final, or the P that an indefinite Q made).
    """
    A = as_float_array(A, "A")
    B = as_float_array(B, "B")
    n, s = _dims(A, B)
    return run_with_progress(
        _core.solve_discrete,
        progress,
        "Riccati sweep",
        A=A,
        B=B,
        Q=_weight(Q, n, "Q"),
        R=_weight(R, s, "R"),
        Q_final=_final_weight(Q_final, n),
        N=optional_array(N, "N"),
        horizon=_horizon(horizon),
        allow_indefinite_Q=_flag(allow_indefinite_Q),
    )


def _flag(x, name="allow_indefinite_Q"):
    """A bool option (numpy bools too); anything else is a TypeError naming it."""
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    raise TypeError(f"{name} must be True or False, got {type(x).__name__}")


def solve_stationary(A, B, Q, R, N=None, progress=None, allow_indefinite_Q=False) -> StationaryLQR:
    """Stationary (infinite-horizon) LQR: the stabilizing solution of the DARE.

    ``P = Q + A'PA - G' (R + B'PB)^{-1} G`` with ``G = B'PA + N'``, and the
    gain ``K = -(R + B'PB)^{-1} G`` (``u = K x``) for which ``A + B K`` is
    stable. Solved in C++ by the structure-preserving doubling algorithm
    (quadratic convergence: closed-loop eigenvalues near the unit circle cost
    a few more doublings, where iterating the Riccati sweep would need
    ``~1 / (1 - rho)`` steps), then Newton steps on the residual.

    Parameters
    ----------
    A : (n, n) array_like
        State transition.
    B : (n, s) array_like
        Control matrix.
    Q : (n, n), (n,) diagonal or scalar
        State weight, symmetric positive semidefinite (tolerances as in
        :func:`solve_discrete`).
    R : (s, s), (s,) diagonal or scalar
        Control weight, symmetric positive semidefinite (singular R is fine
        where ``R + B'PB`` is positive definite).
    N : (n, s) or None, optional
        Cross term ``2 x' N u``.
    progress : None, True (tqdm bar) or callable(done, total), optional
        The GIL is released and Ctrl-C stops the call between two doubling
        steps.
    allow_indefinite_Q : bool, optional
        Let Q be indefinite (symmetric only), as in DAREX #4; detectability
        is still required.

    Returns
    -------
    StationaryLQR with ``.P`` (n, n), ``.K`` (s, n), ``.spectral_radius``
    (of ``A + B K``, < 1), ``.iterations`` (doubling steps),
    ``.refinements`` (Newton steps) and ``.residual``
    (``|Q + A'PA - P - G'H^{-1}G|_F / |P|_F``). Unpacks as
    ``P, K, spectral_radius = solve_stationary(...)``.

    Raises
    ------
    ValueError
        Bad shapes or values (tolerances as in ``solve_discrete``); "(A, B) is
        not stabilizable" or "(A, Q) is not detectable" with the eigenvalue of
        A to blame, where no stabilizing solution exists.
    """
    A = as_float_array(A, "A")
    B = as_float_array(B, "B")
    n, s = _dims(A, B)
    return run_with_progress(_core.solve_stationary, progress, "stationary LQR", A=A, B=B, Q=_weight(Q, n, "Q"),
                             R=_weight(R, s, "R"), N=optional_array(N, "N"),
                             allow_indefinite_Q=_flag(allow_indefinite_Q))


def discretize(A, B, dt, Q, R, method="exact", horizon=None, intervals=10, threads=0, progress=None,
               allow_indefinite_Q=False) -> Discretization:
    """Discretize the continuous LTV tracking problem (appendix A).

    ``z' = A_i z + B w`` with ``w`` constant on each step of length ``dt`` and
    cost ``int z'Q z + w'R w dt`` give ``Phi_i = e^{A_i dt}``, ``Gamma_i`` and
    the discrete ``Q_i, N_i, R_i``. ``method="exact"`` evaluates the cost
    integrals with one Van Loan block exponential per step; ``"simpson"`` is
    the paper's quadrature with ``intervals`` (even) sub-steps.

    Parameters
    ----------
    A : (T, n, n) or (n, n) array
        Jacobians ``dF/dz`` along the reference (1/s).
    B : (T, n, s) or (n, s) array
        Control matrices.
    dt : float
        Step length (s), > 0.
    Q : (T, n, n), (n, n), (n,) diagonal or scalar
        State weight of the continuous cost, symmetric positive
        semidefinite (tolerances as in :func:`solve_discrete`).
    R : (T, s, s), (s, s), (s,) diagonal or scalar
        Control weight, symmetric positive semidefinite.
    method : {"exact", "simpson"}, optional
        Van Loan block exponential per step, or the paper's Simpson rule.
    horizon : int, optional
        T, required only when every matrix is constant in time.
    intervals : int, optional
        Even number of Simpson sub-steps (``method="simpson"`` only).
    threads : int, optional
        Cores for the per-step work (0: all); the GIL is released.
    progress : None, bool or callable(done, total), optional
        True shows a tqdm bar; Ctrl-C interrupts within 0.2 s.
    allow_indefinite_Q : bool, optional
        Let Q be indefinite (symmetric only), as in :func:`solve_discrete`.

    Returns
    -------
    Discretization
        ``.Phi`` (T, n, n), ``.Gamma`` (T, n, s), ``.Q`` (T, n, n), ``.N``
        (T, n, s), ``.R`` (T, s, s); ``.solve(Q_final, alpha_Q, alpha_R)``
        re-tunes the weights with a Riccati sweep only.
    """
    return run_with_progress(_core.discretize, progress, "discretize",
                             **_discretize_args(A, B, dt, Q, R, method, horizon, intervals, threads,
                                                allow_indefinite_Q))


def _discretize_args(A, B, dt, Q, R, method, horizon, intervals, threads, allow_indefinite_Q):
    """Validated keyword arguments of _core.discretize (also the first ones of _core.solve_continuous)."""
    A = as_float_array(A, "A")
    B = as_float_array(B, "B")
    n, s = _dims(A, B)
    if not isinstance(method, str) or method not in _METHODS:
        raise ValueError(f"method must be 'exact' or 'simpson', got {method!r}")
    args = dict(A=A, B=B, dt=real(dt, "dt"), Q=_weight(Q, n, "Q"), R=_weight(R, s, "R"), method=_METHODS[method],
                horizon=_horizon(horizon), intervals=integer(intervals, "intervals"),
                threads=integer(threads, "threads"), allow_indefinite_Q=_flag(allow_indefinite_Q))
    return args


def solve_continuous(A, B, dt, Q, R, Q_final, method="exact", horizon=None, intervals=10, threads=0, progress=None,
                     allow_indefinite_Q=False):
    """``discretize`` then ``solve_discrete``: gains of the continuous problem.

    Both run as one pipeline (steps are discretized from the last one down
    and swept as soon as they are ready), with the results of the two calls,
    on ``threads`` cores (0: all; 1: the calling thread only, the sweep too).

    Parameters
    ----------
    A, B, dt, Q, R, method, horizon, intervals, progress
        As in :func:`discretize`: A (T, n, n) or (n, n), B (T, n, s) or
        (n, s), dt (s), Q and R symmetric positive semidefinite (scalar,
        diagonal, matrix or per step).
    Q_final : (n, n), (n,), scalar or "dare"
        Terminal weight, symmetric positive semidefinite; ``"dare"``: the
        stationary P of the last step's discrete problem, as in
        :func:`solve_discrete`.
    threads : int, optional
        Cores (0: all; 1: the calling thread only, the sweep too).
    allow_indefinite_Q : bool, optional
        Let Q and Q_final be indefinite (symmetric only), as in
        :func:`solve_discrete`.

    Returns
    -------
    LQRSolution
        ``.K`` (T, s, n), ``.P`` (T+1, n, n); its ``.discretization`` holds
        the Discretization, so ``sol.discretization.solve(Q_final, alpha_Q,
        alpha_R)`` re-tunes without a new discretization.
    """
    args = _discretize_args(A, B, dt, Q, R, method, horizon, intervals, threads, allow_indefinite_Q)
    disc, sol = run_with_progress(_core.solve_continuous, progress, "discretize + Riccati sweep", passes=2,
                                  Q_final=_final_weight(Q_final, _dims(args["A"], args["B"])[0]), **args)
    sol.discretization = disc
    return sol


def retune(discretization: Discretization, Q_final, alpha_Q=1.0, alpha_R=1.0, R=None, progress=None,
           allow_indefinite_Q=False) -> LQRSolution:
    """Gains for re-scaled weights, reusing a discretization: a Riccati sweep, no exponential.

    Parameters
    ----------
    discretization : Discretization
        From :func:`discretize`.
    Q_final : (n, n), (n,), scalar or "dare"
        Terminal weight; ``"dare"``: the stationary P of the last step's
        re-tuned discrete problem.
    alpha_Q, alpha_R : float, optional
        Factors on the state and control weights.
    R : (T, s, s), (s, s), (s,) or scalar, optional
        A new continuous control weight in place of ``alpha_R R``.
    progress : None, bool or callable(done, total), optional
        As in :func:`solve_discrete`.
    allow_indefinite_Q : bool, optional
        Let Q_final be indefinite (symmetric only), as in
        :func:`solve_discrete`.

    Returns
    -------
    LQRSolution
        ``.K`` (T, s, n) and ``.P`` (T+1, n, n).
    """
    if not isinstance(discretization, Discretization):
        raise TypeError(f"discretization must be a Discretization (from lqr.discretize), got "
                        f"{type(discretization).__name__}")
    return run_with_progress(
        discretization.solve,
        progress,
        "Riccati sweep",
        Q_final=_final_weight(Q_final, discretization.n),
        alpha_Q=real(alpha_Q, "alpha_Q"),
        alpha_R=real(alpha_R, "alpha_R"),
        R=None if R is None else _weight(R, discretization.s, "R"),
        allow_indefinite_Q=_flag(allow_indefinite_Q),
    )


def tracker(K, z_ref, w_ff=None, loop=False, w_min=None, w_max=None, gain_dtype="float64") -> Tracker:
    """Runtime controller ``w = w_ff[i] + K[i] (z - z_ref[i])``.

    Parameters
    ----------
    K : (T, s, n) gains, an (s, n) constant gain, or an LQRSolution
    z_ref : (T+1, n) reference states
    w_ff : (T, s) feed-forward controls, or None (zero)
    loop : rewind to step 0 after the last step
    w_min, w_max : (s,) or scalars, optional box limits on ``w``
    gain_dtype : storage of the gains the control step multiplies by:
        "float64" (exact), "float32", "float16" or "int8" (or the NumPy dtypes).

    Returns
    -------
    Tracker
        Immutable gain schedule; ``control(z, i)`` gives ``w`` (s,), and
        ``sim.simulate(..., controller=tracker)`` runs it in C++.

    Notes
    -----
    This is the one statement of the reduced storages' error bounds.
    float32/float16 keep each row of K[i] as a power-of-two scale times
    entries rounded to that type, multiplied in single precision: the
    feedback is within ~2e-6 (float32) or ~5e-4 (float16, 2^-11 per entry)
    of ``sum_j |K_ij dz_j|``. int8 balances the columns by powers of two
    ``c_j <= 1`` (each column's largest entry over the schedule), rounds each
    row to 255 levels of its largest entry and ``c * dz`` to int16, and sums
    exactly in integers: the feedback is within
    ``M_i * (sum_j c_j |dz_j| / 254 + (n+1) 2^-15 max_j c_j |dz_j|)``,
    ``M_i = max_j |K_ij / c_j|``. A long time-varying schedule is streamed
    from memory at every step (64 KB per step at n=128, s=64 in double), so
    these halve, quarter or eighth the step's cost there. ``K`` still
    returns the gains as given.

    The gains are read-only once built: one Tracker may drive several
    ``simulate`` runs at once (from several threads), each run keeping its
    own reference index.
    """
    if isinstance(K, LQRSolution):
        K = K.K
    return Tracker(as_float_array(K, "K"), as_float_array(z_ref, "z_ref"), optional_array(w_ff, "w_ff"), bool(loop),
                   optional_array(w_min, "w_min"), optional_array(w_max, "w_max"), _gain_dtype_name(gain_dtype))


def _gain_dtype_name(gain_dtype) -> str:
    """"float16"/np.float16/np.dtype("f2")/np.int8 ... -> "float16"/"int8"; anything else is left to C++ to refuse."""
    if gain_dtype is None:  # np.dtype(None) would be float64
        return "None"
    try:
        return np.dtype(gain_dtype).name
    except TypeError:
        return str(gain_dtype)


def pd_gain(kp, kd, n, actuated=None) -> np.ndarray:
    """PD gain on ``z = [q, qd]`` (paper eq. 14): ``K = -[diag(kp) S', diag(kd) S']``.

    Parameters
    ----------
    kp, kd : float or (s,) array
        Stiffness (N/m or N m/rad) and damping (N s/m) gains.
    n : int
        State size (twice the number of coordinates).
    actuated : None, sequence of int or (n/2, s) array, optional
        As for ``models.spring_chain``: None (every coordinate driven), the
        driven coordinates' indices, or S mapping the controls to the
        coordinates' forces.

    Returns
    -------
    (s, n) ndarray
        The gain K.
    """
    n = integer(n, "n")
    if n < 2 or n % 2:  # before n / 2 sizes the actuation matrix
        raise ValueError(f"n (the state size, twice the coordinates) must be even and >= 2, got {n}")
    if actuated is not None:
        check_size("n", n // 2, np.size(actuated))
    return _core.pd_gain(as_float_array(kp, "kp"), as_float_array(kd, "kd"), n, actuation_matrix(actuated, n // 2))


def pd_tracker(kp, kd, z_ref, w_ff=None, actuated=None, loop=False, w_min=None, w_max=None) -> Tracker:
    """PD controller ``w = w_ff - kp (q - q_ref) - kd (qd - qd_ref)`` as a Tracker.

    Parameters
    ----------
    kp, kd : float or (s,) array
        Stiffness and damping gains, as in :func:`pd_gain`.
    z_ref : (T+1, n) array
        Reference states ``[q, qd]``.
    w_ff : (T, s) array, optional
        Feed-forward controls (zero when None).
    actuated : None, sequence of int or (n/2, s) array, optional
        As in :func:`pd_gain`.
    loop, w_min, w_max
        As in :func:`tracker`.

    Returns
    -------
    Tracker
        The constant gain on the reference.
    """
    z_ref = as_float_array(z_ref, "z_ref")
    if z_ref.ndim != 2 or z_ref.shape[1] < 2 or z_ref.shape[1] % 2:
        raise ValueError(f"z_ref must have shape (T+1, n) with n = 2 x coordinates >= 2, got {z_ref.shape}")
    return tracker(pd_gain(kp, kd, z_ref.shape[-1], actuated), z_ref, w_ff, loop, w_min, w_max)


def _horizon(horizon):
    return integer(horizon, "horizon", allow_none=True)


def solve_continuous_batch(problems, executor=None, progress=None) -> list:
    """Independent ``solve_continuous`` calls (one per scene, per weight
    setting) as tasks on ``executor`` (``directable.executors``).

    Parameters
    ----------
    problems : sequence of dict
        Each holds ``solve_continuous``'s keyword arguments (``A``, ``B``,
        ``dt``, ``Q``, ``R``, ``Q_final``, optionally ``method``,
        ``horizon``, ``intervals``, ``threads``, ``allow_indefinite_Q``).
    executor : None, concurrent.futures.Executor, dask.distributed.Client or "ray"
        None solves here one after the other (each on all cores).
    progress : None, bool or callable(done, total)
        One report over the problems.

    Returns
    -------
    list of LQRSolution
        In the order of ``problems``, the same gains bit for bit on every
        executor (rebuilt from K and P: without ``.discretization``).
    """
    from . import executors

    tasks = [(dict(p),) for p in problems]
    try:
        out = executors.map_tasks(_solve_continuous_task, tasks, executor, progress=progress, desc="LQR solves")
    except executors.TaskError as exc:  # a refused problem is the caller's error, named by its index
        if isinstance(exc.cause, (TypeError, ValueError)):
            raise (TypeError if isinstance(exc.cause, TypeError) else ValueError)(
                f"problems[{exc.index}]: {exc.cause}") from exc
        raise
    return [LQRSolution(K, P) for K, P in out]


def _solve_continuous_task(problem):
    sol = solve_continuous(**problem)
    return np.array(sol.K), np.array(sol.P)
