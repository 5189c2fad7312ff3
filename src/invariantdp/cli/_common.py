"""Helpers shared by the sub-commands: argument types, bounded messages,
strict JSON output, the source of randomness, and safe atomic writes.

Writing files
-------------
Every file the command line writes goes through :func:`write_atomic`:

* it never writes over one of the command's input files (same resolved path,
  or the same file through a hard or symbolic link, :func:`os.path.samefile`),
  nor over an existing file unless ``--force`` is given;
* the data go to a temporary file in the destination's directory, which is
  then renamed over the destination, so a reader never sees a partial file;
* SIGTERM and SIGINT during the write remove the temporary file before the
  signal takes its usual effect;
* the file gets the permissions ``0o666 & ~umask`` of an ordinary new file
  (:func:`tempfile.mkstemp` alone would leave ``0o600``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os

import numpy as np
import pandas as pd

from ..exceptions import InvariantDPError
from ..mechanisms import SECURE, SIMULATION, randomness_note
from ..release import Release
from ._files import check_output, write_atomic
from ._messages import MAX_MESSAGE, bounded, short

__all__ = [
    "MAX_MESSAGE",
    "SIMULATION_LINE",
    "Parser",
    "add_privacy_args",
    "add_randomness_args",
    "add_test_args",
    "bounded",
    "check_confidence_level",
    "check_output",
    "column_list",
    "int_list",
    "load_release",
    "mark_randomness",
    "nonnegative_int",
    "print_json",
    "read_csv",
    "read_json",
    "read_long_table",
    "short",
    "simulation_note",
    "strict_json",
    "use_secure",
    "write_atomic",
]

#: The line printed with every simulation release.
SIMULATION_LINE = "SIMULATION: not for publication"


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are bounded in length.

    argparse echoes the offending value whole (``invalid float value:
    '<1 MB>'``); :meth:`error` cuts the message with :func:`bounded`.
    Sub-parsers inherit the class (``add_subparsers`` uses ``type(self)``).
    """

    def error(self, message):
        super().error(bounded(message))


# --- argument types -----------------------------------------------------------


def int_list(text: str) -> list[int]:
    """Parse ``"1,2,3"`` into integers (whole numbers only).

    >>> int_list("189, 10845,104,10933")
    [189, 10845, 104, 10933]
    """
    rule = "expected comma-separated whole numbers"
    try:
        vals = [float(v) for v in text.replace(" ", "").split(",") if v != ""]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{rule}, got {short(text)}") from None
    if not vals or any(not np.isfinite(v) or v != np.round(v) for v in vals):
        raise argparse.ArgumentTypeError(f"{rule}, got {short(text)}")
    return [int(v) for v in vals]


def column_list(text: str) -> list[str]:
    """Parse ``"county, sex"`` into column names (blank names dropped).

    >>> column_list("county, sex")
    ['county', 'sex']
    """
    cols = [c.strip() for c in text.split(",") if c.strip()]
    if not cols:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated column names, got {short(text)}"
        )
    return cols


