"""Confidential input is read by one dtype policy: the work does not depend on the values.

numpy's dtype inference builds ``uint64`` from ``[2**64 - 1, 0, ...]`` and an
object array, read entry by entry, from ``[2**64, 0, ...]``: the run time of
a secure release told the two apart.  The work is counted here as the
sequence of Python and builtin calls made while the data are read
(``sys.setprofile``): the same sequence for every value, not a clock.
"""

import sys
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest

from invariantdp._validation import confidential_shape, read_confidential
from invariantdp.exceptions import InvariantDPError
from invariantdp.mechanisms._side_channels import secure_integers, secure_table

FIRST = [0, 2**64 - 1, 2**64, 2**200, 5, 2**53 + 1]


def _calls(fn, *args):
    """The calls made by ``fn(*args)``: ``Counter`` of (event, function name)."""
    seen = Counter()

    def profile(frame, event, arg):
        if event in ("call", "c_call"):
            name = arg.__name__ if event == "c_call" else frame.f_code.co_name
            seen[(event, name)] += 1

    sys.setprofile(profile)
    try:
        out = fn(*args)
    finally:
        sys.setprofile(None)
    return seen, out


@pytest.mark.parametrize(
    "reader",
    [
        lambda x: read_confidential("x", x),
        lambda x: secure_integers(x),
        lambda x: secure_table("table", x, (2, 500)),
    ],
    ids=["read_confidential", "secure_integers", "secure_table"],
)
def test_confidential_input_has_one_dtype_policy_whatever_the_values(reader):
    work = []
    for first in FIRST:
        data = [[first] + [0] * 499, [0] * 500]
        calls, _ = _calls(reader, data)
        work.append(calls)
    assert all(w == work[0] for w in work), [set(w.items()) ^ set(work[0].items()) for w in work]


def test_entries_are_saturated_by_the_same_rule_whatever_their_type():
    big = 2**62
    for data in ([2**64, 0], [2**64 - 1, 0], [np.uint64(2**64 - 1), 0], [2**200, 0]):
        assert read_confidential("x", data).tolist() == [float(big), 0.0]
    assert read_confidential("x", np.array([2**64 - 1, 0], dtype=np.uint64)).tolist() == [
        float(big),
        0.0,
    ]
    assert read_confidential("x", [-(2**70), Fraction(1, 2), 2.5]).tolist() == [
        -float(big),
        0.5,
        2.5,
    ]


@pytest.mark.parametrize(
    "data, error",
    [
        (["7", 1], TypeError),
        ([True, 1], TypeError),
        ([1 + 2j, 1], TypeError),
        ([[1, 2], [3]], TypeError),
        ([None, 1], TypeError),
        ([float("nan"), 1], InvariantDPError),
        ([], InvariantDPError),
    ],
)
def test_what_is_not_a_real_number_is_refused_without_a_value(data, error):
    with pytest.raises(error, match="`x`") as info:
        read_confidential("x", data)
    assert "confidential" in str(info.value) or "empty" in str(info.value)
    assert "7" not in str(info.value)


def test_shape_is_read_from_the_nesting_only():
    assert confidential_shape("x", [[2**64, 0], [1, 2]]) == (2, 2)
    assert confidential_shape("x", np.zeros((3, 1))) == (3, 1)
    assert confidential_shape("x", 5) == ()
