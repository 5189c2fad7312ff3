"""Likelihoods of projected-Gaussian and conditional-Laplace releases."""

import numpy as np
import pytest
from scipy import integrate, stats

from invariantdp import Invariants
from invariantdp.inference import (
    conditional_laplace_logpdf,
    degenerate_gaussian_logpdf,
    projected_gaussian_logpdf,
    projected_gaussian_marginal_loglik,
)
from invariantdp.invariants import totals
from invariantdp.mechanisms import projected_gaussian


def test_density_integrates_to_one_on_the_affine_space_2d():
    # n = 3 cells with one total: a plane; integrate over null-space coordinates
    inv = Invariants(np.ones((1, 3)))
    x = np.array([4.0, 1.0, 5.0])
    Q = np.linalg.svd(np.ones((1, 3)))[2][1:].T  # orthonormal basis of the null space
    f = lambda z1, z2: np.exp(  # noqa: E731
        projected_gaussian_logpdf(x + Q @ [z1, z2], x, inv, sigma=1.3)
    )
    val, err = integrate.dblquad(f, -12, 12, -12, 12, epsabs=1e-10)
    assert val == pytest.approx(1.0, abs=1e-6)


def test_density_integrates_to_one_on_a_line_in_3d():
    C = np.array([[1.0, 1, 0], [0, 1, 1]])
    inv = Invariants(C)
    x = np.array([1.0, 2.0, 3.0])
    v = np.array([1.0, -1.0, 1.0]) / np.sqrt(3)
    val, _ = integrate.quad(
        lambda t: np.exp(projected_gaussian_logpdf(x + t * v, x, inv, sigma=0.7)), -20, 20
    )
    assert val == pytest.approx(1.0, abs=1e-8)
    assert projected_gaussian_logpdf(x + [0.1, 0, 0], x, inv, sigma=0.7) == -np.inf


def test_equals_conditional_density_theorem_22(rng):
    C = rng.normal(size=(2, 5))
    inv = Invariants(C)
    x = rng.normal(size=5) * 3
    sigma = 1.7
    U = np.linalg.svd(C)[2]
    QR, QN = U[:2].T, U[2:].T
    for _ in range(5):
        y = x + QN @ rng.normal(size=3) * 2
        joint = stats.multivariate_normal(x, sigma**2 * np.eye(5)).logpdf(y)
        marg = stats.multivariate_normal(QR.T @ x, sigma**2 * np.eye(2)).logpdf(QR.T @ y)
        assert projected_gaussian_logpdf(y, x, inv, sigma=sigma) == pytest.approx(joint - marg)
        P = QN @ QN.T
        assert degenerate_gaussian_logpdf(y, x, sigma**2 * P) == pytest.approx(joint - marg)


def test_release_density_vectorised_and_shapes(rng):
    x = np.array([120.0, 80.0, 50.0, 30.0, 20.0])
    inv = totals([0, 0, 1, 1, 1])
    rels = np.array([projected_gaussian(x, inv, mu=1.0, rng=s).value for s in range(4)])
    lp = projected_gaussian_logpdf(rels, x, inv, sigma=1.0)
    assert lp.shape == (4,) and np.all(np.isfinite(lp))
    with pytest.raises(ValueError, match="`x` must have 5 cells"):
        projected_gaussian_logpdf(rels[0], x[:4], inv, sigma=1.0)
    with pytest.raises(ValueError, match=r"`sigma` \(-1.0\) must be > 0"):
        projected_gaussian_logpdf(rels[0], x, inv, sigma=-1.0)


def test_conditional_laplace_example_4_1():
    inv = Invariants(np.ones((1, 2)))
    eps = 0.8
    # density of t = (y1 - x1) * sqrt(2) along the unit direction: Lap(sqrt(2)/eps)
    for d in (0.0, 0.7, -2.5):
        lp = conditional_laplace_logpdf([30 + d, 70 - d], [30.0, 70.0], inv, scale=2 / eps)
        assert lp == pytest.approx(stats.laplace(scale=np.sqrt(2) / eps).logpdf(np.sqrt(2) * d))
    val, _ = integrate.quad(
        lambda t: np.exp(
            conditional_laplace_logpdf(
                [30 + t / np.sqrt(2), 70 - t / np.sqrt(2)], [30.0, 70.0], inv, scale=2 / eps
            )
        ),
        -60,
        60,
        points=[0.0],
    )
    assert val == pytest.approx(1.0, abs=1e-7)
    assert conditional_laplace_logpdf([31.0, 70.0], [30.0, 70.0], inv, scale=1.0) == -np.inf
    with pytest.raises(ValueError, match="dimension 2"):
        conditional_laplace_logpdf([1.0, 2, 3], [1.0, 2, 3], Invariants(np.ones((1, 3))), scale=1)


def test_marginal_loglik_is_exact_for_gaussian_models(rng):
    # s ~ N(mu, Sigma) and y = s + Pi_N e: y ~ N(mu, Sigma + sigma^2 Pi_N) by simulation
    inv = Invariants(np.ones((1, 3)))
    mu = np.array([5.0, 2.0, 1.0])
    A = rng.normal(size=(3, 3))
    Sigma = A @ A.T + np.eye(3)
    sigma = 1.5
    s = rng.multivariate_normal(mu, Sigma, size=200_000)
    y = s + inv.project(rng.normal(scale=sigma, size=s.shape))
    P = inv.projector()
    np.testing.assert_allclose(np.cov(y.T), Sigma + sigma**2 * P, atol=0.1)
    ll = projected_gaussian_marginal_loglik(y[:3], mu, Sigma, inv, sigma=sigma)
    ref = stats.multivariate_normal(mu, Sigma + sigma**2 * P).logpdf(y[:3])
    np.testing.assert_allclose(ll, ref)
    # a model that fixes the total itself: singular covariance, handled on the support
    Pm = np.eye(3) - 1 / 3
    ll0 = projected_gaussian_marginal_loglik([6.0, 1.0, 1.0], mu, Pm, inv, sigma=sigma)
    assert ll0 == pytest.approx(degenerate_gaussian_logpdf([6.0, 1, 1], mu, (1 + sigma**2) * Pm))


def test_degenerate_gaussian_input_errors():
    with pytest.raises(ValueError, match="`cov` must be symmetric"):
        degenerate_gaussian_logpdf([0.0, 0.0], [0.0, 0.0], [[1.0, 0.5], [0.0, 1.0]])
    with pytest.raises(ValueError, match="positive semi-definite"):
        degenerate_gaussian_logpdf([0.0, 0.0], [0.0, 0.0], [[1.0, 0.0], [0.0, -1.0]])
