"""Full St. Venant-Kirchhoff FEM (the offline "external simulator") and the
reduced StVK model built from it (Barbic & Popovic 2008 sec. 4.3, 5;
Barbic & James 2005).

    mesh = fem.t_shape()                                   # boxes -> tets
    full = fem.StVKModel(mesh, young=1e5, poisson=0.3, density=1e3,
                         fixed=fem.bottom_vertices(mesh), alpha=0.1, beta=1e-3)
    sim = fem.Simulator(full, dt=1/60)
    U = sim.run(forces)                                    # (T+1, 3V)
    red = ReducedStVK(full, reduce.pca(U, r, mass=full.mass).U)

Conventions: displacement u (3V,) ordered [x0, y0, z0, x1, ...];
``internal_forces(u)`` is the gradient of the elastic energy, so
``M u'' + D u' + f_int(u) = f_ext`` with ``D(u) = alpha M + beta K(u)``.
"""
from __future__ import annotations

import itertools
import os

import numpy as np

from . import _core
from . import executors as _executors
from ._validate import (as_float_array, check_size, finite_array, finite_real, index_array, integer, real,
                        run_with_progress)

__all__ = ["TetMesh", "StVKModel", "Simulator", "ReducedStVK", "box_mesh", "cantilever", "t_shape", "stem",
           "load_mesh", "vertices_where", "bottom_vertices", "surface_triangles", "centerline", "enrich",
           "reduced_forces", "project_states", "tip_positions", "creature"]


class TetMesh(_core.TetMesh):
    """Tetrahedral mesh.

    Each tet must be positively oriented (``det[x1-x0, x2-x0, x3-x0] > 0``);
    degenerate or inverted tets, out-of-range indices and unreferenced vertices
    raise ``ValueError``.

    Parameters
    ----------
    vertices : (V, 3) array
        Vertex positions (m).
    tets : (E, 4) int array
        Vertex indices of each tet.
    """

    def __init__(self, vertices, tets):
        super().__init__(as_float_array(vertices, "vertices"), index_array(tets, "tets", "(E, 4)"))


class StVKModel(_core.StVKFEM):
    """St. Venant-Kirchhoff FEM on a TetMesh.

    Parameters
    ----------
    mesh : TetMesh
        V vertices, E tets; the model has 3V dofs.
    young : float
        Young's modulus E (Pa).
    poisson : float
        Poisson ratio nu (Lame parameters mu = E / (2 (1 + nu)),
        lambda = E nu / ((1 + nu)(1 - 2 nu))).
    density : float
        Mass per volume (kg/m^3), lumped to the vertices.
    fixed : sequence of int, optional
        Vertex indices held at rest.
    alpha, beta : float, optional
        Rayleigh damping ``D(u) = alpha M + beta K(u)`` (1/s and s).
    """

    def __init__(self, mesh, young, poisson, density, fixed=(), alpha=0.0, beta=0.0):
        if not isinstance(mesh, _core.TetMesh):
            raise TypeError(f"mesh must be a directable.fem.TetMesh, got {type(mesh).__name__}")
        fx = np.asarray(fixed)
        fx = np.zeros(0, np.int64) if fx.size == 0 else index_array(fx, "fixed", "(k,)")
        if fx.ndim != 1:
            raise ValueError(f"fixed must be a 1-D list of vertex indices, got shape {fx.shape}")
        super().__init__(mesh, real(young, "young"), real(poisson, "poisson"), real(density, "density"),
                         [int(i) for i in fx], real(alpha, "alpha"), real(beta, "beta"))
        self.mesh = mesh
        self.young, self.poisson, self.density = float(young), float(poisson), float(density)

    def spec(self) -> tuple:
        """What rebuilds this model in another process (see ``executors``).

        Returns
        -------
        tuple
            (vertices (V, 3), tets (E, 4), young, poisson, density, fixed
            (k,), alpha, beta): a few MB where the model's run data would be
            GB; ``StVKModel(TetMesh(*spec[:2]), *spec[2:])`` rebuilds it.
        """
        return (np.asarray(self.mesh.vertices), np.asarray(self.mesh.tets), self.young, self.poisson, self.density,
                np.asarray(self.fixed, np.int64), self.alpha, self.beta)

    def tangent_stiffness(self, u):
        """dF/du at a displacement (needs SciPy).

        Parameters
        ----------
        u : (3V,) array
            Displacement (m).

        Returns
        -------
        (3V, 3V) scipy.sparse.csc_matrix
            Symmetric tangent stiffness (N/m).
        """
        import scipy.sparse as sp
        data, indices, indptr = self.stiffness_csc(as_float_array(u, "u"))
        return sp.csc_matrix((data, indices, indptr), shape=(self.dofs, self.dofs))

    def mass_matrix(self):
        """Lumped mass as a sparse matrix (needs SciPy).

        Returns
        -------
        (3V, 3V) scipy.sparse.csc_matrix
            Diagonal (kg); ``.mass`` is its diagonal.
        """
        import scipy.sparse as sp
        return sp.diags(self.mass).tocsc()

    @property
    def fixed_dofs(self) -> np.ndarray:
        """Indices (3k,) of the dofs of the fixed vertices."""
        f = np.asarray(self.fixed, dtype=np.int64)
        return (3 * f[:, None] + np.arange(3)).ravel()


