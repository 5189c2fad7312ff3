r"""Noisy measurement files: the Bureau's 2020 release layout, read with pyarrow.

The 2020 P.L. 94-171 noisy measurement file (NMF) is two *products*, each a
folder (``US_Person_PL_PROD``: persons; ``US_Unit_PL_PROD``: housing units)
holding one ``<Level>.parquet`` directory per level of the optimized spine::

    <product>/US.parquet/DPQuery/part-*.parquet
    <product>/US.parquet/Constraint/part-*.parquet
    <product>/State.parquet/DPQuery/State=044/part-*.parquet     (Hive partitions by state)
    <product>/State.parquet/Constraint/State=044/part-*.parquet
    ... County, Tract, Block_Group, Block

DPQuery rows: ``geocode`` (string; ``""`` at US), ``query_name`` (query +
``"_dpq"``), ``value`` (integer list, C order over ``query_shape``),
``variance`` (double: the discrete Gaussian noise's variance),
``query_shape`` (one integer per attribute, 1 for a summed one) and one
string column per attribute (``*`` summed out, the attribute kept, a
recode's name, or ``detailed``).  Constraint rows: the same with ``sign``
(``=``, ``<=``, ``>=``) instead of ``variance``, named by the constraint
(``total_con``, ``hhgq_total_lb_con``, ``hhgq_total_ub_con``,
``nurse_nva_0_con``).

How rows are read:

* A row's query is given by its attribute columns where the file has them,
  by its name otherwise (``<query>_dpq``, ``<query>_con``, or one of the
  Bureau's named constraints); a name and columns that disagree are refused.
* ``=`` rows are invariants (any query, recoded ones included); an ``=`` row
  of zeros, and the cells of a ``<=`` row with bound 0, are structural
  zeros; other bounds are kept (:meth:`NoisyMeasurements.inequality_report`)
  and reported by a warning (a ``>=`` bound of 0 says only that counts are
  non-negative); ``+inf`` in a ``<=`` row (``-inf`` in ``>=``) is an absent
  bound.
* Units that appear only in Constraint (the spine's bypassed units) are kept.
* ``variance`` is the noise's variance, as the Bureau's ``DPquery.Var`` is
  (``computeDiscreteGaussianVariance(sigma_sq)`` in ``primitives.py``); it is
  converted to the variance parameter :math:`\sigma^2` of the discrete
  Gaussian, which differs from it only for :math:`\sigma^2 < 2`.  Files of
  earlier versions of this package (which stored :math:`\sigma^2`) are
  recognised by their metadata and read as they were written.

Every bad row gets one error naming the file, the row and the field;
a level or file that yields nothing is an error; anything not read is
announced by a warning saying what and why.

References
----------
US Census Bureau, 2020 Census P.L. 94-171 noisy measurement files (AWS open
data registry, ``census-2020-pl94-nmf``); ``uscensusbureau/DAS_2020_GLS_Uncertainty_Evaluation``
(``GLS/main_two_pass_alg.py``, the Bureau's reader of these files);
``uscensusbureau/DAS_2020_Redistricting_Production_Code``
(``source/programs/engine/primitives.py``,
``source/programs/constraints/Constraints_PL94.py``).
"""

from __future__ import annotations

import json
import os
import re
import warnings
from pathlib import Path

import numpy as np

from .._dask_tasks import check_scheduler, run_tasks
from .._validation import format_value
from ..exceptions import InvariantDPError
from ._geography import Geography
from ._ingest import Chunk, assemble, bad_row
from ._measurements import NoisyMeasurements
from ._nmf_write import (
    RANDOMNESS_KEY,
    SCHEMA_KEY,
    SIGMA_SQ,
    SPINE,
    VARIANCE_KEY,
    pyarrow_modules,
    write_nmf,
)
from ._schema import PL94, PL94_UNITS, Schema
from ._table import QueryTable

__all__ = ["read_nmf", "variance_parameter", "write_nmf"]

_KINDS = ("DPQuery", "Constraint")
_TEXT = ("geocode", "query_name", "sign")
#: the products of a release and the schema each holds
PRODUCTS = {"persons": ("Person", PL94), "units": ("Unit", PL94_UNITS)}
#: the largest integer a float64 holds exactly
_EXACT = 2**53


