"""Semi-DP Gaussian (Algorithm 1) and K-norm (Algorithms 2-3) mechanisms."""

import numpy as np
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from invariantdp import InvariantDPError, Release
from invariantdp.invariants import one_way_margins
from invariantdp.mechanisms import _semi_dp as semi_dp_module
from invariantdp.mechanisms import semi_dp_gaussian, semi_dp_knorm

from ._simulation import simulation_unless_seeded

TABLE = np.array([[30, 12, 8], [5, 22, 17]])


@pytest.mark.parametrize(
    "mech, kw", [(semi_dp_gaussian, {"mu": 1.0}), (semi_dp_knorm, {"epsilon": 1.0})]
)
def test_margins_kept_and_reproducible(mech, kw):
    r = mech(TABLE, rng=3, **kw)
    np.testing.assert_allclose(r.value.sum(axis=0), TABLE.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(r.value.sum(axis=1), TABLE.sum(axis=1), rtol=1e-12)
    r.invariants.check(r.value)
    assert r == mech(TABLE, rng=3, **kw)
    assert r.guarantee.semi_adjacent_parameter == 3
    assert Release.from_json(r.to_json()) == r


def test_gaussian_noise_covariance_is_sigma2_times_projector():
    mu, m = 0.8, 3000
    gen = np.random.default_rng(4)
    noise = np.array([semi_dp_gaussian(TABLE, mu=mu, rng=gen).value - TABLE for _ in range(m)])
    noise = noise.reshape(m, -1)
    exact = (2.0 / mu) ** 2 * one_way_margins(TABLE.shape).projector()
    emp = noise.T @ noise / m
    se = np.sqrt((np.diag(exact)[:, None] * np.diag(exact)[None, :] + exact**2) / m)
    assert np.all(np.abs(emp - exact) < 4.5 * se)


def test_example_8_noise_for_2x2():
    r = semi_dp_gaussian([[3, 4], [5, 6]], mu=2.0, rng=0)
    law = r.noise.distribution()
    P = np.array([[1, -1, -1, 1], [-1, 1, 1, -1], [-1, 1, 1, -1], [1, -1, -1, 1]]) / 4
    np.testing.assert_allclose(law.cov(), 1.0 * P, atol=1e-15)  # (Delta_2 / mu)^2 = 1


@pytest.mark.parametrize("k", [2, 3, 5])
def test_l2_cost_beats_the_naive_group_privacy_mechanism(k):
    # Figure 2: E||N||^2 = (2/mu)^2 (k-1)^2 for Algorithm 1 vs (3 sqrt(2)/mu)^2 k^2
    mu = 1.0
    law = semi_dp_gaussian(np.ones((k, k), dtype=int), mu=mu, rng=0).noise.distribution()
    assert law.expected_squared_error() == pytest.approx(4.0 * (k - 1) ** 2)
    assert law.expected_squared_error() < 18.0 * k**2


def test_knorm_is_the_rejection_sampler_law():
    a = np.array([semi_dp_knorm(TABLE, epsilon=1.0, rng=s).value for s in range(400)])
    b = np.array(
        [semi_dp_knorm(TABLE, epsilon=1.0, rng=s, method="rejection").value for s in range(400)]
    )
    va, vb = ((a - TABLE) ** 2).sum((1, 2)), ((b - TABLE) ** 2).sum((1, 2))
    se = np.sqrt((va.var() + vb.var()) / 400)
    assert abs(va.mean() - vb.mean()) < 4.5 * se


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: semi_dp_gaussian(TABLE, mu=0.0), r"`mu` \(0.0\) must be > 0"),
        (lambda: semi_dp_gaussian(TABLE, mu=np.inf), r"`mu` \(inf\) must be finite"),
        (lambda: semi_dp_knorm(TABLE, epsilon=-2), r"`epsilon` \(-2.0\) must be > 0"),
        (lambda: semi_dp_gaussian([[1, 2, 3]], mu=1.0), "at least 2 rows"),
        (lambda: semi_dp_gaussian([1, 2, 3, 4], mu=1.0), "2-D"),
        (lambda: semi_dp_knorm([[1, -2], [3, 4]], epsilon=1.0), "non-negative"),
        (lambda: semi_dp_knorm([[1, np.nan], [3, 4]], epsilon=1.0), "finite"),
    ],
)
def test_bad_arguments(call, match):
    with pytest.raises(InvariantDPError, match=match):
        call()


# --- no call may hang (issue 10, item 4) --------------------------------------------