def nonnegative_int(text: str) -> int:
    """Parse a seed: an integer >= 0 (numpy's ``SeedSequence`` rule).

    >>> nonnegative_int("7")
    7
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {short(text)}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {value}")
    return value


def add_privacy_args(p: argparse.ArgumentParser, *, required_epsilon: bool = False) -> None:
    p.add_argument(
        "--epsilon", type=float, required=required_epsilon, help="privacy loss epsilon, > 0"
    )
    p.add_argument(
        "--delta", type=float, default=0.0, help="privacy parameter delta, in [0, 1) (default 0)"
    )


def add_test_args(p: argparse.ArgumentParser, *, default_alternative: str) -> None:
    """``--alternative`` and ``--confidence-level`` of the hypothesis tests."""
    p.add_argument(
        "--alternative",
        default=default_alternative,
        choices=["greater", "less", "two-sided"],
        help=(
            "alternative hypothesis: the parameter is greater than, less than, or different "
            f"from its null value (default {default_alternative}); one-sided alternatives "
            "give one-sided confidence intervals"
        ),
    )
    p.add_argument(
        "--confidence-level",
        type=float,
        default=0.95,
        help="level of the confidence interval, in (0, 1) (default 0.95)",
    )


def check_confidence_level(value: float) -> None:
    """Refuse a ``--confidence-level`` outside (0, 1) before anything is computed.

    The message names the option and the library's argument ``confidence_level``
    that scripts and the summaries know it by.
    """
    if not (math.isfinite(value) and 0.0 < value < 1.0):
        raise InvariantDPError(
            f"`--confidence-level` (confidence_level = {value!r}) must be in (0, 1)."
        )


# --- reading files ------------------------------------------------------------


def read_csv(path, option: str, **kwargs):
    """``pandas.read_csv`` with parse failures named after the option.

    pandas reports an empty or malformed file without saying which one;
    :class:`OSError` (missing file, directory) already carries the path.
    """

    try:
        return pd.read_csv(path, **kwargs)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise InvariantDPError(
            f"`{option}` ({short(os.fspath(path))}) is not a readable CSV file: {exc}"
        ) from None


def read_long_table(path, option: str, value_column: str, label_columns: list[str]):
    """The noisy values of a long-format CSV (one row per cell) on their labels.

    Agencies publish one row per geography x query with the count in one
    column; the labels may be text.  One label column gives a ``Series`` on
    it; two give the ``r x c`` table (rows: the first column, columns: the
    second, levels in order of first appearance, every combination once),
    so that margins and row or column totals can be invariants; more give a
    ``Series`` on their ``MultiIndex``.  Mechanisms keep the labels in the
    release.

    Raises
    ------
    InvariantDPError
        Naming ``--value-column`` or ``--label-columns``: a column missing,
        non-numeric or missing values, or labels that do not identify one
        row each (or, for two columns, do not form a full table).
    """

    df = read_csv(path, option)
    for opt, cols in (("--label-columns", label_columns), ("--value-column", [value_column])):
        missing = [c for c in cols if c not in df.columns]
        if missing:
            raise InvariantDPError(
                f"`{opt}` names {short(missing[0])}, which is not a column of `{option}` "
                f"({short(os.fspath(path))}); its columns are {short(list(df.columns), 200)}."
            )
    if value_column in label_columns:
        raise InvariantDPError(
            f"`--value-column` ({short(value_column)}) must not be one of `--label-columns`."
        )
    values = df[value_column]
    if not pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        raise InvariantDPError(
            f"`--value-column` ({short(value_column)}) must hold numbers, got dtype {values.dtype}."
        )
    if values.isna().any():
        row = int(np.flatnonzero(values.isna().to_numpy())[0])
        raise InvariantDPError(
            f"`--value-column` ({short(value_column)}) must have a value in every row; "
            f"data row {row + 1} has none."
        )
    keys = df[label_columns]
    if keys.isna().any(axis=None):
        raise InvariantDPError(
            f"`--label-columns` {short(label_columns)} must label every row; some are empty."
        )
    if keys.duplicated().any():
        dup = keys[keys.duplicated()].iloc[0].tolist()
        raise InvariantDPError(
            f"`--label-columns` {short(label_columns)} must identify one row each; "
            f"{short(dup)} appears more than once."
        )
    if len(label_columns) == 1:
        return values.set_axis(pd.Index(keys.iloc[:, 0], name=label_columns[0]))
    if len(label_columns) > 2:
        return values.set_axis(pd.MultiIndex.from_frame(keys))
    rows, cols = (pd.unique(keys.iloc[:, k]) for k in (0, 1))
    if len(rows) * len(cols) != len(df):
        raise InvariantDPError(
            f"`--label-columns` {short(label_columns)} must give every combination of their "
            f"levels once (a {len(rows)} x {len(cols)} table), got {len(df)} rows."
        )
    table = np.empty((len(rows), len(cols)), dtype=values.dtype)
    table[
        pd.Index(rows).get_indexer(keys.iloc[:, 0]), pd.Index(cols).get_indexer(keys.iloc[:, 1])
    ] = values.to_numpy()
    return pd.DataFrame(
        table,
        index=pd.Index(rows, name=label_columns[0]),
        columns=pd.Index(cols, name=label_columns[1]),
    )


def load_release(path, option: str = "--release"):
    """:meth:`Release.load <invariantdp.Release.load>` with failures named after the option."""

    try:
        return Release.load(path)
    except InvariantDPError as exc:  # the library speaks of "the document"
        raise InvariantDPError(f"`{option}` ({short(os.fspath(path))}): {exc}") from None


def _reject_constant(name):
    raise InvariantDPError(f"{name} is not a JSON number (RFC 8259)")


def read_json(path, option: str):
    """Parse a strict JSON file (UTF-8), naming the option when it is not one.

    ``NaN``/``Infinity`` are refused, and nesting too deep for the parser is
    reported rather than raised as ``RecursionError``.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh, parse_constant=_reject_constant)
    except (InvariantDPError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        problem = exc
    except RecursionError:
        problem = "it is nested too deeply"
    raise InvariantDPError(
        f"`{option}` ({short(os.fspath(path))}) is not a valid JSON file: {problem}"
    )


# --- source of randomness -----------------------------------------------------


def add_randomness_args(p: argparse.ArgumentParser) -> None:
    """``--simulate`` and ``--seed``: opt out of secure sampling.

    Without them the noise is sampled exactly from the operating system's
    CSPRNG (``secure=True``), which is what a publication needs.
    """
    p.add_argument(
        "--simulate",
        action="store_true",
        help=(
            "draw the noise from numpy's generator instead of the OS CSPRNG (secure, the "
            "default): a simulation, not for publication"
        ),
    )
    p.add_argument(
        "--seed",
        type=nonnegative_int,
        default=None,
        help=(
            "seed numpy's generator (implies --simulate): reproducible, and never for "
            "publication (the same seed on neighbouring data reveals the difference)"
        ),
    )


def use_secure(args) -> bool:
    """True unless ``--simulate`` or ``--seed`` asked for a simulation."""
    return not (args.simulate or args.seed is not None)


def print_help_and_fail(p: argparse.ArgumentParser) -> int:
    """A command group called without its subcommand: its help, exit status 2."""
    p.print_help()
    return 2


def print_simulation_line(release, path) -> None:
    """Say, before a report, that the release read from ``path`` is a simulation."""
    if release is not None and release.simulation:
        print(f"{SIMULATION_LINE}: {short(path)} is marked as a simulation.\n")


def simulation_note(seed=None, *, hint: bool = True) -> str:
    """The line printed with a simulation release (``hint``: say how to make a secure one)."""
    source = "numpy generator" + ("" if seed is None else f", seed {seed}")
    advice = ": drop --simulate/--seed for a secure release" if hint else ""
    risk = "floating-point or seeded noise can reveal the data"
    return f"{SIMULATION_LINE} ({source}; {risk}{advice})"


def mark_randomness(release, secure: bool):
    """The release with its source of randomness recorded, as the CLI asked for it.

    Mechanisms record ``metadata["randomness"]`` themselves
    (:func:`invariantdp.mechanisms._base.randomness_note`); a release that
    lacks it gets the entry for what was asked, so no simulation leaves the
    command unmarked.  A contradicting record is a bug and is not caught.
    """

    expected = SECURE if secure else SIMULATION
    recorded = release.metadata.get("randomness")
    if recorded is None:
        return dataclasses.replace(
            release, metadata={**release.metadata, **randomness_note(secure)}
        )
    if recorded != expected:
        raise RuntimeError(
            f"{release.mechanism} recorded randomness {recorded!r} for a {expected} release."
        )
    return release


# --- strict JSON --------------------------------------------------------------


def strict_json(obj):
    """``obj`` with numpy types made plain and non-finite numbers made ``None``.

    RFC 8259 has no NaN or Infinity; the command writes them as ``null`` (an
    infinite confidence bound prints as ``null``: unbounded), as JavaScript's
    ``JSON.stringify`` does.

    >>> strict_json({"ci": (0.5, float("inf")), "n": np.int64(3)})
    {'ci': [0.5, None], 'n': 3}
    """
    if isinstance(obj, dict):
        return {str(k): strict_json(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | np.ndarray):
        return [strict_json(v) for v in obj]
    if isinstance(obj, bool | np.bool_):
        return bool(obj)
    if isinstance(obj, int | np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        return float(obj) if math.isfinite(obj) else None
    return obj


def print_json(obj) -> None:
    """Print ``obj`` as strict JSON; ``allow_nan=False`` guards against regressions."""
    print(json.dumps(strict_json(obj), indent=2, allow_nan=False))


# --- safe atomic writes -------------------------------------------------------
