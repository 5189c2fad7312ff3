"""The :class:`NoiseFamily` class and the registry (see :mod:`invariantdp.families`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from .._validation import (
    InvariantDPError,
    doc_error,
    format_value,
)
from ..invariants import MAX_DOCUMENT_CELLS, Invariants
from ._claims import check_timing, neighbour_view

__all__ = [
    "NoiseFamily",
    "SchemaContext",
    "gaussian_type_families",
    "noise_families",
    "noise_family",
    "register_noise_family",
]


@dataclass(frozen=True)
class SchemaContext:
    """What a family's schema may need to know about the document it is read from.

    Attributes
    ----------
    value_size : int or None
        Entries of the release's value (None when a noise law is read alone).
    max_cells : int
        Allocation bound: no array or shape may hold more entries.
    invariants, invariants_doc : Invariants or None, dict or None
        The release's invariants and their document; a noise law naming the
        same ``C`` reuses them instead of building a second copy.
    max_data : int
        Bound on an array the params give in full (its entries are in the
        document, so the document's size backs it): the reader's
        ``max_cells``, which may exceed the bound on declared shapes (e.g.
        the ``n x n`` covariance of ``correlated_gaussian``).

    References
    ----------
    :mod:`invariantdp.release`, "The JSON document": the ``noise`` field
    (each family's params, a registered family's own ``schema``) and the
    ``max_cells`` bound on arrays and shapes.

    Examples
    --------
    >>> fam = noise_family("laplace")
    >>> fam.validate({"scale": 2.0}, "noise", SchemaContext(value_size=3))
    {}
    >>> SchemaContext().max_cells == 2**24
    True
    """

    value_size: int | None = None
    max_cells: int = MAX_DOCUMENT_CELLS
    invariants: Invariants | None = None
    invariants_doc: dict | None = None
    max_data: int = MAX_DOCUMENT_CELLS


@dataclass(frozen=True, eq=False)
class NoiseFamily:
    """One noise family: everything the package knows about a noise law.

    Parameters
    ----------
    name : str
        The family's name in a :class:`~invariantdp.release.NoiseLaw` and in JSON.
    factory : callable or None
        ``factory(params)``: the frozen distribution of the noise (None: the
        family has no distribution object, e.g. ``permutation``).
    schema : callable or None
        ``schema(params, path, context)`` validates a document's params,
        raising :class:`~invariantdp.exceptions.InvariantDPError` that names
        ``path``; it may return a dict of cross-checks (``"dim"``: the value
        has that many entries, ``"keeps_invariants"``, ``"invariants"``: the
        noise's own ``C``).  None: the family cannot be read from JSON.
    integer : bool
        The noise (and so the release) is integer-valued.
    keeps_invariants : bool
        The released value satisfies the invariants exactly.
    likelihood_factory : callable, optional
        ``likelihood(params, congenial)`` -> :class:`NoiseLikelihood`.
    terms : callable, optional
        ``terms(given, invariants)`` -> ``(params, guarantee)``: the
        calibration of the family, its params from privacy parameters and a
        sensitivity (``rho`` and ``sensitivity``, ``epsilon``, ...) or from
        the terms an agency publishes the noise in (``variance``, ...), and
        the guarantee they imply, as ``(definition, params)`` or None
        (:meth:`calibrate`, :meth:`published_params`).
    tails_factory : callable, optional
        ``tails(params, guarantee_params)`` -> :class:`NoiseTails`: the view
        of the law a DP test needs (:meth:`tails`).
    claim : callable, optional
        ``claim(params, definition, guarantee_params, metadata)`` -> bool:
        checks that a recorded guarantee is implied by the noise law, raising
        :class:`~invariantdp.exceptions.InvariantDPError` (see
        :func:`overstated`) when it claims more privacy; returns whether it
        could check it (:meth:`check_claim`).
    exact_sampler : callable, optional
        ``exact_sampler(params, size, rng)``: draws of the noise in exact
        arithmetic (with a :class:`~invariantdp.secure.SecureGenerator`, fit
        for publication), for the families that have one.
    cells : callable, optional
        ``cells(params)`` -> :class:`CellNoise`: the noise of each cell as a
        linear estimator reads it (:meth:`cell_noise`), for the
        Gaussian-type families.
    measurement : callable, optional
        ``measurement(variance, size, rng)``: draws of the noise whose
        variance parameter is ``variance`` (``sigma**2``, an exact rational),
        as a census noisy measurement is made (:meth:`measurement_noise`).
    value_check : callable, optional
        ``value_check(value, metadata, guarantee_params)``: a check of a
        release document's claim that depends on the released value itself
        (a swap's largest stratum); it raises on an overstated claim.

    References
    ----------
    Gong & Meng, Definitions 1.1 and 1.2 (Laplace and double geometric);
    Canonne, Kamath & Steinke (2020) (discrete Gaussian); Awan & Slavkovic
    (2018), Def. 4.1 (Tulap); Gao, Gong & Yu, Theorem 22 (projected laws).

    Examples
    --------
    >>> fam = noise_family("projected_gaussian")
    >>> fam.name, fam.integer, fam.keeps_invariants
    ('projected_gaussian', False, True)
    >>> round(float(noise_family("gaussian").law({"scale": 2.0}).std()), 4)
    2.0
    """

    name: str
    factory: Callable[[Mapping], object] | None
    schema: Callable | None = None
    integer: bool = False
    keeps_invariants: bool = False
    likelihood_factory: Callable | None = field(default=None, repr=False)
    terms: Callable | None = field(default=None, repr=False)
    tails_factory: Callable | None = field(default=None, repr=False)
    claim: Callable | None = field(default=None, repr=False)
    exact_sampler: Callable | None = field(default=None, repr=False)
    cells: Callable | None = field(default=None, repr=False)
    measurement: Callable | None = field(default=None, repr=False)
    value_check: Callable | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        return f"NoiseFamily({self.name!r})"

    @property
    def has_likelihood(self) -> bool:
        return self.likelihood_factory is not None

    @property
    def gaussian_type(self) -> bool:
        """The error of a linear combination of the noise is Gaussian or discrete Gaussian.

        These families give :meth:`cell_noise`, and a zCDP budget ``rho``
        sets their noise (``sigma = sensitivity / sqrt(2 rho)``).
        """
        return self.cells is not None

    def law(self, params: Mapping):
        """The frozen scipy.stats-style distribution of the noise with ``params``."""
        if self.factory is None:
            raise InvariantDPError(
                f"noise family {self.name!r} has no distribution object: its law is described "
                "by its parameters only."
            )
        return self.factory(params)

    def validate(self, params, path: str = "params", context: SchemaContext | None = None) -> dict:
        """Validate the params of a document; return the cross-checks for the release."""
        if self.schema is None:
            raise doc_error(
                path, self.name, "belongs to a family registered without a schema: not readable."
            )
        info = dict(self.schema(params, path, context or SchemaContext()) or {})
        if self.integer:
            info["integer"] = True
        if self.keeps_invariants:
            info["keeps_invariants"] = True
        return info

    def likelihood(self, params: Mapping, *, congenial: bool = False):
        """How a PyMC model observes a release with this noise (:class:`NoiseLikelihood`).

        ``congenial``: the release was conditioned on equality invariants
        (Gong & Meng 2021, Section 2.3); its likelihood is that of the
        unconstrained noise (the normaliser is constant on the fibre), and a
        conditioned Gaussian is the projected one (Gao, Gong & Yu 2022,
        Theorem 22).
        """
        if self.likelihood_factory is None:
            known = (n for n, f in sorted(_FAMILIES.items()) if f.has_likelihood)
            raise InvariantDPError(
                f"noise family {self.name!r} of the release has no PyMC likelihood; known: "
                f"{', '.join(known)}."
            )
        return self.likelihood_factory(params, congenial)

    def tails(self, params: Mapping, guarantee: Mapping | None = None):
        """The view of the noise a DP test needs (:class:`NoiseTails`).

        ``guarantee`` is the release's guarantee params: a family may read
        its law more exactly from them (Tulap: ``log b = -epsilon``).
        """
        if self.tails_factory is None:
            known = (n for n, f in sorted(_FAMILIES.items()) if f.tails_factory is not None)
            raise InvariantDPError(
                f"noise family {self.name!r} gives no test view (a symmetric continuous law "
                f"whose cdf a test sums); families with one: {', '.join(known)}."
            )
        return self.tails_factory(params, {} if guarantee is None else guarantee)

    def cell_noise(self, params: Mapping):
        """The noise of each cell as a linear estimator reads it (:class:`CellNoise`).

        Its actual variance (or full covariance), its lattice step, and
        whether exact discrete intervals apply; refused for a family that is
        not Gaussian-type (:attr:`gaussian_type`).
        """
        if self.cells is None:
            raise InvariantDPError(
                f"noise family {self.name!r} is not Gaussian-type: a linear combination of its "
                f"noise has no Gaussian or discrete Gaussian law; Gaussian-type families: "
                f"{', '.join(gaussian_type_families())}."
            )
        return self.cells(params)

    def measurement_noise(self, variance, size: int, rng) -> np.ndarray:
        """``size`` draws of the noise whose variance parameter ``sigma**2`` is ``variance``.

        ``variance`` is exact (an integer or :class:`~fractions.Fraction`);
        ``rng`` a :class:`~invariantdp.secure.SecureGenerator` (exact draws,
        for publication; refused by a family without an exact sampler) or a
        numpy ``Generator`` (a simulation).  How a census noisy measurement
        is made (:func:`invariantdp.census.measure`).
        """
        if self.measurement is None:
            known = (n for n, f in sorted(_FAMILIES.items()) if f.measurement is not None)
            raise InvariantDPError(
                f"noise family {self.name!r} is not set by a variance parameter sigma**2; "
                f"families that are: {', '.join(known)}."
            )
        return self.measurement(variance, size, rng)

    def check_claim(
        self,
        params: Mapping,
        definition: str,
        guarantee: Mapping,
        metadata: Mapping | None = None,
        neighbours=None,
    ) -> bool:
        """Check that the guarantee ``(definition, guarantee)`` is implied by the noise law.

        ``neighbours`` is the guarantee's structured adjacency
        (:class:`~invariantdp.privacy.QueryAdjacency`, or None for words
        only): the claim reads the sensitivity, norm and coordinates changed
        from it alone, never from ``metadata``.  Raises
        :class:`~invariantdp.exceptions.InvariantDPError` naming both numbers
        when the guarantee claims more privacy than the noise gives, or is
        stated in a definition the noise is not checked for (the table of
        :mod:`invariantdp.families._claims`).  Returns True when the claim
        was checked, False when the family cannot tell (an adjacency in
        words only, or no ``claim`` given at registration): such a release
        is read, its claim unchecked.  An unstated guarantee claims nothing
        and is checked.
        """
        check_timing(definition, guarantee)
        if definition == "unstated":
            return True
        if self.claim is None:
            return False
        view = neighbour_view(metadata, neighbours)
        return bool(self.claim(params, definition, guarantee, view))

    def calibrate(
        self, terms: Mapping | None = None, *, invariants=None, **more
    ) -> tuple[dict, tuple | None]:
        """The family's params from privacy parameters, and the guarantee they imply.

        ``terms`` (a mapping, or keywords) are privacy parameters with the
        query's sensitivity (``epsilon=1, sensitivity=2``; ``rho=0.5,
        sensitivity=1``), or the terms an agency publishes (``variance=4``);
        every entry must be used.  ``invariants`` are those of a projected or
        extended release.  Returns ``(params, guarantee)``, ``guarantee`` a
        ``(definition, params)`` pair or None when the terms state none.
        The params are not validated (:meth:`published_params` does).

        Examples
        --------
        >>> noise_family("discrete_gaussian").calibrate(rho=0.5, sensitivity=2.0)
        ({'sigma': 2.0}, ('zCDP', {'rho': 0.5, 'sensitivity': 2.0}))
        """
        given = {**(terms or {}), **more}
        if self.terms is not None and not (given.keys() & _OWN_ONLY):
            params, guarantee = self.terms(given, invariants)
        else:
            params, guarantee = dict(given), None
            given.clear()
        if given:
            raise InvariantDPError(
                f"{sorted(given)} are not parameters of {self.name} noise as published; see "
                "invariantdp.published."
            )
        return params, guarantee

    def published_params(
        self, given: dict, invariants=None, context: SchemaContext | None = None
    ) -> tuple[dict, tuple | None]:
        """The family's params from the terms an agency publishes, and the implied guarantee.

        ``given`` maps the terms of :mod:`invariantdp.published` (e.g.
        ``{"rho": 0.5, "sensitivity": 1}``) or the family's own params; every
        entry must be used (:meth:`calibrate`).  The params are validated by
        the family's schema, in ``context`` (the release being built: its own
        invariants are not rebuilt from their document).
        """
        params, guarantee = self.calibrate(given, invariants=invariants)
        self.validate(params, "noise params", context)
        return params, guarantee


_FAMILIES: dict[str, NoiseFamily] = {}
#: params that only a family's own parameterisation uses (no conversion when given)
_OWN_ONLY = frozenset({"b", "q", "grid", "norm", "dim", "invariants"})


def register_noise_family(
    name: str,
    factory: Callable[[Mapping], object] | None,
    *,
    schema: Callable | None = None,
    integer: bool = False,
    keeps_invariants: bool = False,
    likelihood: Callable | None = None,
    terms: Callable | None = None,
    tails: Callable | None = None,
    claim: Callable | None = None,
    exact_sampler: Callable | None = None,
    cells: Callable | None = None,
    measurement: Callable | None = None,
    value_check: Callable | None = None,
) -> NoiseFamily:
    """Register a noise family so that releases using it can be read and analysed.

    A registered family works end to end: a release with its noise is built
    by :meth:`Release.from_published <invariantdp.Release.from_published>`
    (or any mechanism that records a :class:`~invariantdp.release.NoiseLaw`
    of it), written to JSON and read back (with a ``schema``), tested by the
    DP tests (with ``tails``) and modelled in PyMC (with ``likelihood``).

    Parameters
    ----------
    name : str
        The family's name (``NoiseLaw(name, params)``).
    factory : callable or None
        ``factory(params) -> frozen distribution``, used by
        :meth:`NoiseLaw.distribution <invariantdp.release.NoiseLaw.distribution>`.
    schema : callable, optional
        ``schema(params, path, context)`` validates the params of a JSON
        document, raising :class:`~invariantdp.exceptions.InvariantDPError`
        that names ``path`` (the ``doc_*`` helpers of
        :mod:`invariantdp._validation` do); ``context`` is a
        :class:`SchemaContext`.  It may return a dict of cross-checks:
        ``"dim"`` (the value must have that many entries),
        ``"keeps_invariants": True``.  Without a schema a family cannot be
        read from JSON.
    integer, keeps_invariants : bool
        Support flags (see :class:`NoiseFamily`).
    likelihood : callable, optional
        ``likelihood(params, congenial) -> NoiseLikelihood`` for the Bayes
        models; its :class:`LikelihoodForm` carries the ``logp`` of a law
        the package does not know.
    terms : callable, optional
        ``terms(given, invariants) -> (params, guarantee)``: the calibration
        (see :meth:`NoiseFamily.calibrate`).
    tails : callable, optional
        ``tails(params, guarantee_params) -> NoiseTails`` for the DP tests
        (``NoiseTails(law, description)`` views any symmetric continuous law).
    claim : callable, optional
        ``claim(params, definition, guarantee_params, metadata) -> bool``:
        the check of a recorded guarantee against the noise law
        (:meth:`NoiseFamily.check_claim`); without it, claims are read
        unchecked.
    exact_sampler : callable, optional
        ``exact_sampler(params, size, rng)``: exact draws of the noise.
    cells : callable, optional
        ``cells(params) -> CellNoise`` for a Gaussian-type family: the noise
        of each cell as :func:`invariantdp.estimate` reads it.
    measurement : callable, optional
        ``measurement(variance, size, rng)``: draws of the noise with the
        exact variance parameter ``variance`` (secure with a
        :class:`~invariantdp.secure.SecureGenerator`), for a family set by
        ``sigma**2``.
    value_check : callable, optional
        ``value_check(value, metadata, guarantee_params)``, raising when a
        release document's claim disagrees with its released value.

    Returns
    -------
    NoiseFamily
        The registered family (it replaces one of the same name).

    References
    ----------
    Gong & Meng, Definitions 1.1 and 1.2; Canonne, Kamath & Steinke (2020);
    Awan & Slavkovic (2018), Def. 4.1; Gao, Gong & Yu, Theorem 22 (the
    built-in families).

    Examples
    --------
    >>> from scipy import stats
    >>> from invariantdp.families import register_noise_family
    >>> fam = register_noise_family("logistic_example", lambda p: stats.logistic(scale=p["s"]))
    >>> float(fam.law({"s": 1.0}).cdf(0.0))
    0.5
    """
    if not isinstance(name, str) or not name:
        raise InvariantDPError(f"`name` ({format_value(name)}) must be a non-empty string.")
    family = NoiseFamily(
        name,
        factory,
        schema,
        integer,
        keeps_invariants,
        likelihood,
        terms,
        tails,
        claim,
        exact_sampler,
        cells,
        measurement,
        value_check,
    )
    _FAMILIES[name] = family
    return family


def noise_family(name: str) -> NoiseFamily:
    """The registered :class:`NoiseFamily` called ``name``; refused if there is none.

    Parameters
    ----------
    name : str
        A family name, e.g. ``"tulap"``, ``"laplace"``, ``"discrete_gaussian"``
        (see :func:`noise_families`).

    Returns
    -------
    NoiseFamily

    Raises
    ------
    InvariantDPError
        If no family of that name is registered.

    References
    ----------
    Gong & Meng, Definitions 1.1 and 1.2; Canonne, Kamath & Steinke (2020);
    Awan & Slavkovic (2018), Def. 4.1; Gao, Gong & Yu, Theorem 22 (the
    built-in families).

    Examples
    --------
    >>> fam = noise_family("discrete_laplace")
    >>> fam.name, fam.integer
    ('discrete_laplace', True)
    """
    try:
        return _FAMILIES[name]
    except (KeyError, TypeError):
        raise InvariantDPError(
            f"noise family {format_value(name)} has no registered distribution; known: "
            f"{', '.join(sorted(_FAMILIES))}."
        ) from None


def gaussian_type_families() -> list[str]:
    """The names of the registered Gaussian-type families (:attr:`NoiseFamily.gaussian_type`).

    In the order they were registered: the package's own first.

    Returns
    -------
    list of str

    References
    ----------
    Canonne, Kamath & Steinke (2020) (the discrete Gaussian); Gao, Gong &
    Yu, Theorem 22 (the projected Gaussian).

    Examples
    --------
    >>> gaussian_type_families()[:3]
    ['gaussian', 'discrete_gaussian', 'grid_gaussian']
    """
    return [n for n, f in _FAMILIES.items() if f.gaussian_type]


def noise_families() -> dict[str, NoiseFamily]:
    """All registered families by name (a copy).

    Returns
    -------
    dict of str to NoiseFamily
        A new dict; changing it does not change the registry (use
        :func:`register_noise_family`).

    References
    ----------
    Gong & Meng, Definitions 1.1 and 1.2; Canonne, Kamath & Steinke (2020);
    Awan & Slavkovic (2018), Def. 4.1; Gao, Gong & Yu, Theorem 22 (the
    built-in families).

    Examples
    --------
    >>> fams = noise_families()
    >>> {"tulap", "laplace", "gaussian", "discrete_gaussian"} <= set(fams)
    True
    """
    return dict(_FAMILIES)
