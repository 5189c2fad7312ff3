"""Cost of the likelihood models on discrete Gaussian releases with an exact state total.

Two figures, each as a ratio to a baseline measured in the same run:

* one evaluation of the log-likelihood and its score in the cell means, the
  exact likelihood (a tilted, trimmed convolution over the cells: its cost
  grows as sigma^2 n^1.5) against the Gaussian one (dense, n^3), for
  n = 72, 180 and 720 cells at sigma = 1 and 5 (the switch);
* fitting the saturated model of sex x age given county (12 x 2 x 3 = 72
  parameters, the exact likelihood) by Newton's method stepping with the
  Gaussian likelihood's Hessian (what ``fit`` does) against statsmodels'
  Newton with the exact likelihood's numerical Hessian (the baseline).

Run: ``.venv/bin/python benchmarks/bench_models.py``.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from invariantdp import Release
from invariantdp.inference import PrivatizedLogLinear
from invariantdp.inference._count_likelihoods import (
    ExactDiscreteGaussianLikelihood,
    GaussianCountLikelihood,
)
from invariantdp.inference._release_observation import observe_release
from invariantdp.invariants import totals
from invariantdp.mechanisms import discrete_gaussian_mechanism


def _release(n: int, sigma: float, rng) -> tuple[Release, np.ndarray]:
    lam = rng.uniform(5.0, 300.0, n)
    s = rng.poisson(lam)
    y = discrete_gaussian_mechanism(s, rho=1 / (2 * sigma**2), rng=rng).value
    rel = Release.from_published(
        y, noise="discrete_gaussian", sigma=sigma, invariants=totals(np.zeros(n, int)).of(s)
    )
    return rel, lam


def _seconds(f, repeat: int = 5) -> float:
    f()
    t0 = time.perf_counter()
    for _ in range(repeat):
        f()
    return (time.perf_counter() - t0) / repeat


def likelihood_evaluations(rng) -> None:
    print("one log-likelihood + score evaluation (seconds; exact / Gaussian)")
    for n in (72, 180, 720):
        for sigma in (1.0, 5.0):
            rel, lam = _release(n, sigma, rng)
            obs = observe_release(rel)
            exact = ExactDiscreteGaussianLikelihood(obs)
            gauss = GaussianCountLikelihood(obs)
            te = _seconds(lambda ex=exact, la=lam: ex.poisson(la))
            tg = _seconds(lambda g=gauss, la=lam: g.poisson(la))
            print(
                f"  n={n:4d} sigma={sigma:3.0f}: exact {te:.4f}  gaussian {tg:.4f}  "
                f"ratio {te / tg:.2f}"
            )


def saturated_fit(rng) -> None:
    K = 12
    idx = pd.MultiIndex.from_product(
        [[f"C{k:02d}" for k in range(K)], ["F", "M"], ["0-17", "18-64", "65+"]],
        names=["county", "sex", "age"],
    )
    mu = rng.uniform(200.0, 1500.0, K)[:, None] * np.tile([0.2, 0.55, 0.25], 2)[None, :] / 2
    s = rng.poisson(mu.reshape(-1))
    rel = Release.from_published(
        pd.Series(discrete_gaussian_mechanism(s, rho=0.5, rng=rng).value, index=idx),
        noise="discrete_gaussian",
        sigma=1.0,
        invariants=totals(np.zeros(s.size, int)).of(s),
    )
    model = PrivatizedLogLinear(rel, given="county")
    start = model._start_params()
    t0 = time.perf_counter()
    ours = model.fit(disp=0)
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    base = super(type(model).__mro__[1], model).fit(
        start_params=start, method="newton", maxiter=100, disp=0
    )
    t_base = time.perf_counter() - t0
    print("saturated sex x age given county (72 parameters, exact likelihood)")
    print(f"  statsmodels Newton, exact Hessian (baseline): {t_base:.2f} s")
    print(
        f"  fit (Gaussian-Hessian Newton steps):          {t_ours:.2f} s  "
        f"ratio {t_ours / t_base:.2f}; |d llf| {abs(ours.llf - base.llf):.2e}"
    )


def main() -> None:
    rng = np.random.default_rng(2026)
    likelihood_evaluations(rng)
    saturated_fit(rng)


if __name__ == "__main__":
    main()
