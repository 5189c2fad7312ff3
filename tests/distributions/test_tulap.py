import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate, stats

from invariantdp._validation import InvariantDPError
from invariantdp.distributions import tulap, tulap_from_privacy, tulap_params, tulap_privacy

PARAMS = [
    (np.exp(-1.0), 0.0),
    (0.3, 0.05),
    (0.9, 0.0),
    (0.05, 0.2),
    (np.exp(-0.01), 0.001),
]


def _cdf_by_definition(x, b, n_terms=4000):
    """P(G1 - G2 + U <= x) summed over the discrete Laplace G1 - G2."""
    k = np.arange(-n_terms, n_terms + 1)
    pk = (1 - b) / (1 + b) * b ** np.abs(k)
    return np.sum(pk * np.clip(x - k + 0.5, 0.0, 1.0))


@pytest.mark.parametrize("b", [0.3, np.exp(-1.0), 0.8])
def test_cdf_matches_definition(b):
    for x in np.linspace(-7.3, 7.3, 37):
        assert tulap.cdf(x, b, 0.0) == pytest.approx(_cdf_by_definition(x, b), abs=1e-13)


@pytest.mark.parametrize("b,q", PARAMS)
def test_generic_distribution_properties(b, q):
    u = np.linspace(1e-6, 1 - 1e-6, 401)
    x = tulap.ppf(u, b, q)
    np.testing.assert_allclose(tulap.cdf(x, b, q), u, atol=1e-12)
    np.testing.assert_allclose(tulap.isf(u, b, q), tulap.ppf(1 - u, b, q), atol=1e-9)
    grid = np.linspace(-12, 12, 301)
    np.testing.assert_allclose(tulap.sf(grid, b, q), 1 - tulap.cdf(grid, b, q), atol=1e-14)
    # symmetric about the median
    np.testing.assert_allclose(tulap.cdf(-grid, b, q), tulap.sf(grid, b, q), atol=1e-14)
    lo, hi = tulap.support(b, q)
    lo, hi = max(lo, tulap.ppf(1e-12, b, q)), min(hi, tulap.ppf(1 - 1e-12, b, q))
    # integrate the piecewise-constant density piece by piece
    knots = np.concatenate([[lo], np.arange(np.ceil(lo - 0.5), hi) + 0.5, [hi]])
    knots = np.unique(np.clip(knots, lo, hi))
    total = sum(
        integrate.quad(tulap.pdf, a, c, args=(b, q))[0]
        for a, c in zip(knots[:-1], knots[1:], strict=True)
    )
    assert total == pytest.approx(1.0, abs=2e-9)
    inside = grid[(grid > lo) & (grid < hi)]
    np.testing.assert_allclose(
        tulap.logpdf(inside, b, q), np.log(tulap.pdf(inside, b, q)), rtol=1e-12
    )


@pytest.mark.parametrize("b,q", PARAMS)
def test_sampler_matches_cdf(b, q, rng):
    sample = tulap.rvs(b, q, size=20000, random_state=rng)
    assert stats.kstest(sample, lambda x: tulap.cdf(x, b, q)).pvalue > 1e-3
    lo, hi = tulap.support(b, q)
    assert np.all((sample >= lo) & (sample <= hi))


def test_untruncated_moments(rng):
    b = 0.6
    sample = tulap.rvs(b, 0.0, size=200_000, random_state=rng)
    var = tulap.var(b, 0.0)
    assert var == pytest.approx(2 * b / (1 - b) ** 2 + 1 / 12)
    se = np.sqrt(stats.kurtosis(sample, fisher=False) - 1) * var / np.sqrt(sample.size)
    assert abs(sample.var() - var) < 4 * se


def test_log_tails_are_finite():
    b = np.exp(-1.0)
    assert np.isfinite(tulap.logcdf(-1e4, b, 0.0))
    assert tulap.logcdf(-1e4, b, 0.0) == pytest.approx(
        -1e4 - np.log1p(b) + np.log(b + 0.5 * (1 - b))
    )
    assert tulap.logsf(1e4, b, 0.0) == pytest.approx(tulap.logcdf(-1e4, b, 0.0))
    assert tulap.ppf(1e-300, b, 0.0) == pytest.approx(-689.3, abs=1.0)


