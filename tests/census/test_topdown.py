"""TopDown-like post-processing: non-negative, integer, consistent, and the direct solve."""

import itertools
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from _gls.kkt import query_matrix
from invariantdp.census import Geography, Schema, measure, topdown_postprocess
from invariantdp.census._measurements import QueryTable
from invariantdp.exceptions import InvariantDPError

SCHEMA = Schema({"sex": ["F", "M"], "age": 2})
GEO = Geography({"State": 1, "County": 2, "Tract": 3})


def small_counts(rng, fan=(3, 3), mean=2.0):
    """Counts of tracts below one state: ``fan`` counties x tracts (some tracts fewer)."""
    rows = []
    for c in range(fan[0]):
        for t in range(int(rng.integers(1, fan[1] + 1))):
            for s in ("F", "M"):
                for a in range(2):
                    rows.append((f"9{c + 1}{t + 1}", s, a, int(rng.poisson(mean))))
    return pd.DataFrame(rows, columns=["geocode", "sex", "age", "count"])


def measured(seed, invariants=None, mean=2.0, zero=True):
    rng = np.random.default_rng(seed)
    counts = small_counts(rng, mean=mean)
    wl = {
        lev: {"total": rng.uniform(0.2, 2.0), "sex": rng.uniform(0.2, 2.0),
              "detailed": rng.uniform(0.2, 2.0)}
        for lev in GEO.names
    }  # fmt: skip
    units = counts["geocode"].unique()
    nm = measure(
        counts, SCHEMA, GEO, wl, invariants=invariants, secure=False, rng=seed, units=units
    )
    if zero:  # males aged 1 are structurally absent from the first tract (its truth set to 0)
        mask = np.zeros((1, 4), dtype=bool)
        mask[0, 3] = True
        nm = replace(nm, zeros={("Tract", "detailed"): QueryTable(np.array([0]), mask)})
    return nm


# -- the direct solve, written without the package's solvers ---------------------------


def own_reference(nm):
    """Each unit's least-norm weighted least-squares estimate from its own measurements."""
    prob = nm.to_problem()
    k, shape = nm.schema.k, nm.schema.shape
    W = [np.zeros((len(u), k, k)) for u in nm.units]
    b = [np.zeros((len(u), k)) for u in nm.units]
    for m in prob.measurements:
        Q = query_matrix(shape, m.attrs)
        for i, u in enumerate(m.units):
            W[m.level][u] += Q.T @ Q / m.variance[i]
            b[m.level][u] += Q.T @ m.values[i] / m.variance[i]
    return [np.stack([np.linalg.pinv(w) @ v for w, v in zip(Ws, bs, strict=True)])
            for Ws, bs in zip(W, b, strict=True)]  # fmt: skip


def nnls_reference(x, A, a, zero):
    """argmin ||h - x|| over h >= 0, h[zero] = 0, A h = a: every active set tried (exact)."""
    n = x.size
    best, best_cost = None, np.inf
    for active in itertools.product((False, True), repeat=n):
        fixed = np.array(active) | zero
        B = np.vstack([A, np.eye(n)[fixed]])
        c = np.concatenate([a, np.zeros(int(fixed.sum()))])
        h = x - np.linalg.pinv(B) @ (B @ x - c)
        scale = 1 + np.abs(c).max(initial=0.0)
        if np.abs(B @ h - c).max(initial=0.0) > 1e-8 * scale or h.min() < -1e-9:
            continue
        cost = np.sum((h - x) ** 2)
        if cost < best_cost - 1e-12:
            best, best_cost = np.maximum(h, 0.0), cost
    return best


def integer_reference(p, A, a, zero, ours, width=1):
    """argmin ||h - p||_1 over integers h >= 0, h[zero] = 0, A h = a, by enumeration.

    Discrete noise makes ties common (fractional parts repeat); among several
    minimisers the one returned is ``ours`` when it is one of them.
    """
    lo = np.where(zero, 0, np.maximum(np.floor(p) - width, 0))
    hi = np.where(zero, 0, np.ceil(p) + width)
    grids = np.meshgrid(*[np.arange(lo_, hi_ + 1) for lo_, hi_ in zip(lo, hi, strict=True)],
                        indexing="ij")  # fmt: skip
    H = np.stack([g.reshape(-1) for g in grids], axis=1)
    ok = np.all(np.abs(H @ A.T - a) < 1e-6, axis=1)
    H = H[ok]
    cost = np.abs(H - p).sum(axis=1)
    best = H[cost <= cost.min() + 1e-9]
    mine = np.flatnonzero(np.all(best == ours, axis=1))
    return best[mine[0] if mine.size else 0]


