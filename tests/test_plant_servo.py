"""mpc.run_servo: the PD servo closing the loop on a plant in one C++ call."""
import numpy as np
import pytest

from directable import models, mpc, sph
from directable.experiments import sph_shape


def chain_plant(m=4, dt=0.02, x0=None):
    chain = models.spring_chain(masses=m)
    x0 = np.linspace(0.1, 0.4, 2 * m) if x0 is None else x0
    return chain, mpc.ModelPlant(chain, x0, dt)


def test_controls_follow_the_law_from_each_state():
    m = 4
    _, plant = chain_plant(m)
    q_ref, qd_ref = np.linspace(-0.2, 0.3, m), np.full(m, 0.05)
    kp, kd, u_ff = np.linspace(10, 40, m), np.linspace(1, 4, m), np.linspace(-1, 1, m)
    states, controls = mpc.run_servo(plant, q_ref, kp, kd, 30, qd_ref=qd_ref, u_ff=u_ff)
    assert states.shape == (31, 2 * m) and controls.shape == (30, m)
    expected = u_ff + kp * (q_ref - states[:-1, :m]) + kd * (qd_ref - states[:-1, m:])
    np.testing.assert_allclose(controls, expected, rtol=1e-14, atol=1e-14)
    np.testing.assert_array_equal(plant.state, states[-1])


def test_run_equals_stepping_the_model_with_the_law():
    m, dt = 3, 0.01
    chain, plant = chain_plant(m, dt)
    states, _ = mpc.run_servo(plant, 0.0, 25.0, 3.0, 40)
    z = np.linspace(0.1, 0.4, 2 * m)
    ref = [z]
    for _ in range(40):
        w = 25.0 * (0.0 - z[:m]) + 3.0 * (0.0 - z[m:])
        z = models.rollout(chain, z, w[None, :], dt)[-1]
        ref.append(z)
    np.testing.assert_allclose(states, np.array(ref), rtol=0, atol=1e-13)


def test_zero_gains_are_the_uncontrolled_run():
    _, plant = chain_plant()
    _, controls = mpc.run_servo(plant, 0.0, 0.0, 0.0, 10)
    assert not controls.any()


def test_sph_pd_baseline_equals_a_per_frame_loop():
    frames, substeps, impact, kp, kd = 8, 10, 3, 400.0, 40.0
    run = sph_shape.shape_experiment("pd", frames=frames, substeps=substeps, impact=impact, kp=kp, kd=kd)
    ref = sph_shape.fin_shape(0.02)
    fluid = sph.SPHFluid2D(ref, np.zeros((0, 2)), spacing=0.02, h=1.3 * 0.02, viscosity=0.2)
    m, g = fluid.mass, np.array([0.0, 9.81])
    for f in range(frames):
        if f == impact:
            fluid.set_sphere([0.05, ref[:, 1].mean()], 0.06, [6.0, 0.0])
        F = m * (kp * (ref - fluid.positions) - kd * fluid.velocities + g)
        np.testing.assert_allclose(run.forces[f], F, rtol=1e-12, atol=1e-12)
        fluid.step(F, steps=substeps)
        np.testing.assert_allclose(run.positions[f + 1], fluid.positions, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kwargs, match", [
    (dict(kp=np.ones(3)), r"servo kp must have shape \(4,\), got \(3,\)"),
    (dict(kd=np.full(4, np.nan)), "servo kd must be finite"),
    (dict(q_ref=np.ones((4, 1))), r"q_ref must have shape \(n,\)"),
    (dict(steps=0), "steps must be >= 1"),
])
def test_bad_input_names_the_argument(kwargs, match):
    _, plant = chain_plant()
    args = dict(q_ref=0.0, kp=1.0, kd=1.0, steps=5)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        mpc.run_servo(plant, **args)


def test_plant_without_position_velocity_state_is_refused():
    chain = models.spring_chain(masses=4, actuated=[0, 1])
    plant = mpc.ModelPlant(chain, np.zeros(8), 0.02)
    with pytest.raises(ValueError, match=r"state \[q, q'\] with s = n / 2, got n = 8, s = 2"):
        mpc.run_servo(plant, 0.0, 1.0, 1.0, 3)
    with pytest.raises(TypeError, match="plant"):
        mpc.run_servo(None, 0.0, 1.0, 1.0, 3)


def test_divergence_is_reported_with_the_step():
    _, plant = chain_plant(dt=0.5)
    with pytest.raises(ValueError, match="non-finite at step"):
        mpc.run_servo(plant, 0.0, 1e8, 1e8, 200)
