"""Exact one-dimensional conditionals along lines, vectorised over many lines.

The congenial samplers update a release ``s`` along a kernel direction ``m``
(``A m = 0``): ``s -> s + t m``.  For additive noise with independent
coordinates the conditional of ``t`` is available in closed form:

* Laplace-type noise (Laplace, double geometric), log-density
  ``f(t) = -sum_k w_k |t - c_k|`` -- piecewise linear and concave; sampled
  exactly segment by segment (a truncated exponential / geometric in the
  chosen segment);
* Gaussian-type noise, ``f(t) = -(t - mean)^2 / (2 sd^2)`` -- a truncated
  normal (continuous) or a truncated discrete Gaussian (integers).

Every function takes arrays with a leading batch shape and returns one draw per
line; ``lo``/``hi`` are the (possibly infinite) ends of the feasible interval.
"""

from __future__ import annotations

import numpy as np
from scipy import special

__all__ = ["sample_gauss_line", "sample_laplace_line"]


def _gumbel_argmax(logw: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    g = gen.gumbel(size=logw.shape)
    with np.errstate(invalid="ignore"):
        score = np.where(np.isfinite(logw), logw + g, -np.inf)
    return np.argmax(score, axis=-1)


def sample_laplace_line(c, w, lo, hi, *, integer: bool, gen) -> np.ndarray:
    """Draw ``t`` with density (or mass) ``prop. exp(-sum_k w_k |t - c_k|)`` on ``[lo, hi]``.

    ``c, w`` have shape ``(..., K)`` (``w >= 0``; padding entries have
    ``w = 0``); ``lo, hi`` shape ``(...)``.  With ``integer=True`` the support
    is the integers in ``[lo, hi]`` (``lo``, ``hi`` already integral or
    infinite).  Exact: the segment is chosen by its mass, then ``t`` inside it
    by inverse cdf.
    """
    c = np.asarray(c, dtype=float)
    w = np.asarray(w, dtype=float)
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    order = np.argsort(c, axis=-1)
    c = np.take_along_axis(c, order, axis=-1)
    w = np.take_along_axis(w, order, axis=-1)
    wtot = w.sum(axis=-1, keepdims=True)
    cumw = np.concatenate([np.zeros_like(wtot), np.cumsum(w, axis=-1)], axis=-1)
    slope = wtot - 2.0 * cumw  # (..., K+1): slope on segment j
    cc = np.clip(c, lo[..., None], hi[..., None])
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        if integer:
            q = np.concatenate([lo[..., None], np.ceil(cc), (hi + 1.0)[..., None]], axis=-1)
        else:
            q = np.concatenate([lo[..., None], cc, hi[..., None]], axis=-1)
        left, right = q[..., :-1], q[..., 1:]
        length = right - left  # number of integers (integer) or length
        length = np.where(np.isnan(length), 0.0, np.maximum(length, 0.0))
        # reference end: the upper end when the density rises, else the lower end
        top = right - 1.0 if integer else right
        ref = np.where(slope > 0, top, left)
        ref_ok = np.isfinite(ref) & (length > 0)
        ref = np.where(ref_ok, ref, 0.0)
        fref = -np.sum(w[..., None, :] * np.abs(ref[..., None] - c[..., None, :]), axis=-1)
        a = np.abs(slope)
        flat = a < 1e-12
        if integer:
            # sum_{x=0}^{L-1} exp(-a x) = (1 - e^{-aL}) / (1 - e^{-a})
            logsum = np.where(
                flat,
                np.log(np.where(flat, np.maximum(length, 1.0), 1.0)),
                np.log(-np.expm1(-a * length)) - np.log(-np.expm1(-np.where(flat, 1.0, a))),
            )
        else:
            logsum = np.where(
                flat,
                np.log(np.where(flat & np.isfinite(length), np.maximum(length, 1e-300), 1.0)),
                np.log(-np.expm1(-a * length)) - np.log(np.where(flat, 1.0, a)),
            )
        logmass = np.where(ref_ok, fref + logsum, -np.inf)
    j = _gumbel_argmax(logmass, gen)[..., None]
    a_j = np.take_along_axis(a, j, -1)[..., 0]
    L_j = np.take_along_axis(length, j, -1)[..., 0]
    ref_j = np.take_along_axis(ref, j, -1)[..., 0]
    up_j = np.take_along_axis(slope, j, -1)[..., 0] > 0
    flat_j = a_j < 1e-12
    u = gen.random(size=a_j.shape)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        a_safe = np.where(flat_j, 1.0, a_j)
        if integer:
            x_exp = np.floor(-np.log1p(u * np.expm1(-a_safe * L_j)) / a_safe)
            x = np.where(flat_j, np.floor(u * L_j), x_exp)
            x = np.clip(x, 0.0, L_j - 1.0)
        else:
            x_exp = -np.log1p(u * np.expm1(-a_safe * L_j)) / a_safe
            x = np.where(flat_j, u * L_j, x_exp)
    return np.where(up_j, ref_j - x, ref_j + x)


def _truncnorm_std(a, b, gen):
    """Standard normal truncated to ``[a, b]`` by inverse cdf in log space."""
    flip = a > 0
    a2 = np.where(flip, -b, a)
    b2 = np.where(flip, -a, b)
    la = special.log_ndtr(a2)
    lb = special.log_ndtr(b2)
    u = gen.random(size=np.shape(a))
    with np.errstate(divide="ignore"):
        lu = np.logaddexp(np.log(u) + lb, np.log1p(-u) + la)
    x = special.ndtri_exp(np.minimum(lu, 0.0))
    x = np.clip(x, a2, b2)
    return np.where(flip, -x, x)


def sample_gauss_line(mean, sd, lo, hi, *, integer: bool, gen) -> np.ndarray:
    """Draw ``t`` with density (or mass) ``prop. exp(-(t - mean)^2 / (2 sd^2))`` on ``[lo, hi]``."""
    mean = np.asarray(mean, dtype=float)
    sd = np.asarray(sd, dtype=float)
    lo = np.asarray(lo, dtype=float)
    hi = np.asarray(hi, dtype=float)
    if not integer:
        with np.errstate(invalid="ignore"):
            z = _truncnorm_std((lo - mean) / sd, (hi - mean) / sd, gen)
        return mean + sd * z
    # integers: enumerate a window around the feasible point nearest the mean
    centre = np.clip(np.round(mean), lo, hi)
    half = int(np.ceil(np.max(9.0 * sd))) + 2
    grid = centre[..., None] + np.arange(-half, half + 1)
    ok = (grid >= lo[..., None]) & (grid <= hi[..., None])
    logw = np.where(ok, -0.5 * ((grid - mean[..., None]) / sd[..., None]) ** 2, -np.inf)
    k = _gumbel_argmax(logw, gen)[..., None]
    return np.take_along_axis(grid, k, -1)[..., 0]
