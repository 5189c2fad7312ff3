r"""Data swapping as differential privacy: the Permutation Algorithm (Algorithm 5.1).

The variables of a microdata set are split into *swapping* variables
:math:`V_{Swap}` and *holding* variables :math:`V_{Hold}` (all the others);
the *matching* variables :math:`V_{Match} \subset V_{Hold}` (the swap key)
define strata.  Within each stratum every record is selected with
probability ``p`` (the swap rate), the selection being drawn again whenever
exactly one record is chosen, and the swapping variables of the selected
records are permuted by a uniformly random derangement.  The result keeps
the swapping invariants :math:`c_{Swap}` -- the margins :math:`n_{jl}`
(matching x other holding variables) and :math:`n_{jk}` (matching x swapping
variables) -- exactly (Proposition 5.3, Definition 5.4), and is
:math:`(c_{Swap}, d^u_{HamS}, \epsilon)`-DP with the :math:`\epsilon` of
Theorem 5.6 (:func:`invariantdp.privacy.swapping_epsilon`).

Implementation
--------------
*Selection* draws one uniform per record and re-draws, all at once, the
records of every stratum where exactly one record was chosen, until no such
stratum is left (the conditional law of Algorithm 5.1, line 11).
*Derangements* are exact: for all strata at once a uniform permutation is
drawn within each stratum (a uniform permutation of all selected records,
stably sorted by stratum, orders each stratum uniformly), and the strata
whose permutation has a fixed point draw again.  Conditioning a uniform
permutation on having no fixed point gives the uniform law on derangements;
a stratum is accepted with probability :math:`d(m)/m! \to 1/e`, so the
expected work is about :math:`e` times the number of selected records.

Seed policies
-------------
``"global"`` (default for pandas): one random stream, vectorised across all
strata.  ``"stratum"`` (used for Dask, available for pandas): each stratum
draws from its own generator, seeded by ``SeedSequence(root, spawn_key=h)``
where ``root`` is 128 bits drawn from ``rng`` and ``h`` a BLAKE2 hash of the
stratum's matching values; the records of a stratum are taken in row order.
Its result depends only on ``rng`` and the data, not on how the data are
partitioned, so a Dask computation gives, row for row, the same swapped
data as the pandas ``"stratum"`` path with the same ``rng``.  The two
policies have the same distribution but different draws.  The ``"stratum"``
policy loops over strata in Python (one generator each), so it is slower
when there are very many small strata.

Both seeded policies draw from a numpy ``Generator``, which is predictable
from its output and reproducible from a seed: their releases are
**simulations, not for publication** (``metadata["randomness"]`` is
``"simulation"``); a seed or a ``seed_policy`` asks for one.  Without them
(``secure=None``, the default, or ``secure=True``), a pandas frame is
swapped with selections and derangements drawn by exact integer sampling
from :mod:`secrets`, and the release is marked ``"secure"``.

The random permutation is in :mod:`._permutation`, the released table and
its invariants in :mod:`._swap_table`, the Dask path in :mod:`._swap_dask`.
:func:`swapping_mape` measures the error that swapping induces (Figure
5.1); plot it with :func:`invariantdp.plotting.plot_swapping_mape`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

from .._frames import as_columns, check_columns, check_frame
from .._rng import as_generator
from .._validation import InvariantDPError, check_in_open_unit, check_positive_int
from ..privacy import swapping_epsilon
from ..release import NoiseLaw, Release
from ..secure import random_source
from ._base import (
    guarantee,
    make_release,
    release_part,
    resolve_secure,
    warn_unasked_simulation,
)
from ._permutation import root_entropy, sources_by_stratum, sources_global, sources_secure
from ._swap_dask import ROW, swap_dask
from ._swap_table import (
    SwapTable,
    counts_on_cells,
    encode,
    jsonable,
    moved_records,
    swap_table,
)

__all__ = [
    "SwapResult",
    "SwappingInvariants",
    "permutation_swap",
    "swapping_invariants",
    "swapping_mape",
    "table_on_release_cells",
]


@dataclass(frozen=True, eq=False, kw_only=True)
class SwapResult(Release):
    """Output of :func:`permutation_swap`: the release of the swapped table, with the data.

    A :class:`~invariantdp.Release` (the swapped table, its invariants
    :math:`c_{Swap}`, the guarantee of Theorem 5.6) with one more attribute,
    ``data``: the swapped microdata.  It unpacks like the named tuple it
    used to be, ``data, release = permutation_swap(...)`` (or ``[0]``,
    ``[1]``), where ``release`` is this object.
    :meth:`~invariantdp.Release.save` writes the Release part only;
    :meth:`~invariantdp.Release.load` gives back a plain Release.

    Attributes
    ----------
    data : pandas.DataFrame or dask.dataframe.DataFrame
        The swapped microdata (see :func:`permutation_swap`).

    References
    ----------
    Bailie, Gong & Meng, Algorithm 5.1 and Theorem 5.6.

    Examples
    --------
    >>> df = pd.DataFrame({"county": list("aabbab"), "owned": [1, 0, 1, 0, 0, 1]})
    >>> data, rel = permutation_swap(df, swap="county", swap_rate=0.5, rng=3)
    >>> rel.data is data, len(data) == len(df), rel.mechanism
    (True, True, 'permutation_swap')
    """

    data: object

    release = release_part("SwapResult")

    # the named tuple (data, release) that permutation_swap used to return
    def __iter__(self):
        return iter((self.data, self))

    def __getitem__(self, index):
        return (self.data, self)[index]

    def __len__(self) -> int:
        return 2

    def __repr__(self) -> str:
        return f"SwapResult({len(self.data.columns)} columns, {Release.__repr__(self)})"


class SwappingInvariants(NamedTuple):
    r"""The swapping invariants :math:`c_{Swap}` (Definition 5.4) as two count tables.

    Attributes
    ----------
    match_hold : pandas.Series
        :math:`n_{jl}`: counts by all holding variables (matching and other).
    match_swap : pandas.Series
        :math:`n_{jk}`: counts by matching x swapping variables.

    References
    ----------
    Bailie, Gong & Meng, Definition 5.4.

    Examples
    --------
    >>> inv = swapping_invariants(pd.DataFrame({"c": list("abb"), "o": [1, 0, 1]}), swap="c")
    >>> inv.match_swap.to_dict(), inv.equals(inv)
    ({'a': 1, 'b': 2}, True)
    """

    match_hold: pd.Series
    match_swap: pd.Series

    def equals(self, other: SwappingInvariants) -> bool:
        """True when both tables are identical (labels and counts)."""
        return self.match_hold.equals(other.match_hold) and self.match_swap.equals(other.match_swap)


# ---------------------------------------------------------------------------
# argument handling
# ---------------------------------------------------------------------------


def _roles(data, swap, match):
    kind = check_frame(data)
    swap = check_columns("swap", as_columns(swap), data)
    if not swap:
        raise InvariantDPError("`swap` ([]) must name at least one swapping variable.")
    match = check_columns("match", as_columns(match), data)
    both = [c for c in match if c in swap]
    if both:
        raise InvariantDPError(
            f"`match` and `swap` both name {both!r}; a matching variable is a holding "
            "variable and cannot also be swapped."
        )
    hold = [c for c in data.columns if c not in swap]
    if not hold:
        raise InvariantDPError(
            f"`swap` ({swap!r}) names every column of `data`; at least one holding "
            "variable must stay with its record (Sec. 5.1)."
        )
    rest = [c for c in hold if c not in match]
    return kind, swap, match, hold, rest


def swapping_invariants(data: pd.DataFrame, *, swap, match=()) -> SwappingInvariants:
    r"""The swapping invariants :math:`c_{Swap}` of a data set (Definition 5.4).

    Parameters
    ----------
    data : pandas.DataFrame
        Microdata, one row per swapping unit.
    swap : str or sequence of str
        Swapping variables :math:`V_{Swap}`; every other column is a holding
        variable.
    match : str or sequence of str, optional
        Matching variables :math:`V_{Match}` (a subset of the holding ones).

    Returns
    -------
    SwappingInvariants
        ``match_hold`` (:math:`n_{jl}`) and ``match_swap`` (:math:`n_{jk}`),
        sorted by their labels; missing values count as a category.

    References
    ----------
    Bailie, Gong & Meng, Proposition 5.3 and Definition 5.4.

    Examples
    --------
    >>> import pandas as pd
    >>> from invariantdp.mechanisms import swapping_invariants
    >>> df = pd.DataFrame({"county": ["a", "b", "b"], "owned": [1, 0, 1]})
    >>> swapping_invariants(df, swap="county").match_swap.to_dict()
    {'a': 1, 'b': 2}
    """
    kind, swap, match, hold, _ = _roles(data, swap, match)
    if kind != "pandas":
        raise TypeError("`data` must be a pandas DataFrame here; call .compute() first.")
    opts = {"dropna": False, "observed": True, "sort": True}
    n_jl = data.groupby(hold, **opts).size()
    n_jk = data.groupby(match + swap, **opts).size()
    return SwappingInvariants(n_jl, n_jk)


def table_on_release_cells(release: Release, data: pd.DataFrame) -> np.ndarray:
    """Counts of ``data`` on the cells of a :func:`permutation_swap` release.

    Use it to check the invariants of the confidential data against the
    release: ``release.invariants.check(table_on_release_cells(release, x))``.

    Parameters
    ----------
    release : Release
        A release of :func:`permutation_swap` (its metadata name the
        variables, their levels and the cells of the released table).
    data : pandas.DataFrame
        Microdata with the columns of the swapped data, e.g. the confidential
        data or the swapped data itself.

    Returns
    -------
    numpy.ndarray of int64
        :math:`n_{jkl}`: the number of records of ``data`` on each cell
        ``(j, k, l)`` of ``release.value``, in the same order.

    Raises
    ------
    InvariantDPError
        If ``release`` is not from :func:`permutation_swap`, or ``data`` has a
        level or a record outside the cells the release covers.

    References
    ----------
    Bailie, Gong & Meng, Algorithm 5.1 (line 22, the released table),
    Proposition 5.3 and Definition 5.4 (the invariants it checks).

    Examples
    --------
    >>> import pandas as pd
    >>> from invariantdp.mechanisms import permutation_swap, table_on_release_cells
    >>> df = pd.DataFrame({"county": list("aabbab"), "owned": [1, 0, 1, 0, 0, 1]})
    >>> out, rel = permutation_swap(df, swap="county", swap_rate=0.5, rng=3)
    >>> rel.invariants.check(table_on_release_cells(rel, df))  # raises if violated
    >>> bool((table_on_release_cells(rel, out) == rel.value).all())
    True
    """
    meta = release.metadata
    if release.mechanism != "permutation_swap":
        raise InvariantDPError(
            f"`release` comes from {release.mechanism!r}, not from permutation_swap."
        )
    _roles(data, meta["swap"], meta["match"])
    return counts_on_cells(data, meta)


# ---------------------------------------------------------------------------
# the mechanism
# ---------------------------------------------------------------------------


#: a Dask frame has no secure swap (its strata are drawn in parallel from seeds)
_DASK_ALTERNATIVE = "permutation_swap on a pandas DataFrame (`.compute()` it first)"


def permutation_swap(
    data, *, swap, match=(), swap_rate, rng=None, seed_policy=None, secure=None
) -> SwapResult:
    r"""Swap microdata with the Permutation Algorithm (Bailie, Gong & Meng, Algorithm 5.1).

    Within each stratum of the matching variables, every record is selected
    independently with probability ``swap_rate`` (the whole stratum's
    selection is drawn again when exactly one record is chosen), and the
    swapping variables of the selected records are permuted by a uniformly
    random derangement :math:`\sigma`: record ``i`` receives the swapping
    values of record :math:`\sigma(i)`.  Holding variables stay with their
    records.  The swapping invariants :math:`c_{Swap}` -- the margins
    :math:`n_{jl}` and :math:`n_{jk}` -- are unchanged (Proposition 5.3); the
    margin :math:`n_{\cdot kl}` and the interior :math:`n_{jkl}` change.  The
    mechanism is :math:`(c_{Swap}, d^u_{HamS}, \epsilon)`-DP with
    :math:`\epsilon` of Theorem 5.6, Eq. (5.1).

    Parameters
    ----------
    data : pandas.DataFrame or dask.dataframe.DataFrame
        Microdata, one row per swapping unit (e.g. household); not modified.
        Every column is a variable (drop identifiers first).
    swap : str or sequence of str
        Swapping variables :math:`V_{Swap}` (cross-classified if several).
    match : str or sequence of str, optional
        Matching variables :math:`V_{Match}` (swap key), holding columns that
        define the strata; empty (default) means a single stratum.
    swap_rate : float
        Selection probability ``p`` in (0, 1).
    rng : None, int, SeedSequence or numpy.random.Generator
        A seed or generator makes the swap a simulation (reproducible, not
        for publication).
    seed_policy : {None, "global", "stratum"}
        How the random draws of a simulation are organised (module
        docstring).  ``None`` means ``"global"`` for pandas and
        ``"stratum"`` for Dask (the only policy Dask supports); a policy
        given asks for a simulation.
    secure : None or bool, optional
        None (the default): the secure swap for a pandas DataFrame when
        neither ``rng`` nor ``seed_policy`` is given, else a simulation (a
        Dask frame without ``rng`` warns,
        :class:`~invariantdp.exceptions.SimulationWarning`).  True: swap for
        a production release, with exact draws from :mod:`secrets` and work
        independent of which records swap; the guarantee is that of the
        table with its run time (:mod:`invariantdp.secure`); ``rng`` and
        ``seed_policy`` must then be None; pandas only.  False: a simulation.

    Returns
    -------
    SwapResult
        A :class:`~invariantdp.Release` with the swapped data as ``.data``;
        it unpacks as ``(data, release)``.  ``data`` is the swapped DataFrame
        (same index, columns and dtypes; for Dask, a lazy DataFrame whose
        partitions each hold whole strata, rows of a stratum in their
        original order, index preserved).  ``release.value`` is the swapped
        table :math:`n^Z_{jkl}` on the cells ``(j, k, l)`` with
        :math:`n_{jk} > 0` and :math:`n_{jl} > 0` (listed in
        ``release.metadata["cells"]``, category labels in
        ``metadata["levels"]``: read-only arrays, one row of labels per
        level, that compare equal to the lists the JSON document holds);
        ``release.invariants`` maps that table to
        :math:`c_{Swap}` (rows: the :math:`n_{jl}`, then the :math:`n_{jk}`);
        ``release.guarantee`` is ``epsilon-DP`` with ``epsilon``, ``b``
        and ``swap_rate``; ``release.metadata["randomness"]`` is
        ``"secure"`` with ``secure=True`` and ``"simulation"`` otherwise.

    Raises
    ------
    ValueError
        For unknown or repeated columns, a column both swapped and matched,
        no holding column, ``swap_rate`` outside (0, 1) or empty ``data``.

    Notes
    -----
    Strata must fit in memory.  With Dask the data are shuffled on the
    matching variables (with no matching variables, gathered into one
    partition), each partition is swapped with the ``"stratum"`` policy, and
    the release needs two aggregation passes (of the input and of the
    swapped data); the lazy result recomputes to the same values.  Per-stratum
    seeds hash the matching values' ``repr``, so the matching columns must
    have the same dtypes in the Dask and pandas frames being compared.

    References
    ----------
    Bailie, Gong & Meng, "Can swapping be differentially private?",
    Algorithm 5.1, Proposition 5.3, Definition 5.4, Theorem 5.6.

    Examples
    --------
    >>> import pandas as pd
    >>> from invariantdp.mechanisms import permutation_swap, swapping_invariants
    >>> df = pd.DataFrame({
    ...     "county": ["A", "A", "B", "B", "C", "C", "A", "B"],
    ...     "size": [1, 2, 1, 2, 1, 2, 1, 2],
    ...     "owned": [1, 0, 0, 1, 1, 1, 0, 0],
    ... })
    >>> out, release = permutation_swap(
    ...     df, swap="county", match="size", swap_rate=0.5, rng=1)
    >>> swapping_invariants(out, swap="county", match="size").equals(
    ...     swapping_invariants(df, swap="county", match="size"))
    True
    >>> release.guarantee.params["b"], round(release.guarantee.params["epsilon"], 3)
    (4, 1.609)
    """
    kind, swap, match, hold, rest = _roles(data, swap, match)
    swap_rate = check_in_open_unit("swap_rate", swap_rate)
    if secure is True:
        if seed_policy is not None:
            raise InvariantDPError(
                f"`seed_policy` ({seed_policy!r}) must be None with `secure=True`: secure "
                "draws are not seeded."
            )
        if kind != "pandas":
            raise InvariantDPError("`secure=True` needs a pandas DataFrame; call .compute() first.")
    asked = (secure, rng if seed_policy is None else seed_policy)  # a policy asks for a simulation
    secure = resolve_secure(
        secure, rng, "permutation_swap", exact=kind == "pandas" and seed_policy is None
    )
    if secure:
        sgen = random_source(rng, True)
        seed_policy = "secure"
    elif seed_policy is None:
        seed_policy = "global" if kind == "pandas" else "stratum"
    if not secure and seed_policy not in ("global", "stratum"):
        raise InvariantDPError(f"`seed_policy` ({seed_policy!r}) must be 'global' or 'stratum'.")
    if kind == "dask" and seed_policy != "stratum":
        raise InvariantDPError(
            f"`seed_policy` ({seed_policy!r}) must be 'stratum' for a Dask DataFrame."
        )
    if kind == "dask" and ROW in data.columns:
        raise InvariantDPError(f"`data` must not have a column named {ROW!r}.")
    gen = None if secure else as_generator(rng)
    roles = (swap, match, rest)
    if kind == "dask":
        swapped, table, levels = swap_dask(data, roles, swap_rate, root_entropy(gen))
        result = _swap_result(swapped, table, levels, roles, swap_rate, "stratum", None)
        warn_unasked_simulation(*asked, "permutation_swap", _DASK_ALTERNATIVE)
        return result

    x = encode(data, roles, read_all=secure)
    if secure:
        src, tv = sources_secure(x.j, x.n_match, swap_rate, sgen)
        # a release to publish: the work must not depend on how many records swap
        # (invariantdp.secure) nor on their order, so every record is read, placed, taken
        out = data.copy(deep=False)
        for c in swap:
            out[c] = data[c].array.take(src)
        table = swap_table(x, z=x._replace(k=x.k[src]))
        return _swap_result(out, table, x.levels, roles, swap_rate, seed_policy, tv)
    if seed_policy == "global":
        src = sources_global(x.j, x.n_match, swap_rate, gen)
    else:
        src = sources_by_stratum(data, match, swap_rate, root_entropy(gen))
    # A simulation: only the moved records are placed again and gathered.  Arrays
    # of n are made in an order that lets each reuse the memory of the last: the
    # sources go once the moved records are known (but for columns of other than
    # numpy dtypes, taken whole), the codes once the table is made.
    moved = moved_records(src)
    taken = {c: data[c].array.take(src) for c in swap if not isinstance(data[c].dtype, np.dtype)}
    origin = src[moved]
    del src
    table = swap_table(x, moved=moved, new_k=x.k[origin])
    levels = x.levels
    del x
    out = data.copy(deep=False)
    for c in swap:
        values = taken.pop(c) if c in taken else _swapped(data[c], moved, origin)
        # a Series on the same index is set without another copy of the new values
        out[c] = pd.Series(values, index=out.index, copy=False)
    return _swap_result(out, table, levels, roles, swap_rate, seed_policy, None)


def _swapped(column: pd.Series, moved: np.ndarray, origin: np.ndarray) -> np.ndarray:
    """A numpy ``column`` whose ``moved`` records take the values of records ``origin``.

    The column is copied and only its moved records (the swap rate of them)
    are gathered.
    """
    values = column.to_numpy(copy=True)
    values[moved] = values[origin]
    return values


def _swap_result(out, table: SwapTable, levels, roles, swap_rate, policy, tv) -> SwapResult:
    """The release of a swap (Alg. 5.1 line 22, Theorem 5.6), carrying the swapped data."""
    swap, match, rest = roles
    epsilon = swapping_epsilon(table.b, swap_rate)
    return make_release(
        table.table,
        "permutation_swap",
        NoiseLaw(
            "permutation",
            {
                "swap_rate": swap_rate,
                "selection": "each record of a stratum with probability swap_rate, "
                "re-drawn when exactly one record is selected",
                "permutation": "uniformly random derangement of the selected records",
            },
        ),
        guarantee(
            "epsilon-DP",
            {"epsilon": epsilon, "b": table.b, "swap_rate": swap_rate},
            adjacency="d_HamS^u: symmetric Hamming distance with the swapped records "
            "as privacy units, among data sets with the same swapping invariants",
            dataspace="data sets with the released swapping invariants c_Swap "
            "(n_jl and n_jk margins)",
            timing_tv=tv,
        ),
        invariants=table.invariants,
        query=None,
        data_shape=table.table.shape,
        metadata={
            "swap": [jsonable(c) for c in swap],
            "match": [jsonable(c) for c in match],
            "hold": [jsonable(c) for c in rest],
            "n_records": table.n_records,
            "b": table.b,
            "seed_policy": policy,
            "levels": levels,
            "cells": table.cells,
            "value": "counts n_jkl of the swapped data on the cells (match, swap, hold) "
            "allowed by the invariants; invariant rows are the n_jl then the n_jk margins",
        },
        secure=policy == "secure",
        cls=SwapResult,
        extra={"data": out},
    )


# ---------------------------------------------------------------------------
# utility: the error swapping induces (Figure 5.1)
# ---------------------------------------------------------------------------


def swapping_mape(data: pd.DataFrame, *, swap, match=(), swap_rates, n_runs=20, rng=None):
    r"""Mean absolute percentage error of swapping, over runs and swap rates (Figure 5.1).

    For each swap rate, the Permutation Algorithm (Algorithm 5.1, the
    ``"global"`` seed policy of :func:`permutation_swap`) is run ``n_runs``
    times; each run's error is (footnote 22)

    .. math:: \mathrm{MAPE} = \frac{1}{|\{kl: n^X_{kl} > 0\}|}\sum_{k,l:\ n^X_{kl}>0}
              \frac{|n^X_{kl} - n^Z_{kl}|}{n^X_{kl}}

    on the table of the swapping variables ``k`` by the non-matching holding
    variables ``l`` (e.g. county by ownership); cells empty in the
    confidential table are left out (the ratio is undefined there).  Draw
    the result with :func:`invariantdp.plotting.plot_swapping_mape`.

    Parameters
    ----------
    data : pandas.DataFrame
        Confidential microdata.
    swap, match : str or sequence of str
        As in :func:`permutation_swap`.
    swap_rates : sequence of float
        Swap rates in (0, 1).
    n_runs : int, optional
        Runs per swap rate (20 in the paper).
    rng : None, int, SeedSequence or numpy.random.Generator
        Each (rate, run) draws from its own child of ``rng`` (``spawn``).

    Returns
    -------
    pandas.DataFrame
        Columns ``swap_rate``, ``run``, ``mape``.

    References
    ----------
    Bailie, Gong & Meng, Section 5.3, Figure 5.1 and footnote 22.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from invariantdp.mechanisms._permutation_swap import swapping_mape
    >>> g = np.random.default_rng(0)
    >>> df = pd.DataFrame({"county": g.integers(0, 5, 2000), "owned": g.integers(0, 2, 2000)})
    >>> res = swapping_mape(df, swap="county", swap_rates=[0.01, 0.5], n_runs=3, rng=1)
    >>> res.groupby("swap_rate")["mape"].mean().is_monotonic_increasing
    True
    """
    kind, swap, match, _, rest = _roles(data, swap, match)
    if kind != "pandas":
        raise TypeError("`data` must be a pandas DataFrame.")
    rates = [check_in_open_unit("swap_rates", r) for r in np.atleast_1d(swap_rates)]
    n_runs = check_positive_int("n_runs", n_runs)
    if not rates:
        raise InvariantDPError("`swap_rates` must hold at least one rate.")
    gen = as_generator(rng)
    x = encode(data, (swap, match, rest), labels=False)
    size = x.n_swap * x.n_rest
    n_rest = np.int64(x.n_rest)  # the codes may be narrow: keys in int64
    truth = np.bincount(x.k * n_rest + x.l, minlength=size)
    keep = truth > 0
    children = gen.spawn(len(rates) * n_runs)
    rows = []
    for i, p in enumerate(rates):
        for r in range(n_runs):
            src = sources_global(x.j, x.n_match, p, children[i * n_runs + r])
            swapped = np.bincount(x.k[src] * n_rest + x.l, minlength=size)
            err = np.abs(swapped[keep] - truth[keep]) / truth[keep]
            rows.append((p, r, float(err.mean())))
    return pd.DataFrame(rows, columns=["swap_rate", "run", "mape"])
