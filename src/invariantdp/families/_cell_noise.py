r"""The view of a noise law that linear estimators need: :class:`CellNoise`.

A linear estimator of the cells of a release (the GLS estimate of
:func:`invariantdp.estimate`, the census noisy measurements' weights) needs
of the noise on each cell: its actual variance (the discrete Gaussian's is
slightly below ``sigma**2`` at small ``sigma``), or its full covariance when
the cells' noises are correlated; the lattice the noise lives on (integers,
a grid, or none); and whether the error of a linear combination has an exact
law that can be computed, ``step * N_Z(0, s**2)`` summed with weights.  A
noise family gives this view (:meth:`NoiseFamily.cell_noise
<invariantdp.families.NoiseFamily.cell_noise>`) when the error of a linear
combination is Gaussian or such a discrete Gaussian: the Gaussian-type
families.

References
----------
Canonne, Kamath & Steinke (2020), "The discrete Gaussian for differential
privacy", Definition 1 and Fact 18 (its variance is below ``sigma**2``);
Gao, Gong & Yu, Theorem 22 (projection is conditioning for spherical noise:
the variance is that of the noise before the projection).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["CellNoise"]


@dataclass(frozen=True)
class CellNoise:
    """Gaussian-type noise on the cells of a release, as a linear estimator reads it.

    Parameters
    ----------
    variance : float or None
        The actual variance of each cell's noise, the cells independent
        (for noise projected onto the invariants' null space, that of the
        spherical noise before the projection).  None with ``covariance``.
    covariance : numpy.ndarray or None
        The ``n x n`` covariance of correlated noise, else None.
    step : float or None
        The lattice step of the noise (1 for integer noise, the grid of a
        grid mechanism); None for continuous noise, whose linear
        combinations are exactly Gaussian.
    lattice_sigma : float or None
        With ``step``: the noise is ``step * N_Z(0, lattice_sigma**2)``, so
        the exact law of a linear combination of it is computed (exact
        discrete intervals apply).
    rounded : bool
        The data were rounded to the lattice before the noise was added (the
        grid mechanisms): an estimate of ``w' x`` is off by at most
        ``step / 2 * |w|_1`` more.

    References
    ----------
    Canonne, Kamath & Steinke (2020), Fact 18; Gao, Gong & Yu, Theorem 22.

    Examples
    --------
    >>> from invariantdp.families import noise_family
    >>> c = noise_family("discrete_gaussian").cell_noise({"sigma": 1.0})
    >>> round(c.variance, 9), c.step, c.lattice_sigma, c.exact_intervals
    (0.999999789, 1.0, 1.0, True)
    >>> noise_family("gaussian").cell_noise({"scale": 2.0}).variance
    4.0
    """

    variance: float | None
    covariance: np.ndarray | None = field(default=None, repr=False)
    step: float | None = None
    lattice_sigma: float | None = None
    rounded: bool = False

    def __post_init__(self):
        if (self.variance is None) == (self.covariance is None):
            raise TypeError("give exactly one of `variance` and `covariance`.")
        if self.lattice_sigma is not None and self.step is None:
            raise TypeError("`lattice_sigma` needs the lattice `step`.")

    @property
    def continuous(self) -> bool:
        """The noise is continuous Gaussian: every linear combination's error is Gaussian."""
        return self.step is None

    @property
    def exact_intervals(self) -> bool:
        """The error of a linear combination has an exact discrete law (``lattice_sigma``)."""
        return self.lattice_sigma is not None
