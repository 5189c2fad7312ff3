"""The Permutation Algorithm (Bailie, Gong & Meng, Algorithm 5.1)."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from invariantdp import Release
from invariantdp._frames import CHUNK
from invariantdp.mechanisms import (
    SwapResult,
    permutation_swap,
    swapping_invariants,
    table_on_release_cells,
)
from invariantdp.mechanisms._permutation import derange_segments, select, sources_global
from invariantdp.privacy import largest_stratum, swapping_epsilon

from ._simulation import simulation_unless_seeded


def _households(rng, n=3000):
    return pd.DataFrame(
        {
            "state": rng.choice(["MA", "RI"], n),
            "county": rng.choice([f"c{i}" for i in range(8)], n),
            "size": rng.integers(1, 5, n),
            "tenure": pd.Categorical(rng.choice(["owned", "rented"], n)),
        }
    )


# ---------------------------------------------------------------------------
# invariants (Proposition 5.3)
# ---------------------------------------------------------------------------


@st.composite
def _data_and_roles(draw):
    n_cols = draw(st.integers(2, 5))
    n = draw(st.integers(1, 60))
    cols = [f"v{i}" for i in range(n_cols)]
    data = {
        c: draw(st.lists(st.integers(0, draw(st.integers(0, 4))), min_size=n, max_size=n))
        for c in cols
    }
    df = pd.DataFrame(data)
    if draw(st.booleans()):
        df[cols[0]] = df[cols[0]].map(lambda v: f"s{v}").astype(object)
    roles = draw(st.permutations(cols))
    n_swap = draw(st.integers(1, n_cols - 1))
    swap = list(roles[:n_swap])
    hold = list(roles[n_swap:])
    match = hold[: draw(st.integers(0, len(hold)))]
    return df, swap, match


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
@given(
    case=_data_and_roles(),
    p=st.floats(0.05, 0.95),
    seed=st.integers(0, 2**32 - 1),
    policy=st.sampled_from(["global", "stratum"]),
)
def test_swapping_invariants_hold_on_every_run(case, p, seed, policy):
    df, swap, match = case
    before = df.copy(deep=True)
    out, release = permutation_swap(
        df, swap=swap, match=match, swap_rate=p, rng=seed, seed_policy=policy
    )
    pd.testing.assert_frame_equal(df, before)  # input untouched
    assert swapping_invariants(out, swap=swap, match=match).equals(
        swapping_invariants(df, swap=swap, match=match)
    )
    # holding variables stay with their records; swapping values are a permutation
    hold = [c for c in df.columns if c not in swap]
    pd.testing.assert_frame_equal(out[hold], df[hold])
    # the release: its table satisfies c_Swap, and so does the confidential table
    release.invariants.check(release.value)
    release.invariants.check(table_on_release_cells(release, df))
    np.testing.assert_array_equal(table_on_release_cells(release, out), release.value)
    b = largest_stratum(df, match)
    assert release.guarantee.params["b"] == b
    assert release.guarantee.params["epsilon"] == swapping_epsilon(b, p)


def test_margins_that_proposition_5_3_says_change_do_change(rng):
    df = _households(rng)
    roles = {"swap": "county", "match": ["state", "size"]}
    out, _ = permutation_swap(df, swap_rate=0.3, rng=11, **roles)
    assert swapping_invariants(out, **roles).equals(swapping_invariants(df, **roles))

    def table(d, cols):
        return d.groupby(cols, observed=True).size()

    # n_.kl (swapping x non-matching holding, summed over strata) changes ...
    assert not table(out, ["county", "tenure"]).equals(table(df, ["county", "tenure"]))
    # ... and so do interior cells n_jkl
    all_cols = ["state", "size", "county", "tenure"]
    assert not table(out, all_cols).equals(table(df, all_cols))
    # while every margin other than n_.kl stays (Proposition 5.3)
    for cols in (["state", "size", "tenure"], ["state", "size", "county"], ["county"], ["tenure"]):
        assert table(out, cols).equals(table(df, cols))


def test_swap_moves_about_the_swap_rate_of_records(rng):
    n = 200_000
    df = pd.DataFrame({"k": np.arange(n), "l": rng.integers(0, 3, n), "j": rng.integers(0, 50, n)})
    out, _ = permutation_swap(df, swap="k", match="j", swap_rate=0.2, rng=3)
    moved = (out["k"] != df["k"]).mean()  # all k distinct: moved = selected
    assert abs(moved - 0.2) < 0.005
    # the swapped k stay within their stratum
    assert (df.set_index("k").loc[out["k"], "j"].to_numpy() == out["j"].to_numpy()).all()


# ---------------------------------------------------------------------------
# the random permutation
# ---------------------------------------------------------------------------


def _is_derangement(perm):
    return all(perm[i] != i for i in range(len(perm)))


@pytest.mark.parametrize("m", [4, 5])
def test_derangements_are_uniform_chi_square(m):
    gen = np.random.default_rng(20240601 + m)
    derangements = [p for p in itertools.permutations(range(m)) if _is_derangement(p)]
    assert len(derangements) == round(math.factorial(m) / math.e)
    reps = 400 * len(derangements)
    sigma = derange_segments(np.full(reps, m), gen).reshape(reps, m)
    sigma -= (np.arange(reps) * m)[:, None]
    assert np.all((sigma >= 0) & (sigma < m))
    assert not np.any(sigma == np.arange(m))  # no fixed points, ever
    index = {p: i for i, p in enumerate(derangements)}
    counts = np.bincount([index[tuple(row)] for row in sigma], minlength=len(derangements))
    assert counts.sum() == reps
    assert stats.chisquare(counts).pvalue > 1e-3


def test_derangements_mixed_sizes_never_fix_a_point():
    gen = np.random.default_rng(5)
    sizes = gen.integers(2, 40, 5000)
    sigma = derange_segments(sizes, gen)
    pos = np.arange(sizes.sum())
    seg = np.repeat(np.arange(sizes.size), sizes)
    assert not np.any(sigma == pos)
    assert np.array_equal(seg[sigma], seg)
    assert np.array_equal(np.sort(sigma), pos)


def test_selection_law_excludes_exactly_one():
    # strata of 3: P(m selected) proportional to C(3, m) p^m (1-p)^(3-m), m in {0, 2, 3}
    p = 0.3
    n_strata = 60_000
    j = np.repeat(np.arange(n_strata), 3)
    sel = select(j, n_strata, p, np.random.default_rng(8))
    m = np.bincount(j[sel], minlength=n_strata)
    counts = np.bincount(m, minlength=4)
    assert counts[1] == 0
    probs = np.array([math.comb(3, k) * p**k * (1 - p) ** (3 - k) for k in (0, 2, 3)])
    probs /= probs.sum()
    assert stats.chisquare(counts[[0, 2, 3]], probs * n_strata).pvalue > 1e-3


def test_singleton_strata_are_never_selected():
    j = np.array([0, 1, 1, 2, 3, 3, 3])
    for seed in range(50):
        src = sources_global(j, 4, 0.9, np.random.default_rng(seed))
        assert src[0] == 0 and src[3] == 0 + 3
        assert np.array_equal(j[src], j)
        moved = np.bincount(j[src != np.arange(j.size)], minlength=4)
        assert not np.any(moved == 1)


def test_end_to_end_uniform_over_derangements_with_high_rate():
    # one stratum of 4 distinct records, conditioned on all 4 being selected
    df = pd.DataFrame({"k": [0, 1, 2, 3], "l": [0, 1, 2, 3]})
    gen = np.random.default_rng(77)
    seen = {}
    for child in gen.spawn(700):
        out, _ = permutation_swap(df, swap="k", swap_rate=0.98, rng=child)
        perm = tuple(out["k"])
        if all(perm[i] != i for i in range(4)):
            seen[perm] = seen.get(perm, 0) + 1
    assert len(seen) == 9
    assert stats.chisquare(list(seen.values())).pvalue > 1e-3


# ---------------------------------------------------------------------------
# release, seeds, input checks
# ---------------------------------------------------------------------------


def test_release_round_trips_and_describes_the_guarantee(rng):
    df = _households(rng, 500)
    out, release = permutation_swap(df, swap="county", match="size", swap_rate=0.1, rng=4)
    assert Release.from_json(release.to_json()) == release
    g = release.guarantee
    assert g.definition == "epsilon-DP"
    assert g.params["epsilon"] == pytest.approx(swapping_epsilon(g.params["b"], 0.1))
    assert release.noise.family == "permutation"
    inv = swapping_invariants(df, swap="county", match="size")
    n_jl, n_jk = (
        release.invariants.values[: inv.match_hold.size],
        release.invariants.values[inv.match_hold.size :],
    )
    assert sorted(n_jl.tolist()) == sorted(inv.match_hold.tolist())
    assert n_jk.tolist() == inv.match_swap.tolist()  # rows ordered by (size, county)
    assert int(release.value.sum()) == len(df)


def test_same_seed_same_result_and_rng_advances(rng):
    df = _households(rng, 400)
    a, ra = permutation_swap(df, swap="county", match="size", swap_rate=0.4, rng=9)
    b, rb = permutation_swap(df, swap="county", match="size", swap_rate=0.4, rng=9)
    pd.testing.assert_frame_equal(a, b)
    assert ra == rb
    gen = np.random.default_rng(1)
    c, _ = permutation_swap(df, swap="county", match="size", swap_rate=0.4, rng=gen)
    d, _ = permutation_swap(df, swap="county", match="size", swap_rate=0.4, rng=gen)
    assert not c.equals(d)


def test_stratum_policy_does_not_depend_on_row_order_of_other_strata(rng):
    df = _households(rng, 600)
    a, _ = permutation_swap(
        df, swap="county", match="size", swap_rate=0.5, rng=2, seed_policy="stratum"
    )
    part = df[df["size"] == 2]
    b, _ = permutation_swap(
        part, swap="county", match="size", swap_rate=0.5, rng=2, seed_policy="stratum"
    )
    pd.testing.assert_frame_equal(a[a["size"] == 2], b)


def test_dask_equals_pandas_stratum_policy(rng):
    dd = pytest.importorskip("dask.dataframe")
    import dask

    df = _households(rng, 2000).astype({"tenure": str})
    roles = {"swap": "county", "match": ["state", "size"], "swap_rate": 0.3, "rng": 5}
    expected, rel_p = permutation_swap(df, seed_policy="stratum", **roles)
    with dask.config.set(scheduler="synchronous"):
        for parts in (1, 3, 7):
            lazy, rel_d = permutation_swap(dd.from_pandas(df, npartitions=parts), **roles)
            got = lazy.compute().sort_index()
            pd.testing.assert_frame_equal(got, expected, check_dtype=False, check_index_type=False)
            assert rel_d == rel_p
        # no matching variables: one stratum
        lazy, _ = permutation_swap(
            dd.from_pandas(df, npartitions=4), swap="county", swap_rate=0.2, rng=1
        )
        exp, _ = permutation_swap(df, swap="county", swap_rate=0.2, rng=1, seed_policy="stratum")
        pd.testing.assert_frame_equal(
            lazy.compute().sort_index(), exp, check_dtype=False, check_index_type=False
        )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"swap": "nope"}, r"`swap` names unknown column\(s\) \['nope'\]"),
        ({"swap": "county", "match": "zz"}, r"`match` names unknown column\(s\) \['zz'\]"),
        ({"swap": "county", "match": "county"}, r"`match` and `swap` both name \['county'\]"),
        ({"swap": []}, r"`swap` \(\[\]\) must name at least one"),
        ({"swap": ["county", "county"]}, r"`swap` .* names a column more than once"),
        (
            {"swap": ["state", "county", "size", "tenure"]},
            r"`swap` .* names every column of `data`",
        ),
        ({"swap": "county", "swap_rate": 1.5}, r"`swap_rate` \(1.5\) must be in \(0, 1\)"),
        ({"swap": "county", "swap_rate": 0.0}, r"`swap_rate` \(0.0\) must be in \(0, 1\)"),
        ({"swap": "county", "swap_rate": 1.0}, r"`swap_rate` \(1.0\) must be in \(0, 1\)"),
        ({"swap": "county", "seed_policy": "x"}, r"`seed_policy` \('x'\) must be"),
    ],
)
def test_bad_input_names_the_argument(rng, kwargs, match):
    df = _households(rng, 50)
    before = df.copy(deep=True)
    kwargs = {"swap_rate": 0.5, **kwargs}
    with pytest.raises(ValueError, match=match):
        permutation_swap(df, **kwargs)
    pd.testing.assert_frame_equal(df, before)


def test_empty_data_and_wrong_type():
    df = pd.DataFrame({"k": [], "l": []})
    with pytest.raises(ValueError, match="`data` must hold at least one record"):
        permutation_swap(df, swap="k", swap_rate=0.5)
    with pytest.raises(TypeError, match="`data` must be a pandas or Dask DataFrame"):
        permutation_swap({"k": [1]}, swap="k", swap_rate=0.5)


def test_dtypes_index_and_missing_values_preserved(rng):
    df = _households(rng, 300)
    df.index = pd.Index(rng.permutation(1000)[:300] + 10_000, name="hh")
    df.loc[df.index[:20], "county"] = None
    out, release = permutation_swap(df, swap=["county"], match="size", swap_rate=0.5, rng=0)
    assert out.index.equals(df.index)
    assert (out.dtypes == df.dtypes).all()
    assert out["county"].isna().sum() == 20
    assert swapping_invariants(out, swap="county", match="size").equals(
        swapping_invariants(df, swap="county", match="size")
    )
    release.to_json()  # missing labels are JSON null


def _census_like(n, gen, *, nested=True):
    """Households in 50 states; counties numbered within their state, or (``nested``)
    across them (3,000 codes)."""
    state = gen.integers(0, 50, n).astype(np.int16)
    county = gen.integers(0, 60, n)
    return pd.DataFrame(
        {
            "state": state,
            "county": (state * 100 + county).astype(np.int32)
            if nested
            else county.astype(np.int16),
            "size": gen.integers(1, 8, n).astype(np.int8),
            "owned": gen.integers(0, 2, n).astype(np.int8),
        }
    )


def _swap_work(df, work):
    """The Python calls and peak memory of one swap of ``df``; the swap and its release."""
    with work.python_calls() as calls, work.peak_memory() as mem:
        out, release = permutation_swap(
            df, swap="county", match=["state", "size"], swap_rate=0.05, rng=1
        )
    return calls.calls, mem.peak, out, release


def test_large_table_scale(work):
    # 10**6 records: vectorised work (the Python calls do not grow with the records, an
    # array or two per record column); the time of 10**7 records is in benchmarks/
    n = 10**6
    df = _census_like(n, np.random.default_rng(0), nested=False)
    calls, peak, out, release = _swap_work(df, work)
    assert calls < n // 20
    assert peak < 512 * n
    assert int(release.value.sum()) == n


@pytest.mark.slow
def test_ten_million_records_take_the_work_of_a_million(work):
    # the calls of 10**7 records are those of 10**6 but for the chunked passes (a few
    # calls per chunk of CHUNK records: no loop over records or levels), the memory
    # grows linearly; the time is in benchmarks/
    gen = np.random.default_rng(0)
    small = _swap_work(_census_like(10**6, gen), work)
    df = _census_like(10**7, gen)
    calls, peak, out, release = _swap_work(df, work)
    more_chunks = -(-(10**7) // CHUNK) - -(-(10**6) // CHUNK)
    assert calls < small[0] + 1000 + 32 * more_chunks
    assert peak < 512 * 10**7
    assert swapping_invariants(out, swap="county", match=["state", "size"]).equals(
        swapping_invariants(df, swap="county", match=["state", "size"])
    )


# --- the source of randomness is recorded (issue 10, item 2) -------------------------


@pytest.mark.parametrize(
    "kw",
    [
        {"rng": 3},
        {"secure": False},
        {"seed_policy": "stratum", "rng": 3},
        {"seed_policy": "global"},
    ],
)
def test_seeded_and_numpy_swaps_are_marked_as_simulations(rng, kw):
    df = _households(rng, n=300)
    _, rel = permutation_swap(df, swap="county", match="size", swap_rate=0.2, **kw)
    assert rel.simulation and rel.metadata["randomness"] == "simulation"
    assert "not for publication" in rel.metadata["sampler"]
    assert Release.from_json(rel.to_json()).simulation


def test_secure_swap_is_marked_secure(rng):
    df = _households(rng, n=300)
    out, rel = permutation_swap(df, swap="county", match="size", swap_rate=0.2, secure=True)
    assert rel.metadata["randomness"] == "secure" and not rel.simulation
    assert rel.metadata["seed_policy"] == "secure"
    assert "secrets" in rel.metadata["sampler"]
    assert not Release.from_json(rel.to_json()).simulation
    rel.invariants.check(table_on_release_cells(rel, df))


def test_dask_swap_is_marked_as_a_simulation(rng):
    dd = pytest.importorskip("dask.dataframe")
    ddf = dd.from_pandas(_households(rng, n=300), npartitions=3)
    _, rel = permutation_swap(ddf, swap="county", match="size", swap_rate=0.2, rng=4)
    assert rel.simulation


def test_no_silent_simulation_of_a_swap(rng):
    """Issue 22, section 4: a pandas swap without rng is the secure one; a Dask frame, which
    has no secure swap, warns unless a seed says a simulation is intended."""
    df = _households(rng, n=300)
    _, rel = permutation_swap(df, swap="county", match="size", swap_rate=0.2)
    assert not rel.simulation and rel.metadata["seed_policy"] == "secure"
    dd = pytest.importorskip("dask.dataframe")
    ddf = dd.from_pandas(df, npartitions=3)
    with simulation_unless_seeded(None, "permutation_swap"):
        _, rel = permutation_swap(ddf, swap="county", match="size", swap_rate=0.2)
    assert rel.simulation


# --- the error of swapping (Figure 5.1): computed with the mechanism (issue 11) ---------


def _mape_of_one_run(df, out, swap, rest):
    """Footnote 22 recomputed from a swapped data set, with pandas only."""
    truth = df.groupby([swap, *rest]).size()
    swapped = out.groupby([swap, *rest]).size().reindex(truth.index, fill_value=0)
    return float((np.abs(swapped - truth) / truth).mean())


@pytest.mark.parametrize("match", [[], ["size"]])
def test_swapping_mape_is_the_error_of_permutation_swap_with_the_same_stream(rng, match):
    from invariantdp.mechanisms._permutation_swap import swapping_mape

    df = _households(rng, 800)[["county", "size", "tenure"]]
    res = swapping_mape(df, swap="county", match=match, swap_rates=[0.1, 0.6], n_runs=3, rng=7)
    assert list(res.columns) == ["swap_rate", "run", "mape"]
    assert res[["swap_rate", "run"]].values.tolist() == [
        [p, r] for p in (0.1, 0.6) for r in range(3)
    ]
    # each (rate, run) is permutation_swap (global policy) on its own spawned child of rng
    children = np.random.default_rng(7).spawn(6)
    rest = [c for c in df.columns if c not in ["county", *match]]
    for (p, _run, mape), child in zip(res.itertuples(index=False), children, strict=True):
        out, _ = permutation_swap(df, swap="county", match=match, swap_rate=p, rng=child)
        assert mape == pytest.approx(_mape_of_one_run(df, out, "county", rest), rel=1e-12)


def test_swapping_mape_is_zero_when_strata_hold_identical_records():
    from invariantdp.mechanisms._permutation_swap import swapping_mape

    # county is a function of the stratum: every derangement leaves the table unchanged
    df = pd.DataFrame({"size": [1, 1, 1, 2, 2, 2] * 20, "owned": [0, 1, 0, 1, 1, 0] * 20})
    df["county"] = df["size"].map({1: "a", 2: "b"})
    res = swapping_mape(df, swap="county", match="size", swap_rates=[0.5, 0.9], n_runs=4, rng=0)
    assert (res["mape"] == 0).all()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"swap_rates": []}, ValueError, "`swap_rates` must hold at least one rate"),
        ({"swap_rates": [0.5, 1.0]}, ValueError, r"`swap_rates` \(1.0\) must be in \(0, 1\)"),
        ({"n_runs": 0}, ValueError, "`n_runs`"),
        ({"swap": "nope"}, ValueError, r"`swap` names unknown column\(s\) \['nope'\]"),
    ],
)
def test_swapping_mape_bad_input(rng, kwargs, error, match):
    from invariantdp.mechanisms._permutation_swap import swapping_mape

    kw = {"swap": "county", "swap_rates": [0.5], "n_runs": 2, **kwargs}
    with pytest.raises(error, match=match):
        swapping_mape(_households(rng, 50), **kw)


def test_plotting_swapping_mape_is_a_deprecated_alias(rng):
    import invariantdp.plotting as plotting
    from invariantdp.mechanisms._permutation_swap import swapping_mape

    df = _households(rng, 300)
    kw = {"swap": "county", "match": "size", "swap_rates": [0.2, 0.7], "n_runs": 2, "rng": 3}
    with pytest.warns(DeprecationWarning, match=r"invariantdp.plotting.swapping_mape is dep") as w:
        old = plotting.swapping_mape(df, **kw)
    assert "use invariantdp.mechanisms._permutation_swap.swapping_mape" in str(w[0].message)
    assert w[0].filename == __file__
    pd.testing.assert_frame_equal(old, swapping_mape(df, **kw))
    assert "swapping_mape" not in plotting.__all__


def test_plot_swapping_mape_draws_the_results():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from invariantdp.plotting import plot_swapping_mape

    res = pd.DataFrame({"swap_rate": [0.5, 0.1, 0.5, 0.1], "mape": [0.1, 0.02, 0.12, 0.03]})
    ax = plot_swapping_mape(res)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["10%", "50%"]
    plt.close(ax.figure)
    with pytest.raises(ValueError, match=r"`results` lacks the column\(s\) \['mape'\]"):
        plot_swapping_mape(res[["swap_rate"]])


def test_swap_result_is_a_release_and_saves_as_one(tmp_path):
    df = pd.DataFrame({"county": list("aabbab"), "owned": [1, 0, 1, 0, 0, 1]})
    res = permutation_swap(df, swap="county", swap_rate=0.5, rng=3)
    assert isinstance(res, Release) and isinstance(res, SwapResult)
    out, release = res  # unpacks like the former named tuple (data, release)
    assert out is res.data and release is res
    assert list(out.columns) == ["county", "owned"]
    loaded = Release.load(res.save(tmp_path / "swap.json"))
    assert type(loaded) is Release and loaded == res
    assert "permutation_swap" in repr(res) and "Differentially private release" in res.summary()


def test_swap_result_attribute_release_is_deprecated():
    df = pd.DataFrame({"county": list("aabbab"), "owned": [1, 0, 1, 0, 0, 1]})
    res = permutation_swap(df, swap="county", swap_rate=0.5, rng=3)
    with pytest.warns(DeprecationWarning, match=r"`SwapResult.release` is deprecated"):
        part = res.release
    assert type(part) is Release and part == res


def test_an_identifier_as_swap_or_match_variable_warns_and_categories_do_not():
    import warnings

    gen = np.random.default_rng(0)
    n = 1000
    df = pd.DataFrame(
        {
            "state": gen.integers(0, 3, n),
            "county": gen.integers(0, 20, n),
            "person_id": np.arange(n),
            "owned": gen.integers(0, 2, n),
        }
    )
    with pytest.warns(UserWarning, match=r"`match` columns \['person_id'\] have 1000 levels"):
        permutation_swap(df, swap="county", match="person_id", swap_rate=0.1, rng=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        permutation_swap(
            df.drop(columns="person_id"), swap="county", match="state", swap_rate=0.1, rng=1
        )
