"""What every mechanism shares: its Release constructor and the record of its randomness.

A release drawn from a ``numpy.random.Generator`` (seeded or not) is a
*simulation*: PCG64 is predictable from its output, a user seed makes the
noise reproducible (two releases of neighbouring data with the same seed
differ by exactly the change in the data), and the floating-point samplers
leave value-dependent gaps in the output (Mironov 2012).  Only the
``secure=True`` path, exact integer sampling from :mod:`secrets`, makes a
release fit for publication.  Every mechanism records which of the two it
used in ``Release.metadata["randomness"]``; :attr:`Release.simulation` reads
it back and :meth:`Release.summary` prints it.

No release is a simulation without being asked to be one: every mechanism
resolves its ``secure`` argument by one rule, :func:`resolve_secure`.  The
default ``secure=None`` takes the secure path where the mechanism has one
and ``rng`` is not given (a seed or a numpy generator asks for a
simulation); a mechanism with no exact sampler makes a simulation, and
warns (:class:`~invariantdp.exceptions.SimulationWarning`) when neither
``rng`` nor ``secure=False`` said so.

Every mechanism builds its :class:`~invariantdp.Release` here, through
:func:`make_release` (which records the query and the randomness) and
:func:`guarantee` (the privacy guarantee, by default for the adjacency of an
additive mechanism calibrated to the sensitivity of its query).  The
argument checks they share (:func:`check_data`, :func:`resolve_sensitivity`,
:func:`gaussian_calibration`, :func:`check_float_scale`) are here too.
"""

from __future__ import annotations

import warnings
from dataclasses import fields

import numpy as np

from .._deprecation import deprecated_property
from .._label_text import value_name_of
from .._validation import check_delta, check_epsilon, check_finite_array, check_positive
from ..exceptions import InvariantDPError, SimulationWarning
from ..labels import labels_of, labels_to_doc
from ..privacy import eps_delta_to_gdp
from ..release import PrivacyGuarantee, Release
from ..secure import SecureGenerator
from ._side_channels import timed_guarantee_params

__all__ = [
    "MAX_FLOAT_SCALE",
    "QUERY_ADJACENCY",
    "SECURE",
    "SIMULATION",
    "check_data",
    "check_float_scale",
    "gaussian_calibration",
    "guarantee",
    "make_release",
    "plain_release",
    "randomness_note",
    "refuse_secure",
    "release_part",
    "resolve_secure",
    "resolve_sensitivity",
    "warn_unasked_simulation",
]

SECURE = "secure"
SIMULATION = "simulation"

#: the adjacency of an additive mechanism calibrated to the sensitivity of its query
QUERY_ADJACENCY = "data sets whose query values differ by a vector of the stated sensitivity"

#: largest noise scale of the floating-point samplers: beyond it x + noise overflows
MAX_FLOAT_SCALE = 1e300


def randomness_note(secure: bool) -> dict:
    """The ``metadata`` entries that record the source of a release's noise."""
    if secure:
        return {
            "randomness": SECURE,
            "sampler": "exact integer sampling from secrets (invariantdp.secure)",
        }
    return {
        "randomness": SIMULATION,
        "sampler": "numpy.random.Generator: a simulation, not for publication",
    }


def refuse_secure(mechanism: str, secure, *, alternatives: str) -> None:
    """Raise if ``secure=True`` is asked of a mechanism with no exact sampler.

    A floating-point mechanism cannot be made exact, so a production release
    through it is refused rather than produced with noise that may leak.
    """
    if not isinstance(secure, bool):
        raise TypeError(f"`secure` must be True or False, got {type(secure).__name__}.")
    if secure:
        raise InvariantDPError(
            f"`secure=True`: {mechanism} has no exact sampler (its floating-point noise "
            f"is attackable, Mironov 2012), so it cannot make a release for publication; "
            f"use {alternatives}, or `secure=False` for a simulation."
        )