def variance_parameter(variance: np.ndarray) -> np.ndarray:
    r"""The discrete Gaussian's :math:`\sigma^2` whose variance is ``variance`` (0 stays 0).

    The variance :math:`\sum_k k^2 e^{-k^2/2\sigma^2} / \sum_k e^{-k^2/2\sigma^2}` is
    increasing in :math:`\sigma^2` and below it; it equals it in float64 from
    :math:`\sigma^2 \approx 2` on, where the value is returned unchanged.
    """
    from scipy.optimize import brentq

    from ..distributions import discrete_gaussian

    variance = np.asarray(variance, dtype=float)
    uniq, inv = np.unique(variance, return_inverse=True)
    out = uniq.copy()
    for i, v in enumerate(uniq):
        if not np.isfinite(v) or v <= 0 or float(discrete_gaussian.var(np.sqrt(v))) == v:
            continue
        out[i] = brentq(
            lambda s2, v=v: float(discrete_gaussian.var(np.sqrt(s2))) - v,
            1e-4,
            max(1.0, v + 1.0),
            xtol=1e-15,
            rtol=4 * np.finfo(float).eps,
        )
    return out[inv].reshape(variance.shape)


def _files(directory: Path) -> list[Path]:
    """The data files of a DPQuery/Constraint directory (Spark's markers skipped), sorted."""
    if directory.is_file():
        return [directory]
    if not directory.is_dir():
        return []
    return sorted(
        p
        for p in directory.rglob("*")
        if p.is_file()
        and not any(part.startswith(("_", ".")) for part in p.relative_to(directory).parts)
    )


def _partition(path: Path, directory: Path) -> dict:
    """The Hive partition keys of a file below ``directory`` (``State=044`` -> {"State": "044"})."""
    out = {}
    for part in path.relative_to(directory).parts[:-1]:
        key, sep, value = part.partition("=")
        if sep and key:
            out[key] = value
    return out


def _kind(pa, field) -> str:
    t = field.type
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return "list:" + _kind(pa, t.value_field)
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_integer(t):
        return "int"
    if pa.types.is_floating(t):
        return "float"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "str"
    if pa.types.is_dictionary(t):
        return "str" if pa.types.is_string(t.value_type) else str(t)
    return str(t)


def _check_types(source: str, schema_arrow, cols: list, attrs: list) -> None:
    """Refuse columns of the wrong type (strings or booleans for numbers, numbers for text)."""
    pa, _ = pyarrow_modules()
    want = {
        "value": ("list:int", "list:float"),
        "query_shape": ("list:int",),
        "variance": ("float", "int"),
        SIGMA_SQ: ("float", "int"),
        **{c: ("str",) for c in (*_TEXT, *attrs)},
    }
    for name in cols:
        got = _kind(pa, schema_arrow.field(name))
        if got not in want.get(name, (got,)):
            rule = {
                "value": "a list of integers or floats",
                "query_shape": "a list of integers",
                "variance": "a number (float or integer)",
            }.get(name, "a string")
            raise InvariantDPError(
                f"{source}, field `{name}`: must be {rule}, not {schema_arrow.field(name).type} "
                "(values are not cast)."
            )


def _read_table(pfile, cols: list, source: str):
    """All rows of ``cols``; a data page that cannot be read is named by row group and field."""
    try:
        return pfile.read(columns=cols)
    except Exception as exc:  # pyarrow raises several types for a corrupt page
        for group in range(pfile.metadata.num_row_groups):
            for name in cols:
                try:
                    pfile.read_row_group(group, columns=[name])
                except Exception as inner:
                    first = sum(pfile.metadata.row_group(g).num_rows for g in range(group))
                    raise InvariantDPError(
                        f"{source}, row {first} (row group {group}), field `{name}`: the data "
                        f"cannot be read ({type(inner).__name__}: {inner})."
                    ) from None
        raise InvariantDPError(
            f"{source}: the data cannot be read ({type(exc).__name__}: {exc})."
        ) from None


