"""Deformable scenes of Barbic & Popovic 2008 built on :mod:`directable.fem`:
the T-shape of figure 1 and the "flower" (a stem with leaves) of sec. 5.4,
each taken end to end through the sec. 5.3 pipeline up to the reduced
reference.

    from directable.experiments import fem_scenes
    scene = fem_scenes.t_shape_scene(r=10, T=100)
    scene.red, scene.z_ref, scene.w_ff     # reduced model, reference, feed-forward
"""
from __future__ import annotations

import numpy as np

from .. import models, reduce
from .._validate import as_float_array, integer, real
from ..fem import (ReducedStVK, StVKModel, bottom_vertices, centerline, creature, enrich, project_states,
                   reduced_forces, stem, t_shape, tip_positions)
from ..sim import push

__all__ = ["Scene", "t_shape_scene", "plant_scene", "creature_scene", "PAPER_SIZE"]

# The papers' sizes (Barbic & Popovic 2008, Tables 1-2) as arguments of the
# builders below; the tests and notebooks keep the defaults (small).
#   T-shape: paper 1032 dofs, r = 24, T = 501 -> 1035 dofs
#   flower:  paper 12,705 dofs, r = 24, T = 1281 -> 12,495 dofs
#   creature (the dinosaur): paper 53,178 dofs, r = 30, T = 181 -> h = 0.033 m: >= 50,000 dofs
# ``runs``: the paper enriches each basis with about 50 full runs. ``linear_solver="cg"``: at 12.5k and 52k
# dofs block-Jacobi CG makes the full step 2.5x and 29x faster than the sparse LDL' (benchmarks/RESULTS.md).
PAPER_SIZE = {
    "t_shape": dict(r=24, T=501, refine=2, stem=(1, 1, 4), runs=50),
    # dt = 0.005: at refine 6 Newton does not converge from rest in one 0.02 s step under the swing's force
    "flower": dict(r=24, T=1281, dt=0.005, refine=6, leaves=((3, 2), (5, -2), (7, 2)), runs=50, linear_solver="cg"),
    "creature": dict(r=30, T=181, h=0.033, runs=20, linear_solver="cg"),
}


class Scene:
    """A ready reduced scene (the paper's sec. 5.3 pipeline up to the gains).

    Attributes: mesh, model (full), dt, top (driven vertices), forces (T, 3V) scripted centre-line
    forces, u, v (T+1, 3V) centre-line run, basis (reduce.Basis), red
    (ReducedStVK), w_ff (T, r) feed-forward, z_ref (T+1, 2r) reduced
    reference, tips (vertex indices of the targets), T, r.
    """

    def output_matrix(self) -> np.ndarray:
        """The tips' displacements as a linear output of the reduced state.

        Returns
        -------
        (3 m, 2r) ndarray
            C, with ``C z`` the displacements (m) of the m tip vertices.
        """
        dofs = (3 * np.asarray(self.tips)[:, None] + np.arange(3)).ravel()
        C = np.zeros((dofs.size, 2 * self.r))
        C[:, :self.r] = self.basis.U[dofs]
        return C

    def tip_positions(self, z) -> np.ndarray:
        """World positions of the tips.

        Parameters
        ----------
        z : (k, 2r) or (2r,) array
            Reduced states.

        Returns
        -------
        (k, m, 3) ndarray
            Positions (m).
        """
        z = np.atleast_2d(as_float_array(z, "z"))
        return tip_positions(self.mesh, self.red.full_displacement(z[:, :self.r]), self.tips)

    def push(self, at, force, duration=1) -> np.ndarray:
        """A reduced disturbance from a full force held for some steps.

        Parameters
        ----------
        at : int
            First step.
        force : (3V,) array
            Full force (N).
        duration : int, optional
            Steps.

        Returns
        -------
        (T, r) ndarray
        """
        return push(self.T, self.r, at, self.basis.U.T @ as_float_array(force, "force"), duration)


