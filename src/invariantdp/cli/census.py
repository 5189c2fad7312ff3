"""``invariantdp census``: make a noisy measurement file, and estimate from one.

Sub-commands::

    invariantdp census measure COUNTS --schema S --workload W --units U [--geography G]
                               [--invariants I] [--simulate | --seed N] -o NMF_DIR
    invariantdp census estimate NMF_DIR --schema S --level L --query Q [--geography G]
                               [--confidence-level C] [--groups GROUPS.csv]
                               [--cells NAME=ATTR:LABEL,LABEL[;ATTR:LABEL...]]... -o OUT.csv

``measure`` reads confidential counts (CSV or Parquet, long format: the
finest level's ``geocode``, one column per attribute, ``count``; or
microdata without ``count``) and writes the noisy measurements of the units
listed in ``--units`` (public: the set of units is never read from the data)
(:func:`invariantdp.census.measure`) as a directory in the Bureau's layout
(:meth:`~invariantdp.census.NoisyMeasurements.to_nmf`).  The noise is drawn
exactly from the operating system's CSPRNG unless ``--simulate`` or
``--seed`` ask for a simulation, which the files and the report then say.

``estimate`` reads such a directory (:func:`invariantdp.census.read_nmf`) and
writes the GLS estimates of one query at one level with standard errors and
confidence intervals (:func:`invariantdp.census.gls`), per unit or summed over
the groups of units of ``--groups`` (a crosswalk: units by geocode or, for the
blocks of the 2020 release layout, by 16-digit tabulation block code).
``--cells adults=age:18-64,65+`` estimates the sum of the query's cells whose
``age`` is ``18-64`` or ``65+`` instead of the cells (the same numbers as
``GLSEstimate.estimate(..., cells={"adults": {"age": ["18-64", "65+"]}})``);
repeat it for several selections, join attributes with ``;``
(``--cells "old women=sex:F;age:65+"``); a recode of one of the query's
attributes names groups of its levels (``--cells inst=hhinstlevels:Institutional
Facility`` on ``--query hhgq``).  Labels cannot contain ``,`` or ``;``.

``--schema`` is ``pl94`` (:data:`invariantdp.census.PL94`) or a JSON file
``{attribute: number of levels or [level labels]}`` in schema order;
``--geography`` is ``default`` (the Bureau's geocode widths) or levels with
their widths, coarse to fine, like ``State:2,County:5,Tract:11``.

The directory is written next to its destination and renamed into place, so
a reader never sees a partial file; it never replaces an input, nor an
existing directory without ``--force``, and with ``--force`` only a noisy
measurement file directory.
"""

from __future__ import annotations

import contextlib
import math
import os
import secrets
import shutil
import warnings
from pathlib import Path

import pandas as pd

from ..census import PL94, Geography, Schema, gls, measure, read_nmf
from ..exceptions import InvariantDPError
from ._common import (
    SIMULATION_LINE,
    add_randomness_args,
    bounded,
    check_confidence_level,
    check_output,
    print_help_and_fail,
    print_json,
    read_csv,
    read_json,
    short,
    simulation_note,
    use_secure,
    write_atomic,
)
from ._files import removed_on_signal

__all__: list[str] = []  # a sub-command: no Python API (see `invariantdp --help`)

_PARQUET = (".parquet", ".pq")
_JSON_HELP = "print the report as strict JSON (RFC 8259; non-finite numbers as null)"
_SCHEMA_HELP = (
    "'pl94' (hhgq 8 x votingage 2 x hispanic 2 x cenrace 63) or a JSON file "
    '{"attribute": number of levels or ["level labels"], ...} in schema order'
)
_SPEC = "'State:2,County:5,Tract:11'"


