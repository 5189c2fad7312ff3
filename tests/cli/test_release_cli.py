"""``invariantdp release``."""

import json
import os
import re
import stat

import numpy as np
import pytest

from invariantdp import Release
from invariantdp.cli import main
from invariantdp.cli.release import EXACT, SIMULATION_ONLY


@pytest.fixture
def table_csv(tmp_path):
    path = tmp_path / "table.csv"
    path.write_text(",a,b,c\nx,10,4,6\ny,3,8,9\n", encoding="utf-8")
    return path


def _one_error_line(capsys, command="release"):
    captured = capsys.readouterr()
    err = captured.err
    assert err.startswith(f"invariantdp {command}: error: "), err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert captured.out == ""  # arguments are validated before anything is printed
    return err


def _strict(text):
    def reject(name):
        raise AssertionError(f"{name} in a release file")

    return json.loads(text, parse_constant=reject)


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


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_read_only_directory(table_csv, tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        argv = ["release", "discrete-laplace", str(table_csv), "--epsilon", "1"]
        assert main([*argv, "-o", str(ro / "r.json")]) == 2
        assert "Permission denied" in _one_error_line(capsys)
        assert list(ro.iterdir()) == []
    finally:
        ro.chmod(0o755)


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
