import numpy as np
import pytest

from invariantdp.audit import audit_mechanism, audit_samples
from invariantdp.distributions import tulap
from invariantdp.mechanisms import odds_ratio_release
from invariantdp.privacy import eps_delta, gaussian

X = np.array([[12, 5], [4, 9]])
# a worst vector of the 2 x 2 sensitivity space: same margins, x11 moves by 1
X_PRIME = X + np.array([[1, -1], [-1, 1]])


def test_correct_tulap_release_passes():
    res = audit_mechanism(
        lambda t, rng: odds_ratio_release(t, epsilon=1.0, delta=0.01, rng=rng),
        X,
        X_PRIME,
        n_samples=8_000,
        rng=1,
    )
    assert res.passed, res.summary()
    assert "pass" in res.summary()


def test_halved_noise_is_caught():
    """Noise at 2 epsilon while claiming epsilon: the audit must fail."""

    def broken(t, rng):
        return np.asarray(t)[0, 0] + tulap.rvs(np.exp(-2.0), 0.0, random_state=rng)

    res = audit_mechanism(broken, X, X_PRIME, claimed=eps_delta(1.0), n_samples=20_000, rng=2)
    assert not res.passed
    assert res.significant_violation > 0


def test_gaussian_claim_exact_and_broken(rng):
    n = 40_000
    s0 = rng.normal(0.0, 1.0, n)
    s1 = rng.normal(1.0, 1.0, n)
    assert audit_samples(s0, s1, gaussian(1.0)).passed
    # the same samples violate a stronger claim (mu = 0.8)
    assert not audit_samples(s0, s1, gaussian(0.8)).passed


def test_violation_is_near_zero_for_a_tight_claim(rng):
    n = 50_000
    s0 = rng.laplace(0.0, 1.0, n)
    s1 = rng.laplace(1.0, 1.0, n)
    res = audit_samples(s0, s1, eps_delta(1.0))
    assert res.passed
    # the Laplace mechanism meets f_{1,0} with equality at one point
    assert abs(res.max_violation) < 0.02


def test_bad_input():
    with pytest.raises(ValueError, match="same size"):
        audit_samples(np.zeros(20), np.zeros(30), eps_delta(1.0))
    with pytest.raises(ValueError, match=r"`significance` \(2.0\) must be in \(0, 1\)"):
        audit_samples(np.zeros(20), np.zeros(20), eps_delta(1.0), significance=2.0)
