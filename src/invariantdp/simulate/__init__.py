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
``scheduler="dask"`` sends tasks (ranges of runs, possibly spanning
settings) to a ``dask.distributed`` cluster: a local cluster of
``n_workers`` processes, or the ``client`` given (so a study can use any
cluster Dask can reach).  Unless ``batch_size`` is given, a pilot of a few
runs in this process measures their cost, and tasks get about half a second
of runs each, so that Dask's overhead per task (~5 ms) is amortised.  Dask
pays for studies that take minutes serially; for a study of seconds, the
start of a local cluster (a few seconds) costs more than it saves.

**Resuming.**  With ``store=`` a directory, every finished task is written
there as a Parquet file named by its range of runs when it arrives, with a
manifest of the study.  A run that is interrupted (an error, a killed
process, a lost worker) continues where it stopped when called again with
the same settings, replicates and seed, on either scheduler and with any
batch size: the runs found are read back, not run again.  A store made by a
different study is refused.

These studies are simulations in the package's sense (``numpy`` generators,
reproducible from ``seed``): for assessing methods, never for publishing a
release.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from .._dask_tasks import check_scheduler
from .._progress import progress_bar, show_progress
from .._results import Summary, format_table
from .._validation import check_in_open_unit, check_positive_int, format_value
from ..exceptions import InvariantDPError
from ..plotting import plot_simulation
from ._simulation_store import STORE_VERSION, Store, gaps, split
from ._simulation_tasks import (
    DASK_TASK_SECONDS,
    MAX_TASKS,
    PILOT_RUNS,
    PILOT_SECONDS,
    REPLICATE,
    SERIAL_TASK_SECONDS,
    TASKS_PER_WORKER,
    dask_batch_size,
    dask_workers,
    pilot,
    replicate_generator,
    run_dask,
    run_range,
    run_serial,
)

__all__ = [
    "DASK_TASK_SECONDS",
    "MAX_TASKS",
    "PILOT_RUNS",
    "PILOT_SECONDS",
    "SERIAL_TASK_SECONDS",
    "TASKS_PER_WORKER",
    "SimulationResult",
    "dask_batch_size",
    "replicate_generator",
    "simulate",
]


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

    def plot(self, x: str, **kwargs):
        """Rejection rates (or means) per setting with Monte Carlo error bars.

        ``result.plot(x, ...)`` is
        :func:`invariantdp.plotting.plot_simulation` ``(result, x, ...)``;
        see there for ``y``, ``hue``, ``where``, ``alpha``, ``null``,
        ``n_se`` and ``logx`` (a log scale for budgets swept over orders of
        magnitude; needs matplotlib, the ``plot`` extra).
        """
        return plot_simulation(self, x, **kwargs)

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
        Runs per task (a task may span settings).  By default: serially, a
        task is what runs in about a second (what the store writes at once);
        on Dask, a pilot of a few runs in this process measures their cost
        and a task gets about half a second of runs, with at least four tasks
        per worker (:func:`dask_batch_size`).
    scheduler : {"serial", "dask"}
        Dask pays when the study takes much longer serially than its fixed
        costs: starting a local cluster takes a few seconds (none with a
        running ``client``), and a task ~5 ms.  A study of a few seconds is
        faster serially; one of minutes gains nearly ``n_workers`` times.
        ``benchmarks/bench_simulate.py`` measures both on this machine.
    client : dask.distributed.Client, optional
        The cluster to use with ``scheduler="dask"``; by default a local
        cluster of ``n_workers`` single-threaded processes, closed at the end.
    n_workers : int, optional
        Workers of the local cluster (default: ``os.cpu_count()``).
    store : path, optional
        Directory where finished tasks are written as they arrive (Parquet),
        so that an interrupted study resumes when called again with the same
        settings, replicates and seed (the scheduler and ``batch_size`` may
        change: the files say which runs they hold).
    progress : bool, optional
        Show a progress bar of the runs (default: in a terminal or a
        notebook, not under CI).

    Returns
    -------
    SimulationResult
        ``.frame`` has one row per run; ``.rejection_rate(alpha)`` and
        ``.mean(column)`` summarise it per setting with Monte Carlo errors,
        and ``.plot(x)`` draws them with error bars.

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
    if batch_size is not None:
        batch_size = check_positive_int("batch_size", batch_size)
    check_scheduler(scheduler, client)
    if scheduler == "serial" and n_workers is not None:
        raise InvariantDPError("`n_workers` applies to scheduler='dask' only.")
    if n_workers is not None:
        n_workers = check_positive_int("n_workers", n_workers)
    elif scheduler == "dask" and client is None:
        n_workers = os.cpu_count() or 1
    if scheduler == "dask":
        workers = dask_workers(client, n_workers)
    show_progress(progress)  # checked before any work

    rows = [{k: _plain(v) for k, v in row.items()} for row in frame.to_dict("records")]
    n_runs = len(rows) * replicates
    results: dict[tuple[int, int], list[dict]] = {}
    saved = None
    if store is not None:
        manifest = {
            "version": STORE_VERSION,
            "settings": rows,
            "replicates": replicates,
            "seed": seed,
            "func": getattr(func, "__qualname__", repr(type(func))),
        }
        try:
            json.dumps(manifest)
        except TypeError:
            raise InvariantDPError(
                "`store` needs settings that JSON can record (numbers, strings, bools, None)."
            ) from None
        saved = Store(store, manifest)
        results.update(saved.finished(n_runs))

    def on_result(start, stop, outcomes):
        if saved is not None:
            saved.save(start, stop, outcomes)
        results[(start, stop)] = outcomes

    with progress_bar(n_runs, progress, desc="simulate", unit="run") as bar:
        bar.update(sum(b - a for a, b in results))

        def run_one(k):
            return run_range(func, rows, 0, replicates, seed, k, k + 1)[0]

        todo = gaps(results, n_runs)
        if scheduler == "serial":
            run_serial(run_one, todo, batch_size, on_result, bar)
        elif todo:
            if batch_size is None:

                def piloted(start, stop, outcomes):
                    on_result(start, stop, outcomes)
                    bar.update(stop - start)

                seconds = pilot(run_one, todo, piloted)
                todo = gaps(results, n_runs)
                runs_left = sum(b - a for a, b in todo)
                batch_size = dask_batch_size(seconds, runs_left, workers)
            job = (func, rows, replicates, seed)
            run_dask(job, split(todo, batch_size), client, n_workers, on_result, bar)

    outcomes = pd.DataFrame.from_records([o for key in sorted(results) for o in results[key]])
    names = tuple(frame.columns)
    grid = pd.DataFrame.from_records(rows, columns=list(names))
    out = grid.iloc[np.repeat(np.arange(len(rows)), replicates)].reset_index(drop=True)
    out[REPLICATE] = np.tile(np.arange(replicates, dtype=np.int64), len(rows))
    out = pd.concat([out, outcomes], axis=1)
    return SimulationResult(out, names, tuple(outcomes.columns), replicates, seed)


def _plain(v):
    """A setting value as a plain Python scalar (numpy scalars become int/float/bool)."""
    return v.item() if isinstance(v, np.generic) else v
