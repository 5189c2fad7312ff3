"""No code outside ``families/`` decides anything by a noise family's name.

A release's noise is read through its :class:`~invariantdp.families.NoiseFamily`
(its law, calibration, claim, test view, likelihood, cell noise, measurement
noise); a comparison of ``noise.family`` with ``"gaussian"`` elsewhere is a
second home of what the family says, and goes stale when a family is added.
The check walks the syntax tree of every module outside ``families/`` and
flags a string that names a registered family when it is compared (``==``,
``!=``, ``in``, ``not in``), or two or more of them as the keys of a dict or
the items of a tuple, list or set (a lookup table by family name).
"""

import ast
from pathlib import Path

import pytest

from invariantdp.families import noise_families

SRC = Path(__file__).resolve().parents[2] / "src" / "invariantdp"
FAMILY_NAMES = frozenset(noise_families())

#: strings spelled like a family that name something else: (module, source of the node)
NOT_FAMILY_NAMES = {
    # the likelihood a model maximises ("exact" or "gaussian"), not a noise family
    ("inference/_count_likelihoods.py", "likelihood == 'gaussian'"),
    # SubspaceNoise's coordinate law (a distribution's own argument, below the families)
    ("distributions/_subspace_laws.py", "{'gaussian': (stats.norm, True, lambda gen, size: "),
}


def _strings(node) -> set:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return set().union(set(), *(_strings(e) for e in node.elts))
    return set()


def _is_all(node) -> bool:
    return isinstance(node, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
    )


def family_name_uses(text: str) -> list[str]:
    """Source of each node of ``text`` that compares with or tabulates family names."""
    tree = ast.parse(text)
    skip = set()
    for node in ast.walk(tree):
        if _is_all(node):  # the names of functions such as `gaussian`, not of families
            skip.add(id(node.value))
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "moved_names":
            skip.update(id(a) for a in node.args)  # old attribute names of a module
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Compare):
            if any(_strings(side) & FAMILY_NAMES for side in (node.left, *node.comparators)):
                found.append(ast.unparse(node))
        elif isinstance(node, ast.Dict):
            keys = set().union(set(), *(_strings(k) for k in node.keys if k is not None))
            if len(keys & FAMILY_NAMES) >= 2:
                found.append(ast.unparse(node)[:60])
        elif isinstance(node, ast.Tuple | ast.List | ast.Set):
            if len(_strings(node) & FAMILY_NAMES) >= 2:
                found.append(ast.unparse(node)[:60])
    return found


MODULES = sorted(p for p in SRC.rglob("*.py") if "families" not in p.relative_to(SRC).parts)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_no_family_name_is_compared_outside_families(path):
    rel = path.relative_to(SRC).as_posix()
    found = [
        src
        for src in family_name_uses(path.read_text())
        if not any(rel == m and src.startswith(s) for m, s in NOT_FAMILY_NAMES)
    ]
    assert not found, f"{rel} decides by a noise family's name: {found}"


@pytest.mark.parametrize(
    "text",
    [
        "if release.noise.family == 'gaussian':\n    pass",
        "ok = family not in ('discrete_gaussian', 'gaussian')",
        "_READ_AS = {'gaussian': 'normal', 'grid_gaussian': 'grid'}",
        "NOISE = ['discrete_gaussian', 'gaussian']",
        "x = 'tulap' != name",
    ],
)
def test_the_checker_sees_a_family_name_comparison(text):
    assert family_name_uses(text)


@pytest.mark.parametrize(
    "text",
    [
        "__all__ = ['gaussian', 'laplace']",
        "fam = noise_family('gaussian')",
        "if mech.norm != 'linf':\n    pass",
        "__getattr__ = moved_names(__name__, {'laplace': f, 'gaussian': g})",
    ],
)
def test_the_checker_leaves_other_strings_alone(text):
    assert not family_name_uses(text)
