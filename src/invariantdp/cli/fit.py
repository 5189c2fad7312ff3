"""``invariantdp fit``: models fitted to a projected-Gaussian release.

Sub-commands::

    invariantdp fit poisson   --release R --data D.csv (--formula F | --exog A,B)
                              [--label-columns A,B] [--json]
    invariantdp fit loglinear --release R [--independence-method pearson|lr] [--json]

``poisson`` fits :class:`~invariantdp.inference.PrivatizedPoisson`: the
released counts are the response and ``--data`` (one row per released cell)
holds the covariates.  The response is always the release's values: the left
side of ``--formula`` only names it (``count ~ x`` and ``~ x`` fit the same
model), and a column of ``--data`` of that name is not used.  The rows of
``--data`` are matched to the release's cells by ``--label-columns`` (the
release's labels), or else taken in the order of the cells.

``loglinear`` fits :class:`~invariantdp.inference.PrivatizedLogLinear`
to an r x c table released with its one-way margins invariant (e.g.
``invariantdp release semi-dp-gaussian``) and tests independence.
"""

from __future__ import annotations

import re

import numpy as np

from ..exceptions import InvariantDPError
from ..inference import PrivatizedLogLinear, PrivatizedPoisson
from ..inference._invariant_likelihoods import release_sigma
from ._common import (
    column_list,
    load_release,
    print_help_and_fail,
    print_json,
    print_simulation_line,
    read_csv,
    short,
)

__all__ = ["register", "run_loglinear", "run_poisson"]

#: The name of the response when the formula's left side is empty.
_RESPONSE = "released"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_JSON_HELP = "print the fit as strict JSON (RFC 8259; non-finite numbers as null)"


def register(sub) -> None:
    p = sub.add_parser(
        "fit",
        help="fit a Poisson regression or a log-linear model to a privatized release",
        description=(
            "Fit a model that accounts for the privacy noise of a projected-Gaussian "
            "release (its likelihood includes the noise law and the invariants): "
            "'poisson' regresses the released counts on covariates, 'loglinear' fits an "
            "r x c table released with invariant margins and tests independence."
        ),
    )
    p.set_defaults(func=lambda args: print_help_and_fail(p))
    models = p.add_subparsers(dest="model", metavar="MODEL")

    po = models.add_parser(
        "poisson",
        help="Poisson log-linear regression of released counts (PrivatizedPoisson)",
        description=(
            "Regress the counts of a projected-Gaussian --release on the covariates of "
            "--data (CSV, one row per released cell). The response is always the release's "
            "values: the left side of --formula only names it, and a --data column of that "
            "name is ignored. Rows are matched to the cells by --label-columns, or else "
            "taken in the order of the cells."
        ),
    )
    po.add_argument(
        "--release",
        required=True,
        help="Release JSON of the counts (projected or extended Gaussian mechanism)",
    )
    po.add_argument(
        "--data", required=True, help="CSV of the covariates, one row per released cell"
    )
    design = po.add_mutually_exclusive_group(required=True)
    design.add_argument(
        "--formula",
        help=(
            "model formula such as 'count ~ x + C(state)' (an intercept is included "
            "unless '- 1'); the left side is ignored: the response is the release's values"
        ),
    )
    design.add_argument(
        "--exog",
        type=column_list,
        metavar="A[,B...]",
        help="numeric covariate columns of --data, used with a constant (an intercept)",
    )
    po.add_argument(
        "--label-columns",
        type=column_list,
        default=None,
        metavar="A[,B...]",
        help=(
            "columns of --data matching the release's labels (one per label axis, compared "
            "as text): rows are put in the order of the release's cells"
        ),
    )
    po.add_argument("--json", action="store_true", help=_JSON_HELP)
    po.set_defaults(func=run_poisson)

    ll = models.add_parser(
        "loglinear",
        help="log-linear model and independence test of a table (PrivatizedLogLinear)",
        description=(
            "Fit the interaction parameters of an r x c table released with its one-way "
            "margins invariant (semi-DP Gaussian or projected Gaussian with 'margins') and "
            "test independence (all interactions zero)."
        ),
    )
    ll.add_argument(
        "--release",
        required=True,
        help="Release JSON of an r x c table whose one-way margins are invariant",
    )
    ll.add_argument(
        "--independence-method",
        choices=["pearson", "lr"],
        default="pearson",
        help=("independence test: generalised Pearson statistic (default) or likelihood ratio"),
    )
    ll.add_argument("--json", action="store_true", help=_JSON_HELP)
    ll.set_defaults(func=run_loglinear)


# --- poisson ------------------------------------------------------------------


def _response_and_rhs(formula: str) -> tuple[str, str]:
    """Split ``--formula`` into the response's name and the right-hand side."""
    lhs, sep, rhs = formula.partition("~")
    if not sep or not rhs.strip():
        raise InvariantDPError(
            f"`--formula` ({short(formula)}) must have the form 'count ~ x + z' or '~ x + z'."
        )
    lhs = lhs.strip()
    if lhs and not _NAME.fullmatch(lhs):
        raise InvariantDPError(
            f"`--formula` ({short(formula)}): its left side must be a plain name or empty "
            "(the response is always the release's values), not an expression."
        )
    return lhs or _RESPONSE, rhs.strip()


