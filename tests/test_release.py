import json
import re

import numpy as np
import pytest

from invariantdp import Invariants, NoiseLaw, PrivacyGuarantee, Release
from invariantdp.invariants import one_way_margins


def _release(value=None):
    inv = one_way_margins((2, 3)).of(np.array([[1, 2, 3], [4, 5, 6]]))
    return Release(
        value=np.array([[1.25, 2.0 / 3.0, -0.1], [4.0, 5e-17, 6.123456789012345]])
        if value is None
        else value,
        mechanism="test",
        noise=NoiseLaw("gaussian", {"scale": 0.7}),
        guarantee=PrivacyGuarantee("GDP", {"mu": 0.5}, semi_adjacent_parameter=4),
        invariants=inv,
        data_shape=(2, 3),
        metadata={"note": "x"},
    )


def test_json_roundtrip_is_exact():
    r = _release()
    again = Release.from_json(r.to_json())
    assert again == r
    np.testing.assert_array_equal(again.value, r.value)
    assert again.value.dtype == r.value.dtype
    assert again.invariants == r.invariants
    assert again.guarantee.tradeoff()(0.3) == pytest.approx(r.guarantee.tradeoff()(0.3))


def test_integer_values_keep_their_dtype():
    r = _release(np.array([3, -2, 7], dtype=np.int64))
    again = Release.from_json(r.to_json())
    assert again.value.dtype == np.int64


def test_value_is_read_only_copy():
    v = np.array([1.0, 2.0])
    r = _release(v)
    v[0] = 99.0
    assert r.value[0] == 1.0
    with pytest.raises(ValueError):
        r.value[0] = 3.0


def test_save_and_load(tmp_path):
    r = _release()
    path = r.save(tmp_path / "release.json")
    assert Release.load(path) == r
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_rejects_foreign_json():
    with pytest.raises(ValueError, match="not an invariantdp release"):
        Release.from_json(json.dumps({"format": "other"}))
    d = _release().to_dict()
    d["version"] = 999
    with pytest.raises(ValueError, match="newer"):
        Release.from_dict(d)


def test_unknown_noise_family():
    with pytest.raises(ValueError, match="no registered distribution"):
        NoiseLaw("mystery", {}).distribution()


def test_invariants_check_and_margins():
    inv = one_way_margins((2, 2)).of([[3, 1], [2, 4]])
    np.testing.assert_array_equal(inv.values, [4, 6, 5, 5])
    inv.check([[2, 2], [3, 3]])
    with pytest.raises(ValueError, match="does not satisfy the invariants"):
        inv.check([[3, 2], [2, 4]])
    with pytest.raises(ValueError, match="`values` must have shape"):
        Invariants(np.eye(3), [1, 2])


# ---------------------------------------------------------------------------
# nothing a release hands out can be changed (issue 10, section 3)
# ---------------------------------------------------------------------------


def _mutations(r):
    """Attempts to change a release through what it hands out."""
    return {
        "value": lambda: r.value.__setitem__((0, 0), 1.0),
        "invariants.matrix": lambda: r.invariants.matrix.__setitem__((0, 0), 100.0),
        "invariants.values": lambda: r.invariants.values.__setitem__(0, 1.0),
        "invariants.structure": lambda: r.invariants.structure.__setitem__("kind", "totals"),
        "noise.params": lambda: r.noise.params.__setitem__("scale", 3.0),
        "noise.params nested": lambda: r.noise.params["invariants"]["shape"].append(3),
        "guarantee.params": lambda: r.guarantee.params.__setitem__("mu", 9.0),
        "metadata": lambda: r.metadata.__setitem__("randomness", "secure"),
        "metadata.pop": lambda: r.metadata.pop("randomness", None),
    }


@pytest.mark.parametrize("what", sorted(_mutations(None)))
def test_release_fields_are_read_only_and_caches_unaffected(what):
    from invariantdp.mechanisms import semi_dp_gaussian

    t = np.array([[10, 4, 6], [3, 8, 9]])
    r = semi_dp_gaussian(t, mu=1.0, rng=0)
    before = r.to_json()
    with pytest.raises((ValueError, TypeError)):
        _mutations(r)[what]()
    assert r.to_json() == before
    # before the fix, r.invariants.matrix[0, 0] = 100 changed every later release of that shape
    later = semi_dp_gaussian(t, mu=1.0, rng=0)
    assert later == r
    np.testing.assert_array_equal(later.invariants.apply(t), [20, 20, 13, 12, 15])


def test_to_dict_returns_an_independent_mutable_copy():
    r = _release()
    d = r.to_dict()
    d["metadata"]["note"] = "changed"
    d["noise"]["params"]["scale"] = 5.0
    d["invariants"]["values"][0] = -1.0
    assert r.metadata["note"] == "x" and r.noise.params["scale"] == 0.7
    assert r.invariants.values[0] == 6.0


def test_constructor_copies_its_inputs():
    params = {"scale": 0.7, "nested": [1, 2]}
    meta = {"tags": ["a"]}
    query = np.ones((1, 2))
    r = Release(
        value=np.zeros(1),
        mechanism="m",
        noise=NoiseLaw("gaussian", params),
        guarantee=PrivacyGuarantee("GDP", {"mu": 1.0}),
        query=query,
        data_shape=(2,),
        metadata=meta,
    )
    params["nested"].append(3)
    meta["tags"].append("b")
    query[0, 0] = 5.0
    assert r.noise.params["nested"] == [1, 2] and r.metadata["tags"] == ["a"]
    assert r.query[0, 0] == 1.0 and not r.query.flags.writeable


def test_pickle_and_deepcopy_keep_working():
    import copy
    import pickle

    r = _release()
    assert pickle.loads(pickle.dumps(r)) == r
    assert copy.deepcopy(r) == r


def test_summary_is_short_for_thousands_of_cells(rng):
    from invariantdp.invariants import nested_totals
    from invariantdp.mechanisms import projected_gaussian

    n = 20_000
    state = np.repeat(np.arange(20), n // 20)
    county = np.tile(np.repeat(np.arange(50), n // 20 // 50), 20)
    inv = nested_totals([state, county])
    r = projected_gaussian(rng.integers(0, 100, size=n).astype(float), inv, mu=1.0, rng=0)
    text = str(r.summary())
    assert len(text) < 2500, len(text)
    assert max(len(line) for line in text.splitlines()) < 250
    noise_line = next(line for line in text.splitlines() if line.startswith("noise"))
    assert "nested_totals invariants on shape (20000,)" in noise_line


def test_summary_prints_the_randomness():
    secure = _release()
    meta = dict(secure.metadata, randomness="secure")
    r = Release(secure.value, "m", secure.noise, secure.guarantee, metadata=meta)
    assert re.search(r"randomness:\s+secure", str(r.summary()))
    meta["randomness"] = "simulation"
    r = Release(secure.value, "m", secure.noise, secure.guarantee, metadata=meta)
    assert r.simulation and "SIMULATION" in r.summary()


def test_save_gives_the_umask_permissions(tmp_path):
    import os
    import stat

    from invariantdp.mechanisms import odds_ratio_release

    r = odds_ratio_release([[12, 5], [4, 9]], epsilon=1.0, rng=1)
    old = os.umask(0o027)
    try:
        path = r.save(tmp_path / "r.json")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert Release.load(path) == r
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]
