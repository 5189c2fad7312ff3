"""The histogram schema of a census product: ordered attributes and their levels.

A unit's *detailed histogram* counts persons by every combination of the
attributes' levels, flattened in C order (the last attribute varies
fastest).  A *marginal query* keeps some attributes and sums over the others;
it is named by its attributes joined by ``" * "`` in schema order
(``"votingage * hispanic"``), with ``"total"`` (no attribute) and
``"detailed"`` (all of them).  Its answer is flattened in C order over its
attributes, in schema order.

References
----------
Abowd et al. (2022), "The 2020 Census disclosure avoidance system TopDown
algorithm", Harvard Data Science Review (the P.L. 94-171 schema and its
queries).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validation import format_value
from ..exceptions import InvariantDPError

__all__ = ["PL94", "Schema"]

#: separator of attribute names in a query name
SEP = " * "


class Schema:
    """Ordered attributes of a detailed histogram, each with its levels.

    Parameters
    ----------
    attributes : mapping of str to int or sequence of str
        ``{name: number of levels}`` or ``{name: [level labels]}``, in schema
        order.  Without labels, a level is its index ``0..n-1``.

    Attributes
    ----------
    names : tuple of str
    shape : tuple of int
        Number of levels of each attribute.
    k : int
        Number of detailed cells, ``prod(shape)``.

    References
    ----------
    The query names of the Bureau's noisy measurement files; the P.L. 94-171
    schema is :data:`PL94`.

    Examples
    --------
    >>> from invariantdp.census import Schema
    >>> s = Schema({"sex": ["F", "M"], "age": 3})
    >>> s.shape, s.k
    ((2, 3), 6)
    >>> s.query("age"), s.query("detailed"), s.query_name(())
    ((1,), (0, 1), 'total')
    >>> s.query_shape("sex * age")
    (2, 3)
    >>> s.labels("sex"), s.labels("age")
    (['F', 'M'], [0, 1, 2])
    """

    def __init__(self, attributes):
        if isinstance(attributes, Schema):
            attributes = attributes.as_dict()
        if not hasattr(attributes, "items") or not attributes:
            raise InvariantDPError(
                f"`attributes` ({format_value(attributes)}) must be a non-empty mapping of "
                "attribute names to level counts or level labels."
            )
        names, shape, labels = [], [], []
        for name, spec in attributes.items():
            if (
                not isinstance(name, str)
                or not name
                or SEP.strip() in name
                or name
                in (
                    "total",
                    "detailed",
                )
            ):
                raise InvariantDPError(
                    f"attribute name {format_value(name)} must be a non-empty string without "
                    f"'*', other than 'total' and 'detailed'."
                )
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

    # -- description ---------------------------------------------------------

    def as_dict(self) -> dict:
        """``{name: count or list of labels}``: what the constructor takes."""
        return {
            n: (list(lab) if lab is not None else s)
            for n, s, lab in zip(self.names, self.shape, self._labels, strict=True)
        }

    def labels(self, attribute: str) -> list:
        """The levels of ``attribute``: its labels, or ``0..n-1`` without labels."""
        a = self._index(attribute)
        lab = self._labels[a]
        return list(lab) if lab is not None else list(range(self.shape[a]))

    def has_labels(self, attribute: str) -> bool:
        return self._labels[self._index(attribute)] is not None

    def _index(self, attribute: str) -> int:
        try:
            return self.names.index(attribute)
        except ValueError:
            raise InvariantDPError(
                f"`attribute` ({format_value(attribute)}) is not an attribute of the schema "
                f"({', '.join(self.names)})."
            ) from None

    def __eq__(self, other) -> bool:
        return isinstance(other, Schema) and self.as_dict() == other.as_dict()

    def __hash__(self) -> int:
        return hash((self.names, self.shape, self._labels))

    def __repr__(self) -> str:
        inner = ", ".join(f"{n!r}: {v!r}" for n, v in self.as_dict().items())
        return f"Schema({{{inner}}})"

    # -- queries -----------------------------------------------------------------

    @property
    def queries(self) -> list[str]:
        """Every marginal query name, from ``"total"`` to ``"detailed"``."""
        d = len(self.names)
        subsets = sorted(range(1 << d), key=lambda m: (bin(m).count("1"), m))
        return [self.query_name(tuple(a for a in range(d) if m >> a & 1)) for m in subsets]

    def query_name(self, attrs) -> str:
        """The canonical name of the query keeping attribute indices ``attrs``."""
        attrs = tuple(sorted(int(a) for a in attrs))
        if not attrs:
            return "total"
        if len(attrs) == len(self.names):
            return "detailed"
        return SEP.join(self.names[a] for a in attrs)

    def query(self, name: str) -> tuple:
        """The attribute indices (schema order) of the query named ``name``.

        Raises ``InvariantDPError`` for a name that is not a query of the
        schema, with the rule (attributes of the schema, in schema order).
        """
        if not isinstance(name, str):
            raise TypeError(f"`query` must be a str, got {type(name).__name__}.")
        if name == "total":
            return ()
        if name == "detailed":
            return tuple(range(len(self.names)))
        parts = name.split(SEP)
        if any(p not in self.names for p in parts) or len(set(parts)) != len(parts):
            raise InvariantDPError(
                f"`query` ({format_value(name)}) is not a query of the schema: use 'total', "
                f"'detailed' or attributes of ({', '.join(self.names)}) joined by '{SEP}'."
            )
        attrs = tuple(self.names.index(p) for p in parts)
        if list(attrs) != sorted(attrs):
            raise InvariantDPError(
                f"`query` ({format_value(name)}) must name its attributes in schema order: "
                f"{self.query_name(attrs)!r}."
            )
        return attrs

    def query_shape(self, name: str) -> tuple:
        """The shape of a query's answer (``()`` for the total)."""
        return tuple(self.shape[a] for a in self.query(name))

    def query_cells(self, name: str) -> int:
        """The number of cells of a query's answer."""
        return int(np.prod(self.query_shape(name), dtype=np.int64))

    def cell_frame(self, name: str):
        """A DataFrame of the query's cells in C order: one column per attribute, level labels."""

        attrs = self.query(name)
        if not attrs:
            return pd.DataFrame(index=pd.RangeIndex(1))
        grids = np.indices(tuple(self.shape[a] for a in attrs)).reshape(len(attrs), -1)
        cols = {}
        for a, idx in zip(attrs, grids, strict=True):
            labs = self.labels(self.names[a])
            cols[self.names[a]] = [labs[i] for i in idx] if self._labels[a] else idx
        return pd.DataFrame(cols, index=pd.RangeIndex(grids.shape[1]))

    def level_codes(self, attribute: str, values) -> np.ndarray:
        """Indices of ``values`` among the levels of ``attribute``; unknown levels are refused."""
        a = self._index(attribute)
        vals = np.asarray(values)
        if self._labels[a] is not None:
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


#: The P.L. 94-171 (redistricting) person schema of the 2020 Census: household or
#: group-quarters type (8), voting age (2), Hispanic origin (2), race (63 combinations
#: of six races); 2,016 detailed cells.  Levels are indexed as in the Bureau's schema.
PL94 = Schema({"hhgq": 8, "votingage": 2, "hispanic": 2, "cenrace": 63})