class Simulator(_core.NewmarkFEM):
    """Implicit Newmark (beta 1/4, gamma 1/2) full simulation with Newton.

    ``step(f_ext)`` advances one step; ``run(forces (T, 3V))`` returns the
    displacements (T+1, 3V) and ``run_states(forces)`` the displacements,
    velocities and accelerations (u, v, a), each (T+1, 3V) (GIL released,
    ``progress=True`` shows a bar); ``static_solve(f_ext)`` solves
    f_int(u) = f_ext. Newton failing to converge raises RuntimeError (naming
    the step in a run). The model is shared read-only; the state belongs to
    this simulator.

    Parameters
    ----------
    model : StVKModel
    dt : float
        Time step (s).
    max_iterations : int
        Newton iterations per step.
    tolerance : float
        Newton stops when the residual is ``tolerance`` times the step's first.
    linear_solver : {"direct", "cg"}
        How each Newton iteration solves M/(beta dt^2) + (gamma/(beta dt)) C + K_t:
        ``"direct"`` (default, sparse LDL', refactorised every iteration; the
        results of earlier versions bit for bit) or ``"cg"``: conjugate
        gradients preconditioned with the inverses of the 3x3 diagonal blocks,
        the choice for large meshes (the matrix is mass-dominated at the step
        sizes used: tens of iterations, memory O(nnz)). Not used by
        ``static_solve`` (always direct).
    cg_tolerance : float
        CG stops at ``max(cg_tolerance |r|, 0.1 tolerance |r_0|)`` (r: the
        Newton residual of the iteration, r_0: the step's first); in (0, 1).
    cg_max_iterations : int
        CG iterations per linear solve; more raises RuntimeError naming the
        step and the residual reached.
    """

    def __init__(self, model, dt, max_iterations=20, tolerance=1e-8, linear_solver="direct", cg_tolerance=1e-4,
                 cg_max_iterations=1000):
        if not isinstance(linear_solver, str):
            raise TypeError(f'linear_solver must be "direct" or "cg", got {type(linear_solver).__name__}')
        super().__init__(model, real(dt, "dt"), integer(max_iterations, "max_iterations"), real(tolerance, "tolerance"),
                         linear_solver, real(cg_tolerance, "cg_tolerance"),
                         integer(cg_max_iterations, "cg_max_iterations"))
        self.model = model

    def run(self, forces, progress=None):
        """Runs T steps from the current state in one C++ call.

        Parameters
        ----------
        forces : (T, 3V) array
            External force of each step (N).
        progress : None, bool or callable(done, total)
            Progress report (GIL released, Ctrl-C stops the run).

        Returns
        -------
        (T+1, 3V) ndarray
            Displacements (m), the current state first.
        """
        return run_with_progress(super().run, progress, "full simulation", forces=as_float_array(forces, "forces"))

    def run_states(self, forces, progress=None):
        """Runs T steps from the current state in one C++ call.

        Parameters
        ----------
        forces : (T, 3V) array
            External force of each step (N).
        progress : None, bool or callable(done, total)
            Progress report (GIL released, Ctrl-C stops the run).

        Returns
        -------
        (u, v, a), each (T+1, 3V)
            Displacements, velocities and Newmark accelerations, the current
            state first (``a[0]`` is NaN when the initial acceleration is left
            to the first step); the simulator ends in the last state.
        """
        return run_with_progress(super().run_states, progress, "full simulation",
                                 forces=as_float_array(forces, "forces"))


