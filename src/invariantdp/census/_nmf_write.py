"""Writing noisy measurements in the layout of the Bureau's 2020 release (see :mod:`._nmf_read`).

One ``<Level>.parquet`` directory per level with ``DPQuery`` and
``Constraint`` subdirectories; below the US level the files sit in Hive
partitions by state (``State=044``); every row has the attribute columns and
``query_shape``; every unit of every level has at least one Constraint row
(the Bureau's reader lists a level's units from Constraint); constraints
carry the Bureau's names where the Bureau has one (``hhgq_total_ub_con``,
``hhgq_total_lb_con``, ``nurse_nva_0_con``, ``total_con``).  The folder is
written under a temporary sibling name and renamed at the end, so a failure
never leaves a partial folder under the target name.

References
----------
``uscensusbureau/DAS_2020_GLS_Uncertainty_Evaluation`` (``GLS/main_two_pass_alg.py``:
how the Bureau's reader joins and parses these files).
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

import numpy as np

from .._validation import format_value
from ..exceptions import InvariantDPError
from ..families import DISCRETE_GAUSSIAN
from ._geography import geocode_prefix
from ._ingest import SUFFIX
from ._schema import SEP

__all__ = [
    "CONSTRAINT_NAMES",
    "RANDOMNESS_KEY",
    "SCHEMA_KEY",
    "SIGMA_SQ",
    "SPINE",
    "VARIANCE_KEY",
    "pyarrow_modules",
    "write_nmf",
]

#: parquet key-value metadata recording how the noise was drawn (absent: unknown)
RANDOMNESS_KEY = b"invariantdp.randomness"
#: the schema (attributes and recodes, JSON), so a file is read without being told it
SCHEMA_KEY = b"invariantdp.schema"
#: present (``b"variance"``): the variance column holds the noise's variance, as the
#: Bureau's does; files of earlier versions held the variance parameter sigma^2
VARIANCE_KEY = b"invariantdp.variance"
#: a DPQuery column this package adds beside ``variance``: the discrete Gaussian's
#: variance parameter sigma^2 itself (the variance is a rounded function of it)
SIGMA_SQ = "sigma_sq"
#: the levels of the Bureau's optimized spine, coarse to fine
SPINE = ("US", "State", "County", "Tract", "Block_Group", "Block")
#: the Bureau's names of constraints, by (query, sign) (``Constraints_PL94.py``)
CONSTRAINT_NAMES = {
    ("total", "="): "total",
    ("hhgq", "<="): "hhgq_total_ub",
    ("hhgq", ">="): "hhgq_total_lb",
    ("gqNursingTotal * nonvoting", "="): "nurse_nva_0",
}
#: the level whose geocodes partition the files below it
PARTITION = "State"
#: name of the row that lists a unit with no other constraint (">= 0": always true)
LISTED = "total_nonneg"


def pyarrow_modules():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:  # pragma: no cover - pyarrow is in the census extra
        raise ImportError(
            "noisy measurement files need pyarrow: pip install 'invariantdp[census]'."
        ) from exc
    return pa, pq


def _list_column(values: np.ndarray, lengths: np.ndarray, value_type):
    """A list column from flat values and row lengths, 64-bit offsets only when needed."""
    pa, _ = pyarrow_modules()
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    flat = pa.array(values, value_type)
    if offsets[-1] < 2**31:
        return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), flat)
    return pa.LargeListArray.from_arrays(pa.array(offsets, pa.int64()), flat)


def _schema_json(schema) -> bytes:
    return json.dumps({"attributes": schema.as_dict(), "recodes": schema.recodes}).encode()


def _attribute_columns(schema, query: str) -> dict:
    """Per attribute: ``*`` (summed out), its name (kept) or the recode used in its place."""
    attrs, _ = schema.query_spec(query)
    name = schema.canonical(query)
    parts = [] if name == "total" else list(schema.names) if name == "detailed" else name.split(SEP)
    return {
        attr: (parts[attrs.index(a)] if a in attrs else "*") for a, attr in enumerate(schema.names)
    }


def _query_shape(schema, query: str) -> list:
    """One factor per attribute: the query's size on it, 1 where it is summed out."""
    attrs, _ = schema.query_spec(query)
    sizes = dict(zip(attrs, schema.query_shape(query), strict=True))
    return [int(sizes.get(a, 1)) for a in range(len(schema.names))]