def test_closed_form_reference_value():
    # binomialDP: ptulap(0.5, m = 0, b = 0.3, q = 0.05) = 0.7834008
    assert tulap.cdf(0.5, 0.3, 0.05) == pytest.approx(0.7834008, abs=5e-8)


def test_loc_is_the_median_and_broadcasting():
    assert tulap.median(0.4, 0.1, loc=3.25) == pytest.approx(3.25)
    out = tulap.cdf(np.zeros((3, 1)), np.array([0.2, 0.5]), 0.0)
    assert out.shape == (3, 2)
    np.testing.assert_allclose(out, 0.5)


def test_invalid_shapes_give_nan():
    assert np.isnan(tulap.cdf(0.0, 1.5, 0.0))
    assert np.isnan(tulap.cdf(0.0, 0.5, 1.0))


def test_from_privacy_parameters():
    b, q = tulap_params(1.0, 0.01)
    assert b == pytest.approx(np.exp(-1))
    assert q == pytest.approx(2 * 0.01 * b / (1 - b + 2 * 0.01 * b))
    frozen = tulap_from_privacy(1.0, 0.01)
    assert frozen.cdf(0.7) == pytest.approx(tulap.cdf(0.7, b, q))
    with pytest.raises(ValueError, match=r"`epsilon` \(-1.0\) must be > 0"):
        tulap_from_privacy(-1.0)
    with pytest.raises(ValueError, match=r"`delta` \(1.0\) must be in \[0, 1\)"):
        tulap_from_privacy(1.0, 1.0)


def test_sampling_is_reproducible():
    a = tulap.rvs(0.4, 0.05, size=50, random_state=np.random.default_rng(3))
    c = tulap.rvs(0.4, 0.05, size=50, random_state=np.random.default_rng(3))
    np.testing.assert_array_equal(a, c)


# --- extreme privacy parameters (issue 10, items 3b and 4c) ------------------------------


# log-uniform epsilon over the whole supported range, delta over [0, 1)
EPS_ANY = st.floats(-300.0, 300.0).map(lambda e: float(10.0**e))
DELTA_ANY = st.one_of(st.just(0.0), st.floats(0.0, 1.0, exclude_max=True))


def test_b_zero_is_the_uniform_law_exactly():
    """b = exp(-epsilon) = 0 is the limit G1 = G2 = 0: Uniform(-1/2, 1/2), exact values."""
    x = np.array([-3.0, -0.5, -0.3, 0.0, 0.2, 0.5, 2.0])
    np.testing.assert_array_equal(tulap.cdf(x, 0.0, 0.0), np.clip(x + 0.5, 0.0, 1.0))
    assert tulap.support(0.0, 0.0) == (-0.5, 0.5)
    np.testing.assert_array_equal(tulap.ppf([0.0, 0.1, 0.5, 1.0], 0.0, 0.0), [-0.5, -0.4, 0.0, 0.5])
    np.testing.assert_array_equal(tulap.pdf([-0.2, 0.4], 0.0, 0.0), [1.0, 1.0])
    assert tulap.logcdf(-0.3, 0.0, 0.0) == pytest.approx(np.log(0.2), rel=1e-15)
    assert tulap.var(0.0, 0.0) == pytest.approx(1 / 12)
    # truncated uniform: central 1 - q of it
    assert tulap.support(0.0, 0.2) == pytest.approx((-0.4, 0.4))
    assert tulap.cdf(0.0, 0.0, 0.2) == 0.5
    assert tulap.cdf(-0.2, 0.0, 0.2) == pytest.approx(0.25)


