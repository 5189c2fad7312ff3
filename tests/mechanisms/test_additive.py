"""Additive mechanisms: noise laws, calibration, reproducibility, argument errors."""

import numpy as np
import pytest
from scipy import stats

from invariantdp import InvariantDPError, Release
from invariantdp.mechanisms import (
    discrete_gaussian,
    discrete_laplace,
    gaussian,
    laplace,
    lp_mechanism,
    tulap,
)
from invariantdp.privacy.accounting import gdp_to_eps_delta

X = np.array([[12.0, 5.0, 7.0], [4.0, 9.0, 3.0]])

CALLS = {
    "laplace": lambda x, rng: laplace(x, epsilon=0.7, sensitivity=2.0, rng=rng),
    "gaussian-mu": lambda x, rng: gaussian(x, mu=0.5, rng=rng),
    "gaussian-eps-delta": lambda x, rng: gaussian(x, epsilon=1.0, delta=1e-6, rng=rng),
    "discrete_laplace": lambda x, rng: discrete_laplace(x, epsilon=0.5, rng=rng),
    "discrete_gaussian": lambda x, rng: discrete_gaussian(x, rho=0.3, rng=rng),
    "tulap": lambda x, rng: tulap(x, epsilon=1.0, delta=0.05, rng=rng),
    "l1": lambda x, rng: lp_mechanism(x, 1, epsilon=1.0, rng=rng),
    "l2": lambda x, rng: lp_mechanism(x, 2, epsilon=1.0, rng=rng),
    "linf": lambda x, rng: lp_mechanism(x, "inf", epsilon=1.0, rng=rng),
}


@pytest.mark.parametrize("name", CALLS)
def test_same_seed_same_release_and_json_round_trip(name):
    a, b = CALLS[name](X, 11), CALLS[name](X, 11)
    assert a == b
    assert not np.array_equal(a.value, CALLS[name](X, 12).value)
    back = Release.from_json(a.to_json())
    assert back == a
    assert back.noise.distribution() is not None
    assert a.value.shape == X.shape


def _draws(call, m, seed=0):
    gen = np.random.default_rng(seed)
    return np.array([call(np.zeros(3), gen).value for _ in range(m)])


def test_gaussian_sd_is_sensitivity_over_mu():
    d = _draws(lambda x, g: gaussian(x, mu=0.5, sensitivity=3.0, rng=g), 4000)
    sd = 3.0 / 0.5
    se = sd**2 * np.sqrt(2 / d.size)
    assert abs(d.var() - sd**2) < 4 * se


def test_gaussian_epsilon_delta_calibration_is_exact():
    r = gaussian([0.0], epsilon=1.0, delta=1e-5, sensitivity=2.0, rng=0)
    mu = r.guarantee.params["mu"]
    assert gdp_to_eps_delta(mu, 1.0) == pytest.approx(1e-5, rel=1e-8)
    assert r.noise.params["scale"] == pytest.approx(2.0 / mu)
    assert r.guarantee.tradeoff()(0.5) >= 0  # a GDP tradeoff is recorded


def test_laplace_scale_and_distribution():
    d = _draws(lambda x, g: laplace(x, epsilon=0.5, sensitivity=2.0, rng=g), 3000).ravel()
    assert stats.kstest(d, stats.laplace(scale=4.0).cdf).pvalue > 1e-3


def test_discrete_mechanisms_are_integer_and_match_their_laws():
    d = _draws(lambda x, g: discrete_laplace(x, epsilon=1.0, rng=g), 1500).ravel()
    assert np.all(d == np.round(d))
    law = discrete_laplace([0], epsilon=1.0, rng=0).noise.distribution()
    assert abs(d.var() - law.var()) < 4 * np.sqrt((law.moment(4) - law.var() ** 2) / d.size)
    g = _draws(lambda x, gen: discrete_gaussian(x, mu=0.5, rng=gen), 1500).ravel()
    assert np.all(g == np.round(g))
    r = discrete_gaussian([0], mu=0.5, rng=0)
    assert r.guarantee.definition == "zCDP" and r.guarantee.params["rho"] == 0.125
    assert r.noise.params["sigma"] == 2.0
    assert abs(g.var() - 4.0) < 4 * 4.0 * np.sqrt(2 / g.size)