def _register(sub) -> None:
    p = sub.add_parser(
        "census",
        help="Census noisy measurement files: measure confidential counts, estimate from a file",
        description=(
            "Make a noisy measurement file in the Census Bureau's layout from confidential "
            "counts (measure), or read one and write GLS estimates with standard errors and "
            "confidence intervals (estimate)."
        ),
    )
    p.set_defaults(func=lambda args: print_help_and_fail(p))
    cmds = p.add_subparsers(dest="census_command", metavar="COMMAND")

    m = cmds.add_parser(
        "measure",
        help="noisy measurements of confidential counts, written as a noisy measurement file",
        description=(
            "Aggregate the confidential COUNTS up the geography, answer every query of "
            "--workload at its level with discrete Gaussian noise (sigma^2 = 1/rho: rho-zCDP "
            "under bounded neighbours), publish the --invariants exactly, and write the "
            "directory --output in the Bureau's layout (<Level>.parquet/DPQuery and "
            "/Constraint). The noise is drawn exactly from the operating system's CSPRNG "
            "unless --simulate or --seed is given."
        ),
    )
    m.add_argument(
        "counts",
        help=(
            "CSV or Parquet of confidential counts: geocode (the finest level), one column "
            "per attribute of --schema and count; or microdata (no count column: one row "
            "per person)"
        ),
    )
    m.add_argument("--schema", required=True, help=_SCHEMA_HELP)
    m.add_argument(
        "--workload",
        required=True,
        help=(
            'JSON file {"Level": {"query": rho, ...}, ...} or CSV with columns level, query, '
            "rho: the queries measured at each level and their zCDP budgets"
        ),
    )
    m.add_argument(
        "--units",
        required=True,
        help=(
            "CSV or Parquet file of the units measured, public input (e.g. the Bureau's list "
            "of blocks): a column geocode listing the finest level's units (the levels above "
            "are their parents), or columns level and geocode listing the units of each level "
            "given (the finest required). Every unit listed is measured, with or without "
            "records; a record of COUNTS outside them refuses the call"
        ),
    )
    m.add_argument(
        "--geography",
        default=None,
        help=(
            f"levels with geocode widths, coarse to fine, like {_SPEC}; default: the "
            "Bureau's levels (State 2, County 5, Tract 11, Block_Group 12, Block 16) from "
            "the coarsest to the finest that --workload and --invariants name"
        ),
    )
    m.add_argument(
        "--invariants",
        default=None,
        help=(
            "queries published exactly: 'Level:query[,Level:query...]' (e.g. 'State:total') "
            'or a JSON file {"Level": ["query", ...]}'
        ),
    )
    m.add_argument(
        "--delta",
        type=float,
        default=1e-10,
        help="report the (epsilon, delta)-DP guarantee at this delta, in (0, 1) (default 1e-10)",
    )
    add_randomness_args(m)
    m.add_argument(
        "-o", "--output", required=True, help="the noisy measurement file directory to write"
    )
    m.add_argument(
        "--force",
        action="store_true",
        help="replace --output if it is an existing noisy measurement file directory",
    )
    m.add_argument("--json", action="store_true", help=_JSON_HELP)
    m.set_defaults(func=_run_measure)

    e = cmds.add_parser(
        "estimate",
        help="GLS estimates with standard errors and intervals from a noisy measurement file",
        description=(
            "Read the noisy measurement file NMF_DIR, combine all its measurements by "
            "generalised least squares under its invariants and structural zeros (exactly), "
            "and write the estimate of --query for every unit of --level (or summed over the "
            "units of each group of --groups) with its standard error and normal confidence "
            "interval."
        ),
    )
    e.add_argument(
        "nmf", metavar="NMF_DIR", help="directory of <Level>.parquet/DPQuery and /Constraint"
    )
    e.add_argument("--schema", required=True, help=_SCHEMA_HELP)
    e.add_argument(
        "--geography",
        default=None,
        help=(
            f"levels with geocode widths, coarse to fine, like {_SPEC}; default: the "
            "Bureau's levels that NMF_DIR holds"
        ),
    )
    e.add_argument("--level", required=True, help="the geographic level of the estimates")
    e.add_argument(
        "--query",
        required=True,
        help=(
            "the query estimated: 'total', 'detailed' or attributes of the schema joined "
            "by ' * ' in schema order (e.g. 'votingage * hispanic')"
        ),
    )
    e.add_argument(
        "--confidence-level",
        type=float,
        default=0.95,
        help="level of the confidence intervals, in (0, 1) (default 0.95)",
    )
    e.add_argument(
        "--groups",
        default=None,
        help=(
            "CSV with columns geocode (units of --level; at the Block level of the 2020 "
            "release layout, the 16-digit tabulation block codes may stand for them) and "
            "group: estimate the query summed over each group's units (a voting district "
            "from its blocks), covariances included"
        ),
    )
    e.add_argument(
        "--cells",
        action="append",
        default=None,
        metavar="NAME=ATTR:LABEL,LABEL[;ATTR:LABEL...]",
        help=(
            "estimate a union of the query's cells instead of its cells, e.g. "
            "'adults=age:18-64,65+' (the cells whose age is 18-64 or 65+; every level of the "
            "query's other attributes); several attributes joined by ';' intersect "
            "('old women=sex:F;age:65+'); a recode of a query attribute names groups of its "
            "levels; repeat the option for several selections; the standard error comes from "
            "the full covariance of the selected cells; labels cannot contain ',' or ';'"
        ),
    )
    e.add_argument("-o", "--output", required=True, help="CSV (or .parquet) file of the estimates")
    e.add_argument("--force", action="store_true", help="replace --output if it exists")
    e.add_argument("--json", action="store_true", help=_JSON_HELP)
    e.set_defaults(func=_run_estimate)


