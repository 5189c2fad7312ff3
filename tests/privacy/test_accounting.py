import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate, optimize, special, stats

from invariantdp import privacy as acc
from invariantdp._validation import InvariantDPError
from invariantdp.privacy import gaussian_tradeoff


def direct_delta(mu, eps):
    return stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)


def delta_from_tradeoff(mu, eps):
    """sup_alpha [1 - e^eps (1 - alpha) - G_mu(alpha)], from the tradeoff function itself.

    (eps, delta)-DP holds iff f >= f_{eps,delta}; in the paper's convention (type I error
    1 - alpha) the binding piece is 1 - delta - e^eps (1 - alpha).
    """
    f = gaussian_tradeoff(mu)

    def neg(z):  # alpha = Phi(z)
        alpha = special.ndtr(z)
        return -(1.0 - math.exp(eps) * special.ndtr(-z) - float(f(alpha)))

    res = optimize.minimize_scalar(
        neg, bounds=(-10, 10), method="bounded", options={"xatol": 1e-12}
    )
    return -res.fun


def privacy_loss_log_delta(mu, eps):
    """log E[(1 - e^{eps - L})_+], L ~ N(mu^2/2, mu^2), by quadrature on the log scale."""
    m = mu * mu / 2

    def log_integrand(ell):
        return math.log(-math.expm1(eps - ell)) + stats.norm.logpdf(ell, m, mu)

    # scale of the mass above eps: the density decays like exp(-c s) with c = (eps - m) / mu^2
    width = 1.0 / ((eps - m) / mu**2 + 1.0 / mu)
    shift = log_integrand(eps + width)
    edges = [eps, eps + width, eps + 10 * width, eps + 100 * width, eps + 100 * width + 60 * mu]

    def piece(lo, hi):
        return integrate.quad(
            lambda ell: math.exp(log_integrand(ell) - shift), lo, hi, epsabs=0, epsrel=1e-11
        )[0]

    val = math.fsum(piece(lo, hi) for lo, hi in zip(edges[:-1], edges[1:], strict=True))
    return shift + math.log(val)


GRID = [(0.3, 0.1), (0.5, 1.0), (1.0, 1.0), (1.0, 3.0), (2.0, 0.5), (3.0, 4.0), (6.0, 10.0)]


@pytest.mark.parametrize("mu, eps", GRID)
def test_balle_wang_matches_the_direct_formula(mu, eps):
    assert acc.gdp_to_eps_delta(mu, eps) == pytest.approx(direct_delta(mu, eps), rel=1e-10)


@pytest.mark.parametrize("mu, eps", GRID)
def test_balle_wang_is_the_dual_of_the_gaussian_tradeoff(mu, eps):
    assert acc.gdp_to_eps_delta(mu=mu, epsilon=eps) == pytest.approx(
        delta_from_tradeoff(mu, eps), rel=1e-7, abs=1e-13
    )


@pytest.mark.parametrize("mu, eps", [(1.0, 30.0), (1.0, 200.0), (0.3, 50.0), (0.05, 2.0)])
def test_log_delta_below_underflow_matches_privacy_loss_integral(mu, eps):
    # compare log delta + a^2/2 (a = mu/2 - eps/mu), the part not fixed by the Gaussian tail
    a2 = 0.5 * (mu / 2 - eps / mu) ** 2
    got = acc.gdp_log_delta(mu, eps)
    assert got + a2 == pytest.approx(privacy_loss_log_delta(mu, eps) + a2, abs=1e-8)


