r"""Estimates with intervals for the cells of a release, and for sums of them.

:func:`estimate` answers the analyst's first question of a noisy table with
invariants: what is each count (or each county's total), give or take how
much?  The estimate is the generalised least squares (GLS) estimate under
the release's invariants, computed by the census implementation
(:func:`invariantdp.census.gls` on a one-unit hierarchy), so it satisfies the
invariants exactly and is the best linear unbiased estimate of every cell
and every sum.  Its standard error uses the noise law's actual variance (the
discrete Gaussian's is slightly below ``sigma**2`` at small ``sigma``).

Intervals
---------
* Gaussian noise (``gaussian``, ``projected_gaussian``,
  ``extended_gaussian``, ``correlated_gaussian`` and the congenial Gaussian
  release without inequalities): the GLS error is exactly Gaussian, so
  ``estimate +- z_{1 - alpha/2} std_error`` has exact coverage.
* Discrete Gaussian noise on integer counts: the error ``a' e`` of a GLS
  estimate is a combination of integer noises, and the plain Gaussian
  interval under-covers (0.883 for one count at ``sigma = 1``).  Below
  ``sigma = 10`` the interval is the smallest symmetric central set of the
  exact law of that error (coverage at least nominal, at one of a few
  discrete levels); from ``sigma = 10`` on, the Gaussian interval widened by
  half a lattice step.  The switch, its accuracy and the guarantee are in
  :mod:`invariantdp._estimates._lattice_intervals`.  ``grid_gaussian`` noise (the secure
  Gaussian mechanism) is the same law on a grid, with the data's rounding to
  the grid added to the half-width.

The integers inside ``[ci_lower, ci_upper]`` are the confidence set of a
count.  As ``sigma -> 0`` the law of the error tends to a point mass, and so
does the computation: the GLS is solved at unit variance (its estimate does
not depend on a common variance) and the variances scaled after, so a
discrete Gaussian variance that underflows to 0 (``sigma < 0.025``) gives the
counts themselves with intervals ``y +- 0``.

References
----------
Gong & Meng, Section 3 (inference conditions on the invariants); Gao, Gong
& Yu, Theorem 22 (projection is conditioning for spherical Gaussian noise);
Cumings-Menon & Zhuravlev (2024), arXiv:2404.13164 (the GLS of the census);
Canonne, Kamath & Steinke (2020) (the discrete Gaussian).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import stats

from .._gls import (
    marginal_constraints,
    query_estimates,
    rows_estimates,
    solve_release,
)
from .._results import Summary, format_table
from .._validation import InvariantDPError, check_confidence_level, format_value
from ..families import CellNoise, gaussian_type_families
from ..release import Release
from ._cell_sums import (
    cell_selection_rows,
    group_rows,
    is_level_names,
    level_positions,
    selection_rows,
    weight_rows,
)
from ._lattice_intervals import SIGMA_GAUSSIAN, half_widths

__all__ = ["CellEstimates", "estimate"]

#: rows of weights projected at once (bounds the memory of general invariants)
_CHUNK = 2**22


class CellEstimates(pd.DataFrame):
    """What :func:`estimate` returns: a DataFrame with a :meth:`summary`.

    Columns ``estimate``, ``std_error``, ``moe``, ``ci_lower``, ``ci_upper``
    and ``note``, one row per cell (or per sum asked for), the columns and
    order of :meth:`GLSEstimate.estimate
    <invariantdp.census.GLSEstimate.estimate>`.  ``attrs`` holds ``confidence_level``,
    ``noise``, ``invariants`` (the number of invariant rows), ``interval``
    (the method of each row, see :func:`estimate`) and ``coverage`` (per row:
    the interval's exact coverage, a lower bound of it, or the nominal level
    where that is exact or the documented switch applies).  Operations on it
    return plain DataFrames.

    References
    ----------
    pandas, "Subclassing pandas data structures" (``_constructor``).

    Examples
    --------
    >>> from invariantdp import Release, estimate
    >>> r = Release.from_published([12, 7], noise="discrete_gaussian", sigma=1.0)
    >>> est = estimate(r)
    >>> est.summary().as_dict()["intervals"]
    'exact discrete law (2)'
    >>> type(est.head()).__name__  # operations give plain DataFrames
    'DataFrame'
    """

    @property
    def _constructor(self):
        return pd.DataFrame

    def summary(self) -> Summary:
        """The estimator, the noise, the interval methods and the smallest coverage."""
        a = self.attrs
        methods = pd.Series(a.get("interval", ())).value_counts()
        rows = [
            ("rows", len(self)),
            ("estimator", "GLS under the invariants (census implementation)"),
            ("noise", a.get("noise", "")),
            ("invariant rows imposed", a.get("invariants", 0)),
            ("confidence level", a.get("confidence_level", float("nan"))),
            ("intervals", ", ".join(f"{m} ({n})" for m, n in methods.items())),
            ("smallest coverage", float(np.min(a["coverage"])) if len(self) else float("nan")),
            ("negative estimates", a.get("negative", negative_count(self["estimate"]))),
        ]
        notes = [
            "Coverage: exact for Gaussian noise and the exact discrete law; a lower bound for",
            f"rounded weights; nominal (tested conservative) for sigma >= {SIGMA_GAUSSIAN:g}.",
            "Gong & Meng, Sec. 3; Cumings-Menon & Zhuravlev (2024), arXiv:2404.13164.",
        ]
        if a.get("clipped"):
            notes.append("Estimates and intervals clipped at 0 for display: biased upwards.")
        return format_table("Estimates with intervals under the invariants", rows, notes)


#: the value columns of every estimate frame, in order (:func:`estimate_columns`)
ESTIMATE_COLUMNS = ("estimate", "std_error", "moe", "ci_lower", "ci_upper", "note")


def estimate_columns(est, se, half, note=None, *, clip: bool = False) -> dict:
    """The value columns of an estimate frame, shared by every estimate function.

    ``moe`` is the half-width of the interval; ``note`` says why a row is
    not estimable (``None`` where it is).  ``clip=True`` floors the
    estimate and both ends of the interval at 0 for display: clipped
    estimates are biased upwards (the unbiased estimate is the GLS one).
    """
    est, se, half = (np.asarray(a, dtype=float) for a in (est, se, half))
    lo, hi = est - half, est + half
    if clip:
        est, lo, hi = np.maximum(est, 0.0), np.maximum(lo, 0.0), np.maximum(hi, 0.0)
    if note is None:
        note = np.full(est.size, None, dtype=object)
    cols = (est, se, half, lo, hi, np.asarray(note, dtype=object))
    return dict(zip(ESTIMATE_COLUMNS, cols, strict=True))


def check_clip(clip) -> bool:
    """``clip`` as a bool, refusing anything else (no truthiness coercion)."""
    if not isinstance(clip, bool | np.bool_):
        raise TypeError(
            f"`clip` must be True or False, got {type(clip).__name__} ({format_value(clip)})."
        )
    return bool(clip)


def negative_count(estimates) -> int:
    """How many finite estimates are below 0 (unbiased estimates of counts can be)."""
    a = np.asarray(estimates, dtype=float)
    return int(np.count_nonzero(a < 0.0))


# -- the release's cells and noise -----------------------------------------------------


def _cell_index(release: Release) -> tuple[pd.Index, tuple]:
    """``(index, product shape)``: the cells' labels and the schema the GLS works on."""
    value = release.value
    k = max(value.size, 1)
    labels = release.labels
    if value.ndim == 0 or labels is None:
        return pd.RangeIndex(k, name="cell"), value.shape if value.ndim > 1 else (k,)
    axes = [ax.to_index() for ax in labels]
    if value.ndim > 1:
        return pd.MultiIndex.from_product(axes, names=[ax.name for ax in axes]), value.shape
    index = axes[0]
    if isinstance(index, pd.MultiIndex):
        levels = [index.unique(level=i) for i in range(index.nlevels)]
        full = pd.MultiIndex.from_product(levels, names=index.names)
        if len(full) == k and index.equals(full):
            return index, tuple(len(lv) for lv in levels)
    return index, (k,)


