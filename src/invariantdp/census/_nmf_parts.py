r"""A noisy measurement file solved part by part: a state county by county, the nation on Dask.

:meth:`NMFParts.open` reads no rows: it returns the file's folder, schema,
geography and list of files.  :func:`~invariantdp.census.gls` then solves it
in parts, so that the rows and arrays of no more than one county (or of a
run of small counties, never more rows than the largest county) are in
memory at once, besides what is kept across the passes: the kept estimates
of every unit (below) and, per state, the solution of its State and county
levels from the bottom-up pass (a few ``m x m`` blocks per county, about
24 kB each for the persons file), which the top-down pass starts from:

* the *parts* are the subtrees of the units of the level below ``State``
  (the counties; without a ``State`` level, the subtrees of the units of
  level 1); a *state* is the subtree of a ``State`` unit (without one, of a
  root unit);
* bottom-up, each state reads its own and its counties' rows (a pyarrow
  scan of its partition files that keeps the rows whose geocode starts with
  the state's, reading only the row groups whose geocode statistics can hold
  them), then splits its files below the State level by county into
  temporary files, one row group at a time (every file read once, whatever
  the order of its rows); each county's subtree is read from its own files,
  solved to the county's summary (estimate and covariance given the
  subtree) and dropped; the state is solved from its counties' summaries;
* the levels above the states (US) are solved from the states' summaries,
  then top-down; each state is split again, each county read and solved
  again, finishing top-down from its county's final estimate.  The two
  passes read each file twice instead of holding it.
* Parts are solved in the dense-factor algebra of
  :func:`~invariantdp._gls.solve_blocks` (the persons file's recodes and
  zeros), which needs every unit identified by its subtree, as the 2020
  files are (the detailed query is measured at the blocks).

What is kept of every unit of every level is the estimate and variance of
every cell of the queries asked for (``gls(parts, queries=...)``): a few
numbers per unit, not its histogram (2,016 cells for P.L. 94-171) and
covariance blocks.  With ``scheduler="dask"`` each state is a task on a
worker, which reads its state's files there (the folder must be readable
from the workers); only the states' summaries come to the driver and go back
down, and the kept estimates stay on the workers until
:meth:`PartsEstimate.estimate` asks for them.

The estimates equal those of ``gls(read_nmf(folder))`` to rounding (the
same arithmetic on every unit, in the same dense-factor algebra).

References
----------
Cumings-Menon & Zhuravlev (2024), "Least squares estimation for hierarchical
data", arXiv:2404.13164 (the two passes; the Bureau runs them on Spark, one
task per state); Apache Arrow, ``pyarrow.parquet.ParquetFile`` (row groups
and their statistics).
"""

from __future__ import annotations

import os
import pickle
import shutil
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .._dask_tasks import client_of, run_tasks
from .._estimates import check_clip
from .._gls import (
    block_path_refusal,
    onto_sole_children,
    partitioned_bottom_up,
    partitioned_top_down,
    replace_root,
    tree_dense,
)
from .._validation import check_confidence_level, format_value
from ..exceptions import InvariantDPError
from ._estimate_frames import UNIDENTIFIED, check_geocodes, estimate_frame
from ._geography import Geography
from ._ingest import assemble, bad_row
from ._measurements import NoisyMeasurements
from ._nmf_read import _level_jobs, _order_levels, _product, _schema_of, read_chunk
from ._nmf_write import RANDOMNESS_KEY, pyarrow_modules
from ._schema import Schema

__all__ = ["NMFParts", "PartsEstimate"]


_SPOOL_ROWS = 1 << 16
"""Rows a state's split holds before writing them (one row group per county)."""


def _may_hold(group, col: int, prefixes: tuple) -> bool:
    """Whether a row group's geocode statistics (min, max) allow a geocode with a prefix."""
    st = group.column(col).statistics
    if st is None or not st.has_min_max:
        return True
    lo, hi = str(st.min), str(st.max)
    # a geocode starting with p lies in [p, p + "\x7f"]: digits sort below it
    return any(lo <= p + "\x7f" and hi >= p for p in prefixes)


def _scan(pfile, cols: list, prefixes: tuple):
    """The rows of ``cols`` whose geocode starts with one of ``prefixes``, row group by row group.

    A row group whose geocode statistics (min, max) cannot hold such a
    geocode is not read; the others are read one at a time and filtered, so
    at most one row group beyond the rows kept is in memory.
    """
    pa, _ = pyarrow_modules()
    import pyarrow.compute as pc

    meta = pfile.metadata
    col = pfile.schema_arrow.get_field_index("geocode")
    pieces = []
    for g in range(meta.num_row_groups):
        if not _may_hold(meta.row_group(g), col, prefixes):
            continue
        part = pfile.read_row_group(g, columns=cols)
        keep = None
        for p in prefixes:
            hit = pc.starts_with(part.column("geocode"), p)
            keep = hit if keep is None else pc.or_(keep, hit)
        pieces.append(part.filter(pc.fill_null(keep, False)))
    if not pieces:
        return pfile.schema_arrow.empty_table().select(cols)
    return pa.concat_tables(pieces)


