"""Additive mechanisms: noise laws, calibration, reproducibility, argument errors."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from invariantdp import InvariantDPError, Release
from invariantdp.mechanisms import (
    discrete_gaussian_mechanism,
    discrete_laplace_mechanism,
    gaussian_mechanism,
    laplace_mechanism,
    lp_mechanism,
    tulap_mechanism,
)
from invariantdp.privacy import gdp_to_eps_delta

X = np.array([[12.0, 5.0, 7.0], [4.0, 9.0, 3.0]])

CALLS = {
    "laplace": lambda x, rng: laplace_mechanism(x, epsilon=0.7, sensitivity=2.0, rng=rng),
    "gaussian-mu": lambda x, rng: gaussian_mechanism(x, mu=0.5, rng=rng),
    "gaussian-eps-delta": lambda x, rng: gaussian_mechanism(x, epsilon=1.0, delta=1e-6, rng=rng),
    "discrete_laplace": lambda x, rng: discrete_laplace_mechanism(x, epsilon=0.5, rng=rng),
    "discrete_gaussian": lambda x, rng: discrete_gaussian_mechanism(x, rho=0.3, rng=rng),
    "tulap": lambda x, rng: tulap_mechanism(x, epsilon=1.0, delta=0.05, rng=rng),
    "l1": lambda x, rng: lp_mechanism(x, 1, epsilon=1.0, rng=rng),
    "l2": lambda x, rng: lp_mechanism(x, 2, epsilon=1.0, rng=rng),
    "linf": lambda x, rng: lp_mechanism(x, "inf", epsilon=1.0, rng=rng),
}


@pytest.mark.parametrize("name", CALLS)
def test_same_seed_same_release_and_json_round_trip(name):
    a, b = CALLS[name](X, 11), CALLS[name](X, 11)
    assert a == b
    assert not np.array_equal(a.value, CALLS[name](X, 12).value)
    back = Release.from_json(a.to_json())
    assert back == a
    assert back.noise.distribution() is not None
    assert a.value.shape == X.shape


def _draws(call, m, seed=0):
    gen = np.random.default_rng(seed)
    return np.array([call(np.zeros(3), gen).value for _ in range(m)])


def test_gaussian_sd_is_sensitivity_over_mu():
    d = _draws(lambda x, g: gaussian_mechanism(x, mu=0.5, sensitivity=3.0, rng=g), 4000)
    sd = 3.0 / 0.5
    se = sd**2 * np.sqrt(2 / d.size)
    assert abs(d.var() - sd**2) < 4 * se


def test_gaussian_epsilon_delta_calibration_is_exact():
    r = gaussian_mechanism([0.0], epsilon=1.0, delta=1e-5, sensitivity=2.0, rng=0)
    mu = r.guarantee.params["mu"]
    assert gdp_to_eps_delta(mu, 1.0) == pytest.approx(1e-5, rel=1e-8)
    assert r.noise.params["scale"] == pytest.approx(2.0 / mu)
    assert r.guarantee.tradeoff()(0.5) >= 0  # a GDP tradeoff is recorded


def test_laplace_scale_and_distribution():
    d = _draws(lambda x, g: laplace_mechanism(x, epsilon=0.5, sensitivity=2.0, rng=g), 3000).ravel()
    assert stats.kstest(d, stats.laplace(scale=4.0).cdf).pvalue > 1e-3


def test_discrete_mechanisms_are_integer_and_match_their_laws():
    d = _draws(lambda x, g: discrete_laplace_mechanism(x, epsilon=1.0, rng=g), 1500).ravel()
    assert np.all(d == np.round(d))
    law = discrete_laplace_mechanism([0], epsilon=1.0, rng=0).noise.distribution()
    assert abs(d.var() - law.var()) < 4 * np.sqrt((law.moment(4) - law.var() ** 2) / d.size)
    g = _draws(lambda x, gen: discrete_gaussian_mechanism(x, mu=0.5, rng=gen), 1500).ravel()
    assert np.all(g == np.round(g))
    r = discrete_gaussian_mechanism([0], mu=0.5, rng=0)
    assert r.guarantee.definition == "zCDP" and r.guarantee.params["rho"] == 0.125
    assert r.noise.params["sigma"] == 2.0
    assert abs(g.var() - 4.0) < 4 * 4.0 * np.sqrt(2 / g.size)


def test_tulap_noise_matches_tulap_law():
    d = _draws(
        lambda x, g: tulap_mechanism(x, epsilon=1.0, delta=0.1, sensitivity=2.0, rng=g), 2000
    )
    law = tulap_mechanism(
        [0.0], epsilon=1.0, delta=0.1, sensitivity=2.0, rng=0
    ).noise.distribution()
    assert stats.kstest(d.ravel(), law.cdf).pvalue > 1e-3


@pytest.mark.parametrize("p", [1, 2, "inf"])
def test_lp_mechanism_expected_norm(p):
    # V = R U with ||V||_p having mean d * scale for the three samplers (Alg. 4-6)
    d, scale = 3, 2.0
    draws = _draws(lambda x, g: lp_mechanism(x, p, epsilon=0.5, rng=g), 4000)
    ordp = np.inf if p == "inf" else p
    norms = np.linalg.norm(draws, ord=ordp, axis=1)
    assert abs(norms.mean() - d * scale) < 4 * norms.std() / np.sqrt(norms.size)
    if p != 1:
        law = lp_mechanism(np.zeros(3), p, epsilon=0.5, rng=0).noise.distribution()
        cov = np.cov(draws.T)
        se = np.sqrt(2.0 / draws.shape[0]) * np.diag(law.cov())
        assert np.all(np.abs(np.diag(cov) - np.diag(law.cov())) < 4 * se)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: laplace_mechanism(X, epsilon=-1.0), r"`epsilon` \(-1.0\) must be > 0"),
        (lambda: laplace_mechanism(X, epsilon=np.nan), r"`epsilon` \(nan\) must not be NaN"),
        (
            lambda: laplace_mechanism([1.0, np.inf], epsilon=1.0, rng=0),
            r"`x` .* must contain only finite",
        ),
        (  # the secure default (no rng): the same rule, the data not shown
            lambda: laplace_mechanism([1.0, np.inf], epsilon=1.0),
            r"`x` must contain only finite values; the data are confidential",
        ),
        (lambda: gaussian_mechanism(X, mu=1.0, epsilon=1.0, delta=0.1), "either `mu`"),
        (lambda: gaussian_mechanism(X, epsilon=1.0), "both `epsilon` and `delta`"),
        (
            lambda: gaussian_mechanism(X, epsilon=1.0, delta=1.5),
            r"`delta` \(1.5\) must be in \[0, 1\)",
        ),
        (
            lambda: gaussian_mechanism(X, mu=1.0, sensitivity=0.0),
            r"`sensitivity` \(0.0\) must be > 0",
        ),
        (
            lambda: gaussian_mechanism(X, mu=1.0, sensitivity=np.ones((2, 5))),
            "`sensitivity` vectors",
        ),
        (lambda: discrete_laplace_mechanism([1.5, 2.0], epsilon=1.0), "`x` must be integer-valued"),
        (
            lambda: discrete_gaussian_mechanism([1, 2], mu=1.0, rho=1.0),
            "exactly one of `mu` or `rho`",
        ),
        (lambda: lp_mechanism(X, 3, epsilon=1.0), r"`p` \(3\) must be 1, 2 or inf"),
        (
            lambda: tulap_mechanism(X, epsilon=1.0, delta=-0.1),
            r"`delta` \(-0.1\) must be in \[0, 1\)",
        ),
    ],
)
def test_bad_arguments_raise_value_error_naming_them(call, match):
    with pytest.raises(InvariantDPError, match=match):
        call()


def test_sensitivity_from_a_space():
    S = np.array([[1.0, -1.0, 0.0], [0.0, 3.0, -1.0]])
    r = gaussian_mechanism(np.zeros(3), mu=1.0, sensitivity=S, rng=0)
    assert r.metadata["sensitivity"] == pytest.approx(np.sqrt(10.0))
    r = laplace_mechanism(np.zeros(3), epsilon=1.0, sensitivity=S, rng=0)
    assert r.noise.params["scale"] == 4.0


def test_lp_and_knorm_take_the_issue_signature():
    """``lp_mechanism(x, p, sensitivity, epsilon)`` and ``knorm(x, vertices, epsilon)``."""
    from invariantdp.mechanisms import knorm, lp_mechanism

    a = lp_mechanism([1.0, 2.0], 2, 2.0, 0.5, rng=3)
    b = lp_mechanism([1.0, 2.0], 2, sensitivity=2.0, epsilon=0.5, rng=3)
    assert a == b and a.metadata["sensitivity"] == 2.0
    V = np.array([[1.0, -1.0], [-1.0, 1.0]])
    assert knorm([3.0, 3.0], V, 1.0, rng=1) == knorm([3.0, 3.0], V, epsilon=1.0, rng=1)
    with pytest.raises(TypeError, match="`epsilon` is required"):
        lp_mechanism([1.0], 1)


# ---------------------------------------------------------------------------
# secure paths, randomness records, calibration of the grid samplers
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", CALLS)
def test_numpy_releases_record_simulation(name):
    rel = CALLS[name](X, 3)
    assert rel.simulation and rel.metadata["randomness"] == "simulation"


def test_float_paths_keep_their_numpy_stream():
    """secure=False draws exactly what numpy draws (same stream, same values as before)."""
    x = np.array([1.0, -2.0, 3.5])
    r = laplace_mechanism(x, epsilon=0.5, sensitivity=2.0, rng=8)
    np.testing.assert_array_equal(r.value, x + np.random.default_rng(8).laplace(0.0, 4.0, 3))
    g = gaussian_mechanism(x, mu=0.5, sensitivity=2.0, rng=9)
    np.testing.assert_array_equal(g.value, x + 4.0 * np.random.default_rng(9).standard_normal(3))
    # the float paths are simulations, taken only when a seed (or secure=False) asks
    for f in (laplace_mechanism, gaussian_mechanism):
        assert "A simulation when ``rng`` is given (or ``secure=False``)" in f.__doc__
    assert "Simulation only" in lp_mechanism.__doc__


def test_secure_laplace_record():
    r = laplace_mechanism(np.zeros(3), epsilon=1.0, sensitivity=2.0, grid=0.5, secure=True)
    # grid-unit sensitivity floor(2 / 0.5) + 3 coordinates; scale 7 grid steps of 0.5
    assert r.metadata["grid_sensitivity"] == 7
    assert r.noise.family == "grid_laplace"
    assert r.noise.params == {"grid": 0.5, "scale": 3.5}
    # the guarantee of the value and its run time (issue 20): epsilon, and a delta of at most
    # 2**-64 for the constant-work sampler's slow paths, recorded as timing_tv
    g = r.guarantee
    assert g.definition == "(epsilon, delta)-DP" and g.params["epsilon"] == 1.0
    assert 0 < g.params["timing_tv"] < g.params["delta"] <= 2.0**-64
    assert g.adjacency == "query values differing by at most 2 in l1 norm"
    assert np.all(r.value / 0.5 == np.round(r.value / 0.5))
    law = r.noise.distribution()
    assert law.pmf(0.25) == 0.0 and law.pmf(0.5) > 0
    assert law.var() == pytest.approx(0.25 * law.base.var())
    back = Release.from_json(r.to_json())
    assert back == r and not back.simulation


def test_secure_grid_clamps_data_beyond_its_range():
    """Issue 20: data beyond (2**52 - 1) grid steps are clamped (a rule that does not depend on
    the data), never refused: the neighbours 2**32 - 1 and 2**32 of the default grid at scale 1
    (2**-20) both release."""
    for x in (2.0**32 - 1, 2.0**32, 1e300):
        r = laplace_mechanism([x], epsilon=50.0, secure=True)
        limit = (2**52 - 1) * r.metadata["grid"]
        assert abs(r.value[0] - min(x, limit)) < 1.0, x
        assert r.metadata["rounding"].startswith("x clamped to |x| <= (2**52 - 1) * grid")


def test_secure_grid_uses_the_support_of_a_sensitivity_space():
    S = np.array([[1.0, -1.0, 0.0, 0.0], [0.0, 0.0, 1.0, -1.0]])
    r = laplace_mechanism(np.zeros(4), epsilon=1.0, sensitivity=S, grid=0.25, secure=True)
    assert r.metadata["grid_sensitivity"] == 8 + 2  # two coordinates change, not four


def test_default_grid_is_a_power_of_two_fraction_of_the_scale():
    r = laplace_mechanism(np.zeros(2), epsilon=0.5, sensitivity=1.0, secure=True)
    gamma = r.metadata["grid"]
    assert gamma == 2.0**-21  # min(scale 2, Delta/d = 1/2) * 2**-20
    # the rounding adds d = 2 grid steps to 2**21: noise scale within 1e-6 of Delta/epsilon
    assert r.noise.params["scale"] == pytest.approx(2.0, rel=1e-6)
    assert r.noise.params["scale"] >= 2.0


def test_secure_gaussian_record_and_calibration():
    from invariantdp.privacy import zcdp_log_delta, zcdp_tradeoff

    r = gaussian_mechanism(np.zeros(2), epsilon=1.0, delta=1e-5, secure=True)
    g = r.guarantee
    assert g.definition == "zCDP" and g.params["epsilon"] == 1.0 and g.params["delta"] == 1e-5
    rho = g.params["rho"]
    assert zcdp_log_delta(rho, 1.0) <= np.log(1e-5)  # the certificate of CKS Cor. 13
    L = np.log(1e5)
    assert rho > (np.sqrt(L + 1.0) - np.sqrt(L)) ** 2  # better than eps = rho + 2 sqrt(rho L)
    assert r.noise.family == "grid_gaussian"
    # sigma = sqrt(D / (2 rho)) grid steps, D >= (Delta_2 / gamma)^2
    assert r.noise.params["sigma"] >= 1.0 / np.sqrt(2.0 * rho)
    assert r.noise.params["sigma"] == pytest.approx(1.0 / np.sqrt(2.0 * rho), rel=1e-5)
    # the zCDP calibration leaves 2**-64 of delta to the run time, recorded as timing_tv
    assert zcdp_log_delta(rho, 1.0) <= np.log(1e-5 - 2.0**-64)
    assert 0 < g.params["timing_tv"] and g.tradeoff()(0.5) <= zcdp_tradeoff(rho)(0.5)
    m = gaussian_mechanism(np.zeros(2), mu=0.5, sensitivity=2.0, grid=0.25, secure=True)
    assert m.guarantee.params["rho"] == 0.125 and set(m.guarantee.params) == {"rho", "timing_tv"}
    # (2 / 0.25 + sqrt 2)^2 = 88.6..., floored: sigma^2 = 88 / mu^2 grid steps^2
    assert m.metadata["grid_sensitivity_squared"] == 88
    assert m.noise.params["sigma"] == pytest.approx(0.25 * np.sqrt(88 / 0.25))


@given(
    eps=st.floats(1e-3, 20.0),
    log_delta=st.floats(-30.0, -1.0),
)
def test_zcdp_calibration_meets_the_target(eps, log_delta):
    from invariantdp.mechanisms._grid import zcdp_for
    from invariantdp.privacy import zcdp_log_delta

    delta = 10.0**log_delta
    rho = zcdp_for(eps, delta)
    assert zcdp_log_delta(rho, eps) <= np.log(delta) - 1e-9
    assert zcdp_log_delta(rho * 1.001, eps) > np.log(delta)  # and it is tight


@given(
    data=st.data(),
    d=st.integers(1, 5),
    log_grid=st.integers(-6, 2),
    delta=st.floats(0.1, 8.0),
)
def test_rounding_sensitivity_bounds_hold(data, d, log_grid, delta):
    """||round(x/g) - round(x'/g)|| never exceeds the calibrated grid sensitivity."""
    from fractions import Fraction

    from invariantdp.mechanisms._grid import grid_l1_sensitivity, grid_l2_sensitivity_sq

    gamma = 2.0**log_grid
    x = np.array(data.draw(st.lists(st.floats(-50, 50), min_size=d, max_size=d)))
    v = np.array(data.draw(st.lists(st.floats(-1, 1), min_size=d, max_size=d)))
    if not np.any(v):
        return
    for p, bound in (
        (1, grid_l1_sensitivity(Fraction(delta), gamma, d)),
        (2, grid_l2_sensitivity_sq(Fraction(delta) ** 2, gamma, d)),
    ):
        diff = v / np.linalg.norm(v, ord=p) * delta * (1 - 1e-12)
        e = np.rint(x / gamma) - np.rint((x + diff) / gamma)
        assert (np.abs(e).sum() if p == 1 else (e**2).sum()) <= bound


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda: laplace_mechanism([1.0], epsilon=1.0, grid=0.3, secure=True),
            r"`grid` \(0.3\) must be a",
        ),
        (
            lambda: laplace_mechanism([1.0], epsilon=1.0, grid=0.25, rng=0),
            "used only by the secure path",
        ),
        (
            lambda: gaussian_mechanism([1.0], mu=1.0, grid=0.25, secure=False),
            "used only by the secure path",
        ),
        (
            lambda: laplace_mechanism([1.0], epsilon=1.0, grid=2.0**-1000, secure=True),
            r"must be in \[2\*\*-960",
        ),
        (
            lambda: discrete_laplace_mechanism([2.0**52], epsilon=1.0, rng=0),
            "magnitude 2\\*\\*52 or more",
        ),
        (lambda: lp_mechanism([1.0], 2, epsilon=1.0, secure=True), "no exact sampler"),
    ],
)
def test_secure_argument_errors(call, match):
    with pytest.raises(InvariantDPError, match=match):
        call()


