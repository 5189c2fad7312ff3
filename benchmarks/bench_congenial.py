"""ESS per second of the congenial samplers on the 2 x 23 sex-by-age table.

Target: the double-geometric mechanism (epsilon = 0.5 per cell) conditioned on
the total, the female total, the voting-age total and non-negativity (Gong &
Meng 2020, Section 3).  Baseline: their Algorithm 1 (Metropolized independent
sampler, proposal index set I = {2..22, 24..45}, epsilon-tilde = 0.6).  New:
heat-bath Gibbs along lattice moves of the invariant matrix, and the exact
i.i.d. sampler (class-total dynamic programme, ``sampler="exact"``, the
default for this target).  ESS is ArviZ's bulk ESS, the minimum over the 46
cells, from all chains; the time includes setup (for the exact sampler: the
LPs, fibre enumeration and partition functions).  The samplers are checked
to give the same cell means (max over cells of |difference| / Monte Carlo
standard error).
"""

import sys
import warnings

import numpy as np

from invariantdp import Invariants, datasets
from invariantdp.exceptions import ConvergenceWarning
from invariantdp.mechanisms import conditional_release


def main(quick: bool = False) -> float:
    x = datasets.congenial_sex_by_age().to_numpy()
    C = np.zeros((3, 46))
    C[0] = 1
    C[1, :23] = 1
    C[2, 4:23] = 1
    C[2, 27:] = 1
    inv = Invariants(C, shape=(2, 23))
    common = dict(epsilon=0.5, rng=2020, warn=False)
    index = np.setdiff1d(np.arange(46), [0, 22, 45])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        mis = conditional_release(
            x,
            "discrete_laplace",
            inv,
            "nonnegative",
            sampler="mis",
            proposal_index=index,
            proposal_epsilon=0.6,
            chains=4,
            tune=2000,
            draws=10_000 if quick else 50_000,
            **common,
        )
        gib = conditional_release(
            x,
            "discrete_laplace",
            inv,
            "nonnegative",
            sampler="gibbs",
            chains=256,
            tune=100,
            draws=200 if quick else 1000,
            **common,
        )
        exact = conditional_release(
            x,
            "discrete_laplace",
            inv,
            "nonnegative",
            sampler="exact",
            chains=4,
            draws=5000 if quick else 50_000,
            **common,
        )
    rows = []
    results = (("MIS (Algorithm 1)", mis), ("lattice Gibbs", gib), ("exact (class DP)", exact))
    for name, res in results:
        d = res.diagnostics
        rows.append(
            (
                name,
                d.chains,
                d.draws,
                d.acceptance_rate,
                d.ess_min,
                d.rhat_max,
                d.elapsed,
                d.ess_per_second,
            )
        )
    print(
        f"{'sampler':<20}{'chains':>7}{'draws':>8}{'accept':>8}{'min ESS':>9}{'R-hat':>7}"
        f"{'sec':>8}{'ESS/s':>10}"
    )
    for r in rows:
        print(
            f"{r[0]:<20}{r[1]:>7}{r[2]:>8}{r[3]:>8.4f}{r[4]:>9.0f}{r[5]:>7.3f}{r[6]:>8.2f}"
            f"{r[7]:>10.1f}"
        )
    base = mis.diagnostics.ess_per_second
    ratio_gibbs = gib.diagnostics.ess_per_second / base
    ratio = exact.diagnostics.ess_per_second / base
    print(f"ESS/s ratio lattice Gibbs / baseline: {ratio_gibbs:.1f}x")
    print(f"ESS/s ratio exact / baseline:         {ratio:.1f}x   (target >= 50x)")

    def max_z(r1, r2):
        d1, d2 = r1.draws.reshape(-1, 46), r2.draws.reshape(-1, 46)
        se = np.sqrt(d1.var(0) / r1.diagnostics.ess + d2.var(0) / r2.diagnostics.ess)
        return np.nanmax(np.abs(d1.mean(0) - d2.mean(0)) / se)

    print(
        "same target: max |mean difference| / MC se over 46 cells: "
        f"exact vs MIS {max_z(exact, mis):.2f}, exact vs Gibbs {max_z(exact, gib):.2f}, "
        f"Gibbs vs MIS {max_z(gib, mis):.2f}"
    )
    return ratio


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
