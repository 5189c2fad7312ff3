"""Immutable JSON-like containers, for the data a release or a shared cache hands out.

:func:`freeze` makes a deep read-only copy (:class:`FrozenDict`,
:class:`FrozenList`, read-only arrays), :func:`thaw` a plain mutable one.
"""

from __future__ import annotations

import copy

import numpy as np

from ..exceptions import InvariantDPError


def _read_only(*_args, **_kwargs):
    raise TypeError("this object is read-only: it belongs to a release or a shared cache.")


class FrozenDict(dict):
    """A ``dict`` that refuses mutation (JSON-serialisable, picklable, deep-copyable)."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only

    def __reduce__(self):
        return (type(self), (dict(self),))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return type(self)(copy.deepcopy(dict(self), memo))


class FrozenList(list):
    """A ``list`` that refuses mutation (JSON-serialisable, picklable, deep-copyable)."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only
    append = extend = insert = pop = remove = clear = sort = reverse = _read_only

    def __reduce__(self):
        return (type(self), (list(self),))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return type(self)(copy.deepcopy(list(self), memo))


class LabelArray:
    """A read-only array of labels that stands for the list of them in a document.

    A census structure holds millions of labels per level; listing them as
    Python objects costs more than the release itself.  The cached document
    keeps the array, compares equal to the list it stands for, and
    :func:`thaw` (``to_dict``, JSON) makes the list only when a document is
    written.
    """

    __slots__ = ("array",)

    def __init__(self, array, *, copy: bool = True):
        # copy=False only for an array the package already holds privately and
        # read-only (a structure's own labels): the caller must not keep a writable view
        a = np.array(array, copy=True) if copy else np.asarray(array)
        a.setflags(write=False)
        self.array = a

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, i):
        out = self.array[i]
        return out.tolist() if isinstance(out, np.ndarray | np.generic) else out

    def __iter__(self):
        return iter(self.array.tolist())

    def __array__(self, dtype=None, copy=None):
        if copy is False and dtype not in (None, self.array.dtype):
            raise ValueError("a LabelArray cannot change dtype without a copy")
        if copy or (dtype is not None and dtype != self.array.dtype):
            return np.array(self.array, dtype=dtype, copy=True)
        return self.array  # read-only: sharing it cannot change the labels

    def __eq__(self, other) -> bool:
        if isinstance(other, LabelArray):
            other = other.array
        elif not isinstance(other, list | tuple | np.ndarray):
            return NotImplemented
        b = np.asarray(other)
        if b.shape != self.array.shape or (b.dtype.kind == "U") != (self.array.dtype.kind == "U"):
            return False
        return bool(np.array_equal(self.array, b))

    __hash__ = None

    def __reduce__(self):
        return (LabelArray, (self.array,))  # unpickled arrays are fresh: the copy is harmless

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __repr__(self) -> str:
        return f"LabelArray({self.array.size} labels, dtype={self.array.dtype})"


class _FrozenScalars(FrozenList):
    """A :class:`FrozenList` known to hold only scalars, so it is never scanned again.

    Label arrays of a census release hold millions of entries; a release
    freezes and thaws them several times, and the type scan is what costs.
    """

    __slots__ = ()

    def __reduce__(self):
        return (FrozenList, (list(self),))


def freeze(obj, _depth: int = 0):
    """A deep, immutable copy of a JSON-like object.

    Dicts become :class:`FrozenDict`, lists and tuples :class:`FrozenList`,
    arrays read-only copies, numpy scalars Python scalars; strings and
    numbers are kept.  Used for the parameters and metadata of a release and
    for cached structures, so that nothing handed out can be changed behind
    the owner's back.
    """
    if _depth > 100:
        raise InvariantDPError("a release field is nested more than 100 levels deep.")
    if isinstance(obj, FrozenDict | FrozenList | LabelArray):
        return obj
    if isinstance(obj, dict):
        return FrozenDict({k: freeze(v, _depth + 1) for k, v in obj.items()})
    if isinstance(obj, list | tuple):
        if _only_scalars(obj):  # the common long case (labels, data): one C-level copy
            return _FrozenScalars(obj)
        return FrozenList(freeze(v, _depth + 1) for v in obj)
    if isinstance(obj, np.ndarray):
        out = np.array(obj, copy=True)
        out.setflags(write=False)
        return out
    if isinstance(obj, np.generic) and obj.dtype.kind in "biuf":
        return obj.item()
    return obj


def thaw(obj):
    """A plain, mutable deep copy of a :func:`freeze` result (dicts and lists)."""
    if isinstance(obj, dict):
        return {k: thaw(v) for k, v in obj.items()}
    if isinstance(obj, _FrozenScalars) or (isinstance(obj, list) and _only_scalars(obj)):
        return list(obj)
    if isinstance(obj, list):
        return [thaw(v) for v in obj]
    if isinstance(obj, LabelArray):
        return obj.array.tolist()
    return obj


_SCALAR_TYPES = (str, int, float, type(None))


def _only_scalars(seq) -> bool:
    """True if every entry is a str, int, float, bool or None (checked by type set)."""
    return all(issubclass(t, _SCALAR_TYPES) for t in set(map(type, seq)))