@pytest.mark.parametrize("mu, eps", [(1.0, 2e3), (0.5, 1e3), (2.0, 1e4), (0.1, 200.0)])
def test_log_delta_matches_asymptotic_expansion_for_huge_epsilon(mu, eps):
    # delta = p_L(eps) * int_0^inf (1 - e^-s) exp(-c s - s^2 / (2 mu^2)) ds,
    # c = (eps - mu^2/2) / mu^2;
    # expanding exp(-s^2/(2 mu^2)) to second order, int = 1/(c(c+1)) - (1/c^3 - 1/(c+1)^3)/mu^2
    # with relative error about 15 / (c mu)^4, below 1e-11 for these cases (c mu >= 1000)
    c = (eps - mu * mu / 2) / mu**2
    integral = 1 / (c * (c + 1)) - (1 / c**3 - 1 / (c + 1) ** 3) / mu**2
    r = math.log(integral) - math.log(mu) - 0.5 * math.log(2 * math.pi)
    a2 = 0.5 * (mu / 2 - eps / mu) ** 2
    ld = acc.gdp_log_delta(mu, eps)
    # log delta ~ -a^2/2 is huge: allow its float spacing on top of the 1e-10 target
    assert ld + a2 == pytest.approx(r, abs=1e-10 + 4e-16 * abs(ld))


@pytest.mark.parametrize("mu", [0.5, 1.0, 3.0])
def test_log_delta_is_smooth_and_decreasing_across_branches(mu):
    # the evaluation switches method as epsilon / mu^2 grows; the curve must not jump.
    # log delta = -a^2/2 + r(eps) with a = mu/2 - eps/mu and r slowly varying: check r.
    eps = np.linspace(0.05, 3000 * mu * mu, 4001)
    ld = np.array([acc.gdp_log_delta(mu, e) for e in eps])
    assert np.all(np.diff(ld) < 0)
    r = ld + 0.5 * (mu / 2 - eps / mu) ** 2
    h = eps[1] - eps[0]
    curvature = np.diff(r, 2) / h**2
    # r'' ~ -2 / eps^2 (r ~ -2 log eps); a seam of size J would add J / h^2
    assert np.max(np.abs(curvature[50:]) * eps[51:-1] ** 2) < 5


def test_delta_underflows_only_when_true_value_does():
    assert acc.gdp_to_eps_delta(1.0, 200.0) == 0.0
    assert math.isfinite(acc.gdp_log_delta(1.0, 200.0))
    assert 0 < acc.gdp_to_eps_delta(1.0, 30.0) < 1e-190


@pytest.mark.parametrize("eps", [0.01, 0.1, 0.5, 1.0, 3.0, 10.0, 50.0, 300.0])
@pytest.mark.parametrize("delta", [0.3, 1e-3, 1e-10, 1e-50, 1e-300])
def test_round_trip_eps_mu_eps(eps, delta):
    mu = acc.eps_delta_to_gdp(eps, delta)
    assert acc.gdp_to_epsilon(mu, delta) == pytest.approx(eps, abs=1e-9, rel=1e-12)
    # and the mu really gives delta at eps
    assert acc.gdp_log_delta(mu, eps) == pytest.approx(math.log(delta), rel=1e-9)


@pytest.mark.parametrize("mu", [0.05, 0.5, 1.0, 2.0, 8.0])
def test_round_trip_mu_eps_mu(mu):
    eps = acc.gdp_to_epsilon(mu, 1e-6)
    assert acc.eps_delta_to_gdp(epsilon=eps, delta=1e-6) == pytest.approx(mu, rel=1e-9)


def test_eps_delta_to_gdp_is_monotone():
    mus = [acc.eps_delta_to_gdp(e, 1e-5) for e in (0.5, 1, 2, 4)]
    assert np.all(np.diff(mus) > 0)
    mus = [acc.eps_delta_to_gdp(1.0, d) for d in (1e-9, 1e-6, 1e-3, 0.1)]
    assert np.all(np.diff(mus) > 0)


def test_gdp_to_epsilon_is_zero_when_delta_is_large():
    mu = 1.0
    delta0 = 2 * stats.norm.cdf(mu / 2) - 1  # delta_mu(0)
    assert acc.gdp_to_epsilon(mu, delta0 + 1e-3) == 0.0
    assert acc.gdp_to_epsilon(mu, delta0 * 0.999) > 0.0


def test_analytic_gaussian_mechanism_calibration():
    # Balle & Wang: sigma = Delta / mu is (eps, delta)-DP; at eps=1, delta=1e-5 the analytic
    # Gaussian needs sigma ~ 3.73 for Delta = 1, below the classical sqrt(2 ln(1.25/delta))
    mu = acc.eps_delta_to_gdp(1.0, 1e-5)
    sigma = 1.0 / mu
    assert sigma == pytest.approx(3.7306, abs=1e-3)
    assert sigma < math.sqrt(2 * math.log(1.25 / 1e-5))


