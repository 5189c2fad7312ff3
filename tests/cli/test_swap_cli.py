"""``invariantdp swap``."""

import json
import re

import numpy as np
import pandas as pd
import pytest

from invariantdp import Release
from invariantdp.cli import main
from invariantdp.mechanisms import swapping_invariants
from invariantdp.privacy import swapping_epsilon


@pytest.fixture
def households(tmp_path, rng):
    n = 400
    df = pd.DataFrame(
        {
            "county": rng.choice(["a", "b", "c", "d"], n),
            "size": rng.integers(1, 4, n),
            "owned": rng.integers(0, 2, n),
        }
    )
    path = tmp_path / "hh.csv"
    df.to_csv(path, index=False)
    return df, path


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_swap_writes_file_and_prints_epsilon(households, tmp_path, capsys, suffix):
    pytest.importorskip("pyarrow")
    df, src = households
    if suffix == ".parquet":
        src2 = tmp_path / "hh.parquet"
        df.to_parquet(src2, index=False)
        src = src2
    out = tmp_path / f"swapped{suffix}"
    rel = tmp_path / "release.json"
    code = main(
        [
            "swap", str(src), str(out), "--swap", "county", "--match", "size",
            "--swap-rate", "0.2", "--seed", "3", "--release", str(rel),
        ]
    )  # fmt: skip
    assert code == 0
    text = capsys.readouterr().out
    b = int(df.groupby("size").size().max())
    assert f"epsilon = {swapping_epsilon(b, 0.2):.6g}" in text
    got = pd.read_csv(out) if suffix == ".csv" else pd.read_parquet(out)
    assert swapping_invariants(got, swap="county", match="size").equals(
        swapping_invariants(df, swap="county", match="size")
    )
    assert not got.equals(df)
    release = Release.load(rel)
    assert release.guarantee.params["b"] == b
    assert release.simulation and "SIMULATION: not for publication" in text
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_swap_json_output(households, tmp_path, capsys):
    df, src = households
    out = tmp_path / "o.csv"
    assert main(["swap", str(src), str(out), "--swap", "county", "--swap-rate", "0.5",
                 "--seed", "1", "--json"]) == 0  # fmt: skip
    res = json.loads(capsys.readouterr().out)
    assert res["randomness"] == "simulation" and res["simulation"] is True
    assert res["records"] == len(df) and res["b"] == len(df)
    assert res["epsilon"] == pytest.approx(swapping_epsilon(len(df), 0.5))
    assert 0 < res["records_changed"] < len(df)


def test_same_seed_same_file(households, tmp_path):
    _, src = households
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    for out in (a, b):
        main(["swap", str(src), str(out), "--swap", "county", "--swap-rate", "0.3", "--seed", "9"])
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--swap", "nope", "--swap-rate", "0.3"], "`swap` names unknown column"),
        (["--swap", "county", "--swap-rate", "1.5"], r"`swap_rate` \(1.5\) must be in \(0, 1\)"),
        (
            ["--swap", "county", "--match", "county", "--swap-rate", "0.3"],
            "`match` and `swap` both name",
        ),
    ],
)
def test_errors_leave_existing_output_untouched(households, tmp_path, capsys, extra, message):
    _, src = households
    out = tmp_path / "out.csv"
    out.write_text("previous\n")
    assert main(["swap", str(src), str(out), *extra, "--force"]) == 2
    assert out.read_text() == "previous\n"
    assert re.search(message, capsys.readouterr().err)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_unknown_format(households, tmp_path, capsys):
    _, src = households
    assert main(["swap", str(src), str(tmp_path / "o.xlsx"), "--swap", "county",
                 "--swap-rate", "0.3"]) == 2  # fmt: skip
    assert "must end in .csv or .parquet" in capsys.readouterr().err
    np.testing.assert_equal(list(tmp_path.glob("o.xlsx")), [])


