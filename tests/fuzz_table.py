"""The fuzz table: one valid call per public entry point (a setup, then the
call with named arguments given as Python expressions) and the mutations a
hostile caller applies to one argument at a time. Run by tests/test_fuzz.py,
one worker process per entry (``python fuzz_table.py NAME``) so that a crash
fails that entry and a hang is cut by its timeout.

Contract for every mutated call: it returns a result whose arrays and
numbers are finite, or raises TypeError / ValueError (also the
FloatingPointError and MemoryError subclasses' kin, MemoryError for an
allocation that cannot be honoured) — never a crash, a hang, another
exception type, or NaN in the result.
"""
from __future__ import annotations

import faulthandler
import json
import os
import sys

SETUP = """
import numpy as np
import directable as dr
from directable import chain, cloth, crowds, fem, fluid, lqr, models, mpc, reduce, sim, sph
rng = np.random.default_rng(0)
chain2 = models.spring_chain(masses=2)
planar = chain.PlanarChain(np.ones(2), np.ones(2))
A3 = np.tile(0.9 * np.eye(3), (4, 1, 1))
B3 = np.ones((3, 2))
sol3 = lqr.solve_discrete(A3, B3, 1.0, 1.0, 1.0)
disc3 = lqr.discretize(A3, B3, 0.05, 1.0, 1.0)
zref3 = 0.1 * np.ones((5, 3))
tracker3 = lqr.tracker(sol3, zref3)
K4 = -0.5 * np.ones((5, 2, 4))
zref4 = np.zeros((6, 4))
tracker4 = lqr.tracker(K4, zref4)
grid = fluid.MACGrid2D(6, 6)
basis = fluid.velocity_basis(grid, np.stack([grid.project(np.sin(np.arange(grid.n_faces) * (k + 1)))
                                            for k in range(4)]), r=3)
red = fluid.ReducedFluid(grid, basis, 0.01)
dx = 0.1
fluid_pts = sph.block((0.2, 0.0), (0.5, 0.3), dx)
walls = sph.box_walls((0, 0), (1, 1), dx)
sphf = sph.SPHFluid2D(fluid_pts, walls, spacing=dx, h=1.3 * dx)
pred = sphf.prediction_model()
lin = mpc.LinearModel(0.9 * np.eye(3), np.ones((3, 2)))
opt = mpc.HorizonOptimizer(lin, 3, 1.0, 0.1, 1.0, iterations=5)
mesh = fem.box_mesh((2, 1, 1), h=0.1)
stvk = fem.StVKModel(mesh, 1e5, 0.3, 1000.0, fixed=fem.bottom_vertices(mesh, axis=0))
cgrid = crowds.CrowdGrid(8, 8)
cparams = crowds.Params.table_4_1("city")
cl = cloth.ClothGrid(3, 3, 0.1, 0.02, 10.0, 0.0, 0.0, 0.0)
grid3 = fluid.MACGrid3D(4, 3, 3, h=0.25)
basis3 = fluid.velocity_basis3d(grid3, np.stack([grid3.project(np.sin(np.arange(grid3.n_faces) * (k + 1)))
                                                for k in range(4)]), r=3)
red3 = fluid.ReducedFluid3D(grid3, basis3, 0.01)
ball = fluid.sphere(0.2, 1)
cparams = crowds.Params.table_4_1("lanes")
cgoal = np.zeros((8, 8), bool)
cgoal[:, -1] = True
ccost = np.ones((4, 8, 8))
cphi = crowds.eikonal(ccost, cgoal)
from directable import characters
walker = characters.synthetic_walker()
clips = characters.synthetic_clips(walker, gaits=("walk",), turns=(-0.5, 0.5))
motion = characters.MotionModel(clips)
nav = characters.Navigation(motion)
try:
    import mujoco as _mj
    from directable import mujoco as dmj
    mjm = _mj.MjModel.from_xml_string('''<mujoco><option timestep="0.01" integrator="Euler"/>
        <worldbody><body pos="0 0 1"><joint name="b" type="ball" damping="0.3"/>
        <geom type="capsule" fromto="0 0 0 0.1 0 -0.5" size="0.04" mass="1.5"/>
        <body pos="0.1 0 -0.5"><joint name="e" type="hinge" axis="0 1 0" damping="0.2"/>
        <geom type="capsule" fromto="0 0 0 0 0.1 -0.4" size="0.03" mass="1"/></body></body></worldbody>
        <actuator><motor joint="e" gear="2"/></actuator></mujoco>''')
    mjd = _mj.MjData(mjm)
    _mj.mj_forward(mjm, mjd)
    mjx = dmj.state(mjm, mjd)
except ImportError:  # the MuJoCo entries are skipped without the optional dependency
    mjm = None
import fuzz_fixtures as fx
"""

