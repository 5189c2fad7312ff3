"""The structured adjacency: its words are rendered from its fields, and the fields checked."""

import math

import pytest

from invariantdp import InvariantDPError
from invariantdp.privacy import QueryAdjacency


def test_adjacency_words_are_rendered_from_the_fields():
    assert QueryAdjacency("l2", 2.0).describe() == (
        "query values differing by at most 2 in l2 norm"
    )
    tulap = QueryAdjacency("linf", 1.0, coordinates_changed=3)
    assert tulap.describe().endswith("in each coordinate (linf norm), in at most 3 coordinates")
    space = QueryAdjacency("l1", 2.0, space=True)
    assert "sensitivity space (largest l1 norm 2)" in space.describe()
    semi = QueryAdjacency("l2", 2.0, relation="semi-adjacent tables")
    assert semi.describe() == "semi-adjacent tables; query values differing by at most 2 in l2 norm"
    # the words follow the numbers: a changed sensitivity changes them
    assert QueryAdjacency("l1", 0.01).describe() != QueryAdjacency("l1", 1.0).describe()
    assert QueryAdjacency.from_doc("a", semi.to_dict()) == semi


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"norm": "l3", "sensitivity": 1.0}, r"`norm` \('l3'\) must be one of"),
        ({"norm": "l1", "sensitivity": -1}, r"`sensitivity` \(-1\) must be a finite number > 0"),
        ({"norm": "l1", "sensitivity": 0}, r"`sensitivity` \(0\) must be"),
        ({"norm": "l1", "sensitivity": "1"}, r"`sensitivity` \('1'\) must be"),
        ({"norm": "l1", "sensitivity": True}, r"`sensitivity` \(True\) must be"),
        ({"norm": "l1", "sensitivity": math.inf}, r"`sensitivity` \(inf\) must be"),
        ({"norm": "l1", "sensitivity": 1.0, "coordinates_changed": 0}, r"`coordinates_changed`"),
    ],
)
def test_adjacency_fields_are_validated(kwargs, match):
    with pytest.raises(InvariantDPError, match=match):
        QueryAdjacency(**kwargs)


@pytest.mark.parametrize(
    "key, value, match",
    [
        ("sensitivity", "1", r"`g\.sensitivity` \('1'\) must be a number"),
        ("sensitivity", True, r"`g\.sensitivity` \(True\) must be a number"),
        ("sensitivity", 0, r"`g\.sensitivity` \(0\) must be > 0"),
        ("norm", "l3", r"`g\.norm`"),
        ("space", 1, r"`g\.space` \(1\) must be true or false"),
        ("relation", 3, r"`g\.relation` \(3\) must be a string"),
    ],
)
def test_adjacency_documents_name_the_field(key, value, match):
    d = QueryAdjacency("l1", 1.0).to_dict()
    d[key] = value
    with pytest.raises(InvariantDPError, match=match):
        QueryAdjacency.from_doc("g", d)
