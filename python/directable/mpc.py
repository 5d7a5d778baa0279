"""Model predictive control: a receding-horizon optimizer (MPC/SPH paper, eq. (1)).

At every step the controls ``u`` (H, s) of a window minimise

    J = ||x_H - r_H||^2_C + sum_{i<H} ||x_i - r_i||^2_Q + ||u_i - ur_i||^2_R,
    x_0 = the actual state,  x_{i+1} = model.step(x_i, u_i),  lower <= u <= upper,

(``ur`` an optional control reference, zero by default); the first control
is applied, the window shifts and the next solve starts from the previous
solution shifted by one step (warm start).

``method="lbfgs"`` (default): projected L-BFGS, the gradient from one adjoint
(backward) pass with the model's vector-Jacobian products; a fixed iteration
count and an optional wall-clock ``time_budget`` per solve.
``method="gauss_newton"``: for models with Jacobians, Gauss-Newton (iLQR)
steps, each one Riccati sweep; one step is exact for a linear model without
active control limits (limits are enforced by clamping in the forward pass).

    import directable as dr
    model = dr.mpc.LinearModel(A, B)
    opt = dr.mpc.HorizonOptimizer(model, horizon=10, Q=1.0, R=0.1, C=10.0)
    res = opt.solve(x0, reference)          # reference (horizon+1, n)
    res.u, res.cost, res.iterations
    run = opt.run(model, x0, reference, steps=100)   # closed loop, one C++ call

Threads: the optimizer and the prediction models are immutable; the buffers
of a solve and its warm start live in a workspace. Plain :meth:`HorizonOptimizer.solve`
calls use the optimizer's own workspace (one call at a time); threads that
solve at once pass their own (``workspace=opt.create_workspace()``).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from . import _core
from ._validate import as_float_array, broadcast, integer, optional_array, real, run_with_progress

PredictionModel = _core.PredictionModel
minimize_lbfgs = _core.minimize_lbfgs
# Plants of the receding-horizon loop (HorizonOptimizer.run): a Model
# integrated by its own step, a PredictionModel, the SPH fluid stepped frame
# by frame. run() wraps a Model or PredictionModel itself.
Plant = _core.Plant
ModelPlant = _core.ModelPlant
DiscretePlant = _core.DiscretePlant
SPHPlant2D = _core.SPHPlant2D
SPHPlant3D = _core.SPHPlant3D

def run_servo(plant, q_ref, kp, kd, steps, qd_ref=0.0, u_ff=0.0, progress=None):
    """PD servo on a plant whose state is ``[q, q']`` (s = n / 2), in one C++
    call: ``u_t = u_ff + kp * (q_ref - q_t) + kd * (qd_ref - q'_t)`` after the
    plant's events of step t (e.g. ``SPHPlant2D.launch_sphere``), held over
    the step. The baseline beside ``HorizonOptimizer.run`` on the same plant.

    Parameters
    ----------
    plant : Plant
        e.g. ``SPHPlant2D(fluid, frame_steps)``: state (n,), control (s,).
    q_ref, qd_ref : array_like (s,) or float
        Reference position (m) and velocity (m/s); a scalar is broadcast.
    kp, kd, u_ff : array_like (s,) or float
        Gains (N/m, N s/m) and feed-forward (N); a scalar is broadcast; zero
        gains and ``u_ff`` give the uncontrolled run.
    steps : int
        Control steps.
    progress : bool or callable, optional
        ``True`` shows a progress bar; a callable gets ``(done, total)``.

    Returns
    -------
    states : ndarray (steps+1, n)
    controls : ndarray (steps, s)
    """
    if not isinstance(plant, Plant):
        raise TypeError(f"plant must be a directable.mpc plant object, got {type(plant).__name__}")
    s = plant.s
    law = {name: broadcast(v, s, name) for name, v in
           (("q_ref", q_ref), ("qd_ref", qd_ref), ("kp", kp), ("kd", kd), ("u_ff", u_ff))}
    return run_with_progress(_core.run_plant_servo, progress, "servo", plant=plant, steps=integer(steps, "steps"),
                             **law)


_METHODS = {"lbfgs": _core.MPCMethod.lbfgs, "gauss_newton": _core.MPCMethod.gauss_newton}


def LinearModel(A, B) -> _core.LinearPrediction:
    """Discrete linear prediction model ``x+ = A x + B u``.

    Parameters
    ----------
    A : (n, n) array
        State transition.
    B : (n, s) array
        Control matrix.

    Returns
    -------
    LinearPrediction
        A PredictionModel with Jacobians (both optimizer methods apply).
    """
    return _core.LinearPrediction(as_float_array(A, "A"), as_float_array(B, "B"))


def EulerModel(model, dt, t0=0.0) -> _core.EulerPrediction:
    """Prediction with a ``directable.Model`` (z' = F(z, t) + B w): one explicit
    Euler step ``x+ = x + dt (F(x, t0 + i dt) + B u)`` per window step, with
    exact VJP and Jacobians (so both methods apply). A cheap simplified
    predictor; drive the true system (the model integrated by its own step)
    with ``plant=model`` in :meth:`HorizonOptimizer.run`.

    Parameters
    ----------
    model : Model
        ``z' = F(z, t) + B w``.
    dt : float
        Window step (s).
    t0 : float, optional
        Time of the window's first step (s).

    Returns
    -------
    EulerPrediction
        A PredictionModel with state (n,) and controls (s,) of ``model``.
    """
    if not isinstance(model, _core.Model):
        raise TypeError(f"model must be a directable.Model, got {type(model).__name__}")
    return _core.EulerPrediction(model, real(dt, "dt"), real(t0, "t0"))


def Substeps(model, count) -> _core.SubstepPrediction:
    """``count`` steps of ``model`` (a PredictionModel) per step, the control
    held: e.g. one frame of ``count`` simulation steps predicted with a model
    that is only stable at the simulation's own step (SPH pressure, an
    explicit Euler predictor of a stiff solid). VJP and Jacobians are chained
    exactly (Jacobians only if ``model`` has them); costs ``count`` times the
    inner model per step. A step or a Jacobian keeps two inner states; the
    VJP records the ``count`` inner states of a step (``count * n * 8``
    bytes, allocated by the first VJP of a data object). One step of a huge
    ``count`` stops on Ctrl-C between inner steps.

    Parameters
    ----------
    model : PredictionModel
        The inner model.
    count : int
        Inner steps per step, >= 1.

    Returns
    -------
    SubstepPrediction
        A PredictionModel of the same sizes.
    """
    if not isinstance(model, PredictionModel):
        raise TypeError(f"model must be a directable.mpc prediction model, got {type(model).__name__}")
    return _core.SubstepPrediction(model, integer(count, "count"))


@dataclass(frozen=True)
class MPCResult:
    """One window's solution.

    Parameters
    ----------
    u : (H, s) ndarray
        Controls.
    states : (H+1, n) ndarray
        Predicted states.
    cost : float
        J at ``u``.
    cost_initial : float
        J at the starting controls.
    iterations : int
        Optimizer iterations.
    evaluations : int
        Cost evaluations (forward rollouts).
    seconds : float
        Wall time of the solve (s).
    gradients : int, optional
        Gradient evaluations (adjoint passes; a shortened line-search trial
        evaluates the cost alone).
    curvature_scale : float, optional
        L-BFGS: s'y / y'y of the first correction pair (0: none), the
        ``curvature_scale`` to start the next, shifted window with.
    """

    u: np.ndarray
    states: np.ndarray
    cost: float
    cost_initial: float
    iterations: int
    evaluations: int
    seconds: float
    gradients: int = 0
    curvature_scale: float = 0.0

    @property
    def cost_decrease(self) -> float:
        """``cost_initial - cost``: what the window's optimisation gained."""
        return self.cost_initial - self.cost


@dataclass(frozen=True)
class RecedingRun:
    """A closed receding-horizon run.

    Parameters
    ----------
    states : (steps+1, n) ndarray
        Plant states.
    controls : (steps, s) ndarray
        Applied controls.
    cost, cost_initial : (steps,) ndarray
        Each window's cost at its solution and at its start.
    iterations : (steps,) ndarray
        Optimizer iterations per window.
    seconds : (steps,) ndarray
        Solve time per window (s).
    """

    states: np.ndarray
    controls: np.ndarray
    cost: np.ndarray
    cost_initial: np.ndarray
    iterations: np.ndarray
    seconds: np.ndarray


class HorizonOptimizer:
    """Receding-horizon optimizer over a prediction model.

    Parameters
    ----------
    model : a PredictionModel (e.g. ``LinearModel(A, B)``)
    horizon : H >= 1 steps
    Q, C : scalar, (n,) diagonal (per-coordinate / per-particle weights) or (n, n); >= 0
    R : scalar, (s,) or (s, s); positive definite
    iterations : iterations per solve (an upper bound; stops early at convergence)
    time_budget : None or seconds per solve (the paper's fixed timeframe)
    lower, upper : None, scalar or (s,) box limits on every control
    method : "lbfgs" (adjoint gradient) or "gauss_newton" (needs Jacobians)
    memory : L-BFGS history length
    """

    def __init__(self, model, horizon, Q, R, C, iterations=50, time_budget=None, lower=None, upper=None,
                 method="lbfgs", memory=10):
        if not isinstance(model, PredictionModel):
            raise TypeError(f"model must be a directable.mpc prediction model, got {type(model).__name__}")
        if method not in _METHODS:
            raise ValueError(f"method must be one of {sorted(_METHODS)}, got {method!r}")
        n, s = model.n, model.s
        budget = 0.0 if time_budget is None else real(time_budget, "time_budget")
        if time_budget is not None and not budget > 0:
            raise ValueError(f"time_budget must be None or > 0 seconds, got {time_budget!r}")
        self.model = model
        self._core = _core.HorizonOptimizer(
            model, integer(horizon, "horizon"), broadcast(Q, n, "Q"), broadcast(R, s, "R"), broadcast(C, n, "C"),
            iterations=integer(iterations, "iterations"), time_budget=budget, memory=integer(memory, "memory"),
            method=_METHODS[method], lower=broadcast(lower, s, "lower", optional=True),
            upper=broadcast(upper, s, "upper", optional=True))
        self._workspace = self._core.create_workspace()
        self._workspace_lock = threading.Lock()

    @property
    def horizon(self) -> int:
        """Window length H (steps)."""
        return self._core.horizon

    @property
    def n(self) -> int:
        """State size of the prediction model."""
        return self._core.n

    @property
    def s(self) -> int:
        """Control size of the prediction model."""
        return self._core.s

    @property
    def has_solution(self) -> bool:
        """Whether the optimizer's own workspace holds a solution (the next plain solve warm-starts)."""
        return self._workspace.has_solution

    def create_workspace(self) -> _core.HorizonWorkspace:
        """A new workspace (buffers and warm start) for one thread's solves.

        Returns
        -------
        HorizonWorkspace
            Pass it as ``workspace=`` to :meth:`solve` and :meth:`cost_and_gradient`.
        """
        return self._core.create_workspace()

    def reset(self) -> None:
        """Forget the previous solution of the optimizer's own workspace: the next solve starts from u = 0."""
        self._workspace.reset()

    def _call(self, fn, workspace, *args):
        if workspace is not None:
            if not isinstance(workspace, _core.HorizonWorkspace):
                raise TypeError(f"workspace must come from create_workspace(), got {type(workspace).__name__}")
            return fn(workspace, *args)
        with self._workspace_lock:
            return fn(self._workspace, *args)

    def cost_and_gradient(self, x0, reference, u, u_reference=None, workspace=None):
        """The window's cost and its gradient (adjoint pass).

        Parameters
        ----------
        x0 : (n,) array
            Starting state.
        reference : (H+1, n) array
            Reference states.
        u : (H, s) array
            Controls.
        u_reference, workspace
            As in :meth:`solve`.

        Returns
        -------
        J : float
            The cost.
        dJ_du : (H, s) ndarray
            Its gradient.
        """
        return self._call(self._core.cost_and_gradient, workspace, as_float_array(x0, "x0"),
                          as_float_array(reference, "reference"), as_float_array(u, "u"),
                          optional_array(u_reference, "u_reference"))

    def solve(self, x0, reference, u0=None, u_reference=None, workspace=None, curvature_scale=None) -> MPCResult:
        """Optimise one window.

        Parameters
        ----------
        x0 : (n,) array
            Starting state.
        reference : (H+1, n) array
            Reference states.
        u0 : (H, s) array, optional
            Starting controls; None: warm start from the previous solution
            shifted by one step (zeros the first time).
        u_reference : (H, s) array, optional
            The control term becomes ``||u_i - u_reference_i||^2_R`` (e.g. a
            feed-forward that the controls correct, as the LQR tracker's
            ``w = w_ff + K (z - z_ref)`` weighs only the feedback); None:
            ``||u_i||^2_R``.
        workspace : HorizonWorkspace, optional
            From :meth:`create_workspace` (one per thread; it carries the warm
            start); None: the optimizer's own.
        curvature_scale : float, optional
            L-BFGS: the inverse-Hessian scale of the first step (units of u
            per unit of dJ/du), e.g. the previous window's
            ``MPCResult.curvature_scale`` when the caller manages the warm
            start (``u0``) itself; 0: a unit-length first step. None: the
            workspace's own scale when warm-starting from it (``u0=None``),
            a unit-length first step otherwise.

        Returns
        -------
        MPCResult
            ``u`` (H, s), predicted ``states`` (H+1, n), costs and counts.
        """
        d = self._call(self._core.solve, workspace, as_float_array(x0, "x0"), as_float_array(reference, "reference"),
                       optional_array(u0, "u0"), optional_array(u_reference, "u_reference"), curvature_scale)
        return MPCResult(u=d["u"], states=d["states"], cost=d["cost"], cost_initial=d["cost_initial"],
                         iterations=d["iterations"], evaluations=d["evaluations"], seconds=d["seconds"],
                         gradients=d["gradients"], curvature_scale=d["curvature_scale"])

    def run(self, plant, x0, reference, steps, progress=None, u_reference=None, u0=None, dt=None, substeps=1,
            t0=0.0, disturbance=None) -> RecedingRun:
        """Receding-horizon loop over ``steps`` steps, one C++ call (GIL
        released, progress, Ctrl-C): every window is optimised from the
        plant's actual state, warm-started from the previous window's
        solution shifted by one step; its first control drives the plant.

        Parameters
        ----------
        plant : the system driven (the optimizer predicts with its own model):
            a PredictionModel (``x+ = plant.step(x, u + disturbance[t])``);
            a ``directable.Model`` integrated by its own step, ``substeps``
            steps of ``dt / substeps`` per control step, from time ``t0``,
            with ``w = u + disturbance[t]``; or a plant object such as
            ``directable.mpc.SPHPlant2D`` (then ``x0`` is None: the plant
            has its state).
        x0 : (n,) the plant's initial state, or None for a plant object.
        reference : (steps + horizon + 1, n)
        steps : int
            Control steps.
        progress : None, bool or callable(done, total), optional
            True shows a tqdm bar; Ctrl-C stops the loop.
        u_reference : None or (steps + horizon, s); window t weighs
            ``||u_i - u_reference[t + i]||^2_R`` (a feed-forward the controls correct).
        u0 : None or (horizon, s): the first window's starting controls (zeros if None).
        dt : seconds per control step (a Model plant only).
        substeps : int, optional
            Integration steps per control step (a Model plant only).
        t0 : float, optional
            Starting time (s) (a Model plant only).
        disturbance : None or (T, s) added to the control at steps t < T
            (PredictionModel and Model plants).

        Returns
        -------
        RecedingRun
            ``states`` (steps+1, n), ``controls`` (steps, s) and per-step
            ``cost``, ``cost_initial``, ``iterations``, ``seconds`` (steps,).
        """
        if isinstance(plant, _core.Plant):
            if x0 is not None or disturbance is not None:
                raise ValueError("x0 and disturbance must be None for a plant object (it keeps its own state)")
        elif isinstance(plant, PredictionModel):
            plant = _core.DiscretePlant(plant, as_float_array(x0, "x0"), optional_array(disturbance, "disturbance"))
        elif isinstance(plant, _core.Model):
            if dt is None:
                raise TypeError("dt (seconds per control step) is required when plant is a directable.Model")
            plant = _core.ModelPlant(plant, as_float_array(x0, "x0"), real(dt, "dt"), integer(substeps, "substeps"),
                                     real(t0, "t0"), optional_array(disturbance, "disturbance"))
        else:
            raise TypeError("plant must be a directable.mpc prediction model, a directable.Model or a plant "
                            f"object, got {type(plant).__name__}")
        d = run_with_progress(self._core.run, progress, "MPC", plant=plant,
                              reference=as_float_array(reference, "reference"), steps=integer(steps, "steps"),
                              u_reference=optional_array(u_reference, "u_reference"), u0=optional_array(u0, "u0"))
        return RecedingRun(states=d["states"], controls=d["controls"], cost=d["cost"],
                           cost_initial=d["cost_initial"], iterations=d["iterations"], seconds=d["seconds"])


__all__ = ["LinearModel", "EulerModel", "Substeps", "HorizonOptimizer", "MPCResult", "RecedingRun", "PredictionModel",
           "Plant", "ModelPlant", "DiscretePlant", "SPHPlant2D", "SPHPlant3D", "run_servo", "minimize_lbfgs"]
