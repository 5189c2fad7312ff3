import json

import pytest

import invariantdp as idp
from invariantdp.cli import main
from invariantdp.mechanisms import odds_ratio_release


def test_analyst_path(capsys):
    code = main(
        [
            "odds-ratio-test",
            "--statistic",
            "14.3",
            "--margins",
            "20,20,20,20",
            "--epsilon",
            "1",
            "--json",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    ref = idp.umpu_odds_ratio_test(14.3, (20, 20, 20, 20), epsilon=1.0)
    assert out["pvalue"] == pytest.approx(ref.pvalue)
    assert out["confidence_interval"][0] == pytest.approx(ref.confidence_interval().low)


def test_curator_path_uses_the_seed(capsys):
    main(["odds-ratio-test", "--table", "12,5,4,9", "--epsilon", "1", "--seed", "4", "--json"])
    out = json.loads(capsys.readouterr().out)
    rel = odds_ratio_release([[12, 5], [4, 9]], epsilon=1.0, rng=4)
    assert out["statistic"] == pytest.approx(float(rel.value))


def test_release_file(tmp_path, capsys):
    rel = odds_ratio_release([[12, 5], [4, 9]], epsilon=2.0, rng=9)
    path = rel.save(tmp_path / "r.json")
    assert main(["odds-ratio-test", "--release", str(path), "--alternative", "two-sided"]) == 0
    text = capsys.readouterr().out
    assert "two-sided" in text and "p-value" in text


def test_demo_runs(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "Physicians' Health Study" in out and "p-value" in out


@pytest.mark.parametrize(
    "argv,match",
    [
        (
            ["odds-ratio-test", "--statistic", "3", "--margins", "5,5,6,5", "--epsilon", "1"],
            "do not add up",
        ),
        (
            ["odds-ratio-test", "--statistic", "3", "--margins", "5,5,5,5", "--epsilon", "-1"],
            "`epsilon`",
        ),
        (["odds-ratio-test", "--statistic", "3", "--epsilon", "1"], "`--margins`"),
        (["odds-ratio-test", "--table", "1,2,3", "--epsilon", "1"], "`--table` needs 4"),
    ],
)
def test_errors_are_reported(argv, match, capsys):
    assert main(argv) == 2
    assert match in capsys.readouterr().err
