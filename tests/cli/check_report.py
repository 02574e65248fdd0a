#!/usr/bin/python3
"""Checks a `skyfabric analyze` report.html (tests/cli/analyze_test.cpp runs it).

    /usr/bin/python3 tests/cli/check_report.py REPORT.html --figures a,b,c [--screenshot PNG]

Structure (always, html.parser): the sections summary, breakdown, hot-spots, anti-patterns and
recommendations are present (HTML ids); each figure named is a <figure id="figure-NAME"> holding
an inline <svg>; no <script>, <img>, <link>, <iframe>, <object> or <embed>; no attribute or style
that names a URL (a scheme://), but for the XML namespace declarations (xmlns, xmlns:*) that SVG
carries, which no browser fetches; the figures' element ids are unique across the page.
With --screenshot: Debian's headless Chromium opens the file from disk, its DOM (--dump-dom) holds
every section, and its screenshot is not blank (its pixels vary, and at least 2 % are not white).
Prints `structure: ok` and `screenshot: ok` (or `screenshot: skipped: WHY` when no Chromium is
installed); any failure exits 1 with the reason.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser

SECTIONS = ("summary", "breakdown", "hot-spots", "anti-patterns", "recommendations")
FORBIDDEN = {"script", "img", "link", "iframe", "object", "embed"}
URL = re.compile(r"[a-z][a-z0-9+.-]*://", re.I)


class Report(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids = []
        self.sections = []
        self.forbidden = []
        self.urls = []
        self.figure_stack = []  # open <figure> ids
        self.figure_svgs = {}
        self.stack = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in FORBIDDEN:
            self.forbidden.append(tag)
        for name, value in attrs:
            if value is None or name == "xmlns" or name.startswith("xmlns:"):
                continue
            if URL.search(value):
                self.urls.append("%s %s=%s" % (tag, name, value[:80]))
        if "id" in a:
            self.ids.append(a["id"])
        if tag == "section" and "id" in a:
            self.sections.append(a["id"])
        if tag == "figure":
            self.figure_stack.append(a.get("id", ""))
        if tag == "svg" and self.figure_stack:
            self.figure_svgs[self.figure_stack[-1]] = self.figure_svgs.get(self.figure_stack[-1], 0) + 1

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag == "figure":
            self.figure_stack.pop()

    def handle_endtag(self, tag):
        if tag == "figure" and self.figure_stack:
            self.figure_stack.pop()

    def handle_data(self, data):
        if self.lasttag == "style" and URL.search(data):
            self.urls.append("style: " + data[:80])


def fail(why):
    print("check_report: " + why)
    sys.exit(1)


def check_structure(text, figures):
    r = Report()
    r.feed(text)
    r.close()
    missing = [s for s in SECTIONS if s not in r.sections]
    if missing:
        fail("sections missing: %s (found %s)" % (missing, r.sections))
    if r.forbidden:
        fail("elements that fetch or run something: %s" % sorted(set(r.forbidden)))
    if r.urls:
        fail("external URLs: %s" % r.urls[:5])
    for name in figures:
        if r.figure_svgs.get("figure-" + name, 0) != 1:
            fail("figure %s is not one inline <svg> (found %s)" % (name, r.figure_svgs))
    duplicates = sorted({i for i in r.ids if r.ids.count(i) > 1})
    if duplicates:
        fail("element ids used more than once: %s" % duplicates[:10])
    print("structure: ok (%d sections, figures %s)" % (len(SECTIONS), ", ".join(sorted(r.figure_svgs))))


def png_pixels(path):
    from PIL import Image  # Debian's python3-pil

    with Image.open(path) as image:
        grey = image.convert("L")
        return grey.size, list(grey.getdata())


def check_screenshot(report, png):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("screenshot: skipped: no chromium installed (scripts/setup installs it)")
        return
    url = "file://" + os.path.abspath(report)
    with tempfile.TemporaryDirectory() as home:
        # A private profile and home: nothing of the user's, nothing left behind.
        base = [chromium, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars", "--no-first-run",
                "--user-data-dir=" + os.path.join(home, "profile")]
        env = dict(os.environ, HOME=home)
        dom = subprocess.run(base + ["--dump-dom", url], capture_output=True, text=True, timeout=120, env=env)
        if dom.returncode != 0:
            fail("chromium --dump-dom failed (%d): %s" % (dom.returncode, dom.stderr[-500:]))
        for s in SECTIONS:
            if 'id="%s"' % s not in dom.stdout:
                fail("chromium's DOM lacks the section %s" % s)
        shot = subprocess.run(base + ["--screenshot=" + png, "--window-size=1200,2400", url], capture_output=True, text=True,
                              timeout=120, env=env)
        if shot.returncode != 0 or not os.path.exists(png):
            fail("chromium --screenshot failed (%d): %s" % (shot.returncode, shot.stderr[-500:]))
    (width, height), pixels = png_pixels(png)
    n = len(pixels)
    mean = sum(pixels) / n
    variance = sum((p - mean) ** 2 for p in pixels) / n
    inked = sum(1 for p in pixels if p < 240) / n
    if (width, height) != (1200, 2400):
        fail("screenshot is %dx%d, expected 1200x2400" % (width, height))
    if variance < 100.0 or inked < 0.02:
        fail("screenshot looks blank: pixel variance %.1f, %.3f of pixels not white" % (variance, inked))
    print("screenshot: ok (%dx%d, pixel variance %.0f, %.3f of pixels not white)" % (width, height, variance, inked))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("report")
    parser.add_argument("--figures", default="")
    parser.add_argument("--screenshot", default="")
    args = parser.parse_args()
    with open(args.report, encoding="utf-8") as fh:
        text = fh.read()
    check_structure(text, [f for f in args.figures.split(",") if f])
    if args.screenshot:
        check_screenshot(args.report, args.screenshot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
