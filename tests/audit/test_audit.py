import importlib
import inspect
import math
import pkgutil
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import invariantdp.audit as audit_module
from invariantdp.audit import (
    STATISTICS,
    achievable_set_test,
    audit_mechanism,
    audit_sample_size,
    audit_samples,
    lattice_classes,
)
from invariantdp.distributions import tulap
from invariantdp.mechanisms import odds_ratio_release
from invariantdp.privacy import eps_delta, gaussian_tradeoff, zcdp_tradeoff

X = np.array([[12, 5], [4, 9]])
# a worst vector of the 2 x 2 sensitivity space: same margins, x11 moves by 1
X_PRIME = X + np.array([[1, -1], [-1, 1]])


def test_correct_tulap_release_passes():
    """The noise scale of the (floating-point, simulated) odds-ratio release."""
    res = audit_mechanism(
        lambda t, rng: odds_ratio_release(t, epsilon=1.0, delta=0.01, rng=rng),
        X,
        X_PRIME,
        statistics=("threshold",),
        n_samples=3_000,
        rng=1,
    )
    assert res.passed, res.summary()
    assert "pass" in res.summary()


def test_halved_noise_is_caught():
    """Noise at 2 epsilon while claiming epsilon: the audit must fail."""

    def broken(t, rng):
        return np.asarray(t)[0, 0] + tulap.rvs(np.exp(-2.0), 0.0, random_state=rng)

    res = audit_mechanism(broken, X, X_PRIME, claimed=eps_delta(1.0), n_samples=6_000, rng=2)
    assert not res.passed
    assert res.significant_violation > 0


def test_gaussian_claim_exact_and_broken(rng):
    n = 40_000
    s0 = rng.normal(0.0, 1.0, n)
    s1 = rng.normal(1.0, 1.0, n)
    assert audit_samples(s0, s1, gaussian_tradeoff(1.0)).passed
    # the same samples violate a stronger claim (mu = 0.8)
    assert not audit_samples(s0, s1, gaussian_tradeoff(0.8)).passed


def test_violation_is_near_zero_for_a_tight_claim(rng):
    n = 50_000
    s0 = rng.laplace(0.0, 1.0, n)
    s1 = rng.laplace(1.0, 1.0, n)
    res = audit_samples(s0, s1, eps_delta(1.0))
    assert res.passed
    # the Laplace mechanism meets f_{1,0} with equality at one point
    assert abs(res.max_violation) < 0.02
    # epsilon-DP holds with delta = 0: the lower confidence bound on delta is 0
    assert res.epsilon == 1.0 and res.delta_lower == 0.0 and res.delta_claimed == 0.0


def test_bad_input():
    with pytest.raises(ValueError, match="same size"):
        audit_samples(np.zeros(20), np.zeros(30), eps_delta(1.0))
    with pytest.raises(ValueError, match=r"`significance` \(2.0\) must be in \(0, 1\)"):
        audit_samples(np.zeros(20), np.zeros(20), eps_delta(1.0), significance=2.0)
    with pytest.raises(ValueError, match=r"`max_tests` \(1\) must be >= 2"):
        audit_samples(np.zeros(20), np.zeros(20), eps_delta(1.0), max_tests=1)
    with pytest.raises(ValueError, match=r"`epsilon` \(-1.0\) must be finite and >= 0"):
        audit_samples(np.zeros(20), np.zeros(20), eps_delta(1.0), epsilon=-1.0)
    with pytest.raises(TypeError, match="`sample_x` must be real"):
        audit_samples(np.zeros(20, complex), np.zeros(20), eps_delta(1.0))


# ---------------------------------------------------------------------------
# far-tail thresholds: (epsilon, delta) violations live where type I ~ delta
# ---------------------------------------------------------------------------


