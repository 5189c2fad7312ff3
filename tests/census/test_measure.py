"""The curator's measure(): discrete Gaussian noise with sigma^2 = 1/rho, exact invariants."""

import warnings

import numpy as np
import pandas as pd
import pytest

from invariantdp.census import PL94, Geography, Schema, measure
from invariantdp.census._curator import histograms
from invariantdp.distributions import discrete_gaussian
from invariantdp.exceptions import InvariantDPError
from invariantdp.families import _builtin_families

SCHEMA = Schema({"sex": ["F", "M"], "age": 3})
GEO = Geography({"State": 2, "County": 5})


def units_of(counties=40):
    """The declared counties (public): those the counts below list."""
    return [f"01{c:03d}" for c in range(counties)]


def counts(rng, counties=40):
    rows = [
        (f"01{c:03d}", s, a, int(rng.poisson(30)))
        for c in range(counties)
        for s in ("F", "M")
        for a in range(3)
    ]
    return pd.DataFrame(rows, columns=["geocode", "sex", "age", "count"])


def test_noise_is_the_discrete_gaussian_with_variance_parameter_one_over_rho(rng):
    data = counts(rng, counties=400)
    nm = measure(
        data, SCHEMA, GEO, {"County": {"detailed": 0.5}}, secure=False, rng=5,
        units=units_of(400),
    )  # fmt: skip
    _, hists = histograms(data, SCHEMA, GEO, units_of(400))
    noise = nm.measurements[("County", "detailed")].values - hists[1].reshape(400, -1)
    assert np.all(noise == np.round(noise))
    assert nm.measurements[("County", "detailed")].variance[0] == 2.0
    n = noise.size
    sd = np.sqrt(float(discrete_gaussian.var(np.sqrt(2.0))))
    # mean within 4 standard errors; variance within 4 standard errors (kurtosis ~3)
    assert abs(noise.mean()) < 4 * sd / np.sqrt(n)
    assert abs(noise.var() - sd**2) < 4 * sd**2 * np.sqrt(2.0 / n)
    assert nm.randomness == "simulation"


def test_invariants_are_exact_and_levels_aggregate_by_geocode_prefix(rng):
    data = counts(rng)
    wl = {"State": {"total": 1.0}, "County": {"sex": 1.0}}
    nm = measure(
        data, SCHEMA, GEO, wl, invariants={"State": "total", "County": ["age"]}, secure=False,
        rng=1, units=units_of(),
    )  # fmt: skip
    assert nm.invariants[("State", "total")].values[0, 0] == data["count"].sum()
    by_age = data.groupby(["geocode", "age"])["count"].sum().unstack().to_numpy()
    assert np.array_equal(nm.invariants[("County", "age")].values, by_age)
    assert nm.geocodes("State").tolist() == ["01"]


def test_microdata_and_counts_give_the_same_histograms(rng):
    data = counts(rng, counties=3)
    micro = data.loc[data.index.repeat(data["count"])].drop(columns="count")
    _, a = histograms(data, SCHEMA, GEO, units_of(3))
    _, b = histograms(micro, SCHEMA, GEO, units_of(3))
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_secure_noise_comes_from_the_exact_sampler(rng, monkeypatch):
    calls = []
    real = _builtin_families.sample_discrete_gaussian_exact

    def spy(sigma2, size=None, rng=None):
        calls.append((sigma2, size, type(rng).__name__))
        return real(sigma2, size=size, rng=rng)

    monkeypatch.setattr(_builtin_families, "sample_discrete_gaussian_exact", spy)
    nm = measure(
        counts(rng, counties=2), SCHEMA, GEO, {"County": {"total": 0.25}}, units=units_of(2)
    )
    assert nm.randomness == "secure"
    from fractions import Fraction

    assert calls == [(Fraction(4), 2, "SecureGenerator")]  # sigma^2 = 1/rho exactly


def test_secure_refuses_a_seed():
    with pytest.raises(InvariantDPError, match="`rng` must be None when `secure=True`"):
        measure(
            counts(np.random.default_rng(0)), SCHEMA, GEO, {"County": {"total": 1.0}},
            secure=True, rng=1, units=units_of(),
        )  # fmt: skip


