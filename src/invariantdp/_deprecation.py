"""Renamed keyword arguments and attributes that keep their old names for one release.

A public rename keeps the old spelling working, with a ``DeprecationWarning``
that names the new one, until the next release removes it.  The CHANGELOG
lists every rename under "Deprecated".
"""

from __future__ import annotations

import functools
import warnings

__all__ = ["moved_function", "renamed_attribute", "renamed_keywords"]


def _message(kind: str, old: str, new: str, where: str) -> str:
    return (
        f"the {kind} `{old}` of {where} is deprecated and will be removed in the next "
        f"release; use `{new}`."
    )


def renamed_keywords(**renames: str):
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

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            for old, new in renames.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise TypeError(
                        f"{where} got both `{old}` (deprecated) and `{new}`; pass `{new}` only."
                    )
                warnings.warn(
                    _message("argument", old, new, where), DeprecationWarning, stacklevel=2
                )
                kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        return wrapper

    return decorate


def renamed_attribute(old: str, new: str, owner: str) -> property:
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

    def fget(self):
        warnings.warn(_message("attribute", old, new, owner), DeprecationWarning, stacklevel=2)
        return getattr(self, new)

    return property(fget, doc=f"Deprecated alias of ``{new}``.")


def moved_function(func, old: str):
    """The function ``func`` under its old public path ``old``, warning on every call.

    Examples
    --------
    >>> import warnings
    >>> def area(r):
    ...     return 3 * r * r
    >>> old_area = moved_function(area, "geometry.old_area")
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     old_area(2), str(w[0].message).split(";")[0]
    (12, 'geometry.old_area is deprecated and will be removed in the next release')
    """
    new = f"{func.__module__}.{func.__qualname__}"

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        warnings.warn(
            f"{old} is deprecated and will be removed in the next release; use {new}.",
            DeprecationWarning,
            stacklevel=2,
        )
        return func(*args, **kwargs)

    wrapper.__doc__ = f"Deprecated alias of :func:`{new}` (moved there).\n\n" + (func.__doc__ or "")
    return wrapper
