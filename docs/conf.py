"""Sphinx configuration of the invariantdp documentation (``make docs``).

``make docs`` first runs ``execute_notebooks.py`` (the vignettes and the home
page, in parallel, into the jupyter-cache this file points myst-nb at), then
Sphinx, then ``check_site.py`` in a browser.  The API reference is written
from the table in ``api_groups.py`` (checked by ``api_reference.py``).
"""

import shutil
import sys
import time
from importlib.metadata import version as _version
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import api_groups  # noqa: E402  (the docs folder is not a package)
import api_reference  # noqa: E402
import execute_notebooks  # noqa: E402

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
    "sphinx_design",  # the cards of the home page and the vignette gallery
]

# the vignettes live in vignettes/ (executed by the tests too); the site
# renders copies of them, and shows the CHANGELOG of the repository
_GENERATED = HERE / "vignettes"
shutil.rmtree(_GENERATED, ignore_errors=True)
shutil.copytree(ROOT / "vignettes", _GENERATED)
shutil.copyfile(ROOT / "CHANGELOG.md", HERE / "changelog.md")

# the API reference: one page per group of api_groups.GROUPS; refused (the
# build stops, naming the names) unless every public name is listed once
api_reference.write_pages(HERE / "api", api_groups.GROUPS, api_groups.NOT_IN_REFERENCE)

# numpydoc lists a docstring's References without citing them in the text
suppress_warnings = ["ref.citation"]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb"}
exclude_patterns = [
    "_build",
    "**.ipynb_checkpoints",
    "jupyter_execute",
]
master_doc = "index"
templates_path = ["_templates"]

autosummary_generate = True
autosummary_imported_members = True

autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_xref_param_type = False
numpydoc_class_members_toctree = False

# notebooks come from the cache that execute_notebooks.py fills (in parallel);
# one missing from it (sphinx-build run alone) is executed here, one at a time
nb_execution_mode = "cache"
nb_execution_cache_path = str(execute_notebooks.cache_path())
nb_execution_timeout = execute_notebooks.TIMEOUT
nb_execution_raise_on_error = True
nb_merge_streams = True
myst_enable_extensions = [*execute_notebooks.MYST_EXTENSIONS]

html_theme = "pydata_sphinx_theme"
html_title = f"invariantdp {release}"
html_static_path = ["_static"]
html_css_files = ["invariantdp.css"]
html_theme_options = {
    # the top bar holds the four sections; none of them hides under "More"
    "header_links_before_dropdown": 6,
    "navigation_depth": 3,
    "show_nav_level": 1,
    "show_toc_level": 2,
    "secondary_sidebar_items": {
        "**": ["page-toc", "sourcelink"],
        "index": [],
        "vignettes": [],
        "api/index": [],
    },
    "footer_start": ["copyright"],
}
# single pages have no section to navigate: no empty "Section Navigation"
html_sidebars = {"index": [], "guide/index": [], "changelog": []}


_START = time.perf_counter()


def _say(text: str) -> None:
    # sphinx-build -q hides Sphinx's own progress, not these lines
    print(f"sphinx: {text}", flush=True)


def _reading(app, env, docnames) -> None:
    _say(f"reading {len(docnames)} pages (notebooks from the cache)")


def _notebook_read(app, doctree) -> None:
    from myst_nb.sphinx_ import NbMetadataCollector

    data = NbMetadataCollector.get_exec_data(app.env, app.env.docname)
    if data and data.get("mtime", 0) >= time.time() - (time.perf_counter() - _START):
        _say(
            f"executed {app.env.docname} itself in {data.get('runtime') or 0:.1f} s: it was "
            "not in the cache (`make docs` runs docs/execute_notebooks.py first)"
        )


def _writing(app, env) -> None:
    _say(f"writing the site ({time.perf_counter() - _START:.0f} s so far)")


def _finished(app, exception) -> None:
    if exception is None:
        _say(f"built {app.outdir} in {time.perf_counter() - _START:.0f} s")


def setup(app) -> None:
    app.connect("env-before-read-docs", _reading)
    app.connect("doctree-read", _notebook_read)
    app.connect("env-updated", _writing)
    app.connect("build-finished", _finished)
