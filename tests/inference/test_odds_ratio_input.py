"""A table given where the released statistic is expected (issue 22, section 3)."""

import numpy as np
import pandas as pd
import pytest

from invariantdp import InvariantDPError, umpu_odds_ratio_test
from invariantdp.mechanisms import odds_ratio_release

BERKELEY = [[1198, 1493], [557, 1278]]  # admitted / rejected by sex


@pytest.mark.parametrize(
    "table",
    [BERKELEY, np.array(BERKELEY), pd.DataFrame(BERKELEY, index=["men", "women"])],
    ids=["list", "array", "DataFrame"],
)
def test_a_table_as_statistic_points_to_odds_ratio_release(table):
    with pytest.raises(TypeError, match=r"got a 2 x 2 table: release the confidential") as info:
        umpu_odds_ratio_test(table, epsilon=1)
    msg = str(info.value)
    assert "`invariantdp.mechanisms.odds_ratio_release(table, epsilon=...)`" in msg
    assert "`margins` is required" not in msg
    # the table is confidential: none of its counts is echoed
    assert not any(str(v) in msg for v in np.ravel(BERKELEY))
    # with margins too, the same pointer
    with pytest.raises(TypeError, match="odds_ratio_release"):
        umpu_odds_ratio_test(table, (2691, 1835, 1755, 2771), epsilon=1)


def test_the_pointed_path_works():
    release = odds_ratio_release(BERKELEY, epsilon=1.0, rng=1)
    res = umpu_odds_ratio_test(release)
    assert 0.0 <= res.pvalue <= 1.0 and res.margins == (2691, 1835, 1755, 2771)


def test_other_statistics_keep_their_messages():
    with pytest.raises(TypeError, match="got a 2 x 3 table"):
        umpu_odds_ratio_test(np.ones((2, 3)), epsilon=1)
    with pytest.raises(InvariantDPError, match="`margins` .* is required with a released") as info:
        umpu_odds_ratio_test(14.3, epsilon=1)
    assert "odds_ratio_release(table, epsilon=...)" in str(info.value)
    with pytest.raises(TypeError, match="`statistic` must be a real number"):
        umpu_odds_ratio_test([1.0, 2.0], (20, 20, 20, 20), epsilon=1)


def test_four_counts_without_margins_point_to_odds_ratio_release():
    """The table written as x11, x12, x21, x22 (as the command line takes it)."""
    with pytest.raises(TypeError, match="got 4 numbers and no `margins`") as info:
        umpu_odds_ratio_test(np.ravel(BERKELEY).tolist(), epsilon=1)
    msg = str(info.value)
    assert "`invariantdp.mechanisms.odds_ratio_release(table, epsilon=...)`" in msg
    assert not any(str(v) in msg for v in np.ravel(BERKELEY))
