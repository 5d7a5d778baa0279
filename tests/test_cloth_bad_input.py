"""Bad input to the cloth and its control: ValueError / TypeError naming the argument."""
from __future__ import annotations

import numpy as np
import pytest

from directable import cloth as dc


@pytest.fixture(scope="module")
def scene():
    c = dc.ClothGrid(6, 6, 0.05, 0.01, 200.0, 50.0, 5.0, 0.02, pinned=[35])
    dt = 0.002
    pilot = c.rollout(c.positions0, np.zeros((36, 3)), dt, 100)
    return c, pilot, dt


GOOD = dict(nx=4, ny=4, spacing=0.05, mass=0.01, k_struct=100.0, k_shear=10.0, k_bend=1.0, damping=0.0)


@pytest.mark.parametrize("name,value,match", [
    ("spacing", 0.0, "spacing must be > 0"), ("spacing", -1.0, "spacing"), ("mass", 0.0, "mass must be > 0"),
    ("k_struct", 0.0, "k_struct must be > 0"), ("k_shear", -1.0, "k_shear must be >= 0"),
    ("k_bend", -2.0, "k_bend"), ("damping", -0.1, "damping"), ("nx", 1, "nx and ny must be >= 2"),
    ("k_bend2", -1.0, "k_bend2"), ("mass", float("nan"), "mass must be finite"),
])
def test_bad_cloth_parameters(name, value, match):
    with pytest.raises(ValueError, match=match):
        dc.ClothGrid(**dict(GOOD, **{name: value}))


def test_bad_pins_and_vectors():
    with pytest.raises(ValueError, match="pinned node 16 is out of range"):
        dc.ClothGrid(**GOOD, pinned=[16])
    with pytest.raises(ValueError, match="gravity"):
        dc.ClothGrid(**GOOD, gravity=(0, 0))
    with pytest.raises(ValueError, match="origin must be finite"):
        dc.ClothGrid(**GOOD, origin=(0, np.nan, 0))
    with pytest.raises(TypeError, match="pinned"):
        dc.ClothGrid(**GOOD, pinned=None)
    with pytest.raises(TypeError, match="spacing"):
        dc.ClothGrid(**dict(GOOD, spacing=None))


def test_bad_colliders():
    c = dc.ClothGrid(**GOOD)
    with pytest.raises(ValueError, match="Sphere radius must be > 0"):
        c.add_collider(dc.Sphere((0, 0, 0), -1.0, 100.0, 0.1))
    with pytest.raises(ValueError, match="Plane normal must be non-zero"):
        c.add_collider(dc.Plane((0, 0, 0), (0, 0, 0), 100.0, 0.1))
    with pytest.raises(ValueError, match="friction must be >= 0"):
        c.add_collider(dc.Plane((0, 0, 0), (0, 0, 1), 100.0, -0.1))
    with pytest.raises(ValueError, match="center"):
        dc.Sphere((0, 0), 1.0, 100.0)
    with pytest.raises(TypeError, match="collider"):
        c.add_collider(None)
    assert c.colliders == []  # a failed add leaves the cloth as it was


def test_bad_states(scene):
    c, _, dt = scene
    x, v = c.positions0, np.zeros((36, 3))
    with pytest.raises(ValueError, match=r"x must have shape \(36, 3\), got \(35, 3\)"):
        c.forces(x[:-1], v)
    with pytest.raises(ValueError, match="v must be finite, got nan at flat index 0"):
        c.forces(x, np.full((36, 3), np.nan))
    with pytest.raises(TypeError, match="x"):
        c.forces(None, v)
    with pytest.raises(ValueError, match="dt"):
        c.step(x, v, -1.0)
    with pytest.raises(ValueError, match="method must be one of"):
        c.step(x, v, dt, method="rk4")
    with pytest.raises(ValueError, match=r"u must have shape \(5, 36, 3\)"):
        c.rollout(x, v, dt, 5, u=np.zeros((4, 36, 3)))
    with pytest.raises(ValueError, match="steps"):
        c.rollout(x, v, dt, -1)