# --- arguments ------------------------------------------------------------------------------


def _schema(text: str):

    if text.lower() == "pl94":
        return PL94
    doc = read_json(text, "--schema")
    if not isinstance(doc, dict):
        raise InvariantDPError(
            f"`--schema` ({short(text)}) must hold a JSON object of attributes, got a "
            f"{type(doc).__name__}."
        )
    try:
        return Schema(doc)
    except InvariantDPError as exc:
        raise InvariantDPError(f"`--schema` ({short(text)}): {exc}") from None


def _geography(text):
    """``--geography``: None for the default, else the :class:`Geography` it spells."""

    if text is None or text == "default":
        return None
    rule = f"`--geography` ({short(text)}) must be 'default' or levels with widths like {_SPEC}"
    levels = {}
    for part in text.split(","):
        name, sep, width = (s.strip() for s in part.partition(":"))
        if not sep or not name or not width.isdigit():
            raise InvariantDPError(f"{rule}.")
        if name in levels:
            raise InvariantDPError(f"{rule}; {short(name)} is named twice.")
        levels[name] = int(width)
    try:
        return Geography(levels)
    except InvariantDPError as exc:
        raise InvariantDPError(f"`--geography` ({short(text)}): {exc}") from None


def _named(option: str, path, exc) -> InvariantDPError:
    return InvariantDPError(f"`{option}` ({short(os.fspath(path))}): {exc}")


