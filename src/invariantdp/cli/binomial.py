"""``invariantdp binomial-test``: the DP uniformly most powerful test of a proportion.

The analyst has a count ``X ~ Binomial(n, p)`` released with Tulap noise,
``Z = X + N`` (Awan & Slavkovic 2018), either as the number ``--statistic``
with the privacy parameters of the noise, or as the release JSON written by
``invariantdp release tulap`` (the noise law travels with it).  The command
prints the result of :func:`invariantdp.ump_binomial_test`: the p-value, the
median-unbiased estimate and the confidence interval (text or strict JSON).
"""

from __future__ import annotations

import argparse
import math

from .. import ump_binomial_test
from ..exceptions import InvariantDPError
from ._common import (
    add_privacy_args,
    add_test_args,
    check_confidence_level,
    load_release,
    print_json,
    print_simulation_line,
    short,
)

__all__: list[str] = []  # a sub-command: no Python API (see `invariantdp --help`)


def _trials(text: str) -> int:
    """Parse ``--n``: a whole number >= 1 (``1e3`` is accepted as 1000)."""
    rule = "expected a whole number of trials >= 1"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{rule}, got {short(text)}") from None
    if not (math.isfinite(value) and value >= 1 and value == int(value)):
        raise argparse.ArgumentTypeError(f"{rule}, got {short(text)}")
    return int(value)


def _register(sub) -> None:
    p = sub.add_parser(
        "binomial-test",
        help="DP UMP test of a binomial proportion from a Tulap-noised count",
        description=(
            "Test H0: p = P (or p <= P, p >= P) for a count X ~ Binomial(N, p) released as "
            "Z = X + Tulap noise (Awan & Slavkovic 2018): give the released --statistic Z "
            "with --epsilon (and --delta) of the noise, or a --release JSON file of the "
            "count written by `invariantdp release tulap`. Prints the p-value, the "
            "median-unbiased estimate and the confidence interval."
        ),
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--statistic", type=float, help="released Z = X + Tulap noise")
    src.add_argument(
        "--release",
        help="Release JSON of one count made by the Tulap mechanism (sensitivity 1)",
    )
    p.add_argument("--n", type=_trials, required=True, help="number of trials N, >= 1")
    p.add_argument("--null-p", type=float, required=True, help="null proportion P, in (0, 1)")
    add_privacy_args(p)
    add_test_args(p, default_alternative="two-sided")
    p.add_argument(
        "--json",
        action="store_true",
        help=("print the result as strict JSON (RFC 8259): non-finite numbers are written as null"),
    )
    p.set_defaults(func=_run_binomial_test)


def _check_args(args) -> None:
    """The rules between options, checked before any file is read."""
    check_confidence_level(args.confidence_level)
    if not 0.0 < args.null_p < 1.0:  # also refuses nan
        raise InvariantDPError(f"`--null-p` ({args.null_p!r}) must be in (0, 1).")
    if args.release is not None:
        if args.epsilon is not None or args.delta != 0.0:
            raise InvariantDPError("`--release` carries its noise law; drop --epsilon/--delta.")
    elif args.epsilon is None:
        raise InvariantDPError("`--epsilon` is required with --statistic.")


def _run_binomial_test(args) -> int:

    _check_args(args)
    release = None
    if args.release is not None:
        release = load_release(args.release)
        if release.value.size != 1:
            raise InvariantDPError(
                f"`--release` ({short(args.release)}) must hold one count, got "
                f"{release.value.size} values (shape {release.value.shape})."
            )
        res = ump_binomial_test(release, args.n, args.null_p, alternative=args.alternative)
    else:
        res = ump_binomial_test(
            args.statistic,
            args.n,
            args.null_p,
            epsilon=args.epsilon,
            delta=args.delta,
            alternative=args.alternative,
        )
    # everything is computed before the first line is printed
    summary = res.summary(args.confidence_level)
    if args.json:
        release_fields = {
            "randomness": None if release is None else release.metadata.get("randomness"),
            "simulation": None if release is None else release.simulation,
        }
        print_json({**res.to_dict(args.confidence_level), **release_fields})
        return 0
    print_simulation_line(release, args.release)
    print(summary)
    return 0
