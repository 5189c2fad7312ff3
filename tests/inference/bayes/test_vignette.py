"""Vignette 04 (Bayes) hides no warning wholesale.

The notebook itself is executed by ``tests/test_vignettes.py``; its first
(hidden) cell turns every UserWarning and FutureWarning into an error, so a
warning fails that run.  This test checks statically that no cell undoes that
with a filter broader than one message of one module.
"""

import ast
from pathlib import Path

import pytest

jupytext = pytest.importorskip("jupytext")

VIGNETTE = Path(__file__).resolve().parents[3] / "vignettes" / "04-bayes.md"


def _ignore_filters(source):
    """``(name, call, keywords)`` of every warnings-filter call whose action is "ignore"."""
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name not in ("filterwarnings", "simplefilter"):
            continue
        kw = {k.arg: k.value for k in node.keywords}
        action = node.args[0] if node.args else kw.get("action")
        if isinstance(action, ast.Constant) and action.value == "ignore":
            yield name, node, kw


def _nonempty_string(node):
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.strip()


def _violations(source):
    out = []
    for name, node, kw in _ignore_filters(source):
        message = node.args[1] if len(node.args) > 1 else kw.get("message")
        if name == "simplefilter" or not (
            _nonempty_string(message) and _nonempty_string(kw.get("module"))
        ):
            out.append(ast.unparse(node))
    return out


def test_vignette_04_filters_warnings_only_by_message_and_module():
    cells = [c.source for c in jupytext.read(VIGNETTE).cells if c.cell_type == "code"]
    assert cells, "the vignette has no code cells"
    assert [v for source in cells for v in _violations(source)] == []
    # warnings become errors before any other cell runs
    first = cells[0]
    assert 'simplefilter("error", UserWarning)' in first
    assert 'simplefilter("error", FutureWarning)' in first


@pytest.mark.parametrize(
    ("source", "bad"),
    [
        ('warnings.filterwarnings("ignore", category=UserWarning)', True),
        ('warnings.filterwarnings("ignore", category=FutureWarning)', True),
        ('warnings.simplefilter("ignore")', True),
        ('warnings.filterwarnings("ignore", message="x", category=UserWarning)', True),
        ('warnings.filterwarnings("ignore", message="", module="pytensor")', True),
        ('warnings.filterwarnings("ignore", message="BLAS", module="pytensor.link")', False),
        ('warnings.filterwarnings("error", category=UserWarning)', False),
    ],
)
def test_filter_check_itself(source, bad):
    assert bool(_violations(source)) is bad
