"""Moments and entropy of the truncated Tulap law in closed form (issue 22, section 8).

The reference is independent of the implementation: the truncation point is
found from the cdf of DESIGN.md in 60-digit decimal arithmetic, and the
moments are sums over the cells of the support, cell by cell (no incomplete
beta function, no Stirling numbers); the untruncated law uses the moments of
the discrete Laplace law plus a uniform one.
"""

import math
import warnings
from decimal import Decimal, localcontext

import numpy as np
import pytest
from scipy import integrate, stats

from invariantdp.distributions import tulap, tulap_from_privacy
from invariantdp.distributions._tulap_forms import (
    MAX_CLOSED_MOMENT,
    tulap_entropy,
    tulap_even_moment,
    tulap_privacy_shapes,
)

PREC = 60


def _reference(b: Decimal, q: Decimal, powers=(2, 4)):
    """``{n: E X**n}`` and the entropy of Tulap(0, b, q), summed cell by cell.

    With ``[x]`` the nearest integer, the untruncated cdf below the median is
    ``F(x) = b**(-[x]) (b + (x - [x] + 1/2)(1 - b)) / (1 + b)`` and the density
    ``(1 - b)/(1 + b) b**|[x]|``; the law is truncated to ``F(-T) = q/2``.
    """
    with localcontext() as ctx:
        ctx.prec = PREC
        one, half = Decimal(1), Decimal(1) / 2
        c = (one - b) / (one + b)
        qc = one - q
        if q == 0:  # untruncated: discrete Laplace D plus U ~ U(-1/2, 1/2)
            d2 = 2 * b / (one - b) ** 2
            d4 = 2 * b * (one + 10 * b + b * b) / (one - b) ** 4
            moments = {2: d2 + one / 12, 4: d4 + d2 / 2 + one / 80}
            # E|D| log(1/b) - log c
            entropy = -c.ln() - (2 * b / (one - b * b)) * b.ln() if b > 0 else Decimal(0)
            return moments, entropy
        # the cell of -T: b**(j+1) <= q (1 + b) / 2 < b**j, then the position in it
        target = q * (one + b) / 2
        j = 0
        if b > 0:
            j = int((target.ln() / b.ln()).to_integral_value(rounding="ROUND_FLOOR"))
            while b ** (j + 1) > target:
                j += 1
            while j > 0 and b**j <= target:
                j -= 1
        t = (target / b**j - b) / (one - b)  # F(-j - 1/2 + t) = q/2
        T = j + half - t
        moments = {n: Decimal(0) for n in powers}
        entropy = Decimal(0)
        J = int(T.to_integral_value(rounding="ROUND_HALF_EVEN"))
        for cell in range(J + 1):
            lo = Decimal(0) if cell == 0 else cell - half
            hi = min(cell + half, T)
            if hi <= lo:
                continue
            dens = c * b**cell / qc  # the truncated density on this cell
            for n in powers:
                moments[n] += 2 * dens * (hi ** (n + 1) - lo ** (n + 1)) / (n + 1)
            entropy -= 2 * dens * (hi - lo) * dens.ln()
        return moments, entropy


# (b, q) of tulap(b, q): b from the uniform limit to nearly 1, q from 0 to nearly 1
GRID_BQ = [
    (b, q)
    for b in (1e-300, 0.05, 0.5, 0.9, 0.995)
    for q in (0.0, 1e-12, 0.01, 0.3, 0.7, 0.999, 1 - 2**-40)
]
# (epsilon, delta) of tulap_from_privacy: the issue's point, tiny and large epsilon
GRID_PRIVACY = [
    (3.0, 1e-3),
    (1.0, 0.0),
    (1.0, 0.01),
    (1e-3, 1e-6),  # ~6,000 cells in the support
    (1e-6, 0.01),  # q = 0.99995: ~50 cells, epsilon J ~ 5e-5
    (1e-20, 1e-3),  # b rounds to 1: ~500 cells of equal density
    (1e-20, 0.0),  # untruncated, variance ~ 2e40
    (50.0, 0.1),
    (800.0, 0.0),  # b underflows: the uniform law
]


