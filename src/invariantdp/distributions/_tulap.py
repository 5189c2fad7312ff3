"""The Tulap distribution, canonical noise of (epsilon, delta)-DP.

``Tulap(m, b, q)``: with ``G1, G2`` i.i.d. geometric on {0, 1, ...} with
``P(G = k) = (1 - b) b**k`` and ``U ~ Uniform(-1/2, 1/2)``,
``N = m + G1 - G2 + U`` is *untruncated* Tulap; for ``q > 0`` the law is
truncated to its central ``1 - q`` mass.

Here: the scipy distributions :data:`tulap` (shapes ``b, q``) and
:data:`tulap_privacy` (shapes ``epsilon, delta``, built by
:func:`tulap_from_privacy`), :func:`tulap_params`, and the numpy samplers
for simulation (:func:`draw_tulap`).  Their closed forms (cdf, log-cdf in
log space, density, quantile, support) are in :mod:`._tulap_forms`; the
exact sampler for releases, :func:`~._exact_samplers.draw_tulap_exact`, is with the
other exact samplers in :mod:`._exact_samplers`; the noise family (calibration,
claim check, test view) in :mod:`invariantdp.families._tulap_family`.

References
----------
.. [1] Awan, J. and Slavkovic, A. (2018). "Differentially private uniformly
   most powerful tests for binomial data", NeurIPS 31.  (Definition of Tulap.)
.. [2] Awan, J. and Dong, J. (2022). "Log-concave and multivariate canonical
   noise distributions for differential privacy", NeurIPS 35. (Tulap is the
   unique CND of f_{epsilon,delta}.)
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from .._validation import InvariantDPError, check_delta, check_epsilon, check_real
from ._tulap_forms import (
    MAX_CLOSED_MOMENT,
    _lower_ppf,
    log_b_power,
    tulap_bounds,
    tulap_cdf,
    tulap_entropy,
    tulap_even_moment,
    tulap_logcdf,
    tulap_logpdf,
    tulap_pdf,
    tulap_ppf,
    tulap_privacy_shapes,
)

__all__ = [
    "tulap",
    "tulap_from_privacy",
    "tulap_gen",
    "tulap_params",
    "tulap_privacy",
    "tulap_privacy_gen",
]

try:  # ``_ShapeInfo`` only feeds ``fit``; older scipy versions lack it
    from scipy.stats._distn_infrastructure import _ShapeInfo
except ImportError:  # pragma: no cover
    _ShapeInfo = None


def _log_of_b(b):
    """``log b``, ``-inf`` at ``b = 0`` (the uniform limit)."""
    with np.errstate(divide="ignore"):
        return np.log(b)


#: below this epsilon, b = exp(-epsilon) rounds to 1 in double precision
_EPS_MIN_B = 2.0**-54 * (1.0 + 2.0**-52)


class tulap_gen(stats.rv_continuous):
    r"""A Tulap (truncated-uniform-Laplace) continuous random variable.

    %(before_notes)s

    Parameters
    ----------
    b : float
        Shape parameter of every method, in [0, 1) (``exp(-epsilon)``).
    q : float
        Shape parameter of every method, the truncated mass, in [0, 1).

    Returns
    -------
    scipy.stats.rv_continuous_frozen
        What calling the object returns: ``tulap(b, q, loc=0, scale=1)`` is
        the law frozen at ``b, q`` with median ``loc`` (``Tulap(m, b, q)``
        for ``loc = m``), whose methods above take no shape argument.

    Notes
    -----
    The probability density function for `tulap` is, for ``q = 0``,

    .. math:: f(x; b) = \frac{1-b}{1+b}\, b^{|[x]|},

    where :math:`[x]` is ``x`` rounded to the nearest integer, and for
    ``q > 0`` it is :math:`f / (1-q)` on the central interval holding mass
    ``1 - q`` of the untruncated law.  The cdf for :math:`x \le 0` is

    .. math:: F(x) = \frac{b^{-[x]}}{1+b}\,\big(b + (x - [x] + 1/2)(1-b)\big),

    with :math:`F(x) = 1 - F(-x)` above 0, and
    :math:`F_q(x) = \mathrm{clip}((F(x) - q/2)/(1-q), 0, 1)`.

    `tulap` takes ``b`` in [0, 1) and ``q`` in [0, 1) as shape parameters;
    ``loc`` is the median ``m``.  ``b = 0`` is the limit ``epsilon -> inf``,
    where ``G1 = G2 = 0`` and the untruncated law is uniform on [-1/2, 1/2].
    ``Tulap(0, exp(-epsilon), q(epsilon, delta))`` is the canonical noise
    distribution of :math:`f_{\epsilon,\delta}`; build it with
    :func:`tulap_from_privacy`, which keeps ``epsilon`` itself (``b`` rounds
    to 1 for epsilon below ~1e-16 and underflows to 0 above ~745).

    The mean, variance, skewness, kurtosis, ``moment(n)`` (closed forms up to
    ``n = 12``) and ``entropy`` of the truncated law are exact sums over the
    cells of its support (:func:`~invariantdp.distributions._tulap_forms.tulap_even_moment`,
    :func:`~invariantdp.distributions._tulap_forms.tulap_entropy`), not
    numerical integrals.

    Sampling (a numpy simulation) follows the definition: ``G1 - G2 + U``
    with geometric ``G1, G2`` (drawn as ``floor(E / log(1/b))`` from
    exponentials ``E``) and uniform ``U`` (Awan & Slavkovic 2018, Def. 4.1),
    redrawing those outside the central ``1 - q`` interval when
    ``0 < q <= 1/2``; for ``q > 1/2``, where that acceptance ``1 - q`` can be
    tiny, uniform draws on the support kept with probability ``b**|[z]|``
    (above 1/4).  Releases use the exact sampler of
    :func:`~invariantdp.mechanisms.tulap_mechanism` with ``secure=True``.

    %(after_notes)s

    References
    ----------
    .. [1] Awan, J. and Slavkovic, A. (2018). "Differentially private
       uniformly most powerful tests for binomial data", NeurIPS 31.

    Examples
    --------
    >>> from invariantdp.distributions import tulap, tulap_params
    >>> b, q = tulap_params(1.0)
    >>> float(tulap.cdf(0.0, b, q)), round(float(tulap.pdf(0.0, b, q)), 4)
    (0.5, 0.4621)
    >>> round((1 - b) / (1 + b), 4)
    0.4621
    >>> X = tulap(b, q, loc=3.0)  # frozen: Tulap(3, b, q)
    >>> float(X.median()), round(float(X.cdf(2.5)), 4)
    (3.0, 0.2689)
    """

    def _shape_info(self):
        if _ShapeInfo is None:  # pragma: no cover
            return []
        return [
            _ShapeInfo("b", False, (0, 1), (True, False)),
            _ShapeInfo("q", False, (0, 1), (True, False)),
        ]

    def _shapes(self, b, q):
        """``(log b, q, 1 - q)``: the parametrisation of the closed forms."""
        return _log_of_b(b), q, 1.0 - q

    def _argcheck(self, b, q):
        # b = 0 is the limit epsilon -> inf: G1 = G2 = 0, N uniform on [-1/2, 1/2]
        return (b >= 0) & (b < 1) & (q >= 0) & (q < 1)

    def _get_support(self, *shapes):
        # scipy asks for the support before it masks invalid shapes (nan there)
        with np.errstate(all="ignore"):
            return tulap_bounds(*self._shapes(*shapes))

    def _pdf(self, x, *shapes):
        log_b, _, qc = self._shapes(*shapes)
        return tulap_pdf(x, log_b, qc)

    def _logpdf(self, x, *shapes):
        log_b, _, qc = self._shapes(*shapes)
        with np.errstate(divide="ignore"):
            return tulap_logpdf(x, log_b, qc)

    def _cdf(self, x, *shapes):
        return tulap_cdf(x, *self._shapes(*shapes))

    def _sf(self, x, *shapes):
        return self._cdf(-x, *shapes)

    def _logcdf(self, x, *shapes):
        return tulap_logcdf(x, *self._shapes(*shapes))

    def _logsf(self, x, *shapes):
        return self._logcdf(-x, *shapes)

    def _ppf(self, u, *shapes):
        return tulap_ppf(u, *self._shapes(*shapes))

    def _isf(self, u, *shapes):
        return -self._ppf(u, *shapes)

    def _stats(self, *shapes, moments="mv"):
        # closed forms of the truncated law (tulap_forms.tulap_even_moment): symmetric,
        # so the mean and skewness are 0; no numerical integration
        mu2 = tulap_even_moment(2, *self._shapes(*shapes))
        g2 = None
        if "k" in moments:
            g2 = tulap_even_moment(4, *self._shapes(*shapes)) / mu2**2 - 3.0
        return 0.0, mu2, 0.0, g2

    def _munp(self, n, *shapes):
        if n % 2:
            return np.zeros(np.broadcast(*shapes).shape)[()]
        if n <= MAX_CLOSED_MOMENT:
            return tulap_even_moment(int(n), *self._shapes(*shapes))
        return super()._munp(n, *shapes)

    def _entropy(self, *shapes):
        return tulap_entropy(*self._shapes(*shapes))

    def _rvs(self, b, q, size=None, random_state=None):
        rng = random_state
        shape = np.broadcast_shapes(np.shape(b), np.shape(q), () if size is None else size)
        b_arr = np.asarray(b, dtype=float)
        q_arr = np.asarray(q, dtype=float)
        scalar = (
            b_arr.size == 1
            and q_arr.size == 1
            or (np.all(b_arr == b_arr.flat[0]) and np.all(q_arr == q_arr.flat[0]))
        )
        if scalar:
            return _draw_tulap(rng, float(b_arr.flat[0]), float(q_arr.flat[0]), shape)
        b_full = np.broadcast_to(b_arr, shape).reshape(-1)
        q_full = np.broadcast_to(q_arr, shape).reshape(-1)
        out = np.empty(b_full.size)
        # one vectorised draw per distinct (b, q) pair
        pairs, inverse = np.unique(np.stack([b_full, q_full], axis=1), axis=0, return_inverse=True)
        for j, (bj, qj) in enumerate(pairs):
            idx = np.flatnonzero(inverse.reshape(-1) == j)
            out[idx] = _draw_tulap(rng, bj, qj, (idx.size,))
        return out.reshape(shape)


def _draw_untruncated(rng, log_b, shape) -> np.ndarray:
    """``G1 - G2 + U`` with ``G = floor(E / log(1/b))``, ``E ~ Exp(1)`` (simulation).

    ``floor(E / lambda)`` is geometric with ``P(G >= k) = exp(-lambda k) = b**k``,
    so this is the defining construction of Tulap with two exponential draws
    (numpy's ziggurat) instead of two slower geometric draws.  ``log_b = -inf``
    (``b = 0``) gives ``G1 = G2 = 0``.
    """
    scale = -1.0 / log_b
    g1 = rng.standard_exponential(shape)
    g1 *= scale
    np.floor(g1, out=g1)
    g2 = rng.standard_exponential(shape)
    g2 *= scale
    np.floor(g2, out=g2)
    g1 -= g2
    g1 += rng.random(shape)
    g1 -= 0.5
    return g1


#: hard cap on the rounds of the rejection samplers; every round accepts with
#: probability >= 1/6, so the cap is only reached for broken parameters
_MAX_ROUNDS = 10_000


def _rejection_cap_error(what: str) -> InvariantDPError:
    return InvariantDPError(
        f"the {what} Tulap sampler rejected {_MAX_ROUNDS} proposals in a row (probability "
        "below 1e-1000 for valid shapes): the shapes (b, q) are outside the supported range."
    )


def draw_tulap(rng, log_b: float, q: float, qc: float, shape) -> np.ndarray:
    """Tulap(0, b, q) draws from a numpy generator (simulation only), ``log_b = log b``.

    For ``q <= 1/2``: untruncated draws, redrawing those outside the central
    ``1 - q`` interval (acceptance ``1 - q >= 1/2``).  For ``q > 1/2`` that
    acceptance can be tiny (``1 - q ~ epsilon / (2 delta)``), so the draw is
    instead uniform on the support ``[-c, c]``, kept with probability
    ``b**|[z]|`` (the density ratio to its maximum): the support lies within
    ``|[z]| <= m`` with ``b**m >= q (1 + b) / 2 > 1/4``, so every round keeps
    more than a quarter of the draws.  Rounds are capped at ``_MAX_ROUNDS``.
    """
    if q <= 0.5:
        out = _draw_untruncated(rng, log_b, shape)
        if q > 0:
            lo, hi = (float(v) for v in tulap_bounds(log_b, q, qc))
            flat = out.reshape(-1)
            bad = np.flatnonzero((flat < lo) | (flat > hi))
            for _ in range(_MAX_ROUNDS):
                if not bad.size:
                    break
                flat[bad] = _draw_untruncated(rng, log_b, (bad.size,))
                bad = bad[(flat[bad] < lo) | (flat[bad] > hi)]
            if bad.size:
                raise _rejection_cap_error("rejection")
        return out
    c = float(tulap_bounds(log_b, q, qc)[1])
    out = np.empty(shape)
    flat = out.reshape(-1)
    todo = np.arange(flat.size)
    for _ in range(_MAX_ROUNDS):
        if not todo.size:
            return out
        z = c * (2.0 * rng.random(todo.size) - 1.0)
        keep = rng.random(todo.size) < np.exp(log_b_power(np.abs(np.round(z)), log_b))
        flat[todo[keep]] = z[keep]
        todo = todo[~keep]
    raise _rejection_cap_error("uniform-proposal")


def _draw_tulap(rng, b: float, q: float, shape) -> np.ndarray:
    """Tulap(0, b, q) draws from a numpy generator (simulation only); see :func:`draw_tulap`."""
    return draw_tulap(rng, float(_log_of_b(b)), q, 1.0 - q, shape)


tulap = tulap_gen(name="tulap", shapes="b, q")


class tulap_privacy_gen(tulap_gen):
    r"""Tulap law given by its privacy parameters: shapes ``epsilon, delta``.

    The canonical noise distribution of :math:`f_{\epsilon,\delta}`, the same
    law as ``tulap(exp(-epsilon), q)`` with
    ``q = 2 delta b / (1 - b + 2 delta b)``, but the closed forms receive
    ``log b = -epsilon`` and ``1 - q`` exactly: it stays accurate where
    ``b`` underflows to 0 (epsilon above ~745, the uniform limit) and where
    ``b`` rounds to 1 (epsilon below ~1e-16, scale ~1/epsilon).  Build it
    with :func:`tulap_from_privacy`.

    Draws invert the closed-form quantile on the lower half with a random
    sign; the lower-tail probability is ``exp(-E) / 2`` with ``E``
    exponential, so neither the far tail nor the centre is limited by the
    2**-53 grid of a uniform draw (a simulation sampler; the mechanisms
    sample exactly).

    References
    ----------
    .. [1] Awan, J. and Slavkovic, A. (2018). "Differentially private
       uniformly most powerful tests for binomial data", NeurIPS 31.
    .. [2] Awan, J. and Dong, J. (2022). "Log-concave and multivariate
       canonical noise distributions for differential privacy", NeurIPS 35.

    Examples
    --------
    >>> from invariantdp.distributions import tulap, tulap_from_privacy
    >>> from invariantdp.distributions import tulap_privacy
    >>> x = -2.3
    >>> b, q = 0.5, 0.2  # epsilon = log 2, q = 0.2: delta = q (1 - b) / (2 b (1 - q))
    >>> delta = q * (1 - b) / (2 * b * (1 - q))
    >>> bool(abs(tulap_privacy.cdf(x, 0.6931471805599453, delta) - tulap.cdf(x, b, q)) < 1e-12)
    True
    >>> float(tulap_privacy.cdf(0.25, 800.0, 0.0))  # epsilon > 745: uniform on [-1/2, 1/2]
    0.75
    """

    def _shape_info(self):
        if _ShapeInfo is None:  # pragma: no cover
            return []
        return [
            _ShapeInfo("epsilon", False, (0, np.inf), (False, True)),
            _ShapeInfo("delta", False, (0, 1), (True, False)),
        ]

    def _shapes(self, epsilon, delta):
        return tulap_privacy_shapes(epsilon, delta)

    def _argcheck(self, epsilon, delta):
        # epsilon = inf is the uniform limit b = 0
        return (epsilon > 0) & (delta >= 0) & (delta < 1)

    def _rvs(self, epsilon, delta, size=None, random_state=None):
        return _draw_by_inversion(random_state, *self._shapes(epsilon, delta), size)


def _draw_by_inversion(rng, log_b, q, qc, size) -> np.ndarray:
    """Tulap draws: a random sign times the lower-half quantile.

    For ``q <= 1/2`` the untruncated lower-tail probability is
    ``p = exp(-E) / 2`` (gap to 1/2: ``-expm1(-E) / 2``), ``E ~ Exp(1)``,
    kept when ``p >= q/2``: at least half the draws are kept each round.
    For ``q > 1/2`` (and for the at most ``2**-64``-rare draws still
    rejected after 64 rounds) ``p = q/2 + V (1 - q)/2``, ``V ~ U[0, 1)``,
    whose resolution is ample because then ``p >= 1/4``.
    """
    shape = () if size is None else tuple(np.atleast_1d(size))
    n = int(np.prod(shape, dtype=np.int64))
    log_b, q, qc = (
        np.broadcast_to(np.asarray(a, dtype=float), shape).reshape(n) for a in (log_b, q, qc)
    )
    e = rng.standard_exponential(n)
    with np.errstate(divide="ignore"):
        limit = -np.log(q)  # p >= q/2 iff E <= -log q
    bad = (q <= 0.5) & (e > limit)
    for _ in range(64):
        if not bad.any():
            break
        e[bad] = rng.standard_exponential(int(bad.sum()))
        bad &= e > limit
    v = rng.random(n)
    use_v = (q > 0.5) | bad
    p = np.where(use_v, 0.5 * q + 0.5 * qc * v, 0.5 * np.exp(-e))
    d = np.where(use_v, 0.5 * qc * (1.0 - v), -0.5 * np.expm1(-e))
    x = _lower_ppf(p, d, log_b)
    x = np.where(rng.random(n) < 0.5, x, -x)
    return x.reshape(shape)


tulap_privacy = tulap_privacy_gen(name="tulap_privacy", shapes="epsilon, delta")


def tulap_params(epsilon, delta=0.0) -> tuple[float, float]:
    r"""Shape parameters ``(b, q)`` of the CND of :math:`f_{\epsilon,\delta}`.

    ``b = exp(-epsilon)`` and ``q = 2 delta b / (1 - b + 2 delta b)``,
    evaluated as ``q = 2 delta / (expm1(epsilon) + 2 delta)`` (no 0/0 as
    epsilon -> 0 or inf).  ``b`` is the double nearest ``exp(-epsilon)``:
    above epsilon ~745 it is 0 (``tulap(0, 0)``, the uniform law, whose cdf
    is the CND's to within 1e-300), and below epsilon ~1e-16 it would be 1,
    which is no Tulap law: that range, and a ``q`` that rounds to 1, are
    refused.  :func:`tulap_from_privacy` keeps ``epsilon`` itself and works
    for every epsilon > 0.

    Parameters
    ----------
    epsilon : float
        ``epsilon > 0``.
    delta : float, optional
        ``0 <= delta < 1``.

    Returns
    -------
    (float, float)
        ``(b, q)``, to pass to :func:`tulap` (``tulap(b, q)``).

    Raises
    ------
    InvariantDPError
        If ``b`` or ``q`` rounds to 1 in double precision.

    References
    ----------
    Awan & Slavkovic (2018), Def. 4.1 and Thm 4.3; Cho & Awan, Def. 35.

    Examples
    --------
    >>> from invariantdp.distributions import tulap_params
    >>> b, q = tulap_params(1.0, 0.01)
    >>> round(b, 6), round(q, 6)
    (0.367879, 0.011506)
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    b = math.exp(-epsilon)
    if b == 1.0:
        raise InvariantDPError(
            f"`epsilon` ({epsilon:.6g}) must be >= {_EPS_MIN_B:.3g} for the Tulap shapes (b, q): "
            "b = exp(-epsilon) rounds to 1 below that. tulap_from_privacy(epsilon, delta) and "
            "the tests accept any epsilon > 0."
        )
    _, q, _ = (float(v) for v in tulap_privacy_shapes(epsilon, delta))
    if q == 1.0:
        raise InvariantDPError(
            f"`delta` ({delta:.6g}) is too large for `epsilon` ({epsilon:.6g}) for the Tulap "
            "shapes (b, q): q = 2 delta / (expm1(epsilon) + 2 delta) rounds to 1, so epsilon "
            "must be >= ~1e-16 * delta. tulap_from_privacy(epsilon, delta) and the tests keep "
            "1 - q exactly."
        )
    return b, q


def tulap_from_privacy(epsilon, delta=0.0, loc=0.0):
    r"""Frozen Tulap law that is the canonical noise of :math:`f_{\epsilon,\delta}`.

    Adding it to a statistic with sensitivity 1 gives an
    (epsilon, delta)-DP release that matches :math:`f_{\epsilon,\delta}`
    exactly (Cho & Awan, Definition 35).  The law is parametrised by
    ``epsilon`` and ``delta`` themselves (:class:`tulap_privacy_gen`), so
    it is accurate for every epsilon > 0: as epsilon -> inf it tends to the
    uniform law on [-1/2, 1/2] and for tiny epsilon its scale is ~1/epsilon.

    Parameters
    ----------
    epsilon : float
        ``epsilon > 0``.
    delta : float, optional
        ``0 <= delta < 1``.
    loc : float, optional
        The median ``m``.

    Returns
    -------
    scipy.stats frozen distribution
        Of :class:`tulap_privacy_gen`, with ``args == (epsilon, delta)``.

    References
    ----------
    Awan & Slavkovic (2018); Awan & Dong (2022), uniqueness of the CND.

    Examples
    --------
    >>> from invariantdp.distributions import tulap_from_privacy
    >>> N = tulap_from_privacy(1.0)
    >>> round(float(N.cdf(0.0)), 12)
    0.5
    >>> round(float(tulap_from_privacy(1e-20).cdf(1e20)), 5)  # 1 - exp(-1)/2: scale 1/epsilon
    0.81606
    >>> N.rvs(size=3, random_state=0).shape
    (3,)
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    loc = check_real("loc", loc)
    if not math.isfinite(loc):
        raise InvariantDPError(f"`loc` ({loc}) must be finite.")
    return tulap_privacy(epsilon, delta, loc=loc)
