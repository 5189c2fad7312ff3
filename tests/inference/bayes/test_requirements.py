"""Importing the Bayes models without PyMC names the extra to install."""

import subprocess
import sys

_BLOCK_PYMC = """
import importlib.util, sys
real = importlib.util.find_spec
importlib.util.find_spec = lambda name, *a: None if name == "pymc" else real(name, *a)
try:
    import invariantdp.inference.bayes
except ModuleNotFoundError as exc:
    print(exc)
"""


def test_a_missing_pymc_names_the_extra():
    out = subprocess.run(
        [sys.executable, "-c", _BLOCK_PYMC], capture_output=True, text=True, check=True
    ).stdout
    assert "needs pymc" in out and "pip install 'invariantdp[bayes]'" in out
