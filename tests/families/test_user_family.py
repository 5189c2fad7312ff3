"""A noise family registered by a user works end to end.

Logistic noise is no family of the package.  Registered with its schema,
calibration, claim check, test view and likelihood form, a release of a
count with logistic noise is built from published numbers, written to JSON
and read back, and then tested (the binomial test sums its cdf) and modelled
(PyMC observes it through the form's logp): each checked against an
independent computation from the logistic law.
"""

import json
import math

import numpy as np
import pytest
from scipy import stats

from invariantdp import InvariantDPError, PrivacyGuarantee, Release, ump_binomial_test
from invariantdp.families import (
    LikelihoodForm,
    NoiseLikelihood,
    NoiseTails,
    noise_family,
    overstated,
    register_noise_family,
)

NAME = "logistic_user_family_test"


def _schema(params, path, context):
    if not isinstance(params, dict) or set(params) != {"scale"}:
        raise InvariantDPError(f"`{path}` ({params!r}) must be {{'scale': s}}.")
    s = params["scale"]
    if isinstance(s, bool) or not isinstance(s, int | float) or not 0 < s < math.inf:
        raise InvariantDPError(f"`{path}.scale` ({s!r}) must be a number > 0.")
    return {}


def _terms(given, invariants):
    # logistic noise of scale sensitivity / epsilon is epsilon-DP: |d/dx log f| <= 1 / scale
    eps, sens = given.pop("epsilon"), given.pop("sensitivity")
    return {"scale": sens / eps}, ("epsilon-DP", {"epsilon": eps, "sensitivity": sens})


def _claim(params, definition, guarantee, metadata):
    sens = guarantee.get("sensitivity", metadata.get("sensitivity"))
    if definition != "epsilon-DP" or sens is None:
        return False
    need = sens / params["scale"]
    if guarantee["epsilon"] < need * (1 - 1e-9):
        raise overstated("epsilon", guarantee["epsilon"], f"logistic noise gives {need}.")
    return True


def _logp(z, p, xp):
    u = z / p["s"]
    return -u - 2.0 * xp.log1p(xp.exp(-u)) - math.log(p["s"])


LOGISTIC = LikelihoodForm(
    "LogisticLikelihood",
    logp=_logp,
    draw=lambda gen, shape, p: gen.logistic(0.0, p["s"], size=shape),
)


@pytest.fixture(scope="module")
def family():
    return register_noise_family(
        NAME,
        lambda p: stats.logistic(scale=p["scale"]),
        schema=_schema,
        terms=_terms,
        claim=_claim,
        tails=lambda p, g: NoiseTails(stats.logistic(scale=p["scale"]), "logistic noise"),
        likelihood=lambda p, congenial: NoiseLikelihood(
            LOGISTIC, {"s": p["scale"]}, sd=p["scale"] * math.pi / math.sqrt(3.0)
        ),
    )


@pytest.fixture(scope="module")
def release(family):
    true_count, n = 31, 80
    noisy = true_count + stats.logistic(scale=2.0).rvs(random_state=np.random.default_rng(5))
    return Release.from_published(noisy, noise=NAME, epsilon=0.5, sensitivity=1.0), n


def test_a_user_family_is_released_written_and_read_back(family, release):
    rel, _ = release
    assert noise_family(NAME) is family and rel.noise.spec is family
    assert dict(rel.noise.params) == {"scale": 2.0}
    assert rel.guarantee.definition == "epsilon-DP" and rel.check_guarantee()
    back = Release.from_json(rel.to_json())
    assert back == rel and back.noise.distribution().std() == pytest.approx(2.0 * math.pi / 3**0.5)
    # the family's own claim check refuses an overstated document, naming both numbers
    doc = json.loads(rel.to_json())
    doc["guarantee"]["params"]["epsilon"] = 0.25
    with pytest.raises(InvariantDPError, match=r"epsilon` \(0.25\) claims more privacy.*0.5"):
        Release.from_dict(doc)
    doc["noise"]["params"]["scale"] = -1.0
    with pytest.raises(InvariantDPError, match=r"`noise.params.scale` \(-1.0\) must be"):
        Release.from_dict(doc)


def test_the_binomial_test_sums_the_user_law(release):
    rel, n = release
    back = Release.from_json(rel.to_json())
    res = ump_binomial_test(back, n, 0.3, alternative="greater")
    # independent: E F(X - z) with X ~ Bin(n, 0.3), F the logistic cdf of scale 2
    x = np.arange(n + 1)
    z = float(rel.value)
    want = float(np.sum(stats.binom.pmf(x, n, 0.3) * stats.logistic.cdf(x - z, scale=2.0)))
    assert res.pvalue == pytest.approx(want, rel=1e-12)
    assert res.noise == "logistic noise" and res.epsilon is None
    lo, hi = res.confidence_interval(0.9)
    assert 0.0 < lo < z / n < hi == 1.0


def test_a_family_without_a_claim_or_a_test_view_is_read_unchecked(family):
    bare = register_noise_family(
        NAME + "_bare", lambda p: stats.logistic(scale=p["scale"]), schema=_schema
    )
    stated = PrivacyGuarantee("epsilon-DP", {"epsilon": 0.1}, "as stated", None, "")
    rel = Release.from_published([4.2], noise=bare.name, scale=1.0, guarantee=stated)
    back = Release.from_json(rel.to_json())  # read: the claim cannot be checked
    assert back == rel and back.check_guarantee() is False
    with pytest.raises(InvariantDPError, match="needs Tulap .* or a noise family with a test"):
        ump_binomial_test(back, 10, 0.5)


def test_pymc_observes_the_user_law_through_its_form(release):
    pm = pytest.importorskip("pymc")
    from invariantdp.inference.bayes import binomial_model, likelihood_class, mechanism_likelihood

    rel, n = release
    spec = rel.noise.spec.likelihood(rel.noise.params)
    cls = likelihood_class(spec)
    assert cls.__name__ == "LogisticLikelihood" and cls.form is LOGISTIC
    z = float(rel.value)
    with pm.Model() as m:
        x = pm.Flat("x")
        mechanism_likelihood("y", rel, x)
    got = m.compile_logp()({"x": 30.0})
    assert got == pytest.approx(stats.logistic.logpdf(z - 30.0, scale=2.0), rel=1e-12)
    model = binomial_model(rel, n)
    logp = model.compile_logp(jacobian=False, sum=False)
    k = np.arange(n + 1)

    def release_term(theta):  # the marginal likelihood of the release, summed over the count
        return logp({"theta_logodds__": math.log(theta / (1 - theta))})[-1]

    def want(theta):
        return np.log(np.sum(stats.binom.pmf(k, n, theta) * stats.logistic.pdf(z - k, scale=2.0)))

    # differences in theta: PyTensor's gammaln(n + 1) of a float32 constant adds ~1e-6 to both
    got = release_term(0.4) - release_term(0.2)
    assert got == pytest.approx(want(0.4) - want(0.2), rel=1e-10)
    assert release_term(0.4) == pytest.approx(want(0.4), rel=1e-5)
    draws = pm.draw(cls.dist(np.zeros(4000), s=2.0), random_seed=1)
    assert abs(draws.std() - 2.0 * math.pi / 3**0.5) < 0.15  # logistic sd, 4000 draws: se ~0.06
