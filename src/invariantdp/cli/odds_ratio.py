"""``invariantdp odds-ratio-test`` and ``invariantdp demo``.

A confidential table given with ``--table``/``--table-csv`` is released with
Tulap noise sampled exactly from the operating system's CSPRNG unless
``--simulate`` or ``--seed`` ask for a simulation (numpy generator), which the
output then says; ``-o`` saves that release (the one tested) to publish it.
The release is the registry's ``odds_ratio`` mechanism
(:data:`invariantdp.mechanisms.MECHANISMS`), as ``invariantdp release
odds-ratio`` makes it; an analyst tests a published one with ``--release``.
``demo`` always runs a seeded simulation, so that its output is reproducible.
"""

from __future__ import annotations

import numpy as np

from .. import datasets, umpu_odds_ratio_test
from .._label_text import two_by_two_text
from ..exceptions import InvariantDPError
from ..mechanisms import find_mechanism
from ._common import (
    add_privacy_args,
    add_randomness_args,
    add_test_args,
    check_confidence_level,
    check_output,
    int_list,
    load_release,
    mark_randomness,
    nonnegative_int,
    print_json,
    print_simulation_line,
    read_csv,
    short,
    simulation_note,
    use_secure,
    write_atomic,
)

#: the mechanism of the release tested (the registry's vocabulary)
ODDS_RATIO = find_mechanism("odds_ratio")


