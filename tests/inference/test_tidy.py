"""Results as plain data: to_dict() is strict-JSON safe, to_frame() is one tidy row."""

import json

import numpy as np
import pandas as pd
import pytest

import invariantdp as idp
from invariantdp.inference import PrivatizedLogLinear
from invariantdp.inference._tidy import json_safe
from invariantdp.mechanisms import semi_dp_gaussian


def _results():
    return [
        idp.ump_binomial_test(4.2, 10, 0.5, epsilon=1.0, alternative="greater"),
        idp.umpu_odds_ratio_test(
            12.3, (17, 13, 16, 14), epsilon=1.0, alternative="greater"
        ),  # interval to +inf
        PrivatizedLogLinear(
            semi_dp_gaussian([[60, 20], [25, 55]], mu=0.5, rng=3)
        ).test_independence(),
    ]


@pytest.mark.parametrize("index", range(3))
def test_to_dict_is_strict_json_and_to_frame_one_row(index):
    res = _results()[index]
    d = res.to_dict()
    back = json.loads(json.dumps(d, allow_nan=False))
    assert back["pvalue"] == pytest.approx(res.pvalue, rel=1e-15)
    frame = res.to_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame) == 1
    assert frame["pvalue"].iloc[0] == pytest.approx(res.pvalue, rel=1e-15)
    if "confidence_interval" in d:
        ci = res.confidence_interval(0.95)
        low, high = d["confidence_interval"]
        assert low == pytest.approx(ci.low) and (high is None) == np.isinf(ci.high)


def test_json_safe_maps_numbers_and_non_finite_values():
    got = json_safe({"a": np.float64(np.nan), "b": [np.int64(2), -np.inf], "c": np.bool_(True)})
    assert got == {"a": None, "b": [2, None], "c": True}


def test_an_unresolvable_estimate_is_none_not_an_error():
    """At epsilon 1e-9 the median-unbiased estimate is lost in rounding (it raises)."""
    import json

    from invariantdp import ump_binomial_test
    from invariantdp.exceptions import InvariantDPError

    res = ump_binomial_test(3, 10, 0.5, epsilon=1e-9)
    with pytest.raises(InvariantDPError):
        _ = res.estimate
    d = res.to_dict()
    assert d["estimate"] is None
    json.dumps(d, allow_nan=False)
    assert res.to_frame()["estimate"].isna().all()