def test_invalid_shapes_still_give_nan():
    assert np.isnan(tulap.cdf(0.0, -0.1, 0.0))
    assert np.isnan(tulap.cdf(0.0, 1.0, 0.0))
    assert np.isnan(tulap_privacy.cdf(0.0, 0.0, 0.0))  # epsilon must be > 0
    assert np.isnan(tulap_privacy.cdf(0.0, 1.0, 1.0))  # delta must be < 1


@pytest.mark.parametrize("epsilon", [746.0, 1e4, 1e300])
def test_privacy_law_above_745_is_the_uniform_limit(epsilon):
    """exp(-epsilon) underflows to 0: the law must be Uniform(-1/2, 1/2), not NaN."""
    N = tulap_from_privacy(epsilon, 0.01)
    x = np.array([-2.0, -0.5, -0.3, 0.0, 0.2, 0.5, 2.0])
    np.testing.assert_allclose(N.cdf(x), np.clip(x + 0.5, 0.0, 1.0), atol=1e-300)
    np.testing.assert_allclose(N.ppf([1e-9, 0.25, 0.75]), [-0.5 + 1e-9, -0.25, 0.25], rtol=1e-12)
    # log b = -epsilon is kept: the tail is finite in log space, not -inf
    assert N.logcdf(-1.2) == pytest.approx(-epsilon + np.log(0.3), rel=1e-14)
    assert np.all(np.abs(N.rvs(size=200, random_state=1)) <= 0.5)


def test_continuous_in_epsilon_across_745():
    """Around the old underflow point the law changes smoothly: log F(-1.2) = -epsilon + log .3."""
    eps = np.linspace(740.0, 750.0, 41)
    logs = np.array([tulap_from_privacy(e).logcdf(-1.2) for e in eps])
    assert np.all(np.isfinite(logs))
    np.testing.assert_allclose(np.diff(logs), -np.diff(eps), rtol=1e-9)


@pytest.mark.parametrize("epsilon", [1e-17, 1e-100, 1e-300])
def test_privacy_law_below_1e16(epsilon):
    """1 - exp(-epsilon) rounds to 0: was ZeroDivisionError; the scale is 1/epsilon."""
    N = tulap_from_privacy(epsilon)
    # F(-k/epsilon) = exp(-k)/2 to relative O(epsilon)
    for k in (0.5, 3.0):
        assert N.cdf(-k / epsilon) == pytest.approx(np.exp(-k) / 2, rel=1e-12)
        assert N.ppf(np.exp(-k) / 2) == pytest.approx(-k / epsilon, rel=1e-12)
    assert N.pdf(0.3) == pytest.approx(epsilon / 2, rel=1e-12)
    # with delta > 0 the law tends to Uniform(-1/(2 delta), 1/(2 delta))
    M = tulap_from_privacy(epsilon, 0.1)
    lo, hi = M.support()
    assert (lo, hi) == (pytest.approx(-5.0, rel=1e-12), pytest.approx(5.0, rel=1e-12))
    np.testing.assert_allclose(M.cdf([-5.0, -2.5, 0.0, 4.0]), [0.0, 0.25, 0.5, 0.9], atol=1e-12)
    np.testing.assert_allclose(M.ppf([0.1, 0.5, 0.95]), [-4.0, 0.0, 4.5], atol=1e-10)
    sample = M.rvs(size=2000, random_state=3)
    assert stats.kstest(sample, stats.uniform(-5, 10).cdf).pvalue > 1e-3


def test_tulap_params_tiny_epsilon_is_refused_not_nan():
    """tulap_params(1e-17, 0.1) gave NaN (0/0); b rounds to 1, which is no Tulap law."""
    with pytest.raises(InvariantDPError, match=r"`epsilon` \(1e-17\) must be >= 5.55e-17"):
        tulap_params(1e-17, 0.1)
    with pytest.raises(InvariantDPError, match=r"`epsilon` \(1e-17\) must be >= 5.55e-17"):
        tulap_params(1e-17)  # was ZeroDivisionError
    # q = 2 delta / (expm1(eps) + 2 delta): accurate where b is barely below 1
    b, q = tulap_params(1e-10, 1e-3)
    assert b < 1.0 and q == pytest.approx(2e-3 / (np.expm1(1e-10) + 2e-3), rel=1e-15)
    assert tulap_params(746.0, 0.5) == (0.0, 0.0)
    assert tulap_params(2.0, 0.0) == (np.exp(-2.0), 0.0)


