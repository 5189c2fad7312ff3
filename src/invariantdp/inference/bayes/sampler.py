r"""Samplers for latent confidential counts under invariants.

Two ways to integrate over the confidential counts ``s`` behind a release:

**Exact (data augmentation on the integer fibre).**  The counts are a latent
integer vector constrained to the fibre ``F = {s in Z^n_{>=0} : C s = c}`` of
the invariants.  :class:`LatticeMetropolis` is a PyMC step method that moves
``s`` along a *Markov basis* of ``ker C ∩ Z^n`` -- ``s' = s + t m`` for a
basis move ``m``, a random sign and a step ``t in {1, .., max_step}`` --
and accepts with the Metropolis-Hastings ratio of the full model density.
The proposal is symmetric and never leaves the fibre, so the chain targets
the exact posterior of ``(theta, s)``; PyMC's NUTS updates the continuous
parameters ``theta`` given ``s`` in the same compound step (the data
augmentation of Ju, Awan, Gong & Rao 2022).  :class:`LatticeMoves` builds the
basis:

* cells whose columns of ``C`` are identical (the cells of one group of
  ``totals`` / ``nested_totals``) are exchangeable: the swap ``e_i - e_j``;
* between those classes, the circuits of the class-level matrix, lifted to a
  random cell of each class -- for the 2 x 23 table of Gong & Meng (Section 3)
  with total, female total and voting-age total this is the 2 x 2 move
  ``e_a - e_b - e_c + e_d`` across (sex, voting age) classes;
* for the one-way margins of a two-way table, the basic moves
  ``e_ij - e_il - e_kj + e_kl`` (Diaconis & Sturmfels 1998).

For matrices whose circuits are 0/±1 (totally unimodular ``C``: totals,
nested totals, two-way margins, and every set of "group total" invariants
where each cell is in at most one group of each of two families) these moves
connect the non-negative fibre, so the chain is irreducible.

**Continuous relaxation.**  :func:`affine_counts` parameterises the counts on
the invariant affine space, ``s = s_0 + Q_N z`` with ``z in R^{n - rank C}``
free, so NUTS samples ``z`` and the invariants hold exactly.  The count
model's log mass is evaluated at real ``s`` through ``lgamma`` and the
mechanism likelihood at real ``s``.  This is adequate when

1. every latent count stays well away from zero under the posterior -- at
   least three posterior standard deviations (the relaxed density has a hard
   wall at ``s_i = 0``, which NUTS reports as divergences), and
2. each count's posterior standard deviation is at least about one half:
   then sums over the integer lattice equal integrals up to a relative error
   of order ``exp(-2 pi^2 sd^2)`` (Poisson summation; about ``7e-3`` at
   ``sd = 1/2`` and ``3e-9`` at ``sd = 1``), and
3. the mechanism density is smooth in ``s`` (Gaussian, projected Gaussian,
   Laplace, discrete Laplace interpolated); the Tulap density is piecewise
   constant in ``s``, so use the exact sampler or the marginal binomial model.

Large counts with noise scale of order one or more (county populations,
released with the projected Gaussian or Laplace mechanisms) satisfy all three;
the small cells of the 2 x 23 table do not satisfy (1).

References
----------
Ju, N., Awan, J., Gong, R. and Rao, V. (2022). "Data augmentation MCMC for
Bayesian inference from privatized data", NeurIPS 35.
Diaconis, P. and Sturmfels, B. (1998). "Algebraic algorithms for sampling
from conditional distributions", Ann. Statist. 26.
Gong, R. and Meng, X.-L. (2020). "Congenial differential privacy under
mandated disclosure", Sections 2.3 and 3.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytensor.tensor as pt
from pymc.blocking import RaveledVars
from pymc.step_methods.arraystep import ArrayStepShared
from pymc.step_methods.compound import Competence
from scipy import optimize, sparse

from ..._fibres import MAX_CIRCUIT_COLUMNS, all_circuits, cell_classes
from ..._rng import as_generator
from ..._validation import InvariantDPError, check_positive_int
from ...invariants import Invariants

__all__ = [
    "DirichletGibbs",
    "LatticeMetropolis",
    "LatticeMoves",
    "affine_counts",
    "fibre_point",
]

def _dense(C) -> np.ndarray:
    return C.toarray() if sparse.issparse(C) else np.asarray(C, dtype=float)


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

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.invariants import totals
    >>> from invariantdp.inference.bayes.sampler import LatticeMoves
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
            codes, g = inv._groups()
            self.classes = np.asarray(codes, dtype=np.intp)
            A = np.eye(g)
        else:
            D = _dense(C)
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

    Examples
    --------
    >>> from invariantdp.invariants import totals
    >>> from invariantdp.inference.bayes.sampler import fibre_point
    >>> inv = totals([0, 0, 1, 1]).of([3, 4, 5, 6])
    >>> fibre_point([2.6, 3.1, -1.0, 9.6], inv).tolist()
    [3, 4, 0, 11]
    """
    y = np.asarray(target, dtype=float).reshape(-1)
    n = y.size
    if isinstance(invariants, Invariants):
        C = _dense(invariants.matrix)
        c = invariants.values if values is None else values
    else:
        C = np.zeros((0, n)) if invariants is None else _dense(invariants)
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


