"""The release JSON schema: exact round trips for every mechanism, hostile documents refused.

``Release.from_json`` used to trust its input: Tulap ``b = 2`` gave a p-value
of 3.549, a general matrix was read as margins, strings and NaN were accepted
as values, the value was never checked against the invariants, and missing
keys, lists and deep nesting raised KeyError, AttributeError and
RecursionError, while an 825-byte file could ask for 149 GiB.  Every document
is now validated first and only ``ValueError``/``TypeError`` come out.
"""

import copy
import json
import os
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse

from invariantdp import InvariantDPError, Release
from invariantdp import mechanisms as M
from invariantdp.exceptions import ConvergenceWarning
from invariantdp.invariants import Invariants, nested_totals, one_way_margins, totals
from invariantdp.release import FORMAT_VERSION, NoiseLaw, PrivacyGuarantee

SLOW = settings(settings.get_profile("slow"))

# ---------------------------------------------------------------------------
# one release from every mechanism
# ---------------------------------------------------------------------------

TABLE = np.array([[10, 4, 6], [3, 8, 9]])
S3 = np.array([[1.0, -1.0, 0.0], [0.0, 1.0, -1.0], [1.0, 0.0, -1.0]])
SWAP_DF = pd.DataFrame({"county": list("aabbab"), "owned": [1, 0, 1, 0, 0, 1]})
INVARIANTS = {
    "totals": totals([0, 0, 1, 1, 1, 2]),
    "margins": one_way_margins((2, 3)),
    "nested": nested_totals([[0, 0, 0, 1, 1, 1], [0, 0, 1, 0, 1, 1]]),
    "general": Invariants(np.array([[1.0, 2, 0, -1, 0, 0], [0, 1, 1, 1, 3, 0]])),
    "sparse": Invariants(sparse.csr_array(np.array([[1.0, 1, 0, 0, 0, 0], [0, 0, 1, 1, 1, 1]]))),
}


