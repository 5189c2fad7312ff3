"""The documentation site's browser check (docs/check_site.py) fails on what it must catch.

The pages here are small stand-ins with the structure of the site's theme (top
bar, sidebar, article): each carries one defect the check exists for, and a
sound one shows the check does not cry wolf.
"""

import importlib.util
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("check_site", ROOT / "docs" / "check_site.py")
check_site = importlib.util.module_from_spec(spec)
sys.modules["check_site"] = check_site  # its dataclass looks itself up there
spec.loader.exec_module(check_site)
Page = check_site.Page

#: set by `make test INSTALL_BROWSER=1` (CI): the browser is installed, its tests may not skip
REQUIRED = os.environ.get("INVARIANTDP_REQUIRE_BROWSER") == "1"
needs_chromium = pytest.mark.skipif(
    check_site.browser() is None and not REQUIRED,
    reason="needs Debian's chromium (make test INSTALL_BROWSER=1)",
)

STYLE = """
body { margin: 0; font: 16px sans-serif; }
.bd-header { height: 60px; display: flex; gap: 1em; }
.dropdown-menu { display: none; }
.bd-main { display: flex; }
.bd-sidebar-primary { width: 250px; flex: none; }
.bd-article-container { width: 700px; overflow-x: auto; padding: 16px; }
pre { overflow: auto; }
"""


def _page(body="<p>Some text.</p>", links=("A", "B"), topbar=check_site.TOPBAR, folded=()):
    bar = "".join(f'<a class="nav-link" href="#">{t}</a>' for t in topbar)
    more = "".join(f'<a class="nav-link" href="#">{t}</a>' for t in folded)
    nav = "".join(f'<a href="#">{t}</a>' for t in links)
    return (
        f"<html><head><style>{STYLE}</style></head><body>"
        f'<header class="bd-header"><div class="navbar-header-items">{bar}'
        f'<div class="dropdown"><button>More</button><div class="dropdown-menu">{more}</div>'
        "</div></div></header>"
        '<div class="bd-main"><div class="bd-sidebar-primary"><nav class="bd-docs-nav">'
        f'<p class="bd-links__title">Section Navigation</p>{nav}</nav></div>'
        f'<div class="bd-article-container"><article class="bd-article">{body}</article>'
        "</div></div></body></html>"
    )


def _check(tmp_path, pages: dict, nav=("A", "B")):
    html = tmp_path / "html"
    html.mkdir()
    for name, text in pages.items():
        (html / name).write_text(text)
    return check_site.check(html, tmp_path / "shots", [Page(name, nav=nav) for name in pages])


def test_pages_that_were_not_built_are_reported(tmp_path):
    problems = check_site.check(tmp_path / "html", tmp_path / "shots")
    assert problems == [f"{page.path}: not built" for page in check_site.PAGES]


def test_the_measurements_are_read_into_problems():
    found = {
        "width": 1280,
        "page": 1500,
        "topbar": ["User guide", "Vignettes"],
        "folded": ["API reference"],
        "sidebar": {"title": True, "links": []},
        "overflow": ["pre is 900 px wide in 700 px (cut off or scrolling sideways)"],
        "wide": ["div scrolls: 1700 px in 700"],
    }
    page = Page("v.html", nav=("Mechanisms",))
    assert check_site.layout_problems(page, found) == [
        "v.html: the page is 1500 px wide in a 1280 px window",
        "v.html: the top bar does not show 'API reference' (folded under More)",
        "v.html: the section navigation lacks ['Mechanisms']",
        'v.html: "Section Navigation" over nothing',
        "v.html: pre is 900 px wide in 700 px (cut off or scrolling sideways)",
    ]
    # a table or formula in a scroll box of its own is reported apart, not failed
    assert check_site.wide_boxes(page, found) == ["v.html: div scrolls: 1700 px in 700"]
    sound = {"width": 1280, "page": 1280, "topbar": list(check_site.TOPBAR), "folded": []}
    assert check_site.layout_problems(Page("p.html"), {**sound, "sidebar": None}) == []
    assert check_site.layout_problems(page, {**sound, "sidebar": None}) == [
        "v.html: no section navigation (it should list 'Mechanisms'...)"
    ]


