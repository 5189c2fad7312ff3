"""compare_lr_test and wald_test of groups of terms for the privatized models (issue 22):
their arithmetic, their refusals, and their size, uniformity and power by simulation."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from invariantdp import Release
from invariantdp.inference import (
    LikelihoodRatioTestResult,
    PrivatizedLogLinear,
    PrivatizedPoisson,
)
from invariantdp.invariants import totals
from invariantdp.mechanisms import (
    discrete_gaussian_mechanism,
    projected_gaussian,
    semi_dp_gaussian,
)

from .size_checks import check_size_and_power

N = 40
STATE = totals(np.zeros(N, dtype=int))


def _design(rng):
    return pd.DataFrame(
        {
            "const": 1.0,
            "density": np.linspace(-1.5, 1.5, N),
            "x1": rng.normal(size=N),
            "x2": rng.normal(size=N),
        }
    )


def _release(s, child):
    """Discrete Gaussian counts (rho = 0.5) with the state total published exactly."""
    y = discrete_gaussian_mechanism(s, rho=0.5, rng=child).value
    return Release.from_published(
        y, noise="discrete_gaussian", rho=0.5, sensitivity=1.0, invariants=STATE.of(s)
    )


def test_the_result_unpacks_as_statsmodels_and_is_plain_data():
    r = LikelihoodRatioTestResult(3.2, 0.0736, 1, "exact")
    lr, p, df = r
    assert (lr, p, df) == (3.2, 0.0736, 1) and r[2] == 1 and len(r) == 3
    assert json.loads(json.dumps(r.to_dict()))["df_diff"] == 1
    assert "Likelihood ratio test" in str(r.summary())


def test_compare_lr_test_and_wald_test_arithmetic():
    rng = np.random.default_rng(1)
    X = _design(rng)
    s = rng.poisson(np.exp(3.0 + 0.4 * X["density"]))
    rel = _release(s, rng)
    full = PrivatizedPoisson(rel, X).fit(disp=0)
    restricted = PrivatizedPoisson(rel, X[["const", "density"]]).fit(disp=0)
    lr = full.compare_lr_test(restricted)
    assert lr.df_diff == 2 and lr.likelihood == "exact"
    assert lr.statistic == pytest.approx(2 * (full.llf - restricted.llf), rel=1e-12)
    assert lr.pvalue == pytest.approx(stats.chi2.sf(lr.statistic, 2), rel=1e-12)
    # Wald: the constraint string, the matrix, and (R b)' (R V R')^-1 (R b) agree
    w = full.wald_test("x1 = 0, x2 = 0", scalar=True)
    R = np.eye(4)[2:]
    b, V = np.asarray(full.params), np.asarray(full.cov_params())
    want = float(R @ b @ np.linalg.solve(R @ V @ R.T, R @ b))
    assert w.statistic == pytest.approx(want, rel=1e-9)
    assert full.wald_test(R, scalar=True).statistic == pytest.approx(want, rel=1e-9)
    assert w.pvalue == pytest.approx(stats.chi2.sf(want, 2), rel=1e-9)
    # the two tests of one null hypothesis are close in a large sample
    assert abs(w.statistic - lr.statistic) < 0.5 * max(1.0, lr.statistic)


def test_compare_lr_test_refusals():
    rng = np.random.default_rng(2)
    X = _design(rng)
    s = rng.poisson(np.exp(3.0 + 0.4 * X["density"]))
    rel = _release(s, rng)
    full = PrivatizedPoisson(rel, X).fit(disp=0)
    other = PrivatizedPoisson(_release(s, rng), X[["const"]]).fit(disp=0)
    with pytest.raises(ValueError, match="same release with the same likelihood"):
        full.compare_lr_test(other)
    gaussian = PrivatizedPoisson(rel, X[["const"]], likelihood="gaussian").fit(disp=0)
    with pytest.raises(ValueError, match="same likelihood \\(exact\\).*gaussian likelihood"):
        full.compare_lr_test(gaussian)
    not_nested = PrivatizedPoisson(rel, pd.DataFrame({"const": 1.0, "z": np.arange(N) ** 2.0}))
    with pytest.raises(ValueError, match="must be nested in this model"):
        full.compare_lr_test(not_nested.fit(disp=0))
    with pytest.raises(ValueError, match="must be nested"):
        PrivatizedPoisson(rel, X[["const"]]).fit(disp=0).compare_lr_test(full)
    with pytest.raises(ValueError, match="results of a privatized count model"):
        full.compare_lr_test(object())


def _size_and_power(n_rep, seed):
    rng = np.random.default_rng(seed)
    X = _design(rng)
    p = {"lr": [], "wald": []}
    hits = {"lr": 0, "wald": 0}
    n_alt = n_rep // 4
    for i, child in enumerate(rng.spawn(n_rep)):
        for beta, store in (((0.0, 0.0), p), ((0.08, 0.08), None)):
            if store is None and i >= n_alt:
                continue
            eta = 3.0 + 0.4 * X["density"] + beta[0] * X["x1"] + beta[1] * X["x2"]
            rel = _release(child.poisson(np.exp(eta)), child)
            full = PrivatizedPoisson(rel, X).fit(disp=0)
            lr = full.compare_lr_test(PrivatizedPoisson(rel, X[["const", "density"]]).fit(disp=0))
            wald = full.wald_test("x1 = 0, x2 = 0", scalar=True)
            if store is not None:
                store["lr"].append(lr.pvalue)
                store["wald"].append(float(wald.pvalue))
            else:
                hits["lr"] += lr.pvalue < 0.05
                hits["wald"] += wald.pvalue < 0.05
    return {m: np.array(v) for m, v in p.items()}, {m: v / n_alt for m, v in hits.items()}


def test_size_uniformity_and_power_of_a_group_of_terms():
    # two covariates, truly null, in a regression of 40 county counts (discrete Gaussian,
    # rho = 0.5, exact state total: the exact likelihood)
    p, power = _size_and_power(200, seed=5)
    check_size_and_power("x1, x2 = 0 (power at 0.08, 0.08)", p, power, 200, 0.5)


@pytest.mark.slow
def test_size_uniformity_and_power_of_a_group_of_terms_slow():
    p, power = _size_and_power(1000, seed=6)
    check_size_and_power("x1, x2 = 0 (power at 0.08, 0.08)", p, power, 1000, 0.5)


def test_a_formula_group_of_terms_on_a_projected_release():
    rng = np.random.default_rng(9)
    cells = pd.DataFrame(
        {"sex": np.repeat(["F", "M"], 20), "age": np.tile(["0-17", "18-64", "65+", "85+"], 10)}
    )
    s = rng.poisson(80.0, N).astype(float)
    rel = projected_gaussian(s, STATE, mu=0.5, rng=1)
    cells["count"] = rel.value
    full = PrivatizedPoisson.from_formula("count ~ C(sex) * C(age)", cells, release=rel).fit(disp=0)
    main = PrivatizedPoisson.from_formula("count ~ C(sex) + C(age)", cells, release=rel).fit(disp=0)
    lr, p, df = full.compare_lr_test(main)
    assert df == 3 and 0.0 < p <= 1.0
    names = [n for n in full.params.index if ":" in n]
    wald = full.wald_test(", ".join(f"{n} = 0" for n in names), scalar=True)
    assert wald.df_denom == 3 and abs(wald.statistic - lr) < max(1.0, 0.5 * lr)


def test_a_fit_given_the_margins_is_compared_only_with_its_own_kind():
    rel = semi_dp_gaussian([[60, 20, 30], [25, 55, 31]], mu=0.5, rng=3)
    given_margins = PrivatizedLogLinear(rel)
    assert given_margins.conditioned_on_margins
    joint = PrivatizedPoisson(rel, given_margins.exog[:, :1]).fit(disp=0)
    with pytest.raises(ValueError, match="same release with the same likelihood"):
        given_margins.fit(disp=0).compare_lr_test(joint)