@pytest.mark.parametrize(("b", "q"), GRID_BQ)
def test_moments_of_tulap_b_q_are_the_sums_over_the_support(b, q):
    moments, entropy = _reference(Decimal(b), Decimal(q))
    law = tulap(b, q)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no IntegrationWarning: nothing is integrated
        m, v, s, k = law.stats("mvsk")
        h = law.entropy()
    assert m == 0 and s == 0
    assert float(v) == pytest.approx(float(moments[2]), rel=1e-12)
    kurt = moments[4] / moments[2] ** 2 - 3
    assert float(k) == pytest.approx(float(kurt), rel=1e-11, abs=1e-12)
    assert float(h) == pytest.approx(float(entropy), rel=1e-11, abs=1e-12)
    assert float(law.moment(4)) == pytest.approx(float(moments[4]), rel=1e-12)


@pytest.mark.parametrize(("epsilon", "delta"), GRID_PRIVACY)
def test_moments_of_tulap_from_privacy_are_the_sums_over_the_support(epsilon, delta):
    with localcontext() as ctx:
        ctx.prec = PREC
        b = (-Decimal(epsilon)).exp()
        q = 2 * Decimal(delta) * b / (1 - b + 2 * Decimal(delta) * b)
    moments, entropy = _reference(b, q)
    law = tulap_from_privacy(epsilon, delta)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        v, k = law.stats("vk")
        h = law.entropy()
    assert float(v) == pytest.approx(float(moments[2]), rel=1e-12)
    assert float(k) == pytest.approx(float(moments[4] / moments[2] ** 2 - 3), rel=1e-11, abs=1e-12)
    assert float(h) == pytest.approx(float(entropy), rel=1e-11, abs=1e-12)


def test_the_variance_of_the_issue_is_exact_and_warns_nothing():
    # tulap_from_privacy(3.0, 1e-3).var() was 0.19243195124 with an IntegrationWarning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        v = tulap_from_privacy(3.0, 1e-3).var()
    assert v == pytest.approx(0.192431823197, rel=1e-11)


def test_higher_moments_are_closed_forms_and_agree_with_integration():
    # odd moments vanish; even ones up to MAX_CLOSED_MOMENT match an integral of the density
    law = tulap(0.6, 0.05, loc=0.0)
    lo, hi = law.support()
    for n in range(1, MAX_CLOSED_MOMENT + 1):
        closed = law.moment(n)
        if n % 2:
            assert closed == 0.0
            continue
        knots = np.concatenate([[lo], np.arange(np.ceil(lo - 0.5), hi) + 0.5, [hi]])
        knots = np.unique(np.clip(knots, lo, hi))
        ref = sum(
            integrate.quad(lambda x, n=n: x**n * law.pdf(x), a, z, epsabs=0, epsrel=1e-13)[0]
            for a, z in zip(knots[:-1], knots[1:], strict=True)
        )
        assert closed == pytest.approx(ref, rel=1e-11)
    with pytest.raises(ValueError, match=r"`n` \(3\) must be an even integer"):
        tulap_even_moment(3, math.log(0.5))


def test_moments_broadcast_over_shapes_and_match_sampling(rng):
    b = np.array([0.2, 0.7, 0.7])
    q = np.array([0.0, 0.0, 0.4])
    v = tulap.var(b, q)
    assert v.shape == (3,)
    for i in range(3):
        assert v[i] == tulap.var(b[i], q[i])
    # a sample variance within 5 standard errors of the closed form
    x = tulap.rvs(0.7, 0.4, size=200_000, random_state=rng)
    m2, m4 = tulap.moment(2, 0.7, 0.4), tulap.moment(4, 0.7, 0.4)
    se = math.sqrt((m4 - m2**2) / x.size)
    assert abs(np.mean(x**2) - m2) < 5 * se
    assert stats.kurtosis(x) == pytest.approx(tulap.stats(0.7, 0.4, moments="k"), abs=0.05)


def test_entropy_of_the_limits():
    # b = 0 truncated to its central 1 - q: uniform on [-(1-q)/2, (1-q)/2]
    assert float(tulap_entropy(-np.inf, 0.2, 0.8)) == pytest.approx(math.log(0.8), rel=1e-14)
    # tiny epsilon, q near 1: nearly uniform on [-T, T], T ~ 1/(2 delta)
    lb, q, qc = tulap_privacy_shapes(1e-20, 1e-3)
    T = tulap_from_privacy(1e-20, 1e-3).support()[1]
    assert float(tulap_entropy(lb, q, qc)) == pytest.approx(math.log(2 * T), rel=1e-12)
    assert float(tulap_even_moment(2, lb, q, qc)) == pytest.approx(T**2 / 3, rel=1e-12)