@dataclass(frozen=True)
class _Rows:
    """The reader :func:`read_chunk` uses for a part: :func:`_scan` with its prefixes."""

    prefixes: tuple

    def __call__(self, pfile, cols, source):
        try:
            return _scan(pfile, cols, self.prefixes)
        except InvariantDPError:
            raise
        except Exception as exc:  # pyarrow raises several types for a corrupt page
            raise InvariantDPError(
                f"{source}: the data cannot be read ({type(exc).__name__}: {exc})."
            ) from None


@dataclass(frozen=True)
class NMFParts:
    """A noisy measurement file to be solved in parts, without holding it (:meth:`open`).

    It holds no rows: ``gls(parts, queries=[...])`` reads them part by part.
    Bottom-up, each state's files are split by county (one Parquet row group
    at a time) and each county's subtree is read, solved to its county's
    summary and dropped; the levels above the counties are solved from the
    summaries; top-down, each county is read and solved again from its
    county's final estimate.  Memory is that of the largest county's rows
    and arrays, plus what the passes keep: the kept estimates of every unit
    (a few numbers per unit and query) and each state's State- and
    county-level solution between the passes (a few ``m x m`` blocks per
    county), on the driver in a serial run, on the workers with Dask (the
    driver then holds the levels above the states and the states'
    summaries).  The estimates equal those of ``gls(read_nmf(folder))`` to rounding.  With
    ``gls(parts, scheduler="dask", client=client)`` each state is a task
    that reads its own files on a worker (see the user guide, "A national
    run").  The parts are solved in the dense-factor algebra, which needs
    every unit identified by its subtree (the 2020 files measure the
    detailed query at the blocks).

    Attributes
    ----------
    path : pathlib.Path
        The product folder.
    schema : Schema
    geography : Geography
        Read from the folder as :func:`read_nmf` reads it.
    files : dict
        ``{level: ((file, source, kind, partition), ...)}``.
    randomness : str
        What the files say of their noise's source.
    invariants : dict or None
        Exact answers added at the levels down to ``State`` (``read_nmf(invariants=)``).

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> from invariantdp.census import (
    ...     Geography, NMFParts, NoisyMeasurements, Schema, gls, read_nmf)
    >>> dpq = pd.DataFrame({"geocode": ["1", "11", "12", "111", "121"],
    ...                     "query_name": ["total_dpq"] * 3 + ["detailed_dpq"] * 2,
    ...                     "value": [[10.0], [6.0], [3.0], [2.0, 3.0], [1.0, 3.0]],
    ...                     "variance": 2.0})
    >>> geo = Geography({"State": 1, "County": 2, "Tract": 3})
    >>> nm = NoisyMeasurements.from_frames(dpq, None, Schema({"sex": 2}), geo)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     nm.to_nmf(d + "/nmf")
    ...     parts = NMFParts.open(d + "/nmf")
    ...     est = gls(parts)
    ...     whole = gls(read_nmf(d + "/nmf")).estimate("total", "Tract")
    >>> parts.geography, parts.part_level
    (Geography({'State': 1, 'County': 2, 'Tract': 3}), 'County')
    >>> df = est.estimate("total", "Tract")
    >>> bool(np.allclose(df["estimate"], whole["estimate"], rtol=1e-12))
    True
    """

    path: Path
    schema: Schema
    geography: Geography
    files: dict = field(repr=False)
    randomness: str = "unknown"
    invariants: dict | None = field(default=None, repr=False)

    @classmethod
    def open(cls, path, schema=None, geography=None, *, product=None, states=None, invariants=None):
        """A noisy measurement file to solve in parts: its levels, schema and files, no rows.

        The arguments are those of :func:`~invariantdp.census.read_nmf`; the
        levels and their widths are read from each level's first row.
        ``invariants`` apply to the levels down to ``State`` (the others are
        read by :func:`~invariantdp.census.gls`, part by part).

        Returns
        -------
        NMFParts
        """
        _, pq = pyarrow_modules()
        if geography is not None and not isinstance(geography, Geography):
            raise TypeError(f"`geography` must be a Geography, got {type(geography).__name__}.")
        _check_invariants(invariants, geography)
        root, product = _product(Path(os.fspath(path)), product)
        jobs, notes = _level_jobs(root, states, geography)
        if invariants is not None:  # levels the folder has, before any file is opened
            unknown = [lev for lev in invariants if lev not in jobs]
            if unknown:
                raise InvariantDPError(
                    f"`invariants` at {', '.join(map(str, unknown))}: not a level read from the "
                    f"file (levels {', '.join(jobs)})."
                )
        if geography is not None:
            _order_levels(jobs, geography)
            jobs = {lev: jobs[lev] for lev in geography.names}
        schema = _schema_of(schema, product, jobs)
        firsts, marks = {}, set()
        for level, rows in jobs.items():
            firsts[level] = []
            for f, source, _, _ in rows:
                try:
                    pfile = pq.ParquetFile(f)
                except Exception as exc:  # pyarrow raises several types for a broken file
                    raise InvariantDPError(
                        f"{source}: not a readable Parquet file ({exc})."
                    ) from None
                marks.add((pfile.schema_arrow.metadata or {}).get(RANDOMNESS_KEY))
                meta = pfile.metadata
                groups = [g for g in range(meta.num_row_groups) if meta.row_group(g).num_rows]
                if groups:
                    first = pfile.read_row_group(groups[0], columns=["geocode"]).column(0)[0]
                    firsts[level].append(_First(source, np.asarray([first.as_py()], dtype=object)))
                    break
        geo = _order_levels(firsts, geography)
        for note in notes:
            warnings.warn(note, UserWarning, stacklevel=2)
        marks.discard(None)
        randomness = marks.pop().decode() if len(marks) == 1 else "unknown"
        files = {lev: tuple(jobs[lev]) for lev in geo.names}
        parts = cls(root, schema, geo, files, randomness)
        names = geo.names
        t = geo.index(parts.state_level)
        if t + 1 >= len(names):
            raise InvariantDPError(
                f"a file is solved in parts below its {parts.state_level} level, and this one has "
                f"no level below it (levels {', '.join(names)}): read it whole with read_nmf."
            )
        if invariants is not None:
            _check_invariants(invariants, geo)
            object.__setattr__(parts, "invariants", invariants)
        return parts

    @property
    def state_level(self) -> str:
        """The level whose units are solved as one task each (``State``, else the root)."""
        names = self.geography.names
        return "State" if "State" in names else names[0]

    @property
    def part_level(self) -> str:
        """The level whose subtrees are read and solved one at a time (the counties)."""
        return self.geography.names[self.geography.index(self.state_level) + 1]

    def _solve(self, queries, scheduler, client):
        """What :func:`gls` does with a file solved in parts."""
        return solve_parts(self, ["total"] if queries is None else queries, scheduler, client)

    def _files_of(self, level: str, states) -> list:
        """The files of ``level`` that can hold rows of ``states`` (None: every file)."""
        rows = self.files[level]
        if states is None:
            return list(rows)
        wanted = set(states)
        return [r for r in rows if "State" not in r[3] or r[3]["State"] in wanted]

    def _rows(self, levels: list, prefixes=None, files=None, notes=None) -> NoisyMeasurements:
        """The rows of ``levels`` whose geocodes start with one of ``prefixes`` (None: all).

        ``files`` ``[(file, source, kind, level, partition)]``, if given, are
        read whole instead (a county's spool, :func:`_spool`).  What reading
        them would announce by a warning is appended to ``notes``, a list.
        """
        if files is None:
            w = self.geography.width(self.state_level)
            states = None if prefixes is None else {p[:w] for p in prefixes}
            reader = None if prefixes is None else _Rows(tuple(prefixes))
            files = []
            for level in levels:
                for f, source, kind, part in self._files_of(level, states):
                    if prefixes is not None:
                        source = (
                            f"{source} (its rows of geocodes {' or '.join(prefixes)}..., counted "
                            "from 0)"
                        )
                    files.append((f, source, kind, level, part))
        else:
            reader = None
        chunks = _chunks(files, self.schema.names, reader)
        geo = Geography({lev: self.geography.width(lev) for lev in levels})
        return NoisyMeasurements(**assemble(chunks, self.schema, geo, self.randomness, notes))


