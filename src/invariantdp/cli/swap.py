"""``invariantdp swap``: swap a microdata file with the Permutation Algorithm.

Reads CSV or Parquet, swaps with :func:`invariantdp.mechanisms.permutation_swap`
(Bailie, Gong & Meng, Algorithm 5.1), writes the swapped file atomically
through :func:`invariantdp.cli._common.write_atomic` (never over the input or
an existing file without ``--force``) and prints the privacy loss epsilon of
Theorem 5.6.  The selections and derangements are drawn exactly from the
operating system's CSPRNG unless ``--simulate`` or ``--seed`` ask for a
simulation (numpy generator), which the output then says.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..exceptions import InvariantDPError
from ..mechanisms import permutation_swap
from ._common import (
    add_randomness_args,
    check_output,
    column_list,
    mark_randomness,
    print_json,
    read_csv,
    short,
    simulation_note,
    use_secure,
    write_atomic,
)

__all__: list[str] = []  # a sub-command: no Python API (see `invariantdp --help`)

_PARQUET = (".parquet", ".pq")


def _register(sub) -> None:
    p = sub.add_parser(
        "swap",
        help="swap microdata with the Permutation Algorithm and print its epsilon",
        description=(
            "Swap the --swap columns of the records in INPUT (CSV or Parquet) within the "
            "strata of the --match columns: each record is selected with probability "
            "--swap-rate and the selected records' swapping values are permuted by a "
            "uniformly random derangement (Bailie, Gong & Meng, Algorithm 5.1). The "
            "swapped data go to OUTPUT (format from its extension); epsilon of "
            "Theorem 5.6 is printed. The random draws come from the operating system's "
            "CSPRNG unless --simulate or --seed is given."
        ),
    )
    p.add_argument("input", help="input file, .csv or .parquet")
    p.add_argument("output", help="output file, .csv or .parquet (written atomically)")
    p.add_argument("--swap", type=column_list, required=True, help="swapping columns, a,b,...")
    p.add_argument("--match", type=column_list, default=[], help="matching columns (swap key)")
    p.add_argument("--swap-rate", type=float, required=True, help="swap rate p in (0, 1)")
    add_randomness_args(p)
    p.add_argument("--release", help="also write the Release (JSON) to this file")
    p.add_argument(
        "--force", action="store_true", help="replace OUTPUT and --release if they exist"
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the summary as strict JSON (RFC 8259; non-finite numbers as null)",
    )
    p.set_defaults(func=_run_swap)


def _format(path: Path, option: str) -> str:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in _PARQUET:
        return "parquet"
    raise InvariantDPError(f"`{option}` ({short(str(path))}) must end in .csv or .parquet.")


def _read(path: Path) -> pd.DataFrame:
    if _format(path, "input") == "csv":
        return read_csv(path, "input")
    return pd.read_parquet(path)


def _writer(df: pd.DataFrame, fmt: str):
    if fmt == "csv":
        return lambda fh: df.to_csv(fh, index=False, encoding="utf-8")
    return lambda fh: df.to_parquet(fh, index=False)


def _run_swap(args) -> int:

    src, dst = Path(args.input), Path(args.output)
    _format(src, "input")
    fmt = _format(dst, "output")
    inputs = [("input", src)]
    check_output(dst, inputs=inputs, force=args.force, option="output")
    if args.release is not None:
        check_output(
            args.release, inputs=[*inputs, ("output", dst)], force=args.force, option="--release"
        )
    secure = use_secure(args)
    data = _read(src)
    swapped, release = permutation_swap(
        data,
        swap=args.swap,
        match=args.match,
        swap_rate=args.swap_rate,
        rng=args.seed,
        secure=secure,
    )
    release = mark_randomness(release, secure)
    g = release.guarantee.params
    changed = int((swapped[args.swap] != data[args.swap]).any(axis=1).sum())
    release_text = None if args.release is None else release.to_json(indent=1)
    write_atomic(dst, _writer(swapped, fmt), inputs=inputs, force=args.force, option="output")
    if release_text is not None:
        write_atomic(
            args.release,
            release_text,
            inputs=[*inputs, ("output", dst)],
            force=args.force,
            option="--release",
        )
    if args.json:
        print_json(
            {
                "epsilon": g["epsilon"],
                "b": g["b"],
                "swap_rate": g["swap_rate"],
                "records": len(data),
                "records_changed": changed,
                "output": str(dst),
                "randomness": release.metadata["randomness"],
                "simulation": release.simulation,
            }
        )
        return 0
    print(
        f"swapped {len(data)} records ({changed} changed) -> {dst}\n"
        f"epsilon = {g['epsilon']:.6g}  (Theorem 5.6: b = {g['b']}, swap rate {g['swap_rate']:g}; "
        "pure epsilon-DP given the swapping invariants)"
    )
    if release.simulation:
        print(simulation_note(args.seed))
    else:
        print("randomness: secure (exact sampling from the operating system's CSPRNG)")
    return 0
