import subprocess
import sys
import zipfile

import pytest

from invariantdp import datasets


def test_aspirin_table():
    df = datasets.aspirin_myocardial_infarction()
    assert df.to_numpy().tolist() == [[189, 10845], [104, 10933]]
    assert list(df.index) == ["placebo", "aspirin"]


def test_every_csv_is_documented():
    readme = (datasets._data_dir() / "README.md").read_text(encoding="utf-8")
    for name in datasets.list_datasets():
        assert f"`{name}.csv`" in readme


def test_unknown_name():
    with pytest.raises(ValueError, match="is not a bundled data set"):
        datasets.load_csv("nope")


@pytest.mark.slow
def test_wheel_contains_the_data(tmp_path):
    root = datasets.Path(datasets.__file__).resolve().parents[2]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(root),
        ],
        check=True,
    )
    (wheel,) = tmp_path.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for name in datasets.list_datasets():
        assert f"invariantdp/_data/{name}.csv" in names
