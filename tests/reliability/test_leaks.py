"""Regression tests for the privacy leaks of issue 10, section 2 (and 3-4 for the samplers).

Each test reproduces a leak that the package had and checks that the
production path (``secure=True``) no longer has it; where the leak is
inherent to a floating-point simulation path, the test keeps it as
documentation and checks that such releases are marked as simulations.

The achievable-output tests follow Mironov (2012): a release leaks when some
output is possible for one data set and impossible for a neighbouring one.
Secure draws cannot be seeded, so statistical assertions here are made at a
level of 1e-6 or on events that have probability 0 under the fixed code.
"""

import importlib
import secrets

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from invariantdp import InvariantDPError, Release
from invariantdp.distributions import tulap_from_privacy
from invariantdp.mechanisms import (
    discrete_gaussian_mechanism,
    discrete_laplace_mechanism,
    gaussian_mechanism,
    laplace_mechanism,
    lp_mechanism,
    odds_ratio_release,
    tulap_mechanism,
)
from invariantdp.mechanisms._integer_noise import _tulap_value
from invariantdp.secure import SecureGenerator

# the modules (the package attribute ``tulap`` is the distribution object)
tulap_module = importlib.import_module("invariantdp.distributions._tulap")
exact_module = importlib.import_module("invariantdp.distributions._exact_samplers")

# ---------------------------------------------------------------------------
# secure Tulap: the output bits must not depend on x
# ---------------------------------------------------------------------------


def _central_codes(values, sensitivity):
    """Odd integers ``o`` with ``fl(sensitivity * o * 2**-54) == y`` for outputs ``|y| < s/2``.

    Outputs that close to 0 have integer part 0, so the secure sampler
    releases ``fl(sensitivity * U)`` with ``U`` an odd multiple of ``2**-54``,
    whatever ``x`` was; an output with no such ``o`` gets the code ``nan``.
    The old sampler computed ``x + sensitivity * (G + U)`` in floating point,
    whose rounding depends on ``x`` (46% of the outputs near 0 at x = 0 were
    impossible at x = 2).
    """
    y = np.asarray(values, dtype=float)
    y = y[np.abs(y) < sensitivity / 2]
    c = y / sensitivity * 2.0**54
    base = 2.0 * np.floor((c - 1.0) / 2.0) + 1.0
    codes = np.full(y.shape, np.nan)
    for o in (base - 2.0, base, base + 2.0):
        hit = sensitivity * (o * 2.0**-54) == y
        codes[hit] = o[hit]
    return codes


@pytest.mark.parametrize(
    "sensitivity, xs",
    [(2.0, (0.0, 2.0)), (0.5, (0.5, 1.0)), (1.0, (0.0, 1.0)), (3.0, (0.0, 3.0))],
)
def test_secure_tulap_central_outputs_are_the_same_lattice_for_neighbours(sensitivity, xs):
    for x in xs:
        rel = tulap_mechanism(np.full(4000, x), epsilon=1.0, sensitivity=sensitivity, secure=True)
        codes = _central_codes(rel.value, sensitivity)
        # P(no output near 0) < 1e-100 at epsilon = 1 (about 1/4 of the mass is there)
        assert codes.size > 100
        assert not np.isnan(codes).any(), "an output impossible at the neighbour"
        assert not rel.simulation


def test_secure_tulap_with_truncation_keeps_the_lattice():
    for x in (0.0, 2.0):
        rel = tulap_mechanism(
            np.full(3000, x), epsilon=1.0, delta=0.05, sensitivity=2.0, secure=True
        )
        codes = _central_codes(rel.value, 2.0)
        assert codes.size > 100 and not np.isnan(codes).any()


@given(
    k=st.integers(-(2**40), 2**40),
    g=st.integers(-(2**40), 2**40),
    shift=st.integers(-(2**40), 2**40),
    j=st.integers(0, 2**53 - 1),
    step=st.one_of(
        st.integers(-30, 30).map(lambda e: 2.0**e),
        st.floats(1e-6, 1e6, allow_nan=False, allow_infinity=False),
    ),
)
def test_secure_tulap_value_depends_on_k_plus_g_only(k, g, shift, j, step):
    """The release is a function of the exact Tulap release ``k + N``: shifting data into noise
    changes nothing (the old ``x + s * (g + u)`` rounded ``g + u`` before adding ``x``)."""
    u = np.array([((j - 2**52) + 0.5) * 2.0**-53])
    a = _tulap_value(np.array([k]), np.array([g]), u, step)
    b = _tulap_value(np.array([k + shift]), np.array([g - shift]), u, step)
    assert a[0] == b[0]


