"""Bounded caches of pure results: the package's one way to remember a computation.

A result is cached here only when it depends on nothing but its key (public
parameters: a sampler's plan for ``(epsilon, n)``, the hull of a sensitivity
space, a calibration), so a cache changes how fast the package answers,
never what it answers: it is not state.  Every cache is a
:class:`BoundedCache` (or a function wrapped by :func:`bounded_cache`), holds
at most ``maxsize`` entries and drops the least recently used one beyond; all
of them are listed by :func:`caches` and emptied by :func:`clear_caches`.

The package's only global *state* is the noise-family registry
(:func:`invariantdp.families.register_noise_family`, which users extend) and
the deprecation registry (:mod:`invariantdp._deprecation`); the mechanism
registry of :mod:`invariantdp.mechanisms` is a fixed table.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable

__all__ = ["BoundedCache", "bounded_cache", "caches", "clear_caches"]

_ALL: weakref.WeakSet = weakref.WeakSet()


class BoundedCache:
    """A least-recently-used cache of at most ``maxsize`` results of pure computations.

    Parameters
    ----------
    name : str
        What it holds (shown by :func:`caches`).
    maxsize : int
        Entries kept; the least recently used is dropped beyond.

    Examples
    --------
    >>> c = BoundedCache("squares (example)", maxsize=2)
    >>> c.get(3, lambda: 3 * 3), c.get(3, lambda: 0)  # the second is remembered
    (9, 9)
    >>> _ = c.get(4, lambda: 16); _ = c.get(5, lambda: 25)
    >>> len(c), 3 in c  # 3 was the least recently used
    (2, False)
    """

    def __init__(self, name: str, maxsize: int):
        if not isinstance(maxsize, int) or maxsize < 1:
            raise ValueError(f"`maxsize` ({maxsize!r}) must be an integer >= 1.")
        self.name = name
        self.maxsize = maxsize
        self._data: OrderedDict = OrderedDict()
        self._lock = threading.Lock()
        _ALL.add(self)

    def get(self, key: Hashable, build: Callable[[], object]):
        """The result for ``key``, computed by ``build()`` the first time it is asked for."""
        with self._lock:
            try:
                value = self._data[key]
            except KeyError:
                pass
            else:
                self._data.move_to_end(key)
                return value
        value = build()  # outside the lock: a build may use other caches
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.maxsize:
                self._data.popitem(last=False)
        return value

    def items(self) -> list:
        """The ``(key, result)`` pairs held now (a snapshot)."""
        with self._lock:
            return list(self._data.items())

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __contains__(self, key) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"BoundedCache({self.name!r}, {len(self)}/{self.maxsize})"


def bounded_cache(maxsize: int):
    """Decorator: remember the results of a pure function of hashable arguments.

    The wrapped function keeps its signature; its :class:`BoundedCache` is
    its ``cache`` attribute.  Arguments that compare equal share an entry
    (``1`` and ``1.0``), as in :func:`functools.lru_cache`.

    Examples
    --------
    >>> @bounded_cache(maxsize=8)
    ... def cube(x):
    ...     return x**3
    >>> cube(2), len(cube.cache)
    (8, 1)
    """

    def decorate(func):
        cache = BoundedCache(f"{func.__module__}.{func.__qualname__}", maxsize)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            key = args if not kwargs else (args, tuple(sorted(kwargs.items())))
            return cache.get(key, lambda: func(*args, **kwargs))

        wrapper.cache = cache
        return wrapper

    return decorate


def caches() -> tuple[BoundedCache, ...]:
    """Every cache alive (those of the modules imported so far), by name."""
    return tuple(sorted(_ALL, key=lambda c: c.name))


def clear_caches() -> None:
    """Empty every cache (results are recomputed on demand; nothing else changes)."""
    for cache in list(_ALL):
        cache.clear()
