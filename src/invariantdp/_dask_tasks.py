"""Dask tasks for the GLS engine and the census files: which scheduler, and running jobs."""

from __future__ import annotations

from .exceptions import InvariantDPError

__all__ = ["check_scheduler", "client_of", "run_tasks"]


def check_scheduler(scheduler) -> None:
    """Refuse anything but None, ``"dask"`` or a dask.distributed Client, before any work."""
    if scheduler is None or (isinstance(scheduler, str) and scheduler == "dask"):
        return
    if hasattr(scheduler, "submit") and hasattr(scheduler, "gather"):
        return
    raise InvariantDPError(
        f"`scheduler` ({scheduler!r}) must be None, 'dask' or a dask.distributed Client."
    )


def client_of(scheduler):
    """The distributed client to use, or None for dask's local (threaded) scheduler."""
    if not isinstance(scheduler, str):
        return scheduler
    try:
        from distributed import default_client

        return default_client()
    except (ImportError, ValueError):
        return None


def run_tasks(fn, jobs: list, scheduler) -> list:
    """``[fn(*job) for job in jobs]`` as Dask tasks, results gathered in order."""
    check_scheduler(scheduler)
    try:
        import dask
    except ImportError as exc:  # pragma: no cover - dask is in the census extra
        raise ImportError(
            "`scheduler='dask'` needs dask: pip install 'invariantdp[census]'."
        ) from exc
    client = client_of(scheduler)
    if client is None:
        return list(dask.compute(*[dask.delayed(fn, pure=False)(*job) for job in jobs]))
    return client.gather([client.submit(fn, *job, pure=False) for job in jobs])