# name -> (the call, written with the argument names, {argument: valid expression}[, options]);
# options: "long": counts of a run or a size that may legitimately take as long as asked (10**12 steps
# run and stop on Ctrl-C: tests/test_interrupt.py; a 10**6-node cloth is built in seconds; sizes beyond
# the memory are MemoryError: tests/test_hardening.py), so huge integers are not tried there; "allow_inf": +inf is a
# documented value of the result (an eikonal's unreachable cells); "aliases": {argument: names} other names
# an error message may use for the argument (the paper's symbol, the core's name for it).
TABLE = {
    "lqr.solve_discrete": ("lqr.solve_discrete(A=A, B=B, Q=Q, R=R, Q_final=Q_final)",
                           dict(A="A3", B="B3", Q="np.eye(3)", R="np.eye(2)", Q_final="np.eye(3)")),
    "lqr.discretize": ("lqr.discretize(A=A, B=B, dt=dt, Q=Q, R=R, method=method, intervals=intervals)",
                       dict(A="A3", B="B3", dt="0.05", Q="1.0", R="1.0", method="'simpson'", intervals="4")),
    "lqr.solve_continuous": ("lqr.solve_continuous(A=A, B=B, dt=dt, Q=Q, R=R, Q_final=Q_final)",
                             dict(A="A3", B="B3", dt="0.05", Q="1.0", R="1.0", Q_final="np.eye(3)")),
    "lqr.retune": ("lqr.retune(d, Q_final=Q_final, alpha_Q=alpha_Q, alpha_R=alpha_R)",
                   dict(d="disc3", Q_final="np.eye(3)", alpha_Q="2.0", alpha_R="0.5"), {"aliases": {"d": ("discretization",)}}),
    "lqr.tracker": ("lqr.tracker(K=K, z_ref=z_ref, w_ff=w_ff, w_min=w_min, w_max=w_max, gain_dtype=gain_dtype)",
                    dict(K="K4", z_ref="zref4", w_ff="np.zeros((5, 2))", w_min="-np.ones(2)", w_max="np.ones(2)",
                         gain_dtype="'float32'"),
                    # a K of another control size is refused where the other arrays stop matching it
                    {"aliases": {"K": ("w_ff", "w_min", "w_max", "z_ref"), "z_ref": ("K",)}, "covers": ("Tracker",)}),
    "lqr.pd_tracker": ("lqr.pd_tracker(kp=kp, kd=kd, z_ref=z_ref)", dict(kp="2.0", kd="0.5", z_ref="zref4")),
    "Tracker.control": ("tracker4.control(z)", dict(z="np.ones(4)")),
    "Tracker.nearest_index": ("tracker4.nearest_index(z, first=first, last=last)",
                              dict(z="np.ones(4)", first="0", last="-1")),
    "models.spring_chain": ("models.spring_chain(masses=masses, mass=mass, stiffness=stiffness, damping=damping)",
                            dict(masses="3", mass="1.0", stiffness="40.0", damping="0.2"),
                            {"aliases": {"mass": ("masses", "stiffness", "damping")}, "covers": ("SpringChain",)}),
    "models.linearize": ("models.linearize(model, z_ref=z_ref, dt=dt)",
                         dict(model="chain2", z_ref="np.zeros((4, 4))", dt="0.01")),
    "models.rollout": ("models.rollout(model, z0=z0, w=w, dt=dt)",
                       dict(model="chain2", z0="np.zeros(4)", w="np.ones((5, 2))", dt="0.01"),
                       {"aliases": {"w": ("open_loop", "steps")}}),
    # (a huge z or w: the step reports the non-finite state it would return)
    "Model.step": ("chain2.step(z, w, dt)", dict(z="np.zeros(4)", w="np.ones(2)", dt="0.01"),
                   {"aliases": {"z": ("state",), "w": ("state",)}}),
    "sim.simulate": ("sim.simulate(model, z0=z0, steps=steps, dt=dt, controller=controller, disturbance=disturbance,"
                     " kicks=kicks, jump_steps=jump_steps, start_index=start_index)",
                     dict(model="chain2", z0="np.zeros(4)", steps="5", dt="0.01", controller="tracker4",
                          disturbance="np.ones((5, 2))", kicks="np.zeros((5, 4))", jump_steps="[2]",
                          start_index="0"), {"aliases": {"steps": ("disturbance", "kicks")}}),
    "sim.Simulation": ("dr.Simulation(model, z0, dt, controller=controller)",
                       dict(model="chain2", z0="np.zeros(4)", dt="0.01", controller="tracker4")),
    "Simulation.step": ("dr.Simulation(chain2, np.zeros(4), 0.01).step(w_ext=w_ext, w_open=w_open, kick=kick)",
                        dict(w_ext="np.ones(2)", w_open="np.ones(2)", kick="np.zeros(4)")),
    "sim.push": ("sim.push(steps, dim, at, force, duration=duration)",
                 dict(steps="10", dim="2", at="3", force="np.ones(2)", duration="2"),
                 {"aliases": {"dim": ("force",), "steps": ("at",)}}),
    "chain.PlanarChain": ("chain.PlanarChain(masses, lengths)", dict(masses="np.ones(2)", lengths="np.ones(2)")),
    "chain.track": ("chain.track(planar, q_ref=q_ref, qd_ref=qd_ref, dt=dt, kp=kp, kd=kd)",
                    dict(q_ref="0.1 * np.ones((6, 2))", qd_ref="np.zeros((6, 2))", dt="0.01", kp="50.0", kd="5.0")),
    "chain.rollout": ("chain.rollout(planar, q0=q0, qd0=qd0, dt=dt, steps=steps, tau=tau)",
                      dict(q0="np.zeros(2)", qd0="np.zeros(2)", dt="0.01", steps="5", tau="np.zeros((5, 2))"),
                      {"aliases": {"tau": ("tau_ff",)}}),
    "chain.spd_step": ("chain.spd_step(M, C, q, qd, q_ref_next, qd_ref_next, kp, kd, dt)",
                       dict(M="np.eye(2)", C="np.zeros(2)", q="np.zeros(2)", qd="np.zeros(2)",
                            q_ref_next="np.ones(2)", qd_ref_next="np.zeros(2)", kp="10.0", kd="1.0", dt="0.01")),
    "chain.linearize": ("chain.linearize(planar, q_ref=q_ref, qd_ref=qd_ref)",
                        dict(q_ref="np.zeros((3, 2))", qd_ref="np.zeros((3, 2))"),
                        {"aliases": {"q_ref": ("q",), "qd_ref": ("qd",)}}),
    "chain.inverse_dynamics": ("chain.inverse_dynamics(planar, q, qd, qdd)",
                               dict(q="np.zeros(2)", qd="np.zeros(2)", qdd="np.ones(2)")),
    "fluid.MACGrid2D": ("fluid.MACGrid2D(nx, ny)", dict(nx="6", ny="5")),
    "MACGrid2D.advect_particles": ("grid.advect_particles(u, points, dt)",
                                   dict(u="np.ones(grid.n_faces)", points="np.array([[0.5, 0.5]])", dt="0.1")),
    "MACGrid2D.project": ("grid.project(u)", dict(u="np.ones(grid.n_faces)")),
    "fluid.FluidSim2D.run": ("fluid.FluidSim2D(grid, viscosity, dt).run(forces)",
                             dict(viscosity="0.01", dt="0.01", forces="np.ones((3, grid.n_faces))"),
                             {"covers": ("FluidSim2D",)}),
    "fluid.ReducedFluid": ("fluid.ReducedFluid(grid, basis, viscosity)",
                           dict(basis="basis", viscosity="0.01")),
    "ReducedFluid.step": ("red.step(z, w, dt)", dict(z="np.ones(3)", w="np.zeros(3)", dt="0.01")),
    "fluid.FluidParticles": ("fluid.FluidParticles(red, particles)", dict(particles="2")),
    "fluid.velocity_basis": ("fluid.velocity_basis(grid, snapshots, r=r)",
                             dict(snapshots="rng.standard_normal((5, grid.n_faces))", r="2")),
    "sph.SPHFluid2D": ("sph.SPHFluid2D(fluid, boundary, spacing=spacing, h=h)",
                       dict(fluid="fluid_pts", boundary="walls", spacing="dx", h="1.3 * dx")),
    "SPHFluid2D.step": ("sphf.step(force=force, steps=steps)", dict(force="np.zeros((len(fluid_pts), 2))",
                                                                     steps="2"), {"long": {"steps"}}),
    "SPHFluid2D.set_state": ("sphf.set_state(positions, velocities)",
                             dict(positions="fluid_pts", velocities="np.zeros_like(fluid_pts)")),
    "SPHPrediction.step": ("pred.step(x, u)", dict(x="sph.state(sphf)", u="np.zeros(pred.s)")),
    "mpc.LinearModel": ("mpc.LinearModel(A, B)", dict(A="np.eye(3)", B="np.ones((3, 2))")),
    "mpc.EulerModel": ("mpc.EulerModel(model, dt)", dict(model="chain2", dt="0.01")),
    "mpc.Substeps": ("mpc.Substeps(model, count).step(np.zeros(3), np.zeros(2))", dict(model="lin", count="3"),
                     {"long": {"count"}}),
    "mpc.HorizonOptimizer": ("mpc.HorizonOptimizer(lin, horizon, Q, R, C, iterations=iterations, lower=lower,"
                             " upper=upper)",
                             dict(horizon="3", Q="1.0", R="0.1", C="1.0", iterations="5", lower="-1.0",
                                  upper="1.0")),
    "HorizonOptimizer.solve": ("opt.solve(x0, reference, u0=u0)",
                               dict(x0="np.ones(3)", reference="np.zeros((4, 3))", u0="np.zeros((3, 2))")),
    "HorizonOptimizer.cost_and_gradient": ("opt.cost_and_gradient(x0, reference, u)",
                                           dict(x0="np.ones(3)", reference="np.zeros((4, 3))",
                                                u="np.zeros((3, 2))")),
    "HorizonOptimizer.run": ("opt.run(lin, x0, reference, steps)",
                             dict(x0="np.ones(3)", reference="np.zeros((7, 3))", steps="3")),
    "mpc.minimize_lbfgs": ("mpc.minimize_lbfgs(lambda x: (float(x @ x), 2 * x), x0, lower=lower, upper=upper)",
                           dict(x0="np.ones(2)", lower="-np.ones(2)", upper="np.ones(2)"),
                           {"aliases": {"x0": ("lower", "upper")}}),
    "fem.box_mesh": ("fem.box_mesh(cells, h=h)", dict(cells="(2, 1, 1)", h="0.1")),
    "fem.StVKModel": ("fem.StVKModel(mesh, young, poisson, density)",
                      dict(young="1e5", poisson="0.3", density="1000.0")),
    "fem.Simulator.run": ("fem.Simulator(stvk, dt).run(forces)",
                          dict(dt="0.01", forces="np.zeros((2, 3 * mesh.num_vertices))"), {"covers": ("Simulator",)}),
    "reduce.pca": ("reduce.pca(snapshots, r)", dict(snapshots="rng.standard_normal((6, 10))", r="2")),
    "crowds.splat": ("crowds.splat(cgrid, positions, velocities, lam, out=out)",
                     dict(positions="[[1.0, 1.0]]", velocities="[[0.5, 0.0]]", lam="2.0",
                          out="(np.empty((8, 8)), np.empty((8, 8, 2)))")),
    "crowds.eikonal": ("crowds.eikonal(cost, goal)",
                       dict(cost="np.ones((4, 8, 8))", goal="np.eye(8, dtype=bool)"), {"allow_inf": True}),
    "crowds.speed_field": ("crowds.speed_field(cgrid, rho, ubar, cparams, out=out)",
                           dict(rho="np.full((8, 8), 0.3)", ubar="np.full((8, 8, 2), 0.1)", out="np.empty((4, 8, 8))")),
    "crowds.unit_cost": ("crowds.unit_cost(cgrid, speed, discomfort, cparams, out=out)",
                         dict(speed="np.full((4, 8, 8), 0.1)", discomfort="np.zeros((8, 8))", out="np.empty((4, 8, 8))"),
                         {"allow_inf": True}),
    "crowds.enforce_min_distance": ("crowds.enforce_min_distance(positions, delta_min)",
                                    dict(positions="[[1.0, 1.0], [1.1, 1.0]]", delta_min="0.5")),
    "cloth.ClothGrid": ("cloth.ClothGrid(nx, ny, spacing, mass, k_struct, 0.0, 0.0, 0.0)",
                        dict(nx="3", ny="3", spacing="0.1", mass="0.02", k_struct="10.0"), {"long": {"nx", "ny"}}),
    "cloth.Sphere": ("cloth.Sphere(center, radius, stiffness, friction=friction)",
                     dict(center="(0.0, 0.0, 0.0)", radius="0.1", stiffness="100.0", friction="0.1")),
    "cloth.Plane": ("cloth.Plane(point, normal, stiffness)",
                    dict(point="(0.0, 0.0, 0.0)", normal="(0.0, 0.0, 1.0)", stiffness="100.0")),
    "cloth.blend_path": ("cloth.blend_path(path, control_points, weight)",
                         dict(path="np.zeros((5, 3))", control_points="np.ones((4, 3))", weight="0.5")),
    "cloth.retime": ("cloth.retime(path, reference)", dict(path="np.zeros((5, 3))", reference="np.ones((7, 3))")),
    "fluid.MACGrid3D": ("fluid.MACGrid3D(nx, ny, nz, h=h)", dict(nx="4", ny="3", nz="3", h="0.25")),
    "MACGrid3D.project": ("grid3.project(u)", dict(u="np.ones(grid3.n_faces)")),
    "MACGrid3D.advect_velocity": ("grid3.advect_velocity(u, dt)", dict(u="np.ones(grid3.n_faces)", dt="0.05")),
    "MACGrid3D.advect_cells": ("grid3.advect_cells(u, q, dt, drift=drift)",
                               dict(u="np.ones(grid3.n_faces)", q="np.ones(grid3.n_cells)", dt="0.05",
                                    drift="np.zeros(3)")),
    "MACGrid3D.advect_particles": ("grid3.advect_particles(u, points, dt)",
                                   dict(u="np.ones(grid3.n_faces)", points="np.array([[0.5, 0.3, 0.3]])",
                                        dt="0.05")),
    "MACGrid3D.wind": ("grid3.wind(center, direction, magnitude, width)",
                       dict(center="np.zeros(3)", direction="np.array([1.0, 0.0, 0.0])", magnitude="2.0",
                            width="0.3")),
    "fluid.FluidSim3D": ("fluid.FluidSim3D(grid3, viscosity=viscosity, dt=dt, buoyancy=buoyancy)",
                         dict(viscosity="0.01", dt="0.02", buoyancy="(0.0, 1.0, 0.0)")),
    "FluidSim3D.step": ("fluid.FluidSim3D(grid3, dt=0.02).step(force=force, obstacles=obstacles)",
                        dict(force="np.ones(grid3.n_faces)",
                             obstacles="[fluid.Obstacle3D(ball, np.array([0.5, 0.4, 0.4]))]")),
    "fluid.ReducedFluid3D": ("fluid.ReducedFluid3D(grid3, basis, viscosity)", dict(basis="basis3", viscosity="0.01")),
    "ReducedFluid3D.step": ("red3.step(z, w, dt)", dict(z="np.ones(3)", w="np.zeros(3)", dt="0.01")),
    "ReducedFluid3D.advect_particles": ("red3.advect_particles(z, z_next, points, dt)",
                                        dict(z="np.ones(3)", z_next="np.ones(3)",
                                             points="np.array([[0.5, 0.3, 0.3]])", dt="0.01")),
    "fluid.FluidParticles3D": ("fluid.FluidParticles3D(red3, particles, drift=drift)",
                               dict(particles="2", drift="np.zeros(3)")),
    "fluid.velocity_basis3d": ("fluid.velocity_basis3d(grid3, snapshots, r)",
                               dict(snapshots="rng.standard_normal((5, grid3.n_faces))", r="2"),
                               {"aliases": {"r": ("keep",)}}),
    "fluid.sphere": ("fluid.sphere(r, subdivisions)", dict(r="0.2", subdivisions="1"), {"long": {"subdivisions"}}),
    "fluid.Obstacle3D": ("fluid.Obstacle3D(ball, position, velocity=velocity)",
                         dict(position="np.array([0.5, 0.4, 0.4])", velocity="np.zeros(3)")),
    "crowds.CrowdGrid": ("crowds.CrowdGrid(nx, ny, h)", dict(nx="8", ny="6", h="1.0"), {"long": {"nx", "ny"}}),
    "crowds.velocity_field": ("crowds.velocity_field(cgrid, phi, cost, speed)",
                              dict(phi="cphi", cost="ccost", speed="np.ones((4, 8, 8))")),
    "crowds.close_pairs": ("crowds.close_pairs(positions, delta_min)",
                           dict(positions="[[1.0, 1.0], [1.1, 1.0]]", delta_min="0.5")),
    "crowds.Crowd": ("crowds.Crowd(cgrid, cparams, [crowds.Group(goal, positions)]).step()",
                     dict(goal="cgoal", positions="[[1.5, 1.5], [2.5, 4.5]]")),
    "characters.synthetic_clips": ("characters.synthetic_clips(walker, gaits=gaits, turns=turns)",
                                   dict(gaits="('walk',)", turns="(-0.5, 0.5)")),
    "characters.MotionModel": ("characters.MotionModel(clips, joint_weights=joint_weights, "
                               "velocity_weight=velocity_weight)",
                               dict(joint_weights="np.ones(19)", velocity_weight="0.01")),
    "MotionModel.synthesize": ("motion.synthesize(clip_sequence, start_pose=start_pose)",
                               dict(clip_sequence="[0, 1, 0]", start_pose="(0.0, 0.0, 0.0)")),
    "characters.Navigation": ("characters.Navigation(motion, gamma_x=gamma_x, torso=torso)",
                              dict(gamma_x="0.1", torso="0.0")),
    "Navigation.successors": ("nav.successors(states)", dict(states="np.array([[0.0, 0.1, 0.2]])")),
    "Navigation.state_costs": ("nav.state_costs(states)", dict(states="np.array([[0.0, 0.1, 0.2]])")),
    "characters.samples": ("characters.samples(nav, per_dim=per_dim, drop=drop)", dict(per_dim="3", drop="0.0")),
    "characters.value_iteration": ("characters.value_iteration(nav, 4, alpha=alpha, max_sweeps=max_sweeps)",
                                   dict(alpha="0.5", max_sweeps="20"), {"long": {"max_sweeps"}}),
    "mujoco.difference": ("dmj.difference(mjm, x, x_ref)", dict(x="mjx", x_ref="mjx")),
    "mujoco.linearize": ("dmj.linearize(mjm, reference, ctrl_ref, eps=eps, threads=1)",
                         dict(reference="np.tile(mjx, (3, 1))", ctrl_ref="np.zeros((2, 1))", eps="1e-6")),
    "mujoco.spd": ("dmj.spd(mjm, mjd, q_ref_next, qd_ref_next, kp, kd)",
                   dict(q_ref_next="mjd.qpos.copy()", qd_ref_next="np.zeros(mjm.nv)", kp="10.0", kd="1.0")),
    "mujoco.inverse_dynamics": ("dmj.inverse_dynamics(mjm, qpos, qvel, qacc)",
                                dict(qpos="mjd.qpos.copy()", qvel="np.zeros(mjm.nv)", qacc="np.ones(mjm.nv)")),
    "mujoco.reference_velocities": ("dmj.reference_velocities(mjm, qpos_ref, dt)",
                                    dict(qpos_ref="np.tile(mjd.qpos, (4, 1))", dt="0.01")),
    "mujoco.gain_schedule": ("dmj.gain_schedule(k, steps, nv)", dict(k="2.0", steps="4", nv="4"),
                             {"long": {"steps", "nv"}, "aliases": {"k": ("kp",)}}),
    # the extension called directly (what a C++ caller or another binding sees: no Python layer)
    "_core.simulate": ("dr._core.simulate(model, z0, steps, dt, controller=controller, disturbance=disturbance)",
                       dict(model="chain2", z0="np.zeros(4)", steps="5", dt="0.01", controller="tracker4",
                            disturbance="np.ones((5, 2))"), {"aliases": {"steps": ("disturbance",)}}),
    "_core.solve_discrete": ("dr._core.solve_discrete(A, B, Q, R, Q_final, N=N)",
                             dict(A="A3", B="B3", Q="np.eye(3)", R="np.eye(2)", Q_final="np.eye(3)",
                                  N="np.zeros((3, 2))")),
    "_core.discretize": ("dr._core.discretize(A, B, dt, Q, R, intervals=intervals)",
                         dict(A="A3", B="B3", dt="0.05", Q="np.eye(3)", R="np.eye(2)", intervals="4")),
    "_core.solve_continuous": ("dr._core.solve_continuous(A, B, dt, Q, R, Q_final)",
                               dict(A="A3", B="B3", dt="0.05", Q="np.eye(3)", R="np.eye(2)", Q_final="np.eye(3)")),
    "_core.solve_stationary": ("dr._core.solve_stationary(A, B, Q, R)",
                               dict(A="0.9 * np.eye(3)", B="B3", Q="np.eye(3)", R="np.eye(2)")),
    "_core.linearize": ("dr._core.linearize(model, z_ref, dt)",
                        dict(model="chain2", z_ref="np.zeros((4, 4))", dt="0.01")),
    "_core.track": ("dr._core.track(model, q0, qd0, q_ref, kp=kp, kd=kd, dt=dt)",
                    dict(model="planar", q0="np.zeros(2)", qd0="np.zeros(2)", q_ref="0.1 * np.ones((6, 2))",
                         kp="50.0 * np.ones(2)", kd="5.0 * np.ones(2)", dt="0.01")),
    "_core.spd_step": ("dr._core.spd_step(M, C, q, qd, q_ref_next, qd_ref_next, kp, kd, dt)",
                       dict(M="np.eye(2)", C="np.zeros(2)", q="np.zeros(2)", qd="np.zeros(2)",
                            q_ref_next="np.ones(2)", qd_ref_next="np.zeros(2)", kp="10.0 * np.ones(2)",
                            kd="np.ones(2)", dt="0.01")),
    "_core.pd_gain": ("dr._core.pd_gain(kp, kd, n)", dict(kp="np.ones(2)", kd="np.ones(2)", n="4")),
    "_core.minimize_lbfgs": ("dr._core.minimize_lbfgs(lambda x: (float(x @ x), 2 * x), x0, lower, upper)",
                             dict(x0="np.ones(2)", lower="-np.ones(2)", upper="np.ones(2)")),
    "_core.expm_bordered": ("dr._core.expm_bordered(H, C)", dict(H="0.1 * np.eye(3)", C="np.ones((3, 2))")),
    "_core.crowd_splat": ("dr._core.crowd_splat(grid, positions, velocities, lam)",
                          dict(grid="cgrid", positions="np.ones((1, 2))", velocities="np.zeros((1, 2))",
                               lam="2.0")),
    "_core.crowd_min_distance": ("dr._core.crowd_min_distance(positions, delta_min)",
                                 dict(positions="np.array([[1.0, 1.0], [1.1, 1.0]])", delta_min="0.5")),
    "_core.cloth_blend": ("dr._core.cloth_blend(path, control_points, weight)",
                          dict(path="np.zeros((5, 3))", control_points="np.ones((4, 3))", weight="0.5")),
    "_core.cloth_retime": ("dr._core.cloth_retime(path, reference)",
                           dict(path="np.zeros((5, 3))", reference="np.ones((7, 3))")),
    "ClothGrid.rollout": ("cl.rollout(x0, v0, dt, steps)",
                          dict(x0="cl.positions0", v0="np.zeros_like(cl.positions0)", dt="0.001", steps="3")),
    # helpers of the Python layer (arrays in, arrays out)
    "chain.state": ("chain.state(q, qd)", dict(q="np.zeros((3, 2))", qd="np.ones((3, 2))"),
                    {"aliases": {"q": ("qd",), "qd": ("q",)}}),
    "chain.positions": ("chain.positions(planar, q)", dict(q="np.zeros((3, 2))")),
    "chain.energy": ("chain.energy(planar, q, qd)", dict(q="np.zeros((3, 2))", qd="np.ones((3, 2))"),
                     {"aliases": {"q": ("qd",), "qd": ("q",)}}),
    "chain.tracking_errors": ("chain.tracking_errors(q, q_ref)", dict(q="np.zeros((4, 2))", q_ref="np.ones((4, 2))"),
                              {"allow_inf": True}),  # inf: the documented error of a diverged run (NaN rows in q)
    "fluid.project": ("fluid.project(basis, velocities)", dict(velocities="np.ones((2, grid.n_faces))")),
    "fluid.cell_image": ("fluid.cell_image(grid, q)", dict(q="np.ones(grid.n_cells)")),
    "fluid.disk": ("fluid.disk(r, segments=segments)", dict(r="0.2", segments="16"), {"long": {"segments"}}),
    "fluid.box": ("fluid.box(w, h)", dict(w="0.2", h="0.1")),
    "fluid.plate": ("fluid.plate(w, h, thickness)", dict(w="0.4", h="0.3", thickness="0.1")),
    "fluid.cell_volume": ("fluid.cell_volume(grid3, q)", dict(q="np.ones(grid3.n_cells)")),
    "fluid.pose6": ("fluid.pose6(position, rotation=rotation)", dict(position="np.zeros(3)", rotation="np.zeros(3)")),
    "fluid.rigid_velocity3d": ("fluid.rigid_velocity3d(pose, velocity, points)",
                               dict(pose="np.zeros(6)", velocity="np.ones(6)", points="np.ones((2, 3))")),
    "sph.block": ("sph.block(lo, hi, spacing)", dict(lo="(0.2, 0.0)", hi="(0.5, 0.3)", spacing="0.1"),
                  {"long": {"spacing"}}),
    "sph.box_walls": ("sph.box_walls(lo, hi, spacing, layers=layers)",
                      dict(lo="(0.0, 0.0)", hi="(1.0, 1.0)", spacing="0.1", layers="2"), {"long": {"layers"}}),
    "reduce.project": ("reduce.project(U, q)", dict(U="np.linalg.qr(rng.standard_normal((10, 3)))[0]",
                                                    q="np.ones((4, 10))")),
    "reduce.reconstruct": ("reduce.reconstruct(U, z)", dict(U="np.linalg.qr(rng.standard_normal((10, 3)))[0]",
                                                            z="np.ones((4, 3))")),
    "fem.reduced_forces": ("fem.reduced_forces(U, forces)", dict(U="np.linalg.qr(rng.standard_normal((12, 3)))[0]",
                                                                forces="np.ones((4, 12))")),
    "fem.tip_positions": ("fem.tip_positions(mesh, u, vertices)",
                          dict(u="np.zeros((2, 3 * mesh.num_vertices))", vertices="[0, 1]")),
    "cloth.control_window": ("cloth.control_window(distance, alpha, t_c=t_c)",
                             dict(distance="3", alpha="0.5", t_c="10")),
    "sim.summary": ("sim.summary(sim.simulate(chain2, np.zeros(4), 5, 0.01), dt, z_target=z_target)",
                    dict(dt="0.01", z_target="np.ones(4)")),
    "models.finite_difference_jacobian": ("models.finite_difference_jacobian(chain2, z, t=t, eps=eps)",
                                          dict(z="np.zeros(4)", t="0.0", eps="1e-6")),
    # methods of the core's objects
    "LQRSolution.cost_to_go": ("sol3.cost_to_go(x, step)", dict(x="np.ones(3)", step="1")),
    "Tracker.jump_to_nearest": ("tracker4.jump_to_nearest(z)", dict(z="np.ones(4)")),
    "Tracker.control_into": ("tracker4.control_into(z, w, w_fb)", dict(z="np.ones(4)", w="np.zeros(2)",
                                                                        w_fb="np.zeros(2)")),
    "Model.dynamics": ("chain2.dynamics(z, t)", dict(z="np.zeros(4)", t="0.0")),
    "Model.jacobian": ("chain2.jacobian(z, t)", dict(z="np.zeros(4)", t="0.0")),
    "SpringChain.energy": ("chain2.energy(z)", dict(z="np.zeros(4)")),
    "PlanarChain.forward_dynamics": ("planar.forward_dynamics(q, qd, tau)",
                                     dict(q="np.zeros(2)", qd="np.zeros(2)", tau="np.ones(2)")),
    "PlanarChain.dynamics_jacobian": ("planar.dynamics_jacobian(q, qd, tau)",
                                      dict(q="np.zeros(2)", qd="np.zeros(2)", tau="np.ones(2)")),
    "PlanarChain.mass_matrix": ("planar.mass_matrix(q)", dict(q="np.zeros(2)")),
    "PlanarChain.bias_forces": ("planar.bias_forces(q, qd)", dict(q="np.zeros(2)", qd="np.ones(2)")),
    "PlanarChain.joint_positions": ("planar.joint_positions(q)", dict(q="np.zeros(2)")),
    "PlanarChain.joint_positions_along": ("planar.joint_positions_along(q)", dict(q="np.zeros((3, 2))")),
    "PlanarChain.kinetic_energy": ("planar.kinetic_energy(q, qd)", dict(q="np.zeros(2)", qd="np.ones(2)")),
    "PlanarChain.potential_energy": ("planar.potential_energy(q)", dict(q="np.zeros(2)")),
    "PlanarChain.energies_along": ("planar.energies_along(q, qd)", dict(q="np.zeros((3, 2))", qd="np.ones((3, 2))")),
    "PlanarChain.inverse_dynamics_along": ("planar.inverse_dynamics_along(q, qd, qdd)",
                                           dict(q="np.zeros((3, 2))", qd="np.zeros((3, 2))", qdd="np.ones((3, 2))")),
    "MACGrid2D.advect_velocity": ("grid.advect_velocity(u, dt)", dict(u="np.ones(grid.n_faces)", dt="0.1")),
    "MACGrid2D.advect_cells": ("grid.advect_cells(u, q, dt)",
                               dict(u="np.ones(grid.n_faces)", q="np.ones(grid.n_cells)", dt="0.1")),
    "MACGrid2D.divergence": ("grid.divergence(u)", dict(u="np.ones(grid.n_faces)")),
    "MACGrid2D.velocity_at": ("grid.velocity_at(u, points)",
                              dict(u="np.ones(grid.n_faces)", points="np.array([[0.5, 0.5]])")),
    "MACGrid2D.wind": ("grid.wind(center, direction, magnitude, width)",
                       dict(center="np.array([0.5, 0.5])", direction="np.array([1.0, 0.0])", magnitude="2.0",
                            width="0.3")),
    "MACGrid2D.max_divergence": ("grid.max_divergence(basis)", dict(basis="basis")),
    "FluidSim2D.step": ("fluid.FluidSim2D(grid, 0.01, 0.01).step(force)", dict(force="np.ones(grid.n_faces)")),
    "ReducedFluid.modes": ("red.modes(x)", dict(x="np.array([0.5, 0.5])")),
    "fluid.ParticlePD": ("fluid.ParticlePD(model, x_ref, dt, k_z, k_p, k_pdot)",
                         dict(model="fluid.FluidParticles(red, 1)", x_ref="np.full((5, 5), 0.5)", dt="0.01", k_z="1.0",
                              k_p="1.0", k_pdot="1.0")),
    "ParticlePD.control": ("fluid.ParticlePD(fluid.FluidParticles(red, 1), np.full((5, 5), 0.5), 0.01, 1.0, 1.0, 1.0)"
                           ".control(x, step)", dict(x="np.full(5, 0.4)", step="2")),
    "ParticlePD.gain": ("fluid.ParticlePD(fluid.FluidParticles(red, 1), np.full((5, 5), 0.5), 0.01, 1.0, 1.0, 1.0)"
                        ".gain(step)", dict(step="2")),
    "ParticlePD.with_gains": ("fluid.ParticlePD(fluid.FluidParticles(red, 1), np.full((5, 5), 0.5), 0.01)"
                              ".with_gains(k_z, k_p, k_pdot)", dict(k_z="1.0", k_p="1.0", k_pdot="1.0")),
    "ParticlePD.run": ("fluid.ParticlePD(fluid.FluidParticles(red, 1), np.full((5, 5), 0.5), 0.01, 1.0, 1.0, 1.0)"
                       ".run(x0, steps)", dict(x0="np.full(5, 0.4)", steps="3")),
    "ParticlePD.sweep": ("fluid.ParticlePD(fluid.FluidParticles(red, 1), np.full((5, 5), 0.5), 0.01)"
                         ".sweep(gains, x0, steps)", dict(gains="np.ones((2, 3))", x0="np.full(5, 0.4)", steps="3"),
                         {"allow_inf": True}),
    "Coupling.feedforward_single": ("fluid.Coupling(red, fluid.BoundaryBasis.build(red, fluid.box(0.4, 0.4), "
                                    "np.array([[0.5, 0.5, 0.0]]), 1, surface_spacing=0.3)).feedforward_single(pose, out)",
                                    dict(pose="(0.5, 0.5, 0.1)", out="np.zeros((1, 3), np.float32)")),
    "ReducedFluid.fit_viscosity": ("red.fit_viscosity(z0, energy, dt, w)",
                                   dict(z0="np.ones(3)", energy="np.linspace(3.0, 2.0, 5)", dt="0.01",
                                        w="np.zeros((4, 3))")),
    "ReducedFluid.match_viscosity": ("red.match_viscosity(run)",
                                     dict(run="fluid.full_run(grid, 4, 0.01, u0=grid.project(np.sin(np.arange("
                                              "grid.n_faces))))")),
    "ReducedFluid.velocity": ("red.velocity(z, points)", dict(z="np.ones(3)", points="np.array([[0.5, 0.5]])")),
    "ReducedFluid.rollout": ("red.rollout(z0, w, dt)", dict(z0="np.ones(3)", w="np.zeros((4, 3))", dt="0.01")),
    "ReducedFluid.dynamics": ("red.dynamics(z)", dict(z="np.ones(3)")),
    "ReducedFluid.jacobian": ("red.jacobian(z)", dict(z="np.ones(3)")),
    "ReducedFluid.advection_matrix": ("red.advection_matrix(z)", dict(z="np.ones(3)")),
    "MACGrid3D.divergence": ("grid3.divergence(u)", dict(u="np.ones(grid3.n_faces)")),
    "MACGrid3D.velocity_at": ("grid3.velocity_at(u, points)",
                              dict(u="np.ones(grid3.n_faces)", points="np.array([[0.5, 0.3, 0.3]])")),
    "Shape3D.closest_point": ("ball.closest_point(points)", dict(points="np.ones((2, 3))")),
    "Shape3D.inside": ("ball.inside(points)", dict(points="np.ones((2, 3))")),
    "Shape3D.surface": ("ball.surface(spacing)", dict(spacing="0.1"), {"long": {"spacing"}}),
    "ReducedFluid3D.modes": ("red3.modes(x)", dict(x="np.array([0.5, 0.3, 0.3])")),
    "ReducedFluid3D.velocity": ("red3.velocity(z, points)",
                                dict(z="np.ones(3)", points="np.array([[0.5, 0.3, 0.3]])")),
    "StVKModel.energy": ("stvk.energy(u)", dict(u="np.zeros(3 * mesh.num_vertices)")),
    "StVKModel.internal_forces": ("stvk.internal_forces(u)", dict(u="np.zeros(3 * mesh.num_vertices)")),
    "Simulator.step": ("fem.Simulator(stvk, 0.01).step(f_ext)", dict(f_ext="np.ones(3 * mesh.num_vertices)")),
    "Simulator.static_solve": ("fem.Simulator(stvk, 0.01).static_solve(f_ext)",
                               dict(f_ext="np.ones(3 * mesh.num_vertices)")),
    "Simulator.set_state": ("fem.Simulator(stvk, 0.01).set_state(u, v)",
                            dict(u="np.zeros(3 * mesh.num_vertices)", v="np.zeros(3 * mesh.num_vertices)")),
    "PredictionModel.jacobians": ("lin.jacobians(x, u)", dict(x="np.ones(3)", u="np.ones(2)")),
    "PredictionModel.vjp": ("lin.vjp(x, u, lam)", dict(x="np.ones(3)", u="np.ones(2)", lam="np.ones(3)")),
    "SPHFluid2D.set_sphere": ("sphf.set_sphere(centre, radius, velocity)",
                              dict(centre="np.array([0.5, 0.7])", radius="0.1", velocity="np.zeros(2)")),
    "SPHFluid2D.prediction_model": ("sphf.prediction_model(dt=dt)", dict(dt="0.01")),
    "SPHPrediction.pressure_acceleration": ("pred.pressure_acceleration(positions)",
                                            dict(positions="sph.state(sphf)[:pred.s]")),
    "Crowd.step": ("crowds.Crowd(cgrid, cparams, [crowds.Group(cgoal, [[1.5, 1.5]])]).step(dt)", dict(dt="1.0")),
    "Crowd.run": ("crowds.Crowd(cgrid, cparams, [crowds.Group(cgoal, [[1.5, 1.5]])]).run(steps, dt=dt)",
                  dict(steps="3", dt="1.0"), {"long": {"steps"}}),
    "ClothGrid.forces": ("cl.forces(x, v)", dict(x="cl.positions0", v="np.zeros_like(cl.positions0)")),
    "ClothGrid.energy": ("cl.energy(x)", dict(x="cl.positions0")),
    "ClothGrid.step": ("cl.step(x, v, dt)", dict(x="cl.positions0", v="np.zeros_like(cl.positions0)", dt="0.001")),
    "MotionModel.blend": ("motion.blend(clip, next_clip)", dict(clip="0", next_clip="1")),
    # --- the rest of the public API (fixtures that few entries need are built on first use: tests/fuzz_fixtures.py)
    "lqr.pd_gain": ("lqr.pd_gain(kp, kd, n, actuated=actuated)",
                    dict(kp="np.ones(2)", kd="np.ones(2)", n="4", actuated="[0, 1]")),
    "lqr.solve_stationary": ("lqr.solve_stationary(A, B, Q, R, N=N)",
                             dict(A="0.9 * np.eye(3)", B="B3", Q="np.eye(3)", R="np.eye(2)", N="np.zeros((3, 2))")),
    "lqr.solve_continuous_batch": ("lqr.solve_continuous_batch([dict(A=A, B=B, dt=dt, Q=Q, R=R, Q_final=Q_final)])",
                                   dict(A="A3", B="B3", dt="0.05", Q="1.0", R="1.0", Q_final="np.eye(3)"),
                                   # a huge Q swamps each discretized R_i (as for lqr.solve_continuous's Q)
                                   {"aliases": {"Q": ("R",)}}),
    "lqr.Discretization": ("lqr.Discretization(Phi, Gamma, Q, N, R, Rc, dt)",
                           dict(Phi="disc3.Phi", Gamma="disc3.Gamma", Q="disc3.Q", N="disc3.N", R="disc3.R",
                                Rc="disc3.Rc", dt="disc3.dt")),
    "lqr.Discretization.solve": ("disc3.solve(Q_final, alpha_Q=alpha_Q, alpha_R=alpha_R)",
                             dict(Q_final="np.eye(3)", alpha_Q="2.0", alpha_R="0.5"),
                             # alpha_Q scales the Q part of each discretized R_i: a huge one is reported as R_i
                             # singular (as for lqr.retune's alpha_Q)
                             {"aliases": {"alpha_Q": ("R",)}}),
    "lqr.LQRSolution": ("lqr.LQRSolution(K, P)", dict(K="sol3.K", P="sol3.P"), {"aliases": {"K": ("P",)}}),
    "mpc.run_servo": ("mpc.run_servo(mpc.ModelPlant(chain2, np.zeros(4), 0.01), q_ref, kp, kd, steps, qd_ref=qd_ref,"
                      " u_ff=u_ff)", dict(q_ref="np.ones(2)", kp="10.0", kd="1.0", steps="3", qd_ref="0.0",
                                          u_ff="np.zeros(2)"), {"long": {"steps"}}),
    "mpc.ModelPlant": ("mpc.ModelPlant(chain2, x0, dt, substeps=substeps, t0=t0, disturbance=disturbance)",
                       dict(x0="np.zeros(4)", dt="0.01", substeps="2", t0="0.0", disturbance="np.zeros((3, 2))")),
    "mpc.DiscretePlant": ("mpc.DiscretePlant(lin, x0, disturbance=disturbance)",
                          dict(x0="np.zeros(3)", disturbance="np.zeros((3, 2))")),
    "mpc.SPHPlant2D": ("mpc.SPHPlant2D(sphf, frame_steps)", dict(frame_steps="2")),
    "mpc.SPHPlant2D.launch_sphere": ("fx.sph_plant2d().launch_sphere(frame, centre, radius, velocity)",
                                 dict(frame="0", centre="np.array([0.5, 0.7])", radius="0.1",
                                      velocity="np.zeros(2)")),
    "mpc.SPHPlant3D": ("mpc.SPHPlant3D(fx.sph3d(), frame_steps)", dict(frame_steps="2")),
    "mpc.SPHPlant3D.launch_sphere": ("fx.sph_plant3d().launch_sphere(frame, centre, radius, velocity)",
                                 dict(frame="0", centre="np.array([0.3, 0.3, 0.5])", radius="0.1",
                                      velocity="np.zeros(3)")),
    "sph.SPHPrediction.vjp_controls": ("pred.vjp_controls(x, u, lam)",
                                   dict(x="sph.state(sphf)", u="np.zeros(pred.s)", lam="np.ones(pred.n)"),
                                   {"covers": ("PredictionModel.vjp_controls",)}),
    "sph.state": ("sph.state(fluid)", dict(fluid="sphf")),
    "sph.SPHFluid3D": ("sph.SPHFluid3D(fluid, boundary, spacing=spacing, h=h)",
                       dict(fluid="fx.sph3d_points()[0]", boundary="fx.sph3d_points()[1]", spacing="0.1",
                            h="0.13")),
    "sph.SPHFluid3D.step": ("fx.sph3d().step(force=force, steps=steps)",
                        dict(force="np.zeros((fx.sph3d().size, 3))", steps="2"), {"long": {"steps"}}),
    "sph.SPHFluid3D.set_state": ("fx.sph3d().set_state(positions, velocities)",
                             dict(positions="fx.sph3d_points()[0]", velocities="np.zeros_like(fx.sph3d_points()[0])")),
    "sph.SPHFluid3D.set_sphere": ("fx.sph3d().set_sphere(centre, radius, velocity)",
                              dict(centre="np.array([0.3, 0.3, 0.5])", radius="0.1", velocity="np.zeros(3)")),
    "sph.SPHFluid3D.prediction_model": ("fx.sph3d().prediction_model(dt=dt)", dict(dt="0.001")),
    "sph.SPHPrediction3D.pressure_acceleration": ("fx.pred3d().pressure_acceleration(positions)",
                                              dict(positions="fx.sph3d_points()[0].ravel()")),
    "chain.ExternalModel": ("chain.ExternalModel(planar.mass_matrix, planar.bias_forces, dofs)", dict(dofs="2")),
    "chain.ExternalModel.mass_matrix": ("chain.ExternalModel(planar.mass_matrix, planar.bias_forces, 2).mass_matrix(q)",
                                  dict(q="np.zeros(2)")),
    "chain.ExternalModel.bias_forces": ("chain.ExternalModel(planar.mass_matrix, planar.bias_forces, 2).bias_forces(q, qd)",
                                  dict(q="np.zeros(2)", qd="np.ones(2)")),
    "chain.PlanarChain.inverse_dynamics": ("planar.inverse_dynamics(q, qd, qdd)",
                                     dict(q="np.zeros(2)", qd="np.zeros(2)", qdd="np.ones(2)")),
    "chain.PlanarChain.linearize": ("planar.linearize(z_ref, tau_ref=tau_ref, threads=1)",
                              dict(z_ref="np.zeros((3, 4))", tau_ref="np.zeros((2, 2))")),
    "chain.crossfade": ("chain.crossfade(key_steps, key_q, kt, steps, power=power, floor=floor)",
                        dict(key_steps="[0, 8]", key_q="np.zeros((2, 2))", kt="10.0", steps="8", power="24",
                             floor="0.005"), {"long": {"steps"}}),
    "chain.largest_stable_dt": ("chain.largest_stable_dt(planar, lambda t: np.zeros((len(t), 2)),"
                                " lambda t: np.zeros((len(t), 2)), kp, kd_factor=kd_factor, duration=duration,"
                                " dts=dts, tolerance=tolerance)",
                                dict(kp="10.0", kd_factor="1.0", duration="0.05", dts="[0.01, 0.02]",
                                     tolerance="1.0")),
    "reduce.IncrementalPCA": ("reduce.IncrementalPCA(N, keep, mass=mass)", dict(N="6", keep="3", mass="np.ones(6)"),
                              {"long": {"N", "keep"}}),
    "reduce.IncrementalPCA.add": ("reduce.IncrementalPCA(6, 3).add(chunk)", dict(chunk="rng.standard_normal((4, 6))")),
    "reduce.IncrementalPCA.basis": ("fx.incremental_pca().basis(r)", dict(r="2")),
    "fem.TetMesh": ("fem.TetMesh(vertices, tets)",
                    dict(vertices="np.asarray(mesh.vertices)", tets="np.asarray(mesh.tets)"),
                    # vertices that collapse a tet are refused as that tet
                    {"aliases": {"vertices": ("tets",)}}),
    "fem.ReducedStVK": ("fem.ReducedStVK(stvk, U, alpha=alpha, beta=beta)",
                        dict(U="fx.reduced_stvk().U", alpha="0.1", beta="0.01")),
    "fem.ReducedStVK.energy": ("fx.reduced_stvk().energy(p)", dict(p="np.ones(2)")),
    "fem.ReducedStVK.internal_forces": ("fx.reduced_stvk().internal_forces(p)", dict(p="np.ones(2)")),
    "fem.ReducedStVK.tangent_stiffness": ("fx.reduced_stvk().tangent_stiffness(p)", dict(p="np.ones(2)")),
    "fem.ReducedStVK.stiffness_derivative": ("fx.reduced_stvk().stiffness_derivative(p, v)",
                                         dict(p="np.ones(2)", v="np.ones(2)")),
    "fem.ReducedStVK.full_displacement": ("fx.reduced_stvk().full_displacement(p)", dict(p="np.ones((3, 2))")),
    "fem.ReducedStVK.set_newton": ("fem.ReducedStVK(stvk, fx.reduced_stvk().U).set_newton(max_iterations, tolerance)",
                               dict(max_iterations="5", tolerance="1e-8")),
    "fem.StVKModel.stiffness_csc": ("stvk.stiffness_csc(u)", dict(u="np.zeros(3 * mesh.num_vertices)")),
    "fem.StVKModel.tangent_stiffness": ("stvk.tangent_stiffness(u)", dict(u="np.zeros(3 * mesh.num_vertices)")),
    "fem.Simulator.run_states": ("fem.Simulator(stvk, 0.01).run_states(forces)",
                             dict(forces="np.zeros((2, 3 * mesh.num_vertices))")),
    "fem.bottom_vertices": ("fem.bottom_vertices(mesh, axis=axis, tol=tol)", dict(axis="0", tol="1e-9")),
    "fem.cantilever": ("fem.cantilever(length, width, height, n=n)",
                       dict(length="1.0", width="0.1", height="0.1", n="(2, 1, 1)"), {"long": {"n"}}),
    "fem.creature": ("fem.creature(h)", dict(h="0.5")),
    "fem.stem": ("fem.stem(h, height=height, leaves=leaves, refine=refine)",
                 dict(h="0.1", height="3", leaves="((1, 1),)", refine="1"), {"long": {"height", "refine"}}),
    "fem.t_shape": ("fem.t_shape(h, stem=stem, bar=bar, base=base, refine=refine)",
                    dict(h="0.1", stem="(1, 1, 2)", bar="(3, 1, 1)", base="(1, 1, 1)", refine="1"),
                    {"long": {"refine"}}),
    "fem.centerline": ("fem.centerline(stvk, dt, forces)",
                       dict(dt="0.01", forces="np.zeros((2, 3 * mesh.num_vertices))")),
    "fem.enrich": ("fem.enrich(stvk, dt, forces, runs=runs, fraction=fraction, duration=duration, seed=seed)",
                   dict(dt="0.01", forces="np.ones((3, 3 * mesh.num_vertices))", runs="2", fraction="0.1",
                        duration="1", seed="0"), {"long": {"runs"}}),
    "fem.load_mesh": ("fem.load_mesh(path)", dict(path="fx.mesh_file()")),
    "fem.project_states": ("fem.project_states(fx.reduced_stvk(), u, v)",
                           dict(u="np.zeros((2, 3 * mesh.num_vertices))", v="np.ones((2, 3 * mesh.num_vertices))")),
    "fem.surface_triangles": ("fem.surface_triangles(mesh)", dict(mesh="mesh")),
    "fem.vertices_where": ("fem.vertices_where(mesh, lambda X: X[:, 0] < 0.05)", dict(mesh="mesh")),
    # fluids: grids, shapes, full runs, boundary bases, couplings and reduced scenes (2D, then 3D)
    "fluid.face_positions": ("fluid.face_positions(grid)", dict(grid="grid")),
    "fluid.face_positions3d": ("fluid.face_positions3d(grid)", dict(grid="grid3")),
    "fluid.basis_bytes": ("fluid.basis_bytes(grid3, r)", dict(r="4")),
    "fluid.c_shape": ("fluid.c_shape(outer, inner, opening=opening, segments=segments)",
                      dict(outer="0.15", inner="0.08", opening="1.5", segments="8"), {"long": {"segments"}}),
    "fluid.Shape2D": ("fluid.Shape2D(polygon)", dict(polygon="np.array([[0.0, 0.0], [0.1, 0.0], [0.0, 0.1]])")),
    "fluid.Shape2D.inside": ("fx.cshape().inside(points)", dict(points="np.array([[0.0, 0.0], [0.12, 0.0]])")),
    "fluid.Shape2D.surface": ("fx.cshape().surface(spacing)", dict(spacing="0.05"),
                        {"long": {"spacing"}, "aliases": {"spacing": ("surface_spacing",)}}),
    "fluid.Obstacle": ("fluid.Obstacle(fx.cshape(), pose=pose, velocity=velocity)",
                       dict(pose="np.array([0.5, 0.5, 0.1])", velocity="np.zeros(3)")),
    "fluid.ReducedFluid.mode_gradients": ("red.mode_gradients(x)", dict(x="np.array([0.5, 0.5])")),
    "fluid.full_run": ("fluid.full_run(grid, steps, dt, particles=particles, viscosity=viscosity, density=density,"
                       " u0=u0)", dict(steps="2", dt="0.01", particles="np.array([[0.5, 0.5]])", viscosity="0.01",
                                       density="np.ones(grid.n_cells)", u0="np.ones(grid.n_faces)"),
                       {"long": {"steps"}}),
    "fluid.FluidSim2D.run_obstacles": ("fluid.FluidSim2D(fx.fluid2d()[0], 0.0, 0.01).run_obstacles(forces, [fx.cshape()],"
                                 " poses, velocities)",
                                 dict(forces="np.zeros((2, fx.fluid2d()[0].n_faces))",
                                      poses="np.tile([0.5, 0.5, 0.1], (2, 1))", velocities="np.zeros((2, 3))"),
                                 # a pose that puts the obstacle outside the domain is refused as that obstacle
                                 {"aliases": {"forces": ("poses", "velocities"), "poses": ("obstacle",)}}),
    "fluid.FluidSim2D.run_particle_winds": ("fx.wind_sim().run_particle_winds(directions, magnitudes, width)",
                                      dict(directions="np.array([[1.0, 0.0], [0.0, 1.0]])",
                                           magnitudes="np.array([2.0])", width="0.2")),
    "fluid.BoundaryBasis.build": ("fluid.BoundaryBasis.build(fx.fluid2d()[1], fx.cshape(), poses, p,"
                            " surface_spacing=surface_spacing, threads=1)",
                            dict(poses="fx.training_poses()", p="3", surface_spacing="0.15")),
    "fluid.Coupling": ("fluid.Coupling(fx.fluid2d()[1], fx.boundary_basis(), pose_table=(xs, ys, thetas),"
                       " precompute='both', compress=compress, threads=1)",
                       dict(xs="np.array([0.45, 0.55])", ys="np.array([0.45, 0.55])", thetas="np.array([0.0, 0.3])",
                            compress="2"), {"aliases": {"xs": ("pose_table",), "ys": ("pose_table",),
                                                         "thetas": ("pose_table",)}}),
    "fluid.Coupling.feedback": ("fx.coupling().feedback(pose)", dict(pose="np.array([0.5, 0.5, 0.1])")),
    "fluid.Coupling.feedforward": ("fx.coupling().feedforward(pose)", dict(pose="np.array([0.5, 0.5, 0.1])")),
    "fluid.ReducedScene": ("fluid.ReducedScene(reduced, [fx.coupling()])", dict(reduced="fx.fluid2d()[1]")),
    "fluid.ReducedScene.step": ("fx.scene2d().step(z, w, dt, poses, velocities)",
                          dict(z="np.ones(4)", w="np.zeros(4)", dt="0.01", poses="np.array([[0.5, 0.5, 0.1]])",
                               velocities="np.zeros((1, 3))")),
    "fluid.ReducedScene.advect_particles": ("fx.scene2d().advect_particles(points, z, boundary_coeffs, poses, dt)",
                                      dict(points="np.array([[0.2, 0.2], [0.8, 0.3]])", z="fx.scene2d_state()[0]",
                                           boundary_coeffs="fx.scene2d_state()[1]", poses="fx.scene2d_state()[2]",
                                           dt="0.01")),
    "fluid.ReducedScene.advect_smoke": ("fx.scene2d().advect_smoke(density, z, boundary_coeffs, poses, dt)",
                                  dict(density="np.ones(fx.fluid2d()[0].n_cells)", z="fx.scene2d_state()[0]",
                                       boundary_coeffs="fx.scene2d_state()[1]", poses="fx.scene2d_state()[2]",
                                       dt="0.01")),
    "fluid.ReducedScene.surface_energy_removed": ("fx.scene2d().surface_energy_removed(z, boundary_coeffs, poses,"
                                            " velocities)",
                                            dict(z="fx.scene2d_state()[0]", boundary_coeffs="fx.scene2d_state()[1]",
                                                 poses="fx.scene2d_state()[2]", velocities="np.zeros((1, 3))")),
    "fluid.ReducedScene.surface_speed": ("fx.scene2d().surface_speed(object, z, boundary_coeffs, poses)",
                                   dict(object="0", z="fx.scene2d_state()[0]", boundary_coeffs="fx.scene2d_state()[1]",
                                        poses="fx.scene2d_state()[2]")),
    "fluid.ReducedScene.velocity_at": ("fx.scene2d().velocity_at(points, z, boundary_coeffs, poses)",
                                 dict(points="np.array([[0.2, 0.2], [0.8, 0.3]])", z="fx.scene2d_state()[0]",
                                      boundary_coeffs="fx.scene2d_state()[1]", poses="fx.scene2d_state()[2]")),
    "fluid.ReducedScene.velocity_field": ("fx.scene2d().velocity_field(z, boundary_coeffs, poses)",
                                    dict(z="fx.scene2d_state()[0]", boundary_coeffs="fx.scene2d_state()[1]",
                                         poses="fx.scene2d_state()[2]")),
    "fluid.MACGrid3D.max_divergence": ("grid3.max_divergence(basis)", dict(basis="basis3")),
    "fluid.ReducedFluid3D.mode_gradients": ("red3.mode_gradients(x)", dict(x="np.array([0.5, 0.3, 0.3])")),
    "fluid.full_run3d": ("fluid.full_run3d(grid3, steps, dt, particles=particles, density=density, u0=u0,"
                         " viscosity=viscosity, buoyancy=buoyancy, tol=tol)",
                         dict(steps="2", dt="0.01", particles="np.array([[0.5, 0.3, 0.3]])",
                              density="np.ones(grid3.n_cells)", u0="np.ones(grid3.n_faces)", viscosity="0.01",
                              buoyancy="(0.0, 1.0, 0.0)", tol="1e-8"), {"long": {"steps"}}),
    "fluid.Shape3D": ("fluid.Shape3D(vertices, triangles)",
                      dict(vertices="np.asarray(ball.vertices)", triangles="np.asarray(ball.triangles)"),
                      # vertices that flatten the surface are refused as the triangles' volume
                      {"aliases": {"vertices": ("triangles",)}}),
    "fluid.Shape3D.box": ("fluid.Shape3D.box(w, h, d)", dict(w="0.2", h="0.1", d="0.3")),
    "fluid.Shape3D.plate": ("fluid.Shape3D.plate(w, h, thickness, aperture=aperture)",
                      dict(w="0.4", h="0.3", thickness="0.05", aperture="np.array([0.1, 0.1])")),
    "fluid.Shape3D.sphere": ("fluid.Shape3D.sphere(r, subdivisions)", dict(r="0.2", subdivisions="1"),
                       {"long": {"subdivisions"}}),
    "fluid.Obstacle3D.inside": ("fluid.Obstacle3D(ball, np.array([0.5, 0.4, 0.4])).inside(points)",
                          dict(points="np.array([[0.5, 0.4, 0.4], [0.0, 0.0, 0.0]])")),
    "fluid.Obstacle3D.rigid_velocity": ("fluid.Obstacle3D(ball, np.array([0.5, 0.4, 0.4]), velocity=np.ones(3))"
                                  ".rigid_velocity(points)",
                                  dict(points="np.array([[0.5, 0.4, 0.4], [0.0, 0.0, 0.0]])")),
    "fluid.BoundaryBasis3D.build": ("fluid.BoundaryBasis3D.build(fx.fluid3d()[1], fx.plate3d(), poses, p,"
                              " surface_spacing=surface_spacing, local_size=local_size, threads=1)",
                              dict(poses="fx.training_poses3d()", p="3", surface_spacing="0.2",
                                   local_size="np.array([0.4, 0.4, 0.4])")),
    "fluid.Coupling3D": ("fluid.Coupling3D(fx.fluid3d()[1], fx.boundary_basis3d(), path=path, precompute='both',"
                         " compress=compress, threads=1)",
                         dict(path="np.array([[0.5, 0.45, 0.5, 0.0, 0.0, 0.0], [0.5, 0.55, 0.5, 0.1, 0.0, 0.0]])",
                              compress="2")),
    "fluid.Coupling3D.feedback": ("fx.coupling3d().feedback(pose)", dict(pose="np.array([0.5, 0.5, 0.5, 0.1, 0.0, 0.0])")),
    "fluid.Coupling3D.feedforward": ("fx.coupling3d().feedforward(pose)",
                               dict(pose="np.array([0.5, 0.5, 0.5, 0.1, 0.0, 0.0])")),
    "fluid.Coupling3D.node_pose": ("fx.coupling3d_table().node_pose(n)", dict(n="3"), {"aliases": {"n": ("node",)}}),
    "fluid.ReducedScene3D": ("fluid.ReducedScene3D(reduced, [fx.coupling3d()])", dict(reduced="fx.fluid3d()[1]")),
    "fluid.ReducedScene3D.step": ("fx.scene3d().step(z, w, dt, poses, velocities)",
                            dict(z="np.ones(4)", w="np.zeros(4)", dt="0.01",
                                 poses="np.array([[0.5, 0.5, 0.5, 0.1, 0.0, 0.0]])", velocities="np.zeros((1, 6))")),
    "fluid.ReducedScene3D.advect_particles": ("fx.scene3d().advect_particles(points, z, boundary_coeffs, poses, dt,"
                                        " drift=drift, threads=1)",
                                        dict(points="np.array([[0.2, 0.2, 0.2], [0.8, 0.3, 0.5]])",
                                             z="fx.scene3d_state()[0]", boundary_coeffs="fx.scene3d_state()[1]",
                                             poses="fx.scene3d_state()[2]", dt="0.01", drift="np.zeros(3)")),
    "fluid.ReducedScene3D.surface_energy_removed": ("fx.scene3d().surface_energy_removed(z, boundary_coeffs, poses,"
                                              " velocities)",
                                              dict(z="fx.scene3d_state()[0]", boundary_coeffs="fx.scene3d_state()[1]",
                                                   poses="fx.scene3d_state()[2]", velocities="np.zeros((1, 6))")),
    "fluid.ReducedScene3D.surface_speed": ("fx.scene3d().surface_speed(object, z, boundary_coeffs, poses)",
                                     dict(object="0", z="fx.scene3d_state()[0]",
                                          boundary_coeffs="fx.scene3d_state()[1]", poses="fx.scene3d_state()[2]")),
    "fluid.ReducedScene3D.velocity_at": ("fx.scene3d().velocity_at(points, z, boundary_coeffs, poses)",
                                   dict(points="np.array([[0.2, 0.2, 0.2], [0.8, 0.3, 0.5]])",
                                        z="fx.scene3d_state()[0]", boundary_coeffs="fx.scene3d_state()[1]",
                                        poses="fx.scene3d_state()[2]")),
    "fluid.ReducedScene3D.velocity_field": ("fx.scene3d().velocity_field(z, boundary_coeffs, poses)",
                                      dict(z="fx.scene3d_state()[0]", boundary_coeffs="fx.scene3d_state()[1]",
                                           poses="fx.scene3d_state()[2]")),    # cloth
    "cloth.ClothGrid.add_collider": ("cloth.ClothGrid(3, 3, 0.1, 0.02, 10.0, 0.0, 0.0, 0.0).add_collider(collider)",
                               dict(collider="cloth.Sphere((0.0, 0.0, 0.0), 0.1, 100.0)")),
    "cloth.ClothGrid.as_model": ("cl.as_model(controlled)", dict(controlled="[4]")),
    "cloth.ClothGrid.force_jacobians": ("cl.force_jacobians(x, v)",
                                  dict(x="cl.positions0", v="np.zeros_like(cl.positions0)")),
    "cloth.ClothGrid.node": ("cl.node(i, j)", dict(i="1", j="2")),
    "cloth.corner_region": ("cloth.corner_region(cl, size, corner=corner)", dict(size="2", corner="(0, 0)")),
    "cloth.curl_goals": ("cloth.curl_goals(cl, x_at_tc, region, curl_deg, rotate_deg)",
                         dict(x_at_tc="cl.positions0", region="[0, 1]", curl_deg="30.0", rotate_deg="10.0"),
                         {"aliases": {"x_at_tc": ("positions",)}}),
    "cloth.plan": ("cloth.plan(fx.cloth_scene()[0], fx.cloth_scene()[1], [(node, t_c, goal)], dt, alpha=alpha,"
                   " beta=beta, gamma=gamma, delta=delta, seek_angle=seek_angle, samples=samples, azimuths=azimuths,"
                   " widen=widen, f_max=f_max, tolerance=tolerance)",
                   dict(node="10", t_c="30", goal="fx.cloth_goal()", dt="0.002", alpha="500.0", beta="1.0",
                        gamma="1e-6", delta="1.0", seek_angle="30.0", samples="5", azimuths="2", widen="0.3",
                        f_max="10.0", tolerance="1e-6"), {"long": {"samples", "azimuths"}}),
    "cloth.follow": ("cloth.follow(fx.cloth_scene()[0], fx.cloth_scene()[1], fx.cloth_scene()[3], paths, dt,"
                     " beta=beta, gamma=gamma, f_max=f_max, tolerance=tolerance)",
                     dict(paths="fx.cloth_scene()[3].paths", dt="0.002", beta="1.0", gamma="1e-6", f_max="10.0",
                          tolerance="1e-6")),
    "cloth.apply": ("cloth.apply(fx.cloth_scene()[0], x0, v0, dt, steps, fx.cloth_scene()[3])",
                    dict(x0="fx.cloth_scene()[1].x[0]", v0="fx.cloth_scene()[1].v[0]", dt="0.002", steps="40"),
                    # x: the core's name for the positions, checked (springs of zero length) where the run starts
                    {"long": {"steps"}, "aliases": {"x0": ("x",)}}),    # crowds
    "crowds.Params": ("crowds.Params(f_max, rho_min, rho_max, lam, delta_min, alpha, beta, gamma, f_min=f_min,"
                      " s_min=s_min, s_max=s_max, flow_floor=flow_floor)",
                      dict(f_max="0.12", rho_min="0.001", rho_max="0.056", lam="10.0", delta_min="0.5", alpha="0.0",
                           beta="1.0", gamma="0.0", f_min="0.0", s_min="0.0", s_max="1.0", flow_floor="0.0")),
    "crowds.Agent": ("crowds.Agent(path, radius, discomfort_ahead=discomfort_ahead, speed_ahead=speed_ahead,"
                     " lookahead=lookahead)",
                     dict(path="np.array([[2.0, 2.0], [3.0, 2.0]])", radius="1.0", discomfort_ahead="0.5",
                          speed_ahead="0.1", lookahead="2")),
    "crowds.Group": ("crowds.Group(goal, positions)", dict(goal="cgoal", positions="[[1.5, 1.5]]")),
    "crowds.CrowdGrid.set_periodic": ("crowds.CrowdGrid(8, 8).set_periodic(mask, green_fraction, period, phase=phase)",
                               dict(mask="np.eye(8, dtype=bool)", green_fraction="0.5", period="10.0",
                                    phase="1.0")),
    "crowds.CrowdGrid.red": ("fx.periodic_grid().red(time)", dict(time="3.0")),
    "crowds.Crowd.fields": ("fx.crowd().fields(group)", dict(group="0"), {"allow_inf": True}),
    "crowds.Crowd.occupied": ("fx.crowd().occupied(group)", dict(group="0")),    # characters
    "characters.Skeleton": ("characters.Skeleton(parents, offsets, mirror=mirror)",
                            dict(parents="list(walker.parents)", offsets="np.asarray(walker.offsets)",
                                 mirror="list(walker.mirror)")),
    "characters.ClipSet": ("characters.ClipSet(poses, constraint_frames, stance_foot, gait, params)",
                           dict(poses="[np.array(p) for p in clips.poses]", constraint_frames="clips.constraint_frames",
                                stance_foot="clips.stance_foot", gait="clips.gait", params="dict(clips.params)")),
    "characters.ClipSet.gait_index": ("clips.gait_index(gait)", dict(gait="[0]")),
    "characters.ClipSet.mirrored": ("clips.mirrored(k)", dict(k="0")),
    "characters.ClipSet.subset": ("clips.subset(indices)", dict(indices="[0, 1]")),
    "characters.mirror_poses": ("characters.mirror_poses(walker, poses)", dict(poses="np.asarray(clips.poses[0])")),
    "characters.write_bvh": ("characters.write_bvh(fx.tmpdir() + '/out.bvh', walker, poses, dt=dt)",
                             dict(poses="np.asarray(clips.poses[0])[:3]", dt="1 / 30")),
    "characters.load_bvh": ("characters.load_bvh(path, scale=scale)", dict(path="fx.bvh_file()", scale="1.0")),
    "characters.basis.polynomial": ("characters.basis.polynomial(var, degree, scale=scale)",
                                    dict(var="'d'", degree="2", scale="2.0"), {"long": {"degree"}}),
    "characters.basis.gaussian": ("characters.basis.gaussian(var, a, b, n, sigma2=sigma2)",
                                  dict(var="'u'", a="0.0", b="1.5", n="3", sigma2="2.0"), {"long": {"n"}}),
    "characters.basis.Basis": ("characters.basis.Basis(products)", dict(products="fx.nav_basis().products")),
    "characters.basis.Basis.feature_bounds": ("fx.nav_basis().feature_bounds(nav, points=points)", dict(points="11")),
    "characters.basis.Basis.evaluate": ("fx.nav_basis().evaluate(states, task=nav)", dict(states="np.array([[0.0, 0.1, 0.2]])")),
    "characters.FixedObstacle": ("characters.FixedObstacle(motion, gamma_x=gamma_x, gamma_O=gamma_O, sigma_O=sigma_O,"
                                 " gamma_psi=gamma_psi, gamma_rho=gamma_rho, offset=offset,"
                                 " obstacle_samples=obstacle_samples)",
                                 dict(gamma_x="0.1", gamma_O="10.0", sigma_O="0.5", gamma_psi="1.0", gamma_rho="1.0",
                                      offset="0.5", obstacle_samples="2"), {"long": {"obstacle_samples"}}),
    "characters.MovingObstacle": ("characters.MovingObstacle(motion, gamma_O=gamma_O, sigma_O=sigma_O,"
                                  " gamma_psi=gamma_psi, gamma_rho=gamma_rho, u_dot=u_dot, v_dot=v_dot,"
                                  " obstacle_samples=obstacle_samples)",
                                  dict(gamma_O="10.0", sigma_O="0.5", gamma_psi="1.0", gamma_rho="1.0", u_dot="0.3",
                                       v_dot="-0.2", obstacle_samples="2"),
                                  {"long": {"obstacle_samples"},
                                   "aliases": {"u_dot": ("obstacle velocity",), "v_dot": ("obstacle velocity",)}}),
    "characters.SpinningNavigation": ("characters.SpinningNavigation(motion, gamma_psi=gamma_psi, gamma_rho=gamma_rho,"
                                      " gamma_omega=gamma_omega, spin=spin)",
                                      dict(gamma_psi="1.0", gamma_rho="1.0", gamma_omega="1.0", spin="2.0")),
    "characters.Navigation.transition_costs": ("nav.transition_costs(states)", dict(states="np.array([[0.0, 0.1, 0.2]])"),
                                    {"covers": ("FixedObstacle.transition_costs", "MovingObstacle.transition_costs",
                                                "SpinningNavigation.transition_costs")}),
    "characters.learn": ("characters.learn(fx.navigation(), fx.nav_basis(), samples, alpha=alpha,"
                         " max_iterations=max_iterations, solver='scipy', bounds=bounds)",
                         dict(samples="characters.samples(fx.navigation(), per_dim=2)", alpha="0.8",
                              max_iterations="5", bounds="1e4"), {"long": {"max_iterations"}}),
    "characters.tabulate": ("characters.tabulate(lambda g: characters.Navigation(fx.motion(), gamma_x=g), values,"
                            " fx.nav_basis(), samples, parameter='gamma_x', mode='interpolate', alpha=0.8,"
                            " solver='scipy', bounds=1e4, max_iterations=5)",
                            dict(values="[0.1, 0.2]", samples="characters.samples(fx.navigation(), per_dim=2)"),
                            # each value is refused as the task parameter it stands for
                            {"aliases": {"values": ("gamma_x",)}}),
    "characters.ValueFunction.value": ("fx.value_function().value(states)", dict(states="np.array([[0.0, 0.1, 0.2]])")),
    "characters.GridValueFunction.value": ("fx.grid_value_function().value(states)",
                                dict(states="np.array([[0.0, 0.1, 0.2]])")),
    "characters.ValueFunctionTable": ("characters.ValueFunctionTable('gamma_x', values, fx.value_table().functions,"
                                      " 'interpolate')", dict(values="[0.1, 0.2]")),
    "characters.ValueFunctionTable.function_for": ("fx.value_table().function_for(characters.Navigation(fx.motion(),"
                                        " gamma_x=gamma_x))", dict(gamma_x="0.15")),
    "characters.Controller": ("characters.Controller(fx.navigation(), value_function)",
                              dict(value_function="fx.value_function()")),
    "characters.Controller.choose": ("fx.controller().choose(state)", dict(state="np.array([0.0, 0.1, 0.2])")),
    "characters.Controller.run": ("fx.controller().run(state0, steps)", dict(state0="np.array([0.0, 0.1, 0.2])", steps="3"),
                       {"long": {"steps"}}),
    "characters.crowd": ("characters.crowd([fx.obstacle_controller()] * 2, starts, steps, radius,"
                         " encounter_distance=encounter_distance, dt=dt)",
                         dict(starts="np.array([[0.0, 0.0, 0.0, 0.0], [2.0, 0.0, 3.0, 1.0]])", steps="2",
                              radius="3.0", encounter_distance="0.5", dt="0.1"), {"long": {"steps"}}),    # MuJoCo plants (skipped without the optional dependency)
    "mujoco.nx": ("dmj.nx(model)", dict(model="mjm")),
    "mujoco.state": ("dmj.state(mjm, data)", dict(data="mjd")),
    "mujoco.set_state": ("dmj.set_state(mjm, _mj.MjData(mjm), x)", dict(x="mjx")),
    "mujoco.qpos_of": ("dmj.qpos_of(mjm, x)", dict(x="mjx")),
    "mujoco.tangent_of": ("dmj.tangent_of(mjm, qpos, qvel=qvel)",
                          dict(qpos="mjd.qpos.copy()", qvel="np.zeros(mjm.nv)"), {"aliases": {"qpos": ("qvel",)}}),
    "mujoco.supported_mass": ("dmj.supported_mass(model)", dict(model="mjm")),
    "mujoco.normalize_quaternions": ("dmj.normalize_quaternions(mjm, qpos)", dict(qpos="np.tile(mjd.qpos, (2, 1))")),
    "mujoco.reference_rollout": ("dmj.reference_rollout(mjm, x0, ctrl)", dict(x0="mjx", ctrl="np.zeros((3, 1))")),
    "mujoco.zordan_hodgins_schedule": ("dmj.zordan_hodgins_schedule(steps, dt, contact_steps, k_t, k_r, t_e, t_f)",
                                       dict(steps="10", dt="0.01", contact_steps="[3]", k_t="1.0", k_r="0.2",
                                            t_e="0.02", t_f="0.03"), {"long": {"steps"}}),
    "mujoco.LQRTracker": ("dmj.LQRTracker(mjm, x_ref, K, ctrl_ref=ctrl_ref)",
                          dict(x_ref="np.tile(mjx, (4, 1))", K="np.zeros((3, mjm.nu, 2 * mjm.nv))",
                               ctrl_ref="np.zeros((3, mjm.nu))")),
    "mujoco.LQRTracker.from_linearization": ("dmj.LQRTracker.from_linearization(mjm, x_ref, ctrl_ref, Q, R, eps=eps,"
                                             " threads=1)",
                                             dict(x_ref="np.tile(mjx, (3, 1))", ctrl_ref="np.zeros((2, mjm.nu))",
                                                  Q="1.0", R="1.0", eps="1e-6"),
                                             # linearize's and the sweep's names: the reference, Q as Q_final
                                             {"aliases": {"x_ref": ("reference",), "Q": ("Q_final",)}}),
    "mujoco.LQRTracker.control": ("fx.mj_lqr(mjm).control(i, data)", dict(i="0", data="mjd")),
    "mujoco.SPDTracker": ("dmj.SPDTracker(mjm, qpos_ref, qvel_ref, kp, kd, tau_ff=tau_ff)",
                          dict(qpos_ref="np.tile(mjd.qpos, (4, 1))", qvel_ref="np.zeros((4, mjm.nv))", kp="10.0",
                               kd="1.0", tau_ff="np.zeros((3, mjm.nv))")),
    "mujoco.SPDTracker.control": ("fx.mj_spd(mjm).control(i, data)", dict(i="0", data="mjd")),
    "mujoco.SPDTracker.finish": ("fx.mj_spd(mjm).finish(u, qvel_next)",
                                 dict(u="np.zeros((3, mjm.nv))", qvel_next="np.zeros((3, mjm.nv))")),
    "mujoco.run": ("dmj.run(mjm, _mj.MjData(mjm), fx.mj_spd(mjm), steps, disturbance=disturbance,"
                   " max_state=max_state)",
                   dict(steps="3", disturbance="np.zeros((3, mjm.nv))", max_state="1e6"), {"long": {"steps"}}),
}

