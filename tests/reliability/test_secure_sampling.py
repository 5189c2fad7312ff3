"""``secure=True``: exact integer sampling from ``secrets`` for production releases.

Goodness of fit against the exact laws (chi-square on the integers, or on
equiprobable bins for Tulap).  Secure draws cannot be seeded, so those tests
use a small level (1e-4); the same exact algorithms are also checked with a
seeded numpy generator, deterministically.
"""

import itertools
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from invariantdp.distributions import (
    discrete_gaussian as dg_law,
)
from invariantdp.distributions import (
    discrete_laplace as dl_law,
)
from invariantdp.distributions import (
    sample_discrete_gaussian_exact,
    sample_discrete_laplace_exact,
    tulap_from_privacy,
)
from invariantdp.mechanisms import (
    discrete_gaussian_mechanism,
    discrete_laplace_mechanism,
    gaussian_mechanism,
    laplace_mechanism,
    odds_ratio_release,
    permutation_swap,
    tulap_mechanism,
)
from invariantdp.secure import SecureGenerator, random_source

LEVEL = 1e-4  # secure draws are not reproducible: a failure is a 1-in-10^4 event at most


def _chi2_integers(draws, pmf, min_expected=5.0):
    """Chi-square p-value of integer draws against ``pmf``, pooling sparse tails."""
    draws = np.asarray(draws)
    lo, hi = int(draws.min()) - 1, int(draws.max()) + 1
    k = np.arange(lo, hi + 1)
    n = draws.size
    expected = n * pmf(k)
    observed = np.bincount(draws - lo, minlength=k.size).astype(float)
    # pool the tails into the outermost cells with enough expected counts
    cdf_lo = n * pmf(np.arange(lo - 200, lo)).sum()
    cdf_hi = n * pmf(np.arange(hi + 1, hi + 201)).sum()
    expected[0] += cdf_lo
    expected[-1] += cdf_hi
    keep = expected >= min_expected
    first, last = np.flatnonzero(keep)[[0, -1]]
    e = np.concatenate(
        [[expected[: first + 1].sum()], expected[first + 1 : last], [expected[last:].sum()]]
    )
    o = np.concatenate(
        [[observed[: first + 1].sum()], observed[first + 1 : last], [observed[last:].sum()]]
    )
    return stats.chisquare(o, e * o.sum() / e.sum()).pvalue


def test_exact_discrete_laplace_sampler_fits_with_a_seed():
    draws = sample_discrete_laplace_exact(1 / Fraction(0.7), size=20_000, rng=1)
    assert _chi2_integers(draws, lambda k: dl_law.pmf(k, 1 / 0.7)) > 0.01


@pytest.mark.parametrize("epsilon, sensitivity", [(0.7, 1), (1.3, 3)])
def test_secure_discrete_laplace_fits_the_exact_law(epsilon, sensitivity):
    rel = discrete_laplace_mechanism(
        np.zeros(20_000), epsilon=epsilon, sensitivity=sensitivity, secure=True
    )
    assert "secure" in rel.metadata["sampler"] and rel.metadata["randomness"] == "secure"
    t = rel.noise.params["scale"]
    assert _chi2_integers(rel.value.astype(np.int64), lambda k: dl_law.pmf(k, t)) > LEVEL


@pytest.mark.parametrize("kw", [{"rho": 0.1}, {"mu": 0.4}])
def test_secure_discrete_gaussian_fits_the_exact_law(kw):
    rel = discrete_gaussian_mechanism(np.zeros(15_000), secure=True, **kw)
    sigma = rel.noise.params["sigma"]
    assert _chi2_integers(rel.value.astype(np.int64), lambda k: dg_law.pmf(k, sigma)) > LEVEL


def test_exact_discrete_gaussian_with_secure_generator():
    draws = sample_discrete_gaussian_exact(Fraction(9, 4), size=10_000, rng=SecureGenerator())
    assert _chi2_integers(draws, lambda k: dg_law.pmf(k, 1.5)) > LEVEL


@pytest.mark.parametrize("delta", [0.0, 0.05])
def test_secure_tulap_fits_the_exact_law(delta):
    rel = tulap_mechanism(np.zeros(15_000), epsilon=1.0, delta=delta, secure=True)
    law = tulap_from_privacy(1.0, delta)
    # 40 equiprobable bins of the exact law
    edges = law.ppf(np.linspace(0, 1, 41))
    observed = np.histogram(rel.value, bins=edges)[0]
    assert stats.chisquare(observed).pvalue > LEVEL
    if delta > 0:
        lo, hi = law.support()
        assert lo <= rel.value.min() and rel.value.max() <= hi


def test_secure_tulap_keeps_integer_data_exact():
    """For integer data the release is (x + G) + U with |U| < 1/2: rounding gives x + G."""
    x = np.array([10**12, 3, 0])
    rel = tulap_mechanism(x, epsilon=50.0, secure=True)  # G = 0 with overwhelming probability
    assert np.array_equal(np.round(rel.value), x)


