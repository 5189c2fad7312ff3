"""The documentation site's browser check fails on what it must catch."""

import importlib.util
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("check_site", ROOT / "docs" / "check_site.py")
check_site = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_site)


def test_pages_that_were_not_built_are_reported(tmp_path):
    problems = check_site.check(tmp_path / "html", tmp_path / "shots")
    assert sorted(problems) == sorted(f"{page}: not built" for page in check_site.PAGES)


@pytest.mark.skipif(shutil.which("chromium") is None, reason="needs Debian's chromium")
def test_an_unexecuted_vignette_without_figures_fails(tmp_path):
    html = tmp_path / "html"
    for page in check_site.PAGES:
        (html / page).parent.mkdir(parents=True, exist_ok=True)
        # the words of the page, but no executed output, no figure, no typeset formula
        (html / page).write_text(
            "<html><body><h1>The semi-DP UMPU test of an odds ratio</h1>"
            "<p>print('private estimate')</p><p>umpu_odds_ratio_test statistic Theorem 37"
            "<b>Parameters</b> <b>Returns</b></p></body></html>"
        )
    problems = check_site.check(html, tmp_path / "shots")
    assert any("private estimate" in p for p in problems)
    assert any("mjx-container" in p for p in problems)
    assert any(".png" in p for p in problems)
