"""Neighbouring inputs look alike to everything but the released value.

For every release path that takes confidential counts or microdata -- the
additive and integer mechanisms, the Tulap and odds-ratio releases, the
permutation swap, the census ``measure``, the simulation-only mechanisms
with invariants, and the command-line release commands -- a pair of inputs
that are neighbours under the release's own adjacency gets:

* the same decision (released, or refused with the same error),
* the same units and shape (the same cells, the same geographic units),
* the same messages: exception text, warnings, and the whole release
  document except its value (and, where neighbours may differ in them, the
  invariants published exactly).

Pairs near the edges of the declared domains are included: counts beyond
``2**52``, ``2**64`` beside ``2**64 - 1`` (numpy would build a different
array type for each), a table whose total passes ``2**53``, a block whose
only resident moves.
"""

import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from invariantdp.census import Geography, Schema, measure
from invariantdp.cli import main
from invariantdp.invariants import one_way_margins, totals
from invariantdp.mechanisms import (
    discrete_gaussian_mechanism,
    discrete_laplace_mechanism,
    extended_gaussian,
    gaussian_mechanism,
    laplace_mechanism,
    lp_mechanism,
    odds_ratio_release,
    permutation_swap,
    projected_laplace,
    semi_dp_gaussian,
    semi_dp_knorm,
    tulap_mechanism,
)
from invariantdp.mechanisms._base import plain_release


def _seen(call, drop=("value",)):
    """``(decision, what an observer sees besides the value)`` of one call."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = call()
        except Exception as exc:  # the refusal and its text are what is compared
            return "refused", (type(exc).__name__, str(exc), [str(w.message) for w in caught])
    notes = [str(w.message) for w in caught]
    if hasattr(out, "measurements"):  # census noisy measurements
        return "released", (_measurements_seen(out), notes)
    doc = plain_release(out).to_dict()
    for key in drop:
        doc.pop(key, None)
    return "released", (doc, notes, np.shape(out.value))


def _measurements_seen(nm):
    return {
        "units": [list(u) for u in nm.units],
        "measurements": {
            k: (t.values.shape, t.units.tolist(), t.variance.tolist())
            for k, t in nm.measurements.items()
        },
        "invariants": {k: (t.values.shape, t.units.tolist()) for k, t in nm.invariants.items()},
        "privacy": (nm.privacy.rho, nm.privacy.rho_by_query, nm.privacy.adjacency),
        "randomness": nm.randomness,
    }


def _swap_frame(k):
    """Microdata: swap k within strata of j; l held.  Neighbours exchange two records' k."""
    return pd.DataFrame({"k": k, "j": [0, 0, 0, 0, 1, 1, 1, 1], "l": [0, 1, 0, 1, 0, 1, 0, 1]})


_SWAP_A = ["a", "b", "b", "a", "a", "a", "b", "b"]
_SWAP_B = ["b", "a", "b", "a", "a", "a", "b", "b"]  # records 0 and 1 exchange k: same n_jk, n_jl

_SCHEMA, _GEO = Schema({"sex": 2}), Geography({"A": 1, "B": 2})
_WORKLOAD = {"A": {"total": 1.0}, "B": {"detailed": 0.5, "total": 1.0}}


def _census(counts, units=("11", "12"), secure=True, **kw):
    rng = None if secure else 1
    return lambda: measure(
        counts, _SCHEMA, _GEO, _WORKLOAD, secure=secure, rng=rng, units=list(units), **kw
    )


def _people(codes, sexes):
    return pd.DataFrame({"geocode": codes, "sex": sexes})


def _counts(n):
    return pd.DataFrame({"geocode": ["11", "12"], "sex": [0, 1], "count": n})