def _align(data, release, label_columns):
    """``data``'s rows in the order of the release's cells."""
    import pandas as pd

    cells = release.to_series().index
    if label_columns is None:
        if len(data) != cells.size:
            raise InvariantDPError(
                f"`--data` has {len(data)} rows but the release has {cells.size} cells: give "
                "one row per cell in the release's order, or --label-columns to match them."
            )
        return data.reset_index(drop=True)
    if release.labels is None:
        raise InvariantDPError(
            "`--label-columns` match --data to the release's labels, but the release has "
            "none: give one row per cell in the release's order instead."
        )
    missing = [c for c in label_columns if c not in data.columns]
    if missing:
        raise InvariantDPError(
            f"`--label-columns` names {short(missing[0])}, which is not a column of `--data`."
        )
    if len(label_columns) != cells.nlevels:
        raise InvariantDPError(
            f"`--label-columns` gives {len(label_columns)} columns but the release's cells "
            f"have {cells.nlevels} labels each ({short(list(cells.names))})."
        )
    # compared as text: a JSON label "01001" and a CSV column read as 1001 are not
    # confused, and a numeric label read back as an int still matches its CSV text
    key = pd.MultiIndex.from_frame(data[label_columns].astype(str))
    if key.has_duplicates:
        dup = key[key.duplicated()][0]
        raise InvariantDPError(
            f"`--label-columns` {short(label_columns)} must identify one row of --data each; "
            f"{short(list(dup))} appears more than once."
        )
    wanted = pd.MultiIndex.from_frame(cells.to_frame(index=False).astype(str))
    pos = key.get_indexer(wanted)
    if (pos < 0).any():
        first = wanted[int(np.flatnonzero(pos < 0)[0])]
        raise InvariantDPError(
            f"`--data` has no row for the release's cell {short(list(first))} "
            f"({int((pos < 0).sum())} of {cells.size} cells missing); --label-columns are "
            f"matched, in order, to the release's labels {short(list(cells.names))}."
        )
    return data.iloc[pos].reset_index(drop=True)


def _poisson_model(args, release, data):
    import pandas as pd

    y = np.asarray(release.value, dtype=float).reshape(-1)
    if args.exog is not None:
        missing = [c for c in args.exog if c not in data.columns]
        if missing:
            raise InvariantDPError(
                f"`--exog` names {short(missing[0])}, which is not a column of `--data`; "
                f"its columns are {short(list(data.columns), 200)}."
            )
        exog = data[args.exog]
        bad = [
            c
            for c in args.exog
            if not pd.api.types.is_numeric_dtype(exog[c]) or pd.api.types.is_bool_dtype(exog[c])
        ]
        if bad:
            raise InvariantDPError(
                f"`--exog` column {short(bad[0])} must hold numbers, got dtype "
                f"{exog[bad[0]].dtype}; use --formula with C({bad[0]}) for a categorical."
            )
        exog = exog.astype(float)
        exog.insert(0, "const", 1.0)
        return PrivatizedPoisson(release, exog, endog_name=_RESPONSE), _RESPONSE
    name, rhs = _response_and_rhs(args.formula)
    frame = data.copy()
    frame[name] = y  # the response is the release's values, whatever --data holds
    try:
        model = PrivatizedPoisson.from_formula(
            f"{name} ~ {rhs}", frame, release=release, missing="raise", endog_name=name
        )
    except InvariantDPError:
        raise
    except Exception as exc:
        # The formula engine (patsy or formulaic) raises its own exception classes,
        # and NameError or SyntaxError from evaluating the user's terms.
        raise InvariantDPError(
            f"`--formula` ({short(args.formula)}) cannot be evaluated on `--data`: "
            f"{type(exc).__name__}: {exc}"
        ) from None
    return model, name


def _coefficients(res, names) -> dict:
    """``params``, ``bse`` and ``pvalues`` as name -> value mappings."""
    out = {}
    for key in ("params", "bse", "pvalues"):
        values = np.asarray(getattr(res, key), dtype=float)
        out[key] = dict(zip(names, values.tolist(), strict=True))
    return out


def _named(path, build):
    """``build()``, its refusals of the release named after ``--release``."""
    try:
        return build()
    except InvariantDPError as exc:  # the library speaks of `release`, the user gave a file
        raise InvariantDPError(f"`--release` ({short(path)}): {exc}") from None


def run_poisson(args) -> int:

    release = load_release(args.release)
    _named(args.release, lambda: release_sigma(release))  # before reading --data
    data = read_csv(args.data, "--data")
    data = _align(data, release, args.label_columns)
    model, response = _poisson_model(args, release, data)
    res = model.fit(disp=0)
    return _report(
        args,
        release,
        model,
        res,
        {
            "model": "PrivatizedPoisson",
            "response": response,
            "response_values": "the release's values",
            "formula": args.formula,
            "exog": list(model.exog_names),
        },
    )


def _report(args, release, model, res, head: dict, test=None) -> int:
    """Print the fit as strict JSON (``--json``) or as its summary (and the test's)."""
    if args.json:
        extra = {} if test is None else {"independence_test": test.to_dict()}
        print_json(
            {
                **head,
                **_coefficients(res, list(model.exog_names)),
                "llf": res.llf,
                "nobs": int(res.nobs),
                "converged": bool(res.mle_retvals.get("converged", True)),
                "sigma": model.sigma,
                **extra,
                "randomness": release.metadata.get("randomness"),
                "simulation": release.simulation,
            }
        )
        return 0
    summary = str(res.summary())
    print_simulation_line(release, args.release)
    print(summary)
    if test is not None:
        print()
        print(test.summary())
    return 0


# --- loglinear ----------------------------------------------------------------


def run_loglinear(args) -> int:

    release = load_release(args.release)
    model = _named(args.release, lambda: PrivatizedLogLinear(release))
    res = model.fit(disp=0)
    test = model.test_independence(method=args.independence_method)
    head = {"model": "PrivatizedLogLinear", "table_shape": list(model.table_shape)}
    return _report(args, release, model, res, head, test)