def _workload(path, schema, geography) -> dict:
    """``--workload``: ``{level: {query: rho}}`` checked against the schema and the levels."""

    suffix = Path(path).suffix.lower()
    if suffix == ".json":
        doc = read_json(path, "--workload")
        if not isinstance(doc, dict) or not all(isinstance(v, dict) for v in doc.values()):
            raise _named("--workload", path, 'must hold {"Level": {"query": rho, ...}, ...}.')
        rows = [(lev, q, rho) for lev, qs in doc.items() for q, rho in qs.items()]
    elif suffix == ".csv":
        df = read_csv(path, "--workload")
        missing = [c for c in ("level", "query", "rho") if c not in df.columns]
        if missing:
            raise _named("--workload", path, f"lacks the column(s) {', '.join(missing)}.")
        if df[["level", "query", "rho"]].isna().any(axis=None):
            raise _named("--workload", path, "has empty cells in level, query or rho.")
        rows = list(df[["level", "query", "rho"]].itertuples(index=False, name=None))
    else:
        raise _named("--workload", path, "must be a .json or a .csv file.")
    if not rows:
        raise _named("--workload", path, "names no query.")
    geo = Geography() if geography is None else geography
    out: dict = {}
    for level, query, rho in rows:
        try:
            geo.index(str(level))
            name = schema.query_name(schema.query(str(query)))
        except InvariantDPError as exc:
            raise _named("--workload", path, exc) from None
        number = isinstance(rho, int | float) and not isinstance(rho, bool)
        if not number or not math.isfinite(rho) or rho <= 0:
            raise _named("--workload", path, f"rho of {level} {query!r} ({rho!r}) must be > 0.")
        if name in out.setdefault(str(level), {}):
            raise _named("--workload", path, f"names {level} {name!r} twice.")
        out[str(level)][name] = float(rho)
    return out


def _invariants(text, schema, geography) -> dict | None:
    """``--invariants``: ``{level: [query, ...]}`` from 'Level:query,...' or a JSON file."""

    if text is None:
        return None
    if Path(text).suffix.lower() == ".json":
        doc = read_json(text, "--invariants")
        ok = isinstance(doc, dict) and all(
            isinstance(v, list) and all(isinstance(q, str) for q in v) for v in doc.values()
        )
        if not ok:
            raise _named("--invariants", text, 'must hold {"Level": ["query", ...], ...}.')
        pairs = [(lev, q) for lev, qs in doc.items() for q in qs]
    else:
        pairs = [tuple(s.strip() for s in part.split(":", 1)) for part in text.split(",")]
        if any(len(p) != 2 or not all(p) for p in pairs):
            raise InvariantDPError(
                f"`--invariants` ({short(text)}) must be 'Level:query[,Level:query...]' "
                "(e.g. 'State:total') or a .json file."
            )
    geo = Geography() if geography is None else geography
    out: dict = {}
    for level, query in pairs:
        try:
            geo.index(level)
            out.setdefault(level, []).append(schema.query_name(schema.query(query)))
        except InvariantDPError as exc:
            raise _named("--invariants", text, exc) from None
    return out


def _default_geography(workload: dict, invariants):
    """The Bureau's levels from the coarsest to the finest the workload and invariants name."""

    geo = Geography()
    named = sorted({*workload, *(invariants or {})}, key=geo.index)
    return geo.subset(named[0], named[-1])


def _format(path, option: str) -> str:
    suffix = Path(path).suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in _PARQUET:
        return "parquet"
    raise InvariantDPError(f"`{option}` ({short(os.fspath(path))}) must end in .csv or .parquet.")


def _read_counts(path):

    if _format(path, "counts") == "csv":
        return read_csv(path, "counts", dtype={"geocode": str})
    return pd.read_parquet(path)


def _read_units(path):
    """``--units``: the finest level's geocodes, or ``{level: geocodes}`` (public input)."""

    if _format(path, "--units") == "csv":
        frame = read_csv(path, "--units", dtype=str, keep_default_na=False)
    else:
        frame = pd.read_parquet(path)
    if "geocode" not in frame.columns:
        raise InvariantDPError(
            f"`--units` ({short(os.fspath(path))}) must have a column geocode (and optionally "
            f"level), got columns {', '.join(map(str, frame.columns)) or 'none'}."
        )
    if "level" not in frame.columns:
        return frame["geocode"].to_numpy(dtype=object)
    return {
        str(level): group["geocode"].to_numpy(dtype=object)
        for level, group in frame.groupby("level", sort=False)
    }


def _inside(path: Path, folder: Path) -> bool:
    return folder.resolve() in path.resolve().parents or path.resolve() == folder.resolve()


