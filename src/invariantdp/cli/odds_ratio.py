"""``invariantdp odds-ratio-test`` and ``invariantdp demo``."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._common import add_privacy_args, int_list, print_json


def register(sub) -> None:
    p = sub.add_parser(
        "odds-ratio-test",
        help="semi-DP UMPU test of the odds ratio of a 2x2 table",
        description=(
            "Test the odds ratio of a 2x2 table whose one-way margins are invariant. "
            "Give a confidential table (it is released with Tulap noise, then tested), "
            "or a released --statistic with its --margins, or a --release JSON file."
        ),
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--table", type=int_list, help="confidential counts x11,x12,x21,x22")
    src.add_argument("--table-csv", help="CSV of a 2x2 table (first column: row labels)")
    src.add_argument("--statistic", type=float, help="released U = x11 + noise")
    src.add_argument("--release", help="Release JSON written by invariantdp")
    p.add_argument("--margins", type=int_list, help="t1.,t2.,t.1,t.2 (with --statistic)")
    add_privacy_args(p)
    p.add_argument("--alternative", default="greater", choices=["greater", "less", "two-sided"])
    p.add_argument("--odds-ratio", type=float, default=1.0, help="null odds ratio (default 1)")
    p.add_argument("--confidence-level", type=float, default=0.95)
    p.add_argument("--seed", type=int, default=None, help="seed of the release noise")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=run_test)

    d = sub.add_parser("demo", help="run the odds-ratio test on a bundled real table")
    d.add_argument("--epsilon", type=float, default=1.0)
    d.add_argument("--seed", type=int, default=20240601)
    d.set_defaults(func=run_demo)


def _table_from_args(args) -> np.ndarray | None:
    if args.table is not None:
        if len(args.table) != 4:
            raise ValueError(f"`--table` needs 4 counts x11,x12,x21,x22, got {len(args.table)}.")
        return np.array(args.table).reshape(2, 2)
    if args.table_csv is not None:
        df = pd.read_csv(args.table_csv, index_col=0)
        if df.shape != (2, 2):
            raise ValueError(f"`--table-csv` must hold a 2x2 table, got shape {df.shape}.")
        return df.to_numpy()
    return None


def run_test(args) -> int:
    from .. import Release, umpu_odds_ratio_test
    from ..mechanisms import odds_ratio_release

    table = _table_from_args(args)
    release = None
    if args.release is not None:
        if args.epsilon is not None or args.margins is not None:
            raise ValueError("`--release` carries its noise and margins; drop --epsilon/--margins.")
        release = Release.load(args.release)
        res = umpu_odds_ratio_test(
            release, alternative=args.alternative, odds_ratio=args.odds_ratio
        )
    else:
        if args.epsilon is None:
            raise ValueError("`--epsilon` is required with --table, --table-csv or --statistic.")
        if table is not None:
            if args.margins is not None:
                raise ValueError("`--margins` is computed from the table; drop it.")
            release = odds_ratio_release(
                table, epsilon=args.epsilon, delta=args.delta, rng=args.seed
            )
            res = umpu_odds_ratio_test(
                release, alternative=args.alternative, odds_ratio=args.odds_ratio
            )
        else:
            if args.margins is None:
                raise ValueError("`--margins` t1.,t2.,t.1,t.2 is required with --statistic.")
            res = umpu_odds_ratio_test(
                args.statistic,
                args.margins,
                epsilon=args.epsilon,
                delta=args.delta,
                alternative=args.alternative,
                odds_ratio=args.odds_ratio,
            )
    ci = res.confidence_interval(args.confidence_level)
    if args.json:
        print_json(
            {
                "statistic": res.statistic,
                "margins": list(res.margins),
                "pvalue": res.pvalue,
                "alternative": res.alternative,
                "odds_ratio": res.odds_ratio,
                "estimate": res.estimate,
                "confidence_interval": [ci.low, ci.high],
                "confidence_level": args.confidence_level,
                "epsilon": res.epsilon,
                "delta": res.delta,
            }
        )
        return 0
    if table is not None:
        print(f"Released U = x11 + Tulap noise from the confidential table (seed {args.seed}).\n")
    print(res.summary(args.confidence_level))
    return 0


def run_demo(args) -> int:
    from scipy import stats

    from .. import datasets, umpu_odds_ratio_test
    from ..mechanisms import odds_ratio_release

    df = datasets.aspirin_myocardial_infarction()
    table = df.to_numpy()
    print("invariantdp demo: the semi-DP UMPU odds-ratio test (Cho & Awan, Theorem 37)\n")
    print("Data: Physicians' Health Study (NEJM 1989), heart attacks by treatment group")
    print(df.to_string())
    print(
        "\nThe curator publishes the one-way margins exactly (the invariants) and releases\n"
        f"U = x11 + Tulap noise at epsilon = {args.epsilon:g} (semi-DP, a(t) = 3).\n"
    )
    release = odds_ratio_release(table, epsilon=args.epsilon, rng=args.seed)
    print(release.summary())
    print("\nThe analyst tests H0: odds ratio <= 1 against > 1 (placebo raises the odds):\n")
    res = umpu_odds_ratio_test(release, alternative="greater")
    print(res.summary())
    fisher = stats.fisher_exact(table, alternative="greater")
    sample_or = table[0, 0] * table[1, 1] / (table[0, 1] * table[1, 0])
    print(
        f"\nFor reference, the non-private analysis of the confidential table:\n"
        f"  sample odds ratio {sample_or:.4f}, Fisher's exact one-sided p-value {fisher.pvalue:.3e}"
    )
    return 0


__all__ = ["register", "run_demo", "run_test"]
