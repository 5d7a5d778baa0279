"""Reduced bases from snapshots (Barbic & Popovic 2008 sec. 5.1; Treuille ch. 3).

``pca`` turns displacement or velocity snapshots into a basis ``U`` whose
columns are orthonormal in the (optionally mass-weighted) inner product:
``U' M U = I``. The heavy lifting is LAPACK's SVD (through NumPy), or a
randomized range finder when the snapshot matrix is large, or a streaming
(incremental) update when the snapshots arrive in chunks. Snapshot matrices
larger than memory are read in column blocks from disk (a NumPy memmap, a
zarr array: an exact tall-skinny QR, two passes) or factored by Dask
(a ``dask.array``: ``dask.array.linalg.svd_compressed``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validate import as_float_array, finite_array, integer

__all__ = ["Basis", "pca", "IncrementalPCA", "project", "reconstruct"]


@dataclass(frozen=True)
class Basis:
    """A reduced basis.

    Parameters
    ----------
    U : (N, r) ndarray
        Columns, ``U' M U = I`` (M the mass given to ``pca``, or I).
    singular_values : (r,) ndarray
        Of the (mass-weighted) snapshot matrix.
    energy : (r,) ndarray
        Fraction of the snapshots' total energy (sum of squared singular
        values, over all modes) captured by each mode.
    """

    U: np.ndarray
    singular_values: np.ndarray
    energy: np.ndarray

    @property
    def r(self) -> int:
        """Number of modes."""
        return self.U.shape[1]

    @property
    def captured(self) -> float:
        """Fraction of the snapshot energy the r modes capture."""
        return float(self.energy.sum())


def _mass_sqrt(mass, N):
    if mass is None:
        return None
    mass = finite_array(mass, "mass", [(N,), (N, N)])
    if mass.ndim == 2:
        if np.count_nonzero(mass - np.diag(np.diagonal(mass))):
            raise ValueError("mass must be diagonal (lumped); pass its diagonal as an (N,) array")
        mass = np.diagonal(mass)
    if np.any(mass <= 0):
        raise ValueError(f"mass must be positive, got {mass.min()} at index {int(np.argmin(mass))}")
    return np.sqrt(mass)


def pca(snapshots, r, mass=None, method="auto", oversample=10, power_iterations=2, seed=0, block=None) -> Basis:
    """Mass-orthonormal PCA/POD basis of ``snapshots`` (k, N): k states of size N.

    Parameters
    ----------
    snapshots : (k, N) array in memory; a ``numpy.memmap`` or zarr array (or
        anything with ``.shape`` and 2-D slicing, e.g. an h5py dataset): read
        in column blocks, never whole, with the exact method below; or a
        ``dask.array``: randomized SVD by ``dask.array.linalg.svd_compressed``
        (``oversample``, ``power_iterations``, ``seed`` as for
        "randomized", QR-normalised subspace iterations), computed on the
        array's scheduler (the active ``dask.distributed.Client``, if any).
    r : int
        Number of modes (1 <= r <= min(k, N)).
    mass : None, or the lumped mass as (N,) or a diagonal (N, N)
        The basis then satisfies ``U' diag(mass) U = I``.
    method : "svd" (exact, LAPACK), "randomized" (Halko et al.: r + oversample
        random probes and ``power_iterations`` subspace iterations; for
        k, N >> r), or "auto" (randomized when min(k, N) > 4 (r + oversample)).
        On disk: always exact (a tall-skinny QR of the mass-weighted
        snapshots' transpose, block by block, the k x k factor's SVD, then a
        second pass for the r modes): memory O(k^2 + N r + k block).
    oversample, power_iterations, seed : int, optional
        Of the randomized method.
    block : int, optional
        Columns read at a time from disk (default: about 64 MB per block).

    Returns
    -------
    Basis
        ``U`` (N, r), ``singular_values`` (r,), ``energy`` (r,).

    Notes
    -----
    Snapshots are not centred: the basis spans the states themselves, as the
    papers use it (displacements from rest, velocities).
    """
    if type(snapshots).__module__.startswith("dask.array"):
        return _pca_dask(snapshots, r, mass, oversample, power_iterations, seed)
    if isinstance(snapshots, np.memmap) or (not isinstance(snapshots, np.ndarray) and hasattr(snapshots, "shape")
                                            and hasattr(snapshots, "__getitem__") and len(snapshots.shape) == 2):
        return _pca_blocks(snapshots, r, mass, block)
    X = as_float_array(snapshots, "snapshots")
    if X.ndim != 2:
        raise ValueError(f"snapshots must be a (k, N) array, got shape {X.shape}")
    k, N = X.shape
    r = integer(r, "r")
    if not 1 <= r <= min(k, N):
        raise ValueError(f"r must be in [1, {min(k, N)}] for snapshots of shape {X.shape}, got {r}")
    if not np.all(np.isfinite(X)):
        raise ValueError("snapshots must be finite (found NaN or inf)")
    sq = _mass_sqrt(mass, N)
    Y = X * sq if sq is not None else X  # rows in the mass-weighted space
    total = float(np.einsum("ij,ij->", Y, Y))
    if method == "auto":
        method = "randomized" if min(k, N) > 4 * (r + oversample) else "svd"
    if method == "svd":
        _, S, Vt = np.linalg.svd(Y, full_matrices=False)
        S, V = S[:r], Vt[:r].T
    elif method == "randomized":
        rng = np.random.default_rng(seed)
        probes = rng.standard_normal((k, min(r + oversample, k)))
        Q = np.linalg.qr(Y.T @ probes)[0]  # (N, l) range of Y'
        for _ in range(power_iterations):
            Q = np.linalg.qr(Y.T @ (Y @ Q))[0]
        _, S, Wt = np.linalg.svd(Y @ Q, full_matrices=False)
        S, V = S[:r], Q @ Wt[:r].T
    else:
        raise ValueError(f"method must be 'auto', 'svd' or 'randomized', got {method!r}")
    U = V / sq[:, None] if sq is not None else V
    energy = S ** 2 / total if total > 0 else np.zeros(r)
    return Basis(np.ascontiguousarray(U), S.copy(), energy)


def _check_rank(r, shape):
    r = integer(r, "r")
    if not 1 <= r <= min(shape):
        raise ValueError(f"r must be in [1, {min(shape)}] for snapshots of shape {tuple(shape)}, got {r}")
    return r


def _pca_blocks(X, r, mass, block):
    """Exact PCA of a (k, N) matrix read in column blocks (memmap, zarr, h5py)."""
    if len(X.shape) != 2:
        raise ValueError(f"snapshots must be a (k, N) array, got shape {tuple(X.shape)}")
    k, N = (int(d) for d in X.shape)
    r = _check_rank(r, (k, N))
    sq = _mass_sqrt(mass, N)
    b = max(1, integer(block, "block")) if block is not None else max(k, (64 << 20) // (8 * max(k, 1)))

    def weighted(j0, j1):
        Yb = np.asarray(X[:, j0:j1], dtype=np.float64)
        if not np.all(np.isfinite(Yb)):
            raise ValueError(f"snapshots must be finite (found NaN or inf in columns {j0}:{j1})")
        return Yb * sq[j0:j1] if sq is not None else Yb

    # pass 1: Y' = Q R block by block (R stays k x k), and the total energy
    R = np.zeros((0, k))
    total = 0.0
    for j0 in range(0, N, b):
        Yb = weighted(j0, min(N, j0 + b))
        total += float(np.einsum("ij,ij->", Yb, Yb))
        R = np.linalg.qr(np.vstack([R, Yb.T]), mode="r")
    # Y' = Q R, R = A S B'  =>  Y = B S (Q A)': the modes are V = Y' B S^-1
    _, S, Bt = np.linalg.svd(R, full_matrices=False)
    S, B = S[:r], Bt[:r].T
    if S[-1] <= 0:
        raise ValueError(f"the snapshots have rank < r = {r}")
    V = np.empty((N, r))
    for j0 in range(0, N, b):  # pass 2
        j1 = min(N, j0 + b)
        V[j0:j1] = weighted(j0, j1).T @ B / S
    U = V / sq[:, None] if sq is not None else V
    return Basis(np.ascontiguousarray(U), S.copy(), S ** 2 / total if total > 0 else np.zeros(r))


def _pca_dask(X, r, mass, oversample, power_iterations, seed):
    """Randomized PCA of a dask.array on its scheduler (svd_compressed)."""
    import dask
    import dask.array as da

    if X.ndim != 2:
        raise ValueError(f"snapshots must be a (k, N) array, got shape {X.shape}")
    if X.dtype.kind not in "biuf":
        raise TypeError(f"snapshots must be a real numeric array, got dtype {X.dtype}")
    k, N = X.shape
    r = _check_rank(r, (k, N))
    sq = _mass_sqrt(mass, N)
    Y = X.astype(np.float64)
    if sq is not None:
        Y = Y * da.from_array(sq, chunks=(Y.chunks[1],))[None, :]
    _, S, Vt = da.linalg.svd_compressed(Y, k=r, n_oversamples=integer(oversample, "oversample"),
                                        n_power_iter=integer(power_iterations, "power_iterations"), seed=seed,
                                        compute=False, iterator="QR")  # re-orthonormalised: plain powers lose the tail
    finite = da.isfinite(Y).all()
    try:
        S, Vt, total, finite = dask.compute(S, Vt, (Y * Y).sum(), finite)
    except np.linalg.LinAlgError:  # LAPACK meets the NaN before the check is gathered
        finite = bool(finite.compute())
        if finite:
            raise
    if not finite:
        raise ValueError("snapshots must be finite (found NaN or inf)")
    V = Vt.T
    U = V / sq[:, None] if sq is not None else V
    total = float(total)
    return Basis(np.ascontiguousarray(U), np.asarray(S, float).copy(), S ** 2 / total if total > 0 else np.zeros(r))


class IncrementalPCA:
    """Streaming PCA for snapshots that do not fit in memory.

    ``add(chunk)`` folds (c, N) snapshots into a rank-``keep`` factorisation
    (Brand's update: SVD of [S V', chunk] projected), then ``basis(r)``.
    ``keep`` (default 2 r_max) bounds the memory to O(N keep).

    Parameters
    ----------
    N : int
        Size of a snapshot.
    keep : int
        Rank kept between chunks (about twice the most modes wanted).
    mass : None, (N,) or diagonal (N, N) array, optional
        Lumped mass, as in :func:`pca`.
    """

    def __init__(self, N, keep, mass=None):
        self.N = integer(N, "N")
        self.keep = integer(keep, "keep")
        if self.N < 1:
            raise ValueError(f"N must be >= 1, got {N}")
        if self.keep < 1:
            raise ValueError(f"keep must be >= 1, got {keep}")
        self._sq = _mass_sqrt(mass, self.N)
        self._SVt = np.zeros((0, self.N))  # (<= keep, N): S V'
        self._total = 0.0

    def add(self, chunk) -> None:
        """Fold in a chunk of snapshots.

        Parameters
        ----------
        chunk : (c, N) array
            Snapshots, one per row.
        """
        C = as_float_array(chunk, "chunk")
        if C.ndim != 2 or C.shape[1] != self.N:
            raise ValueError(f"chunk must have shape (c, {self.N}), got {C.shape}")
        if not np.all(np.isfinite(C)):
            raise ValueError("chunk must be finite (found NaN or inf)")
        if self._sq is not None:
            C = C * self._sq
        self._total += float(np.einsum("ij,ij->", C, C))
        _, S, Vt = np.linalg.svd(np.vstack([self._SVt, C]), full_matrices=False)
        self._SVt = S[: self.keep, None] * Vt[: self.keep]

    def basis(self, r) -> Basis:
        """The first r modes of what was added so far.

        Parameters
        ----------
        r : int
            Number of modes, at most ``keep``.

        Returns
        -------
        Basis
            As :func:`pca` returns it.
        """
        r = integer(r, "r")
        if not 1 <= r <= self._SVt.shape[0]:
            raise ValueError(f"r must be in [1, {self._SVt.shape[0]}], got {r}")
        S = np.linalg.norm(self._SVt[:r], axis=1)
        V = (self._SVt[:r] / S[:, None]).T
        U = V / self._sq[:, None] if self._sq is not None else V
        return Basis(np.ascontiguousarray(U), S, S ** 2 / self._total if self._total > 0 else np.zeros(r))


def project(U, q, mass=None) -> np.ndarray:
    """Reduced coordinates ``U' M q`` of full states.

    Parameters
    ----------
    U : (N, r) array
        Basis.
    q : (N,) or (k, N) array
        Full states.
    mass : None, (N,) or diagonal (N, N) array, optional
        The mass M the basis is orthonormal in (I when None).

    Returns
    -------
    (r,) or (k, r) ndarray
    """
    U = finite_array(U, "U", (None, None))
    q = finite_array(q, "q", [(U.shape[0],), (None, U.shape[0])], of="N = the rows of U")
    sq = _mass_sqrt(mass, U.shape[0])
    return (q * sq ** 2) @ U if sq is not None else q @ U


def reconstruct(U, z) -> np.ndarray:
    """Full states ``U z`` from reduced coordinates.

    Parameters
    ----------
    U : (N, r) array
        Basis.
    z : (r,) or (k, r) array
        Reduced coordinates.

    Returns
    -------
    (N,) or (k, N) ndarray
    """
    U = finite_array(U, "U", (None, None))
    z = finite_array(z, "z", [(U.shape[1],), (None, U.shape[1])], of="r = the columns of U")
    return z @ U.T
