"""Structured (bordered) Pade matrix exponential ``directable._core.expm_bordered``.

exp([[H, C], [0, 0]]) = [[E, G], [0, I]] is checked against SciPy's expm of
the full bordered matrix and against an extended-precision (80-bit long
double) Taylor reference, over norms 1e-4 .. 1e3, normal and strongly
non-normal H, k = 0 and k > 0.

Tolerances: 1e-12 relative (Frobenius) against the extended-precision
reference everywhere. Against SciPy 1e-12 as well, except where SciPy's own
error (measured against the same extended-precision reference) is larger:
for ||M|| >= 1e2 SciPy's float64 expm loses digits -- e.g. 1e-8 on a
strongly non-normal H of norm 1e3, and for a stable H of norm 1e3, whose
exponential is ~1e-28 in norm, SciPy returns entries ~1e-16 (absolute-error
accuracy only, relative error 1e11). There the SciPy comparison is allowed
the SciPy error plus 1e-12.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla

from directable import _core
from reference import rel_err
from reference.expm import LONGDOUBLE_IS_EXTENDED, expm_longdouble

NORMS = [1e-4, 1e-2, 1.0, 10.0, 1e2, 1e3]
KINDS = ["random", "nonnormal", "stable", "rotation"]



def _matrix(rng, kind, m, norm):
    X = rng.standard_normal((m, m))
    if kind == "nonnormal":  # strictly upper part dominates the diagonal: departure from normality
        X = 5 * np.triu(X, 1) + np.diag(-rng.uniform(0.0, 1.0, m))
    elif kind == "stable":  # all eigenvalues in the left half-plane, well away from 0
        X = X - (np.linalg.eigvals(X).real.max() + 0.5) * np.eye(m)
    elif kind == "rotation":  # skew-symmetric: exp is orthogonal
        X = X - X.T
    H = X / np.abs(X).sum(axis=0).max() * norm
    if kind == "random" and norm > 10:  # keep exp(H) representable: shift the spectrum to Re <= 0
        H = H - np.linalg.eigvals(H).real.max() * np.eye(m)
    return H


def _bordered(H, C):
    m, k = C.shape
    M = np.zeros((m + k, m + k))
    M[:m, :m] = H
    M[:m, m:] = C
    return M


@pytest.mark.parametrize("k", [0, 1, 3])
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("norm", NORMS, ids=[f"norm{x:g}" for x in NORMS])
def test_expm_bordered_accuracy(rng, norm, kind, k):
    m = 6
    H = _matrix(rng, kind, m, norm)
    C = rng.standard_normal((m, k)) * max(norm, 1e-3)
    E, G, degree, squarings = _core.expm_bordered(H, C)
    E, G = np.asarray(E), np.asarray(G)
    assert E.shape == (m, m) and G.shape == (m, k)
    assert degree in (3, 5, 7, 9, 13) and squarings >= 0
    M = _bordered(H, C)
    sp = sla.expm(M)
    sp_E, sp_G = sp[:m, :m], sp[:m, m:]
    if LONGDOUBLE_IS_EXTENDED:
        ref = expm_longdouble(M)
        ref_E, ref_G = ref[:m, :m], ref[:m, m:]
        assert rel_err(E, ref_E) < 1e-12
        if k:
            assert rel_err(G, ref_G) < 1e-12
        tol_E = 1e-12 + 10 * rel_err(sp_E, ref_E)
        tol_G = 1e-12 + 10 * rel_err(sp_G, ref_G) if k else 0.0
    else:  # no extended precision on this platform: SciPy is the only reference
        tol_E = tol_G = 1e-12 if norm <= 10 else 1e-7
    if norm <= 10:
        assert tol_E < 2e-12  # SciPy is accurate here: the plain 1e-12 applies
    assert rel_err(E, sp_E) < tol_E
    if k:
        assert rel_err(G, sp_G) < tol_G


@pytest.mark.parametrize("m", [1, 2, 17, 40])
def test_expm_sizes(rng, m):
    H = rng.standard_normal((m, m)) * 2 / np.sqrt(m)
    C = rng.standard_normal((m, 2))
    E, G, _, _ = _core.expm_bordered(H, C)
    ref = sla.expm(_bordered(H, C))
    assert rel_err(E, ref[:m, :m]) < 1e-12
    assert rel_err(G, ref[:m, m:]) < 1e-12


def test_expm_special_values(rng):
    m = 5
    E, G, _, _ = _core.expm_bordered(np.zeros((m, m)), np.ones((m, 2)))
    np.testing.assert_array_equal(E, np.eye(m))
    np.testing.assert_allclose(G, np.ones((m, 2)), rtol=1e-15)  # phi1(0) = I
    d = rng.uniform(-3, 3, m)
    E, G, _, _ = _core.expm_bordered(np.diag(d), np.ones((m, 1)))
    np.testing.assert_allclose(np.diag(E), np.exp(d), rtol=1e-14)
    np.testing.assert_allclose(E - np.diag(np.diag(E)), 0, atol=0)
    np.testing.assert_allclose(G[:, 0], np.expm1(d) / d, rtol=1e-13)  # phi1(d) 1
    # G = phi1(H) C: H G = (E - I) C
    H = rng.standard_normal((m, m))
    C = rng.standard_normal((m, 3))
    E, G, _, _ = _core.expm_bordered(H, C)
    np.testing.assert_allclose(H @ G, (E - np.eye(m)) @ C, atol=1e-13 * np.linalg.norm(E))


def test_expm_degree_grows_with_norm(rng):
    H = rng.standard_normal((5, 5))
    H /= np.abs(H).sum(axis=0).max()
    results = [_core.expm_bordered(H * s, np.zeros((5, 0))) for s in (1e-4, 1e-1, 1.0, 1e3)]
    degrees = [r[2] for r in results]
    squarings = [r[3] for r in results]
    assert degrees == sorted(degrees)
    assert squarings[0] == 0 and squarings[-1] > 0


def test_stiff_nonnormal_is_not_over_squared(rng):
    """Al-Mohy & Higham scaling: a nilpotent-heavy H of huge norm but tiny
    spectral content is computed without precision loss (over-squaring)."""
    H = np.array([[-1.0, 1e6], [0.0, -1.0]])
    E, _, _, _ = _core.expm_bordered(H, np.zeros((2, 0)))
    exact = np.exp(-1.0) * np.array([[1.0, 1e6], [0.0, 1.0]])
    assert rel_err(E, exact) < 1e-12


def test_expm_bad_input():
    with pytest.raises(ValueError, match="H"):
        _core.expm_bordered(np.zeros((3, 2)), np.zeros((3, 1)))


def test_expm_bordered_bad_input():
    with pytest.raises(ValueError, match=r"\bH\b"):
        _core.expm_bordered(np.zeros((2, 3)), np.zeros((2, 1)))
    with pytest.raises(ValueError, match=r"\bH\b"):
        _core.expm_bordered(np.zeros(3), np.zeros((3, 1)))
