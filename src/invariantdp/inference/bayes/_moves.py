"""The Markov basis of the lattice sampler and a starting point on the integer fibre.

:class:`LatticeMoves` and :func:`fibre_point` of :mod:`._latent_samplers` (which
documents the construction and re-exports both).
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, sparse

from ..._linalg import MAX_CIRCUIT_COLUMNS, all_circuits, cell_classes
from ..._validation import InvariantDPError
from ...invariants import Invariants


class LatticeMoves:
    r"""A Markov basis of ``ker C ∩ Z^n`` with a symmetric random proposal.

    Parameters
    ----------
    invariants : Invariants or array_like, shape (k, n)
        The invariants (or the matrix ``C``).  Only the matrix is used.
    fixed_total : bool, optional
        Add the grand total to the invariants (a multinomial count model).

    Attributes
    ----------
    n : int
        Number of cells.
    classes : numpy.ndarray of int
        Class of every cell (cells with identical columns of ``C``).
    circuits : numpy.ndarray of int, shape (m, n_classes)
        Circuits of the class-level matrix, one per ± pair.

    Notes
    -----
    See the module docstring for the construction.  :meth:`propose` draws a
    move type with probability proportional to the number of moves of that
    type (swaps within classes, lifted circuits, two-way margin moves), a
    uniform move of the type, a uniform sign, and a uniform step length in
    ``{1, .., max_step}``; the proposal of ``s -> s + t m`` has the same
    probability as ``s + t m -> s``, so the Metropolis-Hastings ratio is the
    ratio of target densities.

    References
    ----------
    Diaconis & Sturmfels (1998), "Algebraic algorithms for sampling from
    conditional distributions", Ann. Statist. 26 (Markov bases); Ju, Awan,
    Gong & Rao (2022), "Data augmentation MCMC for Bayesian inference from
    privatized data", NeurIPS 35.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.invariants import totals
    >>> from invariantdp.inference.bayes._latent_samplers import LatticeMoves
    >>> mv = LatticeMoves(totals([0, 0, 0, 1, 1]))
    >>> idx, delta = mv.propose(np.random.default_rng(0), max_step=1)
    >>> int(delta.sum())
    0
    """

    def __init__(self, invariants, *, fixed_total: bool = False):
        if isinstance(invariants, Invariants):
            inv = invariants
            C = inv.matrix
            self.shape = inv.shape
            kind = inv.kind
        else:
            C = np.asarray(invariants, dtype=float)
            if C.ndim != 2:
                raise InvariantDPError(f"`invariants` must be 2-D, got {C.ndim} dimension(s).")
            self.shape = (C.shape[1],)
            kind = "general"
        n = C.shape[1]
        self.n = n
        self._margin_shape = None
        if kind == "one_way_margins" and len(self.shape) == 2:
            # Diaconis-Sturmfels basic moves (the total is implied by the margins)
            self._margin_shape = self.shape
            self.classes = np.arange(n)
            self.circuits = np.zeros((0, n), dtype=np.int64)
            r, c = self.shape
            self._weights = np.array([0.0, 0.0, r * (r - 1) * c * (c - 1) / 4.0])
            self._circ_support = []
            return
        if kind in ("totals", "nested_totals") and not fixed_total:
            codes, g = inv.group_codes()
            self.classes = np.asarray(codes, dtype=np.intp)
            A = np.eye(g)
        else:
            D = inv.dense_matrix() if isinstance(invariants, Invariants) else C
            if fixed_total:
                D = np.vstack([D, np.ones((1, n))])
            cls = cell_classes(D)
            self.classes = cls.codes
            A = cls.matrix
        m = A.shape[1]
        if m > MAX_CIRCUIT_COLUMNS and np.linalg.matrix_rank(A) < m:
            raise InvariantDPError(
                f"the invariants have {m} distinct cell classes with a non-trivial kernel "
                f"between them; the lattice sampler supports at most {MAX_CIRCUIT_COLUMNS} "
                "(or totals, nested totals, two-way margins). Use the continuous relaxation."
            )
        self.circuits = all_circuits(A) if m <= MAX_CIRCUIT_COLUMNS else np.zeros((0, m), int)
        counts = np.bincount(self.classes, minlength=m)
        self._members = [np.flatnonzero(self.classes == j) for j in range(m)]
        self._counts = counts
        self._member_table = np.zeros((m, max(1, counts.max())), dtype=np.intp)
        for j, mem in enumerate(self._members):
            self._member_table[j, : mem.size] = mem
        # swaps: pick a class with probability prop. to its number of pairs
        pairs = counts * (counts - 1) / 2.0
        self._swap_p = pairs / pairs.sum() if pairs.sum() > 0 else None
        lifts = np.array(
            [np.prod(counts[np.flatnonzero(u)]) for u in self.circuits], dtype=float
        ).reshape(-1)
        self._lift_p = lifts / lifts.sum() if lifts.size else None
        self._weights = np.array([pairs.sum(), lifts.sum(), 0.0])
        self._circ_support = [np.flatnonzero(u) for u in self.circuits]
        if self._weights.sum() == 0:
            raise InvariantDPError(
                "the invariants fix every cell: the fibre has a single point and nothing is latent."
            )

    @property
    def n_moves(self) -> float:
        """Number of distinct moves (up to sign)."""
        return float(self._weights.sum())

    def propose(self, rng, *, max_step: int = 1):
        """``(cells, delta)``: one random move ``t * m`` as changed cells and their changes."""
        cells, deltas, sizes = self.propose_batch(rng, 1, max_step=max_step)
        return cells[0, : sizes[0]], deltas[0, : sizes[0]]

    def propose_batch(self, rng, size: int, *, max_step: int = 1):
        """``size`` independent proposals as padded arrays ``(cells, deltas, sizes)``.

        Row ``k`` changes ``cells[k, :sizes[k]]`` by ``deltas[k, :sizes[k]]``
        (distinct cells); the padding is unused.
        """
        w = self._weights
        kinds = rng.choice(3, size=size, p=w / w.sum())
        t = rng.integers(1, max_step + 1, size=size) * np.where(rng.random(size) < 0.5, 1, -1)
        width = 4 if self._margin_shape is not None else 2
        if len(self.circuits):
            width = max(width, max(u.size for u in self._circ_support))
        cells = np.zeros((size, width), dtype=np.intp)
        deltas = np.zeros((size, width), dtype=np.int64)
        sizes = np.zeros(size, dtype=np.intp)
        sel = np.flatnonzero(kinds == 0)
        if sel.size:
            j = rng.choice(len(self._members), size=sel.size, p=self._swap_p)
            k = self._counts[j]
            a = (rng.random(sel.size) * k).astype(np.intp)
            b = (rng.random(sel.size) * (k - 1)).astype(np.intp)
            b += b >= a
            cells[sel, 0] = self._member_table[j, a]
            cells[sel, 1] = self._member_table[j, b]
            deltas[sel, 0] = t[sel]
            deltas[sel, 1] = -t[sel]
            sizes[sel] = 2
        sel = np.flatnonzero(kinds == 1)
        if sel.size:
            which = rng.choice(len(self.circuits), size=sel.size, p=self._lift_p)
            for c in np.unique(which):
                rows = sel[which == c]
                nz = self._circ_support[c]
                pick = (rng.random((rows.size, nz.size)) * self._counts[nz]).astype(np.intp)
                cells[rows, : nz.size] = self._member_table[nz[None, :], pick]
                deltas[rows, : nz.size] = t[rows, None] * self.circuits[c, nz][None, :]
                sizes[rows] = nz.size
        sel = np.flatnonzero(kinds == 2)
        if sel.size:
            r, c = self._margin_shape
            i = (rng.random(sel.size) * r).astype(np.intp)
            k = (rng.random(sel.size) * (r - 1)).astype(np.intp)
            k += k >= i
            j = (rng.random(sel.size) * c).astype(np.intp)
            l = (rng.random(sel.size) * (c - 1)).astype(np.intp)
            l += l >= j
            cells[sel] = np.column_stack([i * c + j, i * c + l, k * c + j, k * c + l])
            ts = t[sel]
            deltas[sel] = np.column_stack([ts, -ts, -ts, ts])
            sizes[sel] = 4
        return cells, deltas, sizes


def fibre_point(target, invariants, values=None, *, lower=0, upper=None, fixed_total=None):
    r"""An integer point of the fibre ``{s : C s = c, lower <= s <= upper}`` nearest ``target``.

    Minimises ``||s - target||_1`` by mixed-integer linear programming
    (``scipy.optimize.milp``).  Used to start the lattice sampler.  When
    several points are nearest, which one is returned depends on the solver.

    Parameters
    ----------
    target : array_like, shape (n,)
        E.g. the released noisy counts.
    invariants : Invariants
        With values (or give ``values``).
    values : array_like, optional
        Overrides ``invariants.values``.
    lower, upper : float or array_like, optional
        Bounds on every cell (default ``0`` and none).
    fixed_total : float, optional
        Also require ``sum(s) == fixed_total``.

    Returns
    -------
    numpy.ndarray of int64

    References
    ----------
    Ju, Awan, Gong & Rao (2022), "Data augmentation MCMC for Bayesian
    inference from privatized data", NeurIPS 35 (the sampler of the latent
    counts that this point starts).

    Examples
    --------
    >>> from invariantdp.invariants import totals
    >>> from invariantdp.inference.bayes._latent_samplers import fibre_point
    >>> inv = totals([0, 0, 1, 1]).of([3, 4, 5, 6])
    >>> fibre_point([2.6, 3.1, -1.0, 9.6], inv).tolist()
    [3, 4, 0, 11]
    """
    y = np.asarray(target, dtype=float).reshape(-1)
    n = y.size
    if isinstance(invariants, Invariants):
        C = invariants.dense_matrix()
        c = invariants.values if values is None else values
    else:
        C = np.zeros((0, n)) if invariants is None else Invariants(invariants).dense_matrix()
        c = np.zeros(0) if values is None else values
    if c is None:
        raise InvariantDPError("`invariants` must carry values to define the fibre.")
    c = np.asarray(c, dtype=float).reshape(-1)
    if fixed_total is not None:
        C = np.vstack([C, np.ones((1, n))])
        c = np.append(c, float(fixed_total))
    lo = np.broadcast_to(np.asarray(-np.inf if lower is None else lower, float), (n,))
    hi = np.broadcast_to(np.asarray(np.inf if upper is None else upper, float), (n,))
    # variables (s, d) with d >= |s - y|; minimise sum d
    obj = np.concatenate([np.zeros(n), np.ones(n)])
    eye = sparse.eye(n, format="csr")
    cons = [
        optimize.LinearConstraint(sparse.hstack([eye, -eye]), -np.inf, y),
        optimize.LinearConstraint(sparse.hstack([-eye, -eye]), -np.inf, -y),
    ]
    if C.shape[0]:
        cons.append(optimize.LinearConstraint(np.hstack([C, np.zeros_like(C)]), c, c))
    bounds = optimize.Bounds(
        np.concatenate([lo, np.zeros(n)]), np.concatenate([hi, np.full(n, np.inf)])
    )
    integrality = np.concatenate([np.ones(n), np.zeros(n)])
    res = optimize.milp(obj, constraints=cons, bounds=bounds, integrality=integrality)
    if res.x is None and res.status != 2:  # a solver error, not infeasibility: retry
        res = optimize.milp(
            obj,
            constraints=cons,
            bounds=bounds,
            integrality=integrality,
            options={"presolve": False},
        )
    if res.x is None:
        raise InvariantDPError(
            "the invariants have no integer solution within the bounds: "
            f"the fibre is empty ({res.message})."
        )
    return np.round(res.x[:n]).astype(np.int64)