# Public callables that take arrays or numbers but are not fuzzed here, as fnmatch patterns over the names
# tests/test_fuzz_coverage.py gives them ('module.name', 'Class.method', 'module.Class.method'), each with the
# reason. Everything else public that takes data must have an entry in TABLE (or be named by an entry's "covers").
NOT_FUZZED = {
    "experiments.*": "the papers' scripted scenes: compositions of the entry points above at fixed, valid sizes "
                     "(run by tests/test_experiments*.py and the notebooks)",
    "plotting.*": "matplotlib drawing of finished results: no C++ call, NumPy/matplotlib refuse bad arrays",
    "characters.plotting.*": "matplotlib drawing of finished results: no C++ call",
    "executors.*": "dispatch of user functions to executors: arguments are functions, task lists and executors "
                   "(tests/test_executors*.py)",
    "io.*": "files: the corrupted-file corpus of tests/test_files.py drives io.load; io.save takes objects",
    "dr.save": "see io.*",
    "dr.load": "see io.*",
    "cli.*": "the command line (argparse refuses its own input)",
    # records of finished runs: plain containers of the arrays a run returned, never an input to the core
    "mpc.MPCResult": "a result record (dataclass of a finished solve's arrays)",
    "mpc.RecedingRun": "a result record (dataclass of a finished receding-horizon run)",
    "fluid.FullRun": "a result record (dataclass of a finished full run)",
    "fluid.FullRun3D": "a result record (dataclass of a finished 3D full run)",
    "mujoco.RunResult": "a result record (dataclass of a finished MuJoCo run)",
    "reduce.Basis": "a result record (dataclass: the basis, singular values and energy of a finished PCA)",
    "characters.CrowdResult": "a result record (dataclass of a finished crowd of characters)",
    "characters.Episode": "a result record (dataclass of a finished episode)",
    "characters.BVHClip": "a result record (dataclass of a loaded BVH file: characters.load_bvh is fuzzed)",
    "characters.ValueFunction": "a result record (dataclass of a finished learn: its value method is fuzzed)",
    "characters.GridValueFunction": "a result record (dataclass of a finished value iteration: its value method is "
                                    "fuzzed)",
}