# --- zCDP -------------------------------------------------------------------


def test_zcdp_to_eps_delta_formula():
    rho, delta = 0.7, 1e-7
    assert acc.zcdp_to_eps_delta(rho, delta, method="bun-steinke") == pytest.approx(
        rho + 2 * math.sqrt(rho * math.log(1 / delta)), rel=1e-15
    )


@pytest.mark.parametrize("k", [1, 2, 3, 7])
def test_zcdp_group_privacy_is_k_squared_rho(k):
    assert acc.zcdp_group_privacy(2.56, k) == pytest.approx(k * k * 2.56)


def renyi_gaussian(alpha, shift):
    """D_alpha(N(0,1) || N(shift,1)) by numerical integration."""

    def integrand(x):
        return math.exp(alpha * stats.norm.logpdf(x) + (1 - alpha) * stats.norm.logpdf(x, shift))

    val, _ = integrate.quad(integrand, -40, 40 + shift, epsabs=0, epsrel=1e-12, limit=200)
    return math.log(val) / (alpha - 1)


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("alpha", [1.5, 2.0, 5.0])
def test_zcdp_group_privacy_matches_renyi_divergence_of_gaussian(k, alpha):
    # a sensitivity-1 Gaussian mechanism with sigma = 1/mu is mu-GDP and mu^2/2-zCDP; data
    # at distance k shift its mean by k, and the Renyi divergence is alpha * k^2 rho exactly.
    mu = 0.8
    rho = acc.gdp_to_zcdp(mu)
    assert renyi_gaussian(alpha, k * mu) == pytest.approx(
        alpha * acc.zcdp_group_privacy(rho, k), rel=1e-8
    )


def test_zcdp_composition_adds_and_agrees_with_gdp():
    assert acc.zcdp_composition([0.07, 2.56, 7.70, 4.96]) == pytest.approx(15.29)
    mus = [0.3, 1.2, 0.5]
    assert acc.gdp_to_zcdp(acc.gdp_composition(mus)) == pytest.approx(
        acc.zcdp_composition([acc.gdp_to_zcdp(m) for m in mus])
    )


def test_pure_dp_to_zcdp():
    assert acc.pure_dp_to_zcdp(2.0) == 2.0


# --- GDP and pure DP ----------------------------------------------------------


@pytest.mark.parametrize("k", [2, 3, 5])
def test_gdp_group_privacy_equals_k_fold_tradeoff(k):
    mu = 0.6
    f = gaussian_tradeoff(mu)
    alpha = np.linspace(0.001, 0.999, 99)
    y = alpha
    for _ in range(k):
        y = f(y)
    np.testing.assert_allclose(
        gaussian_tradeoff(acc.gdp_group_privacy(mu, k))(alpha), y, rtol=1e-10
    )


def test_gdp_composition():
    assert acc.gdp_composition([3.0, 4.0]) == pytest.approx(5.0)
    assert acc.gdp_composition(np.array([1.0])) == 1.0


def test_pure_dp_group_and_composition():
    assert acc.pure_dp_group_privacy(0.5, 4) == 2.0
    assert acc.pure_dp_composition([0.5, 0.25, 0.25]) == 1.0


def test_approximate_dp_group_privacy_and_composition():
    eps, delta = acc.approximate_dp_group_privacy(0.5, 1e-6, 3)
    assert eps == 1.5
    assert delta == pytest.approx(1e-6 * (1 + math.exp(0.5) + math.exp(1.0)))
    _, big = acc.approximate_dp_group_privacy(0.01, 1e-9, 100)
    assert big == pytest.approx(1e-9 * math.expm1(1.0) / math.expm1(0.01))
    assert acc.approximate_dp_group_privacy(50.0, 1e-6, 100) == (5000.0, 1.0)  # vacuous, capped
    assert acc.approximate_dp_group_privacy(1.0, 0.0, 5) == (5.0, 0.0)
    assert acc.approximate_dp_composition([1.0, 2.0], [1e-6, 2e-6]) == (3.0, pytest.approx(3e-6))


