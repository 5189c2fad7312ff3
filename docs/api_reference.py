"""The API reference: check ``api_groups.GROUPS`` against the package, write its pages.

``docs/conf.py`` calls :func:`write_pages`, which refuses (``ApiTableError``,
naming every problem) a table that misses a public name, lists one twice, or
lists one under a module that does not export it; ``tests/test_api_reference.py``
calls :func:`check` without building the site.
"""

from __future__ import annotations

import importlib
import pkgutil
import shutil
import types
from pathlib import Path

PACKAGE = "invariantdp"
TABLE = "docs/api_groups.py"


class ApiTableError(Exception):
    """The table of the API reference does not list every public name once."""


def public_modules(package: str = PACKAGE) -> list[str]:
    """The package and every submodule with no ``_``-prefixed part in its path."""
    root = importlib.import_module(package)
    names = [package]
    for info in pkgutil.walk_packages(root.__path__, package + "."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def public_names(modules: list[str]) -> dict[tuple[str, int], list[str]]:
    """``(name, id(object)) -> modules exporting it``, over the ``__all__`` of ``modules``.

    A name re-exported by several modules is one entry (same name, same object);
    submodules listed in an ``__all__`` are not names of the reference.
    """
    exported: dict[tuple[str, int], list[str]] = {}
    for module in modules:
        mod = importlib.import_module(module)
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name)
            if not isinstance(obj, types.ModuleType):
                exported.setdefault((name, id(obj)), []).append(module)
    return exported


def entries(groups: dict, not_in_reference: dict) -> list[tuple[str, str]]:
    """``(dotted name, where it is listed)`` for every line of the table."""
    out = []
    for key, group in groups.items():
        for section, names in group["sections"].items():
            out += [(dotted, f"{key} / {section}") for dotted in names]
    for reason, names in not_in_reference.items():
        out += [(dotted, f"NOT_IN_REFERENCE ({reason[:40]}...)") for dotted in names]
    return out


def check(groups: dict, not_in_reference: dict, package: str = PACKAGE) -> list[str]:
    """Every problem of the table, one line each naming the name (empty: the table is right)."""
    modules = public_modules(package)
    exported = public_names(modules)
    problems = []
    listed: dict[tuple[str, int], list[str]] = {}
    for dotted, where in entries(groups, not_in_reference):
        module, _, name = dotted.rpartition(".")
        if module not in modules:
            problems.append(f"{dotted} ({where}): {module!r} is not a public module")
            continue
        mod = importlib.import_module(module)
        if name not in getattr(mod, "__all__", ()):
            problems.append(
                f"{dotted} ({where}): {name!r} is not in {module}.__all__, so that is not "
                f"its home (public in: {', '.join(_homes_of(name, exported)) or 'nothing'})"
            )
            continue
        listed.setdefault((name, id(getattr(mod, name))), []).append(f"{dotted} ({where})")
    for (name, ident), where in sorted(exported.items()):
        places = listed.get((name, ident), [])
        if not places:
            problems.append(
                f"{name} (public in {', '.join(where)}) is missing from {TABLE}: "
                "list it once, under its home module"
            )
        elif len(places) > 1:
            problems.append(f"{name} is listed {len(places)} times: {'; '.join(places)}")
    seen: dict[str, str] = {}
    for key, group in groups.items():
        for module in group.get("modules", ()):
            if module not in modules:
                problems.append(f"module {module} ({key}): not a public module")
            elif module in seen:
                problems.append(f"module {module} opens two groups: {seen[module]} and {key}")
            seen[module] = key
    return problems


def _homes_of(name: str, exported: dict) -> list[str]:
    return sorted({m for (n, _), mods in exported.items() if n == name for m in mods})


def _underline(title: str, char: str) -> list[str]:
    return [title, char * len(title), ""]


def _group_page(group: dict) -> list[str]:
    lines = _underline(group["title"], "=") + [group["intro"], ""]
    for section, names in group["sections"].items():
        if names:
            lines += _underline(section, "-")
            lines += [".. autosummary::", "   :toctree: generated", "   :nosignatures:", ""]
            lines += [f"   {dotted}" for dotted in names] + [""]
    # the modules' docstrings are the background of the group, folded and
    # after the names (an automodule above the autosummaries would make
    # autosummary read the full names as relative to that module)
    if group.get("modules"):
        lines += _underline("Background", "-")
    for module in group.get("modules", ()):
        doc = (importlib.import_module(module).__doc__ or "").strip()
        first = doc.splitlines()[0].rstrip(".") if doc else module
        lines += [f".. dropdown:: ``{module}``: {first}", "   :class-container: api-module", ""]
        lines += [f"   .. automodule:: {module}", "      :no-members:", ""]
    return lines


def write_pages(out: Path, groups: dict, not_in_reference: dict) -> list[str]:
    """Write ``out/index.rst`` and one page per group with names; return the page names.

    Raises :class:`ApiTableError` listing every problem :func:`check` finds.
    """
    problems = check(groups, not_in_reference)
    if problems:
        raise ApiTableError(
            f"the API reference table ({TABLE}) does not list every public name once:\n  "
            + "\n  ".join(problems)
        )
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    pages = []
    for key, group in groups.items():
        if any(group["sections"].values()):
            (out / f"{key}.rst").write_text("\n".join(_group_page(group)))
            pages.append(key)
    index = _underline("API reference", "=") + [
        "Every public name once, at the module you import it from, grouped by what "
        "you set out to do.",
        "",
        ".. toctree::",
        "   :hidden:",
        "",
        *(f"   {page}" for page in pages),
        "",
    ]
    for page in pages:
        index += [f":doc:`{page}`", f"   {groups[page]['intro']}", ""]
    (out / "index.rst").write_text("\n".join(index))
    return pages