# (entry, argument) whose refusals do not all name the argument yet: the open gaps, each with its reason.
# Everything else must name its argument (tests/test_fuzz.py).
UNNAMED_KNOWN: set = set()  # (none left: a discretized R_i's message names Q and alpha_Q, the clip ranges each name)

# Entries whose fuzzing found defects not fixed yet: entry -> the finding. tests/test_fuzz.py runs them apart,
# as expected failures (strict: an entry that passes must leave this list).
OPEN_FINDINGS: dict = {}

# label -> expression of the replaced argument, given its valid value V
MUTATIONS = {
    "None": "None",
    "nan": "np.full(np.shape(V), np.nan) if np.ndim(V) else float('nan')",
    "inf": "np.full(np.shape(V), np.inf) if np.ndim(V) else float('inf')",
    "-inf": "np.full(np.shape(V), -np.inf) if np.ndim(V) else float('-inf')",
    "minus one": "-1",
    "zero": "0",
    "huge": "1e308",
    "huge int": "10**12",
    "empty": "np.zeros((0,))",
    "empty 2-D": "np.zeros((0, 0))",
    "wrong shape": "np.zeros((3, 7, 5))",
    "transposed": "np.asarray(V).T.copy() if np.ndim(V) >= 2 else np.asarray(V)[None]",
    "strided": "np.repeat(np.asarray(V), 2, axis=0)[::2] if np.ndim(V) else V",
    "float32": "np.asarray(V, dtype=np.float32) if np.asarray(V).dtype.kind in 'iuf' else V",
    "float32 scalar": "np.float32(8.7)",
    "int64": "np.asarray(V).astype(np.int64) if np.asarray(V).dtype.kind in 'iuf' else V",
    "complex": "np.asarray(V) + 1j if np.asarray(V).dtype.kind in 'iuf' else 1j",
    "object": "np.array([None, 1.0], dtype=object)",
    "str": "'abc'",
    "list": "np.asarray(V).tolist()",
    "bool": "True",
}

