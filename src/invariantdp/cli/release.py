"""``invariantdp release``: privatize a CSV table and write the Release as JSON.

The noise is sampled exactly from the operating system's CSPRNG by default
(``secure=True``); ``--simulate`` or ``--seed`` draw it from numpy's generator
instead, and the release is then marked as a simulation in its JSON
(``metadata["randomness"]``) and in what the command prints.  Mechanisms
without an exact sampler (floating-point noise, attackable as shown by
Mironov 2012) are simulation only and need ``--simulate``.

The table is a wide CSV (first column: row labels, one column per table
column) or, with ``--value-column`` and ``--label-columns``, a long CSV as
agencies publish (one row per cell, text labels allowed); either way the
labels are kept in the release.  Budgets stated in zCDP (the Census Bureau's)
are given with ``--rho`` to the Gaussian-type mechanisms.

Invariants are kept by the subspace mechanisms (``--invariants``), the
semi-DP ones and ``odds-ratio`` (the one-way margins: the release of x11 of a
2 x 2 table that ``odds-ratio-test --release`` tests), and, given
``--invariants``, by the congenial release of the additive mechanisms that
have one (``laplace``, ``gaussian``, ``discrete-laplace``,
``discrete-gaussian``): their noise conditioned on the invariants
(:func:`~invariantdp.mechanisms.conditional_release`, Gong & Meng 2020), a
simulation (its samplers are floating point).  Mechanism names are those of
the registry :data:`invariantdp.mechanisms.MECHANISMS`.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from .._label_text import two_by_two_text
from ..exceptions import InvariantDPError
from ..families import mu_of_rho, rho_of_mu
from ..invariants import Invariants, one_way_margins, totals
from ..mechanisms import MECHANISMS as REGISTRY
from ..mechanisms import conditional_release
from ..privacy import eps_delta_to_gdp
from ._common import (
    add_randomness_args,
    check_output,
    column_list,
    mark_randomness,
    read_csv,
    read_json,
    read_long_table,
    short,
    simulation_note,
    use_secure,
    write_atomic,
)

#: the kinds of mechanism the command runs (the registry invariantdp.mechanisms.MECHANISMS)
_KINDS = ("additive", "lp", "subspace", "semi_dp", "odds_ratio")
_RUNS = {m.cli_name: m for m in REGISTRY.values() if m.kind in _KINDS}
#: the mechanisms of this command by their command-line names (aliases in the registry)
_NAMES = sorted(_RUNS)
#: Mechanisms with an exact sampler: secure by default.
_EXACT = tuple(n for n in _NAMES if _RUNS[n].exact)
#: Floating-point mechanisms with no exact sampler: simulation only.
_SIMULATION_ONLY = tuple(n for n in _NAMES if not _RUNS[n].exact)
#: the norm of each mechanism's --sensitivity (tulap: each cell; lp: --p; semi-DP: fixed)
_L1 = tuple(n for n in _NAMES if _RUNS[n].norm == "l1")
_L2 = tuple(n for n in _NAMES if _RUNS[n].norm == "l2")
#: Gaussian-type mechanisms: a zCDP budget --rho sets their noise (the others refuse it).
_ZCDP = tuple(n for n in _NAMES if _RUNS[n].zcdp)
#: sensitivity fixed by the table's margins (Prop. 32; x11 given the margins of a 2 x 2 table)
_FIXED = tuple(n for n in _NAMES if _RUNS[n].norm == "fixed")
#: with --invariants: the congenial release (the noise conditioned on them, a simulation)
_CONGENIAL = tuple(n for n in _NAMES if _RUNS[n].congenial)
#: what keeps invariants, said when --invariants is given to a mechanism that cannot
_KEEPERS = (
    "invariants are kept by the subspace mechanisms (projected-*, extended-*, with "
    "--invariants), semi-dp-* and odds-ratio (the one-way margins), and by the congenial "
    f"release of {', '.join(_CONGENIAL)} (with --invariants)"
)


def _register(sub) -> None:
    p = sub.add_parser(
        "release",
        help="privatize a table with a mechanism and write the Release as JSON",
        description=(
            "Read a confidential table from CSV (first column: row labels), add the noise "
            "of MECHANISM, and write the Release (value, invariants, noise law, privacy "
            "guarantee) as JSON, atomically. Subspace mechanisms keep the --invariants "
            "exactly; semi-DP mechanisms and odds-ratio keep the one-way margins (odds-ratio "
            "releases x11 of a 2x2 table, which `invariantdp odds-ratio-test --release` "
            f"tests); {', '.join(_CONGENIAL)} given --invariants make the congenial release "
            "(their noise conditioned on the invariants, Gong & Meng 2020), a simulation. "
            "The noise is sampled exactly from the operating system's CSPRNG unless "
            f"--simulate or --seed is given. {', '.join(_SIMULATION_ONLY)} are simulation "
            "only (floating-point noise is attackable, Mironov 2012): they need --simulate "
            "or --seed."
        ),
    )
    p.add_argument(
        "mechanism",
        choices=_NAMES,
        metavar="MECHANISM",
        help=(
            f"with an exact (secure) sampler: {', '.join(_EXACT)}; simulation only: "
            f"{', '.join(_SIMULATION_ONLY)}"
        ),
    )
    p.add_argument(
        "table",
        help=(
            "CSV file of the confidential table: wide (first column: row labels) or, with "
            "--value-column and --label-columns, long (one row per cell)"
        ),
    )
    p.add_argument(
        "--value-column",
        default=None,
        metavar="NAME",
        help="long format: the column holding the counts (with --label-columns)",
    )
    p.add_argument(
        "--label-columns",
        type=column_list,
        default=None,
        metavar="A[,B...]",
        help=(
            "long format: the columns identifying a cell (text allowed), kept as the "
            "release's labels; one column gives a vector, two the table with rows A and "
            "columns B (every combination once), more a vector on their combinations"
        ),
    )
    p.add_argument(
        "--invariants",
        default=None,
        help=(
            "for subspace mechanisms, and for the congenial release of "
            f"{', '.join(_CONGENIAL)} (a simulation: with --simulate or --seed): 'margins' "
            "(one-way margins), 'total', 'row-totals', 'column-totals', or a JSON file "
            "holding Invariants.to_dict()"
        ),
    )
    p.add_argument("--epsilon", type=float, default=None, help="privacy loss epsilon, > 0")
    p.add_argument("--delta", type=float, default=None, help="privacy parameter delta, in [0, 1)")
    p.add_argument("--mu", type=float, default=None, help="Gaussian DP parameter mu, > 0")
    p.add_argument(
        "--rho",
        type=float,
        default=None,
        help=(
            f"zCDP budget rho, > 0, for the Gaussian-type mechanisms ({', '.join(_ZCDP)}): "
            "noise sigma = sensitivity / sqrt(2 rho), i.e. mu = sqrt(2 rho)"
        ),
    )
    p.add_argument(
        "--sensitivity",
        type=float,
        default=None,
        help=(
            "sensitivity of the query, default 1, in the norm of the mechanism: L1 for "
            f"{', '.join(_L1)}; L2 for {', '.join(_L2)}; the Lp norm of --p for lp; the change of "
            "each cell (Linf) for tulap, whose guarantee is composed over the cells that may "
            "change (--coordinates-changed); fixed by the table's margins for "
            f"{', '.join(_FIXED)}. The release records it in its guarantee's adjacency"
        ),
    )
    p.add_argument(
        "--coordinates-changed",
        type=int,
        default=None,
        metavar="M",
        help=(
            "tulap only: how many cells neighbouring tables may differ in (1 for a histogram "
            "under adding or removing one record, 2 under replacing one); the guarantee is "
            "composed over M cells (default: all cells)"
        ),
    )
    p.add_argument("--p", default=None, help="norm of the lp mechanism: 1, 2 or inf")
    add_randomness_args(p)
    p.add_argument("-o", "--output", required=True, help="path of the JSON release")
    p.add_argument("--force", action="store_true", help="replace --output if it exists")
    p.set_defaults(func=_run_release)


_NAMED_INVARIANTS = ("margins", "total", "row-totals", "column-totals")


def _invariants(spec, shape):

    if spec == "margins":
        return one_way_margins(shape)
    if spec == "total":
        return totals(np.zeros(shape, dtype=int))
    if spec == "row-totals":
        return totals(np.repeat(np.arange(shape[0]), shape[1]).reshape(shape))
    if spec == "column-totals":
        return totals(np.tile(np.arange(shape[1]), shape[0]).reshape(shape))
    doc = read_json(spec, "--invariants")
    if not isinstance(doc, dict):
        raise InvariantDPError(
            f"`--invariants` ({short(spec)}) must hold a JSON object (Invariants.to_dict()), "
            f"got a {type(doc).__name__}."
        )
    inv = Invariants.from_dict(doc)
    if inv.n_cells != int(np.prod(shape)):
        raise InvariantDPError(
            f"`--invariants` act on {inv.n_cells} cells but the table has {int(np.prod(shape))}."
        )
    return inv


def _rho_to_mu(args, given: dict, allowed: tuple) -> float | None:
    """Turn ``--rho`` into the mechanism's ``mu``; return rho when it was converted.

    A Gaussian mechanism of L2 sensitivity Delta with sigma = Delta / sqrt(2 rho)
    is rho-zCDP, and exactly mu-GDP with mu = Delta / sigma = sqrt(2 rho) (Bun &
    Steinke 2016, Prop. 1.6; Dong, Roth & Su 2022, Thm. 2.7), so the mechanisms
    that take mu get the same noise from mu = sqrt(2 rho).
    """
    name, rho = args.mechanism, given["rho"]
    if rho is None:
        return None
    if name not in _ZCDP:
        takes = ", ".join(k for k in allowed if k != "mu") or "mu"
        raise InvariantDPError(
            f"`--rho` ({rho!r}) does not apply to {name}: a zCDP budget sets the noise of the "
            f"Gaussian-type mechanisms only ({', '.join(_ZCDP)}); {name} takes {takes}."
        )
    if not (math.isfinite(rho) and rho > 0.0):
        raise InvariantDPError(f"`--rho` ({rho!r}) must be a finite number > 0.")
    others = [k for k in ("mu", "epsilon", "delta") if given[k] is not None]
    if others:
        raise InvariantDPError(
            f"`--rho` and `--{others[0]}` both set the noise of {name}: give one budget."
        )
    if "rho" in allowed:  # the mechanism takes zCDP itself
        return None
    given["mu"], given["rho"] = mu_of_rho(rho), None
    return rho


def _check_args(args) -> tuple:
    """Every rule that does not need the data, checked before reading anything."""
    name = args.mechanism
    mech = _RUNS[name]
    allowed = mech.privacy
    given = {k: getattr(args, k) for k in ("epsilon", "delta", "mu", "rho")}
    rho = _rho_to_mu(args, given, allowed)
    extra = sorted(k for k, v in given.items() if v is not None and k not in allowed)
    if extra:
        raise InvariantDPError(
            f"`--{extra[0]}` does not apply to {name} (it takes {', '.join(allowed)})."
        )
    if (args.value_column is None) != (args.label_columns is None):
        given_opt = "--value-column" if args.label_columns is None else "--label-columns"
        needed = "--label-columns" if args.label_columns is None else "--value-column"
        raise InvariantDPError(
            f"`{given_opt}` reads a long-format table and needs `{needed}` as well."
        )
    kwargs = {k: v for k, v in given.items() if v is not None}
    if args.sensitivity is not None:
        if name in _FIXED:
            raise InvariantDPError(
                f"`--sensitivity` does not apply to {name} (fixed by the table's margins, "
                "Prop. 32)."
            )
        kwargs["sensitivity"] = args.sensitivity
    if args.coordinates_changed is not None:
        if mech.norm != "linf":
            raise InvariantDPError(
                f"`--coordinates-changed` applies only to tulap (its sensitivity is per cell); "
                f"the sensitivity of {name} is a norm of the whole query."
            )
        kwargs["coordinates_changed"] = args.coordinates_changed
    if args.p is not None and name != "lp":
        raise InvariantDPError("`--p` applies only to the lp mechanism.")
    if name == "lp":
        if args.p is None:
            raise InvariantDPError("`--p` (1, 2 or inf) is required for the lp mechanism.")
        try:
            p = float(args.p)
        except ValueError:
            p = None
        if p not in (1.0, 2.0, float("inf")):
            raise InvariantDPError(f"`--p` ({short(args.p)}) must be 1, 2 or inf.")
        kwargs["p"] = p
    congenial = False
    if mech.kind == "subspace":
        if args.invariants is None:
            raise InvariantDPError("`--invariants` is required for subspace mechanisms.")
    elif args.invariants is not None:
        if name not in _CONGENIAL:
            raise InvariantDPError(f"`--invariants` does not apply to {name}: {_KEEPERS}.")
        congenial = True
    secure = use_secure(args)
    if secure and congenial:
        raise InvariantDPError(
            f"`--invariants` with {name} makes its congenial release (the noise conditioned "
            "on the invariants, Gong & Meng 2020), whose samplers are floating point: pass "
            "--simulate (or --seed N) for a simulation, not for publication; a secure "
            f"release of {name} is made without --invariants."
        )
    if secure and name in _SIMULATION_ONLY:
        raise InvariantDPError(
            f"{name} has no exact sampler (floating-point noise is attackable, Mironov 2012), "
            "so it cannot make a release for publication: pass --simulate (or --seed N) for a "
            f"simulation, or use a mechanism with an exact sampler ({', '.join(_EXACT)})."
        )
    if congenial:
        kwargs = _congenial_privacy(mech, kwargs)
    return mech, kwargs, secure, rho, congenial


def _congenial_privacy(mech, kwargs: dict) -> dict:
    """The privacy parameter by which conditional_release calibrates ``mech`` (the registry's).

    The same noise as the mechanism's own release: ``rho = mu^2 / 2`` for the
    discrete Gaussian, ``mu`` of (epsilon, delta) by Balle & Wang (2018) for the
    Gaussian (:func:`~invariantdp.privacy.eps_delta_to_gdp`).
    """
    out = {k: v for k, v in kwargs.items() if k not in ("epsilon", "delta", "mu", "rho")}
    param = mech.congenial
    if param in kwargs:
        out[param] = kwargs[param]
    elif param == "rho" and "mu" in kwargs:
        out["rho"] = rho_of_mu(kwargs["mu"])
    elif param == "mu" and "epsilon" in kwargs and "delta" in kwargs:
        out["mu"] = float(eps_delta_to_gdp(kwargs["epsilon"], kwargs["delta"]))
    else:
        raise InvariantDPError(
            f"the congenial release of {mech.cli_name} is calibrated by `--{param}`; give it."
        )
    return out


def _read_table(args):
    """The table as pandas (wide or long format), its labels kept for the release."""

    if args.value_column is not None:
        return read_long_table(args.table, "table", args.value_column, args.label_columns)
    table = read_csv(args.table, "table", index_col=0)
    numeric = all(
        pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t) for t in table.dtypes
    )
    if not numeric or table.shape[1] == 0:
        dtype = table.to_numpy().dtype
        raise InvariantDPError(
            f"`table` ({short(args.table)}) must hold numbers, got dtype {dtype}; for a "
            "long-format table give --value-column and --label-columns."
        )
    return table


def _run_release(args) -> int:
    mech, kwargs, secure, rho, congenial = _check_args(args)
    inputs = [("table", args.table)]
    if args.invariants not in _NAMED_INVARIANTS:
        inputs.append(("--invariants", args.invariants))
    check_output(args.output, inputs=inputs, force=args.force)
    table = _read_table(args)
    func = mech.function
    kwargs["rng"] = args.seed
    kwargs["secure"] = secure
    if congenial:
        invariants = _invariants(args.invariants, table.shape)
        kwargs["secure"] = False  # a simulation, as --simulate or --seed asked (checked above)
        release = conditional_release(table, mech.name, invariants, progress=False, **kwargs)
        sampler = release.diagnostics
    elif mech.kind == "subspace":
        release = func(table, _invariants(args.invariants, table.shape), **kwargs)
    elif mech.kind == "lp":
        release = func(table, kwargs.pop("p"), **kwargs)
    else:
        release = func(table, **kwargs)
    release = mark_randomness(release, secure)
    if rho is not None:
        # the guarantee is stated in mu-GDP; the budget as the user gave it is kept
        zcdp = {"rho": rho, "mu": kwargs["mu"], "conversion": "mu = sqrt(2 rho)"}
        release = dataclasses.replace(release, metadata={**release.metadata, "zcdp": zcdp})
    path = write_atomic(args.output, release.to_json(indent=1), inputs=inputs, force=args.force)
    print(f"wrote {release.mechanism} release to {path} ({release.guarantee.describe()})")
    if mech.kind == "odds_ratio":
        text = two_by_two_text(release.data_labels)
        print(
            f"released x11 ({text.x11}) with the one-way margins; its odds ratio is the "
            f"{text.odds_ratio}: test it with `invariantdp odds-ratio-test --release {path}`"
        )
    if congenial:
        print(
            f"congenial release: the {mech.name} noise conditioned on the invariants "
            f"({sampler.sampler} sampler, max R-hat {sampler.rhat_max:.3f}, "
            f"min ESS {sampler.ess_min:.0f})"
        )
    if rho is not None:
        print(f"zCDP budget rho = {rho:g}: noise set by mu = sqrt(2 rho) = {kwargs['mu']:.10g}")
    if release.simulation:
        print(simulation_note(args.seed))
    else:
        print("randomness: secure (exact sampling from the operating system's CSPRNG)")
    return 0


__all__: list[str] = []  # a sub-command: no Python API (see `invariantdp --help`)
