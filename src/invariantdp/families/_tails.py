"""The view of a noise law that a DP test needs: :class:`NoiseTails`.

The p-values of the DP tests (Awan & Slavkovic 2018; Cho & Awan, Eq. 6) are
expectations ``E F(H - u)`` of the noise cdf ``F`` over a lattice law, so a
test needs of the noise: ``log F`` and ``F`` on a run of integers shifted by
``u`` (:meth:`NoiseTails.logcdf_lattice`, :meth:`NoiseTails.cdf_lattice`),
where ``F`` is 0 or 1 to double precision (:meth:`NoiseTails.cut`), its
quantile, and a description.  A noise family gives this view of its law
(:meth:`NoiseFamily.tails <invariantdp.families.NoiseFamily.tails>`); the
Tulap family's (:class:`~invariantdp.families._tulap_family.TulapTails`)
evaluates its closed forms exactly and fast, any other symmetric law is
viewed through its scipy ``logcdf`` here.  The expectations themselves are
summed by :mod:`invariantdp.inference`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["NoiseTails"]


class NoiseTails:
    """A symmetric continuous noise law ``F`` as a DP test uses it.

    Parameters
    ----------
    law : frozen scipy.stats distribution
        Symmetric about 0, with ``logcdf`` and ``ppf``.
    description : str
        How results describe the noise (``"Tulap(b=0.367879, q=0)"``, ...).
    epsilon, delta : float or None
        Privacy parameters of the noise, when it was given by them (reported
        by the test results only).

    References
    ----------
    Awan & Slavkovic (2018), Thm 4.5; Cho & Awan, Eq. 6 and Lemma 36 (any
    canonical noise distribution ``F`` of a symmetric tradeoff function).

    Examples
    --------
    >>> from scipy import stats
    >>> t = NoiseTails(stats.logistic(), "logistic noise")
    >>> [round(float(v), 6) for v in t.cdf_lattice(np.arange(3), 1.0, 1.0)]  # F(h - 1)
    [0.268941, 0.5, 0.731059]
    """

    __test__ = False  # not a pytest test class

    #: ``F`` is symmetric to the last bit (``F(x) = 1 - F(-x)`` as computed): a two-sided
    #: p-value below 1/2 on one side needs no sum of the other
    exactly_symmetric = False

    def __init__(self, law, description: str, epsilon=None, delta=None):
        self._law = law
        self.description = description
        self.epsilon = epsilon
        self.delta = delta

    @property
    def law(self):
        """The frozen distribution of the noise."""
        return self._law

    @property
    def tail_rate(self) -> float | None:
        """``r`` with ``F(x) <= exp(r (x + 1))`` for every ``x``, or None (no such bound)."""
        return None

    def logcdf(self, x) -> np.ndarray:
        """``log F(x)``."""
        return np.asarray(self.law.logcdf(np.asarray(x, dtype=float)), dtype=float)

    def cdf(self, x) -> np.ndarray:
        """``F(x)``."""
        return np.exp(self.logcdf(x))

    def ppf(self, u) -> np.ndarray:
        """The quantile ``F^{-1}(u)``."""
        return np.asarray(self.law.ppf(u), dtype=float)

    def logcdf_lattice(self, h: np.ndarray, u: float, sign: float) -> np.ndarray:
        """``log F(sign * (h - u))`` for integers ``h``."""
        return self.logcdf(sign * (h - u))

    def cdf_lattice(self, h: np.ndarray, u: float, sign: float) -> np.ndarray:
        """``F(sign * (h - u))`` for integers ``h`` (linear scale)."""
        return np.exp(self.logcdf_lattice(h, u, sign))

    def cut(self, u: float, sign: float):
        """``(a, b, increasing, f_edge)``: ``F(sign (h - u))`` is within ``f_edge`` of 0 or 1
        outside ``[a, b]`` (see ``invariantdp.inference._logconcave_sums``), or None (no
        such bound)."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.description!r})"
