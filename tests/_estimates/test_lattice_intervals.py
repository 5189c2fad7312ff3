"""Intervals for combinations of discrete Gaussian noise: exact law, rounding, Gaussian switch.

References: the law is checked against a direct convolution of the discrete
Gaussian's pmf (no characteristic function, no FFT) and against draws of the
package's CKS rejection sampler; the coverage figures of one count at
sigma = 1 (0.883 and 0.991) are those of issue 22.
"""

import math

import numpy as np
import pytest
from scipy import stats

from invariantdp._estimates import _lattice_intervals as li
from invariantdp.distributions import discrete_gaussian
from invariantdp.invariants import one_way_margins


def _direct_masses(p, sigma):
    """``P(|p' e| <= h)`` for ``h = 0, 1, ...`` by convolving the pmfs (``p`` integers)."""
    width = int(math.ceil(12 * sigma)) + 2
    support = np.arange(-width, width + 1)
    pmf = discrete_gaussian.pmf(support, sigma)
    law = np.array([1.0])
    for pj in np.abs(p[p != 0]):
        term = np.zeros(2 * width * pj + 1)
        term[(support + width) * pj] = pmf
        law = np.convolve(law, term)
    centre = law.size // 2
    half = law[centre:]
    return half[0] + 2 * np.concatenate(([0.0], np.cumsum(half[1:])))


def _patterns():
    """Weight vectors of GLS errors: (name, a = p / L as integers p and L)."""
    yield "one count", np.array([1]), 1
    for n in (2, 3, 6):
        yield f"a cell of {n} under their total", np.array([n - 1] + [-1] * (n - 1)), n
    yield "2 of 6 cells summed under their total", np.array([4, 4, -2, -2, -2, -2]), 6
    # a cell of a 2 x 3 table with both one-way margins exact: Pi_N e_1
    a = one_way_margins((2, 3)).project(np.eye(6)[0])
    yield "a cell of a 2 x 3 table under its margins", np.round(a * 6).astype(int), 6
    yield "three counts summed", np.array([1, 1, 1]), 1


PATTERNS = list(_patterns())


# --- one count with no invariant: the numbers ---------------------------------


@pytest.mark.parametrize(
    "sigma, m, coverage, below",
    [(1.0, 2, 0.9909, 0.8829), (2.0, 4, 0.9770, 0.9230), (5.0, 10, 0.9646, 0.9430)],
)
def test_one_count_gets_the_smallest_central_set_holding_95_percent(sigma, m, coverage, below):
    h, cov, how = li.half_widths([[1.0]], sigma, 0.95)
    assert h[0] == m and how[0] == "exact discrete law"
    exact = discrete_gaussian.cdf(m, sigma) - discrete_gaussian.cdf(-m - 1, sigma)
    smaller = discrete_gaussian.cdf(m - 1, sigma) - discrete_gaussian.cdf(-m, sigma)
    assert cov[0] == pytest.approx(exact, abs=1e-12) and round(cov[0], 4) == coverage
    assert smaller < 0.95 and round(smaller, 4) == below


# --- combinations under invariants: the exact law ------------------------------------------


@pytest.mark.parametrize("sigma", [0.7, 1.0, 2.0, 5.0])
@pytest.mark.parametrize("name, p, den", PATTERNS, ids=[p[0] for p in PATTERNS])
def test_the_exact_law_matches_a_direct_convolution(name, p, den, sigma):
    direct = _direct_masses(p, sigma)
    fft = li._central_masses(sigma, p)
    n = min(direct.size, fft.size)
    assert fft[:n] == pytest.approx(direct[:n], abs=1e-12)
    g = int(np.gcd.reduce(np.abs(p)))  # p' e lives on g Z
    for level in (0.8, 0.9, 0.95, 0.99):
        h, cov, how = li.half_widths([p / den], sigma, level)
        points = int(round(h[0] * den))  # the half-width on the scale of p' e
        assert how[0] == "exact discrete law" and points % g == 0
        assert h[0] * den == pytest.approx(points, abs=1e-9)
        assert cov[0] == pytest.approx(direct[points], abs=1e-9) and cov[0] >= level
        # the shortest: the next smaller symmetric set holds less than the level
        assert points == 0 or direct[points - g] < level


@pytest.mark.parametrize("sigma", [1.0, 2.0, 5.0])
def test_coverage_of_the_exact_interval_by_simulation(sigma):
    # a cell of 6 under their exact total and a sum of 2 of them, 40,000 draws of the
    # package's CKS sampler: the reported coverage is the frequency, within 4 MC errors
    rng = np.random.default_rng(2024)
    e = discrete_gaussian.rvs(sigma, size=(40_000, 6), random_state=rng)
    for a in (np.eye(6)[0] - 1 / 6, np.r_[1, 1, 0, 0, 0, 0] - 2 / 6):
        h, cov, _ = li.half_widths([a], sigma, 0.95)
        hit = np.mean(np.abs(e @ a) <= h[0] + 1e-9)
        se = math.sqrt(cov[0] * (1 - cov[0]) / e.shape[0])
        assert abs(hit - cov[0]) < 4 * se and cov[0] >= 0.95