@pytest.mark.parametrize(
    "x, sensitivity, k",
    [
        (0.5, 1.0, 1),
        (1.5, 1.0, 2),
        (0.25, 0.5, 1),
        (-0.5, 1.0, 0),
        (0.7, 2.0, 0),
        (2.0**52, 1.0, 2**51 - 1),
    ],
)
def test_secure_tulap_rounds_data_off_the_lattice(x, sensitivity, k):
    """Issue 20: data off the lattice are rounded (floor(x / s + 1/2), exactly) and huge data
    clamped, a rule that never depends on the data, instead of a refusal neighbours differ in."""
    rel = tulap_mechanism([x], epsilon=50.0, sensitivity=sensitivity, secure=True)
    assert rel.metadata["data_rule"].startswith("x rounded to the lattice")
    # at epsilon = 50 the noise is (0 + U) with probability 1 - 4e-22: |value - k s| <= s / 2
    # (near 2**51 the doubles are 1/2 apart: U rounds to 0 or +-1/2)
    assert abs(rel.value[0] - k * sensitivity) <= sensitivity / 2


def test_secure_tulap_accepts_decimal_lattices():
    # 0.3 is not 3 * 0.1 in binary; it is within 2**-20 * 0.1 of the lattice point
    rel = tulap_mechanism([0.3, 0.0], epsilon=40.0, sensitivity=0.1, secure=True)
    assert np.all(np.abs(rel.value - [0.3, 0.0]) < 0.1)


def test_secure_odds_ratio_release_central_outputs():
    vals = np.array(
        [
            float(odds_ratio_release([[2, 5], [4, 9]], epsilon=1.0, secure=True).value)
            for _ in range(1500)
        ]
    )
    # value = fl(2 + G + U); for 2 + G = 0 the value is U itself, an odd multiple of
    # 2**-54 (about 90 of the 1500 draws; none with probability < 1e-40)
    codes = _central_codes(vals, 1.0)
    assert codes.size > 0 and not np.isnan(codes).any()


# ---------------------------------------------------------------------------
# float paths: the leak is inherent, so they are simulations and say so
# ---------------------------------------------------------------------------


def test_float_laplace_leak_is_kept_as_a_simulation():
    """Mironov's attack on ``x + Lap``: outputs at x = 0 that cannot occur at x = 1.

    At x = 1 an output ``y`` with ``|y| < 1/2`` is ``fl(1 + eta)`` with
    ``eta`` in [-3/2, -1/2], computed exactly (Sterbenz), so ``y * 2**53`` is
    an integer; at x = 0 the output is ``eta`` itself, with finer bits.
    """
    y0 = laplace_mechanism(np.zeros(4000), epsilon=1.0, rng=1)
    small = y0.value[np.abs(y0.value) < 0.5]
    unreachable = small * 2.0**53 != np.round(small * 2.0**53)
    assert unreachable.mean() > 0.5  # the leak (about 80%)
    y1 = laplace_mechanism(np.ones(4000), epsilon=1.0, rng=2)
    small1 = y1.value[np.abs(y1.value) < 0.5]
    assert np.all(small1 * 2.0**53 == np.round(small1 * 2.0**53))
    for rel in (y0, y1):
        assert rel.simulation and rel.metadata["randomness"] == "simulation"
        assert "SIMULATION" in rel.summary()
    assert "A simulation when ``rng`` is given" in laplace_mechanism.__doc__
    # without rng the release is the secure one: the leak is not the default
    assert not laplace_mechanism(np.zeros(4), epsilon=1.0).simulation


def test_secure_laplace_outputs_are_grid_multiples_for_neighbours():
    grids = set()
    for x in (0.0, 1.0):
        rel = laplace_mechanism(np.full(2000, x), epsilon=1.0, secure=True)
        gamma = rel.metadata["grid"]
        grids.add(gamma)
        k = rel.value / gamma
        assert np.all(k == np.round(k))  # on gamma * Z, whatever x
        assert not rel.simulation
    assert len(grids) == 1  # the grid does not depend on the data


def test_secure_gaussian_outputs_are_grid_multiples():
    for x in (0.0, 1.0):
        rel = gaussian_mechanism(np.full(500, x), epsilon=1.0, delta=1e-5, secure=True)
        k = rel.value / rel.metadata["grid"]
        assert np.all(k == np.round(k)) and not rel.simulation


