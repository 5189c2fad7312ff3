"""``invariantdp release``."""

import contextlib
import json
import os
import re
import stat
import tempfile
from pathlib import Path

import numpy as np
import pytest

from invariantdp import Release
from invariantdp.cli import main
from invariantdp.cli.release import _EXACT as EXACT
from invariantdp.cli.release import _SIMULATION_ONLY as SIMULATION_ONLY

from ._helpers import one_error_line
from ._helpers import strict_json as _strict


@pytest.fixture
def table_csv(tmp_path):
    path = tmp_path / "table.csv"
    path.write_text(",a,b,c\nx,10,4,6\ny,3,8,9\n", encoding="utf-8")
    return path


def _one_error_line(capsys, command="release"):
    return one_error_line(capsys, command)


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
def test_seeded_release_is_reproducible_and_marked_simulation(args, table_csv, tmp_path, capsys):
    out1, out2 = tmp_path / "r1.json", tmp_path / "r2.json"
    for out in (out1, out2):
        argv = ["release", args[0], str(table_csv), *args[1:], "--seed", "5", "-o", str(out)]
        assert main(argv) == 0
    r1, r2 = Release.load(out1), Release.load(out2)
    assert r1 == r2
    assert r1.value.shape == (2, 3)
    doc = _strict(out1.read_text())
    assert doc["format"] == "invariantdp.Release"
    assert doc["metadata"]["randomness"] == "simulation" and r1.simulation
    assert not list(tmp_path.glob(".*.tmp"))
    if r1.invariants is not None:
        r1.invariants.check(r1.value)
    text = capsys.readouterr().out
    assert "wrote" in text
    assert text.count("SIMULATION: not for publication") == 2 and "seed 5" in text


@pytest.mark.parametrize(
    "args",
    [
        ["discrete-laplace", "--epsilon", "1"],
        ["discrete-gaussian", "--rho", "0.5"],
        ["tulap", "--epsilon", "1"],
        ["laplace", "--epsilon", "1"],
        ["gaussian", "--mu", "1"],
    ],
)
def test_secure_by_default(args, table_csv, tmp_path, capsys):
    assert args[0] in EXACT
    out = tmp_path / "r.json"
    assert main(["release", args[0], str(table_csv), *args[1:], "-o", str(out)]) == 0
    r = Release.load(out)
    assert _strict(out.read_text())["metadata"]["randomness"] == "secure"
    assert not r.simulation
    text = capsys.readouterr().out
    assert "SIMULATION" not in text and "secure" in text


