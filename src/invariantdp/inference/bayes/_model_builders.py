r"""Model builders for releases with invariants, and :func:`fit`.

Each builder returns a :class:`pymc.Model` in which the confidential counts
are latent and the release is the observed node, with the mechanism's exact
likelihood (:mod:`._pymc_likelihoods`) and the invariants imposed on the latent
counts.  The model can be modified before fitting (add hierarchy, change
priors, add deterministics).  :func:`fit` samples it:

* ``latent="exact"`` (default): integer counts on the fibre of the
  invariants, updated by :class:`~._latent_samplers.LatticeMetropolis`, the continuous
  parameters by NUTS (data augmentation, Ju, Awan, Gong & Rao 2022);
* ``latent="relaxed"``: counts parameterised on the invariant affine space and
  sampled by NUTS with the rest (adequate for large counts; see
  :mod:`._latent_samplers` for the conditions);
* ``latent="marginal"`` (:func:`binomial_model` only): the count summed out
  exactly.

Treating the noisy release as if it were the confidential data (the *naive*
analysis) ignores the mechanism; conditioning on the invariants and the known
noise law is the coherent alternative that statistical intelligibility makes
possible (Gong & Meng, Sections 1.4 and 2.2; Gao, Gong & Yu, Section 4).

Model attributes used by :func:`fit` are stored in ``model.invariantdp``
(a dict with the release, the latent variable's name and its lattice moves).

The builders share :mod:`._latent` (latent counts, the observed release);
:func:`fit` is defined in :mod:`._fit` and exported here.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from ..._validation import (
    InvariantDPError,
    check_finite_array,
    check_positive,
    check_positive_int,
)
from ._fit import fit
from ._latent import (
    _cell_labels,
    _check_latent,
    _check_release,
    _implied_total,
    _info,
    _latent_counts,
    _marginal_binomial,
    _observe,
    _signature,
)
from ._pymc_likelihoods import release_noise

__all__ = [
    "binomial_model",
    "contingency_table_model",
    "fit",
    "poisson_regression_model",
]


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
    >>> from invariantdp.mechanisms._subspace_mechanisms import projected_gaussian
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
    coords = {"cell": _cell_labels(release, shape)}
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
        Names of the ``k`` coefficients (dims ``coef``); by default the
        columns of a DataFrame ``exog``, else ``x0, x1, ...``.  The units
        (dims ``unit``) are named by the release's labels when it has them.
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

    References
    ----------
    Gao, Gong & Yu (2022), Cor. 14 and 17; Ju, Awan, Gong & Rao (2022),
    "Data augmentation MCMC for Bayesian inference from privatized data",
    NeurIPS 35.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.invariants import totals
    >>> from invariantdp.mechanisms._subspace_mechanisms import projected_gaussian
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
    if exog_names is None:
        columns = getattr(exog, "columns", None)  # a DataFrame names its coefficients
        exog_names = [f"x{j}" for j in range(k)] if columns is None else list(columns)
    names = [str(s) for s in exog_names]
    if len(names) != k:
        raise InvariantDPError(f"`exog_names` must have {k} entries, got {len(names)}.")
    inv = release.invariants
    coords = {"coef": names, "unit": _cell_labels(release, (n,))}
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
    >>> from invariantdp.mechanisms import tulap_mechanism
    >>> from invariantdp.inference.bayes import binomial_model
    >>> r = tulap_mechanism(13, epsilon=1.0, rng=3)
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
    if spec.structure != "independent":
        raise InvariantDPError(
            "`release` must use a scalar noise law for a binomial model, got "
            f"{release.noise.family}."
        )
    y = np.asarray(release.value, dtype=float).reshape(-1)
    m = y.size
    coords = {"release_index": _cell_labels(release, (m,))}
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