def _check_release(release) -> None:
    """Refuse, before any work, a release whose noise or form estimate cannot read."""
    if not isinstance(release, Release):
        raise TypeError(f"`release` must be a Release, got {type(release).__name__}.")
    family = release.noise.family
    if not release.noise.spec.gaussian_type:
        raise InvariantDPError(
            f"`release` has {family!r} noise; estimate supports Gaussian-type noise: "
            f"{', '.join(gaussian_type_families())}."
        )
    if release.query is not None:
        raise InvariantDPError(
            "`release` measures a linear query of the data (its `query` is set); estimate "
            "needs a release of the cells themselves."
        )
    if release.metadata.get("congenial") is True:
        if "inequalities" in release.metadata:
            raise InvariantDPError(
                "`release` is conditioned on inequalities: its noise is a truncated law, not "
                "Gaussian, and a GLS estimate from it is biased."
            )
        cells = release.noise.spec.cell_noise(release.noise.params)
        if not cells.continuous or cells.covariance is not None:
            raise InvariantDPError(
                f"`release` is a congenial {family} release: its noise is the {family} law "
                "conditioned on the invariants, whose intervals estimate does not compute; "
                "it supports the congenial Gaussian release."
            )
    if release.invariants is not None and release.invariants.values is None:
        raise InvariantDPError("`release.invariants` carry no values to condition on.")


