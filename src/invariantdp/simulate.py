"""Simulation studies: a grid of settings times replicates, as a tidy table.

Methods papers and power analyses run one test or model over a grid of
settings (epsilon, n, effect size, mechanism, ...) with many replicates.
:func:`simulate` runs ``func(rng, **setting)`` for every setting and
replicate and returns one row per run in a :class:`SimulationResult`.

**Streams.**  Replicate ``r`` of setting ``i`` draws from
``numpy.random.default_rng(SeedSequence(seed).spawn(n_settings)[i].spawn(replicates)[r])``
(built directly from its spawn key ``(i, r)``): streams are independent
across runs (the SeedSequence guarantee), and a run's result does not depend
on how runs are grouped into tasks, on the scheduler, or on the order in
which tasks finish.  A serial run and a Dask run of the same study give the
same table.

**Schedulers.**  ``scheduler="serial"`` (the default) runs in this process;
``scheduler="dask"`` sends tasks to a ``dask.distributed`` cluster: a local
cluster of ``n_workers`` processes, or the ``client`` given (so a study can
use any cluster Dask can reach).

**Resuming.**  With ``store=`` a directory, every finished task is written
there as a Parquet file when it arrives, with a manifest of the study.  A run
that is interrupted (an error, a killed process, a lost worker) continues
where it stopped when called again with the same arguments: finished tasks
are read back, not run again.  A store made by a different study is refused.

These studies are simulations in the package's sense (``numpy`` generators,
reproducible from ``seed``): for assessing methods, never for publishing a
release.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from ._progress import progress_bar, show_progress
from ._results import Summary, format_table
from ._validation import check_in_open_unit, check_positive_int, format_value
from .exceptions import InvariantDPError

__all__ = ["SimulationResult", "simulate"]

#: the column that numbers the replicates of a setting
REPLICATE = "replicate"
_MANIFEST = "manifest.json"
_STORE_VERSION = 1


def _check_settings(settings) -> pd.DataFrame:
    """The settings as a DataFrame, one row per setting (a grid is expanded)."""
    if isinstance(settings, pd.DataFrame):
        frame = settings.reset_index(drop=True)
    elif isinstance(settings, Mapping):
        names = list(settings)
        values = []
        for name in names:
            v = settings[name]
            if isinstance(v, str) or not isinstance(v, Sequence | np.ndarray | range):
                v = [v]  # a single value is a grid of one
            v = list(v)
            if not v:
                raise InvariantDPError(f"`settings[{name!r}]` must not be empty.")
            values.append(v)
        frame = pd.DataFrame(list(itertools.product(*values)), columns=names)
    elif isinstance(settings, Sequence) and all(isinstance(s, Mapping) for s in settings):
        frame = pd.DataFrame(list(settings))
    else:
        raise TypeError(
            "`settings` must be a dict of name -> values (a grid), a list of dicts or a "
            f"DataFrame (one row per setting), got {type(settings).__name__}."
        )
    if frame.shape[0] == 0 or frame.shape[1] == 0:
        raise InvariantDPError("`settings` must hold at least one setting with one parameter.")
    for name in frame.columns:
        if not isinstance(name, str) or not name.isidentifier() or name == REPLICATE:
            raise InvariantDPError(
                f"setting names must be Python identifiers other than {REPLICATE!r} "
                f"(they are passed as keywords), got {name!r}."
            )
    if frame.columns.duplicated().any():
        raise InvariantDPError(f"setting names must be unique, got {list(frame.columns)}.")
    return frame


def _outcome(value, where: str) -> dict:
    """One run's outcome as ``{name: scalar}``; a bare scalar is named ``value``."""
    items = value.items() if isinstance(value, Mapping) else [("value", value)]
    out = {}
    for k, v in items:
        if isinstance(v, np.ndarray | np.generic) and np.ndim(v) == 0:
            v = v.item()
        if not isinstance(v, int | float | bool | str | type(None)):
            raise InvariantDPError(
                f"{where}: every outcome must be a scalar (number, bool, str or None) so that "
                f"the results form a tidy table; {k!r} is {format_value(v)}."
            )
        if not isinstance(k, str) or k == REPLICATE:
            raise InvariantDPError(
                f"{where}: outcome names must be strings other than {REPLICATE!r}."
            )
        out[k] = v
    return out


