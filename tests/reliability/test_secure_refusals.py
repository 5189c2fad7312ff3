"""Issue 20, sections 2-3: a secure release decides on public parameters and never shows data.

* The refusal cases of the issue: neighbouring inputs get the same decision,
  and everything but the value is the same for both (guarantee, noise law,
  metadata, warnings): ``tulap_mechanism([0.])`` vs ``[1.]`` with
  sensitivity 2, ``laplace_mechanism([2**32 - 1])`` vs ``[2**32]`` (the
  default grid at scale 1), ``discrete_laplace_mechanism([2**52 - 1])`` vs
  ``[2**52]``.
* Sentinel values (123456789.25 and its integer part) fed to every secure
  mechanism, released or refused: no exception, warning, log record,
  summary or metadata shows them.
* The rules behind the decisions: data clamped to the declared range, and
  Tulap data rounded to the lattice by ``floor(x / s + 1/2)`` exactly, so
  that neighbours ``|x - x'| <= s`` always differ by at most one lattice step.
"""

import logging
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from invariantdp import Release
from invariantdp.mechanisms import (
    discrete_gaussian_mechanism,
    discrete_laplace_mechanism,
    gaussian_mechanism,
    laplace_mechanism,
    odds_ratio_release,
    permutation_swap,
    tulap_mechanism,
)
from invariantdp.mechanisms._base import plain_release
from invariantdp.mechanisms._side_channels import secure_lattice_index

SENTINEL = 123456789.25
#: how a message could show the sentinel: repr, str, %g at 6 and 8 digits, its integer part
RENDERINGS = ("123456789", "1.23457e+08", "1.2345679e+08", "1.234568e+08", "12345678")


