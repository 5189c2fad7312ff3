"""``invariantdp fit``: models fitted to a release with Gaussian-type noise.

Sub-commands::

    invariantdp fit poisson   --release R --data D.csv (--formula F | --exog A,B)
                              [--label-columns A,B] [--test TERM ...]
                              [--likelihood auto|exact|gaussian] [--json]
    invariantdp fit loglinear --release R [--given AXIS ...]
                              [--independence-method pearson|lr]
                              [--likelihood auto|exact|gaussian] [--json]

Both take a release with Gaussian-type noise (``gaussian``, ``grid_gaussian``,
``discrete_gaussian``, ``projected_gaussian``, ``extended_gaussian``,
``correlated_gaussian``), with or without invariants, and condition on the
invariants (:mod:`invariantdp.inference._count_likelihoods`: the exact
likelihood of discrete Gaussian noise of small ``sigma``, else the Gaussian
one; ``--likelihood`` chooses).

``poisson`` fits :class:`~invariantdp.inference.PrivatizedPoisson`: the
released counts are the response and ``--data`` (one row per released cell)
holds the covariates.  The response is always the release's values: the left
side of ``--formula`` only names it (``count ~ x`` and ``~ x`` fit the same
model), and a column of ``--data`` of that name is not used.  The rows of
``--data`` are matched to the release's cells by ``--label-columns`` (the
release's labels), or else taken in the order of the cells.  ``--test TERM``
(repeatable: one group of terms) tests that every coefficient of the terms
is zero, by the likelihood ratio against the fit without them and by the
Wald test; a term is named as the formula's design names it
(``C(sex):C(age)``), or by an ``--exog`` column.

``loglinear`` fits :class:`~invariantdp.inference.PrivatizedLogLinear` to a
table release and tests independence of its two axes, or conditional
independence given the ``--given`` axes (e.g. sex x age given county).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .._results import format_table
from ..exceptions import InvariantDPError
from ..inference import PrivatizedLogLinear, PrivatizedPoisson, exact_unavailable, observe_release
from ._common import (
    column_list,
    load_release,
    print_help_and_fail,
    print_json,
    print_simulation_line,
    read_csv,
    short,
)

__all__: list[str] = []  # a sub-command: no Python API (see `invariantdp --help`)

#: The name of the response when the formula's left side is empty.
_RESPONSE = "released"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_JSON_HELP = "print the fit as strict JSON (RFC 8259; non-finite numbers as null)"
_LIKELIHOOD_HELP = (
    "likelihood of the release: 'exact' (discrete Gaussian noise, invariants that are totals), "
    "'gaussian', or 'auto' (default: exact for discrete Gaussian sigma <= 5 where it applies)"
)
_GAUSSIAN_TYPE = (
    "Gaussian-type noise: gaussian, grid_gaussian, discrete_gaussian, projected_gaussian, "
    "extended_gaussian or correlated_gaussian, with or without invariants"
)


def _register(sub) -> None:
    p = sub.add_parser(
        "fit",
        help="fit a Poisson regression or a log-linear model to a privatized release",
        description=(
            "Fit a model that accounts for the privacy noise of a release with "
            f"{_GAUSSIAN_TYPE} (its likelihood includes the noise law and conditions on the "
            "invariants): 'poisson' regresses the released counts on covariates and tests "
            "groups of terms, 'loglinear' fits a table and tests (conditional) independence."
        ),
    )
    p.set_defaults(func=lambda args: print_help_and_fail(p))
    models = p.add_subparsers(dest="model", metavar="MODEL")

    po = models.add_parser(
        "poisson",
        help="Poisson log-linear regression of released counts (PrivatizedPoisson)",
        description=(
            "Regress the counts of a --release on the covariates of --data (CSV, one row per "
            "released cell). The response is always the release's values: the left side of "
            "--formula only names it, and a --data column of that name is ignored. Rows are "
            "matched to the cells by --label-columns, or else taken in the order of the "
            "cells. --test tests a group of terms (likelihood ratio and Wald)."
        ),
    )
    po.add_argument(
        "--release",
        required=True,
        help=f"Release JSON of the counts ({_GAUSSIAN_TYPE})",
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
    po.add_argument(
        "--test",
        action="append",
        metavar="TERM",
        default=None,
        help=(
            "a term of --formula as its design names it (e.g. 'C(sex):C(age)'), or an --exog "
            "column; repeat for a group: tests that all their coefficients are zero "
            "(likelihood ratio against the fit without them, and Wald)"
        ),
    )
    po.add_argument(
        "--likelihood",
        choices=["auto", "exact", "gaussian"],
        default="auto",
        help=_LIKELIHOOD_HELP,
    )
    po.add_argument("--json", action="store_true", help=_JSON_HELP)
    po.set_defaults(func=_run_poisson)

    ll = models.add_parser(
        "loglinear",
        help="log-linear model and (conditional) independence test of a table "
        "(PrivatizedLogLinear)",
        description=(
            "Fit the saturated log-linear model of a table release and test independence "
            "of its two axes (all interactions zero), or conditional independence given the "
            "--given axes (sex x age given county). Margins published exactly are "
            "conditioned on; otherwise the main effects are estimated too."
        ),
    )
    ll.add_argument(
        "--release",
        required=True,
        help=f"Release JSON of a table ({_GAUSSIAN_TYPE})",
    )
    ll.add_argument(
        "--given",
        action="append",
        metavar="AXIS",
        default=None,
        help="a stratum axis of the table (name or position); repeatable",
    )
    ll.add_argument(
        "--likelihood",
        choices=["auto", "exact", "gaussian"],
        default="auto",
        help=_LIKELIHOOD_HELP,
    )
    ll.add_argument(
        "--independence-method",
        choices=["pearson", "lr"],
        default="pearson",
        help=("independence test: generalised Pearson statistic (default) or likelihood ratio"),
    )
    ll.add_argument("--json", action="store_true", help=_JSON_HELP)
    ll.set_defaults(func=_run_loglinear)


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
        # the response is named as in Python: the name the release records for its values
        name = release.metadata.get("value_name") or _RESPONSE
        model = PrivatizedPoisson(release, exog, likelihood=args.likelihood, endog_name=name)
        return model, name
    name, rhs = _response_and_rhs(args.formula)
    frame = data.copy()
    frame[name] = y  # the response is the release's values, whatever --data holds
    try:
        model = PrivatizedPoisson.from_formula(
            f"{name} ~ {rhs}",
            frame,
            release=release,
            missing="raise",
            endog_name=name,
            likelihood=args.likelihood,
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


def _check_release(args, release) -> None:
    """Refuse a release the models cannot use, or a ``--likelihood`` that does not apply."""
    obs = _named(args.release, lambda: observe_release(release))
    if args.likelihood == "exact":
        why = exact_unavailable(obs)
        if why:
            raise InvariantDPError(
                f"`--likelihood` (exact) does not apply to `--release` ({short(args.release)}): "
                f"{why}; use --likelihood gaussian or auto."
            )


def _named(path, build):
    """``build()``, its refusals of the release named after ``--release``."""
    try:
        return build()
    except InvariantDPError as exc:  # the library speaks of `release`, the user gave a file
        raise InvariantDPError(f"`--release` ({short(path)}): {exc}") from None


def _term_columns(model, terms: list[str]) -> list[int]:
    """The design columns of ``terms`` (formula terms as the design names them, or columns)."""
    names = list(model.exog_names)
    spec = getattr(model, "model_spec", None)
    slices = getattr(spec, "term_name_slices", None) or {
        n: slice(i, i + 1) for i, n in enumerate(names)
    }
    known = {k.replace(" ", ""): v for k, v in slices.items()}
    cols: list[int] = []
    for term in terms:
        sl = known.get(term.replace(" ", ""))
        if sl is None:
            raise InvariantDPError(
                f"`--test` ({short(term)}) is not a term of the model; its terms are "
                f"{short([k for k in slices if k != 'Intercept'], 300)}."
            )
        cols.extend(range(len(names))[sl])
    cols = sorted(set(cols))
    if len(cols) == len(names):
        raise InvariantDPError("`--test` names every term of the model: nothing would be left.")
    return cols


def _term_test(release, model, res, terms: list[str], likelihood: str) -> dict:
    """Likelihood ratio (against the fit without ``terms``) and Wald tests of ``terms``."""

    cols = _term_columns(model, terms)
    names = list(model.exog_names)
    R = np.eye(len(names))[cols]
    wald = res.wald_test(R, scalar=True)
    kept = pd.DataFrame(
        np.delete(model.exog, cols, axis=1),
        columns=[n for i, n in enumerate(names) if i not in cols],
    )
    restricted = PrivatizedPoisson(
        release, kept, offset=model.offset_, likelihood=likelihood, endog_name=_RESPONSE
    ).fit(disp=0)
    lr = res.compare_lr_test(restricted)
    return {
        "terms": list(terms),
        "coefficients": [names[i] for i in cols],
        "likelihood_ratio": {
            "statistic": lr.statistic,
            "df": lr.df_diff,
            "pvalue": lr.pvalue,
        },
        "wald": {
            "statistic": float(wald.statistic),
            "df": int(wald.df_denom),
            "pvalue": float(wald.pvalue),
        },
        "likelihood": lr.likelihood,
    }


def _term_test_table(test: dict):
    lr, wald = test["likelihood_ratio"], test["wald"]
    return format_table(
        f"Test that the coefficients of {', '.join(test['terms'])} are zero",
        [
            ("coefficients", len(test["coefficients"])),
            ("likelihood ratio", lr["statistic"]),
            ("  df, p-value", f"{lr['df']}, {lr['pvalue']:.4g}"),
            ("Wald chi-squared", wald["statistic"]),
            ("  df, p-value", f"{wald['df']}, {wald['pvalue']:.4g}"),
            ("likelihood", test["likelihood"]),
        ],
    )


def _run_poisson(args) -> int:

    release = load_release(args.release)
    _check_release(args, release)  # before reading --data
    data = read_csv(args.data, "--data")
    data = _align(data, release, args.label_columns)
    model, response = _poisson_model(args, release, data)
    res = model.fit(disp=0)
    test = None
    if args.test:
        test = _term_test(release, model, res, args.test, args.likelihood)
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
        test=None if test is None else ("term_test", test, _term_test_table(test)),
    )


def _report(args, release, model, res, head: dict, test=None) -> int:
    """Print the fit as strict JSON (``--json``) or as its summary (and the test's).

    ``test`` is ``(key, as JSON, summary)``.
    """
    if args.json:
        extra = {} if test is None else {test[0]: test[1]}
        print_json(
            {
                **head,
                **_coefficients(res, list(model.exog_names)),
                "llf": res.llf,
                "nobs": int(res.nobs),
                "converged": bool(res.mle_retvals.get("converged", True)),
                "sigma": model.sigma,
                "likelihood": model.likelihood_method,
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
        print(test[2])
    return 0


# --- loglinear ----------------------------------------------------------------


def _run_loglinear(args) -> int:

    release = load_release(args.release)
    _check_release(args, release)
    given = None
    if args.given:
        # a position is given as a number, a name as text
        given = [int(g) if g.isdigit() else g for g in args.given]
    model = _named(
        args.release,
        lambda: PrivatizedLogLinear(release, given=given, likelihood=args.likelihood),
    )
    res = model.fit(disp=0)
    test = model.test_independence(method=args.independence_method)
    head = {
        "model": "PrivatizedLogLinear",
        "table_shape": list(model.table_shape),
        "given": model.given,
        "conditioned_on_margins": model.conditioned_on_margins,
    }
    return _report(
        args, release, model, res, head, ("independence_test", test.to_dict(), test.summary())
    )
