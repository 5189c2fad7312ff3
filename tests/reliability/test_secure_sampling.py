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
    discrete_gaussian,
    discrete_laplace,
    odds_ratio_release,
    permutation_swap,
    tulap,
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
    rel = discrete_laplace(np.zeros(20_000), epsilon=epsilon, sensitivity=sensitivity, secure=True)
    assert "secure" in rel.metadata["sampler"]
    t = rel.noise.params["scale"]
    assert _chi2_integers(rel.value.astype(np.int64), lambda k: dl_law.pmf(k, t)) > LEVEL


@pytest.mark.parametrize("kw", [{"rho": 0.1}, {"mu": 0.4}])
def test_secure_discrete_gaussian_fits_the_exact_law(kw):
    rel = discrete_gaussian(np.zeros(15_000), secure=True, **kw)
    sigma = rel.noise.params["sigma"]
    assert _chi2_integers(rel.value.astype(np.int64), lambda k: dg_law.pmf(k, sigma)) > LEVEL


def test_exact_discrete_gaussian_with_secure_generator():
    draws = sample_discrete_gaussian_exact(Fraction(9, 4), size=10_000, rng=SecureGenerator())
    assert _chi2_integers(draws, lambda k: dg_law.pmf(k, 1.5)) > LEVEL


@pytest.mark.parametrize("delta", [0.0, 0.05])
def test_secure_tulap_fits_the_exact_law(delta):
    rel = tulap(np.zeros(15_000), epsilon=1.0, delta=delta, secure=True)
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
    rel = tulap(x, epsilon=50.0, secure=True)  # G = 0 with overwhelming probability
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
        lambda: discrete_laplace([1, 2], epsilon=1.0, secure=True, rng=1),
        lambda: discrete_gaussian([1, 2], rho=1.0, secure=True, rng=np.random.default_rng(0)),
        lambda: tulap([1.0], epsilon=1.0, secure=True, rng=0),
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
    with pytest.raises(TypeError, match="`secure` must be True or False"):
        discrete_laplace([1], epsilon=1.0, secure="yes")
    with pytest.raises(TypeError, match="`secure` must be True or False"):
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
