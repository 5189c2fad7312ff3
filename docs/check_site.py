"""Open the built documentation in a real headless browser and check what renders.

``make docs`` runs this after Sphinx.  It serves ``docs/_build/html`` on
localhost and loads pages in Debian's ``chromium`` (headless) at 1280 x 1000,
the width of a laptop screen.  A script added to each page as it is served
measures, in the layout the browser computed:

* the top bar: the main sections (``TOPBAR``) are links shown in it, none
  folded under "More";
* the navigation: a page whose section has other pages shows them in its
  sidebar, and no page shows a "Section Navigation" with nothing under it;
* overflow: nothing in the page is wider than the window, and nothing in the
  article or the sidebars runs past their right edge, is cut off, or needs
  scrolling sideways (code, output, titles, names); a table or a displayed
  formula wider than the column may scroll in a box of its own (listed as
  ``note``, not failed);

and the page's DOM must carry what a reader needs (``Page.patterns``: the
signature and Parameters of an API page; a vignette's printed results and
figures, with the image files present; the home page's quickstart output,
figure and cards).  A screenshot of the home page, an API page and a vignette
is saved in ``docs/_build/screenshots``.  Any problem fails the check (exit
status 1), one line each.

Run: ``python docs/check_site.py [--html docs/_build/html] [--if-available]``;
``--if-available`` skips the check, saying so, when no chromium is installed
(``make docs`` without ``INSTALL_BROWSER=1``).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
WIDTH, HEIGHT = 1280, 1000

#: the main sections, each a link of the top bar on every page
TOPBAR = ("User guide", "Vignettes", "API reference")

VIGNETTES = (
    "The semi-DP UMPU test of an odds ratio",
    "Mechanisms that keep invariants exactly",
    "Congenial releases and likelihoods that respect invariants",
    "Bayesian inference from a noisy table with invariants",
    "Data swapping as differential privacy",
    "From published census numbers to a fitted model",
)
API_GROUPS = ("Make a release", "Read a release", "Test", "Model", "Account")


@dataclass(frozen=True)
class Page:
    """A page to load: what its DOM must match, what its sidebar must list."""

    path: str
    #: regular expressions the rendered DOM must match
    patterns: tuple[str, ...] = ()
    #: link texts the sidebar's section navigation must show (empty: no
    #: sidebar needed, but one that is shown must not be empty)
    nav: tuple[str, ...] = ()
    screenshot: bool = False


FIGURE = r"<img[^>]+src=\"[^\"]+\.png\""
PAGES = (
    Page(
        "index.html",
        (
            r"\.\[all\]",  # the install line
            # the quickstart ran: its printed summary, with numbers
            r"p-value:\s+\d",
            r"95% two-sided confidence interval:\s+\(\d",
            FIGURE,
            # the cards to the three parts of the site
            r"sd-card[\s\S]*User guide[\s\S]*Vignettes[\s\S]*API reference",
        ),
        screenshot=True,
    ),
    Page("guide/index.html", (r"Conventions",)),
    Page("vignettes.html", (r"sd-card",), nav=VIGNETTES),
    Page(
        "vignettes/01-odds-ratio-test.html",
        (
            r"The semi-DP UMPU test of an odds ratio",
            # outputs of executed cells (the source holds the words, not the numbers)
            r"private estimate\s+\d+\.\d{3}",
            r"Kolmogorov-Smirnov p-value against U\(0, 1\): \d\.\d",
            FIGURE,
        ),
        nav=VIGNETTES,
        screenshot=True,
    ),
    *(
        Page(f"vignettes/{name}.html", figures, nav=VIGNETTES)
        for name, figures in (
            ("02-mechanisms", (FIGURE,)),
            ("03-congenial-and-likelihood", (FIGURE,)),
            ("04-bayes", (r"posterior mean",)),
            ("05-swapping", (FIGURE,)),
            ("06-from-published-numbers", (r"PrivatizedPoisson",)),
            ("07-census-noisy-measurements", (FIGURE, r"TopDown-like")),
            ("08-release-layout-state-file", (FIGURE, r"District 4", r"hhinstlevels")),
        )
    ),
    Page("api/index.html", (r"Make a release", r"Account")),
    Page("api/make-a-release.html", (r"laplace_mechanism",), nav=API_GROUPS),
    # a group page closing with its modules' docstrings, folded
    Page("api/simulate.html", (r"sd-dropdown", r"Streams\."), nav=API_GROUPS),
    Page(
        "api/generated/invariantdp.inference.umpu_odds_ratio_test.html",
        (
            r"<h1>umpu_odds_ratio_test",  # the page's title is the name, whole
            r">Parameters<",
            r">Returns<",
            r"statistic",
            r"Theorem 37",
            r"<mjx-container",  # the formula typeset by MathJax (served offline)
        ),
        nav=API_GROUPS,
        screenshot=True,
    ),
    Page("api/generated/invariantdp.Release.html", (r"from_published",), nav=API_GROUPS),
    Page("changelog.html", (r"Unreleased",)),
)

#: measures the layout once the page (and MathJax) settled; the result goes
#: into the DOM as JSON, where ``--dump-dom`` finds it
PROBE = r"""
<script>
(function () {
  function shown(el) {
    var r = el.getBoundingClientRect(), s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== "hidden" && s.display !== "none";
  }
  function describe(el) {
    var d = el.tagName.toLowerCase();
    if (typeof el.className === "string" && el.className.trim())
      d += "." + el.className.trim().split(/\s+/).slice(0, 2).join(".");
    var t = (el.textContent || "").trim().replace(/\s+/g, " ").slice(0, 50);
    return t ? d + ' "' + t + '"' : d;
  }
  function contentWidth(el) {
    // a formula's box also holds MathJax's copy for screen readers, clipped
    // to nothing on purpose: what shows is the typeset mjx-math
    var math = el.matches("mjx-container, span.math") ? el.querySelector("mjx-math") : null;
    return math ? Math.ceil(math.getBoundingClientRect().width) : el.scrollWidth;
  }
  function scrolls(el) {
    var s = getComputedStyle(el);
    // inline boxes have no width of their own to overflow
    return s.overflowX !== "visible" && s.display !== "inline" &&
           contentWidth(el) > el.clientWidth + 1;
  }
  function spills(el) {
    // text wider than a block that lets it show (a title without a break);
    // a child that is itself too wide is the one to report
    var s = getComputedStyle(el);
    if (s.overflowX !== "visible" || s.display !== "block" || el.closest("mjx-container") ||
        el.scrollWidth <= el.clientWidth + 1) return false;
    var right = el.getBoundingClientRect().right + 1;
    for (var c = el.firstElementChild; c; c = c.nextElementSibling)
      if (getComputedStyle(c).display !== "inline" &&
          (c.getBoundingClientRect().right > right || c.scrollWidth > c.clientWidth + 1))
        return false;
    return true;
  }
  function scrollBox(el) {
    // a table or a displayed formula wider than the column, in a box with a
    // scroll bar of its own: wide by nature, not cut off
    var o = getComputedStyle(el).overflowX;
    return (o === "auto" || o === "scroll") &&
           (el.querySelector("table") !== null || el.matches("mjx-container[display]"));
  }
  function measure() {
    var out = {width: window.innerWidth, page: document.documentElement.scrollWidth, topbar: [],
               folded: [], sidebar: null, overflow: [], wide: []};
    document.querySelectorAll(".bd-header .navbar-header-items a.nav-link").forEach(function (a) {
      if (!shown(a)) return;
      (a.closest(".dropdown-menu") ? out.folded : out.topbar).push(a.textContent.trim());
    });
    document.querySelectorAll(".bd-header .dropdown-menu a").forEach(function (a) {
      if (out.folded.indexOf(a.textContent.trim()) < 0) out.folded.push(a.textContent.trim());
    });
    var side = document.querySelector(".bd-sidebar-primary");
    if (side && shown(side)) {
      var links = [], title = false;
      side.querySelectorAll("nav a").forEach(function (a) {
        if (shown(a)) links.push(a.textContent.trim());
      });
      side.querySelectorAll(".bd-links__title").forEach(function (t) {
        title = title || shown(t);
      });
      out.sidebar = {title: title, links: links};
    }
    var container = document.querySelector(".bd-article-container");
    if (container && scrolls(container)) out.overflow.push("the article scrolls sideways");
    [[".bd-article", "the article"], [".bd-sidebar-primary", "the section navigation"],
     [".bd-sidebar-secondary", "the page's contents"]].forEach(function (region) {
      var box = document.querySelector(region[0]);
      if (!box || !shown(box)) return;
      if (region[0] !== ".bd-article" && scrolls(box))
        out.overflow.push(region[1] + " scrolls sideways");
      var edge = box.getBoundingClientRect().right + 1;
      var past = [];  // reported as running past the edge: not their insides again
      var inScroller = function (el) {
        for (var p = el.parentElement; p && p !== box; p = p.parentElement)
          if (scrolls(p) || past.indexOf(p) >= 0) return true;
        return false;
      };
      box.querySelectorAll("*").forEach(function (el) {
        // MathJax's copy for screen readers is clipped to nothing on purpose;
        // what a scroll box, or a box running past the edge, holds is reported with it
        if (!shown(el) || out.overflow.length > 8 || el.closest("mjx-assistive-mml") ||
            inScroller(el)) return;
        if (scrolls(el) && scrollBox(el)) {
          out.wide.push(describe(el) + " scrolls: " + contentWidth(el) + " px in " +
                        el.clientWidth);
        } else if (scrolls(el)) {
          out.overflow.push(describe(el) + " is " + contentWidth(el) + " px wide in " +
                            el.clientWidth + " px (cut off or scrolling sideways)");
        } else if (spills(el)) {
          out.overflow.push(describe(el) + " spills " + (el.scrollWidth - el.clientWidth) +
                            " px out of its box");
        } else if (el.getBoundingClientRect().right > edge) {
          past.push(el);
          out.overflow.push(describe(el) + " runs " +
                            Math.round(el.getBoundingClientRect().right - edge) +
                            " px past the right edge of " + region[1]);
        }
      });
    });
    var node = document.createElement("script");
    node.type = "application/json";
    node.id = "site-check";
    node.textContent = JSON.stringify(out).replace(/</g, "\\u003c");
    document.body.appendChild(node);
  }
  window.addEventListener("load", function () {
    var typeset = window.MathJax && MathJax.startup && MathJax.startup.promise;
    Promise.resolve(typeset).then(function () { setTimeout(measure, 500); });
  });
})();
</script>
"""


def browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class _Handler(SimpleHTTPRequestHandler):
    """Serves the site, adding :data:`PROBE` to every HTML page."""

    def do_GET(self) -> None:
        path = Path(self.translate_path(self.path))
        if path.suffix != ".html" or not path.is_file():
            return super().do_GET()
        body = path.read_bytes().replace(b"</body>", PROBE.encode() + b"</body>", 1)
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def chromium(args: list[str]) -> str:
    with tempfile.TemporaryDirectory() as profile:
        cmd = [
            browser(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            # without these, chromium's calls home are refused by a closed network
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            f"--window-size={WIDTH},{HEIGHT}",
            "--virtual-time-budget=8000",
            *args,
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    if done.returncode != 0:
        raise RuntimeError(f"chromium failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return done.stdout


def png_colours(path: Path) -> int:
    """How many distinct grey levels an (RGB or RGBA, 8-bit) PNG screenshot has."""
    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return 0
    pos, idat, width, height, ctype = 8, b"", 0, 0, 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, _, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    # the filter bytes scramble values, but a blank page still gives very few
    return len(set(raw[::97])) if width and height and ctype in (2, 6) else 0


def layout_problems(page: Page, found: dict) -> list[str]:
    """What the probe's measurements say is wrong with ``page``."""
    name, problems = page.path, []
    if found.get("width") != WIDTH:
        problems.append(f"{name}: measured at {found.get('width')} px, not {WIDTH}")
    if found.get("page", 0) > found.get("width", WIDTH) + 1:
        problems.append(f"{name}: the page is {found['page']} px wide in a {WIDTH} px window")
    for section in TOPBAR:
        if section not in found.get("topbar", ()):
            where = "folded under More" if section in found.get("folded", ()) else "absent"
            problems.append(f"{name}: the top bar does not show {section!r} ({where})")
    side = found.get("sidebar")
    if page.nav:
        if side is None:
            problems.append(f"{name}: no section navigation (it should list {page.nav[0]!r}...)")
        else:
            missing = [text for text in page.nav if text not in side["links"]]
            if missing:
                problems.append(f"{name}: the section navigation lacks {missing}")
    if side is not None and not side["links"]:
        title = '"Section Navigation" over nothing' if side["title"] else "an empty sidebar"
        problems.append(f"{name}: {title}")
    problems += [f"{name}: {text}" for text in found.get("overflow", ())]
    return problems


