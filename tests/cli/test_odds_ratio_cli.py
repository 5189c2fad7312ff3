import math

import pytest

import invariantdp as idp
from invariantdp.cli import main
from invariantdp.mechanisms import odds_ratio_release

from ._helpers import one_error_line
from ._helpers import strict_json as _strict


def _one_error_line(capsys, command="odds-ratio-test"):
    return one_error_line(capsys, command)


def test_analyst_path(capsys):
    code = main(
        [
            "odds-ratio-test", "--statistic", "14.3", "--margins", "20,20,20,20",
            "--epsilon", "1", "--json",
        ]
    )  # fmt: skip
    assert code == 0
    out = _strict(capsys.readouterr().out)
    ref = idp.umpu_odds_ratio_test(14.3, (20, 20, 20, 20), epsilon=1.0)  # two-sided, both
    assert out["alternative"] == ref.alternative == "two-sided"
    assert out["pvalue"] == pytest.approx(ref.pvalue)
    assert out["confidence_interval"] == pytest.approx(list(ref.confidence_interval()))
    assert out["randomness"] is None and out["simulation"] is None  # nothing was released


def test_json_is_strict_with_an_unbounded_interval(capsys):
    """The one-sided interval's upper limit is infinite: written as null, never Infinity."""
    argv = ["odds-ratio-test", "--statistic", "14.3", "--margins", "20,20,20,20"]
    assert main([*argv, "--epsilon", "1", "--alternative", "greater", "--json"]) == 0
    text = capsys.readouterr().out
    assert "Infinity" not in text and "NaN" not in text
    out = _strict(text)
    ref = idp.umpu_odds_ratio_test(14.3, (20, 20, 20, 20), epsilon=1.0, alternative="greater")
    assert math.isinf(ref.confidence_interval().high)
    assert out["confidence_interval"][1] is None


def test_curator_path_uses_the_seed_and_says_simulation(capsys):
    argv = ["odds-ratio-test", "--table", "12,5,4,9", "--epsilon", "1", "--seed", "4"]
    main([*argv, "--json"])
    out = _strict(capsys.readouterr().out)
    rel = odds_ratio_release([[12, 5], [4, 9]], epsilon=1.0, rng=4)
    assert out["statistic"] == pytest.approx(float(rel.value))
    assert out["randomness"] == "simulation" and out["simulation"] is True
    assert main(argv) == 0
    assert "SIMULATION: not for publication" in capsys.readouterr().out


def test_curator_path_is_secure_by_default(capsys):
    argv = ["odds-ratio-test", "--table", "12,5,4,9", "--epsilon", "1"]
    assert main([*argv, "--json"]) == 0
    out = _strict(capsys.readouterr().out)
    assert out["randomness"] == "secure" and out["simulation"] is False
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "SIMULATION" not in text and "secure" in text
    assert main([*argv, "--simulate"]) == 0
    assert "SIMULATION: not for publication" in capsys.readouterr().out


def test_table_csv_is_secure_by_default(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text(",y,n\na,12,5\nb,4,9\n")
    assert main(["odds-ratio-test", "--table-csv", str(path), "--epsilon", "1", "--json"]) == 0
    out = _strict(capsys.readouterr().out)
    assert out["margins"] == [17, 13, 16, 14] and out["randomness"] == "secure"


def test_release_file(tmp_path, capsys):
    from invariantdp.cli._common import mark_randomness

    rel = mark_randomness(odds_ratio_release([[12, 5], [4, 9]], epsilon=2.0, rng=9), False)
    path = rel.save(tmp_path / "r.json")
    assert main(["odds-ratio-test", "--release", str(path), "--alternative", "two-sided"]) == 0
    text = capsys.readouterr().out
    assert "two-sided" in text and "p-value" in text
    assert "SIMULATION: not for publication" in text
    assert main(["odds-ratio-test", "--release", str(path), "--json"]) == 0
    assert _strict(capsys.readouterr().out)["randomness"] == "simulation"


def test_demo_runs_and_says_simulation(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "Physicians' Health Study" in out and "p-value" in out
    assert "SIMULATION: not for publication" in out and "seed 20240601" in out


def test_demo_validates_before_printing(capsys):
    assert main(["demo", "--epsilon", "-1"]) == 2
    assert "`epsilon`" in _one_error_line(capsys, "demo")


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
        (
            ["odds-ratio-test", "--statistic", "3", "--margins", "5,5,5,5", "--epsilon", "1",
             "--seed", "3"],
            "apply only when a table is released",
        ),
        (["odds-ratio-test", "--table-csv", "/etc", "--epsilon", "1"], "Is a directory"),
        (["odds-ratio-test", "--release", "/etc"], "'/etc'"),
        (["odds-ratio-test", "--release", "/no/such/file.json"], "No such file"),
    ],
)  # fmt: skip
def test_errors_are_reported(argv, match, capsys):
    assert main(argv) == 2
    assert match in _one_error_line(capsys)


@pytest.mark.parametrize(
    "content, match",
    [
        (b"{not json", "`--release`"),
        (b"\xff\xfe\x81garbage", "`--release`"),
        (b"[1, 2, 3]", "must be a JSON object"),
        (b"[" * 100_000, "`--release`"),
        (b'{"format": NaN}', "`--release`"),
    ],
)
def test_bad_release_files(content, match, tmp_path, capsys):
    path = tmp_path / "r.json"
    path.write_bytes(content)
    assert main(["odds-ratio-test", "--release", str(path)]) == 2
    assert match in _one_error_line(capsys)


@pytest.mark.parametrize(
    "content, match",
    [(b"", "`--table-csv`"), (b"\xff\xfe\x81,\x00\n", "`--table-csv`"), (b",a\nx,1\n", "2x2")],
)
def test_bad_table_csv(content, match, tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_bytes(content)
    assert main(["odds-ratio-test", "--table-csv", str(path), "--epsilon", "1"]) == 2
    assert match in _one_error_line(capsys)


def test_json_estimate_is_null_where_epsilon_cannot_resolve_it(capsys):
    # at epsilon 1e-12 the p-value is flat in the odds ratio: no estimate exists
    argv = ["odds-ratio-test", "--statistic", "10", "--margins", "20,20,20,20"]
    assert main([*argv, "--epsilon", "1e-12", "--json"]) == 0
    out = _strict(capsys.readouterr().out)
    assert out["estimate"] is None
    assert 0.0 <= out["pvalue"] <= 1.0
    assert main([*argv, "--epsilon", "1", "--json"]) == 0
    assert math.isfinite(_strict(capsys.readouterr().out)["estimate"])
