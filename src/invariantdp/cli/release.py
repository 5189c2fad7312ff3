"""``invariantdp release``: privatize a CSV table and write the Release as JSON."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

_PLAIN = {
    "laplace": ("laplace", ("epsilon",)),
    "gaussian": ("gaussian", ("mu", "epsilon", "delta")),
    "discrete-laplace": ("discrete_laplace", ("epsilon",)),
    "discrete-gaussian": ("discrete_gaussian", ("mu", "rho")),
    "tulap": ("tulap", ("epsilon", "delta")),
    "lp": ("lp_mechanism", ("epsilon",)),
}
_SUBSPACE = {
    "projected-gaussian": ("projected_gaussian", ("mu", "epsilon", "delta")),
    "projected-laplace": ("projected_laplace", ("epsilon",)),
    "extended-gaussian": ("extended_gaussian", ("mu", "epsilon", "delta")),
    "extended-laplace": ("extended_laplace", ("epsilon",)),
}
_SEMI = {
    "semi-dp-gaussian": ("semi_dp_gaussian", ("mu",)),
    "semi-dp-knorm": ("semi_dp_knorm", ("epsilon",)),
}
MECHANISMS = sorted({**_PLAIN, **_SUBSPACE, **_SEMI})


def register(sub) -> None:
    p = sub.add_parser(
        "release",
        help="privatize a table with a mechanism and write the Release as JSON",
        description=(
            "Read a confidential table from CSV (first column: row labels), add the noise "
            "of MECHANISM, and write the Release (value, invariants, noise law, privacy "
            "guarantee) as JSON, atomically. Subspace mechanisms keep the --invariants "
            "exactly; semi-DP mechanisms keep the one-way margins."
        ),
    )
    p.add_argument("mechanism", choices=MECHANISMS, help="the mechanism")
    p.add_argument("table", help="CSV file of the confidential table (first column: labels)")
    p.add_argument(
        "--invariants",
        default=None,
        help=(
            "for subspace mechanisms: 'margins' (one-way margins), 'total', 'row-totals', "
            "'column-totals', or a JSON file holding Invariants.to_dict()"
        ),
    )
    p.add_argument("--epsilon", type=float, default=None, help="privacy loss, > 0")
    p.add_argument("--delta", type=float, default=None, help="in [0, 1)")
    p.add_argument("--mu", type=float, default=None, help="Gaussian DP parameter, > 0")
    p.add_argument("--rho", type=float, default=None, help="zCDP parameter, > 0")
    p.add_argument("--sensitivity", type=float, default=None, help="sensitivity (default 1)")
    p.add_argument("--p", default=None, help="norm of the lp mechanism: 1, 2 or inf")
    p.add_argument("--seed", type=int, default=None, help="seed of the noise")
    p.add_argument("-o", "--output", required=True, help="path of the JSON release")
    p.set_defaults(func=run_release)


def _invariants(spec, shape):
    from ..invariants import Invariants, one_way_margins, totals

    if spec is None:
        raise ValueError("`--invariants` is required for subspace mechanisms.")
    if spec == "margins":
        return one_way_margins(shape)
    if spec == "total":
        return totals(np.zeros(shape, dtype=int))
    if spec == "row-totals":
        return totals(np.repeat(np.arange(shape[0]), shape[1]).reshape(shape))
    if spec == "column-totals":
        return totals(np.tile(np.arange(shape[1]), shape[0]).reshape(shape))
    with open(spec, encoding="utf-8") as fh:
        inv = Invariants.from_dict(json.load(fh))
    if inv.n_cells != int(np.prod(shape)):
        raise ValueError(
            f"`--invariants` act on {inv.n_cells} cells but the table has {int(np.prod(shape))}."
        )
    return inv


def run_release(args) -> int:
    from .. import mechanisms

    table = pd.read_csv(args.table, index_col=0).to_numpy()
    if table.dtype.kind not in "iuf":
        raise ValueError(f"`table` ({args.table}) must hold numbers, got dtype {table.dtype}.")
    name = args.mechanism
    func_name, allowed = {**_PLAIN, **_SUBSPACE, **_SEMI}[name]
    func = getattr(mechanisms, func_name)
    given = {k: getattr(args, k) for k in ("epsilon", "delta", "mu", "rho")}
    extra = sorted(k for k, v in given.items() if v is not None and k not in allowed)
    if extra:
        raise ValueError(
            f"`--{extra[0]}` does not apply to {name} (it takes {', '.join(allowed)})."
        )
    kwargs = {k: v for k, v in given.items() if v is not None}
    if args.sensitivity is not None:
        if name in _SEMI:
            raise ValueError(f"`--sensitivity` does not apply to {name} (fixed by Prop. 32).")
        kwargs["sensitivity"] = args.sensitivity
    if args.p is not None and name != "lp":
        raise ValueError("`--p` applies only to the lp mechanism.")
    if name in _SUBSPACE:
        release = func(table, _invariants(args.invariants, table.shape), rng=args.seed, **kwargs)
    else:
        if args.invariants is not None:
            raise ValueError(f"`--invariants` does not apply to {name}.")
        if name == "lp":
            if args.p is None:
                raise ValueError("`--p` (1, 2 or inf) is required for the lp mechanism.")
            p = args.p if args.p.lower().startswith("inf") else float(args.p)
            release = func(table, p, rng=args.seed, **kwargs)
        else:
            release = func(table, rng=args.seed, **kwargs)
    path = release.save(args.output)
    print(f"wrote {release.mechanism} release to {path} ({release.guarantee.describe()})")
    return 0


__all__ = ["MECHANISMS", "register", "run_release"]
