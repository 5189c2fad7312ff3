r"""Model builders for releases with invariants, and :func:`fit`.

Each builder returns a :class:`pymc.Model` in which the confidential counts
are latent and the release is the observed node, with the mechanism's exact
likelihood (:mod:`.distributions`) and the invariants imposed on the latent
counts.  The model can be modified before fitting (add hierarchy, change
priors, add deterministics).  :func:`fit` samples it:

* ``latent="exact"`` (default): integer counts on the fibre of the
  invariants, updated by :class:`~.sampler.LatticeMetropolis`, the continuous
  parameters by NUTS (data augmentation, Ju, Awan, Gong & Rao 2022);
* ``latent="relaxed"``: counts parameterised on the invariant affine space and
  sampled by NUTS with the rest (adequate for large counts; see
  :mod:`.sampler` for the conditions);
* ``latent="marginal"`` (:func:`binomial_model` only): the count summed out
  exactly.

Treating the noisy release as if it were the confidential data (the *naive*
analysis) ignores the mechanism; conditioning on the invariants and the known
noise law is the coherent alternative that statistical intelligibility makes
possible (Gong & Meng, Sections 1.4 and 2.2; Gao, Gong & Yu, Section 4).

Model attributes used by :func:`fit` are stored in ``model.invariantdp``
(a dict with the release, the latent variable's name and its lattice moves).
"""

from __future__ import annotations

import warnings

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import xarray as xr
from scipy import linalg

from ..._rng import as_generator
from ..._validation import (
    InvariantDPError,
    check_finite_array,
    check_positive,
    check_positive_int,
)
from ...invariants import Invariants
from ...release import Release
from .distributions import Laplace, _row_basis, mechanism_likelihood, release_noise
from .sampler import (
    DirichletGibbs,
    LatticeMetropolis,
    LatticeMoves,
    affine_counts,
    fibre_point,
)

__all__ = [
    "binomial_model",
    "contingency_table_model",
    "fit",
    "poisson_regression_model",
]

_LATENT = ("exact", "relaxed")


def _check_release(release) -> Release:
    if not isinstance(release, Release):
        raise TypeError(f"`release` must be a Release, got {type(release).__name__}.")
    return release


def _check_latent(latent, allowed=_LATENT) -> str:
    if latent not in allowed:
        raise InvariantDPError(
            f"`latent` ({latent!r}) must be one of {', '.join(map(repr, allowed))}."
        )
    return latent


def _noise_bounds(spec, y):
    """Bounds on the latent counts implied by a noise law with bounded support."""
    if spec["kind"] == "tulap" and spec["q"] > 0:
        from ...distributions.tulap import _bounds

        lo, hi = (float(v) * spec["scale"] for v in _bounds(spec["b"], spec["q"]))
        return y - hi, y - lo
    return None, None


def _implied_total(inv: Invariants | None):
    """The grand total if the all-ones vector is in the row space of ``C`` (else None)."""
    if inv is None or inv.values is None:
        return None
    C = inv.matrix.toarray() if hasattr(inv.matrix, "toarray") else np.asarray(inv.matrix)
    lam, *_ = linalg.lstsq(C.T, np.ones(C.shape[1]))
    if np.max(np.abs(C.T @ lam - 1.0)) > 1e-8:
        return None
    return float(lam @ inv.values)


def _invariants_potential(name, counts, inv: Invariants):
    """0 on the fibre ``C s = c``, -inf off it (guards user-modified models)."""
    C = inv.matrix.toarray() if hasattr(inv.matrix, "toarray") else np.asarray(inv.matrix)
    resid = pt.dot(pt.as_tensor(C), counts) - inv.values
    ok = pt.all(pt.abs(resid) <= 1e-6 * np.maximum(1.0, np.abs(inv.values)))
    return pm.Potential(name, pt.switch(ok, 0.0, -np.inf))


def _augmented(inv: Invariants | None, n: int, total: float | None) -> Invariants | None:
    """``inv`` with the grand total appended when it is not implied already."""
    if total is None:
        return inv
    if inv is None:
        return Invariants(np.ones((1, n)), [total], None)
    if _implied_total(inv) is not None:
        return inv
    C = inv.matrix.toarray() if hasattr(inv.matrix, "toarray") else np.asarray(inv.matrix)
    return Invariants(np.vstack([C, np.ones((1, n))]), np.append(inv.values, total), inv.shape)