def replicate_generator(seed: int, setting: int, replicate: int) -> np.random.Generator:
    """The generator of replicate ``replicate`` of setting number ``setting``.

    Equal to ``default_rng(SeedSequence(seed).spawn(n)[setting].spawn(m)[replicate])``
    for any ``n > setting`` and ``m > replicate``.
    """
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(setting, replicate)))


def _run_task(func, setting: dict, index: int, replicates: range, seed: int) -> pd.DataFrame:
    """Run the replicates ``replicates`` of one setting; one row each."""
    rows = []
    for r in replicates:
        try:
            value = func(replicate_generator(seed, index, r), **setting)
        except Exception as exc:
            exc.add_note(f"in simulate: setting {index} {setting}, replicate {r}")
            raise
        rows.append({**setting, REPLICATE: r, **_outcome(value, f"setting {index}, replicate {r}")})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class _Task:
    setting: int
    batch: int
    replicates: range

    @property
    def filename(self) -> str:
        return f"task-{self.setting:06d}-{self.batch:06d}.parquet"


class _Store:
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
        mpath = self.path / _MANIFEST
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

    def done(self, task: _Task) -> pd.DataFrame | None:
        p = self.path / task.filename
        return pd.read_parquet(p) if p.exists() else None

    def save(self, task: _Task, frame: pd.DataFrame) -> None:
        self._write_atomic(self.path / task.filename, lambda f: frame.to_parquet(f, index=False))


