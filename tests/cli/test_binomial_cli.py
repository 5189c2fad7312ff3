"""``invariantdp binomial-test``: the DP UMP test of a proportion."""

import pytest

import invariantdp as idp
from invariantdp.cli import main
from invariantdp.mechanisms import tulap_mechanism

from ._helpers import one_error_line
from ._helpers import strict_json as _strict


def _one_error_line(capsys, command="binomial-test"):
    return one_error_line(capsys, command)


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_statistic_matches_the_library(alternative, capsys):
    # 620 successes in 1000 trials released at epsilon 0.5, delta 1e-8
    argv = ["binomial-test", "--statistic", "623.7", "--n", "1000", "--null-p", "0.6"]
    argv += ["--epsilon", "0.5", "--delta", "1e-8", "--alternative", alternative]
    assert main([*argv, "--confidence-level", "0.9", "--json"]) == 0
    out = _strict(capsys.readouterr().out)
    ref = idp.ump_binomial_test(623.7, 1000, 0.6, epsilon=0.5, delta=1e-8, alternative=alternative)
    assert out["pvalue"] == pytest.approx(ref.pvalue, rel=0, abs=1e-12)
    ci = ref.confidence_interval(0.9)
    assert out["confidence_interval"] == pytest.approx([ci.low, ci.high], abs=1e-12)
    assert out["estimate"] == pytest.approx(ref.estimate, abs=1e-12)
    assert out["alternative"] == alternative and out["confidence_level"] == 0.9
    assert out["n"] == 1000 and out["null_p"] == 0.6 and out["epsilon"] == 0.5
    assert out["randomness"] is None and out["simulation"] is None  # nothing was released


def test_default_is_two_sided_and_text_summary(capsys):
    argv = ["binomial-test", "--statistic", "62.4", "--n", "100", "--null-p", "0.5"]
    assert main([*argv, "--epsilon", "1"]) == 0
    text = capsys.readouterr().out
    ref = idp.ump_binomial_test(62.4, 100, 0.5, epsilon=1.0, alternative="two-sided")
    assert "two-sided" in text and "p-value" in text and f"{ref.pvalue:g}" in text


def test_release_file_carries_the_noise(tmp_path, capsys):
    from invariantdp.cli._common import mark_randomness

    rel = mark_randomness(tulap_mechanism(37, epsilon=0.8, delta=1e-6, rng=4), False)
    path = rel.save(tmp_path / "count.json")
    argv = ["binomial-test", "--release", str(path), "--n", "80", "--null-p", "0.3"]
    assert main([*argv, "--json"]) == 0
    out = _strict(capsys.readouterr().out)
    ref = idp.ump_binomial_test(rel, 80, 0.3, alternative="two-sided")
    assert out["pvalue"] == pytest.approx(ref.pvalue, abs=1e-12)
    assert out["statistic"] == float(rel.value) and out["epsilon"] == 0.8
    assert out["randomness"] == "simulation" and out["simulation"] is True
    assert main(argv) == 0
    assert "SIMULATION: not for publication" in capsys.readouterr().out


def test_release_written_by_the_cli(tmp_path, capsys):
    table = tmp_path / "count.csv"
    table.write_text(",successes\nall,37\n")
    rel = tmp_path / "count.json"
    assert main(["release", "tulap", str(table), "--epsilon", "1", "-o", str(rel)]) == 0
    capsys.readouterr()
    argv = ["binomial-test", "--release", str(rel), "--n", "80", "--null-p", "0.3", "--json"]
    assert main(argv) == 0
    out = _strict(capsys.readouterr().out)
    assert out["randomness"] == "secure" and 0.0 <= out["pvalue"] <= 1.0


@pytest.mark.parametrize(
    "args, match",
    [
        (["--statistic", "3", "--n", "10", "--null-p", "1.5", "--epsilon", "1"],
         "`--null-p` (1.5) must be in (0, 1)"),
        (["--statistic", "3", "--n", "10", "--null-p", "nan", "--epsilon", "1"], "`--null-p`"),
        (["--statistic", "3", "--n", "10", "--null-p", "0.5"], "`--epsilon` is required"),
        (["--statistic", "3", "--n", "10", "--null-p", "0.5", "--epsilon", "0"], "`epsilon`"),
        (["--statistic", "3", "--n", "10", "--null-p", "0.5", "--epsilon", "1",
          "--delta", "1"], "`delta`"),
        (["--statistic", "inf", "--n", "10", "--null-p", "0.5", "--epsilon", "1"],
         "`statistic` (inf) must be finite"),
        (["--statistic", "3", "--n", "10", "--null-p", "0.5", "--epsilon", "1",
          "--confidence-level", "1"], "(confidence_level = 1.0) must be in (0, 1)"),
        (["--release", "/no/such.json", "--n", "10", "--null-p", "0.5"], "No such file"),
    ],
)  # fmt: skip
def test_bad_inputs_exit_2(args, match, capsys):
    assert main(["binomial-test", *args]) == 2
    assert match in _one_error_line(capsys)


def test_bad_releases_exit_2(tmp_path, capsys):
    rel = tulap_mechanism(3, epsilon=1.0, rng=1).save(tmp_path / "r.json")
    argv = ["binomial-test", "--release", str(rel), "--n", "10", "--null-p", "0.5"]
    assert main([*argv, "--epsilon", "1"]) == 2
    assert "carries its noise law" in _one_error_line(capsys)
    table = tulap_mechanism([3, 4], epsilon=1.0, rng=1).save(tmp_path / "two.json")
    assert main(["binomial-test", "--release", str(table), "--n", "10", "--null-p", "0.5"]) == 2
    assert "must hold one count, got 2 values" in _one_error_line(capsys)
    garbage = tmp_path / "g.json"
    garbage.write_text("{not json")
    assert main(["binomial-test", "--release", str(garbage), "--n", "10", "--null-p", "0.5"]) == 2
    assert "`--release`" in _one_error_line(capsys)