def test_rows_with_the_same_weights_share_one_law():
    a = np.eye(180)[:5] - 1 / 180
    cache = {}
    h, cov, _ = li.half_widths(a, 1.0, 0.95, cache)
    assert len(cache) == 1 and np.all(h == h[0]) and np.all(cov == cov[0])


@pytest.mark.parametrize("sigma", [0.49, 0.3, 0.2, 0.1, 1e-3, 1e-12, 1e-300])
def test_below_sigma_one_half_the_law_is_the_pmf_s_and_tends_to_a_point_mass(sigma):
    # the Poisson form needs ~9 / (2 pi sigma) images: unbounded as sigma -> 0
    p = np.array([5, -1, -1, -1, -1, -1])
    fft = li._central_masses(sigma, p)
    if sigma >= 1e-3:
        direct = _direct_masses(p, sigma)
        n = min(fft.size, direct.size)
        assert fft[:n] == pytest.approx(direct[:n], abs=1e-12)
    else:  # P(e != 0) < 1e-300: a point mass at 0 to every digit
        assert np.all(fft == pytest.approx(1.0, abs=1e-15))
    for a in (p / 6, np.array([1.0])):
        h, cov, how = li.half_widths([a], sigma, 0.95)
        assert cov[0] >= 0.95 and how[0] == "exact discrete law"
        if fft[0] >= 0.95 + 1e-9:  # every term 0 with at least the level: y +- 0
            assert h[0] == 0.0


# --- rounding of weights too fine for the grid -------------------------------------------


def test_irrational_weights_are_rounded_and_the_rest_bounded(rng):
    a = rng.normal(size=40) / 8
    h, cov, how = li.half_widths([a], 2.0, 0.95)
    assert how[0] == "exact discrete law, rounded weights" and cov[0] >= 0.95
    e = discrete_gaussian.rvs(2.0, size=(40_000, a.size), random_state=rng)
    hit = np.mean(np.abs(e @ a) <= h[0])
    assert hit >= cov[0] - 4 * math.sqrt(cov[0] * (1 - cov[0]) / e.shape[0])
    # the price: a little wider than the Gaussian interval, never narrower
    gauss = stats.norm.ppf(0.975) * 2.0 * np.linalg.norm(a)
    assert gauss < h[0] < 1.1 * gauss


def test_a_lattice_beyond_the_grid_is_rounded_with_coverage_kept(monkeypatch, rng):
    monkeypatch.setattr(li, "MAX_GRID", 2**11)
    a = np.eye(200)[0] - 1 / 200
    h, cov, how = li.half_widths([a], 2.0, 0.95)
    assert how[0] == "exact discrete law, rounded weights" and cov[0] >= 0.95
    e = discrete_gaussian.rvs(2.0, size=(20_000, a.size), random_state=rng)
    hit = np.mean(np.abs(e @ a) <= h[0])
    assert hit >= cov[0] - 4 * math.sqrt(cov[0] * (1 - cov[0]) / e.shape[0])


def test_a_level_beyond_the_fft_s_accuracy_takes_the_sub_gaussian_bound():
    h, cov, how = li.half_widths([[1.0]], 1.0, 1 - 1e-12)
    assert how[0] == "sub-Gaussian bound"
    assert h[0] == pytest.approx(math.sqrt(2 * math.log(2 / 1e-15)))
    # the bound holds: P(|e| > h) <= 2 exp(-h^2 / 2) for the 1-subgaussian N_Z(0, 1)
    tail = 2 * discrete_gaussian.sf(math.floor(h[0]), 1.0)
    assert tail <= 2 * math.exp(-(h[0] ** 2) / 2)


# --- the Gaussian switch ---------------------------------------------------------------------


def test_the_switch_is_at_sigma_10():
    below = li.half_widths([[1.0]], np.nextafter(li.SIGMA_GAUSSIAN, 0), 0.95)[2][0]
    at = li.half_widths([[1.0]], li.SIGMA_GAUSSIAN, 0.95)[2][0]
    assert (below, at) == ("exact discrete law", "Gaussian, lattice-corrected")


@pytest.mark.parametrize("sigma", [10.0, 13.7, 20.0, 40.0])
@pytest.mark.parametrize("name, p, den", PATTERNS, ids=[p[0] for p in PATTERNS])
def test_the_lattice_corrected_gaussian_covers_at_least_nominal_above_the_switch(
    name, p, den, sigma
):
    masses = li._central_masses(sigma, p)
    for level in (0.8, 0.9, 0.95, 0.99, 0.999):
        h, _, how = li.half_widths([p / den], sigma, level)
        assert how[0] == "Gaussian, lattice-corrected"
        points = int(math.floor(h[0] * den + 1e-9))
        assert masses[points] >= level
        exact = int(np.flatnonzero(masses >= level + 1e-9)[0]) / den
        assert h[0] <= 1.05 * exact + 1 / den


