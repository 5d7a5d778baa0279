"""The MPC/SPH paper's experiment: a fluid shape held
against gravity, hit by a fast sphere, restored by the controller.

Each frame (``substeps`` simulation steps, control held) the controller
computes per-particle forces:

- ``"none"``: no force;
- ``"pd"``: per-particle PD with gravity compensation, ``m (kp (r - x) - kd v + g)``;
- ``"mpc"``: the horizon optimizer over the simplified prediction model
  (pressure and gravity only, neighbour sets refrozen at every frame's
  actual state), ``horizon`` frames, restarted every frame from the actual
  fluid state and warm-started from the previous frame's plan (the mismatch
  with the full model -- viscosity, new neighbours, the sphere -- is
  corrected by the restart). The whole run is one C++ call
  (:meth:`directable.mpc.HorizonOptimizer.run` on a :class:`directable.mpc.SPHPlant2D`).

Two choices make every horizon H in {1, 3, 5, 10} restore the shape (measured
in ``tests/test_experiments_sph_shape.py`` and notebook 05):

- The prediction integrates each frame in ``prediction_substeps`` steps
  (:func:`directable.mpc.Substeps`), the control held. One explicit step per
  frame (5 ms) puts the pressure waves at a CFL number of 3.8 (c0 dt / h):
  just after the impact a small perturbation grows 1.6e5-fold over 3
  predicted frames (190-fold substepped); on a collapsing column
  (:func:`prediction_error`) the one-step prediction is 18 cm off after 5
  frames and 1.5 m after 10, the substepped one 1.2 mm after 10. Planning
  against a model that explodes, H = 10 did not restore within 100 frames.
- The substeps follow the spacing: the explicit step is stable while the
  sound crosses less than about two smoothing lengths per step
  (``c0 dt / h <= PREDICTION_CFL``), and ``h`` shrinks with the spacing while
  the frame does not. ``prediction_substeps="auto"``
  (:func:`stable_prediction_substeps`) takes the fewest that keep it: 2 at
  0.02 m, 5 at :data:`PAPER_SPACING` (0.0089 m). A fixed 2 there is at
  ``c0 dt / h = 4.3``: shortly after the impact the prediction of the shark
  is 0.24 m off after 2 frames and 1 m after 5 (5 substeps: 0.4 mm and
  1.5 mm), the optimizer plans against noise and the MPC let the shark drift
  away (24 mm after 9 frames, about 4 mm more per frame).
- The terminal cost C weighs velocities by ``velocity_weight * q * dt_frame^2``:
  a velocity times the frame time is a displacement, so the weight is on the
  position scale. An unscaled ``0.01 q`` made the velocity term 400 times the
  position term at H = 1: the one-frame plan moved each particle 0.25 % of the
  way back per frame and H = 1 stayed 5 cm off. Scaled, H = 1 is a
  well-damped deadbeat-like controller.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .. import mpc, sph


def fin_shape(spacing=0.02, centre=(0.5, 0.4), width=0.4, height=0.2) -> np.ndarray:
    """Reference particles sampled from a polygon: a block with a triangular fin on top (a crude shark's back).

    Parameters
    ----------
    spacing : float, optional
        Particle spacing (m).
    centre : (2,) sequence, optional
        Centre of the block (m).
    width, height : float, optional
        Size of the block (m).

    Returns
    -------
    (N, 2) ndarray
        Positions (m).
    """
    cx, cy = centre
    pts = sph.block((cx - width / 2, cy - height / 2), (cx + width / 2, cy + height / 2 + 0.1), spacing)
    top = cy + height / 2 - abs(pts[:, 0] - cx) / (width / 2) * height / 2 + 0.1 * (abs(pts[:, 0] - cx) < width / 4)
    return pts[pts[:, 1] < np.minimum(top, cy + height / 2)]


# Spacing at which :func:`shark_shape` has the MPC paper's ~28,000 particles.
PAPER_SPACING = 0.0089
# Speed of sound of the experiment's fluid (m/s) and smoothing length per spacing.
SOUND_SPEED = 20.0
H_PER_SPACING = 1.3
# Largest c0 dt / h of a prediction step that "auto" substeps allow: at 1.7-1.9
# the shark's 5-frame prediction after the impact stays within 2 mm of the
# full simulation (as close as at 0.4-0.9), at 2.6-4.3 it drifts 15 mm to 1 m.
PREDICTION_CFL = 2.0


def stable_prediction_substeps(spacing, frame_time, c0=SOUND_SPEED, cfl=PREDICTION_CFL) -> int:
    """The fewest prediction steps per frame that keep the explicit prediction stable.

    The prediction model's pressure waves limit its step as the fluid's own:
    ``c0 * (frame_time / k) / h <= cfl`` with ``h = H_PER_SPACING * spacing``.

    Parameters
    ----------
    spacing : float
        Particle spacing (m), > 0.
    frame_time : float
        Time of one frame (s), > 0.
    c0 : float, optional
        Speed of sound of the fluid (m/s).
    cfl : float, optional
        Largest ``c0 dt / h`` of one prediction step.

    Returns
    -------
    int
        Substeps per frame k >= 1.
    """
    for name, v in (("spacing", spacing), ("frame_time", frame_time), ("c0", c0), ("cfl", cfl)):
        if v is None or not np.isfinite(float(v)) or float(v) <= 0:
            raise ValueError(f"{name} must be a positive finite number, got {v!r}")
    ratio = float(c0) * float(frame_time) / (float(cfl) * H_PER_SPACING * float(spacing))
    return max(1, int(np.ceil(ratio * (1.0 - 1e-12))))


def shark_shape(spacing=0.04, centre=(0.55, 0.5, 0.45), length=0.6, radius=0.12) -> np.ndarray:
    """Reference particles of a 3D shark: an ellipsoid body with a dorsal fin and a tail fin.

    The MPC paper's shark has ~28,000 particles: ``spacing=PAPER_SPACING``
    gives that many (the count grows as ``spacing**-3``; the default 0.04 m
    gives a few hundred, for tests).

    Parameters
    ----------
    spacing : float, optional
        Particle spacing (m).
    centre : (3,) sequence, optional
        Centre of the body (m).
    length : float, optional
        Body length along x (m).
    radius : float, optional
        Body semi-axis in y and z (m).

    Returns
    -------
    (N, 3) ndarray
        Positions (m), on a cubic lattice of the given spacing.
    """
    c = np.asarray(centre, float)
    a = length / 2
    fin_h, tail = 0.9 * radius, 0.3 * length
    lo = c - [a + tail, radius, radius]
    hi = c + [a, radius, radius + fin_h]
    pts = sph.block(lo, hi, spacing)
    d = (pts - c) / [a, radius, radius]
    body = (d**2).sum(axis=1) <= 1.0
    x, y, z = (pts - c).T
    thin = np.abs(y) <= max(1.01 * spacing, 0.15 * radius)
    # dorsal fin: a triangle over the body's middle, leaning back
    fin = thin & (z > 0) & (z <= radius + fin_h * (1 - np.abs(x + 0.1 * a) / (0.4 * a))) & (np.abs(x + 0.1 * a) < 0.4 * a)
    # tail fin: a vertical fork behind the body
    behind = -(x + a)
    tailfin = thin & (behind >= -0.2 * a) & (behind <= tail) & (np.abs(z) <= 0.25 * radius + 0.6 * np.maximum(behind, 0))
    return pts[body | fin | tailfin]


@dataclass(frozen=True)
class ShapeRun:
    """One run of :func:`shape_experiment`.

    Parameters
    ----------
    error : (frames,) ndarray
        Mean particle distance to the reference after each frame (m).
    energy : float
        Sum over frames of |F|^2 times the frame time (N^2 s).
    positions : (frames+1, N, D) ndarray
        Particle positions (m).
    forces : (frames, N, D) ndarray
        Control forces (N).
    seconds : (frames,) ndarray
        The controller's time per frame (MPC: the window's solve; PD and none:
        the run's wall time per frame, fluid included, since the law itself
        costs nanoseconds).
    prediction_substeps : int
        MPC: the prediction steps per frame it ran with (0 for PD and none).
    """

    error: np.ndarray
    energy: float
    positions: np.ndarray
    forces: np.ndarray
    seconds: np.ndarray
    prediction_substeps: int = 0


def shape_experiment(controller="mpc", horizon=5, frames=100, substeps=10, impact=20, spacing=0.02,
                     sphere_speed=6.0, q=1e4, r=1e-8, iterations=30, kp=400.0, kd=40.0, viscosity=0.2,
                     reference=None, velocity_weight=1.0, prediction_substeps=None, prediction_sound_speed=None,
                     progress=None) -> ShapeRun:
    """Runs the experiment (see the module docstring).

    Parameters
    ----------
    controller : {"mpc", "pd", "none"}, optional
        Who holds the shape.
    horizon : int, optional
        MPC window H (frames).
    frames : int, optional
        Length of the run.
    substeps : int, optional
        Simulation steps per frame.
    impact : int, optional
        Frame at which the sphere is launched.
    spacing : float, optional
        Particle spacing (m).
    sphere_speed : float, optional
        Speed of the sphere (m/s).
    q : float, optional
        Position weight (Q and C, per particle); C also weighs velocities by
        ``velocity_weight * q * (substeps dt)^2`` so the shape arrives at rest.
    r : float, optional
        Force weight (R).
    iterations : int, optional
        L-BFGS iterations per window.
    kp, kd : float, optional
        Gains of the per-particle PD controller.
    viscosity : float, optional
        Fluid viscosity.
    reference : (N, 2) or (N, 3) array, optional
        Reference shape (default :func:`fin_shape`); (N, 3) runs the 3D fluid
        (e.g. :func:`shark_shape`, the MPC paper's shark), the sphere then
        crossing the body sideways (+y).
    velocity_weight : float, optional
        Factor of the terminal velocity weight.
    prediction_substeps : int, "auto" or None, optional
        Prediction steps per frame (None: ``substeps``, the simulation's own
        step; ``"auto"``: the fewest that keep the prediction stable at this
        spacing, :func:`stable_prediction_substeps`; 1: the paper's one step
        per frame, unstable for the pressure term).
    prediction_sound_speed : float, optional
        Speed of sound of the prediction model (m/s; None: the fluid's
        :data:`SOUND_SPEED`). A softer prediction (e.g. 8 m/s at
        :data:`PAPER_SPACING`) is stable with fewer substeps (``"auto"``
        follows it): a cheaper, less exact plan, corrected by every frame's
        restart from the actual state.
    progress : None, bool or callable(done, total), optional
        Progress report over the frames (``True``: a tqdm bar).

    Returns
    -------
    ShapeRun
    """
    if controller not in ("none", "pd", "mpc"):
        raise ValueError(f"controller must be 'none', 'pd' or 'mpc', got {controller!r}")
    if float(velocity_weight) < 0:
        raise ValueError(f"velocity_weight must be >= 0, got {velocity_weight!r}")
    ps = substeps if prediction_substeps is None else prediction_substeps
    if isinstance(ps, str) and ps == "auto":
        ps = 0  # (known once the fluid's time step is)
    elif not isinstance(ps, int) or isinstance(ps, bool) or ps < 1:
        raise ValueError(f"prediction_substeps must be None, 'auto' or an int >= 1, got {prediction_substeps!r}")
    ref = fin_shape(spacing) if reference is None else np.asarray(reference, float)
    if ref.ndim != 2 or ref.shape[1] not in (2, 3) or len(ref) == 0:
        raise ValueError(f"reference must have shape (N, 2) or (N, 3), got {ref.shape}")
    N, D = ref.shape
    Fluid, Plant = (sph.SPHFluid2D, mpc.SPHPlant2D) if D == 2 else (sph.SPHFluid3D, mpc.SPHPlant3D)
    fluid = Fluid(ref, np.zeros((0, D)), spacing=spacing, h=H_PER_SPACING * spacing, viscosity=viscosity,
                  c0=SOUND_SPEED)
    m, dt = fluid.mass, fluid.dt
    c0_pred = SOUND_SPEED if prediction_sound_speed is None else float(prediction_sound_speed)
    if not (np.isfinite(c0_pred) and c0_pred > 0):
        raise ValueError(f"prediction_sound_speed must be None or a positive finite speed (m/s), "
                         f"got {prediction_sound_speed!r}")
    if ps == 0:
        ps = stable_prediction_substeps(spacing, substeps * dt, c0=c0_pred)
    g = np.zeros(D)
    g[-1] = 9.81  # gravity acts along -y in 2D, -z in 3D
    x_ref = np.concatenate([ref.ravel(), np.zeros(D * N)])
    Q = np.r_[q * np.ones(D * N), np.zeros(D * N)]
    C = np.r_[q * np.ones(D * N), velocity_weight * q * (substeps * dt) ** 2 * np.ones(D * N)]
    hover = np.tile(np.tile(m * g, N), (horizon, 1))
    if D == 2:  # from the left, through the fin's middle
        launch = ([0.05, ref[:, 1].mean()], 0.06, [sphere_speed, 0.0])
    else:  # from the side, through the shark's body, starting just clear of it
        mid = ref.mean(axis=0)
        launch = ([mid[0], max(0.07, ref[:, 1].min() - 0.09), mid[2]], 0.06, [0.0, sphere_speed, 0.0])
    if controller == "mpc":
        # one closed-loop call: the prediction model refrozen at the fluid's
        # state every frame, the first window started hovering, later ones warm
        # (a softer prediction: the same particles in a fluid of that sound
        # speed; the plant refreezes its neighbour sets from the actual fluid)
        twin = fluid if c0_pred == SOUND_SPEED else Fluid(
            ref, np.zeros((0, D)), spacing=spacing, h=H_PER_SPACING * spacing, viscosity=viscosity, c0=c0_pred)
        model = twin.prediction_model(dt=substeps * dt / ps)
        opt = mpc.HorizonOptimizer(mpc.Substeps(model, ps), horizon, Q, r, C, iterations=iterations)
        plant = Plant(fluid, substeps, prediction=model)
        plant.launch_sphere(impact, *launch)
        run = opt.run(plant, None, np.tile(x_ref, (frames + horizon + 1, 1)), frames, u0=hover, progress=progress)
        pos = run.states[:, :D * N].reshape(frames + 1, N, D)
        forces = run.controls.reshape(frames, N, D)
        secs = run.seconds
    else:
        # the same plant under a per-particle PD servo (zero gains: no
        # control), one closed-loop call as well
        plant = Plant(fluid, substeps)
        plant.launch_sphere(impact, *launch)
        gains = (m * kp, m * kd, np.tile(m * g, N)) if controller == "pd" else (0.0, 0.0, 0.0)
        t0 = time.perf_counter()
        states, controls = mpc.run_servo(plant, ref.ravel(), gains[0], gains[1], frames, u_ff=gains[2],
                                         progress=progress)
        secs = np.full(frames, (time.perf_counter() - t0) / frames)
        pos = states[:, :D * N].reshape(frames + 1, N, D)
        forces = controls.reshape(frames, N, D)
    energy = 0.0
    for F in forces:
        energy += float((F**2).sum()) * substeps * dt
    err = np.linalg.norm(pos[1:] - ref, axis=2).mean(axis=1)
    return ShapeRun(err, energy, pos, forces, secs, ps if controller == "mpc" else 0)




def prediction_error(horizon=10, substeps=10, spacing=0.02, settle_frames=10, viscosity=0.2, prediction_substeps=1):
    """How the simplified prediction model drifts from the full simulation.

    A collapsing column (dam break, after ``settle_frames`` frames) is frozen
    into a prediction model and both are run ``horizon`` frames without control.

    Parameters
    ----------
    horizon : int, optional
        Frames compared.
    substeps : int, optional
        Simulation steps per frame.
    spacing : float, optional
        Particle spacing (m).
    settle_frames : int, optional
        Frames simulated before the prediction starts.
    viscosity : float, optional
        Fluid viscosity.
    prediction_substeps : int or "auto", optional
        Prediction steps per frame (1: one step per frame; ``"auto"``:
        :func:`stable_prediction_substeps`).

    Returns
    -------
    (horizon,) ndarray
        Mean particle distance (m) between prediction and simulation after 1..horizon frames.
    """
    pts = sph.block((0.0, 0.0), (0.3, 0.4), spacing)
    fluid = sph.SPHFluid2D(pts, sph.box_walls((0, 0), (1, 1), spacing), spacing=spacing,
                           h=H_PER_SPACING * spacing, viscosity=viscosity, c0=SOUND_SPEED)
    fluid.step(steps=settle_frames * substeps)
    N = fluid.size
    if isinstance(prediction_substeps, str) and prediction_substeps == "auto":
        prediction_substeps = stable_prediction_substeps(spacing, substeps * fluid.dt)
    pred = mpc.Substeps(fluid.prediction_model(dt=substeps * fluid.dt / prediction_substeps), prediction_substeps)
    x, u, err = sph.state(fluid), np.zeros(2 * N), []
    for _ in range(horizon):
        x = pred.step(x, u)
        fluid.step(steps=substeps)
        err.append(np.linalg.norm(x[:2 * N].reshape(N, 2) - fluid.positions, axis=1).mean())
    return np.array(err)


__all__ = ["fin_shape", "shark_shape", "PAPER_SPACING", "SOUND_SPEED", "H_PER_SPACING", "PREDICTION_CFL",
           "stable_prediction_substeps", "shape_experiment", "ShapeRun", "prediction_error"]
