r"""The algebra of recoded queries and level-set zeros: dense small factors times eigenspaces.

A recode (a grouping of one attribute's levels) or a structural zero on some
levels of an attribute breaks the constant/complement decomposition of that
attribute, but not of the others.  Split the attributes into the *dense*
ones ``D`` (touched by a recode or a zero) and the *scalar* ones ``C``, and
order the cells as (scalar attributes, dense attributes), so that
:math:`\mathbb R^k = \mathbb R^{k_C} \otimes \mathbb R^m` with
:math:`m = \prod_{a \in D} n_a` (16 for P.L. 94-171: ``hhgq`` 8 x
``votingage`` 2).  For a query with (possibly recoded) factors ``q_a``,

.. math:: Q^\top Q = \bigotimes_{a \in C} q_a^\top q_a \otimes
          \bigotimes_{a \in D} q_a^\top q_a ,

and the scalar factors are the identity or all-ones matrices of
:mod:`._eigenspaces`: on each joint eigenspace :math:`E_T` of the scalar
attributes (``T`` a subset of ``C``) the query acts as a scalar times one
``m x m`` matrix, on every copy of :math:`W_T` alike:
:math:`Q^\top Q = \sum_T P_T \otimes c_T A`.  Sums and inverses of such
operators stay of this form, so a unit's information, covariance and gains
are ``2^{|C|}`` matrices of size ``m x m`` ("blocks"), whatever the number of
cells.  An equality invariant pins the range of the query's projection
:math:`\Pi = Q^+ Q`, again of the form :math:`\sum_T P_T \otimes \Pi_T`; a
zero of the cells ``Z x`` (every level of the scalar attributes) is the
coordinate projection on ``Z`` in every block.

Histograms are kept in the *block layout* ``(N, *scalar shape, m)``
(:meth:`FactorAlgebra.to_block`); operators act on them by the axis means of
:meth:`~._eigenspaces.EigenAlgebra.means` (Moebius inversion) and one
``m x m`` product per term.

References
----------
Cumings-Menon & Zhuravlev (2024), "Least squares estimation for hierarchical
data", arXiv:2404.13164 (the information of marginal queries); the
P.L. 94-171 recodes are those of the Census Bureau's 2020 production
strategy (``hhinstlevels``, ``gqNursingTotal``, ``nonvoting``).
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ._eigenspaces import EigenAlgebra

__all__ = [
    "CHUNK_CELLS",
    "FactorAlgebra",
    "dense_attributes",
    "query_rows",
    "row_chunks",
    "sum_broadcast",
]

#: cells of the histograms of one chunk of :meth:`FactorAlgebra.apply` (4 MB of float64)
CHUNK_CELLS = 1 << 19


def row_chunks(row_shape, n: int):
    """Slices of ``n`` rows of shape ``row_shape``, each about :data:`CHUNK_CELLS` numbers.

    The passes work a chunk at a time so that their temporaries are a
    chunk's: the allocator reuses their pages instead of touching fresh ones.
    """
    step = max(1, CHUNK_CELLS // max(1, int(np.prod(row_shape, dtype=np.int64))))
    return (slice(lo, min(lo + step, n)) for lo in range(0, n, step))


def query_rows(shape, attrs, recodes, over=None) -> np.ndarray:
    """The 0/1 matrix of a (possibly recoded) query, ``(cells, k)``: a Kronecker product.

    ``over`` restricts it to those attributes' factors (default: all of them).
    """
    out = np.ones((1, 1))
    for a in range(len(shape)) if over is None else over:
        n = shape[a]
        if a in recodes:
            f = recodes[a].astype(float)
        elif a in attrs:
            f = np.eye(n)
        else:
            f = np.ones((1, n))
        out = np.kron(out, f)
    return out


def sum_broadcast(parts) -> list:
    """Sum arrays that broadcast into one another: the fewest passes over the largest.

    Each part, smallest first, is added in place into the smallest later part
    it broadcasts into (the parts must be fresh, writable arrays); returns the
    parts that broadcast into no other, whose sum (by broadcasting) is the total.
    """
    parts = sorted(parts, key=lambda p: p.size)
    roots = []
    for i, p in enumerate(parts):
        later = (q for q in parts[i + 1 :] if np.broadcast_shapes(p.shape, q.shape) == q.shape)
        host = next(later, None)
        if host is None:
            roots.append(p)
        else:
            host += p
    return roots


def dense_attributes(problem) -> tuple:
    """The attributes a problem's recodes or structural zeros touch (sorted)."""
    out = set()
    for it in (*problem.measurements, *problem.equalities, *problem.zeros):
        out.update(int(a) for a in it.recodes)
    for z in problem.zeros:
        out.update(int(a) for a in z.attrs)
    return tuple(sorted(out))


