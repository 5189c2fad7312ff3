"""Deprecations: every old spelling warns, names its replacement, and goes when announced."""

import importlib
import pickle
import pkgutil
import subprocess
import sys
import warnings

import pytest

import invariantdp
from invariantdp._deprecation import (
    NEXT_RELEASE,
    deprecated,
    deprecations,
    moved_modules,
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


def test_a_moved_module_imports_as_the_module_itself_with_a_warning():
    moved_modules({"invariantdp.some_old_path_for_tests": "invariantdp._rng"}, removed_in="9.0.0")
    sys.modules.pop("invariantdp.some_old_path_for_tests", None)
    with pytest.warns(DeprecationWarning, match=r"the module invariantdp\.some_old_path_for_tests"):
        old = importlib.import_module("invariantdp.some_old_path_for_tests")
    import invariantdp._rng as new

    assert old is new
    # a pickle naming the old path loads (classes are the same objects)
    assert pickle.loads(pickle.dumps(new.as_generator)) is new.as_generator


def test_the_warning_points_at_the_importing_line(tmp_path):
    moved = "invariantdp.some_other_old_path_for_tests"
    script = tmp_path / "user_code.py"
    script.write_text(
        "import warnings\n"
        "warnings.simplefilter('always')\n"
        "from invariantdp._deprecation import moved_modules\n"
        f"moved_modules({{{moved!r}: 'invariantdp._rng'}}, removed_in='9.0.0')\n"
        f"import {moved}\n"
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    assert "user_code.py:5: DeprecationWarning" in out.stderr


def test_the_suite_turns_the_package_deprecations_into_errors():
    # pyproject's filterwarnings: the package never calls its own deprecated names
    getattr_ = moved_names("some.module", {"old": "math.sqrt"})
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "error", r".*is deprecated and will be removed in invariantdp", DeprecationWarning
        )
        with pytest.raises(DeprecationWarning):
            getattr_("old")


def _old_paths():
    from invariantdp._deprecation import _FINDER

    return sorted((old, new) for old, (new, _) in _FINDER.moved.items() if "for_tests" not in old)


@pytest.mark.parametrize("old, new", _old_paths())
def test_every_old_module_path_imports_as_its_new_module(old, new):
    # every new module imports with the test extra alone (optional libraries are imported lazily)
    target = importlib.import_module(new)
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"the module {old} is deprecated"):
        module = importlib.import_module(old)
    assert module is target
    assert module.__spec__.name == new  # the module still knows where it lives


def test_an_old_module_path_does_not_replace_the_name_it_defined():
    # invariantdp.distributions.tulap is the Tulap law, and was the module defining it
    import invariantdp.distributions as D
    import invariantdp.mechanisms as M

    law, mech = D.tulap, M.knorm
    for old in ("invariantdp.distributions.tulap", "invariantdp.mechanisms.knorm"):
        sys.modules.pop(old, None)
        with pytest.warns(DeprecationWarning):
            importlib.import_module(old)
    assert D.tulap is law and M.knorm is mech
    from invariantdp.distributions.tulap import tulap_gen  # imported above: no second warning

    assert isinstance(law, tulap_gen)