# name: (call on the data, data, neighbour, document fields neighbours may differ in)
SECURE = {
    "discrete_laplace": (
        lambda x: discrete_laplace_mechanism(x, epsilon=1.0, secure=True),
        [3, 5],
        [4, 5],
        (),
    ),
    "discrete_laplace, 2**64 vs 2**64 - 1": (
        lambda x: discrete_laplace_mechanism(x, epsilon=1.0, secure=True),
        [2**64] + [0] * 99,
        [2**64 - 1] + [0] * 99,
        (),
    ),
    "discrete_gaussian, beyond int64": (
        lambda x: discrete_gaussian_mechanism(x, rho=0.5, secure=True),
        [2**64, 7],
        [2**64 - 1, 7],
        (),
    ),
    "discrete_gaussian, uint64 vs a list": (
        lambda x: discrete_gaussian_mechanism(x, rho=0.5, secure=True),
        np.array([2**64 - 1, 0], dtype=np.uint64),
        [2**64, 0],
        (),
    ),
    "tulap": (lambda x: tulap_mechanism(x, epsilon=1.0, secure=True), [0.5, 2.0], [1.5, 2.0], ()),
    "laplace": (lambda x: laplace_mechanism(x, epsilon=1.0, secure=True), [2.0], [3.0], ()),
    "gaussian": (lambda x: gaussian_mechanism(x, mu=1.0, secure=True), [2.0], [3.0], ()),
    "odds_ratio_release, same margins": (
        lambda t: odds_ratio_release(t, epsilon=1.0, secure=True),
        [[3, 1], [2, 5]],
        [[4, 0], [1, 6]],
        (),
    ),
    "odds_ratio_release, total beyond 2**53": (
        lambda t: odds_ratio_release(t, epsilon=1.0, secure=True),
        [[2**53, 0], [0, 0]],
        [[2**53, 1], [0, 0]],
        ("invariants",),  # published exactly: their margins differ
    ),
    "permutation_swap": (
        lambda k: permutation_swap(_swap_frame(k), swap="k", match="j", swap_rate=0.5, secure=True),
        _SWAP_A,
        _SWAP_B,
        (),
    ),
}

CENSUS = {
    "the only person of block 12 moves": (
        _people(["11", "11", "12"], [0, 1, 1]),
        _people(["11", "11", "11"], [0, 1, 1]),
    ),
    "one person changes sex": (
        _people(["11", "12", "12"], [0, 1, 1]),
        _people(["11", "12", "12"], [0, 0, 1]),
    ),
    "counts: one record moves between blocks": (_counts([1, 0]), _counts([0, 1])),
    "counts beyond 2**60": (_counts([2**60 + 128, 3]), _counts([2**60 + 129, 2])),
    "a record outside the declared units, in another row": (
        _people(["11", "19", "12"], [0, 1, 1]),
        _people(["19", "11", "12"], [0, 1, 1]),
    ),
}


@pytest.mark.parametrize("name", sorted(SECURE))
def test_secure_release_of_neighbours_looks_the_same(name):
    call, x, x_prime, public = SECURE[name]
    drop = ("value", *public)
    a = _seen(lambda: call(x), drop)
    b = _seen(lambda: call(x_prime), drop)
    assert a[0] == b[0] == "released", (a, b)
    assert a[1] == b[1]


@pytest.mark.parametrize("secure", [True, False])
@pytest.mark.parametrize("name", sorted(CENSUS))
def test_census_measure_of_neighbours_looks_the_same(name, secure):
    d, d_prime = CENSUS[name]
    a, b = _seen(_census(d, secure=secure)), _seen(_census(d_prime, secure=secure))
    if "outside" in name:
        assert a[0] == b[0] == "refused" and "outside the declared domain" in a[1][1]
        # a simulation names the first row refused; a secure call names none
        assert (a == b) == secure
    else:
        assert a == b
        assert a[0] == "released" and a[1][0]["units"][1] == ["11", "12"]


def test_census_measure_of_neighbours_with_invariants_has_the_same_shapes():
    d, d_prime = CENSUS["the only person of block 12 moves"]
    inv = {"B": ["total"]}  # published exactly: the values differ, the units and shapes do not
    a = _seen(_census(d, invariants=inv))
    b = _seen(_census(d_prime, invariants=inv))
    assert a == b and a[0] == "released"


# simulation-only mechanisms: neighbours share the invariants the release keeps
SIMULATIONS = {
    "semi_dp_gaussian": (
        lambda t, **kw: semi_dp_gaussian(t, mu=1.0, **kw),
        [[3, 1], [2, 5]],
        [[4, 0], [1, 6]],
    ),
    "semi_dp_knorm": (
        lambda t, **kw: semi_dp_knorm(t, epsilon=1.0, **kw),
        [[3, 1, 2], [2, 5, 1]],
        [[4, 0, 2], [1, 6, 1]],
    ),
    "projected_laplace": (
        lambda x, **kw: projected_laplace(x, totals([0, 0, 1]), epsilon=1.0, **kw),
        [3.0, 1.0, 4.0],
        [2.0, 2.0, 4.0],
    ),
    "extended_gaussian": (
        lambda x, **kw: extended_gaussian(x, one_way_margins((2, 2)), mu=1.0, **kw),
        [[3.0, 1.0], [2.0, 5.0]],
        [[4.0, 0.0], [1.0, 6.0]],
    ),
    "lp_mechanism": (
        lambda x, **kw: lp_mechanism(x, 2, 1.0, 1.0, **kw),
        [3.0, 1.0],
        [3.0, 2.0],
    ),
}


