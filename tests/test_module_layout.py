"""Layout rules: no import cycle, no private module or name imported across packages.

A helper that two subpackages need lives in a shared module at the top level
(``invariantdp._frames``, ``invariantdp._results``) or is imported from its
package's ``__init__`` (``from .._linalg import cell_classes``), and consumers
use the public accessors of ``Invariants``.  The rules hold for every module of
the package, so they hold through renames and splits.
"""

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "invariantdp"
ALL_MODULES = sorted(SRC.rglob("*.py"))


def _subpackage(parts: list[str]) -> str | None:
    """The subpackage of ``invariantdp`` a dotted module path belongs to (None: top level)."""
    return parts[1] if len(parts) > 2 else None


def _private_cross_imports(path: Path, text: str | None = None) -> list[str]:
    """``module.name`` of every private name ``path`` imports from another subpackage."""
    rel = list(path.relative_to(SRC.parent).with_suffix("").parts)
    package = rel[:-1]
    module = package if rel[-1] == "__init__" else rel
    found = []
    for node in ast.walk(ast.parse(path.read_text() if text is None else text)):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            target = package[: len(package) - node.level + 1] + (
                node.module.split(".") if node.module else []
            )
        else:
            target = (node.module or "").split(".")
        if target[0] != "invariantdp":
            continue
        for a in node.names:
            # ``from . import _x`` imports the module ``_x`` of the package ``target``
            where = target if node.module else [*target, a.name]
            if _subpackage(where) == _subpackage(module):
                continue
            if a.name.startswith("_") and not a.name.startswith("__"):
                found.append(f"{'.'.join(target)}.{a.name}")
    return found