def _noise(release: Release) -> CellNoise:
    """The noise of each cell, as its family gives it."""
    return release.noise.spec.cell_noise(release.noise.params)


def _check_consistent(release: Release, fit: _Fit, cells: CellNoise) -> None:
    r"""Warn when the cells are farther from the invariants than the noise can take them.

    The GLS residual ``y - x_hat`` (equal variances; whitened for a covariance)
    is the projection of the noise onto the ``d``-dimensional row space of the
    invariants.  Gaussian and discrete Gaussian noise are ``s``-sub-Gaussian
    (``s`` the scale, or the discrete Gaussian's ``sigma``: Canonne, Kamath &
    Steinke 2020, Corollary 9), so by Hsu, Kakade & Zhang (2012, Theorem 1)
    :math:`P(\|y - \hat x\|^2 > s^2 (d + 2\sqrt{d t} + 2t)) \le e^{-t}`;
    with ``t = ln(1e12)`` and ``d`` the number of invariant rows (at least
    the rank), a larger residual has probability below 1e-12.  Grid noise
    adds the data's rounding to the grid, at most ``grid / 2`` a cell.
    """
    inv = release.invariants
    d = 0 if inv is None else inv.n_invariants
    extra = 0.0
    if cells.covariance is not None:
        s, d = 1.0, d + fit.pinned
    else:
        s = math.sqrt(cells.variance)
        if cells.lattice_sigma is not None:  # the lattice law's sigma bounds its tails
            s = max(s, cells.step * cells.lattice_sigma)
        if cells.rounded:
            extra = cells.step / 2.0 * math.sqrt(fit.k)
    if d == 0:
        return
    t = math.log(1e12)
    bound = s * math.sqrt(d + 2.0 * math.sqrt(d * t) + 2.0 * t) + extra
    # the solve's rounding: the residual of consistent data is not exactly 0
    bound += 1e-9 * (1.0 + float(np.abs(fit.values).sum()))
    resid = fit.residual_norm()
    if resid > bound:
        warnings.warn(
            f"the data contradict the release's noise and invariants: the cells are "
            f"{resid:.6g} (Euclidean norm) from every table that satisfies the invariants, "
            f"and {_noise_text(release, cells)} moves them that far with probability "
            f"below 1e-12 (beyond {bound:.3g}); check the values, the noise parameters and "
            "the invariants: the estimates and intervals take the release as stated.",
            UserWarning,
            stacklevel=3,
        )


def _noise_text(release: Release, cells: CellNoise) -> str:
    p = release.noise.params
    shown = {k: v for k, v in p.items() if k not in ("invariants", "cov")}
    inner = ", ".join(f"{k}={format_value(v)}" for k, v in shown.items())
    family = release.noise.family
    if not inner:
        return family
    return f"{family} ({inner}; variance {cells.variance:.6g})"