def resolve_secure(
    secure, rng, mechanism: str, *, exact: bool = True, alternatives: str = ""
) -> bool:
    """The source of a release's noise: True for the secure path, False for a simulation.

    The one rule of every mechanism (``secure=None`` is the default):

    ==============  ========================================  ===========================
    ``secure``      mechanism with an exact sampler           mechanism without one
                    (``exact=True``)                          (``exact=False``)
    ==============  ========================================  ===========================
    ``None``        secure, unless ``rng`` is a seed or a     simulation; a
                    numpy generator (then a simulation)       :class:`SimulationWarning`
                                                              if ``rng`` is None
                                                              (:func:`warn_unasked_simulation`)
    ``True``        secure (``rng`` must be None or a         refused (:func:`refuse_secure`,
                    :class:`~invariantdp.secure.SecureGenerator`)  naming ``alternatives``)
    ``False``       simulation, as asked                      simulation, as asked
    ==============  ========================================  ===========================

    ``exact=False`` also covers a call for which an exact mechanism has no
    secure path (a Dask frame or a ``seed_policy`` for the swap).  The
    warning is the only trace of a simulation nobody asked for: a seed (or
    ``secure=False``) says a simulation is intended, and a release to
    publish needs the secure path anyway.  It is given once the release is
    made (:func:`warn_unasked_simulation`), so that a call refused for bad
    arguments raises its error alone.

    Parameters
    ----------
    secure : None or bool
    rng : None, int, SeedSequence, numpy.random.Generator or SecureGenerator
    mechanism : str
        The mechanism's name, for the messages.
    exact : bool
        Whether the secure path exists for this call.
    alternatives : str
        With ``exact=False``: what to use for a release to publish, named when
        ``secure=True`` is refused.

    Returns
    -------
    bool

    Raises
    ------
    TypeError
        If ``secure`` is not None, True or False.
    InvariantDPError
        For ``secure=True`` without an exact sampler.

    References
    ----------
    Mironov (2012), ACM CCS (why a numpy release is never for publication).

    Examples
    --------
    >>> resolve_secure(None, None, "tulap_mechanism"), resolve_secure(None, 7, "tulap_mechanism")
    (True, False)
    >>> resolve_secure(None, None, "knorm", exact=False, alternatives="tulap_mechanism")
    False
    """
    if secure is not None and not isinstance(secure, bool):
        raise TypeError(
            f"`secure` must be None, True or False, got {type(secure).__name__} ({secure!r})."
        )
    if not exact:
        refuse_secure(mechanism, bool(secure), alternatives=alternatives)
        return False
    if secure is not None:
        return secure
    return rng is None or isinstance(rng, SecureGenerator)


def warn_unasked_simulation(
    secure, rng, mechanism: str, alternatives: str, *, stacklevel: int = 3
) -> None:
    """Warn that a simulation was made without being asked for (the rule: :func:`resolve_secure`).

    Called by a mechanism without an exact sampler (or a call of one without
    a secure path) once its release is made, with the ``secure`` and ``rng``
    its caller gave: neither a seed nor ``secure=False`` said that a
    simulation was intended.  ``stacklevel`` points the warning at the
    mechanism's caller (3 from the mechanism's own body; one more per
    wrapper in between).

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_unasked_simulation(None, None, "knorm", "tulap_mechanism")
    >>> caught[0].category.__name__
    'SimulationWarning'
    >>> warn_unasked_simulation(None, 7, "knorm", "tulap_mechanism")  # a seed: asked for
    """
    if secure is None and rng is None:
        warnings.warn(
            f"{mechanism} drew its noise from an unseeded numpy generator: a simulation, "
            "not for publication. Pass `rng=` (a seed or a Generator) or `secure=False` to "
            f"say a simulation is intended; for a release to publish use {alternatives}.",
            SimulationWarning,
            stacklevel=stacklevel,
        )


def check_data(x, name: str = "x") -> np.ndarray:
    if isinstance(x, np.ndarray) and x.dtype == np.float64:
        # no defensive copy: mechanisms never write to x (the release is x + noise)
        arr = x
        if not np.isfinite(arr).all():
            check_finite_array(name, x)  # raises with the standard message
    else:
        if np.iscomplexobj(x):  # np.asarray(..., float) would drop the imaginary part
            raise TypeError(f"`{name}` must be real, got complex values.")
        arr = check_finite_array(name, x)
    if arr.size == 0:
        raise InvariantDPError(f"`{name}` must not be empty.")
    return arr


def resolve_sensitivity(sensitivity, p, *, dim: int | None = None, transform=None) -> float:
    """A positive sensitivity: a number, or the largest ``l_p`` norm of a space.

    ``transform`` maps the difference vectors first (e.g. ``Q_N^T`` for the
    extended mechanisms of Gao, Gong & Yu).
    """
    if np.ndim(sensitivity) == 0:
        return check_positive("sensitivity", sensitivity)
    S = check_finite_array("sensitivity", sensitivity)
    if S.ndim != 2 or S.shape[0] == 0:
        raise InvariantDPError(
            "`sensitivity` must be a positive number or a 2-D array of difference "
            f"vectors (one per row), got shape {S.shape}."
        )
    if dim is not None and S.shape[1] != dim:
        raise InvariantDPError(
            f"`sensitivity` vectors must have {dim} coordinates like the data, got {S.shape[1]}."
        )
    if transform is not None:
        S = transform(S)
    value = float(np.max(np.linalg.norm(S, ord=p, axis=1)))
    if not value > 0:
        raise InvariantDPError("`sensitivity` space must contain a nonzero difference vector.")
    return value


