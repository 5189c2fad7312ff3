"""Deprecations: old names, arguments and module paths that keep working until a stated release.

Every public rename or move keeps the old spelling working for one release,
with a ``DeprecationWarning`` that names the replacement and the release that
removes it.  All of them go through :func:`deprecated`, which records each one
in a registry: ``tests/test_deprecation.py`` fails once the package's version
reaches a deprecation's ``removed_in``, so that nothing outlives its notice.
The CHANGELOG lists every deprecation under "Deprecated".

The shapes a deprecation takes, each built on :func:`deprecated`:

* :func:`renamed_keywords` -- keyword arguments under their old names;
* :func:`deprecated_property` / :func:`renamed_attribute` -- attributes;
* :func:`moved_function` -- a function kept under its old name;
* :func:`moved_names` -- a module's ``__getattr__`` for old names;
* :func:`old_module` -- the ``__getattr__`` of a short module kept at a public
  module path that shipped in a release and has moved since (as scipy keeps
  ``scipy/stats/morestats.py``): the file holds nothing but that line.

Only paths that shipped in a release are kept (the releases are tagged in
git, ``v0.1.0``, ...); private module paths and paths that never shipped are
not.  The registry is, with the noise-family registry of
:mod:`invariantdp.families`, the package's only global state.
"""

from __future__ import annotations

import functools
import importlib
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = [
    "NEXT_RELEASE",
    "Deprecation",
    "deprecated",
    "deprecated_property",
    "deprecations",
    "moved_function",
    "moved_names",
    "old_module",
    "release_tuple",
    "renamed_attribute",
    "renamed_keywords",
]

#: the release that removes what the current one deprecates
NEXT_RELEASE = "0.3.0"


def release_tuple(version: str) -> tuple[int, int, int]:
    """``"0.2.0.dev0"`` -> ``(0, 2, 0)``: the release a version string belongs to."""
    if not version[:1].isdigit():
        raise ValueError(f"`version` ({version!r}) must start with a release number, e.g. 0.3.0.")
    parts = []
    for piece in version.split(".")[:3]:
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        parts.append(int(digits or 0))
    while len(parts) < 3:
        parts.append(0)
    return tuple(parts)


@dataclass(frozen=True)
class Deprecation:
    """One deprecated spelling: what it was, what to use, and when it goes.

    Attributes
    ----------
    old : str
        The old spelling, with where it lives (``"invariantdp.privacy.gaussian"``,
        ``"the argument `n_draws` of conditional_release()"``).
    new : str
        What to use instead.
    removed_in : str
        The release that removes the old spelling.
    """

    old: str
    new: str
    removed_in: str

    def message(self) -> str:
        return (
            f"{self.old} is deprecated and will be removed in invariantdp {self.removed_in}; "
            f"use {self.new}."
        )

    def warn(self, stacklevel: int = 2) -> None:
        """Issue the ``DeprecationWarning``, ``stacklevel`` counted from the caller."""
        warnings.warn(self.message(), DeprecationWarning, stacklevel=stacklevel + 1)


_REGISTRY: dict[str, Deprecation] = {}


def deprecated(old: str, new: str, *, removed_in: str = NEXT_RELEASE) -> Deprecation:
    """Record that ``old`` is deprecated in favour of ``new`` until ``removed_in``.

    Examples
    --------
    >>> d = deprecated("geometry.old_area", "geometry.area", removed_in="9.0.0")
    >>> d.message()
    'geometry.old_area is deprecated and will be removed in invariantdp 9.0.0; use geometry.area.'
    """
    release_tuple(removed_in)  # a malformed version fails at import, not at removal
    dep = Deprecation(old, new, removed_in)
    _REGISTRY[old] = dep
    return dep


def deprecations() -> tuple[Deprecation, ...]:
    """Every deprecation recorded by the modules imported so far."""
    return tuple(_REGISTRY.values())


def renamed_keywords(*, removed_in: str = NEXT_RELEASE, **renames: str):
    """Decorator: accept the keyword arguments ``old=new`` under their old names.

    A call with an old name warns (``DeprecationWarning``, pointing at the
    caller) and passes the value on under the new name; a call with both
    names raises ``TypeError`` before any work.

    Examples
    --------
    >>> import warnings
    >>> @renamed_keywords(n_draws="draws")
    ... def f(*, draws=1):
    ...     return draws
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     f(n_draws=5), w[0].category.__name__
    (5, 'DeprecationWarning')
    """

    def decorate(func):
        where = f"{func.__name__}()"
        deps = {
            old: deprecated(f"the argument `{old}` of {where}", f"`{new}`", removed_in=removed_in)
            for old, new in renames.items()
        }

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            for old, new in renames.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise TypeError(
                        f"{where} got both `{old}` (deprecated) and `{new}`; pass `{new}` only."
                    )
                deps[old].warn()
                kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        return wrapper

    return decorate