def _one_error_line(capsys):
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err
    assert err.startswith("invariantdp swap: error: "), err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_secure_by_default(households, tmp_path, capsys):
    df, src = households
    out, rel = tmp_path / "o.csv", tmp_path / "r.json"
    argv = ["swap", str(src), str(out), "--swap", "county", "--match", "size", "--swap-rate", "0.3"]
    assert main([*argv, "--release", str(rel), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["randomness"] == "secure" and res["simulation"] is False
    release = Release.load(rel)
    assert release.metadata["randomness"] == "secure" and not release.simulation
    got = pd.read_csv(out)
    assert swapping_invariants(got, swap="county", match="size").equals(
        swapping_invariants(df, swap="county", match="size")
    )


def test_simulate_flag_is_marked(households, tmp_path, capsys):
    _, src = households
    out = tmp_path / "o.csv"
    argv = ["swap", str(src), str(out), "--swap", "county", "--swap-rate", "0.3", "--simulate"]
    assert main(argv) == 0
    assert "SIMULATION: not for publication" in capsys.readouterr().out


@pytest.mark.parametrize("target", ["output", "release"])
def test_never_writes_over_the_input(households, tmp_path, capsys, target):
    _, src = households
    before = src.read_bytes()
    out = src if target == "output" else tmp_path / "o.csv"
    argv = ["swap", str(src), str(out), "--swap", "county", "--swap-rate", "0.3"]
    if target == "release":
        argv += ["--release", str(src)]
    assert main([*argv, "--force"]) == 2
    assert "same file as `input`" in _one_error_line(capsys)
    assert src.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hh.csv"]


def test_release_and_output_must_differ(households, tmp_path, capsys):
    _, src = households
    out = tmp_path / "o.csv"
    argv = ["swap", str(src), str(out), "--swap", "county", "--swap-rate", "0.3"]
    assert main([*argv, "--release", str(out)]) == 2
    assert "same file as `output`" in _one_error_line(capsys)
    assert not out.exists()


def test_existing_files_need_force(households, tmp_path, capsys):
    _, src = households
    out, rel = tmp_path / "o.csv", tmp_path / "r.json"
    rel.write_text("old release")
    argv = ["swap", str(src), str(out), "--swap", "county", "--swap-rate", "0.3", "--seed", "2"]
    assert main([*argv, "--release", str(rel)]) == 2
    assert "`--release`" in _one_error_line(capsys) and not out.exists()
    assert rel.read_text() == "old release"
    assert main([*argv, "--release", str(rel), "--force"]) == 0
    assert Release.load(rel).simulation and out.exists()
    capsys.readouterr()
    first = out.read_bytes()
    assert main(argv) == 2
    assert "exists; pass --force" in _one_error_line(capsys)
    assert out.read_bytes() == first


@pytest.mark.parametrize(
    "output, match",
    [(".", "must end in .csv"), ("{tmp}/d.csv", "is a directory"), ("/etc", "must end in")],
)
def test_bad_output_paths(households, tmp_path, capsys, output, match):
    _, src = households
    (tmp_path / "d.csv").mkdir()
    argv = ["swap", str(src), output.format(tmp=tmp_path), "--swap", "county"]
    assert main([*argv, "--swap-rate", "0.3"]) == 2
    assert match in _one_error_line(capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.csv", "hh.csv"]


@pytest.mark.parametrize(
    "content, suffix, match",
    [
        (b"", ".csv", "`input`"),
        (b"\xff\xfe\x81,\x00\n", ".csv", "`input`"),
        (b"not parquet at all", ".parquet", "arquet"),
    ],
)
def test_unreadable_input(tmp_path, capsys, content, suffix, match):
    pytest.importorskip("pyarrow")
    src = tmp_path / f"in{suffix}"
    src.write_bytes(content)
    argv = ["swap", str(src), str(tmp_path / "o.csv"), "--swap", "county", "--swap-rate", "0.3"]
    assert main(argv) == 2
    assert match in _one_error_line(capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == [src.name]
