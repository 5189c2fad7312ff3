"""Open the built documentation in a real headless browser and check what renders.

``make docs`` runs this after Sphinx.  It loads, in Debian's ``chromium``
(headless), the API page of :func:`invariantdp.umpu_odds_ratio_test` and the
executed first vignette, checks in the DOM the browser built that the pages
carry what a reader needs (the signature and the Parameters section; the
vignette's printed results and its figures, with the image files present), and
saves a screenshot of each page in ``docs/_build/screenshots`` as a build
artefact.  A blank or missing page, a figure that was not produced, or a
vignette that was not executed fails the check (exit status 1).

Run: ``python docs/check_site.py [--html docs/_build/html]``.
"""

from __future__ import annotations

import argparse
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: page -> (regular expressions the rendered DOM must match)
PAGES = {
    "api/generated/invariantdp.inference.umpu_odds_ratio_test.html": (
        r"umpu_odds_ratio_test",
        r">Parameters<",
        r">Returns<",
        r"statistic",
        r"Theorem 37",
        r"<mjx-container",  # the formula typeset by MathJax (served offline)
    ),
    "vignettes/01-odds-ratio-test.html": (
        r"The semi-DP UMPU test of an odds ratio",
        # outputs of executed cells (the source holds the words, not the numbers)
        r"private estimate\s+\d+\.\d{3}",
        r"Kolmogorov-Smirnov p-value against U\(0, 1\): \d\.\d",
        r"<img[^>]+src=\"[^\"]+\.png\"",
    ),
}


def browser() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("no chromium found: `make docs` installs Debian's chromium (apt-get install chromium)")


def run(args: list[str]) -> str:
    with tempfile.TemporaryDirectory() as profile:
        cmd = [
            browser(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            "--virtual-time-budget=5000",
            *args,
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        sys.exit(f"chromium failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return done.stdout


def png_colours(path: Path) -> int:
    """How many distinct grey levels an (RGB or RGBA, 8-bit) PNG screenshot has."""
    data = path.read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path} is not a PNG")
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


def check(html: Path, shots: Path) -> list[str]:
    problems = []
    shots.mkdir(parents=True, exist_ok=True)
    for page, patterns in PAGES.items():
        path = html / page
        if not path.exists():
            problems.append(f"{page}: not built")
            continue
        dom = run(["--dump-dom", path.as_uri()])
        for pattern in patterns:
            if not re.search(pattern, dom):
                problems.append(f"{page}: the rendered page lacks {pattern!r}")
        for src in re.findall(r"<img[^>]+src=\"([^\"]+\.png)\"", dom):
            if (
                not src.startswith(("http:", "https:", "data:"))
                and not (path.parent / src).exists()
            ):
                problems.append(f"{page}: figure {src} is missing")
        shot = shots / (Path(page).stem + ".png")
        run([f"--screenshot={shot}", "--window-size=1280,1600", path.as_uri()])
        if not shot.exists() or png_colours(shot) < 8:
            problems.append(f"{page}: the screenshot is blank")
        else:
            print(f"ok  {page}  (screenshot {shot.relative_to(html.parent)})")
    return problems


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, default=HERE / "_build" / "html")
    args = parser.parse_args(argv)
    problems = check(args.html, args.html.parent / "screenshots")
    for p in problems:
        print("FAIL", p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
