"""The API reference's table (docs/api_groups.py) lists every public name once.

Checked without building the site: the same check stops ``make docs``.  A public
name is a name in the ``__all__`` of a module with no ``_``-prefixed part.
"""

import copy
import importlib
import importlib.util
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, DOCS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


api_groups = _load("api_groups")
api_reference = _load("api_reference")


def _problems(groups=None, not_in_reference=None):
    return api_reference.check(
        api_groups.GROUPS if groups is None else groups,
        api_groups.NOT_IN_REFERENCE if not_in_reference is None else not_in_reference,
    )


def _listed(groups, dotted):
    return [
        (key, section)
        for key, group in groups.items()
        for section, names in group["sections"].items()
        if dotted in names
    ]


def test_every_public_name_is_listed_once():
    assert _problems() == []


def test_the_public_modules_are_every_module_without_a_private_part():
    # independent of check(): from the files, not from importing the package
    src = Path(__file__).resolve().parents[1] / "src" / "invariantdp"
    modules = set()
    for path in src.rglob("*.py"):
        parts = path.relative_to(src).with_suffix("").parts
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        if not any(part.startswith("_") for part in parts):
            modules.add(".".join(("invariantdp", *parts)))
    assert set(api_reference.public_modules()) == modules
    assert {"invariantdp", "invariantdp.inference.bayes", "invariantdp.cli.fit"} <= modules


def test_a_missing_name_is_named():
    groups = copy.deepcopy(api_groups.GROUPS)
    (key, section) = _listed(groups, "invariantdp.inference.umpu_odds_ratio_test")[0]
    groups[key]["sections"][section].remove("invariantdp.inference.umpu_odds_ratio_test")
    problems = _problems(groups)
    assert len(problems) == 1
    assert problems[0].startswith("umpu_odds_ratio_test (public in invariantdp, ")
    assert "missing from docs/api_groups.py" in problems[0]


def test_a_name_listed_twice_is_named_even_under_another_home():
    # the top level re-exports the test: the same object, so the same name
    groups = copy.deepcopy(api_groups.GROUPS)
    groups["estimate"]["sections"]["Intervals"].append("invariantdp.umpu_odds_ratio_test")
    problems = _problems(groups)
    assert problems == [
        "umpu_odds_ratio_test is listed 2 times: "
        "invariantdp.inference.umpu_odds_ratio_test (test / The semi-DP odds-ratio test of "
        "a 2 x 2 table); invariantdp.umpu_odds_ratio_test (estimate / Intervals)"
    ]


def test_a_name_under_a_module_that_does_not_export_it_is_refused():
    groups = copy.deepcopy(api_groups.GROUPS)
    names = groups["test"]["sections"]["The DP test of a binomial proportion"]
    names[names.index("invariantdp.inference.ump_binomial_power")] = (
        "invariantdp.mechanisms.ump_binomial_power"
    )
    problems = _problems(groups)
    assert any(
        p.startswith("invariantdp.mechanisms.ump_binomial_power (test / ")
        and "'ump_binomial_power' is not in invariantdp.mechanisms.__all__" in p
        and "public in: invariantdp.inference" in p
        for p in problems
    ), problems
    # and, no longer listed at its home, it is missing
    assert any(p.startswith("ump_binomial_power (public in ") for p in problems)


def test_a_name_that_is_not_public_or_does_not_exist_is_refused():
    groups = copy.deepcopy(api_groups.GROUPS)
    groups["audit"]["sections"]["Audits"] += [
        "invariantdp.audit.no_such_audit",
        "invariantdp._validation.check_probability",
    ]
    problems = _problems(groups)
    assert len(problems) == 2
    assert "'no_such_audit' is not in invariantdp.audit.__all__" in problems[0]
    assert "'invariantdp._validation' is not a public module" in problems[1]


def test_names_left_out_of_the_reference_count_as_listed():
    # a public name taken out of its section counts as listed once it has a reason
    groups = copy.deepcopy(api_groups.GROUPS)
    moved = groups["audit"]["sections"]["Audits"].pop(0)
    assert _problems(groups, {"a reason": [moved]}) == []
    problems = _problems(groups, {})
    assert len(problems) == 1 and problems[0].startswith(f"{moved.rpartition('.')[2]} (")


def test_the_command_line_modules_have_no_public_names():
    # the sub-commands are documented by --help; their plumbing is private
    cli = [m for m in api_reference.public_modules() if m.startswith("invariantdp.cli.")]
    assert cli and all(importlib.import_module(m).__all__ == [] for m in cli)


def test_a_module_opening_two_groups_is_refused():
    groups = copy.deepcopy(api_groups.GROUPS)
    groups["census"]["modules"].append("invariantdp.privacy")
    groups["data"]["modules"].append("invariantdp._frames")
    assert _problems(groups) == [
        "module invariantdp.privacy opens two groups: account and census",
        "module invariantdp._frames (data): not a public module",
    ]


def test_the_build_stops_naming_the_names(tmp_path):
    groups = copy.deepcopy(api_groups.GROUPS)
    groups["simulate"]["sections"]["Simulation studies"].remove("invariantdp.simulate.simulate")
    with pytest.raises(api_reference.ApiTableError, match=r"simulate \(public in"):
        api_reference.write_pages(tmp_path / "api", groups, api_groups.NOT_IN_REFERENCE)
    assert not (tmp_path / "api").exists()


def test_the_pages_list_each_name_once_by_group(tmp_path):
    groups = copy.deepcopy(api_groups.GROUPS)
    # a group without names yet (the census subpackage to come) gets no page
    groups["future"] = {"title": "Future", "intro": "Nothing yet.", "modules": [], "sections": {}}
    pages = api_reference.write_pages(tmp_path, groups, api_groups.NOT_IN_REFERENCE)
    assert pages == [key for key in api_groups.GROUPS]
    text = {page: (tmp_path / f"{page}.rst").read_text() for page in pages}
    entries = [
        line.strip()
        for page in pages
        for line in text[page].splitlines()
        if line.startswith("   invariantdp.")
    ]
    expected = [
        dotted
        for group in api_groups.GROUPS.values()
        for names in group["sections"].values()
        for dotted in names
    ]
    assert entries == expected and len(set(entries)) == len(entries)
    for names in api_groups.NOT_IN_REFERENCE.values():
        assert not set(names) & set(entries)
    index = (tmp_path / "index.rst").read_text()
    assert all(f":doc:`{page}`" in index for page in pages) and "future" not in index
    # each group's title heads its page, and its modules' docstrings close it
    assert text["account"].startswith("Account\n=======\n")
    assert ".. automodule:: invariantdp.privacy\n" in text["account"]