def _is_nmf_dir(path: Path) -> bool:
    """Only ``<Level>.parquet`` directories.

    What :meth:`~invariantdp.census.NoisyMeasurements.to_nmf` writes.
    """
    return all(p.is_dir() and p.name.endswith(".parquet") for p in path.iterdir())


def _check_output_dir(text: str, inputs: list, force: bool) -> Path:
    """Validate the directory ``--output`` of ``measure`` before any work is done."""
    if not text.strip():
        raise InvariantDPError("`--output` ('') must be a directory path; got an empty one.")
    p = Path(text)
    if not p.parent.is_dir():
        raise InvariantDPError(
            f"`--output` ({short(text)}) must be in an existing directory; "
            f"{short(str(p.parent))} is not one."
        )
    for name, src in inputs:
        if src is not None and _inside(Path(src), p):
            raise InvariantDPError(
                f"`--output` ({short(text)}) holds `{name}` ({short(os.fspath(src))}): "
                "refusing to write over it."
            )
    if p.is_symlink() or (p.exists() and not p.is_dir()):
        raise InvariantDPError(f"`--output` ({short(text)}) exists and is not a directory.")
    if p.exists() and any(p.iterdir()):
        if not force:
            raise InvariantDPError(
                f"`--output` ({short(text)}) exists; pass --force to replace it."
            )
        if not _is_nmf_dir(p):
            raise InvariantDPError(
                f"`--output` ({short(text)}) holds more than <Level>.parquet directories: "
                "it is not a noisy measurement file, and is not replaced even with --force."
            )
    return p


@contextlib.contextmanager
def _removed_on_failure(tmp: Path):
    """Remove the directory ``tmp`` if the body fails or SIGTERM/SIGINT interrupts it."""
    with removed_on_signal(lambda: shutil.rmtree(tmp, ignore_errors=True), str(tmp)):
        try:
            yield
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise


def _write_nmf_dir(nm, dst: Path) -> None:
    """``nm.to_nmf`` into a fresh directory beside ``dst``, then renamed into place."""
    token = secrets.token_hex(6)
    tmp = dst.parent / f".{dst.name}.{token}.tmp"
    with _removed_on_failure(tmp):
        nm.to_nmf(tmp)
        if dst.exists() and any(dst.iterdir()):
            old = dst.parent / f".{dst.name}.{token}.old"
            os.rename(dst, old)
            os.rename(tmp, dst)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, dst)  # over an empty directory, or where none is


def _notes(caught) -> list[str]:
    return [bounded(str(w.message), 300) for w in caught]


# --- measure ----------------------------------------------------------------------------------


