"""The privacy guarantee ``(D, A, f)`` a release records (:class:`PrivacyGuarantee`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .._results import is_number
from .._validation import InvariantDPError, freeze, thaw
from ..privacy import QueryAdjacency, TradeoffFunction, eps_delta, gaussian_tradeoff, zcdp_tradeoff
from ._document_schema import guarantee_from_doc

__all__ = ["PrivacyGuarantee"]


@dataclass(frozen=True)
class PrivacyGuarantee:
    """A privacy guarantee ``(D, A, f)``: dataspace, adjacency, privacy level.

    Attributes
    ----------
    definition : str
        ``"f-DP"`` (with ``params["tradeoff"]``), ``"(epsilon, delta)-DP"``,
        ``"GDP"``, ``"zCDP"``, ``"epsilon-DP"``, or ``"unstated"`` (a
        published release whose noise law is known but whose guarantee the
        analyst cannot state, see :func:`~invariantdp.published.from_published`).
    params : dict
        The privacy parameters (``epsilon``, ``delta``, ``mu``, ``rho``, ...);
        kept as a read-only deep copy.  A secure release records the
        guarantee of its value *and run time*: ``timing_tv`` bounds the total
        variation between the two and a release whose run time is independent
        of the data (:mod:`invariantdp.secure`); it is already included in
        ``delta`` and, for zCDP, shifts :meth:`tradeoff`.  The Tulap
        mechanism records ``epsilon_per_coordinate``,
        ``delta_per_coordinate`` and ``coordinates_changed`` (the composed
        guarantee is ``epsilon``, ``delta``).
    adjacency : QueryAdjacency or str
        The neighbours the guarantee is for: a
        :class:`~invariantdp.privacy.QueryAdjacency` (the norm and
        sensitivity of the query, checked against the noise law), or words
        only (a guarantee stated by a publisher, which the noise cannot be
        checked against).  The attribute holds the words, rendered from the
        structured form when there is one (kept as :attr:`neighbours`).
    semi_adjacent_parameter : int or None
        ``a(t)`` of Cho & Awan (Def. 13) when the guarantee is semi-DP: the
        guarantee holds for invariant-conforming data sets at distance
        ``a(t)`` in the base adjacency.
    dataspace : str
        The data space, in words (e.g. ``"2x2 tables with these one-way margins"``).

    References
    ----------
    Cho & Awan, Def. 3 (``(D, A, f)``-DP: data space, adjacency, tradeoff
    function) and Def. 13 (the semi-adjacent parameter); Bailie, Gong & Meng,
    Sec. 3 (the components of a DP definition).

    Examples
    --------
    >>> g = PrivacyGuarantee("epsilon-DP", {"epsilon": 1.0})
    >>> g.describe()
    'epsilon-DP (epsilon=1)'
    >>> round(float(g.tradeoff()(0.5)), 4)
    0.1839
    >>> from invariantdp.privacy import QueryAdjacency
    >>> PrivacyGuarantee("epsilon-DP", {"epsilon": 1.0}, QueryAdjacency("l1", 1.0)).adjacency
    'query values differing by at most 1 in l1 norm'
    """

    definition: str
    params: dict = field(default_factory=dict)
    adjacency: str = "add/remove or replace one record"
    semi_adjacent_parameter: int | None = None
    dataspace: str = ""
    #: the structured neighbours (None: an adjacency in words only)
    neighbours: QueryAdjacency | None = field(default=None, init=False)

    def __post_init__(self):
        if not isinstance(self.params, dict):
            raise TypeError(f"`params` must be a dict, got {type(self.params).__name__}.")
        object.__setattr__(self, "params", freeze(self.params))
        if isinstance(self.adjacency, QueryAdjacency):
            object.__setattr__(self, "neighbours", self.adjacency)
            object.__setattr__(self, "adjacency", self.adjacency.describe())
        elif not isinstance(self.adjacency, str):
            raise TypeError(
                "`adjacency` must be a QueryAdjacency or a string, got "
                f"{type(self.adjacency).__name__}."
            )

    def tradeoff(self) -> TradeoffFunction:
        """The tradeoff function ``f`` that the guarantee asserts."""
        p = self.params
        if self.definition == "f-DP":
            return TradeoffFunction.from_dict(p["tradeoff"])
        if self.definition in ("(epsilon, delta)-DP", "epsilon-DP"):
            return eps_delta(p["epsilon"], p.get("delta", 0.0))
        if self.definition == "GDP":
            return gaussian_tradeoff(p["mu"])
        if self.definition == "zCDP":  # the envelope of CKS (2020), Cor. 13
            return zcdp_tradeoff(p["rho"], tv=p.get("timing_tv", 0.0))
        raise InvariantDPError(
            f"an {self.definition} guarantee states no tradeoff function; "
            "convert it with invariantdp.privacy first."
        )

    def to_dict(self) -> dict:
        return {
            "definition": self.definition,
            "params": thaw(self.params),
            "adjacency": self.adjacency if self.neighbours is None else self.neighbours.to_dict(),
            "semi_adjacent_parameter": self.semi_adjacent_parameter,
            "dataspace": self.dataspace,
        }

    @classmethod
    def from_dict(cls, d: dict, *, path: str = "guarantee") -> PrivacyGuarantee:
        """Rebuild from :meth:`to_dict` output after validating it (see the module docstring)."""
        return PrivacyGuarantee(*guarantee_from_doc(path, d))

    def describe(self) -> str:
        params = ", ".join(f"{k}={v:g}" for k, v in self.params.items() if is_number(v))
        out = f"{self.definition} ({params})" if params else self.definition
        if self.semi_adjacent_parameter is not None:
            out += f", semi-DP with a(t)={self.semi_adjacent_parameter}"
        return out