def _one_array(column):
    """A column as one array: its only chunk as it is (``combine_chunks`` copies even one)."""
    if not hasattr(column, "combine_chunks"):
        return column
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _flat_list(column, source: str, name: str):
    """``(flat values, offsets)`` of a list column (nulls: empty lists).

    The values are int64 for an integer column (a view of the file's buffer,
    read-only), float64 otherwise.
    """
    pa, _ = pyarrow_modules()
    arr = _one_array(column)
    if arr.null_count:
        arr = arr.fill_null(pa.scalar([], type=arr.type))
    offsets = np.asarray(arr.offsets, dtype=np.int64)
    values = arr.values.slice(offsets[0], offsets[-1] - offsets[0])
    if values.null_count:
        row = int(
            np.searchsorted(offsets, np.flatnonzero(values.is_null())[0] + offsets[0], "right")
        )
        raise bad_row(source, row - 1, name, "holds a null number.")
    raw = np.asarray(values)
    # one pass (arrow's min_max) decides; the mask that names the row is built only for a
    # bad file
    signed = raw.dtype.kind == "i"
    if raw.dtype.kind in "iu" and raw.size:
        import pyarrow.compute as pc

        bounds = pc.min_max(values)
        low, high = bounds["min"].as_py(), bounds["max"].as_py()
    if raw.dtype.kind in "iu" and raw.size and (high > _EXACT or (signed and low < -_EXACT)):
        big = (raw > _EXACT) | (raw < -_EXACT) if signed else raw > _EXACT
        if big.any():
            row = int(np.searchsorted(offsets, np.flatnonzero(big)[0] + offsets[0], "right")) - 1
            raise bad_row(
                source,
                row,
                name,
                "holds an integer beyond 2^53, which a float64 does not hold exactly.",
            )
    # integers stay integers, as the file holds them (no copy: the largest arrays of a
    # read); the estimators take float64 of them where they compute
    kind = np.int64 if raw.dtype.kind in "iu" else np.float64
    return raw.astype(kind, copy=False), offsets - offsets[0]


def read_chunk(
    path: Path, source: str, kind: str, level: str, names: tuple, partition: dict, reader=None
):
    """One Parquet file of a level's rows as a :class:`Chunk`, and its metadata.

    ``reader(pfile, columns, source)``, if given, reads the table in place of
    every row (the part of a file a lazily read file needs).
    """
    pa, pq = pyarrow_modules()
    try:
        # pre-buffered: the column chunks read in few large requests (as pyarrow.dataset
        # does), which costs far less system time than one read per page
        pfile = pq.ParquetFile(path, pre_buffer=True)
    except Exception as exc:  # pyarrow raises several types for a broken file
        raise InvariantDPError(f"{source}: not a readable Parquet file ({exc}).") from None
    arrow = pfile.schema_arrow
    columns = arrow.names
    Chunk.missing(source, kind, columns)
    attrs = [a for a in names if a in columns]
    if attrs and len(attrs) != len(names):
        absent = [a for a in names if a not in columns]
        raise InvariantDPError(
            f"{source}: has the attribute column(s) {', '.join(attrs)} but not "
            f"{', '.join(absent)}: a query is described by every attribute column or by its "
            "name alone."
        )
    optional = [c for c in ("variance", "sign", "query_shape", SIGMA_SQ) if c in columns]
    cols = ["geocode", "query_name", "value", *optional, *attrs]
    if kind == "Constraint":
        cols = [c for c in cols if c not in ("variance", SIGMA_SQ)]
    if kind == "DPQuery" and "sign" in cols:
        cols.remove("sign")
    _check_types(source, arrow, cols, attrs)
    table = _read_table(pfile, cols, source) if reader is None else reader(pfile, cols, source)
    meta = {
        k.decode(): v.decode()
        for k, v in (arrow.metadata or {}).items()
        if k.startswith(b"invariantdp.")
    }
    flat, offsets = _flat_list(table.column("value"), source, "value")
    shapes = None
    if "query_shape" in cols:
        column = _one_array(table.column("query_shape"))
        null = np.asarray(column.is_null(), dtype=bool)
        sflat, soff = _flat_list(column, source, "query_shape")
        shapes = (sflat.astype(np.int64), soff, null)

    def text(name):
        return np.asarray(table.column(name).to_numpy(zero_copy_only=False), dtype=object)

    variance = None
    if kind == "DPQuery":
        var = table.column("variance").cast(pa.float64())
        variance = var.fill_null(np.nan).to_numpy().astype(float, copy=True)
        legacy = RANDOMNESS_KEY.decode() in meta and VARIANCE_KEY.decode() not in meta
        ok = np.isfinite(variance) & (variance > 0)
        if SIGMA_SQ in cols:  # written by this package: sigma^2 itself, beside the variance
            given = table.column(SIGMA_SQ).cast(pa.float64()).fill_null(np.nan).to_numpy()
            variance[ok] = given[ok]
        elif not legacy:  # the noise's variance -> the discrete Gaussian's sigma^2
            variance[ok] = variance_parameter(variance[ok])
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
        {a: text(a) for a in attrs} or None,
        partition or None,
    )
    return chunk, meta


