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
from ._validate import actuation_matrix, as_float_array, integer, optional_array, real, run_with_progress, weight

LQRSolution = _core.LQRSolution
Discretization = _core.Discretization
Tracker = _core.Tracker

_METHODS = {"exact": _core.DiscretizeMethod.exact, "simpson": _core.DiscretizeMethod.simpson}


def _dims(A, B):
    """(n, s) for sizing scalar weights; the core checks the shapes of A and B."""
    return (A.shape[-1] if A.ndim else 0), (B.shape[-1] if B.ndim else 0)


def solve_discrete(A, B, Q, R, Q_final, N=None, horizon=None, progress=None) -> LQRSolution:
    """Riccati backward sweep of the discrete time-varying LQR problem.

    Parameters
    ----------
    A : (T, n, n) or (n, n)
    B : (T, n, s) or (n, s)
    Q : (T, n, n), (n, n) or scalar (times identity)
    R : (T, s, s), (s, s) or scalar; must be symmetric positive definite
    Q_final : (n, n) or scalar
    N : (T, n, s), (n, s) or None -- cross term 2 x' N u
    horizon : T, required only when every matrix is constant
    progress : None, True (tqdm bar) or callable(done, total)

    Returns
    -------
    LQRSolution with ``.K`` (T, s, n) and ``.P`` (T+1, n, n), read-only views
    of C++ memory that live as long as the solution or any view of it.
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
        Q=weight(Q, n, "Q"),
        R=weight(R, s, "R"),
        Q_final=weight(Q_final, n, "Q_final"),
        N=optional_array(N, "N"),
        horizon=_horizon(horizon),
    )


def discretize(A, B, dt, Q, R, method="exact", horizon=None, intervals=10, threads=0, progress=None) -> Discretization:
    """Discretize the continuous LTV tracking problem (appendix A).

    ``z' = A_i z + B w`` with ``w`` constant on each step of length ``dt`` and
    cost ``int z'Q z + w'R w dt`` give ``Phi_i = e^{A_i dt}``, ``Gamma_i`` and
    the discrete ``Q_i, N_i, R_i``. ``method="exact"`` evaluates the cost
    integrals with one Van Loan block exponential per step; ``"simpson"`` is
    the paper's quadrature with ``intervals`` (even) sub-steps.

    A (T, n, n) or (n, n); B (T, n, s) or (n, s); Q (n, n)/(T, n, n)/scalar;
    R (s, s)/(T, s, s)/scalar, positive definite; dt > 0. The steps run in
    parallel on ``threads`` cores (0: all) with the GIL released; Ctrl-C
    interrupts. Returns a Discretization (``.Phi, .Gamma, .Q, .N, .R``, each
    (T, ...)); ``.solve(Q_final, alpha_Q, alpha_R)`` re-tunes the weights
    with a Riccati sweep only.
    """
    return run_with_progress(_core.discretize, progress, "discretize",
                             **_discretize_args(A, B, dt, Q, R, method, horizon, intervals, threads))


def _discretize_args(A, B, dt, Q, R, method, horizon, intervals, threads):
    """Validated keyword arguments of _core.discretize (also the first ones of _core.solve_continuous)."""
    A = as_float_array(A, "A")
    B = as_float_array(B, "B")
    n, s = _dims(A, B)
    if method not in _METHODS:
        raise ValueError(f"method must be 'exact' or 'simpson', got {method!r}")
    args = dict(A=A, B=B, dt=real(dt, "dt"), Q=weight(Q, n, "Q"), R=weight(R, s, "R"), method=_METHODS[method],
                horizon=_horizon(horizon), intervals=integer(intervals, "intervals"),
                threads=integer(threads, "threads"))
    return args


def solve_continuous(A, B, dt, Q, R, Q_final, method="exact", horizon=None, intervals=10, threads=0, progress=None):
    """``discretize`` then ``solve_discrete``: gains of the continuous problem.

    Both run as one pipeline (steps are discretized from the last one down
    and swept as soon as they are ready), with the results of the two calls,
    on ``threads`` cores (0: all; 1: the calling thread only, the sweep too).

    Returns an LQRSolution whose ``.discretization`` attribute holds the
    Discretization, so ``sol.discretization.solve(Q_final, alpha_Q, alpha_R)``
    re-tunes without a new discretization.
    """
    args = _discretize_args(A, B, dt, Q, R, method, horizon, intervals, threads)
    disc, sol = run_with_progress(_core.solve_continuous, progress, "discretize + Riccati sweep", passes=2,
                                  Q_final=weight(Q_final, _dims(args["A"], args["B"])[0], "Q_final"), **args)
    sol.discretization = disc
    return sol


def retune(discretization: Discretization, Q_final, alpha_Q=1.0, alpha_R=1.0, R=None, progress=None) -> LQRSolution:
    """Gains for the weights ``alpha_Q Q`` and ``alpha_R R`` (or a new continuous
    ``R``), reusing ``discretization``: a Riccati sweep, no exponential."""
    return run_with_progress(
        discretization.solve,
        progress,
        "Riccati sweep",
        Q_final=weight(Q_final, discretization.n, "Q_final"),
        alpha_Q=real(alpha_Q, "alpha_Q"),
        alpha_R=real(alpha_R, "alpha_R"),
        R=None if R is None else weight(R, discretization.s, "R"),
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
    """PD gain (s, n) on ``z = [q, qd]`` (paper eq. 14): ``K = -[diag(kp) S', diag(kd) S']``.

    kp, kd: scalars or (s,). actuated: as for ``models.spring_chain`` -- None
    (every coordinate driven), a list of driven coordinate indices, or S
    (n/2, s) mapping the controls to the coordinates' forces.
    """
    n = integer(n, "n")
    return _core.pd_gain(as_float_array(kp, "kp"), as_float_array(kd, "kd"), n, actuation_matrix(actuated, n // 2))


def pd_tracker(kp, kd, z_ref, w_ff=None, actuated=None, loop=False, w_min=None, w_max=None) -> Tracker:
    """PD controller ``w = w_ff - kp (q - q_ref) - kd (qd - qd_ref)`` as a Tracker."""
    z_ref = as_float_array(z_ref, "z_ref")
    return tracker(pd_gain(kp, kd, z_ref.shape[-1], actuated), z_ref, w_ff, loop, w_min, w_max)


def _horizon(horizon):
    return integer(horizon, "horizon", allow_none=True)
