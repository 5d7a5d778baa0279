"""
directable C++ core: discretization, Riccati sweep, tracking, models, controlled simulation, articulated chains and PD/SPD servos, StVK FEM and reduced StVK, reduced fluids, MPC horizon optimizer, SPH fluid, continuum crowds, mass-spring cloth and its goal-directed control, clip-blending characters with value functions learned by linear programming
"""
from __future__ import annotations
import collections.abc
import numpy
import numpy.typing
import typing
__all__: list[str] = ['Articulated', 'BoundaryBasis', 'BoundaryBasis3D', 'CharacterAnimation', 'CharacterBasis', 'CharacterClipSet', 'CharacterSkeleton', 'CharacterTask', 'ClothCollider', 'ClothControlModel', 'ClothIntegrator', 'ClothModel', 'ClothPlan', 'ClothRollout', 'Coupling', 'Coupling3D', 'Crowd', 'CrowdAgent', 'CrowdGrid', 'CrowdParams', 'CrowdRun', 'DecisionProblem', 'DiscretePlant', 'Discretization', 'DiscretizeMethod', 'EulerPrediction', 'FluidParticles', 'FluidParticles3D', 'FluidSim2D', 'FluidSim3D', 'GalerkinFluid', 'GridValue', 'HorizonOptimizer', 'HorizonWorkspace', 'Integrator', 'LQRSolution', 'LinearPrediction', 'MACGrid2D', 'MACGrid3D', 'MPCMethod', 'Model', 'ModelPlant', 'MotionModel', 'MujocoData', 'MujocoLibrary', 'MujocoModel', 'NewmarkFEM', 'Obstacle', 'Obstacle3D', 'ParticlePD', 'PlanarChain', 'Plant', 'PointMassRun', 'PredictionData', 'PredictionModel', 'ReducedFluid', 'ReducedFluid3D', 'ReducedFluidData', 'ReducedScene', 'ReducedScene3D', 'ReducedScene3DData', 'ReducedSceneData', 'ReducedStVK', 'SPHFluid2D', 'SPHFluid3D', 'SPHPlant2D', 'SPHPlant3D', 'SPHPrediction', 'SPHPrediction3D', 'Servo', 'Shape2D', 'Shape3D', 'Simulation', 'SimulationResult', 'SpringChain', 'StVKFEM', 'StationaryLQR', 'SubstepPrediction', 'TetMesh', 'TrackResult', 'Tracker', 'ValueLearning', 'build_info', 'check_allocation', 'cloth_apply', 'cloth_blend', 'cloth_control_window', 'cloth_curl_goals', 'cloth_follow', 'cloth_plan', 'cloth_retime', 'crowd_close_pairs', 'crowd_eikonal', 'crowd_min_distance', 'crowd_speed_field', 'crowd_splat', 'crowd_unit_cost', 'crowd_velocity_field', 'discretize', 'expm_bordered', 'linearize', 'max_threads', 'minimize_lbfgs', 'mirror_poses', 'mujoco_run_lqr', 'mujoco_run_servo', 'mujoco_spd', 'pd_gain', 'run_plant_servo', 'set_max_threads', 'simulate', 'solve_continuous', 'solve_discrete', 'solve_stationary', 'spd_step', 'synthetic_clips', 'synthetic_walker', 'track', 'value_iteration']
class LQRSolution:
    """
    Gains and cost-to-go of a discrete LQR problem.
    
    K (T, s, n) and P (T+1, n, n) are read-only NumPy views of this object's
    memory (no copy): they stay valid as long as any of them or this object is
    alive. Copy them (np.array(sol.K)) to modify.
    
    Parameters
    ----------
    K : (T, s, n) array
        Gains (copied), e.g. from a saved file.
    P : (T+1, n, n) array
        Cost-to-go matrices (copied).
    """
    def __init__(self, K: numpy.ndarray[numpy.float64], P: numpy.ndarray[numpy.float64]) -> None:
        """
        From saved arrays K (T, s, n) and P (T+1, n, n) (copied).
        """
    def __reduce__(self) -> tuple[typing.Any, tuple[typing.Any, tuple, dict, typing.Any]]:
        """
        Pickling support: rebuilt with the class's constructor.
        """
    def __repr__(self) -> str:
        ...
    def cost_to_go(self, x: numpy.ndarray[numpy.float64], step: int = 0) -> float:
        """
        Optimal cost x' P_step x from a state.
        
        Parameters
        ----------
        x : (n,) array
            State (deviation from the reference).
        step : int, optional
            Step in [0, T].
        
        Returns
        -------
        float
            The cost to go.
        """
    @property
    def K(self) -> numpy.ndarray:
        """
        (T, s, n) feedback gains, u_i = K_i x_i.
        """
    @property
    def P(self) -> numpy.ndarray:
        """
        (T+1, n, n) cost-to-go matrices, J*_i(x) = x' P_i x.
        """
    @property
    def horizon(self) -> int:
        """
        Number of steps T.
        """
    @property
    def n(self) -> int:
        """
        State size n.
        """
    @property
    def s(self) -> int:
        """
        Control size s.
        """
class StationaryLQR:
    """
    Stabilizing solution of the discrete algebraic Riccati equation.
    
    P (n, n), K (s, n) are read-only views of this object's memory. Unpacks as
    (P, K, spectral_radius).
    """
    def __iter__(self) -> collections.abc.Iterator:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def K(self) -> numpy.ndarray:
        """
        (s, n) stationary gain, u = K x.
        """
    @property
    def P(self) -> numpy.ndarray:
        """
        (n, n) stationary cost-to-go, J*(x) = x' P x.
        """
    @property
    def iterations(self) -> int:
        """
        Doubling steps taken.
        """
    @property
    def refinements(self) -> int:
        """
        Newton steps that lowered the residual.
        """
    @property
    def residual(self) -> float:
        """
        Relative Riccati residual |Q + A'PA - P - G'H^-1 G|_F / |P|_F.
        """
    @property
    def spectral_radius(self) -> float:
        """
        Spectral radius of A + B K (< 1).
        """
class DiscretizeMethod:
    """
    Members:
    
      exact
    
      simpson
    """
    __members__: typing.ClassVar[dict[str, DiscretizeMethod]]
    exact: typing.ClassVar[DiscretizeMethod]
    simpson: typing.ClassVar[DiscretizeMethod]
    @typing.overload
    def __eq__(self, other: DiscretizeMethod) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: int) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: DiscretizeMethod) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: int) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class Discretization:
    """
    Exact (or Simpson) discretization of a continuous LTV tracking problem.
    
    Phi (T, n, n), Gamma (T, n, s), Q (T, n, n), N (T, n, s), R (T, s, s) are
    read-only views of this object's memory, valid while any of them or the
    object is alive. Rc is the continuous control weight kept for re-tuning.
    
    Parameters
    ----------
    Phi, Gamma, Q, N, R, Rc : arrays
        Saved arrays (copied), shapes as the properties.
    dt : float
        Step length (s).
    method : DiscretizeMethod, optional
        How they were computed.
    """
    def __init__(self, Phi: numpy.ndarray[numpy.float64], Gamma: numpy.ndarray[numpy.float64], Q: numpy.ndarray[numpy.float64], N: numpy.ndarray[numpy.float64], R: numpy.ndarray[numpy.float64], Rc: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex, method: DiscretizeMethod = ...) -> None:
        """
        From saved arrays (copied); shapes as the properties.
        """
    def __reduce__(self) -> tuple[typing.Any, tuple[typing.Any, tuple, dict, typing.Any]]:
        """
        Pickling support: rebuilt with the class's constructor.
        """
    def __repr__(self) -> str:
        ...
    def solve(self, Q_final: typing.Any, alpha_Q: typing.SupportsFloat | typing.SupportsIndex = 1.0, alpha_R: typing.SupportsFloat | typing.SupportsIndex = 1.0, R: numpy.ndarray[numpy.float64] | None = None, progress: typing.Any = None, allow_indefinite_Q: bool = False) -> LQRSolution:
        """
        Riccati sweep for re-tuned weights, without a new discretization.
        
        Parameters
        ----------
        Q_final : (n, n) array or "dare"
            Terminal weight; "dare": the stationary P of the last step.
        alpha_Q, alpha_R : float, optional
            Continuous weights become alpha_Q * Q and alpha_R * R.
        R : (s, s) or (T, s, s) array, optional
            A new continuous control weight replacing the one discretized.
        progress : None, bool or callable(done, total), optional
            Progress report; Ctrl-C stops the sweep.
        allow_indefinite_Q : bool, optional
            Q_final may be indefinite (symmetric only); by default it must be
            positive semidefinite (smallest eigenvalue >= -1e-12 max|Q_final|).
        
        Returns
        -------
        LQRSolution
            K (T, s, n) and P (T+1, n, n).
        """
    @property
    def Gamma(self) -> numpy.ndarray:
        """
        (T, n, s) control matrices of the held control.
        """
    @property
    def N(self) -> numpy.ndarray:
        """
        (T, n, s) discrete cross weights (2 x' N u).
        """
    @property
    def Phi(self) -> numpy.ndarray:
        """
        (T, n, n) state transitions e^{A_i dt}.
        """
    @property
    def Q(self) -> numpy.ndarray:
        """
        (T, n, n) discrete state weights.
        """
    @property
    def R(self) -> numpy.ndarray:
        """
        (T, s, s) discrete control weights.
        """
    @property
    def Rc(self) -> numpy.ndarray:
        """
        (T, s, s) continuous control weight, kept for re-tuning.
        """
    @property
    def dt(self) -> float:
        """
        Step length (s).
        """
    @property
    def horizon(self) -> int:
        """
        Number of steps T.
        """
    @property
    def method(self) -> DiscretizeMethod:
        """
        DiscretizeMethod used (exact or simpson).
        """
    @property
    def n(self) -> int:
        """
        State size n.
        """
    @property
    def s(self) -> int:
        """
        Control size s.
        """