def _product(root: Path, product):
    """The product folder below ``root`` (or ``root`` itself) and the product it names."""
    if product is not None and product not in PRODUCTS:
        raise InvariantDPError(
            f"`product` ({format_value(product)}) must be one of {', '.join(PRODUCTS)}."
        )

    def named(folder: Path):
        for prod, (word, _) in PRODUCTS.items():
            if re.search(rf"(^|_){word}(_|$)", folder.name):
                return prod
        return None

    def levels_in(folder: Path) -> bool:
        return any(p.is_dir() and p.name.endswith(".parquet") for p in folder.iterdir())

    if not root.is_dir():
        raise InvariantDPError(f"`path` ({str(root)!r}) is not a directory.")
    if levels_in(root):
        found = named(root)
        if product is not None and found is not None and found != product:
            raise InvariantDPError(
                f"`path` ({str(root)!r}) is the {found} product, not the {product} one."
            )
        return root, product or found
    subs = sorted(p for p in root.iterdir() if p.is_dir() and levels_in(p))
    if not subs:
        raise InvariantDPError(
            f"`path` ({str(root)!r}) holds no <Level>.parquet directory of a noisy "
            "measurement file, and no product folder holding them."
        )
    if product is None:
        if len(subs) == 1:
            return subs[0], named(subs[0])
        raise InvariantDPError(
            f"`path` holds several products ({', '.join(p.name for p in subs)}): pass "
            f"product={' or '.join(repr(p) for p in PRODUCTS)}."
        )
    hits = [p for p in subs if named(p) == product]
    if len(hits) != 1:
        raise InvariantDPError(
            f"`path` holds {len(hits)} folders of the {product} product among "
            f"({', '.join(p.name for p in subs)}); expected exactly one."
        )
    return hits[0], product


def _level_jobs(root: Path, states, geography) -> tuple[dict, list]:
    """``{level: [(file, source, kind, partition)]}`` of the level directories, and warnings."""
    found = sorted(p for p in root.iterdir() if p.is_dir() and p.name.endswith(".parquet"))
    jobs, notes = {}, []
    if geography is not None:
        names = [p.name[: -len(".parquet")] for p in found]
        missing = [lev for lev in geography.names if lev not in names]
        if missing:
            raise InvariantDPError(
                f"`path` has no directory for the level(s) {', '.join(missing)} of the geography."
            )
        other = [lev for lev in names if lev not in geography.names]
        if other:
            notes.append(
                f"the directories of {', '.join(other)} are not levels of the geography "
                f"({', '.join(geography.names)}) and were not read: pass a Geography that "
                "includes them, or none (the levels are then read from the file)."
            )
        found = [p for p in found if p.name[: -len(".parquet")] in geography.names]
    for folder in found:
        level = folder.name[: -len(".parquet")]
        kinds = [k for k in _KINDS if (folder / k).exists()]
        other = sorted(
            p.name
            for p in folder.iterdir()
            if p.name not in _KINDS and not p.name.startswith(("_", "."))
        )
        if not kinds:
            raise InvariantDPError(
                f"{folder.name} holds neither a DPQuery nor a Constraint directory"
                + (f" (it holds {', '.join(other)})" if other else " (it is empty)")
                + f": the level {level} cannot be read."
            )
        if other:
            notes.append(
                f"{folder.name}: {', '.join(other)} not read (only DPQuery and Constraint are "
                "parts of the layout)."
            )
        rows = []
        for kind in kinds:
            base = folder / kind
            for f in _files(base):
                part = _partition(f, base) if base.is_dir() else {}
                rows.append((f, str(f.relative_to(root.parent)), kind, part))
        if not rows:
            raise InvariantDPError(
                f"{folder.name}/{'+'.join(kinds)} holds no data file: the level {level} cannot "
                "be read."
            )
        jobs[level] = rows
    if states is not None:
        jobs, more = _select_states(jobs, states)
        notes += more
    return jobs, notes