@needs_chromium
def test_a_sound_page_passes(tmp_path):
    table = "<table>" + "<td>cell</td>" * 200 + "</table>"
    body = f"<h1>A title</h1><pre>short code</pre><div style='overflow-x:auto'>{table}</div>"
    assert _check(tmp_path, {"p.html": _page(body)}) == []


@needs_chromium
def test_overflow_at_1280_px_is_caught(tmp_path):
    long = "invariantdp.inference.umpu_odds_ratio_test_" * 8
    problems = _check(
        tmp_path,
        {
            "code.html": _page(f"<pre>x = {long}</pre>"),
            "title.html": _page(f"<h1 style='overflow:hidden;white-space:nowrap'>{long}</h1>"),
            "spill.html": _page(f"<h1 style='white-space:nowrap'>{long}</h1>"),
            "past.html": _page("<div style='width:1500px'>" + "words " * 50 + "</div>"),
            "page.html": _page() + "<div style='width:2400px'>wide</div>",
        },
    )
    assert any(
        p.startswith('code.html: pre "x = invariantdp') and "px wide in" in p for p in problems
    )
    assert any(p.startswith('title.html: h1 "invariantdp') and "cut off" in p for p in problems)
    assert any(p.startswith('spill.html: h1 "invariantdp') and "spills" in p for p in problems)
    assert "past.html: the article scrolls sideways" in problems
    assert any(
        p.startswith("past.html: div") and "past the right edge of the article" in p
        for p in problems
    )
    assert any(p.startswith("page.html: the page is 24") for p in problems)


@needs_chromium
def test_missing_or_empty_navigation_is_caught(tmp_path):
    problems = _check(tmp_path, {"empty.html": _page(links=()), "short.html": _page(links=("A",))})
    assert problems == [
        "empty.html: the section navigation lacks ['A', 'B']",
        'empty.html: "Section Navigation" over nothing',
        "short.html: the section navigation lacks ['B']",
    ]


@needs_chromium
def test_a_main_section_folded_under_more_is_caught(tmp_path):
    page = _page(topbar=("User guide", "Vignettes"), folded=("API reference",))
    assert _check(tmp_path, {"bar.html": page}) == [
        "bar.html: the top bar does not show 'API reference' (folded under More)"
    ]


@needs_chromium
def test_an_unexecuted_vignette_without_figures_fails(tmp_path):
    html = tmp_path / "html"
    pages = [p for p in check_site.PAGES if p.path.startswith(("index", "vignettes/01", "api/gen"))]
    assert len(pages) == 4
    for page in pages:
        (html / page.path).parent.mkdir(parents=True, exist_ok=True)
        # the words of the page, but no executed output, no figure, no typeset formula
        (html / page.path).write_text(
            _page(
                "<h1>The semi-DP UMPU test of an odds ratio</h1>"
                "<p>print('private estimate')</p><p>umpu_odds_ratio_test statistic Theorem 37"
                "<b>Parameters</b> <b>Returns</b></p>",
                links=check_site.VIGNETTES + check_site.API_GROUPS,
            )
        )
    problems = check_site.check(html, tmp_path / "shots")
    assert any(
        p.startswith("vignettes/01-odds-ratio-test.html: ") and "private estimate" in p
        for p in problems
    )
    assert any("mjx-container" in p for p in problems)
    assert any(p.startswith("index.html: ") and ".png" in p for p in problems)
    assert any(p.startswith("index.html: ") and "p-value" in p for p in problems)


def test_the_browser_is_here_when_the_run_requires_it():
    assert check_site.browser() is not None or not REQUIRED, (
        "INVARIANTDP_REQUIRE_BROWSER=1 but no chromium on PATH: run `make browser`"
    )


def test_ci_installs_the_browser_before_the_suite_and_requires_it():
    # a skip that CI always takes is a test that never runs
    ci = (ROOT / ".ci" / "run").read_text()
    first_make = re.search(r"^make .*$", ci, re.M).group(0)
    assert first_make == "make test INSTALL_BROWSER=1"
    make = (ROOT / "Makefile").read_text()
    recipe = make[make.index("\ntest:") :].split("\n\n")[0]
    assert "$(if $(INSTALL_BROWSER),browser)" in recipe.splitlines()[1]
    assert "$(REQUIRE_BROWSER) $(BIN)/python -m pytest" in recipe
    assert "REQUIRE_BROWSER := $(if $(INSTALL_BROWSER),INVARIANTDP_REQUIRE_BROWSER=1,)" in make
