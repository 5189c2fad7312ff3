"""The odds-ratio workflow on the command line (issue 22, section 5).

A curator makes, saves and publishes the semi-DP release of a 2 x 2 table
from a CSV; an analyst tests it from the file.
"""

import pytest

import invariantdp as idp
from invariantdp import Release, datasets
from invariantdp.cli import main

from ._helpers import one_error_line
from ._helpers import strict_json as _strict


@pytest.fixture
def berkeley_csv(tmp_path):
    path = tmp_path / "berkeley.csv"
    datasets.berkeley_admissions().to_csv(path)
    return path


def test_the_curator_releases_and_the_analyst_tests_the_file(berkeley_csv, tmp_path, capsys):
    rel = tmp_path / "rel.json"
    assert main(["release", "odds-ratio", str(berkeley_csv), "--epsilon", "1", "-o", str(rel)]) == 0
    out = capsys.readouterr().out
    assert "secure" in out and "SIMULATION" not in out
    assert "men, admitted" in out and "odds of admitted, men vs women" in out
    assert f"odds-ratio-test --release {rel}" in out  # the next step, named
    release = Release.load(rel)
    assert not release.simulation and release.mechanism == "odds_ratio_release"
    assert release.invariants.values.tolist() == [2691, 1835, 1755, 2771]

    assert main(["odds-ratio-test", "--release", str(rel), "--json"]) == 0
    doc = _strict(capsys.readouterr().out)
    ref = idp.umpu_odds_ratio_test(release)
    assert doc["pvalue"] == pytest.approx(ref.pvalue) and doc["pvalue"] < 1e-12
    assert doc["estimate"] == pytest.approx(ref.estimate)
    assert doc["x11_cell"] == "men, admitted"
    assert doc["compares"] == "odds of admitted, men vs women"
    assert doc["randomness"] == "secure"

    assert main(["odds-ratio-test", "--release", str(rel)]) == 0
    text = capsys.readouterr().out
    assert "odds of admitted, men vs women" in text and "men, admitted" in text


def test_a_long_table_is_released_with_its_labels(tmp_path, capsys):
    long = tmp_path / "long.csv"
    long.write_text(
        "sex,outcome,n\nmen,admitted,1198\nmen,rejected,1493\n"
        "women,admitted,557\nwomen,rejected,1278\n"
    )
    rel = tmp_path / "rel.json"
    argv = ["release", "odds-ratio", str(long), "--value-column", "n"]
    argv += ["--label-columns", "sex,outcome", "--epsilon", "1", "--seed", "3", "-o", str(rel)]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["odds-ratio-test", "--release", str(rel), "--json"]) == 0
    assert _strict(capsys.readouterr().out)["compares"] == "odds of admitted, men vs women"


def test_odds_ratio_test_saves_the_release_it_tested(berkeley_csv, tmp_path, capsys):
    """The issue's call, refused before ("unrecognized arguments")."""
    rel = tmp_path / "rel.json"
    argv = ["odds-ratio-test", "--table-csv", str(berkeley_csv), "--epsilon", "1"]
    assert main([*argv, "-o", str(rel), "--json"]) == 0
    tested = _strict(capsys.readouterr().out)
    assert tested["release_file"] == str(rel) and tested["randomness"] == "secure"
    assert tested["x11_cell"] == "men, admitted"
    # the file is the release that was tested: testing it again gives the same answer
    assert main(["odds-ratio-test", "--release", str(rel), "--json"]) == 0
    again = _strict(capsys.readouterr().out)
    assert again["statistic"] == tested["statistic"] and again["pvalue"] == tested["pvalue"]
    # never over an existing file without --force, and nothing is released then
    assert main([*argv, "-o", str(rel)]) == 2
    assert "exists; pass --force" in one_error_line(capsys, "odds-ratio-test")
    assert main([*argv, "-o", str(rel), "--force", "--seed", "1"]) == 0
    assert "wrote the release to" in capsys.readouterr().out
    assert Release.load(rel).simulation


def test_output_saves_only_a_release_made_here(tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["odds-ratio-test", "--statistic", "14.3", "--margins", "20,20,20,20"]
    assert main([*argv, "--epsilon", "1", "-o", str(out)]) == 2
    assert "`--output` saves the release made from a confidential table" in one_error_line(
        capsys, "odds-ratio-test"
    )
    assert not out.exists()


def test_output_never_writes_over_the_table(berkeley_csv, capsys):
    before = berkeley_csv.read_bytes()
    argv = ["odds-ratio-test", "--table-csv", str(berkeley_csv), "--epsilon", "1"]
    assert main([*argv, "-o", str(berkeley_csv), "--force"]) == 2
    assert "same file as `--table-csv`" in one_error_line(capsys, "odds-ratio-test")
    assert berkeley_csv.read_bytes() == before


def test_a_release_that_is_not_testable_names_the_command_that_makes_one(
    berkeley_csv, tmp_path, capsys
):
    """`release tulap` then `odds-ratio-test --release` said "no invariant margins"."""
    rel = tmp_path / "tulap.json"
    assert main(["release", "tulap", str(berkeley_csv), "--epsilon", "1", "-o", str(rel)]) == 0
    capsys.readouterr()
    assert main(["odds-ratio-test", "--release", str(rel)]) == 2
    err = one_error_line(capsys, "odds-ratio-test")
    assert "no invariant margins" in err and "'tulap'" in err
    assert "`invariantdp release odds-ratio TABLE.csv --epsilon E -o release.json`" in err


def test_the_odds_ratio_mechanism_is_the_registry_s(capsys):
    from invariantdp.cli.odds_ratio import ODDS_RATIO
    from invariantdp.cli.release import _EXACT as EXACT
    from invariantdp.cli.release import _NAMES as NAMES
    from invariantdp.mechanisms import MECHANISMS as REGISTRY
    from invariantdp.mechanisms import odds_ratio_release

    assert ODDS_RATIO is REGISTRY["odds_ratio"] and ODDS_RATIO.function is odds_ratio_release
    assert "odds-ratio" in NAMES and "odds-ratio" in EXACT
    with pytest.raises(SystemExit):
        main(["odds-ratio-test", "--help"])
    assert "invariantdp release odds-ratio" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize(
    "args, message",
    [
        (["--sensitivity", "2"], "`--sensitivity` does not apply to odds-ratio"),
        (["--mu", "1"], "`--mu` does not apply to odds-ratio"),
        (["--invariants", "total"], "`--invariants` does not apply to odds-ratio"),
    ],
)
def test_release_odds_ratio_refuses_what_does_not_apply(args, message, berkeley_csv, capsys):
    argv = ["release", "odds-ratio", str(berkeley_csv), "--epsilon", "1", *args, "-o", "x.json"]
    assert main(argv) == 2
    assert message in one_error_line(capsys, "release")


def test_release_odds_ratio_needs_a_2x2_table(tmp_path, capsys):
    t = tmp_path / "t.csv"
    t.write_text(",a,b,c\nx,10,4,6\ny,3,8,9\n")
    assert main(["release", "odds-ratio", str(t), "--epsilon", "1", "-o", str(tmp_path / "r")]) == 2
    assert "`table`" in one_error_line(capsys, "release")
