"""The mechanisms of the package by name: one vocabulary for the CLI, congenial releases and users.

Every mechanism that adds noise of a :mod:`invariantdp.families` family has
one :class:`Mechanism` entry here: its name (the family's own name where it
has one: ``"discrete_laplace"``, ``"projected_gaussian"``), the function that
runs it, the noise family its release records, how it is calibrated (the
privacy parameters it takes, the norm of its sensitivity, whether a zCDP
budget sets its noise) and whether it has an exact sampler.  The command
line (``invariantdp release``), :func:`~invariantdp.mechanisms.conditional_release`
and :func:`~invariantdp.mechanisms.distributed_privatize` look mechanisms up
here; the spellings of the command line (``discrete-laplace``) are aliases.

The table is fixed: users add noise *families*
(:func:`~invariantdp.families.register_noise_family`), not entries here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..exceptions import InvariantDPError
from ..families import NoiseFamily, noise_family
from ._additive import gaussian_mechanism, laplace_mechanism
from ._integer_noise import discrete_gaussian_mechanism, discrete_laplace_mechanism, tulap_mechanism
from ._knorm_mechanisms import knorm, lp_mechanism
from ._odds_ratio_release import odds_ratio_release
from ._semi_dp import semi_dp_gaussian, semi_dp_knorm
from ._subspace_mechanisms import (
    extended_gaussian,
    extended_laplace,
    projected_gaussian,
    projected_laplace,
)

__all__ = ["MECHANISMS", "Mechanism", "find_mechanism"]


@dataclass(frozen=True)
class Mechanism:
    """One mechanism: its name, function, noise family and calibration.

    Attributes
    ----------
    name : str
        The one name of the mechanism (snake case; the command line writes
        it with hyphens).
    function : callable
        The function that runs it (``discrete_laplace_mechanism``, ...).
    family : str
        The noise family its (simulation) release records; a secure release
        of ``laplace`` and ``gaussian`` records ``grid_laplace`` /
        ``grid_gaussian``.
    privacy : tuple of str
        The privacy parameters it takes (``("epsilon",)``, ``("mu", "rho")``, ...).
    norm : str
        The norm of its ``sensitivity`` (``"l1"``, ``"l2"``, ``"linf"`` for
        each cell, ``"lp"`` for the norm of its ``p``, ``"K"`` for a
        polytope, ``"fixed"``: set by the table's margins).
    kind : str
        How it is called: ``"additive"`` ``(x, **privacy)``,
        ``"subspace"`` ``(x, invariants, **privacy)``, ``"lp"``
        ``(x, p, **privacy)``, ``"semi_dp"`` ``(table, **privacy)``,
        ``"knorm"`` ``(x, vertices, epsilon)``, ``"odds_ratio"`` ``(table, ...)``.
    exact : bool
        It has an exact sampler (``secure=True`` makes a release for publication).
    scale : str
        The family parameter that holds the noise scale.
    aliases : tuple of str
        Other spellings (the command line's).
    congenial : str or None
        The privacy parameter by which
        :func:`~invariantdp.mechanisms.conditional_release` calibrates the
        mechanism conditioned on invariants (its congenial release, Gong &
        Meng 2020), or None if it has none.

    References
    ----------
    Gong & Meng, Definitions 1.1-1.2; Gao, Gong & Yu (2022), Cor. 14-18;
    Cho & Awan, Algorithms 1-2 and Def. 35; Canonne, Kamath & Steinke (2020).

    Examples
    --------
    >>> m = find_mechanism("discrete-laplace")
    >>> m.name, m.function.__name__, m.family, m.privacy, m.exact
    ('discrete_laplace', 'discrete_laplace_mechanism', 'discrete_laplace', ('epsilon',), True)
    """

    name: str
    function: Callable = field(repr=False)
    family: str
    privacy: tuple[str, ...]
    norm: str
    kind: str = "additive"
    exact: bool = False
    scale: str = "scale"
    aliases: tuple[str, ...] = ()
    congenial: str | None = None

    @property
    def noise_family(self) -> NoiseFamily:
        """The :class:`~invariantdp.families.NoiseFamily` its release records."""
        return noise_family(self.family)

    @property
    def zcdp(self) -> bool:
        """A zCDP budget ``rho`` sets its noise (Gaussian-type noise)."""
        return self.noise_family.gaussian_type

    @property
    def cli_name(self) -> str:
        """The spelling of the command line (``discrete-laplace``)."""
        return self.name.replace("_", "-")


def _entries() -> tuple[Mechanism, ...]:
    gauss = ("mu", "epsilon", "delta")
    return (
        Mechanism(
            "laplace",
            laplace_mechanism,
            "laplace",
            ("epsilon",),
            "l1",
            exact=True,
            congenial="epsilon",
        ),
        Mechanism(
            "gaussian", gaussian_mechanism, "gaussian", gauss, "l2", exact=True, congenial="mu"
        ),
        Mechanism(
            "discrete_laplace",
            discrete_laplace_mechanism,
            "discrete_laplace",
            ("epsilon",),
            "l1",
            exact=True,
            congenial="epsilon",
        ),
        Mechanism(
            "discrete_gaussian",
            discrete_gaussian_mechanism,
            "discrete_gaussian",
            ("mu", "rho"),
            "l2",
            exact=True,
            scale="sigma",
            congenial="rho",
        ),
        Mechanism(
            "tulap", tulap_mechanism, "tulap", ("epsilon", "delta"), "linf", exact=True, scale="b"
        ),
        Mechanism("lp", lp_mechanism, "knorm", ("epsilon",), "lp", kind="lp"),
        Mechanism("knorm", knorm, "knorm", ("epsilon",), "K", kind="knorm"),
        Mechanism(
            "projected_gaussian", projected_gaussian, "projected_gaussian", gauss, "l2", "subspace"
        ),
        Mechanism(
            "projected_laplace",
            projected_laplace,
            "projected_laplace",
            ("epsilon",),
            "l1",
            "subspace",
        ),
        Mechanism(
            "extended_gaussian", extended_gaussian, "extended_gaussian", gauss, "l2", "subspace"
        ),
        Mechanism(
            "extended_laplace", extended_laplace, "extended_laplace", ("epsilon",), "l1", "subspace"
        ),
        Mechanism(
            "semi_dp_gaussian", semi_dp_gaussian, "projected_gaussian", ("mu",), "fixed", "semi_dp"
        ),
        Mechanism("semi_dp_knorm", semi_dp_knorm, "knorm", ("epsilon",), "fixed", "semi_dp"),
        Mechanism(
            "odds_ratio",
            odds_ratio_release,
            "tulap",
            ("epsilon", "delta"),
            "fixed",
            "odds_ratio",
            exact=True,
            scale="b",
        ),
    )


def _with_cli_aliases(m: Mechanism) -> Mechanism:
    cli = m.cli_name
    if cli == m.name:
        return m
    return Mechanism(**{**m.__dict__, "aliases": (*m.aliases, cli)})


#: every mechanism by its name (a read-only mapping)
MECHANISMS: Mapping[str, Mechanism] = MappingProxyType(
    {m.name: m for m in map(_with_cli_aliases, _entries())}
)
_ALIASES = {alias: m.name for m in MECHANISMS.values() for alias in m.aliases}


def find_mechanism(name: str, *, kinds: tuple[str, ...] | None = None) -> Mechanism:
    """The :class:`Mechanism` called ``name`` (or an alias of it).

    Parameters
    ----------
    name : str
        ``"discrete_laplace"``, its command-line spelling ``"discrete-laplace"``, ...
    kinds : tuple of str, optional
        Accept only mechanisms of these kinds (e.g. ``("subspace",)``).

    Returns
    -------
    Mechanism

    Raises
    ------
    InvariantDPError
        If no mechanism (of those kinds) has that name, listing the names.

    References
    ----------
    Gong & Meng, Definitions 1.1-1.2 (the double geometric mechanism is the
    discrete Laplace); Gao, Gong & Yu (2022), Cor. 14-18.

    Examples
    --------
    >>> find_mechanism("projected-gaussian").function.__name__
    'projected_gaussian'
    """
    key = _ALIASES.get(name, name) if isinstance(name, str) else None
    m = MECHANISMS.get(key)
    if m is None or (kinds is not None and m.kind not in kinds):
        known = [n for n, e in MECHANISMS.items() if kinds is None or e.kind in kinds]
        raise InvariantDPError(
            f"`mechanism` ({name!r}) must be one of {', '.join(map(repr, known))}."
        )
    return m
