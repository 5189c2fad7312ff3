"""The geographic hierarchy: named levels with fixed geocode widths.

A unit is named by its geocode, a string of ASCII digits; its parent at the
level above is the prefix of the geocode of that level's width (a tract
``"01001020100"`` lies in county ``"01001"``, in state ``"01"``).  The
coarsest level may have width 0: a single root unit with geocode ``""`` (the
nation, ``US``, of the Bureau's spines).

References
----------
US Census Bureau, 2020 Census tabulation geography (geocode widths State 2,
County 5, Tract 11, Block Group 12, Block 16); the 2020 noisy measurement
files use the *optimized* spine (US ``""``, State 3, County 9, ...), whose
widths are read from the files (see :func:`~invariantdp.census.read_nmf`).
"""

from __future__ import annotations

import numpy as np

from .._validation import format_value
from ..exceptions import InvariantDPError

__all__ = ["Geography", "all_ascii_digits", "ascii_digits", "geocode_prefix"]


def ascii_digits(text: str) -> bool:
    """Whether ``text`` is empty or made of the ASCII digits 0-9 only.

    ``str.isdigit`` also accepts other scripts' digits (``"١٢"``) and
    superscripts, which are not geocodes.
    """
    return text.isascii() and (text == "" or text.isdigit())


def all_ascii_digits(texts) -> np.ndarray:
    """:func:`ascii_digits` of each string of an array, vectorised over their code points."""
    texts = np.asarray(texts, dtype=object)
    if texts.size == 0:
        return np.zeros(0, dtype=bool)
    fixed = texts.astype(str)
    lengths = np.fromiter((len(t) for t in texts), np.int64, texts.size)
    width = max(int(lengths.max()), 1)
    points = np.ascontiguousarray(fixed.astype(f"U{width}")).view(np.uint32).reshape(-1, width)
    inside = np.arange(width)[None, :] < lengths[:, None]  # a NUL inside a string is no digit
    return np.all(~inside | ((points >= 48) & (points <= 57)), axis=1)


def geocode_prefix(codes, width: int) -> np.ndarray:
    """The first ``width`` characters of each geocode (``""`` for width 0), as a str array."""
    codes = np.asarray(codes, dtype=object).astype(str)
    if width == 0:  # a U0 cast would keep the whole string
        return np.zeros(codes.shape, dtype="U1")
    return codes.astype(f"U{width}")  # a shorter string dtype truncates


#: the Bureau's levels of the P.L. 94-171 and DHC spine below the nation, and their widths
BUREAU_LEVELS = {"State": 2, "County": 5, "Tract": 11, "Block_Group": 12, "Block": 16}