def _outcome(call):
    """``(decision, side information)`` of a call: everything an observer sees but the value."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            rel = plain_release(call())
        except Exception as exc:  # the refusal itself is the outcome
            return "refused", (type(exc).__name__, str(exc), [str(w.message) for w in caught])
    doc = rel.to_dict()
    doc.pop("value")
    return "released", (doc, [str(w.message) for w in caught])


NEIGHBOURS = {
    # the cases: one released and the other raised, naming the value
    "tulap, sensitivity 2, off the lattice": (
        lambda x: tulap_mechanism(x, epsilon=1.0, sensitivity=2.0, secure=True),
        [0.0],
        [1.0],
    ),
    "laplace, default grid cap": (
        lambda x: laplace_mechanism(x, epsilon=1.0, secure=True),
        [2.0**32 - 1],
        [2.0**32],
    ),
    "discrete_laplace, 2**52": (
        lambda x: discrete_laplace_mechanism(x, epsilon=1.0, secure=True),
        [2**52 - 1],
        [2**52],
    ),
    # the same rules elsewhere
    "discrete_gaussian, 2**52": (
        lambda x: discrete_gaussian_mechanism(x, rho=0.5, secure=True),
        [2**52 - 1],
        [2**52],
    ),
    "gaussian, default grid cap": (
        lambda x: gaussian_mechanism(x, mu=1.0, secure=True),
        [2.0**32 - 1],
        [2.0**32],
    ),
    "tulap, beyond the lattice range": (
        lambda x: tulap_mechanism(x, epsilon=1.0, secure=True),
        [2.0**51 - 1],
        [2.0**51],
    ),
    "discrete_laplace, int64 beyond 2**53": (
        lambda x: discrete_laplace_mechanism(np.array(x, dtype=np.int64), epsilon=1.0, secure=True),
        [2**53],
        [2**53 + 1],
    ),
}


@pytest.mark.parametrize("name", sorted(NEIGHBOURS))
def test_neighbours_get_the_same_decision_and_side_information(name):
    mechanism, x, x_prime = NEIGHBOURS[name]
    a, b = _outcome(lambda: mechanism(x)), _outcome(lambda: mechanism(x_prime))
    assert a[0] == b[0] == "released", (a, b)
    assert a[1] == b[1]


def _messages_of(call, caplog):
    """Every text a call leaves: exception, warnings, log records, release summary and doc."""
    texts = []
    caplog.clear()
    with caplog.at_level(logging.DEBUG), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            rel = call()
        except Exception as exc:  # any refusal: its text is checked
            texts += [str(exc), repr(exc)]
            rel = None
    texts += [str(w.message) for w in caught]
    texts += [r.getMessage() for r in caplog.records]
    if rel is not None:
        doc = plain_release(rel).to_dict()
        # the release itself is public, and so are its invariants (published exactly, with
        # the categories that label them: the margins of a 2 x 2 table, the n_jl of a swap)
        doc.pop("value")
        doc.pop("invariants")
        doc["metadata"].pop("levels", None)
        doc["metadata"].pop("cells", None)
        public = ("value:", "invariants:")
        summary = [line for line in str(rel.summary()).splitlines() if not line.startswith(public)]
        texts += [str(doc), *summary]
    return rel, texts


def _swap_frame(value):
    return pd.DataFrame(
        {"k": ["A", "B", "A", "B"], "l": [1, 2, 1, 2], "j": [0, 0, 1, 1], "v": [value] * 4}
    )


SENTINEL_CALLS = {
    # name: (call, released?)
    "discrete_laplace, non-integer": (
        lambda: discrete_laplace_mechanism([SENTINEL, 3], epsilon=1.0, secure=True),
        False,
    ),
    "discrete_laplace, integer": (
        lambda: discrete_laplace_mechanism([int(SENTINEL), 3], epsilon=1.0, secure=True),
        True,
    ),
    "discrete_laplace, nan": (
        lambda: discrete_laplace_mechanism([SENTINEL, np.nan], epsilon=1.0, secure=True),
        False,
    ),
    "discrete_gaussian, non-integer": (
        lambda: discrete_gaussian_mechanism([SENTINEL], rho=1.0, secure=True),
        False,
    ),
    "discrete_gaussian, python int beyond int64": (
        lambda: discrete_gaussian_mechanism([int(SENTINEL) * 10**12], rho=1.0, secure=True),
        True,
    ),
    "tulap": (lambda: tulap_mechanism([SENTINEL], epsilon=1.0, secure=True), True),
    "tulap, inf": (lambda: tulap_mechanism([SENTINEL, np.inf], epsilon=1.0, secure=True), False),
    "tulap, strings": (lambda: tulap_mechanism([str(SENTINEL)], epsilon=1.0, secure=True), False),
    "tulap, ragged": (
        lambda: tulap_mechanism([[SENTINEL, 1.0], [2.0]], epsilon=1.0, secure=True),
        False,
    ),
    "laplace": (lambda: laplace_mechanism([SENTINEL], epsilon=1.0, secure=True), True),
    "laplace, huge": (
        lambda: laplace_mechanism([SENTINEL * 1e250], epsilon=1.0, secure=True),
        True,
    ),
    "gaussian": (lambda: gaussian_mechanism([SENTINEL], mu=1.0, secure=True), True),
    "gaussian, complex": (
        lambda: gaussian_mechanism([SENTINEL + 1j], mu=1.0, secure=True),
        False,
    ),
    "odds_ratio_release, non-integer": (
        lambda: odds_ratio_release([[SENTINEL, 1], [1, 1]], epsilon=1.0, secure=True),
        False,
    ),
    "odds_ratio_release, negative": (
        lambda: odds_ratio_release(
            [[int(SENTINEL), -int(SENTINEL)], [1, 1]], epsilon=1.0, secure=True
        ),
        False,
    ),
    "odds_ratio_release": (
        lambda: odds_ratio_release([[int(SENTINEL), 1], [1, 1]], epsilon=1.0, secure=True),
        True,
    ),
    "permutation_swap": (
        lambda: permutation_swap(
            _swap_frame(SENTINEL), swap="k", match="j", swap_rate=0.3, secure=True
        ),
        True,
    ),
    "discrete_laplace, dataframe": (
        lambda: discrete_laplace_mechanism(
            pd.DataFrame({"a": [SENTINEL]}, index=["row"]), epsilon=1.0, secure=True
        ),
        False,
    ),
}


@pytest.mark.parametrize("name", sorted(SENTINEL_CALLS))
def test_no_secure_message_shows_a_data_value(name, caplog):
    call, released = SENTINEL_CALLS[name]
    rel, texts = _messages_of(call, caplog)
    assert (rel is not None) == released, texts
    leaks = [t for t in texts for r in RENDERINGS if r in t]
    assert not leaks, leaks
    if not released:
        # the refusal names the argument and its rule
        assert "`x`" in texts[0] or "`table`" in texts[0], texts[0]


def test_the_same_refusals_show_the_value_in_a_simulation():
    """The simulation path may echo the value (it is not for publication): a control that the
    sentinel test would see a value that is shown."""
    with pytest.raises(ValueError) as info:
        odds_ratio_release([[SENTINEL, 1], [1, 1]], epsilon=1.0, rng=1)
    assert "123456789" in str(info.value)


# ---------------------------------------------------------------------------
# the rules: exact rounding to the Tulap lattice, clamping
# ---------------------------------------------------------------------------


def _exact_index(x: float, step: float) -> int:
    return int(np.floor(Fraction(x) / Fraction(step) + Fraction(1, 2)))


@given(
    x=st.floats(-1e6, 1e6, allow_nan=False),
    step=st.one_of(
        st.floats(1e-3, 1e3, allow_nan=False),
        st.sampled_from([0.1, 0.3, 1.0, 2.0, 1 / 3]),
    ),
)
def test_lattice_index_is_the_exact_floor(x, step):
    assert secure_lattice_index(np.array([x]), step)[0] == _exact_index(x, step)


@given(
    k=st.integers(-(2**40), 2**40),
    step=st.sampled_from([0.1, 0.3, 1.0, 2.0, 1 / 3, 7.77]),
    offset=st.sampled_from([-0.5, 0.5]),
)
def test_lattice_index_at_half_integers(k, step, offset):
    """The points a float quotient gets wrong: x at (k +- 1/2) step and its double neighbours."""
    x = (k + offset) * step
    xs = np.array([np.nextafter(x, -np.inf), x, np.nextafter(x, np.inf)])
    got = secure_lattice_index(xs, step)
    assert list(got) == [_exact_index(v, step) for v in xs]
    # neighbours at most `step` apart are at most one lattice step apart
    assert np.all(np.abs(np.diff(got)) <= 1)


def test_lattice_index_of_neighbours_a_step_apart():
    rng = np.random.default_rng(9)
    for step in (0.1, 1.0, 3.7):
        x = rng.uniform(-1e5, 1e5, 20_000)
        x_prime = np.nextafter(x + step, -np.inf)  # at most `step` apart, rounded down
        d = secure_lattice_index(x_prime, step) - secure_lattice_index(x, step)
        assert np.all((0 <= d) & (d <= 1))


def test_secure_integer_data_are_clamped_to_2_52():
    rel = discrete_laplace_mechanism([2**60, -(2**60), 5], epsilon=50.0, secure=True)
    # at epsilon = 50 the noise is 0 with probability 1 - 4e-22 per cell
    np.testing.assert_array_equal(rel.value, [2**52 - 1, -(2**52 - 1), 5])
    assert rel.metadata["data_rule"].endswith("clamped to |x| <= 2**52 - 1")
    back = Release.from_json(rel.to_json())
    assert back == rel
