"""Hostile input to the command line: exit code 2, a message naming the option, no output file."""

import contextlib
import io
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from invariantdp.cli import main

SLOW = settings(settings.get_profile("slow"))
BAD_REAL = st.sampled_from(["nan", "inf", "-inf", "-1", "0", "-1e12"])


def _run(argv, capsys=None):
    """Exit code and stderr of ``invariantdp argv`` (``capsys`` is not needed)."""
    buf = io.StringIO()
    with contextlib.redirect_stderr(buf), contextlib.redirect_stdout(io.StringIO()):
        code = main([str(a) for a in argv])
    return code, buf.getvalue()


def _table(tmp_path, rows, name="t.csv"):
    path = tmp_path / name
    pd.DataFrame(rows, index=[f"r{i}" for i in range(len(rows))]).to_csv(path)
    return path


def check_release_bad_epsilon(tmp_path, capsys, mechanism, value):
    table = _table(tmp_path, [[3, 4], [5, 6]])
    out = tmp_path / "out.json"
    code, err = _run(["release", mechanism, table, f"--epsilon={value}", "-o", out], capsys)
    assert code == 2 and "epsilon" in err, err
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.json")]


@pytest.mark.parametrize("mechanism", ["laplace", "discrete-laplace", "tulap", "semi-dp-knorm"])
@given(value=BAD_REAL)
@settings(max_examples=6)
def test_release_bad_epsilon(tmp_path_factory, mechanism, value):
    check_release_bad_epsilon(tmp_path_factory.mktemp("rel"), None, mechanism, value)


@pytest.mark.parametrize(
    "rows, message",
    [
        ([[3, np.nan], [5, 6]], "finite"),
        ([[3, -4], [5, 6]], "non-negative"),
        ([[3, 4.5], [5, 6]], "whole-number|integer-valued"),
        ([["a", "b"], ["c", "d"]], "numbers"),
    ],
)
def test_release_bad_table(tmp_path, capsys, rows, message):
    table = _table(tmp_path, rows)
    out = tmp_path / "out.json"
    mechs = [("semi-dp-gaussian", ["--mu", "1"])]
    if message != "non-negative":  # integer data of any sign are valid for the discrete noise
        mechs.append(("discrete-laplace", ["--epsilon", "1"]))
    for mech, opt in mechs:
        code, err = _run(["release", mech, table, *opt, "-o", out], capsys)
        assert code == 2 and ("table" in err or "`x`" in err), err
        assert re.search(message, err), err
        assert not out.exists()


def test_release_invariants_not_satisfied_or_mismatched(tmp_path, capsys):
    table = _table(tmp_path, [[3, 4], [5, 6]])
    inv = tmp_path / "inv.json"
    import json

    from invariantdp.invariants import totals

    inv.write_text(json.dumps(totals([0, 0, 0]).to_dict()))
    out = tmp_path / "out.json"
    code, err = _run(
        ["release", "projected-gaussian", table, "--mu", "1", "--invariants", inv, "-o", out],
        capsys,
    )
    assert code == 2 and "invariants" in err and not out.exists()
    code, err = _run(["release", "projected-gaussian", table, "--mu", "1", "-o", out], capsys)
    assert code == 2 and "--invariants" in err and not out.exists()


@given(value=BAD_REAL)
def test_odds_ratio_test_bad_epsilon(value):
    code, err = _run(["odds-ratio-test", "--table", "12,5,4,9", f"--epsilon={value}"])
    assert code == 2 and "epsilon" in err, err


@pytest.mark.parametrize(
    "argv, name",
    [
        (["--table", "12,5,4", "--epsilon", "1"], "table"),
        (["--statistic", "nan", "--margins", "5,5,5,5", "--epsilon", "1"], "statistic"),
        (["--statistic", "3", "--margins", "5,5,4,7", "--epsilon", "1"], "margins"),
        (["--statistic", "3", "--margins", "5,5,5,5", "--epsilon", "1", "--delta", "1.5"], "delta"),
        (
            ["--statistic", "3", "--margins", "5,5,5,5", "--epsilon", "1", "--odds-ratio", "-2"],
            "odds_ratio",
        ),
        (["--table", "12,5,4,9", "--epsilon", "1", "--confidence-level", "2"], "confidence_level"),
    ],
)
def test_odds_ratio_test_bad_arguments(capsys, argv, name):
    code, err = _run(["odds-ratio-test", *argv], capsys)
    assert code == 2 and name in err, err