@pytest.mark.parametrize(
    "workload, message",
    [
        ({}, "must map geographic levels"),
        ({"Tract": {"total": 1.0}}, "not a level of the geography"),
        ({"County": {"race": 1.0}}, "not a query of the schema"),
        ({"County": {"total": 0.0}}, r"`workload\['County'\]\['total'\]` \(0.0\) must be > 0"),
        ({"County": 1.0}, "must map queries to rho"),
    ],
)
def test_workload_rules(workload, message):
    with pytest.raises(InvariantDPError, match=message):
        measure(
            counts(np.random.default_rng(0)), SCHEMA, GEO, workload, secure=False, rng=1,
            units=units_of(),
        )  # fmt: skip


def test_bad_counts_are_refused_without_echoing_confidential_values():
    base = counts(np.random.default_rng(0), counties=2)
    wl = {"County": {"total": 1.0}}

    def run(data):
        return measure(data, SCHEMA, GEO, wl, secure=False, rng=1, units=units_of(2))

    bad = base.copy()
    bad.loc[3, "geocode"] = "0100"
    with pytest.raises(
        InvariantDPError, match="row 3, column `geocode` must hold geocodes .* declared `units`"
    ) as e:
        run(bad)
    assert "0100" not in str(e.value)
    bad = base.copy()
    bad.loc[2, "count"] = -7
    with pytest.raises(InvariantDPError, match="`count` must hold non-negative integers") as e:
        run(bad)
    assert "-7" not in str(e.value)
    bad = base.copy()
    bad.loc[1, "sex"] = "X"
    with pytest.raises(InvariantDPError, match="column `sex` must hold levels of the schema") as e:
        run(bad)
    assert "'X'" not in str(e.value)
    with pytest.raises(InvariantDPError, match="lacks the column\\(s\\) age"):
        run(base.drop(columns="age"))


# ---------------------------------------------------------------------------
# the units are public input; every answer keeps its noise
# ---------------------------------------------------------------------------

TWO = (Schema({"sex": 2}), Geography({"A": 1, "B": 2}))


def test_units_are_public_input_never_read_from_the_data():
    """Moving the only person of block 12 does not remove block 12 from any table."""
    d0 = pd.DataFrame({"geocode": ["11", "11", "12"], "sex": [0, 1, 1]})
    d1 = d0.assign(geocode=["11"] * 3)
    wl = {"A": {"total": 1.0}, "B": {"detailed": 0.5, "total": 1.0}}
    got = [measure(d, *TWO, wl, units=["11", "12"]) for d in (d0, d1)]
    for level in ("A", "B"):
        assert got[0].geocodes(level).tolist() == got[1].geocodes(level).tolist()
    assert got[0].geocodes("B").tolist() == ["11", "12"]
    for key in got[0].measurements:
        assert got[0].measurements[key].values.shape == got[1].measurements[key].values.shape
    # a declared unit without records is measured (its count is 0)
    nm = measure(d1, *TWO, wl, units=["11", "12", "13"], secure=False, rng=0)
    assert nm.geocodes("B").tolist() == ["11", "12", "13"]
    with pytest.raises(TypeError, match="`units` must be given.*never read from the data"):
        measure(d0, *TWO, wl)


def test_a_record_outside_the_declared_units_is_refused_before_any_noise(monkeypatch):
    drawn = []
    monkeypatch.setattr(_builtin_families, "sample_discrete_gaussian_exact", drawn.append)
    wl = {"B": {"detailed": 0.5}}
    messages = set()
    for codes in (["11", "19", "12"], ["19", "11", "12"], ["11", "12", 12], ["11", "12\0", "12"]):
        data = pd.DataFrame({"geocode": codes, "sex": [0, 1, 1]})
        with pytest.raises(InvariantDPError, match="outside the declared domain") as e:
            measure(data, *TWO, wl, units=["11", "12"])
        messages.add(str(e.value))
        assert "19" not in str(e.value) and "row" not in str(e.value)
    assert drawn == []
    assert len(messages) == 1  # the message does not depend on which record is outside