def reference_topdown(nm, integer, ours):
    """TopDown-like post-processing solved directly: every parent's children together.

    ``ours``: the histograms under test, to pick among tied integer minimisers.
    """
    mine = [
        ours.histogram(lev).reshape(len(u), -1) for lev, u in zip(nm.levels, nm.units, strict=True)
    ]
    k, shape = nm.schema.k, nm.schema.shape
    own = own_reference(nm)
    zero = [np.zeros((len(u), k), dtype=bool) for u in nm.units]
    for (level, query), t in nm.zeros.items():
        Q = query_matrix(shape, nm.schema.query(query))
        zero[nm.geography.index(level)][t.units] |= (t.values.astype(float) @ Q) > 0
    rows = [dict() for _ in nm.units]  # unit -> list of (rows, values)
    for (level, query), t in nm.invariants.items():
        Q = query_matrix(shape, nm.schema.query(query))
        for i, u in enumerate(t.units):
            rows[nm.geography.index(level)].setdefault(int(u), []).append((Q, t.values[i]))
    for li in range(len(nm.units) - 1, 0, -1):
        par = nm.parents[li]
        for p in range(len(nm.units[li - 1])):
            kids = np.flatnonzero(par == p)
            if kids.size == 0:
                continue
            zero[li - 1][p] |= zero[li][kids].all(axis=0)
            # an invariant every child holds gives the parent the sum
            kinds = [{Q.tobytes(): (Q, v) for Q, v in rows[li].get(int(c), [])} for c in kids]
            for key in set.intersection(*(set(d) for d in kinds)) if kinds else ():
                Q = kinds[0][key][0]
                total = sum(d[key][1] for d in kinds)
                held = rows[li - 1].setdefault(int(p), [])
                if not any(np.array_equal(Q, q) for q, _ in held):
                    held.append((Q, total))
    out = []
    for u in range(len(nm.units[0])):
        A = np.vstack([q for q, _ in rows[0].get(u, [])] or [np.zeros((0, k))])
        a = np.concatenate([v for _, v in rows[0].get(u, [])] or [np.zeros(0)])
        h = nnls_reference(own[0][u], A, a, zero[0][u])
        out.append(integer_reference(h, A, a, zero[0][u], mine[0][u]) if integer else h)
    hists = [np.array(out)]
    for li in range(1, len(nm.units)):
        par = nm.parents[li]
        level = np.zeros((len(nm.units[li]), k))
        for p in range(len(nm.units[li - 1])):
            kids = np.flatnonzero(par == p)
            if kids.size == 0:
                continue
            c = kids.size
            A = [np.tile(np.eye(k), (1, c))]
            a = [hists[-1][p]]
            for i, u in enumerate(kids):
                for Q, v in rows[li].get(int(u), []):
                    block = np.zeros((Q.shape[0], c * k))
                    block[:, i * k : (i + 1) * k] = Q
                    A.append(block)
                    a.append(v)
            A, a = np.vstack(A), np.concatenate(a)
            z = zero[li][kids].reshape(-1)
            h = nnls_reference(own[li][kids].reshape(-1), A, a, z)
            if integer:
                if A.shape[0] == k:  # the sum alone: the cells separate
                    hz = h.reshape(c, k)
                    for j in range(k):
                        hz[:, j] = integer_reference(
                            hz[:, j],
                            np.ones((1, c)),
                            a[j : j + 1],
                            zero[li][kids][:, j],
                            mine[li][kids][:, j],
                        )
                    h = hz.reshape(-1)
                else:
                    h = integer_reference(h, A, a, z, mine[li][kids].reshape(-1))
            level[kids] = h.reshape(c, k)
        hists.append(level)
    return hists


# -- properties ------------------------------------------------------------------------------


