"""Value-function bases (Treuille thesis eq. 5.11, sec. 5.4).

    from directable.characters import basis
    phi = basis.polynomial("d", 2, scale=2.0) * basis.polynomial("theta", 4, scale=np.pi)
    phi = phi + basis.gaussian("u", 0.0, -1.5, 4) * basis.gaussian("v", 0.0, 0.0, 1)

``polynomial(var, N)`` is P_N (degrees 0..N), ``gaussian(var, a, b, n)`` is
G_{a,b,n} (n bumps exp(-(x - x_i)^2 / sigma2) evenly spaced on [a, b]).
``*`` forms outer-product families, ``+`` unions. The value function is
tabulated along the clip: V(X) = Phi(X) . r[C]. Polynomials are evaluated as
Legendre polynomials of x / scale (the span of the monomials (x /
scale)^k, far better conditioned in the LP); ``evaluate(..., monomial=True)``
gives the monomials themselves.
"""
from __future__ import annotations

import numpy as np

from .. import _core
from .._validate import as_float_array, integer, iterable, real

__all__ = ["Basis", "polynomial", "gaussian", "constant"]


class _Family:
    def __init__(self, kind, var, **params):
        if not isinstance(var, str):
            raise TypeError(f"var must be a variable name (str), got {var!r}")
        self.kind, self.var, self.params = kind, var, params
        # validated once, by the C++ core
        _core.CharacterBasis([[self.spec(1)]])

    def spec(self, column):
        return dict(kind=self.kind, column=column, **self.params)

    @property
    def size(self):
        return self.params["degree"] + 1 if self.kind == "polynomial" else self.params["n"]

    def term_names(self):
        p = self.params
        if self.kind == "polynomial":
            return [f"{self.var}^{k}" for k in range(p["degree"] + 1)]
        n = p["n"]
        centres = [p["a"] + i * (p["b"] - p["a"]) / (n - 1) if n > 1 else p["a"] for i in range(n)]
        return [f"G({self.var}-{c:g})" for c in centres]