def t_shape_scene(r=10, T=100, dt=0.02, amplitude=96.0, runs=6, fraction=0.1, reference="reduced", h=0.1,
                  young=2e6, poisson=0.3, density=1000.0, alpha=0.5, beta=0.005, seed=0, profile="sine", refine=1,
                  stem=(1, 1, 6), bar=(7, 1, 1), base=(3, 3, 1), executor=None, progress=None,
                  linear_solver="direct") -> Scene:
    """The T-shape of the paper's figure 1, end to end up to the reference.

    Full centre-line run: the top bar is swung sideways (x) by a total force
    ``amplitude sin(2 pi t / (T dt))`` (N) spread evenly over its vertices;
    enrichment with ``runs`` impulses of ``fraction`` of that force;
    mass-orthonormal PCA basis of r modes; reduced model; feed-forward
    ``w_ff = U' f``; reference: the reduced re-simulation
    (``reference="reduced"``) or the projection of the full run
    (``"projected"``). Tips: the two ends of the bar. ``PAPER_SIZE["t_shape"]``
    is the paper's size. ``profile="loop"`` uses ``sin(2 pi s) sin(pi s)^2``
    (s = t / (T dt)): force and its rate vanish at both ends, so a long enough
    period brings the T almost back to rest at its start (endless looping,
    sec. 5.4).

    Parameters
    ----------
    r : int, optional
        Number of modes.
    T : int, optional
        Number of steps of the reference.
    dt : float, optional
        Step length (s).
    amplitude : float, optional
        Total driving force (N).
    runs : int, optional
        Enrichment runs (impulses) of the basis.
    fraction : float, optional
        Size of the enrichment impulses relative to the driving force.
    reference : {"reduced", "projected"}, optional
        The reduced re-simulation, or the projection of the full run.
    h : float, optional
        Cell size (m).
    refine : int, optional
        Subdivision of the mesh (see ``fem.t_shape``).
    stem, bar, base : (3,) sequence of int, optional
        Sizes of the parts in cells.
    young : float, optional
        Young's modulus (Pa).
    poisson : float, optional
        Poisson ratio.
    density : float, optional
        Density (kg/m^3).
    alpha, beta : float, optional
        Rayleigh damping (1/s, s).
    seed : int, optional
        Seed of the enrichment impulses.
    profile : {"sine", "loop"}, optional
        Time profile of the driving force.
    executor : optional
        Where the enrichment runs go (``fem.enrich``, ``directable.executors``).
    progress : None, bool or callable(done, total), optional
        Progress report.
    linear_solver : {"direct", "cg"}, optional
        Linear solver of the full runs (``fem.Simulator``; "cg" for the paper's sizes).

    Returns
    -------
    Scene
    """
    mesh = t_shape(h=h, refine=refine, stem=stem, bar=bar, base=base)
    X = np.asarray(mesh.vertices)
    driven = np.flatnonzero(X[:, 2] > X[:, 2].max() - 1.01 * h)  # the bar
    tips = np.array([np.argmin(X[:, 0] - 1e-3 * X[:, 2]), np.argmax(X[:, 0] + 1e-3 * X[:, 2])])
    return _scene(mesh, driven, tips, r, T, dt, amplitude, runs, fraction, reference, young, poisson, density, alpha,
                  beta, seed, profile, executor, progress, linear_solver=linear_solver)


def plant_scene(r=10, T=200, dt=0.02, amplitude=60.0, runs=6, fraction=0.1, reference="reduced", h=0.1,
                height=8, leaves=((3, 2), (6, -2)), young=2e6, poisson=0.3, density=1000.0, alpha=0.5, beta=0.005,
                seed=0, profile="loop", refine=1, executor=None, progress=None, linear_solver="direct") -> Scene:
    """The "flower" of the paper's sec. 5.4: a stem with leaves, rooted at its base.

    Swayed in x by a total force ``amplitude`` (N) shaped by ``profile`` on its
    top cell (default "loop": it returns almost to rest, for endless looping).
    Tips: the top of the stem and the leaf ends. ``PAPER_SIZE["flower"]`` is
    the paper's size.

    Parameters
    ----------
    r : int, optional
        Number of modes.
    T : int, optional
        Number of steps of the reference.
    dt : float, optional
        Step length (s).
    amplitude : float, optional
        Total driving force (N).
    runs : int, optional
        Enrichment runs (impulses) of the basis.
    fraction : float, optional
        Size of the enrichment impulses relative to the driving force.
    reference : {"reduced", "projected"}, optional
        The reduced re-simulation, or the projection of the full run.
    h : float, optional
        Cell size (m).
    height : int, optional
        Stem height in cells.
    leaves : sequence of (int, int), optional
        (level, length) of each leaf in cells.
    refine : int, optional
        Subdivision of the mesh.
    young : float, optional
        Young's modulus (Pa).
    poisson : float, optional
        Poisson ratio.
    density : float, optional
        Density (kg/m^3).
    alpha, beta : float, optional
        Rayleigh damping (1/s, s).
    seed : int, optional
        Seed of the enrichment impulses.
    profile : {"sine", "loop"}, optional
        Time profile of the driving force.
    executor : optional
        Where the enrichment runs go (``fem.enrich``, ``directable.executors``).
    progress : None, bool or callable(done, total), optional
        Progress report.
    linear_solver : {"direct", "cg"}, optional
        Linear solver of the full runs (``fem.Simulator``; "cg" for the paper's sizes).

    Returns
    -------
    Scene
    """
    mesh = stem(h=h, height=height, leaves=leaves, refine=refine)
    X = np.asarray(mesh.vertices)
    driven = np.flatnonzero(X[:, 2] > X[:, 2].max() - 1.01 * h)
    tips = [int(np.argmax(X[:, 2] + 1e-3 * X[:, 0]))]
    for level, length in leaves:
        row = np.flatnonzero(np.abs(X[:, 2] - (level + 1) * h) < 1e-9 * max(1.0, h))
        tips.append(int(row[np.argmax(np.sign(length) * X[row, 0])]))
    return _scene(mesh, driven, np.array(tips), r, T, dt, amplitude, runs, fraction, reference, young, poisson,
                  density, alpha, beta, seed, profile, executor, progress, linear_solver=linear_solver)