def check_published(td, nm):
    """Non-negative, integer, consistent, the invariants and the zeros."""
    alg_shape = nm.schema.shape
    for li, level in enumerate(nm.levels):
        h = td.histogram(level)
        assert h.shape == (len(nm.units[li]), *alg_shape)
        assert h.dtype == np.int64 and h.min() >= 0
        if li:
            sums = np.zeros_like(td.histogram(nm.levels[li - 1]))
            np.add.at(sums, nm.parents[li], h)
            has_children = np.bincount(nm.parents[li], minlength=sums.shape[0]) > 0
            assert np.array_equal(sums[has_children], td.histogram(nm.levels[li - 1])[has_children])
    for (level, query), t in nm.invariants.items():
        got = (
            td.counts(query, level)["count"]
            .to_numpy()
            .reshape(len(nm.units[nm.geography.index(level)]), -1)
        )
        assert np.array_equal(got[t.units], t.values)
    for (level, query), t in nm.zeros.items():
        got = td.counts(query, level)["count"].to_numpy().reshape(-1, t.values.shape[1])
        assert np.all(got[t.units][t.values] == 0)


@pytest.mark.parametrize("seed", range(4))
def test_published_histograms_meet_every_rule(seed):
    nm = measured(seed, invariants={"State": ["total"]})
    td = topdown_postprocess(nm)
    check_published(td, nm)
    assert td.coupled == (0, 0, 0)  # the state total alone: every fit separates by cell


@pytest.mark.parametrize("seed", range(3))
def test_invariants_below_the_top_are_met_through_the_coupled_fit(seed):
    nm = measured(seed, invariants={"State": ["total"], "County": ["total", "sex"]})
    td = topdown_postprocess(nm)
    check_published(td, nm)
    assert td.coupled[1] == len(nm.units[1])  # the counties, fitted together in their state


TOP_INVARIANTS = [
    {"State": ["total"]},  # the state total alone: every fit separates by cell
    None,  # nothing exact: the state is its own estimate, made non-negative and rounded
    {"State": ["total", "sex"]},  # the state fitted alone under both (the coupled fit)
]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("integer", [False, True])
@pytest.mark.parametrize("invariants", TOP_INVARIANTS, ids=["total", "none", "total+sex"])
def test_equal_to_the_direct_solve(seed, integer, invariants):
    nm = measured(seed, invariants=invariants)
    td = topdown_postprocess(nm, integer=integer)
    ref = reference_topdown(nm, integer, td)
    for li, level in enumerate(nm.levels):
        got = td.histogram(level).reshape(len(nm.units[li]), -1)
        np.testing.assert_allclose(got, ref[li], atol=1e-7)


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("integer", [False, True])
def test_coupled_fit_equal_to_the_direct_solve(seed, integer):
    rng = np.random.default_rng(100 + seed)
    counts = small_counts(rng, fan=(2, 2), mean=1.5)
    wl = {lev: {"detailed": 1.0, "total": 0.5} for lev in GEO.names}
    inv = {"County": ["total"]}  # the state's total follows from its counties'
    nm = measure(
        counts, SCHEMA, GEO, wl, invariants=inv, secure=False, rng=seed,
        units=counts["geocode"].unique(),
    )  # fmt: skip
    td = topdown_postprocess(nm, integer=integer)
    ref = reference_topdown(nm, integer, td)
    for li, level in enumerate(nm.levels):
        got = td.histogram(level).reshape(len(nm.units[li]), -1)
        np.testing.assert_allclose(got, ref[li], atol=1e-7)
    assert td.coupled[1] == len(nm.units[1])


@pytest.mark.parametrize("integer", [False, True])
def test_other_equalities_hold_through_the_coupled_fit(integer):
    rng = np.random.default_rng(5)
    counts = small_counts(rng, fan=(2, 2), mean=4.0)
    wl = {lev: {"detailed": 0.5} for lev in GEO.names}
    nm = measure(
        counts, SCHEMA, GEO, wl, invariants={"State": ["total"]}, secure=False, rng=5,
        units=counts["geocode"].unique(),
    )  # fmt: skip
    tract = nm.geocodes("Tract")[1]
    assert np.sum(nm.parents[2] == nm.parents[2][1]) == 2  # two tracts: 8 cells to enumerate
    truth = counts[counts["geocode"] == tract]["count"].to_numpy()
    row = np.array([[1.0, -1.0, 0.0, 0.0]])  # females aged 0 minus aged 1, known exactly
    nm = nm.with_constraint("Tract", tract, row, row @ truth)
    td = topdown_postprocess(nm, integer=integer)
    h = td.histogram("Tract")[1].reshape(-1)
    assert row @ h == pytest.approx(row @ truth, abs=1e-9)
    ref = reference_topdown_linear(nm, integer, td)
    np.testing.assert_allclose(td.histogram("Tract").reshape(-1, 4), ref, atol=1e-7)
    siblings = nm.parents[2] == nm.parents[2][1]
    assert td.coupled[2] == int(siblings.sum())


