"""The one Dask convention of the package: ``scheduler="serial" | "dask"`` and ``client=``.

Every function that can run on Dask (:func:`invariantdp.simulate.simulate`,
:func:`invariantdp.census.gls`, :func:`invariantdp.census.read_nmf`) takes
``scheduler="serial"`` (the default: in this process) or ``"dask"``, and
``client``, a ``dask.distributed.Client`` to use with ``"dask"``.  Without
a client each function says what ``"dask"`` uses (a local cluster for a
simulation study, the running client or dask's threads for the census).
"""

from __future__ import annotations

from .exceptions import InvariantDPError

__all__ = ["check_scheduler", "client_of", "run_tasks"]


def check_scheduler(scheduler, client) -> None:
    """Refuse a scheduler other than ``"serial"`` or ``"dask"``, and a misplaced client.

    Examples
    --------
    >>> check_scheduler("serial", None)
    >>> check_scheduler("spark", None)
    Traceback (most recent call last):
    ...
    invariantdp.exceptions.InvariantDPError: `scheduler` ('spark') must be 'serial' or 'dask'.
    """
    if not (isinstance(scheduler, str) and scheduler in ("serial", "dask")):
        raise InvariantDPError(f"`scheduler` ({scheduler!r}) must be 'serial' or 'dask'.")
    if client is None:
        return
    if scheduler == "serial":
        raise InvariantDPError("`client` applies to scheduler='dask' only.")
    if not (hasattr(client, "submit") and hasattr(client, "gather")):
        raise TypeError(f"`client` must be a dask.distributed.Client, got {type(client).__name__}.")


def client_of(client):
    """The client to use: ``client``, the running one, or None (dask's local threads)."""
    if client is not None:
        return client
    try:
        from distributed import default_client

        return default_client()
    except (ImportError, ValueError):
        return None


def run_tasks(fn, jobs: list, client) -> list:
    """``[fn(*job) for job in jobs]`` as Dask tasks on ``client_of(client)``, in order."""
    try:
        import dask
    except ImportError as exc:  # pragma: no cover - dask is in the census extra
        raise ImportError(
            "`scheduler='dask'` needs dask: pip install 'invariantdp[census]'."
        ) from exc
    client = client_of(client)
    if client is None:
        return list(dask.compute(*[dask.delayed(fn, pure=False)(*job) for job in jobs]))
    return client.gather([client.submit(fn, *job, pure=False) for job in jobs])