def _register(sub) -> None:
    p = sub.add_parser(
        "odds-ratio-test",
        help="semi-DP UMPU test of the odds ratio of a 2x2 table",
        description=(
            "Test the odds ratio of a 2x2 table whose one-way margins are invariant. "
            "Give a confidential table (it is released with Tulap noise, sampled securely "
            "unless --simulate or --seed is given, then tested; -o saves that release to "
            "publish), or a released --statistic with its --margins, or a --release JSON "
            f"file made by `invariantdp release {ODDS_RATIO.cli_name}` (or saved with -o)."
        ),
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--table", type=int_list, help="confidential counts x11,x12,x21,x22")
    src.add_argument("--table-csv", help="CSV of a 2x2 table (first column: row labels)")
    src.add_argument("--statistic", type=float, help="released U = x11 + noise")
    src.add_argument(
        "--release",
        help=f"Release JSON of `invariantdp release {ODDS_RATIO.cli_name}` (or of -o here)",
    )
    p.add_argument("--margins", type=int_list, help="t1.,t2.,t.1,t.2 (with --statistic)")
    add_privacy_args(p)
    add_test_args(p, default_alternative="two-sided")
    p.add_argument(
        "--null-odds-ratio",
        "--odds-ratio",  # its name before the null_<parameter> convention
        dest="null_odds_ratio",
        type=float,
        default=1.0,
        help="null odds ratio (default 1)",
    )
    add_randomness_args(p)
    p.add_argument(
        "-o",
        "--output",
        default=None,
        help=(
            "with --table or --table-csv: also write the release that was tested as JSON "
            "(atomically), to publish it; an analyst tests it with --release"
        ),
    )
    p.add_argument("--force", action="store_true", help="replace --output if it exists")
    p.add_argument(
        "--json",
        action="store_true",
        help=(
            "print the result as strict JSON (RFC 8259): non-finite numbers, such as an "
            "unbounded confidence limit, are written as null"
        ),
    )
    p.set_defaults(func=_run_test)

    d = sub.add_parser(
        "demo",
        help="run the odds-ratio test on a bundled real table (a seeded simulation)",
        description=(
            "Release and test the Physicians' Health Study table. The noise comes from "
            "numpy's generator with a fixed --seed so that the output is reproducible: "
            "a simulation, not for publication."
        ),
    )
    d.add_argument(
        "--epsilon", type=float, default=1.0, help="privacy loss of the release, > 0 (default 1)"
    )
    d.add_argument(
        "--seed",
        type=nonnegative_int,
        default=20240601,
        help="seed of numpy's generator, an integer >= 0 (default 20240601)",
    )
    d.set_defaults(func=_run_demo)


def _table_from_args(args) -> np.ndarray | None:
    if args.table is not None:
        if len(args.table) != 4:
            raise InvariantDPError(
                f"`--table` needs 4 counts x11,x12,x21,x22, got {len(args.table)}."
            )
        return np.array(args.table).reshape(2, 2)
    if args.table_csv is not None:
        df = read_csv(args.table_csv, "--table-csv", index_col=0)
        if df.shape != (2, 2):
            raise InvariantDPError(
                f"`--table-csv` ({short(args.table_csv)}) must hold a 2x2 table, "
                f"got shape {df.shape}."
            )
        return df  # its row and column labels name x11 and the odds ratio in the release
    return None


def _check_args(args) -> None:
    """The rules between options, checked before any file is read."""
    check_confidence_level(args.confidence_level)
    if args.release is not None:
        if args.epsilon is not None or args.margins is not None:
            raise InvariantDPError(
                "`--release` carries its noise and margins; drop --epsilon/--margins."
            )
    elif args.epsilon is None:
        raise InvariantDPError("`--epsilon` is required with --table, --table-csv or --statistic.")
    if args.statistic is None and args.margins is not None and args.release is None:
        raise InvariantDPError("`--margins` is computed from the table; drop it.")
    if args.statistic is not None and args.margins is None:
        raise InvariantDPError("`--margins` t1.,t2.,t.1,t.2 is required with --statistic.")
    if (args.statistic is not None or args.release is not None) and (
        args.simulate or args.seed is not None
    ):
        raise InvariantDPError(
            "`--simulate`/`--seed` apply only when a table is released (--table, --table-csv)."
        )
    if args.output is not None:
        if args.statistic is not None or args.release is not None:
            raise InvariantDPError(
                "`--output` saves the release made from a confidential table (--table, "
                "--table-csv); a --statistic or --release is released already."
            )
        check_output(args.output, inputs=[("--table-csv", args.table_csv)], force=args.force)
    elif args.force:
        raise InvariantDPError("`--force` applies only with --output.")


def _run_test(args) -> int:

    _check_args(args)
    table = _table_from_args(args)
    release = None
    if args.release is not None:
        release = load_release(args.release)
        res = umpu_odds_ratio_test(
            release, alternative=args.alternative, null_odds_ratio=args.null_odds_ratio
        )
    elif table is not None:
        secure = use_secure(args)
        release = ODDS_RATIO.function(
            table, epsilon=args.epsilon, delta=args.delta, rng=args.seed, secure=secure
        )
        release = mark_randomness(release, secure)
        res = umpu_odds_ratio_test(
            release, alternative=args.alternative, null_odds_ratio=args.null_odds_ratio
        )
    else:
        res = umpu_odds_ratio_test(
            args.statistic,
            args.margins,
            epsilon=args.epsilon,
            delta=args.delta,
            alternative=args.alternative,
            null_odds_ratio=args.null_odds_ratio,
        )
    summary = res.summary(args.confidence_level)
    randomness = None if release is None else release.metadata.get("randomness")
    saved = None
    if args.output is not None:  # the release tested, saved before anything is printed
        inputs = [("--table-csv", args.table_csv)]
        saved = write_atomic(
            args.output, release.to_json(indent=1), inputs=inputs, force=args.force
        )
    if args.json:
        out = res.to_dict(args.confidence_level)  # the null is "null_odds_ratio" only
        out["randomness"] = randomness
        out["simulation"] = None if release is None else release.simulation
        out["release_file"] = None if saved is None else str(saved)
        print_json(out)
        return 0
    if table is not None:
        x11 = two_by_two_text(release.data_labels).x11
        released = f"Released U = x11 + Tulap noise from the confidential table (x11: {x11})"
        if release.simulation:
            print(released + ".")
            print(simulation_note(args.seed) + "\n")
        else:
            print(f"{released}; secure: exact sampling from the operating system's CSPRNG.\n")
        if saved is not None:
            print(
                f"wrote the release to {saved}: an analyst tests it with "
                f"`invariantdp odds-ratio-test --release {saved}`\n"
            )
    else:
        print_simulation_line(release, args.release)
    print(summary)
    return 0


def _run_demo(args) -> int:
    from scipy import stats

    df = datasets.aspirin_myocardial_infarction()
    table = df.to_numpy()
    # Everything is computed before the first line is printed, so a bad
    # --epsilon gives one error line and no partial report.
    release = ODDS_RATIO.function(df, epsilon=args.epsilon, rng=args.seed, secure=False)
    release = mark_randomness(release, False)
    res = umpu_odds_ratio_test(release, alternative="greater")
    fisher = stats.fisher_exact(table, alternative="greater")
    sample_or = table[0, 0] * table[1, 1] / (table[0, 1] * table[1, 0])
    print("invariantdp demo: the semi-DP UMPU odds-ratio test (Cho & Awan, Theorem 37)\n")
    print(simulation_note(args.seed, hint=False))
    print("(the demo fixes the seed so that its output is reproducible)\n")
    print("Data: Physicians' Health Study (NEJM 1989), heart attacks by treatment group")
    print(df.to_string())
    print(
        "\nThe curator publishes the one-way margins exactly (the invariants) and releases\n"
        f"U = x11 + Tulap noise at epsilon = {args.epsilon:g} (semi-DP, a(t) = 3).\n"
    )
    print(release.summary())
    print("\nThe analyst tests H0: odds ratio <= 1 against > 1 (placebo raises the odds):\n")
    print(res.summary())
    print(
        f"\nFor reference, the non-private analysis of the confidential table:\n"
        f"  sample odds ratio {sample_or:.4f}, Fisher's exact one-sided p-value {fisher.pvalue:.3e}"
    )
    return 0


__all__: list[str] = []  # a sub-command: no Python API (see `invariantdp --help`)