def deprecated_property(
    getter: Callable, old: str, new: str, *, removed_in: str = NEXT_RELEASE
) -> property:
    """A read-only property that warns and returns ``getter(self)``.

    ``old`` names the attribute with its owner (``"`SwapResult.release`"``),
    ``new`` says what to use.
    """
    dep = deprecated(old, new, removed_in=removed_in)

    def fget(self):
        dep.warn()
        return getter(self)

    return property(fget, doc=f"Deprecated: use {new}.")


def renamed_attribute(old: str, new: str, owner: str, *, removed_in: str = NEXT_RELEASE):
    """A read-only property ``old`` that warns and returns the attribute ``new``.

    Examples
    --------
    >>> import warnings
    >>> class Result:
    ...     draws = 10
    ...     n_draws = renamed_attribute("n_draws", "draws", "Result")
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     Result().n_draws
    10
    """
    return deprecated_property(
        lambda self: getattr(self, new),
        f"the attribute `{old}` of {owner}",
        f"`{new}`",
        removed_in=removed_in,
    )


def _path(obj) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"


def moved_function(func, old: str, *, removed_in: str = NEXT_RELEASE):
    """The function ``func`` under its old public path ``old``, warning on every call.

    Examples
    --------
    >>> import warnings
    >>> def area(r):
    ...     return 3 * r * r
    >>> old_area = moved_function(area, "geometry.old_area", removed_in="9.0.0")
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     old_area(2), str(w[0].message).split(";")[0]
    (12, 'geometry.old_area is deprecated and will be removed in invariantdp 9.0.0')
    """
    dep = deprecated(old, _path(func), removed_in=removed_in)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        dep.warn()
        return func(*args, **kwargs)

    wrapper.__doc__ = f"Deprecated alias of :func:`{dep.new}`.\n\n" + (func.__doc__ or "")
    return wrapper


def moved_names(module: str, names: Mapping[str, object], *, removed_in: str = NEXT_RELEASE):
    """A module ``__getattr__`` that keeps old names for one release.

    ``names`` maps each old name to its object, or to the dotted path of an
    object (``"invariantdp.census.topdown_privacy_accounting"``) that lives
    above the module and is imported only when asked for.  Reading an old name
    warns and gives the object; any other name raises ``AttributeError``.

    Examples
    --------
    >>> import warnings
    >>> getattr_ = moved_names("geometry", {"old_abs": "builtins.abs"}, removed_in="9.0.0")
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     getattr_("old_abs") is abs, w[0].category.__name__
    (True, 'DeprecationWarning')
    """
    deps = {
        old: deprecated(
            f"{module}.{old}", obj if isinstance(obj, str) else _path(obj), removed_in=removed_in
        )
        for old, obj in names.items()
    }

    def __getattr__(name):
        if name in deps:
            obj = names[name]
            if isinstance(obj, str):
                where, _, attr = obj.rpartition(".")
                obj = getattr(importlib.import_module(where), attr)
            deps[name].warn()
            return obj
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__


def old_module(old: str, module: str, *, removed_in: str = NEXT_RELEASE):
    """``(__getattr__, __dir__)`` of the module kept at the released path ``old``.

    ``module`` is where the code lives now.  Reading a name from ``old``
    (``from old import x``, ``old.x``, or a pickle that names ``old.x``)
    warns and gives ``x`` of ``module``, or, for a name that has moved on
    again, of its public home (``module`` up to its first private part; a name
    deprecated there warns with its own message).  Importing ``old`` does not
    warn: nothing is read.

    Examples
    --------
    >>> import warnings
    >>> getattr_, dir_ = old_module("geometry.old", "math", removed_in="9.0.0")
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     getattr_("sqrt")(4.0), str(w[0].message).split(";")[0]
    (2.0, 'the module geometry.old is deprecated and will be removed in invariantdp 9.0.0')
    >>> "sqrt" in dir_()
    True
    """
    parts = module.split(".")
    home = ".".join(parts[: next((i for i, p in enumerate(parts) if p.startswith("_")), None)])
    dep = deprecated(f"the module {old}", home, removed_in=removed_in)

    def __getattr__(name):
        if not name.startswith("__"):
            for where in dict.fromkeys((module, home)):
                # a name deprecated again at its home says so itself: one warning, the precise one
                with warnings.catch_warnings(record=True) as seen:
                    warnings.simplefilter("always", DeprecationWarning)
                    try:
                        obj = getattr(importlib.import_module(where), name)
                    except AttributeError:
                        continue
                again = [w for w in seen if issubclass(w.category, DeprecationWarning)]
                if again:
                    warnings.warn(again[0].message, DeprecationWarning, stacklevel=2)
                else:
                    dep.warn()
                return obj
        raise AttributeError(f"module {old!r} has no attribute {name!r}")

    def __dir__():
        return sorted(n for n in dir(importlib.import_module(module)) if not n.startswith("__"))

    return __getattr__, __dir__
