"""Tan, Liu & Turk (2011) sec. 4.1 in 3D on MuJoCo: a humanoid tracking a
motion while hit by a ball (kick, volleyball, basketball), with the gain
schedule of Zordan & Hodgins (2002) (Table 3) and Stable PD at dt = 1/30 s.

The humanoid (``assets/humanoid.xml``: 74 kg, 30 DOFs, ball joints at the
spine, neck, shoulders and hips) has its root anchored by an SPD servo with
large gains, as in the paper. No motion capture is shipped: each motion is a
set of keyframes (``KEYFRAMES``, joint name -> hinge angle or ball-joint
rotation vector, rad) blended with ``chain.crossfade`` into a smooth
reference; the servos add the reference's inverse-dynamics torque as a
feed-forward term. Gains: ``kp_j = k(t) m_sup_j / m_total`` (``m_sup_j`` the
mass the DOF supports) with ``k(t)`` Table 3's schedule (``k_t`` while
tracking, ``k_r`` for ``t_e`` s after the ball's first contact, a linear
recovery over ``t_f``), ``kd = ratio kp dt``. The balls float
(``gravcomp``) so that their aim does not depend on the flight time.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from importlib.resources import files

import numpy as np

from .. import chain
from .. import mujoco as dm
from .._validate import real

DT = 1.0 / 30.0
ROOT_GAIN = 1e4  #: root anchor: kp = ROOT_GAIN * m_total (N/m, N m/rad)
ELBOW_LIMIT_KP = 1e3  #: SPD joint-limit servo of the elbows (paper, volleyball)
ELBOW_RANGE = (0.0, 2.6)  #: elbow flexion range (rad)

#: Table 3 of Tan et al.: k_t, k_r, kd / (kp dt), t_e (s), t_f (s)
TABLE3 = {
    "soccer_light": (25000.0, 5.0, 8.0, 0.1, 0.5),
    "soccer_heavy": (25000.0, 5.0, 96.0, 0.1, 0.5),
    "volleyball_slow": (25000.0, 5.0, 8.0, 0.1, 0.5),
    "volleyball_fast": (25000.0, 5.0, 16.0, 0.1, 0.5),
    "basketball_slow": (25000.0, 5.0, 16.0, 0.6, 50.0),
    "basketball_fast": (25000.0, 1.0, 16.0, 0.6, 50.0),
}

#: keyframes per motion: (time s, {joint: angle or rotation vector}); joints not named stay at 0
KEYFRAMES = {
    "kick": [
        (0.0, {}),
        (0.5, {"hip_r": [0, 0.6, 0], "knee_r": 1.4, "shoulder_l": [0, -0.5, 0], "shoulder_r": [0, 0.4, 0]}),
        (1.0, {"hip_r": [0, -1.1, 0], "knee_r": 0.1, "ankle_r": -0.3, "shoulder_l": [0, 0.4, 0],
               "shoulder_r": [0, -0.3, 0]}),
        (1.5, {"hip_r": [0, -0.3, 0], "knee_r": 0.3}),
        (2.2, {}),
    ],
    "volleyball": [
        (0.0, {}),
        (0.5, {"shoulder_r": [0.25, -0.9, 0], "shoulder_l": [-0.25, -0.9, 0], "spine": [0, 0.15, 0],
               "elbow_r": 0.05, "elbow_l": 0.05}),
        (1.3, {"shoulder_r": [0.25, -1.0, 0], "shoulder_l": [-0.25, -1.0, 0], "spine": [0, 0.15, 0],
               "elbow_r": 0.05, "elbow_l": 0.05}),
        (2.0, {}),
    ],
    "basketball": [
        (0.0, {}),
        (0.5, {"shoulder_r": [0.2, -1.2, 0], "shoulder_l": [-0.2, -1.2, 0], "elbow_r": 0.8, "elbow_l": 0.8}),
        (1.5, {"shoulder_r": [0.2, -1.2, 0], "shoulder_l": [-0.2, -1.2, 0], "elbow_r": 0.8, "elbow_l": 0.8}),
        (2.2, {"shoulder_r": [0.2, -0.6, 0], "shoulder_l": [-0.2, -0.6, 0], "elbow_r": 1.2, "elbow_l": 1.2}),
    ],
}

#: per scene: motion, Table 3 row, hit limb (body), ball (mass kg, radius m, speed m/s,
#: direction of flight, contact time s), seconds simulated after the last keyframe
SCENES = {
    "kick": dict(motion="kick", table="soccer_heavy", limb="foot_r", ball=(5.0, 0.11, 0.0, None, 0.8),
                 limits=False),
    "volleyball": dict(motion="volleyball", table="volleyball_fast", limb="forearm_r",
                       ball=(0.27, 0.105, 9.0, (-0.45, 0.0, -0.9), 0.9), limits=True),
    "basketball": dict(motion="basketball", table="basketball_fast", limb="forearm_r",
                       ball=(0.62, 0.12, 8.0, (-1.0, 0.0, 0.0), 0.9), limits=False),
}


def humanoid_xml() -> str:
    """The humanoid's MJCF text (``assets/humanoid.xml`` in the package).

    Returns
    -------
    str
        The MJCF document: 74 kg, a free root joint and 30 DOFs (lengths m,
        masses kg).
    """
    return (files(__package__) / "assets" / "humanoid.xml").read_text()


def humanoid(ball=None):
    """The humanoid as a MuJoCo model, optionally with a ball.

    Parameters
    ----------
    ball : (float, float), optional
        ``(mass kg, radius m)``: adds a floating (``gravcomp``) body "ball"
        with a free joint after the humanoid's DOFs, which collides with the
        body parts. None: the humanoid alone.

    Returns
    -------
    mujoco.MjModel
    """
    mujoco = dm._mj
    xml = humanoid_xml()
    if ball is not None:
        mass, radius = ball
        body = (f'<body name="ball" pos="3 0 1" gravcomp="1"><freejoint name="ball"/>'
                f'<geom name="ball" type="sphere" size="{radius}" mass="{mass}" contype="2" conaffinity="1" '
                f'condim="3" rgba="0.9 0.4 0.1 1"/></body>\n  </worldbody>')
        xml = xml.replace("</worldbody>", body, 1)
    return mujoco.MjModel.from_xml_string(xml)


def joint_dofs(model, name) -> np.ndarray:
    """Indices of joint ``name``'s DOFs in ``qvel``.

    Parameters
    ----------
    model : mujoco.MjModel
        The model holding the joint.
    name : str
        The joint's name.

    Returns
    -------
    (d,) ndarray of int
        Indices into the nv DOFs: 6 for a free joint, 3 for a ball joint, 1
        for a hinge or slide.
    """
    j = model.joint(name)
    n = {0: 6, 1: 3}.get(int(j.type[0]), 1)
    return np.arange(int(j.dofadr[0]), int(j.dofadr[0]) + n)


def keyframe_reference(model, motion, dt=DT, hold=0.0, power=2):
    """A smooth reference motion from the keyframes of ``KEYFRAMES[motion]``.

    The keyframes' tangent vectors are blended by ``chain.crossfade``
    (ease-in / ease-out between keyframes); DOFs of bodies other than the
    humanoid (a ball) stay at ``qpos0``.

    Parameters
    ----------
    model : mujoco.MjModel
        The humanoid (with or without a ball).
    motion : str
        A key of ``KEYFRAMES`` ("kick", "volleyball", "basketball").
    dt : float
        Sampling step (s).
    hold : float
        Seconds the last keyframe is held at the end.
    power : float
        Exponent of the crossfade's easing.

    Returns
    -------
    (T+1, nq) ndarray
        Reference ``qpos``; ``T`` is the last keyframe's time (plus ``hold``)
        over ``dt``.
    """
    if motion not in KEYFRAMES:
        raise ValueError(f"motion must be one of {sorted(KEYFRAMES)}, got {motion!r}")
    keys = KEYFRAMES[motion]
    times = np.array([k[0] for k in keys] + ([keys[-1][0] + hold] if hold > 0 else []))
    poses = [k[1] for k in keys] + ([keys[-1][1]] if hold > 0 else [])
    key_steps = np.round(times / dt).astype(int)
    key_q = np.zeros((len(poses), model.nv))
    for i, pose in enumerate(poses):
        for name, value in pose.items():
            key_q[i, joint_dofs(model, name)] = value
    steps = int(key_steps[-1])
    dq, _ = chain.crossfade(key_steps, key_q, 1.0, steps, power=power, floor=0.0)
    x = np.zeros((steps + 1, dm.nx(model)))
    x[:, :model.nv] = dq
    return dm.qpos_of(model, x)


@dataclass
class SceneRun:
    """One run of a ball scene (``run_scene``).

    Parameters
    ----------
    name : str
        The scene ("kick", "volleyball", "basketball").
    controller : str
        "spd" or "pd".
    dt : float
        Time step (s).
    qpos : (T+1, nq) ndarray
        Positions of the run (humanoid and ball); NaN after a divergence.
    qpos_ref : (T+1, nq) ndarray
        The reference positions.
    error : (T+1,) ndarray
        Largest joint error per step (rad), the root excluded.
    limb_speed : (T+1,) ndarray
        Speed of the hit limb with the ball (m/s).
    limb_speed_free : (T+1,) ndarray
        Speed of the hit limb in a run without the ball (m/s).
    elbow : (T+1, 2) ndarray
        Right and left elbow angles (rad).
    gain : (T,) ndarray
        The schedule's k(t) (Table 3).
    contact_step : int
        The ball's first contact, -1 if none.
    diverged_at : int
        The first bad step, -1 if none.
    table : tuple
        The Table 3 row used: ``(k_t, k_r, kd / (kp dt), t_e, t_f)``.
    """
    name: str
    controller: str
    dt: float
    qpos: np.ndarray
    qpos_ref: np.ndarray
    error: np.ndarray
    limb_speed: np.ndarray
    limb_speed_free: np.ndarray
    elbow: np.ndarray
    gain: np.ndarray
    contact_step: int
    diverged_at: int
    table: tuple

    @property
    def diverged(self):
        """Whether the run diverged (``diverged_at >= 0``)."""
        return self.diverged_at >= 0


class _ReactiveServo(dm.SPDTracker):
    """SPD/PD servos with the Zordan-Hodgins schedule started by the ball's first contact and,
    optionally, SPD joint-limit servos at the elbows."""

    def __init__(self, model, qpos_ref, qvel_ref, tau_ff, scale, root_kp, table, controller, limits):
        k_t, self.k_r, ratio, self.t_e, self.t_f = table
        self.k_t, self.ratio = k_t, ratio
        self.scale, self.root_kp = scale, root_kp
        dt = model.opt.timestep
        kp = k_t * scale + root_kp
        # "solve" steps with mj_step1 / mj_step2: the contacts seen by control() are the current ones
        super().__init__(model, qpos_ref, qvel_ref, kp, ratio * kp * dt, actuated=None, controller=controller,
                         tau_ff=tau_ff, method="solve")
        self.gain = np.full(self.steps, k_t)
        self.contact_step = -1
        self.ball_geom = model.geom("ball").id if "ball" in [model.geom(i).name for i in range(model.ngeom)] else -1
        self.limits = limits
        self.elbows = [(int(model.joint(n).dofadr[0]), int(model.joint(n).qposadr[0])) for n in ("elbow_r", "elbow_l")]
        self._q_ref = np.zeros(model.nq)

    def reset(self):
        self.gain[:] = self.k_t
        self.contact_step = -1

    def control(self, i, data):
        if self.contact_step < 0 and self.ball_geom >= 0 and data.ncon:
            if np.any(data.contact.geom[:data.ncon] == self.ball_geom):
                self.contact_step = i
                self.gain = dm.zordan_hodgins_schedule(self.steps, self.model.opt.timestep, [i], self.k_t,
                                                       self.k_r, self.t_e, self.t_f)
        dt = self.model.opt.timestep
        kp = self.gain[i] * self.scale + self.root_kp
        self._q_ref[:] = self.qpos_ref[i + 1]
        if self.limits:  # an SPD servo to the limit joins a DOF predicted beyond it
            for dof, adr in self.elbows:
                pred = data.qpos[adr] + dt * data.qvel[dof]
                bound = min(max(pred, ELBOW_RANGE[0]), ELBOW_RANGE[1])
                if bound != pred:
                    k = kp[dof]
                    kp[dof] = k + ELBOW_LIMIT_KP
                    self._q_ref[adr] = (k * self._q_ref[adr] + ELBOW_LIMIT_KP * bound) / kp[dof]
        return self._torque(i, data, kp, self.ratio * kp * dt, self._q_ref)


def _limb_speed(model, qpos, body):
    d = dm._mj.MjData(model)
    b = model.body(body).id
    pos = np.full((qpos.shape[0], 3), np.nan)
    for i, q in enumerate(qpos):
        if np.all(np.isfinite(q)):
            d.qpos[:] = q
            dm._mj.mj_kinematics(model, d)
            pos[i] = d.xipos[b]
    v = np.gradient(pos, model.opt.timestep, axis=0)
    return np.linalg.norm(v, axis=1), pos


def scene_setup(name, dt=DT, seconds_after=1.0):
    """Everything a ball scene needs before it runs.

    Parameters
    ----------
    name : str
        A key of ``SCENES`` ("kick", "volleyball", "basketball").
    dt : float
        Time step (s), > 0.
    seconds_after : float
        Seconds simulated after the last keyframe.

    Returns
    -------
    model : mujoco.MjModel
        Humanoid and ball, ``opt.timestep = dt``.
    qpos_ref : (T+1, nq) ndarray
        Reference positions (the ball's rows at its start).
    qvel_ref : (T+1, nv) ndarray
        Reference velocities (rad/s, m/s).
    tau_ff : (T, nv) ndarray
        Inverse-dynamics feed-forward torques of the reference (N m, N).
    ball_qpos : (7,) ndarray
        The ball's initial position (m) and quaternion.
    ball_qvel : (6,) ndarray
        The ball's initial linear (m/s) and angular (rad/s) velocity.
    """
    if name not in SCENES:
        raise ValueError(f"name must be one of {sorted(SCENES)}, got {name!r}")
    dt = real(dt, "dt")
    if not dt > 0:
        raise ValueError(f"dt must be > 0, got {dt}")
    sc = SCENES[name]
    mass, radius, speed, direction, t_hit = sc["ball"]
    body_model = humanoid()
    body_model.opt.timestep = dt
    hold = seconds_after + (TABLE3[sc["table"]][3] + TABLE3[sc["table"]][4] if name == "basketball" else 0.0)
    q_body = keyframe_reference(body_model, sc["motion"], dt, hold=hold)
    v_body, a_body = dm.reference_velocities(body_model, q_body, dt)
    tau_body = dm.inverse_dynamics(body_model, q_body[:-1], v_body[:-1], a_body[:-1])
    # the hit limb's reference path: where the ball meets it
    speed_ref, pos_ref = _limb_speed(body_model, q_body, sc["limb"])
    k = int(round(t_hit / dt))
    geom = body_model.geom(sc["limb"])
    if direction is None:  # a ball at rest in the limb's path, just touching it at step k
        vel = (pos_ref[k + 1] - pos_ref[k - 1]) / (2 * dt)
        u = vel / np.linalg.norm(vel)
        reach = radius + float(np.max(geom.size)) + 0.02
        centre = pos_ref[k] + u * reach * 0.8
        ball_vel = np.zeros(3)
    else:  # a ball flying along direction at speed, meeting the limb's centre at step k
        u = np.asarray(direction, float) / np.linalg.norm(direction)
        centre = pos_ref[k] - u * (speed * t_hit)  # starts t_hit s before contact
        centre = centre - u * (radius + float(geom.size[0]))  # surfaces touch at t_hit
        ball_vel = u * speed
    model = humanoid((mass, radius))
    model.opt.timestep = dt
    ball_q = np.r_[centre, 1.0, 0, 0, 0]
    qpos_ref = np.concatenate([q_body, np.tile(ball_q, (q_body.shape[0], 1))], axis=1)
    qvel_ref = np.concatenate([v_body, np.zeros((q_body.shape[0], 6))], axis=1)
    tau_ff = np.concatenate([tau_body, np.zeros((tau_body.shape[0], 6))], axis=1)
    return model, qpos_ref, qvel_ref, tau_ff, ball_q, np.r_[ball_vel, 0, 0, 0]


def run_scene(name, controller="spd", dt=DT, ball=True, seconds_after=1.0, gain_scale=1.0, table=None):
    """Simulate a ball scene with reactive servos (Table 3's gain schedule).

    Parameters
    ----------
    name : str
        "kick", "volleyball" or "basketball".
    controller : {"spd", "pd"}
        Stable PD (eq. 11) or explicit PD servos.
    dt : float
        Time step (s), > 0.
    ball : bool
        False runs the motion without the ball (the ball is moved away).
    seconds_after : float
        Seconds simulated after the last keyframe.
    gain_scale : float
        Factor on every gain (root anchor included).
    table : str, optional
        Another row of ``TABLE3`` than the scene's own.

    Returns
    -------
    SceneRun
        The run; with ``ball`` its ``limb_speed_free`` comes from a second
        run without the ball.
    """
    mujoco = dm._mj
    model, qpos_ref, qvel_ref, tau_ff, ball_q, ball_v = scene_setup(name, dt, seconds_after)
    sc = SCENES[name]
    if controller not in ("spd", "pd"):
        raise ValueError(f"controller must be 'spd' or 'pd', got {controller!r}")
    if table is not None and table not in TABLE3:
        raise ValueError(f"table must be one of {sorted(TABLE3)}, got {table!r}")
    table = TABLE3[sc["table"] if table is None else table]
    nvb = model.nv - 6
    m_total = float(model.body_subtreemass[model.body("pelvis").id])
    scale = np.zeros(model.nv)
    scale[6:nvb] = dm.supported_mass(model)[6:nvb] / m_total * gain_scale
    root_kp = np.zeros(model.nv)
    root_kp[:6] = ROOT_GAIN * m_total * gain_scale
    servo = _ReactiveServo(model, qpos_ref, qvel_ref, tau_ff, scale, root_kp, table, controller, sc["limits"])
    data = mujoco.MjData(model)
    data.qpos[:] = qpos_ref[0]
    data.qvel[:] = qvel_ref[0]
    if ball:
        data.qpos[-7:] = ball_q
        data.qvel[-6:] = ball_v
    else:
        data.qpos[-7:-4] = [50.0, 0, 0]  # out of the way
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        r = dm.run(model, data, servo, servo.steps)
    body_model = humanoid()
    body_model.opt.timestep = dt
    qb = r.qpos[:, :body_model.nq]
    speed, _ = _limb_speed(body_model, qb, sc["limb"])
    if ball:
        free = run_scene(name, controller, dt, ball=False, seconds_after=seconds_after, gain_scale=gain_scale,
                         table=next(k for k, v in TABLE3.items() if v == table))
        speed_free = free.limb_speed
    else:
        speed_free = speed
    err = np.full(qb.shape[0], np.nan)
    e = np.zeros(body_model.nv)
    for i, (q, qr) in enumerate(zip(qb, qpos_ref[:, :body_model.nq])):
        if np.all(np.isfinite(q)):
            mujoco.mj_differentiatePos(body_model, e, 1.0, qr, q)
            err[i] = np.max(np.abs(e[6:]))
    elbow = qb[:, [body_model.joint("elbow_r").qposadr[0], body_model.joint("elbow_l").qposadr[0]]]
    return SceneRun(name, controller, dt, r.qpos, qpos_ref, err, speed, speed_free, elbow, servo.gain.copy(),
                    servo.contact_step, r.diverged_at, table)


def plot_scene(run: SceneRun, ax=None):
    """Hit-limb speed with and without the ball and the tracking error over time.

    Parameters
    ----------
    run : SceneRun
        What ``run_scene`` returned.
    ax : matplotlib.axes.Axes, optional
        Where to draw (a new figure if None).

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.5))
    t = np.arange(run.limb_speed.size) * run.dt
    ax.plot(t, run.limb_speed, label="hit limb speed, ball (m/s)")
    ax.plot(t, run.limb_speed_free, "--", label="hit limb speed, no ball (m/s)")
    ax.plot(t, run.error, label="max joint error (rad)")
    if run.contact_step >= 0:
        ax.axvline(run.contact_step * run.dt, color="k", lw=0.8, ls=":", label="contact")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("speed (m/s) / error (rad)")
    ax.set_title(f"{run.name} ({run.controller}, dt = {run.dt:.4g} s)")
    ax.legend(fontsize=7)
    return ax