def test_tulap_noise_matches_tulap_law():
    d = _draws(lambda x, g: tulap(x, epsilon=1.0, delta=0.1, sensitivity=2.0, rng=g), 2000)
    law = tulap([0.0], epsilon=1.0, delta=0.1, sensitivity=2.0, rng=0).noise.distribution()
    assert stats.kstest(d.ravel(), law.cdf).pvalue > 1e-3


@pytest.mark.parametrize("p", [1, 2, "inf"])
def test_lp_mechanism_expected_norm(p):
    # V = R U with ||V||_p having mean d * scale for the three samplers (Alg. 4-6)
    d, scale = 3, 2.0
    draws = _draws(lambda x, g: lp_mechanism(x, p, epsilon=0.5, rng=g), 4000)
    ordp = np.inf if p == "inf" else p
    norms = np.linalg.norm(draws, ord=ordp, axis=1)
    assert abs(norms.mean() - d * scale) < 4 * norms.std() / np.sqrt(norms.size)
    if p != 1:
        law = lp_mechanism(np.zeros(3), p, epsilon=0.5, rng=0).noise.distribution()
        cov = np.cov(draws.T)
        se = np.sqrt(2.0 / draws.shape[0]) * np.diag(law.cov())
        assert np.all(np.abs(np.diag(cov) - np.diag(law.cov())) < 4 * se)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: laplace(X, epsilon=-1.0), r"`epsilon` \(-1.0\) must be > 0"),
        (lambda: laplace(X, epsilon=np.nan), r"`epsilon` \(nan\) must not be NaN"),
        (lambda: laplace([1.0, np.inf], epsilon=1.0), r"`x` .* must contain only finite"),
        (lambda: gaussian(X, mu=1.0, epsilon=1.0, delta=0.1), "either `mu`"),
        (lambda: gaussian(X, epsilon=1.0), "both `epsilon` and `delta`"),
        (lambda: gaussian(X, epsilon=1.0, delta=1.5), r"`delta` \(1.5\) must be in \[0, 1\)"),
        (lambda: gaussian(X, mu=1.0, sensitivity=0.0), r"`sensitivity` \(0.0\) must be > 0"),
        (lambda: gaussian(X, mu=1.0, sensitivity=np.ones((2, 5))), "`sensitivity` vectors"),
        (lambda: discrete_laplace([1.5, 2.0], epsilon=1.0), "`x` must be integer-valued"),
        (lambda: discrete_gaussian([1, 2], mu=1.0, rho=1.0), "exactly one of `mu` or `rho`"),
        (lambda: lp_mechanism(X, 3, epsilon=1.0), r"`p` \(3\) must be 1, 2 or inf"),
        (lambda: tulap(X, epsilon=1.0, delta=-0.1), r"`delta` \(-0.1\) must be in \[0, 1\)"),
    ],
)
def test_bad_arguments_raise_value_error_naming_them(call, match):
    with pytest.raises(InvariantDPError, match=match):
        call()


def test_sensitivity_from_a_space():
    S = np.array([[1.0, -1.0, 0.0], [0.0, 3.0, -1.0]])
    r = gaussian(np.zeros(3), mu=1.0, sensitivity=S, rng=0)
    assert r.metadata["sensitivity"] == pytest.approx(np.sqrt(10.0))
    r = laplace(np.zeros(3), epsilon=1.0, sensitivity=S, rng=0)
    assert r.noise.params["scale"] == 4.0


def test_lp_and_knorm_take_the_issue_signature():
    """``lp_mechanism(x, p, sensitivity, epsilon)`` and ``knorm(x, vertices, epsilon)``."""
    from invariantdp.mechanisms import knorm, lp_mechanism

    a = lp_mechanism([1.0, 2.0], 2, 2.0, 0.5, rng=3)
    b = lp_mechanism([1.0, 2.0], 2, sensitivity=2.0, epsilon=0.5, rng=3)
    assert a == b and a.metadata["sensitivity"] == 2.0
    V = np.array([[1.0, -1.0], [-1.0, 1.0]])
    assert knorm([3.0, 3.0], V, 1.0, rng=1) == knorm([3.0, 3.0], V, epsilon=1.0, rng=1)
    with pytest.raises(TypeError, match="`epsilon` is required"):
        lp_mechanism([1.0], 1)
