"""Writing noisy measurements in the Bureau's file layout (see :mod:`.nmf`)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .._validation import format_value
from ..exceptions import InvariantDPError
from ..families import DISCRETE_GAUSSIAN
from ._ingest import SUFFIX

__all__ = ["RANDOMNESS_KEY", "pyarrow_modules", "write_nmf"]

#: parquet key-value metadata recording how the noise was drawn (absent: unknown)
RANDOMNESS_KEY = b"invariantdp.randomness"


def pyarrow_modules():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:  # pragma: no cover - pyarrow is in the census extra
        raise ImportError(
            "noisy measurement files need pyarrow: pip install 'invariantdp[census]'."
        ) from exc
    return pa, pq


def _list_column(blocks: list, value_type):
    """A list column from ``(rows, length)`` arrays, 64-bit offsets only when needed."""
    pa, _ = pyarrow_modules()
    lengths = np.concatenate([np.full(b.shape[0], b.shape[1]) for b in blocks])
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    flat = pa.array(np.concatenate([b.reshape(-1) for b in blocks]), value_type)
    if offsets[-1] < 2**31:
        return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), flat)
    return pa.LargeListArray.from_arrays(pa.array(offsets, pa.int64()), flat)


def _rows(nm, level: str, pieces: list, kind: str):
    """A pyarrow table of rows ``(units, query, values, variance or sign)``."""
    pa, _ = pyarrow_modules()
    codes, names, values, last, shapes = [], [], [], [], []  # one entry per piece
    geocodes = nm.geocodes(level)
    for query, units, vals, extra in pieces:
        n, c = vals.shape
        codes.append(geocodes[units].astype(str))
        names.append(np.full(n, query + SUFFIX[kind], dtype=object))
        values.append(vals.astype(float).reshape(n, c))
        last.append(extra)
        shapes.append((n, list(nm.schema.query_shape(query))))
    value_col = _list_column(values, pa.float64())
    shape_col = _list_column(
        [np.tile(np.array(s, dtype=np.int32), (n, 1)) for n, s in shapes], pa.int32()
    )
    cols = {
        "geocode": pa.array(np.concatenate(codes) if codes else [], pa.string()),
        "query_name": pa.array(np.concatenate(names) if names else [], pa.string()),
        "value": value_col,
    }
    if kind == "DPQuery":
        cols["variance"] = pa.array(np.concatenate(last) if last else [], pa.float64())
    else:
        cols["sign"] = pa.array(np.concatenate(last) if last else [], pa.string())
    cols["query_shape"] = shape_col
    return pa.table(cols)


def write_nmf(nm, path) -> None:
    """Write ``nm`` in the noisy measurement file layout (see :func:`read_nmf`).

    Refuses an existing non-empty directory (nothing is overwritten), and
    measurements the layout cannot hold (other linear constraints, noise
    other than the discrete Gaussian).
    """
    _, pq = pyarrow_modules()
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
    meta = {RANDOMNESS_KEY: nm.randomness.encode()}
    order = {q: i for i, q in enumerate(nm.schema.queries)}
    for li, level in enumerate(nm.levels):
        dpq, con = [], []
        seen = np.zeros(len(nm.units[li]), dtype=bool)
        for (lev, q), t in sorted(nm.measurements.items(), key=lambda kv: order[kv[0][1]]):
            if lev == level:
                dpq.append((q, t.units, t.values, t.variance))
                seen[t.units] = True
        for (lev, q), t in nm.invariants.items():
            if lev == level:
                con.append((q, t.units, t.values, np.full(t.units.size, "=", dtype=object)))
                seen[t.units] = True
        for (lev, q, sign), t in nm.inequalities.items():
            if lev == level:
                con.append((q, t.units, t.values, np.full(t.units.size, sign, dtype=object)))
                seen[t.units] = True
        for (lev, q), t in nm.zeros.items():
            if lev != level:
                continue
            in_ineq = nm.inequalities.get((lev, q, "<="))
            keep = ~np.isin(t.units, in_ineq.units) if in_ineq is not None else slice(None)
            bound = np.where(t.values[keep], 0.0, np.inf)
            con.append((q, t.units[keep], bound, np.full(bound.shape[0], "<=", dtype=object)))
            seen[t.units] = True
        if not seen.all():  # units known only as parents: an absent bound keeps them listed
            units = np.flatnonzero(~seen)
            con.append(
                ("total", units, np.full((units.size, 1), np.inf), np.full(units.size, "<="))
            )
        for kind, pieces in (("DPQuery", dpq), ("Constraint", con)):
            pieces = [p for p in pieces if p[1].size]
            if not pieces:
                continue
            out = root / f"{level}.parquet" / kind
            out.mkdir(parents=True, exist_ok=True)
            table = _rows(nm, level, pieces, kind)
            pq.write_table(table.replace_schema_metadata(meta), out / "part-0.parquet")
