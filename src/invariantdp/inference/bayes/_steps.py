"""The PyMC step methods of the samplers: :class:`LatticeMetropolis`, :class:`DirichletGibbs`.

Documented in :mod:`._latent_samplers`, which re-exports both.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytensor.tensor as pt
from pymc.blocking import RaveledVars
from pymc.step_methods.arraystep import ArrayStepShared
from pymc.step_methods.compound import Competence

from ..._rng import as_generator
from ..._validation import InvariantDPError, check_positive_int
from ._moves import LatticeMoves


def _init_shared_step(step, vars, shared, rng) -> None:
    """``ArrayStepShared.__init__`` with ``rng`` (PyMC >= 5.16 takes it, older ones do not)."""
    if "rng" in inspect.signature(ArrayStepShared.__init__).parameters:
        ArrayStepShared.__init__(step, vars, shared, rng=rng)
    else:  # pragma: no cover - PyMC < 5.16
        ArrayStepShared.__init__(step, vars, shared)
        step.rng = as_generator(rng)


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
        terms free of ``s`` (true for every builder of :mod:`._model_builders`: the
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
        _init_shared_step(self, vars, shared, rng)

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
    the cell probabilities in :func:`~._fit.fit`.

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
        _init_shared_step(self, vars, shared, rng)

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