def test_secure_odds_ratio_release():
    rels = [odds_ratio_release([[12, 5], [4, 9]], epsilon=1.0, secure=True) for _ in range(3000)]
    u = np.array([float(r.value) for r in rels]) - 12
    edges = tulap_from_privacy(1.0).ppf(np.linspace(0, 1, 21))
    assert stats.chisquare(np.histogram(u, bins=edges)[0]).pvalue > LEVEL


def _swap_law(k, p):
    """Exact law of the swapped values of one stratum (Algorithm 5.1) by enumeration."""
    n = len(k)
    law = {}
    subsets = [s for r in range(n + 1) if r != 1 for s in itertools.combinations(range(n), r)]
    weights = np.array([p ** len(s) * (1 - p) ** (n - len(s)) for s in subsets])
    weights /= weights.sum()
    for s, w in zip(subsets, weights, strict=True):
        derangements = [
            d
            for d in itertools.permutations(range(len(s)))
            if all(d[i] != i for i in range(len(s)))
        ] or [()]
        for d in derangements:
            z = list(k)
            for i, di in enumerate(d):
                z[s[i]] = k[s[di]]
            law[tuple(z)] = law.get(tuple(z), 0.0) + w / len(derangements)
    return law


def test_secure_swapping_fits_the_exact_law():
    k = ["A", "B", "B", "C"]
    strata = 5000
    df = pd.DataFrame(
        {
            "stratum": np.repeat(np.arange(strata), 4),
            "k": np.tile(k, strata),
            "l": np.tile([1, 2, 3, 4], strata),
        }
    )
    out, rel = permutation_swap(df, swap="k", match="stratum", swap_rate=0.3, secure=True)
    assert rel.metadata["seed_policy"] == "secure"
    z = out["k"].to_numpy().reshape(strata, 4)
    law = _swap_law(k, 0.3)
    keys = sorted(law)
    counts = pd.Series([tuple(r) for r in z]).value_counts()
    assert set(counts.index) <= set(keys)
    observed = np.array([counts.get(key, 0) for key in keys])
    expected = np.array([law[key] for key in keys]) * strata
    assert stats.chisquare(observed, expected).pvalue > LEVEL
    # the invariants are kept exactly
    assert (
        out.groupby("stratum")["k"].apply(sorted) == df.groupby("stratum")["k"].apply(sorted)
    ).all()


@pytest.mark.parametrize(
    "call",
    [
        lambda: discrete_laplace_mechanism([1, 2], epsilon=1.0, secure=True, rng=1),
        lambda: discrete_gaussian_mechanism(
            [1, 2], rho=1.0, secure=True, rng=np.random.default_rng(0)
        ),
        lambda: tulap_mechanism([1.0], epsilon=1.0, secure=True, rng=0),
        lambda: odds_ratio_release([[1, 2], [3, 4]], epsilon=1.0, secure=True, rng=0),
        lambda: permutation_swap(
            pd.DataFrame({"a": [1, 2], "b": [3, 4]}), swap="a", swap_rate=0.5, secure=True, rng=0
        ),
    ],
)
def test_secure_with_rng_is_refused(call):
    with pytest.raises(ValueError, match=r"`rng` must be None when `secure=True`"):
        call()


def test_secure_argument_checks():
    with pytest.raises(TypeError, match="`secure` must be None, True or False"):
        discrete_laplace_mechanism([1], epsilon=1.0, secure="yes")
    with pytest.raises(TypeError, match="`secure` must be None, True or False"):
        permutation_swap(
            pd.DataFrame({"a": [1, 2], "b": [3, 4]}), swap="a", swap_rate=0.5, secure=1
        )
    with pytest.raises(ValueError, match="`seed_policy`"):
        permutation_swap(
            pd.DataFrame({"a": [1, 2], "b": [3, 4]}),
            swap="a",
            swap_rate=0.5,
            secure=True,
            seed_policy="global",
        )
    assert isinstance(random_source(None, True), SecureGenerator)
    assert isinstance(random_source(3, False), np.random.Generator)
    with pytest.raises(ValueError, match="`high`"):
        SecureGenerator().integers(5, 5)


# ---------------------------------------------------------------------------
# grid samplers of laplace / gaussian (secure=True) and the exact Tulap
# ---------------------------------------------------------------------------


def _one_changed_coordinate(n):
    """A sensitivity space in which neighbours differ in the first coordinate only."""
    S = np.zeros((1, n))
    S[0, 0] = 1.0
    return S


def test_secure_laplace_has_the_exact_grid_law():
    n = 20_000
    rel = laplace_mechanism(
        np.zeros(n), epsilon=1.0, sensitivity=_one_changed_coordinate(n), grid=0.25, secure=True
    )
    # grid sensitivity floor(1 / 0.25) + 1 = 5: value / 0.25 ~ Lap_Z(5) exactly
    assert rel.noise.params == {"grid": 0.25, "scale": 1.25}
    k = rel.value / 0.25
    assert np.all(k == np.round(k))
    assert _chi2_integers(k.astype(np.int64), lambda j: dl_law.pmf(j, 5.0)) > LEVEL
    law = rel.noise.distribution()
    assert law.pmf(0.25) == pytest.approx(dl_law.pmf(1, 5.0))


