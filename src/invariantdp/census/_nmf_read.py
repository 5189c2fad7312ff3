"""Noisy measurement files: the Bureau's Parquet layout, read and written with pyarrow.

Layout of a directory ``path``, one subdirectory per geographic level::

    <path>/<Level>.parquet/DPQuery/*.parquet      geocode (string), query_name (query + "_dpq"),
                                                  value (list of numbers), variance (double)
    <path>/<Level>.parquet/Constraint/*.parquet   geocode, query_name (query + "_con"),
                                                  sign ("=", "<=", ">="), value (list)

Equality constraints (and noisy answers of variance 0) are invariants.  In a
``"<="`` row the entries with bound 0 are structural zeros; positive bounds,
and ``">="`` bounds above 0, are kept and reported but not used by the linear
estimator (a warning says so); ``+inf`` in a ``"<="`` row (``-inf`` in
``">="``) is an absent bound.  Other columns (the Bureau's ``query_shape``,
``plb``, level and attribute columns) are accepted; ``query_shape``, where
present, must describe as many cells as the value holds.

Files are read one at a time, keeping only the columns above, so the raw
directory never has to fit in memory; with ``scheduler="dask"`` (and a Dask
``client``, if given) the files are read and checked in parallel tasks.

References
----------
US Census Bureau, 2020 Census noisy measurement files for the P.L. 94-171
redistricting data and the DHC (AWS open data registry).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np

from .._dask_tasks import check_scheduler, run_tasks
from ..exceptions import InvariantDPError
from ._geography import Geography
from ._ingest import Chunk, assemble
from ._measurements import NoisyMeasurements
from ._nmf_write import RANDOMNESS_KEY, pyarrow_modules, write_nmf

__all__ = ["read_nmf", "write_nmf"]

_OPTIONAL = ("variance", "sign", "query_shape")


def _files(directory: Path) -> list[Path]:
    """The data files of a DPQuery/Constraint directory (Spark's markers skipped), sorted."""
    if directory.is_file():
        return [directory]
    if not directory.is_dir():
        return []
    return sorted(
        p for p in directory.rglob("*") if p.is_file() and not p.name.startswith(("_", "."))
    )


def _flat_list(column):
    """``(flat float64 values, offsets)`` of a list column (nulls: empty lists)."""
    pa, _ = pyarrow_modules()
    arr = column.combine_chunks() if hasattr(column, "combine_chunks") else column
    if arr.null_count:
        arr = arr.fill_null(pa.scalar([], type=arr.type))
    offsets = np.asarray(arr.offsets, dtype=np.int64)
    flat = np.asarray(arr.values.cast(pa.float64()), dtype=float)
    return flat[offsets[0] : offsets[-1]], offsets - offsets[0]


def read_chunk(path: Path, source: str, kind: str, level: str):
    """One Parquet file of a level's rows as a :class:`Chunk`, and its randomness marker."""
    pa, pq = pyarrow_modules()
    try:
        pfile = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises several types for a broken file
        raise InvariantDPError(f"{source}: not a readable Parquet file ({exc}).") from None
    names = pfile.schema_arrow.names
    Chunk.missing(source, kind, names)
    cols = ["geocode", "query_name", "value", *(c for c in _OPTIONAL if c in names)]
    table = pfile.read(columns=cols)
    meta = pfile.schema_arrow.metadata or {}
    for name in ("value", "query_shape"):
        if (
            name in cols
            and not pa.types.is_list(table.schema.field(name).type)
            and not (pa.types.is_large_list(table.schema.field(name).type))
        ):
            raise InvariantDPError(
                f"{source}: column `{name}` must be a list column, not "
                f"{table.schema.field(name).type}."
            )
    flat, offsets = _flat_list(table.column("value"))
    shapes = None
    if "query_shape" in cols:
        column = table.column("query_shape").combine_chunks()
        null = np.asarray(column.is_null(), dtype=bool)
        sflat, soff = _flat_list(column)
        shapes = (sflat.astype(np.int64), soff, null)

    def text(name):
        return np.asarray(table.column(name).to_numpy(zero_copy_only=False), dtype=object)

    variance = None
    if kind == "DPQuery":
        var = table.column("variance").cast(pa.float64())
        variance = np.asarray(var.fill_null(np.nan), dtype=float)
    chunk = Chunk(
        source,
        kind,
        text("geocode"),
        text("query_name"),
        flat,
        offsets,
        variance,
        text("sign") if kind == "Constraint" else None,
        shapes,
        level,
    )
    return chunk, meta.get(RANDOMNESS_KEY, b"").decode() or None


def _level_dirs(root: Path, geography: Geography | None) -> tuple[Geography, list]:
    found = {p.name[: -len(".parquet")] for p in root.glob("*.parquet") if p.is_dir()}
    if not found:
        raise InvariantDPError(
            f"`path` ({str(root)!r}) holds no <Level>.parquet directory of a noisy "
            "measurement file."
        )
    geo = Geography() if geography is None else geography
    levels = [lev for lev in geo.names if lev in found]
    if not levels:
        raise InvariantDPError(
            f"`path` holds the levels {sorted(found)}, none of the geography's "
            f"({', '.join(geo.names)})."
        )
    if geography is not None and len(levels) != len(geo):
        missing = [lev for lev in geo.names if lev not in found]
        raise InvariantDPError(f"`path` has no directory for the level(s) {', '.join(missing)}.")
    other = sorted(found - set(geo.names))
    if other:
        warnings.warn(
            f"the directories of {', '.join(other)} are not levels of the geography "
            f"({', '.join(geo.names)}) and were not read: pass a Geography that includes them.",
            UserWarning,
            stacklevel=3,
        )
    return geo, levels


def read_nmf(path, schema, geography=None, *, scheduler="serial", client=None):
    """Read a noisy measurement file directory (the Bureau's layout) into ``NoisyMeasurements``.

    Parameters
    ----------
    path : str or path-like
        The directory holding ``<Level>.parquet/DPQuery`` and
        ``<Level>.parquet/Constraint`` (see the module docstring).
    schema : Schema
        The histogram schema (e.g. :data:`~invariantdp.census.PL94`).
    geography : Geography, optional
        Its levels must all be present.  Default: the Bureau's levels that
        the directory holds (a contiguous run of State, County, Tract,
        Block_Group, Block).
    scheduler : {"serial", "dask"}
        With ``"dask"``, read and check the files in parallel Dask tasks.
    client : dask.distributed.Client, optional
        The cluster to use with ``scheduler="dask"``; by default the running
        client, if any, else dask's local threads.

    Returns
    -------
    NoisyMeasurements

    Raises
    ------
    InvariantDPError
        For a bad file: one error naming the file, the row and the field
        (unknown query names, value lengths that do not match the schema,
        geocodes of the wrong width or without a parent, negative or
        non-finite variances, unknown signs, repeated rows).

    References
    ----------
    The Bureau's 2020 noisy measurement files.

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> from invariantdp.census import Geography, NoisyMeasurements, Schema, read_nmf
    >>> dpq = pd.DataFrame({"geocode": ["1", "11"], "query_name": ["total_dpq", "total_dpq"],
    ...                     "value": [[10.0], [9.0]], "variance": [1.0, 2.0]})
    >>> geo, schema = Geography({"A": 1, "B": 2}), Schema({"sex": 2})
    >>> nm = NoisyMeasurements.from_frames(dpq, None, schema, geo)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     nm.to_nmf(d + "/nmf")
    ...     back = read_nmf(d + "/nmf", schema, geo)
    >>> back.measurements[("B", "total")].values.tolist()
    [[9.0]]
    """
    check_scheduler(scheduler, client)
    pyarrow_modules()
    root = Path(os.fspath(path))
    geo, levels = _level_dirs(root, geography)
    jobs = []
    for level in levels:
        for kind in ("DPQuery", "Constraint"):
            for f in _files(root / f"{level}.parquet" / kind):
                jobs.append((f, str(f.relative_to(root)), kind, level))
    if scheduler == "serial":
        results = [read_chunk(*job) for job in jobs]
    else:
        results = run_tasks(read_chunk, jobs, client)
    marks = {mark for _, mark in results if mark}
    randomness = marks.pop() if len(marks) == 1 else "unknown"
    return NoisyMeasurements(**assemble([c for c, _ in results], schema, geo, randomness))