def gaussian_calibration(mu, epsilon, delta):
    """``(mu, guarantee params, calibration note)`` from mu or (epsilon, delta)."""
    if mu is not None:
        if epsilon is not None or delta is not None:
            raise InvariantDPError(
                "give either `mu` or (`epsilon`, `delta`), not both; "
                f"got mu={mu}, epsilon={epsilon}, delta={delta}."
            )
        mu = check_positive("mu", mu)
        return mu, {"mu": mu}, "mu-GDP"
    if epsilon is None or delta is None:
        raise InvariantDPError(
            "Gaussian noise needs `mu` (mu-GDP) or both `epsilon` and `delta`; "
            f"got epsilon={epsilon}, delta={delta}."
        )
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if delta == 0:
        raise InvariantDPError(f"`delta` ({delta}) must be in (0, 1) for Gaussian noise.")
    mu = float(eps_delta_to_gdp(epsilon, delta))
    return (
        mu,
        {"mu": mu, "epsilon": epsilon, "delta": delta},
        "Balle & Wang (2018) exact: mu-GDP with delta(epsilon) equal to the target",
    )


def check_float_scale(scale: float, what: str) -> None:
    """Refuse a floating-point noise scale that overflows (e.g. epsilon = 1e-320)."""
    if not scale <= MAX_FLOAT_SCALE:  # also catches inf and nan
        raise InvariantDPError(
            f"the noise scale {what} ({scale:.6g}) must be <= {MAX_FLOAT_SCALE:g}: "
            "larger noise overflows float64 (the release would be inf); raise `epsilon` "
            "(or `mu`) or lower `sensitivity`."
        )


def guarantee(
    definition: str,
    params: dict,
    *,
    adjacency: str = QUERY_ADJACENCY,
    semi_adjacent_parameter: int | None = None,
    dataspace: str = "",
    timing_tv=None,
) -> PrivacyGuarantee:
    """The privacy guarantee ``(D, A, f)`` of a mechanism's release.

    The default adjacency is that of an additive mechanism calibrated to the
    sensitivity of its query (:data:`QUERY_ADJACENCY`); semi-DP mechanisms
    give ``semi_adjacent_parameter`` (``a(t)`` of Cho & Awan, Def. 13).  A
    secure release gives ``timing_tv``, the probability that its run time
    depended on its noise: the guarantee becomes that of the value with its
    run time (:func:`._side_channels.timed_guarantee_params`).
    """
    if timing_tv is not None:
        definition, params = timed_guarantee_params(definition, params, timing_tv)
    return PrivacyGuarantee(definition, params, adjacency, semi_adjacent_parameter, dataspace)


def make_release(
    value,
    mechanism,
    noise,
    guarantee,
    *,
    data_shape,
    metadata,
    invariants=None,
    query="identity",
    secure=False,
    cls=Release,
    extra=None,
    labels=None,
) -> Release:
    """The Release of a mechanism: the one constructor path of every mechanism.

    ``query`` is ``"identity"`` (the default; recorded as
    ``metadata["query"]``), the matrix of a linear query (stored as
    ``Release.query``), or None for a release that is no linear query of the
    data (the swapped table).  ``metadata["randomness"]`` records
    ``secure`` (:func:`randomness_note`); entries of ``metadata`` come last
    and win.  A mechanism that returns more than the release gives its
    subclass of :class:`~invariantdp.Release` as ``cls`` and the subclass's
    own fields as ``extra``.  ``labels`` is the data given to the mechanism
    (a pandas object keeps its index and columns in the release,
    :mod:`invariantdp.labels`, and a ``Series`` its name as
    ``metadata["value_name"]``) or its labels; labels that fit the data but
    not the value (a query of the data) are kept as
    ``metadata["data_labels"]`` (:attr:`Release.data_labels
    <invariantdp.Release.data_labels>`).
    """
    matrix = None if query is None or isinstance(query, str) else query
    note = {"query": query} if isinstance(query, str) else {}
    axes = labels if isinstance(labels, tuple | type(None)) else labels_of(labels)
    if axes is not None:
        sizes = tuple(len(a.labels) for a in axes)
        if sizes != np.shape(value):
            if sizes == tuple(data_shape or ()):
                note["data_labels"] = labels_to_doc(axes)
            axes = None
        elif (name := value_name_of(labels)) is not None:
            note["value_name"] = name
    metadata = {**note, **randomness_note(secure), **metadata}
    # the fields of Release in order; a subclass's own fields are keyword-only
    fields_ = (value, mechanism, noise, guarantee, invariants, matrix, data_shape, metadata, axes)
    return cls(*fields_, **(extra or {}))


def plain_release(release: Release) -> Release:
    """The :class:`~invariantdp.Release` part of a release subclass, as a plain Release.

    What :meth:`Release.save` writes and :meth:`Release.load` gives back: the
    extra fields of a subclass (draws, swapped microdata) are not part of
    the JSON document.
    """
    return Release(**{f.name: getattr(release, f.name) for f in fields(Release)})


def release_part(owner: str) -> property:
    """The deprecated ``.release`` of a result that is now a Release subclass itself.

    ``ConditionalRelease`` and ``SwapResult`` used to hold their release in
    ``.release``; they are Releases now, and the property gives
    :func:`plain_release` of them with a ``DeprecationWarning``.
    """
    return deprecated_property(
        plain_release, f"`{owner}.release`", f"the {owner} itself (a {owner} is a Release)"
    )
