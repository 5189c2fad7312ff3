import csv
import math
from pathlib import Path

import pytest

from invariantdp._validation import InvariantDPError
from invariantdp.census._topdown_accounting import (
    TOPDOWN_RHO,
    census_semi_dp_analysis,
    topdown_privacy_accounting,
)
from invariantdp.privacy import _semi_adjacent as semi_adjacent

DATA = Path(__file__).resolve().parents[1] / "data" / "topdown_table_6_2.csv"


def test_section_6_1_numbers():
    res = census_semi_dp_analysis(rho=2.56, a=2, delta=1e-10)
    assert res.semi_dp_rho == pytest.approx(10.24, abs=1e-12)
    assert round(res.epsilon, 5) == 17.91528
    assert round(res.semi_dp_epsilon, 5) == 40.95057
    assert (res.rho, res.a, res.delta) == (2.56, 2, 1e-10)
    text = res.summary()
    for piece in ("2.56", "10.24", "17.91528", "40.95057", "Lemma 39"):
        assert piece in text


def test_defaults_are_the_papers_and_a_comes_from_theorem_16():
    # the state totals: one feature, one-way margins -> a(t) = 2
    a = semi_adjacent.one_way_margins_semi_adjacent_parameter([[39_538_223, 29_145_505, 576_851]])
    assert census_semi_dp_analysis() == census_semi_dp_analysis(2.56, a, 1e-10)


def test_a_equal_one_is_the_advertised_guarantee():
    res = census_semi_dp_analysis(rho=0.5, a=1, delta=1e-6)
    assert res.semi_dp_rho == res.rho
    assert (
        res.semi_dp_epsilon
        == res.epsilon
        == pytest.approx(0.5 + 2 * math.sqrt(0.5 * math.log(1e6)))
    )


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"rho": 0.0}, r"`rho` \(0.0\) must be > 0"),
        ({"rho": -2.56}, r"`rho` \(-2.56\) must be > 0"),
        ({"a": 0}, r"`a` \(0\) must be >= 1"),
        ({"delta": 0.0}, r"`delta` \(0.0\) must be in \(0, 1\)"),
        ({"delta": 1.5}, r"`delta` \(1.5\) must be in \(0, 1\)"),
    ],
)
def test_bad_values(kwargs, match):
    with pytest.raises(InvariantDPError, match=match):
        census_semi_dp_analysis(**kwargs)


def test_non_integer_a_is_a_type_error():
    with pytest.raises(TypeError, match="`a` must be an integer"):
        census_semi_dp_analysis(a=2.5)


def read_table():
    with DATA.open() as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    return rows


def test_topdown_table_6_2():
    table = read_table()
    acc = topdown_privacy_accounting(delta=1e-10)
    by_key = {(f, u): (r, e) for f, u, r, e in acc.rows}
    log_inv_delta = math.log(1e10)
    for row in table:
        rho_pub, eps_pub = float(row["rho"]), float(row["epsilon"])
        if row["file"] == "Total":
            rho, eps = acc.total_rho, acc.total_epsilon
        else:
            rho, eps = by_key[(row["file"], row["unit"])]
        assert round(rho, 2) == rho_pub
        # rho is published to 2 decimals: |d eps / d rho| * 0.005 plus the rounding of eps
        slack = 0.005 * (1 + math.sqrt(log_inv_delta / rho)) + 0.005
        assert abs(eps - eps_pub) <= slack, row
    assert acc.total_rho == pytest.approx(sum(TOPDOWN_RHO.values()))
    assert round(by_key[("DHC", "Household")][1], 2) == 34.33
    assert "52.82" in acc.summary()


def test_topdown_custom_budgets_and_errors():
    acc = topdown_privacy_accounting({("X", "Person"): 1.0}, delta=1e-5)
    assert acc.total_rho == 1.0
    assert acc.total_epsilon == pytest.approx(1 + 2 * math.sqrt(math.log(1e5)))
    with pytest.raises(InvariantDPError, match=r"`rho\[\('X', 'Person'\)\]` \(-1.0\) must be > 0"):
        topdown_privacy_accounting({("X", "Person"): -1.0})
    with pytest.raises(InvariantDPError, match="must name at least one"):
        topdown_privacy_accounting({})
