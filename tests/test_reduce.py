"""directable.reduce: PCA bases against NumPy's SVD, mass orthonormality, streaming."""
import numpy as np
import pytest

from directable import reduce


def _snapshots(rng, k=60, N=200, rank=8):
    """Rank-`rank` snapshots with singular values spread over 3 decades."""
    return (rng.standard_normal((k, rank)) * np.logspace(0, -3, rank)) @ rng.standard_normal((rank, N))


@pytest.mark.parametrize("method", ["svd", "randomized"])
def test_pca_spans_the_leading_singular_subspace(rng, method):
    X = _snapshots(rng)
    b = reduce.pca(X, 5, method=method)
    _, S, Vt = np.linalg.svd(X, full_matrices=False)
    np.testing.assert_allclose(b.singular_values, S[:5], rtol=1e-8)
    # same subspace: projector difference
    P1 = b.U @ b.U.T
    P2 = Vt[:5].T @ Vt[:5]
    assert np.linalg.norm(P1 - P2) < 1e-8
    np.testing.assert_allclose(b.U.T @ b.U, np.eye(5), atol=1e-12)
    np.testing.assert_allclose(b.energy, S[:5] ** 2 / np.sum(S ** 2), rtol=1e-8)
    assert 0 < b.captured <= 1


def test_mass_orthonormal_and_optimal_in_mass_norm(rng):
    X = _snapshots(rng, N=50)
    m = rng.uniform(0.5, 3.0, 50)
    b = reduce.pca(X, 4, mass=m)
    np.testing.assert_allclose(b.U.T @ (m[:, None] * b.U), np.eye(4), atol=1e-12)
    # the mass-weighted projection error equals the discarded singular values
    Z = reduce.project(b.U, X, mass=m)
    E = X - reduce.reconstruct(b.U, Z)
    _, S, _ = np.linalg.svd(X * np.sqrt(m), full_matrices=False)
    np.testing.assert_allclose(np.einsum("ij,j,ij->", E, m, E), np.sum(S[4:] ** 2), rtol=1e-8)
    # a diagonal matrix is accepted as the mass
    b2 = reduce.pca(X, 4, mass=np.diag(m))
    np.testing.assert_allclose(np.abs(b2.U), np.abs(b.U), atol=1e-10)


def test_incremental_equals_batch(rng):
    X = _snapshots(rng, k=90, N=120, rank=6)
    inc = reduce.IncrementalPCA(120, keep=10)
    for chunk in np.array_split(X, 7):
        inc.add(chunk)
    b = inc.basis(4)
    ref = reduce.pca(X, 4, method="svd")
    np.testing.assert_allclose(b.singular_values, ref.singular_values, rtol=1e-8)
    assert np.linalg.norm(b.U @ b.U.T - ref.U @ ref.U.T) < 1e-8
    np.testing.assert_allclose(b.energy, ref.energy, rtol=1e-8)


@pytest.mark.parametrize("bad, match", [
    (dict(snapshots=np.zeros(5), r=1), "snapshots"),
    (dict(snapshots=np.zeros((4, 6)), r=5), "r must be"),
    (dict(snapshots=np.zeros((4, 6)), r=0), "r must be"),
    (dict(snapshots=np.full((4, 6), np.nan), r=2), "finite"),
    (dict(snapshots=np.ones((4, 6)), r=2, mass=np.ones(5)), "mass"),
    (dict(snapshots=np.ones((4, 6)), r=2, mass=-np.ones(6)), "positive"),
    (dict(snapshots=np.ones((4, 6)), r=2, method="qr"), "method"),
])
def test_bad_input(bad, match):
    with pytest.raises(ValueError, match=match):
        reduce.pca(**bad)


def test_non_real_snapshots_are_refused():
    with pytest.raises(TypeError, match="snapshots"):
        reduce.pca(np.ones((3, 3)) + 1j, 1)
