r"""The 2020 production strategy of the P.L. 94-171 noisy measurements, as data.

A *strategy* splits a product's zCDP budget :math:`\rho` over the levels of
the spine and, within a level, over its queries; query :math:`q` at level
:math:`l` gets :math:`\rho_{l,q} = \rho \cdot s_l \cdot s_{l,q}` and discrete
Gaussian noise with :math:`1/\sigma^2 = \rho_{l,q}` in each cell (the
Bureau's ``inverse_scale = dpq_prop * geolevel_prop / global_scale**2``).
All shares are exact fractions, as in the Bureau's configuration.

References
----------
``uscensusbureau/DAS_2020_Redistricting_Production_Code``:
``source/configs/production/pl94/person_US.ini`` (persons: ``global_scale =
339/542``, ``geolevel_budget_prop = 104/4099, 1440/4099, 447/4099, 687/4099,
1256/4099, 165/4099``, strategy ``ProductionCandidate20210527US_mult8_add02_dsepJune3``),
``source/programs/strategies/strategies.py`` (that strategy's queries and
shares per level), ``source/programs/engine/engine_utils.py``
(``getAdjustedInverseScalePerQuery``) and
``docs/certificates/DAS-PL94171-PRODUCTION-RUN1A-202106241420-US-Units.certificate.pdf``
(units: ``global_scale = 12343/3379``, ``geolevel_budget_prop = 1/205, 1/205,
7/82, 364/1025, 1759/4100, 99/820``, strategy ``DetailedOnly``, schema
``H1_2020_SCHEMA``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from .._results import Summary, format_table
from .._validation import format_value
from ..exceptions import InvariantDPError

__all__ = ["PL94_2020_STRATEGY", "CensusStrategy", "ReleaseStrategy"]


def _fraction(name: str, value) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, int | Fraction):
        raise InvariantDPError(
            f"`{name}` ({format_value(value)}) must be an exact fraction (int or "
            "fractions.Fraction), as the Bureau's shares are."
        )
    value = Fraction(value)
    if value <= 0:
        raise InvariantDPError(f"`{name}` ({value}) must be > 0.")
    return value


class CensusStrategy(Mapping):
    r"""A product's zCDP budget split over levels and queries, usable as a ``workload``.

    As a mapping it is ``{level: {query: rho}}`` with exact fractions, which
    is what :func:`~invariantdp.census.measure` takes as ``workload``.

    Parameters
    ----------
    rho : int or fractions.Fraction
        The product's total zCDP budget.
    level_shares : mapping of str to Fraction
        Share of each level, coarse to fine; they sum to 1.
    query_shares : mapping of str to mapping of str to Fraction
        Per level, the share of each query; each level's shares sum to 1.

    Attributes
    ----------
    rho : Fraction
    level_shares : dict
    query_shares : dict

    References
    ----------
    The Bureau's production configuration and ``strategies.py`` (see the
    module docstring); Abowd et al. (2022), Section 7.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from invariantdp.census import PL94_2020_STRATEGY
    >>> persons = PL94_2020_STRATEGY.persons
    >>> persons.rho, persons.rho == 1 / Fraction(339, 542) ** 2  # 1 / global_scale^2
    (Fraction(293764, 114921), True)
    >>> persons["Block"]["detailed"] == persons.rho * Fraction(165, 4099) * Fraction(3945, 4097)
    True
    >>> list(persons["US"])[:3], len(persons["US"]), len(persons["State"])
    (['cenrace', 'hispanic', 'votingage'], 10, 11)
    >>> sum(r for q in persons.values() for r in q.values()) == persons.rho
    True
    """

    def __init__(self, rho, level_shares, query_shares):
        self.rho = _fraction("rho", rho)
        if not hasattr(level_shares, "items") or not level_shares:
            raise InvariantDPError("`level_shares` must map levels to their share of rho.")
        self.level_shares = {
            str(k): _fraction(f"level_shares[{k!r}]", v) for k, v in level_shares.items()
        }
        if sum(self.level_shares.values()) != 1:
            raise InvariantDPError(
                f"`level_shares` sum to {sum(self.level_shares.values())}, not 1."
            )
        if not hasattr(query_shares, "items") or set(query_shares) != set(self.level_shares):
            raise InvariantDPError(
                "`query_shares` must give the queries of every level of `level_shares` "
                f"({', '.join(self.level_shares)})."
            )
        self.query_shares = {}
        for level in self.level_shares:
            shares = query_shares[level]
            if not hasattr(shares, "items") or not shares:
                raise InvariantDPError(f"`query_shares[{level!r}]` must map queries to shares.")
            self.query_shares[level] = {
                str(q): _fraction(f"query_shares[{level!r}][{q!r}]", v) for q, v in shares.items()
            }
            total = sum(self.query_shares[level].values())
            if total != 1:
                raise InvariantDPError(f"`query_shares[{level!r}]` sum to {total}, not 1.")

    def __getitem__(self, level):
        try:
            shares = self.query_shares[level]
        except KeyError:
            raise KeyError(level) from None
        scale = self.rho * self.level_shares[level]
        return {q: scale * s for q, s in shares.items()}

    def __iter__(self):
        return iter(self.level_shares)

    def __len__(self) -> int:
        return len(self.level_shares)

    def sigma_sq(self, level: str, query: str) -> Fraction:
        r"""The discrete Gaussian's :math:`\sigma^2 = 1/\rho_{l,q}` of one query at one level."""
        if level not in self.level_shares or query not in self.query_shares[level]:
            raise InvariantDPError(
                f"({format_value(level)}, {format_value(query)}) is not a (level, query) of "
                "the strategy."
            )
        return 1 / self[level][query]

    def __repr__(self) -> str:
        return (
            f"CensusStrategy(rho={self.rho}, levels={list(self.level_shares)}, "
            f"queries={sum(len(q) for q in self.query_shares.values())})"
        )

    def summary(self) -> Summary:
        rows = [
            (
                level,
                f"share {self.level_shares[level]}; {len(q)} queries; "
                f"rho {float(sum(self[level].values())):.6g}",
            )
            for level, q in self.query_shares.items()
        ]
        rows.append(("total rho", f"{self.rho} ({float(self.rho):.6g})"))
        return format_table("Census noisy-measurement strategy", rows, [])