def _check_invariants(invariants, geography) -> None:
    """Refuse ``invariants`` that are not ``{level: {query: {geocode: value}}}`` at the top levels.

    With ``geography`` (None: not known yet) the levels must be those down to
    its state level (the levels below are read part by part, by :func:`gls`).
    """
    if invariants is None:
        return
    if not hasattr(invariants, "items"):
        raise InvariantDPError(
            f"`invariants` ({format_value(invariants)}) must map levels to {{query: "
            "{geocode: value}}."
        )
    for level, queries in invariants.items():
        if not hasattr(queries, "items"):
            raise InvariantDPError(
                f"`invariants[{level!r}]` ({format_value(queries)}) must map queries to "
                "{geocode: value}."
            )
        for query, answers in queries.items():
            if not hasattr(answers, "items"):
                raise InvariantDPError(
                    f"`invariants[{level!r}][{query!r}]` must map geocodes to values "
                    "(a dict or a pandas Series)."
                )
    if geography is None:
        return
    names = geography.names
    top = names[: names.index("State" if "State" in names else names[0]) + 1]
    deep = [lev for lev in invariants if lev not in top]
    if deep:
        raise InvariantDPError(
            f"`invariants` at {', '.join(map(str, deep))}: in parts, known answers are "
            f"added at the levels {', '.join(top)} only (the parts below are read by gls)."
        )


def _chunks(files: list, names: tuple, reader) -> list:
    """The ``Chunk`` of each file (what one step of a solve in parts holds)."""
    return [
        read_chunk(f, source, kind, level, names, part, reader)[0]
        for f, source, kind, level, part in files
    ]