class ReducedStVK(_core.ReducedStVK):
    """Reduced StVK model ``ReducedStVK(full_model, U)`` on a basis U (3V, r).

    ``internal_forces(p)`` (r,) = U' f(U p) and ``tangent_stiffness(p)``
    (r, r) from precomputed cubic polynomial coefficients; reduced Rayleigh
    damping D(p) = alpha U'MU + beta K(p) (the full model's alpha, beta unless
    given). As a ``Model``: z = [p, p'] (2r), w (r,) reduced forces,
    B = [0; (U'MU)^-1] (= [0; I] for a mass-orthonormal U), ``jacobian`` per
    the paper's appendix B (``damping_hessian=False`` omits the
    beta dK/dp : p' term), ``step`` an implicit Newmark step.

    Parameters
    ----------
    full_model : StVKModel
        The full FEM model.
    U : (3V, r) array
        Basis.
    alpha, beta : float, optional
        Reduced Rayleigh damping (1/s, s); the full model's when None.
    damping_hessian : bool, optional
        Keep the ``beta dK/dp : p'`` term of the Jacobian.
    progress : None, bool or callable(done, total), optional
        Progress of the coefficient precomputation.
    """

    def __init__(self, full_model, U, alpha=None, beta=None, damping_hessian=True, progress=None):
        if not isinstance(full_model, _core.StVKFEM):
            raise TypeError(f"full_model must be a directable.fem.StVKModel, got {type(full_model).__name__}")
        U = as_float_array(U, "U")
        a = -1.0 if alpha is None else real(alpha, "alpha")
        b = -1.0 if beta is None else real(beta, "beta")
        if (alpha is not None and a < 0) or (beta is not None and b < 0):
            raise ValueError(f"alpha and beta must be >= 0, got {alpha}, {beta}")
        run_with_progress(super().__init__, progress, "reduced StVK coefficients", full=full_model, U=U, alpha=a,
                          beta=b, damping_hessian=bool(damping_hessian))
        self.U = U
        self.full_mass = np.asarray(full_model.mass)

    def full_displacement(self, p) -> np.ndarray:
        """Full displacement ``U p`` (for display).

        Parameters
        ----------
        p : (r,) or (k, r) array
            Reduced coordinates.

        Returns
        -------
        (3V,) or (k, 3V) ndarray
            Displacements (m).
        """
        p = finite_array(p, "p")
        if p.ndim not in (1, 2) or p.shape[-1] != self.U.shape[1]:
            raise ValueError(f"p must have shape ({self.U.shape[1]},) or (k, {self.U.shape[1]}), got {p.shape}")
        return p @ self.U.T


# ---------------------------------------------------------------- meshes

def box_mesh(cells, h=1.0, origin=(0.0, 0.0, 0.0)) -> TetMesh:
    """A mesh of voxels, each split into 6 tets (Kuhn subdivision, conforming).

    Parameters
    ----------
    cells : (k, 3) int array
        Integer grid coordinates of the voxels.
    h : float, optional
        Voxel size (m).
    origin : (3,) sequence, optional
        Position of grid point (0, 0, 0) (m).

    Returns
    -------
    TetMesh
    """
    cells = index_array(cells, "cells", "(k, 3)")
    if cells.size == 0 or cells.size % 3 or np.abs(cells).max() > 2**20:
        raise ValueError(f"cells must be a non-empty (k, 3) integer array within +-2^20, got shape {cells.shape}")
    cells = np.unique(cells.reshape(-1, 3), axis=0)
    corners = np.array(list(itertools.product((0, 1), repeat=3)))  # index = 4x + 2y + z
    # the 6 tets of the Kuhn subdivision along the main diagonal 0 -> 7
    kuhn = []
    for perm in itertools.permutations(range(3)):
        path = [np.zeros(3, int)]
        for ax in perm:
            nxt = path[-1].copy()
            nxt[ax] = 1
            path.append(nxt)
        kuhn.append([4 * p[0] + 2 * p[1] + p[2] for p in path])
    pts = (cells[:, None, :] + corners[None, :, :]).reshape(-1, 3)
    uniq, inv = np.unique(pts, axis=0, return_inverse=True)
    inv = inv.reshape(len(cells), 8)
    tets = np.concatenate([inv[:, k] for k in kuhn], axis=0)
    h = real(h, "h")
    if not (0.0 < h < 1e100):
        raise ValueError(f"h (the voxel size, m) must be finite and > 0, got {h}")
    X = uniq * h + as_float_array(origin, "origin")
    D = X[tets[:, 1:]] - X[tets[:, :1]]
    neg = np.linalg.det(D) < 0
    tets[neg] = tets[neg][:, [0, 2, 1, 3]]
    return TetMesh(X, tets)


