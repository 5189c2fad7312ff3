"""The registry of mechanisms: one name each, its function, family and calibration."""

import warnings

import numpy as np
import pytest

import invariantdp.mechanisms as M
from invariantdp import InvariantDPError
from invariantdp.distributions import KNormNoise, SubspaceNoise
from invariantdp.families import noise_family
from invariantdp.invariants import totals
from invariantdp.mechanisms import MECHANISMS, find_mechanism


def test_every_entry_runs_its_function_and_records_its_family():
    x = np.array([[3, 4], [5, 6]])
    inv = totals([0, 0, 1, 1]).of(x.reshape(-1))
    calls = {
        "additive": lambda m, kw: m.function(x, rng=1, **kw),
        "subspace": lambda m, kw: m.function(x.reshape(-1).astype(float), inv, rng=1, **kw),
        "lp": lambda m, kw: m.function(x, 2, rng=1, **kw),
        "semi_dp": lambda m, kw: m.function(x, rng=1, **kw),
        "knorm": lambda m, kw: m.function(x.reshape(-1), np.eye(4), rng=1, **kw),
        "odds_ratio": lambda m, kw: m.function(x, rng=1, **kw),
    }
    values = {"epsilon": 1.0, "mu": 1.0, "rho": 0.5, "delta": 1e-5}
    for name, m in MECHANISMS.items():
        assert find_mechanism(name) is m and m.noise_family is noise_family(m.family)
        first = m.privacy[0]
        kw = {first: values[first]}
        if m.family == "gaussian" and first == "epsilon":
            kw["delta"] = values["delta"]
        release = calls[m.kind](m, kw)
        assert release.noise.family == m.family, name
        assert m.scale in release.noise.params, name


def test_command_line_spellings_are_aliases():
    assert find_mechanism("discrete-gaussian") is MECHANISMS["discrete_gaussian"]
    assert find_mechanism("semi-dp-knorm").function is M.semi_dp_knorm
    assert MECHANISMS["tulap"].aliases == ()  # one word: nothing to respell


def test_unknown_names_and_other_kinds_are_refused_by_name():
    with pytest.raises(InvariantDPError, match=r"`mechanism` \('poisson'\) must be one of"):
        find_mechanism("poisson")
    with pytest.raises(InvariantDPError, match=r"must be one of 'projected_gaussian'"):
        find_mechanism("laplace", kinds=("subspace",))
    with pytest.raises(InvariantDPError, match="must be one of"):
        find_mechanism(["laplace"])


def test_calibration_is_the_families():
    # a zCDP budget sets the Gaussian-type noise; the registry and the family agree
    rho, sens = 0.3, 2.0
    r = M.discrete_gaussian_mechanism([1, 2, 3], rho=rho, sensitivity=sens, rng=0)
    params, implied = noise_family("discrete_gaussian").calibrate(rho=rho, sensitivity=sens)
    assert r.noise.params["sigma"] == params["sigma"] == sens / np.sqrt(2 * rho)
    assert implied == ("zCDP", {"rho": rho, "sensitivity": sens})
    assert {n for n, m in MECHANISMS.items() if m.zcdp} == {
        "gaussian",
        "discrete_gaussian",
        "projected_gaussian",
        "extended_gaussian",
        "semi_dp_gaussian",
    }


@pytest.mark.parametrize(
    "name, law", [("KNormNoise", KNormNoise), ("SubspaceNoise", SubspaceNoise)]
)
def test_noise_laws_live_in_distributions(name, law):
    with pytest.warns(
        DeprecationWarning,
        match=rf"mechanisms.{name} is deprecated .* use invariantdp.distributions.{name}",
    ):
        assert getattr(M, name) is law
    assert name not in M.__all__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from invariantdp.distributions import KNormNoise as _  # noqa: F401
