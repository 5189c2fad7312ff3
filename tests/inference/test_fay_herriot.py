"""FayHerriot: REML against closed forms and a direct maximisation, EBLUP and Prasad-Rao MSE
against Rao & Molina's formulas and their matrix form for full V, coverage by simulation."""

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from invariantdp import Release
from invariantdp.exceptions import InvariantDPError
from invariantdp.inference import FayHerriot
from invariantdp.invariants import totals


def county_cov(m, k, rng):
    """Errors of ``m`` tract estimates, counties of ``k`` tracts sharing a county error
    (correlation 0.5), projected to sum to zero (an exact state total, as GLS keeps it)."""
    v = rng.uniform(0.5, 2.0, m)
    county = np.repeat(np.arange(m // k), k)
    C = np.sqrt(np.outer(v, v)) * np.where(county[:, None] == county[None, :], 0.5, 0.0)
    np.fill_diagonal(C, v)
    Pi = np.eye(m) - np.full((m, m), 1.0 / m)
    return Pi @ C @ Pi


def direct_reml(y, X, V, s):
    """The restricted log-likelihood in its textbook form (Harville 1977), up to a constant."""
    S = s * np.eye(len(y)) + V
    Si = np.linalg.inv(S)
    XtSiX = X.T @ Si @ X
    P = Si - Si @ X @ np.linalg.solve(XtSiX, X.T @ Si)
    return -0.5 * (np.linalg.slogdet(S)[1] + np.linalg.slogdet(XtSiX)[1] + y @ P @ y), P


def _design(m, rng):
    return np.column_stack([np.ones(m), rng.uniform(0, 1, m)])


def test_balanced_reml_is_the_closed_form(rng):
    m, v = 30, 0.8
    X = _design(m, rng)
    for sd_u in (1.5, 0.0):  # an interior maximum, and the boundary sigma2_u = 0
        y = X @ [10.0, 5.0] + rng.normal(0, sd_u, m) + rng.normal(0, np.sqrt(v), m)
        rel = Release.from_published(y, noise="gaussian", sigma=np.sqrt(v))
        res = FayHerriot(rel, X).fit()
        rss = np.sum((y - X @ np.linalg.lstsq(X, y, rcond=None)[0]) ** 2)
        expected = max(0.0, rss / (m - 2) - v)
        assert res.sigma2_u == pytest.approx(expected, rel=1e-9, abs=1e-12)
        # equal variances: GLS is OLS whatever sigma2_u
        np.testing.assert_allclose(res.params, np.linalg.lstsq(X, y, rcond=None)[0], rtol=1e-10)


def test_reml_with_full_covariance_maximises_the_textbook_restricted_likelihood(rng):
    m = 40
    X = _design(m, rng)
    V = county_cov(m, 5, rng)
    y = X @ [10.0, 5.0] + rng.normal(0, 1.0, m) + rng.multivariate_normal(np.zeros(m), V)
    rel = Release.from_published(
        y, noise="correlated_gaussian", cov=V, invariants=totals(np.zeros(m, int)).of(y)
    )
    res = FayHerriot(rel, X).fit()
    best = optimize.minimize_scalar(
        lambda s: -direct_reml(y, X, V, s)[0],
        bounds=(1e-8, 20.0),
        method="bounded",
        options={"xatol": 1e-10},
    )
    assert res.sigma2_u == pytest.approx(best.x, rel=1e-6)
    # the two log-likelihoods differ by a constant: compare differences
    lo, hi = 0.5 * res.sigma2_u, 2.0 * res.sigma2_u
    model = res.model
    np.testing.assert_allclose(
        model.reml_loglike(hi) - model.reml_loglike(lo),
        direct_reml(y, X, V, hi)[0] - direct_reml(y, X, V, lo)[0],
        rtol=1e-9,
    )
    Si = np.linalg.inv(res.sigma2_u * np.eye(m) + V)
    cov = np.linalg.inv(X.T @ Si @ X)
    np.testing.assert_allclose(res.params, cov @ X.T @ Si @ y, rtol=1e-9)
    np.testing.assert_allclose(res.bse, np.sqrt(np.diag(cov)), rtol=1e-9)


def test_eblup_and_mse_are_rao_and_molinas_for_diagonal_covariance(rng):
    m = 25
    X = _design(m, rng)
    D = rng.uniform(0.3, 3.0, m)
    y = X @ [10.0, 5.0] + rng.normal(0, 1.2, m) + rng.normal(0, np.sqrt(D))
    labels = pd.Index([f"T{i:02d}" for i in range(m)], name="tract")
    rel = Release.from_published(
        pd.Series(y, index=labels, name="income"), noise="correlated_gaussian", cov=np.diag(D)
    )
    res = FayHerriot(rel, X).fit()
    s = res.sigma2_u
    assert s > 0
    # Rao & Molina (2015), Eq. 6.2.3 (EBLUP) and 6.2.5-6.2.8 (g1, g2, g3)
    gamma = s / (s + D)
    beta = res.params.to_numpy()
    A = np.linalg.inv((X / (s + D)[:, None]).T @ X)
    g1 = gamma * D
    g2 = (1 - gamma) ** 2 * np.einsum("ij,jk,ik->i", X, A, X)
    _, P = direct_reml(y, X, np.diag(D), s)
    vbar = 2.0 / np.trace(P @ P)  # the inverse REML information
    g3 = D**2 / (s + D) ** 3 * vbar
    e = res.eblup(confidence_level=0.9)
    assert e.index.equals(labels)
    np.testing.assert_allclose(e["estimate"], gamma * y + (1 - gamma) * (X @ beta), rtol=1e-10)
    np.testing.assert_allclose(e["mse"], g1 + g2 + 2 * g3, rtol=1e-8)
    half = stats.norm.ppf(0.95) * np.sqrt(g1 + g2 + 2 * g3)
    np.testing.assert_allclose(e["ci_upper"] - e["estimate"], half, rtol=1e-8)
    assert res.sigma2_u_se == pytest.approx(np.sqrt(vbar), rel=1e-8)
    assert "Dep. Variable:               income" in str(res.summary())


def test_eblup_and_mse_with_full_covariance_are_their_matrix_forms(rng):
    m = 30
    X = _design(m, rng)
    V = county_cov(m, 3, rng)
    y = X @ [10.0, 5.0] + rng.normal(0, 1.0, m) + rng.multivariate_normal(np.zeros(m), V)
    rel = Release.from_published(
        y, noise="correlated_gaussian", cov=V, invariants=totals(np.zeros(m, int)).of(y)
    )
    res = FayHerriot(rel, X).fit()
    s = res.sigma2_u
    I = np.eye(m)
    Si = np.linalg.inv(s * I + V)
    beta = res.params.to_numpy()
    theta = X @ beta + s * Si @ (y - X @ beta)
    g1 = np.diag(s * I - s**2 * Si)
    Dm = X - s * Si @ X
    g2 = np.einsum("ij,jk,ik->i", Dm, np.linalg.inv(X.T @ Si @ X), Dm)
    _, P = direct_reml(y, X, V, s)
    dB = Si @ V @ Si  # d/dsigma2 of the residual weights sigma2 Sigma^-1
    g3 = np.diag(dB @ (s * I + V) @ dB) * 2.0 / np.trace(P @ P)
    e = res.eblup()
    np.testing.assert_allclose(e["estimate"], theta, rtol=1e-9)
    np.testing.assert_allclose(e["mse"], g1 + g2 + 2 * g3, rtol=1e-7)
    np.testing.assert_allclose(res.direct_weight(), np.diag(s * Si), rtol=1e-9)
    # the estimates keep the state total: so do the EBLUPs
    assert e["estimate"].sum() == pytest.approx(y.sum(), rel=1e-10)


def test_the_full_covariance_changes_the_eblups_against_its_diagonal():
    """With full V the EBLUP differs from the diagonal-V fit of the same estimates."""
    gen = np.random.default_rng(11)
    m = 30
    X = _design(m, gen)
    V = county_cov(m, 5, gen)
    y = X @ [10.0, 5.0] + gen.normal(0, 1.0, m) + gen.multivariate_normal(np.zeros(m), V)
    full = FayHerriot(Release.from_published(y, noise="correlated_gaussian", cov=V), X).fit()
    diag = FayHerriot(
        Release.from_published(y, noise="correlated_gaussian", cov=np.diag(np.diag(V))), X
    ).fit()
    assert np.max(np.abs(full.eblup()["estimate"] - diag.eblup()["estimate"])) > 0.05
    assert "full (correlated errors)" in str(full.summary())
    assert "diagonal" in str(diag.summary())


def _coverage(n_rep, seed):
    rng = np.random.default_rng(seed)
    m = 60
    X = _design(m, rng)
    V = county_cov(m, 5, rng)
    w, U = np.linalg.eigh(V)
    root = U * np.sqrt(np.clip(w, 0.0, None))
    hits = []
    for _ in range(n_rep):
        theta = X @ [10.0, 5.0] + rng.normal(0, 1.0, m)
        y = theta + root @ rng.standard_normal(m)
        rel = Release.from_published(
            y, noise="correlated_gaussian", cov=V, invariants=totals(np.zeros(m, int)).of(y)
        )
        e = FayHerriot(rel, X).fit().eblup()
        hits.append(np.mean((e["ci_lower"] <= theta) & (theta <= e["ci_upper"])))
    hits = np.array(hits)
    return hits.mean(), hits.std(ddof=1) / np.sqrt(n_rep)


def test_eblup_coverage_fast():
    cover, se = _coverage(40, 3)
    assert abs(cover - 0.95) < 4 * se + 0.01


@pytest.mark.slow
def test_eblup_coverage_over_200_releases():
    cover, se = _coverage(200, 2029)
    assert 0.93 <= cover <= 0.97
    assert abs(cover - 0.95) < 4 * se + 0.01


def test_from_formula_matches_rows_by_the_release_labels(rng):
    m = 20
    areas = pd.Index([f"A{i:02d}" for i in range(m)], name="area")
    data = pd.DataFrame({"x": rng.uniform(0, 1, m), "region": list("NS") * 10}, index=areas)
    y = pd.Series(10 + 5 * data["x"] + rng.normal(0, 1, m), index=areas, name="income")
    rel = Release.from_published(y, noise="gaussian", sigma=0.5)
    shuffled = data.sample(frac=1.0, random_state=1)
    model = FayHerriot.from_formula("~ x + C(region)", rel, shuffled)
    assert model.exog_names == ["Intercept", "C(region)[T.S]", "x"]
    X = np.column_stack([np.ones(m), (data["region"] == "S").astype(float), data["x"]])
    direct = FayHerriot(rel, X).fit()
    np.testing.assert_allclose(model.fit().params, direct.params, rtol=1e-10)
    assert list(model.fit().eblup().index) == list(areas)
    with pytest.raises(InvariantDPError, match="no row for 'A03'"):
        FayHerriot.from_formula("~ x", rel, data.drop("A03"))
    with pytest.raises(InvariantDPError, match="left side must be a plain name"):
        FayHerriot.from_formula("log(y) ~ x", rel, data)


def test_bad_designs_are_refused(rng):
    y = rng.normal(size=10)
    rel = Release.from_published(y, noise="gaussian", sigma=1.0)
    with pytest.raises(InvariantDPError, match=r"`exog` must have shape \(10, p\)"):
        FayHerriot(rel, np.ones((9, 2)))
    with pytest.raises(InvariantDPError, match="full column rank"):
        FayHerriot(rel, np.column_stack([np.ones(10), np.ones(10)]))
    with pytest.raises(InvariantDPError, match="fewer columns"):
        FayHerriot(rel, np.eye(10))
    with pytest.raises(ValueError, match="confidence_level"):
        FayHerriot(rel, np.ones(10)).fit().eblup(confidence_level=95)
