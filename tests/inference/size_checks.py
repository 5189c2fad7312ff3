"""The check of a test's size, uniformity and power shared by the simulation tests."""

import numpy as np
from scipy import stats


def check_size_and_power(label, pvalues: dict, power: dict, n_rep: int, min_power: float):
    """Print size and power; assert size <= 0.05 within Monte Carlo error and uniform p-values.

    ``pvalues`` maps a method to its p-values over ``n_rep`` null replicates,
    ``power`` to its rejection rate at the alternative.
    """
    print(
        f"{label}, {n_rep} null releases: size "
        + ", ".join(f"{m} {np.mean(v < 0.05):.3f}" for m, v in pvalues.items())
        + "; power "
        + ", ".join(f"{m} {v:.3f}" for m, v in power.items())
    )
    for method, pv in pvalues.items():
        rate = np.mean(np.asarray(pv) < 0.05)
        # at or below the level within Monte Carlo error (2.5 binomial sd)
        assert rate <= 0.05 + 2.5 * np.sqrt(0.05 * 0.95 / n_rep), (method, rate)
        assert stats.kstest(pv, "uniform").pvalue > 1e-3, method
    assert min(power.values()) > min_power, power