def test_simulate_without_seed_is_marked(table_csv, tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["release", "discrete-laplace", str(table_csv), "--epsilon", "1", "--simulate"]
    assert main([*argv, "-o", str(out)]) == 0
    assert Release.load(out).simulation
    assert "SIMULATION: not for publication" in capsys.readouterr().out


@pytest.mark.parametrize("mechanism", SIMULATION_ONLY)
def test_simulation_only_mechanisms_refuse_a_secure_release(mechanism, table_csv, tmp_path, capsys):
    opts = {"lp": ["--p", "2"]}.get(mechanism, [])
    if mechanism.startswith(("projected", "extended")):
        opts = ["--invariants", "total"]
    param = ["--mu", "1"] if mechanism == "semi-dp-gaussian" else ["--epsilon", "1"]
    out = tmp_path / "r.json"
    assert main(["release", mechanism, str(table_csv), *param, *opts, "-o", str(out)]) == 2
    err = _one_error_line(capsys)
    assert "no exact sampler" in err and "--simulate" in err
    for exact in EXACT:
        assert exact in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.csv"]


def test_help_says_simulation_only(capsys):
    with pytest.raises(SystemExit):
        main(["release", "--help"])
    # argparse wraps lines at hyphens ("projected-\nlaplace")
    text = " ".join(capsys.readouterr().out.split()).replace("- ", "-")
    assert set(SIMULATION_ONLY) == {
        "lp", "projected-gaussian", "projected-laplace", "extended-gaussian",
        "extended-laplace", "semi-dp-gaussian", "semi-dp-knorm",
    }  # fmt: skip
    assert f"simulation only: {', '.join(SIMULATION_ONLY)}" in text
    assert f"exact (secure) sampler: {', '.join(EXACT)}" in text


@pytest.mark.parametrize("seed", [[], ["--seed", "1"]])
def test_huge_noise_scale_is_refused_not_released_as_the_data(seed, table_csv, tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["release", "discrete-laplace", str(table_csv), "--epsilon", "1e-30", *seed]
    assert main([*argv, "-o", str(out)]) == 2
    assert re.search("epsilon|scale", _one_error_line(capsys))
    assert not out.exists()


def test_invariants_from_json_file(table_csv, tmp_path):
    from invariantdp.invariants import totals

    inv_path = tmp_path / "inv.json"
    inv_path.write_text(json.dumps(totals([[0, 0, 1], [1, 1, 1]]).to_dict()))
    out = tmp_path / "r.json"
    code = main(
        [
            "release", "projected-laplace", str(table_csv), "--invariants", str(inv_path),
            "--epsilon", "1", "--simulate", "-o", str(out),
        ]
    )  # fmt: skip
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
        (["lp", "--epsilon", "1", "--p", "3"], "`--p` ('3') must be 1, 2 or inf"),
        (["gaussian", "--epsilon", "1", "--delta", "1.5"], "`delta` (1.5) must be in [0, 1)"),
    ],
)
def test_errors_exit_2_with_message(args, message, table_csv, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["release", args[0], str(table_csv), *args[1:], "--simulate", "-o", str(out)]) == 2
    assert message in _one_error_line(capsys)
    assert not out.exists()


# --- files: never over an input, never over an existing file without --force -----


def test_refuses_to_overwrite_the_confidential_table(table_csv, tmp_path, capsys):
    before = table_csv.read_bytes()
    argv = ["release", "discrete-laplace", str(table_csv), "--epsilon", "1"]
    for extra in ([], ["--force"]):
        assert main([*argv, "-o", str(table_csv), *extra]) == 2
        assert "refusing to write over" in _one_error_line(capsys)
    hard = tmp_path / "hard.csv"
    os.link(table_csv, hard)
    assert main([*argv, "-o", str(hard), "--force"]) == 2
    assert "same file as `table`" in _one_error_line(capsys)
    assert table_csv.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hard.csv", "table.csv"]


def test_refuses_to_overwrite_the_invariants_file(table_csv, tmp_path, capsys):
    from invariantdp.invariants import totals

    inv = tmp_path / "inv.json"
    inv.write_text(json.dumps(totals([[0, 0, 1], [1, 1, 1]]).to_dict()))
    before = inv.read_bytes()
    argv = ["release", "projected-laplace", str(table_csv), "--invariants", str(inv)]
    assert main([*argv, "--epsilon", "1", "--simulate", "--force", "-o", str(inv)]) == 2
    assert "same file as `--invariants`" in _one_error_line(capsys)
    assert inv.read_bytes() == before


def test_existing_output_needs_force(table_csv, tmp_path, capsys):
    out = tmp_path / "r.json"
    out.write_text("previous")
    argv = ["release", "discrete-laplace", str(table_csv), "--epsilon", "1", "-o", str(out)]
    assert main(argv) == 2
    assert "exists; pass --force" in _one_error_line(capsys)
    assert out.read_text() == "previous"
    assert main([*argv, "--force"]) == 0
    assert Release.load(out).value.shape == (2, 3)


def test_release_file_gets_umask_permissions(table_csv, tmp_path):
    out = tmp_path / "r.json"
    old = os.umask(0o022)
    try:
        assert main(["release", "discrete-laplace", str(table_csv), "--epsilon", "1",
                     "-o", str(out)]) == 0  # fmt: skip
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == 0o644