@pytest.mark.parametrize(
    "units, message",
    [
        (["11", "11"], "lists '11' more than once"),
        (["11", "1x"], "holds '1x', not a string of 2 digits"),
        ("11", "one-dimensional list of geocodes"),
        ([], "at least one unit"),
        ({"A": ["1"]}, "must list the units of the finest level `B`"),
        ({"A": ["1"], "B": ["11", "21"]}, "unit '21' of level `B` has no parent"),
        ({"C": ["1"]}, "not a level of the geography"),
    ],
)
def test_declared_units_rules(units, message):
    data = pd.DataFrame({"geocode": ["11"], "sex": [0]})
    with pytest.raises(InvariantDPError, match=message):
        measure(data, *TWO, {"B": {"total": 1.0}}, secure=False, rng=0, units=units)


def test_declared_units_by_level_keep_units_without_children():
    data = pd.DataFrame({"geocode": ["11"], "sex": [0], "count": [4]})
    nm = measure(
        data, *TWO, {"A": {"total": 1.0}}, invariants={"A": "total"}, secure=False, rng=0,
        units={"A": ["1", "2"], "B": ["11"]},
    )  # fmt: skip
    assert nm.geocodes("A").tolist() == ["1", "2"]
    assert nm.invariants[("A", "total")].values.ravel().tolist() == [4.0, 0.0]


def test_huge_counts_keep_their_noise():
    """2**60 + 128 and 2**60 + 129 are clamped to 2**52 - 1: the noise is never rounded away."""
    limit = 2**52 - 1
    wl = {"A": {"total": 0.02}, "B": {"detailed": 0.02}}
    out = []
    for count in (2**60 + 128, 2**60 + 129, limit, 5):
        data = pd.DataFrame({"geocode": ["11"], "sex": [0], "count": [count]})
        nm = measure(data, *TWO, wl, invariants={"A": "total"}, secure=False, rng=3, units=["11"])
        out.append(nm)
    truth = [limit, limit, limit, 5]
    detailed = [nm.measurements[("B", "detailed")].values[0, 0] for nm in out]
    noise = [v - t for v, t in zip(detailed, truth, strict=True)]
    # the same seed draws the same noise: each release is its clamped count plus that noise
    assert len(set(noise)) == 1 and noise[0] != 0
    for nm in out[:3]:
        assert nm.invariants[("A", "total")].values[0, 0] == limit
        assert (
            nm.measurements[("A", "total")].values[0, 0]
            == out[0].measurements[("A", "total")].values[0, 0]
        )
        assert nm.measurements[("A", "total")].values[0, 0] - limit == (
            out[3].measurements[("A", "total")].values[0, 0] - 5
        )


def test_rho_too_small_for_an_exact_sum_is_refused():
    data = pd.DataFrame({"geocode": ["11"], "sex": [0]})
    with pytest.raises(InvariantDPError, match=r"must be at least 2\*\*-92"):
        measure(data, *TWO, {"B": {"total": 2.0**-93}}, secure=False, rng=0, units=["11"])


# -- the 2020 production strategy and the Bureau's constraints ---------------------------------