def test_degenerate_spring_names_its_nodes(scene):
    c, _, _ = scene
    x = c.positions0.copy()
    x[7] = x[8]
    with pytest.raises(ValueError, match="degenerate spring between nodes 7 and 8"):
        c.forces(x, np.zeros_like(x))


def test_diverging_run_reports_the_step():
    c = dc.ClothGrid(5, 5, 0.05, 0.01, 1e5, 0.0, 0.0, 0.0)
    x0 = c.positions0 + 0.001 * np.random.default_rng(0).standard_normal((25, 3))
    with pytest.raises(ValueError, match=r"rollout diverged at step \d+"):
        c.rollout(x0, np.zeros((25, 3)), 0.01, 2000)


@pytest.mark.parametrize("method", ["implicit", "symplectic"])
def test_stiff_sphere_divergence_reported_with_the_step(method):
    # A contact stiffness of 2e5 N/m on 10 g nodes (stable below dt = 2 sqrt(m / k) = 0.45 ms) at dt = 2 ms.
    # The nodes that hit the sphere are shot away while the rest of the patch stays slow: the divergence
    # check looks at the fastest node, not the mean speed, and reports the step. (At Fig. 4's 6e4 N/m the
    # symplectic run is chaotic enough that whether a node passes the 100 m/s bound depends on rounding:
    # 98.5 m/s at most in one build; at 2e5 N/m it passes 250 m/s at step 66 under perturbations of 1e-12 m.)
    c = dc.ClothGrid(10, 10, 0.05, 0.01, 300.0, 60.0, 6.0, 0.02, origin=(-0.225, -0.225, 0.28))
    c.add_collider(dc.Sphere((0.0, 0.0, 0.0), 0.25, 2e5, 0.3))
    with pytest.raises(ValueError, match=r"rollout diverged at step \d+ \(a node's speed is"):
        c.rollout(c.positions0, np.zeros((100, 3)), 0.002, 1000, method=method)


def test_fast_but_plausible_runs_are_not_divergence():
    # The bound follows what energy and momentum allow: a 20 s free fall (196 m/s at the end), a patch
    # released from a 3x stretch, and a node thrown at 2e4 m/s all run without an error.
    c = dc.ClothGrid(6, 6, 0.05, 0.01, 300.0, 60.0, 6.0, 0.02)
    x0, v0 = c.positions0, np.zeros((36, 3))
    run = c.rollout(x0, v0, 0.01, 2000, method="implicit")
    assert np.linalg.norm(run.v[-1], axis=1).max() > 150.0
    c.rollout(3.0 * x0, v0, 0.0005, 400)
    v = v0.copy()
    v[14, 2] = 2e4
    c.rollout(x0, v, 1e-6, 3, method="implicit")
    c.step(x0, v, 1e-6)


def test_bad_goals(scene):
    c, pilot, dt = scene
    g = pilot.x[80, 10] + 0.05
    with pytest.raises(ValueError, match="node 36 is out of range"):
        dc.plan(c, pilot, [(36, 80, g)], dt)
    with pytest.raises(ValueError, match="node 35 is pinned"):
        dc.plan(c, pilot, [(35, 80, g)], dt)
    with pytest.raises(ValueError, match="t_c must be <= 100"):
        dc.plan(c, pilot, [(10, 101, g)], dt)
    with pytest.raises(ValueError, match="window of at least 1 step"):
        dc.plan(c, pilot, [(10, 0, g)], dt)
    with pytest.raises(ValueError, match="goal must be finite"):
        dc.plan(c, pilot, [(10, 80, [np.nan, 0, 0])], dt)
    with pytest.raises(ValueError, match="goal must have shape"):
        dc.plan(c, pilot, [(10, 80, [0, 0])], dt)
    with pytest.raises(ValueError, match="has a goal already"):
        dc.plan(c, pilot, [(10, 80, g), (10, 90, g)], dt)
    with pytest.raises(ValueError, match="goals must list at least one"):
        dc.plan(c, pilot, [], dt)
    with pytest.raises(ValueError, match=r"goals\[0\] must be \(node, t_c, goal_xyz\)"):
        dc.plan(c, pilot, [(10, 80)], dt)
    with pytest.raises(TypeError, match="goals"):
        dc.plan(c, pilot, None, dt)
    with pytest.raises(TypeError, match="pilot"):
        dc.plan(c, None, [(10, 80, g)], dt)