@pytest.mark.parametrize(
    "call",
    [
        lambda: tulap_mechanism([3.0], epsilon=1.0, rng=0),
        lambda: odds_ratio_release([[1, 2], [3, 4]], epsilon=1.0, rng=0),
        lambda: gaussian_mechanism([1.0], mu=1.0, rng=0),
        lambda: discrete_gaussian_mechanism([1], rho=1.0, rng=0),
        lambda: lp_mechanism([1.0, 2.0], 2, epsilon=1.0, rng=0),
    ],
)
def test_every_numpy_release_is_marked_simulation(call):
    rel = call()
    assert rel.simulation
    back = Release.from_json(rel.to_json())
    assert back.simulation


def test_lp_mechanism_refuses_secure():
    with pytest.raises(InvariantDPError, match="lp_mechanism has no exact sampler"):
        lp_mechanism([1.0, 2.0], 1, epsilon=1.0, secure=True)


# ---------------------------------------------------------------------------
# seed reuse
# ---------------------------------------------------------------------------


def test_seed_reuse_returns_the_difference_and_is_marked():
    a = discrete_laplace_mechanism([121, 80], epsilon=1.0, rng=42)
    b = discrete_laplace_mechanism([120, 80], epsilon=1.0, rng=42)
    np.testing.assert_array_equal(a.value - b.value, [1, 0])  # what a seed does
    assert a.simulation and b.simulation
    assert Release.from_json(a.to_json()).metadata["randomness"] == "simulation"
    with pytest.raises(InvariantDPError, match="cannot be seeded"):
        discrete_laplace_mechanism([121, 80], epsilon=1.0, rng=42, secure=True)
    s = discrete_laplace_mechanism([121, 80], epsilon=1.0, secure=True)
    assert not s.simulation and s.metadata["randomness"] == "secure"


def test_secure_module_explains_why_seeded_releases_are_not_for_publication():
    import invariantdp.secure as secure

    doc = secure.__doc__
    assert "never for publication" in doc
    assert "rng=42" in doc and "[1, 0]" in doc


# ---------------------------------------------------------------------------
# huge noise scales must not return the data
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: discrete_laplace_mechanism(np.zeros(10**4), epsilon=1e-30, rng=1),
        lambda: discrete_laplace_mechanism(np.zeros(10), epsilon=1.0, sensitivity=10**20, rng=1),
        lambda: discrete_gaussian_mechanism(np.zeros(10), rho=1e-40, rng=1),
        lambda: discrete_laplace_mechanism([1], epsilon=1e-19, secure=True),
        lambda: discrete_gaussian_mechanism([1], rho=1e-40, secure=True),
    ],
)
def test_huge_integer_noise_scales_are_refused(call):
    with pytest.raises(InvariantDPError, match=r"must be <= 2\*\*46"):
        call()


@given(log_eps=st.floats(-40.0, 2.0))
def test_discrete_laplace_never_returns_saturated_noise(log_eps):
    eps = 10.0**log_eps
    if 1.0 / eps > 2.0**46:
        with pytest.raises(InvariantDPError, match=r"2\*\*46"):
            discrete_laplace_mechanism(np.zeros(50), epsilon=eps, rng=1)
        return
    rel = discrete_laplace_mechanism(np.zeros(50), epsilon=eps, rng=1)
    assert np.all(np.abs(rel.value) < 2.0**52)
    if 1.0 / eps > 100:  # P(all 50 draws are 0) < 1e-40
        assert np.any(rel.value != 0)


@pytest.mark.parametrize(
    "call",
    [
        lambda: laplace_mechanism([1.0], epsilon=1e-320),
        lambda: laplace_mechanism([1.0], epsilon=1e-300, sensitivity=1e10),
        lambda: gaussian_mechanism([1.0], mu=1e-300, sensitivity=1e10),
        lambda: lp_mechanism([1.0, 2.0], 2, sensitivity=1e10, epsilon=1e-300),
    ],
)
def test_float_noise_that_overflows_is_refused(call):
    with pytest.raises(InvariantDPError, match=r"epsilon|noise scale"):
        call()


@pytest.mark.parametrize("secure", [False, True])
def test_tulap_below_the_representable_epsilon_is_refused(secure):
    with pytest.raises(InvariantDPError, match=r"`epsilon` \(1e-17\)"):
        tulap_mechanism([0.0], epsilon=1e-17, delta=0.1, secure=secure)


def test_tulap_noise_scale_beyond_2_46_is_refused():
    with pytest.raises(InvariantDPError, match=r"2\*\*46"):
        tulap_mechanism([0.0], epsilon=1e-15)  # delta = 0: scale 1e15, unbounded support