@pytest.mark.parametrize("name", sorted(SIMULATIONS))
def test_simulation_and_refused_secure_release_of_neighbours_look_the_same(name):
    call, x, x_prime = SIMULATIONS[name]
    # the same seed: the same noise, so that the released documents match field by field
    a, b = _seen(lambda: call(x, rng=3)), _seen(lambda: call(x_prime, rng=3))
    assert a[0] == b[0] == "released"
    assert a[1] == b[1]
    # no exact sampler: secure=True is refused for both, by the same message
    a, b = _seen(lambda: call(x, secure=True)), _seen(lambda: call(x_prime, secure=True))
    assert a[0] == b[0] == "refused" and a[1] == b[1]


# ---------------------------------------------------------------------------
# the command line
# ---------------------------------------------------------------------------


def _cli(capsys, argv):
    """``(exit code, stdout, stderr)`` of one command, with the output paths made the same."""
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _doc(path, drop=("value",)):
    doc = json.loads(path.read_text())
    for key in drop:
        doc.pop(key, None)
    return doc


@pytest.mark.parametrize(
    "mechanism, args",
    [
        ("discrete-laplace", ["--epsilon", "1"]),
        ("discrete-gaussian", ["--rho", "0.5"]),
        ("tulap", ["--epsilon", "1"]),
        ("laplace", ["--epsilon", "1"]),
        ("gaussian", ["--mu", "1"]),
        ("odds-ratio", ["--epsilon", "1"]),
    ],
)
def test_cli_release_of_neighbouring_tables_looks_the_same(mechanism, args, tmp_path, capsys):
    seen = []
    for n, x11 in enumerate((10, 11)):
        folder = tmp_path / str(n)
        folder.mkdir()
        d = x11 - 10
        cells = [x11, 4, 3, 8]
        if mechanism == "odds-ratio":  # neighbours share the margins: x11 + 1, x12 - 1, ...
            cells = [x11, 4 - d, 3 - d, 8 + d]
        (folder / "t.csv").write_text(f",a,b\nx,{cells[0]},{cells[1]}\ny,{cells[2]},{cells[3]}\n")
        argv = ["release", mechanism, "t.csv", *args, "-o", "r.json"]
        with pytest.MonkeyPatch.context() as mp:
            mp.chdir(folder)
            code, out, err = _cli(capsys, argv)
        seen.append((code, out, err, _doc(folder / "r.json")))
    assert seen[0] == seen[1]
    assert seen[0][0] == 0


def test_cli_swap_of_neighbours_looks_the_same(tmp_path, capsys):
    seen = []
    for n, k in enumerate((_SWAP_A, _SWAP_B)):
        folder = tmp_path / str(n)
        folder.mkdir()
        _swap_frame(k).to_csv(folder / "hh.csv", index=False)
        argv = [
            "swap", "hh.csv", "out.csv", "--swap", "k", "--match", "j", "--swap-rate", "0.5",
            "--release", "r.json",
        ]  # fmt: skip
        with pytest.MonkeyPatch.context() as mp:
            mp.chdir(folder)
            code, out, err = _cli(capsys, argv)
        # the curator's count of changed records compares the data with their swap (and is
        # random); everything else is the same
        out = re.sub(r"\(\d+ changed\)", "(n changed)", out)
        swapped = pd.read_csv(folder / "out.csv")
        seen.append((code, out, err, _doc(folder / "r.json"), swapped.shape))
    assert seen[0] == seen[1]
    assert seen[0][0] == 0


@pytest.mark.parametrize("name", sorted(CENSUS))
def test_cli_census_measure_of_neighbours_looks_the_same(name, tmp_path, capsys):
    seen = []
    for n, data in enumerate(CENSUS[name]):
        folder = tmp_path / str(n)
        folder.mkdir()
        data.to_csv(folder / "people.csv", index=False)
        pd.DataFrame({"geocode": ["11", "12"]}).to_csv(folder / "units.csv", index=False)
        (folder / "schema.json").write_text(json.dumps({"sex": 2}))
        (folder / "wl.json").write_text(json.dumps(_WORKLOAD))
        argv = [
            "census", "measure", "people.csv", "--schema", "schema.json", "--workload",
            "wl.json", "--units", "units.csv", "--geography", "A:1,B:2", "-o", "nmf", "--json",
        ]  # fmt: skip
        with pytest.MonkeyPatch.context() as mp:
            mp.chdir(folder)
            seen.append(_cli(capsys, argv))
    assert seen[0] == seen[1]
    assert seen[0][0] == (2 if "outside" in name else 0)
