r"""The commuting algebra of marginal queries on a product schema.

For a schema with attributes of ``n_1, ..., n_d`` levels, the marginal query
``Q_S`` that keeps the attributes in ``S`` has
:math:`Q_S^\top Q_S = \bigotimes_{a \in S} I_{n_a} \otimes \bigotimes_{a \notin S} 1 1^\top`.
Per attribute, :math:`\mathbb R^{n_a}` splits into the constant vector and
its complement; ``I`` is 1 on both and ``1 1^T`` is ``n_a`` on the first and 0
on the second.  So every :math:`Q_S^\top Q_S` (and every weighted sum and
inverse of them) is a scalar on each of the :math:`2^d` joint eigenspaces

.. math:: E_T = \bigotimes_{a \in T} 1^\perp \otimes \bigotimes_{a \notin T} \mathrm{span}(1),
          \qquad T \subseteq \{1, \dots, d\},

namely :math:`\prod_{a \notin S} n_a` when :math:`T \subseteq S` and 0
otherwise.  ``T`` is coded as a bit mask (bit ``a`` set: the contrasts of
attribute ``a``).  An operator of the algebra is its vector of ``2^d``
scalars ("eigen-coefficients"); it is applied to histograms without ever
forming a matrix, by axis means (:meth:`EigenAlgebra.apply`).

References
----------
The projection onto :math:`E_T` is the ANOVA
decomposition of a table into main effects and interactions.
"""

from __future__ import annotations

import itertools
from functools import cached_property

import numpy as np

__all__ = ["EigenAlgebra"]