def test_secure_gaussian_has_the_exact_grid_law():
    n = 15_000
    rel = gaussian_mechanism(
        np.zeros(n), mu=1.0, sensitivity=_one_changed_coordinate(n), grid=0.25, secure=True
    )
    # (1 / 0.25 + 1)^2 = 25: sigma^2 = 25 grid steps^2 for mu = 1
    assert rel.metadata["grid_sensitivity_squared"] == 25
    assert rel.noise.params["sigma"] == pytest.approx(1.25)
    k = (rel.value / 0.25).astype(np.int64)
    assert _chi2_integers(k, lambda j: dg_law.pmf(j, 5.0)) > LEVEL


def _chi2_by_law(values, law, bins=40):
    """Chi-square of ``values`` on the equiprobable bins of a (lattice) law, by its cdf."""
    edges = np.unique(law.ppf(np.linspace(0.0, 1.0, bins + 1)[1:-1]))
    cdf = np.concatenate([[0.0], law.cdf(edges), [1.0]])
    observed = np.bincount(np.searchsorted(edges, values, side="left"), minlength=cdf.size - 1)
    return stats.chisquare(observed, np.diff(cdf) * values.size).pvalue


def test_secure_laplace_default_grid_fits_its_recorded_law():
    n = 20_000
    rel = laplace_mechanism(
        np.zeros(n), epsilon=0.5, sensitivity=_one_changed_coordinate(n), secure=True
    )
    assert _chi2_by_law(rel.value, rel.noise.distribution()) > LEVEL
    assert stats.kstest(rel.value, stats.laplace(scale=2.0).cdf).pvalue > LEVEL


def test_secure_gaussian_default_grid_fits_its_recorded_law():
    n = 15_000
    rel = gaussian_mechanism(
        np.zeros(n), mu=0.5, sensitivity=_one_changed_coordinate(n), secure=True
    )
    assert _chi2_by_law(rel.value, rel.noise.distribution()) > LEVEL


def test_exact_tulap_sampler_with_a_seeded_integer_source():
    """The exact Tulap algorithm, run on a seeded numpy source: reproducible, right law."""
    import importlib

    tm = importlib.import_module("invariantdp.distributions._exact_samplers")
    for eps, delta in [(1.0, 0.0), (0.7, 0.05), (1e-9, 0.1)]:
        g, u = tm.draw_tulap_exact(np.random.default_rng(4), eps, delta, 6000)
        g2, u2 = tm.draw_tulap_exact(np.random.default_rng(4), eps, delta, 6000)
        np.testing.assert_array_equal(g, g2)
        np.testing.assert_array_equal(u, u2)
        assert np.all(np.abs(u) < 0.5)
        assert np.all(((u + 0.5) * 2.0**53 - 0.5) % 1 == 0)  # cell centres
        edges = tulap_from_privacy(eps, delta).ppf(np.linspace(0, 1, 31))
        assert stats.chisquare(np.histogram(g + u, bins=edges)[0]).pvalue > 1e-3


@pytest.mark.parametrize("epsilon, delta", [(1.0, 0.05), (0.3, 1e-10), (2.0, 0.9), (1e-9, 0.1)])
def test_exact_truncation_boundary_matches_the_closed_form(epsilon, delta):
    import importlib

    exact = importlib.import_module("invariantdp.distributions._exact_samplers")
    trunc = exact._ExactTruncation(epsilon, delta)
    lo, hi = trunc.fc_bounds(0)
    assert 0 < lo < hi < 1 and hi - lo < 1e-30
    c = trunc.m_c + 0.5 - float(lo)  # the support bound of the truncated law
    assert c == pytest.approx(tulap_from_privacy(epsilon, delta).support()[1], abs=1e-9)
    assert trunc._r_sign(trunc.m_c) < 0 and trunc._r_sign(trunc.m_c - 1) > 0


@pytest.mark.parametrize("x, sensitivity", [(4.0, 2.0), (-3.0, 0.5)])
def test_secure_tulap_with_sensitivity_fits_the_scaled_law(x, sensitivity):
    rel = tulap_mechanism(
        np.full(8000, x), epsilon=0.8, delta=0.02, sensitivity=sensitivity, secure=True
    )
    noise = (rel.value - x) / sensitivity
    edges = tulap_from_privacy(0.8, 0.02).ppf(np.linspace(0, 1, 31))
    assert stats.chisquare(np.histogram(noise, bins=edges)[0]).pvalue > LEVEL


def test_secure_odds_ratio_release_with_delta():
    rels = [
        odds_ratio_release([[6, 5], [4, 9]], epsilon=0.5, delta=0.1, secure=True)
        for _ in range(2000)
    ]
    u = np.array([float(r.value) for r in rels]) - 6
    edges = tulap_from_privacy(0.5, 0.1).ppf(np.linspace(0, 1, 21))
    assert stats.chisquare(np.histogram(u, bins=edges)[0]).pvalue > LEVEL
    assert all(r.metadata["randomness"] == "secure" for r in rels[:5])
