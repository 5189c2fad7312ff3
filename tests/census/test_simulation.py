"""Simulation checks of the GLS estimates: unbiased, and 95% intervals cover 0.94-0.96.

A fictional state (3 counties, 9 tracts, 36 blocks; sex x age, many block
cells with true counts 0-5) is measured again and again with discrete
Gaussian noise at every level; the GLS estimates and their normal intervals
are checked against the known truth.  Monte Carlo tolerances come from the
estimates' own standard errors.
"""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from invariantdp.census import Geography, Schema, gls, measure
from invariantdp.census._curator import histograms
from invariantdp.distributions import discrete_gaussian

SCHEMA = Schema({"sex": 2, "age": 3})
GEO = Geography({"State": 2, "County": 5, "Tract": 11, "Block": 16})
QUERIES = ("total", "sex", "detailed")


def fictional_state(rng):
    rows = []
    for c in range(3):
        for t in range(3):
            for b in range(4):
                code = f"01{c:03d}{t:06d}{b:05d}"
                for s in range(2):
                    for a in range(3):
                        rows.append(
                            (code, s, a, int(rng.poisson(rng.choice([0.5, 2.0, 5.0, 20.0]))))
                        )
    return pd.DataFrame(rows, columns=["geocode", "sex", "age", "count"])


@pytest.mark.slow
@pytest.mark.parametrize("rho", [1.0, 0.25])
def test_gls_is_unbiased_and_its_intervals_cover(rho):
    rng = np.random.default_rng(2024)
    counts = fictional_state(rng)
    workload = {lev: {q: rho for q in ("total", "sex", "age", "detailed")} for lev in GEO.names}
    units = counts["geocode"].unique()
    nm = measure(
        counts, SCHEMA, GEO, workload, invariants={"State": ["total"]}, secure=False, rng=1,
        units=units,
    )  # fmt: skip
    _, hists = histograms(counts, SCHEMA, GEO, units)
    est0 = gls(nm)
    alg = est0.solution.alg
    truth = {(li, q): alg.marginal(hists[li], SCHEMA.query(q)) for li in range(4) for q in QUERIES}
    se = {
        (li, q): est0.estimate(q, lev)["std_error"].to_numpy().reshape(truth[(li, q)].shape)
        for li, lev in enumerate(GEO.names)
        for q in QUERIES
    }
    answers = {
        key: alg.marginal(hists[GEO.index(key[0])], SCHEMA.query(key[1])) for key in nm.measurements
    }
    reps, gen = 2000, np.random.default_rng(7)
    total = {key: 0.0 for key in truth}
    covered = {key: 0 for key in truth}
    for _ in range(reps):
        tables = {}
        for key, t in nm.measurements.items():
            noise = discrete_gaussian.rvs(
                np.sqrt(t.variance[0]), size=answers[key].shape, random_state=gen
            )
            tables[key] = replace(t, values=answers[key] + noise)
        x = gls(replace(nm, measurements=tables)).solution.x
        for (li, q), tr in truth.items():
            e = alg.marginal(x[li], SCHEMA.query(q))
            total[(li, q)] += e
            covered[(li, q)] += np.abs(e - tr) <= 1.959963984540054 * se[(li, q)]
    small = 0
    for (li, q), tr in truth.items():
        if li == 0:  # the invariant state total: exact every time
            continue
        z = (total[(li, q)] / reps - tr) / (se[(li, q)] / np.sqrt(reps))
        assert np.abs(z).max() < 4.5, (li, q, np.abs(z).max())
        if q == "detailed" and li == 3:
            small = int(np.sum(tr <= 5))
    assert small >= 40  # unbiased also for blocks with true counts 0-5
    for li in (2, 3):
        cover = np.mean(covered[(li, "detailed")]) / reps
        assert 0.94 <= cover <= 0.96, (li, cover)
    pooled = np.mean(np.concatenate([np.ravel(covered[k]) for k in truth if k[0] > 0])) / reps
    assert 0.94 <= pooled <= 0.96, pooled
