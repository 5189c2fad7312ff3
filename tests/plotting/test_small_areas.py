"""Figures of a Fay-Herriot fit: the points drawn are the EBLUPs and shrinkages computed."""

import numpy as np
import pytest

from invariantdp import InvariantDPError, Release
from invariantdp.inference import FayHerriot

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from invariantdp.plotting import plot_eblup, plot_shrinkage  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


@pytest.fixture
def fits(rng):
    m = 24
    X = np.column_stack([np.ones(m), rng.uniform(0, 1, m)])
    v = rng.uniform(0.3, 3.0, m)
    county = np.repeat(np.arange(6), 4)
    V = np.sqrt(np.outer(v, v)) * np.where(county[:, None] == county[None, :], 0.4, 0.0)
    np.fill_diagonal(V, v)
    y = X @ [10.0, 5.0] + rng.normal(0, 1.0, m) + rng.multivariate_normal(np.zeros(m), V)
    full = FayHerriot(Release.from_published(y, noise="correlated_gaussian", cov=V), X).fit()
    diag = FayHerriot(
        Release.from_published(y, noise="correlated_gaussian", cov=np.diag(v)), X
    ).fit()
    return full, diag, y, v


def test_plot_eblup_draws_the_eblups_against_the_direct_estimates(fits):
    full, diag, y, _ = fits
    ax = plot_eblup(full, compare=diag)
    drawn = [line.get_xydata() for line in ax.get_lines() if line.get_marker() in ("o", "s")]
    np.testing.assert_allclose(drawn[0], np.column_stack([y, full.eblup()["estimate"]]))
    np.testing.assert_allclose(drawn[1], np.column_stack([y, diag.eblup()["estimate"]]))


def test_plot_shrinkage_draws_one_minus_the_direct_weight(fits):
    full, diag, _, v = fits
    ax = plot_shrinkage(full, compare=diag)
    points = [c.get_offsets() for c in ax.collections]
    np.testing.assert_allclose(points[0][:, 0], np.sqrt(v))
    np.testing.assert_allclose(points[0][:, 1], 1 - full.direct_weight())
    # with diagonal V the weight is gamma = sigma2_u / (sigma2_u + v)
    s2 = diag.sigma2_u
    np.testing.assert_allclose(points[1][:, 1], 1 - s2 / (s2 + v), rtol=1e-10)


def test_the_figures_refuse_other_objects(fits):
    full, _, _, _ = fits
    with pytest.raises(TypeError, match="`results` must be the results of FayHerriot"):
        plot_eblup(object())
    other = FayHerriot(
        Release.from_published(full.model.endog + 1.0, noise="gaussian", sigma=1.0),
        full.model.exog,
    ).fit()
    with pytest.raises(InvariantDPError, match="same released estimates"):
        plot_shrinkage(full, compare=other)
