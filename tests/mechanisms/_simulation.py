"""A simulation nobody asked for warns (issue 22, section 4): the check shared by the tests."""

import contextlib

import pytest

from invariantdp.exceptions import SimulationWarning


@contextlib.contextmanager
def simulation_unless_seeded(rng, mechanism: str):
    """Nothing for a seeded call; for ``rng=None``, one SimulationWarning naming the mechanism,
    pointing at the line that called it (the test file)."""
    if rng is not None:
        yield
        return
    with pytest.warns(SimulationWarning, match=f"{mechanism} drew its noise") as rec:
        yield
    caller = rec.list[0].filename
    assert all(w.filename == caller for w in rec), "the warning points past the mechanism"
    assert "invariantdp" not in caller.split("tests")[-1], caller
