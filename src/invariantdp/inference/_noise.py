"""The noise law a DP test assumes: a CND given by privacy parameters or directly."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import InvariantDPError, check_delta, check_epsilon
from ..distributions import canonical_noise, tulap, tulap_params
from ..privacy.tradeoff import TradeoffFunction

__all__ = ["TestNoise", "resolve_noise"]


@dataclass(frozen=True)
class TestNoise:
    """A symmetric continuous noise law ``F`` with fast ``logcdf``.

    ``b`` and ``q`` are set for Tulap noise (the CND of f_{eps,delta}); other
    laws go through their own ``logcdf``.
    """

    _dist: object
    description: str
    epsilon: float | None = None
    delta: float | None = None
    b: float | None = None
    q: float | None = None

    @property
    def dist(self):
        """The frozen distribution (built on first use: freezing costs ~1 ms)."""
        if self._dist is None:
            object.__setattr__(self, "_dist", tulap(self.b, self.q))
        return self._dist

    def logcdf(self, x):
        x = np.asarray(x, dtype=float)
        if self.b is not None:
            return tulap._logcdf(x, self.b, self.q) if self.q > 0 else _tulap_logcdf0(x, self.b)
        return np.asarray(self.dist.logcdf(x), dtype=float)

    def logcdf_lattice(self, h: np.ndarray, u: float, sign: float) -> np.ndarray:
        """``log F(sign * (h - u))`` for consecutive integers ``h``.

        For Tulap the fractional part of ``h - u`` is the same for every
        ``h``, so the log cdf is linear in ``h`` on the lower tail and one
        ``log1p(-exp(.))`` on the upper: no rounding or log per point.
        """
        if self.b is None or h.size == 0:
            return self.logcdf(sign * (h - u))
        b, q = self.b, self.q
        d0 = sign * (float(h[0]) - u)
        k0 = np.round(d0)
        frac = d0 - k0
        k = k0 + sign * (h - h[0]).astype(float)
        log_b, log1p_b = np.log(b), np.log1p(b)
        c_left = np.log(b + (frac + 0.5) * (1.0 - b)) - log1p_b
        c_right = np.log(b + (0.5 - frac) * (1.0 - b)) - log1p_b
        lower = (k < 0) | ((k == 0) & (frac <= 0))
        with np.errstate(divide="ignore"):
            out = np.where(
                lower,
                -k * log_b + c_left,
                np.log1p(-np.exp(np.minimum(k * log_b + c_right, 0.0))),
            )
        if q > 0:
            with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
                ratio = (q / 2.0) * np.exp(-out)
                out = out + np.log1p(-np.minimum(ratio, 1.0)) - np.log1p(-q)
        return out

    def cdf(self, x):
        return np.exp(self.logcdf(x))

    def ppf(self, u):
        if self.b is not None:
            from ..distributions.tulap import _ppf0

            return _ppf0(self.q / 2.0 + np.asarray(u, dtype=float) * (1.0 - self.q), self.b)
        return np.asarray(self.dist.ppf(u), dtype=float)


def _tulap_logcdf0(x, b):
    from ..distributions.tulap import _logcdf0

    return _logcdf0(x, b)


def tulap_noise(b: float, q: float, epsilon=None, delta=None) -> TestNoise:
    desc = f"Tulap(b={b:.6g}, q={q:.6g})"
    return TestNoise(None, desc, epsilon, delta, float(b), float(q))


def resolve_noise(epsilon, delta, noise) -> TestNoise:
    """Turn ``epsilon``/``delta`` or an explicit ``noise`` into a :class:`TestNoise`.

    ``noise`` may be a frozen Tulap (``tulap(b, q)``), any frozen scipy
    continuous distribution symmetric about 0 (used as the CND), or a
    :class:`~invariantdp.privacy.TradeoffFunction` whose CND is built by
    Lemma 36.
    """
    if noise is None:
        if epsilon is None:
            raise InvariantDPError("give `epsilon` (and `delta`), a `noise` law, or a Release.")
        epsilon, delta = check_epsilon(epsilon), check_delta(delta)
        b, q = tulap_params(epsilon, delta)
        return tulap_noise(b, q, epsilon, delta)
    if epsilon is not None:
        raise InvariantDPError("give either `epsilon`/`delta` or `noise`, not both.")
    if isinstance(noise, TestNoise):
        return noise
    if isinstance(noise, TradeoffFunction):
        dist = canonical_noise(noise)
        return TestNoise(dist, f"CND of {noise!r}")
    dist_obj = getattr(noise, "dist", None)
    if dist_obj is not None and getattr(dist_obj, "name", "") == "tulap":
        b, q = (float(v) for v in noise.args)
        if noise.kwds.get("loc", 0.0) != 0.0 or noise.kwds.get("scale", 1.0) != 1.0:
            raise InvariantDPError(
                f"`noise` must be a Tulap with loc=0 and scale=1 (the statistic's sensitivity "
                f"is 1), got {noise.kwds}."
            )
        return tulap_noise(b, q)
    if not (hasattr(noise, "logcdf") and hasattr(noise, "ppf")):
        raise TypeError(
            "`noise` must be a frozen scipy.stats distribution or a TradeoffFunction, "
            f"got {type(noise).__name__}."
        )
    med = float(noise.ppf(0.5))
    if abs(med) > 1e-8:
        raise InvariantDPError(f"`noise` must be symmetric about 0, but its median is {med:g}.")
    return TestNoise(noise, f"{getattr(getattr(noise, 'dist', None), 'name', 'custom')} noise")