# ---------------------------------------------------------------------------
# the PyMC step method
# ---------------------------------------------------------------------------


def _delta_logp_function(point, model, vars, shared):
    """Compiled ``f(q1, q0) = logp(q1) - logp(q0)`` of the model in the raveled ``vars``."""
    from pymc.step_methods import metropolis

    params = inspect.signature(metropolis.delta_logp).parameters
    if "compile_kwargs" in params:
        return metropolis.delta_logp(point, model.logp(), vars, shared, None)
    return metropolis.delta_logp(point, model.logp(), vars, shared)  # pragma: no cover


class LatticeMetropolis(ArrayStepShared):
    r"""Metropolis-Hastings on the integer fibre of the invariants (a PyMC step method).

    Each step makes ``n_proposals`` proposals ``s -> s + t m`` from
    :class:`LatticeMoves` and accepts each with probability
    ``min(1, p(s', theta | y) / p(s, theta | y))``, the model density with the
    other variables held at their current values.  Combine it with NUTS for
    the continuous parameters: ``pm.sample(step=[LatticeMetropolis(...)])``
    assigns NUTS to the remaining variables.

    Parameters
    ----------
    vars : list
        One integer-valued model variable (the latent counts), whose current
        value must lie on the fibre.
    moves : LatticeMoves
        The Markov basis.
    unary : callable, optional
        ``unary(S)`` maps a symbolic integer matrix ``S`` (rows: count vectors)
        to the matrix of per-cell log weights ``u_i(S_ki)`` such that, on the
        fibre, the model log density in the counts is ``sum_i u_i(s_i)`` plus
        terms free of ``s`` (true for every builder of :mod:`.models`: the
        count model and the mechanism likelihood are separable given the
        parameters).  With it the step tabulates ``u_i`` once per iteration in
        one compiled call and runs the proposals in numpy, which is much faster.
        Without it every proposal evaluates the full model density; use that
        (``unary=None``) after adding terms that couple the counts.
    lower, upper : array_like, optional
        Bounds of the counts' support used with ``unary`` (default 0 and none).
    n_proposals : int, optional
        Proposals per step (default: the number of cells, times 10 with
        ``unary``).
    max_step : int, optional
        Initial maximum step length ``T``.  During tuning it is adapted
        (doubled when more than half of the proposals are accepted, halved
        below a fifth); after tuning it is fixed, so the kernel is a fixed
        symmetric-proposal Metropolis kernel.
    tune : bool, optional
        Adapt ``max_step`` while PyMC tunes.
    model : pymc.Model, optional
    rng : optional
        Passed to PyMC (``pm.sample(random_seed=...)`` reseeds it).

    References
    ----------
    Ju, Awan, Gong & Rao (2022), Algorithm 1 (data augmentation for
    privatized data); Diaconis & Sturmfels (1998), Markov bases.

    Examples
    --------
    >>> import pymc as pm  # doctest: +SKIP
    >>> step = LatticeMetropolis([model["counts"]], moves=LatticeMoves(inv))  # doctest: +SKIP
    >>> idata = pm.sample(step=[step], model=model)  # doctest: +SKIP
    """

    name = "lattice_metropolis"
    default_blocked = True
    stats_dtypes_shapes = {
        "lattice_accept": (np.float64, []),
        "lattice_max_step": (np.int64, []),
    }

    def __init__(
        self,
        vars,
        *,
        moves: LatticeMoves,
        unary=None,
        lower=0,
        upper=None,
        n_proposals: int | None = None,
        max_step: int = 1,
        tune: bool = True,
        model=None,
        rng=None,
        initial_point=None,
        **kwargs,
    ):
        import pymc as pm
        from pymc.util import get_value_vars_from_user_vars

        model = pm.modelcontext(model)
        if initial_point is None:
            initial_point = model.initial_point()
        vars = get_value_vars_from_user_vars(vars, model)
        if len(vars) != 1:
            raise InvariantDPError(f"`vars` must hold one variable, got {len(vars)}.")
        if not isinstance(moves, LatticeMoves):
            raise TypeError(f"`moves` must be a LatticeMoves, got {type(moves).__name__}.")
        size = int(np.prod(initial_point[vars[0].name].shape))
        if size != moves.n:
            raise InvariantDPError(
                f"`moves` act on {moves.n} cells but the variable has {size} entries."
            )
        self.moves = moves
        default = moves.n * (10 if unary is not None else 1)
        self.n_proposals = (
            default if n_proposals is None else check_positive_int("n_proposals", n_proposals)
        )
        self.max_step = check_positive_int("max_step", max_step)
        self.tune = bool(tune)
        shared = pm.make_shared_replacements(initial_point, vars, model)
        self.lower = np.broadcast_to(np.asarray(lower, dtype=float), (moves.n,)).copy()
        up = np.inf if upper is None else upper
        self.upper = np.broadcast_to(np.asarray(up, dtype=float), (moves.n,)).copy()
        if unary is None:
            self.delta_logp = _delta_logp_function(initial_point, model, vars, shared)
            self.unary = None
        else:
            self.delta_logp = None
            self.unary = _compile_unary(unary, model, shared)
        init_params = inspect.signature(ArrayStepShared.__init__).parameters
        if "rng" in init_params:
            super().__init__(vars, shared, rng=rng)
        else:  # pragma: no cover - PyMC < 5.16
            super().__init__(vars, shared)
            self.rng = as_generator(rng)

    def _table(self, q, width):
        """Per-cell log weights for the values ``q + (-width..width)``; -inf off the support."""
        offsets = np.arange(-width, width + 1)
        S = q[None, :] + offsets[:, None]
        bad = (S < self.lower) | (S > self.upper)
        S_in = np.clip(S, self.lower, np.minimum(self.upper, 2.0**62)).astype(np.int64)
        U = np.asarray(self.unary(S_in))
        U = np.where(bad | ~np.isfinite(U), -np.inf, U)
        return U

    def _unary_sweep(self, q, cells_all, deltas_all, sizes, logu):
        """The proposals of one step on tabulated per-cell weights (plain Python scalars)."""
        width = 3 * self.max_step
        span = 2 * width
        base = q.copy()
        table = self._table(base, width).T.tolist()  # table[cell][offset]
        qs = q.tolist()
        bs = base.tolist()
        accepted = 0
        for cells, deltas, m, lu in zip(
            cells_all.tolist(), deltas_all.tolist(), sizes.tolist(), logu.tolist(), strict=True
        ):
            lr = 0.0
            rebuilt = False
            for i in range(m):
                c = cells[i]
                j_old = qs[c] - bs[c] + width
                j_new = j_old + deltas[i]
                if j_new < 0 or j_new > span:
                    rebuilt = True
                    break
                lr += table[c][j_new] - table[c][j_old]
            if rebuilt:
                base = np.asarray(qs, dtype=np.int64)
                table = self._table(base, width).T.tolist()
                bs = list(qs)
                lr = 0.0
                for i in range(m):
                    c = cells[i]
                    lr += table[c][width + deltas[i]] - table[c][width]
            if lr > lu:  # -inf (off the support) is never accepted; nan neither
                for i in range(m):
                    qs[cells[i]] += deltas[i]
                accepted += 1
        return np.asarray(qs, dtype=np.int64), accepted

    def astep(self, q0: RaveledVars):
        q = np.array(q0.data, dtype=np.int64, copy=True)
        rng = self.rng
        cells_all, deltas_all, sizes = self.moves.propose_batch(
            rng, self.n_proposals, max_step=self.max_step
        )
        logu = np.log(rng.random(self.n_proposals))
        accepted = 0
        if self.unary is not None:
            q, accepted = self._unary_sweep(q, cells_all, deltas_all, sizes, logu)
        else:
            for k in range(self.n_proposals):
                m = sizes[k]
                cells = cells_all[k, :m]
                cand = q.copy()
                cand[cells] += deltas_all[k, :m]
                if np.any(cand[cells] < 0):  # counts are non-negative in every count model
                    continue
                lr = self.delta_logp(cand, q)
                if np.isfinite(lr) and lr > logu[k]:
                    q = cand
                    accepted += 1
        rate = accepted / self.n_proposals
        if self.tune:
            if rate > 0.5:
                self.max_step = min(self.max_step * 2, 1 << 20)
            elif rate < 0.2 and self.max_step > 1:
                self.max_step = max(1, self.max_step // 2)
        stats = {"lattice_accept": rate, "lattice_max_step": self.max_step}
        return RaveledVars(q, q0.point_map_info), [stats]

    def stop_tuning(self):
        self.tune = False

    @staticmethod
    def competence(var, has_grad):
        return Competence.INCOMPATIBLE


class DirichletGibbs(ArrayStepShared):
    r"""Conjugate Gibbs update ``p | s ~ Dirichlet(alpha + s)`` (a PyMC step method).

    For ``p ~ Dirichlet(alpha)`` and ``s | p ~ Multinomial(N, p)`` the full
    conditional of ``p`` does not involve the release or the invariants
    (both are functions of ``s`` alone), so this exact draw replaces NUTS for
    the cell probabilities in :func:`~.models.fit`.

    Parameters
    ----------
    vars : list
        The Dirichlet variable (one).
    counts : str
        Name of the multinomial counts variable.
    alpha : array_like
        The prior concentration.
    model : pymc.Model, optional
    """

    name = "dirichlet_gibbs"
    default_blocked = True
    stats_dtypes_shapes = {}

    def __init__(self, vars, *, counts, alpha, model=None, rng=None, initial_point=None, **kw):
        import pymc as pm
        import pytensor
        from pymc.util import get_value_vars_from_user_vars

        model = pm.modelcontext(model)
        if initial_point is None:
            initial_point = model.initial_point()
        vars = get_value_vars_from_user_vars(vars, model)
        value = vars[0]
        rv = model.values_to_rvs[value]
        self.alpha = np.asarray(alpha, dtype=float)
        self.counts_name = counts
        transform = model.rvs_to_transforms.get(rv)
        p = pt.vector("p")
        fwd = p if transform is None else transform.forward(p, *rv.owner.inputs)
        (fwd,) = model.replace_rvs_by_values([fwd])
        self._forward = pytensor.function([p], fwd, on_unused_input="ignore")
        shared = pm.make_shared_replacements(initial_point, vars, model)
        init_params = inspect.signature(ArrayStepShared.__init__).parameters
        if "rng" in init_params:
            super().__init__(vars, shared, rng=rng)
        else:  # pragma: no cover - PyMC < 5.16
            super().__init__(vars, shared)
            self.rng = as_generator(rng)

    def astep(self, q0: RaveledVars):
        s = np.asarray(self.shared[self.counts_name].get_value(), dtype=float).reshape(-1)
        g = self.rng.standard_gamma(self.alpha + s)
        p = g / g.sum()
        p = np.maximum(p, np.finfo(float).tiny)
        p = p / p.sum()
        out = np.asarray(self._forward(p), dtype=q0.data.dtype).reshape(-1)
        return RaveledVars(out, q0.point_map_info), [{}]

    @staticmethod
    def competence(var, has_grad):
        return Competence.INCOMPATIBLE


def _compile_unary(unary, model, shared):
    """Compile ``S -> unary(S)`` with the other model variables as shared inputs."""
    import pytensor

    S = pt.matrix("lattice_S", dtype="int64")
    expr = unary(S)
    (expr,) = model.replace_rvs_by_values([expr])
    expr = pytensor.clone_replace(expr, replace=shared)
    fn = pytensor.function([S], expr, on_unused_input="ignore")
    fn.trust_input = True
    return fn


# ---------------------------------------------------------------------------
# continuous relaxation
# ---------------------------------------------------------------------------


def affine_counts(invariants, base_point, z):
    r"""Counts on the invariant affine space: ``s = s_0 + Q_N z`` (a PyTensor expression).

    Parameters
    ----------
    invariants : Invariants
        ``C`` (the null-space basis ``Q_N`` comes from
        :meth:`Invariants.null_space_basis`).
    base_point : array_like, shape (n,)
        A point with ``C s_0 = c`` (e.g. from :func:`fibre_point`).
    z : tensor, shape (n - rank C,)
        Free coordinates (sampled by NUTS).

    Returns
    -------
    TensorVariable, shape (n,)

    Notes
    -----
    ``Q_N`` is orthonormal, so the map ``z -> s`` has a constant Jacobian and
    a density in ``s`` on the affine space is the same density in ``z``.
    See the module docstring for when the relaxation is adequate.

    Examples
    --------
    >>> import numpy as np, pytensor.tensor as pt
    >>> from invariantdp.invariants import totals
    >>> from invariantdp.inference.bayes.sampler import affine_counts
    >>> s = affine_counts(totals([0, 0, 0]), np.array([1.0, 2.0, 3.0]), pt.as_tensor([0.5, -0.2]))
    >>> round(float(s.sum().eval()), 12)
    6.0
    """
    QN = np.asarray(invariants.null_space_basis(), dtype=float)
    s0 = np.asarray(base_point, dtype=float).reshape(-1)
    if s0.size != QN.shape[0]:
        raise InvariantDPError(f"`base_point` must have {QN.shape[0]} cells, got {s0.size}.")
    return pt.as_tensor(s0) + pt.dot(QN, z)