ALLOWED = (TypeError, ValueError, MemoryError)


def _finite(result, depth=0, allow_inf=False):
    """Whether every number reachable in result (arrays, floats, tuples, dicts, result objects) is finite
    (not NaN with allow_inf). A result that flags its own divergence with the step (``diverged``) passes."""
    import numpy as np

    if getattr(result, "diverged", False) is True:
        return True
    if allow_inf:
        bad = lambda a: bool(np.any(np.isnan(a)))  # noqa: E731
    else:
        bad = lambda a: not bool(np.all(np.isfinite(a)))  # noqa: E731
    if depth > 3 or result is None or isinstance(result, (str, bytes, bool)):
        return True
    if isinstance(result, (float, np.floating)):
        return not bad(result)
    if isinstance(result, np.ndarray):
        return result.dtype.kind not in "fc" or not bad(result)
    if isinstance(result, (tuple, list)):
        return all(_finite(r, depth + 1, allow_inf) for r in result)
    if isinstance(result, dict):
        return all(_finite(r, depth + 1, allow_inf) for r in result.values())
    if type(result).__module__.startswith("directable"):
        for name in ("states", "controls", "u", "K", "P", "q", "qd", "tau", "positions", "velocities", "x", "v"):
            try:
                value = getattr(result, name)
            except Exception:
                continue
            if not callable(value) and not _finite(value, depth + 1, allow_inf):
                return False
    return True


