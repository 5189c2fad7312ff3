r"""What a likelihood model observes of a release with Gaussian-type noise.

A count model (:class:`~invariantdp.inference.PrivatizedPoisson`,
:class:`~invariantdp.inference.PrivatizedLogLinear`) sees a release as

* the released counts :math:`y = s + e` (flattened, C order), of the cells
  themselves (no other linear query);
* the invariants :math:`C s = t` with their exact values :math:`t`, or none;
* the noise :math:`e`, read through the release's noise family
  (:meth:`NoiseFamily.likelihood <invariantdp.families.NoiseFamily.likelihood>`):
  its form (Gaussian or discrete Gaussian), its structure and its parameters.

The noise either *keeps* the invariants (:math:`C e = 0`, so :math:`C y =
t`: the projected and extended Gaussian mechanisms, a Gaussian or discrete
Gaussian release conditioned on the invariants, a correlated Gaussian whose
covariance lives in :math:`\ker C`), or it does not and :math:`t` is
published beside :math:`y` (an independent discrete Gaussian release with an
exact state total, as the 2020 Census publishes).  Either way the models
condition on the invariants themselves: the likelihood of the congenial
release of Gong & Meng (2020, Eq. 2.3) in the first case, the joint law of
:math:`(y, t)` in the second; both are
:math:`\sum_{s:\, C s = t} p_\theta(s)\, p_e(y - s)` up to a constant free of
:math:`\theta`.

This module gathers those facts once (:func:`observe_release`), refusing a
release the models cannot use with a message that says why.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import InvariantDPError
from ..families import DISCRETE_GAUSSIAN_LIKELIHOOD, GAUSSIAN_LIKELIHOOD, NoiseLikelihood
from ..invariants import Invariants
from ..release import NoiseLaw, Release

__all__ = ["ReleaseObservation", "observe_release"]

#: the families whose likelihood form is Gaussian or discrete Gaussian (for the messages)
GAUSSIAN_TYPE = (
    "gaussian, grid_gaussian, discrete_gaussian, projected_gaussian, extended_gaussian or "
    "correlated_gaussian (with or without invariants)"
)


@dataclass(frozen=True, eq=False)
class ReleaseObservation:
    """A release as the count models observe it (see the module notes).

    Attributes
    ----------
    counts : numpy.ndarray
        The released values ``y``, flat (float).
    family : str
        The release's noise family.
    noise : NoiseLikelihood
        The family's likelihood of the release (form, structure, params).
    invariants : Invariants or None
        The invariants, with their exact values.
    keeps_invariants : bool
        The noise keeps the invariants (``C y = t``).
    variance : float or None
        Variance of one unconstrained noise coordinate (independent or
        projected structure; the exact variance of the discrete Gaussian).
    law : NoiseLaw
        The release's noise law (its family gives the distribution).
    """

    counts: np.ndarray
    family: str
    noise: NoiseLikelihood
    invariants: Invariants | None
    keeps_invariants: bool
    variance: float | None
    law: NoiseLaw

    @property
    def n_cells(self) -> int:
        return self.counts.size

    def noise_law(self):
        """The frozen distribution of one noise coordinate (its family's law)."""
        return self.law.distribution()

    @property
    def discrete_gaussian_sigma(self) -> float | None:
        """``sigma`` of integer discrete Gaussian noise, else None."""
        if self.noise.form is DISCRETE_GAUSSIAN_LIKELIHOOD:
            return float(self.noise.params["sigma"])
        return None

    @property
    def sigma(self) -> float:
        """The noise standard deviation of one coordinate (the largest, if they differ)."""
        return float(self.noise.sd)

    def noise_cov(self) -> np.ndarray:
        """The covariance of the noise, ``n x n`` (Gaussian approximation of its law).

        Independent noise: ``v I``; noise that keeps the invariants: ``v Pi_N``
        (the projected Gaussian; for the conditioned discrete Gaussian the
        Gaussian approximation of its law on the lattice ``ker C``);
        correlated noise: its covariance.
        """
        if self.noise.structure == "correlated":
            cov = np.asarray(self.noise.params["cov"], dtype=float)
            return 0.5 * (cov + cov.T)
        if self.keeps_invariants:
            return self.variance * self.invariants.projector()
        return self.variance * np.eye(self.n_cells)


def _is_identity_query(release: Release) -> bool:
    q = release.query
    if q is None:
        return True
    return q.shape[0] == q.shape[1] and np.array_equal(q, np.eye(q.shape[0]))


def _keeps(release: Release, spec: NoiseLikelihood, inv: Invariants) -> bool:
    """Whether the noise keeps the invariants (module notes)."""
    if spec.structure == "projected" or release.metadata.get("congenial", False):
        return True
    if spec.structure == "correlated":
        cov = np.asarray(spec.params["cov"], dtype=float)
        scale = max(float(np.max(np.abs(cov))), 1e-300)
        return bool(np.max(np.abs(cov - inv.project(cov))) <= 1e-8 * scale)
    return bool(release.noise.spec.keeps_invariants)


def observe_release(release, *, what: str = "release") -> ReleaseObservation:
    """What the count models observe of ``release``; refused with the reason if unusable.

    Parameters
    ----------
    release : Release
        A release of counts (the cells themselves) with Gaussian-type noise:
        ``gaussian``, ``grid_gaussian`` (the secure Gaussian mechanism's),
        ``discrete_gaussian``, ``projected_gaussian``,
        ``extended_gaussian`` or ``correlated_gaussian``, with or without
        invariants, unconditioned or conditioned on its equality invariants
        (:func:`~invariantdp.mechanisms.conditional_release`).
    what : str
        The argument's name in messages.

    Returns
    -------
    ReleaseObservation

    Raises
    ------
    TypeError
        If ``release`` is not a :class:`~invariantdp.Release`.
    InvariantDPError
        If its noise is not Gaussian-type, it releases another linear query,
        it was conditioned on inequalities, or its invariants have no values
        (and its noise does not keep them).

    References
    ----------
    Gong & Meng (2020), Eq. 2.3 (the conditional release); Gao, Gong & Yu,
    Theorem 22 (a conditioned Gaussian is the projected one).

    Examples
    --------
    >>> import pandas as pd
    >>> from invariantdp import Release
    >>> from invariantdp.invariants import totals
    >>> counts = pd.Series([1203, 388, 97], index=["Ada", "Bay", "Cole"])
    >>> state_total = totals([0, 0, 0]).with_values([1700])
    >>> rel = Release.from_published(counts, noise="discrete_gaussian", rho=0.5,
    ...                              sensitivity=1.0, invariants=state_total)
    >>> obs = observe_release(rel)
    >>> obs.family, obs.keeps_invariants, obs.discrete_gaussian_sigma
    ('discrete_gaussian', False, 1.0)
    """
    if not isinstance(release, Release):
        raise TypeError(f"`{what}` must be an invariantdp.Release, got {type(release).__name__}.")
    noise = release.noise
    family = noise.spec
    congenial = bool(release.metadata.get("congenial", False))
    spec = family.likelihood(noise.params, congenial=congenial) if family.has_likelihood else None
    if (
        spec is None
        or spec.form not in (GAUSSIAN_LIKELIHOOD, DISCRETE_GAUSSIAN_LIKELIHOOD)
        or spec.structure not in ("independent", "projected", "correlated")
    ):
        raise InvariantDPError(
            f"`{what}` must have Gaussian-type noise ({GAUSSIAN_TYPE}); its noise family is "
            f"{noise.family!r}."
        )
    if release.metadata.get("inequalities") is not None:
        raise InvariantDPError(
            f"`{what}` was conditioned on inequalities: its likelihood's normaliser "
            "P(M(s) in S* | s) depends on the counts, which these models do not compute."
        )
    if not _is_identity_query(release):
        raise InvariantDPError(
            f"`{what}` must release the cells themselves; it releases another linear query "
            f"(`query` of shape {release.query.shape})."
        )
    y = np.asarray(release.value, dtype=float).reshape(-1)
    inv = release.invariants
    keeps = False
    if inv is not None:
        if inv.n_cells != y.size:
            raise InvariantDPError(
                f"`{what}` has {y.size} cells but its invariants act on {inv.n_cells}."
            )
        keeps = _keeps(release, spec, inv)
        if inv.values is None:
            if not keeps:
                raise InvariantDPError(
                    f"`{what}` has invariants without values: the models condition on the "
                    "exact values (give them with `invariants.with_values(...)`)."
                )
            inv = inv.of(y)  # the noise keeps them: C y is their value
    if spec.structure == "projected" and inv is None:
        raise InvariantDPError(f"`{what}`: a projected Gaussian release must carry its invariants.")
    variance = None
    if spec.structure == "projected":
        variance = float(spec.params["sigma"]) ** 2
    elif spec.structure == "independent":
        variance = float(noise.distribution().var())
    return ReleaseObservation(y, noise.family, spec, inv, keeps, variance, noise)