def test_the_2020_strategy_is_the_bureaus_production_configuration():
    from fractions import Fraction as F

    from invariantdp.census import PL94_2020_STRATEGY, CensusStrategy

    persons, units = PL94_2020_STRATEGY.persons, PL94_2020_STRATEGY.units
    # person_US.ini: global_scale 339/542; the units certificate: 12343/3379 (rho = 1/scale^2)
    assert persons.rho == F(293764, 114921) and units.rho == F(11417641, 152349649)
    assert list(persons) == ["US", "State", "County", "Tract", "Block_Group", "Block"]
    assert [persons.level_shares[lev] * 4099 for lev in persons] == [104, 1440, 447, 687, 1256, 165]
    assert [units.level_shares[lev] for lev in units] == [
        F(1, 205),
        F(1, 205),
        F(7, 82),
        F(364, 1025),
        F(1759, 4100),
        F(99, 820),
    ]
    assert "total" not in persons["US"] and len(persons["US"]) == 10
    assert all(len(persons[lev]) == 11 for lev in list(persons)[1:])
    assert persons.query_shares["Tract"]["hispanic * cenrace"] == F(1933, 4102)
    assert persons.query_shares["State"]["votingage * hispanic * cenrace"] == F(2, 241)
    assert persons["County"]["total"] == F(293764, 114921) * F(447, 4099) * F(3126, 4097)
    assert persons.sigma_sq("Block", "detailed") == 1 / (persons.rho * F(165, 4099) * F(3945, 4097))
    assert sum(r for lev in persons for r in persons[lev].values()) == persons.rho
    assert all(list(units[lev]) == ["detailed"] for lev in units)
    with pytest.raises(InvariantDPError, match=r"`level_shares` sum to 3/4, not 1"):
        CensusStrategy(1, {"A": F(3, 4)}, {"A": {"total": 1}})
    with pytest.raises(InvariantDPError, match="must be an exact fraction"):
        CensusStrategy(1, {"A": 0.5, "B": 0.5}, {"A": {"total": 1}, "B": {"total": 1}})


def _markdown_tables(text: str) -> list:
    """The pipe tables of a markdown page: a list of rows (lists of cells), header first."""
    tables, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(set(c) <= set("-:") for c in cells):
                current.append(cells)
        elif current:
            tables.append(current)
            current = []
    return tables


def test_the_layout_reference_tables_the_2020_strategy_as_the_code_holds_it():
    from fractions import Fraction as F
    from pathlib import Path

    from invariantdp.census import PL94_2020_STRATEGY

    persons = PL94_2020_STRATEGY.persons
    page = Path(__file__).resolve().parents[2] / "docs" / "guide" / "nmf_layout.md"
    levels = ["US", "State", "County", "Tract", "Block_Group", "Block"]
    grids = [t for t in _markdown_tables(page.read_text(encoding="utf-8"))
             if t[0] == ["query", *levels]]  # fmt: skip
    assert len(grids) == 2, "the page tables the query shares and the sigma^2 of every cell"
    shares, sigmas = grids
    seen = set()
    for row in shares[1:]:
        query = row[0].strip("`")
        seen.add(query)
        for level, cell in zip(levels, row[1:], strict=True):
            want = persons.query_shares[level].get(query)
            assert (cell == "—") if want is None else F(cell) == want, (level, query, cell)
    assert seen == set(persons.query_shares["State"])
    seen = set()
    for row in sigmas[1:]:
        for query in (q.strip().strip("`") for q in row[0].split(",")):
            seen.add(query)
            for level, cell in zip(levels, row[1:], strict=True):
                if query not in persons.query_shares[level]:
                    assert cell == "—", (level, query, cell)
                    continue
                assert cell == f"{float(persons.sigma_sq(level, query)):.4g}", (level, query)
    assert seen == set(persons.query_shares["State"])


def _release_counts(rng):
    from .nmf_layout import WIDTH, facilities, person_histograms, spine

    units = spine(("044",), counties=1, tracts=2, groups=2, blocks=2)
    fac = facilities(rng, units["Block"])
    hist = person_histograms(rng, units["Block"], fac)
    block, *cells = np.nonzero(hist)
    counts = pd.DataFrame({"geocode": np.asarray(units["Block"], dtype=object)[block]})
    for name, c in zip(PL94.names, cells, strict=True):
        counts[name] = c
    counts["count"] = hist[(block, *cells)]
    f_block, f_type = np.nonzero(fac)
    fac_frame = pd.DataFrame(
        {
            "geocode": np.asarray(units["Block"], dtype=object)[f_block],
            "hhgq": f_type,
            "count": fac[f_block, f_type],
        }
    )
    return units, hist, fac, counts, fac_frame, Geography(WIDTH)