def _repeated(values: list, counts: list):
    """A string column holding ``values[i]`` ``counts[i]`` times (built in Arrow, not Python)."""
    pa, _ = pyarrow_modules()
    dictionary, index = np.unique(np.asarray(values, dtype=object).astype(str), return_inverse=True)
    indices = np.repeat(index.astype(np.int32), counts)
    return pa.DictionaryArray.from_arrays(indices, pa.array(dictionary, pa.string())).cast(
        pa.string()
    )


def _rows(nm, level: str, pieces: list, kind: str):
    """A pyarrow table of ``(name, query, units, values, variance or sign)`` pieces."""
    pa, _ = pyarrow_modules()
    schema = nm.schema
    geocodes = nm.geocodes(level)
    codes, flat, lengths, last, shapes, sizes = [], [], [], [], [], []
    attr_cols = {a: [] for a in schema.names}
    for _name, query, units, vals, extra in pieces:
        n, c = vals.shape
        sizes.append(n)
        codes.append(geocodes[units].astype(str))
        flat.append(vals.reshape(-1))
        lengths.append(np.full(n, c))
        last.append(extra)  # DPQuery: (variance, sigma^2) per row; Constraint: signs
        shapes.append(np.tile(np.array(_query_shape(schema, query), dtype=np.int32), n))
        for a, v in _attribute_columns(schema, query).items():
            attr_cols[a].append(v)
    values = np.concatenate(flat)
    whole = np.all(np.isfinite(values) & (values == np.round(values)) & (np.abs(values) <= 2**53))
    value_col = (
        _list_column(values.astype(np.int64), np.concatenate(lengths), pa.int64())
        if whole
        else _list_column(values, np.concatenate(lengths), pa.float64())
    )
    cols = {
        "geocode": pa.array(np.concatenate(codes), pa.string()),
        "query_name": _repeated([p[0] + SUFFIX[kind] for p in pieces], sizes),
        "value": value_col,
    }
    if kind == "DPQuery":
        sigma_sq = np.concatenate([p[1] for p in last])
        cols["variance"] = pa.array(np.concatenate([p[0] for p in last]), pa.float64())
        cols[SIGMA_SQ] = pa.array(sigma_sq, pa.float64())
    else:
        cols["sign"] = pa.array(np.concatenate(last).astype(str), pa.string())
    cols["query_shape"] = _list_column(
        np.concatenate(shapes), np.full(len(cols["geocode"]), len(schema.names)), pa.int32()
    )
    for a, parts in attr_cols.items():
        cols[a] = _repeated(parts, sizes)
    return pa.table(cols)


def _constraint_pieces(nm, level: str) -> list:
    """``(name, query, units, values, signs)`` of the level's Constraint rows."""
    pieces = []
    n_units = len(nm.geocodes(level))
    listed = np.zeros(n_units, dtype=bool)

    def add(query, sign, units, values):
        name = CONSTRAINT_NAMES.get((query, sign), query)
        pieces.append((name, query, units, values, np.full(units.size, sign, dtype=object)))
        listed[units] = True

    for (lev, q), t in nm.invariants.items():
        if lev == level:
            add(q, "=", t.units, t.values)
    zero_queries = {q for (lev, q) in nm.zeros if lev == level}
    for (lev, q, sign), t in nm.inequalities.items():
        if lev == level and not (sign == "<=" and q in zero_queries):
            add(q, sign, t.units, t.values)
    for (lev, q), t in nm.zeros.items():
        if lev != level:
            continue
        mask = np.asarray(t.values, dtype=bool)
        bound = np.full(mask.shape, np.inf)
        upper = nm.inequalities.get((lev, q, "<="))
        has_upper = np.zeros(t.units.size, dtype=bool)
        if upper is not None:
            pos = np.searchsorted(upper.units, t.units)
            pos = np.minimum(pos, max(upper.units.size - 1, 0))
            has_upper = upper.units.size > 0 and upper.units[pos] == t.units
            has_upper = np.asarray(has_upper, dtype=bool) & np.ones(t.units.size, dtype=bool)
            bound[has_upper] = upper.values[pos[has_upper]]
            rest = ~np.isin(upper.units, t.units)
            if rest.any():
                add(q, "<=", upper.units[rest], upper.values[rest])
        bound[mask] = 0.0
        exact = mask.all(axis=1) & ~has_upper  # every cell 0: an equality, as nurse_nva_0
        if exact.any():
            add(q, "=", t.units[exact], bound[exact])
        if (~exact).any():
            add(q, "<=", t.units[~exact], bound[~exact])
    if not listed.all():  # a unit with no constraint is listed by a bound that always holds
        units = np.flatnonzero(~listed)
        pieces.append(
            (
                LISTED,
                "total",
                units,
                np.zeros((units.size, 1)),
                np.full(units.size, ">=", dtype=object),
            )
        )
    return pieces


