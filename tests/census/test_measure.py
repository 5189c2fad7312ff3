"""The curator's measure(): discrete Gaussian noise with sigma^2 = 1/rho, exact invariants."""

import numpy as np
import pandas as pd
import pytest

from invariantdp.census import Geography, Schema, measure
from invariantdp.census._curator import histograms
from invariantdp.distributions import discrete_gaussian
from invariantdp.exceptions import InvariantDPError
from invariantdp.families import _builtin_families

SCHEMA = Schema({"sex": ["F", "M"], "age": 3})
GEO = Geography({"State": 2, "County": 5})


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
    nm = measure(data, SCHEMA, GEO, {"County": {"detailed": 0.5}}, secure=False, rng=5)
    _, hists = histograms(data, SCHEMA, GEO)
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
        data, SCHEMA, GEO, wl, invariants={"State": "total", "County": ["age"]}, secure=False, rng=1
    )
    assert nm.invariants[("State", "total")].values[0, 0] == data["count"].sum()
    by_age = data.groupby(["geocode", "age"])["count"].sum().unstack().to_numpy()
    assert np.array_equal(nm.invariants[("County", "age")].values, by_age)
    assert nm.geocodes("State").tolist() == ["01"]


def test_microdata_and_counts_give_the_same_histograms(rng):
    data = counts(rng, counties=3)
    micro = data.loc[data.index.repeat(data["count"])].drop(columns="count")
    _, a = histograms(data, SCHEMA, GEO)
    _, b = histograms(micro, SCHEMA, GEO)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_secure_noise_comes_from_the_exact_sampler(rng, monkeypatch):
    calls = []
    real = _builtin_families.sample_discrete_gaussian_exact

    def spy(sigma2, size=None, rng=None):
        calls.append((sigma2, size, type(rng).__name__))
        return real(sigma2, size=size, rng=rng)

    monkeypatch.setattr(_builtin_families, "sample_discrete_gaussian_exact", spy)
    nm = measure(counts(rng, counties=2), SCHEMA, GEO, {"County": {"total": 0.25}})
    assert nm.randomness == "secure"
    from fractions import Fraction

    assert calls == [(Fraction(4), 2, "SecureGenerator")]  # sigma^2 = 1/rho exactly


def test_secure_refuses_a_seed():
    with pytest.raises(InvariantDPError, match="`rng` must be None when `secure=True`"):
        measure(counts(np.random.default_rng(0)), SCHEMA, GEO, {"County": {"total": 1.0}}, rng=1)


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
        measure(counts(np.random.default_rng(0)), SCHEMA, GEO, workload, secure=False, rng=1)


def test_bad_counts_are_refused_without_echoing_confidential_values():
    base = counts(np.random.default_rng(0), counties=2)
    wl = {"County": {"total": 1.0}}
    bad = base.copy()
    bad.loc[3, "geocode"] = "0100"
    with pytest.raises(
        InvariantDPError, match="row 3, column `geocode`: must be a string of 5"
    ) as e:
        measure(bad, SCHEMA, GEO, wl, secure=False, rng=1)
    assert "0100" not in str(e.value)
    bad = base.copy()
    bad.loc[2, "count"] = -7
    with pytest.raises(InvariantDPError, match="`count` must hold non-negative integers") as e:
        measure(bad, SCHEMA, GEO, wl, secure=False, rng=1)
    assert "-7" not in str(e.value)
    bad = base.copy()
    bad.loc[1, "sex"] = "X"
    with pytest.raises(InvariantDPError, match="column `sex` must hold levels of the schema") as e:
        measure(bad, SCHEMA, GEO, wl, secure=False, rng=1)
    assert "'X'" not in str(e.value)
    with pytest.raises(InvariantDPError, match="lacks the column\\(s\\) age"):
        measure(base.drop(columns="age"), SCHEMA, GEO, wl, secure=False, rng=1)
