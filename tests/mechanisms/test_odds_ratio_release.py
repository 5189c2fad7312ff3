import numpy as np
import pytest
from scipy import stats

from invariantdp import Release
from invariantdp.distributions import tulap_from_privacy
from invariantdp.mechanisms import odds_ratio_release


def test_release_fields():
    r = odds_ratio_release([[12, 5], [4, 9]], epsilon=1.0, delta=1e-3, rng=1)
    assert r.mechanism == "odds_ratio_release"
    assert r.value.shape == ()
    np.testing.assert_array_equal(r.invariants.values, [17, 13, 16, 14])
    assert r.guarantee.semi_adjacent_parameter == 3
    assert r.guarantee.params == {"epsilon": 1.0, "delta": 1e-3}
    b, q = r.noise.params["b"], r.noise.params["q"]
    assert r.noise.distribution().cdf(0.4) == pytest.approx(tulap_from_privacy(1.0, 1e-3).cdf(0.4))
    assert b == pytest.approx(np.exp(-1.0)) and q > 0


def test_same_seed_same_release_and_input_untouched():
    table = np.array([[12, 5], [4, 9]])
    before = table.copy()
    a = odds_ratio_release(table, epsilon=0.5, rng=11)
    b = odds_ratio_release(table, epsilon=0.5, rng=11)
    assert a == b
    np.testing.assert_array_equal(table, before)


def test_noise_follows_its_law():
    gen = np.random.default_rng(3)
    x11 = 40
    draws = np.array(
        [
            float(odds_ratio_release([[x11, 3], [7, 9]], epsilon=0.7, delta=0.01, rng=gen).value)
            for _ in range(3000)
        ]
    )
    assert stats.kstest(draws - x11, tulap_from_privacy(0.7, 0.01).cdf).pvalue > 1e-3


@pytest.mark.parametrize(
    "table,kwargs,match",
    [
        ([[1, 2], [3, -4]], {}, "`table`.*non-negative"),
        ([[1, 2.5], [3, 4]], {}, "`table`.*whole-number"),
        ([[1, 2, 3], [3, 4, 5]], {}, r"`table` must have shape \(2, 2\)"),
        ([[1, 2], [3, np.nan]], {}, "`table`.*finite"),
        ([[1, 2], [3, 4]], dict(epsilon=0), r"`epsilon` \(0.0\) must be > 0"),
        ([[1, 2], [3, 4]], dict(delta=2), r"`delta` \(2.0\) must be in \[0, 1\)"),
    ],
)
def test_bad_input(table, kwargs, match):
    kw = dict(epsilon=1.0)
    kw.update(kwargs)
    with pytest.raises(ValueError, match=match):
        odds_ratio_release(table, **kw)


def test_randomness_is_recorded():
    sim = odds_ratio_release([[12, 5], [4, 9]], epsilon=1.0, rng=1)
    assert sim.simulation and sim.metadata["randomness"] == "simulation"
    sec = odds_ratio_release([[12, 5], [4, 9]], epsilon=1.0, delta=0.01, secure=True)
    assert not sec.simulation and sec.metadata["randomness"] == "secure"
    assert sec.noise.family == sim.noise.family == "tulap"
    assert Release.from_json(sec.to_json()) == sec


def test_a_simulation_refuses_tables_whose_margins_a_float_cannot_hold():
    big = np.array([[2**52, 2**52], [1, 1]], dtype=np.int64)
    with pytest.raises(ValueError, match=r"2\*\*53"):
        odds_ratio_release(big, epsilon=1.0, rng=1)


@pytest.mark.parametrize(
    "table",
    [[[2**53, 0], [0, 0]], [[2**53, 1], [0, 0]], [[2**52, 2**52], [1, 1]], [[2**64, 3], [1, 2]]],
)
def test_secure_release_clamps_a_table_whose_total_exceeds_2_53(table):
    """Clamped as the integer mechanisms clamp, never refused: a refusal would depend on the
    counts ([[2**53, 0], [0, 0]] was released and its neighbour [[2**53, 1], [0, 0]] refused)."""
    limit = 2**51 - 1
    rel = odds_ratio_release(table, epsilon=1.0, secure=True)
    clamped = np.minimum(np.array(table, dtype=object), limit).astype(np.int64)
    margins = [*clamped.sum(axis=1), *clamped.sum(axis=0)]
    assert [int(v) for v in rel.invariants.values] == margins  # exact doubles
    assert rel.metadata["data_rule"].endswith("each cell clamped to 2**51 - 1")
    assert Release.from_json(rel.to_json()) == rel
