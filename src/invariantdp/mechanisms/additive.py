"""Additive noise mechanisms: Laplace, Gaussian, discrete, Tulap and l_p.

Every mechanism releases ``x + noise`` with noise independent of ``x`` and
returns a :class:`~invariantdp.Release` recording the exact noise law and the
privacy guarantee.  Signatures follow one pattern::

    name(x, *, <privacy parameters>, sensitivity=1.0, rng=None)

``sensitivity`` is the sensitivity of the query in the norm the mechanism is
calibrated by (l2 for Gaussian noise, l1 for Laplace noise, ...), given as a
number or as a sensitivity space (a 2-D array of difference vectors, whose
largest norm is used).  Gaussian noise has standard deviation
``sensitivity / mu`` under mu-GDP (Dong, Roth & Su 2022; Cho & Awan, Prop. 6),
or is calibrated from ``epsilon, delta`` through the exact Balle & Wang (2018)
relation; Laplace noise has scale ``sensitivity / epsilon``.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .._rng import as_generator
from .._validation import (
    InvariantDPError,
    check_delta,
    check_epsilon,
    check_finite_array,
    check_positive,
)
from ..distributions.discrete import (
    _draw_discrete_laplace,
    sample_discrete_gaussian_exact,
    sample_discrete_laplace_exact,
)
from ..distributions.discrete import (
    discrete_gaussian as _discrete_gaussian_dist,
)
from ..distributions.discrete import (
    discrete_laplace as _discrete_laplace_dist,
)
from ..distributions.tulap import _draw_tulap, _draw_tulap_exact, tulap_params
from ..release import NoiseLaw, PrivacyGuarantee, Release, register_noise_family
from ..secure import random_source

__all__ = [
    "discrete_gaussian",
    "discrete_laplace",
    "gaussian",
    "laplace",
    "lp_mechanism",
    "tulap",
]

register_noise_family("discrete_laplace", lambda p: _discrete_laplace_dist(p["scale"]))
register_noise_family("discrete_gaussian", lambda p: _discrete_gaussian_dist(p["sigma"]))

_ADJ = "data sets whose query values differ by a vector of the stated sensitivity"


# ---------------------------------------------------------------------------
# shared argument handling (used by the other mechanism modules)
# ---------------------------------------------------------------------------


def _check_x(x, name: str = "x") -> np.ndarray:
    if isinstance(x, np.ndarray) and x.dtype == np.float64:
        # no defensive copy: mechanisms never write to x (the release is x + noise)
        arr = x
        if not np.isfinite(arr).all():
            check_finite_array(name, x)  # raises with the standard message
    else:
        arr = check_finite_array(name, x)
    if arr.size == 0:
        raise InvariantDPError(f"`{name}` must not be empty.")
    return arr


def _sensitivity(sensitivity, p, *, dim: int | None = None, transform=None) -> float:
    """A positive sensitivity: a number, or the largest ``l_p`` norm of a space.

    ``transform`` maps the difference vectors first (e.g. ``Q_N^T`` for the
    extended mechanisms of Gao, Gong & Yu).
    """
    if np.ndim(sensitivity) == 0:
        return check_positive("sensitivity", sensitivity)
    S = check_finite_array("sensitivity", sensitivity)
    if S.ndim != 2 or S.shape[0] == 0:
        raise InvariantDPError(
            "`sensitivity` must be a positive number or a 2-D array of difference "
            f"vectors (one per row), got shape {S.shape}."
        )
    if dim is not None and S.shape[1] != dim:
        raise InvariantDPError(
            f"`sensitivity` vectors must have {dim} coordinates like the data, got {S.shape[1]}."
        )
    if transform is not None:
        S = transform(S)
    value = float(np.max(np.linalg.norm(S, ord=p, axis=1)))
    if not value > 0:
        raise InvariantDPError("`sensitivity` space must contain a nonzero difference vector.")
    return value


def _gaussian_calibration(mu, epsilon, delta):
    """``(mu, guarantee params, calibration note)`` from mu or (epsilon, delta)."""
    if mu is not None:
        if epsilon is not None or delta is not None:
            raise InvariantDPError(
                "give either `mu` or (`epsilon`, `delta`), not both; "
                f"got mu={mu}, epsilon={epsilon}, delta={delta}."
            )
        mu = check_positive("mu", mu)
        return mu, {"mu": mu}, "mu-GDP"
    if epsilon is None or delta is None:
        raise InvariantDPError(
            "Gaussian noise needs `mu` (mu-GDP) or both `epsilon` and `delta`; "
            f"got epsilon={epsilon}, delta={delta}."
        )
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0:
        raise InvariantDPError(f"`delta` ({delta}) must be in (0, 1) for Gaussian noise.")
    from ..privacy.accounting import eps_delta_to_gdp  # lazy: written concurrently

    mu = float(eps_delta_to_gdp(epsilon, delta))
    return (
        mu,
        {"mu": mu, "epsilon": epsilon, "delta": delta},
        "Balle & Wang (2018) exact: mu-GDP with delta(epsilon) equal to the target",
    )


def _sampler_note(secure: bool) -> dict:
    if not secure:
        return {}
    return {"sampler": "secure: exact integer sampling from secrets (invariantdp.secure)"}


def _release(value, mechanism, noise, guarantee, *, data_shape, metadata, invariants=None):
    return Release(
        value=value,
        mechanism=mechanism,
        noise=noise,
        guarantee=guarantee,
        invariants=invariants,
        query=None,
        data_shape=data_shape,
        metadata={"query": "identity", **metadata},
    )


# ---------------------------------------------------------------------------
# mechanisms
# ---------------------------------------------------------------------------


def laplace(x, *, epsilon, sensitivity=1.0, rng=None) -> Release:
    r"""Laplace mechanism: ``x + Lap(sensitivity / epsilon)`` in every coordinate.

    Parameters
    ----------
    x : array_like
        The confidential query value (any shape).
    epsilon : float
        ``epsilon > 0``.
    sensitivity : float or array_like, optional
        :math:`\ell_1` sensitivity (default 1), or a sensitivity space whose
        largest :math:`\ell_1` norm is used.
    rng : None, int, SeedSequence or numpy.random.Generator

    Returns
    -------
    Release
        epsilon-DP; noise family ``"laplace"`` with ``scale``.

    References
    ----------
    Dwork et al. (2006); Gao, Gong & Yu, Lemma 16; Cho & Awan, Algorithm 4.

    Examples
    --------
    >>> from invariantdp.mechanisms import laplace
    >>> r = laplace([10.0, 20.0], epsilon=1.0, sensitivity=2.0, rng=0)
    >>> r.noise.params
    {'scale': 2.0}
    """
    xv = _check_x(x)
    epsilon = check_epsilon(epsilon)
    delta1 = _sensitivity(sensitivity, 1, dim=xv.size)
    gen = as_generator(rng)
    scale = delta1 / epsilon
    noise = gen.laplace(0.0, scale, size=xv.shape)
    return _release(
        xv + noise,
        "laplace",
        NoiseLaw("laplace", {"scale": scale}),
        PrivacyGuarantee("epsilon-DP", {"epsilon": epsilon}, _ADJ),
        data_shape=xv.shape,
        metadata={"sensitivity": delta1, "norm": "l1"},
    )


def gaussian(x, *, mu=None, epsilon=None, delta=None, sensitivity=1.0, rng=None) -> Release:
    r"""Gaussian mechanism: ``x + N(0, sigma^2 I)`` with ``sigma = sensitivity / mu``.

    Parameters
    ----------
    x : array_like
        The confidential query value.
    mu : float, optional
        mu-GDP parameter.
    epsilon, delta : float, optional
        Instead of ``mu``: the smallest ``mu`` whose Gaussian tradeoff gives
        (epsilon, delta)-DP, from the exact Balle & Wang (2018) relation
        :math:`\delta = \Phi(-\epsilon/\mu + \mu/2) - e^\epsilon\Phi(-\epsilon/\mu - \mu/2)`.
    sensitivity : float or array_like, optional
        :math:`\ell_2` sensitivity (default 1) or a sensitivity space.
    rng : None, int, SeedSequence or numpy.random.Generator

    Returns
    -------
    Release
        GDP guarantee with ``mu`` (and the target epsilon, delta when given);
        noise family ``"gaussian"``.

    References
    ----------
    Dong, Roth & Su (2022); Cho & Awan, Prop. 6; Balle & Wang (2018).

    Examples
    --------
    >>> from invariantdp.mechanisms import gaussian
    >>> r = gaussian([1.0, 2.0, 3.0], mu=0.5, sensitivity=2.0, rng=1)
    >>> r.noise.params["scale"]
    4.0
    """
    xv = _check_x(x)
    mu, gparams, how = _gaussian_calibration(mu, epsilon, delta)
    delta2 = _sensitivity(sensitivity, 2, dim=xv.size)
    gen = as_generator(rng)
    sigma = delta2 / mu
    return _release(
        xv + sigma * gen.standard_normal(xv.shape),
        "gaussian",
        NoiseLaw("gaussian", {"scale": sigma}),
        PrivacyGuarantee("GDP", gparams, _ADJ),
        data_shape=xv.shape,
        metadata={"sensitivity": delta2, "norm": "l2", "calibration": how},
    )


def _check_integer_valued(xv, name="x"):
    if not np.all(xv == np.round(xv)):
        raise InvariantDPError(f"`{name}` must be integer-valued for integer noise.")
    if np.any(np.abs(xv) > 2.0**53):
        raise InvariantDPError(f"`{name}` has entries above 2**53; floats cannot hold them.")


def _integer_sensitivity(sensitivity, p, dim):
    value = _sensitivity(sensitivity, p, dim=dim)
    if p == 1 and value != np.round(value):
        raise InvariantDPError(f"`sensitivity` ({value}) must be a whole number for integer noise.")
    return value


def discrete_laplace(x, *, epsilon, sensitivity=1, rng=None, secure=False) -> Release:
    r"""Geometric mechanism: ``x + Lap_Z(sensitivity / epsilon)`` per coordinate.

    ``Lap_Z(t)`` is the discrete Laplace (double geometric) law
    :math:`P(k) \propto e^{-|k|/t}` on the integers; for an integer-valued
    query with integer :math:`\ell_1` sensitivity it gives epsilon-DP.

    Parameters
    ----------
    x : array_like of integers
    epsilon : float
    sensitivity : int or array_like, optional
        Integer :math:`\ell_1` sensitivity (default 1) or a sensitivity space.
    rng : None, int, SeedSequence or numpy.random.Generator
        Source of randomness for simulations; must be None with ``secure=True``.
    secure : bool, optional
        Draw the noise for a production release: exact
        :math:`\mathrm{Lap}_{\mathbb Z}(\Delta/\epsilon)` (the exact rational
        value of ``sensitivity / epsilon``) by CKS Algorithm 2 with uniform
        integers from :mod:`secrets` (see :mod:`invariantdp.secure`).  About
        20 microseconds per cell instead of nanoseconds.

    References
    ----------
    Ghosh, Roughgarden & Sundararajan (2012); Canonne, Kamath & Steinke
    (2020), Def. 3 and Algorithm 2; Gong & Meng (2020) (double geometric).

    Examples
    --------
    >>> from invariantdp.mechanisms import discrete_laplace
    >>> r = discrete_laplace([3, 7, 0], epsilon=0.5, rng=2)
    >>> bool((r.value == r.value.round()).all())
    True
    """
    xv = _check_x(x)
    _check_integer_valued(xv)
    epsilon = check_epsilon(epsilon)
    delta1 = _integer_sensitivity(sensitivity, 1, xv.size)
    gen = random_source(rng, secure)
    t = delta1 / epsilon
    if secure:
        exact = Fraction(delta1) / Fraction(epsilon)
        noise = sample_discrete_laplace_exact(exact, size=xv.size, rng=gen).reshape(xv.shape)
    else:
        noise = _draw_discrete_laplace(gen, t, xv.shape)
    return _release(
        xv + noise,
        "discrete_laplace",
        NoiseLaw("discrete_laplace", {"scale": t}),
        PrivacyGuarantee("epsilon-DP", {"epsilon": epsilon}, _ADJ),
        data_shape=xv.shape,
        metadata={"sensitivity": delta1, "norm": "l1", **_sampler_note(secure)},
    )


def discrete_gaussian(x, *, mu=None, rho=None, sensitivity=1, rng=None, secure=False) -> Release:
    r"""Discrete Gaussian mechanism: ``x + N_Z(0, sigma^2)`` per coordinate.

    ``sigma = sensitivity / mu`` (or ``sensitivity / sqrt(2 rho)``); the
    release is :math:`\rho`-zCDP with :math:`\rho = \Delta_2^2/(2\sigma^2)`
    (Canonne, Kamath & Steinke 2020, Theorem 4).  The noise is drawn by the
    CKS rejection sampler (Algorithm 3).

    Parameters
    ----------
    x : array_like of integers
    mu : float, optional
        Sets ``sigma = sensitivity / mu`` (then ``rho = mu^2 / 2``).
    rho : float, optional
        zCDP parameter, instead of ``mu``.
    sensitivity : float or array_like, optional
        :math:`\ell_2` sensitivity (default 1) of the integer-valued query.
    rng : None, int, SeedSequence or numpy.random.Generator
        Source of randomness for simulations; must be None with ``secure=True``.
    secure : bool, optional
        Draw the noise for a production release: exact
        :math:`N_{\mathbb Z}(0, \sigma^2)` with the rational
        :math:`\sigma^2 = \Delta_2^2/\mu^2` (or :math:`\Delta_2^2/(2\rho)`)
        by :func:`~invariantdp.distributions.sample_discrete_gaussian_exact`
        with uniform integers from :mod:`secrets` (see :mod:`invariantdp.secure`).

    Examples
    --------
    >>> from invariantdp.mechanisms import discrete_gaussian
    >>> r = discrete_gaussian([3, 7, 0], rho=0.5, rng=2)
    >>> r.guarantee.params
    {'rho': 0.5}
    """
    xv = _check_x(x)
    _check_integer_valued(xv)
    if (mu is None) == (rho is None):
        raise InvariantDPError(f"give exactly one of `mu` or `rho`; got mu={mu}, rho={rho}.")
    if mu is not None:
        rho = check_positive("mu", mu) ** 2 / 2.0
    else:
        rho = check_positive("rho", rho)
    delta2 = _sensitivity(sensitivity, 2, dim=xv.size)
    gen = random_source(rng, secure)
    sigma = delta2 / np.sqrt(2.0 * rho)
    if secure:
        s2 = Fraction(delta2) ** 2 / (Fraction(mu) ** 2 if mu is not None else 2 * Fraction(rho))
        noise = sample_discrete_gaussian_exact(s2, size=xv.size, rng=gen).reshape(xv.shape)
    else:
        noise = _discrete_gaussian_dist(sigma).rvs(size=xv.shape, random_state=gen)
    return _release(
        xv + noise,
        "discrete_gaussian",
        NoiseLaw("discrete_gaussian", {"sigma": float(sigma)}),
        PrivacyGuarantee("zCDP", {"rho": rho}, _ADJ),
        data_shape=xv.shape,
        metadata={"sensitivity": delta2, "norm": "l2", **_sampler_note(secure)},
    )


def tulap(x, *, epsilon, delta=0.0, sensitivity=1.0, rng=None, secure=False) -> Release:
    r"""Tulap mechanism: ``x + sensitivity * Tulap(0, exp(-epsilon), q)``.

    Tulap is the canonical noise distribution of :math:`f_{\epsilon,\delta}`
    (Awan & Slavkovic 2018; Cho & Awan, Def. 35): for a scalar statistic of
    sensitivity ``sensitivity`` the release is :math:`f_{\epsilon,\delta}`-DP
    exactly.  For an array each coordinate gets independent noise, which is
    :math:`f_{\epsilon,\delta}`-DP when neighbouring data change one
    coordinate by at most ``sensitivity``.

    Parameters
    ----------
    x : array_like
    epsilon : float
    delta : float, optional
    sensitivity : float, optional
        Sensitivity of each coordinate (default 1).
    rng : None, int, SeedSequence or numpy.random.Generator
        Source of randomness for simulations; must be None with ``secure=True``.
    secure : bool, optional
        Draw the noise for a production release: the integer part
        ``G1 - G2`` exactly (discrete Laplace by CKS Algorithm 2, integers
        from :mod:`secrets`) and the uniform part from 53 secure random bits;
        for integer ``x`` and ``sensitivity=1`` the release is computed as
        ``(x + G) + U`` (see :mod:`invariantdp.secure`).

    Examples
    --------
    >>> from invariantdp.mechanisms import tulap
    >>> r = tulap(12.0, epsilon=1.0, delta=0.01, rng=3)
    >>> sorted(r.noise.params)
    ['b', 'q', 'scale']
    """
    xv = _check_x(x)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if np.ndim(sensitivity) != 0:
        raise InvariantDPError("`sensitivity` must be a number for the Tulap mechanism.")
    scale = check_positive("sensitivity", sensitivity)
    gen = random_source(rng, secure)
    b, q = tulap_params(epsilon, delta)
    shape = xv.shape
    if secure:
        g, u = _draw_tulap_exact(gen, epsilon, q, xv.size)
        g, u = g.reshape(shape), u.reshape(shape)
        integer = scale == 1.0 and np.all(xv == np.round(xv)) and np.all(np.abs(xv) < 2.0**52)
        value = (xv + g) + u if integer else xv + scale * (g + u)
    else:
        value = xv + scale * _draw_tulap(gen, b, q, shape)
    return _release(
        value,
        "tulap",
        NoiseLaw("tulap", {"b": b, "q": q, "scale": scale}),
        PrivacyGuarantee("(epsilon, delta)-DP", {"epsilon": epsilon, "delta": delta}, _ADJ),
        data_shape=shape,
        metadata={"sensitivity": scale, **_sampler_note(secure)},
    )


def _check_p(p):
    if isinstance(p, str):
        if p.lower() in ("inf", "infinity"):
            return np.inf
        raise InvariantDPError(f"`p` ({p!r}) must be 1, 2 or inf.")
    if isinstance(p, bool) or not isinstance(p, int | float | np.number):
        raise TypeError(f"`p` must be 1, 2 or inf, got {type(p).__name__} ({p!r}).")
    if p not in (1, 2, np.inf):
        raise InvariantDPError(f"`p` ({p}) must be 1, 2 or inf.")
    return float(p)


def lp_mechanism(x, p, sensitivity=1.0, epsilon=None, *, rng=None) -> Release:
    r"""The :math:`\ell_p` K-norm mechanism for ``p`` in {1, 2, inf} (epsilon-DP).

    The noise ``V`` has density proportional to
    :math:`\exp(-\epsilon \|v\|_p / \Delta_p)` on :math:`\mathbb R^d`:

    * ``p = 1``: i.i.d. ``Laplace(Delta_1 / epsilon)`` (Algorithm 4);
    * ``p = 2``: ``r Z / ||Z||_2`` with ``Z ~ N(0, I_d)`` and
      ``r ~ Gamma(d, epsilon / Delta_2)`` (Algorithm 5, Wang et al. 2014);
    * ``p = inf``: ``r U`` with ``U ~ Unif[-1, 1]^d`` and
      ``r ~ Gamma(d + 1, epsilon / Delta_inf)`` (Algorithm 6, Steinke & Ullman 2016).

    Parameters
    ----------
    x : array_like
        The confidential query value (flattened to ``d`` coordinates for the norm).
    p : {1, 2, inf}
    sensitivity : float or array_like, optional
        :math:`\ell_p` sensitivity (default 1) or a sensitivity space.
    epsilon : float
        ``epsilon > 0`` (required; positional as in ``lp_mechanism(x, p,
        sensitivity, epsilon)`` or by keyword).
    rng : None, int, SeedSequence or numpy.random.Generator

    References
    ----------
    Cho & Awan, Appendix B, Algorithms 4-6; Hardt & Talwar (2010).

    Examples
    --------
    >>> from invariantdp.mechanisms import lp_mechanism
    >>> r = lp_mechanism([0.0, 0.0, 0.0], "inf", epsilon=1.0, rng=4)
    >>> r.noise.params["norm"]
    'linf'
    """
    from .knorm import _knorm_law  # lazy: knorm imports this module

    if epsilon is None:
        raise TypeError("`epsilon` is required: lp_mechanism(x, p, sensitivity, epsilon).")
    xv = _check_x(x)
    p = _check_p(p)
    epsilon = check_epsilon(epsilon)
    delta = _sensitivity(sensitivity, p, dim=xv.size)
    gen = as_generator(rng)
    scale = delta / epsilon
    d = xv.size
    name = {1.0: "l1", 2.0: "l2", np.inf: "linf"}[p]
    if p == 1:
        v = gen.laplace(0.0, scale, size=d)
        law = NoiseLaw("laplace", {"scale": scale})
    elif p == 2:
        z = gen.standard_normal(d)
        v = gen.gamma(d, scale) * z / np.linalg.norm(z)
        law = _knorm_law("l2", d, scale)
    else:
        v = gen.gamma(d + 1, scale) * gen.uniform(-1.0, 1.0, size=d)
        law = _knorm_law("linf", d, scale)
    return _release(
        xv + v.reshape(xv.shape),
        f"lp_mechanism[{name}]",
        law,
        PrivacyGuarantee("epsilon-DP", {"epsilon": epsilon}, _ADJ),
        data_shape=xv.shape,
        metadata={"sensitivity": delta, "norm": name, "p": p if np.isfinite(p) else "inf"},
    )