def _observe(release, counts, spec, n, dims):
    """The observed release node, and ``noise_unary(S)``: its per-cell log weights.

    On the fibre every mechanism's log likelihood is a sum over cells of a
    function of ``s_i`` (for the projected Gaussian because ``y - s`` lies in
    ``ker C``, so ``||Q_N^T (y - s)|| = ||y - s||``), up to terms free of ``s``.
    The projected Laplace mechanism gets its row-space noise as a latent.
    """
    y = np.asarray(release.value, dtype=float).reshape(-1)
    yt = pt.as_tensor(y[None, :])
    kind = spec["kind"]
    if kind == "projected_laplace":
        inv = release.invariants
        QR = _row_basis(np.asarray(inv.null_space_basis()))
        w = pm.Flat("row_space_noise", shape=QR.shape[0], initval=np.zeros(QR.shape[0]))
        shift = pt.dot(pt.as_tensor(QR.T), w)
        b = spec["scale"]

        def unary(S):
            return -pt.abs(yt - (S - shift[None, :])) / b

        obs = Laplace(
            "release",
            counts - pt.dot(pt.as_tensor(QR.T), w),
            scale=spec["scale"],
            observed=y,
            dims=dims,
        )
        return obs, unary
    if kind == "extended_laplace":
        raise InvariantDPError(
            "extended Laplace releases are not supported by the Bayesian models yet."
        )
    obs = mechanism_likelihood("release", release, counts, flatten=True, dims=dims)
    return obs, _noise_unary(spec, yt)


def _noise_unary(spec, yt):
    from .distributions import DiscreteGaussian, DiscreteLaplace, Gaussian, Tulap

    kind = spec["kind"]
    if kind == "projected_gaussian":
        sigma = spec["sigma"]
        return lambda S: -((yt - S) ** 2) / (2.0 * sigma**2)
    if kind == "tulap":
        logp = Tulap._custom(spec["b"], spec["q"], spec["scale"])["logp"]
    elif kind == "laplace":
        logp = Laplace._custom(spec["scale"])["logp"]
    elif kind == "gaussian":
        logp = Gaussian._custom(spec["sigma"])["logp"]
    elif kind == "discrete_laplace":
        logp = DiscreteLaplace._custom(spec["scale"])["logp"]
    else:
        logp = DiscreteGaussian._custom(spec["sigma"])["logp"]
    return lambda S: logp(yt, S)


def _latent_counts(
    name, release, spec, inv, *, latent, total, count_unary, dist, dims, max_count=None
):
    """Create the latent counts (exact integer or relaxed); return them and the sampler info.

    ``count_unary(s)`` is the count model's log mass per cell (elementwise,
    any terms free of ``s`` included or not).
    """
    y = np.asarray(release.value, dtype=float).reshape(-1)
    n = y.size
    lo, hi = _noise_bounds(spec, y)
    lower = 0 if lo is None else np.maximum(0.0, np.ceil(lo))
    upper = hi if max_count is None else np.minimum(max_count, np.inf if hi is None else hi)
    aug = _augmented(inv, n, total)
    start = fibre_point(y, aug, lower=lower, upper=upper) if aug is not None else None
    if start is None:
        start = np.clip(np.round(y), lower, upper).astype(np.int64)
    if latent == "exact":
        counts = dist(name, initval=start, dims=dims)
        if inv is not None:
            _invariants_potential("invariants", counts, inv)
        moves = LatticeMoves(
            inv if inv is not None else np.zeros((0, n)), fixed_total=total is not None
        )
        return counts, {"moves": moves, "lower": lower, "upper": upper}
    # relaxed: s = s0 + Q_N z, z free
    if aug is None:
        z = pm.Flat(f"{name}_coords", shape=n, initval=np.zeros(n))
        counts = pm.Deterministic(name, pt.as_tensor(start.astype(float)) + z, dims=dims)
    else:
        d = aug.n_cells - aug.rank
        z = pm.Flat(f"{name}_coords", shape=d, initval=np.zeros(d))
        counts = pm.Deterministic(name, affine_counts(aug, start, z), dims=dims)
    inside = pt.all(counts >= 0)
    if max_count is not None:
        inside = inside & pt.all(counts <= max_count)
    relaxed = pt.sum(count_unary(pt.maximum(counts, 0.0)))
    pm.Potential(f"{name}_logp", pt.switch(inside, relaxed, -np.inf))
    return counts, {"moves": None, "lower": lower, "upper": upper}