def names_argument(message, arg, aliases=()):
    """Whether an error message names the argument that was mutated: its
    name (or the name the maths gives it, ``aliases``) as a word, or
    pybind11's refusal of the call, which prints the signature with every
    argument's name and type next to what it received."""
    import re

    if "incompatible function arguments" in message or "incompatible constructor arguments" in message:
        return True
    return any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", message)
               for name in (arg, *aliases))


def _function(env, entry):
    """The entry's call as a function of its named arguments."""
    call, valid = TABLE[entry][:2]
    return eval(f"lambda {', '.join(valid)}: {call}", env)


def _classify(fn, allow_inf=False):
    """('ok', '') | ('raised', 'Type: message') | ('bad', why)."""
    try:
        result = fn()
    except ALLOWED as exc:
        return "raised", f"{type(exc).__name__}: {exc}"
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - the contract forbids any other type
        return "bad", f"unexpected {type(exc).__name__}: {exc}"
    if not _finite(result, allow_inf=allow_inf):
        return "bad", "returned non-finite values"
    return "ok", ""


def run_entries(entries, hypothesis_examples=30, timeout=20.0):
    """run_entry for each of entries in this process (one setup for all)."""
    faulthandler.enable()
    if os.environ.get("DIRECTABLE_SANITIZED"):  # ASan + UBSan run calls ~3-10x slower (./dev sanitize)
        timeout *= 10
    env = {}
    exec(SETUP, env)
    for entry in entries:
        run_entry(entry, hypothesis_examples, timeout, env)


