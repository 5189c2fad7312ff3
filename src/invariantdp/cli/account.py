"""``invariantdp account``: privacy-accounting conversions.

Sub-commands::

    invariantdp account gdp       --epsilon E --delta D       (eps, delta) -> mu
    invariantdp account eps-delta --mu M (--epsilon E | --delta D)
    invariantdp account zcdp      --rho R --delta D [--group K] [--method cks|bun-steinke]
    invariantdp account census    [--rho R] [--a A] [--delta D]
    invariantdp account topdown   [--delta D]
    invariantdp account swapping  --b B --swap-rate P
"""

from __future__ import annotations

import dataclasses

from ..census import census_semi_dp_analysis, topdown_privacy_accounting
from ..privacy import (
    ZCDP_CONVERSIONS,
    eps_delta_to_gdp,
    gdp_group_privacy,
    gdp_to_eps_delta,
    gdp_to_epsilon,
    swapping_epsilon,
    zcdp_group_privacy,
    zcdp_to_eps_delta,
)
from ._common import print_help_and_fail, print_json


def _register(sub) -> None:
    p = sub.add_parser(
        "account",
        help="privacy accounting: GDP / zCDP / (epsilon, delta) conversions, group privacy",
        description=(
            "Convert between privacy definitions (Gaussian DP, zCDP, (epsilon, delta)-DP), "
            "apply group privacy, and reproduce the papers' Census accounting."
        ),
    )
    p.set_defaults(func=lambda args: print_help_and_fail(p))
    acc = p.add_subparsers(dest="account_command", metavar="CONVERSION")
    _command(
        acc,
        "gdp",
        _run_gdp,
        [
            ("--epsilon", {"type": float, "required": True, "help": "privacy loss epsilon, >= 0"}),
            (
                "--delta",
                {"type": float, "required": True, "help": "delta at that epsilon, in (0, 1)"},
            ),
            ("--group", {"type": int, "default": None, "help": "group size k: report k * mu"}),
        ],
        help="(epsilon, delta)-DP -> mu-GDP (exact Balle-Wang relation)",
        description="The mu with delta_mu(epsilon) = delta (Balle & Wang 2018, Thm. 8).",
    )
    _command(
        acc,
        "eps-delta",
        _run_eps_delta,
        [("--mu", {"type": float, "required": True, "help": "Gaussian DP parameter mu, > 0"})],
        one_of=[
            ("--epsilon", {"type": float, "help": ">= 0: report delta"}),
            ("--delta", {"type": float, "help": "in (0, 1): report epsilon"}),
        ],
        help="mu-GDP -> delta at --epsilon, or epsilon at --delta",
        description="delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).",
    )
    _command(
        acc,
        "zcdp",
        _run_zcdp,
        [
            ("--rho", {"type": float, "required": True, "help": "zCDP budget rho, > 0"}),
            (
                "--delta",
                {"type": float, "required": True, "help": "target delta, in (0, 1)"},
            ),
            ("--group", {"type": int, "default": 1, "help": "group size k (default 1)"}),
            (
                "--method",
                {
                    "choices": ZCDP_CONVERSIONS,
                    "default": ZCDP_CONVERSIONS[0],
                    "help": (
                        "cks: the tight conversion of Canonne, Kamath & Steinke 2020, Cor. 13 "
                        "(default); bun-steinke: rho + 2 sqrt(rho log(1/delta)) (Prop. 1.3), "
                        "the one of the Census figures"
                    ),
                },
            ),
        ],
        help="rho-zCDP -> (epsilon, delta)-DP, optionally for groups of size k",
        description=(
            "The epsilon of rho-zCDP at delta (CKS 2020, Cor. 13, or Bun & Steinke 2016, "
            "Prop. 1.3); groups of size k: k^2 rho."
        ),
    )
    _command(
        acc,
        "census",
        _run_census,
        [
            ("--rho", {"type": float, "default": 2.56, "help": "advertised rho (default 2.56)"}),
            (
                "--a",
                {"type": int, "default": 2, "help": "semi-adjacent parameter a(t) (default 2)"},
            ),
            (
                "--delta",
                {
                    "type": float,
                    "default": 1e-10,
                    "help": "delta of the (epsilon, delta) conversion (default 1e-10)",
                },
            ),
        ],
        help="Semi-DP analysis of the 2020 Census (Cho & Awan, Sec. 6.1)",
        description="rho-zCDP with invariants of semi-adjacent parameter a: a^2 rho-zCDP.",
    )
    _command(
        acc,
        "topdown",
        _run_topdown,
        [
            (
                "--delta",
                {
                    "type": float,
                    "default": 1e-10,
                    "help": "delta of the (epsilon, delta) conversion (default 1e-10)",
                },
            )
        ],
        help="zCDP budgets of the 2020 TopDown algorithm (swapping paper, Table 6.2)",
    )
    _command(
        acc,
        "swapping",
        _run_swapping,
        [
            ("--b", {"type": int, "required": True, "help": "largest matching stratum size"}),
            ("--swap-rate", {"type": float, "required": True, "help": "swap rate p in (0, 1)"}),
        ],
        help="epsilon of the swapping Permutation Algorithm (swapping paper, Thm. 5.6)",
    )


