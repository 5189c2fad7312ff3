"""Simulation-based calibration (Talts et al. 2018) and coverage of the PyMC models.

For each model, ``REPLICATES`` data sets are simulated from the prior and the
mechanism; each is fitted; the rank of the true parameter among ``L``
thinned posterior draws is recorded.  Under a calibrated posterior the ranks
are uniform on ``{0, .., L}``: a chi-square test over ``BINS`` equal bins must
give p > 0.001.  The same fits give the coverage of central 90% credible
intervals (between 85% and 95%).  The naive posterior, which treats the noisy
release as the confidential counts, is run on the same simulations and fails.
Seeds are fixed, so the p-values are reproducible.
"""

import numpy as np
import pytest

pm = pytest.importorskip("pymc")

from scipy import stats  # noqa: E402

from invariantdp import mechanisms  # noqa: E402
from invariantdp.inference.bayes import (  # noqa: E402
    binomial_model,
    contingency_table_model,
    fit,
    poisson_regression_model,
)
from invariantdp.invariants import one_way_margins, totals  # noqa: E402
from invariantdp.mechanisms import _subspace_mechanisms as subspace  # noqa: E402

pytestmark = pytest.mark.slow

REPLICATES = 200
L = 99  # posterior draws per rank (ranks in 0..L)
BINS = 10


def _rank(draws, truth, gen):
    """Rank of ``truth`` among ``L`` draws thinned evenly from ``draws`` (ties broken at random)."""
    idx = np.linspace(0, draws.size - 1, L).round().astype(int)
    d = draws[idx]
    return int(np.sum(d < truth) + gen.integers(0, np.sum(d == truth) + 1))


def _chi2_pvalue(ranks):
    counts = np.bincount(np.asarray(ranks) * BINS // (L + 1), minlength=BINS)
    return float(stats.chisquare(counts).pvalue)


def _covered(draws, truth):
    lo, hi = np.quantile(draws, [0.05, 0.95])
    return lo <= truth <= hi


def _report(name, ranks, cover):
    pvals = [_chi2_pvalue(r) for r in ranks.T]
    print(f"{name}: SBC chi-square p = {np.round(pvals, 4)}, coverage = {np.mean(cover, 0)}")
    return np.array(pvals), np.mean(cover, axis=0)


def test_sbc_binomial_tulap():
    gen = np.random.default_rng(20240501)
    n, a, b = 20, 2.0, 2.0
    ranks, naive, cover, naive_cover = [], [], [], []
    for child in gen.spawn(REPLICATES):
        theta = child.beta(a, b)
        x = child.binomial(n, theta)
        r = mechanisms.tulap_mechanism(x, epsilon=0.5, rng=child)
        idata = fit(binomial_model(r, n, prior=(a, b)), draws=400, tune=200, chains=1, rng=child)
        draws = idata.posterior["theta"].values.reshape(-1)
        ranks.append([_rank(draws, theta, child)])
        cover.append([_covered(draws, theta)])
        yc = float(np.clip(r.value, 0, n))  # naive: the release as the count
        nd = child.beta(a + yc, b + n - yc, size=400)
        naive.append([_rank(nd, theta, child)])
        naive_cover.append([_covered(nd, theta)])
    p, c = _report("binomial", np.array(ranks), cover)
    pn, cn = _report("binomial naive", np.array(naive), naive_cover)
    assert np.all(p > 0.001) and np.all((c >= 0.85) & (c <= 0.95))
    assert np.all(pn < 0.001) and np.all(cn < 0.85)


def test_sbc_contingency_table():
    gen = np.random.default_rng(20240502)
    N, alpha = 60, np.full(4, 2.0)
    inv = one_way_margins((2, 2))
    ranks, naive, cover, naive_cover = [], [], [], []
    for child in gen.spawn(REPLICATES):
        p = child.dirichlet(alpha)
        s = child.multinomial(N, p).reshape(2, 2)
        r = subspace.projected_gaussian(s, inv, mu=1 / 4.0, rng=child)
        idata = fit(contingency_table_model(r, prior=2.0), draws=400, tune=200, chains=1, rng=child)
        post = idata.posterior["cell_probs"].values.reshape(-1, 4)
        ranks.append([_rank(post[:, j], p[j], child) for j in range(4)])
        cover.append([_covered(post[:, j], p[j]) for j in range(4)])
        y = np.maximum(r.value.reshape(-1), 0.0)
        nd = child.dirichlet(alpha + y, size=400)
        naive.append([_rank(nd[:, j], p[j], child) for j in range(4)])
        naive_cover.append([_covered(nd[:, j], p[j]) for j in range(4)])
    pv, c = _report("contingency", np.array(ranks), cover)
    pn, cn = _report("contingency naive", np.array(naive), naive_cover)
    assert np.all(pv > 0.001) and np.all((c >= 0.85) & (c <= 0.95))
    # the naive posterior is too narrow: SBC rejects it and it under-covers
    assert pn.min() < 0.001 and np.all(cn < 0.85)


def test_sbc_poisson_regression():
    gen = np.random.default_rng(20240503)
    X = np.column_stack([np.ones(6), np.linspace(-1, 1, 6)])
    offset = np.full(6, np.log(15.0))
    inv = totals([0, 0, 0, 1, 1, 1])
    sigma = 0.5
    ranks, cover = [], []
    for child in gen.spawn(REPLICATES):
        beta = child.normal(0.0, sigma, 2)
        s = child.poisson(np.exp(X @ beta + offset))
        r = subspace.projected_gaussian(s, inv, mu=1 / 3.0, rng=child)
        model = poisson_regression_model(r, X, prior_sigma=sigma, offset=offset)
        idata = fit(model, draws=400, tune=200, chains=1, rng=child)
        post = idata.posterior["beta"].values.reshape(-1, 2)
        ranks.append([_rank(post[:, j], beta[j], child) for j in range(2)])
        cover.append([_covered(post[:, j], beta[j]) for j in range(2)])
    pv, c = _report("poisson", np.array(ranks), cover)
    assert np.all(pv > 0.001) and np.all((c >= 0.85) & (c <= 0.95))