def _select_states(jobs: dict, states) -> tuple[dict, list]:
    """Keep the files of the requested ``State=`` partitions; levels above the states go."""
    if isinstance(states, str) or not hasattr(states, "__iter__"):
        raise InvariantDPError(
            f"`states` ({format_value(states)}) must be a list of State partition values "
            "(e.g. ['044'])."
        )
    wanted = [str(s) for s in states]
    if not wanted or not all(s.isascii() and s.isdigit() for s in wanted):
        raise InvariantDPError(
            f"`states` ({format_value(states)}) must be a non-empty list of digit strings."
        )
    present = sorted({f[3]["State"] for rows in jobs.values() for f in rows if "State" in f[3]})
    missing = [s for s in wanted if s not in present]
    if missing:
        raise InvariantDPError(
            f"`states`: {', '.join(missing)} are not State partitions of the file "
            f"(present: {', '.join(present) or 'none'})."
        )
    out, notes = {}, []
    for level, rows in jobs.items():
        parted = [r for r in rows if "State" in r[3]]
        if not parted:
            notes.append(
                f"the level {level} is not partitioned by State and was not read: with `states` "
                "the State units are the roots (its measurements and constraints cover every "
                "state)."
            )
            continue
        if len(parted) != len(rows):
            bare = next(r for r in rows if "State" not in r[3])
            raise InvariantDPError(
                f"{bare[1]}: a file of a State-partitioned level outside any State= partition; "
                "`states` cannot select its rows."
            )
        out[level] = [r for r in parted if r[3]["State"] in wanted]
    return out, notes


def _order_levels(chunks: dict, geography) -> Geography:
    """The geography read from the file: levels ordered by geocode width, widths from rows."""
    if geography is not None:
        missing = [lev for lev in geography.names if lev not in chunks]
        if missing:
            raise InvariantDPError(
                f"`path` has no rows for the level(s) {', '.join(missing)} of the geography "
                "(with `states`: no State partition of them)."
            )
        return geography
    widths = {}
    for level, parts in chunks.items():
        source, code = next(
            ((ch.source, g) for ch in parts for g in ch.geocode[:1] if isinstance(g, str)),
            (None, None),
        )
        if source is None:
            raise InvariantDPError(
                f"the level {level} holds no rows ({len(parts)} file(s) of 0 rows): nothing "
                "says which units it has."
            )
        widths[level] = len(code)
    order = sorted(widths, key=widths.get)
    for a, b in zip(order, order[1:], strict=False):
        if widths[a] == widths[b]:
            raise InvariantDPError(
                f"the levels {a} and {b} have geocodes of the same width ({widths[a]}): a "
                "level's geocodes must be longer than those of the level above."
            )
    spine = [lev for lev in order if lev in SPINE]
    if spine:
        lo, hi = SPINE.index(spine[0]), SPINE.index(spine[-1])
        gap = [lev for lev in SPINE[lo : hi + 1] if lev not in widths]
        if gap:
            raise InvariantDPError(
                f"the file's levels skip the level(s) {', '.join(gap)} of the spine: a unit's "
                "parent must be a unit of the level just above."
            )
        if [lev for lev in order if lev in SPINE] != [lev for lev in SPINE if lev in widths]:
            raise InvariantDPError(
                f"the levels' geocode widths ({widths}) do not follow the spine's order "
                f"({', '.join(SPINE)})."
            )
    return Geography({lev: widths[lev] for lev in order})