def _block(x0, x1, y0, y1, z0, z1):
    return np.array(list(itertools.product(range(x0, x1), range(y0, y1), range(z0, z1))))


def _cell_counts(x, name: str) -> tuple:
    """Three cell counts >= 1 (a mesh generator's size argument), or TypeError / ValueError naming ``name``."""
    a = index_array(x, name, "of 3 cell counts")
    if a.shape != (3,) or np.any(a < 1):
        raise ValueError(f"{name} must be 3 cell counts >= 1, got {a.tolist()}")
    check_size(name, float(np.prod(a.astype(float))), 6 * 4)
    return tuple(int(c) for c in a)


def _mesh(mesh):
    if not isinstance(mesh, _core.TetMesh):
        raise TypeError(f"mesh must be a directable.fem.TetMesh, got {type(mesh).__name__}")
    return mesh


def cantilever(length=1.0, width=0.1, height=0.1, n=(20, 2, 2)) -> TetMesh:
    """A beam along x, to be clamped at x = 0 (see ``vertices_where``).

    Parameters
    ----------
    length, width, height : float, optional
        Size (m).
    n : (3,) sequence of int, optional
        Cells per axis.

    Returns
    -------
    TetMesh
    """
    nx, ny, nz = _cell_counts(n, "n")
    h = np.array([finite_real(length, "length", 0.0, strict=True) / nx,
                  finite_real(width, "width", 0.0, strict=True) / ny,
                  finite_real(height, "height", 0.0, strict=True) / nz])
    if not (0.0 < np.min(h) ** 3 and np.max(h) ** 3 < np.inf and np.max(h) < 1e6 * np.min(h)):
        raise ValueError(f"length, width and height give cells of {h.tolist()} m: their volume or aspect ratio "
                         "(up to 1e6) is beyond what the tets can resolve")
    m = box_mesh(_block(0, nx, 0, ny, 0, nz))
    return TetMesh(m.vertices * h, m.tets)


