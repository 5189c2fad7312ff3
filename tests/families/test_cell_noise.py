"""The estimators' view of a family (CellNoise) and the census measurement noise draw."""

import math
from fractions import Fraction

import numpy as np
import pytest

from invariantdp import InvariantDPError, Release
from invariantdp.families import (
    CORRELATED_GAUSSIAN,
    DISCRETE_GAUSSIAN,
    GAUSSIAN,
    LAPLACE,
    TULAP,
    CellNoise,
    gaussian_type_families,
    noise_family,
)
from invariantdp.mechanisms import find_mechanism
from invariantdp.secure import SecureGenerator


def _direct_variance(sigma: float) -> float:
    """``sum k^2 e^{-k^2 / 2 sigma^2} / sum e^{-k^2 / 2 sigma^2}`` summed term by term."""
    k = np.arange(-60 * math.ceil(sigma) - 5, 60 * math.ceil(sigma) + 6, dtype=float)
    w = np.exp(-(k**2) / (2.0 * sigma**2))
    return float(np.sum(k**2 * w) / np.sum(w))


@pytest.mark.parametrize("sigma", [0.3, 1.0, 2.5, 7.0])
def test_discrete_gaussian_cells_carry_the_actual_variance_and_the_integer_lattice(sigma):
    c = DISCRETE_GAUSSIAN.cell_noise({"sigma": sigma})
    assert c.variance == pytest.approx(_direct_variance(sigma), rel=1e-12)
    assert c.variance <= sigma**2  # below it by ~4 pi^2 sigma^4 e^(-2 pi^2 sigma^2)
    assert (c.step, c.lattice_sigma, c.rounded) == (1.0, sigma, False)
    assert c.exact_intervals and not c.continuous


def test_grid_gaussian_cells_are_the_discrete_gaussian_on_the_grid_with_rounding():
    c = noise_family("grid_gaussian").cell_noise({"sigma": 0.75, "grid": 0.5})
    assert c.variance == pytest.approx(0.25 * _direct_variance(1.5), rel=1e-12)
    assert (c.step, c.lattice_sigma, c.rounded) == (0.5, 1.5, True)


def test_continuous_and_correlated_gaussian_cells():
    assert GAUSSIAN.cell_noise({"scale": 3.0}) == CellNoise(9.0)
    assert GAUSSIAN.cell_noise({"scale": 3.0}).continuous
    cov = [[2.0, 0.5], [0.5, 1.0]]
    c = CORRELATED_GAUSSIAN.cell_noise({"cov": cov})
    assert c.variance is None and np.array_equal(c.covariance, np.array(cov))


def test_only_gaussian_type_families_give_cell_noise():
    assert gaussian_type_families() == [
        "gaussian",
        "discrete_gaussian",
        "grid_gaussian",
        "projected_gaussian",
        "extended_gaussian",
        "correlated_gaussian",
    ]
    for fam in (LAPLACE, TULAP):
        assert not fam.gaussian_type
        with pytest.raises(InvariantDPError, match=f"{fam.name!r} is not Gaussian-type"):
            fam.cell_noise({"scale": 1.0})


def test_cell_noise_needs_one_of_variance_and_covariance():
    with pytest.raises(TypeError, match="exactly one of `variance` and `covariance`"):
        CellNoise(None)
    with pytest.raises(TypeError, match="`lattice_sigma` needs the lattice `step`"):
        CellNoise(1.0, lattice_sigma=1.0)


def test_a_zcdp_budget_sets_the_noise_of_the_gaussian_type_mechanisms_only():
    assert find_mechanism("discrete_gaussian").zcdp and find_mechanism("semi_dp_gaussian").zcdp
    assert not find_mechanism("laplace").zcdp and not find_mechanism("tulap").zcdp


def test_measurement_noise_with_numpy_has_the_discrete_gaussian_law():
    # 40,000 draws of N_Z(0, 4): the sample variance is within 5 standard errors of the
    # actual variance (se of a sample variance ~ var sqrt(2 / n) for a near-Gaussian law)
    n = 40_000
    x = DISCRETE_GAUSSIAN.measurement_noise(Fraction(4), n, np.random.default_rng(3))
    assert x.dtype == np.int64 and x.shape == (n,)
    var = DISCRETE_GAUSSIAN.cell_noise({"sigma": 2.0}).variance
    assert abs(float(np.mean(x.astype(float) ** 2)) - var) < 5 * var * math.sqrt(2.0 / n)


def test_secure_measurement_noise_is_the_exact_sampler():
    x = DISCRETE_GAUSSIAN.measurement_noise(Fraction(9, 4), 64, SecureGenerator())
    assert x.dtype == np.int64 and x.shape == (64,)
    with pytest.raises(InvariantDPError, match="continuous Gaussian noise has no exact sampler"):
        GAUSSIAN.measurement_noise(Fraction(1), 3, SecureGenerator())
    with pytest.raises(InvariantDPError, match="'laplace' is not set by a variance parameter"):
        LAPLACE.measurement_noise(Fraction(1), 3, np.random.default_rng(0))


def test_census_measurements_weigh_by_the_family_s_actual_variance():
    import pandas as pd

    from invariantdp.census import Geography, NoisyMeasurements, Schema

    dpq = pd.DataFrame(
        {
            "geocode": ["1", "11", "12"],
            "query_name": ["total_dpq", "detailed_dpq", "detailed_dpq"],
            "value": [[30.0], [9.0, 11.0], [4.0, 7.0]],
            "variance": [0.25, 2.0, 2.0],
        }
    )
    nm = NoisyMeasurements.from_frames(dpq, None, Schema({"sex": 2}), Geography({"A": 1, "B": 2}))
    r = nm.to_release("A", "total")
    assert r.metadata["variance"] == pytest.approx(_direct_variance(0.5), rel=1e-12)
    gauss = NoisyMeasurements(nm.schema, nm.geography, nm.units, nm.measurements, noise="gaussian")
    rg = gauss.to_release("A", "total")
    assert isinstance(rg, Release) and rg.noise.family == "gaussian"
    assert rg.metadata["variance"] == 0.25
    with pytest.raises(InvariantDPError, match=r"`noise` \('laplace'\) must name a noise family"):
        NoisyMeasurements(nm.schema, nm.geography, nm.units, noise="laplace")
