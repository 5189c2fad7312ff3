"""Writing files safely from the command line: never over an input, atomically, cleaned up.

Split from :mod:`._common` (its other half reads and checks arguments); the
names are re-exported there.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import signal
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from ..exceptions import InvariantDPError
from ._messages import short

__all__ = ["check_output", "removed_on_signal", "write_atomic"]


def _same_file(a: Path, b: Path) -> bool:
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist: they cannot be the same file
        return False


def check_output(
    path, *, inputs: Iterable = (), force: bool = False, option: str = "--output"
) -> Path:
    """Validate a destination before any work is done; return it as a ``Path``.

    Parameters
    ----------
    path : str or path-like
        The destination.
    inputs : iterable of (str, path) pairs
        The files the destination must not be, named as the user knows them
        (the command's inputs such as ``"table"`` or ``"--invariants"``, and
        its other outputs); a ``None`` path is skipped.
    force : bool
        Allow replacing an existing file (never an input).
    option : str
        How the destination is named in messages.

    Raises
    ------
    InvariantDPError
        If the path is empty, names a directory or another non-regular file
        (a device, a FIFO), has no existing directory, is one of the
        ``inputs``, or exists without ``force``.
    """
    text = os.fspath(path)
    if not text.strip():
        raise InvariantDPError(f"`{option}` ({short(text)}) must be a file path; got an empty one.")
    p = Path(text)
    if text.endswith(("/", os.sep)) or p.is_dir():
        raise InvariantDPError(f"`{option}` ({short(text)}) is a directory; give a file path.")
    parent = p.parent
    if not parent.is_dir():
        raise InvariantDPError(
            f"`{option}` ({short(text)}) must be in an existing directory; "
            f"{short(str(parent))} is not one."
        )
    for name, src in inputs:
        if src is not None and _same_file(p, Path(src)):
            raise InvariantDPError(
                f"`{option}` ({short(text)}) is the same file as `{name}` "
                f"({short(os.fspath(src))}): refusing to write over it."
            )
    if p.exists() and not p.is_file():
        # A device or FIFO (``/dev/null``) would be replaced by a regular file.
        raise InvariantDPError(f"`{option}` ({short(text)}) is not a regular file.")
    if (p.exists() or p.is_symlink()) and not force:
        raise InvariantDPError(f"`{option}` ({short(text)}) exists; pass --force to replace it.")
    return p


def _new_file_mode() -> int:
    # os.umask can only be read by setting it; restore it at once (the command
    # line is single-threaded while it writes).
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def removed_on_signal(remove, what: str):
    """Call ``remove()`` on SIGTERM/SIGINT, then re-deliver the signal.

    ``remove`` deletes what a command was writing (a temporary file, a
    directory); ``what`` names it in the message.  The handler removes it,
    restores the previous handlers and raises the signal again, so it has its
    usual effect (termination for SIGTERM, ``KeyboardInterrupt`` for SIGINT).
    Signals the process ignores, or handles outside Python, are left alone.
    Handlers can only be set from the main thread; elsewhere the ordinary
    ``except``/``finally`` clean-up is all there is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {}

    def handler(signum, frame):
        with contextlib.suppress(OSError):
            remove()
        for s, h in previous.items():
            signal.signal(s, h)
        signal.raise_signal(signum)
        # The previous disposition returned instead of ending the process.
        raise InterruptedError(f"interrupted by signal {signum} while writing; {what} was removed")

    for s in (signal.SIGTERM, signal.SIGINT):
        old = signal.getsignal(s)
        # None: a handler installed outside Python, which cannot be restored.
        if old is not None and old is not signal.SIG_IGN:
            previous[s] = old
            signal.signal(s, handler)
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def write_atomic(
    path,
    content: str | bytes | Callable,
    *,
    inputs: Iterable = (),
    force: bool = False,
    option: str = "--output",
) -> Path:
    """Write ``content`` to ``path`` atomically, with the checks of :func:`check_output`.

    Parameters
    ----------
    path : str or path-like
        Destination.
    content : str, bytes or callable
        Text (written as UTF-8), bytes, or a function ``write(fh)`` that writes
        to a binary file object.
    inputs, force, option
        As in :func:`check_output` (checked again here, just before writing).

    Returns
    -------
    pathlib.Path
        The destination.

    Notes
    -----
    Without ``force`` the finished file is put in place with a hard link,
    which fails if the destination appeared in the meantime, so an existing
    file is never replaced; on file systems without hard links the check is
    repeated just before the rename.
    """
    inputs = list(inputs)
    p = check_output(path, inputs=inputs, force=force, option=option)
    holder: list = []
    with removed_on_signal(lambda: holder and os.unlink(holder[0]), "the temporary file"):
        try:
            while True:
                # The name is recorded before the file exists, so a signal
                # arriving at any point finds it.
                tmp = p.parent / f".{p.name}.{secrets.token_hex(6)}.tmp"
                holder[:] = [tmp]
                try:
                    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                except FileExistsError:
                    continue
                break
            with os.fdopen(fd, "wb") as fh:
                os.fchmod(fh.fileno(), _new_file_mode())
                if callable(content):
                    content(fh)
                else:
                    fh.write(content.encode("utf-8") if isinstance(content, str) else content)
                fh.flush()
                os.fsync(fh.fileno())
            _place(tmp, p, force=force, option=option)
        except BaseException:
            with contextlib.suppress(OSError):
                if holder:
                    os.unlink(holder[0])
            raise
        finally:
            if holder:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(holder[0])
                holder.clear()
    return p


def _place(tmp: Path, dst: Path, *, force: bool, option: str) -> None:
    if force:
        os.replace(tmp, dst)
        return
    try:
        os.link(tmp, dst)
    except FileExistsError:
        raise InvariantDPError(
            f"`{option}` ({short(str(dst))}) appeared while writing; pass --force to replace it."
        ) from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EMLINK):
            raise
        if dst.exists() or dst.is_symlink():
            raise InvariantDPError(
                f"`{option}` ({short(str(dst))}) appeared while writing; pass --force to "
                "replace it."
            ) from None
        os.replace(tmp, dst)