def test_complex_data_is_refused():
    with pytest.raises(TypeError, match="`x` must be real"):
        laplace_mechanism(np.array([1 + 2j]), epsilon=1.0, rng=0)
    with pytest.raises(TypeError, match="`x` must hold real numbers, got dtype complex128"):
        laplace_mechanism(np.array([1 + 2j]), epsilon=1.0)  # the secure default


def test_huge_grid_noise_is_refused():
    # the rounding term alone, d / epsilon grid steps, exceeds 2**46
    with pytest.raises(InvariantDPError, match=r"grid units .* must be <= 2\*\*46"):
        laplace_mechanism(np.zeros(2000), epsilon=1e-12, secure=True)


# ---------------------------------------------------------------------------
# the old names of the mechanisms (issue 11): deprecated aliases, kept one release
# ---------------------------------------------------------------------------

OLD_NAMES = {
    "laplace": ("laplace_mechanism", ([1.0, 2.0],), {"epsilon": 1.0}),
    "gaussian": ("gaussian_mechanism", ([1.0, 2.0],), {"mu": 1.0}),
    "discrete_laplace": ("discrete_laplace_mechanism", ([3, 4],), {"epsilon": 1.0}),
    "discrete_gaussian": ("discrete_gaussian_mechanism", ([3, 4],), {"rho": 1.0}),
    "tulap": ("tulap_mechanism", ([3.0],), {"epsilon": 1.0, "delta": 0.1}),
}


@pytest.mark.parametrize("old", sorted(OLD_NAMES))
def test_old_mechanism_name_warns_and_still_works(old):
    import invariantdp.mechanisms as M

    new, args, kwargs = OLD_NAMES[old]
    with pytest.warns(DeprecationWarning, match=rf"mechanisms\.{old} is deprecated.*{new}"):
        func = getattr(M, old)
    assert func is getattr(M, new)
    assert old not in M.__all__ and new in M.__all__
    assert func(*args, **kwargs, rng=3) == getattr(M, new)(*args, **kwargs, rng=3)


@pytest.mark.parametrize("old", [*sorted(OLD_NAMES), "lp_mechanism"])
def test_old_names_of_the_additive_module_warn(old):
    from invariantdp.mechanisms import _additive as additive

    with pytest.warns(DeprecationWarning, match=rf"additive\.{old} is deprecated"):
        func = getattr(additive, old)
    assert callable(func)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        additive.nope  # noqa: B018