def _run_measure(args) -> int:

    schema = _schema(args.schema)
    geography = _geography(args.geography)
    workload = _workload(args.workload, schema, geography)
    invariants = _invariants(args.invariants, schema, geography)
    if geography is None:
        geography = _default_geography(workload, invariants)
    if not (math.isfinite(args.delta) and 0.0 < args.delta < 1.0):
        raise InvariantDPError(f"`--delta` ({args.delta!r}) must be in (0, 1).")
    _format(args.counts, "counts")
    units = _read_units(args.units)
    inputs = [("counts", args.counts), ("--workload", args.workload), ("--units", args.units)]
    if args.schema.lower() != "pl94":
        inputs.append(("--schema", args.schema))
    if args.invariants is not None and Path(args.invariants).suffix.lower() == ".json":
        inputs.append(("--invariants", args.invariants))
    out = _check_output_dir(args.output, inputs, args.force)
    secure = use_secure(args)
    counts = _read_counts(args.counts)
    nm = measure(
        counts,
        schema,
        geography,
        workload,
        invariants=invariants,
        secure=secure,
        rng=args.seed,
        units=units,
    )
    _write_nmf_dir(nm, out)
    privacy = nm.privacy
    epsilon = privacy.epsilon(args.delta)
    if args.json:
        print_json(
            {
                "output": str(out),
                "levels": {lev: len(u) for lev, u in zip(nm.levels, nm.units, strict=True)},
                "queries": [
                    {"level": lev, "query": q, "rho": r}
                    for (lev, q), r in privacy.rho_by_query.items()
                ],
                "invariants": [{"level": lev, "query": q} for lev, q in nm.invariants],
                "rho": privacy.rho,
                "epsilon": epsilon,
                "delta": args.delta,
                "adjacency": privacy.adjacency,
                "randomness": nm.randomness,
                "simulation": nm.randomness == "simulation",
            }
        )
        return 0
    sizes = ", ".join(f"{lev} {len(u)}" for lev, u in zip(nm.levels, nm.units, strict=True))
    print(
        f"wrote noisy measurements to {out} ({len(nm.measurements)} queries, "
        f"{len(nm.invariants)} invariants; units: {sizes})"
    )
    print(
        f"privacy: rho = {privacy.rho:.6g} zCDP ({privacy.adjacency}, l2 sensitivity sqrt 2), "
        f"epsilon = {epsilon:.6g} at delta = {args.delta:g}; the invariants are published "
        "exactly and are not covered"
    )
    if secure:
        print("randomness: secure (exact sampling from the operating system's CSPRNG)")
    else:
        print(simulation_note(args.seed))
    return 0


# --- estimate ---------------------------------------------------------------------------------


def _read_groups(path):
    """``--groups``: a Series geocode -> group name."""

    df = read_csv(path, "--groups", dtype=str, keep_default_na=False)
    missing = [c for c in ("geocode", "group") if c not in df.columns]
    if missing:
        raise _named("--groups", path, f"lacks the column(s) {', '.join(missing)}.")
    if len(df) == 0:
        raise _named("--groups", path, "assigns no unit to a group.")
    empty = (df["geocode"].str.strip() == "") | (df["group"].str.strip() == "")
    if empty.any():
        row = int(empty.to_numpy().nonzero()[0][0])
        raise _named("--groups", path, f"data row {row + 1} has an empty geocode or group.")
    dup = df["geocode"].duplicated()
    if dup.any():
        code = df["geocode"][dup].iloc[0]
        raise _named("--groups", path, f"lists unit {short(code)} twice.")
    return pd.Series(df["group"].to_numpy(), index=df["geocode"].to_numpy())


def _cells(texts, schema, query: str) -> dict | None:
    """``--cells``: ``{name: {attribute or recode: [labels]}}``, labels as the schema has them."""
    if not texts:
        return None
    rule = (
        "must be NAME=ATTR:LABEL,LABEL[;ATTR:LABEL,...] (e.g. 'adults=age:18-64,65+') with "
        "ATTR an attribute of --query or a recode of one"
    )
    # the query's own columns (an attribute or the recode it is asked through), then the
    # recodes of its plain attributes: the names GLSEstimate.estimate's selections take
    named = [str(c) for c in schema.cell_frame(query).columns]
    named += [r for r, (attr, _) in schema.recodes.items() if attr in named]
    out = {}
    for text in texts:
        name, eq, body = (p.strip() for p in text.partition("="))
        if not eq or not name or not body:
            raise InvariantDPError(f"`--cells` ({short(text)}) {rule}.")
        if name in out:
            raise InvariantDPError(f"`--cells` names the selection {short(name)} twice.")
        spec = {}
        for part in body.split(";"):
            attr, colon, labels = (p.strip() for p in part.partition(":"))
            if not colon or not attr or not labels:
                raise InvariantDPError(f"`--cells` ({short(text)}) {rule}.")
            if attr not in named:
                raise InvariantDPError(
                    f"`--cells` ({short(text)}) names {short(attr)}, which is neither an "
                    f"attribute of --query {query!r} nor a recode of one ({', '.join(named)})."
                )
            if attr in spec:
                raise InvariantDPError(f"`--cells` ({short(text)}) names {short(attr)} twice.")
            known = {str(lab): lab for lab in schema.labels(attr)}
            picked = [p.strip() for p in labels.split(",")]
            bad = [p for p in picked if p not in known]
            if bad:
                raise InvariantDPError(
                    f"`--cells` ({short(text)}): {short(bad[0])} is not a level of "
                    f"{short(attr)} ({', '.join(known)})."
                )
            spec[attr] = [known[p] for p in picked]
        out[name] = spec
    return out


