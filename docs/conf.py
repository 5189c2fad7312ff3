"""Sphinx configuration of the invariantdp documentation (``make docs``)."""

import shutil
from importlib.metadata import version as _version
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

project = "invariantdp"
author = "invariantdp developers"
copyright = "2026, invariantdp developers"
release = _version("invariantdp")
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax served from the site itself: no network needed
    "numpydoc",
    "myst_nb",
]

# the vignettes live in vignettes/ (executed by the tests too); the site
# executes copies of them, and shows the CHANGELOG of the repository
_GENERATED = HERE / "vignettes"
shutil.rmtree(_GENERATED, ignore_errors=True)
shutil.copytree(ROOT / "vignettes", _GENERATED)
shutil.copyfile(ROOT / "CHANGELOG.md", HERE / "changelog.md")

# one API page per public module, listing its __all__ (so that the reference
# follows the code: a name added to __all__ gets its page, a removed one loses it)
API_MODULES = {
    "invariantdp": "The top level: Release, Invariants, the tests",
    "invariantdp.published": "From published numbers to a Release",
    "invariantdp.families": "Noise families",
    "invariantdp.labels": "Labels of a release",
    "invariantdp.invariants": "Invariants: exact linear statistics and their projections",
    "invariantdp.mechanisms": "Mechanisms: making releases",
    "invariantdp.mechanisms.congenial": "Congenial releases (Gong & Meng)",
    "invariantdp.distributions": "Noise distributions (scipy.stats style)",
    "invariantdp.inference": "Tests, intervals and likelihood models",
    "invariantdp.inference.bayes": "Bayesian models (PyMC)",
    "invariantdp.privacy": "Privacy accounting",
    "invariantdp.sensitivity": "Sensitivity spaces and norms",
    "invariantdp.secure": "Secure (exact) randomness",
    "invariantdp.audit": "Empirical privacy audits",
    "invariantdp.simulate": "Simulation studies",
    "invariantdp.plotting": "Figures",
    "invariantdp.datasets": "Bundled data",
    "invariantdp.synthetic": "Synthetic microdata",
    "invariantdp.exceptions": "Exceptions and warnings",
}


def _homes() -> dict:
    """``id(object) -> module`` of its page: of the public modules exporting it in
    ``__all__``, the one closest to where it is defined (longest common prefix)."""
    import importlib

    best: dict = {}
    for name in API_MODULES:
        mod = importlib.import_module(name)
        for n in getattr(mod, "__all__", []):
            obj = getattr(mod, n)
            where = getattr(obj, "__module__", "") or ""
            score = len(name) if where == name or where.startswith(name + ".") else -1
            if id(obj) not in best or score > best[id(obj)][0]:
                best[id(obj)] = (score, name)
    return {k: v[1] for k, v in best.items()}


def _write_api_pages() -> None:
    import importlib
    import types

    out = HERE / "api"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    homes = _homes()
    toc = []
    for name, title in API_MODULES.items():
        mod = importlib.import_module(name)
        public = sorted(
            n
            for n in getattr(mod, "__all__", [])
            if not isinstance(getattr(mod, n), types.ModuleType)
        )
        # an object exported by several modules gets its page in its home only
        own = [n for n in public if homes[id(getattr(mod, n))] == name]
        also = [n for n in public if n not in own]
        lines = [title, "=" * len(title), "", f".. automodule:: {name}", "   :no-members:", ""]
        lines += [f".. currentmodule:: {name}", ""]
        if own:
            lines += [".. autosummary::", "   :toctree: generated", "", *(f"   {m}" for m in own)]
            lines.append("")
        if also:
            lines += ["Also importable from here:", ""]
            lines += [f"- :py:obj:`~{homes[id(getattr(mod, m))]}.{m}`" for m in also]
            lines.append("")
        (out / f"{name}.rst").write_text("\n".join(lines))
        toc.append(f"   {name}")
    index = ["API reference", "=============", "", ".. toctree::", "   :maxdepth: 1", "", *toc, ""]
    (out / "index.rst").write_text("\n".join(index))


_write_api_pages()

# numpydoc lists a docstring's References without citing them in the text
suppress_warnings = ["ref.citation"]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb"}
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
master_doc = "index"

autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False}
numpydoc_show_class_members = False
numpydoc_xref_param_type = False
numpydoc_class_members_toctree = False

nb_execution_mode = "force"
nb_execution_timeout = 900
nb_execution_raise_on_error = True
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]

html_theme = "pydata_sphinx_theme"
html_title = f"invariantdp {release}"
html_theme_options = {
    "navigation_depth": 2,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
}
html_static_path = []