class Tracker:
    """
    Runtime tracking controller w = w_ff[i] + K[i] (z - z_ref[i]).
    
    K (T, s, n) or one (s, n) gain, z_ref (T+1, n), w_ff (T, s) or None (zero),
    are copied. loop: rewind to step 0 after the last step. w_min, w_max (s,)
    or scalars: optional box limits on w. gain_dtype: "float64" (default),
    "float32", "float16" or "int8", the storage of the gains the control step
    multiplies by (see directable.lqr.tracker for each one's error bound).
    
    The gains are read-only after construction. The per-step calls (control,
    advance, index, ...) move this object's own reference index; simulate and
    Simulation keep their own, so one Tracker may drive several runs at once,
    from several threads.
    
    Parameters
    ----------
    K : (T, s, n) or (s, n) array
        Gains (copied).
    z_ref : (T+1, n) array
        Reference states (copied).
    w_ff : (T, s) array, optional
        Feed-forward controls (zero when None).
    loop : bool, optional
        Rewind to step 0 after the last step.
    w_min, w_max : (s,) array or float, optional
        Box limits on w.
    gain_dtype : str, optional
        "float64", "float32", "float16" or "int8".
    """
    def __init__(self, K: numpy.ndarray[numpy.float64], z_ref: numpy.ndarray[numpy.float64], w_ff: numpy.ndarray[numpy.float64] | None = None, loop: bool = False, w_min: numpy.ndarray[numpy.float64] | None = None, w_max: numpy.ndarray[numpy.float64] | None = None, gain_dtype: str = 'float64') -> None:
        ...
    def __reduce__(self) -> tuple[typing.Any, tuple[typing.Any, tuple, dict, typing.Any]]:
        """
        Pickling support: rebuilt with the class's constructor.
        """
    def __repr__(self) -> str:
        ...
    def advance(self) -> None:
        """
        Moves to the next reference step.
        """
    def control(self, z: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        Control for a state at the current index (does not advance).
        
        Parameters
        ----------
        z : (n,) array
            State.
        
        Returns
        -------
        (s,) ndarray
            w = w_ff[i] + K[i] (z - z_ref[i]), clipped to [w_min, w_max].
        """
    def control_into(self, z: numpy.ndarray[numpy.float64], w: numpy.typing.NDArray[numpy.float64], w_fb: numpy.typing.NDArray[numpy.float64]) -> None:
        """
        Writes the control and its feedback part in place (no allocation).
        
        Parameters
        ----------
        z : (n,) array
            State.
        w : (s,) float64 C-contiguous array
            Receives the control (other arrays are refused, never copied).
        w_fb : (s,) float64 C-contiguous array
            Receives the feedback part K[i] (z - z_ref[i]).
        """
    def jump_to_nearest(self, z: numpy.ndarray[numpy.float64]) -> int:
        """
        Moves the tracked index to the reference state closest to z.
        
        Parameters
        ----------
        z : (n,) array
            State.
        
        Returns
        -------
        int
            The new index.
        """
    def nearest_index(self, z: numpy.ndarray[numpy.float64], first: int = 0, last: int = -1, weights: numpy.ndarray[numpy.float64] | None = None) -> int:
        """
        Reference step with the state closest to z.
        
        Parameters
        ----------
        z : (n,) array
            State.
        first, last : int, optional
            Steps searched, [first, last] (last -1: T).
        weights : (n,) array, optional
            Per-coordinate weights of the distance.
        
        Returns
        -------
        int
            The step.
        """
    def rewind(self) -> None:
        """
        Back to reference step 0.
        """
    @property
    def K(self) -> numpy.ndarray:
        """
        (T, s, n) gains, or (1, s, n) for a constant gain.
        """
    @property
    def gain_dtype(self) -> str:
        """
        Storage of the gains the control step reads: "float64", "float32", "float16" or "int8".
        """
    @property
    def horizon(self) -> int:
        """
        Number of reference steps T.
        """
    @property
    def index(self) -> int:
        """
        Tracked reference step (0..T) of the per-step calls.
        """
    @index.setter
    def index(self, arg1: int) -> None:
        ...
    @property
    def loop(self) -> bool:
        """
        Whether the reference rewinds to step 0 after its last step.
        """
    @property
    def n(self) -> int:
        """
        State size n.
        """
    @property
    def s(self) -> int:
        """
        Control size s.
        """
    @property
    def w_ff(self) -> numpy.ndarray:
        """
        (T, s) feed-forward controls (read-only view).
        """
    @property
    def w_max(self) -> typing.Any:
        """
        (s,) upper limits on w, or None.
        """
    @property
    def w_min(self) -> typing.Any:
        """
        (s,) lower limits on w, or None.
        """
    @property
    def z_ref(self) -> numpy.ndarray:
        """
        (T+1, n) reference states (read-only view).
        """
class Model:
    """
    Reduced dynamics z' = F(z, t) + B w, the interface controllers drive.
    
    Subclass it in Python by defining state_dim(), control_dim(), dynamics(z, t)
    -> (n,), jacobian(z, t) -> (n, n) and control_matrix() -> (n, s) (constant:
    read once); the C++
    loop then calls back into Python (slow, but handy for prototyping).
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def control_dim(self) -> int:
        """
        Control size.
        
        Returns
        -------
        int
            s.
        """
    def control_matrix(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        The control matrix.
        
        Returns
        -------
        (n, s) ndarray
            B of z' = F(z, t) + B w (constant).
        """
    def dynamics(self, z: numpy.ndarray[numpy.float64], t: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> numpy.typing.NDArray[numpy.float64]:
        """
        The drift F(z, t).
        
        Parameters
        ----------
        z : (n,) array
            State.
        t : float, optional
            Time (s).
        
        Returns
        -------
        (n,) ndarray
            F(z, t), the state's rate without control.
        """
    def jacobian(self, z: numpy.ndarray[numpy.float64], t: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> numpy.typing.NDArray[numpy.float64]:
        """
        The Jacobian dF/dz.
        
        Parameters
        ----------
        z : (n,) array
            State.
        t : float, optional
            Time (s).
        
        Returns
        -------
        (n, n) ndarray
            dF/dz at (z, t) (1/s).
        """
    def state_dim(self) -> int:
        """
        State size.
        
        Returns
        -------
        int
            n.
        """
    def step(self, z: numpy.ndarray[numpy.float64], w: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex, t: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> numpy.typing.NDArray[numpy.float64]:
        """
        One step of the model's own integrator with the control held.
        
        Parameters
        ----------
        z : (n,) array
            State.
        w : (s,) array
            Control.
        dt : float
            Step length (s).
        t : float, optional
            Time (s).
        
        Returns
        -------
        (n,) ndarray
            The next state.
        """
class SpringChain(Model):
    """
    1D chain of m masses joined by damped Duffing springs, the first tied to a
    wall. Spring j joins mass j-1 (the wall for j = 0) and mass j with tension
    k_j d + k3_j d^3 + c_j d'. State z = [x (m), v (m)], n = 2m; control w (s,)
    are forces on the masses selected by actuated (m, s) (identity: s = m).
    
    Parameters
    ----------
    masses : (m,) array
        Masses (kg).
    stiffness : (m,) array
        Linear stiffness k_j (N/m).
    cubic : (m,) array
        Cubic stiffness k3_j (N/m^3).
    damping : (m,) array
        Damping c_j (N s/m).
    actuated : (m, s) array, optional
        Which masses the controls push (identity when None).
    """
    def __init__(self, masses: numpy.ndarray[numpy.float64], stiffness: numpy.ndarray[numpy.float64], cubic: numpy.ndarray[numpy.float64], damping: numpy.ndarray[numpy.float64], actuated: numpy.ndarray[numpy.float64] | None = None) -> None:
        ...
    def __reduce__(self) -> tuple[typing.Any, tuple[typing.Any, tuple, dict, typing.Any]]:
        """
        Pickling support: rebuilt with the class's constructor.
        """
    def __repr__(self) -> str:
        ...
    def energy(self, z: numpy.ndarray[numpy.float64]) -> float:
        """
        Kinetic plus elastic energy.
        
        Parameters
        ----------
        z : (n,) array
            State.
        
        Returns
        -------
        float
            Energy (J).
        """
    @property
    def actuated(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (m, s) actuation: which masses the controls push.
        """
    @property
    def cubic(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (m,) cubic stiffness (N/m^3).
        """
    @property
    def damping(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (m,) damping (N s/m).
        """
    @property
    def masses(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (m,) masses (kg).
        """
    @property
    def stiffness(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (m,) linear stiffness (N/m).
        """
class SimulationResult:
    """
    Arrays of a controlled run (read-only views of this object's memory).
    """
    def __reduce__(self) -> tuple[typing.Any, tuple[..., ..., ..., ..., ..., ...]]:
        """
        Pickling support: rebuilt from the arrays.
        """
    def __repr__(self) -> str:
        ...
    @property
    def controls(self) -> numpy.ndarray:
        """
        (N, s) applied control w = w_ff + w_fb (disturbance excluded).
        """
    @property
    def effort(self) -> numpy.ndarray:
        """
        (N,) |w_fb|^2 per step.
        """
    @property
    def feedback(self) -> numpy.ndarray:
        """
        (N, s) feedback part w_fb.
        """
    @property
    def ref_index(self) -> numpy.typing.NDArray[numpy.int32]:
        """
        (N+1,) tracked reference step.
        """
    @property
    def states(self) -> numpy.ndarray:
        """
        (N+1, n) states.
        """
    @property
    def tracking_error(self) -> numpy.ndarray:
        """
        (N+1,) |z_i - z_ref[index_i]|.
        """
class Simulation:
    """
    Model + optional controller stepped one step at a time from Python; the
    same code path as simulate(). Keeps model and controller alive. The
    controller starts at its current index and then keeps its own (see
    `index`): the Tracker object's index does not move.
    
    Parameters
    ----------
    model : Model
        The plant.
    z0 : (n,) array
        Initial state.
    dt : float
        Step length (s).
    controller : Tracker, optional
        LQR or PD tracker; None runs open loop.
    t0 : float, optional
        Initial time (s).
    """
    def __init__(self, model: Model, z0: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex, controller: Tracker = None, t0: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def step(self, w_ext: numpy.ndarray[numpy.float64] | None = None, w_open: numpy.ndarray[numpy.float64] | None = None, kick: numpy.ndarray[numpy.float64] | None = None) -> None:
        """
        One step of the closed loop.
        
        Parameters
        ----------
        w_ext : (s,) array, optional
            Disturbance added to the control.
        w_open : (s,) array, optional
            Open-loop control, when there is no controller.
        kick : (n,) array, optional
            Added to the state first.
        """
    @property
    def dt(self) -> float:
        """
        Step length (s).
        """
    @property
    def index(self) -> int:
        """
        The controller's reference step (0 without a controller).
        """
    @property
    def last_control(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (s,) control applied at the last step (a copy).
        """
    @property
    def last_feedback(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (s,) feedback part of the last control (a copy).
        """
    @property
    def state(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        Current state (n,), a copy.
        """
    @state.setter
    def state(self, arg1: numpy.ndarray[numpy.float64]) -> None:
        ...
    @property
    def steps(self) -> int:
        """
        Steps taken so far.
        """
    @property
    def time(self) -> float:
        """
        Current time (s).
        """
    @property
    def tracking_error(self) -> float:
        """
        |z - z_ref[index]| at the current state.
        """
class Integrator:
    """
    Time integrator of the articulated-body loops.
    
    Members:
    
      explicit_euler
    
      semi_implicit_euler
    
      rk4
    """
    __members__: typing.ClassVar[dict[str, Integrator]]
    explicit_euler: typing.ClassVar[Integrator]
    rk4: typing.ClassVar[Integrator]
    semi_implicit_euler: typing.ClassVar[Integrator]
    @typing.overload
    def __eq__(self, other: Integrator) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: int) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: Integrator) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: int) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class Servo:
    """
    Servo of the tracking loop: none (feed-forward only), pd, spd.
    
    Members:
    
      none
    
      pd
    
      spd
    """
    __members__: typing.ClassVar[dict[str, Servo]]
    none: typing.ClassVar[Servo]
    pd: typing.ClassVar[Servo]
    spd: typing.ClassVar[Servo]
    @typing.overload
    def __eq__(self, other: Servo) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: int) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: Servo) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: int) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class Articulated:
    """
    Articulated body in generalized coordinates, M(q) q'' + C(q, q') = tau.
    
    Subclass it in Python by defining dofs() -> n, mass_matrix(q) -> (n, n) and
    bias_forces(q, qd) -> (n,) (Coriolis, gravity, passive forces) to drive a
    model of another engine with the C++ PD/SPD loop (slow: calls back into
    Python twice per step, four times more with RK4).
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def bias_forces(self, q: numpy.ndarray[numpy.float64], qd: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        Bias forces C(q, qd): Coriolis/centrifugal, gravity and damping.
        
        Parameters
        ----------
        q : (n,) array
            Joint coordinates (rad; m for a free root's position).
        qd : (n,) array
            Their velocities.
        
        Returns
        -------
        (n,) ndarray
            Forces (N m; N).
        """
    def dofs(self) -> int:
        """
        Number of generalized coordinates.
        
        Returns
        -------
        int
            n.
        """
    def mass_matrix(self, q: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        Mass matrix M(q).
        
        Parameters
        ----------
        q : (n,) array
            Joint coordinates (rad; m for a free root's position).
        
        Returns
        -------
        (n, n) ndarray
            Symmetric positive definite.
        """
class PlanarChain(Model, Articulated):
    """
    Planar chain of L rigid links joined by hinges (generalized coordinates).
    
    The root joint is pinned at the origin (free_root: q = [x, y, theta_1..L]
    adds the root position); joint angles are relative to the parent link; q = 0
    hangs straight down, gravity along -y. Links are uniform rods (centre of mass
    at l/2, inertia m l^2/12 about it) unless inertias/coms are given. damping
    (n,) is viscous per coordinate; q_min/q_max (n,) are hard joint limits.
    M q'' + C = tau with C = Coriolis/centrifugal + gravity + damping q'.
    As a Model: z = [q, q'], control = tau (n,). Immutable: shared freely by threads.
    
    Parameters
    ----------
    masses : (L,) array
        Link masses (kg), > 0.
    lengths : (L,) array
        Link lengths (m), > 0.
    gravity : float, optional
        Gravitational acceleration (m/s^2), along -y.
    inertias : float or (L,) array, optional
        Link inertias about their centres of mass (kg m^2); uniform rods when None.
    coms : float or (L,) array, optional
        Distances of the centres of mass from the joints (m); l/2 when None.
    damping : float or (n,) array, optional
        Viscous damping per coordinate (N m s/rad), n = L (+ 2 with free_root).
    q_min, q_max : float or (n,) array, optional
        Hard joint limits (rad; m for a free root's position).
    free_root : bool, optional
        The root position (x, y) is free: q = [x, y, theta_1..L].
    """
    def __init__(self, masses: numpy.ndarray[numpy.float64], lengths: numpy.ndarray[numpy.float64], gravity: typing.SupportsFloat | typing.SupportsIndex = 9.81, inertias: numpy.ndarray[numpy.float64] | None = None, coms: numpy.ndarray[numpy.float64] | None = None, damping: numpy.ndarray[numpy.float64] | None = None, q_min: numpy.ndarray[numpy.float64] | None = None, q_max: numpy.ndarray[numpy.float64] | None = None, free_root: bool = False) -> None:
        """
        masses (L,) > 0, lengths (L,) > 0, inertias (L,) about the COMs, coms (L,) distances from the joints, damping/q_min/q_max (n,) with n = L (+2 with free_root); scalars are broadcast.
        """
    def __reduce__(self) -> tuple[typing.Any, tuple[typing.Any, tuple, dict, typing.Any]]:
        """
        Pickling support: rebuilt with the class's constructor.
        """
    def __repr__(self) -> str:
        ...
    def dynamics_jacobian(self, q: numpy.ndarray[numpy.float64], qd: numpy.ndarray[numpy.float64], tau: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        d qdd / d[q, qd], exact (forward-mode differentiation of Newton-Euler).
        
        Parameters
        ----------
        q : (n,) array
            Joint coordinates (rad; m for a free root's position).
        qd : (n,) array
            Their velocities.
        tau : (n,) array
            Torques.
        
        Returns
        -------
        (n, 2n) ndarray
        """
    def energies_along(self, q: numpy.ndarray[numpy.float64], qd: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        Kinetic plus potential energy along a trajectory.
        
        Parameters
        ----------
        q, qd : (T, n) array
            Coordinates and velocities.
        
        Returns
        -------
        (T,) ndarray
            Energy (J).
        """
    def forward_dynamics(self, q: numpy.ndarray[numpy.float64], qd: numpy.ndarray[numpy.float64], tau: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        Forward dynamics qdd = M(q)^-1 (tau - C(q, qd)).
        
        Parameters
        ----------
        q : (n,) array
            Joint coordinates (rad; m for a free root's position).
        qd : (n,) array
            Their velocities.
        tau : (n,) array
            Torques.
        
        Returns
        -------
        (n,) ndarray
            Accelerations.
        """
    def inverse_dynamics(self, q: numpy.ndarray[numpy.float64], qd: numpy.ndarray[numpy.float64], qdd: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        Inverse dynamics tau = M(q) qdd + C(q, qd).
        
        Parameters
        ----------
        q : (n,) array
            Joint coordinates (rad; m for a free root's position).
        qd : (n,) array
            Their velocities.
        qdd : (n,) array
            Accelerations.
        
        Returns
        -------
        (n,) ndarray
            Torques.
        """
    def inverse_dynamics_along(self, q: numpy.ndarray[numpy.float64], qd: numpy.ndarray[numpy.float64], qdd: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        tau = M qdd + C along a trajectory.
        
        Parameters
        ----------
        q, qd, qdd : (T, n) array
            Coordinates, velocities, accelerations.
        
        Returns
        -------
        (T, n) ndarray
            Torques.
        """
    def joint_positions(self, q: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        Positions of the root and of each link's far end.
        
        Parameters
        ----------
        q : (n,) array
            Joint coordinates (rad; m for a free root's position).
        
        Returns
        -------
        (L+1, 2) ndarray
            Positions (m).
        """
    def joint_positions_along(self, q: numpy.ndarray[numpy.float64]) -> typing.Any:
        """
        Joint positions along a trajectory.
        
        Parameters
        ----------
        q : (T, n) array
            Coordinates.
        
        Returns
        -------
        (T, L+1, 2) ndarray
            Positions (m).
        """
    def kinetic_energy(self, q: numpy.ndarray[numpy.float64], qd: numpy.ndarray[numpy.float64]) -> float:
        """
        Kinetic energy qd' M(q) qd / 2.
        
        Parameters
        ----------
        q : (n,) array
            Joint coordinates (rad; m for a free root's position).
        qd : (n,) array
            Their velocities.
        
        Returns
        -------
        float
            Energy (J).
        """
    def linearize(self, z_ref: numpy.ndarray[numpy.float64], tau_ref: numpy.ndarray[numpy.float64] | None = None, threads: int = 0) -> tuple[numpy.ndarray, numpy.ndarray]:
        """
        (A, B) of f(z, tau) = [qd; M^-1 (tau - C)] along a reference: A (T, 2n, 2n)
        and B (T, 2n, n) at z_ref[i] (T+1, 2n), tau_ref[i] (T, n) (zero if None),
        for directable.lqr.discretize/solve_continuous. GIL released.
        
        Parameters
        ----------
        z_ref : (T+1, 2n) array
            Reference states [q, qd].
        tau_ref : (T, n) array, optional
            Reference torques (zero when None).
        threads : int, optional
            Cores (0: all).
        
        Returns
        -------
        A : (T, 2n, 2n) ndarray
        B : (T, 2n, n) ndarray
        """
    def potential_energy(self, q: numpy.ndarray[numpy.float64]) -> float:
        """
        Gravitational energy sum m_i g y_i (zero at the root's height).
        
        Parameters
        ----------
        q : (n,) array
            Joint coordinates (rad; m for a free root's position).
        
        Returns
        -------
        float
            Energy (J).
        """
    @property
    def coms(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (L,)
        """
    @property
    def damping(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (n,)
        """
    @property
    def free_root(self) -> bool:
        """
        Whether the root moves freely in the plane (two more coordinates).
        """
    @property
    def gravity(self) -> float:
        """
        Gravity (m/s^2), along -y.
        """
    @property
    def inertias(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (L,) about the COMs
        """
    @property
    def lengths(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (L,)
        """
    @property
    def links(self) -> int:
        """
        Number of links L.
        """
    @property
    def masses(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (L,)
        """
    @property
    def n(self) -> int:
        """
        Number of coordinates n = L (+2 with a free root).
        """
    @property
    def q_max(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (n,)
        """
    @property
    def q_min(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (n,)
        """
class TrackResult:
    """
    A PD/SPD tracking run (arrays are read-only views of this object's memory).
    Rows after a divergence are NaN: q[:diverged_at+1] and tau[:diverged_at] are
    the valid part.
    """
    def __repr__(self) -> str:
        ...
    @property
    def diverged(self) -> bool:
        """
        Whether the run left the valid states (the rows after diverged_at are NaN).
        """
    @property
    def diverged_at(self) -> int:
        """
        Step whose result was non-finite or beyond max_state, or -1.
        """
    @property
    def q(self) -> numpy.ndarray:
        """
        (T+1, n)
        """
    @property
    def qd(self) -> numpy.ndarray:
        """
        (T+1, n)
        """
    @property
    def steps(self) -> int:
        """
        Steps completed with a valid state.
        """
    @property
    def tau(self) -> numpy.ndarray:
        """
        (T, n) servo + feed-forward torque (without tau_ext)
        """
class ReducedFluidData:
    """
    Buffers of ReducedFluid.step (ReducedFluid.create_data()): one per thread;
    the ReducedFluid itself is read-only and may be shared by threads.
    """
    def __repr__(self) -> str:
        ...
class GalerkinFluid:
    """
    The grid-independent reduced fluid z' = A(z) z + nu D z + w (Treuille thesis
    eq. 3.7-3.8): the base of the 2D and 3D ReducedFluid.
    """
    def __repr__(self) -> str:
        ...
    def advection_matrix(self, z: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        The reduced advection matrix A(z) = sum_k z_k B' A(b_k) B.
        
        Parameters
        ----------
        z : (r,) array
            Reduced velocity.
        
        Returns
        -------
        (r, r) array
            A(z), antisymmetric (1/s).
        """
    def advection_tensor(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        The reduced advection tensor.
        
        Returns
        -------
        (r, r, r) array
            Entry [k] = B' A(b_k) B (1/m), each antisymmetric.
        """
    def create_data(self) -> ReducedFluidData:
        """
        Buffers for step(), one per thread.
        
        Reusing one keeps exp(dt nu D) from being recomputed.
        
        Returns
        -------
        ReducedFluidData
            The buffers.
        """
    def diffusion_matrix(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        The reduced Laplacian.
        
        Returns
        -------
        (r, r) array
            D = B' Lap B (1/m^2), symmetric negative semi-definite.
        """
    def dynamics(self, z: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        The reduced dynamics without forcing.
        
        Parameters
        ----------
        z : (r,) array
            Reduced velocity.
        
        Returns
        -------
        (r,) array
            A(z) z + nu D z (reduced acceleration).
        """
    def fit_viscosity(self, z0: numpy.ndarray[numpy.float64], energy: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex, w: numpy.ndarray[numpy.float64], lo: typing.SupportsFloat | typing.SupportsIndex = 1e-06, hi: typing.SupportsFloat | typing.SupportsIndex = 1.0) -> tuple[float, float]:
        """
        The viscosity whose reduced energy decay matches a run's.
        
        The full solver loses energy to its advection scheme's numerical
        dissipation; this model's advection keeps it exactly, so only nu can
        account for it. Minimises the mean squared difference of
        log(E_red(t) / E_red(0)) and log(E(t) / E(0)) over nu in [lo, hi] (a
        log-spaced scan, then golden section in log nu), each trial a reduced
        rollout from z0 under w with that nu (the model's own viscosity is not used).
        
        Parameters
        ----------
        z0 : (r,) array
            The run's start projected on the basis.
        energy : (T+1,) array
            The run's kinetic energy per step (any common scale), > 0.
        dt : float
            Step (s), > 0.
        w : (T, r) array
            The run's forces projected on the basis (zeros for an unforced run).
        lo, hi : float
            Bounds of nu (m^2/s), 0 < lo < hi.
        
        Returns
        -------
        nu : float
            The fitted viscosity (m^2/s).
        residual : float
            RMS of the log-energy difference at nu (0: a perfect match).
        """
    def jacobian(self, z: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        Jacobian of the reduced dynamics.
        
        Parameters
        ----------
        z : (r,) array
            Reduced velocity.
        
        Returns
        -------
        (r, r) array
            d(A(z) z + nu D z)/dz (1/s).
        """
    def rollout(self, z0: numpy.ndarray[numpy.float64], w: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
        """
        T steps from z0 under the controls w.
        
        Parameters
        ----------
        z0 : (r,) array
            Initial reduced velocity.
        w : (T, r) array
            Reduced force per step.
        dt : float
            Step (s), > 0.
        
        Returns
        -------
        (T+1, r) array
            The states, z0 first.
        """
    def step(self, z: numpy.ndarray[numpy.float64], w: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex, data: ReducedFluidData = None) -> numpy.typing.NDArray[numpy.float64]:
        """
        One reduced step: z + dt w, then exp(dt A) (exact, orthogonal), then exp(dt nu D).
        
        GIL released.
        
        Parameters
        ----------
        z : (r,) array
            Reduced velocity.
        w : (r,) array
            Reduced force (acceleration).
        dt : float
            Step (s), > 0.
        data : ReducedFluidData, optional
            Buffers from create_data(), owned by the calling thread (None: fresh ones for this call).
        
        Returns
        -------
        (r,) array
            The next z.
        """
    @property
    def basis(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (N, r) array: the basis B.
        """
    @property
    def divergence_error(self) -> float:
        """
        max |div| h or |closed-face value| over the basis columns.
        """
    @property
    def orthonormality_error(self) -> float:
        """
        max |B'B - I|.
        """
    @property
    def r(self) -> int:
        """
        Basis size r (reduced coordinates).
        """
    @property
    def viscosity(self) -> float:
        """
        Kinematic viscosity nu (m^2/s).
        """
class Shape2D:
    """
    A rigid 2D shape: a closed simple polygon in its object frame.
    
    The object frame's origin is the obstacle's position; world = Rot(theta)
    local + (x, y). A clockwise polygon is reversed with a UserWarning; a
    self-intersecting one raises ValueError.
    
    Parameters
    ----------
    polygon : (V, 2) array
        Vertices (m), counter-clockwise, V >= 3, finite.
    """
    def __init__(self, polygon: numpy.ndarray[numpy.float64]) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def inside(self, points: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.bool]:
        """
        Whether object-frame points lie inside the polygon.
        
        Parameters
        ----------
        points : (P, 2) array
            Points in the object frame (m).
        
        Returns
        -------
        (P,) bool array
            True where the point is inside.
        """
    def surface(self, spacing: typing.SupportsFloat | typing.SupportsIndex) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64]]:
        """
        Surface samples: the midpoints of edge pieces of length <= spacing.
        
        Parameters
        ----------
        spacing : float
            Largest distance between samples along an edge (m), > 0.
        
        Returns
        -------
        points : (q, 2) array
            Sample positions in the object frame (m).
        normals : (q, 2) array
            Outward unit normals there.
        """
    @property
    def area(self) -> float:
        """
        Enclosed area (m^2).
        """
    @property
    def radius(self) -> float:
        """
        Largest vertex distance from the origin (m).
        """
    @property
    def thickness(self) -> float:
        """
        Thinnest part (m): inward from each edge midpoint to the opposite side.
        """
    @property
    def vertices(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (V, 2), counter-clockwise.
        """
class Obstacle:
    """
    A Shape2D at a pose, moving rigidly (one step's obstacle of FluidSim2D.step).
    
    world = Rot(theta) local + (x, y); its rigid velocity field is
    v(x) = (vx, vy) + omega z x (x - (x, y)).
    
    Parameters
    ----------
    shape : Shape2D
        The shape, in its object frame.
    pose : (3,) array
        (x, y, theta) in (m, m, rad).
    velocity : (3,) array
        (vx, vy, omega) in (m/s, m/s, rad/s).
    """
    def __init__(self, shape: Shape2D, pose: numpy.ndarray[numpy.float64] = ..., velocity: numpy.ndarray[numpy.float64] = ...) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def pose(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (3,) array: (x, y, theta) in (m, m, rad).
        """
    @property
    def shape(self) -> Shape2D:
        """
        The Shape2D (object frame).
        """
    @property
    def velocity(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (3,) array: (vx, vy, omega) in (m/s, m/s, rad/s).
        """
class MACGrid2D:
    """
    2D MAC grid on [0, nx h] x [0, ny h] with free-slip walls.
    
    A velocity field is a flat (N,) vector, N = ny (nx+1) + (ny+1) nx: all
    x-faces first (ny rows x (nx+1) columns, row-major, face (i, j) at
    (i h, (j+1/2) h)), then all y-faces ((ny+1) rows x nx columns, face (i, j) at
    ((i+1/2) h, j h)). Cell quantities (pressure, smoke) are (ny * nx,) row-major.
    The pressure Laplacian is factorised once, here.
    
    Parameters
    ----------
    nx, ny : int
        Cells along x and y.
    h : float, optional
        Cell size (m); default 1/nx.
    solid : (ny, nx) bool array, optional
        Fixed solid cells, whose faces are closed.
    """
    def __init__(self, nx: int, ny: int, h: typing.SupportsFloat | typing.SupportsIndex | None = None, solid: typing.Annotated[numpy.typing.ArrayLike, numpy.bool] | None = None) -> None:
        """
        Grid of nx x ny cells of size h (default 1/nx) with an optional (ny, nx) bool mask of fixed solid cells.
        """
    def __reduce__(self) -> tuple[typing.Any, tuple[typing.Any, tuple, dict, typing.Any]]:
        """
        Pickling support: rebuilt with the class's constructor.
        """
    def __repr__(self) -> str:
        ...
    def advect_cells(self, u: numpy.ndarray[numpy.float64], q: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
        """
        Semi-Lagrangian advection of a cell field.
        
        Parameters
        ----------
        u : (N,) array
            Face velocities (m/s).
        q : (nx ny,) array
            Cell values (e.g. smoke density).
        dt : float
            Step (s).
        
        Returns
        -------
        (nx ny,) array
            The advected cell field (bilinear interpolation at the departure points).
        """
    def advect_particles(self, u: numpy.ndarray[numpy.float64], points: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
        """
        Moves points one RK2 (midpoint) step through a field.
        
        Parameters
        ----------
        u : (N,) array
            Face velocities (m/s).
        points : (P, 2) array
            Positions (m).
        dt : float
            Step (s).
        
        Returns
        -------
        (P, 2) array
            New positions, clamped to the domain.
        """
    def advect_velocity(self, u: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
        """
        Semi-Lagrangian (RK2 back-trace) self-advection.
        
        Parameters
        ----------
        u : (N,) array
            Face velocities (m/s).
        dt : float
            Step (s).
        
        Returns
        -------
        (N,) array
            The advected field.
        """
    def divergence(self, u: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        Discrete divergence of a velocity field.
        
        Parameters
        ----------
        u : (N,) array
            Face velocities (m/s).
        
        Returns
        -------
        (nx ny,) array
            Divergence per cell (1/s).
        """
    def max_divergence(self, basis: numpy.ndarray[numpy.float64]) -> float:
        """
        How far the columns of a basis are from divergence-free free-slip fields.
        
        Parameters
        ----------
        basis : (N, r) array
            Fields as columns.
        
        Returns
        -------
        float
            Largest |div| h or |closed-face value| over the columns (0 for divergence-free free-slip fields).
        """
    def project(self, u: numpy.ndarray[numpy.float64]) -> typing.Any:
        """
        Divergence-free, free-slip projection (sparse LDL', factorised once).
        
        Parameters
        ----------
        u : (N,) or (k, N) array
            A field, or one per row.
        
        Returns
        -------
        (N,) or (k, N) array
            The projected field(s).
        """
    def velocity_at(self, u: numpy.ndarray[numpy.float64], points: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        Bilinearly interpolated velocities at points.
        
        Parameters
        ----------
        u : (N,) array
            Face velocities (m/s).
        points : (P, 2) array
            Points (m), clamped to the domain.
        
        Returns
        -------
        (P, 2) array
            Velocities (m/s).
        """
    def wall_mask(self) -> numpy.typing.NDArray[numpy.bool]:
        """
        The closed faces: on the walls or touching a solid cell.
        
        Returns
        -------
        (N,) bool array
            True on closed faces (always zero in a free-slip field).
        """
    def wind(self, center: numpy.ndarray[numpy.float64], direction: numpy.ndarray[numpy.float64], magnitude: typing.SupportsFloat | typing.SupportsIndex, width: typing.SupportsFloat | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
        """
        A Gaussian wind force field.
        
        Parameters
        ----------
        center : (2,) array
            Centre of the wind (m).
        direction : (2,) array
            Its direction.
        magnitude : float
            Its acceleration at the centre (m/s^2).
        width : float
            Gaussian width (m).
        
        Returns
        -------
        (N,) array
            magnitude * direction * exp(-|x - center|^2 / width^2) on the open faces (m/s^2).
        """
    @property
    def h(self) -> float:
        """
        Cell size (m).
        """
    @property
    def n_cells(self) -> int:
        """
        nx ny.
        """
    @property
    def n_faces(self) -> int:
        """
        N, the size of a velocity vector.
        """
    @property
    def n_xfaces(self) -> int:
        """
        ny (nx+1).
        """
    @property
    def n_yfaces(self) -> int:
        """
        (ny+1) nx.
        """
    @property
    def nx(self) -> int:
        """
        Cells along x.
        """
    @property
    def ny(self) -> int:
        """
        Cells along y.
        """
    @property
    def solid(self) -> numpy.typing.NDArray[numpy.bool]:
        """
        (ny, nx) bool: the fixed solid cells.
        """
class FluidSim2D:
    """
    Full (unreduced) MAC fluid on a MACGrid2D.
    
    Per step: force, semi-Lagrangian advection, implicit viscosity (factorised
    once), pressure projection; smoke density (cells) and particles (P, 2)
    advected through the new field. With moving obstacles the pressure is
    solved over the fluid cells by a fresh sparse LDL' ("direct") or by
    conjugate gradients with an incomplete-Cholesky preconditioner ("pcg").
    
    Parameters
    ----------
    grid : MACGrid2D
        The grid (shared, read-only).
    viscosity : float
        Kinematic viscosity (m^2/s), >= 0.
    dt : float
        Step (s), > 0.
    pressure_solver : {"direct", "pcg"}
        Pressure solve of the steps with obstacles.
    tolerance : float
        Relative residual tolerance of "pcg".
    """
    def __init__(self, grid: MACGrid2D, viscosity: typing.SupportsFloat | typing.SupportsIndex = 0.0, dt: typing.SupportsFloat | typing.SupportsIndex = 0.01, pressure_solver: str = 'direct', tolerance: typing.SupportsFloat | typing.SupportsIndex = 1e-12) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def run(self, forces: numpy.ndarray[numpy.float64], record_density: bool = False, progress: typing.Any = None) -> tuple:
        """
        Runs T steps, step t under the acceleration field forces[t].
        
        The simulator ends in the last state. GIL released, throttled
        progress(done, total), Ctrl-C stops it; a non-finite velocity raises
        ValueError naming the step.
        
        Parameters
        ----------
        forces : (T, N) array
            Acceleration field per step (m/s^2).
        record_density : bool
            Record the smoke density of every state.
        progress : None, bool or callable(done, total)
            Progress report.
        
        Returns
        -------
        velocities : (T+1, N) array
            The states, the initial one first.
        particles : (T+1, P, 2) array
            Particle positions (m).
        density : (T+1, nx ny) array or None
            Smoke densities, when recorded.
        """
    def run_obstacles(self, forces: numpy.ndarray[numpy.float64], shapes: collections.abc.Sequence[Shape2D], poses: numpy.ndarray[numpy.float64], velocities: numpy.ndarray[numpy.float64], record_density: bool = False, progress: typing.Any = None) -> tuple:
        """
        Runs T steps with K moving obstacles.
        
        GIL released, throttled progress, Ctrl-C stops it.
        
        Parameters
        ----------
        forces : (T, N) array
            Acceleration field per step (m/s^2).
        shapes : list of Shape2D
            The K obstacles' shapes.
        poses : (T, 3K) array
            Obstacle k's (x, y, theta) during step t in columns 3k..3k+2 (m, m, rad).
        velocities : (T, 3K) array
            Its (vx, vy, omega) (m/s, m/s, rad/s).
        record_density : bool
            Record the smoke density of every state.
        progress : None, bool or callable(done, total)
            Progress report.
        
        Returns
        -------
        velocities : (T+1, N) array
            The states, the initial one first.
        particles : (T+1, P, 2) array
            Particle positions (m).
        density : (T+1, nx ny) array or None
            Smoke densities, when recorded.
        """
    def run_particle_winds(self, directions: numpy.ndarray[numpy.float64], magnitudes: numpy.ndarray[numpy.float64], width: typing.SupportsFloat | typing.SupportsIndex, progress: typing.Any = None) -> tuple:
        """
        Runs T steps under winds that follow the particles.
        
        At step t a wind of direction directions[t] and magnitude magnitudes[k]
        blows at particle k's position (as MACGrid2D.wind).
        
        Parameters
        ----------
        directions : (T, 2) array
            Wind direction per step.
        magnitudes : (P,) array
            Wind acceleration per particle (m/s^2).
        width : float
            Gaussian width of the winds (m).
        progress : None, bool or callable(done, total)
            Progress report.
        
        Returns
        -------
        velocities : (T+1, N) array
            The states, the initial one first.
        particles : (T+1, P, 2) array
            Particle positions (m).
        density : None
            No density is recorded.
        """
    def step(self, force: numpy.ndarray[numpy.float64] | None = None, obstacles: collections.abc.Sequence[Obstacle] = []) -> None:
        """
        One step under a force field, with moving obstacles.
        
        Cells whose centres lie inside an obstacle are solid for this step; every
        face touching one takes the normal component of the obstacle's rigid
        velocity, the pressure is solved over the fluid cells with that flux, smoke
        in solid cells is zeroed and particles inside are pushed out along the
        surface normal. The new velocity holds the rigid field on the solid cells,
        so it is divergence-free on every cell. GIL released.
        
        Parameters
        ----------
        force : (N,) array, optional
            Acceleration field (m/s^2); None: none.
        obstacles : list of Obstacle
            The obstacles during this step (thinner than a cell: RuntimeWarning).
        """
    @property
    def density(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        Smoke density (nx ny,) (a copy; assign to set).
        """
    @density.setter
    def density(self, arg1: numpy.ndarray[numpy.float64]) -> None:
        ...
    @property
    def dt(self) -> float:
        """
        Step (s).
        """
    @property
    def grid(self) -> MACGrid2D:
        """
        The MACGrid2D.
        """
    @property
    def particles(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        Particle positions (P, 2) (a copy; assign to set).
        """
    @particles.setter
    def particles(self, arg1: numpy.ndarray[numpy.float64]) -> None:
        ...
    @property
    def pcg_iterations(self) -> int:
        """
        Iterations of the last obstacle step's PCG.
        """
    @property
    def pcg_residual(self) -> float:
        """
        Relative residual of the last obstacle step's PCG.
        """
    @property
    def step_solid(self) -> numpy.typing.NDArray[numpy.bool]:
        """
        (ny, nx) bool: the solid cells of the last step (fixed solids and obstacles).
        """
    @property
    def velocity(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        Velocity (N,) (a copy; assign to set).
        """
    @velocity.setter
    def velocity(self, arg1: numpy.ndarray[numpy.float64]) -> None:
        ...
    @property
    def viscosity(self) -> float:
        """
        Kinematic viscosity (m^2/s).
        """
class ReducedFluid(GalerkinFluid):
    """
    Reduced (Galerkin) fluid, Treuille thesis ch. 3: z' = A(z) z + nu D z + w.
    
    basis (N, r): orthonormal columns (plain dot product), divergence-free and
    zero on the wall faces (a basis that is not gets a RuntimeWarning with its
    divergence, as does one whose columns are not orthonormal). The r reduced advection matrices B' A(b_k) B (conservation-form
    stencil) and D = B' Lap B are precomputed here (parallel, GIL released).
    
    Parameters
    ----------
    grid : MACGrid2D
        The grid of the basis (a MACGrid3D gives the 3D model).
    basis : (N, r) array
        The velocity basis B.
    viscosity : float
        Kinematic viscosity nu (m^2/s), >= 0.
    divergence_tol : float
        Largest max |div| h of the basis before a RuntimeWarning.
    threads : int
        Threads of the precomputation (0: all).
    progress : None, bool or callable(done, total)
        Progress report of the precomputation.
    """
    def __init__(self, grid: MACGrid2D, basis: numpy.ndarray[numpy.float64], viscosity: typing.SupportsFloat | typing.SupportsIndex = 0.0, divergence_tol: typing.SupportsFloat | typing.SupportsIndex = 1e-08, threads: int = 0, progress: typing.Any = None) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def mode_gradients(self, x: numpy.ndarray[numpy.float64]) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64]]:
        """
        Spatial derivatives of the modes at a point.
        
        Parameters
        ----------
        x : (2,) array
            A point (m), clamped to the domain.
        
        Returns
        -------
        dPsi_dx : (2, r) array
            d Psi / dx (1/s per unit of z), zero across a clamped wall.
        dPsi_dy : (2, r) array
            d Psi / dy.
        """
    def modes(self, x: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        The modes Psi(x) at a point: the velocity of each basis field there.
        
        Parameters
        ----------
        x : (2,) array
            A point (m), clamped to the domain.
        
        Returns
        -------
        (2, r) array
            Psi(x) (velocity per unit of z).
        """
    def velocity(self, z: numpy.ndarray[numpy.float64], points: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        The reduced velocity Psi(p) z at points.
        
        Parameters
        ----------
        z : (r,) array
            Reduced velocity.
        points : (P, 2) array
            Points (m), clamped to the domain.
        
        Returns
        -------
        (P, 2) array
            Velocities (m/s).
        """
    @property
    def grid(self) -> MACGrid2D:
        """
        The MACGrid2D of the basis.
        """
class FluidParticles(Model):
    """
    P particles in a reduced fluid as a Model (Barbic & Popovic appendix C):
    state [p_1 .. p_P (2 each), z (r)], control w (r,), B = [0; I],
    p_i' = Psi(p_i) z, z' = A(z) z + nu D z + w. step() is the reduced fluid step
    plus RK2 particles (clamped to the domain).
    
    Parameters
    ----------
    fluid : ReducedFluid
        The reduced fluid.
    particles : int
        Number of particles P.
    """
    @typing.overload
    def __init__(self, fluid: ReducedFluid, particles: int) -> None:
        ...
    @typing.overload
    def __init__(self, scene: ..., particles: int, poses: numpy.ndarray[numpy.float64], velocities: numpy.ndarray[numpy.float64]) -> None:
        """
        Particles in a ReducedScene whose K objects stay at poses (K, 3) moving with
        velocities (K, 3): p_i' = u'(p_i) (eq. 3.9, linear in z: the Jacobian holds
        the boundary terms); step() advances z by the scene's step (Fig. 3.7) and
        pushes particles out of the objects.
        """
    def __repr__(self) -> str:
        ...
    @property
    def fluid(self) -> ReducedFluid:
        """
        The ReducedFluid.
        """
    @property
    def has_scene(self) -> bool:
        """
        Whether the particles move in a ReducedScene (with boundary terms).
        """
    @property
    def particles(self) -> int:
        """
        Number of particles P.
        """
class BoundaryBasis:
    """
    Boundary basis of one object (Treuille thesis sec. 3.5.1, 3.5.5).
    
    p divergence-free fields on a local MAC grid in the object frame whose
    surface speeds S Btilde are the principal directions of the reduced
    basis's surface speeds S R^-1 B over training poses (orthonormal, eq.
    3.10), and 3 rigid fields whose surface speeds are those of unit x and y
    translation and unit rotation. Each field is the minimum-norm local field
    with zero divergence on the local cells outside the shape and zero flux
    through the local grid's outer faces. Build with BoundaryBasis.build.
    """
    @staticmethod
    def build(reduced: typing.Any, shape: Shape2D, poses: numpy.ndarray[numpy.float64], p: int, surface_spacing: typing.SupportsFloat | typing.SupportsIndex | None = None, local_size: typing.SupportsFloat | typing.SupportsIndex | None = None, rigid: bool = True, threads: int = 0, progress: typing.Any = None) -> BoundaryBasis:
        """
        Builds an object's boundary basis from a reduced fluid and training poses.
        
        Parallel over the poses, GIL released.
        
        Parameters
        ----------
        reduced : ReducedFluid
            The 2D reduced fluid whose basis B (N, r) the fields complement.
        shape : Shape2D
            The object's shape.
        poses : (n, 3) array
            Training poses (x, y, theta) in (m, m, rad), finite.
        p : int
            Boundary fields wanted, >= 1; cut (with a UserWarning naming p) to the
            rank of the collected surface speeds.
        surface_spacing : float, optional
            Spacing of the surface samples (m); default h/2.
        local_size : float, optional
            Half-size of the local grid (m); default the shape's radius + 4h. It
            must contain the shape with a cell to spare.
        rigid : bool
            Also build the 3 rigid fields (sec. 3.5.5).
        threads : int
            Worker threads (0: all).
        progress : None, bool or callable(done, total)
            Progress report.
        
        Returns
        -------
        BoundaryBasis
            The basis; ``p`` may be smaller than asked.
        """
    def __repr__(self) -> str:
        ...
    @property
    def constraint_error(self) -> float:
        """
        Largest residual of the fields' constraints (surface speeds, divergence times h).
        """
    @property
    def energy(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (p,) fraction of the collected surface speeds' energy per mode.
        """
    @property
    def energy_weights(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (p, q) W = (A'A)^-1 (M_ss S Btilde)': the least-energy field coefficients for given surface speeds (W S Btilde = I); the feedforward's projection with projection="energy".
        """
    @property
    def fields(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (N_local, p) array: the boundary fields Btilde on the local grid.
        """
    @property
    def half_size(self) -> float:
        """
        Half-size of the local grid: object point x is at x + half_size in local-grid coordinates.
        """
    @property
    def local_grid(self) -> MACGrid2D:
        """
        MACGrid2D of the fields, in the object frame shifted by half_size (spacing h).
        """
    @property
    def p(self) -> int:
        """
        Number of boundary fields (without the rigid ones).
        """
    @property
    def q(self) -> int:
        """
        Number of surface samples.
        """
    @property
    def rank(self) -> int:
        """
        Rank of the collected surface speeds.
        """
    @property
    def rigid_fields(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (N_local, 3) array: fields of unit x, y translation and unit rotation (rad/s).
        """
    @property
    def shape(self) -> Shape2D:
        """
        The object's Shape2D.
        """
    @property
    def surface_normals(self) -> numpy.ndarray:
        """
        (q, 2), object frame, outward.
        """
    @property
    def surface_points(self) -> numpy.ndarray:
        """
        (q, 2), object frame.
        """
    @property
    def surface_speeds(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (q, p) = S Btilde, orthonormal columns (eq. 3.10).
        """
class Coupling:
    """
    Coupling of a reduced fluid and one object's boundary basis (eq. 3.11-3.12).
    
    Feedforward F = -(S Btilde)' S R^-1 B (p, r) and feedback
    G = B' R [Btilde, rigid] (r, p+3), computed on the fly or tabulated on a
    pose grid and interpolated multilinearly (thesis sec. 3.5.6).
    
    Parameters
    ----------
    reduced : ReducedFluid
        The 2D reduced fluid (basis B, N x r).
    boundary_basis : BoundaryBasis
        The object's boundary basis, built on the same grid spacing.
    pose_table : tuple of three 1D arrays, optional
        (xs, ys, thetas): uniformly spaced, increasing table nodes (m, m, rad);
        every combination is tabulated. Required unless precompute is "none".
    precompute : {"none", "feedback", "both"}
        What is tabulated: nothing, G, or F and G.
    compress : int, optional
        Keep k PCA modes of the tables over the poses (None: plain tables).
    threads : int
        Worker threads of the tabulation (0: all).
    progress : None, bool or callable(done, total)
        Progress report of the tabulation.
    table_dtype : {"float64", "float32"}
        Storage of plain tables: float32 halves the memory and the bytes a
        scene step reads (entries rounded to ~6e-8 relative); not with compress.
    projection : {"surface", "energy"}
        The feedforward's projection of the flow's surface speeds: "surface" is
        eq. 3.11 as printed, (S Btilde)'; "energy" uses the basis'
        energy_weights, the least-energy field combination. Both cancel speeds
        in the span of S Btilde exactly. "energy" was the tested hypothesis for
        the growth of I + G F at still poses (spectral radius up to 1.18 with
        eq. 3.11) and measured worse (1.28, and half the surface energy
        removed): kept to reproduce that measurement (DESIGN.md), not for use.
    """
    def __init__(self, reduced: typing.Any, boundary_basis: BoundaryBasis, pose_table: tuple | None = None, precompute: str = 'none', compress: int | None = None, threads: int = 0, progress: typing.Any = None, table_dtype: str = 'float64', projection: str = 'surface') -> None:
        ...
    def __repr__(self) -> str:
        ...
    def feedback(self, pose: numpy.ndarray[numpy.float64], exact: bool = False) -> numpy.typing.NDArray[numpy.float64]:
        """
        The feedback G (eq. 3.12) at a pose.
        
        Parameters
        ----------
        pose : (3,) array
            (x, y, theta) in (m, m, rad).
        exact : bool
            Resample the boundary fields even when G is tabulated.
        
        Returns
        -------
        (r, m) array
            G = B' R [Btilde, rigid]: z gains G c for coefficients c (m,).
        """
    def feedforward(self, pose: numpy.ndarray[numpy.float64], exact: bool = False) -> numpy.typing.NDArray[numpy.float64]:
        """
        The feedforward F (eq. 3.11) at a pose.
        
        Parameters
        ----------
        pose : (3,) array
            (x, y, theta) in (m, m, rad).
        exact : bool
            Compute it from the surface samples even when F is tabulated.
        
        Returns
        -------
        (p, r) array
            F: the boundary coefficients r~ = F z of a flow state z.
        """
    def feedforward_single(self, pose: typing.Any, out: typing.Any = None) -> typing.Any:
        """
        The on-the-fly feedforward F (eq. 3.11) in single precision.
        
        Each row of S R^-1 B is summed in double and rounded to float; the
        (p x q) (q x r) product then runs in float, twice the lanes per vector
        instruction of the double computation (``feedforward(pose, exact=True)``),
        with F to about 1e-6 relative. For a per-step call, pass the pose as a
        tuple of three floats (read without making an array) and a preallocated
        ``out``: nothing is allocated for the result and nothing is copied.
        
        Parameters
        ----------
        pose : (3,) array or tuple of 3 floats
            (x, y, theta) in (m, m, rad).
        out : (p, r) float32 array, optional
            C-contiguous, writeable: F is written into it in place and it is
            returned (the same object).
        
        Returns
        -------
        (p, r) float32 array
            F: the boundary coefficients r~ = F z of a flow state z (``out`` when
            given).
        """
    @property
    def boundary_basis(self) -> BoundaryBasis:
        """
        The object's BoundaryBasis.
        """
    @property
    def m(self) -> int:
        """
        p + rigid fields: the object's coefficient count.
        """
    @property
    def p(self) -> int:
        """
        Number of boundary fields (coefficients r~ = F z).
        """
    @property
    def projection(self) -> str:
        """
        The feedforward's projection, "surface" (eq. 3.11) or "energy".
        """
    @property
    def table_bytes(self) -> int:
        """
        Bytes of the stored tables (0 without tables).
        """
    @property
    def table_dtype(self) -> str:
        """
        Storage of the tables, "float64" or "float32".
        """
    @property
    def table_nodes(self) -> int:
        """
        Poses in the table (0 without tables).
        """
class ReducedSceneData:
    """
    Buffers of a ReducedScene (one per thread).
    """
    def __repr__(self) -> str:
        ...
class ReducedScene:
    """
    A reduced fluid with moving objects (Treuille thesis Fig. 3.7).
    
    Each step advects, diffuses and adds forces, then per object computes the
    boundary coefficients r~ = F z and the rigid ones (the object's velocity in
    its own frame), and adds z += sum_i G_i [r~_i; v_i]. The full field is
    u' = B z + sum_i R_i [Btilde_i, rigid_i] c_i (eq. 3.9). The scene is
    immutable and may be shared by threads, each with its own data.
    
    Parameters
    ----------
    reduced : ReducedFluid
        The 2D reduced fluid.
    couplings : list of Coupling
        One per object, each built for ``reduced``.
    """
    def __init__(self, reduced: typing.Any, couplings: collections.abc.Sequence[Coupling]) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def advect_particles(self, points: numpy.ndarray[numpy.float64], z: numpy.ndarray[numpy.float64], boundary_coeffs: numpy.ndarray[numpy.float64], poses: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
        """
        Moves particles one RK2 (midpoint) step through u'.
        
        Parameters
        ----------
        points : (P, 2) array
            World positions (m).
        z : (r,) array
            Reduced flow state.
        boundary_coeffs : (K, max_m) array
            The objects' coefficients (held over the step).
        poses : (K, 3) array
            The objects' (x, y, theta) (m, m, rad).
        dt : float
            Step (s), > 0.
        
        Returns
        -------
        (P, 2) array
            New positions, clamped to the domain and pushed out of the objects along their normals.
        """
    def create_data(self) -> ReducedSceneData:
        """
        Buffers for one thread's steps.
        
        Returns
        -------
        ReducedSceneData
            Pass it to ``step``; one per thread.
        """
    def step(self, z: numpy.ndarray[numpy.float64], w: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex, poses: numpy.ndarray[numpy.float64], velocities: numpy.ndarray[numpy.float64], data: ReducedSceneData = None, return_flow: bool = False) -> tuple:
        """
        (z_next (r,), boundary_coeffs (K, max_m)) [, z_flow (r,): the state the coefficients cancel, when return_flow].
        """
    def surface_energy_removed(self, z: numpy.ndarray[numpy.float64], boundary_coeffs: numpy.ndarray[numpy.float64], poses: numpy.ndarray[numpy.float64], velocities: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        Surface energy removed per object, the thesis' metric (Fig. 3.11b).
        
        Parameters
        ----------
        z : (r,) array
            The flow state the coefficients cancel (``step(..., return_flow=True)``'s z_flow).
        boundary_coeffs : (K, max_m) array
            The objects' coefficients.
        poses : (K, 3) array
            The objects' (x, y, theta) (m, m, rad).
        velocities : (K, 3) array
            The objects' (vx, vy, omega) (m/s, m/s, rad/s).
        
        Returns
        -------
        (K,) array
            1 - |S(u' - rigid)|^2 / |S(B z - rigid)|^2 (1: the relative normal flow is cancelled).
        """
    def surface_speed(self, object: int, z: numpy.ndarray[numpy.float64], boundary_coeffs: numpy.ndarray[numpy.float64], poses: numpy.ndarray[numpy.float64], boundary: bool = True) -> numpy.typing.NDArray[numpy.float64]:
        """
        Normal speeds of the flow at one object's surface samples.
        
        Parameters
        ----------
        object : int
            Index of the object, 0 <= object < K.
        z : (r,) array
            Reduced flow state.
        boundary_coeffs : (K, max_m) array
            The objects' coefficients.
        poses : (K, 3) array
            The objects' (x, y, theta) (m, m, rad).
        boundary : bool
            Of u' (True) or of B z alone (False).
        
        Returns
        -------
        (q,) array
            n_k . u(x_k) at the world surface samples (m/s).
        """
    def velocity_at(self, points: numpy.ndarray[numpy.float64], z: numpy.ndarray[numpy.float64], boundary_coeffs: numpy.ndarray[numpy.float64], poses: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        The velocity u' of eq. 3.9 at points.
        
        Parameters
        ----------
        points : (P, 2) array
            World points (m), clamped to the domain.
        z : (r,) array
            Reduced flow state (the one the coefficients were computed from).
        boundary_coeffs : (K, max_m) array
            The objects' coefficients, as ``step`` returns them.
        poses : (K, 3) array
            The objects' (x, y, theta) (m, m, rad).
        
        Returns
        -------
        (P, 2) array
            B z plus each object's resampled local field (m/s).
        """
    def velocity_field(self, z: numpy.ndarray[numpy.float64], boundary_coeffs: numpy.ndarray[numpy.float64], poses: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        The velocity u' of eq. 3.9 on the world grid's faces.
        
        Parameters
        ----------
        z : (r,) array
            Reduced flow state.
        boundary_coeffs : (K, max_m) array
            The objects' coefficients.
        poses : (K, 3) array
            The objects' (x, y, theta) (m, m, rad).
        
        Returns
        -------
        (N,) array
            B z plus the boundary fields resampled onto the faces under each object's local grid (m/s).
        """
    @property
    def couplings(self) -> list[Coupling]:
        """
        The objects' Couplings (list of K).
        """
    @property
    def max_m(self) -> int:
        """
        Columns of boundary_coeffs (the largest m).
        """
    @property
    def objects(self) -> int:
        """
        Number of objects K.
        """
    @property
    def reduced(self) -> ReducedFluid:
        """
        The ReducedFluid.
        """
class MACGrid3D:
    """
    3D MAC grid on [0, nx h] x [0, ny h] x [0, nz h] with free-slip walls and optional fixed solid cells.
    
    A velocity field is a flat (N,) vector: all x-faces (nz x ny x (nx+1), i
    fastest; face (i, j, k) at (i h, (j+1/2) h, (k+1/2) h)), then y-faces
    (nz x (ny+1) x nx), then z-faces ((nz+1) x ny x nx). Cell quantities are
    (nz ny nx,) with i fastest (reshape to (nz, ny, nx)). The pressure is solved
    over the fluid cells: by a sparse LDL' factorised here when there are at most
    direct_limit fluid cells, else by MIC(0)-preconditioned CG.
    """
    def __init__(self, nx: int, ny: int, nz: int, h: typing.SupportsFloat | typing.SupportsIndex | None = None, solid: numpy.ndarray | None = None, direct_limit: int | None = None) -> None:
        """
        A grid of nx x ny x nz cells of side h.
        
        Parameters
        ----------
        nx, ny, nz : int
            Cells along x, y, z (>= 1).
        h : float, optional
            Cell side (m); default 1 / nx.
        solid : (nz, ny, nx) bool array, optional
            Fixed solid cells; the pressure solve and the face Laplacian respect them.
        direct_limit : int, optional
            Most fluid cells for which project() factorises the Poisson matrix once
            (sparse LDL'); above it, MIC(0)-preconditioned CG. Default 8192
            (measured crossover, benchmarks/bench_fluid3d.py).
        """
    def __repr__(self) -> str:
        ...
    def advect_cells(self, u: numpy.ndarray[numpy.float64], q: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex, drift: numpy.ndarray[numpy.float64] | None = None) -> numpy.typing.NDArray[numpy.float64]:
        """
        Semi-Lagrangian advection of a cell quantity (smoke) through u plus a drift.
        
        Parameters
        ----------
        u : (N,) array
            Face velocities (m/s).
        q : (n_cells,) array
            The cell quantity.
        dt : float
            Step (s).
        drift : (3,) array, optional
            Uniform drift added to u (m/s).
        
        Returns
        -------
        (n_cells,) array
            q after the step.
        """
    def advect_particles(self, u: numpy.ndarray[numpy.float64], points: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex, drift: numpy.ndarray[numpy.float64] | None = None) -> numpy.typing.NDArray[numpy.float64]:
        """
        One RK2 (midpoint) step of points through a face field plus a drift.
        
        Parameters
        ----------
        u : (N,) array
            Face velocities (m/s).
        points : (P, 3) array
            Positions (m).
        dt : float
            Step (s).
        drift : (3,) array, optional
            Uniform drift (m/s).
        
        Returns
        -------
        (P, 3) array
            The moved points, clamped to the domain.
        """
    def advect_velocity(self, u: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
        """
        Semi-Lagrangian self-advection of a velocity field (RK2 back-trace).
        
        Parameters
        ----------
        u : (N,) array
            Face velocities (m/s).
        dt : float
            Step (s).
        
        Returns
        -------
        (N,) array
            The advected field (m/s), not projected.
        """
    def closed_mask(self) -> numpy.typing.NDArray[numpy.bool]:
        """
        The faces a field of this grid always has zero.
        
        Returns
        -------
        (N,) bool array
            Wall faces and faces touching a fixed solid cell.
        """
    def divergence(self, u: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        Discrete divergence of a velocity field.
        
        Parameters
        ----------
        u : (N,) array
            Face velocities (m/s).
        
        Returns
        -------
        (n_cells,) array
            div u per cell (1/s).
        """
    def max_divergence(self, basis: numpy.ndarray[numpy.float64]) -> float:
        """
        How far the columns of a basis are from divergence-free, free-slip fields.
        
        Parameters
        ----------
        basis : (N, r) array
            Velocity fields as columns.
        
        Returns
        -------
        float
            Largest |div| h over fluid cells or |value| on a closed face (m/s).
        """
    def project(self, u: numpy.ndarray[numpy.float64], tol: typing.SupportsFloat | typing.SupportsIndex = 1e-10) -> typing.Any:
        """
        Divergence-free projection: closed faces zeroed, pressure over the fluid cells.
        
        Parameters
        ----------
        u : (N,) or (k, N) array
            A velocity field (m/s), or k of them as rows (projected in parallel).
        tol : float
            Relative residual of the pressure PCG (the direct solve is exact). A PCG
            that does not reach it raises ValueError with its residual.
        
        Returns
        -------
        (N,) or (k, N) array
            The projected field(s).
        """
    def velocity_at(self, u: numpy.ndarray[numpy.float64], points: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        Trilinearly interpolated velocities of a face field.
        
        Parameters
        ----------
        u : (N,) array
            Face velocities (m/s).
        points : (P, 3) array
            World points (m), clamped to the domain.
        
        Returns
        -------
        (P, 3) array
            Velocities (m/s).
        """
    def wind(self, center: numpy.ndarray[numpy.float64], direction: numpy.ndarray[numpy.float64], magnitude: typing.SupportsFloat | typing.SupportsIndex, width: typing.SupportsFloat | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
        """
        A Gaussian wind force field on the open faces.
        
        Parameters
        ----------
        center : (3,) array
            Centre of the gust (m).
        direction : (3,) array
            Its direction (normalised here).
        magnitude : float
            Peak acceleration (m/s^2).
        width : float
            Gaussian width (m).
        
        Returns
        -------
        (N,) array
            magnitude * direction * exp(-|x - center|^2 / width^2) at each open face (m/s^2).
        """
    @property
    def h(self) -> float:
        """
        Cell side (m).
        """
    @property
    def n_cells(self) -> int:
        """
        nx ny nz.
        """
    @property
    def n_faces(self) -> int:
        """
        N, the size of a velocity vector.
        """
    @property
    def n_xfaces(self) -> int:
        """
        nz ny (nx+1).
        """
    @property
    def n_yfaces(self) -> int:
        """
        nz (ny+1) nx.
        """
    @property
    def n_zfaces(self) -> int:
        """
        (nz+1) ny nx.
        """
    @property
    def nx(self) -> int:
        """
        Cells along x.
        """
    @property
    def ny(self) -> int:
        """
        Cells along y.
        """
    @property
    def nz(self) -> int:
        """
        Cells along z.
        """
    @property
    def solid(self) -> numpy.typing.NDArray[numpy.bool]:
        """
        (nz, ny, nx) bool: the fixed solid cells.
        """
    @property
    def uses_direct_solver(self) -> bool:
        """
        Whether project() uses the LDL' factor (else MIC(0)-PCG).
        """
class Shape3D:
    """
    A rigid 3D shape: a closed triangle mesh in the object frame (vertices (V, 3),
    triangles (F, 3) int, outward-oriented; an inward mesh is reversed, see
    `reversed`). Inside test by generalised winding number.
    
    Parameters
    ----------
    vertices : (V, 3) array
        Vertex positions (m), object frame.
    triangles : (F, 3) int array
        Vertex indices of each triangle, consistently oriented; every edge
        shared by exactly two triangles.
    """
    @staticmethod
    def box(w: typing.SupportsFloat | typing.SupportsIndex, h: typing.SupportsFloat | typing.SupportsIndex, d: typing.SupportsFloat | typing.SupportsIndex) -> Shape3D:
        """
        A box centred on the object origin.
        
        Parameters
        ----------
        w, h, d : float
            Sides along x, y, z (m).
        
        Returns
        -------
        Shape3D
        """
    @staticmethod
    def plate(w: typing.SupportsFloat | typing.SupportsIndex, h: typing.SupportsFloat | typing.SupportsIndex, thickness: typing.SupportsFloat | typing.SupportsIndex, aperture: numpy.ndarray[numpy.float64] | None = None) -> Shape3D:
        """
        A plate centred on the object origin, its normal along z.
        
        Parameters
        ----------
        w, h : float
            Sides along x and y (m).
        thickness : float
            Extent along z (m).
        aperture : (2,) array, optional
            Sides (aw, ah) (m) of a centred rectangular hole through it.
        
        Returns
        -------
        Shape3D
        """
    @staticmethod
    def sphere(r: typing.SupportsFloat | typing.SupportsIndex, subdivisions: int = 2) -> Shape3D:
        """
        An icosphere centred on the object origin.
        
        Parameters
        ----------
        r : float
            Radius (m).
        subdivisions : int
            Times the icosahedron's triangles are split in four (2: 320 triangles).
        
        Returns
        -------
        Shape3D
        """
    def __init__(self, vertices: numpy.ndarray[numpy.float64], triangles: typing.Annotated[numpy.typing.ArrayLike, numpy.int64]) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def closest_point(self, points: numpy.ndarray[numpy.float64]) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64]]:
        """
        The closest surface point of each point, with its outward normal.
        
        Parameters
        ----------
        points : (P, 3) array
            Object-frame points (m).
        
        Returns
        -------
        closest : (P, 3) array
            Surface points (m).
        normals : (P, 3) array
            Outward unit normals of the triangles they lie on.
        """
    def inside(self, points: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.bool]:
        """
        Which points lie inside the shape (generalised winding number > 1/2).
        
        Parameters
        ----------
        points : (P, 3) array
            Object-frame points (m).
        
        Returns
        -------
        (P,) bool array
        """
    def surface(self, spacing: typing.SupportsFloat | typing.SupportsIndex) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64]]:
        """
        Surface samples about spacing apart (one per plane and cube of that side).
        
        Parameters
        ----------
        spacing : float
            Sample spacing (m).
        
        Returns
        -------
        points : (q, 3) array
            Object frame (m).
        normals : (q, 3) array
            Outward unit normals.
        """
    @property
    def min_extent(self) -> float:
        """
        Smallest side of the bounding box (m).
        """
    @property
    def radius(self) -> float:
        """
        Largest vertex distance from the origin (m).
        """
    @property
    def reversed(self) -> bool:
        """
        Whether the given mesh was inward and got reversed.
        """
    @property
    def triangles(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        (F, 3) vertex indices, outward-oriented.
        """
    @property
    def vertices(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (V, 3) vertex positions (m), object frame.
        """
    @property
    def volume(self) -> float:
        """
        Enclosed volume (m^3).
        """
class Obstacle3D:
    """
    A Shape3D at a pose with a rigid velocity: world = R local + position,
    velocity at x = velocity + angular_velocity x (x - position).
    """
    def __init__(self, shape: Shape3D, position: numpy.ndarray[numpy.float64], rotation: numpy.ndarray[numpy.float64] | None = None, velocity: numpy.ndarray[numpy.float64] | None = None, angular_velocity: numpy.ndarray[numpy.float64] | None = None) -> None:
        """
        A shape placed in the world and moving rigidly.
        
        Parameters
        ----------
        shape : Shape3D
        position : (3,) array
            World position of the object origin (m).
        rotation : (3, 3) or (3,) array, optional
            Rotation matrix, or rotation vector (axis times angle, rad); None: identity.
        velocity : (3,) array, optional
            Linear velocity (m/s); default zero.
        angular_velocity : (3,) array, optional
            Angular velocity (rad/s), world frame; default zero.
        """
    def __repr__(self) -> str:
        ...
    def inside(self, points: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.bool]:
        """
        Which world points lie inside the obstacle.
        
        Parameters
        ----------
        points : (P, 3) array
            World points (m).
        
        Returns
        -------
        (P,) bool array
        """
    def rigid_velocity(self, points: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        The rigid velocity velocity + angular_velocity x (x - position).
        
        Parameters
        ----------
        points : (P, 3) array
            World points x (m).
        
        Returns
        -------
        (P, 3) array
            Velocities (m/s).
        """
    @property
    def angular_velocity(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (3,) angular velocity (rad/s), world frame.
        """
    @property
    def position(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (3,) world position of the object origin (m).
        """
    @property
    def rotation(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (3, 3) rotation matrix R: world = R local + position.
        """
    @property
    def shape(self) -> Shape3D:
        """
        The Shape3D (object frame).
        """
    @property
    def velocity(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (3,) linear velocity (m/s).
        """
class FluidSim3D:
    """
    Full 3D MAC fluid with moving obstacles: per step force (+ buoyancy of the
    smoke), semi-Lagrangian advection, implicit viscosity (CG), obstacle cells
    made solid with their rigid normal velocity on every face they touch,
    projection over the fluid cells (MIC(0)-PCG to tol), then smoke and particles
    advected through the new field plus the uniform updraft (smoke in solids is
    zero, particles are pushed out of obstacles).
    
    Parameters
    ----------
    grid : MACGrid3D
    viscosity : float
        Kinematic viscosity (m^2/s), >= 0.
    dt : float
        Step (s), > 0.
    updraft : (3,) array, optional
        Uniform velocity (m/s) carrying smoke and particles besides the flow.
    buoyancy : (3,) array, optional
        Acceleration per unit smoke density (m/s^2).
    tol : float
        Relative residual of the pressure PCG.
    """
    def __init__(self, grid: MACGrid3D, viscosity: typing.SupportsFloat | typing.SupportsIndex = 0.0, dt: typing.SupportsFloat | typing.SupportsIndex = 0.01, updraft: numpy.ndarray[numpy.float64] | None = None, buoyancy: numpy.ndarray[numpy.float64] | None = None, tol: typing.SupportsFloat | typing.SupportsIndex = 1e-08) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def step(self, force: numpy.ndarray[numpy.float64] | None = None, obstacles: collections.abc.Sequence[Obstacle3D] = []) -> None:
        """
        One step with the acceleration field force (N,) or None and the obstacles (Obstacle3D, at this step's poses).
        """
    @property
    def buoyancy(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (3,) acceleration per unit smoke density (m/s^2).
        """
    @property
    def density(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        Smoke density (n_cells,) (a copy; assign to set).
        """
    @density.setter
    def density(self, arg1: numpy.ndarray[numpy.float64]) -> None:
        ...
    @property
    def dt(self) -> float:
        """
        Step (s).
        """
    @property
    def grid(self) -> MACGrid3D:
        """
        The MACGrid3D.
        """
    @property
    def particles(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        Particle positions (P, 3) (a copy; assign to set).
        """
    @particles.setter
    def particles(self, arg1: numpy.ndarray[numpy.float64]) -> None:
        ...
    @property
    def pressure_iterations(self) -> int:
        """
        PCG iterations of the last step (0: direct).
        """
    @property
    def pressure_residual(self) -> float:
        """
        Relative residual of the last pressure solve.
        """
    @property
    def pushed_particles(self) -> int:
        """
        Particles pushed out of obstacles in the last step.
        """
    @property
    def solid(self) -> numpy.typing.NDArray[numpy.bool]:
        """
        (nz, ny, nx) bool: the cells solid in the last step.
        """
    @property
    def tol(self) -> float:
        """
        Relative residual of the pressure PCG.
        """
    @property
    def updraft(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (3,) uniform velocity carrying smoke and particles (m/s).
        """
    @property
    def velocity(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        Velocity (N,) (a copy; assign to set).
        """
    @velocity.setter
    def velocity(self, arg1: numpy.ndarray[numpy.float64]) -> None:
        ...
    @property
    def viscosity(self) -> float:
        """
        Kinematic viscosity (m^2/s).
        """
class ReducedFluid3D(GalerkinFluid):
    """
    Reduced (Galerkin) fluid on a MACGrid3D (Treuille thesis sec. 3.6-3.7): z' = A(z) z + nu D z + w.
    
    basis (N, r): orthonormal, divergence-free columns, zero on the closed faces.
    The advection matrices B' A(b_k) B come from the 3D conservation-form
    stencil (eq. 3.13-3.14), precomputed in parallel with the GIL released.
    
    Parameters
    ----------
    grid : MACGrid3D
    basis : (N, r) array
        Velocity basis B (copied).
    viscosity : float
        nu (m^2/s), >= 0.
    divergence_tol : float
        A basis whose divergence or closed-face values exceed this warns.
    threads : int
        Threads of the precomputation (<= 0: all).
    progress : None, bool or callable(done, total)
        Progress of the precomputation (True: a tqdm bar).
    """
    def __init__(self, grid: MACGrid3D, basis: numpy.ndarray[numpy.float64], viscosity: typing.SupportsFloat | typing.SupportsIndex = 0.0, divergence_tol: typing.SupportsFloat | typing.SupportsIndex = 1e-08, threads: int = 0, progress: typing.Any = None) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def advect_particles(self, z: numpy.ndarray[numpy.float64], z_next: numpy.ndarray[numpy.float64], points: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex, drift: numpy.ndarray[numpy.float64] | None = None, obstacles: collections.abc.Sequence[Obstacle3D] = [], threads: int = 0, data: ReducedFluidData = None) -> tuple[numpy.typing.NDArray[numpy.float64], int]:
        """
        One RK2 (midpoint) step of particles through the reduced field plus a drift.
        
        The field is Psi z at the start and Psi (z + z_next) / 2 at the midpoint.
        Parallel over particles (visited in cell order), GIL released.
        
        Parameters
        ----------
        z, z_next : (r,) arrays
            Reduced velocity at the start and the end of the step.
        points : (P, 3) array
            Positions (m); not modified (the result is a new array).
        dt : float
            Step (s).
        drift : (3,) array, optional
            Constant drift (m/s), e.g. the leaves' small fall speed.
        obstacles : list of Obstacle3D
            Particles that end inside one are pushed out along the surface normal.
        threads : int
            Threads (<= 0 with data: the team chosen by measurement over the calls
            sharing data; <= 0 without: all cores).
        data : ReducedFluidData, optional
            Buffers from create_data(), one per thread (None: fresh ones).
        
        Returns
        -------
        points : (P, 3) array
            Moved, clamped to the domain, outside the obstacles.
        pushed : int
            Pushes out of an obstacle in this step.
        """
    def mode_gradients(self, x: numpy.ndarray[numpy.float64]) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64]]:
        """
        Spatial derivatives of the velocity modes at a point.
        
        Parameters
        ----------
        x : (3,) array
            World point (m), clamped to the domain.
        
        Returns
        -------
        dPsi_dx, dPsi_dy, dPsi_dz : (3, r) arrays
            Derivatives (1/m) of Psi(x) along x, y, z.
        """
    def modes(self, x: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        The velocity modes at a point: u(x) = Psi(x) z.
        
        Parameters
        ----------
        x : (3,) array
            World point (m), clamped to the domain.
        
        Returns
        -------
        (3, r) array
            Psi(x), trilinear interpolation of the basis fields.
        """
    def velocity(self, z: numpy.ndarray[numpy.float64], points: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        The reduced velocity field at points.
        
        Parameters
        ----------
        z : (r,) array
            Reduced velocity.
        points : (P, 3) array
            World points (m), clamped to the domain.
        
        Returns
        -------
        (P, 3) array
            Psi(p) z at each point (m/s).
        """
    @property
    def grid(self) -> MACGrid3D:
        """
        The MACGrid3D of the basis.
        """
class FluidParticles3D(Model):
    """
    P particles in a 3D reduced fluid as a Model: state [p_1 .. p_P (3 each), z (r)],
    control w (r,), B = [0; I], p_i' = Psi(p_i) z + drift, z' = A(z) z + nu D z + w.
    """
    @typing.overload
    def __init__(self, fluid: ReducedFluid3D, particles: int, drift: numpy.ndarray[numpy.float64] | None = None) -> None:
        ...
    @typing.overload
    def __init__(self, scene: ..., particles: int, poses: numpy.ndarray[numpy.float64], velocities: numpy.ndarray[numpy.float64], drift: numpy.ndarray[numpy.float64] | None = None) -> None:
        """
        Particles in a ReducedScene3D whose K objects stay at poses (K, 6) moving with
        velocities (K, 6): p_i' = u'(p_i) + drift (eq. 3.9, linear in z: the Jacobian
        holds the boundary terms); step() advances z by the scene's step (Fig. 3.7)
        and pushes particles out of the objects.
        """
    def __repr__(self) -> str:
        ...
    @property
    def drift(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (3,) constant drift of the particles (m/s).
        """
    @property
    def fluid(self) -> ReducedFluid3D:
        """
        The ReducedFluid3D.
        """
    @property
    def has_scene(self) -> bool:
        """
        Whether the particles move in a ReducedScene3D (u' with boundary terms).
        """
    @property
    def particles(self) -> int:
        """
        Number of particles P.
        """
class BoundaryBasis3D:
    """
    Boundary basis of one 3D object (Treuille thesis sec. 3.5.1, 3.5.5, "3D
    Boundaries"): p divergence-free fields on a local MAC grid in the object
    frame whose surface speeds are the principal directions of the reduced
    basis's surface speeds over the training poses, and 6 rigid fields (unit
    translations along x, y, z and unit rotations about x, y, z). Build with
    BoundaryBasis3D.build. Poses are rows (position (3) m, rotation vector (3)
    rad): world = R local + position.
    """
    @staticmethod
    def build(reduced: typing.Any, shape: Shape3D, poses: numpy.ndarray[numpy.float64], p: int, surface_spacing: typing.SupportsFloat | typing.SupportsIndex | None = None, local_size: numpy.ndarray[numpy.float64] | None = None, rigid: bool = True, threads: int = 0, progress: typing.Any = None, samples: str = 'surface') -> BoundaryBasis3D:
        """
        Builds the boundary basis of a shape from a 3D reduced fluid and training poses.
        
        Parallel over poses, GIL released. p larger than the rank of the collected
        surface speeds is reduced to it with a UserWarning naming p.
        
        Parameters
        ----------
        reduced : ReducedFluid3D
        shape : Shape3D
        poses : (n, 6) array
            Training poses: position (m), rotation vector (rad).
        p : int
            Boundary fields wanted.
        surface_spacing : float, optional
            Spacing of the surface samples (m); default h.
        local_size : float or (3,) array, optional
            Half-size (m) of the local box along the object's axes; default the
            shape's extent plus 4 h. It must contain the shape.
        rigid : bool
            Also build the 6 rigid fields (unit translations, unit rotations).
        threads : int
            Threads (<= 0: all).
        progress : None, bool or callable(done, total)
            Progress over the poses (True: a tqdm bar).
        samples : {"surface", "faces", "faces+surface"}
            Where S reads normal speeds. "surface": samples of the shape's surface
            ``surface_spacing`` apart with its normals. "faces": the centres of the
            local grid's faces touching a cell whose centre lies inside the shape,
            each with its axis as normal (q grows with the volume): the faces the
            full solver closes, so u' meets its boundary condition there (interior
            faces included: inside the shape u' moves with the object). The
            collected speeds are made flux-free over those faces before the PCA.
            "faces+surface": the faces between two cells inside the shape (its
            inside moves rigidly) plus the surface samples ``surface_spacing``
            apart: little flow crosses the true surface, whose edges the closed
            faces miss by up to half a cell (the 3D Boundaries scene's default).
        
        Returns
        -------
        BoundaryBasis3D
        """
    def __repr__(self) -> str:
        ...
    @property
    def constraint_error(self) -> float:
        """
        Largest residual of the field constraints (divergence, surface speeds).
        """
    @property
    def energy(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (p,) fraction of the collected surface speeds' energy per mode.
        """
    @property
    def fields(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (N_local, p).
        """
    @property
    def half_size(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (3,) half-sizes (m): object point x is at x + half_size in local-grid coordinates.
        """
    @property
    def local_grid(self) -> MACGrid3D:
        """
        The object's local MACGrid3D (spacing h, object frame shifted by half_size).
        """
    @property
    def p(self) -> int:
        """
        Number of boundary fields.
        """
    @property
    def q(self) -> int:
        """
        Number of surface samples.
        """
    @property
    def rank(self) -> int:
        """
        Rank of the collected surface speeds.
        """
    @property
    def rigid_fields(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (N_local, 6).
        """
    @property
    def samples(self) -> str:
        """
        "surface", "faces" or "faces+surface": where S reads normal speeds (see build).
        """
    @property
    def shape(self) -> Shape3D:
        """
        The Shape3D the basis was built for.
        """
    @property
    def surface_normals(self) -> numpy.ndarray:
        """
        (q, 3), object frame, outward.
        """
    @property
    def surface_points(self) -> numpy.ndarray:
        """
        (q, 3), object frame (m).
        """
    @property
    def surface_speeds(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (q, p) = S Btilde, orthonormal columns (eq. 3.10).
        """
class Coupling3D:
    """
    Feedforward F = -(S Btilde)' S R^-1 B (p, r) and feedback G = B' R [Btilde,
    rigid] (r, p+6) of one 3D object (eq. 3.11-3.12), on the fly or tabulated:
    over a pose grid (xs, ys, zs[, rxs, rys, rzs]) interpolated multilinearly,
    or along a path of poses (n, 6) interpolated linearly at the path point
    closest to the object's position.
    
    Parameters
    ----------
    reduced : ReducedFluid3D
    boundary_basis : BoundaryBasis3D
    pose_table : tuple of arrays, optional
        (xs, ys, zs) or (xs, ys, zs, rxs, rys, rzs): uniformly spaced nodes (m,
        rad) of a pose grid.
    precompute : str
        "none" (both on the fly), "feedback" or "both" tabulated.
    compress : int, optional
        Store the tables as k PCA modes over the nodes (None: plain tables).
    path : (n, 6) array, optional
        Tables at these poses only (a precomputed path).
    threads : int
        Threads of the tabulation (<= 0: all).
    progress : None, bool or callable(done, total)
        Progress over the nodes (True: a tqdm bar).
    """
    def __init__(self, reduced: typing.Any, boundary_basis: BoundaryBasis3D, pose_table: tuple | None = None, precompute: str = 'none', compress: int | None = None, path: numpy.ndarray[numpy.float64] | None = None, threads: int = 0, progress: typing.Any = None) -> None:
        """
        The coupling operators of one object (parameters: see the class).
        """
    def __repr__(self) -> str:
        ...
    def feedback(self, pose: numpy.ndarray[numpy.float64], exact: bool = False) -> numpy.typing.NDArray[numpy.float64]:
        """
        The feedback G = B' R [Btilde, rigid] at a pose (eq. 3.12).
        
        Parameters
        ----------
        pose : (6,) array
            Position (m), rotation vector (rad).
        exact : bool
            Compute it on the fly even when tabulated.
        
        Returns
        -------
        (r, m) array
            Reduced velocity per unit boundary coefficient (m = p + 6).
        """
    def feedforward(self, pose: numpy.ndarray[numpy.float64], exact: bool = False) -> numpy.typing.NDArray[numpy.float64]:
        """
        The feedforward F = -(S Btilde)' S R^-1 B at a pose (eq. 3.11).
        
        Parameters
        ----------
        pose : (6,) array
            Position (m), rotation vector (rad).
        exact : bool
            Compute it on the fly even when tabulated.
        
        Returns
        -------
        (p, r) array
            Boundary coefficients per unit reduced velocity.
        """
    def node_pose(self, n: int) -> numpy.typing.NDArray[numpy.float64]:
        """
        The pose of a table node.
        
        Parameters
        ----------
        n : int
            Node index in [0, table_nodes).
        
        Returns
        -------
        (6,) array
            Position (m) and rotation vector (rad).
        """
    @property
    def boundary_basis(self) -> BoundaryBasis3D:
        """
        The BoundaryBasis3D.
        """
    @property
    def m(self) -> int:
        """
        p + rigid fields.
        """
    @property
    def p(self) -> int:
        """
        Boundary fields of the object.
        """
    @property
    def table_bytes(self) -> int:
        """
        Bytes held by the tables (0 on the fly).
        """
    @property
    def table_nodes(self) -> int:
        """
        Pose nodes of the tables (0 on the fly).
        """
class ReducedScene3DData:
    """
    Buffers of a ReducedScene3D (one per thread).
    """
    def __repr__(self) -> str:
        ...
class ReducedScene3D:
    """
    A 3D reduced fluid with moving objects (Fig. 3.7): advect, diffuse, add
    forces, then per object r~ = F z and the rigid coefficients (the object's
    velocity and angular velocity in its own frame), and z += sum G [r~; v; w].
    Poses and velocities are (K, 6): (position m, rotation vector rad) and
    (velocity m/s, angular velocity rad/s), world frame.
    """
    def __init__(self, reduced: typing.Any, couplings: collections.abc.Sequence[Coupling3D]) -> None:
        """
        A scene of K objects.
        
        Parameters
        ----------
        reduced : ReducedFluid3D
        couplings : list of Coupling3D
            One per object, each built for reduced.
        """
    def __repr__(self) -> str:
        ...
    def advect_particles(self, points: numpy.ndarray[numpy.float64], z: numpy.ndarray[numpy.float64], boundary_coeffs: numpy.ndarray[numpy.float64], poses: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex, drift: numpy.ndarray[numpy.float64] | None = None, threads: int = 0, data: ReducedScene3DData = None) -> tuple[numpy.typing.NDArray[numpy.float64], int]:
        """
        (points (P, 3) after one RK2 step through u' + drift (3,) m/s, pushed out of the objects; number pushed). Parallel over particles, GIL released; threads <= 0 with data: the team chosen by measurement.
        """
    def create_data(self) -> ReducedScene3DData:
        """
        Buffers for step() and advect_particles(), owned by one thread at a time.
        
        Returns
        -------
        ReducedScene3DData
        """
    def step(self, z: numpy.ndarray[numpy.float64], w: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex, poses: numpy.ndarray[numpy.float64], velocities: numpy.ndarray[numpy.float64], data: ReducedScene3DData = None, return_flow: bool = False) -> tuple:
        """
        (z_next (r,), boundary_coeffs (K, max_m)) [, z_flow (r,): the state the coefficients cancel, when return_flow].
        """
    def surface_energy_removed(self, z: numpy.ndarray[numpy.float64], boundary_coeffs: numpy.ndarray[numpy.float64], poses: numpy.ndarray[numpy.float64], velocities: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        The thesis's metric: the share of the relative surface flow the boundary fields remove.
        
        Parameters
        ----------
        z : (r,) array
            The flow state the coefficients cancel.
        boundary_coeffs : (K, max_m) array
            From step().
        poses, velocities : (K, 6) arrays
            The objects' poses and velocities (m/s, rad/s) of that step.
        
        Returns
        -------
        (K,) array
            1 - |S(u' - rigid)|^2 / |S(B z - rigid)|^2 per object.
        """
    def surface_speed(self, object: int, z: numpy.ndarray[numpy.float64], boundary_coeffs: numpy.ndarray[numpy.float64], poses: numpy.ndarray[numpy.float64], boundary: bool = True) -> numpy.typing.NDArray[numpy.float64]:
        """
        Normal speeds of u' (or of B z alone) at an object's surface samples.
        
        Parameters
        ----------
        object : int
            Which object, in [0, K).
        z : (r,) array
            The flow state the coefficients cancel.
        boundary_coeffs : (K, max_m) array
            From step().
        poses : (K, 6) array
            The objects' poses.
        boundary : bool
            With the boundary fields (u') or without (B z).
        
        Returns
        -------
        (q,) array
            n . u at the object's surface points (m/s), world frame.
        """
    def velocity_at(self, points: numpy.ndarray[numpy.float64], z: numpy.ndarray[numpy.float64], boundary_coeffs: numpy.ndarray[numpy.float64], poses: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        The velocity u' of eq. 3.9 (B z plus the objects' boundary fields) at points.
        
        Parameters
        ----------
        points : (P, 3) array
            World points (m), clamped to the domain.
        z : (r,) array
            The flow state the coefficients cancel (step(..., return_flow=True)).
        boundary_coeffs : (K, max_m) array
            From step().
        poses : (K, 6) array
            The objects' poses of that step.
        
        Returns
        -------
        (P, 3) array
            u' (m/s).
        """
    def velocity_field(self, z: numpy.ndarray[numpy.float64], boundary_coeffs: numpy.ndarray[numpy.float64], poses: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        u' (eq. 3.9) on the world grid's faces.
        
        Parameters
        ----------
        z : (r,) array
            The flow state the coefficients cancel.
        boundary_coeffs : (K, max_m) array
            From step().
        poses : (K, 6) array
            The objects' poses.
        
        Returns
        -------
        (N,) array
            B z plus each object's boundary field resampled onto the faces (m/s).
        """
    @property
    def max_m(self) -> int:
        """
        Columns of boundary_coeffs.
        """
    @property
    def objects(self) -> int:
        """
        Number of objects K.
        """
class ParticlePD:
    """
    Barbic & Popovic's PD law for a reduced fluid with particles (eq. 14):
    w = -k_z (z - z_ref) - Psi(p)' (k_p (p - p_ref) + k_pdot (p' - p_ref')).
    
    Psi(p) (d P x r) and the particles' rate p' are the model's, evaluated at the
    current state (the dp'/dz block of its Jacobian and the particle rows of its
    dynamics), so a FluidParticles on a ReducedScene includes the boundary
    fields. p_ref' is the model's rate at the reference state, so w vanishes on
    the reference. A P controller is k_pdot = 0.
    
    Parameters
    ----------
    model : Model
        State [p (d P), z (r)], control matrix [0; I] (a FluidParticles).
    particles : int
        Number of particles P.
    x_ref : (T+1, n) array
        Reference states (m for the positions, reduced units for z).
    dt : float
        Step between reference states (s).
    k_z : float
        Gain on the reduced velocity error (1/s), >= 0.
    k_p : float
        Gain on the particle position error (1/s^2 per m of error, through Psi'), >= 0.
    k_pdot : float
        Gain on the particle velocity error (1/s per m/s of error, through Psi'), >= 0.
    t0 : float
        Time of x_ref[0] (s).
    """
    def __init__(self, model: Model, particles: int, x_ref: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex, k_z: typing.SupportsFloat | typing.SupportsIndex = 0.0, k_p: typing.SupportsFloat | typing.SupportsIndex = 0.0, k_pdot: typing.SupportsFloat | typing.SupportsIndex = 0.0, t0: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def control(self, x: numpy.ndarray[numpy.float64], step: int) -> numpy.typing.NDArray[numpy.float64]:
        """
        The control of eq. 14 at a state.
        
        Parameters
        ----------
        x : (n,) array
            State [p, z].
        step : int
            Reference step i in [0, T].
        
        Returns
        -------
        (r,) array
            w, the reduced force.
        """
    def gain(self, step: int) -> numpy.typing.NDArray[numpy.float64]:
        """
        The law's gain dw/dx at the reference state x_ref[step].
        
        K = -[Psi'(k_p I + k_pdot Y), k_z I + k_pdot Psi' Psi] with Psi = dp'/dz and
        Y = dp'/dp (the gradient of Psi times z) at x_ref[step]: exact there, and
        comparable with an LQR tracker's gain matrices.
        
        Parameters
        ----------
        step : int
            Reference step i in [0, T].
        
        Returns
        -------
        (r, n) array
            K_i.
        """
    def run(self, x0: numpy.ndarray[numpy.float64], steps: int, disturbance: numpy.ndarray[numpy.float64] | None = None, progress: typing.Any = None) -> SimulationResult:
        """
        A closed-loop run under this law (GIL released).
        
        Parameters
        ----------
        x0 : (n,) array
            Start state.
        steps : int
            Steps, in [1, T].
        disturbance : (steps, r) array, optional
            Reduced forces added to w over each step.
        progress : None or callable(done, total)
            Progress report.
        
        Returns
        -------
        SimulationResult
            states (steps+1, n), controls = feedback (steps, r): w; effort (steps,):
            |w|^2; tracking_error (steps+1,): |x - x_ref[i]|.
        """
    def sweep(self, gains: numpy.ndarray[numpy.float64], x0: numpy.ndarray[numpy.float64], steps: int, disturbance: numpy.ndarray[numpy.float64] | None = None, threads: int = 0, progress: typing.Any = None) -> dict:
        """
        Closed-loop runs under many gain settings, in parallel (GIL released).
        
        Parameters
        ----------
        gains : (m, 3) array
            Rows (k_z, k_p, k_pdot), each >= 0.
        x0 : (n,) array
            Start state of every run.
        steps : int
            Steps, in [1, T].
        disturbance : (steps, r) array, optional
            Reduced forces added to w, the same for every run.
        threads : int
            Threads (<= 0: all cores).
        progress : None or callable(done, total)
            Progress over the settings.
        
        Returns
        -------
        dict
            ``final_error`` (m, P): distance of each particle to its reference at
            the last step (m); ``max_error`` (m, P): the largest over the run;
            ``effort`` (m,): sum |w|^2 dt; ``diverged_at`` (m,): the step whose state
            went non-finite, -1 for none (errors and effort inf there).
        """
    def with_gains(self, k_z: typing.SupportsFloat | typing.SupportsIndex, k_p: typing.SupportsFloat | typing.SupportsIndex, k_pdot: typing.SupportsFloat | typing.SupportsIndex) -> ParticlePD:
        """
        The same model and reference with other gains.
        
        Parameters
        ----------
        k_z, k_p, k_pdot : float
            Gains of eq. 14 (1/s, 1/s^2, 1/s), each >= 0.
        
        Returns
        -------
        ParticlePD
            Shares the reference (and its rates) with this law.
        """
    @property
    def dt(self) -> float:
        """
        Step between reference states (s).
        """
    @property
    def gains(self) -> tuple[float, float, float]:
        """
        (k_z, k_p, k_pdot).
        """
    @property
    def horizon(self) -> int:
        """
        T: reference steps.
        """
    @property
    def model(self) -> Model:
        """
        The model.
        """
    @property
    def particles(self) -> int:
        """
        Number of particles P.
        """
    @property
    def reference(self) -> numpy.ndarray:
        """
        (T+1, n) read-only view of the reference states (a copy taken at construction).
        """
    @property
    def reference_rates(self) -> numpy.ndarray:
        """
        (T+1, d P) read-only view of p'(x_ref[i]), the model's particle rates on the reference (m/s).
        """
    @property
    def space_dim(self) -> int:
        """
        d: 2 or 3.
        """
    @property
    def t0(self) -> float:
        """
        Time of x_ref[0] (s).
        """
class TetMesh:
    """
    Tetrahedral mesh: vertices (V, 3), tets (E, 4) vertex indices, each tet
    positively oriented. Degenerate or inverted tets, indices out of range and
    unreferenced vertices raise.
    """
    def __init__(self, vertices: numpy.ndarray[numpy.float64], tets: typing.Annotated[numpy.typing.ArrayLike, numpy.int64]) -> None:
        ...
    def __reduce__(self) -> tuple[typing.Any, tuple[typing.Any, tuple, dict, typing.Any]]:
        """
        Pickling support: rebuilt with the class's constructor.
        """
    def __repr__(self) -> str:
        ...
    @property
    def num_tets(self) -> int:
        """
        E.
        """
    @property
    def num_vertices(self) -> int:
        """
        V.
        """
    @property
    def tets(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        (E, 4) vertex indices.
        """
    @property
    def vertices(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (V, 3) rest positions.
        """
    @property
    def volumes(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (E,) rest volumes.
        """
class StVKFEM:
    """
    Full St. Venant-Kirchhoff tetrahedral FEM: energy density mu E:E +
    lambda/2 (tr E)^2, lumped mass, Rayleigh damping D(u) = alpha M + beta K(u),
    fixed vertices. u (3V,) ordered [x0, y0, z0, x1, ...].
    """
    def __init__(self, mesh: TetMesh, young: typing.SupportsFloat | typing.SupportsIndex, poisson: typing.SupportsFloat | typing.SupportsIndex, density: typing.SupportsFloat | typing.SupportsIndex, fixed: collections.abc.Sequence[int], alpha: typing.SupportsFloat | typing.SupportsIndex = 0.0, beta: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def energy(self, u: numpy.ndarray[numpy.float64]) -> float:
        """
        Elastic energy of a displacement.
        
        Parameters
        ----------
        u : (3V,) array
            Displacement (m).
        
        Returns
        -------
        float
            Energy (J).
        """
    def internal_forces(self, u: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        Internal forces: the gradient of the elastic energy.
        
        Parameters
        ----------
        u : (3V,) array
            Displacement (m).
        
        Returns
        -------
        (3V,) ndarray
            Forces (N).
        """
    def stiffness_csc(self, u: numpy.ndarray[numpy.float64]) -> tuple:
        """
        Tangent stiffness at a displacement, as CSC arrays.
        
        Parameters
        ----------
        u : (3V,) array
            Displacement (m).
        
        Returns
        -------
        data, indices, indptr : ndarray
            The (3V, 3V) symmetric matrix (N/m) in compressed sparse columns.
        """
    @property
    def alpha(self) -> float:
        """
        Rayleigh mass factor.
        """
    @property
    def beta(self) -> float:
        """
        Rayleigh stiffness factor.
        """
    @property
    def dofs(self) -> int:
        """
        3V.
        """
    @property
    def fixed(self) -> list[int]:
        """
        Fixed vertex indices.
        """
    @property
    def lam(self) -> float:
        """
        Lame lambda = E nu / ((1 + nu)(1 - 2 nu)).
        """
    @property
    def mass(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        Lumped mass diagonal (3V,).
        """
    @property
    def mu(self) -> float:
        """
        Lame mu = E / (2 (1 + nu)).
        """
class NewmarkFEM:
    """
    Implicit Newmark integrator (beta = 1/4, gamma = 1/2) of a StVKFEM with
    Newton iterations; each iteration's linear system solved by a sparse LDL'
    factorization (linear_solver="direct", symbolic analysis done once) or by
    block-Jacobi preconditioned conjugate gradients (linear_solver="cg", to
    max(cg_tolerance |r|, 0.1 tolerance |r_0|), at most cg_max_iterations).
    Holds the state u, v (3V,) each; the StVKFEM is shared read-only.
    """
    def __init__(self, model: StVKFEM, dt: typing.SupportsFloat | typing.SupportsIndex, max_iterations: int = 20, tolerance: typing.SupportsFloat | typing.SupportsIndex = 1e-08, linear_solver: str = 'direct', cg_tolerance: typing.SupportsFloat | typing.SupportsIndex = 0.0001, cg_max_iterations: int = 1000) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def run(self, forces: numpy.ndarray[numpy.float64], progress: typing.Any = None) -> numpy.typing.NDArray[numpy.float64]:
        """
        Runs T steps under forces (T, 3V); returns displacements (T+1, 3V). GIL released.
        """
    def run_states(self, forces: numpy.ndarray[numpy.float64], progress: typing.Any = None) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64]]:
        """
        Runs T steps under forces (T, 3V) from the current state: (u, v, a), each
        (T+1, 3V), the initial state first (a[0] is NaN when the initial acceleration
        is left to the first step). GIL released, throttled progress(done, total),
        Ctrl-C stops it; a Newton failure names its step.
        """
    def set_state(self, u: numpy.ndarray[numpy.float64], v: numpy.ndarray[numpy.float64], a: numpy.ndarray[numpy.float64] | None = None) -> None:
        """
        Sets the state.
        
        Parameters
        ----------
        u : (3V,) array
            Displacement (m).
        v : (3V,) array
            Velocity (m/s).
        a : (3V,) array, optional
            Acceleration (m/s^2); default: consistent with the next step's force.
        """
    def static_solve(self, f_ext: numpy.ndarray[numpy.float64], max_iterations: int = 50) -> numpy.typing.NDArray[numpy.float64]:
        """
        Static equilibrium f_int(u) = f_ext (Newton, direct solves).
        
        Parameters
        ----------
        f_ext : (3V,) array
            External forces (N).
        max_iterations : int, optional
            Newton iterations.
        
        Returns
        -------
        (3V,) ndarray
            Displacement u (m).
        """
    def step(self, f_ext: numpy.ndarray[numpy.float64]) -> int:
        """
        One step with external forces held.
        
        Parameters
        ----------
        f_ext : (3V,) array
            External forces (N).
        
        Returns
        -------
        int
            Newton iterations taken.
        """
    @property
    def a(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (3V,) Newmark acceleration (m/s^2), a copy.
        """
    @property
    def cg_max_iterations(self) -> int:
        """
        CG iteration cap per linear solve.
        """
    @property
    def cg_tolerance(self) -> float:
        """
        CG stop, relative to the Newton residual.
        """
    @property
    def dt(self) -> float:
        """
        Time step.
        """
    @property
    def last_cg_iterations(self) -> int:
        """
        CG iterations of the last step, summed over its Newton iterations (0 when direct).
        """
    @property
    def linear_solver(self) -> str:
        """
        "direct" or "cg".
        """
    @property
    def u(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (3V,) displacement (m), a copy.
        """
    @property
    def v(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (3V,) velocity (m/s), a copy.
        """
class ReducedStVK(Model):
    """
    Reduced StVK model on a basis U (3V, r): internal forces U' f(U p) as
    precomputed cubic polynomials in p. A Model with z = [p, p'] (n = 2r), control
    w (r,) reduced forces, B = [0; (U'MU)^-1], implicit Newmark step.
    """
    def __init__(self, full: StVKFEM, U: numpy.ndarray[numpy.float64], alpha: typing.SupportsFloat | typing.SupportsIndex = -1.0, beta: typing.SupportsFloat | typing.SupportsIndex = -1.0, damping_hessian: bool = True, progress: typing.Any = None) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def energy(self, p: numpy.ndarray[numpy.float64]) -> float:
        """
        Reduced elastic energy.
        
        Parameters
        ----------
        p : (r,) array
            Reduced coordinates.
        
        Returns
        -------
        float
            Energy (J).
        """
    def internal_forces(self, p: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        Reduced internal forces R(p) = U' f(U p).
        
        Parameters
        ----------
        p : (r,) array
            Reduced coordinates.
        
        Returns
        -------
        (r,) ndarray
        """
    def set_newton(self, max_iterations: int, tolerance: typing.SupportsFloat | typing.SupportsIndex = 1e-10) -> None:
        """
        Newton iterations of step().
        
        Parameters
        ----------
        max_iterations : int
            1: one linearized implicit step.
        tolerance : float, optional
            Relative residual that stops the iterations.
        """
    def stiffness_derivative(self, p: numpy.ndarray[numpy.float64], v: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        Derivative of the stiffness along v: d(K(p) v)/dp.
        
        Parameters
        ----------
        p : (r,) array
            Reduced coordinates.
        v : (r,) array
            Direction.
        
        Returns
        -------
        (r, r) ndarray
        """
    def tangent_stiffness(self, p: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        Reduced stiffness K(p) = dR/dp.
        
        Parameters
        ----------
        p : (r,) array
            Reduced coordinates.
        
        Returns
        -------
        (r, r) ndarray
        """
    @property
    def alpha(self) -> float:
        """
        Reduced Rayleigh mass factor: D = alpha U'MU + beta K(p).
        """
    @property
    def beta(self) -> float:
        """
        Reduced Rayleigh stiffness factor.
        """
    @property
    def damping_hessian(self) -> bool:
        """
        Whether jacobian() includes the damping-Hessian term beta dK/dp : p'.
        """
    @damping_hessian.setter
    def damping_hessian(self, arg1: bool) -> None:
        ...
    @property
    def r(self) -> int:
        """
        Reduced dimension r (state n = 2r).
        """
    @property
    def reduced_mass(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        U'MU, (r, r).
        """
class PredictionData:
    """
    Buffers of a prediction model's calls (tapes, scratch), from its
    create_data(); one per thread. Passing the same data to successive calls
    lets a model reuse what it recorded (e.g. the SPH model's tapes).
    """
    def __repr__(self) -> str:
        ...
class PredictionModel:
    """
    Discrete prediction model x+ = step(x, u) with its vector-Jacobian product.
    
    Subclass it in Python by defining the properties n and s, step(x, u, i) ->
    (n,) and vjp(x, u, lam, i) -> ((n,), (s,)); for method='gauss_newton' also
    has_jacobians = True and jacobians(x, u, i) -> ((n, n), (n, s)). The C++
    optimizer then calls back into Python (slow, but any model can be driven).
    The C++ models are immutable: one may be used from several threads at once.
    """
    def __init__(self) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def create_data(self) -> PredictionData:
        """
        Buffers for this model's calls (one per thread).
        
        Returns
        -------
        PredictionData
        """
    def jacobians(self, x: numpy.ndarray[numpy.float64], u: numpy.ndarray[numpy.float64], i: int = 0, data: PredictionData = None) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64]]:
        """
        Jacobians of one step (Gauss-Newton method).
        
        Parameters
        ----------
        x : (n,) array
            State.
        u : (s,) array
            Control.
        i : int, optional
            Window step (for time-varying models).
        data : PredictionData, optional
            From create_data() (one per thread); None: a fresh one.
        
        Returns
        -------
        A : (n, n) ndarray
            dx+/dx.
        B : (n, s) ndarray
            dx+/du.
        """
    def step(self, x: numpy.ndarray[numpy.float64], u: numpy.ndarray[numpy.float64], i: int = 0, data: PredictionData = None) -> numpy.typing.NDArray[numpy.float64]:
        """
        One step x+ = f(x, u).
        
        Parameters
        ----------
        x : (n,) array
            State.
        u : (s,) array
            Control.
        i : int, optional
            Window step (for time-varying models).
        data : PredictionData, optional
            From create_data() (one per thread); None: a fresh one.
        
        Returns
        -------
        (n,) ndarray
            x+.
        """
    def vjp(self, x: numpy.ndarray[numpy.float64], u: numpy.ndarray[numpy.float64], lam: numpy.ndarray[numpy.float64], i: int = 0, data: PredictionData = None) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64]]:
        """
        Vector-Jacobian products of one step (the adjoint pass).
        
        Parameters
        ----------
        x : (n,) array
            State.
        u : (s,) array
            Control.
        lam : (n,) array
            Adjoint of x+.
        i : int, optional
            Window step (for time-varying models).
        data : PredictionData, optional
            From create_data() (one per thread); None: a fresh one.
        
        Returns
        -------
        dx : (n,) ndarray
            (dx+/dx)' lam.
        du : (s,) ndarray
            (dx+/du)' lam.
        """
    def vjp_controls(self, x: numpy.ndarray[numpy.float64], u: numpy.ndarray[numpy.float64], lam: numpy.ndarray[numpy.float64], i: int = 0, data: PredictionData = None) -> numpy.typing.NDArray[numpy.float64]:
        """
        (dx+/du)' lam alone, as the optimizer's adjoint pass takes it at the window's first step.
        
        Cheaper than vjp where the model offers it.
        
        Parameters
        ----------
        x : (n,) array
            State.
        u : (s,) array
            Control.
        lam : (n,) array
            Adjoint of x+.
        i : int, optional
            Window step (for time-varying models).
        data : PredictionData, optional
            From create_data() (one per thread); None: a fresh one.
        
        Returns
        -------
        (s,) ndarray
        """
    @property
    def has_jacobians(self) -> bool:
        """
        Whether jacobians() is available (Gauss-Newton method).
        """
    @property
    def n(self) -> int:
        """
        State dimension.
        """
    @property
    def s(self) -> int:
        """
        Control dimension.
        """
class LinearPrediction(PredictionModel):
    """
    Discrete linear model x+ = A x + B u.
    """
    def __init__(self, A: numpy.ndarray[numpy.float64], B: numpy.ndarray[numpy.float64]) -> None:
        """
        A (n, n), B (n, s) (copied).
        """
    def __reduce__(self) -> tuple[typing.Any, tuple[typing.Any, tuple, dict, typing.Any]]:
        """
        Pickling support: rebuilt with the class's constructor.
        """
    def __repr__(self) -> str:
        ...
    @property
    def A(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (n, n) copy.
        """
    @property
    def B(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (n, s) copy.
        """
class EulerPrediction(PredictionModel):
    """
    Prediction with a Model z' = F(z, t) + B w: one explicit Euler step
    x+ = x + dt (F(x, t0 + i dt) + B u) per window step i (a simplified
    predictor); exact VJP and Jacobians of that step.
    """
    def __init__(self, model: Model, dt: typing.SupportsFloat | typing.SupportsIndex, t0: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> None:
        """
        model: a Model (n states, s controls); dt > 0.
        """
    def __repr__(self) -> str:
        ...
    @property
    def dt(self) -> float:
        """
        Step length.
        """
class SubstepPrediction(PredictionModel):
    """
    `count` steps of another prediction model per step, the control held (e.g.
    a frame of simulation steps); VJP and Jacobians chained exactly.
    """
    def __init__(self, model: PredictionModel, count: int) -> None:
        """
        model: a PredictionModel; count >= 1 inner steps per step.
        """
    def __repr__(self) -> str:
        ...
    @property
    def count(self) -> int:
        """
        Inner steps per step.
        """
    @property
    def model(self) -> PredictionModel:
        """
        The inner model.
        """
class Plant:
    """
    The system a receding-horizon loop drives (HorizonOptimizer.run): its state
    (n,), advanced one control step at a time with the control (s,) held.
    """
    def __repr__(self) -> str:
        ...
    @property
    def n(self) -> int:
        """
        State dimension.
        """
    @property
    def s(self) -> int:
        """
        Control dimension.
        """
    @property
    def state(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        Current state (n,) (a copy).
        """
class ModelPlant(Plant):
    """
    A Model integrated by its own step as a receding-horizon plant.
    
    Each control step takes `substeps` steps of dt / substeps with the control
    w = u + disturbance[t]. The plant keeps its state: runs on one plant from
    several threads take turns.
    
    Parameters
    ----------
    model : Model
        The continuous model z' = F(z, t) + B w.
    x0 : (n,) array
        Initial state.
    dt : float
        Length of one control step (s), > 0.
    substeps : int, optional
        Model steps per control step, >= 1.
    t0 : float, optional
        Time of the initial state (s).
    disturbance : (T, s) array, optional
        Forces added to the control at steps t < T; none when None.
    """
    def __init__(self, model: Model, x0: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex, substeps: int = 1, t0: typing.SupportsFloat | typing.SupportsIndex = 0.0, disturbance: numpy.ndarray[numpy.float64] | None = None) -> None:
        """
        Builds the plant (see the class).
        """
    def __repr__(self) -> str:
        ...
class DiscretePlant(Plant):
    """
    A prediction model as the plant: x+ = step(x, u + disturbance[t]).
    
    The plant keeps its state: runs on one plant from several threads take turns.
    
    Parameters
    ----------
    model : PredictionModel
        The discrete model x+ = f(x, u).
    x0 : (n,) array
        Initial state.
    disturbance : (T, s) array, optional
        Added to the control at steps t < T; none when None.
    """
    def __init__(self, model: PredictionModel, x0: numpy.ndarray[numpy.float64], disturbance: numpy.ndarray[numpy.float64] | None = None) -> None:
        """
        Builds the plant (see the class).
        """
    def __repr__(self) -> str:
        ...
class MPCMethod:
    """
    Members:
    
      lbfgs
    
      gauss_newton
    """
    __members__: typing.ClassVar[dict[str, MPCMethod]]
    gauss_newton: typing.ClassVar[MPCMethod]
    lbfgs: typing.ClassVar[MPCMethod]
    @typing.overload
    def __eq__(self, other: MPCMethod) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: int) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: MPCMethod) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: int) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class HorizonWorkspace:
    """
    Buffers of one thread's solves with a HorizonOptimizer, and the previous
    solution (the warm start of the next solve). Make one per thread with
    HorizonOptimizer.create_workspace().
    """
    def __repr__(self) -> str:
        ...
    def reset(self) -> None:
        """
        Forget the previous solution (the next solve starts from u = 0, with a unit-length first step).
        """
    @property
    def curvature_scale(self) -> float:
        """
        s'y / y'y of the last L-BFGS solve's first correction pair (0: none): the first step's scale of the next warm-started solve.
        """
    @property
    def has_solution(self) -> bool:
        """
        Whether a previous solution exists (used as warm start).
        """
class HorizonOptimizer:
    """
    Optimises the controls of one window of J = ||x_H - r_H||^2_C +
    sum_{i<H} ||x_i - r_i||^2_Q + ||u_i - ur_i||^2_R over a PredictionModel.
    Immutable: one optimizer may solve from several threads, each with its own
    HorizonWorkspace.
    """
    def __init__(self, model: PredictionModel, horizon: int, Q: numpy.ndarray[numpy.float64], R: numpy.ndarray[numpy.float64], C: numpy.ndarray[numpy.float64], iterations: int = 50, time_budget: typing.SupportsFloat | typing.SupportsIndex = 0.0, memory: int = 10, method: MPCMethod = ..., lower: numpy.ndarray[numpy.float64] | None = None, upper: numpy.ndarray[numpy.float64] | None = None) -> None:
        """
        Q, C (n,) diagonal or (n, n); R (s,) or (s, s), positive definite; lower/upper (s,) or None; time_budget seconds per solve (<= 0: none).
        """
    def __repr__(self) -> str:
        ...
    def cost_and_gradient(self, workspace: HorizonWorkspace, x0: numpy.ndarray[numpy.float64], reference: numpy.ndarray[numpy.float64], u: numpy.ndarray[numpy.float64], u_reference: numpy.ndarray[numpy.float64] | None = None) -> tuple[float, numpy.typing.NDArray[numpy.float64]]:
        """
        x0 (n,), reference (H+1, n), u (H, s), u_reference (H, s) or None (zero) -> (J, dJ/du (H, s)) by one adjoint pass; the control term is ||u - u_reference||^2_R.
        """
    def create_workspace(self) -> HorizonWorkspace:
        """
        A new workspace (no previous solution).
        """
    def run(self, plant: Plant, reference: numpy.ndarray[numpy.float64], steps: int, u_reference: numpy.ndarray[numpy.float64] | None = None, u0: numpy.ndarray[numpy.float64] | None = None, progress: typing.Any = None) -> dict:
        """
        Receding-horizon loop (GIL released): at each step optimise the window
        reference[t : t+H+1] from the plant's actual state (warm-started), apply the
        first control to plant, shift. reference (steps+H+1, n); u_reference
        (steps+H, s) or None; u0 (H, s): the first window's starting controls, or
        None. Returns a dict with states (steps+1, n), controls (steps, s), and per
        step cost_initial, cost, seconds, iterations (steps,).
        """
    def solve(self, workspace: HorizonWorkspace, x0: numpy.ndarray[numpy.float64], reference: numpy.ndarray[numpy.float64], u0: numpy.ndarray[numpy.float64] | None = None, u_reference: numpy.ndarray[numpy.float64] | None = None, curvature_scale: typing.SupportsFloat | typing.SupportsIndex | None = None) -> dict:
        """
        Optimise one window (GIL released) with the buffers of `workspace`.
        
        x0 (n,), reference (H+1, n), u0 (H, s) or None (warm start: the workspace's
        previous solution shifted by one step, zeros the first time), u_reference
        (H, s) or None: the control term is ||u_i - u_reference_i||^2_R (e.g. a
        feed-forward). curvature_scale: L-BFGS's first-step scale (a previous
        solve's curvature_scale; 0: a unit-length step), None: the workspace's when
        warm-starting from it. Returns a dict with u (H, s), states (H+1, n), cost,
        cost_initial, iterations, evaluations (cost), gradients, seconds,
        curvature_scale.
        """
    @property
    def horizon(self) -> int:
        ...
    @property
    def n(self) -> int:
        ...
    @property
    def s(self) -> int:
        ...
class SPHPrediction(PredictionModel):
    """
    Simplified 2D SPH prediction model (pressure + body forces, frozen neighbours),
    with its exact VJP; a PredictionModel for the HorizonOptimizer. Within a solve (or calls
    that share one data), the step of window step i keeps a tape that the VJP at the same positions reuses.
    """
    def __repr__(self) -> str:
        ...
    def pressure_acceleration(self, positions: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        The model's pressure acceleration at the given positions (frozen neighbours).
        
        Parameters
        ----------
        positions : (D N,) array
            Particle positions (m), particle-major (x0, y0, ...).
        
        Returns
        -------
        (D N,) ndarray
            Pressure acceleration of each particle (m/s^2).
        """
    def refreeze(self, fluid: SPHFluid2D) -> None:
        """
        Freezes the neighbour sets of `fluid`'s current state in this model.
        
        One model, and one HorizonOptimizer on it, then serve a whole
        receding-horizon run. The GIL is released; the fluid is locked while it is
        read. The model changes: not while it is in use on another thread.
        
        Parameters
        ----------
        fluid : SPHFluid2D or SPHFluid3D
            A fluid with the same particle and boundary counts.
        """
class SPHFluid2D:
    """
    2D weakly compressible SPH: cubic-spline kernel (support 2h), Tait EOS,
    Monaghan viscosity, uniform-grid neighbour search, boundary particles,
    gravity, a moving rigid sphere and per-particle control forces.
    
    The fluid's state changes with every call that steps or sets it; calls from
    several threads on one fluid take turns (a lock per fluid), so they act as
    if made one after the other.
    
    Parameters
    ----------
    fluid : (N, D) array
        Initial fluid particle positions (m).
    boundary : (M, D) array
        Boundary particle positions (m): fixed walls.
    spacing : float
        Particle spacing (m); the particle mass is rho0 spacing^D.
    h : float
        Smoothing length (m); the kernel's support is 2 h.
    rho0 : float, optional
        Rest density (kg/m^D).
    c0 : float, optional
        Speed of sound of the Tait equation of state (m/s).
    gamma : float, optional
        Tait exponent.
    viscosity : float, optional
        Monaghan's artificial viscosity alpha.
    dt : float, optional
        Time step (s).
    gravity : (D,) array, optional
        Body acceleration (m/s^2); default -9.81 along the last axis.
    lo, hi : (D,) array, optional
        Corners of the domain box (m); default the unit box.
    """
    def __init__(self, fluid: numpy.ndarray[numpy.float64], boundary: numpy.ndarray[numpy.float64], spacing: typing.SupportsFloat | typing.SupportsIndex, h: typing.SupportsFloat | typing.SupportsIndex, rho0: typing.SupportsFloat | typing.SupportsIndex = 1000.0, c0: typing.SupportsFloat | typing.SupportsIndex = 20.0, gamma: typing.SupportsFloat | typing.SupportsIndex = 7.0, viscosity: typing.SupportsFloat | typing.SupportsIndex = 0.05, dt: typing.SupportsFloat | typing.SupportsIndex = 0.0005, gravity: numpy.ndarray[numpy.float64] | None = None, lo: numpy.ndarray[numpy.float64] | None = None, hi: numpy.ndarray[numpy.float64] | None = None) -> None:
        """
        fluid (N, 2), boundary (M, 2) particle positions; particle mass rho0 spacing^2; gravity (2,) (default -9.81 along the last axis); domain box lo, hi (2,) (default the unit box).
        """
    def __repr__(self) -> str:
        ...
    def prediction_model(self, dt: typing.SupportsFloat | typing.SupportsIndex | None = None) -> SPHPrediction:
        """
        The paper's simplified prediction model at the current state.
        
        Body forces and pressure only, with the neighbour sets frozen. Its state
        (2 D N,) is [positions (D N), velocities (D N)], particle-major; its control
        (D N,) is the per-particle forces.
        
        Parameters
        ----------
        dt : float, optional
            Its step (s); default the simulation's (a frame of several simulation
            steps may be used).
        
        Returns
        -------
        SPHPrediction or SPHPrediction3D
            An immutable prediction model, shared freely by threads.
        """
    def remove_sphere(self) -> None:
        """
        No sphere from now on.
        """
    def set_sphere(self, centre: numpy.ndarray[numpy.float64], radius: typing.SupportsFloat | typing.SupportsIndex, velocity: numpy.ndarray[numpy.float64]) -> None:
        """
        Places a moving rigid sphere that pushes the fluid from now on.
        
        Parameters
        ----------
        centre : (D,) array
            Centre (m), inside the domain.
        radius : float
            Radius (m), > 0.
        velocity : (D,) array
            Its velocity (m/s), held until the next call.
        """
    def set_state(self, positions: numpy.ndarray[numpy.float64], velocities: numpy.ndarray[numpy.float64]) -> None:
        """
        Replaces the fluid's state.
        
        Parameters
        ----------
        positions : (N, D) array
            Particle positions (m), finite.
        velocities : (N, D) array
            Particle velocities (m/s), finite.
        """
    def step(self, force: numpy.ndarray[numpy.float64] | None = None, steps: int = 1, progress: typing.Any = None) -> None:
        """
        Advances the fluid by `steps` time steps with per-particle forces held.
        
        The GIL is released; Ctrl-C stops between steps (KeyboardInterrupt). A step
        whose state becomes non-finite raises ValueError naming the step.
        
        Parameters
        ----------
        force : (N, D) array, optional
            Per-particle control forces (N), finite (each divided by the particle
            mass); none when None.
        steps : int, optional
            Number of steps, >= 0.
        progress : callable(done, total), optional
            Called (throttled) as the steps finish.
        """
    @property
    def densities(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (N,) copy.
        """
    @property
    def dim(self) -> int:
        """
        Spatial dimension.
        """
    @property
    def dt(self) -> float:
        """
        Time step.
        """
    @property
    def mass(self) -> float:
        """
        Particle mass.
        """
    @property
    def positions(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (N, 2) copy.
        """
    @property
    def pressures(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (N,) copy.
        """
    @property
    def size(self) -> int:
        """
        N fluid particles.
        """
    @property
    def sphere_centre(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (2,) centre of the sphere.
        """
    @property
    def velocities(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (N, 2) copy.
        """
class SPHPrediction3D(PredictionModel):
    """
    Simplified 3D SPH prediction model (pressure + body forces, frozen neighbours),
    with its exact VJP; a PredictionModel for the HorizonOptimizer. Within a solve (or calls
    that share one data), the step of window step i keeps a tape that the VJP at the same positions reuses.
    """
    def __repr__(self) -> str:
        ...
    def pressure_acceleration(self, positions: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        The model's pressure acceleration at the given positions (frozen neighbours).
        
        Parameters
        ----------
        positions : (D N,) array
            Particle positions (m), particle-major (x0, y0, ...).
        
        Returns
        -------
        (D N,) ndarray
            Pressure acceleration of each particle (m/s^2).
        """
    def refreeze(self, fluid: SPHFluid3D) -> None:
        """
        Freezes the neighbour sets of `fluid`'s current state in this model.
        
        One model, and one HorizonOptimizer on it, then serve a whole
        receding-horizon run. The GIL is released; the fluid is locked while it is
        read. The model changes: not while it is in use on another thread.
        
        Parameters
        ----------
        fluid : SPHFluid2D or SPHFluid3D
            A fluid with the same particle and boundary counts.
        """
class SPHFluid3D:
    """
    3D weakly compressible SPH: cubic-spline kernel (support 2h), Tait EOS,
    Monaghan viscosity, uniform-grid neighbour search, boundary particles,
    gravity, a moving rigid sphere and per-particle control forces.
    
    The fluid's state changes with every call that steps or sets it; calls from
    several threads on one fluid take turns (a lock per fluid), so they act as
    if made one after the other.
    
    Parameters
    ----------
    fluid : (N, D) array
        Initial fluid particle positions (m).
    boundary : (M, D) array
        Boundary particle positions (m): fixed walls.
    spacing : float
        Particle spacing (m); the particle mass is rho0 spacing^D.
    h : float
        Smoothing length (m); the kernel's support is 2 h.
    rho0 : float, optional
        Rest density (kg/m^D).
    c0 : float, optional
        Speed of sound of the Tait equation of state (m/s).
    gamma : float, optional
        Tait exponent.
    viscosity : float, optional
        Monaghan's artificial viscosity alpha.
    dt : float, optional
        Time step (s).
    gravity : (D,) array, optional
        Body acceleration (m/s^2); default -9.81 along the last axis.
    lo, hi : (D,) array, optional
        Corners of the domain box (m); default the unit box.
    """
    def __init__(self, fluid: numpy.ndarray[numpy.float64], boundary: numpy.ndarray[numpy.float64], spacing: typing.SupportsFloat | typing.SupportsIndex, h: typing.SupportsFloat | typing.SupportsIndex, rho0: typing.SupportsFloat | typing.SupportsIndex = 1000.0, c0: typing.SupportsFloat | typing.SupportsIndex = 20.0, gamma: typing.SupportsFloat | typing.SupportsIndex = 7.0, viscosity: typing.SupportsFloat | typing.SupportsIndex = 0.05, dt: typing.SupportsFloat | typing.SupportsIndex = 0.0005, gravity: numpy.ndarray[numpy.float64] | None = None, lo: numpy.ndarray[numpy.float64] | None = None, hi: numpy.ndarray[numpy.float64] | None = None) -> None:
        """
        fluid (N, 3), boundary (M, 3) particle positions; particle mass rho0 spacing^3; gravity (3,) (default -9.81 along the last axis); domain box lo, hi (3,) (default the unit box).
        """
    def __repr__(self) -> str:
        ...
    def prediction_model(self, dt: typing.SupportsFloat | typing.SupportsIndex | None = None) -> SPHPrediction3D:
        """
        The paper's simplified prediction model at the current state.
        
        Body forces and pressure only, with the neighbour sets frozen. Its state
        (2 D N,) is [positions (D N), velocities (D N)], particle-major; its control
        (D N,) is the per-particle forces.
        
        Parameters
        ----------
        dt : float, optional
            Its step (s); default the simulation's (a frame of several simulation
            steps may be used).
        
        Returns
        -------
        SPHPrediction or SPHPrediction3D
            An immutable prediction model, shared freely by threads.
        """
    def remove_sphere(self) -> None:
        """
        No sphere from now on.
        """
    def set_sphere(self, centre: numpy.ndarray[numpy.float64], radius: typing.SupportsFloat | typing.SupportsIndex, velocity: numpy.ndarray[numpy.float64]) -> None:
        """
        Places a moving rigid sphere that pushes the fluid from now on.
        
        Parameters
        ----------
        centre : (D,) array
            Centre (m), inside the domain.
        radius : float
            Radius (m), > 0.
        velocity : (D,) array
            Its velocity (m/s), held until the next call.
        """
    def set_state(self, positions: numpy.ndarray[numpy.float64], velocities: numpy.ndarray[numpy.float64]) -> None:
        """
        Replaces the fluid's state.
        
        Parameters
        ----------
        positions : (N, D) array
            Particle positions (m), finite.
        velocities : (N, D) array
            Particle velocities (m/s), finite.
        """
    def step(self, force: numpy.ndarray[numpy.float64] | None = None, steps: int = 1, progress: typing.Any = None) -> None:
        """
        Advances the fluid by `steps` time steps with per-particle forces held.
        
        The GIL is released; Ctrl-C stops between steps (KeyboardInterrupt). A step
        whose state becomes non-finite raises ValueError naming the step.
        
        Parameters
        ----------
        force : (N, D) array, optional
            Per-particle control forces (N), finite (each divided by the particle
            mass); none when None.
        steps : int, optional
            Number of steps, >= 0.
        progress : callable(done, total), optional
            Called (throttled) as the steps finish.
        """
    @property
    def densities(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (N,) copy.
        """
    @property
    def dim(self) -> int:
        """
        Spatial dimension.
        """
    @property
    def dt(self) -> float:
        """
        Time step.
        """
    @property
    def mass(self) -> float:
        """
        Particle mass.
        """
    @property
    def positions(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (N, 3) copy.
        """
    @property
    def pressures(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (N,) copy.
        """
    @property
    def size(self) -> int:
        """
        N fluid particles.
        """
    @property
    def sphere_centre(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (3,) centre of the sphere.
        """
    @property
    def velocities(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (N, 3) copy.
        """
class SPHPlant2D(Plant):
    """
    The 2D SPH fluid as a receding-horizon plant.
    
    State (2 D N,) = [positions; velocities], control (D N,): per-particle forces
    held over frame_steps simulation steps. Steps the fluid in place (the fluid's
    lock is taken per step; runs on one plant take turns).
    
    Parameters
    ----------
    fluid : SPHFluid2D or SPHFluid3D
        The fluid, stepped in place.
    frame_steps : int
        Simulation steps per control step, >= 1.
    prediction : SPHPrediction or SPHPrediction3D, optional
        A prediction model of this fluid, refrozen at the fluid's state before
        every window; None for none.
    """
    def __init__(self, fluid: SPHFluid2D, frame_steps: int, prediction: SPHPrediction = None) -> None:
        """
        Builds the plant (see the class).
        """
    def __repr__(self) -> str:
        ...
    def launch_sphere(self, frame: int, centre: numpy.ndarray[numpy.float64], radius: typing.SupportsFloat | typing.SupportsIndex, velocity: numpy.ndarray[numpy.float64]) -> None:
        """
        Schedules the rigid sphere's launch at the start of control step `frame`.
        
        Parameters
        ----------
        frame : int
            Control step at whose start the sphere appears, >= 0.
        centre : (D,) array
            Its centre (m), inside the domain.
        radius : float
            Its radius (m), > 0.
        velocity : (D,) array
            Its velocity (m/s).
        """
class SPHPlant3D(Plant):
    """
    The 3D SPH fluid as a receding-horizon plant.
    
    State (2 D N,) = [positions; velocities], control (D N,): per-particle forces
    held over frame_steps simulation steps. Steps the fluid in place (the fluid's
    lock is taken per step; runs on one plant take turns).
    
    Parameters
    ----------
    fluid : SPHFluid2D or SPHFluid3D
        The fluid, stepped in place.
    frame_steps : int
        Simulation steps per control step, >= 1.
    prediction : SPHPrediction or SPHPrediction3D, optional
        A prediction model of this fluid, refrozen at the fluid's state before
        every window; None for none.
    """
    def __init__(self, fluid: SPHFluid3D, frame_steps: int, prediction: SPHPrediction3D = None) -> None:
        """
        Builds the plant (see the class).
        """
    def __repr__(self) -> str:
        ...
    def launch_sphere(self, frame: int, centre: numpy.ndarray[numpy.float64], radius: typing.SupportsFloat | typing.SupportsIndex, velocity: numpy.ndarray[numpy.float64]) -> None:
        """
        Schedules the rigid sphere's launch at the start of control step `frame`.
        
        Parameters
        ----------
        frame : int
            Control step at whose start the sphere appears, >= 0.
        centre : (D,) array
            Its centre (m), inside the domain.
        radius : float
            Its radius (m), > 0.
        velocity : (D,) array
            Its velocity (m/s).
        """
class CrowdParams:
    """
    Continuum-crowd parameters (Treuille thesis Table 4.1, eq. 4.4, 4.8-4.10).
    
    Immutable; invalid values raise ValueError naming the parameter. Units of
    Table 4.1: lengths in cells (h = 1), time in steps (dt = 1).
    
    Parameters
    ----------
    f_max : float
        Unobstructed speed (cells/step) on flat or downhill ground, > 0.
    rho_min, rho_max : float
        Densities (people per cell, as splatted) between which the speed blends
        from the terrain speed to the flow speed (eq. 4.10); 0 <= rho_min <
        rho_max. rho_max = inf removes the flow-speed term.
    lam : float
        Density exponent lambda of the splat (sec. 4.2.1), > 0.
    delta_min : float
        Minimum distance between people (cells), >= 0.
    alpha, beta, gamma : float
        Weights of path length, time and discomfort per unit time in the unit
        cost of eq. 4.4, >= 0 and not all zero.
    f_min : float
        Speed (cells/step) on the steepest uphill slope s_max, in [0, f_max].
    s_min, s_max : float
        Slope range of eq. 4.8 (height difference per cell length): slopes are
        clamped into it, s_min giving f_max and s_max giving f_min; s_min < s_max.
    flow_floor : float
        In [0, 1]: the flow speed of eq. 4.9 never falls below flow_floor x f_T.
        0 is the formula as printed; a small floor keeps a dense crowd standing
        still (rho >= rho_max, ubar = 0) from locking for ever.
    """
    @staticmethod
    def table_4_1(name: str) -> CrowdParams:
        """
        A row of Table 4.1.
        
        Parameters
        ----------
        name : str
            "lanes", "vortex", "armies" (which also sets s_min, s_max = -0.3, 0.3,
            sec. 4.4), "quad" or "city".
        
        Returns
        -------
        CrowdParams
            f_max, rho_min, rho_max, delta_min, lam, alpha, beta, gamma of that row;
            f_min = 0 and flow_floor = 0.
        """
    def __init__(self, f_max: typing.SupportsFloat | typing.SupportsIndex, rho_min: typing.SupportsFloat | typing.SupportsIndex, rho_max: typing.SupportsFloat | typing.SupportsIndex, lam: typing.SupportsFloat | typing.SupportsIndex, delta_min: typing.SupportsFloat | typing.SupportsIndex, alpha: typing.SupportsFloat | typing.SupportsIndex, beta: typing.SupportsFloat | typing.SupportsIndex, gamma: typing.SupportsFloat | typing.SupportsIndex, f_min: typing.SupportsFloat | typing.SupportsIndex = 0.0, s_min: typing.SupportsFloat | typing.SupportsIndex = 0.0, s_max: typing.SupportsFloat | typing.SupportsIndex = 1.0, flow_floor: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> None:
        ...
    def __reduce__(self) -> tuple[typing.Any, tuple[typing.Any, tuple, dict, typing.Any]]:
        """
        Pickling support: rebuilt with the class's constructor.
        """
    def __repr__(self) -> str:
        ...
    def to_dict(self) -> dict:
        """
        The parameters as a dict.
        
        Returns
        -------
        dict of str to float
            Every constructor argument by name: ``Params(**{**p.to_dict(), "gamma":
            0.0})`` makes a variant.
        """
    @property
    def alpha(self) -> float:
        """
        Weight of path length in the unit cost (eq. 4.4).
        """
    @property
    def beta(self) -> float:
        """
        Weight of time in the unit cost (eq. 4.4).
        """
    @property
    def delta_min(self) -> float:
        """
        Minimum distance between people, cells.
        """
    @property
    def f_max(self) -> float:
        """
        Unobstructed speed, cells/step.
        """
    @property
    def f_min(self) -> float:
        """
        Speed on the steepest uphill slope s_max, cells/step.
        """
    @property
    def flow_floor(self) -> float:
        """
        Lower bound of the flow speed as a share of the terrain speed, in [0, 1].
        """
    @property
    def gamma(self) -> float:
        """
        Weight of discomfort per unit time in the unit cost (eq. 4.4).
        """
    @property
    def lam(self) -> float:
        """
        Density exponent lambda of the splat.
        """
    @property
    def rho_max(self) -> float:
        """
        Density (people per cell) from which people move with the flow (inf: never).
        """
    @property
    def rho_min(self) -> float:
        """
        Density (people per cell) where the flow speed starts to count.
        """
    @property
    def s_max(self) -> float:
        """
        Slope (height per cell length) giving f_min; steeper slopes are clamped to it.
        """
    @property
    def s_min(self) -> float:
        """
        Slope (height per cell length) giving f_max; gentler slopes are clamped to it.
        """
class CrowdGrid:
    """
    The crowd's world: size, height field, static discomfort, walls and
    periodic closures.
    
    Cell (i, j) is row j, column i of every (ny, nx) array, centred at
    ((i + 1/2) h, (j + 1/2) h); the domain is [0, nx h] x [0, ny h] (the layout
    of MACGrid2D). Anisotropic fields are (4, ny, nx) in the order E, N, W, S.
    
    Parameters
    ----------
    nx, ny : int
        Cells along x and y, >= 1.
    h : float
        Cell size (length units), > 0.
    height : (ny, nx) array_like, optional
        Terrain height (length units) of eq. 4.8; None: flat.
    discomfort : (ny, nx) array_like, optional
        Static discomfort g >= 0 (eq. 4.4); None: zero.
    blocked : (ny, nx) bool array_like, optional
        Walls and obstacles: nobody moves into or out of them.
    """
    def __init__(self, nx: int, ny: int, h: typing.SupportsFloat | typing.SupportsIndex = 1.0, height: numpy.ndarray[numpy.float64] | None = None, discomfort: numpy.ndarray[numpy.float64] | None = None, blocked: typing.Any = None) -> None:
        ...
    def __reduce__(self) -> tuple[typing.Any, tuple[typing.Any, tuple, dict, typing.Any]]:
        """
        Pickling support: rebuilt with the class's constructor.
        """
    def __repr__(self) -> str:
        ...
    def red(self, time: typing.SupportsFloat | typing.SupportsIndex) -> numpy.ndarray:
        """
        Cells closed by a red periodic closure.
        
        Parameters
        ----------
        time : float
            Time (steps).
        
        Returns
        -------
        (ny, nx) bool ndarray
            True where some closure is red at that time.
        """
    def set_periodic(self, mask: typing.Any, green_fraction: typing.SupportsFloat | typing.SupportsIndex, period: typing.SupportsFloat | typing.SupportsIndex, phase: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> None:
        """
        Adds a periodic closure (a traffic light, a door opening and closing), sec. 4.1.3.
        
        The cells of the mask are closed (nobody moves into them) while red: outside
        the first green_fraction of each period of time + phase. A crowd plans with
        the expected speed green_fraction x f into them. Configure before building
        a Crowd: the crowd shares the grid as it is then.
        
        Parameters
        ----------
        mask : (ny, nx) bool array_like
            Cells closed while red.
        green_fraction : float
            Share of each period that is green, in [0, 1].
        period : float
            Period (steps), > 0.
        phase : float
            Time (steps) added before taking the time modulo the period.
        """
    @property
    def blocked(self) -> numpy.ndarray:
        """
        (ny, nx) bool walls (a copy).
        """
    @property
    def discomfort(self) -> numpy.ndarray:
        """
        (ny, nx) static discomfort (a copy).
        """
    @property
    def expected_speed_factor(self) -> numpy.ndarray:
        """
        (ny, nx) product of the green fractions of the periodic closures over each cell.
        """
    @property
    def h(self) -> float:
        """
        Cell size (length units).
        """
    @property
    def height(self) -> numpy.ndarray:
        """
        (ny, nx) height field (a copy).
        """
    @property
    def n_faces(self) -> int:
        """
        N, the size of a MAC velocity vector.
        """
    @property
    def nx(self) -> int:
        """
        Cells along x.
        """
    @property
    def ny(self) -> int:
        """
        Cells along y.
        """
class CrowdAgent:
    """
    A moving obstacle driven by a rule (a car, a flying saucer; sec. 4.3).
    
    At step t it sits at path[t mod T] and closes the cells whose centres lie
    within radius; over the next lookahead path points it adds
    discomfort_ahead to the discomfort and speed_ahead to the speed of the
    moves out of the cells within radius of them, so people get out of its way
    quickly.
    
    Parameters
    ----------
    path : (T, 2) array_like
        Positions (length units) per step, looped.
    radius : float
        Radius of the closed disc (length units), >= 0.
    discomfort_ahead : float
        Discomfort added ahead of the agent, >= 0.
    speed_ahead : float
        Speed (length per step) added to moves out of the cells ahead, >= 0.
    lookahead : int
        Path points ahead that receive discomfort and speed, >= 0.
    """
    def __init__(self, path: numpy.ndarray[numpy.float64], radius: typing.SupportsFloat | typing.SupportsIndex, discomfort_ahead: typing.SupportsFloat | typing.SupportsIndex = 0.0, speed_ahead: typing.SupportsFloat | typing.SupportsIndex = 0.0, lookahead: int = 0) -> None:
        ...
    def __reduce__(self) -> tuple[typing.Any, tuple[typing.Any, tuple, dict, typing.Any]]:
        """
        Pickling support: rebuilt with the class's constructor.
        """
    def __repr__(self) -> str:
        ...
    @property
    def discomfort_ahead(self) -> float:
        """
        Discomfort added ahead of the agent.
        """
    @property
    def lookahead(self) -> int:
        """
        Path points ahead that receive discomfort and speed.
        """
    @property
    def path(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (T, 2) positions (a copy).
        """
    @property
    def radius(self) -> float:
        """
        Radius of the closed disc (length units).
        """
    @property
    def speed_ahead(self) -> float:
        """
        Speed (length per step) added to moves out of the cells ahead.
        """
class CrowdRun:
    """
    Recorded run: positions (T+1, P, 2), active (T+1, P), step_times (T,) s, stage_times (T, 4) s, stuck (K,) person indices.
    """
    def __repr__(self) -> str:
        ...
    @property
    def active(self) -> numpy.ndarray:
        """
        (T+1, P) bool: still walking (read-only view).
        """
    @property
    def positions(self) -> numpy.ndarray:
        """
        (T+1, P, 2) positions (read-only view).
        """
    @property
    def stage_times(self) -> numpy.ndarray:
        """
        (T, 4) wall time of each step's stages, seconds: density (splat, predictive discomfort, agents), speed + unit cost, potential (eikonal), motion (velocity fields, Euler, minimum distance, arrival); per-group stages summed over the groups.
        """
    @property
    def step_times(self) -> numpy.ndarray:
        """
        (T,) wall time of each step, seconds.
        """
    @property
    def stuck(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        (K,) people walled in at some step: in a cell with no open path to the goal (walls, closed cells), whatever the density. People held behind a dense crowd at rest also stand still (phi = inf there) but are not listed.
        """
class Crowd:
    """
    A continuum crowd: an immutable model (grid, groups' goals and parameters,
    options, agents) that threads may share, and this object's people and
    buffers. Prefer directable.crowds.Crowd.
    """
    def __init__(self, grid: CrowdGrid, goals: collections.abc.Sequence[typing.Any], positions: collections.abc.Sequence[numpy.ndarray[numpy.float64]], params: collections.abc.Sequence[CrowdParams], predictive_steps: int = 0, predictive_scale: typing.SupportsFloat | typing.SupportsIndex = 0.1, predictive_lambda: typing.SupportsFloat | typing.SupportsIndex = 1.0, remove_on_arrival: bool = True, lam: typing.SupportsFloat | typing.SupportsIndex = 2.0, delta_min: typing.SupportsFloat | typing.SupportsIndex = 0.3, min_distance_iterations: int = 1, agents: collections.abc.Sequence[CrowdAgent] = [], expected_periodic: bool = True) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def cfl(self, dt: typing.SupportsFloat | typing.SupportsIndex) -> float:
        """
        Largest speed * dt / h over the groups (> 1: people may skip cells).
        """
    def fields(self, group: int, threads: int = 0) -> dict:
        """
        The fields of the current state for one group: rho, ubar, discomfort (total g), speed (planning), speed_actual, cost, phi, velocity (N,), goal.
        """
    def occupied(self, group: int) -> numpy.ndarray:
        """
        (ny, nx) bool: cells holding a walking person of the group.
        """
    def run(self, steps: int, dt: typing.SupportsFloat | typing.SupportsIndex = 1.0, threads: int = 0, before_step: typing.Any = None, progress: typing.Any = None) -> CrowdRun:
        """
        `steps` steps (GIL released); before_step(step) is called first each step; progress(done, total).
        """
    def set_goal(self, group: int, goal: typing.Any) -> None:
        """
        Replaces a group's goal (ny, nx) bool.
        """
    def step(self, dt: typing.SupportsFloat | typing.SupportsIndex = 1.0, threads: int = 0) -> None:
        """
        One step of length dt (groups on `threads` threads, 0 = all).
        """
    @property
    def active(self) -> numpy.ndarray:
        """
        (P,) bool: still walking.
        """
    @property
    def arrived(self) -> numpy.ndarray:
        """
        (P,) bool: reached the goal.
        """
    @property
    def grid(self) -> CrowdGrid:
        ...
    @property
    def group_of(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        (P,) group index of each person.
        """
    @property
    def n_groups(self) -> int:
        ...
    @property
    def positions(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (P, 2) (a copy).
        """
    @property
    def step_index(self) -> int:
        """
        Steps taken so far.
        """
    @property
    def stuck(self) -> numpy.ndarray:
        """
        (P,) bool: ever walled in (no open path to the goal, whatever the density).
        """
    @property
    def time(self) -> float:
        """
        Time walked so far (s): the sum of the steps' dt.
        """
    @property
    def velocities(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (P, 2) (a copy).
        """
class ClothIntegrator:
    """
    Cloth integrators: symplectic Euler, backward Euler (LDL' or CG).
    
    Members:
    
      symplectic
    
      implicit
    
      implicit_cg
    """
    __members__: typing.ClassVar[dict[str, ClothIntegrator]]
    implicit: typing.ClassVar[ClothIntegrator]
    implicit_cg: typing.ClassVar[ClothIntegrator]
    symplectic: typing.ClassVar[ClothIntegrator]
    @typing.overload
    def __eq__(self, other: ClothIntegrator) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: int) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: ClothIntegrator) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: int) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class ClothCollider:
    """
    A penalty collider of the cloth (sphere or plane), part of F^A.
    """
    @staticmethod
    def plane(point: numpy.ndarray[numpy.float64], normal: numpy.ndarray[numpy.float64], stiffness: typing.SupportsFloat | typing.SupportsIndex, friction: typing.SupportsFloat | typing.SupportsIndex) -> ClothCollider:
        ...
    @staticmethod
    def sphere(center: numpy.ndarray[numpy.float64], radius: typing.SupportsFloat | typing.SupportsIndex, stiffness: typing.SupportsFloat | typing.SupportsIndex, friction: typing.SupportsFloat | typing.SupportsIndex) -> ClothCollider:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def friction(self) -> float:
        ...
    @property
    def kind(self) -> str:
        ...
    @property
    def normal(self) -> numpy.typing.NDArray[numpy.float64]:
        ...
    @property
    def point(self) -> numpy.typing.NDArray[numpy.float64]:
        ...
    @property
    def radius(self) -> float:
        ...
    @property
    def stiffness(self) -> float:
        ...
class ClothRollout:
    """
    Positions and velocities of a cloth run.
    """
    def __repr__(self) -> str:
        ...
    @property
    def v(self) -> numpy.ndarray:
        """
        (T+1, V, 3) velocities (m/s), read-only view.
        """
    @property
    def x(self) -> numpy.ndarray:
        """
        (T+1, V, 3) positions (m), read-only view.
        """
class PointMassRun(ClothRollout):
    """
    A run with control forces: a ClothRollout (x, v) plus u.
    """
    def __repr__(self) -> str:
        ...
    @property
    def u(self) -> numpy.ndarray:
        """
        (T, V, 3) applied control forces (N), read-only view.
        """
class ClothControlModel(Model):
    """
    The cloth as a Model: z = [q, q'] (6V), w = forces on the controlled nodes
    (3 per node), B = [0; M^-1 S], analytic Jacobian; step() is symplectic Euler.
    """
    def __repr__(self) -> str:
        ...
    @property
    def controlled(self) -> list[int]:
        ...
class ClothModel:
    """
    Immutable mass-spring cloth (nx x ny nodes, node (i, j) = j*nx + i). Build
    a new one to change colliders: a model in use is never modified.
    """
    def __init__(self, nx: int, ny: int, spacing: typing.SupportsFloat | typing.SupportsIndex, mass: typing.SupportsFloat | typing.SupportsIndex, k_struct: typing.SupportsFloat | typing.SupportsIndex, k_shear: typing.SupportsFloat | typing.SupportsIndex, k_bend: typing.SupportsFloat | typing.SupportsIndex, damping: typing.SupportsFloat | typing.SupportsIndex, gravity: numpy.ndarray[numpy.float64], pinned: collections.abc.Sequence[int], origin: numpy.ndarray[numpy.float64], k_bend2: typing.SupportsFloat | typing.SupportsIndex, colliders: collections.abc.Sequence[ClothCollider]) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def as_model(self, controlled: collections.abc.Sequence[int]) -> ClothControlModel:
        """
        The cloth as a Model driven by forces on the controlled nodes.
        """
    def energy(self, x: numpy.ndarray[numpy.float64]) -> float:
        """
        Spring + gravity + collider potential (J).
        """
    def force_jacobians(self, x: numpy.ndarray[numpy.float64], v: numpy.ndarray[numpy.float64]) -> tuple[numpy.typing.NDArray[numpy.int32], numpy.typing.NDArray[numpy.int32], numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64]]:
        """
        (indptr, indices, dF/dx values, dF/dv values) of the CSR (3V, 3V) Jacobians.
        """
    def forces(self, x: numpy.ndarray[numpy.float64], v: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        F^A (V, 3) at x, v (V, 3).
        """
    def rollout(self, x0: numpy.ndarray[numpy.float64], v0: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex, steps: int, u: numpy.ndarray[numpy.float64] | None = None, method: ClothIntegrator = ..., progress: typing.Any = None) -> ClothRollout:
        """
        steps steps in one call (GIL released): a ClothRollout.
        """
    def step(self, x: numpy.ndarray[numpy.float64], v: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex, u: numpy.ndarray[numpy.float64] | None = None, method: ClothIntegrator = ...) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64]]:
        """
        One step: (x+, v+), each (V, 3).
        """
    @property
    def colliders(self) -> list[ClothCollider]:
        ...
    @property
    def node_count(self) -> int:
        """
        V.
        """
    @property
    def pinned(self) -> list[int]:
        """
        Pinned node indices.
        """
    @property
    def positions0(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (V, 3) rest grid (m).
        """
    @property
    def spring_count(self) -> int:
        """
        Springs present.
        """
class ClothPlan:
    """
    Paths and forces of goal-directed control.
    """
    def __repr__(self) -> str:
        ...
    @property
    def clipped_forces(self) -> int:
        """
        Number of forces that f_max shortened (int; 0 without a limit).
        """
    @property
    def closest_step(self) -> list[int]:
        """
        Per node (c ints): step of the first pass's closest approach to the goal, counted from the window start.
        """
    @property
    def cost(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (c,) eq. 14's cost of each node over its window: sum of 1/2 (beta |q - q#|^2 + gamma |u|^2) (m^2 and N^2 weighted).
        """
    @property
    def final_distance(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (c,) distance |q_{t_c} - q#| (m) of each node from its goal at its t_c.
        """
    @property
    def forces(self) -> numpy.ndarray:
        """
        (n, c, 3) control forces (N) of the second pass, zero outside each node's window (read-only view).
        """
    @property
    def generated(self) -> numpy.ndarray:
        """
        (c, n+1, 3) node positions (m) of the first pass, the heuristic path search (read-only view; empty for follow).
        """
    @property
    def goals(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        (c, 3) goal positions q# (m), one row per node.
        """
    @property
    def nodes(self) -> list[int]:
        """
        The c controlled nodes (list of int), in the order of the goals.
        """
    @property
    def paths(self) -> numpy.ndarray:
        """
        (c, n+1, 3) node positions (m) of the second pass over the merged window (read-only view).
        """
    @property
    def reached(self) -> list[bool]:
        """
        Per node (c bools): whether it ends on its goal to the plan's tolerance (False where f_max clipped a force).
        """
    @property
    def t_end(self) -> int:
        """
        End of the merged window (int, exclusive): the latest goal's t_c.
        """
    @property
    def t_start(self) -> int:
        """
        First step of the merged window (int); the window is [t_start, t_end), n = t_end - t_start steps.
        """
    @property
    def targets(self) -> numpy.ndarray:
        """
        (c, n+1, 3) the cut and re-timed paths (m) the second pass follows; NaN outside each node's window (read-only view).
        """
    @property
    def window_end(self) -> list[int]:
        """
        Per node (c ints): its t_c, the step at which it must be on its goal.
        """
    @property
    def window_start(self) -> list[int]:
        """
        Per node (c ints): first step of its window, after overlapping windows were merged.
        """
class CharacterSkeleton:
    """
    Kinematic skeleton: J joints with parent indices and rest offsets.
    
    Parameters
    ----------
    parents : list of int
        (J,) parent of each joint, -1 for the root (pelvis); parents come before their children.
    offsets : (J, 3) array_like
        Rest offset of each joint from its parent, m (y up).
    mirror : list of int, optional
        (J,) left/right partner of each joint (itself on the midline); default: found from the offsets' x signs.
    """
    def __init__(self, parents: collections.abc.Sequence[int], offsets: numpy.ndarray[numpy.float64], mirror: collections.abc.Sequence[int] | None = None) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def joints(self) -> int:
        """
        J, the number of joints (int).
        """
    @property
    def mirror(self) -> numpy.ndarray:
        """
        (J,) int array: the left/right partner of each joint (itself on the midline).
        """
    @property
    def offsets(self) -> numpy.ndarray:
        """
        (J, 3) array: rest offset of each joint from its parent, m (a copy).
        """
    @property
    def parents(self) -> numpy.ndarray:
        """
        (J,) int array: parent of each joint, -1 for the root.
        """
class CharacterClipSet:
    """
    Motion clips (thesis sec. 5.1).
    """
    def __init__(self, skeleton: CharacterSkeleton, poses: collections.abc.Sequence[numpy.ndarray[numpy.float64]], constraint_frames: typing.Any, stance_foot: typing.Any, gait: collections.abc.Sequence[int], gait_names: collections.abc.Sequence[str], params: numpy.ndarray[numpy.float64], mirror_of: collections.abc.Sequence[int] | None = None, dt: typing.SupportsFloat | typing.SupportsIndex = 0.03333333333333333, foot_tolerance: typing.SupportsFloat | typing.SupportsIndex = 1e-06, contacts: typing.Any = None) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def half(self, k: int) -> int:
        ...
    @property
    def clips(self) -> int:
        ...
    @property
    def constraint_frames(self) -> numpy.ndarray:
        ...
    @property
    def dt(self) -> float:
        ...
    @property
    def gait(self) -> numpy.ndarray:
        ...
    @property
    def gait_names(self) -> list[str]:
        ...
    @property
    def mirror_of(self) -> numpy.ndarray:
        ...
    @property
    def param_matrix(self) -> numpy.ndarray:
        ...
    @property
    def poses(self) -> list:
        ...
    @property
    def skeleton(self) -> CharacterSkeleton:
        ...
    @property
    def stance_foot(self) -> numpy.ndarray:
        ...
class CharacterAnimation:
    """
    A synthesised animation (MotionModel.synthesize).
    """
    def __repr__(self) -> str:
        ...
    @property
    def clip_of_frame(self) -> numpy.ndarray:
        """
        (F,) int array: the clip (as the state holds it) each frame belongs to.
        """
    @property
    def contact_foot(self) -> numpy.ndarray:
        """
        (F,) int array: the joint planted at each frame (the blend's root).
        """
    @property
    def frames(self) -> numpy.ndarray:
        """
        (F, J, 3) read-only view: world joint positions of every frame, m.
        """
    @property
    def played(self) -> numpy.ndarray:
        """
        (n,) int array: the oriented clip that played each step (>= K: mirrored).
        """
    @property
    def roots(self) -> numpy.ndarray:
        """
        (n, 3) array: world (x m, z m, theta rad) of each played clip's root frame.
        """
class MotionModel:
    """
    Clip blending and the transition table (thesis sec. 5.1).
    """
    def __init__(self, clips: CharacterClipSet, joint_weights: numpy.ndarray[numpy.float64] | None = None, velocity_weight: typing.SupportsFloat | typing.SupportsIndex = 0.01, threads: int = 0, progress: typing.Any = None) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def blend(self, clip: int, next_clip: int) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        ...
    def param(self, arg0: int, arg1: int) -> float:
        ...
    def synthesize(self, clip_sequence: collections.abc.Sequence[int], x: typing.SupportsFloat | typing.SupportsIndex, z: typing.SupportsFloat | typing.SupportsIndex, theta: typing.SupportsFloat | typing.SupportsIndex) -> CharacterAnimation:
        ...
    def transition_table(self) -> dict:
        ...
    @property
    def K(self) -> int:
        ...
    @property
    def clips(self) -> CharacterClipSet:
        ...
class CharacterTask:
    """
    A character control task (thesis Table 5.1).
    """
    def __init__(self, motion: MotionModel, kind: str, gamma_x: typing.SupportsFloat | typing.SupportsIndex = 0.0, gamma_O: typing.SupportsFloat | typing.SupportsIndex = 0.0, sigma_O: typing.SupportsFloat | typing.SupportsIndex = 1.0, gamma_psi: typing.SupportsFloat | typing.SupportsIndex = 0.0, gamma_rho: typing.SupportsFloat | typing.SupportsIndex = 0.0, gamma_tau: typing.SupportsFloat | typing.SupportsIndex = 0.0, gamma_omega: typing.SupportsFloat | typing.SupportsIndex = 0.0, gait: collections.abc.Sequence[bool] = [], torso: typing.SupportsFloat | typing.SupportsIndex = 0.0, spin: typing.SupportsFloat | typing.SupportsIndex = 0.0, offset: typing.SupportsFloat | typing.SupportsIndex = 0.0, u_dot: typing.SupportsFloat | typing.SupportsIndex = 0.0, v_dot: typing.SupportsFloat | typing.SupportsIndex = 0.0, ranges: numpy.ndarray[numpy.float64] | None = None, obstacle_samples: int = 1) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def check_states(self, states: numpy.ndarray[numpy.float64], name: str = 'states', in_ranges: bool = True) -> None:
        ...
    def state_costs(self, states: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        ...
    def successors(self, states: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        ...
    def transition_costs(self, states: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        ...
    @property
    def K(self) -> int:
        ...
    @property
    def cyclic(self) -> list[bool]:
        ...
    @property
    def dim(self) -> int:
        ...
    @property
    def ranges(self) -> numpy.ndarray:
        ...
    @property
    def variables(self) -> list[str]:
        ...
class CharacterBasis:
    """
    Value-function basis (thesis eq. 5.11).
    """
    def __init__(self, products: list, monomial: bool = False) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def evaluate(self, states: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        ...
    @property
    def size(self) -> int:
        ...
class GridValue:
    """
    A value function tabulated on a grid, multilinear between points.
    """
    def __call__(self, states: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        ...
    def __init__(self, clips: int, axes: collections.abc.Sequence[numpy.typing.ArrayLike], cyclic: collections.abc.Sequence[bool]) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def axes(self) -> list[numpy.typing.NDArray[numpy.float64]]:
        ...
    @property
    def values(self) -> numpy.ndarray:
        ...
class DecisionProblem:
    """
    A task (and basis) as the controller sees it.
    """
    def __init__(self, task: CharacterTask, basis: CharacterBasis = None) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def choose(self, policy: str, r: numpy.ndarray[numpy.float64] | None, grid: GridValue, alpha: typing.SupportsFloat | typing.SupportsIndex, state: numpy.ndarray[numpy.float64]) -> int:
        ...
    def run(self, policy: str, r: numpy.ndarray[numpy.float64] | None, grid: GridValue, alpha: typing.SupportsFloat | typing.SupportsIndex, state0: numpy.ndarray[numpy.float64], steps: int) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        ...
    def values(self, r: numpy.ndarray[numpy.float64], states: numpy.ndarray[numpy.float64], threads: int = 0) -> numpy.ndarray:
        ...
    @property
    def features(self) -> int:
        ...
class ValueLearning:
    """
    The approximate-LP loop's scans and constraint rows (thesis sec. 5.3.2).
    """
    def __init__(self, problem: DecisionProblem, samples: numpy.ndarray[numpy.float64], alpha: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
    def __repr__(self) -> str:
        ...
    def best_clips(self, r: numpy.ndarray[numpy.float64], threads: int = 0) -> numpy.ndarray:
        ...
    def objective(self, threads: int = 0) -> numpy.typing.NDArray[numpy.float64]:
        ...
    def step(self, r: numpy.ndarray[numpy.float64], threads: int = 0, progress: typing.Any = None) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.int32], numpy.typing.NDArray[numpy.int64], numpy.ndarray]:
        ...
    @property
    def constraints(self) -> int:
        """
        Constraint rows gathered so far.
        """
    @property
    def history(self) -> numpy.ndarray:
        """
        Constraints gathered by each step so far.
        """
    @property
    def pairs(self) -> numpy.ndarray:
        """
        (constraints, 2) the (sample, clip) pair of each constraint row.
        """
class MujocoLibrary:
    """
    MuJoCo's C API loaded at run time from the shared library at path (the one
    the mujoco Python package loaded: libmujoco.so.* beside mujoco/__init__.py).
    ValueError when it cannot be opened or is not MuJoCo 4.0.x, the release
    the compiled loop was written against.
    """
    header_version: typing.ClassVar[int] = 4000000
    def __init__(self, path: str) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def path(self) -> str:
        ...
    @property
    def version(self) -> int:
        """
        mj_version(): 100 * (100 * major + minor) + patch
        """
class MujocoModel:
    """
    View of a mujoco.MjModel for the compiled loops: the model's address, its
    sizes, dof_parentid (nv,), the qpos index of every ball / free joint's
    quaternion, and the addresses of qpos0 (nq,) and dof_damping
    (nv,). Made by directable.mujoco; the MjModel must outlive it.
    """
    def __init__(self, library: MujocoLibrary, model: typing.SupportsInt | typing.SupportsIndex, nq: int, nv: int, na: int, nu: int, nbody: int, dof_parent: numpy.typing.ArrayLike, quat_adr: numpy.typing.ArrayLike, qpos0: typing.SupportsInt | typing.SupportsIndex, dof_damping: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __repr__(self) -> str:
        ...
    @property
    def na(self) -> int:
        ...
    @property
    def nq(self) -> int:
        ...
    @property
    def nu(self) -> int:
        ...
    @property
    def nv(self) -> int:
        ...
class MujocoData:
    """
    View of a mujoco.MjData for the compiled loops: its address, the addresses
    of qpos, qvel, act, ctrl, qfrc_applied, xfrc_applied, qfrc_bias, qfrc_passive and of the
    four warning counters mjWARN_BADQACC, BADQPOS, BADQVEL, BADCTRL; with the
    buffers of the SPD torque. Made by directable.mujoco; the MjData must
    outlive it.
    """
    def __init__(self, model: MujocoModel, data: typing.SupportsInt | typing.SupportsIndex, qpos: typing.SupportsInt | typing.SupportsIndex, qvel: typing.SupportsInt | typing.SupportsIndex, act: typing.SupportsInt | typing.SupportsIndex, ctrl: typing.SupportsInt | typing.SupportsIndex, qfrc_applied: typing.SupportsInt | typing.SupportsIndex, xfrc_applied: typing.SupportsInt | typing.SupportsIndex, qfrc_bias: typing.SupportsInt | typing.SupportsIndex, qfrc_passive: typing.SupportsInt | typing.SupportsIndex, warnings: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        ...
    def __repr__(self) -> str:
        ...
def _restore(cls: typing.Any, args: tuple, state: dict, instance_dict: typing.Any) -> typing.Any:
    """
    Unpickling: cls(*args), then the attributes of state and the instance __dict__.
    """
def _simulation_result(states: numpy.ndarray[numpy.float64], controls: numpy.ndarray[numpy.float64], feedback: numpy.ndarray[numpy.float64], tracking_error: numpy.ndarray[numpy.float64], effort: numpy.ndarray[numpy.float64], ref_index: typing.Annotated[numpy.typing.ArrayLike, numpy.int32]) -> SimulationResult:
    """
    Unpickling of a SimulationResult from its arrays (copied).
    """
def build_info() -> dict:
    """
    How this build was made and what it runs on.
    
    Returns
    -------
    dict
        ``kernels``: the instruction-set level the core was compiled for
        ("x86-64", "x86-64-v3", ...); ``cpu``: the highest level this CPU offers;
        ``native``: built with -march=native; ``compiler``, ``build_type``,
        ``eigen`` (version), ``simd`` (Eigen's instruction sets in the
        kernels), ``avx2``, ``fma``, ``openmp``, ``threads`` (of the parallel precomputations).
    """
def check_allocation(what: str, nbytes: typing.SupportsFloat | typing.SupportsIndex) -> None:
    """
    Refuses a request larger than the machine's physical memory.
    
    The Python layer's own arrays go through the same check as the core's, so a
    size beyond the memory is a MemoryError that names the argument and the size
    instead of NumPy's nameless one (or a fill that swaps for minutes).
    
    Parameters
    ----------
    what : str
        The request, named by the argument that sized it (``"steps = 10**12"``).
    nbytes : float
        Its size in bytes (a float, so that products of huge counts do not wrap).
    
    Raises
    ------
    MemoryError
        When ``nbytes`` exceeds the physical memory; the message names ``what``
        and both sizes in GB.
    """
def cloth_apply(cloth: ClothModel, x0: numpy.ndarray[numpy.float64], v0: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex, steps: int, t_start: int, nodes: collections.abc.Sequence[int], forces: numpy.ndarray[numpy.float64], progress: typing.Any = None) -> PointMassRun:
    """
    Symplectic run with forces (n, c, 3) on nodes from step t_start; GIL released.
    """
def cloth_blend(path: numpy.ndarray[numpy.float64], control_points: numpy.ndarray[numpy.float64], weight: typing.SupportsFloat | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
    """
    (1 - weight) path + weight Newton curve through control_points (4, 3).
    """
def cloth_control_window(distance: typing.SupportsFloat | typing.SupportsIndex, alpha: typing.SupportsFloat | typing.SupportsIndex, t_c: int) -> int:
    """
    Eq. 11: round(alpha distance^2) steps, clipped to [1, t_c].
    """
def cloth_curl_goals(x_at_tc: numpy.ndarray[numpy.float64], region: collections.abc.Sequence[int], curl_deg: typing.SupportsFloat | typing.SupportsIndex, rotate_deg: typing.SupportsFloat | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.float64]:
    """
    Target pose goals (r, 3) of a region rotated by curl_deg about its hinge and rotate_deg about the normal.
    """
def cloth_follow(cloth: ClothModel, pilot_x: numpy.ndarray[numpy.float64], pilot_v: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex, nodes: collections.abc.Sequence[int], window_start: collections.abc.Sequence[int], window_end: collections.abc.Sequence[int], paths: numpy.ndarray[numpy.float64], beta: typing.SupportsFloat | typing.SupportsIndex, gamma: typing.SupportsFloat | typing.SupportsIndex, f_max: typing.SupportsFloat | typing.SupportsIndex, tolerance: typing.SupportsFloat | typing.SupportsIndex) -> ClothPlan:
    """
    Second pass along given paths (c, n+1, 3) over the nodes' windows; GIL released.
    """
def cloth_plan(cloth: ClothModel, pilot_x: numpy.ndarray[numpy.float64], pilot_v: numpy.ndarray[numpy.float64], goals: collections.abc.Sequence[tuple[int, int, numpy.ndarray[numpy.float64]]], dt: typing.SupportsFloat | typing.SupportsIndex, alpha: typing.SupportsFloat | typing.SupportsIndex, beta: typing.SupportsFloat | typing.SupportsIndex, gamma: typing.SupportsFloat | typing.SupportsIndex, delta: typing.SupportsFloat | typing.SupportsIndex, seek_angle: typing.SupportsFloat | typing.SupportsIndex, samples: int, azimuths: int, widen: typing.SupportsFloat | typing.SupportsIndex, f_max: typing.SupportsFloat | typing.SupportsIndex, length_ratio: str, tolerance: typing.SupportsFloat | typing.SupportsIndex) -> ClothPlan:
    """
    Goal-directed paths and forces for goals [(node, t_c, goal (3,))] over a pilot (T+1, V, 3); GIL released.
    """
def cloth_retime(path: numpy.ndarray[numpy.float64], reference: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
    """
    Re-timed path (n+1, 3) on path (m+1, 3) spaced like reference (n+1, 3).
    """
def crowd_close_pairs(positions: numpy.ndarray[numpy.float64], delta_min: typing.SupportsFloat | typing.SupportsIndex) -> numpy.typing.NDArray[numpy.int64]:
    """
    (K, 2) pairs i < j at distance <= delta_min (cell binning).
    """
def crowd_eikonal(cost: numpy.ndarray[numpy.float64], goal: typing.Any, blocked: typing.Any = None, h: typing.SupportsFloat | typing.SupportsIndex = 1.0, heap: str = 'indexed') -> numpy.typing.NDArray[numpy.float64]:
    """
    Potential phi (ny, nx) by anisotropic fast marching of cost (4, ny, nx) from goal (ny, nx) bool; +inf where unreachable.
    """
def crowd_min_distance(positions: numpy.ndarray[numpy.float64], delta_min: typing.SupportsFloat | typing.SupportsIndex, iterations: int = 1, grid: CrowdGrid = None) -> numpy.typing.NDArray[numpy.float64]:
    """
    Positions (P, 2) after `iterations` passes pushing every pair closer than delta_min apart symmetrically.
    """
def crowd_speed_field(grid: CrowdGrid, rho: numpy.ndarray[numpy.float64], ubar: numpy.ndarray[numpy.float64], params: CrowdParams, time: typing.SupportsFloat | typing.SupportsIndex | None = None, out: typing.Any = None) -> numpy.typing.NDArray[numpy.float64]:
    """
    Speed field (4, ny, nx) of eq. 4.8-4.10 (into out if given); time=None: expected speed of periodic closures, else the actual speed at that time.
    """
def crowd_splat(grid: CrowdGrid, positions: numpy.ndarray[numpy.float64], velocities: numpy.ndarray[numpy.float64], lam: typing.SupportsFloat | typing.SupportsIndex, out: typing.Any = None) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64]]:
    """
    Density splat (sec. 4.2.1) of positions (P, 2) and mean velocity (eq. 4.7): (rho (ny, nx), ubar (ny, nx, 2)), written into out=(rho, ubar) if given.
    """
def crowd_unit_cost(grid: CrowdGrid, speed: numpy.ndarray[numpy.float64], discomfort: numpy.ndarray[numpy.float64], params: CrowdParams, out: typing.Any = None) -> numpy.typing.NDArray[numpy.float64]:
    """
    Unit cost (4, ny, nx) of eq. 4.4 (into out if given), +inf where the speed is 0.
    """
def crowd_velocity_field(grid: CrowdGrid, phi: numpy.ndarray[numpy.float64], cost: numpy.ndarray[numpy.float64], speed: numpy.ndarray[numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
    """
    MAC velocity (N,) walking down phi (ny, nx) with the speeds (4, ny, nx).
    """
def discretize(A: numpy.ndarray[numpy.float64], B: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex, Q: numpy.ndarray[numpy.float64], R: numpy.ndarray[numpy.float64], method: DiscretizeMethod = ..., horizon: int | None = None, intervals: int = 10, threads: int = 0, progress: typing.Any = None, allow_indefinite_Q: bool = False) -> Discretization:
    """
    Discretize z' = A_i z + B w (w held over each step dt) and the cost
    int z'Qz + w'Rw dt. A (T, n, n), B (T, n, s), Q (T, n, n), R (T, s, s), or
    single matrices (constant; then horizon is required). Parallel over steps
    (threads=0: all cores), GIL released, progress(done, total) throttled.
    """
def expm_bordered(H: numpy.ndarray[numpy.float64], C: numpy.ndarray[numpy.float64]) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64], int, int]:
    """
    exp([[H, C], [0, 0]]) = [[E, G], [0, I]] by a structured Pade approximant.
    
    H: (m, m), C: (m, k). Returns (E (m, m), G (m, k), pade_degree, squarings);
    G = phi1(H) C. With k = 0 this is the plain matrix exponential of H.
    """
def linearize(model: Model, z_ref: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex, t0: typing.SupportsFloat | typing.SupportsIndex = 0.0, horizon: int | None = None, threads: int = 0, progress: typing.Any = None) -> numpy.ndarray:
    """
    A_i = dF/dz at z_ref[i], t0 + i dt: (T, n, n) for z_ref (T+1, n) (the
    last state is not linearized). Parallel over steps, GIL released.
    """
def max_threads() -> int:
    """
    Number of threads the parallel precomputations use (OMP_NUM_THREADS).
    """
def minimize_lbfgs(fun: collections.abc.Callable, x0: numpy.ndarray[numpy.float64], lower: numpy.ndarray[numpy.float64] | None = None, upper: numpy.ndarray[numpy.float64] | None = None, iterations: int = 100, memory: int = 10, gtol: typing.SupportsFloat | typing.SupportsIndex = 0.0, initial_scale: typing.SupportsFloat | typing.SupportsIndex = 0.0) -> dict:
    """
    Projected L-BFGS on a box: minimises fun over lower <= x <= upper.
    
    Holds the GIL (fun is Python); Ctrl-C stops it between evaluations.
    
    Parameters
    ----------
    fun : callable(x) -> (float, (N,) array)
        The objective and its gradient at x (N,).
    x0 : (N,) array
        Starting point, finite (projected onto the box first).
    lower, upper : (N,) array, optional
        Bounds (-inf / +inf allowed; lower <= upper); None for none.
    iterations : int, optional
        Most iterations, >= 0.
    memory : int, optional
        Correction pairs kept, >= 1.
    gtol : float, optional
        Stop when the projected gradient's largest entry is <= gtol.
    initial_scale : float, optional
        > 0: the inverse-Hessian scale of the first step (before any correction
        pair exists), e.g. the ``scale`` of a previous, related minimisation
        (units of x per unit of gradient); 0: the first step has unit length.
    
    Returns
    -------
    dict
        ``x`` (N,), ``cost``, ``cost_initial``, ``iterations``, ``evaluations``,
        ``gradients``, ``seconds``, ``scale`` (s'y / y'y of the first stored
        pair, ``initial_scale`` if none: the curvature scale to start a related
        problem with).
    """
def mirror_poses(skeleton: CharacterSkeleton, poses: numpy.ndarray[numpy.float64]) -> numpy.ndarray:
    ...
def mujoco_run_lqr(model: MujocoModel, data: MujocoData, tracker: Tracker, qpos_ref: numpy.ndarray[numpy.float64], qvel_ref: numpy.ndarray[numpy.float64], act_ref: numpy.ndarray[numpy.float64] | None, steps: int, disturbance: numpy.ndarray[numpy.float64] | None, body_forces: numpy.ndarray[numpy.float64] | None, max_state: typing.SupportsFloat | typing.SupportsIndex, x: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], qpos: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], u: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], progress: typing.Any = None) -> tuple:
    """
    A whole LQR run on MuJoCo's controls in C++ (GIL released): w = w_ff + K (x (-) x_ref)
    with the tracker built on a zero reference. qpos_ref (T+1, nq), qvel_ref
    (T+1, nv), act_ref (T+1, na) or None; disturbance (steps, nv) or None;
    body_forces (steps, 6 nbody) written to xfrc_applied before each step, or None.
    Writes x (steps+1, nx), qpos (steps+1, nq), u (steps, nu) row by row and
    returns (done, diverged_at, reason). See directable.mujoco.run.
    """
def mujoco_run_servo(model: MujocoModel, data: MujocoData, kind: Servo, damping_method: bool, qpos_ref: numpy.ndarray[numpy.float64], qvel_ref: numpy.ndarray[numpy.float64], kp: numpy.ndarray[numpy.float64], kd: numpy.ndarray[numpy.float64], tau_ff: numpy.ndarray[numpy.float64] | None, damping: numpy.ndarray[numpy.float64] | None, dt: typing.SupportsFloat | typing.SupportsIndex, steps: int, disturbance: numpy.ndarray[numpy.float64] | None, body_forces: numpy.ndarray[numpy.float64] | None, max_state: typing.SupportsFloat | typing.SupportsIndex, x: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], qpos: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], u: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], progress: typing.Any = None) -> tuple:
    """
    A whole PD / SPD servo run on qfrc_applied in C++ (GIL released). qpos_ref
    (T+1, nq), qvel_ref (T+1, nv), kp, kd (T, nv), tau_ff (T, nv) or None,
    damping (nv,): the model's joint damping before the run (the "damping"
    method writes D + Kd for each step and restores it) or, for "solve", the
    damping treated implicitly (None: none). Writes x, qpos, u (steps, nv) and
    returns (done, diverged_at, reason). See directable.mujoco.run.
    """
def mujoco_spd(model: MujocoModel, data: MujocoData, q_ref_next: numpy.ndarray[numpy.float64] | None, qd_ref_next: numpy.ndarray[numpy.float64] | None, kp: numpy.ndarray[numpy.float64] | None, kd: numpy.ndarray[numpy.float64] | None, dt: typing.SupportsFloat | typing.SupportsIndex, damping: numpy.ndarray[numpy.float64] | None = None, actuated: typing.Annotated[numpy.typing.ArrayLike, numpy.bool] | None = None, forward: bool = True, tau_ff: numpy.ndarray[numpy.float64] | None = None, return_qacc: bool = False) -> typing.Any:
    """
    Stable PD torque (nv,) (Tan et al. eq. 11) at the state of a MuJoCo data, or
    (tau, qacc) with return_qacc: q_ref_next (nq,), qd_ref_next (nv,) or None,
    kp, kd scalars or (nv,), dt (s), damping (nv,) the joint damping the
    integrator treats implicitly or None, actuated (nv,) bool or None, forward:
    run mj_fwdPosition + mj_fwdVelocity first, tau_ff (nv,) a known feed-forward
    (not included in the returned torque). See directable.mujoco.spd.
    """
def pd_gain(kp: numpy.ndarray[numpy.float64], kd: numpy.ndarray[numpy.float64], n: int, actuated: numpy.ndarray[numpy.float64] | None = None) -> numpy.typing.NDArray[numpy.float64]:
    """
    PD gain on z = [q, qd]: K = -[diag(kp) S', diag(kd) S'].
    
    Parameters
    ----------
    kp, kd : float or (s,) array
        Stiffness and damping gains.
    n : int
        State size.
    actuated : (n/2, s) array, optional
        S mapping the controls to the coordinates' forces, as a model's
        actuation (identity when None).
    
    Returns
    -------
    (s, n) ndarray
        The gain K.
    """
def run_plant_servo(plant: Plant, q_ref: numpy.ndarray[numpy.float64], qd_ref: numpy.ndarray[numpy.float64], kp: numpy.ndarray[numpy.float64], kd: numpy.ndarray[numpy.float64], u_ff: numpy.ndarray[numpy.float64], steps: int, progress: typing.Any = None) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64]]:
    """
    PD servo on a plant with state [q, q'] (s = n / 2), GIL released:
    u_t = u_ff + kp * (q_ref - q_t) + kd * (qd_ref - q'_t) for t < steps, after
    the plant's events of step t. q_ref, qd_ref, kp, kd, u_ff (s,). Returns
    (states (steps+1, n), controls (steps, s)).
    """
def set_max_threads(threads: int) -> None:
    """
    Sets the thread count of the parallel precomputations.
    """
def simulate(model: Model, z0: numpy.ndarray[numpy.float64], steps: int, dt: typing.SupportsFloat | typing.SupportsIndex, controller: Tracker = None, t0: typing.SupportsFloat | typing.SupportsIndex = 0.0, disturbance: numpy.ndarray[numpy.float64] | None = None, open_loop: numpy.ndarray[numpy.float64] | None = None, kicks: numpy.ndarray[numpy.float64] | None = None, jump_steps: numpy.typing.ArrayLike | None = None, start_index: int | None = 0, progress: typing.Any = None) -> SimulationResult:
    """
    Runs steps steps of model + controller in C++ (GIL released).
    
    z0 (n,); disturbance (N, s) forces added to w; open_loop (N, s) control used
    when controller is None; kicks (N, n) added to the state before each step;
    jump_steps: steps at which the controller jumps to the closest reference
    state; start_index: the controller's first reference step (None: the
    Tracker's index). The run keeps its own controller state, so one Tracker may
    serve several runs at once; afterwards the Tracker's index is where the run
    ended. Returns a SimulationResult.
    """
def solve_continuous(A: numpy.ndarray[numpy.float64], B: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex, Q: numpy.ndarray[numpy.float64], R: numpy.ndarray[numpy.float64], Q_final: typing.Any, method: DiscretizeMethod = ..., horizon: int | None = None, intervals: int = 10, threads: int = 0, progress: typing.Any = None, allow_indefinite_Q: bool = False) -> tuple[Discretization, LQRSolution]:
    """
    discretize() and the Riccati sweep for Q_final (n, n) as one pipeline:
    steps are discretized from the last one down while the calling thread sweeps
    each one as soon as it is ready. Returns (Discretization, LQRSolution), the
    same results as the two calls, on `threads` cores (0: all; 1: the calling
    thread only, the sweep too). GIL released, progress(done, 2T) throttled.
    """
def solve_discrete(A: numpy.ndarray[numpy.float64], B: numpy.ndarray[numpy.float64], Q: numpy.ndarray[numpy.float64], R: numpy.ndarray[numpy.float64], Q_final: typing.Any, N: numpy.ndarray[numpy.float64] | None = None, horizon: int | None = None, progress: typing.Any = None, allow_indefinite_Q: bool = False) -> LQRSolution:
    """
    Riccati backward sweep of the discrete LTV LQR problem (GIL released).
    
    A (T, n, n), B (T, n, s), Q (T, n, n), R (T, s, s), N (T, n, s): per step, or
    one matrix constant in time; Q_final (n, n) or "dare" (the stationary solution
    of the last step's problem). Q and Q_final symmetric positive semidefinite
    (symmetric only with allow_indefinite_Q), R symmetric positive semidefinite.
    progress(done, total) is called at most every 50 ms. Returns an LQRSolution.
    """
def solve_stationary(A: numpy.ndarray[numpy.float64], B: numpy.ndarray[numpy.float64], Q: numpy.ndarray[numpy.float64], R: numpy.ndarray[numpy.float64], N: numpy.ndarray[numpy.float64] | None = None, progress: typing.Any = None, allow_indefinite_Q: bool = False) -> StationaryLQR:
    """
    Stabilizing solution of the DARE P = Q + A'PA - G'(R + B'PB)^-1 G,
    G = B'PA + N', by structure-preserving doubling with Newton refinement (GIL
    released). A (n, n), B (n, s), Q (n, n) symmetric positive semidefinite
    (symmetric only with allow_indefinite_Q), R (s, s) symmetric
    positive semidefinite, N (n, s) or None. progress(done, total) is called at
    most every 50 ms (a doubling or Newton step done; total: the most there can
    be). Returns a StationaryLQR.
    """
def spd_step(M: numpy.ndarray[numpy.float64], C: numpy.ndarray[numpy.float64], q: numpy.ndarray[numpy.float64], qd: numpy.ndarray[numpy.float64], q_ref_next: numpy.ndarray[numpy.float64], qd_ref_next: numpy.ndarray[numpy.float64], kp: numpy.ndarray[numpy.float64], kd: numpy.ndarray[numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64]]:
    """
    One SPD evaluation (eq. 5/11) from given M (n, n) and C (n,): returns (tau,
    qdd), each (n,). q, qd, q_ref_next, qd_ref_next, kp, kd (n,). For models of
    another engine: apply tau there and step it.
    """
def synthetic_clips(skeleton: CharacterSkeleton, gaits: collections.abc.Sequence[str], turns: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], torsos: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], spins: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], sidesteps: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], counts: collections.abc.Sequence[int], seed: typing.SupportsInt | typing.SupportsIndex, dt: typing.SupportsFloat | typing.SupportsIndex) -> CharacterClipSet:
    ...
def synthetic_walker() -> CharacterSkeleton:
    ...
def track(model: Articulated, q0: numpy.ndarray[numpy.float64], qd0: numpy.ndarray[numpy.float64], q_ref: numpy.ndarray[numpy.float64], qd_ref: numpy.ndarray[numpy.float64] | None = None, kp: numpy.ndarray[numpy.float64] | None = None, kd: numpy.ndarray[numpy.float64] | None = None, dt: typing.SupportsFloat | typing.SupportsIndex = 0.0, servo: Servo = ..., integrator: Integrator = ..., tau_ff: numpy.ndarray[numpy.float64] | None = None, tau_ext: numpy.ndarray[numpy.float64] | None = None, tau_min: numpy.ndarray[numpy.float64] | None = None, tau_max: numpy.ndarray[numpy.float64] | None = None, max_state: typing.SupportsFloat | typing.SupportsIndex = 1000000.0, progress: typing.Any = None) -> TrackResult:
    """
    Tracking loop in C++ (GIL released): T steps of a PD/SPD servo + integrator.
    
    q0, qd0 (n,); q_ref (T+1, n); qd_ref (T+1, n) or None (zero reference
    velocity); kp, kd (n,) or (T, n); tau_ff, tau_ext (T, n) feed-forward and
    external torques; tau_min, tau_max (n,) torque limits. Divergence (a
    non-finite state or |q|, |qd| > max_state) stops the run and is reported in
    the TrackResult (q, qd (T+1, n), tau (T, n), diverged, diverged_at).
    """
def value_iteration(problem: DecisionProblem, grid: GridValue, alpha: typing.SupportsFloat | typing.SupportsIndex, tol: typing.SupportsFloat | typing.SupportsIndex, max_sweeps: int, threads: int = 0, progress: typing.Any = None) -> dict:
    ...
