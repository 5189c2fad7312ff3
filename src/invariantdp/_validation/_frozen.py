"""Immutable JSON-like containers, for the data a release or a shared cache hands out.

:func:`freeze` makes a deep read-only copy (:class:`FrozenDict`,
:class:`FrozenList`, read-only arrays), :func:`thaw` a plain mutable one.
"""

from __future__ import annotations

import copy
import math

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
    """A read-only array that stands for the (nested) list of its entries in a document.

    A census structure holds millions of labels per level, and a swap release
    a label per category and a code per cell; listing them as Python objects
    costs more than the release itself.  A frozen document keeps the array,
    which compares equal to the list it stands for, and :func:`thaw`
    (``to_dict``, JSON) makes the list only when a document is written.
    ``array.tolist()`` is that list: a 2-D array stands for a list of rows.

    :meth:`expand` stands for ``values[codes]`` (the label of every cell
    from the label of its group) and forms that array only when it is first
    read, so that a structure built from group codes holds no per-cell copy
    of its labels until a document is written.
    """

    __slots__ = ("_array", "_values", "_codes")

    def __init__(self, array, *, copy: bool = True):
        # copy=False only for an array the package already holds privately and
        # read-only (a structure's own labels): the caller must not keep a writable view
        a = np.array(array, copy=True) if copy else np.asarray(array)
        a.setflags(write=False)
        self._array = a
        self._values = self._codes = None

    @classmethod
    def expand(cls, values, codes) -> LabelArray:
        """The labels ``values[codes]``, formed when first read.

        ``values`` (one label per group) is copied; ``codes`` (the group of
        every entry, any shape) is kept if it is read-only already (the
        package's own codes, shared with the structure), copied otherwise.
        """
        v = np.array(values, copy=True)
        c = np.asarray(codes)
        if c.flags.writeable:
            c = c.copy()
        return _expanded(v, c)

    @property
    def array(self) -> np.ndarray:
        """The entries as a read-only array (formed now if it was given by :meth:`expand`)."""
        if self._array is None:
            a = self._values[self._codes]
            a.setflags(write=False)
            self._array = a  # the same array whichever thread forms it first
        return self._array

    @property
    def shape(self) -> tuple[int, ...]:
        return (self._codes if self._array is None else self._array).shape

    @property
    def dtype(self) -> np.dtype:
        return (self._values if self._array is None else self._array).dtype

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, i):
        out = self.array[i]
        return out.tolist() if isinstance(out, np.ndarray | np.generic) else out

    def __iter__(self):
        return iter(self.array.tolist())

    def __array__(self, dtype=None, copy=None):
        a = self.array
        if copy is False and dtype not in (None, a.dtype):
            raise ValueError("a LabelArray cannot change dtype without a copy")
        if copy or (dtype is not None and dtype != a.dtype):
            return np.array(a, dtype=dtype, copy=True)
        return a  # read-only: sharing it cannot change the labels

    def __eq__(self, other) -> bool:
        if isinstance(other, LabelArray):
            if self._codes is not None and self._codes is other._codes:
                other = other._values  # the same groups: compare the labels of the groups
                mine = self._values
            else:
                other, mine = other.array, self.array
        elif isinstance(other, list | tuple | np.ndarray):
            mine = self.array
            if mine.dtype == object and not isinstance(other, np.ndarray):
                try:  # mixed JSON values (rows of a swap release's levels)
                    other = np.array(other, dtype=object)
                except ValueError:  # ragged: not the list this stands for
                    return False
        else:
            return NotImplemented
        b = np.asarray(other)
        if b.shape != mine.shape or (b.dtype.kind == "U") != (mine.dtype.kind == "U"):
            return False
        return bool(np.array_equal(mine, b))

    __hash__ = None

    def __reduce__(self):
        # unpickled arrays are fresh and unshared: read-only, they need no copy
        if self._array is None:
            return (_expanded, (self._values, self._codes))
        return (LabelArray, (self._array,))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __repr__(self) -> str:
        return f"LabelArray({math.prod(self.shape)} labels, dtype={self.dtype})"


def _expanded(values: np.ndarray, codes: np.ndarray) -> LabelArray:
    """:meth:`LabelArray.expand` of arrays nobody else holds (made read-only, not copied)."""
    values.setflags(write=False)
    codes.setflags(write=False)
    out = object.__new__(LabelArray)
    out._array = None
    out._values = values
    out._codes = codes
    return out


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
