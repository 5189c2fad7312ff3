r"""Likelihood of the projected Gaussian mechanism as a PyMC distribution.

:class:`ProjectedGaussianLikelihood` (``ProjectedGaussian`` in 0.1.0,
still bound here): the degenerate multivariate normal ``mu + Pi_N e`` on the affine space
``mu + ker C`` (Gao, Gong & Yu 2022, Cor. 14; by their Theorem 22 also the
conditioned Gaussian mechanism), with its log density in null-space
coordinates; and :func:`_row_basis`, the orthonormal basis of the row space
of ``C`` that the projected Laplace model of :mod:`._model_builders` integrates over.
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt

from ..._linalg import row_space_basis
from ..._validation import InvariantDPError, check_positive
from ...families import PROJECTED_GAUSSIAN_LIKELIHOOD
from ...invariants import Invariants
from ._scalar import _LOG_2PI, _generator, _Likelihood

__all__ = ["ProjectedGaussianLikelihood"]


class ProjectedGaussianLikelihood(_Likelihood):
    r"""Projected Gaussian mechanism likelihood: ``y = mu + Pi_N e``, ``e ~ N(0, sigma^2 I_n)``.

    A degenerate multivariate normal on the affine space ``mu + N``,
    ``N = ker C``.  Its log density with respect to Lebesgue measure on that
    space is evaluated in null-space coordinates ``z = Q_N^T (y - mu)``:

    .. math:: \log p(y \mid \mu) = -\frac{d}{2}\log(2\pi\sigma^2)
              - \frac{\|z\|^2}{2\sigma^2}, \qquad d = n - \operatorname{rank} C,

    and ``-inf`` when ``y - mu`` leaves ``N`` (the tolerance of
    :func:`~invariantdp.inference.projected_gaussian_logpdf`).  By Theorem 22 of Gao,
    Gong & Yu (2022) this is also the law of the unconstrained Gaussian
    mechanism conditioned on the invariants, so the same likelihood serves a
    congenial (conditioned) Gaussian release.

    Parameters
    ----------
    name : str
        Name of the variable in the model (not given to :meth:`dist`).
    mu : tensor_like, shape (n,)
        The latent confidential vector (flattened in C order).
    sigma : float
        Standard deviation of the unprojected noise.
    invariants : Invariants
        The invariants ``C`` (only the matrix is used).
    **kwargs
        Passed to :class:`pymc.CustomDist` (``observed=``, ``dims=``).

    References
    ----------
    Gao, Gong & Yu (2022), "Subspace differential privacy", Cor. 11 and 14,
    Theorem 22.

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> from invariantdp.invariants import totals
    >>> from invariantdp.inference.bayes import ProjectedGaussianLikelihood
    >>> inv = totals([0, 0, 1, 1])
    >>> d = ProjectedGaussianLikelihood.dist(np.zeros(4), sigma=1.0, invariants=inv)
    >>> round(float(pm.logp(d, np.array([1.0, -1.0, 0.5, -0.5])).eval()), 6)
    -3.087877
    """

    form = PROJECTED_GAUSSIAN_LIKELIHOOD
    _noise_keywords = ("sigma", "invariants")

    @staticmethod
    def _params(*, sigma, invariants):
        sigma = check_positive("sigma", sigma)
        if not isinstance(invariants, Invariants):
            raise TypeError(f"`invariants` must be an Invariants, got {type(invariants).__name__}.")
        return sigma, invariants

    @staticmethod
    def _custom(sigma, invariants):
        n, d = invariants.n_cells, invariants.n_cells - invariants.rank
        if d == 0:
            raise InvariantDPError(
                f"`invariants` have rank {invariants.rank} = n: the release carries no noise."
            )
        QN = np.ascontiguousarray(invariants.null_space_basis())  # (n, d)
        QR = _row_basis(invariants)  # (rank, n)
        const = float(-0.5 * d * (_LOG_2PI + 2.0 * np.log(sigma)))

        def logp(value, mu, **_):
            v = value - mu
            z = pt.dot(v, QN)
            out = const - 0.5 * pt.sum(z**2, axis=-1) / sigma**2
            if QR.shape[0]:
                # Squared distance to the space against the squared tolerance, never
                # sqrt(sum(r**2)): with one invariant the sum has one term and PyTensor's
                # `local_sqrt_sqr` rewrites sqrt(r**2) to switch(r >= 0, r, nan), which
                # put every point with a negative rounding residual off the space.
                off2 = pt.sum(pt.dot(v, QR.T) ** 2, axis=-1)
                tol = 1e-9 * (1.0 + pt.max(pt.abs(value), axis=-1) + pt.max(pt.abs(mu), axis=-1))
                tol = pt.maximum(tol, 1e-7 * sigma)
                out = pt.switch(off2 <= tol**2, out, -np.inf)
            return out

        def random(mu, rng=None, size=None):
            mu = np.asarray(mu, dtype=float)
            shape = mu.shape if size is None else tuple(np.atleast_1d(size)) + (n,)
            e = sigma * _generator(rng).standard_normal(shape)
            return mu + e @ QN @ QN.T

        return {
            "logp": logp,
            "random": random,
            "dtype": "floatX",
            "signature": "(n)->(n)",
        }


def _row_basis(invariants: Invariants) -> np.ndarray:
    """Orthonormal basis (as rows) of the row space of ``C``, the complement of ker C.

    The canonical basis of the row space (Gram-Schmidt of the reduced row
    echelon form of ``C``), the same on every BLAS build: the projected
    Laplace model samples its row-space noise in these coordinates, so a
    rotated basis would change the draws of a seed.
    """
    if invariants.rank == 0:
        return np.zeros((0, invariants.n_cells))
    return np.ascontiguousarray(row_space_basis(invariants.dense_matrix()))


# the name of 0.1.0, kept (without a warning) for the modules of this package
ProjectedGaussian = ProjectedGaussianLikelihood
