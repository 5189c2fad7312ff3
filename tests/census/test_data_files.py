"""The synthetic census of Examplia: its generator reproduces the bundled files."""

import importlib.util
from pathlib import Path

import pandas as pd

from invariantdp.census import Geography

DATA = Path(__file__).resolve().parents[2] / "data"


def test_the_generator_reproduces_the_bundled_census_of_examplia():
    spec = importlib.util.spec_from_file_location("make_census", DATA / "make_examplia_census.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    blocks, tracts = module.generate()
    saved = pd.read_csv(DATA / "examplia_census_blocks.csv", dtype={"geocode": str})
    pd.testing.assert_frame_equal(blocks, saved)
    saved_tracts = pd.read_csv(DATA / "examplia_census_tracts.csv", dtype={"geocode": str})
    pd.testing.assert_frame_equal(tracts, saved_tracts)
    geo = Geography()
    assert (blocks["geocode"].str.len() == geo.width("Block")).all()
    assert set(blocks["geocode"].str[:11]) == set(tracts["geocode"])
    assert (blocks["count"] <= 5).mean() > 0.5  # small counts dominate, as in the census
