import json

import pytest

from invariantdp import privacy as acc
from invariantdp.cli import main
from invariantdp.privacy import _swapping_epsilon as swapping


def run_json(capsys, *argv):
    assert main(["account", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_gdp(capsys):
    out = run_json(capsys, "gdp", "--epsilon", "1", "--delta", "1e-5", "--group", "3")
    mu = acc.eps_delta_to_gdp(1.0, 1e-5)
    assert out["mu"] == pytest.approx(mu, rel=1e-12)
    assert out["group_mu"] == pytest.approx(3 * mu, rel=1e-12)


def test_eps_delta_both_directions(capsys):
    out = run_json(capsys, "eps-delta", "--mu", "1", "--epsilon", "1")
    assert out["delta"] == pytest.approx(acc.gdp_to_eps_delta(1.0, 1.0), rel=1e-12)
    out = run_json(capsys, "eps-delta", "--mu", "1", "--delta", "1e-5")
    assert out["epsilon"] == pytest.approx(acc.gdp_to_epsilon(1.0, 1e-5), rel=1e-12)


def test_epsilon_zero_as_eps_delta_returns_it(capsys):
    # eps-delta --delta can answer epsilon = 0; that answer is valid input back (issue 22)
    out = run_json(capsys, "eps-delta", "--mu", "1", "--delta", "0.5")
    assert out["epsilon"] == 0.0
    out = run_json(capsys, "eps-delta", "--mu", "1", "--epsilon", "0")
    assert out["delta"] == acc.gdp_to_eps_delta(1.0, 0.0) <= 0.5
    out = run_json(capsys, "gdp", "--epsilon", "0", "--delta", str(out["delta"]))
    assert out["mu"] == 1.0


def test_zcdp_group(capsys):
    argv = ["zcdp", "--rho", "2.56", "--delta", "1e-10", "--group", "2"]
    out = run_json(capsys, *argv, "--method", "bun-steinke")  # the Census figure
    assert out["group_rho"] == pytest.approx(10.24)
    assert round(out["epsilon"], 5) == 40.95057
    assert out["method"] == "bun-steinke"
    tight = run_json(capsys, *argv)  # the default: CKS (2020), Cor. 13
    assert tight["method"] == "cks"
    assert tight["epsilon"] == acc.zcdp_to_eps_delta(10.24, 1e-10, method="cks")
    assert tight["epsilon"] < out["epsilon"]


def test_census_text_and_json(capsys):
    assert main(["account", "census"]) == 0
    text = capsys.readouterr().out
    assert "17.91528" in text and "40.95057" in text
    out = run_json(capsys, "census", "--rho", "2.56", "--a", "2", "--delta", "1e-10")
    assert out["semi_dp_rho"] == pytest.approx(10.24)
    assert round(out["epsilon"], 5) == 17.91528


def test_topdown(capsys):
    out = run_json(capsys, "topdown")
    assert out["total_rho"] == pytest.approx(15.29)
    assert len(out["rows"]) == 4


def test_swapping(capsys):
    out = run_json(capsys, "swapping", "--b", "4", "--swap-rate", "0.1")
    assert out["epsilon"] == pytest.approx(float(swapping.swapping_epsilon(4, 0.1)))


@pytest.mark.parametrize(
    "argv, match",
    [
        (["gdp", "--epsilon", "-1", "--delta", "1e-5"], r"`epsilon` \(-1.0\) must be 0 or in"),
        (["zcdp", "--rho", "1", "--delta", "1.5"], r"`delta` \(1.5\) must be in \(0, 1\)"),
        (["zcdp", "--rho", "-1", "--delta", "0.1"], r"`rho` \(-1.0\) must be > 0"),
        (["zcdp", "--rho", "1", "--delta", "0.1", "--group", "0"], r"`k` \(0\) must be >= 1"),
    ],
)
def test_bad_arguments_exit_2_with_the_rule(capsys, argv, match):
    import re

    assert main(["account", *argv]) == 2
    assert re.search(match, capsys.readouterr().err)


def test_non_integer_group_is_rejected_by_the_parser(capsys):
    with pytest.raises(SystemExit):
        main(["account", "zcdp", "--rho", "1", "--delta", "0.1", "--group", "2.5"])
    assert "invalid int value" in capsys.readouterr().err


def test_unknown_zcdp_conversion_is_rejected_by_the_parser(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["account", "zcdp", "--rho", "1", "--delta", "0.1", "--method", "tight"])
    assert exc.value.code == 2
    assert "invalid choice: 'tight'" in capsys.readouterr().err


def test_bare_account_prints_help(capsys):
    assert main(["account"]) == 2
    assert "CONVERSION" in capsys.readouterr().out


def test_cli_tests_turn_invariantdps_deprecation_warnings_into_errors(request):
    """The guard of tests/cli/conftest.py is on: the CLI calls no deprecated name."""
    marks = [m.args for m in request.node.iter_markers("filterwarnings")]
    assert ("error::DeprecationWarning:invariantdp",) in marks
