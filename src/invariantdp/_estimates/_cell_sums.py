"""The sums of cells a user asks :func:`invariantdp.estimate` for, as weight rows.

``sums=`` takes level names (group sums, like ``groupby(level=...).sum()``),
a mapping of names to selections (anything ``Series.loc`` takes on the cells'
index) or weights (a DataFrame labelled by the cells, or a 2-D array); each
form becomes an index for the result and one weight row per sum over the
release's cells (C order), checked before any estimate is computed.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from .._validation import InvariantDPError, format_value

__all__ = ["group_rows", "is_level_names", "level_positions", "selection_rows", "weight_rows"]


def level_positions(index: pd.Index, levels: list) -> list[int]:
    """The positions of the named levels in the cells' index (each once, each a level)."""
    names = list(index.names)
    for lv in levels:
        if lv not in names or lv is None:
            raise InvariantDPError(
                f"`sums` ({format_value(lv)}) must name a level of the release's labels "
                f"{[n for n in names if n is not None]}."
            )
    if len(set(levels)) != len(levels):
        raise InvariantDPError(f"`sums` ({format_value(levels)}) names a level twice.")
    return [names.index(lv) for lv in levels]


def selection_rows(index: pd.Index, sums: Mapping) -> tuple[pd.Index, np.ndarray]:
    """0/1 rows of the cells each named selection picks (anything ``Series.loc`` takes)."""
    if not sums:
        raise InvariantDPError("`sums` must name at least one sum.")
    pos = pd.Series(np.arange(len(index)), index=index)
    rows = np.zeros((len(sums), len(index)))
    for i, (name, sel) in enumerate(sums.items()):
        try:
            picked = pos.loc[sel]
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise InvariantDPError(
                f"`sums[{name!r}]` ({format_value(sel)}) does not select cells of the release: "
                f"{exc}"
            ) from None
        cells = np.atleast_1d(np.asarray(picked)).astype(np.int64)
        if cells.size == 0:
            raise InvariantDPError(f"`sums[{name!r}]` selects no cell.")
        if np.unique(cells).size != cells.size:
            raise InvariantDPError(f"`sums[{name!r}]` selects a cell twice; a sum counts it once.")
        rows[i, cells] = 1.0
    return pd.Index(list(sums), name="sum", tupleize_cols=False), rows


def cell_selection_rows(index: pd.Index, cells: Mapping) -> tuple[pd.Index, np.ndarray]:
    """0/1 rows of the cells named by labels: ``{"adults": {"age": ["18-64", "65+"]}}``.

    Each entry is the union of the cells whose label on every named level is
    among the listed ones (the cells of all levels not named).
    """
    if not isinstance(cells, Mapping) or not cells:
        raise InvariantDPError(
            f"`cells` ({format_value(cells)}) must map names to selections "
            '{level: [labels]} (e.g. {"adults": {"age": ["18-64", "65+"]}}).'
        )
    names = [n for n in index.names if n is not None]
    rows = np.zeros((len(cells), len(index)))
    for i, (name, spec) in enumerate(cells.items()):
        if not isinstance(spec, Mapping) or not spec:
            raise InvariantDPError(
                f"`cells[{name!r}]` ({format_value(spec)}) must map level names to lists of labels."
            )
        keep = np.ones(len(index), dtype=bool)
        for level, labels in spec.items():
            if level not in names:
                raise InvariantDPError(
                    f"`cells[{name!r}]` names the level {format_value(level)}; the cells' "
                    f"levels are {format_value(names)}."
                )
            if isinstance(labels, str) or not isinstance(labels, list | tuple | np.ndarray):
                raise InvariantDPError(
                    f"`cells[{name!r}][{level!r}]` ({format_value(labels)}) must be a list of "
                    "labels."
                )
            values = index.get_level_values(level)
            present = set(values)
            missing = [lab for lab in labels if lab not in present]
            if missing or len(labels) == 0:
                raise InvariantDPError(
                    f"`cells[{name!r}][{level!r}]` ({format_value(list(labels))}) must list "
                    f"labels of the level; {format_value(missing or labels)} are not among "
                    f"{format_value(list(values.unique()))}."
                )
            keep &= np.asarray(values.isin(list(labels)))
        if not keep.any():
            raise InvariantDPError(f"`cells[{name!r}]` selects no cell.")
        rows[i, keep] = 1.0
    return pd.Index(list(cells), name="cells", tupleize_cols=False), rows


def weight_rows(index: pd.Index, sums) -> tuple[pd.Index, np.ndarray]:
    """Rows of a weight DataFrame (columns: cell labels) or 2-D array (columns: cells)."""
    if isinstance(sums, pd.DataFrame):
        where = index.get_indexer(sums.columns)
        if np.any(where < 0):
            bad = sums.columns[np.flatnonzero(where < 0)[0]]
            raise InvariantDPError(
                f"`sums` has a column {format_value(bad)} that is not a cell of the release."
            )
        if np.unique(where).size != where.size:
            raise InvariantDPError("`sums` has a cell among its columns twice.")
        rows = np.zeros((len(sums), len(index)))
        rows[:, where] = sums.to_numpy(dtype=float)
        out_index = sums.index
    else:
        rows = np.asarray(sums, dtype=float)
        if rows.ndim != 2 or rows.shape[1] != len(index):
            raise InvariantDPError(
                f"`sums` as an array must have shape (rows, {len(index)}): one weight per cell; "
                f"got shape {rows.shape}."
            )
        out_index = pd.RangeIndex(rows.shape[0], name="combination")
    if not np.all(np.isfinite(rows)):
        raise InvariantDPError("`sums` weights must be finite.")
    return out_index, rows


def group_rows(index: pd.Index, levels: list) -> tuple[pd.Index, np.ndarray]:
    """0/1 rows of the groups of cells sharing their labels on ``levels`` (first appearance)."""
    frame = index.to_frame(index=False).iloc[:, level_positions(index, levels)]
    keys = pd.MultiIndex.from_frame(frame) if len(levels) > 1 else pd.Index(frame.iloc[:, 0])
    codes, uniq = pd.factorize(keys)
    rows = np.zeros((len(uniq), len(index)))
    rows[codes, np.arange(len(index))] = 1.0
    out = uniq if isinstance(uniq, pd.MultiIndex) else pd.Index(uniq, name=levels[0])
    if isinstance(out, pd.MultiIndex):
        out = out.set_names(levels)
    return out, rows


def is_level_names(sums) -> bool:
    """Whether ``sums`` names levels: a string or a non-empty list of strings."""
    return isinstance(sums, str) or (
        isinstance(sums, list | tuple) and len(sums) > 0 and all(isinstance(s, str) for s in sums)
    )
