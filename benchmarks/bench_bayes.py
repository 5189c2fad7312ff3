"""Effective samples per second of the latent-count samplers on the 2 x 23 table.

The table of Gong & Meng (2020), Section 3, released with double geometric
noise (epsilon = 0.5 per cell) conditioned on its three equality invariants,
is fitted with ``contingency_table_model`` by

* the exact sampler (integer counts on the fibre: ``LatticeMetropolis`` with
  the conjugate Dirichlet step),
* the same exact sampler without the separable fast path (every proposal
  evaluates the compiled model density) -- the baseline,
* the continuous relaxation (counts on the invariant affine space, NUTS),
  with PyMC's NUTS and, when installed, nutpie's compiled NUTS
  (``fit(..., nuts_sampler="nutpie")``),

and the same three on the table scaled by 20 (counts in the hundreds, where the
relaxation is adequate).  Reported: minimum bulk ESS over the counts and
cell probabilities per second of sampling (compilation excluded by a warm-up
fit), and the ratio to the baseline measured in the same run.

Run: ``.venv/bin/python benchmarks/bench_bayes.py [--draws 1000]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
import warnings

import arviz as az
import numpy as np

from invariantdp import datasets
from invariantdp.inference.bayes import contingency_table_model, fit
from invariantdp.invariants import Invariants
from invariantdp.mechanisms import conditional_release

HAVE_NUTPIE = importlib.util.find_spec("nutpie") is not None


def _release(scale: int):
    x = datasets.congenial_sex_by_age().to_numpy() * scale
    ages = list(datasets.congenial_sex_by_age().columns)
    voting = np.array([not a.startswith(("under", "6_", "11_", "16_")) for a in ages])
    C = np.zeros((3, 46))
    C[0], C[1, :23], C[2] = 1.0, 1.0, np.concatenate([voting, voting])
    inv = Invariants(C, shape=(2, 23)).of(x)
    return conditional_release(x, "discrete_laplace", inv, epsilon=0.5, rng=2020, warn=False)


def _run(release, *, latent, fast, draws, chains, sampler="pymc"):
    model = contingency_table_model(release, latent=latent)
    fit(
        contingency_table_model(release, latent=latent),
        draws=20,
        tune=20,
        chains=1,
        rng=0,
        fast=fast,
        nuts_sampler=sampler,
    )
    t = time.perf_counter()
    idata = fit(
        model, draws=draws, tune=draws, chains=chains, rng=1, fast=fast, nuts_sampler=sampler
    )
    elapsed = time.perf_counter() - t
    ess = az.ess(idata, var_names=["counts", "cell_probs"])
    ess_min = min(float(ess[v].min()) for v in ess.data_vars)
    rhat = az.rhat(idata, var_names=["counts", "cell_probs"])
    rhat_max = max(float(rhat[v].max()) for v in rhat.data_vars)
    means = idata.posterior["counts"].values.reshape(-1, 46).mean(0)
    return ess_min, elapsed, rhat_max, means


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=2)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    print(
        f"{'table':>10} {'sampler':>22} {'min ESS':>8} {'sec':>7} {'ESS/s':>8} "
        f"{'x base':>7} {'R-hat':>6} {'max |mean - exact|':>18}"
    )
    for scale in (1, 20):
        release = _release(scale)
        runs = {}
        for name, latent, fast, sampler in [
            ("exact, full logp", "exact", False, "pymc"),
            ("exact (lattice)", "exact", True, "pymc"),
            ("relaxation (NUTS)", "relaxed", True, "pymc"),
            *([("relaxation (nutpie)", "relaxed", True, "nutpie")] if HAVE_NUTPIE else []),
        ]:
            runs[name] = _run(
                release,
                latent=latent,
                fast=fast,
                draws=args.draws,
                chains=args.chains,
                sampler=sampler,
            )
        base = runs["exact, full logp"][0] / runs["exact, full logp"][1]
        exact_means = runs["exact (lattice)"][3]
        for name, (ess, sec, rhat, means) in runs.items():
            rate = ess / sec
            print(
                f"{'x' + str(scale):>10} {name:>22} {ess:8.0f} {sec:7.1f} {rate:8.1f} "
                f"{rate / base:7.1f} {rhat:6.3f} {np.abs(means - exact_means).max():18.3f}"
            )


if __name__ == "__main__":
    main()