@pytest.mark.parametrize(
    "output, match",
    [
        (".", "is a directory"),
        ("", "must be a file path"),
        ("{tmp}", "is a directory"),
        ("{tmp}/no/such/dir/r.json", "existing directory"),
        ("/etc", "is a directory"),
    ],
)
def test_bad_output_paths(output, match, table_csv, tmp_path, capsys):
    argv = ["release", "discrete-laplace", str(table_csv), "--epsilon", "1"]
    assert main([*argv, "-o", output.format(tmp=tmp_path)]) == 2
    assert match in _one_error_line(capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.csv"]


@pytest.mark.skipif(not os.path.isdir("/sys"), reason="needs a directory root cannot write")
def test_unwritable_directory(table_csv, tmp_path, capsys):
    argv = ["release", "discrete-laplace", str(table_csv), "--epsilon", "1"]
    assert main([*argv, "-o", "/sys/invariantdp-release.json"]) == 2
    _one_error_line(capsys)
    assert not os.path.exists("/sys/invariantdp-release.json")


@contextlib.contextmanager
def _file_permissions_apply():
    """Run the block as a user that file permissions bind (root bypasses them).

    As root the effective user and group become ``nobody`` for the block (the
    real ids stay root's, so they come back after); otherwise nothing changes.
    """
    if os.geteuid() != 0:
        yield
        return
    os.setegid(65534)
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


def test_read_only_directory(capsys):
    # a directory every user can enter (tmp_path is root's own when the suite runs as root)
    with tempfile.TemporaryDirectory() as top:
        top = Path(top)
        top.chmod(0o755)
        table = top / "table.csv"
        table.write_text(",a,b,c\nx,10,4,6\ny,3,8,9\n", encoding="utf-8")
        ro = top / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        argv = ["release", "discrete-laplace", str(table), "--epsilon", "1"]
        # a first run loads every module the command needs, so the second reads no code
        assert main([*argv, "-o", str(top / "first.json")]) == 0
        capsys.readouterr()
        with _file_permissions_apply():
            status = main([*argv, "-o", str(ro / "r.json")])
        assert status == 2
        assert "Permission denied" in _one_error_line(capsys)
        assert list(ro.iterdir()) == []


@pytest.mark.parametrize(
    "content, match",
    [
        (b"", "No columns to parse"),
        (b"\xff\xfe\x00garbage\x00\n\x81", "codec can't decode"),
        (b',a,b\nx,1,"unterminated\n', "EOF"),
    ],
)
def test_unreadable_tables(content, match, tmp_path, capsys):
    table = tmp_path / "t.csv"
    table.write_bytes(content)
    out = tmp_path / "r.json"
    assert main(["release", "discrete-laplace", str(table), "--epsilon", "1", "-o", str(out)]) == 2
    assert match in _one_error_line(capsys)
    assert not out.exists()


@pytest.mark.parametrize("table", ["/etc", "{tmp}/missing.csv"])
def test_table_path_errors(table, tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["release", "discrete-laplace", table.format(tmp=tmp_path), "--epsilon", "1"]
    assert main([*argv, "-o", str(out)]) == 2
    _one_error_line(capsys)
    assert not out.exists()


@pytest.mark.parametrize(
    "content", ["[1, 2]", "{not json", '"margins"', '{"values": NaN}', "[" * 100_000, "\udcff"]
)
def test_bad_invariants_file(content, table_csv, tmp_path, capsys):
    inv = tmp_path / "inv.json"
    inv.write_bytes(content.encode("utf-8", "surrogateescape"))
    out = tmp_path / "r.json"
    argv = ["release", "projected-laplace", str(table_csv), "--invariants", str(inv)]
    assert main([*argv, "--epsilon", "1", "--simulate", "-o", str(out)]) == 2
    assert "`--invariants`" in _one_error_line(capsys)
    assert not out.exists()


# --- zCDP budgets (--rho) -------------------------------------------------------


@pytest.mark.parametrize(
    "mechanism, extra",
    [
        ("gaussian", []),
        ("projected-gaussian", ["--invariants", "margins"]),
        ("extended-gaussian", ["--invariants", "total"]),
        ("semi-dp-gaussian", []),
    ],
)
def test_rho_sets_mu_sqrt_2rho(mechanism, extra, table_csv, tmp_path, capsys):
    """rho-zCDP Gaussian noise is the mu-GDP noise with mu = sqrt(2 rho): same release."""
    by_rho, by_mu = tmp_path / "rho.json", tmp_path / "mu.json"
    argv = ["release", mechanism, str(table_csv), *extra, "--seed", "3"]
    assert main([*argv, "--rho", "0.125", "-o", str(by_rho)]) == 0
    assert "rho = 0.125" in capsys.readouterr().out
    assert main([*argv, "--mu", "0.5", "-o", str(by_mu)]) == 0
    r_rho, r_mu = Release.load(by_rho), Release.load(by_mu)
    np.testing.assert_array_equal(r_rho.value, r_mu.value)
    assert r_rho.guarantee == r_mu.guarantee
    assert r_rho.metadata["zcdp"] == {"rho": 0.125, "mu": 0.5, "conversion": "mu = sqrt(2 rho)"}


def test_rho_of_the_discrete_gaussian_is_its_own(table_csv, tmp_path):
    out = tmp_path / "r.json"
    argv = ["release", "discrete-gaussian", str(table_csv), "--rho", "0.5", "--sensitivity", "2"]
    assert main([*argv, "-o", str(out)]) == 0
    r = Release.load(out)
    assert r.guarantee.params["rho"] == pytest.approx(0.5)
    assert "zcdp" not in r.metadata


@pytest.mark.parametrize(
    "args, message",
    [
        (["laplace", "--rho", "0.5"], "`--rho` (0.5) does not apply to laplace"),
        (["tulap", "--rho", "0.5"], "Gaussian-type mechanisms only"),
        (["semi-dp-knorm", "--rho", "0.5"], "semi-dp-knorm takes epsilon"),
        (["gaussian", "--rho", "0.5", "--mu", "1"], "`--rho` and `--mu` both set"),
        (["gaussian", "--rho", "0.5", "--epsilon", "1"], "`--rho` and `--epsilon` both set"),
        (["gaussian", "--rho", "-1"], "`--rho` (-1.0) must be a finite number > 0"),
        (["projected-gaussian", "--rho", "nan", "--invariants", "total"], "`--rho` (nan)"),
    ],
)
def test_rho_refused_where_it_has_no_meaning(args, message, table_csv, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["release", args[0], str(table_csv), *args[1:], "--simulate", "-o", str(out)]) == 2
    assert message in _one_error_line(capsys)
    assert not out.exists()


# --- long-format tables (--value-column, --label-columns) -------------------------


@pytest.fixture
def long_csv(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text(
        "county,sex,count,note\nAda,F,51,a\nAda,M,47,b\nBay,F,20,c\nBay,M,26,d\nCole,F,9,e\n"
        "Cole,M,12,f\n",
        encoding="utf-8",
    )
    return path


def test_long_format_two_labels_is_a_labelled_table(long_csv, tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["release", "projected-gaussian", str(long_csv), "--value-column", "count"]
    argv += [
        "--label-columns",
        "county,sex",
        "--invariants",
        "margins",
        "--rho",
        "2",
        "--seed",
        "1",
    ]
    assert main([*argv, "-o", str(out)]) == 0
    frame = Release.load(out).to_frame()
    assert list(frame.index) == ["Ada", "Bay", "Cole"] and frame.index.name == "county"
    assert list(frame.columns) == ["F", "M"] and frame.columns.name == "sex"
    np.testing.assert_allclose(frame.sum(axis=1), [98, 46, 21])  # margins kept exactly
    np.testing.assert_allclose(frame.sum(axis=0), [80, 85])


def test_long_format_one_label_is_a_labelled_vector(long_csv, tmp_path):
    rows = long_csv.read_text().splitlines()
    one = tmp_path / "one.csv"
    one.write_text("\n".join([rows[0]] + [r for r in rows[1:] if ",F," in r]) + "\n")
    out = tmp_path / "r.json"
    argv = ["release", "discrete-gaussian", str(one), "--value-column", "count"]
    assert main([*argv, "--label-columns", "county", "--rho", "0.5", "-o", str(out)]) == 0
    series = Release.load(out).to_series()
    assert list(series.index) == ["Ada", "Bay", "Cole"] and series.index.name == "county"


def test_wide_table_keeps_its_labels(table_csv, tmp_path):
    out = tmp_path / "r.json"
    assert (
        main(["release", "discrete-laplace", str(table_csv), "--epsilon", "1", "-o", str(out)]) == 0
    )
    frame = Release.load(out).to_frame()
    assert list(frame.index) == ["x", "y"] and list(frame.columns) == ["a", "b", "c"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--value-column", "count"], "needs `--label-columns` as well"),
        (["--label-columns", "county"], "needs `--value-column` as well"),
        (["--value-column", "cnt", "--label-columns", "county,sex"], "'cnt', which is not a col"),
        (["--value-column", "count", "--label-columns", "county,age"], "'age', which is not"),
        (["--value-column", "note", "--label-columns", "county,sex"], "must hold numbers"),
        (["--value-column", "count", "--label-columns", "county"], "['Ada'] appears more than"),
        (["--value-column", "count", "--label-columns", "count"], "must not be one of"),
        ([], "for a long-format table give --value-column and --label-columns"),
    ],
)
def test_long_format_errors(args, message, long_csv, tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["release", "discrete-laplace", str(long_csv), "--epsilon", "1", *args]
    assert main([*argv, "-o", str(out)]) == 2
    assert message in _one_error_line(capsys)
    assert not out.exists()


def test_long_format_incomplete_table_and_missing_value(tmp_path, capsys):
    path = tmp_path / "long.csv"
    path.write_text("county,sex,count\nAda,F,51\nAda,M,47\nBay,F,20\n")
    out = tmp_path / "r.json"
    argv = ["release", "discrete-laplace", str(path), "--epsilon", "1", "--value-column", "count"]
    assert main([*argv, "--label-columns", "county,sex", "-o", str(out)]) == 2
    assert "every combination" in _one_error_line(capsys)
    path.write_text("county,count\nAda,51\nBay,\n")
    assert main([*argv, "--label-columns", "county", "-o", str(out)]) == 2
    assert "data row 2 has none" in _one_error_line(capsys)


def test_help_says_which_norm_each_sensitivity_is(capsys):
    """Issue 20: `--sensitivity` means a different norm for each mechanism, and the help says so."""
    from invariantdp.cli.release import _L1 as L1
    from invariantdp.cli.release import _L2 as L2
    from invariantdp.cli.release import _NAMES as NAMES

    with pytest.raises(SystemExit):
        main(["release", "--help"])
    # argparse wraps lines, also after a hyphen
    text = re.sub(r"-\s+", "-", " ".join(capsys.readouterr().out.split()))
    assert "L1 for " + ", ".join(L1) in text and "L2 for " + ", ".join(L2) in text
    assert "Lp norm of --p for lp" in text and "(Linf) for tulap" in text
    fixed = {"semi-dp-gaussian", "semi-dp-knorm", "odds-ratio"}  # by the margins
    assert set(L1) | set(L2) | {"lp", "tulap"} | fixed == set(NAMES)


def test_tulap_coordinates_changed_sets_the_composed_guarantee(table_csv, tmp_path):
    composed, one = tmp_path / "all.json", tmp_path / "one.json"
    base = ["release", "tulap", str(table_csv), "--epsilon", "0.5", "--seed", "1"]
    assert main([*base, "-o", str(composed)]) == 0
    assert main([*base, "--coordinates-changed", "1", "-o", str(one)]) == 0
    # six cells may all change: (6 * 0.5, 0)-DP; one cell: (0.5, 0)-DP
    assert Release.load(composed).guarantee.params["epsilon"] == 3.0
    assert Release.load(one).guarantee.params == {"epsilon": 0.5, "delta": 0.0}
    assert "in one coordinate" in Release.load(one).guarantee.adjacency


def test_coordinates_changed_is_refused_for_other_mechanisms(table_csv, tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["release", "laplace", str(table_csv), "--epsilon", "1", "--coordinates-changed", "1"]
    assert main([*argv, "-o", str(out)]) != 0
    assert "`--coordinates-changed` applies only to tulap" in _one_error_line(capsys)
    assert not out.exists()


# --- invariants with an additive mechanism: the congenial release (issue 22, section 1) ----


def test_discrete_gaussian_with_invariants_offers_the_congenial_release(
    table_csv, tmp_path, capsys
):
    """It said "`--invariants` does not apply to discrete-gaussian", with no alternative."""
    out = tmp_path / "r.json"
    argv = ["release", "discrete-gaussian", str(table_csv), "--invariants", "total"]
    assert main([*argv, "--rho", "0.5", "-o", str(out)]) == 2
    err = _one_error_line(capsys)
    assert "congenial release" in err and "--simulate" in err and "--seed" in err
    assert not out.exists()
    assert main([*argv, "--rho", "0.5", "--seed", "3", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "congenial release" in text and "SIMULATION" in text
    r = Release.load(out)
    assert r.metadata["congenial"] and r.simulation
    assert r.noise.family == "discrete_gaussian" and r.guarantee.params["rho"] == 0.5
    assert r.value.dtype.kind == "i" and r.value.sum() == 40  # the total, held exactly
    r.invariants.check(r.value)
    # the same release as the library's conditional_release with the same seed
    from invariantdp.invariants import totals
    from invariantdp.mechanisms import conditional_release

    lib = conditional_release(
        np.array([[10, 4, 6], [3, 8, 9]]), "discrete_gaussian", totals(np.zeros((2, 3), int)),
        rho=0.5, rng=3, progress=False,
    )  # fmt: skip
    np.testing.assert_array_equal(r.value, lib.value)


@pytest.mark.parametrize(
    "mechanism, budget",
    [
        ("discrete-gaussian", ["--mu", "1"]),  # conditional_release takes rho = mu^2 / 2
        ("gaussian", ["--rho", "0.5"]),  # and mu = sqrt(2 rho)
        ("gaussian", ["--epsilon", "1", "--delta", "1e-5"]),  # and mu of Balle & Wang
        ("discrete-laplace", ["--epsilon", "0.5", "--sensitivity", "2"]),
    ],
)
def test_the_congenial_release_conditions_the_mechanism_s_own_noise(
    mechanism, budget, table_csv, tmp_path
):
    plain, congenial = tmp_path / "plain.json", tmp_path / "congenial.json"
    argv = ["release", mechanism, str(table_csv), *budget, "--simulate"]
    assert main([*argv, "-o", str(plain)]) == 0
    assert main([*argv, "--invariants", "row-totals", "-o", str(congenial)]) == 0
    r, unconstrained = Release.load(congenial), Release.load(plain)
    assert r.noise.family == unconstrained.noise.family
    for k, v in unconstrained.noise.params.items():
        assert r.noise.params[k] == pytest.approx(v, rel=1e-12), k
    np.testing.assert_allclose(r.value.sum(axis=1), [20, 20])


def test_invariants_with_a_mechanism_that_has_no_congenial_release(table_csv, tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["release", "tulap", str(table_csv), "--invariants", "total", "--epsilon", "1"]
    assert main([*argv, "-o", str(out)]) == 2
    err = _one_error_line(capsys)
    assert "`--invariants` does not apply to tulap" in err
    assert "projected-*" in err and "odds-ratio" in err and "discrete-gaussian" in err