@pytest.mark.parametrize("b,q", [(b, q) for b, q in PARAMS if q * (1 - b) < 2 * b * (1 - q)])
def test_privacy_law_equals_the_b_q_law_for_ordinary_parameters(b, q):
    eps = -np.log(b)
    delta = q * (1 - b) / (2 * b * (1 - q))  # inverts q = 2 delta b / (1 - b + 2 delta b)
    N = tulap_from_privacy(eps, delta)
    x = np.linspace(-12, 12, 97)
    np.testing.assert_allclose(N.cdf(x), tulap.cdf(x, b, q), atol=1e-14)
    u = np.linspace(0.001, 0.999, 99)
    np.testing.assert_allclose(N.ppf(u), tulap.ppf(u, b, q), atol=1e-10)
    assert N.support() == pytest.approx(tulap.support(b, q), rel=1e-12)


@pytest.mark.parametrize("eps,delta", [(1.0, 0.0), (0.05, 0.3), (3.0, 1e-3), (1e-12, 0.0)])
def test_privacy_law_sampler_matches_cdf(eps, delta, rng):
    N = tulap_from_privacy(eps, delta)
    sample = N.rvs(size=20000, random_state=rng)
    assert stats.kstest(sample, N.cdf).pvalue > 1e-3


def check_law(epsilon, delta):
    N = tulap_from_privacy(epsilon, delta)
    u = np.concatenate([[1e-300, 1e-30, 1e-10], np.linspace(0.0, 1.0, 41)[1:-1], [1 - 1e-10]])
    x = N.ppf(u)
    assert np.all(np.isfinite(x)) and np.all(np.diff(x) >= 0)
    cdf = N.cdf(np.sort(np.concatenate([x, [-np.inf, 0.0, np.inf]])))
    assert np.all((cdf >= 0) & (cdf <= 1)) and np.all(np.diff(cdf) >= 0)
    mid = u[3:-1]  # the round trip away from the extreme tails (ppf is flat-free there)
    np.testing.assert_allclose(N.cdf(x[3:-1]), mid, atol=1e-12)
    logcdf = N.logcdf(x)
    assert not np.any(np.isnan(logcdf)) and np.all(logcdf <= 0)


@given(EPS_ANY, DELTA_ANY)
def test_law_is_finite_and_monotone_for_any_epsilon(epsilon, delta):
    check_law(epsilon, delta)


def test_logcdf_at_a_cell_edge_is_a_power_of_b_even_where_b_underflows():
    # F(-j - 1/2) = b**(j+1) exactly; epsilon = 800: b = exp(-800) is 0 in double precision,
    # but log b = -800 is kept, so the cell edge -28.5 (rounded half-even to -28) has
    # log F = 29 log b, not log(0)
    N = tulap_from_privacy(800.0)
    assert float(N.logcdf(-28.5)) == pytest.approx(-29 * 800.0, rel=1e-15)
    assert float(N.logcdf(-27.5)) == pytest.approx(-28 * 800.0, rel=1e-15)
    # with b representable the edge is the same closed form, to rounding
    b = 0.3
    want = 3 * np.log(b) - np.log1p(b)  # F(-2.5) = b**2 * b / (1 + b)
    assert float(tulap.logcdf(-2.5, b, 0.0)) == pytest.approx(want, rel=1e-14)


def test_the_closed_forms_do_not_import_pytensor():
    # pytensor is an optional dependency (extra `bayes`): only the bayes code imports it
    import subprocess
    import sys

    code = (
        "import sys, invariantdp.distributions._tulap_forms, invariantdp.inference; "
        "assert 'pytensor' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
