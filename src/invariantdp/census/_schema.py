"""The histogram schema of a census product: ordered attributes and their levels.

A unit's *detailed histogram* counts persons by every combination of the
attributes' levels, flattened in C order (the last attribute varies
fastest).  A *marginal query* keeps some attributes and sums over the others;
it is named by its attributes joined by ``" * "`` in schema order
(``"votingage * hispanic"``), with ``"total"`` (no attribute) and
``"detailed"`` (all of them).  Its answer is flattened in C order over its
attributes, in schema order.

A *recode* groups the levels of one attribute (the Bureau's
``hhinstlevels`` groups the eight ``hhgq`` levels into households,
institutional and non-institutional group quarters).  A query may name a
recode in place of its attribute (``"hhinstlevels"``,
``"gqNursingTotal * nonvoting"``); the query then has one cell per group on
that attribute.  Groups are disjoint and need not cover every level (the
levels outside every group are not counted by the query).

References
----------
Abowd et al. (2022), "The 2020 Census disclosure avoidance system TopDown
algorithm", Harvard Data Science Review (the P.L. 94-171 schema and its
queries); the Bureau's schema attributes and recodes
(``uscensusbureau/DAS_2020_Redistricting_Production_Code``,
``source/programs/schema/attributes/hhgq_person_simple.py``, ``votingage.py``,
``hisp.py``, ``cenrace.py``, ``h1.py``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validation import format_value
from ..exceptions import InvariantDPError

__all__ = ["PL94", "PL94_UNITS", "Schema"]

#: separator of attribute names in a query name
SEP = " * "


_RESERVED = ("total", "detailed")


def _check_name(name, what: str) -> str:
    if not isinstance(name, str) or not name or SEP.strip() in name or name in _RESERVED:
        raise InvariantDPError(
            f"{what} name {format_value(name)} must be a non-empty string without '*', other "
            "than 'total' and 'detailed'."
        )
    return name


class Schema:
    """Ordered attributes of a detailed histogram, each with its levels, and recodes.

    Parameters
    ----------
    attributes : mapping of str to int or sequence of str
        ``{name: number of levels}`` or ``{name: [level labels]}``, in schema
        order.  Without labels, a level is its index ``0..n-1``.
    recodes : mapping of str to (str, groups), optional
        ``{recode name: (attribute, groups)}``: ``groups`` is a list of
        lists of level indices (``[[0], [1, 2, 3, 4], [5, 6, 7]]``) or a
        mapping ``{group label: [level indices]}``.  Groups are non-empty and
        disjoint; they need not cover every level.  A query may name the
        recode in place of its attribute.

    Attributes
    ----------
    names : tuple of str
    shape : tuple of int
        Number of levels of each attribute.
    k : int
        Number of detailed cells, ``prod(shape)``.
    recodes : dict
        ``{recode name: (attribute, [[levels], ...])}``.

    References
    ----------
    Abowd et al. (2022), Section 7 (the P.L. 94-171 schema and its queries);
    the P.L. 94-171 schema is :data:`PL94`.

    Examples
    --------
    >>> from invariantdp.census import Schema
    >>> s = Schema({"sex": ["F", "M"], "age": 3}, recodes={"adult": ("age", [[1, 2]])})
    >>> s.shape, s.k
    ((2, 3), 6)
    >>> s.query("age"), s.query("detailed"), s.query_name(())
    ((1,), (0, 1), 'total')
    >>> s.query_shape("sex * age"), s.query_shape("sex * adult")
    ((2, 3), (2, 1))
    >>> attrs, recodes = s.query_spec("sex * adult")
    >>> attrs, recodes[1].tolist()
    ((0, 1), [[0, 1, 1]])
    >>> s.labels("sex"), s.labels("age"), s.labels("adult")
    (['F', 'M'], [0, 1, 2], [0])
    """

    def __init__(self, attributes, recodes=None):
        if isinstance(attributes, Schema):
            if recodes is None:
                recodes = attributes.recodes
            attributes = attributes.as_dict()
        if not hasattr(attributes, "items") or not attributes:
            raise InvariantDPError(
                f"`attributes` ({format_value(attributes)}) must be a non-empty mapping of "
                "attribute names to level counts or level labels."
            )
        names, shape, labels = [], [], []
        for name, spec in attributes.items():
            _check_name(name, "attribute")
            if isinstance(spec, int | np.integer) and not isinstance(spec, bool):
                if spec < 1:
                    raise InvariantDPError(f"`{name}` ({spec}) must have at least 1 level.")
                shape.append(int(spec))
                labels.append(None)
            elif isinstance(spec, list | tuple) and spec:
                labs = [str(v) for v in spec]
                if len(set(labs)) != len(labs):
                    raise InvariantDPError(f"the levels of `{name}` ({format_value(spec)}) repeat.")
                shape.append(len(labs))
                labels.append(tuple(labs))
            else:
                raise InvariantDPError(
                    f"`{name}` ({format_value(spec)}) must be a level count >= 1 or a non-empty "
                    "list of level labels."
                )
            names.append(name)
        self.names = tuple(names)
        self.shape = tuple(shape)
        self._labels = tuple(labels)
        self.k = int(np.prod(self.shape, dtype=np.int64))
        self._recodes = self._check_recodes({} if recodes is None else recodes)

    def _check_recodes(self, recodes) -> dict:
        """``{name: (attribute index, groups, group labels or None)}``, checked."""
        if not hasattr(recodes, "items"):
            raise InvariantDPError(
                f"`recodes` ({format_value(recodes)}) must map recode names to (attribute, groups)."
            )
        out = {}
        for name, spec in recodes.items():
            _check_name(name, "recode")
            if name in self.names:
                raise InvariantDPError(
                    f"recode name {name!r} is the name of an attribute: a query could not tell "
                    "them apart."
                )
            if not isinstance(spec, tuple | list) or len(spec) != 2:
                raise InvariantDPError(
                    f"`recodes[{name!r}]` ({format_value(spec)}) must be a pair "
                    "(attribute, groups)."
                )
            attribute, groups = spec
            a = self._index(attribute)
            n = self.shape[a]
            glabels = None
            if hasattr(groups, "items"):
                glabels = tuple(str(g) for g in groups)
                groups = list(groups.values())
            if not isinstance(groups, list | tuple) or not groups:
                raise InvariantDPError(
                    f"`recodes[{name!r}]` groups ({format_value(groups)}) must be a non-empty "
                    "list of lists of level indices."
                )
            clean, seen = [], set()
            for g in groups:
                levels = list(g) if isinstance(g, list | tuple | range) else None
                ok = (
                    levels is not None
                    and levels
                    and all(
                        isinstance(v, int | np.integer) and not isinstance(v, bool) and 0 <= v < n
                        for v in levels
                    )
                )
                if not ok:
                    raise InvariantDPError(
                        f"`recodes[{name!r}]` group {format_value(g)} must be a non-empty list "
                        f"of level indices of `{attribute}` in [0, {n})."
                    )
                levels = [int(v) for v in levels]
                if seen.intersection(levels) or len(set(levels)) != len(levels):
                    raise InvariantDPError(
                        f"`recodes[{name!r}]` groups ({format_value(groups)}) must be disjoint: "
                        "a level belongs to at most one group."
                    )
                seen.update(levels)
                clean.append(tuple(levels))
            out[name] = (a, tuple(clean), glabels)
        return out

    # -- description ---------------------------------------------------------

    @property
    def recodes(self) -> dict:
        """``{recode name: (attribute, groups)}``: what the constructor takes."""
        return {
            name: (
                self.names[a],
                dict(zip(glab, (list(g) for g in groups), strict=True))
                if glab is not None
                else [list(g) for g in groups],
            )
            for name, (a, groups, glab) in self._recodes.items()
        }

    def as_dict(self) -> dict:
        """``{name: count or list of labels}``: the attributes the constructor takes."""
        return {
            n: (list(lab) if lab is not None else s)
            for n, s, lab in zip(self.names, self.shape, self._labels, strict=True)
        }

    def labels(self, attribute: str) -> list:
        """The levels of ``attribute`` (or the groups of a recode): labels, or ``0..n-1``."""
        if attribute in self._recodes:
            _, groups, glab = self._recodes[attribute]
            return list(glab) if glab is not None else list(range(len(groups)))
        a = self._index(attribute)
        lab = self._labels[a]
        return list(lab) if lab is not None else list(range(self.shape[a]))

    def recode_matrix(self, name: str) -> np.ndarray:
        """The groups of the recode ``name`` as a 0/1 integer matrix ``(G, n)``.

        Group ``g`` holds level ``j`` of the recoded attribute (``n`` levels)
        iff ``matrix[g, j] == 1``; a level in no group has a zero column.  The
        one form of a recode that queries, selections, invariants and zeros
        read.

        Examples
        --------
        >>> from invariantdp.census import Schema
        >>> s = Schema({"age": 4}, recodes={"adult": ("age", [[2, 3]])})
        >>> s.recode_matrix("adult").tolist()
        [[0, 0, 1, 1]]
        """
        if name not in self._recodes:
            known = ", ".join(self._recodes) or "none"
            raise InvariantDPError(
                f"`name` ({format_value(name)}) is not a recode of the schema (recodes: {known})."
            )
        a, groups, _ = self._recodes[name]
        mat = np.zeros((len(groups), self.shape[a]), dtype=np.int64)
        for g, levels in enumerate(groups):
            mat[g, list(levels)] = 1
        return mat

    def has_labels(self, attribute: str) -> bool:
        if attribute in self._recodes:
            return self._recodes[attribute][2] is not None
        return self._labels[self._index(attribute)] is not None

    def _index(self, attribute: str) -> int:
        try:
            return self.names.index(attribute)
        except ValueError:
            raise InvariantDPError(
                f"`attribute` ({format_value(attribute)}) is not an attribute of the schema "
                f"({', '.join(self.names)})."
            ) from None

    def _key(self):
        recodes = tuple(
            (name, a, groups, glab) for name, (a, groups, glab) in sorted(self._recodes.items())
        )
        return (self.names, self.shape, self._labels, recodes)

    def __eq__(self, other) -> bool:
        return isinstance(other, Schema) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        inner = ", ".join(f"{n!r}: {v!r}" for n, v in self.as_dict().items())
        if not self._recodes:
            return f"Schema({{{inner}}})"
        rec = ", ".join(f"{n!r}: {v!r}" for n, v in self.recodes.items())
        return f"Schema({{{inner}}}, recodes={{{rec}}})"

    # -- queries -----------------------------------------------------------------

    @property
    def queries(self) -> list[str]:
        """Every marginal query name (no recode), from ``"total"`` to ``"detailed"``."""
        d = len(self.names)
        subsets = sorted(range(1 << d), key=lambda m: (bin(m).count("1"), m))
        return [self.query_name(tuple(a for a in range(d) if m >> a & 1)) for m in subsets]

    def query_name(self, attrs, recodes=()) -> str:
        """The canonical name of the query keeping attribute indices ``attrs``.

        ``recodes`` names the recodes used in place of their attributes.
        """
        attrs = tuple(sorted(int(a) for a in attrs))
        by_attr = {self._recodes[r][0]: r for r in recodes}
        if not attrs:
            return "total"
        if len(attrs) == len(self.names) and not by_attr:
            return "detailed"
        return SEP.join(by_attr.get(a, self.names[a]) for a in attrs)

    def _parse(self, name: str) -> tuple[tuple, dict]:
        """``(attrs, {attribute index: recode name})`` of a query name; errors state the rule."""
        if not isinstance(name, str):
            raise TypeError(f"`query` must be a str, got {type(name).__name__}.")
        if name == "total":
            return (), {}
        if name == "detailed":
            return tuple(range(len(self.names))), {}
        parts = name.split(SEP)
        known = set(self.names) | set(self._recodes)
        if any(p not in known for p in parts):
            rec = f" or recodes ({', '.join(self._recodes)})" if self._recodes else ""
            raise InvariantDPError(
                f"`query` ({format_value(name)}) is not a query of the schema: use 'total', "
                f"'detailed' or attributes of ({', '.join(self.names)}){rec} joined by '{SEP}'."
            )
        attrs, used = [], {}
        for p in parts:
            a = self._recodes[p][0] if p in self._recodes else self.names.index(p)
            if a in attrs:
                raise InvariantDPError(
                    f"`query` ({format_value(name)}) is not a query of the schema: it names the "
                    f"attribute {self.names[a]!r} twice (directly or through a recode)."
                )
            attrs.append(a)
            if p in self._recodes:
                used[a] = p
        if attrs != sorted(attrs):
            raise InvariantDPError(
                f"`query` ({format_value(name)}) must name its attributes in schema order: "
                f"{self.query_name(attrs, used.values())!r}."
            )
        return tuple(attrs), used

    def is_recoded(self, name: str) -> bool:
        """Whether the query named ``name`` uses a recode."""
        return bool(self._parse(name)[1])

    def canonical(self, name: str) -> str:
        """The canonical spelling of a query name (``"sex * age"`` of a 2-attribute schema is
        ``"detailed"``)."""
        attrs, used = self._parse(name)
        return self.query_name(attrs, used.values())

    def query(self, name: str) -> tuple:
        """The attribute indices (schema order) of the query named ``name``.

        Raises ``InvariantDPError`` for a name that is not a query of the
        schema, with the rule (attributes of the schema, in schema order),
        and for a query that uses a recode (its cells are not those of its
        attributes: use :meth:`query_spec`).
        """
        attrs, used = self._parse(name)
        if used:
            raise InvariantDPError(
                f"`query` ({format_value(name)}) uses the recode(s) "
                f"{', '.join(used.values())}: its cells are groups of levels, not the levels of "
                "its attributes; this operation takes marginal queries only (see query_spec)."
            )
        return attrs

    def query_spec(self, name: str) -> tuple[tuple, dict]:
        """``(attrs, recodes)`` of the query named ``name``.

        ``attrs`` are the attribute indices in schema order; ``recodes`` maps
        the index of each recoded attribute to a 0/1 integer matrix of shape
        ``(G, n)``: group ``g`` holds level ``j`` iff ``matrix[g, j] == 1``.
        The query's cells run in C order over its factor sizes (``G`` for a
        recoded attribute, ``n`` for a plain one).
        """
        attrs, used = self._parse(name)
        return attrs, {a: self.recode_matrix(r) for a, r in used.items()}

    def query_shape(self, name: str) -> tuple:
        """The shape of a query's answer (``()`` for the total)."""
        attrs, used = self._parse(name)
        return tuple(len(self._recodes[used[a]][1]) if a in used else self.shape[a] for a in attrs)

    def query_cells(self, name: str) -> int:
        """The number of cells of a query's answer."""
        return int(np.prod(self.query_shape(name), dtype=np.int64))

    def cell_frame(self, name: str):
        """A DataFrame of the query's cells in C order: one column per attribute (or recode)."""

        attrs, used = self._parse(name)
        if not attrs:
            return pd.DataFrame(index=pd.RangeIndex(1))
        grids = np.indices(self.query_shape(name)).reshape(len(attrs), -1)
        cols = {}
        for a, idx in zip(attrs, grids, strict=True):
            col = used.get(a, self.names[a])
            labs = self.labels(col)
            cols[col] = [labs[i] for i in idx] if self.has_labels(col) else idx
        return pd.DataFrame(cols, index=pd.RangeIndex(grids.shape[1]))

    def level_codes(self, attribute: str, values) -> np.ndarray:
        """Indices of ``values`` among the levels of ``attribute``; unknown levels are refused.

        For an attribute with labels, string values are labels and integer
        values (an integer dtype) are level indices.
        """
        a = self._index(attribute)
        vals = np.asarray(values)
        if self._labels[a] is not None and vals.dtype.kind not in "iu":
            lookup = {lab: i for i, lab in enumerate(self._labels[a])}
            strs = vals.astype(str)
            uniq, inv = np.unique(strs, return_inverse=True)
            bad = [u for u in uniq if u not in lookup]
            codes = np.array([lookup.get(u, -1) for u in uniq], dtype=np.int64)[inv]
        else:
            if vals.dtype.kind not in "iu":
                if (
                    vals.dtype.kind == "f"
                    and np.all(np.isfinite(vals))
                    and np.all(vals == np.round(vals))
                ):
                    vals = vals.astype(np.int64)
                else:
                    raise InvariantDPError(
                        f"column `{attribute}` must hold level indices 0..{self.shape[a] - 1}."
                    )
            codes = vals.astype(np.int64)
            bad = np.unique(codes[(codes < 0) | (codes >= self.shape[a])]).tolist()
        if len(bad):
            raise InvariantDPError(
                f"column `{attribute}` holds levels that are not levels of the schema: "
                f"{format_value(list(bad)[:5])}."
            )
        return codes