def test_a_far_tail_violation_is_caught(rng):
    """Extra mass 1e-3 at the 1e-4 tail of x: delta ~ 1e-3 against a claim of 1e-5.

    Evenly spaced quantile thresholds (the audit before issue 10) reach type I
    errors of 1/400 at best, where e^epsilon * type I swamps the extra mass.
    """
    n = 200_000
    s0, s1 = rng.standard_normal(n), rng.standard_normal(n)
    s1[: n // 1000] = rng.normal(4.0, 0.1, n // 1000)
    res = audit_samples(s0, s1, eps_delta(1.0, 1e-5))
    assert not res.passed, res.summary()
    assert res.worst_type1 < 1e-3
    assert 1e-5 < res.delta_lower < 1e-3  # a valid lower bound on the true 1e-3 - e * 1e-4


@given(
    max_tests=st.integers(2, 500),
    n=st.integers(10, 3000),
    discrete=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_at_most_four_tests_per_threshold(max_tests, n, discrete, seed):
    """The Bonferroni factor is bounded by ``4 * max_tests`` whatever the data."""
    rng = np.random.default_rng(seed)
    s0, s1 = rng.standard_normal(n), rng.standard_normal(n) + 0.1
    if discrete:
        s0, s1 = np.round(s0 * 3), np.round(s1 * 3)
    res = audit_samples(s0, s1, eps_delta(1.0), max_tests=max_tests)
    assert 4 <= res.n_tests <= 4 * max_tests


def test_delta_claimed_of_a_gdp_claim_is_balle_wang():
    """At epsilon = 1 the G_mu curve allows delta = Phi(-1/mu + mu/2) - e Phi(-1/mu - mu/2)."""
    from scipy.stats import norm

    mu = 0.5
    expected = norm.cdf(-1 / mu + mu / 2) - math.e * norm.cdf(-1 / mu - mu / 2)
    s = np.linspace(-1.0, 1.0, 50)
    res = audit_samples(s, s + 0.01, gaussian_tradeoff(mu), epsilon=1.0)
    assert res.delta_claimed == pytest.approx(expected, rel=1e-3)


# ---------------------------------------------------------------------------
# lattice classes and the achievable-set test
# ---------------------------------------------------------------------------


@given(st.floats(allow_nan=False, allow_infinity=False).filter(lambda y: y != 0))
def test_lattice_class_decodes_to_sign_binade_and_finest_dyadic_lattice(y):
    code = int(lattice_classes(np.array([y]))[0])
    assert (code < 0) == (y < 0)
    big_e, v = abs(code) // 4096 - 1, abs(code) % 4096 - 1100
    # y = m 2**v with m an odd integer (exact rational arithmetic)
    m = Fraction(y) / Fraction(2) ** v
    assert m.denominator == 1 and m.numerator % 2 == 1
    # the binade: biased exponent field of the double (0 for subnormals)
    e = math.frexp(y)[1] - 1  # 2**e <= |y| < 2**(e+1)
    assert big_e == max(e + 1023, 0)


@given(st.floats(allow_nan=True), st.floats(allow_nan=True))
def test_value_classes_are_the_exact_doubles(a, b):
    ca, cb = lattice_classes(np.array([a, b]), kind="value")
    same_bits = np.array([a]).view(np.int64)[0] == np.array([b]).view(np.int64)[0]
    assert (ca == cb) == same_bits


def test_lattice_classes_of_special_values():
    codes = lattice_classes(np.array([[0.0, -0.0], [np.inf, -np.inf]]))
    assert codes.tolist() == [[0, 1], [2, -2]]
    assert lattice_classes([np.nan]).tolist() == [3]
    with pytest.raises(ValueError, match=r"`kind` \('bits'\) must be one of"):
        lattice_classes([1.0], kind="bits")
    with pytest.raises(TypeError, match="`values` must be real"):
        lattice_classes(np.ones(2, complex))


def test_an_impossible_class_gives_delta_equal_to_its_probability(rng):
    """Odd multiples of 2**-53 (half of the outputs under x) never occur under x'."""
    n = 4000
    y0 = rng.integers(2**50, 2**51, n) * 2.0**-53  # in [1/8, 1/4): half of them odd
    y1 = 2 * rng.integers(2**49, 2**50, n) * 2.0**-53  # only even multiples
    res = achievable_set_test(y0, y1, eps_delta(1.0), classes="lattice")
    assert not res.passed
    assert res.statistic == "lattice" and res.n_samples == n // 2
    # a Clopper-Pearson lower bound on the probability 1/2 of the impossible class
    assert 0.4 < res.delta_lower < 0.5
    # the exact values are all distinct: that class map sees nothing
    assert achievable_set_test(y0, y1, eps_delta(1.0), classes="value").passed


def test_achievable_set_test_on_vector_releases(rng):
    """The class of a vector release is the tuple of its coordinates' classes."""
    n = 2000
    y0 = np.column_stack([rng.integers(0, 2**20, n) * 2.0**-30, rng.integers(0, 5, n)])
    y1 = np.column_stack([rng.integers(0, 2**20, n) * 2.0**-30, rng.integers(0, 5, n)])
    assert achievable_set_test(y0, y1, eps_delta(0.1), significance=1e-6).passed
    y1[:, 1] += 0.5  # the second coordinate moves off the integers under x'
    res = achievable_set_test(y0, y1, eps_delta(0.1), significance=1e-6)
    assert not res.passed and res.delta_lower > 0.8


def test_achievable_set_test_bad_input():
    with pytest.raises(ValueError, match=r"`classes` \('bits'\) must be one of"):
        achievable_set_test(np.zeros(40), np.zeros(40), eps_delta(1.0), classes="bits")
    with pytest.raises(ValueError, match="same shape with at least 20 releases"):
        achievable_set_test(np.zeros(10), np.zeros(10), eps_delta(1.0))
    with pytest.raises(ValueError, match="same shape"):
        achievable_set_test(np.zeros((40, 2)), np.zeros((40, 3)), eps_delta(1.0))
    with pytest.raises(TypeError, match="`sample_x_prime` must be real"):
        achievable_set_test(np.zeros(40), np.zeros(40, complex), eps_delta(1.0))


# ---------------------------------------------------------------------------
# audit_mechanism: the statistics
# ---------------------------------------------------------------------------


def _float_laplace(t, n, rng):
    return t + rng.laplace(0.0, 1.0, n)


def test_default_statistics_and_their_components():
    assert STATISTICS == ("threshold", "lattice", "value")
    res = audit_mechanism(
        _float_laplace, 0.0, 1.0, claimed=eps_delta(1.0), n_samples=4000, rng=0, batched=True
    )
    assert [c.statistic for c in res.components] == list(STATISTICS)
    # each statistic at a third of the family-wise level
    assert all(c.significance == pytest.approx(0.01 / 3) for c in res.components)
    assert not res.passed and res.statistic == "lattice"
    assert res.n_tests == sum(c.n_tests for c in res.components)
    text = res.summary()
    assert "lattice: FAIL" in text and "threshold: pass" in text


def test_a_single_statistic_by_name():
    res = audit_mechanism(
        _float_laplace,
        0.0,
        1.0,
        claimed=eps_delta(1.0),
        statistics="threshold",
        n_samples=4000,
        rng=0,
        batched=True,
    )
    assert res.passed and res.components == () and res.statistic == "threshold"


@pytest.mark.parametrize(
    "statistics, match",
    [
        ((), "non-empty"),
        (("threshold", "threshold"), "distinct names"),
        (("lsb",), "distinct names from"),
        (3, "non-empty sequence"),
    ],
)
def test_bad_statistics(statistics, match):
    with pytest.raises(ValueError, match=match):
        audit_mechanism(
            _float_laplace,
            0.0,
            1.0,
            claimed=eps_delta(1.0),
            statistics=statistics,
            n_samples=100,
            batched=True,
        )


# ---------------------------------------------------------------------------
# sample sizes
# ---------------------------------------------------------------------------


def test_sample_size_grows_with_power_and_tests():
    claim, true = gaussian_tradeoff(0.5), gaussian_tradeoff(0.7)
    base = audit_sample_size(claim, true, n_tests=1600)
    assert base.power >= 0.9
    assert audit_sample_size(claim, true, n_tests=1600, power=0.99).n > base.n
    assert audit_sample_size(claim, true, n_tests=4).n < base.n
    # mid-curve gap for GDP claims; the Clopper-Pearson bounds straddle the true errors
    assert 0.2 < base.type1 < 0.8
    assert base.type1 < base.type1_bound and base.type2_true < base.type2_bound
    assert base.type2_claimed - base.type2_true <= base.largest_gap + 1e-12
    assert "releases per input" in base.summary()


def test_sample_size_bad_input():
    with pytest.raises(ValueError, match="nowhere below `claimed`"):
        audit_sample_size(gaussian_tradeoff(1.0), gaussian_tradeoff(0.5))
    with pytest.raises(ValueError, match=r"`max_n` \(1000\) releases do not reach `power`"):
        audit_sample_size(gaussian_tradeoff(0.5), gaussian_tradeoff(0.51), max_n=1000)
    with pytest.raises(ValueError, match=r"`power` \(1.0\) must be in \(0, 1\)"):
        audit_sample_size(gaussian_tradeoff(0.5), gaussian_tradeoff(0.7), power=1.0)


# ---------------------------------------------------------------------------
# docstrings
# ---------------------------------------------------------------------------


def test_docstrings_have_no_control_characters():
    """`\\rho` in a non-raw docstring had become a carriage return (and `\\f`, `\\a` ...)."""
    for name in audit_module.__all__:
        obj = getattr(audit_module, name)
        doc = inspect.getdoc(obj) or ""
        assert not any(ord(c) < 32 and c not in "\n" for c in doc), name
    assert r"\rho" in zcdp_tradeoff.__doc__ and r"\alpha" in zcdp_tradeoff.__doc__


# ---------------------------------------------------------------------------
# layout (issue 11): a package whose public names all resolve
# ---------------------------------------------------------------------------


def test_audit_is_a_package_whose_public_names_resolve():
    """audit.py had 1,312 lines; it is a package, and every name it lists is importable
    (``from invariantdp.audit import *`` fails on a stale entry of ``__all__``)."""
    assert hasattr(audit_module, "__path__")
    parts = [
        importlib.import_module(f"invariantdp.audit.{m.name}")
        for m in pkgutil.iter_modules(audit_module.__path__)
    ]
    assert len(parts) >= 2
    assert audit_module.__all__
    for name in audit_module.__all__:
        obj = getattr(audit_module, name)
        assert getattr(obj, "__module__", "invariantdp").startswith("invariantdp"), name


def test_audit_shows_a_progress_bar_only_when_asked(capsys):
    from invariantdp.audit import audit_mechanism
    from invariantdp.privacy import eps_delta

    def mech(t, rng):
        return t + rng.laplace(0.0, 1.0)

    kw = dict(claimed=eps_delta(1.0), n_samples=50, rng=0, statistics=("threshold",))
    audit_mechanism(mech, 0.0, 1.0, progress=True, **kw)
    assert "audit" in capsys.readouterr().err
    audit_mechanism(mech, 0.0, 1.0, progress=False, **kw)
    assert capsys.readouterr().err == ""