def _cell_labels(shape):
    if len(shape) == 1:
        return [str(i) for i in range(shape[0])]
    return [",".join(map(str, ix)) for ix in np.ndindex(*shape)]


# ---------------------------------------------------------------------------
# builders
# ---------------------------------------------------------------------------


def contingency_table_model(release, prior=1.0, *, total=None, latent="exact") -> pm.Model:
    r"""Dirichlet-multinomial model of a table released with noise and invariants.

    ``p ~ Dirichlet(prior)``, latent counts ``s | p ~ Multinomial(N, p)``
    restricted to the invariants ``C s = c``, and the release ``y | s`` with
    the mechanism's exact likelihood.

    Parameters
    ----------
    release : Release
        A release of the table (any shape, flattened in C order) with any
        mechanism of the package; its invariants (if any) are imposed.
    prior : float or array_like, optional
        Dirichlet concentration (a scalar for a symmetric prior).
    total : int, optional
        The grand total ``N``.  Needed only when the invariants do not imply it.
    latent : {"exact", "relaxed"}, optional
        Integer counts with the lattice sampler, or the continuous relaxation.

    Returns
    -------
    pymc.Model
        Variables ``cell_probs`` (dims ``cell``), ``counts`` (dims ``cell``),
        the observed ``release`` and, for a 2 x 2 table,
        ``odds_ratio = p11 p22 / (p12 p21)``.

    References
    ----------
    Gong & Meng (2020), Section 3 (the 2 x 23 table with three equality
    invariants); Ju, Awan, Gong & Rao (2022).

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.invariants import one_way_margins
    >>> from invariantdp.mechanisms.subspace import projected_gaussian
    >>> from invariantdp.inference.bayes import contingency_table_model, fit
    >>> r = projected_gaussian(np.array([[12, 5], [4, 9]]), one_way_margins((2, 2)), mu=0.5, rng=1)
    >>> model = contingency_table_model(r)
    >>> idata = fit(model, draws=500, chains=2, rng=1)  # doctest: +SKIP
    """
    release = _check_release(release)
    latent = _check_latent(latent)
    spec = release_noise(release)
    shape = tuple(release.data_shape or np.shape(release.value))
    y = np.asarray(release.value, dtype=float).reshape(-1)
    n = y.size
    inv = release.invariants
    N = _implied_total(inv)
    if total is not None:
        total = check_positive_int("total", total, minimum=0)
        if N is not None and abs(N - total) > 1e-6:
            raise InvariantDPError(f"`total` ({total}) differs from the invariant total {N:g}.")
        N = float(total)
    if N is None:
        raise InvariantDPError(
            "`total` must be given: the release's invariants do not fix the grand total."
        )
    if abs(N - round(N)) > 1e-6:
        raise InvariantDPError(f"the invariant total ({N}) must be a whole number.")
    N = int(round(N))
    alpha = check_finite_array("prior", prior)
    alpha = np.broadcast_to(alpha, (n,)) if alpha.size in (1, n) else alpha
    if alpha.shape != (n,) or np.any(alpha <= 0):
        raise InvariantDPError(
            f"`prior` must be > 0 and a scalar or have {n} entries, got shape {np.shape(prior)}."
        )
    coords = {"cell": _cell_labels(shape)}
    with pm.Model(coords=coords) as model:
        p = pm.Dirichlet("cell_probs", a=np.array(alpha, dtype=float), dims="cell")

        def count_unary(s):
            return s * pt.log(p) - pt.gammaln(s + 1.0)

        counts, latent_info = _latent_counts(
            "counts",
            release,
            spec,
            inv,
            latent=latent,
            total=N if _implied_total(inv) is None else None,
            count_unary=count_unary,
            dist=lambda name, **kw: pm.Multinomial(name, n=N, p=p, **kw),
            dims="cell",
            max_count=N,
        )
        _, noise_unary = _observe(release, counts, spec, n, "cell")
        if shape == (2, 2):
            pm.Deterministic("odds_ratio", p[0] * p[3] / (p[1] * p[2]))
    model.invariantdp = _info(release, latent, spec, latent_info, count_unary, noise_unary)
    model.invariantdp["conjugate"] = {
        "var": "cell_probs",
        "alpha": np.array(alpha, dtype=float),
        "signature": _signature(model),
    }
    return model


