"""Argument checking shared by the public functions.

Every check raises before any work is done, with a message that names the
argument, echoes the value and states the rule, e.g.
``ValueError: `epsilon` (-1.0) must be > 0.``  Echoed values go through
:func:`format_value`, which bounds their length (a 1 MB string gives a short
message).

Supported ranges
----------------
* Reals: anything a Python float holds (``numbers.Real`` including
  ``Fraction``, numpy integer and floating scalars, ``decimal.Decimal``).
  A Python int or ``Fraction`` beyond the float range (``2**1100``) is
  refused with the range, never left to overflow downstream.  Complex
  numbers (Python or numpy) and bools are refused with ``TypeError``.
* Privacy parameters (:func:`check_epsilon`): finite, and at least the
  smallest normal float ``2.2250738585072014e-308`` so that ``1 / epsilon``
  is finite.
* Real arrays (:func:`check_finite_array`): integer entries (numpy or
  Python) must have magnitude at most ``2**53``, below which a float holds
  every integer exactly; larger ones would be rounded silently.
* Counts (:func:`check_counts`): non-negative integers whose *total* is at
  most ``2**53``, so that every margin computed from them in floating point
  (the invariants) is exact.  ``uint64`` values are compared before any cast
  (``2**64 - 1`` never wraps to ``-1``).

The checks of JSON documents (:func:`doc_object` and friends) report the
path of the offending field (``noise.params.b``) and are used by
:meth:`invariantdp.Release.from_dict` and
:meth:`invariantdp.Invariants.from_dict`.

Modules (every name is importable from :mod:`invariantdp._validation`):
:mod:`._format` (:func:`format_value`), :mod:`._scalars` (reals, privacy
parameters, levels, integers, ``alternative``), :mod:`._arrays`
(:func:`check_finite_array`, :func:`check_counts`, :func:`check_not_table`),
:mod:`._confidential` (:func:`read_confidential`: the data of a secure release,
refused without being shown), :mod:`._frozen`
(:func:`freeze`, :func:`thaw`) and :mod:`._documents` (``doc_*``,
:func:`parse_json_document`).
"""

from ..exceptions import InvariantDPError
from ._arrays import check_counts, check_finite_array, check_not_table
from ._confidential import NOT_SHOWN, confidential_shape, read_confidential
from ._documents import (
    MAX_JSON_CHARS,
    doc_error,
    doc_int,
    doc_json_value,
    doc_list,
    doc_nested,
    doc_number,
    doc_numbers,
    doc_object,
    doc_open_unit,
    doc_path,
    doc_positive,
    doc_probability,
    doc_shape,
    doc_str,
    parse_json_document,
)
from ._format import format_value
from ._frozen import FrozenDict, FrozenList, LabelArray, freeze, thaw
from ._scalars import (
    EXACT_INT,
    check_alternative,
    check_confidence_level,
    check_delta,
    check_epsilon,
    check_in_open_unit,
    check_positive,
    check_positive_int,
    check_real,
)

__all__ = [
    "EXACT_INT",
    "MAX_JSON_CHARS",
    "NOT_SHOWN",
    "FrozenDict",
    "FrozenList",
    "LabelArray",
    "InvariantDPError",
    "check_alternative",
    "check_confidence_level",
    "check_counts",
    "check_not_table",
    "check_delta",
    "check_epsilon",
    "check_finite_array",
    "check_in_open_unit",
    "check_positive",
    "check_positive_int",
    "check_real",
    "confidential_shape",
    "doc_error",
    "doc_int",
    "doc_json_value",
    "doc_list",
    "doc_nested",
    "doc_number",
    "doc_numbers",
    "doc_object",
    "doc_path",
    "doc_positive",
    "doc_open_unit",
    "doc_probability",
    "doc_shape",
    "doc_str",
    "format_value",
    "freeze",
    "parse_json_document",
    "read_confidential",
    "thaw",
]