def wide_boxes(page: Page, found: dict) -> list[str]:
    """Tables and formulas wider than the column, each in a scroll box of its own."""
    return [f"{page.path}: {text}" for text in found.get("wide", ())]


def check(html: Path, shots: Path, pages=PAGES) -> list[str]:
    """Every problem of the built site ``html``, one line each (empty: all is well)."""
    problems = []
    todo = []
    for page in pages:
        if (html / page.path).exists():
            todo.append(page)
        else:
            problems.append(f"{page.path}: not built")
    if not todo:
        return problems
    shots.mkdir(parents=True, exist_ok=True)
    handler = functools.partial(_Handler, directory=str(html))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        # one browser per core: each page is a separate chromium run
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            found = pool.map(lambda page: check_page(html, page, base + page.path, shots), todo)
            for page_problems in found:
                problems += page_problems
    finally:
        server.shutdown()
        server.server_close()
    return problems


def check_page(html: Path, page: Page, url: str, shots: Path) -> list[str]:
    dom = chromium(["--dump-dom", url])
    problems = [
        f"{page.path}: the rendered page lacks {pattern!r}"
        for pattern in page.patterns
        if not re.search(pattern, dom)
    ]
    for src in re.findall(r"<img[^>]+src=\"([^\"]+\.png)\"", dom):
        local = (html / page.path).parent / src
        if not src.startswith(("http:", "https:", "data:")) and not local.exists():
            problems.append(f"{page.path}: figure {src} is missing")
    probe = re.search(r'<script type="application/json" id="site-check">(.*?)</script>', dom)
    if probe is None:
        problems.append(f"{page.path}: the layout was not measured (the page did not load)")
    else:
        found = json.loads(probe.group(1))
        problems += layout_problems(page, found)
        for note in wide_boxes(page, found):
            print(f"note {note}", flush=True)
    if page.screenshot:
        shot = shots / (Path(page.path).stem + ".png")
        chromium([f"--screenshot={shot}", url])
        if not shot.exists() or png_colours(shot) < 8:
            problems.append(f"{page.path}: the screenshot is blank")
    if not problems:
        print(f"ok  {page.path}", flush=True)
    return problems


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, default=HERE / "_build" / "html")
    parser.add_argument(
        "--if-available", action="store_true", help="skip, saying so, when chromium is missing"
    )
    args = parser.parse_args(argv)
    if browser() is None:
        if args.if_available:
            print(
                "SKIPPED the browser check of the site: no chromium here "
                "(`make docs INSTALL_BROWSER=1` installs Debian's chromium, system-wide)"
            )
            sys.exit(0)
        sys.exit("no chromium found: install Debian's chromium (make docs INSTALL_BROWSER=1)")
    shots = args.html.parent / "screenshots"
    problems = check(args.html, shots)
    for p in problems:
        print("FAIL", p)
    print(
        f"browser check: {len(PAGES)} pages at {WIDTH} px, {len(problems)} problems; "
        f"screenshots in {shots}"
    )
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
