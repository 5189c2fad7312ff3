"""Tradeoff functions of f-differential privacy.

Convention (Cho & Awan, Sec. 2.2, footnote 1): ``f(alpha)`` is the smallest
type II error of a test of ``M(X)`` against ``M(X')`` whose type I error is
``1 - alpha``.  In this convention a function is a tradeoff function if and
only if it is convex, continuous, non-decreasing and ``f(alpha) <= alpha``;
group privacy is plain composition, ``f`` applied ``k`` times.

References
----------
.. [1] Cho, J. and Awan, J. "Formal privacy guarantees with invariant
   statistics", Sec. 2.2.
.. [2] Dong, J., Roth, A. and Su, W. (2022). "Gaussian differential privacy",
   JRSS-B 84(1).
"""

from __future__ import annotations

import abc
from fractions import Fraction

import numpy as np
from scipy import optimize, special

from .._deprecation import moved_function
from .._validation import (
    InvariantDPError,
    check_delta,
    check_positive,
    check_positive_int,
    format_value,
)

__all__ = ["TradeoffFunction", "as_tradeoff", "eps_delta", "gaussian_tradeoff", "group"]

#: group privacy without a closed form applies ``f`` this many times at most
MAX_GROUP_SIZE = 100_000


class TradeoffFunction(abc.ABC):
    """A symmetric tradeoff function ``f : [0, 1] -> [0, 1]``.

    Instances are callables that broadcast over ``alpha``.  Subclasses give a
    closed form for ``__call__`` and, where available, for ``inverse``; the
    base class inverts numerically by vectorised bisection.

    Attributes
    ----------
    name : str
        Short description used in ``repr`` and summaries.

    References
    ----------
    Dong, Roth & Su (2022), Definition 2.1 (tradeoff functions); Cho & Awan,
    Sec. 2.2 (f-DP and semi-DP).

    Examples
    --------
    >>> from invariantdp.privacy import eps_delta
    >>> f = eps_delta(1.0)
    >>> isinstance(f, TradeoffFunction), round(float(f(0.5)), 4)
    (True, 0.1839)
    >>> round(float(f.fixed_point()), 4)
    0.2689
    """

    #: short description used in ``repr`` and summaries
    name: str = "f"

    @abc.abstractmethod
    def __call__(self, alpha):
        """``f(alpha)``, broadcasting over ``alpha``."""

    def to_dict(self) -> dict:
        """JSON-able description; ``from_dict`` rebuilds the function."""
        raise TypeError(f"{type(self).__name__} cannot be serialised to JSON.")

    @staticmethod
    def from_dict(d: dict) -> TradeoffFunction:
        builders = {
            "eps_delta": lambda: eps_delta(d["epsilon"], d["delta"]),
            "gaussian": lambda: gaussian_tradeoff(d["mu"]),
            "group": lambda: group(TradeoffFunction.from_dict(d["base"]), d["k"]),
        }
        kind = d.get("kind")
        if kind not in builders:
            raise InvariantDPError(f"unknown tradeoff-function kind {kind!r} in {d!r}.")
        return builders[kind]()

    def inverse(self, y):
        """Generalised inverse ``inf{alpha : f(alpha) >= y}`` (vectorised)."""
        y = np.asarray(y, dtype=float)
        lo = np.zeros_like(y)
        hi = np.ones_like(y)
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            below = self(mid) < y
            lo = np.where(below, mid, lo)
            hi = np.where(below, hi, mid)
            if np.all(hi - lo <= 4e-16):
                break
        return hi

    def fixed_point(self) -> float:
        """The unique ``c`` in [0, 1/2) with ``f(1 - c) = c`` (Lemma 36)."""
        g = lambda c: float(self(1.0 - c)) - c  # noqa: E731
        if g(0.0) <= 0.0:
            return 0.0
        return optimize.brentq(g, 0.0, 0.5, xtol=1e-16, rtol=4 * np.finfo(float).eps)

    def is_nontrivial(self) -> bool:
        alpha = np.linspace(0.0, 1.0, 1001)
        return bool(np.any(self(alpha) < alpha - 1e-12))

    def __repr__(self) -> str:
        return f"TradeoffFunction({self.name})"