def _spool(parts: NMFParts, state: str, counties, folder: Path) -> dict:
    """Split one state's files below the State level by county, one row group at a time.

    Returns ``({county: [(file, source, kind, level, partition)]}, {county:
    rows})``, files in ``folder`` that hold exactly the county's subtree's
    rows (in file order), so that each county is read from its own files:
    every file of the state is read once per pass, whatever the order of its
    rows.  Only the rows whose geocode starts with the state's are kept (a
    file may hold several states' rows when it has no partition by state), and
    row groups whose geocode statistics cannot hold one are not read.  A kept
    row whose geocode does not start with a county of the state is refused,
    as :func:`read_nmf` refuses a unit without a parent.  A row group's rows
    are put in county order by one stable sort and cut into runs, each run
    buffered for its county; the buffers are written (one row group per
    county) when they hold :data:`_SPOOL_ROWS` rows, and at the end of the file.
    """
    pa, pq = pyarrow_modules()
    geo = parts.geography
    wc = geo.width(parts.part_level)
    known = pa.array(sorted(str(c) for c in counties), type=pa.string())
    out: dict = {str(c): [] for c in counties}
    counts = dict.fromkeys(out, 0)
    levels = geo.names[geo.index(parts.part_level) :]
    n = 0
    for level in levels:
        for f, source, kind, part in parts._files_of(level, {state}):
            try:
                pfile = pq.ParquetFile(f)
            except Exception as exc:  # pyarrow raises several types for a broken file
                raise InvariantDPError(f"{source}: not a readable Parquet file ({exc}).") from None
            if "geocode" not in pfile.schema_arrow.names:
                raise InvariantDPError(f"{source}: the rows lack the column(s) geocode.")
            sink = _Sink(pfile.schema_arrow, folder, n, source, kind, level, part, parts, out)
            try:
                _split_file(pfile, source, state, known, wc, sink, counts)
            finally:
                sink.close()
            n += 1
    return out, counts


def _split_file(pfile, source: str, state: str, known, wc: int, sink, counts: dict) -> None:
    """Hand one file's rows of ``state`` to ``sink`` by county, one row group at a time."""
    pa, _ = pyarrow_modules()
    import pyarrow.compute as pc

    meta = pfile.metadata
    col = pfile.schema_arrow.get_field_index("geocode")
    first = 0
    for g in range(meta.num_row_groups):
        size = meta.row_group(g).num_rows
        if not _may_hold(meta.row_group(g), col, (state,)):
            first += size
            continue
        table = _row_group(pfile, g, source, first)
        codes = table.column("geocode")
        if codes.null_count:
            row = first + int(np.flatnonzero(np.asarray(codes.is_null()))[0])
            raise bad_row(source, row, "geocode", "must not be null.")
        # a file without a partition by state holds other states' rows: not this state's
        mine = np.flatnonzero(np.asarray(pc.starts_with(codes, state)))
        if mine.size < table.num_rows:
            table = table.take(mine)
        if table.num_rows:
            heads = pc.utf8_slice_codeunits(table.column("geocode"), 0, wc).cast(pa.string())
            pos = np.asarray(pc.index_in(heads, value_set=known).fill_null(-1))
            if pos.min() < 0:
                bad = int(np.flatnonzero(pos < 0)[0])
                raise bad_row(
                    source,
                    first + int(mine[bad]),
                    "geocode",
                    f"{table.column('geocode')[bad].as_py()!r} has no parent: "
                    f"{heads[bad].as_py()!r} is not a unit of level {sink.parts.part_level} "
                    f"in {sink.parts.state_level} {state}.",
                )
            # one stable sort puts the rows in county order, file order kept within a county
            order = np.argsort(pos, kind="stable")
            ranked = pos[order]
            table = table.take(order)
            cuts = np.flatnonzero(np.diff(ranked)) + 1
            ends = np.r_[cuts, ranked.size].tolist()
            for lo, hi in zip(np.r_[0, cuts].tolist(), ends, strict=True):
                code = known[int(ranked[lo])].as_py()
                sink.add(code, table.slice(lo, hi - lo))
                counts[code] += hi - lo
        first += size
    sink.flush()


class _Sink:
    """One file's rows of a state, buffered per county and written to the county's own file."""

    def __init__(self, schema, folder, n, source, kind, level, part, parts, out):
        self.schema, self.folder, self.n = schema, folder, n
        self.source, self.kind, self.level, self.part = source, kind, level, part
        self.parts, self.out = parts, out
        self.writers, self.buffers, self.held = {}, {}, 0

    def add(self, code: str, rows) -> None:
        self.buffers.setdefault(code, []).append(rows)
        self.held += rows.num_rows
        if self.held >= _SPOOL_ROWS:
            self.flush()

    def flush(self) -> None:
        """Write each county's buffered rows as one row group."""
        pa, pq = pyarrow_modules()
        for code, pieces in self.buffers.items():
            if code not in self.writers:
                path = self.folder / f"{code}-{self.n}.parquet"
                self.writers[code] = pq.ParquetWriter(path, self.schema)
                note = f"{self.source} (its rows of {self.parts.part_level} {code}, counted from 0)"
                self.out[code].append((path, note, self.kind, self.level, self.part))
            table = pa.concat_tables(pieces)
            self.writers[code].write_table(table, row_group_size=max(table.num_rows, 1))
        self.buffers.clear()
        self.held = 0

    def close(self) -> None:
        for w in self.writers.values():
            w.close()


