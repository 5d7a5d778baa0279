"""The MPC/SPH paper's experiment (issue 6, sec. 3): a fluid shape held
against gravity, hit by a fast sphere, restored by the controller.

Each frame (``substeps`` simulation steps, control held) the controller
computes per-particle forces:

- ``"none"``: no force;
- ``"pd"``: per-particle PD with gravity compensation, ``m (kp (r - x) - kd v + g)``;
- ``"mpc"``: the horizon optimizer over the simplified prediction model
  (pressure and gravity only, neighbour sets frozen at the frame's actual
  state, one prediction step per frame), ``horizon`` frames, restarted every
  frame from the actual fluid state (the mismatch with the full model --
  viscosity, new neighbours, the sphere -- is corrected by the restart).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from . import mpc, sph


def fin_shape(spacing=0.02, centre=(0.5, 0.4), width=0.4, height=0.2) -> np.ndarray:
    """Reference particles sampled from a polygon: a block with a triangular
    fin on top (a crude shark's back), (N, 2)."""
    cx, cy = centre
    pts = sph.block((cx - width / 2, cy - height / 2), (cx + width / 2, cy + height / 2 + 0.1), spacing)
    top = cy + height / 2 - abs(pts[:, 0] - cx) / (width / 2) * height / 2 + 0.1 * (abs(pts[:, 0] - cx) < width / 4)
    return pts[pts[:, 1] < np.minimum(top, cy + height / 2)]


@dataclass(frozen=True)
class ShapeRun:
    """``error`` (frames,): mean particle distance to the reference after each
    frame; ``energy``: sum over frames of |F|^2 * frame time; ``positions``
    (frames+1, N, 2); ``forces`` (frames, N, 2); ``seconds`` per frame (frames,)."""

    error: np.ndarray
    energy: float
    positions: np.ndarray
    forces: np.ndarray
    seconds: np.ndarray


def shape_experiment(controller="mpc", horizon=5, frames=100, substeps=10, impact=20, spacing=0.02,
                     sphere_speed=6.0, q=1e4, r=1e-8, iterations=30, kp=400.0, kd=40.0, viscosity=0.2,
                     reference=None) -> ShapeRun:
    """Runs the experiment; see the module docstring. ``q``: position weight
    (Q and C, per particle), ``r``: force weight (R); C also weighs velocities
    by ``0.01 q`` so the shape arrives at rest."""
    if controller not in ("none", "pd", "mpc"):
        raise ValueError(f"controller must be 'none', 'pd' or 'mpc', got {controller!r}")
    ref = fin_shape(spacing) if reference is None else np.asarray(reference, float)
    N = len(ref)
    fluid = sph.SPHFluid2D(ref, np.zeros((0, 2)), spacing=spacing, h=1.3 * spacing, viscosity=viscosity)
    m, dt = fluid.mass, fluid.dt
    g = np.array([0.0, 9.81])
    x_ref = np.concatenate([ref.ravel(), np.zeros(2 * N)])
    Q = np.r_[q * np.ones(2 * N), np.zeros(2 * N)]
    C = np.r_[q * np.ones(2 * N), 0.01 * q * np.ones(2 * N)]
    hover = np.tile(np.tile(m * g, N), (horizon, 1))
    err, secs, pos, forces, energy = [], [], [fluid.positions], [], 0.0
    for f in range(frames):
        if f == impact:
            fluid.set_sphere([0.05, ref[:, 1].mean()], 0.06, [sphere_speed, 0.0])
        t0 = time.perf_counter()
        if controller == "none":
            F = np.zeros((N, 2))
        elif controller == "pd":
            F = m * (kp * (ref - fluid.positions) - kd * fluid.velocities + g)
        else:
            pred = fluid.prediction_model(dt=substeps * dt)
            opt = mpc.HorizonOptimizer(pred, horizon, Q, r, C, iterations=iterations)
            F = opt.solve(sph.state(fluid), np.tile(x_ref, (horizon + 1, 1)), u0=hover).u[0].reshape(N, 2)
        fluid.step(F, steps=substeps)
        secs.append(time.perf_counter() - t0)
        energy += float((F**2).sum()) * substeps * dt
        pos.append(fluid.positions)
        forces.append(F)
        err.append(np.linalg.norm(fluid.positions - ref, axis=1).mean())
    return ShapeRun(np.array(err), energy, np.array(pos), np.array(forces), np.array(secs))




def prediction_error(horizon=10, substeps=10, spacing=0.02, settle_frames=10, viscosity=0.2):
    """How the simplified prediction model drifts from the full simulation:
    a collapsing column (dam break, after `settle_frames` frames) is frozen
    into a prediction model (one step per frame of `substeps` simulation
    steps) and both are run `horizon` frames without control. Returns (horizon,)
    mean particle distances between prediction and simulation after 1..horizon frames."""
    pts = sph.block((0.0, 0.0), (0.3, 0.4), spacing)
    fluid = sph.SPHFluid2D(pts, sph.box_walls((0, 0), (1, 1), spacing), spacing=spacing, h=1.3 * spacing,
                           viscosity=viscosity)
    fluid.step(steps=settle_frames * substeps)
    N = fluid.size
    pred = fluid.prediction_model(dt=substeps * fluid.dt)
    x, u, err = sph.state(fluid), np.zeros(2 * N), []
    for _ in range(horizon):
        x = pred.step(x, u)
        fluid.step(steps=substeps)
        err.append(np.linalg.norm(x[:2 * N].reshape(N, 2) - fluid.positions, axis=1).mean())
    return np.array(err)


__all__ = ["fin_shape", "shape_experiment", "ShapeRun", "prediction_error"]