def _signature(model):
    """Free variables and potentials of a model (to detect user modifications)."""
    return (
        tuple(sorted(v.name for v in model.free_RVs)),
        tuple(sorted(v.name for v in model.potentials)),
    )


def poisson_regression_model(
    release, exog, *, prior_sigma=2.5, offset=None, exog_names=None, latent="exact"
) -> pm.Model:
    r"""Poisson log-linear regression of counts released with noise under invariants.

    ``beta ~ Normal(0, prior_sigma)``, latent ``s_i ~ Poisson(exp(x_i' beta + offset_i))``
    restricted to ``C s = c`` (e.g. county counts with state totals), and the
    release ``y | s`` -- typically the projected Gaussian or projected
    Laplace mechanism of Gao, Gong & Yu (2022), Cor. 14 and 17.

    Parameters
    ----------
    release : Release
        Released counts, shape ``(n,)``.
    exog : array_like, shape (n, k)
        Design matrix (include a constant column for an intercept).
    prior_sigma : float, optional
        Prior standard deviation of every coefficient.
    offset : array_like, shape (n,), optional
        Known log exposure.
    exog_names : list of str, optional
        Names of the ``k`` coefficients (dims ``coef``).
    latent : {"exact", "relaxed"}, optional

    Returns
    -------
    pymc.Model
        Variables ``beta`` (dims ``coef``), ``counts`` (dims ``unit``),
        ``release``; for the projected Laplace mechanism also
        ``row_space_noise``.

    Notes
    -----
    The projected Laplace noise ``Pi_N e`` has no closed-form density.  Its
    exact likelihood is ``p(y | s) = int prod_i Lap(y_i - s_i + (Q_R w)_i) dw``
    (``e = Pi_N e + Q_R w`` with ``Q_R`` an orthonormal basis of the row
    space of ``C``); the model keeps ``w`` as the latent ``row_space_noise``
    (flat prior), so marginally over ``w`` the likelihood is exact.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.invariants import totals
    >>> from invariantdp.mechanisms.subspace import projected_gaussian
    >>> from invariantdp.inference.bayes import poisson_regression_model
    >>> X = np.column_stack([np.ones(6), np.linspace(-1, 1, 6)])
    >>> s = np.array([3, 5, 8, 4, 9, 15])
    >>> r = projected_gaussian(s, totals([0, 0, 0, 1, 1, 1]), mu=1.0, rng=0)
    >>> model = poisson_regression_model(r, X)
    >>> sorted(v.name for v in model.free_RVs)
    ['beta', 'counts']
    """
    release = _check_release(release)
    latent = _check_latent(latent)
    spec = release_noise(release)
    y = np.asarray(release.value, dtype=float).reshape(-1)
    n = y.size
    X = check_finite_array("exog", exog)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[0] != n:
        raise InvariantDPError(f"`exog` must have shape ({n}, k), got {np.shape(exog)}.")
    k = X.shape[1]
    prior_sigma = check_positive("prior_sigma", prior_sigma)
    off = np.zeros(n) if offset is None else check_finite_array("offset", offset).reshape(-1)
    if off.shape != (n,):
        raise InvariantDPError(f"`offset` must have shape ({n},), got {np.shape(offset)}.")
    names = [f"x{j}" for j in range(k)] if exog_names is None else [str(s) for s in exog_names]
    if len(names) != k:
        raise InvariantDPError(f"`exog_names` must have {k} entries, got {len(names)}.")
    inv = release.invariants
    coords = {"coef": names, "unit": [str(i) for i in range(n)]}
    with pm.Model(coords=coords) as model:
        Xd = pm.Data("exog", X)
        beta = pm.Normal("beta", 0.0, prior_sigma, dims="coef")
        log_rate = pt.dot(Xd, beta) + off

        def count_unary(s):
            return s * log_rate - pt.exp(log_rate) - pt.gammaln(s + 1.0)

        counts, latent_info = _latent_counts(
            "counts",
            release,
            spec,
            inv,
            latent=latent,
            total=None,
            count_unary=count_unary,
            dist=lambda name, **kw: pm.Poisson(name, mu=pt.exp(log_rate), **kw),
            dims="unit",
        )
        _, noise_unary = _observe(release, counts, spec, n, "unit")
    model.invariantdp = _info(release, latent, spec, latent_info, count_unary, noise_unary)
    return model