class _EpsDelta(TradeoffFunction):
    def __init__(self, epsilon: float, delta: float):
        self.epsilon = epsilon
        self.delta = delta
        self.name = f"f_eps,delta: epsilon={epsilon:g}, delta={delta:g}"

    def __call__(self, alpha):
        a = np.asarray(alpha, dtype=float)
        e, d = self.epsilon, self.delta
        # e^eps overflows to inf above eps ~ 709; inf * 0 at alpha = 1 is masked by the where
        with np.errstate(over="ignore", invalid="ignore"):
            big = np.exp(e)
            line_hi = np.where(a >= 1.0, 1.0 - d, 1.0 - d - big * (1.0 - a))
        out = np.maximum(np.maximum(0.0, line_hi), np.exp(-e) * (a - d))
        return out[()] if out.ndim == 0 else out

    def inverse(self, y):
        y = np.asarray(y, dtype=float)
        e, d = self.epsilon, self.delta
        # invert each linear piece and take the smaller pre-image that reaches y
        with np.errstate(over="ignore", invalid="ignore"):
            via_low = d + np.exp(e) * y
        via_high = 1.0 - (1.0 - d - y) * np.exp(-e)
        out = np.clip(np.minimum(via_low, via_high), 0.0, 1.0)
        out = np.where(y <= 0.0, 0.0, out)
        return out[()] if out.ndim == 0 else out

    def fixed_point(self) -> float:
        """``c = (1 - delta) / (1 + e^epsilon)``: both linear pieces cross ``1 - c`` there."""
        return float((1.0 - self.delta) * special.expit(-self.epsilon))

    def is_nontrivial(self) -> bool:
        # epsilon > 0 always (the constructor checks it): f(alpha) < alpha inside (0, 1),
        # even where the gap is below any tolerance (epsilon ~ 1e-300)
        return True

    def to_dict(self) -> dict:
        return {"kind": "eps_delta", "epsilon": self.epsilon, "delta": self.delta}

    def __repr__(self) -> str:
        return f"eps_delta(epsilon={self.epsilon!r}, delta={self.delta!r})"


class _Gaussian(TradeoffFunction):
    def __init__(self, mu: float):
        self.mu = mu
        self.name = f"G_mu: mu={mu:g}"

    def __call__(self, alpha):
        a = np.asarray(alpha, dtype=float)
        out = special.ndtr(special.ndtri(a) - self.mu)
        return out[()] if out.ndim == 0 else out

    def inverse(self, y):
        y = np.asarray(y, dtype=float)
        out = special.ndtr(special.ndtri(y) + self.mu)
        return out[()] if out.ndim == 0 else out

    def fixed_point(self) -> float:
        """``Phi(-mu/2)`` (Dong, Roth & Su 2022): exact also where bisection cannot resolve it."""
        return float(special.ndtr(-0.5 * self.mu))

    def is_nontrivial(self) -> bool:
        return True  # mu > 0

    def to_dict(self) -> dict:
        return {"kind": "gaussian", "mu": self.mu}

    def __repr__(self) -> str:
        return f"gaussian_tradeoff(mu={self.mu!r})"


class _Group(TradeoffFunction):
    def __init__(self, base: TradeoffFunction, k: int):
        self.base = base
        self.k = k
        self.name = f"{base.name}, composed {k} times"

    def __call__(self, alpha):
        return self._iterate(self.base, alpha)

    def inverse(self, y):
        return self._iterate(self.base.inverse, y)

    def _iterate(self, g, x):
        out = np.asarray(x, dtype=float)
        for _ in range(self.k):
            nxt = np.asarray(g(out), dtype=float)
            # a fixed point (0 for f, 1 for its inverse) stays put: stop early
            if np.array_equal(nxt, out):
                break
            out = nxt
        return out[()] if out.ndim == 0 else out

    def to_dict(self) -> dict:
        return {"kind": "group", "base": self.base.to_dict(), "k": self.k}

    def __repr__(self) -> str:
        return f"group({self.base!r}, k={self.k})"


class _Callable(TradeoffFunction):
    def __init__(self, func):
        self.func = func
        self.name = getattr(func, "__name__", "f")

    def __call__(self, alpha):
        out = np.asarray(self.func(np.asarray(alpha, dtype=float)), dtype=float)
        return out[()] if out.ndim == 0 else out


def as_tradeoff(f) -> TradeoffFunction:
    """Wrap a plain callable ``f(alpha)`` as a :class:`TradeoffFunction`.

    Parameters
    ----------
    f : TradeoffFunction or callable
        A tradeoff function (returned unchanged) or a callable mapping
        ``alpha`` in [0, 1] to ``f(alpha)``; it is not checked to be a valid
        (convex, continuous, non-increasing) tradeoff function.

    Returns
    -------
    TradeoffFunction

    Raises
    ------
    TypeError
        If `f` is not callable.

    References
    ----------
    Dong, Roth & Su (2022), Definition 2.1; Cho & Awan, Sec. 2.2.

    Examples
    --------
    >>> f = as_tradeoff(lambda a: 1.0 - a)
    >>> isinstance(f, TradeoffFunction), float(f(0.25))
    (True, 0.75)
    """
    if isinstance(f, TradeoffFunction):
        return f
    if not callable(f):
        raise TypeError(f"`f` must be a tradeoff function or a callable, got {type(f).__name__}.")
    return _Callable(f)


