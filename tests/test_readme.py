"""The README's code is true: every ``python`` block runs, in order, as written."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_the_readme_has_python_examples():
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index, capsys):
    namespace: dict = {}
    exec(compile(BLOCKS[index], f"README.md block {index}", "exec"), namespace)


def test_the_extras_table_lists_every_extra_and_the_census_snippet_names_its_own():
    import tomllib

    pyproject = tomllib.loads((README.parent / "pyproject.toml").read_text(encoding="utf-8"))
    extras = set(pyproject["project"]["optional-dependencies"]) - {"all"}
    text = README.read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `([a-z-]+)` \|", text, flags=re.M))
    assert extras <= listed, sorted(extras - listed)
    census = next(b for b in BLOCKS if "read_nmf" in b)
    before = text[: text.index(census)]
    assert '".[census]"' in before[-600:]  # the extra is named just above the snippet


def _requirement_names(requirements) -> set[str]:
    """``name[extras]`` of each requirement, without its version specifier."""
    return {re.match(r"[A-Za-z0-9_.-]+(\[[a-z,]+\])?", r).group(0).lower() for r in requirements}


def test_the_core_and_the_extras_install_what_the_readme_says():
    import tomllib

    project = tomllib.loads((README.parent / "pyproject.toml").read_text(encoding="utf-8"))[
        "project"
    ]
    text = README.read_text(encoding="utf-8")
    core = re.search(r"^pip install \.\s+# the core: (.*)$", text, flags=re.M).group(1)
    assert {n.strip() for n in core.split(",")} == _requirement_names(project["dependencies"])
    extras = project["optional-dependencies"]
    rows = re.findall(r"^\| `([a-z-]+)` \| ([^|]+) \|", text, flags=re.M)
    assert rows
    for name, adds in rows:
        want = _requirement_names(extras[name])
        if "and friends" in adds or "..." in adds:  # docs and test: the table names a few
            listed = {n.strip().removesuffix(" and friends") for n in adds.split(",")}
            assert listed - {"..."} <= want, name
            continue
        listed = set()
        for part in adds.split(" + "):
            part = part.strip()
            if part.startswith("`"):  # another extra's packages
                listed |= _requirement_names(extras[part.strip("`")])
            else:
                listed |= {n.strip() for n in part.split(",")}
        assert listed == want, name