def run_entry(entry, hypothesis_examples, timeout, env):
    """Every argument x every mutation, then random arrays from hypothesis;
    prints one JSON line per call (labelled ``entry: argument=mutation``),
    each preceded by a START line (a crash leaves the START of its call
    last on stdout)."""
    import numpy as np

    _, valid, *rest = TABLE[entry]
    options = rest[0] if rest else {}
    if entry.startswith("mujoco.") and env.get("mjm") is None:
        print(json.dumps({"label": f"{entry}: skipped", "status": "skipped", "detail": "mujoco not installed"}))
        return
    values = {k: eval(v, env) for k, v in valid.items()}
    f = _function(env, entry)

    aliases = options.get("aliases", {})

    def one(label, args, arg=None):
        label = f"{entry}: {label}"
        print(json.dumps({"start": label}), flush=True)
        faulthandler.dump_traceback_later(timeout, exit=True)
        status, detail = _classify(lambda: f(**args), options.get("allow_inf", False))
        faulthandler.cancel_dump_traceback_later()
        line = {"label": label, "status": status, "detail": detail[:300]}
        if status == "raised" and arg is not None:
            line["named"] = names_argument(detail, arg, aliases.get(arg, ()))
        print(json.dumps(line), flush=True)
        return status

    if one("valid", dict(values)) != "ok":
        return
    for arg in values:
        for label, expr in MUTATIONS.items():
            if label == "huge int" and arg in options.get("long", ()):
                continue
            try:
                bad = eval(expr, {"np": np, "V": values[arg]})
            except Exception:  # noqa: BLE001 - a mutation that does not apply to this value
                continue
            one(f"{arg}={label}", dict(values, **{arg: bad}), arg)

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp

    dtypes = st.sampled_from([np.float64, np.float32, np.int64, np.int8, np.bool_, np.complex128, np.uint16])
    arrays = hnp.arrays(dtypes, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5))
    scalars = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-2**70, 2**70), st.none(),
                        st.text(max_size=3))

    @settings(max_examples=hypothesis_examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(sorted(values)), st.one_of(arrays, scalars))
    def random_argument(arg, bad):
        if arg in options.get("long", ()) and np.ndim(bad) == 0 and getattr(bad, "dtype", np.dtype(int)).kind in "iu" \
                and not isinstance(bad, (bool, np.bool_)) and isinstance(bad, (int, np.integer)) and bad > 10**5:
            return  # a legitimately long run (see "long")
        one(f"{arg}=hypothesis {type(bad).__name__} {getattr(bad, 'dtype', '')} {np.shape(bad)}",
            dict(values, **{arg: bad}), arg)

    random_argument()


if __name__ == "__main__":  # fuzz_table.py EXAMPLES ENTRY [ENTRY ...]
    run_entries(sys.argv[2:], int(sys.argv[1]))
