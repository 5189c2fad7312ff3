"""Execute the site's notebooks before Sphinx: in parallel, with progress, into a cache.

The site's notebooks are the vignettes (``vignettes/*.md``) and the pages of
``docs/`` written as MyST notebooks (the home page: its quickstart and figure
are computed by the package at build time).  This script executes them, as
many at a time as there are cores (``-j``), prints which one runs and how long
each took, and stores the executed notebooks in the jupyter-cache that
myst-nb reads (``nb_execution_mode = "cache"`` in ``conf.py``), so that Sphinx
renders them without executing them again.

jupyter-cache matches a notebook on its code alone; the cache therefore lives
in ``docs/_build/.jupyter_cache/<key>``, where ``key`` hashes the package's
source tree, the Python version and every installed distribution: outputs are
reused only while the notebook, the package and its environment are all
unchanged.  ``make clean`` (or deleting ``docs/_build``) forces a fresh run.

Each notebook runs in a fresh kernel in an empty temporary directory, as in
``tests/test_vignettes.py``.  The kernel's connection is encrypted (CurveZMQ,
provisioned by jupyter_client) where pyzmq supports it, which also silences
ipykernel's warning about unencrypted TCP.

Run: ``python docs/execute_notebooks.py [-j N]``; exit status 1 if a notebook fails.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
SOURCE = ROOT / "src" / "invariantdp"
CACHES = DOCS / "_build" / ".jupyter_cache"

#: Markdown extensions of the site (``conf.py`` uses these): notebooks are read
#: with the same parser settings as Sphinx reads them, so that they hash alike
MYST_EXTENSIONS = ["dollarmath", "amsmath", "colon_fence"]
#: seconds a cell may run
TIMEOUT = 900
#: folders of ``docs/`` that hold generated files, never sources
GENERATED = ("_build", "api", "vignettes", "jupyter_execute")


def notebooks() -> list[Path]:
    """The vignettes and the notebook pages of the site (``.md`` with a kernelspec)."""
    from myst_nb.core.read import is_myst_markdown_notebook

    pages = [
        p
        for p in sorted(DOCS.rglob("*.md"))
        if p.relative_to(DOCS).parts[0] not in GENERATED
        and is_myst_markdown_notebook(p.read_text(encoding="utf-8"))
    ]
    return pages + sorted((ROOT / "vignettes").glob("*.md"))


def label(path: Path) -> str:
    return str(path.relative_to(ROOT))


def cache_path() -> Path:
    """The cache of this source tree and environment (see the module docstring)."""
    digest = hashlib.sha256(sys.version.encode())
    for path in sorted(SOURCE.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(SOURCE)).encode() + b"\0" + path.read_bytes())
    installed = sorted(
        f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions()
    )
    digest.update("\n".join(installed).encode())
    return CACHES / digest.hexdigest()[:16]


def read(path: Path):
    """The notebook as myst-nb reads it (code cells, their metadata, the kernelspec)."""
    from myst_nb.core.config import NbParserConfig
    from myst_nb.core.read import create_nb_reader
    from myst_parser.config.main import MdParserConfig

    text = path.read_text(encoding="utf-8")
    md_config = MdParserConfig(enable_extensions=set(MYST_EXTENSIONS))
    return create_nb_reader(str(path), md_config, NbParserConfig(), text).read(text)


def _kernel_config():
    from jupyter_client.manager import KernelManager
    from traitlets.config import Config

    config = Config()
    try:
        import zmq

        curve = zmq.has("curve")
    except ImportError:
        curve = False
    if curve and "transport_encryption" in KernelManager.class_trait_names():
        config.KernelManager.transport_encryption = "auto"
    return config


def execute(path: str) -> tuple[object, float, str | None]:
    """Run one notebook in a fresh kernel: ``(notebook, seconds, error or None)``."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError

    print(f"  start  {label(Path(path))}", flush=True)
    # figures must reach the notebook: the kernel picks its inline backend
    # only when no backend is forced from outside
    os.environ.pop("MPLBACKEND", None)
    nb = read(Path(path))
    error = None
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as cwd:
        # no timing in the cells' metadata: jupyter-cache hashes that metadata,
        # and Sphinx must find the notebook it reads under the same hash
        client = NotebookClient(
            nb,
            timeout=TIMEOUT,
            record_timing=False,
            resources={"metadata": {"path": cwd}},
            config=_kernel_config(),
        )
        try:
            client.execute()
        except (CellExecutionError, CellTimeoutError) as err:
            error = str(err)
    return nb, time.perf_counter() - start, error


def run(jobs: int) -> int:
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    here = cache_path()
    if CACHES.exists():
        for old in CACHES.iterdir():  # caches of other sources or environments
            if old != here:
                shutil.rmtree(old, ignore_errors=True)
    cache = get_cache(str(here))
    todo, cached = [], []
    for path in notebooks():
        try:
            record = cache.match_cache_notebook(read(path))
        except KeyError:
            todo.append(path)
        else:
            cached.append((path, record.data.get("execution_seconds")))
    jobs = max(1, min(jobs, len(todo)))
    print(
        f"notebooks: {len(todo)} to execute"
        + (f", {jobs} at a time" if todo else "")
        + f"; {len(cached)} unchanged since their last run (cache {here.relative_to(ROOT)})",
        flush=True,
    )
    for path, seconds in cached:
        print(f"  cached {label(path)}  (ran in {seconds or 0:.1f} s)", flush=True)
    # the longest notebooks first, so that the last one to start is short
    todo.sort(key=lambda p: p.stat().st_size, reverse=True)
    failed, busy, start = [], 0.0, time.perf_counter()
    if todo:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            futures = {pool.submit(execute, str(p)): p for p in todo}
            for future in as_completed(futures):
                path = futures[future]
                nb, seconds, error = future.result()
                busy += seconds
                if error is None:
                    print(f"  done   {label(path)}  {seconds:.1f} s", flush=True)
                    cache.cache_notebook_bundle(
                        CacheBundleIn(nb, str(path), data={"execution_seconds": seconds}),
                        check_validity=False,
                        overwrite=True,
                    )
                    try:  # what Sphinx will look up
                        cache.match_cache_notebook(read(path))
                    except KeyError:
                        failed.append(path)
                        print(f"  FAILED {label(path)}: executed, but not found in the cache")
                else:
                    failed.append(path)
                    print(f"  FAILED {label(path)} after {seconds:.1f} s:\n{error}", flush=True)
    if not todo:
        return 0
    wall = time.perf_counter() - start
    print(
        f"notebooks: {len(todo) - len(failed)} executed in {wall:.1f} s "
        f"({busy:.1f} s of kernel time), {len(failed)} failed",
        flush=True,
    )
    return 1 if failed else 0


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "-j", "--jobs", type=int, default=os.cpu_count() or 1, help="notebooks run at once"
    )
    args = parser.parse_args(argv)
    sys.exit(run(args.jobs))


if __name__ == "__main__":
    main()
