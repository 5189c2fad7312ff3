r"""Likelihoods of releases that hold linear invariants exactly.

A projected-Gaussian release :math:`y = s + \Pi_N e`, :math:`e \sim
N(0, \sigma^2 I_n)`, is a *degenerate* Gaussian: it lives on the affine space
:math:`\{y : C y = C s\}` and has covariance :math:`\sigma^2 \Pi_N`, of rank
:math:`n - \mathrm{rank}(C)`.  Its density with respect to Lebesgue measure
on that space uses the pseudo-inverse and the pseudo-determinant,

.. math:: \log p(y \mid s) = -\tfrac{k}{2}\log(2\pi\sigma^2)
          - \tfrac{1}{2\sigma^2} \|y - s\|^2, \quad k = n - \mathrm{rank}(C),

and is :math:`-\infty` off the space.  By Theorem 22 of Gao, Gong & Yu it is
also the density of the unconstrained Gaussian mechanism *conditioned* on the
invariants, so it is the congenial likelihood of Gong & Meng.

When the confidential counts follow a model, :math:`s \sim P_\theta` with mean
:math:`\mu(\theta)` and covariance :math:`\Sigma(\theta)`, the release has
mean :math:`\mu(\theta)` and covariance :math:`\Sigma(\theta) + \sigma^2
\Pi_N`; its Gaussian log-likelihood
(:func:`projected_gaussian_marginal_loglik`) is exact for Gaussian models and
the usual large-count approximation for count models.

References
----------
J. Gao, R. Gong and F.-Y. Yu, *Subspace differential privacy*, Cor. 14,
Theorem 22, Appendix D.  R. Gong and X.-L. Meng (2020), *Congenial
differential privacy under mandated disclosure*, Eq. 2.3, Example 4.1.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from .._validation import InvariantDPError, check_finite_array, check_positive
from ..invariants import Invariants
from ..release import Release

__all__ = [
    "conditional_laplace_logpdf",
    "degenerate_gaussian_logpdf",
    "projected_gaussian_logpdf",
    "projected_gaussian_marginal_loglik",
    "release_sigma",
]

_LOG2PI = np.log(2.0 * np.pi)


def _flat_pair(y, s, n=None, names=("y", "x")):
    y = check_finite_array(names[0], y)
    s = check_finite_array(names[1], s)
    yf = y.reshape(-1) if y.ndim <= 1 or n is None or y.size == n else y.reshape(-1, n)
    if n is not None and yf.shape[-1] != n:
        raise InvariantDPError(f"`{names[0]}` must have {n} cells, got {yf.shape[-1]}.")
    sf = s.reshape(-1)
    if sf.size != yf.shape[-1]:
        raise InvariantDPError(
            f"`{names[1]}` must have {yf.shape[-1]} cells like `{names[0]}`, got {sf.size}."
        )
    return yf, sf


def _check_invariants(invariants) -> Invariants:
    if not isinstance(invariants, Invariants):
        raise TypeError(
            f"`invariants` must be an invariantdp.Invariants, got {type(invariants).__name__}."
        )
    return invariants


def _row_space_residual(invariants: Invariants, v: np.ndarray) -> np.ndarray:
    """Component of ``v`` (rows) in the row space of ``C``: ``v - Pi_N v``."""
    return v - invariants.project(v)


def degenerate_gaussian_logpdf(y, mean, cov, *, rtol=1e-9) -> np.ndarray:
    r"""Log-density of a possibly singular Gaussian on its support.

    With the eigen-decomposition :math:`\Sigma = U \Lambda U^\top` and the
    :math:`k` eigenvalues above ``rtol * max``, the density with respect to
    Lebesgue measure on :math:`\mu + \mathrm{range}(\Sigma)` is
    :math:`-\tfrac{k}{2}\log 2\pi - \tfrac12 \log \mathrm{pdet}\,\Sigma
    - \tfrac12 (y-\mu)^\top \Sigma^+ (y-\mu)`; it is :math:`-\infty` when
    :math:`y - \mu` leaves the range.

    Parameters
    ----------
    y : array_like, shape (n,) or (m, n)
    mean : array_like, shape (n,)
    cov : array_like, shape (n, n)
        Symmetric positive semi-definite.

    Returns
    -------
    float or numpy.ndarray of shape (m,)

    References
    ----------
    Gao, Gong & Yu, Theorem 22 and Appendix D (the projected Gaussian
    release as a degenerate normal).

    Examples
    --------
    >>> import numpy as np
    >>> P = np.eye(2) - 0.5                 # projector onto x1 + x2 = 0
    >>> round(degenerate_gaussian_logpdf([1.0, -1.0], [0.0, 0.0], P), 6)  # N(0, 1) at sqrt(2)
    -1.918939
    """
    cov = check_finite_array("cov", cov)
    n = cov.shape[0]
    if cov.shape != (n, n):
        raise InvariantDPError(f"`cov` must be a square matrix, got shape {cov.shape}.")
    if not np.allclose(cov, cov.T, rtol=1e-8, atol=1e-12 * max(1.0, np.abs(cov).max())):
        raise InvariantDPError("`cov` must be symmetric.")
    yf, mu = _flat_pair(y, mean, n, ("y", "mean"))
    lam, U = linalg.eigh(cov)
    if lam.min() < -1e-8 * max(lam.max(), 1e-300):
        raise InvariantDPError(f"`cov` must be positive semi-definite (eigenvalue {lam.min():g}).")
    keep = lam > rtol * max(lam.max(), 1e-300)
    k = int(keep.sum())
    Uk, lk = U[:, keep], lam[keep]
    r = yf - mu
    z = r @ Uk
    quad = np.sum(z * z / lk, axis=-1)
    resid = r - z @ Uk.T
    scale = 1e-7 * (1.0 + np.abs(yf).max(axis=-1) + np.abs(mu).max())
    off = np.sqrt(np.sum(resid * resid, axis=-1)) > scale
    out = -0.5 * (k * _LOG2PI + np.sum(np.log(lk)) + quad)
    out = np.where(off, -np.inf, out)
    return out if out.ndim else float(out)


def projected_gaussian_logpdf(y, x, invariants, *, sigma, rtol=1e-9) -> np.ndarray:
    r"""Log-density of a projected-Gaussian release ``y`` given the confidential ``x``.

    :math:`y \sim N(x, \sigma^2 \Pi_N)` on the affine space
    :math:`\{C y = C x\}`: :math:`-\tfrac k2 \log(2\pi\sigma^2) -
    \|y - x\|^2/(2\sigma^2)` with :math:`k = n - \mathrm{rank}(C)`
    (pseudo-determinant :math:`\sigma^{2k}`, pseudo-inverse
    :math:`\Pi_N/\sigma^2`), and :math:`-\infty` off the space.  Equal to the
    conditional density of :math:`N(x, \sigma^2 I)` given the invariants
    (Gao, Gong & Yu, Theorem 22).

    Parameters
    ----------
    y : array_like
        Release(s): shape ``invariants.shape``, ``(n,)`` or ``(m, n)``.
    x : array_like
        Confidential query.
    invariants : Invariants
    sigma : float
        Standard deviation of the noise before projection.

    rtol : float, optional
        Relative tolerance of the test that ``y`` lies on the affine space.

    Returns
    -------
    float or numpy.ndarray
        One log-density per release (a float for a single release).

    References
    ----------
    Gao, Gong & Yu, Theorem 22 (projection equals conditioning) and Cor. 14.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp import Invariants
    >>> inv = Invariants(np.ones((1, 2)))
    >>> round(projected_gaussian_logpdf([51.0, 49.0], [50.0, 50.0], inv, sigma=1.0), 6)
    -1.918939
    >>> projected_gaussian_logpdf([51.0, 50.0], [50.0, 50.0], inv, sigma=1.0)
    -inf
    """
    inv = _check_invariants(invariants)
    sigma = check_positive("sigma", sigma)
    n = inv.n_cells
    yf, xf = _flat_pair(y, x, n)
    r = yf - xf
    resid = _row_space_residual(inv, r.reshape(-1, n)).reshape(r.shape)
    scale = rtol * (1.0 + np.abs(yf).max(axis=-1) + np.abs(xf).max())
    off = np.sqrt(np.sum(resid * resid, axis=-1)) > np.maximum(scale, 1e-7 * sigma)
    k = n - inv.rank
    out = -0.5 * k * (_LOG2PI + 2.0 * np.log(sigma)) - 0.5 * np.sum(r * r, axis=-1) / sigma**2
    out = np.where(off, -np.inf, out)
    return out if out.ndim else float(out)


def conditional_laplace_logpdf(y, x, invariants, *, scale, rtol=1e-9) -> np.ndarray:
    r"""Log-density of the Laplace mechanism conditioned on its invariants (closed form).

    For :math:`y = x + e`, :math:`e_i \sim \mathrm{Lap}(b)` i.i.d., given
    :math:`C y = C x`, when the null space of ``C`` is a line spanned by the
    unit vector :math:`v`: writing :math:`y = x + t v`, the conditional law of
    :math:`t` is :math:`\mathrm{Lap}(b / \|v\|_1)` (density with respect to
    arc length on the line), :math:`-\infty` off the line.  Example 4.1 of
    Gong & Meng: two bins, fixed total, :math:`b = 2/\epsilon`, so
    :math:`y_1 - x_1 \sim \mathrm{Lap}(1/\epsilon)` (Eq. 4.6).  For a null
    space of dimension two or more the normaliser has no simple closed form
    and a ``ValueError`` is raised; use
    :func:`invariantdp.mechanisms.conditional_release` to sample instead.

    Parameters
    ----------
    y : array_like
        Release(s): shape ``invariants.shape``, ``(n,)`` or ``(m, n)``.
    x : array_like
        Confidential query.
    invariants : Invariants
        Their null space must have dimension one.
    scale : float
        Laplace scale ``b`` of the unconditioned noise.
    rtol : float, optional
        Relative tolerance of the test that ``y`` lies on the line.

    Returns
    -------
    float or numpy.ndarray
        One log-density per release (a float for a single release).

    Raises
    ------
    InvariantDPError
        If the null space of ``C`` does not have dimension one.

    References
    ----------
    Gong & Meng (2020), Eq. 2.3, Example 4.1 and Eq. 4.6.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp import Invariants
    >>> inv = Invariants(np.ones((1, 2)))
    >>> lp = conditional_laplace_logpdf([51.0, 49.0], [50.0, 50.0], inv, scale=2.0)
    >>> round(lp, 6)   # t = sqrt(2) under Lap(sqrt(2)): log(1/(2 sqrt 2)) - 1
    -2.039721
    """
    inv = _check_invariants(invariants)
    b = check_positive("scale", scale)
    n = inv.n_cells
    k = n - inv.rank
    if k != 1:
        raise InvariantDPError(
            f"`invariants` leave a null space of dimension {k}; the conditional Laplace "
            "density has a closed form only for dimension 1."
        )
    v = inv.project(np.eye(n))
    v = v[np.argmax(np.sum(v * v, axis=1))]
    v = v / np.linalg.norm(v)
    yf, xf = _flat_pair(y, x, n)
    r = yf - xf
    t = r @ v
    resid = r - t[..., None] * v if r.ndim > 1 else r - t * v
    tol = rtol * (1.0 + np.abs(yf).max(axis=-1) + np.abs(xf).max())
    off = np.sqrt(np.sum(resid * resid, axis=-1)) > np.maximum(tol, 1e-9 * b)
    bt = b / np.abs(v).sum()
    out = -np.log(2.0 * bt) - np.abs(t) / bt
    out = np.where(off, -np.inf, out)
    return out if np.ndim(out) else float(out)


def projected_gaussian_marginal_loglik(y, mean, cov, invariants, *, sigma) -> float:
    r"""Log-likelihood of model parameters from a projected-Gaussian release.

    If the confidential query has mean :math:`\mu(\theta)` and covariance
    :math:`\Sigma(\theta)` and the release is :math:`y = s + \Pi_N e`, then
    :math:`y \sim N(\mu(\theta), \Sigma(\theta) + \sigma^2 \Pi_N)`, with the
    invariants :math:`C y = C s` carried by the ``\Sigma`` part.  Exact when
    :math:`s` is Gaussian; for counts (Poisson, multinomial) it is the
    large-count Gaussian approximation.  A singular total covariance (e.g. a
    model that itself fixes :math:`C s`) is handled with the pseudo-inverse
    and pseudo-determinant (:func:`degenerate_gaussian_logpdf`).

    Parameters
    ----------
    y : array_like
        The release.
    mean : array_like, shape (n,)
        :math:`\mu(\theta)`.
    cov : array_like, shape (n,) or (n, n)
        :math:`\Sigma(\theta)`; a vector means a diagonal (e.g. Poisson
        ``cov = mean``).
    invariants : Invariants
    sigma : float
        Noise standard deviation before projection.

    Returns
    -------
    float
        The Gaussian log-likelihood of ``y``.

    References
    ----------
    Gao, Gong & Yu, Theorem 22 and Appendix D.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp import Invariants
    >>> inv = Invariants(np.ones((1, 3)))
    >>> ll = projected_gaussian_marginal_loglik([9.0, 11.0, 10.0], [10.0] * 3, [10.0] * 3, inv,
    ...                                         sigma=2.0)
    >>> round(ll, 4)   # eigenvalues 10 (total) and 14, 14 (null space)
    -6.6186
    """
    inv = _check_invariants(invariants)
    sigma = check_positive("sigma", sigma)
    n = inv.n_cells
    yf, mu = _flat_pair(y, mean, n, ("y", "mean"))
    cov = check_finite_array("cov", cov)
    if cov.shape == (n,):
        cov = np.diag(cov)
    if cov.shape != (n, n):
        raise InvariantDPError(f"`cov` must have shape ({n},) or ({n}, {n}), got {cov.shape}.")
    total = cov + sigma**2 * inv.projector()
    return degenerate_gaussian_logpdf(yf, mu, 0.5 * (total + total.T))


def release_sigma(release) -> tuple[float, Invariants]:
    """The noise ``sigma`` and invariants of a projected-Gaussian release.

    Accepts releases of :func:`~invariantdp.mechanisms.projected_gaussian`,
    :func:`~invariantdp.mechanisms.semi_dp_gaussian` and Gaussian
    :func:`~invariantdp.mechanisms.conditional_release` (equalities only).
    """
    if not isinstance(release, Release):
        raise TypeError(f"`release` must be an invariantdp.Release, got {type(release).__name__}.")
    if "inequalities" in release.metadata:
        raise InvariantDPError(
            "`release` was conditioned on inequalities; it is not projected Gaussian."
        )
    noise = release.noise
    congenial = bool(release.metadata.get("congenial", False))
    spec = (
        noise.spec.likelihood(noise.params, congenial=congenial)
        if noise.spec.has_likelihood
        else None
    )
    if spec is None or spec.structure != "projected" or release.invariants is None:
        raise InvariantDPError(
            f"`release` must be a projected-Gaussian release with invariants; its noise "
            f"family is {noise.family!r}."
        )
    return float(spec.params["sigma"]), release.invariants