@given(r=st.integers(2, 1000), c=st.integers(2, 1000))
@example(r=5, c=6)
@example(r=2, c=18)
@example(r=4, c=7)
@example(r=1000, c=1000)
def test_knorm_on_a_table_beyond_sixteen_dimensions_is_refused_at_once(r, c, work):
    # 5 x 6 averages 7 s per release; 1000 x 1000 asked for 7 TiB: refused before the
    # sensitivity space is enumerated and before any draw
    assume((r - 1) * (c - 1) > 16)
    table = np.ones((r, c), dtype=int)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(semi_dp_module, "_space", _not_enumerated)
        work.refused_at_once(
            lambda g: semi_dp_knorm(table, epsilon=1.0, rng=g),
            rf"`table` \({r} x {c}\) is too large.*= {(r - 1) * (c - 1)}.*<= 16.*"
            "semi_dp_gaussian",
            max_bytes=8 * table.nbytes + 2**20,
        )


def _not_enumerated(*args):
    raise AssertionError("the sensitivity space was enumerated")


@pytest.mark.parametrize("method", ["triangulation", "rejection"])
@pytest.mark.parametrize("r,c", [(3, 6), (2, 11), (4, 5), (5, 5)])
def test_facet_methods_beyond_nine_dimensions_are_refused_at_once(r, c, method, work):
    # 3 x 6 and 4 x 5 ran for more than 150 s in Qhull, uninterruptibly
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(semi_dp_module, "_space", _not_enumerated)
        work.refused_at_once(
            lambda g: semi_dp_knorm(np.ones((r, c), dtype=int), epsilon=1.0, method=method, rng=g),
            rf"`method` \('{method}'\) needs the facets.*<= 9.*\({r} x {c}\).*"
            rf"= {(r - 1) * (c - 1)}; use method='polar'",
        )


def test_the_polar_sampler_keeps_the_margins_and_is_reproducible():
    table = np.arange(1, 21).reshape(4, 5)
    r = semi_dp_knorm(table, epsilon=0.5, rng=7)
    assert r.metadata["method"] == "polar" and r == semi_dp_knorm(table, epsilon=0.5, rng=7)
    np.testing.assert_allclose(r.value.sum(axis=0), table.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(r.value.sum(axis=1), table.sum(axis=1), rtol=1e-12)
    assert Release.from_json(r.to_json()) == r
    # within the facet limits "polar" is available too, and "auto" stays the triangulation
    assert semi_dp_knorm(TABLE, epsilon=1.0, rng=1, method="polar").metadata["method"] == "polar"
    assert semi_dp_knorm(TABLE, epsilon=1.0, rng=1).metadata["method"] == "triangulation"


def test_the_alternative_works_at_the_refused_size():
    r = semi_dp_gaussian(np.ones((5, 6), dtype=int), mu=1.0, rng=0)
    np.testing.assert_allclose(r.value.sum(axis=0), 5.0)
    np.testing.assert_allclose(r.value.sum(axis=1), 6.0)


def test_knorm_method_is_checked_before_any_work():
    with pytest.raises(InvariantDPError, match=r"`method` \('mcmc'\) must be"):
        semi_dp_knorm(TABLE, epsilon=1.0, method="mcmc")


# --- simulation only (issue 10, item 2) ----------------------------------------------


@pytest.mark.parametrize(
    "mech, kw", [(semi_dp_gaussian, {"mu": 1.0}), (semi_dp_knorm, {"epsilon": 1.0})]
)
def test_secure_is_refused_with_the_secure_alternatives(mech, kw):
    with pytest.raises(
        InvariantDPError,
        match=r"`secure=True`: semi_dp_\w+ has no exact sampler.*"
        r"odds_ratio_release\(table, \.\.\., secure=True\).*discrete_laplace_mechanism"
        r".*discrete_gaussian_mechanism",
    ):
        mech(TABLE, secure=True, **kw)
    with pytest.raises(TypeError, match="`secure` must be None, True or False"):
        mech(TABLE, secure="yes", **kw)


@pytest.mark.parametrize(
    "mech, kw", [(semi_dp_gaussian, {"mu": 1.0}), (semi_dp_knorm, {"epsilon": 1.0})]
)
@pytest.mark.parametrize("rng", [None, 7])
def test_releases_are_marked_as_simulations(mech, kw, rng):
    with simulation_unless_seeded(rng, mech.__name__):
        r = mech(TABLE, rng=rng, **kw)
    assert r.simulation
    assert r.metadata["randomness"] == "simulation"
    assert "not for publication" in r.metadata["sampler"]
    assert Release.from_json(r.to_json()).simulation
    if mech is semi_dp_knorm:
        assert r.metadata["method"] == "triangulation"
