"""``odds-ratio-test --json`` names the null odds ratio once (issue 22, section 3)."""

import pytest

import invariantdp as idp
from invariantdp.cli import main

from ._helpers import strict_json


def test_the_null_has_one_name_and_the_estimate_another(capsys):
    argv = ["odds-ratio-test", "--statistic", "14.3", "--margins", "20,20,20,20"]
    assert main([*argv, "--epsilon", "1", "--null-odds-ratio", "2", "--json"]) == 0
    out = strict_json(capsys.readouterr().out)
    ref = idp.umpu_odds_ratio_test(14.3, (20, 20, 20, 20), epsilon=1.0, null_odds_ratio=2.0)
    assert out["null_odds_ratio"] == 2.0
    assert "odds_ratio" not in out  # it read as an estimate of the odds ratio
    assert out["estimate"] == pytest.approx(ref.estimate)
    assert [k for k in out if "odds_ratio" in k] == ["null_odds_ratio"]