def _conditional(mechanism, *, rng=None, secure=False, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return M.conditional_release(
            [30, 40, 30],
            mechanism,
            totals([0, 0, 0]),
            draws=20,
            warn=False,
            rng=rng,
            secure=secure,
            **kw,
        )


def _swap(*, rng=None, secure=False):
    return M.permutation_swap(SWAP_DF, swap="county", swap_rate=0.5, rng=rng, secure=secure)[1]


def _calls():
    """label -> (function, positional arguments, keyword arguments), one per mechanism use."""
    c = {
        "laplace_mechanism": (M.laplace_mechanism, ([1.0, 2.0],), {"epsilon": 1.0}),
        "gaussian_mechanism": (M.gaussian_mechanism, ([1.0, 2.0],), {"mu": 1.0}),
        "gaussian_mechanism-eps-delta": (
            M.gaussian_mechanism,
            ([1.0, 2.0],),
            {"epsilon": 1.0, "delta": 1e-5},
        ),
        "discrete_laplace_mechanism": (M.discrete_laplace_mechanism, ([3, 4],), {"epsilon": 1.0}),
        "discrete_gaussian_mechanism": (M.discrete_gaussian_mechanism, ([3, 4],), {"rho": 1.0}),
        "tulap_mechanism": (M.tulap_mechanism, ([3.0],), {"epsilon": 1.0, "delta": 0.1}),
        # b = exp(-746) is 0: the uniform limit, a valid law
        "tulap_mechanism-uniform-limit": (M.tulap_mechanism, ([3.0],), {"epsilon": 746.0}),
        "lp_mechanism-1": (M.lp_mechanism, ([1.0, 2.0, 3.0], 1), {"epsilon": 1.0}),
        "lp_mechanism-2": (M.lp_mechanism, ([1.0, 2.0, 3.0], 2), {"epsilon": 1.0}),
        "lp_mechanism-inf": (M.lp_mechanism, ([1.0, 2.0, 3.0], "inf"), {"epsilon": 1.0}),
        "knorm": (M.knorm, ([5.0, 5.0, 5.0], S3), {"epsilon": 1.0}),
        "semi_dp_gaussian": (M.semi_dp_gaussian, (TABLE,), {"mu": 1.0}),
        "semi_dp_knorm": (M.semi_dp_knorm, (TABLE,), {"epsilon": 1.0}),
        "odds_ratio_release": (M.odds_ratio_release, ([[12, 5], [4, 9]],), {"epsilon": 1.0}),
        "odds_ratio_release-delta": (
            M.odds_ratio_release,
            ([[12, 5], [4, 9]],),
            {"epsilon": 1.0, "delta": 0.01},
        ),
        "permutation_swap": (_swap, (), {}),
        "conditional_release-laplace": (_conditional, ("laplace",), {"epsilon": 1.0}),
        "conditional_release-gaussian": (_conditional, ("gaussian",), {"mu": 1.0}),
        "conditional_release-discrete_laplace": (
            _conditional,
            ("discrete_laplace",),
            {"epsilon": 1.0},
        ),
        "conditional_release-discrete_gaussian": (
            _conditional,
            ("discrete_gaussian",),
            {"rho": 1.0},
        ),
        "conditional_release-inequalities": (
            _conditional,
            ("laplace",),
            {"epsilon": 1.0, "inequalities": (np.eye(3), np.zeros(3))},
        ),
    }
    for kind, inv in INVARIANTS.items():
        x = np.arange(6.0).reshape(inv.shape)
        for mech, kw in [
            (M.projected_gaussian, {"mu": 1.0}),
            (M.projected_laplace, {"epsilon": 1.0}),
            (M.extended_gaussian, {"mu": 1.0}),
            (M.extended_laplace, {"epsilon": 1.0}),
        ]:
            c[f"{mech.__name__}-{kind}"] = (mech, (x, inv), kw)
    return c


CALLS = _calls()
RELEASES = {name: f(*args, rng=0, **kw) for name, (f, args, kw) in CALLS.items()}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_secure_release_round_trips_or_is_refused(name):
    f, args, kw = CALLS[name]
    try:
        r = f(*args, secure=True, **kw)
    except InvariantDPError as exc:
        assert "secure" in str(exc), str(exc)  # refused: no exact sampler
        return
    assert r.metadata["randomness"] == "secure" and not r.simulation
    back = Release.from_json(r.to_json())
    assert back == r and not back.simulation


#: public callables of invariantdp.mechanisms that do not return a Release
NOT_RELEASES = {
    "distributed_privatize",
    "l1_postprocess",
    "l1_privacy_level",
    "l2_postprocess",
    "swapping_invariants",
    "swapping_mape",  # an error summary over simulated runs, not a release
    "table_on_release_cells",
}


def test_every_mechanism_is_covered():
    mechanisms = (
        {
            name
            for name in M.__all__
            if callable(getattr(M, name)) and not isinstance(getattr(M, name), type)
        }
        - NOT_RELEASES
        - {"find_mechanism"}
    )
    covered = {name.split("-")[0] for name in RELEASES}
    assert mechanisms <= covered, sorted(mechanisms - covered)


def _strict_loads(text):
    def refuse(name):
        raise AssertionError(f"non-strict JSON token {name}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_round_trip_is_exact_for_every_mechanism(name):
    r = RELEASES[name]
    text = r.to_json()
    doc = _strict_loads(text)
    # structured neighbours need version 4; a swap's adjacency is words (versions 1 and 2)
    words = 1 if r.labels is None else 2
    assert doc["version"] == (FORMAT_VERSION if r.guarantee.neighbours is not None else words)
    back = Release.from_json(text)
    assert back == r
    assert Release.from_dict(r.to_dict()) == r
    np.testing.assert_array_equal(back.value, r.value)
    assert back.value.dtype == r.value.dtype
    assert back.simulation == r.simulation
    assert back.noise.params == r.noise.params
    assert back.invariants == r.invariants


def _doc(name="odds_ratio_release"):
    return RELEASES[name].to_dict()


def _refused(doc, match, *, text=None):
    with pytest.raises(InvariantDPError, match=match):
        if text is not None:
            Release.from_json(text)
        else:
            Release.from_dict(doc)


# ---------------------------------------------------------------------------
# the reproducers of the issue
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key, value, match",
    [
        ("b", 2.0, r"`noise\.params\.b` \(2\.0\) must be in \[0, 1\)"),
        ("b", -0.5, r"`noise\.params\.b` \(-0\.5\) must be in \[0, 1\)"),
        ("b", 1.0, r"`noise\.params\.b`"),
        ("q", -1, r"`noise\.params\.q` \(-1\) must be in \[0, 1\)"),
        ("q", 1.0, r"`noise\.params\.q`"),
        ("scale", 0.0, r"`noise\.params\.scale` \(0\.0\) must be > 0"),
        ("scale", "2", r"`noise\.params\.scale` \('2'\) must be a number"),
        ("sigma", 2.0, r"`noise\.params` has unknown key"),
    ],
)
def test_tulap_parameters_out_of_range_are_refused(key, value, match):
    d = _doc()
    d["noise"]["params"][key] = value
    _refused(d, match)


def test_noise_parameters_of_every_family_are_checked():
    for name in (
        "laplace_mechanism",
        "gaussian_mechanism",
        "discrete_laplace_mechanism",
        "semi_dp_gaussian",
        "knorm",
    ):
        d = _doc(name)
        key = "sigma" if "sigma" in d["noise"]["params"] else "scale"
        d["noise"]["params"][key] = -1.0
        _refused(d, rf"`noise\.params\.{key}` \(-1\.0\) must be > 0")
    d = _doc("discrete_gaussian_mechanism")
    d["noise"]["params"] = {"scale": 1.0}  # discrete Gaussian has sigma, not scale
    _refused(d, r"`noise\.params` is missing the required key\(s\) 'sigma'")
    d = _doc("permutation_swap")
    d["noise"]["params"]["swap_rate"] = 1.0
    _refused(d, r"`noise\.params\.swap_rate` \(1\.0\) must be in \(0, 1\)")
    d = _doc("knorm")
    d["noise"]["params"]["dim"] = 4
    _refused(d, r"`noise\.params\.vertices\[0\]`.*must have 4 entries")
    d = _doc("semi_dp_knorm")
    d["noise"]["params"]["space"]["r"] = 3
    _refused(d, r"`noise\.params\.space`.*3 x 3 tables")


def test_unknown_noise_family_is_refused():
    d = _doc()
    d["noise"]["family"] = "mystery"
    _refused(d, r"`noise\.family` \('mystery'\) is not a known noise family")


def test_general_matrix_is_not_read_as_margins():
    d = _doc()
    d["invariants"]["matrix"] = {"sparse": False, "data": np.eye(4).tolist()}
    _refused(d, r"`invariants\.matrix`")
    # and a general document whose structure claims margins of another shape
    d = _doc()
    d["invariants"]["shape"] = [4, 1]
    _refused(d, r"`invariants\.shape`|`invariants\.values`")


def test_structure_must_match_its_shape():
    d = _doc("projected_gaussian-totals")
    d["invariants"]["structure"]["labels"] = [0, 0, 1]
    _refused(d, r"`invariants\.structure\.labels` .*must have 6 entries")
    d = _doc("projected_gaussian-nested")
    d["invariants"]["structure"]["levels"][1][2] = 1.5
    _refused(d, r"`invariants\.structure\.levels\[1\]`.*integer or string labels")
    d = _doc("semi_dp_gaussian")
    d["invariants"]["structure"]["labels"] = [0, 1]
    _refused(d, r"`invariants\.structure` .*must have exactly the keys")


@pytest.mark.parametrize(
    "value, match",
    [
        ("12.5", r"`value\.data\[0\]` \('12\.5'\) must be a number, got string"),
        (True, r"`value\.data\[0\]` \(True\) must be a number, got boolean"),
        (None, r"`value\.data\[0\]` \(None\) must be a number, got null"),
        ([1.0], r"`value\.data\[0\]`.*must be a number, got array"),
        (2**60, r"`value\.data\[0\]`.*2\*\*53"),
        (float("nan"), r"`value\.data\[0\]` \(nan\) must be a finite number"),
        (float("inf"), r"`value\.data\[0\]` \(inf\) must be a finite number"),
    ],
)
def test_value_entries_must_be_finite_numbers(value, match):
    d = _doc()
    d["value"]["data"] = [value]
    _refused(d, match)


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999", "-1e400"])
def test_non_strict_json_numbers_are_refused(token):
    r = RELEASES["odds_ratio_release"]
    text = r.to_json().replace(repr(float(r.value)), token, 1)
    assert token in text
    _refused(None, r"strict JSON|`value\.data\[0\]` \(-?inf\) must be a finite number", text=text)


def test_value_is_checked_against_the_invariants():
    for name in ("semi_dp_gaussian", "projected_laplace-nested", "extended_gaussian-general"):
        d = _doc(name)
        d["value"]["data"][0] += 0.5
        _refused(d, r"`value` does not satisfy the invariants")
    d = _doc("permutation_swap")
    d["value"]["data"][0] += 1
    _refused(d, r"`value` does not satisfy the invariants")
    d = _doc("conditional_release-gaussian")
    d["value"]["data"][0] += 1
    _refused(d, r"`value` does not satisfy the invariants")
    d = _doc("semi_dp_knorm")
    d["value"]["data"][0] += 1e-3
    _refused(d, r"`value` does not satisfy the invariants")


def test_projection_rounding_is_not_a_violation(rng):
    # huge noise and large counts: |C value - c| is rounding, relative to |C| |value|
    x = rng.integers(0, 10**6, size=(40, 50))
    r = M.semi_dp_gaussian(x, mu=1e-9, rng=1)
    assert Release.from_json(r.to_json()) == r


def test_invariant_values_must_be_consistent():
    d = _doc()
    d["invariants"]["values"][3] += 1  # rows add to 30, columns to 31
    _refused(d, r"`invariants\.values` are not the margins of any table")
    d = _doc("projected_gaussian-nested")
    d["invariants"]["values"][0] += 1  # a state total that its counties do not add up to
    _refused(d, r"`invariants\.values` are not consistent")


def test_noise_invariants_must_be_the_release_invariants():
    d = _doc("projected_gaussian-totals")
    d["noise"]["params"]["invariants"]["structure"]["labels"] = [0, 0, 0, 1, 1, 1]
    d["noise"]["params"]["invariants"]["names"] = None
    _refused(d, r"`noise\.params\.invariants`.*same linear map")


def test_integer_families_need_integer_values():
    d = _doc("discrete_laplace_mechanism")
    d["value"]["data"][0] += 0.5
    _refused(d, r"`value\.data`.*integer-valued")


@pytest.mark.parametrize(
    "key",
    [
        "format",
        "version",
        "value",
        "mechanism",
        "noise",
        "guarantee",
        "invariants",
        "query",
        "data_shape",
    ],
)
def test_missing_keys_are_named(key):
    d = _doc()
    del d[key]
    _refused(d, rf"'{key}'|`{key}`|not an invariantdp release")


@pytest.mark.parametrize(
    "path",
    [
        ("noise", "family"),
        ("noise", "params"),
        ("guarantee", "params"),
        ("guarantee", "adjacency"),
        ("value", "dtype"),
        ("value", "shape"),
        ("invariants", "matrix"),
        ("invariants", "shape"),
        ("invariants", "values"),
    ],
)
def test_missing_nested_keys_are_named(path):
    d = _doc()
    del d[path[0]][path[1]]
    _refused(d, rf"`{path[0]}` is missing the required key\(s\) '{path[1]}'")


@pytest.mark.parametrize(
    "text, match",
    [
        ("[1, 2]", "must be a JSON object, got an array"),
        ('"release"', "must be a JSON object"),
        ("null", "must be a JSON object"),
        ("{", "not valid JSON"),
        ("", "not valid JSON"),
        ('{"format": "invariantdp.Release", "format": "x"}', "twice"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"a": ' * 100_000 + "1" + "}" * 100_000, "nested too deeply"),
        ("1" * 5000, "not valid JSON"),
    ],
)
def test_malformed_documents_give_value_errors(text, match, work):
    # refused by the C parser and a few checks: no Python work that grows with the text
    with work.python_calls() as calls:
        _refused(None, match, text=text)
    assert calls.calls < 2000


def test_deep_nesting_inside_a_release_is_refused():
    d = _doc()
    deep = 0
    for _ in range(100_000):
        deep = [deep]
    d["metadata"] = {"deep": deep}
    _refused(d, r"`metadata\.deep(\[0\])*` is nested more than 32 levels")
    d = _doc()
    d["guarantee"]["params"]["note"] = deep
    _refused(d, r"`guarantee\.params\.note`.*must be a number, string")


def test_version_must_be_a_known_integer():
    for v, match in [
        (True, "`version`"),
        ("1", "`version`"),
        (0, "`version`"),
        (None, "`version`"),
    ]:
        d = _doc()
        d["version"] = v
        _refused(d, match)
    d = _doc()
    d["version"] = FORMAT_VERSION + 1
    _refused(d, "newer")


def test_metadata_randomness_is_validated():
    d = _doc()
    d["metadata"]["randomness"] = "sure"
    _refused(d, r"`metadata\.randomness` \('sure'\) must be one of 'secure', 'simulation'")
    for ok in ("secure", "simulation"):
        d["metadata"]["randomness"] = ok
        assert Release.from_dict(d).simulation == (ok == "simulation")


def test_guarantees_are_validated():
    cases = [
        ("definition", "super-DP", r"`guarantee\.definition`"),
        ("semi_adjacent_parameter", 0, r"`guarantee\.semi_adjacent_parameter` \(0\) must be >= 1"),
        ("semi_adjacent_parameter", 2.5, r"`guarantee\.semi_adjacent_parameter`"),
        ("adjacency", 3, r"`guarantee\.adjacency` \(3\) must be a string"),
    ]
    for key, value, match in cases:
        d = _doc()
        d["guarantee"][key] = value
        _refused(d, match)
    for key, value, match in [
        ("epsilon", -1.0, r"`guarantee\.params\.epsilon` \(-1\.0\) must be >= 0"),
        ("delta", 1.5, r"`guarantee\.params\.delta` \(1\.5\) must be in \[0, 1\)"),
        ("extra", [1, 2], r"`guarantee\.params\.extra`"),
    ]:
        d = _doc()
        d["guarantee"]["params"][key] = value
        _refused(d, match)
    d = _doc()
    del d["guarantee"]["params"]["delta"]
    _refused(d, r"`guarantee\.params` is missing the required key\(s\) 'delta'")
    d = _doc("gaussian_mechanism")
    d["guarantee"]["params"]["mu"] = 0
    _refused(d, r"`guarantee\.params\.mu` \(0\) must be > 0")


# ---------------------------------------------------------------------------
# issue 20: a document must not claim more privacy than its noise law gives
# ---------------------------------------------------------------------------


def _secure_doc(make):
    return json.loads(make().to_json())


TAMPERED = [
    # (release, path in the guarantee params, tampered value, both numbers the message names)
    (
        lambda: M.tulap_mechanism([3.0], epsilon=1.0, delta=0.1, rng=1),
        "epsilon",
        0.5,
        [r"\(0\.5\)", "b = 0.36787944117144233", "epsilon >= 1"],
    ),
    (
        lambda: M.tulap_mechanism([3.0], epsilon=1.0, delta=0.1, rng=1),
        "delta",
        0.01,
        [r"\(0\.01\)", "q = ", r"delta >= 0\.1"],
    ),
    (
        lambda: M.tulap_mechanism([3.0, 4.0], epsilon=1.0, secure=True),
        "epsilon",
        1.0,  # the composed guarantee of two coordinates is 2
        [r"\(1\.0\)", "2 changed coordinate", "epsilon >= 2"],
    ),
    (
        lambda: M.laplace_mechanism([1.0, 2.0], epsilon=1.0, sensitivity=2.0, rng=1),
        "epsilon",
        0.5,
        [r"\(0\.5\)", "sensitivity 2 with scale 2", "epsilon = 1"],
    ),
    (
        lambda: M.laplace_mechanism([1.0], epsilon=1.0, secure=True),
        "epsilon",
        0.9,
        [r"\(0\.9\)", "grid sensitivity", "epsilon = 1"],
    ),
    (
        lambda: M.discrete_laplace_mechanism([1, 2], epsilon=1.0, rng=1),
        "epsilon",
        0.1,
        [r"\(0\.1\)", "sensitivity 1 with scale 1", "epsilon = 1"],
    ),
    (
        lambda: M.discrete_gaussian_mechanism([1, 2], rho=0.5, secure=True),
        "rho",
        0.05,
        [r"\(0\.05\)", r"sigma 1\.0", r"rho = 0\.5"],
    ),
    (
        lambda: M.gaussian_mechanism([1.0], epsilon=1.0, delta=1e-5, secure=True),
        "rho",
        0.01,
        [r"\(0\.01\)", r"rho = 0\.0305"],
    ),
    (
        lambda: M.gaussian_mechanism([1.0], epsilon=1.0, delta=1e-5, secure=True),
        "delta",
        1e-9,
        [r"\(1e-09\)", "gives delta = ", "at epsilon = 1"],
    ),
    (
        lambda: M.gaussian_mechanism([1.0], mu=1.0, rng=1),
        "mu",
        0.5,
        [r"\(0\.5\)", "mu = 1"],
    ),
    (
        lambda: M.permutation_swap(SWAP_DF, swap="county", swap_rate=0.5, rng=1),
        "epsilon",
        0.1,
        [r"\(0\.1\)", "swapping at rate 0.5", r"epsilon = 1\.94"],
    ),
    (
        lambda: M.discrete_laplace_mechanism([1, 2], epsilon=1.0, secure=True),
        "delta",
        0.0,  # the run time's share, (1 + e) timing_tv, dropped
        [r"\(0\.0\)", "timing_tv", "adds"],
    ),
]


@pytest.mark.parametrize("case", range(len(TAMPERED)))
def test_a_document_claiming_more_privacy_than_its_noise_is_refused(case):
    from invariantdp.mechanisms._base import plain_release

    make, key, value, names = TAMPERED[case]
    release = plain_release(make())
    doc = json.loads(release.to_json())
    assert Release.from_dict(doc) == release  # the untouched document is accepted
    doc["guarantee"]["params"][key] = value
    with pytest.raises(InvariantDPError) as info:
        Release.from_dict(doc)
    message = str(info.value)
    assert message.startswith(f"`guarantee.params.{key}`") and "claims more privacy" in message
    for pattern in names:
        assert re.search(pattern, message), (pattern, message)


def test_a_weaker_claim_than_the_noise_is_accepted():
    d = _secure_doc(lambda: M.discrete_laplace_mechanism([1, 2], epsilon=1.0, rng=1))
    d["guarantee"]["params"]["epsilon"] = 2.0  # weaker than the noise gives: true
    Release.from_dict(d)
    # a smaller epsilon with a delta that covers it: (0.5, 0.3) holds for epsilon_0 = 1
    d["guarantee"] = {**d["guarantee"], "definition": "(epsilon, delta)-DP"}
    d["guarantee"]["params"] = {"epsilon": 0.5, "delta": 0.3}
    Release.from_dict(d)
    d["guarantee"]["params"] = {"epsilon": 0.5, "delta": 0.1}  # (1 - e^-0.5) / 2 = 0.197
    _refused(d, r"`guarantee\.params\.epsilon` \(0\.5\) claims more privacy")


def test_a_sensitivity_space_is_checked_against_the_profile_of_its_largest_norm():
    """The one-coordinate shift is the worst vector of an l1 bound: delta(0.5) = 1 - e**-0.25."""
    S = np.array([[1.0, -1.0, 0.0], [0.0, 1.0, -1.0]])
    d = _secure_doc(lambda: M.laplace_mechanism([1.0, 2.0, 3.0], epsilon=1.0, sensitivity=S, rng=1))
    assert d["guarantee"]["adjacency"]["space"] is True
    d["guarantee"] = {**d["guarantee"], "definition": "(epsilon, delta)-DP"}
    d["guarantee"]["params"] = {"epsilon": 0.5, "delta": 0.222}
    Release.from_dict(d)
    d["guarantee"]["params"] = {"epsilon": 0.5, "delta": 0.12}
    _refused(d, r"its exact delta is 0\.2211992")


def test_the_sensitivity_is_read_from_the_adjacency_not_the_metadata():
    d = _secure_doc(lambda: M.laplace_mechanism([1.0, 2.0], epsilon=1.0, rng=1))
    del d["metadata"]["sensitivity"]
    Release.from_dict(d)  # the metadata restates the neighbours at most: it may drop them
    d["guarantee"]["params"]["epsilon"] = 0.01
    _refused(d, r"`guarantee\.params\.epsilon` \(0\.01\) claims more privacy")


def test_zcdp_with_timing_needs_version_3():
    rel = M.discrete_gaussian_mechanism([1, 2], rho=0.5, secure=True)
    d = json.loads(rel.to_json())
    assert d["version"] == 4 == FORMAT_VERSION and d["guarantee"]["params"]["timing_tv"] > 0
    # the same release as version 3 wrote it: the adjacency in words
    d["guarantee"]["adjacency"] = rel.guarantee.adjacency
    d["version"] = 3
    assert Release.from_dict(d) == rel
    d["version"] = 2
    _refused(d, r"`guarantee\.params\.timing_tv` .* needs a document of version 3")
    # an epsilon-delta guarantee already holds its run time's share: version 1 readers read it
    old = json.loads(M.tulap_mechanism([1.0], epsilon=1.0, secure=True).to_json())
    old["guarantee"]["adjacency"] = Release.from_dict(old).guarantee.adjacency
    old["version"] = 1
    Release.from_dict(old)


def test_f_dp_tradeoff_is_validated():
    good = {"kind": "group", "base": {"kind": "gaussian", "mu": 0.5}, "k": 3}
    r = Release(
        value=np.array(1.0),
        mechanism="user",
        noise=NoiseLaw("gaussian", {"scale": 2.0}),
        guarantee=PrivacyGuarantee("f-DP", {"tradeoff": good}),
    )
    back = Release.from_json(r.to_json())
    assert back == r and back.guarantee.tradeoff()(0.3) == pytest.approx(
        r.guarantee.tradeoff()(0.3)
    )
    d = r.to_dict()
    d["guarantee"]["params"]["tradeoff"]["base"]["mu"] = -1
    _refused(d, r"`guarantee\.params\.tradeoff\.base\.mu` \(-1\) must be > 0")
    d = r.to_dict()
    nested = {"kind": "gaussian", "mu": 1.0}
    for _ in range(100):
        nested = {"kind": "group", "base": nested, "k": 1}
    d["guarantee"]["params"]["tradeoff"] = nested
    _refused(d, "nested more than")


# ---------------------------------------------------------------------------
# sizes: nothing is allocated from what a small document merely declares
# ---------------------------------------------------------------------------


def _tiny_doc_variants():
    d = _doc()
    out = {}
    v = copy.deepcopy(d)
    v["value"]["shape"] = [2**40, 2**40]
    out["huge value shape"] = v
    v = copy.deepcopy(d)
    v["value"]["dtype"] = "<U1000000000"
    out["string dtype"] = v
    v = copy.deepcopy(d)
    v["value"]["dtype"] = "V1000000000"
    out["void dtype"] = v
    v = copy.deepcopy(d)
    v["value"]["dtype"] = "|O"
    out["object dtype"] = v
    v = copy.deepcopy(d)
    v["value"]["dtype"] = "<c16"
    out["complex dtype"] = v
    v = copy.deepcopy(d)
    v["data_shape"] = [100_000, 100_000]
    v["invariants"]["shape"] = [100_000, 100_000]
    out["huge margins"] = v
    v = copy.deepcopy(d)
    v["query"] = None
    v["data_shape"] = [3000, 3000]
    v["invariants"]["shape"] = [3000, 3000]
    out["unbacked margins"] = v
    v = _doc("projected_gaussian-sparse")
    v["invariants"]["matrix"]["shape"] = [2**40, 6]
    out["huge sparse rows"] = v
    v = _doc("knorm")
    v["noise"]["params"]["dim"] = 10**12
    out["huge knorm dim"] = v
    v = _doc("semi_dp_knorm")
    v["noise"]["params"]["space"] = {"kind": "contingency", "r": 10**6, "c": 10**6}
    v["noise"]["params"]["dim"] = 10**12
    out["huge contingency"] = v
    return out


@pytest.mark.parametrize("name", sorted(_tiny_doc_variants()))
def test_small_documents_cannot_ask_for_large_allocations(name, work):
    text = json.dumps(_tiny_doc_variants()[name])
    assert len(text) < 3000
    # refused before the sizes they name are acted on: little memory, few calls
    with work.python_calls() as calls, work.peak_memory() as mem:
        with pytest.raises(InvariantDPError):
            Release.from_json(text)
    assert calls.calls < 5000
    assert mem.peak < 10 * 2**20, mem.peak


def test_text_and_cell_limits():
    r = RELEASES["semi_dp_gaussian"]
    text = r.to_json()
    with pytest.raises(InvariantDPError, match="at most 100 are allowed"):
        Release.from_json(text, max_bytes=100)
    with pytest.raises(InvariantDPError, match=r"`value\.shape`.*at most 5"):
        Release.from_json(text, max_cells=5)
    with pytest.raises(TypeError, match="`text`"):
        Release.from_json({"format": "invariantdp.Release"})


def test_load_refuses_big_and_special_files(tmp_path):
    r = RELEASES["odds_ratio_release"]
    path = r.save(tmp_path / "r.json")
    assert Release.load(path) == r
    with pytest.raises(InvariantDPError, match="at most 10 are allowed"):
        Release.load(path, max_bytes=10)
    with pytest.raises(InvariantDPError, match="not a regular file"):
        Release.load(tmp_path)
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "fifo"
        os.mkfifo(fifo)
        with pytest.raises(InvariantDPError, match="not a regular file"):
            Release.load(fifo)  # before: open() blocked forever waiting for a writer
    with pytest.raises(OSError):
        Release.load(tmp_path / "missing.json")


def test_from_dict_does_not_modify_or_alias_its_input():
    d = _doc("semi_dp_gaussian")
    before = copy.deepcopy(d)
    r = Release.from_dict(d)
    assert d == before
    d["metadata"]["note"] = "changed"
    d["noise"]["params"]["scale"] = 99.0
    assert "note" not in r.metadata and r.noise.params["scale"] != 99.0


# ---------------------------------------------------------------------------
# mutated valid documents: only ValueError / TypeError, quickly, in bounded memory
# ---------------------------------------------------------------------------

BASES = [
    "odds_ratio_release",
    "semi_dp_gaussian",
    "semi_dp_knorm",
    "knorm",
    "discrete_laplace_mechanism",
    "projected_gaussian-nested",
    "projected_laplace-sparse",
    "extended_gaussian-general",
    "projected_gaussian-totals",
    "permutation_swap",
    "conditional_release-inequalities",
]
BASE_DOCS = {name: RELEASES[name].to_dict() for name in BASES}

DEEP = "__deep__"
HOSTILE = [
    None,
    True,
    False,
    "12.5",
    "",
    "x" * 100_000,
    -1,
    0,
    1,
    2,
    0.5,
    -0.0,
    1e308,
    -1e308,
    5e-324,
    2**53 + 1,
    2**64,
    2**1100,
    float("nan"),
    float("inf"),
    [],
    {},
    [1, 2],
    [[1.0]],
    {"a": 1},
    [2**40, 2**40],
    [10**9],
    "<U1000000000",
    "V8",
    "|O",
    "<c16",
    DEEP,
]


def _positions(doc):
    """(container, key) of every field, the first three entries of each list only."""
    out, queue = [], [doc]
    while queue:
        node = queue.pop(0)
        items = list(node.items()) if isinstance(node, dict) else list(enumerate(node))[:3]
        for k, v in items:
            out.append((node, k))
            if isinstance(v, dict | list):
                queue.append(v)
    return out


@st.composite
def mutated_documents(draw):
    doc = copy.deepcopy(BASE_DOCS[draw(st.sampled_from(BASES))])
    for _ in range(draw(st.integers(1, 3))):
        positions = _positions(doc)
        if not positions:
            break
        node, key = positions[draw(st.integers(0, len(positions) - 1))]
        action = draw(st.sampled_from(["replace", "replace", "delete", "add", "huge"]))
        if action == "delete":
            del node[key]
        # values are copied: a later mutation must not change the shared hostile values
        elif action == "add" and isinstance(node, dict):
            name = draw(st.sampled_from(["extra", "scale", "structure", "sparse", "kind"]))
            node[name] = copy.deepcopy(draw(st.sampled_from(HOSTILE)))
        elif action == "huge" and isinstance(node[key], int | list):
            huge = draw(st.sampled_from([2**40, 10**12, [2**31, 2**31], [10**6] * 3]))
            node[key] = copy.deepcopy(huge)
        else:
            node[key] = copy.deepcopy(draw(st.sampled_from(HOSTILE)))
    return doc


def _text_of(doc):
    text = json.dumps(doc)  # NaN and Infinity become the non-strict tokens
    return text.replace(json.dumps(DEEP), "[" * 20_000 + "]" * 20_000)


def check_mutated(doc, work):
    # bounded work whatever the document names (a loop over a huge size would show in the
    # calls, a huge array in the memory)
    with work.python_calls() as calls, work.peak_memory() as mem:
        for load in (lambda: Release.from_dict(doc), lambda: Release.from_json(_text_of(doc))):
            try:
                r = load()
            except (ValueError, TypeError):
                continue
            # whatever is accepted is a valid release: it round-trips exactly
            assert Release.from_json(r.to_json()) == r
    assert calls.calls < 200_000
    assert mem.peak < 64 * 2**20, mem.peak


@given(doc=mutated_documents())
def test_mutated_documents_raise_only_value_or_type_errors(doc, work):
    check_mutated(doc, work)


@pytest.mark.slow
@SLOW
@given(doc=mutated_documents())
def test_mutated_documents_raise_only_value_or_type_errors_slow(doc, work):
    check_mutated(doc, work)


def test_mutation_strategy_reaches_the_validators():
    # sanity: the hostile values of the strategy are refused when put in typical places
    d = copy.deepcopy(BASE_DOCS["semi_dp_gaussian"])
    d["noise"]["params"]["invariants"]["shape"] = [2**31, 2**31]
    with pytest.raises(ValueError, match=r"`noise\.params\.invariants\.shape`"):
        Release.from_dict(d)


def test_general_invariants_with_more_entries_than_cells_round_trip():
    # a swap's invariants hold two entries per cell: a document of 40,000 cells with
    # 80,000 matrix entries is backed by its own text and must read back (it was
    # refused above 65,536 entries, so no census-sized swap release round-tripped)
    n = 40_000
    rows = np.concatenate([np.zeros(n, dtype=np.int64), 1 + np.arange(n) // 2])
    cols = np.concatenate([np.arange(n), np.arange(n)])
    C = sparse.csr_array((np.ones(2 * n), (rows, cols)), shape=(1 + n // 2, n))
    x = np.arange(n, dtype=float) % 7
    inv = Invariants(C, None, (n,)).with_values(C @ x)
    rel = Release(
        value=x,
        mechanism="user",
        noise=NoiseLaw("discrete_laplace", {"scale": 1.0}),
        guarantee=PrivacyGuarantee("epsilon-DP", {"epsilon": 1.0}),
        invariants=inv,
        data_shape=(n,),
    )
    back = Release.from_json(rel.to_json())
    assert back.invariants == inv
    assert np.array_equal(back.value, rel.value)


# ---------------------------------------------------------------------------
# Release.from_json accepted overstated guarantees (25 of 70 edited documents): each
# family checks its claim against the exact privacy its noise gives, for the neighbours
# its structured adjacency states
# ---------------------------------------------------------------------------


def _claim(doc, definition, params):
    doc["guarantee"]["definition"] = definition
    doc["guarantee"]["params"] = params
    return doc


def test_laplace_claims_are_checked_against_the_exact_profile():
    d = _secure_doc(lambda: M.discrete_laplace_mechanism([1, 2], epsilon=1.0, rng=1))
    _refused(
        _claim(d, "(epsilon, delta)-DP", {"epsilon": 0.5, "delta": 0.2}),
        r"`guarantee\.params\.epsilon` \(0\.5\) claims more .* exact delta is 0\.2876",
    )
    assert Release.from_dict(_claim(d, "(epsilon, delta)-DP", {"epsilon": 0.5, "delta": 0.2877}))
    d = _secure_doc(lambda: M.laplace_mechanism([1.0, 2.0], epsilon=1.0, rng=1))
    _refused(
        _claim(d, "(epsilon, delta)-DP", {"epsilon": 0.0, "delta": 0.35}),
        r"exact delta is 0\.3934693",
    )
    assert Release.from_dict(_claim(d, "(epsilon, delta)-DP", {"epsilon": 0.0, "delta": 0.3935}))
    # secure: the exact profile plus the run time's share
    from invariantdp.privacy import discrete_laplace_delta

    r = M.discrete_laplace_mechanism([1, 2], epsilon=1.0, secure=True)
    d = json.loads(r.to_json())
    tv = d["guarantee"]["params"]["timing_tv"]
    exact = discrete_laplace_delta(epsilon=0.5, scale=1.0)
    _claim(d, "(epsilon, delta)-DP", {"epsilon": 0.5, "delta": exact * 0.999, "timing_tv": tv})
    _refused(d, "claims more privacy")
    d["guarantee"]["params"]["delta"] = exact * (1 + 1e-6) + 2 * tv
    Release.from_dict(d)


@pytest.mark.parametrize(
    "make, definition, params",
    [
        (
            lambda: M.discrete_gaussian_mechanism([1, 2], rho=0.5, rng=1),
            "epsilon-DP",
            {"epsilon": 100.0},
        ),
        (lambda: M.gaussian_mechanism([1.0], mu=1.0, rng=1), "epsilon-DP", {"epsilon": 100.0}),
        (lambda: M.discrete_laplace_mechanism([1, 2], epsilon=1.0, rng=1), "GDP", {"mu": 50.0}),
        (lambda: M.discrete_laplace_mechanism([1, 2], epsilon=1.0, rng=1), "zCDP", {"rho": 50.0}),
        (
            lambda: M.discrete_laplace_mechanism([1, 2], epsilon=1.0, rng=1),
            "f-DP",
            {"tradeoff": {"kind": "gaussian", "mu": 50.0}},
        ),
        (lambda: M.laplace_mechanism([1.0], epsilon=1.0, rng=1), "GDP", {"mu": 50.0}),
        (lambda: M.tulap_mechanism([3.0], epsilon=1.0, delta=0.1, rng=1), "zCDP", {"rho": 50.0}),
        (
            lambda: M.permutation_swap(SWAP_DF, swap="county", swap_rate=0.5, rng=1)[1],
            "zCDP",
            {"rho": 50.0},
        ),
    ],
)
def test_a_guarantee_in_a_definition_the_noise_does_not_support_is_refused(
    make, definition, params
):
    d = _claim(_secure_doc(make), definition, params)
    _refused(d, r"`guarantee\.definition` \('" + re.escape(definition) + r"'\) is not a guarantee")


def test_an_f_dp_guarantee_is_converted_exactly_where_it_is_a_known_one():
    d = _secure_doc(lambda: M.discrete_laplace_mechanism([1, 2], epsilon=1.0, rng=1))
    f = {"kind": "eps_delta", "epsilon": 0.5, "delta": 0.2}
    _refused(_claim(d, "f-DP", {"tradeoff": f}), r"exact delta is 0\.2876")
    f["delta"] = 0.2877  # f_{0.5, 0.2877} is (0.5, 0.2877)-DP: true
    assert Release.from_dict(_claim(d, "f-DP", {"tradeoff": f})).check_guarantee()
    g = _secure_doc(lambda: M.gaussian_mechanism([1.0], mu=1.0, rng=1))
    _refused(
        _claim(g, "f-DP", {"tradeoff": {"kind": "gaussian", "mu": 0.5}}),
        r"`guarantee\.params\.tradeoff\.mu` \(0\.5\) claims more privacy .* mu = 1",
    )
    assert Release.from_dict(_claim(g, "f-DP", {"tradeoff": {"kind": "gaussian", "mu": 1.0}}))
    group = {"kind": "group", "base": {"kind": "gaussian", "mu": 0.5}, "k": 2}
    _refused(_claim(g, "f-DP", {"tradeoff": group}), r"is not a guarantee gaussian noise")


def _old_format(release):
    """The document the previous version wrote: the adjacency in words, the oldest version."""
    d = json.loads(release.to_json())
    adj = release.guarantee.neighbours
    # a relation in words was all the previous version wrote (its numbers in the metadata)
    if adj is not None:
        d["guarantee"]["adjacency"] = adj.relation or adj.describe()
    timed = release.guarantee.definition == "zCDP" and "timing_tv" in release.guarantee.params
    d["version"] = 3 if timed else (1 if release.labels is None else 2)
    return d


@pytest.mark.parametrize("value", [None, -1, 0, "1", True, -0.5])
def test_a_recorded_sensitivity_of_the_wrong_type_or_range_is_refused(value):
    r = M.laplace_mechanism([1.0, 2.0], epsilon=1.0, rng=1)
    for d in (_old_format(r), json.loads(r.to_json())):
        if value is None:
            if isinstance(d["guarantee"]["adjacency"], dict):
                continue  # the adjacency states the neighbours: the metadata may drop them
            del d["metadata"]["sensitivity"]
            _refused(d, r"`guarantee\.adjacency` .* must state the neighbours")
        else:
            d["metadata"]["sensitivity"] = value
            _refused(d, r"`metadata\.sensitivity` \(")
        if isinstance(d["guarantee"]["adjacency"], dict) and value is not None:
            d = json.loads(r.to_json())
            d["guarantee"]["adjacency"]["sensitivity"] = value
            _refused(d, r"`guarantee\.adjacency\.sensitivity` \(")


def test_a_rescaled_sensitivity_beside_words_that_disagree_is_refused():
    r = M.laplace_mechanism([1.0, 2.0], epsilon=1.0, rng=1)
    old = _old_format(r)  # the words still say "at most 1"
    old["metadata"]["sensitivity"] = 0.01
    old["guarantee"]["params"]["epsilon"] = 0.01
    _refused(old, r"`guarantee\.adjacency` .* must state the neighbours")
    new = json.loads(r.to_json())
    new["guarantee"]["params"]["epsilon"] = 0.01
    new["metadata"]["sensitivity"] = 0.01
    _refused(new, r"`metadata\.sensitivity` \(0\.01\) differs from `guarantee\.adjacency")
    # the structured adjacency holds the number; the words shown are rendered from it
    new["metadata"]["sensitivity"] = 1.0
    new["guarantee"]["adjacency"]["sensitivity"] = 0.01
    _refused(new, r"`metadata\.sensitivity` \(1\.0\) differs")
    del new["metadata"]["sensitivity"]
    assert "at most 0.01 in l1" in Release.from_dict(new).guarantee.adjacency


@pytest.mark.parametrize("edit", ["l2", "linf", "delete"])
def test_a_changed_or_deleted_norm_is_refused(edit):
    r = M.laplace_mechanism([1.0, 2.0], epsilon=1.0, rng=1)
    old = _old_format(r)
    if edit == "delete":
        del old["metadata"]["norm"]
    else:
        old["metadata"]["norm"] = edit
    _refused(old, r"`guarantee\.adjacency` .* must state the neighbours")
    new = json.loads(r.to_json())
    if edit == "delete":
        del new["guarantee"]["adjacency"]["norm"]
        _refused(new, r"`guarantee\.adjacency` is missing the required key\(s\) 'norm'")
    else:
        new["guarantee"]["adjacency"]["norm"] = edit
        _refused(new, r"`metadata\.norm` \('l1'\) differs")
        del new["metadata"]["norm"]
        _refused(new, r"`guarantee\.adjacency\.norm` \('" + edit + r"'\) is not the norm laplace")


@pytest.mark.parametrize("words", ["", "any two data sets"])
def test_an_adjacency_in_free_words_is_refused(words):
    for make in (
        lambda: M.laplace_mechanism([1.0, 2.0], epsilon=1.0, rng=1),
        lambda: M.discrete_gaussian_mechanism([1, 2], rho=0.5, secure=True),
        lambda: M.odds_ratio_release([[12, 5], [4, 9]], epsilon=1.0, rng=1),
    ):
        r = make()
        for d in (_old_format(r), json.loads(r.to_json())):
            d["guarantee"]["adjacency"] = words
            _refused(d, r"`guarantee\.adjacency` .* must state the neighbours")


def test_tulap_coordinates_changed_is_stated_once():
    r = M.tulap_mechanism([3.0, 4.0], epsilon=1.0, rng=1)
    assert r.guarantee.params["coordinates_changed"] == 2 and r.guarantee.params["epsilon"] == 2
    for d in (_old_format(r), json.loads(r.to_json())):
        d["guarantee"]["params"].update(coordinates_changed=1, epsilon=1.0)
        _refused(d, r"`guarantee\.params\.coordinates_changed` \(1\) differs")
        d["metadata"]["coordinates_changed"] = 1  # both records edited: words or adjacency
        if isinstance(d["guarantee"]["adjacency"], dict):
            _refused(d, r"`metadata\.coordinates_changed` \(1\) differs")
        else:
            _refused(d, r"`guarantee\.adjacency` .* must state the neighbours")
    d = json.loads(r.to_json())
    d["guarantee"]["adjacency"]["sensitivity"] = 2.0  # more than the law's scale protects
    del d["metadata"]["sensitivity"]
    _refused(d, r"`guarantee\.adjacency\.sensitivity` \(2\.0\) exceeds the Tulap scale")


@pytest.mark.parametrize("b", [0, 1, 2])
def test_a_swap_with_an_edited_largest_stratum_is_refused(b):
    from invariantdp.privacy import swapping_epsilon

    r = M.permutation_swap(SWAP_DF, swap="county", swap_rate=0.5, rng=1)[1]
    d = json.loads(r.to_json())
    assert d["guarantee"]["params"]["b"] == d["metadata"]["b"] == 6
    d["guarantee"]["params"]["b"] = b
    d["guarantee"]["params"]["epsilon"] = 0.0 if b == 0 else 1.0
    _refused(d, r"`guarantee\.params\.b` \(" + str(b) + r"\) differs from `metadata\.b` \(6\)")
    # both records edited, with the epsilon that b would give: the released table holds 6
    d["metadata"]["b"] = b
    d["guarantee"]["params"]["epsilon"] = 0.0 if b < 2 else swapping_epsilon(b, 0.5)
    _refused(d, r"`guarantee\.params\.b` \(" + str(b) + r"\) must be (6|0 or >= 2)")
    del d["metadata"]["b"]
    d["guarantee"]["params"]["b"] = 6
    _refused(d, r"`guarantee\.params\.epsilon` \(.*\) claims more privacy")


def test_sigma_at_the_ends_of_the_double_range_gives_clear_errors():
    r = M.discrete_gaussian_mechanism([1, 2], rho=0.5, rng=1)
    d = json.loads(r.to_json())
    d["noise"]["params"]["sigma"] = 1e200  # more noise than rho = 0.5 needs: a true claim
    assert Release.from_dict(d).check_guarantee()
    d["noise"]["params"]["sigma"] = 5e-324
    _refused(d, r"`noise\.params\.sigma` \(5e-324\) is too small .*\(rho is infinite")
    g = json.loads(M.gaussian_mechanism([1.0], mu=1.0, rng=1).to_json())
    g["noise"]["params"]["scale"] = 5e-324
    _refused(g, r"`noise\.params\.scale` \(5e-324\) is too small .*\(mu is infinite")
    g["noise"]["params"]["scale"] = 1e200
    assert Release.from_dict(g).check_guarantee()


def test_data_shape_must_match_an_identity_query():
    d = json.loads(M.laplace_mechanism([1.0, 2.0], epsilon=1.0, rng=1).to_json())
    assert d["metadata"]["query"] == "identity" and d["query"] is None
    d["data_shape"] = [3]
    _refused(d, r"`data_shape` \(\[3\]\) must be the shape of `value` \[2\]")


# the systematic review: every mechanism's document, each field edited in turn


def _main_param(params):
    for key in ("rho", "mu", "epsilon"):
        if key in params:
            return key
    return None


def _scaled_claim(d, factor):
    """The main privacy parameter times ``factor`` (rho by its square); delta kept."""
    p = d["guarantee"]["params"]
    key = _main_param(p)
    p[key] = p[key] * (factor**2 if key == "rho" else factor)
    for k in ("epsilon_per_coordinate", "mu"):
        if k in p and k != key:
            p[k] = p[k] * factor
    return d


def _other_definition(d):
    family = d["noise"]["family"]
    if family in ("gaussian", "discrete_gaussian", "grid_gaussian") or "gaussian" in family:
        return _claim(d, "epsilon-DP", {"epsilon": 1e-3})
    if family in ("tulap", "permutation"):
        return _claim(d, "zCDP", {"rho": 1e-6})
    return _claim(d, "GDP", {"mu": 1e-3})


def _edits(d):
    """``name -> edited document`` of every edit that overstates or changes the neighbours."""
    out = {"claim / 4": _scaled_claim(copy.deepcopy(d), 0.25)}
    if _main_param(d["guarantee"]["params"]) == "epsilon":
        e = _scaled_claim(copy.deepcopy(d), 0.25)
        e["guarantee"]["params"]["delta"] = 0.0
        out["claim / 4, no delta"] = e
    out["other definition"] = _other_definition(copy.deepcopy(d))
    structured = isinstance(d["guarantee"]["adjacency"], dict)
    for words in ("", "any two data sets"):
        if d["noise"]["family"] != "permutation":
            e = copy.deepcopy(d)
            e["guarantee"]["adjacency"] = words
            out[f"adjacency {words!r}"] = e
    if "sensitivity" in d["metadata"]:
        for bad in (-1, 0, "1", True):
            e = copy.deepcopy(d)
            e["metadata"]["sensitivity"] = bad
            out[f"metadata.sensitivity {bad!r}"] = e
        e = _scaled_claim(copy.deepcopy(d), 0.01)
        e["metadata"]["sensitivity"] = d["metadata"]["sensitivity"] * 0.01
        out["sensitivity * 0.01 beside the old neighbours"] = e
    if structured:
        e = _scaled_claim(copy.deepcopy(d), 0.01)
        e["guarantee"]["adjacency"]["sensitivity"] *= 0.01
        out["adjacency sensitivity * 0.01 beside the metadata"] = e
        e = copy.deepcopy(d)
        norm = e["guarantee"]["adjacency"]["norm"]
        e["guarantee"]["adjacency"]["norm"] = "l2" if norm != "l2" else "l1"
        e["metadata"].pop("norm", None)
        out["adjacency norm changed"] = e
        e = copy.deepcopy(d)
        del e["guarantee"]["adjacency"]["norm"]
        out["adjacency norm deleted"] = e
    elif "norm" in d["metadata"]:
        e = copy.deepcopy(d)
        e["metadata"]["norm"] = "l2" if e["metadata"]["norm"] != "l2" else "l1"
        out["metadata norm changed"] = e
        e = copy.deepcopy(d)
        del e["metadata"]["norm"]
        out["metadata norm deleted"] = e
    n = d["noise"]["params"]
    e = copy.deepcopy(d)
    if "scale" in n and d["noise"]["family"] != "tulap":
        e["noise"]["params"]["scale"] = n["scale"] / 100
        if "grid" in n:
            e["noise"]["params"]["scale"] = max(n["scale"] / 100, n["grid"])
        out["noise scale / 100"] = e
    elif "sigma" in n:
        e["noise"]["params"]["sigma"] = n["sigma"] / 100
        out["noise sigma / 100"] = e
    elif "b" in n and n["b"] > 0:
        e["noise"]["params"]["b"] = n["b"] ** 4
        out["Tulap b ** 4"] = e
    elif "swap_rate" in n:
        e["noise"]["params"]["swap_rate"] = 0.999
        out["swap rate 0.999"] = e
    if "coordinates_changed" in d["guarantee"]["params"]:
        e = _scaled_claim(copy.deepcopy(d), 0.5)
        e["guarantee"]["params"]["coordinates_changed"] = 1
        out["coordinates_changed 2 -> 1"] = e
    if "b" in d["guarantee"]["params"]:
        e = copy.deepcopy(d)
        e["guarantee"]["params"].update(b=0, epsilon=0.0)
        out["swap b -> 0"] = e
        e = copy.deepcopy(e)
        e["metadata"]["b"] = 0
        out["swap b -> 0 in params and metadata"] = e
        e = copy.deepcopy(d)
        del e["guarantee"]["params"]["b"], e["metadata"]["b"]
        e["guarantee"]["params"]["epsilon"] = 0.01
        out["swap b deleted"] = e
    return out


def _review_releases():
    out = {name: r for name, r in RELEASES.items() if not name.startswith("conditional")}
    out["conditional_release-laplace"] = RELEASES["conditional_release-laplace"]
    out["conditional_release-gaussian"] = RELEASES["conditional_release-gaussian"]
    secure = {
        "laplace": lambda: M.laplace_mechanism([1.0, 2.0], epsilon=1.0, secure=True),
        "gaussian": lambda: M.gaussian_mechanism([1.0, 2.0], mu=1.0, secure=True),
        "discrete_laplace": lambda: M.discrete_laplace_mechanism([1, 2], epsilon=1.0, secure=True),
        "discrete_gaussian": lambda: M.discrete_gaussian_mechanism([1, 2], rho=0.5, secure=True),
        "tulap-2": lambda: M.tulap_mechanism([3.0, 4.0], epsilon=1.0, delta=0.01, secure=True),
    }
    for name, make in secure.items():
        out[f"secure {name}"] = make()
    return out


REVIEW = _review_releases()


@pytest.mark.parametrize("name", sorted(REVIEW))
def test_every_edit_that_overstates_or_changes_neighbours_is_refused(name):
    from invariantdp.mechanisms._base import plain_release

    release = plain_release(REVIEW[name])
    new = json.loads(release.to_json())
    old = _old_format(release)
    # truthful documents round-trip, in this version's form and in the previous version's
    assert Release.from_dict(new) == release
    assert Release.from_dict(old) == release
    accepted, tried = [], 0
    for form, doc in (("new", new), ("old", old)):
        for what, edited in _edits(doc).items():
            # the previous version's words name a relation but no number for these
            # mechanisms: their sensitivity is the one the metadata recorded
            adj = release.guarantee.neighbours
            if form == "old" and "0.01" in what and adj is not None and adj.relation:
                continue
            tried += 1
            try:
                Release.from_dict(edited)
            except InvariantDPError:
                continue
            accepted.append(f"{form}: {what}")
    assert tried >= 8
    assert accepted == []


_EXTREMES = (1e200, 1e300, 5e-324, 1e-300, 1.7976931348623157e308)


def _extreme_edits(d):
    """Every number that sets the noise or the claim, at the ends of the double range."""
    out = []
    for key in ("scale", "sigma", "grid", "b", "q", "swap_rate"):
        if key in d["noise"]["params"]:
            for v in (*_EXTREMES, 0.999999, 1e-12):
                e = copy.deepcopy(d)
                e["noise"]["params"][key] = v
                out.append(e)
    if isinstance(d["guarantee"]["adjacency"], dict):
        for v in _EXTREMES:
            e = copy.deepcopy(d)
            e["guarantee"]["adjacency"]["sensitivity"] = v
            e["metadata"].pop("sensitivity", None)
            out.append(e)
    for key in ("epsilon", "delta", "mu", "rho", "timing_tv"):
        if key in d["guarantee"]["params"]:
            for v in (*_EXTREMES, 0.0, 0.999999):
                e = copy.deepcopy(d)
                e["guarantee"]["params"][key] = v
                out.append(e)
    for key in ("grid_sensitivity", "grid_sensitivity_squared"):
        if key in d["metadata"]:
            for v in (0, 1, 2**53):
                e = copy.deepcopy(d)
                e["metadata"][key] = v
                out.append(e)
    return out


@pytest.mark.parametrize("name", sorted(REVIEW))
def test_numbers_at_the_ends_of_the_double_range_are_read_or_refused_clearly(name):
    """sigma 1e-300 raised OverflowError and 5e-324 ZeroDivisionError: now read or refused."""
    from invariantdp.mechanisms._base import plain_release

    d = json.loads(plain_release(REVIEW[name]).to_json())
    for e in _extreme_edits(d):
        try:
            Release.from_dict(e)
        except InvariantDPError:
            pass