def _row_group(pfile, g: int, source: str, first: int):
    """Row group ``g`` of a file, every column; an unreadable one is named."""
    try:
        return pfile.read_row_group(g)
    except Exception as exc:  # pyarrow raises several types for a corrupt page
        raise InvariantDPError(
            f"{source}, rows from {first} (row group {g}): the data cannot be read "
            f"({type(exc).__name__}: {exc})."
        ) from None


class _First:
    """A level's first geocode, where :func:`_order_levels` reads the level's width."""

    def __init__(self, source, geocode):
        self.source, self.geocode = source, geocode


# -- the tasks ---------------------------------------------------------------------------


def _names(nm: NoisyMeasurements) -> dict:
    return {i: (lev, nm.units[i]) for i, lev in enumerate(nm.levels)}


def _problem(nm: NoisyMeasurements, root=None):
    prob = nm.to_problem()
    if root is not None:
        prob = replace_root(prob, root)
    return onto_sole_children(prob)


def _county(parts: NMFParts, codes: list, root, files: dict, notes: list):
    """The problem of consecutive counties' subtrees (their items from ``root``), its names."""
    levels = list(parts.geography.names[parts.geography.index(parts.part_level) :])
    nm = parts._rows(levels, codes, [f for code in codes for f in files[code]], notes)
    return _problem(nm, root), _names(nm)


def _groups(rows: list) -> list:
    """``(first, stop)`` of runs of consecutive counties of at most the largest one's rows.

    Small counties are solved together: fewer reads and smaller overheads,
    and never more rows at once than the largest county alone.
    """
    budget, out, first, held = max(rows, default=0), [], 0, 0
    for c, n in enumerate(rows):
        if c > first and held + n > budget:
            out.append((first, c))
            first, held = c, 0
        held += n
    if rows:
        out.append((first, len(rows)))
    return out


class _Spool:
    """A temporary folder of one state's rows split by county (removed on exit).

    Entering gives ``(files per county, groups of counties solved together)``.
    """

    def __init__(self, parts, state, counties):
        self.args = (parts, state, [str(c) for c in counties])

    def __enter__(self):
        self.folder = Path(tempfile.mkdtemp(prefix="invariantdp-parts-"))
        try:
            files, rows = _spool(*self.args, self.folder)
        except BaseException:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise
        return files, _groups([rows[c] for c in self.args[2]])

    def __exit__(self, *exc):
        shutil.rmtree(self.folder, ignore_errors=True)


def _state_up(parts: NMFParts, code: str, root, dense):
    """Bottom-up over one state, county by county: its summary and what top-down needs.

    What reading the state's rows would announce by a warning is returned as
    ``notes`` (each distinct text once), for the driver to announce: a task
    does not touch the warnings filters, which every thread shares.
    """
    t = parts.geography.index(parts.state_level)
    notes: list = []
    nm = parts._rows(list(parts.geography.names[t : t + 2]), [code], notes=notes)
    if len(nm.units) < 2:
        raise InvariantDPError(
            f"{parts.state_level} {code} has no unit of level {parts.part_level}: nothing "
            "below it to solve in parts (read the file whole with read_nmf)."
        )
    mid = _problem(nm, root)
    dense = frozenset(dense) | tree_dense(mid)
    with _Spool(parts, code, nm.units[1]) as (files, groups):
        summaries = None
        while summaries is None:
            summaries, dense = _counties_up(parts, nm.units[1], mid, files, groups, dense, notes)
    leaves = tuple(np.concatenate(a) for a in zip(*summaries, strict=True))
    sol = partitioned_bottom_up(mid, dense, _names(nm), leaves=leaves)
    notes = sorted(set(notes))
    return {"solution": sol, "units": nm.units, "dense": dense, "notes": notes}


def _counties_up(parts, counties, mid, files, groups, dense, notes):
    """The counties' summaries, a group at a time; None if the algebra must grow."""
    summaries = []
    for c0, c1 in groups:
        codes = [str(c) for c in counties[c0:c1]]
        sub, names = _county(parts, codes, mid.subtree(1, [(c0, c1)]), files, notes)
        more = tree_dense(sub)
        if not more <= dense:  # the state again, in the larger algebra
            return None, dense | more
        sol = partitioned_bottom_up(sub, dense, names)
        summaries.append((sol.z[0], sol.V[0], sol.zero[0]))
    return summaries, dense


def _summary(up: dict) -> dict:
    sol = up["solution"]
    return {
        "z": sol.z[0],
        "V": sol.V[0],
        "zero": sol.zero[0],
        "dense": up["dense"],
        "notes": up["notes"],
    }


def _keep(sol, lev: int, spec: dict) -> dict:
    return {
        q: (sol.estimates(lev, attrs, rec), sol.query_variances(lev, attrs, rec))
        for q, (attrs, rec) in spec.items()
    }


