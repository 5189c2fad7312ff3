"""zcdp_to_eps_delta: its two conversions (CKS 2020 Cor. 13 and Bun & Steinke 2016 Prop. 1.3)."""

import math

import numpy as np
import pytest
from scipy import optimize

from invariantdp.census import census_semi_dp_analysis
from invariantdp.exceptions import InvariantDPError
from invariantdp.privacy import ZCDP_CONVERSIONS, zcdp_to_eps_delta


def _cks_by_minimisation(rho, delta):
    """CKS Cor. 13 minimised numerically over the Renyi order alpha (no closed form)."""
    L = -math.log(delta)

    def eps(log_t):
        a = 1.0 + math.exp(log_t)
        return a * rho + (L + (a - 1.0) * math.log1p(-1.0 / a) - math.log(a)) / (a - 1.0)

    res = optimize.minimize_scalar(
        eps, bounds=(-30.0, 30.0), method="bounded", options={"xatol": 1e-12}
    )
    return max(res.fun, 0.0)


@pytest.mark.parametrize("rho", [1e-3, 0.03125, 0.5, 2.56, 10.24, 300.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-6, 1e-2, 0.3])
def test_cks_is_the_minimum_over_renyi_orders_and_below_bun_steinke(rho, delta):
    cks = zcdp_to_eps_delta(rho, delta)
    assert cks == pytest.approx(_cks_by_minimisation(rho, delta), rel=1e-9, abs=1e-12)
    assert cks <= zcdp_to_eps_delta(rho, delta, method="bun-steinke")


def test_cks_can_certify_epsilon_zero():
    # rho = 1e-10 is implied by 1.4e-5-GDP, which is (0, 5.6e-6)-DP; CKS sees (0, 1e-5)
    assert zcdp_to_eps_delta(1e-10, 1e-5) == 0.0
    assert zcdp_to_eps_delta(1e-10, 1e-5, method="bun-steinke") > 0.0


@pytest.mark.parametrize("rho", [5e-324, 1e-300, 1e-10, 1.0, 1e10, 1e300, 1.7e308])
@pytest.mark.parametrize("delta", [5e-324, 1e-300, 1e-5, 0.5, 1 - 2**-53])
def test_every_method_is_finite_and_ordered_on_extremes(rho, delta):
    cks = zcdp_to_eps_delta(rho, delta)
    bs = zcdp_to_eps_delta(rho, delta, method="bun-steinke")
    assert np.isfinite(cks) and np.isfinite(bs) and 0.0 <= cks <= bs


def test_method_is_checked():
    assert ZCDP_CONVERSIONS == ("cks", "bun-steinke")
    with pytest.raises(InvariantDPError, match=r"`method` \('tight'\) must be one of 'cks'"):
        zcdp_to_eps_delta(1.0, 1e-5, method="tight")
    with pytest.raises(TypeError, match="`method` must be a string, got int"):
        zcdp_to_eps_delta(1.0, 1e-5, method=1)


def test_census_figures_keep_the_bun_steinke_conversion():
    res = census_semi_dp_analysis(rho=2.56, a=2, delta=1e-10)
    assert (round(res.epsilon, 5), round(res.semi_dp_epsilon, 5)) == (17.91528, 40.95057)


def test_zcdp_tradeoff_lives_in_privacy_and_is_the_cks_envelope():
    from invariantdp import audit
    from invariantdp.privacy import eps_delta, zcdp_tradeoff

    with pytest.warns(DeprecationWarning, match=r"invariantdp\.privacy\.zcdp_tradeoff"):
        assert audit.zcdp_tradeoff is zcdp_tradeoff  # the old path, for one release
    f = zcdp_tradeoff(0.5)
    alpha = np.linspace(0.0, 1.0, 41)
    for delta in (1e-6, 1e-3, 0.1):  # above every f_{eps(delta), delta} it implies
        g = eps_delta(zcdp_to_eps_delta(0.5, delta), delta)
        assert np.all(f(alpha) >= g(alpha) - 1e-3)


def _cks_log_delta_by_minimisation(rho, epsilon):
    def log_delta(log_t):
        a = 1.0 + math.exp(log_t)
        return (a - 1.0) * (a * rho - epsilon) + (a - 1.0) * math.log1p(-1.0 / a) - math.log(a)

    opts = {"xatol": 1e-12}
    return optimize.minimize_scalar(log_delta, bounds=(-30, 30), method="bounded", options=opts).fun


@pytest.mark.parametrize("rho", [1e-3, 0.125, 0.5, 2.56, 30.0])
@pytest.mark.parametrize("epsilon", [1e-3, 0.5, 3.0, 20.0])
def test_zcdp_log_delta_is_cks_and_inverts_zcdp_to_eps_delta(rho, epsilon):
    from invariantdp.privacy import zcdp_log_delta

    got = zcdp_log_delta(rho, epsilon)
    assert got == pytest.approx(_cks_log_delta_by_minimisation(rho, epsilon), rel=1e-9)
    if math.log(1e-300) < got < math.log(0.5):  # near delta = 1 the inverse is ill-conditioned
        assert zcdp_to_eps_delta(rho, math.exp(got)) == pytest.approx(epsilon, rel=1e-10)


def test_zcdp_log_delta_below_the_doubles_is_an_error():
    from invariantdp.privacy import zcdp_log_delta

    assert zcdp_log_delta(1e-300, 1e-300) == pytest.approx(-345.54119, rel=1e-7)
    assert zcdp_log_delta(1.0, 100.0) == pytest.approx(-2455.1621, rel=1e-7)  # delta underflows
    with pytest.raises(InvariantDPError, match="below the most negative double"):
        zcdp_log_delta(1e-10, 1e300)
    with pytest.raises(InvariantDPError, match=r"`epsilon` \(0.0\) must be > 0"):
        zcdp_log_delta(1.0, 0.0)
