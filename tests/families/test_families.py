"""What a noise family gives its consumers: calibration, claims, test view, likelihood form."""

from fractions import Fraction

import numpy as np
import pytest

from invariantdp import InvariantDPError, PrivacyGuarantee, Release
from invariantdp import mechanisms as M
from invariantdp.distributions import (
    sample_discrete_gaussian_exact,
    sample_discrete_laplace_exact,
)
from invariantdp.families import (
    DISCRETE_GAUSSIAN,
    DISCRETE_LAPLACE,
    GAUSSIAN,
    LAPLACE,
    LAPLACE_LIKELIHOOD,
    TULAP,
    NoiseLikelihood,
    noise_family,
)
from invariantdp.invariants import totals
from invariantdp.privacy import QueryAdjacency


@pytest.mark.parametrize(
    "terms, sigma, implied",
    [
        ({"rho": 0.125, "sensitivity": 2.0}, 4.0, ("zCDP", {"rho": 0.125, "sensitivity": 2.0})),
        ({"mu": 0.5, "sensitivity": 2.0}, 4.0, ("zCDP", {"rho": 0.125, "sensitivity": 2.0})),
        ({"variance": 16.0, "sensitivity": 2.0}, 4.0, ("zCDP", {"rho": 0.125, "sensitivity": 2.0})),
        ({"sigma": 4.0}, 4.0, None),
    ],
)
def test_gaussian_calibration_is_one_formula(terms, sigma, implied):
    # sigma = Delta / sqrt(2 rho) = Delta / mu is rho-zCDP (CKS 2020, Thm 4; Bun & Steinke 2016)
    assert DISCRETE_GAUSSIAN.calibrate(**terms) == ({"sigma": sigma}, implied)
    assert GAUSSIAN.calibrate(terms) == ({"scale": sigma}, implied)


def test_the_mechanisms_use_the_families_calibration():
    for eps, sens in ((0.7, 3.0), (1e-3, 1.0)):
        r = M.discrete_laplace_mechanism([1, 2], epsilon=eps, sensitivity=sens, rng=0)
        assert dict(r.noise.params) == DISCRETE_LAPLACE.calibrate(epsilon=eps, sensitivity=sens)[0]
        r = M.laplace_mechanism([1.0], epsilon=eps, sensitivity=sens, rng=0)
        assert dict(r.noise.params) == LAPLACE.calibrate(epsilon=eps, sensitivity=sens)[0]
    r = M.tulap_mechanism([1.0], epsilon=0.8, delta=1e-3, sensitivity=2.0, rng=0)
    assert dict(r.noise.params) == TULAP.calibrate(epsilon=0.8, delta=1e-3, sensitivity=2.0)[0]
    with pytest.raises(InvariantDPError, match=r"\['bogus'\] are not parameters"):
        LAPLACE.calibrate(epsilon=1.0, sensitivity=1.0, bogus=2)


def test_every_mechanism_release_has_its_claim_checked():
    inv = totals([0, 0, 1, 1])
    releases = [
        M.laplace_mechanism([1.0, 2.0], epsilon=1.0, rng=0),
        M.laplace_mechanism([1.0, 2.0], epsilon=1.0, secure=True),
        M.gaussian_mechanism([1.0, 2.0], mu=1.0, rng=0),
        M.gaussian_mechanism([1.0, 2.0], epsilon=1.0, delta=1e-5, secure=True),
        M.discrete_laplace_mechanism([1, 2], epsilon=1.0, rng=0),
        M.discrete_gaussian_mechanism([1, 2], rho=0.5, rng=0),
        M.tulap_mechanism([1.0, 2.0], epsilon=1.0, delta=1e-4, rng=0),
        M.odds_ratio_release([[3, 4], [5, 6]], epsilon=1.0, rng=0),
        M.lp_mechanism([1.0, 2.0], 2, epsilon=1.0, rng=0),
    ]
    assert all(r.check_guarantee() for r in releases)
    # the projected families check their claim too (a pure epsilon, mu or rho)
    assert M.projected_gaussian([1.0, 2.0, 3.0, 4.0], inv, mu=1.0, rng=0).check_guarantee()
    assert M.projected_laplace([1.0, 2.0, 3.0, 4.0], inv, epsilon=1.0, rng=0).check_guarantee()


