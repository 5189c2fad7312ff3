"""``invariantdp release``."""

import json

import numpy as np
import pytest

from invariantdp import Release
from invariantdp.cli import main


@pytest.fixture
def table_csv(tmp_path):
    path = tmp_path / "table.csv"
    path.write_text(",a,b,c\nx,10,4,6\ny,3,8,9\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "args",
    [
        ["semi-dp-knorm", "--epsilon", "1"],
        ["semi-dp-gaussian", "--mu", "0.5"],
        ["projected-gaussian", "--invariants", "margins", "--epsilon", "1", "--delta", "1e-6"],
        ["extended-laplace", "--invariants", "row-totals", "--epsilon", "1"],
        ["lp", "--p", "inf", "--epsilon", "2"],
        ["discrete-gaussian", "--rho", "0.5"],
        ["tulap", "--epsilon", "1", "--delta", "0.01", "--sensitivity", "2"],
    ],
)
def test_release_written_atomically_and_reproducible(args, table_csv, tmp_path, capsys):
    out1, out2 = tmp_path / "r1.json", tmp_path / "r2.json"
    assert (
        main(["release", args[0], str(table_csv), *args[1:], "--seed", "5", "-o", str(out1)]) == 0
    )
    assert (
        main(["release", args[0], str(table_csv), *args[1:], "--seed", "5", "-o", str(out2)]) == 0
    )
    r1, r2 = Release.load(out1), Release.load(out2)
    assert r1 == r2
    assert r1.value.shape == (2, 3)
    assert json.loads(out1.read_text())["format"] == "invariantdp.Release"
    assert not list(tmp_path.glob(".*.tmp"))
    if r1.invariants is not None:
        r1.invariants.check(r1.value)
    assert "wrote" in capsys.readouterr().out


def test_invariants_from_json_file(table_csv, tmp_path):
    from invariantdp.invariants import totals

    inv_path = tmp_path / "inv.json"
    inv_path.write_text(json.dumps(totals([[0, 0, 1], [1, 1, 1]]).to_dict()))
    out = tmp_path / "r.json"
    code = main(
        [
            "release",
            "projected-laplace",
            str(table_csv),
            "--invariants",
            str(inv_path),
            "--epsilon",
            "1",
            "-o",
            str(out),
        ]
    )
    assert code == 0
    r = Release.load(out)
    np.testing.assert_allclose(r.invariants.values, [14.0, 26.0])


@pytest.mark.parametrize(
    "args, message",
    [
        (["laplace", "--mu", "1"], "`--mu` does not apply to laplace"),
        (["laplace", "--epsilon", "-1"], "`epsilon` (-1.0) must be > 0"),
        (["projected-gaussian", "--mu", "1"], "`--invariants` is required"),
        (["lp", "--epsilon", "1"], "`--p`"),
        (["gaussian", "--epsilon", "1", "--delta", "1.5"], "`delta` (1.5) must be in [0, 1)"),
    ],
)
def test_errors_exit_2_with_message(args, message, table_csv, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["release", args[0], str(table_csv), *args[1:], "-o", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()