class FactorAlgebra:
    """Block operators on a schema whose attributes ``dense`` keep a full factor.

    Parameters
    ----------
    shape : tuple of int
        Levels of each attribute.
    dense : sequence of int
        The attributes kept whole (the others split into constant and contrasts).

    Examples
    --------
    >>> fa = FactorAlgebra((3, 2, 4), dense=(0,))
    >>> fa.m, fa.n_spaces, fa.sshape
    (3, 4, (2, 4))
    >>> group = {0: np.array([[1, 1, 0]])}          # levels {0, 1} of attribute 0
    >>> c, a = fa.query_info((0, 1), group)
    >>> c.tolist()                                   # attribute 2 summed: 4 on its constant
    [4.0, 4.0, 0.0, 0.0]
    >>> a.tolist()
    [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]]
    """

    def __init__(self, shape, dense=()):
        self.shape = tuple(int(n) for n in shape)
        self.d = len(self.shape)
        self.k = int(np.prod(self.shape, dtype=np.int64))
        self.dense = tuple(sorted({int(a) for a in dense}))
        self.scalar = tuple(a for a in range(self.d) if a not in self.dense)
        self.m = int(np.prod([self.shape[a] for a in self.dense], dtype=np.int64))
        # with every attribute dense, one scalar attribute of a single level stands in
        self.sshape = tuple(self.shape[a] for a in self.scalar) or (1,)
        self.eig = EigenAlgebra(self.sshape)
        self.n_spaces = self.eig.n_spaces
        self._perm = (*self.scalar, *self.dense)
        self._inv = tuple(int(i) for i in np.argsort(self._perm))

    # -- layouts -------------------------------------------------------------

    def to_block(self, x) -> np.ndarray:
        """Histograms ``(N, k)`` or ``(N, *shape)`` in the block layout ``(N, *sshape, m)``."""
        x = np.asarray(x, dtype=float)
        n = x.shape[0]
        x = x.reshape(n, *self.shape).transpose(0, *(1 + a for a in self._perm))
        return x.reshape(n, *self.sshape, self.m)

    def block_view(self, x) -> np.ndarray:
        """Histograms ``(N, *shape)`` seen in the block layout ``(N, *sshape, m)``.

        A view, not a copy, when the scalar and the dense attributes are each
        consecutive (as in P.L. 94-171: products then take the transposed
        blocks as they lie, at no cost).
        """
        n = x.shape[0]
        v = x.reshape(n, *self.shape).transpose(0, *(1 + a for a in self._perm))
        return v.reshape(n, *self.sshape, self.m)

    def block_sum(self, roots, n, rows=None, scaled=None) -> np.ndarray:
        """The sum of detailed-layout arrays ``roots`` (broadcast to ``(n, *shape)``), blocked.

        Summed into histograms in the detailed layout, returned seen in the
        block layout (:meth:`block_view`).  With ``rows`` (increasing indices
        into ``N`` rows, one per row of the roots) the sum lands on those rows
        of zero histograms, written run by run of consecutive rows.
        ``scaled = (values, w)`` is one more root, ``values * w[:, None]``
        (detailed histograms, one row per row of the roots), multiplied
        straight into the result: the largest part never has an array of its own.
        """
        full = (n, *self.shape)
        if scaled is not None:
            vals, w = scaled
            vals = vals.reshape(vals.shape[0], *self.shape)
            w = w.reshape(-1, *(1,) * self.d)
        if scaled is None and rows is None and len(roots) == 1 and roots[0].shape == full:
            # a fresh sum of the parts: it is the histograms itself
            if roots[0].flags.c_contiguous and roots[0].flags.writeable:
                return self.block_view(roots[0])
        if rows is None:
            out = np.empty(full)
            runs = [(0, n, 0, n)]
        else:
            out = np.zeros(full)  # pages untouched until written
            cut = np.flatnonzero(np.diff(rows) != 1) + 1
            first, last = np.r_[0, cut], np.r_[cut, rows.size]
            runs = [
                (int(rows[a]), int(rows[b - 1]) + 1, int(a), int(b))
                for a, b in zip(first, last, strict=True)
                if b > a
            ]
        for lo, hi, a, b in runs:
            part = [r[a:b] if r.shape[0] > 1 else r for r in roots]
            dst = out[lo:hi]
            if scaled is not None:
                np.multiply(vals[a:b], w[a:b], out=dst)
                for r in part:
                    dst += r
            elif not part:
                dst[...] = 0.0
            elif len(part) == 1:
                np.copyto(dst, part[0])
            else:
                np.add(part[0], part[1], out=dst)
                for r in part[2:]:
                    dst += r
        return self.block_view(out)

    def from_block(self, xb) -> np.ndarray:
        """The inverse of :meth:`to_block`: histograms ``(N, *shape)``."""
        n = xb.shape[0]
        dims = [self.shape[a] for a in self._perm]
        x = np.asarray(xb).reshape(n, *dims).transpose(0, *(1 + a for a in self._inv))
        return np.ascontiguousarray(x)

    def block_marginal(self, xb, attrs, recodes) -> np.ndarray:
        """:meth:`marginal` of block-layout histograms ``xb``, without their detailed copy.

        The scalar attributes the query sums are summed in the block layout
        (contiguous, the largest reduction); what is left is small.
        """
        xb = np.asarray(xb, dtype=float)
        n = xb.shape[0]
        drop = tuple(1 + i for i, a in enumerate(self.scalar) if a not in attrs)
        arr = xb.sum(axis=drop, keepdims=True) if drop else xb
        sdims = [arr.shape[1 + i] for i in range(len(self.scalar))]
        dims = (*sdims, *(self.shape[a] for a in self.dense))
        hist = arr.reshape(n, *dims).transpose(0, *(1 + a for a in self._inv))
        return self.marginal(hist, attrs, recodes)

    # -- queries in the detailed layout ----------------------------------------------

    def _sizes(self, attrs, recodes) -> list:
        return [recodes[a].shape[0] if a in recodes else self.shape[a] for a in attrs]

    def spread(self, y, attrs, recodes, broadcast=True) -> np.ndarray:
        """``Q^T y`` for query cells ``y`` (``(N, cells)``), as histograms ``(N, *shape)``.

        With ``broadcast=False`` the summed attributes keep axes of length 1
        (a view to add into a histogram by broadcasting).
        """
        y = np.asarray(y, dtype=float)
        n = y.shape[0]
        fs = dict(zip(attrs, self._sizes(attrs, recodes), strict=True))
        arr = y.reshape(n, *[fs.get(a, 1) for a in range(self.d)])
        for a, mat in recodes.items():
            arr = np.moveaxis(np.tensordot(arr, mat.astype(float), axes=([1 + a], [0])), -1, 1 + a)
        return np.broadcast_to(arr, (n, *self.shape)) if broadcast else arr

    def marginal(self, x, attrs, recodes) -> np.ndarray:
        """``Q x`` for histograms ``x`` (``(N, *shape)``): ``(N, cells)`` in C order.

        Axes the query sums may already have length 1 (summed, kept).
        """
        arr = np.asarray(x, dtype=float)
        n = arr.shape[0]
        if arr.ndim != self.d + 1:
            arr = arr.reshape(n, *self.shape)
        drop = tuple(1 + a for a in range(self.d) if a not in attrs)
        if drop:
            arr = arr.sum(axis=drop, keepdims=True)
        for a, mat in recodes.items():
            arr = np.moveaxis(np.tensordot(arr, mat.astype(float), axes=([1 + a], [1])), -1, 1 + a)
        return arr.reshape(n, int(np.prod(arr.shape[1:], dtype=np.int64)))

    def cell_sizes(self, attrs, recodes) -> np.ndarray:
        """The number of detailed cells in each query cell (``Q Q^T`` is their diagonal)."""
        return self.marginal(np.ones((1, self.k)), attrs, recodes)[0]

    # -- the factors of a query --------------------------------------------------

    def _scalar_attrs(self, attrs) -> tuple:
        return tuple(i for i, a in enumerate(self.scalar) if a in attrs)

    def dense_rows(self, attrs, recodes) -> np.ndarray:
        """``Q_D``: the query's factor on the dense attributes, ``(G_D, m)``."""
        return query_rows(self.shape, attrs, recodes, over=self.dense)

    def query_info(self, attrs, recodes) -> tuple[np.ndarray, np.ndarray]:
        """``(c, A)`` with ``Q^T Q = sum_T P_T kron c_T A`` (``c`` per eigenspace, ``A``: m x m)."""
        for a in recodes:
            if a not in self.dense:
                raise ValueError(f"attribute {a} is recoded but not a dense factor")
        s = self._scalar_attrs(attrs)
        if not self.scalar:
            c = np.array([1.0, 0.0])
        else:
            c = self.eig.query_mask(s) * self.eig.query_factor(s)
        q = self.dense_rows(attrs, recodes)
        return c, q.T @ q

    def query_projection(self, attrs, recodes) -> np.ndarray:
        """``Pi_T`` of the projection ``Q^+ Q`` on each eigenspace, ``(2^|C|, m, m)``."""
        s = self._scalar_attrs(attrs)
        mask = np.array([True, False]) if not self.scalar else self.eig.query_mask(s)
        q = self.dense_rows(attrs, recodes)
        pi = q.T @ (q / q.sum(axis=1, keepdims=True))
        return mask[:, None, None] * pi[None, :, :]

    def scalar_blocks(self, attrs) -> list:
        """``Q_C P_T Q_C^T`` (scalar query cells x cells) per eigenspace; None off its range."""
        s = self._scalar_attrs(attrs)
        if not self.scalar:
            return [np.ones((1, 1)), None]
        inside = self.eig.query_mask(s)
        rows = self.eig.query_rows(s)
        hist = rows.reshape(-1, *self.sshape)
        return [
            self.eig.project(hist, t).reshape(rows.shape[0], -1) @ rows.T if inside[t] else None
            for t in range(self.n_spaces)
        ]

    def cell_order(self, attrs, recodes) -> np.ndarray:
        """``order[i_C * G_D + i_D]``: the query cell (C order over ``attrs``) of a pair.

        ``i_C`` runs over the scalar attributes of the query, ``i_D`` over the
        rows of :meth:`dense_rows` (every dense attribute, a summed one with one row).
        """
        sizes = dict(zip(attrs, self._sizes(attrs, recodes), strict=True))
        full = [sizes.get(a, 1) for a in range(self.d)]
        idx = np.arange(int(np.prod(full, dtype=np.int64))).reshape(full)
        return idx.transpose(*self._perm).reshape(-1)

    def zero_coords(self, attrs, recodes, mask) -> np.ndarray:
        """The dense coordinates ``Z`` (``(N, m)`` bool) of zero query cells ``mask``."""
        arr = self.spread(np.asarray(mask, dtype=float), attrs, recodes, broadcast=False)
        n = arr.shape[0]
        # the first level of each scalar attribute (a zero query sums them out, so every
        # level alike): the histogram is never spread over them
        first = (0 if a in self.scalar else slice(None) for a in range(self.d))
        dense = arr[(slice(None), *first)]
        dense = np.broadcast_to(dense, (n, *(self.shape[a] for a in self.dense)))
        return dense.reshape(n, self.m) > 0

    # -- block operators -----------------------------------------------------------

    @cached_property
    def dims(self) -> np.ndarray:
        """``dim W_T`` per eigenspace (0 for the stand-in attribute's contrasts)."""
        return self.eig.dims if self.scalar else np.array([1.0, 0.0])

    def moebius(self, mats) -> np.ndarray:
        """``b_U = sum_{T >= U} (-1)^{|T - U|} M_T``, transposed per block (a view)."""
        # combined untransposed (a plain copy), then seen transposed: products with a
        # transposed operand cost what plain ones do, a transposing copy does not
        b = np.array(mats, dtype=float, copy=True, order="C")
        for a in range(self.eig.d):
            bit = 1 << a
            for t in range(self.n_spaces):
                if not t & bit:
                    b[..., t, :, :] -= b[..., t | bit, :, :]
        return np.swapaxes(b, -1, -2)

    def apply(
        self, xb, mats, index=None, moebius=None, rows=None, add_to=None, out=None
    ) -> np.ndarray:
        """``sum_T (P_T kron M_T) x`` for block-layout ``xb``; ``mats``: ``([N,] 2^|C|, m, m)``.

        With ``index``, unit ``i`` uses ``mats[index[i]]`` (a table of distinct
        patterns, transformed once); ``moebius`` is :meth:`moebius` of ``mats``
        when already computed.  With ``rows`` (one per output unit) the
        operator of unit ``i`` acts on ``xb[rows[i]]`` (children's gains on
        their parents' histograms), gathered chunk by chunk, never whole.
        With ``add_to`` (an array of the result's shape) the result is added
        into it, in place, and it is returned; with ``out`` it is written
        there (``out`` may be ``xb`` itself: the operator applied in place).

        The units are taken in chunks of about :data:`CHUNK_CELLS` cells: the
        result is the only array of the full size, every temporary is a
        chunk's, so that the allocator reuses their pages (on a machine where
        touching fresh memory is dear, as in a VM, that is most of the cost).
        """
        xb = np.asarray(xb, dtype=float)
        # one operator per unit: transformed a chunk at a time, as the histograms are
        per_unit = moebius is None and np.ndim(mats) == 4 and index is None
        b = mats if per_unit else self.moebius(mats) if moebius is None else moebius
        n = xb.shape[0] if rows is None else len(rows)
        if add_to is not None:
            out, mode = add_to, "add"
        elif out is not None:
            mode = "copy" if np.may_share_memory(out, xb) else "write"
            if (mode == "write" and not out.flags.c_contiguous) or (
                mode == "copy" and rows is not None
            ):
                # the largest product lands in a view of `out`; in place, a chunk must never
                # overwrite parents' rows still to gather
                raise ValueError(
                    "`out` must be C-contiguous (or `xb` itself), and `xb` only without `rows`"
                )
        else:
            out, mode = np.empty((n, *xb.shape[1:])), "write"
        for sl in row_chunks(xb.shape[1:], n):
            lo, hi = sl.start, sl.stop
            x = xb[lo:hi] if rows is None else xb[rows[lo:hi]]
            if b.ndim == 3:
                ops = b
            elif per_unit:
                ops = self.moebius(b[lo:hi])
            elif index is None:
                ops = b[lo:hi]
            else:
                ops = b[index[lo:hi]]
            self._apply_chunk(x, ops, out[lo:hi], mode)
        return out

    def _apply_chunk(self, x, b, out, mode) -> None:
        """:meth:`apply` of one chunk ``x`` into ``out``: operators ``b`` moebius-transformed.

        ``mode``: "write" (the largest product lands in ``out``), "add" (the
        result is added to ``out``) or "copy" (``out`` is ``x``: every term is
        computed before ``out`` is written).
        """
        means = self.eig.means(x)
        full = self.n_spaces - 1 if mode == "write" else -1
        terms = []
        for u, mean in means.items():
            n = mean.shape[0]
            inner = int(np.prod(mean.shape[1:-1], dtype=np.int64))
            # one operator for every unit: a single product; else one per unit
            lead, op = ((n * inner,), b[u]) if b.ndim == 3 else ((n, inner), b[:, u])
            dst = out.reshape(*lead, self.m) if u == full else None
            flat = np.matmul(mean.reshape(*lead, self.m), op, out=dst)
            if u != full:
                terms.append(flat.reshape(mean.shape))  # fresh arrays: summed into in place
        roots = sum_broadcast(terms)
        if mode == "copy":
            np.copyto(out, roots.pop(0))
        for r in roots:
            out += r