@dataclass(frozen=True)
class ReleaseStrategy:
    """The strategies of a release's products (persons and housing units).

    Attributes
    ----------
    persons : CensusStrategy
    units : CensusStrategy

    References
    ----------
    See :data:`PL94_2020_STRATEGY`.

    Examples
    --------
    >>> from invariantdp.census import PL94_2020_STRATEGY
    >>> units = PL94_2020_STRATEGY.units
    >>> units.rho, [list(q) for q in units.values()][0]
    (Fraction(11417641, 152349649), ['detailed'])
    """

    persons: CensusStrategy
    units: CensusStrategy


_LEVELS = ("US", "State", "County", "Tract", "Block_Group", "Block")
_QUERIES = (
    "total",
    "cenrace",
    "hispanic",
    "votingage",
    "hhinstlevels",
    "hhgq",
    "hispanic * cenrace",
    "votingage * cenrace",
    "votingage * hispanic",
    "votingage * hispanic * cenrace",
    "detailed",
)


def _shares(pairs) -> dict:
    return {q: Fraction(n, d) for q, (n, d) in zip(_QUERIES, pairs, strict=True) if n}


_PERSON_QUERY_SHARES = {
    # the US level has no total query: its share is 0 here and the query is absent
    "US": _shares(
        [
            (0, 1),
            (52, 4097),
            (26, 4097),
            (26, 4097),
            (26, 4097),
            (26, 4097),
            (130, 4097),
            (130, 4097),
            (26, 4097),
            (26, 241),
            (189, 241),
        ]
    ),
    "State": _shares(
        [
            (3773, 4097),
            (6, 4097),
            (6, 4097),
            (6, 4097),
            (6, 4097),
            (6, 4097),
            (12, 4097),
            (12, 4097),
            (6, 4097),
            (2, 241),
            (230, 4097),
        ]
    ),
    "County": _shares(
        [
            (3126, 4097),
            (10, 4097),
            (10, 4097),
            (10, 4097),
            (10, 4097),
            (10, 4097),
            (28, 4097),
            (28, 4097),
            (10, 4097),
            (101, 4097),
            (754, 4097),
        ]
    ),
    "Tract": _shares(
        [
            (1567, 4102),
            (4, 2051),
            (5, 4102),
            (5, 4102),
            (5, 4102),
            (5, 4102),
            (1933, 4102),
            (10, 2051),
            (5, 4102),
            (67, 4102),
            (241, 2051),
        ]
    ),
    "Block_Group": _shares(
        [
            (1705, 4099),
            (3, 4099),
            (3, 4099),
            (3, 4099),
            (3, 4099),
            (3, 4099),
            (1055, 4099),
            (9, 4099),
            (3, 4099),
            (24, 4099),
            (1288, 4099),
        ]
    ),
    "Block": _shares(
        [
            (5, 4097),
            (9, 4097),
            (5, 4097),
            (5, 4097),
            (5, 4097),
            (5, 4097),
            (21, 4097),
            (21, 4097),
            (5, 4097),
            (71, 4097),
            (3945, 4097),
        ]
    ),
}

#: The 2020 P.L. 94-171 production strategies: persons (rho = (542/339)^2 = 293764/114921,
#: 11 queries per level below US, 10 at US) and housing units (rho = (3379/12343)^2 =
#: 11417641/152349649, the detailed query only), with the Bureau's exact shares.
PL94_2020_STRATEGY = ReleaseStrategy(
    persons=CensusStrategy(
        Fraction(542, 339) ** 2,
        dict(
            zip(_LEVELS, (Fraction(n, 4099) for n in (104, 1440, 447, 687, 1256, 165)), strict=True)
        ),
        _PERSON_QUERY_SHARES,
    ),
    units=CensusStrategy(
        Fraction(12343, 3379) ** -2,
        dict(
            zip(
                _LEVELS,
                (
                    Fraction(1, 205),
                    Fraction(1, 205),
                    Fraction(7, 82),
                    Fraction(364, 1025),
                    Fraction(1759, 4100),
                    Fraction(99, 820),
                ),
                strict=True,
            )
        ),
        {level: {"detailed": Fraction(1)} for level in _LEVELS},
    ),
)