@pytest.mark.parametrize("sigma, plain", [(5.0, 0.9430), (10.0, 0.9489)])
def test_the_plain_gaussian_interval_under_covers_a_count(sigma, plain):
    # the module's reason for the lattice correction: |e| <= floor(1.96 sd) misses
    m = math.floor(stats.norm.ppf(0.975) * math.sqrt(discrete_gaussian.var(sigma)))
    cov = discrete_gaussian.cdf(m, sigma) - discrete_gaussian.cdf(-m - 1, sigma)
    assert round(cov, 4) == plain < 0.95


# --- independent terms of different sigmas, and a Gaussian remainder ---------------------------


def test_terms_of_different_sigmas_match_a_direct_convolution():
    # a census error: own cells at sigma 0.5, a parent's at sigma 2, weights on 1/4
    p, sig = np.array([3, -1, 1, 2]), np.array([0.5, 0.5, 2.0, 1.0])
    law = np.array([1.0])
    for pj, sj in zip(p, sig, strict=True):
        width = int(math.ceil(12 * sj)) + 2
        support = np.arange(-width, width + 1)
        term = np.zeros(2 * width * abs(pj) + 1)
        term[(support + width) * abs(pj)] = discrete_gaussian.pmf(support, sj)
        law = np.convolve(law, term)
    centre = law.size // 2
    direct = law[centre] + 2 * np.concatenate(([0.0], np.cumsum(law[centre + 1 :])))
    fft = li._central_masses(sig, p)
    n = min(fft.size, direct.size)
    assert fft[:n] == pytest.approx(direct[:n], abs=1e-12)
    h, cov, how = li.half_widths([p / 4], sig, 0.95)
    points = int(round(h[0] * 4))
    assert how[0] == "exact discrete law" and cov[0] == pytest.approx(direct[points], abs=1e-9)
    assert cov[0] >= 0.95 > direct[points - 1]


@pytest.mark.parametrize("rest", [1e-4, 0.01, 0.3])
def test_a_gaussian_remainder_gives_the_mixture_s_quantile(rest):
    # P(|e + N(0, rest)| <= h) = sum_k P(e = k) [Phi((h - k) / s) - Phi((-h - k) / s)]
    h, cov, how = li.half_widths([[1.0]], 1.0, 0.95, rest=[rest])
    k = np.arange(-12, 13)
    s = math.sqrt(rest)
    mass = discrete_gaussian.pmf(k, 1.0) @ (
        stats.norm.cdf((h[0] - k) / s) - stats.norm.cdf((-h[0] - k) / s)
    )
    assert how[0] == "exact discrete law, Gaussian remainder"
    assert mass == pytest.approx(0.95, abs=1e-8) and cov[0] == pytest.approx(mass, abs=1e-8)
    # shortest: a little less misses the level
    less = discrete_gaussian.pmf(k, 1.0) @ (
        stats.norm.cdf((h[0] - 1e-3 - k) / s) - stats.norm.cdf((-h[0] + 1e-3 - k) / s)
    )
    assert less < 0.95


def test_a_remainder_that_smooths_the_lattice_gives_the_normal_interval():
    # rest (2 pi / max|a|)^2 / 2 >= 40 with every sigma >= 1: the mixture is all but normal
    a, sig, rest = np.array([[1.0, 0.5]]), np.array([1.0, 2.0]), 3.0
    h, cov, how = li.half_widths(a, sig, 0.95, rest=[rest])
    sd = math.sqrt(discrete_gaussian.var(1.0) + 0.25 * discrete_gaussian.var(2.0) + rest)
    assert how[0] == "normal, lattice smoothed"
    assert h[0] == pytest.approx(stats.norm.ppf(0.975) * sd, rel=1e-12)
    # the exact mixture at that half-width: the level to 1e-7 (the images at sigma = 1)
    k = np.arange(-30, 31)
    p1, p2 = discrete_gaussian.pmf(k, 1.0), discrete_gaussian.pmf(k, 2.0)
    at = (k[:, None] + 0.5 * k[None, :]).reshape(-1)
    w = (p1[:, None] * p2[None, :]).reshape(-1)
    s = math.sqrt(rest)
    mass = w @ (stats.norm.cdf((h[0] - at) / s) - stats.norm.cdf((-h[0] - at) / s))
    assert mass == pytest.approx(0.95, abs=1e-7)
    # a smaller remainder leaves the lattice visible: the exact law is used
    exact = li.half_widths(a, sig, 0.95, rest=[0.5])[2][0]
    assert exact == "exact discrete law, Gaussian remainder"