def test_measure_simulates_a_2020_style_release_with_the_bureaus_constraints(tmp_path):
    from invariantdp.census import PL94_2020_STRATEGY, read_nmf

    from .nmf_layout import query_answer
    from .test_nmf_release import bureau_parse

    units, hist, fac, counts, fac_frame, geo = _release_counts(np.random.default_rng(5))
    strategy = PL94_2020_STRATEGY.persons
    nm = measure(
        counts,
        PL94,
        geo,
        strategy,
        invariants={"US": ["total"]},
        facilities=fac_frame,
        secure=False,
        rng=3,
        units=units,
    )
    order = np.argsort(units["Block"])
    for level in strategy:
        for query, rho in strategy[level].items():
            table = nm.measurements[(level, query)]
            assert table.variance.tolist() == [float(1 / rho)] * table.units.size
        blocks = nm.measurements[("Block", "hhinstlevels")]
    truth, _, _ = query_answer(hist[order], "hhinstlevels")
    sd = float(strategy.sigma_sq("Block", "hhinstlevels")) ** 0.5
    assert blocks.values.shape == truth.shape and np.all(np.abs(blocks.values - truth) < 12 * sd)
    # the constraints, from the facility counts (block level; summed above)
    f = fac[order]
    z = nm.zeros[("Block", "hhgq")]
    full = np.zeros(f.shape, dtype=bool)
    full[z.units] = z.values
    assert np.array_equal(full, f == 0)
    ub = nm.inequalities[("Block", "hhgq", "<=")]
    assert np.array_equal(ub.values, 99999.0 * f[ub.units])
    lb = nm.inequalities[("Block", "hhgq", ">=")]
    assert np.array_equal(lb.values[:, 1:], f[lb.units][:, 1:]) and not lb.values[:, 0].any()
    assert nm.zeros[("County", "gqNursingTotal * nonvoting")].values.all()
    assert nm.invariants[("US", "total")].values[0, 0] == hist.sum()
    # written in the release layout, accepted by the Bureau's reader logic, read back whole
    nm.to_nmf(tmp_path / "US_Person_PL_PROD")
    nodes, _ = bureau_parse(tmp_path / "US_Person_PL_PROD", list(strategy))
    assert sorted(nodes["Block"]) == sorted(units["Block"])
    with pytest.warns(UserWarning, match="kept but not used"):
        back = read_nmf(tmp_path / "US_Person_PL_PROD")
    assert back.measurements.keys() == nm.measurements.keys()
    assert back.zeros.keys() == nm.zeros.keys()
    # counts that break the constraints are refused before any noise
    bad = counts.copy()
    nursing = np.flatnonzero(bad["hhgq"].to_numpy() == 3)[0]
    bad.loc[nursing, "votingage"] = 0
    with pytest.raises(InvariantDPError, match="do not satisfy the constraints that `facilities`"):
        measure(bad, PL94, geo, strategy, facilities=fac_frame, secure=False, rng=3, units=units)


def test_a_seed_without_secure_makes_a_simulation_as_the_mechanisms_do():
    # the mechanisms' rule: secure by default, a seed or a Generator asks for a simulation
    data = counts(np.random.default_rng(2), counties=5)
    wl = {"County": {"detailed": 1.0}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no SimulationWarning: the seed says it is intended
        seeded = measure(data, SCHEMA, GEO, wl, rng=1, units=units_of(5))
        from_gen = measure(data, SCHEMA, GEO, wl, rng=np.random.default_rng(1), units=units_of(5))
    explicit = measure(data, SCHEMA, GEO, wl, secure=False, rng=1, units=units_of(5))
    assert seeded.randomness == from_gen.randomness == "simulation"
    key = ("County", "detailed")
    np.testing.assert_array_equal(
        seeded.measurements[key].values, explicit.measurements[key].values
    )
    np.testing.assert_array_equal(
        from_gen.measurements[key].values, explicit.measurements[key].values
    )
    assert measure(data, SCHEMA, GEO, wl, units=units_of(5)).randomness == "secure"
    with pytest.raises(InvariantDPError, match="rng"):
        measure(data, SCHEMA, GEO, wl, secure=True, rng=1, units=units_of(5))
    with pytest.raises(TypeError, match="`secure`"):
        measure(data, SCHEMA, GEO, wl, secure=1, units=units_of(5))