def reference_topdown_linear(nm, integer, ours):
    """The tracts of the county holding a linear constraint, solved directly."""
    level, geocode, matrix, values = nm.linear[0]
    u = int(nm.unit_index(level, [geocode])[0])
    par = nm.parents[2]
    kids = np.flatnonzero(par == par[u])
    own = own_reference(nm)[2][kids].reshape(-1)
    c, k = kids.size, nm.schema.k
    H = ours.histogram("County")[par[u]].reshape(-1)
    block = np.zeros((matrix.shape[0], c * k))
    at = int(np.flatnonzero(kids == u)[0])
    block[:, at * k : (at + 1) * k] = matrix
    A = np.vstack([np.tile(np.eye(k), (1, c)), block])
    a = np.concatenate([H, values])
    zero = np.tile(H == 0, c)
    h = nnls_reference(own, A, a, zero)
    mine = ours.histogram("Tract")[kids].reshape(-1)
    out = ours.histogram("Tract").reshape(-1, k).astype(float)
    out[kids] = (integer_reference(h, A, a, zero, mine) if integer else h).reshape(c, k)
    return out


def test_a_unit_without_units_below_keeps_its_fit():
    from invariantdp.census import NoisyMeasurements

    dpq = pd.DataFrame({
        "geocode": ["9", "91", "92", "911", "912"],
        "query_name": ["detailed_dpq"] * 5,
        "value": [[10.0, 3.0], [6.0, 1.0], [4.0, 1.5], [2.0, 0.0], [3.5, 1.0]],
        "variance": [1.0] * 5,
    })  # fmt: skip
    nm = NoisyMeasurements.from_frames(dpq, None, Schema({"sex": 2}), GEO)
    td = topdown_postprocess(nm)
    # county 92 has no tracts: its fit is final; county 91's tracts split it
    assert td.histogram("State").tolist() == [[10, 3]]
    assert td.histogram("County").tolist() == [[6, 1], [4, 2]]
    assert td.histogram("Tract").sum(axis=0).tolist() == [6, 1]


def test_real_valued_fit_is_non_negative_and_consistent():
    nm = measured(7, invariants={"State": ["total"]})
    td = topdown_postprocess(nm, integer=False)
    assert not td.integer
    for li in range(1, 3):
        h = td.histogram(nm.levels[li])
        assert h.dtype == float and h.min() >= 0
        sums = np.zeros_like(td.histogram(nm.levels[li - 1]))
        np.add.at(sums, nm.parents[li], h)
        np.testing.assert_allclose(sums, td.histogram(nm.levels[li - 1]), rtol=1e-12, atol=1e-9)
    state = nm.invariants[("State", "total")].values[0, 0]
    assert td.histogram("State").sum() == pytest.approx(state, rel=1e-12)


def test_unmeasured_level_splits_its_parents_and_stays_consistent():
    nm = measured(3, invariants={"State": ["total"]}, zero=False)
    nm = replace(nm, measurements={k: t for k, t in nm.measurements.items() if k[0] != "Tract"})
    td = topdown_postprocess(nm)
    check_published(td, nm)
    # no measurement tells the tracts apart: each county's cells split as evenly as integers allow
    tracts = td.histogram("Tract").reshape(len(nm.units[2]), -1)
    par = nm.parents[2]
    for p in range(len(nm.units[1])):
        kids = tracts[par == p]
        assert np.all(kids.max(axis=0) - kids.min(axis=0) <= 1)