def _schema_of(schema, product, jobs: dict) -> Schema:
    """The schema given, else the one the file records, its product's, or its columns'."""
    _, pq = pyarrow_modules()
    if schema is not None and not isinstance(schema, Schema):
        raise TypeError(f"`schema` must be a Schema, got {type(schema).__name__}.")
    first = next(rows[0] for rows in jobs.values() if rows)
    try:
        arrow = pq.read_schema(first[0])
    except Exception as exc:  # pyarrow raises several types for a broken file
        raise InvariantDPError(f"{first[1]}: not a readable Parquet file ({exc}).") from None
    stored = (arrow.metadata or {}).get(SCHEMA_KEY)
    if stored is not None:
        try:
            spec = json.loads(stored.decode())
            recorded = Schema(
                spec["attributes"], recodes={k: tuple(v) for k, v in spec["recodes"].items()}
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InvariantDPError(
                f"{first[1]}: the schema recorded in the file's metadata cannot be read ({exc})."
            ) from None
        if schema is not None and schema.shape != recorded.shape:

            def brief(x):
                return ", ".join(f"{n} {k}" for n, k in zip(x.names, x.shape, strict=True))

            raise InvariantDPError(
                f"`schema` (attributes {brief(schema)}) is not the schema the file records "
                f"(attributes {brief(recorded)})."
            )
        return recorded if schema is None else schema
    if schema is not None:
        return schema
    if product is not None:
        return PRODUCTS[product][1]
    for _, (_, known) in PRODUCTS.items():
        if set(known.names) <= set(arrow.names):
            return known
    raise InvariantDPError(
        "`schema` is not given and the file does not say it (no product in the folder name, "
        "no recorded schema, no attribute columns of a known product): pass schema=."
    )


def _add_invariants(nm: NoisyMeasurements, invariants) -> NoisyMeasurements:
    """``nm`` with known exact answers added: ``{level: {query: {geocode: value(s)}}}``."""
    from dataclasses import replace

    if not hasattr(invariants, "items"):
        raise InvariantDPError(
            f"`invariants` ({format_value(invariants)}) must map levels to {{query: {{geocode: "
            "value}}}} (e.g. {'State': {'total': {'044': 1097379}}})."
        )
    table = dict(nm.invariants)
    for level, queries in invariants.items():
        nm.geography.index(level)
        if not hasattr(queries, "items"):
            raise InvariantDPError(
                f"`invariants[{level!r}]` ({format_value(queries)}) must map queries to "
                "{geocode: value}."
            )
        for query, answers in queries.items():
            q = nm.schema.canonical(query)
            cells = nm.schema.query_cells(q)
            if not hasattr(answers, "items"):
                raise InvariantDPError(
                    f"`invariants[{level!r}][{query!r}]` must map geocodes to values "
                    "(a dict or a pandas Series)."
                )
            codes = [str(g) for g in answers.keys()]
            units = nm.unit_index(level, codes)
            vals = np.zeros((len(codes), cells))
            for i, (g, v) in enumerate(zip(codes, answers.values(), strict=True)):
                row = np.atleast_1d(np.asarray(v, dtype=float)).reshape(-1)
                if row.size != cells or not np.all(np.isfinite(row)) or np.any(row < 0):
                    raise InvariantDPError(
                        f"`invariants[{level!r}][{query!r}][{g!r}]` ({format_value(v)}) must be "
                        f"{cells} finite non-negative number(s), the query's cells."
                    )
                vals[i] = row
            old = table.get((level, q))
            if old is not None:
                same = np.isin(units, old.units)
                pos = np.searchsorted(old.units, units[same])
                if not np.array_equal(old.values[pos], vals[same]):
                    g = codes[int(np.flatnonzero(same)[0])]
                    raise InvariantDPError(
                        f"`invariants[{level!r}][{query!r}]` contradicts the file's invariant "
                        f"of unit {g!r}."
                    )
                units = np.concatenate([old.units, units[~same]])
                vals = np.concatenate([old.values, vals[~same]])
            order = np.argsort(units, kind="stable")
            table[(level, q)] = QueryTable(units[order], vals[order])
    return replace(nm, invariants=table)


def read_nmf(
    path,
    schema=None,
    geography=None,
    *,
    product=None,
    states=None,
    invariants=None,
    scheduler="serial",
    client=None,
):
    """Read a noisy measurement file (the Bureau's 2020 release layout) into ``NoisyMeasurements``.

    Parameters
    ----------
    path : str or path-like
        A product folder (``US_Person_PL_PROD``) holding ``<Level>.parquet``
        directories, or a folder holding product folders (then ``product``
        chooses one if there are several).  The layout (folders, partitions,
        levels and geocodes, columns, schemas, constraints), each fact with
        its source in the Bureau's code, is the user guide's page "The 2020
        noisy measurement files: layout reference" (``docs/guide/nmf_layout.md``).
    schema : Schema, optional
        Default: the one the file names (written by :meth:`NoisyMeasurements.to_nmf`),
        else the product's (:data:`~invariantdp.census.PL94` for persons,
        :data:`~invariantdp.census.PL94_UNITS` for units, from the folder
        name or the attribute columns).
    geography : Geography, optional
        Default: read from the file: its ``<Level>.parquet`` directories
        ordered by geocode width, each width that of the level's geocodes
        (the US level, geocode ``""``, is a width-0 root).  A Geography given
        must name every level read.
    product : {"persons", "units"}, optional
        Which product of a folder holding both.
    states : list of str, optional
        Read only these ``State=`` partitions (e.g. ``["044"]``); the levels
        above the states (US) are then not read (a warning says so).
    invariants : dict, optional
        Exact answers known besides the file, ``{level: {query: {geocode:
        value or list of values}}}`` (a pandas Series works as the inner
        mapping).  The 2020 state populations are exact but the file holds
        no State ``total`` constraint rows: add them as
        ``invariants={"State": {"total": {"044": 1097379}}}`` (spine geocodes).
        A value that contradicts the file's invariant is refused.
    scheduler : {"serial", "dask"}
        With ``"dask"``, read and check the files in parallel Dask tasks.
    client : dask.distributed.Client, optional
        The cluster to use with ``scheduler="dask"``; by default the running
        client, if any, else dask's local threads.

    Returns
    -------
    NoisyMeasurements
        Values as the file holds them: int64 for integer lists (the
        release's), read-only views of the file's buffers where the rows
        lie evenly; float64 for lists of floats.

    Raises
    ------
    InvariantDPError
        For a bad file: one error naming the file, the row and the field
        (unknown query names, attribute columns that disagree with the name,
        value lengths that do not match the schema, strings or booleans where
        numbers belong, integers beyond 2^53, geocodes of the wrong width, with
        characters other than ASCII digits, outside their partition or
        without a parent, negative or non-finite variances, unknown signs,
        repeated rows, unreadable data pages); a level directory without
        DPQuery or Constraint data, a level without rows, or a gap in the
        spine's levels.

    References
    ----------
    The Bureau's 2020 noisy measurement files and their reader
    (``DAS_2020_GLS_Uncertainty_Evaluation``, ``GLS/main_two_pass_alg.py``).

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> from invariantdp.census import Geography, NoisyMeasurements, Schema, read_nmf
    >>> dpq = pd.DataFrame({"geocode": ["", "1"], "query_name": ["total_dpq", "total_dpq"],
    ...                     "value": [[10.0], [9.0]], "variance": [4.0, 2.0]})
    >>> geo, schema = Geography({"US": 0, "State": 1}), Schema({"sex": 2})
    >>> nm = NoisyMeasurements.from_frames(dpq, None, schema, geo)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     nm.to_nmf(d + "/nmf")
    ...     back = read_nmf(d + "/nmf")
    >>> back.geography, back.measurements[("State", "total")].values.tolist()
    (Geography({'US': 0, 'State': 1}), [[9]])
    """
    check_scheduler(scheduler, client)
    pyarrow_modules()
    if geography is not None and not isinstance(geography, Geography):
        raise TypeError(f"`geography` must be a Geography, got {type(geography).__name__}.")
    root, product = _product(Path(os.fspath(path)), product)
    jobs, notes = _level_jobs(root, states, geography)
    if geography is not None:
        _order_levels(jobs, geography)
        jobs = {lev: jobs[lev] for lev in geography.names}
    schema = _schema_of(schema, product, jobs)
    flat = [
        (f, source, kind, level, schema.names, part)
        for level, rows in jobs.items()
        for f, source, kind, part in rows
    ]
    if scheduler == "serial":
        results = [read_chunk(*job) for job in flat]
    else:
        results = run_tasks(read_chunk, flat, client)
    chunks: dict = {}
    for job, (chunk, _) in zip(flat, results, strict=True):
        chunks.setdefault(job[3], []).append(chunk)
    geo = _order_levels(chunks, geography)
    for level in geo.names:
        if not any(ch.n for ch in chunks[level]):
            raise InvariantDPError(
                f"the level {level} holds no rows ({len(chunks[level])} file(s) of 0 rows): "
                "nothing says which units it has."
            )
    for note in notes:
        warnings.warn(note, UserWarning, stacklevel=2)
    marks = {m.get(RANDOMNESS_KEY.decode()) for _, m in results} - {None}
    randomness = marks.pop() if len(marks) == 1 else "unknown"
    ordered = [ch for level in geo.names for ch in chunks[level]]
    nm = NoisyMeasurements(**assemble(ordered, schema, geo, randomness))
    pool = pyarrow_modules()[0].default_memory_pool()
    if hasattr(pool, "release_unused"):  # the files' integer pages, now cast: back to the OS
        pool.release_unused()
    if invariants is not None:
        nm = _add_invariants(nm, invariants)
    return nm
