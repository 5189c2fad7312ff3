"""Generate the synthetic census of Examplia down to blocks (``examplia_census_*.csv``).

Examplia is the fictional state of ``make_examplia_published.py`` (twelve
counties, their regions and log population densities in
``examplia_counties.csv``).  This script gives it a full geographic hierarchy
with the Bureau's geocode widths (state ``"90"``, no real state's FIPS code;
counties ``90001``..; tracts of 11 digits, block groups of 12, blocks of 16)
and confidential person counts by sex x age group in every block, the known
truth behind the noisy measurements of vignette 07:

* each tract's log density is its county's plus noise; its population is
  Poisson log-linear in it (the model a vignette can fit back);
* a tract's people are spread over its blocks by a Dirichlet split (many
  small blocks: cells with true counts 0-5 dominate, as in the census), and
  each block's by sex and age by tract-level shares;
* some blocks are empty (their rows have count 0), as real blocks are.

Outputs, in this folder:

* ``examplia_census_blocks.csv``: ``geocode`` (block), ``sex`` (F, M),
  ``age`` (0-17, 18-64, 65+), ``count`` -- every cell of every block;
* ``examplia_census_tracts.csv``: ``geocode`` (tract), ``county``,
  ``log_density`` -- the tract covariate, as from a non-private source.

Run ``python data/make_examplia_census.py`` from the repository root; the seed
makes the files identical.  Everything is synthetic: no person, place or count
is real.
"""

from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
SEX = ("F", "M")
AGE = ("0-17", "18-64", "65+")


def generate(seed: int = 20260719) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(blocks, tracts)``: the truth by block, sex and age, and the tract covariates."""
    rng = np.random.default_rng(seed)
    counties = pd.read_csv(HERE / "examplia_counties.csv")
    block_rows, tract_rows = [], []
    for c, county in enumerate(counties.itertuples(index=False)):
        county_code = f"90{2 * c + 1:03d}"
        for t in range(int(rng.integers(4, 9))):
            tract = f"{county_code}{100 * (t + 1):06d}"
            log_density = round(float(county.log_density + rng.normal(0.0, 0.5)), 3)
            tract_rows.append((tract, county.county, log_density))
            population = int(rng.poisson(np.exp(6.2 + 0.5 * log_density)))
            age_share = rng.dirichlet([6.0, 14.0, 4.0])
            female = rng.beta(20, 20)
            groups = int(rng.integers(2, 4))
            sizes = [int(rng.integers(4, 15)) for _ in range(groups)]
            split = rng.dirichlet(np.full(sum(sizes), 0.6))
            people = rng.multinomial(population, split)
            share = np.outer([female, 1.0 - female], age_share).reshape(-1)
            i = 0
            for g, n_blocks in enumerate(sizes):
                for b in range(n_blocks):
                    # the Bureau's 16 digits: block group digit, then the 4-digit block
                    # number, whose first digit is the block group's again
                    block = f"{tract}{g + 1}{g + 1}{b + 1:03d}"
                    cells = rng.multinomial(people[i], share).reshape(2, 3)
                    i += 1
                    for s, sex in enumerate(SEX):
                        for a, age in enumerate(AGE):
                            block_rows.append((block, sex, age, int(cells[s, a])))
    blocks = pd.DataFrame(block_rows, columns=["geocode", "sex", "age", "count"])
    tracts = pd.DataFrame(tract_rows, columns=["geocode", "county", "log_density"])
    return blocks, tracts


def main() -> None:
    blocks, tracts = generate()
    blocks.to_csv(HERE / "examplia_census_blocks.csv", index=False)
    tracts.to_csv(HERE / "examplia_census_tracts.csv", index=False)


if __name__ == "__main__":
    main()