def _command(acc, name: str, func, options, *, one_of=(), **texts) -> None:
    """Sub-command ``name`` with ``options`` (flag, keywords), an optional
    required choice of one of ``one_of``, and ``--json``; it runs ``func``."""
    p = acc.add_parser(name, **texts)
    for flag, kwargs in options:
        p.add_argument(flag, **kwargs)
    if one_of:
        which = p.add_mutually_exclusive_group(required=True)
        for flag, kwargs in one_of:
            which.add_argument(flag, **kwargs)
    p.add_argument(
        "--json",
        action="store_true",
        help="print the result as strict JSON (RFC 8259; non-finite numbers as null)",
    )
    p.set_defaults(func=func)


def _emit(args, data: dict, text) -> int:
    """Print ``data`` as JSON with ``--json``, else ``text`` (a string or a Summary)."""
    if args.json:
        print_json(data)
    else:
        print(str(text))
    return 0


def _run_gdp(args) -> int:

    mu = eps_delta_to_gdp(args.epsilon, args.delta)
    data = {"epsilon": args.epsilon, "delta": args.delta, "mu": mu}
    text = f"({args.epsilon:g}, {args.delta:g})-DP at epsilon: mu = {mu:.10g} (mu-GDP)"
    if args.group is not None:
        data["group"] = args.group
        data["group_mu"] = gdp_group_privacy(mu, args.group)
        text += f"\ngroups of size {args.group}: mu = {data['group_mu']:.10g}"
    return _emit(args, data, text)


def _run_eps_delta(args) -> int:

    if args.epsilon is not None:
        delta = gdp_to_eps_delta(args.mu, args.epsilon)
        data = {"mu": args.mu, "epsilon": args.epsilon, "delta": delta}
        text = f"{args.mu:g}-GDP implies (epsilon={args.epsilon:g}, delta={delta:.10g})-DP"
    else:
        eps = gdp_to_epsilon(args.mu, args.delta)
        data = {"mu": args.mu, "epsilon": eps, "delta": args.delta}
        text = f"{args.mu:g}-GDP implies (epsilon={eps:.10g}, delta={args.delta:g})-DP"
    return _emit(args, data, text)


def _run_zcdp(args) -> int:

    rho = zcdp_group_privacy(args.rho, args.group)
    eps = zcdp_to_eps_delta(rho, args.delta, method=args.method)
    data = {"rho": args.rho, "group": args.group, "group_rho": rho, "delta": args.delta}
    data["epsilon"] = eps
    data["method"] = args.method
    text = (
        f"{args.rho:g}-zCDP, groups of size {args.group}: {rho:.10g}-zCDP, "
        f"(epsilon={eps:.10g}, delta={args.delta:g})-DP ({args.method} conversion)"
    )
    return _emit(args, data, text)


def _run_census(args) -> int:

    res = census_semi_dp_analysis(args.rho, args.a, args.delta)
    return _emit(args, dataclasses.asdict(res), res.summary())


def _run_topdown(args) -> int:

    res = topdown_privacy_accounting(delta=args.delta)
    data = {
        "rows": [{"file": f, "unit": u, "rho": r, "epsilon": e} for f, u, r, e in res.rows],
        "total_rho": res.total_rho,
        "total_epsilon": res.total_epsilon,
        "delta": res.delta,
    }
    return _emit(args, data, res.summary())


def _run_swapping(args) -> int:

    eps = float(swapping_epsilon(args.b, args.swap_rate))
    data = {"b": args.b, "swap_rate": args.swap_rate, "epsilon": eps}
    text = f"swapping with b = {args.b}, swap rate {args.swap_rate:g}: epsilon = {eps:.10g}"
    return _emit(args, data, text)


__all__: list[str] = []  # a sub-command: no Python API (see `invariantdp --help`)