def _run_dask(func, settings, todo, seed, client, n_workers, on_result):
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ImportError(
            "scheduler='dask' needs dask.distributed: pip install 'invariantdp[simulate]'."
        ) from None
    own = client is None
    if own:
        cluster = LocalCluster(
            n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
    elif not isinstance(client, Client):
        raise TypeError(f"`client` must be a dask.distributed.Client, got {type(client).__name__}.")
    try:
        # a unique key (hash=False): a key shared with an earlier study on the same client
        # can be released by it while this study still needs it
        remote = client.scatter(func, broadcast=True, hash=False)
        futures = {
            client.submit(
                _run_task, remote, settings[t.setting], t.setting, t.replicates, seed, pure=False
            ): t
            for t in todo
        }
        for fut in as_completed(futures):
            on_result(futures[fut], fut.result())
    finally:
        if own:
            client.close()
            cluster.close()


@dataclass(frozen=True)
class SimulationResult:
    """The runs of a simulation study: one row per setting and replicate.

    Attributes
    ----------
    frame : pandas.DataFrame
        The setting columns, ``replicate``, then the outcome columns, sorted by
        setting (in the order given) and replicate.
    settings : tuple of str
        Names of the setting columns.
    outcomes : tuple of str
        Names of the outcome columns.
    replicates : int
        Runs per setting.
    seed : int
        Root seed; each run's generator is spawned from it, so the same seed
        gives the same runs.

    References
    ----------
    Awan & Slavkovic (2018), Sec. 6 (simulation studies of the size and
    power of the DP binomial tests, the use shown below).

    Examples
    --------
    >>> res = simulate(lambda rng, p: {"x": rng.binomial(10, p)},
    ...                {"p": [0.2, 0.8]}, replicates=50, seed=1)
    >>> res.settings, res.outcomes, res.replicates, res.frame.shape
    (('p',), ('x',), 50, (100, 3))
    >>> res.mean("x")["mean"].is_monotonic_increasing
    True
    """

    frame: pd.DataFrame = field(repr=False)
    settings: tuple[str, ...]
    outcomes: tuple[str, ...]
    replicates: int
    seed: int

    def to_frame(self) -> pd.DataFrame:
        """A copy of the tidy table of runs."""
        return self.frame.copy()

    def _check_outcome(self, name: str, column) -> None:
        if column not in self.outcomes:
            raise InvariantDPError(
                f"`{name}` ({column!r}) must be one of the outcomes {self.outcomes}."
            )

    def _by_setting(self):
        return self.frame.groupby(list(self.settings), sort=False, dropna=False)

    def mean(self, column: str) -> pd.DataFrame:
        """Per setting: the mean of ``column`` and its Monte Carlo standard error."""
        if column not in self.outcomes:
            raise InvariantDPError(
                f"`column` ({column!r}) must be one of the outcomes {self.outcomes}."
            )
        g = self._by_setting()[column]
        out = g.agg(mean="mean", sd="std", runs="count").reset_index()
        out["mc_se"] = out.pop("sd") / np.sqrt(out["runs"])
        return out

    def rejection_rate(self, alpha=0.05, pvalue: str = "pvalue") -> pd.DataFrame:
        """Per setting: the share of runs with ``pvalue <= alpha`` and its standard error.

        Under a null setting this estimates the size of the test, elsewhere its
        power; ``mc_se`` is the binomial standard error ``sqrt(r (1 - r) / runs)``.
        """
        alpha = check_in_open_unit("alpha", alpha)
        if pvalue not in self.outcomes:
            raise InvariantDPError(
                f"`pvalue` ({pvalue!r}) must be one of the outcomes {self.outcomes}."
            )
        rejected = self.frame[pvalue].to_numpy(dtype=float) <= alpha
        g = pd.Series(rejected, index=self.frame.index).groupby(
            [self.frame[s] for s in self.settings], sort=False, dropna=False
        )
        out = g.agg(rejection_rate="mean", runs="count").reset_index()
        r = out["rejection_rate"]
        out["mc_se"] = np.sqrt(r * (1 - r) / out["runs"])
        return out

    @cached_property
    def n_settings(self) -> int:
        return int(self._by_setting().ngroups)

    def summary(self) -> Summary:
        """The size of the study and the outcomes it recorded."""
        return format_table(
            "Simulation study",
            [
                ("settings", self.n_settings),
                ("setting names", ", ".join(self.settings)),
                ("replicates", self.replicates),
                ("runs", len(self.frame)),
                ("outcomes", ", ".join(self.outcomes)),
                ("seed", self.seed),
            ],
            ["Simulation (numpy generators, reproducible from the seed): not for publication."],
        )


def simulate(
    func: Callable,
    settings,
    *,
    replicates: int,
    seed: int,
    batch_size: int | None = None,
    scheduler: str = "serial",
    client=None,
    n_workers: int | None = None,
    store=None,
    progress: bool | None = None,
) -> SimulationResult:
    """Run ``func(rng, **setting)`` over a grid of settings, ``replicates`` times each.

    Parameters
    ----------
    func : callable
        ``func(rng, **setting)`` with ``rng`` a ``numpy.random.Generator`` (its
        only source of randomness) returns the outcomes of one run: a mapping of
        name -> scalar (e.g. ``{"pvalue": ..., "estimate": ...}``) or one scalar
        (column ``value``).  With ``scheduler="dask"`` it must be picklable by
        cloudpickle (a module-level function, or a lambda / closure).
    settings : dict, list of dict or DataFrame
        A dict of name -> values is the Cartesian grid of the values (a single
        value is a grid of one); a list of dicts or a DataFrame lists the
        settings themselves.
    replicates : int
        Runs per setting.
    seed : int
        Root of the streams (see the module docstring): the same seed gives the
        same table, whatever the scheduler and ``batch_size``.
    batch_size : int, optional
        Replicates per task (default: enough for about 100 tasks per setting,
        at least 1).  Smaller tasks mean finer progress and resuming; larger,
        less overhead.
    scheduler : {"serial", "dask"}
    client : dask.distributed.Client, optional
        The cluster to use with ``scheduler="dask"``; by default a local
        cluster of ``n_workers`` single-threaded processes, closed at the end.
    n_workers : int, optional
        Workers of the local cluster (default: ``os.cpu_count()``).
    store : path, optional
        Directory where finished tasks are written as they arrive (Parquet),
        so that an interrupted study resumes when called again.
    progress : bool, optional
        Show a progress bar (default: in a terminal or a notebook, not under CI).

    Returns
    -------
    SimulationResult
        ``.frame`` has one row per run; ``.rejection_rate(alpha)`` and
        ``.mean(column)`` summarise it per setting with Monte Carlo errors.

    References
    ----------
    Awan & Slavkovic (2018), Theorem 3.2 (the DP UMP test of the example);
    numpy ``SeedSequence`` spawning (the independence of the streams).

    Examples
    --------
    The size of the DP UMP binomial test under its null (Awan & Slavkovic 2018):

    >>> from invariantdp import ump_binomial_test
    >>> from invariantdp.distributions import tulap, tulap_params
    >>> def run(rng, n, epsilon):
    ...     b, q = tulap_params(epsilon)
    ...     z = rng.binomial(n, 0.3) + tulap(b, q).rvs(random_state=rng)
    ...     return {"pvalue": ump_binomial_test(z, n, 0.3, epsilon=epsilon).pvalue}
    >>> res = simulate(run, {"n": [20], "epsilon": [0.5, 2.0]}, replicates=200, seed=1)
    >>> res.frame.shape
    (400, 4)
    >>> bool((res.rejection_rate(0.05)["rejection_rate"] < 0.1).all())
    True
    """
    if not callable(func):
        raise TypeError(f"`func` must be callable, got {type(func).__name__}.")
    frame = _check_settings(settings)
    replicates = check_positive_int("replicates", replicates)
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise InvariantDPError(f"`seed` must be a non-negative integer, got {format_value(seed)}.")
    seed = int(seed)
    if batch_size is None:
        batch_size = max(1, math.ceil(replicates / 100))
    batch_size = check_positive_int("batch_size", batch_size)
    if scheduler not in ("serial", "dask"):
        raise InvariantDPError(f"`scheduler` ({scheduler!r}) must be 'serial' or 'dask'.")
    if scheduler == "serial" and (client is not None or n_workers is not None):
        raise InvariantDPError("`client` and `n_workers` apply to scheduler='dask' only.")
    if n_workers is not None:
        n_workers = check_positive_int("n_workers", n_workers)
    elif scheduler == "dask":
        n_workers = os.cpu_count() or 1
    show_progress(progress)  # checked before any work

    rows = [{k: _plain(v) for k, v in row.items()} for row in frame.to_dict("records")]
    tasks = [
        _Task(i, b, range(lo, min(lo + batch_size, replicates)))
        for i in range(len(rows))
        for b, lo in enumerate(range(0, replicates, batch_size))
    ]
    results: dict[_Task, pd.DataFrame] = {}
    saved = None
    if store is not None:
        manifest = {
            "version": _STORE_VERSION,
            "settings": rows,
            "replicates": replicates,
            "seed": seed,
            "batch_size": batch_size,
            "func": getattr(func, "__qualname__", repr(type(func))),
        }
        try:
            json.dumps(manifest)
        except TypeError:
            raise InvariantDPError(
                "`store` needs settings that JSON can record (numbers, strings, bools, None)."
            ) from None
        saved = _Store(store, manifest)
        for t in tasks:
            done = saved.done(t)
            if done is not None:
                results[t] = done
    todo = [t for t in tasks if t not in results]

    with progress_bar(len(tasks), progress, desc="simulate", unit="task") as bar:
        bar.update(len(results))

        def on_result(task, part):
            if saved is not None:
                saved.save(task, part)
            results[task] = part
            bar.update(1)

        if scheduler == "serial":
            for t in todo:
                on_result(t, _run_task(func, rows[t.setting], t.setting, t.replicates, seed))
        else:
            _run_dask(func, rows, todo, seed, client, n_workers, on_result)

    out = pd.concat([results[t] for t in tasks], ignore_index=True)
    names = tuple(frame.columns)
    outcomes = tuple(c for c in out.columns if c not in names and c != REPLICATE)
    out = out[[*names, REPLICATE, *outcomes]]
    return SimulationResult(out, names, outcomes, replicates, seed)


def _plain(v):
    """A setting value as a plain Python scalar (numpy scalars become int/float/bool)."""
    return v.item() if isinstance(v, np.generic) else v