class Basis:
    """A union of outer products of basis families.

    Built by :func:`polynomial`, :func:`gaussian` and :func:`constant`
    combined with ``*`` (outer products) and ``+`` (unions), rarely directly.

    Parameters
    ----------
    products : sequence of tuple of families
        Each tuple is one outer product of one-variable families (an empty
        tuple is the constant 1).

    Attributes
    ----------
    size : int
        nb, the number of basis functions per clip.
    variables : tuple of str
        The variables the basis uses, in order of first mention.
    term_names : list of str
        One readable name per basis function (``"d^1*theta^2"``).
    """

    def __init__(self, products):
        self.products = [tuple(iterable(p, "products[i]", "a tuple of families"))
                         for p in iterable(products, "products", "a sequence of tuples of families")]

    def __mul__(self, other):
        if not isinstance(other, Basis):
            return NotImplemented
        return Basis([a + b for a in self.products for b in other.products])

    def __add__(self, other):
        if not isinstance(other, Basis):
            return NotImplemented
        return Basis(self.products + other.products)

    @property
    def variables(self):
        """The variables the basis uses, in order of first mention (tuple of str)."""
        out = []
        for p in self.products:
            for f in p:
                if f.var not in out:
                    out.append(f.var)
        return tuple(out)

    @property
    def size(self):
        """nb: the number of basis functions per clip (int)."""
        return sum(int(np.prod([f.size for f in p])) if p else 1 for p in self.products)

    @property
    def term_names(self):
        """One readable name per basis function, in the order of the columns of r (list of str)."""
        names = []
        for p in self.products:
            terms = [""]
            for f in p:
                terms = [(t + "*" if t else "") + n for t in terms for n in f.term_names()]
            names += [t or "1" for t in terms]
        return names

    def _columns(self, task):
        if task is None:
            return {v: i + 1 for i, v in enumerate(self.variables)}
        names = list(task.variables)
        unknown = [v for v in self.variables if v not in names]
        if unknown:
            raise ValueError(f"basis: unknown variable {unknown[0]!r}; the task's variables are {tuple(names)}")
        return {v: names.index(v) + 1 for v in names}

    def _core(self, task=None, monomial=False):
        cols = self._columns(task)
        return _core.CharacterBasis([[f.spec(cols[f.var]) for f in p] for p in self.products], monomial)

    def evaluate(self, states, task=None, monomial=False):
        """Phi(X) for many states.

        Parameters
        ----------
        states : (S, d) array_like
            States, the clip in column 0 (ignored here); the other columns are
            the task's variables (``task.variables``) or, with ``task=None``,
            the basis' own ``variables`` in order.
        task : task object, optional
        monomial : bool
            Evaluate polynomials as monomials (x / scale)^k instead of the
            Legendre polynomials used for learning.

        Returns
        -------
        (S, nb) ndarray
        """
        return self._core(task, monomial).evaluate(as_float_array(states, "states"))

    def feature_bounds(self, task, points=1001):
        """max |phi_j| over the task's ranges, per basis function.

        Every function is a product of one-variable families, so its largest
        magnitude on the box of ranges is the product of the families'
        largest magnitudes on their own axes, each found on ``points`` evenly
        spaced values (ends included).

        Parameters
        ----------
        task : task object
            Its ``variables`` and ``ranges`` (m or rad).
        points : int
            Values per axis, in [2, 100000].

        Returns
        -------
        (nb,) ndarray
            Dimensionless, in the order of ``term_names``.
        """
        names = list(task.variables)
        ranges = np.asarray(task.ranges)
        self._columns(task)  # names an unknown variable
        points = integer(points, "points")
        if not 2 <= points <= 100_000:
            raise ValueError(f"points must lie in [2, 100000] (both ends of each range; more adds nothing "
                             f"to a bound on smooth functions), got {points}")
        out = []
        for p in self.products:
            b = np.ones(1)
            for f in p:
                lo, hi = ranges[names.index(f.var)]
                x = np.zeros((points, 2))
                x[:, 1] = np.linspace(lo, hi, len(x))
                b = np.outer(b, np.max(np.abs(Basis([(f,)]).evaluate(x)), axis=0)).ravel()
            out.append(b)
        return np.concatenate(out)

    def __repr__(self):
        return f"Basis(nb={self.size}, variables={self.variables})"


def polynomial(var, degree, scale=1.0):
    """P_N(var): the polynomials of degree 0..N in var / scale (N + 1 terms).

    Parameters
    ----------
    var : str
        A task variable (``"d"``, ``"theta"``, ``"u"``, ``"v"``).
    degree : int
        N >= 0.
    scale : float
        The variable is divided by it (m or rad): the sampled range's
        half-width keeps the Legendre polynomials within [-1, 1].

    Returns
    -------
    Basis
        N + 1 functions, evaluated as Legendre polynomials of var / scale
        (the span of the monomials).
    """
    return Basis([(_Family("polynomial", var, degree=integer(degree, "degree"), scale=real(scale, "scale")),)])


def gaussian(var, a, b, n, sigma2=2.0):
    """G_{a,b,n}(var): n Gaussian bumps exp(-(x - x_i)^2 / sigma2), x_i evenly spaced on [a, b].

    Parameters
    ----------
    var : str
        A task variable.
    a, b : float
        First and last centre (units of the variable: m or rad).
    n : int
        Number of bumps, >= 1 (one bump sits at a).
    sigma2 : float
        Squared width (units of the variable squared), > 0; the thesis uses 2.

    Returns
    -------
    Basis
        n functions.
    """
    return Basis([(_Family("gaussian", var, a=real(a, "a"), b=real(b, "b"), n=integer(n, "n"),
                           sigma2=real(sigma2, "sigma2")),)])


def constant():
    """The constant basis function 1 (an empty product).

    Returns
    -------
    Basis
        One function, 1 everywhere.
    """
    return Basis([()])