@pytest.mark.parametrize("path", ALL_MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_no_private_name_is_imported_across_subpackages(path):
    assert _private_cross_imports(path) == []


def test_the_checker_sees_a_private_cross_import():
    # the rule is enforced, not vacuous: the old plotting/swapping.py broke it
    old = (
        "from ..mechanisms.swapping import _roles, _sources_global\n"
        "from ..privacy.swapping import _group_codes, swapping_epsilon\n"
        "from ._common import get_ax\n"
        "from .._frames import group_codes\n"
    )
    assert _private_cross_imports(SRC / "plotting" / "swapping.py", old) == [
        "invariantdp.mechanisms.swapping._roles",
        "invariantdp.mechanisms.swapping._sources_global",
        "invariantdp.privacy.swapping._group_codes",
    ]


def test_the_checker_sees_the_old_private_imports_of_knorm_and_release():
    # knorm took the byte guard of sensitivity privately; release took a matrix helper
    old_knorm = "from ..sensitivity import HullNorm, _check_bytes\n"
    assert _private_cross_imports(SRC / "mechanisms" / "knorm.py", old_knorm) == [
        "invariantdp.sensitivity._check_bytes"
    ]
    old_release = "from .invariants._structure import _same_matrix\n"
    assert _private_cross_imports(SRC / "release.py", old_release) == [
        "invariantdp.invariants._structure._same_matrix"
    ]
    # a module of its own package is not a cross import; one of another package is
    own = "from . import _geometry as geo\nfrom .. import _schema\n"
    assert _private_cross_imports(SRC / "invariants" / "_core.py", own) == ["invariantdp._schema"]


# --- a package's private modules are imported only inside it -------------------


def _modules() -> dict:
    """``{dotted module name: path}`` of every module of the package."""
    out = {}
    for p in ALL_MODULES:
        parts = list(p.relative_to(SRC.parent).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


MODULES = _modules()


def _private_module_imports(path: Path, text: str | None = None) -> list[str]:
    """Every private module ``path`` imports from outside the package that holds it.

    A module whose dotted path ends in ``_x`` belongs to the package above it;
    any module inside that package may import it, others import from the
    package's ``__init__`` (a private package's ``__init__`` is its front door:
    ``invariantdp._gls`` may be imported anywhere, ``invariantdp._gls._problem``
    only inside ``invariantdp._gls``).
    """
    rel = list(path.relative_to(SRC.parent).with_suffix("").parts)
    package = rel[:-1]
    module = ".".join(package if rel[-1] == "__init__" else rel)
    found = []
    for node in ast.walk(ast.parse(path.read_text() if text is None else text)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + (node.module.split(".") if node.module else []))
            else:
                target = node.module or ""
            # ``from pkg import _x`` imports the module ``pkg._x`` when there is one
            targets = [target] + [f"{target}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        for dotted in targets:
            if dotted not in MODULES:
                continue
            parts = dotted.split(".")
            if not parts[-1].startswith("_"):
                continue
            owner = ".".join(parts[:-1])
            if module != owner and not module.startswith(owner + "."):
                found.append(dotted)
    return found


@pytest.mark.parametrize("path", ALL_MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_no_private_module_is_imported_from_outside_its_package(path):
    assert _private_module_imports(path) == []


def test_the_checker_sees_a_private_module_imported_across_packages():
    # the imports of the census GLS and of the mechanisms before the engine had its package
    census = (
        "from .._gls._tree_passes import Solution, solve\n"
        "from .._gls import EigenAlgebra\n"
        "from ._slice import slice_index\n"
        "from .._validation import InvariantDPError\n"
        "from ..distributions import _discrete_laws\n"
        "import invariantdp._linalg._fibres\n"
    )
    assert _private_module_imports(SRC / "census" / "_estimate.py", census) == [
        "invariantdp._gls._tree_passes",
        "invariantdp.distributions._discrete_laws",
        "invariantdp._linalg._fibres",
    ]
    mechanisms = (
        "from ..distributions._constant import float_up\n"
        "from ..families._calibration import gaussian_sigma\n"
        "from ..families import gaussian_sigma\n"
        "from ._base import guarantee\n"
    )
    assert _private_module_imports(SRC / "mechanisms" / "_additive.py", mechanisms) == [
        "invariantdp.distributions._constant",
        "invariantdp.families._calibration",
    ]
    # inside the package that holds it, at any depth, a private module is free to import
    inside = "from ..._linalg import cell_classes\nfrom .._tidy import TidyResult\n"
    assert _private_module_imports(SRC / "inference" / "bayes" / "_moves.py", inside) == []


PRIVATE_STRUCTURE = ("._groups(", "._derived", "._group_counts(", "._row_basis(", "._batch(")


@pytest.mark.parametrize(
    "path",
    [p for p in ALL_MODULES if "invariants" not in p.relative_to(SRC).parts],
    ids=lambda p: str(p.relative_to(SRC)),
)
def test_no_private_invariants_internals_outside_the_package(path):
    # consumers use Invariants' public accessors (group_codes, dense_matrix, ...)
    text = path.read_text()
    assert [s for s in PRIVATE_STRUCTURE if s in text] == []


# --- no import cycle (issue 11): every import counts, lazy ones inside functions too


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _import_graph(paths) -> dict:
    """``{module: modules it imports}`` within the package (``from .x import y`` and friends)."""
    modules = {_module_name(p): p for p in paths}
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                elif (node.module or "").startswith("invariantdp"):
                    target = node.module
                else:
                    continue
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    targets.add(sub if sub in modules else target)
            elif isinstance(node, ast.Import):
                targets |= {a.name for a in node.names if a.name.startswith("invariantdp")}
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def _cycles(graph: dict) -> list:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle_in_src():
    assert _cycles(_import_graph(ALL_MODULES)) == []


def test_the_cycle_checker_sees_a_lazy_cycle(tmp_path):
    pkg = tmp_path / "invariantdp"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import f\n")
    (pkg / "b.py").write_text("def f():\n    from .a import g\n")
    global SRC
    saved, SRC = SRC, pkg
    try:
        graph = _import_graph(sorted(pkg.rglob("*.py")))
    finally:
        SRC = saved
    assert _cycles(graph) == [["invariantdp.a", "invariantdp.b"]]


# --- names that say what a module holds (issue 21): no two modules share a basename


def _basename(path: Path) -> str:
    return path.stem.lstrip("_")


def _is_old_path(path: Path) -> bool:
    """A module kept at a released path that moved: a docstring and ``old_module`` only."""
    body = ast.parse(path.read_text()).body
    return (
        len(body) == 3
        and isinstance(body[0], ast.Expr)
        and isinstance(body[1], ast.ImportFrom)
        and [a.name for a in body[1].names] == ["old_module"]
        and isinstance(body[2], ast.Assign)
        and getattr(body[2].value.func, "id", None) == "old_module"
    )


def test_the_checker_knows_an_old_path_from_a_module():
    assert _is_old_path(SRC / "mechanisms" / "additive.py")
    assert not _is_old_path(SRC / "mechanisms" / "_additive.py")
    assert not _is_old_path(SRC / "_deprecation.py")


def test_no_two_modules_share_a_basename():
    # a leading underscore does not make another name (published.py beside _published.py);
    # the command line's modules are named after their sub-commands and stay aside
    seen: dict[str, list[str]] = {}
    for path in ALL_MODULES:
        rel = path.relative_to(SRC)
        if path.name in ("__init__.py", "__main__.py") or rel.parts[0] == "cli":
            continue
        if _is_old_path(path):  # old public paths keep their old names until removed
            continue
        seen.setdefault(_basename(path), []).append(str(rel))
    assert {k: v for k, v in seen.items() if len(v) > 1} == {}


def test_the_public_modules_are_the_packages_and_the_top_level_modules():
    # a name's public home is its subpackage: the modules inside a subpackage are private
    public = [
        str(p.relative_to(SRC))
        for p in ALL_MODULES
        if p.name != "__init__.py"
        and len(p.relative_to(SRC).parts) > 1
        and p.relative_to(SRC).parts[0] != "cli"
        and not p.name.startswith("_")
        and not _is_old_path(p)
    ]
    assert public == []


# --- hard dependencies are imported once, at the top of a module


def _imports_inside_functions(text: str, package: str) -> list[int]:
    """Lines of the imports of ``package`` that are not at a module's top level."""
    tree = ast.parse(text)
    top = set(map(id, tree.body))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        and id(node) not in top
        and any(
            (a.name if isinstance(node, ast.Import) else node.module or "").split(".")[0] == package
            for a in node.names
        )
    ]


@pytest.mark.parametrize("path", ALL_MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_pandas_is_imported_at_the_top_of_a_module(path):
    # pandas is a hard dependency, loaded with the package: a lazy import only hides it
    assert _imports_inside_functions(path.read_text(), "pandas") == []


def test_the_checker_sees_a_lazy_pandas_import():
    text = "import pandas as pd\ndef f():\n    import pandas as pd\n    from pandas import Index\n"
    assert _imports_inside_functions(text, "pandas") == [3, 4]
