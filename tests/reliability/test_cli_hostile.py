"""Hostile input to the command line: exit code 2, a message naming the option, no output file."""

import contextlib
import io
import json
import os
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from invariantdp.cli import main
from invariantdp.cli._common import MAX_MESSAGE

SLOW = settings(settings.get_profile("slow"))
BAD_REAL = st.sampled_from(["nan", "inf", "-inf", "-1", "0", "-1e12"])


def _run(argv, capsys=None):
    """Exit code and stderr of ``invariantdp argv`` (``capsys`` is not needed).

    A failure must be one bounded line ``invariantdp <cmd>: error: ...``
    with nothing printed before it (arguments are validated first).
    """
    buf, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(buf), contextlib.redirect_stdout(out):
        code = main([str(a) for a in argv])
    err = buf.getvalue()
    if code == 2:
        assert re.fullmatch(r"invariantdp [a-z-]+: error: [^\n]+\n", err), err[:2000]
        assert len(err) <= 100 + MAX_MESSAGE + 60, len(err)
        assert out.getvalue() == "", out.getvalue()[:2000]
    return code, err


def _parser_run(argv):
    """Exit code and stderr, also for argparse's own usage errors (SystemExit)."""
    buf = io.StringIO()
    with contextlib.redirect_stderr(buf), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code
    return code, buf.getvalue()


def _table(tmp_path, rows, name="t.csv"):
    path = tmp_path / name
    pd.DataFrame(rows, index=[f"r{i}" for i in range(len(rows))]).to_csv(path)
    return path


def check_release_bad_epsilon(tmp_path, capsys, mechanism, value, randomness=()):
    table = _table(tmp_path, [[3, 4], [5, 6]])
    out = tmp_path / "out.json"
    argv = ["release", mechanism, table, f"--epsilon={value}", *randomness, "-o", out]
    code, err = _run(argv, capsys)
    assert code == 2 and "epsilon" in err, err
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.json")]


@pytest.mark.parametrize(
    "mechanism, randomness",
    [
        ("laplace", []),
        ("laplace", ["--simulate"]),
        ("discrete-laplace", []),
        ("discrete-laplace", ["--seed", "3"]),
        ("tulap", []),
        ("semi-dp-knorm", ["--simulate"]),
    ],
)
@given(value=BAD_REAL)
@settings(max_examples=6)
def test_release_bad_epsilon(tmp_path_factory, mechanism, randomness, value):
    check_release_bad_epsilon(tmp_path_factory.mktemp("rel"), None, mechanism, value, randomness)


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
    mechs = [("semi-dp-gaussian", ["--mu", "1", "--simulate"])]
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
        ["release", "projected-gaussian", table, "--mu", "1", "--invariants", inv, "--simulate",
         "-o", out],
        capsys,
    )  # fmt: skip
    assert code == 2 and "invariants" in err and not out.exists()
    argv = ["release", "projected-gaussian", table, "--mu", "1", "--simulate", "-o", out]
    code, err = _run(argv, capsys)
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
    assert "whole numbers" in capsys.readouterr().err


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
    argv = ["release", mechanism, table, f"--epsilon={value}", *extra, "--simulate", "-o", out]
    code, err = _run(argv)
    assert code == 2 and "epsilon" in err, err
    assert not out.exists()


# --- bounded messages: any text in any option ------------------------------------

HUGE = "9," * 500_000  # a 1 MB argument


@given(text=st.text(max_size=3000) | st.just(HUGE) | st.just("x" * 1_000_000))
def test_any_table_text_gives_a_bounded_message(text):
    # A negative epsilon stops the command before any work if the table parses.
    code, err = _parser_run(["odds-ratio-test", "--table", text, "--epsilon", "-1"])
    assert code == 2
    assert "Traceback" not in err and len(err) < 2000, len(err)


@given(text=st.text(max_size=3000) | st.just("1" * 1_000_000) | st.just("z" * 1_000_000))
def test_any_float_text_gives_a_bounded_message(text):
    code, err = _parser_run(["account", "gdp", "--epsilon", text, "--delta", "0.1"])
    assert code in (0, 2)
    assert "Traceback" not in err and len(err) < 2000, len(err)


@given(text=st.text(max_size=3000) | st.just("," * 1_000_000))
def test_any_column_text_gives_a_bounded_message(tmp_path_factory, text):
    tmp = tmp_path_factory.mktemp("cols")
    src = _microdata(tmp)
    argv = ["swap", src, tmp / "o.csv", "--swap", text, "--swap-rate", "2"]
    code, err = _parser_run(argv)
    assert code == 2
    assert "Traceback" not in err and len(err) < 2000, len(err)
    assert sorted(p.name for p in tmp.iterdir()) == ["in.csv"]


