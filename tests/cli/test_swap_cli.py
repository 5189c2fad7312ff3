"""``invariantdp swap``."""

import json

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
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_swap_json_output(households, tmp_path, capsys):
    df, src = households
    out = tmp_path / "o.csv"
    assert main(["swap", str(src), str(out), "--swap", "county", "--swap-rate", "0.5",
                 "--seed", "1", "--json"]) == 0  # fmt: skip
    res = json.loads(capsys.readouterr().out)
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
    assert main(["swap", str(src), str(out), *extra]) == 2
    assert out.read_text() == "previous\n"
    assert pytest.importorskip("re").search(message, capsys.readouterr().err)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_unknown_format(households, tmp_path, capsys):
    _, src = households
    assert main(["swap", str(src), str(tmp_path / "o.xlsx"), "--swap", "county",
                 "--swap-rate", "0.3"]) == 2  # fmt: skip
    assert "must end in .csv or .parquet" in capsys.readouterr().err
    np.testing.assert_equal(list(tmp_path.glob("o.xlsx")), [])
