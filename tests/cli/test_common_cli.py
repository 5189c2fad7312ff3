"""Shared CLI helpers: bounded messages, strict JSON, safe atomic writes."""

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from invariantdp.cli import _common
from invariantdp.cli._common import (
    MAX_MESSAGE,
    bounded,
    check_output,
    print_json,
    short,
    strict_json,
    write_atomic,
)
from invariantdp.exceptions import InvariantDPError


def _reject_constant(name):
    raise AssertionError(f"non-standard JSON constant {name} in the output")


def _leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# --- bounded messages ---------------------------------------------------------


@given(st.text(max_size=3000))
@example("x" * 3000)
@example("\x00" * 59)
def test_short_is_bounded_and_keeps_short_values_whole(text):
    out = short(text)
    assert len(out) <= 60 + len("... (3000 characters)")
    if len(repr(text)) <= 60:
        assert out == repr(text)
    else:
        assert out.endswith(f"... ({len(text)} characters)")


@given(st.text(max_size=5000))
def test_bounded_is_one_short_line(text):
    out = bounded(text)
    assert "\n" not in out and "\r" not in out
    assert len(out) <= MAX_MESSAGE + len("... [message cut: 5000 characters]")


def test_parser_errors_are_bounded(capsys):
    from invariantdp.cli import main

    with pytest.raises(SystemExit) as info:
        main(["account", "gdp", "--epsilon", "x" * 1_000_000, "--delta", "0.1"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "invalid float value" in err
    assert len(err) < 2 * MAX_MESSAGE + 500  # usage line + the bounded error line


# --- strict JSON --------------------------------------------------------------


def test_strict_json_maps_non_finite_to_null(capsys):
    obj = {
        "ci": (0.3, float("inf")),
        "p": np.float64("nan"),
        "low": -np.inf,
        "n": np.int64(4),
        "flag": np.bool_(True),
        "arr": np.array([1.5, np.inf]),
    }
    print_json(obj)
    out = json.loads(capsys.readouterr().out, parse_constant=_reject_constant)
    assert out == {
        "ci": [0.3, None],
        "p": None,
        "low": None,
        "n": 4,
        "flag": True,
        "arr": [1.5, None],
    }


@given(st.recursive(st.floats() | st.integers() | st.text(max_size=3), st.lists, max_leaves=20))
def test_strict_json_output_is_always_rfc8259(obj):
    text = json.dumps(strict_json({"x": obj}), allow_nan=False)
    json.loads(text, parse_constant=_reject_constant)


# --- safe atomic writes -------------------------------------------------------


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o077])
def test_written_file_gets_the_umask_permissions(tmp_path, mask):
    old = os.umask(mask)
    try:
        path = write_atomic(tmp_path / "r.json", "{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask
    assert path.read_text() == "{}"
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize(
    "content, expected",
    [("é\n", "é\n".encode()), (b"\x00\x01", b"\x00\x01"), (lambda fh: fh.write(b"ab"), b"ab")],
)
def test_content_kinds(tmp_path, content, expected):
    path = write_atomic(tmp_path / "f.bin", content)
    assert path.read_bytes() == expected


def test_refuses_an_existing_file_unless_forced(tmp_path):
    path = tmp_path / "out.json"
    path.write_text("old")
    with pytest.raises(InvariantDPError, match=r"exists; pass --force"):
        write_atomic(path, "new")
    assert path.read_text() == "old"
    write_atomic(path, "new", force=True)
    assert path.read_text() == "new"
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("link", ["same", "hardlink", "symlink", "dotted"])
def test_never_writes_over_an_input(tmp_path, link):
    data = tmp_path / "t.csv"
    data.write_text("confidential")
    out = {
        "same": data,
        "hardlink": tmp_path / "h.csv",
        "symlink": tmp_path / "s.csv",
        "dotted": tmp_path / "." / "sub" / ".." / "t.csv",
    }[link]
    (tmp_path / "sub").mkdir()
    if link == "hardlink":
        os.link(data, out)
    elif link == "symlink":
        out.symlink_to(data)
    with pytest.raises(InvariantDPError, match=r"same file as `table`.*refusing"):
        write_atomic(out, "noise", inputs=[("table", data)], force=True)
    assert data.read_text() == "confidential"
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize(
    "bad, match",
    [
        ("", "must be a file path"),
        ("   ", "must be a file path"),
        (".", "is a directory"),
        ("{tmp}", "is a directory"),
        ("{tmp}/new/", "is a directory"),
        ("{tmp}/missing/r.json", "existing directory"),
        ("{tmp}/file.txt/r.json", "existing directory"),
        ("{tmp}/fifo", "not a regular file"),
        ("/dev/null", "not a regular file"),
    ],
)
def test_bad_destinations(tmp_path, bad, match):
    (tmp_path / "file.txt").write_text("x")
    os.mkfifo(tmp_path / "fifo")
    for force in (False, True):
        with pytest.raises(InvariantDPError, match=match):
            check_output(bad.format(tmp=tmp_path), force=force)


@pytest.mark.parametrize("name", ["d" * 100_000, "d" * 200])
def test_long_paths_are_not_echoed_whole(tmp_path, capsys, name):
    from invariantdp.cli import main

    table = tmp_path / "t.csv"
    table.write_text(",a\nx,1\n")
    out = str(tmp_path / name / "r.json")
    assert main(["release", "discrete-laplace", str(table), "--epsilon", "1", "-o", out]) == 2
    err = capsys.readouterr().err
    assert err.startswith("invariantdp release: error: ") and err.count("\n") == 1
    assert len(err) < MAX_MESSAGE + 100


def test_temp_file_removed_when_the_writer_fails(tmp_path):
    def boom(fh):
        fh.write(b"partial")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_atomic(tmp_path / "out.csv", boom)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
def test_sigint_removes_the_temp_file_and_restores_handlers(tmp_path):
    # A shell starts background jobs with SIGINT ignored (and Python keeps it
    # so), which is how CI may run us: give SIGINT Python's usual handler.
    outer = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
        seen = []

        def interrupted(fh):
            fh.write(b"partial")
            seen.extend(_leftovers(tmp_path))
            # raise_signal, unlike os.kill, delivers to this thread, at once
            signal.raise_signal(signal.SIGINT)

        with pytest.raises(KeyboardInterrupt):
            write_atomic(tmp_path / "out.csv", interrupted)
        assert len(seen) == 1  # the temporary file existed during the write ...
        assert list(tmp_path.iterdir()) == []  # ... and is gone, with no output
        assert {s: signal.getsignal(s) for s in before} == before
    finally:
        signal.signal(signal.SIGINT, outer)


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
def test_an_ignored_sigint_stays_ignored(tmp_path):
    """A process that ignores SIGINT keeps ignoring it: the write completes."""
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:

        def interrupted(fh):
            fh.write(b"whole")
            signal.raise_signal(signal.SIGINT)

        out = write_atomic(tmp_path / "out.csv", interrupted)
        assert out.read_bytes() == b"whole"
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, old)


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
def test_sigterm_during_a_cli_write_leaves_nothing(tmp_path):
    """A child runs ``invariantdp swap``; its CSV writer pauses mid-file and is killed."""
    src = tmp_path / "in.csv"
    pd.DataFrame({"county": list("aabbab"), "owned": [1, 0, 1, 0, 0, 1]}).to_csv(src, index=False)
    child = textwrap.dedent(
        """
        import sys, time
        import pandas as pd
        from invariantdp.cli import main

        to_csv = pd.DataFrame.to_csv

        def paused(self, *args, **kwargs):
            to_csv(self, *args, **kwargs)
            print("writing", flush=True)
            time.sleep(60)

        pd.DataFrame.to_csv = paused
        sys.exit(main(sys.argv[1:]))
        """
    )
    out = tmp_path / "out.csv"
    proc = subprocess.Popen(
        [sys.executable, "-c", child, "swap", str(src), str(out), "--swap", "county",
         "--swap-rate", "0.5", "--seed", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert proc.stdout.readline() == "writing\n"
        assert len(_leftovers(tmp_path)) == 1
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
    finally:
        proc.kill()
        proc.communicate()
    assert proc.returncode == -signal.SIGTERM
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_handlers_skipped_off_the_main_thread(tmp_path):
    import threading

    result = []
    t = threading.Thread(target=lambda: result.append(write_atomic(tmp_path / "a.txt", "x")))
    t.start()
    t.join()
    assert result and result[0].read_text() == "x"


def test_no_hard_links_falls_back_to_a_checked_rename(tmp_path, monkeypatch):
    import errno

    def no_link(*args):
        raise OSError(errno.EPERM, "hard links not supported")

    monkeypatch.setattr(_common.os, "link", no_link)
    path = write_atomic(tmp_path / "a.txt", "x")
    assert path.read_text() == "x"
    assert _leftovers(tmp_path) == []
