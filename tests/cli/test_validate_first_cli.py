"""Every sub-command checks all its arguments before printing anything (issue 12).

A bad argument ends the command with exit status 2 and one bounded line on
stderr, and nothing on stdout: no introduction, no partial report.
"""

import numpy as np
import pandas as pd
import pytest

from invariantdp.cli import main
from invariantdp.cli._common import MAX_MESSAGE


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A table, a Tulap release of a count and a projected-Gaussian release."""
    from invariantdp.invariants import totals
    from invariantdp.mechanisms import projected_gaussian, tulap_mechanism

    tmp = tmp_path_factory.mktemp("validate")
    (tmp / "t.csv").write_text(",a,b\nx,3,4\ny,5,6\n")
    tulap_mechanism(40, epsilon=1.0, rng=1).save(tmp / "count.json")
    counts = pd.Series([50.0, 60.0, 70.0, 80.0], index=pd.Index(list("abcd"), name="k"))
    projected_gaussian(counts, totals([0, 0, 1, 1]), mu=1.0, rng=2).save(tmp / "pg.json")
    pd.DataFrame({"k": list("abcd"), "x": np.arange(4.0)}).to_csv(tmp / "d.csv", index=False)
    return tmp


CASES = [
    (["demo", "--epsilon", "-1"], "`epsilon`"),
    (["demo", "--epsilon", "nan"], "`epsilon`"),
    (["odds-ratio-test", "--statistic", "3", "--margins", "5,5,5,5", "--epsilon", "1",
      "--confidence-level", "1.5"], "`--confidence-level` (confidence_level = 1.5) must be"),
    (["binomial-test", "--statistic", "3", "--n", "10", "--null-p", "0.5", "--epsilon", "-1"],
     "`epsilon`"),
    (["binomial-test", "--release", "{tmp}/count.json", "--n", "100", "--null-p", "0.5",
      "--confidence-level", "0"], "`--confidence-level`"),
    (["release", "gaussian", "{tmp}/t.csv", "--rho", "-2", "-o", "{tmp}/o.json"], "`--rho`"),
    (["fit", "poisson", "--release", "{tmp}/pg.json", "--data", "{tmp}/d.csv", "--formula",
      "~ nosuch"], "`--formula`"),
    (["fit", "loglinear", "--release", "{tmp}/count.json"], "`--release`"),
    (["fit", "loglinear", "--release", "{tmp}/pg.json"], "r x c table"),
    (["account", "zcdp", "--rho", "-1", "--delta", "1e-6"], "rho"),
    (["account", "gdp", "--epsilon", "1", "--delta", "2"], "delta"),
    (["swap", "{tmp}/t.csv", "{tmp}/o.csv", "--swap", "a", "--swap-rate", "2"], "swap_rate"),
]  # fmt: skip


@pytest.mark.parametrize("argv, match", CASES, ids=[" ".join(c[0][:2]) for c in CASES])
def test_bad_argument_prints_nothing_but_one_error_line(argv, match, files, capsys):
    argv = [a.format(tmp=files) for a in argv]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    command = argv[0]
    assert captured.err.startswith(f"invariantdp {command}: error: "), captured.err
    assert captured.err.count("\n") == 1 and len(captured.err) < MAX_MESSAGE + 100
    assert match in captured.err
    assert not (files / "o.json").exists() and not (files / "o.csv").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["demo", "--seed", "-1"],
        ["binomial-test", "--statistic", "3", "--n", "2.5", "--null-p", "0.5", "--epsilon", "1"],
        ["binomial-test", "--statistic", "3", "--n", "inf", "--null-p", "0.5", "--epsilon", "1"],
        ["binomial-test", "--statistic", "3", "--n", "nan", "--null-p", "0.5", "--epsilon", "1"],
        ["binomial-test", "--statistic", "3", "--n", "10", "--epsilon", "1"],
        ["fit", "poisson", "--release", "r.json", "--data", "d.csv"],
    ],
)
def test_usage_errors_exit_2_before_any_output(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "error:" in captured.err
