"""Fixtures of the fuzz table (tests/fuzz_table.py) that cost more than a few
milliseconds or that few entries need: each built on first use and kept
(``functools.cache``), so a worker builds only what its family's entries ask
for. Everything at the smallest size that still makes a valid call."""
from __future__ import annotations

import functools
import os
import tempfile

import numpy as np

import directable as dr
from directable import cloth, fem, fluid, lqr, mpc, sph

cache = functools.cache


@cache
def tmpdir() -> str:
    return tempfile.mkdtemp(prefix="directable-fuzz-")


# ---------------------------------------------------------------- linear-quadratic and MPC

@cache
def sph_plant2d():
    dx = 0.1
    f = sph.SPHFluid2D(sph.block((0.2, 0.0), (0.5, 0.3), dx), sph.box_walls((0, 0), (1, 1), dx), spacing=dx,
                       h=1.3 * dx)
    return mpc.SPHPlant2D(f, 1)


# ---------------------------------------------------------------- FEM

@cache
def small_mesh():
    return fem.box_mesh((2, 1, 1), h=0.1)


@cache
def small_stvk():
    mesh = small_mesh()
    return fem.StVKModel(mesh, 1e5, 0.3, 1000.0, fixed=fem.bottom_vertices(mesh, axis=0))


@cache
def reduced_stvk():
    stvk = small_stvk()
    n = 3 * small_mesh().num_vertices
    free = np.setdiff1d(np.arange(n), stvk.fixed_dofs)
    U = np.zeros((n, 2))
    U[free[:2], [0, 1]] = 1.0
    return fem.ReducedStVK(stvk, U)


@cache
def mesh_file() -> str:
    """The small box mesh written as a .vtu file (meshio), for fem.load_mesh."""
    import meshio

    mesh = small_mesh()
    path = os.path.join(tmpdir(), "box.vtu")
    meshio.write_points_cells(path, np.asarray(mesh.vertices), [("tetra", np.asarray(mesh.tets))])
    return path


# ---------------------------------------------------------------- SPH in 3D

@cache
def sph3d():
    fl, walls = sph3d_points()
    return sph.SPHFluid3D(fl, walls, spacing=0.1, h=0.13)


@cache
def sph_plant3d():
    return mpc.SPHPlant3D(sph3d(), 1)


@cache
def sph3d_points():
    dx = 0.1
    return sph.block((0.2, 0.2, 0.0), (0.4, 0.4, 0.2), dx), sph.box_walls((0, 0, 0), (0.6, 0.6, 0.6), dx, layers=1)


@cache
def pred3d():
    return sph3d().prediction_model()


# ---------------------------------------------------------------- reduction

@cache
def incremental_pca():
    from directable import reduce

    p = reduce.IncrementalPCA(6, 3)
    p.add(np.random.default_rng(0).standard_normal((5, 6)))
    return p


# ---------------------------------------------------------------- fluids with obstacles (2D, then 3D)

@cache
def fluid2d():
    """A 10 x 10 grid and a reduced fluid of 4 divergence-free modes."""
    grid = fluid.MACGrid2D(16, 16)
    rng = np.random.default_rng(1)
    basis = fluid.velocity_basis(grid, np.stack([grid.project(rng.standard_normal(grid.n_faces)) for _ in range(6)]),
                                 r=4)
    return grid, fluid.ReducedFluid(grid, basis, 0.01)


@cache
def cshape():
    return fluid.c_shape(0.15, 0.08, segments=8)


def training_poses():
    return np.array([[0.45, 0.5, 0.0], [0.55, 0.5, 0.3]])


@cache
def boundary_basis():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fluid.BoundaryBasis.build(fluid2d()[1], cshape(), training_poses(), 3, surface_spacing=0.15)


@cache
def coupling():
    return fluid.Coupling(fluid2d()[1], boundary_basis())


@cache
def scene2d():
    return fluid.ReducedScene(fluid2d()[1], [coupling()])


@cache
def scene2d_state():
    """(z, coefficients, poses) of one step of scene2d."""
    scene, red = scene2d(), fluid2d()[1]
    pose = np.array([[0.5, 0.5, 0.1]])
    z, coeffs = scene.step(np.ones(red.r), np.zeros(red.r), 0.01, pose, np.zeros((1, 3)))
    return z, coeffs, pose


@cache
def fluid3d():
    """A 6 x 6 x 6 grid and a reduced fluid of 4 divergence-free modes."""
    grid = fluid.MACGrid3D(6, 6, 6)
    rng = np.random.default_rng(2)
    basis = fluid.velocity_basis3d(grid, np.stack([grid.project(rng.standard_normal(grid.n_faces))
                                                   for _ in range(6)]), 4)
    return grid, fluid.ReducedFluid3D(grid, basis, 0.01)


@cache
def plate3d():
    return fluid.plate(0.34, 0.34, 2 * fluid3d()[0].h)


def training_poses3d():
    return np.array([[0.5, 0.45, 0.5, 0.0, 0.0, 0.0], [0.5, 0.55, 0.5, 0.2, 0.1, 0.0]])


@cache
def boundary_basis3d():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fluid.BoundaryBasis3D.build(fluid3d()[1], plate3d(), training_poses3d(), 3)


@cache
def coupling3d():
    return fluid.Coupling3D(fluid3d()[1], boundary_basis3d())


@cache
def coupling3d_table():
    xs = np.array([0.45, 0.55])
    return fluid.Coupling3D(fluid3d()[1], boundary_basis3d(), pose_table=(xs, xs, xs, [0.0], [0.0], [0.0]),
                            precompute="both")