def _join(pieces: list, levels) -> dict:
    """Per level, the kept estimates of consecutive pieces concatenated."""
    out = {}
    for level in levels:
        parts = [p[level] for p in pieces if level in p]
        if not parts:
            continue
        out[level] = {
            "geocode": np.concatenate([p["geocode"] for p in parts]),
            **{
                q: tuple(np.concatenate([p[q][i] for p in parts]) for i in range(2))
                for q in parts[0]
                if q != "geocode"
            },
        }
    return out


def _state_down(parts: NMFParts, up: dict, final: tuple, spec: dict) -> dict:
    """Top-down over one state from its final ``(x, F, G)``; the kept estimates per level."""
    geo = parts.geography
    t = geo.index(parts.state_level)
    mid = partitioned_top_down(up["solution"], final)
    counties = [str(c) for c in up["units"][1]]
    pieces = []
    again: list = []  # the notes of the bottom-up pass's reading, announced already
    with _Spool(parts, str(up["units"][0][0]), counties) as (files, groups):
        for c0, c1 in groups:
            items = mid.problem.subtree(1, [(c0, c1)])
            sub, names = _county(parts, counties[c0:c1], items, files, again)
            sol = partitioned_bottom_up(sub, up["dense"], names)
            sl = slice(c0, c1)
            partitioned_top_down(sol, (mid.x[1][sl], mid.F[1][sl], mid.G[1][sl]), consume=True)
            pieces.append(
                {
                    geo.names[t + 1 + lev]: {
                        "geocode": np.asarray(names[lev][1]),
                        **_keep(sol, lev, spec),
                    }
                    for lev in range(1, len(sol.problem.sizes))
                }
            )
    out = _join(pieces, geo.names[t + 2 :])
    out[geo.names[t + 1]] = {"geocode": np.asarray(counties, dtype=object), **_keep(mid, 1, spec)}
    return out


# -- the driver ---------------------------------------------------------------------------


