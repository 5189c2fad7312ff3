"""fay_herriot_model: its log density is the marginal Gaussian law of the estimates, theta's
draws follow their conditional law, and the posterior agrees with the REML fit."""

import numpy as np
import pytest
from scipy import stats

pm = pytest.importorskip("pymc")

from invariantdp import Release  # noqa: E402
from invariantdp.exceptions import InvariantDPError  # noqa: E402
from invariantdp.inference import FayHerriot  # noqa: E402
from invariantdp.inference.bayes import fay_herriot_model, fit  # noqa: E402
from invariantdp.invariants import totals  # noqa: E402

from ..test_fay_herriot import county_cov  # noqa: E402


def _release(rng, m=12, k=4):
    X = np.column_stack([np.ones(m), rng.uniform(0, 1, m)])
    V = county_cov(m, k, rng)
    y = X @ [10.0, 5.0] + rng.normal(0, 1.0, m) + rng.multivariate_normal(np.zeros(m), V)
    rel = Release.from_published(
        y, noise="correlated_gaussian", cov=V, invariants=totals(np.zeros(m, int)).of(y)
    )
    return rel, X, V, y


def test_the_log_density_is_the_marginal_law_of_the_estimates(rng):
    rel, X, V, y = _release(rng)
    m = y.size
    model = fay_herriot_model(rel, X, prior_sigma=10.0, prior_sigma_u=2.0)
    logp = model.compile_logp(jacobian=False)
    for beta, sigma_u in (([9.0, 6.0], 0.7), ([10.5, 4.0], 1.9)):
        xi = rng.normal(size=m)
        point = {"beta": np.array(beta), "sigma_u_log__": np.log(sigma_u), "area_innovation": xi}
        expected = (
            stats.multivariate_normal.logpdf(y, X @ beta, sigma_u**2 * np.eye(m) + V)
            + stats.norm.logpdf(beta, 0.0, 10.0).sum()
            + stats.halfcauchy.logpdf(sigma_u, scale=2.0)
            + stats.norm.logpdf(xi).sum()
        )
        assert logp(point) == pytest.approx(expected, rel=1e-8)


def test_theta_is_drawn_from_its_conditional_law(rng):
    rel, X, V, y = _release(rng)
    m = y.size
    model = fay_herriot_model(rel, X)
    graph = model.replace_rvs_by_values([model["theta"]])[0]
    theta = model.compile_fn(graph, inputs=model.value_vars, on_unused_input="ignore")
    beta, sigma_u = np.array([9.5, 5.5]), 1.3
    s2 = sigma_u**2

    def at(xi):
        return theta({"beta": beta, "sigma_u_log__": np.log(sigma_u), "area_innovation": xi})

    Si = np.linalg.inv(s2 * np.eye(m) + V)
    mean = X @ beta + s2 * Si @ (y - X @ beta)
    np.testing.assert_allclose(at(np.zeros(m)), mean, rtol=1e-10)
    T = np.column_stack([at(e) - mean for e in np.eye(m)])  # theta is linear in xi
    np.testing.assert_allclose(T @ T.T, s2 * Si @ V, atol=1e-10)
    # every draw keeps the state total the estimates keep
    assert at(rng.normal(size=m)).sum() == pytest.approx(y.sum(), rel=1e-12)


def test_bad_input_is_refused(rng):
    rel, X, _, _ = _release(rng)
    with pytest.raises(InvariantDPError, match=r"`exog` must have shape \(12, p\)"):
        fay_herriot_model(rel, X[:5])
    with pytest.raises(InvariantDPError, match="full column rank"):
        fay_herriot_model(rel, np.column_stack([X, X[:, 1]]))
    with pytest.raises(ValueError, match="prior_sigma_u"):
        fay_herriot_model(rel, X, prior_sigma_u=-1.0)


@pytest.mark.slow
def test_the_posterior_agrees_with_the_reml_fit():
    gen = np.random.default_rng(3)
    rel, X, _, y = _release(gen, m=40, k=5)
    idata = fit(fay_herriot_model(rel, X), draws=1000, tune=1000, chains=2, rng=1)
    theta = idata.posterior["theta"].stack(s=("chain", "draw")).to_numpy()
    e = FayHerriot(rel, X).fit().eblup()
    # posterior means within a tenth of an EBLUP's root MSE; sds within 15% of it
    rmse = np.sqrt(e["mse"].to_numpy())
    assert np.max(np.abs(theta.mean(axis=1) - e["estimate"].to_numpy()) / rmse) < 0.1
    np.testing.assert_allclose(theta.std(axis=1), rmse, rtol=0.15)