_RACES = ("white", "black", "aian", "asian", "nhopi", "sor")


def _cenrace_labels() -> list:
    """The 63 race combinations in the Bureau's order: by number of races, then lexicographic."""
    from itertools import combinations

    return [
        "-".join(_RACES[i] for i in combo)
        for size in range(1, len(_RACES) + 1)
        for combo in combinations(range(len(_RACES)), size)
    ]


#: The P.L. 94-171 (redistricting) person schema of the 2020 Census: household or
#: group-quarters type (8), voting age (2), Hispanic origin (2), race (63 combinations
#: of six races); 2,016 detailed cells, with the Bureau's level labels and the recodes
#: its noisy measurement files use (``hhinstlevels``, ``gqNursingTotal``, ``nonvoting``).
PL94 = Schema(
    {
        "hhgq": [
            "Household",
            "Correctional facilities for adults",
            "Juvenile facilities",
            "Nursing facilities/Skilled-nursing facilities",
            "Other institutional facilities",
            "College/University student housing",
            "Military quarters",
            "Other noninstitutional facilities",
        ],
        "votingage": ["17 and under", "18 and over"],
        "hispanic": ["Not Hispanic or Latino", "Hispanic or Latino"],
        "cenrace": _cenrace_labels(),
    },
    recodes={
        "hhinstlevels": (
            "hhgq",
            {
                "Household": [0],
                "Institutional Facility": [1, 2, 3, 4],
                "Non-Institutional Facility": [5, 6, 7],
            },
        ),
        "gqNursingTotal": ("hhgq", {"Nursing Facilities Population Total": [3]}),
        "nonvoting": ("votingage", {"17 and under": [0]}),
    },
)

#: The P.L. 94-171 housing-unit schema of the 2020 Census: occupancy status (table H1).
PL94_UNITS = Schema({"h1": ["Vacant", "Occupied"]})
