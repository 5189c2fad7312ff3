"""Fail early, naming the extra to install, when the optional Bayes dependencies are missing.

Without this, ``import invariantdp.inference.bayes`` would stop deep inside
with a bare ``ModuleNotFoundError: No module named 'pymc'``.
"""

import importlib.util

for _needed in ("pymc", "arviz"):
    if importlib.util.find_spec(_needed) is None:
        raise ModuleNotFoundError(
            f"invariantdp.inference.bayes needs {_needed}, which is not installed: "
            "pip install 'invariantdp[bayes]' (PyMC and ArviZ).",
            name=_needed,
        )