def _noise_variance(sigma_sq: np.ndarray) -> np.ndarray:
    """The discrete Gaussian's variance for each variance parameter (what the Bureau records)."""
    from ..distributions import discrete_gaussian

    uniq, inv = np.unique(np.asarray(sigma_sq, dtype=float), return_inverse=True)
    return np.asarray(discrete_gaussian.var(np.sqrt(uniq)), dtype=float)[inv].reshape(-1)


def _write_level(nm, level: str, root: Path, meta: dict) -> None:
    _, pq = pyarrow_modules()

    order = {q: i for i, q in enumerate(nm.schema.queries)}
    dpq = [
        (q, q, t.units, t.values, (_noise_variance(t.variance), t.variance))
        for (lev, q), t in sorted(
            nm.measurements.items(), key=lambda kv: (order.get(kv[0][1], len(order)), kv[0][1])
        )
        if lev == level and t.units.size
    ]
    con = [p for p in _constraint_pieces(nm, level) if p[2].size]
    geo = nm.geography
    partitioned = PARTITION in geo.names and geo.width(level) >= geo.width(PARTITION)
    for kind, pieces in (("DPQuery", dpq), ("Constraint", con)):
        if not pieces:
            continue
        table = _rows(nm, level, pieces, kind).replace_schema_metadata(meta)
        out = root / f"{level}.parquet" / kind
        if not partitioned:
            out.mkdir(parents=True)
            pq.write_table(table, out / "part-00000.parquet")
            continue
        codes = np.asarray(table.column("geocode").to_numpy(zero_copy_only=False), dtype=object)
        state = geocode_prefix(codes, geo.width(PARTITION))
        order_rows = np.argsort(state, kind="stable")
        values, starts = np.unique(state[order_rows], return_index=True)
        bounds = [*starts.tolist(), state.size]
        for value, lo, hi in zip(values, bounds[:-1], bounds[1:], strict=True):
            part = out / f"{PARTITION}={value}"
            part.mkdir(parents=True)
            rows = table if values.size == 1 else table.take(order_rows[lo:hi])
            pq.write_table(rows, part / "part-00000.parquet")


def write_nmf(nm, path) -> None:
    """Write ``nm`` in the release layout (see the module docstring), atomically.

    Refuses an existing non-empty directory (nothing is overwritten), and
    measurements the layout cannot hold (other linear constraints, noise
    other than the discrete Gaussian).  The folder is built under a
    temporary sibling and renamed to ``path`` once complete.
    """
    pyarrow_modules()
    root = Path(os.fspath(path))
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise InvariantDPError(
            f"`path` ({str(root)!r}) exists and is not an empty directory: nothing is overwritten."
        )
    if nm.linear:
        raise InvariantDPError(
            f"the measurements hold {len(nm.linear)} linear equality constraints that are not "
            "whole marginal queries: the noisy measurement file layout has no place for them."
        )
    # the layout names no noise family: read_nmf reads the Bureau's discrete Gaussian
    if nm.noise_family is not DISCRETE_GAUSSIAN:
        raise InvariantDPError(
            f"the file layout records discrete Gaussian noise only; these measurements have "
            f"{format_value(nm.noise)} noise."
        )
    meta = {
        RANDOMNESS_KEY: nm.randomness.encode(),
        SCHEMA_KEY: _schema_json(nm.schema),
        VARIANCE_KEY: b"variance",
    }
    root.parent.mkdir(parents=True, exist_ok=True)
    tmp = root.parent / f".{root.name}.partial-{uuid.uuid4().hex[:12]}"
    tmp.mkdir()
    try:
        for level in nm.levels:
            _write_level(nm, level, tmp, meta)
        if root.exists():
            root.rmdir()  # empty (checked above); the rename takes its place
        os.rename(tmp, root)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
