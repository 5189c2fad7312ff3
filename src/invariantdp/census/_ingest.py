"""Rows in the noisy measurement file layout -> checked arrays per (level, query).

Shared by :func:`~invariantdp.census.read_nmf` (one :class:`Chunk` per
Parquet file) and :meth:`NoisyMeasurements.from_frames` (one per DataFrame).
Every bad row is refused with one error naming the file, the row and the
field; nothing is dropped or changed silently.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._validation import format_value
from ..exceptions import InvariantDPError
from ._geography import Geography, all_ascii_digits, geocode_prefix
from ._schema import SEP
from ._table import QueryTable

__all__ = ["SIGNS", "SUFFIX", "Chunk", "assemble", "bad_row"]

SUFFIX = {"DPQuery": "_dpq", "Constraint": "_con"}
SIGNS = ("=", "<=", ">=")
REQUIRED = {
    "DPQuery": ("geocode", "query_name", "value", "variance"),
    "Constraint": ("geocode", "query_name", "sign", "value"),
}


def bad_row(source: str, row: int, name: str, rule: str) -> InvariantDPError:
    """The one error of a bad row: ``"<file>, row <r>, field `<name>`: <rule>"``."""
    return InvariantDPError(f"{source}, row {row}, field `{name}`: {rule}")


@dataclass
class Chunk:
    """Columns of one file (or DataFrame) of rows; ``value`` flattened with ``offsets``."""

    source: str
    kind: str
    geocode: np.ndarray
    query_name: np.ndarray
    flat: np.ndarray
    offsets: np.ndarray
    variance: np.ndarray | None = None
    sign: np.ndarray | None = None
    shapes: tuple | None = None  # (flat dims, offsets, null rows) of query_shape
    level: str | None = None
    attrs: dict | None = None  # attribute columns: {attribute: values per row}
    partition: dict | None = None  # Hive partition of the file: {key: value}
    # filled by the checks: each row's distinct geocode, and per distinct geocode its
    # level (geography index) and unit index in that level
    codes: np.ndarray | None = None
    uniq: np.ndarray | None = None
    uniq_level: np.ndarray | None = None
    uniq_unit: np.ndarray | None = None

    @property
    def n(self) -> int:
        return self.geocode.size

    @staticmethod
    def missing(source: str, kind: str, columns) -> None:
        absent = [c for c in REQUIRED[kind] if c not in columns]
        if absent:
            raise InvariantDPError(
                f"{source}: the {kind} rows lack the column(s) {', '.join(absent)} "
                f"(required: {', '.join(REQUIRED[kind])})."
            )

    @classmethod
    def from_frame(cls, source: str, frame, kind: str, level=None) -> Chunk:
        """From a pandas DataFrame in the file layout (``value``: a list per row)."""
        cls.missing(source, kind, frame.columns)
        values = frame["value"].to_numpy()
        lengths = np.zeros(values.size, dtype=np.int64)
        parts = []
        for i, v in enumerate(values):
            arr = np.atleast_1d(np.asarray(v if v is not None else [], dtype=float))
            if arr.ndim != 1:
                raise bad_row(source, i, "value", "must be a flat list of numbers.")
            lengths[i] = arr.size
            parts.append(arr)
        shapes = None
        if "query_shape" in frame.columns:
            raw = frame["query_shape"].to_numpy()
            null = np.array([s is None for s in raw])
            dims = [np.asarray(s if s is not None else [], dtype=np.int64).reshape(-1) for s in raw]
            sizes = np.array([d.size for d in dims], dtype=np.int64)
            flat_dims = np.concatenate(dims) if dims else np.zeros(0, dtype=np.int64)
            shapes = (flat_dims, np.concatenate([[0], np.cumsum(sizes)]), null)
        return cls(
            source,
            kind,
            frame["geocode"].to_numpy(dtype=object),
            frame["query_name"].to_numpy(dtype=object),
            np.concatenate(parts) if parts else np.zeros(0),
            np.concatenate([[0], np.cumsum(lengths)]),
            frame["variance"].to_numpy(dtype=float) if kind == "DPQuery" else None,
            frame["sign"].to_numpy(dtype=object) if kind == "Constraint" else None,
            shapes,
            level,
        )


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _check_chunk(ch: Chunk, schema, geography: Geography):
    """Validate one chunk; return per row its level index, and per query name its attributes.

    Geocodes are checked once per distinct value (``ch.codes`` indexes
    ``ch.uniq``), query names likewise; the checks run before anything is built.
    """
    codes, uniq = pd.factorize(np.asarray(ch.geocode, dtype=object))
    uniq = np.asarray(uniq, dtype=object)
    if np.any(codes < 0):  # a null geocode
        raise bad_row(ch.source, _first(codes < 0), "geocode", "must not be null.")
    is_str = np.array([isinstance(g, str) for g in uniq], dtype=bool)
    text = np.array([g if isinstance(g, str) else "" for g in uniq], dtype=object)
    widths = np.array([len(g) for g in text], dtype=np.int64)
    digits = all_ascii_digits(text)
    known = np.array(geography.widths)
    if ch.level is not None:
        ok = is_str & digits & (widths == geography.width(ch.level))
        rule = f"must be a string of {geography.width(ch.level)} digits (level {ch.level})"
    else:
        ok = is_str & digits & np.isin(widths, known)
        rule = f"must be a string of digits of a level's width {tuple(geography.widths)}"
    if not ok.all():
        i = _first(~ok[codes])
        raise bad_row(ch.source, i, "geocode", f"{format_value(ch.geocode[i])} {rule}.")
    ch.codes, ch.uniq = codes, uniq
    ch.uniq_level = np.searchsorted(known, widths)
    level = ch.uniq_level[codes]
    _check_partition(ch, geography, text, codes)
    suffix = SUFFIX[ch.kind]
    inv, names, queries = _row_queries(ch, schema, suffix)
    cells = np.array([schema.query_cells(q) for q in queries], dtype=np.int64)
    lengths = np.diff(ch.offsets)
    expect = cells[inv]
    if np.any(lengths != expect):
        i = _first(lengths != expect)
        raise bad_row(
            ch.source,
            i,
            "value",
            f"holds {lengths[i]} numbers but query {queries[inv[i]]!r} of the "
            f"schema has {expect[i]} cells.",
        )
    if ch.shapes is not None:
        _check_shapes(ch, schema, queries, inv, lengths)
    # integers are finite; for floats NaN propagates through min and max: both finite
    # means every number is
    finite = (
        True
        if not ch.flat.size
        or ch.flat.dtype.kind in "iub"
        or np.isfinite(ch.flat.min() + ch.flat.max())
        else np.isfinite(ch.flat)
    )
    if ch.sign is not None and not np.all(finite):
        # an absent bound: +inf in a "<=" row, -inf in a ">=" row (never NaN, never "=")
        row_of = np.searchsorted(ch.offsets, np.arange(ch.flat.size), side="right") - 1
        sign = np.asarray(ch.sign, dtype=object).astype(str)[row_of]
        finite |= ((sign == "<=") & (ch.flat == np.inf)) | ((sign == ">=") & (ch.flat == -np.inf))
    if not np.all(finite):
        i = int(np.searchsorted(ch.offsets, _first(~finite), side="right") - 1)
        raise bad_row(
            ch.source, i, "value", "must hold finite numbers (or an absent bound, +-inf)."
        )
    if ch.variance is not None:
        var = ch.variance
        bad = ~np.isfinite(var) | (var < 0)
        if bad.any():
            i = _first(bad)
            raise bad_row(ch.source, i, "variance", f"({var[i]}) must be finite and >= 0.")
    if ch.sign is not None:
        bad = ~np.isin(np.asarray(ch.sign, dtype=object).astype(str), SIGNS)
        if bad.any():
            i = _first(bad)
            raise bad_row(
                ch.source, i, "sign", f"{format_value(ch.sign[i])} must be one of {SIGNS}."
            )
    return level, queries, inv, names


#: The Bureau's named constraints of the P.L. 94-171 products and the query each
#: bounds (``source/programs/constraints/Constraints_PL94.py`` of the production code):
#: used when a Constraint file has no attribute columns to say it.
BUREAU_CONSTRAINTS = {
    "total": "total",
    "hhgq_total_lb": "hhgq",
    "hhgq_total_ub": "hhgq",
    "nurse_nva_0": "gqNursingTotal * nonvoting",
}

#: what an attribute column holds for an attribute summed out of the query
SUMMED = "*"


def _check_partition(ch: Chunk, geography: Geography, text, codes) -> None:
    """A Hive partition ``<Level>=<geocode>`` holds only units inside that geocode."""
    for key, value in (ch.partition or {}).items():
        if key not in geography.names:
            continue
        inside = np.array([g.startswith(value) for g in text], dtype=bool)
        if not inside.all():
            i = _first(~inside[codes])
            raise bad_row(
                ch.source,
                i,
                "geocode",
                f"{format_value(ch.geocode[i])} lies outside its partition {key}={value}.",
            )


def _attribute_query(ch: Chunk, schema, row: int, combo) -> str:
    """The query that a row's attribute columns describe (``*``: summed out)."""
    parts = []
    for name, value in zip(schema.names, combo, strict=True):
        if not isinstance(value, str):
            raise bad_row(
                ch.source, row, name, "must be a string ('*', the attribute or a recode)."
            )
        if value == SUMMED:
            continue
        if value in (name, "detailed"):
            parts.append(name)
            continue
        rec = schema.recodes.get(value)
        if rec is None or rec[0] != name:
            own = [r for r, (attr, _) in schema.recodes.items() if attr == name]
            raise bad_row(
                ch.source,
                row,
                name,
                f"{value!r} is not '*', {name!r}, 'detailed' or a recode of {name!r}"
                + (f" ({', '.join(own)})." if own else " (the schema has none)."),
            )
        parts.append(value)
    return schema.canonical(SEP.join(parts)) if parts else "total"