# --- argument checking ----------------------------------------------------------


@pytest.mark.parametrize(
    "call, match",
    [
        # epsilon = 0 is accepted (gdp_to_epsilon returns it): tests/privacy/test_gdp.py
        (lambda: acc.eps_delta_to_gdp(-1, 1e-5), r"`epsilon` \(-1.0\) must be 0 or in \["),
        (lambda: acc.eps_delta_to_gdp(1.0, 0.0), r"`delta` \(0.0\) must be in \(0, 1\)"),
        (lambda: acc.eps_delta_to_gdp(1.0, 1.5), r"`delta` \(1.5\) must be in \(0, 1\)"),
        (lambda: acc.gdp_to_eps_delta(0.0, 1.0), r"`mu` \(0.0\) must be > 0"),
        (lambda: acc.gdp_to_eps_delta(1.0, -2.0), r"`epsilon` \(-2.0\) must be 0 or in \["),
        (lambda: acc.gdp_to_epsilon(1.0, 1.0), r"`delta` \(1.0\) must be in \(0, 1\)"),
        (lambda: acc.zcdp_to_eps_delta(0.0, 1e-5), r"`rho` \(0.0\) must be > 0"),
        (lambda: acc.zcdp_to_eps_delta(1.0, 0.0), r"`delta` \(0.0\) must be in \(0, 1\)"),
        (lambda: acc.zcdp_group_privacy(-1.0, 2), r"`rho` \(-1.0\) must be > 0"),
        (lambda: acc.zcdp_group_privacy(1.0, 0), r"`k` \(0\) must be >= 1"),
        (lambda: acc.gdp_group_privacy(1.0, -3), r"`k` \(-3\) must be >= 1"),
        (
            lambda: acc.approximate_dp_group_privacy(1.0, 1.5, 2),
            r"`delta` \(1.5\) must be in \[0, 1\)",
        ),
        (lambda: acc.zcdp_composition([1.0, -0.5]), r"`rhos\[1\]` \(-0.5\) must be > 0"),
        (lambda: acc.gdp_composition([]), r"`mus` .* must not be empty"),
        (lambda: acc.eps_delta_to_gdp(float("nan"), 0.1), r"`epsilon` \(nan\) must not be NaN"),
        (lambda: acc.gdp_to_eps_delta(float("inf"), 1.0), r"`mu` \(inf\) must be finite"),
    ],
)
def test_bad_values_raise_value_error_naming_the_argument(call, match):
    with pytest.raises(ValueError, match=match) as info:
        call()
    assert isinstance(info.value, InvariantDPError)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: acc.zcdp_group_privacy(1.0, 2.5), "`k` must be an integer"),
        (lambda: acc.gdp_group_privacy(1.0, 2.0), "`k` must be an integer"),
        (lambda: acc.pure_dp_group_privacy(1.0, True), "`k` must be an integer"),
        (lambda: acc.eps_delta_to_gdp("1", 0.1), "`epsilon` must be a real number"),
    ],
)
def test_wrong_types_raise_type_error(call, match):
    with pytest.raises(TypeError, match=match):
        call()


# --- extreme inputs (issue 10, item 4c) ---------------------------------------------------


@pytest.mark.parametrize("delta", [0.1, 1e-10, 1e-300])
def test_eps_delta_to_gdp_at_epsilon_1e300(delta):
    """`account gdp --epsilon 1e300` raised OverflowError; mu = sqrt(2 eps) + O(1)."""
    mu = acc.eps_delta_to_gdp(1e300, delta)
    assert mu == pytest.approx(math.sqrt(2e300), rel=1e-14)
    # one ulp of mu moves s = eps/mu - mu/2 by ~1e134: mu is the largest double meeting delta
    assert acc.gdp_to_eps_delta(mu, 1e300) <= delta
    assert acc.gdp_to_eps_delta(math.nextafter(mu, math.inf), 1e300) > delta