class EigenAlgebra:
    """Eigen-coefficients of marginal-query operators on a schema of shape ``shape``.

    Parameters
    ----------
    shape : tuple of int
        Levels of each attribute, ``n_a >= 1``.

    Examples
    --------
    >>> alg = EigenAlgebra((2, 3))
    >>> alg.n_spaces, alg.k
    (4, 6)
    >>> alg.query_mask((0,)).tolist()  # E_T inside the range of Q_{attr 0}: T = {} and {0}
    [True, True, False, False]
    >>> x = np.arange(6.0).reshape(1, 2, 3)
    >>> np.allclose(alg.apply(x, np.ones(4)), x)  # the projections sum to the identity
    True
    """

    def __init__(self, shape):
        self.shape = tuple(int(n) for n in shape)
        self.d = len(self.shape)
        self.k = int(np.prod(self.shape, dtype=np.int64))
        self.n_spaces = 1 << self.d

    # -- subsets -------------------------------------------------------------

    @cached_property
    def bits(self) -> np.ndarray:
        """``bits[T, a]``: whether attribute ``a`` is in ``T``, shape ``(2^d, d)``."""
        t = np.arange(self.n_spaces)[:, None]
        return ((t >> np.arange(self.d)[None, :]) & 1).astype(bool)

    def mask_of(self, attrs) -> int:
        """The bit mask of a set of attribute indices."""
        return int(sum(1 << int(a) for a in attrs))

    def query_mask(self, attrs) -> np.ndarray:
        """``T subset of S``: the eigenspaces in the range of ``Q_S^T``, shape ``(2^d,)``."""
        s = self.mask_of(attrs)
        return (np.arange(self.n_spaces) & ~s) == 0

    def query_factor(self, attrs) -> float:
        """``prod_{a not in S} n_a``: the eigenvalue of ``Q_S^T Q_S`` on its range."""
        keep = set(int(a) for a in attrs)
        return float(np.prod([n for a, n in enumerate(self.shape) if a not in keep]))

    @cached_property
    def dims(self) -> np.ndarray:
        """``dim E_T = prod_{a in T} (n_a - 1)``, shape ``(2^d,)``."""
        n = np.array(self.shape, dtype=float)
        return np.prod(np.where(self.bits, n - 1.0, 1.0), axis=1)

    def cell_weight(self, attrs) -> np.ndarray:
        r"""``||P_T r||^2`` for the indicator ``r`` of any one cell of ``Q_S``, shape ``(2^d,)``.

        The same for every cell: ``prod_{a not in S} n_a`` times
        ``prod_{a in T} (1 - 1/n_a) prod_{a in S \ T} 1/n_a`` for ``T`` in ``S``,
        0 otherwise.  So a query cell's variance under an operator with
        eigen-coefficients ``m`` is ``sum_T m_T * cell_weight[T]``.
        """
        n = np.array(self.shape, dtype=float)
        inside = np.zeros(self.d, dtype=bool)
        inside[list(attrs)] = True
        per = np.where(self.bits, 1.0 - 1.0 / n, np.where(inside, 1.0 / n, 1.0))
        w = np.prod(per, axis=1) * self.query_factor(attrs)
        return np.where(self.query_mask(attrs), w, 0.0)

    # -- applying operators ----------------------------------------------------

    def _moebius(self, coef: np.ndarray) -> np.ndarray:
        """``b_U = sum_{T >= U} (-1)^{|T - U|} c_T`` along the last axis."""
        b = np.array(coef, dtype=float, copy=True)
        for a in range(self.d):
            bit = 1 << a
            low = np.array([t for t in range(self.n_spaces) if not t & bit])
            b[..., low] -= b[..., low | bit]
        return b

    def means(self, x: np.ndarray) -> dict[int, np.ndarray]:
        """``{U: mean of x over the attributes not in U}`` (keepdims), for every ``U``.

        ``x`` has shape ``(N, *shape)``; each mean is computed from a larger one
        by one axis mean, smallest arrays last.
        """
        full = self.n_spaces - 1
        out = {full: x}
        for size in range(self.d - 1, -1, -1):
            for keep in itertools.combinations(range(self.d), size):
                u = self.mask_of(keep)
                # drop the lowest missing attribute from a superset already computed
                a = next(a for a in range(self.d) if not u >> a & 1)
                out[u] = out[u | (1 << a)].mean(axis=1 + a, keepdims=True)
        return out

    def apply(self, x, coef, rows=None) -> np.ndarray:
        r"""``sum_T coef_T P_T x`` for histograms ``x`` of shape ``(N, *shape)``.

        ``coef`` has shape ``(2^d,)`` or ``(N, 2^d)`` and must be finite.  By
        the Moebius inversion :math:`P_T = \sum_{U \subseteq T} (-1)^{|T-U|} M_U`
        (``M_U`` the mean over the attributes outside ``U``) the operator is
        :math:`\sum_U b_U M_U`.  The terms are summed attribute by attribute,
        smallest partial sums first, so that few passes run over full-size
        arrays.  With ``rows`` the operator acts on ``x[rows]`` (one row per
        child of the parents ``x``): the means are taken on the parents and
        gathered, never on the gathered array.
        """
        x = np.asarray(x, dtype=float)
        b = self._moebius(np.asarray(coef, dtype=float))
        means = self.means(x)
        pad = (None,) * self.d

        def term(u):
            bu = b[:, u][(slice(None), *pad)] if b.ndim == 2 else b[u]
            if rows is None:
                return bu * means[u]
            m = means[u][rows]
            m *= bu  # a gathered copy: scale it in place
            return m

        # sum the terms split by attribute, smallest partial sums first: each level of
        # the recursion costs one pass over arrays of the shape of its largest term
        order = sorted(range(self.d), key=lambda a: -self.shape[a])

        def total(us, depth):
            if len(us) == 1:
                return term(us[0])
            bit = 1 << order[depth]
            without = [u for u in us if not u & bit]
            with_ = [u for u in us if u & bit]
            if not without or not with_:
                return total(us, depth + 1)
            part = total(with_, depth + 1)
            rest = total(without, depth + 1)
            if part.shape == np.broadcast_shapes(part.shape, rest.shape):
                part += rest
                return part
            return part + rest

        out = total(list(range(self.n_spaces)), 0)
        shape = x.shape if rows is None else (len(rows), *x.shape[1:])
        return out if out.shape == shape else np.broadcast_to(out, shape).copy()

    def project(self, x, t: int) -> np.ndarray:
        """``P_T x`` (histograms of shape ``(N, *shape)``)."""
        coef = np.zeros(self.n_spaces)
        coef[t] = 1.0
        return self.apply(x, coef)

    # -- queries ---------------------------------------------------------------

    def marginal(self, x, attrs) -> np.ndarray:
        """``Q_S x``: sum over the attributes not in ``attrs``, shape ``(N, cells)``."""
        x = np.asarray(x, dtype=float)
        drop = tuple(1 + a for a in range(self.d) if a not in attrs)
        return x.sum(axis=drop).reshape(x.shape[0], -1)

    def spread(self, y, attrs) -> np.ndarray:
        """``Q_S^T y``: each query cell copied to the detailed cells that sum into it."""
        y = np.asarray(y, dtype=float)
        keep = set(attrs)
        view = [y.shape[0]] + [self.shape[a] if a in keep else 1 for a in range(self.d)]
        return np.broadcast_to(y.reshape(view), (y.shape[0], *self.shape))

    def query_rows(self, attrs) -> np.ndarray:
        """The matrix of ``Q_S``, shape ``(cells, k)`` (0/1)."""
        cells = int(np.prod([self.shape[a] for a in attrs], dtype=np.int64))
        eye = np.eye(cells)
        return self.spread(eye, attrs).reshape(cells, self.k)

    # -- orthonormal bases of the eigenspaces ------------------------------------

    @cached_property
    def _factor_bases(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per attribute: (constant unit vector, orthonormal basis of its complement)."""
        out = []
        for n in self.shape:
            const = np.full((n, 1), 1.0 / np.sqrt(n))
            # QR of the centring matrix: an orthonormal basis of 1-perp
            q, _ = np.linalg.qr(np.eye(n) - 1.0 / n)
            out.append((const, q[:, : n - 1]))
        return out

    def basis(self, t: int) -> np.ndarray:
        """An orthonormal basis of ``E_T``, shape ``(k, dim E_T)`` (Kronecker of factors)."""
        mat = np.ones((1, 1))
        for a in range(self.d):
            const, comp = self._factor_bases[a]
            mat = np.kron(mat, comp if t >> a & 1 else const)
        return mat
