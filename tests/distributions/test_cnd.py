import numpy as np
import pytest

from invariantdp.distributions import canonical_noise, tulap_from_privacy
from invariantdp.privacy import eps_delta, gaussian_tradeoff, group


@pytest.mark.parametrize(
    "eps,delta", [(1.0, 0.0), (0.5, 0.01), (2.0, 1e-3), (0.1, 0.2), (3.0, 0.0)]
)
def test_cnd_of_eps_delta_is_tulap(eps, delta):
    F = canonical_noise(eps_delta(eps, delta))
    T = tulap_from_privacy(eps, delta)
    x = np.linspace(-8, 8, 321)
    np.testing.assert_allclose(F.cdf(x), T.cdf(x), atol=1e-10)
    u = np.linspace(0.01, 0.99, 99)
    np.testing.assert_allclose(F.ppf(u), T.ppf(u), atol=1e-10)


@pytest.mark.parametrize(
    "f",
    [
        gaussian_tradeoff(1.0),
        gaussian_tradeoff(0.3),
        eps_delta(1.0, 0.05),
        group(eps_delta(0.4, 0.01), 2),
    ],
)
def test_definition_35_properties(f):
    F = canonical_noise(f)
    alpha = np.linspace(0.01, 0.99, 49)
    # property 3: T(F, F(. - 1))(alpha) = F(F^{-1}(alpha) - 1) = f(alpha)
    np.testing.assert_allclose(F.cdf(F.ppf(alpha) - 1.0), f(alpha), atol=1e-9)
    # property 4: symmetry
    x = np.linspace(-5, 5, 41)
    np.testing.assert_allclose(F.cdf(x), 1.0 - F.cdf(-x), atol=1e-12)
    # the linear piece between -1/2 and 1/2 (Lemma 36)
    c = f.fixed_point()
    assert f(1 - c) == pytest.approx(c, abs=1e-12)
    assert F.cdf(-0.5) == pytest.approx(c, abs=1e-12)


def test_gaussian_fixed_point_closed_form():
    from scipy.stats import norm

    assert gaussian_tradeoff(1.3).fixed_point() == pytest.approx(norm.cdf(-1.3 / 2), abs=1e-12)


def test_rvs_follow_cdf(rng):
    from scipy import stats

    F = canonical_noise(gaussian_tradeoff(0.8))
    sample = F.rvs(size=3000, random_state=rng)
    assert stats.kstest(sample, F.cdf).pvalue > 1e-3


def test_rejects_trivial_and_asymmetric():
    with pytest.raises(ValueError, match="nontrivial"):
        canonical_noise(lambda a: a)
    with pytest.raises(ValueError, match="symmetric"):
        canonical_noise(lambda a: np.maximum(0.0, a - 0.5) * 1.9 * (a <= 1) + 0 * a)


def test_far_tail_is_refused_not_truncated():
    """F(-2e5) of the CND of eps_delta(1e-6) was 0.0 (true: 0.41); ppf(1e-10) 20x too small."""
    from invariantdp._validation import InvariantDPError

    F = canonical_noise(eps_delta(1e-6))
    with pytest.raises(InvariantDPError, match=r"more than 100000 units.*not negligible"):
        F.cdf(-2e5)
    with pytest.raises(InvariantDPError, match=r"quantile .* more than 100000 units"):
        F.ppf(1e-10)
    # within the cap it is the Tulap law
    assert F.cdf(-5e4) == pytest.approx(tulap_from_privacy(1e-6).cdf(-5e4), rel=1e-9)
    # where the tail beyond the cap is 0 in double precision, 0 is exact
    G = canonical_noise(eps_delta(1.0))
    assert G.cdf(-2e5) == 0.0 and G.sf(2e5) == 0.0


def test_cnd_at_huge_epsilon_is_uniform():
    F = canonical_noise(eps_delta(1e300, 0.1))
    np.testing.assert_allclose(F.cdf([-0.7, -0.2, 0.3]), [0.0, 0.3, 0.8], atol=1e-15)
    np.testing.assert_allclose(F.ppf([0.1, 0.9]), [-0.4, 0.4], atol=1e-15)
