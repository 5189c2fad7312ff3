"""Echoing a value in an error message, in bounded length.

:func:`format_value` is what every check of the package uses to quote the
offending value: a 1 MB string or a 5000-digit integer gives a short message,
and a broken ``__repr__`` never turns a value error into another exception.
"""

from __future__ import annotations

import math
import reprlib

import numpy as np

_ECHO_LIMIT = 80


def _fmt_int(v: int) -> str:
    if abs(v) < 10**30:
        return str(v)
    bits = abs(v).bit_length()
    # log10 from the top 53 bits: str() of a 5000-digit int raises in Python >= 3.11
    top = abs(v) >> max(bits - 53, 0)
    log10 = math.log10(top) + max(bits - 53, 0) * math.log10(2.0)
    mant, expo = 10 ** (log10 % 1), int(log10)
    sign = "-" if v < 0 else ""
    return f"{sign}{mant:.3f}e+{expo:02d} (an integer of {bits} bits)"


class _Repr(reprlib.Repr):
    def __init__(self):
        super().__init__()
        self.maxlevel, self.maxlist, self.maxtuple, self.maxdict = 3, 6, 6, 4
        self.maxstring, self.maxother, self.maxlong = 40, 40, 40

    def repr_int(self, x, level):
        return _fmt_int(x)


_REPR = _Repr()


def format_value(value, limit: int = _ECHO_LIMIT) -> str:
    """``value`` as echoed in an error message: at most about ``limit`` characters.

    Strings and bytes are cut with their length stated, arrays of more than 8
    entries are described by shape and dtype, integers beyond ``10**30`` are
    written in scientific notation with their bit length, containers are
    abbreviated (:mod:`reprlib`).  Never raises.

    Examples
    --------
    >>> format_value("abc" * 10**5, limit=30)
    "'abcabcabcabcab'... (300000 characters)"
    >>> format_value(2**1100)
    '1.358e+331 (an integer of 1101 bits)'
    >>> format_value(np.zeros((30, 40)))
    'array of shape (30, 40) and dtype float64'
    """
    try:
        if isinstance(value, bool | np.bool_) or value is None:
            text = repr(bool(value)) if value is not None else "None"
        elif isinstance(value, int | np.integer):
            text = _fmt_int(int(value))
        elif isinstance(value, float | np.floating):
            text = str(float(value)) if isinstance(value, np.floating) else repr(value)
        elif isinstance(value, str | bytes | bytearray):
            cut = max(limit - 16, 8)
            text = repr(value[:cut])
            if len(value) > cut:
                unit = "characters" if isinstance(value, str) else "bytes"
                text += f"... ({len(value)} {unit})"
            return text
        elif isinstance(value, np.ndarray):
            if value.size > 8:
                text = f"array of shape {value.shape} and dtype {value.dtype}"
            else:  # one line, exact integers (tolist gives Python scalars)
                text = _REPR.repr(value.tolist())
        else:
            text = _REPR.repr(value)
    except Exception:  # an echo must never fail: a broken __repr__ is not our error
        text = f"<{type(value).__name__} object>"
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text
