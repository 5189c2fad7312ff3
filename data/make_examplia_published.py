"""Generate the synthetic census product of Examplia (``examplia_*.csv``).

Examplia is a fictional state of twelve counties.  Its confidential counts by
county and sex are drawn from a Poisson log-linear model in the counties'
log population density; the "agency" then publishes them as a census bureau
would:

* ``examplia_published.csv`` (long format, one row per published number):
  the county x sex counts released by the projected Gaussian mechanism
  (noise variance 9, county totals and state sex totals held invariant:
  Gao, Gong & Yu 2022, Cor. 14), the exact county totals and sex totals, the
  exact numbers of adults and children, and the number of adult women
  released with Tulap noise at epsilon = 1 (the semi-DP mechanism of Awan &
  Cho for a 2 x 2 table with fixed margins);
* ``examplia_counties.csv``: the covariate (log population density) and the
  region of each county, as from a non-private source.

Run ``python data/make_examplia_published.py`` from the repository root to
write both files again; the seeds make them identical.  Everything is
synthetic: no person, place or count is real.
"""

from pathlib import Path

import numpy as np
import pandas as pd

from invariantdp.invariants import one_way_margins
from invariantdp.mechanisms import odds_ratio_release, projected_gaussian

HERE = Path(__file__).resolve().parent
COUNTIES = [f"C{i:02d}" for i in range(1, 13)]


def main() -> None:
    rng = np.random.default_rng(20261126)
    log_density = np.round(rng.normal(0.0, 1.0, size=12), 3)
    region = np.repeat(["North", "Central", "South"], 4)
    rate = np.exp(5.0 + 0.6 * log_density[:, None] + np.array([[0.05, 0.0]]))
    counts = rng.poisson(rate)  # 12 x 2: county by sex (F, M)
    margins = one_way_margins(counts.shape)
    release = projected_gaussian(counts, margins, mu=1.0 / 3.0, rng=rng)  # sigma = 3
    adults = rng.binomial(counts, np.array([[0.78, 0.74]]))  # adults by county and sex
    table = np.array([[adults[:, 0].sum(), adults[:, 1].sum()], [0, 0]])
    table[1] = counts.sum(axis=0) - table[0]  # children by sex
    cell = odds_ratio_release(table, epsilon=1.0, rng=rng)

    rows = []
    for i, c in enumerate(COUNTIES):
        for j, sex in enumerate(("F", "M")):
            rows.append(("county_sex_count", c, sex, "all", release.value[i, j], 9.0, None))
        rows.append(("county_total", c, "Total", "all", float(counts[i].sum()), 0.0, None))
    for j, sex in enumerate(("F", "M")):
        rows.append(("sex_total", "State", sex, "all", float(counts[:, j].sum()), 0.0, None))
    for k, age in enumerate(("adult", "child")):
        rows.append(("age_total", "State", "Total", age, float(table[k].sum()), 0.0, None))
    rows.append(("adult_female_count", "State", "F", "adult", float(cell.value), None, 1.0))
    cols = ["query", "county", "sex", "age", "value", "variance", "epsilon"]
    pd.DataFrame(rows, columns=cols).to_csv(HERE / "examplia_published.csv", index=False)
    pd.DataFrame({"county": COUNTIES, "region": region, "log_density": log_density}).to_csv(
        HERE / "examplia_counties.csv", index=False
    )


if __name__ == "__main__":
    main()