def _row_queries(ch: Chunk, schema, suffix: str):
    """Per row the index of its query, the distinct query names, and their queries.

    Where the file has the attribute columns, they define the query (the
    name must then agree with them); otherwise the name does: ``<query>`` +
    suffix, or one of the Bureau's named constraints.
    """
    columns = [np.asarray(ch.query_name, dtype=object)]
    if ch.attrs:
        columns += [np.asarray(col, dtype=object) for col in ch.attrs.values()]
    key = np.zeros(columns[0].size, dtype=np.int64)
    for i, col in enumerate(columns):  # one integer per distinct combination of the columns
        codes, uniq = pd.factorize(col, use_na_sentinel=True)
        if i == 0 and np.any(codes < 0):
            raise bad_row(ch.source, _first(codes < 0), "query_name", "must not be null.")
        key = pd.factorize(key * (uniq.size + 1) + (codes + 1))[0]  # kept below rows^2
    _, first, inv = np.unique(key, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    names = np.array([str(n) for n in columns[0][first]], dtype=object)
    queries = []
    for j, name in enumerate(names):
        row = int(first[j])
        if not name.endswith(suffix):
            raise bad_row(
                ch.source,
                row,
                "query_name",
                f"{name!r} must end with {suffix!r} in {ch.kind} rows.",
            )
        stem = name[: -len(suffix)]
        try:
            named = schema.canonical(stem)
        except InvariantDPError:
            named = None
        if named is None and ch.kind == "Constraint" and stem in BUREAU_CONSTRAINTS:
            try:
                named = schema.canonical(BUREAU_CONSTRAINTS[stem])
            except InvariantDPError:
                named = None
        if ch.attrs:
            combo = [ch.attrs[a][row] for a in schema.names]
            query = _attribute_query(ch, schema, row, combo)
            if named is not None and named != query:
                raise bad_row(
                    ch.source,
                    row,
                    "query_name",
                    f"{name!r} names the query {named!r} but the attribute columns describe "
                    f"{query!r}.",
                )
        elif named is None:
            known = ", ".join(q + suffix for q in schema.queries[:6])
            raise bad_row(
                ch.source,
                row,
                "query_name",
                f"{name!r} is not a query of the schema (unknown query name; known: {known}, "
                "...) and the file has no attribute columns to say which query it is.",
            )
        else:
            query = named
        queries.append(query)
    return inv, names, queries


def _check_shapes(ch: Chunk, schema, queries, inv, lengths) -> None:
    """``query_shape``, where present, must hold the value's cells in the schema's layout."""
    dims, offsets, null = ch.shapes
    counts = np.diff(offsets)
    row_of = np.repeat(np.arange(counts.size), counts)
    cells = np.ones(counts.size, dtype=np.int64)
    np.multiply.at(cells, row_of, dims)
    bad = ~null & (cells != lengths)
    if bad.any():
        i = _first(bad)
        raise bad_row(
            ch.source,
            i,
            "query_shape",
            f"describes {cells[i]} cells but the value holds {lengths[i]} numbers.",
        )
    kept = dims != 1  # a dimension of 1 (the Bureau's total) is no dimension
    n_kept = np.bincount(row_of[kept], minlength=counts.size)
    for j, query in enumerate(queries):
        expect = np.array([n for n in schema.query_shape(query) if n != 1])
        rows = (inv == j) & ~null
        wrong = rows & (n_kept != expect.size)
        if not wrong.any() and expect.size:
            got = dims[kept & rows[row_of]].reshape(-1, expect.size)
            wrong_rows = np.flatnonzero(rows)[np.any(got != expect, axis=1)]
            wrong[wrong_rows] = True
        if wrong.any():
            i = _first(wrong)
            shape = tuple(int(d) for d in dims[offsets[i] : offsets[i + 1]])
            raise bad_row(
                ch.source,
                i,
                "query_shape",
                f"{shape} is not the schema's shape {schema.query_shape(query)} of query "
                f"{query!r}.",
            )


def _row_values(ch: Chunk, rows: np.ndarray, cells: int) -> np.ndarray:
    """``(rows, cells)`` values of rows of one query: a read-only view where they lie evenly.

    Rows written query by query (or unit by unit, each with the same queries)
    start at evenly spaced offsets: a strided view of the file's values, not a copy.
    """
    starts = ch.offsets[rows]
    stride = int(starts[1] - starts[0]) if rows.size > 1 else cells
    if rows.size and stride >= cells and np.all(np.diff(starts) == stride):
        base = ch.flat[starts[0] :]
        return np.lib.stride_tricks.as_strided(
            base,
            shape=(rows.size, cells),
            strides=(stride * base.itemsize, base.itemsize),
            writeable=False,
        )
    return ch.flat[starts[:, None] + np.arange(cells)[None, :]]


def assemble(
    chunks: list, schema, geography: Geography, randomness="unknown", notes: list | None = None
) -> dict:
    """Check every chunk; the keyword arguments of the ``NoisyMeasurements`` they describe.

    What is announced by a warning is appended to ``notes`` instead when a
    list is given (a task on another thread returns it for its caller to
    announce: the warnings filters are global to the process).
    """
    per_chunk = [_check_chunk(ch, schema, geography) for ch in chunks]
    present = sorted({int(lv) for lev, *_ in per_chunk for lv in np.unique(lev)})
    if not present:
        raise InvariantDPError("the noisy measurements hold no rows.")
    if present != list(range(present[0], present[-1] + 1)):
        missing = [geography.names[i] for i in range(present[0], present[-1]) if i not in present]
        raise InvariantDPError(
            f"the noisy measurements skip the level(s) {', '.join(missing)}: a unit's parent "
            "must be a unit of the level just above."
        )
    geo = geography.subset(geography.names[present[0]], geography.names[present[-1]])
    shift = present[0]
    units = []
    for lv in present:
        codes = [ch.uniq[ch.uniq_level == lv] for ch in chunks]
        units.append(np.sort(pd.unique(np.concatenate(codes)).astype(str)))
    for ch in chunks:  # each distinct geocode's unit index, once
        ch.uniq_unit = np.full(ch.uniq.size, -1, dtype=np.int64)
        for lv in present:
            sel = ch.uniq_level == lv
            if sel.any():
                ch.uniq_unit[sel] = pd.Index(units[lv - present[0]]).get_indexer(ch.uniq[sel])
    _check_parents(chunks, per_chunk, units, geo, shift)
    groups: dict = {}
    for ch, (lev, queries, inv, names) in zip(chunks, per_chunk, strict=True):
        for j in range(names.size):
            q = queries[j]
            sel_q = inv == j
            for lv in np.unique(lev[sel_q]):
                rows = np.flatnonzero(sel_q & (lev == lv))
                groups.setdefault((int(lv) - shift, q), []).append((ch, rows))
    return _tables(groups, schema, geo, units, randomness, notes)


def _check_parents(chunks, per_chunk, units, geo, shift):
    for i in range(1, len(units)):
        above = units[i - 1]
        prefix = geocode_prefix(units[i], geo.widths[i - 1])
        pos = np.minimum(np.searchsorted(above, prefix), above.size - 1)
        orphan = above[pos] != prefix
        if orphan.any():
            code = str(units[i][_first(orphan)])
            for ch, (lev, *_) in zip(chunks, per_chunk, strict=True):
                hit = (lev == i + shift) & (ch.uniq[ch.codes] == code)
                if hit.any():
                    raise bad_row(
                        ch.source,
                        _first(hit),
                        "geocode",
                        f"{code!r} has no parent: {str(prefix[_first(orphan)])!r} is not a unit of "
                        f"level {geo.names[i - 1]}.",
                    )


def _tables(groups, schema, geo: Geography, units, randomness, notes=None) -> dict:
    meas, inv, zeros, ineq = {}, {}, {}, {}
    seen: dict = {}
    for (li, q), parts in groups.items():
        level = geo.names[li]
        cells = schema.query_cells(q)
        for ch, rows in parts:
            idx = ch.uniq_unit[ch.codes[rows]]
            vals = _row_values(ch, rows, cells)
            if ch.kind == "DPQuery":
                var = ch.variance[rows]
                exact = var == 0
                keys = [(("dpq", level, q), ~exact), (("eq", level, q), exact)]
            else:
                sign = np.asarray(ch.sign[rows], dtype=object).astype(str)
                keys = [((s, level, q), sign == s) for s in SIGNS]
            for key, sel in keys:
                if not sel.any():
                    continue
                key = ("eq", level, q) if key[0] == "=" else key
                bucket = seen.setdefault(key, [])
                every = bool(sel.all())  # then no copies of the rows' values

                def pick(a, sel=sel, every=every):
                    return a if every else a[sel]

                bucket.append(
                    (ch, pick(rows), pick(idx), pick(vals), pick(var) if key[0] == "dpq" else None)
                )
    for key, parts in seen.items():
        kind, level, q = key
        idx = np.concatenate([p[2] for p in parts])
        order = np.argsort(idx, kind="stable")
        dup = np.flatnonzero(np.diff(idx[order]) == 0)
        if dup.size:
            where = order[dup[0] + 1]
            ch, rows = _locate(parts, where)
            raise bad_row(
                ch.source,
                rows,
                "geocode",
                f"repeats unit {str(units[geo.index(level)][idx[where]])!r} for query {q!r} "
                f"({'noisy answers' if kind == 'dpq' else kind + ' constraint'}).",
            )
        vals = _in_order([p[3] for p in parts], order)
        table_units = idx[order]
        if kind == "dpq":
            var = _in_order([p[4] for p in parts], order)
            meas[(level, q)] = QueryTable(table_units, vals, var)
        elif kind == "eq":
            # an exact 0 of every cell is a structural zero (counts are non-negative): the
            # Bureau's nurse_nva_0 (no one under 18 in nursing facilities) and empty units
            nil = (vals == 0).all(axis=1)
            if nil.any():
                _add_zeros(zeros, (level, q), table_units[nil], np.ones_like(vals[nil], bool))
            if not nil.all():
                inv[(level, q)] = QueryTable(table_units[~nil], vals[~nil])
        elif kind == "<=":
            if np.any(vals < 0):
                where = order[_first((vals < 0).any(axis=1))]
                ch, row = _locate(parts, where)
                raise bad_row(
                    ch.source, row, "value", "an upper bound below 0 cannot hold for counts."
                )
            zero = vals == 0
            if zero.any():
                keep = zero.any(axis=1)
                _add_zeros(zeros, (level, q), table_units[keep], zero[keep])
            bounded = ((vals > 0) & np.isfinite(vals)).any(axis=1)
            if bounded.any():
                ineq[(level, q, "<=")] = QueryTable(table_units[bounded], vals[bounded])
        else:
            bounded = (vals > 0).any(axis=1)
            if bounded.any():  # a lower bound of 0 says only what counts already are
                ineq[(level, q, ">=")] = QueryTable(table_units[bounded], vals[bounded])
    informative = list(ineq)
    if informative:
        lev, q, sign = informative[0]
        note = (
            f"{len(informative)} sets of inequality constraints (e.g. {sign!r} on {q!r} at "
            f"{lev}) are kept but not used: the GLS estimator is linear and imposes only the "
            "equality invariants and the structural zeros (see inequality_report())."
        )
        if notes is None:
            warnings.warn(note, UserWarning, stacklevel=4)
        else:
            notes.append(note)
    return dict(
        schema=schema,
        geography=geo,
        units=tuple(units),
        measurements=meas,
        invariants=inv,
        zeros=zeros,
        inequalities=ineq,
        randomness=randomness,
    )


def _in_order(arrays: list, order: np.ndarray) -> np.ndarray:
    """The arrays' rows joined and put in ``order``; the array itself where nothing moves."""
    if len(arrays) == 1 and np.array_equal(order, np.arange(order.size)):
        return arrays[0]
    return np.concatenate(arrays)[order]


def _add_zeros(zeros: dict, key, units: np.ndarray, mask: np.ndarray) -> None:
    """Add zero masks to ``zeros[key]``, a unit's masks from several rows joined by OR."""
    have = zeros.get(key)
    if have is not None:
        units = np.concatenate([have.units, units])
        mask = np.concatenate([have.values, mask])
    uniq, where = np.unique(units, return_inverse=True)
    merged = np.zeros((uniq.size, mask.shape[1]), dtype=bool)
    np.logical_or.at(merged, where, mask)
    zeros[key] = QueryTable(uniq, merged)


def _locate(parts, position: int):
    """``(chunk, row)`` of the ``position``-th row of concatenated parts."""
    for ch, rows, *_ in parts:
        if position < rows.size:
            return ch, int(rows[position])
        position -= rows.size
    raise IndexError(position)