def _run_estimate(args) -> int:

    schema = _schema(args.schema)
    geography = _geography(args.geography)
    try:
        query = schema.canonical(args.query)  # recoded queries too, as estimate takes them
    except InvariantDPError as exc:
        raise InvariantDPError(f"`--query`: {exc}") from None
    try:
        (Geography() if geography is None else geography).index(args.level)
    except InvariantDPError as exc:
        raise InvariantDPError(f"`--level`: {exc}") from None
    check_confidence_level(args.confidence_level)
    cells = _cells(args.cells, schema, query)
    fmt = _format(args.output, "--output")
    nmf = Path(args.nmf)
    if not nmf.is_dir():
        raise InvariantDPError(f"`NMF_DIR` ({short(args.nmf)}) is not a directory.")
    inputs = [("--groups", args.groups)]
    if args.schema.lower() != "pl94":
        inputs.append(("--schema", args.schema))
    out = check_output(args.output, inputs=inputs, force=args.force)
    if _inside(out, nmf):
        raise InvariantDPError(
            f"`--output` ({short(args.output)}) is inside `NMF_DIR` ({short(args.nmf)}): "
            "refusing to write into an input."
        )
    groups = None if args.groups is None else _read_groups(args.groups)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nm = read_nmf(nmf, schema, geography)
    if args.level not in nm.levels:
        raise InvariantDPError(
            f"`--level` ({short(args.level)}) is not a level of `NMF_DIR` ({', '.join(nm.levels)})."
        )
    if groups is not None:
        try:
            nm.unit_keys(args.level, groups.index.to_numpy())
        except InvariantDPError as exc:
            raise _named("--groups", args.groups, exc) from None
    frame = gls(nm).estimate(query, args.level, args.confidence_level, groups=groups, cells=cells)
    if fmt == "csv":
        write_atomic(out, frame.to_csv(index=False), inputs=inputs, force=args.force)
    else:
        write_atomic(
            out, lambda fh: frame.to_parquet(fh, index=False), inputs=inputs, force=args.force
        )
    not_estimable = int(frame["estimate"].isna().sum())
    simulation = nm.randomness == "simulation"
    units = "groups" if groups is not None else "units"
    n_units = int(frame.iloc[:, 0].nunique())
    if args.json:
        print_json(
            {
                "output": str(out),
                "level": args.level,
                "query": query,
                units: n_units,
                "rows": len(frame),
                "cells": None if cells is None else list(cells),
                "not_estimable": not_estimable,
                "confidence_level": args.confidence_level,
                "randomness": nm.randomness,
                "simulation": simulation,
                "notes": _notes(caught),
            }
        )
        return 0
    if simulation:
        print(f"{SIMULATION_LINE}: {short(args.nmf)} is marked as a simulation.\n")
    print(
        f"wrote GLS estimates of {query!r} for {n_units} {units} of level {args.level} "
        f"({len(frame)} rows) to {out}"
    )
    if cells is not None:
        print(f"selections of cells (column cells): {', '.join(cells)}")
    print(
        f"columns: estimate, std_error, moe, ci_lower, ci_upper (confidence level "
        f"{args.confidence_level:g}), note; {not_estimable} rows not estimable (see note)"
    )
    for note in _notes(caught):
        print(f"note: {note}")
    return 0