# ---------------------------------------------------------------------------
# bounded rejection loops (issue section 4)
# ---------------------------------------------------------------------------


def test_default_tulap_with_tiny_acceptance_is_fast_and_exact_in_law(work):
    gen = work.CountingGenerator(3)
    rel = tulap_mechanism(np.zeros(20_000), epsilon=1e-6, delta=0.5, rng=gen)  # 1 - q ~ 1e-6
    # uniform proposals kept with probability > 1/4, two numbers each: under 8 numbers a
    # draw on average (rejecting the untruncated law needed about 1 / (1 - q) = 1e6)
    assert gen.drawn <= 8 * 20_000
    law = tulap_from_privacy(1e-6, 0.5)
    assert stats.kstest(rel.value, law.cdf).pvalue > 1e-3


@pytest.mark.parametrize("epsilon, delta", [(1e-9, 0.1), (1e-12, 0.3)])
def test_secure_tulap_with_tiny_acceptance_terminates_and_fits(epsilon, delta, monkeypatch):
    # the random bits read from the OS, whichever secrets function reads them
    bits = []
    cost = {"token_bytes": lambda n: 8 * n, "randbits": lambda k: k, "randbelow": int.bit_length}
    for name, nbits in cost.items():
        real = getattr(secrets, name)
        monkeypatch.setattr(
            secrets, name, lambda a, real=real, nbits=nbits: bits.append(nbits(a)) or real(a)
        )
    rel = tulap_mechanism(
        np.zeros(4000), epsilon=epsilon, delta=delta, secure=True
    )  # looped forever
    # a bounded number of bits a draw: a few hundred trial by trial (each trial accepts
    # with probability above 1/6), a few thousand for a constant-work sampler
    assert 0 < sum(bits) <= 8192 * 4000
    law = tulap_from_privacy(epsilon, delta)
    edges = law.ppf(np.linspace(0, 1, 21))
    assert stats.chisquare(np.histogram(rel.value, bins=edges)[0]).pvalue > 1e-6


class _AllZero:
    """A source of zero bytes: the proposal is the boundary cell ``G = -m_c`` at its outer
    edge, outside the support, so the samplers reject forever."""

    def bytes(self, n):
        return bytes(n)


def test_secure_tulap_rejection_is_capped(monkeypatch):
    monkeypatch.setattr(exact_module, "MAX_ROUNDS", 5)
    # regime q > 1/2: the boundary cell is proposed, and the first cell is outside the support
    with pytest.raises(InvariantDPError, match="rejected every trial of 5 rounds in a row"):
        importlib.import_module("invariantdp.distributions._exact_samplers").draw_tulap_exact(
            _AllZero(), 1e-9, 0.1, 1
        )


def test_float_tulap_rejection_is_capped(monkeypatch):
    class Reject:
        """``G1`` huge and ``G2 = 0``: every untruncated draw falls outside the support."""

        calls = 0

        def standard_exponential(self, shape):
            self.calls += 1
            return np.full(shape, 1e6 if self.calls % 2 else 0.0)

        def random(self, shape):
            return np.full(shape, 0.5)

    monkeypatch.setattr(tulap_module, "_MAX_ROUNDS", 5)
    with pytest.raises(InvariantDPError, match="rejected 5 proposals in a row"):
        tulap_module._draw_tulap(Reject(), np.exp(-1.0), 0.1, (3,))


# ---------------------------------------------------------------------------
# SecureGenerator as rng
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda rng, s: discrete_laplace_mechanism([1], epsilon=1.0, rng=rng, secure=s),
        lambda rng, s: discrete_gaussian_mechanism([1], rho=1.0, rng=rng, secure=s),
        lambda rng, s: tulap_mechanism([1.0], epsilon=1.0, rng=rng, secure=s),
        lambda rng, s: laplace_mechanism([1.0], epsilon=1.0, rng=rng, secure=s),
        lambda rng, s: gaussian_mechanism([1.0], mu=1.0, rng=rng, secure=s),
        lambda rng, s: odds_ratio_release([[1, 2], [3, 4]], epsilon=1.0, rng=rng, secure=s),
    ],
)
def test_secure_generator_as_rng(call):
    """It used to raise AttributeError; now it is the secure source, or refused clearly."""
    rel = call(SecureGenerator(), True)
    assert not rel.simulation
    with pytest.raises(InvariantDPError, match="`rng` is a SecureGenerator but `secure=False`"):
        call(SecureGenerator(), False)