@pytest.mark.parametrize(
    "mu, eps",
    [
        (1e-300, 1e-300),
        (1e-300, 3e-300),
        (1e-10, 1e-10),
        (1e-8, 1e-17),
        (2.0**40, 2.0**79 + 3 * 2.0**40),
    ],
)
def test_log_delta_in_the_scaled_variables(mu, eps):
    """delta = int_0^inf (1 - e^{-mu z}) phi(z + s) dz, s = eps/mu - mu/2, by brute force."""
    s = float(Fraction(eps) / Fraction(mu) - Fraction(mu) / 2)
    val, _ = integrate.quad(
        lambda z: -math.expm1(-mu * z) * stats.norm.pdf(z + s),
        0,
        abs(s) + 40,
        epsabs=0,
        epsrel=1e-12,
        limit=400,
        points=[max(-s, 0.0)],
    )
    assert acc.gdp_log_delta(mu, eps) == pytest.approx(math.log(val), rel=1e-9)


def test_gdp_to_eps_delta_extremes():
    """ZeroDivisionError and OverflowError before; delta underflows to 0 only below 1e-308."""
    assert acc.gdp_to_eps_delta(1.0, 1e300) == 0.0
    assert acc.gdp_to_eps_delta(1e-300, 1.0) == 0.0
    assert acc.gdp_to_eps_delta(1e300, 1.0) == 1.0
    # mu -> 0 with eps / mu fixed: delta ~ mu (phi(1) - Phi(-1))
    tiny = acc.gdp_to_eps_delta(1e-300, 1e-300)
    assert tiny == pytest.approx(1e-300 * (stats.norm.pdf(1) - stats.norm.sf(1)), rel=1e-6)
    with pytest.raises(InvariantDPError, match="below the most negative double"):
        acc.gdp_log_delta(1e-300, 1e300)


def test_gdp_to_epsilon_extremes():
    with pytest.raises(InvariantDPError, match="`epsilon` solving .* exceeds the largest double"):
        acc.gdp_to_epsilon(1e300, 0.1)  # epsilon ~ mu^2 / 2 = 5e599
    eps = acc.gdp_to_epsilon(1e150, 0.1)  # epsilon = mu^2/2 + mu Phi^{-1}(0.9) - O(1)
    assert eps == pytest.approx(5e299 + 1e150 * stats.norm.isf(0.1), rel=1e-14)
    assert acc.gdp_to_epsilon(1e-300, 1e-300) == 0.0  # delta >= delta_mu(0) = erf(mu / 2^1.5)
    assert acc.gdp_to_epsilon(1e-300, 1e-302) > 0.0
    for mu, delta in [(1e-10, 1e-300), (1.0, 1e-300), (30.0, 1e-300)]:
        eps = acc.gdp_to_epsilon(mu, delta)
        assert acc.gdp_log_delta(mu, eps) == pytest.approx(math.log(delta), rel=1e-9)


def test_zcdp_extremes():
    bs = dict(method="bun-steinke")
    for kw in ({}, bs):  # finite: 2 sqrt(rho L) << rho
        assert acc.zcdp_to_eps_delta(1.7e308, 1e-300, **kw) == 1.7e308
        assert acc.zcdp_to_eps_delta(1e300, 1e-300, **kw) == pytest.approx(1e300)
    assert acc.zcdp_to_eps_delta(1e-300, 1e-300, **bs) == pytest.approx(
        2 * math.sqrt(1e-300 * 300 * math.log(10)), rel=1e-14
    )
    # CKS for tiny rho: alpha = 1 + t with rho t^2 = L - log(1 + t), eps ~ 2 rho t - 1/t
    L = 300 * math.log(10)
    t = math.sqrt(L / 1e-300)
    assert acc.zcdp_to_eps_delta(1e-300, 1e-300) == pytest.approx(2e-300 * t - 1 / t, rel=1e-6)
    # group privacy with a huge k: exact k^2 rho, or an error (was OverflowError)
    assert acc.zcdp_group_privacy(1e-300, 10**200) == pytest.approx(1e100, rel=1e-15)
    with pytest.raises(InvariantDPError, match=r"`k` \(1.000e\+200 .*exceeds the largest double"):
        acc.zcdp_group_privacy(1.0, 10**200)
    with pytest.raises(InvariantDPError, match="the sum of `rhos` exceeds the largest double"):
        acc.zcdp_composition([1e308, 1e308])
    with pytest.raises(InvariantDPError, match=r"mu\*\*2 / 2 .* exceeds the largest double"):
        acc.gdp_to_zcdp(1e300)  # was inf
    with pytest.raises(InvariantDPError, match="would round to 0"):
        acc.gdp_to_zcdp(1e-300)  # was 0.0: "no privacy loss"
    with pytest.raises(InvariantDPError, match=r"epsilon\*\*2 / 2 .* exceeds the largest double"):
        acc.pure_dp_to_zcdp(1e300)


