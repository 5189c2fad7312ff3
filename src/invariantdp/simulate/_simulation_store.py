"""Where a simulation study keeps its finished runs: ranges of runs, in memory and on disk.

Runs are numbered in the order of the table: run ``k`` is replicate
``k % replicates`` of setting ``k // replicates``.  A *task* is a range
``[start, stop)`` of run numbers; its result is the list of the runs'
outcome dicts.  A :class:`Store` writes each finished task as
``runs-<start>-<stop>.parquet`` next to a manifest of the study, so that a
later call finds which runs are done whatever the tasks were: a study begun
serially can be finished on Dask, with another batch size, and the table is
the same (every run draws from its own stream).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

import pandas as pd

from ..exceptions import InvariantDPError

__all__ = ["Store", "gaps", "split"]

MANIFEST = "manifest.json"
#: version 2: files named by run ranges (version 1 named them by setting and batch)
STORE_VERSION = 2
_RUNS = re.compile(r"runs-(\d+)-(\d+)\.parquet")


def task_filename(start: int, stop: int) -> str:
    """The file of the runs ``[start, stop)``."""
    return f"runs-{start:012d}-{stop:012d}.parquet"


def gaps(done, n_runs: int) -> list[tuple[int, int]]:
    """The ranges of ``range(n_runs)`` that no range in ``done`` covers, in order."""
    out, pos = [], 0
    for start, stop in sorted(done):
        if start > pos:
            out.append((pos, start))
        pos = max(pos, stop)
    if pos < n_runs:
        out.append((pos, n_runs))
    return out


def split(ranges, size: int) -> list[tuple[int, int]]:
    """``ranges`` cut into tasks of ``size`` runs (the last of each range shorter)."""
    return [(lo, min(lo + size, stop)) for start, stop in ranges for lo in range(start, stop, size)]


class Store:
    """A directory of finished tasks and the manifest of the study they belong to."""

    def __init__(self, path, manifest: dict):
        try:
            import pyarrow  # noqa: F401  (the Parquet engine of the store)
        except ImportError:
            raise ImportError(
                "`store` writes Parquet files and needs pyarrow: "
                "pip install 'invariantdp[simulate]'."
            ) from None
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        mpath = self.path / MANIFEST
        if mpath.exists():
            try:
                found = json.loads(mpath.read_text())
            except (OSError, ValueError) as exc:
                raise InvariantDPError(
                    f"`store` ({self.path}): unreadable manifest: {exc}"
                ) from None
            if found != manifest:
                differ = sorted(
                    k for k in set(found) | set(manifest) if found.get(k) != manifest.get(k)
                )
                raise InvariantDPError(
                    f"`store` ({self.path}) holds a different study (it differs in {differ}); "
                    "use a new directory, or remove this one to start again."
                )
        else:
            self._write_atomic(mpath, lambda f: f.write(json.dumps(manifest, indent=1).encode()))

    def _write_atomic(self, path: Path, write) -> None:
        fd, tmp = tempfile.mkstemp(dir=self.path, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                write(f)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def finished(self, n_runs: int) -> dict[tuple[int, int], list[dict]]:
        """The tasks found on disk, ``(start, stop) -> outcomes``, none overlapping.

        A file whose range lies outside the study or overlaps one already
        taken, or whose row count is not its range's, is left out: its runs
        are simply run again (they give the same outcomes).
        """
        found = []
        for p in self.path.iterdir():
            m = _RUNS.fullmatch(p.name)
            if m:
                start, stop = int(m.group(1)), int(m.group(2))
                if 0 <= start < stop <= n_runs:
                    found.append((start, stop, p))
        out: dict[tuple[int, int], list[dict]] = {}
        end = 0
        for start, stop, p in sorted(found):
            if start < end:
                continue
            frame = pd.read_parquet(p)
            if len(frame) != stop - start:
                continue
            out[(start, stop)] = frame.to_dict("records")
            end = stop
        return out

    def save(self, start: int, stop: int, outcomes: list[dict]) -> None:
        frame = pd.DataFrame.from_records(outcomes)
        self._write_atomic(
            self.path / task_filename(start, stop), lambda f: frame.to_parquet(f, index=False)
        )