def eps_delta(epsilon, delta=0.0) -> TradeoffFunction:
    r"""Tradeoff function of (epsilon, delta)-DP.

    .. math:: f_{\epsilon,\delta}(\alpha) = \max\{0,\ 1-\delta-e^{\epsilon}+e^{\epsilon}\alpha,
              \ e^{-\epsilon}(\alpha-\delta)\}

    Parameters
    ----------
    epsilon : float
        Privacy-loss parameter, ``epsilon > 0``.
    delta : float, optional
        ``0 <= delta < 1``.

    Returns
    -------
    TradeoffFunction

    References
    ----------
    Cho & Awan, Sec. 2.2 (definition of :math:`f_{\epsilon,\delta}`).

    Examples
    --------
    >>> from invariantdp.privacy._tradeoff import eps_delta
    >>> f = eps_delta(1.0)
    >>> round(float(f(0.5)), 6)
    0.18394
    """
    return _EpsDelta(check_positive("epsilon", epsilon), check_delta(delta))


def gaussian_tradeoff(mu) -> TradeoffFunction:
    r"""Tradeoff function of mu-Gaussian DP, :math:`G_\mu = T(N(0,1), N(\mu,1))`.

    In the paper's convention :math:`G_\mu(\alpha) = \Phi(\Phi^{-1}(\alpha) - \mu)`.
    Formerly ``gaussian`` (deprecated: the short name of a law denotes the
    law, its tradeoff function is ``<law>_tradeoff``).

    Parameters
    ----------
    mu : float
        ``mu > 0``.

    Returns
    -------
    TradeoffFunction

    References
    ----------
    Dong, Roth & Su (2022), Definition 2.4; Cho & Awan, Sec. 2.2.

    Examples
    --------
    >>> from invariantdp.privacy import gaussian_tradeoff
    >>> round(float(gaussian_tradeoff(1.0)(0.975)), 4)
    0.8315
    """
    return _Gaussian(check_positive("mu", mu))


#: deprecated alias of :func:`gaussian_tradeoff` (not in ``__all__``)
gaussian = moved_function(gaussian_tradeoff, "invariantdp.privacy.gaussian")


def group(f, k) -> TradeoffFunction:
    """Group privacy: ``f`` composed with itself ``k`` times (Cho & Awan, Sec. 2.2).

    A mechanism that is f-DP for neighbours at distance 1 is ``f∘...∘f``-DP
    (``k`` factors) for data at distance ``k``.

    Parameters
    ----------
    f : TradeoffFunction or callable
        The tradeoff function for neighbours at distance 1 (see
        :func:`as_tradeoff`).
    k : int
        Group size (distance), ``k >= 1``.

    Returns
    -------
    TradeoffFunction

    References
    ----------
    Dong, Roth & Su (2022), Theorem 2.14; Cho & Awan, Sec. 2.2.

    Examples
    --------
    >>> from invariantdp.privacy._tradeoff import eps_delta, group
    >>> g = group(eps_delta(0.5), 3)
    >>> bool(abs(g(0.7) - eps_delta(1.5)(0.7)) < 1e-12)
    True

    Gaussian and pure-DP tradeoff functions have closed forms for any ``k``
    (``G_{k mu}``, ``f_{k epsilon, 0}``; an error if ``k mu`` or ``k epsilon``
    exceeds the largest double); any other ``f`` is applied ``k`` times, so
    ``k`` must then be at most ``MAX_GROUP_SIZE`` (100000).
    """
    f = as_tradeoff(f)
    k = check_positive_int("k", k)
    if k == 1:
        return f
    if isinstance(f, _Gaussian):
        return _Gaussian(_group_parameter(k, f.mu, "mu"))
    if isinstance(f, _EpsDelta) and f.delta == 0.0:
        return _EpsDelta(_group_parameter(k, f.epsilon, "epsilon"), 0.0)
    if k > MAX_GROUP_SIZE:
        raise InvariantDPError(
            f"`k` ({format_value(k)}) must be <= {MAX_GROUP_SIZE} for {f!r}: without a closed "
            "form the group tradeoff function applies f k times. gaussian_tradeoff(mu) and "
            "eps_delta(epsilon) (delta = 0) have closed forms for any k."
        )
    return _Group(f, k)


def _group_parameter(k: int, value: float, name: str) -> float:
    """``k * value`` correctly rounded for an integer ``k`` of any size, or an error."""
    try:
        out = float(k * Fraction(value))
    except OverflowError:
        out = np.inf
    if not np.isfinite(out):
        raise InvariantDPError(
            f"group privacy for `k` ({format_value(k)}): k * {name} exceeds the largest double "
            f"({np.finfo(float).max:.6g})."
        )
    return out