class Geography:
    """Named geographic levels from coarse to fine, each with its geocode width.

    Parameters
    ----------
    levels : mapping of str to int, optional
        ``{level name: geocode width}``, coarse to fine, widths strictly
        increasing; the first may be 0 (one root unit, geocode ``""``).
        Default: the Bureau's tabulation State 2, County 5, Tract 11,
        Block_Group 12, Block 16.

    References
    ----------
    The Bureau's 2020 noisy measurement files (their geographic levels).

    Examples
    --------
    >>> from invariantdp.census import Geography
    >>> g = Geography()
    >>> g.names
    ('State', 'County', 'Tract', 'Block_Group', 'Block')
    >>> g.parent("01001020100", "Tract")
    '01001'
    >>> g.subset("County", "Tract").widths
    (5, 11)
    >>> Geography({"US": 0, "State": 3}).parent("044", "State")
    ''
    """

    def __init__(self, levels=None):
        levels = dict(BUREAU_LEVELS if levels is None else levels)
        if not levels:
            raise InvariantDPError("`levels` must name at least one geographic level.")
        names, widths = [], []
        for name, width in levels.items():
            if not isinstance(name, str) or not name:
                raise InvariantDPError(
                    f"level name {format_value(name)} must be a non-empty string."
                )
            least = 1 if names else 0
            if not isinstance(width, int | np.integer) or isinstance(width, bool) or width < least:
                rule = ">= 1" if names else ">= 0 (0: a single root unit, geocode '')"
                raise InvariantDPError(
                    f"the geocode width of `{name}` ({format_value(width)}) must be an int {rule}."
                )
            if widths and width <= widths[-1]:
                raise InvariantDPError(
                    f"the geocode width of `{name}` ({width}) must exceed that of "
                    f"`{names[-1]}` ({widths[-1]}): levels go from coarse to fine."
                )
            names.append(name)
            widths.append(int(width))
        self.names = tuple(names)
        self.widths = tuple(widths)

    def __len__(self) -> int:
        return len(self.names)

    def __eq__(self, other) -> bool:
        return isinstance(other, Geography) and (self.names, self.widths) == (
            other.names,
            other.widths,
        )

    def __hash__(self) -> int:
        return hash((self.names, self.widths))

    def __repr__(self) -> str:
        inner = ", ".join(f"{n!r}: {w}" for n, w in zip(self.names, self.widths, strict=True))
        return f"Geography({{{inner}}})"

    def index(self, level: str) -> int:
        """The position of ``level`` (0 the coarsest)."""
        try:
            return self.names.index(level)
        except ValueError:
            raise InvariantDPError(
                f"`level` ({format_value(level)}) is not a level of the geography "
                f"({', '.join(self.names)})."
            ) from None

    def width(self, level: str) -> int:
        return self.widths[self.index(level)]

    def subset(self, first: str, last: str) -> Geography:
        """The contiguous levels from ``first`` to ``last``."""
        i, j = self.index(first), self.index(last)
        if j < i:
            raise InvariantDPError(f"`last` ({last!r}) must not be above `first` ({first!r}).")
        return Geography(dict(zip(self.names[i : j + 1], self.widths[i : j + 1], strict=True)))

    def parent(self, geocode: str, level: str) -> str:
        """The geocode of the unit above ``geocode`` (of level ``level``)."""
        i = self.index(level)
        if i == 0:
            raise InvariantDPError(f"units of the top level `{level}` have no parent.")
        return geocode[: self.widths[i - 1]]

    def check_geocodes(self, geocodes: np.ndarray, level: str):
        """Positions of geocodes of the wrong width or with characters other than ASCII digits."""
        width = self.width(level)
        codes = np.asarray(geocodes, dtype=object)
        lengths = np.fromiter(
            (len(g) if isinstance(g, str) else -1 for g in codes), int, codes.size
        )
        bad = lengths != width
        if not bad.any():
            uniq, inv = np.unique(codes.astype(str), return_inverse=True)
            bad = ~all_ascii_digits(uniq)[inv]
        return np.flatnonzero(bad)

    def tree(self, units: list) -> list:
        """``parents[l]``: for each (sorted) unit of level ``l``, its parent's index above.

        ``units[l]`` holds the sorted geocodes of level ``l``.  Returns the list
        of parent index arrays (level 0: ``-1``) and raises, naming the first
        unit whose parent is missing, if a prefix is not a unit above.
        """
        parents = [np.full(len(units[0]), -1, dtype=np.int64)]
        for lev in range(1, len(units)):
            above = np.asarray(units[lev - 1], dtype=object).astype(str)
            prefix = geocode_prefix(units[lev], self.widths[lev - 1])
            pos = np.searchsorted(above, prefix) if above.size else None
            if pos is None:
                ok = np.zeros(prefix.size, dtype=bool)
            else:
                pos = np.minimum(pos, max(above.size - 1, 0))
                ok = above[pos] == prefix
            if not ok.all():
                first = int(np.flatnonzero(~ok)[0])
                raise InvariantDPError(
                    f"unit {units[lev][first]!r} of level `{self.names[lev]}` has no parent: "
                    f"{prefix[first]!r} is not a unit of level `{self.names[lev - 1]}`."
                )
            parents.append(pos.astype(np.int64))
        return parents