def binomial_model(release, n, prior=(1.0, 1.0), *, latent="marginal") -> pm.Model:
    r"""A proportion from a release of binomial counts (typically a Tulap release).

    ``theta ~ Beta(a, b)``, ``x_j | theta ~ Binomial(n, theta)`` for each
    released entry ``j``, and ``y_j = x_j + noise``.

    Parameters
    ----------
    release : Release
        Released counts (a scalar or a vector of independent releases), with
        any scalar mechanism (Tulap, Laplace, Gaussian, discrete Laplace, ...).
    n : int
        Number of trials behind each count.
    prior : (float, float), optional
        Beta prior ``(a, b)``.
    latent : {"marginal", "exact", "relaxed"}, optional
        ``"marginal"`` (default) sums ``x`` out exactly,
        ``log p(y | theta) = logsumexp_x [log Bin(x | n, theta) + log f(y - x)]``
        (``n + 1`` terms), so NUTS samples ``theta`` alone; ``"exact"`` keeps
        ``x`` latent with the lattice sampler; ``"relaxed"`` makes it real.

    Returns
    -------
    pymc.Model
        Variables ``theta`` and ``release`` (and ``counts`` unless marginal).

    References
    ----------
    Awan & Slavkovic (2018), the Tulap mechanism for binomial data; Ju,
    Awan, Gong & Rao (2022), Section 5.

    Examples
    --------
    >>> from invariantdp.mechanisms.additive import tulap
    >>> from invariantdp.inference.bayes import binomial_model
    >>> r = tulap(13, epsilon=1.0, rng=3)
    >>> model = binomial_model(r, n=30)
    >>> [v.name for v in model.free_RVs]
    ['theta']
    """
    release = _check_release(release)
    latent = _check_latent(latent, ("marginal", "exact", "relaxed"))
    n = check_positive_int("n", n)
    try:
        a, b = (check_positive(f"prior[{i}]", v) for i, v in enumerate(prior))
    except TypeError:
        raise TypeError(
            f"`prior` must be a pair (a, b) of positive reals, got {prior!r}."
        ) from None
    spec = release_noise(release)
    if spec["kind"] in ("projected_gaussian", "projected_laplace", "extended_laplace"):
        raise InvariantDPError(
            f"`release` must use a scalar noise law for a binomial model, got {spec['kind']}."
        )
    y = np.asarray(release.value, dtype=float).reshape(-1)
    m = y.size
    coords = {"release_index": [str(i) for i in range(m)]}
    with pm.Model(coords=coords) as model:
        theta = pm.Beta("theta", a, b)
        if latent == "marginal":
            _marginal_binomial(release, spec, theta, n)
            latent_info, count_unary, noise_unary = None, None, None
        else:

            def count_unary(s):
                return (
                    -pt.gammaln(s + 1.0)
                    - pt.gammaln(n - s + 1.0)
                    + s * pt.log(theta)
                    + (n - s) * pt.log1p(-theta)
                )

            counts, latent_info = _latent_counts(
                "counts",
                release,
                spec,
                None,
                latent=latent,
                total=None,
                count_unary=count_unary,
                dist=lambda name, **kw: pm.Binomial(name, n=n, p=theta, **kw),
                dims="release_index",
                max_count=n,
            )
            _, noise_unary = _observe(release, counts, spec, m, "release_index")
    model.invariantdp = _info(release, latent, spec, latent_info, count_unary, noise_unary)
    return model