STICKS = [("pelvis", "torso"), ("torso", "head"), ("torso", "upper_arm_r"), ("upper_arm_r", "forearm_r"),
          ("torso", "upper_arm_l"), ("upper_arm_l", "forearm_l"), ("pelvis", "thigh_r"), ("thigh_r", "shin_r"),
          ("shin_r", "foot_r"), ("pelvis", "thigh_l"), ("thigh_l", "shin_l"), ("shin_l", "foot_l")]


def plot_stick(model, qpos, ax=None, color="C0", ball=True):
    """Side view (x-z plane, m) of the humanoid as a stick figure of its joint positions.

    Parameters
    ----------
    model : mujoco.MjModel
        The humanoid (with or without a ball).
    qpos : (nq,) array_like
        The pose.
    ax : matplotlib.axes.Axes, optional
        Where to draw (a new figure if None).
    color : str
        Matplotlib colour of the sticks.
    ball : bool
        Draw the ball too, where the model has one.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(3, 4))
    d = dm._mj.MjData(model)
    d.qpos[:] = qpos
    dm._mj.mj_kinematics(model, d)
    for a, b in STICKS:
        pa = d.xpos[model.body(a).id]
        pb = d.xpos[model.body(b).id]
        ax.plot([pa[0], pb[0]], [pa[2], pb[2]], "-o", color=color, ms=2)
    for end, parent in (("forearm_r", 0.26), ("forearm_l", 0.26)):
        i = model.body(end).id
        tip = d.xpos[i] + d.xmat[i].reshape(3, 3) @ np.array([0, 0, -parent])
        ax.plot([d.xpos[i][0], tip[0]], [d.xpos[i][2], tip[2]], "-", color=color)
    if ball and "ball" in [model.body(i).name for i in range(model.nbody)]:
        c = d.xpos[model.body("ball").id]
        ax.add_patch(plt.Circle((c[0], c[2]), float(model.geom("ball").size[0]), color="C1", alpha=0.6))
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("z (m)")
    return ax


UPPER_BODY = ("spine", "neck", "shoulder_r", "elbow_r", "shoulder_l", "elbow_l")


def balance_model(dt=0.01):
    """The humanoid welded at the pelvis, with a torque motor on each upper-body DOF.

    The pelvis is fixed at 1 m; spine, neck, shoulders and elbows get one
    motor (N m) per DOF (14); the legs hang unactuated. Upright, the trunk
    is an inverted pendulum on the ball joint of the spine.

    Parameters
    ----------
    dt : float
        Time step (s).

    Returns
    -------
    mujoco.MjModel
    """
    xml = humanoid_xml().replace('<freejoint name="root"/>', "")
    base = dm._mj.MjModel.from_xml_string(xml)
    motors = []
    for name in UPPER_BODY:
        if int(base.joint(name).type[0]) == 1:
            motors += [f'<motor joint="{name}" gear="{a}"/>' for a in ("1 0 0", "0 1 0", "0 0 1")]
        else:
            motors.append(f'<motor joint="{name}" gear="1"/>')
    xml = xml.replace("</mujoco>", "<actuator>" + "".join(motors) + "</actuator></mujoco>")
    m = dm._mj.MjModel.from_xml_string(xml)
    m.opt.timestep = real(dt, "dt")
    return m


def balance_run(steps=300, push=150.0, push_steps=(50, 60), dt=0.01, Q_pos=100.0, R=1e-3, feedback=True):
    """LQR balance of the upper body against a push.

    Linearizes (``directable.mujoco.linearize``) at the upright pose with the
    gravity-holding torques as ``ctrl_ref``, solves the Riccati sweep and
    runs it (``directable.mujoco.run``, one compiled call).

    Parameters
    ----------
    steps : int
        Steps simulated.
    push : float
        Horizontal force on the torso (N, world +x).
    push_steps : (int, int)
        First and one-past-last step of the push.
    dt : float
        Time step (s).
    Q_pos : float
        State weight of each position DOF (velocities weigh 1).
    R : float
        Control weight (per motor, 1 / (N m)^2 scale).
    feedback : bool
        False applies ``ctrl_ref`` alone (no feedback), for comparison.

    Returns
    -------
    model : mujoco.MjModel
        The ``balance_model``.
    run : directable.mujoco.RunResult
        The closed-loop run; the torso's lean is ``run.x[:, 1]`` (spine
        rotation about y, rad).
    x_ref : (steps+1, nx) ndarray
        The reference (upright, zero).
    """
    mujoco = dm._mj
    m = balance_model(dt)
    steps = int(steps)
    x_ref = np.zeros((steps + 1, dm.nx(m)))
    # torques that hold the upright pose: inverse dynamics at rest, mapped to the motors
    tau = dm.inverse_dynamics(m, m.qpos0, np.zeros(m.nv), np.zeros(m.nv))[0]
    gear = np.zeros((m.nu, m.nv))
    for a in range(m.nu):
        d0 = int(m.jnt_dofadr[m.actuator_trnid[a, 0]])
        g = m.actuator_gear[a]
        if int(m.jnt_type[m.actuator_trnid[a, 0]]) == 1:
            gear[a, d0:d0 + 3] = g[:3]
        else:
            gear[a, d0] = g[0]
    ctrl_ref = np.tile(np.linalg.lstsq(gear.T, tau, rcond=None)[0], (steps, 1))
    Q = np.diag(np.r_[np.full(m.nv, Q_pos), np.ones(m.nv)])
    if feedback:
        tracker = dm.LQRTracker.from_linearization(m, x_ref, ctrl_ref, Q, R)
    else:
        tracker = dm.LQRTracker(m, x_ref, np.zeros((m.nu, dm.nx(m))), ctrl_ref)
    data = mujoco.MjData(m)
    shove = np.zeros((steps, m.nbody, 6))  # Cartesian force on the torso (N, world x): one C++ run
    shove[push_steps[0]:push_steps[1], m.body("torso").id, 0] = push
    return m, dm.run(m, data, tracker, steps, disturbance=shove), x_ref