# --- output paths -------------------------------------------------------------------


@given(name=st.text(min_size=0, max_size=300).filter(lambda t: "/" not in t))
def test_any_output_name_writes_a_release_or_fails_cleanly(tmp_path_factory, name):
    tmp = tmp_path_factory.mktemp("out")
    table = _table(tmp, [[3, 4], [5, 6]])
    before = table.read_bytes()
    out = f"{tmp}/{name}"
    code, err = _run(["release", "discrete-laplace", table, "--epsilon", "1", "-o", out])
    assert table.read_bytes() == before
    left = sorted(p.name for p in tmp.iterdir())
    if code == 0:
        assert left == sorted(["t.csv", name])
        from invariantdp import Release

        assert Release.load(out).value.shape == (2, 2)
    else:
        assert code == 2 and left == ["t.csv"], (err, left)


HOSTILE_OUTPUTS = ["", " ", ".", "..", "{tmp}", "{tmp}/", "/", "/etc", "{tmp}/missing/x.json",
                   "{tmp}/t.csv", "{tmp}/./t.csv", "{tmp}/hard.csv", "{tmp}/soft.csv",
                   "{tmp}/t.csv/x.json", "{tmp}/nul\x00.json", "{tmp}/fifo"]  # fmt: skip


@given(output=st.sampled_from(HOSTILE_OUTPUTS), force=st.booleans(), secure=st.booleans())
def test_hostile_release_outputs(tmp_path_factory, output, force, secure):
    tmp = tmp_path_factory.mktemp("hostile")
    table = _table(tmp, [[3, 4], [5, 6]])
    os.link(table, tmp / "hard.csv")
    (tmp / "soft.csv").symlink_to(table)
    os.mkfifo(tmp / "fifo")
    before = table.read_bytes()
    argv = ["release", "discrete-laplace", table, "--epsilon", "1", "-o", output.format(tmp=tmp)]
    argv += (["--force"] if force else []) + ([] if secure else ["--seed", "1"])
    code, err = _run(argv)
    assert code == 2, err
    assert table.read_bytes() == before
    assert sorted(p.name for p in tmp.iterdir()) == ["fifo", "hard.csv", "soft.csv", "t.csv"]
    assert (tmp / "fifo").is_fifo()


@given(
    output=st.sampled_from(["{tmp}/in.csv", "{tmp}/./in.csv", "{tmp}/link.csv", "{tmp}", ""]),
    release=st.sampled_from([None, "{tmp}/in.csv", "{tmp}/link.csv", "{tmp}/o.csv"]),
)
def test_hostile_swap_outputs(tmp_path_factory, output, release):
    tmp = tmp_path_factory.mktemp("swapout")
    src = _microdata(tmp)
    (tmp / "link.csv").symlink_to(src)
    before = src.read_bytes()
    argv = ["swap", src, output.format(tmp=tmp), "--swap", "county", "--swap-rate", "0.5"]
    if release is not None:
        argv += ["--release", release.format(tmp=tmp)]
    code, err = _run([*argv, "--force"])
    assert code == 2, err
    assert src.read_bytes() == before
    assert sorted(p.name for p in tmp.iterdir()) == ["in.csv", "link.csv"]


# --- strict JSON --------------------------------------------------------------------


def _strict_json(text):
    def reject(name):
        raise AssertionError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=reject)


@given(
    mu=st.floats(1e-3, 1e3),
    epsilon=st.floats(1e-3, 1e3) | st.sampled_from(["nan", "inf", "-inf"]),
)
def test_account_json_is_strict(mu, epsilon):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["account", "eps-delta", f"--mu={mu!r}", f"--epsilon={epsilon}", "--json"])
    if code == 0:
        doc = _strict_json(out.getvalue())
        assert doc["mu"] == mu
    else:
        assert code == 2 and out.getvalue() == ""


@given(
    statistic=st.floats(-50, 100),
    alternative=st.sampled_from(["greater", "less", "two-sided"]),
)
@settings(max_examples=10)
def test_odds_ratio_json_is_strict(statistic, alternative):
    out = io.StringIO()
    argv = ["odds-ratio-test", f"--statistic={statistic!r}", "--margins", "20,20,20,20",
            "--epsilon", "1", "--alternative", alternative, "--json"]  # fmt: skip
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    doc = _strict_json(out.getvalue())
    low, high = doc["confidence_interval"]
    assert low is None or high is None or low <= high
    assert 0 <= doc["pvalue"] <= 1