def test_odds_ratio_test_rejects_non_integer_table(capsys):
    with pytest.raises(SystemExit) as info:
        main(["odds-ratio-test", "--table", "12.5,5,4,9", "--epsilon", "1"])
    assert info.value.code == 2
    assert "integers" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, name",
    [
        (["gdp", "--epsilon", "nan", "--delta", "1e-5"], "epsilon"),
        (["gdp", "--epsilon", "1", "--delta", "2"], "delta"),
        (["eps-delta", "--mu", "-1", "--epsilon", "1"], "mu"),
        (["zcdp", "--rho", "inf", "--delta", "1e-5"], "rho"),
        (["zcdp", "--rho", "1", "--delta", "1e-5", "--group", "0"], "k"),
        (["census", "--rho", "-2"], "rho"),
        (["swapping", "--b", "-3", "--swap-rate", "0.5"], "b"),
        (["swapping", "--b", "10", "--swap-rate", "1.5"], "swap_rate"),
    ],
)
def test_account_bad_arguments(capsys, argv, name):
    code, err = _run(["account", *argv], capsys)
    assert code == 2 and name in err, err


def _microdata(tmp_path):
    path = tmp_path / "in.csv"
    pd.DataFrame({"county": list("aabbab"), "owned": [1, 0, 1, 0, 0, 1]}).to_csv(path, index=False)
    return path


@given(value=st.sampled_from(["nan", "inf", "0", "1", "-0.5", "1.5"]))
def test_swap_bad_rate_leaves_no_file(tmp_path_factory, value):
    tmp = tmp_path_factory.mktemp("swap")
    src, dst = _microdata(tmp), tmp / "out.csv"
    code, err = _run(["swap", src, dst, "--swap", "county", f"--swap-rate={value}"])
    assert code == 2 and "swap_rate" in err, err
    assert sorted(p.name for p in tmp.iterdir()) == ["in.csv"]


@pytest.mark.parametrize(
    "argv, name",
    [
        (["--swap", "nope", "--swap-rate", "0.5"], "swap"),
        (["--swap", "county", "--match", "county", "--swap-rate", "0.5"], "match"),
        (["--swap", "county,owned", "--swap-rate", "0.5"], "swap"),
    ],
)
def test_swap_bad_columns_leave_no_file(tmp_path, capsys, argv, name):
    src, dst = _microdata(tmp_path), tmp_path / "out.csv"
    code, err = _run(["swap", src, dst, *argv], capsys)
    assert code == 2 and name in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_swap_input_is_not_modified(tmp_path, capsys):
    src, dst = _microdata(tmp_path), tmp_path / "out.csv"
    before = src.read_bytes()
    assert (
        _run(["swap", src, dst, "--swap", "county", "--swap-rate", "0.5", "--seed", "1"], capsys)[0]
        == 0
    )
    assert src.read_bytes() == before and dst.exists()


@pytest.mark.slow
@SLOW
@given(value=BAD_REAL, mechanism=st.sampled_from(["laplace", "gaussian", "tulap", "lp"]))
def test_release_bad_epsilon_slow(tmp_path_factory, mechanism, value):
    tmp = tmp_path_factory.mktemp("rel")
    table = _table(tmp, [[3, 4], [5, 6]])
    out = tmp / "out.json"
    extra = ["--p", "2"] if mechanism == "lp" else []
    extra += ["--delta", "1e-5"] if mechanism == "gaussian" else []
    code, err = _run(["release", mechanism, table, f"--epsilon={value}", *extra, "-o", out])
    assert code == 2 and "epsilon" in err, err
    assert not out.exists()