def test_gdp_and_pure_group_and_composition_extremes():
    assert acc.gdp_composition([1e300, 1e300]) == pytest.approx(math.sqrt(2) * 1e300)  # was inf
    assert acc.gdp_composition([1e-300, 1e-300]) == pytest.approx(math.sqrt(2) * 1e-300)  # was 0
    assert acc.gdp_group_privacy(1e-300, 10**400) == pytest.approx(1e100, rel=1e-15)
    with pytest.raises(InvariantDPError, match="exceeds the largest double"):
        acc.gdp_group_privacy(1e300, 10**10)  # was inf
    with pytest.raises(InvariantDPError, match="exceeds the largest double"):
        acc.pure_dp_group_privacy(1.0, 10**400)  # was OverflowError
    with pytest.raises(InvariantDPError, match="the sum of `epsilons` exceeds"):
        acc.pure_dp_composition([1e308, 1e308])  # was OverflowError
    with pytest.raises(InvariantDPError, match="the sum of `epsilons` exceeds"):
        acc.approximate_dp_composition([1e308, 1e308], [0.0, 0.0])


def test_approximate_group_privacy_extremes():
    assert acc.approximate_dp_group_privacy(1e300, 0.1, 2) == (2e300, 1.0)  # was OverflowError
    assert acc.approximate_dp_group_privacy(1e-300, 1e-300, 10**400) == (1e100, 1.0)
    eps, delta = acc.approximate_dp_group_privacy(1e-300, 0.1, 2)
    assert (eps, delta) == (2e-300, pytest.approx(0.2, rel=1e-14))
    eps, delta = acc.approximate_dp_group_privacy(1e-20, 1e-300, 10**10)
    assert delta == pytest.approx(1e-290 * math.expm1(1e-10) / 1e-10, rel=1e-12)


@given(
    st.floats(-300, 300).map(lambda e: 10.0**e),
    st.floats(-300, math.log10(0.99)).map(lambda e: 10.0**e),
)
def test_eps_delta_gdp_round_trip_over_the_whole_range(epsilon, delta):
    """Finite answers everywhere, and the mu found really gives delta at epsilon."""
    try:
        mu = acc.eps_delta_to_gdp(epsilon, delta)
    except InvariantDPError as err:  # only where the answer is not a double
        assert "smallest positive double" in str(err) or "largest double" in str(err)
        return
    assert math.isfinite(mu) and mu > 0
    # on the safe side of the root, and at it to 1e-12 (for epsilon >> 1 an ulp of mu
    # moves delta a lot; log delta itself is exact to a few ulps, so no closer claim)
    assert acc.gdp_log_delta(mu, epsilon) <= math.log(delta)
    assert acc.gdp_log_delta(mu * (1 + 1e-12), epsilon) > math.log(delta)
    # and back: epsilon again, on the safe side (near delta_mu(0) epsilon is fixed only to
    # ~ulp(delta) / slope, an absolute error: ill-conditioned there, not inaccurate)
    eps = acc.gdp_to_epsilon(mu, delta)
    assert eps <= epsilon * (1 + 1e-9) + 1e-12
    if eps > 0:
        assert acc.gdp_log_delta(mu, eps) <= math.log(delta)