def test_an_overstated_claim_is_refused_by_the_family():
    r = M.discrete_gaussian_mechanism([1, 2], rho=0.5, rng=0)
    g = PrivacyGuarantee("zCDP", {"rho": 0.25}, r.guarantee.neighbours, None, "")
    lied = Release(r.value, r.mechanism, r.noise, g, metadata=dict(r.metadata))
    with pytest.raises(InvariantDPError, match=r"`guarantee.params.rho` \(0.25\) claims more"):
        lied.check_guarantee()
    with pytest.raises(InvariantDPError, match="claims more privacy"):
        Release.from_json(lied.to_json())
    # neighbours in words only: nothing bounds sigma against rho, so the release says it is
    # unchecked, and a mechanism's document stating them so is refused
    words = PrivacyGuarantee("zCDP", {"rho": 0.25}, "any two data sets", None, "")
    quiet = Release(r.value, r.mechanism, r.noise, words, metadata=dict(r.metadata))
    assert quiet.check_guarantee() is False
    with pytest.raises(InvariantDPError, match=r"`guarantee\.adjacency` .* must state the neigh"):
        Release.from_json(quiet.to_json())


def test_tails_come_from_the_family_only_where_it_has_a_view():
    t = TULAP.tails({"b": np.exp(-1.0), "q": 0.0}, {"epsilon": 1.0})
    assert t.log_b == -1.0 and t.tail_rate == 1.0 and t.exactly_symmetric
    for fam in (LAPLACE, DISCRETE_GAUSSIAN):
        with pytest.raises(InvariantDPError, match="gives no test view.*families with one: "):
            fam.tails({"scale": 1.0})


def test_the_lattice_cdf_is_the_closed_form_on_any_run():
    # one path for runs, for other increasing points, and for b = 0 (epsilon = inf)
    rng = np.random.default_rng(3)
    for eps in (1e-3, 0.5, 3.0, 800.0):
        t = TULAP.tails({"b": float(np.exp(-eps)), "q": 0.0}, {"epsilon": eps})
        for h in (np.arange(-40, 41), np.unique(rng.integers(-60, 60, 30))):
            for u, sign in ((0.3, 1.0), (-7.5, -1.0), (2.0, 1.0)):
                x = sign * (h - u)
                want = t.logcdf(x)
                np.testing.assert_allclose(t.logcdf_lattice(h, u, sign), want, rtol=1e-13)
                np.testing.assert_allclose(t.cdf_lattice(h, u, sign), np.exp(want), rtol=1e-13)


def test_likelihood_forms_are_objects_and_names_are_deprecated():
    lik = LAPLACE.likelihood({"scale": 2.0})
    assert lik.form is LAPLACE_LIKELIHOOD and lik.distribution == "LaplaceLikelihood"
    with pytest.warns(DeprecationWarning, match="naming its distribution by a string"):
        old = NoiseLikelihood("LaplaceLikelihood", {"scale": 2.0})
    assert old.form is LAPLACE_LIKELIHOOD
    with pytest.warns(DeprecationWarning, match="naming its distribution by a string"):
        assert NoiseLikelihood(distribution="LaplaceLikelihood", params={}).form is old.form
    with pytest.raises(InvariantDPError, match="names no built-in likelihood"):
        NoiseLikelihood("NoSuchLikelihood", {})
    with pytest.raises(TypeError, match="must be a LikelihoodForm"):
        NoiseLikelihood(3, {})


def test_exact_samplers_of_the_integer_families():
    got = DISCRETE_LAPLACE.exact_sampler({"scale": 2.5}, 50, 7)
    assert np.array_equal(got, sample_discrete_laplace_exact(2.5, size=50, rng=7))
    got = DISCRETE_GAUSSIAN.exact_sampler({"sigma": 1.5}, 50, 7)
    assert np.array_equal(got, sample_discrete_gaussian_exact(Fraction(1.5) ** 2, size=50, rng=7))
    assert noise_family("gaussian").exact_sampler is None