def test_small_counts_are_biased_upward_by_non_negativity():
    # tracts with a true count of 0 in a cell: TopDown's answer is >= 0, and > 0 on average
    rng = np.random.default_rng(11)
    counts = small_counts(rng, fan=(3, 3), mean=0.7)
    truth = counts.set_index(["geocode", "sex", "age"])["count"].unstack(["sex", "age"])
    wl = {lev: {"detailed": 0.5} for lev in GEO.names}
    errors = []
    for r in range(40):
        nm = measure(counts, SCHEMA, GEO, wl, invariants={"State": ["total"]}, secure=False,
                     rng=r, units=counts["geocode"].unique())  # fmt: skip
        h = topdown_postprocess(nm).histogram("Tract").reshape(len(nm.units[2]), -1)
        errors.append(h - truth.loc[nm.geocodes("Tract")].to_numpy())
    errors = np.array(errors)
    at_zero = errors[:, truth.loc[nm.geocodes("Tract")].to_numpy() == 0]
    se = at_zero.mean(axis=1).std(ddof=1) / np.sqrt(at_zero.shape[0])
    assert at_zero.min() >= 0 and at_zero.mean() > 5 * se


# -- refusals ------------------------------------------------------------------------------


def test_refusals():
    nm = measured(1, invariants={"State": ["total"]})
    with pytest.raises(TypeError, match="`measurements` must be NoisyMeasurements"):
        topdown_postprocess("nmf")
    half = QueryTable(np.array([0]), np.array([[10.5]]))
    odd = replace(nm, invariants={("State", "total"): half})
    with pytest.raises(InvariantDPError, match="non-integer values"):
        topdown_postprocess(odd)
    assert topdown_postprocess(odd, integer=False).histogram("State").sum() == pytest.approx(10.5)
    # county totals that do not add up to the state total
    counties = len(nm.units[1])
    bad = replace(
        nm,
        invariants={
            ("State", "total"): QueryTable(np.array([0]), np.array([[1000.0]])),
            ("County", "total"): QueryTable(np.arange(counties), np.ones((counties, 1))),
        },
    )
    with pytest.raises(InvariantDPError, match="not the sum of its units' invariants below"):
        topdown_postprocess(bad)


def test_recoded_structural_zeros_are_the_zero_cells_they_group():
    # the release's nurse_nva_0: a zero on (a recode of sex) x (a recode of age), i.e. the
    # one detailed cell (M, 0); the same zero written as a marginal mask gives the same fit
    schema = Schema(
        {"sex": ["F", "M"], "age": 2}, recodes={"men": ("sex", [[1]]), "young": ("age", [[0]])}
    )
    nm = replace(measured(3, invariants={"State": ["total"]}, zero=False), schema=schema)
    tracts = np.arange(len(nm.units[2]))
    recoded = replace(
        nm, zeros={("Tract", "men * young"): QueryTable(tracts, np.ones((tracts.size, 1), bool))}
    )
    mask = np.zeros((tracts.size, 4), dtype=bool)
    mask[:, 2] = True  # (M, 0) in C order over sex x age
    plain = replace(nm, zeros={("Tract", "detailed"): QueryTable(tracts, mask)})
    for integer in (True, False):
        got = topdown_postprocess(recoded, integer=integer)
        want = topdown_postprocess(plain, integer=integer)
        for level in GEO.names:
            assert np.array_equal(got.histogram(level), want.histogram(level))
        assert not got.histogram("Tract")[:, 1, 0].any()
    # recoded noisy answers are still refused, with the way out
    answers = nm.measurements[("Tract", "sex")]
    men = replace(answers, values=answers.values[:, 1:])
    grouped = replace(recoded, measurements={**nm.measurements, ("Tract", "men"): men})
    refused = r"noisy answers of 'men' at level Tract.*without_queries\('men'\)"
    with pytest.raises(InvariantDPError, match=refused):
        topdown_postprocess(grouped)


def test_counts_frame_and_summary():
    nm = measured(2, invariants={"State": ["total"]})
    td = topdown_postprocess(nm)
    df = td.counts("sex", "County")
    assert list(df.columns) == ["geocode", "sex", "count"]
    assert df["sex"].tolist()[:2] == ["F", "M"]
    assert df["count"].sum() == nm.invariants[("State", "total")].values[0, 0]
    text = str(td.summary())
    assert "TopDown-like" in text and "Tract" in text