def _size(obj) -> int:
    return len(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def solve_parts(parts: NMFParts, queries, scheduler: str, client) -> PartsEstimate:
    """:func:`gls` of a lazily read file (see the module docstring)."""
    from ._nmf_read import _add_invariants

    spec = _spec(parts.schema, queries)
    geo = parts.geography
    t = geo.index(parts.state_level)
    read_notes: list = []
    top_nm = parts._rows(list(geo.names[: t + 1]), notes=read_notes)
    if parts.invariants is not None:
        top_nm = _add_invariants(top_nm, parts.invariants)
    top = _problem(top_nm)
    why = block_path_refusal(top)  # before any state is read
    if why is not None:
        raise InvariantDPError(f"the file cannot be solved in parts: {why}.")
    states = [str(s) for s in top_nm.units[t]]
    roots = [top.subtree(t, [(s, s + 1)]) for s in range(len(states))]
    dense = tree_dense(top)
    live = client_of(client) if scheduler == "dask" else None
    moved = {"to_workers": 0, "from_workers": 0}

    def run(fn, jobs):
        if scheduler == "serial":
            return [fn(*job) for job in jobs]
        if live is None:  # dask's threads, in this process: nothing moves
            return run_tasks(fn, jobs, None)
        moved["to_workers"] += sum(_size(job) for job in jobs)
        return [live.submit(fn, *job, pure=False) for job in jobs]

    def gather(futures, small):
        if scheduler == "serial" or live is None:
            return [small(f) for f in futures]
        out = live.gather([live.submit(small, f, pure=False) for f in futures])
        moved["from_workers"] += sum(_size(o) for o in out)
        return out

    ups = run(_state_up, [(parts, s, r, dense) for s, r in zip(states, roots, strict=True)])
    sums = gather(ups, _summary)
    final = dense.union(*(s["dense"] for s in sums))
    redo = [i for i, s in enumerate(sums) if s["dense"] != final]
    if redo:  # a state found attributes the others did not: all in the one algebra
        again = run(_state_up, [(parts, states[i], roots[i], final) for i in redo])
        for i, up, s in zip(redo, again, gather(again, _summary), strict=True):
            ups[i], sums[i] = up, s
    # each distinct note once: one per part would repeat it for every county
    notes = tuple(sorted({*read_notes, *(n for s in sums for n in s["notes"])}))
    for note in notes:
        warnings.warn(f"{note} (from reading the states)", UserWarning, stacklevel=4)
    leaves = tuple(np.concatenate([s[k] for s in sums]) for k in ("z", "V", "zero"))
    sol = partitioned_bottom_up(top, final, _names(top_nm), leaves=leaves)
    partitioned_top_down(sol)
    kept_top = {
        lev: {"geocode": np.asarray(top_nm.units[i]), **_keep(sol, i, spec)}
        for i, lev in enumerate(geo.names[: t + 1])
    }
    downs = run(
        _state_down,
        [
            (parts, up, (sol.x[t][s : s + 1], sol.F[t][s : s + 1], sol.G[t][s : s + 1]), spec)
            for s, up in enumerate(ups)
        ],
    )
    if scheduler == "dask" and live is not None:
        from distributed import wait

        wait(downs)
        for f in downs:
            if f.status == "error":
                f.result()  # raises the task's error here
    return PartsEstimate(parts, tuple(spec), kept_top, list(downs), moved, live, notes)


def _spec(schema: Schema, queries) -> dict:
    if isinstance(queries, str) or not hasattr(queries, "__iter__"):
        raise InvariantDPError(
            f"`queries` ({format_value(queries)}) must be a list of query names (e.g. "
            "['total', 'votingage'])."
        )
    queries = list(queries)
    if not queries:
        raise InvariantDPError("`queries` must name at least one query.")
    out = {}
    for q in queries:
        if not isinstance(q, str):
            raise InvariantDPError(f"`queries`: {format_value(q)} is not a query name.")
        out[schema.canonical(q)] = schema.query_spec(q)
    return out


# -- the result ---------------------------------------------------------------------------


def _piece(kept: dict, level: str, query: str, schema: Schema, cl: float, clip: bool, codes):
    """The estimate frame of one piece's units of ``level`` (those of ``codes``, if given)."""
    cells = schema.cell_frame(query)
    c = max(len(cells), 1)
    if level not in kept:  # no rows, with the column types of a frame that has some
        one = np.zeros((1, c))
        frame = estimate_frame({"geocode": [""]}, one, one, cells, cl, [UNIDENTIFIED], clip=clip)
        return frame.iloc[:0]
    geocodes = kept[level]["geocode"]
    est, var = (np.asarray(a, dtype=float).reshape(len(geocodes), c) for a in kept[level][query])
    rows = None if codes is None else np.flatnonzero(np.isin(geocodes, codes))
    reasons = [UNIDENTIFIED] * len(geocodes)
    return estimate_frame({"geocode": geocodes}, est, var, cells, cl, reasons, rows=rows, clip=clip)


def _found(kept: dict, level: str, codes) -> set:
    """Which of ``codes`` are units of ``level`` in this piece."""
    if level not in kept:
        return set()
    return set(np.asarray(codes)[np.isin(codes, kept[level]["geocode"])].tolist())


@dataclass(frozen=True)
class PartsEstimate:
    """GLS estimates of a file solved in parts; what :func:`gls` returns for :class:`NMFParts`.

    It holds the estimate and variance of every cell of the queries named
    in ``gls(parts, queries=...)``, for every unit of every level: those of
    the levels down to ``State`` here, the others per state (on the Dask
    workers with ``scheduler="dask"``, until :meth:`estimate` asks).

    Attributes
    ----------
    parts : NMFParts
    queries : tuple of str
        The queries kept (canonical names).
    transfer : dict
        Bytes (pickled) sent to and gathered from the tasks during the solve
        (``to_workers``, ``from_workers``); 0 unless the tasks ran on a
        ``dask.distributed`` client, which must stay open while
        :meth:`estimate` gathers from it.
    notes : tuple of str
        Every distinct warning that reading the file gave (each announced
        once by :func:`gls`, on the driver).

    References
    ----------
    Cumings-Menon & Zhuravlev (2024), arXiv:2404.13164.

    Examples
    --------
    >>> import tempfile
    >>> import pandas as pd
    >>> from invariantdp.census import Geography, NMFParts, NoisyMeasurements, Schema, gls
    >>> dpq = pd.DataFrame({"geocode": ["1", "11", "111", "112"],
    ...                     "query_name": ["total_dpq"] * 2 + ["detailed_dpq"] * 2,
    ...                     "value": [[9.0], [8.0], [2.0, 3.0], [1.0, 3.0]], "variance": 1.0})
    >>> geo = Geography({"State": 1, "County": 2, "Tract": 3})
    >>> nm = NoisyMeasurements.from_frames(dpq, None, Schema({"sex": 2}), geo)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     nm.to_nmf(d + "/nmf")
    ...     est = gls(NMFParts.open(d + "/nmf"), queries=["total", "sex"])
    >>> est.queries  # canonical names: "sex" is the detailed query here
    ('total', 'detailed')
    >>> est.estimate("sex", "Tract", geocodes=["112"])[["geocode", "sex", "std_error"]].round(3)
      geocode  sex  std_error
    0     112    0      0.882
    1     112    1      0.882
    """

    parts: NMFParts
    queries: tuple
    _top: dict = field(repr=False)
    _pieces: list = field(repr=False)
    transfer: dict = field(default_factory=dict)
    _client: object = field(default=None, repr=False)
    notes: tuple = ()

    def estimate(
        self,
        query: str,
        level: str,
        confidence_level=0.95,
        groups=None,
        *,
        geocodes=None,
        clip=False,
        cells=None,
        frame="pandas",
    ):
        """Estimates, standard errors and Gaussian intervals of a kept query at ``level``.

        The frame of :meth:`GLSEstimate.estimate` for the same file read
        whole (the same construction, the same checks of the shared
        arguments).  Sums over ``groups``, selections of ``cells`` and
        :meth:`GLSEstimate.cov` or :meth:`GLSEstimate.to_release` need the
        covariances between units or between a unit's cells, which a solve
        in parts does not keep (only each cell's variance): ``groups`` and
        ``cells`` are refused; read the file whole with :func:`read_nmf`
        for them.

        Parameters
        ----------
        query : str
            One of :attr:`queries` (any spelling of it).
        level : str
        confidence_level : float, optional
            In (0, 1); default 0.95.
        groups : None
            Not available in parts (refused).
        geocodes : str or sequence of str, optional
            The units to report (default all), each once.
        clip : bool, optional
            Floor the estimates and interval ends at 0, for display only.
        cells : None
            Not available in parts (refused).
        frame : {"pandas", "dask"}, optional
            ``"pandas"`` (default) gathers the rows into one DataFrame;
            ``"dask"`` returns a ``dask.dataframe.DataFrame`` with one
            partition per state, computed where the state's results are
            (on the workers after ``gls(..., scheduler="dask")``); its
            ``attrs`` are not kept (dask keeps no per-row metadata): the
            intervals are Gaussian at ``confidence_level``, as
            ``attrs["interval"]`` of the pandas frame says.

        Returns
        -------
        pandas.DataFrame or dask.dataframe.DataFrame
            The columns of :meth:`GLSEstimate.estimate`: ``geocode``, one
            column per attribute of the query, ``estimate``, ``std_error``,
            ``moe``, ``ci_lower``, ``ci_upper``, ``note``; rows in geocode
            order; ``attrs`` as :meth:`GLSEstimate.estimate`'s
            (``confidence_level``, ``interval``, ``coverage``, ``negative``,
            ``clipped``).

        Examples
        --------
        >>> import tempfile
        >>> import pandas as pd
        >>> from invariantdp.census import Geography, NMFParts, NoisyMeasurements, Schema, gls
        >>> dpq = pd.DataFrame({"geocode": ["1", "11", "111", "112"],
        ...                     "query_name": ["total_dpq"] * 2 + ["detailed_dpq"] * 2,
        ...                     "value": [[9.0], [8.0], [2.0, 3.0], [1.0, 3.0]], "variance": 1.0})
        >>> nm = NoisyMeasurements.from_frames(
        ...     dpq, None, Schema({"sex": 2}), Geography({"State": 1, "County": 2, "Tract": 3}))
        >>> with tempfile.TemporaryDirectory() as d:
        ...     nm.to_nmf(d + "/nmf")
        ...     est = gls(NMFParts.open(d + "/nmf"))
        >>> df = est.estimate("total", "Tract", geocodes="111")
        >>> df["geocode"].tolist(), df.attrs["interval"]
        (['111'], ['gaussian'])
        """
        if not isinstance(query, str):
            raise TypeError(f"`query` must be a str, got {type(query).__name__}.")
        schema = self.parts.schema
        q = schema.canonical(query)
        if q not in self.queries:
            raise InvariantDPError(
                f"`query` ({format_value(query)}) was not kept: this solve kept "
                f"{', '.join(self.queries)} (pass queries= to gls)."
            )
        for name, value in (("groups", groups), ("cells", cells)):
            if value is not None:
                raise InvariantDPError(
                    f"`{name}` is not available for a file solved in parts: its sums need the "
                    "covariances between units and cells, which the parts do not keep (read "
                    "the file whole with read_nmf)."
                )
        li = self.parts.geography.index(level)
        cl = float(check_confidence_level(confidence_level))
        clip = check_clip(clip)
        if frame not in ("pandas", "dask"):
            raise InvariantDPError(f"`frame` ({format_value(frame)}) must be 'pandas' or 'dask'.")
        codes = None if geocodes is None else check_geocodes(geocodes)
        args = (level, q, schema, cl, clip, codes)
        if li <= self.parts.geography.index(self.parts.state_level):
            pieces, local = [self._top], True
        else:
            pieces, local = self._pieces, self._client is None
        if codes is not None:
            if local:
                found = [_found(p, level, codes) for p in pieces]
            else:
                found = self._client.gather(
                    [self._client.submit(_found, p, level, codes, pure=False) for p in pieces]
                )
            have = set().union(*found)
            missing = [c for c in codes.tolist() if c not in have]
            if missing:
                raise InvariantDPError(
                    f"`geocodes` holds {format_value(missing[:3])}, not units of level `{level}`."
                )
        if frame == "pandas":
            if local:
                out = [_piece(p, *args) for p in pieces]
            else:
                out = self._client.gather(
                    [self._client.submit(_piece, p, *args, pure=False) for p in pieces]
                )
            frame_ = pd.concat(out, ignore_index=True) if len(out) > 1 else out[0]
            frame_.attrs = dict(out[0].attrs)
            for key in ("interval", "coverage"):  # per row: the pieces' rows in order
                frame_.attrs[key] = [v for p in out for v in p.attrs[key]]
            frame_.attrs["negative"] = sum(p.attrs["negative"] for p in out)
            return frame_
        import dask.dataframe as dd
        from dask import delayed

        if local:
            parts = [delayed(_piece)(p, *args) for p in pieces]
        else:
            parts = [self._client.submit(_piece, p, *args, pure=False) for p in pieces]
        return dd.from_delayed(parts, meta=_piece({}, *args))
