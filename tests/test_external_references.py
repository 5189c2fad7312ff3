"""Reference values from OpenDP (tests/data/opendp_reference.json, with its provenance).

OpenDP's canonical-noise utilities implement the same Tulap law and the same
DP binomial p-values (Awan & Slavkovic 2018) independently of this package.
Its ``BinomialCND`` interval is built differently from ours: it fixes theta at
the estimate ``Z / n`` and searches the statistic ``B * n`` whose p-value
crosses ``alpha``, where ours inverts the test in theta (the interval of all
theta the test does not reject, which is what gives exact coverage).  The
test reproduces OpenDP's construction from our p-values instead.
"""

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import optimize

from invariantdp import ump_binomial_test
from invariantdp.distributions import tulap, tulap_params

REF = json.loads((Path(__file__).parent / "data" / "opendp_reference.json").read_text())


def test_tulap_cdf_matches_opendp():
    r = REF["tulap_cdf"]
    b, q = tulap_params(r["epsilon"], r["delta"])
    np.testing.assert_allclose(tulap(b, q).cdf(r["t"]), r["cdf"], rtol=1e-14, atol=1e-15)


B = REF["binomial_cnd"]


def _pvalue(theta, alternative, statistic=B["estimate"]):
    return ump_binomial_test(
        statistic,
        B["size"],
        theta,
        epsilon=B["epsilon"],
        delta=B["delta"],
        alternative=alternative,
    ).pvalue


@pytest.mark.parametrize(
    ("key", "alternative"),
    [("pvalue_right", "greater"), ("pvalue_left", "less"), ("pvalue_two_sided", "two-sided")],
)
def test_binomial_pvalues_match_opendp(key, alternative):
    ours = [_pvalue(t, alternative) for t in B["theta"]]
    np.testing.assert_allclose(ours, B[key], rtol=1e-10, atol=1e-14)


def test_opendps_binomial_interval_construction_is_reproduced_from_our_pvalues():
    n, alpha = B["size"], B["alpha"]
    mle = B["estimate"] / n

    def crossing(alternative, lo, hi):
        return optimize.brentq(
            lambda b: _pvalue(mle, alternative, statistic=b * n) - alpha, lo, hi, xtol=1e-13
        )

    low2, high2 = crossing("two-sided", 0.0, mle), crossing("two-sided", mle, 1.0)
    np.testing.assert_allclose([low2, high2], B["interval_two_sided"], atol=1e-9)
    # OpenDP's one-sided "lower" bound uses its left tail (our "less"), "upper" its right
    np.testing.assert_allclose(crossing("less", 0.0, 1.0), B["interval_lower"], atol=1e-9)
    np.testing.assert_allclose(crossing("greater", 0.0, 1.0), B["interval_upper"], atol=1e-9)


def test_our_interval_inverts_the_test_where_opendps_does_not():
    res = ump_binomial_test(
        B["estimate"],
        B["size"],
        0.1,
        epsilon=B["epsilon"],
        delta=B["delta"],
        alternative="two-sided",
    )
    ci = res.confidence_interval(1 - B["alpha"])
    # at our bounds the test of theta is exactly at the level...
    for theta in ci:
        assert _pvalue(theta, "two-sided") == pytest.approx(B["alpha"], abs=1e-8)
    # ...while at OpenDP's bounds it is not: the two intervals are different objects
    for theta in B["interval_two_sided"]:
        assert abs(_pvalue(theta, "two-sided") - B["alpha"]) > 1e-3


Z = REF["zcdp_to_approx_dp"]


def test_zcdp_to_eps_delta_cks_matches_opendp():
    """OpenDP's make_zCDP_to_approxDP is the CKS (2020) Cor. 13 conversion."""
    from invariantdp.privacy import zcdp_log_delta, zcdp_to_eps_delta

    for method in ({}, {"method": "cks"}):  # the default is CKS
        ours = [zcdp_to_eps_delta(Z["rho"], d, **method) for d in Z["delta"]]
        np.testing.assert_allclose(ours, Z["epsilon"], rtol=1e-14)
    # and back: the delta of OpenDP's epsilon
    back = [zcdp_log_delta(Z["rho"], e) for e in Z["epsilon"]]
    np.testing.assert_allclose(back, np.log(Z["delta"]), rtol=1e-13)


def test_zcdp_to_eps_delta_bun_steinke_is_the_looser_closed_form():
    from invariantdp.privacy import zcdp_to_eps_delta

    rho = Z["rho"]
    ours = [zcdp_to_eps_delta(rho, d, method="bun-steinke") for d in Z["delta"]]
    closed = [rho + 2 * np.sqrt(rho * np.log(1 / d)) for d in Z["delta"]]
    np.testing.assert_allclose(ours, closed, rtol=1e-15)
    assert all(b > e for b, e in zip(ours, Z["epsilon"], strict=True))