@pytest.mark.parametrize("kw,match", [
    (dict(alpha=-1.0), "alpha must be >= 0"), (dict(beta=-1.0), "beta must be >= 0"),
    (dict(gamma=-1.0), "gamma must be >= 0"), (dict(samples=0), "samples must be >= 1"),
    (dict(azimuths=0), "azimuths must be >= 1"), (dict(widen=2.0), "widen"), (dict(f_max=0.0), "f_max"),
    (dict(length_ratio="cubic"), "length_ratio"), (dict(seek_angle=200.0), "seek_angle"),
    (dict(delta=0.0), "delta"), (dict(beta=float("nan")), "beta must be finite"),
])
def test_bad_settings(scene, kw, match):
    c, pilot, dt = scene
    with pytest.raises(ValueError, match=match):
        dc.plan(c, pilot, [(10, 80, pilot.x[80, 10] + 0.05)], dt, **kw)


def test_bad_editing_input():
    with pytest.raises(ValueError, match="control_points must have shape"):
        dc.blend_path(np.zeros((5, 3)), np.zeros((3, 3)), 0.5)
    with pytest.raises(ValueError, match="weight must lie in"):
        dc.blend_path(np.zeros((5, 3)), np.zeros((4, 3)), 1.5)
    with pytest.raises(ValueError, match="path"):
        dc.retime(np.zeros((1, 3)), np.zeros((4, 3)))
    with pytest.raises(ValueError, match="reference must be finite"):
        dc.retime(np.zeros((3, 3)), np.full((4, 3), np.nan))
    c = dc.ClothGrid(**GOOD)
    with pytest.raises(ValueError, match="region node 99"):
        dc.curl_goals(c, c.positions0, [99], 30.0, 0.0)
    with pytest.raises(ValueError, match="curl_deg must be finite"):
        dc.curl_goals(c, c.positions0, [0], np.nan, 0.0)


def test_bad_model_and_apply(scene):
    c, pilot, dt = scene
    with pytest.raises(ValueError, match="controlled node 35 is pinned"):
        c.as_model([35])
    with pytest.raises(ValueError, match="controlled node 40 is out of range"):
        c.as_model([40])
    with pytest.raises(TypeError, match="controlled"):
        c.as_model(None)
    with pytest.raises(TypeError, match="plan"):
        dc.apply(c, pilot.x[0], pilot.v[0], dt, 10, None)
    p = dc.plan(c, pilot, [(10, 80, pilot.x[80, 10] + 0.02)], dt)
    with pytest.raises(ValueError, match="x0"):
        dc.apply(c, pilot.x[0, :5], pilot.v[0], dt, 10, p)


def test_single_step_checks_live_in_the_core():
    # ClothGrid.step is checked by the same core code as a rollout's step 0: divergence with the step index,
    # non-finite input named, never NaN returned.
    # springs of 1e5 N/m on 10 g nodes stretched by 20 %: at dt = 10 ms (25x the stability limit) one
    # symplectic step makes nodes faster than the stored energy allows
    c = dc.ClothGrid(4, 4, 0.05, 0.01, 1e5, 0.0, 0.0, 0.0)
    x = 1.2 * c.positions0
    with pytest.raises(ValueError, match=r"step diverged at step 0 \(a node's speed is"):
        c.step(x, np.zeros_like(x), 0.01)
    c.step(x, np.zeros_like(x), 0.01, method="implicit")  # the implicit step stays bounded
    free = dc.ClothGrid(4, 4, 0.05, 0.01, 300.0, 60.0, 6.0, 0.02)
    u = np.zeros((16, 3))
    u[3, 1] = np.nan
    with pytest.raises(ValueError, match="u must be finite"):
        free.step(free.positions0, np.zeros((16, 3)), 0.01, u=u)
    bad = free.positions0.copy()
    bad[2, 0] = np.inf
    with pytest.raises(ValueError, match="x must be finite"):
        free.step(bad, np.zeros((16, 3)), 0.01, method="implicit")
