"""How a simulation study's runs are executed: ranges of runs, serially or on Dask.

Run ``k`` of a study is replicate ``k % replicates`` of setting
``k // replicates`` and draws from its own stream
(:func:`replicate_generator`), so any grouping of runs into tasks gives the
same outcomes.  Serially, a task is what runs in about
:data:`SERIAL_TASK_SECONDS`; on Dask, a pilot of a few runs measures their
cost and :func:`dask_batch_size` sizes the tasks so that Dask's overhead per
task is amortised and the workers stay balanced.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping

import numpy as np

from .._validation import format_value
from ..exceptions import InvariantDPError

__all__ = [
    "DASK_TASK_SECONDS",
    "MAX_TASKS",
    "PILOT_RUNS",
    "PILOT_SECONDS",
    "REPLICATE",
    "SERIAL_TASK_SECONDS",
    "TASKS_PER_WORKER",
    "dask_batch_size",
    "dask_workers",
    "pilot",
    "replicate_generator",
    "run_dask",
    "run_range",
    "run_serial",
]

#: the column that numbers the replicates of a setting
REPLICATE = "replicate"


def _outcome(value, where: str, settings: Mapping) -> dict:
    """One run's outcomes as ``{name: scalar}``; a bare scalar is named ``value``."""
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
        if not isinstance(k, str) or k == REPLICATE or k in settings:
            raise InvariantDPError(
                f"{where}: outcome names must be strings other than {REPLICATE!r} and the "
                f"setting names {tuple(settings)}, got {k!r}."
            )
        out[k] = v
    if not out:
        raise InvariantDPError(f"{where}: `func` returned no outcome (an empty mapping).")
    return out


def replicate_generator(seed: int, setting: int, replicate: int) -> np.random.Generator:
    """The generator of replicate ``replicate`` of setting number ``setting``.

    Equal to ``default_rng(SeedSequence(seed).spawn(n)[setting].spawn(m)[replicate])``
    for any ``n > setting`` and ``m > replicate``.
    """
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(setting, replicate)))


def run_range(func, rows, first, replicates, seed, start, stop, tick=None) -> list[dict]:
    """The outcomes of runs ``start .. stop - 1``; ``rows[i - first]`` is setting ``i``."""
    out = []
    for k in range(start, stop):
        i, r = divmod(k, replicates)
        setting = rows[i - first]
        try:
            value = func(replicate_generator(seed, i, r), **setting)
        except Exception as exc:
            exc.add_note(f"in simulate: setting {i} {setting}, replicate {r}")
            raise
        out.append(_outcome(value, f"setting {i}, replicate {r}", setting))
        if tick is not None:
            tick(1)
    return out


#: serial runs are written to the store about this often (with ``batch_size=None``)
SERIAL_TASK_SECONDS = 1.0
#: a Dask task should last about this long, so that its overhead (~5 ms) costs ~1%
DASK_TASK_SECONDS = 0.5
#: at least this many tasks per Dask worker when there are runs enough (load balance)
TASKS_PER_WORKER = 4
#: and at most about this many tasks (a Parquet file each in the store)
MAX_TASKS = 1000
#: the pilot times at most this many runs, and stops after PILOT_SECONDS
PILOT_RUNS = 8
PILOT_SECONDS = 0.25


def dask_batch_size(seconds_per_run: float, runs: int, workers: int) -> int:
    """Runs per Dask task: about :data:`DASK_TASK_SECONDS` of work, balanced over the workers.

    At most ``runs / (TASKS_PER_WORKER * workers)`` so that every worker gets
    several tasks (runs of different settings differ in cost), and at least
    ``runs / MAX_TASKS``.

    Examples
    --------
    >>> dask_batch_size(1e-3, 400, 2)  # 0.5 s of 1 ms runs, capped by 4 tasks per worker
    50
    >>> dask_batch_size(2.0, 400, 2)  # slow runs: one per task
    1
    """
    by_time = math.ceil(DASK_TASK_SECONDS / max(seconds_per_run, 1e-9))
    by_count = math.ceil(runs / MAX_TASKS)
    balance = math.ceil(runs / (TASKS_PER_WORKER * workers))
    return max(1, min(max(by_time, by_count), balance))


def pilot(run_one, todo, on_result) -> float:
    """Median seconds per run, from up to :data:`PILOT_RUNS` runs spread over ``todo``.

    The runs are taken evenly from the remaining ones (settings differ in
    cost), kept as tasks of one run each, and stopped once they have taken
    :data:`PILOT_SECONDS`.
    """
    offsets = np.cumsum([0] + [b - a for a, b in todo])
    m = min(PILOT_RUNS, int(offsets[-1]))
    times: list[float] = []
    for j in range(m):
        pos = j * int(offsets[-1]) // m
        g = int(np.searchsorted(offsets, pos, side="right")) - 1
        k = todo[g][0] + pos - int(offsets[g])
        t0 = time.perf_counter()
        outcome = run_one(k)
        times.append(time.perf_counter() - t0)
        on_result(k, k + 1, [outcome])
        if sum(times) >= PILOT_SECONDS:
            break
    return float(np.median(times))


def run_serial(run_one, todo, batch_size, on_result, bar) -> None:
    """Every run of ``todo`` in this process, handed on in tasks (for the store).

    A task closes after ``batch_size`` runs, or, without one, after
    :data:`SERIAL_TASK_SECONDS`; the bar counts every run.
    """
    for start, stop in todo:
        lo = start
        while lo < stop:
            t0 = time.monotonic()
            outcomes = []
            k = lo
            while k < stop:
                outcomes.append(run_one(k))
                k += 1
                bar.update(1)
                if batch_size is None:
                    if time.monotonic() - t0 >= SERIAL_TASK_SECONDS:
                        break
                elif k - lo >= batch_size:
                    break
            on_result(lo, k, outcomes)
            lo = k


def run_dask(job, tasks, client, n_workers, on_result, bar) -> None:
    """The ``tasks`` on a Dask cluster (``client``, or a local one of ``n_workers``)."""
    from dask.distributed import Client, LocalCluster, as_completed

    func, rows, replicates, seed = job
    own = client is None
    if own:
        cluster = LocalCluster(
            n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
    try:
        # a unique key (hash=False): a key shared with an earlier study on the same client
        # can be released by it while this study still needs it
        remote = client.scatter(func, broadcast=True, hash=False)
        futures = {}
        for start, stop in tasks:
            first, last = start // replicates, (stop - 1) // replicates
            fut = client.submit(
                run_range,
                remote,
                rows[first : last + 1],
                first,
                replicates,
                seed,
                start,
                stop,
                pure=False,
            )
            futures[fut] = (start, stop)
        for fut in as_completed(futures):
            start, stop = futures[fut]
            on_result(start, stop, fut.result())
            bar.update(stop - start)
    finally:
        if own:
            client.close()
            cluster.close()


def dask_workers(client, n_workers) -> int:
    """Check ``client`` and return the number of worker threads the study will use."""
    try:
        from dask.distributed import Client
    except ImportError:
        raise ImportError(
            "scheduler='dask' needs dask.distributed: pip install 'invariantdp[simulate]'."
        ) from None
    if client is None:
        return n_workers
    if not isinstance(client, Client):
        raise TypeError(f"`client` must be a dask.distributed.Client, got {type(client).__name__}.")
    return max(1, sum(client.nthreads().values()))
