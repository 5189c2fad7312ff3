"""No silent simulation (issue 22, section 4).

Where a mechanism has an exact sampler, a call with neither ``rng`` nor
``secure`` makes the secure release, as the command line does; where none
exists, such a call makes a simulation and warns
(:class:`~invariantdp.exceptions.SimulationWarning`).  A seed, or
``secure=False``, says a simulation is intended: no warning.
"""

import warnings

import numpy as np
import pytest

from invariantdp import InvariantDPError, datasets
from invariantdp.exceptions import SimulationWarning
from invariantdp.invariants import totals
from invariantdp.mechanisms import (
    MECHANISMS,
    conditional_release,
    distributed_privatize,
    odds_ratio_release,
)

from ._simulation import simulation_unless_seeded

TABLE = np.array([[12, 5, 7], [4, 9, 6]])
VERTICES = np.array([[1.0, -1.0, 0.0, 0.0, 0.0, 0.0], [-1.0, 1.0, 0.0, 0.0, 0.0, 0.0]])


#: the privacy parameters of each mechanism of the registry
PRIVACY = {
    "laplace": {"epsilon": 1.0},
    "gaussian": {"mu": 1.0},
    "discrete_laplace": {"epsilon": 1.0},
    "discrete_gaussian": {"rho": 0.5},
    "tulap": {"epsilon": 1.0},
    "odds_ratio": {"epsilon": 1.0},
    "lp": {"epsilon": 1.0},
    "knorm": {"epsilon": 1.0},
    "projected_gaussian": {"mu": 1.0},
    "projected_laplace": {"epsilon": 1.0},
    "extended_gaussian": {"mu": 1.0},
    "extended_laplace": {"epsilon": 1.0},
    "semi_dp_gaussian": {"mu": 1.0},
    "semi_dp_knorm": {"epsilon": 1.0},
}


def _call(m, **randomness):
    """Run registry mechanism ``m`` on TABLE (its first two columns for the odds ratio)."""
    kw = {**PRIVACY[m.name], **randomness}
    if m.kind == "subspace":
        return m.function(TABLE, totals(np.zeros(TABLE.shape, dtype=int)), **kw)
    if m.kind == "lp":
        return m.function(TABLE.astype(float), 2, **kw)
    if m.kind == "knorm":
        return m.function(TABLE.ravel().astype(float), VERTICES, **kw)
    if m.kind == "odds_ratio":
        return m.function(TABLE[:, :2], **kw)
    return m.function(TABLE, **kw)


def test_every_mechanism_is_called():
    assert set(PRIVACY) == set(MECHANISMS)


EXACT = sorted(n for n, m in MECHANISMS.items() if m.exact)
FLOAT = sorted(n for n, m in MECHANISMS.items() if not m.exact)


def test_the_registry_splits_the_mechanisms_as_the_rule_does():
    assert EXACT == sorted(
        ["laplace", "gaussian", "discrete_laplace", "discrete_gaussian", "tulap", "odds_ratio"]
    )
    assert len(FLOAT) == 8


def test_odds_ratio_release_without_rng_is_the_secure_release():
    """The issue's call: `odds_ratio_release(table, epsilon=1.0)` quietly made a simulation."""
    table = datasets.berkeley_admissions()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        release = odds_ratio_release(table, epsilon=1.0)
    assert not release.simulation and release.metadata["randomness"] == "secure"
    assert "secrets" in release.metadata["sampler"]
    assert "timing_tv" in release.guarantee.params  # the guarantee of the secure sampler
    assert "SIMULATION" not in str(release.summary())


@pytest.mark.parametrize("name", EXACT)
def test_a_mechanism_with_an_exact_sampler_is_secure_by_default(name):
    m = MECHANISMS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        secure = _call(m)
        seeded = _call(m, rng=3)
        asked = _call(m, secure=False)
    assert secure.metadata["randomness"] == "secure" and not secure.simulation
    assert seeded.simulation and asked.simulation
    # a seed is a simulation and reproducible
    np.testing.assert_array_equal(seeded.value, _call(m, rng=3).value)


@pytest.mark.parametrize("name", FLOAT)
def test_a_mechanism_without_one_warns_unless_a_simulation_was_asked_for(name):
    m = MECHANISMS[name]
    with simulation_unless_seeded(None, m.function.__name__):
        unasked = _call(m)
    assert unasked.simulation
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _call(m, rng=3).simulation
        assert _call(m, secure=False).simulation
    with pytest.raises(InvariantDPError, match="has no exact sampler"):
        _call(m, secure=True)


@pytest.mark.parametrize(
    "call",
    [
        lambda: MECHANISMS["semi_dp_gaussian"].function(TABLE, mu=0.0),
        lambda: MECHANISMS["projected_laplace"].function(TABLE, totals([0, 0]), epsilon=1.0),
        lambda: MECHANISMS["lp"].function([1.0, 2.0], 3, epsilon=1.0),
    ],
    ids=["bad mu", "invariants of another size", "bad p"],
)
def test_a_refused_call_raises_its_error_alone(call):
    """The warning comes with a release: bad arguments raise first, and nothing else."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", SimulationWarning)
        with pytest.raises(InvariantDPError):
            call()


def test_conditional_release_warns_without_rng():
    total = totals([0, 0])
    with simulation_unless_seeded(None, "conditional_release"):
        r = conditional_release([30, 70], "discrete_laplace", total, epsilon=1.0, draws=5)
    assert r.simulation and r.value.sum() == 100


def test_distributed_privatize_follows_the_one_rule():
    """Its required common seed says the simulation is intended: no warning, and secure=None
    (the default of every mechanism) is accepted; secure=True is refused as before."""
    inv = totals([0, 0, 1, 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        share = distributed_privatize(
            [4.0, 6.0], [0, 1], inv, mechanism="projected_gaussian", seed=5, mu=1.0
        )
        again = distributed_privatize(
            [4.0, 6.0], [0, 1], inv, mechanism="projected_gaussian", seed=5, mu=1.0, secure=None
        )
    np.testing.assert_array_equal(share, again)
    with pytest.raises(TypeError, match="`secure` must be None, True or False"):
        distributed_privatize(
            [4.0, 6.0], [0, 1], inv, mechanism="projected_gaussian", seed=5, mu=1.0, secure=1
        )
