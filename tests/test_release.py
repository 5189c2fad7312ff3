import json

import numpy as np
import pytest

from invariantdp import Invariants, NoiseLaw, PrivacyGuarantee, Release, one_way_margins


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