def t_shape(h=0.1, stem=(1, 1, 6), bar=(7, 1, 1), base=(3, 3, 1), refine=1) -> TetMesh:
    """The paper's "T" standing on a base: a base slab (rooted at z = 0), a
    vertical stem and a horizontal bar on top, in cells of size h
    (``refine`` = k: k times as many cells per axis, each h / k).

    Parameters
    ----------
    h : float, optional
        Cell size (m).
    stem, bar, base : (3,) sequence of int, optional
        Sizes of the three parts in cells.
    refine : int, optional
        Subdivision factor k.

    Returns
    -------
    TetMesh
    """
    k = integer(refine, "refine")
    if k < 1:
        raise ValueError(f"refine must be >= 1, got {refine}")
    h = finite_real(h, "h", 0.0, strict=True) / k
    bx, by, bz = (k * c for c in _cell_counts(base, "base"))
    sx, sy, sz = (k * c for c in _cell_counts(stem, "stem"))
    tx, ty, tz = (k * c for c in _cell_counts(bar, "bar"))
    cx, cy = bx // 2, by // 2
    cells = [_block(0, bx, 0, by, 0, bz),
             _block(cx - sx // 2, cx - sx // 2 + sx, cy - sy // 2, cy - sy // 2 + sy, bz, bz + sz),
             _block(cx - tx // 2, cx - tx // 2 + tx, cy - ty // 2, cy - ty // 2 + ty, bz + sz, bz + sz + tz)]
    return box_mesh(np.concatenate(cells), h)


def stem(h=0.1, height=8, leaves=((3, 2), (6, -2)), refine=1) -> TetMesh:
    """A plant-like stem of ``height`` cells on a one-cell root, with leaves
    (level, length): horizontal arms to +x (length > 0) or -x (``refine`` = k:
    k times as many cells per axis, each h / k).

    Parameters
    ----------
    h : float, optional
        Cell size (m).
    height : int, optional
        Stem height in cells.
    leaves : sequence of (int, int), optional
        (level, length) of each leaf, in cells.
    refine : int, optional
        Subdivision factor k.

    Returns
    -------
    TetMesh
    """
    k = integer(refine, "refine")
    if k < 1:
        raise ValueError(f"refine must be >= 1, got {refine}")
    h = finite_real(h, "h", 0.0, strict=True)
    height = integer(height, "height")
    if height < 1:
        raise ValueError(f"height must be >= 1 cells, got {height}")
    leaves = index_array(leaves, "leaves", "(L, 2) of (level, length)")
    if leaves.size and (leaves.ndim != 2 or leaves.shape[1] != 2):
        raise ValueError(f"leaves must be (level, length) pairs, shape (L, 2), got {leaves.shape}")
    leaves = leaves.reshape(-1, 2)
    if np.any((leaves[:, 0] < 0) | (leaves[:, 0] >= height)) or np.any(leaves[:, 1] == 0):
        raise ValueError(f"leaves must have levels in [0, height={height}) and non-zero lengths, got {leaves.tolist()}")
    check_size("height", k ** 3 * (height + int(np.abs(leaves[:, 1]).sum()) + 1), 6 * 4)
    cells = [_block(0, k, 0, k, 0, k * height)]
    for level, length in leaves.tolist():
        cells.append(_block(k, k * (1 + length), 0, k, k * level, k * (level + 1)) if length > 0
                     else _block(k * length, 0, 0, k, k * level, k * (level + 1)))
    return box_mesh(np.concatenate(cells), h / k)


def creature(h=0.1) -> TetMesh:
    """A procedural two-legged "dinosaur" (about 2.9 m nose to tail, 1.9 m
    tall, feet on z = 0) voxelised at cell size ``h`` (m) and split into
    tets: an ellipsoid torso, a tapered tail, neck and head, two legs with
    feet, two small arms. Only the largest face-connected piece is kept, so
    the solid is one body. h = 0.1: ~1,000 dofs; h = 0.031: >= 50,000 dofs
    (the paper's 53,178).

    Parameters
    ----------
    h : float, optional
        Cell size (m), in [0.005, 0.5].

    Returns
    -------
    TetMesh
    """
    h = real(h, "h")
    if not 0.005 <= h <= 0.5:
        raise ValueError(f"h must be in [0.005, 0.5] m, got {h}")
    lo, hi = np.array([-1.95, -0.45, 0.0]), np.array([1.25, 0.45, 1.95])
    n = np.ceil((hi - lo) / h).astype(int)
    idx = np.stack(np.meshgrid(*(np.arange(m) for m in n), indexing="ij"), axis=-1).reshape(-1, 3)
    c = lo + (idx + 0.5) * h  # cell centres

    def ellipsoid(centre, radii):
        return (((c - centre) / radii) ** 2).sum(axis=1) <= 1.0

    def capsule(a, b, ra, rb):
        a, b = np.asarray(a, float), np.asarray(b, float)
        t = np.clip((c - a) @ (b - a) / ((b - a) @ (b - a)), 0.0, 1.0)
        return np.linalg.norm(c - (a + t[:, None] * (b - a)), axis=1) <= ra + t * (rb - ra)

    inside = (ellipsoid((0.0, 0.0, 1.05), (0.62, 0.3, 0.36))
              | capsule((-0.45, 0, 1.08), (-1.85, 0, 0.78), 0.24, 0.06)
              | capsule((0.45, 0, 1.2), (0.82, 0, 1.62), 0.16, 0.11)
              | ellipsoid((0.98, 0.0, 1.72), (0.26, 0.13, 0.14)))
    for side in (-1.0, 1.0):
        inside |= capsule((0.05, side * 0.17, 0.95), (0.12, side * 0.2, 0.1), 0.12, 0.075)
        inside |= (np.abs(c[:, 0] - 0.2) <= 0.2) & (np.abs(c[:, 1] - side * 0.2) <= 0.1) & (c[:, 2] <= 0.12)
        inside |= capsule((0.42, side * 0.2, 0.95), (0.62, side * 0.26, 0.72), 0.06, 0.045)
    occupied = np.zeros(n, bool)
    occupied[tuple(idx[inside].T)] = True
    from scipy import ndimage  # the fem extra's dependency

    labels, count = ndimage.label(occupied)  # 6-connected: pieces that share a face
    if count == 0:
        raise ValueError(f"h = {h} is too coarse for the creature's shape")
    largest = 1 + np.argmax(np.bincount(labels.ravel())[1:])
    cells = np.argwhere(labels == largest)
    m = box_mesh(cells, h)
    return TetMesh(np.asarray(m.vertices) + lo, m.tets)


def vertices_where(mesh, predicate) -> np.ndarray:
    """Indices of the vertices for which a predicate holds.

    Parameters
    ----------
    mesh : TetMesh
        The mesh.
    predicate : callable((V, 3) array) -> (V,) bool array
        Evaluated on the vertex positions.

    Returns
    -------
    (k,) int ndarray
    """
    _mesh(mesh)
    return np.flatnonzero(np.asarray(predicate(np.asarray(mesh.vertices)), bool))


def bottom_vertices(mesh, axis=2, tol=1e-9) -> np.ndarray:
    """Vertices on the lowest plane along an axis (the root).

    Parameters
    ----------
    mesh : TetMesh
        The mesh.
    axis : int, optional
        0, 1 or 2.
    tol : float, optional
        Distance from the plane (m) still counted on it.

    Returns
    -------
    (k,) int ndarray
    """
    X = np.asarray(_mesh(mesh).vertices)
    axis, tol = integer(axis, "axis"), finite_real(tol, "tol", 0.0)
    if axis not in (0, 1, 2):
        raise ValueError(f"axis must be 0, 1 or 2, got {axis}")
    return np.flatnonzero(X[:, axis] <= X[:, axis].min() + tol)


def surface_triangles(mesh) -> np.ndarray:
    """Boundary faces (faces belonging to exactly one tet), for plotting.

    Parameters
    ----------
    mesh : TetMesh
        The mesh.

    Returns
    -------
    (F, 3) int ndarray
        Vertex indices of each face.
    """
    T = np.asarray(_mesh(mesh).tets)
    faces = np.concatenate([T[:, [0, 1, 2]], T[:, [0, 1, 3]], T[:, [0, 2, 3]], T[:, [1, 2, 3]]])
    key = np.sort(faces, axis=1)
    _, idx, cnt = np.unique(key, axis=0, return_index=True, return_counts=True)
    return faces[idx[cnt == 1]]


def load_mesh(path) -> TetMesh:
    """A tetrahedral mesh from any file meshio reads (``pip install "directable[fem]"``).

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    TetMesh
    """
    try:
        import meshio
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("load_mesh needs meshio: pip install meshio") from exc
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    try:
        m = meshio.read(path)
    except meshio.ReadError as exc:  # a missing or unreadable file: the path is the argument at fault
        raise ValueError(f"path {path!r} is not a mesh file meshio reads: {exc}") from None
    tets = [c.data for c in m.cells if c.type == "tetra"]
    if not tets:
        raise ValueError(f"{path} holds no tetrahedra")
    T = np.concatenate(tets)
    X = np.asarray(m.points, float)[:, :3]
    used = np.unique(T)
    remap = -np.ones(len(X), np.int64)
    remap[used] = np.arange(len(used))
    T = remap[T]
    X = X[used]
    D = X[T[:, 1:]] - X[T[:, :1]]
    neg = np.linalg.det(D) < 0
    T[neg] = T[neg][:, [0, 2, 1, 3]]
    return TetMesh(X, T)


# ---------------------------------------------------------------- pipeline (paper sec. 5)

def centerline(model, dt, forces, u0=None, v0=None, a0=None, progress=None, return_acceleration=False,
               linear_solver="direct", cg_tolerance=1e-4, cg_max_iterations=1000):
    """Full centre-line run under scripted forces, in one C++ call.

    Parameters
    ----------
    model : StVKModel
    dt : float
        Time step (s).
    forces : (T, 3V) array
        External force of each step (N).
    u0, v0 : (3V,) arrays, optional
        Initial displacement and velocity (default rest).
    a0 : (3V,) array, optional
        Initial Newmark acceleration; default: consistent with the first
        step's force (then ``a[0]`` is NaN).
    progress : None, bool or callable(done, total)
        Progress report (GIL released, Ctrl-C stops the run).
    return_acceleration : bool
        Also return the accelerations.
    linear_solver, cg_tolerance, cg_max_iterations
        The Newton iterations' linear solver (``Simulator``): ``"cg"`` for
        large meshes.

    Returns
    -------
    (u, v) or (u, v, a), each (T+1, 3V)
        Implicit Newmark with Newton (``Simulator``); velocities (and
        accelerations) are kept so that enrichment runs and projected
        references can restart anywhere exactly.
    """
    sim = Simulator(model, dt, linear_solver=linear_solver, cg_tolerance=cg_tolerance,
                    cg_max_iterations=cg_max_iterations)
    N = model.dofs
    sim.set_state(np.zeros(N) if u0 is None else as_float_array(u0, "u0"),
                  np.zeros(N) if v0 is None else as_float_array(v0, "v0"),
                  None if a0 is None else as_float_array(a0, "a0"))
    u, v, a = sim.run_states(forces, progress=progress)
    return (u, v, a) if return_acceleration else (u, v)


def enrich(model, dt, forces, runs=8, fraction=0.1, duration=1, u=None, v=None, a=None, seed=0, return_times=False,
           executor=None, progress=None, linear_solver="direct", cg_tolerance=1e-4, cg_max_iterations=1000):
    """Snapshots of the "tunnel" around the centre-line (paper sec. 5.2).

    ``runs`` reruns of the full simulation, each with one random force
    impulse at a time-stratified random step (run k draws its step uniformly
    from the k-th of ``runs`` equal time strata), lasting ``duration`` steps;
    its magnitude is ``fraction`` (default 10%) of the largest centre-line
    force norm, its direction random over the free dofs. Each run restarts
    from the centre-line state (u, v, and the Newmark acceleration a: then
    a zero impulse reproduces the centre-line exactly) at the impulse
    (computed when not given) and continues to the end.

    Parameters
    ----------
    model : StVKModel
    dt : float
        Time step (s).
    forces : (T, 3V) array
        The centre-line's external forces (N).
    runs, fraction, duration, seed
        As above; every impulse (step and direction) is drawn here from
        ``seed`` before any run starts, so the snapshots do not depend on
        where the runs execute.
    u, v, a : (T+1, 3V) arrays, optional
        The centre-line run (``centerline(..., return_acceleration=True)``).
    return_times : bool
        Also return the impulse steps (runs,).
    executor : None, concurrent.futures.Executor, dask.distributed.Client or "ray"
        Where the runs execute (``directable.executors``): None runs them
        here one after the other. A task ships the model's mesh and
        parameters (``StVKModel.spec``), the start state, the impulse and
        only the non-zero columns of the forces; the snapshots are the same
        bit for bit whatever the executor.
    progress : None, bool or callable(done, total)
        One report over the runs.
    linear_solver, cg_tolerance, cg_max_iterations
        The full runs' linear solver (``Simulator``): ``"cg"`` for large
        meshes (shipped with each task).

    Returns
    -------
    snapshots : (T+1 + sum_k (T - t_k), 3V)
        The centre-line displacements followed by every run's.
    times : (runs,), with ``return_times``
    """
    forces = as_float_array(forces, "forces")
    runs = integer(runs, "runs")
    duration = integer(duration, "duration")
    fraction = finite_real(fraction, "fraction", 0.0)
    seed = integer(seed, "seed", allow_none=True)
    if forces.ndim != 2 or forces.shape[0] < 1:
        raise ValueError(f"forces must have shape (T, 3V) with T >= 1, got {forces.shape}")
    if seed is not None and seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    T = forces.shape[0]
    if runs < 1 or runs > T:
        raise ValueError(f"runs must be in [1, {T}], got {runs}")
    if duration < 1 or fraction < 0:
        raise ValueError(f"duration must be >= 1 and fraction >= 0, got {duration}, {fraction}")
    backend_model = model if executor is None else _model_spec(model)
    solver = dict(linear_solver=linear_solver, cg_tolerance=cg_tolerance, cg_max_iterations=cg_max_iterations)
    if u is None or v is None:
        u, v, a = centerline(model, dt, forces, return_acceleration=True, **solver)
    rng = np.random.default_rng(seed)
    free = np.ones(model.dofs, bool)
    free[model.fixed_dofs] = False
    magnitude = fraction * np.linalg.norm(forces, axis=1).max()
    if not np.isfinite(magnitude):
        raise ValueError(f"fraction = {fraction:g} times the largest force norm overflows")
    edges = np.linspace(0, T, runs + 1)
    cols = np.flatnonzero(np.any(forces != 0, axis=0))  # scripted forces touch few dofs: ship only those
    tasks, times = [], []
    for k in range(runs):
        t0 = int(rng.integers(int(edges[k]), max(int(edges[k]) + 1, int(edges[k + 1]))))
        d = rng.standard_normal(model.dofs) * free
        d *= magnitude / max(np.linalg.norm(d), 1e-300)
        a0 = None if a is None or t0 == 0 or not np.all(np.isfinite(a[t0])) else a[t0]
        tasks.append((backend_model, float(dt), cols, np.ascontiguousarray(forces[t0:, cols]), d, duration,
                      u[t0], v[t0], a0, solver))
        times.append(t0)
    starts = np.cumsum([T + 1] + [T - t0 for t0 in times])
    snaps = np.empty((int(starts[-1]), model.dofs))
    snaps[:T + 1] = u

    def store(k, uk):
        snaps[starts[k]:starts[k + 1]] = uk[1:]

    try:
        _executors.map_tasks(_enrichment_run, tasks, executor, out=store, progress=progress, desc="enrichment runs")
    except _executors.TaskError as e:
        # the centre-line ran, so what fails a run is its impulse: name the argument that sized it
        if isinstance(e.cause, (ValueError, RuntimeError)) and not isinstance(e.cause, _executors.TaskError):
            raise ValueError(f"fraction = {fraction:g} makes impulses of {magnitude:.3g} N (the largest centre-line "
                             f"force norm times fraction) that the full simulation cannot follow: enrichment run "
                             f"{e.index} (impulse at step {times[e.index]}) failed with {type(e.cause).__name__}: "
                             f"{e.cause}; reduce fraction") from e
        raise
    return (snaps, np.array(times)) if return_times else snaps


def _model_spec(model):
    spec = getattr(model, "spec", None)
    if spec is None:
        raise TypeError(f"model must be a directable.fem.StVKModel to run on an executor, got {type(model).__name__}")
    return spec()


def _model_from_spec(spec) -> StVKModel:
    X, tets, young, poisson, density, fixed, alpha, beta = spec
    return StVKModel(TetMesh(X, tets), young, poisson, density, fixed, alpha, beta)


def _enrichment_run(model, dt, cols, force_cols, impulse, duration, u0, v0, a0, solver=None):
    """One enrichment run (a task): the forces (T - t0, 3V) rebuilt from their
    non-zero columns plus the impulse on the first ``duration`` steps."""
    if isinstance(model, tuple):
        model = _executors.cached(_executors.spec_key(*model), lambda: _model_from_spec(model))
    f = np.zeros((force_cols.shape[0], model.dofs))
    f[:, cols] = force_cols
    f[:duration] += impulse
    uk, _ = centerline(model, dt, f, u0, v0, a0, **(solver or {}))
    return uk


def reduced_forces(U, forces) -> np.ndarray:
    """Feed-forward reduced forces ``w_ff = U' f``.

    Parameters
    ----------
    U : (3V, r) array
        Basis.
    forces : (T, 3V) array
        Full forces (N).

    Returns
    -------
    (T, r) ndarray
    """
    U = finite_array(U, "U", (None, None))
    return finite_array(forces, "forces", [(None, U.shape[0]), (U.shape[0],)], of="N = the rows of U") @ U


def project_states(red, u, v) -> np.ndarray:
    """Reduced reference ``z = [U'M u, U'M v]`` of full states.

    For a mass-orthonormal U; in general ``(U'MU)^-1 U'M`` is applied.

    Parameters
    ----------
    red : ReducedStVK
        The reduced model (its U, masses).
    u, v : (k, 3V) array
        Displacements (m) and velocities (m/s).

    Returns
    -------
    (k, 2r) ndarray
    """
    W = np.linalg.solve(red.reduced_mass, (red.U * red.full_mass[:, None]).T).T  # (3V, r)
    u, v = finite_array(u, "u"), finite_array(v, "v")
    for name, x in (("u", u), ("v", v)):
        if x.ndim != 2 or x.shape[1] != W.shape[0]:
            raise ValueError(f"{name} must have shape (k, {W.shape[0]}), got {x.shape}")
    if u.shape != v.shape:
        raise ValueError(f"u and v must have the same shape, got {u.shape} and {v.shape}")
    return np.hstack([u @ W, v @ W])


def tip_positions(mesh, u, vertices) -> np.ndarray:
    """World positions of some vertices along a run.

    Parameters
    ----------
    mesh : TetMesh
        The mesh.
    u : (k, 3V) or (3V,) array
        Displacements (m).
    vertices : (m,) int array
        Which vertices.

    Returns
    -------
    (k, m, 3) ndarray
        Positions (m).
    """
    X = np.asarray(mesh.vertices)
    u = np.atleast_2d(finite_array(u, "u", [(None, X.size), (X.size,)], of="3 V for the V vertices of mesh"))
    idx = index_array(vertices, "vertices", "(m,)")
    if idx.ndim != 1 or (idx.size and (idx.min() < 0 or idx.max() >= len(X))):
        raise ValueError(f"vertices must be a 1-D array of vertex indices in [0, {len(X)}), "
                         f"got {np.asarray(vertices).tolist() if idx.size < 20 else f'shape {idx.shape}'}")
    return X[idx][None] + u.reshape(len(u), -1, 3)[:, idx]