def _marginal_binomial(release, spec, theta, n):
    from .distributions import (
        DiscreteGaussian,
        DiscreteLaplace,
        Gaussian,
        Tulap,
    )

    grid = np.arange(n + 1, dtype=float)
    kind = spec["kind"]
    if kind == "tulap":
        noise = Tulap.dist(grid, b=spec["b"], q=spec["q"], scale=spec["scale"])
    elif kind == "laplace":
        noise = Laplace.dist(grid, scale=spec["scale"])
    elif kind == "gaussian":
        noise = Gaussian.dist(grid, sigma=spec["sigma"])
    elif kind == "discrete_laplace":
        noise = DiscreteLaplace.dist(grid.astype(np.int64), scale=spec["scale"])
    else:
        noise = DiscreteGaussian.dist(grid.astype(np.int64), sigma=spec["sigma"])
    y = np.asarray(release.value, dtype=float).reshape(-1)
    # log f(y_j - x) for every release j and every x = 0..n: constants of the model
    table = np.stack([pm.logp(noise, np.full(n + 1, v)).eval() for v in y])
    log_binom = (
        pt.gammaln(n + 1.0)
        - pt.gammaln(grid + 1.0)
        - pt.gammaln(n - grid + 1.0)
        + grid * pt.log(theta)
        + (n - grid) * pt.log1p(-theta)
    )
    terms = pt.as_tensor(table) + log_binom[None, :]
    pm.Potential("release", pt.sum(pt.logsumexp(terms, axis=1)))


def _info(release, latent, spec, latent_info, count_unary, noise_unary) -> dict:
    """What :func:`fit` needs to sample the model."""
    info = {"release": release, "latent": latent, "latent_var": "counts"}
    if latent == "exact":
        info.update(
            moves=latent_info["moves"],
            lower=latent_info["lower"],
            upper=latent_info["upper"],
            unary=lambda S: count_unary(S) + noise_unary(S),
            max_step=_initial_step(spec),
        )
    return info


def _initial_step(spec) -> int:
    """Initial lattice step: about the noise standard deviation."""
    if spec["kind"] == "tulap":
        b = spec["b"]
        sd = spec["scale"] * np.sqrt(2 * b / (1 - b) ** 2 + 1 / 12)
    elif spec["kind"] in ("laplace", "projected_laplace", "discrete_laplace"):
        sd = np.sqrt(2.0) * spec["scale"]
    else:
        sd = spec["sigma"]
    return int(max(1, round(sd)))


# ---------------------------------------------------------------------------
# fitting
# ---------------------------------------------------------------------------


