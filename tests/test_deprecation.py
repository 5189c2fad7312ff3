"""Deprecations: every old spelling warns, names its replacement, and goes when announced."""

import importlib
import json
import pickle
import pkgutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import invariantdp
from invariantdp._deprecation import (
    NEXT_RELEASE,
    deprecated,
    deprecations,
    moved_names,
    release_tuple,
)


def _import_everything():
    for info in pkgutil.walk_packages(invariantdp.__path__, "invariantdp."):
        if info.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(info.name)
        except ImportError as exc:  # an optional extra (pymc, dask) that is not installed
            if "invariantdp" in str(exc):
                raise


def test_nothing_outlives_its_announced_removal():
    # fails once the version reaches a deprecation's removed_in: remove the old
    # spelling (and its CHANGELOG line moves to "Removed")
    _import_everything()
    version = release_tuple(invariantdp.__version__)
    overdue = [d for d in deprecations() if release_tuple(d.removed_in) <= version]
    assert deprecations(), "the registry is empty: the deprecations are not recorded"
    assert overdue == []


def test_every_deprecation_is_due_in_a_later_release():
    _import_everything()
    assert release_tuple(NEXT_RELEASE) > release_tuple(invariantdp.__version__)
    for d in deprecations():
        assert d.new and d.old != d.new
        assert d.message().endswith(f"use {d.new}.")


@pytest.mark.parametrize(
    "version, expected",
    [("0.2.0.dev0", (0, 2, 0)), ("1.10", (1, 10, 0)), ("0.3.0rc1", (0, 3, 0)), ("2", (2, 0, 0))],
)
def test_release_tuple(version, expected):
    assert release_tuple(version) == expected


def test_a_removal_version_is_checked_when_recorded():
    with pytest.raises(ValueError):
        deprecated("x", "y", removed_in="soon")


def test_moved_names_warn_once_per_read_and_give_the_object():
    getattr_ = moved_names("some.module", {"old": "math.sqrt"}, removed_in="9.0.0")
    import math

    with pytest.warns(
        DeprecationWarning, match=r"some\.module\.old is deprecated .* 9\.0\.0; use math\.sqrt"
    ):
        assert getattr_("old") is math.sqrt
    with pytest.raises(AttributeError, match="has no attribute 'other'"):
        getattr_("other")


def test_the_suite_turns_the_package_deprecations_into_errors():
    # pyproject's filterwarnings: the package never calls its own deprecated names
    getattr_ = moved_names("some.module", {"old": "math.sqrt"})
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "error", r".*is deprecated and will be removed in invariantdp", DeprecationWarning
        )
        with pytest.raises(DeprecationWarning):
            getattr_("old")


SRC = Path(invariantdp.__file__).parent
RELEASED = json.loads((Path(__file__).parent / "data" / "released_module_paths.json").read_text())


def _shims() -> list[str]:
    """The modules kept at an old path: the files that call ``old_module``."""
    out = []
    for path in SRC.rglob("*.py"):
        if "old_module(__name__," in path.read_text():
            parts = path.relative_to(SRC.parent).with_suffix("").parts
            out.append(".".join(parts))
    return sorted(out)


def test_the_old_module_paths_kept_are_those_of_a_release():
    # a short module per released public path that moved (scipy's way), nothing else
    assert _shims() == sorted(RELEASED["modules"])
    for name in _shims():
        assert len((SRC.parent / (name.replace(".", "/") + ".py")).read_text().splitlines()) <= 10


def test_no_import_hook_and_no_old_path_that_was_not_released():
    assert not [f for f in sys.meta_path if type(f).__module__.startswith("invariantdp")]
    # a private module path, and a public one that never shipped in a release
    for old in ("invariantdp._published", "invariantdp.distributions.knorm"):
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module(old)


@pytest.mark.parametrize("old", sorted(RELEASED["modules"]))
def test_every_name_of_a_released_module_path_is_kept(old):
    # importing reads nothing and does not warn; each name the path had warns and is there
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        module = importlib.import_module(old)
    assert module.__name__ == old
    parts = old.split(".")
    for name in RELEASED["modules"][old]:
        # the path's warning, or that of a name deprecated again at its new home
        with pytest.warns(DeprecationWarning, match=rf"(the module {old}|\.{name}) is deprecated"):
            obj = getattr(module, name)
        for depth in (2, 3):  # the package it was in, or the top of the package
            home = importlib.import_module(".".join(parts[:depth]))
            if name in getattr(home, "__all__", ()):
                assert obj is getattr(home, name)
    with pytest.raises(AttributeError, match="has no attribute"):
        module.no_such_name  # noqa: B018


def test_a_pickle_naming_a_released_path_loads():
    from invariantdp.privacy import TradeoffFunction

    with pytest.warns(DeprecationWarning, match="invariantdp.privacy.tradeoff"):
        assert pickle.loads(b"cinvariantdp.privacy.tradeoff\nTradeoffFunction\n.") is (
            TradeoffFunction
        )


def _run(tmp_path, code: str) -> subprocess.CompletedProcess:
    script = tmp_path / "user_code.py"
    script.write_text("import warnings\nwarnings.simplefilter('always')\n" + code)
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)


def test_the_warning_points_at_the_line_that_reads_a_name(tmp_path):
    out = _run(
        tmp_path,
        "import invariantdp.privacy.tradeoff\n"
        "from invariantdp.privacy.tradeoff import TradeoffFunction\n",
    )
    assert "user_code.py:3" not in out.stderr
    assert "user_code.py:4: DeprecationWarning: the module invariantdp.privacy.tradeoff" in (
        out.stderr
    )


def test_an_old_module_path_does_not_replace_the_name_it_defined(tmp_path):
    # invariantdp.distributions.tulap is the Tulap law, and was the module defining it
    out = _run(
        tmp_path,
        "import invariantdp.distributions.tulap\n"
        "import invariantdp.mechanisms.knorm\n"
        "from invariantdp.distributions import tulap\n"
        "from invariantdp.mechanisms import knorm\n"
        "from invariantdp.distributions.tulap import tulap_gen\n"
        "print(isinstance(tulap, tulap_gen), knorm.__module__)\n",
    )
    assert out.stdout.split() == ["True", "invariantdp.mechanisms._knorm_mechanisms"]
