r"""The neighbours a guarantee is for, as a structured field: :class:`QueryAdjacency`.

A DP guarantee is a statement about neighbouring data sets (Cho & Awan,
Def. 3: the adjacency of ``(D, A, f)``-DP).  An additive mechanism protects
neighbours whose query values differ by at most a *sensitivity* in a *norm*
(possibly in a limited number of coordinates, or by a vector of a
sensitivity space); the relation on data sets behind it (replace one record,
semi-adjacency, invariant-conforming neighbours) is kept as words beside
the numbers.  The words a release shows are *rendered* from these fields
(:meth:`QueryAdjacency.describe`), never read back: a document states its
neighbours by the fields alone, and the noise family checks the guarantee
against the noise law with exactly these numbers.

References
----------
Cho & Awan, Def. 3 (``(D, A, f)``-DP) and Def. 13 (semi-adjacency); Dwork &
Roth (2014), Def. 3.1 (l1 sensitivity); Bailie, Gong & Meng, Sec. 3 (the
components of a DP definition).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._validation import (
    InvariantDPError,
    doc_error,
    doc_int,
    doc_number,
    doc_object,
    doc_path,
    doc_str,
    format_value,
)

__all__ = ["ADJACENCY_NORMS", "QueryAdjacency"]

#: the norms a sensitivity is stated in (``K``: the norm of a K-norm mechanism's own body)
ADJACENCY_NORMS = ("l1", "l2", "linf", "polytope", "K")
_MAX_RELATION = 1000


@dataclass(frozen=True)
class QueryAdjacency:
    r"""Neighbours whose query values differ by at most ``sensitivity`` in ``norm``.

    Parameters
    ----------
    norm : str
        One of :data:`ADJACENCY_NORMS`.
    sensitivity : float
        The largest distance between neighbours' query values, ``> 0``
        (finite; not a boolean or a string).
    coordinates_changed : int or None
        At most this many coordinates differ (``>= 1``); None: any number.
        With ``norm="linf"`` the sensitivity bounds each changed coordinate
        (the Tulap mechanism).
    space : bool
        The differences are the vectors of a sensitivity space and
        ``sensitivity`` is their largest norm.
    relation : str
        The relation on data sets that gives these neighbours, in words
        (e.g. semi-adjacency of tables with fixed margins); may be empty.

    References
    ----------
    Cho & Awan, Def. 3 and Def. 13; Dwork & Roth (2014), Def. 3.1.

    Examples
    --------
    >>> from invariantdp.privacy import QueryAdjacency
    >>> QueryAdjacency("l1", 2.0).describe()
    'query values differing by at most 2 in l1 norm'
    >>> QueryAdjacency("linf", 1.0, coordinates_changed=1).describe()
    'query values differing by at most 1 in each coordinate (linf norm), in one coordinate'
    """

    norm: str
    sensitivity: float
    coordinates_changed: int | None = None
    space: bool = False
    relation: str = ""

    def __post_init__(self):
        if self.norm not in ADJACENCY_NORMS:
            raise InvariantDPError(
                f"`norm` ({format_value(self.norm)}) must be one of {', '.join(ADJACENCY_NORMS)}."
            )
        s = self.sensitivity
        if isinstance(s, bool) or not isinstance(s, int | float) or not (0 < s < math.inf):
            raise InvariantDPError(
                f"`sensitivity` ({format_value(s)}) must be a finite number > 0."
            )
        object.__setattr__(self, "sensitivity", float(s))
        m = self.coordinates_changed
        if m is not None and (isinstance(m, bool) or not isinstance(m, int) or m < 1):
            raise InvariantDPError(
                f"`coordinates_changed` ({format_value(m)}) must be None or an integer >= 1."
            )
        if not isinstance(self.space, bool):
            raise TypeError(f"`space` must be True or False, got {type(self.space).__name__}.")
        if not isinstance(self.relation, str):
            raise TypeError(f"`relation` must be a string, got {type(self.relation).__name__}.")

    def describe(self) -> str:
        """The adjacency in words, rendered from the fields."""
        s = f"{self.sensitivity:.6g}"
        m = self.coordinates_changed
        if self.space:
            base = (
                f"query values differing by a vector of the given sensitivity space (largest "
                f"{self.norm} norm {s})"
            )
        elif self.norm == "linf" and m is not None:
            where = "one coordinate" if m == 1 else f"at most {m} coordinates"
            base = (
                f"query values differing by at most {s} in each coordinate (linf norm), in {where}"
            )
        else:
            base = f"query values differing by at most {s} in {self.norm} norm"
            if m is not None:
                base += f", in at most {m} coordinates"
        return f"{self.relation}; {base}" if self.relation else base

    def to_dict(self) -> dict:
        return {
            "norm": self.norm,
            "sensitivity": self.sensitivity,
            "coordinates_changed": self.coordinates_changed,
            "space": self.space,
            "relation": self.relation,
        }

    @classmethod
    def from_doc(cls, path: str, d) -> QueryAdjacency:
        """Read :meth:`to_dict` output, every field checked and named by its ``path``."""
        doc_object(
            path, d, required=("norm", "sensitivity", "coordinates_changed", "space", "relation")
        )
        norm = doc_str(doc_path(path, "norm"), d["norm"], choices=ADJACENCY_NORMS)
        sens = doc_number(doc_path(path, "sensitivity"), d["sensitivity"], low=0.0, low_open=True)
        m = d["coordinates_changed"]
        if m is not None:
            m = doc_int(doc_path(path, "coordinates_changed"), m, minimum=1)
        if not isinstance(d["space"], bool):
            raise doc_error(doc_path(path, "space"), d["space"], "must be true or false.")
        relation = doc_str(doc_path(path, "relation"), d["relation"], max_length=_MAX_RELATION)
        return cls(norm, sens, m, d["space"], relation)