@cache
def scene3d():
    return fluid.ReducedScene3D(fluid3d()[1], [coupling3d()])


@cache
def scene3d_state():
    scene, red = scene3d(), fluid3d()[1]
    pose = np.array([[0.5, 0.5, 0.5, 0.1, 0.0, 0.0]])
    z, coeffs = scene.step(np.ones(red.r), np.zeros(red.r), 0.01, pose, np.zeros((1, 6)))
    return z, coeffs, pose


def wind_sim():
    """A fresh 2D simulator with one particle (run_particle_winds moves it)."""
    sim = fluid.FluidSim2D(fluid.MACGrid2D(6, 6), 0.0, 0.01)
    sim.particles = np.array([[0.5, 0.5]])
    return sim


# ---------------------------------------------------------------- cloth

@cache
def cloth_scene():
    """(cloth, pilot run, dt, plan): a 4 x 4 cloth pinned at node 0, 40 pilot steps, one goal at step 30."""
    c = cloth.ClothGrid(4, 4, 0.05, 0.01, 200.0, 50.0, 5.0, 0.02, pinned=[0])
    dt = 0.002
    pilot = c.rollout(c.positions0, np.zeros_like(c.positions0), dt, 40)
    plan = cloth.plan(c, pilot, [(10, 30, cloth_goal())], dt, samples=5, azimuths=2)
    return c, pilot, dt, plan


@cache
def cloth_goal():
    c = cloth.ClothGrid(4, 4, 0.05, 0.01, 200.0, 50.0, 5.0, 0.02, pinned=[0])
    pilot = c.rollout(c.positions0, np.zeros_like(c.positions0), 0.002, 40)
    return pilot.x[30, 10] + np.array([0.02, 0.0, 0.0])


# ---------------------------------------------------------------- crowds

@cache
def periodic_grid():
    from directable import crowds

    g = crowds.CrowdGrid(8, 8)
    g.set_periodic(np.eye(8, dtype=bool), 0.5, 10.0)
    return g


@cache
def crowd():
    from directable import crowds

    goal = np.zeros((8, 8), bool)
    goal[:, -1] = True
    return crowds.Crowd(crowds.CrowdGrid(8, 8), crowds.Params.table_4_1("lanes"),
                        [crowds.Group(goal, [[1.5, 1.5], [2.5, 4.5]])])


# ---------------------------------------------------------------- characters

@cache
def motion():
    from directable import characters

    walker = characters.synthetic_walker()
    return characters.MotionModel(characters.synthetic_clips(walker, gaits=("walk",), turns=(-0.5, 0.5)))


@cache
def navigation():
    from directable import characters

    return characters.Navigation(motion())


@cache
def nav_basis():
    from directable import characters

    return characters.basis.polynomial("d", 1, scale=2.0) * characters.basis.polynomial("theta", 2, scale=np.pi)


@cache
def value_function():
    from directable import characters

    nav = navigation()
    return characters.learn(nav, nav_basis(), characters.samples(nav, per_dim=3), alpha=0.8, solver="scipy",
                            bounds=1e4)


@cache
def grid_value_function():
    from directable import characters

    return characters.value_iteration(navigation(), 4, alpha=0.5, max_sweeps=20)


@cache
def controller():
    from directable import characters

    return characters.Controller(navigation(), value_function())


@cache
def obstacle_controller():
    """A controller on a MovingObstacle task (what characters.crowd takes)."""
    from directable import characters

    task = characters.MovingObstacle(motion())
    phi = characters.basis.polynomial("u", 1, scale=2.0) * characters.basis.polynomial("v", 1, scale=2.0)
    vf = characters.learn(task, phi, characters.samples(task, per_dim=2), alpha=0.8, solver="scipy", bounds=1e4)
    return characters.Controller(task, vf)


@cache
def value_table():
    """A ValueFunctionTable switching on gamma_x between two learned functions."""
    from directable import characters

    nav = navigation()
    return characters.tabulate(lambda g: characters.Navigation(motion(), gamma_x=g), [0.1, 0.2], nav_basis(),
                               characters.samples(nav, per_dim=3), parameter="gamma_x", mode="interpolate",
                               alpha=0.8, solver="scipy", bounds=1e4)


@cache
def bvh_file() -> str:
    from directable import characters

    walker = characters.synthetic_walker()
    clips = characters.synthetic_clips(walker, gaits=("walk",), turns=(0.0,))
    path = os.path.join(tmpdir(), "walk.bvh")
    characters.write_bvh(path, walker, np.asarray(clips.poses[0])[:4])
    return path


# ---------------------------------------------------------------- MuJoCo (the model comes from SETUP)

@cache
def mj_lqr(mjm):
    from directable import mujoco as dmj

    import mujoco

    d = mujoco.MjData(mjm)
    mujoco.mj_forward(mjm, d)
    x = dmj.state(mjm, d)
    return dmj.LQRTracker.from_linearization(mjm, np.tile(x, (4, 1)), np.zeros((3, mjm.nu)), 1.0, 1.0, threads=1)


@cache
def mj_spd(mjm):
    from directable import mujoco as dmj

    import mujoco

    d = mujoco.MjData(mjm)
    mujoco.mj_forward(mjm, d)
    return dmj.SPDTracker(mjm, np.tile(d.qpos, (4, 1)), np.zeros((4, mjm.nv)), 10.0, 1.0)