# -- the GLS -------------------------------------------------------------------------------


class _Fit:
    """The solved GLS of a release and what reading rows from it needs."""

    def __init__(self, release: Release, shape: tuple, cells: CellNoise):
        self.release = release
        inv = release.invariants
        values = np.asarray(release.value, dtype=float).reshape(-1)
        self.k = values.size
        self.values = values
        self.transform = None
        self.pinned = 0
        # one variance for every cell: the GLS estimate does not depend on it, so the
        # solve runs at variance 1 and the variances are scaled after (a variance that
        # underflows at a tiny sigma never enters the solve)
        self.scale = 1.0 if cells.covariance is not None else float(cells.variance)
        if cells.covariance is not None:
            self._correlated(values, inv, cells.covariance)
            return
        margins, mat, rhs = (), None, None
        if inv is not None:
            margins, mat, rhs = marginal_constraints(shape, inv.matrix, inv.values)
        self.shape = tuple(shape)
        self.margins_only = mat is None or mat.shape[0] == 0
        self.sol = solve_release(self.shape, values, 1.0, margins, mat, rhs)

    def _correlated(self, values, inv, cov):
        """Whitened coordinates ``x' = T x``: unit noise, directions without noise pinned."""
        lam, vec = np.linalg.eigh(0.5 * (cov + cov.T))
        pos = lam > 1e-10 * lam.max()
        root = np.sqrt(lam[pos])
        t = np.vstack([(vec[:, pos] / root).T, vec[:, ~pos].T])
        self.transform = np.hstack([vec[:, pos] * root, vec[:, ~pos]])  # T^{-1}
        y = t @ values
        self.values = y
        n_pos = int(pos.sum())
        mats = [np.hstack([np.zeros((self.k - n_pos, n_pos)), np.eye(self.k - n_pos)])]
        rhs = [y[n_pos:]]
        if inv is not None:
            mats.insert(0, inv.dense_matrix() @ self.transform)
            rhs.insert(0, np.asarray(inv.values, dtype=float))
        self.shape = (self.k,)
        self.margins_only = False
        self.pinned = self.k - n_pos
        self.sol = solve_release(self.shape, y, 1.0, (), np.vstack(mats), np.concatenate(rhs))

    def rows(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Estimates and variances of ``rows @ cells``."""
        if self.transform is not None:
            rows = rows @ self.transform
        est, cov = rows_estimates(self.sol, rows)
        return est, self.scale * np.diag(cov)

    def query(self, attrs) -> tuple[np.ndarray, np.ndarray]:
        """Estimates and variances of every cell of a marginal query (the cells: all attrs)."""
        if self.transform is not None:  # whitened coordinates: the cells only, as rows
            return self.rows(np.eye(self.k))
        est, var = query_estimates(self.sol, attrs)
        return est, self.scale * var

    def residual_norm(self) -> float:
        """``||y - x_hat||`` in the solve's coordinates (whitened for a covariance)."""
        return float(np.linalg.norm(self.values - self.sol.x[0][0].reshape(-1)))


def _projected(release: Release, rows: np.ndarray) -> np.ndarray:
    """``Pi_N w`` of each row: the weights of the GLS error under equal noise variances."""
    inv = release.invariants
    return rows.copy() if inv is None else inv.project(rows).reshape(rows.shape)


def _row_source(fit: _Fit, request):
    """``(n, take)``: the number of rows asked for and ``take(idx)``, their weights over cells."""
    if request[0] == "rows":
        rows = request[1]
        return rows.shape[0], lambda idx: rows[idx]
    _, attrs, perm = request
    alg = fit.sol.alg
    n = perm.size

    def take(idx):
        onehot = np.zeros((len(idx), n))
        onehot[np.arange(len(idx)), perm[idx]] = 1.0
        return alg.spread(onehot, attrs).reshape(len(idx), alg.k)

    return n, take


def _lattice_widths(release, fit, request, level, cells: CellNoise, classes):
    """Half-widths of discrete-Gaussian rows; one law per class of equivalent rows."""
    sigma, step = cells.lattice_sigma, cells.step
    n, take = _row_source(fit, request)
    cache: dict = {}
    if classes is not None:
        reps, cls = classes
        weights = _projected(release, take(reps))
        h, cov, how = half_widths(weights, sigma, level, cache)
        l1 = np.abs(weights).sum(axis=1)
        h, cov, how, l1 = h[cls], cov[cls], how[cls], l1[cls]
    else:
        per = max(1, _CHUNK // max(fit.k, 1))
        parts = []
        for start in range(0, n, per):
            weights = _projected(release, take(np.arange(start, min(n, start + per))))
            parts.append((*half_widths(weights, sigma, level, cache), np.abs(weights).sum(axis=1)))
        h, cov, how, l1 = (np.concatenate(x) for x in zip(*parts, strict=True))
    h = h * step
    if cells.rounded:
        # the data were rounded to the grid: |a' (round(x) - x)| <= step / 2 |a|_1
        h = h + step / 2.0 * l1
    return h, cov, how


def _cell_classes(release, fit) -> tuple | None:
    """``(representatives, class of each cell)`` of cells whose errors share one law."""
    inv = release.invariants
    if inv is None or fit.margins_only:
        # whole margins: permuting the levels of any attribute maps them onto themselves
        return np.array([0]), np.zeros(fit.k, dtype=np.int64)
    if inv.kind in ("totals", "nested_totals"):
        # the null space is centring within the finest groups: a cell's law is its group's size
        codes, g = inv.group_codes()
        sizes = np.bincount(codes, minlength=g)[codes]
        _, first, classes = np.unique(sizes, return_index=True, return_inverse=True)
        return first, classes.reshape(-1)
    return None


def _level_query(fit: _Fit, index: pd.Index, levels: list, positions: list):
    """Group sums of a product schema as one marginal query, rows in the order of ``levels``."""
    attrs = tuple(sorted(positions))
    est, var = fit.query(attrs)
    sizes = [fit.shape[a] for a in attrs]
    order = [attrs.index(p) for p in positions]
    # the query's cells are in the C order of ``attrs``; the rows follow ``levels``
    perm = np.arange(int(np.prod(sizes))).reshape(sizes).transpose(order).reshape(-1)
    uniq = [index.unique(level=p) for p in positions]
    if len(levels) > 1:
        out = pd.MultiIndex.from_product(uniq, names=levels)
    else:
        out = uniq[0].rename(levels[0])
    return out, est[perm], var[perm], ("query", attrs, perm)


def _plan(index: pd.Index, sums):
    """What ``sums`` asks for, checked against the cells before any work is done:
    ``None`` (the cells), ``(levels, positions)`` or ``(index of the rows, rows)``."""
    if sums is None:
        return None
    if is_level_names(sums):
        levels = [sums] if isinstance(sums, str) else list(sums)
        return levels, level_positions(index, levels)
    if isinstance(sums, Mapping):
        return selection_rows(index, sums)
    if isinstance(sums, pd.DataFrame | np.ndarray | list):
        return weight_rows(index, sums)
    raise TypeError(
        "`sums` must be a level name or list of them, a mapping of names to selections, "
        f"or weights (a DataFrame or 2-D array); got {type(sums).__name__}."
    )


def _requested(release, fit: _Fit, index: pd.Index, plan):
    """``(index, estimates, variances, request, classes)`` of the rows of ``plan``."""
    if plan is None:
        attrs = tuple(range(len(fit.shape)))
        est, var = fit.query(attrs)
        perm = np.arange(fit.k)
        return index, est, var, ("query", attrs, perm), _cell_classes(release, fit)
    if isinstance(plan[0], list):
        levels, positions = plan
        if len(fit.shape) == index.nlevels > 1 and fit.transform is None:
            out, est, var, request = _level_query(fit, index, levels, positions)
            one = release.invariants is None or fit.margins_only
            classes = (np.array([0]), np.zeros(len(out), dtype=np.int64)) if one else None
            return out, est, var, request, classes
        plan = group_rows(index, levels)
    out, rows = plan
    est, var = fit.rows(rows)
    return out, est, var, ("rows", rows), None


# -- the public function -----------------------------------------------------------------


def estimate(release, confidence_level=0.95, *, sums=None, cells=None, clip=False) -> CellEstimates:
    r"""Estimates, standard errors and confidence intervals of cells and sums of cells.

    The GLS estimate under the release's invariants (the best linear
    unbiased estimate; it satisfies the invariants exactly), computed by the
    census implementation, with intervals of at least the nominal coverage
    (see the module :mod:`invariantdp._estimates._cell_estimates` and, for the discrete
    Gaussian, :mod:`invariantdp._estimates._lattice_intervals`).

    Parameters
    ----------
    release : Release
        With Gaussian-type noise: ``gaussian``, ``discrete_gaussian``,
        ``grid_gaussian`` (the secure Gaussian mechanism),
        ``projected_gaussian``, ``extended_gaussian`` or
        ``correlated_gaussian``; with or without invariants.  The release's
        value must be the cells themselves (no ``query``).
    confidence_level : float, optional
        In (0, 1); default 0.95.  It sets the intervals and ``moe``; the
        Census Bureau's users read margins of error at 90% (the American
        Community Survey's convention): pass ``confidence_level=0.9``.
    sums : optional
        What to estimate instead of the cells:

        * a level name, or a list of them (``"county"``,
          ``["county", "sex"]``): the sum over each group of cells sharing
          those labels, like ``groupby(level=...).sum()``;
        * a mapping ``{name: selection}``: the sum of the cells each
          selection picks, a selection being anything ``Series.loc`` accepts
          on the cells' index (a label, a list of labels, a partial key of a
          MultiIndex, a boolean mask, ``pandas.IndexSlice``...);
        * a DataFrame of weights, one row per linear combination and one
          column per cell (labelled like the cells; cells not among the
          columns weigh 0), or a 2-D array of shape ``(rows, cells)``.
    cells : mapping, optional
        Unions of cells named by their labels, instead of ``sums``:
        ``{"adults": {"age": ["18-64", "65+"]}}`` is the sum of the cells
        whose ``age`` is one of those (over every other level); several
        levels in one entry intersect.  The standard error comes from the
        full covariance of the cells' estimates (not from summing their
        variances).  Rows are indexed by the names, on an index ``cells``.
    clip : bool, optional
        Floor the estimates and both ends of their intervals at 0, for
        display only: a clipped estimate is biased upwards (the GLS estimate
        is unbiased, and negative ones are its price).  Default False;
        ``attrs["negative"]`` counts the negative estimates either way.

    Returns
    -------
    CellEstimates
        A DataFrame indexed by the release's labels (a ``RangeIndex`` named
        ``cell`` when it has none; the product of the axes for a table), or
        by the names of the sums, with columns ``estimate``, ``std_error``,
        ``moe`` (the half-width of the interval at ``confidence_level``),
        ``ci_lower``, ``ci_upper`` and ``note`` (missing: every row is
        estimable); ``attrs`` and :meth:`CellEstimates.summary` say how the
        intervals were made.

    Raises
    ------
    InvariantDPError
        For noise that is not Gaussian-type (naming the supported families), a
        release of a linear query, a congenial release of discrete or
        truncated noise, or sums that do not select cells.

    Warns
    -----
    UserWarning
        When the data contradict the release's noise and invariants: the
        cells are farther from every table that satisfies the invariants than
        the stated noise moves them with probability 1e-12 (a sub-Gaussian
        tail bound); the estimates then take the release as stated.

    Notes
    -----
    For discrete Gaussian noise (``sigma < 10``) the interval of a count with
    no invariant is ``y +- m`` with ``m`` the smallest integer such that
    ``P(|e| <= m) >= confidence_level``; at 95%: ``m = 2`` at ``sigma = 1``
    (coverage 0.991), ``m = 4`` at ``sigma = 2`` (0.977), ``m = 10`` at
    ``sigma = 5`` (0.965).  Under invariants, the smallest symmetric central
    set of the exact law of the estimate's error: for a cell of a table of
    180 cells with an exact total, ``+- 2.011`` at ``sigma = 1`` (coverage
    0.9511), ``+- 3.978`` at 2 (0.9504), ``+- 9.794`` at 5 (0.9501); for the
    sum of 6 of its cells (a county), ``+- 4.733``, ``+- 9.433``, ``+- 23.6``.
    There ``+- 1.96`` standard errors covers a cell 0.917 of the time at
    ``sigma = 1`` (the exact law).

    References
    ----------
    Gong & Meng, Section 3 (conditioning on the invariants); Cumings-Menon &
    Zhuravlev (2024), arXiv:2404.13164 (the census GLS); Canonne, Kamath &
    Steinke (2020) (the discrete Gaussian).

    Examples
    --------
    Counts of three counties with discrete Gaussian noise (``rho = 0.5``,
    so ``sigma = 1``) and their exact total:

    >>> import pandas as pd
    >>> from invariantdp import Release, estimate
    >>> from invariantdp.invariants import grand_total
    >>> counts = pd.Series([1203, 388, 97], index=pd.Index(["Ada", "Bay", "Cole"], name="county"))
    >>> r = Release.from_published(counts, noise="discrete_gaussian", rho=0.5, sensitivity=1.0,
    ...                            invariants=grand_total(counts, 1690))
    >>> est = estimate(r)
    >>> est.round(3)  # doctest: +NORMALIZE_WHITESPACE
            estimate  std_error    moe  ci_lower  ci_upper  note
    county
    Ada     1203.667      0.816  1.667    1202.0  1205.333  None
    Bay      388.667      0.816  1.667     387.0   390.333  None
    Cole      97.667      0.816  1.667      96.0    99.333  None
    >>> round(float(est["estimate"].sum()), 9)  # the invariant total, exactly
    1690.0
    >>> est.attrs["interval"][0], round(float(est.attrs["coverage"][0]), 4)
    ('exact discrete law', 0.9762)
    >>> estimate(r, sums={"Ada and Bay": ["Ada", "Bay"]}).round(3)  # doctest: +NORMALIZE_WHITESPACE
                 estimate  std_error    moe  ci_lower  ci_upper  note
    sum
    Ada and Bay  1592.333      0.816  1.667  1590.667    1594.0  None
    >>> west = estimate(r, cells={"west": {"county": ["Ada", "Bay"]}})
    >>> west[["estimate", "std_error"]].round(3)  # doctest: +NORMALIZE_WHITESPACE
           estimate  std_error
    cells
    west   1592.333      0.816
    """
    _check_release(release)
    level = check_confidence_level(confidence_level)
    clip = check_clip(clip)
    index, shape = _cell_index(release)
    if cells is not None and sums is not None:
        raise InvariantDPError("`cells` and `sums` both say what to estimate: pass one.")
    plan = _plan(index, sums) if cells is None else cell_selection_rows(index, cells)
    cells = _noise(release)
    fit = _Fit(release, shape, cells)
    _check_consistent(release, fit, cells)
    out_index, est, var, request, classes = _requested(release, fit, index, plan)
    se = np.sqrt(np.maximum(var, 0.0))
    if not cells.exact_intervals:
        h = stats.norm.ppf(0.5 + level / 2.0) * se
        coverage = np.full(se.size, level)
        how = np.full(se.size, "gaussian", dtype=object)
    else:
        h, coverage, how = _lattice_widths(release, fit, request, level, cells, classes)
    # rounding of the GLS (relative 1e-13) must not drop an integer sitting on an end
    h = h + 1e-10 * (1.0 + np.abs(est) + h)
    frame = CellEstimates(estimate_columns(est, se, h, clip=clip), index=out_index)
    frame.attrs.update(
        {
            "confidence_level": level,
            "noise": _noise_text(release, cells),
            "invariants": 0 if release.invariants is None else release.invariants.n_invariants,
            "interval": how.tolist(),
            "coverage": np.asarray(coverage, dtype=float),
            "negative": negative_count(est),
            "clipped": clip,
        }
    )
    return frame