def creature_scene(r=8, T=60, dt=0.02, amplitude=400.0, runs=4, fraction=0.1, reference="reduced", h=0.2,
                   young=5e6, poisson=0.3, density=1000.0, alpha=0.5, beta=0.005, seed=0, profile="sine",
                   executor=None, progress=None, linear_solver="direct") -> Scene:
    """The paper's dinosaur (sec. 6, Tables 1-2 row 3): ``fem.creature(h)`` rooted at its feet.

    Its head is swung sideways (y) by a total force ``amplitude`` (N) shaped by
    ``profile``. Tips: the top of the head and the tail's end.
    ``PAPER_SIZE["creature"]`` is the paper's size (r = 30, T = 181,
    >= 50,000 dofs).

    Parameters
    ----------
    r : int, optional
        Number of modes.
    T : int, optional
        Number of steps of the reference.
    dt : float, optional
        Step length (s).
    amplitude : float, optional
        Total driving force (N).
    runs : int, optional
        Enrichment runs (impulses) of the basis.
    fraction : float, optional
        Size of the enrichment impulses relative to the driving force.
    reference : {"reduced", "projected"}, optional
        The reduced re-simulation, or the projection of the full run.
    h : float, optional
        Cell size (m).
    young : float, optional
        Young's modulus (Pa).
    poisson : float, optional
        Poisson ratio.
    density : float, optional
        Density (kg/m^3).
    alpha, beta : float, optional
        Rayleigh damping (1/s, s).
    seed : int, optional
        Seed of the enrichment impulses.
    profile : {"sine", "loop"}, optional
        Time profile of the driving force.
    executor : optional
        Where the enrichment runs go (``fem.enrich``, ``directable.executors``).
    progress : None, bool or callable(done, total), optional
        Progress report.
    linear_solver : {"direct", "cg"}, optional
        Linear solver of the full runs (``fem.Simulator``; "cg" for the paper's sizes).

    Returns
    -------
    Scene
    """
    mesh = creature(h)
    X = np.asarray(mesh.vertices)
    driven = np.flatnonzero((X[:, 0] > 0.75) & (X[:, 2] > 1.5))  # the head
    tips = np.array([int(np.argmax(X[:, 2] + 1e-3 * X[:, 0])), int(np.argmin(X[:, 0]))])
    return _scene(mesh, driven, tips, r, T, dt, amplitude, runs, fraction, reference, young, poisson, density, alpha,
                  beta, seed, profile, executor, progress, axis=1, linear_solver=linear_solver)


def _scene(mesh, driven, tips, r, T, dt, amplitude, runs, fraction, reference, young, poisson, density, alpha, beta,
           seed, profile, executor=None, progress=None, axis=0, linear_solver="direct") -> Scene:
    s = Scene()
    s.mesh = mesh
    s.model = StVKModel(s.mesh, young, poisson, density, fixed=bottom_vertices(s.mesh), alpha=alpha, beta=beta)
    s.dt, s.T = real(dt, "dt"), integer(T, "T")
    s.linear_solver = linear_solver
    s.top = np.asarray(driven)
    s.tips = np.asarray(tips)
    t = np.arange(s.T) * s.dt
    s.forces = np.zeros((s.T, s.model.dofs))
    ph = t / (s.T * s.dt)
    if profile == "sine":
        shape = np.sin(2 * np.pi * ph)
    elif profile == "loop":
        shape = np.sin(2 * np.pi * ph) * np.sin(np.pi * ph) ** 2
    else:
        raise ValueError(f"profile must be 'sine' or 'loop', got {profile!r}")
    s.forces[:, 3 * s.top + axis] = (amplitude / s.top.size * shape)[:, None]
    s.u, s.v, a = centerline(s.model, s.dt, s.forces, return_acceleration=True, linear_solver=linear_solver)
    snaps = enrich(s.model, s.dt, s.forces, runs=runs, fraction=fraction, u=s.u, v=s.v, a=a, seed=seed,
                   executor=executor, progress=progress, linear_solver=linear_solver)
    s.basis = reduce.pca(snaps, r, mass=s.model.mass)
    s.r = s.basis.r
    s.red = ReducedStVK(s.model, s.basis.U)
    s.w_ff = reduced_forces(s.basis.U, s.forces)
    s.z_proj = project_states(s.red, s.u, s.v)
    if reference == "reduced":
        s.z_ref = models.rollout(s.red, s.z_proj[0], s.w_ff, s.dt)
    elif reference == "projected":
        s.z_ref = s.z_proj
    else:
        raise ValueError(f"reference must be 'reduced' or 'projected', got {reference!r}")
    return s