def fit(
    model,
    *,
    draws=1000,
    tune=1000,
    chains=4,
    rng=None,
    cores=1,
    target_accept=0.9,
    n_proposals=None,
    fast=True,
    conjugate=True,
    progressbar=False,
    **kwargs,
):
    r"""Sample a model built by this module; return ArviZ ``InferenceData``.

    Parameters
    ----------
    model : pymc.Model
        From :func:`contingency_table_model`, :func:`poisson_regression_model`
        or :func:`binomial_model` (possibly modified).
    draws, tune, chains : int, optional
        Retained draws and tuning iterations per chain, number of chains.
    rng : None, int, SeedSequence or numpy.random.Generator
        Seeds every chain (and the lattice step) reproducibly: one integer
        drawn from it is PyMC's ``random_seed``, from which PyMC spawns a
        stream per chain.  The same ``rng`` gives the same draws.
    cores : int, optional
        Parallel chains (default 1).
    target_accept : float, optional
        NUTS target acceptance.
    n_proposals : int, optional
        Lattice proposals per iteration (default: ten times the number of
        cells with ``fast``, else the number of cells).
    fast : bool, optional
        Let the lattice step use the separable form of the builder's model
        (see :class:`~.sampler.LatticeMetropolis`, ``unary``).  Set it to
        False after adding model terms that couple the latent counts.
    conjugate : bool, optional
        For :func:`contingency_table_model` with exact latent counts, update
        ``cell_probs`` by its conjugate Dirichlet draw
        (:class:`~.sampler.DirichletGibbs`) instead of NUTS.  Used only while
        the model's free variables and potentials are those the builder made
        (a changed prior is detected by a new variable, not by a changed
        concentration: set ``conjugate=False`` after editing the prior in place).
    progressbar : bool, optional
    **kwargs
        Passed to :func:`pymc.sample` (except ``random_seed``: use ``rng``).

    Returns
    -------
    arviz.InferenceData
        With ``constant_data`` holding the released value (``release_value``)
        and the invariant values (``invariant_values``), and the release as
        JSON in ``posterior.attrs["release"]`` and ``constant_data.attrs``.

    Notes
    -----
    With ``latent="exact"`` the counts are updated by
    :class:`~.sampler.LatticeMetropolis` and every other free variable by
    NUTS in one compound step; the lattice step's acceptance rate is in
    ``sample_stats.lattice_accept``.

    Examples
    --------
    >>> idata = fit(model, draws=1000, tune=1000, chains=4, rng=0)  # doctest: +SKIP
    >>> idata.posterior["cell_probs"].mean(("chain", "draw"))  # doctest: +SKIP
    """
    if not isinstance(model, pm.Model):
        raise TypeError(f"`model` must be a pymc.Model, got {type(model).__name__}.")
    info = getattr(model, "invariantdp", None)
    if info is None:
        raise InvariantDPError(
            "`model` was not built by invariantdp.inference.bayes (no `invariantdp` attribute)."
        )
    if "random_seed" in kwargs:
        shown = repr(kwargs["random_seed"])
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise TypeError(
            f"`random_seed` ({shown}) is not an argument of fit: "
            "seed it with `rng` (None, an int, a SeedSequence or a Generator)."
        )
    draws = check_positive_int("draws", draws)
    tune = check_positive_int("tune", tune, minimum=0)
    chains = check_positive_int("chains", chains)
    # One integer seed: PyMC spawns the per-chain streams from it (a list of seeds
    # no longer seeds chain by chain in recent PyMC and draws a UserWarning); an int
    # drawn from `rng` keeps the fit reproducible from `rng` in every PyMC 5.x.
    seed = int(as_generator(rng).integers(0, 2**31 - 1))
    steps = []
    conj = info.get("conjugate")
    if (
        conjugate
        and conj is not None
        and info["latent"] == "exact"
        and _signature(model) == conj["signature"]
    ):
        steps.append(
            DirichletGibbs(
                [model[conj["var"]]], counts=info["latent_var"], alpha=conj["alpha"], model=model
            )
        )
    if info["latent"] == "exact":
        steps.append(
            LatticeMetropolis(
                [model[info["latent_var"]]],
                moves=info["moves"],
                unary=info["unary"] if fast else None,
                lower=info["lower"],
                upper=info["upper"],
                n_proposals=n_proposals,
                max_step=info["max_step"],
                model=model,
            )
        )
    covered = {v.name for st in steps for v in st.vars}
    if any(model.rvs_to_values[v].name not in covered for v in model.free_RVs):
        kwargs.setdefault("target_accept", target_accept)
    with model, warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"(pymc|pytensor|numpy)")
        idata = pm.sample(
            draws=draws,
            tune=tune,
            chains=chains,
            cores=cores,
            step=steps or None,
            random_seed=seed,
            progressbar=progressbar,
            **kwargs,
        )
    _attach_release(idata, info["release"])
    return idata


def _attach_release(idata, release: Release) -> None:
    text = release.to_json()
    value = np.asarray(release.value)
    data = {
        "release_value": xr.DataArray(value, dims=[f"release_dim_{i}" for i in range(value.ndim)])
    }
    if release.invariants is not None and release.invariants.values is not None:
        data["invariant_values"] = xr.DataArray(
            np.asarray(release.invariants.values), dims=["invariant"]
        )
    ds = xr.Dataset(data, attrs={"release": text})
    if "constant_data" in idata.groups():
        idata.constant_data = idata.constant_data.assign(data)
        idata.constant_data.attrs["release"] = text
    else:
        idata.add_groups(constant_data=ds)
    idata.posterior.attrs["release"] = text
