"""Every dotted reference in a docstring of the package names something that exists.

A reference is a Sphinx role (``:mod:`._tree_passes```, ``:func:`~.sampler.fit```,
``:class:`invariantdp.Release```, ``:meth:`Summary.as_dict```) or a literal
``invariantdp.`` path in double backquotes.  A target starting with dots is
relative to the module's package, as an import is; any other is looked up in
the enclosing class, the module, its package, the top level, then as an
absolute name.  A module kept at an old released path (``old_module``) and a
deprecated name do not count as the thing they point to: references follow
the moves.
"""

import ast
import importlib
import inspect
import re
import warnings
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "invariantdp"
ALL_MODULES = sorted(SRC.rglob("*.py"))
ROLE = re.compile(r":(?:py:)?(?:mod|func|class|meth|attr|data|exc|obj|const):`([^`]+)`")
LITERAL = re.compile(r"``(invariantdp(?:\.\w+)+)``")
_MISSING = object()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_old_path(module) -> bool:
    file = getattr(module, "__file__", None) or ""
    return file.endswith(".py") and "old_module(__name__," in Path(file).read_text()


def _has_attribute(obj, name: str) -> bool:
    """``obj.name`` exists (not as a deprecated name), or is a field or attribute of a class."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", DeprecationWarning)
        value = getattr(obj, name, _MISSING)
    if any(issubclass(w.category, DeprecationWarning) for w in seen):
        return False
    if value is not _MISSING:
        return True
    if not isinstance(obj, type):
        return False
    if name in getattr(obj, "__dataclass_fields__", {}):
        return True
    for klass in obj.__mro__:
        if name in getattr(klass, "__annotations__", {}):
            return True
        try:
            if f"self.{name} =" in inspect.getsource(klass):
                return True
        except (OSError, TypeError):
            continue
    return False


def _exists(dotted: str) -> bool:
    """The longest importable prefix of ``dotted``, then attributes, name something."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        if _is_old_path(obj):
            continue
        for name in parts[i:]:
            if not _has_attribute(obj, name):
                return False
            obj = getattr(obj, name, None)
            if inspect.ismodule(obj) and _is_old_path(obj):
                return False
        return True
    return False


def _targets(doc: str) -> list[str]:
    out = []
    for m in ROLE.finditer(doc):
        target = m.group(1)
        if target.endswith(">") and "<" in target:  # ``title <target>``
            target = target[target.index("<") + 1 : -1]
        target = target.strip().lstrip("~!")
        out.append(target.removesuffix("()"))
    return out + LITERAL.findall(doc)


def _resolves(target: str, module: str, package: str, scope: list[str]) -> bool:
    if target.startswith("."):
        up = len(target) - len(target.lstrip("."))
        base = package.split(".")[: len(package.split(".")) - (up - 1)]
        return _exists(".".join([*base, target.lstrip(".")]))
    if target.startswith("invariantdp"):
        return _exists(target)
    candidates = [f"{module}.{'.'.join(scope[:i])}.{target}" for i in range(len(scope), 0, -1)]
    candidates += [f"{module}.{target}", f"{package}.{target}", f"invariantdp.{target}"]
    candidates += [target, f"builtins.{target}"]
    return any(_exists(c) for c in candidates)


def _unresolved(path: Path, text: str | None = None) -> list[str]:
    """``line: target`` of every reference in ``path``'s docstrings that names nothing."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []

    def visit(node, scope):
        doc = ast.get_docstring(node, clean=False)
        for target in _targets(doc or ""):
            if not _resolves(target, module, package, scope):
                found.append(f"{getattr(node, 'lineno', 1)}: {target}")
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, [*scope, child.name])
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                visit(child, scope)

    visit(ast.parse(path.read_text() if text is None else text), [])
    return found


@pytest.mark.parametrize("path", ALL_MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_every_docstring_reference_resolves(path):
    assert _unresolved(path) == []


def test_the_checker_sees_stale_references():
    # references of the bayes package before its modules were renamed, and one that moved
    old = (
        '"""Sampling a model of :mod:`.models` with :class:`~.sampler.LatticeMetropolis`.\n\n'
        "The passes are in :mod:`invariantdp.census._gls`; see ``invariantdp._fibres``.\n"
        '"""\n\n'
        "class Fit:\n"
        '    """:meth:`draws` and :attr:`chains` of :class:`invariantdp.Release`."""\n\n'
        "    def draws(self):\n"
        '        """:func:`fit` (:mod:`._latent_samplers`), :exc:`ValueError`."""\n'
    )
    assert _unresolved(SRC / "inference" / "bayes" / "_fit.py", old) == [
        "1: .models",
        "1: .sampler.LatticeMetropolis",
        "1: invariantdp.census._gls",
        "1: invariantdp._fibres",
        "6: draws",
        "6: chains",
    ]