def test_correlated_gaussian_reads_checks_and_keeps_invariants():
    from scipy import stats

    from invariantdp.families import CORRELATED_GAUSSIAN

    rng = np.random.default_rng(11)
    A = rng.normal(size=(4, 4))
    cov = A @ A.T + 0.5 * np.eye(4)
    r = Release.from_published(
        [1.0, 2.0, 3.0, 4.0], noise="correlated_gaussian", cov=cov, sensitivity=2.0
    )
    back = Release.from_json(r.to_json())
    assert back == r and back.noise.spec is CORRELATED_GAUSSIAN and back.check_guarantee()
    v = rng.normal(size=4)
    want = stats.multivariate_normal(np.zeros(4), cov).logpdf(v)
    assert back.noise.distribution().logpdf(v) == pytest.approx(want, rel=1e-12)
    # rho = max over |Delta| <= 2 of Delta' Sigma^-1 Delta / 2, independently by the inverse
    inv_cov = np.linalg.inv(cov)
    worst = 2.0**2 * np.linalg.eigvalsh(inv_cov)[-1] / 2.0
    assert r.guarantee.params["rho"] == pytest.approx(worst, rel=1e-10)
    dirs = rng.normal(size=(2000, 4))
    dirs *= 2.0 / np.linalg.norm(dirs, axis=1, keepdims=True)
    assert np.max(np.einsum("ij,jk,ik->i", dirs, inv_cov, dirs)) / 2 <= worst * (1 + 1e-12)
    over = PrivacyGuarantee("zCDP", {"rho": 0.9 * worst}, QueryAdjacency("l2", 2.0), None, "")
    lied = Release(r.value, r.mechanism, r.noise, over, metadata={"sensitivity": 2.0})
    with pytest.raises(InvariantDPError, match="claims more privacy.*rho ="):
        Release.from_json(lied.to_json())
    # the sensitivity beside an adjacency in words is not read: such a document is refused
    words = PrivacyGuarantee("zCDP", {"rho": 0.9 * worst}, "", None, "")
    lied = Release(r.value, r.mechanism, r.noise, words, metadata={"sensitivity": 2.0})
    with pytest.raises(InvariantDPError, match="must state the neighbours"):
        Release.from_json(lied.to_json())
    # noise in ker C (a GLS estimate's covariance) keeps the invariants; its claim is unchecked
    inv = totals([0, 0, 1, 1]).of([1.0, 2.0, 3.0, 4.0])
    kept = Release.from_published(
        [1.2, 1.8, 3.5, 3.5], noise="correlated_gaussian", cov=inv.projector(), invariants=inv
    )
    assert Release.from_json(kept.to_json()) == kept and kept.guarantee.definition == "unstated"
    stated = PrivacyGuarantee("zCDP", {"rho": 1e-3}, QueryAdjacency("l2", 1.0), None, "")
    claimed = Release(
        kept.value,
        kept.mechanism,
        kept.noise,
        stated,
        kept.invariants,
        data_shape=kept.data_shape,
        metadata={"sensitivity": 1.0},
    )
    assert Release.from_json(claimed.to_json()).check_guarantee() is False  # range not stated
    with pytest.raises(InvariantDPError, match="keeps the invariants exactly"):
        Release.from_published(
            [1.2, 1.9, 3.5, 3.5], noise="correlated_gaussian", cov=inv.projector(), invariants=inv
        )


@pytest.mark.parametrize(
    "cov, match",
    [
        ([[1.0, 0.2], [0.3, 1.0]], "must be symmetric"),
        ([[1.0, 2.0], [2.0, 1.0]], "positive semi-definite"),
        ([[1.0, 0.0, 0.0]], "must have 1 entries"),
        ([[1.0]], "describes noise on 1 coordinates but `value` has 2"),
    ],
)
def test_correlated_gaussian_schema_names_the_field(cov, match):
    from invariantdp.mechanisms import laplace_mechanism

    doc = laplace_mechanism([1.0, 2.0], epsilon=1.0, rng=0).to_dict()
    doc["noise"] = {"family": "correlated_gaussian", "params": {"cov": cov}}
    with pytest.raises(InvariantDPError, match=match):
        Release.from_dict(doc)
